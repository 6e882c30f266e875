"""Start-up cost: the CLI and the recall path import nothing heavy (STYLE-EXAMPLES: watch -X importtime)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("numpy", "onnxruntime", "sqlite_vec", "tokenizers", "yaml", "bm25s", "tabulate")
STDLIB_SLOW = ("dataclasses", "inspect")
"""Imported by ``dataclasses``: ≈ 20–40 ms of a one-shot recall process (see :mod:`dreamdb.records`)."""


def _loaded_after(code: str, env: dict | None = None) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, env=env).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_cli_import_is_light():
    mods = _loaded_after("import dreamdb.cli, dreamdb.cli.recall, dreamdb.api")
    assert not [m for m in HEAVY if m in mods]


@pytest.fixture()
def synced_vault(tmp_path):
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "a.md").write_text("---\ntitle: A\n---\nsome words here\n")
    subprocess.run([sys.executable, "-m", "dreamdb", "sync", "--vault", str(vault)], check=True, capture_output=True)
    return vault


def test_recall_on_synced_vault_stays_light(synced_vault):
    vault = synced_vault
    mods = _loaded_after(
        "import dreamdb\n"
        f"ix = dreamdb.open({str(vault)!r}, engine='sql')\n"
        "hits = ix.recall('words')\n"
        "assert hits and hits[0].snippet"
    )
    assert not [m for m in HEAVY if m in mods]


def test_cli_recall_process_stays_light(synced_vault):
    vault = synced_vault
    mods = _loaded_after(
        "import contextlib, io\n"
        "from dreamdb.entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['recall', '--vault', {str(vault)!r}, '--json', 'words']) == 0\n"
        "    assert main(['hook', 'user-prompt-submit']) == 0\n"
    )
    assert not [m for m in HEAVY if m in mods and m != "tabulate"]
    assert not [m for m in STDLIB_SLOW if m in mods]


def test_recall_with_an_index_outside_dreamdbs_folders_spares_platformdirs(synced_vault, tmp_path):
    """platformdirs (~15 ms of a recall process) is needed only for an index in the user cache folder."""
    index = tmp_path / "elsewhere" / "index.db"
    mods = _loaded_after(
        "import dreamdb\n"
        f"ix = dreamdb.open({str(synced_vault)!r}, index_path={str(index)!r}, engine='sql')\n"
        "assert ix.recall('words')",
        env={k: v for k, v in os.environ.items() if k != "DREAMDB_CACHE_DIR"},  # the platform's cache folder
    )
    assert "platformdirs" not in mods
