"""Atomic, byte-preserving edits of the vault (the user's data).

Three operations: :func:`remember` (append a CHANGELOG entry), :func:`update`
(edit a markdown document's frontmatter or body) and :func:`delete` (remove a
markdown document). The rules every one of them follows:

* **Atomic writes.** New content goes to a temporary file in the target's own
  folder, is fsynced, then ``os.replace``-d over the target (the folder is
  fsynced too, best effort). A reader sees the old file or the new one, never
  half of one; a crash leaves at most a stray ``.<name>.dreamdb-*.tmp`` file, which
  the next write of that file removes once it is ten minutes old.
* **One writer at a time.** Every write holds ``<vault>/.dreamdb/vault.lock``
  (a :class:`filelock.FileLock`) across its whole read-modify-write, so two
  processes calling :func:`remember` together both land. Waiting longer than
  :data:`LOCK_TIMEOUT_S` raises :class:`~dreamdb.errors.LockTimeout`.
* **Another program's edit is not overwritten.** Other programs (an editor, ``git checkout``) do not take the
  lock: the file's identity (inode, size, times) is taken when it is read and checked again just before the
  rename (microseconds before it). When the file changed meanwhile, :func:`remember`, an append or a
  frontmatter edit is made again on the new content (twice at most); otherwise
  :class:`~dreamdb.writes.files.FileChanged` (a ``WriteRefused``) is raised and nothing is changed (QA round 59 M2).
* **Refuse rather than guess.** An invalid or unknown-shaped ``CHANGELOG.json``
  is never rewritten (:class:`~dreamdb.errors.WriteRefused`); the result of
  every edit is re-parsed and compared with what was intended before it is
  written.
* **Check first, create later.** Every input is validated, and the document
  found and its edit computed, *before* anything is created: a refused write
  leaves no trace (not even the ``.dreamdb/`` folder). The work is then done
  again under the lock (the vault may have changed meanwhile). ``.dreamdb/``
  is created as the index code creates it (:func:`dreamdb.config.prepare_index_dir`:
  mode 0700, its own ``.gitignore``); with the index elsewhere (``DREAMDB_INDEX``)
  it holds the lock and the trash, and no ``index.db`` (QA round 56).
* **Nothing is lost.** :func:`delete` moves the file to
  ``.dreamdb/trash/<type>/``; :func:`update` first keeps the previous version
  of the file there (``<UTC time>-<name>.before-update.md``, apart from a deleted note's
  ``<UTC time>-<name>.md``; a name too long for the file system is
  shortened and given a short hash), then replaces it. That copy is the note's own file where
  ``renameat2`` swaps the new one in (Linux), else a copy with its mode, extended attributes and (where the
  process may) owner and group, so that moving it back undoes the update (QA round 152-H F3).
* **File protection is respected.** A write-protected file (no write bit, or
  no write access) is not replaced, and no file is created, replaced or removed in a
  read-only folder (the vault's, a note's, ``core/``, the trash: no write bit, refused
  even for root; checked before anything is written, QA round 150-C F1) nor in an append-only one
  (``chattr +a``: a file can be made there but not replaced or removed; QA round 152-H F1); a replaced file keeps
  its mode bits and, when the process may set them, its owner and group. A failed write (disk
  full, quota, read-only file system, permission) raises
  :class:`~dreamdb.errors.WriteRefused` and changes nothing; a temporary file it then could not remove is named
  in the message.
* **Names cannot escape the vault.** A document is named by ``type/slug``, a
  bare slug, the id recall prints (``knowledge/foo-2``), its vault-relative
  path (``knowledge/decisions/foo.md``) or its absolute path (``Hit.path``: read as
  the vault-relative one, lexically). ``..``, ``.``-prefixed segments,
  backslashes, NUL/control characters and absolute paths outside the vault are rejected
  (:class:`~dreamdb.errors.UsageError`); a path must lie in a document folder
  of the vault; a document whose real path (after symlinks) lies outside the
  vault is refused (:class:`~dreamdb.errors.WriteRefused`).

Byte preservation:

* ``CHANGELOG.json``: the new entry is *inserted as text* into the existing
  file; every other byte of the file is kept. The entry is serialised in the
  file's own style (indent width, ``ensure_ascii`` or raw UTF-8, one-line or
  pretty). The vault stores entries newest first (the reference tool's
  convention), so a new entry goes first; a file whose dates ascend gets it
  last. Entry ids come from :func:`dreamdb.vault.parse.changelog_slugs`
  (counted from the oldest end), so a new entry never renames another.
* Markdown frontmatter: only the lines of the keys being changed are
  rewritten (a top-level key's lines = its ``key:`` line plus the indented or
  ``- `` lines under it); all other keys keep their bytes, order, comments and
  quoting. The edited block is re-parsed with PyYAML and compared with the
  intended mapping; if the line edit did not produce it (exotic YAML), the
  frontmatter is re-dumped whole with PyYAML (key order kept, formatting and
  comments not) rather than writing something wrong.
* The body after the frontmatter is not touched unless ``content`` or
  ``append`` asks for it.

Where each part lives: :mod:`dreamdb.writes.files` (atomic replacement, the vault lock, the trash,
refusals), :mod:`dreamdb.writes.checks` (input checks), :mod:`dreamdb.writes.changelog`
(:func:`remember`), :mod:`dreamdb.writes.locate` (naming a document: :func:`find_document`),
:mod:`dreamdb.writes.markdown` (line-level frontmatter edits) and :mod:`dreamdb.writes.documents`
(:func:`update`, :func:`delete`).
"""

from __future__ import annotations

from dreamdb.writes.changelog import CHANGELOG_RELPATH, REFERENCE_PREFIXES, changelog_ids, remember
from dreamdb.writes.documents import delete, update
from dreamdb.writes.files import (COMMITTED, INDEX_DIRNAME, LOCK_TIMEOUT_S, STALE_TEMP_SECONDS, TEMP_MARK,
                                  atomic_write_bytes, refuse_os_errors, vault_lock)
from dreamdb.writes.locate import MARKDOWN_TYPES, doc_id_for, find_document

__all__ = [
    "CHANGELOG_RELPATH",
    "COMMITTED",
    "INDEX_DIRNAME",
    "LOCK_TIMEOUT_S",
    "MARKDOWN_TYPES",
    "REFERENCE_PREFIXES",
    "STALE_TEMP_SECONDS",
    "TEMP_MARK",
    "atomic_write_bytes",
    "changelog_ids",
    "delete",
    "doc_id_for",
    "find_document",
    "refuse_os_errors",
    "remember",
    "update",
    "vault_lock",
]
