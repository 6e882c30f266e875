"""Stored embeddings carried from a damaged index into the one rebuilt in its place.

The index is a cache of the vault, so damage is repaired by building it again; but its vectors are no
cache of anything quick to recompute (the real vault's 1,347 chunks take about 4 minutes of CPU, a large
vault hours). Chunks are keyed by the sha256 of their text (migration 002), so a rebuilt index's chunks
find a carried vector again and ``dreamdb embed refresh`` embeds only what is new. Only a file whose
structure SQLite finds sound (``PRAGMA integrity_check``, which also reads every index against its table)
is read: a table gone missing (dropped by a tool or a hand) is damage the vectors survive; a damaged page
may hold anything, so nothing is taken from such a file.

The old file is read through a read-only connection opened, in a read transaction, before it is deleted:
it is never renamed or reopened, so other processes' connections to it (and its ``-shm``, which they share)
are left as they are (QA round 91 F1: renaming a live WAL database under them corrupted concurrent rebuilds).
"""

from __future__ import annotations

from pathlib import Path

from dreamdb.errors import DreamdbError
from dreamdb.store import connect as db
from dreamdb.store.migrations import VEC_SHADOW

_TABLES = ("models", "embeddings", "vec_embeddings")
"""The tables a carry reads (migration 002): the models, each vector's row and the vectors."""

BATCH = 1000
"""Vectors copied per statement batch (≈ 1.5 MB of float32[384] each)."""


def open_for_carry(path: Path | str):
    """A read-only connection to the index file ``path`` about to be deleted and rebuilt, inside a read transaction
    (its state as of now, whatever happens to the file next), when it holds vectors worth carrying: sqlite-vec loads,
    the file has :data:`_TABLES` and sqlite-vec's own :data:`~dreamdb.store.migrations.VEC_SHADOW` (a version of
    sqlite-vec that names them otherwise carries none: safe) and at least one vector, and ``PRAGMA integrity_check``
    finds it sound.

    Returns:
        ``(connection, "")``, or ``(None, why)``: ``why`` says why the stored vectors cannot be carried, in a few
        words, when the file holds any (QA round 91 F4: the rebuild's note said nothing of them), else ``""``.
        The caller closes the connection (after :func:`carry_vectors`). Never raises for the file's state.
    """
    if not db.CAN_LOAD_EXTENSIONS:
        return None, _lost(path, f"this Python's SQLite driver ({db.DRIVER_NAME}) cannot load sqlite-vec to read them")
    old = None
    why = "the file could not be read"
    try:
        old = db.connect_readonly(path, vec=True)
        old.execute("BEGIN")
        found = {r[0] for r in old.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in (*_TABLES, *VEC_SHADOW) if t not in found]
        if missing:
            why = f"{missing[0]} was missing"
        elif not old.execute("SELECT EXISTS (SELECT 1 FROM embeddings)").fetchone()[0]:
            why = ""
        elif old.execute("PRAGMA integrity_check(1)").fetchone()[0] != "ok":
            why = "the file is damaged"
        else:
            return old, ""
    except (db.DatabaseError, UnicodeDecodeError, DreamdbError):
        pass
    if old is not None:
        try:
            old.close()
        except db.DatabaseError:
            pass
    return None, _lost(path, why) if why else ""


def _lost(path: Path | str, why: str) -> str:
    """``why`` with how many vectors the file at ``path`` holds (``its N stored embeddings could not be kept (why)``),
    or ``""`` when it holds none or that cannot be read."""
    try:
        conn = db.connect_readonly(path)
        try:
            n = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        finally:
            conn.close()
    except (db.DatabaseError, UnicodeDecodeError, DreamdbError):
        return ""
    return f"its {n} stored embedding{'s' if n != 1 else ''} could not be kept: {why}" if n else ""


def carry_vectors(conn, old) -> int | None:
    """Copy the models, embedding rows and vectors that ``old`` (:func:`open_for_carry`) reads into the index ``conn``
    has just created and migrated (empty of vectors), in one write transaction.

    Rows keep their ids, content hashes, creation times and languages (so language identification is not
    run again); the per-language sums (``language_centroids``) are not copied: their signature no longer
    matches and the next refresh recomputes them. Whether the vectors of chunk texts not in NFC that a version
    before 0.3.19 may have computed wait to be deleted (:func:`dreamdb.store.sync.nfc_vectors_due`, read from
    ``old``) is carried too (:data:`~dreamdb.store.sync.NFC_VECTORS_KEY`): the new index records no format yet, and
    would take them for a new index's, or every carried vector for an old version's (QA round 157-B F1).

    Returns:
        Vectors copied (0: ``conn`` has no vector tables), or ``None`` when they could not be read or written
        (nothing is copied then). Never raises for either file's state (SQLite's errors are caught).
    """
    try:
        if conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name IN (?, ?, ?)", _TABLES).fetchone()[0] < 3:
            return 0
        columns = {r[1] for r in old.execute("PRAGMA table_info(embeddings)")}
        lang = "e.lang" if "lang" in columns else "NULL"  # (migration 004's: an older index has none)
        from dreamdb.store.sync import NFC_VECTORS_KEY, nfc_vectors_due

        try:
            due = nfc_vectors_due(old)
        except (db.DatabaseError, UnicodeDecodeError):  # (its meta unreadable: taken as an old version's)
            due = True
        with db.write_transaction(conn):
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                         (NFC_VECTORS_KEY, "due" if due else "done"))
            conn.executemany("INSERT OR IGNORE INTO models (model_id, name, path, dim, source, first_seen)"
                             " VALUES (?, ?, ?, ?, ?, ?)",
                             old.execute("SELECT model_id, name, path, dim, source, first_seen FROM models").fetchall())
            rows = old.execute(f"SELECT e.id, e.content_hash, e.model_id, e.created_at, {lang}, v.embedding"
                               " FROM embeddings e JOIN vec_embeddings v ON v.rowid = e.id"
                               " WHERE e.model_id IN (SELECT model_id FROM models)")
            while True:
                batch = rows.fetchmany(BATCH)
                if not batch:
                    break
                conn.executemany("INSERT INTO embeddings (id, content_hash, model_id, created_at, lang)"
                                 " VALUES (?, ?, ?, ?, ?)", [r[:5] for r in batch])
                conn.executemany("INSERT INTO vec_embeddings (rowid, model_id, embedding) VALUES (?, ?, ?)",
                                 [(r[0], r[2], r[5]) for r in batch])
            return conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    except (db.DatabaseError, UnicodeDecodeError, DreamdbError):
        return None
