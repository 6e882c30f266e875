"""Fenced code blocks: where one opens and where it closes, after CommonMark
(https://spec.commonmark.org/0.31.2/#fenced-code-blocks, section "Fenced code blocks").

The one rule shared by the memory-section parser (:func:`dreamdb.vault.parse.parse_memory`: a
``## `` line inside a fence is code, not a section heading) and the embedding chunker
(:mod:`dreamdb.embeddings.chunk`: never cut inside a fence), so the two always agree on what a
fence is. Not to be confused with :mod:`dreamdb.vault.fences` (the ``---`` lines of a frontmatter
block). Lines are given without their line end. Light: ``re`` only.

- A fence opens with a run of 3 or more backticks or tildes, indented at most 3 spaces; the rest
  of the line is the info string, which may not contain a backtick when the run is of backticks.
- It closes at a line of the same character, indented at most 3 spaces, at least as long as the
  opening run, followed by spaces or tabs only.
- A fence never closed runs to the end of the document.

Fences inside containers (block quotes, list items indented 4 or more spaces) are not recognised.
"""

from __future__ import annotations

import re

FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
"""A line that may open a fence: group 1 is the run of backticks or tildes, group 2 the info string."""


def fence_opening(line: str) -> str | None:
    """The opening run (e.g. ``"```"`` or ``"~~~~"``) when ``line`` opens a fenced code block, else None.

    ``line`` is one line without its line end. A backtick run followed by an info string containing a
    backtick (```` ``` a`b ````) is inline code, not a fence.
    """
    m = FENCE_RE.match(line)
    if m is None or (m.group(1)[0] == "`" and "`" in m.group(2)):
        return None
    return m.group(1)


def closes_fence(line: str, opening: str) -> bool:
    """Whether ``line`` (without its line end) closes the fence opened by the run ``opening``: at most 3
    spaces, then at least ``len(opening)`` of the same character, then only spaces or tabs."""
    rest = line.lstrip(" ")
    if len(line) - len(rest) > 3:
        return False
    run = len(rest) - len(rest.lstrip(opening[0]))
    return run >= len(opening) and not rest[run:].strip(" \t")
