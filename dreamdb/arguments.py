"""Checks of the Python API's arguments shared by its entry points (recall, dedup)."""

from __future__ import annotations

import operator
import re

from dreamdb.errors import UsageError

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WHOLE = re.compile(r"[+-]?[0-9]+")


def written_number(text: str, *, whole: bool = False) -> bool:
    """Whether ``text`` (stripped) is a number as README documents them, written in ASCII digits (``60``, ``2.5``,
    ``-1``, ``1e3``; with ``whole``, digits alone): Python's ``float`` and ``int`` also take ``1_000``, the digits of
    other scripts (``٣``, ``३``) and ``inf``/``nan``, which an environment variable or an option then read as a number
    (QA round 152-F F7: ``DREAMDB_LOCK_TIMEOUT=1_000`` and ``=٣`` were taken, where README says anything but a number
    ≥ 0 exits 2)."""
    return (_WHOLE if whole else _DECIMAL).fullmatch(text.strip()) is not None


SMALLEST_NUMBER = 5e-324
"""The smallest number above 0 a float holds (``math.ulp(0.0)``, a subnormal): a written number under half of it is
read as 0."""


def reads_as_zero(text: str) -> bool:
    """Whether ``text`` is a number written in ASCII digits (:func:`written_number`) that is not 0 (a digit before
    its exponent is not ``0``) but that Python's ``float`` reads as 0 (``1e-400``: past the smallest float,
    :data:`SMALLEST_NUMBER`). Where 0 means something of its own (``sql --timeout 0``: no time limit), such a number
    means the opposite of what was written (QA round 153-A F2)."""
    text = text.strip()
    if not written_number(text):
        return False
    digits = re.split("[eE]", text, maxsplit=1)[0]
    return any(d in "123456789" for d in digits) and float(text) == 0


def whole_number(value, name: str, low: int, high: int, wanted: str | None = None) -> int:
    """``value`` as a Python int when it is a whole number from ``low`` to ``high``: an ``int`` or any integer type
    that says so through ``__index__`` (numpy's ``int64``, QA round 62 L6), never a bool, float or string.

    Args:
        value: the argument as passed.
        name: its name, for the error.
        low, high: the bounds (inclusive).
        wanted: what the error says is wanted (default "an integer from ``low`` to ``high``").

    Raises:
        UsageError: not a whole number, or out of bounds.
    """
    number = None
    if not isinstance(value, bool):
        try:
            number = operator.index(value)
        except TypeError:
            pass
    if number is None or not low <= number <= high:
        raise UsageError(f"{name} must be {wanted or f'an integer from {low} to {high}'}, got {value!r}")
    return number


def seconds(value, name: str) -> float | None:
    """``value`` as a float of seconds when it is a finite number ≥ 0 (never a bool), or ``None`` for ``None``.

    Raises:
        UsageError: anything else.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise UsageError(f"{name} must be a number of seconds ≥ 0 or None, got {value!r}")
    return float(value)


def text(value, name: str, hint: str | None = None) -> str:
    """``value`` when it is a ``str``, ``""`` for ``None``: an argument of text checked where it is given, not deep in
    the code that reads it (QA round 145-F F7: ``dedup(title=5)`` raised AttributeError in the chunker, ``content=None``
    in the frontmatter reader, ``content=b"…"`` TypeError).

    Raises:
        UsageError: anything else (bytes included: decode them first), with ``hint`` when given.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "…"
        raise UsageError(f"{name} must be a string (or None), got {type(value).__name__} {shown}",
                         hint=hint or ("Decode it first: value.decode('utf-8')."
                                       if isinstance(value, (bytes, bytearray, memoryview)) else None))
    return value


def flags(**values) -> None:
    """Raise UsageError unless every value is a bool: from Python, ``"no"`` is a true value, and a flag read
    as true by mistake (``force="no"`` re-embedding everything) is a silent surprise.

    Raises:
        UsageError: the first value that is not ``True`` or ``False``, named.
    """
    for name, value in values.items():
        if not isinstance(value, bool):
            raise UsageError(f"{name} must be True or False, got {value!r}")


def callback(value, name: str) -> None:
    """Raise UsageError unless ``value`` is ``None`` or callable: found at the call, not after a write that
    calls it (QA round 68 L1: ``update(on_kept=5)`` saved the edit, then raised TypeError).

    Raises:
        UsageError: ``value`` is not callable.
    """
    if value is not None and not callable(value):
        raise UsageError(f"{name} must be a function or None, got {value!r}")
