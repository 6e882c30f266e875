"""Find the vault and the files in it that become documents (SPEC §1).

The corpus table of SPEC §1, as code: :func:`classify` maps a path relative
to the vault root to a document type, :func:`walk_sources` lists every such
file with its ``os.stat_result`` (the sync's stat pre-filter input).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat as _stat
from contextvars import ContextVar
from collections.abc import Callable, Iterator
from pathlib import Path

from dreamdb.errors import NoVaultFound, VaultNotFound
from dreamdb.records import record

VAULT_DIR_NAME = "_dream_context"
INDEX_DIR_NAME = ".dreamdb"

MEMORY_FILE = "core/2.memory.md"
CHANGELOG_FILE = "core/CHANGELOG.json"
SYNONYMS_FILE = "synonyms.txt"
"""The vault's synonym groups (:mod:`dreamdb.ranking.synonyms`), at its top: configuration dreamdb reads, no note."""

# (top folder, recursive?, type). knowledge/features is matched before knowledge.
_MD_ROOTS: tuple[tuple[str, bool, str], ...] = (
    ("knowledge/features", True, "feature"),
    ("knowledge", True, "knowledge"),
    ("core/features", False, "feature"),
    ("state", False, "task"),
    ("core/objectives", False, "objective"),
    ("lab/insights", False, "insight"),
    ("theses", False, "thesis"),
)

DOCUMENT_TYPES = (
    "knowledge", "feature", "task", "memory", "changelog", "objective", "insight", "thesis", "bookmark",
)


@record(frozen=True)
class SourceFile:
    """One vault file that yields documents.

    Attributes:
        rel_path: POSIX path relative to the vault root.
        kind: ``markdown``, ``memory`` or ``changelog``.
        type: document type for ``markdown`` (``None`` otherwise: set per document).
        mtime_ns: modification time (ns).
        ctime_ns: status-change time (ns): moves on every change of content or metadata and,
            unlike the modification time, cannot be set back by a program.
        size: size (bytes).
    """

    rel_path: str
    kind: str
    type: str | None
    mtime_ns: int
    size: int
    ctime_ns: int


NESTED_VAULT_SKIPPED = ": skipped (a vault of its own inside this one; search it with its own --vault)"
"""The end of a sync's note on a vault inside the vault it reads (``<its path in the vault>`` before it): its notes
are not this vault's. Searched together with it, it needs no note (:meth:`dreamdb.multi.MultiIndex.take_notes`)."""


def read_source(path: str | os.PathLike) -> bytes:
    """The bytes of a vault file, read only if the file opened is a regular file.

    :func:`walk_sources` passes over FIFOs, sockets and devices, but a file can be replaced between that look and
    the read: a FIFO swapped in for a note made ``Path.read_bytes`` block for good inside sync's write transaction,
    holding the index's write lock (QA round 59 M1: other syncs then gave up, and the prompt hook hung). The file
    is opened without blocking (``O_NONBLOCK``: a FIFO with no writer opens at once) and its type is checked on
    the open descriptor, so what is read is what was checked.

    Raises:
        OSError: it cannot be opened or read, or it is not a regular file (``errno.EINVAL``).
    """
    with os.fdopen(open_regular(path), "rb") as f:
        return f.read()


READ_BLOCK_BYTES = 1 << 20
"""The block :func:`read_head` reads a file in (1 MiB)."""


def read_head(path: str | os.PathLike, limit: Callable[[bytes], int]) -> tuple[bytes, str, int]:
    """The first bytes of a vault file, as many as ``limit`` says of its first block (up to :data:`READ_BLOCK_BYTES`,
    all of a smaller file), with the sha256 (hex) of all its bytes and their number: read as :func:`read_source`
    reads, a block at a time, so the memory taken is that of the bytes kept, whatever the file's size (QA round
    148-C F5: a note of 300 MB, of which 4 Mi characters are indexed, took 644 MB to sync, 332 MB to check).

    Returns:
        ``(head, sha256_hex, size)``; ``head`` is the whole file when ``size <= limit(first block)``.

    Raises:
        OSError: as :func:`read_source`.
    """
    from hashlib import sha256

    digest = sha256()
    kept: list[bytes] = []
    want = size = 0
    with os.fdopen(open_regular(path), "rb") as f:
        while block := f.read(READ_BLOCK_BYTES):
            if not size:
                want = limit(block)
            digest.update(block)
            if size < want:
                kept.append(block[:want - size])
            size += len(block)
    return b"".join(kept), digest.hexdigest(), size


def open_regular(path: str | os.PathLike, flags: int = os.O_RDONLY, *, follow: bool = True, mode: int = 0o600) -> int:
    """A descriptor of ``path`` opened with ``flags``, only if the file opened is a regular file: opened without
    blocking (``O_NONBLOCK``: a FIFO with no writer opens at once) and checked on the descriptor, so what is used is
    what was checked (:func:`read_source`); with ``follow=False``, never through a symbolic link (``O_NOFOLLOW``:
    a repository can ship a path dreamdb writes as a link to a file of the user's, QA round 61 H1).

    Raises:
        OSError: it cannot be opened, or it is not a regular file (``errno.EINVAL``; the descriptor is closed).
    """
    extra = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    fd = os.open(path, flags | extra, mode)
    try:
        if _stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        os.close(fd)
        raise
    os.close(fd)
    raise OSError(errno.EINVAL, "not a regular file any more (it was replaced while the vault was read)")


VAULT_OPTION: ContextVar[bool] = ContextVar("VAULT_OPTION", default=True)
"""Whether the command being run takes ``--vault``, which the hints of :class:`VaultNotFound` name: ``hook install``
does not, nor does the hook it installs, which reads ``DREAMDB_VAULT`` alone; its notes name only that (QA round
140-C F7c: "or pass --vault PATH", an option it refuses)."""


def _vault_option(said: str, otherwise: str = "") -> str:
    """``said``, naming ``--vault``, where the command takes it (:data:`VAULT_OPTION`), else ``otherwise``."""
    return said if VAULT_OPTION.get() else otherwise


def find_vault(path: str | os.PathLike | None = None, *, cwd: Path | None = None, project_first: bool = False,
               project_dir: Path | None = None) -> Path:
    """Resolve the vault root (the ``_dream_context`` folder).

    Order: ``path`` (the ``_dream_context`` folder itself or a folder containing one; any
    other folder is refused, so a typo never gets files written into it),
    else ``$DREAMDB_VAULT``, else walk up from ``cwd`` looking for
    ``_dream_context`` (or being inside one). With ``project_first`` (the prompt hook, whose
    ``cwd`` is the agent session's project), the walk comes before ``$DREAMDB_VAULT``, which
    then serves only where no vault is found: one exported for the command line must not show
    one project's memories in every other (QA round 70 C-M3). ``project_dir`` (with ``project_first``: Claude
    Code's ``$CLAUDE_PROJECT_DIR``) is walked up from too, after ``cwd`` and before ``$DREAMDB_VAULT``: the
    session's working folder may have moved out of the project (QA round 108-B F4); an ``OSError`` or
    ``RuntimeError`` (a symlink loop) of that walk has ``project_dir`` set to it.

    Raises:
        VaultNotFound: nothing found; the hint says how to point dreamdb at a vault. With ``project_first``, one
            whose ``from_walk`` is true came from a walk that found a vault and refused it (a ``_dream_context``
            link to a folder above it, an unreadable one), whatever ``$DREAMDB_VAULT`` says.
    """
    from dreamdb.config import env_path

    env_vault = env_path("DREAMDB_VAULT")  # (blank, spaces only, is unset, as for every other variable: QA round 152-F F4)
    if project_first and path is None:
        try:
            return _walk_up(cwd)
        except NoVaultFound as exc:
            first = exc
        except VaultNotFound as exc:
            exc.from_walk = True
            raise
        if project_dir is not None:
            try:
                if project_dir.is_dir():
                    return _walk_up(project_dir)
            except NoVaultFound as exc:
                first.detail = first.detail or exc.detail
            except VaultNotFound as exc:
                exc.from_walk = True
                raise
            except (OSError, RuntimeError) as exc:  # (a name too long, a symlink loop: the hook names the path that
                exc.project_dir = project_dir  # is, not cwd; QA round 146-D F6)
                raise
        if not env_vault:
            raise first
    explicit = path if path is not None else env_vault
    if explicit is not None and not str(explicit).strip():  # (--vault "  "; the CLI refuses it first, exit 2)
        raise VaultNotFound("The vault path is empty.", hint="Pass --vault PATH to a _dream_context folder "
                                                             "(or a folder containing one).")
    if explicit is not None:
        try:
            return _utf8_vault(_explicit_vault(path, explicit))
        except OSError as exc:  # a relative path from a deleted working folder, a loop
            if isinstance(exc, PermissionError):  # (a folder on its way that cannot be searched: QA round 117-A F3,
                from dreamdb.config import expand_user

                raise VaultNotFound.unreadable(expand_user(explicit)) from None  # "pass an absolute path")
            source = "" if path is not None else " (from DREAMDB_VAULT)"  # (QA round 121-C F9: not named)
            raise VaultNotFound(f"The vault path {explicit}{source} cannot be resolved ({exc.strerror or exc}).",
                                hint="Pass --vault with an absolute path, or cd into your project." if path is not None
                                else f"Set DREAMDB_VAULT to an absolute path{_vault_option(' (or pass --vault)')},"
                                     " or cd into your project.") from None
    try:
        return _walk_up(cwd)
    except OSError as exc:  # (a path too long for the system: QA round 120-A F9, exit 70; the hook, project_first,
        # logs the OSError as a cwd that is no usable path)
        where = exc.filename if isinstance(exc.filename, str) else str(cwd or "the current folder")
        if os.path.basename(where) == VAULT_DIR_NAME:
            where = os.path.dirname(where)
        raise VaultNotFound(f"Cannot look for a {VAULT_DIR_NAME}/ folder in {where} ({exc.strerror or exc}).",
                            hint=f"cd into your project{_vault_option(', pass --vault PATH,')} or set"
                                 " DREAMDB_VAULT.") from None


def vault_in_working_folder() -> Path | None:
    """The vault the walk up from the current folder finds (as :func:`find_vault` without a path and without
    ``$DREAMDB_VAULT``), or ``None`` when it finds none or none it can use."""
    try:
        return _walk_up(None)
    except (VaultNotFound, OSError, RuntimeError):
        return None


def _walk_up(cwd: Path | None) -> Path:
    """The ``_dream_context`` folder in or above ``cwd`` (default: the current folder), or the one ``cwd`` is in.

    Raises:
        NoVaultFound: there is none. VaultNotFound: ``cwd`` is gone, or the vault cannot be read.
    """
    try:
        here = (cwd or Path.cwd()).resolve()
    except OSError:  # the working folder was deleted (or is unreadable)
        raise VaultNotFound("The current folder no longer exists (or cannot be read), so no vault can be found from it.",
                            hint=f"cd into your project{_vault_option(', pass --vault PATH,')} or set"
                                 " DREAMDB_VAULT.") from None
    for d in (here, *here.parents):
        named = _vault_named(d)
        if named is not None:
            return _utf8_vault(named)
        try:
            found = (d / VAULT_DIR_NAME).is_dir()
        except PermissionError:  # (QA round 118-B F2: exit 70 from a folder under one this user cannot search)
            raise VaultNotFound(f"Cannot look for a {VAULT_DIR_NAME}/ folder in {d} (permission denied: it, or a folder"
                                " on its way, cannot be searched).", hint=f"cd into your project"
                                f"{_vault_option(', pass --vault PATH,')} or set DREAMDB_VAULT; or give yourself search"
                                " permission on those folders (chmod u+x).") from None
        if found:
            return _utf8_vault(_not_above_itself(d / VAULT_DIR_NAME, (d / VAULT_DIR_NAME).resolve()))
    near = _near_misses(here) or _named_almost(here)  # (in one, its own name: QA round 143-B F5)
    # (one of that name that is no folder, a file or a link to nothing, said: QA round 134 F5, "none found")
    other = next((d / VAULT_DIR_NAME for d in (here, *here.parents) if os.path.lexists(d / VAULT_DIR_NAME)), None)
    problem = path_problem(other, folder=True) if other is not None else None
    detail = (f"{other} {problem}" if problem else
              f"{near[0]} is named almost so: rename it {VAULT_DIR_NAME}" if near else None)
    # (how to start one, as for a --vault folder without one: QA round 144-H F4; not beside a near miss or a
    # _dream_context that is no folder, which the message names)
    start = (f"; to start a vault, create {VAULT_DIR_NAME}/ in your project's folder ({_where_to_start(here)})"
             if detail is None else "")
    exc = NoVaultFound(
        f"No {VAULT_DIR_NAME}/ folder found in {here} or any folder above it" + (f" ({detail})." if detail else "."),
        hint=f"Run inside a project with a {VAULT_DIR_NAME}/ vault, pass --vault PATH, or set DREAMDB_VAULT{start}.",
    )
    exc.detail = detail
    raise exc


def _where_to_start(here: Path) -> str:
    """Where the hint of no vault found says to create one: ``here: <here>/_dream_context``, but not in the home folder
    or the file system's root, whose vault every folder below them would find (the prompt hook then shows its
    memories in every project: QA round 144-J F9): there, to cd into the project's folder first."""
    try:
        home = here == Path.home().resolve()
    except (OSError, RuntimeError):  # (no home folder known)
        home = False
    if home or here == here.parent:
        return (f"cd there first: one in {'the home folder' if home else 'the root'} {here} would be found from every"
                " folder below it")
    return f"here: {here / VAULT_DIR_NAME}"


def _almost_vault_name(name: str) -> bool:
    """Whether a folder name is almost ``_dream_context`` but not it (``dream_context``, ``.dream-context``,
    ``_Dream_Context``): its letters and digits, case folded, are ``dreamcontext``."""
    return name != VAULT_DIR_NAME and "".join(c for c in name.casefold() if c.isalnum()) == "dreamcontext"


def _near_misses(folder: Path) -> list[Path]:
    """Folders in ``folder`` named almost ``_dream_context`` (:func:`_almost_vault_name`): a vault dreamdb does not
    read under that name (QA round 119-A F6: "not a vault", no word of the folder beside it)."""
    try:
        with os.scandir(folder) as entries:
            return sorted(Path(e.path) for e in entries if _almost_vault_name(e.name) and e.is_dir())
    except OSError:
        return []


def _named_almost(folder: Path) -> list[Path]:
    """``[folder]``, or the nearest folder above it, when its own name is almost ``_dream_context``
    (:func:`_almost_vault_name`): a path into a misnamed vault (QA round 143-B F5: ``--vault casep/_Dream_Context``
    was told to create a ``_dream_context`` inside it); else ``[]``."""
    folders = (folder, *folder.parents, *Path(os.path.abspath(folder)).parents)  # (as given first: as said)
    return next(([d] for d in folders if _almost_vault_name(d.name)), [])


def _utf8_vault(vault: Path) -> Path:
    """``vault``, or VaultNotFound when its path is not valid UTF-8 (the index stores it as text) or it cannot be
    listed and entered (QA round 65 M1: a vault folder of mode 000 or 644 ended every command in exit 70)."""
    if not os.access(vault, os.R_OK | os.X_OK):
        raise VaultNotFound.unreadable(vault)
    if not is_utf8(str(vault)):
        shown = os.fsencode(str(vault)).decode("utf-8", "replace")
        why = not_utf8_because(str(vault))
        if why is not None:
            raise VaultNotFound(f"The vault path {shown} cannot be read: {why[0]}.", hint=why[1])
        raise VaultNotFound(f"The vault path {shown} is not valid UTF-8, which dreamdb cannot store in its index.",
                            hint="Rename the folders on that path (e.g. with convmv), or move the project.")
    return vault


def symlink_loop(path: str | os.PathLike) -> bool:
    """Whether ``path`` leads into a loop of symbolic links (a link that leads back to one already followed): said as
    such, not as a path that does not exist or cannot be read. Not a long chain of links that ends, which ``stat``
    fails all the same (``ELOOP``, past 40 links on Linux: :func:`too_many_links`; QA round 144-J F1)."""
    return _elooped(path) and _loop_met(path) is not None


def too_many_links(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a chain of more symbolic links than the system follows (``stat`` fails with ``ELOOP``), one
    that ends and is no loop (:func:`symlink_loop`): what its links lead to is reached through its realpath."""
    return _elooped(path) and _loop_met(path) is None


def _elooped(path: str | os.PathLike) -> bool:
    """Whether ``stat`` fails on ``path`` with ``ELOOP``: a loop of links, or more of them than the system follows."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    except ValueError:  # (a NUL, or a lone surrogate from Python, which no file name holds: no such path)
        pass
    return False


def _loop_met(path: str | os.PathLike) -> str | None:
    """The symbolic link at which following ``path``'s links comes back to one already followed, as ``realpath``
    meets it, or ``None`` when it meets none."""
    try:
        os.path.realpath(path, strict=True)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return exc.filename
    except ValueError:
        pass
    return None


def looping_link(path: str | os.PathLike) -> Path | None:
    """The symbolic link that loops on the way to ``path`` (``path`` itself, or a folder before it: ``loop/sub``'s
    ``loop``, or the link that one it leads to is: ``r.md -> loop/x``'s ``loop``), or ``None`` when there is none
    (:func:`symlink_loop`)."""
    path = Path(path)
    first = next((p for p in (*reversed(path.parents), path) if symlink_loop(p)), None)
    if first is None:
        return None
    met = _loop_met(first)
    return first if met is None or os.path.abspath(met) == os.path.abspath(first) else Path(met)


def path_problem(path: str | os.PathLike, *, folder: bool) -> str | None:
    """What keeps ``path`` from being an existing folder (``folder``) or file (anything but a folder: the pipe of a
    shell's ``<(cmd)`` is one), in words that follow "the path": "does not exist", "is a link to nothing", "is a
    symlink loop (…)", "goes through a symlink loop: …", "cannot be followed: … (too many links to follow)", "cannot be
    reached (…)", "is not a folder", "is a folder, not a file"; ``None`` when it is one. The words of every option that names a file or folder to read
    (:class:`dreamdb.cli.options.ExistingPath`, ``hook install --project``)."""
    elooped = False
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        mode, elooped = None, exc.errno == errno.ELOOP
    except ValueError:  # (a NUL, which no file name holds)
        mode = None
    if mode is not None:
        if _stat.S_ISDIR(mode) == folder:
            return None
        return "is not a folder" if folder else "is a folder, not a file"
    try:
        loop = looping_link(path)
        link = os.path.islink(path)
    except ValueError:
        return "does not exist"
    if loop is not None:  # (QA round 102-A: a loop of links read as a mistyped path)
        return ("is a symlink loop (a link that leads back to itself)" if loop == Path(path) else
                f"goes through a symlink loop: {loop} is a link that leads back to itself")
    if elooped:  # (a chain of links that ends, but longer than the system follows: no loop, QA round 144-J F1)
        return "cannot be followed: it is a chain of more symbolic links than the system follows (too many links to" \
               " follow)"
    from dreamdb.config import is_unreachable

    if is_unreachable(path):
        return "cannot be reached (permission denied: a folder on its way cannot be searched)"
    return "is a link to nothing" if link else "does not exist"


def _working_folder_gone() -> bool:
    """Whether the current working folder was deleted (``getcwd`` fails; ``.`` itself still opens)."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def _explicit_vault(path, explicit) -> Path:
    """The vault named by ``--vault`` or ``DREAMDB_VAULT`` (see :func:`find_vault`)."""
    from dreamdb.config import expand_user

    p = expand_user(explicit)
    source = "" if path is not None else " (from DREAMDB_VAULT)"
    fix = "Pass --vault PATH" if path is not None else f"Set DREAMDB_VAULT{_vault_option(' (or pass --vault PATH)')}"
    point = _vault_option("--vault (or DREAMDB_VAULT)", "DREAMDB_VAULT")
    if not p.exists():  # (a symlink loop was said not to exist: QA round 100-A F7)
        if not p.is_absolute() and _working_folder_gone():  # (QA round 122-A F7: "does not exist: v", of ./v)
            raise VaultNotFound(f"The vault path {explicit}{source} is relative, and the current folder no longer"
                                " exists.", hint=f"{fix} with an absolute path, or cd into your project.")
        import unicodedata

        # (its folders saved in the other Unicode form, as macOS writes names decomposed: QA round 121-C F6)
        other = next((Path(form) for form in (unicodedata.normalize(f, str(p)) for f in ("NFD", "NFC"))
                      if form != str(p) and os.path.exists(form)), None)
        dangling = os.path.islink(p)  # (a link to nothing was "does not exist": QA round 145-K F1)
        raise VaultNotFound(f"Vault path {p}{source} is a symlink loop (a link that leads back to itself)"
                            if symlink_loop(p) else f"Vault path {p}{source} {path_problem(p, folder=True)}"
                            if too_many_links(p) or dangling else f"Vault path does not exist: {p}{source}",
                            hint=f"A folder of that name exists with its accented letters in the other Unicode form"
                                 f" (decomposed or composed, as macOS and Linux write them): {fix} to {other}, as it is"
                                 " on disk (copy it from ls), or rename it." if other is not None else
                            f"{fix} to a _dream_context folder (or a folder containing one).")
    # (QA round 68 L5: a note's path got no word of the vault it is in, as a subfolder's does; 148-C F6: nor a link
    # to one, told to start a vault inside the vault's knowledge/: the folders it leads into are looked at too)
    inside = next((a for a in p.absolute().parents if a.name == VAULT_DIR_NAME), None)
    linked = inside is None and next((a for a in p.resolve().parents if a.name == VAULT_DIR_NAME), None)
    in_vault = (f"It is inside the vault {inside}: point {point} there." if inside is not None else
                f"It leads into the vault {linked}: point {point} there." if linked else None)
    if not p.is_dir():
        raise VaultNotFound(f"Vault path is not a folder: {p}{source}",
                            hint=in_vault or f"{fix} to a _dream_context folder.")
    # (a symlink to one is one; so is one typed in another case where names are case-insensitive: QA round 145-C F4,
    # _DREAM_CONTEXT was "not a vault … rename it _dream_context", as it was)
    if _vault_named(p) is None and _vault_named(p.resolve()) is None:
        inner = p / VAULT_DIR_NAME
        if not inner.is_dir():
            near = _named_almost(p) or _near_misses(p)
            # (a link to nothing there was "create it", which failed: File exists, QA round 145-K F1)
            problem = path_problem(inner, folder=True) if os.path.lexists(inner) else None
            start = (f" {near[0]} is named almost so: rename it {VAULT_DIR_NAME}" if near and problem is None else
                     f" to start a vault, create {inner}" if problem is None else
                     f" {inner} is a file, not a folder: move it aside to start a vault there"
                     if problem == "is not a folder" else f" {inner} {problem}: fix it, or move it aside to start a"
                     " vault there")
            raise VaultNotFound(
                f"{p} is not a vault: it is not named {VAULT_DIR_NAME} and has no {VAULT_DIR_NAME}/ folder.",
                hint=in_vault or f"Point {point} at the {VAULT_DIR_NAME} folder or the project that contains it;"
                f"{start}.",
            )
        p = p / VAULT_DIR_NAME
    real = p.resolve()
    return _not_above_itself(p, _vault_named(real) or real)


def _vault_named(folder: Path) -> Path | None:
    """``folder`` named as on disk, when that name is ``_dream_context``: as it is when so named, or with its last name
    as its parent lists it when typed in another case or Unicode form on a file system that takes it for that folder
    (:func:`name_on_disk`: macOS, Windows, vfat; ``_DREAM_CONTEXT`` of ``_dream_context``); else ``None`` (a folder
    named ``_Dream_Context`` on disk is no vault). The parent is listed only for a name that differs from
    ``_dream_context`` by case or form alone."""
    if folder.name == VAULT_DIR_NAME:
        return folder
    if not spelled_alike(folder.name, (VAULT_DIR_NAME,), fold_case=True):
        return None
    parent = Path(os.path.abspath(folder)).parent
    return parent / VAULT_DIR_NAME if name_on_disk(parent, folder.name) == VAULT_DIR_NAME else None


def _not_above_itself(named: Path, vault: Path) -> Path:
    """``vault``, the real folder of the ``_dream_context`` path ``named``, unless it holds ``named`` itself: a
    ``_dream_context`` link to ``/``, to the home folder or to the project above it makes a "vault" of every file below
    that folder, walked on every command, with the index written into it (QA round 114-B F5: a link to ``/`` put
    ``/.dreamdb/index.db`` at the filesystem root and took 2 s a recall).

    Raises:
        VaultNotFound: it does.
    """
    folder = Path(os.path.abspath(named)).parent
    try:
        holds = folder.resolve() == vault or vault in folder.resolve().parents
    except OSError:
        return vault
    if holds:
        raise VaultNotFound(
            f"The vault {named} leads to {vault}, a folder that holds {named} itself: dreamdb would read (and keep "
            "its index in) every folder below it.",
            hint=f"Point {named} at the vault's own folder{_vault_option(', or pass --vault PATH to it')}.")
    return vault


_MERGETOOL_COPY = re.compile(r"_(?:BASE|LOCAL|REMOTE|BACKUP)_\d+\.md$")
"""The name of a copy ``git mergetool`` writes beside a file in conflict while the tool is open (``note_BASE_1234.md``,
``_LOCAL_``, ``_REMOTE_``, ``_BACKUP_``; :func:`mergetool_copy`)."""


def mergetool_copy(path: str) -> bool:
    """Whether the file at ``path`` is a copy ``git mergetool`` made of the note beside it (:data:`_MERGETOOL_COPY`,
    with that note there: ``note.md`` beside ``note_BASE_1234.md``): no note, skipped by a sync (QA round 109-B F1:
    three of them ranked above the note itself). A note merely named so, with no such note beside it, is one (QA
    round 110-A F4: ``postgres_BACKUP_2024.md`` was dropped without a word)."""
    m = _MERGETOOL_COPY.search(path)
    return m is not None and os.path.lexists(path[:m.start()] + ".md")


LINKS_FOLLOWED_MAX = 64
"""Symbolic links :func:`link_folders` follows on one path at most: past the 40 Linux follows, so a chain the system
gives up on (or a loop, which never ends) has its links' folders recorded all the same."""


def link_folders(path: str) -> list[str]:
    """The real paths of the folders holding each symbolic link met on the way to ``path``, in the order met, each once:
    the link itself, each link it leads to (``knowledge/chain.md -> ../misc/hop.md -> ../docs/q.md``: ``knowledge`` and
    ``misc``) and each folder link on the way (``a/b -> c``: ``a``). Retargeting one of them changes the time of the
    folder that holds it, and only that one's; the file the path leads to can stay the same file (a hard link of it in
    ``.trash``: QA round 147-A F2). Followed as the system does, component by component, past a missing file (up to
    where it would be) and no further than :data:`LINKS_FOLLOWED_MAX` links (a loop)."""
    held: list[str] = []
    here = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    rest = [os.path.basename(path)]
    followed = 0
    while rest:
        name = rest.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            here = os.path.dirname(here)
            continue
        step = os.path.join(here, name)
        if not os.path.islink(step):
            here = step
            continue
        followed += 1
        if followed > LINKS_FOLLOWED_MAX:
            break
        try:
            to = os.readlink(step)
        except OSError:
            break
        if here not in held:
            held.append(here)
        if to.startswith(os.sep):
            here = os.sep
        rest[:0] = to.split(os.sep)
    return held


def link_target_no_note(vault_real: str, target_real: str, *, include_archives: bool = False) -> str | None:
    """Why the file a symbolic link in the vault leads to is no note dreamdb reads or edits as one, else ``None``.

    A link is read as the file it leads to, so it gets that file's treatment (QA round 146-C F1: a note linked to
    ``core/CHANGELOG.json``, the memory file, an archived note, a ``git mergetool`` copy, a file in ``.trash`` or a
    nested vault's note was indexed, and ``update`` through it rewrote that file; QA round 152-H F4: ``synonyms.txt``,
    the vault's synonym groups, too). One rule for the sync, which skips
    such a link with this reason (:func:`walk_sources`), and for ``update`` and ``delete``, which refuse it; writes pass
    no ``include_archives``: an archived note is never edited. A file outside the document folders (``people/x.md``)
    is a note when linked; the vault's own notes, indexed as themselves, are left to the caller.

    Args:
        vault_real: the vault's real path (``os.path.realpath``).
        target_real: the real path the link leads to, inside the vault.

    Returns:
        The reason, after ``a link to <vault-relative path>,`` (``the changelog, whose entries dreamdb reads and only
        appends to, not a note``).
    """
    rel = os.path.relpath(target_real, vault_real).replace(os.sep, "/")
    folders, name = rel.split("/")[:-1], rel.rsplit("/", 1)[-1]
    if rel == CHANGELOG_FILE:
        return "the changelog, whose entries dreamdb reads and only appends to, not a note"
    if rel == MEMORY_FILE:
        return "the memory file, whose sections dreamdb reads and never edits, not a note"
    if rel == SYNONYMS_FILE:  # (QA round 152-H F4: update wrote a frontmatter block into it, --content emptied it)
        return "the vault's synonym groups, which dreamdb reads as its configuration, not a note"
    if folders[:1] == [INDEX_DIR_NAME]:
        return f"in dreamdb's own folder {INDEX_DIR_NAME}/, not a note"
    if VAULT_DIR_NAME in folders:
        return "a note of a vault of its own inside this one, searched with its own --vault"
    never = next((f for f in folders if f.lower() in NEVER_ARCHIVES or f.lower().startswith(".trash-")), None)
    if never is not None:
        return f"in {never}, a trash, version or sync folder dreamdb never reads"
    if in_archive(rel) and not include_archives:
        return "an archived note, read only with DREAMDB_INCLUDE_ARCHIVES and never edited"
    if name.startswith("."):
        return "a hidden file, which dreamdb never reads"
    if mergetool_copy(target_real):
        return "a copy git mergetool makes of a note while a merge runs, not a note"
    return None


def classify(rel_path: str) -> tuple[str, str | None] | None:
    """Map a vault-relative POSIX path to ``(kind, type)``, or ``None`` if not indexed."""
    if rel_path == MEMORY_FILE:
        return ("memory", "memory")
    if rel_path == CHANGELOG_FILE:
        return ("changelog", "changelog")
    if not rel_path.endswith(".md") or rel_path.rsplit("/", 1)[-1].startswith("."):
        return None  # hidden files (".md", editor and macOS "._x.md" leftovers) are no notes: writes skip them too
    if f"/{VAULT_DIR_NAME}/" in f"/{rel_path}":  # a vault of its own inside this one: not its notes, for the walk
        return None  # and for writes alike (QA round 101-A F1: update and delete edited the inner vault's files)
    for root, recursive, typ in _MD_ROOTS:
        prefix = root + "/"
        if rel_path.startswith(prefix):
            rest = rel_path[len(prefix):]
            if not recursive and "/" in rest:
                return None
            return ("markdown", typ)
    return None


_MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdown", ".mkdn", ".mkd")
"""File name endings of markdown (any case) that dreamdb does not read but for ``.md`` itself."""


def misnamed_note(name: str) -> str | None:
    """The name a markdown file would need to be read as a note, where its extension is ``.md`` in another case
    (``NOTE.MD`` → ``NOTE.md``) or another markdown extension (``x.markdown``, ``x.mkd`` → ``x.md``); ``None`` for a
    ``.md`` name, a hidden one or any other file. dreamdb reads ``.md`` only (SPEC §1; its ids and writes are built
    on that name), so such a file is said rather than skipped silently (QA rounds 65 L5, ``knowledge/UPPER.MD``
    neither indexed nor counted by ``status``; 90-C F7, ``.markdown``)."""
    if name.startswith(".") or name.endswith(".md"):
        return None
    lower = name.lower()
    for ext in _MARKDOWN_EXTENSIONS:
        if lower.endswith(ext) and len(name) > len(ext):
            return name[:-len(ext)] + ".md"
    return None


def is_utf8(text: str) -> bool:
    """Whether a text (a file name from the OS, an argument) is valid UTF-8: undecodable bytes come back as
    surrogates, which no UTF-8 file or SQLite text can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def spelled_alike(typed: str, names, *, fold_case: bool) -> list[str]:
    """The names of ``names`` (a folder's listing, any iterable of text) that are ``typed`` spelled otherwise, in their
    order: equal to it once both are NFC-normalised (``café`` composed and ``cafe`` + U+0301), and, if ``fold_case``,
    case-folded too (``Design.md`` and ``design.md``: Unicode caseless matching, as case-insensitive file systems
    compare names). Nothing is read; names that are not valid UTF-8 (:func:`is_utf8`) never match."""
    import unicodedata

    def key(name: str) -> str:
        if fold_case:
            return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())
        return unicodedata.normalize("NFC", name)

    want = key(typed)
    return [n for n in names if is_utf8(n) and key(n) == want]


def name_on_disk(folder: Path, typed: str, names=None) -> str | None:
    """The name under which ``folder`` lists the entry that the name ``typed`` reaches, or ``None`` when it reaches
    none; ``names``: the folder's listing (default: ``os.listdir(folder)``).

    * ``typed`` listed: ``typed`` (on a case-sensitive file system, the only way a name reaches an entry).
    * ``typed`` reaches an entry but is not listed: a case- or normalisation-insensitive file system (macOS APFS,
      Windows and WSL drives, vfat, ext4 casefold) took it for an entry spelled otherwise; that entry's own name, the
      one of :func:`spelled_alike` (case folded) that is the same file (``os.path.samefile``), so that ids, output and
      writes use the name on disk (QA round 145-C F3: ``update knowledge/Design.md`` of ``design.md`` wrote the id
      ``knowledge/Design``, and a write renamed the file); ``typed`` itself when none is, or the folder cannot be
      listed.
    * ``typed`` reaches nothing: the one entry spelled as it is but for Unicode normalisation (NFC/NFD: a name typed
      composed reaches a file saved decomposed, as macOS writes names, and back); ``None`` if none or two are (both
      spellings side by side: neither is meant more than the other).
    """
    exact = folder / typed
    there = os.path.lexists(exact)
    if names is None:
        try:
            names = os.listdir(folder)
        except OSError:
            return typed if there else None
    if typed in names:
        return typed
    if there:
        for name in spelled_alike(typed, names, fold_case=True):
            try:
                if os.path.samefile(folder / name, exact):
                    return name
            except OSError:  # (a link to nothing: the same entry if it is the same link)
                with contextlib.suppress(OSError):
                    if os.path.samestat(os.lstat(folder / name), os.lstat(exact)):
                        return name
        return typed
    alike = spelled_alike(typed, names, fold_case=False)
    return alike[0] if len(alike) == 1 else None


def escapes_only(text: str) -> bool:
    """Whether every surrogate in ``text`` is one that ``surrogateescape`` makes of an undecodable byte (U+DC80–U+DCFF:
    the command line's and the OS's file names), which ``os.fsencode`` turns back into that byte; a lone surrogate
    made in Python (U+D800) is not, and every ``os`` function raises on it."""
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)


ACCENT_ENCODINGS = ("names that differ only in how their accents are encoded, as one character or as a letter and a"
                    " combining mark: Unicode NFC and NFD")
"""Why two file names that print alike are two names (:func:`accent_twins`), as ``update`` and ``sync`` say it."""


def accent_twins(name: str, other: str) -> bool:
    """Whether two names are different strings that are equal in NFC (``café`` written with ``é`` and with ``e`` and
    U+0301): printed, they look like one name (QA round 103-C F8)."""
    import unicodedata

    return name != other and unicodedata.normalize("NFC", name) == unicodedata.normalize("NFC", other)


def accent_form(name: str) -> str:
    """Which Unicode normal form a name is in, for telling :func:`accent_twins` apart: ``"NFC"`` (accents as one
    character, as Linux and Windows keyboards write them), ``"NFD"`` (a letter and a combining mark, as macOS
    file systems wrote names), or ``"mixed NFC and NFD"``."""
    import unicodedata

    if unicodedata.is_normalized("NFC", name):
        return "NFC"
    return "NFD" if unicodedata.is_normalized("NFD", name) else "mixed NFC and NFD"


def _stand_in(char: str) -> bool:
    """Whether Unicode takes ``char`` for another character, which NFC and NFD write in its place: a canonical
    singleton (U+212A KELVIN SIGN for ``K``, U+2126 OHM SIGN for ``Ω``, U+212B ANGSTROM SIGN for ``Å``, a CJK
    compatibility ideograph), no letter with an accent."""
    import unicodedata

    decomposition = unicodedata.decomposition(char)
    return bool(decomposition) and not decomposition.startswith("<") and " " not in decomposition


def _char_named(text: str) -> str:
    """Characters as a message names them, by code point and name (``U+212A KELVIN SIGN``): they print alike."""
    import unicodedata

    return " ".join(f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() for c in text)


def _twin_parts(name: str, other: str) -> tuple[list[str], list[str], bool]:
    """How two :func:`accent_twins` differ: the characters of ``name``, then of ``other``, that Unicode takes for
    another (:func:`_stand_in`), and whether, those made the others, the two still differ in how their accents are
    encoded (NFC, NFD)."""
    import unicodedata

    def plain(text: str) -> str:
        return "".join(unicodedata.normalize("NFC", c) if _stand_in(c) else c for c in text)

    def stand_ins(text: str) -> list[str]:
        return list(dict.fromkeys(c for c in text if _stand_in(c)))

    return stand_ins(name), stand_ins(other), plain(name) != plain(other)


def _twin_form(name: str, other: str) -> str:
    """How ``name`` is written beside its twin ``other`` (:func:`accent_twins`), after "is": ``NFD`` (its accents as a
    letter and a combining mark), ``written with U+212A KELVIN SIGN`` (a character Unicode takes for another), or the
    character the other one's stands for (``written with U+004B LATIN CAPITAL LETTER K``), and its form too when the
    accents differ as well."""
    import unicodedata

    mine, theirs, accents = _twin_parts(name, other)
    if not mine and not theirs:
        return accent_form(name)
    chars = mine or list(dict.fromkeys(unicodedata.normalize("NFC", c) for c in theirs))
    return f"written with {', '.join(map(_char_named, chars))}" + (f", in {accent_form(name)}" if accents else "")


def twins_kind(*names: str) -> str:
    """What two or more :func:`accent_twins` differ in, after "the two names": ``differ only in how their accents are
    encoded``, or, when one holds a character Unicode takes for another (U+212A KELVIN SIGN for ``K``: no accent, QA
    round 148-C F4), ``differ only in a character Unicode takes for another, which prints alike`` (and in their
    accents' encoding too, when they do)."""
    parts = [_twin_parts(name, other) for name in names for other in names if accent_twins(name, other)]
    stand_ins = any(mine or theirs for mine, theirs, _ in parts)
    accents = any(accents for *_, accents in parts)
    if not stand_ins:
        return "differ only in how their accents are encoded"
    return ("differ only in a character Unicode takes for another, which prints alike"
            + (", and in how their accents are encoded" if accents else ""))


def twins_reason(*names: str) -> str:
    """Why two or more names that print alike (:func:`accent_twins`) are two names, as ``update`` and ``sync`` say it:
    :data:`ACCENT_ENCODINGS`, or, for names holding a character Unicode takes for another, that and which characters
    (``U+212A KELVIN SIGN, which Unicode NFC makes U+004B LATIN CAPITAL LETTER K``: QA round 148-C F4, the Kelvin
    sign was said to be an accent encoded otherwise)."""
    import unicodedata

    chars = list(dict.fromkeys(c for name in names for c in name if _stand_in(c)
                               and any(accent_twins(name, other) for other in names)))
    if not chars:
        return ACCENT_ENCODINGS
    said = "; ".join(f"{_char_named(c)}, which Unicode NFC makes {_char_named(unicodedata.normalize('NFC', c))}"
                     for c in chars)
    return f"names that {twins_kind(*names)}: {said}" + (
        " (accents: as one character or as a letter and a combining mark, Unicode NFC and NFD)"
        if "accents" in twins_kind(*names) else "")


def twin_difference(name: str, other: str) -> str:
    """Which of two :func:`accent_twins` is which and why they are two, for a sync's warning about the file ``name``
    beside ``other``: ``this file's name is NFD, that one's NFC: <twins_reason>``, or ``this file's name is written
    with U+212A KELVIN SIGN, that one's written with U+004B LATIN CAPITAL LETTER K: <twins_reason>``."""
    return f"this file's name is {_twin_form(name, other)}, that one's {_twin_form(other, name)}: " \
           f"{twins_reason(name, other)}"


def twin_clause(that: str, this: str) -> str:
    """:func:`twin_difference` for a write's refusal naming the file ``that`` then ``this``: ``the two names differ
    only in how their accents are encoded: that one in NFD, this one in NFC``, or ``the two names differ only in a
    character Unicode takes for another, which prints alike: that one written with U+212A KELVIN SIGN, this one
    written with U+004B LATIN CAPITAL LETTER K``."""
    def form(name: str, other: str) -> str:
        said = _twin_form(name, other)
        return said if said.startswith("written") else f"in {said}"

    return f"the two names {twins_kind(that, this)}: that one {form(that, this)}, this one {form(this, that)}"


def python_reads_names_as() -> str | None:
    """The encoding this Python decodes file names and command-line arguments with, when it is not UTF-8 (the C or
    POSIX locale with ``PYTHONUTF8=0``: ``ascii``), else ``None``. Under it every non-ASCII name arrives as
    surrogates, as undecodable bytes do (QA round 93-A F6: a vault named ``vü`` was said not to be UTF-8)."""
    import codecs
    import sys

    encoding = sys.getfilesystemencoding()
    return None if codecs.lookup(encoding).name == "utf-8" else encoding


def not_utf8_because(text: str) -> tuple[str, str] | None:
    """For a text that :func:`is_utf8` refuses but that is UTF-8 read by a Python whose file names are not
    (:func:`python_reads_names_as`): (what went wrong, how to fix it), in words; else ``None``."""
    encoding = python_reads_names_as()
    if encoding is None:
        return None
    try:
        os.fsencode(text).decode("utf-8")
    except (UnicodeError, ValueError):
        return None
    return (f"this Python reads file names and arguments as {encoding}, not UTF-8 (a C or POSIX locale with "
            "PYTHONUTF8=0)", "Set PYTHONUTF8=1, or a UTF-8 locale (e.g. LC_ALL=C.UTF-8), and run the command again.")


RETYPE_HINT = "Retype it in UTF-8 (check the terminal's encoding: locale should name UTF-8)."


def require_utf8(text: str, subject: str, *, shown: str | None = None, after: str = "",
                 hint: str = RETYPE_HINT) -> None:
    """Refuse a text (a query, a filter, a slug) that is not valid UTF-8, saying why and how to fix it.

    Args:
        text: the text as Python received it (undecodable bytes as surrogates).
        subject: what it is, as the message's subject (``"The query"``).
        shown: ``subject`` when the text is UTF-8 read by an ASCII Python, to show the text as meant.
        after: words after the reason (``"; nothing was changed"``).
        hint: the fix for bytes that are no UTF-8 at all.

    Raises:
        UsageError: the text is not valid UTF-8; when it is UTF-8 that this Python read as another encoding
            (:func:`not_utf8_because`), the message names that and the fix (``PYTHONUTF8=1``).
    """
    if is_utf8(text):
        return
    from dreamdb.errors import UsageError

    if why := not_utf8_because(text):
        raise UsageError(f"{shown or subject} cannot be read: {why[0]}{after}.", hint=why[1])
    raise UsageError(f"{subject} is not valid UTF-8 (it holds bytes that are not text){after}.", hint=hint)


UNSCANNED = (-1, -1)
"""The times :func:`walk_sources` gives a folder it could not list, or one holding what it could not read: no
folder's modification time (nanoseconds since 1970) is -1, so the no-change check never matches it."""

MAX_NS = 2**63 - 1
"""The largest time SQLite's INTEGER holds, in ns since 1970 (2262-04-11): a file dated later is stored as it
(QA round 93-A F2: one file dated 2300 made every sync fail, OverflowError)."""


def stamp(ns: int) -> int:
    """A file time ``ns`` (ns since 1970) as stored and compared: clamped to SQLite's INTEGER range."""
    return ns if -MAX_NS <= ns <= MAX_NS else (MAX_NS if ns > 0 else -MAX_NS)


def folder_times(st: os.stat_result) -> tuple[int, int]:
    """``(mtime_ns, ctime_ns)`` of a folder's stat, as stored (:func:`stamp`)."""
    return stamp(st.st_mtime_ns), stamp(st.st_ctime_ns)


def walk_sources(vault: Path, *, include_archives: bool = False, warn=None, dirs: dict | None = None) -> list[SourceFile]:
    """List every indexable file of the vault with its stat (no file is read).

    Folders whose names start with ``.`` are archives, skipped unless
    ``include_archives``. Symlinked folders are not followed (no loops; a
    warning names each, ``core`` itself included); symlinked files are followed
    only when they resolve inside the vault, and not when the file they point to is indexed
    as itself (one note, one document).
    Unreadable entries are skipped with a warning through ``warn(msg)``.
    When ``dirs`` is a dict, it receives ``{rel_dir: (mtime_ns, ctime_ns)}`` of the vault
    root, the folders above each source root and every folder walked; :data:`UNSCANNED` for a folder that could
    not be listed, or that holds a file whose stat failed (``core/`` unreadable): its time does not change when
    it becomes readable again, so the sync's no-change check (which compares these times) never passes while
    one is there, and the next walk finds what came back (QA round 63 H1). For a link to a note that does not
    exist, the nearest folder of the vault above where that note would be is recorded too (``people/``, which
    dreamdb does not walk): the note's coming back changes that folder's time (QA round 63 H2); for one to a file
    that exists, the folders of the vault that hold that file (``people/sub``, ``people``: one hidden behind a link
    changes their times, QA round 146-I F6).

    Returns:
        list[SourceFile], sorted by path.
    """
    out: list[SourceFile] = []
    links: dict[str, str] = {}  # rel path of a file symlink → the real path it points to
    vault = str(vault)
    vault_real = os.path.realpath(vault)

    def note(msg: str) -> None:
        if warn:
            warn(msg)

    def unscanned(rel_dir: str) -> None:
        if dirs is not None:
            dirs[rel_dir] = UNSCANNED

    def watch_missing(link_path: str) -> None:
        """Record the time of the nearest existing folder of the vault above the note a link names (see above)."""
        if dirs is None:
            return
        folder = os.path.dirname(os.path.realpath(link_path))
        while folder.startswith(vault_real + os.sep) and not os.path.isdir(folder):
            folder = os.path.dirname(folder)
        if folder != vault_real and not folder.startswith(vault_real + os.sep):
            return  # (a link out of the vault is never indexed)
        rel_dir = os.path.relpath(folder, vault_real).replace(os.sep, "/")
        try:
            dirs.setdefault(rel_dir, folder_times(os.stat(folder)))
        except OSError:
            unscanned(rel_dir)

    def watch_folders(folder: str) -> None:
        """Record the times of ``folder`` (a real path) and of the folders above it, up to the vault."""
        while folder.startswith(vault_real + os.sep):
            rel_dir = os.path.relpath(folder, vault_real).replace(os.sep, "/")
            if rel_dir in dirs:
                break  # (it and the folders above it are recorded)
            try:
                dirs[rel_dir] = folder_times(os.stat(folder))
            except OSError:
                unscanned(rel_dir)
            folder = os.path.dirname(folder)

    def watch_target(link_path: str, target_real: str | None = None) -> None:
        """Record the times of the folders of the vault that hold the file a link leads to, up to the vault: one
        renamed, made a link or hidden (``people/sub`` moved to ``people/.sub``) changes one of them, so the
        no-change check walks the vault again and reads the link anew (QA round 146-I F6: it stayed indexed, and
        recall returned it, until a check or rebuild). And those that hold each link on the way (:func:`link_folders`:
        ``misc/`` of ``knowledge/chain.md -> ../misc/hop.md -> ../docs/q.md``): one retargeted changes only its own
        folder's time (QA round 147-A F2: ``misc/hop.md`` led to a hard link of ``q.md`` in ``.trash`` instead, the
        same file, and the note stayed indexed until a check)."""
        if dirs is None:
            return
        for folder in link_folders(link_path):
            watch_folders(folder)
        if target_real is not None:
            watch_folders(os.path.dirname(target_real))

    def add(rel: str, entry_path: str, is_link: bool) -> None:
        cls = classify(rel)
        if cls is None:
            return
        if mergetool_copy(entry_path):  # (said: a note of the user's so named is seen to be skipped, QA round 111-A F6)
            note(f"{rel}: skipped (a copy git mergetool makes of {rel[:_MERGETOOL_COPY.search(rel).start()]}.md"
                 " while a merge runs)")
            return
        try:
            st = os.stat(entry_path)  # follows a file symlink
        except OSError as exc:
            if is_link and exc.errno in (errno.ENOENT, errno.ELOOP):  # (QA round 39: "No such file or directory")
                what = "leads in a loop" if exc.errno == errno.ELOOP else "does not exist"
                note(f"{rel}: skipped (a link to {os.readlink(entry_path)}, which {what})")
                if exc.errno == errno.ENOENT:
                    watch_missing(entry_path)
                watch_target(entry_path)  # (a link on the way retargeted, or a loop mended: its folder's time)
            else:
                note(f"{rel}: skipped ({exc.strerror or exc})")
                unscanned(os.path.dirname(rel))  # (a folder made searchable again keeps its time)
            return
        if is_link and not os.path.realpath(entry_path).startswith(vault_real + os.sep):
            note(f"{rel}: skipped (symlink points outside the vault)")
            watch_target(entry_path)  # (a link on the way retargeted into the vault: its folder's time)
            return
        if is_link:
            watch_target(entry_path, os.path.realpath(entry_path))
        if is_link and _stat.S_ISREG(st.st_mode) and rel not in (MEMORY_FILE, CHANGELOG_FILE):
            # (the vault's own memory file and changelog, linked to a file elsewhere in the vault, are read as
            # themselves: the rule is a note's; QA round 146-I F1, core/CHANGELOG.json -> .shared/… dropped)
            target = os.path.realpath(entry_path)
            why = link_target_no_note(vault_real, target, include_archives=include_archives)
            if why is not None:  # (the file it leads to is no note: nor is the link; QA round 146-C F1)
                note(f"{rel}: skipped (a link to {os.path.relpath(target, vault_real).replace(os.sep, '/')}, {why})")
                return
        if is_link and _stat.S_ISREG(st.st_mode):
            links[rel] = os.path.realpath(entry_path)
        if _stat.S_ISREG(st.st_mode):
            out.append(SourceFile(rel, cls[0], cls[1] if cls[0] == "markdown" else None, stamp(st.st_mtime_ns),
                                  st.st_size, stamp(st.st_ctime_ns)))
        elif not _stat.S_ISDIR(st.st_mode):  # reading a pipe would wait forever
            note(f"{rel}: skipped (not a regular file: a pipe, device or socket)")
        elif rel in (MEMORY_FILE, CHANGELOG_FILE):  # (QA round 103-C F10: said nothing)
            note(f"{rel}: skipped (a folder, not a file)")
        elif is_link:  # a folder link named as a note (knowledge/ppl.md -> ../people), said as any other (QA round
            note(f"{rel}: {FOLDER_LINK_SKIPPED}")  # 144-E F2: dropped without a word, even by sync --force)

    def scan(top: str, recursive: bool) -> None:
        # (depth first, each folder in name order, with a stack of its own: recursion failed past
        # ~990 nested folders, every command exiting 70; QA round 80-A F3)
        stack: list[tuple[str, Iterator, list]] = []

        def enter(rel_dir: str) -> None:
            full = os.path.join(vault, rel_dir)
            try:
                if dirs is not None:
                    dirs[rel_dir] = folder_times(os.stat(full))
                entries = sorted(os.scandir(full), key=lambda e: e.name)  # (its warnings in name order)
            except OSError as exc:
                note(f"{rel_dir}: skipped ({exc.strerror or exc})")
                unscanned(rel_dir)  # (made readable again, its time is the same: QA round 63 H1)
                return
            stack.append((rel_dir, iter(entries), entries))

        enter(top)
        while stack:
            rel_dir, entries, listing = stack[-1]
            e = next(entries, None)
            if e is None:
                stack.pop()
                continue
            rel = f"{rel_dir}/{e.name}"
            if not is_utf8(e.name):  # undecodable bytes (surrogate escapes): SQLite stores UTF-8 only
                try:
                    named_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    named_dir = False
                if named_dir or e.name.lower().endswith(".md"):  # (.MD too: QA round 79 F9)
                    shown = os.fsencode(rel).decode("utf-8", "replace")
                    why = not_utf8_because(e.name)
                    note(f"{shown}: skipped, as {why[0]}: {why[1][0].lower()}{why[1][1:]}" if why is not None else
                         f"{shown}: skipped (the name is not valid UTF-8; rename it, e.g. with convmv)")
                    if why is not None:  # (the next sync, by a Python that reads it, lists the folder again: QA round
                        unscanned(rel_dir)  # 98-A F5, the note stayed unindexed until sync --check)
                continue
            try:
                is_link = e.is_symlink()
                is_dir = not is_link and e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if e.name == VAULT_DIR_NAME and recursive:  # (QA round 100-A F3: its notes read as this vault's,
                    # taking the ids of this vault's own notes of the same names, and found twice beside it)
                    note(f"{rel}{NESTED_VAULT_SKIPPED}")
                elif recursive and _walked(e.name, include_archives):
                    enter(rel)
            elif e.name.endswith(".md"):
                add(rel, e.path, is_link)
            elif ((fixed := misnamed_note(e.name)) and classify(f"{rel_dir}/{fixed}") is not None
                  and not (is_link and os.path.isdir(e.path))):  # (a folder link so named is one: QA round 144-J F8)
                ext = e.name[len(fixed) - 3:]
                namesakes.listed(rel_dir, listing)  # (its folder listed once for all: QA round 149-F F1)
                note(f"{rel}: skipped (the extension {ext} is not .md{' in lower case' if ext.lower() == '.md' else ''},"
                     f" the only one dreamdb reads; {rename_advice(vault, rel, namesakes)})")
            elif is_link and recursive and _walked(e.name, include_archives) and os.path.isdir(e.path):
                note(f"{rel}: {FOLDER_LINK_SKIPPED}")

    if dirs is not None:
        for rel_dir in (".", "core", "lab", "knowledge"):
            try:
                dirs[rel_dir] = folder_times(os.stat(os.path.join(vault, rel_dir)))
            except OSError:
                pass
    blocked: set[str] = set()  # folders found but not searchable, warned of once (QA round 64 L4)

    def reachable(rel: str) -> bool:
        """Whether ``rel`` can be looked at: it exists (False, quietly, when it does not), and no folder on the way
        is one this process may not search (False, with one warning for that folder, which is marked unscanned:
        ``core`` made unreadable dropped every CHANGELOG entry without a word, QA round 63 H1)."""
        parts = rel.split("/")
        for n in range(1, len(parts) + 1):
            here = "/".join(parts[:n])
            if here in blocked:
                return False
            try:
                os.stat(os.path.join(vault, here))
            except (FileNotFoundError, NotADirectoryError):
                return False
            except OSError as exc:
                where = "/".join(parts[:n - 1]) or "."  # (the folder that could not be searched)
                if where not in blocked:
                    blocked.add(where)
                    note(f"{where}: skipped ({exc.strerror or exc})")
                    unscanned(where)
                return False
        return True

    said_links: set[str] = set()
    namesakes = Namesakes(vault)  # (the skipped notes' folders, listed once a walk)

    def linked(rel: str) -> bool:
        """Whether a folder on the way to ``rel`` (``rel`` included) is a symlink (:func:`folder_link`), so not
        followed; one that leads to a folder is named by one warning, ``core`` for the memory file, the changelog and
        ``core/objectives`` alike (QA round 144-E F3: a linked ``core`` was followed for the memory file, and
        ``core/objectives`` was named), whether or not anything dreamdb reads is behind it (QA round 147-B F4: a
        linked ``core`` was named only once its folder held ``CHANGELOG.json`` or ``objectives/``, where a link
        inside a walked folder always is). A link to a file or to nothing is no folder: not named."""
        link = folder_link(vault, rel)
        if link is not None and link not in said_links and os.path.isdir(os.path.join(vault, link)):
            said_links.add(link)
            note(f"{link}: {FOLDER_LINK_SKIPPED}")
        return link is not None

    for fixed in (MEMORY_FILE, CHANGELOG_FILE):
        if not linked(os.path.dirname(fixed)) and reachable(fixed):
            add(fixed, os.path.join(vault, fixed), os.path.islink(os.path.join(vault, fixed)))
    for other in misnamed_changelog(vault):  # (its name in another case: said, QA round 90-C F7)
        note(f"{other}: skipped (dreamdb reads {CHANGELOG_FILE}, named so in this case; {rename_advice(vault, other)})")
    for root, recursive, _typ in _MD_ROOTS:
        if root == "knowledge/features":
            continue  # walked as part of knowledge/
        base = os.path.join(vault, root)
        if linked(root):
            continue
        if reachable(root) and os.path.isdir(base):
            scan(root, recursive)
        elif os.path.lexists(base) and not os.path.isdir(base) and not os.path.islink(base):
            note(f"{root}: skipped (a file, not a folder: dreamdb reads the notes in a folder of that name)")
    if links:  # a link to a note the vault indexes as itself is that note: indexed once (QA round 37)
        own = {os.path.join(vault_real, s.rel_path) for s in out if s.rel_path not in links}
        for rel, target in links.items():
            if target in own:
                note(f"{rel}: skipped (a link to {os.path.relpath(target, vault_real)}, indexed as itself)")
        out = [s for s in out if links.get(s.rel_path) not in own]
    out.sort(key=lambda s: s.rel_path)
    return out


INDEXED_FOLDERS = ("core/2.memory.md", "core/CHANGELOG.json", "knowledge/", "core/features/", "state/",
                   "core/objectives/", "lab/insights/", "theses/")
"""Where documents come from (:func:`classify`), as shown to people."""


def unindexed_markdown(vault: Path, *, include_archives: bool = False, limit: int = 5) -> tuple[int, list[str]]:
    """Markdown files of the vault that :func:`classify` does not index (wrong folder, too deep).

    A first vault of one's own often keeps notes where dreamdb does not look (``notes/x.md``,
    ``state/sub/t.md``); ``sync`` and ``status`` say so instead of indexing nothing silently.
    Archive folders (``.`` names) are left out unless ``include_archives``; the index folder and vaults of their
    own inside this one (``_dream_context`` folders) always; symlinked folders are not followed. ``knowledge/``,
    where every note is indexed at any depth, is not walked: the cost follows the rest of the vault, usually a few
    folders.

    Returns:
        ``(count, the first `limit` vault-relative paths in path order)``.
    """
    found: list[str] = []
    count = 0
    root = str(vault)
    for dirpath, dirnames, filenames in walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        # knowledge/: every note below is indexed, so it is pruned here, before os.walk lists it
        # (it holds most of a vault: listing it made an empty recall's note cost ~1 ms per 1,000 notes)
        # (a vault of its own inside this one is not walked: a sync says it skips it; QA round 101-A F12)
        dirnames[:] = sorted(d for d in dirnames if d != INDEX_DIR_NAME and _walked(d, include_archives)
                             and not (rel_dir == "." and d == "knowledge") and d != VAULT_DIR_NAME)
        for name in sorted(filenames):
            if not (name.endswith(".md") or misnamed_note(name)) or name.startswith(".") or not is_utf8(name):
                continue
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            as_note = name if name.endswith(".md") else misnamed_note(name)
            if classify(as_note if rel_dir == "." else f"{rel_dir}/{as_note}") is None:  # (a NOTE.MD here too: its folder is the reason; cased_markdown)
                count += 1
                if len(found) < limit:
                    found.append(rel)
    return count, found


def misnamed_changelog(vault: Path | str) -> list[str]:
    """The vault-relative paths of files named as :data:`CHANGELOG_FILE` in another case (``core/changelog.json``)
    that are not that file (on a file system that ignores case, they are: it is read): a sync skips them and says
    so, ``status`` lists them (QA round 91 F7), also beside a ``CHANGELOG.json`` (94-A F2)."""
    folder, name = os.path.split(CHANGELOG_FILE)
    try:  # (its folder in another case too: Core/CHANGELOG.json, QA round 95 F4)
        folders = sorted(f for f in os.listdir(vault) if f.lower() == folder.lower())
    except OSError:
        return []
    near = []
    for f in folders:
        try:
            near += [f"{f}/{n}" for n in sorted(os.listdir(os.path.join(vault, f)))
                     if n.lower() == name.lower() and f"{f}/{n}" != CHANGELOG_FILE]
        except OSError:
            continue
    own = os.path.join(vault, CHANGELOG_FILE)
    found = []
    for rel in near:
        try:
            same = os.path.lexists(own) and os.path.samefile(own, os.path.join(vault, rel))
        except OSError:
            same = False
        if not same:
            found.append(rel)
    return found


def _rename_target(rel: str) -> str:
    """The vault-relative path a file skipped for its name (``rel``: :func:`misnamed_note`'s, or
    :func:`misnamed_changelog`'s) is read by once renamed."""
    folder, _, name = rel.rpartition("/")
    fixed = misnamed_note(name)
    return CHANGELOG_FILE if fixed is None else f"{folder}/{fixed}" if folder else fixed


def _other_name(vault: Path | str, rel: str) -> tuple[str, bool] | None:
    """Where ``rel``, a file a sync skips for its name, is another name of the file at the path a rename would give
    it (:func:`_rename_target`), which a sync reads already: ``(that path, True)`` where ``rel`` is a symbolic link
    to it (``y.MD`` → ``y.md``: renamed, the link would take that file's place, the note gone and ``y.md`` a link to
    itself; QA round 150-A F5, "rename it to y.md" was advised), ``(that path, False)`` where the two are hard links
    of one file (``mv`` refuses them: the same file); else ``None``, also where that path is a link to ``rel`` (a
    rename puts the file in the link's place) or both are one name (a file system that ignores case: a rename
    changes its case)."""
    target = _rename_target(rel)
    if not _same_file(vault, target, rel):
        return None
    full, target_full = os.path.join(vault, rel), os.path.join(vault, target)
    if os.path.islink(full):
        return target, True
    if os.path.islink(target_full):
        return None
    try:  # (two entries, or one a file system that ignores case finds by either name)
        listed = (os.path.basename(full) in os.listdir(os.path.dirname(full))
                  and os.path.basename(target_full) in os.listdir(os.path.dirname(target_full)))
    except OSError:
        return None
    return (target, False) if listed else None


def _rename_taken(vault: Path | str, rel: str) -> str | None:
    """The vault-relative path a file skipped for its name (a note's extension, :func:`misnamed_note`; a changelog
    named in another case, :func:`misnamed_changelog`) would be read by, when a file has that path already: renamed
    so, it would replace that file (QA round 144-E F4: the advice to rename ``knowledge/design.MD`` to ``design.md``,
    run as ``mv``, replaced the indexed note); else ``None``, also where that path is ``rel`` itself (a file system
    that ignores case)."""
    target = _rename_target(rel)
    full = os.path.join(vault, target)
    if not os.path.lexists(full) or _same_file(vault, target, rel):
        return None
    return target


def _rename_rivals(vault: Path | str, rel: str, namesakes: Namesakes | None = None) -> list[str]:
    """The other files a sync skips for their name that would take the name ``rel`` would be renamed to (its folder's
    ``design.MD`` and ``design.markdown``, both ``design.md``; every changelog named in another case, all
    :data:`CHANGELOG_FILE`): renamed one after the other, the second replaces the first (QA round 144-I F2: each was
    advised the free name). A folder, or a link to one, is no rival, and two names of one file (a link to it) are one
    (QA round 144-J F8: ``solo.markdown``, a link to ``solo.MD``, was to be merged with it). ``namesakes``: the
    folders listed so far (:class:`Namesakes`), for many files of one sync (default: this one's folder listed anew)."""
    folder, _, name = rel.rpartition("/")
    fixed = misnamed_note(name)
    namesakes = namesakes if namesakes is not None else Namesakes(vault)
    if fixed is None:
        others = [other for other in misnamed_changelog(vault) if other != rel]
    else:
        names = namesakes.taking(folder, fixed)
        if names is None:
            return []
        others = [f"{folder}/{n}" if folder else n for n in names if n != name]
    if not others:
        return []
    rivals: list[str] = []
    seen = {namesakes.identity(rel)} - {None}  # (as _rename_taken: a name of the same file is none)
    for other in others:
        file = namesakes.identity(other)
        if file is None or file not in seen:
            rivals.append(other)
            if file is not None:
                seen.add(file)
    return rivals


class Namesakes:
    """The files of a vault's folders that a sync skips for their extension (:func:`misnamed_note`), grouped by the
    name each would take, each folder listed once, and the files' identities, each stat'ed once: the advice for a
    folder of many ``.MD`` notes (:func:`rename_advice`) listed the whole folder again for each of them, a sync after
    any change quadratic in their number (QA round 149-F F1: 4,000 ``.MD`` notes, recall 22–29 s)."""

    def __init__(self, vault: Path | str):
        self.vault = vault
        self._folders: dict[str, dict[str, list[str]] | None] = {}
        self._files: dict[str, tuple[int, int] | None] = {}

    def listed(self, folder: str, entries) -> None:
        """Take ``entries`` (``os.DirEntry`` of the vault-relative ``folder``, as :func:`os.scandir` gives them) as
        its listing, where it has none yet: a walk that listed it already lists it no second time."""
        if folder not in self._folders:
            self._folders[folder] = self._group(entries)

    def taking(self, folder: str, fixed: str) -> list[str] | None:
        """The names in ``folder`` (vault-relative) of the files skipped for their extension that would take the name
        ``fixed`` (no folder, nor a link to one; valid UTF-8), in name order; ``None`` where it cannot be listed."""
        if folder not in self._folders:
            try:
                with os.scandir(os.path.join(self.vault, folder)) as entries:
                    self._folders[folder] = self._group(entries)
            except OSError:
                self._folders[folder] = None
        groups = self._folders[folder]
        return None if groups is None else groups.get(fixed, [])

    @staticmethod
    def _group(entries) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for e in entries:
            if (fixed := misnamed_note(e.name)) and is_utf8(e.name) and not _is_dir(e):
                groups.setdefault(fixed, []).append(e.name)
        for names in groups.values():
            names.sort()
        return groups

    def identity(self, rel: str) -> tuple[int, int] | None:
        """The file the vault-relative path ``rel`` names, links followed (``(device, inode)``, as
        :func:`os.path.samefile` compares them); ``None`` where it cannot be stat'ed (the same as no other file)."""
        if rel not in self._files:
            try:
                st = os.stat(os.path.join(self.vault, rel))
                self._files[rel] = (st.st_dev, st.st_ino)
            except OSError:
                self._files[rel] = None
        return self._files[rel]


def _is_dir(entry: os.DirEntry) -> bool:
    """Whether a folder entry is a folder or a link to one (which a sync skips as a folder link, not as a note)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _holds_folder(vault: Path | str, rel: str) -> bool:
    """Whether the vault-relative path ``rel`` is a folder or a link to one (a rename onto its name would move the
    file into it, not replace it)."""
    return os.path.isdir(os.path.join(vault, rel))


def _same_file(vault: Path | str, rel: str, other: str) -> bool:
    """Whether two vault-relative paths name one file (one a link to the other, or hard links)."""
    try:
        return os.path.samefile(os.path.join(vault, rel), os.path.join(vault, other))
    except OSError:
        return False


def rename_advice(vault: Path | str, rel: str, namesakes: Namesakes | None = None) -> str:
    """What to do with ``rel``, a file a sync skips for its name (:func:`_rename_taken`): "rename it to NAME.md" (a
    changelog: "rename it"), or, where that name is taken, to merge the two (a note: or to choose another name), or,
    where other skipped files would take it too (:func:`_rename_rivals`), to merge them (a note: or name them
    apart); where a folder holds that name, to choose another name or move the folder (a changelog: move it).
    ``namesakes``: the folders listed so far (:class:`Namesakes`), shared by the files of one sync. A link to the file
    that name holds, or a hard link of it (:func:`_other_name`), is to be removed, not renamed."""
    other = _other_name(vault, rel)
    if other is not None:
        target, link = other
        return (f"it is a link to {target}, which dreamdb reads: remove the link, which a rename would put in that"
                " file's place" if link else
                f"it is another name (a hard link) of {target}, which dreamdb reads: remove this name")
    taken = _rename_taken(vault, rel)
    fixed = misnamed_note(rel.rpartition("/")[2])
    if taken is not None and _holds_folder(vault, taken):  # (mv would move the file into it: QA round 145-A F4)
        return (f"a folder holds the name {taken}, into which a rename would move it: "
                + ("choose another name, or move that folder" if fixed else "move that folder away, then rename it"))
    if taken is not None:
        return (f"{taken} is there already, which a rename would replace: merge the two"
                + (", or choose another name" if fixed else ""))
    rivals = _rename_rivals(vault, rel, namesakes)
    if rivals:
        name = fixed or CHANGELOG_FILE
        return (f"{' and '.join(rivals)} would take {name} too, one rename replacing the other: merge"
                f" {'the two' if len(rivals) == 1 else 'them'} into one {name}{', or name them apart' if fixed else ''}")
    return f"rename it to {fixed}" if fixed else "rename it"


def renames_advice(vault: Path | str, paths: list[str], rename: str = "rename") -> str:
    """What to do with ``paths``, notes a sync skips for their extension (:func:`cased_markdown`'s): "rename to .md"
    (``rename``: the words before "to", "rename them"), naming the notes already there that such a rename would
    replace (:func:`_rename_taken`) or the folders that hold such a name (a rename would move the note into one),
    and the names two or more skipped notes would take (:func:`_rename_rivals`); the links to notes read already, and
    their other names (hard links), are to be removed (:func:`_other_name`)."""
    taken: dict[str, list[str]] = {}
    folders: dict[str, list[str]] = {}
    shared: dict[str, list[str]] = {}
    others: list[str] = []
    namesakes = Namesakes(vault)
    for rel in paths:
        if (other := _other_name(vault, rel)) is not None:
            others.append(f"{rel}, {'a link to' if other[1] else 'a hard link of'} {other[0]}")
        elif (target := _rename_taken(vault, rel)) is not None:
            (folders if _holds_folder(vault, target) else taken).setdefault(target, []).append(rel)
        elif (rivals := _rename_rivals(vault, rel, namesakes)):
            folder = rel.rpartition("/")[0]
            fixed = misnamed_note(rel.rpartition("/")[2])
            shared.setdefault(f"{folder}/{fixed}" if folder else fixed, sorted({rel, *rivals}))
    if not (taken or folders or shared or others):
        return f"{rename} to .md"
    if len(others) == len(paths):
        return (f"remove {'them' if len(others) > 1 else 'it'}, not {rename} to .md ({'; '.join(others)}:"
                f" {'notes' if len(others) > 1 else 'a note'} dreamdb reads already)")
    parts = []
    if others:
        parts.append(f" not the links or other names of notes dreamdb reads already ({'; '.join(others)}): remove"
                     " them")
    if taken:
        there = "; ".join(f"{target}, beside {' and '.join(rels)}" for target, rels in taken.items())
        parts.append(f" not onto a note already there ({there}): merge each into that note, or choose another name")
    if folders:
        there = "; ".join(f"{target}, beside {' and '.join(rels)}" for target, rels in folders.items())
        parts.append(f" not onto the name of a folder ({there}), into which a rename would move the note: choose"
                     " another name, or move that folder")
    if shared:
        both = "; ".join(f"{target}, for {' and '.join(rels)}" for target, rels in shared.items())
        parts.append(f" not two onto one name ({both}): merge them into one note, or name them apart")
    return f"{rename} to .md, but" + ";".join(parts)


def other_extension(count: int) -> str:
    """How a note of :func:`cased_markdown`'s (``count`` of them) is said: "has an extension other than .md", true of
    ``.MD`` and ``.markdown`` alike (the one wording of ``sync``'s, ``list``'s and ``recall``'s notes: QA round 149-A
    F1, "in another case than .md" of a ``.markdown``)."""
    return f"{'have' if count != 1 else 'has'} an extension other than .md"


def cased_markdown(vault: Path, *, include_archives: bool = False, limit: int = 5) -> tuple[int, list[str]]:
    """Files in the folders dreamdb reads that would be notes but for their extension: ``.md`` in another case
    or another markdown extension (:func:`misnamed_note`; a sync warns of each). ``status`` counts and lists them with the fix, renaming them to
    ``.md`` (QA round 65 L5: ``knowledge/UPPER.MD`` was neither indexed nor counted). Walks the source folders as
    a sync does (archives unless ``include_archives``, no folder links): ``knowledge/`` too, so it is for
    ``status``, not for a recall's notes (:func:`unindexed_markdown` leaves ``knowledge/`` out).

    Returns:
        ``(count, the first `limit` vault-relative paths in path order)``.
    """
    found = sorted(f"{rel_dir}/{name}" for rel_dir, _dirs, names in _walk_sources(vault, include_archives)
                   for name in names if (fixed := misnamed_note(name)) and is_utf8(name)
                   and classify(f"{rel_dir}/{fixed}") is not None)
    return len(found), found[:limit]


def undecodable_markdown(vault: Path, *, include_archives: bool = False, limit: int = 5) -> tuple[int, list[str]]:
    """Notes (``.md``, in any case: QA round 79 F9) and folders in the folders dreamdb reads whose names are not
    valid UTF-8: a sync skips them
    (SQLite stores text as UTF-8) and warns once, when it first meets them; ``status`` counts and lists them
    (QA round 78-A F4: after the first sync such a note was invisible, no command naming it). Walks as
    :func:`cased_markdown` does.

    Returns:
        ``(count, the first `limit` vault-relative paths in path order, undecodable bytes shown as U+FFFD)``.
    """
    found = []
    for rel_dir, dirs, names in _walk_sources(vault, include_archives):
        for name in [*dirs, *(n for n in names if n.lower().endswith(".md"))]:
            if not is_utf8(name):
                found.append(os.fsencode(f"{rel_dir}/{name}").decode("utf-8", "replace"))
    found.sort()
    return len(found), found[:limit]


def _walk_sources(vault: Path, include_archives: bool):
    """``(vault-relative folder, its subfolders walked or named, its file names)`` for each folder a sync reads
    (:data:`_MD_ROOTS`; archives unless ``include_archives``, no folder links, none whose name is not UTF-8, which a
    sync skips: named among the subfolders, not walked), in path order."""
    root = str(vault)
    for top, recursive, _typ in _MD_ROOTS:
        base = os.path.join(root, top)
        if top == "knowledge/features" or folder_link(root, top) is not None:
            continue  # walked as part of knowledge/; a folder link, which a sync does not follow either
        for dirpath, dirnames, filenames in walk(base):
            rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
            kept = sorted(d for d in dirnames if recursive and _walked(d, include_archives)
                          and d != VAULT_DIR_NAME)
            yield rel_dir, kept, sorted(filenames)
            dirnames[:] = [d for d in kept if is_utf8(d)]


def walk(top: str | os.PathLike) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)`` (top-down: prune ``dirnames`` in place; folder links listed, not followed; a folder that
    cannot be read skipped) without recursion: Python 3.10 and 3.11's ``os.walk`` recurses once per level and
    fails past ~990 nested folders (QA round 80-A F3: ``status`` exited 70); 3.12's keeps a stack, as this does.

    Yields:
        ``(folder path, names of its subfolders, names of its other entries)``, as ``os.walk``.
    """
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        dirnames, filenames, links = [], [], set()
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            (dirnames if is_dir else filenames).append(e.name)
            if is_dir and e.is_symlink():
                links.add(e.name)
        yield folder, dirnames, filenames
        stack.extend(os.path.join(folder, d) for d in reversed(dirnames) if d not in links)


NEVER_ARCHIVES = frozenset((".trash", ".trashes", ".git", ".obsidian", ".stversions", ".dropbox.cache", ".sync", ".history",
                            ".snapshots"))
"""Folders of ``.`` names that are no archives even with ``include_archives`` (any case; ``.Trash-1000`` too, a
desktop's trash; macOS's ``.Trashes``): Obsidian's deleted notes (``.trash``) and settings, a git repository's own
folder, Syncthing's old versions, Dropbox's and Resilio Sync's caches of deleted files, an editor's local history,
file-system snapshots (QA round 109-B F5: a note deleted in Obsidian came back as a hit; 110-A F10: Syncthing's copy
ranked under the note)."""


def _walked(name: str, include_archives: bool) -> bool:
    """Whether a folder of a type folder is walked: not a ``.`` name (an archive) unless ``include_archives``, and
    never one of :data:`NEVER_ARCHIVES`."""
    if not name.startswith("."):
        return True
    lower = name.lower()
    return include_archives and lower not in NEVER_ARCHIVES and not lower.startswith(".trash-")


FOLDER_LINK_SKIPPED = "skipped (a symlinked folder; dreamdb does not follow folder links)"
"""What a sync says of a symlinked folder it does not follow, after its vault-relative path (:func:`walk_sources`)."""


def folder_link(vault: str | os.PathLike, rel: str) -> str | None:
    """The first folder on the way to the vault-relative POSIX path ``rel`` (``rel`` itself included) that is a
    symbolic link, as a vault-relative path (``core`` for ``core/objectives``), or ``None`` when there is none: a sync
    follows no folder link (:func:`walk_sources`), so nothing behind one is a document, whatever the path's text
    reads (QA round 144-E F1: ``update knowledge/arch/old.md`` through ``knowledge/arch -> .archive`` edited an
    archived note)."""
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    for n in range(1, len(parts) + 1):
        here = "/".join(parts[:n])
        if os.path.islink(os.path.join(vault, here)):
            return here
    return None


def in_archive(rel_path: str) -> bool:
    """Whether a vault-relative POSIX path lies in an archive folder (a ``.`` name; ``..`` is no folder name)."""
    return any(part.startswith(".") and part not in (".", "..") for part in rel_path.split("/")[:-1])


def archived_markdown(vault: Path) -> int:
    """How many ``.md`` files sit in archive folders (``.`` names, the index folder aside) or are hidden
    (``.draft.md``): skipped by a sync unless ``DREAMDB_INCLUDE_ARCHIVES`` (archives) or always (hidden),
    which an empty index should say."""
    count = 0
    for dirpath, dirnames, filenames in walk(str(vault)):
        dirnames[:] = [d for d in dirnames if d != INDEX_DIR_NAME]
        archived = in_archive(os.path.relpath(dirpath, str(vault)).replace(os.sep, "/") + "/")
        count += sum(1 for n in filenames if n.endswith(".md") and (archived or n.startswith(".")))
    return count

