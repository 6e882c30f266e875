"""YAML frontmatter of vault markdown files, parsed with PyYAML.

A file starts with frontmatter when its first line is ``---``; the block ends
at the next line that is ``---`` (or ``...``). Malformed YAML never drops the
document: :func:`split_frontmatter` returns an empty mapping and a warning,
and the whole text after the block is still the body.
"""

from __future__ import annotations

import re

import yaml

try:  # the C loader is ~10x faster where libyaml is available
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader



class _DatesAsText(_Loader):
    """The same loader with timestamps kept as text: PyYAML raises on an impossible date such as
    ``2026-13-45`` while it builds the mapping; the document's date is then checked like any text."""


_DatesAsText.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))

_FENCE_RE = re.compile(r"^---[ \t]*\r?\n(.*?)(?:\r?\n)(?:---|\.\.\.)[ \t]*(?:\r?\n|$)", re.DOTALL)


def split_frontmatter(text: str) -> tuple[dict, str, str | None]:
    """Split a markdown file into (frontmatter mapping, body, warning or None).

    Args:
        text: the whole file, decoded.

    Returns:
        ``(meta, body, warning)``: ``meta`` is ``{}`` when there is no block or
        it is not a YAML mapping (then ``warning`` says why); ``body`` is the
        text after the block (the whole text when there is none).
    """
    if not text.startswith("---"):
        return {}, text, None
    m = _FENCE_RE.match(text)
    if not m:
        return {}, text, "frontmatter block is not closed by a '---' line"
    body = text[m.end():]
    try:
        try:
            meta = yaml.load(m.group(1), Loader=_Loader)
        except (ValueError, OverflowError):  # an impossible date (month 13): read dates as text
            meta = yaml.load(m.group(1), Loader=_DatesAsText)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return {}, body, f"frontmatter is not valid YAML ({first})"
    if meta is None:
        return {}, body, None
    if not isinstance(meta, dict):
        return {}, body, "frontmatter is not a YAML mapping"
    return meta, body, None
