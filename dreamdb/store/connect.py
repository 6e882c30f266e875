"""Open SQLite connections: pick a driver that can load sqlite-vec, set pragmas.

This is the one module that chooses the SQLite driver (sqlite-utils' habit);
every other module imports :data:`sqlite3`, :data:`DatabaseError` and
:data:`OperationalError` from here, so ``except`` clauses catch the driver's
own exception classes (PLATFORM-NOTES: ``sqlean``'s errors are not stdlib's).

Driver order: ``sqlean`` (PyPI ``sqlean.py``, SQLite 3.50, can load
extensions), ``pysqlite3`` (PyPI ``pysqlite3-binary``), then the standard
library's ``sqlite3`` when it was built with ``enable_load_extension``. The
stdlib module is kept as a last resort for BM25-only use: vector features then
raise :class:`dreamdb.errors.DriverError` naming the fix.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import time
import weakref
from pathlib import Path
from types import ModuleType

from dreamdb.errors import DriverError, IndexDamaged, IndexReplaced, IndexUnavailable, LockTimeout

BUSY_TIMEOUT_MS = 10_000
"""How long a connection waits for another writer (ms) before "database is locked"."""

WAL_SIZE_LIMIT_BYTES = 8 * 1024 * 1024
"""journal_size_limit: the WAL is truncated back to this size after checkpoints."""

MMAP_SIZE_BYTES = 256 * 1024 * 1024
"""mmap_size: PLATFORM-NOTES measured vec0 point lookups 290 µs → 21 µs with mmap (0 after
:func:`read_without_memory_map`)."""

_memory_map = True
"""Whether this process's connections read the index through a memory map (:func:`read_without_memory_map`)."""


def read_without_memory_map() -> None:
    """Open every later connection of this process without a memory map (``PRAGMA mmap_size = 0``): SQLite reads the
    index file with ``read()`` calls, and a page past the end of a file truncated in place meanwhile is an error
    SQLite reports ("database disk image is malformed", "disk I/O error"), where through the map the read is a SIGBUS
    that kills the process on the spot (exit 135), which Python cannot catch.

    The prompt hook, which always exits 0, calls this first: truncating the index during a hook call on a vault of
    1,500 notes killed it in 2 of 25 runs, nothing in its log (QA round 148-D F2). Its call took the same time either
    way (20 alternating runs each on the real vault: medians within the noise); other commands keep the map.
    """
    global _memory_map
    _memory_map = False

CACHE_SIZE_KIB = 64 * 1024
"""Page cache of a writable connection, in KiB (SQLite's default is 2 MiB). A first sync inserts
postings all over the B-tree; with 64 MiB a first sync of the generated 2,000-document vault
(scripts/gen_vault.py) took ≈ 6.1 s of CPU instead of ≈ 6.6 s here; the gap grows with the index.
Memory is only used as pages are read."""


def _pick_driver() -> tuple[ModuleType, bool]:
    """Return (DB-API module, can_load_extensions)."""
    forced = os.environ.get("DREAMDB_SQLITE_DRIVER", "").strip()  # (" sqlite3 " as the value is: QA round 86-B F7)
    names = [forced] if forced else ["sqlean", "pysqlite3.dbapi2", "sqlite3"]
    for name in names:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        if not hasattr(mod, "connect"):  # sqlean.py's 2 KB placeholder wheel
            continue
        can_load = hasattr(mod.Connection, "enable_load_extension")
        return mod, can_load
    if forced:  # (QA round 74 F10: a mistyped value was told to install a driver)
        raise DriverError(f"DREAMDB_SQLITE_DRIVER={forced!r} names no usable SQLite driver module.",
                          hint="Use sqlean, pysqlite3.dbapi2 or sqlite3 (or unset it: dreamdb picks the first that loads).")
    raise DriverError(
        f"No usable SQLite driver found (tried {', '.join(names)}).",
        hint="Install one: pip install 'sqlean.py>=3.45' (or pysqlite3-binary on Linux x86_64).",
    )


sqlite3, CAN_LOAD_EXTENSIONS = _pick_driver()
DatabaseError = sqlite3.DatabaseError
OperationalError = sqlite3.OperationalError
IntegrityError = sqlite3.IntegrityError
DRIVER_NAME = sqlite3.__name__.split(".")[0]


def sqlite_vec_path() -> str:
    """Path of the sqlite-vec loadable extension, found without importing ``sqlite_vec``.

    ``import sqlite_vec`` pulls in numpy (~200 ms); we only need the file.

    Raises:
        DriverError: the ``sqlite-vec`` package is not installed.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise DriverError("The sqlite-vec package is not installed.", hint="pip install sqlite-vec")
    return str(Path(list(spec.submodule_search_locations)[0]) / "vec0")


def load_vec(conn) -> None:
    """Load sqlite-vec into ``conn``.

    Raises:
        DriverError: the driver cannot load extensions or the extension fails to load.
    """
    if not CAN_LOAD_EXTENSIONS:
        raise DriverError(
            f"This Python's SQLite driver ({DRIVER_NAME}) cannot load extensions, so sqlite-vec is unavailable.",
            hint="pip install 'sqlean.py>=3.45' (dreamdb uses it automatically), or use a Python built with loadable extensions.",
        )
    try:
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec_path())
        conn.enable_load_extension(False)
    except DatabaseError as exc:
        raise DriverError(f"Loading sqlite-vec failed: {exc}", hint="pip install --force-reinstall sqlite-vec") from exc


DAMAGE_CODES = (11, 26)
"""SQLite's primary result codes for a damaged file: SQLITE_CORRUPT, SQLITE_NOTADB."""
DAMAGE_MESSAGES = ("database disk image is malformed", "file is not a database", "file is encrypted")
"""SQLite's messages for those codes, for a driver that does not expose ``sqlite_errorcode``."""


VEC_MAX_K = 4096
"""sqlite-vec 0.1.x's limit on ``k`` in a KNN query (PLATFORM-NOTES)."""

VEC_DAMAGE_MESSAGES = ("size doesn't match - expected", "size mismatch", "could not fetch vector data")
"""sqlite-vec's messages for tables of its own whose content disagrees (a vector chunk of the wrong size, a rowid
with no vector): damage SQLite's checks cannot see (QA round 94-A F3)."""


def is_vec_damage(exc: BaseException) -> bool:
    """Whether an error is sqlite-vec's report of its own tables' damaged content (:data:`VEC_DAMAGE_MESSAGES`)."""
    msg = str(exc).lower()
    return any(s in msg for s in VEC_DAMAGE_MESSAGES)


SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_AUTH = 5, 6, 8, 23
"""SQLite's primary result codes for a lock another connection holds, a write to a read-only database, and a
statement the authorizer refused."""


def error_code(exc: BaseException) -> int | None:
    """SQLite's primary result code of ``exc`` (``SQLITE_READONLY`` for ``SQLITE_READONLY_DBMOVED`` …), or ``None``
    when it carries none (a driver that does not expose ``sqlite_errorcode``, an error raised by hand). Tell errors
    apart by it, not by words of their message: a "no such table/column" message quotes the user's names."""
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def is_damage(exc: BaseException) -> bool:
    """Whether an SQLite error says the database file itself is damaged (by its result code where the
    driver gives it: a message alone would also match "malformed JSON" from a user's query)."""
    code = error_code(exc)
    if code is not None:
        return code in DAMAGE_CODES
    msg = str(exc).lower()
    return any(s in msg for s in DAMAGE_MESSAGES)


def undecodable_damage(exc: UnicodeDecodeError) -> DatabaseError:
    """The damage error for a statement that raised ``UnicodeDecodeError``: SQLite's message about a damaged
    schema quotes its bytes, and the driver, failing to decode the message, raises that instead of the error
    (QA round 74 F9: every command exited 70 on such a file, ``sync --check`` too). dreamdb stores only text it
    decoded, so an index that gives back bytes that are not UTF-8 is damaged (:func:`is_damage` is true)."""
    return DatabaseError(f"database disk image is malformed (SQLite's report of it is not UTF-8 text: {exc})")


def connect(path: Path | str, *, readonly: bool = False, vec: bool = False, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
            immutable: bool = False):
    """Open the index database with dreamdb's pragmas.

    Args:
        path: database file.
        readonly: open with ``mode=ro`` (used by ``dreamdb sql``); writes then fail.
        immutable: with ``readonly``, open with ``immutable=1`` instead: no locks and no ``-shm`` file, which
            a full disk or a read-only file system cannot give a WAL database (transactions still in its
            ``-wal`` file are then not seen).
        vec: load sqlite-vec (needed for vector tables).
        busy_timeout_ms: how long to wait for another writer's lock (ms).

    Returns:
        A DB-API connection in autocommit mode (``isolation_level=None``): callers
        open write transactions explicitly with :func:`write_transaction`. It may be used
        from any thread (SQLite's serialized mode); :class:`dreamdb.api.Index` lets one
        thread at a time use it.

    Raises:
        IndexUnavailable: the file cannot be opened.
        LockTimeout: another process held a lock on it past ``busy_timeout_ms``.
        DriverError: ``vec=True`` and sqlite-vec cannot be loaded.
    """
    from dreamdb.config import refuse_journal_files

    refuse_long_path(path)
    refuse_journal_files(path)  # (a link or pipe beside it: SQLite writes through it, read-only too)
    conn = None
    try:
        if readonly:
            uri = Path(path).resolve().as_uri() + ("?immutable=1" if immutable else "?mode=ro")
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=busy_timeout_ms / 1000,
                                   check_same_thread=False, factory=_Connection)
        else:
            conn = sqlite3.connect(str(path), isolation_level=None, timeout=busy_timeout_ms / 1000,
                                   check_same_thread=False, factory=_Connection)
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if not readonly:
            _use_wal(conn, busy_timeout_ms)
            conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA cache_size = -{CACHE_SIZE_KIB}")
            # Temp tables and sorts in memory (a small temp folder must not fail a sync); set here, as
            # SQLite refuses to change it inside a transaction once temp storage is in use.
            conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA foreign_keys = ON")
        # The schema's triggers and views run only SQLite's harmless functions (QA round 147-F F1: an index is a file
        # that may come from anywhere; sqlite-vec's vec0 tables and dreamdb's own triggers and views work so)
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.execute(f"PRAGMA mmap_size = {MMAP_SIZE_BYTES if _memory_map else 0}")
    except (DatabaseError, UnicodeDecodeError) as exc:
        if is_lock_error(exc):  # (a lock is no damage: QA round 78-A F7, the index was rebuilt under its holder)
            with contextlib.suppress(Exception):
                conn.close()
            raise LockTimeout(f"The index at {path} is locked by another process ({exc}).",
                              hint="Wait for it to finish, or close the program that holds the index open (a SQLite"
                                   " shell or browser in a transaction), then retry.") from exc
        cause = undecodable_damage(exc) if isinstance(exc, UnicodeDecodeError) else exc
        raise IndexUnavailable(f"Cannot open the index at {path}: {cause}") from cause
    _remember_open(conn, path)
    if vec:
        load_vec(conn)
    return conn


def refuse_long_path(path: Path | str, what: str = "the index", hint: str | None = None) -> None:
    """Refuse a database path too long for SQLite (:func:`dreamdb.config.sqlite_path_problem`) before it is opened:
    SQLite says only "unable to open database file" of one, after the caller made an empty file there (QA round
    143-B F1). Every :func:`connect` checks this first; callers that know which setting chose the path give the
    ``hint`` that changes it.

    Raises:
        IndexUnavailable: naming the path, its length and SQLite's limit (exit code 4).
    """
    from dreamdb.config import SQLITE_MAX_PATH_BYTES, sqlite_path_problem

    problem = sqlite_path_problem(path)
    if problem is not None:
        raise IndexUnavailable(f"Cannot open {what} at {path}: {problem}.",
                               hint=hint or f"Use a path of at most {SQLITE_MAX_PATH_BYTES} bytes for it (a link to it"
                                            " does not shorten it: SQLite follows links).")


def _use_wal(conn, busy_timeout_ms: int) -> None:
    """Put the index in WAL journal mode (readers never wait for the writer), where it is not already.

    Switching a database's journal mode needs it to itself: an index another program switched to a rollback
    journal (``PRAGMA journal_mode=DELETE`` in a SQLite shell) and is reading stays in that mode for this
    connection, without waiting, and reads and writes as SQLite does in it (a commit waits for the readers, up
    to ``busy_timeout_ms``); the next connection that finds it alone switches it back (QA round 79 F17: recall
    waited for the lock, then gave up, exit 5, though it only had to read).

    Raises:
        DatabaseError: SQLite's error other than a lock (a lock on the mode read itself is waited for, then
            raised: the caller reports it).
    """
    if str(execute_waiting(conn, "PRAGMA journal_mode", busy_timeout_ms).fetchone()[0]).lower() == "wal":
        return
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("PRAGMA journal_mode = WAL")
    except DatabaseError as exc:
        if not is_lock_error(exc):
            raise
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")


_LOCK_SLICE_MS = 100
"""Longest wait of SQLite's busy handler at once in :func:`execute_waiting` (ms): how soon Ctrl-C is seen."""


def execute_waiting(conn, sql: str, busy_timeout_ms: int | None = None):
    """``conn.execute(sql)``, waiting for another connection's lock up to ``busy_timeout_ms`` (ms; ``None``: the
    connection's busy timeout, ``PRAGMA busy_timeout``) as the busy timeout does, but in waits of
    :data:`_LOCK_SLICE_MS` with Python between them: SQLite waits in C, where Ctrl-C is seen only once it returns (QA
    round 145-D F5: ``sql`` and ``recall`` on an index another program held exclusively ended on Ctrl-C after the whole
    10 s; 145-J F1: ``sync`` and ``embed refresh`` waiting for another process's write lock, the same). For the
    statements where a lock is met: the first that reads a new connection's file, and ``BEGIN IMMEDIATE``
    (:class:`write_transaction`); the busy timeout is ``busy_timeout_ms`` again after it.

    Returns:
        The cursor of ``sql``.

    Raises:
        DatabaseError: SQLite's error: the lock's (:func:`is_lock_error`) once ``busy_timeout_ms`` has passed.
        KeyboardInterrupt: Ctrl-C while it waited (at most :data:`_LOCK_SLICE_MS` late).
    """
    if busy_timeout_ms is None:
        busy_timeout_ms = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    if busy_timeout_ms <= _LOCK_SLICE_MS:
        return conn.execute(sql)
    _set_busy_timeout(conn, 0)  # (no lock met, the common case: one try, no clock read)
    try:
        try:
            return conn.execute(sql)
        except DatabaseError as exc:
            if not is_lock_error(exc):
                raise
        deadline = time.monotonic() + busy_timeout_ms / 1000
        while True:
            started = time.monotonic()
            conn.execute(f"PRAGMA busy_timeout = {max(1, min(_LOCK_SLICE_MS, int((deadline - started) * 1000)))}")
            try:
                return conn.execute(sql)
            except DatabaseError as exc:
                now = time.monotonic()
                if not is_lock_error(exc) or now >= deadline:
                    raise
                if now - started < _LOCK_SLICE_MS / 2000:  # (a lock SQLite reports without waiting: no busy loop)
                    time.sleep(min(_LOCK_SLICE_MS / 1000, deadline - now))
    finally:
        _set_busy_timeout(conn, int(busy_timeout_ms))


def _set_busy_timeout(conn, ms: int) -> None:
    """``PRAGMA busy_timeout = ms``; in whole seconds (0, the 10 s of :data:`BUSY_TIMEOUT_MS`) by the driver's own
    call where it has one (sqlean's ``set_busy_timeout``, of whole seconds: ~0.1 µs, where the statement takes ~2.5 µs,
    and :func:`execute_waiting` runs before every write transaction)."""
    if ms % 1000 == 0 and hasattr(conn, "set_busy_timeout"):
        conn.set_busy_timeout(ms // 1000)
    else:
        conn.execute(f"PRAGMA busy_timeout = {ms}")


def is_lock_error(exc: BaseException) -> bool:
    """Whether an SQLite error is a lock another connection holds (SQLITE_BUSY, SQLITE_LOCKED: "database is
    locked", "database table is locked"), not damage: by its result code where the driver gives it (a message may
    quote a name of the user's, ``no such table: locked_docs``)."""
    if not isinstance(exc, DatabaseError):
        return False
    code = error_code(exc)
    if code is not None:
        return code in (SQLITE_BUSY, SQLITE_LOCKED)
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


def connect_readonly(path: Path | str, *, vec: bool = False, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
                     damaged_hint=lambda: "dreamdb sync --check rebuilds it from the vault."):
    """:func:`connect` read-only: with ``mode=ro``, else, where that cannot read the file (a WAL database whose
    ``-shm`` file cannot be made: a full disk, a read-only file system or folder), with ``immutable=1``; the
    connection's ``immutable`` attribute says which. ``damaged_hint()``: the hint of a damaged file, which a caller that
    knows the vault words with its ``--vault`` (``dreamdb sql``: QA round 156-G F5).

    Raises:
        IndexUnavailable: neither can read it (the first attempt's error); an :class:`~dreamdb.errors.IndexDamaged`,
            with the hint a query that meets damage gives, when SQLite says the file is damaged (QA round 149-D F3:
            ``sql --no-sync`` on an index cut short said "Cannot open the index", with no word of the fix).
        LockTimeout: another connection held it locked past ``busy_timeout_ms`` (ms).
        DriverError: ``vec=True`` and sqlite-vec cannot be loaded.
    """
    first = None
    for immutable in (False, True):
        conn = None
        try:
            conn = connect(path, readonly=True, immutable=immutable, vec=vec, busy_timeout_ms=busy_timeout_ms)
            execute_waiting(conn, "SELECT COUNT(*) FROM sqlite_master", busy_timeout_ms).fetchone()  # (-shm made, or not)
            conn.immutable = immutable  # (the caller says when a -wal file's transactions are not seen)
            return conn
        except (DatabaseError, UnicodeDecodeError) as exc:
            exc = undecodable_damage(exc) if isinstance(exc, UnicodeDecodeError) else exc
            if not immutable and is_lock_error(exc):
                # another connection holds it (locking_mode=EXCLUSIVE): waited for, never read around by an immutable
                # open, which leaves out the transactions in the -wal file (QA round 115-C F1: stale rows, exit 0)
                if conn is not None:
                    conn.close()
                from dreamdb.errors import LockTimeout

                raise LockTimeout(f"Another program held the index at {path} locked for more than "
                                  f"{busy_timeout_ms / 1000:g} s ({exc}).",
                                  hint="Retry once it is done (its lock ends with its connection).") from None
            first = first or IndexUnavailable(f"Cannot open the index at {path}: {exc}")
            first.__cause__ = first.__cause__ or exc
        except IndexUnavailable as exc:
            first = first or exc
        if conn is not None:
            conn.close()
    cause = first.__cause__
    if isinstance(cause, DatabaseError) and is_damage(cause):
        raise IndexDamaged(f"The index at {path} is damaged ({cause}).",
                           hint=damaged_hint()) from cause
    raise first


class _Connection(sqlite3.Connection):
    """A SQLite connection that leaves the registry of open index files when closed (and, being a
    Python subclass, can be referenced weakly: one dropped without ``close()`` leaves it too)."""

    #: ``(path, (st_dev, st_ino))`` of the file :func:`connect` opened (``None`` for the identity of a file gone
    #: before it could be read): :class:`write_transaction` checks the path still names it
    opened_file: tuple[str, tuple[int, int] | None] | None = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            for conns in _OPEN_FILES.values():
                conns.discard(self)


_OPEN_FILES: dict[tuple[int, int], weakref.WeakSet] = {}
"""``{(st_dev, st_ino): open connections}`` of the index files this process has connected to.

POSIX record locks belong to the process, and closing *any* descriptor of a file releases all of
them: a plain ``open(index).read(100); close()`` beside a live connection silently drops SQLite's
locks, so another process may checkpoint or rewrite the pages this one is reading ("database disk
image is malformed", then a needless rebuild). SQLite's own connections share one descriptor per
file and never do this; dreamdb's Python read of the header (:func:`dreamdb.config.index_file_kind`)
must not happen while a connection is open (see :func:`connected_in_process`)."""


def open_unlocked_readonly(path: Path, modes: list[str] | None = None):
    """A read-only connection to the SQLite file ``path`` without dreamdb's pragmas or registry (for reading
    an index at another place: :func:`copy_index`, the ids writes check), else ``None``.

    Opened with ``mode=ro``, and, where that fails (a WAL file in a folder this user cannot write: SQLite
    cannot make its ``-shm`` file), as an immutable file: its last transactions still in the ``-wal`` file
    are then not seen. The mode that opened it is appended to ``modes`` (``"mode=ro"``, ``"immutable=1"``)."""
    from dreamdb.config import journal_file_problem

    if journal_file_problem(Path(path)) is not None:  # (QA round 112-A F2: carry_over wrote through a linked -shm)
        return None
    for mode in ("mode=ro", "immutable=1"):
        conn = None
        try:
            conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?{mode}", uri=True, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            if modes is not None:
                modes.append(mode)
            return conn
        except (DatabaseError, OSError):
            if conn is not None:
                conn.close()
    return None


def copy_index(source: Path, dest: Path) -> int | None:
    """Copy the index at ``source`` to ``dest`` (which must not exist) with SQLite's online backup, so a
    consistent state is copied even while another process writes; vector tables are copied as they are
    (pages), without sqlite-vec. The copy is made beside ``dest`` and linked into place, so it never
    replaces an index another process created there meanwhile.

    ``source`` is opened by :func:`open_unlocked_readonly` (transactions an immutable open cannot see are
    not copied: the sync that follows brings the documents up to date).

    Returns:
        When ``dest`` now holds the copy: the bytes of ``source``'s ``-wal`` file the copy leaves out (0 when it left
        out nothing; more when ``source`` could only be read immutable). ``None`` when ``source`` cannot be read or
        this process has a connection to it (reading it here would release that connection's locks,
        :data:`_OPEN_FILES`), or ``dest`` was created meanwhile.

    Raises:
        OSError: ``dest``'s folder cannot be written (the caller creates a new index there or says why).
    """
    try:
        if connected_in_process(os.stat(source)):
            return None
    except OSError:
        return None
    modes: list[str] = []
    src = open_unlocked_readonly(source, modes)
    if src is None:
        return None
    left_out = 0
    if modes == ["immutable=1"]:
        with contextlib.suppress(OSError):
            left_out = os.path.getsize(f"{source}-wal")
    # (dreamdb.config.INDEX_COPY_EXTRA_BYTES: how much longer this name is, which a vault's index leaves room for)
    tmp = Path(dest).with_name(f".{Path(dest).name}.{os.getpid()}.copy.tmp")
    try:
        os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))  # an index is private (mode 0600)
        dst = sqlite3.connect(str(tmp), isolation_level=None)
        try:
            src.backup(dst)
        finally:
            dst.close()
        os.link(tmp, dest)  # (not os.replace: an index created there meanwhile is kept)
        return left_out
    except (FileExistsError, DatabaseError):
        return None
    finally:
        src.close()
        for suffix in ("", "-journal"):
            with contextlib.suppress(OSError):
                os.unlink(f"{tmp}{suffix}")


def _remember_open(conn, path) -> None:
    try:
        st = os.stat(path)
    except OSError:
        conn.opened_file = (os.fspath(path), None)
        return
    conn.opened_file = (os.fspath(path), (st.st_dev, st.st_ino))
    _OPEN_FILES.setdefault((st.st_dev, st.st_ino), weakref.WeakSet()).add(conn)


def _still_opened_file(conn) -> bool:
    """Whether the path ``conn`` opened (:attr:`_Connection.opened_file`) still names the file it has open (true for a
    connection that does not record it): one stat, about a microsecond."""
    opened = getattr(conn, "opened_file", None)
    if opened is None:
        return True
    try:
        st = os.stat(opened[0])
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == opened[1]


def connected_in_process(st: os.stat_result) -> bool:
    """Whether this process has an open SQLite connection to the file ``st`` describes (then it must not
    ``open()`` and ``close()`` the file itself: see :data:`_OPEN_FILES`)."""
    conns = _OPEN_FILES.get((st.st_dev, st.st_ino))
    return bool(conns)


def _read_shared_file_head(path: Path | str, n: int) -> bytes:
    """The first ``n`` bytes of the index's ``-shm`` file, read without closing a descriptor of it where this process
    has a connection to the index (which would drop that connection's SQLite locks on it: :data:`_OPEN_FILES`): then
    through a descriptor of it SQLite holds open, found in ``/proc/self/fd`` (Linux).

    Raises:
        OSError: it cannot be read (no ``-shm`` file; a connection here and no ``/proc/self/fd`` to read it through).
    """
    shm = f"{path}-shm"
    if not connected_in_process(os.stat(path)):
        with open(shm, "rb") as f:
            return f.read(n)
    st = os.stat(shm)
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError, ValueError):
            fd = int(name)
            got = os.fstat(fd)
            if (got.st_dev, got.st_ino) == (st.st_dev, st.st_ino):
                return os.pread(fd, n, 0)
    raise FileNotFoundError(shm)


_WAL_HEADER_BYTES, _WAL_FRAME_HEADER_BYTES = 32, 24
"""SQLite's WAL file format (sqlite.org/fileformat2.html, "The Write-Ahead Log"): a 32-byte file header, then frames
of a 24-byte header and one page each."""


def wal_missing_frames(path: Path | str) -> int | None:
    """How many committed pages of the index's ``-wal`` file its ``-shm`` file counts that the ``-wal`` file no longer
    holds: the ``-wal`` removed (or truncated, or replaced by a new one) while another process had the index open.
    SQLite then fails every read of the index with "disk I/O error", as it does for a file size limit or a failing disk
    (QA round 155-F F2: ``rm index.db-wal`` under a reader was told to raise ``ulimit -f``). ``0``: the ``-wal`` holds
    them all; ``None``: unknown (no ``-shm`` file, an unreadable one, or this process has a connection to the index,
    and it is not Linux, where SQLite's own descriptor of the ``-shm`` file is read instead: its locks there would be
    dropped by a descriptor opened and closed here, :data:`_OPEN_FILES`).

    The count read is the first copy of the WAL-index header at the start of the ``-shm`` file
    (sqlite.org/walformat.html §2.1: ``mxFrame``, a 32-bit integer in the machine's byte order at byte 16, and the page
    size, 16 bits at byte 14, 1 for 65,536), and the ``-wal`` file must then hold at least
    ``32 + mxFrame × (24 + page size)`` bytes.
    """
    import struct

    try:
        head = _read_shared_file_head(path, 24)
    except OSError:
        return None
    if len(head) < 24:
        return None
    size_field, frames = struct.unpack_from("=HI", head, 14)
    page = 65536 if size_field == 1 else size_field
    if not frames or page < 512:
        return 0 if not frames else None
    try:
        wal = os.path.getsize(f"{path}-wal")
    except FileNotFoundError:
        wal = 0
    except OSError:
        return None
    held = max(0, (wal - _WAL_HEADER_BYTES) // (_WAL_FRAME_HEADER_BYTES + page))
    return max(0, frames - held)


class read_snapshot:
    """Context manager: every read inside sees one state of the index (deferred ``BEGIN`` … ``COMMIT``).

    In WAL mode a read transaction keeps the snapshot of its first read while other processes
    commit; several statements that must agree (a ranking and the rows of the documents it
    returned, the document table and the postings a cache is built from) run inside one.
    Readers never block writers, and the snapshot holds no lock a writer waits on. Nested use,
    or use inside a write transaction, is a no-op (the outer transaction is the snapshot).
    """

    def __init__(self, conn) -> None:
        self.conn = conn
        self.began = False

    def __enter__(self):
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.began = True
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self.began:
            try:
                self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")  # nothing was written
            except DatabaseError:  # the connection was closed or the file damaged: nothing to end
                pass
        return False


LAST_WRITE_KEY = "last_write"
"""``meta`` key: when a :func:`write_transaction` that wrote a row last committed, ISO-8601 UTC to the second
(``status``'s ``index_modified``; a row written with its own values counts, as does a TEMP table's: the connection's
``total_changes`` moved). The files' modification times cannot tell it: a reader's close checkpoints a
WAL a writer left into the index file, which moves its time (QA round 140-C F6)."""


class write_transaction:
    """Context manager: ``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error). A transaction that changed a row
    also records its time in ``meta`` (:data:`LAST_WRITE_KEY`), when the database has that table.

    PLATFORM-NOTES: two writers that start with a plain ``BEGIN`` fail
    instantly despite busy_timeout; ``BEGIN IMMEDIATE`` takes the write lock
    first and waits up to :data:`BUSY_TIMEOUT_MS` (the connection's busy timeout), through :func:`execute_waiting`:
    Ctrl-C is seen within :data:`_LOCK_SLICE_MS` (~3 µs more a transaction where no lock is met).

    Once it holds the lock, the path the connection opened must still name the file it has open: another process
    may have removed it (a new index whose build a full disk stopped, :meth:`dreamdb.api.Index._discard_new_index`)
    while this one waited, and whatever was written to the removed file would be lost with it, reported done (QA
    round 146-A F1).

    Raises:
        LockTimeout: another process kept the write lock past the timeout.
        IndexReplaced: the file was removed or replaced meanwhile (rolled back: nothing was written).
        KeyboardInterrupt: Ctrl-C while it waited for that lock.
    """

    def __init__(self, conn) -> None:
        self.conn = conn
        self.changes = 0

    def __enter__(self):
        try:
            execute_waiting(self.conn, "BEGIN IMMEDIATE")  # (the busy timeout's wait, Ctrl-C seen: QA round 145-J F1)
            self.changes = self.conn.total_changes
        except OperationalError as exc:
            if is_lock_error(exc):
                raise LockTimeout(
                    "The index is locked by another process (a dreamdb sync or embedding refresh, or a program"
                    " holding it open in a transaction), or by another open Index of this process.",
                    hint="Wait for the other sync or refresh to finish, then retry.",
                ) from exc
            raise
        if not _still_opened_file(self.conn):
            with contextlib.suppress(DatabaseError):
                self.conn.execute("ROLLBACK")
            raise IndexReplaced(f"The index file {self.conn.opened_file[0]} was removed or replaced by another process"
                                " before this one could write it; nothing was written.",
                                hint="Retry (the index is built again where it is missing).")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            try:
                if self.conn.total_changes != self.changes:
                    self._record_write()
                self.conn.execute("COMMIT")
            except DatabaseError as error:
                # In a rollback journal (another program switched the index to one) COMMIT waits for the readers and
                # then fails busy, and SQLite keeps the transaction open: it is rolled back, never left holding the
                # write lock (QA round 81-A F1: every other writer then exited 5 while the Index lived)
                with contextlib.suppress(DatabaseError):
                    self.conn.execute("ROLLBACK")
                if is_lock_error(error):
                    raise LockTimeout(
                        "The index is locked by another process (a program reading it in a transaction kept this"
                        " write from being saved); nothing was written.",
                        hint="Close the program that holds the index open (a SQLite shell or browser), then retry.",
                    ) from error
                raise
        else:
            try:
                self.conn.execute("ROLLBACK")
            except DatabaseError:
                pass
        return False

    def _record_write(self) -> None:
        """Store this transaction's time under :data:`LAST_WRITE_KEY` (nothing where ``meta`` is not dreamdb's)."""
        from datetime import datetime, timezone

        try:
            self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                              (LAST_WRITE_KEY, datetime.now(timezone.utc).isoformat(timespec="seconds")))
        except OperationalError as exc:
            if is_lock_error(exc):
                raise
            # (no meta table yet, or another shape: the time is not recorded)


RECLAIM_MIN_SHARE = 0.5
"""Share of an index file's pages that must be free before :func:`reclaim_free_pages` rewrites it."""
RECLAIM_MIN_BYTES = 4 * 1024 * 1024
"""Free bytes an index file must hold before :func:`reclaim_free_pages` rewrites it (4 MiB: below this a rewrite
gives back little)."""


def reclaim_free_pages(conn, path: Path | str | None = None) -> int:
    """Give the disk space of deleted rows back (``VACUUM``) when at least :data:`RECLAIM_MIN_SHARE` of the file's
    pages and :data:`RECLAIM_MIN_BYTES` are free; return the bytes given back: how much smaller the index file and its
    ``-wal`` are (0 when nothing was done, or while another connection's read keeps the rewritten pages in the WAL).

    SQLite keeps the pages of deleted rows for reuse, so an index from which a 50 MB note was removed stays its size,
    even after ``sync --force`` (QA round 59 L2: 184.7 MB holding 19 documents). ``VACUUM`` rewrites the file (about
    as long as a copy of it) and needs the write lock: ``dreamdb sync`` calls this after its sync, never a lazy sync.
    With WAL the rewrite goes through the ``-wal`` file, which a checkpoint then copies back and truncates; a reader
    in another process holds that checkpoint off (it is not waited for: QA round 60 L1 saw a 10 s wait and
    "10.3 MB given back" while the files had grown by 7.5 MB), and a later checkpoint finishes it.

    Args:
        conn: a writable index connection, not inside a transaction.
        path: the index file (for the sizes; default: the connection's main database file).

    Raises:
        OperationalError: another process held the write lock past the busy timeout, or the disk (or the
            temporary folder VACUUM writes to) is full.
    """
    pages, free, size = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count", "page_size"))
    if free < RECLAIM_MIN_SHARE * pages or free * size < RECLAIM_MIN_BYTES:
        return 0
    from dreamdb.config import index_size_bytes

    if path is None:
        path = next((r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main"), "")

    def on_disk() -> int:
        with contextlib.suppress(OSError):
            return index_size_bytes(Path(path))
        return 0

    before = on_disk()
    conn.execute("VACUUM")
    checkpoint(conn)
    return max(0, before - on_disk())


def checkpoint(conn) -> bool:
    """Copy the pages of the index's ``-wal`` file into the index file and truncate the ``-wal`` file to 0 bytes
    (``PRAGMA wal_checkpoint(TRUNCATE)``), without waiting for another connection (``busy_timeout`` 0 meanwhile).

    SQLite's own checkpoints (at a commit past 1,000 pages, at the last connection's close) say nothing when they
    fail: on a disk that a big write filled, the index file cannot take the ``-wal`` file's pages, and the ``-wal``
    file, holding the whole transaction, is kept, holding the disk full (QA round 145-C F1).

    Args:
        conn: a writable connection, not inside a transaction.

    Returns:
        Whether the ``-wal`` file is now empty: ``False`` when another connection's read (or write) held the
        checkpoint off, and a later one finishes it; ``True`` too for a database that is not in WAL mode.

    Raises:
        OperationalError: the checkpoint failed (SQLite's error: "database or disk is full", "disk I/O error"); the
            ``-wal`` file keeps its pages, committed, and nothing is lost.
    """
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        busy, log, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
    return not busy and log == done
