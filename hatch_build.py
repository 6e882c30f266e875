"""Build hook: compile dreamdb's optional C kernel, ``dreamdb/ranking/_kernel.c``.

The memory engine (:mod:`dreamdb.ranking.memory`) sums a query's postings with it when it was
built, and with numpy passes otherwise (same rankings, same floats; slower); the English stemmer
(:mod:`dreamdb.stemming`) and the loanword spellings (:mod:`dreamdb.cognates`) have Python twins
too. So a missing or failing C compiler never fails the install: the wheel then stays pure Python,
with a warning in the build's output (pip shows it with ``-v``).

The module is compiled next to its source (an editable install imports it from there) with the
interpreter's own compiler and flags (``sysconfig``: ``LDSHARED``, ``CCSHARED``), plus
``-ffp-contract=off`` so no multiply-add is fused (the floats must be the numpy passes' own).
The source's sha256 is compiled in (``_kernel.SOURCE_SHA256``): ``tests/test_kernel.py`` tells
when the built module is older than its source. ``DREAMDB_NO_KERNEL=1`` skips the build.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("dreamdb") / "ranking" / "_kernel.c"


def built_kernel(root: Path) -> Path | None:
    """Where the kernel built from ``SOURCE`` under ``root`` goes (beside its source), or ``None``
    when this Python names no extension suffix."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    return (root / SOURCE).with_name("_kernel" + suffix) if suffix else None


def skip_kernel(root: Path) -> Path | None:
    """``DREAMDB_NO_KERNEL=1`` for an editable install: no kernel is built, and one an earlier install built beside
    its source is removed (the editable install would import it: QA round 25). Returns the removed file. (A wheel
    built so leaves it: ``*.so`` is gitignored, so not packed, and an editable install of the tree still uses it,
    QA round 86-B F10.)"""
    out = built_kernel(root)
    if out is None or not out.exists():
        return None
    out.unlink()
    return out


def compile_kernel(root: Path) -> tuple[Path | None, str]:
    """Compile ``SOURCE`` under ``root``; ``(path of the built module, "")`` or ``(None, why not)``.
    A module built earlier is removed when this build fails: an editable install would import it
    though its source may have changed since."""
    src = root / SOURCE
    out = built_kernel(root)
    ldshared = sysconfig.get_config_var("LDSHARED")
    if out is None:
        return None, "this Python names no extension suffix (sysconfig EXT_SUFFIX)"
    built, why = _compile(src, out, ldshared) if ldshared else (None, "this Python names no C compiler (sysconfig LDSHARED)")
    if built is None:
        out.unlink(missing_ok=True)
    return built, why


def _compile(src: Path, out: Path, ldshared: str) -> tuple[Path | None, str]:
    tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    cmd = [*shlex.split(ldshared), *shlex.split(sysconfig.get_config_var("CCSHARED") or ""), "-O2",
           "-ffp-contract=off", f"-DSOURCE_SHA256=\"{digest}\"", f"-I{sysconfig.get_paths()['include']}",
           str(src), "-o", str(tmp)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{cmd[0]}: {exc}"
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        return None, (done.stderr or done.stdout).strip()[-2000:]
    os.replace(tmp, out)
    return out, ""


def kernel_skipped() -> bool:
    """Whether ``DREAMDB_NO_KERNEL`` asks for no C kernel: unset, empty, ``0``, ``false``, ``no`` or ``off`` (any
    case) build it, as ``DREAMDB_KERNEL``'s off values read (QA round 90-B F9: ``DREAMDB_NO_KERNEL=0`` skipped it);
    ``1``, ``true``, ``yes``, ``on`` and any other value skip it (a value neither on nor off is said, not refused:
    an install must not fail on it)."""
    value = os.environ.get("DREAMDB_NO_KERNEL", "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value not in ("1", "true", "yes", "on"):
        print(f"dreamdb: DREAMDB_NO_KERNEL={os.environ['DREAMDB_NO_KERNEL']!r} is neither on nor off; read as on",
              file=sys.stderr)
    return True


class KernelBuildHook(BuildHookInterface):
    """Compiles the C kernel into the wheel (or beside its source, for an editable install)."""

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        if kernel_skipped():
            removed = skip_kernel(Path(self.root)) if version == "editable" else None
            print("dreamdb: DREAMDB_NO_KERNEL is set: the C kernel is not built, so recall uses numpy passes and "
                  f"Python (same results, slower){f'; removed {removed}' if removed else ''}", file=sys.stderr)
            return
        built, why = compile_kernel(Path(self.root))
        if built is None:
            print(f"dreamdb: the C kernel was not built, so recall uses numpy passes and Python (same results, slower): {why}",
                  file=sys.stderr)
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        build_data["artifacts"].append("/" + built.relative_to(self.root).as_posix())
