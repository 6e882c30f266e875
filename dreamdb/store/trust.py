"""Which state of the index file dreamdb itself left, so that a file changed since by anything else is checked.

SQLite finds a damaged page only when a statement reads it: an index whose bytes another program, a copy or sync
tool, or a disk changed may answer a recall from pages that still parse, with wrong figures and no error (QA round
155-F F1: 20 bits flipped in the middle of the real vault's index, found by ``PRAGMA quick_check``, gave other scores
and another order, exit 0). ``quick_check`` on every open costs ≈ 16 ms on that 7.9 MB index (``scripts/bench_ops.py``),
too much for the prompt hook; so after each of dreamdb's own writes (and the checkpoints that carry them from the
``-wal`` into the index file), the index file's :func:`signature` is recorded in a sidecar beside it,
``<index>.trusted`` (written whole or not at all), and an open that finds the file's signature other than the one
recorded checks the file before trusting it (:meth:`dreamdb.api.Index._open`), then records it. A file with no
sidecar (an index of an older dreamdb, or one copied in) is checked once.

A signature that differs while the file is sound (another dreamdb process's checkpoint raced the record, a process
that ended without closing its connection) costs one check; damage made after the last check and before dreamdb's own
next record, within one call, is trusted.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

SUFFIX = ".trusted"
"""Appended to the index file's name for its sidecar (``index.db.trusted``)."""


def sidecar_path(index_path: Path | str) -> str:
    """The sidecar of the index file ``index_path``: ``<index_path>.trusted``."""
    return f"{os.fspath(index_path)}{SUFFIX}"


def signature(index_path: Path | str) -> str | None:
    """The index file's ``"<device>:<inode>:<size in bytes>:<mtime in ns>"`` (one ``stat``, ≈ 1 µs), ``None`` when
    it cannot be read. Any write to the file by another program changes its modification time (to the nanosecond
    where the file system keeps it), a replaced file its inode."""
    try:
        st = os.stat(index_path)
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def recorded(index_path: Path | str) -> str | None:
    """The signature recorded in the sidecar (``None``: no sidecar, or one that cannot be read)."""
    try:
        with open(sidecar_path(index_path), encoding="ascii") as f:
            return f.read(200).strip() or None
    except (OSError, ValueError):
        return None


def is_trusted(index_path: Path | str) -> bool:
    """Whether the index file is as dreamdb last left it: its :func:`signature` is the one recorded (a stat and a
    read of a 40-byte file, ≈ 20 µs)."""
    now = signature(index_path)
    return now is not None and now == recorded(index_path)


def record(index_path: Path | str, sig: str | None = None) -> None:
    """Record ``sig`` (default: the file's :func:`signature` now) as the state dreamdb left the index in: written to a
    temporary file beside the sidecar, then renamed over it (a reader sees the old record or the new one). Nothing is
    recorded, and nothing raised, where the folder cannot be written (a read-only vault's index is checked at each
    open that finds it changed), nor for a file that is gone."""
    sig = sig or signature(index_path)
    if sig is None:
        return
    dest = sidecar_path(index_path)
    with contextlib.suppress(OSError):
        if recorded(index_path) == sig:
            return
        tmp = f"{dest}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(sig + "\n")
            os.replace(tmp, dest)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def forget(index_path: Path | str) -> None:
    """Remove the sidecar (the index file is deleted or replaced: nothing of it is trusted)."""
    with contextlib.suppress(OSError):
        os.unlink(sidecar_path(index_path))


def problems_if_changed(conn, index_path: Path | str, rows: int = 100) -> list[str]:
    """``PRAGMA quick_check``'s problems of the index ``conn`` has open, where its file is not as dreamdb last left it
    (:func:`is_trusted`), else ``[]`` without reading it (≈ 20 µs). A file found sound is recorded as trusted (its
    signature taken before the check: a change made meanwhile is checked by the next open).

    Args:
        conn: a connection to ``index_path``.
        rows: the most problems ``quick_check`` reports (SQLite's ``N``).

    Returns:
        Its problem rows (SQLite's text), ``[]`` when the file is sound or unchanged.

    Raises:
        DatabaseError: SQLite's error while checking (damage it reports as an error, a lock).
    """
    sig = signature(index_path)
    if sig is None or sig == recorded(index_path):
        return []
    found = [r[0] for r in conn.execute(f"PRAGMA quick_check({int(rows)})")]
    if found == ["ok"]:
        record(index_path, sig)
        return []
    return found
