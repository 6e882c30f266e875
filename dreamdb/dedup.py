"""Semantic dedup gate (SPEC §4): is a new knowledge/feature document a duplicate?

The candidate (title, description, content) is chunked exactly like an indexed
document (:func:`dreamdb.embeddings.chunk.chunk_document`), its chunks are
embedded as passages, and each existing document scores the max cosine over
all candidate-chunk × document-chunk pairs. Verdicts (SPEC §4 reference
thresholds, overridable):

* ``MERGE``  – top ≥ ``merge`` (0.97) and top1 − top2 ≥ ``margin`` (0.02):
  one clear near-copy exists; update it instead.
* ``REVIEW`` – top ≥ ``review`` (0.91): similar documents exist; look first.
* ``CREATE`` – otherwise.

It advises only: nothing in the vault or index changes, except that each
decision is appended as one JSON line to ``dedup.log.jsonl`` in the index
folder (time, candidate title, verdict, neighbours, thresholds, model id).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from dreamdb.errors import UsageError

#: SPEC §4 reference thresholds (cosine similarity of e5 passage vectors).
MERGE_THRESHOLD = 0.97
MARGIN = 0.02
REVIEW_THRESHOLD = 0.91
#: File (in the index folder) the decisions are appended to.
LOG_FILE_NAME = "dedup.log.jsonl"


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
    """

    verdict: str
    neighbours: list[tuple[str, str, float]]
    thresholds: dict
    model_id: str = ""
    candidate_chunks: int = 0
    log_path: str | None = None
    reason: str = field(default="")

    def as_dict(self) -> dict:
        """JSON-ready mapping (scores rounded to 6 decimals)."""
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "neighbours": [{"doc_id": d, "title": t, "score": round(s, 6)} for d, t, s in self.neighbours],
            "thresholds": self.thresholds,
            "model_id": self.model_id,
            "candidate_chunks": self.candidate_chunks,
            "log_path": self.log_path,
        }


def decide(scores: list[float], *, merge: float = MERGE_THRESHOLD, margin: float = MARGIN,
           review: float = REVIEW_THRESHOLD) -> tuple[str, str]:
    """Verdict and reason from the neighbours' scores (best first)."""
    if not scores:
        return "CREATE", "no indexed document has vectors"
    top1 = scores[0]
    top2 = scores[1] if len(scores) > 1 else -1.0
    if top1 >= merge and top1 - top2 >= margin:
        return "MERGE", f"top {top1:.4f} ≥ {merge} and ahead of the next by {top1 - top2:.4f} ≥ {margin}"
    if top1 >= review:
        why = f"top {top1:.4f} ≥ {review}"
        if top1 >= merge:
            why += f" (≥ {merge}, but only {top1 - top2:.4f} ahead of the next, < {margin})"
        return "REVIEW", why
    return "CREATE", f"top {top1:.4f} < {review}"


def check_thresholds(*, merge: float, margin: float, review: float) -> None:
    """Raise UsageError (nothing is scored or logged) unless the thresholds can all be met: ``merge`` and
    ``review`` cosines within [-1, 1], ``margin`` within [0, 2], ``merge`` not below ``review``.

    A threshold above 1 was taken as "never" (QA round 54 L9: ``--merge 2`` ran, and no MERGE could come of it);
    a near copy's float32 cosine may exceed 1.0 by a rounding step, so 1 itself is met by an exact copy. The
    library checks, not only the CLI, so that a Python caller gets the same refusal.

    Raises:
        UsageError: a threshold is not a number, or out of its range, or ``merge`` < ``review``.
    """
    from numbers import Real

    for name, v in (("merge", merge), ("margin", margin), ("review", review)):
        if isinstance(v, bool) or not isinstance(v, Real):
            raise UsageError(f"--{name} must be a number, got {v!r}; no comparison was made.")
        if v != v:  # NaN: every comparison with it is false
            raise UsageError(f"--{name} must be a number, got nan; no comparison was made.")
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


def _conn_and_log_dir(index_or_conn):
    if hasattr(index_or_conn, "conn") and hasattr(index_or_conn, "index_path"):
        return index_or_conn.conn, Path(index_or_conn.index_path).parent
    from dreamdb.embeddings.store import index_file

    path = index_file(index_or_conn)
    return index_or_conn, (path.parent if path else None)


def dedup(index_or_conn, embedder, *, title: str, description: str = "", content: str = "", top: int = 5,
          merge: float = MERGE_THRESHOLD, margin: float = MARGIN, review: float = REVIEW_THRESHOLD,
          log: bool = True) -> DedupResult:
    """Score a candidate document against the indexed corpus and advise MERGE / REVIEW / CREATE.

    The index's vectors must be current for ``embedder`` (call
    :func:`dreamdb.embeddings.store.refresh` first; the CLI does).

    Args:
        index_or_conn: a :class:`dreamdb.api.Index` or an index connection with sqlite-vec loaded.
        embedder: an :class:`dreamdb.embeddings.model.Embedder` (``model_id``, ``embed_passages``).
        title: candidate title (prepended to each chunk, as for indexed documents).
        description: candidate description; when empty, the ``description`` (or ``summary``) of the
            content's frontmatter, if it has one.
        content: candidate markdown: a body, or a whole note whose YAML frontmatter is then read as the
            indexer reads it (its block is not compared as text: an indexed note's chunks hold none).
        top: neighbours reported (1–50).
        merge: MERGE needs top1 ≥ this cosine (default 0.97, SPEC §4).
        margin: … and top1 − top2 ≥ this (default 0.02).
        review: REVIEW needs top1 ≥ this (default 0.91).
        log: append the decision to ``dedup.log.jsonl`` in the index folder.

    Returns:
        DedupResult.

    Raises:
        UsageError: empty candidate, ``top`` out of range, thresholds out of range or out of order
            (:func:`check_thresholds`).
        DriverError: the index has no vector tables.
        ModelError: the model failed to run.
    """
    from dreamdb.embeddings.chunk import chunk_document
    from dreamdb.embeddings.store import dense_search

    if not isinstance(top, int) or not 1 <= top <= 50:
        raise UsageError(f"top must be an integer from 1 to 50, got {top!r}")
    check_thresholds(merge=merge, margin=margin, review=review)
    from dreamdb.vault.fences import find_block

    if find_block(content) is not None:  # (YAML is imported only for a note that has a frontmatter block)
        from dreamdb.vault.frontmatter import split_frontmatter

        meta, body, _warning = split_frontmatter(content)
        if body is not content:  # a closed block (an unclosed one, or rules around text, stay text as when indexed)
            content = body
            given = meta.get("description") or meta.get("summary")
            description = description or (given.strip() if isinstance(given, str) else "")
    chunks = chunk_document(title, content, description)
    if not chunks:
        raise UsageError("The candidate has no text (give a title, a description or content).")
    conn, log_dir = _conn_and_log_dir(index_or_conn)
    vecs = embedder.embed_passages([c.text for c in chunks])
    best: dict[int, float] = {}
    # Exact: a document in the overall top-N ranks ≤ N for the candidate chunk giving its max.
    want = top + 1
    for v in vecs:
        for doc, s in dense_search(conn, v, embedder.model_id, want):
            if s > best.get(doc, -2.0):
                best[doc] = s
    ranked = sorted(best.items(), key=lambda ds: (-ds[1], ds[0]))[:want]
    names = {}
    if ranked:
        ids = [d for d, _s in ranked]
        names = {r[0]: (r[1], r[2]) for r in conn.execute(
            f"SELECT id, doc_id, title FROM documents WHERE id IN ({','.join('?' * len(ids))})", ids)}
    neighbours = [(names[d][0], names[d][1], float(s)) for d, s in ranked if d in names]
    verdict, reason = decide([s for _d, _t, s in neighbours], merge=merge, margin=margin, review=review)
    result = DedupResult(verdict=verdict, neighbours=neighbours[:top], reason=reason,
                         thresholds={"merge": merge, "margin": margin, "review": review},
                         model_id=embedder.model_id, candidate_chunks=len(chunks))
    if log and log_dir is not None:
        result.log_path = _append_log(log_dir, title, result)
    return result


def _append_log(folder: Path, title: str, result: DedupResult) -> str | None:
    """Append one JSON line; return the log path (None when the folder is not writable)."""
    path = folder / LOG_FILE_NAME
    line = json.dumps({
        "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "title": title,
        "verdict": result.verdict,
        "neighbours": [{"doc_id": d, "title": t, "score": round(s, 6)} for d, t, s in result.neighbours],
        "thresholds": result.thresholds,
        "model_id": result.model_id,
    }, ensure_ascii=False)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    except OSError:
        return None
    return str(path)
