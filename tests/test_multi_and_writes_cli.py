"""Several vaults at once, and writes through the CLI reflected at the next recall."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import dreamdb
from tests.conftest import ROOT, write_doc


def cli(*args):
    return subprocess.run([sys.executable, "-m", "dreamdb", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture()
def two_vaults(tmp_path):
    a = tmp_path / "user" / "_dream_context"
    b = tmp_path / "proj" / "_dream_context"
    write_doc(a, "knowledge/global-style.md", "---\ntitle: Global style\n---\nprefer tabs for makefiles narwhal\n")
    write_doc(b, "knowledge/proj-note.md", "---\ntitle: Project note\n---\nnarwhal narwhal narwhal in this project\n")
    return a, b


def test_hits_merged_by_rank_score_each_naming_its_vault(two_vaults):
    a, b = two_vaults
    index = dreamdb.open([a, b])
    hits = index.recall("narwhal")
    assert [h.vault for h in hits] == [str(b.resolve()), str(a.resolve())]
    assert hits[0].rank_score >= hits[1].rank_score
    assert (a / ".dreamdb" / "index.db").exists() and (b / ".dreamdb" / "index.db").exists()
    p = cli("recall", "--vault", str(a), "--vault", str(b), "--json", "narwhal")
    assert [h["vault"] for h in json.loads(p.stdout)["hits"]] == [str(b.resolve()), str(a.resolve())]


def test_writes_show_up_at_next_recall(tmp_path):
    v = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", v, ignore=shutil.ignore_patterns(".dreamdb"))
    p = cli("remember", "--vault", str(v), "--type", "decision", "--scope", "storage", "--summary", "Axolotl format chosen",
            "-r", "knowledge:decision-sqlite-index", "--json", "We store axolotl records as JSON lines.")
    assert p.returncode == 0, p.stderr
    entry = json.loads(p.stdout)
    hits = json.loads(cli("recall", "--vault", str(v), "--json", "axolotl").stdout)["hits"]
    assert hits[0]["doc_id"] == f"changelog/{entry['id']}"
    p = cli("remember", "--vault", str(v), "--supersedes", f"changelog/{entry['id']}", "--scope", "storage",
            "--summary", "Axolotl format replaced", "Axolotl records move to SQLite.")
    assert p.returncode == 0, p.stderr
    hits = {h["doc_id"]: h for h in json.loads(cli("recall", "--vault", str(v), "--json", "axolotl", "format").stdout)["hits"]}
    assert hits[f"changelog/{entry['id']}"]["superseded_by"].startswith("changelog/")
    # update then delete a markdown document
    assert cli("update", "--vault", str(v), "knowledge/decision-sqlite-index", "--append", "Capybara addendum.").returncode == 0
    assert json.loads(cli("recall", "--vault", str(v), "--json", "capybara").stdout)["hits"][0]["slug"] == "decision-sqlite-index"
    assert cli("delete", "--vault", str(v), "decision-sqlite-index").returncode == 0
    assert json.loads(cli("recall", "--vault", str(v), "--json", "capybara").stdout)["hits"] == []


def test_write_refusals_keep_data(tmp_path):
    v = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", v, ignore=shutil.ignore_patterns(".dreamdb"))
    bad = b'[{"date": "2026-01-01", broken'
    (v / "core" / "CHANGELOG.json").write_bytes(bad)
    p = cli("remember", "--vault", str(v), "something happened")
    assert p.returncode == 6 and "Error" in p.stderr and "Traceback" not in p.stderr
    assert (v / "core" / "CHANGELOG.json").read_bytes() == bad
    p = cli("update", "--vault", str(v), "../../etc/passwd", "--append", "x")
    assert p.returncode == 2
    p = cli("update", "--vault", str(v), "no-such-doc", "--append", "x")
    assert p.returncode == 7
