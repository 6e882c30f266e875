"""Low-level safety of the vault writes: atomic file replacement, the vault lock, the trash folder,
confinement to the vault, and refusals that name the real cause (permissions, attributes, mounts).

The rules they implement are listed in :mod:`dreamdb.writes`."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import datetime, timezone
from pathlib import Path

from dreamdb.errors import (OPEN_FILES_ERRNOS, OPEN_FILES_HINT, OPEN_FILES_REASONS, IndexUnavailable, LockTimeout,
                            VaultNotFound, WriteRefused)


#: Seconds a write waits for another dreamdb process's vault lock.
LOCK_TIMEOUT_S = 10.0

ENV_LOCK_TIMEOUT = "DREAMDB_LOCK_TIMEOUT"
"""The environment variable naming the seconds the write commands (``remember``, ``update``, ``delete``) wait for
the vault lock (:func:`env_lock_timeout`), instead of :data:`LOCK_TIMEOUT_S`: writes queue for the lock, so many at
once may wait longer than that without any one holding it long (QA round 135-E F1)."""

LOCK_LOOK_S = 0.5
"""How often (seconds) a write waiting for the vault lock looks which process holds it (:func:`_lock_holder`), to say
so if it gives up."""

LOCK_FOLDER_RETRIES = 3
"""How many times :func:`vault_lock` makes ``.dreamdb`` again when it vanished before the lock file could be made in
it (a ``rm -rf .dreamdb`` while writes run: QA round 135-E F2), before it refuses."""


#: Name of the index folder inside the vault (holds the lock and the trash).
INDEX_DIRNAME = ".dreamdb"


#: Longest file name (UTF-8 bytes) most file systems accept (ext4, APFS, NTFS in UTF-16 units).
NAME_MAX = 255

#: Longest path (bytes, its final NUL included) the system accepts, Linux's ``PATH_MAX``.
PATH_MAX = 4096


def name_room(folder: Path | str) -> int:
    """The most bytes a file name in ``folder`` may have: :data:`NAME_MAX`, or less where the folder's path (as given)
    leaves less of :data:`PATH_MAX` (QA round 143-B F2: a note within 27 bytes of it could not be updated, its
    temporary file's longer path "File name too long")."""
    return min(NAME_MAX, PATH_MAX - 1 - len(os.fsencode(os.path.join(os.fspath(folder), ""))))


_OS_REASONS = {errno.ENOSPC: "the disk is full", getattr(errno, "EDQUOT", -1): "the disk quota is exceeded",
               errno.EROFS: "the file system is read-only", errno.EACCES: "permission denied",
               errno.EPERM: "permission denied", errno.EISDIR: "it is a folder, not a file",
               errno.ENOTDIR: "a part of its path is a file, not a folder", errno.EFBIG: "the file is too large",
               errno.ENAMETOOLONG: "its name or path is too long for the system", **OPEN_FILES_REASONS}
CHECK_HINT = "Check the file and its folder, then retry."
"""The hint of a write refused for a cause :func:`refuse_os_errors` cannot name (a caller may say more)."""

_OS_HINTS = {errno.ENOSPC: "Free some disk space, then retry.",
             getattr(errno, "EDQUOT", -1): "Free some space within your disk quota, then retry.",
             errno.EFBIG: "The file size limit (ulimit -f) or the file system's limit was reached.",
             errno.EROFS: "Remount the file system read-write, or work on a writable copy.",
             errno.EACCES: "Fix the permissions, then retry.", errno.EPERM: "Fix the permissions, then retry.",
             errno.EISDIR: "A file is expected there: move the folder away, then retry.",
             errno.ENOTDIR: "A folder is expected there: move the file that stands in its way, then retry.",
             errno.ENAMETOOLONG: f"Use a shorter name or a shallower folder (a name may have {NAME_MAX} bytes, a path"
                                 f" {PATH_MAX - 1:,}), then retry.",
             **dict.fromkeys(OPEN_FILES_ERRNOS, OPEN_FILES_HINT)}  # (QA round 153-E F1: "Check the file")


def file_size_limited() -> bool:
    """Whether this process has a file size limit (``ulimit -f``, ``RLIMIT_FSIZE``'s soft limit): a write past it
    fails with EFBIG, which SQLite reports only as "disk I/O error" (Python ignores SIGXFSZ). False where the
    limit cannot be read (Windows)."""
    try:
        import resource

        return resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY
    except (ImportError, OSError, ValueError):
        return False


@contextlib.contextmanager
def refuse_os_errors(path: Path, action: str = "write") -> Iterator[None]:
    """Turn an :class:`OSError` raised in the block into :class:`~dreamdb.errors.WriteRefused`.

    The message names the file (the error's own file name, else ``path``) and
    the cause in words (disk full, quota exceeded, read-only file system,
    permission denied, the open-file limit); the block's writes are atomic, so nothing was changed.

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
        hint = _OS_HINTS.get(exc.errno or 0, CHECK_HINT)
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EBUSY, errno.EROFS, errno.EXDEV):
            dest = getattr(exc, "filename2", None)
            reason, hint = _refusal_cause(Path(where), exc.errno, reason, hint, Path(dest) if dest else None)
        detail = f"{reason} ({exc.strerror})" if reason and exc.strerror else reason or exc.strerror or str(exc)
        left = getattr(exc, "temp_left", None)  # (a temporary file that could not be removed: _note_temp_left)
        raise WriteRefused(f"Cannot {action} {where}: {detail}; nothing was changed.{' ' + left if left else ''}",
                           hint=hint) from exc


KERNEL_FILE_SYSTEMS = frozenset(("proc", "sysfs", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs", "configfs",
                                 "pstore", "efivarfs", "bpf", "fusectl", "binfmt_misc", "selinuxfs", "devpts", "mqueue"))
"""Linux file systems whose files the kernel makes (``/proc``, ``/sys``, …): no file on a disk, and no change of mode
lets a program replace one (QA round 143-A F4: ``/proc/version``, mode 444, was given ``chmod u+w``)."""


def kernel_file_system(path: Path) -> str | None:
    """The type of the kernel's file system (:data:`KERNEL_FILE_SYSTEMS`) ``path`` is on (``proc``), or ``None``: a
    file system of disk files, or where the mounts cannot be read (``/proc/self/mounts``, Linux). The mount is the
    longest mount point the real path lies under."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as handle:
            mounts = [line.split() for line in handle]
    except OSError:
        return None
    real = os.path.realpath(path)
    best, kind = "", None
    for fields in mounts:
        if len(fields) < 3:
            continue
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[1])  # (\040 is a space)
        if (real == point or real.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
            best, kind = point, fields[2]
    return kind if kind in KERNEL_FILE_SYSTEMS else None


def _kernel_file_refusal(path: Path) -> tuple[str, str] | None:
    """``(reason, hint)`` for a file on the kernel's file system (:func:`kernel_file_system`), else ``None``."""
    kind = kernel_file_system(path)
    if kind is None:
        return None
    return (f"it is on the kernel's {kind} file system, whose files the kernel makes (no file on a disk)",
            "Write to a file on a disk instead.")


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
    kernel = _kernel_file_refusal(path)
    if kernel is not None:  # (before a read-only mount: remounting /sys read-write would not help either)
        return kernel
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


UPDATE_BACKUP_SUFFIX = ".before-update"
"""What the name of the copy :func:`dreamdb.writes.documents.update` keeps of a note's previous version adds before its extension
(``x.md`` → ``<UTC time>-x.before-update.md``), so that it is never taken for the copy :func:`dreamdb.writes.documents.delete` keeps of the
note itself (``<UTC time>-x.md``)."""


def update_backup_name(name: str) -> str:
    """The file name :func:`dreamdb.writes.documents.update`'s copy of the note ``name`` (``x.md``) gets in the trash, before its time
    prefix: ``x.before-update.md``."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}{UPDATE_BACKUP_SUFFIX}.{ext}" if dot else f"{name}{UPDATE_BACKUP_SUFFIX}"


def _fit_name(name: str, limit: int = NAME_MAX) -> str:
    """Return ``name``, or when its UTF-8 form exceeds ``limit`` bytes, a shortened unique form.

    The short form keeps the start of the name and its extension (with :data:`UPDATE_BACKUP_SUFFIX` before it, if
    there) and puts ``~`` and 8 hex digits of the full name's SHA-1 between them
    (``20261130T…Z-very-long-na~1a2b3c4d.md``), so different names stay different.
    """
    raw = name.encode("utf-8")
    if len(raw) <= limit:
        return name
    ext = os.path.splitext(name)[1]
    ext = ext if len(ext.encode("utf-8")) <= 16 else ""
    if name[:len(name) - len(ext)].endswith(UPDATE_BACKUP_SUFFIX):  # (an update's copy stays one: QA round 64 L1)
        ext = UPDATE_BACKUP_SUFFIX + ext
    tag = "~" + hashlib.sha1(raw).hexdigest()[:8]
    room = limit - len(tag) - len(ext.encode("utf-8"))
    return name[:len(name) - len(ext)].encode("utf-8")[:room].decode("utf-8", "ignore") + tag + ext


def _check_file_writable(path: Path) -> None:
    """Raise WriteRefused when the existing file ``path`` is write-protected (no write bit, or no W_OK access)
    or is not a regular file (a pipe, device or socket named ``*.md``: reading a pipe waits forever).

    A missing file passes (it will be created), and so does one moved or removed while it was checked: a refusal
    is made only after ``path`` is found again as the file checked (QA round 151-B F1: a note renamed by ``mv``
    meanwhile failed the access check, as it was gone, and was called immutable or append-only, exit 6); the
    caller's read or write then finds it gone and says so ("was moved or removed while dreamdb read it", exit 7).
    Another file put in its place meanwhile is checked in turn.
    """
    for attempt in range(CHANGED_RETRIES + 1):
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return
        try:
            _check_stat_writable(path, st)
            return
        except WriteRefused:
            try:
                now = os.stat(path)
            except FileNotFoundError:
                return  # (moved or removed meanwhile, not refused)
            if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino) or attempt == CHANGED_RETRIES:
                raise


def _check_stat_writable(path: Path, st: os.stat_result) -> None:
    """:func:`_check_file_writable` for the file ``path`` whose stat was ``st``."""
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"{path} is not a regular file (a pipe, device or socket); it was not changed.",
                           hint="dreamdb edits only regular files.")
    if _attributes(path) or _read_only_mount(path):  # (before the mode: chmod cannot help there, QA round 43)
        _refuse_unwritable(path, st)
    if not st.st_mode & 0o222:
        kernel = _kernel_file_refusal(path)  # (nor there: QA round 143-A F4, /proc/version was told to chmod u+w)
        if kernel is not None:
            raise WriteRefused(f"{path} cannot be written: {kernel[0]}; it was not changed.", hint=kernel[1])
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
    """Why a file is not writable (QA round 40: an immutable file was told to chmod u+w): a read-only file
    system, an attribute such as immutable (``lsattr``), another owner, or its owner's write bit off."""
    if _read_only_mount(path):
        return "it is on a read-only file system"
    attributes = _attributes(path)
    if attributes:
        return f"it has the {' and '.join(attributes)} attribute"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():  # (root without CAP_FOWNER too: QA round 79-B F5)
        return f"mode {st.st_mode & 0o7777:o}, owned by another user (uid {st.st_uid})"
    if hasattr(os, "geteuid") and st.st_uid == os.geteuid() and not st.st_mode & 0o200:
        # (QA round 72-A: a chmod 444 index was told of an immutable attribute)
        return f"mode {st.st_mode & 0o7777:o}: no write permission (chmod u+w {path.name})"
    return f"mode {st.st_mode & 0o7777:o}, yet writes are refused: an immutable or append-only attribute (lsattr)?"


COMMITTED: ContextVar[str | None] = ContextVar("dreamdb_writes_committed", default=None)
"""The vault file the last :func:`remember`, :func:`update` or :func:`delete` of this context changed,
set the moment the change is on disk (else ``None``; a caller resets it before a write). The CLI reads
it when Ctrl-C comes after that moment: the change is done, and must not be repeated."""


def _committed(path: Path, what: str | None = None) -> None:
    COMMITTED.set(str(path) if what is None else f"{path} ({what})")


@contextlib.contextmanager
def _uninterrupted():
    """Hold SIGINT, SIGTERM and SIGHUP back (POSIX, main thread) for the few statements inside: a Ctrl-C
    between a file's replacement and :func:`_committed` would report a saved change as interrupted
    (QA round 38); it is raised right after them instead."""
    import signal
    import threading

    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        raise_if_signalled()
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM} | ({signal.SIGHUP} if hasattr(signal, "SIGHUP") else set())
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)  # (SIGHUP too: QA round 112-A F3, it is an interruption)
    try:
        raise_if_signalled()  # (signals held from here: one that comes now is raised after the change, as saved)
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def raise_if_signalled() -> None:
    """Raise ``KeyboardInterrupt`` when the ``dreamdb`` executable was sent SIGINT, SIGTERM or SIGHUP whose interruption
    Python lost (:data:`dreamdb.entry.SIGNALLED`): a write that goes on would save a change reported as interrupted, or as
    done to a caller that stopped it and then repeats it (QA round 108-C F1). Nothing in a program that imports
    dreamdb without running its executable."""
    entry = sys.modules.get("dreamdb.entry")
    if entry is not None and getattr(entry, "SIGNALLED", False) and not getattr(entry, "_DECIDED", True):
        raise KeyboardInterrupt


Identity = tuple[int, int, int, int]
"""What tells a file's content changed without reading it: ``(st_ino, st_size, st_mtime_ns, st_ctime_ns)``. A
write in place changes its size or times, a replacement (``os.replace``, an editor's save, ``git checkout``) its
inode too."""

ABSENT: Identity = (-1, -1, -1, -1)
"""The :data:`Identity` of a file that did not exist when it was read (``expect=ABSENT``: it must not exist yet)."""


class FileChanged(WriteRefused):
    """The file changed between dreamdb's read and its replacement (another program wrote it): nothing was
    changed (QA round 59 M2). A write that can be made again on the new content (an appended entry or
    paragraph, a frontmatter key) retries before it refuses."""


CHANGED_RETRIES = 2
"""How many times :func:`dreamdb.writes.update` and :func:`dreamdb.writes.remember` make their edit again when another program
wrote the file between their read and their rename (:class:`FileChanged`), before they
refuse; ``update`` with ``content`` only when the file's bytes are still the ones read (its times alone
changed: QA round 60 L5), since the new body was meant to replace the one read."""


def identity(st: os.stat_result) -> Identity:
    """The :data:`Identity` of a file from its ``stat``."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_with_identity(path: Path) -> tuple[bytes, Identity]:
    """``path``'s bytes and the :data:`Identity` of the file they were read from (``fstat`` of the open file,
    taken before the read: a write during the read changes the times, and the later check refuses).

    Raises:
        OSError: as :func:`open` (the caller turns it into WriteRefused).
    """
    with open(path, "rb") as handle:
        seen = identity(os.fstat(handle.fileno()))
        return handle.read(), seen


def _changed(path: Path, how: str) -> FileChanged:
    """The :class:`FileChanged` for ``path``, which another program changed as ``how`` says."""
    return FileChanged(f"{path} changed while dreamdb was editing it ({how}); nothing was changed.",
                       hint="Run the command again: it edits the file as it is now.")


def _check_unchanged(path: Path, expect: Identity) -> None:
    """Raise :class:`FileChanged` when ``path`` is no longer the file whose :data:`Identity` was ``expect``."""
    try:
        now = identity(os.stat(path))
    except FileNotFoundError:
        now = ABSENT
    if now != expect:
        raise _changed(path, "another program removed it" if now == ABSENT else "another program wrote it")


_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2  # renameat2(2) flags (linux/fs.h)
_AT_FDCWD = -100
_RENAMEAT2: list = []  # [libc's renameat2, or None], looked up once


def _renameat2():
    """libc's ``renameat2`` (Linux, glibc 2.28+) as a ctypes function, or ``None`` where there is none."""
    if not _RENAMEAT2:
        fn = None
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).renameat2
                fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
                fn.restype = ctypes.c_int
        _RENAMEAT2.append(fn)
    return _RENAMEAT2[0]


def _swap_in(tmp_name: str, path: Path, expect: Identity, keep_old: Path | None = None) -> bool:
    """Put ``tmp_name`` in ``path``'s place only if ``path`` is still the file of ``expect``, with no window for
    another program's write to be lost: ``renameat2(RENAME_EXCHANGE)`` swaps the two names atomically, and the
    file swapped out is then checked (inode, size, mtime; a rename changes only the ctime). Another program's save
    that landed after the last check (QA round 60 M2: an editor's save between it and the rename was lost in 2 of
    3 runs) is swapped back in place and :class:`FileChanged` raised. A file that did not exist
    (``expect == ABSENT``) is created with ``RENAME_NOREPLACE``, which fails if another program made one meanwhile.

    The file swapped out is deleted, or with ``keep_old`` renamed there: a program that opened it before the
    exchange and writes to it after (a shell's ``>>``) then writes into that kept copy, not into a deleted file
    (QA round 69 E-H1: 3 lines lost in 470 updates racing an appending program).

    Returns:
        True when done; False where the call or the file system lacks it (the caller uses ``os.replace`` after
        its last check).

    Raises:
        FileChanged: ``path`` changed, was removed, was created or became a symbolic link meanwhile (callers
            pass resolved paths; ``tmp_name`` then holds the new data).
        OSError: the rename failed otherwise.
    """
    fn = _renameat2()
    if fn is None:
        return False
    if os.path.islink(path):  # callers pass resolved paths: a link there now is another program's change (QA round 61 L2)
        raise _changed(path, "another program put a link in its place")
    import ctypes

    src, dst = os.fsencode(tmp_name), os.fsencode(str(path))
    if expect == ABSENT:
        if fn(_AT_FDCWD, src, _AT_FDCWD, dst, _RENAME_NOREPLACE) == 0:
            return True
        err = ctypes.get_errno()
        if err == errno.EEXIST:
            raise FileChanged(f"{path} was created by another program while dreamdb was writing it; nothing was changed.",
                              hint="Run the command again: it edits the file as it is now.")
    elif (own := os.lstat(tmp_name).st_ino) and fn(_AT_FDCWD, src, _AT_FDCWD, dst, _RENAME_EXCHANGE) == 0:
        old = os.lstat(tmp_name)  # what was in path's place
        if (old.st_ino, old.st_size, old.st_mtime_ns) == expect[:3]:
            if keep_old is not None:
                try:
                    os.replace(tmp_name, keep_old)
                    return True
                except OSError:  # (another file system: the copy written before stays)
                    pass
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            return True
        back = fn(_AT_FDCWD, src, _AT_FDCWD, dst, _RENAME_EXCHANGE)  # the other program's file back in its place
        try:
            ours = back == 0 and os.lstat(tmp_name).st_ino == own
        except OSError:
            ours = False
        if not ours:
            # Another save landed between the two exchanges, or the file was moved away: what tmp_name holds now is
            # another program's, never deleted (the caller removes tmp_name): kept beside it (QA round 61 M1).
            kept = _keep_conflict(tmp_name, path)
            err = FileChanged(f"{path} changed twice while dreamdb was writing it (another program wrote or moved it);"
                              f" a version of the other program's is kept as {kept}.",
                              hint="Compare it with the note, keep what you want, then run the command again.")
            err.keeps_temp = kept == tmp_name  # (not renamed: the caller must not delete it)
            raise err
        raise _changed(path, "another program wrote it")
    else:
        err = ctypes.get_errno()
        if err == errno.ENOENT:
            raise _changed(path, "another program removed it")
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # not on this file system, or no such call
        return False
    if err == errno.EPERM and _call_blocked(fn):  # (a seccomp filter's answer: no such call for this process)
        return False
    # (EPERM otherwise is the file system's refusal, an append-only or immutable file or folder: os.replace would get
    # it too, without the exchange's protection; QA round 152-H F1 saw it taken for "no such call")
    raise OSError(err, os.strerror(err), str(path))


def _call_blocked(fn) -> bool:
    """Whether ``renameat2`` (``fn``) is refused to this process whatever its arguments (a seccomp filter answers
    EPERM, or ENOSYS, before the kernel looks at a path): a call with empty names, which the kernel answers ENOENT."""
    import ctypes

    return fn(_AT_FDCWD, b"", _AT_FDCWD, b"", 0) != 0 and ctypes.get_errno() in (errno.EPERM, errno.ENOSYS)


def _keep_conflict(tmp_name: str, path: Path) -> str:
    """Rename ``tmp_name`` (a version of ``path`` another program made) to a visible name beside ``path``:
    ``<name>.dreamdb-conflict-<UTC time>``; the name given (``tmp_name`` itself if the rename fails)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    kept = path.with_name(_fit_name(path.name, NAME_MAX - 40) + f".dreamdb-conflict-{stamp}")
    try:
        os.rename(tmp_name, kept)
        return str(kept)
    except OSError:
        return tmp_name


def atomic_write_bytes(path: Path, data: bytes, *, commit: bool | str = False, expect: Identity | None = None,
                       keep_old: Path | None = None, like: Path | None = None) -> None:
    """Replace ``path``'s content with ``data`` atomically.

    Writes a temporary file in the same folder, fsyncs it, gives it the
    existing file's permission bits (0644 minus umask for a new file), extended
    attributes (its ACL) and owner and group (when the process may: a failure to
    keep the group is passed over, one to keep the owner refused), and
    ``os.replace``-s it over ``path``; then fsyncs the folder (best effort).

    Args:
        path: the file to create or replace. If it is a symlink, the link is
            replaced by a regular file; callers pass resolved paths.
        data: the complete new content.
        commit: the write is the user's change (a note, CHANGELOG.json), not a copy kept on the side:
            :data:`COMMITTED` names ``path`` the moment it is replaced, before the folder's fsync (and, given as a
            string, what changed in it: ``"entry changelog/<id>"``).
        expect: the :data:`Identity` of the file when ``data`` was computed from it (:func:`read_with_identity`;
            :data:`ABSENT` when it did not exist): checked before the temporary file is written and again
            just before the rename, so another program's write meanwhile is not overwritten (QA round 59 M2).
        keep_old: with ``expect``, where the replaced file itself goes (the trash copy of the previous version,
            see :func:`_swap_in`), instead of being deleted.
        like: where ``path`` does not exist, the file whose permission bits, extended attributes and (where the
            process may: no refusal) owner and group it is given, as a copy of that file (update's trash copy of a
            note, which moved back must undo the update: QA round 152-H F3).

    Raises:
        FileChanged: ``expect`` was given and the file is no longer that one (a :class:`WriteRefused`;
            the target is unchanged and the temporary file removed).
        WriteRefused: the file is write-protected (see :func:`_check_file_writable`), it belongs to another
            user whom the replacement could not be given to, or writing failed: disk full, quota exceeded, read-only file
            system, no permission on the folder (the target is then
            unchanged and the temporary file removed; one that cannot be removed is named in the message).
    """
    path = Path(path)
    folder = path.parent
    _check_file_writable(path)
    with refuse_os_errors(path):
        if expect is not None:
            _check_unchanged(path, expect)  # (before a large temporary file is written for nothing)
        try:
            st: os.stat_result | None = os.stat(path)
            mode = st.st_mode & 0o7777
        except FileNotFoundError:
            st = None
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        model: os.stat_result | None = None  # (the file a new one is a copy of: its mode, owner, attributes)
        if st is None and like is not None:
            with contextlib.suppress(OSError):
                model = os.stat(like)
                mode = model.st_mode & 0o7777
        # mkstemp adds 8 random characters and the suffix: the prefix leaves room for them. The
        # "dreamdb-" marker lets a later write tell its own leftovers from a user's files.
        prefix = _temp_prefix(path)
        fd, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if st is not None and hasattr(os, "chown"):  # keep owner and group when allowed
                with contextlib.suppress(OSError):
                    os.chown(tmp_name, st.st_uid, st.st_gid)
                if os.stat(tmp_name).st_uid != st.st_uid:
                    # (a replaced file would be this user's: its owner could lose access, QA round 79-B F4)
                    raise WriteRefused(
                        f"{path} belongs to another user (uid {st.st_uid}); replacing it would make it yours, and its"
                        " owner could lose access to it. Nothing was changed.",
                        hint="Edit it as its owner, or have its owner (or root) make the notes yours.")
            if model is not None and hasattr(os, "chown"):  # (a copy: its owner where allowed, else this user's)
                with contextlib.suppress(OSError):
                    os.chown(tmp_name, model.st_uid, model.st_gid)
            os.chmod(tmp_name, mode)
            if st is not None:
                _copy_extended_attributes(path, tmp_name)
            elif model is not None and like is not None:
                _copy_extended_attributes(like, tmp_name)
            with _uninterrupted():  # the change and its record (COMMITTED) happen together
                if expect is not None:  # (the last moment: microseconds before the rename, QA round 59 M2)
                    _check_unchanged(path, expect)
                if expect is None or not _swap_in(tmp_name, path, expect, keep_old):
                    os.replace(tmp_name, path)
                if commit:
                    _committed(path, commit if isinstance(commit, str) else None)
        except BaseException as exc:
            if not getattr(exc, "keeps_temp", False):
                try:
                    os.unlink(tmp_name)
                except FileNotFoundError:
                    pass
                except OSError as gone:  # (said, not passed over: QA round 152-H F1, an append-only folder's stayed)
                    _note_temp_left(exc, tmp_name, gone)
            raise
    _fsync_dir(folder)
    _remove_stale_temp_files(folder)


def _note_temp_left(exc: BaseException, tmp_name: str, err: OSError) -> None:
    """Add to ``exc`` (a failed write's error) that its temporary file ``tmp_name`` could not be removed (``err``),
    where to find it and that it may go: a :class:`~dreamdb.errors.DreamdbError`'s message says it, an
    :class:`OSError` carries it for :func:`refuse_os_errors`'s message (``temp_left``), any other gets it as a note."""
    from dreamdb.errors import DreamdbError

    why = _OS_REASONS.get(err.errno or 0) or err.strerror or str(err)
    text = (f"Its temporary file {tmp_name} could not be removed ({why}); it holds the data that was not written:"
            " delete it by hand.")
    if isinstance(exc, DreamdbError):
        exc.message = f"{exc.message} {text}"
        exc.args = (exc.message,)
    elif isinstance(exc, OSError):
        exc.temp_left = text
    else:
        exc.add_note(text)


_SHORT_TEMP_PREFIX = ".~."
"""The temporary file's prefix (before :data:`TEMP_MARK`) where the folder's path leaves no room for one made of the
file's name (:func:`_temp_prefix`); :func:`_remove_stale_temp_files` knows it as one of its own."""


def _temp_prefix(path: Path) -> str:
    """The prefix for :func:`tempfile.mkstemp` of the file that replaces ``path``: ``.<name>.`` + :data:`TEMP_MARK`,
    the name shortened (:func:`_fit_name`) to leave room for mkstemp's 8 characters and ``.tmp`` within the folder's
    :func:`name_room` (the file system's name limit, and the system's path limit), or :data:`_SHORT_TEMP_PREFIX`
    where even a shortened name does not fit.

    Raises:
        WriteRefused: not even the shortest temporary name fits beside ``path`` (its folder's path is within 23 bytes
            of the system's limit).
    """
    room = name_room(path.parent) - 8 - len(".tmp") - len(TEMP_MARK)
    own = f".{path.name}."
    if len(own.encode("utf-8")) <= room or room >= 16:  # (_fit_name keeps a start, ~ and 8 hex digits, the ".")
        return _fit_name(own, room) + TEMP_MARK
    if room >= len(_SHORT_TEMP_PREFIX):
        return _SHORT_TEMP_PREFIX + TEMP_MARK
    need = len(_SHORT_TEMP_PREFIX) - room
    raise WriteRefused(f"Cannot write {path}: dreamdb writes it through a new file beside it, whose path would pass the"
                       f" system's limit of {PATH_MAX - 1:,} bytes for a path; nothing was changed.",
                       hint=f"Move the note (or rename a folder above it) so that its folder's path is at least {need}"
                            " bytes shorter, then retry.")


def _copy_extended_attributes(source: Path, target: str) -> None:
    """Give ``target`` (the replacement) ``source``'s extended attributes, its POSIX ACL among them
    (``system.posix_acl_access``): a replaced file is a new one, and a note shared through an ACL lost it, which
    widened or narrowed who may read it (QA round 79-B F3). Best effort: where the file system or the process
    cannot read or set one (``security.*`` for a user), it is passed over; nothing where the platform has no
    extended attributes."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source)
    except OSError:
        return
    for name in names:
        with contextlib.suppress(OSError):
            os.setxattr(target, name, os.getxattr(source, name))


TEMP_MARK = "dreamdb-"
"""Part of every temporary file name dreamdb writes (``.<name>.dreamdb-XXXXXXXX.tmp``)."""
_MKSTEMP_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")

STALE_TEMP_SECONDS = 600
"""Age (s) after which a ``.<name>.dreamdb-XXXXXXXX.tmp`` file beside a file dreamdb writes is a crashed write's
leftover (a write takes milliseconds; a killed one leaves its temporary file)."""


def _remove_stale_temp_files(folder: Path) -> None:
    """Delete the temporary files of earlier writes in ``folder`` that were killed before their rename: regular
    files named ``.<name>.`` + :data:`TEMP_MARK` + the 8 characters of :func:`tempfile.mkstemp` + ``.tmp``, older
    than :data:`STALE_TEMP_SECONDS` (a concurrent write's fresh one is left alone). Those of any file of the folder,
    not only the one just written: a note deleted or renamed since, or a trash copy (each of a name of its own), is
    never written again (QA round 86-A L2: an 850 KB ``.CHANGELOG.json…tmp`` and trash temporaries stayed for good).
    Best effort, never raises."""
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            name = entry.name
            # (``.`` + a name of at least one character + ``.`` + the mark, as _fit_name keeps them: QA round 87 L3
            # saw ``.dreamdb-abcdefgh.tmp`` and ``.mydreamdb-abcdefgh.tmp`` removed)
            if (len(name) > 14 + len(TEMP_MARK) and name.startswith(".") and name.endswith(".tmp")  # (".~." too)
                    and name[:-12].endswith("." + TEMP_MARK) and name[1] != "." and _MKSTEMP_CHARS.issuperset(name[-12:-4])
                    and entry.is_file(follow_symlinks=False)):
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
        why, hint = _folder_not_writable(vault, "u+w", "to remember, update or delete")
        raise WriteRefused(f"The vault folder {vault} is read-only ({why}), so dreamdb does not write to it.", hint=hint)


def _check_folder_writable(folder: Path, doing: str, purpose: str = "to remember, update or delete", *,
                           within: Path | None = None) -> None:
    """Raise WriteRefused when ``folder``, where a write creates, replaces or removes a file, is read-only in intent
    as the vault folder is (:func:`dreamdb.config.is_writable`: no write bit, even for root, or no write access);
    when ``folder`` does not exist yet, the nearest folder above it that does is looked at, where the write would
    create it. Called before anything is written (QA round 150-C F1: as root, a note in a ``chmod 555`` folder was
    updated and deleted, a ``CHANGELOG.json`` made in a 555 ``core/``, copies kept in a 555 trash, where a 555
    vault folder and a 444 file were refused). A folder with the append-only attribute (``chattr +a``), which
    ``access`` calls writable, is refused too: a file can be made there but never renamed over another or removed
    (QA round 152-H F1: each update left a whole copy of the note as a temporary file). One ``stat`` (and one
    ``access``, and one attribute read of a writable ``folder``) per folder looked at.

    Args:
        folder: the folder the write puts a file in or takes one from.
        doing: what the write does there, said in the refusal (``updating knowledge/a.md replaces it there``).
        purpose: what the hint's fix is for (``to remember, update or delete``).
        within: where the look upwards stops, unlooked at (another check says that folder's refusal in its own
            words: the index folder's, :func:`_index_dir`).

    Raises:
        WriteRefused: that folder is read-only or append-only (exit 6); the hint says how to make it writable
            (:func:`_folder_not_writable`, :func:`_attribute_hint`). A folder that cannot be looked at for another reason (a file in the
            way, no search permission) passes: the write's own error names it.
    """
    current = Path(folder)
    while True:
        if within is not None and current == within:
            return
        try:
            st = os.stat(current)
        except FileNotFoundError:
            if current.parent == current:
                return
            current = current.parent  # (made by the write: the folder it is made in is written)
            continue
        except OSError:
            return
        break
    from dreamdb.config import is_writable

    if not stat.S_ISDIR(st.st_mode):
        return
    if is_writable(current):
        # an append-only folder (chattr +a) passes access(W_OK): a file can be made in it, never renamed over another
        # or removed, so a write's temporary file would stay there for good (QA round 152-H F1). A folder the write
        # makes is not append-only (ext4 does not pass the attribute on): only ``folder`` itself is looked at.
        if current != Path(folder) or "append-only" not in (attributes := _attributes(current)):
            return
        raise WriteRefused(f"The folder {current} has the {' and '.join(attributes)} attribute: a file can be added"
                           f" there but not replaced or removed, so dreamdb does not write in it ({doing}); nothing"
                           " was changed.", hint=_attribute_hint(attributes, current, "write there"))
    why, hint = _folder_not_writable(current, "u+w", purpose)
    raise WriteRefused(f"The folder {current} is read-only ({why}), so dreamdb does not write in it ({doing});"
                       " nothing was changed.", hint=hint)


_TRASH_DOING = "the trash, where update and delete keep a copy of each note they change"
"""What a write does in the trash folder, as :func:`_check_trash_writable`'s refusal says it."""


def _check_trash_writable(vault: Path, doc_type: str) -> None:
    """:func:`_check_folder_writable` for the trash folder a copy of a ``doc_type`` note goes to
    (``.dreamdb/trash/<type>``), or, where it is not there yet, ``.dreamdb/trash``, where it would be made (the index
    folder and the vault folder, where the trash itself would be made, are checked by :func:`_index_dir`, which
    says what the index folder holds).

    Raises:
        WriteRefused: that folder is read-only.
    """
    _check_folder_writable(_trash_root(vault) / doc_type, _TRASH_DOING, "to update or delete notes",
                           within=Path(vault) / INDEX_DIRNAME)


def _folder_not_writable(folder: Path, mode: str, purpose: str) -> tuple[str, str]:
    """``(why, hint)`` for a folder dreamdb will not write in, as a file's refusal says it (:func:`_why_not_writable`):
    a read-only file system, an immutable or append-only attribute, another owner, or no write bit, with the fix
    that can work there (QA round 143-E F3: an immutable folder, already rwx, was told to ``chmod``, which its
    attribute refuses). ``mode``: the chmod that gives what the writes need (``u+w``, ``u+rwx``); ``purpose``:
    what the fix is for (``to remember, update or delete``)."""
    try:
        st = os.stat(folder)
    except OSError as exc:
        return exc.strerror or str(exc), "Check the folder, then retry."
    if _read_only_mount(folder):
        return "it is on a read-only file system", f"Remount it read-write (or work on a writable copy) {purpose}."
    attributes = _attributes(folder)
    if attributes:
        return f"it has the {' and '.join(attributes)} attribute", _attribute_hint(attributes, folder, "write there")
    why = _why_not_writable(folder, st)
    if "another user" in why:
        return why, f"Run dreamdb as the user who owns it, or have them give you write permission {purpose}."
    if "no write permission" in why or not st.st_mode & 0o222:
        return (f"mode {st.st_mode & 0o7777:o}: no write permission",
                f"Give it write permission (chmod {mode} '{folder}') {purpose}.")
    return why, _ATTRIBUTE_HINT


def _index_dir(vault: Path) -> Path:
    """Return ``<vault>/.dreamdb``, creating it as the index code does if needed.

    :func:`dreamdb.config.prepare_index_dir` makes the folder (mode 0700) with
    its ``.gitignore``, and an empty ``index.db`` (mode 0600) that the index
    fills on its next sync, when the vault's index lives there. When it lives elsewhere
    (``DREAMDB_INDEX``), only the folder and its ``.gitignore`` are made: the writes need
    the folder for their lock and trash, not an index file (QA round 56: ``remember``
    left a 0-byte ``.dreamdb/index.db`` in the vault, an index never to be used).
    """
    from dreamdb import config

    _check_writable(vault)
    index_dir = vault / INDEX_DIRNAME
    if index_dir.is_symlink():  # the lock and the trash must stay inside the vault: refuse before creating either
        try:
            _confined(vault, index_dir)
        except WriteRefused as exc:  # (QA round 81-A F11: "dreamdb only edits files inside the vault" said not why)
            raise WriteRefused(f"{exc.message} Vault writes keep their lock and the copies of replaced and deleted notes"
                               " in that folder, inside the vault; nothing was changed.",
                               hint=f"Make {index_dir} a folder of the vault (recall can use an index behind a link; "
                                    "writes cannot).") from None
    if index_dir.is_dir() and os.access(index_dir, os.R_OK | os.X_OK) and not config.is_writable(index_dir):
        # read-only in intent, as recall reads it (it moves the index to the user cache), even for root, who could
        # write there: QA round 83-B F8 found update and remember writing their lock and trash in it
        why, hint = _folder_not_writable(index_dir, "u+rwx", "to remember, update or delete")
        raise WriteRefused(f"The index folder {index_dir} is read-only ({why}), so dreamdb does not"
                           " write in it; vault writes keep their lock and the copies of replaced and deleted notes"
                           " there. Nothing was changed.", hint=hint)
    try:
        index_file = index_dir / config.INDEX_FILE_NAME
        if os.path.abspath(config.index_path_for(vault)) == os.path.abspath(index_file):
            config.prepare_index_dir(index_file, parents=False)
        else:
            config.prepare_index_folder(index_dir, parents=False)
    except IndexUnavailable as exc:  # a link to the vault, a folder of its notes (QA round 139-E F3: exit 4, where a
        # link outside the vault was exit 6): a refused write, as any .dreamdb the writes cannot keep their files in
        raise WriteRefused(f"{exc.message} Vault writes keep their lock and the copies of replaced and deleted notes"
                           " in that folder; nothing was changed.",
                           hint=f"Remove the link {index_dir}: dreamdb makes its own .dreamdb folder (recall can use"
                                " an index behind a link to a folder outside the vault's project; writes cannot).") from None
    except OSError as exc:
        if index_dir.is_dir():  # (QA round 65 L9: it exists, but cannot be written or entered)
            # (a full disk or a quota is no matter of access: QA round 93-A F7 was told to chmod)
            hint = ("Free space on that disk (or raise the quota), then retry." if exc.errno in (errno.ENOSPC, errno.EDQUOT)
                    else "Its file system is mounted read-only: remount it read-write." if exc.errno == errno.EROFS
                    else _folder_not_writable(index_dir, "u+rwx", "to remember, update or delete")[1]
                    if exc.errno == errno.EPERM or _attributes(index_dir)  # (chmod cannot lift an attribute: 143-E F3)
                    else f"Give yourself access to it (chmod u+rwx '{index_dir}'), or run dreamdb as the user who owns it.")
            raise WriteRefused(f"Cannot write in the index folder {index_dir}: {exc.strerror or exc}; nothing was"
                               " changed.", hint=hint) from exc
        raise WriteRefused(f"Cannot create the index folder {index_dir}: {exc.strerror or exc}.",
                           hint="Check the vault's permissions (a file named .dreamdb may be in the way).") from exc
    return index_dir


def _trash_root(vault: Path) -> Path:
    """``<vault>/.dreamdb/trash``, where :func:`delete` keeps copies (one folder per type); not created here."""
    return vault / INDEX_DIRNAME / "trash"


def _trash_stamp() -> str:
    """The UTC time now as the names of copies in the trash begin (``20261206T112233123456Z``), which sort as times."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


def _trash_path(vault: Path, doc_type: str, name: str) -> Path:
    """A new, unused ``<vault>/.dreamdb/trash/<type>/<UTC timestamp>-<name>`` (folders created 0700).

    A name too long for the file system is shortened by :func:`_fit_name` (:func:`trash_name`).
    Call with the vault lock held (the name is unused only until another writer picks it).

    Raises:
        WriteRefused: the index folder cannot be made or written (:func:`_index_dir`), the trash folder or its type
            folder is read-only (:func:`_check_trash_writable`: no write bit, root too), is a file, or cannot be
            made; a level is a link out of ``.dreamdb``.
    """
    trash = _index_dir(vault) / "trash" / doc_type
    _check_trash_writable(vault, doc_type)  # (before a level is made, or a copy written in one)
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
    stamp = _trash_stamp()
    kept = trash / trash_name(stamp, name)
    n = 2
    while kept.exists() or kept.is_symlink():
        kept = trash / trash_name(f"{stamp}-{n}", name)
        n += 1
    return kept


def trash_name(prefix: str, name: str) -> str:
    """The name a copy of the file ``name`` gets in the trash after ``prefix`` (its UTC time, :func:`_trash_stamp`,
    and ``-<n>`` when a copy of that time was there): ``<prefix>-<name>``, shortened by :func:`_fit_name` when too long
    for the file system (a note's name of over 232 bytes: ``<prefix>-<its start>~<8 hex digits>.md``). The short form
    is the full one's alone, made again from the note's name to find its copies
    (:func:`dreamdb.writes.locate._trash_copies`)."""
    return _fit_name(f"{prefix}-{name}")



def _lock_wait(lock_timeout) -> float | None:
    """A write's ``lock_timeout`` argument checked: seconds ≥ 0 to wait for the vault lock, or ``None`` for
    :data:`LOCK_TIMEOUT_S`.

    Raises:
        UsageError: not a number of seconds ≥ 0.
    """
    from dreamdb.arguments import seconds

    return seconds(lock_timeout, "lock_timeout")


def _refuse_odd_lock_file(lock_path: Path, exc: OSError | None) -> None:
    """WriteRefused when ``lock_path`` is there and no regular file: a symbolic link (filelock opens it with
    ``O_NOFOLLOW``), a folder, a socket, a FIFO or a device, named (QA rounds 114-C F4e, 116-A F12, 117-A F7, 118-B F8:
    said with a permissions hint, or used without a word)."""
    try:
        mode = os.lstat(lock_path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode):
        return
    what = ("a symbolic link, which dreamdb never opens" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode)
            else "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device")
    raise WriteRefused(f"Cannot use the vault lock {lock_path}: it is {what}, no regular file; nothing was changed.",
                       hint=f"Move {lock_path} away (dreamdb makes the file again).") from exc


def env_lock_timeout() -> float | None:
    """The seconds :data:`ENV_LOCK_TIMEOUT` names (a number ≥ 0, as ``60`` or ``2.5``), or ``None`` when it is
    unset or blank (the default).

    Raises:
        UsageError: another value (exit 2).
    """
    import math

    from dreamdb.errors import UsageError

    from dreamdb.arguments import written_number

    value = os.environ.get(ENV_LOCK_TIMEOUT, "").strip()
    if not value:
        return None
    try:  # (ASCII digits alone: float() took 1_000 and ٣, QA round 152-F F7)
        number = float(value) if written_number(value) else math.nan
    except ValueError:
        number = math.nan
    if not 0 <= number < math.inf:
        raise UsageError(f"{ENV_LOCK_TIMEOUT}={value!r} is not a number of seconds ≥ 0; nothing was changed.",
                         hint=f"Use e.g. {ENV_LOCK_TIMEOUT}=60 (how long a write waits for another write's vault lock;"
                              f" unset: {LOCK_TIMEOUT_S:g} s).")
    return number


def _lock_holder(lock_path: Path) -> int | None:
    """The process id holding the ``flock`` on ``lock_path``, as ``/proc/locks`` lists it (Linux); ``None`` where
    it cannot be told (another system, the lock free, a holder outside this process's pid namespace)."""
    try:
        st = os.stat(lock_path)
        with open("/proc/locks", "rb") as f:
            table = f.read(1 << 20)
    except OSError:
        return None
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}".encode()
    for line in table.splitlines():  # "5: FLOCK  ADVISORY  WRITE 5322 fe:00:2146324 0 EOF" ("5: -> FLOCK …": a waiter)
        parts = line.split()
        if len(parts) >= 6 and parts[1] == b"FLOCK" and parts[5] == key and parts[4].isdigit() and int(parts[4]) > 0:
            return int(parts[4])
    return None


def _acquire_looking(lock, lock_path: Path, deadline: float, holders: dict[int, None]) -> bool:
    """Acquire ``lock`` by ``deadline`` (:func:`time.monotonic`), adding to ``holders`` each process seen holding it
    meanwhile (every :data:`LOCK_LOOK_S`); False when the deadline came first. The first try costs no look."""
    from filelock import Timeout

    try:
        lock.acquire(timeout=0)
        return True
    except Timeout:
        pass
    while True:
        holder = _lock_holder(lock_path)
        if holder is not None:
            holders[holder] = None
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            lock.acquire(timeout=min(left, LOCK_LOOK_S))
            return True
        except Timeout:
            continue


def _lock_timeout(lock_path: Path, holders: list[int], wait: float) -> LockTimeout:
    """The :class:`LockTimeout` of a write that waited ``wait`` s (its timeout) for the vault lock while
    the processes ``holders`` were seen holding it: what happened, and how to wait longer (QA round 135-E F1: "held
    the vault lock for more than 10 s", when 20 writes had queued for it, each holding it 0.06 s)."""
    me = os.getpid()
    shown = ", ".join(str(p) if p != me else f"{p} (this process)" for p in holders[:6]) + (", …" if len(holders) > 6 else "")
    if len(holders) > 1:
        who = (f"which other dreamdb writes held in turn (seen holding it: processes {shown}): writes queue for it,"
               " each holding it for its own change")
    elif holders == [me]:
        who = "which another open Index (or thread) of this process held each time it looked"
    elif holders:
        who = f"which process {shown} held each time this one looked"
    else:
        who = "which another dreamdb write held (or several in turn)"
    return LockTimeout(
        f"This process waited {wait:g} s for the vault lock {lock_path}, {who}; nothing was changed.",
        hint=f"Wait longer: set {ENV_LOCK_TIMEOUT}=SECONDS for the dreamdb command (default {LOCK_TIMEOUT_S:g}; e.g."
             f" {ENV_LOCK_TIMEOUT}=60 dreamdb remember …), or pass lock_timeout= (seconds) from Python; or retry."
             " The lock ends with its holder's process: the file never needs deleting.")


_HELD = threading.local()
"""``.vaults``: the vaults (real paths) whose lock this thread holds (see :func:`vault_lock`)."""


@contextlib.contextmanager
def vault_lock(vault: Path, timeout: float | None = None) -> Iterator[Path]:
    """Hold the vault's write lock (``<vault>/.dreamdb/vault.lock``).

    Every vault write in dreamdb runs inside this lock, so concurrent writers
    (several agents, a hook and a CLI call) are serialised. While it waits, it looks
    every :data:`LOCK_LOOK_S` which process holds the lock (Linux), to say so if it gives up:
    writes queue for it, and many at once can wait longer than any one holds it. A ``.dreamdb``
    folder removed before the lock file is made in it is made again (:data:`LOCK_FOLDER_RETRIES`).

    Args:
        vault: the ``_dream_context`` folder.
        timeout: seconds to wait for the lock; default :data:`LOCK_TIMEOUT_S`.

    Yields:
        The path of the lock file.

    Raises:
        VaultNotFound: ``vault`` is not a folder.
        WriteRefused: the vault folder is not writable.
        LockTimeout: other processes held the lock longer than ``timeout``.
        UsageError: this thread holds the vault's lock already: a write called from a callback of another write
            (``update``'s ``on_kept``), which would wait for itself.
    """
    from filelock import FileLock

    vault = _check_vault(vault)
    held = _HELD.__dict__.setdefault("vaults", set())
    key = os.path.realpath(vault)
    if key in held:  # (QA round 139-A F2: it waited for the timeout, then said "nothing was changed" of a write made)
        from dreamdb.errors import UsageError

        raise UsageError(f"A write to the vault {vault} was called while this thread holds the vault's lock for another"
                         " write, from a callback of it (update's on_kept, called once its edit is made): it would wait"
                         " for itself. This write was not made; the one whose callback called it was.",
                         hint="Make the write after the other returns (keep what the callback needs, and act on it"
                              " then).")
    wait = LOCK_TIMEOUT_S if timeout is None else timeout
    started = time.monotonic()
    holders: dict[int, None] = {}  # (in the order seen)
    for attempt in range(LOCK_FOLDER_RETRIES + 1):
        lock_path = _index_dir(vault) / "vault.lock"
        lock = FileLock(str(lock_path), timeout=wait)
        _refuse_odd_lock_file(lock_path, None)  # (a FIFO or a device was used without a word: QA round 118-B F8)
        try:
            if _acquire_looking(lock, lock_path, started + wait, holders):
                break
            raise _lock_timeout(lock_path, list(holders), wait)
        except OSError as exc:
            if exc.errno == errno.ENOENT and attempt < LOCK_FOLDER_RETRIES:
                # .dreamdb was removed since _index_dir made it (QA round 135-E F2: "Cannot create the vault lock …:
                # No such file or directory", a permissions hint): made again, with its .gitignore, and tried again
                continue
            _refuse_odd_lock_file(lock_path, exc)
            raise WriteRefused(f"Cannot create the vault lock {lock_path}: {exc.strerror or exc}.",
                               hint="Free space or files on that disk (`df -i` shows the free inodes), then retry."
                               if exc.errno in (errno.ENOSPC, errno.EDQUOT) else  # (QA round 123-B F6: "permissions")
                               "Vault writes need a writable .dreamdb folder in the vault (check its permissions, "
                               "or whether the file system is mounted read-only).") from exc
    if not os.path.lexists(lock_path.parent / ".gitignore"):
        # .dreamdb removed since _index_dir made it, and made again for the lock file by filelock (3.13 and later make
        # a lock's folder), without its .gitignore, open to all (QA round 135-E F2): made as _index_dir makes it
        try:
            with contextlib.suppress(OSError):
                os.chmod(lock_path.parent, 0o700)
            _index_dir(vault)
        except BaseException:
            lock.release()
            raise
    held.add(key)
    try:
        yield lock_path
    finally:
        held.discard(key)
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


_DESCRIPTOR_LINK = re.compile(r"/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd/(\d+)|/dev/fd/(\d+)|/dev/std(in|out|err)")
"""A path that names one of a process's open descriptors (Linux ``/proc/<pid>/fd/N``, ``/dev/fd/N``, ``/dev/stdout``)."""


def descriptor_named(path: Path) -> int | None:
    """The descriptor number ``path`` names through :data:`_DESCRIPTOR_LINK` (``/dev/stdout``: 1), following the links
    to it (a link to ``/dev/stdout`` too), else ``None``. Such a path to a pipe, socket or terminal has no real path:
    ``os.path.realpath`` makes one up (``/proc/<pid>/fd/pipe:[1471734]``), which no message should name (QA round
    143-H F3)."""
    here = os.path.abspath(path)
    for _ in range(40):  # (the system's own limit of links followed)
        here = os.path.join(os.path.realpath(os.path.dirname(here)), os.path.basename(here))  # (/dev/fd: /proc/<pid>/fd)
        match = _DESCRIPTOR_LINK.fullmatch(here)
        if match:
            number = match.group(1) or match.group(2)
            return int(number) if number else ("in", "out", "err").index(match.group(3))
        try:
            here = os.path.join(os.path.dirname(here), os.readlink(here))
        except OSError:  # not a link (or gone): the path names a file, not a descriptor
            return None
    return None


def _confined(vault: Path, path: Path) -> Path:
    """Return ``path`` resolved, or raise WriteRefused if it lies outside ``vault``."""
    root = vault.resolve()
    try:
        real = path.resolve()
    except (RuntimeError, OSError) as exc:  # a symlink loop, a name too long
        raise WriteRefused(f"{path} cannot be resolved ({exc}).", hint="Fix the path or link in the vault.") from exc
    if real != root and root not in real.parents:
        number = descriptor_named(path)
        if number is not None and not real.exists():  # (not the made-up /proc/<pid>/fd/pipe:[…]: QA round 143-H F3)
            raise WriteRefused(f"{path} is a link to file descriptor {number} of the process that opens it (here a "
                               f"pipe, socket, terminal or device), not a file in the vault {root}.",
                               hint="dreamdb only edits files inside the vault; remove the link.")
        raise WriteRefused(f"{path} resolves to {real}, outside the vault {root}.",
                           hint="dreamdb only edits files inside the vault.")
    return real


_TEMP_SUFFIX = re.compile(r"\.(\d+)\.tmp(-journal)?")
"""What follows a file's name in the name of a temporary copy being written: ``.<pid>.tmp`` (and the journal of
a SQLite one, from versions that kept one)."""


def sweep_stale_temps(folder: Path, prefix: str) -> None:
    """Remove the temporary files ``<prefix>.<pid>.tmp`` in ``folder`` whose writer is gone (a ``kill -9``
    mid-write leaves one behind: the lexicon's 4 MB, QA round 68 L2; the tokenizer's piece table); a file of
    this process or of a running one is left alone, and nothing is raised (a cleanup)."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix + ".")]
    except OSError:
        return
    for name in names:
        m = _TEMP_SUFFIX.fullmatch(name[len(prefix):])
        if m is None or int(m.group(1)) == os.getpid() or process_alive(int(m.group(1))):
            continue
        try:
            (Path(folder) / name).unlink()
        except OSError:
            pass


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (one writing its temporary file now, or staging a model);
    one of another user's, or one it cannot ask about, counts as running (what it owns is left alone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process, or a pid we cannot ask about: leave its file alone
    return True
