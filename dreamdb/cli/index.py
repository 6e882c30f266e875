"""``dreamdb sync``, ``status``, ``list`` and ``sql``: the index itself."""

from __future__ import annotations

import click

from dreamdb.cli.options import (FreeTextCommand, Number, WholeNumber, filter_options, json_option, open_index,
                                 print_notes, say, vault_option)
from dreamdb.sqlquery import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S


@click.command("sync")
@vault_option()
@click.option("--force", is_flag=True, help="Re-parse every file, even unchanged ones.")
@click.option("--check", is_flag=True,
              help="First check the index file for damage (SQLite integrity_check, ≈ 0.15 s for an 8 MB index; and its BM25"
                   " statistics and postings against its documents, its stored texts against their content hashes, each"
                   " document against what its unchanged file gives);"
                   " rebuild it if damaged. Then read and hash every"
                   " file again, trusting no stored file times (finds an edit the times did not show).")
@json_option
def sync_cmd(vault, force, check, as_json):
    """Mirror the vault into the index (incremental, by content hash).

    Prints how many source files were added, changed, removed and unchanged
    (after a rebuild, --force or an upgrade: how many were indexed again).
    Recall syncs lazily before every query, so this is never required.
    Warnings about files that could only be partly indexed appear when a file
    is (re)parsed; --force re-parses everything and shows them all.
    If recall or sql ever report a damaged index ("malformed"), --check finds
    the damage and rebuilds the index from the vault (the vault is only read);
    it also reads every file again, so an edit whose file times did not
    change (a tool that set them back) is found.
    When over half the index file (and at least 4 MiB) is the free space of
    deleted rows, it is given back afterwards (VACUUM; "reclaimed_bytes" in
    the JSON).

    \b
    Examples:
      dreamdb sync
      dreamdb sync --check --json
    """
    from dreamdb import output

    index = open_index(vault)
    print_notes(index)  # (DREAMDB_VAULT used instead of the current folder's vault: QA round 120-A F7)
    progress = output.SyncProgress(enabled=not as_json)
    try:
        report = index.sync(force=force, progress=progress, check=check)
    finally:
        progress.close()
    print_notes(index)  # (said on opening the index: one carried over, or kept in the user cache, QA round 143-B F1)
    reclaimed, problem = _reclaim(index)
    if problem:
        report.warnings.append(problem)
    from dreamdb import quickcli

    # (the index is up to date whether or not the report can be written, said as embed refresh says it; a
    # --force rebuild takes minutes on a large vault: QA round 114-B F7)
    quickcli.SAVED = f"the index is synced: {output.count_noun(report.documents, 'document')}"
    if as_json:
        click.echo(output.to_json({**report.as_dict(), "reclaimed_bytes": reclaimed}))
        return
    from dreamdb.store.sync import few_same_name_warnings

    for w in few_same_name_warnings(report.warnings):  # (a few of those on same-named files: QA round 153-C F4)
        say(f"warning: {w}")
    # (a rebuild parses every file again, whose content need not have changed: QA round 99-B F10)
    counts = (f"{output.count_noun(report.added + report.changed, 'file')} indexed again"
              + (f" ({report.added} new)" if report.added else "") + f", {report.removed} removed"
              if report.rebuilt else f"{report.added} added, {report.changed} changed, {report.removed} removed,"
                                     f" {report.unchanged} unchanged")
    if report.moved:  # (QA round 153-C F5: a folder renamed was said as files added and removed alone; 153-H F1:
        # said after "unchanged", "of them" read as of the unchanged files)
        counts += (f" · {report.moved} of the added and removed moved to another folder:"
                   f" {'their' if report.moved != 1 else 'its'} documents kept")
    click.echo(
        f"{counts} · {output.count_noun(report.documents, 'document')} · {report.elapsed_ms:.1f} ms"
        + (" (rebuilt)" if report.rebuilt else "") + (" · index checked: ok" if check and not report.rebuilt else "")
    )
    if reclaimed:
        click.echo(f"gave back {reclaimed / 1e6:.1f} MB of disk (the index file and its WAL, mostly deleted rows' pages)")
    if not report.documents:
        note_unindexed(index, skipped=[w for w in report.warnings if ": skipped (" in w])


def _reclaim(index) -> tuple[int, str | None]:
    """After an explicit sync: :func:`dreamdb.store.connect.reclaim_free_pages`: ``(bytes given back, a warning)``;
    0 when the file had little free space, or when another process held the index (the next sync tries again); the
    warning when a full disk stopped it (QA round 60 L2: the moment the space is wanted, said nowhere; round 61 L1:
    in the JSON's warnings too)."""
    from dreamdb.store import connect as db

    if index.read_only_reason is not None:
        return 0, None
    try:
        return db.reclaim_free_pages(index.conn, index.index_path), None
    except db.OperationalError as exc:
        if "full" in str(exc):
            return 0, (f"could not give back the index's free space: {exc} (VACUUM needs about the index's size free,"
                       " on its disk and in the temporary folder); the index is unchanged")
        return 0, None


def note_unindexed(index, skipped: list[str] | tuple[str, ...] = ()) -> None:
    """On stderr, for an index with no documents: where dreamdb looks, and the .md files it found elsewhere
    (``skipped``: the sync's warnings of files it skipped, which then explain it)."""
    from dreamdb.output import count_noun, safe_text
    from dreamdb.vault.discover import INDEXED_FOLDERS, unindexed_markdown

    count, examples = unindexed_markdown(index.vault, include_archives=index.include_archives)
    where = ", ".join(INDEXED_FOLDERS)
    from dreamdb.store.sync import unreadable_paths

    unreadable = unreadable_paths(index.conn)
    if unreadable:  # (QA round 69 H1: "the vault has no notes yet" for a note that could not be read)
        # (as the library's note says it: a binary note or a CHANGELOG.json that is no JSON is no permission's
        # matter, and one file is "its"; QA round 102-B F1)
        its = "their" if len(unreadable) > 1 else "its"
        say(f"note: no documents indexed: {', '.join(map(safe_text, unreadable[:3]))}"
            f"{', …' if len(unreadable) > 3 else ''} cannot be read (fix {its} permissions, or contents: binary,"
            f" or JSON that does not parse; {index._command('sync --force')} names the reason).")
        return
    from dreamdb.vault.discover import cased_markdown, other_extension, renames_advice

    # (user QA: a vault whose only note was knowledge/UP.MD synced to nothing, and only the first sync said why)
    cased, cased_examples = cased_markdown(index.vault, include_archives=index.include_archives, limit=3)
    if count:
        say(f"note: no documents indexed; {count} .md file{'s' if count != 1 else ''} in the vault "
            f"{'are' if count != 1 else 'is'} outside the folders dreamdb reads ({', '.join(map(safe_text, examples))}"
            f"{', …' if count > len(examples) else ''}). Documents come from: {where} "
            "(README, \"Which files become documents\").")
    if cased:
        say(f"note: no documents indexed: {', '.join(map(safe_text, cased_examples))}"
            f"{', …' if cased > len(cased_examples) else ''} {other_extension(cased)}, the only one dreamdb reads: "
            f"{renames_advice(index.vault, cased_examples, 'rename them' if cased != 1 else 'rename it')}"
            " (README, \"Which files become documents\").")
    if not (count or cased):
        from dreamdb.vault.discover import archived_markdown, undecodable_markdown

        hidden = archived_markdown(index.vault)
        misnamed, named = undecodable_markdown(index.vault, include_archives=index.include_archives, limit=3)
        if misnamed:  # (QA round 103-C F9: "the vault has no notes yet", of notes skipped for their names)
            # (notes or folders: a folder's name counts too, QA round 105 F12)
            say(f"note: no documents indexed: {misnamed} note{'s' if misnamed != 1 else ''} or "
                f"folder{'s' if misnamed != 1 else ''} ({', '.join(map(safe_text, named))}"
                f"{', …' if misnamed > len(named) else ''}) {'have names' if misnamed != 1 else 'has a name'}"
                f" that {'are' if misnamed != 1 else 'is'} not valid UTF-8: rename "
                f"{'them' if misnamed != 1 else 'it'}, e.g. with convmv.")
        elif hidden:
            say(f"note: no documents indexed; the vault's {hidden} .md file{'s are' if hidden != 1 else ' is'} in "
                "archive folders (names starting with .) or hidden (.name.md): archives are indexed with "
                "DREAMDB_INCLUDE_ARCHIVES=1, hidden files never.")
        elif skipped:  # (QA round 121-C F5: a note whose path is too long, skipped, then "the vault has no notes yet")
            say(f"note: no documents indexed: {count_noun(len(skipped), 'file')} skipped (the warnings"
                " above say why).")
        else:
            say(f"note: no documents indexed: the vault has no notes yet. Documents come from: {where}.")


def _sync_for_read(index) -> None:
    """Sync before reading, waiting at most 1.5 s for another process's write lock (then the index
    as it is, with a note on stderr, said by the caller once it has answered: QA round 143-E F4), as recall does."""
    index.sync_for_read()
    print_notes(index, skip_note=index.read_as_is)


@click.command("status")
@vault_option()
@json_option
def status_cmd(vault, as_json):
    """Show what the index holds: documents by type, size, last sync, schema version, embeddings.

    Also counts the .md files outside the folders dreamdb reads (they are not
    indexed: see the README, "Which files become documents").

    \b
    Examples:
      dreamdb status
      dreamdb status --vault ~/code/app/_dream_context --json
    """
    from dreamdb import output
    from dreamdb.extras import dreamdb_command
    from dreamdb.vault.discover import rename_advice, renames_advice

    index = open_index(vault)
    st = index.status()  # syncs as a read does (Index.sync_for_read)
    print_notes(index)  # lazy-sync notes, or a damaged index rebuilt while reading it
    if as_json:
        click.echo(output.to_json(st))
        return
    shown = output.visible_id  # a path with ESC or a newline shown as ␛ / ␊, not obeyed or split (QA round 68 L4)
    click.echo(f"vault:          {shown(st['vault'])}")
    wal = st.get("index_wal_bytes", 0)
    click.echo(f"index:          {shown(st['index'])} ({st['index_bytes'] / 1e6:.1f} MB"
               + (f", {wal / 1e6:.1f} MB of it in its -wal file" if wal >= 50_000 else "") + ")")
    other = st.get("other_index")
    if other:  # left at the other place when this one already existed (QA round 46 M3), or copied from the vault's
        # own folder, whose index path is too long now (QA round 144-A F2)
        click.echo(f"other index:    {shown(other['path'])} ({other['bytes'] / 1e6:.1f} MB, changed {other['modified']}; this"
                   f" one {st['index_modified']}), from when the vault's writability or path length was different;"
                   " this one is used. To use that one (its embeddings) instead, delete this one; or delete that one.")
    click.echo(f"documents:      {st['documents']} from {st['files']} files, {st['terms']} distinct terms")
    for t, n in st["by_type"].items():
        click.echo(f"  {output.pad(t, 13)} {n}")
    if st["unindexed_markdown"]:
        more = ", …" if st["unindexed_markdown"] > len(st["unindexed_examples"]) else ""
        click.echo(f"not indexed:    {st['unindexed_markdown']} .md file{'s' if st['unindexed_markdown'] != 1 else ''}"
                   " outside the folders dreamdb reads "
                   f"({', '.join(shown(p) for p in st['unindexed_examples'])}{more})")
    if st["unindexed_cased_extension"]:  # (QA round 65 L5)
        more = ", …" if st["unindexed_cased_extension"] > len(st["unindexed_cased_examples"]) else ""
        click.echo(f"not indexed:    {st['unindexed_cased_extension']} note{'s' if st['unindexed_cased_extension'] != 1 else ''}"
                   f" with an extension other than .md ({', '.join(shown(p) for p in st['unindexed_cased_examples'])}"
                   f"{more}): {shown(renames_advice(index.vault, st['unindexed_cased_examples']))}")
    for path in st["unindexed_changelog"]:  # (QA round 91 F7)
        click.echo(f"not indexed:    {shown(path)}: dreamdb reads core/CHANGELOG.json, named so in this"
                   f" case; {shown(rename_advice(index.vault, path))}")
    if st["unindexed_undecodable_names"]:  # (QA round 78-A F4)
        n = st["unindexed_undecodable_names"]
        more = ", …" if n > len(st["unindexed_undecodable_examples"]) else ""
        from dreamdb.vault.discover import python_reads_names_as

        encoding = python_reads_names_as()  # (QA round 98-A F5: under LC_ALL=C PYTHONUTF8=0, UTF-8 names were "not
        what, fix = (("is not valid UTF-8", "rename (e.g. with convmv)") if encoding is None else  # UTF-8: rename")
                     (f"this Python cannot read (it reads names as {encoding})",
                      "set PYTHONUTF8=1 or a UTF-8 locale (LC_ALL=C.UTF-8)"))
        click.echo(f"not indexed:    {n} note{'s' if n != 1 else ''} or folder{'s' if n != 1 else ''} whose name {what}"
                   f" ({', '.join(shown(p) for p in st['unindexed_undecodable_examples'])}{more}): {fix}")
    if st["unreadable_files"]:
        more = ", …" if st["unreadable_files"] > len(st["unreadable_examples"]) else ""
        click.echo(f"not indexed:    {st['unreadable_files']} file{'s' if st['unreadable_files'] != 1 else ''} dreamdb"
                   f" cannot read ({', '.join(output.visible_id(p) for p in st['unreadable_examples'])}{more}): fix"
                   f" {'their' if st['unreadable_files'] != 1 else 'its'} permissions, or contents (binary, or JSON"
                   f" that does not parse; {index._command('sync --force')} names the reason)")
    if st["frontmatter_unread"]:  # (QA round 119-B F2: a merge conflict in a note's frontmatter, said by one sync)
        n = st["frontmatter_unread"]
        more = ", …" if n > len(st["frontmatter_unread_examples"]) else ""
        click.echo(f"in part:        {n} note{'s' if n != 1 else ''} indexed without {'their' if n != 1 else 'its'}"
                   f" frontmatter ({', '.join(output.visible_id(p) for p in st['frontmatter_unread_examples'])}{more}):"
                   " title, dates, tags and flags unknown until fixed (bad YAML or a merge conflict;"
                   f" {index._command('sync --force')} names the reason)")
    if st["text_replaced"]:  # (QA round 130-C F10: a note saved in cp1252, warned of by its first sync only)
        n = st["text_replaced"]
        more = ", …" if n > len(st["text_replaced_examples"]) else ""
        click.echo(f"in part:        {n} file{'s' if n != 1 else ''} indexed with undecodable bytes replaced (�)"
                   f" ({', '.join(output.visible_id(p) for p in st['text_replaced_examples'])}{more}): not valid UTF-8;"
                   f" re-save {'them' if n != 1 else 'it'} as UTF-8")
    # (QA round 153-C F2: a note cut at 4 Mi characters, warned of by the sync that read it only; 153-F F2: each kind
    # of cut worded by what it lost, a note without its frontmatter was "indexed up to its first 4,194,304 characters";
    # 154-A F2: a note cut in two ways is on the line of each)
    for kind, cut in st["text_cut_kinds"].items():
        click.echo(f"in part:        {_cut_line(kind, cut['files'], cut['examples'], index._command('sync --force'))}")
    click.echo(f"last sync:      {st['last_sync']}")
    waiting = (f" (migrations {', '.join(map(str, st['pending_migrations']))} wait for a SQLite that loads"
               " sqlite-vec)" if st["pending_migrations"] else "")
    click.echo(f"schema version: {st['schema_version']}{waiting} · analyzer {st['analyzer_version']}")
    click.echo(f"sqlite:         {st['sqlite_driver']} {st['sqlite_version']} · vector extension {'loadable' if st['vector_extension'] else 'NOT loadable'}")
    emb = st.get("embeddings")
    if emb:
        click.echo(f"embeddings:     {shown(emb.get('summary', ''))}")  # (its cut note names ids: QA round 139-D F2)
    acc = st["bm25_accumulator"]
    if acc == "C":
        acc += " (BM25 sums of a long-lived process, e.g. the Python API)"
    elif acc == "numpy":
        acc += ": the C kernel was not built at install (DREAMDB_NO_KERNEL=1, or no C compiler); same results, slower"
    click.echo(f"accumulator:    {acc}")
    lex = st["lexicon"]
    click.echo("lexicon:        " + (f"{shown(lex['path'])} (Turkish–English, from {lex.get('source')} {lex.get('source_version')})"
                                     if lex["installed"] else f"none, {lex['reason']}")
               + (f"; its terms are another analyzer's (slower lookups): run `{dreamdb_command()} lexicon build`"
                  if lex["installed"] and lex.get("analysed") is False else "")
               + ("; built without this dreamdb's glossary of the words of software work: run"
                  f" `{dreamdb_command()} lexicon build`"
                  if lex["installed"] and lex.get("glossary_version") != lex.get("current_glossary_version") else ""))


def _cut_line(kind: str, n: int, examples: list[str], sync_force: str = "dreamdb sync --force") -> str:
    """``status``'s line (after ``in part:``) of the ``n`` files cut at the size limit in the way ``kind`` names
    (:data:`dreamdb.vault.parse.CUT_KINDS`), ``examples`` the first of their paths: what each lost, and the fix;
    ``sync_force`` the command that names what was left out (:meth:`dreamdb.api.Index._command`: the vault named
    where ``dreamdb`` run here would not find it, QA round 156-F F2)."""
    from dreamdb import output
    from dreamdb.vault.parse import MAX_NOTE_CHARS

    limit = f"{MAX_NOTE_CHARS:,}"
    many = n != 1
    s, its, them = ("s" if many else ""), ("their" if many else "its"), ("them" if many else "it")
    shown = ", ".join(output.visible_id(p) for p in examples) + (", …" if n > len(examples) else "")
    if kind == "frontmatter":  # (worded as frontmatter_unread: the text after it is indexed, up to the limit too; a
        # note with more is listed as "text" as well: QA round 154-A F2)
        return (f"{n} note{s} indexed without {its} frontmatter, longer than the {limit} characters a note is indexed"
                f" up to ({shown}): title, dates, tags and flags unknown, the text after it found up to as many"
                " characters; shorten the frontmatter (move long values into the body)")
    if kind == "frontmatter_and_text":
        return (f"{n} note{s} indexed by {its} file name alone ({shown}): a frontmatter block not closed within the"
                f" {limit} characters a note is indexed up to, so title, dates, tags, flags and text are unknown;"
                f" close it with a --- line, or shorten it ({sync_force} names what was left out)")
    if kind == "section":
        return (f"{n} memory file{s} with a section longer than {limit} characters ({shown}): that section is indexed"
                f" up to its first {limit}, the rest of it not found (the other sections are); split it under '## '"
                f" headings of its own ({sync_force} names the section)")
    return (f"{n} note{s} indexed up to {its} first {limit} characters ({shown}): the rest of {its} text is not"
            f" found; split {them} into notes of their own ({sync_force} names what was left out)")


@click.command("list")
@vault_option()
@filter_options
@click.option("--hide-expired", is_flag=True, help="Leave out documents past their 'expires' date (recall's default).")
@click.option("--now", metavar="ISO", help="Fix the clock (relative dates, expiry), e.g. 2026-08-18T00:00:00Z.")
@json_option
def list_cmd(vault, types, exclude_types, tags, since, until, status, level, hide_expired, now, as_json):
    """List indexed documents (id, type, date, status, level, title), by id.

    The filters are recall's; unlike recall, documents past their 'expires'
    date are listed unless --hide-expired.

    \b
    Examples:
      dreamdb list
      dreamdb list --types feature,task --json
      dreamdb list --types task --status in_progress,todo
      dreamdb list --since -30d --tags auth
    """
    from dreamdb import output

    index = open_index(vault)
    filtered = any(v is not None for v in (types, exclude_types, tags, since, until, status, level)) or hide_expired
    docs = index.list_documents(types=types, exclude_types=exclude_types, tags=tags, since=since, until=until,
                                status=status, level=level, include_expired=not hide_expired,
                                now=now)  # syncs as a read does (Index.sync_for_read)
    print_notes(index)
    if not docs and not filtered:  # an empty index: why (QA round 68 L10), as sync says
        note_unindexed(index)
    if as_json:
        click.echo(output.to_json(docs))
        return
    rows = [{"doc_id": output.typable_id(d["doc_id"]), "type": d["type"], "date": (d["date"] or "")[:10], "status": d["status"] or "", "level": d["level"],
             "title": output.clip(d["title"] or "", 70)} for d in docs]
    click.echo(output.table(rows) if rows else "No documents.")


@click.command("sql", cls=FreeTextCommand)
@click.argument("query")
@vault_option()
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]),
              help="table (the default) for people; json and csv for programs (see above).")
@json_option
@click.option("--max-rows", type=WholeNumber(min=0, max=2**31 - 2), default=DEFAULT_MAX_ROWS, show_default=True, metavar="N",
              help="Print at most N rows (0 = no limit). A cut result is said on stderr and in JSON output.")
@click.option("--timeout", "timeout_s", type=Number(min=0), default=DEFAULT_TIMEOUT_S, show_default=True,
              metavar="SECONDS", help="Stop a query that runs longer (0 = no limit); exit 1. SQLite stops between the"
                                      " steps of a query: one step over a very large value ends first. The index"
                                      " locked by another program is waited for as long, 10 s at most (exit 5).")
@click.option("--no-sync", is_flag=True, help="Query the index as it is, without syncing first.")
def sql_cmd(query, vault, fmt, as_json, max_rows, timeout_s, no_sync):
    """Run a read-only SQL QUERY against the index (sqlite-vec loaded).

    The index is opened read-only: INSERT, UPDATE, DELETE, DDL, ATTACH, VACUUM,
    PRAGMAs that write and load_extension are refused. QUERY is one statement;
    ';' and comments before or after it are fine. Tables and views are
    documented in docs/schema.md of the source repository (a wheel does not
    hold it); SELECT name, type FROM sqlite_schema lists them.

    At most --max-rows rows are printed (100,000 by default; --max-rows 0 for
    all). When a result is cut, stderr says "showing the first N rows". The
    rows are held in memory before they are printed (354,000 rows of the
    postings table took 0.8 GB as JSON or a table, 0.13 GB as CSV), so give a
    LIMIT rather than --max-rows 0 for very large results; a result past
    128 MiB of data is cut there, and said so (a cell counts the bytes the
    format writes for it, text with JSON's escapes or CSV's doubled quotes,
    a BLOB's hex, a table's cells padded to their column's widest, and 24
    more, a row 48 more and its column names, which JSON repeats in every
    row: held in memory, about 1.2 GB at most; 2,000,000 rows of one integer
    named x are cut at 1,657,008). One row is read whole
    before it is counted, though, and so is the row after the last one
    --max-rows keeps (to tell the result was cut): SQLite makes a value of
    up to 1 GB, so a row of large values (zeroblob(1e9), three of them: about
    6 GB) takes that memory whatever the limits; select part of such values
    (substr(), length()).

    A query that sorts or groups many rows (ORDER BY, GROUP BY, DISTINCT
    without an index to read them in order) spills to SQLite's temporary
    files, in SQLITE_TMPDIR, else TMPDIR, else /var/tmp (then /usr/tmp,
    /tmp): the postings table sorted whole can write gigabytes there. SQLite
    has no cap on their size, so --timeout bounds them; they are deleted when
    the query ends (even when the process is killed: they have no name once
    made).

    JSON (--json or --format json) is a list with one object per row, keyed by
    column name; a repeated column name gets a suffix (a, a_2, a_3 ...). When
    --max-rows cut the result, the JSON is instead an object
    {"columns": [...], "rows": [...], "truncated": true, "max_rows": N},
    so a cut result can never pass for a complete one; an object too, with
    "notes", when the rows may miss the vault's or the index's latest changes
    (the sync before the query could not run: see docs/json.md). Ctrl-C while
    the result is written leaves part of it on stdout, with no error object
    after it (exit 130, said on stderr). INTEGER and REAL values
    are JSON numbers (±infinity as the strings "Infinity"/"-Infinity"), NULL is
    null, and a BLOB is an uppercase hex string, as SQLite's hex() gives it
    (also in CSV). The table and CSV show NULL as an empty cell, as they show
    '': JSON tells them apart (or SELECT coalesce(col, 'NULL')). The table shows a BLOB as <N bytes>, cuts text and column names at 80
    characters and shows control characters visibly (ESC as ␛).

    Text in JSON and CSV is exact, but for invisible characters that can
    hide a message for an agent (Unicode tag characters, a run of variation
    selectors, invisible operators): both write them as \\u escapes
    (\\udb40\\udc49 for U+E0049). CSV written to a terminal shows control
    characters as the table does (ESC as ␛, so a cell cannot colour the
    screen or move the cursor); CSV piped to a file or a program keeps them
    as the index holds them.

    A query that starts with '-' (such as a leading -- comment) would be taken
    for an option: put -- before it, after the options.

    \b
    Examples:
      dreamdb sql "SELECT type, COUNT(*) AS n FROM documents GROUP BY type"
      dreamdb sql "SELECT term, df FROM terms ORDER BY df DESC LIMIT 10" --format csv
      dreamdb sql --max-rows 0 --format csv "SELECT doc_id, title FROM documents"
      dreamdb sql --format csv -- "$(cat query.sql)"   # query.sql may start with a -- comment
    """
    from dreamdb import output
    from dreamdb.errors import (OPEN_FILES_HINT, IndexDamaged, IndexUnavailable, UsageError, open_files_reason,
                                short_of_files)
    from dreamdb.sqlquery import MAX_RESULT_BYTES, csv_text, json_rows, run_readonly, unique_names

    if as_json and fmt in ("csv", "table"):
        raise UsageError(f"--json and --format {fmt} ask for two different outputs.", hint="Give one of them.")
    from dreamdb.vault.discover import require_utf8

    # (QA round 97-B F7: "SQL error: 'utf-8' codec can't encode character '\udcff' …")
    require_utf8(query, "The query", hint="Retype it in UTF-8 (check the terminal's encoding, or the file's: iconv"
                                          " converts it).")
    fmt = fmt or "table"
    from dreamdb.store.connect import BUSY_TIMEOUT_MS

    # (the lock is waited for --timeout, 10 s at most, by the sync before the query too: QA round 143-G F1, it
    # waited 10 s whatever --timeout said)
    index = open_index(vault, lock_timeout_ms=int(min(BUSY_TIMEOUT_MS, timeout_s * 1000 or BUSY_TIMEOUT_MS)))
    if not no_sync:
        _sync_for_read(index)  # (its note when the index could not be synced: index.read_as_is, given with the rows)
    else:
        index.carry_over()  # (an index the other place holds, the cache for a vault made writable, is taken over)
        print_notes(index)
        index.check_path_length()  # (a name too long: an internal error from is_file, QA round 147-E F3)
        index.check_index_folder()  # (a link or another user's file in its cache folder: QA round 148-B F1)
        from dreamdb.config import index_file_kind, is_default_index_path, not_an_index

        kind = index_file_kind(index.index_path)
        # (a folder, pipe or unreadable path in its place: refused as a sync refuses it, QA round 151-G F4, where "No
        # index yet … Run without --no-sync first" sent the user to that refusal)
        index.check_index_file_kind(kind)
        if not index.index_path.is_file():
            raise IndexUnavailable(f"No index yet at {index.index_path}.",
                                   hint=f"Run without --no-sync (or {index._command('sync')}) first.")
        shown = kind  # (as recall and sync word it: QA round 151-A F7)
        if kind == "sqlite" and not _has_own_tables(index.index_path):  # (application id 0: an index older than
            kind = "foreign"  # migration 003, or any other database; QA round 116-A F7)
        default = is_default_index_path(index.index_path, index.vault)
        if kind in ("foreign", "other") and default:  # (a sync refuses it too: its hint must not send the user there)
            import os

            link = next((p for p in (index.index_path, index.index_path.parent) if os.path.islink(p)), None)
            if link is not None:  # (QA round 150-D F2: told to run a sync, which refuses it)
                what = not_an_index(shown)
                target = os.path.realpath(link)
                raise IndexUnavailable(
                    "Not a dreamdb index: " + (f"{link} is a link to {target}, which is {what}" if link == index.index_path
                                               else f"{index.index_path} is {what}, and its folder is a link to {target}")
                    + "; dreamdb will not touch it.",
                    hint=f"Remove the link {link} (dreamdb's own path; removing the link leaves {target} as it is),"
                         " then run without --no-sync: dreamdb makes its own index there.")
        if kind in ("empty", "foreign", "other"):  # (QA round 115-C F4: "no such table: documents", exit 2)
            raise IndexUnavailable(f"{index.index_path} is an empty file: no index has been built there yet."
                                   if kind == "empty" else
                                   f"Not a dreamdb index: {index.index_path} is {not_an_index(shown)}.",
                hint=f"Run without --no-sync (or {index._command('sync')}), which " + {
                    "empty": "builds the index there.", "foreign": "moves that database aside and builds the index.",
                    "other": "builds the index there anew."}[kind] if kind == "empty" or default else
                # (a path the user chose is never moved aside or replaced)
                "Point DREAMDB_INDEX at a new file path, or at the index you meant.")
        index.check_index_vault_readonly()
        index.check_synced_readonly()  # (QA round 149-D F1: an index never synced answered a count of 0, exit 0)
    # (after a sync too: a driver that cannot load sqlite-vec leaves the vector tables' migrations waiting, and
    # "no such table: chunks" came with a hint that listed chunks; QA round 97-B F8)
    read = index.read_path  # (the vault's other index, where this one could not be made: QA round 145-I F1)
    # (the cap counts the bytes this format writes: QA round 152-A F5, JSON's escapes of control characters were
    # counted as their UTF-8 bytes, 800 MB of JSON and 2.4 GB resident)
    shape = {"fmt": "json" if as_json else fmt, "terminal": fmt == "csv" and _stdout_is_terminal()}
    try:
        waiting = _note_older_index(read, timeout_s, command=index._command)
        try:
            try:
                result = run_readonly(read, query, max_rows=max_rows, timeout_s=timeout_s, command=index._command,
                                      **shape)
            except IndexDamaged as exc:
                if no_sync:
                    raise
                report = index.rebuild(exc.message)  # the index is a cache: rebuild it from the vault, then ask again
                say(f"note: the index was damaged; rebuilt from the vault ({report.documents} documents)")
                result = run_readonly(index.index_path, query, max_rows=max_rows, timeout_s=timeout_s,
                                      command=index._command, **shape)
        except UsageError as exc:
            _note_waiting_migrations(waiting, exc.message)
            raise
    except OSError as exc:  # (the migrations' files, the watchdog's pipe: exit 1 where the other commands say 4 of the
        # open-file limit, QA round 153-F F5)
        if not short_of_files(exc):
            raise
        raise IndexUnavailable(f"Cannot query the index at {read}"
                               f"{f' (reading {exc.filename})' if exc.filename else ''}: {open_files_reason(exc)}; the"
                               " index was left as it is.",
                               hint=OPEN_FILES_HINT) from None
    columns, rows, truncated = result.columns, result.rows, result.truncated
    print_notes(index)  # (the index read as it is: said now that it answered, QA round 143-E F4)
    for note in result.notes:
        say(f"note: {note}")
    if result.cut_by == "max_bytes":  # (QA round 115-C F3, 145-D F3: held in memory, at up to 9 times its count)
        say(f"note: showing the first {len(rows):,} row{'s' if len(rows) != 1 else ''}: the result holds more"
            f" than {MAX_RESULT_BYTES // 2**20} MiB of data; narrow it (a WHERE, a LIMIT, fewer or shorter"
            " columns)")
    elif truncated:
        say(f"note: showing the first {max_rows:,} row{'s' if max_rows != 1 else ''}; use --max-rows 0 for all")
    from dreamdb.quickcli import result_started

    if as_json or fmt == "json":
        data = json_rows(columns, rows)
        if truncated:
            data = {"columns": unique_names(columns), "rows": data, "truncated": True, "max_rows": max_rows}
            if result.cut_by == "max_bytes":
                data["max_bytes"] = MAX_RESULT_BYTES
        # (QA round 132-A F1: rows of an index its sync could not bring up to the vault, another process holding it,
        # were a bare array, as complete, while stderr said they may be stale)
        notes = [*([index.read_as_is] if index.read_as_is else []), *result.notes]
        if notes:
            data = data if isinstance(data, dict) else {"columns": unique_names(columns), "rows": data}
            data["notes"] = notes
        text = output.to_json(data)
        result_started()  # (Ctrl-C from here on: no error object after part of the rows, QA round 151-G F3)
        click.echo(text)
    elif fmt == "csv":
        text = csv_text(columns, rows, terminal=_stdout_is_terminal())
        result_started()
        click.echo(text, nl=False, color=True)  # color=True: click would strip ANSI sequences from CSV data when piped
    else:
        shown = [[_cell(v) for v in r] for r in rows]
        # (headers cut as cells are: a name of 100,000 characters padded every row to its width, QA round 151-G F2)
        text = output.table(shown, headers=[_cell(c) for c in columns]) if columns else "(no result columns)"
        result_started()
        click.echo(text)


def _has_own_tables(index_path) -> bool:
    """Whether the SQLite file at ``index_path`` holds dreamdb's tables (read without dreamdb's registry)."""
    from dreamdb.store.connect import DatabaseError, open_unlocked_readonly

    from dreamdb.api import _has_dreamdb_schema

    conn = open_unlocked_readonly(index_path)
    if conn is None:
        return True  # (cannot tell: the query says what it meets)
    try:  # (dreamdb's tables, and its schema_migrations columns: golang-migrate and Rails use the name; 117-A F5)
        return _has_dreamdb_schema(conn)
    except DatabaseError:
        return True
    finally:
        conn.close()


def _note_older_index(index_path, timeout_s: float = 0, command=None) -> list:
    """``sql --no-sync`` on an index an older dreamdb wrote, not upgraded (a sync would): a note that its tables are
    not yet those docs/schema.md describes (QA round 86-B F4: "no such table: renumbered_ids", with no word why).
    The migrations that need sqlite-vec are no sign of age (a driver that cannot load it leaves them waiting): they are
    returned, ``[(version, path)]``, for :func:`_note_waiting_migrations` to name when the query meets what they add.
    ``command``: ``command(words)``, the command line the note names (:meth:`dreamdb.api.Index._command`: the dreamdb
    that runs, ``--vault`` where needed; QA round 156-G F5), a bare ``dreamdb sync`` without it.

    Raises:
        LockTimeout: another program held the index locked past the wait.
        KeyboardInterrupt: Ctrl-C while it waited.
    """
    from dreamdb.errors import DreamdbError, LockTimeout
    from dreamdb.sqlquery import bare_command, run_readonly
    from dreamdb.store.migrations import available, latest_version, requirements
    from dreamdb.store.sync import INDEX_FORMAT

    try:
        rows = run_readonly(index_path, "SELECT group_concat(version), MAX(version), (SELECT value FROM meta WHERE key ="
                            " 'analyzer_version') FROM schema_migrations", max_rows=1, timeout_s=timeout_s,
                            command=command or bare_command).rows
    except LockTimeout:  # (said now, not waited for twice: QA round 115-C F1, 22 s)
        raise
    except DreamdbError:  # (the query itself then says what is wrong)
        return []
    applied, schema, index_format = rows[0] if rows else (None, None, None)
    if not applied:
        return []
    done = {int(v) for v in str(applied).split(",")}
    waiting = [(v, path) for v, _name, path in available() if v not in done]
    vector = [(v, path) for v, path in waiting if "vec0" in requirements(path)]
    # (a newer schema is left as it is by every sync: QA round 143-J F1, "run without --no-sync" then failed, exit 4)
    newer_schema = str(schema).isdigit() and int(schema) > latest_version()
    if len(waiting) == len(vector) and index_format in (None, INDEX_FORMAT) and not newer_schema:
        return vector
    from dreamdb.store.sync import _format_key

    ours, theirs = _format_key(INDEX_FORMAT), _format_key(str(index_format))
    age = "a newer" if (ours is not None and theirs is not None and len(ours) == len(theirs) and theirs > ours) or (
        newer_schema) else "an older"  # (QA round 117-A F8: "older")
    # (the same schema: the tables are docs/schema.md's, the terms of another analysis; QA round 132-E F5, "its tables
    # may not be those docs/schema.md describes" of an index whose format alone differed)
    differs = ("its terms (postings) are another version's analysis" if not waiting and str(schema).isdigit()
               and int(schema) == latest_version() else "its tables may not be those docs/schema.md describes")
    say(f"note: this index was written by {age} dreamdb (schema version {schema}, index format {index_format};"
        f" this one: {latest_version()}, {INDEX_FORMAT}) and is not changed with --no-sync: {differs}; "
        + ("this dreamdb cannot change an index of a newer schema, by a sync either: run the newer dreamdb, or delete"
           " the index to rebuild it with this one (it is a cache of the vault; stored embeddings are lost)"
           if newer_schema else
           f"run without --no-sync (or {(command or bare_command)('sync')}) to "
           + ("upgrade it" if age == "an older" else "index it again in this version's format")))
    return vector


def _note_waiting_migrations(vector: list, message: str) -> None:
    """When SQLite's ``message`` ("no such table: chunks", "no such column: words") names a table or view that one of
    the waiting sqlite-vec migrations ``vector`` (``[(version, path)]``, from :func:`_note_older_index`) creates, or a
    column one adds, a note of why (QA round 87 L1). Told by SQLite, not by the query's words: a string literal or a
    column named alike (``body LIKE '%words%'``) got the note on a query that worked (QA round 145-D F4)."""
    from dreamdb.store.migrations import missing_object, names_added, names_created

    found = missing_object(message)
    if not vector or found is None or (found[0] == "table" and found[1] != "main"):
        return
    kind, _schema, name = found
    if not any(name in (names_created(path) if kind == "table" else names_added(path)) for _v, path in vector):
        return
    from dreamdb.store.connect import CAN_LOAD_EXTENSIONS

    waits = (", applied by a sync (run without --no-sync)" if CAN_LOAD_EXTENSIONS else  # (QA round 88 B6)
             " wait for a SQLite driver that loads sqlite-vec (dreamdb status names it)")
    say(f"note: {name}: not in this index yet: migration{'s' if len(vector) > 1 else ''} "
        f"{', '.join(str(v) for v, _p in vector)}{waits}")


def _stdout_is_terminal() -> bool:
    """Whether stdout is a terminal: ``sql --format csv`` shows control characters there (QA round 55)."""
    import sys

    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # (no stdout, or a closed one)
        return False


def _cell(v):
    """A table cell: a BLOB as ``<N bytes>``, text cut at 80 characters (control characters are made visible by ``output.table``)."""
    if isinstance(v, bytes):
        return f"<{len(v)} bytes>"
    if isinstance(v, str):
        from dreamdb.output import clip

        return clip(v, 80, cut=77)  # (no grapheme cluster split: QA round 143-I F2)
    return v
