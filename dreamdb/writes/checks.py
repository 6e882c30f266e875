"""Input checks shared by the vault writes: text a write may store, flags, the clock."""

from __future__ import annotations

import re
from datetime import date, datetime

from dreamdb.errors import UsageError
from dreamdb.vault.discover import is_utf8


_CONTROLS = "\x00-\x1f\x7f-\x9f\u2028\u2029"
"""Unicode's control characters (category Cc: C0, DEL, C1) and its line and paragraph separators (Zl, Zp), as a
regex class's ranges."""

_BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
"""The bidirectional embeddings, overrides and isolates, which make text read differently from how it is stored
("Trojan Source", Boucher & Anderson 2021)."""

_CONTROL_RE = re.compile(f"[{_CONTROLS}]")

_LINE_REFUSED_RE = re.compile(f"[{_CONTROLS}{_BIDI_CONTROLS}]")
"""What one-line text (a type, a scope, a summary) must not hold: a control character, a line or paragraph
separator, a bidirectional control."""

_PROSE_REFUSED_RE = re.compile(f"(?![\\n\\t\\r])[{_CONTROLS}{_BIDI_CONTROLS}]|\\r(?!\\n)")
"""The same for text that may span lines (an entry's text, a description), which may hold newlines, tabs and
CRLF line ends: ESC would colour or move a terminal's cursor where the entry is shown, and a carriage return
alone would write the rest of its line over the start."""


def _check_text(name: str, value: object, *, allow_newlines: bool = True) -> str:
    """``value`` when it is a non-empty string fit to store as ``name``, else UsageError (nothing is written)."""
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{name} must be a non-empty string.")
    if "\x00" in value:
        raise UsageError(f"{name} contains a NUL character.")
    if not allow_newlines and ("\n" in value or "\r" in value):
        raise UsageError(f"{name} must be one line.")
    if not allow_newlines and _LINE_REFUSED_RE.search(value):  # (QA round 48: a tab in a type was saved, shown as ␉)
        raise UsageError(f"{name} must be one line of text, without control characters such as a tab or ESC, or"
                         " bidirectional overrides; nothing was changed.")
    if allow_newlines and _PROSE_REFUSED_RE.search(value):  # (QA rounds 50, 51: ESC was written)
        raise UsageError(f"{name} must be text, without control characters such as ESC, or bidirectional overrides"
                         " (newlines and tabs are fine); nothing was changed.")
    return value


def _bad_char(text: str) -> bool:
    """True when ``text`` holds a control character (newline, tab, NUL, DEL…) or a Unicode line/paragraph separator."""
    return _CONTROL_RE.search(text) is not None


def _require_utf8(**values) -> None:
    """Raise UsageError for an argument (text, or a list of texts) that is not valid UTF-8: bytes a terminal
    could not decode arrive as surrogates, which no UTF-8 file or index can hold."""
    for name, value in values.items():
        items = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
        for item in items:
            if isinstance(item, str) and not is_utf8(item):
                raise UsageError(f"The {name} is not valid UTF-8 (it holds bytes that are not text); nothing was changed.",
                                 hint="Retype it in UTF-8; for a file whose name is not UTF-8, rename the file first"
                                      " (e.g. with convmv).")


def _flag(name: str, value, *, optional: bool = False) -> None:
    """Raise UsageError unless ``value`` is a bool (or ``None`` when ``optional``): from Python, ``"no"``
    is a true value, and writing ``breaking: true`` or pinning for it would be a silent mistake."""
    if value is None and optional:
        return
    if not isinstance(value, bool):
        raise UsageError(f"{name} must be True or False, got {value!r}; nothing was changed.")


def _clock(now) -> datetime:
    """The write's clock: ``now`` as a datetime (an ISO-8601 string is parsed; a naive value stays local
    time), the current local time for ``None``.

    Raises:
        UsageError: ``now`` is neither a datetime nor an ISO-8601 string.
    """
    if now is None:
        return datetime.now().astimezone()
    if isinstance(now, datetime):
        return now
    if isinstance(now, date):
        return datetime(now.year, now.month, now.day)
    if isinstance(now, str):
        try:
            return datetime.fromisoformat(now.strip().replace("Z", "+00:00"))
        except ValueError:
            pass
    raise UsageError(f"now must be a datetime or an ISO-8601 string, got {now!r}; nothing was changed.",
                     hint="Example: now='2026-08-18T09:30:00+02:00'")
