"""BM25 and BM25F formulas: small pure functions, the reference the SQL mirrors.

The ranking query (:mod:`dreamdb.ranking.rank`) evaluates the same formulas
inside SQLite for speed; ``tests/test_bm25.py`` checks both against hand-computed
values, and ``--explain`` recomputes each hit's terms with these functions.
"""

from __future__ import annotations

import math

K1 = 1.5
"""BM25 term-frequency saturation (SPEC §2 reference constant)."""

B = 0.75
"""BM25 length normalisation (SPEC §2 reference constant)."""

FIELD_WEIGHTS = {"title": 3.0, "description": 2.0, "tags": 2.0, "body": 1.0}
"""BM25F field weights (SPEC §2, from the reference system dreamcontext v0.24)."""


def idf(n_docs: int, df: int) -> float:
    """Robertson–Spärck Jones IDF with the +1 of Lucene: ln(1 + (N − df + 0.5)/(df + 0.5)).

    Never negative for 0 ≤ ``df`` ≤ ``n_docs`` (SPEC §2; the caller's counts, not checked here). ``n_docs`` = N
    documents, ``df`` = documents containing the term.
    """
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def bm25_term(tf: float, doc_len: float, avg_len: float, idf_value: float, k1: float = K1, b: float = B) -> float:
    """One term's BM25 contribution (Robertson & Zaragoza 2009, eq. 3.15 form).

    idf · tf·(k1 + 1) / (tf + k1·(1 − b + b·dl/avgdl)); 0 when ``tf`` is 0.
    Lengths are in terms after analysis.
    """
    if tf <= 0:
        return 0.0
    norm = (1.0 - b) + (b * doc_len / avg_len if avg_len > 0 else 0.0)
    return idf_value * tf * (k1 + 1.0) / (tf + k1 * norm)


def bm25f_pseudo_tf(tfs: dict[str, float], lengths: dict[str, float], avg_lengths: dict[str, float],
                    weights: dict[str, float] = FIELD_WEIGHTS, b: float = B) -> float:
    """BM25F weighted, per-field length-normalised term frequency.

    tf~ = Σ_f w_f · tf_f / (1 − b + b·len_f/avglen_f)  (Robertson, Zaragoza &
    Taylor 2004, "Simple BM25 extension to multiple weighted fields"; one b for
    every field). A field whose average length is 0 is not length-normalised.
    """
    total = 0.0
    for f, w in weights.items():
        tf = tfs.get(f, 0)
        if tf:
            avg = avg_lengths.get(f, 0.0)
            total += w * tf / ((1.0 - b) + (b * lengths.get(f, 0) / avg if avg > 0 else 0.0))
    return total


def bm25f_term(pseudo_tf: float, idf_value: float, k1: float = K1) -> float:
    """BM25F saturation of a pseudo term frequency: idf · tf~·(k1 + 1)/(tf~ + k1)."""
    if pseudo_tf <= 0:
        return 0.0
    return idf_value * pseudo_tf * (k1 + 1.0) / (pseudo_tf + k1)
