"""Unresolved merge conflicts in a vault file: the markers git (and other version control) writes between the two
sides of a conflict, found so that a file they broke is said to hold a merge conflict rather than bad YAML or JSON
(QA round 119-B F2: a conflict in a note's frontmatter dropped its title, dates and flags with "not valid YAML")."""

from __future__ import annotations

import re

_MARKER = re.compile(r"^(?:<{7,}(?:[ \t].*)?|={7,}|>{7,}(?:[ \t].*)?|\|{7,}(?:[ \t].*)?)\r?$", re.MULTILINE)
"""A line git writes around a conflict: ``<<<<<<< ours``, ``=======``, ``>>>>>>> theirs``, and ``||||||| base`` of
the diff3 style (git's ``merge.conflictStyle``); seven characters, git's default ``conflict-marker-size``, or more
(QA round 122-A F3: a larger size set in .gitattributes)."""

_OPENING = re.compile(r"^<{7,}(?:[ \t].*)?\r?$", re.MULTILINE)
"""The first marker of a conflict (``<<<<<<< ours``)."""


def conflict_line(text: str) -> int | None:
    """The 1-based line number of the first merge conflict marker in ``text`` that a ``<<<<<<<`` line opens, else
    ``None`` (a ``=======`` line alone is a markdown heading's underline, not a conflict)."""
    opening = _OPENING.search(text)
    if opening is None or _MARKER.search(text, opening.end()) is None:
        return None
    return text.count("\n", 0, opening.start()) + 1


def conflict_words(text: str, first_line: int = 1) -> str | None:
    """``"an unresolved merge conflict, <<<<<<< at line N"`` for ``text`` (whose first line is line ``first_line``
    of its file), else ``None``."""
    line = conflict_line(text)
    return None if line is None else f"an unresolved merge conflict, <<<<<<< at line {line + first_line - 1}"


def conflict_in_block(block: str, after: str, first_line: int) -> str | None:
    """:func:`conflict_words` for a conflict a ``<<<<<<<`` line opens in a frontmatter ``block`` (its lines, from line
    ``first_line`` of the file), its other markers in it or in the text ``after`` it (past the closing ``---``: QA round
    120-A F10); ``None`` for a conflict opened after the block, or none."""
    line = conflict_line(block + after)
    if line is None or line > block.count("\n") + 1:
        return None
    return f"an unresolved merge conflict, <<<<<<< at line {line + first_line - 1}"


_SIDE_OPENS_WITH_FRONTMATTER = re.compile(
    r"^(?:<{7,}(?:[ \t].*)?|={7,}|\|{7,}(?:[ \t].*)?)\r?\n(?:[ \t]*\r?\n)*---[ \t]*\r?$", re.MULTILINE)
"""A conflict side (after ``<<<<<<<``, ``=======`` or ``|||||||``) whose first line that is not blank opens a
frontmatter block."""

OPENS_WITH_CONFLICT = re.compile(r"(?:[ \t]*\r?\n)*<{7}")
"""A text whose first line that is not blank is a conflict's opening marker (``match`` it: the cheap first look of
:func:`conflict_around_frontmatter`)."""


def conflict_around_frontmatter(text: str) -> str | None:
    """:func:`conflict_words` for a file whose first line that is not blank opens a merge conflict, a side of which
    opens with a frontmatter block (``---``): git's add/add conflict of two versions that differ from their first
    line. No block then opens the file, and its frontmatter would be read as text (QA round 121-A F5: no word of it,
    and ``update`` put a new block above the markers; 122-A F3: after blank lines, or with longer markers). ``None``
    otherwise."""
    first = OPENS_WITH_CONFLICT.match(text)
    if first is None or conflict_line(text) != text.count("\n", 0, first.end()) + 1:
        return None
    closing = re.search(r"^>{7,}(?:[ \t].*)?\r?$", text, re.MULTILINE)
    region = text[:closing.start()] if closing else text
    return conflict_words(text) if _SIDE_OPENS_WITH_FRONTMATTER.search(region) else None
