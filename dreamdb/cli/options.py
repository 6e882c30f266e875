"""Option decorators shared by every command (sqlite-utils' habit)."""

from __future__ import annotations

import contextlib
import signal

import click


def _one_vault(ctx, param, value):
    """A repeated ``--vault`` on a one-vault command is an error, not "the last one wins" (a write
    must never go to a vault the user did not mean)."""
    if len(value) > 1 and not _one_folder(value):  # (one vault by two of its paths is one: QA round 101-A F14,
        # as dreamdb.open([a, a/_dream_context]) gives its Index)
        import os

        missing = [v for v in value if not os.path.lexists(v)]  # (QA round 102-A: named too, not only counted)
        raise click.BadParameter(f"this command works on one vault; {len(value)} were given "
                                 "(only `dreamdb recall` searches several)"
                                 + (f", and {', '.join(map(str, missing))} does not exist" if missing else "") + ".",
                                 ctx=ctx, param=param)
    return value[0] if value else None


def _one_folder(paths) -> bool:
    """Whether ``paths`` all name one vault (after resolving, as :class:`dreamdb.multi.MultiIndex` compares them)."""
    from dreamdb.errors import DreamdbError
    from dreamdb.vault.discover import find_vault

    try:
        return len({find_vault(p).resolve() for p in paths}) == 1
    except (DreamdbError, OSError, RuntimeError):
        return False


def vault_option(multiple: bool = False):
    """``--vault PATH`` (repeatable when ``multiple``)."""
    return click.option(
        "--vault", "vaults" if multiple else "vault", multiple=True, metavar="PATH", type=NonEmptyPath(readable=False),
        callback=None if multiple else _one_vault,
        help="Vault folder (_dream_context or a folder containing one). "
        + ("Repeat to search several vaults. " if multiple else "")
        + "Default: $DREAMDB_VAULT, else found by walking up from the current folder.",
    )


json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")


_ADDS = " Comma-separated; repeating the option adds to it."
"""The help's words for a list filter's repeats (:func:`filter_options`)."""


def _given_or_none(ctx, param, value):
    """A repeatable list filter's values as given (a tuple), or ``None`` when the option was not given (no filter)."""
    return tuple(value) if value else None


def filter_options(function):
    """The document filters of ``recall`` and ``list`` (:meth:`dreamdb.Index.recall`'s arguments): ``--types``,
    ``--exclude-types``, ``--tags``, ``--since``, ``--until``, ``--status``, ``--level``, in that order.

    The list filters (``--types``, ``--exclude-types``, ``--tags``, ``--status``) take a comma list and add up when
    repeated: ``-t knowledge -t feature`` is ``-t knowledge,feature``, passed on as the tuple of the values given
    (``None`` when the option is not given), which the library reads as one list (:func:`dreamdb.api._split`).
    Click kept the last value alone, silently (QA round 153-B F4: ``-t knowledge -t feature`` found features only)."""
    options = (
        click.option("--types", "-t", metavar="A,B", multiple=True, callback=_given_or_none,
                     help="Only these document types (knowledge, feature, task, memory, changelog, objective, insight,"
                          " thesis, bookmark)." + _ADDS),
        click.option("--exclude-types", metavar="A,B", multiple=True, callback=_given_or_none,
                     help="Drop these document types." + _ADDS),
        click.option("--tags", metavar="A,B", multiple=True, callback=_given_or_none,
                     help="Only documents with any of these tags." + _ADDS),
        click.option("--since", metavar="WHEN",
                     help="Only documents dated on/after WHEN (ISO-8601 or relative: -30d, '2 weeks')."),
        click.option("--until", metavar="WHEN",
                     help="Only documents dated on/before WHEN (a date: up to the end of that day)."),
        click.option("--status", metavar="A,B", multiple=True, callback=_given_or_none,
                     help="Only documents with one of these statuses." + _ADDS),
        click.option("--level", type=WholeNumber(1, 3), help="Only documents of at least this importance (1–3)."),
    )
    for option in reversed(options):
        function = option(function)
    return function


def open_index(vault, **kwargs):
    """Open one vault's index (the CLI's single path into the library); ``kwargs``: :class:`dreamdb.api.Index`'s."""
    from dreamdb.api import open_index as _open

    return _open(vault, **kwargs)


def say(line: str, one_line: bool | None = None) -> None:
    """Print ``line`` (a ``warning:``, ``note:`` or ``Error:`` line, or what a command is doing) on stderr, made safe
    to show (:func:`dreamdb.output.stderr_line`): every line the CLI writes there goes through here, as stdout's text
    goes through :func:`dreamdb.output.safe_text`. A warning names a vault's file, and a name may hold anything: QA
    round 135-B F1, a note named ``bad`` ESC ``[2J`` ESC ``]0;OWNED`` BEL ``name.md`` cleared the terminal and set its
    title through the warning of its frontmatter, on ``sync``, ``recall`` and ``list``. A ``warning:`` or ``note:``
    line is one message, on one line whatever the names it quotes hold (QA round 137 F3), as is any line said
    ``one_line`` (eval's, ``set scifact: warning: …``: QA round 138 F1)."""
    from dreamdb.output import stderr_line

    one_line = line.startswith(ONE_LINE_PREFIXES) if one_line is None else one_line
    click.echo(stderr_line(line, one_line=one_line), err=True)


ONE_LINE_PREFIXES = ("warning: ", "note: ")
"""The stderr lines that are one message each (:func:`say`): a newline in them is a quoted name's."""


def require_text(text: str, path: str, option: str, *, after: str, hint: str) -> None:
    """Refuse (UsageError, exit 2) text read from ``path`` (``-``: standard input) for ``option`` that holds no
    character that shows (:func:`dreamdb.output.has_visible`, the test the writes apply to a note's text): none, blanks
    alone, or invisible characters alone (a zero-width space). ``remember``'s refusal, and ``embed dedup``'s, of a
    failed pipe or an empty file (QA round 143-C F3: a verdict of the title alone, without a word; 143-H F4: a
    zero-width space alone was compared, which remember refuses). ``after``: what came of it (``nothing was
    changed``)."""
    import unicodedata

    from dreamdb.errors import UsageError
    from dreamdb.output import has_visible

    if has_visible(text):
        return
    # (a file's name as the user wrote it: "Notes.md" was said of notes.md, QA round 135-E F4)
    what = "Standard input" if path == "-" else f"The file {path}"
    hidden = next((c for c in text if not c.isspace()), None)
    if hidden is None:
        raise UsageError(f"{what} ({option}) holds no text; {after}.", hint=hint)
    name = unicodedata.name(hidden, "")
    raise UsageError(f"{what} ({option}) holds no visible character (only spaces and invisible characters such as "
                     f"U+{ord(hidden):04X}{' ' + name if name else ''}); {after}.", hint=hint)


def print_notes(index, extra=(), *, skip_note: str | None = None) -> list[str]:
    """``note:`` lines on stderr: ``extra`` (e.g. a sync report's warnings), then the index's notes
    (lazy-sync warnings, a damaged index rebuilt, a lock waited for). ``skip_note`` (the index's
    ``read_as_is``: "answered from the index as it is") is kept among the index's notes, to be said with the
    answer, not before it: a command that then fails gave no answer (QA round 143-E F4). Returns the notes said
    (for a command's JSON output, which carries them too)."""
    notes = index.take_notes()
    said = []
    for note in [*extra, *notes]:
        if skip_note is not None and note == skip_note:
            index.notes.append(note)
            continue
        say(f"note: {note}")
        said.append(note)
    return said


def no_such_command(ctx: click.Context, name: str, names) -> None:
    """Fail (exit 2) with "No such command 'recal'. Did you mean 'recall'?": the close matches among ``names``
    (:func:`difflib.get_close_matches`), whatever click's version suggests by itself."""
    import difflib

    names = list(names)
    scored = sorted(((difflib.SequenceMatcher(None, name, n).ratio(), n) for n in names), key=lambda s: -s[0])
    # the closest, and those nearly as close ('instal': install, uninstall; 'recal': recall, not eval)
    close = [n for r, n in scored[:3] if r >= max(0.6, scored[0][0] - 0.15)] if scored else []
    message = f"No such command {name!r}."
    if len(close) == 1:
        message += f" Did you mean {close[0]!r}?"
    elif close:
        message += f" Did you mean one of: {', '.join(map(repr, close))}?"
    ctx.fail(message)


class SuggestingGroup(click.Group):
    """A click group whose "No such command" names the commands closest to the one typed (``dreamdb recal``,
    ``dreamdb embed refrsh``), from :meth:`list_commands`, so a lazily loaded group's commands count too."""

    def resolve_command(self, ctx, args):  # noqa: D102
        name = click.utils.make_str(args[0])
        if (name[:1].isalnum() and not ctx.resilient_parsing and ctx.token_normalize_func is None
                and self.get_command(ctx, name) is None):
            no_such_command(ctx, name, self.list_commands(ctx))
        return super().resolve_command(ctx, args)


class NonEmptyPath(click.Path):
    """``click.Path`` that refuses an empty or blank value (exit 2): ``--dest ''`` built into the default folder
    and ``--to ''`` said ". is a folder" (QA round 94-B F6), where ``--vault ''`` said the path is empty."""

    def convert(self, value, param, ctx):  # noqa: D102
        if isinstance(value, str) and not value.strip():
            from click.core import ParameterSource

            envvar = param.resolve_envvar_value(ctx) if param is not None and ctx is not None else None
            if envvar is not None and ctx.get_parameter_source(param.name) is ParameterSource.ENVIRONMENT:
                # (QA round 95 F6: DREAMDB_EVAL_DATA of spaces was blamed on --data, which was not given)
                self.fail(f"the path is empty (from {param.envvar}): give a path, or unset {param.envvar}.",
                          param, ctx)
            self.fail("the path is empty: give a path, or leave the option out.", param, ctx)
        return super().convert(value, param, ctx)


class ExistingPath(NonEmptyPath):
    """A file or folder an option names to be read (``--from DIR``, ``--file FILE``, ``--project DIR``): one that is not
    there, or not of the kind the option needs (a folder given for a file), is "not found", exit 7 (README), said with
    the path and the option (:class:`~dreamdb.errors.NotFound`). ``click.Path(exists=True)`` said "Invalid value",
    exit 2, other options' commands 2 or 8 (QA round 130-D F2). A file is anything but a folder (the pipe of a shell's
    ``<(cmd)`` is one); ``-`` is standard input where ``allow_dash``; an empty value is a usage error, as before.

    Args:
        folder: the option names a folder (else a file).
        what: what the message calls it ("project folder"; default "folder" or "file").
        hint: the error's hint (default: give the option an existing folder or file).
    """

    def __init__(self, *, folder: bool, what: str | None = None, hint: str | None = None, **kwargs) -> None:
        super().__init__(file_okay=not folder, dir_okay=folder, **kwargs)
        self.folder = folder
        self.what = what or ("folder" if folder else "file")
        self.hint = hint

    def convert(self, value, param, ctx):  # noqa: D102
        blank = isinstance(value, str) and not value.strip()  # (NonEmptyPath's usage error)
        if not blank and not (self.allow_dash and value == "-") and not (ctx is not None and ctx.resilient_parsing):
            from dreamdb.config import expand_user
            from dreamdb.vault.discover import path_problem

            problem = path_problem(expand_user(value), folder=self.folder)
            if problem is not None:
                from click.core import ParameterSource

                from dreamdb.errors import NotFound

                named = param.opts[0] if param is not None else "the option"
                if param is not None and ctx is not None and param.envvar \
                        and ctx.get_parameter_source(param.name) is ParameterSource.ENVIRONMENT:
                    named = param.envvar if isinstance(param.envvar, str) else named
                kind = "folder" if self.folder else "file"
                raise NotFound(f"No {self.what} at {value} ({named}): the path {problem}.",
                               hint=self.hint or f"Give {named} an existing {kind}"
                                                 + (" (or - for standard input)." if self.allow_dash else "."))
        return super().convert(value, param, ctx)


class WholeNumber(click.IntRange):
    """``click.IntRange`` whose refusal of a non-number reads "'abc' is not a valid whole number", not click's
    "is not a valid integer range" (QA round 102-B)."""

    name = "whole number"

    def get_metavar(self, *args, **kwargs):  # noqa: D102 (click's INTEGER, not WHOLE NUMBER)
        return "INTEGER"

    def convert(self, value, param, ctx):  # noqa: D102 (ASCII digits alone: int() took 1_0 and ٣, QA round 152-F F7)
        _refuse_unwritten(self, value, param, ctx, whole=True)
        return super().convert(value, param, ctx)


class Number(click.FloatRange):
    """``click.FloatRange`` whose refusal of a non-number reads "'abc' is not a valid number" (not "float range")."""

    name = "number"

    def get_metavar(self, *args, **kwargs):  # noqa: D102
        return "FLOAT"

    def convert(self, value, param, ctx):  # noqa: D102 (a number in ASCII digits: float() took 1_000 and ٣)
        _refuse_unwritten(self, value, param, ctx, whole=False)
        return super().convert(value, param, ctx)


def _refuse_unwritten(kind, value, param, ctx, *, whole: bool) -> None:
    """Refuse, as click refuses ``abc`` ("'1_000' is not a valid number."), text that Python's ``int`` or ``float``
    reads as a number but README's numbers are not (:func:`dreamdb.arguments.written_number`: ``1_000``, ``٣``);
    ``nan``, ``inf`` and ``-inf`` (QA round 153-H F2) stay click's and each option's to take or refuse, as they were (``sql --timeout inf`` is no
    time limit, QA round 118-B F6; a range refuses ``nan``). And a number other than 0 that ``float`` reads as 0
    (:func:`dreamdb.arguments.reads_as_zero`): ``sql --timeout 1e-400`` was no time limit, 0's meaning (QA round
    153-A F2)."""
    from dreamdb.arguments import SMALLEST_NUMBER, reads_as_zero, written_number

    if not isinstance(value, str):
        return
    if not written_number(value, whole=whole) and value.strip().lower().lstrip("+-") not in ("nan", "inf", "infinity"):
        kind.fail(f"{value!r} is not a valid {kind.name}.", param, ctx)
    if not whole and reads_as_zero(value):
        kind.fail(f"{value!r} is too small to be told from 0: give 0, or a number at least {SMALLEST_NUMBER!r} from"
                  f" it.", param, ctx)


class FreeTextCommand(click.Command):
    """A command whose argument is free text (``recall``'s query, ``sql``'s statement): an unknown option with
    no near option of the command is text that starts with a dash, and the error says to put it after ``--``
    (QA round 72-A: ``dreamdb recall -x`` and ``dreamdb sql "-- comment"`` said only "No such option")."""

    def parse_args(self, ctx, args):  # noqa: D102
        given = list(args)  # (click's parser consumes the list it is given)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            if not exc.possibilities:
                import shlex

                # the whole word the option came from: click splits "-sqlite" into "-s", "-q", … (QA round 94-B F4)
                # (or a cluster holding its letter after one of the command's own, "-hybrid" failing at "-y": 95 F5)
                word = next((a for a in given if a == exc.option_name), None) or next(
                    (a for a in given if a.startswith("-") and not a.startswith("--") and len(exc.option_name) == 2
                     and exc.option_name[1] in a[1:] and a not in self._known_options(ctx)), exc.option_name)
                exc.message += f" Text that starts with '-' goes after --: dreamdb {self.name} -- {shlex.quote(word)}"
            raise


    def _known_options(self, ctx) -> set[str]:
        """Every option string of this command (``-n``, ``--top``, …)."""
        return {o for p in self.get_params(ctx) for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}


def refuse_repeats(command: click.Command) -> None:
    """Make a repeat of any single-value option of ``command`` (and of its subcommands') a usage error (exit 2):
    ``update --append A --append B``, ``list --level 3 --level 1``. Click keeps the last value, silently: the earlier
    text of a write was lost, a filter dropped (QA round 153-F F1). Every option that takes a value and is not
    ``multiple`` is covered, whoever declared it; repeatable options (``recall``'s ``--vault``, the list filters of
    :func:`filter_options`, ``remember -r``) and flags are left as they are. One mechanism for every command, applied
    by :class:`dreamdb.cli.LazyGroup` to each command it loads; the message names the option and the values given
    (:func:`repeated_option_message`). An eager option (``--help``/``-h``) given beside a repeat is handled first, as
    click handles it before a bad value: ``list --level 1 --level 2 --help`` shows the help, exit 0 (QA round 154-A
    F4); were an eager option not to end the command, the repeat is refused before the command runs. Idempotent."""
    if getattr(command, "_refuses_repeats", False):
        return
    command._refuses_repeats = True
    make_parser = command.make_parser

    def make_once_parser(ctx: click.Context):
        parser = make_parser(ctx)
        try:  # (click's parser tables are its own, not its API: a click that has none parses as click does)
            options = {id(o): o for o in (*parser._long_opt.values(), *parser._short_opt.values())}.values()
            store = [o for o in options
                     if o.action == "store" and isinstance(o.obj, click.Option) and not o.obj.multiple]
        except AttributeError:
            return parser
        dests = [o.dest for o in store]
        once = {o.dest: o for o in store if dests.count(o.dest) == 1}  # (two options sharing a name: left alone)
        for option in once.values():
            option.action = "append"  # every value given kept, to be counted after the parse
        parse_args = parser.parse_args

        def parse_once(args):
            opts, largs, order = parse_args(args=args)
            repeated = None
            for dest, option in once.items():
                values = opts.get(dest)
                if not isinstance(values, list):
                    continue
                if len(values) > 1 and not ctx.resilient_parsing and repeated is None:
                    repeated = repeated_option_message(option.obj.opts, values)
                opts[dest] = values[-1]
            if repeated is not None:
                if not any(p.is_eager and p.name in opts for p in command.get_params(ctx)):
                    raise click.UsageError(repeated, ctx=ctx)
                # an eager option given (--help, -h): click handles it first, as it does before a bad value (QA round
                # 154-A F4: list --level 1 --level 2 --help was the usage error); the repeat is refused after it
                ctx.meta[_REPEATED] = repeated
            return opts, largs, order

        parser.parse_args = parse_once
        return parser

    command.make_parser = make_once_parser
    invoke = command.invoke

    def invoke_once(ctx: click.Context):
        repeated = ctx.meta.pop(_REPEATED, None)  # (an eager option that did not end the command)
        if repeated is not None:
            raise click.UsageError(repeated, ctx=ctx)
        return invoke(ctx)

    command.invoke = invoke_once
    for sub in getattr(command, "commands", {}).values():
        refuse_repeats(sub)


_REPEATED = "dreamdb.repeated_option"
"""``ctx.meta``'s key for a repeat found beside an eager option (:func:`refuse_repeats`), refused when the command
runs."""


def repeated_option_message(names, values) -> str:
    """"--append was given twice ('FIRST line', 'SECOND line'): it takes one value; give it once." for the option
    ``names`` (its spellings: ``["--top", "-n"]``) given ``values`` (as typed; a long one cut to 40 characters)."""
    from dreamdb.output import clip

    times = "twice" if len(values) == 2 else f"{len(values)} times"
    shown = ", ".join(repr(clip(v, 40)) if isinstance(v, str) else repr(v) for v in values)
    return f"{'/'.join(names)} was given {times} ({shown}): it takes one value; give it once."


class Interrupted(click.Abort):
    """Ctrl-C on a command that has already said what the interruption left behind: the entry point
    exits 130 (with ``--json``, its JSON error, whose message is ``said``: QA round 110-B F5, it was "Interrupted."
    alone, what was kept said on stderr only) without adding click's "Aborted."."""

    def __init__(self, said: str | None = None) -> None:
        super().__init__(said or "Interrupted.")
        self.said = said


@contextlib.contextmanager
def sigterm_as_interrupt():
    """SIGTERM handled as Ctrl-C inside the block (``KeyboardInterrupt``), its handler restored after it.

    ``timeout`` or an agent's harness stopping a slow command sends SIGTERM, whose default action kills the
    process wherever it is: a refresh lost its running batch's report. As a Ctrl-C, ``embed refresh`` says what
    it kept (the write commands and those that sync the index handle SIGTERM for the whole process:
    :func:`dreamdb.entry.changes_files`, :func:`dreamdb.entry.uses_index`). Python
    runs the handler between bytecodes, so it is kept off long calls into C (``dreamdb sql``'s query).
    Outside the main thread (some test runners) nothing changes, nor where SIGTERM was ignored when the process
    started (:func:`dreamdb.entry.take_signal`, QA round 152-A F6).
    """
    from dreamdb.entry import take_signal

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        old = take_signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        old = None
    try:
        yield
    finally:
        if old is not None and old is not signal.SIG_IGN:
            signal.signal(signal.SIGTERM, old)
