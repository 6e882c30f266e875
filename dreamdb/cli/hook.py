"""``dreamdb hook``: the agent prompt hook and its installation."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import click

from dreamdb.cli.options import ExistingPath, SuggestingGroup, json_option, say
from dreamdb.hook_settings import PROJECT_HINT


@click.group("hook", cls=SuggestingGroup)
def hook():
    """Agent prompt hook (Claude Code UserPromptSubmit).

    \b
    Install it in a project:   dreamdb hook install
    Opt out for a session:     DREAMDB_MEMORY_HOOK=0
    """


# (its own epilog: the exit codes every other command lists contradicted "always exits 0", QA round 51; and
# Claude Code reads a hook's exit code 2 as "block this prompt and erase it": an option this command does not
# take, as from a hand-edited settings.json or `hook install --command`, is logged and ignored, QA round 52)
@hook.command("user-prompt-submit", short_help="The hook itself: prompt payload on stdin.",
              context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
              epilog="Exit code: always 0, whatever the payload, the index or the arguments (a hook must never block the"
                     " prompt: Claude Code reads exit code 2 as 'block it'); arguments it does not take are ignored and"
                     " noted in the hook log.")
@click.option("-h", "--help", "show_help", is_flag=True, help="Show this message and exit.")
@click.pass_context
def user_prompt_submit(ctx, show_help):
    """Read the hook payload on stdin, print the memory-recall block if the match is strong.

    Always exits 0; failures print nothing and go to the hook log
    ($DREAMDB_HOOK_LOG, default in the user cache folder).

    \b
    Example (what Claude Code sends on stdin; cwd is the project's folder, absolute):
      echo '{"prompt": "how is sleep debt computed", "cwd": "'"$PWD"'"}' | dreamdb hook user-prompt-submit
    """
    if show_help:
        click.echo(ctx.get_help())
        return
    from dreamdb.hook import note_ignored_arguments, run_stdin

    note_ignored_arguments(ctx.args)
    run_stdin()


def _shown_whole(project: Path) -> Path:
    """``--project`` as an absolute path, for what is said of it: ``./~/p`` is the folder ``~`` here, which ``Path``
    writes ``~/p``, and a message naming ``~/p/.claude/settings.json`` read as the home folder's (QA round 122-A).
    As given when the working folder is gone (the install then says why it cannot write)."""
    try:
        return Path(os.path.abspath(project))
    except OSError:
        return project


@hook.command("install", short_help="Add the hook to a project's .claude/settings.json.")
@click.option("--project", type=ExistingPath(folder=True, what="project folder", hint=PROJECT_HINT, path_type=Path),
              default=".", show_default=True,
              help="Project folder whose .claude/settings.json gets the hook.")
@click.option("--command", "command", default=None,
              help="Hook command. Default: 'dreamdb hook user-prompt-submit' when dreamdb is on PATH by itself; "
                   "the absolute path of this dreamdb when it is found only in a virtualenv's bin folder (activated or put on PATH).")
@click.option("--absolute", is_flag=True, help="Install this dreamdb's absolute path even when dreamdb is on PATH.")
@click.option("--local", is_flag=True,
              help="Write .claude/settings.local.json (your own settings, not committed: one it makes in a git clone"
                   " is ignored there, in .git/info/exclude) instead of settings.json.")
@json_option
def install(project, command, absolute, local, as_json):
    """Add the prompt hook to PROJECT/.claude/settings.json (merges, keeps a .bak, idempotent).

    The previous settings go to settings.json.bak, or to the next free name
    (settings.json.bak.1 …) where a .bak dreamdb did not write is there.

    Claude Code runs the command for every prompt, outside your shell's
    virtualenv: a dreamdb installed in a virtualenv is therefore written by
    its absolute path (.claude/settings.json is often shared: teammates with
    another path can use --command, or --local to keep the hook in their own
    .claude/settings.local.json).

    \b
    Examples:
      dreamdb hook install
      dreamdb hook install --project ~/code/app --absolute
      dreamdb hook install --command 'uvx dreamdb hook user-prompt-submit'
      dreamdb hook install --local
    """
    from dreamdb import output
    from dreamdb.hook_settings import DEFAULT_COMMAND, install_hook

    project = _outside_vault(_shown_whole(project))

    from dreamdb.hook_settings import (MAX_SETTINGS_BYTES, dreamdb_hook_commands, is_dreamdb_hook, runs_bare_dreamdb,
                                       runs_dreamdb, runs_hook_alone, settings_path)

    if command and absolute:
        from dreamdb.errors import UsageError

        raise UsageError("Give --command or --absolute, not both.",
                         hint="--absolute installs this dreamdb's absolute path; --command CMD installs CMD as it is"
                              " written (put the absolute path in it yourself).")
    given = command is not None
    command = command if given else _hook_command(DEFAULT_COMMAND, absolute)  # "" is refused below
    target, other = settings_path(project, local), settings_path(project, not local)
    if given and command.strip() and command.split() != DEFAULT_COMMAND.split() and project.is_dir():
        # (any other form, dreamdb's too: a redirection to a folder that is not there exits 2 in dash, QA round 109-A
        # F4; not when it is installed already, or when the settings would be refused anyway, F6)
        from dreamdb.hook_settings import check_settings, hook_commands

        # (not when this command is in the file already, or dreamdb's hook is in the other one, where install stops:
        # QA round 110-A F6a, b)
        # (nor when a dreamdb hook among other commands is in it, which install keeps: QA round 139-D F5)
        if command not in hook_commands(target) and not (dreamdb_hook_commands(other)
                                                          and not dreamdb_hook_commands(target)) \
                and all(runs_hook_alone(c) for c in dreamdb_hook_commands(target)):
            check_settings(project, command, local)
            _try_command(command, project)
        elif command in hook_commands(target) and not is_dreamdb_hook(command) and runs_dreamdb(command):
            # (said, not refused: QA round 127-B F4, a mistyped dreamdb hook that could not start at its install, 127,
            # was "already installed" once it ran, and exited 2; another program is not run again, QA round 110-A F6)
            _try_command(command, project, installed=target)
    from dreamdb import quickcli
    from dreamdb.hook_settings import settings_lock

    # (QA round 68 M3, M4: a teammate's command in a shared settings.json was replaced without a word, and a
    # hook in the other settings file got a second one beside it: Claude Code runs both files' hooks)
    with settings_lock(project):  # (both files read, one written, as one step: QA round 100-B F2)
        in_target, in_other = dreamdb_hook_commands(target), dreamdb_hook_commands(other)
        if in_other and not in_target and project.is_dir():
            remove = (_hook_cli("uninstall", project) if runs_hook_alone(in_other[0]) else
                      f"remove it from {other} by hand ({_AMONG_OTHERS})")
            _already(as_json, other, in_other[0], f"Claude Code runs the hooks of both {target.name} and {other.name},"
                     f" so a second one would add the memories twice. To move it: {remove}, then"
                     f" {_hook_cli('install', project)}{' --local' if local else ''}.")  # (the file asked for: QA
            # round 78-A F5; the project named, and the dreamdb that runs: QA round 156-F F1)
            return
        among_others = [c for c in in_target if not runs_hook_alone(c)]
        if among_others and command not in in_target and project.is_dir():  # (QA round 139-D F5: a second hook was
            # added beside a hand-written `cd X && dreamdb hook user-prompt-submit`, and each prompt got two blocks)
            _already(as_json, target, among_others[0], "It runs dreamdb's hook among other commands, so a second hook"
                     " would add the memories twice, and replacing it would remove those commands. To install another"
                     f" command, remove it from {target} by hand first ({_AMONG_OTHERS}).")
            return
        explicit = given or absolute
        if in_target and command not in in_target and not explicit and project.is_dir():
            _already(as_json, target, in_target[0], f"It is another command than this machine's ({command}); a shared"
                     " settings file may hold a teammate's. To replace it: --absolute, or --command CMD.")
            return
        before = target.read_bytes() if target.is_file() and target.stat().st_size <= MAX_SETTINGS_BYTES else None
        made = not os.path.lexists(target)
        backups: list[Path] = []
        path = install_hook(project, command, local=local, backups=backups)
        changed = before is None or path.read_bytes() != before

    if given and not is_dreamdb_hook(command):
        say("note: this command is not `dreamdb hook user-prompt-submit` as dreamdb writes it, so it is not "
            f"recognised as dreamdb's hook: `{_hook_cli('uninstall', project)}` leaves it, and another install adds a "
            f"second hook beside it. Remove it from {path} by hand when done.")
    elif given and not runs_hook_alone(command):
        say(f"note: this command runs other commands beside dreamdb's hook, so `{_hook_cli('uninstall', project)}`"
            " leaves it"
            f" ({_AMONG_OTHERS}). Remove it from {path} by hand when done.")
    # (the default typed is not run once, as other commands are: QA round 144-H F3, it was installed without a word
    # where Claude Code found no dreamdb, exit 127; and any other command of a bare dreamdb passes its trial run in the
    # activated virtualenv, which Claude Code's shell is not: 144-J F3, 'DREAMDB_VAULT=/x dreamdb hook …')
    unfound = _bare_dreamdb_unfound() if given and runs_bare_dreamdb(command) else None
    if unfound is not None:
        absolute_form = _hook_command(DEFAULT_COMMAND, absolute=True)
        fix = (f"install again with --absolute, without --command (it writes `{absolute_form}`)"
               if command.split() == DEFAULT_COMMAND.split() else
               f"install again with it in the command in place of `dreamdb` (`{absolute_form}` runs the hook)")
        say(f"note: {unfound}, so Claude Code may not find the command's bare `dreamdb`: the hook would then fail"
            f" on every prompt (exit code 127), adding no memories. Installed all the same; to write this dreamdb's"
            f" absolute path instead, {fix}.")

    quickcli.SAVED = f"the hook is in {path}"  # an unwritable report must not hide that it is done
    if local and made:  # (one person's settings, "not committed": QA round 144-B F4, `git add -A` committed them)
        from dreamdb.hook_settings import ignore_in_git

        ignoring = ignore_in_git(path)
        if ignoring:
            say(f"note: {ignoring}")
    if given and _ignored_vault_option(command):
        say("note: the hook takes no --vault (its arguments are ignored, and logged): it reads the vault in or"
            " above the prompt's folder, or the project's ($CLAUDE_PROJECT_DIR), else DREAMDB_VAULT's. For a"
            " vault of its own, set DREAMDB_VAULT in the command's environment: --command 'DREAMDB_VAULT=PATH"
            " dreamdb hook user-prompt-submit'.")
    _warn_without_vault(project)
    _warn_user_level_hook(path)
    home = False
    from dreamdb.extras import dreamdb_command

    with contextlib.suppress(OSError, RuntimeError):
        home = Path(project).resolve() == Path.home().resolve()
        if not local and home:  # (QA round 110-B F4: said only that there was no vault;
            # ~/.claude/settings.local.json is no user setting: 112-A F5)
            say(f"note: {path} holds your user settings: Claude Code runs this hook in every project (it prints"
                f" nothing where no vault is found). For one project, install it there: {dreamdb_command()} hook"
                " install --project PATH.")
    program = None if local or home else _machine_path(command)
    if program is not None:  # (QA round 147-D F4: a virtualenv's dreamdb went into the shared file without a word)
        say(f"note: the hook runs {program}, a path of this machine, and {path.name} is the project's shared settings"
            " (committed with it): where a teammate has no such file, Claude Code's hook fails on every prompt. To"
            f" keep it to this machine, use --local (.claude/settings.local.json, not committed):"
            f" {_hook_cli('uninstall', project)}, then {_hook_cli('install', project)} --local.")
    replaced = [c for c in in_target if c != command] if changed else []
    shown = output.visible_id  # (on its line: a folder named with ESC ]0; and a newline, QA round 139-D F1)
    if as_json:
        quickcli.json_reported(output.to_json({"installed": True, "changed": changed, "settings": str(path), "command": command,
                                   **({"replaced": replaced[0]} if replaced else {}),
                                   **({"backup": str(backups[0])} if backups else {})}))
        return
    if replaced:
        click.echo(f"Prompt hook updated in {shown(path)}: {shown(replaced[0])} → {shown(command)}")
    elif changed:
        click.echo(f"Prompt hook installed in {shown(path)}: {shown(command)}")
    else:
        click.echo(f"Prompt hook already installed in {shown(path)}: {shown(command)}")
    if backups:  # (where the previous file went: QA round 156-C F2, a .bak the user had was replaced without a word)
        click.echo(_backup_line(path, backups[0]))


def _backup_line(path: Path, backup: Path) -> str:
    """The line that says where the previous version of the settings file ``path`` was kept (``backup``), and that the
    ``.bak`` passed over (a file dreamdb did not write) is left as it is."""
    from dreamdb import output

    passed = path.with_name(path.name + ".bak")
    over = "" if backup == passed else f" ({output.visible_id(passed.name)}, which dreamdb did not write, is left as it is)"
    return f"The previous {output.visible_id(path.name)} is kept in {output.visible_id(backup)}{over}."


_AMONG_OTHERS = "dreamdb hook uninstall leaves a hook that runs other commands too: removing it would remove them"
"""Why a dreamdb hook run among other shell commands is the user's to remove (:func:`dreamdb.hook_settings.runs_hook_alone`)."""


def _outside_vault(project: Path) -> Path:
    """``project``, unless it is a vault folder or lies in one (:func:`dreamdb.hook_settings.vault_holding`), whose
    settings Claude Code never reads (QA round 139-C F1: install wrote them into the vault): then the vault's project
    (its parent) when ``project`` is the current folder, by default, said in a note; refused when ``--project``
    named it.

    Raises:
        UsageError: ``--project`` named the vault or a folder in it (the hint names the project's folder).
    """
    from click.core import ParameterSource

    from dreamdb.hook_settings import in_vault_words, refuse_vault_folder, vault_holding

    vault = vault_holding(project)
    if vault is None:
        return project
    if click.get_current_context().get_parameter_source("project") is not ParameterSource.DEFAULT:
        refuse_vault_folder(project)
    say(f"note: the current folder {project} is {in_vault_words(project, vault)}, where Claude Code reads no"
        f" settings: the vault's project {vault.parent} is used.")
    return vault.parent


def _own_dreamdb_folder() -> str | None:
    """The folder of this dreamdb's ``dreamdb`` program (a virtualenv's ``bin``, the script this runs as), or
    ``None`` when none is found there."""
    import sys

    for folder in (Path(sys.argv[0]).parent, Path(sys.executable).parent):
        if os.access(folder / "dreamdb", os.X_OK) and (folder / "dreamdb").is_file():
            return str(folder)
    return None


def _try_command(command: str, project: Path, installed: Path | None = None) -> None:
    """Run a hook command that is not dreamdb's as written once, as Claude Code would for a prompt, before it is
    installed: refuse it when it exits 2, which makes Claude Code block and erase every prompt (QA round 108-B F3: a
    mistyped ``dreamdb hook user_prompt_submit`` was installed, a usage error exiting 2), and say any other failure.
    A command the settings file ``installed`` holds already is not refused (there is nothing to install): its failure
    is said, with how to remove it.

    Raises:
        UsageError: the command exits 2 (and is not installed already).
    """
    from dreamdb.errors import UsageError
    from dreamdb.hook_settings import BLOCKING_EXIT, DEFAULT_COMMAND, TRIAL_SECONDS, runs_dreamdb, trial_run

    import threading

    slow = threading.Timer(3.0, lambda: say(f"note: running the command once as the hook would (up to"
                                            f" {TRIAL_SECONDS} s; twice when it runs dreamdb, which is not on"
                                            " this PATH)…"))
    slow.daemon = True
    slow.start()  # (QA round 109-A F6: 61 s without a word)
    try:
        code, said = trial_run(command, project)
        here = _own_dreamdb_folder() if code == 127 and runs_dreamdb(command) else None
        if here is not None:  # (dreamdb not on this shell's PATH: a typo of its hook replaced a working one, "Installed
            # all the same", QA round 128-B F4; tried again with this dreamdb's folder first on PATH)
            again, said_again = trial_run(command, project, path_first=here)
            if again == BLOCKING_EXIT or again is None:  # (exit 2, or a hang: either with dreamdb found; QA round
                # 129-A F4, a hang there was dropped, the 127 said)
                code, said = again, f"{said_again}; run with {Path(here) / 'dreamdb'}, as no dreamdb is on this PATH"
    finally:
        slow.cancel()
    if code == BLOCKING_EXIT and installed is not None:
        say(f"note: this command, which {installed} holds already, exits with code 2 when run as the hook"
            f" ({said or 'nothing on stderr'}); Claude Code reads that as \"block this prompt\", so every prompt is"
            f" erased. Remove it from {installed} by hand (dreamdb hook uninstall leaves a command that is not"
            f" dreamdb's own), then run {_hook_cli('install', project)} again, without --command (dreamdb's own,"
            f" `{DEFAULT_COMMAND}`) or with one that works.")
        return
    if code == BLOCKING_EXIT:
        raise UsageError(f"The command exits with code 2 when run as the hook ({said or 'nothing on stderr'}); Claude"
                         " Code reads exit code 2 from a prompt hook as \"block this prompt\", so every prompt would be"
                         " erased. Nothing was installed.",
                         hint=f"Check the command (dreamdb's own is `{DEFAULT_COMMAND}`), then install again.")
    if code is None or code != 0:
        why = said if code is None else f"exit code {code}" + (f": {said}" if said else "")
        then = (" and goes on with the prompt" if code is not None else  # (QA round 114-C F4c: a hang is a wait)
                ", after waiting for it up to the hook's time limit (60 s unless the settings give one), on every prompt")
        say(f"note: the command failed when run once as the hook ({why}); Claude Code shows such a failure"
            f"{then}. {'It is installed already' if installed is not None else 'Installed all the same'}.")


def _ignored_vault_option(command: str) -> bool:
    """Whether ``command`` gives dreamdb's hook a ``--vault`` it ignores (QA round 118-A F5: installed without a
    word, and the hook printed nothing for a project without a vault of its own)."""
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    return "user-prompt-submit" in argv and any(a == "--vault" or a.startswith("--vault=") for a in argv)


def _machine_path(command: str) -> str | None:
    """The first program ``command`` runs that it names by an absolute path outside the system's own ``/bin`` and
    ``/usr/bin``: a path of this machine, such as a virtualenv's ``dreamdb``, that another machine may not have; else
    ``None``. Each command of a list (``cd DIR && /x/.venv/bin/dreamdb …``) counts, after its ``NAME=value``
    settings and an ``env`` that runs it (``env X=1 /x/bin/dreamdb``); ``/usr/bin/env dreamdb`` runs the ``dreamdb``
    of each machine's PATH (QA round 147-I F2: it was said to be this machine's, and the other two forms were not)."""
    import re
    import shlex

    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    setting = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.S)
    starts = True  # (the next word may name a command's program)
    for word in words:
        if word and set(word) <= set("&|;()"):  # (a list's or pipeline's operator: a command starts after it)
            starts = True
            continue
        if not starts or setting.fullmatch(word):
            continue
        if os.path.basename(word) == "env" or (word.startswith("-") and word != "-"):
            continue  # (env and its options: the program comes after them)
        starts = False
        if os.path.isabs(word) and os.path.dirname(os.path.normpath(word)) not in ("/bin", "/usr/bin"):
            return word
    return None


def _warn_user_level_hook(path: Path) -> None:
    """Say when the user's own settings (``~/.claude/settings.json``) hold dreamdb's hook too: Claude Code runs the
    hooks of both files, so each prompt would get the memories twice (QA round 108-B F5)."""
    import shlex

    from dreamdb.extras import dreamdb_command
    from dreamdb.hook_settings import dreamdb_hook_commands

    try:
        user = Path.home() / ".claude" / "settings.json"
        if user.resolve() == path.resolve():
            return
    except (OSError, RuntimeError):  # (no home; a loop)
        return
    found = dreamdb_hook_commands(user)
    if found:
        say(f"note: {user} (your user settings) holds dreamdb's hook too ({found[0]}); Claude Code runs the"
            f" hooks of both files, so each prompt gets the memories twice. Keep one: {dreamdb_command()} hook"
            f" uninstall --project {shlex.quote(str(Path.home()))}, or this one:"
            f" {_hook_cli('uninstall', path.parent.parent)}.")


def _hook_cli(words: str, project: Path) -> str:
    """The ``hook <words>`` command a note tells to run on ``project``: named by the dreamdb that runs
    (:func:`dreamdb.extras.dreamdb_command`: its path where a bare ``dreamdb`` is not on PATH), with ``--project
    <project>`` unless ``project`` is the working folder (QA round 156-F F1: "dreamdb hook uninstall, then dreamdb
    hook install --local" was "command not found" when run by its path, and pasted from another folder, uninstalled
    nothing and installed the hook in the working folder)."""
    import shlex

    from dreamdb.extras import dreamdb_command

    there = f" --project {shlex.quote(str(project))}"
    with contextlib.suppress(OSError):
        there = "" if Path(project).resolve() == Path.cwd().resolve() else there
    return f"{dreamdb_command()} hook {words}{there}"


def _already(as_json: bool, path: Path, existing: str, why: str) -> None:
    """Report a dreamdb hook already installed with ``existing`` in ``path``, left as it is (nothing written), and
    what is wrong with it, when its program is gone or another version of dreamdb (:func:`_kept_command_problem`)."""
    from dreamdb import output, quickcli

    quickcli.SAVED = f"the hook is in {path}"
    if as_json:
        quickcli.json_reported(output.to_json({"installed": True, "changed": False, "settings": str(path), "command": existing,
                                   "kept": True}))
    else:
        click.echo(f"Prompt hook already installed in {output.visible_id(path)}: {output.visible_id(existing)}"
                   " (left as it is)")  # (QA round 139-D F1)
    problem = _kept_command_problem(existing)
    if problem:
        why = f"{problem}. {why}"
    say(f"note: {why}")


def _kept_command_problem(command: str) -> str | None:
    """What is wrong with a hook command kept in the settings, found without running it (a shared settings file may
    hold anything): its program, named by an absolute path, is gone, or is the ``dreamdb`` of a virtualenv holding
    another version (QA round 115-B F2: an old install's hook failed on every prompt, or could not read the index a
    newer version wrote, and install said only that it was installed). ``None`` when nothing is seen wrong."""
    import shlex

    from dreamdb import __version__

    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    program = argv[0] if argv else ""
    if not os.path.isabs(program):
        return None  # (found on the PATH Claude Code gives it, which may not be this one's)
    if not os.path.isfile(program) or not os.access(program, os.X_OK):
        return (f"the installed hook's program {program} does not exist (or cannot be run): every prompt's hook fails,"
                " and no memories are added")
    import re
    import sys

    if os.path.basename(program) == "dreamdb":
        env = Path(program).resolve().parent.parent
    elif re.fullmatch(r"python[0-9.]*", os.path.basename(program)) and argv[1:3] == ["-m", "dreamdb"]:
        env = Path(os.path.abspath(program)).parent.parent  # (a virtualenv's python links to the base one: not
        # resolved; QA round 118-B F10, "/other-venv/bin/python -m dreamdb hook …" was not looked at)
    else:
        return None
    if env == Path(sys.prefix).resolve():  # (this very install, by another path: QA round 117-A F6)
        return None
    versions = {p.name[len("dreamdb-"):-len(".dist-info")] for p in env.glob("lib/python*/site-packages/dreamdb-*.dist-info")}
    if len(versions) == 1 and __version__ not in versions:
        return (f"the installed hook runs dreamdb {versions.pop()} (this one is {__version__}): two versions on one "
                "vault may index it whole at every switch, and an older one may not read the index a newer one wrote")
    return None


def _warn_without_vault(project) -> None:
    """On stderr: the hook stays silent in a project where no vault is found (it looks from the prompt's folder up)."""
    from dreamdb.errors import NoVaultFound, VaultNotFound
    from dreamdb.vault.discover import VAULT_DIR_NAME, VAULT_OPTION, _walk_up, find_vault

    without_option = VAULT_OPTION.set(False)  # (the hook takes no --vault: QA round 140-C F7c, said to pass one)
    try:
        try:  # (as the hook finds it, the project's first: QA round 139-C, DREAMDB_VAULT's was said found above it)
            vault, where = _walk_up(Path(project)), f"found above {project}"
        except NoVaultFound:
            vault = find_vault(None, cwd=project, project_first=True)  # DREAMDB_VAULT's, when it is set
            where = f"named by DREAMDB_VAULT, as none is in or above {project}"
        # (the vault the hook will read, said when it is not the project's own: one found above it, another
        # project's or a stray one, would give this project's prompts its memories; QA round 102-B F3; the project's
        # own _dream_context, a link to a vault elsewhere, is its own: QA round 139-C)
        own = Path(project) / VAULT_DIR_NAME
        if not (own.is_dir() and own.resolve() == vault.resolve()):
            say(f"note: the hook reads the vault {vault}, {where}: prompts in this project get"
                f" its memories (create {own} for a vault of the project's own).")
    except NoVaultFound:
        say(f"note: no _dream_context/ folder in or above {project}: the hook prints nothing until there "
            "is one (see the README, \"Which files become documents\").")
    except VaultNotFound as exc:  # found and unusable: its path not UTF-8, unreadable (QA round 65 L2)
        fix = f" ({exc.hint[:1].lower()}{exc.hint[1:].rstrip('.')})" if exc.hint else ""
        say(f"note: {exc.message.rstrip('.')}: the hook prints nothing until that is fixed{fix}.")
    except Exception:  # noqa: BLE001 - only a note: never fail an install that succeeded
        pass
    finally:
        VAULT_OPTION.reset(without_option)


def _bare_dreamdb_unfound() -> str | None:
    """Why a bare ``dreamdb`` would not be found where Claude Code runs the hook, or ``None`` when ``dreamdb`` is on
    PATH by itself (a global or pipx install). A ``dreamdb`` found only in the running virtualenv's ``bin``, whether the
    shell activated it or put that folder on PATH, counts as not on PATH: Claude Code does not run hooks inside that
    shell's environment (QA round 155-B F3: the help said "activated", which it need not be)."""
    import shutil
    import sys

    found = shutil.which("dreamdb")
    if found is None:
        return "no dreamdb is on this PATH"
    in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
    venv_bin = os.path.realpath(os.path.join(sys.prefix, "Scripts" if os.name == "nt" else "bin"))
    if in_venv and os.path.realpath(os.path.dirname(found)) == venv_bin:
        return (f"dreamdb is on this PATH only through the virtualenv {os.path.dirname(found)} (activated or put on PATH),"
                " which Claude Code does not put on its hooks' PATH")
    return None


def _hook_command(default: str, absolute: bool = False) -> str:
    """The hook command to install.

    ``dreamdb hook user-prompt-submit`` when ``dreamdb`` is on PATH by itself (a global or pipx
    install); an absolute command otherwise, or with ``absolute``. A ``dreamdb`` found only in the
    active virtualenv's ``bin`` counts as not on PATH: Claude Code does not run hooks inside that
    shell's activation, so a bare command would not be found there.
    """
    import os
    import shlex
    import shutil
    import sys

    if not absolute and _bare_dreamdb_unfound() is None:
        return default
    found = shutil.which("dreamdb")
    exe = os.path.abspath(sys.argv[0]) if sys.argv and os.path.basename(sys.argv[0]).startswith("dreamdb") else None
    if exe and os.access(exe, os.X_OK):
        return f"{shlex.quote(exe)} hook user-prompt-submit"
    if found and os.access(found, os.X_OK):
        return f"{shlex.quote(os.path.abspath(found))} hook user-prompt-submit"
    beside = os.path.join(os.path.dirname(sys.executable), "dreamdb")  # the console script of this environment
    if os.access(beside, os.X_OK):
        return f"{shlex.quote(os.path.abspath(beside))} hook user-prompt-submit"
    # -P: the hook runs in the project's folder, whose own dreamdb.py must not be imported (QA round 60 H1)
    return f"{shlex.quote(sys.executable)}{' -P' if sys.version_info >= (3, 11) else ''} -m dreamdb hook user-prompt-submit"


@hook.command("uninstall", short_help="Remove the hook (other hooks untouched).")
@click.option("--project", type=ExistingPath(folder=True, what="project folder", hint=PROJECT_HINT, path_type=Path),
              default=".", show_default=True,
              help="Project folder whose .claude/settings.json and settings.local.json lose the hook.")
@json_option
def uninstall(project, as_json):
    """Remove dreamdb's prompt hook from PROJECT/.claude/settings.json and settings.local.json
    (other hooks untouched; the previous file kept as <name>.bak, or <name>.bak.1 … where a .bak
    dreamdb did not write is there). A settings file that held
    nothing but the hook, as an install wrote it, is deleted, with a .bak that holds only an
    install's file too (one written or edited by hand is kept, as {}).

    \b
    Examples:
      dreamdb hook uninstall
      dreamdb hook uninstall --project ~/code/app --json
    """
    from dreamdb import output, quickcli
    from dreamdb.hook_settings import dreamdb_hook_commands, settings_path, uninstall_hooks

    project = _shown_whole(project)
    if not any(dreamdb_hook_commands(settings_path(project, local)) for local in (False, True)):  # (one an earlier
        project = _outside_vault(project)  # version installed into the vault is removed from there: QA round 139-C F1)
    backups: list[Path] = []
    paths = uninstall_hooks(project, backups=backups)
    deleted = [p for p in paths if not os.path.lexists(p)]  # (a file that held the hook alone)
    kept = {p: b for p in paths for b in backups  # (each settings file's backup, beside it: settings.json.bak…)
            if b.parent == p.parent and (b.name == f"{p.name}.bak" or b.name.startswith(f"{p.name}.bak."))}
    # (the hooks that run other commands too, left: QA round 139-D F5, "Prompt hook removed" was said with one left)
    left = [(p, c) for p in (settings_path(project), settings_path(project, local=True))
            for c in dreamdb_hook_commands(p)]
    if as_json:
        quickcli.json_reported(output.to_json({"removed": bool(paths), "settings": [str(p) for p in paths],
                                               "deleted": [str(p) for p in deleted],
                                               **({"backups": [str(b) for b in backups]} if backups else {}),
                                               **({"left": [{"settings": str(p), "command": c} for p, c in left]}
                                                  if left else {})}))
    elif paths:
        click.echo("\n".join(f"Prompt hook removed from {output.visible_id(p)}"  # (QA round 139-D F1)
                             + ("; the file held nothing else, so it was deleted." if p in deleted else ".")
                             + (f" {_backup_line(p, kept[p])}" if p in kept else "")  # (QA round 156-C F2)
                             for p in paths))
    elif not left:
        click.echo("No dreamdb prompt hook was installed.")
    else:
        click.echo("No prompt hook was removed.")
    for p, c in left:
        say(f"note: {p} still runs dreamdb's hook, in a command that runs others too, left as it is:"
            f" {output.visible_id(c)}. Remove it by hand (removing the whole command would remove those commands too).")
