"""The CLI's hot path without click: ``dreamdb recall`` in its common forms.

Agents call ``dreamdb recall`` once per question, so process start-up is most
of its cost, and click alone takes ~80 ms to import on a 2-core machine.
:func:`fast_recall` handles the common options itself and returns ``None``
for anything else (``--help``, filters, unknown or malformed options), which
then goes through the click command in :mod:`dreamdb.cli.recall` — the
reference behaviour. Both paths share :func:`run_recall` and
:func:`report_error`, so their output is the same byte for byte
(``tests/test_cli_recall.py`` checks it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys

from dreamdb.errors import MEMORY_HINT, OPEN_FILES_HINT, DreamdbError, short_of_files

_FLAGS = {"--json": "as_json", "--plain": "plain", "--explain": "explain"}
_VALUED = {"--top": "top", "-n": "top", "--vault": "vaults", "--mode": "mode", "--now": "now", "--types": "types", "-t": "types"}
_ONCE = frozenset(("top", "mode", "now"))
"""The single-value options of :data:`_VALUED`: given twice (``-n 3 --top 4``), the command goes to click, which refuses
it (:func:`dreamdb.cli.options.refuse_repeats`); ``--vault`` and ``--types`` add up."""


JSON_ERRORS = False
"""Set by :func:`dreamdb.entry.main` when the command asked for JSON (:func:`wants_json`): an error is
then also printed to stdout as ``{"error": {"message", "hint", "exit_code"}}``, so a program reading
stdout gets JSON whatever happens (stderr keeps the ``Error:`` lines for people)."""


def wants_json(args: list[str]) -> bool:
    """Whether command-line ``args`` ask for JSON output (``--json`` or ``--format json``, before any ``--``)."""
    args = args[:args.index("--")] if "--" in args else args
    return "--json" in args or "--format=json" in args or any(
        a == "--format" and b == "json" for a, b in zip(args, args[1:]))


def print_error(message: str, hint: str | None, exit_code: int, results: dict | None = None) -> int:
    """Print ``Error: …`` (and ``Hint: …``) to stderr, and the JSON error to stdout when :data:`JSON_ERRORS` (with
    ``results``: :func:`json_error`); return ``exit_code``."""
    from dreamdb.output import stderr_line  # messages quote file names and ids from the vault

    # (each one line: a newline in a quoted folder's name forged another Error: line, QA round 138 F2)
    sys.stderr.write(stderr_line(f"Error: {message}", one_line=True) + "\n")
    if hint:
        sys.stderr.write(stderr_line(f"Hint: {hint}", one_line=True) + "\n")
    json_error(message, hint, exit_code, results)
    return exit_code


def json_error(message: str, hint: str | None, exit_code: int, results: dict | None = None) -> None:
    """When :data:`JSON_ERRORS`: ``{"error": {"message", "hint", "exit_code"}}`` on stdout, one line (else nothing);
    with ``results`` (what the command measured before it failed: :attr:`DreamdbError.results`), also
    ``"results": results`` beside ``error``, in the one document. Nothing once the command's result was being
    written (:data:`STARTED`): stdout holds part of it, which an object after it would not make a document."""
    if JSON_ERRORS and not STARTED:
        import json

        from dreamdb.output import ASCII_JSON, escape_for_json  # (a locale that cannot write Unicode: escaped, QA
        # round 94-A F1; a C1 control or a bidirectional mark of a name in the message, as to_json escapes them: QA
        # round 135-B F2)

        try:
            doc: dict = {"error": {"message": message, "hint": hint, "exit_code": exit_code}}
            if results is not None:
                doc["results"] = results
            sys.stdout.write(escape_for_json(json.dumps(doc, ensure_ascii=ASCII_JSON, default=str)) + "\n")
            sys.stdout.flush()
        except OSError:  # stdout itself is what failed: stderr has the message
            _silence_stdout()


def report_error(exc: DreamdbError) -> int:
    """Report a :class:`DreamdbError` (see :func:`print_error`); return its exit code."""
    return print_error(exc.message, exc.hint, exc.exit_code, exc.results)


SAVED: str | None = None
"""Set by a write command once its change is on disk (what it did, one line): an error writing the
report afterwards says the change was saved."""

REPORTED = False
"""Set by a write command once its JSON report is printed whole (:func:`json_reported`): an interruption after it
adds no second JSON document to standard output (QA round 82 F6: two, and ``json.loads`` of it failed)."""


STARTED = False
"""Set once a command began writing its result on standard output (:func:`result_started`): an error after that
(Ctrl-C while ``sql --json`` writes a large result) writes no JSON error object after the part written, which would
read as neither (QA round 151-G F3: ``{"error": …}`` glued onto cut rows); stderr says it, and the exit code."""


def result_started() -> None:
    """Mark that the command's result is being written on standard output (:data:`STARTED`)."""
    global STARTED
    STARTED = True


def json_reported(text: str) -> None:
    """Print a write command's JSON report (one document, a line) and mark it printed (:data:`REPORTED`)."""
    global REPORTED
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    REPORTED = True


OUTPUT_ERROR_EXIT = 74
"""Exit code when the results cannot be written: standard output closed, or its disk full
(``EX_IOERR`` of BSD's sysexits.h)."""

_OUTPUT_ERRNOS = frozenset((errno.ENOSPC, errno.EIO, errno.EBADF, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)))


class ClosedOutput:
    """Stands for a standard output that was closed before dreamdb started (``sys.stdout`` is ``None``):
    anything written raises the ``EBADF`` error a closed descriptor gives, which :func:`run_guarded` reports."""

    encoding = "utf-8"
    errors = "strict"

    def write(self, text: str) -> int:
        if text:
            raise OSError(errno.EBADF, "standard output is closed")
        return 0

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


class ForgivingStderr:
    """Wraps standard error so a message that cannot be written (stderr closed, ``2>/dev/full``) is
    dropped instead of raised: messages on stderr are for people, and failing to show one must not
    change the command's result, its exit code or the JSON on stdout."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if self._stream is not None:
            try:
                return self._stream.write(text)
            except (OSError, ValueError):  # ValueError: the stream was closed
                self._stream = None
        return len(text)

    def flush(self) -> None:
        if self._stream is not None:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._stream = None

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str):
        if self._stream is None:
            if name in ("encoding", "errors"):
                return {"encoding": "utf-8", "errors": "strict"}[name]
            raise AttributeError(name)
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point ``sys.stdout`` at the null device, so the interpreter's flush at exit cannot fail again."""
    try:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit
    except OSError:
        pass


def _unwritable_output(exc: BaseException) -> bool:
    """Whether ``exc`` is the failure to write standard output (a stream's errors carry no file name)."""
    return isinstance(exc, OSError) and exc.errno in _OUTPUT_ERRNOS and exc.filename is None


def saved_change() -> str | None:
    """What this process's write command has done, once it is on disk (:data:`SAVED`, or the vault
    file :data:`dreamdb.writes.COMMITTED` names), else ``None``."""
    if SAVED:
        return SAVED
    writes = sys.modules.get("dreamdb.writes")
    committed = writes.COMMITTED.get() if writes is not None else None
    if committed and committed.endswith(" (deleted)"):  # (a settings file hook uninstall deleted: QA round 114-B F7,
        return f"{committed[:-len(' (deleted)')]} was deleted"  # "settings.json (deleted) was changed")
    return f"{committed} was changed" if committed else None


def interrupted() -> int:
    """Report Ctrl-C; return the exit code: 130, or 0 when the command's change was already on disk
    (:func:`saved_change`): it is done, and a script must not repeat it (a second CHANGELOG entry)."""
    done = saved_change()
    if done is None:
        sys.stderr.write("Interrupted.\n")
        json_error("Interrupted.", None, 130)
        return 130
    from dreamdb.output import stderr_line  # (done names a file: QA round 135-B F1)

    sys.stderr.write(stderr_line(f"Interrupted after the change was saved ({done}): it is done; do not repeat it.")
                     + "\n")
    if JSON_ERRORS and not REPORTED:
        import json

        from dreamdb.output import ASCII_JSON, escape_for_json

        with contextlib.suppress(OSError):
            sys.stdout.write(escape_for_json(json.dumps({"interrupted": True, "saved": done}, ensure_ascii=ASCII_JSON))
                             + "\n")
            sys.stdout.flush()
    return 0


def run_guarded(fn) -> int:
    """Run ``fn()`` and turn every way it can end into an exit code (the CLI's one error policy).

    0 on success; a :class:`DreamdbError` prints its message and hint and returns its code;
    Ctrl-C prints ``Interrupted.`` and returns 130 (0, saying so, after a write is on disk: :func:`interrupted`); a closed stdout pipe returns 0 (the reader
    stopped reading, as ``| head`` does); output that cannot be written (standard output closed,
    or on a full disk) prints one error line to stderr and returns :data:`OUTPUT_ERROR_EXIT` (0 once a write
    command's change is saved, :func:`saved_change`, saying so: do not repeat it);
    anything else prints one ``internal error`` line (the traceback with ``DREAMDB_DEBUG=1``)
    and returns 70. Standard output is flushed here, so its last write fails inside the guard
    rather than at the interpreter's exit.
    """
    try:
        fn()
        sys.stdout.flush()
        return 0
    except DreamdbError as exc:
        return report_error(exc)
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except MemoryError:  # (the machine's limit, no bug: QA round 83-B F1; a transaction under way was rolled back)
        return print_error("Not enough memory to finish the command; what was saved before is kept.",
                           MEMORY_HINT, 1)
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into a message
        if _unwritable_output(exc):
            _silence_stdout()
            done = saved_change()
            if done is not None:
                # A write whose change is saved exits 0, as after an interruption (:func:`interrupted`): a harness
                # that retries on any failure would save it twice (QA round 83-A F4)
                why = f"{exc.strerror or exc}"
                why += "" if "standard output" in why else " (standard output is closed or its disk is full)"
                from dreamdb.output import stderr_line  # (done names a file: QA round 135-B F1)

                sys.stderr.write(stderr_line(f"The change was saved ({done}): it is done; do not repeat it. Its report"
                                             f" could not be written: {why}.") + "\n")
                return 0
            sys.stderr.write(f"Error: cannot write the output: {exc.strerror or exc}.\n"
                             "Hint: standard output is closed or its disk is full; "
                             "redirect it to a file or pipe that can be written.\n")
            return OUTPUT_ERROR_EXIT
        if os.environ.get("DREAMDB_DEBUG"):
            raise
        if isinstance(exc, ImportError) and "failed to map segment" in str(exc):  # (QA round 85 F2: a memory limit)
            return print_error(f"Not enough memory to load a library ({exc}).",
                               MEMORY_HINT, 1)
        if short_of_files(exc):  # (QA round 83-B F6: an internal error; ENFILE too, QA round 153-E F1)
            return print_error(f"This process may open no more files ({exc.strerror}: {exc.filename or 'a file'}).",
                               OPEN_FILES_HINT, 1)
        if type(exc).__name__ == "OperationalError" and "disk is full" in str(exc):  # SQLITE_FULL: not damage
            return print_error("The disk that holds the index is full (SQLite: database or disk is full); what was"
                               " saved before is kept.", "Free some disk space, then run the command again.", 4)
        if type(exc).__name__ == "OperationalError" and "readonly database" in str(exc):  # SQLITE_READONLY
            return print_error(f"The index cannot be written ({exc}): it is read-only, or on a read-only or full disk;"
                               " nothing was changed.", "Make the index and its folder writable, or free some disk "
                               "space, then run the command again.", 4)
        if type(exc).__name__ in ("DatabaseError", "OperationalError", "IntegrityError"):
            hint = ("the index may be damaged: `dreamdb sync --check` checks it and rebuilds it "
                    "from the vault (the vault itself is never touched).")
        else:
            hint = "rerun with DREAMDB_DEBUG=1 for the traceback, and please report it."
        return print_error(f"internal error: {type(exc).__name__}: {exc}", hint, 70)


def run_recall(text: str, *, vaults=None, top: int = 5, mode=None, as_json: bool = False, plain: bool = False,
               explain: bool = False, **filters) -> None:
    """Recall and print, exactly as ``dreamdb recall`` does (the single implementation of its output).

    Raises:
        DreamdbError: from the library (the caller reports it).
    """
    from dreamdb import output
    from dreamdb.api import open_index
    from dreamdb.errors import UsageError

    if plain and (as_json or explain):
        raise UsageError(f"--plain cannot be combined with {'--json' if as_json else '--explain'}",
                         hint="--plain prints one tab-separated line per hit; --json and --explain print everything.")
    requested = (mode or os.environ.get("DREAMDB_RECALL_MODE", "").strip() or "bm25").strip().lower()
    if requested != "bm25" and os.environ.get("DREAMDB_EMBED_THREADS", "").strip():
        # asked for the dense channel with a thread count it cannot use: the command's mistake, as a bad mode is
        # (exit 2); the library falls back to BM25 with a note, so that a prompt hook keeps its memories (QA 74 F6)
        from dreamdb.embeddings.model import resolve_threads

        resolve_threads(None)
    index = open_index(list(vaults) if vaults else None, engine="sql")  # one query per process: no numpy
    progress = output.SyncProgress(label="Indexing the vault")
    for one in getattr(index, "indexes", [index]):  # a first recall indexes the whole vault: a bar
        one.sync_progress = progress
    try:
        hits = index.recall(text, top=top, mode=mode, explain=explain, **filters)
    finally:
        progress.close()
    # the snippets before the notes: a hit's body read from a damaged index rebuilds it, with a note (QA round 150-D F1)
    shown = [h.as_dict() for h in hits] if as_json else [] if plain else [h.snippet for h in hits]
    notes = index.take_notes()
    out = sys.stdout
    if as_json:
        # a fallback (e.g. no model) is named by the hits and notes; of several vaults, one that fell back does not
        # name the mode of the others' hits (QA round 81-A F9: "bm25" over dense hits): each hit names its own
        used = requested if any(h.mode == requested for h in hits) else hits[0].mode if hits else requested
        # (requested_mode always there, not only on a fallback: the same keys every time, QA round 68 L7)
        doc = {"query": text, "mode": used, "requested_mode": requested, "hits": shown,
               "notes": notes}
        out.write(output.to_json(doc) + "\n")
        return
    for n in notes:  # (a file's name in a note: made safe as the click path's notes are, QA round 135-B F1)
        sys.stderr.write(output.stderr_line(f"note: {n}", one_line=True) + "\n")
    if plain:
        out.write(output.hits_plain(hits))
        return
    if not hits:
        if not any("no searchable terms" in n for n in notes):
            sys.stderr.write("No matches.\n")
        return
    out.write(output.hits_text(hits, explain=explain))


def fast_recall(args: list[str]) -> int | None:
    """Run ``recall`` without click when ``args`` use only common options; else ``None``."""
    opts: dict = {"vaults": []}
    words: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _FLAGS:
            opts[_FLAGS[a]] = True
        elif a in _VALUED:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
            key = _VALUED[a]
            if key in _ONCE and key in opts:
                return None  # a repeat of a single-value option: click's usage error (QA round 153-F F1)
            if key == "vaults":
                if not value.strip():
                    return None  # click's NonEmptyPath words the usage error (exit 2)
                opts["vaults"].append(value)
            elif key == "top":
                # (isascii: ² and ① are digits to isdigit, not to int; click's path words the error)
                if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= 50:
                    return None
                opts["top"] = int(value)
            elif key == "mode" and value not in ("bm25", "hybrid", "dense", "rrf"):
                return None
            elif key == "types":  # repeated, it adds to the list, as the click path's (QA round 153-B F4)
                opts["types"] = (*opts.get("types", ()), value)
            else:
                opts[key] = value
        elif a.startswith("-"):
            return None  # --help, filters, typos: click's job
        else:
            words.append(a)
        i += 1
    text = " ".join(words).strip()
    if not text:
        return None
    return run_guarded(lambda: run_recall(text, **opts))
