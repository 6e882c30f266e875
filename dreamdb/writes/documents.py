"""``update`` (edit a markdown document's frontmatter or body) and ``delete`` (move it to the trash)
(see :mod:`dreamdb.writes` for the rules every write follows)."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamdb.arguments import callback
from dreamdb.errors import NotFound, UsageError, WriteRefused, param_name
from dreamdb.output import has_visible
from dreamdb.vault.fences import find_block
from dreamdb.writes.checks import _check_text, _clock, _flag, _require_utf8, lone_cr_as_lf, not_utf8_refusal
from dreamdb.writes.files import (atomic_write_bytes, _attribute_hint, _attributes, _check_file_writable,
                                  _check_folder_writable, _check_trash_writable, _check_vault, _check_writable,
                                  CHANGED_RETRIES, COMMITTED, _committed, _confined, FileChanged, _fsync_dir, Identity,
                                  INDEX_DIRNAME, read_with_identity, refuse_os_errors, _lock_wait, _trash_path,
                                  _trash_root, _trash_stamp, _uninterrupted, update_backup_name, vault_lock)
from dreamdb.writes.locate import (_document_at, _in_full, _in_trash, _inside_vault, _parse_slug, _restore_hint,
                                   _slug_text, find_document, vault_command)
from dreamdb.writes.markdown import (_apply_frontmatter, _clean_tags, _load_markdown, _Markdown, REMOVE_KEY,
                                     _same_value, _updated_value, _written_plain)


_PLUGIN_KEY_RE = re.compile(r"""["']?excalidraw-plugin["']?\s*:""")


def _refuse_board_body(real: Path, doc) -> None:
    """Raise WriteRefused for a body edit of an Excalidraw board: the index reads its text elements only, so an
    appended paragraph is never found, and a new body replaces the drawing itself (QA round 83-A F1)."""
    from dreamdb.vault.parse import is_excalidraw

    meta: dict = {}
    if doc.has_fm and not real.name.endswith(".excalidraw.md"):
        try:
            meta = doc.frontmatter()
        except WriteRefused:  # (frontmatter YAML refuses, e.g. an impossible date: the index reads its keys as
            # text all the same, so a plugin key at a line's start still makes it a board; QA round 84)
            meta = {"excalidraw-plugin": True} if any(
                _PLUGIN_KEY_RE.match(line) for line in doc.fm_lines) else {}
    if is_excalidraw(real.name, meta):
        raise WriteRefused(f"{real.name} is an Excalidraw board: dreamdb indexes only its text elements, so a new"
                           " body would replace the drawing, and appended text would never be found by recall;"
                           " it was not changed.",
                           hint="Edit the board's text in Excalidraw; a board's description, tags and pin can still"
                           " be set.")


def _plan_update(vault: Path, path: Path, changes: dict[str, Any], content: str | None, append: str | None,
                 pin: bool | None, clock: datetime) -> tuple[Path, bytes, bytes, Identity]:
    """Compute an update without writing: ``(real path, current bytes, new bytes, the file's identity when
    read)`` (the identity lets the write tell another program's change since, QA round 59 M2).

    Raises:
        WriteRefused: outside the vault, write-protected or in a read-only folder (:func:`_check_folder_writable`),
            binary (NUL bytes in its first 8 KB, as sync tells),
            not UTF-8, unclosed frontmatter (any edit,
            even an append: where the body starts is unknown), malformed frontmatter that must change.
    """
    real = _confined(vault, path)
    if (vault.resolve() / INDEX_DIRNAME) in real.parents:  # a link into dreamdb's own folder (QA round 26)
        raise WriteRefused(f"{path} resolves to {real}, in dreamdb's own folder {INDEX_DIRNAME}/ (the index, its "
                           "trash and settings), not a note; nothing was changed.",
                           hint="Remove the symlink, or edit the file it points to by hand.")
    _check_file_writable(real)
    _check_folder_writable(real.parent, f"updating {real.name} replaces the file there",
                           "to update or delete its notes")
    with refuse_os_errors(real, "read"):
        try:
            old, seen = read_with_identity(real)
        except FileNotFoundError:  # (gone since it was found: QA round 123-C F3, refused with exit 6)
            raise NotFound(f"{path} was moved or removed while dreamdb read it; nothing was changed.",
                           hint=f"Run {vault_command(vault, 'recall')} to find it again.") from None
    from dreamdb.vault.encoding import wide_unicode_codec

    if b"\x00" in old[:8192] and not wide_unicode_codec(old):  # (as sync reads it: QA round 104-B F4, an append
        # went into a file sync skips; a UTF-16 note, NUL bytes and all, is refused below as not UTF-8)
        raise WriteRefused(f"{real.name} looks binary (NUL bytes), so sync does not index it; dreamdb does not "
                           "edit it. Nothing was changed.", hint="Edit or replace it by hand.")
    try:
        doc = _Markdown(old.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise not_utf8_refusal(real.name, old) from exc
    doc.check_closed()
    if content is not None or append is not None:
        _refuse_board_body(real, doc)
    changes = dict(changes)
    # (read only when the frontmatter may change: a body edit of a note with odd frontmatter is no reason to parse it)
    current = doc.frontmatter() if doc.has_fm and (changes or pin is not None) else {}
    if pin is not None and (pin or "pinned" in current):
        changes["pinned"] = bool(pin)
    if "description" in changes and "summary" in current and "description" not in current:
        # the note's own key: the index reads "description (or summary)" (QA round 69 D-L2: a second key was added,
        # the stale summary left beside it)
        changes["summary"] = changes.pop("description")
    if changes and doc.has_fm:
        # a key that already has the value asked for is no change, and does not date the note (QA round 37)
        changes = {k: v for k, v in changes.items()
                   if not ((k in current or k == "tags") and _same_value(k, current.get(k), v))
                   and not (v is REMOVE_KEY and k not in current)}  # (a key to remove that is not there: no change)
        for key in ("updated", "updated_at"):
            if changes and key in current:
                changes[key] = _updated_value(current[key], clock, plain=_written_plain(doc, key))
    elif changes:  # no frontmatter: no tags already, nothing to clear (QA round 47 N4), no key to remove (59 L8)
        changes = {k: v for k, v in changes.items() if not (v is REMOVE_KEY or (k == "tags" and v == []))}
    if changes:
        _apply_frontmatter(doc, changes)
    if content is not None:
        # the new body takes the file's line endings (its first line's): never a file of mixed endings
        content = content.replace("\r\n", "\n").replace("\n", doc.newline)
        doc.body = content if content.endswith("\n") or not content else content + doc.newline
        if doc.has_fm and doc.body and not doc.body.startswith(("\n", "\r\n")):
            doc.body = doc.newline + doc.body
    elif append is not None:
        body = doc.body
        if body.strip():
            if not body.endswith("\n"):
                body += doc.newline
            if not body.endswith(doc.newline * 2) and not body.endswith("\n\n"):
                body += doc.newline
        else:
            body = doc.newline if doc.has_fm else ""
        text = append.strip("\r\n").replace("\r\n", "\n").replace("\n", doc.newline)
        doc.body = body + text + doc.newline
    if not doc.has_fm and find_block(doc.body) is not None:
        # New text that opens with a '---' line would be read as frontmatter (QA round 19: --content
        # "---\ntitle: X\npinned: true\n---\n…" on a note without frontmatter renamed and pinned it). An
        # empty frontmatter block first keeps the body a body, as it stays in a note that has frontmatter.
        doc.has_fm, doc.open_line, doc.close_line = True, "---" + doc.newline, "---" + doc.newline
    return real, old, doc.render().encode("utf-8"), seen


def _opens_with_frontmatter(text: str) -> bool:
    """Whether ``text``, past a BOM and blank lines, opens with a closed frontmatter block whose YAML is a mapping with
    keys, as the indexer reads one (a whole note, not a body: QA round 98-A F6, where ``---`` rules around plain text
    were refused too, and a note after a blank line passed)."""
    head = text.lstrip("\ufeff \t\r\n")
    block = find_block(head)
    if block is None or block.close_end is None:
        return False
    from dreamdb.vault.frontmatter import split_frontmatter

    meta, _body, _warning = split_frontmatter(head.replace("\r\n", "\n"))
    return isinstance(meta, dict) and bool(meta)


def _touched_only(real: Path, old: bytes) -> Identity | None:
    """The :data:`Identity` ``real`` has now if its bytes are still ``old`` (it was only touched: ``touch``,
    ``chmod``, a sync tool's xattrs changed its times, QA round 60 L5), else None (written, or unreadable)."""
    try:
        again, seen = read_with_identity(real)
    except OSError:
        return None
    return seen if again == old else None


def _relocate(vault: Path, slug: str, rel: str, doc_type: str, since: str) -> tuple[str, Path]:
    """Under the lock: the document found before the lock, by its path (it may have gone meanwhile). ``doc_type``:
    its type then; ``since``: the UTC time (:func:`_trash_stamp`) the write began.

    Raises:
        NotFound: it is gone: deleted meanwhile (another ``delete`` of it, which waited less), said with its copy in
            the trash as :func:`find_document` says it (QA round 135-E F3: "moved or removed", of a note in the trash),
            else moved or removed.
    """
    found = _document_at(vault, rel, exact=True)  # (its own name on disk: never a twin of it, QA round 148-C F1)
    if found is None:
        kept = _in_trash(vault, doc_type, Path(rel).stem)
        if kept is not None and kept.name[:len(since)] >= since:  # (a copy of this wait's, not an older note's)
            raise NotFound(f"No document {slug!r} in the vault: it ({rel}) was deleted while dreamdb waited for the"
                           f" vault lock; its copy is {_in_full(kept)}.", hint=_restore_hint(vault, rel))
        raise NotFound(f"{slug!r} ({rel}) was moved or removed while dreamdb waited for the vault lock.",
                       hint=f"Run {vault_command(vault, 'recall')} to find it again.")
    return found


MAX_STATUS_CHARS = 64
"""Longest ``status`` :func:`update` writes (characters): a status is a word or two (``in_progress``); 100,000 were
written, and widened every row of ``dreamdb list`` (QA round 129-A F3)."""


def _filterable_status(status: str) -> None:
    """Refuse a status that ``recall --status``/``list --status`` could not name (QA round 129-A F2: ``a,b`` was
    written, and the filter, which splits on commas, found it as neither; ``done`` with a zero-width space after it
    was not ``done``), or longer than :data:`MAX_STATUS_CHARS`.

    Raises:
        UsageError: a comma, an invisible (format) character, or too long.
    """
    import unicodedata

    hidden = next((c for c in status if unicodedata.category(c) == "Cf"), None)
    if "," in status or hidden is not None:
        raise UsageError(f"status {status!r} holds " + ("a comma, which --status filters split on" if "," in status
                         else f"an invisible character (U+{ord(hidden):04X})") + ", so no filter could name it;"
                         " nothing was changed.", hint="Give the status as one word or two (e.g. in_progress).")
    if len(status) > MAX_STATUS_CHARS:
        raise UsageError(f"status is {len(status):,} characters long, more than the {MAX_STATUS_CHARS} a status may"
                         " have; nothing was changed.", hint="Give the status as one word or two (e.g. in_progress).")


def update(
    vault: Path,
    slug: str,
    *,
    description: str | None = None,
    tags: Sequence[str] | str | None = None,
    status: str | None = None,
    content: str | None = None,
    append: str | None = None,
    pin: bool | None = None,
    now: datetime | None = None,
    on_kept: Callable[[Path], None] | None = None,
    lock_timeout: float | None = None,
) -> Path:
    """Edit a markdown document's frontmatter and/or body, keeping its previous version.

    Only what is asked changes: ``description``, ``tags``, ``status`` and ``pinned`` are
    set in the frontmatter by rewriting just their lines (the other keys keep
    their bytes and order); ``content`` replaces the body after the
    frontmatter; ``append`` adds a paragraph at the end of the body. If the
    frontmatter already has ``updated`` and/or ``updated_at``, they are set to
    ``now`` (same value type as before). A file without frontmatter gets one
    when a frontmatter field is set.

    Before the file is replaced, its previous bytes are kept (atomically) in
    the trash :func:`delete` uses, ``<vault>/.dreamdb/trash/<type>/<UTC
    timestamp>-<name>.before-update.md`` (:func:`dreamdb.writes.files.update_backup_name`; named apart from a
    deleted note's copy, QA round 63 M1): moving that file back undoes the update. An
    update that would not change a byte writes nothing.

    Args:
        vault: the ``_dream_context`` folder.
        slug: ``type/slug``, a bare slug, recall's id or a vault-relative path
            (see :func:`find_document`).
        description: new ``description`` (written to ``summary`` in a note that has that key and no
            ``description``: the indexer reads either); ``""`` removes the key (QA round 59 L8).
        tags: new ``tags`` (a list, or a comma-separated string), replacing the
            old list; blanks and repeats are dropped, each tag is stripped.
        status: new ``status`` (one line: a task's ``completed``, ``in_progress``…, as ``recall --status`` reads it);
            ``""`` removes the key (QA round 128-B F8: a task could be marked done only by hand).
        content: new body (everything after the frontmatter).
        append: text to add at the end of the body, after a blank line. ``content`` and ``append`` are checked
            as :func:`remember`'s text is: newlines and tabs, no other control character, bidirectional control
            or invisible character such as a Unicode tag (the body already there is not checked). Line ends (LF, CR
            LF, CR alone) are written as the file's.
        pin: ``True`` sets ``pinned: true``; ``False`` sets ``pinned: false``
            (only if the key exists or the document was pinned).
        now: the clock for ``updated``/``updated_at`` (default: now, local time; a naive value is UTC). A
            time without a zone is written as UTC wall time (the index reads it as UTC), a time with an offset
            as ``now`` with its own (a naive ``now`` as UTC, ``Z``), a date alone as ``now``'s calendar date.
        on_kept: called with the path of the kept previous version (when one was written), once the edit is made
            and while the vault's lock is still held: a write to the same vault from it raises
            :class:`~dreamdb.errors.UsageError` (:func:`~dreamdb.writes.files.vault_lock`), the edit made.
        lock_timeout: seconds to wait for another writer's vault lock (default 10; ``Index`` passes its
            ``lock_timeout_ms``).

    Returns:
        The path of the edited file (the real path inside the vault).

    Raises:
        UsageError: nothing to change; ``content`` and ``append`` together; an empty
            ``content`` or ``append``; ``content``, ``append`` or ``description`` holding ESC or another control
            character, a bidirectional control or an invisible character such as a Unicode tag; a blank
            ``description``; a ``status`` without a letter or digit, not one line, with a comma or an invisible
            character, or longer than :data:`MAX_STATUS_CHARS`; a malformed or ambiguous slug; a tag with a newline or another
            control character, or one that is only a ``#`` or a facet prefix (``a:``); ``pin`` not a bool or
            None, ``now`` neither a datetime nor an ISO-8601 string, ``on_kept`` not callable.
        NotFound: no such document.
        WriteRefused: ``content`` or ``append`` for an Excalidraw board (only its text elements are indexed:
            the drawing would be lost, or the text never found); the frontmatter must change but is malformed YAML or
            not a mapping; the frontmatter is not closed (refused for every
            edit, ``append`` included); the file is not UTF-8 or is
            write-protected; the document resolves outside the vault; the
            vault, the note's folder or the trash folder is read-only (no write bit: refused even for root, before
            anything is written); writing failed (disk full, quota, read-only
            file system: the file is then unchanged).
        FileChanged: another program wrote the note between its read and its replacement (a WriteRefused;
            nothing was changed): with ``content`` at once (a note only touched, its bytes as read, is written:
            QA round 60 L5), else after :data:`CHANGED_RETRIES` more tries.
        LockTimeout: another writer held the vault lock too long.
        VaultNotFound: ``vault`` is not a folder.
    """
    wait = _lock_wait(lock_timeout)  # (checked before anything is read)
    COMMITTED.set(None)  # (this write's change, once it is on disk)
    if all(v is None for v in (description, tags, status, content, append, pin)):
        raise UsageError("Nothing to update.", hint="Give a description, tags, status, content, append or pin.")
    if content is not None and append is not None:
        content_name, append_name = param_name("content"), param_name("append")
        raise UsageError(f"Give either {content_name} (replace the body) or {append_name}, not both; nothing was"
                         " changed.", hint=f"Replace the body with {content_name}, or add to it with {append_name}: to"
                                           " do both, update twice.")
    changes: dict[str, Any] = {}
    if description == "":  # removes the key: no option could (QA round 59 L8); "  " is still refused
        changes["description"] = REMOVE_KEY
    elif isinstance(description, str) and not description.strip():
        raise UsageError(f"{param_name('description')} is blank; nothing was changed.",
                         hint='--description "" (description="" from Python) removes the description.')
    elif description is not None:
        changes["description"] = _check_text("description", description)
    if tags is not None:
        changes["tags"] = _clean_tags(tags)
    if status == "":
        changes["status"] = REMOVE_KEY
    elif status is not None:
        _require_utf8(status=status)
        if isinstance(status, str) and not any(c.isalnum() for c in status):  # ("  ", "-": no status to filter by)
            raise UsageError(f"status {status!r} holds no letter or digit; nothing was changed.",
                             hint='Give the status (e.g. --status completed); --status "" removes it.')
        changes["status"] = _check_text("status", status, allow_newlines=False).strip()
        _filterable_status(changes["status"])
    for name, value in (("content", content), ("append", append)):
        if value is not None and (not isinstance(value, str) or "\x00" in value):
            raise UsageError(f"{param_name(name)} must be text without NUL characters.",
                             hint=f"Give {param_name(name)} as text (a file's text, not its bytes).")
    # a lone CR is a line end (classic Mac), as in a note: read as LF before the checks (QA round 143-C F4)
    content, append = (v if v is None else lone_cr_as_lf(v) for v in (content, append))
    if append is not None and not has_visible(append):
        raise UsageError("Nothing to append.", hint=f"Give {param_name('append')} the text to add: it holds no"
                                                    " visible character.")
    if content is not None and not has_visible(content):  # an unset shell variable would erase the note (QA round 37)
        raise UsageError("The new content is empty: it would erase the note's body.",
                         hint="Give the new body; to remove the note, use delete (it keeps a copy in the trash).")
    if content is not None and _opens_with_frontmatter(content):
        # a whole note given as its new body (QA round 97-C F6: a second '---' block was written into the body, as
        # text, where embed dedup reads the same file's block as frontmatter)
        raise UsageError("The new content starts with a frontmatter block (--- … ---): content replaces the body"
                         " only, so the block would be written into the body as text; nothing was changed.",
                         hint="Give the body alone; change frontmatter keys with description, tags or pin.")
    for name, value in (("content", content), ("append", append)):
        # the new text only (a body may already hold such characters): ESC, bidi overrides and Unicode tag
        # characters were written, which remember and description refuse (QA round 59 M5); newlines, tabs kept
        if value is not None:
            _check_text(name, value)
    _flag("pin", pin, optional=True)
    callback(on_kept, "on_kept")  # before the write it would be called after
    typed, slug = slug, _slug_text(slug)  # (typed: found as typed, its quotes read once; QA round 132-B F1)
    _require_utf8(slug=slug, description=description, tags=tags, content=content, append=append)
    vault = _check_vault(vault)
    slug = _inside_vault(vault, slug)  # (a hit's absolute path: its vault-relative path, QA round 100-C F6)
    _parse_slug(slug)  # reject a malformed slug before touching anything
    clock = _clock(now)
    # Check first, without creating anything: the document exists and the edit can be made.
    since = _trash_stamp()
    found_type, path = find_document(vault, typed)
    # (a missing note is said before a read-only vault, as delete and remember --supersedes say theirs: QA round 152-F
    # F3, exit 6 here and 7 from delete)
    _check_writable(vault)
    rel = path.relative_to(vault).as_posix()
    _, old, new, _seen = _plan_update(vault, path, changes, content, append, pin, clock)
    if new != old:  # (its previous version goes to the trash: a read-only trash folder is refused before the lock)
        _check_trash_writable(vault, found_type)
    with vault_lock(vault, wait):
        for attempt in range(CHANGED_RETRIES + 1):
            doc_type, path = _relocate(vault, slug, rel, found_type, since)
            real, old, new, seen = _plan_update(vault, path, changes, content, append, pin, clock)
            if new == old:
                break
            kept = _trash_path(vault, doc_type, update_backup_name(real.name))
            try:
                # (inside: a Ctrl-C just after it left an orphan copy, QA round 110-A F9; like: the note's mode,
                # owner and extended attributes, where no exchange makes the copy the note's own file, QA 152-H F3)
                atomic_write_bytes(kept, old, like=real)
                # (expect: the note as read; another program's write since is refused, not overwritten: QA 59 M2)
                for touch in range(CHANGED_RETRIES + 1):
                    try:
                        # (the replaced file becomes the trash copy: a late append to it is kept, QA 69 E-H1)
                        atomic_write_bytes(real, new, commit=True, expect=seen, keep_old=kept)
                        break
                    except FileChanged:
                        # a new body replaces the bytes read: a note only touched since (its times changed, not
                        # its bytes) is still those bytes, written with its new identity (QA round 60 L5)
                        again = _touched_only(real, old) if content is not None and touch < CHANGED_RETRIES else None
                        if again is None:
                            raise
                        seen = again
            except BaseException as exc:  # the document is unchanged (unless it was replaced): its copy is not needed
                if COMMITTED.get() != str(real):
                    with contextlib.suppress(OSError):
                        kept.unlink()
                if isinstance(exc, FileChanged) and content is None and attempt < CHANGED_RETRIES:
                    continue  # an append or a frontmatter edit is made again on the note as it is now
                if isinstance(exc, FileChanged) and content is not None:
                    raise FileChanged(exc.message, hint="The new content would replace the body another program"
                                      " just wrote: look at the note first, then run the command again.") from exc
                raise
            if on_kept is not None:
                on_kept(kept)
            break
    return real


def _check_deletable(vault: Path, doc_type: str, path: Path, force: bool) -> None:
    """Raise WriteRefused when ``path`` cannot or (without ``force``) should not be deleted: a special file, a
    folder the move cannot leave or reach (an attribute on the note's folder or the trash: before any hint
    to pin off or to force, which could not help; QA round 44; a read-only one, no write bit even for root:
    :func:`_check_folder_writable`), then without ``force`` a write-protected, unreadable-frontmatter or pinned
    note; NotFound when (without ``force``) the note was moved or removed before its frontmatter was read."""
    if not path.is_symlink() and path.exists() and not path.is_file():  # (with --force, QA 44: "moved or removed")
        raise WriteRefused(f"{path} is not a regular file (a pipe, device or socket); it was not changed.",
                           hint="dreamdb deletes only notes; remove it yourself if it is not needed.")
    trash = _trash_root(vault)
    for folder in (path.parent, trash / doc_type, trash):
        attributes = _attributes(folder) if folder.is_dir() else []
        if attributes:
            raise WriteRefused(f"Not deleting {doc_type}/{path.name[:-3]}: the folder {folder} has the"
                               f" {' and '.join(attributes)} attribute, so the note cannot be moved to the trash;"
                               " it was not changed.", hint=_attribute_hint(attributes, folder, "delete the note"))
    # (a read-only folder, even for root, whom its mode would not stop: with force too, QA round 150-C F1)
    _check_folder_writable(path.parent, f"deleting {path.name} removes it from there", "to update or delete its notes")
    _check_trash_writable(vault, doc_type)
    if force:
        return
    def typed() -> str:
        """The note as the commands of a hint name it (its vault-relative path less ``.md``, quoted for a shell)."""
        import shlex

        rel = path.relative_to(vault).as_posix() if path.is_relative_to(vault) else f"{doc_type}/{path.name}"
        return shlex.quote(rel[:-3] if rel.endswith(".md") else rel)

    def force_hint() -> str:
        """The command that deletes it anyway, its id and ``--vault`` named (QA round 156-G F5: a bare ``dreamdb
        delete --force``, of no id and no vault)."""
        return f"{vault_command(vault, 'delete ' + typed(), '--force')} deletes it anyway (force=True from Python)."

    try:
        _check_file_writable(path)
    except WriteRefused as exc:
        # --force helps with a write-protected mode only: not on a read-only mount or an immutable file (QA 42)
        raise WriteRefused(f"Not deleting {doc_type}/{path.name[:-3]}: {exc.message}",
                           hint=force_hint() if "write-protected" in exc.message else exc.hint) from exc
    try:
        meta = _load_markdown(path).frontmatter()
    except FileNotFoundError:  # (gone since it was found, as update says it: QA round 151-B F1)
        raise NotFound(f"{path} was moved or removed while dreamdb read it; nothing was changed.",
                       hint=f"Run {vault_command(vault, 'recall')} to find it again.") from None
    except WriteRefused as exc:
        raise WriteRefused(f"Not deleting {doc_type}/{path.name[:-3]}: {exc.message}", hint=force_hint()) from exc
    from dreamdb.vault.parse import frontmatter_bool

    if frontmatter_bool(meta.get("pinned")):
        # (the commands named in full, as the other hints name them: QA round 157-I F5, "Unpin it first (update
        # --unpin), or pass --force" could not be pasted)
        raise WriteRefused(f"{doc_type}/{path.name[:-3]} is pinned; not deleting it.",
                           hint=f"Run {vault_command(vault, 'update ' + typed(), '--unpin')} to unpin it first, or"
                                f" {vault_command(vault, 'delete ' + typed(), '--force')} to delete it anyway (from"
                                " Python: update(..., pin=False), or delete(..., force=True)).")


def delete(vault: Path, slug: str, *, force: bool = False, lock_timeout: float | None = None) -> Path:
    """Remove a markdown document from the vault, keeping a local copy.

    The file is moved (``os.replace``, atomic) to
    ``<vault>/.dreamdb/trash/<type>/<UTC timestamp>-<file name>`` rather than
    destroyed, so a mistaken delete can be undone by moving it back; the
    trash is inside the gitignored index folder. A document that is a symbolic
    link (to a file inside the vault) is removed as a link: the trash gets a
    link to the same file by absolute path, and the file itself stays.

    Rule without ``force``: a document that is pinned (``pinned: true``) is
    refused, and so is one whose frontmatter cannot be parsed or is not
    closed (dreamdb cannot tell whether it is pinned) and a write-protected
    file (no write permission). ``force=True`` deletes any of them.

    Args:
        vault: the ``_dream_context`` folder.
        slug: ``type/slug``, a bare slug, recall's id or a vault-relative path
            (see :func:`find_document`).
        force: delete even a pinned document or one with malformed frontmatter.
        lock_timeout: seconds to wait for another writer's vault lock (default 10; ``Index`` passes its
            ``lock_timeout_ms``).

    Returns:
        Where the document's copy now is (``.dreamdb/trash/<type>/<UTC time>-<name>.md``).

    Raises:
        UsageError: a malformed or ambiguous slug, or a changelog/memory id.
        NotFound: no such document.
        WriteRefused: the document is pinned, write-protected or its
            frontmatter is malformed (without ``force``); it resolves outside
            the vault; the vault, the note's folder or the trash folder is read-only (no write bit: refused even for
            root and with ``force``, before anything is moved); the move failed.
        LockTimeout: another writer held the vault lock too long.
        VaultNotFound: ``vault`` is not a folder.
    """
    wait = _lock_wait(lock_timeout)  # (checked before anything is read)
    COMMITTED.set(None)  # (this write's change, once it is on disk)
    _flag("force", force)
    typed, slug = slug, _slug_text(slug)  # (typed: found as typed, its quotes read once; QA round 132-B F1)
    _require_utf8(slug=slug)
    vault = _check_vault(vault)
    slug = _inside_vault(vault, slug)  # (a hit's absolute path: its vault-relative path, QA round 100-C F6)
    _parse_slug(slug)  # reject a malformed slug before touching anything
    # Check first, without creating anything.
    since = _trash_stamp()
    doc_type, path = find_document(vault, typed)
    _check_writable(vault)  # (after: a missing note is said first, as update says it: QA round 152-F F3)
    rel = path.relative_to(vault).as_posix()
    _confined(vault, path)
    _check_deletable(vault, doc_type, path, force)
    with vault_lock(vault, wait):
        doc_type, path = _relocate(vault, slug, rel, doc_type, since)
        _confined(vault, path)
        _check_deletable(vault, doc_type, path, force)
        kept = _trash_path(vault, doc_type, path.name)
        with refuse_os_errors(path, "move"):
            if path.is_symlink():
                # A relative link moved into the trash would point nowhere from there: the trash gets
                # a link to the same file by absolute path (moving it back restores the document),
                # then the vault's link goes. The file it points to is never touched.
                os.symlink(os.path.realpath(path), kept)
                with _uninterrupted():
                    os.unlink(path)
                    _committed(path)
            else:
                with _uninterrupted():
                    os.replace(path, kept)
                    _committed(path)
        _fsync_dir(path.parent)
        _fsync_dir(kept.parent)
    return kept
