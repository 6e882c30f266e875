"""Stored embeddings carried from a damaged index into the one rebuilt in its place.

The index is a cache of the vault, so damage is repaired by building it again; but its vectors are no
cache of anything quick to recompute (the real vault's 1,347 chunks take about 4 minutes of CPU, a large
vault hours). Chunks are keyed by the sha256 of their text (migration 002), so a rebuilt index's chunks
find a carried vector again and ``dreamdb embed refresh`` embeds only what is new. Only a file whose
structure SQLite finds sound (``PRAGMA integrity_check``, which also reads every index against its table)
is read: a table gone missing (dropped by a tool or a hand) is damage the vectors survive; a damaged page
may hold anything, so nothing is taken from such a file.
"""

from __future__ import annotations

from pathlib import Path

from dreamdb.errors import LockTimeout
from dreamdb.store import connect as db

_TABLES = frozenset({"models", "embeddings", "vec_embeddings"})
"""The tables a carry reads (migration 002): the models, each vector's row and the vectors."""


def carry_vectors(conn, old_path: Path | str) -> int | None:
    """Copy the models, embedding rows and vectors of the index file ``old_path`` into the index ``conn``
    has just created and migrated (empty of vectors), in one write transaction.

    Rows keep their ids, content hashes, creation times and languages (so language identification is not
    run again); the per-language sums (``language_centroids``) are not copied: their signature no longer
    matches and the next refresh recomputes them.

    Returns:
        Vectors copied (0: ``conn`` has no vector tables, its driver cannot load sqlite-vec, or ``old_path``
        holds none), or ``None`` when ``old_path`` cannot be read or ``PRAGMA integrity_check`` finds it damaged:
        nothing is copied then. Never raises for the old file's state (SQLite's errors are caught).
    """
    if not db.CAN_LOAD_EXTENSIONS or conn.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('models', 'embeddings', 'vec_embeddings')"
    ).fetchone()[0] < len(_TABLES):
        return 0
    try:
        conn.execute("ATTACH DATABASE ? AS salvaged", (str(old_path),))
    except (db.DatabaseError, UnicodeDecodeError):
        return None
    try:
        if conn.execute("PRAGMA salvaged.integrity_check(1)").fetchone()[0] != "ok":
            return None
        found = {r[0] for r in conn.execute("SELECT name FROM salvaged.sqlite_master WHERE type = 'table'")}
        if not _TABLES <= found:
            return 0
        columns = {r[1] for r in conn.execute("PRAGMA salvaged.table_info(embeddings)")}
        lang = "e.lang" if "lang" in columns else "NULL"  # (migration 004's: an older index has none)
        with db.write_transaction(conn):
            conn.execute("INSERT OR IGNORE INTO models (model_id, name, path, dim, source, first_seen)"
                         " SELECT model_id, name, path, dim, source, first_seen FROM salvaged.models")
            conn.execute("INSERT INTO embeddings (id, content_hash, model_id, created_at, lang)"
                         f" SELECT e.id, e.content_hash, e.model_id, e.created_at, {lang} FROM salvaged.embeddings e"
                         " WHERE e.model_id IN (SELECT model_id FROM models)"
                         " AND e.id IN (SELECT rowid FROM salvaged.vec_embeddings)")
            conn.execute("INSERT INTO vec_embeddings (rowid, model_id, embedding)"
                         " SELECT v.rowid, v.model_id, v.embedding FROM salvaged.vec_embeddings v"
                         " WHERE v.rowid IN (SELECT id FROM main.embeddings)")
            return conn.execute("SELECT COUNT(*) FROM main.embeddings").fetchone()[0]
    except (db.DatabaseError, UnicodeDecodeError, LockTimeout):
        return None
    finally:
        try:
            conn.execute("DETACH DATABASE salvaged")
        except db.DatabaseError:
            pass
