"""Where things live: the index file for a vault, environment variables, defaults.

Environment variables:
    DREAMDB_VAULT: vault path used when ``--vault`` is not given.
    DREAMDB_INDEX: index file path (overrides the default location; one vault only).
    DREAMDB_CACHE_DIR: folder for indexes of read-only vaults, and of vaults whose own index path is too long for
        SQLite (default: the user cache dir).
    DREAMDB_RECALL_MODE: default recall mode (bm25, hybrid, dense, rrf).
    DREAMDB_INCLUDE_ARCHIVES: ``1`` indexes dot-folders (``knowledge/.archive/``) too.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from dreamdb.vault.discover import INDEX_DIR_NAME

INDEX_FILE_NAME = "index.db"
APPLICATION_ID = 0x64726D64
"""SQLite header ``application_id`` of a dreamdb index ("drmd"; set by ``migrations/003_application_id.sql``)."""
_SQLITE_MAGIC = b"SQLite format 3\x00"
GITIGNORE_TEXT = "# dreamdb's index: derived from the vault, rebuilt on demand. Never commit it.\n*\n"


def is_writable(folder: Path) -> bool:
    """Writable in intent, not only in permission: a folder with no write bit at all counts as
    read-only even for root. dreamdb then keeps the vault's index in the user cache and refuses
    writes to the vault (:mod:`dreamdb.writes`), so the index never moves between the two."""
    try:
        mode = folder.stat().st_mode
    except OSError:
        return False
    return bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) and os.access(folder, os.W_OK)


APP_NAME = "dreamdb"
"""The application name platformdirs builds the user cache folder from (every platform's path holds it)."""


def file_on_the_way(path: Path) -> Path | None:
    """The first of ``path``'s folders (from the root down) that exists and is no folder, which makes creating
    ``path`` fail with "Not a directory": named in errors instead of the path under it (QA round 114-B F9:
    ``XDG_DATA_HOME`` set to a file was said as ``…/dreamdb/models: it is a file``); ``None`` when there is none."""
    path = Path(os.path.abspath(path))
    for folder in (*reversed(path.parents), path):
        try:
            if not stat.S_ISDIR(os.stat(folder).st_mode):
                return folder
        except OSError:  # missing from here on (or unreadable): nothing more to tell
            return None
    return None


def dangling_link_on_the_way(path: Path) -> Path | None:
    """The first of ``path``'s folders (from the root down, ``path`` included) that is a symbolic link to nothing,
    which makes creating ``path`` fail with "No such file or directory": named in hints instead of the path under it
    (QA round 148-B F6: ``XDG_CACHE_HOME`` a link to a folder that does not exist); ``None`` when there is none."""
    path = Path(os.path.abspath(path))
    for folder in (*reversed(path.parents), path):
        if os.path.islink(folder) and not os.path.exists(folder):
            return folder
    return None


def is_unreachable(path: Path | str) -> bool:
    """Whether ``path`` cannot be looked up for want of permission (a folder on its way cannot be searched), which
    says nothing of whether the file is there; used to say "cannot be reached" instead of "gone" or "deleted"
    (QA rounds 114-A F5, 116-A F11)."""
    try:
        os.stat(path)
    except PermissionError:
        return True
    except OSError:
        return False
    return False


def expand_user(path: str | os.PathLike) -> Path:
    """A text ``path`` with a leading ``~`` or ``~user`` expanded to that home folder, as a shell expands it, read
    from the text as given: ``./~/notes`` is the folder ``~`` of the working folder, returned absolute, since ``Path``
    writes ``./~/notes`` as ``~/notes``, which a second expansion would take for the home folder (QA round 121-C F1:
    the vault, the index, the model folder in the home folder, read and written without a word). A ``Path`` (any
    ``os.PathLike``) is taken as it is, as pathlib and ``open`` take it: ``Path("./~/x")`` cannot tell its ``~`` from
    the home folder's (QA round 122-A F5); ``Path("~/x").expanduser()`` names the home folder's."""
    if not isinstance(path, str):
        return Path(path)
    expanded = os.path.expanduser(path)
    p = Path(expanded)
    if p.parts and p.parts[0].startswith("~"):  # (not expanded: a folder named ~ or ~name, relative)
        return Path(os.path.abspath(expanded))
    return p


def env_path(name: str) -> str | None:
    """The environment variable ``name`` naming a path, or ``None`` when it is unset or blank (spaces only: no one
    means a file named " "; QA round 60 L7 for ``DREAMDB_INDEX``, round 86-B F7 for the others)."""
    value = os.environ.get(name)
    return value if value and value.strip() else None


def cache_root() -> Path:
    """Folder for the indexes of read-only vaults (``DREAMDB_CACHE_DIR`` or the platform's user cache dir)."""
    env = env_path("DREAMDB_CACHE_DIR")
    if env:  # (a relative path taken from the current folder, as DREAMDB_INDEX's, and shown whole: QA round 114-B F6)
        return absolute_path("DREAMDB_CACHE_DIR", env)
    found = xdg_user_folder("XDG_CACHE_HOME", ".cache")
    if found is not None:
        return found
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP_NAME))


def xdg_user_folder(variable: str, default: str) -> Path | None:
    """dreamdb's per-user folder on Linux as platformdirs gives it there (``user_cache_dir("dreamdb")``,
    ``user_data_dir("dreamdb")``), worked out without importing platformdirs: the import loads tempfile, shutil,
    random, lzma and bz2, ≈ 7 ms of a one-shot ``dreamdb recall`` or prompt hook, which look for the lexicon in the
    user data folder (and the hook's log in the cache folder).

    Args:
        variable: the XDG variable (``XDG_CACHE_HOME``, ``XDG_DATA_HOME``).
        default: its default under the home folder (``.cache``, ``.local/share``).

    Returns:
        ``$variable/dreamdb`` when ``variable`` is an absolute path; ``$HOME/default/dreamdb`` when it is unset or
        blank and ``HOME`` is an absolute path; ``None`` otherwise, and on any other platform than Linux (Android
        too), for the caller to ask platformdirs: its versions read a relative variable or ``HOME`` differently
        (platformdirs 4 ignores a relative ``XDG_*``, 3 takes it from the working folder)."""
    import sys

    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel") or "ANDROID_DATA" in os.environ:
        return None
    value = os.environ.get(variable, "")
    if os.path.isabs(value):
        return Path(os.path.join(value, APP_NAME))
    home = os.environ.get("HOME")
    if value.strip() or not home or not os.path.isabs(home):
        return None
    return Path(os.path.join(os.path.expanduser("~/" + default), APP_NAME))


def make_private_folders(folder: Path) -> None:
    """Make ``folder`` and the folders above it that are missing, each mode 0700 whatever the umask (dreamdb's
    cache folders: QA round 147-F F2, under ``umask 000`` ``<cache>/dreamdb/`` and ``lexicon-checks/`` were made
    0777, and another user could then put a folder of theirs where dreamdb keeps a read-only vault's index).

    Raises:
        OSError: a folder cannot be made (a file in the way, a read-only disk).
    """
    missing = []
    at = Path(folder)
    while not os.path.lexists(at) and at.parent != at:
        missing.append(at)
        at = at.parent
    for made in reversed(missing):
        try:
            os.mkdir(made, 0o700)
        except FileExistsError:  # (made meanwhile, by another process)
            continue
        os.chmod(made, 0o700)  # (the umask may have taken bits away: 0700 exactly)


def write_private_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` in the user cache: its folders made 0700 (:func:`make_private_folders`), the file
    0600 whatever the umask, written beside it (``.NAME.PID.tmp``, never through a symbolic link) and renamed into
    place, so a reader sees the old file or the new one whole and an older file of another mode is replaced (the
    lexicon's check marks, QA round 147-F F2; the hook's made-folder records, QA round 151-D F1).

    Raises:
        OSError: the folder or the file cannot be written (the temporary file removed).
    """
    make_private_folders(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def private_file_lock(path: str | os.PathLike, timeout: float = -1):
    """A :class:`filelock.FileLock` on ``path`` whose lock file, when this lock makes it, is mode 0600 whatever the
    umask, as every file dreamdb makes in its cache folder and beside an index (QA round 151-D F1: ``embed.lock`` and
    ``index.db.rebuild.lock`` were made 0666 under ``umask 000``, filelock's default mode going through the umask)."""
    from filelock import FileLock

    return FileLock(str(path), timeout=timeout, mode=0o600)


def held_elsewhere(path: str | os.PathLike, wait_s: float = 0) -> bool:
    """Whether another process (or another lock object of this one) holds the file lock ``path`` for ``wait_s``
    seconds: the lock is tried, and let go at once when it is taken. False when its file cannot be made or locked
    (nobody can hold it then)."""
    from filelock import Timeout  # (here only: filelock imports logging, and with it traceback, QA round 150-P F2)

    lock = private_file_lock(path, timeout=wait_s)
    try:
        lock.acquire()
    except Timeout:
        return True
    except OSError:
        return False
    lock.release()
    return False


def _refuse_unsafe_cache_folder(folder: Path, elsewhere: str | None) -> None:
    """Refuse the per-vault folder ``<cache>/<key>`` of a read-only vault's index (:func:`cache_index_path`) where
    another user could put files in it: it is a link (its name is predictable: another user's link there took the
    index wherever it led), or another user's, or its cache folder is another user's and open to others (QA round
    147-F F2). A folder of this user's that others may write (an older dreamdb's, under ``umask 000``) is made 0700,
    and then what it holds is looked at (:func:`_unsafe_cache_entry`): a link or another user's file there, put
    while others could write in it, is refused as the folder is (QA round 148-B F1: a link named ``index.db`` took
    the index into another user's file).

    Raises:
        IndexUnavailable: naming the folder, or the file in it, and why (exit 4).
    """
    if not hasattr(os, "getuid"):  # (Windows: no owners to compare; the user's profile holds the cache)
        return
    from dreamdb.errors import IndexUnavailable

    uid = os.getuid()
    hint = ("Remove it (dreamdb makes its own folder there, mode 0700)"
            + (f", or set DREAMDB_CACHE_DIR to a folder of yours{f' (or {elsewhere} to a file path)' if elsewhere else ''}."
               if elsewhere else "."))
    try:
        root, st = os.stat(folder.parent), os.lstat(folder)
    except OSError:
        return  # (gone meanwhile: the open that follows says so)
    why = None
    if root.st_uid != uid and root.st_mode & 0o022 and not root.st_mode & stat.S_ISVTX:
        why, folder = f"belongs to another user (uid {root.st_uid}) and others may write in it", folder.parent
    elif stat.S_ISLNK(st.st_mode):
        why = f"is a link (to {os.readlink(folder)}), not a folder dreamdb made"
    elif st.st_uid != uid:
        why = f"belongs to another user (uid {st.st_uid})"
    if why is not None:
        raise IndexUnavailable(f"The cache folder {folder}, where dreamdb keeps this vault's index, {why}: it is not"
                               " used.", hint=hint)
    for path, held in ((folder, st), (folder.parent, root)):
        if held.st_uid == uid and held.st_mode & 0o077 and (path == folder or not env_path("DREAMDB_CACHE_DIR")):
            with contextlib.suppress(OSError):
                os.chmod(path, 0o700)
    # (looked at once the folder is 0700: no other user can put a file there after this look)
    unsafe = _unsafe_cache_entry(folder, uid)
    if unsafe is not None:
        name, why = unsafe
        raise IndexUnavailable(f"The cache folder {folder}, where dreamdb keeps this vault's index, holds {name}, which"
                               f" {why}: the folder is not used.",
                               hint=f"Remove {folder / name} (dreamdb makes its own files there)"
                                    + (f", or set DREAMDB_CACHE_DIR to a folder of yours"
                                       f"{f' (or {elsewhere} to a file path)' if elsewhere else ''}." if elsewhere
                                       else "."))


def _unsafe_cache_entry(folder: Path, uid: int) -> tuple[str, str] | None:
    """``(name, why)`` of the first entry (in name order) of a vault's cache folder that is a symbolic link or
    another user's, else ``None``. Every file dreamdb opens there (``index.db`` and its ``-wal``, ``-shm`` and
    ``-journal``, ``sync.clock``, the ``embed.lock`` and ``index.db.rebuild.lock`` lock files, the hook's
    ``index.db.build.log``, the duplicate log) is its own, made by this user: one put there by another user while
    the folder was open to others (an older dreamdb's, under ``umask 000``) would take what dreamdb writes into a
    file of theirs, or through a link anywhere (QA round 148-B F1: a link ``index.db`` to another user's file of mode
    0666 got the index, rc 0). Every entry is looked at, not those names alone: dreamdb makes no other (a file of
    several names is not refused: :func:`dreamdb.store.connect.copy_index` links its copy into place)."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(entry.name for entry in entries)
    except OSError:
        return None  # (gone meanwhile, or unreadable: the open that follows says so)
    for name in names:
        path = folder / name
        try:
            st = os.lstat(path)
        except OSError:  # (removed meanwhile)
            continue
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return name, f"is a link (to {target}), not a file dreamdb made"
        if st.st_uid != uid:
            return name, f"belongs to another user (uid {st.st_uid})"
    return None


def absolute_path(name: str, value: str | os.PathLike) -> Path:
    """The path the variable or argument ``name`` holds (``value``), ``~`` expanded (:func:`expand_user`), made
    absolute from the current folder once: a relative ``index_path=`` or ``lexicon=`` named another file after an
    ``os.chdir`` (QA round 139-A F1), as ``DREAMDB_INDEX`` would have.

    Raises:
        UsageError: a relative path, from a current folder deleted meanwhile (QA round 90-C F10 for DREAMDB_INDEX,
            122-A F4: exit 70 for DREAMDB_CACHE_DIR).
    """
    try:
        return Path(os.path.abspath(expand_user(value)))
    except FileNotFoundError:
        from dreamdb.errors import UsageError

        raise UsageError(f"{name}={value!r} is a relative path, and the current folder no longer exists.",
                         hint=f"cd to an existing folder, or set {name} to an absolute path.") from None


SQLITE_MAX_PATH_BYTES = 504
"""The longest database path SQLite opens on POSIX, in bytes: its unix file layer's ``MAX_PATHNAME`` (512) less the 8
of ``-journal``, checked on the absolute path with its links resolved, whatever the open's mode (read-only and
immutable too). Measured with SQLite 3.50.4 (sqlean) and the standard library's: a 504-byte path opens, 505 bytes is
"unable to open database file", with no word of why (QA round 143-B F1)."""


INDEX_COPY_EXTRA_BYTES = 18
"""How much longer than an index's path the temporary copy :func:`dreamdb.store.connect.copy_index` writes beside it
is (``.index.db.<pid>.copy.tmp``: the dots, a process id of up to 7 digits, ``.copy.tmp``): a vault's index is kept in
its own folder only when that copy fits SQLite's limit too (QA round 143-K F1: one 470–486 bytes long moved back
from the cache as a new, empty index, its embeddings lost)."""


NAME_MAX_BYTES = 255
"""The longest file or folder name, in bytes, that the file systems of Linux and macOS allow (``NAME_MAX``): a path
holding a longer one fails every open and ``mkdir`` with ENAMETOOLONG ("File name too long")."""


def long_name_problem(path: Path | str) -> str | None:
    """Why nothing can be opened or made at ``path`` for a file or folder name in it longer than
    :data:`NAME_MAX_BYTES`, as words to follow "Cannot open … at <path>: " (``"the name 'aaaaaaaaaaaaaaaaaaaa…aaaaaaaaa.db'
    in its path is 303 bytes long, over the 255 bytes a file or folder name can have"``), else ``None``. QA round
    147-E F3: such an index path was said to be a file that cannot be read, its permissions to fix. A name of
    undecodable bytes counts as the bytes it is."""
    for name in Path(os.path.abspath(path)).parts:
        size = len(os.fsencode(name))
        if size > NAME_MAX_BYTES:
            shown = name if len(name) <= 40 else f"{name[:20]}…{name[-12:]}"
            return (f"the name {shown!r} in its path is {size:,} bytes long, over the {NAME_MAX_BYTES} bytes a file or"
                    " folder name can have")
    return None


def sqlite_path_problem(path: Path | str, extra: int = 0) -> str | None:
    """Why SQLite cannot open a database at ``path`` for the length of its path, as words to follow "Cannot open …
    at <path>: " (``"its path is 612 bytes long, and SQLite opens no database path over 504 bytes"``), else ``None``
    (short enough, or not POSIX, whose limits differ). SQLite walks the absolute path as given, and then its links
    resolved: both must be within :data:`SQLITE_MAX_PATH_BYTES` (QA round 143-K F2: a path passing 512 bytes before a
    link to a short one failed all the same). ``extra``: bytes a file dreamdb opens beside it adds
    (:data:`INDEX_COPY_EXTRA_BYTES`). A path of undecodable bytes counts as the bytes it is."""
    if os.name != "posix":
        return None
    try:
        real = os.fsencode(os.path.realpath(path))
        given = os.fsencode(os.path.abspath(path))
    except (OSError, ValueError):
        return None
    longest = max(given, real, key=len)
    if len(longest) + extra <= SQLITE_MAX_PATH_BYTES:
        return None
    length = (f"{len(longest):,} bytes long" if longest == given
              else f"{len(longest):,} bytes long once its links are resolved ({os.fsdecode(real)!r})")
    if len(longest) <= SQLITE_MAX_PATH_BYTES:  # (the copy beside it is what passes: QA round 143-L F3)
        return (f"its path is {length}, and the temporary copy dreamdb makes beside an index it moves there is {extra}"
                f" bytes longer, over the {SQLITE_MAX_PATH_BYTES} bytes of a database path SQLite opens")
    return f"its path is {length}, and SQLite opens no database path over {SQLITE_MAX_PATH_BYTES} bytes"


def index_env() -> str | None:
    """``DREAMDB_INDEX`` when it names a file, else ``None`` (unset, or blank: QA round 60 L7 saw a file named " ")."""
    return os.environ.get("DREAMDB_INDEX", "").strip() or None


def index_path_for(vault: Path) -> Path:
    """The index file for ``vault``.

    ``DREAMDB_INDEX`` if set (a relative path from the current folder, returned absolute); else ``<vault>/.dreamdb/index.db`` when that folder
    is writable (or does not exist yet and the vault is writable); else a per-vault
    file under :func:`cache_root` (keyed by the sha256 of the vault's absolute
    path): a read-only vault, or a read-only ``.dreamdb`` folder (SQLite needs to
    write the -wal and -shm files beside the index), is indexed there, and so is a vault whose own index path is
    too long for SQLite to open (:func:`vault_index_too_long`).
    """
    env = index_env()
    if env:  # (a relative path names a file of the current folder: said as the absolute path it is, QA round 59)
        if env.endswith(("/", os.sep)) or os.path.basename(env) in (".", ".."):
            # (a folder's path: abspath dropped the slash or the dot, and a file took the folder's name; QA rounds 86-B
            # F9, 87 L2)
            from dreamdb.errors import UsageError

            folder = os.path.normpath(env)
            raise UsageError(f"DREAMDB_INDEX={env!r} names a folder (it ends with a slash or a dot); it names the index"
                             " file.", hint=f"Set DREAMDB_INDEX={os.path.join(folder, INDEX_FILE_NAME)!r}, for instance.")
        return absolute_path("DREAMDB_INDEX", env)
    in_vault = vault / INDEX_DIR_NAME
    try:
        in_vault_is_dir = in_vault.is_dir()
    except PermissionError:  # the vault cannot be entered any more (an Index opened before its chmod: QA round 65 M1)
        from dreamdb.errors import VaultNotFound

        raise VaultNotFound.unreadable(vault) from None
    if (is_writable(in_vault) if in_vault_is_dir else is_writable(vault)) and not vault_index_too_long(vault):
        return in_vault / INDEX_FILE_NAME
    return cache_index_path(vault)


def vault_index_too_long(vault: Path) -> str | None:
    """Why SQLite cannot open the index in ``vault``'s own ``.dreamdb`` folder (:func:`sqlite_path_problem`), which
    is then kept in the user cache, as a read-only vault's is (QA round 143-B F1: a vault whose path was about 490
    bytes or longer could not be indexed at all, and several such vaults could not be searched together), with room
    for the temporary copy of an index dreamdb writes beside it (:data:`INDEX_COPY_EXTRA_BYTES`); else
    ``None``."""
    return sqlite_path_problem(vault / INDEX_DIR_NAME / INDEX_FILE_NAME, INDEX_COPY_EXTRA_BYTES)


def cache_index_path(vault: Path) -> Path:
    """The index file of ``vault`` under :func:`cache_root` (used while the vault is read-only).

    Raises:
        VaultNotFound: ``vault`` is a symlink loop (a link that leads back to itself, or a folder's on its way).
    """
    from hashlib import sha256

    try:
        resolved = vault.resolve()
    except RuntimeError:  # (a vault replaced by a looping link under a live Index: pathlib's bare "Symlink loop from
        from dreamdb.errors import VaultNotFound  # …" before Python 3.13, at every call; QA round 132-D F2)

        raise VaultNotFound.gone(vault) from None
    key = sha256(str(resolved).encode()).hexdigest()[:16]
    return cache_root() / key / INDEX_FILE_NAME


def _is_cache_key(name: str) -> bool:
    """Whether a folder's name is one :func:`cache_index_path` gives (16 lowercase hex digits)."""
    return len(name) == 16 and all(c in "0123456789abcdef" for c in name)


def is_cache_index_folder(folder: Path) -> bool:
    """Whether ``folder`` is a vault's folder in the user cache, ``<cache>/<key>`` (:func:`cache_index_path`)."""
    return _is_cache_key(folder.name) and Path(os.path.abspath(folder)).parent == Path(os.path.abspath(cache_root()))


def refuse_unsafe_cache_index(index_path: Path, elsewhere: str | None) -> None:
    """Before an index of the user cache (:func:`cache_index_path`) is read or written: refuse its folder, if there is
    one, as :func:`prepare_index_folder` does when it makes it (:func:`_refuse_unsafe_cache_folder`: a link, another
    user's, or holding a link or another user's file), so that no file of it is opened first, by a read that makes
    nothing either (``dreamdb sql --no-sync``; QA round 148-B F1). Nothing for another index path.

    Raises:
        IndexUnavailable: naming the folder, or the file in it, and why (exit 4).
    """
    folder = Path(index_path).parent
    if os.path.lexists(folder) and is_cache_index_folder(folder):
        _refuse_unsafe_cache_folder(folder, elsewhere)


def other_default_index_path(vault: Path, index_path: Path) -> Path | None:
    """The other place :func:`index_path_for` may put ``vault``'s index, or has put it: the cache file for the in-vault
    one and back (a vault made writable, or read-only, moves its index, and a vault whose own index path is too long to
    keep it there, :func:`vault_index_too_long`, takes its in-vault index into the cache while SQLite can still open
    it: QA round 144-A F2, a vault renamed a few bytes longer, or one indexed before that limit, got a new, empty index
    and its embeddings were left behind); ``None`` for any other path, and for the cache file of a vault whose own
    index path SQLite cannot open (:func:`sqlite_path_problem`)."""
    in_vault = vault / INDEX_DIR_NAME / INDEX_FILE_NAME
    cached = cache_index_path(vault)
    here = Path(os.path.abspath(index_path))
    if here == Path(os.path.abspath(in_vault)):
        return cached
    if here == Path(os.path.abspath(cached)) and sqlite_path_problem(in_vault) is None:  # (read where it is: the copy
        return in_vault  # is made beside the cache's file)
    return None


def recorded_vault(recorded: str | None, vault: Path) -> str:
    """How the vault an index records (its ``meta.vault``) relates to ``vault``: ``"ours"`` (the same folder,
    or none recorded), ``"gone"`` (a vault that no longer exists, moved: ``vault`` takes the index over) or
    ``"other"`` (another vault that exists: its ids and files are not ``vault``'s)."""
    if not recorded or os.path.abspath(recorded) == os.path.abspath(vault):
        return "ours"
    try:
        if os.path.samefile(recorded, vault):
            return "ours"
    except OSError:
        return "gone"
    return "other" if os.path.isdir(recorded) else "gone"


def prepare_index_dir(index_path: Path, *, chmod_existing: bool = True, parents: bool = True,
                      given: bool = False, elsewhere: str | None = "DREAMDB_INDEX") -> None:
    """Create the index folder (mode 0700) with its own ``.gitignore``, and the index file with mode 0600
    (an existing file is set to 0600 too unless ``chmod_existing`` is false).

    The index holds partially invertible vectors: SPEC §3 treats it as credential-class.
    """
    prepare_index_folder(index_path.parent, parents=parents, given=given, elsewhere=elsewhere)
    if not index_path.exists():
        fd = os.open(index_path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    elif chmod_existing:
        restrict_mode(index_path)


def prepare_index_folder(folder: Path, *, parents: bool = True, given: bool = False,
                         elsewhere: str | None = "DREAMDB_INDEX") -> None:
    """Create an index folder (mode 0700), and in a vault's ``.dreamdb``, or a folder it made, its own ``.gitignore``:
    written whole or
    not at all (a temporary file renamed), and written again when it is empty (QA round 50: a full disk left it
    empty, and ``git add -A`` would then have committed the index, which holds partially invertible vectors).

    ``given``: the index's path is the user's (``DREAMDB_INDEX``, ``index_path``): a folder made for it gets a
    ``.gitignore`` too.

    ``elsewhere``: the setting an error's hint may offer to put the index elsewhere (``None``: none works, as for
    the vaults of a :class:`~dreamdb.multi.MultiIndex`; QA round 143-B F3).

    ``parents``: make the folders above it too. A vault's ``.dreamdb`` is made with ``parents=False``
    (:func:`is_vault_index_folder`), in the vault as it is, never with the vault itself: a vault moved or deleted
    is not created again, empty, at its old path (QA round 62 H1: an ``Index`` reopened after ``close()`` did, and
    ``remember`` then wrote into that empty copy). Other folders (the user cache, ``DREAMDB_INDEX``'s, whatever
    their names: QA round 64 M3) are made with their parents.

    Raises:
        FileNotFoundError: ``parents`` is false and the folder above does not exist.
        OSError: the folder or the file cannot be written (a read-only vault, a full disk).
        IndexUnavailable: a vault's ``.dreamdb`` is a link to the vault, to a folder of its notes or to a folder
            holding it (:func:`_refuse_link_over_vault`).
    """
    _refuse_link_over_vault(folder, elsewhere)
    made = given and not os.path.lexists(folder)  # (``given``: the index's place is the user's, DREAMDB_INDEX or
    if not given and parents and is_cache_index_folder(folder):
        make_private_folders(folder)  # (a read-only vault's, under the user cache: QA round 147-F F2)
        _refuse_unsafe_cache_folder(folder, elsewhere)
    folder.mkdir(parents=parents, exist_ok=True, mode=0o700)  # Index(index_path=…); QA round 112-A F7)
    if folder.name != INDEX_DIR_NAME and not made:  # (a folder dreamdb made for DREAMDB_INDEX is its own too, and
        return  # git would show the index in it: QA round 109-B F6, a path inside the repository; not the user
        # cache's folders, removed whole when their vault can be written again)
    gi = folder / ".gitignore"
    try:
        if gi.stat().st_size:
            return
    except FileNotFoundError:
        pass
    tmp = folder / f".gitignore.{os.getpid()}.tmp"
    try:
        tmp.write_text(GITIGNORE_TEXT, encoding="utf-8")
        os.replace(tmp, gi)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _refuse_link_over_vault(folder: Path, elsewhere: str | None = "DREAMDB_INDEX") -> None:
    """Refuse a vault's ``.dreamdb`` that is a link to the vault itself, to a folder of its notes, or to a folder
    holding it (the project's root): the index, its lock files and a ``.gitignore`` of ``*`` would be written there,
    and git would then ignore every file of that folder (QA round 123-B F2: new code and notes left out of the
    repository without a word). A link to a folder elsewhere, or to a hidden folder of the vault, is followed.

    Raises:
        IndexUnavailable: ``folder`` is such a link.
    """
    if folder.name != INDEX_DIR_NAME or not os.path.islink(folder):
        return
    try:
        target = folder.resolve(strict=True)  # (a dangling link is reported where the folder is made)
        vault = folder.parent.resolve(strict=True)
    except (OSError, RuntimeError):
        return
    holds_vault = vault.is_relative_to(target)
    among_notes = (target.is_relative_to(vault) and target != vault
                   and not target.relative_to(vault).parts[0].startswith("."))  # (a hidden folder holds no notes:
    if not (holds_vault or among_notes):  # followed, QA round 124-A F6)
        return
    from dreamdb.errors import IndexUnavailable

    where = ("the vault itself" if target == vault else "a folder holding the vault" if holds_vault
             else "a folder of the vault's notes")
    raise IndexUnavailable(f"The vault's index folder {folder} is a link to {target}, {where}: dreamdb would write its"
                           " index there, and a .gitignore of '*' that makes git ignore every file in that folder.",
                           hint="Remove the link (dreamdb makes its own .dreamdb folder)"
                                + (", make it lead to a folder outside the vault's project, or set"
                                   f" {elsewhere} to a file path elsewhere." if elsewhere
                                   else ", or make it lead to a folder outside the vault's project."))


def is_vault_index_folder(folder: Path, vault: Path) -> bool:
    """Whether ``folder`` is ``<vault>/.dreamdb``, the vault's own index folder (made without parents:
    :func:`prepare_index_folder`)."""
    return os.path.abspath(folder) == os.path.abspath(Path(vault) / INDEX_DIR_NAME)


def journal_file_problem(index_path: Path) -> tuple[str, str, str] | None:
    """``(path, what it is, its role)`` of the first of an index's journal, WAL or shared-memory files (``-journal``,
    ``-wal``, ``-shm`` beside it) that is not a regular file of one name, else ``None``: SQLite opens them as they
    are, read-only connections too (the ``-shm`` is written by every reader). A pipe waits for a writer that never
    comes (QA round 103-C F1: recall, sync and the prompt hook hung); a link to nothing makes the index unreadable
    (104-A F8: rebuilt on every command); a link or hard link to a file gets the log written into that file (109-A
    F1, 111-A F1: a user's script overwritten by ``update``'s look-up in the index)."""
    import errno

    # (beside the file SQLite opens too: it resolves a linked index.db and keeps the logs beside its target, QA round
    # 113-A F1)
    bases = dict.fromkeys((str(index_path), os.path.realpath(index_path)))
    for base, suffix in ((b, x) for b in bases for x in ("-journal", "-wal", "-shm")):
        path = f"{base}{suffix}"
        try:
            st = os.lstat(path)
        except OSError:  # (none there, the usual case)
            continue
        what = None
        if stat.S_ISLNK(st.st_mode):
            try:
                os.stat(path)
                what = f"a symbolic link (to {os.readlink(path)})"
            except OSError as exc:
                what = "a symbolic link in a loop" if exc.errno == errno.ELOOP else "a link to nothing"
        elif not stat.S_ISREG(st.st_mode):
            what = "a folder" if stat.S_ISDIR(st.st_mode) else "a pipe" if stat.S_ISFIFO(st.st_mode) else \
                "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
        elif st.st_nlink > 1:
            what = f"a hard link (the file has {st.st_nlink} names)"
        if what is not None:
            return path, what, {"-journal": "rollback journal", "-wal": "write-ahead log",
                                "-shm": "WAL's shared memory"}[suffix]
    return None


def refuse_journal_files(index_path: Path | str) -> None:
    """Raise when :func:`journal_file_problem` finds one: every connection to an index checks this first (QA round
    112-A F1: ``sql --no-sync``'s read-only connection wrote its ``-shm`` through a hard link into a user's file).

    Raises:
        IndexUnavailable: naming the file and what it is (exit code 4).
    """
    problem = journal_file_problem(Path(index_path))
    if problem is not None:
        from dreamdb.errors import IndexUnavailable

        path, what, role = problem
        raise IndexUnavailable(f"{path} is {what}, not a file of its own: SQLite keeps the index's {role} there, and"
                               " dreamdb will not open the index beside it.",
                               hint=f"Remove {path} (SQLite makes its own file there), then run the command again.")


def restrict_mode(index_path: Path) -> None:
    """Take the group's and others' permissions off an index file and its ``-wal``/``-shm`` files (best effort),
    keeping the owner's: an index the user made read-only (0444) stays read-only, 0400 (QA round 65 L3: it was
    set to 0600, so dreamdb undid the user's chmod, and ``sync``'s "make it writable" came true by itself).

    SQLite creates the ``-wal`` and ``-shm`` files with the mode the index file had when it
    was opened, so a read-only (0444) index left a read-only ``-shm`` behind that made every
    later write fail (a QA repro): while the index file is writable by its owner, they are set to 0600.
    """
    try:
        writable = stat.S_IMODE(os.stat(index_path).st_mode) & 0o200
    except OSError:
        return
    for suffix in ("", "-wal", "-shm"):
        path = f"{index_path}{suffix}"
        try:
            st = os.lstat(path)
            # never through a link, nor on a file of several names: the file is another's too (QA rounds 109-A F1,
            # 110-A F1: a -shm link or hard link to a user's script, or an index.db linked to one, took its execute
            # bit away; the index is refused beside them, Index._check_journal_files)
            if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
                continue
            os.chmod(path, 0o600 if suffix and writable else stat.S_IMODE(st.st_mode) & 0o600)
        except OSError:
            pass


def index_file_kind(index_path: Path) -> str:
    """What is at ``index_path``, from its first 100 bytes (no SQLite connection):

    ``missing``, ``empty``, ``directory``, ``special`` (a device, FIFO or socket: never opened, since reading
    a FIFO blocks and a device such as ``/dev/null`` reads as empty), ``unreadable`` (no permission, or another
    read error), ``dreamdb`` (SQLite with dreamdb's application id),
    ``sqlite`` (SQLite, application id 0: a dreamdb index older than migration 003, or any other
    database), ``foreign`` (SQLite with another application id) or ``other`` (not SQLite at all:
    damaged, or somebody else's file). A file this process has an open SQLite connection to is
    ``dreamdb`` without being read (see :data:`dreamdb.store.connect._OPEN_FILES`).

    Raises:
        IndexUnavailable: the file could not be opened for the open-file limit (EMFILE, ENFILE): what it is cannot
            be told, and ``unreadable`` would blame its permissions (QA round 153-E F1).
    """
    try:
        st = os.stat(index_path)
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            return "directory"
        if not stat.S_ISREG(mode):
            return "special"
        from dreamdb.store.connect import connected_in_process

        if connected_in_process(st):
            # Open in this process (so checked and migrated already): reading it here would release the
            # process's SQLite locks on close (POSIX record locks), exposing its connections to other writers.
            return "dreamdb"
        with open(index_path, "rb") as f:
            header = f.read(100)
    except (FileNotFoundError, NotADirectoryError):  # (a file where the folder should be: said on creation)
        return "missing"
    except OSError as exc:
        from dreamdb.errors import OPEN_FILES_HINT, IndexUnavailable, open_files_reason, short_of_files

        if short_of_files(exc):
            raise IndexUnavailable(f"Cannot read the index file {index_path}: {open_files_reason(exc)}; it was left as"
                                   " it is.", hint=OPEN_FILES_HINT) from None
        return "unreadable"
    if not header:
        return "empty"
    if not header.startswith(_SQLITE_MAGIC) or len(header) < 72:
        return "other"
    app_id = int.from_bytes(header[68:72], "big")
    return "dreamdb" if app_id == APPLICATION_ID else "sqlite" if app_id == 0 else "foreign"


def not_an_index(kind: str) -> str:
    """What a file at the index path that is no dreamdb index is, for :func:`index_file_kind`'s ``foreign``,
    ``sqlite`` (one of none of dreamdb's tables, not an index older than migration 003) or ``other``, as every message
    that refuses it words it: ``recall``, ``sync``, ``sql --no-sync`` (QA round 151-A F7: a user's own SQLite file was
    "a SQLite database dreamdb did not make" to the first two and "another application's SQLite database" to
    ``sql``)."""
    return {"foreign": "another application's SQLite database",
            "sqlite": "a SQLite database dreamdb did not make (or cannot read)",
            "other": "not a SQLite database"}[kind]


def is_default_index_path(index_path: Path, vault: Path) -> bool:
    """True for the locations dreamdb owns (``<vault>/.dreamdb/`` and the per-vault cache folder): a
    damaged file there is dreamdb's own and may be deleted; elsewhere (``DREAMDB_INDEX``, an explicit
    ``index_path``) only a file recognisably dreamdb's is ever deleted."""
    p = Path(os.path.abspath(index_path))
    if p.parent == Path(os.path.abspath(vault / INDEX_DIR_NAME)):
        return True
    if not env_path("DREAMDB_CACHE_DIR") and APP_NAME not in (part.lower() for part in p.parent.parent.parts):
        # platformdirs puts the application's name in every platform's cache path (~/.cache/dreamdb,
        # ~/Library/Caches/dreamdb, …\dreamdb\Cache): a path without it is not there, and the
        # import (~15 ms) is spared to a DREAMDB_INDEX elsewhere
        return False
    try:
        return p.parent.parent == Path(os.path.abspath(cache_root()))
    except Exception:  # noqa: BLE001 - no cache dir: not a default location
        return False


def env_switch(name: str, default: bool, hint: str) -> bool:
    """An on/off environment variable: ``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``
    (case-insensitive, spaces ignored); unset or empty gives ``default``.

    Raises:
        UsageError: any other value (``hint`` says what the variable does).
    """
    value = os.environ.get(name, "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    if not value:
        return default
    from dreamdb.errors import UsageError

    raise UsageError(f"{name}={os.environ[name]!r} is neither on nor off.", hint=hint)


KERNEL_ENV = "DREAMDB_KERNEL"
"""``0`` (or false/no/off) makes long-lived processes rank with numpy passes even where the C
accumulator was built (to compare them); any value but on/off is refused (UsageError)."""


def kernel_switch() -> bool:
    """Whether the memory engine may use the C accumulator (``DREAMDB_KERNEL``, on by default).

    Raises:
        UsageError: a value other than 1/true/yes/on or 0/false/no/off/empty (case-insensitive).
    """
    return env_switch(KERNEL_ENV, True,
                      f"{KERNEL_ENV}=0 ranks with numpy passes instead of the C accumulator; 1 or unset with it.")


def include_archives_default() -> bool:
    """Whether dot-folders are indexed (``DREAMDB_INCLUDE_ARCHIVES=1``).

    Raises:
        UsageError: a value other than 1/true/yes/on or 0/false/no/off/empty (case-insensitive).
    """
    return env_switch("DREAMDB_INCLUDE_ARCHIVES", False,
                      "Use DREAMDB_INCLUDE_ARCHIVES=1 to index dot-folders such as knowledge/.archive/, 0 (or unset) not to.")


def remove_index_files(index_path: Path) -> None:
    """Delete an index file with its ``-wal`` and ``-shm`` companions and its ``.trusted`` record
    (:mod:`dreamdb.store.trust`; missing ones are fine)."""
    for suffix in ("", "-wal", "-shm", ".trusted"):
        try:
            os.unlink(f"{index_path}{suffix}")
        except FileNotFoundError:
            pass


def index_last_written(index_path: Path) -> float:
    """When an index was last written: the later of its file's and its WAL's modification times (seconds since
    the epoch; 0.0 for no file). A WAL of 0 bytes is left out: SQLite makes one when a connection
    opens the index to read it, so its time is the last read, not a write (QA round 139-E F1: ``status`` gave
    its own time as ``index_modified``)."""
    times = [0.0]
    for f in (str(index_path), f"{index_path}-wal"):
        try:
            st = os.stat(f)
        except OSError:
            continue
        if st.st_size or f == str(index_path):
            times.append(st.st_mtime)
    return max(times)


def index_size_bytes(index_path: Path) -> int:
    """Bytes of an index file plus its WAL (what ``status`` reports)."""
    return sum(os.path.getsize(f"{index_path}{s}") for s in ("", "-wal") if os.path.exists(f"{index_path}{s}"))
