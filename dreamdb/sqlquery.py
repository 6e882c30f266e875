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
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(_authorize)
        try:
            cur = conn.execute(query)
        except db.OperationalError as exc:
            msg = str(exc)
            if "readonly" in msg or "query_only" in msg or "read-only" in msg or "not authorized" in msg:
                raise UsageError("Write statements are refused: the index is opened read-only.",
                                 hint="The index is derived from the vault; edit the vault instead (dreamdb remember/update/delete).") from None
            raise UsageError(f"SQL error: {msg}", hint="Tables and views: documents, postings, terms, files, chunks … (docs/schema.md)") from None
        except db.DatabaseError as exc:
            raise UsageError(f"SQL error: {exc}") from None
        except (ValueError, Warning, db.sqlite3.Error) as exc:  # e.g. "You can only execute one statement at a time."
            raise UsageError(f"SQL error: {exc}") from None
        columns = [d[0] for d in cur.description or []]
        rows = cur.fetchmany(max_rows)
        return columns, rows
    finally:
        conn.close()


_DENIED = {24, 25}  # SQLITE_ATTACH, SQLITE_DETACH: attaching would create or touch other files


def _authorize(action, arg1, arg2, db_name, trigger):
    """SQLite authorizer: refuse ATTACH/DETACH (reads of the index itself are allowed)."""
    if action in _DENIED or (action == 9 and str(arg1).upper() == "VACUUM"):
        return 1  # SQLITE_DENY
    return 0  # SQLITE_OK


def _several_statements(query: str) -> bool:
    """True when ``query`` holds more than one complete statement (``SELECT 1; SELECT 2``)."""
    text = query.strip()
    for i, ch in enumerate(text):
        if ch == ";" and db.sqlite3.complete_statement(text[: i + 1]) and text[i + 1:].strip(" ;\n\t"):
            return True
    return False
