"""Regular expressions compiled at their first use instead of at import.

Python compiles a pattern with Python code (``re._compiler``): the Turkish inflection patterns, the camelCase parts'
pattern and the output's hidden-character patterns took 27 ms of a 115 ms ``dreamdb recall`` process on the real
vault (measured 5 Dec 2026 by timing each ``re.compile``), yet a query of plain English words needs none of them,
and the prompt hook pays that start-up on every prompt.
"""

from __future__ import annotations

import re


class LazyPattern:
    """A regular expression compiled at the first call, then kept: ``PATTERN().fullmatch(word)``.

    Args:
        pattern: the regex source (``str``), as for :func:`re.compile`.
        flags: ``re`` flags (``int``).

    Raises:
        re.error: at the first call, when ``pattern`` is not a valid regex (the test suite compiles every one).
    """

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern | None = None

    def __call__(self) -> re.Pattern:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.flags)
        return compiled

    @property
    def compiled(self) -> bool:
        """Whether the pattern has been compiled (by a first call)."""
        return self._compiled is not None

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern[:40]!r}{'…' if len(self.pattern) > 40 else ''})"
