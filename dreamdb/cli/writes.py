"""``dreamdb remember``, ``update`` and ``delete``: atomic edits of the vault."""

from __future__ import annotations

import os

import click

from dreamdb.cli.options import ExistingPath, json_option, open_index, print_notes, require_text, say, vault_option
from dreamdb.errors import UsageError, naming_params


MAX_TEXT_FILE_BYTES = 64 * 2**20
"""The most a ``--file``/``--content-file``/``--append-file`` reads (bytes): a note's text, never a stream without end
(``/dev/zero``, a pipe left open)."""


def _text_from(path: str | None, option: str) -> str | None:
    """The UTF-8 text of the file ``path`` names (``-``: standard input), for ``option``, without its final line
    ends (as ``"$(cat FILE)"``); ``None`` for no path.

    Text longer than an argument may be (the shell refuses ~128 KiB: "Argument list too long", QA round 80-A F9)
    comes from a file or a pipe.

    Raises:
        NotFound: it does not exist.
        UsageError: it cannot be read, is over :data:`MAX_TEXT_FILE_BYTES`, or is not UTF-8 text.
    """
    import sys

    if path is None:
        return None
    where = "standard input" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_TEXT_FILE_BYTES + 1) if sys.stdin is not None else b""
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_TEXT_FILE_BYTES + 1)
    except FileNotFoundError:  # (gone since the option was read: not found, as then)
        from dreamdb.errors import NotFound

        raise NotFound(f"No file at {where} ({option}): the path does not exist; nothing was changed.",
                       hint=f"Give {option} an existing file, or - for standard input.") from None
    except OSError as exc:
        raise UsageError(f"Cannot read {option} {where}: {exc.strerror or exc}; nothing was changed.",
                         hint=f"Give {option} a readable file, or - for standard input.") from None
    if len(data) > MAX_TEXT_FILE_BYTES:
        raise UsageError(f"{option} {where} holds over {MAX_TEXT_FILE_BYTES // 2**20} MiB; nothing was changed.",
                         hint="A note's text is far shorter: check the file.")
    try:
        text = data.decode("utf-8-sig").rstrip("\r\n")  # (as the shell's "$(cat FILE)" would give it)
    except UnicodeDecodeError as exc:
        raise UsageError(f"{option} {where} is not UTF-8 text (byte {exc.start:,} cannot be read); nothing was "
                         "changed.", hint="Save it as UTF-8.") from None
    # (said as such: "the entry text must be a non-empty string" did not say where it came from)
    named = option if path != "-" or option.endswith(" -") else f"{option} -"
    require_text(text, path, named, after="nothing was changed",
                 hint="Pipe the text in (echo TEXT | dreamdb …), or give a file that holds it."
                 if path == "-" else "Give a file that holds the text.")
    return text


def _lock_wait() -> float | None:
    """The seconds a write command waits for another write's vault lock: ``$DREAMDB_LOCK_TIMEOUT``, else ``None``
    (the index's default, 10 s). Read first, so a bad value is refused before any text is read (exit 2).

    Raises:
        UsageError: the variable is set to no number of seconds ≥ 0.
    """
    from dreamdb.writes.files import env_lock_timeout

    return env_lock_timeout()


def _one_of(value, from_file, option: str, file_option: str):
    """``value``, or the text of ``file_option``'s file; both given is a usage error."""
    if value is not None and from_file is not None:
        raise UsageError(f"{option} and {file_option} both give the text; nothing was changed.", hint="Give one of them.")
    return value if from_file is None else _text_from(from_file, file_option)


def _done(as_json: bool, payload: dict, text: str, *, saved: bool = True) -> None:
    from dreamdb import output, quickcli

    # The change is on disk now: if the report cannot be written (stdout closed or full), the error says
    # so, and a script does not retry (and duplicate) a write that happened. (Not for an update that changed
    # nothing: QA round 84, "The change was saved (Unchanged: …)".)
    if saved:
        quickcli.SAVED = output.safe_text(text)
    if as_json:
        quickcli.json_reported(output.to_json(payload))
    else:
        click.echo(output.safe_text(text))  # text quotes vault paths


@click.command()
@click.argument("text", nargs=-1)
@click.option("--file", "text_file", type=ExistingPath(folder=False, allow_dash=True, readable=False), metavar="FILE", help="Read the description from FILE (- for standard input) instead"
              " of TEXT: for text longer than a command line takes. Read as UTF-8, whatever the locale.")
@click.option("--type", "entry_type", default="note", show_default=True, help="Entry type (feat, fix, decision, note…).")
@click.option("--scope", help="Area of the project the entry is about.")
@click.option("--summary", help="One-line headline (≤ 200 characters recommended).")
@click.option("--references", "-r", multiple=True, metavar="KIND:VALUE",
              help="Evidence token, repeatable: commit:<sha>, file:<path>, knowledge:<slug>, url:<href>…")
@click.option("--supersedes", metavar="ID",
              help="Id of the entry this one replaces (as recall shows it), or <date>|<scope>: its date as written"
                   " or as its id's day.")
@click.option("--author", "authors", multiple=True, help="Author handle (repeatable).")
@click.option("--breaking", is_flag=True, help="Mark the entry as a breaking change.")
@vault_option()
@json_option
def remember(text, text_file, entry_type, scope, summary, references, supersedes, authors, breaking, vault, as_json):
    """Add a CHANGELOG entry with TEXT (or --file's text) as its description; TEXT - reads standard input.

    The file is edited atomically; other entries stay byte-for-byte the same.
    An invalid CHANGELOG.json is refused and never overwritten.

    \b
    Example:
      dreamdb remember --type decision --scope recall --summary "BM25 stays the base" \\
        -r knowledge:decision-mem0-vs-bm25-recall "Dense retrieval only re-ranks."
      dreamdb remember --summary "Release notes" --file notes.md

    DREAMDB_LOCK_TIMEOUT=SECONDS in the environment: how long to wait for
    other writes' vault lock (default 10); writes queue for it, so many at
    once may need longer.
    """
    wait = _lock_wait()
    if not text and text_file is None:
        raise UsageError("Missing argument 'TEXT...': the entry's description.",
                         hint="Give it as TEXT, or with --file FILE (- for standard input).")
    if text == ("-",) and text_file is None:  # TEXT "-" reads standard input, as --file - does (QA round 83-A F3)
        description = _text_from("-", "TEXT -")
    else:
        description = _one_of(" ".join(text) if text else None, text_file, "TEXT", "--file")
    index = open_index(vault)
    print_notes(index)  # (DREAMDB_VAULT used instead of the current folder's vault: QA round 119-A F1)
    # (the library's refusals name these options, not its parameters: QA round 156-D F3, "type must be …")
    with naming_params(type="--type", scope="--scope", summary="--summary", author="--author"):
        entry = index.remember(description, type=entry_type, scope=scope, summary=summary, references=references,
                               supersedes=supersedes, authors=authors, breaking=breaking, lock_timeout=wait)
    # "id" is the entry's field in CHANGELOG.json; "doc_id" the id recall and --supersedes use
    if entry.get("already_superseded_by") and not as_json:
        earlier = ", ".join(entry["already_superseded_by"])
        say(f"note: changelog/{entry['supersedes']} was already superseded by {earlier}; recall now marks it "
            f"with the newest, changelog/{entry['id']} (a later decision that replaces {earlier} names it in"
            " --supersedes)")
    _done(as_json, {**entry, "doc_id": f"changelog/{entry['id']}"}, f"Remembered as changelog/{entry['id']}")


@click.command()
@click.argument("slug")
@click.option("--description", help="New frontmatter description (\"\" removes it).")
@click.option("--tags", metavar="A,B", multiple=True,
              help="New tags, comma-separated (replaces the list; blanks and repeats, in any spelling of a tag (A, #a), are dropped; \"\" clears it)."
              " A leading # and a facet prefix are not part of a tag: '#topic:recall' is the tag recall. Repeating the"
              " option adds to the list: --tags a --tags b is --tags a,b; --tags \"\" given more than once clears it too.")
@click.option("--status", help="New frontmatter status (e.g. completed, in_progress; as recall --status reads it; \"\" removes it).")
@click.option("--content", help="New body (replaces it; the previous file is kept in .dreamdb/trash/; an empty one, or a whole note that opens with its frontmatter, is refused); - reads standard input.")
@click.option("--append", help="Text appended to the body; - reads standard input.")
@click.option("--content-file", type=ExistingPath(folder=False, allow_dash=True, readable=False), metavar="FILE", help="--content read from FILE (- for standard input), as UTF-8.")
@click.option("--append-file", type=ExistingPath(folder=False, allow_dash=True, readable=False), metavar="FILE", help="--append read from FILE (- for standard input), as UTF-8.")
@click.option("--pin", "pin", is_flag=True, help="Set 'pinned: true'.")
@click.option("--unpin", is_flag=True, help="Clear 'pinned'.")
@vault_option()
@json_option
def update(slug, description, tags, status, content, append, content_file, append_file, pin, unpin, vault, as_json):
    """Edit the document SLUG: frontmatter keys or body.

    SLUG is type/slug or slug, the id recall prints (knowledge/my-note-2), or
    the file's path relative to the vault (knowledge/decisions/my-note.md) or
    absolute (as recall prints it), which always names one file. Names cannot
    point outside the vault.

    Only the changed frontmatter lines are rewritten; the rest of the file
    keeps its bytes. The previous version of the file is kept in the vault's
    trash, <vault>/.dreamdb/trash/<type>/<UTC time>-<name>.before-update.md
    (delete moves files to the same folder, as <UTC time>-<name>.md): move it
    back, under its own name, to undo. A frontmatter edit (--description,
    --tags, --status, --pin/--unpin) also sets an updated: (or updated_at:) key
    the file already has to now, in the value's own form (a date alone is
    today's date, a date and time the time now); values the note already has
    change nothing. New text may hold newlines and tabs,
    not ESC or other control characters, bidirectional overrides or invisible
    characters (as remember).

    \b
    Examples:
      dreamdb update knowledge/decisions/my-note.md --tags "recall, storage"
      dreamdb update knowledge/my-note --append "Follow-up: measured 2.1 ms."
      dreamdb update my-note --pin --json
      dreamdb update state/migrate-to-async --status completed
      git log -1 --format=%B | dreamdb update my-note --append-file -

    DREAMDB_LOCK_TIMEOUT=SECONDS in the environment: how long to wait for
    other writes' vault lock (default 10); writes queue for it, so many at
    once may need longer.
    """
    wait = _lock_wait()
    if pin and unpin:
        raise UsageError("--pin and --unpin contradict each other", hint="Give one of them.")
    # A bare "-" reads standard input, as remember's TEXT - does (QA round 114-B F4: the body became "-")
    named = {"content": "--content-file", "append": "--append-file"}
    if content == "-" and content_file is None:
        content, content_file, named["content"] = None, "-", "--content"
    if append == "-" and append_file is None:
        append, append_file, named["append"] = None, "-", "--append"
    if content_file == "-" and append_file == "-":
        raise UsageError(f"{named['content']} and {named['append']} both read standard input; nothing was changed.",
                         hint="Give one of them as -, the other as a file or text.")
    tags = _joined_tags(tags)
    # (the options the library's refusals name: the one typed, QA round 156-D F3, "status must be one line.")
    options = {"content": named["content"] if content_file is not None else "--content",
               "append": named["append"] if append_file is not None else "--append"}
    content = _one_of(content, content_file, "--content", named["content"])
    append = _one_of(append, append_file, "--append", named["append"])
    index = open_index(vault)
    print_notes(index)  # (DREAMDB_VAULT used instead of the current folder's vault: QA round 119-A F1)
    # ("path" as delete's output names the file; "updated" kept for existing callers; "doc_id" as delete's, QA 59 L10)
    with naming_params(description="--description", status="--status", **options):
        payload = index.update(slug, description=description, tags=tags, status=status, content=content,
                               append=append, pin=True if pin else False if unpin else None, lock_timeout=wait)
    from dreamdb.output import visible_id as shown  # a path with a newline shown as ␊, not split (QA round 68 L4)

    print_notes(index)  # (a body past the text indexed of a note: QA round 127-B F2)
    path, kept = payload["path"], payload["previous_version"]
    text = (f"Updated {shown(path)} (previous version kept at {shown(kept)})" if kept
            else f"Unchanged: {shown(path)} already had these values")
    _done(as_json, payload, text, saved=kept is not None)


def _joined_tags(values: tuple[str, ...]) -> str | None:
    """``update``'s repeated ``--tags`` as one comma list (``None``: not given). Repeats add up, as recall's list
    filters do (``--tags a --tags b`` is ``--tags a,b``); one value is passed as given, so the library's errors quote
    it as typed. Every value empty (``--tags "" --tags ""``) clears the tags, as one ``""`` does: each adds no tag (QA
    round 154-A F5: they were joined into ``","`` and refused as "The tags ',' name no tag", a text not typed).
    Values that name no tag otherwise, blanks and commas alone (``--tags " " --tags ""``), are refused quoting them
    as typed, as recall and list word theirs.

    Raises:
        UsageError: repeated values holding only blanks and commas, not all empty.
    """
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    if not any(values):
        return ""
    if not any(v.replace(",", "").strip() for v in values):
        written = " ".join(f"--tags {v!r}" for v in values)  # (as recall's and list's, dreamdb.api._split)
        what = "only commas and blanks" if any("," in v for v in values) else "only blank characters"
        raise UsageError(f"The tags given ({written} on the command line) name no tag ({what}); nothing was changed.",
                         hint="Give the tags' names (e.g. --tags \"recall, storage\"), or --tags \"\" to clear them.")
    return ",".join(values)


@click.command()
@click.argument("slug")
@click.option("--force", is_flag=True, help="Also delete pinned documents.")
@vault_option()
@json_option
def delete(slug, force, vault, as_json):
    """Delete the document SLUG (moved to the vault's .dreamdb/trash folder, so it can be restored).

    SLUG is type/slug or slug, the id recall prints (knowledge/my-note-2), or
    the file's path relative to the vault (knowledge/decisions/my-note.md) or
    absolute (as recall prints it).
    The file goes to <vault>/.dreamdb/trash/<type>/<UTC time>-<file name>
    (a name too long to keep whole shortened: its start, ~ and 8 hex digits;
    delete says where to move it back).
    A pinned document, or one whose frontmatter cannot be read, needs --force.

    \b
    Examples:
      dreamdb delete knowledge/old-note
      dreamdb delete knowledge/decisions/old-note.md --json

    DREAMDB_LOCK_TIMEOUT=SECONDS in the environment: how long to wait for
    other writes' vault lock (default 10); writes queue for it, so many at
    once may need longer.
    """
    wait = _lock_wait()
    index = open_index(vault)
    print_notes(index)  # (DREAMDB_VAULT used instead of the current folder's vault: QA round 119-A F1)
    # ("doc_id": the id recall printed; "deleted" is the name given, QA 59 L10)
    payload = index.delete(slug, force=force, lock_timeout=wait)
    # a deleted link leaves a link in the trash (to the file it pointed to, which is untouched), not a copy
    from dreamdb.output import visible_id as shown

    kept = payload["moved_to"]
    what = (f"a link to {shown(os.readlink(kept))} is kept at {shown(kept)}" if os.path.islink(kept)
            else f"a copy is kept at {shown(kept)}")
    if not os.path.basename(kept).endswith("-" + os.path.basename(payload["path"])):  # (a name too long to keep
        # whole after the copy's time: where it goes back is said, QA round 154-E F1)
        what += f", its name shortened to fit; move it back as {shown(payload['path'])} to restore it"
    _done(as_json, payload, f"Deleted {shown(payload['path'])} ({what})")
