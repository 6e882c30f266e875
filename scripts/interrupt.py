"""How the benchmark scripts end on Ctrl-C: one line and exit code 130, as dreamdb's commands do, not a traceback
(QA round 117-B: a benchmark interrupted printed Python's traceback of wherever it was)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Callable


def run(main: Callable[[], int | None]) -> int:
    """``main()``'s exit code (``None`` is 0). After Ctrl-C (SIGINT) one line on stderr, then the process ends by
    SIGINT itself, as a shell needs to stop a script that runs it (QA round 120-A F2: an exit code of 130 let
    ``bash scripts/bench_all.sh`` go on to the next benchmark). (A generated vault cut short is made again by the
    next run: ``gen_vault.py`` writes its ``gen.json`` last.)"""
    try:
        return main() or 0
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl-C); no figures printed.", file=sys.stderr, flush=True)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130  # (where SIGINT does not end the process)
