"""``dreamdb embed refresh | status | compact | dedup``: the local vector index.

Imports of numpy / onnxruntime happen inside the commands, so ``dreamdb embed
--help`` stays fast.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable

import click

from dreamdb.cli.options import (ExistingPath, Interrupted, Number, SuggestingGroup, WholeNumber, json_option,
                                 open_index, print_notes, require_text, say, sigterm_as_interrupt, vault_option)

_MAX_THREADS = 64  # dreamdb.embeddings.model.MAX_THREADS (a heavy import; a test keeps the two equal)
_THREADS_HELP = "onnxruntime threads, 1-64 (default: $DREAMDB_EMBED_THREADS, else 2)."


@click.group("embed", cls=SuggestingGroup, context_settings={"help_option_names": ["-h", "--help"]})
def embed() -> None:
    """Embeddings for hybrid recall: refresh the vectors, show status, check for duplicates.

    Vectors come from the local multilingual-e5-small model (install it once
    with `dreamdb model install`) and live in the index next to the keyword
    tables; nothing leaves the machine.

    \b
    Examples:
      dreamdb embed refresh
      dreamdb embed status --json
      dreamdb embed dedup --title "Sleep fan-out" --file draft.md
    """


class _Bar:
    """click progress bar on stderr with the embedding rate and ETA (only for ≥ 1 text, not with --json)."""

    def __init__(self, enabled: bool) -> None:
        from dreamdb.output import ProgressBar

        self.enabled = enabled and ProgressBar.drawable()  # (TERM=dumb too: QA round 121-C F4)
        self.bar = None
        self.done = 0
        self.t0 = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        if self.bar is None:
            self.t0 = time.perf_counter()
            self.bar = click.progressbar(length=total, label="Embedding chunks", file=sys.stderr, show_eta=True,
                                         show_pos=True, item_show_func=lambda _x: self._rate())
            self.bar.__enter__()
        self.bar.update(done - self.done, current_item=done)
        self.done = done

    def _rate(self) -> str:
        dt = time.perf_counter() - self.t0
        return f"{self.done / dt:.1f} chunks/s" if dt > 0 and self.done else ""

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


class _Waiting:
    """``on_wait`` of :func:`dreamdb.embeddings.store.refresh`/``compact``: says on stderr that another
    process's refresh is being waited for, and remembers whether it still is (for Ctrl-C's message). ``stored``: how
    many vectors of the model being refreshed the index holds (:func:`dreamdb.embeddings.store.vectors_of`), counted
    when the wait begins and ends: ``gained`` is how many the other process stored for it meanwhile."""

    def __init__(self, stored: Callable[[], int] | None = None) -> None:
        self.now = False
        self.waited = False  # (the vault may have changed meanwhile: the caller syncs again, QA round 68 L2)
        self.seconds = 0.0  # (how long: the report's time is not all work, QA round 110-B F6)
        self.gained = 0  # (the other refresh may have been another model's: QA round 144-C F5)
        self._stored = stored
        self._since: float | None = None
        self._before = 0

    def __call__(self, waiting: bool) -> None:
        import time

        if waiting and self._since is None:
            self._since = time.monotonic()
            self._before = self._stored() if self._stored else 0
        elif not waiting and self._since is not None:
            self.seconds += time.monotonic() - self._since
            self._since = None
            self.gained += max(0, (self._stored() if self._stored else 0) - self._before)
        self.now = waiting
        self.waited = self.waited or waiting
        if waiting:
            say("Another dreamdb process is refreshing this index's embeddings; waiting for it to finish"
                " (dreamdb embed status shows its progress; Ctrl-C stops waiting, nothing is lost).")


def _waited_note(waiting: _Waiting) -> str:
    """The note of another process's refresh that ``waiting`` waited for (``embed dedup``'s, before it compared)."""
    took = f" {waiting.seconds:.1f} s" if waiting.seconds >= 0.1 else ""
    return (f"another dreamdb process was refreshing this index's embeddings: waited{took} for it to finish before"
            " comparing")


def _run_refresh(index, embedder, *, force: bool, show_bar: bool, waiting: _Waiting | None = None):
    from dreamdb.api import _added_reports

    bar = _Bar(show_bar)
    waiting = _Waiting() if waiting is None else waiting

    def progress(done: int, total: int) -> None:
        if not done:  # the notes of the run's start (an unfinished --force it starts over), before the bar
            print_notes(index)
        bar(done, total)

    with sigterm_as_interrupt():  # (the same report on SIGTERM as on Ctrl-C)
        try:
            report = index.refresh_embeddings(force=force, progress=progress, embedder=embedder, on_wait=waiting)
            if waiting.waited:
                # The vault was synced before the wait: notes added or edited meanwhile (the other refresh's
                # minutes) are synced and embedded now, as this command's own run would have (QA round 68 L2).
                report = _added_reports(report, index.refresh_embeddings(progress=bar, embedder=embedder))
            return report
        except KeyboardInterrupt:
            bar.close()
            if waiting.now:
                say("Stopped waiting; the other refresh goes on (dreamdb embed status shows its progress).")
                raise
            st = index.embed_status(embedder.model_id)
            if st.get("reembed_pending"):  # a --force run (or the rest of one): the others keep their old vectors
                # (the texts that had no vector yet count as neither: QA round 95 F9, 1,283 of 1,347 said re-embedded
                # where 1,011 texts had none)
                done = st["distinct_texts"] - st["pending"] - st["reembed_pending"]
                said = (f"Interrupted: {done}/{st['distinct_texts']} chunk texts re-embedded and kept; "
                        f"{st['reembed_pending']} keep their old vectors meanwhile"
                        + (f" and {st['pending']} have none yet" if st["pending"] else "")
                        + f". Run `{index._command('embed refresh')}` to finish (it resumes; --force would start over).")
            elif not st["chunks"] and st.get("vectors"):  # (QA round 74 F4: "0/0 chunks have vectors" read as all lost)
                said = (f"Interrupted: the vault was re-indexed meanwhile (another process's sync --force), so no "
                        f"chunk is listed yet; the {st['vectors']:,} vectors stored are kept, and the next run reuses "
                        f"them for every unchanged text: run `{index._command('embed refresh')}` again to finish.")
            else:
                said = (f"Interrupted: {st['embedded']}/{st['chunks']} chunks have vectors and are kept; "
                        f"run `{index._command('embed refresh')}` again to finish.")
            say(said)
            raise Interrupted(said) from None  # said: the CLI's entry point exits 130 without its own "Aborted."
        finally:
            bar.close()


LONG_CANDIDATE_CHARS = 50_000
"""A dedup candidate longer than this (characters, ≈ 25 chunks) is announced before it is embedded."""


@embed.command("refresh", short_help="Embed new or changed chunks (progress bar; resumable).")
@vault_option()
@click.option("--force", is_flag=True, help="Re-chunk every document and re-embed every chunk for the current model (each old vector is kept until its new one is stored).")
@click.option("--threads", type=WholeNumber(min=1, max=_MAX_THREADS), metavar="N", help=_THREADS_HELP)
@json_option
def refresh_cmd(vault, force, threads, as_json):
    """Chunk changed documents and embed the chunks that have no vector yet.

    Syncs the vault first, then embeds only chunk texts that have no vector
    for the installed model (an edit re-embeds only the chunks it changed).
    Each batch is saved as soon as it is done: Ctrl-C or a kill keeps the
    finished work and the next run resumes, also that of an interrupted
    --force (the texts it had not re-embedded keep their vectors
    meanwhile). Hybrid recall also refreshes
    lazily; run this once after installing the model (the real vault's
    ~1,350 chunks take about 4 minutes on 2 cores).

    \b
    Examples:
      dreamdb embed refresh
      dreamdb embed refresh --force --threads 4
      dreamdb embed refresh --vault ~/project/_dream_context --json
    """
    from dreamdb import output
    from dreamdb.embeddings.model import get_embedder
    from dreamdb.store.sync import few_same_name_warnings

    index = open_index(vault)
    # minutes of embedding must not go into a damaged index that a later recall rebuilds
    print_notes(index, few_same_name_warnings(index.sync(check=True, reread=False).warnings, json_lists=False))
    embedder = get_embedder(threads=threads)
    from dreamdb.embeddings.store import vectors_of

    waiting = _Waiting(lambda: vectors_of(index.conn, embedder.model_id))
    report = _run_refresh(index, embedder, force=force, show_bar=not as_json, waiting=waiting)
    print_notes(index)  # (another process rebuilt the index meanwhile: the run went on in the new one)
    from dreamdb import quickcli

    # (its vectors are saved: an unwritable report must not hide it, nor make a script redo minutes of work; QA 84)
    quickcli.SAVED = f"{report.embedded} embedded, {report.reused} reused"
    if as_json:
        click.echo(output.to_json(report.as_dict()))
        return
    click.echo(
        f"{report.embedded} embedded, {report.reused} reused, {report.pruned} pruned, "
        f"{output.count_noun(report.chunked_docs, 'document')} chunked"
        # (QA round 94-B F10: "14 documents chunked · 11 chunks" read as 14 documents cut into 11 chunks)
        + (f" ({_unembedded(report.unembedded_docs)}: no vectors, by design)" if report.unembedded_docs else "") + " · "
        f"{output.count_noun(report.chunks, 'chunk')} · model {report.model_id} · {report.elapsed_ms / 1000:.1f} s"
        + (f" ({waiting.seconds:.1f} s of it waiting for another process's refresh"
           + (f", which embedded {output.count_noun(waiting.gained, 'text')} of this model)" if waiting.gained else ")")
           if waiting.seconds >= 0.1 else "")
    )
    if report.documents_cut:
        from dreamdb.embeddings.store import cut_documents_note

        say(f"note: {cut_documents_note(report.documents_cut)}")


def _unembedded(n: int) -> str:
    """``n`` documents of the types never embedded, in words (``3 changelog entries``)."""
    from dreamdb import output
    from dreamdb.embeddings.chunk import DENSE_EXCLUDED_TYPES

    kinds = " or ".join(sorted(DENSE_EXCLUDED_TYPES))
    return output.count_noun(n, f"{kinds} entry", f"{kinds} entries")


@embed.command("status", short_help="Chunks, vectors, and what a refresh would do.")
@vault_option()
@json_option
def status_cmd(vault, as_json):
    """Show chunks, vectors and what a refresh would still do (no model load; the installed model's files are hashed
    once to know its id, ≈ 0.3 s, when it is not cached beside them).

    \b
    Examples:
      dreamdb embed status
      dreamdb embed status --json
    """
    from dreamdb import output
    from dreamdb.embeddings.locate import installed_model_name, model_status
    from dreamdb.embeddings.store import cut_documents_note, hybrid_ready, stored_vectors

    index = open_index(vault)
    index.sync_for_read()  # a read: another process's long refresh must not stall it (a note instead)
    ms = model_status(identify=True)  # (the installed model's vectors, never another's: QA round 139-B F1)
    st = index.embed_status(ms.get("model_id"), most_vectors=False, name=installed_model_name(ms))
    print_notes(index)  # (after: a damaged index rebuilt by embed_status says so)
    st["model_installed"] = ms["installed"]
    st["model_path"] = ms["path"]
    st["runtime_missing"] = ms["runtime_missing"]
    st["hybrid_ready"] = hybrid_ready(st, ms)
    if ms.get("damaged"):  # (QA round 84: embed status alone did not say it; status and model status did)
        st["model_damaged"] = ms["damaged"]
        st["summary"] = f"model damaged: {ms['damaged']}; {st['summary']}"
    elif not ms["installed"] and st["available"]:
        st["summary"] = (f"no model ({ms['reason']}): hybrid recall falls back to BM25"
                         + (f" ({stored_vectors(st['models'])})" if st["vectors_total"] else ""))
    if as_json:
        click.echo(output.to_json(st))
        return
    if not st["available"]:
        click.echo(f"vectors: {st['summary']}")
        return
    # (a DREAMDB_MODEL_DIR's ESC or newline shown, not obeyed or split: QA round 140-C F7b)
    click.echo(output.visible_id(f"model:     {'installed' if ms['installed'] else 'not installed'} at {ms['path']}"
                                 + (f" ({ms['model_id']})" if ms.get("model_id") else "")))
    uncounted = st.get("docs_uncounted", 0)
    click.echo(f"documents: {st['documents']} ({st['chunked_documents']} chunked, {st['docs_pending'] - uncounted} to chunk"
               + (f", {uncounted} to count again: chunked by an older dreamdb, their vectors are kept; run: "
                  + index._command("embed refresh") if uncounted else "")
               + (f"; {_unembedded(st['unembedded_documents'])} never embedded, by design"
                  if st.get("unembedded_documents") else "") + ")")
    from dreamdb.output import count_noun

    click.echo(f"chunks:    {st['chunks']} ({count_noun(st['distinct_texts'], 'distinct text')})")
    click.echo(f"vectors:   {count_noun(st['embedded'], 'chunk')} embedded, {count_noun(st['pending'], 'text')} pending,"
               f" {count_noun(st['vectors_total'], 'vector')} stored ({st['vectors_bytes'] / 1e6:.1f} MB)")
    if st.get("documents_cut"):
        # (the note names ids, shown: an id's ESC ]0; set the terminal's title, QA round 139-D F2)
        click.echo(f"cut:       {output.visible_id(cut_documents_note(st['documents_cut']))}")
    if st.get("reembed_pending"):  # (a --force running in another process is not said interrupted: QA round 149-C F3)
        from dreamdb.embeddings.store import refresh_advice, reembed_note

        advice = refresh_advice(index.conn, index._command("embed refresh"))
        click.echo(f"re-embed:  {reembed_note(st['reembed_pending'], advice, 'text')}")
    for m in st["models"]:
        click.echo(f"  {m['model_id']}  {m['name']}  {count_noun(m['vectors'], 'vector')}  since {m['first_seen']}")
    if st["languages"]:
        names = {"": "undetermined", "?": "not identified yet"}
        click.echo("languages: " + ", ".join(f"{names.get(l, l)} {n}" for l, n in st["languages"].items()))
    if not ms["installed"]:
        click.echo(f"hint: {ms['hint']}")
    elif ms.get("damaged"):
        click.echo(f"damaged:   {ms['damaged']}")
        click.echo(f"hint: {ms['hint']}")
    elif ms["runtime_missing"]:
        click.echo(f"runtime:   {' and '.join(ms['runtime_missing'])} not installed: hybrid recall falls back to BM25")
        from dreamdb.extras import install_command

        click.echo(f"hint: {install_command('embed')}")
    elif (st["chunks"] or st["docs_pending"]) and not st["vectors"]:  # (QA round 139-B F1: another model's vectors
        # were counted as its own; 156-F F5: a vault never chunked, its documents all to chunk, had no next step)
        from dreamdb.embeddings.store import REFRESH_RUNNING, refresh_running

        if refresh_running(index.conn):  # (QA round 157-G F4: told to run the first refresh, under way)
            click.echo(f"hint: {REFRESH_RUNNING[:1].upper()}{REFRESH_RUNNING[1:]} (none of this model's vectors yet:"
                       f" hybrid recall falls back to BM25 until it has made some; {index._command('embed status')}"
                       " again shows how far it is)")
        else:
            click.echo(f"hint: Run: {index._command('embed refresh')} (none of this model's vectors yet: hybrid recall"
                       " falls back to BM25)")


@embed.command("compact", short_help="Give back the space of deleted vectors.")
@vault_option()
@json_option
def compact_cmd(vault, as_json):
    """Give back the disk space of deleted vectors (rebuilds the vector table, then VACUUM).

    sqlite-vec keeps the space of every vector it deletes (after edits,
    deleted documents or a model change); this rewrites the vector table with
    the vectors in use and shrinks the file. Nothing is re-embedded. Safe to
    interrupt: the rebuild is one transaction.

    \b
    Examples:
      dreamdb embed compact
      dreamdb embed compact --json
    """
    from dreamdb import output
    from dreamdb.embeddings.store import compact
    from dreamdb.store.sync import few_same_name_warnings

    index = open_index(vault)
    # a damaged index is rebuilt from the vault first (compact would fail on it)
    print_notes(index, few_same_name_warnings(index.sync(check=True, reread=False).warnings, json_lists=False))
    r = compact(index.conn, on_wait=_Waiting())
    from dreamdb import quickcli

    quickcli.SAVED = f"compacted: kept {r['vectors']} vectors"  # (said if the report cannot be: QA round 114-B F7)
    print_notes(index)
    if as_json:
        click.echo(output.to_json(r))
        return
    click.echo(f"kept {r['vectors']} vectors; index {r['bytes_before'] / 1e6:.1f} MB → {r['bytes_after'] / 1e6:.1f} MB")
    if not r["checkpointed"]:
        say("note: another process is reading the index, so the compacted pages wait in its -wal file; the"
            " space is given back once that process ends (then run dreamdb embed compact again).")


MAX_CANDIDATE_BYTES = 8 * 2**20
"""Largest candidate ``embed dedup`` reads (bytes): a note is a few KB (the real vault's largest
file is far below this); the cap keeps ``--file /dev/zero`` from filling memory."""


@embed.command("dedup", short_help="MERGE, REVIEW or CREATE for a new document.")
@vault_option()
@click.option("--title", required=True, help="Title of the candidate document.")
@click.option("--description", default="", help="One-line description of the candidate.")
@click.option("--file", "file_", type=ExistingPath(folder=False, allow_dash=True), metavar="FILE",
              help="Read the candidate's content from FILE (- for standard input, as --stdin; without --file or --stdin:"
                   " the title and description alone).")
@click.option("--stdin", "from_stdin", is_flag=True,
              help="Read the candidate's content from standard input (an empty --file or --stdin, or one of"
                   " invisible characters alone, is refused).")
@click.option("--top", type=WholeNumber(1, 50), default=5, show_default=True, help="Neighbours to report.")
@click.option("--merge", type=Number(-1, 1), default=0.97, show_default=True, help="MERGE when the top cosine is at least this …")
@click.option("--margin", type=Number(0, 2), default=0.02, show_default=True, help="… and this far ahead of the second.")
@click.option("--review", type=Number(-1, 1), default=0.91, show_default=True, help="REVIEW when the top cosine is at least this.")
@click.option("--if-present", is_flag=True,
              help="Never embed the vault. Do nothing (exit 0, verdict SKIPPED, the reason given) when no usable model "
                   "is installed (missing, corrupt, or its runtime missing) or no document of the index has vectors "
                   "of it; when only some lack them, compare against the vectors there are and count the others "
                   "(documents_not_compared, documents_outdated). An index that cannot be written now (another "
                   "process holds it, or it is read-only) is compared as it is, with a note: its documents waiting "
                   "to be chunked again (after a rebuild) are not compared, and when no other document is, SKIPPED "
                   "says why; an index another process is building for the first time, or one that cannot be built "
                   "now (a full disk), has no vectors: SKIPPED, the reason given.")
@click.option("--threads", type=WholeNumber(min=1, max=_MAX_THREADS), metavar="N", help=_THREADS_HELP)
@json_option
def dedup_cmd(vault, title, description, file_, from_stdin, top, merge, margin, review, if_present, threads, as_json):
    """Check a new document against the vault before creating it: MERGE, REVIEW or CREATE.

    The candidate is chunked and embedded like an indexed document; each
    existing document scores the best cosine between any of its chunks and
    any candidate chunk. MERGE: top ≥ --merge and ahead of the second by
    ≥ --margin, and every candidate chunk has a near-copy in it (else the
    candidate adds text: REVIEW); update that note with the candidate's text,
    as a cosine cannot see a changed number or an inserted "not". REVIEW:
    top ≥ --review, or a note has the candidate's title; else CREATE. Advice
    only (exit 0 whatever the verdict): nothing is written to the vault; the
    decision is appended to dedup.log.jsonl in the index folder. Changelog
    entries (what remember writes) have no vectors and are never compared.
    A --file inside the vault is that note's draft: it is left out. Vectors of the vault that are missing are embedded first
    (a vault never embedded, or embedded with another build of the model,
    takes minutes: the real vault ≈ 4 min on 2 cores). --if-present never
    embeds the vault: it skips when the installed model has no vectors in
    the index, and otherwise compares against the vectors there are, saying
    how many documents were left out or compared as last embedded. While
    another process holds the index (or it is read-only), the gate embeds
    nothing and compares against the index as it is, with a note, as recall
    does; documents waiting to be chunked or embedded again (after an edit or
    a rebuild) are then left out and counted, and SKIPPED names the lock or
    the read-only index when no other is compared.

    A candidate is compared by its first 128 chunks (≈ 48k words, the cap
    per document); the tail of a longer one is not, and the result says so
    (a note on stderr; in JSON candidate_truncated and compared_share). A
    --file or --stdin holding no text of its own (a frontmatter alone, a
    pasted key) is compared by its title (and description) alone, with a
    note; an empty one is refused.

    \b
    Examples:
      dreamdb embed dedup --title "Hybrid recall" --file draft.md
      cat draft.md | dreamdb embed dedup --title "Hybrid recall" --stdin --json
      dreamdb embed dedup --title "X" --description "…" --stdin --if-present --json < draft.md
    """
    from dreamdb import output
    from dreamdb.dedup import check_thresholds
    from dreamdb.errors import UsageError

    # the library's check, before any file is read or model loaded: NaN passes click's range check (every
    # comparison with it is false), and --merge below --review is no range's business (QA round 54 L9)
    check_thresholds(merge=merge, margin=margin, review=review)
    if file_ and from_stdin:
        raise UsageError("Give the content with --file or --stdin, not both.",
                         hint="Give --file FILE, or pipe the text in with --stdin (--file - reads standard input too).")
    stdin_option = "--stdin"
    if file_ == "-":  # (--file - reads standard input, as remember's --file - and update's --content-file - do: QA
        file_, from_stdin, stdin_option = None, True, "--file -"  # round 152-F F2, "No file at - (--file)", exit 7)
    if not title.strip():
        raise UsageError("Give the candidate's title (--title is empty).",
                         hint='Example: dreamdb embed dedup --title "Hybrid recall" --file draft.md')
    from dreamdb.vault.discover import require_utf8

    for what, text in (("The title", title), ("The description", description or "")):
        require_utf8(text, what)  # (before the vault's embedding, which it followed: QA round 98-A F11)
    if not (file_ or from_stdin):
        raw = b""  # the title and description alone (a proposal before its content is written)
    elif file_:
        import stat

        try:
            # O_NONBLOCK: a FIFO is told apart instead of waited on (QA round 42: it hung)
            fd = os.open(file_, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
            with os.fdopen(fd, "rb") as f:
                mode = os.fstat(f.fileno()).st_mode
                if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(f.fileno()):
                    raise UsageError(f"{file_} is a pipe, socket or terminal, not a file.",
                                     hint="Pass a file, or send the draft through --stdin (… --stdin < pipe).")
                if stat.S_ISREG(mode):
                    os.set_blocking(f.fileno(), True)
                raw = f.read(MAX_CANDIDATE_BYTES + 1)
                if raw is None:  # a device with nothing to read now (QA round 43: a pty, then an internal error)
                    raise UsageError(f"{file_} is a device with nothing to read, not a file.",
                                     hint="Pass the markdown draft of the note.")
        except OSError as exc:
            raise UsageError(f"Cannot read {file_}: {exc.strerror or exc}",
                             hint="Give --file a file you can read, or pipe the text in with --stdin.") from None
    else:
        stdin = sys.stdin
        if stdin is None:  # started with standard input closed: nothing to read (QA round 114-B F2: exit 70)
            raw = b""
        else:
            raw = (stdin.buffer.read(MAX_CANDIDATE_BYTES + 1) if hasattr(stdin, "buffer")
                   else stdin.read(MAX_CANDIDATE_BYTES + 1).encode("utf-8", "surrogateescape"))
    source = file_ or ("The standard input" if from_stdin else "The content")
    if len(raw) > MAX_CANDIDATE_BYTES:
        raise UsageError(f"{source} holds more than {MAX_CANDIDATE_BYTES // 2**20} MiB: the dedup gate compares one note.",
                         hint="Pass the markdown draft of the note (not a device like /dev/zero or a whole export).")
    from dreamdb.vault.encoding import wide_unicode_codec
    from dreamdb.vault.parse import plain_text

    try:  # (as the sync reads a note: UTF-16/32 by their mark, one kind of line end; QA round 120-B F3)
        content = plain_text(raw.decode(wide_unicode_codec(raw) or "utf-8-sig"))
    except UnicodeDecodeError:
        content = None
    if content is None:
        raise UsageError(f"{source} is not UTF-8 text: the dedup gate compares notes.",
                         hint="Pass the markdown draft of the note (UTF-8).")
    if file_ or from_stdin:  # (a failed pipe, an empty file: QA round 143-C F3; invisible characters alone: 143-H F4)
        require_text(content, file_ or "-", "--file" if file_ else stdin_option, after="nothing was compared",
                     hint="Give the draft's text; leave out --file and --stdin to compare the title and description"
                          " alone.")
    if "\x00" in content:  # (valid UTF-8, but no note holds a NUL: QA round 62 L8)
        raise UsageError(f"{source} holds a NUL byte, so it looks like a binary file, not a note: the dedup gate "
                         "compares notes.", hint="Pass the markdown draft of the note (UTF-8 text).")

    from dreamdb.dedup import dedup
    from dreamdb.embeddings.store import pending
    from dreamdb.errors import ModelError, ModelNotInstalled

    said: list[str] = []  # the index's notes said on stderr, which --json carries too (QA round 149-C F2)
    context: list[str] = []  # what else was said on stderr before the decision, logged with it too (152-B F2)

    def skip(reason: str) -> None:
        if as_json:
            click.echo(output.to_json({"verdict": "SKIPPED", "reason": reason, "neighbours": []}))
        else:
            click.echo(f"SKIPPED: {reason}")

    # An index that cannot be written now (another process holding it, read-only) is compared as it is, as a recall
    # reads it; its note is said with the answer, never before an error (QA round 143-E F1, F4)
    if if_present:
        index, skipped = _skip_reason(vault)
        if skipped:
            if index is not None:
                print_notes(index)
            return skip(skipped)
    else:
        index = open_index(vault)
        # checked first (minutes of embedding must not go into a damaged index that a later recall rebuilds), synced
        # as a read is, and the documents waiting to be chunked chunked, where the index can be written now (with its
        # vector tables: else _require_tables refuses below, after the sync's notes, QA round 87 L5)
        from dreamdb.embeddings.store import vectors_available
        from dreamdb.store.connect import CAN_LOAD_EXTENSIONS

        if CAN_LOAD_EXTENSIONS and vectors_available(index.conn):
            kept_out = index.sync_for_dedup()
        else:
            index.sync_for_read(check=True)
            kept_out = None
        # An index that cannot be written now (another process's lock, read-only) is not embedded either: compared as
        # it is, as with --if-present, its notes said with the answer (QA round 145-F F5: "Embedding the vault
        # first…", then exit 5 after 10 s, of one edited note)
        as_is = kept_out is not None or index.read_as_is is not None
        if not as_is:  # (a rebuild or upgrade said before the embedding it causes, on stderr with --json too: QA round
            said = print_notes(index)  # 76 F9, 87 L5, 115-B F3)
    from dreamdb.embeddings.model import get_embedder

    try:
        embedder = get_embedder(threads=threads)
        if not if_present:
            from dreamdb.embeddings.store import _require_tables

            _require_tables(index.conn)  # (before "Embedding the vault first…", which it then refused: QA round 87 L5)
            waiting = 0 if as_is else pending(index.conn, embedder.model_id)
            skipped = _nothing_compared(index, kept_out, embedder.model_id) if as_is else None
            if skipped:
                print_notes(index)
                return skip(skipped)
            if waiting:
                if not as_json:
                    from dreamdb.output import count_noun

                    say(f"Embedding the vault first ({count_noun(waiting, 'document or chunk', 'documents or chunks')}"
                        " waiting; needed once, then only edits are re-embedded)…")
                refreshing = _Waiting()
                _run_refresh(index, embedder, force=False, show_bar=not as_json, waiting=refreshing)
                if refreshing.waited:  # (said on stderr as it began; --json's notes and the log keep it: QA round
                    context.append(_waited_note(refreshing))  # 152-B F2, notes [] after a wait of 40 s)
        if len(content) > LONG_CANDIDATE_CHARS and not as_json:  # seconds of embedding: say so (QA round 37)
            say(f"Embedding the candidate ({len(content) // 1000:,} KB of text, chunked like a note)…")
        itself = _indexed_as(index, file_) if file_ else []
        result = dedup(index, embedder, title=title, description=description, content=content, top=top,
                       merge=merge, margin=margin, review=review, exclude=itself, name=file_, context=context)
    except (ModelError, ModelNotInstalled) as exc:
        # QA round 57 L1: a model that cannot load or run (corrupt, non-finite output, runtime missing) is no
        # model for --if-present, as a missing one is; without it, the error and exit 8 stay
        if not if_present:
            raise
        print_notes(index)
        return skip(f"the embedding model cannot be used: {exc.message}")
    said += [*context, *print_notes(index)]
    notes = result.notes()  # what was not compared (QA round 57 M2, M3)
    if result.excluded:
        notes.append(f"{file_} is the indexed {', '.join(result.excluded)}: compared with the other documents")
    if result.log_path is None:  # (QA round 97-C F5: only --json's log_path null said so)
        from dreamdb.dedup import LOG_FILE_NAME

        notes.append(f"the decision was not logged: {Path(index.index_path).parent / LOG_FILE_NAME} cannot be"
                     " written (a link or not a regular file, no permission, or no space)")
    if as_json:  # (the index's notes too: QA round 149-C F2, a MERGE with a note whose file was gone, the index
        # compared as it was under another process's lock, said so on stderr alone)
        click.echo(output.to_json({**result.as_dict(), "notes": [*said, *notes]}))
        return
    click.echo(output.visible_id(f"{result.verdict}: {result.reason}"))  # (its reason names ids: QA round 139-D F2)
    rows = [{"score": f"{s:.4f}", "doc_id": d, "title": t[:70]} for d, t, s in result.neighbours]
    if rows:
        click.echo(output.table(rows))
    for note in notes:
        say(f"note: {note}")


def _indexed_as(index, file_: str) -> list[str]:
    """The doc_ids of the indexed note ``file_`` is, when it is a file of the vault, or a hard link to one (a draft
    saved before the dedup: it matched itself at 1.0, QA round 97-C F3, 98-A F9); else ``[]``. Documents of types
    never embedded (a CHANGELOG.json's entries) are not named: they are never neighbours."""
    from dreamdb.embeddings.chunk import DENSE_EXCLUDED_TYPES

    try:
        rel = os.path.relpath(os.path.realpath(file_), os.path.realpath(index.vault))
    except ValueError:  # (another drive)
        rel = os.pardir
    if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        rel = _hard_linked_in_vault(index, file_)
        if rel is None:
            return []
    excluded = sorted(DENSE_EXCLUDED_TYPES)
    return [d for (d,) in index.conn.execute(
        f"SELECT doc_id FROM documents WHERE source_path = ? AND type NOT IN ({', '.join('?' * len(excluded))})"
        " ORDER BY doc_id", (rel.replace(os.sep, "/"), *excluded))]


def _hard_linked_in_vault(index, file_: str) -> str | None:
    """The vault-relative path of an indexed file that ``file_``, outside the vault, is a hard link to (asked only of
    a file with several links: one ``stat`` per indexed file then); else ``None``."""
    try:
        st = os.stat(file_)
    except OSError:
        return None
    if st.st_nlink < 2:
        return None
    for (path,) in index.conn.execute("SELECT path FROM files"):
        try:
            other = os.stat(os.path.join(index.vault, path))
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return path
    return None


def _skip_reason(vault):
    """``(index or None, why --if-present should skip or None)``: no model, no vector tables, or no document
    with vectors of the installed model. The index is ``None`` when the reason was found before it was opened; else
    its notes (DREAMDB_VAULT used, the index read as it is) are the caller's to say with the answer.

    The check is for the *installed* model (its id from its files' hash, cached; no load): an index
    embedded with another build of it, or another ``DREAMDB_MODEL_DIR``, has vectors, none of which a
    dedup can use, and --if-present re-embedded the whole vault (QA round 57 M2: minutes on the real vault).
    The index is returned synced as far as it can be now (:meth:`dreamdb.api.Index.sync_for_dedup`); documents it
    could not chunk now (another process's lock, a read-only index) are the reason when no other is compared.
    """
    from dreamdb.embeddings.locate import find_model_dir

    model_dir = find_model_dir()
    if model_dir is None:  # (what is missing, where, as recall's note and embed status say it: QA round 152-B F3)
        from dreamdb.embeddings.locate import install_hint, missing_reason, model_dir_candidate

        chosen, origin = model_dir_candidate()
        why = missing_reason(chosen) or f"no model in {chosen}"
        if origin != "env":
            return None, f"no embedding model installed: {why}"
        hint = install_hint()
        return None, f"no embedding model in DREAMDB_MODEL_DIR: {why} ({hint[:1].lower()}{hint[1:]})"
    from dreamdb.embeddings.locate import install_mismatch, read_provenance, replaced_hint

    try:  # (its size, then its hash, hashed for its id anyway: QA round 147-C F2)
        damaged = install_mismatch(model_dir, read_provenance(model_dir) or {})
    except OSError:  # (a file that cannot be read: said where it is read, as before)
        damaged = None
    if damaged:  # (QA round 83-B F5: its id, hashed from the damaged file, was said to be "another model's")
        hint = replaced_hint(model_dir)
        return None, f"the embedding model is damaged: {damaged}; {hint[:1].lower()}{hint[1:]}"
    from dreamdb.embeddings.store import vectors_available

    from dreamdb.store.connect import CAN_LOAD_EXTENSIONS, DRIVER_NAME

    if not CAN_LOAD_EXTENSIONS:  # (QA round 78-A F6: exit 70 on "no such module: vec0")
        return None, f"the SQLite driver ({DRIVER_NAME}) cannot load sqlite-vec"
    from dreamdb.api import index_unwritable
    from dreamdb.errors import FirstBuildElsewhere, IndexUnavailable

    index = open_index(vault)
    try:
        if not vectors_available(index.conn):
            return index, "the index has no vector tables (sqlite-vec unavailable)"
        # the documents as they are (coverage() counts them), chunked where they wait (QA round 97-C F2: after a
        # rebuild, SKIPPED with every vector there); an index that cannot be written now, read-only or another process
        # holding it, is compared as it is, with a note, as a recall reads it (QA round 99-A F4, 143-E F1: exit 4 or 5)
        kept_out = index.sync_for_dedup(wait_for_first_build=False)  # (why documents wait to be chunked now, in a note)
    except FirstBuildElsewhere:  # (not waited for: an index being built has no vectors yet, QA round 146-A F2)
        return index, ("another dreamdb process is building the index for the first time, so no document has vectors"
                       f" yet; run this again once it is done (then: {index._command('embed refresh')})")
    except IndexUnavailable as exc:  # (a new or never synced index that a full disk or a read-only folder keeps from
        if not index_unwritable(exc):  # being built: nothing to compare with, QA round 146-A F2; exit 4 before)
            raise
        hint = f" {exc.hint}" if exc.hint else ""
        return index, f"the index cannot be built now, so no document has vectors: {exc.message.rstrip('.')}.{hint}"
    return index, _nothing_compared(index, kept_out, model_dir=model_dir)


def _nothing_compared(index, kept_out: str | None, model_id: str | None = None, model_dir=None) -> str | None:
    """Why a dedup against the vectors ``index`` holds now would compare no document (SKIPPED's reason), else
    ``None``: no vectors at all, none of the installed model (``model_id``, else computed from ``model_dir``'s files,
    and the model then loaded to tell one that cannot be from another build), or its documents waiting to be chunked
    again, which ``kept_out`` (:meth:`dreamdb.api.Index.sync_for_dedup`'s answer) says cannot be done now. Asked by
    ``--if-present``, and by the plain gate on an index that cannot be written now (QA round 145-F F5)."""
    from dreamdb.dedup import coverage
    from dreamdb.embeddings.store import nothing_to_embed

    conn = index.conn
    why = nothing_to_embed(conn)  # (no chunk, none to make: a refresh embeds nothing; QA round 157-G F3 was told to
    if why is not None:  # run one, in a vault of notes of a title alone, of changelog entries only, or of none)
        return f"nothing to compare with: {why}"
    if conn.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone() is None:
        return "the index has no vectors yet" + _refresh_step(index)
    if model_id is None:
        from dreamdb.embeddings.locate import compute_model_id

        try:
            model_id = compute_model_id(model_dir)
        except OSError as exc:
            return f"the embedding model cannot be read: {exc.strerror or exc} ({model_dir})"
    if coverage(conn, model_id)["compared"]:
        return None
    if kept_out and conn.execute("SELECT 1 FROM embeddings WHERE model_id = ? LIMIT 1", (model_id,)).fetchone():
        # (not "no vectors yet, run embed refresh": they are there, and a refresh cannot run either; QA round 144-A F3)
        return (f"the index's documents wait to be chunked again before their vectors of the installed model"
                f" {model_id} can be compared, which cannot be done now: {kept_out}")
    others = conn.execute("SELECT model_id, COUNT(*) FROM embeddings WHERE model_id != ? GROUP BY model_id"
                          " ORDER BY 2 DESC, 1", (model_id,)).fetchall()
    if not others or conn.execute("SELECT 1 FROM embeddings WHERE model_id = ? LIMIT 1", (model_id,)).fetchone():
        return f"no document of the index has vectors of the installed model {model_id} yet" + _refresh_step(index)
    if model_dir is not None:
        from dreamdb.embeddings.model import get_embedder
        from dreamdb.errors import ModelError, ModelNotInstalled

        try:  # (a model that cannot load is no other build: "run embed refresh" then failed with exit 8, QA round
            get_embedder(model_dir)  # 132-A F4; loaded here only on the way to SKIPPED, and kept for the process)
        except (ModelError, ModelNotInstalled) as exc:
            return f"the embedding model cannot be used: {exc.message}"
    held = ", ".join(f"{n} of {m}" for m, n in others)
    why = (f"the index has no vectors of the installed model {model_id}, only of another ({held}): the model"
           " was rebuilt or changed since the vault was embedded, or DREAMDB_MODEL_DIR points elsewhere")
    step = _refresh_step(index)
    if step.startswith(" ("):
        return (f"{why}. Run: {index._command('embed refresh')} to embed the vault with this one (minutes on a large"
                " vault)")
    return why + step


def _refresh_step(index) -> str:
    """The end of a SKIPPED reason on vectors a refresh would make: `` (run: dreamdb embed refresh …)``, or, while
    another process's refresh holds its lock (:func:`dreamdb.embeddings.store.refresh_running`), that it is under way
    and to run this again once it is done (QA round 157-G F4: a first refresh under way was to be run again, where a
    hybrid recall said it ran)."""
    from dreamdb.embeddings.store import REFRESH_RUNNING, refresh_advice

    advice = refresh_advice(index.conn, index._command("embed refresh"))
    if advice == REFRESH_RUNNING:
        return f": {advice}; run this again once it is done"
    return f" ({advice})"
