"""The user's dreamdb settings that would change what a benchmark times, and their removal from its environment.

A benchmark run in a shell where ``DREAMDB_RECALL_MODE=hybrid`` or ``DREAMDB_MEMORY_HOOK=0`` is set timed a hybrid
recall, or a hook switched off, under the BM25 and hook labels (QA round 122-C F5). Each script removes these from
``os.environ`` first (the processes it times inherit it), and says which it removed.
"""

from __future__ import annotations

import os
import sys

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
