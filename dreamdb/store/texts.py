"""Checks of the text the index stores, for damage that leaves the file's structure sound.

Bytes overwritten inside a page that holds a note's text pass SQLite's ``PRAGMA integrity_check`` (it checks the
B-trees, not what a TEXT value holds): the text then reads as something the vault never held, or as bytes that are
not UTF-8, which the driver cannot give back (QA round 150-D F1: ``sync --check`` said "ok", the hit's snippet was
left empty, ``dreamdb sql`` blamed the user's query). dreamdb stores only text it decoded, and keeps the sha256 of
each document's indexed text (``documents.content_hash``, :func:`dreamdb.store.sync.content_hash`) and of each
chunk's (``chunks.content_hash``, :func:`dreamdb.embeddings.chunk.text_hash`), so both are checked against the
text stored beside them; and each document's ``date`` and ``expires`` text, which the hash leaves out, against the
day numbers stored beside them (QA round 150-I F1). The rest of a document's row (its type, slug, path, status,
level, flags, confidence, supersedes), which neither covers, is compared with what the parser gives for its file,
where the file is as the sync read it (QA round 151-A F4: a status overwritten passed), as are its tag rows, its
language flag and its position in the file (QA round 152-A F4: a tag or the flag overwritten passed).
"""

from __future__ import annotations

import json
import re
from hashlib import sha256

SHOWN = 3
"""How many documents or chunks a problem names (then "…")."""

_DOCUMENT_TEXTS = ("doc_id", "type", "slug", "source_path", "title", "description", "tags", "body", "date", "status",
                   "expires", "supersedes", "content_hash")
"""The TEXT columns of ``documents`` (migration 001), each read as its bytes and decoded here: the driver's own
decoding names a damaged value by the query's column expression, and stops at the first."""

_NUMBERED = re.compile(r"-[0-9]+\Z")
"""A same-named document's number (``knowledge/notes-2``): its text was hashed under its id without it."""


def _named(ids: list[str]) -> str:
    return ", ".join(ids[:SHOWN]) + (", …" if len(ids) > SHOWN else "")


def document_text_problems(conn) -> list[str]:
    """How the stored text of ``documents`` disagrees with what was stored: a TEXT value that is not UTF-8 (each
    document named with its columns), a document whose indexed text (id, title, description, tags, body) no longer
    gives its ``content_hash``, or whose ``date`` or ``expires`` text no longer gives the day number stored beside it
    (``date_days``, ``expires_days``; each named with its columns): the content hash leaves the dates out, and
    recall shows the text while its filters and recency read the number (QA round 150-I F1). The day numbers are
    computed from the stored text as the sync computes them (:func:`dreamdb.store.sync.iso_to_days`,
    :func:`~dreamdb.store.sync.expires_to_days`, from the normalised text the parser gives), so a sound row agrees
    exactly. One scan of the table, its text hashed once (twice for a renumbered id, hashed under its own id or its
    number's: :func:`dreamdb.store.sync.number_same_names`); ≈ 10 ms for the real vault's 771 documents (2.6 MB of
    bodies), the dates ≈ 1 ms of it.

    Returns:
        The problems, one line each (``[]``: the text is what the sync stored).

    Raises:
        DatabaseError: SQLite's, reading the table (damage the caller reports as such).
    """
    from dreamdb.store.sync import expires_to_days, iso_to_days

    not_utf8: list[str] = []
    changed: list[str] = []
    misdated: list[str] = []
    columns = ", ".join(f"CAST({c} AS BLOB)" for c in _DOCUMENT_TEXTS)
    for row in conn.execute(f"SELECT id, date_days, expires_days, {columns} FROM documents ORDER BY id"):
        date_days, expires_days = row[1:3]
        values = dict(zip(_DOCUMENT_TEXTS, row[3:]))
        bad = []
        for name, raw in values.items():
            if raw is None:
                continue
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                bad.append(name)
        shown = (values["doc_id"] or b"").decode("utf-8", "replace") or f"row {row[0]}"
        if bad:
            not_utf8.append(f"{shown}: {', '.join(bad)}")
            continue
        if not _hash_matches(values):
            changed.append(shown)
        wrong = [name for name, days, to_days in (("date", date_days, iso_to_days),
                                                  ("expires", expires_days, expires_to_days))
                 if not _same_days(to_days(None if values[name] is None else values[name].decode("utf-8")), days)]
        if wrong:
            misdated.append(f"{shown}: {', '.join(wrong)}")
    problems = []
    if not_utf8:
        problems.append(f"documents: the stored text of {len(not_utf8)} document(s) is not UTF-8 ({_named(not_utf8)})")
    if changed:
        problems.append(f"documents: the stored text of {len(changed)} document(s) differs from its content hash"
                        f" ({_named(changed)})")
    if misdated:
        problems.append(f"documents: the stored date of {len(misdated)} document(s) differs from the day stored beside"
                        f" it ({_named(misdated)})")
    return problems


def _same_days(computed: float | None, stored) -> bool:
    """Whether a day number computed from a stored date's text is the one stored beside it (``None``: no date, or
    one the sync could not read, stored as NULL): the same float, which SQLite's REAL gives back exactly."""
    return stored is None if computed is None else (isinstance(stored, (int, float)) and stored == computed)


def _hash_matches(values: dict) -> bool:
    """Whether a ``documents`` row's text (bytes, all UTF-8) gives its ``content_hash``, hashed as
    :func:`dreamdb.store.sync.content_hash` hashes the parsed document: under the id the parser gave it, which is the
    stored id but for a number a sync added (a same-named file, a repeated section heading)."""
    try:
        tags = "\x1f".join(json.loads(values["tags"])).encode("utf-8")
    except (ValueError, TypeError):  # (not a JSON list of strings: damage)
        return False
    rest = b"\x1e" + values["title"] + b"\x1e" + values["description"] + b"\x1e" + tags + b"\x1e" + values["body"] + b"\x1e"
    stored = values["content_hash"].decode("utf-8")
    doc_id = values["doc_id"]
    if sha256(doc_id + rest).hexdigest() == stored:
        return True
    candidates = [_NUMBERED.sub("", doc_id.decode("utf-8")).encode("utf-8")]
    if values["type"] is not None and values["source_path"] is not None:
        from dreamdb.store.sync import natural_doc_id

        candidates.append(natural_doc_id(values["type"].decode("utf-8"), values["source_path"].decode("utf-8")
                                         ).encode("utf-8"))
    return any(sha256(c + rest).hexdigest() == stored for c in candidates if c != doc_id)


def chunk_text_problems(conn) -> list[str]:
    """How the stored ``chunks`` disagree with their key: a chunk whose text is not UTF-8 or no longer gives its
    ``content_hash`` (its vector's key: the dense channel would answer for text the index does not hold). ``[]``
    where all is well, or the index has no ``chunks`` table (a SQLite driver that cannot load sqlite-vec). One scan;
    ≈ 5 ms for the real vault's 1,347 chunks (2.0 MB of text).

    Raises:
        DatabaseError: SQLite's, reading the table.
    """
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunks'").fetchone() is None:
        return []
    wrong: list[str] = []
    for doc_id, ordinal, text, key in conn.execute(
            "SELECT CAST(d.doc_id AS BLOB), c.ordinal, CAST(c.text AS BLOB), CAST(c.content_hash AS BLOB) FROM chunks c"
            " LEFT JOIN documents d ON d.id = c.doc ORDER BY c.id"):
        text = text or b""
        try:
            text.decode("utf-8")
            good = sha256(text).hexdigest().encode() == key
        except UnicodeDecodeError:
            good = False
        if not good:
            wrong.append(f"{(doc_id or b'?').decode('utf-8', 'replace')} #{ordinal}")
    if not wrong:
        return []
    return [f"chunks: the stored text of {len(wrong)} chunk(s) is not UTF-8 or differs from its content hash"
            f" ({_named(wrong)})"]


def file_problems(conn, vault) -> list[str]:
    """How the stored ``documents`` disagree with the files they came from: each file whose bytes are still those
    the sync read (the sha256 stored in ``files``) is parsed again, and its documents' rows must be the ones the sync
    stores for them (:func:`dreamdb.store.sync.stored_fields`: type, path, text, dates, status, level, pinned,
    confidence, expires, supersedes, flags; the id aside, which same-named files and renumbered changelog entries
    change after the parse, and which the content hash covers), with their ``document_tags`` rows
    (:func:`~dreamdb.store.sync.document_tag_keys`, what ``--tags`` reads), their language flag (``turkish``,
    :func:`~dreamdb.store.sync.document_is_turkish`, by which a query's language finds them) and their ``ordinal``
    (their place in the file, by which recall orders a changelog's corrections of one date), each slug its id's, and
    each document's path one of ``files`` (QA round 151-A F4: ``in_progress`` overwritten as ``in_progrexs`` in a
    note's status passed :func:`document_text_problems`, which has no hash of it, and ``recall --status
    in_progress`` found nothing; QA round 152-A F4: a tag row overwritten, ``procesx`` for ``process``, and
    ``recall --tags process`` said no document had the tag, or a Turkish note's flag cleared). A file edited since
    (the next sync's), unreadable, or none of whose documents the index holds (the sync indexes it again, and says
    so: :func:`dreamdb.store.sync._documents_lost`) is passed over, as is an index of another index format (the sync
    rebuilds it). Reads and parses every file of the vault, and reads the words of each document for its language:
    ≈ 0.35 s of CPU for the real vault's 148 files and 771 documents (0.09 s without the language). The rest of a
    row, its field lengths (``len_*``) and its postings, is what analysing its text gives, which would cost as much
    as the sync's analysis: the statistics and postings checks of :meth:`dreamdb.Index.check` compare them with
    each other.

    Returns:
        The problems (``[]``: every document is what its file gives).

    Raises:
        DatabaseError: SQLite's, reading the tables.
        Reinstalled: another version of dreamdb was installed under this process, whose parser is not this index's.
    """
    import sys
    from collections import Counter
    from pathlib import Path

    from dreamdb.store.sync import (_KEY_COLUMNS, INDEX_FORMAT, UNREADABLE, document_is_turkish, document_tag_keys,
                                    stored_fields, stored_index_format)
    from dreamdb.vault.discover import classify, read_head, read_source

    if stored_index_format(conn) != INDEX_FORMAT:
        return []
    if "dreamdb.vault.parse" not in sys.modules:  # (as the sync: its rules are the index's only if it is this version's)
        from dreamdb.reinstall import require_same_install

        require_same_install()
    from dreamdb.vault.parse import note_read_limit, parse_file

    stored = [c.strip() for c in _KEY_COLUMNS.split(",")][1:-1]  # (those of stored_fields)
    columns = [*stored, "document_tags", "turkish"]  # (the key compared: stored_fields, the tag rows, the language)
    tags: dict[int, set] = {}
    for tag, rowid in conn.execute("SELECT tag, doc FROM document_tags"):
        tags.setdefault(rowid, set()).add(tag)
    rows: dict[str, list[tuple[int, str, tuple]]] = {}
    wrong: list[str] = []
    for rowid, doc_id, slug, ordinal, turkish, *fields in conn.execute(
            f"SELECT id, doc_id, slug, ordinal, turkish, {', '.join(stored)} FROM documents ORDER BY id"):
        if slug != doc_id.split("/", 1)[-1]:
            wrong.append(f"{doc_id}: slug")
        rows.setdefault(fields[1], []).append((ordinal, doc_id, (*fields, frozenset(tags.get(rowid, ())), turkish)))
    vault = Path(vault)
    for path, sha in conn.execute("SELECT path, sha256 FROM files ORDER BY path").fetchall():
        held = rows.pop(path, None)
        kind = classify(path)
        if not held or sha == UNREADABLE or kind is None:
            continue
        try:
            if kind[0] == "markdown":
                raw, read_sha, size = read_head(vault / path, note_read_limit)
            else:
                raw = read_source(vault / path)
                read_sha, size = sha256(raw).hexdigest(), len(raw)
        except (OSError, ValueError):  # (gone, unreadable, a name this Python cannot give the OS: the sync's to say)
            continue
        if read_sha != sha:
            continue
        keys = [(doc.ordinal, (*stored_fields(doc), frozenset(document_tag_keys(doc)), int(document_is_turkish(doc))))
                for doc in parse_file(path, kind[0], kind[1], raw, size=size)[0]]
        if Counter(keys) == Counter((o, k) for o, _id, k in held):
            continue
        named = len(wrong)
        given = dict(keys)
        for ordinal, doc_id, key in held:
            want = given.get(ordinal)
            if want == key:
                continue
            if any(k == key for _o, k in keys):  # (its row, at another position in the file)
                differ = ["ordinal"]
            elif want is not None:
                differ = [c for c, a, b in zip(columns, key, want) if a != b]
            else:
                differ = ["not in its file"]
            wrong.append(f"{doc_id}: {', '.join(differ)}")
        if len(held) < len(keys):
            wrong.append(f"{path}: {len(keys) - len(held)} of its documents missing")
        if len(wrong) == named:  # (each row its position's, but not as many of each: named by the file)
            wrong.append(f"{path}: its documents")
    for path, held in rows.items():  # (a path no file of the index has: its own row gone, or the path overwritten)
        wrong.extend(f"{doc_id}: source_path" for _o, doc_id, _k in held)
    if not wrong:
        return []
    return [f"documents: {len(wrong)} document(s) differ from what their file, unchanged since the sync, gives"
            f" ({_named(wrong)})"]


def stored_text_problems(conn) -> list[str]:
    """:func:`document_text_problems` and :func:`chunk_text_problems`, in that order."""
    return document_text_problems(conn) + chunk_text_problems(conn)


def undecodable_texts(conn, shown: int = SHOWN, columns=None) -> list[str]:
    """The columns of the index's own tables that hold a TEXT value that is not UTF-8, as ``table.column`` (with
    the document for ``documents``' columns): dreamdb stores only UTF-8, so any is damage. Every table but SQLite's
    own and virtual ones is read, a column at a time (the values whose type is TEXT); run on an error's path only
    (``dreamdb sql`` told a value that could not be decoded: ≈ 100 ms on the real vault's index, its 119,000 postings
    among them). At most ``shown`` are named. ``columns``: only these, as ``table.column`` in lower case (those a
    query reads; ``None``: all).

    Raises:
        DatabaseError: SQLite's, reading a table.
    """
    found: list[str] = []
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE"
                                         " 'sqlite%' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")]
    for table in tables:
        quoted = '"' + table.replace('"', '""') + '"'
        for _cid, column, *_rest in conn.execute(f"PRAGMA table_info({quoted})").fetchall():
            if columns is not None and f"{table}.{column}".lower() not in columns:
                continue
            name = '"' + column.replace('"', '""') + '"'
            of_document = "CAST(doc_id AS BLOB)" if table == "documents" else "NULL"
            for raw, of in conn.execute(f"SELECT CAST({name} AS BLOB), {of_document} FROM {quoted}"
                                        f" WHERE typeof({name}) = 'text'"):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    found.append(f"{table}.{column}" + (f" of {of.decode('utf-8', 'replace')}" if of else ""))
                    break
            if len(found) >= shown:
                return found
    return found
