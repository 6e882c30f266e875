"""Renderers for the CLI: JSON, plain (tab-separated) and human-readable text.

No click here: functions return strings, the CLI prints them.
"""

from __future__ import annotations

import functools
import json
import re


# ---------------------------------------------------------------- terminal safety

BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
"""The bidirectional embedding/override/isolate marks (U+202A–U+202E, U+2066–U+2069, a regex class's ranges), which
can make text display in another order than it reads ("Trojan Source", CVE-2021-42574)."""

C1_CONTROLS = "\x7f-\x9f"
"""DEL and the C1 controls U+0080–U+009F (a regex class's range): U+009B is CSI and U+009D OSC, which xterm and VTE
terminals obey as ESC [ and ESC ] (clear the screen, set the window title)."""

_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f{C1_CONTROLS}{BIDI_CONTROLS}]")
"""C0 controls except tab and newline, DEL, the C1 controls U+0080–U+009F, and the bidirectional marks of
:data:`BIDI_CONTROLS`."""


FLAG_TAG_SEQUENCE = ("\U0001f3f4\U000e0067\U000e0062"  # 🏴 and the tags g b, then e n g | s c t | w l s, CANCEL TAG
                     "(?:\U000e0065\U000e006e\U000e0067|\U000e0073\U000e0063\U000e0074|\U000e0077\U000e006c\U000e0073)"
                     "\U000e007f")
"""The emoji tag sequences that are text (a regex): the flags of England, Scotland and Wales (U+1F3F4, the tag
characters of ``gbeng``, ``gbsct`` or ``gbwls``, CANCEL TAG), the only ones Unicode recommends for display (RGI,
UTS #51). The grammar's general form (U+1F3F4, any tags U+E0020–U+E007E, CANCEL TAG) is not allowed: it would pass
🏴 followed by "IGNORE ALL PREVIOUS INSTRUCTIONS" in tags, a hidden message behind one visible flag (QA round 54)."""

SMUGGLING_CHARS = ("\U000e0000-\U000e007f\ufff9-\ufffb\u2061-\u2065\ufdd0-\ufdef\ufffe\uffff"
                   "\u206a-\u206f\ufeff\U0001d173-\U0001d17a\U00013430-\U0001343f"
                   "\U0001bca0-\U0001bca3\ufff0-\ufff8\U000e0080-\U000e00ff\U000e01f0-\U000e0fff"
                   + "".join(chr(plane + 0xFFFE) + chr(plane + 0xFFFF) for plane in range(0x10000, 0x110000, 0x10000)))
"""Invisible characters that can carry a hidden message (a regex class's ranges): the Unicode tag characters
U+E0000–U+E007F, which mirror ASCII and are read by language models while no terminal or editor shows them
("ASCII smuggling" of instructions into an agent's prompt), and the interlinear annotation marks U+FFF9–U+FFFB,
whose annotated text a renderer may hide or show out of line (QA round 54); the invisible mathematical operators
U+2061–U+2064 (function application, invisible times, separator and plus: nothing outside MathML markup needs
them) and the noncharacters, which no text holds (QA round 55: U+FFFE and U+FFFF; QA round 56: the other 64,
U+FDD0–U+FDEF and the last two of every plane, U+1FFFE, U+1FFFF … U+10FFFF, which were taken); the deprecated
format characters U+206A–U+206F, U+FEFF inside text (a byte-order mark or the deprecated zero-width no-break space),
the musical formatting characters U+1D173–U+1D17A and the Egyptian hieroglyph format controls U+13430–U+1343F,
invisible outside the notation or markup that uses them (QA round 120-A F1); the shorthand format controls
U+1BCA0–U+1BCA3 and the default-ignorable code points Unicode has not assigned yet (U+2065, U+FFF0–U+FFF8,
U+E0080–U+E00FF, U+E01F0–U+E0FFF), which a renderer shows as nothing (QA round 121-A F4). With :data:`ZERO_WIDTH`,
:data:`VARIATION_SELECTORS` and :data:`BIDI_CONTROLS`, every Default_Ignorable_Code_Point of Unicode 15.1
(DerivedCoreProperties.txt) is covered (``tests/test_terminal_safety.py`` checks). Not here, as text needs them: the
zero-width joiner and non-joiner, the direction marks, the word joiner U+2060, private-use characters (the icons of
Nerd Fonts in a developer's note), the Hangul fillers of Korean text (a run of two of these is, see
:data:`ZERO_WIDTH`)."""

ZERO_WIDTH = ("\u200b\u200c\u200d\u2060\u180e\u034f\u00ad\u3164\u115f\u1160\uffa0\u200e\u200f\u061c\u180b\u180c\u180d\u180f"
              "\u17b4\u17b5")
"""The zero-width and invisible format characters that text needs one at a time (a regex class's characters): the
zero-width space, non-joiner and joiner (Thai word breaks, Persian's non-joiner, the joiner of an emoji sequence
👨‍👩‍👧), the word joiner, the Mongolian vowel separator, the combining grapheme joiner, the soft hyphen, the Hangul
fillers, the direction marks (LRM, RLM, the Arabic letter mark) and the Mongolian free variation selectors (QA round
120-A F1: a run of LRM and RLM spelled bits), the Khmer inherent vowels U+17B4, U+17B5 (QA round 121-A F4). Two or more in a row are not text (QA round 56): 200 U+200D between two letters were taken by ``remember``
and reached the prompt hook, and a run of two kinds (U+200B, U+200C) spells bits. One between visible characters
stays; a run of two or more is hidden as :data:`SMUGGLING_CHARS` are."""

VARIATION_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
"""The variation selectors VS1–VS16 and VS17–VS256 (a regex class's ranges). One after a character that Unicode
defines variation sequences for is text (:func:`takes_selector`): ❤️ is U+2764 U+FE0F (emoji presentation), 葛󠄀 is
U+845B U+E0100 (an ideographic variation sequence). Any other is not: 256 invisible selectors spell out any byte.
A run of them after an emoji hid a message of 39 bytes that ``remember`` took and the prompt hook passed on to the
agent (QA round 55), and so did one selector after each letter of a visible sentence (QA round 56: each was "the
first" after its character, which was all QA round 55 asked).

What is left, and not closed (QA round 56): CJK text can still carry a byte per ideograph, each followed by one
of the 240 ideographic variation selectors VS17–VS256 (or VS1–VS14), which :func:`takes_selector` allows after any
ideograph: the Ideographic Variation Database registers them per ideograph, and a table of its tens of thousands
of sequences is not worth the one channel it would close, where a message needs as many visible ideographs as it
has bytes. Less wide, and left as well: a symbol can carry VS15, VS16 or none (under two bits), a mathematical
symbol one of VS1–VS14."""

CJK_IDEOGRAPHS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"
"""The CJK ideographs (a regex class's ranges): the unified ideographs, extension A, the compatibility
ideographs and the supplementary planes 2 and 3, the bases of the ideographic variation sequences (VS17–VS256,
and VS1–VS3 of the compatibility ideographs' standardized variants)."""

_SELECTOR_SCRIPTS = ((0x1000, 0x109F), (0xA9E0, 0xA9FF), (0xAA60, 0xAA7F), (0xA840, 0xA87F), (0x10AC0, 0x10AFF),
                     (0x13000, 0x1343F))
"""The scripts whose letters have standardized variants with VS1–VS14 (StandardizedVariants.txt): Myanmar and its
extensions A and B, Phags-pa, Manichaean, Egyptian hieroglyphs."""

_EMOJI_SYMBOL_CATEGORIES = frozenset({"So", "Sm", "Sk", "Po", "Pd"})
"""The general categories of the characters emoji-variation-sequences.txt gives a text and an emoji form (U+FE0E,
U+FE0F): symbols (© ™ ❤ ⚠ 🏳 ↔), punctuation (‼ ⁉ 〽) and the wavy dash 〰."""


def takes_selector(base: str | None, selector: str) -> bool:
    """Whether ``selector`` (a variation selector) after ``base`` (a character; None or "" at the start of the text)
    makes a variation sequence that Unicode defines, approximated by blocks and general categories (QA round 56):

    - VS15, VS16 (U+FE0E, U+FE0F, text and emoji presentation; emoji-variation-sequences.txt): after a keycap's
      digit, ``#`` or ``*`` (1️⃣ is ``1`` U+FE0F U+20E3; a digit with U+FE0F is allowed without U+20E3 after it, as
      that is how a keycap starts), a non-ASCII symbol or punctuation mark (:data:`_EMOJI_SYMBOL_CATEGORIES`: ❤️,
      ⚠️, ©️, ™️, ‼️, 🏳️‍🌈), or U+2139 ℹ️ (a letter by category, an emoji base);
    - VS1–VS14 (U+FE00–U+FE0D; StandardizedVariants.txt): after ``0`` (U+0030 U+FE00, the short-diagonal zero), a
      non-ASCII mathematical or other symbol (≩︀ is U+2269 U+FE00), a CJK ideograph (:data:`CJK_IDEOGRAPHS`), or a
      letter of :data:`_SELECTOR_SCRIPTS`;
    - VS17–VS256 (U+E0100–U+E01EF; the Ideographic Variation Database): after a CJK ideograph only.

    After anything else (a Latin, Greek, Cyrillic or Arabic letter, a space, another selector, an invisible
    character) a selector is no text but a hidden byte: QA round 56 found a sentence with one selector after each of
    its letters (``D`` U+E0139 ``e`` U+E0137 …), 30 bytes ``remember`` took and the prompt hook printed."""
    # (imported here: the hook's log imports this module where Python's own modules may be unreadable, QA round 43)
    import unicodedata

    if not base or len(base) != 1 or len(selector) != 1:
        return False
    b, s = ord(base), ord(selector)
    cjk = 0x3400 <= b <= 0x4DBF or 0x4E00 <= b <= 0x9FFF or 0xF900 <= b <= 0xFAFF or 0x20000 <= b <= 0x3FFFF
    if 0xE0100 <= s <= 0xE01EF:
        return cjk
    if s in (0xFE0E, 0xFE0F):
        return base in "0123456789#*" or b == 0x2139 or (
            b >= 0x80 and unicodedata.category(base) in _EMOJI_SYMBOL_CATEGORIES)
    if 0xFE00 <= s <= 0xFE0D:
        return base == "0" or cjk or any(lo <= b <= hi for lo, hi in _SELECTOR_SCRIPTS) or (
            b >= 0x80 and unicodedata.category(base) in ("Sm", "So"))
    return False


def _is_selector(c: str) -> bool:
    return "\ufe00" <= c <= "\ufe0f" or "\U000e0100" <= c <= "\U000e01ef"


_EMOJI_BASES = ("#*0-9\u00a9\u00ae\u203c\u2049\u2122\u2139\u2190-\u21ff\u2200-\u22ff\u231a\u231b\u2328\u23cf-\u23fa"
                "\u24c2\u2500-\u2767\u2794-\u27bf\u2934\u2935\u2b00-\u2b73\u3030\u303d\u3297\u3299"
                "\U0001f000-\U0001f02b\U0001f10d-\U0001f1ad\U0001f1e6-\U0001f202\U0001f210-\U0001f23b"
                "\U0001f300-\U0001f6d7\U0001f900-\U0001fa53")
"""Characters that take VS15 and VS16 (a regex class's ranges), the emoji that are met in text: a subset of what
:func:`takes_selector` allows, for the quick look of :func:`_patterns` (QA round 56: a look-up of each
selector's base in Python, :func:`takes_selector`, took 1.04 s on 14.6 MB of JSON with 195,000 ⚠️ ✔️ ❤️, the quick
look 0.15 s; the test suite checks that each is one :func:`takes_selector` allows)."""

_SYMBOL_BASES = f"0\u2200-\u22ff\u2a00-\u2aff{CJK_IDEOGRAPHS}"
"""Characters that take VS1–VS14, for the quick look: ``0``, the mathematical operators (all Sm, as ≩︀), the CJK
ideographs (a subset of what :func:`takes_selector` allows)."""

_SCAN = ("\ufe00-\ufe0f" + ZERO_WIDTH + "\ufff0-\ufffb\u2061-\u2065\ufdd0-\ufdef\ufffe\uffff\u206a-\u206f\ufeff"
         "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U0001fffe-\U0010ffff")
"""A regex class's ranges that hold every character of :data:`SMUGGLING_CHARS`, :data:`VARIATION_SELECTORS` and
:data:`ZERO_WIDTH`, and more (the ideographs of planes 2 and 3, the private use of planes 15 and 16): the first
look for them, which a lookbehind then narrows. A class of :data:`SMUGGLING_CHARS` itself, with its 32
noncharacters above U+FFFF one by one, made Python's regex engine scan text 5× slower (1.2–1.5 s instead of
0.2–0.4 s for 14.6 MB of JSON, QA round 56); two ranges above U+FFFF cost nothing."""


def _patterns(extra: str = ""):
    """The quick look and the run pattern of :func:`_hidden_spans`, ``extra`` (a regex class's ranges: the
    bidirectional marks, for :func:`escape_smuggling`) taken as hidden characters too.

    The quick look finds a character of :data:`SMUGGLING_CHARS`, two of :data:`ZERO_WIDTH` in a row, or a variation
    selector whose base is not one of the common ones (:data:`_EMOJI_BASES`, :data:`_SYMBOL_BASES`,
    :data:`CJK_IDEOGRAPHS`); when it finds nothing, nothing is hidden, and text with emoji (⚠️, ✔️, each with one
    U+FE0F), Persian's non-joiners or ZWJ sequences is not looked at again in Python. One class searched, and a
    lookbehind at what it finds: a search for one class is 4× faster than an alternation, which added 0.4 s to
    10 MB of ``sql --json`` output that held none (QA round 55); the emoji's selector is tried first, as the
    commonest. The run pattern matches a flag (kept), or a run of the characters that may be hidden: a run is taken
    whole, as were the tag characters of ``VS tag VS tag VS`` or ``ZWSP tag ZWNJ tag ZWSP`` left out alone, the
    characters they kept apart would make a run in the output. A run does not start at the selector of a common
    base (the quick look's): it is text, and each run costs a step in Python (text with one tag character and
    195,000 ⚠️ took 1.1–1.3 s instead of 0.5–0.7 s, QA round 56)."""
    quick = re.compile(
        f"[{_SCAN}{extra}]"
        f"(?:(?<=[\ufe0e\ufe0f])(?<![{_EMOJI_BASES}][\ufe0e\ufe0f])"
        f"|(?<=[{ZERO_WIDTH}])(?=[{ZERO_WIDTH}])"
        f"|(?<=[\ufe00-\ufe0d])(?<![{_SYMBOL_BASES}][\ufe00-\ufe0d])"
        f"|(?<=[\U000e0100-\U000e01ef])(?<![{CJK_IDEOGRAPHS}][\U000e0100-\U000e01ef])"
        f"|(?<=[{SMUGGLING_CHARS}{extra}]))")
    char = f"[{_SCAN}{extra}](?<=[{SMUGGLING_CHARS}{VARIATION_SELECTORS}{ZERO_WIDTH}{extra}])"
    run = re.compile(f"{FLAG_TAG_SEQUENCE}|{char}(?<![{_EMOJI_BASES}][\\ufe0e\\ufe0f])"
                     f"(?<![{_SYMBOL_BASES}][\\ufe00-\\ufe0d])"
                     f"(?<![{CJK_IDEOGRAPHS}][\\U000e0100-\\U000e01ef])(?:{char})*")
    return quick, run


LONE_SURROGATES = "\ud800-\udfff"
"""The UTF-16 surrogates U+D800–U+DFFF (a regex class's range), which no UTF-8 text holds: in a Python string, a
path given on the command line or in the environment whose bytes are not UTF-8 (``surrogateescape`` reads the byte
0xFF as U+DCFF, which ``os.fsencode`` turns back into it). :func:`to_json` writes them as JSON's ``\\udcff``
escapes (QA round 146-H F1: a strict UTF-8 stdout raised on them, exit 1 or 70 after a saved change, and a C.UTF-8
one wrote the raw byte, no UTF-8 and no JSON)."""

_FIRST_LOOK = re.compile(f"[{_SCAN}{BIDI_CONTROLS}{C1_CONTROLS}{LONE_SURROGATES}]")
"""The first class of the quick looks (:func:`_patterns`, with and without the bidirectional marks, the C1
controls and the lone surrogates): text with none of its characters hides nothing, and the quick looks, whose
classes of ideographs and emoji take 11 ms to compile, are then never compiled (most text: Turkish letters, dashes
and accents are not in it)."""


@functools.cache
def _smuggling_patterns():
    """The quick look and the run pattern of :func:`_hidden_spans` (:func:`_patterns`), compiled at first use. Measured
    on 14.6 MB of JSON with 195,000 ⚠️ ✔️ ❤️ (CPU time, best of 15, a loaded 2-core machine; ``json.dumps`` alone
    0.24–0.26 s), the escape pass of :func:`to_json` before QA round 56 → after: 0.14–0.15 s → 0.15–0.17 s; without
    the emoji 0.13–0.14 s → 0.11–0.12 s; with one tag character (every run looked at in Python) 0.65–0.68 s →
    0.39–0.42 s; ``to_json`` as a whole 0.36–0.41 s both."""
    return _patterns()


@functools.cache
def _escaped_patterns():
    """The same, the bidirectional marks taken too: what :func:`escape_smuggling` writes as ``\\u`` escapes (QA round
    56: ``--json`` wrote U+202E raw in a ``doc_id`` while it escaped the tag characters beside it). One pass: a second
    search for the marks alone added 0.1–0.16 s to 14.6 MB of JSON."""
    return _patterns(BIDI_CONTROLS)


@functools.cache
def _json_patterns():
    """The same, DEL and the C1 controls (:data:`C1_CONTROLS`) taken too: what :func:`to_json` writes as ``\\u``
    escapes (QA round 135-B F2: ``json.dumps`` escapes the C0 controls, ESC as ``\\u001b``, but wrote U+009B raw,
    which a terminal showing the JSON obeys as CSI). In the one pass :func:`escape_smuggling` makes; not in CSV,
    which keeps a control character the query returned as it is (:func:`dreamdb.sqlquery.csv_text`). And the lone
    surrogates (:data:`LONE_SURROGATES`, QA round 146-H F1), which UTF-8 cannot write."""
    return _patterns(BIDI_CONTROLS + C1_CONTROLS + LONE_SURROGATES)


def _hidden_spans(text: str, patterns=_smuggling_patterns):
    """The ``(start, end)`` of each run of hidden characters in ``text``, in order (QA rounds 54–56): in a run of
    the run pattern (:func:`_smuggling_patterns`, outside a flag), all but a first variation selector that its base takes
    (:func:`takes_selector`) and then one character of :data:`ZERO_WIDTH` that no other follows (🏳️‍🌈 is U+1F3F3
    U+FE0F U+200D U+1F308). ``patterns``: a function returning the quick look and the run pattern (:func:`_patterns`),
    called only for text :data:`_FIRST_LOOK` finds something in. ASCII text hides nothing, but holds DEL, which
    :func:`_json_patterns` takes (QA round 152-F F1: ``--json`` wrote DEL raw when the whole output was ASCII, and
    as ``\\u007f`` beside an ``é``)."""
    if text.isascii():
        if patterns is not _json_patterns or "\x7f" not in text:
            return
    elif _FIRST_LOOK.search(text) is None:
        return
    quick, runs = patterns()
    if quick.search(text) is None:
        return
    for m in runs.finditer(text):
        run, start = m.group(), m.start()
        if run[0] == "\U0001f3f4":
            continue  # a flag
        kept = 1 if _is_selector(run[0]) and start and takes_selector(text[start - 1], run[0]) else 0
        if kept < len(run) and run[kept] in ZERO_WIDTH and (kept + 1 == len(run) or run[kept + 1] not in ZERO_WIDTH):
            kept += 1
        if kept < len(run):
            yield start + kept, m.end()


def first_hidden(text: str) -> int | None:
    """The index of the first character of ``text`` that :func:`safe_text` leaves out as hidden (a tag character
    outside a flag, another of :data:`SMUGGLING_CHARS`, a variation selector after a character that takes none, a
    run of :data:`ZERO_WIDTH`), or None: what a write refuses (:mod:`dreamdb.writes.checks`, QA round 56)."""
    return next((start for start, _ in _hidden_spans(text)), None)


def _json_escaped(hidden: str) -> str:
    return json.dumps(hidden)[1:-1]


MAX_NAMED_HIDDEN = 2
"""Longest run of hidden characters :func:`visible_id` names one by one (``<U+200B>``); a longer one is counted
(``<6 hidden characters from U+E0048>``): named one by one, tag characters would spell their message out again, in
code points an agent reading the output can decode."""


def _named(hidden: str) -> str:
    if len(hidden) <= MAX_NAMED_HIDDEN:
        return "".join(f"<U+{ord(c):04X}>" for c in hidden)
    return f"<{len(hidden)} hidden characters from U+{ord(hidden[0]):04X}>"


def _unsmuggled(text: str, repl, patterns=_smuggling_patterns) -> str:
    """``text`` with each run of hidden characters (:func:`_hidden_spans`) replaced by ``repl`` (of the run)."""
    out, pos = [], 0
    for start, end in _hidden_spans(text, patterns):
        out += (text[pos:start], repl(text[start:end]))
        pos = end
    return "".join(out) + text[pos:] if out else text


def escape_smuggling(text: str) -> str:
    """``text`` with the characters that can carry a hidden message (those :func:`_hidden_spans` finds) and the
    bidirectional marks (:data:`BIDI_CONTROLS`, QA round 56) written as JSON's ``\\u`` escapes: what :func:`to_json`
    does to its output, and ``sql --format csv`` to its text (QA round 55)."""
    return _unsmuggled(text, _json_escaped, _escaped_patterns)


def escape_for_json(text: str) -> str:
    """:func:`escape_smuggling`, and DEL and the C1 controls U+0080–U+009F written as ``\\u`` escapes too
    (``\\u009b``): what :func:`to_json` does to the JSON ``json.dumps`` writes, which escapes the C0 controls itself
    (QA round 135-B F2); and the lone surrogates of a path that is not UTF-8 (:data:`LONE_SURROGATES`: ``\\udcff``
    for the byte 0xFF, QA round 146-H F1), so that the document is UTF-8 whatever stdout's error handler. The escapes
    decode to the same string."""
    return _unsmuggled(text, _json_escaped, _json_patterns)


def show_controls(text: str) -> str:
    """``text`` with its control characters and bidirectional marks shown as :func:`safe_text` shows them (ESC as
    ``␛``), newline and tab kept; nothing else changed (``sql --format csv`` on a terminal, QA round 55)."""
    return _CONTROL.sub(_picture, text)


_REGIONAL_INDICATORS = "".join(map(chr, range(0x1F1E6, 0x1F200)))
"""The regional indicator letters U+1F1E6–U+1F1FF, two of which make a flag (🇹🇷 is T R)."""

MAX_CLUSTER_CHARS = 64
"""How far (characters) :func:`cluster_boundary` looks for the end of a grapheme cluster: a longer one (a letter
under a hundred stacked marks) is cut where it was asked to be."""


def _joined(text: str, i: int, flags: bool = True) -> bool:
    """Whether ``text[i - 1]`` and ``text[i]`` are in one grapheme cluster, approximating the extended grapheme
    clusters of Unicode Standard Annex #29: a combining mark (Mn, Mc, Me), a zero-width (non-)joiner, a variation
    selector, an emoji skin-tone modifier, a tag character or a Hangul medial vowel or final consonant joins the
    character before it (GB9, GB9a); a character after a zero-width joiner joins it (👨‍👩‍👧, GB11); a letter after a
    virama joins it (the conjunct क्ष, GB9c); a regional indicator joins the one before it when that one is the
    first of a pair (🇹🇷, GB12, GB13; not with ``flags`` false: finding which one is costs a look at the whole run of
    indicators before ``i``)."""
    import unicodedata  # (imported here, as in takes_selector)

    a, b = text[i - 1], text[i]
    ob = ord(b)
    if ob < 0x300:
        return False
    if (b in "\u200c\u200d" or 0xFE00 <= ob <= 0xFE0F or 0x1F3FB <= ob <= 0x1F3FF or 0xE0020 <= ob <= 0xE007F
            or 0xE0100 <= ob <= 0xE01EF or 0x1160 <= ob <= 0x11FF or 0xD7B0 <= ob <= 0xD7FF
            or unicodedata.category(b)[0] == "M"):
        return True
    if a == "\u200d" or (unicodedata.combining(a) == 9 and unicodedata.category(b) == "Lo"):
        return True
    if flags and b in _REGIONAL_INDICATORS and a in _REGIONAL_INDICATORS:
        head = text[:i]
        return (len(head) - len(head.rstrip(_REGIONAL_INDICATORS))) % 2 == 1
    return False


def cluster_boundary(text: str, i: int, *, forward: bool = False, flags: bool = True) -> int:
    """The nearest place to cut ``text`` at or before index ``i`` (at or after it with ``forward``) that splits no
    grapheme cluster (:func:`_joined`): a cut of a long line keeps a flag 🇹🇷, a family 👨‍👩‍👧‍👦, 👍🏽, a
    conjunct क्ष or a letter and its accents whole or leaves them out (QA round 143-I F2: half a flag showed as
    a stray letter, the tail of a family as a lone 👦). ``i`` is clamped to ``[0, len(text)]``; a cluster longer
    than :data:`MAX_CLUSTER_CHARS` is cut at ``i``. With ``flags`` false a flag's two regional indicators may be
    parted (what Unicode normalisation never joins; a cut then costs no look at a run of flags before it)."""
    i = max(0, min(i, len(text)))
    step = 1 if forward else -1
    j = i
    for _ in range(MAX_CLUSTER_CHARS):
        if j <= 0 or j >= len(text) or not _joined(text, j, flags):
            return j
        j += step
    return i


def clip(text: str, limit: int, *, cut: int | None = None) -> str:
    """``text`` when it has no more than ``limit`` characters, else its first ``cut`` (default ``limit - 1``) and
    ``…``, cut where no grapheme cluster is split (:func:`cluster_boundary`: a flag 🇹🇷 or a family 👨‍👩‍👧 is kept
    whole or left out). A table's long cell: ``list``'s titles, ``sql``'s text (QA round 144-D F2: ``list`` cut a
    title at 70 characters without ``…``, a flag to one lone regional indicator)."""
    if len(text) <= limit:
        return text
    return text[:cluster_boundary(text, limit - 1 if cut is None else cut)] + "…"


def display_width(text: str) -> int:
    """How many terminal cells ``text`` takes: a wide or fullwidth East Asian character (東, ｶ is narrow) and an
    emoji two, a combining mark or a zero-width character none, a ZWJ sequence or a flag as one emoji (``wcwidth``,
    which ``tabulate`` pads :func:`table`'s cells with; imported only for text past ASCII: it takes ≈ 0.1 s). Text
    holding a control character (shown as a picture, :func:`safe_text`) counts its characters."""
    if text.isascii():
        return len(text)
    from wcwidth import wcswidth

    width = wcswidth(text)
    return width if width >= 0 else len(text)


def pad(text: str, width: int) -> str:
    """``text`` and the spaces that make it ``width`` terminal cells wide (:func:`display_width`; a column of a
    hand-made table stays in line after a CJK word, which ``f"{text:<{width}}"`` pads by characters, QA round
    143-I F4); longer text is returned as it is."""
    return text + " " * max(0, width - display_width(text))


def count_noun(n: int, one: str, many: str | None = None) -> str:
    """``"1 chunk text"``, ``"3 chunk texts"``, ``"0 chunk texts"`` (``many``: an irregular plural)."""
    return f"{n} {one}" if n == 1 else f"{n} {many or one + 's'}"


def some_of(items, shown: int = 5, sep: str = ", ") -> str:
    """The first ``shown`` of ``items`` (strings) joined with ``sep``, then how many more there are:
    ``"a, b, c and 1,997 more"``; all of them when that is no more than ``shown`` + 1 (``"… and 1 more"`` says no less than the item). A
    message names a few of a list that may be long (QA round 143-B F4: 2,000 same-named notes made a 92 KB error)."""
    items = list(items)
    if len(items) <= shown + 1:
        return sep.join(items)
    return sep.join(items[:shown]) + f" and {len(items) - shown:,} more"


def _picture(m: re.Match) -> str:
    c = ord(m.group())
    if c >= 0x2000:
        return f"<U+{c:04X}>"  # a bidirectional mark, named instead of obeyed
    if c < 0x20:
        return chr(0x2400 + c)  # Control Pictures: ESC → ␛, BEL → ␇, CR → ␍ …
    if c == 0x7F:
        return "\u2421"  # ␡
    return "\u241b" + chr(c - 0x40)  # a C1 control as ␛ + its 7-bit form: CSI U+009B → ␛[, OSC U+009D → ␛]


def safe_text(text) -> str:
    """``text`` made safe to print on a terminal or into an agent's prompt.

    Every control character but newline and tab is replaced by a visible stand-in,
    so an escape sequence shows up as text instead of acting: ESC → ``␛`` (so
    ``ESC[31m`` prints as ``␛[31m``), BEL → ``␇``, CR → ``␍``, DEL → ``␡``, any other
    C0 control → its Control Pictures symbol (U+2400 + code), and a C1 control
    (U+0080–U+009F) → ``␛`` followed by its 7-bit equivalent (CSI U+009B → ``␛[``), and a
    bidirectional override or isolate mark → ``<U+202E>`` and the like.
    The invisible characters that can smuggle a message (:data:`SMUGGLING_CHARS`: Unicode tag
    characters outside a flag's :data:`FLAG_TAG_SEQUENCE`, interlinear annotation marks, invisible operators,
    noncharacters) are left out (QA round 54), and so is a run of :data:`VARIATION_SELECTORS` after its first
    selector (QA round 55: a message hidden after an emoji reached the agent), a selector after a character that
    takes none (:func:`takes_selector`) and a run of two or more :data:`ZERO_WIDTH` characters (QA round 56: a
    selector after each letter of a sentence, 200 zero-width joiners between two letters): a hand-written note can
    carry them (``remember`` and ``update`` refuse them), and the prompt hook's block must not pass hidden
    instructions to the agent; named one by one, as the bidirectional marks are, a 40-character message would fill
    the line with ``<U+E0049>`` (an id or a path is named so, see :func:`visible_id`).
    Everything else, newline and tab included, is kept.

    For human-readable output only, applied when printing (the vault and the index
    keep the text as it is; ``--json`` output encodes it faithfully, see :func:`to_json`).
    ``None`` gives ``""``; other non-strings are converted with ``str``.
    """
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    return _unsmuggled(_CONTROL.sub(_picture, text), lambda hidden: "")


def _safe_cell(v):
    """A table cell on one line: control characters shown (:func:`safe_text`), a tab as ``␉``, a newline as ``␊``
    and U+2028, U+2029 as ``<U+2028>``, ``<U+2029>`` (:func:`visible_field`, as :func:`hits_plain` shows them; a raw
    tab broke the columns)."""
    return visible_field(v) if isinstance(v, str) else v


ASCII_JSON = False
"""Whether :func:`to_json` escapes every character past ASCII (``\u2014``): set by the CLI when its standard output
cannot encode all of Unicode (a Latin-1 or ASCII locale), where raw UTF-8 text could not be written at all (QA round
93-A F3: every ``--json`` command exited 70). The escapes decode to the same strings."""


def to_json(obj) -> str:
    """Pretty JSON (UTF-8 kept, keys in insertion order).

    JSON is data, so the text stays exact; but the invisible characters of :data:`SMUGGLING_CHARS` (outside a
    flag's tag sequence) are written as ``\\u`` escapes (``\\udb40\\udc49`` for U+E0049), which decode to
    the same string: an agent reading ``recall --json`` sees that they are there instead of reading a hidden
    message (QA round 54). So are the variation selectors of a run after its first (QA round 55, see
    :data:`VARIATION_SELECTORS`), a selector after a character that takes none, a run of :data:`ZERO_WIDTH`, and
    the bidirectional marks (QA round 56: U+202E was written raw in a ``doc_id`` beside escaped tag characters;
    see :func:`escape_smuggling`), and DEL and the C1 controls (QA round 135-B F2: U+009B, CSI, was written raw, and
    xterm obeyed it; ESC was ``\\u001b`` already), see :func:`escape_for_json`."""
    if ASCII_JSON:
        return json.dumps(obj, ensure_ascii=True, indent=2, default=str)
    return escape_for_json(json.dumps(obj, ensure_ascii=False, indent=2, default=str))


def table(rows: list[dict] | list[list], headers: list[str] | None = None) -> str:
    """A plain-text table (``tabulate``'s ``simple`` format), control characters in cells and headers made visible (:func:`safe_text`)."""
    from tabulate import tabulate

    if rows and isinstance(rows[0], dict):
        headers = headers or list(rows[0].keys())
        rows = [[r.get(h) for h in headers] for r in rows]
    rows = [[_safe_cell(v) for v in r] for r in rows]
    headers = [visible_field(h) if isinstance(h, str) else h for h in headers or []]  # (one line: QA round 115-C F5)
    return tabulate(rows, headers=headers or [], tablefmt="simple", disable_numparse=True, missingval="")


def _fmt(x: float) -> str:
    """A score with 4 significant digits: BM25 (12.35) and fused scores (0.01639, where 3 decimals
    would print three different hits as 0.016) both stay distinguishable."""
    return f"{x:.4g}"


def _fused_from_text(terms: dict | None) -> str:
    """``: 0.6/(60+1) + 0.4/(60+3)`` (RRF) or ``: 0.9×1.0000 + 0.1×0.8731`` (relative fusion): what a hybrid
    hit's fused rankScore adds up from (:func:`dreamdb.hybrid.fusion_terms`); ``""`` for none."""
    if not terms:
        return ""
    if "lambda" in terms:
        lam = terms["lambda"]
        return f": {1 - lam:.3g}×{terms['bm25_normalised']:.4f} + {lam:.3g}×{terms['dense_normalised']:.4f}"
    parts = []
    for channel in ("bm25", "dense"):
        rank = terms.get(f"{channel}_rank")
        if rank is not None:
            imputed = " (BM25 rank imputed from dense)" if channel == "bm25" and terms.get("bm25_rank_imputed") else ""
            parts.append(f"{terms[f'{channel}_weight']:.3g}/({terms['k']}+{rank}){imputed}")
        else:
            parts.append(f"{channel} unranked")
    return ": " + " + ".join(parts)


def hits_text(hits, *, explain: bool = False) -> str:
    """Human-readable recall results: rank, scores, id, title, path, snippet (and signals with ``explain``).

    Text from the vault is passed through :func:`safe_text` (escape sequences shown, never acted on); the id, the
    path and the superseding id through :func:`visible_id` (hidden characters named, QA round 56).
    """
    lines: list[str] = []
    for i, h in enumerate(hits, 1):
        meta = [f"rank {_fmt(h.rank_score)}", f"bm25 {_fmt(h.score)}"]
        # BM25's clear first, which hybrid's pin guard keeps first with its fused score, said where a hit below
        # it ranks higher (QA round 157-I F4: a lower rank above a higher one, no sign why; --json has
        # signals.fusion's +pin with --explain); the list's first only: several vaults' lists merge by rank, and
        # another vault's pinned first below it was said to be "BM25's clear first" of the whole list (157-J F4)
        if i == 1 and getattr(h, "_pinned", False) and any(o.rank_score > h.rank_score for o in hits[i:]):
            meta.insert(1, "pinned: BM25's clear first")
        if h.date:
            meta.append(str(h.date)[:10])
        if h.status:  # (the note's own text, as its title: QA round 137 F6, a raw U+2028 split the line)
            meta.append(_safe_cell(h.status))
        lines.append(f"{i}. {typable_id(h.doc_id)}  ({' · '.join(meta)})")
        lines.append(f"   {_safe_cell(h.title)}")  # one line each: a newline in a title or file name is shown as ␊
        if h.superseded_by:
            lines.append(f"   ⚠ superseded by {visible_id(h.superseded_by)}")
        lines.append(f"   {visible_id(h.path)}")
        for sl in safe_text(h.snippet).splitlines():  # after safe_text: a CR is shown as ␍, not taken as a line break
            lines.append(f"   │ {sl}")
        if explain and h.signals:
            s = h.signals
            lines.append(
                "   signals: "
                f"bm25 {s['bm25']:.4f}"
                + (f" · with classes {s['bm25_structured']:.4f}"
                   if s.get("bm25_structured") is not None and s["bm25_structured"] != s["bm25"] else "")
                + f" · bm25f {s['bm25f']:.4f} · base {s['base']:.4f} · title coverage {s['coverage']:.2f}"
                f" · identity +{s['identity_boost']:.4f} · recency ×{s['recency']:.4f}"
                # (named where a window set the recency: a phrase naming no period, "latest", leaves the plain one)
                + (f" (time intent {s['time_intent']['phrase']!r})"
                   if s.get("time_intent") and s["time_intent"].get("from") is not None else "")
                + f" · status ×{s['status_factor']}"
                f" · type ×{s['type_factor']} · confidence ×{s['confidence_factor']:.3f}"
                + (f" · dense {s['dense']:.4f}" if s.get("dense") is not None else "")
                + (f" ({s['dense_centred']}-centred)" if s.get("dense_centred") else "")
                + (f" · fusion {s['fusion']}" if s.get("fusion") else "")
                + (f" (BM25 term coverage {s['bm25_coverage']:.2f})" if s.get("bm25_coverage") is not None else "")
                + _fused_from_text(s.get("fused_from"))
                + f" → rankScore {s['rank_score']:.4f}"
            )
            for t in h.terms or []:
                tf = t["tf"]
                # a query term counted in a class row has its bm25f there, not 0 (QA round 41); the flag --json
                # shows too (QA round 65 L7)
                bm25f = "in class" if t.get("in_class") else f"{t['bm25f']:.4f}"
                lines.append(
                    f"     {pad(t['term'], 18)} {t['kind']:<7} df {t['df']:<5} idf {t['idf']:.3f}  tf title {tf['title']} desc {tf['description']}"
                    f" tags {tf['tags']} body {tf['body']} slug {tf['slug']}  bm25 {t['bm25']:.4f} bm25f {bm25f}"
                )
        lines.append("")
    return safe_text("\n".join(lines).rstrip()) + ("\n" if lines else "")


def has_visible(text: str) -> bool:
    """True when ``text`` holds a character that shows: not whitespace, not a control, not a format character
    (Unicode category Cf: the zero-width space, joiners, direction marks, tags) and not one of :data:`ZERO_WIDTH`
    (the Hangul fillers are letters that do not show). ``"\u200b"`` alone is as blank as ``" "`` (QA rounds 60, 64:
    a note or a query of one zero-width space passed the check for empty text)."""
    import unicodedata

    return any(not c.isspace() and c not in ZERO_WIDTH and unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp")
               for c in text)


def _on_one_line(text: str) -> str:
    """``text`` with what would split its line shown: a tab as ``␉``, a newline as ``␊`` (Control Pictures, as
    :func:`safe_text` shows the other C0 controls), the line and paragraph separators U+2028, U+2029 as ``<U+2028>``,
    ``<U+2029>`` (named, as :func:`safe_text` names the bidirectional marks, and as an id is typed back: QA round
    135-B F3, Python's ``str.splitlines`` and other Unicode-aware readers split a ``--plain`` line at them, and they
    broke a table's rows). NEL (U+0085) is a C1 control, ``␛E`` already."""
    text = text.replace("\t", "\u2409").replace("\n", "\u240a")
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "<U+2028>").replace("\u2029", "<U+2029>")
    return text


def visible_field(text) -> str:
    """One tab-separated field or table cell: :func:`safe_text`, with a tab, a newline or a line or paragraph
    separator (which would split the line) shown (:func:`_on_one_line`: ``␉``, ``␊``, ``<U+2028>``, ``<U+2029>``):
    visibly not the character, never passed off as a space in a path that would not exist."""
    return _on_one_line(safe_text(text))


def visible_id(text) -> str:
    """An id or a path for human-readable output: :func:`visible_field`, but the hidden characters that
    :func:`safe_text` leaves out (tag characters outside a flag, a selector after a character that takes none, a
    run of zero-width characters …) are named, ``<U+E0048>``, as the bidirectional marks are (a run of more than
    :data:`MAX_NAMED_HIDDEN` is counted instead) (QA round 56: recall
    showed the file ``knowledge/k1`` + tags ``HIDDEN`` + ``.md`` as ``knowledge/k1``, for which ``dreamdb update
    knowledge/k1`` said "No document"). A title or a snippet is text to read, where they are left out; an id is a
    name to type back, where a character that does not show must be seen to be there. ``None`` gives ``""``."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    return _on_one_line(_unsmuggled(_CONTROL.sub(_picture, text), _named))


def stderr_line(text, one_line: bool = False) -> str:
    """A message for standard error (a ``warning:``, ``note:`` or ``Error:`` line) made safe to show, as stdout's
    text is: control characters shown (ESC as ``␛``, a C1 control as ``␛`` and its 7-bit form; :func:`safe_text`),
    and the bidirectional marks and the hidden characters named (``<U+202E>``, ``<U+E0048>``; :func:`visible_id`),
    as the names of the vault's files and ids a message quotes must be seen whole to be found; newlines and tabs kept
    (a message may have lines of its own). Applied where a line is written (:func:`dreamdb.cli.options.say`,
    :func:`dreamdb.quickcli.print_error`), not where a warning is made: the ``--json`` forms keep the text exact
    (QA round 135-B F1, a file name's ESC ``[2J`` and OSC title reached the terminal through ``sync``'s warning of its
    frontmatter, and through ``recall``'s, ``list``'s, ``sql``'s and ``embed status``'s notes). ``one_line``: the
    message is one line (a ``warning:`` or ``note:``, :func:`dreamdb.cli.options.say`), whose newlines and tabs are
    the quoted names' own and are shown too (:func:`_on_one_line`; QA round 137 F3: a file named ``bad`` newline
    ``Error: fake.md`` printed a forged ``Error:`` line under its warning). ``None`` gives ``""``."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    shown = _unsmuggled(_CONTROL.sub(_picture, text), _named)
    return _on_one_line(shown) if one_line else shown


def typable_id(text) -> str:
    """:func:`visible_id`, quoted when its spaces would not survive being read off the screen and typed back: a space
    at either end, two in a row, or a character :func:`untypable` (a space other than U+0020, a zero-width space …,
    shown as ``\\u00a0``, ``\\u200b``): ``"knowledge/trail "``, ``"knowledge/data\\u200bbase"``. (QA round 86-A L1:
    the prompt hook showed ``knowledge/trail `` as ``knowledge/trail``, and "Did you mean: knowledge/trail" answered
    exactly what had been typed; QA round 130-C F4: so did a zero-width space, shown raw.) Any other id is returned as
    :func:`visible_id` gives it. In the quoted form a backslash is written ``\\u005c`` too, so the form is one id's
    alone: ``x\\u00a0`` + U+200B (a backslash typed) and U+00A0 + U+200B were both ``"x\\u00a0\\u200b"`` (QA round
    132-B F1; not ``\\\\``, which a shell's double quotes make one backslash)."""
    shown = visible_id(text)
    if shown == " ".join(shown.split()) and (shown.isascii() or not any(map(untypable, shown))):
        return shown
    return '"' + "".join(f"\\u{ord(c):04x}" if c == "\\" or untypable(c) else c for c in shown) + '"'


_UNTYPABLE_CATEGORIES = frozenset(("Cc", "Cf", "Zs", "Zl", "Zp"))


def untypable(c: str) -> bool:
    """Whether the character ``c`` (of the Basic Multilingual Plane) shows as nothing or as a plain space, so an id
    holding it cannot be read off the screen and typed back: a space other than U+0020 (Unicode category Zs: the
    no-break space), a line or paragraph separator (Zl, Zp), a control (Cc), a format character (Cf: the zero-width
    space, joiners, direction marks) or one of :data:`ZERO_WIDTH` (the Hangul fillers, the combining grapheme joiner).
    :func:`typable_id` writes these as ``\\uXXXX``, and a name typed back reads them so
    (:func:`dreamdb.writes.locate.find_document`). One beyond U+FFFF is not: :func:`visible_id` names those it hides."""
    import unicodedata

    return (c != " " and ord(c) <= 0xFFFF
            and (c in ZERO_WIDTH or c.isspace() or unicodedata.category(c) in _UNTYPABLE_CATEGORIES))


def hits_plain(hits) -> str:
    """One tab-separated line per hit: rankScore, score, doc_id, title, path (fields made safe with :func:`safe_text`;
    the id and the path with :func:`visible_id`, which names the hidden characters the title loses)."""
    return "".join(f"{h.rank_score:.4f}\t{h.score:.4f}\t{visible_id(h.doc_id)}\t{visible_field(h.title)}\t{visible_id(h.path)}\n" for h in hits)


class ProgressBar:
    """A click progress bar on stderr, drawn lazily: click is imported on the first update, so a
    command that never reports progress stays light. One bar per ``label``: an update with a new
    label ends the current bar and starts the next (one bar per file of a model download).

    Args:
        enabled: draw anything at all (callers pass ``not as_json`` and the like); also off when
            stderr is not a terminal, or one ``TERM=dumb`` says cannot take escape sequences (click's bar hides
            the cursor with one: QA round 114-B F11).
        min_total: draw no bar for a task of fewer steps than this.
        show_eta: show click's time estimate (only when a total is known).
    """

    def __init__(self, enabled: bool = True, *, min_total: int = 0, show_eta: bool = True) -> None:
        self.enabled = enabled and self.drawable()
        self.min_total = min_total
        self.show_eta = show_eta
        self.bar = None
        self.label = None
        self.done = 0

    @staticmethod
    def drawable() -> bool:
        """Whether standard error takes a bar: a terminal, and not one ``TERM=dumb`` says cannot take escape
        sequences."""
        import os
        import sys

        return sys.stderr.isatty() and os.environ.get("TERM", "").strip() != "dumb"

    def update(self, label: str, done: int, total: int | None) -> None:
        """Move the bar of ``label`` to ``done`` of ``total`` (``None``: unknown total)."""
        if not self.enabled or (total or 0) < self.min_total:
            return
        if label != self.label or self.bar is None:
            import sys

            import click

            self.close()
            self.label, self.done = label, 0
            self.bar = click.progressbar(length=total or 0, label=label, file=sys.stderr,
                                         show_eta=self.show_eta and bool(total))
            self.bar.__enter__()
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        """End the current bar's line (no-op when none was drawn)."""
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


class SyncProgress(ProgressBar):
    """The ``(done, total)`` callable a sync reports to (:func:`dreamdb.store.sync.sync`): a bar only
    when at least :data:`MIN_FILES` files are read (a no-change or small sync shows nothing)."""

    MIN_FILES = 50
    """Fewer files are read in well under a second: no bar."""

    def __init__(self, label: str = "Indexing", enabled: bool = True) -> None:
        super().__init__(enabled, min_total=self.MIN_FILES)
        self.sync_label = label

    def __call__(self, done: int, total: int) -> None:
        self.update(self.sync_label, done, total)
