"""Naming a markdown document to write: ``type/slug``, a bare slug, the id recall prints or a
vault-relative path, resolved to one file inside the vault (:func:`find_document`), with refusals for
ids that moved to another file or were removed."""

from __future__ import annotations

import difflib
import os
import re
import time
import unicodedata
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from shlex import quote as shlex_quote
from typing import Any

from dreamdb.errors import (OPEN_FILES_HINT, DreamdbError, NotFound, UsageError, WriteRefused, open_files_reason,
                            short_of_files)
from dreamdb.output import some_of, typable_id, untypable
from dreamdb.vault.discover import (VAULT_DIR_NAME, accent_twins, folder_link, twin_clause, twins_reason,
                                    in_archive, is_utf8, name_on_disk, walk)
from dreamdb.writes.checks import _bad_char, _require_utf8
from dreamdb.writes.files import _check_vault, _resolves_inside, _trash_root, trash_name


#: Document types stored one per markdown file, and where their files live:
#: (folder relative to the vault, recursive?). ``knowledge`` excludes
#: ``knowledge/features/`` (those are features).
MARKDOWN_TYPES: dict[str, tuple[tuple[str, bool], ...]] = {
    "knowledge": (("knowledge", True),),
    "feature": (("knowledge/features", True), ("core/features", False)),
    "task": (("state", False),),
    "objective": (("core/objectives", False),),
    "insight": (("lab/insights", False),),
    "thesis": (("theses", False),),
}

_NON_FILE_TYPES = ("memory", "changelog", "bookmark", "capture")


def _iter_markdown(vault: Path, doc_type: str) -> Iterator[Path]:
    for rel, recursive in MARKDOWN_TYPES[doc_type]:
        root = vault / rel
        # (a folder a sync does not follow, state/ or core/ a link: QA round 144-E F1, update task/t1 edited its note)
        if folder_link(vault, rel) is not None or not root.is_dir():
            continue
        if recursive:
            for folder, dirs, files in walk(root):
                here = Path(folder)
                # (no hidden folder, and no vault of its own inside this one, which a sync skips: QA round 101-A F1)
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != VAULT_DIR_NAME)
                if doc_type == "knowledge" and here == vault / "knowledge":
                    dirs[:] = [d for d in dirs if d != "features"]
                for name in sorted(files):
                    if name.endswith(".md") and not name.startswith("."):
                        yield here / name
        else:
            for name in sorted(os.listdir(root)):
                if name.endswith(".md") and not name.startswith(".") and (root / name).is_file():
                    yield root / name


def _skipped_namesakes(vault: Path, doc_type: str | None, bare: str) -> list[tuple[str, str]]:
    """The files a sync skips for their extension (``.MD``, ``.markdown``: :func:`dreamdb.vault.discover.misnamed_note`,
    as ``status`` lists them, :func:`~dreamdb.vault.discover.cased_markdown`) that, renamed to ``.md``, would be the
    note named ``bare`` (of ``doc_type``, if given), names compared NFC-normalised and case-folded (``kafka`` finds
    ``KAFKA.MD``): ``(vault-relative path, type/name the note would then be named by)``, in path order. Walks the
    vault: for a name no note has, only."""
    from dreamdb.vault.discover import cased_markdown, classify, misnamed_note

    # (the skipped file's own name too: knowledge/KAFKA.MD names knowledge/KAFKA.MD)
    keys = {unicodedata.normalize("NFC", n).casefold() for n in (bare, (misnamed_note(bare) or ".md")[:-3]) if n}
    found = []
    for rel in cased_markdown(vault, limit=1 << 30)[1]:
        folder, _, name = rel.rpartition("/")
        fixed = misnamed_note(name)
        kind = classify(f"{folder}/{fixed}" if folder else fixed) if fixed else None
        stem = unicodedata.normalize("NFC", fixed[:-3]) if fixed else ""
        if kind is not None and (doc_type is None or kind[1] == doc_type) and stem.casefold() in keys:
            found.append((rel, f"{kind[1]}/{stem}"))
    return found


def _refuse_skipped_namesakes(vault: Path, slug: str, bare: str, skipped: list[tuple[str, str]]) -> None:
    """Raise NotFound for ``slug`` (of the name ``bare``), naming the files of :func:`_skipped_namesakes` (``skipped``,
    at least one) and what to do: rename to ``.md`` (:func:`dreamdb.vault.discover.rename_advice`, which says where
    that name is taken), then name it as it is named then where ``bare`` is written in another case."""
    from dreamdb.vault.discover import misnamed_note, rename_advice, renames_advice

    paths = [rel for rel, _ in skipped]
    if len(skipped) == 1:
        rel, then = skipped[0]
        name = rel.rpartition("/")[2]
        ext = name[len(misnamed_note(name)) - 3:]
        advice = rename_advice(vault, rel)
        again = (" run this again" if then.rpartition("/")[2] == unicodedata.normalize("NFC", bare) else
                 f" name it {typable_id(then)}")
        raise NotFound(f"No document {slug!r} in the vault: {rel} is skipped (the extension {ext} is not .md"
                       f"{' in lower case' if ext.lower() == '.md' else ''}, the only one dreamdb reads).",
                       hint=f"{advice[:1].upper()}{advice[1:]}, then{again}.")
    advice = renames_advice(vault, paths, "rename the one meant")
    raise NotFound(f"No document {slug!r} in the vault: {some_of(paths, sep=' and ' if len(paths) == 2 else ', ')}"
                   " are skipped (their extensions are not .md, the only one dreamdb reads).",
                   hint=f"{advice[:1].upper()}{advice[1:]}, then run this again.")


_FOLDERS_HINT = ("A document is named type/slug (knowledge/my-note), by the id recall prints (knowledge/my-note-2) "
                 "or by its path relative to the vault (knowledge/decisions/my-note.md).")


def _slug_text(slug):
    """A path-like name as text (``Path("knowledge/x.md")`` names that file), as shown typed back
    (:func:`_typed_back`); other non-text is refused.

    Raises:
        UsageError: ``slug`` is not text or a path.
    """
    if isinstance(slug, os.PathLike):
        slug = os.fspath(slug)
    if not isinstance(slug, str):
        raise UsageError(f"A document name must be text such as 'knowledge/my-note', got {type(slug).__name__} {slug!r}.")
    return _typed_back(_unbracketed(slug))


def _unbracketed(slug):
    """``slug`` without the square brackets the prompt hook's block writes around an id (``[knowledge/x]``), copied
    with it (QA round 132-C F3: "is not a document file of the vault", no "Did you mean"); the block's ids are
    ``type/slug``, and no document's path starts with ``[``, whose folder would be no type's. Anything else as it
    is: a name without a ``/`` in the brackets is a note's own (``[draft]`` is ``[draft].md``, not ``draft.md``:
    QA round 135-A F2)."""
    if _wrapped(slug, "[", "]"):
        return slug[1:-1]
    return slug


def _wrapped(slug, opening: str, closing: str) -> bool:
    """Whether ``slug`` is a ``type/slug`` id between ``opening`` and ``closing``, as dreamdb writes ids around
    (:func:`_unbracketed`, :func:`_typed_back`): never a bare slug, which may be a file's name as written."""
    return (isinstance(slug, str) and len(slug) >= 2 and slug[0] == opening and slug[-1] == closing
            and "/" in slug[1:-1])


_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})")


def _typed_back(slug: str) -> str:
    """A name as :func:`dreamdb.output.typable_id` shows it, typed back: in quotes, the quotes dropped and each
    ``\\uXXXX`` it writes (:func:`_unescaped`) made that character again (QA round 87 L4: the form shown could not be
    passed back). Any other name is returned as it is: one shown without quotes, or an id as ``--json`` gives it, is
    taken literally (QA round 132-B F1: ``knowledge/data\\u200bbase``, a backslash typed, named the note holding a
    zero-width space; :func:`_find_document` reads the escapes only when no file is named so). The quoted form is of
    a whole id, ``type/slug``: a bare ``"qq"`` names the note ``"qq".md`` (QA round 135-A F2)."""
    if _wrapped(slug, '"', '"'):
        return _unescaped(slug[1:-1])
    return slug


def _unescaped(name: str) -> str:
    """``name`` with each ``\\uXXXX`` that :func:`dreamdb.output.typable_id` writes (a character
    :func:`dreamdb.output.untypable`, ``\\u200b``, or a backslash, ``\\u005c``) made that character; any other
    escape is left as it is. Read in one pass: ``\\u005cu200b`` is a backslash and ``u200b``."""
    if "\\u" not in name:
        return name

    def char(m: re.Match) -> str:
        c = chr(int(m.group(1), 16))
        return c if c == "\\" or untypable(c) else m.group(0)

    return _ESCAPED.sub(char, name)


def _refuse_control_chars(text: str, original: str) -> None:
    """Raise UsageError when a name holds a control character: such a file is found by recall (shown with
    ``␉``/``␊``) but not written by dreamdb, whose names must survive every shell and terminal."""
    if _bad_char(text):
        from dreamdb.output import visible_field

        shown = visible_field(original)
        raise UsageError(f"{shown!r} holds a control character (tab, newline…); dreamdb does not edit or delete"
                         " files with such names.", hint="Rename the file without it (e.g. with mv), then retry.")


def _check_rel_path(rel: str, original: str) -> str:
    """Validate a vault-relative POSIX path (lexically); return it without its ``.`` and empty segments
    (``./knowledge//a.md`` → ``knowledge/a.md``).

    Raises:
        UsageError: absolute (:func:`_inside_vault` has made one inside the vault relative), ``..`` or
            ``.``-prefixed (hidden/archive) segments, nothing left,
            backslashes where they separate paths (Windows), or control characters.
    """
    if os.path.isabs(rel) or rel.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", rel):
        what = ("starts with ~ (a home folder)" if rel.startswith("~") else "is an absolute path with a '..' in it"
                if ".." in rel.replace("\\", "/").split("/") else "is an absolute path outside the vault")
        raise UsageError(f"{original!r} {what}; dreamdb only edits files inside the vault.",
                         hint="Give the path relative to the vault, e.g. knowledge/decisions/my-note.md, or the"
                              " absolute path of a note in it (as recall prints it).")
    # a "." segment or a doubled "/" names the same file (knowledge/./note.md, knowledge//note.md: QA round 70 B-L2)
    parts = [part for part in rel.split("/") if part not in (".", "")] or [""]
    rel = "/".join(parts)
    _refuse_control_chars(rel, original)
    # (a backslash is a letter of a name but where it separates paths: QA round 90-C F4)
    if (("\\" in rel and "\\" in (os.sep, os.altsep)) or any(not part or part.startswith(".") for part in parts)):
        why = ("has a '..' segment" if ".." in parts else "names a hidden (.name) file or folder"
               if any(part.startswith(".") for part in parts) else "is not a document slug or a path inside the vault")
        raise UsageError(f"{original!r} {why}.",  # (QA round 127-B F5: "not … inside the vault", of k/../k/x.md)
                         hint=_FOLDERS_HINT + " '..' and hidden (.name) files and folders are refused; an absolute path"
                                              " must be inside the vault.")  # (QA round 114-B F8: "are refused")
    return rel


def _parse_slug(slug: str) -> tuple[str | None, str | None, str | None]:
    """Split a document name into ``(type, bare slug, vault-relative path)``.

    * ``slug`` / ``type/slug`` (``.md`` optional): ``(type or None, slug, None)``;
      ``type/slug.md`` also gives the path ``type/slug.md`` (tried first: it
      names one file when a folder of that name exists, as ``knowledge/``).
    * anything else with a ``/``: a path, ``(None, None, "a/b/c.md")``
      (``.md`` added when missing); it must lie in a document folder.

    Only the text is checked here; nothing is read.

    Raises:
        UsageError: empty, NUL/control characters, a ``..`` segment, absolute paths,
            hidden segments, backslashes in a path (in a file name only where they separate
            paths); a changelog/memory/bookmark id; a path outside the document folders.
    """
    from dreamdb.vault.discover import classify

    if not isinstance(slug, str) or not slug.strip():
        raise UsageError("The slug is empty.", hint="Name a document as type/slug or slug.")
    # Only line ends are trimmed (a pasted id): spaces may be part of a file's name, and the id recall
    # prints for "foo .md" is "knowledge/foo " (QA round 19: stripping it made delete hit foo.md).
    raw = slug.strip("\r\n")
    if "\x00" in raw:
        raise UsageError("The slug contains a NUL character.")
    head, sep, rest = raw.partition("/")
    if sep and head in _NON_FILE_TYPES:
        if head == "changelog":
            raise UsageError("CHANGELOG entries are append-only.",
                             hint="Record a correction with remember --supersedes <id>.")
        from dreamdb.vault.discover import MEMORY_FILE

        # (QA round 97-C F8: "Edit the source file by hand" named no file)
        where = f"{MEMORY_FILE} in the vault" if head == "memory" else "the path recall --json gives for it"
        raise UsageError(f"{head} documents cannot be edited or deleted by slug.",
                         hint=f"Edit the source file by hand: {where}.")
    if not sep or (head in MARKDOWN_TYPES and "/" not in rest):
        doc_type = head if sep else None
        bare = rest if sep else raw
        rel = None
        if sep and bare.endswith(".md"):
            rel = raw  # knowledge/foo.md: the file knowledge/foo.md, if there is one
        if bare.endswith(".md"):
            bare = bare[:-3]
        _refuse_control_chars(bare, slug)
        # (one file name, no "/": ".." inside it is no step up, as in "So... what now", and "\\" is a letter but where
        # it separates paths; QA round 90-C F4: notes so named were indexed and could be neither updated nor deleted)
        if (not bare or bare in (".", "..") or ("\\" in bare and "\\" in (os.sep, os.altsep)) or bare.startswith(".")
                or os.path.isabs(bare)):
            hidden = bare.startswith(".") and bare not in (".", "..")  # (QA round 128-A F7: "not a document slug")
            raise UsageError(f"{slug!r} {'names a hidden (.name) file' if hidden else 'is not a document slug'}.",
                             hint=_FOLDERS_HINT + (" Hidden (.name) files are not indexed or edited." if hidden else ""))
        if rel is not None:
            rel = _check_rel_path(rel, slug)
            kind = classify(rel)
            if kind is None or kind[0] != "markdown":
                rel = None
        return doc_type, bare, rel
    rel = _check_rel_path(raw, slug)
    kind = classify(rel)
    if kind is None and not rel.endswith(".md"):
        rel += ".md"
        kind = classify(rel)
    if kind is not None and kind[0] == "memory":
        raise UsageError(f"{rel} holds the memory sections (memory/<section>); dreamdb does not edit it.",
                         hint="Edit the file by hand.")
    if kind is not None and kind[0] == "changelog":
        raise UsageError(f"{rel} holds the changelog entries; dreamdb only appends to it.",
                         hint='Add an entry with dreamdb remember "…" (--supersedes ID replaces an older one).')
    if kind is None or kind[0] != "markdown":
        folders = ", ".join(sorted({f + "/" for spec in MARKDOWN_TYPES.values() for f, _ in spec}))
        raise UsageError(f"{slug!r} is not a document file of the vault.",
                         hint=f"Documents are the .md files under {folders} (paths are relative to the vault).")
    return None, None, rel


def _document_at(vault: Path, rel: str, *, exact: bool = False) -> tuple[str, Path] | None:
    """``(type, path)`` of the markdown document at the vault-relative ``rel``, or ``None`` if no such file.

    ``rel`` is checked lexically (see :func:`_check_rel_path`) and must be in
    a document folder, reached through no folder link (:func:`_refuse_folder_link`); the path is not resolved
    (callers confine it). Its names are the file's and folders' own on disk (:func:`_spelled_on_disk`): a name the
    file system takes in another case reaches its file by the file's name, and, unless ``exact``, a name that
    differs from the file's only in Unicode normalisation (NFC/NFD) finds it too; with ``exact``, only the name as
    the folders list it.

    Raises:
        WriteRefused: a folder on the way is a symbolic link.
    """
    from dreamdb.vault.discover import classify

    try:
        rel = _check_rel_path(rel, rel)
    except UsageError:
        return None
    kind = classify(rel)
    if kind is None or kind[0] != "markdown":
        return None
    path = _spelled_on_disk(vault, rel.split("/"), exact=exact)
    if path is None or not path.is_file():
        return None
    _refuse_folder_link(vault, path)
    _refuse_mergetool_copy(rel, path)
    _refuse_link_to_no_note(vault, rel, path)
    return kind[1], path


def _refuse_folder_link(vault: Path, path: Path) -> None:
    """Refuse the file ``path`` of the vault when a folder on its way is a symbolic link (:func:`folder_link`): a
    sync follows none, so what is behind one is no document, whatever the path's text reads: an archived note
    (``knowledge/arch -> .archive``), a file outside the document folders (``knowledge/ppl -> ../people``), a vault of
    its own inside this one (QA rounds 102-A F1, 144-E F1: update and delete reached them).

    Raises:
        WriteRefused: there is such a link.
    """
    rel = path.relative_to(vault).as_posix()
    link = folder_link(vault, os.path.dirname(rel))
    if link is None:
        return
    from dreamdb.vault.discover import classify

    real, root = os.path.realpath(path), os.path.realpath(vault)
    inside = real.startswith(root + os.sep)
    own = real[len(root) + 1:].replace(os.sep, "/") if inside else ""
    kind = classify(own)
    raise WriteRefused(f"{rel} is reached through {link}, a symlinked folder"
                       + ("" if inside else f" that leads outside the vault (to {real})")
                       + ", which a sync does not follow, so this path names no document of the vault; nothing was"
                         " changed.",
                       hint=f"Name the note by its own path in the vault: {own}." if kind is not None
                       and kind[0] == "markdown" and not in_archive(own) else
                       "dreamdb edits only the notes a sync indexes; edit the file by hand if you mean to.")


def _refuse_link_to_no_note(vault: Path, rel: str, path: Path) -> None:
    """Refuse a symlinked note whose file is no note (:func:`dreamdb.vault.discover.link_target_no_note`: the
    changelog, the memory file, an archived note, a mergetool copy, a file in ``.trash``, a nested vault's note): a sync
    skips the link for the same reason, and a write through it would edit that file (QA round 146-C F1: update
    appended to ``core/CHANGELOG.json``, no JSON after). A link out of the vault is :func:`_confined`'s to refuse.

    Raises:
        WriteRefused: it is such a link.
    """
    from dreamdb.vault.discover import link_target_no_note

    if not os.path.islink(path):
        return
    root, real = os.path.realpath(vault), os.path.realpath(path)
    if not real.startswith(root + os.sep):
        return
    why = link_target_no_note(root, real)
    if why is not None:
        target = os.path.relpath(real, root).replace(os.sep, "/")
        raise WriteRefused(f"{rel} is a link to {target}, {why}: a sync skips the link, so it names no document;"
                           " nothing was changed.",
                           hint="dreamdb edits only the notes a sync indexes; edit the file by hand if you mean to,"
                                f" or remove the link (rm {shlex_quote(str(path))}).")


def _refuse_mergetool_copy(rel: str, path: Path) -> None:
    """Refuse the copy ``git mergetool`` makes of a note while a merge runs (:func:`dreamdb.vault.discover.mergetool_copy`):
    no note for a sync either (QA round 111-A F6, update wrote into one), whichever name found it, before anything
    else is said of it (QA round 114-C F4: a pinned copy was said pinned, then --force refused it as a copy).

    Raises:
        UsageError: it is such a copy.
    """
    from dreamdb.vault.discover import mergetool_copy

    if mergetool_copy(str(path)):
        note = rel[:len(rel) - len(path.name)] + path.name[:path.name.rindex("_", 0, path.name.rindex("_"))] + ".md"
        raise UsageError(f"{rel} is a copy git mergetool makes of {note} while a merge runs, not a note (a sync skips"
                         " it); nothing was changed.", hint=f"Edit {note} itself, or rename the copy if it is a note.")


def _spelled_on_disk(vault: Path, parts: list[str], *, exact: bool = False) -> Path | None:
    """The path under ``vault`` that the names ``parts`` reach, each as its folder lists it
    (:func:`dreamdb.vault.discover.name_on_disk`), or ``None`` when a name reaches nothing.

    A name the file system takes in another case or Unicode form (case-insensitive: macOS, Windows, vfat) is the
    entry's own name; a name typed composed (``café``, as ``find_document`` normalises it) reaches a file or folder
    saved decomposed (``cafe`` + U+0301, as macOS and some tools write names), and back, on any file system; a
    component matching two entries (both spellings exist side by side) matches none. With ``exact``, a name not
    listed as typed reaches nothing.
    """
    here = vault
    for part in parts:
        name = name_on_disk(here, part)
        if name is None or (exact and name != part):
            return None
        here = here / name
    return here


LOCKED_SKIP_S = 30.0
"""Seconds for which an index another program held locked, so that a lookup waited its busy timeout in vain, is
not asked again (QA round 99-B F1: ``update`` and ``delete`` made five lookups, each waiting 10 s, and took 50 s
under a program holding the index in ``BEGIN EXCLUSIVE``)."""
_LOCKED: dict[str, float] = {}

_SHORT_OF_FILES: dict[str, OSError] = {}
"""Vault → the open-file limit's error that kept :func:`_index_rows`' last lookup in that vault from reading its
index (cleared by the next lookup): a refusal the index would have answered (an id it does not hold,
:func:`_refuse_id_of_unseen_files`) says the limit, not that the index is behind (QA round 153-F F5)."""


def _inside_vault_rows(cursor) -> list[tuple]:
    """The rows of ``cursor`` whose ``source_path`` column, if it has one, names a file inside the vault: a row naming
    one outside (:func:`dreamdb.store.sync.escapes_vault`, which no sync writes) is left out, so no hint or id
    lookup names a file outside the vault (QA round 147-F F1)."""
    from dreamdb.store.sync import escapes_vault

    paths = [i for i, column in enumerate(cursor.description or ()) if column[0] == "source_path"]
    return [tuple(row) for row in cursor
            if not any(isinstance(row[i], str) and escapes_vault(row[i]) for i in paths)]


def _index_rows(vault: Path, sql: str, params: Sequence[Any]) -> list[tuple] | None:
    """Run a query on the vault's existing index, opened read-only; ``None`` when there is no usable index.

    The index is never created, migrated or synced here (no index file: nothing was ever recalled,
    so no recall id can name a document): its ids are the ones recall printed last. An index that could not be
    read for the open-file limit (:func:`dreamdb.errors.short_of_files`) is no usable index too, its error kept in
    :data:`_SHORT_OF_FILES` until the next lookup, for a refusal that the index's answer would decide to name.
    """
    from dreamdb import config
    from dreamdb.errors import DreamdbError
    from dreamdb.store import connect as db

    other = None
    _SHORT_OF_FILES.pop(str(vault), None)
    try:
        index_path = config.index_path_for(vault)
        kind = config.index_file_kind(index_path)
        if kind == "missing" and not config.index_env():
            # the index at the other place dreamdb keeps one (a .dreamdb made read-only since: recall copies it
            # over when it next opens the index; its ids are the ones recall printed last; QA round 46 M2)
            moved = config.other_default_index_path(vault, index_path)
            if moved is not None and config.index_file_kind(moved) in ("dreamdb", "sqlite"):
                conn = db.open_unlocked_readonly(moved)
                if conn is None:
                    return None
                try:
                    return _inside_vault_rows(conn.execute(sql, tuple(params)))
                finally:
                    conn.close()
        if kind not in ("dreamdb", "sqlite"):  # (a journal file that is a link or a pipe: refused by db.connect and
            return None  # by open_unlocked_readonly, so the files alone decide; QA round 111-A F1)
        if _LOCKED.get(str(index_path), 0.0) > time.monotonic():
            return None  # (held by another program a moment ago: not waited for again by each lookup of one write)
        conn = db.connect(index_path, readonly=True)
        try:
            # one DREAMDB_INDEX shared by two vaults: its ids are not ours (a vault's own index, copied with the
            # vault, is: recall takes it over; QA round 44)
            other = _other_vault(conn, vault) if config.index_env() else None
            if other is None:
                return _inside_vault_rows(conn.execute(sql, tuple(params)))
        finally:
            conn.close()
    except (DreamdbError, db.DatabaseError, OSError) as exc:  # no usable index: the files alone decide
        if isinstance(exc, db.DatabaseError) and db.is_lock_error(exc):
            _LOCKED[str(index_path)] = time.monotonic() + LOCKED_SKIP_S
        short = exc if short_of_files(exc) else None
        if short is None and not isinstance(exc, OSError):
            # (SQLite says "unable to open database file", the index file's kind an IndexUnavailable: the limit is
            # told as an Index's open tells it, api._short_of_file_handles)
            from dreamdb.api import _short_of_file_handles

            short = _short_of_file_handles()
        if short is not None:
            _SHORT_OF_FILES[str(vault)] = short
        return None
    raise UsageError(f"The index {index_path} mirrors another vault ({other}); its ids are not this vault's, so"
                     " nothing was changed.",
                     hint="Unset DREAMDB_INDEX (each vault keeps its own index in <vault>/.dreamdb/), or pass the"
                          " file's path (e.g. knowledge/notes.md) to say which one.")


_TRASH_PREFIX = re.compile(r"(\d{8}T\d{12}Z)(?:-\d+)?-")
"""The start of a copy's name in the trash: its UTC time (:func:`dreamdb.writes.files._trash_stamp`), and ``-<n>``
when a copy of that time was there."""


def _copy_named(name: str, note: str) -> bool:
    """Whether ``name``, a file's in the trash, is the name :func:`dreamdb.writes.files._trash_path` gives a copy of
    the note ``note`` (``x.md``): ``<UTC time>-x.md`` or ``<UTC time>-<n>-x.md`` exactly (QA round 64 M2: "-note.md"
    matched "...-my-note.md"), or that name shortened as it is when too long for the file system
    (:func:`dreamdb.writes.files.trash_name`), made again from ``note`` and compared: QA round 154-E F1, the copy of a
    note named with over 232 bytes, ``<UTC time>-<its start>~<8 hex digits>.md``, was no note's, and a second delete
    named none. The digits are of the whole name, so another note of that start is not taken for it."""
    m = _TRASH_PREFIX.match(name)
    if m is None:
        return False
    # (the time alone, or with the number: "<time>-2-x.md" is a copy of x.md, or the first of 2-x.md)
    return any(trash_name(prefix, note) == name for prefix in {m.group(1), m.group(0)[:-1]})


def _copy_form(note: str) -> str:
    """How a hint names the copies in the trash of the note ``note`` (``x.md``), their times not known:
    ``<UTC time>-x.md``, or the short form of a name too long to keep whole (:func:`dreamdb.writes.files.trash_name`;
    QA round 154-E F1)."""
    if trash_name("0" * 8 + "T" + "0" * 12 + "Z", note).endswith(f"-{note}"):
        return f"<UTC time>-{note}"
    return "<UTC time>-<its name's start>~<8 hex digits>.md, the name too long to keep whole"


def _trash_copies(vault: Path, doc_type: str | None, bare: str) -> list[Path]:
    """The copies :func:`delete` kept of notes named ``bare`` (of ``doc_type``, or any markdown type),
    ``<vault>/.dreamdb/trash/<type>/<UTC time>-<bare>.md`` (:func:`_copy_named`, shortened names too); never
    :func:`update`'s copy of a previous version (``…-<bare>.before-update.md``: QA round 63 M1, an older text an agent
    restoring it would have taken for the note)."""
    found = []
    for t in (doc_type,) if doc_type else MARKDOWN_TYPES:
        folder = _trash_root(vault) / t
        try:
            found += [p for p in folder.iterdir() if _copy_named(p.name, f"{bare}.md")]
        except OSError:
            continue
    return found


def _in_trash(vault: Path, doc_type: str | None, bare: str) -> Path | None:
    """The newest copy :func:`delete` kept of a note named ``bare`` (:func:`_trash_copies`), else ``None``: by its
    name alone, maybe another note's of that name (:func:`_deleted_copy` tells a file's own)."""
    found = _trash_copies(vault, doc_type, bare)
    return max(found, key=lambda p: p.name) if found else None


def _in_full(path: Path) -> str:
    """A copy in the trash as the messages name it: in full, as ``delete`` said it kept it (QA round 147-D F3: the
    second delete named it relative to the vault, not to the folder the command ran in)."""
    return os.path.abspath(path)


def _restore_hint(vault: Path, target: str) -> str:
    """The hint for a note :func:`~dreamdb.writes.documents.delete` moved to the trash: where to move its copy back,
    ``target`` (its path in the vault), in full. QA round 147-D F3: "Move the copy back to restore it" named no place,
    and the copy moved back as it is (``<UTC time>-<name>.md``) was a note of another id."""
    return f"Move the copy back to {_in_full(vault.joinpath(*target.split('/')))} to restore it, if that was a mistake."


def _deleted_copy(vault: Path, doc_type: str, source: str) -> tuple[Path | None, int]:
    """The copy :func:`delete` kept of ``source``, a file the index holds (of ``doc_type``) that is gone from the vault
    since the last sync: one named for that file (``<UTC time>-<its name>``, :func:`_trash_copies`), made after the
    index last saw it, whose bytes are the ones the index read from it (its ``sha256``), the newest such (one with its
    modification time first, which the move keeps); with the number of copies of that name made since, told apart or
    not. ``(None, n)`` when none is: never another note's copy of that name (QA round 147-A F4: ``knowledge/n-2``'s,
    ``b/n.md``, was looked for by the id's name ``n-2``, none found; by the file's name alone it would have been
    ``a/n.md``'s, deleted too), at the cost of a note edited after the sync (by ``update``), whose copy is not
    named."""
    rows = _index_rows(vault, "SELECT sha256, mtime_ns, synced_at, (SELECT value FROM meta WHERE key = 'last_sync')"
                              " FROM files WHERE path = ?", [source])
    if not rows:
        return None, 0
    sha, mtime_ns, *seen = rows[0]
    since = ""
    for when in seen:  # (the file was there when it was read, and at the last sync that wrote: its row stayed)
        try:
            since = max(since, datetime.fromisoformat(when).astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S"))
        except (TypeError, ValueError):
            continue
    from dreamdb.vault.discover import read_head

    copies = [p for p in _trash_copies(vault, doc_type, source.rsplit("/", 1)[-1][:-3]) if p.name[:len(since)] >= since]
    own = []
    for p in copies:
        try:
            if read_head(p, lambda _head: 0)[1] == sha:  # (hashed a block at a time: QA round 148-C F5)
                own.append(p)
        except OSError:  # (a link kept of a linked note, whose file is gone since)
            continue
    if not own:
        return None, len(copies)

    def same_time(p: Path) -> bool:
        try:
            return p.stat().st_mtime_ns == mtime_ns
        except OSError:
            return False

    return max(own, key=lambda p: (same_time(p), p.name)), len(copies)


def _other_vault(conn, vault: Path) -> str | None:
    """The other vault the index on ``conn`` records, when that vault still exists, else ``None`` (QA round
    43: with one ``DREAMDB_INDEX`` for two vaults, ``update`` in one resolved ids by the other's index and
    edited the wrong file). Recall refuses such an index (:meth:`dreamdb.api.Index._check_index_vault`)."""
    from dreamdb.config import recorded_vault

    row = conn.execute("SELECT value FROM meta WHERE key = 'vault'").fetchone()
    return row[0] if row and recorded_vault(row[0], vault) == "other" else None


def _index_sources(vault: Path, doc_type: str | None, bare: str) -> list[tuple[str, str]]:
    """``(type, source path)`` of the documents whose id recall prints as ``type/bare`` (or ``bare`` of any
    markdown type), from the vault's existing index; ``[]`` without one."""
    import unicodedata

    types = [doc_type] if doc_type else list(MARKDOWN_TYPES)
    marks = ", ".join("?" for _ in types)
    rows = _index_rows(vault, f"SELECT DISTINCT type, source_path FROM documents WHERE slug = ? AND type IN ({marks})",
                       [bare, *types])
    if not rows and not bare.isascii():  # the index keeps names as the files have them: maybe decomposed (NFD)
        rows = [(t, source) for t, source, slug in _index_rows(
            vault, f"SELECT type, source_path, slug FROM documents WHERE type IN ({marks})", types) or []
            if unicodedata.normalize("NFC", slug) == bare]
    return sorted(set(rows or []))


def _literal_name_files(vault: Path, doc_type: str | None, raw: str) -> list[str]:
    """Vault-relative paths of the files whose id is ``raw`` read with its ``.md`` as part of the name: ``notes.md``
    or ``knowledge/notes.md`` is the id of ``notes.md.md`` (the index's, else the files'), that are there and not
    archived (QA round 104-A F2: a gone or archived one was offered); ``[]`` for a name without that ending or a
    path with folders."""
    head, sep, name = raw.rpartition("/")
    if not name.endswith(".md") or (sep and (head not in MARKDOWN_TYPES or doc_type is None)):
        return []
    named = _named_files(vault, doc_type, name)
    kept = [p for p in named if _editable(vault, p)]
    if named and not kept:  # the id recall showed for a NAME.md.md that is gone or archived since: never another note
        # (QA round 105 F1: delete knowledge/notes.md then deleted c/notes.md, whose id is knowledge/notes)
        gone = named[0]
        if not in_archive(gone):  # (moved into an archive by hand since the sync: said so, QA round 106 F5)
            top = vault / gone.split("/", 1)[0]
            gone = next((p.relative_to(vault).as_posix() for p in top.rglob(Path(gone).name)
                         if in_archive(p.relative_to(vault).as_posix())), gone) if top.is_dir() else gone
        if in_archive(gone) and os.path.lexists(vault.joinpath(*gone.split("/"))):
            _refuse_archived(raw, gone)
        raise WriteRefused(f"{raw!r} is the id recall showed for {gone}, which is no longer in the vault. Nothing was"
                           " changed.", hint=f"Run {vault_command(vault, 'recall')} to find the document you mean (or"
                                             " pass a path, starting with ./).")
    return kept


def _editable(vault: Path, rel_path: str) -> bool:
    """Whether the vault-relative ``rel_path`` is there and not in an archive folder (which dreamdb never edits)."""
    return not in_archive(rel_path) and os.path.lexists(vault.joinpath(*rel_path.split("/")))


def _refuse_md_md(slug: str, plain: list[str], twin: str) -> None:
    """Raise the :class:`UsageError` for a name that is both the files ``plain`` (``notes.md``; every one, QA round
    106 F4) and recall's id of the file ``twin`` (``notes.md.md``), with the paths that name each alone: ``./`` makes
    a name a path, never an id (QA round 104-A F2: the hint named the same ambiguous names again)."""
    count = {2: "two", 3: "three"}.get(len(plain) + 1, str(len(plain) + 1))
    raise UsageError(f"{slug!r} names {count} documents: the file{'s' if len(plain) > 1 else ''} {some_of(plain)}, "
                     f"and the id recall shows for {twin} (a file whose name ends in .md.md).",
                     hint="Pass the file's path, starting with ./ (a path, never an id): "
                          + some_of([f"./{p}" for p in [*plain, twin]], sep=" or ") + ".")


def _named_files(vault: Path, doc_type: str | None, name: str) -> list[str]:
    """Vault-relative paths of the documents whose id is ``type/name`` (of ``doc_type``, else of any markdown type):
    the index's, else the files' of that name."""
    sources = sorted({source for _, source in _index_sources(vault, doc_type, name)})
    return sources or _files_named(vault, doc_type, name)


def _files_named(vault: Path, doc_type: str | None, name: str) -> list[str]:
    """Vault-relative paths of the markdown files (of ``doc_type``, else of any markdown type) named ``name.md``,
    names compared in NFC."""
    import unicodedata

    return sorted(p.relative_to(vault).as_posix() for t in ([doc_type] if doc_type else MARKDOWN_TYPES)
                  for p in _iter_markdown(vault, t) if unicodedata.normalize("NFC", p.name[:-3]) == name)


def _refuse_archived(name: str, rel_path: str) -> None:
    """Raise the :class:`UsageError` for ``name``, which names the file ``rel_path`` in an archive folder:
    searchable with ``DREAMDB_INCLUDE_ARCHIVES``, never edited."""
    raise UsageError(f"{name!r} is the archived file {rel_path}; dreamdb does not edit or delete files in archive"
                     " folders (names starting with .).", hint="Edit or move it by hand if you mean to.")


def _from_index(vault: Path, doc_type: str | None, bare: str) -> tuple[str, Path] | None:
    """Map the doc id recall prints (``type/slug``, or a bare slug) to its one source file, via the index
    (``None`` when the index names no file, or several)."""
    rows = _index_sources(vault, doc_type, bare)
    if len({source for _, source in rows}) != 1:
        return None
    found = _document_at(vault, rows[0][1])
    if found is None or found[0] != rows[0][0] or _twin_of_gone(vault, rows[0][1], found[1]):
        return None  # (the twin of a gone file is no file of its id: QA round 148-C F1)
    _refuse_moved_id(vault, f"{rows[0][0]}/{bare}", rows[0][1])
    return found


def _indexed_sources(vault: Path, paths: Sequence[str]) -> set[str]:
    """The vault-relative ``paths`` (compared exactly, as the files are named on disk) that some document of the vault's
    existing index comes from; none without one."""
    if not paths:
        return set()
    marks = ", ".join("?" for _ in paths)
    return {row[0] for row in _index_rows(
        vault, f"SELECT DISTINCT source_path FROM documents WHERE source_path IN ({marks})", list(paths)) or []}


def _twin_of_gone(vault: Path, meant: str, found: Path) -> bool:
    """Whether ``found``, the file a name reached whose own file, the vault-relative ``meant`` (the path typed, or the
    index's file of an id), is not there, is another note: a name spelled as ``meant`` but for Unicode normalisation
    (:func:`dreamdb.vault.discover.accent_twins`: ``Grüße`` in NFC and NFD, a Kelvin sign for ``K``), which
    :func:`_document_at` lets reach a file, and the index holds both files as documents of their own, two notes side
    by side until ``meant`` went (QA round 148-C F1: a second delete of one deleted the other, an update overwrote
    it). A ``meant`` the index does not hold, or a ``found`` it does not (added since), is one note saved again in
    another form, which keeps its names."""
    rel = found.relative_to(vault).as_posix()
    return accent_twins(meant, rel) and _indexed_sources(vault, [meant, rel]) == {meant, rel}


def _refuse_gone_twin(vault: Path, slug: str, meant: str, found: tuple[str, Path]) -> None:
    """Raise the :class:`NotFound` for ``slug``, a name of the file ``meant`` (vault-relative), which is gone, whose
    twin ``found`` (``(type, path)``, :func:`_twin_of_gone`) is another note: deleted by dreamdb, with its copy, as a
    second delete of a note says it; else gone since the last sync. Nothing is changed.

    Raises:
        NotFound: always.
    """
    doc_type, path = found
    rel = path.relative_to(vault).as_posix()
    other = (f"the file {rel}, whose name prints as its ({twin_clause(meant, rel)}), is another note,"
             f" {doc_id_of(vault, doc_type, path)}")
    kept, _ = _deleted_copy(vault, doc_type, meant)
    if kept is not None:
        raise NotFound(f"No document {slug!r} in the vault: it was deleted; its copy is {_in_full(kept)} (of {meant});"
                       f" {other}. Nothing was changed.", hint=_restore_hint(vault, meant))
    raise NotFound(f"No document {slug!r} in the vault: it named {meant}, which is no longer there (deleted, moved or"
                   f" renamed since the last sync); {other}. Nothing was changed.",
                   hint=f"Pass {doc_id_of(vault, doc_type, path)}, its id, to edit that note; run"
                        f" {vault_command(vault, 'recall')} to find the one you meant.")


def _files_ids(vault: Path, own: str) -> dict[str, str] | None:
    """``{vault-relative path: id}`` of the markdown files whose own id (:func:`dreamdb.store.sync.natural_doc_id`) is
    ``own`` (``knowledge/notes``) or a number of it (``knowledge/notes-2``), numbered as a sync of the vault's files
    would number them (:func:`dreamdb.store.sync.same_name_ids`, of the files :func:`dreamdb.vault.discover.walk_sources`
    lists, archives as ``DREAMDB_INCLUDE_ARCHIVES`` says), whatever the index holds; ``None`` when that cannot be
    told: one of those files cannot be read or is binary (a sync indexes no document of it, or keeps the one it had).
    For a file the index has not seen (QA round 146-H F2: ``update knowledge/foo-2`` said "No document" until a sync
    had run)."""
    from dreamdb import config
    from dreamdb.store.sync import natural_doc_id, same_name_ids
    from dreamdb.vault.discover import open_regular, walk_sources
    from dreamdb.vault.parse import decode

    doc_type = own.split("/", 1)[0]
    named = re.compile(re.escape(own) + "(?:-[0-9]+)?")
    try:
        sources = walk_sources(vault, include_archives=config.include_archives_default())
    except OSError:
        return None
    members = [src.rel_path for src in sources if src.kind == "markdown" and src.type == doc_type
               and named.fullmatch(natural_doc_id(doc_type, src.rel_path))]
    for rel in members:
        try:
            with os.fdopen(open_regular(vault.joinpath(*rel.split("/"))), "rb") as f:
                raw = f.read(8192)  # (what the binary test reads, not the whole note: QA round 148-C F5)
        except OSError:
            return None
        if decode(raw, rel, whole=False)[0] is None:
            return None
    return same_name_ids((rel, doc_type, rel) for rel in members)[0]


def _numbered_by_files(vault: Path, doc_type: str | None, bare: str, slug: str) -> tuple[str, Path] | None:
    """The file the numbered id ``type/bare`` (``notes-2``; of any markdown type for a bare name) names as a sync
    numbers the vault's files (:func:`_files_ids`), for an id the index does not hold: an index that is behind (files
    added since the last sync), or none. README: an id depends only on the files, never on the order they were synced
    in (QA round 146-H F2). ``None`` when it names no file, a file the index knows (by the id it gave it), or it
    cannot be told; never for an id the index holds (of a file gone since, or a row that names no note).

    Raises:
        UsageError: the bare name is such an id of two types, or of an archived file."""
    m = re.fullmatch(r"(.+)-([0-9]+)", bare)
    if m is None:
        return None
    found = []
    for t in (doc_type,) if doc_type else MARKDOWN_TYPES:
        if _index_rows(vault, "SELECT 1 FROM documents WHERE doc_id = ?", [f"{t}/{bare}"]):
            continue  # (the index's id, of a file that is not there or no note: not another file's)
        ids = _files_ids(vault, f"{t}/{m.group(1)}") or {}
        found += [rel for rel, i in ids.items() if i == f"{t}/{bare}"]
    if len(found) > 1:  # (knowledge/n-2 and feature/n-2, named without a type: as the index's ids of two types)
        raise UsageError(f"{slug!r} is the id of {len(found)} documents: {', '.join(found)}.",
                         hint="Pass the type too (knowledge/…, feature/…) or the file's path: " + " or ".join(found) + ".")
    if not found or _index_rows(vault, "SELECT 1 FROM documents WHERE source_path = ?", [found[0]]):
        return None  # (a file the index knows has the id recall printed for it, the index's)
    if in_archive(found[0]):
        _refuse_archived(slug, found[0])
    return _document_at(vault, found[0])


def _refuse_id_of_unseen_files(vault: Path, slug: str, path: Path) -> None:
    """Refuse the numbered id ``slug`` of files the index has not seen, naming ``path``, the file the next sync gives
    it (:func:`_numbered_by_files`): an id the index does not hold is no document's yet, and an edit by it, repeated
    once a write removed that file, would take the file numbered after it (QA round 146-K F1: ``delete
    knowledge/foo-2`` twice deleted ``b/foo.md``, then ``c/foo.md``); its path is one file whatever is removed. Said
    rather than "No document" with a guess that names several (QA round 146-H F2).

    Raises:
        WriteRefused: always (naming the open-file limit when that kept the index from being read: QA round 153-F F5).
    """
    short = _SHORT_OF_FILES.get(str(vault))
    if short is not None:  # (the index could not be read: whether it holds the id is not known)
        raise WriteRefused(f"Cannot read the index to look up {slug}: {open_files_reason(short)}; nothing was changed.",
                           hint=OPEN_FILES_HINT)
    rel = path.relative_to(vault).as_posix()
    raise WriteRefused(f"{slug} is no id of the index yet: the files it names were added since the last sync, which"
                       f" will give it to {rel}. Nothing was changed.",
                       hint=f"Pass the file's path to edit that file ({shlex_quote(rel)}), or run"
                            f" {vault_command(vault, 'sync')} first and use the id recall then prints.")


def _renumbered(vault: Path, doc_id: str) -> tuple[str, str] | None:
    """``(vault-relative path, when as "YYYY-MM-DD HH:MM UTC")`` of the file ``doc_id`` named until a sync
    renumbered the files of its name within :data:`dreamdb.store.sync.RENUMBERED_GUARD_DAYS`, else ``None``
    (also for an index older than schema 9, which has no ``renumbered_ids``)."""
    from dreamdb.store.sync import RENUMBERED_GUARD_DAYS

    rows = _index_rows(vault, "SELECT source_path, at_days FROM renumbered_ids WHERE doc_id = ? AND at_days >= ?"
                              " ORDER BY at_days DESC LIMIT 1", [doc_id, time.time() / 86400.0 - RENUMBERED_GUARD_DAYS])
    if not rows:
        return None
    return rows[0][0], datetime.fromtimestamp(rows[0][1] * 86400.0, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _dangling(path: Path) -> bool:
    """Whether ``path`` is a symbolic link to nothing (a missing file, or a loop of links)."""
    return path.is_symlink() and not path.exists()


def _refuse_dangling(vault: Path, path: Path) -> None:
    """Raise WriteRefused when ``path`` is a symbolic link to nothing (:func:`_dangling`): no document (sync
    skips it), so neither edited nor deleted (QA round 38: delete failed on it with an internal error)."""
    if _dangling(path):
        rel = path.relative_to(vault).as_posix()
        target = os.readlink(path)
        what = (f"a link to {target}, which leads in a loop" if os.path.islink(path.parent / target)
                else f"a link to {target}, which does not exist")
        raise WriteRefused(f"{rel} is {what}: it is no document (sync skips it); nothing was changed.",
                           hint=f"Remove the link yourself if it is not needed (rm {shlex_quote(str(path))}), or "
                                "restore the file it points to.")


def _refuse_moved_id(vault: Path, doc_id: str, source: str) -> None:
    """Raise WriteRefused when a sync moved ``doc_id`` from another file to ``source`` lately
    (:data:`dreamdb.store.sync.RENUMBERED_GUARD_DAYS`): whoever was shown the id meant the other file."""
    moved = _renumbered(vault, doc_id)
    if moved and moved[0] != source:
        when = moved[1]
        why = ("a file of the same name was added or removed and the same-named files were renumbered"
               if _index_rows(vault, "SELECT 1 FROM documents WHERE source_path = ?", [moved[0]])
               else "that file was removed or renamed")
        if accent_twins(moved[0], source):  # (the two paths printed alike: QA round 146-C F2)
            why += f" ({twin_clause(moved[0], source)})"  # (a Kelvin sign for K is no accent: QA round 148-C F4)
        raise WriteRefused(f"{doc_id} named {moved[0]} until {when}, when {why}; it now names {source}. Nothing was"
                           " changed.", hint=f"Pass the file's path to say which one (e.g. {source}); recall --json"
                                             " gives each hit's path.")


def _refuse_renumbered_away(vault: Path, doc_id: str) -> None:
    """Raise WriteRefused when ``doc_id`` names no document now because a sync renumbered the files of
    its name lately (:data:`dreamdb.store.sync.RENUMBERED_GUARD_DAYS`): whoever was shown it meant the
    file it named, whose id is now another (QA round 38: "not found", and a suggestion that was refused)."""
    moved = _renumbered(vault, doc_id)
    if not moved:
        return
    source, when = moved
    if in_archive(source) and os.path.lexists(vault / source):  # (out of the index with archives off, not gone:
        # QA round 104-B F6, "removed or renamed" of a file that was there)
        _refuse_archived(doc_id, source)
    now_id = _index_rows(vault, "SELECT doc_id FROM documents WHERE source_path = ?", [source])
    if now_id and not os.path.lexists(vault / source):
        # (renamed or removed since the last sync: the index's row of it is stale; QA round 86-A M1 got "that file's id
        # is now knowledge/note" for knowledge/note itself, exit 6, and a hint naming a path that was gone)
        now_id = []
    if now_id and now_id[0][0] == doc_id:  # (the file was away when the id was looked up, and is back: QA round
        # 123-C F3, "that file's id is now knowledge/hot" for knowledge/hot itself, racing a delete and re-create)
        raise NotFound(f"{doc_id} ({source}) was removed and made again while dreamdb looked it up. Nothing was"
                       " changed.", hint="Run the command again.")
    kept = None if now_id else _in_trash(vault, doc_id.split("/", 1)[0], Path(source).stem)
    now = (f", when the files of that name were renumbered; that file's id is now {now_id[0][0]}" if now_id
           else ", when that file was removed or renamed" + (f" (dreamdb's newest copy of a deleted note named"
                                                              f" {Path(source).name} is {_in_full(kept)})"
                                                              if kept else ""))
    if not now_id:  # removed: no document, as before the sync saw it go (exit 7, not 6: QA round 69 E-M1)
        hint = _renamed_hint(vault, source)
        if kept is not None:  # (where to move the copy back: QA round 147-D F3)
            hint = _restore_hint(vault, source) + ("" if hint == _recall_hint(vault) else f" {hint}")
        raise NotFound(f"No document {doc_id!r} in the vault: it named {source} until {when}{now}. Nothing was"
                       " changed.", hint=hint)
    raise WriteRefused(f"{doc_id} named {source} until {when}{now}. Nothing was changed.",
                       hint=f"Pass the file's path to say which one (e.g. {source}); recall --json gives each hit's"
                            " path.")


def vault_command(vault: Path, words: str, then: str = "") -> str:
    """The command a hint tells to run on ``vault`` (:func:`dreamdb.api.vault_command`: the dreamdb that runs, and
    ``--vault`` where ``dreamdb`` run in the working folder would not find ``vault``; QA round 156-F F3)."""
    from dreamdb.api import vault_command as command

    return command(Path(vault).absolute(), words, then)  # (absolute: a hint may be pasted in another folder)


def _recall_hint(vault: Path) -> str:
    """:func:`_renamed_hint` when no note has that file's name now."""
    return f"Run {vault_command(vault, 'recall')} to find the document you mean."


def _renamed_hint(vault: Path, source: str) -> str:
    """The hint for an id whose file is gone: the notes whose file now has that name in any case, in any folder (a
    rename of its case, a move to another type's folder: QA round 109-B F3, "run dreamdb recall"), else recall."""
    name = source.rsplit("/", 1)[-1]
    pattern = "%/" + name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    rows = _index_rows(vault, "SELECT doc_id, source_path FROM documents WHERE source_path LIKE ? ESCAPE '\\'"
                       " ORDER BY doc_id", [pattern]) or []
    found = [(d, p) for d, p in rows if p.rsplit("/", 1)[-1].lower() == name.lower() and p != source
             and os.path.lexists(vault / p)][:3]
    if not found:
        return _recall_hint(vault)
    return "A note of that file name is now " + ", ".join(f"{d} ({p})" for d, p in found) + ": pass its id if you" \
        " meant it."


def _refuse_bare_name(vault: Path, bare: str) -> None:
    """For a bare name that is no file: the error its full form gets (a type alone, a memory section…).

    A type name alone (``knowledge``) is refused as not a document; a name the
    index knows as exactly one non-file document (``known-issues`` for
    ``memory/known-issues``) gets the same answer as that id.
    """
    if bare in MARKDOWN_TYPES or bare in _NON_FILE_TYPES:
        raise UsageError(f"{bare!r} is a document type, not a document.",
                         hint=f"Name a document as {bare}/<slug> (run {vault_command(vault, 'recall')} to find the"
                              " slug)." if bare in
                         MARKDOWN_TYPES else f"{bare} documents cannot be edited or deleted by slug.")
    marks = ", ".join("?" for _ in _NON_FILE_TYPES)
    rows = _index_rows(vault, f"SELECT DISTINCT doc_id FROM documents WHERE slug = ? AND type IN ({marks})",
                       [bare, *_NON_FILE_TYPES])
    if rows and len(rows) == 1:
        _parse_slug(rows[0][0])  # raises the full id's UsageError


def doc_id_of(vault: Path, doc_type: str, path: Path) -> str:
    """The id recall prints for the document file ``path`` (as :func:`find_document` returns it): the index's
    (a second file of a name has ``-2``), else, for a file the index has not seen (or no usable index), the id a sync
    of the files will give it (:func:`_files_ids`: ``knowledge/foo-2`` for a second ``foo.md``, QA round 146-H F2),
    else ``type/name``. Never raises: it names a file for a report (``update --json``, ``delete --json``: QA round
    59 L10)."""
    own = f"{doc_type}/{path.name[:-3] if path.name.endswith('.md') else path.name}"
    try:
        rel = path.relative_to(vault).as_posix()
        rows = _index_rows(vault, "SELECT doc_id FROM documents WHERE source_path = ?", [rel])
        if not rows:
            from dreamdb.store.sync import natural_doc_id

            own = natural_doc_id(doc_type, rel)
            rows = [((_files_ids(vault, own) or {}).get(rel, own),)]
    except (ValueError, DreamdbError, OSError):
        rows = None
    return rows[0][0] if rows else own


def doc_id_for(vault: Path, slug: str) -> str | None:
    """The id recall gives the document ``slug`` names (:func:`find_document`) from the next sync on, as the vault's
    files are now (:func:`doc_id_now`), ``None`` when it cannot be told: it names a document in a write's report, made
    after the write, which must not fail. QA round 150-C F3: after a same-named note was removed by hand,
    ``update knowledge/x-2`` reported ``knowledge/x-2``, the index's id, which the next recall's sync made
    ``knowledge/x``."""
    try:
        return doc_id_now(vault, *find_document(vault, slug))
    except DreamdbError:
        return None


def doc_id_now(vault: Path, doc_type: str, path: Path) -> str:
    """The id a sync of the vault as it is now gives the document file ``path``: :func:`doc_id_of`'s, where the index
    gave that file and the files of its name it holds (``knowledge/x``, ``knowledge/x-2``; their own id ``type/x`` or a
    number of it, :func:`_files_ids`) are all there still; else those of them that are there, numbered as a sync
    numbers them (:func:`dreamdb.store.sync.same_name_ids`): ``knowledge/b/x.md`` is ``knowledge/x`` once
    ``knowledge/a/x.md``, first in path order, is gone. Only the files the index holds are looked at (no walk of the
    vault: a same-named file added since the last sync is not counted). Never raises (as :func:`doc_id_of`)."""
    indexed = doc_id_of(vault, doc_type, path)
    try:
        from dreamdb.store.sync import natural_doc_id, same_name_ids

        rel = path.relative_to(vault).as_posix()
        own = natural_doc_id(doc_type, rel)
        named = re.compile(re.escape(own) + "(?:-[0-9]+)?")
        rows = _index_rows(vault, "SELECT source_path FROM documents WHERE type = ? AND (doc_id = ? OR (doc_id > ? AND"
                                  " doc_id < ?))", [doc_type, own, own + "-", own + "."])  # ("." follows "-")
        if not rows:
            return indexed
        held = {p for (p,) in rows if isinstance(p, str) and named.fullmatch(natural_doc_id(doc_type, p))}
        there = {p for p in held if p == rel or os.path.exists(vault.joinpath(*p.split("/")))}
        if rel not in held or there == held:  # (a file the index has not seen: doc_id_of numbers the files)
            return indexed
        return same_name_ids((p, doc_type, p) for p in there | {rel})[0].get(rel, indexed)
    except (ValueError, DreamdbError, OSError):
        return indexed


def find_document(vault: Path, slug: str) -> tuple[str, Path]:
    """Find the markdown file of a document (see :func:`_find_document` for the forms of name).

    The name is NFC-normalised first (``ç`` typed as ``c`` + combining cedilla
    finds ``ç``), and file names are compared in NFC too.

    Raises:
        UsageError: as :func:`_find_document`, and for a name the file system refuses (too long).
        WriteRefused: the name leads into a symlink loop, or the open-file limit was met (EMFILE, ENFILE).
        NotFound, VaultNotFound: as :func:`_find_document`.
    """
    import unicodedata

    try:
        typed = slug
        slug = _slug_text(typed)  # (its brackets taken off once: [[x/y]] is no id, QA round 135-A F2)
        escaped = slug == _unbracketed(typed)  # (typed without quotes: its escapes are read only if no file is named so)
        _require_utf8(slug=slug)  # (QA round 65 L1: `dreamdb delete $'\\xff'` looked it up in the index: exit 70)
        slug = _inside_vault(_check_vault(vault), slug)
        composed = unicodedata.normalize("NFC", slug)
        typed_rel = None
        if composed != slug:  # typed decomposed: the file of exactly that name first (it may have a composed twin)
            _, _, typed_rel = _parse_slug(slug)
            exact = _document_at(_check_vault(vault), typed_rel, exact=True) if typed_rel is not None else None
            if exact is not None:
                return exact
        doc_type, path = _find_document(vault, composed, escaped=escaped)
        if typed_rel is not None and _twin_of_gone(vault, typed_rel, path):  # (that file gone, its composed twin
            # another note: QA round 148-C F1, a second delete by the path deleted it)
            _refuse_gone_twin(vault, slug, typed_rel, (doc_type, path))
        rel = os.path.relpath(path, vault).replace(os.sep, "/")
        # (a folder's name may hold one too, the id not: the write then said the note "was moved or removed while
        # dreamdb waited for the vault lock", QA round 138 F2)
        _refuse_control_chars(rel, rel)
        _refuse_mergetool_copy(rel, path)
        _refuse_link_to_no_note(vault, rel, path)
        return doc_type, path
    except RuntimeError as exc:  # Path.resolve() on a symlink loop
        raise WriteRefused(f"{slug!r} leads into a symlink loop ({exc}).", hint="Fix the link in the vault.") from exc
    except OSError as exc:
        if short_of_files(exc):  # (the machine's state, not the name: QA round 153-E F1)
            raise WriteRefused(f"Cannot look up {slug!r} in the vault: {open_files_reason(exc)}; nothing was changed.",
                               hint=OPEN_FILES_HINT) from exc
        raise UsageError(f"Cannot use {slug!r} as a document name: {exc.strerror or exc}.",
                         hint="Give the note's id as recall prints it, or its path inside the vault.") from exc


def _inside_vault(vault: Path, slug: str) -> str:
    """An absolute path to a file in the vault (``Hit.path``, what recall prints), or a relative one from the current
    folder that the vault does not hold as typed, as its vault-relative path, after ``./``; any
    other name as it is (QA round 100-C F6: a hit's own path was refused as absolute). Compared with the vault's path
    as given and resolved, ``.`` segments and doubled slashes collapsed, the path's folder resolved too; one holding
    ``..`` is left as it is, and refused (:func:`_check_rel_path`), as a relative one is. The relative path then meets
    every check a typed one does (its real path inside the vault among them)."""
    if ".." in Path(slug).parts:  # ('..' refused, as in a relative path: the system resolves it after the links
        return slug  # before it, not as its text reads; QA round 102-A F4)
    if not os.path.isabs(slug):
        # a path from the current folder to a file of the vault (``_dream_context/knowledge/x.md`` typed in the
        # project, as ls and tab completion give it: QA round 132-C F3, "not a document file of the vault") is that
        # file; a name the vault holds as typed is the vault's
        # (./ too: find prints it so, QA round 133 F4; the vault's own file of that name comes first all the same. A
        # name without a folder, notes.md, is a slug: from a folder of the vault it named that folder's file alone,
        # where the name fits two documents, which is refused: QA round 134 F1)
        if "/" not in slug or os.path.lexists(os.path.join(vault, slug)) or not os.path.isfile(slug):
            return slug
        inside = _inside_vault(vault, os.path.abspath(slug))
        return slug if os.path.isabs(inside) else inside
    path = os.path.normpath(slug)
    # (the vault as given, as resolved, and the path's folder resolved: a path through a linked project or home
    # folder is in the vault too; QA round 102-A F5, "outside the vault")
    real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    for base, candidate in ((os.path.abspath(vault), path), (os.path.realpath(vault), path),
                            (os.path.realpath(vault), real)):
        if candidate.startswith(base.rstrip(os.sep) + os.sep):
            # ("./": a path, never read as an id: knowledge/notes.md is also recall's id of notes.md.md, QA round
            # 104-A F2)
            return "./" + candidate[len(base.rstrip(os.sep)) + 1:].replace(os.sep, "/")
    # (the vault's folders named in another Unicode form than typed: saved decomposed, as macOS writes names, and typed
    # composed; QA round 121-C F6, "an absolute path outside the vault". The rest is found as a relative path is. Only
    # a path naming nothing as typed: one that names a file is that file, another folder's of the same look)
    if os.path.lexists(path):
        return slug
    composed = unicodedata.normalize("NFC", path)
    for base in (os.path.abspath(vault), os.path.realpath(vault)):
        base = unicodedata.normalize("NFC", base.rstrip(os.sep)) + os.sep
        if composed.startswith(base):
            return "./" + composed[len(base):].replace(os.sep, "/")
    return slug


_NAMED_CHAR = re.compile(r"<U\+([0-9A-F]{4,6})>")
"""A character as :func:`dreamdb.output.visible_id` names a hidden one in an id or a path (``<U+202E>``)."""


def _nameable(code: int) -> bool:
    """A code point a file name can hold: none past U+10FFFF, and no surrogate (U+D800–U+DFFF, no character: its
    name, encoded, crashed the lookup, QA round 121-A F3)."""
    return code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF


def _find_document(vault: Path, slug: str, *, escaped: bool = False) -> tuple[str, Path]:
    """:func:`_find_document_as_typed`, then, where it finds nothing, the name with each character that recall and the
    hook show named (``<U+202E>``, :func:`dreamdb.output.visible_id`) made that character again: a name is typed as it
    is shown (QA rounds 118-A F4, 120-A F6: "No document", and "Did you mean" said the same text again). With
    ``escaped`` (a name typed without quotes), its ``\\uXXXX`` escapes are read too (:func:`_unescaped`): the quoted
    form :func:`dreamdb.output.typable_id` shows, its quotes dropped by a shell (QA round 132-B F1). A file literally
    named so comes first."""
    try:
        return _find_document_as_typed(vault, slug)
    except NotFound:
        if not isinstance(slug, str):
            raise
        for other in _shown_readings(slug, escaped):
            try:
                return _find_document_as_typed(vault, other)
            except NotFound:
                pass
        raise


def _shown_readings(slug: str, escaped: bool) -> list[str]:
    """The other names ``slug`` may be, as shown: its ``<U+XXXX>`` named characters made characters, with
    ``escaped`` its ``\\uXXXX`` escapes (:func:`_unescaped`) too, then both; each differing from ``slug``, once."""
    def named(text: str) -> str:
        if "<U+" not in text:
            return text
        return _NAMED_CHAR.sub(lambda m: chr(int(m.group(1), 16)) if _nameable(int(m.group(1), 16)) else m.group(0),
                               text)

    readings = [named(slug)] + ([_unescaped(slug), named(_unescaped(slug))] if escaped else [])
    return [r for i, r in enumerate(readings) if r != slug and r not in readings[:i]]


def _find_document_as_typed(vault: Path, slug: str) -> tuple[str, Path]:
    """Find the markdown file of a document.

    A document can be named:

    * ``type/slug`` (``knowledge/my-note``) or a bare ``slug``; a trailing
      ``.md`` is ignored. Types: knowledge, feature, task, objective, insight,
      thesis. Archive folders (names starting with ``.``) are not searched.
    * by the id recall prints, including the ``-N`` suffix the index gives a
      second file of the same name (``knowledge/my-note-2``): when no file is
      named so, the vault's existing index maps the id to its file (only if
      it names exactly one file).
    * by its path relative to the vault, ``.md`` optional
      (``knowledge/decisions/my-note.md``, ``state/my-task``): always one file.
      ``knowledge/my-note.md`` is the file ``knowledge/my-note.md`` when it
      exists.

    Args:
        vault: the ``_dream_context`` folder.
        slug: the document's name, as above.

    Returns:
        ``(type, path)``; ``path`` is inside the vault (not resolved).

    Raises:
        UsageError: the name is malformed or reaches outside the vault
            (``..``, absolute, hidden folders); the slug names several files
            (their paths are listed: pass one); it names a memory section or
            changelog entry.
        NotFound: no such document (close matches in the hint).
        VaultNotFound: ``vault`` is not a folder.
    """
    import unicodedata

    vault = _check_vault(vault)
    doc_type, bare, rel = _parse_slug(slug)
    # a name ending in .md may be the id of a file named NAME.md.md (knowledge/notes.md is recall's id for
    # notes.md.md): such a file, or the index's id, is looked for too (QA round 103-C F2: delete knowledge/notes.md
    # deleted the file notes.md, another note)
    literal = _literal_name_files(vault, doc_type, slug.strip("\r\n")) if bare is not None else []
    if rel is not None:
        found = _document_at(vault, rel)
        if found is not None and _twin_of_gone(vault, rel, found[1]):  # (the path's own file is gone: QA round 148-C F1)
            _refuse_gone_twin(vault, slug, rel, found)
        if found is not None:
            others = [p for p in literal if p != found[1].relative_to(vault).as_posix()]
            if others:
                _refuse_md_md(slug, [found[1].relative_to(vault).as_posix()], others[0])
            return found
        if not literal:
            _refuse_dangling(vault, vault.joinpath(*rel.split("/")))
        if bare is None:
            raise NotFound(f"No document file {rel} in the vault.",
                           hint="Paths are relative to the vault folder (e.g. knowledge/decisions/my-note.md); "
                                f"run {vault_command(vault, 'recall')} to find a document.")
    assert bare is not None
    if literal:
        # (notes.md, or knowledge/notes.md without a file at that path, names a file notes.md too, in any
        # folder: QA round 104-A F1, knowledge/notes.md reached sub/notes.md.md past other/notes.md)
        plain = _files_named(vault, doc_type, bare)
        if plain and plain != literal:
            _refuse_md_md(slug, plain, literal[0])
        if len(literal) > 1:  # (two files named notes.md.md in two folders, no index to number them)
            raise UsageError(f"{slug!r} names {len(literal)} documents: {some_of(literal)}.",
                             hint="Pass the file's path, starting with ./ (a path, never an id): "
                                  + some_of([f"./{p}" for p in literal], sep=" or ") + ".")
        found = _document_at(vault, literal[0])
        if found is not None:
            return found
    types = [doc_type] if doc_type else list(MARKDOWN_TYPES)
    matches: list[tuple[str, Path]] = []
    known: list[tuple[str, Path]] = []  # (type/name, path) of every file, for the "did you mean" hint
    from dreamdb.vault.discover import mergetool_copy

    for t in types:
        for path in _iter_markdown(vault, t):
            name = unicodedata.normalize("NFC", path.name[:-3])
            if not mergetool_copy(str(path)):  # (no note: never offered, QA round 116-A F13; named, it is refused)
                known.append((f"{t}/{name}", path))
            if name == bare:
                matches.append((t, path))
    real = [(t, path) for t, path in matches if not _dangling(path)]
    if matches and not real:  # only links to nothing have that name (QA round 39: not when a note has it too)
        _refuse_dangling(vault, matches[0][1])
    matches = real
    if len(matches) == 1:
        # recall's id of that name may belong to another file (a numbered one, maybe of another type)
        file_rel = matches[0][1].relative_to(vault).as_posix()
        sources = {source for _, source in _index_sources(vault, doc_type, bare)}
        # an index file whose name is this file's in another Unicode form (NFD, NFC) is this file saved again so,
        # unless the index holds this file too: then it is another note, its twin, maybe gone since (QA round 148-C
        # F1: the NFD note's id, its file removed, named the NFC note, deleted in its place)
        own_indexed = any(accent_twins(source, file_rel) for source in sources) and bool(
            _indexed_sources(vault, [file_rel]))
        others = sorted(source for source in sources if source != file_rel
                        and (own_indexed or not accent_twins(source, file_rel)))
        # (a file the index still lists but that is gone: removed since the last sync, QA round 38)
        gone = [p for p in others if not os.path.lexists(vault.joinpath(*p.split("/")))]
        others = [p for p in others if p not in gone]
        archived = [p for p in others if in_archive(p)]
        others = [p for p in others if p not in archived]
        if archived and not others:  # the other one is archived: never edited, but maybe the one meant
            raise UsageError(f"{slug!r} names the file {file_rel} and the archived file {archived[0]} (recall's id "
                             "of that name); dreamdb does not edit files in archive folders.",
                             hint=f"Pass {file_rel} to edit that file.")
        if others:
            count = {2: "two", 3: "three"}.get(len(others) + 1, str(len(others) + 1))
            raise UsageError(f"{slug!r} names {count} documents: the file {file_rel}, and the id recall "
                             f"shows for {some_of(others)} (another file of that name).",
                             hint=f"Pass the file's path to say which one: {some_of([file_rel, *others], sep=' or ')}.")
        if gone:  # whoever was shown the id meant the file that is gone, not this one
            alike = f" ({twin_clause(gone[0], file_rel)})" if accent_twins(gone[0], file_rel) else ""
            raise WriteRefused(f"{slug!r} is the id recall showed for {gone[0]}, which is no longer in the vault; "
                               f"the file of that name now is {file_rel}{alike}. Nothing was changed.",
                               hint=f"Pass the file's path to edit or delete it: {file_rel}.")
        # the id may have named another file of that name until a sync removed that one (QA round 37)
        _refuse_moved_id(vault, f"{matches[0][0]}/{bare}", file_rel)
        return matches[0]
    if not matches:
        found = _from_index(vault, doc_type, bare)
        if found is not None:
            return found
        sources = sorted({source for _, source in _index_sources(vault, doc_type, bare)})
        if len(sources) > 1:  # numbered ids of two types (knowledge/n-2, feature/n-2) named without a type
            raise UsageError(f"{slug!r} is the id of {len(sources)} documents: {', '.join(sources)}.",
                             hint="Pass the type too (knowledge/…, feature/…) or the file's path: "
                                  + " or ".join(sources) + ".")
        archived = [p for p in sources if in_archive(p)]
        if archived:  # indexed with DREAMDB_INCLUDE_ARCHIVES: searchable, never edited
            _refuse_archived(slug, archived[0])
        if doc_type is None:
            _refuse_bare_name(vault, bare)
        # an id that a sync took away lately (its file removed or renamed, or the files of its name
        # renumbered): say so, not "no such" with a guess (QA round 44: a bare name was pointed to another note)
        for t in (doc_type,) if doc_type else MARKDOWN_TYPES:
            _refuse_renumbered_away(vault, f"{t}/{bare}")
        # a numbered id of files the index has not seen (added since the last sync): the file the sync will give it
        # is named, not written (QA round 146-K F1: taken as that file, a delete by the id run twice deleted two
        # notes, the second the one the first delete's sync gave the id to, with no record of it to refuse by)
        found = _numbered_by_files(vault, doc_type, bare, slug)
        if found is not None:
            _refuse_id_of_unseen_files(vault, slug, found[1])
        # names as the caller wrote theirs (type/name, or the bare name), of files dreamdb can write: UTF-8, no
        # control characters, not a link out of the vault (sync skips those too; QA round 37), each once
        pool = list(dict.fromkeys(
            (k if doc_type else k.split("/", 1)[1]) for k, path in known
            if is_utf8(k) and not _bad_char(k)
            and (not path.is_symlink() or (not _dangling(path) and _resolves_inside(vault, path)))))
        # names compared without their type (a shared "knowledge/" made "knowledge/*" close to any knowledge
        # note: QA round 40), and given back as the caller wrote theirs
        # (in lower case too: RELEASE-CHECKLIST had no "did you mean", QA round 104-B F11)
        by_name: dict[str, list[str]] = {}
        for k in pool:
            by_name.setdefault(k.split("/", 1)[-1].casefold(), []).append(k)
        close = list(dict.fromkeys(k for name in difflib.get_close_matches(bare.casefold(), list(by_name), n=5,
                                                                            cutoff=0.6)
                                   for k in sorted(by_name[name], key=lambda k: not k.startswith(f"{doc_type}/"))))[:5]
        if any("\u2400" <= c <= "\u241f" or c == "\u2421" for c in slug):  # copied from list's or recall's output,
            # where a control picture stands for a control character (dreamdb.output.safe_text: not ␉ and ␊ alone,
            # ␛ ␇ ␍ ␡ too; QA round 139-D F8)
            raise NotFound(f"No document {slug!r} in the vault.",
                           hint="list and recall show a control character in a name as a symbol (a tab as ␉, a newline"
                                " as ␊, ESC as ␛); dreamdb does not edit files with such names: rename the file"
                                " without it (e.g. with mv), then retry.")
        indexed = _index_sources(vault, doc_type, bare)
        if len(indexed) == 1 and not os.path.lexists(vault.joinpath(*indexed[0][1].split("/"))):
            # the index's file of the id, gone since the last sync: its own copy, found by that file's name and the
            # bytes the index read (QA round 147-A F4: knowledge/n-2's copy was looked for as "n-2", no file's name,
            # and "No document" came with a guess naming another note)
            t, source = indexed[0]
            kept, named_so = _deleted_copy(vault, t, source)
            if kept is not None:
                raise NotFound(f"No document {slug!r} in the vault: it was deleted; its copy is {_in_full(kept)} (of"
                               f" {source}).", hint=_restore_hint(vault, source))
            copies = "1 copy of that name is" if named_so == 1 else f"{named_so} copies of that name are"
            raise NotFound(f"No document {slug!r} in the vault: it named {source}, which is no longer there (deleted,"
                           " moved or renamed since the last sync).",
                           hint=(f"If dreamdb deleted it after an edit, its copy is in"
                                 f" {(_trash_root(vault) / t).relative_to(vault).as_posix()}/, named"
                                 f" {_copy_form(source.rsplit('/', 1)[-1])} ({copies} there, not told apart from"
                                 " another note's);"
                                 f" else run {vault_command(vault, 'recall')} to find it." if named_so else
                                 f"Run {vault_command(vault, 'recall')} to find it, if it was moved."))
        kept = _in_trash(vault, doc_type, bare)  # (of an id the index does not hold: a note it never saw)
        if kept is not None:  # deleted by dreamdb (QA round 44: deleting twice said only "No document")
            # (its id's place: the type's folder, the copy's name without its time; QA round 147-D F3, the hint named
            # none, and the copy moved back as it is was a note of another id)
            raise NotFound(f"No document {slug!r} in the vault: it was deleted; its copy is {_in_full(kept)}.",
                           hint=_restore_hint(vault, f"{MARKDOWN_TYPES[kept.parent.name][0][0]}/{bare}.md"))
        skipped = _skipped_namesakes(vault, doc_type, bare)
        if skipped:  # (QA round 157-I F6: a knowledge/KAFKA.MD the sync skips, named by KAFKA, was "No document" alone)
            _refuse_skipped_namesakes(vault, slug, bare, skipped)
        raise NotFound(f"No document {slug!r} in the vault.",
                       hint=("Did you mean: " + ", ".join(map(typable_id, close))) if close else
                       f"Run {vault_command(vault, 'list')} to see every id ({vault_command(vault, 'recall', 'WORDS')}"
                       " to search).")
    paths = [p.relative_to(vault).as_posix() for _, p in matches]
    marks = ", ".join("?" for _ in paths)
    ids = dict((r[0], r[1]) for r in _index_rows(
        vault, f"SELECT source_path, doc_id FROM documents WHERE source_path IN ({marks})", paths) or [])
    # The id in parentheses is the index's (a second file of a name gets ``-2``). For a file the index
    # has not seen yet, ``type/name`` is shown only when no other candidate has the same type: two
    # such files would both seem to be ``type/name``.
    n_of_type = {t: sum(1 for u, _ in matches if u == t) for t, _ in matches}

    def shown_id(t: str, rel_path: str) -> str | None:
        return ids.get(rel_path) or (f"{t}/{bare}" if n_of_type[t] == 1 else None)

    listing = some_of(f"{rel_path} ({i})" if (i := shown_id(t, rel_path)) else rel_path
                      for (t, _), rel_path in zip(matches, paths))
    # An index id that is no file's name (knowledge/foo-2 with no foo-2.md) names one file; the plain name does not.
    file_ids = set(known)
    suffixed = [i for i in ids.values() if i.split("/", 1)[-1] != bare and i not in file_ids]
    # (two names that look the same: QA round 103-C F8, café.md written with é and with e + U+0301)
    twins = len({unicodedata.normalize("NFC", p) for p in paths}) < len(set(paths))
    raise UsageError(f"{slug!r} names {len(matches)} documents: {listing}"
                     + (f" ({twins_reason(*paths)})" if twins else "") + ". "
                     f"Pass the file's path to say which one (e.g. {paths[-1]}).",
                     hint="A path relative to the vault always names one file"
                     + (f" (an id with a number suffix, such as {suffixed[0]}, does too)." if suffixed else "."))
