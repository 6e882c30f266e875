"""A benchmark's working folder (``--workdir``) and the copy of a vault it keeps there between runs.

The copy is reused only for the same source and mode: a folder holding another vault's copy, another mode's, or a
``_dream_context`` this module did not make (a real project's vault) is refused, so a run never reports another
vault's figures as its own, nor times, damages or rebuilds a vault that is not a copy (QA round 103-A F1).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

STAMP_NAME = "bench-source.json"
"""The file beside the copy naming its source vault and mode."""


def vault_copy(src: Path, work: Path, mode: str, make: Callable[[Path], None]) -> Path:
    """``work/_dream_context``, made by ``make(dest)`` the first time and reused while its source and mode are these.

    Args:
        src: the vault copied.
        work: the benchmark's working folder.
        mode: what kind of copy (``"full"``, ``"quick"``…), recorded with the source.
        make: writes the copy to the path it is given.

    Exits (status 2, a message on stderr) when ``work`` holds a copy of another source or mode, or a
    ``_dream_context`` folder it did not make.
    """
    dest = work / "_dream_context"
    stamp = work / STAMP_NAME
    want = {"source": str(Path(src).resolve()), "mode": mode}
    if dest.exists() or dest.is_symlink():
        try:
            have = json.loads(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            have = None
        if have == want:
            return dest
        held = (f"a {have.get('mode')} copy of {have.get('source')}" if isinstance(have, dict)
                else "a _dream_context folder no benchmark made (a real vault?)")
        print(f"error: {work} holds {held}, not a {mode} copy of {src}; give another --workdir, or delete "
              f"{work} if it is a benchmark's.", file=sys.stderr)
        sys.exit(2)
    work.mkdir(parents=True, exist_ok=True)
    make(dest)
    stamp.write_text(json.dumps(want), encoding="utf-8")
    return dest
