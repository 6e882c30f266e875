"""The ``dreamdb`` executable's entry point.

``dreamdb hook user-prompt-submit`` runs on every prompt an agent's user
types and ``dreamdb recall`` on every question an agent asks, so both skip
the click layer when they can (click alone costs ~80 ms to import here; see
:mod:`dreamdb.quickcli`); everything else goes through :func:`dreamdb.cli.main`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    args = sys.argv[1:] if argv is None else argv
    from dreamdb import quickcli

    if sys.stdout is None:  # started with standard output closed: writing it is an error, said on stderr
        sys.stdout = quickcli.ClosedOutput()
    sys.stderr = quickcli.ForgivingStderr(sys.stderr)  # None when started with it closed
    quickcli.JSON_ERRORS = quickcli.wants_json(args)
    if args == ["hook", "user-prompt-submit"]:
        from dreamdb.hook import run_stdin

        return run_stdin()
    if args[:1] == ["recall"]:
        from dreamdb.quickcli import fast_recall

        code = fast_recall(args[1:])
        if code is not None:
            return code
    from dreamdb.cli import main as cli_main

    return cli_main(args)
