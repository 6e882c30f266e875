"""The ``dreamdb`` executable's entry point.

``dreamdb hook user-prompt-submit`` runs on every prompt an agent's user
types, so it skips the click layer entirely (click alone costs ~50 ms to
import); everything else goes through :func:`dreamdb.cli.main`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["hook", "user-prompt-submit"]:
        from dreamdb.hook import run_stdin

        return run_stdin()
    from dreamdb.cli import main as cli_main

    return cli_main(args)
