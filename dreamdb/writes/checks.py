"""Input checks shared by the vault writes: text a write may store, flags, the clock."""

from __future__ import annotations

import re
from datetime import date, datetime

from dreamdb.errors import UsageError
from dreamdb.output import FLAG_TAG_SEQUENCE, SMUGGLING_CHARS, VARIATION_SELECTORS
from dreamdb.vault.discover import is_utf8


_CONTROLS = "\x00-\x1f\x7f-\x9f\u2028\u2029"
"""Unicode's control characters (category Cc: C0, DEL, C1) and its line and paragraph separators (Zl, Zp), as a
regex class's ranges."""

_BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
"""The bidirectional embeddings, overrides and isolates, which make text read differently from how it is stored
("Trojan Source", Boucher & Anderson 2021)."""

_INVISIBLE = SMUGGLING_CHARS + "\ufeff"
"""Invisible characters a write refuses (QA round 54): the Unicode tag characters and interlinear annotation marks
that can carry a hidden message to an agent (:data:`dreamdb.output.SMUGGLING_CHARS`; a tag sequence of a flag, as
England's, is text and is kept), and U+FEFF, a byte-order mark inside the text. The format characters that text
needs stay allowed: the zero-width joiner of emoji (U+200D) and non-joiner of Persian (U+200C), the direction marks
U+200E, U+200F and U+061C, the soft hyphen. QA round 55 added the invisible operators U+2061–U+2064 and the
noncharacters U+FFFE, U+FFFF to :data:`SMUGGLING_CHARS`; the word joiner U+2060, private-use characters (icon
fonts) and the Hangul fillers stay allowed."""

_VS_RUN = f"(?<=[{VARIATION_SELECTORS}])[{VARIATION_SELECTORS}]"
"""A variation selector right after another (QA round 55): one after a character is text (❤️, 葛󠄀), a run of them
after an emoji is a hidden message, a byte a selector (:data:`dreamdb.output.VARIATION_SELECTORS`). The second of
the run is the character refused, so the error names where the run starts to hide something."""

_CONTROL_RE = re.compile(f"[{_CONTROLS}]")

_LINE_REFUSED_RE = re.compile(f"{FLAG_TAG_SEQUENCE}|(?P<bad>[{_CONTROLS}{_BIDI_CONTROLS}{_INVISIBLE}]|{_VS_RUN})")
"""What one-line text (a type, a scope, a summary, a tag) must not hold: a control character, a line or
paragraph separator, a bidirectional control, an invisible character of :data:`_INVISIBLE`, a run of variation
selectors (:data:`_VS_RUN`). (A match without the ``bad`` group is a flag's tag sequence, which is allowed.)"""

_PROSE_REFUSED_RE = re.compile(
    f"{FLAG_TAG_SEQUENCE}|(?P<bad>(?![\\n\\t\\r])[{_CONTROLS}{_BIDI_CONTROLS}{_INVISIBLE}]|{_VS_RUN}|\\r(?!\\n))")
"""The same for text that may span lines (an entry's text, a description), which may hold newlines, tabs and
CRLF line ends: ESC would colour or move a terminal's cursor where the entry is shown, and a carriage return
alone would write the rest of its line over the start."""


def _refused_char(text: str, *, one_line: bool = True) -> int | None:
    """The index in ``text`` of the first character a write refuses (:data:`_LINE_REFUSED_RE`, or
    :data:`_PROSE_REFUSED_RE` when not ``one_line``), or None. A search for the class alone cannot tell a tag
    character of a flag from a smuggled one, so the flags are matched too and passed over."""
    for m in (_LINE_REFUSED_RE if one_line else _PROSE_REFUSED_RE).finditer(text):
        if m.group("bad") is not None:
            return m.start()
    return None


def _found(text: str, at: int) -> str:
    """Which refused character ``text`` holds and where, for an error message: an invisible one cannot be
    seen in the message's quote of the text. A variation selector is refused only after another, which the
    message says (QA round 55): the character alone is allowed."""
    where = f"U+{ord(text[at]):04X} at character {at + 1:,}"
    if re.fullmatch(f"[{VARIATION_SELECTORS}]", text[at]):
        return where + ", the second variation selector in a row: one after a character is fine, a run hides bytes"
    return where


def _check_text(name: str, value: object, *, allow_newlines: bool = True) -> str:
    """``value`` when it is a non-empty string fit to store as ``name``, else UsageError (nothing is written)."""
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{name} must be a non-empty string.")
    if "\x00" in value:
        raise UsageError(f"{name} contains a NUL character.")
    if not allow_newlines and ("\n" in value or "\r" in value):
        raise UsageError(f"{name} must be one line.")
    at = _refused_char(value, one_line=not allow_newlines)
    if at is not None and not allow_newlines:  # (QA round 48: a tab in a type was saved, shown as ␉)
        raise UsageError(f"{name} must be one line of text, without control characters such as a tab or ESC,"
                         " bidirectional overrides or invisible characters such as Unicode tags"
                         f" (found {_found(value, at)}); nothing was changed.")
    if at is not None:  # (QA rounds 50, 51: ESC was written; 54: invisible tag characters)
        raise UsageError(f"{name} must be text, without control characters such as ESC, bidirectional overrides"
                         " or invisible characters such as Unicode tags (newlines and tabs are fine;"
                         f" found {_found(value, at)}); nothing was changed.")
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
