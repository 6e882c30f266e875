"""Read-only SQL against the index, for people inspecting it (``dreamdb sql``)."""

from __future__ import annotations

from pathlib import Path

from dreamdb.errors import DriverError, UsageError
from dreamdb.store import connect as db


def run_readonly(index_path: Path, query: str, *, max_rows: int = 100_000) -> tuple[list[str], list[tuple]]:
    """Run one SQL statement on a read-only connection with sqlite-vec loaded (when possible).

    Args:
        index_path: the index file.
        query: one SQL statement.
        max_rows: stop after this many rows.

    Returns:
        ``(column names, rows)``.

    Raises:
        UsageError: a write statement, several statements, or an SQL error (message from SQLite).
    """
    if not query.strip():
        raise UsageError("The SQL query is empty.", hint='Example: dreamdb sql "SELECT type, COUNT(*) FROM documents GROUP BY type"')
    if not db.sqlite3.complete_statement(query.strip().rstrip(";") + ";") or _several_statements(query):
        raise UsageError("Give exactly one SQL statement.", hint="Run statements one at a time.")
    try:
        conn = db.connect(index_path, readonly=True, vec=True)
    except DriverError:
        conn = db.connect(index_path, readonly=True, vec=False)
    denied: list[str] = []
    interrupted: list[int] = []
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(lambda *a: _authorize(denied, *a))
        # SQLite runs the query in C, where Python never sees Ctrl-C: a SIGINT handler raises a
        # flag that the progress handler (called every 10,000 virtual-machine steps) turns into an abort.
        conn.set_progress_handler(lambda: 1 if interrupted else 0, 10_000)
        with _sigint_flag(interrupted):
            try:
                cur = conn.execute(query)
                columns = [d[0] for d in cur.description or []]
                rows = cur.fetchmany(max_rows)
            except db.DatabaseError as exc:  # OperationalError included
                if interrupted:
                    raise KeyboardInterrupt from None
                raise _explain_error(str(exc), query, denied) from None
            except (ValueError, Warning, db.sqlite3.Error) as exc:  # e.g. "You can only execute one statement at a time."
                raise UsageError(f"SQL error: {exc}") from None
        return columns, rows
    finally:
        conn.close()


_WRITE_HINT = "The index is derived from the vault; edit the vault instead (dreamdb remember/update/delete)."


def _explain_error(msg: str, query: str, denied: list[str]) -> UsageError:
    """The clearest message for an SQLite error of ``dreamdb sql``."""
    if denied:
        what = "VACUUM" if query.lstrip()[:6].upper() == "VACUUM" else denied[0]  # VACUUM attaches a temp file first
        return UsageError(f"{what} is refused: dreamdb sql only reads the index.", hint=_WRITE_HINT)
    if "load_extension" in query.lower() and "not authorized" in msg:
        return UsageError("Loading extensions is refused: dreamdb sql only reads the index (sqlite-vec is already loaded).")
    if query.lstrip()[:6].upper() == "PRAGMA" and ("locked" in msg or "readonly" in msg or "read-only" in msg):
        return UsageError("This PRAGMA would change the index: refused (dreamdb sql only reads it).",
                          hint="Reading PRAGMAs work, e.g. dreamdb sql \"PRAGMA table_info(documents)\"")
    if "readonly" in msg or "query_only" in msg or "read-only" in msg or "not authorized" in msg:
        return UsageError("Write statements are refused: the index is opened read-only.", hint=_WRITE_HINT)
    return UsageError(f"SQL error: {msg}", hint="Tables and views: documents, postings, terms, files, chunks … (docs/schema.md)")


class _sigint_flag:
    """While active, Ctrl-C appends to ``flag`` instead of raising (main thread only; elsewhere a no-op)."""

    def __init__(self, flag: list) -> None:
        self.flag = flag
        self.old = None

    def __enter__(self):
        import signal

        try:
            self.old = signal.signal(signal.SIGINT, lambda *_: self.flag.append(1))
        except ValueError:  # not the main thread
            self.old = None
        return self

    def __exit__(self, *exc) -> None:
        import signal

        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)


_DENIED = {24, 25}  # SQLITE_ATTACH, SQLITE_DETACH: attaching would create or touch other files


def _authorize(denied: list[str], action, arg1, arg2, db_name, trigger):
    """SQLite authorizer: refuse ATTACH/DETACH and VACUUM (reads of the index are allowed).

    The name of a refused operation is appended to ``denied`` for the error message.
    """
    if action in _DENIED:
        denied.append("ATTACH" if action == 24 else "DETACH")
        return 1  # SQLITE_DENY
    if action == 9 and str(arg1).upper() == "VACUUM":
        denied.append("VACUUM")
        return 1
    return 0  # SQLITE_OK


def _several_statements(query: str) -> bool:
    """True when ``query`` holds more than one complete statement (``SELECT 1; SELECT 2``)."""
    text = query.strip()
    for i, ch in enumerate(text):
        if ch == ";" and db.sqlite3.complete_statement(text[: i + 1]) and text[i + 1:].strip(" ;\n\t"):
            return True
    return False
