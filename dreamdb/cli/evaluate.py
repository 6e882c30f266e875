"""``dreamdb eval``: the evaluation suite (also ``python -m eval`` from the repository root)."""

from __future__ import annotations

import os
import shlex
import stat
import sys
from contextlib import contextmanager
from pathlib import Path

import click

from dreamdb.cli.options import NonEmptyPath, WholeNumber, json_option, say
from dreamdb.errors import UsageError, WriteRefused

SET_CHOICES = ["dreamcontext", "scifact", "xquad", "eips", "all"]


@contextmanager
def _progress(label: str, length: int):
    """A click progress bar on stderr (hidden automatically when stderr is not a terminal)."""
    with click.progressbar(length=length, label=label, file=sys.stderr, show_pos=True, width=30) as bar:
        yield bar


@click.command()
@click.option("--set", "sets", multiple=True, type=click.Choice(SET_CHOICES), default=("all",), show_default=True,
              help="Which set(s) to run; repeatable.")
@click.option("--modes", default=("bm25",), show_default=True, metavar="A,B", multiple=True,
              help="dreamdb recall modes to score (bm25, hybrid, dense, rrf), comma-separated; repeating the option "
                   "adds to the list, as --set does. A mode that fails or falls back is reported as unavailable.")
@click.option("--baseline/--no-baseline", default=True, show_default=True,
              help="Also run the bm25s library over the same documents, timed in the same run.")
@click.option("--quick", is_flag=True, help="Only the first 50 queries of each track (deterministic; for CI smoke). "
              "Indexes are still built whole, and a dense mode embeds every chunk first (minutes on the large "
              "sets; see --max-embed).")
@click.option("--data", "data_dir", type=NonEmptyPath(path_type=Path), envvar="DREAMDB_EVAL_DATA",  # (a file: exit 7, below)
              help="Folder holding eval/, eval-data/ and vaults/. Default: $DREAMDB_EVAL_DATA, else ../shared "
                   "beside the repository.")
@click.option("--cache", "cache_dir", type=NonEmptyPath(file_okay=False, path_type=Path),
              help="Where converted vaults and indexes go. Default: eval/.cache in the source checkout, else eval/ in"
                   " dreamdb's user cache folder.")
@click.option("--write-results", is_flag=True, help="Regenerate eval/RESULTS.md from this run.")
@click.option("--results-file", type=NonEmptyPath(dir_okay=False, path_type=Path),
              help="Write the markdown report here instead of eval/RESULTS.md (implies --write-results): a file, not this"
                   " command's standard output (/dev/stdout; the figures, or the JSON document, go there). An existing"
                   " file is replaced only if it is an earlier report (or empty); none inside a vault.")
@click.option("--max-embed", type=WholeNumber(0), default=None, metavar="N",
              help="Skip the dense modes of an index that still needs more than N chunks embedded (default: embed all); "
                   "the reason printed names the command that embeds them.")
@json_option
def evaluate(sets, modes, baseline, quick, data_dir, cache_dir, write_results, results_file, max_embed, as_json):
    """Score dreamdb's recall on the gold set and public IR collections.

    Sets: dreamcontext (60 gold queries over the dreamcontext vault, clock
    fixed at 2026-08-18), scifact (BEIR SciFact), xquad (XQuAD Turkish/English,
    four directions, paragraphs and sentences), eips (EIPs/ERCs markdown vault).
    Every figure is printed beside the bm25s library over the same documents.
    Per-query details of the last run go to <cache>/last-run.json.

    No evaluation query may be used to tune a constant, synonym or stopword.

    \b
    Examples:
      dreamdb eval --set scifact --quick
      dreamdb eval --set all --modes bm25,hybrid,dense --write-results
      python -m eval --set dreamcontext --json   (from a source checkout)
    """
    from dreamdb import output
    from dreamdb.evaluation import suite

    modes = ",".join(modes)  # (repeats add up: --modes bm25 --modes dense, QA round 153-F F1)
    mode_list = list(dict.fromkeys(m.strip().lower() for m in modes.split(",") if m.strip()))  # once each (QA 68 L1)
    explicit = "all" not in sets
    chosen = list(suite.SETS) if not explicit else list(dict.fromkeys(sets))
    if data_dir is not None and click.get_current_context().get_parameter_source("data_dir") \
            == click.core.ParameterSource.ENVIRONMENT:  # (a leading ~ is the home folder, as in the other DREAMDB_*
        # path variables; click took it as written: QA round 135-D F6)
        from dreamdb.config import expand_user

        data_dir = expand_user(str(data_dir))
    data = Path(data_dir) if data_dir else suite.default_data_dir()
    cache = Path(cache_dir) if cache_dir else suite.default_cache_dir()
    root = suite.source_root()
    if write_results and results_file is None and root is None:
        raise UsageError("--write-results writes eval/RESULTS.md of a source checkout; this dreamdb is installed.",
                         hint="Give --results-file PATH to write the report of this run there.")
    target = (results_file or root / "eval" / "RESULTS.md") if write_results or results_file else None
    if results_file is None and write_results and (quick or (explicit and set(chosen) != set(suite.SETS))
                                                   or not baseline or not set(suite.REPORT_MODES) <= set(mode_list)):
        # (QA round 86-C L3: a quick run of one set replaced the report of every set; 87 M2, 88 B5: one without bm25s,
        # BM25, or the hybrid and dense rows)
        raise UsageError("eval/RESULTS.md reports the full run: --write-results takes every set (--set all, the default),"
                         f" no --quick, the bm25s baseline and the modes {','.join(suite.REPORT_MODES)}.",
                         hint=f"Run: dreamdb eval --modes {','.join(suite.REPORT_MODES)} --write-results; or give "
                              "--results-file PATH to write the report of this run elsewhere.")
    _check_writable(cache, target, data, named=results_file is not None)  # before a run of minutes, not after it
    command = _command_line()

    def log(msg: str) -> None:  # (through say: a note quotes the evaluation data's names, QA round 137 F2; each
        say(msg, one_line=True)  # one message, led by its set's name: 138 F1)

    results = suite.run_suite(chosen, data=data, cache=cache, modes=mode_list, baseline=baseline, quick=quick,
                              explicit=explicit, progress=_progress, log=log, command=command, max_embed=max_embed)
    scored = suite.scored_any(results)
    # (the full report: every mode it reports on every track, or it is left as it was: QA round 89 F4, a machine
    # without the model would have written it without its hybrid and dense figures)
    short = suite.unscored_report_pairs(results) if results_file is None else []
    unwritten = writing = None
    try:  # (each replaced whole or not at all: a failure truncated the last run's file, QA round 135-D F2)
        writing = cache / "last-run.json"
        _write_atomically(writing, output.to_json(results))
        if target is not None and scored and not short:  # (a run that scored nothing too: QA round 87 M2)
            writing = target
            if results_file is not None:  # (a file put there during the run is no more replaced than one before it)
                _refuse_another_file(target)
            _write_atomically(target, suite.render_markdown(results))
            log(f"wrote {target}")
    except (OSError, WriteRefused) as exc:  # (the run's figures are printed all the same: QA round 86-C M6)
        unwritten = exc
    shown = "in the JSON document's results" if as_json else "printed above"
    written = cache / "last-run.json" if unwritten is not None and writing == target else None
    failure = _failure(scored, short, target, unwritten, writing, shown, written)
    if as_json:  # (with the targets' verdicts the text prints: QA round 117-B F5, a CI job had to work them out)
        caveat = _quick_caveat(results)  # (QA round 135-B F5: the JSON gave a quick run's verdicts without it)
        summary = {**suite.strip_rows(results), "targets": [
            {"target": label, "measured": measured, "verdict": verdict,
             **({"note": caveat} if caveat and verdict != "–" else {})}
            for label, measured, verdict in suite.targets_check(results)]}
        if failure is not None:  # (one JSON document: the error's, the summary in it as results; QA round 143-A F1,
            failure.results = summary  # the summary and then the error object were two)
            raise failure
        click.echo(output.to_json(summary))
    else:
        click.echo(_text_table(suite, results), nl=False)
    if failure is not None:
        raise failure


def _failure(scored: bool, short: list[str], target: Path | None, unwritten: Exception | None,
             writing: Path | None, shown: str, written: Path | None = None):
    """The error a run that measured ends with, else ``None``: its results could not be written (exit 74), the full
    report was asked for and some of its track/mode pairs were not scored (1), or no track was scored (1). ``shown``:
    where the figures are (``printed above``, or in the JSON document's ``results``); ``written``: the file of this
    run's results that was written before the one that failed (``last-run.json`` when the report failed), said
    instead of the refusal's "nothing was changed" (QA round 147-G F5: it was said with ``last-run.json`` replaced)."""
    from dreamdb.errors import DreamdbError, NothingMeasured, ResultsNotWritten
    from dreamdb.writes.files import CHECK_HINT

    if unwritten is not None and scored:  # (nothing scored: that is the failure to say, QA round 100-A F6)
        where = getattr(unwritten, "filename", None) or writing
        hint = (f"Check {where or 'that path'}: the disk's free space, its permissions, or what it is (a link to "
                "nothing?); then run again.")
        if isinstance(unwritten, WriteRefused):  # (its message and hint apart, each one line; its hint where it names
            # the cause: QA round 143-A F4, "␊Give it write permission" mid-line, for /proc/version)
            why, hint = unwritten.message, unwritten.hint if unwritten.hint and unwritten.hint != CHECK_HINT else hint
        else:
            why = str(unwritten)
        why = why.removesuffix(".")
        if written is not None:
            why = why.removesuffix("; nothing was changed") + f"; {written} was written (this run's per-query results)"
        return ResultsNotWritten(f"Cannot write the results: {why}; the figures are {shown}.", hint=hint)
    if target is not None and scored and short:
        return DreamdbError(f"eval/RESULTS.md was not regenerated: {len(short)} track/mode pair(s) of the full report were"
                            f" not scored ({', '.join(short[:3])}{' …' if len(short) > 3 else ''}; the reasons are "
                            f"{shown}).", hint="Fix what the reasons name (dreamdb model build, for the dense modes), or "
                                               "give --results-file PATH for the report of this run.")
    if not scored:  # (QA round 86-C M4: exit 0 with every row unavailable)
        return NothingMeasured(f"No track was scored: every mode asked for was unavailable (the reasons are {shown}).",
                               hint="Fix what the reasons name, or ask for other modes (--modes bm25).")
    return None


def _check_writable(cache: Path, target: Path | None, data: Path | None = None, *, named: bool = False) -> None:
    """Refuse a cache folder that cannot be made or written or lies inside the data folder (which is never
    written), a report inside the data or the cache folder, a ``last-run.json`` or report that is a folder, and a
    report whose folder, where its links lead, does not exist, is a file, or cannot be written, one whose path leads
    through a loop of symbolic links, and one that is no file or is this command's own output
    (:func:`_refuse_a_descriptor`): before a run of minutes, not after it (QA round 68 L6, L11; 143-H F3; 144-A F4;
    144-I F3). A cache folder (or the folder a missing one would be made in) or ``last-run.json`` with no write
    permission bit is refused even for root (:func:`_no_write_bit`; QA round 150-G F3). A report the caller
    ``named`` (``--results-file``) inside a vault, or an existing file that is no earlier report, is refused
    (:func:`_refuse_another_file`).

    Raises:
        UsageError: as above (exit code 2).
        WriteRefused: the report ``named`` is inside a vault or another file (exit code 6).
    """
    if data is not None and data.is_dir():
        real_data = os.path.realpath(data)
        for path, what, option, default in ((cache, "The cache folder", "--cache", "eval/.cache"),
                                            (target, "The report", "--results-file", "eval/RESULTS.md")):
            # (the report too: QA round 122-C F3, it overwrote the gold file, and the protocol's README)
            if path is not None and os.path.commonpath([os.path.realpath(path), real_data]) == real_data:
                raise UsageError(f"{what} {path} is inside the evaluation data folder {data}, which dreamdb never"
                                 " writes", hint=f"Give {option} a path outside it (default: {default}).")
    if target is not None:  # (QA round 135-D F1: a report in a cached vault was indexed by the next run; one named
        # <cache>/last-run.json replaced the run's file)
        real_cache = os.path.realpath(cache)
        if os.path.commonpath([os.path.realpath(target), real_cache]) == real_cache:
            raise UsageError(f"The report {target} is inside the cache folder {cache}, whose files the evaluation "
                             "writes and indexes", hint="Give --results-file a path outside it, or --cache another folder.")
    for path, option in ((cache / "last-run.json", "--cache"), (target, "--results-file")):
        if path is not None and path.is_dir():
            raise UsageError(f"Cannot write {path}: it is a folder", hint=f"Move it away, or give {option} another path.")
    last = cache / "last-run.json"
    if last.exists() and _no_write_bit(last):  # (as root too, as the write after the run refuses it: exit 74 then)
        raise UsageError(f"Cannot write {last}: it is read-only ({_no_write_bit(last)})",
                         hint="Fix its permissions, or give --cache another folder.")
    if last.exists() and not os.access(last, os.W_OK):  # (QA round 86-C M6: found after the whole run)
        raise UsageError(f"Cannot write {last}: permission denied", hint="Fix its permissions, or give --cache another folder.")
    # (a folder with no write bit is read-only even for root, as for dreamdb's vault writes: QA round 150-G F3, a 555
    # --cache was written into, exit 0; the folder a missing one would be made in, likewise)
    nearest = next((p for p in (cache, *cache.parents) if p.is_dir()), None)
    if nearest is not None and _no_write_bit(nearest):
        raise UsageError(f"Cannot write in the cache folder {cache}: it is read-only ({_no_write_bit(cache)})"
                         if nearest == cache else f"Cannot make the cache folder {cache}: the folder {nearest} it would"
                         f" be made in is read-only ({_no_write_bit(nearest)})", hint="Give --cache a folder you can write.")
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"Cannot use the cache folder {cache}: {exc.strerror or exc}",
                         hint="Give --cache a folder you can write.") from exc
    if not os.access(cache, os.W_OK | os.X_OK):
        raise UsageError(f"Cannot write in the cache folder {cache}", hint="Give --cache a folder you can write.")
    if target is not None:
        from dreamdb.vault.discover import looping_link, path_problem

        if looping_link(target) is not None:  # (its realpath is the loop's own path, as if a file: QA round 144-I F3,
            # the run of minutes ended "[Errno 40] Too many levels of symbolic links", exit 74)
            raise UsageError(f"Cannot write the report {target}: it {path_problem(target, folder=False)}",
                             hint="Fix the link, or give --results-file another path.")
        _refuse_a_descriptor(target)
        # (the folder the report is written in: through links, as _write_atomically writes; QA round 144-A F4, a link
        # into a missing folder failed after the run, and a file standing for the folder was said not to exist)
        written = Path(os.path.realpath(target))
        folder = written.parent
        if not folder.is_dir():
            from dreamdb.config import file_on_the_way

            via = f" (its links lead to {written})" if str(written) != os.path.abspath(target) else ""
            if not via:  # (named as typed)
                folder = target.parent
            blocking = file_on_the_way(folder)
            if blocking is not None and not via:
                blocking = next((p for p in (folder, *folder.parents) if os.path.abspath(p) == str(blocking)), blocking)
            if blocking is not None:
                raise UsageError(f"Cannot write the report {target}{via}: {blocking} is a file, not a folder",
                                 hint="Move that file aside, or give --results-file a path in an existing folder.")
            raise UsageError(f"Cannot write the report {target}{via}: the folder {folder} does not exist",
                             hint="Create it first, or give --results-file a path in an existing folder.")
        if not os.access(folder, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
            raise UsageError(f"Cannot write the report {target}: permission denied",
                             hint="Give --results-file a path you can write.")
        if named:
            _refuse_another_file(target)


def _refuse_another_file(target: Path) -> None:
    """Refuse a ``--results-file`` inside a vault (a ``_dream_context`` folder, by the path as typed or where its links
    lead), where the report would be indexed as a note and could replace one (a vault's ``CHANGELOG.json``), and an
    existing file (through links) that is not empty and is not an earlier report (:data:`dreamdb.evaluation.suite.REPORT_FIRST_LINE`): the
    report replaces its file whole, and a mistyped path replaced any file, exit 0 (QA round 156-C F1), where the
    other commands that write a named file never replace another (``lexicon build --to``). Called before the run
    and again just before the report is written.

    Raises:
        WriteRefused: as above (exit code 6).
    """
    from dreamdb.evaluation.suite import REPORT_FIRST_LINE
    from dreamdb.hook_settings import vault_holding

    vault = vault_holding(target)
    if vault is not None:
        raise WriteRefused(f"Cannot write the report {target}: it is inside the vault {vault}, whose files are its notes"
                           " (a report there would be indexed as one, or replace one)",
                           hint="Give --results-file a path outside the vault.")
    first = REPORT_FIRST_LINE.encode()
    try:
        # (where its links lead, as the report is written; a pipe is refused before, never waited on)
        fd = os.open(os.path.realpath(target), os.O_RDONLY | os.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError):
        return  # (a new file)
    except OSError as exc:
        raise WriteRefused(f"Cannot write the report {target}: it exists and cannot be read to tell whether it is an"
                           f" earlier report ({exc.strerror or exc}): it is never replaced",
                           hint="Give --results-file a new file's path, or make that file readable.") from None
    try:
        head = os.read(fd, len(first) + 1) if stat.S_ISREG(os.fstat(fd).st_mode) else b"-"
    except OSError:
        head = b"-"
    finally:
        os.close(fd)
    if not head or (head.startswith(first) and head[len(first):] in (b"", b"\n", b"\r")):
        return  # (empty: nothing to lose; or an earlier report)
    raise WriteRefused(f"{target} exists and is not a dreamdb evaluation report (its first line is not"
                       f" \"{REPORT_FIRST_LINE}\"): it is never replaced",
                       hint="Give --results-file a new file's path or an earlier report's, or move that file aside.")


def _no_write_bit(path: Path) -> str | None:
    """``"mode 555: no write permission"`` when ``path`` (through links) has no write permission bit at all, which
    dreamdb takes as read-only even for root (:func:`dreamdb.config.is_writable`, the vault writes' folder check),
    else ``None`` (also when it cannot be looked at: the other checks, or the write, say why)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if mode & 0o222 else f"mode {mode & 0o7777:o}: no write permission"


def _refuse_a_descriptor(target: Path) -> None:
    """Refuse a report path that is this command's own standard output or error (the same file: ``/dev/stdout``,
    ``/proc/self/fd/1``, or the file the shell sends the output to), or that names an open descriptor which is no
    file (a pipe, socket, terminal or device: ``/dev/fd/3``) or any other path to something other than a regular file
    (``/dev/null``, a FIFO): the report replaces its file whole (a new file renamed over it), so the output went on
    into the replaced file, and the JSON document was lost; and a pipe has no path to write through (QA round 143-H
    F3: the message named ``/proc/<pid>/fd/pipe:[…]``, which does not exist). Before the run, not after it.

    Raises:
        UsageError: as above (exit code 2).
    """
    from dreamdb.writes.files import descriptor_named

    hint = ("Give --results-file the path of a file: the markdown report goes there, and the figures (the JSON "
            "document, with --json) to standard output, which a shell's > sends to a file of its own.")
    try:
        st = os.stat(target)  # (through the links: the file, pipe or terminal it names)
    except OSError:
        st = None
    streams = []
    for number, stream in ((1, "output"), (2, "error")):
        try:
            own = os.fstat(number)
        except OSError:  # (closed)
            continue
        if st is not None and (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino):
            streams.append(stream)
    if streams:
        raise UsageError(f"--results-file {target} names this command's standard {' and '.join(streams)}: the report"
                         " would replace the file that goes to, and what the command prints there would be lost",
                         hint=hint)
    number = descriptor_named(target)
    if number is not None and (st is None or not stat.S_ISREG(st.st_mode)):
        raise UsageError(f"--results-file {target} names file descriptor {number}, which "
                         f"{'is not open' if st is None else 'is a pipe, socket, terminal or device, not a file'}", hint=hint)
    if number is not None and not _still_at_its_path(target, st):  # (QA round 143-K F3, 143-L F2: the report went
        # to a new file named "x.md (deleted)", the descriptor's file left as it was)
        raise UsageError(f"--results-file {target} names file descriptor {number}, a file deleted or replaced since it"
                         " was opened: the path it was opened at leads to another file, or none", hint=hint)
    if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"Cannot write the report {target}: it is not a regular file (a pipe, device or socket)",
                         hint="Give --results-file the path of a file.")


def _still_at_its_path(target: Path, st: os.stat_result) -> bool:
    """Whether the file a descriptor path (``/dev/fd/3``) leads to, of status ``st``, is still the file at the path
    it was opened at (the link's text, ``os.path.realpath``): the report is written there, by name, not through the
    descriptor. A deleted file (``x.md (deleted)``, however many other links it keeps) or one replaced since is not."""
    try:
        return os.path.samestat(os.stat(os.path.realpath(target)), st)
    except OSError:
        return False


def _write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` (through a link, the file it names) with ``text`` whole or not at all: a temporary file beside
    it renamed over it (:func:`dreamdb.writes.files.atomic_write_bytes`), so a run that fails while writing leaves the
    previous file as it was (QA round 135-D F2: ``last-run.json`` was left empty).

    Raises:
        WriteRefused: it cannot be written (the disk's free space, permissions, a link to nothing).
    """
    from dreamdb.writes.files import atomic_write_bytes

    atomic_write_bytes(Path(os.path.realpath(path)), text.encode("utf-8"))


def _command_line() -> str:
    """The command as the user typed it (for the report), best effort: ``python -m eval …``, or ``dreamdb`` and every
    argument from ``sys.argv`` when ``eval`` follows the program's own options (``--json``, ``--vault PATH``, a
    ``--``), else ``dreamdb eval``."""
    argv = sys.argv
    if argv and Path(argv[0]).name == "__main__.py" and Path(argv[0]).parent.name == "eval":
        return " ".join(["python -m eval", *map(shlex.quote, argv[1:])])
    from dreamdb.entry import _leading_options

    # (the program's options before ``eval`` kept, in order, with a ``--`` before it: ``dreamdb --json eval …`` was
    # recorded as ``dreamdb eval``, QA round 145-G F1)
    i = 1 + _leading_options(argv[1:])[2]
    if argv[i:i + 1] == ["--"]:
        i += 1
    if argv[i:i + 1] == ["eval"]:
        return " ".join(["dreamdb", *map(shlex.quote, argv[1:])])
    return "dreamdb eval"


def _quick_caveat(results) -> str | None:
    """What a quick run's target verdicts are not (the text's words after each, the JSON's ``note``), or ``None``."""
    return "quick run: the first queries of each track only, not the target's measure" if results.get("quick") else None


def _text_table(suite, results) -> str:
    from dreamdb import output

    rows = suite.summary_rows(results)
    # (each text column as wide as its longest value and two spaces: "para tr-ascii→tr" ran into the system, QA 78 F3)
    # (in terminal cells, output.pad: a set named in CJK letters, QA round 143-I F4)
    ws, wt, wy = (max([w, *(output.display_width(str(r[k])) + 2 for r in rows)])
                  for k, w in (("set", 13), ("track", 14), ("system", 16)))
    head = f"{'set':<{ws}}{'track':<{wt}}{'system':<{wy}}{'n':>6}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'MRR':>7}{'nDCG':>7}{'p50ms':>8}{'p90ms':>8}"
    lines = [head, "-" * len(head)]
    for r in rows:
        pre = f"{output.pad(str(r['set']), ws)}{output.pad(str(r['track']), wt)}{output.pad(str(r['system']), wy)}{r['n']:>6}"
        if "unavailable" in r:
            lines.append(pre + f"  unavailable: {r['unavailable']}")
        else:
            lines.append(pre + f"{r['r@1']:>7.1f}{r['r@5']:>7.1f}{r['r@10']:>7.1f}{r['mrr']:>7.3f}{r['ndcg@10']:>7.3f}"
                         f"{r['ms_p50']:>8.2f}{r['ms_p90']:>8.2f}")
    lines.append("")
    for s, sres in results["sets"].items():
        for key, i in sres["indexes"].items():
            if "error" in i:
                lines.append(f"{s}/{key}: {i['error']}")
                continue
            b = i.get("bm25s") or {}
            bl = f"; bm25s {b['build_s']:.2f} s, {b['index_bytes'] / 1e6:.1f} MB" if "build_s" in b else ""
            lines.append(f"{s}/{key}: {i['documents']} docs, dreamdb build {i['build_s']:.2f} s, "
                         f"{i['index_bytes'] / 1e6:.1f} MB{bl}")
    quick = f" ({_quick_caveat(results)})" if results.get("quick") else ""
    for label, measured, verdict in suite.targets_check(results):  # (QA round 68 L11: a quick run's said so)
        lines.append(f"target: {label}: {measured} [{verdict}]{quick if verdict != '–' else ''}")
    for c in results.get("comparisons", []):
        f = "{:+.1f}" if c["metric"].startswith("r@") else "{:+.3f}"
        lines.append(f"compare: {c['set']} {c['track']}: {c['a']} − {c['b']}, {c['metric']} Δ {f.format(c['delta'])} "
                     f"[{f.format(c['low'])}, {f.format(c['high'])}], p {suite._fmt_p(c['p'])}"
                     + (f" (Holm {suite._fmt_p(c['p_holm'])})" if "p_holm" in c else ""))
    for n in results.get("notes", []):
        lines.append(f"note: {n}")
    lines.append(f"wall time: {results['wall_s']:.0f} s")
    return "\n".join(lines) + "\n"
