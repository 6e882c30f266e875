"""The ``dreamdb`` executable's entry point.

``dreamdb hook user-prompt-submit`` runs on every prompt an agent's user
types and ``dreamdb recall`` on every question an agent asks, so both skip
the click layer when they can (click alone costs ~80 ms to import here; see
:mod:`dreamdb.quickcli`); everything else goes through :func:`dreamdb.cli.main`.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    Ctrl-C while the modules are still loading (the first ~0.1 s, before any command's own
    handling) exits 130 with ``Interrupted.``, and the prompt hook 0 with nothing printed, as
    later: never a traceback (QA round 37). That holds from this function's first step on: the signals are taken
    first (:func:`_take_signals`), inside the ``try`` that handles Ctrl-C (QA round 148-D F3: a Ctrl-C while the
    signal module loaded, before the ``try``, ended the process by SIGINT with a traceback through this function);
    before it runs, Python's own start-up and the loading of this module are Python's to handle (README)."""
    global _DECIDED
    args = sys.argv[1:] if argv is None else argv
    try:
        try:
            if argv is None:
                _take_signals(args)
                one_blas_thread()
            code = _main(args)
        except Exception as exc:  # (QA round 108-C F2: raised inside ``__set_name__`` while click imported, the
            # interruption came out as a RuntimeError: a traceback and exit 1)
            if not (SIGNALLED and _caused_by_interrupt(exc)):
                raise
            raise KeyboardInterrupt from None
        _DECIDED = True  # (a signal from here on changes nothing: QA round 82 F2)
    except KeyboardInterrupt:
        _DECIDED = True  # (first: one more signal while this is handled is not another interruption)
        quickcli = sys.modules.get("dreamdb.quickcli")
        if _is_hook(args):  # the hook never fails the prompt
            code = 0
        elif quickcli is not None and quickcli.saved_change() is not None:
            code = quickcli.interrupted()  # the change is on disk: 0, "do not repeat it"
        else:
            try:
                sys.stderr.write("Interrupted.\n")
                if "--json" in args:  # (quickcli's JSON error, which may not be loaded yet)
                    sys.stdout.write('{"error": {"message": "Interrupted.", "hint": null, "exit_code": 130}}\n')
            except (OSError, ValueError, AttributeError):
                pass
            code = 130
    if argv is None:  # the executable: its outcome is decided, and a Ctrl-C while Python shuts down must not
        try:  # turn a saved and reported change into exit 130 (QA round 38)
            import signal

            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            if hasattr(signal, "SIGHUP"):
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
        except (ImportError, OSError):  # (at the open-file limit its module cannot be read: QA round 85 F3)
            return code
        except KeyboardInterrupt:  # (a Ctrl-C before SIGINT is ignored, as the signal module loads for a command that
            return code  # had not loaded it: the outcome stands, no traceback; QA round 148-D F3)
    return code


def _take_signals(args: list[str]) -> None:
    """The executable's handlers of SIGTERM (and SIGINT, SIGHUP) for the command ``args`` runs: a write command
    (:func:`changes_files`), the prompt hook (:func:`_is_hook`) and a command that uses the index
    (:func:`uses_index`) take them as Ctrl-C (:func:`_interrupt`) from here to the exit; other commands keep
    Python's (Ctrl-C raises ``KeyboardInterrupt``, SIGTERM ends the process, 143). Called first by :func:`main`,
    inside its ``try``: a Ctrl-C while this runs (the ``signal`` module takes ≈ 2 ms to load) is handled there."""
    global _DECIDED
    hoisted = hoist_options(args)
    writes = changes_files(hoisted)
    hook = _is_hook(args)  # (QA round 146-D F3: SIGTERM or SIGHUP killed the hook, 143 or 129,
    # nothing logged, where it always exits 0 and a Ctrl-C is logged: the hook takes them as it takes Ctrl-C)
    if writes or hook or uses_index(hoisted):
        import signal  # SIGTERM as Ctrl-C from the start to the exit (QA round 81-A F3: after the command's own
        # handling ended, a SIGTERM while the report was printed killed a saved change with 143; QA round 130-D F3:
        # `sync --json` killed by SIGTERM exited 143 with nothing on stdout)

        _DECIDED = False
        take_signal(signal.SIGTERM, _interrupt)
        if writes:
            take_signal(signal.SIGINT, _interrupt)
        if (writes or hook) and hasattr(signal, "SIGHUP"):  # (its terminal closed: QA round 111-A F5, hook install's
            take_signal(signal.SIGHUP, _interrupt)  # trial run went on with no time limit, in a session of its own)
        _quiet_swallowed_interrupts()


def take_signal(signum, handler):
    """Handle the signal ``signum`` with ``handler`` (:func:`signal.signal`), unless the process was started with it
    ignored: a POSIX shell starts a background job (``cmd &`` in a script) with SIGINT ignored, ``nohup`` a command
    with SIGHUP ignored, and such a process keeps ignoring it throughout (QA round 152-A F6: a write command, and
    ``sql`` while its query ran, took Ctrl-C's SIGINT as an interruption, exit 130, where Python's own handling left
    it ignored). The handler that was there, as :func:`signal.signal` returns it.

    Raises:
        ValueError: not the main thread (as :func:`signal.signal`)."""
    import signal

    old = signal.getsignal(signum)
    if old is signal.SIG_IGN:
        return old
    return signal.signal(signum, handler)


BLAS_THREAD_SETTINGS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
"""The environment variables OpenBLAS (numpy's BLAS) reads its thread count from, in its order."""


def one_blas_thread() -> None:
    """Set ``OPENBLAS_NUM_THREADS=1`` for the ``dreamdb`` executable's process, before numpy is imported, unless the
    environment sets one of :data:`BLAS_THREAD_SETTINGS`. OpenBLAS starts a thread per core when numpy is imported,
    and where one cannot be started (an address-space limit, ``ulimit -v``) it raises SIGINT in the process: a hybrid
    recall said "Interrupted." and exited 130 though nobody interrupted it, or OpenBLAS exited 1 with no JSON (QA round
    123-B F3). dreamdb's products are a query vector against the stored ones (``float32[n, 384] @ float32[384]``),
    which one thread does as fast (recall, measured: 69 vs 70 ms); the library, imported by a program, leaves the
    program's setting alone."""
    if not any(os.environ.get(name, "").strip() for name in BLAS_THREAD_SETTINGS):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


_DECIDED = True
"""Whether the write command this process runs has its outcome (:func:`main`): a signal then changes nothing."""


SIGNALLED = False
"""Whether a write command's SIGINT, SIGTERM or SIGHUP came before its outcome was decided (:func:`_interrupt`). The
``KeyboardInterrupt`` it raises can be lost: raised inside a weakref callback or an import lock's, Python reports it
as "Exception ignored" and goes on, and the command went on to save its change, exit 0 (QA round 108-C F1). The
writes check this flag just before they replace a file (:func:`dreamdb.writes.files.raise_if_signalled`)."""


def _interrupt(signum, frame):
    """The signal handler of a write command's SIGINT, SIGTERM and SIGHUP: Ctrl-C (``KeyboardInterrupt``) until its
    outcome is decided, nothing after (QA round 82 F2: a signal between the outcome and the end of the process gave a traceback
    and 130, a saved change then repeated by its caller); recorded in :data:`SIGNALLED` too."""
    global SIGNALLED
    if not _DECIDED:
        SIGNALLED = True
        raise KeyboardInterrupt


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a ``KeyboardInterrupt`` is in ``exc``'s chain of causes and contexts."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _quiet_swallowed_interrupts() -> None:
    """Keep Python's "Exception ignored in …" report of an interruption it lost (:data:`SIGNALLED`) off stderr: the
    command says itself whether it was interrupted. Other unraisable exceptions are reported as before."""
    default = sys.unraisablehook

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and SIGNALLED:
            return
        default(unraisable)

    sys.unraisablehook = hook


def changes_files(args: list[str]) -> bool:
    """Whether ``args`` (options hoisted: :func:`hoist_options`) run a command that changes the vault or the agent's
    settings: ``remember``, ``update``, ``delete``, ``hook install``, ``hook uninstall``. The executable then handles
    SIGTERM as Ctrl-C (:func:`_interrupt`): the command says whether its change was saved."""
    return args[:1] in (["remember"], ["update"], ["delete"]) or args[:2] in (["hook", "install"], ["hook", "uninstall"])


def uses_index(args: list[str]) -> bool:
    """Whether ``args`` (options hoisted: :func:`hoist_options`) run a command that reads or writes a vault's index
    (and syncs it first): ``sync``, ``recall``, ``status``, ``list``, and ``embed`` ``refresh``, ``status``,
    ``compact`` and ``dedup``.
    The executable then handles SIGTERM as Ctrl-C (:func:`_interrupt`): ``Interrupted.``, exit 130 (the JSON error
    with ``--json``), the sync under way rolled back, where SIGTERM's default ended the process with 143 and nothing
    said (QA round 130-D F3). Not ``sql``: Python runs a handler between bytecodes, so it would wait for the query,
    where the default ends it at once (:func:`dreamdb.cli.options.sigterm_as_interrupt`). The prompt hook
    (:func:`_is_hook`) takes SIGTERM and SIGHUP as it takes Ctrl-C: exit 0, ``hook interrupted`` in its log (QA
    round 146-D F3: killed with 143 or 129, nothing logged); its waits for a lock are in slices of 0.1 s
    (:func:`dreamdb.store.connect.execute_waiting`), so it ends as soon as a Ctrl-C would."""
    return args[:1] in (["sync"], ["recall"], ["status"], ["list"]) or args[:2] in (
        ["embed", "refresh"], ["embed", "status"], ["embed", "compact"], ["embed", "dedup"])


def _is_hook(args: list[str]) -> bool:
    """Whether ``args`` run the prompt hook: ``hook``, then ``user-prompt-submit``, with no other command's name
    before ``hook`` nor another subcommand's between them (:func:`_names_no_command`; not with ``-h``, ``--help``,
    or ``--version`` before ``hook``). Claude Code reads a hook's exit code 2 as "block this prompt and erase it",
    so an option click would refuse, and its value, before the subcommand as after it, is logged and ignored, never
    exit 2 (QA rounds 52, 53, 136 F1: ``hook --project P user-prompt-submit``). The words in a command's text are
    not the hook: ``dreamdb remember Fixed the hook user-prompt-submit exit code`` ran it, which saved nothing and
    waited for a payload on stdin (QA round 135-A F1); nor is any other word in a command's place before ``hook``,
    a mistyped command's name (``dreamdb rememberr Fixed the hook user-prompt-submit``: QA round 139-D F6, it ran
    the hook, saved nothing and said nothing, where click names the unknown command). A scan of the arguments, no
    parsing: the hook starts without click."""
    if "-h" in args or "--help" in args or "hook" not in args:
        return False
    at = args.index("hook")
    if "user-prompt-submit" not in args[at + 1:]:
        return False
    sub = args.index("user-prompt-submit", at + 1)
    return ("--version" not in args[:at] and _names_no_command(args[:at], any_word=True)
            and _names_no_command(args[at + 1:sub]))


def _names_no_command(words: list[str], any_word: bool = False) -> bool:
    """Whether none of ``words`` is a dreamdb command's or subcommand's name (:data:`_COMMAND_NAMES`), or with
    ``any_word`` any word at all, in a command's place: a word just after an option other than ``--json`` is taken
    as that option's value (``--vault recall`` names a vault), and after ``--`` any word is in a command's place.
    A word that starts with a dash, typographic ones too (``—vault``, as a text editor turns ``--vault``), is
    an option."""
    value = False
    for word in words:
        if word == "--":
            value = False
        elif word[:1] in _DASHES and word != "-":
            value = word != "--json" and "=" not in word
        elif value:
            value = False
        elif any_word or word in _COMMAND_NAMES:
            return False
    return True


_DASHES = ("-", "\u2013", "\u2014")
"""The characters an option starts with, for :func:`_names_no_command`: ``-``, and the en and em dashes a text
editor or chat makes of ``--``."""


_GROUPS = ("embed", "model", "lexicon", "hook")
"""Commands whose first argument names a subcommand (``dreamdb embed refresh``)."""

JSON_COMMANDS = frozenset((
    "recall", "sync", "status", "list", "sql", "remember", "update", "delete", "eval",
    "embed refresh", "embed status", "embed compact", "embed dedup",
    "model status", "model build", "model install", "model download",
    "lexicon status", "lexicon build", "hook install", "hook uninstall",
))
"""The commands that take ``--json`` (a test keeps this equal to the click commands; listed here so that
recall's fast path does not import click to find out)."""

NO_JSON_COMMANDS = frozenset(("hook user-prompt-submit",))
"""The commands that take no ``--json``: with :data:`JSON_COMMANDS`, every command (a test keeps them so)."""

_COMMAND_NAMES = frozenset(word for c in JSON_COMMANDS | NO_JSON_COMMANDS for word in c.split())
"""Every command's and subcommand's name (``recall``, ``embed``, ``refresh`` …), for :func:`_is_hook`."""

_SUBCOMMANDS = {group: sorted(c.split()[1] for c in JSON_COMMANDS | NO_JSON_COMMANDS if c.split()[0] == group)
                for group in _GROUPS}
"""Each group's subcommands, by name."""


PROGRAM_OPTIONS = ("--version", "-h", "--help")
"""The program's own options, before any command: its version and its help (a test keeps them the click group's).
``--version`` before the others shows the version; ``--version --json`` shows it as JSON without click."""


def hoist_options(args: list[str]) -> list[str]:
    """``args`` with ``--vault PATH`` and ``--json`` written before the command moved to just after it.

    ``dreamdb --vault ~/p recall "x"`` is how ``git -C`` and ``docker --host`` are typed; the
    options belong to each command (``recall`` repeats ``--vault``, ``model`` has none), so they are
    moved behind the command's name (``embed refresh``: behind both words), where that command reads
    or refuses ``--vault``. ``--json`` moves too, except to a command that takes none
    (:data:`NO_JSON_COMMANDS`: ``hook user-prompt-submit``), where it stays where it was. To an unknown command
    or subcommand it moves as to a known one: click then names it, with the commands it may have meant
    (``dreamdb --json embed bogus``: QA round 130-D F1, it said "No such option '--json'"). A group without its
    subcommand gets them behind its name too (``dreamdb --json embed``: as ``dreamdb embed --json``, "Missing
    command", or its help with ``--help``: :func:`_main`); one followed by another option of its own
    (``dreamdb --json embed --bogus``) loses them, so that click names that option.
    Written between a group and its subcommand (``dreamdb embed --vault V refresh``), they move behind the
    subcommand too: that group has neither (it said "dreamdb embed has no --vault option (it reads no vault's
    index)", though ``embed refresh`` reads one).
    Another option before the command (QA round 135-A F6: ``dreamdb --vault V --bogus status`` said "dreamdb
    --version has no --vault option", ``dreamdb --json --bogus status`` "No such option '--json'") loses them too,
    so that click names it; but ``-h`` or ``--help`` there, after them or before them (``dreamdb -h --vault V
    status``, ``dreamdb --help --json``: :func:`_help_among_leading_options`), is the program's help, and between a
    group and its subcommand the group's (``dreamdb embed --vault V -h status``), as click shows for ``dreamdb embed
    -h status``: the help of the last command named. A ``--`` just before the command's name or the subcommand's is dropped, as
    click reads ``dreamdb -- status`` as ``dreamdb status`` (``dreamdb --json embed -- status`` said "No such option
    '--json'"); one before an option is kept, the options before it dropped (``dreamdb --vault V embed -- -x``:
    click names ``-x``, as without them), and one at the end after moved options is dropped (as no command).
    Anything else is returned unchanged: nothing before the command, ``--vault`` without its path, ``--version``
    (:func:`dreamdb.cli.main` says it takes no ``--vault``), or no command after it.

    Args:
        args: the command line without the program name.

    Returns:
        a new list (or ``args`` itself when nothing moves).
    """
    if _help_among_leading_options(args):
        return ["--help"]
    moved, json_flags, i = _leading_options(args)
    args = _without_double_dash(args, i, bool(moved or json_flags))
    if (moved or json_flags) and i < len(args) and args[i].startswith("-") and args[i] != "--version":
        return args[i:]  # (--json still makes the error JSON)
    if i < len(args) and args[i] in _GROUPS:
        first = i + 1
        sub = first + _leading_options(args[first:])[2]
        args = _without_double_dash(args, sub, bool(moved or json_flags) or sub > first)
        if sub < len(args) and args[sub] in ("-h", "--help"):
            return [args[i], "--help"]
        # An option the group does not have (``dreamdb --json embed --bogus``): click's error is about that option,
        # not the --json or --vault moved before it (QA round 131 F3); --json still makes it JSON. Not the hook's
        # arguments (it logs every one it ignores).
        if sub < len(args) and args[sub].startswith("-") and not _is_hook(args):
            return [args[i], *args[sub:]]
        if first < sub < len(args):  # ``embed --vault V refresh``: as ``--vault V embed refresh``
            args = [*args[:i], *args[first:sub], args[i], *args[sub:]]
            moved, json_flags, i = _leading_options(args)
    if not (moved or json_flags) or i >= len(args) or args[i].startswith("-"):  # (also --vault without its path)
        return args
    path_end = i + 1
    if args[i] in _GROUPS and path_end < len(args) and not args[path_end].startswith("-"):
        path_end += 1
    if " ".join(args[i:path_end]) not in NO_JSON_COMMANDS or "-h" in args[path_end:] or "--help" in args[path_end:]:
        # (the help of a command that takes no --json: as without it, where it said "No such option '--json'", QA
        # round 139-D F9; ``hook user-prompt-submit`` ignores an option it does not take)
        # (each once: --json given twice is one; a --json=VALUE kept, for the command to refuse, QA round 156-D F4)
        moved, json_flags = [*moved, *dict.fromkeys(json_flags)], []
    if not moved:
        return args
    return [*json_flags, *args[i:path_end], *moved, *args[path_end:]]


def _without_double_dash(args: list[str], i: int, moved: bool) -> list[str]:
    """``args`` without the ``--`` at ``args[i]`` when a name follows it (not an option: click reads ``dreamdb --
    status`` and ``dreamdb embed -- status`` as without it; QA round 133 F1 kept the options before it, and they
    were refused), or nothing follows it and options were ``moved`` (``dreamdb --vault V --``: the command is
    missing, not a --vault option); else ``args``."""
    if i < len(args) and args[i] == "--" and (not args[i + 1].startswith("-") if i + 1 < len(args) else moved):
        return [*args[:i], *args[i + 1:]]
    return args


def _group_alone(args: list[str]) -> str | None:
    """The group ``args`` (options hoisted) name with nothing after it but ``--vault PATH``, ``--json`` and ``-h`` or
    ``--help`` (``dreamdb embed --json``: click said "No such option '--json'", or that embed has no ``--vault``;
    QA round 130-D F1), else ``None``."""
    if len(args) > 1 and args[0] in _GROUPS and _only_leading_options([a for a in args[1:]
                                                                        if a not in ("-h", "--help")]):
        return args[0]
    return None


def _leading_options(args: list[str]) -> tuple[list[str], list[str], int]:
    """``(--vault options, --json flags, index of the first other argument)`` at the start of ``args``; a
    ``--vault`` without its path is taken as one, and the index is then ``len(args)``. ``--json=VALUE`` is a --json
    flag too, moved as it is, so that the command's own parsing refuses it ("Option '--json' does not take a value."),
    where the program's said "No such option '--json'" (QA round 156-D F4)."""
    moved, json_flags, i = [], [], 0
    while i < len(args):
        if args[i] == "--vault":
            moved += args[i:i + 2]
            i = min(i + 2, len(args))
        elif args[i].startswith("--vault="):
            moved.append(args[i])
            i += 1
        elif args[i] == "--json" or args[i].startswith("--json="):
            json_flags.append(args[i])
            i += 1
        else:
            break
    return moved, json_flags, i


def _help_among_leading_options(args: list[str]) -> bool:
    """Whether ``args`` start with the options :func:`hoist_options` moves (``--vault PATH``, ``--json``) and ``-h``
    or ``--help`` among them, before or after them: the program's help. Only ``dreamdb --vault V -h status`` and
    ``dreamdb --json --help`` showed it; ``dreamdb -h --vault V status`` said "No such option '--vault'", and
    ``dreamdb --help --json`` "No such option '--json'" (QA round 144-D F3)."""
    helps = moved = False
    i = 0
    while i < len(args):
        step = _leading_options(args[i:])[2]
        moved = moved or step > 0
        i += step
        if i >= len(args) or args[i] not in ("-h", "--help"):
            break
        helps = True
        i += 1
    return helps and moved


def _only_leading_options(args: list[str]) -> bool:
    """Whether ``args`` holds nothing but the options :func:`hoist_options` moves (``--vault PATH``, ``--json``):
    no command to move them to."""
    return _leading_options(args)[2] >= len(args)


def _encodable_output() -> None:
    """Standard output and error in an encoding that cannot write all of Unicode (a Latin-1 or ASCII locale):
    what they cannot encode is written as ``\u2014`` escapes, and JSON escapes every character past ASCII
    (:data:`dreamdb.output.ASCII_JSON`), instead of every printing command failing with UnicodeEncodeError (QA round
    93-A F3, exit 70). The prompt hook writes UTF-8 whatever the locale (:func:`dreamdb.hook.run_stdin`).

    A UTF-8 standard output writes a lone surrogate as stderr does, ``\\udcff`` (backslashreplace), not as an error
    (a strict UTF-8 locale other than C.UTF-8) nor as the raw byte (C.UTF-8's surrogateescape, no UTF-8): a path
    given on the command line or in the environment that is not UTF-8 (its byte 0xFF read as U+DCFF) in the text of
    ``hook install`` or ``model status`` (QA round 146-H F1: exit 70 after ``hook install`` had saved its change).
    JSON escapes them itself (:func:`dreamdb.output.escape_for_json`), the same ``\\udcff``."""
    import codecs

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        encoding = getattr(stream, "encoding", None)
        try:
            unicode = encoding is None or codecs.lookup(encoding).name.startswith("utf")
        except LookupError:
            unicode = False
        if unicode and name == "stdout" and getattr(stream, "errors", None) in ("strict", "surrogateescape"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (AttributeError, ValueError, OSError):
                pass
        if not unicode:
            try:
                stream.reconfigure(errors="backslashreplace")
            except (AttributeError, ValueError, OSError):
                pass
            _click_writes_as_is(name)
            if name == "stdout":
                from dreamdb import output

                output.ASCII_JSON = True


def _click_writes_as_is(name: str) -> None:
    """``click.echo`` writing to ``sys.<name>`` as it is configured (:func:`_encodable_output`): click takes an ASCII
    stream for a misconfigured one and writes UTF-8 bytes to its buffer in its place, so under ``PYTHONIOENCODING=ascii``
    (or ``LC_ALL=C PYTHONUTF8=0``) ``list``, ``status`` and ``sql`` wrote raw UTF-8 where ``recall`` (written to
    ``sys.stdout``) and JSON wrote escapes (QA round 156-D F5). Every command now writes what the stream cannot
    encode as escapes (``nas\u0131l``), as docs/json.md says of JSON."""
    import click.utils

    default = {"stdout": "_default_text_stdout", "stderr": "_default_text_stderr"}[name]
    if callable(getattr(click.utils, default, None)):  # (click's own lookup; left alone where a click has none)
        setattr(click.utils, default, lambda: getattr(sys, name))


def _blocking_output() -> None:
    """Standard input, output and error made blocking when the process was given them non-blocking (O_NONBLOCK, as
    Node-based harnesses hand over their pipes): CPython's buffered writer then drops what a full pipe does not take,
    without an error, so a long ``list`` or ``sql --format json`` was cut at 64 KiB with exit 0 (QA round 114-B F1);
    and a read of standard input returns what is there so far, so ``update --content -`` saved half the text, and
    the hook read half a prompt (116-A F1). The flag belongs to the open file, shared with whoever handed it over; a
    reader or writer that waits on its pipe is what a command's caller expects."""
    for fd in (0, 1, 2):
        try:
            if not os.get_blocking(fd):
                os.set_blocking(fd, True)
        except OSError:  # closed, or not a file that has the flag
            pass


def _buffered_output() -> None:
    """Standard output written through a buffered writer when Python was started unbuffered (``PYTHONUNBUFFERED=1``
    or ``python -u``, as containers and CI often set it). Its text stream then writes straight to the file and takes
    a write the system does only in part (a disk that fills partway: ``write(1, …, 200000) = 8192``) as done, the rest
    dropped without an error: a long ``list --json``, ``recall`` or ``sql`` to a file was cut at 8 KiB with exit 0
    (QA round 144-D F1). A buffered writer writes the rest, and the write that fails raises its error (ENOSPC), which
    :func:`dreamdb.quickcli.run_guarded` reports (exit 74). Each line is flushed as it is written, as unbuffered."""
    import io

    stream = sys.stdout
    if not isinstance(getattr(stream, "buffer", None), io.RawIOBase):  # buffered already, or no file
        return
    try:
        raw = io.FileIO(stream.fileno(), "w", closefd=False)  # (its own: the first stream's closes its at exit)
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding, errors=stream.errors,
                                      newline="\n", line_buffering=True, write_through=True)
    except (OSError, ValueError):  # closed, or not a file to write
        pass


def _before_command(args: list[str]) -> list[str]:
    """The arguments before the command (or before ``--``): the program's own options and ``--vault``'s value. A
    ``--json`` or ``--version`` after the command is the command's, or its text (``remember -- the --json flag``:
    QA round 128-A F1, it was taken out of the text)."""
    for i, arg in enumerate(args):
        if arg == "--" or (not arg.startswith("-") and (i == 0 or args[i - 1] != "--vault")):
            return args[:i]
    return list(args)


def _main(args: list[str]) -> int:
    from dreamdb import quickcli

    _blocking_output()
    _buffered_output()
    _encodable_output()
    if sys.stdout is None:  # started with standard output closed: writing it is an error, said on stderr
        sys.stdout = quickcli.ClosedOutput()
    sys.stderr = quickcli.ForgivingStderr(sys.stderr)  # None when started with it closed
    quickcli.JSON_ERRORS = quickcli.wants_json(args)
    lead = _before_command(args)
    if "--version" in lead and "--json" in lead:  # (QA round 74 F10: an agent probing the version got an error object)
        at = lead.index("--version")
        # (first, and the program's own options alone after it: the command is not read, as `dreamdb --version status`
        # prints the version alone, but another option is, as without --json: QA round 144-D F4, `dreamdb --version
        # --json --vault V` printed the version, exit 0, where `dreamdb --version --vault V` is a usage error)
        if not [a for a in lead[:at] if a != "--json"] and set(lead[at:]) <= {"--json", *PROGRAM_OPTIONS}:
            from dreamdb import __version__

            # (through the CLI's error policy: a full disk or a closed pipe, QA round 76 F7)
            return quickcli.run_guarded(lambda: sys.stdout.write(f'{{"version": "{__version__}"}}\n'))
        # (its error said "No such option '--json'", not the --vault beside it: QA round 127-A F1; JSON_ERRORS is
        # set, so the error is JSON still)
        args = [a for a in lead if a != "--json"] + args[len(lead):]
    if _is_hook(args):  # (first: "hook --vault user-prompt-submit" is no group alone, QA round 133 F5; and before
        # the options move, which took "--vault hook user-prompt-submit"'s hook for a path, QA round 136 F3: exit 2)
        from dreamdb.hook import note_ignored_arguments, run_stdin

        note_ignored_arguments([a for a in args if a not in ("hook", "user-prompt-submit")])
        return run_stdin()
    args = hoist_options(args)
    if any(a.startswith("--json=") for a in _before_command(args)):  # (no command took it: dreamdb --json=1, or
        # --json=1 --version; as a command says it, where the program's "No such option '--json'" was said, QA round
        # 156-D F4)
        return quickcli.print_error("Option '--json' does not take a value.", None, 2)
    if args and _only_leading_options(args):  # (QA round 72-A: "No such option '--vault'", though --help allows it)
        return quickcli.print_error(
            "Missing command: --vault PATH and --json go with a command.",
            "Add the command, e.g. dreamdb --vault PATH status (dreamdb --help lists them).", 2)
    group = _group_alone(args)
    if group is not None and ("-h" in args or "--help" in args):
        args = [group, "--help"]  # (its help needs neither --vault nor --json)
    elif group is not None:
        subs = _SUBCOMMANDS[group]
        example = f"dreamdb {group} {'status' if 'status' in subs else subs[0]}"
        example += " --json" if "--json" in args else ""
        return quickcli.print_error(
            f"Missing command: dreamdb {group} needs one of its commands ({', '.join(subs)}).",
            f"Name it after {group}, e.g. {example} (dreamdb {group} --help describes them).", 2)
    if args[:1] == ["recall"]:
        from dreamdb.quickcli import fast_recall

        code = fast_recall(args[1:])
        if code is not None:
            return code
    from dreamdb.cli import main as cli_main

    return cli_main(args)
