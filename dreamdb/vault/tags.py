"""Tags: how a tag is read from frontmatter and how it is matched, one rule for the indexer and the filters.

Light (``unicodedata`` only): the query path imports it.
"""

from __future__ import annotations

import unicodedata


def clean_tag(text: str) -> str:
    """A tag as written (``"#topic:Recall "``) → the tag itself (``"Recall"``): stripped, a leading ``#``
    (Obsidian's inline form) and a facet prefix up to the last ``:`` removed; case kept.

    Idempotent (a cleaned tag has no ``:`` and no leading ``#``), so a tag copied from dreamdb's output
    into ``--tags`` is read as the same tag.
    """
    tag = text.strip().lstrip("#").strip()
    if ":" in tag:
        tag = tag.rsplit(":", 1)[1].strip().lstrip("#").strip()
    return tag


def tag_key(text: str) -> str:
    """What tags are matched by: :func:`clean_tag`, NFC-normalised (a name saved decomposed, as macOS
    does, is the same tag) and lowercased, Turkish dotted capital ``İ`` to ``i`` as the analyzer folds it
    (``str.lower`` makes it ``i`` and a combining dot: QA round 58, ``--tags istanbul`` did not find the tag
    ``İSTANBUL``). ``document_tags.tag`` holds these; ``--tags`` is read alike."""
    return unicodedata.normalize("NFC", clean_tag(text)).replace("İ", "i").lower()
