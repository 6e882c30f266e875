"""Apply the numbered SQL files of ``migrations/`` in order (llm's habit).

Each file ``NNN_name.sql`` runs once, inside one transaction together with
its row in ``schema_migrations``; the highest applied number is the index's
schema version. The folder is the repository's top-level ``migrations/`` in a
source checkout and ``dreamdb/migrations/`` inside an installed wheel.

A file whose first line is ``-- requires: vec0`` needs sqlite-vec. When the
connection has not loaded it, :func:`migrate` loads it if the driver can; if
the driver cannot load extensions, that migration is skipped and stays
pending (:func:`pending`) while later ones still apply, so the index works
BM25-only and gains the vector tables once a capable driver opens it.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime, timezone
from pathlib import Path

from dreamdb.errors import IndexTooNew, IndexUnavailable
from dreamdb.store.connect import DatabaseError, write_transaction

_NAME_RE = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")


FIRST_MIGRATION = "001_initial.sql"
"""The file that tells dreamdb's migrations folder from any other folder of that name."""


def migrations_dir() -> Path:
    """The folder holding the numbered SQL files (wheel first, then source tree).

    Raises:
        IndexUnavailable: neither location exists (a broken install).
    """
    pkg = Path(__file__).resolve().parents[1]
    for candidate in (pkg / "migrations", pkg.parent / "migrations"):
        # (its first file there: another package's top-level migrations/ in site-packages is not dreamdb's; QA 93-C)
        if (candidate / FIRST_MIGRATION).is_file():
            return candidate
    from dreamdb.extras import reinstall_command

    raise IndexUnavailable("dreamdb's migrations folder is missing.", hint=f"Reinstall dreamdb: {reinstall_command()}")


def available() -> list[tuple[int, str, Path]]:
    """``[(version, name, path)]`` of every migration file, in version order."""
    out = []
    for p in migrations_dir().iterdir():
        m = _NAME_RE.match(p.name)
        if m:
            out.append((int(m.group(1)), m.group(2), p))
    return sorted(out)


def current_version(conn) -> int:
    """Highest applied migration number (0 for an empty database)."""
    row = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='schema_migrations'").fetchone()
    if not row:
        return 0
    return conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]


def latest_version() -> int:
    """Highest migration number this dreamdb ships."""
    migs = available()
    return migs[-1][0] if migs else 0


def requirements(path: Path) -> set[str]:
    """Capabilities a migration file declares on its first line (``-- requires: vec0``)."""
    with open(path, encoding="utf-8") as f:
        first = f.readline().strip()
    m = re.match(r"^--\s*requires:\s*(.+)$", first)
    return {r.strip() for r in m.group(1).split(",") if r.strip()} if m else set()


def has_vec(conn) -> bool:
    """True when sqlite-vec is loaded in ``conn``."""
    from dreamdb.store.connect import DatabaseError

    try:
        conn.execute("SELECT vec_version()").fetchone()
        return True
    except DatabaseError:
        return False


def _ensure_capable(conn, needs: set[str]) -> bool:
    if "vec0" in needs and not has_vec(conn):
        from dreamdb.errors import DriverError
        from dreamdb.store.connect import CAN_LOAD_EXTENSIONS, load_vec

        if not CAN_LOAD_EXTENSIONS:
            return False
        try:
            load_vec(conn)
        except DriverError:
            return False
    return True


def applied_versions(conn) -> set[int]:
    """Versions recorded in ``schema_migrations`` (empty for a new database)."""
    row = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='schema_migrations'").fetchone()
    if not row:
        return set()
    return {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}


def pending(conn) -> list[int]:
    """Versions shipped but not applied (read-only; e.g. ``vec0`` ones skipped for lack of sqlite-vec)."""
    have = applied_versions(conn)
    return [v for v, _n, _p in available() if v not in have]


def _newer_or_damaged(conn, migs) -> str | None:
    """Why a schema version above this dreamdb's is damage rather than a newer dreamdb's index (``None``: it may be a
    newer one's): ``PRAGMA quick_check`` finds the file damaged, or a migration this dreamdb knows is recorded under
    another name or number than its own (a newer dreamdb applies the same files first, under their numbers)."""
    problems = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        return problems[0]
    names = {version: name for version, name, _path in migs}
    known = {name: version for version, name in names.items()}
    for version, name in conn.execute("SELECT version, name FROM schema_migrations"):
        if version in names and name != names[version]:
            return f"migration {version} recorded as {name!r}, not {names[version]!r}"
        if version not in names and name in known:
            return f"migration {known[name]} ({name!r}) recorded as version {version}"
    return None


def migrate(conn, upto: int | None = None) -> list[int]:
    """Apply every pending migration (``upto``: those of that version and below only); return the versions applied.

    Migrations that need sqlite-vec (``-- requires: vec0``) are skipped, and
    stay pending, when the connection cannot load it.

    Raises:
        IndexTooNew: the index was made by a newer dreamdb (higher version).
        DatabaseError: a higher version read from a damaged file (:func:`_newer_or_damaged`): the caller rebuilds.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    have = current_version(conn)
    migs = available()
    if migs and have > migs[-1][0]:
        damage = _newer_or_damaged(conn, migs)
        if damage:  # (QA round 76 F14: a damaged page read as "version 48, a newer dreamdb": exit 4 everywhere)
            raise DatabaseError(f"database disk image is malformed (schema version {have} read from a damaged "
                                f"schema_migrations: {damage})")
        from dreamdb.extras import reinstall_command, source_checkout

        where = source_checkout()
        upgrade = (f"update the checkout at {where} to the newer dreamdb, then {reinstall_command()}" if where is not None
                   else reinstall_command().replace("reinstall it from", "install the newer dreamdb from", 1))
        row = conn.execute("PRAGMA database_list").fetchone()  # (its file named: with several vaults, which one;
        at = f" {row[2]}" if row and row[2] else ""             # QA round 100-A F4)
        raise IndexTooNew(f"The index{at} has schema version {have}, newer than this dreamdb knows ({migs[-1][0]}): "
                          "it was written by a newer dreamdb, and is left as it is.",
                          hint=f"Run the newer dreamdb here ({upgrade}), or delete the index to rebuild it with this "
                               "version (it is a cache of the vault; stored embeddings are lost).")
    done = applied_versions(conn)
    applied = []
    for version, name, path in migs:
        if upto is not None and version > upto:
            break
        if version in done:
            continue
        if not _ensure_capable(conn, requirements(path)):
            continue
        sql = path.read_text(encoding="utf-8")
        with write_transaction(conn):
            if version in applied_versions(conn):  # another process got there first
                continue
            for statement in _split_sql(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, datetime.now(timezone.utc).isoformat(timespec="seconds")),
            )
        applied.append(version)
    return applied


def _split_sql(sql: str) -> list[str]:
    """Split a migration file into statements with SQLite's own completeness check."""
    from dreamdb.store.connect import sqlite3

    statements, buf = [], ""
    for line in sql.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                statements.append(buf.strip())
            buf = ""
    if buf.strip() and not all(l.strip().startswith("--") or not l.strip() for l in buf.splitlines()):
        statements.append(buf.strip())
    return statements


_ADDED = re.compile(r"CREATE\s+(?:VIRTUAL\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)|ADD\s+(?:COLUMN\s+)?(\w+)",
                    re.IGNORECASE)


_CREATED = re.compile(r"CREATE\s+(?:VIRTUAL\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE)
_created_cache: dict[str, frozenset[str]] = {}


def names_created(path: Path) -> frozenset[str]:
    """The tables and views the migration file at ``path`` creates, lowercase (its ``--`` comments left out; not the
    columns it adds, which :func:`names_added` counts too); the file is read once a process."""
    key = str(path)
    if key not in _created_cache:
        sql = re.sub(r"--[^\n]*", "", path.read_text(encoding="utf-8"))
        _created_cache[key] = frozenset(m.group(1).lower() for m in _CREATED.finditer(sql))
    return _created_cache[key]


VEC_SHADOW = ("vec_embeddings_rowids", "vec_embeddings_chunks", "vec_embeddings_info",
              "vec_embeddings_vector_chunks00")
"""The tables sqlite-vec (0.1.6) keeps behind migration 002's ``vec_embeddings``: without one of them a vector
query or write crashes the process (QA round 92 F2: ``_rowids`` dropped, a segfault)."""

_VEC0_SQL = re.compile(r"CREATE\s+VIRTUAL\s+TABLE\s+\"?(\w+)\"?\s+USING\s+vec0\s*\([^;]*\)", re.IGNORECASE)
_shadow_cache: dict[str, frozenset[str]] = {}


def _vec0_shadow_tables(sql: str) -> frozenset[str]:
    """The tables sqlite-vec makes for the vec0 table that ``sql`` (its ``CREATE VIRTUAL TABLE`` statement as
    ``sqlite_master`` holds it) creates, lowercase: made once a process in an in-memory database (≈ 9 ms), so a
    version of sqlite-vec that names them otherwise is asked, not guessed. Empty where sqlite-vec cannot load
    (nothing then reads the vectors) or ``sql`` is not such a statement."""
    if sql not in _shadow_cache:
        from dreamdb.store import connect as db

        tables: frozenset[str] = frozenset()
        found = _VEC0_SQL.fullmatch(sql.strip())
        if found and db.CAN_LOAD_EXTENSIONS:
            probe = db.sqlite3.connect(":memory:")
            try:
                db.load_vec(probe)
                probe.execute(sql)
                tables = frozenset(r[0].lower() for r in probe.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name != ?", (found.group(1),)))
            except Exception:  # (DriverError, or a statement this sqlite-vec refuses: nothing to ask)
                tables = frozenset()
            finally:
                probe.close()
        _shadow_cache[sql] = tables
    return _shadow_cache[sql]


def missing_objects(conn) -> list[str]:
    """The tables and views that the migrations this index records as applied created, and that it no longer holds
    (lowercase, sorted; migrations drop none): damage, a table dropped by a tool or a hand, which a query would meet
    only when it reads that table (QA round 91 F3: a dropped ``chunks`` was blamed on the SQLite driver, a dropped
    ``chunked_documents`` failed ``embed refresh``, and ``sync --check`` said ok). sqlite-vec's own tables behind a
    vec0 table count too (:data:`VEC_SHADOW`; QA round 92 F2: a dropped ``vec_embeddings_rowids`` crashed the next
    vector write and every hybrid recall after it). One ``sqlite_master`` read; sqlite-vec is asked which tables it
    makes only when those of :data:`VEC_SHADOW` are not all there."""
    have = applied_versions(conn)
    if not have:
        return []
    expected = set().union(*(names_created(path) for version, _name, path in available() if version in have))
    rows = conn.execute("SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
    present = {r[0].lower() for r in rows}
    for name, _type, sql in rows:
        if (name.lower() == "vec_embeddings" and sql and not present.issuperset(VEC_SHADOW)):
            expected |= _vec0_shadow_tables(sql)
    return sorted(expected - present)


SCHEMA_OBJECTS = frozenset({
    # (type, name, tbl_name, digest of its SQL, "" for none: _object_key): what the migrations of every
    # schema version make, in an empty database with sqlite-vec loaded (schema_objects_made; tests/test_migrations.py
    # checks the two are equal)
    ("index", "chunks_hash", "chunks", "0e7287e59604ab3b"),
    ("index", "document_tags_doc", "document_tags", "eabeca57a2cb5f41"),
    ("index", "documents_expires", "documents", "4d54a52b42483559"),
    ("index", "documents_source", "documents", "b75f3f90d1b5f814"),
    ("index", "documents_status", "documents", "9afa38ff14ebd981"),
    ("index", "documents_supersedes", "documents", "f1517ed5dd66d355"),
    ("index", "documents_turkish", "documents", "4a56c1328fadcdc6"),
    ("index", "documents_type", "documents", "5cda11c41b81c7c0"),
    ("index", "embeddings_lang_todo", "embeddings", "64c2466a80be716c"),
    ("index", "embeddings_model", "embeddings", "9f9de533f3857094"),
    ("index", "embeddings_model_lang", "embeddings", "7affc20f06e90347"),
    ("index", "postings_doc", "postings", "4bcde6b78236a9e5"),
    ("index", "renumbered_ids_doc", "renumbered_ids", "9b3c947ebd957b2f"),
    ("index", "sqlite_autoindex_chunks_1", "chunks", ""),
    ("index", "sqlite_autoindex_dirs_1", "dirs", ""),
    ("index", "sqlite_autoindex_documents_1", "documents", ""),
    ("index", "sqlite_autoindex_embedding_generations_1", "embedding_generations", ""),
    ("index", "sqlite_autoindex_embeddings_1", "embeddings", ""),
    ("index", "sqlite_autoindex_files_1", "files", ""),
    ("index", "sqlite_autoindex_language_centroids_1", "language_centroids", ""),
    ("index", "sqlite_autoindex_meta_1", "meta", ""),
    ("index", "sqlite_autoindex_models_1", "models", ""),
    ("index", "sqlite_autoindex_vec_embeddings_info_1", "vec_embeddings_info", ""),
    ("index", "sqlite_autoindex_vec_embeddings_vector_chunks00_1", "vec_embeddings_vector_chunks00", ""),
    ("table", "chunked_documents", "chunked_documents", "d6de3c7acce691e9"),
    ("table", "chunked_documents", "chunked_documents", "e3e528ec8250b8c7"),
    ("table", "chunks", "chunks", "fa0226bcb1edfb48"),
    ("table", "corpus_stats", "corpus_stats", "f51f811a79a3cdce"),
    ("table", "dirs", "dirs", "aa227df9e6895249"),
    ("table", "dirs", "dirs", "d9fc87021d632940"),
    ("table", "document_tags", "document_tags", "d819ba9f2ed8e0a3"),
    ("table", "documents", "documents", "bebcf773485bfa05"),
    ("table", "embedding_generations", "embedding_generations", "98b006c2ad8c9e3a"),
    ("table", "embeddings", "embeddings", "5e21be32b360771d"),
    ("table", "embeddings", "embeddings", "990452ce56f27fda"),
    ("table", "files", "files", "9095313d7524bfc6"),
    ("table", "files", "files", "bc879a911ed1dce5"),
    ("table", "language_centroids", "language_centroids", "4b5857ee43a3bb1a"),
    ("table", "meta", "meta", "a92cc674f28dca24"),
    ("table", "models", "models", "343a7bc0b0037f65"),
    ("table", "postings", "postings", "42b755f7eda8d911"),
    ("table", "renumbered_ids", "renumbered_ids", "0118259663de9e95"),
    ("table", "schema_migrations", "schema_migrations", "86f55ebe94fa483e"),
    ("table", "sqlite_sequence", "sqlite_sequence", ""),
    ("table", "vec_embeddings", "vec_embeddings", "3554997c8c5dcd30"),
    ("table", "vec_embeddings_chunks", "vec_embeddings_chunks", ""),
    ("table", "vec_embeddings_info", "vec_embeddings_info", ""),
    ("table", "vec_embeddings_rowids", "vec_embeddings_rowids", ""),
    ("table", "vec_embeddings_vector_chunks00", "vec_embeddings_vector_chunks00", ""),
    ("trigger", "chunks_generation_delete", "chunks", "acafb59734ac91e9"),
    ("trigger", "chunks_generation_insert", "chunks", "f8c92c85eb248cef"),
    ("trigger", "embeddings_generation_delete", "embeddings", "c7fb0069e7459855"),
    ("trigger", "embeddings_generation_insert", "embeddings", "07406fc7564a6ab7"),
    ("trigger", "embeddings_generation_lang", "embeddings", "53fd4e062ca855ed"),
    ("view", "chunk_vectors", "chunk_vectors", "6ef0704ad044cf5c"),
    ("view", "document_lengths", "document_lengths", "9209bc0ca5a7282f"),
    ("view", "embedding_coverage", "embedding_coverage", "66e00e37b7d2214a"),
    ("view", "terms", "terms", "33afd91ca4c7ca5b"),
})
"""Every object of ``sqlite_master`` that dreamdb's migrations make (:func:`schema_objects_made`), as
:func:`_object_key` gives it: what :func:`unexpected_objects` compares an index's objects with, in one read."""

SQLITE_STATS = frozenset({"sqlite_stat1", "sqlite_stat2", "sqlite_stat3", "sqlite_stat4"})
"""The tables SQLite's ``ANALYZE`` makes (in a SQLite shell): statistics for its query planner, never code."""


_DIGESTED = ("index", "trigger", "view", "table")
"""The kinds of object :func:`_object_key` keys with a digest of their SQL."""

VEC0_TABLES = ("vec_embeddings",)
"""The vec0 tables dreamdb's migrations make (002's; tests/test_migrations.py checks them against the files): the
tables named after one (``vec_embeddings_rowids``, …) are sqlite-vec's own, their SQL its version's."""

_UNDIGESTED_TABLES = ("sqlite_", *(f"{name}_" for name in VEC0_TABLES))
"""The name prefixes of the tables :func:`_object_key` keys without their SQL: SQLite's own (``sqlite_sequence``,
which no statement may alter) and sqlite-vec's behind a vec0 table (another sqlite-vec may write them otherwise)."""


def _object_key(kind: str, name: str, table: str, sql: str | None) -> tuple[str, str, str, str]:
    """``sqlite_master``'s row of an object as :data:`SCHEMA_OBJECTS` holds it: a trigger or view (code that runs on
    its own, or whose rows a query reads), an index (whose columns, uniqueness and ``WHERE`` decide what a write
    may put in a table: QA round 148-B F7, a ``UNIQUE INDEX documents_type ON documents(type, title)`` failed the
    sync of two notes of one title, and ``documents_status`` made on another column passed ``sync --check``) or a
    table (whose columns and constraints do too: QA round 149-B F2, a column added with ``CHECK (title <> 'boom
    note')`` passed ``sync --check`` and failed the sync of that note) with a digest of its SQL, so one of dreamdb's
    names with other text is not dreamdb's. None for SQLite's own ``sqlite_autoindex_…`` (no SQL) and the tables of
    :data:`_UNDIGESTED_TABLES`. A column a migration adds changes its table's text, as a migration making an index
    again does the index's: each schema version's text is dreamdb's (:func:`_migrations_made`)."""
    if kind in _DIGESTED and sql is not None and not (kind == "table" and name.startswith(_UNDIGESTED_TABLES)):
        import hashlib

        return kind, name, table, hashlib.sha256((sql or "").encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return kind, name, table, ""


@functools.lru_cache(maxsize=1)
def _migrations_made() -> tuple[frozenset[tuple[str, str, str, str]], tuple[str, ...]]:
    """The objects (:func:`_object_key`) that applying every migration to an empty in-memory database makes, once
    a process (≈ 13 ms), as each schema version holds them (read after each migration: an object a later migration
    made again with other SQL is still dreamdb's in an index of an older version, as an object it dropped is):
    sqlite-vec's tables behind a vec0 table as the installed sqlite-vec names them. Where
    sqlite-vec cannot load, the migrations needing it are left out, and any table named after one of their vec0
    tables (``vec_embeddings_…``, sqlite-vec's own) counts as made: ``(objects, those tables' name prefixes)``."""
    from dreamdb.store import connect as db

    probe = db.sqlite3.connect(":memory:", isolation_level=None)
    try:
        shadows: set[str] = set()
        if db.CAN_LOAD_EXTENSIONS:
            try:
                db.load_vec(probe)
            except Exception:  # (DriverError: the vec0 migrations are skipped below, their tables allowed)
                pass
        if not has_vec(probe):
            for _version, _name, path in available():
                if "vec0" in requirements(path):
                    shadows.update(m.group(1) + "_" for m in re.finditer(
                        r"CREATE\s+VIRTUAL\s+TABLE\s+\"?(\w+)\"?\s+USING\s+vec0", path.read_text("utf-8"), re.I))
        made: set[tuple[str, str, str, str]] = set()
        for version, _name, _path in available():
            migrate(probe, upto=version)
            made.update(_object_key(*row) for row in probe.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master"))
    finally:
        probe.close()
    return frozenset(made), tuple(sorted(shadows))


def schema_objects_made() -> frozenset[tuple[str, str, str, str]]:
    """The objects (:func:`_object_key`) that applying every migration to an empty in-memory database makes
    (:func:`_migrations_made`, once a process)."""
    return _migrations_made()[0]


def unexpected_objects(conn) -> list[str]:
    """The objects of the index's schema (``sqlite_master``: tables, indexes, triggers, views, virtual tables and
    their shadow tables) that no migration of dreamdb's makes, as ``"trigger zz_poison"``, sorted: a trigger, view,
    table or index another program added, or one of dreamdb's whose SQL another program changed.
    The index is then not dreamdb's own as written, and is rebuilt as a damaged one is (QA round 147-F F1: a trigger
    in an index committed to a repository rewrote every title a sync wrote into text the vault does not hold, and
    kept doing so through ``sync --force``).

    One read of ``sqlite_master`` compared with :data:`SCHEMA_OBJECTS` (≈ 0.09 ms); only where that finds an
    object it lacks (another sqlite-vec's names for its tables, or one really not dreamdb's) are the migrations
    applied in memory to tell (:func:`schema_objects_made`). An index of an older schema version holds fewer of them,
    none other; SQLite's ``ANALYZE`` statistics (:data:`SQLITE_STATS`) are allowed. An index is compared by its SQL
    too, as a trigger is (QA round 148-B F7), and a table (149-B F2: a ``CHECK`` added to ``documents``)."""
    # (every object's SQL hashed only here, ≈ 40 of them: SQLite's autoindexes and sqlite-vec's tables not)
    odd = [key for key in (_object_key(*row) for row in conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()) if key not in SCHEMA_OBJECTS]
    if not odd:
        return []
    odd = [key for key in odd if not (key[0] == "table" and key[1] in SQLITE_STATS)]
    if odd:
        made, shadows = _migrations_made()
        odd = [key for key in odd if key not in made and not (key[0] == "table" and shadows
                                                                and key[1].startswith(shadows))]
    return sorted(f"{kind} {name}" for kind, name, _table, _digest in odd)


def names_added(path: Path) -> set[str]:
    """The tables and views a migration file creates and the columns it adds, lowercase (its ``--`` comments left
    out): what a query or a statement meets as "no such table/column" while that migration waits."""
    sql = re.sub(r"--[^\n]*", "", path.read_text(encoding="utf-8"))
    return {(m.group(1) or m.group(2)).lower() for m in _ADDED.finditer(sql)}


_MISSING = re.compile(r"no such (table|column): (?:(\w+)\.)?(?:\w+\.)?(\w+)", re.IGNORECASE)


def missing_object(message: str) -> tuple[str, str, str] | None:
    """``(kind, schema, name)`` of SQLite's "no such table/column" ``message``, lowercase (``kind`` ``table`` or
    ``column``; ``schema`` ``main`` when the message names none, or the qualifier before a column: ``s.words`` gives
    ``s``), or ``None`` for any other message."""
    found = _MISSING.search(message)
    if found is None:
        return None
    return found.group(1).lower(), (found.group(2) or "main").lower(), found.group(3).lower()
