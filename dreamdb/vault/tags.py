"""Tags: how a tag is read from frontmatter and how it is matched, one rule for the indexer and the filters.

Light (``unicodedata`` only): the query path imports it.
"""

from __future__ import annotations

import unicodedata


def clean_tag(text: str) -> str:
    """A tag as written (``"#topic:Recall "``) → the tag itself (``"Recall"``): stripped, a matched pair of quote
    marks around the whole tag (``“security”``, ``‘infra’``, ``«x»``, ``"x"``: :data:`_QUOTE_PAIRS`), a leading ``#``
    (Obsidian's inline form) and a facet prefix up to the last ``:`` removed (their fullwidth forms too); case kept.
    Quote marks inside a tag (``rock'n'roll``) or without their pair (``“x``) are kept, but not one the facet cut
    left alone at an end (``"x":"y"`` is the tag ``y``, not ``"y``: QA round 132-B F6); a pair is one only if no
    closing mark inside is followed by a space (``"a" "b"`` is kept as written, not read as ``a" "b``).

    Idempotent (each step is taken until none changes the tag: QA round 133 F2, ``lang:"#rust"`` gave ``#rust``, and
    ``rust`` from that), so a tag copied from dreamdb's output into ``--tags`` is read as the same tag.
    """
    tag = text
    while True:
        cleaned = _clean_once(tag)
        if cleaned == tag:
            return cleaned
        tag = cleaned  # (each step only takes characters off: it ends)


def _clean_once(text: str) -> str:
    """One step of :func:`clean_tag`: the quote pairs around ``text`` and a leading ``#`` taken off, then the facet
    prefix; a quote mark alone at the start of what follows the facet is taken off too when the prefix ends with one
    (``"x":"y"``, its pair taken off first: ``x":"y``), and one alone at its end when the prefix starts with one."""
    tag = _unquote(text).lstrip(_HASHES).strip()
    cut = max(map(tag.rfind, _COLONS))
    if cut < 0:
        return tag
    head, tail = tag[:cut].strip(), tag[cut + 1:].strip()
    if tail[:1] in _QUOTE_PAIRS and head[-1:] in _CLOSING and not (len(tail) >= 2 and tail[-1] in _QUOTE_PAIRS[tail[0]]):
        tail = tail[1:].strip()  # ("x":"y → "y: the facet cut took its pair; era:'90s keeps its mark)
    if tail[-1:] in _CLOSING and head[:1] in _QUOTE_PAIRS and not (len(tail) >= 2 and tail[-1] in _QUOTE_PAIRS.get(
            tail[0], "")):
        tail = tail[:-1].strip()
    return tail


def _unquote(text: str) -> str:
    """``text`` stripped, and without the matched quote pairs around it (``“‘x’”`` → ``x``); a pair whose opening mark
    a mark inside closes before a space (``"a" "b"``) is none."""
    tag = text.strip()
    while (len(tag) >= 2 and tag[-1] in _QUOTE_PAIRS.get(tag[0], "")
           and not any(c in _QUOTE_PAIRS[tag[0]] and after.isspace() for c, after in zip(tag[1:-2], tag[2:-1]))):
        tag = tag[1:-1].strip()
    return tag


def no_tag_reason(*texts: str) -> str:
    """Why the tags ``texts``, each :func:`clean_tag` to ``""``, name none, as a refusal or a warning says it: only
    quote marks (``“”``, ``#""``, ``topic:''``), else a ``#`` or a facet prefix alone (``#``, ``topic:``). (QA round
    132-B F6: ``“”`` was said to be a # and a facet prefix.)"""
    def quotes_only(text: str) -> bool:
        text = unicodedata.normalize("NFKC", text).strip().lstrip(_HASHES)
        return any(c in _QUOTE_PAIRS or c in _CLOSING for c in text[max(map(text.rfind, _COLONS)) + 1:])

    if texts and all(map(quotes_only, texts)):
        return "it is only quote marks, which are not part of a tag ('“recall”' is the tag recall)"
    return "a leading # and a facet prefix up to the last ':' are not part of a tag ('#topic:recall' is the tag recall)"


_QUOTE_PAIRS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u201d": "\u201d", "\u201e": "\u201c\u201d",
                "\u2018": "\u2019", "\u2019": "\u2019", "\u201a": "\u2018\u2019", "\u00ab": "\u00bb",
                "\u00bb": "\u00ab\u00bb", "\u2039": "\u203a", "\u203a": "\u2039\u203a", "\uff02": "\uff02",
                "\uff07": "\uff07"}
"""Each opening quote mark → the marks that close it: straight ``"x"`` and ``'x'`` (left around a tag in a YAML flow
list that YAML did not read as quotes), English ``“x”`` and ``‘x’`` (macOS and Word put them in for straight ones),
Swedish ``”x”`` and ``’x’``, German and Polish ``„x“`` ``„x”`` ``‚x‘``, French ``«x»`` ``‹x›``, Danish ``»x«``
``›x‹``, fullwidth ``＂x＂``. A tag written ``“security”`` was stored with its quotes, so ``--tags security`` found
nothing (QA round 130-C F9)."""
_CLOSING = frozenset("".join(_QUOTE_PAIRS.values()))
"""Every mark that closes a quote (:data:`_QUOTE_PAIRS`)."""


_HASHES = "#\uff03\ufe5f"
"""``#`` and the characters NFKC reads as it (fullwidth ``＃``, small ``﹟``): :func:`tag_key` reads a tag in NFKC, so
``＃ｒｅｃａｌｌ`` was the tag ``recall`` to filters, but shown with its ``＃`` (QA round 127-A F4)."""
_COLONS = (":", "\uff1a", "\ufe55", "\ufe13")
"""``:`` and the characters NFKC reads as it (fullwidth ``：``, small ``﹕``, vertical ``︓``), as :data:`_HASHES`."""


def split_hashtags(items) -> list[str]:
    """Tags as written (``items``: text, each a tag), an item of two or more ``#hashtags`` separated by spaces, and
    nothing else, read as those tags (``"#alpha #beta"`` → ``["#alpha", "#beta"]``, Obsidian's inline form; QA round
    150-A F5: ``tags: "#alpha #beta"`` was the one tag ``alpha #beta``). An item of other words stays one tag
    (``machine learning``, ``#machine learning``, ``x #alpha``). The indexer and the writer read tags so.
    (Changing this changes the index: bump :data:`dreamdb.vault.PARSER_VERSION`.)"""
    out: list[str] = []
    for item in items:
        words = item.split()
        if len(words) > 1 and all(w[:1] in _HASHES and w.lstrip(_HASHES) for w in words):
            out.extend(words)
        else:
            out.append(item)
    return out


def tag_key(text: str) -> str:
    """What tags are matched by: NFKC-normalised (a name saved decomposed, as macOS does, is the same tag, and
    so is one typed in fullwidth forms, ``＃ｒｅｃａｌｌ``: QA round 77 G5), :func:`clean_tag`, lowercased, and
    Turkish ``İ`` and ``ı`` read as ``i`` (``str.lower`` makes ``İ`` an ``i`` and a combining dot: QA round 58,
    ``--tags istanbul`` did not find the tag ``İSTANBUL``; and ``I`` lowercases to ``i``, not Turkish ``ı``: QA
    round 75 F9, ``IĞDIR`` was not the tag ``Iğdır``). ``document_tags.tag`` holds these; ``--tags`` is read
    alike. (Changing this changes the index: bump :data:`dreamdb.vault.PARSER_VERSION`.)"""
    return clean_tag(unicodedata.normalize("NFKC", text)).replace("İ", "i").lower().replace("ı", "i")


def status_text(text: str) -> str:
    """A frontmatter ``status`` as ``documents.status`` holds it: NFKC (fullwidth ``ＡＣＴＩＶＥ`` is ``active``, as
    tags read it: QA round 122-A F6), lowercased, Turkish ``İ`` read as ``i`` (``str.lower`` makes it an ``i`` and a
    combining dot: ``AKTİF`` was ``akti̇f``, which no typed status matched, QA round 121-C F2); ``ı`` kept, as the
    note writes it. (Changing this changes the index: bump :data:`dreamdb.vault.PARSER_VERSION`.)"""
    return unicodedata.normalize("NFKC", text.strip()).replace("İ", "i").lower()


def status_key(text: str) -> str:
    """What statuses are matched by (``--status``, ``status=``): :func:`status_text` with ``ı`` read as ``i`` too, as
    :func:`tag_key` reads tags (``KAPALI`` lowercases to ``kapali``, the note's ``kapalı``). The SQL side is
    ``REPLACE(documents.status, 'ı', 'i')``."""
    return status_text(text).replace("ı", "i")
