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


def prepare(work: Path, src: Path) -> Path:
    """Check the benchmark's ``--workdir`` and make it: refused (exit 2) when it is no folder, lies inside a vault
    (a folder named ``_dream_context``) or inside ``src``, the vault it will hold a copy of (QA round 105 F7, F8: the
    scripts made the folder first, a file's name was a traceback and a folder inside the vault was made; a copy of a
    vault into itself wrote 778 entries into it before failing). Returns ``work``."""
    if (work.exists() or work.is_symlink()) and not work.is_dir():  # (a link to nothing too: QA round 106 F1)
        _refuse(f"{work} is not a folder; give a folder (or a new path) as --workdir.")
    try:
        resolved = work.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # a symlink loop
        _refuse(f"{work} cannot be used as --workdir ({exc}).")
    inside = next((p for p in (resolved, *resolved.parents) if p.name == "_dream_context"), None)
    if inside is not None:
        _refuse(f"{work} is in the vault {inside}; give a --workdir outside any vault.")
    source = Path(src).resolve()
    if resolved == source or source in resolved.parents:
        _refuse(f"{work} is inside {src}, the vault the benchmark copies; give a --workdir outside it.")
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # (a file or a link to nothing on the way, a folder that cannot be written)
        _refuse(f"cannot make the --workdir {work} ({exc.strerror or exc}).")
    return work


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
    prepare(work, src)  # (QA round 104-A F9: a file was a FileExistsError traceback, a vault a place for a copy)
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
    make(dest)
    stamp.write_text(json.dumps(want), encoding="utf-8")
    return dest


def _refuse(message: str) -> None:
    """Print ``message`` as an error and exit with status 2 (bad usage)."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)
