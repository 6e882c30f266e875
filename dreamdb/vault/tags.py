"""Tags: how a tag is read from frontmatter and how it is matched, one rule for the indexer and the filters.

Light (``unicodedata`` only): the query path imports it.
"""

from __future__ import annotations

import unicodedata


def clean_tag(text: str) -> str:
    """A tag as written (``"#topic:Recall "``) → the tag itself (``"Recall"``): stripped, a leading ``#``
    (Obsidian's inline form) and a facet prefix up to the last ``:`` removed (their fullwidth forms too); case kept.

    Idempotent (a cleaned tag has no ``:`` and no leading ``#``), so a tag copied from dreamdb's output
    into ``--tags`` is read as the same tag.
    """
    tag = text.strip().lstrip(_HASHES).strip()
    cut = max(map(tag.rfind, _COLONS))
    if cut >= 0:
        tag = tag[cut + 1:].strip().lstrip(_HASHES).strip()
    return tag


_HASHES = "#\uff03\ufe5f"
"""``#`` and the characters NFKC reads as it (fullwidth ``＃``, small ``﹟``): :func:`tag_key` reads a tag in NFKC, so
``＃ｒｅｃａｌｌ`` was the tag ``recall`` to filters, but shown with its ``＃`` (QA round 127-A F4)."""
_COLONS = (":", "\uff1a", "\ufe55", "\ufe13")
"""``:`` and the characters NFKC reads as it (fullwidth ``：``, small ``﹕``, vertical ``︓``), as :data:`_HASHES`."""


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
