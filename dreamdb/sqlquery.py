"""Read-only SQL against the index, for people inspecting it (``dreamdb sql``)."""

from __future__ import annotations

import os
import time
from json.encoder import encode_basestring, encode_basestring_ascii
from pathlib import Path
from typing import Callable, NamedTuple

from dreamdb import output
from dreamdb.errors import DreamdbError, DriverError, IndexDamaged, UsageError
from dreamdb.store import connect as db


DEFAULT_MAX_ROWS = 100_000
"""Rows ``dreamdb sql`` prints unless ``--max-rows`` says otherwise (0 = no limit)."""


DEFAULT_TIMEOUT_S = 30.0
"""Seconds a ``dreamdb sql`` statement may run before it is stopped (0 = no limit): a runaway query (a recursive CTE
without an end) ran until it was interrupted by hand, and an agent calling ``sql`` waited with it (QA round 51).
Every documented query takes milliseconds; a full scan of a 100,000-document index, seconds."""


class QueryTimeout(DreamdbError):
    """The statement ran longer than its time limit and was stopped (exit 1; nothing was changed)."""


MAX_RESULT_BYTES = 128 * 2**20
"""Bytes of result data ``dreamdb sql`` holds before it cuts a result, whatever the rows, counted by :func:`result_size`:
a cell's bytes as the output format writes them (:func:`cell_size`: JSON's escapes, CSV's quotes, a BLOB's hex; 8 a
number or NULL) and :data:`CELL_OVERHEAD` more, and :data:`ROW_OVERHEAD` and the column names' bytes
(:func:`names_size`: JSON repeats them in every row) a row; a table's cells are padded to their column's widest
(:func:`table_cell_size`, counted by :func:`_fetch`). A result is held in memory before it is printed, at up to about
9 times that size (2,000,000 rows of one integer, 7 times, 1.26 GB as JSON or a table), so a query of three 1 GB
BLOBs asked for about 27 GB (QA round 115-C F3); text that JSON escapes (a control character, 1 byte, is 6: ``\\u0001``)
was counted in UTF-8, and 10,000 of them in each of 13,315 rows made 800 MB of JSON and 2.4 GB resident (QA round
152-A F5). The largest cell SQLite makes is 1 GB (``SQLITE_MAX_LENGTH``), and a row is read whole before it is
counted (:func:`_fetch`): a row of large values can take a few GB beyond the cap (QA round 151-G F1)."""

CELL_OVERHEAD = 24
"""Bytes :func:`result_size` counts for a cell beyond its data: its Python object and its place in the row, the JSON
key or table cell it becomes (≈ 240 bytes a cell as JSON, 180 in a table, measured; QA round 145-D F3, where
2,000,000 rows of one integer, counted 8 bytes each, took 1.26 GB: 79 times their count)."""

ROW_OVERHEAD = 48
"""Bytes :func:`result_size` counts for a row beyond its cells (≈ 380 bytes a row as JSON or a table, measured)."""

_ENCODE_PIECE = 2**20
"""Characters of non-ASCII text encoded at once to count its UTF-8 bytes (a 1 GB cell is not copied whole)."""


FORMATS = ("json", "csv", "table")
"""The output formats :func:`cell_size` counts a cell for (``None``: the value as it is held, text in UTF-8)."""


def result_size(row: tuple, names: int = 0, fmt: str | None = None, *, terminal: bool = False) -> int:
    """What one result row counts toward :data:`MAX_RESULT_BYTES`, in bytes: per cell its data as ``fmt`` writes it
    (:func:`cell_size`) plus :data:`CELL_OVERHEAD`, plus :data:`ROW_OVERHEAD` for the row, plus ``names``: the bytes
    of the result's column names (:func:`names_size`), which JSON writes again in every row. ``terminal``: CSV is
    written to a terminal (its control characters shown as pictures)."""
    size = ROW_OVERHEAD + CELL_OVERHEAD * len(row) + names
    for v in row:
        size += cell_size(v, fmt, terminal=terminal) if isinstance(v, (str, bytes, bytearray, memoryview)) else 8
    return size


def cell_size(v, fmt: str | None = None, *, terminal: bool = False) -> int:
    """The bytes of the cell ``v`` as the output format ``fmt`` writes it, and at least as held (QA round 152-A F5:
    text was counted in UTF-8, where JSON writes a control character as 6 bytes, a tag character as 12):

    - text: ``"json"`` as :func:`dreamdb.output.to_json` writes it (``json.dumps``' escapes, then those of
      :func:`dreamdb.output.escape_for_json`; every character past ASCII escaped under
      :data:`dreamdb.output.ASCII_JSON`), ``"csv"`` as :func:`csv_text` does (a quote doubled, a cell quoted, the
      hidden characters escaped, with ``terminal`` the control characters shown), ``"table"`` and ``None`` in
      UTF-8 (the row holds the whole value; the table shows 80 characters of it);
    - a BLOB: ``"json"`` and ``"csv"`` its hex (2 bytes a byte), else its length;
    - anything else (a number, NULL): 8.

    ASCII text without a control character costs a few scans (``str.isascii`` is a flag); other text is escaped a
    piece at a time, as the output does it."""
    if isinstance(v, str):
        if fmt == "json":
            return _json_size(v)
        if fmt == "csv":
            return _csv_size(v, terminal)
        return _utf8_size(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        n = v.nbytes if isinstance(v, memoryview) else len(v)
        return 2 * n if fmt in ("json", "csv") else n
    return 8


def names_size(columns: list[str], fmt: str | None = None) -> int:
    """The bytes of ``columns``' names as JSON keys (:func:`unique_names`; escaped as JSON escapes them with ``fmt``
    ``"json"``, else in UTF-8): what each row of the result counts for them toward :data:`MAX_RESULT_BYTES` (QA round
    151-G F2: a column named by 100,000 characters, not counted, made a 200 MB JSON of 2,000 rows of one integer, 619
    MB resident; QA round 152-A F5: one named by 10,000 control characters, 60,000 bytes of JSON a row, counted 10,000)."""
    return sum(_json_size(name) if fmt == "json" else _utf8_size(name) for name in unique_names(columns))


def table_cell_size(v) -> int:
    """The bytes of the cell ``v`` as ``dreamdb sql``'s table shows it, before its padding: text cut at 80 characters,
    its control and hidden characters made visible (``␛``, ``<U+2028>``), a BLOB as ``<N bytes>``, a number as
    ``str`` writes it, NULL as nothing. The table pads every cell to its column's widest (QA round 152-A F5: one cell
    of 80 U+2028 in each of three columns made 1,065,214 rows of 'a' 1.4 GB of table, 6.5 GB resident)."""
    if v is None:
        return 0
    if isinstance(v, str):
        if len(v) <= 80 and v.isascii() and v.isprintable():
            return len(v)
        return _utf8_size(output.visible_field(output.clip(v, 80, cut=77)))  # (as the CLI's _cell, then output.table, show it)
    if isinstance(v, bytes):
        return len(f"<{len(v)} bytes>")
    if isinstance(v, int) and -9_999_999 <= v <= 99_999_999:
        return 8  # (8 at most, as the cell counts it: no str() of every integer)
    return len(str(v))


def _utf8_size(v: str) -> int:
    """The bytes of ``v`` in UTF-8, ASCII text without encoding it, other text a piece at a time."""
    if v.isascii():
        return len(v)
    # (QA round 145-D F3: len() counted 35,000,000 emoji as 35 MB; they are 140 MB in UTF-8)
    return sum(len(p.encode("utf-8", "surrogatepass")) for p in _pieces(v))


def _pieces(v: str):
    """``v`` in slices of :data:`_ENCODE_PIECE` characters (a 1 GB cell is not encoded or escaped whole)."""
    return (v[i:i + _ENCODE_PIECE] for i in range(0, len(v), _ENCODE_PIECE))


def _json_size(v: str) -> int:
    """The bytes of the text ``v`` inside JSON's quotes as :func:`dreamdb.output.to_json` writes it: ``json.dumps``'
    escapes (``\\"``, ``\\n``, ``\\u0001``; with :data:`dreamdb.output.ASCII_JSON`, ``\\u00e9`` and the 12 bytes of
    a surrogate pair past U+FFFF), then :func:`dreamdb.output.escape_for_json`'s (DEL and the C1 controls, hidden
    characters, bidirectional marks, lone surrogates; DEL counted as escaped, as JSON writes it, ASCII or not: QA
    round 152-F F1). Counted a piece at a time (a run of hidden characters across two pieces may count a few bytes short)
    from the text's UTF-8 bytes, where ``json.dumps``' escapes are of ASCII characters: a byte table
    (``bytes.translate``) leaves those to count, and text with no character that ``escape_for_json`` could change
    (:data:`_SUSPECT_BYTES`: Latin and Turkish letters, accents) is not escaped to be counted."""
    if len(v) > _ENCODE_PIECE:
        return sum(map(_json_piece_size, _pieces(v)))
    return _json_piece_size(v)


_PLAIN_BYTES = bytes(c for c in range(0x20, 0x100) if c not in b'"\\\x7f')
"""The UTF-8 bytes ``json.dumps`` writes as they are: every byte but the C0 controls, DEL, ``"`` and ``\\``."""
_SHORT_ESCAPED = b'"\\\b\f\n\r\t'
"""The characters ``json.dumps`` escapes in 2 bytes (``\\"``, ``\\n`` …); the other C0 controls (and DEL) take 6."""
_SUSPECT_BYTES = bytes([0xC2, *range(0xCD, 0x100)])
"""The UTF-8 lead bytes of the characters :func:`dreamdb.output.escape_for_json` may change, and more: U+0080–U+00BF
(the C1 controls, the soft hyphen) and U+0340 on (U+034F, the combining grapheme joiner, and every hidden character,
variation selector, bidirectional mark and lone surrogate)."""
_NOT_SUSPECT = bytes(c for c in range(0x100) if c not in _SUSPECT_BYTES)


def _json_piece_size(p: str) -> int:
    if output.ASCII_JSON and not p.isascii():
        return len(encode_basestring_ascii(p)) - 2
    b = p.encode("utf-8", "surrogatepass")
    special = b.translate(None, _PLAIN_BYTES)  # (the C0 controls, DEL, " and \ alone: usually nothing)
    size = len(b) + 5 * len(special) - 4 * sum(map(special.count, _SHORT_ESCAPED)) if special else len(b)
    if p.isascii() or not b.translate(None, _NOT_SUSPECT):
        return size
    return len(output.escape_for_json(encode_basestring(p)).encode("utf-8", "surrogatepass")) - 2


def _csv_size(v: str, terminal: bool) -> int:
    """The bytes of the text ``v`` as a cell of :func:`csv_text`: its quotes doubled and 2 for the quotes around it
    (counted for any text holding a quote, a comma, a line break or, past the fast path, anything else), the
    hidden characters escaped (:func:`dreamdb.output.escape_smuggling`) and, with ``terminal``, the control
    characters shown (:func:`dreamdb.output.show_controls`), a piece at a time."""
    quotes = v.count('"')
    if v.isascii() and v.isprintable():
        return len(v) + quotes + (2 if quotes or "," in v else 0)
    if v.isascii() and not terminal:  # (no hidden character is ASCII; a control character is kept as it is)
        return len(v) + quotes + 2
    return quotes + 2 + sum(_csv_piece_size(p, terminal) for p in _pieces(v))


def _csv_piece_size(p: str, terminal: bool) -> int:
    if terminal:
        p = output.show_controls(p)
    else:
        b = p.encode("utf-8", "surrogatepass")
        if not b.translate(None, _NOT_SUSPECT):  # (nothing escape_smuggling escapes: one quick scan)
            return len(b)
    return _utf8_size(output.escape_smuggling(p))


class SqlResult(NamedTuple):
    """What :func:`run_readonly` returns: column names, rows, whether the result was cut (``truncated``), by what
    (``cut_by``: ``"max_rows"``, ``"max_bytes"`` (:data:`MAX_RESULT_BYTES`), or ``None``), and notes on what the
    rows may not show (the ``-wal`` file an immutable open cannot read)."""

    columns: list[str]
    rows: list[tuple]
    truncated: bool
    cut_by: str | None = None
    notes: tuple[str, ...] = ()


def bare_command(words: str, then: str = "") -> str:
    """``dreamdb <words> <then>``: the command line a hint of :func:`run_readonly` names when its caller gives none
    (no vault at hand)."""
    return f"dreamdb {words}" + (f" {then}" if then else "")


def run_readonly(index_path: Path, query: str, *, max_rows: int = DEFAULT_MAX_ROWS,
                 timeout_s: float = DEFAULT_TIMEOUT_S, fmt: str | None = None, terminal: bool = False,
                 command: Callable[..., str] = bare_command) -> SqlResult:
    """Run one SQL statement on a read-only connection with sqlite-vec loaded (when possible).

    Args:
        index_path: the index file.
        query: one SQL statement; trailing semicolons, whitespace and comments are allowed.
        max_rows: keep at most this many rows (0 = no limit); ``truncated`` says when more were left.
        timeout_s: stop the statement after this many seconds of running and fetching (0 = no limit).
        fmt: the output format the rows are for (``"json"``, ``"csv"``, ``"table"``; ``None``: none), whose bytes
            count toward :data:`MAX_RESULT_BYTES` (:func:`cell_size`); ``terminal``: CSV for a terminal.
        command: ``command(words, then="")``, the command line a hint names (``dreamdb sync --check``, ``dreamdb sql
            "…"``): :meth:`dreamdb.api.Index._command` names the dreamdb that runs and ``--vault`` where dreamdb run
            in the working folder would not find the vault (QA round 156-G F5: pasted from another folder, a bare
            ``dreamdb sync --check`` exited 3, no vault there).

    Returns:
        :class:`SqlResult`; a result past :data:`MAX_RESULT_BYTES` is cut there (``cut_by="max_bytes"``).

    Raises:
        UsageError: a write statement, several statements, or an SQL error (message from SQLite); a first row
            alone past :data:`MAX_RESULT_BYTES`.
        IndexDamaged: SQLite reports the index file damaged; or a value the query read is not UTF-8 and one of the
            index's own columns holds such text (which dreamdb never stores).
        LockTimeout: another connection held the index locked past the busy timeout.
        QueryTimeout: the statement ran longer than ``timeout_s``.
        KeyboardInterrupt: Ctrl-C (SIGINT) while it ran.
    """
    if max_rows < 0:
        raise UsageError(f"--max-rows must be 0 (no limit) or more, not {max_rows}.",
                         hint="Give --max-rows the most rows to print, e.g. 100, or 0 for all.")
    if not timeout_s >= 0:  # (nan too: QA round 156-D F3, no hint)
        raise UsageError(f"--timeout must be 0 (no limit) or more seconds, not {timeout_s}.",
                         hint="Give --timeout the seconds the query may run, e.g. 30, or 0 for no limit.")
    query = single_statement(query, command=command)

    def rebuild() -> str:  # (the hint of damage, worded when said: Index._command looks for the working folder's vault)
        return f"{command('sync --check')} rebuilds it from the vault."
    # a lock is waited for up to the time limit when it is shorter (QA round 118-B F7: --timeout 1 waited 10 s)
    busy_ms = max(1, int(timeout_s * 1000)) if timeout_s and timeout_s * 1000 < db.BUSY_TIMEOUT_MS \
        else db.BUSY_TIMEOUT_MS
    try:
        conn = db.connect_readonly(index_path, vec=True, busy_timeout_ms=busy_ms, damaged_hint=rebuild)
    except DriverError:
        conn = db.connect_readonly(index_path, vec=False, busy_timeout_ms=busy_ms, damaged_hint=rebuild)
    denied: list[str] = []
    reads: set[str] = set()  # the columns the query reads (table.column, lower case), as SQLite's authorizer tells them
    interrupted: list[int] = []
    timed_out: list[bool] = []
    try:
        # (temp_store is left as SQLite's default, files: a large sort spills to SQLITE_TMPDIR, TMPDIR or /var/tmp,
        # gigabytes for a sort of the whole postings table, bounded by the time limit alone, as SQLite caps no temp
        # file; in memory, it would take as much RAM. sql --help says so: QA round 151-G F5)
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(lambda *a: _authorize(denied, *a, reads=reads))
        notes = _unseen_wal(conn, index_path)
        # SQLite runs the query in C, where Python never sees Ctrl-C. The progress handler (called every 10,000
        # virtual-machine steps) aborts on the time limit or Ctrl-C's flag; a watchdog thread interrupts the
        # connection too, for a statement whose few steps each take long (one function on a 50 MB value: QA round
        # 115-C F2, a --timeout 2 query ran 78 s, and Ctrl-C was lost).
        deadline = time.monotonic() + timeout_s if timeout_s else None

        def progress() -> int:
            if interrupted:
                return 1
            if deadline is not None and time.monotonic() > deadline:
                timed_out.append(True)
                return 1
            return 0

        conn.set_progress_handler(progress, 10_000)
        with _sigint_flag(interrupted), _Watchdog(conn, deadline, interrupted, timed_out):
            try:
                cur = conn.execute(query)
                columns = [d[0] for d in cur.description or []]
                rows, cut_by = _fetch(cur, max_rows, names_size(columns, fmt), fmt, terminal=terminal,
                                      columns=columns)
            except db.DatabaseError as exc:  # OperationalError included
                if interrupted:
                    raise KeyboardInterrupt from None
                if timed_out:
                    raise QueryTimeout(f"The query ran longer than {timeout_s:g} s and was stopped; nothing was changed.",
                                       hint="Narrow it (a WHERE, a LIMIT), or give --timeout SECONDS (0 = no limit).") from None
                if db.is_damage(exc):
                    raise IndexDamaged(f"The index at {index_path} is damaged ({exc}).",
                                       hint=rebuild()) from None
                if "no such module: vec0" in str(exc):  # (QA round 89 F5: an SQL error, exit 2, with no word of it)
                    raise DriverError(f"The SQLite driver ({db.DRIVER_NAME}) cannot load sqlite-vec, which the vector "
                                      f"tables need ({exc}).", hint="Unset DREAMDB_SQLITE_DRIVER to use sqlean.py, or "
                                      "pip install 'sqlean.py>=3.45'.") from None
                lost = _missing_own_table(conn, str(exc))
                if lost:  # (QA round 88 B4: "no such table: documents", exit 2, with a hint naming that very table)
                    raise IndexDamaged(f"The index at {index_path} is damaged: its table {lost} is missing ({exc}).",
                                       hint=rebuild()) from None
                if db.is_lock_error(exc):  # (taken after the open's wait: a lock, not a statement the user wrote)
                    from dreamdb.errors import LockTimeout

                    raise LockTimeout(f"Another program held the index at {index_path} locked for more than "
                                      f"{busy_ms / 1000:g} s ({exc}).",
                                      hint="Retry once it is done (its lock ends with its connection).") from None
                undecodable = "Could not decode to UTF-8" in str(exc)
                read = frozenset(reads)  # (before the scans below, which the authorizer sees too)
                damaged = _undecodable_stored(conn, read) if undecodable else []
                # the index's damage the query did not read (QA round 151-A F5: CAST(X'FF' AS TEXT) was blamed on it)
                elsewhere = _undecodable_stored(conn) if undecodable and damaged == [] else []
                if interrupted:  # (Ctrl-C during those scans)
                    raise KeyboardInterrupt from None
                if damaged:  # (QA round 150-D F1: blamed on the query, where the index's own text was damaged)
                    raise IndexDamaged(f"The index at {index_path} is damaged: {', '.join(damaged)} hold"
                                       f"{'s' if len(damaged) == 1 else ''} text that is not UTF-8 (the query read a"
                                       " value it could not decode; dreamdb stores only UTF-8).",
                                       hint=rebuild()) from None
                raise _explain_error(exc, query, denied, stored_checked=damaged is not None,
                                     damaged_elsewhere=elsewhere or [], command=command) from None
            except (ValueError, Warning, db.sqlite3.Error) as exc:  # e.g. "You can only execute one statement at a time."
                raise UsageError(f"SQL error: {exc}", hint="Give one SQL statement that reads the index (SELECT …;"
                                                          " PRAGMA table_info(documents) lists a table's columns).") from None
        if interrupted:  # (Ctrl-C after the last step: the result is not printed, as for one mid-query)
            raise KeyboardInterrupt
        return SqlResult(columns, rows, cut_by is not None, cut_by, notes)
    finally:
        conn.close()


def _fetch(cur, max_rows: int, names: int = 0, fmt: str | None = None, *, terminal: bool = False,
           columns: list[str] = ()) -> tuple[list[tuple], str | None]:
    """The rows of ``cur``: at most ``max_rows`` (0 = no limit) and :data:`MAX_RESULT_BYTES` (:func:`result_size` in
    the output format ``fmt``, each row counting ``names``, the bytes of the column names), and what cut them
    (``"max_rows"``, ``"max_bytes"``, ``None``). For the table (``fmt`` ``"table"``), every row counts too what its
    cells are padded past 8 bytes to their column's widest cell or header (:func:`table_cell_size`; ``columns``
    the names): a cell of 80 characters made every row of its column 80 wide.

    Raises:
        UsageError: the first row alone holds more than :data:`MAX_RESULT_BYTES`.
    """
    rows: list[tuple] = []
    size = 0
    table = fmt == "table"
    widths = [table_cell_size(name) for name in columns] if table else []
    padding = sum(max(0, w - 8) for w in widths)  # (bytes past 8 each row's cells are padded to, in all)
    # One row at a time (QA round 116-A F2: a batch of 1,000 rows of 1 MB was fetched for --max-rows 1, 1.5 GB): no
    # row past either limit is kept, and none past the one that tells the cut is fetched. That one is read whole,
    # though, and so is each row before it is counted: SQLite makes a row's values whole (up to 1 GB each) when it
    # steps to it, a step ahead of the driver, whose cursor converts the row when the next is asked for and tells
    # of no further row without it; nor can the driver (sqlean) bound a value's length (no setlimit). So a first row
    # of three 1 GB BLOBs peaks near 6 GB before it is refused, and --max-rows 1 before a 1 GB second row near 2 GB
    # (QA round 151-G F1); sql --help and docs/json.md say so.
    for row in cur:
        if max_rows and len(rows) >= max_rows:
            return rows, "max_rows"
        size += result_size(row, names, fmt, terminal=terminal)
        if table:
            if len(widths) < len(row):
                widths += [0] * (len(row) - len(widths))
            for i, v in enumerate(row):
                w = table_cell_size(v)
                if w > widths[i]:
                    padding += max(0, w - 8) - max(0, widths[i] - 8)
                    widths[i] = w
        if size + (len(rows) + 1) * padding > MAX_RESULT_BYTES:
            if not rows:
                raise UsageError(f"The first row of the result holds more than {MAX_RESULT_BYTES // 2**20} MiB"
                                 f"{' with its column names' if names else ''}; dreamdb sql holds a result in memory "
                                 "before printing it.",
                                 hint="Select a part of the value (substr(), length()) or name the columns shortly "
                                      "(AS), or read the index with sqlite3 for values that large.")
            return rows, "max_bytes"
        rows.append(row)
    return rows, None


def _unseen_wal(conn, index_path: Path) -> tuple[str, ...]:
    """A note when ``conn`` was opened immutable (its ``-shm`` file could not be made) beside a ``-wal`` file that
    holds transactions it cannot read (QA round 115-C F1: the result left the last sync out without a word)."""
    if not getattr(conn, "immutable", False):
        return ()
    try:
        wal = os.path.getsize(f"{index_path}-wal")
    except OSError:
        return ()
    if not wal:
        return ()
    return (f"the index was read without its -wal file ({wal:,} bytes of its latest changes), which cannot be read "
            f"without writing beside it (its -shm file): the result may miss them until {index_path.parent} can be "
            "written",)


_LONGEST_WAIT_S = 3600.0
"""Longest wait of :class:`_Watchdog` for its deadline in one ``select`` (then it looks again): ``select`` refuses a
timeout past the platform's ``time_t`` (QA round 118-B F6: ``--timeout inf`` printed the thread's traceback)."""


class _Watchdog:
    """While active, a thread interrupts ``conn`` (:meth:`sqlite3.Connection.interrupt`, safe from another thread) at
    ``deadline`` (``time.monotonic()``; appending to ``timed_out``) or on Ctrl-C (appending to ``interrupted``), read
    from :func:`signal.set_wakeup_fd`'s pipe: SQLite inside one long step never returns to Python, where the SIGINT
    handler and the progress handler run. Main thread only for Ctrl-C; elsewhere the deadline alone."""

    def __init__(self, conn, deadline: float | None, interrupted: list, timed_out: list) -> None:
        self.conn, self.deadline, self.interrupted, self.timed_out = conn, deadline, interrupted, timed_out
        self.fds: list[int] = []
        self.old_wakeup = None
        self.thread = None

    def __enter__(self):
        import signal  # (imported here, not in the thread: at a low open-file limit its import failed there, after
        import threading  # the pipes took their descriptors; QA round 116-A F4, a traceback)

        try:
            import select
        except ImportError:  # (loading it needs a file: at ulimit -n 6 none is left, QA round 117-A F1, exit 70)
            return self  # no watchdog: the progress handler still stops the query at the time limit and on Ctrl-C
        self.select = select
        wake_r, wake_w = os.pipe()
        stop_r, stop_w = os.pipe()
        self.fds = [wake_r, wake_w, stop_r, stop_w]
        os.set_blocking(wake_w, False)
        try:
            self.old_wakeup = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        except ValueError:  # not the main thread: no Ctrl-C to see
            self.old_wakeup = None
        self.thread = threading.Thread(target=self._watch, name="dreamdb-sql-watchdog", daemon=True)
        self.thread.start()
        return self

    def _watch(self) -> None:
        from signal import SIGINT  # (the module is loaded: no file opened)

        wake_r, _w, stop_r, _sw = self.fds
        while True:
            wait = None if self.deadline is None else min(max(0.0, self.deadline - time.monotonic()), _LONGEST_WAIT_S)
            ready, _, _ = self.select.select([wake_r, stop_r], [], [], wait)
            if stop_r in ready:
                return
            if wake_r in ready:
                if SIGINT in os.read(wake_r, 64):
                    self.interrupted.append(1)
                    self.conn.interrupt()
                    return
                continue
            if self.deadline is not None and time.monotonic() >= self.deadline:
                self.timed_out.append(True)
                self.conn.interrupt()
                return

    def __exit__(self, *exc) -> None:
        import signal

        if not self.fds:
            return
        os.write(self.fds[3], b"x")
        if self.thread is not None:
            self.thread.join()
        if self.old_wakeup is not None:
            signal.set_wakeup_fd(self.old_wakeup)
        for fd in self.fds:
            os.close(fd)


def _missing_own_table(conn, msg: str) -> str | None:
    """The table or view named by SQLite's "no such table" ``msg`` when a migration the index records as applied
    creates it: a table of dreamdb's own gone from the index (damage), not a name mistyped. ``None`` otherwise."""
    from dreamdb.store.migrations import available, missing_object, names_created

    found = missing_object(msg)
    if found is None or found[0] != "table" or found[1] != "main":
        return None  # (temp.documents names no table of the index: QA round 89 F1 rebuilt a sound index for it)
    name = found[2]
    if name == "schema_migrations":  # (the migration runner's own, in every index: QA round 89 F6)
        return name
    try:
        applied = {v for (v,) in conn.execute("SELECT version FROM schema_migrations")}
        if conn.execute("SELECT 1 FROM main.sqlite_master WHERE lower(name) = ?", (name,)).fetchone() is not None:
            return None  # (there: the query's error is another)
    except db.DatabaseError:
        return None
    # (tables and views only: a column a migration adds named as a table, FROM words, is a mistyped name; QA round 145-D
    # F1 rebuilt every document for it)
    return name if any(name in names_created(path) for v, _n, path in available() if v in applied) else None


_WRITE_HINT = "The index is derived from the vault; edit the vault instead (dreamdb remember/update/delete)."


def _pragma_hint(command: Callable[..., str]) -> str:
    """The hint of a PRAGMA refused as a write (``command``: :func:`run_readonly`'s)."""
    return "Reading PRAGMAs work, e.g. " + command("sql", '"PRAGMA table_info(documents)"')


_READONLY_MESSAGE = "attempt to write a readonly database"
"""SQLite's message for ``SQLITE_READONLY`` (a write on the ``query_only``, ``mode=ro`` connection)."""
_AUTH_MESSAGE = "not authorized"
"""SQLite's whole message for a statement the authorizer refused (``SQLITE_AUTH``) and for ``load_extension()``
where extension loading is off (``SQLITE_ERROR``)."""


def _undecodable_stored(conn, columns: frozenset[str] | None = None) -> list[str] | None:
    """The columns of the index's tables that hold text that is not UTF-8 (:func:`dreamdb.store.texts.undecodable_texts`;
    of ``columns`` only, as ``table.column`` in lower case, where given: those the query reads), for a query that read
    a value the driver could not decode: ``[]`` when none does (the query's own expression made the value), ``None``
    when that could not be told (the scan stopped: the time limit, Ctrl-C, an error)."""
    from dreamdb.store.texts import undecodable_texts

    try:
        return undecodable_texts(conn, columns=columns)
    except db.DatabaseError:
        return None


def _explain_error(exc: BaseException, query: str, denied: list[str], *, stored_checked: bool = True,
                   damaged_elsewhere: list[str] = (), command: Callable[..., str] = bare_command) -> UsageError:
    """The clearest message for the SQLite error ``exc`` of ``dreamdb sql``'s ``query``. A refusal is told by SQLite's
    result code (:func:`dreamdb.store.connect.error_code`) or a message that is the fixed one whole, never by words in
    it: "no such column: is_readonly" quotes the user's name (QA round 145-D F2, told "Write statements are
    refused"). ``stored_checked``: for a value that could not be decoded, whether the text of the index's columns the
    query reads was found to be UTF-8 (:func:`_undecodable_stored`): the query made the value; else the hint names
    both causes. ``damaged_elsewhere``: the index's columns that hold text that is not UTF-8 which the query does not
    read, said too (QA round 151-A F5). ``command``: as :func:`run_readonly`'s, the command lines the hints name."""
    msg = str(exc)
    schema_query = command("sql", '"SELECT name, type FROM sqlite_schema"')
    code = db.error_code(exc)
    head = _skip_trivia(query)[:6].upper()  # the first keyword, after any leading comments
    if denied:
        what = "VACUUM" if head == "VACUUM" else denied[0]  # VACUUM attaches a temp file first
        return UsageError(f"{what} is refused: dreamdb sql only reads the index.",
                          hint=_pragma_hint(command) if what.startswith("PRAGMA") else _WRITE_HINT)
    not_authorized = code == db.SQLITE_AUTH or msg == _AUTH_MESSAGE
    if not_authorized and code != db.SQLITE_AUTH and "load_extension" in query.lower():
        # (QA round 143-G F2: "sqlite-vec is already loaded" was said where the driver cannot load it)
        return UsageError("Loading extensions is refused: dreamdb sql only reads the index"
                          + (" (sqlite-vec is already loaded)." if db.CAN_LOAD_EXTENSIONS else
                             f"; sqlite-vec, its only extension, cannot be loaded by this SQLite driver ({db.DRIVER_NAME})."),
                          hint="Leave load_extension() out of the query: "  # (QA round 156-D F3: none)
                               + ("sqlite-vec's functions (vec_distance_cosine…) work as they are."
                                  if db.CAN_LOAD_EXTENSIONS else "query the index's other tables as they are."))
    if not_authorized or code == db.SQLITE_READONLY or (code is None and msg.startswith(_READONLY_MESSAGE)):
        if head == "PRAGMA":
            return UsageError("This PRAGMA would change the index: refused (dreamdb sql only reads it).",
                              hint=_pragma_hint(command))
        return UsageError("Write statements are refused: the index is opened read-only.", hint=_WRITE_HINT)
    from dreamdb.store.connect import CAN_LOAD_EXTENSIONS, DRIVER_NAME

    if "no such table" in msg or "no such column" in msg:
        hint = (f"Tables and views: documents, postings, terms, files, chunks … (all of them: {schema_query}; with"
                " their columns: docs/schema.md in the source repository)")
        if not CAN_LOAD_EXTENSIONS and "no such table" in msg:  # (QA round 98-A F11, 99-A F8)
            hint += (f"; the embedding tables (vec_embeddings; chunks and the rest in an index this driver made) need a"
                     f" SQLite driver that loads sqlite-vec, which {DRIVER_NAME} cannot")
    elif "Could not decode to UTF-8" in msg and stored_checked and damaged_elsewhere:
        hint = (f"A TEXT value of bytes that are not UTF-8 (the query made it: no column of the index it reads holds"
                f" such text): select hex(value) or CAST(value AS BLOB) instead. The index is damaged elsewhere, though:"
                f" {', '.join(damaged_elsewhere)} hold{'s' if len(damaged_elsewhere) == 1 else ''} text that is not"
                f" UTF-8 (dreamdb stores only UTF-8); {command('sync --check')} rebuilds it from the vault.")
    elif "Could not decode to UTF-8" in msg and stored_checked:  # (QA round 115-C: the generic hint)
        hint = ("A TEXT value of bytes that are not UTF-8 (the query made it: the index's own text was checked and is"
                " UTF-8): select hex(value) or CAST(value AS BLOB) instead.")
    elif "Could not decode to UTF-8" in msg:  # (the index's text could not be checked: QA round 150-D F1)
        hint = ("A TEXT value of bytes that are not UTF-8: the query made it (select hex(value) or CAST(value AS BLOB)"
                f" instead), or the index is damaged (it stores UTF-8 only): {command('sync --check')} finds that"
                " and rebuilds it from the vault.")
    elif "Query vector on the" in msg and "NULL" in msg:  # (a KNN query's MATCH of a rowid that has no vector)
        hint = ("The MATCH subquery found no vector: no such document or chunk, or no vector for it yet"
                f" ({command('embed refresh')} embeds it; SELECT doc_id FROM documents names the documents).")
    elif "no such function" in msg:
        # (QA round 98-B F4: the hint promised sqlite-vec's functions under a driver that cannot load it)
        hint = ("SQLite's built-in functions and sqlite-vec's (vec_distance_cosine, vec_to_json, …) are available."
                if CAN_LOAD_EXTENSIONS else f"SQLite's built-in functions are available; sqlite-vec's (vec_…) are not: the"
                f" SQLite driver ({DRIVER_NAME}) cannot load it (unset DREAMDB_SQLITE_DRIVER to use sqlean.py).")
    else:
        hint = (f"The query is SQLite's SQL (sqlite.org/lang.html); tables and views: {schema_query}, or docs/schema.md"
                " in the source repository.")
    return UsageError(f"SQL error: {msg}", hint=hint)


class _sigint_flag:
    """While active, Ctrl-C appends to ``flag`` instead of raising (main thread only; elsewhere a no-op; nor where
    SIGINT is ignored, as in a POSIX background job: it stays ignored, QA round 152-A F6, :func:`dreamdb.entry.take_signal`)."""

    def __init__(self, flag: list) -> None:
        self.flag = flag
        self.old = None

    def __enter__(self):
        import signal

        from dreamdb.entry import take_signal

        try:
            self.old = take_signal(signal.SIGINT, lambda *_: self.flag.append(1))
        except ValueError:  # not the main thread
            self.old = None
        return self

    def __exit__(self, *exc) -> None:
        import signal

        if self.old is not None and self.old is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, self.old)


_DENIED = {24, 25}  # SQLITE_ATTACH, SQLITE_DETACH: attaching would create or touch other files


_READING_PRAGMAS_WITH_ARGUMENT = frozenset({
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "foreign_key_check", "integrity_check", "quick_check", "function_list", "module_list", "pragma_list",
    "collation_list", "database_list", "compile_options"})
"""PRAGMAs whose argument names what to read (``PRAGMA table_info(documents)``); any other PRAGMA given
a value sets something, and is refused like a write."""
_WRITING_PRAGMAS = frozenset({"wal_checkpoint", "optimize", "incremental_vacuum"})
"""PRAGMAs that write to the database file even without a value."""


def _authorize(denied: list[str], action, arg1, arg2, db_name, trigger, *, reads: set[str] | None = None):
    """SQLite authorizer: refuse ATTACH/DETACH, VACUUM and PRAGMAs that set or write something
    (reads of the index are allowed).

    The name of a refused operation is appended to ``denied`` for the error message; each column read (through a view
    too: SQLite names its table's) to ``reads``, as ``table.column`` in lower case.
    """
    if action == 20:  # SQLITE_READ: arg1 the table, arg2 the column ('' for a table read for its rows alone)
        if reads is not None and arg1:
            reads.add(f"{arg1}.{arg2}".lower())
        return 0
    if action in _DENIED:
        denied.append("ATTACH" if action == 24 else "DETACH")
        return 1  # SQLITE_DENY
    if action == 9 and str(arg1).upper() == "VACUUM":
        denied.append("VACUUM")
        return 1
    if action == 19:  # SQLITE_PRAGMA: arg1 the name, arg2 its value or argument (None without one)
        name = str(arg1).lower()
        if name in _WRITING_PRAGMAS or (arg2 is not None and name not in _READING_PRAGMAS_WITH_ARGUMENT):
            denied.append(f"PRAGMA {name}" + (f" = {arg2}" if arg2 is not None else ""))
            return 1
    return 0  # SQLITE_OK


def single_statement(query: str, *, command: Callable[..., str] = bare_command) -> str:
    """The one statement of ``query``, without what may trail it (semicolons, whitespace, comments).

    ``SELECT 1; -- note`` gives ``SELECT 1;``; ``SELECT 1 -- note`` is returned as it is; empty statements before it
    are left out as those after it are (``;SELECT 1`` gives ``SELECT 1``, as ``SELECT 1;;`` gives ``SELECT 1;``).

    Raises:
        UsageError: the query is empty (or only comments), or holds a second statement (``SELECT 1; SELECT 2``).
    """
    text = query.strip()
    first, after_empty = _leading_trivia(text)
    if first == len(text):
        raise UsageError("The SQL query is empty.",
                         hint="Example: " + command("sql", '"SELECT type, COUNT(*) FROM documents GROUP BY type"'))
    text = text[after_empty:].lstrip(_SQL_SPACE)  # (QA round 145-D: ";SELECT 1" was refused as two statements)
    for i, ch in enumerate(text):
        # the first ';' that ends a complete statement (not one inside a string, comment or trigger body)
        if ch == ";" and db.sqlite3.complete_statement(text[: i + 1]):
            if _skip_trivia(text[i + 1:]):
                raise UsageError("Give exactly one SQL statement.", hint="Run statements one at a time.")
            return text[: i + 1]
    return text  # no ending ';': one statement (or an unfinished one, which SQLite reports)


_SQL_SPACE = " \t\n\f\r"  # SQLite's whitespace


def _skip_trivia(text: str) -> str:
    """``text`` from its first token on: leading whitespace, ';' and comments skipped ("" when nothing is left)."""
    return text[_leading_trivia(text)[0]:]


def _leading_trivia(text: str) -> tuple[int, int]:
    """``(first, after_empty)``: the index of ``text``'s first token (``len(text)`` when it has none) and the index
    just past the last ';' before it (0 when none; a ';' in a comment does not count): leading whitespace, comments
    and empty statements end at ``first``, the empty statements at ``after_empty``."""
    i, n, after_empty = 0, len(text), 0
    while i < n:
        if text[i] in _SQL_SPACE:
            i += 1
        elif text[i] == ";":
            i += 1
            after_empty = i
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2  # SQLite lets a /* comment run to the end of the text
        else:
            return i, after_empty
    return n, after_empty


# ---------------------------------------------------------------- JSON and CSV values


def unique_names(columns: list[str]) -> list[str]:
    """Column names made unique for JSON keys: a repeated ``a`` becomes ``a_2``, ``a_3`` … (never another column's name)."""
    taken = set(columns)
    seen: set[str] = set()
    out: list[str] = []
    for name in columns:
        key = name
        if key in seen:
            n = 2
            while f"{name}_{n}" in taken or f"{name}_{n}" in seen:
                n += 1
            key = f"{name}_{n}"
        seen.add(key)
        out.append(key)
    return out


def json_value(v):
    """A cell as JSON: BLOB → uppercase hex string (as SQLite's ``hex()``), ±infinity → ``"Infinity"``/``"-Infinity"``,
    everything else (INTEGER, REAL, TEXT, NULL) natively."""
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex().upper()
    if isinstance(v, float) and v != v:  # NaN: SQLite stores it as NULL, but a function may still return one
        return None
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def json_rows(columns: list[str], rows: list[tuple]) -> list[dict]:
    """Rows as JSON objects, one key per column (duplicates suffixed, see :func:`unique_names`)."""
    keys = unique_names(columns)
    return [dict(zip(keys, map(json_value, r))) for r in rows]


def csv_value(v):
    """A cell for CSV: BLOB → uppercase hex, the rest as the csv module writes it (NULL → empty)."""
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex().upper()
    return v


def csv_text(columns: list[str], rows, *, terminal: bool) -> str:
    """The CSV ``dreamdb sql --format csv`` prints: a header row, then one row per result row (:func:`csv_value`).

    CSV is data, and the text stays exact, but for two things (QA round 55, where CSV printed what ``--json``
    escapes and the table shows):

    - The characters that can carry a hidden message (Unicode tag characters outside a flag, a run of
      variation selectors, the others of :data:`dreamdb.output.SMUGGLING_CHARS`) are written as JSON's ``\\u``
      escapes, as ``--json`` writes them (:func:`dreamdb.output.escape_smuggling`), whether or not stdout is a
      terminal: an agent reads ``sql`` through a pipe, and must see them there instead of reading the message.
    - Control characters (ESC, CR, the C1 controls) and bidirectional marks are shown as the table shows them
      (ESC as ``␛``) when ``terminal`` (stdout is a terminal, where ESC would colour, move the cursor or set the
      window title, and a CR in a cell would overwrite its line), and written as they are when not: CSV piped to a
      file or a program is data, and a byte the query returned is kept. Newlines and tabs are kept in both (the
      csv module quotes a cell that holds one).
    """
    import csv
    import io

    from dreamdb.output import escape_smuggling, show_controls

    def cell(v):
        v = csv_value(v)
        return show_controls(v) if terminal and isinstance(v, str) else v

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([cell(c) for c in columns])
    w.writerows([cell(v) for v in r] for r in rows)
    return escape_smuggling(buf.getvalue())
