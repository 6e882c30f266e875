"""Exceptions raised by the dreamdb library.

Every error the library raises on purpose is a :class:`DreamdbError`. The CLI
converts them in one place (``dreamdb/cli/__init__.py``): each class's
``exit_code`` is the process's exit code (2 bad usage, 3 vault not found, 4
index unavailable, 5 lock timeout, 6 write refused, 7 not found, 8 model
unavailable, 1 otherwise), and the user sees one ``Error: …`` line and a hint,
never a traceback.
"""

from __future__ import annotations

import errno as _errno
from collections.abc import Iterator as _Iterator
from contextlib import contextmanager as _contextmanager
from contextvars import ContextVar as _ContextVar

OPEN_FILES_HINT = "Raise the open-file limit (ulimit -n 256), then run the command again."
"""The hint of every error caused by this process's open-file limit (EMFILE): the machine's state, no damage."""

OPEN_FILES_REASONS = {_errno.EMFILE: "this process may open no more files", _errno.ENFILE: "the system may open no more files"}
"""The errors of an open refused for the number of files open (this process's limit, EMFILE; the system's, ENFILE),
in words."""
OPEN_FILES_ERRNOS = frozenset(OPEN_FILES_REASONS)


def short_of_files(exc: BaseException | None) -> bool:
    """Whether ``exc`` is an :class:`OSError` of an open-file limit (:data:`OPEN_FILES_ERRNOS`): the machine's state,
    never damage, permissions or a bad name, whichever file it names. Every place that words an ``OSError`` asks this
    first (QA round 153-E F1: one said "fix its permissions", another "cannot use … as a document name")."""
    return isinstance(exc, OSError) and exc.errno in OPEN_FILES_ERRNOS


def open_files_reason(exc: OSError) -> str:
    """The words for :func:`short_of_files`'s error: ``this process may open no more files (Too many open files)``,
    or the system for ENFILE (the system's own words in parentheses)."""
    return f"{OPEN_FILES_REASONS.get(exc.errno or 0, OPEN_FILES_REASONS[_errno.EMFILE])} ({exc.strerror or exc})"

MEMORY_HINT = "Free memory, or raise this process's memory limit (ulimit -v), then run it again."
"""The hint of every error caused by a memory limit (MemoryError, a library that cannot be mapped)."""


_PARAM_NAMES: _ContextVar[dict[str, str]] = _ContextVar("dreamdb_param_names", default={})
"""The command-line options a running command gave the library's parameters by (:func:`naming_params`)."""


def param_name(name: str) -> str:
    """How an error names the library parameter ``name``: the command-line option that gave it while a command runs
    (:func:`naming_params`: ``--type`` for ``remember``'s ``type``), else ``name`` itself (a Python caller's)."""
    return _PARAM_NAMES.get().get(name, name)


@_contextmanager
def naming_params(**names: str) -> _Iterator[None]:
    """Within the block, the library's errors name its parameters by the given command-line options
    (``naming_params(type="--type")``: "--type must be a non-empty string."), where they named the parameter, which
    no option of the command is called (QA round 156-D F3: ``remember --type ''`` said "type must be …"). In this
    thread (or task) only."""
    token = _PARAM_NAMES.set({**_PARAM_NAMES.get(), **names})
    try:
        yield
    finally:
        _PARAM_NAMES.reset(token)


class DreamdbError(Exception):
    """Base class of every error dreamdb raises on purpose.

    Args:
        message: what went wrong, in one sentence.
        hint: how to fix it (optional); shown on its own line by the CLI.
    """

    exit_code = 1
    results: dict | None = None
    """What the command measured before it failed, as its ``--json`` prints it on success (``dreamdb eval``'s run
    summary), else ``None``: the CLI's JSON error document then carries it beside ``error`` as ``results``, so that
    standard output holds one JSON document all the same (QA round 143-A F1: the summary, then the error object)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message if not self.hint else f"{self.message}\n{self.hint}"


class UsageError(DreamdbError):
    """The caller's input is wrong (bad option value, unparsable date, …). Exit 2."""

    exit_code = 2


class VaultNotFound(DreamdbError):
    """No ``_dream_context`` vault was found at the given or discovered path. Exit 3."""

    exit_code = 3
    from_walk = False
    """True when :func:`dreamdb.vault.discover.find_vault` (``project_first``, the prompt hook's) raised it from a
    walk up that found a vault and refused it, rather than from ``$DREAMDB_VAULT``."""

    @classmethod
    def gone(cls, vault) -> "VaultNotFound":
        """The error for a vault folder that existed when it was opened and no longer does (moved or deleted), or
        can no longer be reached for want of permission on a folder on its way (QA round 116-A F11: said "gone"), or
        leads into a loop of symbolic links (QA round 132-D F2: said "gone", as :func:`dreamdb.open` says it is one)."""
        return cls._unreachable(vault) or cls._looping(vault) or cls(
            f"The vault folder {vault} is gone (moved or deleted?); the index was left as it is.",
            hint="Open the vault where it is now (--vault PATH, DREAMDB_VAULT or dreamdb.open(PATH)).")

    @classmethod
    def _unreachable(cls, vault) -> "VaultNotFound | None":
        """The error for a vault folder a folder on whose way cannot be searched (its own lookup refused), else None."""
        from dreamdb.config import is_unreachable

        if is_unreachable(vault):
            return cls(f"The vault folder {vault} cannot be reached (permission denied: a folder on its way cannot be"
                       " searched).",
                       hint="Give yourself search permission (chmod u+x) on the folders of its path, or run dreamdb "
                            "as the user who owns them.")
        return None

    @classmethod
    def _looping(cls, vault) -> "VaultNotFound | None":
        """The error for a vault folder that a symbolic link leading back to itself replaced (the folder's own, or a
        folder's on its way), else None."""
        from dreamdb.vault.discover import looping_link, path_problem

        if looping_link(vault) is None:
            return None
        return cls(f"The vault folder {vault} {path_problem(vault, folder=True)}; the index was left as it is.",
                   hint="Fix the link, or open the vault where it is now (--vault PATH, DREAMDB_VAULT or"
                        " dreamdb.open(PATH)).")

    @classmethod
    def unreadable(cls, vault) -> "VaultNotFound":
        """The error for a vault folder that cannot be listed or entered (QA round 65 M1: exit 70 before), or reached
        (a folder on its way that cannot be searched: QA round 117-A F3, the hint was a chmod of the vault)."""
        return cls._unreachable(vault) or cls(f"The vault folder {vault} cannot be read (permission denied).",
                   hint=f"Give yourself read and search permission on it (chmod u+rx '{vault}'), or run dreamdb as"
                        " the user who owns it.")


class NoVaultFound(VaultNotFound):
    """No ``_dream_context`` folder in the working folder or any folder above it (the walk of discovery found
    none; a vault found and unusable is a plain :class:`VaultNotFound`). Exit 3."""

    detail: str | None = None
    """Why none was found, where a thing came close, in the words the message gives in parentheses: a
    ``_dream_context`` that is no folder (``/p/_dream_context is not a folder``, ``… is a link to nothing``), or a
    folder named almost so; ``None`` when there was nothing (the prompt hook's log says it, QA round 139-C F5)."""


class IndexUnavailable(DreamdbError):
    """The index could not be opened, migrated or rebuilt. Exit 4."""

    exit_code = 4


class IndexDamaged(IndexUnavailable):
    """SQLite reports the index file damaged where dreamdb could not rebuild it itself (``dreamdb sql``
    reads through its own read-only connection; ``dreamdb sync --check`` rebuilds). Exit 4."""


class IndexReplaced(IndexUnavailable):
    """The index file a connection opened was removed or replaced (by another process) before a write transaction
    of it began: nothing was written, and :class:`dreamdb.api.Index` opens the file there now and goes on in it
    (QA round 146-A F1: a sync built into a file another process had removed, and reported success). Exit 4 where
    it is not gone on with."""


class IndexTooNew(IndexUnavailable):
    """The index was written by a newer dreamdb (a higher schema version): never rebuilt behind the
    back of the version that made it. Exit 4."""


class DriverError(DreamdbError):
    """No SQLite driver that can load extensions is available. Exit 4."""

    exit_code = 4


class LockTimeout(DreamdbError):
    """Another dreamdb process held the index or vault lock for too long. Exit 5."""

    exit_code = 5


class FirstBuildElsewhere(LockTimeout):
    """Another process is building the index for the first time (it holds the write lock, and the index holds nothing
    yet): there is nothing to answer from. Exit 5."""


class RebuildElsewhere(LockTimeout):
    """The index was found damaged while another process rebuilds it (it holds ``<index>.rebuild.lock``), for longer
    than the lock timeout: the damaged index is no index to answer from. Exit 5."""


class WriteRefused(DreamdbError):
    """A vault write was refused to protect the user's data (invalid JSON, slug outside the vault…). Exit 6."""

    exit_code = 6


class NotFound(DreamdbError):
    """A slug, document or entry that the caller named does not exist, or a file or folder an option names to be read
    (missing, or not of the kind it needs: :class:`dreamdb.cli.options.ExistingPath`). Exit 7."""

    exit_code = 7


class ModelNotInstalled(DreamdbError):
    """No embedding model is installed (hybrid recall falls back to BM25). Exit 8."""

    exit_code = 8


class ModelError(DreamdbError):
    """The embedding model exists but cannot be loaded or run (corrupt file, wrong tokenizer). Exit 8."""

    exit_code = 8


class ModelReplaced(ModelError):
    """The embedding model's files were replaced or written while an Embedder was loading or using them (a model
    install or build): that Embedder stops rather than give vectors of another model than its ``model_id``. A new
    load reads the files as they are now (:func:`dreamdb.embeddings.model.get_embedder` and an Index's next query
    do). Exit 8."""


class ResultsNotWritten(DreamdbError):
    """A report or results file could not be written after the work was done (the results were printed). Exit 74, as
    for an unwritable standard output."""

    exit_code = 74


class NothingMeasured(DreamdbError):
    """An evaluation run scored no track in any mode (every one unavailable). Exit 1."""


class LexiconError(DreamdbError):
    """The Turkish–English lexicon cannot be built or read (source package missing, unreadable data). Exit 1."""
