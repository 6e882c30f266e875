"""Where a markdown file's frontmatter block begins and ends: the one rule shared by the indexer
(:func:`dreamdb.vault.frontmatter.split_frontmatter`) and the writer (:class:`dreamdb.writes.markdown._Markdown`).

The first line opens a block when it is ``---``; the first later line that is ``---`` or ``...`` closes
it (the YAML document markers; Jekyll and Hugo accept the same). Trailing spaces or tabs are allowed on
both fence lines, and ``----`` is a markdown horizontal rule, not a fence. Kept free of heavy imports:
the writer runs on the CLI's fast path.
"""

from __future__ import annotations

from typing import NamedTuple


def _is_fence(line: str, closing: bool) -> bool:
    """Whether ``line`` (its line end included, if any) is a frontmatter fence: ``---``, or also ``...``
    when ``closing``, followed by spaces or tabs at most, then ``\\n``, ``\\r\\n`` or the end of the text.
    ``----`` is a markdown rule, not a fence."""
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    line = line.rstrip(" \t")
    return line == "---" or (closing and line == "...")


class Block(NamedTuple):
    """Where a file's frontmatter block lies, as character offsets into the text.

    ``text[:open_end]`` is the opening fence line, ``text[open_end:close_start]`` the YAML (its lines with
    their line ends; empty for the block ``---`` / ``---``), ``text[close_start:close_end]`` the closing
    fence line and ``text[close_end:]`` the body. An unclosed block has ``close_start = close_end = None``.
    """

    open_end: int
    close_start: int | None
    close_end: int | None


def find_block(text: str) -> Block | None:
    """Locate the frontmatter block of ``text`` (a whole file, decoded, BOM removed); None when the first line
    is not a fence. The one rule shared by the indexer (:func:`split_frontmatter`) and the writer
    (:class:`dreamdb.writes.markdown._Markdown`), so they always agree on where the frontmatter ends."""
    end = text.find("\n")
    open_end = len(text) if end < 0 else end + 1
    if not _is_fence(text[:open_end], closing=False):
        return None
    start = open_end
    while start < len(text):
        end = text.find("\n", start)
        stop = len(text) if end < 0 else end + 1
        if _is_fence(text[start:stop], closing=True):
            return Block(open_end, start, stop)
        start = stop
    return Block(open_end, None, None)


def cr_line_ends(text: str) -> bool:
    """Whether ``text``'s first line ends with a carriage return alone and no line ends with CR LF (a classic Mac file,
    perhaps with LF lines added since): its lone CRs are then line ends, as universal newlines read them (QA rounds
    90-C F5, 91 F5). A CR LF file with a stray CR is not one."""
    newline = text.find("\n")
    cr = text.find("\r", 0, newline if newline >= 0 else len(text))
    return cr >= 0 and cr != newline - 1 and "\r\n" not in text


def lone_cr_in_frontmatter(text: str) -> bool:
    """Whether a carriage return alone (not before an LF) lies in the frontmatter block of ``text`` (a whole file,
    decoded, BOM removed, not :func:`cr_line_ends`) as the indexer reads it, every lone CR a line end
    (:func:`dreamdb.vault.parse.plain_text`): from its opening fence to its closing one, or to the end of the text
    when none closes it. The writer, which splits lines at LF only, would read other lines there, and another place
    where the block closes, or none (QA round 148-C F3: ``tags: [z]\\r---`` in an LF file was closed for sync and
    "not closed" for ``update``). A lone CR in the body is read alike by both, and so is one that ends the closing
    fence line at the end of the text (``---\\r``, no body): the writer's fence may end there too (QA round 149-B F1)."""
    cr = text.find("\r")
    while cr >= 0 and text.startswith("\n", cr + 1):
        cr = text.find("\r", cr + 1)
    if cr < 0:
        return False
    block = find_block(text.replace("\r\n", "\n").replace("\r", "\n"))  # (the indexer's reading)
    at = cr - text.count("\r\n", 0, cr)  # (where the CR is in that reading)
    if block is None:
        return False
    if block.close_end is None:
        return True
    if cr == len(text) - 1 and at == block.close_end - 1:  # (the closing fence's own line end, the text's last one)
        return False
    return at < block.close_end
