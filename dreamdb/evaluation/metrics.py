"""IR metrics over ranked lists, binary or graded relevance.

Definitions follow the reference harness (shared/eval/README.md) and TREC /
BEIR conventions:

* recall@k (known-item form used by the gold sets): 1 if any relevant
  document is in the top k, else 0; averaged over queries (×100 in reports).
* MRR@k: 1 / rank of the first relevant document within the top k, else 0.
* nDCG@k: Σ rel/log2(rank + 1) over the top k, divided by the ideal DCG of
  the query's judged documents (Järvelin & Kekäläinen 2002), with trec_eval's
  linear gain, as ``pytrec_eval``'s ``ndcg_cut`` and so BEIR's published figures
  compute it (QA round 66 L3: the exponential gain 2^rel − 1 of Burges et al.
  2005, used here before, is ranx's ``ndcg_burges``; with binary judgements,
  as every collection here has, the two agree).
* nDCG@k of a known-item query (the gold sets' protocol, "nDCG@10 (binary)" of
  the first hit): 1/log2(rank + 1) of the first relevant document within the top
  k, else 0 (:func:`first_hit_ndcg_at`).
"""

from __future__ import annotations

import math
import statistics


def first_relevant_rank(ranked: list[str], relevant) -> int | None:
    """1-based rank of the first document of ``ranked`` in ``relevant``, or ``None``."""
    for i, d in enumerate(ranked, 1):
        if d in relevant:
            return i
    return None


def hit_at(ranked: list[str], relevant, k: int) -> float:
    """1.0 if a relevant document is in the top ``k``, else 0.0."""
    r = first_relevant_rank(ranked[:k], relevant)
    return 1.0 if r is not None else 0.0


def recall_at(ranked: list[str], relevant: dict | set, k: int) -> float:
    """Fraction of the relevant documents found in the top ``k`` (BEIR's Recall@k)."""
    rel = {d for d in relevant if (relevant[d] if isinstance(relevant, dict) else 1) > 0}
    if not rel:
        return 0.0
    return len(rel.intersection(ranked[:k])) / len(rel)


def mrr_at(ranked: list[str], relevant, k: int = 10) -> float:
    """Reciprocal rank of the first relevant document within the top ``k`` (0 if none)."""
    r = first_relevant_rank(ranked[:k], relevant)
    return 1.0 / r if r else 0.0


def ndcg_at(ranked: list[str], relevant: dict | set, k: int = 10) -> float:
    """nDCG@k with trec_eval's linear gains (a document's grade); ``relevant`` is ``{doc: grade}`` or a set (grade 1);
    grades ≤ 0 gain nothing."""
    grades = relevant if isinstance(relevant, dict) else {d: 1 for d in relevant}
    dcg = sum(max(grades.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def first_hit_ndcg_at(ranked: list[str], relevant, k: int = 10) -> float:
    """nDCG@k of a known-item query: 1/log2(rank + 1) of the first document of ``ranked`` in ``relevant`` within
    the top ``k`` (the ideal DCG of one relevant item is 1), else 0.0. The gold sets' protocol
    (shared/eval/README.md: "find the rank of the first hit in expected ∪ alt; report … nDCG@10 (binary)"):
    a query with several acceptable targets is answered by any one of them (QA round 66 M2: all of them were
    taken as relevant, so a query answered at rank 1 scored 0.61 when its alternative was missing)."""
    r = first_relevant_rank(ranked[:k], relevant)
    return 1.0 / math.log2(r + 1) if r else 0.0


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (0–100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    xs = sorted(values)
    pos = (len(xs) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def latency_summary(ms: list[float]) -> dict:
    """``{mean, p50, p90}`` of per-query latencies (ms)."""
    if not ms:
        return {"mean": 0.0, "p50": 0.0, "p90": 0.0}
    return {"mean": statistics.fmean(ms), "p50": percentile(ms, 50), "p90": percentile(ms, 90)}
