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
* **Refuse rather than guess.** An invalid or unknown-shaped ``CHANGELOG.json``
  is never rewritten (:class:`~dreamdb.errors.WriteRefused`); the result of
  every edit is re-parsed and compared with what was intended before it is
  written.
* **Check first, create later.** Every input is validated, and the document
  found and its edit computed, *before* anything is created: a refused write
  leaves no trace (not even the ``.dreamdb/`` folder). The work is then done
  again under the lock (the vault may have changed meanwhile). ``.dreamdb/``
  is created as the index code creates it (:func:`dreamdb.config.prepare_index_dir`:
  mode 0700, its own ``.gitignore``).
* **Nothing is lost.** :func:`delete` moves the file to
  ``.dreamdb/trash/<type>/``; :func:`update` first keeps the previous version
  of the file there (same naming; a name too long for the file system is
  shortened and given a short hash), then replaces it.
* **File protection is respected.** A write-protected file (no write bit, or
  no write access) is not replaced; a replaced file keeps its mode bits and,
  when the process may set them, its owner and group. A failed write (disk
  full, quota, read-only file system, permission) raises
  :class:`~dreamdb.errors.WriteRefused` and changes nothing.
* **Names cannot escape the vault.** A document is named by ``type/slug``, a
  bare slug, the id recall prints (``knowledge/foo-2``) or its vault-relative
  path (``knowledge/decisions/foo.md``). ``..``, ``.``-prefixed segments,
  backslashes, NUL/control characters and absolute paths are rejected
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
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import hashlib
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from datetime import date, datetime, timezone
from pathlib import Path
from shlex import quote as shlex_quote
from typing import Any

from dreamdb.errors import LockTimeout, NotFound, UsageError, VaultNotFound, WriteRefused
from dreamdb.vault.discover import in_archive, is_utf8
from dreamdb.vault.fences import find_block

__all__ = [
    "LOCK_TIMEOUT_S",
    "MARKDOWN_TYPES",
    "REFERENCE_PREFIXES",
    "atomic_write_bytes",
    "changelog_ids",
    "delete",
    "find_document",
    "remember",
    "update",
    "vault_lock",
]

#: Seconds a write waits for another dreamdb process's vault lock.
LOCK_TIMEOUT_S = 10.0

#: Name of the index folder inside the vault (holds the lock and the trash).
INDEX_DIRNAME = ".dreamdb"

#: Evidence-token prefixes accepted in ``remember(references=...)``.
REFERENCE_PREFIXES = ("commit:", "file:", "knowledge:", "feature:", "task:", "url:")
_REFERENCE_RE = re.compile(r"^[a-z][a-z0-9_-]*:(?!//)\S")
"""``kind:value``; a bare URL (``https://…``) is not a kind: write ``url:https://…``."""

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

CHANGELOG_RELPATH = Path("core") / "CHANGELOG.json"

# Field order of a new CHANGELOG entry: the vault's dominant order.
_ENTRY_ORDER = ("date", "type", "scope", "description", "breaking", "summary",
                "references", "authors", "supersedes")


# --------------------------------------------------------------------------
# Low-level safety: atomic writes, the vault lock, vault checks
# --------------------------------------------------------------------------


#: Longest file name (UTF-8 bytes) most file systems accept (ext4, APFS, NTFS in UTF-16 units).
NAME_MAX = 255

_OS_REASONS = {errno.ENOSPC: "the disk is full", getattr(errno, "EDQUOT", -1): "the disk quota is exceeded",
               errno.EROFS: "the file system is read-only", errno.EACCES: "permission denied",
               errno.EPERM: "permission denied", errno.EISDIR: "it is a folder, not a file",
               errno.ENOTDIR: "a part of its path is a file, not a folder", errno.EFBIG: "the file is too large"}
_OS_HINTS = {errno.ENOSPC: "Free some disk space, then retry.",
             getattr(errno, "EDQUOT", -1): "Free some space within your disk quota, then retry.",
             errno.EFBIG: "The file size limit (ulimit -f) or the file system's limit was reached.",
             errno.EROFS: "Remount the file system read-write, or work on a writable copy.",
             errno.EACCES: "Fix the permissions, then retry.", errno.EPERM: "Fix the permissions, then retry.",
             errno.EISDIR: "A file is expected there: move the folder away, then retry.",
             errno.ENOTDIR: "A folder is expected there: move the file that stands in its way, then retry."}


@contextlib.contextmanager
def refuse_os_errors(path: Path, action: str = "write") -> Iterator[None]:
    """Turn an :class:`OSError` raised in the block into :class:`~dreamdb.errors.WriteRefused`.

    The message names the file (the error's own file name, else ``path``) and
    the cause in words (disk full, quota exceeded, read-only file system,
    permission denied); the block's writes are atomic, so nothing was changed.

    Args:
        path: the file the block reads or writes.
        action: the verb for the message (``write``, ``read``, ``move``).
    """
    try:
        yield
    except OSError as exc:
        where = exc.filename or path
        if TEMP_MARK in os.path.basename(str(where)) and str(where).endswith(".tmp"):
            where = path  # the note, not the temporary copy written beside it (QA round 42)
        reason = _OS_REASONS.get(exc.errno or 0)
        hint = _OS_HINTS.get(exc.errno or 0, "Check the file and its folder, then retry.")
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EBUSY, errno.EROFS, errno.EXDEV):
            dest = getattr(exc, "filename2", None)
            reason, hint = _refusal_cause(Path(where), exc.errno, reason, hint, Path(dest) if dest else None)
        detail = f"{reason} ({exc.strerror})" if reason and exc.strerror else reason or exc.strerror or str(exc)
        raise WriteRefused(f"Cannot {action} {where}: {detail}; nothing was changed.", hint=hint) from exc


def _read_only_mount(path: Path) -> bool:
    """Whether ``path`` (or, when it is gone, its folder) is on a read-only mount (``statvfs``)."""
    for p in (path, path.parent):
        try:
            return bool(os.statvfs(p).f_flag & getattr(os, "ST_RDONLY", 1))
        except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
            continue
    return False


def _refusal_cause(path: Path, err: int, reason: str | None, hint: str,
                   dest: Path | None = None) -> tuple[str | None, str]:
    """``(reason, hint)`` for a write, move or removal of ``path`` the system refused (EACCES, EPERM, EBUSY,
    EROFS, EXDEV), told apart where it can be: a read-only mount, a folder this user cannot write, an immutable or
    append-only file (QA round 41: "Fix the permissions" for a file whose permissions were fine)."""
    remount = _OS_HINTS[errno.EROFS]
    if err == errno.EROFS or _read_only_mount(path):
        return "it is on a read-only mount", remount
    if err == errno.EXDEV:  # (delete moves a note into .dreamdb/trash, which must be on the same mount)
        return ("the file is on another mount than the vault's .dreamdb/trash, where delete moves it",
                "Move or remove the file yourself, or mount the whole vault as one file system.")
    if err == errno.EBUSY:
        return ("the file is busy (device or resource busy: mounted on its own, or in use)",
                "If the file or its folder is a mount point (a bind mount), unmount it or work on a copy.")
    folder = path.parent
    # an attribute refuses whatever the mode: the file's, its folder's, or the folder it moves to (the trash)
    for p in dict.fromkeys(x for x in (path, folder, dest and dest.parent) if x is not None):
        attributes = _attributes(p)
        if attributes:
            return (f"{'the folder ' if p != path else ''}{p} has the {' and '.join(attributes)} attribute",
                    _attribute_hint(attributes, p))
    if not os.access(folder, os.W_OK | os.X_OK):
        return (f"the folder {folder} is not writable by this user",
                f"Give this user write permission on {folder} (chmod u+w), then retry.")
    try:
        st = os.lstat(path)
    except OSError:
        return reason, hint
    if stat.S_ISREG(st.st_mode) and st.st_mode & 0o200 and (err == errno.EPERM or getattr(os, "geteuid", lambda: 1)() == 0):
        why = _why_not_writable(path, st)
        return why, (_ATTRIBUTE_HINT if "attribute" in why else "Run dreamdb as the file's owner, or ask them to change it.")
    return reason, hint


def _fit_name(name: str, limit: int = NAME_MAX) -> str:
    """Return ``name``, or when its UTF-8 form exceeds ``limit`` bytes, a shortened unique form.

    The short form keeps the start of the name and its extension and puts
    ``~`` and 8 hex digits of the full name's SHA-1 between them
    (``20261130T…Z-very-long-na~1a2b3c4d.md``), so different names stay different.
    """
    raw = name.encode("utf-8")
    if len(raw) <= limit:
        return name
    ext = os.path.splitext(name)[1]
    ext = ext if len(ext.encode("utf-8")) <= 16 else ""
    tag = "~" + hashlib.sha1(raw).hexdigest()[:8]
    room = limit - len(tag) - len(ext.encode("utf-8"))
    return name[:len(name) - len(ext)].encode("utf-8")[:room].decode("utf-8", "ignore") + tag + ext


def _check_file_writable(path: Path) -> None:
    """Raise WriteRefused when the existing file ``path`` is write-protected (no write bit, or no W_OK access)
    or is not a regular file (a pipe, device or socket named ``*.md``: reading a pipe waits forever).

    A missing file passes (it will be created).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"{path} is not a regular file (a pipe, device or socket); it was not changed.",
                           hint="dreamdb edits only regular files.")
    if _attributes(path) or _read_only_mount(path):  # (before the mode: chmod cannot help there, QA round 43)
        _refuse_unwritable(path, st)
    if not st.st_mode & 0o222:
        raise WriteRefused(f"{path} is write-protected (mode {st.st_mode & 0o7777:o}); it was not changed.",
                           hint="Give it write permission (chmod u+w) if dreamdb should edit it.")
    if not os.access(path, os.W_OK):
        _refuse_unwritable(path, st)


def _refuse_unwritable(path: Path, st: os.stat_result) -> None:
    """Raise WriteRefused for a file this user cannot write, with why (:func:`_why_not_writable`) and its fix."""
    why = _why_not_writable(path, st)
    raise WriteRefused(f"{path} cannot be written by this user ({why}); it was not changed.",
                       hint=_OS_HINTS[errno.EROFS] if "read-only" in why else _ATTRIBUTE_HINT
                       if "attribute" in why else "Make it writable for this user if dreamdb should edit it.")


_ATTRIBUTE_HINT = "Remove the attribute (lsattr shows it; chattr -i or -a as root) if dreamdb should change it."
"""The hint where an attribute is the likely cause but could not be read (:func:`_why_not_writable`'s guess)."""


def _attribute_hint(attributes: list[str], path: Path, what: str = "change the file") -> str:
    """How to remove ``attributes`` (:func:`_attributes`) from ``path``: ``chattr -i``/``-a`` as root."""
    flags = "".join("i" if a == "immutable" else "a" for a in attributes)
    return f"Remove it (chattr -{flags} {path}, as root) if dreamdb should {what}."

_FS_IOC_GETFLAGS = 0x80086601
"""Linux ioctl reading an inode's attribute flags, as ``lsattr`` does (``linux/fs.h``)."""
_ATTRIBUTE_FLAGS = ((0x10, "immutable"), (0x20, "append-only"))
"""``FS_IMMUTABLE_FL`` and ``FS_APPEND_FL`` (``linux/fs.h``): no change, or appends only, whatever the mode."""


def _attributes(path: Path) -> list[str]:
    """The attributes of ``path`` (a file or folder) that refuse changes whatever its mode and the user:
    ``immutable``, ``append-only`` (``chattr +i``/``+a``); ``[]`` where they cannot be read (not Linux,
    a file system without them, a FIFO)."""
    try:
        import array
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return []
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):
            return []
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return []
    try:
        buf = array.array("i", [0])
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, buf, True)
    except OSError:
        return []
    finally:
        os.close(fd)
    return [name for flag, name in _ATTRIBUTE_FLAGS if buf[0] & flag]


def _why_not_writable(path: Path, st: os.stat_result) -> str:
    """Why a file is not writable though this user may have its mode's write bit (QA round 40: an immutable
    file was told to chmod u+w): a read-only file system, an attribute such as immutable (``lsattr``), or
    another owner."""
    if _read_only_mount(path):
        return "it is on a read-only file system"
    attributes = _attributes(path)
    if attributes:
        return f"it has the {' and '.join(attributes)} attribute"
    if hasattr(os, "geteuid") and os.geteuid() != 0 and st.st_uid != os.geteuid():
        return f"mode {st.st_mode & 0o7777:o}, owned by another user"
    return f"mode {st.st_mode & 0o7777:o}, yet writes are refused: an immutable or append-only attribute (lsattr)?"


COMMITTED: ContextVar[str | None] = ContextVar("dreamdb_writes_committed", default=None)
"""The vault file the last :func:`remember`, :func:`update` or :func:`delete` of this context changed,
set the moment the change is on disk (else ``None``; a caller resets it before a write). The CLI reads
it when Ctrl-C comes after that moment: the change is done, and must not be repeated."""


def _committed(path: Path) -> None:
    COMMITTED.set(str(path))


@contextlib.contextmanager
def _uninterrupted():
    """Hold SIGINT and SIGTERM back (POSIX, main thread) for the few statements inside: a Ctrl-C
    between a file's replacement and :func:`_committed` would report a saved change as interrupted
    (QA round 38); it is raised right after them instead."""
    import signal
    import threading

    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def atomic_write_bytes(path: Path, data: bytes, *, commit: bool = False) -> None:
    """Replace ``path``'s content with ``data`` atomically.

    Writes a temporary file in the same folder, fsyncs it, gives it the
    existing file's permission bits (0644 minus umask for a new file) and
    owner and group (when the process may; failures to chown are ignored),
    and ``os.replace``-s it over ``path``; then fsyncs the folder (best effort).

    Args:
        path: the file to create or replace. If it is a symlink, the link is
            replaced by a regular file; callers pass resolved paths.
        data: the complete new content.
        commit: the write is the user's change (a note, CHANGELOG.json), not a copy kept on the side:
            :data:`COMMITTED` names ``path`` the moment it is replaced, before the folder's fsync.

    Raises:
        WriteRefused: the file is write-protected (see :func:`_check_file_writable`),
            or writing failed: disk full, quota exceeded, read-only file
            system, no permission on the folder (the target is then
            unchanged and the temporary file removed).
    """
    path = Path(path)
    folder = path.parent
    _check_file_writable(path)
    with refuse_os_errors(path):
        try:
            st: os.stat_result | None = os.stat(path)
            mode = st.st_mode & 0o7777
        except FileNotFoundError:
            st = None
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        # mkstemp adds 8 random characters and the suffix: the prefix leaves room for them. The
        # "dreamdb-" marker lets a later write tell its own leftovers from a user's files.
        prefix = _fit_name(f".{path.name}.", NAME_MAX - 8 - len(".tmp") - len(TEMP_MARK)) + TEMP_MARK
        fd, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if st is not None and hasattr(os, "chown"):  # keep owner and group when allowed
                with contextlib.suppress(OSError):
                    os.chown(tmp_name, st.st_uid, st.st_gid)
            os.chmod(tmp_name, mode)
            with _uninterrupted():  # the change and its record (COMMITTED) happen together
                os.replace(tmp_name, path)
                if commit:
                    _committed(path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise
    _fsync_dir(folder)
    _remove_stale_temp_files(folder, prefix)


TEMP_MARK = "dreamdb-"
"""Part of every temporary file name dreamdb writes (``.<name>.dreamdb-XXXXXXXX.tmp``)."""
_MKSTEMP_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")

STALE_TEMP_SECONDS = 600
"""Age (s) after which a ``.<name>.dreamdb-XXXXXXXX.tmp`` file beside a file dreamdb writes is a crashed write's
leftover (a write takes milliseconds; a killed one leaves its temporary file)."""


def _remove_stale_temp_files(folder: Path, prefix: str) -> None:
    """Delete the temporary files of earlier writes of the same file that were killed before their rename:
    regular files named ``prefix`` (which ends in :data:`TEMP_MARK`) + the 8 characters of
    :func:`tempfile.mkstemp` + ``.tmp``, older than :data:`STALE_TEMP_SECONDS` (a concurrent write's
    fresh one is left alone). Best effort, never raises."""
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            name = entry.name
            if (len(name) == len(prefix) + 12 and name.startswith(prefix) and name.endswith(".tmp")
                    and _MKSTEMP_CHARS.issuperset(name[len(prefix):-4]) and entry.is_file(follow_symlinks=False)):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS:
                        os.unlink(entry.path)


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":  # pragma: no cover - Windows has no directory fsync
        return
    with contextlib.suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _check_vault(vault: Path) -> Path:
    vault = Path(vault)
    if not vault.is_dir():
        raise VaultNotFound(f"No vault folder at {vault}.",
                            hint="Pass the path of a _dream_context folder.")
    return vault


def _check_writable(vault: Path) -> None:
    """Raise WriteRefused when the vault folder is read-only (checked before anything is created)."""
    from dreamdb.config import is_writable

    if not is_writable(vault):
        if _read_only_mount(vault):
            raise WriteRefused(f"The vault folder {vault} is on a read-only file system, so dreamdb does not write to it.",
                               hint="Remount it read-write (or work on a writable copy) to remember, update or delete.")
        raise WriteRefused(f"The vault folder {vault} is read-only (no write permission), so dreamdb does not write to it.",
                           hint="Give it write permission (chmod u+w) to remember, update or delete.")


def _index_dir(vault: Path) -> Path:
    """Return ``<vault>/.dreamdb``, creating it as the index code does if needed.

    :func:`dreamdb.config.prepare_index_dir` makes the folder (mode 0700) with
    its ``.gitignore``, and an empty ``index.db`` (mode 0600) that the index
    fills on its next sync.
    """
    from dreamdb import config

    _check_writable(vault)
    index_dir = vault / INDEX_DIRNAME
    if index_dir.is_symlink():  # the lock and the trash must stay inside the vault: refuse before creating either
        _confined(vault, index_dir)
    try:
        config.prepare_index_dir(index_dir / config.INDEX_FILE_NAME)
    except OSError as exc:
        raise WriteRefused(f"Cannot create the index folder {index_dir}: {exc.strerror or exc}.",
                           hint="Check the vault's permissions (a file named .dreamdb may be in the way).") from exc
    return index_dir


def _trash_root(vault: Path) -> Path:
    """``<vault>/.dreamdb/trash``, where :func:`delete` keeps copies (one folder per type); not created here."""
    return vault / INDEX_DIRNAME / "trash"


def _trash_path(vault: Path, doc_type: str, name: str) -> Path:
    """A new, unused ``<vault>/.dreamdb/trash/<type>/<UTC timestamp>-<name>`` (folders created 0700).

    A name too long for the file system is shortened by :func:`_fit_name`.
    Call with the vault lock held (the name is unused only until another writer picks it).
    """
    trash = _index_dir(vault) / "trash" / doc_type
    try:
        for folder in (trash.parent, trash):  # each level 0700, as the index folder
            # a symlinked trash (or type folder) must not carry copies out of the vault, nor get a
            # folder created outside it, nor put them among the notes sync indexes: checked before
            # each level is made
            _confined_to_hidden(vault, folder)
            folder.mkdir(exist_ok=True, mode=0o700)
    except OSError as exc:
        if exc.errno in (errno.EEXIST, errno.ENOTDIR) and exc.filename:  # (QA round 42: "File exists", no hint)
            raise WriteRefused(f"Cannot create the trash folder {trash}: {exc.filename} is a file, not a folder;"
                               " nothing was changed.",
                               hint=f"Move {exc.filename} away (delete keeps copies of deleted notes in that folder),"
                                    " then retry.") from exc
        raise WriteRefused(f"Cannot create the trash folder {trash}: {exc.strerror or exc}; nothing was changed.") from exc
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    kept = trash / _fit_name(f"{stamp}-{name}")
    n = 2
    while kept.exists() or kept.is_symlink():
        kept = trash / _fit_name(f"{stamp}-{n}-{name}")
        n += 1
    return kept


@contextlib.contextmanager
def vault_lock(vault: Path, timeout: float | None = None) -> Iterator[Path]:
    """Hold the vault's write lock (``<vault>/.dreamdb/vault.lock``).

    Every vault write in dreamdb runs inside this lock, so concurrent writers
    (several agents, a hook and a CLI call) are serialised.

    Args:
        vault: the ``_dream_context`` folder.
        timeout: seconds to wait for the lock; default :data:`LOCK_TIMEOUT_S`.

    Yields:
        The path of the lock file.

    Raises:
        VaultNotFound: ``vault`` is not a folder.
        WriteRefused: the vault folder is not writable.
        LockTimeout: another process held the lock longer than ``timeout``.
    """
    from filelock import FileLock, Timeout

    vault = _check_vault(vault)
    lock_path = _index_dir(vault) / "vault.lock"
    wait = LOCK_TIMEOUT_S if timeout is None else timeout
    lock = FileLock(str(lock_path), timeout=wait)
    try:
        lock.acquire()
    except Timeout as exc:
        raise LockTimeout(
            f"Another dreamdb process has held the vault lock for more than {wait:g} s.",
            hint=f"Retry once the other write (remember, update, delete) is done; its lock on {lock_path} ends"
                 " with its process, so the file never needs deleting.",
        ) from exc
    except OSError as exc:
        raise WriteRefused(f"Cannot create the vault lock {lock_path}: {exc.strerror or exc}.",
                           hint="Vault writes need a writable .dreamdb folder in the vault (check its permissions, "
                                "or whether the file system is mounted read-only).") from exc
    try:
        yield lock_path
    finally:
        lock.release()


def _confined_to_hidden(vault: Path, path: Path) -> Path:
    """:func:`_confined`, and inside a hidden top-level folder of the vault (``.dreamdb``), which sync
    never indexes: a trash linked into ``knowledge/`` would make every trashed copy a document."""
    real = _confined(vault, path)
    rel = real.relative_to(vault.resolve()).parts
    if not rel or not rel[0].startswith("."):
        raise WriteRefused(f"{path} resolves to {real}, among the vault's notes: copies kept there would be indexed"
                           " as documents; nothing was changed.",
                           hint=f"Remove the symlink on that path; dreamdb keeps its trash in {INDEX_DIRNAME}/trash.")
    return real


def _resolves_inside(vault: Path, path: Path) -> bool:
    """Whether ``path`` resolves to a place inside ``vault`` (:func:`_confined` without raising)."""
    try:
        _confined(vault, path)
    except WriteRefused:
        return False
    return True


def _confined(vault: Path, path: Path) -> Path:
    """Return ``path`` resolved, or raise WriteRefused if it lies outside ``vault``."""
    root = vault.resolve()
    try:
        real = path.resolve()
    except (RuntimeError, OSError) as exc:  # a symlink loop, a name too long
        raise WriteRefused(f"{path} cannot be resolved ({exc}).", hint="Fix the path or link in the vault.") from exc
    if real != root and root not in real.parents:
        raise WriteRefused(f"{path} resolves to {real}, outside the vault {root}.",
                           hint="dreamdb only edits files inside the vault.")
    return real


# --------------------------------------------------------------------------
# CHANGELOG: remember
# --------------------------------------------------------------------------


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

    def __init__(self, text: str) -> None:
        self.text = text
        if not text.strip():  # (not made a new list: an emptied file may be another tool's failed write)
            raise WriteRefused("core/CHANGELOG.json is empty; it was not changed.",
                               hint="If it was emptied by mistake, restore it (git checkout core/CHANGELOG.json); "
                                    "to start a new changelog, write [] into it.")
        try:
            self.data = json.loads(text)
        except ValueError as exc:
            raise WriteRefused(f"core/CHANGELOG.json is not valid JSON ({exc}); it was not changed.",
                               hint="Fix the file by hand (git diff shows what changed).") from exc
        except RecursionError as exc:
            raise WriteRefused("core/CHANGELOG.json is nested too deeply to read; it was not changed.",
                               hint="Fix the file by hand (git diff shows what changed).") from exc
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

    def prefers_first(self) -> bool:
        """True when new entries go first: the file is newest-first, or has < 2 dated entries."""
        dated = [str(e.get("date")) for e in self.entries if isinstance(e, dict) and e.get("date")]
        return len(dated) < 2 or dated[0] > dated[-1]

    def ensure_ascii(self) -> bool:
        """Whether new entries are written with ``\\uXXXX`` escapes: the file is ASCII and already uses them."""
        if not self.text.isascii():  # (a generator over every character took 2 s on a 27 MB file)
            return False
        return bool(re.search(r"\\u[0-9a-fA-F]{4}", self.text))

    def insert(self, entry: dict, first: bool) -> str:
        """Return the file text with ``entry`` inserted first or last in the array."""
        text, start, end = self.text, self.array_start, self.array_end
        inner = text[start + 1:end - 1]
        ensure_ascii = self.ensure_ascii()
        nl = "\r\n" if "\r\n" in text else "\n"  # the file's line ending (a CRLF file stays CRLF)
        if not inner.strip():  # empty array
            if self.depth == 2 and "\n" not in text.strip():  # one-line {"entries": []}
                body = json.dumps(entry, ensure_ascii=ensure_ascii)
                return text[:start + 1] + body + text[end - 1:]
            unit = self._indent_unit() or "  "
            outer = unit * (self.depth - 1)
            body = self._dump(entry, unit, outer + unit, ensure_ascii, nl)
            return text[:start + 1] + nl + outer + unit + body + nl + outer + text[end - 1:]
        lead = re.match(r"\s*", inner).group(0)  # whitespace before the first element
        if "\n" in lead:
            elem_indent = lead.rsplit("\n", 1)[1]
            unit = self._indent_unit() or "  "
            body = self._dump(entry, unit, elem_indent, ensure_ascii, nl)
            gap = lead
        else:  # a one-line array: match its separators
            spaced = re.search(r"[\]}\"\d el],\s", inner) or re.search(r"\":\s", inner)
            sep = (", ", ": ") if spaced else (",", ":")
            body = json.dumps(entry, ensure_ascii=ensure_ascii, separators=sep)
            gap = " " if spaced else ""
        if first:
            pos = start + 1 + len(lead)
            return text[:pos] + body + "," + gap + text[pos:]
        tail = re.search(r"\s*$", inner).group(0)
        pos = end - 1 - len(tail)
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


def _read_changelog(path: Path) -> _ChangelogFile:
    if path.is_dir():
        raise WriteRefused(f"{path} is a folder, not a file; nothing was changed.",
                           hint="core/CHANGELOG.json must be a JSON file: move the folder away, then retry.")
    with refuse_os_errors(path, "read"):
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):  # reading a pipe would wait forever (QA round 19)
                raise WriteRefused(f"{path} is not a regular file (a pipe, device or socket); nothing was changed.",
                                   hint="core/CHANGELOG.json must be a JSON file: move this one away, then retry.")
            raw = path.read_bytes()
        except FileNotFoundError:
            raw = b"[]\n"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WriteRefused("core/CHANGELOG.json is not UTF-8; it was not changed.") from exc
    if text.startswith("\ufeff"):
        raise WriteRefused("core/CHANGELOG.json starts with a byte-order mark; it was not changed.",
                           hint="Remove the BOM; JSON files are plain UTF-8.")
    return _ChangelogFile(text)


def _resolve_supersedes(ref: str, entries: Sequence[Any]) -> str:
    """Map ``[changelog/|changelog:]<id>`` or ``<date>|<scope>`` to the entry's stable id.

    Raises:
        UsageError: ``ref`` is empty (or only a prefix), or names several entries.
        NotFound: no entry has that id.
    """
    ident = ref.strip()
    for prefix in ("changelog/", "changelog:"):
        if ident.startswith(prefix):
            ident = ident[len(prefix):]
    if not ident.strip():
        raise UsageError("The entry to supersede is named by an empty id.",
                         hint="Use an entry id (changelog/<date>-<scope>-<n>, as recall shows it) or <date>|<scope>,"
                              " or name none to supersede nothing.")
    ids = changelog_ids(entries)
    if ident in ids:
        return ident
    if "|" in ident:
        when, _, label = (part.strip() for part in ident.partition("|"))
        hits = [ids[i] for i, e in enumerate(entries) if isinstance(e, dict)
                and str(e.get("date")) == when and str(e.get("scope") or e.get("type")) == label]
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise UsageError(f"{ref!r} matches {len(hits)} CHANGELOG entries: {', '.join(hits)}.",
                             hint="Name one of them by its id.")
    close = difflib.get_close_matches(ident, ids, n=3, cutoff=0.6)
    raise NotFound(f"No CHANGELOG entry {ref!r} to supersede.",
                   hint=("Close matches: " + ", ".join(close)) if close else
                   "Use an entry id (changelog/<date>-<scope>-<n>, as recall shows it) or <date>|<scope>.")


def _check_text(name: str, value: object, *, allow_newlines: bool = True) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{name} must be a non-empty string.")
    if "\x00" in value:
        raise UsageError(f"{name} contains a NUL character.")
    if not allow_newlines and ("\n" in value or "\r" in value):
        raise UsageError(f"{name} must be one line.")
    return value


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
            own kinds (``pr:``, ``decision:``…).
        supersedes: id of the entry this one replaces, as recall shows it
            (``[changelog/]<date>-<scope>-<n>``, see :func:`changelog_ids`),
            or the vault's legacy ``<date>|<scope>`` form when that names
            exactly one entry. Stored as the bare id (``<date>-<scope>-<n>``).
        authors: author handles, stored as ``authors`` when not empty.
        breaking: the entry's ``breaking`` flag.
        now: the clock; the entry's ``date`` is ``now``'s calendar date in
            ``now``'s own time zone (local time when ``None``).

    Returns:
        The entry as written (its fields in file order) plus ``"id"``, its
        changelog slug, e.g. ``2026-08-18-recall-1``.

    Raises:
        UsageError: empty text, multi-line type/scope/summary, a reference
            without an accepted prefix, a ``<date>|<scope>`` supersedes that
            matches several entries; ``breaking`` not a bool, ``now`` neither a
            datetime nor an ISO-8601 string.
        NotFound: ``supersedes`` names no existing entry.
        WriteRefused: CHANGELOG.json is invalid JSON, not UTF-8, or neither an
            array nor ``{"entries": [...]}`` (the file is left untouched); the
            vault is not writable.
        LockTimeout: another writer held the vault lock too long.
        VaultNotFound: ``vault`` is not a folder.
    """
    if not isinstance(references, str):
        references = list(references)  # read once (an iterator could not be read twice)
    if not isinstance(authors, str):
        authors = list(authors)
    COMMITTED.set(None)  # (this write's change, once it is on disk)
    _require_utf8(text=text, type=type, scope=scope, summary=summary, supersedes=supersedes,
                  references=references, authors=authors)
    vault = _check_vault(vault)
    _check_text("The entry text", text)
    _check_text("type", type, allow_newlines=False)
    if scope is not None and scope != "":
        _check_text("scope", scope, allow_newlines=False)
    if summary is not None:
        _check_text("summary", summary, allow_newlines=False)
    if isinstance(references, str):
        references = [references]
    refs = [str(r).strip() for r in references]
    for ref in refs:
        if not _REFERENCE_RE.match(ref) or "\x00" in ref:
            raise UsageError(f"Reference {ref!r} is not a prefixed evidence token.",
                             hint="Write <kind>:<value>, e.g. " + ", ".join(p + "…" for p in REFERENCE_PREFIXES)
                             + " (the vault's own kinds such as pr: or decision: work too).")
    if isinstance(authors, str):
        authors = [authors]
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
    _check_writable(vault)
    precheck = _read_changelog(_confined(vault, path))
    _check_file_writable(path)
    if supersedes is not None:
        _resolve_supersedes(supersedes, precheck.entries)
    with vault_lock(vault), refuse_os_errors(path):
        path = _confined(vault, path)
        changelog = _read_changelog(path)
        if supersedes is not None:
            entry["supersedes"] = _resolve_supersedes(supersedes, changelog.entries)
        entry = {k: entry[k] for k in _ENTRY_ORDER if k in entry}
        old_ids = changelog_ids(changelog.entries)
        preferred = changelog.prefers_first()
        for first in (preferred, not preferred):
            index = 0 if first else len(changelog.entries)
            expected_entries = list(changelog.entries)
            expected_entries.insert(index, entry)
            new_ids = changelog_ids(expected_entries)
            if new_ids[:index] + new_ids[index + 1:] == old_ids:
                break  # this position renames no existing entry
        else:  # pragma: no cover - appending at the newest end never renames
            first = preferred
            index = 0 if first else len(changelog.entries)
            expected_entries = list(changelog.entries)
            expected_entries.insert(index, entry)
            new_ids = changelog_ids(expected_entries)
        new_text = changelog.insert(entry, first)
        # Verify before writing: the same data plus exactly our entry.
        try:
            parsed = json.loads(new_text)
        except ValueError as exc:  # pragma: no cover - a bug, never written
            raise WriteRefused("Internal error: the edited CHANGELOG.json would not parse; nothing written.") from exc
        got = parsed if changelog.depth == 1 else parsed.get("entries")
        if got != expected_entries:  # pragma: no cover - a bug, never written
            raise WriteRefused("Internal error: the edited CHANGELOG.json would not match; nothing written.")
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, new_text.encode("utf-8"), commit=True)
    return {**entry, "id": new_ids[index]}


# --------------------------------------------------------------------------
# Markdown documents: locating them
# --------------------------------------------------------------------------


def _iter_markdown(vault: Path, doc_type: str) -> Iterator[Path]:
    for rel, recursive in MARKDOWN_TYPES[doc_type]:
        root = vault / rel
        if not root.is_dir():
            continue
        if recursive:
            for folder, dirs, files in os.walk(root):
                here = Path(folder)
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                if doc_type == "knowledge" and here == vault / "knowledge":
                    dirs[:] = [d for d in dirs if d != "features"]
                for name in sorted(files):
                    if name.endswith(".md") and not name.startswith("."):
                        yield here / name
        else:
            for name in sorted(os.listdir(root)):
                if name.endswith(".md") and not name.startswith(".") and (root / name).is_file():
                    yield root / name


_FOLDERS_HINT = ("A document is named type/slug (knowledge/my-note), by the id recall prints (knowledge/my-note-2) "
                 "or by its path relative to the vault (knowledge/decisions/my-note.md).")


def _bad_char(text: str) -> bool:
    """True when ``text`` holds a control character (newline, tab, NUL, DEL…) or a Unicode line/paragraph separator."""
    import unicodedata

    return any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in text)


def _require_utf8(**values) -> None:
    """Raise UsageError for an argument (text, or a list of texts) that is not valid UTF-8: bytes a terminal
    could not decode arrive as surrogates, which no UTF-8 file or index can hold."""
    for name, value in values.items():
        items = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
        for item in items:
            if isinstance(item, str) and not is_utf8(item):
                raise UsageError(f"The {name} is not valid UTF-8 (it holds bytes that are not text); nothing was changed.",
                                 hint="Retype it in UTF-8; for a file whose name is not UTF-8, rename the file first"
                                      " (e.g. with convmv).")


def _flag(name: str, value, *, optional: bool = False) -> None:
    """Raise UsageError unless ``value`` is a bool (or ``None`` when ``optional``): from Python, ``"no"``
    is a true value, and writing ``breaking: true`` or pinning for it would be a silent mistake."""
    if value is None and optional:
        return
    if not isinstance(value, bool):
        raise UsageError(f"{name} must be True or False, got {value!r}; nothing was changed.")


def _clock(now) -> datetime:
    """The write's clock: ``now`` as a datetime (an ISO-8601 string is parsed; a naive value stays local
    time), the current local time for ``None``.

    Raises:
        UsageError: ``now`` is neither a datetime nor an ISO-8601 string.
    """
    if now is None:
        return datetime.now().astimezone()
    if isinstance(now, datetime):
        return now
    if isinstance(now, date):
        return datetime(now.year, now.month, now.day)
    if isinstance(now, str):
        try:
            return datetime.fromisoformat(now.strip().replace("Z", "+00:00"))
        except ValueError:
            pass
    raise UsageError(f"now must be a datetime or an ISO-8601 string, got {now!r}; nothing was changed.",
                     hint="Example: now='2026-08-18T09:30:00+02:00'")


def _slug_text(slug):
    """A path-like name as text (``Path("knowledge/x.md")`` names that file); other non-text is refused.

    Raises:
        UsageError: ``slug`` is not text or a path.
    """
    if isinstance(slug, os.PathLike):
        slug = os.fspath(slug)
    if not isinstance(slug, str):
        raise UsageError(f"A document name must be text such as 'knowledge/my-note', got {type(slug).__name__} {slug!r}.")
    return slug


def _refuse_control_chars(text: str, original: str) -> None:
    """Raise UsageError when a name holds a control character: such a file is found by recall (shown with
    ``␉``/``␊``) but not written by dreamdb, whose names must survive every shell and terminal."""
    if _bad_char(text):
        from dreamdb.output import visible_field

        shown = visible_field(original)
        raise UsageError(f"{shown!r} holds a control character (tab, newline…); dreamdb does not edit or delete"
                         " files with such names.", hint="Rename the file without it (e.g. with mv), then retry.")


def _check_rel_path(rel: str, original: str) -> str:
    """Validate a vault-relative POSIX path (lexically); return it without a leading ``./``.

    Raises:
        UsageError: absolute, ``..`` or ``.``-prefixed (hidden/archive) segments, empty segments,
            backslashes or control characters.
    """
    if os.path.isabs(rel) or rel.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", rel):
        raise UsageError(f"{original!r} is an absolute path; dreamdb only edits files inside the vault.",
                         hint="Give the path relative to the vault, e.g. knowledge/decisions/my-note.md.")
    while rel.startswith("./"):
        rel = rel[2:]
    parts = rel.split("/")
    _refuse_control_chars(rel, original)
    if ("\\" in rel or any(not part or part.startswith(".") for part in parts)):
        raise UsageError(f"{original!r} is not a document slug or a path inside the vault.",
                         hint=_FOLDERS_HINT + " '..', hidden (.name) folders and absolute paths are refused.")
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
        UsageError: empty, NUL/control characters, ``..``, absolute paths,
            hidden segments, backslashes; a changelog/memory/bookmark id; a
            path outside the document folders.
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
        raise UsageError(f"{head} documents cannot be edited or deleted by slug.",
                         hint="Edit the source file by hand.")
    if not sep or (head in MARKDOWN_TYPES and "/" not in rest):
        doc_type = head if sep else None
        bare = rest if sep else raw
        rel = None
        if sep and bare.endswith(".md"):
            rel = raw  # knowledge/foo.md: the file knowledge/foo.md, if there is one
        if bare.endswith(".md"):
            bare = bare[:-3]
        _refuse_control_chars(bare, slug)
        if (not bare or bare in (".", "..") or ".." in bare or "\\" in bare or bare.startswith(".")
                or os.path.isabs(bare)):
            raise UsageError(f"{slug!r} is not a document slug.", hint=_FOLDERS_HINT)
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
    a document folder; the path is not resolved (callers confine it). Unless
    ``exact``, a name that differs from the file's only in Unicode normalisation
    (NFC/NFD) finds it too.
    """
    from dreamdb.vault.discover import classify

    try:
        rel = _check_rel_path(rel, rel)
    except UsageError:
        return None
    kind = classify(rel)
    if kind is None or kind[0] != "markdown":
        return None
    path = vault.joinpath(*rel.split("/"))
    if not path.is_file():
        path = None if exact else _nfc_match(vault, rel.split("/"))
        if path is None or not path.is_file():
            return None
    return kind[1], path


def _nfc_match(vault: Path, parts: list[str]) -> Path | None:
    """The path under ``vault`` whose components equal ``parts`` once both are NFC-normalised, or ``None``.

    A name typed composed (``café``, as ``find_document`` normalises it) reaches a file or folder
    saved decomposed (``cafe`` + U+0301, as macOS and some tools write names), and back; a
    component matching two entries (both spellings exist side by side) matches none.
    """
    import unicodedata

    here = vault
    for part in parts:
        exact = here / part
        if os.path.lexists(exact):
            here = exact
            continue
        want = unicodedata.normalize("NFC", part)
        try:
            names = [n for n in os.listdir(here) if is_utf8(n) and unicodedata.normalize("NFC", n) == want]
        except OSError:
            return None
        if len(names) != 1:
            return None
        here = here / names[0]
    return here


def _index_rows(vault: Path, sql: str, params: Sequence[Any]) -> list[tuple] | None:
    """Run a query on the vault's existing index, opened read-only; ``None`` when there is no usable index.

    The index is never created, migrated or synced here (no index file: nothing was ever recalled,
    so no recall id can name a document): its ids are the ones recall printed last.
    """
    from dreamdb import config
    from dreamdb.errors import DreamdbError
    from dreamdb.store import connect as db

    other = None
    try:
        index_path = config.index_path_for(vault)
        if config.index_file_kind(index_path) not in ("dreamdb", "sqlite"):
            return None
        conn = db.connect(index_path, readonly=True)
        try:
            # one DREAMDB_INDEX shared by two vaults: its ids are not ours (a vault's own index, copied with the
            # vault, is: recall takes it over; QA round 44)
            other = _other_vault(conn, vault) if os.environ.get("DREAMDB_INDEX") else None
            if other is None:
                return [tuple(row) for row in conn.execute(sql, tuple(params))]
        finally:
            conn.close()
    except (DreamdbError, db.DatabaseError, OSError):  # no usable index: the files alone decide
        return None
    raise UsageError(f"The index {index_path} mirrors another vault ({other}); its ids are not this vault's, so"
                     " nothing was changed.",
                     hint="Unset DREAMDB_INDEX (each vault keeps its own index in <vault>/.dreamdb/), or pass the"
                          " file's path (e.g. knowledge/notes.md) to say which one.")


def _in_trash(vault: Path, doc_type: str | None, bare: str) -> Path | None:
    """The newest copy :func:`delete` kept of a note named ``bare`` (of ``doc_type``, or any markdown type),
    ``<vault>/.dreamdb/trash/<type>/<UTC time>-<bare>.md``, else ``None``."""
    found = []
    for t in (doc_type,) if doc_type else MARKDOWN_TYPES:
        folder = _trash_root(vault) / t
        try:
            found += [p for p in folder.iterdir() if p.name.endswith(f"-{bare}.md") and p.name[:8].isdigit()]
        except OSError:
            continue
    return max(found, key=lambda p: p.name) if found else None


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


def _from_index(vault: Path, doc_type: str | None, bare: str) -> tuple[str, Path] | None:
    """Map the doc id recall prints (``type/slug``, or a bare slug) to its one source file, via the index
    (``None`` when the index names no file, or several)."""
    rows = _index_sources(vault, doc_type, bare)
    if len({source for _, source in rows}) != 1:
        return None
    found = _document_at(vault, rows[0][1])
    if found is None or found[0] != rows[0][0]:
        return None
    _refuse_moved_id(vault, f"{rows[0][0]}/{bare}", rows[0][1])
    return found


def _renumbered(vault: Path, doc_id: str) -> tuple[str, str] | None:
    """``(vault-relative path, when as "YYYY-MM-DD HH:MM UTC")`` of the file ``doc_id`` named until a sync
    renumbered the files of its name within :data:`dreamdb.store.sync.RENUMBERED_GUARD_DAYS`, else ``None``
    (also for an index older than schema 9, which has no ``renumbered_ids``)."""
    import time

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
    now_id = _index_rows(vault, "SELECT doc_id FROM documents WHERE source_path = ?", [source])
    kept = None if now_id else _in_trash(vault, doc_id.split("/", 1)[0], Path(source).stem)
    now = (f", when the files of that name were renumbered; that file's id is now {now_id[0][0]}" if now_id
           else ", when that file was removed or renamed" + (f" (a copy deleted by dreamdb is"
                                                              f" {kept.relative_to(vault).as_posix()})" if kept else ""))
    raise WriteRefused(f"{doc_id} named {source} until {when}{now}. Nothing was changed.",
                       hint=f"Pass the file's path to say which one (e.g. {source}); recall --json gives each hit's"
                            " path." if now_id else "Run dreamdb recall to find the document you mean.")


def _refuse_bare_name(vault: Path, bare: str) -> None:
    """For a bare name that is no file: the error its full form gets (a type alone, a memory section…).

    A type name alone (``knowledge``) is refused as not a document; a name the
    index knows as exactly one non-file document (``known-issues`` for
    ``memory/known-issues``) gets the same answer as that id.
    """
    if bare in MARKDOWN_TYPES or bare in _NON_FILE_TYPES:
        raise UsageError(f"{bare!r} is a document type, not a document.",
                         hint=f"Name a document as {bare}/<slug> (run dreamdb recall to find the slug)." if bare in
                         MARKDOWN_TYPES else f"{bare} documents cannot be edited or deleted by slug.")
    marks = ", ".join("?" for _ in _NON_FILE_TYPES)
    rows = _index_rows(vault, f"SELECT DISTINCT doc_id FROM documents WHERE slug = ? AND type IN ({marks})",
                       [bare, *_NON_FILE_TYPES])
    if rows and len(rows) == 1:
        _parse_slug(rows[0][0])  # raises the full id's UsageError


def find_document(vault: Path, slug: str) -> tuple[str, Path]:
    """Find the markdown file of a document (see :func:`_find_document` for the forms of name).

    The name is NFC-normalised first (``ç`` typed as ``c`` + combining cedilla
    finds ``ç``), and file names are compared in NFC too.

    Raises:
        UsageError: as :func:`_find_document`, and for a name the file system refuses (too long).
        WriteRefused: the name leads into a symlink loop.
        NotFound, VaultNotFound: as :func:`_find_document`.
    """
    import unicodedata

    try:
        slug = _slug_text(slug)
        composed = unicodedata.normalize("NFC", slug)
        if composed != slug:  # typed decomposed: the file of exactly that name first (it may have a composed twin)
            _, _, rel = _parse_slug(slug)
            exact = _document_at(_check_vault(vault), rel, exact=True) if rel is not None else None
            if exact is not None:
                return exact
        return _find_document(vault, composed)
    except RuntimeError as exc:  # Path.resolve() on a symlink loop
        raise WriteRefused(f"{slug!r} leads into a symlink loop ({exc}).", hint="Fix the link in the vault.") from exc
    except OSError as exc:
        raise UsageError(f"Cannot use {slug!r} as a document name: {exc.strerror or exc}.") from exc


def _find_document(vault: Path, slug: str) -> tuple[str, Path]:
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
    if rel is not None:
        found = _document_at(vault, rel)
        if found is not None:
            return found
        _refuse_dangling(vault, vault.joinpath(*rel.split("/")))
        if bare is None:
            raise NotFound(f"No document file {rel} in the vault.",
                           hint="Paths are relative to the vault folder (e.g. knowledge/decisions/my-note.md); "
                                "run dreamdb recall to find a document.")
    assert bare is not None
    types = [doc_type] if doc_type else list(MARKDOWN_TYPES)
    matches: list[tuple[str, Path]] = []
    known: list[tuple[str, Path]] = []  # (type/name, path) of every file, for the "did you mean" hint
    for t in types:
        for path in _iter_markdown(vault, t):
            name = unicodedata.normalize("NFC", path.name[:-3])
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
        others = sorted({source for _, source in _index_sources(vault, doc_type, bare)
                         if unicodedata.normalize("NFC", source) != unicodedata.normalize("NFC", file_rel)})
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
                             f"shows for {', '.join(others)} (another file of that name).",
                             hint=f"Pass the file's path to say which one: {' or '.join([file_rel, *others])}.")
        if gone:  # whoever was shown the id meant the file that is gone, not this one
            raise WriteRefused(f"{slug!r} is the id recall showed for {gone[0]}, which is no longer in the vault; "
                               f"the file of that name now is {file_rel}. Nothing was changed.",
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
            raise UsageError(f"{slug!r} is the archived file {archived[0]}; dreamdb does not edit or delete "
                             "files in archive folders (names starting with .).",
                             hint="Edit or move it by hand if you mean to.")
        if doc_type is None:
            _refuse_bare_name(vault, bare)
        # an id that a sync took away lately (its file removed or renamed, or the files of its name
        # renumbered): say so, not "no such" with a guess (QA round 44: a bare name was pointed to another note)
        for t in (doc_type,) if doc_type else MARKDOWN_TYPES:
            _refuse_renumbered_away(vault, f"{t}/{bare}")
        # names as the caller wrote theirs (type/name, or the bare name), of files dreamdb can write: UTF-8, no
        # control characters, not a link out of the vault (sync skips those too; QA round 37), each once
        pool = list(dict.fromkeys(
            (k if doc_type else k.split("/", 1)[1]) for k, path in known
            if is_utf8(k) and not _bad_char(k)
            and (not path.is_symlink() or (not _dangling(path) and _resolves_inside(vault, path)))))
        # names compared without their type (a shared "knowledge/" made "knowledge/*" close to any knowledge
        # note: QA round 40), and given back as the caller wrote theirs
        by_name: dict[str, list[str]] = {}
        for k in pool:
            by_name.setdefault(k.split("/", 1)[-1], []).append(k)
        close = list(dict.fromkeys(k for name in difflib.get_close_matches(bare, list(by_name), n=5, cutoff=0.6)
                                   for k in sorted(by_name[name], key=lambda k: not k.startswith(f"{doc_type}/"))))[:5]
        if "\u2409" in slug or "\u240a" in slug:  # copied from recall's output, where they stand for a tab/newline
            raise NotFound(f"No document {slug!r} in the vault.",
                           hint="recall shows a tab or newline in a name as ␉ or ␊; dreamdb does not edit files with"
                                " such names: rename the file without it (e.g. with mv), then retry.")
        kept = _in_trash(vault, doc_type, bare)
        if kept is not None:  # deleted by dreamdb (QA round 44: deleting twice said only "No document")
            raise NotFound(f"No document {slug!r} in the vault: it was deleted; its copy is"
                           f" {kept.relative_to(vault).as_posix()}.",
                           hint="Move the copy back to restore it, if that was a mistake.")
        raise NotFound(f"No document {slug!r} in the vault.",
                       hint=("Did you mean: " + ", ".join(close)) if close else
                       "Run dreamdb recall to find the slug.")
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

    listing = ", ".join(f"{rel_path} ({i})" if (i := shown_id(t, rel_path)) else rel_path
                        for (t, _), rel_path in zip(matches, paths))
    # An index id that is no file's name (knowledge/foo-2 with no foo-2.md) names one file; the plain name does not.
    file_ids = set(known)
    suffixed = [i for i in ids.values() if i.split("/", 1)[-1] != bare and i not in file_ids]
    raise UsageError(f"{slug!r} names {len(matches)} documents: {listing}. "
                     f"Pass the file's path to say which one (e.g. {paths[-1]}).",
                     hint="A path relative to the vault always names one file"
                     + (f" (an id with a number suffix, such as {suffixed[0]}, does too)." if suffixed else "."))


# --------------------------------------------------------------------------
# Frontmatter editing (line-level)
# --------------------------------------------------------------------------

_KEY_RE = re.compile(r"""^(?:"(?P<dq>[^"\\]*)"|'(?P<sq>[^']*)'|(?P<plain>[^\s#'"\-?:,\[\]{}&*!|>%@`][^:#]*?))\s*:(?:\s|$)""")


class _Markdown:
    """A markdown file split into BOM, frontmatter lines and body text."""

    def __init__(self, text: str) -> None:
        self.bom = "\ufeff" if text.startswith("\ufeff") else ""
        text = text[len(self.bom):]
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
            return self.bom + self.body
        ends = self.close_line.endswith("\n") or not self.body  # a file ending on its closing fence stays so
        close = self.close_line if ends else self.close_line + self.newline
        return self.bom + self.open_line + "".join(self.fm_lines) + close + self.body

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
            return {}
        try:
            data = yaml.safe_load("".join(self.fm_lines))
        except yaml.YAMLError as exc:
            raise WriteRefused(f"The document's YAML frontmatter is malformed ({_yaml_problem(exc)}).",
                               hint="Fix the frontmatter by hand; dreamdb will not guess.") from exc
        except (ValueError, OverflowError) as exc:  # PyYAML building an impossible date (2026-13-45)
            raise WriteRefused(f"The document's YAML frontmatter holds an impossible value ({exc}).",
                               hint="Fix the frontmatter by hand (e.g. a date like 2026-13-45); dreamdb will not guess.") from exc
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
        starts: list[tuple[str, int]] = []
        for i, line in enumerate(self.fm_lines):
            m = _KEY_RE.match(line)
            if m:
                key = m.group("dq") if m.group("dq") is not None else (
                    m.group("sq") if m.group("sq") is not None else m.group("plain"))
                starts.append((key, i))
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
            spans[key] = (start, end)
        return spans


def _yaml_problem(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or type(exc).__name__
    return f"{problem} at line {mark.line + 2}" if mark is not None else str(problem)


def _scalar(value: Any) -> str:
    """One YAML scalar, safe in block and flow context."""
    import yaml

    dumped = yaml.safe_dump([value], default_flow_style=True, allow_unicode=True, width=10**9)
    dumped = dumped.strip()
    assert dumped.startswith("[") and dumped.endswith("]")
    return dumped[1:-1]


def _timestamp(value: date, old_text: str) -> str:
    """A date or datetime as the plain YAML timestamp PyYAML reads back to the same value
    (``2026-08-18``, ``2026-08-18 10:00:00``, ``2026-08-18T10:00:00Z``), with a ``T`` between date
    and time when the old value had one (a flow dump would write ``!!timestamp '…'``)."""
    if not isinstance(value, datetime):
        return value.isoformat()
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
        whole = yaml.safe_load(body)
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
        return ""
    for m in re.finditer(r"[ \t]+#", body):
        try:
            if yaml.safe_load(body[:m.start()]) == whole:
                return body[m.start():]
        except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
            continue
    return ""


def _render_key(key: str, value: Any, old: list[str], newline: str) -> list[str]:
    """Render ``key: value`` as frontmatter lines, following the old lines' style; a one-line key
    keeps its trailing comment when its new value is one line too."""
    # a value's own line breaks (a quoted scalar spanning lines) take the file's line ending too
    lines = [ln.replace("\r\n", "\n").replace("\n", newline) for ln in _render_value(key, value, old, newline)]
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
    if isinstance(value, str) and old and after_colon[:1] in ('"', "'") and "\n" not in value:
        if after_colon[:1] == '"':
            return [f"{key}: {json.dumps(value, ensure_ascii=False)}{newline}"]
        if not any(ord(c) < 32 for c in value):
            return [f"{key}: '" + value.replace("'", "''") + f"'{newline}"]
    return [f"{key}: {_scalar(value)}{newline}"]


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
    """Set top-level frontmatter keys, editing only their lines (see module doc)."""
    import yaml

    original = doc.frontmatter()
    expected = dict(original)
    expected.update(changes)
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
        rendered = _render_key(key, value, doc.fm_lines[start:end] if start is not None else [], doc.newline)
        try:
            candidate = yaml.safe_load("".join(rendered))
        except yaml.YAMLError:
            candidate = None
        if not isinstance(candidate, dict) or candidate.get(key) != value:
            rendered = [f"{key}: {_scalar(value)}{doc.newline}"]
        if start is not None:
            doc.fm_lines[start:end] = rendered
        else:
            insert_at = len(doc.fm_lines)
            while insert_at > 0 and not doc.fm_lines[insert_at - 1].strip():
                insert_at -= 1
            doc.fm_lines[insert_at:insert_at] = rendered
    try:
        got = yaml.safe_load("".join(doc.fm_lines)) or {}
    except yaml.YAMLError:
        got = None
    if got != expected or _repeats_a_key("".join(doc.fm_lines)):
        # The line edit did not produce the intended mapping: re-dump whole, unless that would drop comments.
        if any(ln.lstrip().startswith("#") or _trailing_comment(ln) for ln in original_lines):
            raise WriteRefused("The document's frontmatter uses YAML that dreamdb cannot edit line by line "
                               "(anchors and aliases, explicit ? keys…), and rewriting it whole would drop its "
                               "comments; nothing was written.",
                               hint="Make that edit by hand, or remove the comments first.")
        dumped = yaml.safe_dump(expected, allow_unicode=True, sort_keys=False, width=10**9)
        doc.fm_lines = [ln + doc.newline for ln in dumped.splitlines()]
        if (yaml.safe_load("".join(doc.fm_lines)) or {}) != expected:  # pragma: no cover
            raise WriteRefused("Internal error: could not write the frontmatter faithfully; nothing written.")


def _repeats_a_key(text: str) -> bool:
    """Whether a YAML mapping names a top-level key twice (PyYAML keeps the last; strict parsers refuse
    the file). A key written in a form the line editor does not see (``? description`` on its own
    line) gets a second line from it: the frontmatter is then dumped whole instead."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return False
    if not isinstance(node, yaml.MappingNode):
        return False
    keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
    return len(keys) != len(set(keys))


def _updated_value(old: Any, now: datetime) -> Any:
    if isinstance(old, datetime):
        return now.replace(microsecond=0) if old.tzinfo else now.replace(microsecond=0, tzinfo=None)
    if isinstance(old, date):
        return now.date()
    if isinstance(old, str) and "T" in old:
        return now.replace(microsecond=0).isoformat()
    return now.date().isoformat()


def _load_markdown(path: Path) -> _Markdown:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WriteRefused(f"{path.name} is not UTF-8 text; it was not changed.") from exc
    return _Markdown(text)


def _clean_tags(tags: Sequence[str] | str) -> list[str]:
    """Tags as given (a list, or one comma-separated string): stripped, empty ones and repeats dropped.

    Repeats are exact (``a`` and ``A`` are two tags); the first one's place is kept.

    Raises:
        UsageError: a tag holds a newline, tab, NUL or other control character; ``tags`` is not text.
    """
    if isinstance(tags, str):
        items = tags.split(",")
    elif isinstance(tags, (list, tuple)) and all(isinstance(t, (str, int, float)) and not isinstance(t, bool)
                                                 for t in tags):
        items = [str(t) for t in tags]
    else:
        raise UsageError(f"tags must be a comma-separated string or a list of strings, got {tags!r}.")
    out: list[str] = []
    for item in items:
        if _bad_char(item):
            raise UsageError(f"The tag {item!r} contains a newline or another control character.",
                             hint="Tags are one line each, separated by commas (e.g. --tags \"recall, storage\").")
        tag = item.strip()
        if tag and tag not in out:
            out.append(tag)
    return out


def _visible(text: str) -> bool:
    """Whether ``text`` holds a character a reader sees: not only whitespace and the invisible format
    characters the analyzer removes (:func:`dreamdb.analyzer.normalize`: zero-width space, joiners, soft hyphen)."""
    from dreamdb.analyzer import normalize

    return bool(normalize(text).strip())


def _same_value(key: str, current: Any, wanted: Any) -> bool:
    """Whether the frontmatter value ``current`` already is ``wanted`` (a flag as the indexer reads it)."""
    from dreamdb.vault.parse import frontmatter_bool

    if key == "pinned":
        return frontmatter_bool(current) == bool(wanted)
    if key == "tags":  # a comma string or a list, read alike (QA round 39: "alpha, beta" was rewritten as a list)
        try:
            return isinstance(current, (str, list)) and _clean_tags(current) == wanted
        except UsageError:  # (a tag the file holds that dreamdb would not write: a change, then)
            return False
    if isinstance(current, str) and isinstance(wanted, str):  # a folded or literal block ends in a newline
        return current.strip() == wanted.strip()
    return type(current) is type(wanted) and current == wanted


def _plan_update(vault: Path, path: Path, changes: dict[str, Any], content: str | None, append: str | None,
                 pin: bool | None, clock: datetime) -> tuple[Path, bytes, bytes]:
    """Compute an update without writing: ``(real path, current bytes, new bytes)``.

    Raises:
        WriteRefused: outside the vault, write-protected, not UTF-8, unclosed frontmatter (any edit,
            even an append: where the body starts is unknown), malformed frontmatter that must change.
    """
    real = _confined(vault, path)
    if (vault.resolve() / INDEX_DIRNAME) in real.parents:  # a link into dreamdb's own folder (QA round 26)
        raise WriteRefused(f"{path} resolves to {real}, in dreamdb's own folder {INDEX_DIRNAME}/ (the index, its "
                           "trash and settings), not a note; nothing was changed.",
                           hint="Remove the symlink, or edit the file it points to by hand.")
    _check_file_writable(real)
    with refuse_os_errors(real, "read"):
        old = real.read_bytes()
    try:
        doc = _Markdown(old.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise WriteRefused(f"{real.name} is not UTF-8 text; it was not changed.") from exc
    doc.check_closed()
    changes = dict(changes)
    # (read only when the frontmatter may change: a body edit of a note with odd frontmatter is no reason to parse it)
    current = doc.frontmatter() if doc.has_fm and (changes or pin is not None) else {}
    if pin is not None and (pin or "pinned" in current):
        changes["pinned"] = bool(pin)
    if changes and doc.has_fm:
        # a key that already has the value asked for is no change, and does not date the note (QA round 37)
        changes = {k: v for k, v in changes.items() if not (k in current and _same_value(k, current[k], v))}
        for key in ("updated", "updated_at"):
            if changes and key in current:
                changes[key] = _updated_value(current[key], clock)
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
    return real, old, doc.render().encode("utf-8")


def _relocate(vault: Path, slug: str, rel: str) -> tuple[str, Path]:
    """Under the lock: the document found before the lock, by its path (it may have gone meanwhile)."""
    found = _document_at(vault, rel)
    if found is None:
        raise NotFound(f"{slug!r} ({rel}) was moved or removed while dreamdb waited for the vault lock.",
                       hint="Run dreamdb recall to find it again.")
    return found


def update(
    vault: Path,
    slug: str,
    *,
    description: str | None = None,
    tags: Sequence[str] | str | None = None,
    content: str | None = None,
    append: str | None = None,
    pin: bool | None = None,
    now: datetime | None = None,
    on_kept: Callable[[Path], None] | None = None,
) -> Path:
    """Edit a markdown document's frontmatter and/or body, keeping its previous version.

    Only what is asked changes: ``description``, ``tags`` and ``pinned`` are
    set in the frontmatter by rewriting just their lines (the other keys keep
    their bytes and order); ``content`` replaces the body after the
    frontmatter; ``append`` adds a paragraph at the end of the body. If the
    frontmatter already has ``updated`` and/or ``updated_at``, they are set to
    ``now`` (same value type as before). A file without frontmatter gets one
    when a frontmatter field is set.

    Before the file is replaced, its previous bytes are kept (atomically) in
    the trash :func:`delete` uses, ``<vault>/.dreamdb/trash/<type>/<UTC
    timestamp>-<file name>``: moving that file back undoes the update. An
    update that would not change a byte writes nothing.

    Args:
        vault: the ``_dream_context`` folder.
        slug: ``type/slug``, a bare slug, recall's id or a vault-relative path
            (see :func:`find_document`).
        description: new ``description``.
        tags: new ``tags`` (a list, or a comma-separated string), replacing the
            old list; blanks and repeats are dropped, each tag is stripped.
        content: new body (everything after the frontmatter).
        append: text to add at the end of the body, after a blank line.
        pin: ``True`` sets ``pinned: true``; ``False`` sets ``pinned: false``
            (only if the key exists or the document was pinned).
        now: the clock for ``updated``/``updated_at`` (default: now, local time).
        on_kept: called with the path of the kept previous version (when one was written).

    Returns:
        The path of the edited file (the real path inside the vault).

    Raises:
        UsageError: nothing to change; ``content`` and ``append`` together; an empty
            ``content`` or ``append``; a malformed or ambiguous slug; a tag with a newline or another
            control character; ``pin`` not a bool or None, ``now`` neither a
            datetime nor an ISO-8601 string.
        NotFound: no such document.
        WriteRefused: the frontmatter must change but is malformed YAML or
            not a mapping; the frontmatter is not closed (refused for every
            edit, ``append`` included); the file is not UTF-8 or is
            write-protected; the document resolves outside the vault; the
            vault is not writable; writing failed (disk full, quota, read-only
            file system: the file is then unchanged).
        LockTimeout: another writer held the vault lock too long.
        VaultNotFound: ``vault`` is not a folder.
    """
    COMMITTED.set(None)  # (this write's change, once it is on disk)
    if all(v is None for v in (description, tags, content, append, pin)):
        raise UsageError("Nothing to update.", hint="Give a description, tags, content, append or pin.")
    if content is not None and append is not None:
        raise UsageError("Give either content (replace the body) or append, not both.")
    changes: dict[str, Any] = {}
    if description is not None:
        changes["description"] = _check_text("description", description)
    if tags is not None:
        changes["tags"] = _clean_tags(tags)
    for name, value in (("content", content), ("append", append)):
        if value is not None and (not isinstance(value, str) or "\x00" in value):
            raise UsageError(f"{name} must be text without NUL characters.")
    if append is not None and not _visible(append):
        raise UsageError("Nothing to append.")
    if content is not None and not _visible(content):  # an unset shell variable would erase the note (QA round 37)
        raise UsageError("The new content is empty: it would erase the note's body.",
                         hint="Give the new body; to remove the note, use delete (it keeps a copy in the trash).")
    _flag("pin", pin, optional=True)
    slug = _slug_text(slug)
    _require_utf8(slug=slug, description=description, tags=tags, content=content, append=append)
    vault = _check_vault(vault)
    _parse_slug(slug)  # reject a malformed slug before touching anything
    _check_writable(vault)
    clock = _clock(now)
    # Check first, without creating anything: the document exists and the edit can be made.
    _, path = find_document(vault, slug)
    rel = path.relative_to(vault).as_posix()
    _plan_update(vault, path, changes, content, append, pin, clock)
    with vault_lock(vault):
        doc_type, path = _relocate(vault, slug, rel)
        real, old, new = _plan_update(vault, path, changes, content, append, pin, clock)
        if new != old:
            kept = _trash_path(vault, doc_type, real.name)
            atomic_write_bytes(kept, old)
            try:
                atomic_write_bytes(real, new, commit=True)
            except BaseException:  # the document is unchanged (unless it was replaced): its copy is not needed
                if COMMITTED.get() != str(real):
                    with contextlib.suppress(OSError):
                        kept.unlink()
                raise
            if on_kept is not None:
                on_kept(kept)
    return real


def _check_deletable(vault: Path, doc_type: str, path: Path, force: bool) -> None:
    """Raise WriteRefused when ``path`` cannot or (without ``force``) should not be deleted: a special file, a
    folder the move cannot leave or reach (an attribute on the note's folder or the trash: before any hint
    to pin off or to force, which could not help; QA round 44), then without ``force`` a write-protected,
    unreadable-frontmatter or pinned note."""
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
    if force:
        return
    force_hint = "dreamdb delete --force deletes it anyway (force=True from Python)."
    try:
        _check_file_writable(path)
    except WriteRefused as exc:
        # --force helps with a write-protected mode only: not on a read-only mount or an immutable file (QA 42)
        raise WriteRefused(f"Not deleting {doc_type}/{path.name[:-3]}: {exc.message}",
                           hint=force_hint if "write-protected" in exc.message else exc.hint) from exc
    try:
        meta = _load_markdown(path).frontmatter()
    except WriteRefused as exc:
        raise WriteRefused(f"Not deleting {doc_type}/{path.name[:-3]}: {exc.message}", hint=force_hint) from exc
    from dreamdb.vault.parse import frontmatter_bool

    if frontmatter_bool(meta.get("pinned")):
        raise WriteRefused(f"{doc_type}/{path.name[:-3]} is pinned; not deleting it.",
                           hint="Unpin it first (update --unpin), or pass --force (force=True from Python).")


def delete(vault: Path, slug: str, *, force: bool = False) -> Path:
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

    Returns:
        Where the document's copy now is (``.dreamdb/trash/<type>/<UTC time>-<name>.md``).

    Raises:
        UsageError: a malformed or ambiguous slug, or a changelog/memory id.
        NotFound: no such document.
        WriteRefused: the document is pinned, write-protected or its
            frontmatter is malformed (without ``force``); it resolves outside
            the vault; the vault is not writable; the move failed.
        LockTimeout: another writer held the vault lock too long.
        VaultNotFound: ``vault`` is not a folder.
    """
    COMMITTED.set(None)  # (this write's change, once it is on disk)
    _flag("force", force)
    slug = _slug_text(slug)
    _require_utf8(slug=slug)
    vault = _check_vault(vault)
    _parse_slug(slug)  # reject a malformed slug before touching anything
    _check_writable(vault)
    # Check first, without creating anything.
    doc_type, path = find_document(vault, slug)
    rel = path.relative_to(vault).as_posix()
    _confined(vault, path)
    _check_deletable(vault, doc_type, path, force)
    with vault_lock(vault):
        doc_type, path = _relocate(vault, slug, rel)
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
