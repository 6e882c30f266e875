"""Whether the dreamdb on disk is still the one this process runs.

dreamdb imports parts of itself when first needed (the markdown parser when a file changed, the embedding code for a
hybrid query). ``pip install`` of another version under a long-lived process (a server, a notebook, an agent's tool
host) replaces those files: a later import then reads the other version's module beside this one's, and fails
(``ImportError``: a name the other version's module needs is not in this one's) or, worse, works and indexes with the
other version's rules under this version's index format (QA round 122-B F1, F2). This module notices, so that the
process is told to restart instead.
"""

from __future__ import annotations

import re
from pathlib import Path

from dreamdb.errors import DreamdbError

_VERSION_LINE = re.compile(r'^__version__ = "([^"]+)"', re.MULTILINE)


class Reinstalled(DreamdbError):
    """Another version of dreamdb was installed under this process (exit code 1): restart it."""


def version_on_disk() -> str | None:
    """The ``__version__`` that ``dreamdb/__init__.py`` on disk holds now, ``None`` when it cannot be read."""
    import dreamdb

    try:
        text = Path(dreamdb.__file__).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, TypeError):
        return None
    found = _VERSION_LINE.search(text)
    return found.group(1) if found else None


def require_same_install() -> None:
    """Raise :class:`Reinstalled` when the dreamdb on disk is another version than the one running.

    Called before a module dreamdb imports late, whose rules the index records (the parser), and when such an import
    fails. Costs one read of a small file.

    Raises:
        Reinstalled: ``pip install`` (or an edit of the source tree) changed dreamdb's version under this process.
    """
    import dreamdb

    on_disk = version_on_disk()
    if on_disk is not None and on_disk != dreamdb.__version__:
        raise Reinstalled(f"dreamdb {on_disk} was installed under this process, which runs dreamdb "
                          f"{dreamdb.__version__}: the parts it loads when needed would come from the other version.",
                          hint="Restart the process (its index is left as it was).")
