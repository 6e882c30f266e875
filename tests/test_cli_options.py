"""Options shared by the commands."""

from __future__ import annotations

import shutil

from click.testing import CliRunner

from dreamdb.cli import cli
from tests.conftest import ROOT


def test_one_vault_commands_refuse_a_repeated_vault(tmp_path):
    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    runner = CliRunner()
    for args in (["status"], ["sync"], ["list"], ["remember", "a note"]):
        r = runner.invoke(cli, [*args, "--vault", str(vault), "--vault", str(tmp_path)])
        assert r.exit_code == 2 and "works on one vault; 2 were given" in r.output, (args, r.output)
    assert not (vault / ".dreamdb").exists()  # refused before anything was opened
    r = runner.invoke(cli, ["list", "--vault", str(vault), "--json"])
    assert r.exit_code == 0 and '"doc_id"' in r.output


def test_a_bad_dreamdb_vault_is_named_as_the_source(tmp_path, monkeypatch, capsys):
    from dreamdb.cli import main

    monkeypatch.setenv("DREAMDB_VAULT", str(tmp_path / "nowhere"))
    assert main(["status"]) == 3
    err = capsys.readouterr().err
    assert "(from DREAMDB_VAULT)" in err and "Set DREAMDB_VAULT" in err


def test_recall_plain_refuses_json_and_explain(capsys):
    from dreamdb.cli import main

    vault = str(ROOT / "examples")
    for other in ("--json", "--explain"):
        assert main(["recall", "--vault", vault, "--plain", other, "sleep"]) == 2
        assert f"--plain cannot be combined with {other}" in capsys.readouterr().err
