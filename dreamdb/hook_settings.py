"""Install and remove dreamdb's Claude Code ``UserPromptSubmit`` hook.

The hook lives in ``<project>/.claude/settings.json`` (shared with the team) or, installed with
``local=True``, in ``<project>/.claude/settings.local.json`` (one person's, not committed)::

    {"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "dreamdb hook user-prompt-submit"}]}
    ]}}

Both functions merge with what is there: other keys, other events and other
hooks are kept as they are (their values and key order). Before an existing
file changes, its previous bytes are saved to ``settings.json.bak`` (but by an
install over a file only an install wrote, which keeps the ``.bak`` there; a ``.bak`` dreamdb did not write is
never replaced: the next free name, ``settings.json.bak.1`` …, is taken instead), with the
file's own permission bits (a private ``settings.local.json`` may hold tokens in
``env``); the new file is written atomically (temp file + fsync + rename) with
the file's own indentation (2 spaces for a new file) and line endings (CRLF kept), its numbers as written.
A ``settings.json`` that is a symlink (to a dotfiles repository, say) stays
one: the file it points to is replaced. An existing file that is not valid
JSON (``NaN`` and ``Infinity`` are not), or whose ``hooks`` part has an
unexpected shape, is never rewritten.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shlex
import stat
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dreamdb.errors import DreamdbError, NotFound, UsageError, WriteRefused

__all__ = ["DEFAULT_COMMAND", "dreamdb_hook_commands", "EVENT", "ignore_in_git", "install_hook", "is_dreamdb_hook",
           "runs_hook_alone", "settings_lock", "settings_path", "uninstall_hook", "uninstall_hooks"]

DEFAULT_COMMAND = "dreamdb hook user-prompt-submit"
EVENT = "UserPromptSubmit"


def settings_path(project_dir: Path, local: bool = False) -> Path:
    """Return ``<project_dir>/.claude/settings.json``, or ``settings.local.json`` when ``local`` (it need not exist)."""
    return Path(project_dir) / ".claude" / ("settings.local.json" if local else "settings.json")


def is_dreamdb_hook(command: object, ours: str = DEFAULT_COMMAND) -> bool:
    """Tell whether a hook command runs dreamdb's prompt hook, alone or among other shell commands
    (:func:`runs_hook_alone` tells which).

    Args:
        command: the hook's ``command`` value.
        ours: the command dreamdb installed.

    Returns:
        True for ``ours`` itself (blanks aside), and for any command of which a simple command (those joined by
        ``&&``, ``||``, ``;``, a newline, ``|``, ``&``; read as the shell reads it, :func:`_shell_tokens`) has
        dreamdb for its program, with arguments the CLI runs as the hook (:func:`dreamdb.entry._is_hook`:
        ``dreamdb --vault=/x hook user-prompt-submit``, ``dreamdb hook user-prompt-submit --json``): a path to
        ``dreamdb`` (``dreamdb.exe``, a Windows path), ``<python> -m dreamdb``, after environment settings
        (``PYTHONPATH=… dreamdb …``) and wrappers (``env A=b``, ``nice``, ``timeout 10``, ``command``, a runner:
        ``uvx``, ``pipx run``, ``uv run``; ``dreamdb@0.1`` pinned, :func:`_programs`); redirections (``2>/dev/null``;
        only a redirection's own operators, :data:`_REDIRECTIONS`) are not its arguments. A hand-written ``cd
        "$CLAUDE_PROJECT_DIR" && dreamdb hook user-prompt-submit`` is one too (QA round 139-D F5: an install added
        a second hook beside it, and each prompt got the memories twice), and so is a shell's ``-c`` script that is
        one (``bash -c '…'``, always among others). Another program's argument is not (``echo dreamdb hook
        user-prompt-submit``).
    """
    return _hook_form(command, ours) is not None


def runs_hook_alone(command: object, ours: str = DEFAULT_COMMAND) -> bool:
    """Whether a hook command runs dreamdb's prompt hook (:func:`is_dreamdb_hook`) and nothing else: with its
    redirections, and at most a fallback that does nothing (``|| true``, ``|| :``, ``|| exit 0``), written as a plain
    command (:data:`_PLAIN_COMMAND`: no ``$(…)``, backslash, ``&>``, braces or comment after it). Such a command
    is dreamdb's to replace and remove; one that runs other commands too (``cd X && dreamdb hook
    user-prompt-submit``, ``dreamdb hook user-prompt-submit | tee log``) is the user's work, left as it is."""
    return _hook_form(command, ours) == "alone"


def _hook_form(command: object, ours: str) -> str | None:
    """``"alone"`` or ``"among others"`` as a hook command runs dreamdb's hook (:func:`runs_hook_alone`), else
    ``None``."""
    if not isinstance(command, str):
        return None
    if _BLANKS.split(command.strip(" \t")) == _BLANKS.split(ours.strip(" \t")):
        return "alone"
    try:
        commands = _simple_commands(command)
    except ValueError:
        return None
    forms = [_runs_the_hook(words, ours) for _op, words, _redirected in commands]
    hooks = [n for n, form in enumerate(forms) if form]
    if not hooks:
        return None
    if not _plain_command(command):
        return "among others"
    start = 0  # (blank lines and comments before it: QA round 141-B F5, they made it one among others)
    while start + 1 < len(commands) and commands[start][1:] == ([], False) and commands[start + 1][0] == "\n":
        start += 1
    # (nothing else runs: no command before it, and after it only a fallback that does nothing; never with an ANSI-C
    # quote, $'…', whose backslashes this reading does not know: QA round 141-B F4)
    alone = forms[hooks[0]] == "alone" and hooks[0] == start and "$'" not in command and all(
        op in ("||", ";", "\n") and words in _NO_OPS and not redirected
        for op, words, redirected in commands[start + 1:])
    return "alone" if alone else "among others"


def _plain_command(command: str) -> bool:
    """Whether ``command`` is of the plain form a command that runs dreamdb's hook alone must have
    (:data:`_PLAIN_COMMAND`), after blank lines and lines of a comment before it and blank lines after it: the
    allowlist before any reading of its words (QA round 142-A F1–F9: command substitutions, ``\\2>x``, ``&>``, ``>&-``,
    brace expansion, a carriage return in a word and more were read otherwise than the shell reads them, and a
    command of the user's was taken for dreamdb's hook alone and replaced or removed)."""
    lines = command.split("\n")
    while lines and not lines[-1].strip(" \t"):
        lines.pop()
    while lines and (not lines[0].strip(" \t") or lines[0].startswith("#")):
        lines.pop(0)
    return len(lines) == 1 and _PLAIN_COMMAND.fullmatch(lines[0]) is not None


def _plain_word(plain: str) -> str:
    """The pattern of a word of :data:`_PLAIN_COMMAND` whose unquoted and double-quoted characters are those of the
    character class ``plain``: pieces of them, ``'…'`` (no control character), ``"…"`` (of them, spaces, ``$NAME``,
    ``${NAME}`` and a backslash before one of them, kept as it is: a Windows path), ``$NAME`` and ``${NAME}``."""
    var = r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})"
    return rf"""(?:[{plain}]|'[^'\x00-\x1f\x7f]*'|"(?:[{plain} ]|{var}|\\[{plain} ])*"|{var})+"""


_PLAIN = r"A-Za-z0-9_./:@%+,=~\-"
_FIRST_WORD, _WORD = _plain_word(_PLAIN.replace("=", "")), _plain_word(_PLAIN)
_PLAIN_COMMAND = re.compile(
    rf"[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*=(?:{_WORD})?[ \t]+)*{_FIRST_WORD}(?:[ \t]+{_WORD})*"
    rf"(?:[ \t]+(?:[0-9]?(?:>>|>\||>|<)[ \t]*{_WORD}|[0-9]?[<>]&[0-9](?![^ \t;|])))*"
    r"(?:[ \t]*(?:\|\||;)[ \t]*(?:true|:|exit(?:[ \t]+0)?))?[ \t]*")
"""The form of a command that may run dreamdb's hook alone, as a whole: environment settings (``A=b``, the name
unquoted), words (no ``{``, ``}`` but ``${NAME}``, no ``$(``, backquote or backslash but in a quoted Windows path; the
program's no ``=``: ``"A=1"`` is a program's name), redirections after them (``2>/dev/null``, ``> log 2>&1``, ``>|
log``; not ``&>``, which dash reads as ``&`` then ``>``), and a fallback that does nothing (``|| true``, ``|| :``,
``; exit 0``). Anything else may run another command, and is at most one among others."""

_BLANKS = re.compile(r"[ \t]+")
"""What separates words and nothing else: a newline ends a command (QA round 140-C F1)."""

_NO_OPS = ([], ["true"], [":"], ["exit"], ["exit", "0"])
"""The commands after a hook that do nothing (``|| true``; ``[]``: after a closing ``;``)."""

_OPERATOR_CHARS = "();<>|&`"
"""The characters of the shell's operators (a run of them is one), a backquote's command substitution among them."""

_REDIRECTIONS = frozenset(("<", ">", ">>", "<>", ">&", "<&", "&>", "&>>", ">|"))
"""The operators that redirect a file (a file descriptor's number may come before them): any other run of operator
characters separates commands (QA round 141-B F1: ``&&>/dev/null touch x`` was read as a redirection, and the
command after it as its file), a here-document's ``<<`` among them (its text is lines of their own)."""

_RESERVED = frozenset(("{", "!", "if", "then", "else", "elif", "while", "until", "do"))
"""The shell's reserved words that start a compound command: the command after them is a simple command of its own
(``{ dreamdb hook user-prompt-submit; }`` runs it among other words)."""


def _shell_tokens(command: str) -> list[tuple[str, bool]]:
    """``(text, whether it is an operator)`` of each word and operator of a shell command, read as the shell reads
    it: quotes and backslashes keep characters together and are removed (``A="b;c"`` is one word, ``A=b;c``), a run of
    the characters ``( ) ; < > | &`` and the backquote is an operator, a newline or carriage return ends a command as
    ``;`` does, an operator ``"\\n"`` (QA round 140-C F1: read as a space, a line of the user's own was taken for an
    argument of the hook), and a ``#`` starts a comment to the end of its line only at the start of a word (F2:
    ``log#1`` is a word).

    Raises:
        ValueError: an unclosed quote.
    """
    tokens: list[tuple[str, bool]] = []
    word: list[str] | None = None  # (None between words; [] an empty word, as "" is)
    i = 0
    while i < len(command):
        c = command[i]
        if c in " \t\n\r" or c in _OPERATOR_CHARS:
            if word is not None:
                tokens.append(("".join(word), False))
                word = None
            end = i + 1
            if c in _OPERATOR_CHARS:
                while end < len(command) and command[end] in _OPERATOR_CHARS:
                    end += 1
                tokens.append((command[i:end], True))
            elif c in "\n\r":
                tokens.append(("\n", True))
        elif c == "#" and word is None:  # a comment, to the end of its line
            end = min((j for j in (command.find("\n", i), command.find("\r", i)) if j >= 0), default=len(command))
        elif c == "\\":  # the next character as it is; a backslash and newline are nothing
            end = i + 2
            if command[i + 1:end] != "\n":
                word = _grown(word, command[i + 1:end])
        elif c == "'":
            end = command.find("'", i + 1) + 1
            if not end:
                raise ValueError("No closing quotation")
            word = _grown(word, command[i + 1:end - 1])
        elif c == '"':  # (a backslash there keeps only $ ` " \ and a newline)
            end, part = i + 1, []
            while end < len(command) and command[end] != '"':
                if command[end] == "\\" and command[end + 1:end + 2] in ('$', '`', '"', "\\", "\n"):
                    part.append(command[end + 1].replace("\n", ""))
                    end += 2
                else:
                    part.append(command[end])
                    end += 1
            if end >= len(command):
                raise ValueError("No closing quotation")
            word, end = _grown(word, "".join(part)), end + 1
        else:
            word = _grown(word, c)
            end = i + 1
        i = end
    if word is not None:
        tokens.append(("".join(word), False))
    return tokens


def _grown(word: list[str] | None, part: str) -> list[str]:
    """``word`` with ``part`` appended in place (a new word when ``None``): a word grows in linear time (QA round
    141-B F3, a 100 kB word was copied at each character)."""
    if word is None:
        word = []
    word.append(part)
    return word


def _simple_commands(command: str) -> list[tuple[str, list[str], bool]]:
    """``(operator before it, its words, whether it has a redirection)`` of each simple command of a shell command
    (:func:`_shell_tokens`), split at ``&&``, ``||``, ``;``, a newline (``"\\n"``), ``|``, ``&``, ``(``, ``)``, a
    backquote, any other run of operator characters that is no redirection (:data:`_REDIRECTIONS`) and a reserved
    word that starts a compound command (:data:`_RESERVED`, given as the operator), without its redirections
    (``2>/dev/null``, ``> log 2>&1``: an operator, its file, and a file descriptor's number written before it).

    Raises:
        ValueError: an unclosed quote.
    """
    commands: list[tuple[str, list[str], bool]] = [("", [], False)]
    redirected = False
    for text, operator in _shell_tokens(command):
        if redirected and not operator:  # the file of a redirection
            redirected = False
            continue
        redirected = False
        if operator and text in _REDIRECTIONS:
            words = commands[-1][1]
            if words and words[-1].isdigit():
                words.pop()  # (2>…: lexed as "2", ">")
            commands[-1] = (commands[-1][0], words, True)
            redirected = True
        elif operator or (text in _RESERVED and not commands[-1][1]):
            commands.append((text, [], False))
        else:
            commands[-1][1].append(text)
    return commands


def _runs_the_hook(words: list[str], ours: str) -> str | None:
    """``"alone"`` when a simple command's program (:func:`_programs`) is dreamdb (:data:`_DREAMDB_PROGRAM`) with
    arguments the CLI runs as the prompt hook (:func:`dreamdb.entry._is_hook`), ``"among others"`` after more than
    :data:`MOST_WRAPPERS` wrappers or pinned (``dreamdb@0.1``) without a runner; ``"among others"`` when it is a shell whose ``-c`` script runs it (``bash -c
    '…'``: QA round 140-C F3, a script is the user's, never replaced); else ``None``. A word after the program is its
    argument (``echo on dreamdb hook …`` runs echo: F1)."""
    from dreamdb.entry import _is_hook

    for program, args, wrappers, by_runner in _programs(words):
        name = _program_name(program)
        if _DREAMDB_PROGRAM.fullmatch(name) and _is_hook(args):
            # (a pinned dreamdb@0.1 is a runner's: run bare, it is another program, QA round 142-A F8)
            return "alone" if wrappers <= MOST_WRAPPERS and (by_runner or _BARE_DREAMDB.fullmatch(name)) \
                else "among others"
        if _SHELL.fullmatch(name):
            script = _shell_script(args)
            if script is not None and _hook_form(script, ours) is not None:
                return "among others"
    return None


def _shell_script(args: list[str]) -> str | None:
    """The ``-c`` script of a shell run with ``args`` (``-c`` among its options, the script its first word that is
    no option: ``bash -c -- '…'``, ``bash -o pipefail -c '…'``), or ``None``."""
    script, k = False, 0
    while k < len(args):
        arg = args[k]
        if arg == "--":
            k += 1
            break
        if arg[:1] not in ("-", "+") or arg in ("-", "+"):
            break
        script = script or bool(re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", arg))
        k += 2 if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file") else 1
    return args[k] if script and k < len(args) else None


def _programs(words: list[str]) -> Iterator[tuple[str, list[str], int, bool]]:
    """``(program, its arguments, wrappers before it, whether a runner runs it)`` a simple command's ``words`` run: its first word after
    environment settings (``A=b``), or where that is a wrapper (:data:`_WRAPPERS`: ``env -i A=b``, ``exec``,
    ``command``, ``time``, ``nice -n 5``, ``timeout 10``, ``nohup``, ``uvx``, ``pipx run``, ``uv run --with X``), the
    program it runs, its options read by the wrapper's table (an option not in it takes no value; ``env -S``, which
    splits its value into the command, none); ``<python> -m dreamdb``: ``dreamdb`` too (not after ``-c`` or an option
    bundle that holds it, ``-Ic``: QA round 142-A F7). One reading, in time linear in the words (QA round 141-B F2, F3: every reading of
    each option, recursively, took minutes for 20 wrappers and overflowed the stack for 1000)."""
    at = wrappers = 0
    by_runner = False
    while True:
        while at < len(words) and _ASSIGNMENT.match(words[at]):
            at += 1
        if at >= len(words):
            return
        name, rest = _program_name(words[at]), at + 1
        for runner in (["run"], ["tool", "run"]):  # (pipx run, uv run, uv tool run)
            if name in ("pipx", "uv") and words[rest:rest + len(runner)] == runner:
                name, rest = "uvx", rest + len(runner)
        if name not in _WRAPPERS:
            break
        positional, valued, stops = _WRAPPERS[name]
        while rest < len(words) and words[rest].startswith("-") and words[rest] != "-":
            option = words[rest]
            if option in stops or name == "env" and _SPLIT_STRING.match(option):
                return  # (command -v dreamdb …: says where dreamdb is; env -S 'touch x' dreamdb: runs touch)
            rest += 2 if option in valued else 1
            if option == "--":
                break
        at, wrappers, by_runner = rest + positional, wrappers + 1, name == "uvx"
    yield words[at], words[at + 1:], wrappers, by_runner
    if _PYTHON.fullmatch(name):
        while rest < len(words) and words[rest].startswith("-") and words[rest] not in ("-", "--"):
            if _PYTHON_COMMAND.match(words[rest]):
                return
            if words[rest] == "-m" and rest + 1 < len(words):
                yield words[rest + 1], words[rest + 2:], wrappers, False
                return
            rest += 2 if words[rest] in ("-W", "-X") else 1


MOST_WRAPPERS = 8
"""The most wrappers before dreamdb's hook in a command that runs it alone: one after more is kept, as one among
other commands (QA round 141-B F2)."""

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_RUNNER_VALUED = frozenset((
    "--from", "--with", "-w", "--with-editable", "--with-requirements", "--python", "-p", "--index", "--default-index",
    "--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--directory", "--project", "--package",
    "--extra", "--group", "--env-file", "--spec", "--pip-args"))
_WRAPPERS: dict[str, tuple[int, frozenset[str], frozenset[str]]] = {
    "env": (0, frozenset(("-u", "--unset", "-C", "--chdir", "-S", "--split-string")), frozenset()),
    "exec": (0, frozenset(("-a",)), frozenset()), "command": (0, frozenset(), frozenset(("-v", "-V"))),
    "time": (0, frozenset(("-f", "--format", "-o", "--output")), frozenset()),
    "nice": (0, frozenset(("-n", "--adjustment")), frozenset()), "nohup": (0, frozenset(), frozenset()),
    "timeout": (1, frozenset(("-k", "--kill-after", "-s", "--signal")), frozenset()),
    "uvx": (0, _RUNNER_VALUED, frozenset())}
"""The programs that run the program after them, each with how many words that are not options come after its
options (timeout's duration), its options that take the next word as their value (``nice -n 5``; ``--opt=value`` is
one word), and those with which it runs none (``command -v``)."""
_SPLIT_STRING = re.compile(r"-[A-Za-z0-9]*S|--s")
"""``env``'s options that split their value into the command it runs (``-S``, ``-iS…``, ``--split-string``)."""
_PYTHON = re.compile(r"(python|pypy|py)[0-9.]*(\.exe)?", re.IGNORECASE)
"""Python's program names (``python3.11``, ``py``, ``pypy3.exe``; not ``pytest``: QA round 142-A F7)."""
_PYTHON_COMMAND = re.compile(r"-[A-VYZa-z]*c")
"""Python's ``-c`` alone or in a bundle of options (``-Ic``; after ``-W`` or ``-X`` a ``c`` is their value)."""
_SHELL = re.compile(r"(ba|da|k|mk|z|a)?sh(\.exe)?", re.IGNORECASE)


def _program_name(word: str) -> str:
    """A program's file name: the last part of its path, ``/`` or ``\\`` (a Windows path, read anywhere: QA round
    140-C F3)."""
    return re.split(r"[\\/]", word)[-1]


_DREAMDB_PROGRAM = re.compile(r"dreamdb(\.(?i:exe))?([@=<>~!].*)?")
_BARE_DREAMDB = re.compile(r"dreamdb(\.(?i:exe))?")
"""A command word that runs dreamdb, by its file name (:func:`_program_name`): ``dreamdb``, a path to it,
``dreamdb.exe``, a pinned ``dreamdb@0.1`` or ``dreamdb==0.1`` (a runner's), ``dreamdb`` after ``<python> -m``."""


def runs_dreamdb(command: str) -> bool:
    """Whether a hook command runs dreamdb anywhere in it (:data:`_DREAMDB_PROGRAM`), whatever its arguments: a
    mistyped hook (``dreamdb hook user_prompt_submit``) does, which :func:`is_dreamdb_hook` does not take for dreamdb's."""
    try:
        return any(_DREAMDB_PROGRAM.fullmatch(_program_name(word)) for word, operator in _shell_tokens(command)
                   if not operator)
    except ValueError:
        return False


def runs_bare_dreamdb(command: str) -> bool:
    """Whether a hook command runs a bare ``dreamdb`` (:data:`_BARE_DREAMDB`, no path: the shell looks it up on PATH)
    as the program of one of its simple commands (:func:`_programs`: after ``A=b`` settings and wrappers, ``env``,
    ``exec``, ``nice``…; not a runner's, ``uvx dreamdb``, nor ``<python> -m dreamdb``), whatever its arguments."""
    try:
        commands = _simple_commands(command)
    except ValueError:
        return False
    firsts = (next(_programs(words), None) for _op, words, _redirected in commands)
    return any(first is not None and not first[3] and _BARE_DREAMDB.fullmatch(first[0]) for first in firsts)


TRIAL_STDERR_BYTES = 1 << 20
"""How much of a trial run's stderr is kept (1 MiB): the rest is read and dropped."""

TRIAL_SECONDS = 60
"""Longest a hook command given to install is waited for on its trial run (:func:`trial_run`): Claude Code's own
default time limit for a hook."""

BLOCKING_EXIT = 2
"""The exit code with which a ``UserPromptSubmit`` hook blocks the prompt and erases it (Claude Code's hooks
reference: "Exit code 2: blocking error"; any other non-zero code is shown and the prompt goes on)."""


def _stop(child) -> None:
    """Kill a trial run's process group and reap its shell."""
    import subprocess

    with contextlib.suppress(OSError):
        os.killpg(child.pid, 9)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=5)


def check_settings(project_dir: Path, command: str, local: bool = False) -> None:
    """Refuse, reading only, an install :func:`install_hook` would refuse: the command (one line of text, no control
    characters), the project, the settings file (not JSON, not an object, ``hooks`` of an unexpected shape, a symlink
    loop) and its ``.bak``. Made before a hook command is tried out (QA round 111-A F2: a command of two lines ran,
    then was refused).

    Raises:
        UsageError, NotFound, WriteRefused: as :func:`install_hook`.
    """
    path = _checked_target(Path(project_dir), command, local)
    data, raw = _load(path)
    _event_list(data, path, create=True)
    _refuse_repeated_keys(path, raw)  # (QA round 150-C F2)
    _check_backup(path, raw)  # (its names all taken: QA round 110-A F6c, of a .bak folder, refused then)
    _check_writable_place(path)


def _check_writable_place(path: Path) -> None:
    """Refuse a settings file that cannot be written where it is, found by writing (and removing) an empty file in
    its folder, or the nearest folder above it that exists: permissions, a read-only mount and an immutable folder
    alike (QA round 114-C F3: the trial run came first, then the write was refused). An existing file of the
    immutable or append-only attribute is refused too (it cannot be replaced), and one that is write-protected
    (:func:`dreamdb.writes.files._check_file_writable`, as the write checks it; nor is it deleted: QA round 144-B F1).

    Raises:
        WriteRefused: as the write would be; nothing was changed.
    """
    import tempfile

    from dreamdb.writes import refuse_os_errors
    from dreamdb.writes.files import TEMP_MARK, _attribute_hint, _attributes, _check_file_writable

    target = path.resolve() if path.is_symlink() else path
    folder = target.parent
    while not folder.is_dir() and folder.parent != folder:
        folder = folder.parent
    # (named: the file, or the folder to be made in the folder that exists; QA round 116-A F6, the message named a
    # .claude folder that was not there as the one not writable)
    first = target if folder == target.parent else folder / target.relative_to(folder).parts[0]
    with refuse_os_errors(first), _keeping_made_folder(folder):  # (the probe changes the folder's time)
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}{TEMP_MARK}probe-", suffix=".tmp", dir=folder)
        os.close(fd)
        os.unlink(probe)
    attributes = _attributes(target) if target.is_file() else []
    if attributes:
        raise WriteRefused(f"Cannot write {target}: it has the {' and '.join(attributes)} attribute; nothing was"
                           " changed.", hint=_attribute_hint(attributes, target, "change the file"))
    _check_file_writable(target)


def hook_commands(path: Path) -> list[str]:
    """Every ``command`` of the ``UserPromptSubmit`` hooks in a settings file, dreamdb's or not (``[]`` when the file is
    missing or unreadable)."""
    try:
        data, _raw = _load(path)
        groups = _event_list(data, path, create=False) or []
    except (DreamdbError, OSError):
        return []
    return [h["command"] for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"] if isinstance(h, dict) and isinstance(h.get("command"), str)]


def trial_run(command: str, project_dir: Path, timeout_s: float = TRIAL_SECONDS,
              path_first: str | None = None) -> tuple[int | None, str]:
    """Run a hook command once as Claude Code would for a prompt: through the shell, in ``project_dir``, with a
    ``UserPromptSubmit`` payload of an empty prompt on stdin (dreamdb's hook prints nothing for it); ``path_first``: a
    folder put first on its ``PATH``.

    Returns:
        ``(exit code, its stderr's error line, else its usage line, else its last line)``; ``(None, why)`` when it
        did not end within ``timeout_s`` seconds or
        could not be started.
    """
    import subprocess

    project = str(Path(project_dir).absolute())
    payload = json.dumps({"session_id": "dreamdb-hook-install", "hook_event_name": EVENT, "prompt": "", "cwd": project})
    # (as Claude Code runs it: $CLAUDE_PROJECT_DIR set, the form its documentation gives for a project's scripts, QA
    # round 109-A F5; in a process group of its own, all of it stopped at the time limit, F6)
    env = {**os.environ, "CLAUDE_PROJECT_DIR": project}
    if path_first is not None:
        env["PATH"] = path_first + os.pathsep + env.get("PATH", os.defpath)
    # (stdin from a file; stderr read by a thread of its own that keeps its first MiB and drops the rest, so neither a
    # daemon the command leaves holding the pipe is waited for, QA round 110-A F7, nor a flood of output kept, 111-A F3)
    import threading

    kept: list[bytes] = []

    def drain(stream) -> None:
        size = 0
        with contextlib.suppress(OSError, ValueError):
            for block in iter(lambda: stream.read(65536), b""):
                if size < TRIAL_STDERR_BYTES:
                    kept.append(block[:TRIAL_STDERR_BYTES - size])
                    size += len(kept[-1])

    with tempfile.TemporaryFile() as given:
        given.write(payload.encode())
        given.seek(0)
        try:
            child = subprocess.Popen(command, shell=True, cwd=project_dir, env=env, stdin=given,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            return None, exc.strerror or str(exc)
        reader = threading.Thread(target=drain, args=(child.stderr,), daemon=True)
        reader.start()
        try:
            child.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _stop(child)
            return None, f"it did not end within {timeout_s:g} s (stopped)"
        except BaseException:  # (Ctrl-C, SIGTERM: the command stopped with install; QA round 110-A F2)
            _stop(child)
            raise
        reader.join(timeout=1.0)  # (what the shell wrote before it ended)
        err = b"".join(kept)
    lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    # (an error line says most; else a usage line, as a command group run without its command prints its help)
    said = next((line for line in lines if line.startswith("Error")), None) or \
        next((line for line in lines if line.startswith("Usage:")), None) or (lines[-1] if lines else "")
    return child.returncode, said[:300]


MAX_SETTINGS_BYTES = 16 << 20
"""Largest settings file read (16 MiB): Claude Code's are a few KB."""


def _refuse_unreachable(path: Path) -> None:
    """WriteRefused when ``path`` cannot be looked up for want of permission (``.claude`` of mode 000: QA round
    118-B F4, exit 70 from ``hook install`` and ``hook uninstall``)."""
    from dreamdb.config import is_unreachable

    if is_unreachable(path):
        raise WriteRefused(f"{path} cannot be reached (permission denied: {path.parent} cannot be searched); nothing"
                           " was changed.", hint=f"Give yourself read and search permission on it (chmod u+rx "
                                                 f"'{path.parent}'), or run dreamdb as the user who owns it.")


def _load(path: Path) -> tuple[dict, bytes | None]:
    _refuse_unreachable(path)
    if not path.exists():
        return {}, None
    if not path.is_file():  # a FIFO would be waited on forever, a device read without end (QA round 40)
        raise WriteRefused(f"{path} is not a regular file; it was not changed.",
                           hint="Move it away (Claude Code reads a JSON file there), then retry.")
    if path.stat().st_size > MAX_SETTINGS_BYTES:
        raise WriteRefused(f"{path} has {path.stat().st_size:,} bytes, not a settings file; it was not changed.",
                           hint="Move it away (Claude Code reads a small JSON file there), then retry.")
    raw = path.read_bytes()
    try:
        # integers kept as written too: int() refuses one of more than 4300 digits (QA round 60 L3)
        data = json.loads(raw.decode("utf-8"), parse_float=_Number, parse_int=_Number,
                          parse_constant=_not_json) if raw.strip() else {}
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # (nested past Python's limit: QA round 61 L3)
        if isinstance(exc, RecursionError):
            raise WriteRefused(f"{path} nests its JSON deeper than dreamdb can read; it was not changed.",
                               hint="Fix the file (Claude Code's settings nest a few levels), then retry.") from None
        if raw.startswith(b"\xef\xbb\xbf"):  # (as CHANGELOG.json's refusal says it)
            raise WriteRefused(f"{path} starts with a byte-order mark, which JSON does not allow; it was not changed.",
                               hint="Remove the BOM (JSON files are plain UTF-8), then retry.") from exc
        raise WriteRefused(f"{path} is not valid JSON ({exc}); it was not changed.",
                           hint="Fix its JSON (or move the file away), then retry.") from exc
    if not isinstance(data, dict):
        raise WriteRefused(f"{path} is not a JSON object; it was not changed.",
                           hint="Claude Code's settings file is one JSON object ({} when empty): fix it by hand, then"
                                " retry.")
    return data, raw


class _Pairs(list):
    """A JSON object as its ``(key, value)`` pairs in the order written, repeats kept (``object_pairs_hook``)."""


def _repeated_keys(raw: bytes | None) -> list[tuple[str, str]]:
    """``(key, where)`` for each key a JSON object of the settings text ``raw`` names more than once, in the order
    written: ``where`` is ``"the top level"`` or the object's path (``hooks.UserPromptSubmit[0]``); ``[]`` when none
    (or ``raw`` is ``None``, or no JSON: :func:`_load` has refused that already). Python's JSON reader keeps the
    last value of such a key, so a rewrite loses the others (QA round 150-C F2)."""
    if not raw or not raw.strip():
        return []
    try:
        tree = json.loads(raw.decode("utf-8"), object_pairs_hook=_Pairs, parse_float=_Number, parse_int=_Number,
                          parse_constant=_not_json)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []
    found: list[tuple[str, str]] = []

    def members(node: Any, where: str):
        """``node``'s values and their paths, in the order written, noting each repeated key as it is met."""
        if isinstance(node, _Pairs):
            seen: set[str] = set()
            for key, value in node:
                if key in seen and (key, where or "the top level") not in found:
                    found.append((key, where or "the top level"))
                seen.add(key)
                yield value, f"{where}.{key}" if where else key
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield value, f"{where}[{i}]"

    stack = [members(tree, "")]  # (a stack, not recursion: a file nested as deep as json reads is read)
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        else:
            stack.append(members(*child))
    return found


def _refuse_repeated_keys(path: Path, raw: bytes | None) -> None:
    """Refuse to rewrite the settings file ``path`` (of bytes ``raw``) where an object names a key twice: the rewrite
    would keep its last value only, and an install then an uninstall left the earlier one in neither the file nor
    its ``.bak`` (QA round 150-C F2; as a vault write refuses a frontmatter key written twice).

    Raises:
        WriteRefused: such a key, named with where it is; nothing was changed.
    """
    repeated = _repeated_keys(raw)
    if repeated:
        named = ", ".join(f"{json.dumps(key, ensure_ascii=False)} ({'at' if where == 'the top level' else 'in'}"
                          f" {where})" for key, where in repeated[:5]) + (" …" if len(repeated) > 5 else "")
        raise WriteRefused(f"{path} writes the key{'s' if len(repeated) > 1 else ''} {named} more than once, and"
                           " rewriting it would keep only the last value of each; nothing was changed.",
                           hint="Keep one of each by hand (merge their values), then retry.")


def _event_list(data: dict, path: Path, create: bool) -> list | None:
    hooks = data.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise WriteRefused(f"\"hooks\" in {path} is not an object; it was not changed.",
                           hint='Claude Code reads "hooks" as an object of events: fix it by hand (e.g. "hooks": {}),'
                                " then retry.")
    groups = hooks.get(EVENT)
    if groups is None:
        if not create:
            return None
        groups = hooks[EVENT] = []
    if not isinstance(groups, list):
        raise WriteRefused(f"\"hooks.{EVENT}\" in {path} is not a list; it was not changed.",
                           hint=f'Claude Code reads "{EVENT}" as a list of hook groups: fix it by hand (e.g. "{EVENT}":'
                                " []), then retry.")
    for i, group in enumerate(groups if create else ()):  # (QA round 108-B F6: one written beside a 5, a null or a
        # "hooks" that is no list: Claude Code's check of the settings may refuse the whole file, and no hook of it runs)
        if not _hook_group(group):
            raise WriteRefused(f"\"hooks.{EVENT}\"[{i}] in {path} is not a hook group (an object whose \"hooks\" is a"
                               " list of hooks, each with a \"type\", and a \"command\" for a command hook); it was not"
                               " changed.",
                               hint='Fix or remove that entry by hand (a group: {"hooks": [{"type": "command",'
                                    ' "command": "…"}]}), then retry.')
    return groups


def _hook_group(group: object) -> bool:
    """Whether a ``UserPromptSubmit`` entry has the shape Claude Code's settings check expects: an object whose
    ``hooks`` is a list of objects, each with a string ``type`` and, for ``"command"``, a string ``command`` (QA round
    109-A F7: ``{"hooks": [5]}``, ``[{}]`` were kept beside the hook written)."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    return all(isinstance(h, dict) and isinstance(h.get("type"), str)
               and (h["type"] != "command" or isinstance(h.get("command"), str)) for h in group["hooks"])


class _Number:
    """A JSON number, kept as written (QA round 59 L1): read as a float, ``1e400`` is inf, which
    :func:`json.dumps` wrote back as ``Infinity``, not JSON (Claude Code would reject the file); ``1.50`` or
    ``1E3`` would come back as ``1.5`` and ``1000.0``, a needless diff. Integers too (QA round 60 L3): one of
    more than 4300 digits, valid JSON, was refused with Python's ``sys.set_int_max_str_digits`` message."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _not_json(name: str) -> None:
    """``parse_constant`` for :func:`json.loads`: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON."""
    raise ValueError(f"{name} is not a JSON value")


def _dumps(data: dict, old_raw: bytes | None) -> str:
    """``data`` as JSON text, indented as ``old_raw`` is (its first indented line: spaces or tabs; 2 spaces
    for a new or one-line file, QA round 59 L1), with each :class:`_Number` written as it was read, and
    ``old_raw``'s line endings: CRLF when its first line ends so, no final newline when it had none (QA
    round 60 L4: a CRLF file came back LF, the whole file changed in ``git diff``)."""
    found = re.search(rb"\n( +|\t+)[^ \t\r\n]", old_raw or b"")
    indent: str | int = found.group(1).decode() if found else 2
    numbers: list[str] = []
    mark = f"dreamdb-number-{uuid.uuid4().hex}-"  # a string no file holds: each is swapped for its number

    def keep(value: object) -> str:
        if not isinstance(value, _Number):
            raise TypeError(f"{type(value).__name__} is not JSON")
        numbers.append(value.text)
        return f"{mark}{len(numbers) - 1}"

    text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False, default=keep)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (valid JSON as "\ud800") has no UTF-8: escaped (QA round 61 L3)
        numbers.clear()
        text = json.dumps(data, indent=indent, ensure_ascii=True, allow_nan=False, default=keep)
    text = re.sub(f'"{mark}(\\d+)"', lambda m: numbers[int(m.group(1))], text)
    if not (old_raw and old_raw.strip()) or old_raw.endswith(b"\n"):
        text += "\n"
    if re.match(rb"[^\n]*\r\n", old_raw or b""):  # (json.dumps escapes a newline in a string: each "\n" ends a line)
        text = text.replace("\n", "\r\n")
    return text


def _write_backup(path: Path, backup: Path, old_raw: bytes) -> str:
    """Write ``old_raw`` to a temporary file beside ``backup`` with the permission bits of ``path`` (the
    settings file, whose link is followed) and its owner and group where allowed, never wider; return its
    name, which the caller renames over ``backup`` (QA round 59 M3: the backup was 0644, a private
    ``settings.local.json``'s tokens readable by all). The file is created 0600 and only then given the mode:
    it is never readable by more than the settings file. Removed again if anything fails.

    Raises:
        OSError: the file cannot be written (the caller turns it into WriteRefused).
    """
    from dreamdb.writes.files import TEMP_MARK, _remove_stale_temp_files

    st = os.stat(path)
    mode = st.st_mode & 0o777
    prefix = f".{backup.name}.{TEMP_MARK}"
    _remove_stale_temp_files(backup.parent)  # (a killed install's copy: QA round 79-B F7, never removed)
    fd, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=backup.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if hasattr(os, "fchown"):
                try:
                    os.fchown(handle.fileno(), st.st_uid, st.st_gid)
                except OSError:  # not given the file's group: the group it has gets no access to the copy
                    if os.fstat(handle.fileno()).st_gid != st.st_gid:
                        mode &= ~0o070
            os.chmod(tmp_name, mode)
            handle.write(old_raw)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    return tmp_name


BACKUPS = "hook-backups"
"""Folder in the user cache (:func:`dreamdb.config.cache_root`) where ``hook install`` and ``hook uninstall`` record
each backup of a settings file they write, one file a backup (:func:`_record_backup`)."""

MAX_BACKUP_NAMES = 100
"""How many names a settings file's backup may take: ``<name>.bak``, then ``<name>.bak.1`` … ``<name>.bak.99``."""


def _backup_names(path: Path) -> Iterator[Path]:
    """The names a backup of the settings file ``path`` may have, in order: ``<name>.bak``, ``<name>.bak.1``, …"""
    yield path.with_name(path.name + ".bak")
    for n in range(1, MAX_BACKUP_NAMES):
        yield path.with_name(f"{path.name}.bak.{n}")


def _backup_path(path: Path, old_raw: bytes | None = None) -> Path:
    """The file dreamdb keeps the previous version of the settings file ``path`` in: the first of ``<name>.bak``,
    ``<name>.bak.1``, ``<name>.bak.2``, … that is not there or is dreamdb's own backup (:func:`_is_our_backup`; of
    ``old_raw``, the file's bytes as read). Any other file there (the user's own ``settings.json.bak``, a folder, a
    link) is never replaced: QA round 156-C F2, an install replaced a ``.bak`` the user had, without a word.

    Raises:
        WriteRefused: a name cannot be looked at (a folder that cannot be searched), or every name is taken (nothing
            was changed).
    """
    from dreamdb.writes import refuse_os_errors

    for backup in _backup_names(path):
        with refuse_os_errors(backup, "read"):
            try:
                os.lstat(backup)
            except FileNotFoundError:
                return backup
        if _is_our_backup(backup, old_raw):
            return backup
    first = path.with_name(path.name + ".bak")
    raise WriteRefused(f"{first} and {MAX_BACKUP_NAMES - 1} more names after it ({first.name}.1 …) are taken by files"
                       f" dreamdb did not write, where it would keep the previous {path.name}; nothing was changed.",
                       hint=f"Move the {first.name}.* files you no longer need away, then retry.")


def _is_our_backup(backup: Path, old_raw: bytes | None) -> bool:
    """Whether ``backup`` is a backup dreamdb may replace: a regular file (not a link) that holds what an install or
    uninstall wrote there (:func:`_record_backup`), or, read as JSON, the settings ``old_raw`` hold, but for dreamdb's
    prompt hook (:func:`_drop_our_hooks`; a ``.bak`` an earlier dreamdb wrote, or one the user copied, whose contents
    the new backup keeps all the same). Anything else, the user's own copy of other settings among them, is not."""
    import hashlib

    try:
        st = os.lstat(backup)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SETTINGS_BYTES:
            return False
        raw = backup.read_bytes()
    except OSError:
        return False
    try:
        if _backup_record(backup).read_text(encoding="ascii").strip() == hashlib.sha256(raw).hexdigest():
            return True
    except (OSError, ValueError, DreamdbError):
        pass
    if old_raw is None:
        return False
    if raw == old_raw:
        return True
    both = []
    for text in (raw, old_raw):
        try:
            data = json.loads(text.decode("utf-8"), parse_constant=_not_json) if text.strip() else {}
        except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
            return False
        if not isinstance(data, dict):
            return False
        with contextlib.suppress(DreamdbError):  # (hooks of another shape: compared as they are)
            _drop_our_hooks(data, backup, DEFAULT_COMMAND)
        both.append(data)
    return both[0] == both[1]


def _backup_record(backup: Path) -> Path:
    """The file recording the backup dreamdb last wrote at ``backup``: in :data:`BACKUPS`, named by a hash of its path
    (its folder's real path and its name).

    Raises:
        UsageError: a relative ``DREAMDB_CACHE_DIR`` from a current folder that is gone (:func:`~dreamdb.config.cache_root`).
    """
    import hashlib

    from dreamdb.config import cache_root

    where = os.path.join(os.path.realpath(backup.parent), backup.name)
    return cache_root() / BACKUPS / hashlib.sha256(os.fsencode(where)).hexdigest()[:32]


def _record_backup(backup: Path, raw: bytes) -> None:
    """Record that dreamdb wrote ``raw`` to ``backup`` (the sha256 of its bytes, in the user cache:
    :func:`_backup_record`), so that a later install or uninstall replaces it (:func:`_is_our_backup`) where it would
    leave a file the user wrote there. Not recorded (a cache that cannot be written), a later write keeps it only if
    its settings are the file's but for dreamdb's hook, else writes its backup to the next free name."""
    import hashlib

    from dreamdb.config import write_private_file

    with contextlib.suppress(OSError, DreamdbError):
        write_private_file(_backup_record(backup), hashlib.sha256(raw).hexdigest().encode("ascii"))


def _forget_backup(backup: Path) -> None:
    """Drop the record of ``backup`` (:func:`_record_backup`), removed."""
    with contextlib.suppress(OSError, DreamdbError):
        _backup_record(backup).unlink()


def _check_backup(path: Path, old_raw: bytes | None) -> None:
    """Refuse, before anything is written, when the previous version of ``path`` cannot be kept: the names of its
    backup cannot be looked at, or are all taken (:func:`_backup_path`). A ``.bak`` that is a folder, or any other
    file dreamdb did not write, is passed over for the next name (QA round 60 M3: with a ``.bak`` folder the settings
    were rewritten, then the backup's rename failed; 156-C F2: the user's own ``.bak`` was replaced)."""
    if old_raw is not None:
        _backup_path(path, old_raw)


def _write(path: Path, data: dict, old_raw: bytes | None, commit: bool = True,
           keep_backup: bool = False) -> Path | None:
    """Keep the old bytes in the file's backup (:func:`_backup_path`: ``<name>.bak``, or the next free name where
    that is a file dreamdb did not write; unless ``keep_backup``: the backup there is kept, :func:`_keeps_backup`),
    write ``data``; a symlinked file is written through the link. Returns the backup written, else ``None``.

    The backup replaces the previous one only once the new settings are written: a refused write
    (a write-protected file) leaves both files as they were.

    Raises:
        WriteRefused: nothing was written (see :func:`_check_backup`, :func:`refuse_os_errors`).
        DreamdbError: the settings were written but the backup could not be renamed into place (exit 1).
    """
    from dreamdb.writes import refuse_os_errors, atomic_write_bytes
    from dreamdb.writes.files import ABSENT, FileChanged, read_with_identity

    backup = _backup_path(path, old_raw) if old_raw is not None else None  # (before anything is written)
    claude = path.parent.name == ".claude"
    with refuse_os_errors(path):
        try:
            path.parent.mkdir(parents=True)
        except FileExistsError:  # (ours still if its record matches it as this write finds it: _made_folder_record)
            ours = claude and _made_folder_record(path.parent) is not None
        else:
            ours = claude  # (uninstall removes it again only if this made it)
        try:  # a settings.json linked to a dotfile stays a link: its target gets the new content
            target = path.resolve() if path.is_symlink() else path
        except RuntimeError as exc:  # a symlink loop (Python < 3.13)
            raise WriteRefused(f"{path} is a symlink loop; nothing was changed.") from exc
        text = _dumps(data, old_raw)
        pending = _write_backup(path, backup, old_raw) if backup is not None and not keep_backup else None
        try:
            # (another program's write since the file was read is not overwritten: Claude Code adds its permission
            # rules by the same read, change, replace; QA round 79-B F2, 37 of 303 rules lost. The caller reads again)
            try:
                now_raw, seen = read_with_identity(target)
            except FileNotFoundError:
                now_raw, seen = None, ABSENT
            if now_raw != old_raw:
                raise FileChanged(f"{path} changed while dreamdb was editing it; nothing was changed.",
                                  hint="Run the command again: it edits the file as it is now.")
            # (commit: the write records itself when done, so an interruption after it says it is saved, QA 81-A F4)
            atomic_write_bytes(target, text.encode("utf-8"), expect=seen, commit=commit)
        except BaseException:
            if pending is not None:
                with contextlib.suppress(OSError):
                    os.unlink(pending)
            raise
    if pending is not None:  # over an older backup of dreamdb's, whatever its mode, in one rename
        assert backup is not None and old_raw is not None
        try:
            os.replace(pending, backup)
        except OSError as exc:  # the settings are written: not "nothing was changed" (QA round 60 M3)
            with contextlib.suppress(OSError):
                os.unlink(pending)
            raise DreamdbError(f"{path} was written, but its previous version could not be kept in {backup} "
                               f"({exc.strerror or exc}).", hint=f"Check {backup} (move it away if it is in the "
                               "way); the settings themselves are written.") from exc
        _record_backup(backup, old_raw)
    if claude:  # (its change time as this write left it: QA round 146-I F3)
        _record_made_folder(path.parent) if ours else _forget_made_folder(path.parent)
    return backup if pending is not None else None


def _install_output(raw: bytes | None, command: str = DEFAULT_COMMAND) -> bool:
    """Whether ``raw`` is what an install writes in a new settings file, to the byte (:func:`_install_once`: one group
    of one hook, running dreamdb's hook alone, :func:`runs_hook_alone`; :func:`_dumps`'s layout), whatever its
    command; ``command``: the one dreamdb installs or removes."""
    if raw is None:
        return False
    try:
        hook_command = json.loads(raw)["hooks"][EVENT][0]["hooks"][0]["command"]
    except (ValueError, LookupError, TypeError):  # (ValueError: not JSON or not UTF-8)
        return False
    made = {"hooks": {EVENT: [{"hooks": [{"type": "command", "command": hook_command}]}]}}
    return (isinstance(hook_command, str) and runs_hook_alone(hook_command, command)
            and raw == _dumps(made, None).encode("utf-8"))


def _backup_of_install(backup: Path, command: str = DEFAULT_COMMAND) -> bytes | None:
    """The bytes of ``backup``, a settings file's backup (:func:`_backup_path`), when it is a file (not a link) holding
    only what an install writes in a new file (:func:`_install_output`): the previous version of a file an install
    made, which a second install that replaced the command kept; else ``None`` (no backup, or one that holds anything
    else)."""
    try:
        if not stat.S_ISREG(os.lstat(backup).st_mode):
            return None
        raw = backup.read_bytes()
    except OSError:
        return None
    return raw if _install_output(raw, command) else None


def _keeps_backup(path: Path, old_raw: bytes | None, command: str) -> bool:
    """Whether an install that rewrites ``path`` keeps the ``.bak`` there instead of saving ``old_raw`` in it:
    ``old_raw`` is only what an install writes (:func:`_install_output`; the second install, replacing the command,
    reproducible by installing that command again) and a ``.bak`` is there, which then keeps the version before
    dreamdb's hook, a user's ``{}`` say. So a ``.bak`` that holds only an install's output is of a file an install
    made, and uninstall deletes both (:func:`_made_by_install`; QA round 149-A F2: two installs then an uninstall left
    ``{}`` and a ``.bak``), while the user's ``{}`` kept in a ``.bak`` still keeps the file, as ``{}`` (QA round 102-A
    F3: the second install overwrote that ``.bak`` with the first install's file). The backup is dreamdb's
    (:func:`_backup_path`): a ``.bak`` the user wrote is no earlier version of the file."""
    return _install_output(old_raw, command) and os.path.lexists(_backup_path(path, old_raw))


def _made_by_install(path: Path, old_raw: bytes | None, command: str = DEFAULT_COMMAND) -> bool:
    """Whether a settings file that holds dreamdb's hook alone was made by an install: ``old_raw``, its bytes, are
    what an install writes in a new file, to the byte (:func:`_install_output`), and there is no ``.bak`` of it (an
    install keeps one only of a file that was there) or its ``.bak`` holds only such an install's output too
    (:func:`_backup_of_install`: a second install that replaced the command saved the first one's file there, and
    keeps a ``.bak`` it finds, :func:`_keeps_backup`). With a ``.bak`` that holds anything else (the user's own ``{}``,
    QA round 102-A F3), the file is kept; nor can the absence of a ``.bak`` alone tell: a file written by
    hand, or committed by a teammate, with a hook of its own (another timeout, variables before the command) was
    deleted, ``.claude`` with it (QA round 132-C F1). The backup is dreamdb's (:func:`_backup_path`): a ``.bak`` the
    user wrote tells nothing of the file (QA round 156-C F2)."""
    if not _install_output(old_raw, command):
        return False
    backup = _backup_path(path, old_raw)
    return not os.path.lexists(backup) or _backup_of_install(backup, command) is not None


def _remove_backup_of_install(backup: Path, command: str = DEFAULT_COMMAND) -> None:
    """After uninstall deleted a file an install made, delete its backup ``backup`` (:func:`_backup_path`, found
    before) too if it holds only an install's output (:func:`_backup_of_install`; one that holds anything else is
    kept). One that cannot be deleted is left, as it was before QA round 149-A F2: the settings are removed already."""
    raw = _backup_of_install(backup, command)
    if raw is not None:
        with contextlib.suppress(OSError):
            if backup.read_bytes() == raw:  # (not one another program wrote since)
                backup.unlink()
                _forget_backup(backup)


def _remove(path: Path, old_raw: bytes | None, commit: bool = True) -> None:
    """Delete a settings file that held dreamdb's hook alone, unless another program changed it since it was read;
    ``commit``: record the deletion as the command's change, done (:data:`dreamdb.writes.COMMITTED`). Its folder is
    the caller's to remove (:func:`_remove_made_folder`).

    Raises:
        FileChanged: the file is no longer ``old_raw`` (the caller reads it again).
        WriteRefused: it cannot be deleted (no permission on its folder…).
    """
    from dreamdb.writes import refuse_os_errors
    from dreamdb.writes.files import FileChanged, _committed, _uninterrupted

    with refuse_os_errors(path, "delete"):
        try:
            if path.read_bytes() != old_raw:
                raise FileChanged(f"{path} changed while dreamdb was editing it; nothing was changed.",
                                  hint="Run the command again: it edits the file as it is now.")
            with _uninterrupted():  # (the deletion and its record together: QA round 110-A F3, a SIGTERM right
                path.unlink()  # after it said "Interrupted.", 130, with the file gone)
                if commit:
                    _committed(path, "deleted")
        except FileNotFoundError:
            pass


def _remove_made_folder(record: Path | None, folder: Path) -> None:
    """After uninstall removed a settings file: remove ``folder`` (``.claude``) if it is empty and ``record`` is the
    record of it that :func:`_made_folder_record` found before anything was removed (left empty, as install found no
    folder: QA round 104-B F9; never a folder the user had, empty or not: QA round 146-D F5, a .claude made before the
    install was removed; 146-I F3, one made again with the inode number of the removed one)."""
    if record is not None:
        with contextlib.suppress(OSError):  # (not empty: other settings, agents, commands of the user's)
            folder.rmdir()
            record.unlink()


MADE_FOLDERS = "claude-folders-made"
"""Folder in the user cache (:func:`dreamdb.config.cache_root`) where ``hook install`` records each project's
``.claude`` folder it made, one file a folder (:func:`_record_made_folder`)."""


def _made_folder_path(folder: Path) -> Path:
    """The file recording that ``hook install`` made ``folder``: in :data:`MADE_FOLDERS`, named by a hash of
    ``folder``'s real path.

    Raises:
        UsageError: a relative ``DREAMDB_CACHE_DIR`` from a current folder that is gone (:func:`~dreamdb.config.cache_root`).
    """
    import hashlib

    from dreamdb.config import cache_root

    real = os.path.realpath(folder)
    return cache_root() / MADE_FOLDERS / hashlib.sha256(os.fsencode(real)).hexdigest()[:32]


def _record_made_folder(folder: Path) -> None:
    """Record that ``hook install`` made ``folder`` (a project's ``.claude``): its device and inode numbers, its
    change time as the install's write left it and its real path, in the user cache (:func:`_made_folder_path`),
    where another process's ``hook uninstall`` finds it (:func:`_made_folder_record`), the project left as it was:
    uninstall removes that folder left empty, and no other (QA round 146-D F5: it removed any ``.claude`` left empty,
    one the user had made before the install too). A later install or uninstall that finds the record matching the
    folder records its change time again after its own write; one that does not match is dropped
    (:func:`_forget_made_folder`). Nothing is written in the project. Not recorded (a cache that cannot be written),
    the folder is kept."""
    from dreamdb.config import write_private_file

    with contextlib.suppress(OSError, DreamdbError):
        st = os.lstat(folder)
        # (its folder 0700 and the record 0600 whatever the umask, as every folder and file of the user cache: QA
        # round 151-D F1, under umask 000 they were 0777 and 0666; the path as bytes: a folder's name that is not
        # UTF-8 is recorded as well)
        write_private_file(_made_folder_path(folder),
                           f"{st.st_dev} {st.st_ino} {st.st_ctime_ns} ".encode() + os.fsencode(os.path.realpath(folder)))


@contextlib.contextmanager
def _keeping_made_folder(folder: Path):
    """Within the block dreamdb adds or removes a file of ``folder`` (a probe of whether it can be written): if the
    record of ``folder`` (:func:`_record_made_folder`) matched it before, it is made again after, with the folder's
    new change time."""
    ours = folder.name == ".claude" and _made_folder_record(folder) is not None
    try:
        yield
    finally:
        if ours:
            _record_made_folder(folder)


def _forget_made_folder(folder: Path) -> None:
    """Drop the record of ``folder`` (:func:`_record_made_folder`) that no longer matches it: the folder is kept."""
    with contextlib.suppress(OSError, DreamdbError):
        _made_folder_path(folder).unlink()


def _made_folder_record(folder: Path) -> Path | None:
    """The record :func:`_record_made_folder` made of ``folder``, if it names this very folder as dreamdb's last
    write in it left it (the same device and inode numbers, change time and real path: not one the user made again
    after it was removed, which the file system may give the same inode number, QA round 146-I F3; nor one changed
    since by another program); else ``None``. A record of an earlier version (no change time) matches no folder: the
    folder is kept, the failure always an empty folder left, never a user's folder removed."""
    try:
        record = _made_folder_path(folder)
        dev, ino, ctime, real = record.read_bytes().split(b" ", 3)
        st = os.lstat(folder)
        return record if ((int(dev), int(ino), int(ctime), real)
                          == (st.st_dev, st.st_ino, st.st_ctime_ns, os.fsencode(os.path.realpath(folder)))) else None
    except (OSError, ValueError, DreamdbError):
        return None


@contextlib.contextmanager
def settings_lock(project_dir: Path, timeout_s: float = 10.0):
    """Hold an exclusive lock on the project folder (``flock`` on the folder itself: no lock file is left in the
    user's project) while both settings files are read and one is written: ``hook install`` and ``hook install
    --local`` run together each read the other file before either wrote, and both added a hook (QA round 100-B F2;
    Claude Code then runs both). Other programs do not take it (their writes are caught by :func:`_write`'s check).
    A folder that cannot be opened or locked (no ``fcntl``: Windows; a file system without locks) is not locked.

    Raises:
        WriteRefused: another dreamdb held it past ``timeout_s`` seconds.
    """
    try:
        import fcntl

        fd = os.open(project_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except (ImportError, OSError):
        yield
        return
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise WriteRefused(f"Another dreamdb has been editing the settings in {project_dir} for"
                                       f" {timeout_s:g} s; nothing was changed.",
                                       hint="Run the command again.") from None
                time.sleep(0.02)
            except OSError:  # (a file system without locks)
                break
        yield
    finally:
        os.close(fd)  # (releases the lock)


SETTINGS_ATTEMPTS = 5
"""Times an install or uninstall reads, changes and writes a settings file that another program keeps changing
meanwhile (each attempt refuses to overwrite a change it did not read: :func:`_write`)."""


def _retried(edit):
    """``edit()`` again, from a fresh read, while another program changed the file between its read and its write
    (:class:`dreamdb.writes.files.FileChanged`), up to :data:`SETTINGS_ATTEMPTS` times."""
    from dreamdb.writes.files import FileChanged

    for attempt in range(SETTINGS_ATTEMPTS):
        try:
            return edit()
        except FileChanged:
            if attempt == SETTINGS_ATTEMPTS - 1:
                raise
            time.sleep(0.01 * (attempt + 1))



def _require_project(project_dir) -> None:
    """Raise :class:`NotFound` unless ``project_dir`` is a folder (a symlink loop said as one: QA round 102-A)."""
    from dreamdb.vault.discover import path_problem

    problem = path_problem(project_dir, folder=True)
    if problem is not None:
        raise NotFound(f"No project folder at {project_dir}: the path {problem}.", hint=PROJECT_HINT)


PROJECT_HINT = "Give the project's folder (--project DIR; the default is the current folder)."
"""The hint of a ``--project`` that names no folder."""


def vault_holding(project_dir) -> Path | None:
    """The vault folder (``_dream_context``) that ``project_dir`` is or lies in, by its path made absolute or its real
    path (the outermost of two), or ``None``: Claude Code, started in the project, reads no settings there."""
    from dreamdb.vault.discover import VAULT_DIR_NAME

    return next((folder for path in _absolute_and_real(project_dir) for folder in (*reversed(path.parents), path)
                 if folder.name == VAULT_DIR_NAME), None)


def in_vault_words(project_dir, vault: Path) -> str:
    """How ``project_dir`` is in ``vault`` (:func:`vault_holding`'s), in words that follow "is": "a vault folder",
    or "inside the vault <vault>"."""
    return "a vault folder" if vault in _absolute_and_real(project_dir) else f"inside the vault {vault}"


def _absolute_and_real(folder) -> list[Path]:
    """``folder`` made absolute, and its real path (when it can be resolved)."""
    paths = [Path(os.path.abspath(folder))]
    with contextlib.suppress(OSError, RuntimeError):
        paths.append(paths[0].resolve())
    return paths


def refuse_vault_folder(project_dir) -> None:
    """Raise :class:`UsageError` when ``project_dir`` is a vault folder or lies in one (:func:`vault_holding`): a
    settings file there is never read, and ``hook install`` pointed at the vault wrote one into it, advising a vault
    inside the vault (QA round 139-C F1). The hint names the project's folder, the vault's parent."""
    vault = vault_holding(project_dir)
    if vault is not None:
        raise UsageError(f"{project_dir} is {in_vault_words(project_dir, vault)}, not a project folder: Claude Code,"
                         " started in the project, reads no settings there; nothing was changed.",
                         hint="Give the project's folder, the vault's parent: --project"
                              f" {shlex.quote(str(vault.parent))}")


def install_hook(project_dir: Path, command: str = DEFAULT_COMMAND, *, local: bool = False,
                 replace: bool = True, backups: list[Path] | None = None) -> Path:
    """Add dreamdb's ``UserPromptSubmit`` hook to a project's Claude Code settings.

    Idempotent: when a dreamdb prompt hook with exactly this command is
    already there, nothing is written. A dreamdb prompt hook with another
    command (another path to ``dreamdb``) is updated in place rather than
    added twice (``replace``), or left as it is; one run among other shell
    commands (``cd X && dreamdb hook user-prompt-submit``: :func:`runs_hook_alone`)
    is always left as it is, and none is added beside it. Otherwise a new group
    ``{"hooks": [{"type": "command", "command": command}]}`` is appended to
    ``hooks.UserPromptSubmit``.

    Args:
        project_dir: the project root (the folder that holds or will hold ``.claude/``).
        command: the shell command Claude Code runs for each prompt.
        local: write ``settings.local.json`` (this person's settings) instead of ``settings.json``.
        replace: update a dreamdb hook with another command to ``command``; ``False`` leaves it, writing
            nothing (a shared ``settings.json`` may hold a teammate's command: ``dreamdb hook install``
            replaces it only when asked to, QA round 68 M3; :func:`dreamdb_hook_commands` tells which it is).
        backups: a list that gets the file the settings file's previous version was kept in, if one was written
            (``<name>.bak``; the next free name, ``<name>.bak.1`` …, where a file dreamdb did not write is there:
            :func:`_backup_path`).

    Returns:
        The path of the settings file.

    Raises:
        UsageError: ``command`` is empty, spans lines, or holds a control character (ESC, a tab), a
            bidirectional override or an invisible character (Unicode tags).
        UsageError: ``project_dir`` is a vault folder (``_dream_context``) or lies in one
            (:func:`refuse_vault_folder`).
        NotFound: ``project_dir`` is not a folder.
        WriteRefused: the existing settings file is not valid JSON (``NaN``, ``Infinity``), not an
            object, or its ``hooks``/``hooks.UserPromptSubmit`` has the wrong
            type (the file is left untouched).
        WriteRefused: the file cannot be written (disk full, no permission…).
    """
    path = _checked_target(Path(project_dir), command, local)
    return _retried(lambda: _install_once(path, command, replace, backups))


def _checked_target(project_dir: Path, command: str, local: bool) -> Path:
    """The settings file an install of ``command`` writes, once the command and the place are checked (the checks of
    :func:`install_hook` before it reads the file).

    Raises:
        UsageError, NotFound, WriteRefused: as :func:`install_hook`.
    """
    from dreamdb.vault.discover import is_utf8
    from dreamdb.writes.checks import _check_text

    if not isinstance(command, str) or not command.strip() or any(c in command for c in "\n\r\x00") \
            or not is_utf8(command):
        raise UsageError(f"The hook command must be one line of text, got {command!r}; nothing was changed.",
                         hint="e.g. --command 'dreamdb hook user-prompt-submit'")
    # ESC, other controls, bidi overrides and invisible tag characters were written to settings.json (QA round 59 L10)
    _check_text("The hook command", command, allow_newlines=False)
    _require_project(project_dir)
    refuse_vault_folder(project_dir)
    path = settings_path(project_dir, local)
    _refuse_unreachable(path)
    if path.parent.exists() and not path.parent.is_dir():
        raise WriteRefused(f"{path.parent} is a file, not a folder; nothing was changed.",
                           hint="Claude Code keeps project settings in a .claude folder: move that file away first.")
    if path.is_dir():
        raise WriteRefused(f"{path} is a folder, not a settings file; nothing was changed.")
    for link in (path.parent, path):  # (before a trial run: QA round 112-A F4, a link to nothing was refused after it)
        if link.is_symlink():
            try:
                target = link.resolve()
            except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
                if isinstance(exc, RuntimeError) or exc.errno == errno.ELOOP:
                    raise WriteRefused(f"{link} is a symlink loop; nothing was changed.") from exc
                raise
            folder = target if link == path.parent else target.parent
            if not folder.is_dir():
                what = "is a file, not a folder" if folder.exists() else "does not exist"  # (QA round 113-A F5)
                raise WriteRefused(f"{link} is a link to {os.readlink(link)}, whose folder {folder} {what}; nothing"
                                   " was changed.", hint="Make that folder, or remove the link, then retry.")
    return path


def _install_once(path: Path, command: str, replace: bool, backups: list[Path] | None = None) -> Path:
    """:func:`install_hook`'s read, change and write of the settings file ``path``."""
    data, old_raw = _load(path)
    groups = _event_list(data, path, create=True)
    assert groups is not None
    found_exact = found_among_others = False
    changed = False
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        for hook in group["hooks"]:
            if isinstance(hook, dict) and is_dreamdb_hook(hook.get("command"), command):
                if hook.get("command") == command and not found_exact:
                    found_exact = True
                elif not runs_hook_alone(hook.get("command"), command):
                    found_among_others = True  # (the user's other commands with it: never replaced)
                elif not replace:
                    return path  # another dreamdb hook command, kept as it is: nothing to write
                elif not found_exact:
                    hook["command"] = command
                    hook.setdefault("type", "command")
                    found_exact = changed = True
    if not found_exact and not found_among_others:
        groups.append({"hooks": [{"type": "command", "command": command}]})
        changed = True
    if changed:  # (a .bak kept over a file only an install wrote: QA round 149-A F2)
        _refuse_repeated_keys(path, old_raw)  # (its earlier values lost: QA round 150-C F2)
        written = _write(path, data, old_raw, keep_backup=_keeps_backup(path, old_raw, command))
        if written is not None and backups is not None:
            backups.append(written)
    return path


LOCAL_SETTINGS_COMMENT = "# dreamdb hook install --local: your own Claude Code settings, not committed"
"""The line before the pattern :func:`ignore_in_git` adds to a clone's ``info/exclude``."""


def ignore_in_git(path: Path) -> str | None:
    """Make git ignore a ``settings.local.json`` an install made (one person's settings, which Claude Code has git
    ignore when it makes one) in this clone: ``/<its path in the work tree>`` added to the repository's
    ``info/exclude``, git's place for the files one clone ignores (no file git tracks or shows changes; written whole,
    an existing one kept as it is, the line added after it; a linked one written at its target, the link kept). Nothing is done where ``path`` is in no git work tree,
    git is not installed, or git ignores it already (a ``.gitignore``, the user's global one). QA round 144-B F4:
    ``hook install --local`` in a fresh repository made a file that ``git add -A`` committed, its command an absolute
    path of one machine.

    Returns:
        What to say on stderr: where it was made ignored, or, where git tracks it or ``info/exclude`` cannot be
        written, that git does not ignore it and what to do; ``None`` when there is nothing to say.
    """
    import shutil
    import subprocess

    from dreamdb.writes import atomic_write_bytes
    from dreamdb.writes.files import ABSENT, read_with_identity

    if shutil.which("git") is None:
        return None
    folder = path.parent.parent  # (the project: git run there, and the file named from there)
    name = f"{path.parent.name}/{path.name}"

    def git(*args: str) -> subprocess.CompletedProcess | None:
        try:
            return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, timeout=10,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None

    # (asked apart, each answer its output less its last line end: a folder's name or the repository's path can hold
    # a line break, QA round 144-I F4, "a\nb/" was read as the prefix "a" and the exclude file "b/")
    where = git("rev-parse", "--is-inside-work-tree", "--git-path", "info/exclude")
    answer = os.fsdecode(where.stdout) if where is not None and where.returncode == 0 else ""
    inside, _, git_path = answer.removesuffix("\n").partition("\n")
    shown = git("rev-parse", "--show-prefix") if inside == "true" and git_path else None
    if shown is None or shown.returncode != 0:  # (not in a work tree, or git cannot read it: nothing to tell)
        return None
    prefix = os.fsdecode(shown.stdout).removesuffix("\n")
    # (git's answer is relative to the folder it runs in as the system sees it, links followed, or absolute: joined
    # to the link's own text, normpath took "../.." up the link's side, QA round 145-A F1, a stray exclude file made
    # outside the repository. --path-format=absolute, git 2.31+, is printed back as it is by older gits)
    exclude = Path(os.path.normpath(os.path.join(os.path.realpath(folder), git_path)))
    tracked = git("ls-files", "--", name)
    if tracked is not None and tracked.returncode == 0 and tracked.stdout.strip():
        return (f"{path} is tracked by git (committed before): your own settings go to the repository with the next"
                f" commit. To keep them yours: git -C {shlex.quote(str(folder))} rm --cached {name}, then ignore it.")
    ignored = git("check-ignore", "-q", "--", name)
    if ignored is None or ignored.returncode != 1:  # (0: ignored already; 128: git cannot tell, a link on the way)
        return None
    if "\n" in prefix:  # (a pattern is one line of the file, with no escape for a line break)
        return (f"git does not ignore {path}, your own settings: its path holds a line break, which no line of"
                f" {exclude} can name: leave it out of your commits.")
    pattern = "/" + re.sub(r"([\\*?\[])", r"\\\1", prefix + name)
    # (a linked exclude file, one shared by several clones, is written at its target and stays a link, as git reads
    # it through the link: QA round 145-A F3, the link itself was handed to the write, which takes a link in a
    # resolved path for another program's change: "changed while dreamdb was editing it", false)
    target = Path(os.path.realpath(exclude))
    where = f"{target}, the file {exclude} links to" if target != exclude else str(exclude)
    try:
        try:
            old, seen = read_with_identity(target)
        except FileNotFoundError:
            old, seen = b"", ABSENT
            if target == exclude:  # (a link's missing folder is not made: said as the write's refusal)
                exclude.parent.mkdir(parents=True, exist_ok=True)
        text = os.fsencode(f"{LOCAL_SETTINGS_COMMENT}\n{pattern}\n")  # (a name's bytes as they are)
        atomic_write_bytes(target, old + (b"\n" if old and not old.endswith(b"\n") else b"") + text, expect=seen)
    except (OSError, DreamdbError) as exc:
        why = exc.message.rstrip(".") if isinstance(exc, DreamdbError) else exc.strerror or str(exc)
        unwritten = f"{exclude} links to {target}, which" if target != exclude else str(exclude)
        return (f"git does not ignore {path}, your own settings ({unwritten} could not be written: {why}): add"
                f" {pattern} to .gitignore, or leave it out of your commits.")
    return f"git ignores {path} in this clone, as your own settings: {pattern} was added to {where}."


def dreamdb_hook_commands(path: Path, command: str = DEFAULT_COMMAND) -> list[str]:
    """The commands of the dreamdb prompt hooks (:func:`is_dreamdb_hook`, run alone or among other commands) in the
    settings file ``path``, in file order; ``[]`` when it holds none, does not exist or cannot be read as settings (an install or
    uninstall then says why)."""
    return [c for c in hook_commands(path) if is_dreamdb_hook(c, command)]


def uninstall_hook(project_dir: Path, command: str = DEFAULT_COMMAND) -> bool:
    """Remove dreamdb's ``UserPromptSubmit`` hook from a project's settings (``settings.json`` and
    ``settings.local.json``); ``True`` if one was removed. See :func:`uninstall_hooks`."""
    return bool(uninstall_hooks(project_dir, command))


def uninstall_hooks(project_dir: Path, command: str = DEFAULT_COMMAND, *,
                    backups: list[Path] | None = None) -> list[Path]:
    """Remove dreamdb's ``UserPromptSubmit`` hook from a project's ``settings.json`` and ``settings.local.json``.

    Only hooks that run dreamdb's hook alone (:func:`runs_hook_alone`) are removed: one run among other shell
    commands (``cd X && dreamdb hook user-prompt-submit``) is left, as removing it would remove them too
    (:func:`dreamdb_hook_commands` still finds it). A group left
    with no hooks is removed, and so are ``UserPromptSubmit`` and ``hooks``
    if removing ours emptied them; everything else stays. The previous file
    is saved to ``<name>.bak`` (or the next free name, ``<name>.bak.1`` …, where a file dreamdb did not write is there:
    :func:`_backup_path`); a file that held nothing but dreamdb's hook, as an install made it
    (:func:`_made_by_install`), is removed instead, with its ``.bak`` if that holds only an earlier install's file,
    so install then uninstall leaves the project as it was (a
    symlinked file, one the user had before, of which an install kept a ``.bak``, or one written or edited by hand,
    is kept, as ``{}``), and so is the ``.claude`` folder that leaves empty if an install made it (recorded:
    :func:`_record_made_folder`; one the user had is kept).

    Args:
        project_dir: the project root.
        command: the command that was installed (other ``dreamdb hook
            user-prompt-submit`` commands are recognised too).
        backups: a list that gets each file a settings file's previous version was kept in.

    Returns:
        The settings files a hook was removed from (empty if none was installed, or there is no
        settings file).

    Raises:
        WriteRefused: a settings file is not valid JSON or has an unexpected
            shape (left untouched; nothing is changed in either file).
        WriteRefused: a file cannot be written (write-protected, no permission on its folder: both files checked,
            nothing is changed in either; disk full…).
        NotFound: no folder at ``project_dir`` (a mistyped path must not read as "nothing to remove").
    """
    _require_project(project_dir)
    done: list[Path] = []

    def edit() -> list[Path]:
        plans = [(path, *_without_our_hook(path, command)) for path in (settings_path(Path(project_dir)),
                                                                         settings_path(Path(project_dir), local=True))]
        folder = plans[0][0].parent
        # (whether install made .claude, told before anything is written or removed in it, which changes its time)
        record = _made_folder_record(folder) if folder.name == ".claude" else None
        # (both backups and both files checked before either file is written: QA round 60 M3; QA round 144-B F1,
        # settings.json was rewritten or deleted, then a settings.local.json of mode 444 refused, exit 6)
        for path, data, old_raw in plans:
            if data is not None:
                _refuse_repeated_keys(path, old_raw)  # (QA round 150-C F2: its earlier values lost)
                _check_backup(path, old_raw)
                _check_writable_place(path)
        last = max((i for i, (_p, data, _r) in enumerate(plans) if data is not None), default=-1)
        removed = False
        for i, (path, data, old_raw) in enumerate(plans):  # both files read and checked before either is written
            # (only the last change is recorded as the command's, done: an interruption between the two files is one
            # before it, 130, and uninstall run again removes the rest; QA round 111-A F4, "do not repeat it" said
            # with the hook still in settings.local.json)
            if data == {} and not path.is_symlink() and _made_by_install(path, old_raw, command):
                # (it held our hook alone, and no earlier version of it was kept, or one an install wrote: an install
                # made it, QA round 99-B F6, a "{}" file and a .bak were left; 149-A F2, after two installs; one the
                # user had, of whose first edit a .bak was kept, is kept as "{}": QA round 101-A F8)
                backup = _backup_path(path, old_raw)
                _remove(path, old_raw, commit=i == last)
                _remove_backup_of_install(backup, command)
                done.append(path)
                removed = True
            elif data is not None:
                written = _write(path, data, old_raw, commit=i == last)
                if written is not None and backups is not None:
                    backups.append(written)
                done.append(path)
        if removed:
            _remove_made_folder(record, folder)
        return done

    with settings_lock(Path(project_dir)):
        return _retried(edit)


def _without_our_hook(path: Path, command: str) -> tuple[dict | None, bytes | None]:
    """``(settings without dreamdb's hook, their old bytes)``, or ``(None, None)`` when the file holds none."""
    data, old_raw = _load(path)
    if old_raw is None:
        return None, None
    return (data, old_raw) if _drop_our_hooks(data, path, command) else (None, None)


def _drop_our_hooks(data: dict, path: Path, command: str) -> bool:
    """Remove from the settings ``data`` (of the file ``path``) the prompt hooks that run dreamdb's hook alone
    (:func:`runs_hook_alone`), and the group, ``UserPromptSubmit`` and ``hooks`` that leaves empty; ``True`` if one was
    removed.

    Raises:
        WriteRefused: ``hooks`` or ``hooks.UserPromptSubmit`` has an unexpected shape (:func:`_event_list`).
    """
    groups = _event_list(data, path, create=False)
    if not groups:
        return False
    removed = False
    kept_groups: list[Any] = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            kept = [h for h in group["hooks"]
                    if not (isinstance(h, dict) and runs_hook_alone(h.get("command"), command))]
            if len(kept) != len(group["hooks"]):
                removed = True
                if not kept:
                    continue
                group["hooks"] = kept
        kept_groups.append(group)
    if not removed:
        return False
    if kept_groups:
        data["hooks"][EVENT] = kept_groups
    else:
        del data["hooks"][EVENT]
        if not data["hooks"]:
            del data["hooks"]
    return True
