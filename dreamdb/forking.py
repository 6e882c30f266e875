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
import time
from _thread import allocate_lock, get_ident


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
# (made of _thread's locks, not threading's: the module is imported by every recall, where threading is not yet)

FORK_WAIT_S = 10.0
"""How long (s) a ``fork`` waits for other threads' dreamdb calls to end (:func:`in_flight`) before it goes ahead."""

_mutex = allocate_lock()  # guards _depth and _forker
_forking = allocate_lock()  # held by the thread that forks, from before the fork to after it, in the parent
_depth: dict[int, int] = {}  # thread id → how many dreamdb calls it is inside (:func:`in_flight`)
_forker: int | None = None  # the thread that is forking, while it forks


class _InFlight:
    """:func:`in_flight`'s context manager (one for the process: it keeps its state per thread, in ``_depth``)."""

    __slots__ = ()

    def __enter__(self) -> None:
        me = get_ident()
        while True:
            with _mutex:
                if _forker is None or _forker == me or me in _depth:  # (a call inside one goes on: the fork
                    _depth[me] = _depth.get(me, 0) + 1  # waits for the outer one to end)
                    return
            if _forking.acquire(timeout=FORK_WAIT_S):  # the fork under way ends (or its time limit passes)
                _forking.release()

    def __exit__(self, *_exc: object) -> None:
        me = get_ident()
        with _mutex:
            left = _depth.pop(me) - 1
            if left:
                _depth[me] = left


_IN_FLIGHT = _InFlight()


def in_flight() -> _InFlight:
    """Mark a dreamdb call (one that may be inside SQLite, onnxruntime or a lock of dreamdb's) as under way in this
    thread, as a context manager. A ``fork`` from another thread waits for it to end (at most :data:`FORK_WAIT_S`),
    and the call waits while a fork is being made: a child made while another thread was inside SQLite inherits
    SQLite's global mutex held, and its first connection waits for ever (QA round 123-C F1: 1 to 3 children in 40
    hung, with another thread of the parent recalling). Calls nest; the forking thread's own are not waited for."""
    return _IN_FLIGHT


def _before_fork() -> None:
    """``os.register_at_fork(before=…)``: hold new calls, and wait for the calls under way in other threads."""
    global _forker
    me = get_ident()
    deadline = time.monotonic() + FORK_WAIT_S
    held = _forking.acquire(timeout=FORK_WAIT_S)  # (another thread's fork first)
    with _mutex:
        _forker = me if held else None
    while held and time.monotonic() < deadline:
        with _mutex:
            if not any(t != me for t in _depth):
                return
        time.sleep(0.0005)


def _after_fork_in_parent() -> None:
    global _forker
    with _mutex:
        mine = _forker == get_ident()
        if mine:
            _forker = None
    if mine:
        _forking.release()


def _after_fork_in_child() -> None:
    """The child has this thread alone: new locks, with this thread's own calls (a fork made inside one) kept."""
    global _mutex, _forking, _depth, _forker
    me = get_ident()
    _mutex, _forking = allocate_lock(), allocate_lock()
    _depth = {me: _depth[me]} if me in _depth else {}
    _forker = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
