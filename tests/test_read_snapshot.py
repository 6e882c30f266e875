"""A recall reads one state of the index while another process syncs it.

The interfering process is played by a second ``Index`` on the same file (its own SQLite
connection) committing a sync at the worst moment: after the ranking, before the hits' rows are
read, or while the memory engine loads its caches. Before read snapshots, these raised
``KeyError`` (a returned row was gone) or ``IndexError`` (postings of a document the cached
document table did not hold), surfacing as exit 70 from the CLI.
"""

from __future__ import annotations

import os

import pytest

import dreamdb
from dreamdb.api import Index
from dreamdb.ranking.memory import MemoryEngine
from dreamdb.ranking.rank import plan_query
from dreamdb.store.connect import read_snapshot
from tests.conftest import write_doc


def _vault(tiny_vault):
    for i in range(6):
        write_doc(tiny_vault, f"knowledge/gerbil-{i}.md", f"---\ntitle: Gerbil {i}\n---\ngerbil care sheet {i}\n")
    return tiny_vault


def _interfere(vault, remove: list[str], add: dict[str, str]) -> None:
    """Change the vault and commit a sync through another connection."""
    for rel in remove:
        (vault / rel).unlink()
    for rel, text in add.items():
        write_doc(vault, rel, text)
    other = dreamdb.open(vault)
    other.sync()
    other.close()


@pytest.mark.parametrize("engine", ["sql", "memory"])
def test_rows_deleted_between_ranking_and_hit_rows_do_not_break_recall(tiny_vault, engine):
    vault = _vault(tiny_vault)
    fired = []

    class RacingIndex(Index):
        def _rank(self, plan, **kw):
            ranked = super()._rank(plan, **kw)
            if not fired:  # another process deletes every document the ranking returned
                fired.append(True)
                _interfere(vault, [f"knowledge/gerbil-{i}.md" for i in range(6)], {})
            return ranked

    index = RacingIndex(vault, engine=engine, auto_sync=False)
    index.sync()
    hits = index.recall("gerbil care", top=10)
    assert fired
    # the ranking's snapshot: every document as it was when the query started, with its title
    assert sorted(h.title for h in hits) == [f"Gerbil {i}" for i in range(6)]
    # the next query sees the sync the other process committed
    assert index.recall("gerbil care", top=10) == []
    index.close()


def test_memory_engine_loads_documents_and_postings_from_one_state(tiny_vault, monkeypatch):
    vault = _vault(tiny_vault)
    index = dreamdb.open(vault, auto_sync=False)
    index.sync()
    assert len(index.recall("gerbil", top=50)) == 6  # the document arrays are loaded; postings term by term
    original = MemoryEngine._preload
    fired = []

    def preload_after_a_commit(self):
        if not fired:  # every posting is being read; another process adds documents (and postings) now
            fired.append(True)
            _interfere(vault, [], {f"knowledge/hamster-{i}.md": f"gerbil hamster {i}\n" for i in range(40)})
        original(self)

    monkeypatch.setattr(MemoryEngine, "_preload", preload_after_a_commit)
    index.warm()
    assert fired and index._memory.self_contained
    # the postings loaded are those of the state the document arrays hold
    assert len(index._memory.rank(plan_query("gerbil"), top=50, now_days=20683.0, probe=False)) == 6
    assert len(index.recall("gerbil", top=50)) == 46  # reloaded: the other process's commit is seen now
    index.close()


def test_postings_read_term_by_term_come_from_the_state_the_documents_were_loaded_from(tiny_vault, monkeypatch):
    """A ranking that reads each term's postings as it goes (an index state that has not served enough
    queries to be loaded whole) reads them in one snapshot with the probe that found the state unchanged:
    a commit in between must not give postings of documents the engine does not know."""
    vault = _vault(tiny_vault)
    index = dreamdb.open(vault, auto_sync=False)
    index.sync()
    assert len(index.recall("care", top=50)) == 6  # loads the document arrays and one term's postings
    original = MemoryEngine._term
    fired = []

    def term_after_a_commit(self, term):
        if not fired:  # the probe found the index unchanged; another process commits before the postings are read
            fired.append(True)
            _interfere(vault, [], {f"knowledge/hamster-{i}.md": f"gerbil hamster {i}\n" for i in range(40)})
        return original(self, term)

    monkeypatch.setattr(MemoryEngine, "_term", term_after_a_commit)
    hits = index.recall("gerbil", top=50)
    assert fired and sorted(h.title for h in hits) == [f"Gerbil {i}" for i in range(6)]
    assert len(index.recall("gerbil", top=50)) == 46
    index.close()


def test_read_snapshot_nests_and_ends_on_a_closed_connection(tiny_vault):
    index = dreamdb.open(_vault(tiny_vault), auto_sync=False)
    index.sync()
    conn = index.conn
    with read_snapshot(conn):
        assert conn.in_transaction
        with read_snapshot(conn):  # nested: the outer snapshot goes on
            conn.execute("SELECT count(*) FROM documents").fetchone()
        assert conn.in_transaction
    assert not conn.in_transaction
    with read_snapshot(conn):
        conn.execute("SELECT 1").fetchone()
        index.close()  # a rebuild closes the connection inside a snapshot: leaving it must not raise


def _posix_locks_in(proc_locks: str, ino: int, pid: int) -> list[tuple[str, ...]]:
    """The POSIX locks process ``pid`` holds on inode ``ino`` in the text of /proc/locks (Linux), each as its
    fields after the ordinal (``POSIX ADVISORY READ <pid> <dev:inode> <start> <end>``), sorted.

    A line starts with its place in the system-wide list (``5: POSIX …``), which moves when another
    process takes or drops a lock, so whole lines made the test flaky (QA round 54 L12: ['2: POSIX …'] ==
    ['5: POSIX …']); a lock others wait on is followed by their lines marked ``->``, which are not ours."""
    locks = []
    for line in proc_locks.splitlines():
        fields = line.split()[1:]  # without the ordinal
        if (len(fields) >= 7 and fields[0] == "POSIX" and fields[3] == str(pid)
                and fields[4].rsplit(":", 1)[-1] == str(ino)):
            locks.append(tuple(fields))
    return sorted(locks)


def _posix_locks_on(path) -> list[tuple[str, ...]]:
    """This process's POSIX locks on ``path`` (:func:`_posix_locks_in`)."""
    with open("/proc/locks", encoding="ascii") as fh:
        return _posix_locks_in(fh.read(), os.stat(path).st_ino, os.getpid())


def test_a_lock_is_the_same_lock_when_other_processes_move_its_place_in_proc_locks():
    """QA round 54 L12: the lock test compared whole /proc/locks lines, whose first field is the lock's place in
    the system-wide list: another process's lock moved it from 2 to 5 and the test failed."""
    before = "1: POSIX  ADVISORY  WRITE 999 00:2f:77 0 EOF\n2: POSIX  ADVISORY  READ 4242 00:2f:12345 128 128\n"
    after = ("1: FLOCK  ADVISORY  WRITE 777 00:2f:88 0 EOF\n1: -> POSIX  ADVISORY  WRITE 4242 00:2f:12345 128 128\n"
             "5: POSIX  ADVISORY  READ 4242 00:2f:12345 128 128\n6: POSIX  ADVISORY  READ 4243 00:2f:12345 128 128\n")
    held = _posix_locks_in(before, 12345, 4242)
    assert held == [("POSIX", "ADVISORY", "READ", "4242", "00:2f:12345", "128", "128")]
    assert _posix_locks_in(after, 12345, 4242) == held  # a waiter's "->" line and another pid's lock are not ours


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux /proc/locks to see POSIX locks")
def test_a_second_index_in_the_process_keeps_the_first_ones_sqlite_locks(tiny_vault):
    """POSIX locks belong to the process: opening and closing the index file in Python (to read its
    header) beside a live connection released SQLite's shared lock, after which another process's
    sync could rewrite pages under it (QA round 17: "database disk image is malformed", a rebuild,
    every vector lost)."""
    from dreamdb import config

    vault = _vault(tiny_vault)
    first = dreamdb.open(vault, engine="sql")
    first.recall("gerbil")
    held = _posix_locks_on(first.index_path)
    assert held, "SQLite holds a shared lock on a WAL database it has open"
    second = dreamdb.open(vault)
    assert second.recall("gerbil")
    assert config.index_file_kind(first.index_path) == "dreamdb"
    assert _posix_locks_on(first.index_path) == held
    first.close()
    second.close()
    assert config.index_file_kind(first.index_path) == "dreamdb"  # closed: read from the header again
