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
    ``_dream_context`` folder it did not make, is no folder, or is inside a vault.
    """
    dest = work / "_dream_context"
    stamp = work / STAMP_NAME
    want = {"source": str(Path(src).resolve()), "mode": mode}
    # (QA round 104-A F9: a file was a FileExistsError traceback, and a vault a place to put a copy into)
    if work.exists() and not work.is_dir():
        _refuse(f"{work} is not a folder; give a folder (or a new path) as --workdir.")
    inside = next((p for p in (work.resolve(), *work.resolve().parents) if p.name == "_dream_context"), None)
    if inside is not None:
        _refuse(f"{work} is in the vault {inside}; give a --workdir outside any vault.")
    if dest.exists() or dest.is_symlink():
        try:
            have = json.loads(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            have = None
        if have == want:
            return dest
        held = (f"a {have.get('mode')} copy of {have.get('source')}" if isinstance(have, dict)
                else "a _dream_context folder no benchmark made (a real vault?)")
        _refuse(f"{work} holds {held}, not a {mode} copy of {src}; give another --workdir, or delete {work} if it "
                "is a benchmark's.")
    work.mkdir(parents=True, exist_ok=True)
    make(dest)
    stamp.write_text(json.dumps(want), encoding="utf-8")
    return dest


def _refuse(message: str) -> None:
    """Print ``message`` as an error and exit with status 2 (bad usage)."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)
