"""Options shared by the commands."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamdb.cli import cli
from tests.conftest import ROOT, write_doc


def test_one_vault_commands_refuse_a_repeated_vault(tmp_path):
    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    other = tmp_path / "other" / "_dream_context"
    (other / "knowledge").mkdir(parents=True)
    runner = CliRunner()
    for args in (["status"], ["sync"], ["list"], ["remember", "a note"]):
        r = runner.invoke(cli, [*args, "--vault", str(vault), "--vault", str(other)])
        assert r.exit_code == 2 and "works on one vault; 2 were given" in r.output, (args, r.output)
    assert not (vault / ".dreamdb").exists()  # refused before anything was opened
    r = runner.invoke(cli, ["status", "--vault", str(vault), "--vault", str(tmp_path / "nope")])  # (QA round 102-A)
    assert r.exit_code == 2 and f"and {tmp_path / 'nope'} does not exist." in " ".join(r.output.split()), r.output
    r = runner.invoke(cli, ["list", "--vault", str(vault), "--json"])
    assert r.exit_code == 0 and '"doc_id"' in r.output
    # one vault named by two of its paths is one vault (QA round 101-A F14: refused, where dreamdb.open gives its Index)
    r = runner.invoke(cli, ["remember", "a note", "--vault", str(vault), "--vault", str(tmp_path), "--json"])
    assert r.exit_code == 0 and '"doc_id": "changelog/' in r.output, r.output


def test_a_bad_dreamdb_vault_is_named_as_the_source(tmp_path, monkeypatch, capsys):
    from dreamdb.cli import main

    monkeypatch.setenv("DREAMDB_VAULT", str(tmp_path / "nowhere"))
    assert main(["status"]) == 3
    err = capsys.readouterr().err
    assert "(from DREAMDB_VAULT)" in err and "Set DREAMDB_VAULT" in err


def test_empty_vault_path_and_a_symlink_to_a_vault(tmp_path, monkeypatch):
    """QA round 7: --vault "" meant the current folder; DREAMDB_VAULT set to a symlink to a
    _dream_context folder was refused (its own name is not _dream_context)."""
    from dreamdb.errors import VaultNotFound
    from dreamdb.vault.discover import find_vault

    with pytest.raises(VaultNotFound, match="empty"):
        find_vault("")
    with pytest.raises(VaultNotFound, match="empty"):
        find_vault("  ")
    real = tmp_path / "project" / "_dream_context"
    real.mkdir(parents=True)
    link = tmp_path / "my-notes"
    link.symlink_to(real)
    assert find_vault(link) == real.resolve()
    monkeypatch.setenv("DREAMDB_VAULT", str(link))
    assert find_vault() == real.resolve()
    monkeypatch.setenv("DREAMDB_VAULT", "")  # empty means unset: discovery from the working folder
    assert find_vault(cwd=real) == real


@pytest.mark.parametrize("target", ["/", "project folder", "folder above"])
def test_a_vault_link_to_a_folder_holding_the_link_itself_is_refused(tmp_path, monkeypatch, target):
    """QA round 114-B F5: ``_dream_context`` linked to ``/`` (or the project, or the home folder above it) made a
    vault of every file below: as root, ``/.dreamdb/index.db`` was written at the filesystem root, and each recall
    walked the disk for 2 s. Found by the walk up, by --vault and by DREAMDB_VAULT alike; a link beside stays a vault."""
    from dreamdb.errors import VaultNotFound
    from dreamdb.vault.discover import find_vault

    project = tmp_path / "home" / "project"
    (project / "src").mkdir(parents=True)
    link = project / "_dream_context"
    link.symlink_to({"/": Path("/"), "project folder": project, "folder above": tmp_path / "home"}[target])
    monkeypatch.delenv("DREAMDB_VAULT", raising=False)
    for call in (lambda: find_vault(cwd=project / "src"), lambda: find_vault(project), lambda: find_vault(link)):
        with pytest.raises(VaultNotFound, match="a folder that holds .*_dream_context itself") as info:
            call()
        assert info.value.exit_code == 3
    monkeypatch.setenv("DREAMDB_VAULT", str(project))
    with pytest.raises(VaultNotFound, match="itself"):
        find_vault()
    beside = tmp_path / "home" / "notes"
    beside.mkdir()
    link.unlink()
    link.symlink_to(beside)
    assert find_vault(cwd=project / "src") == find_vault(project) == beside.resolve()


def test_recall_plain_refuses_json_and_explain(capsys):
    from dreamdb.cli import main

    vault = str(ROOT / "examples")
    for other in ("--json", "--explain"):
        assert main(["recall", "--vault", vault, "--plain", other, "sleep"]) == 2
        assert f"--plain cannot be combined with {other}" in capsys.readouterr().err


def test_list_and_sql_answer_from_a_locked_index_with_a_note(tmp_path, capsys):
    import time

    import dreamdb
    from dreamdb.cli import main
    from dreamdb.store import connect as db

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    index = dreamdb.open(vault)
    index.sync()
    writer = db.connect(index.index_path)
    writer.execute("BEGIN IMMEDIATE")  # a long sync elsewhere holds the write lock
    try:
        (vault / "knowledge" / "new-note.md").write_text("fresh text\n", encoding="utf-8")
        # status and embed status too (QA round 8: they waited 10 s, then exited 5)
        for args in (["list", "--json"], ["sql", "SELECT COUNT(*) AS n FROM documents"], ["status", "--json"],
                     ["embed", "status", "--json"]):
            t0 = time.perf_counter()
            assert main([*args, "--vault", str(vault)]) == 0
            assert time.perf_counter() - t0 < 5  # not the 10 s lock timeout
            assert "another process holds the index" in capsys.readouterr().err
    finally:
        writer.rollback()
        writer.close()


def test_sql_json_of_an_index_its_sync_could_not_bring_up_to_the_vault_is_an_object_with_the_note(tmp_path, capsys):
    """QA round 132-A F1: with another process holding the index, ``sql --json`` printed a bare array, as a complete
    result, while stderr said the rows may miss the vault's latest edits. It is the object form, the note in its
    ``notes`` (docs/json.md); ``list --json`` stays an array (its contract), the note on stderr."""
    import dreamdb
    from dreamdb.cli import main
    from dreamdb.store import connect as db

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    with dreamdb.open(vault) as index:
        index.sync()
        path = index.index_path
    assert main(["sql", "--vault", str(vault), "--json", "SELECT 1 AS one"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"one": 1}]  # (synced: the array)
    writer = db.connect(path)
    writer.execute("BEGIN IMMEDIATE")  # a long sync elsewhere holds the write lock
    try:
        (vault / "knowledge" / "zebra.md").write_text("zebra\n", encoding="utf-8")  # (an edit the rows miss)
        for args in (["--json"], ["--format", "json"]):
            assert main(["sql", "--vault", str(vault), *args, "SELECT 1 AS one"]) == 0
            out = json.loads(capsys.readouterr().out)
            assert out["columns"] == ["one"] and out["rows"] == [{"one": 1}] and "truncated" not in out, out
            assert len(out["notes"]) == 1 and out["notes"][0].startswith("another process holds the index"), out
        assert main(["list", "--vault", str(vault), "--json"]) == 0
        listed = capsys.readouterr()
        assert isinstance(json.loads(listed.out), list) and "another process holds the index" in listed.err
    finally:
        writer.rollback()
        writer.close()


def test_an_index_another_process_holds_exclusively_is_waited_for_never_rebuilt(tmp_path):
    """QA round 78-A F7: with another connection holding an exclusive lock (a SQLite shell in BEGIN EXCLUSIVE),
    opening the index failed "database is locked", which was taken for damage: the index was rebuilt under its
    holder and every stored vector lost. A lock is waited for (lock_timeout_ms), then LockTimeout (exit 5)."""
    import dreamdb
    from dreamdb.errors import LockTimeout
    from dreamdb.store import connect as db

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    with dreamdb.open(vault) as index:
        index.sync()
        path = index.index_path
    before = os.stat(path).st_ino
    holder = db.connect(path)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        # (QA round 79 F14: rebuild() replaced the file under the holder, whose commit then went nowhere)
        for call in (lambda ix: ix.recall("sleep"), lambda ix: ix.status(), lambda ix: ix.sync(),
                     lambda ix: ix.rebuild("checked elsewhere")):
            with dreamdb.open(vault, lock_timeout_ms=300) as index:
                with pytest.raises(LockTimeout, match=r"locked by another process|another process \(or another open Index of this process\) holds it"):
                    call(index)
        assert os.stat(path).st_ino == before
    finally:
        holder.rollback()
        holder.close()
    with dreamdb.open(vault) as index:
        assert index.recall("sleep") and os.stat(path).st_ino == before


def _rollback_journal_reader(path) -> subprocess.Popen:
    """Another process (SQLite sees its own process's locks through one file descriptor) that switches the index at
    ``path`` to a rollback journal and reads it in a transaction until its standard input is closed
    (``communicate("")``)."""
    reader = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None);"
        "print(c.execute('PRAGMA journal_mode = DELETE').fetchone()[0]); c.execute('BEGIN');"
        "c.execute('SELECT COUNT(*) FROM documents').fetchone(); print('reading', flush=True); sys.stdin.read()"),
        str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert reader.stdout.readline().strip() == "delete" and reader.stdout.readline().strip() == "reading"
    return reader


def test_an_index_switched_to_a_rollback_journal_is_read_while_another_program_reads_it(tmp_path):
    """QA round 79 F17: with the index put in rollback-journal mode by a SQLite shell that then reads it,
    switching back to WAL needs the file alone: recall waited the whole lock timeout, then exit 5, though it
    only had to read. It answers at once; the next connection alone switches the index back to WAL."""
    import sqlite3

    import dreamdb

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    with dreamdb.open(vault) as index:
        expected = [h.doc_id for h in index.recall("sleep debt")]
        path = index.index_path
    reader = _rollback_journal_reader(path)
    try:
        with dreamdb.open(vault, lock_timeout_ms=5_000) as index:
            started = time.monotonic()
            assert [h.doc_id for h in index.recall("sleep debt")] == expected
            assert time.monotonic() - started < 4  # (not the lock timeout)
    finally:
        reader.communicate("", timeout=30)
    with dreamdb.open(vault) as index:
        assert [h.doc_id for h in index.recall("sleep debt")] == expected
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_write_a_rollback_journal_reader_keeps_from_saving_is_rolled_back_not_left_open(tmp_path):
    """QA round 81-A F1, F2: in a rollback journal COMMIT waits for the readers, then fails busy, and SQLite keeps
    the transaction open: the Index held the write lock from then on (every other writer exited 5, its own next
    sync said "cannot start a transaction within a transaction"), and embed refresh exited 70. The write is rolled
    back and LockTimeout (exit 5) raised."""
    import dreamdb
    from dreamdb.errors import LockTimeout
    from tests.conftest import write_doc

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    with dreamdb.open(vault) as index:
        index.sync()
        path = index.index_path
    reader = _rollback_journal_reader(path)
    index = dreamdb.open(vault, lock_timeout_ms=300)
    try:
        write_doc(vault, "knowledge/narwhal.md", "---\ntitle: Narwhal\n---\nA narwhal note.\n")
        with pytest.raises(LockTimeout) as raised:
            index.sync()
        assert not index.conn.in_transaction and "nothing was written" in raised.value.message
    finally:
        reader.communicate("", timeout=30)
    other = subprocess.run([sys.executable, "-m", "dreamdb", "sync", "--vault", str(vault)], capture_output=True,
                           text=True, timeout=120)  # (while the Index lives: no lock of its own left behind)
    assert other.returncode == 0, other.stderr
    assert [h.doc_id for h in index.recall("narwhal")] == ["knowledge/narwhal"]
    index.close()


def test_error_messages_show_control_characters_from_names(tmp_path, capsys):
    from dreamdb.cli import main

    assert main(["status", "--vault", str(tmp_path / "va\x1b[31mult\x07")]) == 3
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "va␛[31mult␇" in err


def test_table_cells_stay_on_one_line():
    from dreamdb import output

    text = output.table([["knowledge/a\nb", "x"]], headers=["id", "v"])
    assert "knowledge/a␊b" in text and len(text.splitlines()) == 3
    # and its headers (QA round 115-C F5: dreamdb sql 'SELECT 1 AS "a<newline>b"' broke the table)
    text = output.table([[1, 2]], headers=["a\nb", "c\td\x1b"])
    assert text.splitlines()[0].split() == ["a␊b", "c␉d␛"] and len(text.splitlines()) == 3


def test_table_columns_align_for_decomposed_and_wide_names():
    """QA round 12: a file name in NFD (combining marks) pushed its row's later columns left."""
    import unicodedata

    from wcwidth import wcswidth

    from dreamdb import output

    names = [unicodedata.normalize("NFD", "knowledge/şifreleme-çözüm"), "knowledge/plain", "knowledge/日本語"]
    lines = output.table([[n, "x"] for n in names], headers=["id", "v"]).splitlines()[2:]
    assert len(lines) == 3
    columns = {wcswidth(line[:line.rindex("x")]) for line in lines}  # display column of the second cell
    assert len(columns) == 1, lines


def test_hand_made_columns_stay_in_line_after_wide_characters(tmp_path, capsys):
    """QA round 143-I F4: columns padded with ``f"{text:<18}"`` count characters, not terminal cells: a CJK term in
    ``recall --explain`` pushed its row's next column two cells right for each of its characters. They are padded by
    display width (``output.pad``), as ``output.table`` pads its cells; so are ``status``'s counts and ``eval``'s
    table."""
    from wcwidth import wcswidth

    from dreamdb import output
    from dreamdb.cli import main

    assert output.pad("東京", 6) == "東京  " and output.pad("ab", 6) == "ab    " and output.pad("東京メモ", 4) == "東京メモ"
    assert output.display_width("e\u0301") == 1 and output.display_width("ｶﾀｶﾅ") == 4 and output.display_width("👍🏽") == 2
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "t.md").write_text("---\ntitle: T\n---\n\n東京メモ quokka colony\n", encoding="utf-8")
    assert main(["recall", "--vault", str(vault), "--explain", "東京メモ quokka"]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if " query " in ln]
    assert len(rows) == 2, rows
    assert len({wcswidth(ln[:ln.index(" query ")]) for ln in rows}) == 1, rows


def test_every_command_help_ends_with_the_exit_codes(capsys):
    from dreamdb.cli import main

    for args in (["sync"], ["sql"], ["update"], ["embed", "refresh"], ["hook", "install"], ["model", "status"]):
        assert main([*args, "--help"]) == 0
        out = capsys.readouterr().out
        assert "Exit codes: 0 ok" in " ".join(out.split()) and "6 write refused" in " ".join(out.split()), args
    # the hook's own: it always exits 0 (QA 51: the list above contradicted its "Always exits 0")
    assert main(["hook", "user-prompt-submit", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Exit code: always 0, whatever the payload" in out and "Exit codes:" not in out


@pytest.mark.parametrize("value, expected", [("1", True), ("TRUE", True), (" yes ", True), ("on", True),
                                             ("", False), ("0", False), ("no", False), ("Off", False)])
def test_include_archives_setting(monkeypatch, value, expected):
    from dreamdb.config import include_archives_default

    monkeypatch.setenv("DREAMDB_INCLUDE_ARCHIVES", value)
    assert include_archives_default() is expected


def test_include_archives_setting_of_another_value_is_refused(monkeypatch, tiny_vault):
    import dreamdb
    from dreamdb.errors import UsageError

    monkeypatch.setenv("DREAMDB_INCLUDE_ARCHIVES", "maybe")
    with pytest.raises(UsageError, match="DREAMDB_INCLUDE_ARCHIVES='maybe' is neither on nor off"):
        dreamdb.open(tiny_vault)


@pytest.mark.parametrize("args", [["recall", "sqlite"], ["recall", "--json", "sqlite"], ["status"],
                                  ["recall", "--types", "knowledge", "sqlite"]])
@pytest.mark.parametrize("stdout", ["closed", "full"])
def test_output_that_cannot_be_written_is_one_error_line_and_exit_74(tmp_path, args, stdout):
    """QA round 12: a closed or full standard output gave a traceback or "internal error" (exit 70)."""
    import shutil
    import subprocess
    import sys

    from dreamdb.quickcli import OUTPUT_ERROR_EXIT

    if stdout == "full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    vault = tmp_path / "_dream_context"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "_dream_context", vault,
                    ignore=shutil.ignore_patterns(".dreamdb"))  # (the user's own index of it: another version's, maybe)
    command = [sys.executable, "-m", "dreamdb", *args[:1], "--vault", str(vault), *args[1:]]
    if stdout == "full":
        with open("/dev/full", "w") as full:
            p = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    else:
        p = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
                           preexec_fn=lambda: os.close(1))
    assert p.returncode == OUTPUT_ERROR_EXIT == 74, p.stderr
    assert p.stderr.startswith("Error: cannot write the output: ") and "Traceback" not in p.stderr
    assert "internal error" not in p.stderr and len(p.stderr.splitlines()) == 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs RLIMIT_FSIZE in a child process (POSIX)")
@pytest.mark.parametrize("args", [["list", "--json"], ["list"], ["recall", "-n", "50", "sleep"],
                                  ["sql", "--format", "csv", "SELECT * FROM documents"]])
@pytest.mark.parametrize("unbuffered", ["1", None])
def test_output_a_disk_takes_only_in_part_is_exit_74(tmp_path, args, unbuffered):
    """QA round 144-D F1: with PYTHONUNBUFFERED=1, output to a file on a disk that filled partway was cut where the
    disk filled (the system wrote 8 KiB of the 200 KB asked), with exit 0 and nothing said. Here the output's file
    cannot grow past ``limit`` (RLIMIT_FSIZE, whose write past it is short, then EFBIG), and the command writes it
    from just below the limit."""
    import resource
    import signal

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    limit = 1 << 22  # (the index's files fit below it)

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # (a write past the limit fails with EFBIG instead)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    out = tmp_path / "out.txt"
    with open(out, "wb") as file:
        file.seek(limit - 100)
        p = subprocess.run([sys.executable, "-m", "dreamdb", *args[:1], "--vault", str(vault), *args[1:]],
                           stdout=file, stderr=subprocess.PIPE, text=True, timeout=120, env=env, preexec_fn=limited)
    assert p.returncode == 74, p.stderr
    assert "Error: cannot write the output: File too large." in p.stderr.splitlines()
    assert "Traceback" not in p.stderr and out.stat().st_size == limit


@pytest.mark.parametrize("stderr", ["closed", "full"])
def test_a_stderr_that_cannot_be_written_changes_neither_results_nor_exit_codes(tmp_path, stderr):
    """QA round 13: an error line to a closed stderr raised again, so --json lost its error and exit 3 became 1."""
    import subprocess
    import sys

    if stderr == "full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    vault = tmp_path / "_dream_context"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "_dream_context", vault,
                    ignore=shutil.ignore_patterns(".dreamdb"))  # (the user's own index of it: another version's, maybe)

    def run(*args):
        command = [sys.executable, "-m", "dreamdb", *args]
        if stderr == "full":
            with open("/dev/full", "w") as full:
                return subprocess.run(command, stdout=subprocess.PIPE, stderr=full, text=True, timeout=120)
        return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=120,
                              preexec_fn=lambda: os.close(2))

    p = run("recall", "--json", "--vault", str(tmp_path / "missing"), "x")
    assert p.returncode == 3 and json.loads(p.stdout)["error"]["exit_code"] == 3
    p = run("recall", "--vault", str(vault), "--mode", "hybrid", "sleep debt")  # a fallback note goes to stderr
    assert p.returncode == 0 and "feature/sleep-consolidation" in p.stdout
    p = run("sync", "--force", "--vault", str(vault))
    assert p.returncode == 0 and "documents" in p.stdout
    p = run("status", "--vault", str(vault), "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["documents"] > 0


@pytest.mark.parametrize("args", [["status"], ["list", "--json"], ["--help"], ["recall", "sleep"]])
def test_a_reader_that_stopped_reading_is_exit_0(tmp_path, args):
    """QA round 13: click turned a closed stdout pipe into exit 1 on every command but recall's fast path."""
    import subprocess
    import sys

    vault = tmp_path / "_dream_context"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "_dream_context", vault,
                    ignore=shutil.ignore_patterns(".dreamdb"))  # (the user's own index of it: another version's, maybe)
    extra = [] if args == ["--help"] else ["--vault", str(vault)]
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write
    try:
        p = subprocess.run([sys.executable, "-m", "dreamdb", *args[:1], *extra, *args[1:]], stdout=write_end,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_a_write_whose_report_cannot_be_written_says_the_change_was_saved_and_exits_0(tmp_path):
    """QA round 13: remember >/dev/full wrote the entry, then said only "cannot write the output". QA round 83-A F4:
    it exited 74, and a harness retrying on any failure saved the entry twice; 0 now, as after an interruption.
    A read command whose output cannot be written still exits 74."""
    import subprocess
    import sys

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    vault = tmp_path / "_dream_context"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "_dream_context", vault,
                    ignore=shutil.ignore_patterns(".dreamdb"))  # (the user's own index of it: another version's, maybe)
    before = json.loads((vault / "core" / "CHANGELOG.json").read_text())
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "dreamdb", "remember", "--vault", str(vault), "--json", "walrus entry"],
                           stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    after = json.loads((vault / "core" / "CHANGELOG.json").read_text())
    entries = after["entries"] if isinstance(after, dict) else after
    assert len(entries) == len(before["entries"] if isinstance(before, dict) else before) + 1
    assert p.returncode == 0 and p.stderr.startswith("The change was saved (Remembered as changelog/")
    assert "do not repeat it" in p.stderr and "could not be written: No space left on device" in p.stderr
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--vault", str(vault), "--json", "walrus"],
                           stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 74 and p.stderr.startswith("Error: cannot write the output") and "saved" not in p.stderr
    # an update that changed nothing saved nothing (QA round 84: "The change was saved (Unchanged: …)")
    args = [sys.executable, "-m", "dreamdb", "update", "--vault", str(vault), "sleep-consolidation", "--tags", "walrus"]
    assert subprocess.run(args, capture_output=True, timeout=120).returncode == 0
    with open("/dev/full", "w") as full:
        p = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 74 and "saved" not in p.stderr, p.stderr
    # sync and embed compact, whose work is done too, say so as embed refresh does (QA round 114-B F7: exit 74)
    for args, said in ((["sync", "--force"], "The change was saved (the index is synced: "),
                       (["embed", "compact"], "The change was saved (compacted: kept 0 vectors)")):
        with open("/dev/full", "w") as full:
            p = subprocess.run([sys.executable, "-m", "dreamdb", *args, "--vault", str(vault)], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=120)
        assert p.returncode == 0 and p.stderr.startswith(said) and "do not repeat it" in p.stderr, (args, p.stderr)


def test_a_folder_inside_a_vault_is_pointed_back_at_the_vault(tmp_path):
    """QA round 23: --vault <vault>/knowledge suggested creating <vault>/knowledge/_dream_context."""
    from dreamdb.errors import VaultNotFound
    from dreamdb.vault.discover import find_vault

    vault = tmp_path / "project" / "_dream_context"
    (vault / "knowledge" / "deep").mkdir(parents=True)
    for inner in (vault / "knowledge", vault / "knowledge" / "deep"):
        with pytest.raises(VaultNotFound) as info:
            find_vault(str(inner))
        assert f"inside the vault {vault}" in info.value.hint and "create" not in info.value.hint
    (tmp_path / "other").mkdir()
    with pytest.raises(VaultNotFound) as info:
        find_vault(str(tmp_path / "other"))  # (a project that has none yet: start one)
    assert "create" in info.value.hint
    # QA round 68 L5: a note's path is pointed back at its vault too; a *file* named _dream_context is not
    # something to create again
    note = vault / "knowledge" / "a.md"
    note.write_text("---\ntitle: A\n---\nbody\n")
    with pytest.raises(VaultNotFound, match="not a folder") as info:
        find_vault(str(note))
    assert f"inside the vault {vault}" in info.value.hint
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "_dream_context").write_text("")
    with pytest.raises(VaultNotFound) as info:
        find_vault(str(tmp_path / "odd"))
    assert "is a file, not a folder" in info.value.hint and "create" not in info.value.hint



def test_a_link_into_a_vault_is_pointed_at_the_vault_it_leads_into(tmp_path, monkeypatch):
    """QA round 148-C F6: --vault (or DREAMDB_VAULT) given as a symlink to a vault's knowledge/ folder was told "to start
    a vault, create <link>/_dream_context", a vault inside the vault's knowledge/, where the folder itself is pointed
    back at its vault: the folders a link leads into are looked at too. A link to a note as well."""
    from dreamdb.errors import VaultNotFound
    from dreamdb.vault.discover import find_vault

    vault = tmp_path / "f6" / "proj" / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "a.md").write_text("x\n")
    (tmp_path / "f6" / "klink").symlink_to(vault / "knowledge")
    (tmp_path / "f6" / "alink").symlink_to(vault / "knowledge" / "a.md")
    monkeypatch.chdir(tmp_path)
    for given, said in (("f6/klink", "is not a vault"), ("f6/alink", "not a folder")):
        with pytest.raises(VaultNotFound, match=said) as info:
            find_vault(given)
        assert info.value.hint == f"It leads into the vault {vault}: point --vault (or DREAMDB_VAULT) there.", given
    monkeypatch.setenv("DREAMDB_VAULT", "f6/klink")
    with pytest.raises(VaultNotFound, match="is not a vault") as info:
        find_vault()
    assert f"It leads into the vault {vault}: point" in info.value.hint and "create" not in info.value.hint


def test_a_blank_dreamdb_vault_is_unset_as_every_other_variable(tmp_path, monkeypatch):
    """QA round 152-F F4 (after 68 L7): DREAMDB_VAULT of spaces exited 3 ("holds only spaces") where every other
    variable of spaces is unset and DREAMDB_VAULT="" was too: the vault is found from the current folder, as without
    it. ``--vault "  "`` stays a usage error (exit 2)."""
    from dreamdb.errors import NoVaultFound, VaultNotFound
    from dreamdb.vault.discover import find_vault

    vault = tmp_path / "proj" / "_dream_context"
    vault.mkdir(parents=True)
    for blank in ("   ", "\t", ""):
        monkeypatch.setenv("DREAMDB_VAULT", blank)
        assert find_vault(cwd=vault.parent) == vault
        with pytest.raises(NoVaultFound):
            find_vault(cwd=tmp_path)
    with pytest.raises(VaultNotFound, match=r"^The vault path is empty\.\n"):
        find_vault("  ")  # (--vault "  ": the option's own message)
    env = {**os.environ, "DREAMDB_VAULT": "  "}
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "status", "--json"], cwd=vault.parent, env=env,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and json.loads(ran.stdout)["vault"] == str(vault), (ran.stdout, ran.stderr)
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "status", "--json", "--vault", " "], cwd=vault.parent,
                         env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2, (ran.stdout, ran.stderr)


def test_mode_is_read_in_any_case(tmp_path, monkeypatch, capsys):
    """QA round 45 L1: ``--mode HYBRID`` was refused while ``DREAMDB_RECALL_MODE=Hybrid`` was taken. (L2, a
    mistyped ``DREAMDB_EMBED_THREADS`` turning hybrid into BM25 with a note, is kept: see test_hybrid.py.)"""
    from dreamdb.cli import main

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(tmp_path / "no-model"))  # hybrid falls back: no model here
    assert main(["recall", "--vault", str(vault), "--mode", "BM25", "--json", "sleep debt"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["mode"], out["requested_mode"]) == ("bm25", "bm25")  # (the key is always there: QA round 68 L7)
    assert main(["recall", "--vault", str(vault), "--mode", "Hybrid", "--json", "sleep debt"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["requested_mode"] == "hybrid" and out["mode"] == "bm25"  # (no model there: the fallback says so)
    # QA round 65 L8: the variable with spaces around it (as the prompt hook reads it), or blank as unset
    for value, said in ((" RRF ", "rrf"), ("  ", "bm25")):
        monkeypatch.setenv("DREAMDB_RECALL_MODE", value)
        assert main(["recall", "--vault", str(vault), "--json", "sleep debt"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out.get("requested_mode", out["mode"]) == said  # (rrf: no model there, bm25 used and rrf named)


def test_a_full_disk_under_the_index_is_said_not_called_damage(capsys):
    """QA round 46 M4: `embed refresh` on a full disk was "internal error" (exit 70) with a hint that the index
    may be damaged."""
    from dreamdb.quickcli import run_guarded
    from dreamdb.store import connect as db

    def full():
        raise db.OperationalError("database or disk is full")

    assert run_guarded(full) == 4
    err = capsys.readouterr().err
    assert "The disk that holds the index is full" in err and "Free some disk space" in err
    assert "internal error" not in err and "damaged" not in err


def test_vault_before_the_command_is_that_commands_vault(tmp_path, capsys):
    """``dreamdb --vault PATH recall …`` (typed as ``git -C``) was "No such option '--vault'"."""
    from dreamdb.entry import hoist_options, main

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    assert main(["--vault", str(vault), "recall", "--json", "sleep debt"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and all(h["path"].startswith(str(vault)) for h in hits)
    assert main([f"--vault={vault}", "embed", "status", "--json"]) == 0
    embed_status = json.loads(capsys.readouterr().out)
    assert main(["status", "--vault", str(vault), "--json"]) == 0
    assert embed_status["documents"] == json.loads(capsys.readouterr().out)["documents"] > 0
    # a command without the option still refuses it, by its own name
    assert main(["--vault", str(vault), "model", "status"]) == 2
    assert "dreamdb model status has no --vault option" in capsys.readouterr().err
    assert hoist_options(["--vault", "v", "embed", "refresh", "--force"]) == ["embed", "refresh", "--vault", "v", "--force"]
    assert hoist_options(["--vault", "a", "--vault=b", "recall", "q"]) == ["recall", "--vault", "a", "--vault=b", "q"]
    for unchanged in (["--vault"], ["--vault", "v"], ["--vault", "v", "--json"], ["recall", "--vault", "v", "q"]):
        assert hoist_options(unchanged) == unchanged


@pytest.mark.parametrize("args, says", [
    (["recal", "foo"], "No such command 'recal'. Did you mean 'recall'?"),
    (["lst"], "No such command 'lst'. Did you mean 'list'?"),
    (["embed", "refrsh"], "No such command 'refrsh'. Did you mean 'refresh'?"),
    (["model", "buidl"], "No such command 'buidl'. Did you mean 'build'?"),
    (["lexicon", "stauts"], "No such command 'stauts'. Did you mean 'status'?"),
    (["hook", "instal"], "No such command 'instal'. Did you mean one of: 'install', 'uninstall'?"),
    (["--json", "recal", "x"], "No such command 'recal'. Did you mean 'recall'?"),
    (["xyzzy"], "No such command 'xyzzy'.\n"),
])
def test_a_mistyped_command_names_the_one_meant(args, says, capsys):
    """User QA: `dreamdb recal foo` said "No such command" with no suggestion (the lazily loaded root group has
    no commands for click to compare with); subgroups say it too."""
    from dreamdb.entry import main

    assert main(args) == 2
    captured = capsys.readouterr()
    assert says in captured.err and "Did you mean '--version'" not in captured.err
    if "--json" in args:
        assert json.loads(captured.out)["error"]["message"] == says


def test_a_mistyped_command_from_the_executable():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "dreamdb", "recal", "foo"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Did you mean 'recall'?" in r.stderr


def test_json_before_the_command_is_that_commands_json(tmp_path, capsys):
    """User QA: `dreamdb --json status` was "No such option '--json'. Did you mean '--version'?"."""
    from dreamdb.entry import hoist_options, main

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    assert main(["--json", "status", "--vault", str(vault)]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] > 0
    assert main(["--json", "--vault", str(vault), "recall", "sleep", "debt"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"]
    assert main(["--vault", str(vault), "--json", "embed", "status"]) == 0
    assert "documents" in json.loads(capsys.readouterr().out)
    assert main(["--json", "recall", "--vault", str(vault), "--", "-x"]) == 0  # (moved before the --)
    assert json.loads(capsys.readouterr().out)["query"] == "-x"
    assert hoist_options(["--json", "embed", "status"]) == ["embed", "status", "--json"]
    assert hoist_options(["--json", "--vault", "v", "sql", "SELECT 1"]) == ["sql", "--vault", "v", "--json", "SELECT 1"]
    # the prompt hook takes no --json: it stays where it was (and the hook ignores it)
    assert hoist_options(["--json", "hook", "user-prompt-submit"]) == ["--json", "hook", "user-prompt-submit"]
    assert hoist_options(["--vault", "v", "--json", "hook", "user-prompt-submit"]) == [
        "--json", "hook", "user-prompt-submit", "--vault", "v"]
    for unchanged in (["--json"], ["status", "--json"]):
        assert hoist_options(unchanged) == unchanged
    assert hoist_options(["--json", "--help"]) == ["--help"]  # (QA round 135-A F6: "No such option '--json'")


@pytest.mark.parametrize("args", [
    ["--json=1", "status"], ["--json=yes", "status"], ["--json=", "status"], ["--json=1", "embed", "status"],
    ["embed", "--json=1", "status"], ["--vault", "v", "--json=1", "status"], ["--json=1", "--vault", "v", "recall", "x"],
    ["--json", "--json=1", "status"], ["--json=1", "--json", "sql", "SELECT 1"], ["--json=1"], ["--json=1", "--version"],
    ["--version", "--json=1"], ["status", "--json=1"],
])
def test_json_with_a_value_before_the_command_is_refused_as_after_it(args, capsys):
    """QA round 156-D F4: ``dreamdb --json=1 status`` said "No such option '--json'. Did you mean '--version'?", where
    ``status --json=1`` says "Option '--json' does not take a value." (exit 2): a ``--json=VALUE`` before the command
    goes with it as ``--json`` does, and one no command takes is refused alike."""
    from dreamdb.entry import hoist_options, main

    assert main(args) == 2
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == "Error: Option '--json' does not take a value.", err
    assert "No such option" not in err and not out.strip() or json.loads(out)["error"]["message"] == (
        "Option '--json' does not take a value."), (out, err)
    assert hoist_options(["--json=1", "status"]) == ["status", "--json=1"]
    assert hoist_options(["--json", "--json=1", "--json", "status"]) == ["status", "--json", "--json=1"]


@pytest.mark.parametrize("args, says", [
    (["--json", "embed", "bogus"], "No such command 'bogus'."),
    (["--json", "model", "stats"], "No such command 'stats'. Did you mean 'status'?"),
    (["--json", "hook", "instal", "--project", "proj"], "No such command 'instal'. Did you mean one of: 'install', "
                                                        "'uninstall'?"),
    (["--vault", "v", "--json", "lexicon", "biuld"], "No such command 'biuld'. Did you mean 'build'?"),
    (["--json", "embed"], "Missing command: dreamdb embed needs one of its commands (compact, dedup, refresh, status)."),
    (["embed", "--json"], "Missing command: dreamdb embed needs one of its commands (compact, dedup, refresh, status)."),
    (["--vault", "v", "--json", "embed"], "Missing command: dreamdb embed needs one of its commands"),
    (["--vault", "v", "model"], "Missing command: dreamdb model needs one of its commands (build, download, install,"
                                " status)."),
    (["--json", "hook"], "Missing command: dreamdb hook needs one of its commands (install, uninstall, "
                         "user-prompt-submit)."),
    (["--json", "embed", "--bogus"], "No such option '--bogus'."),  # (QA round 131 F3: "No such option '--json'")
    (["--vault", "v", "model", "--bogus", "status"], "No such option '--bogus'."),
    (["embed", "--json", "--bogus", "status"], "No such option '--bogus'."),
    # (QA round 133 F1: "--" after the group dropped --vault, and the subcommand ran on the current folder's vault;
    # it goes with the subcommand now: test_double_dash_after_leading_options_is_as_without_them)
    (["--vault", "v", "embed", "--", "-x"], "No such option '-x'."),
    # (QA round 135-A F6: an option after the leading ones was "dreamdb --version has no --vault option", or "No such
    # option '--json'. Did you mean '--version'?")
    (["--vault", "v", "--bogus", "status"], "No such option '--bogus'."),
    (["--json", "--bogus", "status"], "No such option '--bogus'."),
    (["--vault", "v", "--json", "--", "-x"], "No such option '-x'."),
    (["--", "--vault", "v", "status"], "No such option '--vault'."),
])
def test_json_before_a_group_leaves_the_real_error(args, says, capsys):
    """QA round 130-D F1: `dreamdb --json embed bogus` (and every group's wrong or missing subcommand after a leading
    --json) said "No such option '--json'. Did you mean '--version'?", though --help says --json may come first."""
    from dreamdb.entry import main

    assert main(args) == 2
    out, err = capsys.readouterr()
    assert says in err and "--json'" not in err and "no --vault option" not in err and "--version" not in err, err
    if "--json" in args:
        assert json.loads(out)["error"]["message"].startswith(says) and json.loads(out)["error"]["exit_code"] == 2


def test_options_between_a_group_and_its_command_go_with_the_command(tmp_path, capsys):
    """`dreamdb embed --vault V status` said "dreamdb embed has no --vault option (it reads no vault's index)",
    though embed status reads one; `dreamdb embed --json status` said "No such option '--json'"."""
    from dreamdb.entry import hoist_options, main

    assert hoist_options(["embed", "--vault", "v", "--json", "refresh", "--force"]) == [
        "embed", "refresh", "--vault", "v", "--json", "--force"]
    assert hoist_options(["--json", "model", "--json", "status"]) == ["model", "status", "--json"]
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "a.md").write_text("---\ntitle: A\n---\nbody\n")
    assert main(["embed", "status", "--vault", str(tmp_path), "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert main(["embed", "--vault", str(tmp_path), "--json", "status"]) == 0
    assert json.loads(capsys.readouterr().out) == expected


@pytest.mark.parametrize("args", [["--json", "embed", "--help"], ["--vault", "v", "--json", "model", "-h"],
                                  ["embed", "--help", "--json"], ["--json", "hook", "--help"]])
def test_json_before_a_group_with_help_shows_its_help(args, capsys):
    from dreamdb.entry import main

    group = next(a for a in args if a in ("embed", "model", "hook"))
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"Usage: dreamdb {group} [OPTIONS] COMMAND [ARGS]...") and not err


@pytest.mark.parametrize("args, usage", [
    (["--vault", "v", "-h"], "dreamdb"), (["--json", "-h"], "dreamdb"), (["--json", "--help"], "dreamdb"),
    (["--vault", "v", "--json", "-h", "status"], "dreamdb"),
    (["embed", "-h", "--vault", "v", "status"], "dreamdb embed"), (["embed", "--vault", "v", "-h", "status"],
                                                                   "dreamdb embed"),
    (["--json", "model", "--json", "--help", "status"], "dreamdb model"),
    (["hook", "-h", "--vault", "v", "user-prompt-submit"], "dreamdb hook"),
    (["-h", "--vault", "v", "status"], "dreamdb"), (["--help", "--json"], "dreamdb"),
    (["--help", "--vault", "v"], "dreamdb"), (["-h", "--json", "--vault", "v", "embed", "refresh"], "dreamdb"),
    (["--json", "-h", "--vault=v", "--help", "status"], "dreamdb"),
])
def test_help_among_leading_options_is_the_help_of_the_command_named_so_far(args, usage, capsys):
    """QA round 135-A F6: `dreamdb --vault V -h` said "dreamdb --version has no --vault option", `dreamdb --json -h`
    "No such option '--json'", `dreamdb embed --vault V -h status` that embed takes --vault after its command. -h
    before the command is the program's help, between a group and its subcommand the group's (as click shows for
    `dreamdb embed -h status`). QA round 144-D F3: written before --vault or --json too (`dreamdb -h --vault V
    status` said "No such option '--vault'", `dreamdb --help --json` the same of --json as a JSON error, exit 2)."""
    from dreamdb.entry import main

    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"Usage: {usage} [OPTIONS] COMMAND [ARGS]...") and not err, (out, err)


@pytest.mark.parametrize("args", [["--json", "hook", "user-prompt-submit", "-h"],
                                  ["--vault", "v", "--json", "hook", "user-prompt-submit", "--help"],
                                  ["hook", "user-prompt-submit", "-h"]])
def test_json_before_the_hook_with_help_shows_the_hooks_help(args, capsys):
    """QA round 139-D F9: `dreamdb --json hook user-prompt-submit -h` said "No such option '--json'" (exit 2), where
    without --json it shows the hook's help."""
    from dreamdb.entry import main

    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Usage: dreamdb hook user-prompt-submit [OPTIONS]") and not err, (out, err)


def test_double_dash_after_leading_options_is_as_without_them(tmp_path, monkeypatch, capsys):
    """QA round 135-A F6: `dreamdb --vault V -- status` said "dreamdb --version has no --vault option", `dreamdb
    --json -- status` "No such option '--json'", `dreamdb --json embed -- status` too, where `dreamdb -- status` and
    `dreamdb embed -- status` run status. The options go with the command named after the "--" (QA round 133 F1: the
    vault given, not the current folder's)."""
    from dreamdb.entry import main

    given = tmp_path / "given" / "_dream_context"
    write_doc(given, "knowledge/a.md", "---\ntitle: A\n---\nalpha body\n")
    here = tmp_path / "here" / "_dream_context"
    for name in ("b", "c"):
        write_doc(here, f"knowledge/{name}.md", f"---\ntitle: {name}\n---\nalpha {name}\n")
    monkeypatch.chdir(here.parent)

    def run(*args):
        assert main(list(args)) == 0
        out, err = capsys.readouterr()
        return json.loads(out)

    expected = run("status", "--vault", str(given), "--json")
    assert expected["documents"] == 1 and run("status", "--json")["documents"] == 2
    for args in (["--vault", str(given), "--json", "--", "status"], ["--json", "--", "status", "--vault", str(given)],
                 ["--", "status", "--vault", str(given), "--json"]):
        assert {k: v for k, v in run(*args).items() if k in ("vault", "documents")} == {
            "vault": expected["vault"], "documents": 1}, args
    expected = run("embed", "status", "--vault", str(given), "--json")
    for args in (["--vault", str(given), "--json", "embed", "--", "status"], ["--json", "embed", "--", "status",
                                                                             "--vault", str(given)],
                 ["embed", "--vault", str(given), "--json", "--", "status"]):
        assert run(*args) == expected, args
    hits = run("--json", "--vault", str(given), "--", "recall", "alpha")["hits"]
    assert [h["path"] for h in hits] == [str(given / "knowledge" / "a.md")]
    assert main(["--vault", str(given), "--"]) == 2  # (no command: as without the --)
    assert capsys.readouterr().err.startswith("Error: Missing command: --vault PATH and --json go with a command.")


def test_leading_options_without_a_command_say_the_command_is_missing(capsys):
    """QA round 72-A: `dreamdb --vault examples` said "No such option '--vault'", though --help says it may come
    first; `dreamdb --json` suggested --version."""
    from dreamdb.entry import main

    for args in (["--vault", "examples"], ["--vault"], ["--vault=examples"], ["--vault", "x", "--json"]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.startswith("Error: Missing command: --vault PATH and --json go with a command.") and "status" in err
    assert main(["--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["error"]["exit_code"] == 2 and "Missing command" in err
    assert main(["--version"]) == 0  # (other options: click's, as before)


def test_the_commands_that_take_json_are_the_ones_the_hoist_knows():
    """entry.JSON_COMMANDS is a copy (recall's fast path does not import click): it must match the commands."""
    import click

    from dreamdb.cli import cli
    from dreamdb.entry import JSON_COMMANDS

    from dreamdb.entry import _GROUPS, NO_JSON_COMMANDS

    ctx = click.Context(cli)
    found, every, groups = set(), set(), set()
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        if isinstance(command, click.Group):
            groups.add(name)
        subs = command.commands.items() if isinstance(command, click.Group) else [(None, command)]
        for sub, cmd in subs:
            every.add(f"{name} {sub}" if sub else name)
            if any("--json" in p.opts for p in cmd.params):
                found.add(f"{name} {sub}" if sub else name)
    assert found == set(JSON_COMMANDS)
    assert every - found == set(NO_JSON_COMMANDS)  # (the subcommands a leading --json is not moved to)
    assert groups == set(_GROUPS)


def test_the_root_help_says_vault_and_json_may_come_before_the_command():
    r = CliRunner().invoke(cli, ["--help"])
    assert r.exit_code == 0
    text = " ".join(r.output.split())
    assert "--vault PATH and --json may be given before the command" in text
    assert "dreamdb --vault PATH --json status" in text


def test_text_starting_with_a_dash_is_told_to_go_after_double_dash(capsys):
    """QA round 72-A: `recall -x` and `sql "-- comment"` said only "No such option"; a near option is still
    suggested instead (`--tpo`)."""
    from dreamdb.entry import main

    assert main(["recall", "-x"]) == 2
    assert "No such option '-x'. Text that starts with '-' goes after --: dreamdb recall -- -x" in capsys.readouterr().err
    assert main(["sql", "-- comment"]) == 2
    assert "goes after --: dreamdb sql -- '-- comment'" in capsys.readouterr().err
    # the whole word, which click splits into short options (QA round 94-B F4: "dreamdb recall -- -s" for -sqlite)
    for word in ("-sqlite", "-DEC-0054", "-hybrid"):  # (-h is an option: "-y" fails; QA round 95 F5)
        assert main(["recall", word]) == 2
        assert f"goes after --: dreamdb recall -- {word}\n" in capsys.readouterr().err
    assert main(["recall", "--tpo", "3", "x"]) == 2
    err = capsys.readouterr().err
    assert "'--top'" in err and "goes after --" not in err


def test_a_number_option_given_words_says_a_number_is_wanted(capsys):
    """QA round 102-B: click's ranges said "'abc' is not a valid integer range"; --help still shows INTEGER/FLOAT."""
    from dreamdb.entry import main

    for args, said in ((["recall", "-n", "abc", "x"], "'abc' is not a valid whole number."),
                       (["sql", "--timeout", "soon", "SELECT 1"], "'soon' is not a valid number."),
                       (["embed", "dedup", "--merge", "high", "x"], "'high' is not a valid number.")):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert said in err and "range" not in err.split("Error:")[1], err
    help_text = CliRunner().invoke(cli, ["recall", "--help"]).output
    assert re.search(r"--top INTEGER +Number of hits", help_text), help_text


def test_blank_path_variables_are_unset_and_a_relative_xdg_cache_is_not_used(tmp_path, monkeypatch):
    """QA round 86-B F7-F9: ``DREAMDB_CACHE_DIR=" "`` made a folder named " " in the working folder,
    ``DREAMDB_MODEL_DIR=" "`` and ``DREAMDB_HOOK_LOG=" "`` named files " ", ``DREAMDB_SQLITE_DRIVER=" sqlite3 "`` was
    refused; the lexicon's check markers went to a relative ``XDG_CACHE_HOME`` (the working folder) and ignored
    ``DREAMDB_CACHE_DIR``; ``DREAMDB_INDEX="idx dir/"`` created a file named "idx dir"."""
    from dreamdb import config, hook
    from dreamdb.embeddings import locate
    from dreamdb.errors import UsageError
    from dreamdb.lexicon import _check_marker

    for name in ("DREAMDB_CACHE_DIR", "DREAMDB_MODEL_DIR", "DREAMDB_HOOK_LOG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    default = (config.cache_root(), locate.model_dir_candidate(), hook.log_path())
    for name in ("DREAMDB_CACHE_DIR", "DREAMDB_MODEL_DIR", "DREAMDB_HOOK_LOG"):
        monkeypatch.setenv(name, "  ")
    assert (config.cache_root(), locate.model_dir_candidate(), hook.log_path()) == default
    assert default[1][1] == "default"
    lexicon = tmp_path / "lexicon.sqlite"
    monkeypatch.delenv("DREAMDB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "relc")
    assert _check_marker(lexicon).is_absolute() and "relc" not in _check_marker(lexicon).parts
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _check_marker(lexicon).parent == tmp_path / "xdg" / "dreamdb" / "lexicon-checks"
    monkeypatch.setenv("DREAMDB_CACHE_DIR", str(tmp_path / "own"))
    assert _check_marker(lexicon).parent == tmp_path / "own" / "lexicon-checks"
    for value, hint in (("idx dir/", "idx dir/index.db"), ("d//", "d/index.db"), ("d/.", "d/index.db"),
                        ("d/..", "./index.db")):  # (QA round 87 L2: "d/." made a file named d)
        monkeypatch.setenv("DREAMDB_INDEX", value)
        with pytest.raises(UsageError, match="names a folder") as info:
            config.index_path_for(tmp_path)
        assert info.value.hint == f"Set DREAMDB_INDEX={hint!r}, for instance.", info.value.hint
    monkeypatch.setenv("DREAMDB_INDEX", "idx dir/")
    vault = tmp_path / "v" / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    p = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "sleep", "--vault", str(vault)], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path, env={**os.environ, "DREAMDB_INDEX": "idx dir/"})
    assert p.returncode == 2 and "names a folder" in p.stderr and not (tmp_path / "idx dir").exists(), p.stderr
    env = {k: v for k, v in os.environ.items() if k != "DREAMDB_INDEX"}
    p = subprocess.run([sys.executable, "-m", "dreamdb", "status", "--json", "--vault", str(vault)], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path, env={**env, "DREAMDB_SQLITE_DRIVER": " sqlite3 "})
    assert p.returncode == 0 and json.loads(p.stdout)["sqlite_driver"] == "sqlite3", p.stderr
    # a relative DREAMDB_INDEX from a current folder deleted meanwhile: said, exit 2 (QA round 90-C F10: exit 70); and
    # DREAMDB_CACHE_DIR, read for a status (QA round 122-A F4: exit 70)
    gone = tmp_path / "gone"
    for command, name, value in (("recall sleep", "DREAMDB_INDEX", "rel.db"), ("status", "DREAMDB_CACHE_DIR", "./c")):
        gone.mkdir()
        p = subprocess.run(f"cd {shlex.quote(str(gone))} && rmdir ../gone && exec {shlex.quote(sys.executable)} -m"
                           f" dreamdb {command} --vault {shlex.quote(str(vault))}", shell=True, capture_output=True,
                           text=True, timeout=120, env={**env, name: value, "PYTHONPATH": str(ROOT)})
        assert p.returncode == 2 and f"{name}={value!r} is a relative path, and the current folder no longer exists" \
            in p.stderr, p.stderr


def test_an_empty_path_option_is_refused(capsys, tmp_path, monkeypatch):
    """QA round 94-B F6: ``model build --dest ''`` built into the default folder and ``lexicon build --to ''`` said
    ". is a folder", where ``--vault ''`` says the path is empty. Every path option refuses an empty or blank value."""
    from dreamdb.entry import main

    monkeypatch.chdir(tmp_path)
    for args in (["model", "build", "--dest", ""], ["model", "install", "--dest", " "], ["lexicon", "build", "--to", ""],
                 ["eval", "--cache", ""], ["hook", "install", "--project", ""],
                 # (QA round 95 F6: --vault '' was exit 3 and remember --file '' "Cannot read --file : No such file")
                 ["recall", "--vault", "", "x"], ["recall", "x", "--vault", " ", "--json"], ["status", "--vault", ""],
                 ["remember", "--file", "", "--vault", str(tmp_path)], ["sync", "--vault", "  "]):
        assert main(args) == 2, args
        assert "the path is empty: give a path, or leave the option out." in capsys.readouterr().err, args
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("DREAMDB_EVAL_DATA", " ")  # (95 F6: blamed on --data, which was not given)
    assert main(["eval", "--set", "dreamcontext"]) == 2
    assert "'--data': the path is empty (from DREAMDB_EVAL_DATA): give a path, or unset DREAMDB_EVAL_DATA." \
        in capsys.readouterr().err



_READ_PATHS = [  # (command, option, folder?) of every option that names a file or folder to read
    (["model", "install"], "--from", True),
    (["lexicon", "build"], "--from", True),
    (["hook", "install"], "--project", True),
    (["hook", "uninstall"], "--project", True),
    (["remember"], "--file", False),
    (["update", "sleep-consolidation"], "--content-file", False),
    (["update", "sleep-consolidation"], "--append-file", False),
    (["embed", "dedup", "--title", "x"], "--file", False),
]


@pytest.mark.parametrize("command, option, folder", _READ_PATHS)
def test_a_missing_file_or_folder_an_option_names_is_not_found(command, option, folder, tmp_path, capsys):
    """QA round 130-D F2: the README says exit 7 for "a file or a folder an option names", as hook install --project
    does; model install --from exited 8, lexicon build --from, remember --file, update --content-file/--append-file
    and embed dedup --file 2. Missing, a link to nothing or the other kind: 7, the path and the option named."""
    from dreamdb import quickcli
    from dreamdb.entry import main

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    (tmp_path / "afile").write_text("text\n")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    vault_option = ["--vault", str(vault)] if command[0] in ("remember", "update", "embed") else []
    kind = "folder" if folder else "file"
    what = "project folder" if option == "--project" else kind
    for path, problem in ((tmp_path / "absent", "does not exist"), (tmp_path / "dangling", "is a link to nothing"),
                          (tmp_path / "afile" if folder else tmp_path,
                           "is not a folder" if folder else "is a folder, not a file")):
        try:
            code = main([*command, *vault_option, option, str(path), "--json", *(["text"] * (command == ["remember"]))])
        finally:
            quickcli.JSON_ERRORS = False
        out, err = capsys.readouterr()
        says = f"No {what} at {path} ({option}): the path {problem}."
        assert code == 7 and err.startswith(f"Error: {says}"), (path, err)
        assert json.loads(out)["error"]["message"] == says and json.loads(out)["error"]["exit_code"] == 7
    assert {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()} == before


def test_every_option_that_names_a_path_to_read_is_an_existing_path():
    """No click.Path(exists=True) is left (its "does not exist" is exit 2), and the table above is complete."""
    import click

    from dreamdb.cli.options import ExistingPath

    ctx = click.Context(cli)
    found = set()
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        subs = command.commands.items() if isinstance(command, click.Group) else [(None, command)]
        for sub, cmd in subs:
            for param in cmd.params:
                assert not (isinstance(param.type, click.Path) and param.type.exists), (name, sub, param.name)
                if isinstance(param.type, ExistingPath):
                    found.add((" ".join(filter(None, (name, sub))), param.opts[0]))
    assert found == {(" ".join(c[:2] if c[0] in ("model", "lexicon", "hook", "embed") else c[:1]), o)
                     for c, o, _f in _READ_PATHS}


def test_standard_input_and_a_pipe_are_files_to_read(tmp_path):
    """``-`` and the pipe of a shell's ``<(cmd)`` (a FIFO, not a regular file) pass the check."""
    from dreamdb.vault.discover import path_problem

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert path_problem(fifo, folder=False) is None and path_problem(tmp_path, folder=True) is None
    assert path_problem(fifo, folder=True) == "is not a folder"
    (tmp_path / "link").symlink_to(fifo)  # (a link to a file is no "link to nothing": it was, for --project)
    assert path_problem(tmp_path / "link", folder=True) == "is not a folder"
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert path_problem(loop / "x", folder=False) == f"goes through a symlink loop: {loop} is a link that leads back" \
                                                     " to itself"
    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    p = subprocess.run([sys.executable, "-m", "dreamdb", "remember", "--vault", str(vault), "--file", "-", "--json"],
                       input="From standard input.", capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and json.loads(p.stdout)["description"] == "From standard input.", p.stderr


def test_a_vault_path_that_is_a_symlink_loop_is_named_as_one(tmp_path):
    """QA round 100-A F7: ``--vault`` naming a symlink loop was said not to exist."""
    from dreamdb.errors import VaultNotFound
    from dreamdb.vault.discover import find_vault

    loop = tmp_path / "loopv"
    loop.symlink_to("loopv")
    with pytest.raises(VaultNotFound, match=re.escape(f"Vault path {loop} is a symlink loop")):
        find_vault(loop)
    with pytest.raises(VaultNotFound, match=re.escape(f"Vault path does not exist: {tmp_path / 'gone'}")):
        find_vault(tmp_path / "gone")


def test_vault_given_to_a_command_that_reads_no_vault_says_so(capsys):
    """QA round 104-B F11: `dreamdb --vault X model status` (the root help says --vault may come before the command)
    said only "No such option '--vault'"."""
    from dreamdb.entry import main

    for args, name in ((["--vault", "examples", "model", "status"], "model status"),
                       (["lexicon", "status", "--vault", "x"], "lexicon status"),
                       (["--version", "--vault", "x"], "--version"),  # QA round 123-A F2: "dreamdb dreamdb"
                       (["--vault", "x", "--version"], "--version")):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert f"Error: dreamdb {name} has no --vault option (it reads no vault's index): leave it out." in err, err


def test_vault_given_to_eval_says_it_has_none_and_suggests_no_other_option(capsys):
    """QA round 147-B F7: `dreamdb --vault X eval -h` said click's "No such option '--vault'. Did you mean '--data'?",
    where every other command without --vault says so in its own words: the tailored message was given only when
    click found no option close to --vault. Every command without it, before or after its name."""
    from dreamdb.entry import main

    said = "Error: dreamdb eval has no --vault option (it scores its own sets, found under --data): leave it out."
    for args in (["--vault", "x", "eval", "-h"], ["--vault", "x", "eval", "--set", "scifact", "--quick"],
                 ["eval", "--vault", "x"], ["eval", "--vault=x"], ["--vault=x", "--json", "eval"]):
        assert main(args) == 2, args
        out, err = capsys.readouterr()
        assert said in err and "Did you mean" not in err and "No such option" not in err, (args, err)
        if "--json" in args:
            assert json.loads(out)["error"]["message"] == said.removeprefix("Error: ")
    for name in ("model status", "model build", "model install", "model download", "lexicon status", "lexicon build",
                 "hook install", "hook uninstall"):
        assert main(["--vault", "x", *name.split(), "-h"]) == 2, name
        err = capsys.readouterr().err
        assert f"Error: dreamdb {name} has no --vault option (it reads no vault's index): leave it out." in err, err


def test_a_non_blocking_output_pipe_gets_the_whole_output(tmp_path):
    """QA round 114-B F1: given a pipe with O_NONBLOCK set (as Node-based harnesses hand theirs over), CPython's
    buffered writer dropped what the full pipe did not take: the output was cut at 64 KiB (broken JSON), exit 0."""
    import fcntl
    import subprocess
    import sys
    import termios

    vault = tmp_path / "_dream_context"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "_dream_context", vault,
                    ignore=shutil.ignore_patterns(".dreamdb"))
    rows = 300  # 300 rows of 1,000 characters: past any pipe's capacity
    query = (f"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {rows}) "
             "SELECT i, printf('%.*c', 1000, 'x') AS pad FROM c")
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    p = subprocess.Popen([sys.executable, "-m", "dreamdb", "sql", "--vault", str(vault), "--format", "json", query],
                         stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    waiting = bytearray(4)
    deadline = time.monotonic() + 120
    while p.poll() is None and time.monotonic() < deadline:  # until the pipe is full (or the command has ended)
        fcntl.ioctl(read_end, termios.FIONREAD, waiting)
        if int.from_bytes(waiting, sys.byteorder) >= 65536:
            break
        time.sleep(0.05)
    with os.fdopen(read_end, "rb") as r:
        out = r.read()
    assert p.wait(timeout=120) == 0, p.stderr.read()
    p.stderr.close()
    data = json.loads(out)
    assert len(data) == rows and data[-1]["i"] == rows and data[-1]["pad"] == "x" * 1000


def test_numbers_of_variables_and_options_are_written_in_ascii_digits(monkeypatch, tmp_path):
    """QA round 152-F F7: DREAMDB_LOCK_TIMEOUT took 1_000 and '٣' (Python's float()), where README says a number ≥ 0
    (60, 2.5) and anything else exits 2; DREAMDB_EMBED_THREADS (int()) and every number option (click's float and
    int) took them too. Numbers are written in ASCII digits (a sign, a fraction and an exponent as ever)."""
    from click.testing import CliRunner

    from dreamdb.arguments import written_number
    from dreamdb.cli import cli
    from dreamdb.embeddings.model import resolve_threads
    from dreamdb.errors import UsageError
    from dreamdb.writes.files import env_lock_timeout

    for good, number in (("60", 60.0), (" 2.5 ", 2.5), ("0", 0.0), ("1e1", 10.0), (".5", 0.5), ("3.", 3.0)):
        monkeypatch.setenv("DREAMDB_LOCK_TIMEOUT", good)
        assert env_lock_timeout() == number
    for bad in ("1_000", "\u0663", "\u0969", "１０", "inf", "nan", "-1", "0x10", "1e", "¹"):
        monkeypatch.setenv("DREAMDB_LOCK_TIMEOUT", bad)
        with pytest.raises(UsageError, match=re.escape(f"DREAMDB_LOCK_TIMEOUT={bad!r} is not a number")):
            env_lock_timeout()
        assert not written_number(bad, whole=True) or bad == "-1"
    monkeypatch.setenv("DREAMDB_EMBED_THREADS", " 3 ")
    assert resolve_threads(None) == 3
    for bad in ("1_0", "\u0662", "2.0", "+"):
        monkeypatch.setenv("DREAMDB_EMBED_THREADS", bad)
        with pytest.raises(UsageError, match="is not a whole number"):
            resolve_threads(None)
    runner = CliRunner()
    vault = tmp_path / "_dream_context"
    vault.mkdir()
    for args, said in ((["recall", "--top", "1_0", "x"], "'1_0' is not a valid whole number."),
                       (["recall", "--top", "\u0663", "x"], "'\u0663' is not a valid whole number."),
                       (["sql", "--timeout", "1_0", "SELECT 1"], "'1_0' is not a valid number."),
                       (["embed", "dedup", "--title", "t", "--merge", "\u0660.\u0669\u0669"],
                        "'\u0660.\u0669\u0669' is not a valid number.")):
        res = runner.invoke(cli, [*args, "--vault", str(vault)] if args[0] == "embed" else
                            [args[0], "--vault", str(vault), *args[1:]])
        assert res.exit_code == 2 and said in res.output, (args, res.output)
    res = runner.invoke(cli, ["sql", "--vault", str(vault), "--timeout", " 5", "--max-rows", "+3", "SELECT 7 AS x"])
    assert res.exit_code == 0 and "7" in res.output, res.output


def test_a_number_option_too_small_to_be_told_from_0_is_refused(tmp_path):
    """QA round 153-A F2: ``sql --timeout 1e-400`` ran with no time limit: Python's float reads 1e-400 as 0.0, which
    --timeout takes for no limit, the opposite of the tiny limit written. A number option refuses a number with a
    digit other than 0 that a float reads as 0 (exit 2, saying so); 0 written any way, and the smallest float, stay
    numbers."""
    from click.testing import CliRunner

    from dreamdb.arguments import reads_as_zero
    from dreamdb.cli import cli

    assert all(reads_as_zero(t) for t in ("1e-400", "-1e-400", " 2.5E-330 ", ".1e-324", "+9e-999999"))
    assert not any(reads_as_zero(t) for t in ("0", "0.0", "0e-400", "-0", "00.000e5", "5e-324", "1e-300", "1e400",
                                              "abc", "1_0", "inf", "nan", ""))
    runner = CliRunner()
    vault = tmp_path / "_dream_context"
    vault.mkdir()
    for args, number in ((["sql", "--vault", str(vault), "--timeout", "1e-400", "SELECT 7 AS x"], "1e-400"),
                         (["sql", "--vault", str(vault), "--timeout", "-1E-400", "SELECT 7 AS x"], "-1E-400"),
                         (["embed", "dedup", "--vault", str(vault), "--title", "t", "--merge", "1e-999"], "1e-999")):
        res = runner.invoke(cli, args)
        assert res.exit_code == 2, (args, res.output)
        assert f"{number!r} is too small to be told from 0: give 0, or a number at least 5e-324 from it." in res.output, (
            res.output)
    for timeout in ("0", "0e-400"):  # (no time limit)
        res = runner.invoke(cli, ["sql", "--vault", str(vault), "--timeout", timeout, "SELECT 7 AS x"])
        assert res.exit_code == 0 and "7" in res.output, (timeout, res.output)
    for timeout in ("5e-324", "1e-300"):  # (a limit: the query runs, or is stopped at once, exit 1)
        res = runner.invoke(cli, ["sql", "--vault", str(vault), "--timeout", timeout, "SELECT 7 AS x"])
        assert res.exit_code in (0, 1) and "too small" not in res.output, (timeout, res.output)


def _single_value_options():
    """(command words, option strings) of every option of every command that takes one value, not repeatable."""
    import click

    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        subs = command.commands.items() if isinstance(command, click.Group) else [(None, command)]
        for sub, cmd in subs:
            for param in cmd.params:
                if isinstance(param, click.Option) and not (param.multiple or param.is_flag or param.count):
                    yield [name, *filter(None, [sub])], param.opts


def test_every_single_value_option_given_twice_is_refused_with_both_values():
    """QA round 153-F F1: a repeat of a single-value option kept the last value alone, silently (``update --append
    FIRST --append SECOND`` appended SECOND alone; ``list --level 3 --level 1`` listed level 1). Every command's such
    options are refused (exit 2), the message naming the option and the values, before anything runs."""
    runner = CliRunner()
    found = list(_single_value_options())
    assert len(found) > 35 and (["update"], ["--append"]) in found and (["recall"], ["--top", "-n"]) in found
    for words, opts in found:
        for spelling in {opts[0], opts[-1]}:
            r = runner.invoke(cli, [*words, spelling, "one", opts[-1], "two"])
            assert r.exit_code == 2, (words, spelling, r.output)
            assert f"Error: {'/'.join(opts)} was given twice ('one', 'two'): it takes one value; give it once." \
                in " ".join(r.output.split()), (words, spelling, r.output)
    r = runner.invoke(cli, ["list", "--level", "3", "--level", "1", "--level", "2"])
    assert r.exit_code == 2 and "--level was given 3 times ('3', '1', '2')" in r.output, r.output
    r = runner.invoke(cli, ["update", "x", "--append", "a" * 100, "--append", "b"])
    assert f"({'a' * 39 + '…'!r}, 'b')" in r.output, r.output  # (a long text cut in the message)


def test_help_beside_a_repeated_single_value_option_is_the_help(tmp_path):
    """QA round 154-A F4: ``list --level 1 --level 2 --help`` (``sql --timeout 1 --timeout 2 -h``) was the repeat's
    usage error, exit 2, where ``list --level abc --help`` shows the help (click's --help is eager). Every command's
    single-value options given twice beside --help or -h, before or after the repeat: the help, exit 0; recall
    through the real entry point too (its fast path leaves --help to click). Without it, still refused."""
    runner = CliRunner()
    found = list(_single_value_options())
    assert len(found) > 35
    for words, opts in found:
        usage = f"Usage: dreamdb {' '.join(words)} [OPTIONS]"
        for help_option, where in (("--help", -1), ("-h", 1)):
            args = [opts[0], "one", opts[-1], "two"]
            args.insert(len(args) if where < 0 else 2, help_option)
            r = runner.invoke(cli, [*words, *args], prog_name="dreamdb")
            assert r.exit_code == 0 and r.output.startswith(usage), (words, args, r.output)
            assert "given twice" not in r.output, (words, args, r.output)
    vault = tmp_path / "_dream_context"
    vault.mkdir()
    for args in (["recall", "-n", "3", "-n", "4", "--help"], ["recall", "--vault", str(vault), "-n", "3", "--top", "4",
                                                              "--json", "hook", "-h"],
                 ["list", "--level", "1", "--level", "2", "--help"], ["sql", "--timeout", "1", "--timeout", "2", "-h"]):
        p = subprocess.run([sys.executable, "-m", "dreamdb", *args], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and p.stdout.startswith(f"Usage: dreamdb {args[0]} [OPTIONS]"), (args, p.stderr)
        assert p.stderr == "", (args, p.stderr)
    p = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--vault", str(vault), "-n", "3", "-n", "4", "--",
                        "--help"], capture_output=True, text=True, timeout=120)  # (a query, not the option)
    assert p.returncode == 2 and "--top/-n was given twice ('3', '4')" in p.stderr, p.stderr


def test_an_eager_option_that_does_not_end_the_command_leaves_the_repeat_refused():
    """QA round 154-A F4: a repeat beside an eager option waits for it (--help ends the command first); an eager
    option that lets the command run does not let the repeat through: refused before the command runs."""
    import click

    from dreamdb.cli.options import refuse_repeats

    ran = []

    @click.command()
    @click.option("--top", type=int)
    @click.option("--verbose", is_flag=True, is_eager=True)
    def cmd(top, verbose):
        ran.append(top)

    refuse_repeats(cmd)
    res = CliRunner().invoke(cmd, ["--top", "1", "--top", "2", "--verbose"])
    assert res.exit_code == 2 and "--top was given twice ('1', '2')" in res.output and ran == [], res.output
    res = CliRunner().invoke(cmd, ["--top", "2", "--verbose"])
    assert res.exit_code == 0 and ran == [2], res.output


def test_repeatable_options_still_add_up_and_a_repeated_write_option_changes_nothing(tmp_path):
    """QA round 153-F F1: refused repeats leave the file as it was (the earlier text was lost); the options meant
    to repeat keep working: recall's --vault, the list filters, remember's -r and --author, eval's --set; update's
    --tags and eval's --modes (comma lists) now add up as the list filters do."""
    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    note = vault / "knowledge" / "release-checklist.md"
    before = note.read_bytes()
    runner = CliRunner()
    r = runner.invoke(cli, ["update", "--vault", str(vault), "knowledge/release-checklist", "--append", "FIRST line",
                            "--append", "SECOND line"])
    assert r.exit_code == 2 and "--append was given twice ('FIRST line', 'SECOND line')" in r.output, r.output
    assert note.read_bytes() == before
    changelog = vault / "core" / "CHANGELOG.json"
    entries = changelog.read_bytes()
    r = runner.invoke(cli, ["remember", "--vault", str(vault), "--scope", "a", "--scope", "b", "t"])
    assert r.exit_code == 2 and "--scope was given twice ('a', 'b')" in r.output and changelog.read_bytes() == entries
    r = runner.invoke(cli, ["update", "--vault", str(vault), "knowledge/release-checklist", "--tags", "alpha",
                            "--tags", "beta,gamma", "--json"])
    assert r.exit_code == 0, r.output
    assert "tags: [alpha, beta, gamma]\n" in note.read_text(encoding="utf-8")
    r = runner.invoke(cli, ["remember", "--vault", str(vault), "-r", "file:a.py", "-r", "file:b.py", "--author", "x",
                            "--author", "y", "--json", "two refs"])
    assert r.exit_code == 0, r.output
    entry = json.loads(r.output)
    assert entry["references"] == ["file:a.py", "file:b.py"] and entry["authors"] == ["x", "y"], entry
    r = runner.invoke(cli, ["list", "--vault", str(vault), "--json", "-t", "feature", "-t", "task"])
    assert r.exit_code == 0 and {d["type"] for d in json.loads(r.output)} == {"feature", "task"}, r.output
    other = tmp_path / "other" / "_dream_context"
    shutil.copytree(vault, other)
    r = runner.invoke(cli, ["recall", "--vault", str(vault), "--vault", str(other), "--json", "-n", "50", "release"])
    assert r.exit_code == 0 and len({h["vault"] for h in json.loads(r.output)["hits"]}) == 2, r.output
    from dreamdb.cli.evaluate import evaluate

    ctx = evaluate.make_context("eval", ["--modes", "bm25", "--modes", "dense,rrf", "--set", "eips", "--set",
                                         "scifact"])
    assert ctx.params["modes"] == ("bm25", "dense,rrf") and ctx.params["sets"] == ("eips", "scifact")


def test_update_tags_given_empty_more_than_once_clears_them_and_blank_repeats_are_quoted_as_typed(tmp_path, capsys):
    """QA round 154-A F5: ``update --tags '' --tags ''`` was refused as "The tags ',' name no tag", a text the user
    never typed (the repeats joined with a comma). Every value empty clears the tags as one ``''`` does; repeats of
    blanks and commas alone are refused quoting each value as given, as recall and list word theirs, the file
    untouched."""
    from dreamdb.entry import main

    notes = {}
    for name in ("once", "twice"):
        vault = tmp_path / name / "_dream_context"
        shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
        notes[name] = vault / "knowledge" / "release-checklist.md"
        assert "tags: [process, release]\n" in notes[name].read_text(encoding="utf-8")
    vault = notes["twice"].parent.parent
    before = notes["twice"].read_bytes()

    def update(folder, *tags):
        code = main(["update", "--vault", str(folder), "knowledge/release-checklist", "--json",
                     *[a for t in tags for a in ("--tags", t)]])
        out, err = capsys.readouterr()
        return code, json.loads(out), err

    for tags, said in (([" ", ""], "(--tags ' ' --tags '' on the command line) name no tag (only blank characters)"),
                       ([",", "", " "], "(--tags ',' --tags '' --tags ' ' on the command line) name no tag (only commas"
                                        " and blanks)")):
        code, doc, err = update(vault, *tags)
        message = f"The tags given {said}; nothing was changed."
        assert code == 2 and doc["error"]["message"] == message and f"Error: {message}" in err, (code, doc, err)
        assert notes["twice"].read_bytes() == before
    code, doc, err = update(notes["once"].parent.parent, "")
    assert code == 0 and doc["previous_version"], (doc, err)
    code, doc, err = update(vault, "", "")
    assert code == 0 and doc["previous_version"], (doc, err)
    cleared = notes["twice"].read_text(encoding="utf-8")
    assert "process" not in cleared.split("---")[1], cleared
    assert cleared.split("\n")[:6] == notes["once"].read_text(encoding="utf-8").split("\n")[:6]
    code, doc, err = update(vault, "", "alpha", "")
    assert code == 0 and "tags: [alpha]\n" in notes["twice"].read_text(encoding="utf-8"), (doc, err)


def test_minus_infinity_is_a_number_refused_by_the_range_as_minus_1_is(tmp_path):
    """QA round 153-H F2: ``sql --timeout -inf`` and ``embed dedup --merge -inf`` were said to be no number
    ("'-inf' is not a valid number.") where ``inf`` is one (no time limit) and ``-1`` is refused by the option's range:
    ``-inf`` is a number, refused by the range too (exit 2)."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    runner = CliRunner()
    vault = tmp_path / "_dream_context"
    vault.mkdir()
    for args in (["sql", "--vault", str(vault), "--timeout", "-inf", "SELECT 7 AS x"],
                 ["sql", "--vault", str(vault), "--timeout", " -Infinity", "SELECT 7 AS x"],
                 ["embed", "dedup", "--vault", str(vault), "--title", "t", "--merge", "-inf"]):
        res = runner.invoke(cli, args)
        assert res.exit_code == 2, (args, res.output)
        assert "is not a valid number" not in res.output and "not in the range" in res.output, (args, res.output)
    res = runner.invoke(cli, ["sql", "--vault", str(vault), "--timeout", "-1_0", "SELECT 7 AS x"])
    assert res.exit_code == 2 and "'-1_0' is not a valid number." in res.output, res.output


def test_a_click_without_the_parser_tables_the_repeat_check_reads_parses_as_click_does():
    """The repeat check (:func:`dreamdb.cli.options.refuse_repeats`, QA round 153-F F1) reads click's parser tables,
    which are not click's API: where a click has none, a command parses as click parses it (the last value kept),
    rather than every command failing on an AttributeError."""
    import click
    from click.testing import CliRunner

    from dreamdb.cli.options import refuse_repeats

    @click.command()
    @click.option("--top", type=int)
    def cmd(top):
        click.echo(f"top={top}")

    refuse_repeats(cmd)
    assert "given twice" in CliRunner().invoke(cmd, ["--top", "1", "--top", "2"]).output
    plain = click.Command.make_parser

    class Parser:  # (click's parser, its option tables kept under names of its own)
        def __init__(self, parser):
            self.parser = parser

        def __getattr__(self, name):
            if name in ("_long_opt", "_short_opt"):
                raise AttributeError(name)
            return getattr(self.parser, name)

    def without_tables(self, ctx):
        return Parser(plain(self, ctx))

    @click.command(cls=type("Bare", (click.Command,), {"make_parser": without_tables}))
    @click.option("--top", type=int)
    def bare(top):
        click.echo(f"top={top}")

    refuse_repeats(bare)
    res = CliRunner().invoke(bare, ["--top", "1", "--top", "2"])
    assert res.exit_code == 0 and res.output == "top=2\n", res.output


def test_a_commands_own_refusals_have_a_hint_and_name_its_options(tmp_path, capsys, monkeypatch):
    """QA round 156-D F3: errors from the commands' own checks had "hint": null (docs/json.md: null only for an
    option parsing's usage errors), and the library's checks named its parameters, not the command's options
    (``remember --type ''``: "type must be a non-empty string.", ``model download --timeout nan``: "timeout must be
    …"). Each has a hint now, and names the option (:func:`dreamdb.errors.naming_params`)."""
    from dreamdb.entry import main

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "x.md").write_text("---\ntitle: X\n---\nbody\n", encoding="utf-8")
    (tmp_path / "F").write_text("text\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    v = ["--vault", str(vault)]
    for args, message in (
            (["update", "x", "--content", "a", "--append", "b", *v], "Give either --content (replace the body) or"
                                                                     " --append, not both; nothing was changed."),
            (["update", "x", "--content-file", "F", "--append", "b", *v], "Give either --content-file"),
            (["embed", "dedup", "--title", "a", "--file", "F", "--stdin", *v], "Give the content with --file or"
                                                                               " --stdin, not both."),
            (["hook", "install", "--project", str(tmp_path), "--command", "x", "--absolute"],
             "Give --command or --absolute, not both."),
            (["remember", "--type", "", "hi", *v], "--type must be a non-empty string."),
            (["remember", "--author", "", "hi", *v], "--author must be a non-empty string."),
            (["remember", "--scope", "a\tb", "hi", *v], "--scope must be one line of text"),
            (["remember", "--type", "x" * 100, "hi", *v], "--type is 100 characters long"),
            (["update", "x", "--status", "a\nb", *v], "--status must be one line."),
            (["update", "x", "--append", " ", *v], "Nothing to append."),
            (["embed", "dedup", "--title", "a", "--review", "nan", *v], "--review must be a number, got nan"),
            (["sql", "--timeout", "nan", "SELECT 1", *v], "--timeout must be 0 (no limit) or more seconds, not nan."),
            (["sql", "SELECT load_extension('x')", *v], "Loading extensions is refused"),
            (["model", "download", "--timeout", "nan", "--dest", str(tmp_path / "m")],
             "--timeout must be a positive number of seconds, got nan"),
    ):
        assert main([*args, "--json"]) == 2, args
        error = json.loads(capsys.readouterr().out)["error"]
        assert error["message"].startswith(message) and error["hint"], (args, error)
        assert not re.match(r"(type|author|scope|status|timeout|content|append) ", error["message"]), error
    assert not (vault / "core").exists()  # (nothing remembered)
