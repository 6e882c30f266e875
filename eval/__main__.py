"""``python -m eval [OPTIONS]`` — the same command as ``dreamdb eval [OPTIONS]``."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run ``dreamdb eval`` with ``argv`` (default: the command line) and return its exit code."""
    from dreamdb.cli import main as cli_main

    return cli_main(["eval", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
