"""Literal blocks: fenced code, HTML comments and raw HTML (``<pre>``…), where one opens and where it
closes, after CommonMark (https://spec.commonmark.org/0.31.2/, sections "Fenced code blocks" and "HTML blocks").

A line inside a literal block is never markdown structure: a ``## `` line in a fence or ``<pre>`` is
code and in a comment is hidden text, not a heading. The one rule shared by the memory-section parser
(:func:`dreamdb.vault.parse.parse_memory`: no section starts there) and the embedding chunker
(:mod:`dreamdb.embeddings.chunk`: never cut inside one), so the two always agree on what a block is.
Not to be confused with :mod:`dreamdb.vault.fences` (the ``---`` lines of a frontmatter block).
Lines are given without their line end. Light: ``re`` only.

- A fence opens with a run of 3 or more backticks or tildes, indented at most 3 spaces; the rest
  of the line is the info string, which may not contain a backtick when the run is of backticks.
- It closes at a line of the same character, indented at most 3 spaces, at least as long as the
  opening run, followed by spaces or tabs only.
- An HTML comment block (CommonMark's HTML block of type 2) opens at a line that begins with
  ``<!--``, indented at most 3 spaces, and closes at the first line containing ``-->``, which may
  be the opening line itself (then the block is that one line and nothing stays open). A comment
  opened in the middle of a line is inline HTML: it hides no heading (CommonMark lets a heading
  interrupt the paragraph it is in).
- A raw HTML block (CommonMark's type 1) opens at a line that begins with ``<pre``, ``<script``,
  ``<style`` or ``<textarea`` (any case; then a space, a tab, ``>`` or the end of the line),
  indented at most 3 spaces, and closes at the first line containing its end tag (``</pre>``…),
  which may again be the opening line.
- A block never closed runs to the end of the document.

Blocks inside containers (block quotes, list items indented 4 or more spaces) are not recognised.
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


COMMENT_OPENING = "<!--"
"""What :func:`block_opening` returns for an HTML comment block."""

_COMMENT_START_RE = re.compile(r" {0,3}<!--")
_RAW_START_RE = re.compile(r" {0,3}<(pre|script|style|textarea)(?:[ \t>]|$)", re.IGNORECASE)


def block_opening(line: str) -> str | None:
    """What opens a literal block at ``line`` (one line without its line end): the fence's run (as
    :func:`fence_opening`), :data:`COMMENT_OPENING` for an HTML comment block or the lowercased start
    tag (``"<pre"``) for a raw HTML block that does not close on the same line, else ``None``. Pass it to :func:`closes_block` for the lines that follow."""
    fence = fence_opening(line)
    if fence is not None:
        return fence
    if _COMMENT_START_RE.match(line) and "-->" not in line:
        return COMMENT_OPENING
    raw = _RAW_START_RE.match(line)
    if raw is not None:
        opening = f"<{raw.group(1).lower()}"
        return None if _raw_end(opening) in line.lower() else opening
    return None


def _raw_end(opening: str) -> str:
    """``"<pre"`` → ``"</pre>"``."""
    return f"</{opening[1:]}>"


def closes_block(line: str, opening: str) -> bool:
    """Whether ``line`` (without its line end) closes the literal block that ``opening`` (from
    :func:`block_opening`) opened: a line containing ``-->`` for a comment, the end tag (any case) for
    a raw HTML block, else :func:`closes_fence`."""
    if opening == COMMENT_OPENING:
        return "-->" in line
    if opening.startswith("<"):
        return _raw_end(opening) in line.lower()
    return closes_fence(line, opening)
