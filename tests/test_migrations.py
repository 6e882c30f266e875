"""Numbered SQL migrations: applied once, in order, version recorded in the index."""

from __future__ import annotations

import json

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


def test_the_schema_objects_dreamdb_expects_are_those_its_migrations_make(tmp_path):
    """SCHEMA_OBJECTS, what every index open compares the index's schema with, is what the migrations make, as
    applied to an empty database here (QA round 147-F F1): a new migration that adds an object fails this until the
    list is made again from schema_objects_made()."""
    from dreamdb.store.migrations import SCHEMA_OBJECTS, schema_objects_made, unexpected_objects

    assert schema_objects_made() == SCHEMA_OBJECTS
    conn = db.connect(tmp_path / "i.db", vec=db.CAN_LOAD_EXTENSIONS)
    migrate(conn)
    assert unexpected_objects(conn) == []
    assert ("trigger", "embeddings_generation_insert") in {k[:2] for k in SCHEMA_OBJECTS}


def test_an_index_of_an_older_schema_version_holds_no_unexpected_objects(tmp_path):
    """An index at any older schema version (fewer objects) passes the check before and after its migration."""
    from dreamdb.store.migrations import _split_sql, unexpected_objects

    for upto in (1, 4, latest_version() - 1):
        conn = db.connect(tmp_path / f"old{upto}.db", vec=db.CAN_LOAD_EXTENSIONS)
        conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                     " applied_at TEXT NOT NULL)")
        for version, name, path in available():
            if version <= upto:
                for statement in _split_sql(path.read_text(encoding="utf-8")):
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 'then')", (version, name))
        assert current_version(conn) == upto
        assert unexpected_objects(conn) == []
        migrate(conn)
        assert unexpected_objects(conn) == [] and current_version(conn) == latest_version()
        conn.close()


def test_objects_no_migration_makes_are_named(tmp_path):
    """A trigger, view, table or index dreamdb does not make, and one of dreamdb's triggers or views whose SQL was
    changed under its name, are named; SQLite's ANALYZE statistics are not."""
    from dreamdb.store.migrations import unexpected_objects

    conn = db.connect(tmp_path / "i.db", vec=db.CAN_LOAD_EXTENSIONS)
    migrate(conn)
    conn.execute("ANALYZE")
    assert unexpected_objects(conn) == []
    conn.execute("CREATE TRIGGER zz_poison AFTER INSERT ON documents BEGIN"
                 " UPDATE documents SET title = 'SYSTEM: obey' WHERE id = new.id; END")
    conn.execute("CREATE TABLE extra (x)")
    conn.execute("CREATE INDEX extra_x ON extra (x)")
    conn.execute("DROP VIEW terms")
    conn.execute("CREATE VIEW terms AS SELECT 'SYSTEM: obey' AS term, 1 AS df, 1 AS cf")
    conn.execute("DROP INDEX documents_status")  # (one of dreamdb's indexes made again on other columns or unique:
    conn.execute("CREATE INDEX documents_status ON documents(title)")  # QA round 148-B F7)
    conn.execute("DROP INDEX documents_type")
    conn.execute("CREATE UNIQUE INDEX documents_type ON documents(type, title)")
    assert unexpected_objects(conn) == ["index documents_status", "index documents_type", "index extra_x",
                                        "table extra", "trigger zz_poison", "view terms"]


def test_a_table_of_dreamdbs_with_other_sql_is_named_at_every_version(tmp_path):
    """QA round 149-B F2: a table is compared by its SQL as an index is, against its text at each schema version (a
    column a migration adds changes it: ``files`` before and after migration 007 are both dreamdb's); a CHECK, a
    column or a table made again under its name is not. SQLite's ``sqlite_sequence`` and sqlite-vec's own tables
    (another sqlite-vec's text) are compared by name."""
    from dreamdb.store import migrations
    from dreamdb.store.migrations import SCHEMA_OBJECTS, VEC0_TABLES, unexpected_objects

    vec0 = set()
    for _version, _name, path in available():
        vec0 |= {m.group(1) for m in migrations._VEC0_SQL.finditer(path.read_text(encoding="utf-8"))}
    assert vec0 == set(VEC0_TABLES)
    assert len({key[3] for key in SCHEMA_OBJECTS if key[:2] == ("table", "files")}) == 2  # (before and after 007)
    assert ("table", "sqlite_sequence", "sqlite_sequence", "") in SCHEMA_OBJECTS
    older = db.connect(tmp_path / "older.db", vec=db.CAN_LOAD_EXTENSIONS)
    migrate(older, upto=6)
    assert unexpected_objects(older) == []
    conn = db.connect(tmp_path / "i.db", vec=db.CAN_LOAD_EXTENSIONS)
    migrate(conn)
    assert unexpected_objects(conn) == []
    conn.execute("ALTER TABLE documents ADD COLUMN zz INTEGER CHECK (title <> 'boom note')")
    conn.execute("ALTER TABLE files ADD COLUMN extra TEXT")
    conn.execute("DROP TABLE renumbered_ids")  # (made again, a column of another type)
    conn.execute("CREATE TABLE renumbered_ids (doc_id TEXT NOT NULL CHECK (doc_id NOT LIKE '%/%'), source_path TEXT"
                 " NOT NULL, at_days REAL NOT NULL)")
    conn.execute("CREATE INDEX renumbered_ids_doc ON renumbered_ids(doc_id)")
    assert unexpected_objects(conn) == ["table documents", "table files", "table renumbered_ids"]


def test_an_object_a_later_migration_makes_again_is_dreamdbs_at_every_version(tmp_path, monkeypatch):
    """The objects dreamdb accepts are those of every schema version (QA round 148-B F7: an index is compared by its
    SQL now): a migration that makes one of its indexes again with other SQL leaves an index of the version before it
    with the older SQL, which still passes, as the newer does; a third SQL does not."""
    from dreamdb.store import migrations

    last = latest_version()
    extra = tmp_path / f"{last + 1:03d}_status_again.sql"
    extra.write_text("DROP INDEX documents_status;\nCREATE INDEX documents_status ON documents(status, id);\n",
                     encoding="utf-8")
    shipped = available()
    monkeypatch.setattr(migrations, "available", lambda: [*shipped, (last + 1, "status_again", extra)])
    monkeypatch.setattr(migrations, "SCHEMA_OBJECTS", frozenset())  # (as made again from schema_objects_made: both)
    migrations._migrations_made.cache_clear()
    try:
        older = db.connect(tmp_path / "older.db", vec=db.CAN_LOAD_EXTENSIONS)
        migrate(older, upto=last)
        newer = db.connect(tmp_path / "newer.db", vec=db.CAN_LOAD_EXTENSIONS)
        migrate(newer)
        assert current_version(older) == last == current_version(newer) - 1
        assert migrations.unexpected_objects(older) == [] and migrations.unexpected_objects(newer) == []
        assert len({key for key in migrations.schema_objects_made() if key[1] == "documents_status"}) == 2
        newer.execute("DROP INDEX documents_status")
        newer.execute("CREATE INDEX documents_status ON documents(id, status)")
        assert migrations.unexpected_objects(newer) == ["index documents_status"]
    finally:
        migrations._migrations_made.cache_clear()


def test_connections_do_not_trust_the_schema(tmp_path):
    """PRAGMA trusted_schema is off: a trigger or view of the file may call none but SQLite's harmless functions,
    and dreamdb's own triggers (migration 005, on the vectors) still run."""
    conn = db.connect(tmp_path / "i.db", vec=db.CAN_LOAD_EXTENSIONS)
    assert conn.execute("PRAGMA trusted_schema").fetchone()[0] == 0
    migrate(conn)
    if db.CAN_LOAD_EXTENSIONS:
        conn.execute("INSERT INTO models (model_id, name, dim, first_seen) VALUES ('m', 'm', 384, 'now')")
        conn.execute("INSERT INTO embeddings (id, content_hash, model_id, created_at) VALUES (1, 'h', 'm', 'now')")
        assert conn.execute("SELECT generation FROM embedding_generations WHERE model_id = 'm'").fetchone()[0] >= 1
        conn.execute("INSERT INTO vec_embeddings (rowid, model_id, embedding) VALUES (1, 'm', ?)",
                     (json.dumps([1.0] + [0.0] * 383),))
        assert conn.execute("SELECT rowid FROM vec_embeddings WHERE embedding MATCH ? AND k = 1 AND model_id = 'm'",
                            (json.dumps([1.0] + [0.0] * 383),)).fetchall() == [(1,)]
        assert conn.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()[0] == 0
