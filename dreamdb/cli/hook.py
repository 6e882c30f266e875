"""``dreamdb hook``: the agent prompt hook and its installation."""

from __future__ import annotations

from pathlib import Path

import click

from dreamdb.cli.options import json_option


@click.group("hook")
def hook():
    """Agent prompt hook (Claude Code UserPromptSubmit).

    \b
    Install it in a project:   dreamdb hook install
    Opt out for a session:     DREAMDB_MEMORY_HOOK=0
    """


@hook.command("user-prompt-submit")
def user_prompt_submit():
    """Read the hook payload on stdin, print the memory-recall block if the match is strong.

    Always exits 0; failures print nothing and go to the hook log
    ($DREAMDB_HOOK_LOG, default in the user cache folder).
    """
    from dreamdb.hook import run_stdin

    run_stdin()


@hook.command("install")
@click.option("--project", type=click.Path(file_okay=False, path_type=Path), default=".", show_default=True,
              help="Project folder whose .claude/settings.json gets the hook.")
@click.option("--command", "command", default=None, help="Hook command (default: dreamdb hook user-prompt-submit).")
@json_option
def install(project, command, as_json):
    """Add the prompt hook to PROJECT/.claude/settings.json (merges, keeps a .bak, idempotent)."""
    from dreamdb import output
    from dreamdb.hook_settings import DEFAULT_COMMAND, install_hook

    from dreamdb.hook_settings import settings_path

    command = command or _hook_command(DEFAULT_COMMAND)
    target = settings_path(project)
    before = target.read_bytes() if target.is_file() else None
    path = install_hook(project, command)
    changed = before is None or path.read_bytes() != before
    if as_json:
        click.echo(output.to_json({"installed": True, "changed": changed, "settings": str(path), "command": command}))
    elif changed:
        click.echo(f"Prompt hook installed in {path}: {command}")
    else:
        click.echo(f"Prompt hook already installed in {path}: {command}")


def _hook_command(default: str) -> str:
    """``dreamdb hook user-prompt-submit`` if ``dreamdb`` is on PATH, else an absolute command that works from anywhere."""
    import os
    import shlex
    import shutil
    import sys

    if shutil.which("dreamdb"):
        return default
    exe = os.path.abspath(sys.argv[0]) if sys.argv and os.path.basename(sys.argv[0]).startswith("dreamdb") else None
    if exe and os.access(exe, os.X_OK):
        return f"{shlex.quote(exe)} hook user-prompt-submit"
    return f"{shlex.quote(sys.executable)} -m dreamdb hook user-prompt-submit"


@hook.command("uninstall")
@click.option("--project", type=click.Path(file_okay=False, path_type=Path), default=".", show_default=True)
@json_option
def uninstall(project, as_json):
    """Remove dreamdb's prompt hook from PROJECT/.claude/settings.json (other hooks untouched)."""
    from dreamdb import output
    from dreamdb.hook_settings import uninstall_hook

    removed = uninstall_hook(project)
    if as_json:
        click.echo(output.to_json({"removed": removed}))
    else:
        click.echo("Prompt hook removed." if removed else "No dreamdb prompt hook was installed.")
