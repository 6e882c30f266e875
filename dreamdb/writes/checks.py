"""Input checks shared by the vault writes: text a write may store, flags, the clock."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

from dreamdb.errors import UsageError, WriteRefused, param_name
from dreamdb.output import FLAG_TAG_SEQUENCE, SMUGGLING_CHARS, ZERO_WIDTH, first_hidden, has_visible, takes_selector
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
noncharacters U+FFFE, U+FFFF to :data:`SMUGGLING_CHARS`, QA round 56 the other noncharacters (U+FDD0–U+FDEF,
U+1FFFE … U+10FFFF); the word joiner U+2060, private-use characters (icon fonts) and the Hangul fillers stay
allowed, one at a time (a run of two or more of :data:`dreamdb.output.ZERO_WIDTH` is refused, QA round 56, see
:func:`_refused_char`)."""

_CONTROL_RE = re.compile(f"[{_CONTROLS}]")

_LINE_REFUSED_RE = re.compile(f"{FLAG_TAG_SEQUENCE}|(?P<bad>[{_CONTROLS}{_BIDI_CONTROLS}{_INVISIBLE}])")
"""What one-line text (a type, a scope, a summary, a tag) must not hold: a control character, a line or
paragraph separator, a bidirectional control, an invisible character of :data:`_INVISIBLE`. (A match without the
``bad`` group is a flag's tag sequence, which is allowed.) The variation selectors and zero-width characters that
hide bytes are found by :func:`dreamdb.output.first_hidden` (see :func:`_refused_char`)."""

_PROSE_REFUSED_RE = re.compile(
    f"{FLAG_TAG_SEQUENCE}|(?P<bad>(?![\\n\\t\\r])[{_CONTROLS}{_BIDI_CONTROLS}{_INVISIBLE}])")
"""The same for text that may span lines (an entry's text, a description), which may hold tabs and line ends (LF,
CR LF, and CR alone, as a note's are read: :func:`dreamdb.vault.parse.plain_text`): ESC would colour or move a
terminal's cursor where the entry is shown. A carriage return alone, which would write the rest of its line over the
start, is a line end: a write stores it as one (:func:`lone_cr_as_lf`; QA round 143-C F4: text with classic Mac line
ends was refused as holding a control character, though "newlines are fine")."""

_LONE_CR_RE = re.compile(r"\r(?!\n)")


def lone_cr_as_lf(text: str) -> str:
    """``text`` with each carriage return that ends a line alone (classic Mac line ends; CR CR LF is two line ends)
    as LF, as the indexer reads a note (:func:`dreamdb.vault.parse.plain_text`); CR LF is left as given. What a write
    stores of text :func:`_check_text` let through with its lines: never a bare CR, which a terminal shows by writing
    the rest of the line over its start."""
    return _LONE_CR_RE.sub("\n", text) if "\r" in text else text


def _refused_char(text: str, *, one_line: bool = True) -> int | None:
    """The index in ``text`` of the first character a write refuses (:data:`_LINE_REFUSED_RE`, or
    :data:`_PROSE_REFUSED_RE` when not ``one_line``; or the first that :func:`dreamdb.output.safe_text` would leave
    out as hidden, :func:`dreamdb.output.first_hidden`: a variation selector after a character that takes none or
    after another, a run of zero-width characters, QA rounds 55 and 56), or None. A search for the class alone
    cannot tell a tag character of a flag from a smuggled one, so the flags are matched too and passed over."""
    refused = next((m.start() for m in (_LINE_REFUSED_RE if one_line else _PROSE_REFUSED_RE).finditer(text)
                    if m.group("bad") is not None), None)
    hidden = first_hidden(text) if refused != 0 else None
    return min((at for at in (refused, hidden) if at is not None), default=None)


def _shown(c: str) -> str:
    """``'D' (U+0044)``, or ``U+200D`` alone for a character that does not show."""
    return f"'{c}' (U+{ord(c):04X})" if c.isprintable() else f"U+{ord(c):04X}"


def _found(text: str, at: int) -> str:
    """Which refused character ``text`` holds and where, for an error message: an invisible one cannot be
    seen in the message's quote of the text. A variation selector or a zero-width character is refused only
    where it hides something (QA rounds 55, 56), which the message says: the character alone is allowed."""
    c = text[at]
    where = f"U+{ord(c):04X} at character {at + 1:,}"
    if "\ufe00" <= c <= "\ufe0f" or "\U000e0100" <= c <= "\U000e01ef":
        base = text[at - 1] if at else ""
        if not base:
            return where + ", a variation selector at the start, after no character: a selector alone hides a byte"
        if "\ufe00" <= base <= "\ufe0f" or "\U000e0100" <= base <= "\U000e01ef":
            return where + (", the second variation selector in a row: one after a character that takes one is"
                            " fine, a run hides bytes")
        if not any(takes_selector(base, s) for s in ("\ufe00", "\ufe0f", "\U000e0100")):
            return (where + f", a variation selector after {_shown(base)}, which takes none: selectors after such"
                    " characters hide bytes")
        return (where + f", a variation selector after {_shown(base)}, which does not take this one: such selectors"
                " hide bytes")
    if c in ZERO_WIDTH:
        run = len(text[at:]) - len(text[at:].lstrip(ZERO_WIDTH))
        if run > 1:
            return (where + f", the first of {run:,} zero-width characters in a row: one between visible characters"
                    " is fine (the joiner of an emoji, Persian's non-joiner), a run hides bits")
    return where


def _check_text(name: str, value: object, *, allow_newlines: bool = True, hint: str | None = None) -> str:
    """``value`` when it is a non-empty string fit to store as ``name`` (its lines' lone CRs as LF,
    :func:`lone_cr_as_lf`, when ``allow_newlines``), else UsageError (nothing is written; ``hint``: how to give one,
    for an empty value). ``name`` is said as the option that gave it, while a command runs
    (:func:`dreamdb.errors.param_name`), and every refusal has a hint (QA round 156-D F3)."""
    name = param_name(name)
    what = name[0].lower() + name[1:] if name[:1].isupper() and name[1:2].islower() else name  # (in a hint's middle:
    # "The entry text" as "the entry text")
    if not isinstance(value, str):  # (QA round 150-B C2: description=5 was told "a non-empty string", where the
        # empty one removes the key; the type was what was wrong)
        raise UsageError(f"{name} must be a string, got {type(value).__name__} ({_short_repr(value)}).",
                         hint=f"Give {what} as text (a str).")
    if not value.strip():
        raise UsageError(f"{name} must be a non-empty string.",
                         hint=hint or f"Give {what} some text, not an empty or blank value.")
    if "\x00" in value:
        raise UsageError(f"{name} contains a NUL character.", hint=f"Give {what} as text, without NUL characters.")
    if not has_visible(value):
        raise UsageError(f"{name} holds no visible character (only spaces and invisible characters such as"
                         f" {_found(value, next(i for i, c in enumerate(value) if not c.isspace()))});"
                         " nothing was changed.", hint=f"Give {what} text that shows: letters, digits or signs.")
    if not allow_newlines and ("\n" in value or "\r" in value):
        raise UsageError(f"{name} must be one line.", hint=f"Give {what} on one line: a space where the line breaks.")
    at = _refused_char(value, one_line=not allow_newlines)
    if at is not None and not allow_newlines:  # (QA round 48: a tab in a type was saved, shown as ␉)
        raise UsageError(f"{name} must be one line of text, without control characters such as a tab or ESC,"
                         " bidirectional overrides or invisible characters such as Unicode tags"
                         f" (found {_found(value, at)}); nothing was changed.",
                         hint=f"Give {what} without that character (a space for a tab).")
    if at is not None:  # (QA rounds 50, 51: ESC was written; 54: invisible tag characters)
        raise UsageError(f"{name} must be text, without control characters such as ESC, bidirectional overrides"
                         " or invisible characters such as Unicode tags (newlines and tabs are fine;"
                         f" found {_found(value, at)}); nothing was changed.",
                         hint=f"Give {what} without that character.")
    return lone_cr_as_lf(value) if allow_newlines else value


def _short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters with an ellipsis (a message names a wrong value, not a page of it)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


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
                from dreamdb.vault.discover import require_utf8

                require_utf8(item, f"The {name}", after="; nothing was changed",
                             hint="Retype it in UTF-8; for a file whose name is not UTF-8, rename the file first"
                                  " (e.g. with convmv).")


def refuse_doubled_marks(text: str, subject: str) -> None:
    """Raise WriteRefused when ``text`` (a file's, after its one byte-order mark) starts with a second mark or has
    lines ending in CR CR LF: the indexer reads such a file (:func:`dreamdb.vault.parse.plain_text`), a write would
    keep or stack what it misreads (QA round 120-B F1, F2: a note's frontmatter not found, a second block stacked
    above it; 121-A F7: CHANGELOG.json refused as no JSON, or an entry written with CR LF into it). ``subject``:
    how the message names the file (``The file``, ``core/CHANGELOG.json``)."""
    if text.startswith("\ufeff") or "\r\r\n" in text:
        what = ("starts with two byte-order marks" if text.startswith("\ufeff") else
                "has lines ending in CR CR LF (Windows line ends converted twice?)")
        raise WriteRefused(f"{subject} {what}; it was not changed.",
                           hint="Save it with one byte-order mark (or none) and one kind of line end (dos2unix fixes"
                                " both), then retry.")


def not_utf8_refusal(name: str, raw: bytes) -> WriteRefused:
    """The refusal of a write to the file ``name`` whose bytes ``raw`` are not UTF-8: sync reads UTF-16 and UTF-32
    files (with their byte order mark), but a write keeps every other byte of a file as it is, which it can do in
    UTF-8 only; the hint says how to convert the file (QA round 90-C F9: there was none)."""
    from dreamdb.vault.encoding import wide_unicode_codec

    codec = (wide_unicode_codec(raw) or "").upper()
    return WriteRefused(f"{name} is {codec + ' text, which dreamdb reads but does not change' if codec else 'not UTF-8 text'};"
                        " it was not changed.",
                        hint=f"Convert it to UTF-8 (iconv -f {codec or '<its encoding>'} -t UTF-8 FILE > FILE.new && mv"
                             " FILE.new FILE), then retry; or edit it by hand.")


def _text_list(name: str, value) -> list[str]:
    """``value`` (one string, an iterable of strings, or ``None`` for none) as a list of strings, read once.

    Raises:
        UsageError: ``value`` is neither, or an item is not a string (nothing is written; QA round 68 H2:
            ``references=None`` raised a bare TypeError).
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (bytes, bytearray, dict)):
        items = None
    else:
        try:
            items = list(value)
        except TypeError:
            items = None
    if items is None or not all(isinstance(v, str) for v in items):
        raise UsageError(f"{name} must be a string or a list of strings, got {value!r}; nothing was changed.")
    return items


def _flag(name: str, value, *, optional: bool = False) -> None:
    """Raise UsageError unless ``value`` is a bool (or ``None`` when ``optional``): from Python, ``"no"``
    is a true value, and writing ``breaking: true`` or pinning for it would be a silent mistake."""
    if value is None and optional:
        return
    if not isinstance(value, bool):
        raise UsageError(f"{name} must be True or False, got {value!r}; nothing was changed.")


def _clock(now) -> datetime:
    """The write's clock: ``now`` as a datetime (an ISO-8601 string is parsed; a naive value is kept naive and
    read as UTC, as a recall's ``now`` is), the current local time (aware) for ``None``.

    Raises:
        UsageError: ``now`` is neither a datetime nor an ISO-8601 string.
    """
    if now is None:
        try:
            return datetime.now().astimezone()
        except (ValueError, OverflowError):  # a local offset of 24 h or more (TZ=UTC+24, which POSIX allows): UTC
            return datetime.now(timezone.utc)
    if isinstance(now, datetime):
        return now
    if isinstance(now, date):
        return datetime(now.year, now.month, now.day)
    if isinstance(now, str):
        from dreamdb.timeparse import parse_instant

        try:
            return parse_instant(now)
        except ValueError:
            pass
    raise UsageError(f"now must be a datetime or an ISO-8601 string, got {now!r}; nothing was changed.",
                     hint="Example: now='2026-08-18T09:30:00+02:00'")
