"""``remember``: a new entry inserted as text into ``core/CHANGELOG.json``, every other byte kept
(see :mod:`dreamdb.writes` for the rules every write follows)."""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamdb.errors import NotFound, UsageError, WriteRefused, param_name
from dreamdb.vault.fences import cr_line_ends
from dreamdb.writes.checks import (_check_text, _clock, _flag, _found, _refused_char, _require_utf8, _text_list,
                                   not_utf8_refusal, refuse_doubled_marks)
from dreamdb.writes.files import (ABSENT, atomic_write_bytes, CHANGED_RETRIES, _check_file_writable,
                                  _check_folder_writable, _check_vault,
                                  _check_writable, COMMITTED, _confined, FileChanged, read_with_identity,
                                  _lock_wait, refuse_os_errors, vault_lock)


#: Evidence-token prefixes accepted in ``remember(references=...)``.
REFERENCE_PREFIXES = ("commit:", "file:", "knowledge:", "feature:", "task:", "url:")
_REFERENCE_RE = re.compile(r"^[a-z][a-z0-9_-]*:(?!//)\S")
"""``kind:value``; a bare URL (``https://…``) is not a kind: write ``url:https://…``."""


CHANGELOG_RELPATH = Path("core") / "CHANGELOG.json"

# Field order of a new CHANGELOG entry: the vault's dominant order.
_ENTRY_ORDER = ("date", "type", "scope", "description", "breaking", "summary",
                "references", "authors", "supersedes")


def changelog_ids(entries: Sequence[Any]) -> list[str]:
    """Return the identity slugs of CHANGELOG entries, in file order.

    Delegates to :func:`dreamdb.vault.parse.changelog_slugs` so writes and the
    index agree: ``<date>-<scope or type>-<n>``, where ``n`` (1-based) counts
    the entries sharing that date and scope from the *oldest* end of the file,
    so adding an entry at the newest end never renames an existing one.

    Args:
        entries: the entry array as parsed from the file.

    Returns:
        One slug per entry (without the ``changelog/`` type prefix).
    """
    from dreamdb.vault.parse import changelog_slugs

    return changelog_slugs(list(entries))


class _ChangelogFile:
    """Where the entry array sits in CHANGELOG.json text, and its style."""

    bom = ""
    """The byte-order mark the file starts with, kept when it is written (``""`` when none)."""
    raw = b""
    """The file's bytes as read (:func:`_read_changelog`)."""
    _ids: tuple[list[str], _EntryIds] | None = None
    cr_only = False
    """Whether its lines end in CR alone (read as LF here, written back as CR)."""

    def __init__(self, text: str) -> None:
        self.text = text
        if not text.strip():  # (not made a new list: an emptied file may be another tool's failed write)
            raise WriteRefused("core/CHANGELOG.json is empty; it was not changed.",
                               hint="If it was emptied by mistake, restore it (git checkout core/CHANGELOG.json); "
                                    "to start a new changelog, write [] into it.")
        try:
            self.data = json.loads(text)
        except ValueError as exc:
            too_long = _too_long_integer(text, exc)
            if too_long:  # (QA round 59 L10: the message quoted Python's sys.set_int_max_str_digits())
                raise WriteRefused(f"core/CHANGELOG.json {too_long}; it was not changed.",
                                   hint="Shorten that number, or write it as a string (in quotes), by hand.") from None
            from dreamdb.vault.conflicts import conflict_words

            conflict = conflict_words(text)
            raise WriteRefused(f"core/CHANGELOG.json is not valid JSON ({conflict or exc}); it was not changed.",
                               hint="Resolve the merge conflict (keep both sides' entries, remove the <<<<<<< ======="
                                    " >>>>>>> lines), then retry." if conflict else
                               "Fix the file by hand (git diff shows what changed).") from exc
        except RecursionError as exc:
            raise WriteRefused("core/CHANGELOG.json is nested too deeply to read; it was not changed.",
                               hint="Fix the file by hand (git diff shows what changed).") from exc
        from dreamdb.vault.parse import MAX_JSON_DEPTH, json_too_deep  # (here: it imports the YAML library)

        if json_too_deep(self.data):  # (as sync refuses it, on every Python: QA round 67 M1)
            raise WriteRefused(f"core/CHANGELOG.json is nested too deeply to read (over {MAX_JSON_DEPTH} levels); it was"
                               " not changed.", hint="Fix the file by hand (git diff shows what changed).")
        if isinstance(self.data, list):
            self.entries = self.data
            self.array_start = len(text) - len(text.lstrip())
            self.array_end = len(text.rstrip())  # one past "]"
            self.depth = 1
        elif isinstance(self.data, dict) and isinstance(self.data.get("entries"), list):
            self.entries = self.data["entries"]
            self.array_start, self.array_end = self._find_entries_array(text)
            self.depth = 2
        else:
            raise WriteRefused(
                "core/CHANGELOG.json is neither a JSON array nor an object with an \"entries\" array; "
                "it was not changed.",
                hint="dreamdb only appends to a bare array or {\"entries\": [...]}.")
        if text[self.array_start] != "[" or text[self.array_end - 1] != "]":
            raise WriteRefused("Cannot locate the entry array in core/CHANGELOG.json; it was not changed.")

    @staticmethod
    def _find_entries_array(text: str) -> tuple[int, int]:
        decoder = json.JSONDecoder()
        ws = re.compile(r"\s*")
        idx = ws.match(text, 0).end()
        if text[idx] != "{":
            raise WriteRefused("Cannot locate the entry array in core/CHANGELOG.json; it was not changed.")
        idx = ws.match(text, idx + 1).end()
        found: tuple[int, int] | None = None
        while text[idx] != "}":
            key, idx = decoder.raw_decode(text, idx)
            idx = ws.match(text, idx).end()
            if text[idx] != ":":
                raise WriteRefused("Cannot parse core/CHANGELOG.json's top-level object.")
            idx = ws.match(text, idx + 1).end()
            _, end = decoder.raw_decode(text, idx)
            if key == "entries":
                found = (idx, end)  # the last duplicate wins, as in json.loads
            idx = ws.match(text, end).end()
            if text[idx] == ",":
                idx = ws.match(text, idx + 1).end()
        if found is None:  # pragma: no cover - json.loads found it
            raise WriteRefused("Cannot locate the entry array in core/CHANGELOG.json.")
        return found

    def entry_ids(self) -> tuple[list[str], _EntryIds]:
        """The entries' :func:`~dreamdb.vault.parse.changelog_bases` and ids, made once for this reading."""
        if self._ids is None:
            from dreamdb.vault.parse import changelog_bases, changelog_slugs

            bases = changelog_bases(self.entries)
            self._ids = (bases, _EntryIds(self.entries, changelog_slugs(self.entries, bases)))
        return self._ids

    def prefers_first(self) -> bool:
        """True when new entries go first: the file is newest-first, or has < 2 dated entries
        (:func:`dreamdb.vault.parse.changelog_newest_first`, the decision its ids are numbered by)."""
        from dreamdb.vault.parse import changelog_newest_first

        return changelog_newest_first(self.entries) is not False

    def ensure_ascii(self) -> bool:
        """Whether new entries are written with ``\\uXXXX`` escapes: the file is ASCII and already uses them."""
        if not self.text.isascii():  # (a generator over every character took 2 s on a 27 MB file)
            return False
        return bool(re.search(r"\\u[0-9a-fA-F]{4}", self.text))

    def insert(self, entry: dict, first: bool) -> str:
        """Return the file text with ``entry`` inserted first or last in the array."""
        text, start, end = self.text, self.array_start, self.array_end
        ensure_ascii = self.ensure_ascii()
        nl = "\r\n" if "\r\n" in text else "\n"  # the file's line ending (a CRLF file stays CRLF)
        # (the array's text is searched where it lies, not copied out of the file's and stripped: QA round 135-E F1)
        lead_end = re.compile(r"\s*").match(text, start + 1, end - 1).end()
        if lead_end == end - 1:  # empty array
            if self.depth == 2 and "\n" not in text.strip():  # one-line {"entries": []}
                body = json.dumps(entry, ensure_ascii=ensure_ascii)
                return text[:start + 1] + body + text[end - 1:]
            unit = self._indent_unit() or "  "
            outer = unit * (self.depth - 1)
            body = self._dump(entry, unit, outer + unit, ensure_ascii, nl)
            return text[:start + 1] + nl + outer + unit + body + nl + outer + text[end - 1:]
        lead = text[start + 1:lead_end]  # whitespace before the first element
        if "\n" in lead:
            elem_indent = lead.rsplit("\n", 1)[1]
            unit = self._indent_unit() or "  "
            body = self._dump(entry, unit, elem_indent, ensure_ascii, nl)
            gap = lead
        else:  # a one-line array: match its separators
            spaced = (re.compile(r"[\]}\"\d el],\s").search(text, start + 1, end - 1)
                      or re.compile(r"\":\s").search(text, start + 1, end - 1))
            sep = (", ", ": ") if spaced else (",", ":")
            body = json.dumps(entry, ensure_ascii=ensure_ascii, separators=sep)
            gap = " " if spaced else ""
        if first:
            pos = start + 1 + len(lead)
            return text[:pos] + body + "," + gap + text[pos:]
        pos = end - 1  # before the whitespace that ends the array (a regex search for it, r"\s*$", went over the
        while pos > start + 1 and text[pos - 1] in " \t\r\n":  # whole text: 50 ms of a 6 MB file, QA round 135-E F1)
            pos -= 1
        return text[:pos] + "," + gap + body + text[pos:]

    def _indent_unit(self) -> str | None:
        """Indent width of the file, read from the first element's first key."""
        m = re.search(r"\n([ \t]+)\{\s*\n([ \t]+)\"", self.text)
        if m and m.group(2).startswith(m.group(1)) and len(m.group(2)) > len(m.group(1)):
            return m.group(2)[len(m.group(1)):]
        m = re.search(r"\n([ \t]+)\S", self.text)
        return m.group(1) if m else None

    @staticmethod
    def _dump(entry: dict, unit: str, elem_indent: str, ensure_ascii: bool, nl: str = "\n") -> str:
        indent: int | str = len(unit) if unit.strip(" ") == "" else unit
        dumped = json.dumps(entry, indent=indent, ensure_ascii=ensure_ascii)
        return dumped.replace("\n", nl + elem_indent)


def _too_long_integer(text: str, exc: ValueError) -> str | None:
    """``"holds an integer too long to read (over 4,300 digits) at line 7"`` when ``exc`` is Python's refusal to
    read a JSON integer longer than ``sys.get_int_max_str_digits()``, else None."""
    m = re.match(r"Exceeds the limit \((\d+)(?: digits)?\) for integer string conversion", str(exc))
    if m is None:
        return None
    limit = int(m.group(1))
    at = re.search(rf"\d{{{limit + 1},}}", text)
    where = f" at line {text.count(chr(10), 0, at.start()) + 1:,}" if at else ""
    return f"holds an integer too long to read (over {limit:,} digits){where}"


def _read_changelog(path: Path, same_as: _ChangelogFile | None = None) -> _ChangelogFile:
    """The file parsed, with the identity of the file read as ``.identity`` (:data:`~dreamdb.writes.files.ABSENT`
    when there is none yet), which the write checks (QA round 59 M2).

    ``same_as``: an earlier reading of the file (``remember``'s, before it waited for the vault lock), returned with
    this reading's identity when the file still holds the same bytes: they parse alike, and every check of them was
    made (QA round 135-E F1: parsed and checked again under the lock, 70 ms of a 6 MB file). The file is read again
    either way: another writer may have changed it."""
    if path.is_dir():
        raise WriteRefused(f"{path} is a folder, not a file; nothing was changed.",
                           hint="core/CHANGELOG.json must be a JSON file: move the folder away, then retry.")
    with refuse_os_errors(path, "read"):
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):  # reading a pipe would wait forever (QA round 19)
                raise WriteRefused(f"{path} is not a regular file (a pipe, device or socket); nothing was changed.",
                                   hint="core/CHANGELOG.json must be a JSON file: move this one away, then retry.")
            raw, seen = read_with_identity(path)
        except FileNotFoundError:
            raw, seen = b"[]\n", ABSENT
    if same_as is not None and raw == same_as.raw:
        same_as.identity = seen
        return same_as
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8_refusal("core/CHANGELOG.json", raw) from exc
    # A byte-order mark (a Windows editor's) is not part of the JSON (RFC 8259 §8.1 lets a reader ignore it, as
    # sync does): the entry is inserted after it and the mark kept, as every other byte of the file is.
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text[len(bom):]
    refuse_doubled_marks(text, "core/CHANGELOG.json")
    # classic Mac line ends (CR alone): edited as lines and written back with CRs, as a note is (QA round 121-A F7:
    # the entry was written on one line, glued to the next)
    cr_only = cr_line_ends(text) and "\n" not in text
    changelog = _ChangelogFile(text.replace("\r", "\n") if cr_only else text)
    changelog.identity = seen
    changelog.raw = raw
    changelog.bom = bom
    changelog.cr_only = cr_only
    return changelog


class _EntryIds:
    """The ids of one reading of a CHANGELOG's entries (:func:`changelog_ids`) and what ``supersedes`` looks up in
    them, each made once: under the vault lock, ``remember`` slugged every entry again for each lookup, a
    ``supersedes`` of each of the file's entries included (QA round 135-E F1: 1.9 s of a 5,000-entry file).

    Args:
        entries: the entry array as parsed from the file.
        ids: their ids, when the caller has them.
    """

    def __init__(self, entries: Sequence[Any], ids: list[str] | None = None) -> None:
        self.entries = entries
        self.ids = changelog_ids(entries) if ids is None else ids
        self.known = frozenset(self.ids)
        self._legacy: dict[tuple[str, str], list[str]] | None = None
        self._by_day: dict[tuple[str, str], list[str]] | None = None

    def legacy(self, when: str, label: str) -> list[str]:
        """The ids of the entries dated ``when`` whose scope (or, without one, type) is ``label``, in file order."""
        if self._legacy is None:
            self._legacy = {}
            for i, e in enumerate(self.entries):
                if isinstance(e, dict):
                    self._legacy.setdefault((str(e.get("date")), str(e.get("scope") or e.get("type"))), []).append(
                        self.ids[i])
        return self._legacy.get((when, label), [])

    def by_day(self, day: str, label: str) -> list[str]:
        """The ids of the entries whose id's day (:func:`dreamdb.vault.parse._slug_date`: ``2026-08-18`` of a date
        written ``20260818T120000Z``) is ``day`` and whose scope (or, without one, type) is ``label``, in file order."""
        if self._by_day is None:
            from dreamdb.vault.parse import _slug_date

            self._by_day = {}
            for i, e in enumerate(self.entries):
                if isinstance(e, dict):
                    self._by_day.setdefault((_slug_date(e.get("date")), str(e.get("scope") or e.get("type"))),
                                            []).append(self.ids[i])
        return self._by_day.get((day, label), [])


def _bare_id(ref: str) -> str:
    """``ref`` stripped, without the square brackets or quotes dreamdb writes around an id (the prompt hook's block
    prints ``[changelog/<id>]``, :func:`dreamdb.output.typable_id` a quoted id: as ``update`` and ``delete`` read
    them, :func:`dreamdb.writes.locate._slug_text`; QA round 139-D F7) and without a ``changelog/`` or ``changelog:``
    prefix."""
    from dreamdb.writes.locate import _slug_text

    ident = _slug_text(ref.strip()).strip()
    for prefix in ("changelog/", "changelog:"):
        if ident.startswith(prefix):
            ident = ident[len(prefix):]
    return ident


def _resolve_supersedes(ref: str, entries: Sequence[Any], ids: _EntryIds | None = None) -> str:
    """Map ``[changelog/|changelog:]<id>`` or ``<date>|<scope>`` to the entry's stable id (``ids``: the
    entries' ids, when the caller has them).

    Raises:
        UsageError: ``ref`` is empty (or only a prefix), or names several entries.
        NotFound: no entry has that id.
    """
    ident = _bare_id(ref)
    if not ident.strip():
        raise UsageError("The entry to supersede is named by an empty id.",
                         hint="Use an entry id (changelog/<date>-<scope>-<n>, as recall shows it) or <date>|<scope>,"
                              " or name none to supersede nothing.")
    ids = _EntryIds(entries) if ids is None else ids
    hits = _entries_named(ident, ids, by_day=True)
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise UsageError(f"{ref!r} matches {len(hits)} CHANGELOG entries: {', '.join(hits)}.",
                         hint="Name one of them by its id.")
    close = difflib.get_close_matches(ident, ids.ids, n=3, cutoff=0.6)
    raise NotFound(f"No CHANGELOG entry {ref!r} to supersede.",
                   hint=("Close matches: " + ", ".join(close)) if close else
                   "Use an entry id (changelog/<date>-<scope>-<n>, as recall shows it) or <date>|<scope>.")


def _names_entry(ref: str, ids: _EntryIds) -> str | None:
    """The id of the entry an existing entry's ``supersedes`` names (an id, or the ``<date>|<scope>`` form the
    real vault writes: QA round 76 F5), or ``None`` when it names none or several, as :func:`_resolve_supersedes`
    reads it (without its close matches, which only an error shows)."""
    hits = _entries_named(_bare_id(ref), ids)
    return hits[0] if len(hits) == 1 else None


def _entries_named(ident: str, ids: _EntryIds, by_day: bool = False) -> list[str]:
    """The ids of the entries ``ident`` (an id without its prefix, or ``<date>|<scope>``) names: itself when it is
    an entry's id, else those of that date as written and scope (or type), in file order; ``[]`` for none.
    ``by_day``: when no date is written so, those whose id's day it is (:meth:`_EntryIds.by_day`: ``2026-08-18|runner``
    of an entry dated ``20260818T120000Z``, as its id and ``list`` show it; QA round 149-A F3, it was "no
    entry"). Only ``remember --supersedes`` reads it so: an existing entry's ``supersedes`` is read as the index reads
    it (:class:`dreamdb.vault.parse.SupersedesResolver`, the date as written)."""
    if ident in ids.known:
        return [ident]
    if "|" not in ident:
        return []
    when, label = (part.strip() for part in ident.partition("|")[::2])
    return ids.legacy(when, label) or (ids.by_day(when, label) if by_day else [])


MAX_ID_PART_CHARS = 64
"""Longest ``type`` or ``scope`` :func:`remember` writes (characters): the scope, or the type when there is none,
is part of the entry's id (``<date>-<scope>-<n>``), which recall, ``list`` and the hook print on every line."""


def remember(
    vault: Path,
    text: str,
    *,
    type: str = "note",  # noqa: A002 - the CHANGELOG field's name
    scope: str | None = None,
    summary: str | None = None,
    references: Iterable[str] = (),
    supersedes: str | None = None,
    authors: Iterable[str] = (),
    breaking: bool = False,
    now: datetime | None = None,
    lock_timeout: float | None = None,
) -> dict:
    """Add a new entry to the vault's ``core/CHANGELOG.json``.

    The entry goes where this vault puts new entries: first when the file is
    newest-first (the reference convention, and the choice for a file with
    fewer than two dated entries), last when its dates ascend or tie, and
    never where it would rename an existing entry's id (see
    :func:`changelog_ids`). It is inserted as text, so every other byte of
    the file stays as it was; the file is created as an array if it does not
    exist.

    Args:
        vault: the ``_dream_context`` folder.
        text: the entry's ``description`` (free text, may span lines).
        type: the entry's ``type`` (``note``, ``feat``, ``fix``, ``decision``…), one line.
        scope: the entry's ``scope`` (area of the project), one line; written
            as ``""`` when omitted, and the id then uses the type.
        summary: one-line headline (soft cap 200 characters, not enforced).
        references: evidence tokens, each starting with one of
            a lowercase kind and a colon: the SPEC's :data:`REFERENCE_PREFIXES`
            (``commit:<sha>``, ``file:<path>``, ``knowledge:<slug>``,
            ``feature:<slug>``, ``task:<slug>``, ``url:<href>``) or the vault's
            own kinds (``pr:``, ``decision:``…). One string is one reference; ``None``, none.
        supersedes: id of the entry this one replaces, as recall shows it
            (``[changelog/]<date>-<scope>-<n>``, see :func:`changelog_ids`),
            or the vault's legacy ``<date>|<scope>`` form when that names
            exactly one entry. Stored as the bare id (``<date>-<scope>-<n>``).
        authors: author handles (a list, one string, or ``None``), stored as ``authors`` when not empty.
        breaking: the entry's ``breaking`` flag.
        now: the clock; the entry's ``date`` is ``now``'s calendar date in
            ``now``'s own time zone (local time when ``None``), or, where that date would renumber an existing
            entry and ``now``'s instant would not, ``now`` itself to the second (``2026-08-18T13:43:00Z``, or with
            ``now``'s offset): a date alone is read as that day's midnight UTC, before the day's entries of the same
            scope dated with a time of day (QA round 152-A F10).
        lock_timeout: seconds to wait for another writer's vault lock (default 10; ``Index`` passes its
            ``lock_timeout_ms``).

    Returns:
        The entry as written (its fields in file order) plus ``"id"``, its
        changelog slug, e.g. ``2026-08-18-recall-1``.

    Raises:
        UsageError: empty text, multi-line type/scope/summary, references or authors that are not
            strings, a reference
            without an accepted prefix, a ``<date>|<scope>`` supersedes that
            matches several entries; ``breaking`` not a bool, ``now`` neither a
            datetime nor an ISO-8601 string.
        NotFound: ``supersedes`` names no existing entry.
        WriteRefused: CHANGELOG.json is invalid JSON, not UTF-8, or neither an
            array nor ``{"entries": [...]}`` (the file is left untouched); ``core`` is a symlinked folder (which a
            sync does not follow); the vault or its ``core`` folder is read-only (no write bit: refused even for
            root, before anything is written); another program kept writing the file between
            dreamdb's read and its rename (:class:`~dreamdb.writes.files.FileChanged`,
            after :data:`~dreamdb.writes.files.CHANGED_RETRIES` more tries).
        LockTimeout: another writer held the vault lock too long.
        VaultNotFound: ``vault`` is not a folder.
    """
    wait = _lock_wait(lock_timeout)  # (checked before anything is read)
    references = _text_list("references", references)  # read once (an iterator could not be read twice)
    authors = _text_list("authors", authors)
    if supersedes is not None and not isinstance(supersedes, str):
        raise UsageError(f"supersedes must be an entry id (a string), got {supersedes!r}; nothing was changed.")
    COMMITTED.set(None)  # (this write's change, once it is on disk)
    _require_utf8(text=text, type=type, scope=scope, summary=summary, supersedes=supersedes,
                  references=references, authors=authors)
    vault = _check_vault(vault)
    text = _check_text("The entry text", text,  # (QA round 97-C F9: no hint; a lone CR stored as LF, 143-C F4)
                       hint="Give the text as an argument, with --file FILE, or - to read it from standard input.")
    _check_text("type", type, allow_newlines=False)
    if scope is not None and scope != "":
        _check_text("scope", scope, allow_newlines=False)
    for name, value in (("type", type), ("scope", scope or "")):
        if len(value.strip()) > MAX_ID_PART_CHARS:  # (QA round 51: a 5,000-character type became the entry's id)
            raise UsageError(f"{param_name(name)} is {len(value.strip()):,} characters long; at most"
                             f" {MAX_ID_PART_CHARS} are allowed (it becomes part of the entry's id); nothing was"
                             " changed.", hint=f"Give a short {param_name(name)}, e.g. 'decision' or 'recall'; the"
                                               " text holds the rest.")
    if summary is not None:
        _check_text("summary", summary, allow_newlines=False)
    refs = [r.strip() for r in references]
    for ref in refs:
        at = _refused_char(ref)  # (QA round 48: a newline in a reference was saved; 54: a bidi override, tags)
        if at is not None:
            raise UsageError(f"Reference {ref!r} must be one line of text, without control characters such as a"
                             " newline or a tab, bidirectional overrides or invisible characters such as Unicode"
                             f" tags (found {_found(ref, at)}); nothing was changed.",
                             hint="Give the reference on one line without that character, e.g. commit:abc1234.")
        if not _REFERENCE_RE.match(ref):
            raise UsageError(f"Reference {ref!r} is not a prefixed evidence token.",
                             hint="Write <kind>:<value>, e.g. " + ", ".join(p + "…" for p in REFERENCE_PREFIXES)
                             + " (the vault's own kinds such as pr: or decision: work too).")
    author_list = [_check_text("author", a, allow_newlines=False).strip() for a in authors]
    _flag("breaking", breaking)
    clock = _clock(now)
    entry: dict[str, Any] = {
        "date": clock.date().isoformat(),
        "type": type.strip(),
        "scope": (scope or "").strip(),
        "description": text,
        "breaking": bool(breaking),
    }
    if summary is not None:
        entry["summary"] = summary.strip()
    if refs:
        entry["references"] = refs
    if author_list:
        entry["authors"] = author_list

    path = vault / CHANGELOG_RELPATH
    # Check first (nothing created yet): a refused write leaves no trace, not even .dreamdb/.
    from dreamdb.vault.discover import folder_link, misnamed_changelog

    link = folder_link(vault, CHANGELOG_RELPATH.parent.as_posix())
    if link is not None:  # (QA round 144-E F3: the entry was written through it, and a sync followed it for the memory
        # file alone)
        raise WriteRefused(f"{link} is a symlinked folder, which a sync does not follow: an entry written to"
                           f" {CHANGELOG_RELPATH.as_posix()} through it would never be indexed. Nothing was changed.",
                           hint=f"Make {link} a folder of the vault (move the folder it links to in its place), then"
                                " retry.")
    misnamed = misnamed_changelog(vault)
    if misnamed and not os.path.lexists(path):  # (a second changelog beside it would hide it: QA round 94-A F2)
        raise WriteRefused(f"{misnamed[0]} is the vault's changelog named in another case; dreamdb reads and writes"
                           f" {CHANGELOG_RELPATH.as_posix()} only, and a new one beside it would leave {misnamed[0]}"
                           " out of every sync. Nothing was changed.",
                           hint=f"Rename it: mv '{vault / misnamed[0]}' '{path}'")
    precheck = _read_changelog(_confined(vault, path))
    if supersedes is not None:  # (an entry that is not there is said before a read-only vault, file or folder, as
        # update and delete say a missing note: QA round 152-F F3, exit 6 here and 7 from delete)
        _resolve_supersedes(supersedes, precheck.entries, precheck.entry_ids()[1])
    _check_writable(vault)
    _check_file_writable(path)
    _check_changelog_folder(path)
    with vault_lock(vault, wait), refuse_os_errors(path):
        for attempt in range(CHANGED_RETRIES + 1):
            try:
                return _insert_entry(vault, path, entry, supersedes, precheck, dated_at=_instant_date(clock))
            except FileChanged:  # another program wrote the file since it was read (QA round 59 M2): read it again
                if attempt == CHANGED_RETRIES:
                    raise
    raise AssertionError("unreachable")  # pragma: no cover


def _check_changelog_folder(path: Path) -> None:
    """:func:`~dreamdb.writes.files._check_folder_writable` for the folder ``CHANGELOG.json`` (``path``) is written
    in, ``core/`` (or, where it is not there yet, the vault folder it would be made in).

    Raises:
        WriteRefused: that folder is read-only (no write bit: even for root, QA round 150-C F1).
    """
    _check_folder_writable(path.parent, f"remember writes {CHANGELOG_RELPATH.as_posix()} there", "to remember")


def _instant_date(clock: datetime) -> str:
    """``clock`` as an entry's date with its time of day, to the second: ``Z`` for UTC (or a naive clock, read as
    UTC), else its own offset, so that the date part is the calendar date :func:`remember` writes alone."""
    offset = clock.utcoffset()
    if offset is None or not offset:
        return clock.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"
    return clock.isoformat(timespec="seconds")


def _latest_of(entries: list, date: str) -> bool:
    """Whether no entry of ``entries`` is dated after the instant ``date`` (each read as the parser reads it,
    :func:`~dreamdb.vault.parse.changelog_entry_instant`; one whose date cannot be read is left out)."""
    from dreamdb.vault.parse import changelog_entry_instant

    at = changelog_entry_instant({"date": date})
    return at is not None and all(t is None or t <= at for t in map(changelog_entry_instant, entries))


def _insert_entry(vault: Path, path: Path, entry: dict[str, Any], supersedes: str | None,
                  read_before: _ChangelogFile | None = None, dated_at: str | None = None) -> dict:
    """Under the vault lock: read CHANGELOG.json, insert ``entry`` (its ``supersedes`` resolved in the file as it
    is now), write it; :func:`remember`'s result. ``read_before``: the file as :func:`remember` read it before it
    took the lock, whose parse is used again if the file is unchanged (:func:`_read_changelog`). ``dated_at``: the
    entry's date with the clock's time of day, written instead of its date alone where that alone would renumber an
    existing entry and this would not (the day's entries of its scope all dated with a later time of day than
    midnight, which the date alone is read as: QA round 152-A F10).

    Raises:
        FileChanged: another program wrote the file between the read and the rename (nothing was changed).
        WriteRefused, UsageError, NotFound: as :func:`remember`.
    """
    from dreamdb.vault.parse import changelog_bases, changelog_entry_instant, changelog_slugs

    path = _confined(vault, path)
    changelog = _read_changelog(path, read_before)  # (again: another writer may have changed it since the first read)
    # Each entry's id part is made once, and the file numbered again with the new entry at either end from those
    # parts; supersedes looks up the same ids (QA round 135-E F1: every entry slugged twice or three times, and once
    # per entry that supersedes another, all under the vault lock other writers queue for)
    bases, ids = changelog.entry_ids()
    old_ids = ids.ids
    entry = dict(entry)
    if supersedes is not None:
        entry["supersedes"] = _resolve_supersedes(supersedes, changelog.entries, ids)
    entry = {k: entry[k] for k in _ENTRY_ORDER if k in entry}
    new_base = changelog_bases([entry])[0]
    preferred = changelog.prefers_first()
    # the date alone first (what remember writes wherever it renumbers nothing), else the clock's instant where no
    # entry is dated after it (an entry dated tomorrow is refused either way; every date read only then)
    placed, day = False, entry["date"]
    for when in (day, dated_at):
        if when is not day and (when is None or when == day or not _latest_of(changelog.entries, when)
                                or changelog_bases([{**entry, "date": when}])[0] != new_base):
            break
        entry["date"] = when
        for first in (preferred, not preferred):
            index = 0 if first else len(changelog.entries)
            expected_entries = list(changelog.entries)
            expected_entries.insert(index, entry)
            new_ids = changelog_slugs(expected_entries, bases[:index] + [new_base] + bases[index:])
            if new_ids[:index] + new_ids[index + 1:] == old_ids:
                placed = True  # this position renames no existing entry
                break
        if placed:
            break
    if not placed:  # an entry dated after the new one (tomorrow's) turns the file's order: either end renames one
        moved = next(f"changelog/{a} would become changelog/{b}" for a, b in zip(old_ids, new_ids[:index] + new_ids[index + 1:])
                     if a != b)
        # (the latest by its instant, as the file's order is told: 2026-230T23:00Z is after 2026-08-18T20:00Z)
        ahead = max(((t, str(e.get("date"))) for e in changelog.entries if (t := changelog_entry_instant(e)) is not None),
                    default=(0.0, max((str(e.get("date")) for e in changelog.entries
                                       if isinstance(e, dict) and e.get("date")), default="")))[1]
        raise WriteRefused(f"Adding the entry would renumber an existing one ({moved}): core/CHANGELOG.json holds an "
                           f"entry dated after it ({ahead}); nothing was written.",
                           hint="Correct that entry's date if it is a mistake (ids count the entries of one date and "
                                "scope from the oldest end, which a later date moves), or give the new entry another "
                                "scope (--scope, scope= in Python).")
    new_text = changelog.insert(entry, first)
    # Verify before writing: the same data plus exactly our entry.
    try:
        parsed = json.loads(new_text)
    except ValueError as exc:  # pragma: no cover - a bug, never written
        raise WriteRefused("Internal error: the edited CHANGELOG.json would not parse; nothing written.") from exc
    got = parsed if changelog.depth == 1 else parsed.get("entries")
    if got != expected_entries:  # pragma: no cover - a bug, never written
        raise WriteRefused("Internal error: the edited CHANGELOG.json would not match; nothing written.")
    _check_changelog_folder(path)  # (again under the lock, before core/ is made or the file written in it)
    path.parent.mkdir(exist_ok=True)  # (core/ in the vault as it is: never the vault itself, QA round 62 H1)
    # (named in the record: an interruption after the write says which entry was saved, QA round 81-A F11)
    if changelog.cr_only:
        new_text = new_text.replace("\n", "\r")
    atomic_write_bytes(path, (changelog.bom + new_text).encode("utf-8"), commit=f"entry changelog/{new_ids[index]}",
                       expect=changelog.identity)
    out = {**entry, "id": new_ids[index]}
    if "supersedes" in entry:  # an entry superseded before: said, with its successors (QA round 74 F12)
        target = entry["supersedes"]
        earlier = [old_ids[i] for i, e in enumerate(changelog.entries)
                   if isinstance(e, dict) and isinstance(e.get("supersedes"), str)
                   and _names_entry(e["supersedes"], ids) == target]
        if earlier:
            out["already_superseded_by"] = [f"changelog/{i}" for i in sorted(earlier)]
    return out
