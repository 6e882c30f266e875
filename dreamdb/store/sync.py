"""Content-hash incremental sync: mirror the vault into the index.

1. Stat pre-filter: list the vault's source files (:func:`walk_sources`) and
   compare (mtime_ns, size, ctime_ns) with the ``files`` table. Nothing differs → done,
   without taking the write lock (the no-change path costs a few ms).
2. Otherwise, inside one ``BEGIN IMMEDIATE`` transaction: re-check (another
   process may have synced meanwhile), read each candidate, hash it (sha256);
   same hash → only the stat is refreshed; new hash → its documents are
   re-parsed and replaced; files gone from the vault → their documents removed.
   Corpus statistics are refreshed. A crash anywhere rolls everything back.
   A file changed within the file system's clock tick of the walk is stored
   without its change time, so the next sync reads it again
   (:func:`file_system_clock`: git's "racy clean" files).
"""

from __future__ import annotations

import errno
import json
import os
import time
import unicodedata
import weakref
from collections import Counter
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path
from stat import S_ISREG

from dreamdb.analyzer import (ANALYZER_VERSION, IDENTIFIERS_VERSION, TURKISH_LETTERS, acronym_terms, analyze,
                              ascii_terms, compound_terms, dotless_capitals, dotted_terms, drop_data, identifier_terms,
                              is_turkish_text, joined_terms, lower, normalize, tokens)
from dreamdb.lazy_regex import LazyPattern
from dreamdb.records import factory, record
from dreamdb.vault import PARSER_VERSION
from dreamdb.store.connect import OperationalError, write_transaction
from dreamdb.ranking.rank import corpus_stats
from dreamdb.vault.discover import (UNSCANNED, SourceFile, accent_twins, classify, in_archive, twin_difference,
                                   read_head, read_source, stamp, walk_sources)
from dreamdb.vault.tags import tag_key

INDEX_FORMAT = f"{ANALYZER_VERSION}.{PARSER_VERSION}.{IDENTIFIERS_VERSION}"
"""Analyzer, parser and identifier-rule versions: an index built with another format is rebuilt by the next sync."""

FIELDS = ("title", "description", "tags", "body")
"""BM25F fields, in the column order of ``postings`` and ``documents.len_*``."""


@record
class SyncReport:
    """What a sync did.

    Attributes:
        added, changed, removed, unchanged: source files in each state.
        moved: of ``added`` and ``removed``, the notes moved to another folder (a folder renamed) with their name, type
            and bytes, whose documents were kept under the new path (rows and vectors; each is one added and one
            removed file as well).
        documents: documents in the index afterwards.
        elapsed_ms: wall time (ms).
        warnings: one line per file that could only be partly indexed.
        rebuilt: an index that held files was rebuilt from scratch (``force``, a new analyzer or parser).
        vault: the synced vault's folder (its ``_dream_context``, absolute), as :meth:`dreamdb.api.Index.sync` sets it
            (``None`` from :func:`sync` itself): :meth:`dreamdb.multi.MultiIndex.sync` leaves a vault gone out, and
            its reports named no vault (QA round 155-E F3).
    """

    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    moved: int = 0
    documents: int = 0
    elapsed_ms: float = 0.0
    warnings: list[str] = factory(list)
    rebuilt: bool = False
    vault: str | None = None

    @property
    def touched(self) -> bool:
        """True when the index content changed."""
        return bool(self.added or self.changed or self.removed or self.rebuilt)

    def as_dict(self) -> dict:
        """JSON-ready mapping."""
        return {
            "added": self.added, "changed": self.changed, "removed": self.removed, "unchanged": self.unchanged,
            "moved": self.moved,
            "documents": self.documents, "elapsed_ms": round(self.elapsed_ms, 2), "warnings": self.warnings,
            "rebuilt": self.rebuilt, "vault": self.vault,
        }


def iso_to_days(value: str | None) -> float | None:
    """ISO-8601 date or instant → days since 1970-01-01 UTC (float), ``None`` if unparsable. ``sync --check``
    computes the stored ``date_days`` and ``expires_days`` again from the stored text with it and
    :func:`expires_to_days` (:func:`dreamdb.store.texts.document_text_problems`): a change to either changes what
    an index synced before it is found to be (bump :data:`dreamdb.vault.PARSER_VERSION`)."""
    if not value:
        return None
    text = str(value).strip().replace("Z", "+00:00")
    for candidate in (text, text[:10]):
        try:
            dt = datetime.fromisoformat(candidate)
        except ValueError:
            continue
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        return dt.timestamp() / 86400.0
    return None


def expires_to_days(value: str | None) -> float | None:
    """When a document's ``expires`` passes (days since 1970-01-01 UTC), ``None`` if unparsable: an instant as
    written; a date alone at the end of that day, as ``--until`` reads one (QA round 48: ``expires: 2026-08-10``
    had expired at 00:00 that day)."""
    days = iso_to_days(value)
    if days is not None and len(str(value).strip()) == 10:  # YYYY-MM-DD
        days += 1.0
    return days


def _stored_state(conn) -> dict[str, tuple[int, int, str, int | None]]:
    """``{path: (mtime_ns, size, sha256, ctime_ns)}`` of the files as last synced."""
    return {row[0]: row[1:] for row in conn.execute("SELECT path, mtime_ns, size, sha256, ctime_ns FROM files")}


def _plan(sources: list[SourceFile], stored: dict, vault: Path) -> tuple[list[SourceFile], list[str], int]:
    candidates = []
    unchanged = 0
    for s in sources:
        old = stored.get(s.rel_path)
        if old is not None and old[0] == s.mtime_ns and old[1] == s.size and old[3] == s.ctime_ns:
            unchanged += 1
        else:
            candidates.append(s)
    present = {s.rel_path for s in sources}
    removed = [p for p in stored if p not in present and _gone(vault, p)]
    return candidates, removed, unchanged


def _gone(vault: Path, rel_path: str) -> bool:
    """Whether a stored path the walk did not list is gone from the vault. A Python that reads names as ASCII
    cannot name one a UTF-8 Python indexed (its walk skips such a note, with a warning): it is looked for by its
    UTF-8 bytes, kept while it is there, removed once it is not (QA round 101-A F4: a deleted one stayed)."""
    try:
        os.fsencode(rel_path)
    except UnicodeEncodeError:
        return not os.path.lexists(os.fsencode(str(vault)) + b"/" + rel_path.encode("utf-8"))
    return True


_STORED_STATS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""``{connection: (probe, rows)}``: the stored stats :func:`_fast_unchanged` compares (:func:`_stored_stats`), kept
while the index is unchanged. Reading them for every recall was a third of the no-change sync's time (148 files and
36 folders of the real vault: ≈ 0.2 ms of ≈ 0.7 ms), as much as half the ranking that follows it."""
STORED_STATS_KEPT_MAX = 10_000
"""Files of an index whose stored stats :data:`_STORED_STATS` keeps, at most (≈ 300 bytes each: 3 MB); a larger
index's are read each time, a few ms beside its tens of ms of stats."""


def _stored_stats(conn, vault: Path, include_archives: bool) -> tuple[list, list] | None:
    """What the no-change fast path stats: ``([(folder path, mtime_ns, ctime_ns)], [(file path, mtime_ns, size,
    ctime_ns)])`` with absolute paths, or ``None`` when the index holds no folder, or was indexed in another format or
    archive setting (no fast path). Read once per index state: kept (:data:`_STORED_STATS`) until another connection
    commits (``PRAGMA data_version``) or this one writes (``total_changes``), as the memory engine's caches are; those
    of more than :data:`STORED_STATS_KEPT_MAX` files, or of a connection that cannot be referenced weakly (not dreamdb's
    own), are read each time."""
    key = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes, str(vault), include_archives)
    try:
        kept = _STORED_STATS.get(conn)
    except TypeError:
        kept = None
    if kept is not None and kept[0] == key:
        return kept[1]
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('analyzer_version', 'include_archives')").fetchall())
    rows = None
    if meta.get("analyzer_version") == INDEX_FORMAT and meta.get("include_archives") == str(int(include_archives)):
        base = str(vault) + os.sep  # stored paths are relative and '/'-separated; concatenation is ~20 % cheaper than os.path.join
        dirs = [(base + path, m, c) for path, m, c in conn.execute("SELECT path, mtime_ns, ctime_ns FROM dirs")]
        if dirs:
            rows = dirs, [(base + path, m, size, c)
                          for path, m, size, c in conn.execute("SELECT path, mtime_ns, size, ctime_ns FROM files")]
    if rows is None or len(rows[1]) <= STORED_STATS_KEPT_MAX:
        with suppress(TypeError):
            _STORED_STATS[conn] = (key, rows)
    return rows


def _fast_unchanged(conn, vault: Path, include_archives: bool) -> int | None:
    """The no-change fast path: stat only the known files and folders (:func:`_stored_stats`).

    Returns the number of files when every stored file and folder still has
    its recorded stat (nothing added, removed or edited), else ``None``.
    """
    rows = _stored_stats(conn, vault, include_archives)
    if rows is None:
        return None
    dirs, files = rows
    stat = os.stat
    try:
        for path, mtime_ns, ctime_ns in dirs:
            st = stat(path)
            # (its change time too: a folder's modification time set back hid a note added to it, QA round 93-A F4)
            if st.st_ctime_ns != ctime_ns or st.st_mtime_ns != mtime_ns:
                return None
        for path, mtime_ns, size, ctime_ns in files:
            st = stat(path)
            if st.st_mtime_ns != mtime_ns or st.st_size != size or st.st_ctime_ns != ctime_ns:
                return None  # (a time past SQLite's range, stored clamped, takes the walk: vanishingly rare)
    except (OSError, UnicodeEncodeError):
        # (UnicodeEncodeError: a name the index holds in UTF-8 that a Python reading names as ASCII cannot pass to
        # the system, QA round 100 (own finding): exit 70 "internal error" for every sync; the walk tells those apart)
        return None
    return len(files)


MANY_DOCUMENT_KINDS = ("changelog", "memory")
"""The kinds of file holding many documents (``core/CHANGELOG.json``'s entries, ``core/2.memory.md``'s sections), whose
unchanged documents keep their rows when the file changes (:func:`_replace_file`): one entry added to the real vault's
824 KB CHANGELOG.json re-indexes that entry, 78 ms of CPU where its first sync takes 0.58 s (``scripts/bench_ops.py
--only hook-sync``)."""


def files_to_index(conn, vault: Path, *, include_archives: bool = False) -> tuple[int, int, int] | None:
    """``(files, new bytes, bytes read)`` of the next sync's work: the files new or changed (by their stat) since the
    last sync, and those removed (QA round 109-A F9: 30,000 notes moved out took a prompt 5.6 s); the bytes of text the
    sync analyses anew, each new or changed file's size but for a changed file of :data:`MANY_DOCUMENT_KINDS` that grew
    since the last sync, counted by what it grew (taken for entries appended: the others keep their rows); and the new
    or changed files' whole size, which the sync reads. A changed file of those kinds that did not grow (as large or
    smaller: its entries edited, reordered or removed) counts whole: QA round 154-G F2, a 3.5 MB CHANGELOG.json with a
    word of every entry replaced, its size the same, counted 0 bytes and held a prompt 3.9 s. What still slips is a file
    that grew and was also edited: only its growth counts (only a parse, which this stat-only count does not make, could
    tell its edited entries). ``None`` when the no-change fast path finds nothing changed, none removed either, so that
    no sync is needed (stat only, no lock, nothing written)."""
    if _fast_unchanged(conn, vault, include_archives) is not None:
        return None
    stored = _stored_state(conn)
    candidates, removed, _ = _plan(walk_sources(vault, include_archives=include_archives), stored, vault)
    new = 0
    for src in candidates:
        old = stored.get(src.rel_path)
        kept = old is not None and src.kind in MANY_DOCUMENT_KINDS and old[2] != UNREADABLE
        new += src.size - old[1] if kept and src.size > old[1] else src.size
    return len(candidates) + len(removed), new, sum(src.size for src in candidates)


def needs_sync(conn, vault: Path, *, include_archives: bool = False) -> bool:
    """Cheap check (stat only, no lock): does the index differ from the vault?"""
    candidates, removed, _ = _plan(walk_sources(vault, include_archives=include_archives), _stored_state(conn), vault)
    return bool(candidates or removed) or whole_index_due(conn)


def stored_index_format(conn) -> str | None:
    """The index format the index's files were indexed in (``meta.analyzer_version``; compare with
    :data:`INDEX_FORMAT`), ``None`` when none is recorded (a new index). One ``meta`` row.

    Raises:
        sqlite3.DatabaseError: the index cannot be read.
    """
    row = conn.execute("SELECT value FROM meta WHERE key = 'analyzer_version'").fetchone()
    return None if row is None else row[0]


def whole_index_due(conn) -> bool:
    """Whether the next sync indexes every file again: the index holds none yet (new, or rebuilt after damage),
    or its files were indexed by another analyzer or parser (an upgrade). Cheap: one ``meta`` row."""
    stored = stored_index_format(conn)
    return stored is None or stored != INDEX_FORMAT


UNREADABLE = "unreadable"
"""``files.sha256`` of a file the sync could not read, or read nothing from (binary, a CHANGELOG.json that is not
JSON): it has no documents."""


FRONTMATTER_UNREAD_KEY = "frontmatter_unread"
"""``meta`` key: a JSON object ``{vault-relative path: the sync's warning}`` of the notes indexed without their
frontmatter (it could not be read: bad YAML, a merge conflict, too large, not closed), kept until the file is fixed or
removed (:func:`frontmatter_unread`)."""


TEXT_REPLACED_KEY = "text_replaced"
"""``meta`` key: a JSON object ``{vault-relative path: the sync's warning}`` of the files indexed with undecodable
bytes replaced (not UTF-8: a note saved in cp1252), kept until the file is fixed or removed (:func:`text_replaced`)."""


TEXT_CUT_KEY = "text_cut"
"""``meta`` key: a JSON object ``{vault-relative path: the sync's warnings}`` of the files indexed in part for their
size (a note past its first 4 Mi characters, :data:`dreamdb.vault.parse.MAX_NOTE_CHARS`; a section of the memory file
as long; a frontmatter block longer than that), kept until the file is cut down or removed (:func:`text_cut`). A file
cut in more than one way (a frontmatter block longer than that and as much text after it; two sections) has each
warning, one a line (:func:`dreamdb.vault.parse.cut_kinds`)."""


def frontmatter_unread(conn) -> dict[str, str]:
    """``{vault-relative path: why}`` of the notes the index holds without their frontmatter (their title, dates, tags
    and flags unknown), as the syncs that read them warned (QA round 119-B F2: said by one sync only, then nowhere,
    while a note whose ``expires`` was lost came back in every recall)."""
    return _kept_warnings(conn, FRONTMATTER_UNREAD_KEY)


def text_replaced(conn) -> dict[str, str]:
    """``{vault-relative path: why}`` of the files the index holds with undecodable bytes replaced by U+FFFD, as the
    syncs that read them warned (QA round 130-C F10: said by the first sync only, while every snippet showed ``�``)."""
    return _kept_warnings(conn, TEXT_REPLACED_KEY)


def text_cut(conn) -> dict[str, str]:
    """``{vault-relative path: why}`` of the files the index holds in part for their size (their text past the first
    4 Mi characters left out, or a frontmatter block longer than that), as the syncs that read them warned (QA round
    153-C F2: said by the sync that read the file only; status and recall said nothing of it afterwards); ``why``
    holds each of a file's warnings, one a line (:data:`TEXT_CUT_KEY`)."""
    return _kept_warnings(conn, TEXT_CUT_KEY)


def _kept_warnings(conn, key: str) -> dict[str, str]:
    """The ``{path: warning}`` object ``meta`` holds under ``key`` (:data:`FRONTMATTER_UNREAD_KEY`,
    :data:`TEXT_REPLACED_KEY`, :data:`TEXT_CUT_KEY`); ``{}`` for none, or for a value that is no such object."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    try:
        data = json.loads(row[0]) if row else {}
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}


def _save_kept_warnings(conn, key: str, kept: dict[str, str]) -> None:
    if kept:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                     (key, json.dumps(dict(sorted(kept.items())), ensure_ascii=False)))
    else:
        conn.execute("DELETE FROM meta WHERE key = ?", (key,))


def unreadable_paths(conn) -> list[str]:
    """Vault-relative paths of the files the last syncs could not read, in path order (``status`` and the notes on an
    empty index name them)."""
    return [p for (p,) in conn.execute("SELECT path FROM files WHERE sha256 = ? ORDER BY path", (UNREADABLE,))]


CLOCK_FILE_NAME = "sync.clock"
"""The empty file beside the index whose time :func:`file_system_clock` sets and reads."""


def file_system_clock(conn) -> int | None:
    """The file system's time now (ns since 1970), as it stamps files: the change time of a file beside the index
    (:data:`CLOCK_FILE_NAME`), touched; ``None`` where there is none to touch (an index in memory, a folder that
    cannot be written).

    A file's (mtime, size, ctime) tells its content apart only between two ticks of the file system's clock: two
    writes of the same size within one tick (4 ms on a kernel of coarse timestamps at HZ=250, 10 ms for the change
    times of exFAT and vfat, 1 s on HFS+ or ext3, 2 s for FAT's modification times) leave the same stat. A file
    whose change time is this clock's or later when its stat is taken may so be written again with nothing a later
    stat would show: it is "racily clean", as git names it, and git's answer is dreamdb's (git's
    ``Documentation/technical/racy-git.txt``): such a file's stat is stored without its change time, so the next
    sync reads and hashes it again (once: by then the clock has moved on). The clock is read from the file system,
    not ``time.time_ns()``, so that its tick is the one files get.
    """
    try:
        row = conn.execute("PRAGMA database_list").fetchone()
    except OperationalError:
        return None
    if not row or not row[2]:
        return None
    path = os.path.join(os.path.dirname(row[2]), CLOCK_FILE_NAME)
    try:
        # (O_NONBLOCK: a pipe of that name, with no reader, fails at once rather than wait forever; QA round 103-C F1)
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    try:
        if not S_ISREG(os.fstat(fd).st_mode):  # (a pipe with a reader, or a device: no clock to read)
            return None
        if os.utime in os.supports_fd:
            os.utime(fd)
        else:  # pragma: no cover - every POSIX system dreamdb runs on takes a descriptor
            os.utime(path)
        return os.fstat(fd).st_ctime_ns
    except OSError:
        return None
    finally:
        os.close(fd)


def forget_stats(conn) -> None:
    """Make the next :func:`sync` read and hash every file again, trusting no stored stat (``sync --check``): a
    file whose content changed with nothing its stat shows (a clock or a tool that set times back, a file system
    whose times are coarser than its edits) is then found by its hash, where the stat pre-filter cannot tell
    (QA round 93-A F5: stale text and ``sync --check`` said ok). Files whose hash is unchanged are not parsed."""
    with write_transaction(conn):
        conn.execute("UPDATE files SET ctime_ns = NULL")


def _documents_lost(conn, src, raw: bytes, size: int, held: set[str]) -> bool:
    """Whether a file whose content is as indexed holds documents of which the index has none: rows another program
    deleted (with its foreign keys on, their postings and chunks went too, so nothing else disagrees; QA round 97-B
    F1: ``sync --check`` said ok, and the note was never found). Asked only of files whose stat is not trusted
    (every file under ``sync --check``, :func:`forget_stats`; racy files), and parsed only when the index holds
    none of their documents (an empty CHANGELOG.json, so each check)."""
    if not held:  # (read once a sync, when first asked: ``held`` is filled with the files that have documents)
        held.update(p for (p,) in conn.execute("SELECT DISTINCT source_path FROM documents"))
        held.add("")  # (filled, even for an index with no documents)
    if src.rel_path in held:
        return False
    from dreamdb.vault.parse import parse_file

    return bool(parse_file(src.rel_path, src.kind, src.type, raw, size=size)[0])


COARSE_TICK_NS = 2_000_000_000
"""The clock tick assumed for a file whose change time is a whole second (ns): a file system of whole seconds
(ext4 with 128-byte inodes, HFS+) or of two (FAT). The index's clock (:func:`file_system_clock`) may tick in ns on
another file system (a ``.dreamdb`` link, ``DREAMDB_INDEX``), where such a file's time, rounded down, always looks
older than the clock: two edits within one second read as one (QA round 93-A F1)."""


def _tick_of(ctime_ns: int) -> int:
    """The clock tick a change time shows (ns): :data:`COARSE_TICK_NS` for a whole second, else the coarsest of 100 ms,
    10 ms and 1 ms it is a multiple of (exFAT and vfat stamp change times in 10 ms: QA round 101-B F2), else 0 (a time
    of a fine clock; one of them a multiple of 1 ms by chance is read again once more, no harm)."""
    if ctime_ns % 1_000_000_000 == 0:
        return COARSE_TICK_NS
    return next((tick for tick in (100_000_000, 10_000_000, 1_000_000) if ctime_ns % tick == 0), 0)


def is_racy(ctime_ns: int, clock: int) -> bool:
    """Whether a file or folder whose change time is ``ctime_ns`` may change again with the same stat after the clock
    read ``clock`` (ns, :func:`file_system_clock`): its tick has not ended by then. A change time rounded to a tick
    (:func:`_tick_of`: a whole second, 10 ms…) is taken as the start of that tick, which the clock, on a finer file
    system, may read as long past."""
    tick = _tick_of(ctime_ns)
    return ctime_ns > clock - tick if tick else ctime_ns >= clock


def _refuse_unreadable_vault(vault: Path) -> None:
    """Raise :meth:`VaultNotFound.unreadable` when the vault folder itself cannot be listed and entered now: a walk of
    it finds no file, and the sync would have removed every document (QA round 114-A F5: the vault of a live Index
    made unreadable emptied its index, embeddings' chunks and all). A folder inside it that cannot be read is
    skipped, with a warning (its notes leave the index until it can be read again)."""
    from dreamdb.errors import VaultNotFound

    try:
        if os.access(vault, os.R_OK | os.X_OK):
            with os.scandir(vault) as entries:
                next(entries, None)
            return
    except FileNotFoundError:  # (gone: the walk says so)
        return
    except PermissionError:
        pass
    except OSError:
        return
    if os.path.isdir(vault):
        raise VaultNotFound.unreadable(vault)


def _record_moved_vault(conn, vault: Path) -> None:
    """Record ``vault`` as the index's vault (``meta.vault``) after a sync that found nothing to change, when the index
    records another folder: the vault was moved or renamed with its index, its files' stats the same. (A sync that
    changes the index records it with its changes.) An Index that does not sync before its reads syncs one recording
    another vault (QA round 132-B F3), and would otherwise sync it at every open."""
    from dreamdb.config import recorded_vault

    row = conn.execute("SELECT value FROM meta WHERE key = 'vault'").fetchone()
    if row is not None and recorded_vault(row[0], vault) != "ours":
        with write_transaction(conn):
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('vault', ?)", (str(vault),))


def sync(conn, vault: Path, *, include_archives: bool = False, force: bool = False, progress=None) -> SyncReport:
    """Bring the index in line with the vault (see module docstring).

    Args:
        conn: connection from :func:`dreamdb.store.connect.connect`, migrated.
        vault: vault root.
        include_archives: index dot-folders too.
        force: re-parse every file even if unchanged.
        progress: optional callable ``(done, total)`` for a progress bar.

    Returns:
        SyncReport.

    Raises:
        LockTimeout: another process held the write lock too long.
        VaultNotFound: the vault folder no longer exists, or cannot be read (the index is left untouched).
    """
    t0 = time.perf_counter()
    report = SyncReport()
    if not force:
        n = _fast_unchanged(conn, vault, include_archives)
        if n is not None:
            _record_moved_vault(conn, vault)
            report.unchanged = n
            report.documents = corpus_stats(conn)["n_docs"]
            report.elapsed_ms = (time.perf_counter() - t0) * 1000
            return report
    warnings: list[str] = []
    dirs: dict[str, tuple[int, int | None]] = {}
    _refuse_unreadable_vault(vault)
    clock = file_system_clock(conn)  # (before the walk: what changes from now on may share a stat with what it reads)
    sources = walk_sources(vault, include_archives=include_archives, warn=warnings.append, dirs=dirs)
    racy = {s.rel_path for s in sources if clock is not None and is_racy(s.ctime_ns, clock)}
    if clock is not None:  # (a folder too: a note added to it within the tick would leave its stat as it is)
        dirs.update((d, (m, None)) for d, (m, c) in list(dirs.items()) if c != -1 and is_racy(c, clock))
    if not sources and not os.path.isdir(vault):
        # A vault moved or deleted while an Index on it stays open would read as an empty vault and
        # empty the index (its chunks and vectors with it); the index is kept for the vault's return.
        from dreamdb.errors import VaultNotFound

        raise VaultNotFound.gone(vault)
    rebuild = force or whole_index_due(conn)
    candidates, removed, unchanged = _plan(sources, _stored_state(conn), vault)
    if not (candidates or removed or rebuild):
        if _dirs_changed(conn, dirs, include_archives):
            with write_transaction(conn):
                _save_dirs(conn, dirs, include_archives)
        _record_moved_vault(conn, vault)
        report.unchanged = unchanged
        report.documents = corpus_stats(conn)["n_docs"]
        report.warnings = warnings
        report.elapsed_ms = (time.perf_counter() - t0) * 1000
        return report
    bulk = True
    while True:
        report = SyncReport(rebuilt=rebuild)
        run_warnings = list(warnings)
        try:
            _apply(conn, vault, sources, dirs, include_archives, rebuild=rebuild, force=force, bulk=bulk,
                   report=report, warnings=run_warnings, progress=progress, racy=racy)
            break
        except _Replan as replan:  # another process changed the index while this one waited for the lock
            rebuild = replan.rebuild
        except OperationalError as exc:
            if not (bulk and "full" in str(exc)):
                raise
            bulk = False  # the sorted bulk load needs temp space (SQLITE_TMPDIR); row by row needs little
    report.documents = corpus_stats(conn)["n_docs"]
    report.warnings = run_warnings
    report.elapsed_ms = (time.perf_counter() - t0) * 1000
    return report


class _Replan(Exception):
    """Raised inside a sync's transaction (rolling it back) when, under the lock, the index needs
    the other kind of sync than the one prepared for (a rebuild done or made necessary meanwhile)."""

    def __init__(self, rebuild: bool) -> None:
        super().__init__(rebuild)
        self.rebuild = rebuild


def _apply(conn, vault: Path, sources: list, dirs: dict, include_archives: bool, *, rebuild: bool, force: bool,
           bulk: bool, report: SyncReport, warnings: list, progress, racy: set = frozenset()) -> None:
    """One write transaction of :func:`sync`: empty the index if rebuilding, then write the changes.

    A rebuild empties every table derived from the vault. With foreign keys off SQLite empties
    a table by dropping its pages (the truncate optimisation) instead of deleting row by row
    through the cascade: 0.2 s instead of 40-70 s for the 3.2 M postings of a 20,000-document
    vault. The pragma is a no-op inside a transaction, so it is set before BEGIN; if under the
    lock the decision turns out stale (another process rebuilt, or upgraded the analyzer),
    :class:`_Replan` rolls back so the caller runs the other kind of sync, with foreign keys
    off exactly when it rebuilds.
    """
    if rebuild:
        conn.execute("PRAGMA foreign_keys = OFF")
    try:
        with write_transaction(conn):
            if (force or whole_index_due(conn)) != rebuild:  # re-check under the lock
                raise _Replan(not rebuild)
            state = _stored_state(conn)  # (read once: QA round 127-C F2, three times a sync)
            known = set(state)  # before a rebuild empties it: re-indexed files count as changed
            held, before = None, None
            if rebuild:
                # the ids files held, so a rebuild guards those that pass to another file as a sync does (QA 42)
                marks = ", ".join("?" for _ in NAMED_BY_SECTION)
                held = dict(conn.execute(f"SELECT doc_id, source_path FROM documents WHERE type NOT IN ({marks})",
                                         NAMED_BY_SECTION))
                if known and not force:  # (an upgrade: json.md's `rebuilt` says warnings name it; QA round 86-B F2)
                    stored = stored_index_format(conn)
                    if stored is not None and stored != INDEX_FORMAT:
                        warnings.append(_other_format_warning(stored, INDEX_FORMAT in formats_written(conn)))
                _truncate_vault_tables(conn)
                state, before = {}, state
            report.rebuilt = rebuild and bool(known)  # a first sync builds; it rebuilds nothing
            _write_changes(conn, vault, sources, dirs, include_archives, known, state, report, warnings, progress,
                           bulk=bulk, held=held, racy=racy, before=before)
            if rebuild:  # files gone since the last sync (the emptied index listed none as removed: QA 42)
                report.removed += len(known - {src.rel_path for src in sources})
    finally:
        if rebuild:
            conn.execute("PRAGMA foreign_keys = ON")


def _format_key(value: str) -> tuple[int, ...] | None:
    """An index format (``21.17.11``: analyzer, parser, schema version) as numbers to compare, None if it is none."""
    try:
        return tuple(int(p) for p in value.split("."))
    except (ValueError, AttributeError):
        return None


FORMATS_WRITTEN_KEY = "formats_written"
"""``meta`` key: the index formats that last synced the index, oldest first, comma-separated (at most
:data:`FORMATS_WRITTEN_MAX`): a format met again after another's shows two versions taking turns on the vault."""
FORMATS_WRITTEN_MAX = 8


def formats_written(conn) -> list[str]:
    """The index formats of the dreamdb versions that synced this index, oldest first (:data:`FORMATS_WRITTEN_KEY`;
    versions before 0.3.7 did not record theirs)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (FORMATS_WRITTEN_KEY,)).fetchone()
    return [f for f in (row[0] if row and isinstance(row[0], str) else "").split(",") if f]


def _record_format(conn) -> None:
    """Add this version's index format to :func:`formats_written` (once in a row)."""
    history = formats_written(conn)
    if history[-1:] != [INDEX_FORMAT]:
        history = [*history, INDEX_FORMAT][-FORMATS_WRITTEN_MAX:]
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (FORMATS_WRITTEN_KEY, ",".join(history)))


NFC_FORMAT = "21.40.18"
"""The index format of dreamdb 0.3.19, the first whose embedder puts every text in composed Unicode form (NFC) before
its tokenizer (QA round 149-C F1). A version of an older format embedded a chunk text written decomposed (NFD) as
written, into another vector (cosine 0.934 with the composed text's for a Turkish note), which later versions kept:
vectors are keyed by the hash of the chunk text, which stayed as written (QA round 157-B F1)."""

NFC_VECTORS_KEY = "nfc_vectors"
"""``meta`` key: ``due`` while the vectors of chunk texts not in NFC, which a version before 0.3.19 may have computed
(:func:`vectors_before_nfc`), wait to be deleted, ``done`` once they were (the refresh after it embeds those texts
again: :func:`dreamdb.embeddings.store.drop_vectors_before_nfc`) or when none can have been. Set by this version's
first writing sync of an index (before the sync adds its format to :func:`formats_written`), or by its first refresh;
missing: neither has run yet. Once ``done``, never looked at again."""


def vectors_before_nfc(conn) -> bool:
    """Whether the index may hold vectors a dreamdb before 0.3.19 (:data:`NFC_FORMAT`) computed: it holds vectors, and
    :func:`formats_written` names a format older than that (or one that is no format), or none (an index no version
    since 0.3.7 synced: they recorded none), or as many as it keeps (:data:`FORMATS_WRITTEN_MAX`: an older one may
    have been left out). A fresh index, or one only versions since 0.3.19 synced, holds none. Reads neither the
    vectors nor :data:`NFC_VECTORS_KEY`."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embeddings'").fetchone() is None:
        return False  # (migration 002 pending: no vector was ever stored)
    if not conn.execute("SELECT EXISTS (SELECT 1 FROM embeddings)").fetchone()[0]:
        return False
    history = formats_written(conn)
    if not history or len(history) >= FORMATS_WRITTEN_MAX:
        return True
    first = _format_key(NFC_FORMAT)
    return any(key is None or (len(key) == len(first) and key < first) for key in map(_format_key, history))


def nfc_vectors_due(conn) -> bool:
    """Whether the vectors of chunk texts not in NFC wait to be deleted (:data:`NFC_VECTORS_KEY` ``due``, or missing
    and :func:`vectors_before_nfc`). One ``meta`` row once decided."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (NFC_VECTORS_KEY,)).fetchone()
    if row is not None:
        return row[0] != "done"
    return vectors_before_nfc(conn)


def _decide_nfc_vectors(conn) -> None:
    """Set :data:`NFC_VECTORS_KEY` at this version's first writing sync of the index, before :func:`_record_format`
    (an index no version since 0.3.7 synced records no format until then, and would pass for a new one's). One
    ``meta`` row once it is set."""
    if conn.execute("SELECT 1 FROM meta WHERE key = ?", (NFC_VECTORS_KEY,)).fetchone() is None:
        conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)",
                     (NFC_VECTORS_KEY, "due" if vectors_before_nfc(conn) else "done"))


def _other_format_warning(stored: str, written_before: bool = False) -> str:
    """The warning of a rebuild for an index of another format: one of a newer dreamdb is said to be newer (QA round
    100-A F2: a hook of an older install and a newer command line on one vault rebuilt it in turn, every time); one
    this version had written before, and another version since, is said to be two versions taking turns (QA round
    115-B F1: each re-indexed the whole vault on every switch, 2-4 s a call, and this one said only "another version")."""
    ours, theirs = _format_key(INDEX_FORMAT), _format_key(stored)
    stored = stored or "unknown"  # (a format NULL or '', of a hand-edited index: "index format None", QA round 122-B F7)
    newer = ours is not None and theirs is not None and len(ours) == len(theirs) and theirs > ours
    if written_before:  # (first: the older of two versions taking turns said only "newer", QA round 132-E F6)
        return (f"the index was indexed by {'a newer' if newer else 'another'} version of dreamdb (index format "
                f"{stored}) since this one (format {INDEX_FORMAT}) last synced it: every file indexed again (stored "
                "embeddings are kept); two versions taking turns on a vault (a prompt hook of another install?) index "
                "it whole at every switch: use one version (dreamdb --version; dreamdb hook install --absolute points "
                "the hook at this one)")
    if newer:
        return (f"the index was built by a newer version of dreamdb (index format {stored}, this one writes "
                f"{INDEX_FORMAT}): every file indexed again in this version's format (stored embeddings are kept); the "
                "newer version indexes it again when it next runs: use one version on a vault (dreamdb --version)")
    return (f"the index was built by another version of dreamdb (index format {stored}, this one writes "
            f"{INDEX_FORMAT}): every file indexed again (stored embeddings are kept)")


def _cascade_tables(conn, root: str = "files") -> list[str]:
    """``root`` and every table that references it through ``ON DELETE CASCADE`` chains, children first.

    Read from the schema (``PRAGMA foreign_key_list``), so a table a later migration hangs
    under ``documents`` is emptied too.
    """
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%REFERENCES%'")]
    children: dict[str, list[str]] = {}
    for t in tables:
        for fk in conn.execute(f'PRAGMA foreign_key_list("{t}")'):
            if fk[6].upper() == "CASCADE":  # (id, seq, table, from, to, on_update, on_delete, match)
                children.setdefault(fk[2], []).append(t)
    order: list[str] = []

    def visit(t: str) -> None:
        for c in children.get(t, ()):
            if c not in order and c != t:
                visit(c)
        if t not in order:
            order.append(t)

    visit(root)
    return order


def _truncate_vault_tables(conn) -> None:
    """Empty ``files`` and everything cascading from it (foreign keys must be off; see :func:`sync`)."""
    for t in _cascade_tables(conn):
        conn.execute(f'DELETE FROM "{t}"')


def _write_changes(conn, vault: Path, sources: list, dirs: dict, include_archives: bool, known: set, stored: dict,
                   report: SyncReport, warnings: list, progress, *, bulk: bool = True, held: dict | None = None,
                   racy: set = frozenset(), before: dict | None = None) -> None:
    """The body of a sync's write transaction: re-index candidates, drop removed files, refresh stats.

    ``stored``: :func:`_stored_state` of the index as this transaction found it (empty after a rebuild emptied it).
    ``held``: ``{doc_id: vault-relative path}`` of the markdown documents before a rebuild emptied the index.
    ``before``: :func:`_stored_state` before a rebuild emptied the index (its notes moved since are told by it).
    ``racy``: paths whose stat the file system may give again to a later edit (:func:`file_system_clock`): their
    stored change time is left NULL, so the next sync reads them again."""
    import sys
    from hashlib import sha256  # hashing and YAML only when something changed

    if "dreamdb.vault.parse" not in sys.modules:  # (its rules are those of INDEX_FORMAT only if it is this version's)
        from dreamdb.reinstall import require_same_install

        require_same_install()
    from dreamdb.vault.parse import (frontmatter_unread as unread_because, note_read_limit, parse_file,
                                     text_cut as cut_because, text_replaced as replaced_because)

    # the warnings kept for status (meta key → which of a file's warnings, without its path), and what the index
    # holds of them: {meta key: {path: warning}}, read at the first change (a rebuild reads every file)
    because = {FRONTMATTER_UNREAD_KEY: unread_because, TEXT_REPLACED_KEY: replaced_because, TEXT_CUT_KEY: cut_because}
    kept_by_key: dict[str, dict[str, str]] | None = {key: {} for key in because} if held is not None else None

    def kept_warnings() -> dict[str, dict[str, str]]:
        nonlocal kept_by_key
        if kept_by_key is None:
            kept_by_key = {key: _kept_warnings(conn, key) for key in because}
        return kept_by_key

    def note_kept(path: str, file_warnings=()) -> None:
        for key, found in kept_warnings().items():
            # each of them, one a line (QA round 154-A F2: a note whose frontmatter and text were both cut was kept
            # by its first warning, and listed by status as if its text were found whole)
            why = "\n".join(w for w in (because[key](w, path) for w in file_warnings) if w)
            if why:
                found[path] = why
            else:
                found.pop(path, None)
    candidates, removed, report.unchanged = _plan(sources, stored, vault)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    postings = BulkPostings(conn) if bulk and BulkPostings.wanted(conn) else None
    touched: set[str] = set()  # own ids of markdown files whose documents came or went (number_same_names)
    new_paths: set[str] = set()
    # id → path: the ids markdown files re-indexed or removed by this sync held before it (an id may pass to
    # another file; number_same_names records it)
    held_before: dict[str, str] = dict(held or {})
    reread: set[str] = set()  # files whose stat is not to be trusted by the next sync (see racy)
    with_documents: set[str] = set()  # files that have documents in the index, read when first needed (_documents_lost)

    def note_held(path: str) -> None:
        held_before.update((doc_id, path) for doc_id, in conn.execute(
            "SELECT doc_id FROM documents WHERE source_path = ?", (path,)))

    gone_as = _moved_from_candidates(removed, stored)  # (type, name, sha256) → removed paths: a note moved unchanged
    moved_away: set[str] = set()
    # a rebuild re-indexes every note, but one moved since the last sync holds the ids it held (QA round 146-C F2)
    rebuilt_moves = (_moved_from_candidates(sorted(set(before) - {s.rel_path for s in sources}), before)
                     if before else {})
    for i, src in enumerate(candidates):
        if progress:
            progress(i, len(candidates))
        try:
            # (a regular file, or OSError: QA round 59 M1); of a note, only the bytes it is indexed up to are kept,
            # all of them hashed (QA round 148-C F5: one of 300 MB took 644 MB to sync, 332 MB to check)
            if src.kind == "markdown":
                raw, sha, size = read_head(vault / src.rel_path, note_read_limit)
            else:
                raw = read_source(vault / src.rel_path)
                sha, size = sha256(raw).hexdigest(), len(raw)
            st = os.stat(vault / src.rel_path)
            if (stamp(st.st_mtime_ns), st.st_size, stamp(st.st_ctime_ns)) != (src.mtime_ns, src.size, src.ctime_ns):
                # Not the file the walk saw (edited meanwhile, or another in its place for a moment: the vault swapped
                # for a copy): what was read is stored with the walk's stat but no change time, so the next sync reads
                # it again (QA round 88 B2: the copy's text was kept for good once the real file came back)
                reread.add(src.rel_path)
        except OSError as exc:
            if isinstance(exc, (FileNotFoundError, NotADirectoryError)) or exc.errno == errno.ELOOP:
                # Its path gone between the walk and the read (deleted; its folder moved away, perhaps and back, or
                # replaced for a moment by a file or a link loop): nothing is written for it, so the documents indexed
                # before stay, and its folder is recorded as unscanned, so the next sync walks the vault again (no
                # folder's time need change: the vault itself moved away and back) and reads it if it is there.
                # (QA round 86-A H1, 87 H1-H2: its row was stored as unreadable with the walk's stat, which a folder
                # moved back gives again, so every later sync took it for unchanged: notes, a whole CHANGELOG, lost.)
                warnings.append(f"{src.rel_path}: removed while the sync ran; not read (the next sync reads it "
                                "again if it is back)")
                dirs[os.path.dirname(src.rel_path) or "."] = UNSCANNED
                continue
            denied = isinstance(exc, PermissionError)  # (a loop, another error: not kept)
            kept = conn.execute("SELECT COUNT(*) FROM documents WHERE source_path = ?",
                                (src.rel_path,)).fetchone()[0] if denied and src.rel_path in stored else 0
            if kept:
                # As a file that broke: its last documents stay, and (its stat not stored) every sync reads it
                # again and says so until it is readable or deleted (QA round 69 H1: they went silently)
                warnings.append(f"{src.rel_path}: cannot read ({exc.strerror or exc}); kept the {kept} document"
                                f"{'s' if kept != 1 else ''} indexed before; fix its permissions to update them")
                report.unchanged += 1
                continue
            warnings.append(f"{src.rel_path}: cannot read ({exc.strerror or exc}); not indexed")  # (QA 69 E-L4)
            reread.add(src.rel_path)
            old = stored.get(src.rel_path)
            if old is not None and old[2] == UNREADABLE:  # (as it was: no change, no new generation; QA round 89 F2)
                report.unchanged += 1
                continue
            if src.kind == "markdown":
                note_held(src.rel_path)
            # (its change time not stored, as a racy file's, above: the next sync reads it again. Its folder made
            # searchable again changes neither the folder's time nor the file's stat, so it was never read: QA round 88 B1)
            _replace_file(conn, src, UNREADABLE, [], now)
            if src.kind == "markdown":
                touched.add(natural_doc_id(src.type, src.rel_path))
            report.changed += src.rel_path in known
            report.added += src.rel_path not in known
            continue
        old = stored.get(src.rel_path)
        if rebuilt_moves and src.rel_path not in before and (
                was := rebuilt_moves.get((src.type, moved_name(src.rel_path), sha))):
            moved_from = was.pop(0)
            held_before.update({doc_id: src.rel_path for doc_id, path in held_before.items() if path == moved_from})
        was = gone_as.get((src.type, moved_name(src.rel_path), sha)) if old is None and gone_as else None
        if was and conn.execute("SELECT 1 FROM documents WHERE source_path = ?", (was[0],)).fetchone() is None:
            was = None  # (its rows gone, deleted by another program: the note is read, as one found unchanged is)
        if was:  # a note moved to another folder of its type, its bytes unchanged (QA round 127-C F1: a folder of 10,000
            # renamed was parsed and analysed again, 2.2 times a first sync): its documents now name the new path
            moved_from = was.pop(0)
            for found in kept_warnings().values():
                if moved_from in found:
                    found[src.rel_path] = found.pop(moved_from)
            _move_file(conn, moved_from, src, sha, now)
            # its ids held by the note at its new path: an id it keeps names no other file, so no write by it is
            # refused (QA round 146-C F2: "named drafts/x.md until …; it now names process/x.md", the same note); one
            # that passes to another file of its name is guarded as ever
            note_held(src.rel_path)
            moved_away.add(moved_from)
            touched.add(natural_doc_id(src.type, src.rel_path))
            new_paths.add(src.rel_path)
            report.added += 1
            report.removed += 1
            report.moved += 1  # (QA round 153-C F5: a folder renamed was said as so many added and removed alone)
            continue
        if old is not None and old[2] == sha and old[3] is None and _documents_lost(conn, src, raw, size, with_documents):
            warnings.append(f"{src.rel_path}: the index held none of its documents (rows deleted by another "
                            "program?); indexed again")
        elif old is not None and old[2] == sha:
            conn.execute("UPDATE files SET mtime_ns = ?, size = ?, ctime_ns = ? WHERE path = ?",
                         (src.mtime_ns, src.size, src.ctime_ns, src.rel_path))
            report.unchanged += 1
            continue
        docs, file_warnings, readable = parse_file(src.rel_path, src.kind, src.type, raw, size=size)
        warnings.extend(file_warnings)
        if not readable and not docs and old is not None and old[2] == UNREADABLE:
            # Nothing readable in it, as before (a binary note, a CHANGELOG.json that is no JSON): its stat stored
            # again, as for content found the same; no change, no new generation (QA round 101-B F1: every
            # `sync --check` said "1 changed" of such a file, and long-lived processes dropped their caches)
            conn.execute("UPDATE files SET mtime_ns = ?, size = ?, ctime_ns = ? WHERE path = ?",
                         (src.mtime_ns, src.size, src.ctime_ns, src.rel_path))
            report.unchanged += 1
            continue
        if not readable and old is not None:
            kept = conn.execute("SELECT COUNT(*) FROM documents WHERE source_path = ?", (src.rel_path,)).fetchone()[0]
            if kept:
                # Keep the last good documents (and the old stat, so every sync re-checks and warns)
                # rather than silently dropping them; they go once the file is fixed or deleted.
                warnings.append(f"{src.rel_path}: kept the {kept} document{'s' if kept != 1 else ''} indexed before it broke; fix the file to update them")
                report.unchanged += 1
                continue
        # (after the branches that keep its documents as they were: QA round 120-A F11; a memory file's frontmatter
        # too: 121-A F6; a changelog's bytes replaced: 130-C F10)
        note_kept(src.rel_path, file_warnings)
        if src.kind == "markdown" and old is not None:
            note_held(src.rel_path)
        # a file with nothing readable in it (binary, a CHANGELOG.json that is no JSON) is listed by status as one
        # that cannot be read (QA round 75 F7: warned of by its first sync, then missing without a trace)
        moved = _replace_file(conn, src, sha if readable or docs else UNREADABLE, docs, now, postings=postings)
        if moved:
            shown = ", ".join(f"{a.split('/', 1)[-1]} → {b.split('/', 1)[-1]}" for a, b in sorted(moved)[:3])
            warnings.append(f"{src.rel_path}: {len(moved)} unchanged entr{'ies' if len(moved) > 1 else 'y'} got another"
                            f" id ({shown}{', …' if len(moved) > 3 else ''}): the ids of one date and scope count from"
                            " the file's oldest end, which it now reads at the other end; a supersedes written with an"
                            " old id may name another entry now")
        if src.kind == "markdown":
            touched.add(natural_doc_id(src.type, src.rel_path))
            new_paths.add(src.rel_path)
        if src.rel_path not in known:
            report.added += 1
        else:
            report.changed += 1
    if postings is not None:
        postings.finish()
    for path in removed:
        if path in moved_away:
            continue
        kind = classify(path)
        if kind is not None and kind[0] == "markdown":
            touched.add(natural_doc_id(kind[1], path))
            note_held(path)
        conn.execute("DELETE FROM files WHERE path = ?", (path,))
        report.removed += 1
        note_kept(path)
    for key, found in (kept_by_key or {}).items():
        _save_kept_warnings(conn, key, found)
    number_same_names(conn, touched, new_paths, warn=warnings.append, gone=held_before)
    _refresh_stats(conn)
    _save_dirs(conn, dirs, include_archives)
    conn.executemany("UPDATE files SET ctime_ns = NULL WHERE path = ?", [(p,) for p in sorted({*racy, *reread})])
    changed = bool(report.added or report.changed or report.removed or held is not None)
    if changed:
        # in-memory caches (dreamdb.ranking.memory) reload when this changes; a sync that only stored files'
        # stats again (read again and found the same, as racily clean files are) changed no document
        conn.execute("INSERT INTO meta (key, value) VALUES ('generation', 1) "
                     "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1")
        # …with a random token no other state of this or any index has: the count alone is no name of the state (QA
        # round 152-C F1: an older copy restored into the file with SQLite's backup API, then synced once, reached the
        # count the caches were loaded at, and a long-lived Index answered from them, for good)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('generation_token', ?)", (os.urandom(8).hex(),))
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('analyzer_version', ?)", (INDEX_FORMAT,))
    _decide_nfc_vectors(conn)
    _record_format(conn)
    # last_sync: when a sync last changed the index's documents (when the generation moves): one that only stored a
    # touched file's stat again, or a `sync --check` that found nothing to change, leaves it as it was (QA round
    # 139-E F2: both moved it); set when missing, as it tells an index once synced from one never synced
    conn.execute("INSERT INTO meta (key, value) VALUES ('last_sync', ?) "
                 + ("ON CONFLICT(key) DO UPDATE SET value = excluded.value" if changed else "ON CONFLICT(key) DO NOTHING"),
                 (now,))
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('vault', ?)", (str(vault),))
    if progress:
        progress(len(candidates), len(candidates))


class BulkPostings:
    """Loads the postings of a sync into an empty ``postings`` table in key order.

    ``postings`` is keyed by (term, doc) and indexed by doc, so rows inserted one document at a
    time land all over both B-trees; once the index outgrows SQLite's page cache every row
    costs a page miss. A first sync (or a rebuild, which empties the table) instead stages the
    rows in a TEMP table, moves them in batches with ``INSERT … SELECT … ORDER BY term, doc``
    (written in key order) while the ``postings_doc`` index is dropped, and re-creates that index
    from its own definition in ``sqlite_master`` at :meth:`finish`. Measured on the 3.2 M
    postings of the generated 20,000-document vault (``scripts/bench_recall.py --docs 20000``):
    24 s row by row → 17 s with the 64 MiB cache; 35 s → 16 s with an 8 MiB cache, the
    situation of a 100k-document index. An incremental sync inserts row by row: with the doc
    index in place, sorted batches gained nothing.

    Whole first syncs of that vault: 64 s → 48–49 s (rebuilds 86–97 s → 43–45 s, with the
    truncation in :func:`_apply`).

    Everything happens inside the sync's write transaction, so a crash leaves the index as it
    was, index included. While the index is dropped no document may be deleted (the cascade
    would scan every posting); the index starts empty (:meth:`wanted`), so the sync only
    inserts until :meth:`finish`. The staging table and SQLite's sorter stay in memory
    (``temp_store = MEMORY``); if temp space still runs out ("database or disk is full"),
    :func:`sync` rolls back and loads row by row.
    """

    BATCH_ROWS = 200_000
    """Rows staged per sorted batch: bounds the memory of the list and of the in-memory temp
    table (≈ 20 MB each); larger batches measured no faster."""

    def __init__(self, conn):
        self.conn = conn
        self.rows: list[tuple] = []
        row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'postings_doc'").fetchone()
        self.index_sql = row[0] if row and row[0] else None
        if self.index_sql:
            conn.execute("DROP INDEX postings_doc")
        # In memory, like SQLite's sorter for the ORDER BY: a small temp folder must not fail the sync
        # (dreamdb's connections are opened so: db.connect).
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS staged_postings (term TEXT, doc INTEGER, tf_title INTEGER,"
                     " tf_description INTEGER, tf_tags INTEGER, tf_body INTEGER, tf_slug INTEGER)")

    @staticmethod
    def wanted(conn) -> bool:
        """True when the index holds no document (a first sync, or a rebuild after its reset).

        Then each file of the sync is new, so nothing is deleted before :meth:`finish`.
        """
        return conn.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is None

    def add(self, rows: list[tuple]) -> None:
        """Stage ``(term, doc, tf_title, tf_description, tf_tags, tf_body, tf_slug)`` rows."""
        self.rows.extend(rows)
        if len(self.rows) >= self.BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if not self.rows:
            return
        conn = self.conn
        conn.executemany("INSERT INTO temp.staged_postings VALUES (?, ?, ?, ?, ?, ?, ?)", self.rows)
        self.rows = []
        # OR FAIL: a duplicate (term, doc) is still an error, but SQLite needs no statement journal
        # (a temp file) to undo part of the statement; the whole sync transaction rolls back instead.
        conn.execute("INSERT OR FAIL INTO postings (term, doc, tf_title, tf_description, tf_tags, tf_body, tf_slug)"
                     " SELECT * FROM temp.staged_postings ORDER BY term, doc")
        conn.execute("DELETE FROM temp.staged_postings")

    def finish(self) -> None:
        """Write the staged rows and re-create the doc index (call before anything is deleted)."""
        self._flush()
        if self.index_sql:
            self.conn.execute(self.index_sql)
            self.index_sql = None


def _dirs_changed(conn, dirs: dict[str, tuple[int, int | None]], include_archives: bool) -> bool:
    stored = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT path, mtime_ns, ctime_ns FROM dirs")}
    row = conn.execute("SELECT value FROM meta WHERE key = 'include_archives'").fetchone()
    return stored != dirs or row is None or row[0] != str(int(include_archives))


def _save_dirs(conn, dirs: dict[str, tuple[int, int | None]], include_archives: bool) -> None:
    conn.execute("DELETE FROM dirs")
    conn.executemany("INSERT INTO dirs (path, mtime_ns, ctime_ns) VALUES (?, ?, ?)",
                     sorted((path, m, c) for path, (m, c) in dirs.items()))
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('include_archives', ?)", (str(int(include_archives)),))


def _moved_from_candidates(removed: list[str], stored: dict) -> dict[tuple[str, str, str], list[str]]:
    """``{(type, file name, sha256): [removed paths]}`` of the markdown files a sync removes: one of them, in path order,
    is where a new file of that type, name and content was moved from (:func:`_move_file`)."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for path in sorted(removed):
        kind = classify(path)
        old = stored.get(path)
        if kind is not None and kind[0] == "markdown" and old is not None and old[2] != UNREADABLE:
            out.setdefault((kind[1], moved_name(path), old[2]), []).append(path)
    return out


def moved_name(rel_path: str) -> str:
    """The file name a note keeps when it is moved (:func:`_moved_from_candidates`), in NFC: a name saved again
    decomposed (NFD, as macOS wrote names) is the same name, its id unchanged (QA round 146-C F2)."""
    return unicodedata.normalize("NFC", rel_path.rsplit("/", 1)[-1])


def _move_file(conn, old_path: str, src: SourceFile, sha: str, now: str) -> None:
    """The note ``old_path`` is ``src`` now, moved with its bytes, type and name unchanged: its documents (rows,
    postings, chunks) are kept and name the new path, which a parse would have given them; their ids are numbered
    again by :func:`number_same_names`."""
    conn.execute("INSERT INTO files (path, mtime_ns, size, sha256, synced_at, ctime_ns) VALUES (?, ?, ?, ?, ?, ?)",
                 (src.rel_path, src.mtime_ns, src.size, sha, now, src.ctime_ns))
    conn.execute("UPDATE documents SET source_path = ? WHERE source_path = ?", (src.rel_path, old_path))
    conn.execute("DELETE FROM files WHERE path = ?", (old_path,))


def _replace_file(conn, src: SourceFile, sha: str, docs: list, now: str, postings=None) -> list[tuple[str, str]]:
    """Replace the documents of one source file (``postings``: a :class:`BulkPostings` or ``None``).

    A document the file still holds unchanged (same own id, indexed text and metadata:
    :func:`stored_key`) keeps its row, postings and chunks; only its ``ordinal`` is updated. The
    others are deleted and inserted anew. So one entry added to a CHANGELOG.json of hundreds
    re-indexes that entry, not the whole file (1.3 s → ~0.1 s on the real vault's 622 entries).

    Returns:
        ``(old id, new id)`` of each document whose text and metadata are unchanged but whose id is not: changelog
        entries renumbered (the ids of one date and scope count from the file's oldest end, which a file of one
        date only tells once a newer date comes first; QA round 90-C F3).
    """
    old: dict[tuple, list[tuple[int, int]]] = {}
    for row in conn.execute(f"SELECT id, ordinal, {_KEY_COLUMNS} FROM documents WHERE source_path = ?", (src.rel_path,)):
        old.setdefault(tuple(row[2:]), []).append((row[0], row[1]))
    fresh, reorder = [], []
    for doc in docs:
        key = stored_key(doc) if old else None
        same = old.get(key) if old else None
        if same:
            rowid, ordinal = same.pop()
            if ordinal != doc.ordinal:
                reorder.append((doc.ordinal, rowid))
        else:
            fresh.append((doc, key))
    gone = [(rowid,) for rows in old.values() for rowid, _ordinal in rows]
    if gone:  # before the inserts: a new document may take back the id of one that goes
        conn.executemany("DELETE FROM documents WHERE id = ?", gone)
    if reorder:
        conn.executemany("UPDATE documents SET ordinal = ? WHERE id = ?", reorder)
    conn.execute(
        "INSERT INTO files (path, mtime_ns, size, sha256, synced_at, ctime_ns) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(path) DO UPDATE SET mtime_ns = excluded.mtime_ns, size = excluded.size, "
        "sha256 = excluded.sha256, synced_at = excluded.synced_at, ctime_ns = excluded.ctime_ns",
        (src.rel_path, src.mtime_ns, src.size, sha, now, src.ctime_ns),
    )
    for doc, key in fresh:
        insert_document(conn, doc, postings=postings, key=key)
    if not (gone and fresh and old):
        return []
    # (the rows left in ``old`` are the ones deleted; a key without its id and content hash, which hashes the id too)
    was = {key[1:-1]: key[0] for key, rows in old.items() if rows}
    return [(was[key[1:-1]], key[0]) for _doc, key in fresh if was.get(key[1:-1], key[0]) != key[0]]


def _provisional_doc_id(conn, doc) -> str:
    """The document's own id, or while another document holds it a free ``<id>-N``.

    Only provisional for files of the same name: :func:`number_same_names` gives the final
    ids at the end of the sync, in path order. So any free number does: the search starts past as many
    numbers as ids begin with ``<id>-`` (one count in the doc_id index, where trying 2, 3, 4… one lookup
    each made a sync of n same-named files cost n²/2 lookups: 2,000 ``README.md`` files took 10 s, 4,000
    took 36 s; QA round 90-C F2). A document of a type named from inside its file (a memory section, a
    changelog entry: never renumbered) gets the lowest free N, as its final id.
    """
    doc_id = doc.doc_id

    def taken(candidate: str) -> bool:
        return conn.execute("SELECT 1 FROM documents WHERE doc_id = ?", (candidate,)).fetchone() is not None

    if not taken(doc_id):
        return doc_id
    n = 2
    if doc.type not in NAMED_BY_SECTION:
        n += conn.execute("SELECT COUNT(*) FROM documents WHERE doc_id > ? AND doc_id < ?",
                          (doc_id + "-", doc_id + ".")).fetchone()[0]  # ("." follows "-" in code-point order)
    while taken(f"{doc_id}-{n}"):
        n += 1
    return f"{doc_id}-{n}"


NAMED_BY_SECTION = ("memory", "changelog")
"""Types whose slugs come from inside one file (headings, entries), unique there: never renumbered."""


def escapes_vault(source_path: str) -> bool:
    """Whether a ``documents.source_path`` read from an index names a file outside the vault: an absolute path, or
    one with a ``..`` part. No sync writes one (it stores vault-relative POSIX paths); an index that holds one was
    written by another program, and is damaged (QA round 147-F F1: recall printed ``<vault>/../../outside.md`` as a
    hit's path, and a hint named a file outside the vault)."""
    if source_path[:1] == "/" or (os.sep == "\\" and os.path.isabs(source_path)):  # (a drive or share there)
        return True
    # (a backslash is a separator on Windows only: a file may be named ``..\\x.md`` elsewhere)
    return ".." in source_path and ".." in source_path.replace(os.sep, "/").split("/")


def natural_doc_id(doc_type: str, rel_path: str) -> str:
    """The id a markdown file's document has when no other file shares its name:
    ``type/<file name without .md>`` (``knowledge/decisions/foo.md`` → ``knowledge/foo``), in NFC."""
    name = rel_path.rsplit("/", 1)[-1]
    return f"{doc_type}/{unicodedata.normalize('NFC', name[:-3] if name.endswith('.md') else name)}"


def _suffix_space_used(conn, doc_id: str) -> bool:
    """Whether a document's id starts with ``<doc_id>-`` (a numbered same-name file, or a look-alike)."""
    return conn.execute("SELECT 1 FROM documents WHERE doc_id > ? AND doc_id < ? LIMIT 1",
                        (doc_id + "-", doc_id + ".")).fetchone() is not None  # "." follows "-" in code-point order


def _numbering_order(member: tuple[str, int]) -> tuple[bool, str, str]:
    """Sort key of a same-named file: live files before archived ones (in a ``.`` folder, indexed with
    ``DREAMDB_INCLUDE_ARCHIVES``), then path order, of the paths in NFC (the raw path breaks a tie, of two names that
    differ only so); so switching archives on leaves live ids as they were, and a folder's or file's name saved again
    in NFD (macOS) or NFC (Linux) leaves every id as it was (QA round 148-C F2: ``knowledge/Äpfel/notes.md`` decomposed
    sorted after ``knowledge/B/notes.md``, composed before it, and the two swapped ``knowledge/notes`` and
    ``knowledge/notes-2``)."""
    return (in_archive(member[0]), unicodedata.normalize("NFC", member[0]), member[0])


RENUMBERED_GUARD_DAYS = 1.0
"""How long an id that a sync moved to another file is refused by ``update``/``delete`` (days; the
``renumbered_ids`` table, migration 009): an agent's recall and its write come minutes apart."""


def _first_because(first: str, path: str) -> str:
    """``first`` and why it keeps the name rather than ``path`` (both vault-relative), for a sync's warning; when the
    two names print alike (:func:`dreamdb.vault.discover.accent_twins`), which is which and why they are two."""
    if in_archive(path) and not in_archive(first):
        because = f"{first}, a live file (archived files come after live ones)"
    else:
        because = f"{first}, first in path order"
    if accent_twins(path, first):  # (the two names looked like one file listed twice: QA round 130-C F5; a Kelvin sign
        # for K is no accent, QA round 148-C F4)
        because += f"; {twin_difference(path, first)}"
    return because


def number_same_names(conn, touched: set[str], new_paths: set[str], warn=None,
                      gone: dict[str, str] | None = None) -> int:
    """Number the documents of same-named files in path order; return how many ids changed.

    Files in different folders of one type can share a name (``knowledge/foo.md`` and
    ``knowledge/decisions/foo.md``), so their ids would collide. The file first in path
    order (code-point order of the vault-relative path in NFC, :func:`_numbering_order`) keeps ``type/name``; the others
    get ``type/name-2``, ``-3``… skipping any id that is some file's own name (a file
    ``foo-2.md`` keeps ``foo-2``). Files in archive folders (``.`` names) come after live
    ones, so indexing archives never renumbers a live file. The ids are so a function of the vault's files alone:
    an incremental sync and a rebuild give every document the same id, whatever order the
    files arrived in, and ``update``/``delete`` by such an id reach the file recall showed. An
    id that moves to another file is kept in ``renumbered_ids`` for :data:`RENUMBERED_GUARD_DAYS`,
    and writes by it are refused meanwhile (:func:`dreamdb.writes.find_document`).

    Args:
        conn: inside the sync's write transaction.
        touched: own ids (:func:`natural_doc_id`) of the markdown files added, changed or
            removed by this sync; when none of them has a same-named or look-alike id
            nothing is read.
        new_paths: vault-relative paths indexed by this sync (their numbered ids are warned about).
        warn: callable receiving one line per newly indexed file that got a number.
        gone: ``{id: vault-relative path}`` of the documents of markdown files this sync removed or
            re-indexed, as they were before it: an id of theirs that passes to another file is kept in
            ``renumbered_ids`` as well (``knowledge/notes`` named ``a/notes.md``, removed; ``b/notes.md``
            is ``knowledge/notes`` now; ``knowledge/notes-2`` named ``b/notes.md``, edited in the same
            sync, and names ``c/notes.md`` now: QA round 40), and so is an id a re-indexed file holds no
            more (``c/notes.md``, edited while ``a/`` was removed, goes from ``notes-3`` to ``notes-2``; a
            file added by a later sync takes ``notes-3``: QA round 41).
    """
    # a file's own name ``x-2`` also reserves a number of the files named ``x``: look there too
    near = touched | {n.rsplit("-", 1)[0] for n in touched if n.rsplit("-", 1)[-1].isdigit()}
    gone = gone or {}
    if not any(_suffix_space_used(conn, n) for n in near):
        # no same-named files: no id moved, but the ids of the files removed are free now, and a file a
        # later sync adds may take one: as its number (QA round 42: c/notes.md, notes-3, removed; d/notes.md
        # added a sync later is notes-3, and delete notes-3 deleted it) or as its own name (QA round 43:
        # notes-2.md removed; b/notes.md, added later, is notes-2)
        still = _indexed_paths(conn, set(gone.values()))
        _guard_ids(conn, [(old, path) for old, path in gone.items() if path not in still])
        return 0
    marks = ", ".join("?" for _ in NAMED_BY_SECTION)
    rows = conn.execute(f"SELECT id, type, source_path, doc_id FROM documents WHERE type NOT IN ({marks})",
                        NAMED_BY_SECTION).fetchall()
    wanted, first = same_name_ids((rowid, doc_type, path) for rowid, doc_type, path, _ in rows)
    moved = [(rowid, path, doc_id, wanted[rowid]) for rowid, _, path, doc_id in rows if wanted[rowid] != doc_id]
    # ids that named another file until now (not those a file indexed by this sync held meanwhile)
    shown = [(old, path) for _, path, old, _new in moved if path not in new_paths]
    # ids that pass from a file removed or re-indexed to another one (also in a rebuild, where every
    # file is re-indexed and its provisional id may already be the final one: QA round 42)
    shown += [(wanted[rowid], gone[wanted[rowid]]) for rowid, _, path, _ in rows if gone.get(wanted[rowid], path) != path]
    # an id a re-indexed file held before this sync and holds no more: free now, another file may take it
    # later (c/notes.md edited while a/ was removed: notes-3 → notes-2; a file added next is notes-3), and
    # the id of a removed file that no other file took
    final: dict[str, set[str]] = {}
    for rowid, _, path, _ in rows:
        final.setdefault(path, set()).add(wanted[rowid])
    given_up = [(old, path) for old, path in gone.items() if old not in final.get(path, ())]
    shown += given_up
    _guard_ids(conn, list(dict.fromkeys(shown)))
    # two steps, so no id is ever held twice (doc_id is UNIQUE): first out of the way, then in place
    conn.executemany("UPDATE documents SET doc_id = char(0) || id WHERE id = ?", [(m[0],) for m in moved])
    conn.executemany("UPDATE documents SET doc_id = ?, slug = substr(?, instr(?, '/') + 1) WHERE id = ?",
                     [(new, new, new, rowid) for rowid, _, _, new in moved])
    if warn:
        said = set()
        held = {path: old for old, path in given_up}  # the id a file held before, now another's (QA 42: say it)
        for rowid, path, old, new in moved:
            own = natural_doc_id(new.split("/", 1)[0], path)
            why = f"{own} is the file {_first_because(first[own], path)}" if new != own else "it is first in path order"
            if path in new_paths:
                if path in held:
                    warn(f"{path}: indexed as {new}, was {held[path]} ({why})")
                elif new != own:  # a new file that got its own name (it held a number only meanwhile): nothing to say
                    warn(f"{path}: indexed as {new} ({why})")
            else:
                warn(f"{path}: its id is now {new}, was {old} ({why})")
            said.add(path)
        for rowid, doc_type, path, _ in rows:
            own = natural_doc_id(doc_type, path)
            if path in new_paths and path not in said and wanted[rowid] != own:
                was = f", was {held[path]}" if path in held else ""
                warn(f"{path}: indexed as {wanted[rowid]}{was} ({own} is the file {_first_because(first[own], path)})")
    return len(moved)


SAME_NAME_WARNINGS_SHOWN = 5
"""How many of a sync's warnings of same-named files given a numbered id (:func:`number_same_names`) its text output
shows (:func:`few_same_name_warnings`); the report's ``warnings`` (``sync --json``) hold them all."""

_SAME_NAME_WARNING = LazyPattern(r": (?:indexed as|its id is now) [^\n]* \((?:[^\n]+ is the file [^\n]+|it is first in"
                                r" path order)\)")
"""One of :func:`number_same_names`' warnings (``knowledge/b/notes.md: indexed as knowledge/notes-2 (knowledge/notes
is the file knowledge/a/notes.md)``, ``…: its id is now …, was … (…)``)."""


def few_same_name_warnings(warnings: list[str], shown: int = SAME_NAME_WARNINGS_SHOWN, *,
                           json_lists: bool = True) -> list[str]:
    """A sync's ``warnings`` as its text output says them: the first ``shown`` of those on same-named files given a
    numbered id (:func:`number_same_names`), then one line counting the others, where they stood; every other warning
    as it is, in order. All of them when that is no more than ``shown`` + 1 (as :func:`dreamdb.output.some_of`).
    QA round 153-C F4: 3,000 folders of a ``notes.md`` each made 2,999 such lines, on every rebuild again.

    Args:
        warnings: :attr:`SyncReport.warnings` (not changed).
        shown: how many of the same-name warnings to keep.
        json_lists: the command's ``--json`` lists every warning (``sync``): the counting line says so. Else
            (the syncs of ``embed refresh`` and ``embed compact``, whose JSON holds no warnings) it names
            ``dreamdb list`` alone: a later ``sync --json`` has nothing to number, and lists none (QA round 153-F F4).

    Returns:
        A new list of lines.
    """
    same = [i for i, w in enumerate(warnings) if _SAME_NAME_WARNING().search(w)]
    if len(same) <= shown + 1:
        return list(warnings)
    left_out = set(same[shown:])
    out = [w for i, w in enumerate(warnings) if i not in left_out]
    out.insert(same[shown - 1] + 1 if shown else same[0],
               f"… and {len(left_out):,} more same-named files indexed under a numbered id (dreamdb list shows each"
               " note's id and file" + ("; the JSON of the sync that numbers them, sync --json, lists every one)"
                                        if json_lists else ")"))
    return out


def same_name_ids(docs) -> tuple[dict, dict[str, str]]:
    """The ids of markdown documents, same-named files numbered (the rule of :func:`number_same_names`): the file
    first in :func:`_numbering_order` (live before archived, then path order) keeps its own id
    (:func:`natural_doc_id`), the others get ``-2``, ``-3``… skipping any id that is some file's own name.

    Args:
        docs: ``(key, type, vault-relative path)`` of each markdown document (one per file; ``key`` any hashable:
            the row id, the path). The numbers of the files named ``x`` depend only on the files whose own id is
            ``x`` or ``x-<digits>``, so those alone give them (:func:`dreamdb.writes.locate.find_document` numbers
            the files an index that is behind has not seen, QA round 146-H F2).

    Returns:
        ``({key: id}, {own id: path of the file that keeps it})``.
    """
    groups: dict[str, list[tuple[str, object]]] = {}
    for key, doc_type, path in docs:
        groups.setdefault(natural_doc_id(doc_type, path), []).append((path, key))
    taken = set(groups)  # a file's own name is never another file's number
    wanted: dict = {}
    first: dict[str, str] = {}
    for own, members in groups.items():
        members.sort(key=_numbering_order)
        first[own] = members[0][0]
        wanted[members[0][1]] = own
        n = 2
        for _, key in members[1:]:
            while f"{own}-{n}" in taken:
                n += 1
            wanted[key] = f"{own}-{n}"
            taken.add(wanted[key])
    return wanted, first


def _indexed_paths(conn, paths: set[str]) -> set[str]:
    """The vault-relative ``paths`` that some document of the index comes from."""
    if not paths:
        return set()
    return {r[0] for r in conn.execute("SELECT DISTINCT source_path FROM documents WHERE source_path IN"
                                       " (SELECT value FROM json_each(?))", (json.dumps(sorted(paths)),))}


def _guard_ids(conn, pairs: list[tuple[str, str]]) -> None:
    """Record ``(doc_id, vault-relative path it named until now)`` pairs in ``renumbered_ids``, dropping
    records older than :data:`RENUMBERED_GUARD_DAYS`; ``update``/``delete`` by such an id are refused
    meanwhile unless it still names that file (:func:`dreamdb.writes.find_document`)."""
    if not pairs:
        return
    now_days = time.time() / 86400.0
    conn.execute("DELETE FROM renumbered_ids WHERE at_days < ?", (now_days - RENUMBERED_GUARD_DAYS,))
    conn.executemany("INSERT INTO renumbered_ids (doc_id, source_path, at_days) VALUES (?, ?, ?)",
                     [(old, path, now_days) for old, path in pairs])


def document_terms(doc) -> tuple[dict[str, list[int]], list[int], bool]:
    """Analyze a document's fields.

    Returns:
        ``(postings, lengths, turkish)``: ``postings[term] = [tf_title, tf_description,
        tf_tags, tf_body, tf_slug]``; ``lengths`` = terms per BM25F field (4 ints).
        The language (Turkish or not) is decided once for the whole document. In Turkish
        text a capitalised word also counts under its Turkish stem (``stacked``, see
        :mod:`dreamdb.analyzer`), which adds to its term frequency but not to the length; so do the
        identifiers the split on punctuation loses (:func:`dreamdb.analyzer.identifier_terms`:
        ``0.5.0`` of ``v0.5.0``, ``c++``) and the parts of camelCase words
        (:func:`dreamdb.analyzer.compound_terms`: ``setup`` and ``version`` of ``setupVersion``) and the acronyms
        that case-blind stemming gets wrong (:func:`dreamdb.analyzer.acronym_terms`: ``jwt`` of ``JWTs``) and
        snake_case identifiers and names numbered with a hyphen whole (:func:`dreamdb.analyzer.joined_terms`: ``session_id``,
        ``task7`` of ``TASK-7``), in every language. The slug (``tf_slug``, hyphens and underscores read as spaces) is analysed as the
        title is, the identifiers of the file name as written too (``parserRewrite.md``: ``parserrewrit``, ``parser``,
        ``rewrit``; ``release-v0.5.0.md``: ``0.5.0``; ``build-c++.md``: ``c++``; ``TASK-7.md``: ``task7``), in the
        language decided for the four BM25 fields. A document not read as Turkish is then folded as a query is
        (:func:`dreamdb.analyzer.fold_written`: a capital ``I`` of a word with a Turkish-only letter is ``ı``,
        ``ŞIRNAK`` the term ``şırnak``, as the query ``ŞIRNAK`` or ``Şırnak`` is; QA round 155-G F1: it was
        ``şirnak``, which no spelling of the word gave), the fields that hold such a word read again (≈ 7 ms of CPU
        for a field of 130 KB), and such a word's lowercased reading stacked beside it
        (:func:`dreamdb.analyzer.dotted_terms`: ``DİYARBAKIR`` is ``diyarbakır`` and ``diyarbakir``, which ``Diyarbakir``
        finds; QA round 156-A F2); a Turkish one is lowercased, its capitalised words' readings with ``ı`` being its
        stacked terms already (``ŞIRNAK``: ``şirnak``, ``şırnak``). The language is decided on the lowercased words.
    """
    slug = doc.slug.replace("-", " ").replace("_", " ")
    texts = (doc.title, doc.description, " ".join(doc.tags), doc.body, slug)
    written = [drop_data(normalize(text)) for text in texts]  # (encoded data is found in the text as written)
    folded = [lower(text) for text in written]
    words = [tokens(text, data_dropped=True) for text in folded]  # raw_tokens(text), from the one fold
    turkish = _is_turkish_document(words[:4])
    dotted: list[list[str]] = [[] for _ in texts]  # (a field's words' lowercased readings' terms, stacked)
    if not turkish:  # (folded as a query is: ŞIRNAK is şırnak; a Turkish note's stacked terms read it so already)
        for f, text in enumerate(written):
            if (read := dotless_capitals(text)) != text:
                folded[f] = lower(read)
                lowered, words[f] = words[f], tokens(folded[f], data_dropped=True)
                dotted[f] = dotted_terms(lowered, words[f])  # (and as lowercased: DİYARBAKIR is diyarbakir too)
            if not TURKISH_LETTERS.isdisjoint(folded[f]):  # (and spelled without its Turkish letters: ŞIRNAK is sirnak)
                dotted[f] += ascii_terms(words[f])
    postings: dict[str, list[int]] = {}
    lengths = []
    # the slug's identifiers as the title's (QA round 148-A F1: a camelCase, dotted or c++ file name had only its
    # analysed words, parserRewrite.md not found by parser rewrite); those written with its hyphens and underscores
    # from the slug as written (a note named TASK-7.md: QA round 128-A F2, TASK-1 … TASK-9 tied on their slugs)
    joined = [*written[:4], normalize(doc.slug)]
    for f, (text, w) in enumerate(zip(texts, words)):
        stacked: list[str] | None = [] if turkish else None
        terms = analyze(text, turkish=turkish, words=w, stacked=stacked)
        if f < 4:
            lengths.append(len(terms))
        stacked = ((stacked or []) + dotted[f] + identifier_terms(folded[f]) + compound_terms(written[f])
                   + acronym_terms(written[f]) + joined_terms(joined[f]))
        for t, n in Counter(terms + stacked if stacked else terms).items():
            row = postings.get(t)
            if row is None:
                row = postings[t] = [0, 0, 0, 0, 0]
            row[f] = n
    return postings, lengths, turkish


def _is_turkish_document(words: list[list[str]]) -> bool:
    """The language :func:`document_terms` decides for a document (``documents.turkish``) from the words of its four
    BM25 fields (title, description, tags, body)."""
    return is_turkish_text([w for field in words for w in field])


def document_is_turkish(doc) -> bool:
    """``documents.turkish`` of ``doc``, as :func:`document_terms` decides it (the words read the same way), without
    analysing its text: what ``sync --check`` compares the stored flag with (:func:`dreamdb.store.texts.file_problems`;
    ≈ 0.25 s of CPU for the real vault's 771 documents, half of it reading their words)."""
    texts = (doc.title, doc.description, " ".join(doc.tags), doc.body)
    return _is_turkish_document([tokens(lower(drop_data(normalize(text))), data_dropped=True) for text in texts])


def document_tag_keys(doc) -> set[str]:
    """The ``document_tags`` rows of ``doc`` (:func:`insert_document`): its tags as ``--tags`` reads them
    (:func:`dreamdb.vault.tags.tag_key`: a tag saved decomposed is found)."""
    return {tag_key(tag) for tag in doc.tags}


def content_hash(doc) -> str:
    """sha256 (hex) of a document's indexed text: identity of its content for chunk/embedding reuse. ``sync --check``
    hashes the stored text the same way to find it damaged (:func:`dreamdb.store.texts.document_text_problems`): a
    change here is a change there."""
    from hashlib import sha256

    h = sha256()
    for part in (doc.doc_id, doc.title, doc.description, "\x1f".join(doc.tags), doc.body):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x1e")
    return h.hexdigest()


_KEY_COLUMNS = ("doc_id, type, source_path, title, description, tags, body, date, date_days, status, level, pinned,"
                " confidence, expires, expires_days, supersedes, identity_boost, is_capture, content_hash")
"""The ``documents`` columns a document's row is kept by (:func:`stored_key`); the rest derive from them
(slug from doc_id; analysis: lengths, language, postings, from the text) or are updated in place (ordinal)."""


def stored_key(doc) -> tuple:
    """The values of :data:`_KEY_COLUMNS` that :func:`insert_document` stores for ``doc`` under its own id:
    equal keys mean an identical row (but for its ``ordinal``), postings and chunks."""
    return (doc.doc_id, *stored_fields(doc), content_hash(doc))


def stored_fields(doc) -> tuple:
    """:func:`stored_key` without its first and last values, the id and the content hash (which hashes the id):
    what ``sync --check`` compares a document's row with (:func:`dreamdb.store.texts.file_problems`), its id
    being one a sync may number after the parse."""
    return (doc.type, doc.source_path, doc.title, doc.description, json.dumps(doc.tags, ensure_ascii=False),
            doc.body, doc.date, iso_to_days(doc.date), doc.status, doc.level, int(doc.pinned), doc.confidence,
            doc.expires, expires_to_days(doc.expires), doc.supersedes, int(doc.identity_boost), int(doc.type == "bookmark"))


def insert_document(conn, doc, postings: BulkPostings | None = None, key: tuple | None = None) -> int:
    """Insert one document with its tags and postings; return its row id (``key``: its :func:`stored_key`,
    when already computed).

    With ``postings`` (a :class:`BulkPostings`) the postings rows are staged there and reach
    the ``postings`` table by its :meth:`~BulkPostings.finish`; without it they are inserted at once.
    """
    doc_id = _provisional_doc_id(conn, doc)
    terms, lengths, turkish = document_terms(doc)
    key = key or stored_key(doc)
    cur = conn.execute(
        f"""INSERT INTO documents ({_KEY_COLUMNS}, slug, ordinal, turkish, len_title, len_description, len_tags, len_body)
           VALUES ({", ".join("?" * (len(key) + 7))})""",
        (doc_id, *key[1:], doc_id.split("/", 1)[1], doc.ordinal, int(turkish), *lengths),
    )
    rowid = cur.lastrowid
    tags = document_tag_keys(doc)
    if tags:
        conn.executemany("INSERT OR IGNORE INTO document_tags (tag, doc) VALUES (?, ?)", [(t, rowid) for t in tags])
    rows = [(t, rowid, *tf) for t, tf in terms.items()]
    if postings is not None:
        postings.add(rows)
    else:
        conn.executemany(
            "INSERT INTO postings (term, doc, tf_title, tf_description, tf_tags, tf_body, tf_slug) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    return rowid


def _refresh_stats(conn) -> None:
    conn.execute(
        """UPDATE corpus_stats SET
             n_docs = (SELECT COUNT(*) FROM documents),
             avg_len = COALESCE((SELECT AVG(len_title + len_description + len_tags + len_body) FROM documents), 0),
             avg_len_title = COALESCE((SELECT AVG(len_title) FROM documents), 0),
             avg_len_description = COALESCE((SELECT AVG(len_description) FROM documents), 0),
             avg_len_tags = COALESCE((SELECT AVG(len_tags) FROM documents), 0),
             avg_len_body = COALESCE((SELECT AVG(len_body) FROM documents), 0)
           WHERE id = 1"""
    )
