"""The user's dreamdb settings that would change what a benchmark times, and their removal from its environment.

A benchmark run in a shell where ``DREAMDB_RECALL_MODE=hybrid`` or ``DREAMDB_MEMORY_HOOK=0`` is set timed a hybrid
recall, or a hook switched off, under the BM25 and hook labels (QA round 122-C F5). Each script removes these from
``os.environ`` first (the processes it times inherit it), and says which it removed.

Also where a benchmark finds the evaluation data folder of its real-vault figures (:func:`data_folder`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HOOK_SETTINGS = ("DREAMDB_VAULT", "DREAMDB_INDEX", "DREAMDB_RECALL_MODE", "DREAMDB_MEMORY_HOOK", "DREAMDB_HOOK_VERBOSE",
                 "DREAMDB_HOOK_TIMING", "DREAMDB_HOOK_LOG", "DREAMDB_CACHE_DIR", "DREAMDB_INCLUDE_ARCHIVES", "DREAMDB_DEBUG")
"""Settings of the user's that would change what the timed processes do (another vault, index, mode or log)."""


def scrub(script: str) -> list[str]:
    """Remove :data:`HOOK_SETTINGS` from ``os.environ``; the names removed, said on stderr as ``script``'s note."""
    removed = [name for name in HOOK_SETTINGS if os.environ.pop(name, None) is not None]
    if removed:
        print(f"{script}: timing without the settings {', '.join(removed)} (each changes what is timed)",
              file=sys.stderr)
    return removed


def data_folder(given: Path | None, script: str, hint: str | None = None) -> Path:
    """The evaluation data folder a benchmark reads the real vault from, as ``dreamdb eval`` finds it: ``given`` (its
    ``--data``), else ``$DREAMDB_EVAL_DATA``, else ``../shared`` beside the checkout
    (:func:`dreamdb.evaluation.suite.default_data_dir`).

    The default ``../shared`` may be absent (a fresh clone: the script skips its real-vault figures, saying so); a
    folder the user named (``--data``, or the variable) must be there, as ``dreamdb eval`` requires (QA round 143-A
    F3: a mistyped ``--data`` was "skipped", exit 0, and a benchmark run silently lost its real-vault figures).

    Raises:
        SystemExit: a named folder that is missing, a file or a link to nothing (exit 7, ``dreamdb eval``'s), or no
            folder to look in (2), said on stderr as ``script``'s error and hint (``hint``, else the error's own).
    """
    from dreamdb.errors import DreamdbError
    from dreamdb.evaluation import suite

    try:
        data = Path(given) if given is not None else suite.default_data_dir()
        if given is not None or os.environ.get(suite.DATA_ENV, "").strip():
            suite.require_data_folder(data)
    except DreamdbError as exc:
        print(f"{script}: Error: {exc.message}", file=sys.stderr)
        if hint or exc.hint:
            print(f"{script}: Hint: {hint or exc.hint}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    return data
