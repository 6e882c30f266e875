"""``dreamdb sql`` as users run it: row limits, JSON/CSV values, one statement, refusals (real SQLite, real vaults)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from dreamdb.cli import main
from dreamdb.errors import UsageError
from dreamdb.sqlquery import DEFAULT_MAX_ROWS, json_rows, json_value, single_statement, unique_names
from tests.conftest import USE_UP_FILE_HANDLES, held_by_another_process, write_doc

COUNT_TO = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) SELECT x FROM c"


@pytest.fixture()
def vault(tiny_vault):
    write_doc(tiny_vault, "knowledge/alpha.md", "---\nname: Alpha note\n---\nalpha body text\n")
    write_doc(tiny_vault, "knowledge/beta.md", "---\nname: Beta note\n---\nbeta body text\n")
    return tiny_vault


def sql(capsys, vault, *args):
    """Run ``dreamdb sql --vault VAULT ARGS…`` in-process; return (exit code, stdout, stderr)."""
    code = main(["sql", "--vault", str(vault), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def run_main(*args):
    return subprocess.run([sys.executable, "-m", "dreamdb", *args], capture_output=True, text=True, timeout=120)


# ---------------------------------------------------------------- --max-rows


def test_default_limit_is_said_on_stderr_and_max_rows_0_gives_all(vault, capsys):
    assert DEFAULT_MAX_ROWS == 100_000
    code, out, err = sql(capsys, vault, "--format", "csv", COUNT_TO.format(n=100_001))
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "x" and len(lines) == 1 + 100_000 and lines[-1] == "100000"
    assert err == "note: showing the first 100,000 rows; use --max-rows 0 for all\n"

    code, out, err = sql(capsys, vault, "--format", "csv", "--max-rows", "0", COUNT_TO.format(n=100_001))
    lines = out.splitlines()
    assert code == 0 and len(lines) == 1 + 100_001 and lines[-1] == "100001" and err == ""


def test_exactly_max_rows_is_not_truncated(vault, capsys):
    code, out, err = sql(capsys, vault, "--json", "--max-rows", "3", COUNT_TO.format(n=3))
    assert code == 0 and err == ""
    assert json.loads(out) == [{"x": 1}, {"x": 2}, {"x": 3}]  # complete: the list shape of before


def test_truncated_json_says_so_in_the_json(vault, capsys):
    code, out, err = sql(capsys, vault, "--format", "json", "--max-rows", "3", COUNT_TO.format(n=10))
    assert code == 0
    assert json.loads(out) == {"columns": ["x"], "rows": [{"x": 1}, {"x": 2}, {"x": 3}], "truncated": True, "max_rows": 3}
    assert err == "note: showing the first 3 rows; use --max-rows 0 for all\n"


def test_truncated_table_and_csv(vault, capsys):
    code, out, err = sql(capsys, vault, "--max-rows", "2", COUNT_TO.format(n=10))
    assert code == 0 and out.split() == ["x", "---", "1", "2"]
    assert "showing the first 2 rows" in err
    code, out, err = sql(capsys, vault, "--max-rows", "2", "--format", "csv", COUNT_TO.format(n=10))
    assert out.splitlines() == ["x", "1", "2"] and "use --max-rows 0 for all" in err


def test_negative_max_rows_is_a_usage_error(vault):
    p = run_main("sql", "--vault", str(vault), "--max-rows", "-1", "SELECT 1")
    assert p.returncode == 2 and "--max-rows" in p.stderr and p.stdout == ""


def test_help_documents_limit_json_shape_hex_and_double_dash():
    p = run_main("sql", "--help")
    text = " ".join(p.stdout.split())
    assert p.returncode == 0
    for phrase in ("--max-rows N", "100,000 by default", "--max-rows 0", '"truncated": true', "a, a_2, a_3",
                   "uppercase hex string", "put -- before it", 'dreamdb sql --format csv -- "$(cat query.sql)"'):
        assert phrase in text, phrase


def test_help_says_a_row_is_read_whole_before_any_limit_applies():
    """QA round 151-G F1: the help bounded the memory of a result at about 1.2 GB, and the code said no row past
    either limit was fetched, while one row is read whole before it is counted (a row of three 1 GB BLOBs peaked at
    5.9 GB), and so is the row after the last --max-rows keeps (2 GB for a 1 GB second row after --max-rows 1): the
    driver cannot tell of a further row without reading it, nor bound a value's length. The help says so."""
    text = " ".join(run_main("sql", "--help").stdout.split())
    for phrase in ("One row is read whole before it is counted", "the row after the last one --max-rows keeps",
                   "takes that memory whatever the limits"):
        assert phrase in text, (phrase, text)


def test_help_says_where_a_large_sort_spills_and_what_bounds_it():
    """QA round 151-G F5: a sort of a huge read-only query wrote gigabytes of temporary files to /var/tmp, bounded by
    --timeout alone (SQLite caps no temporary file), and neither the help nor the docs said so."""
    text = " ".join(run_main("sql", "--help").stdout.split())
    for phrase in ("spills to SQLite's temporary files", "SQLITE_TMPDIR, else TMPDIR, else /var/tmp",
                   "SQLite has no cap on their size, so --timeout bounds them"):
        assert phrase in text, (phrase, text)


# ---------------------------------------------------------------- JSON and CSV values


def test_json_values_blobs_numbers_null_and_duplicate_columns(vault, capsys):
    code, out, err = sql(capsys, vault, "--json",
                         "SELECT x'00ff10' AS b, 1.5 AS f, 42 AS i, 9223372036854775807 AS big, NULL AS n, 'tëxt' AS t,"
                         " 1e999 AS inf, -1e999 AS ninf, zeroblob(0) AS empty")
    assert code == 0 and err == ""
    assert json.loads(out) == [{"b": "00FF10", "f": 1.5, "i": 42, "big": 9223372036854775807, "n": None, "t": "tëxt",
                                "inf": "Infinity", "ninf": "-Infinity", "empty": ""}]
    assert '"f": 1.5' in out and '"i": 42' in out  # numbers, not strings

    code, out, _ = sql(capsys, vault, "--json", "SELECT 1 AS a, 2 AS a, 3 AS a")
    assert json.loads(out) == [{"a": 1, "a_2": 2, "a_3": 3}]
    code, out, _ = sql(capsys, vault, "--json", "SELECT 1 AS a, 2 AS a, 3 AS a_2")
    assert json.loads(out) == [{"a": 1, "a_3": 2, "a_2": 3}]  # a real a_2 column keeps its name
    code, out, _ = sql(capsys, vault, "--json", "--max-rows", "1", "SELECT 1 AS a, 2 AS a UNION ALL SELECT 3, 4")
    assert json.loads(out) == {"columns": ["a", "a_2"], "rows": [{"a": 1, "a_2": 2}], "truncated": True, "max_rows": 1}


def test_json_matches_sqlite_hex(vault, capsys):
    code, out, _ = sql(capsys, vault, "--json", "SELECT randomblob(16) AS b")
    b = json.loads(out)[0]["b"]
    code, out, _ = sql(capsys, vault, "--json", f"SELECT hex(x'{b}') AS h")
    assert json.loads(out) == [{"h": b}]


def test_csv_blobs_as_hex_and_table_blobs_as_sizes(vault, capsys):
    code, out, _ = sql(capsys, vault, "--format", "csv", "SELECT x'00ff' AS b, 'a,b' AS s, NULL AS n")
    assert list(csv.reader(io.StringIO(out))) == [["b", "s", "n"], ["00FF", "a,b", ""]]
    code, out, _ = sql(capsys, vault, "SELECT x'00ff' AS b")
    assert out.split() == ["b", "---------", "<2", "bytes>"]


def test_helpers():
    assert unique_names(["a", "b", "a", "a", "b"]) == ["a", "b", "a_2", "a_3", "b_2"]
    assert unique_names(["a", "a", "a_2"]) == ["a", "a_3", "a_2"]
    assert json_value(b"\x00\xff") == "00FF" and json_value(memoryview(b"\x01")) == "01"
    assert json_value(2.5) == 2.5 and json_value(7) == 7 and json_value(None) is None
    assert json_value(float("nan")) is None and json_value(float("-inf")) == "-Infinity"
    assert json_rows(["a", "a"], [(1, b"\x02")]) == [{"a": 1, "a_2": "02"}]


# ---------------------------------------------------------------- one statement


@pytest.mark.parametrize("query, expected", [
    ("SELECT 1 AS one; -- trailing comment", "SELECT 1 AS one;"),
    ("SELECT 1 AS one -- no semicolon", "SELECT 1 AS one -- no semicolon"),
    ("  SELECT 1 AS one;;  /* block */ \n\n", "SELECT 1 AS one;"),
    ("SELECT 1 AS one; /* unterminated", "SELECT 1 AS one;"),
    ("SELECT 'a;b' AS s; -- the ; in the string is not an end", "SELECT 'a;b' AS s;"),
    ("-- leading\nSELECT 1 AS one;\n-- and trailing\n", "-- leading\nSELECT 1 AS one;"),
    # empty statements before it are left out as those after it are (QA round 145-D: ";SELECT 1" was refused)
    (";SELECT 1 AS one", "SELECT 1 AS one"),
    (" ;; ; SELECT 1 AS one;;;", "SELECT 1 AS one;"),
    ("/* a; */ ; -- b;\nSELECT 1 AS one", "-- b;\nSELECT 1 AS one"),
    ("-- a;b\nSELECT 1 AS one", "-- a;b\nSELECT 1 AS one"),
])
def test_single_statement_keeps_one_statement(query, expected):
    assert single_statement(query) == expected


@pytest.mark.parametrize("query", ["SELECT 1; SELECT 2", "SELECT 1; -- c\nSELECT 2", "SELECT 1; /* x */ DELETE FROM documents",
                                   "SELECT 1;;SELECT 2", ";SELECT 1; SELECT 2"])
def test_single_statement_refuses_a_second_one(query):
    with pytest.raises(UsageError, match="exactly one SQL statement"):
        single_statement(query)


@pytest.mark.parametrize("query", ["", "   ", "-- only a comment", "/* only */ ;", ";", " ; ;-- x"])
def test_single_statement_refuses_nothing(query):
    with pytest.raises(UsageError, match="empty"):
        single_statement(query)


def test_trailing_comments_accepted_second_statement_refused(vault, capsys):
    for q in ("SELECT COUNT(*) AS n FROM documents; -- how many", "SELECT COUNT(*) AS n FROM documents -- how many",
              "SELECT COUNT(*) AS n FROM documents;\n/* done */\n"):
        code, out, err = sql(capsys, vault, "--json", q)
        assert code == 0 and json.loads(out) == [{"n": 2}], (q, err)
    for q in (";SELECT COUNT(*) AS n FROM documents", "; ;SELECT COUNT(*) AS n FROM documents;;"):  # (QA round 145-D)
        code, out, err = sql(capsys, vault, "--json", q)
        assert code == 0 and json.loads(out) == [{"n": 2}], (q, err)
    code, out, err = sql(capsys, vault, "SELECT 1; SELECT 2")
    assert code == 2 and out == "" and err.startswith("Error: Give exactly one SQL statement.")
    code, out, err = sql(capsys, vault, "SELECT 1; -- first\nSELECT 2")
    assert code == 2 and "exactly one" in err


def test_query_starting_with_dash_after_double_dash(vault):
    p = run_main("sql", "--vault", str(vault), "--json", "--", "-- titles first\nSELECT title FROM documents ORDER BY title")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == [{"title": "Alpha note"}, {"title": "Beta note"}]


@pytest.mark.parametrize("query, message", [
    ("DELETE FROM documents; -- cleanup", "Write statements are refused"),
    ("VACUUM; -- tidy", "VACUUM is refused"),
    ("ATTACH 'elsewhere.db' AS x; -- c", "ATTACH is refused"),
    ("-- leading comment\nPRAGMA journal_mode=DELETE", "PRAGMA journal_mode = DELETE is refused"),
    # QA round 7: accepted (without effect on the read-only connection) although the help says refused
    ("PRAGMA writable_schema=ON", "PRAGMA writable_schema = ON is refused"),
    ("PRAGMA query_only=OFF", "PRAGMA query_only = OFF is refused"),
    ("PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA wal_checkpoint = TRUNCATE is refused"),
    ("PRAGMA wal_checkpoint", "PRAGMA wal_checkpoint is refused"),
    ("SELECT load_extension('x'); -- c", "Loading extensions is refused"),
    ("CREATE TABLE t(x); -- c", "Write statements are refused"),
])
def test_refusals_hold_with_comments(vault, tmp_path, query, message):
    p = subprocess.run([sys.executable, "-m", "dreamdb", "sql", "--vault", str(vault), "--", query],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 2 and p.stderr.startswith(f"Error: {message}"), p.stderr
    assert not (tmp_path / "elsewhere.db").exists()
    p = run_main("sql", "--vault", str(vault), "--json", "SELECT COUNT(*) AS n FROM documents")
    assert json.loads(p.stdout) == [{"n": 2}]  # nothing was changed


@pytest.mark.parametrize("query, error", [
    ("SELECT is_readonly FROM documents", "no such column: is_readonly"),
    ("SELECT * FROM readonly_docs", "no such table: readonly_docs"),
    ("SELECT query_only FROM meta", "no such column: query_only"),
    ('SELECT * FROM "read-only notes"', "no such table: read-only notes"),
    ('SELECT * FROM "not authorized"', "no such table: not authorized"),
    ("SELECT * FROM locked_docs", "no such table: locked_docs"),
    ("PRAGMA foreign_key_check(unlocked)", "no such table: unlocked"),
])
def test_an_error_quoting_a_name_is_told_by_its_code_not_the_names_words(vault, capsys, query, error):
    """QA round 145-D F2: a read whose error quoted a name holding "readonly", "read-only", "query_only" or "locked" was
    told "Write statements are refused: the index is opened read-only." (or "This PRAGMA would change the index"), as
    the words were looked for in SQLite's message; the error's result code tells a refusal now."""
    from dreamdb.store import connect as db

    code, out, err = sql(capsys, vault, query)
    assert code == 2 and err.startswith(f"Error: SQL error: {error}\nHint: "), err
    assert "refused" not in err and out == "", err
    conn = db.connect(vault / ".dreamdb" / "index.db")
    try:
        with pytest.raises(db.DatabaseError) as raised:
            conn.execute("SELECT * FROM locked_docs")
        assert not db.is_lock_error(raised.value) and not db.is_damage(raised.value)
    finally:
        conn.close()
    # refusals stay refusals, a PRAGMA's its own
    assert sql(capsys, vault, "DELETE FROM documents")[2].startswith("Error: Write statements are refused")
    assert sql(capsys, vault, "PRAGMA cache_size = 5")[2].startswith("Error: PRAGMA cache_size = 5 is refused")


@pytest.mark.parametrize("query", ["PRAGMA table_info(documents)", "PRAGMA quick_check(5)", "PRAGMA page_count",
                                   "SELECT name FROM pragma_table_info('documents')", "PRAGMA index_list(postings)"])
def test_reading_pragmas_still_work(vault, query):
    p = run_main("sql", "--vault", str(vault), "--json", query)
    assert p.returncode == 0 and json.loads(p.stdout), p.stderr


def test_json_and_csv_together_are_refused(vault):
    p = run_main("sql", "--vault", str(vault), "--json", "--format", "csv", "SELECT 1")
    assert p.returncode == 2 and "--json and --format csv" in p.stderr
    assert json.loads(p.stdout)["error"]["exit_code"] == 2


@pytest.mark.parametrize("args, code", [
    (["recall", "--json", "--vault", "/nonexistent/vault", "x"], 3),   # the click-free fast path
    (["recall", "--json", "--top", "99", "x"], 2),                      # a bad option value (click)
    (["status", "--json", "--bogus"], 2),                               # an unknown option (click)
    (["sql", "--format", "json", "SELECT * FROM nope"], 2),             # an SQL error
])
def test_errors_of_json_commands_are_json_on_stdout(vault, args, code):
    """A program reading a --json command's stdout gets JSON on failure too; people keep stderr's lines."""
    extra = [] if "--vault" in args or args[0] == "status" and "--bogus" in args else ["--vault", str(vault)]
    p = run_main(*args[:1], *extra, *args[1:])
    assert p.returncode == code and "Error: " in p.stderr
    err = json.loads(p.stdout)["error"]
    assert err["exit_code"] == code and err["message"] in p.stderr and "Traceback" not in p.stderr
    plain = run_main(*[a for a in args if a != "--json"], *extra) if "--json" in args else None
    if plain is not None:
        assert plain.stdout == ""  # without --json nothing goes to stdout on an error


@pytest.mark.parametrize("query", ["SELECT json('x')", "SELECT * FROM json_each('[1,')", "SELECT json_array_length('[')"])
def test_malformed_json_in_a_query_is_an_sql_error_not_index_damage(vault, query):
    """QA round 8: "malformed JSON" matched the damage test by its message; the index was rebuilt
    (on a real vault that throws away every stored embedding)."""
    from dreamdb.store import connect as db

    index_file = vault / ".dreamdb" / "index.db"
    run_main("sql", "--vault", str(vault), "SELECT 1")
    conn = db.connect(index_file)
    conn.execute("INSERT INTO meta (key, value) VALUES ('qa_marker', 'x')")  # a rebuild would drop it
    conn.close()
    for extra in ([], ["--no-sync"]):
        p = run_main("sql", "--vault", str(vault), *extra, query)
        assert p.returncode == 2 and "malformed JSON" in p.stderr and "damaged" not in p.stderr, p.stderr
    check = db.connect(index_file)
    assert check.execute("SELECT COUNT(*) FROM meta WHERE key = 'qa_marker'").fetchone()[0] == 1
    check.close()


def test_an_unknown_table_names_a_query_that_lists_the_tables(vault, capsys):
    """QA round 67 L3: the hint named docs/schema.md only, which a wheel does not hold; it now gives the query that
    lists the tables and views, and that query works."""
    import re

    code, out, err = sql(capsys, vault, "SELECT * FROM no_such_table")
    assert code == 2 and "docs/schema.md in the source repository" in err
    listed = re.search(r'dreamdb sql (?:--vault \S+ )?"([^"]+)"', err).group(1)  # (the vault named: QA round 156-G F5)
    code, out, _ = sql(capsys, vault, listed, "--format", "csv")
    names = {row["name"]: row["type"] for row in csv.DictReader(io.StringIO(out))}
    assert code == 0 and names["documents"] == "table" and names["postings"] == "table"


def test_the_schema_pages_columns_exist_and_its_example_queries_run(tmp_path):
    """QA round 69 E-M4: docs/schema.md left out five documents columns that two of the indexes it documents are
    built on; every column it names for a table is now one the index has, every column of documents is named,
    and each example query outside the vector section runs on a real index."""
    import re
    import shutil

    import dreamdb
    from tests.conftest import ROOT

    page = (ROOT / "docs" / "schema.md").read_text(encoding="utf-8")
    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    with dreamdb.open(vault) as index:
        index.sync()
        conn = index.conn
        for table in ("files", "documents", "document_tags", "postings"):
            row = next(line for line in page.splitlines() if line.startswith(f"| `{table}` |"))
            named = {m for m in re.findall(r"`([a-z_0-9]+)`", row.split("|")[3]) if not m.startswith(("len_", "tf_"))}
            have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            values = {"unreadable", "recall", "task7"}  # (values the row quotes: a sha256 marker, a tag, a term)
            assert named - have <= values, (table, named - have)
            if table == "documents":
                assert have - named - {c for c in have if c.startswith("len_")} == set(), have - named
        examples = page.split("## Example queries", 1)[1].split("```sql", 1)[1].split("```", 1)[0]
        statements = [s.strip() for s in examples.split(";") if s.strip()]
        assert len(statements) >= 8
        for statement in statements:
            conn.execute(statement).fetchall()  # (no error: the names and the SQL are right)


def test_a_table_of_the_index_gone_missing_is_damage_rebuilt_a_mistyped_one_an_error(vault, capsys):
    """QA round 88 B4: with the index's documents table dropped, `dreamdb sql "SELECT … FROM documents"` said
    "SQL error: no such table: documents" (exit 2) with a hint naming that very table, and nothing rebuilt it (a
    no-change sync never reads the table). A table a migration the index records creates is dreamdb's: its absence is
    damage, rebuilt from the vault; a name no migration creates stays the user's SQL error."""
    import sqlite3

    assert sql(capsys, vault, "--format", "csv", "SELECT COUNT(*) AS n FROM documents")[1].split() == ["n", "2"]
    with sqlite3.connect(vault / ".dreamdb" / "index.db") as c:
        c.execute("DROP TABLE documents")
    code, out, err = sql(capsys, vault, "--format", "csv", "SELECT COUNT(*) AS n FROM documents")
    assert code == 0 and out.split() == ["n", "2"] and "rebuilt from the vault" in err, (code, out, err)
    code, out, err = sql(capsys, vault, "SELECT COUNT(*) FROM documentz")
    assert code == 2 and "no such table: documentz" in err and "rebuilt" not in err, err
    # (a table of the index's own name in another schema is no damage of the index: QA round 89 F1 rebuilt a sound
    # index, its vectors lost, for temp.documents)
    marker = (vault / ".dreamdb" / "index.db").stat().st_ino
    code, out, err = sql(capsys, vault, "SELECT COUNT(*) FROM temp.documents")
    assert code == 2 and "no such table: temp.documents" in err and "rebuilt" not in err, err
    assert (vault / ".dreamdb" / "index.db").stat().st_ino == marker
    with sqlite3.connect(vault / ".dreamdb" / "index.db") as c:
        c.execute("DROP TABLE documents")
    code, out, err = sql(capsys, vault, "--no-sync", "SELECT COUNT(*) FROM documents")  # (said, not rebuilt)
    assert code == 4 and "its table documents is missing" in err and "sync --check" in err, (code, err)
    with sqlite3.connect(vault / ".dreamdb" / "index.db") as c:  # (the migration runner's own: QA round 89 F6)
        c.execute("DROP TABLE schema_migrations")
    code, out, err = sql(capsys, vault, "--no-sync", "SELECT COUNT(*) FROM schema_migrations")
    assert code == 4 and "its table schema_migrations is missing" in err, (code, err)


@pytest.mark.parametrize("name", ["words", "embedded_words", "lang", "ctime_ns"])
def test_a_column_a_migration_adds_named_as_a_table_is_an_sql_error_not_damage(vault, capsys, name):
    """QA round 145-D F1: ``SELECT * FROM words`` (a column migration 010 adds, not a table) was taken for a table of
    the index's own gone missing: the index was rebuilt from the vault (771 documents, their chunks redone), then the
    query failed all the same, exit 4. Only the tables and views the migrations create are the index's own."""
    index = vault / ".dreamdb" / "index.db"
    assert sql(capsys, vault, "SELECT 1")[0] == 0
    marker = index.stat().st_ino
    for extra in ([], ["--no-sync"]):
        code, out, err = sql(capsys, vault, *extra, f"SELECT * FROM {name}")
        assert code == 2 and err.startswith(f"Error: SQL error: no such table: {name}\n"), (extra, code, err)
        assert "rebuilt" not in err and "damaged" not in err and out == "", err
    assert index.stat().st_ino == marker  # (the same file: no rebuild replaced it)


def test_a_query_that_is_not_utf8_is_named(vault, capsys):
    """QA round 97-B F7: bytes that are not UTF-8 in the query said "SQL error: 'utf-8' codec can't encode character
    '\\udcff' … surrogates not allowed", with no hint."""
    code, out, err = sql(capsys, vault, "SELECT 1\udcff")  # (how Python hands such bytes over)
    assert code == 2 and out == ""
    assert err == ("Error: The query is not valid UTF-8 (it holds bytes that are not text).\n"
                   "Hint: Retype it in UTF-8 (check the terminal's encoding, or the file's: iconv converts it).\n"), err


@pytest.mark.parametrize("kind", ["empty", "foreign", "application id 0", "golang-migrate", "other"])
def test_no_sync_on_a_file_that_is_no_dreamdb_index_says_so(vault, capsys, kind):
    """QA round 115-C F4: ``sql --no-sync`` on a 0-byte index.db (or another application's database) said "SQL error: no
    such table: documents", exit 2, with a hint listing that very table."""
    import sqlite3

    index = vault / ".dreamdb" / "index.db"
    index.parent.mkdir(exist_ok=True)
    if kind == "empty":
        index.write_bytes(b"")
    elif kind in ("foreign", "application id 0", "golang-migrate"):  # (QA round 116-A F7, 117-A F5: "no such table")
        other = sqlite3.connect(index)
        other.execute(f"PRAGMA application_id = {42 if kind == 'foreign' else 0}")
        if kind == "golang-migrate":  # (a table of dreamdb's name, another tool's columns)
            other.execute("CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean)")
        other.execute("CREATE TABLE notes (x)")
        other.commit()
        other.close()
    else:
        index.write_bytes(b"not a database\n" * 10)
    before = index.read_bytes()
    code, out, err = sql(capsys, vault, "--no-sync", "SELECT count(*) FROM documents")
    said = {"empty": "is an empty file: no index has been built there yet",
            "foreign": "is another application's SQLite database.",
            "application id 0": "is a SQLite database dreamdb did not make (or cannot read).",
            "golang-migrate": "is a SQLite database dreamdb did not make (or cannot read).",
            "other": "is not a SQLite database"}[kind]
    assert code == 4 and said in err and "Run without --no-sync" in err and out == "", err
    assert index.read_bytes() == before


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_no_sync_on_a_folder_or_pipe_in_the_index_s_place_says_what_a_sync_says(vault, capsys, kind):
    """QA round 151-G F4: ``sql --no-sync`` with a folder or FIFO at .dreamdb/index.db said "No index yet … Run without
    --no-sync first", whose advice met "The index path … is a folder, not a file. Hint: Remove that folder". It says
    what the sync would, and gives its hint."""
    index = vault / ".dreamdb" / "index.db"
    index.parent.mkdir(exist_ok=True)
    if kind == "folder":
        index.mkdir()
    else:
        os.mkfifo(index)
    code, out, err = sql(capsys, vault, "--no-sync", "SELECT 1")
    synced, _out, sync_err = sql(capsys, vault, "SELECT 1")
    said = {"folder": f"The index path {index} is a folder, not a file.",
            "fifo": f"The index path {index} is not a regular file (a device, pipe or socket)"}[kind]
    assert code == synced == 4 and said in err and "No index yet" not in err and out == "", err
    assert err == sync_err and "Run without --no-sync" not in err, (err, sync_err)


@pytest.mark.parametrize("relative", [False, True])
def test_no_sync_on_a_link_into_a_missing_folder_says_what_a_sync_says(vault, capsys, tmp_path, relative):
    """QA round 152-A F7: ``sql --no-sync`` with .dreamdb/index.db a link into a folder that does not exist said "No
    index yet … Run without --no-sync (or dreamdb sync) first", and the sync then said "Cannot create the index at
    …/index.db: No such file or directory", naming the link. Both name the link's target and its missing folder, and
    say to create it or remove the link; once the folder is made, the sync makes the index there."""
    index = vault / ".dreamdb" / "index.db"
    index.parent.mkdir(exist_ok=True)
    target = tmp_path / "gone" / "deeper" / "x.db"
    link = os.path.relpath(target, index.parent) if relative else str(target)
    index.symlink_to(link)
    code, out, err = sql(capsys, vault, "--no-sync", "SELECT 1")
    synced, _out, sync_err = sql(capsys, vault, "SELECT 1")
    said = (f"Cannot create the index at {index}: it is a link to {link}, and the folder it leads into,"
            f" {target.parent}, does not exist.")
    assert code == synced == 4 and said in err.replace("\n", " ") and out == "", err
    assert f"Hint: Create that folder (mkdir -p {target.parent}), or remove the link {index}" in err, err
    assert err == sync_err and "No index yet" not in err and "No such file or directory" not in err, (err, sync_err)
    target.parent.mkdir(parents=True)  # (the fix the hint gives)
    assert sql(capsys, vault, "SELECT count(*) AS n FROM documents")[0] == 0 and target.is_file()


@pytest.mark.parametrize("query, hint", [
    ("SELECT CAST(X'41FF42' AS TEXT)", "select hex(value) or CAST(value AS BLOB) instead"),
    ("SELECT rowid FROM vec_embeddings WHERE embedding MATCH (SELECT embedding FROM vec_embeddings WHERE rowid = -1) "
     "AND k = 3", "no such document or chunk, or no vector for it yet"),
])
def test_errors_a_user_meets_reading_the_index_get_their_own_hint(vault, capsys, query, hint):
    """QA round 115-C: text that is not UTF-8, and a KNN query of a rowid without a vector, got the generic hint."""
    from dreamdb.store.connect import CAN_LOAD_EXTENSIONS

    if "vec_embeddings" in query and not CAN_LOAD_EXTENSIONS:
        pytest.skip("the SQLite driver cannot load sqlite-vec")
    assert sql(capsys, vault, "SELECT 1")[0] == 0
    code, out, err = sql(capsys, vault, "--no-sync", query)
    assert code == 2 and "Hint: " in err and hint in err, err


def test_rows_past_max_rows_are_never_fetched(vault, capsys):
    """QA round 116-A F2: rows were fetched 1,000 at a time whatever --max-rows said (1.5 GB for --max-rows 1 of rows of
    1 MB). A row past the one that tells the result was cut (and the one the driver steps to ahead of it) would raise
    an error here: it is never computed."""
    query = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5) "
             "SELECT CASE WHEN x < 4 THEN x ELSE abs(-9223372036854775808) END AS v FROM c")
    code, out, err = sql(capsys, vault, "--json", "--max-rows", "1", query)
    assert code == 0 and json.loads(out)["rows"] == [{"v": 1}] and "showing the first 1 row" in err, err
    code, out, err = sql(capsys, vault, "--json", "--max-rows", "3", query)
    assert code == 2 and "integer overflow" in err  # (the third row is computed when it is wanted)


@pytest.mark.parametrize("limit", [6, 10])
def test_the_watchdog_at_a_low_open_file_limit_prints_no_traceback(vault, limit):
    """QA round 116-A F4: at ``ulimit -n 10`` the watchdog thread's import of ``select`` failed after its pipes took the
    last descriptors: two tracebacks on stderr, and the query ran without it; 117-A F1: at 6, its import in the main
    thread ended in an internal error (exit 70)."""
    import resource

    assert run_main("sync", "--vault", str(vault)).returncode == 0
    p = subprocess.run([sys.executable, "-m", "dreamdb", "sql", "--vault", str(vault), "--no-sync", "SELECT 1 AS one"],
                       capture_output=True, text=True, timeout=120,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit)))
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr and "Exception in thread" not in p.stderr, p.stderr
    assert (p.returncode, p.stdout.split()[-1:]) == (0, ["1"]) or "may open no more files" in p.stderr, (p.stdout, p.stderr)


_SQL_AT_THE_FILE_LIMIT = """
import os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
from dreamdb.cli import main
vault, free = sys.argv[1], int(sys.argv[2])
assert main(["sql", "--vault", vault, "SELECT 1"]) == 0  # (the index made, the modules loaded)
# USE_UP_FILE_HANDLES
code = main(["sql", "--vault", vault, "--no-sync", "SELECT 1"])
for fd in fds:
    os.close(fd)
print("exit", code)
""".replace("# USE_UP_FILE_HANDLES\n", USE_UP_FILE_HANDLES)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs RLIMIT_NOFILE (POSIX)")
@pytest.mark.parametrize("free", [2, 4, 6])
def test_sql_at_the_open_file_limit_exits_4_as_the_other_commands(vault, free):
    """QA round 153-F F5: ``sql`` at the open-file limit exited 1 ("This process may open no more files (Too many open
    files: …/migrations)", from the check of the index's migrations, or of the watchdog's pipe), where every other
    command says exit 4 of an index it cannot open for the limit: IndexUnavailable, naming the index and the limit."""
    from dreamdb.errors import OPEN_FILES_HINT

    p = subprocess.run([sys.executable, "-c", _SQL_AT_THE_FILE_LIMIT, str(vault), str(free)], capture_output=True,
                       text=True, timeout=120)
    assert p.stdout.split()[-2:] == ["exit", "4"] and "Traceback" not in p.stderr, (p.stdout, p.stderr)
    assert "Error: Cannot query the index at " in p.stderr and "this process may open no more files (Too many open" \
        " files); the index was left as it is." in p.stderr and f"Hint: {OPEN_FILES_HINT}" in p.stderr, p.stderr


def test_no_sync_on_an_index_of_a_newer_format_says_newer(vault, capsys):
    """QA round 117-A F8: ``sql --no-sync`` on an index a newer dreamdb wrote said "written by an older dreamdb" and told
    the user to "upgrade it" by a sync (which would index it again in this version's older format)."""
    import sqlite3

    from dreamdb.store.sync import INDEX_FORMAT

    assert sql(capsys, vault, "SELECT 1")[0] == 0
    a, b, c = INDEX_FORMAT.split(".")
    newer = f"{a}.{int(b) + 1}.{c}"
    with sqlite3.connect(vault / ".dreamdb" / "index.db") as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'analyzer_version'", (newer,))
    code, out, err = sql(capsys, vault, "--no-sync", "SELECT 1")
    assert code == 0 and "written by a newer dreamdb (schema version" in err and newer in err, err
    assert "index it again in this version's format" in err and "upgrade it" not in err
    # (the same schema: only the terms differ; QA round 132-E F5: "its tables may not be those docs/schema.md
    # describes")
    assert "its terms (postings) are another version's analysis" in err and "its tables" not in err


def test_the_note_of_an_index_read_as_it_is_comes_only_with_an_answer(vault, capsys):
    """QA round 143-E F4: under another process's write lock, ``sql`` said "answered from the index as it is" on
    stderr before its query ran, and then failed (a damaged index it could not rebuild, exit 5): the note claimed an
    answer never given. It is said with the rows; an error comes alone. A rebuild after it (the index synced then)
    drops it: the rows are no longer the index as it was."""
    import dreamdb
    from dreamdb.store import connect as db

    assert sql(capsys, vault, "SELECT 1")[0] == 0  # (built)
    write_doc(vault, "knowledge/gamma.md", "---\nname: Gamma note\n---\ngamma body text\n")  # (a sync has work)
    holder = db.connect(vault / ".dreamdb" / "index.db")
    holder.execute("BEGIN IMMEDIATE")  # another process's long sync or refresh
    try:
        code, out, err = sql(capsys, vault, "--json", "SELECT nosuch FROM documents")
        assert code == 2 and err.startswith("Error: SQL error: no such column: nosuch"), err  # (the error alone)
        assert "answered from the index as it is" not in err and "note:" not in err, err
        code, out, err = sql(capsys, vault, "--json", "SELECT COUNT(*) AS n FROM documents")
        assert code == 0 and json.loads(out)["rows"] == [{"n": 2}], out
        assert err.startswith("note: another process holds the index") and "answered from the index as it is" in err
        with dreamdb.open(vault) as index:
            index.sync_for_read()
            assert index.read_as_is and "answered from the index as it is" in index.read_as_is
            holder.execute("ROLLBACK")
            index.rebuild("a test")  # (as sql does when its query finds the index damaged)
            assert index.read_as_is is None
            assert not any("answered from the index as it is" in n for n in index.take_notes())
    finally:
        holder.close()


def test_the_sync_before_a_query_waits_for_a_lock_no_longer_than_the_timeout(vault, capsys):
    """QA round 143-G F1: ``sql --timeout 1`` on an index another process held exclusively waited 10 s (the sync before
    the query waited the index's own lock timeout), where ``--timeout`` says the lock is waited for as long."""
    import time

    assert sql(capsys, vault, "SELECT 1")[0] == 0
    with held_by_another_process(vault / ".dreamdb" / "index.db", exclusive=True):
        started = time.monotonic()
        code, _out, err = sql(capsys, vault, "--timeout", "1", "SELECT COUNT(*) FROM documents")
        waited = time.monotonic() - started
    assert code == 5 and "locked" in err, err
    assert waited < 6, waited  # (1 s asked; the index's own lock timeout is 10 s)


def test_ctrl_c_while_waiting_for_a_locked_index_acts_at_once(vault, capsys):
    """QA round 145-D F5: Ctrl-C while ``sql`` (with or without --no-sync) or ``recall`` waited for an index another
    program held exclusively took effect only after the whole busy wait (rc 130 after 10.2 s): SQLite waits in C, where
    Python's signal handler does not run. The wait is SQLite's in slices of 0.1 s now, Ctrl-C seen between them."""
    import signal
    import time

    assert sql(capsys, vault, "SELECT 1")[0] == 0
    with held_by_another_process(vault / ".dreamdb" / "index.db", exclusive=True):
        for args in (["sql", "--no-sync", "SELECT 1"], ["sql", "SELECT 1"], ["recall", "alpha"]):
            started = time.monotonic()
            p = subprocess.Popen([sys.executable, "-m", "dreamdb", *args, "--vault", str(vault)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            time.sleep(2)  # (started, and waiting for the lock: the index's own lock timeout is 10 s)
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=60)
            waited = time.monotonic() - started
            assert p.returncode == 130 and "Interrupted." in err and "Traceback" not in err, (args, p.returncode, err)
            assert waited < 4, (args, waited)


def test_ctrl_c_while_the_json_result_is_written_adds_no_error_object_after_it(vault, capsys):
    """QA round 151-G F3: Ctrl-C while ``sql --json`` wrote a large result left part of the rows, then
    ``{"error": …}`` glued on: neither a result nor an error object. Once the result is being written, an interruption
    is said on stderr alone (exit 130), stdout holding part of the result only."""
    import signal
    import time

    assert sql(capsys, vault, "SELECT 1")[0] == 0
    query = COUNT_TO.format(n=20_000).replace("SELECT x FROM c", "SELECT x, printf('%.500c', 'a') AS t FROM c")
    p = subprocess.Popen([sys.executable, "-m", "dreamdb", "sql", "--vault", str(vault), "--no-sync", "--json", query],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first = p.stdout.read(1)  # (the result is being written: ≈ 10 MB into a pipe that holds 64 KB)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    out, err = first + out, err.decode()
    assert p.returncode == 130 and "Traceback" not in err, (p.returncode, err)
    assert first == b"[" and b'"error"' not in out and len(out) < 10_000_000, out[-300:]
    assert "Interrupted while the result was written: standard output holds part of it." in err, err


def test_sql_started_with_sigint_ignored_keeps_ignoring_it(vault, capsys):
    """QA round 152-A F6: ``sql`` started with SIGINT ignored (a POSIX background job, ``dreamdb sql … &`` in a script)
    put its own handler in while the query ran: the SIGINT sent to it then said "Interrupted.", exit 130, while the same
    signal during the output was ignored. It stays ignored throughout: the query runs to its time limit."""
    import signal
    import time

    assert sql(capsys, vault, "SELECT 1")[0] == 0
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    p = subprocess.Popen([sys.executable, "-m", "dreamdb", "sql", "--vault", str(vault), "--no-sync", "--timeout", "3",
                          endless], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        while p.poll() is None:  # (again and again: some while the query runs, however slowly the process starts)
            p.send_signal(signal.SIGINT)
            time.sleep(0.2)
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 1 and "The query ran longer than 3 s and was stopped" in err, (p.returncode, err)
    assert "Interrupted" not in err and out == "", (out, err)


def test_ctrl_c_while_sync_waits_for_another_writers_lock_acts_at_once(vault, capsys):
    """QA round 145-J F1: Ctrl-C while ``sync`` waited for another process's write lock (``BEGIN IMMEDIATE`` held
    elsewhere) took effect only after the whole 10 s (rc 130 9.1 s after SIGINT): SQLite's busy wait for ``BEGIN
    IMMEDIATE`` ran in C. It goes through :func:`dreamdb.store.connect.execute_waiting` now (slices of 0.1 s), with
    the same total wait and the same LockTimeout."""
    import signal
    import time

    from dreamdb.errors import LockTimeout
    from dreamdb.store import connect as db

    assert sql(capsys, vault, "SELECT 1")[0] == 0
    index_path = vault / ".dreamdb" / "index.db"
    with held_by_another_process(index_path, exclusive=False):
        write_doc(vault, "knowledge/alpha.md", "---\nname: Alpha note\n---\nalpha body text, edited\n")  # to sync
        started = time.monotonic()
        p = subprocess.Popen([sys.executable, "-m", "dreamdb", "sync", "--vault", str(vault)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(2)  # (started, and waiting for the lock: the index's own lock timeout is 10 s)
        p.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        out, err = p.communicate(timeout=60)
        assert p.returncode == 130 and "Interrupted." in err and "Traceback" not in err, (p.returncode, err)
        assert time.monotonic() - signalled < 1, time.monotonic() - started
        # the same wait as before, in all: a writer gives up after its busy timeout, with the same LockTimeout
        conn = db.connect(index_path, busy_timeout_ms=700)
        try:
            for _ in range(2):
                started = time.monotonic()
                with pytest.raises(LockTimeout, match="locked by another process"):
                    with db.write_transaction(conn):
                        pass
                assert 0.65 < time.monotonic() - started < 1.0, time.monotonic() - started
                assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 700 and not conn.in_transaction
        finally:
            conn.close()
    conn = db.connect(index_path)
    try:
        with db.write_transaction(conn):  # (no lock held: at once, as before)
            assert conn.in_transaction and conn.execute("PRAGMA busy_timeout").fetchone()[0] == db.BUSY_TIMEOUT_MS
    finally:
        conn.close()


def test_a_refused_load_extension_says_no_sqlite_vec_where_the_driver_loads_none(vault):
    """QA round 143-G F2: with a driver that cannot load extensions, refusing ``load_extension`` said "sqlite-vec is
    already loaded"."""
    env = {**os.environ, "DREAMDB_SQLITE_DRIVER": "sqlite3"}
    probe = subprocess.run([sys.executable, "-c", "from dreamdb.store import connect as db; print(db.CAN_LOAD_EXTENSIONS)"],
                           capture_output=True, text=True, env=env, timeout=120)
    if probe.stdout.strip() != "False":
        pytest.skip(f"the standard library's sqlite3 here loads extensions ({probe.stdout.strip() or probe.stderr})")
    p = subprocess.run([sys.executable, "-m", "dreamdb", "sql", "--vault", str(vault), "SELECT load_extension('x')"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 2 and "Loading extensions is refused" in p.stderr, p.stderr
    assert "already loaded" not in p.stderr and "cannot be loaded by this SQLite driver (sqlite3)" in p.stderr, p.stderr


def test_no_sync_on_an_index_of_a_newer_schema_gives_advice_that_works(vault, capsys):
    """QA round 143-J F1: on an index of a newer schema, ``sql --no-sync`` advised "run without --no-sync (or dreamdb
    sync) to index it again", which every sync refuses (exit 4: a newer schema is left as it is)."""
    import sqlite3

    from dreamdb.store.migrations import latest_version

    assert sql(capsys, vault, "SELECT 1")[0] == 0
    with sqlite3.connect(vault / ".dreamdb" / "index.db") as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (?, 'future', '2027-01-01T00:00:00+00:00')",
                     (latest_version() + 1,))
    code, _out, err = sql(capsys, vault, "--no-sync", "SELECT 1")
    assert code == 0 and f"schema version {latest_version() + 1}" in err, err
    assert "run without --no-sync" not in err and "run the newer dreamdb, or delete the index" in err, err
    assert sql(capsys, vault, "SELECT 1")[0] == 4  # (what the old advice led to)


def test_a_long_text_cell_is_cut_between_grapheme_clusters():
    """QA round 143-I F2: a cell cut at 77 characters could split a flag (a lone regional indicator letter shown)."""
    from dreamdb.cli.index import _cell

    assert _cell("a" * 76 + "🇹🇷" * 5) == "a" * 76 + "…"
    assert _cell("a" * 75 + "🇹🇷" * 5) == "a" * 75 + "🇹🇷" + "…"
    assert _cell("a" * 100) == "a" * 77 + "…"


def test_the_note_of_a_waiting_vector_table_comes_only_when_the_query_meets_one(vault):
    """QA round 145-D F4: with a driver that cannot load sqlite-vec, a query that worked got "note: models, words: not in
    this index yet: migrations 2, 4, 5, 10 wait …" for the words of its string literals and columns ('%words%',
    '%models%'), looked for in the query's text. SQLite's "no such table/column" names what is missing now."""
    env = {**os.environ, "DREAMDB_SQLITE_DRIVER": "sqlite3"}
    probe = subprocess.run([sys.executable, "-c", "from dreamdb.store import connect as db; print(db.CAN_LOAD_EXTENSIONS)"],
                           capture_output=True, text=True, env=env, timeout=120)
    if probe.stdout.strip() != "False":
        pytest.skip(f"the standard library's sqlite3 here loads extensions ({probe.stdout.strip() or probe.stderr})")
    import shutil

    shutil.rmtree(vault / ".dreamdb", ignore_errors=True)  # (an index that driver builds: the vector migrations wait)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "dreamdb", "sql", "--vault", str(vault), *args],
                              capture_output=True, text=True, env=env, timeout=120)

    worked = "SELECT title, body LIKE '%words%' AS w FROM documents WHERE title NOT LIKE '%models%' /* chunks */ ORDER BY 1"
    for args in ((), ("--no-sync",)):
        p = run(*args, "--json", worked)
        assert p.returncode == 0 and [r["title"] for r in json.loads(p.stdout)] == ["Alpha note", "Beta note"], p.stderr
        assert "not in this index yet" not in p.stderr, p.stderr
        p = run(*args, "SELECT COUNT(*) FROM models WHERE 'chunks' != ''")
        assert p.returncode == 2 and ("note: models: not in this index yet: migrations 2, 4, 5, 10 wait for a SQLite "
                                      "driver that loads sqlite-vec") in p.stderr and "chunks" not in p.stderr.split(
                                          "Error:")[0], p.stderr
        p = run(*args, "SELECT COUNT(*) FROM words")  # (a column migration 10 adds: no table of theirs)
        assert p.returncode == 2 and "not in this index yet" not in p.stderr and "no such table: words" in p.stderr


def test_the_schema_pages_changelog_example_lists_entries_newest_first_within_a_second(tmp_path):
    """QA round 149-D F2: docs/schema.md's changelog example sorted by ``date``, text in which
    ``2026-08-18T10:00:00.500000Z`` sorts below ``2026-08-18T10:00:00Z``, so of two entries half a second apart the
    earlier came first in "newest first"; it sorts by ``date_days``, the instant as a number."""
    import dreamdb
    from tests.conftest import ROOT

    page = (ROOT / "docs" / "schema.md").read_text(encoding="utf-8")
    examples = page.split("## Example queries", 1)[1].split("```sql", 1)[1].split("```", 1)[0]
    example = next(s.strip() for s in examples.split(";") if "type = 'changelog'" in s)
    vault = tmp_path / "_dream_context"
    (vault / "core").mkdir(parents=True)
    (vault / "core" / "CHANGELOG.json").write_text(json.dumps([
        {"date": "2026-08-18T10:00:00.5Z", "type": "fix", "scope": "late", "summary": "later by half a second"},
        {"date": "2026-08-18T10:00:00Z", "type": "fix", "scope": "early", "summary": "earlier"}]), encoding="utf-8")
    with dreamdb.open(vault) as index:
        index.sync()
        entries = [row[0] for row in index.conn.execute(example)]
    assert entries == ["changelog/2026-08-18-late-1", "changelog/2026-08-18-early-1"]
