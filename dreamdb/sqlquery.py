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
    try:
        conn = db.connect(index_path, readonly=True, vec=True)
    except DriverError:
        conn = db.connect(index_path, readonly=True, vec=False)
    try:
        conn.execute("PRAGMA query_only = ON")
        try:
            cur = conn.execute(query)
        except db.OperationalError as exc:
            msg = str(exc)
            if "readonly" in msg or "query_only" in msg or "read-only" in msg:
                raise UsageError("Write statements are refused: the index is opened read-only.",
                                 hint="The index is derived from the vault; edit the vault instead (dreamdb remember/update/delete).") from None
            raise UsageError(f"SQL error: {msg}", hint="Tables and views: documents, postings, terms, files, chunks … (docs/schema.md)") from None
        except db.DatabaseError as exc:
            raise UsageError(f"SQL error: {exc}") from None
        except (ValueError, Warning) as exc:  # e.g. "You can only execute one statement at a time."
            raise UsageError(f"SQL error: {exc}") from None
        columns = [d[0] for d in cur.description or []]
        rows = cur.fetchmany(max_rows)
        return columns, rows
    finally:
        conn.close()
