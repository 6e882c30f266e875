"""What a child made by ``fork`` must never free of its parent's: :func:`pin_for_ever`.

A child inherits its parent's objects, but not the threads or file locks behind them. Freeing one there runs its
destructor against state that is not the child's: an onnxruntime session waits for ever on the parent's thread
pool (a child that ended with ``sys.exit`` hung at interpreter shutdown: QA round 97-A F1), and an SQLite
connection closed as the child's last one may checkpoint and delete the WAL file the parent is still using
(sqlite.org, "How To Corrupt An SQLite Database File", 2.6). Holding them in a list is not enough: interpreter
shutdown clears module globals and frees what they held.
"""

from __future__ import annotations


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
