"""Option decorators shared by every command (sqlite-utils' habit)."""

from __future__ import annotations

import click


def vault_option(multiple: bool = False):
    """``--vault PATH`` (repeatable when ``multiple``)."""
    return click.option(
        "--vault", "vaults" if multiple else "vault", multiple=multiple, metavar="PATH",
        help="Vault folder (_dream_context or a folder containing one). "
        + ("Repeat to search several vaults. " if multiple else "")
        + "Default: $DREAMDB_VAULT, else found by walking up from the current folder.",
    )


json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")


def open_index(vault):
    """Open one vault's index (the CLI's single path into the library)."""
    from dreamdb.api import open_index as _open

    return _open(vault)
