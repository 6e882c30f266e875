"""BEIR-style IR collections: load them, turn them into dreamdb vaults, score recall.

A collection folder holds ``corpus.jsonl`` (``{id, title, text, ...}``),
``queries.jsonl`` (``{id, text, ...}``) and ``qrels.tsv`` (``qid docid rel``
with a header line), and optionally more query/qrels files (a train split,
title queries, per-direction qrels). See ``../shared/eval-data/*/SOURCE.txt``.

dreamdb indexes vaults, not corpora, so a corpus is written out as markdown
files through the path users get: one ``knowledge/<safe-id>.md`` per
document with a YAML frontmatter ``title:`` and the text as the body. The
safe id is an opaque ``d000123`` (not derived from the corpus id) so that
the slug carries no words a query could match (``en-p001`` would match the
Turkish word *en*; ``eip-20`` the query "ERC-20"). The conversion is cached
and keyed by a hash of its input, so it is redone only when the corpus
changes; ``manifest.json`` beside the vault keeps the safe-id ↔ corpus-id
mapping.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from dreamdb.errors import UsageError
from dreamdb.evaluation import metrics as M
from dreamdb.output import has_visible

CONVERT_VERSION = "1"
"""Bumped when the conversion's output changes (invalidates every cached vault)."""

VAULT_DIR = "_dream_context"
MANIFEST = "manifest.json"


@dataclass
class Collection:
    """One loaded BEIR-style collection (or one track of it).

    Attributes:
        name: a label (e.g. ``scifact`` or ``xquad/tr2en``).
        corpus: corpus id → record (``title``, ``text`` and any extra fields).
        queries: query id → record (``text`` and any extra fields), in file order.
        qrels: query id → {corpus id: grade}; only queries with a judgement.
        unknown_qrels: ``[(query id, doc id)]`` of the judgements naming a query or a document that is not
            in the collection.
        warnings: what :func:`load_collection` found amiss without refusing the collection (one line each).
    """

    name: str
    corpus: dict[str, dict]
    queries: dict[str, dict]
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    unknown_qrels: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def judged_queries(self) -> list[tuple[str, str]]:
        """``(qid, text)`` of every query that has at least one relevant document, in file order."""
        return [(qid, q["text"]) for qid, q in self.queries.items() if any(g > 0 for g in self.qrels.get(qid, {}).values())]


def read_jsonl(path: Path, *, records: bool = False) -> list[dict]:
    """Read a JSON-lines file.

    Args:
        path: the file.
        records: check that each line is a corpus or query record: a JSON object with an ``id`` (string
            or integer) whose ``title`` and ``text``, when present, are strings or null.

    Returns:
        One dict per non-blank line.

    Raises:
        UsageError: unreadable or non-UTF-8 file, or a malformed line (with its number).
    """
    return [d for _n, d in read_jsonl_lines(path, records=records)]


def lone_surrogate(value, where: str = "") -> str | None:
    """Where in a decoded JSON value (its keys and strings, nested) a lone surrogate is (``\\ud800`` alone: legal
    JSON, no text), as ``"id"``, ``"text"`` or ``""`` for the value itself; ``None`` when there is none. A record
    holding one was run whole and failed at the end: the query as "not valid UTF-8" naming no line, a gold id as an
    internal error when the results were written (QA round 135-D F2)."""
    if isinstance(value, str):
        return where if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for k, v in value.items():
            name = where or str(k)
            found = lone_surrogate(k, name) if isinstance(k, str) else None
            found = found if found is not None else lone_surrogate(v, name)
            if found is not None:
                return found
    elif isinstance(value, list):
        for v in value:
            found = lone_surrogate(v, where)
            if found is not None:
                return found
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogate_message(line: str, d) -> str | None:
    """The reason a decoded JSON line ``d`` (read from ``line``) is refused for a lone surrogate (see
    :func:`lone_surrogate`), or ``None``. Only a line with an escape (``\\u``) can hold one: UTF-8 text cannot."""
    if "\\u" not in line:
        return None
    where = lone_surrogate(d)
    if where is None:
        return None
    return (f"a lone surrogate (an escape such as \\ud800 without its pair) in {f'{where!r}' if where else 'the value'}"
            ", which is no text")


def jsonl_lines(text: str) -> list[str]:
    """``text`` cut into lines at ``\\n`` only (a ``\\r`` before it dropped): a raw U+2028, U+0085 or form feed
    inside a JSON string, as ``json.dumps(ensure_ascii=False)`` writes them, is not the end of a line, which
    ``str.splitlines`` took it for (QA round 135-D F4: the line was refused as unterminated)."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def read_text(path) -> str:
    """A UTF-8 file's text (a byte-order mark dropped) with its line ends as written: a lone ``\r`` is JSON's white
    space, not the end of a line, which Python's universal newlines made it (QA round 137 F4: a record with a raw CR
    between its fields was refused as two lines); :func:`jsonl_lines` cuts it into lines.

    Raises:
        OSError, UnicodeDecodeError: as :func:`open` and reading."""
    with open(path, encoding="utf-8-sig", newline="\n") as fh:
        return fh.read()


def read_jsonl_lines(path: Path, *, records: bool = False) -> list[tuple[int, dict]]:
    """:func:`read_jsonl` with the line number of each record: ``[(line number, dict)]``. Lines end at ``\n`` (a
    ``\r`` before it dropped); each is decoded alone, so a line that is not UTF-8 is named by its own number (QA
    round 137 F4: the file was decoded 8 KB ahead of the line read, and line 3,000's bad byte was said at 2,977)."""
    out = []
    n = 0
    try:
        with open(path, "rb") as fh:  # (binary lines end at b"\n" alone: not at a lone "\r", nor at U+2028)
            for n, raw in enumerate(fh, 1):
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
                if line.strip():
                    try:
                        d = json.loads(line)
                    except ValueError as exc:
                        raise UsageError(f"{path}:{n}: not JSON ({exc})") from None
                    bad = surrogate_message(line, d)
                    if bad:
                        raise UsageError(f"{path}:{n}: {bad}")
                    if records:
                        _check_record(d, path, n)
                    out.append((n, d))
    except OSError as exc:
        raise UsageError(f"Cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}:{n}: not UTF-8 text ({exc.reason})") from None
    return out


def read_records(path: Path, *, kind: str, langs: tuple[str, ...] | None = None) -> list[dict]:
    """Read a corpus (``kind="corpus"``) or queries (``kind="queries"``) file and check it as a whole.

    Every line is a record (see :func:`read_jsonl`); besides, no two records share an id (``3`` and ``"3"``
    are the same id: ids are compared as text, as the qrels name them), a query has a non-empty ``text``,
    and the file holds at least one record (QA round 62 L1).

    Args:
        path: the file.
        kind: ``"corpus"`` or ``"queries"``.
        langs: where given, the values a record's ``lang`` may take (XQuAD's ``en`` and ``tr``: a record of
            ``"EN"`` was left out of both one-language indexes and put among the other language's paragraphs,
            without a word, QA round 147-G F1).

    Returns:
        One dict per record, in file order.

    Raises:
        UsageError: as :func:`read_jsonl`, a duplicate id, an empty query or a ``lang`` not in ``langs`` (with
            the line number), or no record at all.
    """
    seen: dict[str, int] = {}
    out = []
    for n, d in read_jsonl_lines(path, records=True):
        rid = str(d["id"])
        if rid in seen:
            raise UsageError(f"{path}:{n}: duplicate id {rid!r} (already on line {seen[rid]}); each "
                             f"{'document' if kind == 'corpus' else 'query'} needs an id of its own"[:300])
        seen[rid] = n
        if kind == "queries" and (not isinstance(d.get("text"), str) or not has_visible(d["text"])):
            raise UsageError(f"{path}:{n}: a query needs a non-empty \"text\", got {d.get('text')!r}"[:300])
        if langs is not None and d.get("lang") not in langs:
            raise UsageError((f"{path}:{n}: {kind} record {rid!r} has \"lang\" {d.get('lang')!r}; it must be "
                              + " or ".join(repr(lang) for lang in langs))[:300])
        out.append(d)
    if not out:
        raise UsageError(f"{path} holds no {'documents' if kind == 'corpus' else 'queries'}")
    return out


def _check_record(d, path: Path, n: int) -> None:
    if not isinstance(d, dict):
        raise UsageError(f"{path}:{n}: a record must be a JSON object")
    if not isinstance(d.get("id"), (str, int)) or isinstance(d.get("id"), bool) or d.get("id") == "":
        raise UsageError(f"{path}:{n}: a record needs an \"id\" (string or integer), got {d.get('id')!r}"[:300])
    for key in ("title", "text"):
        if d.get(key) is not None and not isinstance(d[key], str):
            raise UsageError(f"{path}:{n}: \"{key}\" must be text, got {type(d[key]).__name__}")


def read_qrels(path: Path) -> dict[str, dict[str, int | float]]:
    """Read a qrels file: BEIR's TSV (``qid<TAB>docid<TAB>rel``; a header line is skipped) or TREC's four
    columns (``qid iteration docid rel``, e.g. ``q1 0 d7 1``; QA round 68 M3: the iteration was read as the
    document and the document as the grade). Every line has the file's first line's column count; tabs and
    spaces at a line's end are no column.

    A grade is a number: a whole one (``1``, ``2.0``) is read as an int, one with a fraction (``0.5``) is kept as
    a float, a graded relevance like any other (relevant when above 0, its nDCG gain the grade itself). BEIR's
    loader and ``pytrec_eval`` take whole grades only, so figures from such a file have no BEIR counterpart.

    Args:
        path: the file.

    Returns:
        query id → {doc id: grade (an int, or a float when it has a fraction)}.

    Raises:
        UsageError: unreadable file or a malformed line (with its number), among them a grade that is no
            finite number (``nan``, ``inf``, ``1e999``), and a query–document pair judged twice with two grades
            (QA round 100-A F1: the last one was kept, silently; the same grade twice is one judgement).
    """
    out: dict[str, dict[str, int | float]] = {}
    first_line: dict[tuple[str, str], int] = {}
    try:
        # (not splitlines, at U+2028: QA round 135-D F4; but a CR alone ends a line of TSV, old Mac files: 138 F3)
        lines = jsonl_lines(Path(path).read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise UsageError(f"Cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    columns = None
    for n, line in enumerate(lines, 1):
        # (trailing tabs and spaces are no column: "1<TAB>31715818<TAB>1<TAB>" was read as a TREC line with an empty
        # grade, and refused; QA round 145-G F6)
        line = line.rstrip()
        if not line:
            continue
        parts = line.split("\t") if "\t" in line else line.split()
        if n == 1 and parts[0].lower() in ("qid", "query-id", "query_id"):
            continue
        columns = columns or len(parts)
        if len(parts) != columns or columns not in (3, 4):
            raise UsageError(f"{path}:{n}: expected 'qid docid rel' (BEIR) or 'qid iteration docid rel' (TREC) on every"
                             f" line, found {len(parts)} column{'s' if len(parts) != 1 else ''}"
                             + (f" after lines of {columns}" if len(parts) != columns else ""))
        try:
            qid, did, rel = parts[0], parts[-2], float(parts[-1])
        except ValueError:
            rel = math.nan
        if not math.isfinite(rel):  # (a grade of inf or 1e999 raised OverflowError: QA round 62 L2)
            raise UsageError(f"{path}:{n}: expected 'qid docid rel' with a finite number as grade")
        # a fraction is kept, a graded relevance (QA round 145-G F4: 0.5 was truncated to 0, and the query said to
        # be judged with "every grade 0"); a whole number is an int, as BEIR reads it
        rel = int(rel) if rel.is_integer() else rel
        grades = out.setdefault(qid, {})
        if did in grades and grades[did] != rel:
            raise UsageError(f"{path}:{n}: query {qid!r} and document {did!r} were judged {grades[did]} on line "
                             f"{first_line[qid, did]} and {rel} here; which grade holds cannot be told",
                             hint="Keep one judgement of each query–document pair.")
        first_line.setdefault((qid, did), n)
        grades[did] = rel
    return out


def unjudged_note(qrels: dict[str, dict[str, int]], query_ids: set[str], qrels_file: str) -> str | None:
    """A one-line warning about the queries ``qrels`` judges with no relevant document (no grade above 0), which no
    metric can score and the evaluation leaves out (``None`` when there is none; queries the file does not judge at
    all are left out as BEIR does, without a word: a collection's queries file often holds another split's)."""
    zero = [qid for qid, grades in qrels.items()
            if qid in query_ids and grades and not any(g > 0 for g in grades.values())]
    if not zero:
        return None
    return (f"warning: {qrels_file}: {len(zero)} quer{'y is' if len(zero) == 1 else 'ies are'} judged with no relevant"
            f" document (no grade above 0): not scored ({', '.join(zero[:5])}{', …' if len(zero) > 5 else ''})")


def load_collection(root: Path, *, corpus: str = "corpus.jsonl", queries: str = "queries.jsonl",
                    qrels: str = "qrels.tsv", name: str | None = None) -> Collection:
    """Load a collection folder (or a variant of it through other file names).

    Judgements naming a query or a document the files do not hold are kept as read (scored as BEIR
    scores them: a judged document that is not in the corpus can never be found), listed in
    :attr:`Collection.unknown_qrels` and warned of in :attr:`Collection.warnings` (QA round 62 L1).

    Args:
        root: the collection folder.
        corpus: corpus file name (e.g. ``corpus_sent.jsonl``).
        queries: queries file name (e.g. ``queries_title.jsonl``).
        qrels: qrels file name (e.g. ``qrels_tr2en.tsv``).
        name: label; default the folder name.

    Returns:
        Collection.

    Raises:
        UsageError: a file is missing or malformed (see :func:`read_records`, :func:`read_qrels`): among
            others a duplicate corpus or query id, a query without text, an empty corpus.
    """
    root = Path(root)
    docs = {}
    for d in read_records(root / corpus, kind="corpus"):
        docs[str(d["id"])] = {**d, "title": d.get("title") or "", "text": d.get("text") or ""}
    qs = {}
    for q in read_records(root / queries, kind="queries"):
        qs[str(q["id"])] = {**q, "text": q["text"]}
    judged = read_qrels(root / qrels)
    unknown = unknown_judgements(judged, set(qs), set(docs))
    note = unknown_qrels_note(unknown, set(qs), set(docs), str(root / qrels), queries, corpus)
    zero = unjudged_note(judged, set(qs), str(root / qrels))
    return Collection(name or root.name, docs, qs, judged, unknown, [n for n in (note, zero) if n])


def unknown_judgements(qrels: dict[str, dict[str, int]], query_ids: set[str] | None,
                       doc_ids: set[str]) -> list[tuple[str, str]]:
    """``[(query id, doc id)]`` of the judgements of ``qrels`` naming a query that is not in ``query_ids``
    (``None``: not checked) or a document that is not in ``doc_ids``, in file order."""
    return [(qid, did) for qid, rel in qrels.items() for did in rel
            if (query_ids is not None and qid not in query_ids) or did not in doc_ids]


def unknown_qrels_note(unknown: list[tuple[str, str]], query_ids: set[str] | None, doc_ids: set[str],
                       qrels_file: str, queries_file: str, corpus_file: str) -> str | None:
    """A one-line warning about judgements naming queries or documents the collection does not hold (``None``
    when there is none): how many, and the first few (QA round 62 L1; cf. the gold track's missing targets).

    Args:
        unknown: from :func:`unknown_judgements`.
        query_ids: the queries' ids (``None``: not checked).
        doc_ids: the corpus ids.
        qrels_file, queries_file, corpus_file: the files, as the message names them.
    """
    if not unknown:
        return None
    qs = list(dict.fromkeys(q for q, _d in unknown if query_ids is not None and q not in query_ids))
    ds = [f"{q}: {d}" for q, d in unknown if d not in doc_ids]

    def few(ids: list[str]) -> str:
        return ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")

    parts = []
    if qs:
        parts.append(f"{len(qs)} quer{'y' if len(qs) == 1 else 'ies'} not in {queries_file} ({few(qs)}), never asked")
    if ds:
        parts.append(f"{len(ds)} judged document(s) not in {corpus_file} ({few(ds)}), which cannot be found")
    return f"warning: {qrels_file}: {len(unknown)} judgement(s) name what the collection does not hold: " + "; ".join(parts)


def subset(coll: Collection, *, doc_filter=None, query_filter=None, name: str | None = None) -> Collection:
    """A track of a collection: keep the documents and queries the filters accept.

    Args:
        coll: the collection.
        doc_filter: ``f(record) -> bool`` over corpus records (e.g. ``lang == "en"``).
        query_filter: ``f(record) -> bool`` over query records.
        name: label of the track.

    Returns:
        Collection whose qrels are restricted to the kept queries and documents.
    """
    docs = {k: v for k, v in coll.corpus.items() if doc_filter is None or doc_filter(v)}
    qs = {k: v for k, v in coll.queries.items() if query_filter is None or query_filter(v)}
    qrels = {q: {d: g for d, g in rel.items() if d in docs} for q, rel in coll.qrels.items() if q in qs}
    return Collection(name or coll.name, docs, qs, {q: r for q, r in qrels.items() if r})


# -- vaults -------------------------------------------------------------------------------------------------------------
@dataclass
class VaultBuild:
    """A vault made (or reused) for evaluation.

    Attributes:
        vault: the ``_dream_context`` folder.
        slug_to_id: dreamdb slug (file name without ``.md``) → corpus id.
        rebuilt: whether the files were (re)written in this call.
        seconds: time spent writing/copying the files (0 when reused).
        note: why a cached copy was not reused though written for these documents (its files changed since), or
            ``None``.
    """

    vault: Path
    slug_to_id: dict[str, str]
    rebuilt: bool
    seconds: float
    note: str | None = None

    def corpus_id(self, doc_id: str) -> str | None:
        """Map a hit's ``type/slug`` back to its corpus id (``None`` for a document not from the corpus)."""
        return self.slug_to_id.get(doc_id.split("/", 1)[-1])


def _yaml_str(s: str) -> str:
    # A JSON string is a valid YAML double-quoted scalar.
    return json.dumps(s, ensure_ascii=False)


def render_markdown(title: str, text: str) -> str:
    """The markdown file of one corpus document: frontmatter ``title:`` (if any) and the text as body.

    Args:
        title: document title ("" → no title line; dreamdb then falls back to the slug).
        text: document body.

    Returns:
        The file content.
    """
    head = f"title: {_yaml_str(title)}\n" if title else ""
    return f"---\n{head}---\n\n{text.rstrip()}\n"


def _files(vault: Path) -> list:
    """``[count, total bytes, digest]`` of the files under ``vault`` (hidden ones left out, as they hold no note), the
    digest a SHA-256 of each one's path and size: what the manifest records of a vault as written, checked at each
    reuse (QA round 135-D F1: a file deleted or added; 137 F1: one renamed, which count and size missed)."""
    listing = []
    for dirpath, dirnames, filenames in os.walk(vault):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not name.startswith("."):
                path = os.path.join(dirpath, name)
                try:
                    listing.append((os.path.relpath(path, vault), os.lstat(path).st_size))
                except OSError:
                    continue
    digest = hashlib.sha256("\n".join(f"{rel}\t{size}" for rel, size in sorted(listing)).encode("utf-8",
                                                                                              "surrogatepass"))
    return [len(listing), sum(size for _rel, size in listing), digest.hexdigest()]


def _cached(dest: Path, key: str) -> tuple[dict | None, str | None]:
    """The manifest of the vault converted into ``dest`` for ``key``, or ``None`` when there is none to reuse: none
    written, not JSON, another key, or not the shape this module writes (QA round 117-B F3: a list, or one without
    ``slug_to_id``, failed the set on every later run), which makes the vault be converted again; with a note when
    the manifest is of ``key`` but the vault's files are no longer those written, in count or total size (QA round
    135-D F1: a note deleted from the copy left 7 documents of 8 scored, no word; a report written into it was
    indexed), or it records none (a manifest of an earlier dreamdb: made again once, without a word)."""
    try:
        man = json.loads((dest / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(man, dict) or not isinstance(man.get("slug_to_id"), dict):
        return None, None
    if man.get("key") != key or not (dest / VAULT_DIR).is_dir() or not isinstance(man.get("files"), list) \
            or len(man["files"]) != 3:  # (a manifest of an earlier dreamdb: no digest, QA round 138 F4)
        return None, None
    found = _files(dest / VAULT_DIR)
    if found != man["files"]:
        (n, size), (was_n, was_size) = found[:2], (man["files"] + [0, 0])[:2]
        how = (f"{n} files, {size:,} bytes; written: {was_n} files, {was_size:,} bytes" if (n, size) != (was_n, was_size)
               else f"{n} files, {size:,} bytes as written, but a file renamed or another in its place")
        return None, f"the cached copy {dest / VAULT_DIR} was changed since it was written ({how}): made again"
    return man, None


def _forget(dest: Path) -> None:
    """Remove the manifest of ``dest`` before its vault is rewritten: a rewrite interrupted (Ctrl-C) left the vault
    half written under the manifest of the one before, which the next run of those documents took as complete, and
    scored (QA round 122-C F1: 3,869 of SciFact's 5,183 abstracts, nDCG 0.579, exit 0). The manifest is written last."""
    (dest / MANIFEST).unlink(missing_ok=True)


def _clear_for_rewrite(dest: Path) -> Path:
    """Make way for the vault of ``dest`` to be written anew: its manifest removed first (:func:`_forget`), then the
    ``_dream_context`` folder an earlier run left, made writable before it is removed (a copy of read-only data).
    Returns that folder's path (no longer existing)."""
    vault = dest / VAULT_DIR
    _forget(dest)
    if vault.exists():
        make_writable(vault)
        shutil.rmtree(vault)
    return vault


def _write_manifest(dest: Path, key: str, slug_to_id: dict[str, str], source: str) -> None:
    tmp = dest / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps({"key": key, "source": source, "slug_to_id": slug_to_id, "files": _files(dest / VAULT_DIR)},
                              ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, dest / MANIFEST)


def corpus_to_vault(docs: list[tuple[str, str, str]], dest: Path, *, source: str = "") -> VaultBuild:
    """Write a corpus as a dreamdb vault ``dest/_dream_context/knowledge/d000000.md …`` (cached).

    Args:
        docs: ``(corpus id, title, text)`` in a fixed order (the order gives the safe ids).
        dest: cache folder for this collection/track (created; ``_dream_context`` and
            ``manifest.json`` inside it are owned by this function).
        source: free-text provenance stored in the manifest.

    Returns:
        VaultBuild; files are rewritten only if the documents changed.
    """
    dest = Path(dest)
    h = hashlib.sha256(f"convert-v{CONVERT_VERSION}\n".encode())
    for did, title, text in docs:
        h.update(json.dumps([did, title, text], ensure_ascii=False).encode())
    key = h.hexdigest()
    man, note = _cached(dest, key)
    if man:
        return VaultBuild(dest / VAULT_DIR, man["slug_to_id"], False, 0.0)
    t0 = time.perf_counter()
    vault = _clear_for_rewrite(dest)
    kdir = vault / "knowledge"
    kdir.mkdir(parents=True)
    width = max(6, len(str(len(docs))))
    slug_to_id = {}
    for i, (did, title, text) in enumerate(docs):
        slug = f"d{i:0{width}d}"
        slug_to_id[slug] = did
        (kdir / f"{slug}.md").write_text(render_markdown(title, text), encoding="utf-8")
    _write_manifest(dest, key, slug_to_id, source)
    return VaultBuild(vault, slug_to_id, True, time.perf_counter() - t0, note)


def _tree_key(src: Path) -> str:
    h = hashlib.sha256(f"copy-v{CONVERT_VERSION}\n".encode())
    for p in sorted(src.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(src)).encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def make_writable(root: Path) -> None:
    """Give the user write permission on ``root`` and everything under it (and search permission on its folders),
    symlinks left as they are: a copy of a read-only tree (the shared evaluation data) that is written to. Best
    effort on the entries under ``root``."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            try:
                mode = os.lstat(p).st_mode
                if not stat.S_ISLNK(mode):
                    os.chmod(p, mode | stat.S_IWUSR | (stat.S_IXUSR if stat.S_ISDIR(mode) else 0))
            except OSError:
                pass
    os.chmod(root, os.stat(root).st_mode | stat.S_IWUSR)


def copy_vault(src: Path, dest: Path, *, into: str = "", slug_map: bool = True) -> VaultBuild:
    """Copy a folder into ``dest/_dream_context/<into>`` (cached by content), writable, never touching ``src``.

    Used for the realistic paths: the dreamcontext vault itself (``into=""``;
    ``src`` is the ``_dream_context`` folder) and the eips_ercs ``vault/``
    notes (``into="knowledge"``).

    Args:
        src: the folder to copy.
        dest: cache folder (owns ``_dream_context`` and ``manifest.json`` inside it).
        into: sub-folder of the vault receiving the copy.
        slug_map: record slug → slug for every ``*.md`` (the file names are the corpus ids).

    Returns:
        VaultBuild.

    Raises:
        UsageError: ``src`` is not a folder.
    """
    src, dest = Path(src), Path(dest)
    if not src.is_dir():
        raise UsageError(f"Not a folder: {src}")
    key = _tree_key(src) + f":{into}"
    man, note = _cached(dest, key)
    if man:
        return VaultBuild(dest / VAULT_DIR, man["slug_to_id"], False, 0.0)
    t0 = time.perf_counter()
    vault = _clear_for_rewrite(dest)
    target = vault / into if into else vault
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, target, ignore=shutil.ignore_patterns(".dreamdb"))
    make_writable(vault)
    slugs = {p.name[:-3]: p.name[:-3] for p in target.rglob("*.md")} if slug_map else {}
    _write_manifest(dest, key, slugs, str(src))
    return VaultBuild(vault, slugs, True, time.perf_counter() - t0, note)


# -- scoring ------------------------------------------------------------------------------------------------------------
def score_beir(ranked: list[str], qrels: dict[str, int], k: int = 10) -> dict:
    """Per-query BEIR metrics over a ranked list of corpus ids.

    Args:
        ranked: corpus ids, best first.
        qrels: {corpus id: grade} of the query.
        k: cut-off of MRR and nDCG.

    Returns:
        ``r@1/3/5/10`` (fraction of relevant found, BEIR's Recall@k), ``mrr``
        (MRR@k), ``ndcg@10`` (graded, trec_eval's linear gains) and ``rank`` of the
        first relevant document (or ``None``).
    """
    rel = {d for d, g in qrels.items() if g > 0}
    return {
        "r@1": M.recall_at(ranked, qrels, 1), "r@3": M.recall_at(ranked, qrels, 3),
        "r@5": M.recall_at(ranked, qrels, 5), "r@10": M.recall_at(ranked, qrels, 10),
        "mrr": M.mrr_at(ranked, rel, k), "ndcg@10": M.ndcg_at(ranked, qrels, k),
        "rank": M.first_relevant_rank(ranked[:k], rel),
    }


def run_queries(search, queries: list[tuple[str, str]], qrels: dict[str, dict[str, int]], *, k: int = 10,
                progress=None) -> dict:
    """Run ``search(text) -> [corpus id]`` over every query, timing each, and score it.

    Args:
        search: the system under test; returns corpus ids best first.
        queries: ``(qid, text)``.
        qrels: qid → {corpus id: grade}.
        k: how many results to ask for and score.
        progress: optional ``f(n)`` called after each query.

    Returns:
        ``{"rows": [per query], "metrics": {n, r@1.., mrr, ndcg@10} (recalls ×100),
        "latency_ms": {mean, p50, p90}}``.
    """
    import time as _t

    rows, lat = [], []
    for qid, text in queries:
        t0 = _t.perf_counter()
        ranked = search(text)
        lat.append((_t.perf_counter() - t0) * 1000)
        rows.append({"id": qid, "query": text, "top": ranked[:3], **score_beir(ranked[:k], qrels.get(qid, {}), k)})
    return {"rows": rows, "metrics": mean_metrics(rows), "latency_ms": M.latency_summary(lat)}


def mean_metrics(rows: list[dict]) -> dict:
    """Mean of per-query metrics: recalls as percentages, MRR and nDCG as fractions.

    Args:
        rows: per-query dicts with ``r@1/3/5/10``, ``mrr``, ``ndcg@10``.

    Returns:
        ``{"n", "r@1", "r@3", "r@5", "r@10", "mrr", "ndcg@10"}``.
    """
    n = len(rows)
    if not n:
        return {"n": 0, "r@1": 0.0, "r@3": 0.0, "r@5": 0.0, "r@10": 0.0, "mrr": 0.0, "ndcg@10": 0.0}
    out = {"n": n}
    for m in ("r@1", "r@3", "r@5", "r@10"):
        out[m] = 100.0 * sum(r[m] for r in rows) / n
    for m in ("mrr", "ndcg@10"):
        out[m] = sum(r[m] for r in rows) / n
    return out
