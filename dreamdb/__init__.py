"""dreamdb: a local memory-recall engine for AI coding agents.

Public API (see README "Python API")::

    import dreamdb
    index = dreamdb.open()                 # vault found from the cwd or DREAMDB_VAULT
    hits = index.recall("sleep fan-out", top=5)
    for hit in hits:
        print(hit.rank_score, hit.doc_id, hit.title)

Importing this package is cheap: heavy modules (numpy, onnxruntime,
sqlite-vec) load only when a function that needs them runs.
"""

from __future__ import annotations

__version__ = "0.3.27"

from dreamdb.errors import DreamdbError  # noqa: E402

__all__ = ["DreamdbError", "Hit", "Index", "MultiIndex", "__version__", "open"]

TYPE_CHECKING = False  # (typing.TYPE_CHECKING without importing typing; type checkers read the name alike)
if TYPE_CHECKING:
    import os
    from collections.abc import Sequence
    from typing import Any, overload

    from dreamdb.api import Hit, Index
    from dreamdb.lexicon import Lexicon
    from dreamdb.multi import MultiIndex

    # (what a type checker reads: a path gives an Index, so its methods type-check without a narrowing; QA 93-C F8.
    # Index's keywords spelled out, so a mistyped one is an error there too: QA round 100-C F2)
    @overload
    def open(vault: str | os.PathLike[str] | None = None, *, index_path: str | os.PathLike[str] | None = None,  # noqa: A001
             include_archives: bool | None = None, auto_sync: bool = True, lock_timeout_ms: int = ...,
             allow_model_build: bool = False, lazy_refresh_max: int = ..., engine: str = "memory",
             lexicon: str | os.PathLike[str] | Lexicon | None = "auto",
             lazy_refresh_seconds: float | None = ...) -> Index: ...

    @overload
    def open(vault: Sequence[str | os.PathLike[str]], *, index_path: str | os.PathLike[str] | None = None,  # noqa: A001
             include_archives: bool | None = None, auto_sync: bool = True, lock_timeout_ms: int = ...,
             allow_model_build: bool = False, lazy_refresh_max: int = ..., engine: str = "memory",
             lexicon: str | os.PathLike[str] | Lexicon | None = "auto",
             lazy_refresh_seconds: float | None = ...) -> Index | MultiIndex: ...

    def open(vault: Any = None, **kwargs: Any) -> Index | MultiIndex: ...  # noqa: A001
else:
    def open(vault=None, **kwargs):  # noqa: A001 - the documented name
        """Open the dreamdb index of one vault (or several) and return it.

        Args:
            vault: path to a ``_dream_context`` folder (or a folder above one), a
                list of such paths, or ``None`` to use ``DREAMDB_VAULT`` or walk up
                from the working directory. A ``str``'s leading ``~`` is the home folder, as a
                shell reads it; a ``Path`` is taken as it is (``Path("~/x").expanduser()``).
            **kwargs: passed to :class:`dreamdb.api.Index`.

        Returns:
            dreamdb.api.Index (or dreamdb.multi.MultiIndex for a list of two vaults or more; a list of one vault, or
            of one vault's paths, gives its Index).

        Raises:
            VaultNotFound: no vault at the path, or none found walking up.
            UsageError: an argument of the wrong type or out of range.
            LexiconError: ``lexicon=`` names a file that is not a lexicon.

        The index itself is opened on first use: :class:`~dreamdb.errors.IndexUnavailable` (it cannot be
        created, read or rebuilt) comes from the first call that reads it, not from ``open``.
        """
        from dreamdb.api import open_index

        return open_index(vault, **kwargs)


def __dir__() -> list[str]:
    """The public names, the lazily imported ones included (``help(dreamdb)``, completion)."""
    return sorted({*__all__, "errors", *(n for n in globals() if n.startswith("__"))})


def __getattr__(name: str):
    """``dreamdb.Hit``, ``dreamdb.Index`` and ``dreamdb.MultiIndex``, imported on first use."""
    if name in ("Hit", "Index"):
        from dreamdb import api

        return getattr(api, name)
    if name == "MultiIndex":
        from dreamdb.multi import MultiIndex

        return MultiIndex
    raise AttributeError(f"module 'dreamdb' has no attribute {name!r}")

