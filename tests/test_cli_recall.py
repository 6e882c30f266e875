"""The CLI as users run it: click's CliRunner against real vaults and SQLite."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

import dreamdb
from dreamdb.cli import cli, main
from dreamdb.writes import remember
from tests.conftest import ROOT, needs_real_vault, write_doc

EXAMPLES = ROOT / "examples"


def run(*args, input=None):
    """Invoke through ``main`` (the console script) so exit codes and error lines are the real ones."""
    runner = CliRunner()
    result = runner.invoke(cli, list(args), input=input, standalone_mode=False, catch_exceptions=True)
    return result


def run_main(*args, env=None):
    proc = subprocess.run([sys.executable, "-m", "dreamdb", *args], capture_output=True, text=True, env=env, timeout=120)
    return proc


@pytest.fixture()
def example_vault(tmp_path):
    import shutil

    dest = tmp_path / "_dream_context"
    shutil.copytree(EXAMPLES / "_dream_context", dest, ignore=shutil.ignore_patterns(".dreamdb"))
    return dest


def test_recall_json_fields(example_vault):
    p = run_main("recall", "--vault", str(example_vault), "--json", "sleep", "debt")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    hit = data["hits"][0]
    for key in ("score", "rankScore", "type", "slug", "path", "title", "snippet", "doc_id"):
        assert key in hit
    assert hit["doc_id"] == "feature/sleep-consolidation"
    assert "debt" in hit["snippet"].lower()


def test_plain_and_explain(example_vault):
    p = run_main("recall", "--vault", str(example_vault), "--plain", "atomic", "writes")
    assert p.returncode == 0
    first = p.stdout.splitlines()[0].split("\t")
    assert len(first) == 5 and float(first[0]) >= 0 and first[2].count("/") == 1
    p = run_main("recall", "--vault", str(example_vault), "--explain", "atomic", "writes")
    for word in ("bm25f", "identity", "recency", "rankScore", "idf"):
        assert word in p.stdout


def test_usage_errors_exit_2_without_traceback(example_vault):
    for args in (["recall", "--top", "0", "x"], ["recall", "--top", "51", "x"], ["recall", "--types", "nope", "x"],
                 ["recall", "--now", "yesterday-ish", "x"], ["recall", "--since", "soonish", "x"]):
        p = run_main(*args, "--vault", str(example_vault))
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert "Traceback" not in p.stderr and "Error" in p.stderr


def test_a_dense_mode_with_a_bad_thread_count_is_a_usage_error_of_the_command(example_vault):
    """QA round 74 F6: ``DREAMDB_EMBED_THREADS=abc dreamdb recall --mode hybrid`` answered from BM25 with exit 0 (the
    library's fallback, kept for the prompt hook), while a bad DREAMDB_RECALL_MODE or the same variable under
    ``embed refresh`` exit 2. The command now says so; a BM25 recall does not read the variable."""
    env = {**os.environ, "DREAMDB_EMBED_THREADS": "abc"}
    for args in (["--mode", "hybrid"], ["--mode", "dense"], ["--mode", "rrf"]):
        p = run_main("recall", "--vault", str(example_vault), *args, "sleep", env=env)
        assert p.returncode == 2 and "DREAMDB_EMBED_THREADS='abc' is not a whole number" in p.stderr, (args, p.stderr)
        assert "Traceback" not in p.stderr
    p = run_main("recall", "--vault", str(example_vault), "sleep", env={**env, "DREAMDB_RECALL_MODE": "hybrid"})
    assert p.returncode == 2 and "is not a whole number" in p.stderr
    p = run_main("recall", "--vault", str(example_vault), "--mode", "hybrid", "sleep", env={**env, "DREAMDB_EMBED_THREADS": "99"})
    assert p.returncode == 2 and "DREAMDB_EMBED_THREADS=99 is out of range" in p.stderr
    p = run_main("recall", "--vault", str(example_vault), "--json", "sleep", env=env)
    assert p.returncode == 0 and json.loads(p.stdout)["hits"]


def test_a_mistyped_sqlite_driver_setting_is_named_not_a_missing_install(example_vault):
    """QA round 74 F10: DREAMDB_SQLITE_DRIVER=bogus said no driver was found and to pip install one."""
    p = run_main("recall", "--vault", str(example_vault), "sleep", env={**os.environ, "DREAMDB_SQLITE_DRIVER": "bogus"})
    assert p.returncode == 4 and "DREAMDB_SQLITE_DRIVER='bogus' names no usable SQLite driver module" in p.stderr
    assert "Use sqlean, pysqlite3.dbapi2 or sqlite3" in p.stderr and "pip install" not in p.stderr


def test_missing_vault_exit_3(tmp_path):
    p = run_main("recall", "--vault", str(tmp_path / "nope"), "x")
    assert p.returncode == 3 and "does not exist" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "x"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 3 and "--vault" in p.stderr
    gone = tmp_path / "gone"  # the working folder deleted under the shell (QA round 9: an internal error)
    gone.mkdir()
    script = f"import os, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); " \
             "from dreamdb.entry import main; sys.exit(main(['recall', 'x']))"
    env = {k: v for k, v in os.environ.items() if k != "DREAMDB_VAULT"}
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT)
    assert p.returncode == 3 and "current folder no longer exists" in p.stderr and "Traceback" not in p.stderr
    gone.mkdir()  # again, and now a relative --vault from it
    script = script.replace("['recall', 'x']", "['recall', '--vault', '../elsewhere', 'x']")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT)
    assert p.returncode == 3 and "Traceback" not in p.stderr and "internal error" not in p.stderr


def test_vault_on_a_path_that_is_not_utf8_is_refused_clearly(tmp_path):
    """QA round 10: a Latin-1 folder name above the vault made every command an internal error."""
    project = os.fsencode(tmp_path) + b"/proj\xe9"
    os.makedirs(project + b"/_dream_context/knowledge")
    with open(project + b"/_dream_context/knowledge/a.md", "wb") as f:
        f.write(b"zebracorn\n")
    for args, cwd in ((["recall", "zebracorn"], project), (["recall", "--vault", project, "zebracorn"], tmp_path)):
        p = subprocess.run([sys.executable, "-m", "dreamdb", *args], cwd=cwd, capture_output=True, text=True)
        assert p.returncode == 3 and "is not valid UTF-8" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_empty_vault_and_degenerate_queries(tiny_vault):
    p = run_main("recall", "--vault", str(tiny_vault), "anything")
    assert p.returncode == 0 and "No matches" in p.stderr
    write_doc(tiny_vault, "knowledge/a.md", "some text\n")
    p = run_main("recall", "--vault", str(tiny_vault), "the", "of", "?!")
    assert p.returncode == 0 and "no searchable terms" in p.stderr and "No matches" not in p.stderr
    p = run_main("recall", "--vault", str(tiny_vault), "--json", "the", "?!")
    assert p.returncode == 0 and any("no searchable terms" in n for n in json.loads(p.stdout)["notes"])
    p = run_main("recall", "--vault", str(tiny_vault), "--json", "text " * 2500)
    assert p.returncode == 0 and json.loads(p.stdout)["hits"][0]["doc_id"] == "knowledge/a"
    # more distinct terms than a query keeps: said, not silent
    many = " ".join(f"w{i}x" for i in range(300)) + " text"
    out = json.loads(run_main("recall", "--vault", str(tiny_vault), "--json", many).stdout)
    assert out["hits"] == [] and any("more than 256 distinct terms; only the first 256 were used, and its last 45"
                                     " words, past them, were not read" in n for n in out["notes"])  # (155-C F2)
    p = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--vault", str(tiny_vault), "text"],
                       capture_output=True, text=True, env={**__import__("os").environ, "DREAMDB_RECALL_MODE": "fuzzy"})
    assert p.returncode == 2 and "from DREAMDB_RECALL_MODE" in p.stderr


def test_sql_read_only(example_vault):
    p = run_main("sql", "--vault", str(example_vault), "SELECT type, COUNT(*) AS n FROM documents GROUP BY type ORDER BY type", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert {"type": "changelog", "n": 2} in rows
    p = run_main("sql", "--vault", str(example_vault), "DELETE FROM documents")
    assert p.returncode == 2 and "refused" in p.stderr
    p = run_main("sql", "--vault", str(example_vault), "SELECT vec_version()", "--format", "csv")
    assert p.returncode == 0 and p.stdout.startswith("vec_version()")
    p = run_main("sql", "--vault", str(example_vault), "SELEC nonsense")
    assert p.returncode == 2 and "SQL error" in p.stderr


def test_sync_status_list(example_vault):
    p = run_main("sync", "--vault", str(example_vault), "--json")
    assert json.loads(p.stdout)["added"] == 11
    p = run_main("sync", "--vault", str(example_vault))
    assert "0 added, 0 changed, 0 removed, 11 unchanged" in p.stdout
    st = json.loads(run_main("status", "--vault", str(example_vault), "--json").stdout)
    assert st["documents"] == 13 and st["schema_version"] >= 1 and st["by_type"]["memory"] == 2
    docs = json.loads(run_main("list", "--vault", str(example_vault), "--types", "changelog", "--json").stdout)
    assert [d["type"] for d in docs] == ["changelog", "changelog"]


def test_list_cuts_a_long_title_between_grapheme_clusters_and_marks_the_cut(tiny_vault, capsys):
    """QA round 144-D F2: list cut a title at 70 characters without "…", a flag to one lone regional indicator and a
    family to a lone 👩; it cuts as sql's table does now."""
    flag, family = "\U0001F1F9\U0001F1F7", "\U0001F469\u200d\U0001F469\u200d\U0001F466"
    titles = {"flag": "a" * 69 + flag + " flag", "family": "b" * 68 + family + " family", "short": "c" * 70}
    for name, title in titles.items():
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\ntitle: {title}\n---\nbody\n")
    assert main(["list", "--vault", str(tiny_vault)]) == 0
    cells = {line.split()[0]: line.split(maxsplit=4)[-1].rstrip() for line in capsys.readouterr().out.splitlines()
             if line.startswith("knowledge/")}
    assert cells == {"knowledge/flag": "a" * 69 + "…", "knowledge/family": "b" * 68 + "…",
                     "knowledge/short": "c" * 70}  # (70 characters: whole, as before)


@pytest.mark.parametrize("top", ["²", "①", "0", "51", "x"])
def test_a_top_that_is_no_number_from_1_to_50_is_a_usage_error(example_vault, top):
    """QA round 48 M1: ``-n ²`` (a digit to ``str.isdigit``, not to ``int``) was a traceback on the fast path."""
    out = run_main("recall", "--vault", str(example_vault), "-n", top, "--json", "sleep")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "'--top'" in json.loads(out.stdout)["error"]["message"]


def test_main_returns_exit_codes(example_vault, capsys):
    assert main(["recall", "--vault", str(example_vault), "--json", "hook"]) == 0
    assert main(["recall", "--vault", str(example_vault / "missing"), "hook"]) == 3
    assert "Error:" in capsys.readouterr().err


@needs_real_vault
def test_real_vault_titles_find_their_documents(real_index):
    """Typing a document's exact title returns that document first (identity boost + BM25F), for every
    knowledge/feature document whose title is unique in the vault."""
    rows = real_index.conn.execute(
        "SELECT doc_id, title FROM documents WHERE type IN ('knowledge', 'feature') AND title NOT LIKE '%excalidraw%'"
    ).fetchall()
    titles = {}
    for doc_id, title in rows:
        titles.setdefault(title.lower(), []).append(doc_id)
    checked = misses = 0
    for title, ids in titles.items():
        if len(ids) != 1 or len(title) < 12:
            continue
        checked += 1
        hits = real_index.recall(title, top=3, now="2026-08-18T00:00:00Z")
        if not hits or hits[0].doc_id != ids[0]:
            misses += 1
    assert checked > 80
    assert misses / checked < 0.05, (misses, checked)


@needs_real_vault
def test_real_vault_code_identifiers_are_found_by_their_words(real_index):
    """18 notes of the real vault write ``safeChildPath`` (a helper), none "safe child path": the words find
    them all the same (analyzer.compound_terms), with the identifier's line as the snippet. Before, the
    third hit was a changelog entry about spawning a child CLI."""
    hits = real_index.recall("safe child path", top=5, now="2026-08-18T00:00:00Z")
    assert len(hits) == 5
    for h in hits:
        text = real_index.conn.execute("SELECT title || ' ' || body FROM documents WHERE doc_id = ?", (h.doc_id,)).fetchone()[0]
        assert "safeChildPath" in text, h.doc_id
    assert "safeChildPath" in hits[0].snippet


@needs_real_vault
def test_real_vault_filters_apply_before_limit(real_index):
    hits = real_index.recall("recall", top=5, types="changelog", now="2026-08-18T00:00:00Z")
    assert len(hits) == 5 and all(h.type == "changelog" for h in hits)
    dated = real_index.recall("recall", top=5, since="2026-08-01", until="2026-08-10", now="2026-08-18T00:00:00Z")
    assert dated and all("2026-08-01" <= h.date[:10] <= "2026-08-10" for h in dated)
    rel = real_index.recall("recall", top=5, since="-10d", now="2026-08-18T00:00:00Z")
    assert rel and all(h.date[:10] >= "2026-08-08" for h in rel)


@needs_real_vault
def test_real_vault_superseded_entries_are_marked(real_index):
    rows = real_index.conn.execute("SELECT doc_id, supersedes FROM documents WHERE supersedes IS NOT NULL").fetchall()
    assert rows
    newer, older = rows[0]
    title = real_index.conn.execute("SELECT title FROM documents WHERE doc_id = ?", (older,)).fetchone()[0]
    hits = real_index.recall(title, top=10, types="changelog", now="2026-08-18T00:00:00Z")
    marked = {h.doc_id: h.superseded_by for h in hits}
    assert marked.get(older) == newer


@pytest.mark.parametrize("args", [
    ["--json", "sleep", "debt"], ["--plain", "--top", "2", "atomic", "writes"], ["--explain", "-n", "3", "hook"],
    ["the", "of"], ["zzzqqq"], ["--plain", "-t", "feature", "--types", "task", "recall", "hook", "dedup"],
    ["--plain", "-n", "3", "--top", "4", "hook"], ["--mode", "bm25", "--mode", "dense", "hook"],
])
def test_fast_path_prints_exactly_what_click_prints(example_vault, args):
    """`dreamdb recall` skips click for common options (start-up time); its output must not differ."""
    full = ["recall", "--vault", str(example_vault), "--now", "2026-08-18T00:00:00Z", *args]
    fast = run_main(*full)
    slow = subprocess.run([sys.executable, "-c", "import sys; from dreamdb.cli import main; sys.exit(main(sys.argv[1:]))", *full],
                          capture_output=True, text=True, timeout=120)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)


def test_a_repeated_types_option_adds_to_it_on_the_fast_path_and_through_click(example_vault):
    """QA round 153-B F4: ``-t feature -t task`` kept the last value alone, silently (task hits only), on both paths.
    Repeats add up, as the comma list does, and ``-t feature,task -t knowledge`` mixes both."""
    base = ["recall", "--vault", str(example_vault), "--now", "2026-08-18T00:00:00Z", "--plain", "-n", "10"]
    query = ["recall", "hook", "dedup"]

    def hit_ids(p):
        assert p.returncode == 0, p.stderr
        return [line.split("\t")[2] for line in p.stdout.splitlines()]

    fast = hit_ids(run_main(*base, "-t", "feature", "-t", "task", *query))
    assert fast == ["feature/prompt-hook", "task/add-dedup-gate"]
    assert hit_ids(run_main(*base, "--types", "feature,task", *query)) == fast
    assert hit_ids(run_main(*base, "-t", "task", *query)) == ["task/add-dedup-gate"]
    mixed = hit_ids(run_main(*base, "-t", "feature,task", "--types", "knowledge", "sqlite", *query))
    assert mixed == hit_ids(run_main(*base, "-t", "feature,task,knowledge", "sqlite", *query))
    assert {d.split("/")[0] for d in mixed} == {"feature", "task", "knowledge"}, mixed
    slow = subprocess.run([sys.executable, "-c", "import sys; from dreamdb.cli import main; sys.exit(main(sys.argv[1:]))",
                           *base, "-t", "feature", "-t", "task", *query], capture_output=True, text=True, timeout=120)
    assert hit_ids(slow) == fast


def test_the_json_query_is_the_arguments_joined_without_the_whitespace_around_them(example_vault):
    """QA round 153-B F3: ``recall --json '  widget  '`` gives ``"query": "widget"`` (the text is stripped before it is
    searched, on both paths), where docs/json.md said the arguments joined by one space, whitespace kept. The doc
    says it now, with these examples."""
    row = next(line for line in (ROOT / "docs" / "json.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `query` | string |"))
    assert "the whitespace at the start and end of the whole removed" in row, row
    base = ["recall", "--vault", str(example_vault), "--now", "2026-08-18T00:00:00Z", "--json", "-n", "1"]
    click_path = [sys.executable, "-c", "import sys; from dreamdb.cli import main; sys.exit(main(sys.argv[1:]))"]
    for words, query in ((["  sleep  "], "sleep"), (["", "sleep", " "], "sleep"), (["\n sleep\tdebt \u00a0"],
                         "sleep\tdebt"), (["sleep ", "debt"], "sleep  debt")):
        fast = run_main(*base, "--", *words)
        slow = subprocess.run([*click_path, *base, "--include-expired", "--", *words], capture_output=True, text=True,
                              timeout=120)
        for p in (fast, slow):
            assert p.returncode == 0, p.stderr
            assert json.loads(p.stdout)["query"] == query, words


def test_fast_path_leaves_uncommon_options_to_click(example_vault):
    from dreamdb.quickcli import fast_recall

    for args in (["--help"], ["--since", "-30d", "x"], ["--top", "99", "x"], ["--mode", "fuzzy", "x"], ["--vault"], [],
                 ["-n", "3", "--top", "4", "x"], ["--mode", "bm25", "--mode", "bm25", "x"], ["--now", "a", "--now", "b", "x"]):
        assert fast_recall(args) is None


def test_a_repeated_single_value_option_of_recall_is_refused_on_the_fast_path_too(example_vault):
    """QA round 153-F F1: ``recall -n 3 --top 4`` gave 4 hits, the first value dropped silently; the fast path leaves
    a repeat to click, which refuses it (exit 2) as it refuses every command's, the JSON error on stdout too."""
    out = run_main("recall", "--vault", str(example_vault), "-n", "3", "--top", "4", "--json", "hook")
    assert out.returncode == 2, out.stderr
    message = "--top/-n was given twice ('3', '4'): it takes one value; give it once."
    assert json.loads(out.stdout)["error"]["message"] == message and f"Error: {message}" in out.stderr
    out = run_main("recall", "--vault", str(example_vault), "--now", "2026-08-18T00:00:00Z", "--now", "2020-01-01",
                   "hook")
    assert out.returncode == 2 and "--now was given twice ('2026-08-18T00:00:00Z', '2020-01-01')" in out.stderr


def test_ctrl_c_while_the_modules_load_is_no_traceback(monkeypatch, capsys):
    """QA round 37: Ctrl-C in the first ~80 ms (while click was importing) printed a traceback, for the
    prompt hook too, which must never fail the prompt."""
    from dreamdb import entry

    def loading(_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(entry, "_main", loading)
    assert entry.main(["remember", "x"]) == 130
    assert capsys.readouterr() == ("", "Interrupted.\n")
    assert entry.main(["sync", "--json"]) == 130
    out, err = capsys.readouterr()
    assert json.loads(out) == {"error": {"message": "Interrupted.", "hint": None, "exit_code": 130}}
    assert entry.main(["hook", "user-prompt-submit"]) == 0
    assert capsys.readouterr() == ("", "")


CTRL_C_AT_THE_START = r'''
import sys


class CtrlC:  # Ctrl-C as the signal module loads (it is not loaded yet: entry.main loads it), or as the first step runs
    def find_spec(self, name, path=None, target=None):
        if name == "signal":
            raise KeyboardInterrupt
        return None


import dreamdb.entry as entry

if sys.argv[1] == "signal":
    sys.meta_path.insert(0, CtrlC())
else:
    def interrupted(*args):
        raise KeyboardInterrupt

    setattr(entry, sys.argv[1], interrupted)
sys.argv = ["dreamdb", *sys.argv[2:]]
sys.exit(entry.main())
'''


@pytest.mark.parametrize("where", ["signal", "one_blas_thread", "hoist_options"])
@pytest.mark.parametrize("args, code, out, err", [
    (["hook", "user-prompt-submit"], 0, "", ""),
    (["recall", "--json", "sleep"], 130, '{"error": {"message": "Interrupted.", "hint": null, "exit_code": 130}}\n',
     "Interrupted.\n"),
    (["remember", "x"], 130, "", "Interrupted.\n"),
])
def test_ctrl_c_as_the_entry_point_begins_is_no_traceback(tmp_path, where, args, code, out, err):
    """QA round 148-D F3: Ctrl-C very early in a run (the prompt hook's, 60 runs) ended the process by SIGINT (-2,
    130) with a KeyboardInterrupt traceback through dreamdb/entry.py: entry.main set OPENBLAS_NUM_THREADS, read the
    command and loaded the signal module (≈ 2 ms) before its ``try`` and its handlers. They are its first step now,
    inside the ``try``: the hook exits 0 with nothing printed, another command 130 with ``Interrupted.``."""
    p = subprocess.run([sys.executable, "-c", CTRL_C_AT_THE_START, where, *args], capture_output=True, text=True,
                       cwd=tmp_path, stdin=subprocess.DEVNULL, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (code, out, err), p.stderr[-1500:]


def test_recall_errors_and_interrupts_never_show_a_traceback(example_vault, monkeypatch, capsys):
    from dreamdb import quickcli

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(quickcli, "run_recall", boom)
    assert quickcli.fast_recall(["sleep", "debt"]) == 130
    assert capsys.readouterr().err == "Interrupted.\n"
    # a directory where the index file should be: one line, exit 70, on the fast path and through click
    (example_vault / ".dreamdb").mkdir(exist_ok=True)
    index_file = example_vault / ".dreamdb" / "index.db"
    if index_file.exists():
        index_file.unlink()
    index_file.mkdir()
    for args in (["recall", "--vault", str(example_vault), "sleep"],
                 ["recall", "--vault", str(example_vault), "--tags", "x", "sleep"]):
        p = subprocess.run([sys.executable, "-m", "dreamdb", *args], capture_output=True, text=True, cwd=ROOT)
        assert p.returncode in (4, 70) and "Traceback" not in p.stderr and p.stderr.startswith("Error: "), p.stderr


@pytest.mark.parametrize("query, message", [
    ("PRAGMA journal_mode=DELETE", "PRAGMA journal_mode = DELETE is refused"),
    ("ATTACH 'elsewhere.db' AS x", "ATTACH is refused"),
    ("VACUUM", "VACUUM is refused"),
    ("SELECT load_extension('x')", "Loading extensions is refused"),
])
def test_sql_refusals_say_what_was_refused(example_vault, tmp_path, query, message):
    p = subprocess.run([sys.executable, "-m", "dreamdb", "sql", "--vault", str(example_vault), query],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.startswith(f"Error: {message}"), p.stderr
    assert not (tmp_path / "elsewhere.db").exists()
    p = run_main("sql", "--vault", str(example_vault), "PRAGMA table_info(documents)", "--json")
    assert p.returncode == 0 and {"name": "doc_id"}.items() <= json.loads(p.stdout)[1].items()


def test_sql_stops_on_ctrl_c(example_vault):
    import signal
    import time

    run_main("sync", "--vault", str(example_vault))
    p = subprocess.Popen([sys.executable, "-m", "dreamdb", "sql", "--vault", str(example_vault),
                          "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # (not ignored: QA 152-A F6)
    time.sleep(3)  # well inside the endless query
    p.send_signal(signal.SIGINT)
    try:
        _out, err = p.communicate(timeout=20)
    finally:
        p.kill()
    assert p.returncode == 130 and "Traceback" not in err


SLOW_STEPS = ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 400) "
              "SELECT sum(length(hex(zeroblob(50000000 + n)))) FROM r")
"""A query of few virtual-machine steps, each taking long (hex of a 50 MB value): minutes in all."""


@pytest.mark.parametrize("stop", ["timeout", "ctrl-c"])
def test_sql_stops_a_query_of_few_slow_steps(example_vault, stop):
    """QA round 115-C F2: the time limit and Ctrl-C were seen only by SQLite's progress handler, every 10,000 steps:
    a --timeout 2 query whose few steps each took long ran 78 s and exited 0, and Ctrl-C was lost."""
    import signal
    import time

    run_main("sync", "--vault", str(example_vault))
    limit = ["--timeout", "1"] if stop == "timeout" else ["--timeout", "0"]
    p = subprocess.Popen([sys.executable, "-m", "dreamdb", "sql", "--vault", str(example_vault), "--no-sync", *limit,
                          SLOW_STEPS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    if stop == "ctrl-c":
        time.sleep(3)  # inside the query (it takes minutes)
        p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
    if stop == "timeout":
        assert p.returncode == 1 and "The query ran longer than 1 s and was stopped" in err, (out, err)
    else:
        assert p.returncode == 130 and out == "" and "Traceback" not in err, (out, err)


def test_sql_cuts_a_result_past_its_bytes_and_refuses_a_first_row_past_them(example_vault, capsys, monkeypatch):
    """QA round 115-C F3: a result is held in memory before it is printed, at up to 9 times its size as JSON: three
    1 GB BLOBs would have asked for about 27 GB. A result past MAX_RESULT_BYTES (128 MiB) is cut there, and said."""
    from dreamdb import sqlquery

    assert sqlquery.MAX_RESULT_BYTES == 128 * 2**20
    monkeypatch.setattr(sqlquery, "MAX_RESULT_BYTES", 1000)
    assert main(["sync", "--vault", str(example_vault)]) == 0
    capsys.readouterr()
    # (486 bytes a row counted: the BLOB as the 380 hex digits JSON writes, QA round 152-A F5, and the names n, b)
    rows = "WITH t(n) AS (VALUES (1), (2), (3), (4)) SELECT n, zeroblob(190) AS b FROM t"
    assert main(["sql", "--vault", str(example_vault), "--no-sync", "--json", rows]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert [r["n"] for r in data["rows"]] == [1, 2] and data["truncated"] is True and data["max_bytes"] == 1000
    assert "note: showing the first 2 rows: the result holds more than 0 MiB of data" in err
    assert main(["sql", "--vault", str(example_vault), "--no-sync", "SELECT zeroblob(2000)"]) == 2
    assert "The first row of the result holds more than" in capsys.readouterr().err


def test_sql_counts_text_in_utf8_bytes_and_each_cell_and_row_toward_its_cap(example_vault, capsys, monkeypatch):
    """QA round 145-D F3: the 128 MiB cap counted characters, so 35,000,000 emoji (140,000,005 bytes of CSV) passed
    whole; and a small cell counted its data alone, 8 bytes for an integer, while 2,000,000 one-integer rows took
    1.26 GB as JSON (79 times their count, where the documentation says up to 9). Text counts its UTF-8 bytes now, and
    each cell and row its overhead (measured after: the same query cut at 1,677,721 rows, 1.08 GB)."""
    from dreamdb import sqlquery

    c, r = sqlquery.CELL_OVERHEAD, sqlquery.ROW_OVERHEAD
    assert sqlquery.result_size((1,)) == r + c + 8
    assert sqlquery.result_size(("abc", None, b"\x00" * 5)) == r + 3 * c + 3 + 8 + 5
    assert sqlquery.result_size(("😀" * 10, "é")) == r + 2 * c + 40 + 2  # (UTF-8 bytes, not characters)
    monkeypatch.setattr(sqlquery, "_ENCODE_PIECE", 3)  # (encoded a piece at a time: the same count)
    assert sqlquery.result_size(("a😀é" * 7,)) == r + c + 7 * 7
    monkeypatch.setattr(sqlquery, "MAX_RESULT_BYTES", 1000)
    assert main(["sync", "--vault", str(example_vault)]) == 0
    capsys.readouterr()
    # 100 emoji: 100 characters, 400 bytes; two rows of them fit 1000 bytes counted in characters, not in bytes
    rows = "WITH t(n) AS (VALUES (1), (2), (3)) SELECT n, replace(hex(zeroblob(100)), '00', '😀') AS e FROM t"
    assert main(["sql", "--vault", str(example_vault), "--no-sync", "--json", rows]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert [row["n"] for row in data["rows"]] == [1] and data["max_bytes"] == 1000, (out, err)
    # 20 rows of one integer: 160 bytes of data, 20 * (8 + 24 + 48) = 1600 counted
    count = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20) SELECT x FROM c"
    assert main(["sql", "--vault", str(example_vault), "--no-sync", "--json", count]) == 0
    out, err = capsys.readouterr()
    assert [row["x"] for row in json.loads(out)["rows"]] == list(range(1, 1000 // (r + c + 8) + 1)), (out, err)


def test_sql_counts_the_column_names_in_every_row_and_cuts_them_in_a_table(example_vault, capsys, monkeypatch):
    """QA round 151-G F2: the column names were not counted toward the cap, though JSON writes them again in every row
    object and the table padded every row to a header's width (not cut at 80 characters as cells are): 2,000 rows of
    one integer named by 100,000 characters made a 200 MB JSON, 619 MB resident. Each row counts the names' bytes now,
    and the table's headers are cut as its cells are."""
    from dreamdb import sqlquery

    c, r = sqlquery.CELL_OVERHEAD, sqlquery.ROW_OVERHEAD
    assert sqlquery.names_size(["é" * 3, "x", "x"]) == 6 + 1 + 3  # (UTF-8 bytes of the keys JSON writes: x, x_2)
    assert sqlquery.result_size((1,), 300) == r + c + 8 + 300
    monkeypatch.setattr(sqlquery, "MAX_RESULT_BYTES", 1000)
    assert main(["sync", "--vault", str(example_vault)]) == 0
    capsys.readouterr()
    name = "k" * 300
    query = (f'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT x AS "{name}" FROM c')
    assert main(["sql", "--vault", str(example_vault), "--no-sync", "--json", query]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)  # 380 bytes a row counted: two rows
    assert [row[name] for row in data["rows"]] == [1, 2] and data["max_bytes"] == 1000, (out, err)
    monkeypatch.setattr(sqlquery, "MAX_RESULT_BYTES", 128 * 2**20)
    assert main(["sql", "--vault", str(example_vault), "--no-sync", query]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 12 and max(len(line) for line in lines) <= 80, (out, err)  # (the 78 and its padding)
    assert lines[0].strip() == "k" * 77 + "…" and lines[2].strip() == "1", out
    monkeypatch.setattr(sqlquery, "MAX_RESULT_BYTES", 200)
    assert main(["sql", "--vault", str(example_vault), "--no-sync", query]) == 2
    assert "The first row of the result holds more than 0 MiB with its column names" in capsys.readouterr().err


def test_sql_counts_the_bytes_its_output_format_writes(example_vault, capsys, monkeypatch):
    """QA round 152-A F5: the cap counted text in UTF-8, where JSON writes a control character (1 byte) as 6
    (``\\u0001``) and a tag character (4) as 12: a column named by 10,000 U+0001, or a value of them, was cut at 13,315
    rows, 800 MB of JSON and 2.4 GB resident, past the 1.2 GB sql --help gives. A cell counts the bytes its format
    writes now: JSON's escapes, CSV's doubled quotes, a BLOB's hex, and the table's padding to its column's widest."""
    import csv
    import io

    from dreamdb import output, sqlquery

    c, r = sqlquery.CELL_OVERHEAD, sqlquery.ROW_OVERHEAD
    assert sqlquery.cell_size("\x01" * 10, "json") == 60 and sqlquery.cell_size("\x01" * 10) == 10
    assert sqlquery.cell_size('a"b\\', "json") == 6 and sqlquery.cell_size("a\nb\x7f", "json") == 10
    assert sqlquery.cell_size("\U000e0041" * 2, "json") == 24 and sqlquery.cell_size("é", "json") == 2
    assert sqlquery.cell_size('a"b', "csv") == 6 and sqlquery.cell_size("a,b", "csv") == 5  # ("a""b", "a,b")
    assert sqlquery.cell_size("ab", "csv") == 2 and sqlquery.cell_size("\U000e0041", "csv") == 14
    assert sqlquery.cell_size(b"\x00" * 5, "json") == sqlquery.cell_size(b"\x00" * 5, "csv") == 10
    assert sqlquery.cell_size(b"\x00" * 5, "table") == 5 and sqlquery.cell_size(7, "json") == 8
    assert sqlquery.names_size(["\x01" * 3, "x"], "json") == 19 and sqlquery.names_size(["\x01" * 3, "x"]) == 4
    assert sqlquery.result_size(("\x01" * 10, 1), 19, "json") == r + 2 * c + 60 + 8 + 19
    monkeypatch.setattr(output, "ASCII_JSON", True)  # (stdout that cannot encode Unicode: every é is \\u00e9)
    assert sqlquery.cell_size("é" * 3, "json") == 18 and sqlquery.cell_size("😀", "json") == 12
    assert sqlquery.cell_size("\x7f", "json") == 6
    monkeypatch.setattr(output, "ASCII_JSON", False)
    monkeypatch.setattr(sqlquery, "_ENCODE_PIECE", 3)  # (escaped a piece at a time: the same count)
    assert sqlquery.cell_size("\x01é\U000e0041" * 7, "json") == 7 * (6 + 2 + 12)
    monkeypatch.setattr(sqlquery, "MAX_RESULT_BYTES", 1000)
    assert main(["sync", "--vault", str(example_vault)]) == 0
    capsys.readouterr()
    five = "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT {} FROM t"
    # 100 U+0001 a row: 600 bytes of JSON, 673 counted with the row's, the cell's and the name's (100 counted before)
    query = five.format("replace(hex(zeroblob(50)), '0', char(1)) AS v")
    assert main(["sql", "--vault", str(example_vault), "--no-sync", "--json", query]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["rows"] == [{"v": "\x01" * 100}] and data["max_bytes"] == 1000, (out, err)
    assert out.count("\\u0001") == 100
    # 100 quotes a row: 202 bytes of CSV ('"' doubled, the cell quoted), 274 counted: 3 rows
    query = five.format("n, replace(hex(zeroblob(50)), '0', '\"') AS q")
    assert main(["sql", "--vault", str(example_vault), "--no-sync", "--format", "csv", query]) == 0
    out, err = capsys.readouterr()
    assert [row[0] for row in csv.reader(io.StringIO(out))] == ["n", "1", "2", "3"], (out, err)
    # the table pads every cell to its column's widest: 20 U+2028 (shown as <U+2028>, 160 bytes) in the first row
    query = five.format("n, CASE n WHEN 1 THEN printf('%.20c', char(8232)) ELSE 'a' END AS w")
    assert main(["sql", "--vault", str(example_vault), "--no-sync", query]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()  # rows of 48 + 2 * 24 + 8 + (60 or 1) + 2, and 152 bytes of padding each: 3 rows
    assert [line.split()[0] for line in lines[2:]] == ["1", "2", "3"] and "<U+2028>" * 20 in lines[2], (out, err)
    assert "note: showing the first 3 rows" in err, err
    monkeypatch.setattr(sqlquery, "MAX_RESULT_BYTES", 128 * 2**20)  # (all five, as before)
    assert main(["sql", "--vault", str(example_vault), "--no-sync", query]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2 + 5


@pytest.mark.parametrize("timeout", [None, "1"])
def test_sql_waits_for_a_locked_index_never_reads_around_it(example_vault, capsys, timeout):
    """QA round 115-C F1: an index another program held locked (locking_mode=EXCLUSIVE) was read as an immutable file,
    which leaves out the transactions in its -wal file: sql --no-sync printed stale rows, exit 0, after 22 s. A
    shorter --timeout bounds the wait (QA round 118-B F7: --timeout 1 waited 10 s)."""
    import sqlite3
    import time

    from dreamdb.store.connect import BUSY_TIMEOUT_MS

    assert main(["sync", "--vault", str(example_vault)]) == 0
    capsys.readouterr()
    index = example_vault / ".dreamdb" / "index.db"
    holder = sqlite3.connect(index, isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("SELECT count(*) FROM documents").fetchone()
        started = time.monotonic()
        p = run_main("sql", "--vault", str(example_vault), "--no-sync", "--json",
                     *(["--timeout", timeout] if timeout else []), "SELECT count(*) AS n FROM documents")
        waited = time.monotonic() - started
    finally:
        holder.execute("COMMIT")
        holder.close()
    error = json.loads(p.stdout)["error"]
    assert p.returncode == 5 and error["exit_code"] == 5 and "locked for more than" in error["message"], p.stdout
    assert waited < 2 * BUSY_TIMEOUT_MS / 1000  # (waited once, not once for the version check and once for the query)
    if timeout:
        assert "locked for more than 1 s" in error["message"] and waited < BUSY_TIMEOUT_MS / 1000, (waited, error)


def test_sql_stops_a_query_that_runs_past_its_time_limit(example_vault, capsys):
    """QA round 51: an endless recursive query ran until interrupted by hand (an agent calling sql waited with it)."""
    import time

    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    assert main(["sync", "--vault", str(example_vault)]) == 0
    capsys.readouterr()
    started = time.monotonic()
    p = run_main("sql", "--vault", str(example_vault), "--timeout", "0.5", "--json", endless)
    elapsed = time.monotonic() - started
    error = json.loads(p.stdout)["error"]
    assert p.returncode == 1 and error["exit_code"] == 1 and elapsed < 15
    assert error["message"] == "The query ran longer than 0.5 s and was stopped; nothing was changed."
    assert main(["sql", "--vault", str(example_vault), "--timeout", "0.5", "SELECT count(*) AS n FROM documents"]) == 0
    assert main(["sql", "--vault", str(example_vault), "--timeout", "-1", "SELECT 1"]) == 2
    # no limit written as inf: the watchdog's wait past the platform's time_t printed its thread's traceback (118-B F6)
    p = run_main("sql", "--vault", str(example_vault), "--timeout", "inf", "--json", "SELECT 7 AS n")
    assert p.returncode == 0 and json.loads(p.stdout) == [{"n": 7}] and p.stderr == "", p.stderr


def test_a_vault_with_notes_only_outside_the_indexed_folders_is_said_so(tiny_vault, capsys):
    """New-user review: a first own vault kept its notes in notes/; sync indexed nothing and recall said only
    "No matches."."""
    write_doc(tiny_vault, "notes/sqlite-decision.md", "# We chose SQLite\n")
    write_doc(tiny_vault, "state/deep/task.md", "too deep for state/\n")
    write_doc(tiny_vault, ".archive/old.md", "an archive, skipped silently\n")
    code = main(["sync", "--vault", str(tiny_vault)])
    out, err = capsys.readouterr()
    assert code == 0 and "0 documents" in out and "(rebuilt)" not in out
    assert "2 .md files in the vault are outside the folders dreamdb reads (notes/sqlite-decision.md, state/deep/task.md)" in err
    code = main(["recall", "--vault", str(tiny_vault), "sqlite"])
    out, err = capsys.readouterr()
    assert code == 0 and out == "" and "No matches." in err
    assert "the index holds no documents" in err and "2 .md files are elsewhere" in err
    code = main(["status", "--vault", str(tiny_vault), "--json"])
    st = json.loads(capsys.readouterr().out)
    assert (st["unindexed_markdown"], st["unindexed_examples"]) == (2, ["notes/sqlite-decision.md", "state/deep/task.md"])
    assert st["embeddings"]["hybrid_ready"] is False  # no vectors in this index
    write_doc(tiny_vault, "knowledge/sqlite-decision.md", "# We chose SQLite\n")
    code = main(["sync", "--vault", str(tiny_vault)])
    out, err = capsys.readouterr()
    assert code == 0 and "· 1 document ·" in out and "note:" not in err  # documents: no note
    assert "index checked" not in out
    code = main(["sync", "--vault", str(tiny_vault), "--check"])
    assert code == 0 and capsys.readouterr().out.rstrip().endswith("· index checked: ok")
    code = main(["status", "--vault", str(tiny_vault)])
    assert "not indexed:    2 .md files outside the folders dreamdb reads" in capsys.readouterr().out
    code = main(["recall", "--vault", str(tiny_vault), "rollback"])  # no match in an index that has documents
    err = capsys.readouterr().err
    assert code == 0 and "2 .md files outside the folders dreamdb reads were not searched" in err


def test_notes_named_md_in_upper_case_are_warned_of_and_counted_by_status(tiny_vault, capsys):
    """QA round 65 L5: knowledge/UPPER.MD was neither indexed nor counted by status ("not indexed: N .md files
    outside the folders dreamdb reads"), and the sync said nothing: the note was lost without a word."""
    write_doc(tiny_vault, "knowledge/kept.md", "indexed\n")
    write_doc(tiny_vault, "knowledge/deep/UPPER.MD", "---\ntitle: Upper\n---\nzebracorn\n")
    write_doc(tiny_vault, "state/Task.Md", "zebracorn\n")
    write_doc(tiny_vault, "NOTES.MD", "outside the folders too\n")
    write_doc(tiny_vault, "knowledge/.hidden.MD", "hidden: skipped silently, as .hidden.md is\n")
    # (another markdown extension, and the changelog's name in another case: QA round 90-C F7)
    write_doc(tiny_vault, "knowledge/Long.Markdown", "zebracorn\n")
    write_doc(tiny_vault, "core/changelog.json", "[]\n")
    code = main(["sync", "--vault", str(tiny_vault)])
    out, err = capsys.readouterr()
    assert code == 0 and "· 1 document ·" in out
    assert err.splitlines() == [
        "warning: core/changelog.json: skipped (dreamdb reads core/CHANGELOG.json, named so in this case; rename it)",
        "warning: knowledge/Long.Markdown: skipped (the extension .Markdown is not .md, the only one dreamdb reads;"
        " rename it to Long.md)",
        "warning: knowledge/deep/UPPER.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb"
        " reads; rename it to UPPER.md)",
        "warning: state/Task.Md: skipped (the extension .Md is not .md in lower case, the only one dreamdb reads;"
        " rename it to Task.md)"]
    code = main(["status", "--vault", str(tiny_vault), "--json"])
    st = json.loads(capsys.readouterr().out)
    assert (st["unindexed_markdown"], st["unindexed_examples"]) == (1, ["NOTES.MD"])
    assert (st["unindexed_cased_extension"], st["unindexed_cased_examples"]) == (
        3, ["knowledge/Long.Markdown", "knowledge/deep/UPPER.MD", "state/Task.Md"])
    assert st["unindexed_changelog"] == ["core/changelog.json"]  # (QA round 91 F7: not listed)
    code = main(["status", "--vault", str(tiny_vault)])
    out = capsys.readouterr().out
    assert code == 0 and ("not indexed:    3 notes with an extension other than .md (knowledge/Long.Markdown,"
                          " knowledge/deep/UPPER.MD, state/Task.Md): rename to .md\n") in out
    assert ("not indexed:    core/changelog.json: dreamdb reads core/CHANGELOG.json, named so in this case; rename"
            " it\n") in out
    (tiny_vault / "knowledge" / "deep" / "UPPER.MD").rename(tiny_vault / "knowledge" / "deep" / "UPPER.md")
    code = main(["recall", "--vault", str(tiny_vault), "zebracorn", "--json"])
    assert [h["doc_id"] for h in json.loads(capsys.readouterr().out)["hits"]] == ["knowledge/UPPER"]


def test_the_advice_to_rename_a_misnamed_note_or_changelog_never_names_a_file_already_there(tiny_vault, capsys):
    """QA round 144-E F4: beside knowledge/design.md, the sync said to rename knowledge/design.MD and
    knowledge/design.markdown to design.md, and beside core/CHANGELOG.json, core/changelog.json to it (status: "rename
    to .md"): each, run as mv, replaced the indexed file. Where the name is taken, that is said, with merging the two
    or another name; a name that is free is still given."""
    design = "---\ntitle: Design\n---\nthe real design note\n"
    write_doc(tiny_vault, "knowledge/design.md", design)
    write_doc(tiny_vault, "knowledge/design.markdown", "---\ntitle: Design export\n---\nan export\n")
    write_doc(tiny_vault, "knowledge/design.MD", "---\ntitle: DESIGN\n---\nupper-case copy\n")
    write_doc(tiny_vault, "knowledge/free.MD", "---\ntitle: Free\n---\nno note of its .md name\n")
    write_doc(tiny_vault, "core/CHANGELOG.json", "[]\n")
    write_doc(tiny_vault, "core/changelog.json", "[]\n")
    code = main(["sync", "--vault", str(tiny_vault)])
    err = capsys.readouterr().err
    assert code == 0 and sorted(err.splitlines()) == [
        "warning: core/changelog.json: skipped (dreamdb reads core/CHANGELOG.json, named so in this case;"
        " core/CHANGELOG.json is there already, which a rename would replace: merge the two)",
        "warning: knowledge/design.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " knowledge/design.md is there already, which a rename would replace: merge the two, or choose another name)",
        "warning: knowledge/design.markdown: skipped (the extension .markdown is not .md, the only one dreamdb reads;"
        " knowledge/design.md is there already, which a rename would replace: merge the two, or choose another name)",
        "warning: knowledge/free.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " rename it to free.md)"]
    code = main(["status", "--vault", str(tiny_vault)])
    out = capsys.readouterr().out
    assert code == 0 and ("not indexed:    3 notes with an extension other than .md (knowledge/design.MD,"
                          " knowledge/design.markdown, knowledge/free.MD): rename to .md, but not onto a note already"
                          " there (knowledge/design.md, beside knowledge/design.MD and knowledge/design.markdown): merge"
                          " each into that note, or choose another name\n") in out
    assert ("not indexed:    core/changelog.json: dreamdb reads core/CHANGELOG.json, named so in this case;"
            " core/CHANGELOG.json is there already, which a rename would replace: merge the two\n") in out
    assert (tiny_vault / "knowledge" / "design.md").read_text(encoding="utf-8") == design
    # an index without documents names the fix too: the note's .md name a link to nothing, skipped, holds
    empty = tiny_vault.parent / "other" / "_dream_context"
    write_doc(empty, "knowledge/UP.MD", "---\ntitle: Up\n---\nhello world\n")
    (empty / "knowledge" / "UP.md").symlink_to("gone.md")
    taken = ("rename {}to .md, but not onto a note already there (knowledge/UP.md, beside knowledge/UP.MD): merge each"
             " into that note, or choose another name")
    code = main(["sync", "--vault", str(empty)])
    assert code == 0 and taken.format("it ") in capsys.readouterr().err
    code = main(["recall", "--vault", str(empty), "hello"])
    assert code == 0 and taken.format("") in capsys.readouterr().err


def test_the_advice_never_renames_two_skipped_files_to_one_free_name(tiny_vault, capsys):
    """QA round 144-I F2: with no knowledge/design.md, knowledge/design.MD and knowledge/design.markdown were each
    told "rename it to design.md", and core/changelog.json and core/Changelog.json (no core/CHANGELOG.json) each
    "rename it" (status: "rename to .md"): the second mv replaced the first. Where other skipped files would take the
    name, they are named, with merging them (a note: or naming them apart); a name only one would take is given."""
    write_doc(tiny_vault, "knowledge/design.markdown", "---\ntitle: Design export\n---\nan export\n")
    write_doc(tiny_vault, "knowledge/design.MD", "---\ntitle: DESIGN\n---\nupper-case copy\n")
    write_doc(tiny_vault, "knowledge/free.MD", "---\ntitle: Free\n---\nno other note of its .md name\n")
    write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: Other\n---\na note read as it is\n")
    write_doc(tiny_vault, "core/changelog.json", "[]\n")
    write_doc(tiny_vault, "core/Changelog.json", "[]\n")
    code = main(["sync", "--vault", str(tiny_vault)])
    err = capsys.readouterr().err
    assert code == 0 and sorted(err.splitlines()) == [
        "warning: core/Changelog.json: skipped (dreamdb reads core/CHANGELOG.json, named so in this case;"
        " core/changelog.json would take core/CHANGELOG.json too, one rename replacing the other: merge the two into"
        " one core/CHANGELOG.json)",
        "warning: core/changelog.json: skipped (dreamdb reads core/CHANGELOG.json, named so in this case;"
        " core/Changelog.json would take core/CHANGELOG.json too, one rename replacing the other: merge the two into"
        " one core/CHANGELOG.json)",
        "warning: knowledge/design.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " knowledge/design.markdown would take design.md too, one rename replacing the other: merge the two into one"
        " design.md, or name them apart)",
        "warning: knowledge/design.markdown: skipped (the extension .markdown is not .md, the only one dreamdb reads;"
        " knowledge/design.MD would take design.md too, one rename replacing the other: merge the two into one"
        " design.md, or name them apart)",
        "warning: knowledge/free.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " rename it to free.md)"]
    code = main(["status", "--vault", str(tiny_vault)])
    out = capsys.readouterr().out
    assert code == 0 and ("not indexed:    3 notes with an extension other than .md (knowledge/design.MD,"
                          " knowledge/design.markdown, knowledge/free.MD): rename to .md, but not two onto one name"
                          " (knowledge/design.md, for knowledge/design.MD and knowledge/design.markdown): merge them"
                          " into one note, or name them apart\n") in out
    assert ("not indexed:    core/changelog.json: dreamdb reads core/CHANGELOG.json, named so in this case;"
            " core/Changelog.json would take core/CHANGELOG.json too, one rename replacing the other: merge the two"
            " into one core/CHANGELOG.json\n") in out
    # one of the skipped notes only among the examples an index without documents names: the other is named still
    empty = tiny_vault.parent / "other" / "_dream_context"
    write_doc(empty, "knowledge/UP.MD", "---\ntitle: Up\n---\nhello world\n")
    write_doc(empty, "knowledge/UP.mkd", "---\ntitle: Up again\n---\nhello there\n")
    code = main(["recall", "--vault", str(empty), "hello"])
    assert code == 0 and ("rename to .md, but not two onto one name (knowledge/UP.md, for knowledge/UP.MD and"
                          " knowledge/UP.mkd): merge them into one note, or name them apart") in capsys.readouterr().err


def test_no_folder_link_and_no_second_name_of_one_file_is_a_rival_of_a_rename(tiny_vault, capsys):
    """QA round 144-J F8: a link to a folder named knowledge/design.mkd (which status does not count as a note) was a
    rival of design.MD and design.markdown, and solo.markdown, a link to solo.MD, was told to be merged with it into
    one solo.md. A folder link is said as one, and two names of one file are one."""
    knowledge = tiny_vault / "knowledge"
    write_doc(tiny_vault, "knowledge/design.MD", "---\ntitle: DESIGN\n---\nupper-case copy\n")
    write_doc(tiny_vault, "knowledge/design.markdown", "---\ntitle: Design export\n---\nan export\n")
    (knowledge / "target.dir").mkdir()
    (knowledge / "design.mkd").symlink_to("target.dir")
    write_doc(tiny_vault, "knowledge/solo.MD", "---\ntitle: Solo\n---\none file of two names\n")
    (knowledge / "solo.markdown").symlink_to("solo.MD")
    write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: Other\n---\na note read as it is\n")
    code = main(["sync", "--vault", str(tiny_vault)])
    err = capsys.readouterr().err
    assert code == 0 and sorted(err.splitlines()) == [
        "warning: knowledge/design.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " knowledge/design.markdown would take design.md too, one rename replacing the other: merge the two into one"
        " design.md, or name them apart)",
        "warning: knowledge/design.markdown: skipped (the extension .markdown is not .md, the only one dreamdb reads;"
        " knowledge/design.MD would take design.md too, one rename replacing the other: merge the two into one"
        " design.md, or name them apart)",
        "warning: knowledge/design.mkd: skipped (a symlinked folder; dreamdb does not follow folder links)",
        "warning: knowledge/solo.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " rename it to solo.md)",
        "warning: knowledge/solo.markdown: skipped (the extension .markdown is not .md, the only one dreamdb reads;"
        " rename it to solo.md)"], err
    code = main(["status", "--vault", str(tiny_vault)])
    out = capsys.readouterr().out
    assert code == 0 and ("not indexed:    4 notes with an extension other than .md (knowledge/design.MD,"
                          " knowledge/design.markdown, knowledge/solo.MD, knowledge/solo.markdown): rename to .md, but"
                          " not two onto one name (knowledge/design.md, for knowledge/design.MD and"
                          " knowledge/design.markdown): merge them into one note, or name them apart\n") in out, out


def test_a_link_or_hard_link_to_the_note_a_rename_would_replace_is_to_be_removed(tiny_vault, capsys):
    """QA round 150-A F5: ``y.MD``, a link to ``y.md`` beside it, was to be renamed to ``y.md``: ``mv`` would replace
    the note with the link, a link to itself. The advice is to remove the link (a hard link too: ``mv`` refuses two
    names of one file); a file that a link named so points to is still to be renamed (``mv`` puts it in the link's
    place)."""
    knowledge = tiny_vault / "knowledge"
    write_doc(tiny_vault, "knowledge/y.md", "---\ntitle: Yak\n---\nyak body\n")
    (knowledge / "y.MD").symlink_to("y.md")
    write_doc(tiny_vault, "knowledge/h.md", "---\ntitle: Hare\n---\nhare body\n")
    os.link(knowledge / "h.md", knowledge / "h.MD")
    write_doc(tiny_vault, "knowledge/z.MD", "---\ntitle: Zebu\n---\nzebu body\n")
    (knowledge / "z.md").symlink_to("z.MD")
    code = main(["sync", "--vault", str(tiny_vault)])
    err = capsys.readouterr().err
    assert code == 0 and sorted(line for line in err.splitlines() if "skipped" in line) == [
        "warning: knowledge/h.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " it is another name (a hard link) of knowledge/h.md, which dreamdb reads: remove this name)",
        "warning: knowledge/y.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " it is a link to knowledge/y.md, which dreamdb reads: remove the link, which a rename would put in that"
        " file's place)",
        "warning: knowledge/z.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " rename it to z.md)"], err
    code = main(["status", "--vault", str(tiny_vault)])
    out = capsys.readouterr().out
    assert code == 0 and ("not indexed:    3 notes with an extension other than .md (knowledge/h.MD, knowledge/y.MD,"
                          " knowledge/z.MD): rename to .md, but not the links or other names of notes dreamdb reads"
                          " already (knowledge/h.MD, a hard link of knowledge/h.md; knowledge/y.MD, a link to"
                          " knowledge/y.md): remove them\n") in out, out
    (knowledge / "z.MD").unlink()
    (knowledge / "h.MD").unlink()
    code = main(["status", "--vault", str(tiny_vault)])
    out = capsys.readouterr().out
    assert code == 0 and ("not indexed:    1 note with an extension other than .md (knowledge/y.MD): remove it, not"
                          " rename to .md (knowledge/y.MD, a link to knowledge/y.md: a note dreamdb reads already)\n"
                          ) in out, out


def test_a_folder_of_many_misnamed_notes_is_listed_once_a_sync(tiny_vault, monkeypatch, capsys):
    """QA round 149-F F1: for each note a sync skipped for its extension (n1.MD … n4000.MD), the advice listed its whole
    folder again and ran misnamed_note on each entry, and compared each pair of a name's variants with
    os.path.samefile: a sync (the prompt hook's too) after any change quadratic in their number (4,000 .MD notes:
    recall 22–29 s). Each folder is listed once a walk and each file stat'ed once, the warnings as they were, in name
    order."""
    from dreamdb.vault import discover

    many = 60
    for i in range(many):
        write_doc(tiny_vault, f"knowledge/n{i}.MD", "x sleep\n")
    variants = ["x.MD", "x.Md", "x.mD", "x.markdown", "x.MARKDOWN", "x.mkd", "x.MKD", "x.mdown", "x.mkdn", "x.MKDN"]
    for name in variants:
        write_doc(tiny_vault, f"knowledge/{name}", "a variant\n")
    (tiny_vault / "knowledge" / "x.Markdown").symlink_to("x.MD")  # (one file of two names: no rival of x.MD)
    write_doc(tiny_vault, "knowledge/real.md", "---\ntitle: real\n---\nsleep\n")
    listed, named, stats = [], [], []
    scandir, misnamed_note, stat = os.scandir, discover.misnamed_note, os.stat
    monkeypatch.setattr(discover.os, "scandir", lambda path=".": listed.append(os.fspath(path)) or scandir(path))
    monkeypatch.setattr(discover, "misnamed_note", lambda name: named.append(name) or misnamed_note(name))
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: stats.append(path) or stat(path, *a, **k))
    warnings = []
    discover.walk_sources(tiny_vault, warn=warnings.append)
    monkeypatch.undo()
    files = many + len(variants) + 2
    assert len(listed) == len(set(listed)) == 1  # (knowledge/ once; before: once more for each skipped note, 72 in all)
    assert len(named) <= 8 * files, len(named)  # (before: 5,325, each entry once for each skipped note)
    assert len(stats) <= 4 * files, len(stats)  # (before: 1,057, a samefile of each pair of x's variants)
    assert warnings == sorted(warnings) and len(warnings) == files - 1
    assert ("knowledge/n7.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
            " rename it to n7.md)") in warnings
    rivals = " and ".join(f"knowledge/{n}" for n in sorted(variants) if n != "x.mkd")
    assert ("knowledge/x.mkd: skipped (the extension .mkd is not .md, the only one dreamdb reads;"
            f" {rivals} would take x.md too, one rename replacing the other: merge them into one x.md, or name them"
            " apart)") in warnings
    # the link to x.MD is one file with it: no rival of it, and told of x.MD's rivals but x.MD
    assert ("knowledge/x.Markdown: skipped (the extension .Markdown is not .md, the only one dreamdb reads;"
            f" {' and '.join(f'knowledge/{n}' for n in sorted(variants) if n != 'x.MD')} would take x.md too, one"
            " rename replacing the other: merge them into one x.md, or name them apart)") in warnings
    code = main(["sync", "--vault", str(tiny_vault)])
    assert code == 0 and "knowledge/n7.MD: skipped" in capsys.readouterr().err


def test_a_folder_at_the_name_a_rename_would_take_is_said_as_a_folder(tiny_vault, capsys):
    """QA round 145-A F4: with a folder knowledge/design.md, knowledge/design.MD was told "knowledge/design.md is
    there already, which a rename would replace: merge the two", and core/changelog.json the same beside a folder
    core/CHANGELOG.json (status alike): a rename replaces no folder (mv moves the file into it) and a folder cannot be
    merged with a note. A folder holding the name is said as one, with another name or moving the folder (a
    changelog: moving the folder, its name the only one read); a note at the name is still one to merge with."""
    write_doc(tiny_vault, "knowledge/design.md/inner.md", "---\ntitle: Inner\n---\na note in the folder\n")
    write_doc(tiny_vault, "knowledge/design.MD", "---\ntitle: DESIGN\n---\nupper-case copy\n")
    write_doc(tiny_vault, "knowledge/real.md", "---\ntitle: Real\n---\nthe real note\n")
    write_doc(tiny_vault, "knowledge/real.MD", "---\ntitle: REAL\n---\nupper-case copy\n")
    (tiny_vault / "core" / "CHANGELOG.json").mkdir(parents=True)
    write_doc(tiny_vault, "core/changelog.json", "[]\n")
    code = main(["sync", "--vault", str(tiny_vault)])
    err = capsys.readouterr().err
    assert code == 0 and sorted(err.splitlines()) == [
        "warning: core/CHANGELOG.json: skipped (a folder, not a file)",
        "warning: core/changelog.json: skipped (dreamdb reads core/CHANGELOG.json, named so in this case; a folder"
        " holds the name core/CHANGELOG.json, into which a rename would move it: move that folder away, then rename"
        " it)",
        "warning: knowledge/design.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " a folder holds the name knowledge/design.md, into which a rename would move it: choose another name, or"
        " move that folder)",
        "warning: knowledge/real.MD: skipped (the extension .MD is not .md in lower case, the only one dreamdb reads;"
        " knowledge/real.md is there already, which a rename would replace: merge the two, or choose another name)"
    ], err
    code = main(["status", "--vault", str(tiny_vault)])
    out = capsys.readouterr().out
    assert code == 0 and ("not indexed:    2 notes with an extension other than .md (knowledge/design.MD,"
                          " knowledge/real.MD): rename to .md, but not onto a note already there (knowledge/real.md,"
                          " beside knowledge/real.MD): merge each into that note, or choose another name; not onto the"
                          " name of a folder (knowledge/design.md, beside knowledge/design.MD), into which a rename"
                          " would move the note: choose another name, or move that folder\n") in out, out
    assert ("not indexed:    core/changelog.json: dreamdb reads core/CHANGELOG.json, named so in this case; a folder"
            " holds the name core/CHANGELOG.json, into which a rename would move it: move that folder away, then"
            " rename it\n") in out, out


def test_an_empty_index_names_the_notes_whose_extension_is_in_upper_case(tiny_vault, capsys):
    """QA round 68 L6: recall on an index without documents blamed the .md files outside the folders dreamdb
    reads and said nothing of knowledge/B.MD (status lists both)."""
    write_doc(tiny_vault, "knowledge/B.MD", "---\ntitle: B\n---\nbody words\n")
    write_doc(tiny_vault, "notes/c.md", "body words\n")
    main(["sync", "--vault", str(tiny_vault)])
    capsys.readouterr()  # (the sync's own warning names B.MD once)
    code = main(["recall", "--vault", str(tiny_vault), "body words"])
    err = capsys.readouterr().err
    assert code == 0 and ("the vault has no notes in the folders dreamdb reads (1 .md file is elsewhere; "
                          f"`dreamdb status --vault {tiny_vault.resolve()}` lists them); knowledge/B.MD has an"
                          " extension other than .md: rename to .md") in err  # (the vault named: QA round 155-E F4)
    code = main(["list", "--vault", str(tiny_vault)])  # (L10: "No documents." without a why)
    out, err = capsys.readouterr()
    assert code == 0 and out == "No documents.\n" and err.startswith(
        "note: no documents indexed; 1 .md file in the vault is outside the folders dreamdb reads (notes/c.md)")


def test_explain_json_flags_a_query_term_counted_in_its_class(tiny_vault, capsys):
    """QA round 65 L7: recall --explain --json gave a query term counted in a class "bm25f": 0.0 with nothing to
    tell it from a term that adds nothing, while the text says "bm25f in class". ``strateji`` (read as English)
    counts with its other form ``stratej`` (the note writing "strateji") as one term."""
    write_doc(tiny_vault, "knowledge/yedekleme.md", "---\ntitle: Veritabanı yedekleme stratejisi\n---\nNightly backups.\n")
    write_doc(tiny_vault, "knowledge/plan.md", "---\ntitle: Plan\n---\nBu yılın strateji belgesi.\n")
    code = main(["recall", "--vault", str(tiny_vault), "--explain", "--json", "strateji"])
    hits = {h["doc_id"]: h for h in json.loads(capsys.readouterr().out)["hits"]}
    assert code == 0
    terms = {t["term"]: t for t in hits["knowledge/yedekleme"]["terms"]}
    assert (terms["strateji"]["kind"], terms["strateji"]["bm25f"], terms["strateji"]["in_class"]) == ("query", 0.0, True)
    assert terms["strateji|stratej"]["kind"] == "class" and terms["strateji|stratej"]["bm25f"] > 0
    assert terms["strateji|stratej"]["in_class"] is False
    code = main(["recall", "--vault", str(tiny_vault), "--explain", "--json", "nightly"])  # no class: false
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert [(t["term"], t["in_class"]) for t in hits[0]["terms"]] == [("nightli", False)] and hits[0]["terms"][0]["bm25f"] > 0


def test_the_unindexed_note_never_lists_the_knowledge_folder(tiny_vault, monkeypatch):
    """Profiling the eval: every empty recall listed knowledge/ (all of a big vault's notes) before pruning it,
    ~1 ms per 1,000 notes for a note about the few files elsewhere."""
    from dreamdb.vault import discover

    write_doc(tiny_vault, "notes/elsewhere.md", "not read\n")
    write_doc(tiny_vault, "knowledge/deep/kept.md", "indexed\n")
    listed = []
    real = os.scandir
    with monkeypatch.context() as patched:  # (undone before tmp_path's removal, which lists folders by descriptor)
        patched.setattr(os, "scandir", lambda path=".": listed.append(os.path.relpath(path, tiny_vault)) or real(path))
        assert discover.unindexed_markdown(tiny_vault) == (1, ["notes/elsewhere.md"])
    assert "notes" in listed and not [p for p in listed if p.split(os.sep)[0] == "knowledge"], listed


def test_a_first_recall_on_a_terminal_shows_the_indexing_progress(tiny_vault):
    """New-user review: the lazy full sync of a first recall ran for seconds with nothing on screen."""
    import pty

    for i in range(60):
        write_doc(tiny_vault, f"knowledge/note-{i:02d}.md", f"---\ntitle: Note {i}\n---\nwalrus fact {i}\n")

    def recall_with_stderr_on_a_terminal() -> str:
        leader, follower = pty.openpty()
        try:
            p = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--vault", str(tiny_vault), "walrus"],
                               stdout=subprocess.PIPE, stderr=follower, timeout=120)
            os.close(follower)
            follower = None
            assert p.returncode == 0 and b"knowledge/note-" in p.stdout
            chunks = []
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal's other end is closed: everything was read
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks).decode("utf-8", "replace")
        finally:
            os.close(leader)
            if follower is not None:
                os.close(follower)

    assert "Indexing the vault" in recall_with_stderr_on_a_terminal()
    assert "Indexing the vault" not in recall_with_stderr_on_a_terminal()  # nothing to index: no bar


def test_an_empty_index_over_archived_or_hidden_notes_says_so(tiny_vault, capsys):
    """QA round 14: a vault whose notes were all archived or hidden was said to have "no notes yet"."""
    write_doc(tiny_vault, "knowledge/.archive/a.md", "archived\n")
    write_doc(tiny_vault, "knowledge/.draft.md", "hidden\n")
    code = main(["sync", "--vault", str(tiny_vault)])
    err = capsys.readouterr().err
    assert code == 0 and "2 .md files are in archive folders" in err and "DREAMDB_INCLUDE_ARCHIVES=1" in err


def test_recall_over_an_index_of_only_archived_or_hidden_notes_says_so(tiny_vault, capsys):
    write_doc(tiny_vault, "knowledge/.archive/z.md", "zebra archived\n")
    write_doc(tiny_vault, "state/.draft.md", "zebra hidden\n")
    code = main(["recall", "--vault", str(tiny_vault), "zebra"])
    err = capsys.readouterr().err
    assert code == 0 and "2 .md files are in archive folders" in err and "folders dreamdb reads" not in err


@pytest.mark.parametrize("newest_first", [True, False])
@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_superseded_by_names_the_newest_correction_not_the_largest_id(tiny_vault, engine, newest_first):
    """QA round 40: two corrections of one entry on one day; the later one (scope "note") sorts before the
    earlier one ("writes") by id, and was not the one named."""
    old = {"date": "2026-07-02", "type": "fix", "scope": "writes", "description": "Atomic writes of notes"}
    first = {"date": "2026-12-03", "type": "fix", "scope": "writes", "description": "Atomic writes, correction one",
             "supersedes": "changelog/2026-07-02-writes-1"}
    second = {"date": "2026-12-03", "type": "fix", "scope": "note", "description": "Atomic writes, correction two",
              "supersedes": "changelog/2026-07-02-writes-1"}
    entries = [second, first, old] if newest_first else [old, first, second]
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps(entries))
    with dreamdb.open(tiny_vault, engine=engine) as ix:
        hits = {h.doc_id: h for h in ix.recall("atomic writes", top=5, now="2026-12-04")}
        assert hits["changelog/2026-07-02-writes-1"].superseded_by == "changelog/2026-12-03-note-1"


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_superseded_by_names_the_last_of_same_day_corrections_remember_appended(tiny_vault, engine):
    """QA round 41: every entry of one day; remember appends where the dates tie, but the file was read
    as newest-first and the first correction was named."""
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps(
        [{"date": "2026-12-03", "type": "fix", "scope": "writes", "description": "Atomic writes of notes"}]))
    now = datetime(2026, 12, 3, 12, tzinfo=timezone.utc)
    one = remember(tiny_vault, "Atomic writes, correction one", scope="writes", supersedes="2026-12-03-writes-1", now=now)
    two = remember(tiny_vault, "Atomic writes, correction two", scope="note", supersedes="2026-12-03-writes-1", now=now)
    entries = json.loads((tiny_vault / "core" / "CHANGELOG.json").read_text())
    assert [e["description"][-3:] for e in entries] == ["tes", "one", "two"]  # appended, in the order written
    with dreamdb.open(tiny_vault, engine=engine) as ix:
        hits = {h.doc_id: h for h in ix.recall("atomic writes", top=5, now="2026-12-04")}
        assert hits["changelog/2026-12-03-writes-1"].superseded_by == f"changelog/{two['id']}" != f"changelog/{one['id']}"


def test_a_version_number_finds_the_notes_that_write_it_on_the_real_vault(real_index):
    """QA round 45 M3: ``v0.5.0`` was searched as ``v0`` (held by 129 documents): 1 of the 8 notes that write
    it reached the top 10, and the changelog entry titled "v0.5.0: …" none."""
    hits = real_index.recall("what did we ship in v0.5.0?", top=5, now="2026-08-18T00:00:00Z")
    writing = [h.doc_id for h in hits if "v0.5.0" in (h.title + h.snippet + h.description)]
    assert hits[0].doc_id == "changelog/2026-05-31-positioning-1"
    assert len(writing) >= 3, [h.doc_id for h in hits]


def test_a_query_starting_with_a_dash_is_documented_and_works(example_vault):
    """User QA: `dreamdb recall -- -x` worked but neither `recall --help` nor the README said so."""
    r = CliRunner().invoke(cli, ["recall", "--help"])
    assert r.exit_code == 0 and "dreamdb recall -- -x" in r.output and "starting with '-'" in r.output
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `dreamdb recall QUERY"))
    assert "`dreamdb recall -- -x`" in row
    p = run_main("recall", "--vault", str(example_vault), "--json", "--", "-debt")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["query"] == "-debt"


def test_every_sync_of_a_vault_whose_only_note_is_named_md_in_upper_case_says_why_nothing_is_indexed(tmp_path):
    """User QA: with knowledge/UP.MD the only note, a sync after the first said "0 documents" and "the vault has no
    notes yet" (only the first sync, which found the file, warned of it). dreamdb reads `.md` in lower case only
    (README, "Which files become documents"), so every sync of the empty index names the file and the fix."""
    vault = tmp_path / "_dream_context"
    write_doc(vault, "knowledge/UP.MD", "---\ntitle: Up\n---\nhello world\n")
    for _ in range(2):
        p = run_main("sync", "--vault", str(vault))
        assert p.returncode == 0 and "0 documents" in p.stdout, p.stderr
        assert ("note: no documents indexed: knowledge/UP.MD has an extension other than .md, the only one"
                " dreamdb reads: rename it to .md") in p.stderr
        assert "no notes yet" not in p.stderr
    (vault / "knowledge" / "UP.MD").rename(vault / "knowledge" / "UP.md")
    p = run_main("sync", "--vault", str(vault))
    assert p.returncode == 0 and "1 document " in p.stdout and "note:" not in p.stderr


def test_the_empty_index_note_of_a_markdown_or_mdown_note_says_its_extension_is_another_not_in_another_case(tmp_path):
    """QA round 149-A F1: with knowledge/a.markdown the only note, `list` and `sync` said it "has an extension in
    another case than .md", which is true of .MD only; recall and status say "an extension other than .md"."""
    for name in ("a.markdown", "b.mdown"):
        vault = tmp_path / name / "_dream_context"
        write_doc(vault, f"knowledge/{name}", "# a\n")
        for command in ("list", "sync"):
            p = run_main(command, "--vault", str(vault))
            assert p.returncode == 0, p.stderr
            assert (f"note: no documents indexed: knowledge/{name} has an extension other than .md, the only one"
                    " dreamdb reads: rename it to .md") in p.stderr
            assert "another case" not in p.stderr
        p = run_main("recall", "--vault", str(vault), "anything")
        assert f"knowledge/{name} has an extension other than .md: rename to .md" in p.stderr
    vault = tmp_path / "two" / "_dream_context"
    write_doc(vault, "knowledge/a.markdown", "# a\n")
    write_doc(vault, "knowledge/B.MD", "# b\n")
    p = run_main("list", "--vault", str(vault))
    assert ("note: no documents indexed: knowledge/B.MD, knowledge/a.markdown have an extension other than .md, the"
            " only one dreamdb reads: rename them to .md") in p.stderr


def test_status_counts_one_unindexed_file_in_the_singular(tmp_path, capsys):
    """QA round 72-A: "1 .md files outside…", "1 file dreamdb cannot read … fix their permissions"."""
    from dreamdb.cli import main

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "a.md").write_text("---\ntitle: A\n---\nalpha\n")
    (vault / "notes").mkdir()
    (vault / "notes" / "stray.md").write_text("stray\n")
    assert main(["status", "--vault", str(vault)]) == 0
    assert "not indexed:    1 .md file outside the folders dreamdb reads (notes/stray.md)" in capsys.readouterr().out


def test_status_lists_a_new_note_with_nothing_readable_in_it(tmp_path, capsys):
    """QA round 75 F7: a new binary note (NUL bytes) was warned of by the first sync, then missing without a trace:
    status counted it nowhere. A file with nothing readable in it (binary, a CHANGELOG.json that is no JSON) is now
    listed as a file dreamdb cannot read, as long as it stays so."""
    from dreamdb.cli import main

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "core").mkdir()
    (vault / "knowledge" / "a.md").write_text("---\ntitle: A\n---\nalpha\n")
    (vault / "knowledge" / "nul.md").write_bytes(b"\x00\x00\x00 nul emu")
    (vault / "core" / "CHANGELOG.json").write_text("[{not json")
    for _ in range(2):  # (the second sync reads neither again, and warns of nothing)
        assert main(["sync", "--vault", str(vault)]) == 0
    capsys.readouterr()
    assert main(["status", "--vault", str(vault), "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["unreadable_files"] == 2 and st["unreadable_examples"] == ["core/CHANGELOG.json", "knowledge/nul.md"]
    assert main(["status", "--vault", str(vault)]) == 0
    assert "not indexed:    2 files dreamdb cannot read (core/CHANGELOG.json, knowledge/nul.md)" in capsys.readouterr().out
    (vault / "knowledge" / "nul.md").write_text("---\ntitle: Emu\n---\nemu facts\n")
    assert main(["sync", "--vault", str(vault)]) == 0
    capsys.readouterr()
    assert main(["status", "--vault", str(vault), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unreadable_examples"] == ["core/CHANGELOG.json"]


def test_a_forced_rebuild_says_files_indexed_again_not_changed(tiny_vault, capsys):
    """QA round 99-B F10: ``sync --force`` said "0 added, 11 changed", though no file had changed: a rebuild
    parses every file again. It says how many were indexed again, of which how many are new."""
    write_doc(tiny_vault, "knowledge/a.md", "# A\nalpha\n")
    write_doc(tiny_vault, "knowledge/b.md", "# B\nbeta\n")
    assert main(["sync", "--vault", str(tiny_vault)]) == 0
    first = capsys.readouterr().out
    assert first.startswith("2 added, 0 changed, 0 removed, 0 unchanged · 2 documents"), first
    write_doc(tiny_vault, "knowledge/c.md", "# C\ngamma\n")
    assert main(["sync", "--vault", str(tiny_vault), "--force"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 files indexed again (1 new), 0 removed · 3 documents · ") and "(rebuilt)" in out, out
    assert main(["sync", "--vault", str(tiny_vault), "--force", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["changed"] == 3


def test_a_vault_whose_only_file_cannot_be_read_names_contents_too(tiny_vault, capsys):
    """QA round 102-B F1: a vault whose only file was a CHANGELOG.json of the wrong shape (or a binary note) got
    "cannot be read (fix their permissions)": no permission's matter, and one file."""
    write_doc(tiny_vault, "core/CHANGELOG.json", "{}")
    assert main(["sync", "--vault", str(tiny_vault)]) == 0
    err = capsys.readouterr().err
    assert ("note: no documents indexed: core/CHANGELOG.json cannot be read (fix its permissions, or contents: binary,"
            f" or JSON that does not parse; dreamdb sync --force --vault {shlex.quote(str(tiny_vault.resolve()))}"
            " names the reason).") in err, err  # (the vault named: QA round 156-F F2)


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_local_day_keeps_notes_dated_by_day_and_by_instant_within_it(tiny_vault, engine):
    """QA round 118-B F3: ``today`` became the local date read as midnight UTC, right for a note dated with a date
    alone, but a note stamped with a time was compared with that midnight: in Tokyo at 08:30 a note of 08:00 (23:00
    UTC the day before) was left out of ``--since today``, and in New York at 20:00 a note of 20:00 (01:00 UTC the
    next day) out of ``--until today``. A date alone is that local date; a time of day is an instant of that day."""
    import dreamdb

    for name, key, when in (("d5", "date", "2026-12-05"), ("d6", "date", "2026-12-06"),
                            ("tokyo", "updated", "2026-12-05T23:30:00Z"), ("ny", "updated", "2026-12-06T01:00:00Z"),
                            ("late", "updated", "2026-12-05T14:00:00Z")):
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\n{key}: {when}\n---\n# {name}\nquokka\n")
    index = dreamdb.open(tiny_vault, engine=engine)

    def slugs(now: str, **window) -> set[str]:
        return {h.slug for h in index.recall("quokka", top=10, now=now, **window)}

    tokyo = "2026-12-06T08:30:00+09:00"  # (Tokyo's 6 December: 5 December 15:00 UTC to 6 December 15:00 UTC)
    assert slugs(tokyo, since="today") == {"d6", "tokyo", "ny"}
    assert slugs(tokyo, since="today", until="today") == {"d6", "tokyo", "ny"}
    assert slugs(tokyo, since="yesterday", until="yesterday") == {"d5", "late"}
    new_york = "2026-12-05T20:00:00-05:00"  # (New York's 5 December: 05:00 UTC to 6 December 05:00 UTC)
    assert slugs(new_york, since="today", until="today") == {"d5", "tokyo", "ny", "late"}
    assert slugs(new_york, since="tomorrow") == {"d6"}
    assert slugs("2026-12-05T20:00:00Z", since="today", until="today") == {"d5", "tokyo", "late"}  # (UTC: as before)
    assert slugs(new_york, since="2026-12-06") == {"d6", "ny"}  # (a date typed out: midnight UTC, as before)
    # the note on an empty result names the filter that left a match out, not the day that keeps it (120-A F8)
    write_doc(tiny_vault, "knowledge/small-hours.md", "---\nupdated: 2026-12-05T16:00:00Z\n---\n# wallaby\nwallaby\n")
    index.sync()  # (01:00 in Tokyo on 6 December: today there, and before that date's midnight UTC)
    assert index.recall("wallaby", now=tokyo, since="today", types="task") == []
    assert any("not within the filters (types):" in n for n in index.take_notes())
    index.close()


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_window_of_a_local_day_and_a_date_is_refused_only_when_no_note_can_be_in_it(tiny_vault, engine, capsys):
    """QA round 151-F F2: the window's bounds were checked as dates only (``today`` as its date's midnight UTC), so
    at 03:00 in Tokyo on 18 August ``--since today --until 2026-08-17`` was refused as empty (exit 2) while a note
    stamped 2026-08-17T23:00Z is in both (each bound alone listed it); so was ``--since 2026-08-18T00:00:00Z --until
    today`` at 22:00 in Los Angeles on 17 August, which a note of 2026-08-18T04:30Z is in. A window is refused only
    when neither a note dated by day nor one with a time of day can be in it, as recall and list select them."""
    import dreamdb
    from dreamdb.errors import UsageError

    for name, key, when in (("n08", "date", "2026-08-17T23:00:00Z"), ("n09", "date", "2026-08-18T04:30:00Z"),
                            ("d17", "date", "2026-08-17"), ("d18", "date", "2026-08-18")):
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\n{key}: {when}\n---\n# {name}\nzephyr\n")
    tokyo, los_angeles = "2026-08-18T03:00:00+09:00", "2026-08-17T22:00:00-07:00"
    index = dreamdb.open(tiny_vault, engine=engine)

    def slugs(now: str, **window) -> set[str]:
        return {h.slug for h in index.recall("zephyr", top=10, now=now, **window)}

    assert slugs(tokyo, since="today") == {"n08", "n09", "d18"}
    assert slugs(tokyo, until="2026-08-17") == {"n08", "d17"}
    assert slugs(tokyo, since="today", until="2026-08-17") == {"n08"}
    assert [d["doc_id"] for d in index.list_documents(since="today", until="2026-08-17", now=tokyo)] == [
        "knowledge/n08"]
    assert slugs(los_angeles, since="2026-08-18T00:00:00Z", until="today") == {"n09"}
    for now, since, until in ((tokyo, "2026-08-20", "2026-08-10"), (tokyo, "today", "yesterday"),
                              (tokyo, "tomorrow", "2026-08-17"), (tokyo, "today", "2026-08-17T14:59:59Z"),
                              (los_angeles, "2026-08-18T07:00:00Z", "today")):
        with pytest.raises(UsageError, match="is after until .*: the window is empty"):
            index.recall("zephyr", now=now, since=since, until=until)
    index.close()
    assert main(["recall", "--vault", str(tiny_vault), "--since", "today", "--until", "2026-08-17", "--now", tokyo,
                 "--plain", "zephyr"]) == 0
    assert capsys.readouterr().out.split("\t")[2] == "knowledge/n08"
    assert main(["list", "--vault", str(tiny_vault), "--since", "2026-08-18T00:00:00Z", "--until", "today", "--now",
                 los_angeles, "--json"]) == 0
    assert [d["doc_id"] for d in json.loads(capsys.readouterr().out)] == ["knowledge/n09"]
    assert main(["recall", "--vault", str(tiny_vault), "--since", "2026-08-20", "--until", "2026-08-10", "zephyr"]) == 2
    assert "the window is empty" in capsys.readouterr().err


def test_what_remember_dated_today_is_found_by_since_today_in_any_time_zone(example_vault):
    """QA round 114-B F3: ``remember`` dates an entry by the local date; ``--since today`` read UTC's date, so in a
    time zone whose date differs from UTC's (Tokyo before 09:00) the entry just written was left out. The zone is
    chosen so that its date differs from UTC's now: a day ahead in the afternoon (UTC), a day behind in the morning."""
    zone = "Etc/GMT-14" if datetime.now(timezone.utc).hour >= 12 else "Etc/GMT+12"  # (POSIX signs: UTC+14, UTC-12)
    env = {**os.environ, "TZ": zone}
    p = run_main("remember", "--vault", str(example_vault), "--json", "quokka sighting at the standup", env=env)
    assert p.returncode == 0, p.stderr
    entry_id = json.loads(p.stdout)["id"]
    p = run_main("recall", "--vault", str(example_vault), "--json", "--since", "today", "--until", "today", "quokka",
                 env=env)
    assert p.returncode == 0, p.stderr
    assert [h["doc_id"] for h in json.loads(p.stdout)["hits"]] == [f"changelog/{entry_id}"]
    p = run_main("recall", "--vault", str(example_vault), "--json", "--since", "tomorrow", "quokka", env=env)
    assert json.loads(p.stdout)["hits"] == []


def test_dreamdb_vault_used_over_the_current_folders_vault_is_said(tmp_path):
    """QA round 119-A F1: with DREAMDB_VAULT exported (as the README's block did), a command run in another project
    read that vault, and remember wrote into it, without a word. Said on stderr (and in recall's JSON notes)."""
    import shutil

    for name in ("one", "two"):
        shutil.copytree(EXAMPLES / "_dream_context", tmp_path / name / "_dream_context",
                        ignore=shutil.ignore_patterns(".dreamdb"))
    one, two = tmp_path / "one" / "_dream_context", tmp_path / "two" / "_dream_context"
    env = {**os.environ, "DREAMDB_VAULT": str(one)}
    said = (f"DREAMDB_VAULT names the vault {one}, used instead of the vault of the current folder, {two} (pass"
            " --vault, or unset DREAMDB_VAULT, to use that one)")

    def run(*args, cwd):
        return subprocess.run([sys.executable, "-m", "dreamdb", *args], capture_output=True, text=True, env=env,
                              cwd=cwd, timeout=120)

    p = run("recall", "--json", "sleep debt", cwd=two / "knowledge")
    assert p.returncode == 0 and said in json.loads(p.stdout)["notes"], p.stdout
    assert all(h["path"].startswith(str(one)) for h in json.loads(p.stdout)["hits"])
    p = run("remember", "which vault is this", cwd=two)
    assert p.returncode == 0 and f"note: {said}" in p.stderr, p.stderr
    p = run("sync", cwd=two)  # (QA round 120-A F7: sync and embed dedup said nothing)
    assert p.returncode == 0 and f"note: {said}" in p.stderr, p.stderr
    assert "which vault is this" in (one / "core" / "CHANGELOG.json").read_text(encoding="utf-8")
    for cwd, args in ((tmp_path / "one", ["recall", "sleep debt"]), (two, ["recall", "--vault", str(two), "sleep"]),
                      (tmp_path, ["recall", "sleep debt"])):  # (its own vault, one given, no vault here: nothing said)
        p = run(*args, cwd=cwd)
        assert p.returncode == 0 and "DREAMDB_VAULT names" not in p.stderr, (cwd, p.stderr)


def test_a_local_day_of_a_clock_given_with_its_offset_is_that_offsets_on_any_machine(tmp_path):
    """QA round 120-A F4 asked for the machine zone's midnights on a day its summer time begins (23:30 the day
    before was "today"): the current time's, which tests/test_timeparse.py checks (``machine_clock``). A clock given
    with ``--now`` and its offset is that offset's, whatever the machine's zone (QA round 122-A F2: under a London
    machine zone, ``--now …Z`` took London's 25-hour day). In a zone whose summer time starts on 5 December (day 339)
    at 01:00, +01:00 then +02:00, with --now at noon that day in +02:00 and in +01:00."""
    from tests.conftest import write_doc

    vault = tmp_path / "_dream_context"
    write_doc(vault, "knowledge/late.md", "---\ntitle: late\ndate: 2026-12-04T22:30:00Z\n---\nyankee\n")  # 00:30 +02
    write_doc(vault, "knowledge/early.md", "---\ntitle: early\ndate: 2026-12-04T23:30:00Z\n---\nyankee\n")
    write_doc(vault, "knowledge/before.md", "---\ntitle: before\ndate: 2026-12-04T21:30:00Z\n---\nyankee\n")

    def slugs(now, *window, zone="XST-1XDT-2,J339/1,J360"):
        p = run_main("recall", "--vault", str(vault), "--json", "--now", now, *window, "yankee",
                     env={**os.environ, "TZ": zone})
        assert p.returncode == 0, p.stderr
        return sorted(h["slug"] for h in json.loads(p.stdout)["hits"])

    for zone in ("XST-1XDT-2,J339/1,J360", "UTC0"):  # (the same on every machine)
        assert slugs("2026-12-05T12:00:00+02:00", "--since", "today", zone=zone) == ["early", "late"]
        assert slugs("2026-12-05T12:00:00+02:00", "--until", "yesterday", zone=zone) == ["before"]
        assert slugs("2026-12-05T12:00:00+01:00", "--since", "today", zone=zone) == ["early"]
