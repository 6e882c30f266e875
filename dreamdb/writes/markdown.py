"""Line-level frontmatter editing of a markdown document (:class:`_Markdown`): only the lines of the
keys being changed are rewritten, and the result is re-parsed and compared with the intended mapping."""

from __future__ import annotations

import contextlib
import functools
import json
import re
import unicodedata
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from dreamdb.errors import UsageError, WriteRefused
from dreamdb.vault.fences import cr_line_ends, find_block, lone_cr_in_frontmatter
from dreamdb.vault.tags import clean_tag, no_tag_reason, split_hashtags, tag_key
from dreamdb.writes.checks import _found, _refused_char, _require_utf8, _short_repr, not_utf8_refusal, refuse_doubled_marks


def _load(text: str):
    """YAML as the indexer reads it (:func:`dreamdb.vault.frontmatter.load_yaml`; imported when first needed)."""
    from dreamdb.vault.frontmatter import load_yaml

    return load_yaml(text)


class _RemoveKey:
    """The type of :data:`REMOVE_KEY`."""

    def __repr__(self) -> str:
        return "REMOVE_KEY"


REMOVE_KEY = _RemoveKey()
"""A change's value that removes the key from the frontmatter, its lines with it (``update --description ""``,
QA round 59 L8)."""


_KEY_RE = re.compile(r"""^(?:(?P<dq>"(?:[^"\\]|\\.)*")|(?P<sq>'(?:[^']|'')*')|(?P<plain>[^\s#'"\-?:,\[\]{}&*!|>%@`][^:#]*?))\s*:(?:\s|$)""")
"""A line that starts a top-level key: ``key:``, ``"key":`` or ``'key':``, a quoted key with its escapes
(``"k\\tz":``, ``'it''s':``); :func:`_key_of` reads the key a match names."""


def _key_of(m: re.Match) -> str | None:
    """The key a :data:`_KEY_RE` match names, as the indexer's YAML reads it: a double-quoted key's escapes
    read (``"k\\tz"`` is k, a tab, z; ``"\\ud83d\\ude80"`` one emoji), a single-quoted key's ``''`` one quote;
    ``None`` for a double-quoted key YAML cannot read (``"\\q"``, no escape), which no change can name.
    (QA round 153-F F3: a key with an escape was no key to the line editor, so the key above it took its line,
    and ``update --tags`` rewrote the whole frontmatter: quotes and escapes of every other key dropped.)"""
    if m.group("plain") is not None:
        return m.group("plain")
    if m.group("sq") is not None:
        return m.group("sq")[1:-1].replace("''", "'")
    quoted = m.group("dq")
    if "\\" not in quoted:
        return quoted[1:-1]
    import yaml

    try:
        key = _load(quoted)
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
        return None
    return key if isinstance(key, str) else None


RESOLVE_CONFLICT = "Resolve the merge conflict (keep one side, remove the <<<<<<< ======= >>>>>>> lines), then retry."
"""The hint of a write refused for a merge conflict in a note's frontmatter."""


class _Markdown:
    """A markdown file split into BOM, frontmatter lines and body text."""

    def __init__(self, text: str) -> None:
        self.bom = "\ufeff" if text.startswith("\ufeff") else ""
        text = text[len(self.bom):]
        refuse_doubled_marks(text, "The file")
        # classic Mac line ends (CR alone): edited as lines, written back with CRs, as the indexer reads them (QA round
        # 90-C F5: the frontmatter was not found, and an update added a second one above it)
        self.cr_only = cr_line_ends(text)
        if self.cr_only:
            if "\n" in text:  # (CR and LF line ends: written back, one kind would change the other's bytes; 91 F5)
                raise WriteRefused("The file mixes classic Mac (CR) and Unix (LF) line ends; it was not changed.",
                                   hint="Save it with one kind of line end (your editor's line-ending setting), then"
                                        " retry.")
            text = text.replace("\r", "\n")
        elif lone_cr_in_frontmatter(text):  # (QA round 148-C F3: a lone CR past the first line, before the closing
            # fence, closed the frontmatter for sync but not for the writer: "not closed", whose hint added a stray ---)
            other = "Windows (CR LF)" if "\r\n" in text else "Unix (LF)"
            raise WriteRefused(f"The file mixes classic Mac (CR) and {other} line ends in its frontmatter; it was not"
                               " changed.", hint="Save it with one kind of line end (your editor's line-ending"
                                                 " setting), then retry.")
        self.newline = "\r\n" if "\r\n" in text.split("\n", 1)[0] + "\n" else "\n"
        self.has_fm = False
        self.open_line = ""
        self.fm_lines: list[str] = []
        self.close_line = ""
        self.body = text
        block = find_block(text)  # the indexer's rule, shared
        self.unclosed = block is not None and block.close_start is None
        if block is not None and not self.unclosed:
            self.has_fm = True
            self.open_line = text[:block.open_end]
            self.fm_lines = re.split(r"(?<=\n)", text[block.open_end:block.close_start])
            if self.fm_lines[-1] == "":
                self.fm_lines.pop()
            self.close_line = text[block.close_start:block.close_end]
            self.body = text[block.close_end:]

    def render(self) -> str:
        if not self.has_fm:
            text = self.body
        else:
            ends = self.close_line.endswith("\n") or not self.body  # a file ending on its closing fence stays so
            close = self.close_line if ends else self.close_line + self.newline
            text = self.open_line + "".join(self.fm_lines) + close + self.body
        return self.bom + (text.replace("\n", "\r") if self.cr_only else text)

    def check_closed(self) -> None:
        """Raise WriteRefused when the file opens a frontmatter block (``---``) that no ``---`` line closes."""
        if self.unclosed:
            raise WriteRefused("The document's frontmatter is not closed: its first line is --- but no later "
                               "line is --- (or ...), so dreamdb cannot tell frontmatter from body.",
                               hint="Add a line --- after the last frontmatter key (or remove the first line "
                                    "if the file has no frontmatter), then retry.")

    def frontmatter(self) -> dict:
        import yaml

        self.check_closed()
        if not self.has_fm:
            from dreamdb.vault.conflicts import OPENS_WITH_CONFLICT, conflict_around_frontmatter

            conflict = conflict_around_frontmatter(self.body) if OPENS_WITH_CONFLICT.match(self.body) else None
            if conflict:  # (QA round 121-A F5: a new block was put above the markers)
                raise WriteRefused(f"The document opens with {conflict} around its frontmatter.", hint=RESOLVE_CONFLICT)
            return {}
        try:
            data = _load("".join(self.fm_lines))
        except yaml.YAMLError as exc:
            from dreamdb.vault.frontmatter import yaml_problem  # (yaml is loaded already here)

            from dreamdb.vault.conflicts import conflict_in_block

            conflict = conflict_in_block("".join(self.fm_lines), self.close_line + self.body, first_line=2)
            raise WriteRefused(f"The document's YAML frontmatter is malformed ({conflict or yaml_problem(exc)}).",
                               hint=RESOLVE_CONFLICT if conflict else
                               "Fix the frontmatter by hand; dreamdb will not guess.") from exc
        except (ValueError, OverflowError) as exc:  # PyYAML building an impossible date (2026-13-45)
            from dreamdb.vault.frontmatter import impossible_values

            found = impossible_values("".join(self.fm_lines))  # (named: QA round 69 M4)
            raise WriteRefused("The document's YAML frontmatter holds an impossible value ("
                               + (", ".join(found) + ": " if found else "") + f"{exc}).",
                               hint="Fix that value by hand (a date that exists, or quote it to keep it as text);"
                                    " dreamdb will not guess.") from exc
        except RecursionError:
            raise WriteRefused("The document's YAML frontmatter is nested too deeply to read.",
                               hint="Fix the frontmatter by hand; dreamdb will not guess.") from None
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise WriteRefused("The document's frontmatter is not a YAML mapping.",
                               hint="Fix the frontmatter by hand; dreamdb will not guess.")
        from dreamdb.vault.frontmatter import TooLarge, check_size

        try:
            check_size(data)  # as the indexer: aliases can stand for billions of values, or a list holding itself
        except TooLarge as exc:
            raise WriteRefused(f"The document's YAML frontmatter is too large to edit safely: {exc}.",
                               hint="Fix the frontmatter by hand (write the values out instead of YAML aliases).") from None
        return data

    def key_spans(self) -> dict[str, tuple[int, int]]:
        """Map each top-level key to its [start, end) line range in fm_lines."""
        starts: list[tuple[str | None, int]] = []  # (None: a key no change names, still the end of the one above)
        for i, line in enumerate(self.fm_lines):
            m = _KEY_RE.match(line)
            if m:
                starts.append((_key_of(m), i))
        spans: dict[str, tuple[int, int]] = {}
        for n, (key, start) in enumerate(starts):
            end = starts[n + 1][1] if n + 1 < len(starts) else len(self.fm_lines)
            # A column-0 comment ends the span; trailing blank lines stay outside it.
            for j in range(start + 1, end):
                if self.fm_lines[j].startswith("#"):
                    end = j
                    break
            while end - 1 > start and not self.fm_lines[end - 1].strip():
                end -= 1
            if key is not None:
                spans[key] = (start, end)
        return spans


_NOT_TEXT_TO_SOME_READER = re.compile(r"""
    [-+]? (?: \.[0-9]+ | [0-9]+ (?:\.[0-9]*)? ) (?: [eE][-+]?[0-9]+ )?  # YAML 1.2 core int and float: 1e3, +.5
  | [-+]? 0 (?: [oO][0-7_]+ | [xX][0-9a-fA-F_]+ | [bB][01_]+ )        # 0o17 (1.2), 0x1F, 0b101 (1.1)
  | [-+]? \. (?: inf | nan )                                         # .inf, -.Inf, .NaN in any case
  | y | yes | n | no | true | false | on | off | null | ~             # YAML 1.1 booleans and nulls, any case
""", re.VERBOSE | re.IGNORECASE)
"""Strings a YAML reader other than PyYAML may load as something else: YAML 1.2 (core schema) reads ``1e3``,
``+.5`` and ``0o17`` as numbers, and YAML 1.1 ``y``/``n`` (and ``yEs``, ``nUll``…) as a boolean or null,
all of which PyYAML (YAML 1.1, and only some spellings) reads as text and so writes unquoted. Such a string
is written quoted: QA round 56, ``update --tags 1e3`` wrote the tag as ``1e3``, the number 1000 to
other tools. (PyYAML quotes what it would read as no string itself: ``.5``, ``yes``, ``1:20``, dates.)"""


@functools.lru_cache(maxsize=1)
def _dumper():
    """A :class:`yaml.SafeDumper` that also quotes the strings of :data:`_NOT_TEXT_TO_SOME_READER`."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def represent_str(dumper, data: str):
        if _NOT_TEXT_TO_SOME_READER.fullmatch(data):
            return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="'")
        return yaml.SafeDumper.represent_str(dumper, data)

    _Dumper.add_representer(str, represent_str)
    return _Dumper


def _scalar(value: Any) -> str:
    """One YAML scalar, safe in block and flow context, read back as the same value by YAML 1.1 and 1.2
    readers (:data:`_NOT_TEXT_TO_SOME_READER`)."""
    import yaml

    dumped = yaml.dump([value], Dumper=_dumper(), default_flow_style=True, allow_unicode=True, width=10**9)
    dumped = dumped.strip()
    assert dumped.startswith("[") and dumped.endswith("]")
    return dumped[1:-1]


_DATE_TIME_FORM = re.compile(r"""
    \s* \d{4} (?P<dash>-?) (?: (?P<week>[wW]) \d\d (?P=dash) \d | (?:\d\d|(?<=-)\d) (?P=dash) (?:\d\d|(?<=-)\d)
                            | (?P<ordinal>\d{3}) )  # day
    (?: (?P<sep>[Tt]|[ \t]+) \d\d? (?: (?P<colon>:?) \d\d (?: (?P=colon) (?P<seconds>\d\d) (?:\.\d*|,\d+)? )? )?  # time
        (?P<zone> [ \t]* (?: (?P<z>[Zz])
                            | [-+] (?P<offset_hours>\d\d|\d(?!\d)) (?: (?P<offset_colon>:?) (?P<offset_minutes>\d\d) )? ) )?  # zone
    )?""", re.VERBOSE)
"""The form of an ISO-8601 day or date and time as frontmatter writes it (the forms the index reads,
:func:`dreamdb.timeparse.parse_instant`), and of every YAML 1.1 timestamp (PyYAML's: a month, a day or an hour of
one digit, ``2026-8-18 1:00:00``, an offset of one, ``-5`` or ``+5:30``, spaces before the zone, ``10:00:00 -5``;
QA round 149-B F4): the day as a calendar date, an ordinal date or a week date, with dashes or without; the time's
separator (``T``, ``t`` or spaces), its colons or none, its seconds or none; its zone (``Z``, ``z``, an offset with a
colon, without one, or hours alone) and the spaces before it. :func:`_in_form` writes a new value in it."""


def _in_form(value: date, form: re.Match) -> str:
    """``value`` (a date, or a datetime naive or with its offset) written in the ``form`` of an old value
    (:data:`_DATE_TIME_FORM`): ``2026-W34-2``, ``2026-230T10:00Z``, ``20260818T100000Z``, ``2026-08-18 10:00``,
    ``2026-08-18T10:00:00-0700``. A time is written to the minute at least, to the second where the form has seconds
    (without a fraction); a month, day or hour of two digits (``2026-8-18 1:00:00``, a YAML timestamp, as ISO's). A time in UTC is written with the form's ``Z``, or ``Z`` where the form has an offset with a
    colon or of hours alone (``+02:00``, ``+02``: a YAML timestamp either way), ``+0000`` where it has one without a
    colon (``-0700``: text to YAML either way); another offset in the form's (``Z``'s: ``+02:00``, or ``+0200`` beside
    a time without colons), its hours of one digit where the form's are (``-5``, ``+5:30``: QA round 149-B F4), after
    the spaces the form has before its zone."""
    dash = form["dash"]
    if form["week"]:
        year, week, weekday = value.isocalendar()
        text = f"{year:04d}{dash}{form['week']}{week:02d}{dash}{weekday}"
    elif form["ordinal"]:
        text = f"{value.year:04d}{dash}{value.timetuple().tm_yday:03d}"
    else:
        text = f"{value.year:04d}{dash}{value.month:02d}{dash}{value.day:02d}"
    if form["sep"] is None or not isinstance(value, datetime):
        return text
    colon = form["colon"] if form["colon"] is not None else dash and ":"  # (an hour alone, T10Z: as the day)
    text += f"{form['sep']}{value.hour:02d}{colon}{value.minute:02d}"
    if form["seconds"]:
        text += f"{colon}{value.second:02d}"
    offset = value.utcoffset()
    if offset is None or form["zone"] is None:
        return text
    space = form["zone"][:len(form["zone"]) - len(form["zone"].lstrip(" \t"))]
    if not offset and (form["z"] or form["offset_colon"] != ""):
        return text + space + (form["z"] or "Z")
    minutes = int(offset.total_seconds()) // 60
    hours, minutes = divmod(abs(minutes), 60)
    sign = "-" if offset.total_seconds() < 0 else "+"
    # (hours of one digit where the form's are, -5 or +5:30, as YAML reads them; +1000 and +0530 keep two)
    hour = f"{hours:d}" if form["offset_hours"] and len(form["offset_hours"]) == 1 else f"{hours:02d}"
    if form["offset_minutes"] is None and not form["z"] and not minutes:  # (+02)
        return f"{text}{space}{sign}{hour}"
    sep = form["offset_colon"] if form["offset_minutes"] is not None else colon  # (Z, +02: as the time, +02:00, +0200)
    return f"{text}{space}{sign}{hour if sep else f'{hours:02d}'}{sep}{minutes:02d}"


def _timestamp(value: date, old_text: str) -> str:
    """A date or datetime as the plain YAML timestamp PyYAML reads back to the same value
    (``2026-08-18``, ``2026-08-18 10:00:00``, ``2026-08-18T10:00:00Z``), in the form of the old value when that was a
    timestamp (:func:`_in_form`: ``t`` or ``T`` or a space between date and time, ``Z`` or an offset, an offset's
    form; QA round 147-A F5), else with a ``T`` between date and time when the old value had one (a flow dump would
    write ``!!timestamp '…'``)."""
    if not isinstance(value, datetime):
        return value.isoformat()
    form = _DATE_TIME_FORM.match(old_text)
    if form and form["seconds"] and (form["zone"] is None) == (value.utcoffset() is None):
        return _in_form(value, form)
    sep = "T" if re.match(r"\d{4}-\d\d-\d\dT", old_text) or value.tzinfo else " "
    text = value.isoformat(sep=sep)
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _trailing_comment(line: str) -> str:
    """The `` # comment`` ending a one-line ``key: value`` (``""`` when none): the first `` #`` after
    which the line still reads as the same mapping (a ``#`` inside quotes is part of the value)."""
    import yaml

    body = line.rstrip("\r\n")
    if " #" not in body and "\t#" not in body:
        return ""
    try:
        whole = _load(body)
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
        return ""
    for m in re.finditer(r"[ \t]+#", body):
        try:
            if _load(body[:m.start()]) == whole:
                return body[m.start():]
        except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
            continue
    return ""


def _span_comments(lines: list[str]) -> list[str]:
    """The comments in a key's lines (:meth:`_Markdown.key_spans`), each as written (``# why a``): comment lines
    and comments ending a line, told from a ``#`` that is part of the value (in quotes, a block scalar's line) by
    the key's value being the same without them. ``[]`` when the lines do not read as YAML alone."""
    import yaml

    if not any("#" in ln for ln in lines):
        return []
    try:
        whole = _load("".join(lines))
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
        return []

    def same(j: int, replacement: list[str]) -> bool:
        try:
            return _load("".join(lines[:j] + replacement + lines[j + 1:])) == whole
        except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
            return False

    found: list[str] = []
    for j, line in enumerate(lines):
        body = line.rstrip("\r\n")
        if body.lstrip().startswith("#"):
            if same(j, []):
                found.append(body.strip())
            continue
        for m in re.finditer(r"[ \t]+#", body):
            if same(j, [body[:m.start()] + line[len(body):]]):
                found.append(body[m.start():].strip())
                break
    return found


def _refuse_dropped_comments(key: str, old: list[str], rendered: list[str]) -> None:
    """Raise WriteRefused when rewriting ``key``'s lines ``old`` as ``rendered`` would drop a comment of theirs
    (:func:`_span_comments`): a comment line or an item's comment in a block list, a comment in a value of several
    lines; a one-line key's trailing comment is kept (:func:`_render_key`). QA round 152-H F2: they were dropped
    in silence, where a comment line at the start of a line in the value refused the edit."""
    new = "".join(rendered)
    lost = [c for c in _span_comments(old) if c not in new]
    if lost:
        raise WriteRefused(f"The document's frontmatter has {'a comment' if len(lost) == 1 else 'comments'} in the"
                           f" value of {key} ({lost[0]!r}{', …' if len(lost) > 1 else ''}), which rewriting that"
                           " value would drop; nothing was written.",
                           hint=f"Make that edit by hand, or move the comments out of the value of {key} (to lines"
                                " of their own above the key), then retry.")


def _line_edit_obstacles(lines: list[str]) -> list[str]:
    """What in the frontmatter ``lines`` keeps a key's line edit from giving the mapping asked for, as the refusal
    of a whole rewrite says it: a comment line at the start of a line inside a key's value (it ends the lines
    dreamdb takes for the key), anchors and aliases, YAML tags, explicit ``?`` keys, a flow mapping (``[]`` where
    none of them is found)."""
    import yaml

    out: list[str] = []
    key = None
    for j, line in enumerate(lines):
        m = _KEY_RE.match(line)
        if m:
            key = _key_of(m)
        elif line.startswith("#") and key is not None:
            nxt = next((ln for ln in lines[j + 1:] if ln.strip() and not ln.startswith("#")), None)
            if nxt is not None and not _KEY_RE.match(nxt):
                out.append(f"a comment line at the start of a line inside the value of {key}")
                break
    kinds = set()
    with contextlib.suppress(yaml.YAMLError, RecursionError):
        for token in yaml.scan("".join(lines)):
            kinds.add(type(token))
    if kinds & {yaml.AnchorToken, yaml.AliasToken}:
        out.append("anchors and aliases")
    if yaml.TagToken in kinds:
        out.append("YAML tags (!!…)")
    if any(ln.lstrip().startswith("? ") or ln.strip() == "?" for ln in lines):
        out.append("explicit ? keys")
    if yaml.FlowMappingStartToken in kinds and any(ln.lstrip().startswith("{") for ln in lines):
        out.append("a flow mapping")
    return out


def _render_key(key: str, value: Any, old: list[str], newline: str) -> list[str]:
    """Render ``key: value`` as frontmatter lines, following the old lines' style; a one-line key
    keeps its trailing comment when its new value is one line too, and a quoted key its quotes and escapes
    (``"st\\x61tus": done``)."""
    # a value's own line breaks (a quoted scalar spanning lines) take the file's line ending too
    lines = [ln.replace("\r\n", "\n").replace("\n", newline) for ln in _render_value(key, value, old, newline)]
    m = _KEY_RE.match(old[0]) if old else None
    written = m and (m.group("dq") or m.group("sq"))
    if written and lines and lines[0].startswith(f"{key}:"):
        lines[0] = written + lines[0][len(key):]
    if len(old) == 1 and len(lines) == 1:
        comment = _trailing_comment(old[0])
        if comment:
            lines = [lines[0][:-len(newline)] + comment + newline]
    return lines


def _render_value(key: str, value: Any, old: list[str], newline: str) -> list[str]:
    first = old[0] if old else ""
    after_colon = first.split(":", 1)[1].strip() if ":" in first else ""
    if isinstance(value, date):
        return [f"{key}: {_timestamp(value, after_colon)}{newline}"]
    if isinstance(value, list):
        if old and (after_colon.startswith("[") or not old[1:]) and after_colon:
            quote_json = '"' in after_colon
            items = [json.dumps(v, ensure_ascii=False) if quote_json and isinstance(v, str) else _scalar(v)
                     for v in value]
            return [f"{key}: [{', '.join(items)}]{newline}"]
        if not value:
            return [f"{key}: []{newline}"]
        indent = "  "
        for line in old[1:]:
            m = re.match(r"^(\s*)- ", line)
            if m:
                indent = m.group(1)
                break
        return [f"{key}:{newline}"] + [f"{indent}- {_scalar(v)}{newline}" for v in value]
    if isinstance(value, str) and value.strip():
        cont_indent = "  "
        for line in old[1:]:
            if line.strip():
                cont_indent = re.match(r"^(\s*)", line).group(1) or "  "
                break
        if "\n" in value and not value.endswith("\n\n"):
            # Multi-line text: a literal block keeps it readable (| keeps one final newline, |- none).
            chomp = "|" if value.endswith("\n") else "|-"
            body = value[:-1] if value.endswith("\n") else value
            return [f"{key}: {chomp}{newline}"] + [
                f"{cont_indent}{ln}{newline}" if ln else newline for ln in body.split("\n")]
        if (after_colon in (">-", ">") and "\n" not in value and value == value.strip()
                and "  " not in value):
            lines = _wrap(value, 80 - len(cont_indent))
            return [f"{key}: >-{newline}"] + [f"{cont_indent}{ln}{newline}" for ln in lines]
    if isinstance(value, str) and old and after_colon and after_colon[:1] not in ('"', "'") \
            and _DATE_TIME_FORM.fullmatch(value) and _plain_reads_as(key, value, newline):
        # (a date and time that YAML reads as text, 2026-08-18T10:00Z, was plain: it stays plain, where _scalar's flow
        # dump quotes a text holding a colon, QA round 147-A F5)
        return [f"{key}: {value}{newline}"]
    if isinstance(value, str) and old and after_colon[:1] in ('"', "'") and "\n" not in value:
        if after_colon[:1] == '"':
            return [f"{key}: {json.dumps(value, ensure_ascii=False)}{newline}"]
        if not any(ord(c) < 32 for c in value):
            return [f"{key}: '" + value.replace("'", "''") + f"'{newline}"]
    return [f"{key}: {_scalar(value)}{newline}"]


def _plain_reads_as(key: str, value: str, newline: str) -> bool:
    """Whether ``key: value``, ``value`` written plain (unquoted), reads back as ``value``, a string."""
    import yaml

    try:
        return (_load(f"{key}: {value}{newline}") or {}).get(key) == value
    except (yaml.YAMLError, ValueError, OverflowError, AttributeError):
        return False


def _wrap(text: str, width: int) -> list[str]:
    words = text.split(" ")
    lines: list[str] = []
    current = ""
    for word in words:
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    lines.append(current)
    return lines


def _apply_frontmatter(doc: _Markdown, changes: dict[str, Any]) -> None:
    """Set top-level frontmatter keys, editing only their lines (see module doc); a key whose value is
    :data:`REMOVE_KEY` loses its lines."""
    import yaml

    original = doc.frontmatter()
    expected = dict(original)
    expected.update(changes)
    for key in [k for k, v in changes.items() if v is REMOVE_KEY]:
        del expected[key]
    _refuse_unreadable_size(expected, changes)
    if not doc.has_fm:
        doc.has_fm = True
        doc.open_line = "---" + doc.newline
        doc.close_line = "---" + doc.newline
        doc.fm_lines = []
    original_lines = list(doc.fm_lines)
    lines = list(doc.fm_lines)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += doc.newline
    doc.fm_lines = lines
    for key, value in changes.items():
        spans = doc.key_spans()
        start, end = spans.get(key, (None, None))
        if value is REMOVE_KEY:
            if start is not None:  # (a key the line editor does not see: the check below re-dumps the whole)
                del doc.fm_lines[start:end]
            continue
        rendered = _render_key(key, value, doc.fm_lines[start:end] if start is not None else [], doc.newline)
        try:
            candidate = _load("".join(rendered))
        except yaml.YAMLError:
            candidate = None
        if not isinstance(candidate, dict) or candidate.get(key) != value:
            rendered = [f"{key}: {_scalar(value)}{doc.newline}"]
        if start is not None:
            _refuse_dropped_comments(key, doc.fm_lines[start:end], rendered)
            doc.fm_lines[start:end] = rendered
        else:
            insert_at = len(doc.fm_lines)
            while insert_at > 0 and not doc.fm_lines[insert_at - 1].strip():
                insert_at -= 1
            doc.fm_lines[insert_at:insert_at] = rendered
    try:
        got = _load("".join(doc.fm_lines)) or {}
    except yaml.YAMLError:
        got = None
    # (a key the original already repeats is left as written; the line edit must not repeat another)
    if got != expected or not set(_repeated_keys("".join(doc.fm_lines))) <= set(_repeated_keys("".join(original_lines))):
        # The line edit did not produce the intended mapping: re-dump whole, unless that would drop comments.
        if any(ln.lstrip().startswith("#") or _trailing_comment(ln) for ln in original_lines):
            # (the cause named: QA round 152-H F2 was told of anchors and explicit ? keys it did not have)
            obstacles = _line_edit_obstacles(original_lines)
            raise WriteRefused("The document's frontmatter cannot be edited line by line ("
                               + (", ".join(obstacles) if obstacles else "YAML written in a way dreamdb cannot edit"
                                  " key by key") + "), and rewriting it whole would drop its comments; nothing was"
                               " written.",
                               hint="Make that edit by hand, or move the comments out of the values (to lines of"
                                    " their own between keys) first." if obstacles[:1] and "comment" in obstacles[0]
                               else "Make that edit by hand, or remove the comments first.")
        repeated = _repeated_keys("".join(original_lines))
        if repeated:  # (a whole rewrite keeps the last of each, as YAML reads it: QA round 70 B-M1)
            raise WriteRefused(f"The document's frontmatter writes {', '.join(repeated)} more than once, and "
                               "rewriting it whole would keep only the last; nothing was written.",
                               hint="Keep one of each by hand, then retry.")
        dumped = yaml.dump(expected, Dumper=_dumper(), allow_unicode=True, sort_keys=False, width=10**9)
        moved = _rewritten_scalars("".join(original_lines), dumped, skip=set(changes))
        if moved:  # (an octal 010 dumped as 8: QA round 70 B-M1)
            key, before, after = moved
            raise WriteRefused(f"The document's frontmatter uses YAML that dreamdb cannot edit line by line, and "
                               f"rewriting it whole would change how {key} is written ({before} → {after}); "
                               "nothing was written.",
                               hint="Make that edit by hand, or write that value as quoted text first.")
        doc.fm_lines = [ln + doc.newline for ln in dumped.splitlines()]
        if (_load("".join(doc.fm_lines)) or {}) != expected:  # pragma: no cover
            raise WriteRefused("Internal error: could not write the frontmatter faithfully; nothing written.")


def _refuse_unreadable_size(expected: dict, changes: dict[str, Any]) -> None:
    """Raise UsageError when the frontmatter ``expected`` (what ``changes`` would make it) holds more values than a
    sync reads (:func:`dreamdb.vault.frontmatter.check_size`, counting as the reader does): the file was written, and
    each sync then indexed its body only, without its title, tags or dates, and the next update refused it as too
    large (QA round 149-F F3: ``update --tags`` of 10,001 tags said Updated)."""
    from dreamdb.vault.frontmatter import MAX_VALUES, TooLarge, check_size

    try:
        check_size(expected)
    except TooLarge:
        tags = changes.get("tags")
        # (the hint names what holds most of them: the tags given, or the frontmatter's other keys, which a --status
        # or a few tags tipped over; QA round 149-I F2: "Give fewer tags" was said to an update --status)
        many_tags = isinstance(tags, list) and len(tags) > MAX_VALUES // 2
        given = f"The {len(tags):,} tags given" if isinstance(tags, list) else "This change"
        raise UsageError(f"{given} would make the document's frontmatter hold more than {MAX_VALUES:,} values, more"
                         " than sync reads (it would index the note's body only, without its title, tags or dates);"
                         " nothing was changed.",
                         hint="Give fewer tags (a note's tags are a few words); keep long lists in the note's body"
                              " (--append)." if many_tags else
                         "Its frontmatter's other keys hold most of them: move their long lists into the note's"
                         " body (metadata is tens of values), then retry.") from None


def _top_nodes(text: str) -> list | None:
    """``(key node, value node)`` of a YAML mapping's top level (``None`` when ``text`` is no mapping); a
    double-quoted scalar's surrogate-pair escape read as its code point, as the indexer reads it
    (:func:`dreamdb.vault.frontmatter.joined_surrogates`).

    Composed by the loader the indexer reads a frontmatter with (:func:`dreamdb.vault.frontmatter.yaml_loader`,
    libyaml's parser where PyYAML has it, which the edit's own reading of the frontmatter already passed): PyYAML's
    pure-Python parser took 3.4 s on a 2 MB value against 0.03 s, four times an ``update`` (QA round 157-E F1: 12–21 s
    an edit of such a note)."""
    import yaml

    from dreamdb.vault.frontmatter import joined_surrogates, yaml_loader

    try:
        node = yaml.compose(joined_surrogates(text), Loader=yaml_loader())
    except yaml.YAMLError:
        return None
    return node.value if isinstance(node, yaml.MappingNode) else None


def _repeated_keys(text: str) -> list[str]:
    """The top-level keys a YAML mapping names more than once, in order (``[]`` when none, or no mapping)."""
    import yaml

    seen: set[str] = set()
    out: list[str] = []
    for k, _v in _top_nodes(text) or ():
        if isinstance(k, yaml.ScalarNode):
            if k.value in seen and k.value not in out:
                out.append(k.value)
            seen.add(k.value)
    return out


def _scalar_texts(node) -> list[str]:
    """The text of every scalar under a YAML node, in document order (walked without recursion; an alias is
    the node it names, each node visited once)."""
    import yaml

    out, stack, seen = [], [node], set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.ScalarNode):
            out.append(n.value)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(reversed(n.value))
        elif isinstance(n, yaml.MappingNode):
            stack.extend(x for pair in reversed(n.value) for x in reversed(pair))
    return out


def _rewritten_scalars(before: str, after: str, *, skip: set[str]) -> tuple[str, str, str] | None:
    """The first top-level key not in ``skip`` whose scalars a whole rewrite writes with other text
    (``version: 010`` dumped as ``8``): ``(key, old text, new text)``, else ``None``. Quoting alone is not a
    change (``'12:30'`` for ``12:30``: the same text, now read as text by every YAML reader)."""
    import yaml

    new = {k.value: v for k, v in _top_nodes(after) or () if isinstance(k, yaml.ScalarNode)}
    for k, v in _top_nodes(before) or ():
        if not isinstance(k, yaml.ScalarNode) or k.value in skip or k.value not in new:
            continue
        old_texts, new_texts = _scalar_texts(v), _scalar_texts(new[k.value])
        if old_texts != new_texts:
            diff = next(((a, b) for a, b in zip(old_texts, new_texts) if a != b),
                        (" ".join(old_texts), " ".join(new_texts)))
            return k.value, diff[0], diff[1]
    return None


def _updated_value(old: Any, now: datetime, *, plain: bool = False) -> Any:
    """The new value of an ``updated``/``updated_at`` key that was ``old``, for the clock ``now``, of ``old``'s type
    and in its form: a time with a zone (``Z`` or an offset) is ``now`` with its offset (UTC written in the value's
    ``Z``); a naive one is ``now``'s UTC wall time, as the index reads a time without a zone as UTC (QA round 145-E
    F1: the local wall time was written, so in Los Angeles a note updated just now was dated 8 h ahead and ``--since
    -1h`` missed it); a date is ``now``'s calendar date in its own zone, as :func:`~dreamdb.writes.changelog.remember`
    dates an entry and ``today`` reads it. A naive ``now`` is UTC, and written so where the value has an offset (QA
    round 146-F F1: a naive ``now`` wrote ``2026-09-01T23:30:00`` over ``…+02:00``, the value's form lost for good).
    A string (a quoted value, or a form YAML reads as no timestamp: ``20260818T100000Z``, ``2026-08-18T10:00Z``,
    ``2026-W34-2``) is read alike (QA round 146-I F5) and written in its own form (:func:`_in_form`; QA round 147-A
    F5: every such form was written ``2026-12-07T02:02:34+00:00``, quoted where it was not, its ``Z`` lost). A day YAML
    reads as a number (``20260818``, the ordinal ``2026230``; the index reads its digits) is today's in its form, a
    number (QA round 148-B F2).

    ``plain``: ``old`` is written plain (unquoted, :func:`_written_plain`), and the new value is too: a string that YAML
    would read as a timestamp written plain is that timestamp (:func:`_read_plain`; QA round 148-B F3:
    ``2026-08-18t10:00:00z``, text to YAML for its ``z``, became ``'2026-12-07t01:07:19-03:30'``, quoted to stay
    text, where the README keeps an unquoted value unquoted), so ``old``'s form and quoting are kept, not its type."""
    from dreamdb.timeparse import as_utc, parse_date_value, parse_instant

    if isinstance(old, datetime):
        if old.tzinfo:
            return _aware(now).replace(microsecond=0)
        return as_utc(now).replace(microsecond=0, tzinfo=None)
    if isinstance(old, date):
        return now.date()
    if isinstance(old, int) and not isinstance(old, bool):
        # a day YAML reads as a number (20260818, the ordinal 2026230), as the index reads it: today in its form, a
        # number still (QA round 148-B F2: an int fell through to today's ISO date, written quoted, '2026-12-07')
        form = _DATE_TIME_FORM.fullmatch(str(old))
        if form and form["sep"] is None and parse_date_value(str(old)) is not None:
            return int(_in_form(now.date(), form))
        return _today(now, plain)
    form = _DATE_TIME_FORM.fullmatch(old) if isinstance(old, str) else None
    if isinstance(old, str) and _is_date_time(old):
        if parse_instant(old).tzinfo is None:  # (no zone: read as UTC, as the unquoted form)
            new = as_utc(now).replace(microsecond=0, tzinfo=None)
        else:  # (a naive now is UTC)
            new = _aware(now).replace(microsecond=0)
        if form and form["sep"] is not None:
            text = _in_form(new, form)
        else:
            text = new.isoformat()
            text = text[:-6] + "Z" if text.endswith("+00:00") else text
        return _read_plain(text) if plain else text
    if form:  # (a day in its form: 2026-W34-2, 2026-230, 20260818)
        text = _in_form(now.date(), form)
        return _read_plain(text) if plain else text
    return _today(now, plain)


def _today(now: datetime, plain: bool) -> Any:
    """Today's date for an ``updated`` value of no form :func:`_updated_value` keeps (``2026-08-18Z``, ``2026-08-18
    UTC``, an epoch ``1755475200``): ISO text, or, for a value written plain, the YAML date it reads as written plain,
    so it is unquoted as the value was (QA round 148-G F1: each became ``'2026-12-07'``, quoted)."""
    text = now.date().isoformat()
    return _read_plain(text) if plain else text


def _read_plain(text: str) -> Any:
    """A new ``updated`` value ``text`` (a date, or a date and time) as YAML reads it written plain (unquoted): the
    timestamp it reads as (``2026-12-07t01:07:19-03:30``, ``2026-12-07T01:07:19Z``: a ``datetime``) when the index
    dates that as it dates ``text``, else ``text`` itself (text to YAML, ``2026-12-07t01:07:19z``; or, read as
    something else, written quoted)."""
    import yaml

    from dreamdb.vault.parse import date_value

    try:
        value = (_load(f"updated: {text}\n") or {}).get("updated")
    except (yaml.YAMLError, ValueError, OverflowError, AttributeError):
        return text
    if isinstance(value, date) and date_value(value) is not None and date_value(value) == date_value(text):
        return value
    return text


def _written_plain(doc: _Markdown, key: str) -> bool:
    """Whether the top-level ``key`` of ``doc``'s frontmatter has a date written plain on its own line
    (``updated: 2026-08-18t10:00:00z``: unquoted, untagged, starting with a digit), not quoted (``'…'``, ``"…"``),
    tagged or on the next lines."""
    start, _end = doc.key_spans().get(key, (None, None))
    if start is None:
        return False
    return doc.fm_lines[start].split(":", 1)[1].strip()[:1].isdigit()


def _aware(now: datetime) -> datetime:
    """``now`` as it is when it has an offset, else as UTC (:func:`dreamdb.timeparse.as_utc`: a naive time is UTC)."""
    from dreamdb.timeparse import as_utc

    return now if now.tzinfo is not None and now.utcoffset() is not None else as_utc(now)


def _is_date_time(text: str) -> bool:
    """Whether a frontmatter string is a date with a time of day, as the index reads it (any ISO-8601 form, the
    letters in any case, a space for ``T``): QA round 145-I F2, ``"2026-08-18t10:00:00z"`` (read as an instant since
    145-E F5) and ``"2026-08-18 10:00:00"`` were taken for a day alone by ``"T" in old``, and an update wrote the
    calendar date there, the time lost (the next UTC day in a zone ahead of UTC)."""
    from dreamdb.timeparse import DAY_FORMS, parse_date_value

    text = text.strip()
    return parse_date_value(text) is not None and not DAY_FORMS.match(text.lower())


def _load_markdown(path: Path) -> _Markdown:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8_refusal(path.name, raw) from exc
    return _Markdown(text)


def _clean_tags(tags: Sequence[str] | str) -> list[str]:
    """Tags as given (a list, or one comma-separated string): stripped, empty ones and repeats dropped, an item of
    ``#hashtags`` separated by spaces read as those tags (:func:`dreamdb.vault.tags.split_hashtags`: ``"#alpha
    #beta"`` is ``#alpha`` and ``#beta``, as the index reads it in a note).

    A repeat is a tag the index reads as one before it (:func:`dreamdb.vault.tags.tag_key`: ``a``, ``A`` and
    ``#a`` are one tag); the first spelling is kept, in its place (QA round 72-A: ``--tags "a, a, A, #a"`` wrote
    ``[a, A, '#a']``).

    A tag is checked as the other one-line fields of a write are (:func:`dreamdb.writes.checks._refused_char`):
    it held a bidirectional override (U+202E) that ``--description`` refused (QA round 54 L6), and is shown
    in recall and the prompt hook's block as they are.

    Raises:
        UsageError: a tag is not valid UTF-8; a tag holds a newline, tab, NUL or other control character, a bidirectional control or an
            invisible character such as a Unicode tag; a tag is nothing once :func:`dreamdb.vault.tags.clean_tag`
            has taken its leading ``#`` and facet prefix off (``#``, ``:``, ``a:``); ``tags`` is not text; ``tags``
            holds only commas and blanks (``","``, ``[" "]``: an empty string or list clears the tags).
    """
    if isinstance(tags, str):
        if tags and not tags.strip():  # (QA round 77 G4: a space, or a no-break one, cleared the tags as "" does)
            raise UsageError(f"The tags {tags!r} are only blank characters; nothing was changed.",
                             hint="Give the tags' names (e.g. --tags \"recall, storage\"), or --tags \"\" to clear them.")
        items = tags.split(",")
    elif isinstance(tags, (list, tuple)) and all(isinstance(t, (str, int, float)) and not isinstance(t, bool)
                                                 for t in tags):
        items = [str(t) for t in tags]
    elif isinstance(tags, (list, tuple)):  # (QA round 150-B C2: the whole list was quoted, not the item at fault)
        at, bad = next((i, t) for i, t in enumerate(tags) if isinstance(t, bool) or not isinstance(t, (str, int, float)))
        raise UsageError(f"tags must be strings or numbers: item {at} of the {type(tags).__name__} is "
                         f"{type(bad).__name__} {_short_repr(bad)}; nothing was changed.")
    else:
        raise UsageError(f"tags must be a comma-separated string or a list (or tuple) of strings or numbers, got"
                         f" {type(tags).__name__} {_short_repr(tags)}.")
    _require_utf8(tag=items)  # (before a lone surrogate reads as "names no tag": QA round 126-A F11c)
    for item in items:
        at = _refused_char(item)
        if at is not None:
            raise UsageError(f"The tag {item!r} must be one line of text, without a newline or another control"
                             " character, bidirectional overrides or invisible characters such as Unicode tags"
                             f" (found {_found(item, at)}); nothing was changed.",
                             hint="Tags are one line each, separated by commas (e.g. --tags \"recall, storage\").")
    out: list[str] = []
    keys: set[str] = set()
    for item in split_hashtags(items):  # ("#alpha #beta": two tags, as the index reads them; QA round 150-A F5)
        tag = item.strip()
        if tag and not clean_tag(tag):  # (QA round 59 L3: '#' was saved, and indexed as no tag)
            raise UsageError(f"The tag {tag!r} names no tag: {no_tag_reason(tag)}; nothing was changed.",
                             hint="Give the tag's name (e.g. --tags \"recall, storage\").")
        if tag and not any(unicodedata.category(c)[0] in "LNS" for c in clean_tag(tag)):  # (QA 76 F10: "，", "[]", U+200B)
            raise UsageError(f"The tag {tag!r} names no tag: it holds no letter, digit or symbol (only punctuation or"
                             " invisible characters); nothing was changed.",
                             hint="Give the tag's name (e.g. --tags \"recall, storage\"); --tags \"\" clears the tags.")
        key = tag_key(tag) if tag else ""
        if key and key not in keys:
            keys.add(key)
            out.append(tag)
    if not out and (tags.strip() if isinstance(tags, str) else items):  # (QA round 73: "," cleared the tags)
        raise UsageError(f"The tags {tags!r} name no tag (only commas and blanks); nothing was changed.",
                         hint="Give the tags' names (e.g. --tags \"recall, storage\"), or --tags \"\" to clear them.")
    return out


def _tag_keys(tags: list[str]) -> list[str]:
    """``tags`` as the index reads them (:func:`dreamdb.vault.tags.tag_key`: ``Process``, ``#process`` and
    ``topic:process`` are the tag ``process``), in order, each once."""
    keys: list[str] = []
    seen: set[str] = set()  # (beside the list: a membership test on it made 16,000 tags take 4.8 s, QA round 149-F F3)
    for tag in tags:
        key = tag_key(tag)
        if key not in seen:
            seen.add(key)
            keys.append(key)
    return keys


def _same_value(key: str, current: Any, wanted: Any) -> bool:
    """Whether the frontmatter value ``current`` already is ``wanted`` (a flag as the indexer reads it)."""
    from dreamdb.vault.parse import frontmatter_bool

    if key == "pinned":
        return frontmatter_bool(current) == bool(wanted)
    if key == "tags":  # a comma string or a list, read alike (QA round 39: "alpha, beta" was rewritten as a list)
        if current is None:  # no tags key, or an empty one: no tags already (QA round 46 L8)
            return wanted == []
        from dreamdb.vault.parse import normalize_tags

        # read by the indexer's own function, whatever their form: "Process, #release" on [process, release] rewrote
        # the file and dated the note for the tags it had (QA round 65 L4); a YAML mapping or set is its keys (101-A
        # F6); "#alpha\t#beta", which the index reads as alpha and beta, was read by the writer's checks of new tags,
        # which refuse a tab, and rewritten (QA round 151-A F6). A new order is a change (recall shows them in order)
        return _tag_keys(normalize_tags(current)) == _tag_keys(wanted)
    if isinstance(current, str) and isinstance(wanted, str):  # a folded or literal block ends in a newline
        return current.strip() == wanted.strip()
    return type(current) is type(wanted) and current == wanted
