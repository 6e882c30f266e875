"""Turn vault files into documents (SPEC §1): markdown files, memory sections, changelog entries.

Everything here is pure: text in, :class:`Document` objects and warnings out.
Malformed input never raises; the document is built from what can be read and
one warning says what was wrong.
"""

from __future__ import annotations

import codecs
import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime

from dreamdb.output import clip
from dreamdb.timeparse import DAY_FORMS, clamped_utc, parse_date_value
from dreamdb.vault.literal_blocks import block_opening, closes_block
from dreamdb.vault.encoding import wide_unicode_codec
from dreamdb.vault.tags import clean_tag, no_tag_reason, split_hashtags, status_text
from dreamdb.vault.fences import cr_line_ends, find_block
from dreamdb.vault.frontmatter import split_frontmatter

DATE_KEYS = ("updated_at", "updated", "date", "created", "created_at")
"""Frontmatter date keys, most specific first (SPEC §1)."""

_REF_PREFIXES = ("commit:", "file:", "knowledge:", "feature:", "task:", "url:")


@dataclass
class Document:
    """One searchable unit of the vault.

    Attributes:
        type: document type (SPEC §1 table), e.g. ``knowledge``.
        slug: identity within the type; ``doc_id`` is ``type/slug``.
        source_path: vault-relative POSIX path of the file it came from.
        ordinal: position inside the file (memory section, changelog entry), else 0.
        title, description, body: text fields (BM25F fields with ``tags``).
        tags: tags with facet prefixes such as ``topic:`` stripped.
        date: ISO-8601 date or instant string, or ``None`` when unknown.
        status: lowercased frontmatter ``status`` or ``None``.
        level: importance 1–3 (SPEC §5; a filter, never a ranking signal).
        pinned: frontmatter ``pinned: true``.
        confidence: frontmatter ``confidence`` in [0, 1], or ``None``.
        expires: ISO date/instant from which on the document leaves recall (a date alone: from 00:00 UTC of the
            next day), or ``None``.
        supersedes: changelog id this entry replaces (``changelog/<slug>``), or ``None``.
        identity_boost: whether slug/title earn the exact-identity boost (not for changelog).
    """

    type: str
    slug: str
    source_path: str
    ordinal: int = 0
    title: str = ""
    description: str = ""
    body: str = ""
    tags: list[str] = field(default_factory=list)
    date: str | None = None
    status: str | None = None
    level: int = 2
    pinned: bool = False
    confidence: float | None = None
    expires: str | None = None
    supersedes: str | None = None
    identity_boost: bool = True

    @property
    def doc_id(self) -> str:
        """``type/slug``: the document's identity."""
        return f"{self.type}/{self.slug}"


def slugify(text: str) -> str:
    """Lowercase ASCII-ish slug: letters/digits joined by ``-`` (Turkish letters kept); ``section`` for a text
    without any (``🚀``, ``...``)."""
    return _slug_or_empty(text) or "section"


def _slug_or_empty(text: str) -> str:
    """:func:`slugify`, but ``""`` for a text without letters or digits."""
    text = unicodedata.normalize("NFC", text).replace("İ", "i").lower()
    text = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE).strip("-_")
    return re.sub(r"-{2,}", "-", text)


def _as_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):  # YAML true/false: written lowercase in the file, so indexed lowercase
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return " ".join(_as_text(v) for v in value)
    if isinstance(value, dict):
        return " ".join(_as_text(v) for v in value.values())
    if isinstance(value, (set, frozenset)):  # (!!set: its items in a stable order, not Python's repr; 144-I F5)
        return " ".join(sorted(map(_as_text, value)))
    if isinstance(value, (bytes, bytearray)):  # YAML !!binary: its text when it is UTF-8, else none (not b'…')
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return ""
    return str(value)


def frontmatter_unread(warning: str, rel_path: str) -> str | None:
    """What :func:`parse_markdown`'s ``warning`` on ``rel_path`` says when it is one of a frontmatter block it could not
    read (its title, dates, tags and flags lost: bad YAML, a merge conflict, too large, not closed), without the path;
    else ``None``. The sync keeps these (``meta`` ``frontmatter_unread``) for ``status`` and recall's notes, since the
    file, unchanged, is not read again (QA round 119-B F2)."""
    prefix = f"{rel_path}: frontmatter "
    if warning.startswith(prefix) and any(tail in warning for tail in _UNREAD_TAILS):
        return warning[len(rel_path) + 2:]
    return None


_UNREAD_TAILS = ("; indexed the body only", "; indexed the whole file as text", "; indexed the sections only",
                 "; indexed every section of the file")
"""How :func:`parse_markdown` and :func:`parse_memory` end a warning of a frontmatter they could not read (a memory
file's too: QA round 121-A F6, its sections' dates lost without a note)."""


def _collection_kind(value) -> str | None:
    """``a list``, ``a mapping``, ``a set`` or ``binary data`` (``!!binary`` that is no UTF-8) for a frontmatter value
    that is no scalar, for a warning; ``None`` for a scalar."""
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (set, frozenset)):
        return "a set"
    if isinstance(value, (bytes, bytearray)) and not _as_text(value):
        return "binary data"
    return None


def _is_not(value, wanted: str) -> str:
    """How a warning says a frontmatter value is not ``wanted`` (``a date``, ``true or false``): a list, a mapping, a
    set or binary data by its kind (``is a list, not a date``), since its items joined as its text is read would quote
    a value it is not (QA round 144-F F1: ``confidence: [0.5]`` was said as ``'0.5' is not a number``); anything else
    quoted as written, cut at 40 characters (``'maybe' is not true or false``), not as Python's repr."""
    kind = _collection_kind(value)
    return f"is {kind}, not {wanted}" if kind else f"{clip(_as_text(value), 40)!r} is not {wanted}"


def _written(value) -> bool:
    """Whether a frontmatter text (a title, a description) is written at all: a value YAML reads as ``0`` or ``false``
    is (it is indexed as ``0``, ``false``); nothing, an empty text and an empty list or mapping are not, and give way
    to the next key (``summary``, the file name)."""
    return value not in (None, "") and bool(value or _collection_kind(value) is None)


def _not_text(value) -> str | None:
    """How a warning says a frontmatter text (a title, a description) that is a list, a mapping, a set or binary data
    is read (:func:`_as_text`): ``is a mapping, not text; its values joined`` (its keys dropped), ``is a list, not
    text; its items joined``, ``is binary data, not text; ignored``; ``None`` for a scalar. QA round 144-I F5: a
    description so written was indexed without a word, and a title mapping was said to have "its items joined"."""
    kind = _collection_kind(value)
    if kind is None:
        return None
    read = {"a mapping": "its values joined", "binary data": "ignored"}.get(kind, "its items joined")
    return f"is {kind}, not text; {read}"


def normalize_tags(value) -> list[str]:
    """Tags from a list or a comma string, facet prefixes (``topic:x`` → ``x``) stripped, order kept, no duplicates.

    A mapping's keys are its tags: YAML writes a set (``!!set {a, b}``, read as a Python set, its items sorted;
    ``? a`` lines) as a mapping with null values, and ``{backend: true, draft: false}`` as flags, whose false ones
    (``false``, ``0``) are left out (QA round 99-B F5: the values were read, so ``{backend: 1}`` was the tag ``1``)."""
    out: list[str] = []
    seen: set[str] = set()  # (beside the list: a membership test on it made 64,000 tags take 25 s, QA round 149-F F2)
    for item in _tag_items(value):
        tag = clean_tag(item)
        if tag and tag not in seen:
            seen.add(tag)
            out.append(tag)
    return out


def _tag_items(value) -> list[str]:
    """The frontmatter ``tags`` value's items as written, as text (see :func:`normalize_tags`)."""
    if value is None:
        return []
    if isinstance(value, dict):
        # (a flag off: false, or 0 as YAML writes it too; QA round 101-A F7: {b: 0} was the tag b)
        items = [key for key, on in value.items() if not (isinstance(on, (bool, int, float)) and not on)]
    elif isinstance(value, (set, frozenset)):  # (!!set: its items, in a stable order)
        items = sorted(value, key=_as_text)
    else:
        items = value if isinstance(value, (list, tuple)) else _as_text(value).split(",")  # (tags: true → [true])
    return split_hashtags(_as_text(item) for item in items)  # ("#alpha #beta": two tags, QA round 150-A F5)


def mapping_tag_items(value) -> list[str]:
    """The items of a frontmatter ``tags`` list that are mappings, other than a facet written with a space
    (``- topic: recall``, one key and a value that names a tag, read as ``topic:recall`` is), each as
    ``{key: value, …} → 'tag'``, for a warning: their values are read as one tag (``- name: rust`` over
    ``level: 3`` is the tag ``rust 3``), as a ``tags`` mapping whose values are no flags is warned of."""
    if not isinstance(value, (list, tuple)):
        return []
    out = []
    for item in value:
        if not isinstance(item, dict) or (len(item) == 1 and _collection_kind(next(iter(item.values()))) is None
                                          and clean_tag(_as_text(item))):
            continue
        written = ", ".join(f"{_as_text(k)}:" + (f" {_as_text(v)}" if _as_text(v) else "") for k, v in item.items())
        written = clip(written, 60)
        tag = clean_tag(_as_text(item))
        out.append(f"{{{written}}} → {repr(tag) if tag else 'no tag'}")
    return out


def nameless_tags(value) -> list[str]:
    """The items of a frontmatter ``tags`` value that name no tag once :func:`dreamdb.vault.tags.clean_tag` has taken
    a leading ``#`` and a facet prefix off (``"#"``, ``"topic:"``), stripped: they are left out of the tags."""
    return [item.strip() for item in _tag_items(value) if item.strip() and not clean_tag(item)]


def date_value(value) -> str | None:
    """Normalise a frontmatter or changelog date (``date``, ``datetime`` or string) to an ISO string, else ``None``:
    a date alone as ``YYYY-MM-DD``, a date-time in UTC (``…Z``; one without an offset is read as UTC), quoted or
    not. A string is read in the ISO-8601 forms ``--now`` takes (:func:`dreamdb.timeparse.parse_instant`: a day as
    ``2026-08-18``, ``20260818``, ``2026-230`` or ``2026-W34-2``, with a time or not, letters in any case; a YAML 1.1
    timestamp, ``"2026-08-18 10:00:00 -5"``, as the instant YAML reads unquoted); a valid day followed by no valid
    time of day (``T25:00``) is that day alone."""
    if isinstance(value, (bytes, bytearray)):  # YAML !!binary: its text, as everywhere (QA round 118-B F9)
        value = _as_text(value)
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return clamped_utc(value).isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (bool, float, list, tuple, dict, set)):
        return None
    text = str(value).strip()
    # the forms --now takes (timeparse.parse_instant, one parser for both: QA round 145-E F5): a day in any ISO-8601
    # form, 20261201 (which YAML reads as a number), the ordinal 2026-335, the week date 2026-W49-1 (QA round
    # 114-B F10), each with a time or not (20261201T120000Z), letters in any case
    when = parse_date_value(text)
    if when is None:  # a valid day with a time that is none (T25:00): the day alone
        calendar = re.match(r"\d{4}-\d{2}-\d{2}", text)
        day = text[:10] if calendar else re.split(r"[Tt ]", text, maxsplit=1)[0]
        if day == text or not DAY_FORMS.match(day.lower()):
            return None
        day_start = parse_date_value(day)  # (2026-13-45 has the shape of a date but is none)
        return None if day_start is None else day_start.date().isoformat()
    if DAY_FORMS.match(text.lower()):
        return when.date().isoformat()
    # in UTC, as an unquoted date-time YAML reads as a datetime (QA round 80-A F5: a quoted one kept its offset)
    return when.isoformat().replace("+00:00", "Z")


def _date_warnings(rel_path: str, meta: dict, keys) -> list[str]:
    """One line per frontmatter date among ``keys`` that :func:`date_value` cannot read (it is ignored), or whose
    time of day it cannot (its date alone is used), each starting with ``rel_path``; a note's and the memory file's
    alike (QA round 145-E F3: the memory file's were dropped without a word)."""
    warnings = []
    for key in keys:
        value = meta.get(key)
        if value in (None, ""):  # (none given: QA round 148-H F1, "" was "a date followed by no valid time of day")
            continue
        if date_value(value) is None:
            # (not Python's repr: QA rounds 114-B F10, 118-B F9)
            warnings.append(f"{rel_path}: frontmatter {key} {_is_not(value, 'a date')} (YYYY-MM-DD…); ignored")
        elif isinstance(value, str) and parse_date_value(value) is None:  # (a day with no valid time: 2026230T25)
            warnings.append(f"{rel_path}: frontmatter {key} {clip(value.strip(), 40)!r} is a date followed by no valid "
                            "time of day; its date alone is used")
    return warnings


def _first_date(meta: dict) -> str | None:
    for key in DATE_KEYS:
        d = date_value(meta.get(key))
        if d:
            return d
    return None


def importance_level(text: str, pinned: bool, priority) -> int:
    """SPEC §5: ★★★/★★ or pinned → 3, ★ → 2, ``priority: low`` → 1, otherwise 2."""
    if pinned or "★★" in text:
        return 3
    if "★" in text:
        return 2
    if str(priority or "").strip().lower() == "low":
        return 1
    return 2


def _confidence(value) -> float | None:
    """A frontmatter ``confidence`` in [0, 1] (a number, or text that reads as one), else ``None`` (NaN included)."""
    if isinstance(value, bool):  # (float(True) is 1.0: a flag is not a confidence)
        return None
    try:
        c = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return c if 0.0 <= c <= 1.0 else None


_TRUE_WORDS = frozenset(("true", "yes", "on", "1"))
_FLAG_WORDS = _TRUE_WORDS | {"false", "no", "off", "0"}


def _is_flag(value) -> bool:
    """Whether a frontmatter value reads as a flag at all (:func:`frontmatter_bool`): a YAML boolean or number,
    or one of the words it knows, in any case."""
    if isinstance(value, str):
        return value.strip().lower() in _FLAG_WORDS
    return isinstance(value, (bool, int, float))


def frontmatter_bool(value) -> bool:
    """A frontmatter flag (``pinned``) as a bool: YAML's own booleans, and the quoted words
    ``true``/``yes``/``on``/``1`` (any case) that YAML 1.1 would read as true unquoted.
    The indexer and the writer (``delete`` refusing a pinned note) both read flags so."""
    if isinstance(value, str):
        return value.strip().lower() in _TRUE_WORDS
    # (a list or mapping is no flag: ``pinned: [false]`` and ``pinned: {x: 1}`` read as pinned, QA round 70 B-L1)
    return bool(value) if isinstance(value, (bool, int, float)) else False


_DATA_URI_PAYLOAD_RE = re.compile(
    r"(data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[^;,\s()]*)*;[ \t]*base64,)"
    # the payload: its first run (maybe on the next line), then MIME-style lines (76 letters each) holding
    # nothing but base64 (8+ letters), indented or quoted (``> ``) as the text around it is
    r"(?:[ \t]*\r?\n[ \t]*(?:>[ \t]*)*)?[A-Za-z0-9+/]+=*"
    r"(?:[ \t]*\r?\n[ \t]*(?:>[ \t]*)*[A-Za-z0-9+/]{8,}=*(?=[ \t]*(?:\r?\n|$|[)\"'>])))*",
    re.IGNORECASE)


def without_data_payloads(body: str) -> str:
    """``body`` with the payload of every base64 ``data:`` URI left out (``![](data:image/png;base64,iVBOR…)``
    → ``![](data:image/png;base64,)``; RFC 2397), a payload wrapped into lines (RFC 2045's 76 letters) too.

    A pasted image is text to no reader: indexed, its payload's random letter runs would become
    thousands of terms, make the note the longest of the vault (BM25's length normalisation then
    buries it) and fill its snippets and chunks.
    """
    if "base64" not in body and "BASE64" not in body and "Base64" not in body:  # (most bodies: no regex scan)
        return body
    return _DATA_URI_PAYLOAD_RE.sub(r"\1", body)


def is_excalidraw(file_name: str, meta) -> bool:
    """Whether a note is an Excalidraw board (its name ends ``.excalidraw.md``, or its frontmatter has the
    plugin's ``excalidraw-plugin`` key): only its text elements are indexed (:func:`excalidraw_text`)."""
    return file_name.endswith(".excalidraw.md") or (isinstance(meta, dict) and "excalidraw-plugin" in meta)


_TEXT_ELEMENTS = (re.compile(r"^##[ \t]+Text Elements[ \t]*$(.*?)(?=^##\s|^%%|\Z)", re.MULTILINE | re.DOTALL),
                  re.compile(r"^#[ \t]+Text Elements[ \t]*$(.*?)(?=^#{1,2}\s|^%%|\Z)", re.MULTILINE | re.DOTALL))
"""The ``Text Elements`` section of an Obsidian Excalidraw board: ``##`` since plugin 2.x (up to the next ``##``
section: a text element may start with ``# ``, QA round 99-A F5), ``#`` in older ones."""
_SCENE_JSON = re.compile(r"^```json[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_DRAWING = re.compile(r"^#{1,2}[ \t]+Drawing[ \t]*$", re.MULTILINE)


def excalidraw_text(body: str) -> str:
    """Text elements of an Excalidraw board, block ids removed; never the scene JSON itself: its ``Text Elements``
    section (``##``, or ``#`` as the plugin wrote it before 2.x), else the text of the scene's text elements, for a
    board written with its JSON alone (QA round 98-B F2: both were indexed with no body, silently). ``""`` when the
    board holds no text. CR LF line ends are read as LF (QA round 119-B F1: a board checked out with CR LF, git's
    ``core.autocrlf``, was indexed with no text)."""
    body = body.replace("\r\n", "\n")
    m = _TEXT_ELEMENTS[0].search(body) or _TEXT_ELEMENTS[1].search(body)
    text = re.sub(r"\s*\^[A-Za-z0-9_-]{6,}\s*$", "", m.group(1), flags=re.MULTILINE).strip() if m else ""
    return text or _scene_texts(body)  # (an empty section, the scene's text: QA round 99-A F6)


def _scene_texts(body: str) -> str:
    """The text of the text elements (not deleted) of a board's uncompressed scene JSON, one per line, in the
    scene's order; ``""`` when there is none or the JSON does not read (a compressed scene is not read)."""
    drawing = _DRAWING.search(body)  # (the scene's fence, not a json block of the note before it: 99-A F7)
    found = _SCENE_JSON.search(body, drawing.end() if drawing else 0)
    if not found:
        return ""
    try:
        scene = json.loads(found.group(1))
    except (ValueError, RecursionError):  # (a scene nested past Python's limit: QA round 99-A F2, exit 70 for all)
        return ""
    elements = scene.get("elements") if isinstance(scene, dict) else None
    if not isinstance(elements, list):  # (true, 5: QA round 99-A F1, every sync exited 70)
        return ""
    texts = [e.get("originalText") or e.get("text") for e in elements if isinstance(e, dict)
             and e.get("type") == "text" and not e.get("isDeleted")]
    return "\n".join(t.strip() for t in texts if isinstance(t, str) and t.strip())


_LONE_CR = re.compile(r"\r(?!\n)")
_LINE_END = re.compile(r"\r\n?")


_TAGS_BLOCK = re.compile(r"^tags:[^\n]*(?:\n(?:[ \t]|-|\]).*)*", re.M)
"""A frontmatter's ``tags:`` line and the lines of its value below it (indented, list items, a closing ``]``)."""
_HASHTAG = re.compile(r"(?<![^\s\[,])#+([^\s#\[\],'\"]+)")
"""A #hashtag where YAML reads a comment: ``#`` (or ``##``) after a space, a ``[`` or a ``,`` or at a line's start,
followed by a word (a comment proper, ``# none yet``, has a space first)."""


_QUOTED_SCALAR = re.compile(r"""(?<![^\s\[,:])(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')""")
"""A YAML quoted scalar (``"…"``, ``'…'``, over lines too) where one starts: after a space, ``[``, ``,`` or ``:``, or
at a line's start; a ``#`` inside it is text, not a comment."""


def _tags_hashtags(head: str) -> list[str]:
    """The #hashtags written in the ``tags:`` of the frontmatter text ``head``, without their ``#``: words YAML
    reads as comments (``tags: #alpha, #beta``, ``tags: alpha, #beta``, ``- ##alpha``, a flow list over lines), not
    those inside quotes, which are text (QA round 150-A F5: ``tags: "x #alpha"`` was said to be a YAML comment)."""
    found = _TAGS_BLOCK.search(head)
    return _HASHTAG.findall(_QUOTED_SCALAR.sub(" ", found.group(0)[5:])) if found else []


def parse_markdown(rel_path: str, doc_type: str, text: str) -> tuple[list[Document], list[str]]:
    """One markdown file → one document (SPEC §1).

    Title falls back name → title → claim → slug; description falls back to
    ``summary``. Excalidraw boards contribute only their text elements.

    Returns:
        ``([document], warnings)``.
    """
    warnings: list[str] = []
    if cr_line_ends(text):  # classic Mac line ends, as universal newlines read them (QA round 90-C F5: the
        text = _LONE_CR.sub("\n", text)  # frontmatter went into the body, silently; 91 F5: LF lines after them too)
    meta, body, warn = split_frontmatter(text)
    if warn:
        hashtags = not meta and _tags_hashtags(text[:len(text) - len(body)])  # (QA round 91 F6: no word why)
        warnings.append(f"{rel_path}: {warn}" + ("" if meta else  # (a frontmatter read, with a repeated key)
                                                 f"; indexed {'the whole file as text' if body is text else 'the body only'}")
                        + ("; tags written as #hashtags must be quoted ('#alpha') or written without the #" if hashtags
                           else ""))
    fname = rel_path.rsplit("/", 1)[-1]
    # NFC: a name saved decomposed (macOS) and one typed composed are one id (and numbered as one name)
    slug = unicodedata.normalize("NFC", fname[:-3] if fname.endswith(".md") else fname)
    if is_excalidraw(fname, meta):
        body = excalidraw_text(body)
        if not body:
            warnings.append(f"{rel_path}: an Excalidraw board with no text elements found (neither a Text Elements"
                            " section nor an uncompressed scene with text); indexed by its title alone")
    body = without_data_payloads(body)
    # (an empty list or mapping is no title either, as description: [] gives way to summary; QA round 144-J F10)
    title_key = next((k for k in ("name", "title", "claim") if _written(meta.get(k))), None)
    raw_title = meta.get(title_key) if title_key else slug
    if (not_text := _not_text(raw_title)) is not None:
        warnings.append(f"{rel_path}: frontmatter {title_key} {not_text}")
    title = _as_text(raw_title).strip() or slug
    warnings.extend(_date_warnings(rel_path, meta, (*DATE_KEYS, "expires")))
    raw_confidence = meta.get("confidence")
    if raw_confidence not in (None, "") and _confidence(raw_confidence) is None:
        warnings.append(f"{rel_path}: frontmatter confidence {_is_not(raw_confidence, 'a number from 0 to 1')}; ignored")
    # (a description YAML reads as 0 or false is one, as a title is: QA round 146-C F3, it gave way to summary)
    description_key = "description" if _written(meta.get("description")) else "summary"
    if (not_text := _not_text(meta.get(description_key))) is not None:
        warnings.append(f"{rel_path}: frontmatter {description_key} {not_text}")
    description = _as_text(meta.get(description_key)).strip()
    raw_pinned = meta.get("pinned")
    pinned = frontmatter_bool(raw_pinned)
    if raw_pinned not in (None, "") and not _is_flag(raw_pinned):  # (QA round 72-A: pinned: maybe passed silently)
        warnings.append(f"{rel_path}: frontmatter pinned {_is_not(raw_pinned, 'true or false')}; read as not pinned")
    raw_status = meta.get("status")
    status = (status_text(str(raw_status))
              if isinstance(raw_status, (str, int, float)) and str(raw_status).strip() else None)
    if raw_status not in (None, "") and status is None:
        kind = _collection_kind(raw_status) or f"a {type(raw_status).__name__}"  # (a mapping, not Python's dict)
        warnings.append(f"{rel_path}: frontmatter status is {kind}, not a word; ignored")
    tags = normalize_tags(meta.get("tags"))
    if isinstance(meta.get("tags"), dict) and any(v not in (None, True, False) for v in meta["tags"].values()):
        warnings.append(f"{rel_path}: frontmatter tags is a mapping; its keys are read as the tags"
                        f" ({', '.join(tags[:5])}{' …' if len(tags) > 5 else ''}) and its values ignored;"
                        " write tags as a list (tags: [a, b])")
    mapped = mapping_tag_items(meta.get("tags"))
    if mapped:  # (QA round 135-A F5: "- name: rust" / "level: 3" was the tag "rust 3" without a word)
        warnings.append(f"{rel_path}: frontmatter tags list holds {'mappings' if len(mapped) > 1 else 'a mapping'}"
                        f" ({', '.join(mapped[:3])}{' …' if len(mapped) > 3 else ''}); the values of each are read as"
                        " one tag; write each tag as a word (tags: [a, b])")
    nameless = nameless_tags(meta.get("tags"))
    if nameless:  # (126-A F10: dropped without a word, where a write or --tags refuses such a tag)
        many = len(nameless) > 1
        warnings.append(f"{rel_path}: frontmatter tag{'s' if many else ''} {', '.join(map(repr, nameless[:5]))}"
                        f"{' …' if len(nameless) > 5 else ''} name{'' if many else 's'} no tag ({no_tag_reason(*nameless)});"
                        " ignored")
    known = set(tags)
    lost = [f"#{w}" for w in _tags_hashtags(text[:len(text) - len(body)]) if clean_tag(w) not in known] if meta else []
    if lost:  # (YAML reads "tags: #a, #b", "- #a", "a, #b" as comments: no tags, silently; QA rounds 90-C F6, 92 F5)
        warnings.append(f"{rel_path}: frontmatter tags written as #hashtags are YAML comments, so they are not tags"
                        f" ({', '.join(lost[:5])}{' …' if len(lost) > 5 else ''}); quote them ('#alpha') or drop the #")
    doc = Document(
        type=doc_type,
        slug=slug,
        source_path=rel_path,
        title=title,
        description=description,
        body=body.strip(),
        tags=tags,
        date=_first_date(meta),
        status=status,
        level=importance_level(f"{title}\n{description}", pinned, meta.get("priority")),
        pinned=pinned,
        confidence=_confidence(raw_confidence),
        expires=date_value(meta.get("expires")),
    )
    return [doc], warnings


_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
"""One line with its line end (``\\n``, ``\\r\\n`` or ``\\r``, as in CommonMark), or a last line without one."""
_H2_RE = re.compile(r" {0,3}##(?:[ \t](.*))?")
"""An H2 line (fullmatch, no line end): at most 3 spaces, ``##``, then a space or tab, or nothing."""
_H1_RE = re.compile(r" {0,3}#(?:[ \t].*)?")
"""An H1 line (fullmatch): at most 3 spaces, ``#``, then a space or tab, or nothing."""
_RULE_RE = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})")
"""A thematic break (horizontal rule) line: 3 or more ``*``, ``-`` or ``_``, spaces and tabs between."""
_COMMENT_RE = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
"""An HTML comment, possibly over several lines; one never closed runs to the end."""


def h2_title(line: str) -> str | None:
    """The text of an ATX level-2 heading, after CommonMark
    (https://spec.commonmark.org/0.31.2/#atx-headings, section "ATX headings").

    Args:
        line: one line, without its line end.

    Returns:
        ``None`` when ``line`` is not an H2 heading: ``##`` indented at most 3 spaces (4 make it code)
        and followed by a space, a tab or the end of the line (``##x`` and ``###`` are not H2).
        Otherwise the heading's text, stripped, without its optional closing run of ``#``, which
        counts only after a space or tab (``## Notes on C#`` → ``Notes on C#``, ``## Alpha ##`` →
        ``Alpha``) or when it is all the text (``##    ###`` → ``""``, an empty heading).
    """
    m = _H2_RE.fullmatch(line)
    if m is None:
        return None
    text = (m.group(1) or "").strip(" \t")
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1] in " \t"):
        text = bare
    return text.strip()


def _memory_headings(body: str) -> list[tuple[int, int, str]]:
    """``(start, end, title)`` of every H2 heading line of ``body`` outside literal blocks, in order.

    ``body[start:end]`` is the heading line with its line end. Literal blocks (fenced code, HTML
    comments, raw HTML such as ``<pre>``) open and close as in :mod:`dreamdb.vault.literal_blocks`
    (CommonMark); an unclosed one runs to the end, so a ``## `` line inside any of them is body
    text, never a heading.
    """
    out: list[tuple[int, int, str]] = []
    block: str | None = None
    for m in _LINE_RE.finditer(body):
        line = m.group().rstrip("\r\n")
        if block is not None:
            if closes_block(line, block):
                block = None
            continue
        block = block_opening(line)
        if block is None and (title := h2_title(line)) is not None:
            out.append((m.start(), m.end(), title))
    return out


def _has_text(preamble: str) -> bool:
    """Whether markdown holds more than blank lines, one ``# Title`` line, HTML comments and horizontal rules."""
    h1 = False
    for m in _LINE_RE.finditer(_COMMENT_RE.sub("", preamble)):
        line = m.group().rstrip("\r\n")
        if not line.strip() or _RULE_RE.fullmatch(line):
            continue
        if not h1 and _H1_RE.fullmatch(line):
            h1 = True
            continue
        return True
    return False


def parse_memory(rel_path: str, text: str) -> tuple[list[Document], list[str]]:
    """``core/2.memory.md`` → one document per H2 section (SPEC §1), headings and fences read as
    CommonMark does (https://spec.commonmark.org/0.31.2/, sections "ATX headings", "Fenced code blocks"
    and "HTML blocks").

    A section runs from its ``## `` heading line to the next one; slug = slugified heading
    (``-2``, ``-3``… for repeats, skipping a number another section has as its own slug:
    ``## Beta``, ``## Beta``, ``## Beta 2`` are ``beta``, ``beta-3``, ``beta-2``), title = the
    heading's text (see :func:`h2_title`), body = the section's text, stripped. A ``## `` line
    inside a literal block (fenced code, an HTML comment, raw HTML such as ``<pre>``; an unclosed
    one runs to the end; see :mod:`dreamdb.vault.literal_blocks`) belongs to the body, not a new
    section.
    An empty heading (``##``, ``## ##``) still ends the previous section; its own section is
    indexed under the slug fallback ``section`` with an empty title, or not at all when it holds
    no text either (a divider).

    The file's frontmatter date (the first of :data:`DATE_KEYS`) dates every section; one that is no date is
    warned of as a note's is, and an ``expires`` key is warned of as ignored (the sections never expire).

    Text before the first heading (the preamble) is not indexed; a warning says so when it holds
    more than blank lines, one ``# Title`` line, HTML comments and horizontal rules, and another
    when the file has such text but no ``## `` heading at all.

    Returns:
        ``(documents, warnings)``: the sections in file order (``ordinal`` 0, 1, …), and one line
        per problem, each starting with ``rel_path``.
    """
    warnings: list[str] = []
    if cr_line_ends(text):  # classic Mac line ends, as universal newlines read them (QA round 90-C F5: the
        text = _LONE_CR.sub("\n", text)  # frontmatter went into the body, silently; 91 F5: LF lines after them too)
    meta, body, warn = split_frontmatter(text)
    if warn:
        warnings.append(f"{rel_path}: {warn}" + ("" if meta else
                                                 f"; indexed {'every section of the file' if body is text else 'the sections only'}"))
    body = without_data_payloads(body)
    warnings.extend(_date_warnings(rel_path, meta, DATE_KEYS))
    if meta.get("expires") not in (None, ""):  # (QA round 145-E F3: ignored without a word)
        warnings.append(f"{rel_path}: frontmatter expires is ignored: the sections of the memory file never expire;"
                        " give what should expire a note of its own (knowledge/…) with its expires date")
    file_date = _first_date(meta)
    docs: list[Document] = []
    seen: dict[str, int] = {}
    headings = _memory_headings(body)
    unclosed = warn is not None and "not closed" in warn  # the frontmatter warning already covers its lines
    if not unclosed and _has_text(body[:headings[0][0]] if headings else body):
        warnings.append(f"{rel_path}: text before the first '## ' heading is not indexed; put it under a '## ' heading"
                        if headings else
                        f"{rel_path}: no '## ' heading, so none of its text is indexed; put it under a '## ' heading")
    sections = []
    for k, (_, end, heading) in enumerate(headings):
        content = body[end:headings[k + 1][0] if k + 1 < len(headings) else len(body)].strip()
        if len(content) > MAX_NOTE_CHARS:  # (each section capped as a note is: QA round 105 F5, one 21 MB section)
            warnings.append(f"{rel_path}: the section {heading!r} has {len(content):,} characters of text; only the "
                            f"first {MAX_NOTE_CHARS:,} are indexed")
            content = content[:_cut_at(content, MAX_NOTE_CHARS)]
        if heading or content:
            sections.append((heading, content, slugify(heading)))
    own = {base for _h, _c, base in sections}  # a repeat's number skips another section's own slug
    for heading, content, base in sections:
        n = seen.get(base, 0) + 1
        while n > 1 and f"{base}-{n}" in own:
            n += 1
        seen[base] = n
        slug = base if n == 1 else f"{base}-{n}"
        docs.append(
            Document(
                type="memory",
                slug=slug,
                source_path=rel_path,
                ordinal=len(docs),
                title=heading,
                body=content,
                date=file_date,
                level=importance_level(f"{heading}\n{content}", False, None),
            )
        )
    return docs, warnings


def changelog_entries(data) -> list | None:
    """The entry list of a parsed CHANGELOG.json (bare array or ``{"entries": [...]}``), else ``None``."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("entries"), list):
        return data["entries"]
    return None


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _slug_date(value) -> str:
    """The date part of a changelog entry's slug: the day as written, as ``YYYY-MM-DD``, of a date written that way
    (a time after it is dropped) or in any other form :func:`date_value` reads (``20260818T120000Z``,
    ``2026-230T12:00Z``, ``2026-W34-2T12:00Z`` are ``2026-08-18``, before any offset is applied: QA round 146-A F3,
    each kept its time and started a series of its own), else the value slugified (``2026/08/01`` → ``2026-08-01``,
    ``Aug 1, 2026`` → ``aug-1-2026``; at most 32 characters), ``undated`` when there is none. Before, the first 10
    characters were kept as written: ids such as ``changelog/2026/08/01-fix-1`` (a path) or
    ``changelog/Aug 1, 202-fix-1``."""
    text = str(value).strip() if value else ""
    if _ISO_DAY.match(text):
        return text[:10]
    day = re.split(r"[Tt ]", text, maxsplit=1)[0]
    if DAY_FORMS.match(day.lower()) and date_value(text) is not None:
        day_start = parse_date_value(day)
        if day_start is not None:
            return day_start.date().isoformat()
    return slugify(text)[:32].strip("-_") if re.search(r"\w", text) else "undated"


def changelog_slugs(entries: list, bases: list[str] | None = None) -> list[str]:
    """Stable slugs ``<date>-<scope or type>-<n>`` for changelog entries, in file order.

    A scope or type without a letter or digit (``🚀``, ``...``) counts as none: the type is used, or ``entry``
    (QA round 130-C F8: the slug of such a scope was ``section``, ids such as ``2026-12-06-section-1``).
    ``n`` (1-based) counts the entries sharing the same date and scope from the
    oldest end of the file, so adding a new entry at the newest end (either
    order, detected from the first and last dates: :func:`changelog_newest_first`) never renames old ones.

    ``bases``: the entries' :func:`changelog_bases`, when the caller has them already (``remember`` numbers the
    file with its new entry at either end, under the vault lock, without slugging every entry again: QA round
    135-E F1).
    """
    bases = changelog_bases(entries) if bases is None else bases
    order = range(len(entries) - 1, -1, -1) if changelog_newest_first(entries) else range(len(entries))
    counts: dict[str, int] = {}
    slugs = [""] * len(entries)
    for i in order:
        counts[bases[i]] = counts.get(bases[i], 0) + 1
        slugs[i] = f"{bases[i]}-{counts[bases[i]]}"
    return slugs


def changelog_entry_instant(entry) -> float | None:
    """A changelog entry's date as the instant the sync stores for it (seconds since 1970 UTC: its
    :func:`date_value`, a date alone at midnight UTC), ``None`` when it has none that can be read."""
    written = date_value(entry.get("date")) if isinstance(entry, dict) else None
    when = parse_date_value(written) if written is not None else None
    return None if when is None else when.timestamp()


def changelog_newest_first(entries: list) -> bool | None:
    """Whether a changelog lists its newest entries first (``None`` when fewer than two entries have a date): its
    first entry with a date that can be read is later than its last, the instants compared (a week or ordinal
    date, ``20260818``, an offset or a one-digit month, as :func:`date_value` reads each); where fewer than two
    dates can be read, the first and last dates as written are compared as text, as every date once was.

    :func:`changelog_slugs` numbers from the other end, and ``remember`` adds at this end, one decision for both.
    Before, the dates were compared as written: ``2026-08-18T20:00Z`` sorted after ``2026-230T08:00Z`` (the same
    day, later), and ``2026-12-01`` before ``2026-9-30``, so such a file was numbered from its newest end (QA round
    151-D F2)."""
    dated = [i for i, e in enumerate(entries) if isinstance(e, dict) and e.get("date")]
    if len(dated) < 2:
        return None
    # (the first readable date from each end: a file of 20,000 entries reads two, not every one)
    first = next(((i, t) for i in dated if (t := changelog_entry_instant(entries[i])) is not None), None)
    last = None if first is None else next(
        ((i, t) for i in reversed(dated) if (t := changelog_entry_instant(entries[i])) is not None), None)
    if first is not None and last is not None and first[0] != last[0]:
        return first[1] > last[1]
    return str(entries[dated[0]].get("date")) > str(entries[dated[-1]].get("date"))


def changelog_bases(entries: list) -> list[str]:
    """The ``<date>-<scope or type>`` part of each entry's slug (:func:`changelog_slugs`), in file order."""
    bases = []
    for e in entries:
        e = e if isinstance(e, dict) else {}
        scope = next((slug for slug in (_slug_or_empty(str(e.get(key))) for key in ("scope", "type") if e.get(key))
                      if slug), "entry")
        bases.append(f"{_slug_date(e.get('date'))}-{scope}")
    return bases


class SupersedesResolver:
    """Resolves changelog ``supersedes`` values against one file's entries (set and dict lookups: a
    file of 20,000 entries resolves in milliseconds, where a scan per entry took seconds).

    Args:
        entries: the file's entries, in file order (non-dicts are skipped).
        slugs: their slugs (:func:`changelog_slugs`).
    """

    def __init__(self, entries: list, slugs: list[str]) -> None:
        self._slugs = frozenset(slugs)
        self._slug_list = slugs
        #: (date, scope or type) as written → the first two entries with them, in file order
        self._legacy: dict[tuple[str, str], list[int]] = {}
        for i, e in enumerate(entries):
            if isinstance(e, dict):
                first = self._legacy.setdefault((str(e.get("date")), str(e.get("scope") or e.get("type"))), [])
                if len(first) < 2:
                    first.append(i)

    def resolve(self, value: str, own: int = -1) -> str | None:
        """A ``supersedes`` value → ``changelog/<slug>`` (``None`` if empty).

        Accepts an entry id (``[changelog/|changelog:]<date>-<scope>-<n>``) or the legacy
        ``<date>|<scope>`` form, which resolves to the first (in file order) entry of that date and
        scope other than the entry itself (index ``own``); an unresolvable value is kept as written.
        """
        ident = value.strip()
        if not ident:
            return None
        for prefix in ("changelog/", "changelog:"):
            if ident.startswith(prefix):
                ident = ident[len(prefix):]
        if ident not in self._slugs and "|" in ident:
            when, _, label = (part.strip() for part in ident.partition("|"))
            match = [i for i in self._legacy.get((when, label), ()) if i != own]
            if match:
                ident = self._slug_list[match[0]]
        return f"changelog/{ident}"


def parse_changelog(rel_path: str, text: str) -> tuple[list[Document], list[str]]:
    """``core/CHANGELOG.json`` → one document per entry (SPEC §1).

    Title ``<date> [<type>] <scope> — <summary>``; tags type, scope, authors;
    body = summary + description + references; level 1; no identity boost.
    Invalid JSON yields no documents and one warning.
    """
    repeated: list[str] = []  # keys an object holds twice (JSON keeps the last)
    odd: list[str] = []  # NaN, Infinity, -Infinity: not JSON, which Python reads as numbers

    def pairs(items: list[tuple[str, object]]) -> dict:
        out = dict(items)
        if len(out) < len(items):
            seen: set[str] = set()
            repeated.extend(k for k, _v in items if k in seen or seen.add(k))
        return out

    def constant(name: str) -> float:
        odd.append(name)
        return float(name)

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except ValueError as exc:
        limit = re.match(r"Exceeds the limit \((\d+)(?: digits)?\) for integer string conversion", str(exc))
        if limit:  # in words, not Python's sys.set_int_max_str_digits() (QA round 59 L10)
            at = re.search(rf"\d{{{int(limit.group(1)) + 1},}}", text)
            where = f" at line {text.count(chr(10), 0, at.start()) + 1:,}" if at else ""
            return [], [f"{rel_path}: holds an integer too long to read (over {int(limit.group(1)):,} digits){where};"
                        " changelog not indexed (shorten that number, or write it as a string in quotes)"]
        from dreamdb.vault.conflicts import conflict_words

        return [], [f"{rel_path}: not valid JSON ({conflict_words(text) or exc}); changelog not indexed"]
    except RecursionError:  # QA round 12: a 1,200-deep array crashed every command
        return [], [f"{rel_path}: nested too deeply to read; changelog not indexed"]
    if json_too_deep(data):  # (the same limit on every Python: 3.12's decoder reads 1,200 levels, QA round 67 M1)
        return [], [f"{rel_path}: nested too deeply to read (over {MAX_JSON_DEPTH} levels); changelog not indexed"]
    mended = []
    if _SURROGATE_ESCAPE_RE.search(text):
        data, mended = _without_lone_surrogates(data)
    try:
        docs, warnings = _changelog_documents(rel_path, data)
    except RecursionError:  # an entry field nested deeper than the text conversion can walk
        return [], [f"{rel_path}: an entry is nested too deeply to read; changelog not indexed"]
    if mended:
        warnings.append(f"{rel_path}: {len(mended):,} {'texts hold' if len(mended) > 1 else 'text holds'} half of a UTF-16 "
                        f"surrogate pair (an emoji cut in two?), indexed as \ufffd; e.g. {mended[0]!r}")
    if repeated:  # (QA round 71: a merge that kept both sides' "summary" lost one of them without a word)
        warnings.append(f"{rel_path}: {len(repeated):,} {'keys are' if len(repeated) > 1 else 'key is'} written twice in "
                        f"one entry (e.g. {repeated[0]!r}); only the last value of each is indexed")
    if odd:
        warnings.append(f"{rel_path}: holds {odd[0]} ({len(odd):,} such value{'s' if len(odd) > 1 else ''}), which "
                        "is not JSON (other tools may refuse the file); read as a number")
    return docs, warnings


_SURROGATE_ESCAPE_RE = re.compile(r"\\[uU][dD][89a-fA-F]")
"""A JSON escape of a UTF-16 surrogate (``\\ud83d``): only then can the parsed text hold a lone one."""
_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(data):
    """``(data, mended)``: parsed JSON with every lone surrogate in its strings (keys too) replaced by U+FFFD, and the
    strings changed (their new text). JSON can escape half of a pair (``"\\ud83d"``, what a tool cutting a string
    inside an emoji writes); Python reads it, but SQLite cannot store it (QA round 70 B-H3: UnicodeEncodeError, exit 70
    on every command). A pair written whole is one character once read, so what is left is lone."""
    mended: list[str] = []

    def fix(value):
        if isinstance(value, str):
            if _LONE_SURROGATE_RE.search(value):
                value = _LONE_SURROGATE_RE.sub("\ufffd", value)
                mended.append(clip(value, 80))
            return value
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {fix(k): fix(v) for k, v in value.items()}
        return value

    return fix(data), mended


MAX_JSON_DEPTH = 200
"""The deepest nesting of arrays and objects a CHANGELOG.json may have (an entry's fields are a level or two deep):
deeper, sync does not index it and ``remember`` does not change it, on every Python alike. Python 3.11's JSON
decoder stops near 1,000 levels, 3.12's goes on, and the walk over the entries then ran out of stack (QA round 67
M1: ``remember`` wrote a changelog that sync then dropped whole, on 3.12 and 3.13)."""


def json_too_deep(data, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether parsed JSON ``data`` nests arrays and objects deeper than ``limit`` levels (walked without recursion)."""
    if not isinstance(data, (list, dict)):
        return False
    stack = [(data, 1)]  # (only arrays and objects are put on it: a walk over every string and number of a
    while stack:         # 5,000-entry CHANGELOG took half of remember's time under the vault lock, QA round 135-E F1)
        value, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value)
                     if isinstance(v, (list, dict)))
    return False


def _changelog_documents(rel_path: str, data) -> tuple[list[Document], list[str]]:
    """The documents of a parsed CHANGELOG.json (see :func:`parse_changelog`)."""
    entries = changelog_entries(data)
    if entries is None:
        return [], [f"{rel_path}: expected a JSON array or {{\"entries\": [...]}}; changelog not indexed"]
    docs: list[Document] = []
    skipped = 0
    bad_dates: list[str] = []
    textless: list[str] = []  # what the entries without summary or description hold instead (unread keys)
    mapped = 0  # references or authors written as one JSON object
    not_text: list[str] = []  # entries with a text field written as a list or object: its first, as said
    slugs = changelog_slugs(entries)
    supersedes_of = SupersedesResolver(entries, slugs)
    for i, (entry, slug) in enumerate(zip(entries, slugs)):
        if not isinstance(entry, dict):
            skipped += 1
            continue
        d = date_value(entry.get("date"))
        if d is None and entry.get("date") not in (None, ""):
            bad_dates.append(clip(str(entry.get("date")), 40))
        said = next((f"{key} {kind}" for key in _CHANGELOG_TEXT_FIELDS
                     if (kind := _not_text(entry.get(key))) is not None), None)
        if said is not None:  # (QA round 144-J F2: {"why": …, "how": …} was indexed as its values without a word)
            written = _as_text(entry.get("date")).strip()
            not_text.append(f"entry {i + 1}{f' ({clip(written, 40)})' if written else ''}: {said}")
        etype = _as_text(entry.get("type")).strip()
        scope = _as_text(entry.get("scope")).strip()
        summary = _as_text(entry.get("summary")).strip()
        description = _as_text(entry.get("description")).strip()
        headline = summary or description.split("\n", 1)[0][:200]
        if not summary and not description:  # (QA round 69 M5: "text" and "id" were dropped without a word)
            unread = [k for k, v in entry.items() if k not in _CHANGELOG_FIELDS and isinstance(v, str) and v.strip()]
            if unread:
                textless.append(f"{', '.join(map(repr, unread[:3]))}")
        refs, authors = _items(entry.get("references")), _items(entry.get("authors"))
        mapped += sum(isinstance(entry.get(k), dict) and bool(entry.get(k)) for k in ("references", "authors"))
        supersedes = supersedes_of.resolve(_as_text(entry.get("supersedes")), i)
        docs.append(
            Document(
                type="changelog",
                slug=slug,
                source_path=rel_path,
                ordinal=i,
                title=" ".join(x for x in (d or "", f"[{etype}]" if etype else "", scope) if x) + (f" — {headline}" if headline else ""),
                body="\n\n".join(x for x in (summary, description, "\n".join(_as_text(r) for r in refs)) if x),
                tags=normalize_tags([t for t in [etype, scope, *[_as_text(a) for a in authors]] if t]),
                date=d,
                level=1,
                supersedes=supersedes,
                identity_boost=False,
            )
        )
    warnings = [f"{rel_path}: {skipped} {'entries are not JSON objects' if skipped > 1 else 'entry is not a JSON object'};"
                " skipped"] if skipped else []  # (QA round 59 L10: "1 entries are")
    if textless:
        warnings.append(f"{rel_path}: {len(textless)} entr{'ies have' if len(textless) > 1 else 'y has'} no summary or"
                        f" description, only fields dreamdb does not read (e.g. {textless[0]}): an entry's text is its"
                        " summary and description (its title adds date, type and scope; references, authors and"
                        " supersedes are read too)")
    if mapped:  # (QA round 91 F7: {"name": "alice"} was dropped without a word)
        warnings.append(f"{rel_path}: {mapped} references or authors field{'s are' if mapped > 1 else ' is'} a JSON"
                        " object, not a list: each of its values was read as one item")
    if not_text:  # one line for the file, as for dates
        warnings.append(f"{rel_path}: {len(not_text)} entr{'ies have' if len(not_text) > 1 else 'y has'} a"
                        f" {', '.join(_CHANGELOG_TEXT_FIELDS[:-1])} or {_CHANGELOG_TEXT_FIELDS[-1]} that is no text,"
                        f" e.g. {not_text[0]}")
    if bad_dates:  # one line for the file, as for frontmatter dates (the entries stay, undated)
        warnings.append(f"{rel_path}: {len(bad_dates)} entr{'ies have' if len(bad_dates) > 1 else 'y has'} a date that is "
                        f"not a date (YYYY-MM-DD…), e.g. {bad_dates[0]!r}; indexed without a date")
    return docs, warnings


def _items(value) -> list:
    """A changelog entry's list field (``references``, ``authors``) as a list: one string or number written
    without its list is its one item (QA round 90-C F8: ``"authors": "alice"`` was dropped, and alice not found);
    a mapping gives its values (QA round 91 F7: ``{"name": "alice"}`` was dropped), ``true``/``false`` or nothing
    none."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [v for v in value.values() if _as_text(v).strip()]
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and _as_text(value).strip():
        return [value]
    return []


_CHANGELOG_FIELDS = ("summary", "description", "type", "scope", "date", "references", "authors", "supersedes",
                     "breaking")
"""The fields of a CHANGELOG.json entry dreamdb knows (SPEC §1; ``breaking`` is written, not indexed); others are
kept in the file, not indexed."""

_CHANGELOG_TEXT_FIELDS = ("summary", "description", "type", "scope")
"""The fields of a CHANGELOG.json entry read as text (:func:`_as_text`): one written as a list or object is said
(:func:`_not_text`)."""


def _decoded(raw: bytes, codec: str, errors: str, whole: bool) -> str:
    """``raw`` decoded with ``codec``; when not ``whole`` (the first bytes of a file), a character its last bytes
    begin is left out, not taken for bytes that are not of the codec."""
    if whole:
        return raw.decode(codec, errors)
    return codecs.getincrementaldecoder(codec)(errors).decode(raw, final=False)


def decode(raw: bytes, rel_path: str, *, whole: bool = True) -> tuple[str | None, str | None]:
    """Decode file bytes as UTF-8 (BOM stripped; invalid bytes replaced, with a warning), or as UTF-16 or UTF-32
    where their byte-order mark says so (:mod:`dreamdb.vault.encoding`; QA round 80-A F6: such a note was
    skipped as binary). ``whole=False``: ``raw`` is the first bytes of a file (:func:`note_read_limit`), perhaps
    ending inside a character, which is left out.

    Returns ``(text, warning)``; ``text`` is ``None`` for a binary file (NUL bytes in the first 8 KB, as git tells).
    """
    codec = wide_unicode_codec(raw)
    if codec:
        try:
            return _decoded(raw, codec, "strict", whole), None
        except UnicodeDecodeError:
            if codec == "utf-32" and raw.startswith(b"\xff\xfe"):  # UTF-16's mark then U+0000 reads as UTF-32's
                try:  # (QA round 81-A F7)
                    return _decoded(raw, "utf-16", "strict", whole), None
                except UnicodeDecodeError:
                    pass
            return (_decoded(raw, codec, "replace", whole),
                    f"{rel_path}: starts with a {codec.upper()} byte-order mark but is not {codec.upper()} text"
                    + _REPLACED_TAIL)
    if b"\x00" in raw[:8192]:
        return None, f"{rel_path}: looks binary (NUL bytes); skipped"
    try:
        return _decoded(raw, "utf-8-sig", "strict", whole), None
    except UnicodeDecodeError:
        return _decoded(raw, "utf-8-sig", "replace", whole), f"{rel_path}: invalid UTF-8{_REPLACED_TAIL}"


_REPLACED_TAIL = "; undecodable bytes replaced"
"""How :func:`decode` ends its warning of a file read with undecodable bytes replaced (:func:`text_replaced`)."""


def text_replaced(warning: str, rel_path: str) -> str | None:
    """What :func:`decode`'s ``warning`` on ``rel_path`` says when it is one of bytes it could not decode and replaced
    (``invalid UTF-8``: a note saved in cp1252 or Latin-1), without the path; else ``None``. The sync keeps these
    (``meta`` ``text_replaced``) for ``status``, since the file, unchanged, is not read again (QA round 130-C F10)."""
    prefix = f"{rel_path}: "
    if warning.startswith(prefix) and warning.endswith(_REPLACED_TAIL):
        return warning[len(prefix):]
    return None


def text_cut(warning: str, rel_path: str) -> str | None:
    """What :func:`parse_file`'s ``warning`` on ``rel_path`` says when it is one of text left out at the size limit
    (:data:`MAX_NOTE_CHARS`: a note, or a section of ``core/2.memory.md``, indexed up to its first 4 Mi characters; a
    frontmatter block longer than that left out), without the path; else ``None``. The sync keeps these (``meta``
    ``text_cut``) for ``status``, since the file, unchanged, is not read again (QA round 153-C F2: said by the sync
    that read it only)."""
    prefix = f"{rel_path}: "
    if warning.startswith(prefix) and any(mark in warning for mark in _cut_marks()):
        return warning[len(prefix):]
    return None


CUT_KINDS = ("text", "section", "frontmatter", "frontmatter_and_text")
"""What a file :func:`text_cut` names lost (:func:`cut_kinds`), in the order ``status`` lists them: ``text``, a note's
text past its first :data:`MAX_NOTE_CHARS` characters; ``section``, a section of a memory file past as many (its other
sections whole); ``frontmatter``, a frontmatter block longer than that (the note's title, dates, tags and flags; its
text is indexed, up to as many characters); ``frontmatter_and_text``, a frontmatter block not closed in the part of a
longer note that is read (its metadata and its text: the note is indexed by its file name alone). A note can lose both
``frontmatter`` and ``text`` (a frontmatter block longer than the limit, more text than that after it): it is listed
under each (:func:`cut_kinds`)."""


def cut_kinds(why: str) -> list[str]:
    """Each of :data:`CUT_KINDS` a file lost, in that order, by what the sync kept of it (:func:`text_cut` of each of
    its warnings, one a line: :data:`dreamdb.store.sync.TEXT_CUT_KEY`), for ``status`` (QA round 154-A F2: a note
    whose frontmatter block and text after it were both longer than the limit was listed by the first alone, as if
    its text were found whole)."""
    found = {cut_kind(line) for line in why.split("\n") if line}
    return [kind for kind in CUT_KINDS if kind in found]


def cut_kind(why: str) -> str:
    """Which of :data:`CUT_KINDS` a file lost by one warning (what :func:`text_cut` gave for it, without the path)
    (QA round 153-F F2: a note whose frontmatter was left out was said to be indexed up to its first 4 Mi characters,
    the rest not found, where its body was indexed and its title, tags and dates lost); :func:`cut_kinds` reads all
    of a file's."""
    if why.startswith("frontmatter block not closed"):
        return "frontmatter_and_text"
    if why.startswith("frontmatter block of"):
        return "frontmatter"
    return "section" if why.startswith("the section ") else "text"


def _cut_marks() -> tuple[str, ...]:
    """The words of each warning of text left out at :data:`MAX_NOTE_CHARS` (:func:`text_cut`), as
    :func:`parse_file` and :func:`parse_memory` write them."""
    limit = f"{MAX_NOTE_CHARS:,}"
    return (f"; only the first {limit} characters are indexed", f"; only the first {limit} are indexed",
            f", more than the {limit} a note is indexed up to;", f", more than the {limit} characters a note is indexed up to;")


MAX_NOTE_CHARS = 4 * 1024 * 1024
"""Most characters of a markdown file that are indexed (4 Mi, about 700,000 words; the rest is left out, with a
warning): indexing takes about 20 times a note's size in memory, so one note of 80 MB needed 1.65 GB and, under a
memory limit, kept every other note of the vault from being indexed; a recall meeting it took 3.2 s (QA round 103-C
F3). A changelog and ``core/2.memory.md`` are read whole: their entries and sections are documents of their own (QA
round 104-A F5: a memory file's sections past the cut were lost), each section capped alike."""


def note_read_limit(head: bytes) -> int:
    """How many bytes of a markdown file whose first bytes are ``head`` (4 at least, or all of a shorter file) the
    sync reads (:func:`dreamdb.vault.discover.read_head`): enough for more than :data:`MAX_NOTE_CHARS` characters as
    :func:`plain_text` reads them, at 4 bytes a character at most in UTF-8 and UTF-16 (a CR LF is one), 8 in UTF-32,
    and a byte-order mark. A note of no more characters is read whole, and parsed as ever; of a longer one, only its
    first bytes are kept in memory (QA round 148-C F5: a note of 300 MB was read whole, and took 644 MB to sync)."""
    return (8 if wide_unicode_codec(head) == "utf-32" else 4) * (MAX_NOTE_CHARS + 1) + 4


_YAML_KEY_LINE = re.compile(r"(?:[ \t]*(?:#[^\r\n]*)?\r?\n)*[ \t]*(?:\"[^\"\r\n]*\"|'[^'\r\n]*'|[^\s#'\"{}\[\]:-]"
                            r"[^:\r\n]*?)[ \t]*:(?:[ \t\r]|$)", re.M)
"""The first line of a frontmatter block when it is YAML: a key (``title:``, ``Öncelik:``, ``"title":``, ``2fa:``),
perhaps after blank or comment lines, CR LF line ends too (QA round 110-A F5: a key of a Turkish letter or in quotes
was read as prose; 111-A F7: ``tags:`` then CR LF)."""


def _cut_at(text: str, limit: int) -> int:
    """Where to cut ``text`` to at most ``limit`` characters: the last line end before it, else (a line longer than
    half the limit: pasted data, a long paragraph) the last space, else the limit itself (QA round 105 F9: a body of
    one 4 Mi line was cut at the end of its frontmatter, and indexed empty)."""
    for sep in ("\n", " "):
        at = text.rfind(sep, 0, limit)
        if at >= limit // 2:
            return at
    return limit


def plain_text(text: str) -> str:
    """``text`` (decoded) with one kind of line end, LF, as universal newlines read them (CR LF, and CR alone, are one
    line end each; CR CR LF two), and no byte-order mark left at its start (a second one): how every vault file and an
    ``embed dedup`` draft are read (QA round 120-B F1–F5: a note of CR CR LF lines or two marks lost its frontmatter
    silently; the 4 Mi cap counted the CRs; the index kept them in its bodies)."""
    text = text.lstrip("\ufeff")
    return _LINE_END.sub("\n", text) if "\r" in text else text


def parse_file(rel_path: str, kind: str, doc_type: str | None, raw: bytes, *,
               size: int | None = None) -> tuple[list[Document], list[str], bool]:
    """Dispatch one source file's bytes to the right parser.

    A note's text past :data:`MAX_NOTE_CHARS` (cut at the line end before it) is left out, with a
    warning, and a NUL character is read as a space: with a warning past the first 8 KB of a UTF-8 file (one
    there is taken as binary, :func:`decode`), silently in a UTF-16 or UTF-32 note.

    ``size``: the file's size in bytes when ``raw`` is only its first bytes (a note longer than
    :func:`note_read_limit` says, read by :func:`dreamdb.vault.discover.read_head`); the warning then gives the
    note's size in bytes, its characters uncounted, and a frontmatter block not closed in those bytes is left out.

    Returns:
        ``(documents, warnings, readable)``; ``readable`` is False when nothing
        could be read at all (a binary file, a CHANGELOG.json that is not valid
        JSON or of an unknown shape). Never raises on bad content.
    """
    head_only = size is not None and size > len(raw)  # (QA round 148-C F5: read whole, then cut)
    text, warn = decode(raw, rel_path, whole=not head_only)
    if text is None:
        return [], [warn], False
    text = plain_text(text)
    readable = True
    notes = [warn] if warn else []
    block = find_block(text) if kind == "markdown" and (head_only or len(text) > MAX_NOTE_CHARS) else None
    closed_past_cut = block is not None and block.close_end is not None and block.close_end > MAX_NOTE_CHARS
    unclosed_in_head = (head_only and block is not None and block.close_end is None and len(text) > MAX_NOTE_CHARS
                        and _YAML_KEY_LINE.match(text, block.open_end) is not None)
    if closed_past_cut and _YAML_KEY_LINE.match(text, block.open_end):
        # (QA round 104-A F6: cut inside its frontmatter, the note was said to have a frontmatter block "not closed by
        # a '---' line" and was indexed as text, YAML and all, its body left out. A long note of prose between two
        # '---' rules is no frontmatter, as split_frontmatter reads it: its first 4 Mi characters are indexed, QA
        # round 109-A F2)
        closed_past_cut = False
        notes.append(f"{rel_path}: frontmatter block of {block.close_end:,} characters, more than the {MAX_NOTE_CHARS:,}"
                     " a note is indexed up to; its metadata is left out and the text after it indexed")
        text = "---\n---\n" + text[block.close_end:]  # (an empty block: the body is never read as frontmatter)
    elif unclosed_in_head:  # (where it closes, if it does, is in bytes not read: QA round 148-C F5)
        notes.append(f"{rel_path}: frontmatter block not closed in the first {len(raw):,} bytes of {size:,}, more than"
                     f" the {MAX_NOTE_CHARS:,} characters a note is indexed up to; its metadata and text are left out")
        text = "---\n---\n"
    if kind == "markdown" and head_only and not unclosed_in_head:  # (its size: the characters are not all read)
        notes.append(f"{rel_path}: {size:,} bytes of text; only the first {MAX_NOTE_CHARS:,} characters are indexed "
                     "(split it into notes of their own to find the rest)")
        text = text[:_cut_at(text, MAX_NOTE_CHARS)]
    elif kind == "markdown" and len(text) > MAX_NOTE_CHARS:
        notes.append(f"{rel_path}: {len(text):,} characters of text; only the first {MAX_NOTE_CHARS:,} are indexed "
                     "(split it into notes of their own to find the rest)")
        text = text[:_cut_at(text, MAX_NOTE_CHARS)]
    if kind != "changelog" and "\x00" in text:  # (QA round 103-C F6: NUL past the first 8 KB was indexed as is)
        if not wide_unicode_codec(raw):  # (U+0000 in a UTF-16/32 note, as a Windows editor saves it: read silently)
            notes.append(f"{rel_path}: NUL characters read as spaces")
        text = text.replace("\x00", " ")
    if kind == "changelog":
        docs, warnings = parse_changelog(rel_path, text)
        readable = bool(docs) or not warnings
    elif kind == "memory":
        docs, warnings = parse_memory(rel_path, text)
    else:
        docs, warnings = parse_markdown(rel_path, doc_type or "knowledge", text)
        if closed_past_cut:  # (its closing rule is there, past the cut: not "not closed")
            warnings = [w for w in warnings if "frontmatter block is not closed" not in w]
    return docs, notes + warnings, readable
