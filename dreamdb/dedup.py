"""Semantic dedup gate (SPEC §4): is a new knowledge/feature document a duplicate?

The candidate (title, description, content) is chunked exactly like an indexed
document (:func:`dreamdb.embeddings.chunk.chunk_document`), its chunks are
embedded as passages, and each existing document scores the max cosine over
all candidate-chunk × document-chunk pairs. Verdicts (SPEC §4 reference
thresholds, overridable):

* ``MERGE``  – top ≥ ``merge`` (0.97) and top1 − top2 ≥ ``margin`` (0.02):
  one clear near-copy exists; update it instead (with the candidate's text: a
  cosine cannot see a changed number or an inserted "not", QA round 97-C).
* ``REVIEW`` – top ≥ ``review`` (0.91): similar documents exist; look first.
* ``CREATE`` – otherwise.

dreamdb adds one condition to SPEC §4's MERGE: every chunk of the candidate has a near-copy
(≥ ``merge``) among the top document's chunks. The max over chunk pairs lets one copied section
stand for the whole candidate, so a note with thousands of new words around a copy of an
existing one was MERGE at 0.996 (QA round 97-C F4); it is REVIEW, and the result counts the
chunks matched (``chunks_matched``); when the candidate's chunks are the note's own text under another title
(the title begins each chunk, and moves a short chunk's cosine), the reason says only the title differs (QA round
143-C F2); a chunk with a near-copy whose text is not the note's is said to differ (QA round 145-F F4). ``identical`` says the candidate's chunk texts are exactly
the top document's (its title included): the one case where nothing new would be merged.
Changelog entries (``dreamdb remember``) have no vectors, so the gate never compares them
(``types_not_compared``); it is meant for knowledge and feature notes (SPEC §4).

It advises only: nothing in the vault or index changes, except that each
decision is appended as one JSON line to ``dedup.log.jsonl`` in the index
folder (time, candidate title, verdict and its reason, neighbours, thresholds, model id, what was not compared, and
in ``notes`` what the decision may miss: an index compared as it is, which its sync could not bring up to the vault),
rotated past :data:`LOG_MAX_BYTES`.

The result also says what was *not* compared (QA round 57): the candidate's text past
:data:`~dreamdb.embeddings.chunk.MAX_CHUNKS_PER_DOCUMENT` chunks (≈ 48k words; ``candidate_truncated``
and the compared share of its words), and the indexed documents whose current text has no vectors
for the model (new or changed since the last refresh: ``documents_not_compared``,
``documents_outdated``), which a caller that does not refresh first gets.
"""

from __future__ import annotations

import json
import math
import os
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from dreamdb.arguments import flags, whole_number
from dreamdb.errors import UsageError
from dreamdb.reinstall import require_same_install

require_same_install()  # (loaded when first needed: not from another version installed since; QA round 132-E F1)

#: SPEC §4 reference thresholds (cosine similarity of e5 passage vectors).
MERGE_THRESHOLD = 0.97
MARGIN = 0.02
REVIEW_THRESHOLD = 0.91
#: File (in the index folder) the decisions are appended to.
LOG_FILE_NAME = "dedup.log.jsonl"

LOG_MAX_BYTES = 1 << 20
"""Size past which the decision log is moved to ``dedup.log.jsonl.1`` (the one before it deleted) and begun
again, as the prompt hook's log is (:data:`dreamdb.hook.LOG_MAX_BYTES`): it grew without bound (QA round 97-C F5)."""


@dataclass
class DedupResult:
    """A dedup decision.

    Attributes:
        verdict: ``"MERGE"``, ``"REVIEW"`` or ``"CREATE"``.
        neighbours: up to ``top`` existing documents as (doc_id ``type/slug``, title, cosine), best first.
        thresholds: {"merge", "margin", "review"} used.
        model_id: the model the scores come from.
        candidate_chunks: how many chunks the candidate was cut into.
        log_path: where the decision was logged (None if logging failed or was off).
        candidate_truncated: the candidate is longer than the chunk cap
            (:data:`~dreamdb.embeddings.chunk.MAX_CHUNKS_PER_DOCUMENT`): its tail was not compared,
            so a copy of a note there is not found (QA round 57 M3: it said nothing).
        candidate_words: words of the candidate's description and body (a word longer than
            :data:`~dreamdb.embeddings.chunk.MAX_CHUNK_CHARS` once per so many characters begun, as its chunks cut it:
            :func:`~dreamdb.embeddings.chunk.count_words`; QA round 147-C F1, a share of 12800% was said).
        compared_words: of those, the words in the chunks compared (all unless truncated).
        documents_not_compared: indexed documents with no vector for the model (new or edited since the
            last refresh: an edit drops a document's chunks until it is re-chunked): they could not be neighbours.
        documents_outdated: indexed documents compared by only some of their chunks (an interrupted
            refresh) or by chunks of an older chunker.
        same_title: doc_ids of indexed documents (changelog entries aside) whose title or file's own name is the
            candidate's title as a slug (``Sleep consolidation`` names ``feature/sleep-consolidation``, and
            ``notes`` both ``knowledge/notes`` and ``knowledge/notes-2`` of two files named ``notes.md``; a title
            written as a doc_id or path, ``knowledge/notes`` or ``notes.md``, names them by its file name): such a
            candidate gets at least REVIEW, whatever the cosines (:func:`same_named`).
        chunks_matched: of the candidate's chunks, those with a near-copy (cosine ≥ ``merge``) among the top
            neighbour's chunks; a MERGE needs all of them (see the module docstring).
        identical: the candidate's chunk texts are exactly the top neighbour's (title included).
        excluded: doc_ids left out of the comparison (``exclude``: the indexed note the candidate was read from).
        paths: ``{doc_id: absolute path of its source file}`` of the neighbours (for the next step: an update).
        archived: doc_ids of the neighbours whose file is in an archive folder (a ``.`` name, indexed with
            ``DREAMDB_INCLUDE_ARCHIVES=1``), which dreamdb never edits: a MERGE with one says so (its reason).
        types_not_compared: document types never embedded, so never neighbours (``["changelog"]``).
        read_as_is: the note of an index compared as it is because its sync before the decision could not run
            (:attr:`dreamdb.api.Index.read_as_is`: another process held it, or it cannot be written): vault edits
            since its last sync, a note deleted or changed, may be missing, and a neighbour's file may be gone; else
            ``None``. Logged with the decision; ``embed dedup --json`` gives it among its ``notes`` (QA round 149-C
            F2: a MERGE with a note whose file was gone said nothing machine-readable of it).
        context: the caller's notes of how the decision came to be (:func:`dedup`'s ``context``: ``embed dedup``'s
            note of another process's refresh it waited for), logged with the decision (QA round 152-B F2).
        refresh_running: another process was refreshing the index's embeddings as the decision was made
            (:func:`dreamdb.embeddings.store.refresh_running`): the documents not compared or compared in part are
            said to wait for it, not to be new or edited since the last refresh (QA round 152-B F3).
        compared_by: what the candidate was compared by when its content holds no text of its own
            (:func:`~dreamdb.embeddings.chunk.has_text_to_embed`: a frontmatter alone, markup or encoded data only),
            ``"its title"`` or ``"its title and description"``: a note says so (QA round 157-G F5: CREATE, with
            ``candidate_words`` 0 and no note); else ``None`` (no content given: the title and description alone are
            compared by design).
    """

    verdict: str
    neighbours: list[tuple[str, str, float]]
    thresholds: dict
    model_id: str = ""
    candidate_chunks: int = 0
    log_path: str | None = None
    reason: str = field(default="")
    candidate_truncated: bool = False
    candidate_words: int = 0
    compared_words: int = 0
    documents_not_compared: int = 0
    documents_outdated: int = 0
    same_title: list[str] = field(default_factory=list)
    chunks_matched: int = 0
    identical: bool = False
    excluded: list[str] = field(default_factory=list)
    paths: dict = field(default_factory=dict)
    types_not_compared: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    read_as_is: str | None = None
    context: list[str] = field(default_factory=list)
    refresh_running: bool = False
    compared_by: str | None = None
    refresh_command: str = field(default="dreamdb embed refresh", compare=False, repr=False)
    """The command a note names to embed what was not compared (the vault named where ``dreamdb`` run in the working
    folder would not find it: :meth:`dreamdb.api.Index._command`; QA round 156-D F1)."""

    @property
    def compared_share(self) -> float:
        """Share of the candidate's words that were compared (1.0 unless truncated; 1.0 for no words)."""
        return self.compared_words / self.candidate_words if self.candidate_words else 1.0

    def notes(self) -> list[str]:
        """Sentences on what was not compared (for stderr in text mode; empty when everything was)."""
        out = []
        if self.compared_by:
            out.append(f"the candidate's content holds no text of its own to compare (a frontmatter alone, markup, or"
                       f" encoded data only): it was compared by {self.compared_by} alone.")
        if self.candidate_truncated:
            from dreamdb.embeddings.chunk import MAX_CHUNKS_PER_DOCUMENT

            out.append(f"the candidate was cut at {MAX_CHUNKS_PER_DOCUMENT} chunks (the cap per document): only its "
                       f"first {self.compared_words:,} of {self.candidate_words:,} words "
                       f"({self.compared_share:.0%}) were compared, and a note copied further on is not found;"
                       " split the draft to compare the rest.")
        if self.documents_not_compared or self.documents_outdated:
            from dreamdb.output import count_noun

            parts = []
            if self.documents_not_compared:
                parts.append(f"{count_noun(self.documents_not_compared, 'indexed document')} not compared ("
                             + ("" if self.refresh_running else "new or changed since the last refresh: ")
                             + "no vectors for the model yet)")
            if self.documents_outdated:
                parts.append(f"{count_noun(self.documents_outdated, 'indexed document')} compared in part or as"
                             " chunked by an older chunker")
            if self.refresh_running:  # (QA round 152-B F3: of a first refresh under way, "changed since the last")
                out.append("; ".join(parts) + ": another dreamdb process is refreshing the embeddings now; run this"
                           " again once it is done to compare them as they are now.")
            else:
                out.append("; ".join(parts) + f": run `{self.refresh_command}` to compare them as they are now.")
        return out

    def as_dict(self) -> dict:
        """JSON-ready mapping (scores rounded to 6 decimals, the compared share to 4)."""
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "neighbours": [{"doc_id": d, "title": t, "score": round(s, 6), "path": self.paths.get(d),
                            "archived": d in self.archived} for d, t, s in self.neighbours],
            "thresholds": self.thresholds,
            "model_id": self.model_id,
            "candidate_chunks": self.candidate_chunks,
            "chunks_matched": self.chunks_matched,
            "identical": self.identical,
            "candidate_truncated": self.candidate_truncated,
            "candidate_words": self.candidate_words,
            "compared_words": self.compared_words,
            "compared_share": round(self.compared_share, 4),
            "documents_not_compared": self.documents_not_compared,
            "documents_outdated": self.documents_outdated,
            "same_title": list(self.same_title),
            "excluded": list(self.excluded),
            "types_not_compared": list(self.types_not_compared),
            "log_path": self.log_path,
        }


def decide(scores: list[float], *, merge: float = MERGE_THRESHOLD, margin: float = MARGIN,
           review: float = REVIEW_THRESHOLD) -> tuple[str, str]:
    """Verdict and reason from the neighbours' scores (best first; a lone neighbour is ahead by any margin)."""
    if not scores:
        return "CREATE", "no indexed document has vectors"
    top1 = scores[0]
    # (a lone neighbour has no next to be close to: ahead by any --margin, up to its 2.0; QA round 157-G F2 found it
    # REVIEW "only 1.8006 ahead of the next, < 2.0", of a next at -1.0 that no document has, as 126-A F11e the reason)
    lead = top1 - scores[1] if len(scores) > 1 else math.inf
    if top1 >= merge and lead >= margin:
        return "MERGE", f"top {top1:.4f} ≥ {merge} and " + (
            f"ahead of the next by {lead:.4f} ≥ {margin}" if len(scores) > 1 else "the only document compared")
    if top1 >= review:
        why = f"top {top1:.4f} ≥ {review}"
        if top1 >= merge:
            why += f" (≥ {merge}, but only {lead:.4f} ahead of the next, < {margin})"
        return "REVIEW", why
    return "CREATE", f"top {top1:.4f} < {review}"


def same_named(conn, title: str) -> list[str]:
    """The doc_ids of indexed documents (changelog entries aside: their titles are generated) whose file's own name
    (the ``.md`` file's name without it, :func:`dreamdb.store.sync.natural_doc_id`: never the ``-2`` a same-named file's
    id gets; a memory section has none of its own) or title, made a slug (:func:`dreamdb.vault.parse.slugify`: case,
    spaces and punctuation folded), is ``title`` made a slug, or, when ``title`` is written as a doc_id or a path,
    the file name it ends with (without ``.md``) made one; in doc_id order. ``title`` is read so when it ends with
    ``.md`` (``recall-engine-v2.md``, ``knowledge/x.md``) or its part before the first ``/`` is a document type
    (any of :data:`~dreamdb.vault.discover.DOCUMENT_TYPES`, held by the vault or not: QA round 147-B F2 found
    ``bookmark/x`` read as a title in a vault without bookmarks, where ``insight/x`` named the note ``x``) or a top
    folder of the vault's indexed files (``knowledge/x``, ``feature/x``, ``core/x``; any case): a title with a ``/``
    of its own (``Why we use a reverse proxy/server``, ``TCP/IP``) is a title, and QA round 145-F F3 found it named
    the note ``server``. QA round 74 F11: a candidate titled ``sleep-consolidation`` or ``Linked
    repos`` was CREATE beside the very notes of that name, the title alone reaching cosines of 0.88–0.90 (under
    REVIEW's 0.91). QA round 143-C F1: the id's slug was compared, so of two files named ``notes.md`` the second
    (``knowledge/notes-2``) was left out, and ``--title notes-2`` named it."""
    if not title or not title.strip():
        return []
    from dreamdb.store.sync import NAMED_BY_SECTION, natural_doc_id
    from dreamdb.vault.discover import DOCUMENT_TYPES

    rows = conn.execute("SELECT doc_id, type, source_path, title FROM documents WHERE type != 'changelog'").fetchall()
    name = title.strip()
    if name.lower().endswith(".md") or ("/" in name and name.split("/", 1)[0].lower() in (
            set(DOCUMENT_TYPES) | {path.split("/", 1)[0].lower() for _d, _t, path, _t2 in rows if "/" in path})):
        name = name.rsplit("/", 1)[-1]  # (a doc_id or a path: knowledge/recall-engine-v2, recall-engine-v2.md)
        name = name[:-3] if name.lower().endswith(".md") else name
    wanted = {w for w in (_slug(title), _slug(name)) if w != "section"}
    if not wanted:
        return []
    return sorted(doc_id for doc_id, doc_type, path, doc_title in rows
                  if _slug(doc_title) in wanted or (doc_type not in NAMED_BY_SECTION  # (QA 76 F4: 0.soul-2026-h2)
                                                    and _slug(natural_doc_id(doc_type, path).split("/", 1)[1])
                                                    in wanted))


def _slug(text: str) -> str:
    """:func:`dreamdb.vault.parse.slugify` with ``_`` read as ``-``: ``licensing_policy`` names
    ``licensing-policy`` (QA round 97-C F7: CREATE, no same title); and Turkish ``ı`` read as ``i``, as tags,
    statuses and synonyms are matched: the capital of ``ı`` is ``I``, which lowercases to ``i`` (QA round 143-H F2:
    ``DAĞITIM SÜRECİ`` did not name the note ``Dağıtım Süreci``)."""
    from dreamdb.vault.parse import slugify

    return slugify(text.replace("_", " ")).replace("ı", "i")


def check_thresholds(*, merge: float, margin: float, review: float) -> tuple[float, float, float]:
    """Raise UsageError (nothing is scored or logged) unless the thresholds can all be met: ``merge`` and
    ``review`` cosines within [-1, 1], ``margin`` within [0, 2], ``merge`` not below ``review``; return them as
    Python floats ``(merge, margin, review)``.

    A threshold above 1 was taken as "never" (QA round 54 L9: ``--merge 2`` ran, and no MERGE could come of it);
    a near copy's float32 cosine may exceed 1.0 by a rounding step, so 1 itself is met by an exact copy. The
    library checks, not only the CLI, so that a Python caller gets the same refusal. Any real number is taken
    (numpy's ``float32``, a ``Fraction``) and given back as a float, which the result and the decision log hold
    (QA round 145-F F7: a ``float32`` passed, then failed the log's JSON after the embedding, the decision lost).

    Returns:
        ``(merge, margin, review)`` as floats.

    Raises:
        UsageError: a threshold is not a number, or out of its range, or ``merge`` < ``review``.
    """
    from numbers import Real

    for name, v, default in (("merge", merge, MERGE_THRESHOLD), ("margin", margin, MARGIN),
                             ("review", review, REVIEW_THRESHOLD)):
        hint = (f"Give --{name} a number between {'0 and 2' if name == 'margin' else '-1 and 1'} (the default is"
                f" {default}).")  # (QA round 156-D F3: none)
        if isinstance(v, bool) or not isinstance(v, Real):
            raise UsageError(f"--{name} must be a number, got {v!r}; no comparison was made.", hint=hint)
        if v != v:  # NaN: every comparison with it is false
            raise UsageError(f"--{name} must be a number, got nan; no comparison was made.", hint=hint)
    for name, v, default in (("merge", merge, MERGE_THRESHOLD), ("review", review, REVIEW_THRESHOLD)):
        if not -1.0 <= v <= 1.0:
            raise UsageError(f"--{name} is a cosine similarity threshold: it must be between -1 and 1, got {v:g};"
                             " no comparison was made.", hint=f"The default is {default} (SPEC §4); 1 is met only"
                                                              " by a copy.")
    if not 0.0 <= margin <= 2.0:
        raise UsageError(f"--margin is a difference of two cosines: it must be between 0 and 2, got {margin:g};"
                         " no comparison was made.", hint=f"The default is {MARGIN} (SPEC §4).")
    if merge < review:
        raise UsageError(f"--merge {merge:g} is below --review {review:g}: a MERGE needs a closer neighbour than a"
                         " REVIEW; no comparison was made.",
                         hint=f"Give --merge at least --review (defaults: {MERGE_THRESHOLD} and {REVIEW_THRESHOLD}).")
    return float(merge), float(margin), float(review)


def coverage(conn, model_id: str, doc: int | None = None) -> dict:
    """How the indexed documents (or the one of ``documents.id`` ``doc``) stand for a dedup with ``model_id``
    (cheap: one pass over documents).

    A dedup that does not refresh first (``embed dedup --if-present``, QA round 57 M2) compares against
    the vectors there are; this says what that leaves out. Documents of
    :data:`~dreamdb.embeddings.chunk.DENSE_EXCLUDED_TYPES` (never embedded) and documents without text
    are not counted.

    Returns:
        {"compared": documents with at least one vector of the model, "not_compared": documents with
        none (new or edited since the last refresh, or not embedded with this model), "outdated": compared
        ones with chunks lacking a vector or chunked by an older chunker}.

    Raises:
        DriverError: the index has no vector tables.
    """
    from dreamdb.embeddings.chunk import CHUNKER_VERSION, DENSE_EXCLUDED_TYPES
    from dreamdb.embeddings.store import _require_tables

    _require_tables(conn)
    excluded = sorted(DENSE_EXCLUDED_TYPES)
    row = conn.execute(
        f"""SELECT COALESCE(SUM(has_vec), 0), COALESCE(SUM(NOT has_vec AND (stale OR missing)), 0),
                   COALESCE(SUM(has_vec AND (stale OR missing)), 0)
            FROM (SELECT (s.doc IS NULL OR s.content_hash != d.content_hash OR s.chunker != ?) AS stale,
                         EXISTS (SELECT 1 FROM chunks c JOIN embeddings e ON e.content_hash = c.content_hash
                                 AND e.model_id = ? WHERE c.doc = d.id) AS has_vec,
                         EXISTS (SELECT 1 FROM chunks c WHERE c.doc = d.id AND NOT EXISTS (SELECT 1 FROM embeddings e
                                 WHERE e.content_hash = c.content_hash AND e.model_id = ?)) AS missing
                  FROM documents d LEFT JOIN chunked_documents s ON s.doc = d.id
                  WHERE d.type NOT IN ({','.join('?' * len(excluded))}){' AND d.id = ?' if doc is not None else ''})""",
        (CHUNKER_VERSION, model_id, model_id, *excluded, *(() if doc is None else (doc,)))).fetchone()
    return {"compared": row[0], "not_compared": row[1], "outdated": row[2]}


def _conn_and_log_dir(index_or_conn):
    if hasattr(index_or_conn, "conn") and hasattr(index_or_conn, "index_path"):
        return index_or_conn.conn, Path(index_or_conn.index_path).parent
    from dreamdb.embeddings.store import index_file

    path = index_file(index_or_conn)
    return index_or_conn, (path.parent if path else None)


def dedup(index_or_conn, embedder, *, title: str, description: str = "", content: str = "", top: int = 5,
          merge: float = MERGE_THRESHOLD, margin: float = MARGIN, review: float = REVIEW_THRESHOLD,
          log: bool = True, exclude: list[str] | tuple[str, ...] = (), name: str | None = None,
          context: list[str] | tuple[str, ...] = ()) -> DedupResult:
    """Score a candidate document against the indexed corpus and advise MERGE / REVIEW / CREATE.

    The index's vectors should be current for ``embedder`` (call
    :func:`dreamdb.embeddings.store.refresh` first; the CLI does, except with ``--if-present``): the
    result counts the documents compared by no vector or an outdated one (:func:`coverage`). A candidate
    over :data:`~dreamdb.embeddings.chunk.MAX_CHUNKS_PER_DOCUMENT` chunks is compared by its first ones
    only, and the result says so (``candidate_truncated``, :attr:`DedupResult.compared_share`).

    Args:
        index_or_conn: a :class:`dreamdb.api.Index` or an index connection with sqlite-vec loaded.
        embedder: an :class:`dreamdb.embeddings.model.Embedder` (``model_id``, ``embed_passages``).
        title: candidate title (prepended to each chunk, as for indexed documents); when blank, the title the
            indexer reads from the content's frontmatter (``name``, ``title``, ``claim``) or from ``name``.
        description: candidate description; when empty, the ``description`` (or ``summary``) of the
            content's frontmatter, if it has one, as the indexer reads it (a list's items joined, a number or
            date as written).
        content: candidate markdown: a body, or a whole note, read as the indexer reads a note
            (:func:`read_as_indexed`): its YAML frontmatter is not compared as text (an indexed note's chunks hold
            none), an Excalidraw board by its text elements alone, a base64 ``data:`` URI without its payload.
        top: neighbours reported (1–50).
        merge: MERGE needs top1 ≥ this cosine (default 0.97, SPEC §4).
        margin: … and top1 − top2 ≥ this (default 0.02).
        review: REVIEW needs top1 ≥ this (default 0.91).
        log: append the decision to ``dedup.log.jsonl`` in the index folder.
        exclude: doc_ids never to report as neighbours: the indexed note a draft saved in the vault already is
            (``embed dedup --file`` of a file of the vault: it matched itself at 1.0, QA round 97-C F3).
        name: the candidate's file name or path (``--file``'s), when it has one: read as the indexer reads a file
            of that name (``….excalidraw.md``: an Excalidraw board, whatever its frontmatter).
        context: the caller's notes of how the decision came to be (``embed dedup``'s: another process's refresh
            of the embeddings waited for), logged first in the line's ``notes`` (QA round 152-B F2).

    Returns:
        DedupResult.

    Raises:
        UsageError: empty candidate, ``top`` out of range, thresholds not real numbers, out of range or out of
            order (:func:`check_thresholds`), ``log`` not a bool, ``exclude`` a str, ``title``, ``description``,
            ``content`` or ``name`` neither a str nor None (None is read as ``""``), or not UTF-8.
        DriverError: the index has no vector tables.
        ModelError: the model failed to run.
    """
    from dreamdb.embeddings.chunk import chunk_with_coverage
    from dreamdb.embeddings.store import dense_search

    top = whole_number(top, "top", 1, 50)
    merge, margin, review = check_thresholds(merge=merge, margin=margin, review=review)  # (floats: QA 145-F F7)
    flags(log=log)  # (QA round 107 F4: log="no" logged, and a str exclude was read letter by letter)
    if isinstance(exclude, (str, bytes)):
        raise UsageError(f"exclude must be a list of doc_ids, not one str: {exclude!r}",
                         hint=f"exclude=[{exclude!r}]")
    if isinstance(context, (str, bytes)) or not all(isinstance(note, str) for note in context):
        raise UsageError(f"context must be a list of str (notes), got {context!r}")
    from dreamdb.arguments import text

    # (QA round 145-F F7: title=5, content=None or bytes raised AttributeError or TypeError deep in the reading)
    title, description, content = text(title, "title"), text(description, "description"), text(content, "content")
    name = text(name, "name") or None
    from dreamdb.writes.checks import _require_utf8

    _require_utf8(title=title, description=description, content=content)  # (QA round 65: a title of bytes: exit 70)
    given = bool(content.strip())
    title, description, content = read_as_indexed(title, description, content, name)
    from dreamdb.embeddings.chunk import has_text_to_embed

    compared_by = None
    if given and not has_text_to_embed(content, ""):  # (QA round 157-G F5: compared by its title, silently)
        compared_by = "its title and description" if has_text_to_embed("", description) else "its title"
    chunking = chunk_with_coverage(title, content, description)
    chunks = chunking.chunks
    if not chunks:
        raise UsageError("The candidate has no text (give a title, a description or content).")
    conn, log_dir = _conn_and_log_dir(index_or_conn)
    refresh_command = (index_or_conn._command("embed refresh") if hasattr(index_or_conn, "_command")
                       else "dreamdb embed refresh")
    excluded_ids = {}
    if exclude:
        wanted_out = sorted(set(exclude))
        excluded_ids = dict(conn.execute(
            f"SELECT id, doc_id FROM documents WHERE doc_id IN ({','.join('?' * len(wanted_out))})", wanted_out))
    vecs = embedder.embed_passages([c.text for c in chunks])
    best: dict[int, float] = {}
    # Exact: a document in the overall top-N ranks ≤ N for the candidate chunk giving its max (the excluded
    # documents, at most all of them above it, fetched on top).
    want = top + 1
    for v in vecs:
        for doc, s in dense_search(conn, v, embedder.model_id, want + len(excluded_ids)):
            if doc not in excluded_ids and s > best.get(doc, -2.0):
                best[doc] = s
    ranked = sorted(best.items(), key=lambda ds: (-ds[1], ds[0]))[:want]
    names = {}
    if ranked:
        ids = [d for d, _s in ranked]
        names = {r[0]: (r[1], r[2], r[3]) for r in conn.execute(
            f"SELECT id, doc_id, title, source_path FROM documents WHERE id IN ({','.join('?' * len(ids))})", ids)}
    neighbours = [(names[d][0], names[d][1], float(s)) for d, s in ranked if d in names]
    verdict, reason = decide([s for _d, _t, s in neighbours], merge=merge, margin=margin, review=review)
    if not neighbours and excluded_ids:  # (QA round 145-K F2: "no indexed document has vectors", of a vault whose
        # one note with vectors was the candidate itself, left out)
        reason = (f"no other indexed document has vectors to compare with ({', '.join(sorted(excluded_ids.values()))},"
                  " the candidate itself, left out)")
    matched, identical = 0, False
    from dreamdb.embeddings.store import refresh_running

    running = refresh_running(conn)  # (the vectors compared may be a refresh's first ones, not an edit's leftovers)
    if ranked and ranked[0][0] in names:
        matched, identical, retitled, edited = _chunks_matched(conn, embedder.model_id, ranked[0][0], vecs, chunks,
                                                               merge, (title or "").strip())
        if verdict == "MERGE" and matched < len(chunks):
            from dreamdb.output import count_noun

            partly = coverage(conn, embedder.model_id, ranked[0][0])["outdated"]  # (QA round 125-B F3: "adds text")
            missed = len(chunks) - matched
            one = missed == 1
            if retitled and not edited:  # (QA round 143-C F2: a copy under a shorter title was said to add text)
                why = (f"only the title differs (it begins each chunk), and {'that chunk' if one else 'those chunks'}"
                       f" without it {'is' if one else 'are'} the note's: the candidate adds no text")
            elif retitled:  # (QA round 145-F F4: "adds no text" of a draft whose near-copies changed "always" to "not")
                why = (f"{'that chunk' if one else 'those chunks'} without the title (it begins each chunk)"
                       f" {'is' if one else 'are'} the note's, but the text of {count_noun(edited, 'other chunk')}"
                       f" {'differs' if edited == 1 else 'differ'} from the note's, though near by cosine (which cannot"
                       ' see a changed number or an inserted "not")')
            elif partly and running:  # (QA round 152-B F3: "edited since the last refresh" of a first refresh)
                why = ("it was compared in part (another dreamdb process is refreshing the embeddings now, and the"
                       " rest of it has no vectors yet: run this again once it is done), or the candidate adds text")
            elif partly:
                why = (f"it was compared in part (edited since the last refresh: `{refresh_command}` embeds the"
                       " rest), or the candidate adds text")
            else:
                why = "the candidate adds text"
            verdict, reason = "REVIEW", (f"{reason}, but {missed} of the candidate's {len(chunks)} chunks"
                                         f" {'has' if one else 'have'} no near-copy (≥ {merge}) in it: {why}")
        elif verdict == "MERGE" and identical:
            reason += "; its text is identical"
    named = [d for d in same_named(conn, title) if d not in excluded_ids.values()]
    if named:
        from dreamdb.output import some_of

        shown = some_of(named, 3)
        if verdict == "CREATE":
            verdict, reason = "REVIEW", f"{shown} {'has' if len(named) == 1 else 'have'} this title ({reason})"
        else:
            reason += f"; {shown} {'has' if len(named) == 1 else 'have'} this title"
    from dreamdb.vault.discover import in_archive

    sources = {doc_id: source for doc_id, _title, source in names.values()}
    archived = sorted(d for d, _t, _s in neighbours[:top] if in_archive(sources[d]))
    if verdict == "MERGE" and neighbours[0][0] in archived:  # (QA round 145-F F6: "update that note", which refuses)
        reason += (f"; {neighbours[0][0]} is archived ({sources[neighbours[0][0]]}), and dreamdb does not edit"
                   " archive folders: restore it (move the file out of the archive folder) to update it, or create a"
                   " new note")
    from dreamdb.embeddings.chunk import DENSE_EXCLUDED_TYPES

    vault = _vault_root(conn)
    result = DedupResult(verdict=verdict, neighbours=neighbours[:top], reason=reason, same_title=named,
                         thresholds={"merge": merge, "margin": margin, "review": review},
                         model_id=embedder.model_id, candidate_chunks=len(chunks),
                         candidate_truncated=chunking.truncated, candidate_words=chunking.words,
                         compared_words=chunking.kept_words, chunks_matched=matched, identical=identical,
                         excluded=sorted(excluded_ids.values()), types_not_compared=sorted(DENSE_EXCLUDED_TYPES),
                         archived=archived,
                         paths={names[d][0]: (str(Path(vault, names[d][2])) if vault else names[d][2])
                                for d, _s in ranked[:top] if d in names})
    cov = coverage(conn, embedder.model_id)
    result.documents_not_compared, result.documents_outdated = cov["not_compared"], cov["outdated"]
    result.refresh_running = running
    result.compared_by = compared_by
    result.refresh_command = refresh_command
    result.read_as_is = getattr(index_or_conn, "read_as_is", None)  # (an Index's; a bare connection has no sync)
    result.context = list(context)
    if log and log_dir is not None:
        result.log_path = _append_log(log_dir, title, result)
    return result


def read_as_indexed(title: str, description: str, content: str, name: str | None = None) -> tuple[str, str, str]:
    """The candidate's ``(title, description, body)``, read from ``content`` by the indexer's own reading of a
    markdown note (:func:`dreamdb.vault.parse.parse_markdown`, after :func:`~dreamdb.vault.parse.plain_text`), so
    that a byte copy of an indexed note is chunked as that note was: its frontmatter block left out, its
    description a list's items or a number as the indexer reads them, an Excalidraw board (``excalidraw-plugin`` in
    its frontmatter, or ``name`` ending ``.excalidraw.md``) its text elements alone, a ``data:`` URI without its
    base64 payload. QA round 145-F F1: the gate read the frontmatter itself, kept only a description of text, and
    applied neither of the others, so an exact copy of such a note was REVIEW, not identical.

    ``title`` and ``description`` are the caller's when given (not blank / not empty); else the note's, as indexed
    (a blank title stays blank unless the frontmatter or ``name`` gives one: ``name`` without its ``.md``).
    """
    from dreamdb.vault.parse import parse_markdown, plain_text

    file_name = os.path.basename(name) if name else ""
    (doc,), _warnings = parse_markdown(file_name, "knowledge", plain_text(content))
    return (title if title and title.strip() else doc.title), (description or doc.description), doc.body


def _chunks_matched(conn, model_id: str, doc: int, vecs, chunks, merge: float,
                    title: str = "") -> tuple[int, bool, bool, int]:
    """(How many candidate chunks have a near-copy, cosine ≥ ``merge``, among the chunks of document ``doc``;
    whether the candidate's chunk texts are exactly that document's; whether the candidate's title, ``title``, is
    not the document's and each chunk without a near-copy is, without the title prepended to it, the text of one of
    the document's chunks, QA round 143-C F2; and then how many of the chunks *with* a near-copy are not, without
    the title, the text of one of its chunks: 0 for a copy of the note under another title, which adds no text,
    and more for a draft that changed text in them, which a cosine ≥ ``merge`` cannot tell from a copy: QA round
    145-F F4, "the candidate adds no text" of a draft that changed "must always run" to "must not run"), texts
    compared in composed form (NFC, as the model is given them), scored
    exactly over its chunks with sqlite-vec's cosine, as the neighbours' scores are (:func:`dreamdb.embeddings.store.
    dense_search`): numpy's float32 product gave 0.99999994 for a copy the neighbour scored 1.0, and ``--merge 1``
    said an exact copy added text (QA round 145-F F2)."""
    import numpy as np

    from dreamdb.embeddings.chunk import composed
    from dreamdb.embeddings.store import _as_query, _exact_for_docs

    near = np.array([bool(best) and best[0][1] >= merge  # (the best chunk's cosine; none: a vector with no direction)
                     for best in (_exact_for_docs(conn, _as_query(v), model_id, 1, {doc}) for v in vecs)], dtype=bool)
    # (texts compared in composed form, NFC, as the model is given them: QA round 149-C F1, a decomposed copy of a
    # note was not identical)
    held = {composed(t or "") for (t,) in conn.execute("SELECT text FROM chunks WHERE doc = ?", (doc,))}
    mine = [composed(c.text) for c in chunks]
    identical = bool(held) and held == set(mine)
    own = composed(conn.execute("SELECT title FROM documents WHERE id = ?", (doc,)).fetchone()[0] or "")
    title = composed(title)
    retitled, edited = False, 0
    if not near.all() and held and title != own.strip():
        texts = {_untitled(t, own.strip()) for t in held}
        retitled = all(_untitled(t, title) in texts for t, ok in zip(mine, near) if not ok)
        if retitled:
            edited = sum(_untitled(t, title) not in texts for t, ok in zip(mine, near) if ok)
    return int(near.sum()), identical, retitled, edited


def _untitled(text: str, title: str) -> str:
    """A chunk's ``text`` without the ``title`` :func:`~dreamdb.embeddings.chunk.chunk_with_coverage` prepended to it
    (``"<title>\\n\\n<content>"``, or the title alone)."""
    if title and text.startswith(title + "\n\n"):
        return text[len(title) + 2:]
    return "" if text == title else text


def _vault_root(conn) -> str | None:
    """The vault the index mirrors (``meta.vault``), for the neighbours' paths."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'vault'").fetchone()
    return row[0] if row else None


def _append_log(folder: Path, title: str, result: DedupResult) -> str | None:
    """Append one JSON line; return the log path (None when it cannot be written: the folder not writable, the log
    a link or not a regular file — never followed, QA round 97-C F5 — or the disk full; or a value of the result not
    JSON, which :func:`dedup`'s checks leave none of: the decision is returned whatever its log, QA round 145-F F7).
    The log is rotated past :data:`LOG_MAX_BYTES`."""
    import stat

    path = folder / LOG_FILE_NAME
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        line = json.dumps({
            "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "title": title,
            "verdict": result.verdict,
            "reason": result.reason,
            "neighbours": [{"doc_id": d, "title": t, "score": round(s, 6), "archived": d in result.archived}
                           for d, t, s in result.neighbours],
            "thresholds": result.thresholds,
            "model_id": result.model_id,
            "candidate_chunks": result.candidate_chunks,
            "chunks_matched": result.chunks_matched,
            "identical": result.identical,
            "candidate_truncated": result.candidate_truncated,
            "same_title": result.same_title,
            "excluded": result.excluded,
            "documents_not_compared": result.documents_not_compared,
            "documents_outdated": result.documents_outdated,
            "notes": [*result.context, *([result.read_as_is] if result.read_as_is else []), *result.notes()],
        }, ensure_ascii=False)
        data = (line + "\n").encode("utf-8")
        fd = _open_log(path, flags)
    except (OSError, TypeError, ValueError):  # (TypeError, ValueError: a value json cannot write)
        return None
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_size > LOG_MAX_BYTES and _rotated(path, fd, st):
            os.close(fd)
            fd = -1
            fd = _open_log(path, flags)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:  # (a FIFO, a device: not a log; a file of several
            return None  # names, another's too: QA round 113-A F3, a snapshot's hard link got the line)
        return str(path) if _append_whole(fd, data) else None
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _open_log(path: Path, flags: int) -> int:
    """Open the log to append to, readable too where it may be (to see whether it ends with a newline)."""
    try:
        return os.open(path, (flags & ~os.O_WRONLY) | os.O_RDWR, 0o600)
    except PermissionError:  # (a log the user may write but not read: appended to unrepaired)
        return os.open(path, flags, 0o600)


def _append_whole(fd: int, data: bytes) -> bool:
    """Append ``data`` (one line) to the log open as ``fd`` whole or not at all: under an exclusive lock of the file
    (of processes appending at once, one at a time, as O_APPEND alone kept them), a log whose last line was cut short
    (no newline at its end: a full disk, a file size limit, a process killed mid-write) gets one first, so that the
    cut line stays the only one that is not JSON; and a write that fails or is cut short is truncated back to the
    size the log had, where it wrote part of the line and the next decision's line was joined to that part (QA round
    152-B F1). Returns whether the line was written."""
    try:
        import fcntl
    except ImportError:  # (no flock: the race is taken)
        fcntl = None
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        start = os.fstat(fd).st_size
        if start:
            with suppress(OSError):  # (not readable: appended as it is)
                if os.pread(fd, 1, start - 1) != b"\n":
                    data = b"\n" + data
        written = 0
        try:
            while written < len(data):
                n = os.write(fd, data[written:])
                if n <= 0:
                    raise OSError("short write")
                written += n
        except OSError:
            with suppress(OSError):
                os.ftruncate(fd, start)
            return False
        return True
    finally:
        if fcntl is not None:
            with suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)


def _rotated(path: Path, fd: int, st: os.stat_result) -> bool:
    """Move the full log open as ``fd`` to ``dedup.log.jsonl.1``, if ``path`` still names that very file, under an
    exclusive lock of it: of several processes that found it full, one moves it, and the others, finding another file
    at ``path`` (or theirs gone), append as they are. QA round 98-A F7: a second process moved the fresh log over the
    one just rotated, and the history was lost. Returns whether it was moved."""
    try:
        import fcntl
    except ImportError:  # (no flock: the race is taken)
        fcntl = None
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        now = os.lstat(path)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            return False
        os.replace(path, path.with_name(LOG_FILE_NAME + ".1"))
        return True
    except OSError:
        return False
    finally:
        if fcntl is not None:
            with suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
