"""Checks of the Python API's arguments shared by its entry points (recall, dedup)."""

from __future__ import annotations

import operator

from dreamdb.errors import UsageError


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
