"""What a child made by ``fork`` must never free of its parent's: :func:`pin_for_ever`.

A child inherits its parent's objects, but not the threads or file locks behind them. Freeing one there runs its
destructor against state that is not the child's: an onnxruntime session waits for ever on the parent's thread
pool (a child that ended with ``sys.exit`` hung at interpreter shutdown: QA round 97-A F1), and an SQLite
connection closed as the child's last one may checkpoint and delete the WAL file the parent is still using
(sqlite.org, "How To Corrupt An SQLite Database File", 2.6). Holding them in a list is not enough: interpreter
shutdown clears module globals and frees what they held.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


def pin_for_ever(obj: object) -> None:
    """Give ``obj`` one reference that nothing releases, so that it is never freed in this process, not even when
    the interpreter shuts down (CPython's ``Py_IncRef``; the memory goes back when the process ends)."""
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))


def exit_without_native_handlers() -> bool:
    """Make this process's exit end in ``_exit(status)`` once Python has finished (its ``atexit`` handlers run, its
    files flushed), before the C-level exit handlers of the native libraries loaded so far run: in a child made by
    ``fork``, onnxruntime's static destructors wait for ever on condition variables of the parent's threads (QA
    round 97-A F1: a child that ended with ``sys.exit`` hung). glibc's ``on_exit`` calls its handlers with the
    exit status, newest first, so ``_exit`` registered now runs before the handlers of the libraries loaded before
    it. Returns whether it was registered (``False`` where there is no ``on_exit``: not glibc)."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        on_exit, _exit = libc.on_exit, libc._exit
    except (OSError, AttributeError):
        return False
    # (_exit's one argument is the status; the second on_exit passes, its arg, is ignored by every C calling convention)
    return on_exit(ctypes.c_void_p(ctypes.cast(_exit, ctypes.c_void_p).value), None) == 0


# -- the fork gate ---------------------------------------------------------------------------------------------------

FORK_WAIT_S = 10.0
"""How long (s) a ``fork`` waits for other threads' dreamdb calls to end (:func:`in_flight`) before it goes ahead."""

_gate = threading.Condition()
_depth: dict[int, int] = {}  # thread id → how many dreamdb calls it is inside (:func:`in_flight`)
_forker: int | None = None  # the thread that is forking, while it forks


@contextmanager
def in_flight() -> Iterator[None]:
    """Mark a dreamdb call (one that may be inside SQLite, onnxruntime or a lock of dreamdb's) as under way in this
    thread. A ``fork`` from another thread waits for it to end (at most :data:`FORK_WAIT_S`), and the call waits while
    a fork is being made: a child made while another thread was inside SQLite inherits SQLite's global mutex held,
    and its first connection waits for ever (QA round 123-C F1: 1 to 3 children in 40 hung, with another thread of
    the parent recalling). Calls nest; the forking thread's own are not waited for."""
    me = threading.get_ident()
    with _gate:
        while _forker is not None and _forker != me and me not in _depth:  # (a call inside one goes on: the fork
            _gate.wait()  # waits for the outer one to end)
        _depth[me] = _depth.get(me, 0) + 1
    try:
        yield
    finally:
        with _gate:
            left = _depth.pop(me) - 1
            if left:
                _depth[me] = left
            else:
                _gate.notify_all()


def _before_fork() -> None:
    """``os.register_at_fork(before=…)``: wait for the calls under way in other threads (:func:`in_flight`)."""
    global _forker
    me = threading.get_ident()
    deadline = time.monotonic() + FORK_WAIT_S
    with _gate:
        while _forker is not None and _forker != me and _gate.wait(max(0.0, deadline - time.monotonic())):
            pass  # (another thread's fork first)
        _forker = me
        while any(t != me for t in _depth) and _gate.wait(max(0.0, deadline - time.monotonic())):
            pass


def _after_fork_in_parent() -> None:
    global _forker
    with _gate:
        _forker = None
        _gate.notify_all()


def _after_fork_in_child() -> None:
    """The child has this thread alone: a new gate, with this thread's own calls (a fork made inside one) kept."""
    global _gate, _depth, _forker
    me = threading.get_ident()
    _gate = threading.Condition()
    _depth = {me: _depth[me]} if me in _depth else {}
    _forker = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
