"""How the benchmark scripts end on Ctrl-C: one line and exit code 130, as dreamdb's commands do, not a traceback
(QA round 117-B: a benchmark interrupted printed Python's traceback of wherever it was)."""

from __future__ import annotations

import sys
from typing import Callable


def run(main: Callable[[], int | None]) -> int:
    """``main()``'s exit code (``None`` is 0); 130 after Ctrl-C (SIGINT), said on stderr. (A generated vault cut
    short is made again by the next run: ``gen_vault.py`` writes its ``gen.json`` last.)"""
    try:
        return main() or 0
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl-C); no figures printed.", file=sys.stderr)
        return 130
