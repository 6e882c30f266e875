"""YAML frontmatter of vault markdown files, parsed with PyYAML.

A file starts with frontmatter when its first line is ``---``; the block ends
at the next line that is ``---`` (or ``...``). Malformed YAML never drops the
document: :func:`split_frontmatter` returns an empty mapping and a warning,
and the whole text after the block is still the body. So does a block too
large or too deep to read (:data:`MAX_VALUES`, :data:`MAX_DEPTH`): YAML
aliases can make a few hundred bytes stand for billions of values, or for a
list that contains itself. A block that is valid YAML but no mapping (a
scalar or a list: most often markdown between two ``---`` horizontal rules)
is no frontmatter at all: the whole file is the body.
"""

from __future__ import annotations

import re

import yaml

from dreamdb.output import clip
from dreamdb.vault.fences import find_block

try:  # the C loader is ~10x faster where libyaml is available
    _Base = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Base = yaml.SafeLoader

_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"


def yaml_loader() -> type:
    """PyYAML's safe loader class this module builds on: ``yaml.CSafeLoader`` (libyaml's parser, ~100x faster on a
    large frontmatter) where PyYAML was built with libyaml, else ``yaml.SafeLoader``."""
    return _Base


_BOOL, _TIMESTAMP = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp"
_STR = "tag:yaml.org,2002:str"


class _Loader(_Base):
    """PyYAML's safe loader without YAML 1.1's base-60 numbers: ``date: 12:30`` and ``confidence: 1:2`` stay the
    text written, not 750 and 62 (YAML 1.2 dropped them; a note means a time of day or a ratio). The int
    and float patterns are PyYAML's own (``yaml/resolver.py``) less their ``…(?::[0-5]?[0-9])+`` branch.

    A tag is the text written, too: a plain (unquoted) scalar of the top-level ``tags`` (the value itself, the
    items of its list at any depth, the keys of its mapping) that YAML 1.1 reads as a number, a boolean or a date
    is read as text (QA round 135-A F5: ``tags: [python, 3.10, no, off, 0x1F]`` was the tags ``3.1``, ``false``
    and ``31``, which ``--tags 3.10`` and ``--tags no`` did not find). Only an implicit type: an explicit one
    (``!!int 7``) is kept, and so are a null (``- ~``: no tag) and the values of a ``tags`` mapping (its flags,
    ``{backend: true, draft: false}``). The composer says where each node is (:meth:`descend_resolver`);
    :meth:`resolve` is only asked for a node without an explicit tag."""

    def __init__(self, stream):
        super().__init__(stream)
        self._text_here: list[bool | None] = []  # per node being composed: None (the root), or its scalars are tags

    def descend_resolver(self, current_node, current_index):
        super().descend_resolver(current_node, current_index)
        if current_node is None:
            here = None
        elif not self._text_here:  # (not reached: the composer descends to the root first)
            here = False
        elif self._text_here[-1] is None:  # a key or value of the root: the value of a key "tags"
            here = (isinstance(current_node, yaml.MappingNode) and isinstance(current_index, yaml.ScalarNode)
                    and current_index.tag == _STR and current_index.value == "tags")
        elif self._text_here[-1] and isinstance(current_node, yaml.MappingNode) and len(self._text_here) == 2:
            here = current_index is None  # the tags mapping's keys are tags, its values flags
        else:
            here = self._text_here[-1]
        self._text_here.append(here)

    def ascend_resolver(self):
        super().ascend_resolver()
        if self._text_here:
            self._text_here.pop()

    def resolve(self, kind, value, implicit):
        tag = super().resolve(kind, value, implicit)
        if (kind is yaml.ScalarNode and implicit[0] and tag in (_INT, _FLOAT, _BOOL, _TIMESTAMP) and self._text_here
                and self._text_here[-1]):
            return _STR
        return tag


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_INT, _FLOAT)]
    for first, resolvers in _Base.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(_INT, re.compile(r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+)$""", re.X), list("-+0123456789"))
_Loader.add_implicit_resolver(_FLOAT, re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", re.X), list("-+0123456789."))




def _int_or_text(loader, node):
    """An integer as PyYAML reads it, or the text written when Python refuses to read it (more digits than
    ``sys.get_int_max_str_digits()``, 4,300 by default): a note's ``priority: 999…`` is odd metadata, not a
    reason to stop every sync (QA round 70 B-H1: ValueError, exit 70 on every command)."""
    try:
        return _Base.construct_yaml_int(loader, node)
    except ValueError:
        return loader.construct_scalar(node)


_Loader.add_constructor(_INT, _int_or_text)


def _untagged(loader, _suffix: str, node):
    """A value under an application's own tag (``!secret db_password``, ``!include notes.yaml``, ``!Ref x``: Home
    Assistant's, CloudFormation's) read as the value written, as if untagged: PyYAML's safe loader refuses a tag it
    does not know, and the whole frontmatter was lost with it (QA round 121-A). Only local tags (``!name``): YAML's
    own (``!!python/object``) and full ones (``!<tag:…>``) are still refused, and nothing is ever run."""
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)


_Loader.add_multi_constructor("!", _untagged)

class _DatesAsText(_Loader):
    """The same loader with timestamps kept as text: PyYAML raises on an impossible date such as
    ``2026-13-45`` while it builds the mapping; the document's date is then checked like any text."""


_DatesAsText.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))

_CONSTRUCTOR_ERRORS = (AttributeError, KeyError, TypeError, IndexError)
"""What PyYAML's safe constructors raise, besides ValueError, on a value its explicit tag cannot read:
``!!timestamp soon`` (AttributeError), ``!!bool maybe`` (KeyError). Uncaught, one such note ended every command on
the vault in exit 70 (QA round 118-B F1)."""

_EXPLICIT_TAG_VALUE = re.compile(r"!![\w:.-]+[ \t]+[^\n]*")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
"""The escape of a UTF-16 high surrogate (``\\ud83d``), the first half of a pair: :func:`joined_surrogates`' fast
test."""
_ANY_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F][0-9a-fA-F]{2}")
"""The escape of any UTF-16 surrogate, high or low, in its four-digit or eight-digit form (``\\ude80``,
``\\U0000DE80``): what libyaml's scanner refuses, written as another escape of the same length for it to scan
(:func:`joined_surrogates`)."""
_ESCAPE = re.compile(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\[\s\S]")
"""An escape of a double-quoted YAML scalar: a UTF-16 surrogate pair (groups 1 and 2, high and low), or any other
backslash and the character after it (``\\\\u…`` is an escaped backslash and the text ``u…``, no escape)."""


def joined_surrogates(text: str) -> str:
    """``text`` (YAML) with each UTF-16 surrogate-pair escape of a double-quoted scalar written as the one escape
    of the code point the pair stands for: ``"Ship it \\ud83d\\ude80"`` as ``"Ship it \\U0001F680"``, 🚀, as JSON,
    js-yaml and SnakeYAML read it (JSON serializers and older js-yaml write emoji so). libyaml, which PyYAML's
    fast loader is, refuses a surrogate escape ("found invalid Unicode character escape code"), and the whole
    frontmatter was dropped with it (QA round 153-C F3). A lone surrogate (a high one not followed by a low one,
    a low one alone) is left as written, still refused; so is every escape in a single-quoted, plain or block
    scalar, where YAML reads no escapes (``title: a \\ud83d\\ude80``: that text), and in a comment.

    The scalars are found by the scanner of the loader that reads the text (libyaml's, where PyYAML has it), only
    for text that holds the escape of a high surrogate at all. libyaml's scanner refuses a surrogate escape, so it
    scans a copy with each written as another escape of the same length (``\\u0078``): every character of the
    copy where it is in the text, its tokens where the text's are (QA round 154-A F3: PyYAML's pure-Python
    scanner, used before, took 6 s for a block of 3 MB that libyaml loads in 0.1 s). Of text it cannot scan, the
    scalars before the point it stopped at are joined, for the loader to refuse the text at that point, as it
    would without the escapes. Only the reader sees the new text: a writer rewrites its own lines, so the file
    keeps the escapes (``update`` changes no byte of a key it does not edit).

    Args:
        text: a YAML document (a frontmatter block).

    Returns:
        ``text``, or a copy of it with the pairs joined (two characters shorter each).
    """
    if not _SURROGATE_ESCAPE.search(text):
        return text
    spans = []
    scanned = text if _Base is yaml.SafeLoader else _ANY_SURROGATE_ESCAPE.sub(
        lambda m: m.group()[:-4] + "0078", text)  # (the same length: \ud83d as \u0078, \U0000DE80 as \U00000078)
    try:
        for token in yaml.scan(scanned, Loader=_Base):
            if isinstance(token, yaml.ScalarToken) and token.style == '"' and _SURROGATE_ESCAPE.search(
                    text, token.start_mark.index, token.end_mark.index):
                spans.append((token.start_mark.index, token.end_mark.index))
    except (yaml.YAMLError, RecursionError):
        pass  # (the scalars before where it stopped: the loader stops there too, and says why)

    def one(m: re.Match) -> str:
        if m.group(1) is None:
            return m.group()
        high, low = int(m.group(1), 16), int(m.group(2), 16)
        return f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08X}"

    out, at = [], 0
    for start, end in spans:
        out += [text[at:start], _ESCAPE.sub(one, text[start:end])]
        at = end
    return "".join(out) + text[at:]


def _load(text: str, loader, *, joined: bool = False):
    """``yaml.load(text, Loader=loader)``, a value its explicit tag cannot read raised as a ValueError that names it.
    A double-quoted scalar's UTF-16 surrogate-pair escape is read as its code point (:func:`joined_surrogates`;
    ``joined``: ``text`` is what it gave already).

    Raises:
        yaml.YAMLError, ValueError, OverflowError, RecursionError.
    """
    if not joined:
        text = joined_surrogates(text)
    try:
        return yaml.load(text, Loader=loader)
    except (ValueError, *_CONSTRUCTOR_ERRORS) as exc:
        for m in _EXPLICIT_TAG_VALUE.finditer(text):
            try:
                yaml.load(m.group(), Loader=loader)
            except (ValueError, OverflowError, yaml.YAMLError, RecursionError, *_CONSTRUCTOR_ERRORS):
                raise ValueError(f"{clip(m.group().strip(), 80)!r} is no value of its explicit tag") from None
        if isinstance(exc, ValueError):
            raise
        raise ValueError(f"a value its explicit tag cannot read ({type(exc).__name__})") from None


def load_yaml(text: str):
    """``text`` read as YAML the way the indexer reads frontmatter (:class:`_Loader`: no base-60 numbers, an
    integer too long for Python is text), for the writers, so that what ``update`` compares and rewrites is what
    the index holds (QA round 70 B-M1: ``meeting: 12:30`` became ``meeting: 750`` on a whole rewrite).

    Raises:
        yaml.YAMLError, ValueError, OverflowError, RecursionError: as ``yaml.safe_load``; ValueError also for a
        value its explicit tag cannot read (``!!float abc``, ``!!bool maybe``).
    """
    return _load(text, _Loader)


MAX_VALUES = 10_000
"""Most values (scalars, lists and mappings, each alias counted every time it is used) a frontmatter
block may hold. A real one holds tens; YAML aliases let 600 bytes stand for billions of values (the
"billion laughs" pattern), which every reader of the mapping would walk: 74 s and 4 GB in a QA repro."""
MAX_DEPTH = 32
"""Deepest nesting of lists and mappings accepted (an alias to an enclosing list nests without end)."""


class TooLarge(ValueError):
    """A frontmatter mapping beyond :data:`MAX_VALUES` or :data:`MAX_DEPTH` (see :func:`check_size`)."""


def check_size(meta) -> None:
    """Raise :class:`TooLarge` when ``meta`` holds more than :data:`MAX_VALUES` values or nests deeper
    than :data:`MAX_DEPTH` (iteratively: a self-referencing list must not exhaust Python's stack)."""
    seen = 0
    stack = [(meta, 0)]
    while stack:
        value, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise TooLarge(f"more than {MAX_VALUES:,} values (metadata is tens of values: move data into the body, "
                           "or look for YAML aliases repeating others)")
        if isinstance(value, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                raise TooLarge(f"nested more than {MAX_DEPTH} levels deep (an alias to an enclosing list?)")
            items = value.values() if isinstance(value, dict) else value
            stack.extend((v, depth + 1) for v in items)
            if isinstance(value, dict):
                stack.extend((k, depth + 1) for k in value if isinstance(k, tuple))


def _kind(value) -> str:
    return "list" if isinstance(value, list) else "text" if isinstance(value, str) else type(value).__name__


def split_frontmatter(text: str) -> tuple[dict, str, str | None]:
    """Split a markdown file into (frontmatter mapping, body, warning or None).

    Args:
        text: the whole file, decoded.

    Returns:
        ``(meta, body, warning)``: ``meta`` is ``{}`` when there is no block or
        it cannot be read as a YAML mapping (then ``warning`` says why; a mapping read whose top-level keys
        repeat comes with a warning naming them); ``body`` is the
        text after the block, or the whole text when there is no block, it is not
        closed, or it is YAML but no mapping (text between two ``---`` rules).
    """
    found = find_block(text)
    if found is None:
        from dreamdb.vault.conflicts import OPENS_WITH_CONFLICT, conflict_around_frontmatter

        conflict = conflict_around_frontmatter(text) if OPENS_WITH_CONFLICT.match(text) else None
        return {}, text, f"frontmatter not read: the file opens with {conflict} around it" if conflict else None
    if found.close_start is None:
        return {}, text, "frontmatter block is not closed by a '---' line"
    body = text[found.close_end:]
    block = text[found.open_end:found.close_start]
    read = joined_surrogates(block)  # (once for both loaders)
    try:
        try:
            meta = _load(read, _Loader, joined=True)
        except (ValueError, OverflowError):  # an impossible date (month 13): read dates as text
            meta = _load(read, _DatesAsText, joined=True)
    except (yaml.YAMLError, ValueError, OverflowError) as exc:  # (ValueError: a value its tag cannot read, !!float x)
        from dreamdb.vault.conflicts import conflict_in_block

        conflict = conflict_in_block(block, text[found.close_start:], first_line=2)
        if conflict:  # (QA round 119-B F2: said as bad YAML, which it is, but not why)
            return {}, body, f"frontmatter holds {conflict}, so it is no valid YAML"
        problem = yaml_problem(exc) if isinstance(exc, yaml.YAMLError) else str(exc)
        return {}, body, f"frontmatter is not valid YAML ({problem})"
    except RecursionError:  # PyYAML builds nested collections recursively
        return {}, body, f"frontmatter is nested too deeply to read (over {MAX_DEPTH} levels)"
    if meta is None:
        return {}, body, None
    if not isinstance(meta, dict):  # "---\n## Alpha\nalpha body\n\n---": rules around text, not frontmatter
        return {}, text, f"the lines between the first two '---' lines are no YAML mapping (a {_kind(meta)}), so no frontmatter"
    try:
        check_size(meta)
    except TooLarge as exc:
        return {}, body, f"frontmatter is too large to read: {exc}"
    return meta, body, _repeated_keys(block)


_TOP_KEY = re.compile(r"^([^\s#'\"{}\[\]][^:\n]*?)[ \t]*:(?:[ \t]|\r?$)", re.M)
"""A top-level ``key:`` at the start of a line (block scalars' and nested mappings' lines are indented)."""


def _repeated_keys(block: str) -> str | None:
    """A warning naming the top-level keys written more than once (YAML keeps the last silently: QA round 69 M4,
    ``title:`` twice showed the second title with no word), else ``None``."""
    seen: set[str] = set()
    repeated: list[str] = []
    for m in _TOP_KEY.finditer(block):
        key = m.group(1)
        if key in seen and key not in repeated:
            repeated.append(key)
        seen.add(key)
    if not repeated:
        return None
    names = ", ".join(repeated[:5]) + (" …" if len(repeated) > 5 else "")
    return f"frontmatter key{'s' if len(repeated) > 1 else ''} {names} written more than once; the last of each is used"


def yaml_problem(exc: Exception) -> str:
    """What is wrong in a frontmatter block PyYAML refused, and where: ``found character '\\t' that cannot start
    any token at line 2`` (the line in the file: the block starts on line 2). The sync's warning and a refused
    write say the same (QA round 69 M3: the warning said only "while scanning for the next token")."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or (str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    return f"{problem} at line {mark.line + 2}" if mark is not None else str(problem)


def impossible_values(block: str) -> list[str]:
    """The top-level ``key: value`` pairs of a frontmatter ``block`` whose value YAML reads as a date or time
    that cannot exist (``date: 2026-02-30``), for a message that names them (QA round 69 M4: "holds an impossible
    value (day is out of range for month)" named no key). ``[]`` when the block cannot be read at all."""
    try:
        meta = _load(block, _DatesAsText)
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError):
        return []
    if not isinstance(meta, dict):
        return []
    out = []
    for key, value in meta.items():
        if isinstance(value, str):
            try:
                _load(value, _Loader)
            except (ValueError, OverflowError):
                out.append(f"{key}: {value}")
            except (yaml.YAMLError, RecursionError):
                pass
    return out
