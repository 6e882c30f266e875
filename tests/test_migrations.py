"""Numbered SQL migrations: applied once, in order, version recorded in the index."""

from __future__ import annotations

from dreamdb.store import connect as db
from dreamdb.store.migrations import available, current_version, latest_version, migrate


def test_migrations_apply_once_in_order(tmp_path):
    conn = db.connect(tmp_path / "i.db")
    applied = migrate(conn)
    versions = [v for v, _n, _p in available()]
    assert applied == versions == sorted(versions) and versions[0] == 1
    assert current_version(conn) == latest_version()
    assert migrate(conn) == []
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    assert {"documents", "postings", "files", "terms", "corpus_stats", "schema_migrations"} <= names


def test_connection_pragmas(tmp_path):
    conn = db.connect(tmp_path / "i.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == db.BUSY_TIMEOUT_MS
