"""Gold JSONL sets (shared/eval format): ``{id, query, expected[], alt[], category, lang}`` per line.

Protocol (shared/eval/README.md, same as the reference harness): take the top
10, find the rank of the first hit in expected ∪ alt; report recall@1/3/5,
MRR and nDCG@10 (binary), per category and overall, plus latency; the clock
is fixed (2026-08-18T00:00:00Z for the dreamcontext snapshot); captures are
excluded.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from dreamdb.errors import UsageError
from dreamdb.evaluation import beir
from dreamdb.evaluation import metrics as M
from dreamdb.output import has_visible

GOLD_CLOCK = "2026-08-18T00:00:00Z"
"""The dreamcontext snapshot's date: recency and expiry replay exactly."""

OVERALL = "all"
"""The group of every query in :func:`aggregate`'s output; no category or language may bear this name."""

NO_CATEGORY = "uncategorised"
"""The category of a query whose ``category`` is missing, null or empty (a group of its own)."""

NO_LANG = "unknown"
"""The language of a query whose ``lang`` is missing, null or empty (a group of its own)."""


@dataclass
class GoldQuery:
    """One gold query. ``targets`` = expected ∪ alt (``type/slug``)."""

    id: str
    query: str
    expected: list[str]
    alt: list[str]
    category: str
    lang: str

    @property
    def targets(self) -> set[str]:
        """expected ∪ alt."""
        return set(self.expected) | set(self.alt)


def missing_targets(queries: list[GoldQuery], doc_ids: set[str]) -> list[tuple[str, str, bool]]:
    """``[(query id, target, unanswerable)]`` for each target of ``queries`` that is no document of the index
    (``doc_ids``), in query order; ``unanswerable`` when none of that query's targets is one. A typo in a gold
    file (or a snapshot missing a note) otherwise shows only as a lower recall (QA round 59 L11)."""
    out = []
    for q in queries:
        absent = sorted(t for t in q.targets if t not in doc_ids)
        out.extend((q.id, t, len(absent) == len(q.targets)) for t in absent)
    return out


def _strings(d: dict, key: str) -> list[str]:
    """``d[key]`` as a list of non-empty strings (missing: ``[]``); anything else is refused (a bare string
    would be read as its characters)."""
    value = d.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{key!r} must be a list of type/slug strings, got {value!r}"[:200])
    return value


def _group(d: dict, key: str, default: str) -> str:
    """``d[key]`` as a group name: missing, null or blank → ``default``; ``"all"`` (the overall row's name,
    which would count the query twice there, QA round 62 M1) or a non-string is refused."""
    value = d.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string, got {value!r}"[:200])
    if value.strip().lower() == OVERALL:
        raise ValueError(f"{key!r} may not be {value!r}: that is the name of the overall row (leave it out and the"
                         f" query counts in {default!r})")
    return value


def load_gold(path: Path) -> list[GoldQuery]:
    """Read a gold JSONL file.

    A query without a ``category`` (missing, null or empty) is in the category :data:`NO_CATEGORY`, one without
    a ``lang`` in :data:`NO_LANG`: each a group of its own in ``by_category``/``by_lang``, beside the overall
    ``all`` row that counts every query once.

    Raises:
        UsageError: missing, unreadable or non-UTF-8 file, no query in it, or a malformed line (with its
            number): not a JSON object, ``query`` not a non-empty string, ``expected``/``alt`` not lists of
            strings, no target at all, a ``category``/``lang`` that is not a string or is ``all``, an ``id``
            an earlier line has, or a lone surrogate (``\\ud800``) in any string. Lines end at ``\\n`` only.
    """
    try:
        lines = beir.jsonl_lines(beir.read_text(path))  # (not splitlines: QA round 135-D F4; nor a lone CR: 137 F4)
    except OSError as exc:
        raise UsageError(f"Cannot read gold set {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"Gold set {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    out = []
    seen: dict[str, int] = {}  # id → its line (QA round 64: a duplicate id was scored twice)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            if not isinstance(d, dict):
                raise ValueError("a line must be a JSON object")
            bad = beir.surrogate_message(line, d)  # (QA round 135-D F2: found at the end of the run, exit 70)
            if bad:
                raise ValueError(bad)
            qid = d.get("id")  # (QA round 68 L5: null, a list or an object became "None", "['a']"; none, "('id')")
            if isinstance(qid, bool) or not isinstance(qid, (str, int)) or not str(qid).strip():
                raise ValueError(f"'id' must be a non-empty string or an integer, got {qid!r}"[:200])
            if str(d["id"]) in seen:
                raise ValueError(f"duplicate id {str(d['id'])!r} (already on line {seen[str(d['id'])]})"[:200])
            if not isinstance(d.get("query"), str) or not has_visible(d["query"]):
                raise ValueError(f"'query' must be a non-empty string, got {d.get('query')!r}"[:200])
            expected, alt = _strings(d, "expected"), _strings(d, "alt")
            if not expected and not alt:
                raise ValueError("no target: 'expected' and 'alt' are both empty")
            out.append(GoldQuery(str(d["id"]), d["query"], expected, alt, _group(d, "category", NO_CATEGORY),
                                 _group(d, "lang", NO_LANG)))
            seen[out[-1].id] = n
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}:{n}: not a gold query ({exc})") from None
    if not out:
        raise UsageError(f"Gold set {path} holds no query")
    return out


def score_ranked(ranked: list[str], targets: set[str]) -> dict:
    """Per-query metrics of the protocol (shared/eval/README.md: the rank of the first hit in expected ∪ alt within
    the top 10): r@1/3/5/10, mrr, ndcg@10 (binary, of that first hit: :func:`dreamdb.evaluation.metrics.first_hit_ndcg_at`),
    rank."""
    return {
        "r@1": M.hit_at(ranked, targets, 1), "r@3": M.hit_at(ranked, targets, 3), "r@5": M.hit_at(ranked, targets, 5),
        "r@10": M.hit_at(ranked, targets, 10), "mrr": M.mrr_at(ranked, targets, 10),
        "ndcg@10": M.first_hit_ndcg_at(ranked, targets, 10), "rank": M.first_relevant_rank(ranked[:10], targets),
    }


def aggregate(rows: list[dict], key: str | None) -> dict[str, dict]:
    """Mean metrics overall (``all``) and per ``key`` value (e.g. category, lang).

    Every row counts once in ``all``; a row whose ``key`` value is itself ``all`` (which :func:`load_gold`
    refuses) is only in that overall row, never twice (QA round 62 M1).
    """
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[OVERALL].append(r)
        if key and str(r[key]) != OVERALL:
            groups[str(r[key])].append(r)
    out = {}
    for g, rs in groups.items():
        n = len(rs)
        out[g] = {"n": n, **{m: 100.0 * sum(r[m] for r in rs) / n for m in ("r@1", "r@3", "r@5", "r@10")},
                  "mrr": sum(r["mrr"] for r in rs) / n, "ndcg@10": sum(r["ndcg@10"] for r in rs) / n}
    return out


def run_gold(index, queries: list[GoldQuery], *, mode: str = "bm25", now: str = GOLD_CLOCK, k: int = 10) -> dict:
    """Run every query through ``index.recall`` and score it.

    Returns:
        ``{"rows": [per-query dict], "by_category": {...}, "by_lang": {...}, "latency_ms": {mean, p50, p90}}``.
    """
    index.sync()
    rows, lat = [], []
    for q in queries:
        t0 = time.perf_counter()
        hits = index.recall(q.query, top=k, mode=mode, now=now, exclude_types="bookmark")
        lat.append((time.perf_counter() - t0) * 1000)
        ranked = [h.doc_id for h in hits]
        rows.append({"id": q.id, "query": q.query, "category": q.category, "lang": q.lang, "top": ranked[:3],
                     **score_ranked(ranked, q.targets)})
    return {"rows": rows, "by_category": aggregate(rows, "category"), "by_lang": aggregate(rows, "lang"),
            "latency_ms": M.latency_summary(lat)}
