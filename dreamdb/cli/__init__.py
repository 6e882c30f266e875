"""The ``dreamdb`` command line: a thin click layer over :mod:`dreamdb.api`.

Subcommands live in one module per group and are imported only when run
(:class:`LazyGroup`), so ``dreamdb recall`` never pays for the embedding or
evaluation code. Errors cross the boundary here, once: a
:class:`~dreamdb.errors.DreamdbError` prints ``Error: …`` (and its hint) and
exits with its code; anything unexpected prints one line (the traceback only
with ``DREAMDB_DEBUG=1``) and exits 70.

Exit codes: 0 ok · 1 runtime error · 2 usage error · 3 vault not found ·
4 index/driver unavailable · 5 lock timeout · 6 write refused · 7 not found ·
8 model unavailable · 70 internal error · 74 output not writable · 130
interrupted.
"""

from __future__ import annotations

import importlib
import io
import sys

import click

from dreamdb import __version__
from dreamdb.cli.options import SuggestingGroup, refuse_repeats, say

_COMMANDS = {
    "recall": ("dreamdb.cli.recall", "recall"),
    "sync": ("dreamdb.cli.index", "sync_cmd"),
    "status": ("dreamdb.cli.index", "status_cmd"),
    "list": ("dreamdb.cli.index", "list_cmd"),
    "sql": ("dreamdb.cli.index", "sql_cmd"),
}
"""Command name → (module, attribute); other modules register more with :func:`register`."""

_HELP = {
    "recall": "Recall the vault documents that best match a query.",
    "sync": "Mirror the vault into the index (incremental).",
    "status": "Show what the index holds.",
    "list": "List indexed documents.",
    "sql": "Run a read-only SQL query against the index.",
}


def register(name: str, module: str, attr: str, short_help: str) -> None:
    """Add a lazily imported subcommand."""
    _COMMANDS[name] = (module, attr)
    _HELP[name] = short_help


for _name, _mod, _attr, _help in (
    ("embed", "dreamdb.cli.embed", "embed", "Embeddings: refresh, status, compact, dedup."),
    ("model", "dreamdb.cli.model", "model", "The local embedding model: status, build, install, download."),
    ("lexicon", "dreamdb.cli.lexicon", "lexicon", "The Turkish–English dictionary: status, build."),
    ("hook", "dreamdb.cli.hook", "hook", "Agent prompt hook: install, uninstall, user-prompt-submit."),
    ("remember", "dreamdb.cli.writes", "remember", "Add a CHANGELOG entry to the vault."),
    ("update", "dreamdb.cli.writes", "update", "Edit a document's frontmatter or body."),
    ("delete", "dreamdb.cli.writes", "delete", "Delete a document from the vault."),
    ("eval", "dreamdb.cli.evaluate", "evaluate", "Score recall against gold sets and IR collections."),
):
    register(_name, _mod, _attr, _help)


class LazyGroup(SuggestingGroup):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx):  # noqa: D102
        return sorted(n for n, (mod, _a) in _COMMANDS.items() if importlib.util.find_spec(mod) is not None)

    def get_command(self, ctx, name):  # noqa: D102
        target = _COMMANDS.get(name)
        if target is None:
            return None
        try:
            module = importlib.import_module(target[0])
        except ModuleNotFoundError as exc:
            if exc.name == target[0]:
                return None
            raise
        command = getattr(module, target[1])
        _add_exit_codes(command)
        refuse_repeats(command)  # (a repeated single-value option: an error, QA round 153-F F1)
        return command

    def format_commands(self, ctx, formatter):  # noqa: D102
        rows = [(n, _HELP.get(n, "")) for n in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


import importlib.util  # noqa: E402

EXIT_CODES = ("Exit codes: 0 ok · 1 runtime error · 2 bad usage · 3 vault not found · 4 index/driver unavailable · "
              "5 lock timeout · 6 write refused (data untouched) · 7 not found · 8 embedding model unavailable · "
              "70 internal error · 74 output not writable · 130 interrupted.")
"""The same for every command; shown at the end of each command's ``--help``."""


def _add_exit_codes(command: click.Command) -> None:
    """Put :data:`EXIT_CODES` at the end of ``command``'s help (and its subcommands'), once."""
    if not command.epilog:
        command.epilog = EXIT_CODES
    for sub in getattr(command, "commands", {}).values():
        _add_exit_codes(sub)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="dreamdb")
def cli() -> None:
    """dreamdb: local memory recall for AI coding agents.

    Mirrors a _dream_context/ vault into a SQLite index and answers queries
    with exact BM25 (and, opt-in, local multilingual embeddings).

    The vault is found from --vault PATH, then DREAMDB_VAULT, then by walking
    up from the current folder. --vault PATH and --json may be given before
    the command as well as after it (dreamdb --vault PATH --json status): they
    apply to that command.

    \b
    Examples:
      dreamdb recall "how does sleep consolidation work"
      dreamdb recall --vault ~/project/_dream_context --json "DEC-0054"
      dreamdb sync
      dreamdb sql "SELECT type, COUNT(*) FROM documents GROUP BY type"

    \b
    Exit codes: 0 ok · 1 runtime error · 2 bad usage · 3 vault not found ·
    4 index/driver unavailable · 5 lock timeout · 6 write refused (data untouched) ·
    7 not found · 8 embedding model unavailable · 70 internal error ·
    74 output not writable · 130 interrupted.
    """


class _Shown(io.StringIO):
    """Where a click error is written before :func:`dreamdb.cli.options.say` prints it made safe: a terminal to click,
    which would otherwise strip an ANSI sequence off it, not show it (``␛[2J``)."""

    def isatty(self) -> bool:
        return True


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dreamdb`` console script and ``python -m dreamdb``; returns the exit code."""
    from dreamdb import quickcli
    from dreamdb.quickcli import json_error, run_guarded

    code = 0
    quickcli.SAVED = None  # (a process may run several commands: the tests do)
    quickcli.REPORTED = False
    quickcli.STARTED = False
    if "dreamdb.writes" in sys.modules:
        sys.modules["dreamdb.writes"].COMMITTED.set(None)

    def run() -> None:
        nonlocal code
        try:
            result = cli.main(args=argv, prog_name="dreamdb", standalone_mode=False)
            if isinstance(result, int) and not isinstance(result, bool):  # click returns ctx.exit()'s code
                code = result
        except click.exceptions.Exit as exc:
            code = exc.exit_code
        except SystemExit:
            # click turns a closed stdout pipe (EPIPE) into exit 1 after wrapping the streams; the
            # reader stopped reading (`| head`), which is not a failure: 0, as recall's fast path.
            if type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):
                code = 0
            else:
                raise
        except click.ClickException as exc:
            if isinstance(exc, click.NoSuchOption) and exc.option_name == "--vault" \
                    and exc.ctx is not None and (exc.ctx.parent is not None or "--version" in (sys.argv[1:] if argv is None else argv)):
                # (dreamdb --vault X model status: QA round 104-B F11). At the top level the command path is the
                # program's name alone: that is dreamdb --version --vault X, or click's own message (dreamdb --
                # --vault X status said "dreamdb --version has no --vault option": QA round 135-A F6). Whatever click
                # finds close to it (QA round 147-B F7: eval's --data, so that "No such option '--vault'. Did you mean
                # '--data'?" was said)
                name = exc.ctx.command_path.partition(" ")[2] or "--version"
                why = "it scores its own sets, found under --data" if name == "eval" else "it reads no vault's index"
                subs = getattr(exc.ctx.command, "commands", {})
                takes = sorted(n for n, c in subs.items() if any("--vault" in p.opts for p in c.params))
                exc.message = (f"dreamdb {name} takes --vault after its command ({', '.join(takes)}): dreamdb {name}"
                               f" {'status' if 'status' in takes else takes[0]} --vault PATH." if takes else  # (not "reads no vault's index": QA 133 F1)
                               f"dreamdb {name} has no --vault option ({why}): leave it out.")
                exc.possibilities = None  # (no "Did you mean '--data'?" after "leave it out")
            shown = _Shown()
            exc.show(file=shown)  # (its usage line and Error: line, as every stderr line: say; QA round 135-B F1)
            # (the Error: line one line: an argument quoted with a newline forged a second one, QA round 139-D F3)
            usage, error, message = shown.getvalue().removesuffix("\n").partition("Error: ")
            if usage or not error:
                say(usage.removesuffix("\n"))
            if error:
                say(error + message, one_line=True)
            json_error(exc.format_message(), None, exc.exit_code)  # with --json: on stdout too
            code = exc.exit_code
        except click.Abort as exc:  # Ctrl-C inside click
            from dreamdb.cli.options import Interrupted
            from dreamdb.quickcli import interrupted, saved_change

            if saved_change() is not None:  # a write that is on disk: done, not to be repeated
                code = interrupted()
                return
            if quickcli.STARTED:  # (QA round 151-G F3: the error object was glued onto the rows written so far)
                say("Interrupted while the result was written: standard output holds part of it.")
            elif not isinstance(exc, Interrupted):  # (else the command said what the interruption left)
                say("Interrupted.")  # (as everywhere else, not click's "Aborted.")
            json_error(getattr(exc, "said", None) or "Interrupted.", None, 130)  # (none after part of the result)
            code = 130

    return run_guarded(run) or code
