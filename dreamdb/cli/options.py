"""Option decorators shared by every command (sqlite-utils' habit)."""

from __future__ import annotations

import click


def _one_vault(ctx, param, value):
    """A repeated ``--vault`` on a one-vault command is an error, not "the last one wins" (a write
    must never go to a vault the user did not mean)."""
    if len(value) > 1:
        raise click.BadParameter(f"this command works on one vault; {len(value)} were given "
                                 "(only `dreamdb recall` searches several).", ctx=ctx, param=param)
    return value[0] if value else None


def vault_option(multiple: bool = False):
    """``--vault PATH`` (repeatable when ``multiple``)."""
    return click.option(
        "--vault", "vaults" if multiple else "vault", multiple=True, metavar="PATH",
        callback=None if multiple else _one_vault,
        help="Vault folder (_dream_context or a folder containing one). "
        + ("Repeat to search several vaults. " if multiple else "")
        + "Default: $DREAMDB_VAULT, else found by walking up from the current folder.",
    )


json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")


def open_index(vault):
    """Open one vault's index (the CLI's single path into the library)."""
    from dreamdb.api import open_index as _open

    return _open(vault)


def print_notes(index, extra=()) -> None:
    """``note:`` lines on stderr: ``extra`` (e.g. a sync report's warnings), then the index's notes
    (lazy-sync warnings, a damaged index rebuilt, a lock waited for)."""
    for note in [*extra, *index.take_notes()]:
        click.echo(f"note: {note}", err=True)


class Interrupted(click.Abort):
    """Ctrl-C on a command that has already said what the interruption left behind: the entry point
    exits 130 (with ``--json``, its JSON error) without adding click's "Aborted."."""
