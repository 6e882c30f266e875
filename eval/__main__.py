"""``python -m eval [OPTIONS]`` — the same command as ``dreamdb eval [OPTIONS]``."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run ``dreamdb eval`` with ``argv`` (default: the command line) and return its exit code (through the
    console script's own entry point: ``--json`` errors as JSON on stdout, Ctrl-C as exit 130; QA round 68 L4)."""
    from dreamdb.entry import main as entry_main

    return entry_main(["eval", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
