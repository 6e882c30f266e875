"""Paired significance of a difference between two systems on the same queries.

A mean over 60 or 300 queries moves by chance: is hybrid's 0.696 nDCG@10 on
SciFact really above BM25's 0.678, or is dreamdb's BM25 really below bm25s's
0.686? Both systems answer the same queries, so the test is paired, on the
per-query differences d_i = metric_A(q_i) − metric_B(q_i):

* **p-value**: Fisher's randomization (permutation) test, two-sided. Under the
  null hypothesis that A and B are interchangeable, each d_i is as likely to
  have the opposite sign; p is the share of the 2^n sign assignments whose
  mean difference is at least as far from 0 as the one observed. A zero
  difference is the same under either sign, so the share is that of the
  2^m assignments of the m non-zero ones: computed exactly for
  m ≤ :data:`EXACT_MAX_N` (e.g. 18 of 60 gold queries answered apart), else
  estimated from :data:`TRIALS` random sign assignments, with the
  (count + 1)/(trials + 1) estimate that is never 0 (Phipson & Smyth 2010).
  Smucker, Allan & Carterette (CIKM 2007) recommend this test for IR
  evaluation.
* **95 % interval** of the mean difference: percentile bootstrap over the
  queries (Efron & Tibshirani 1993, ch. 13), :data:`TRIALS` resamples.

Both are deterministic: the random generator is seeded (:data:`SEED`), so a
report regenerated from the same per-query rows prints the same figures.
"""

from __future__ import annotations

import numpy as np

TRIALS = 10_000
"""Random sign assignments (randomization test) and resamples (bootstrap); at 10,000 the Monte
Carlo error of a p-value near 0.05 is about ±0.002 (binomial standard error)."""
EXACT_MAX_N = 20
"""Up to this many non-zero differences, the randomization test enumerates all 2^m sign assignments of them
(1,048,576 at most: 8 MB of sums, ≈ 10 ms). The choice was by the number of queries (16): 16 wins
and 2 losses among 60 queries, an exact p of 344 / 2^18 = 0.00131, were sampled (QA round 150-G F2)."""
SEED = 20071106
"""Seed of the random generator (any fixed value: the figures must replay exactly)."""
_CHUNK = 1_000
"""Sign assignments / resamples drawn per block (memory: _CHUNK × n float64)."""
_TIE = 1e-12
"""Mean differences this close to the observed one count as equally extreme (float rounding)."""


def randomization_p(diffs, *, trials: int = TRIALS, seed: int = SEED) -> float:
    """Two-sided p-value of the paired randomization test on per-query differences.

    Zero differences change no sign assignment's mean: with m non-zero ones, p is exact (all 2^m assignments of
    those) when m ≤ :data:`EXACT_MAX_N`, else estimated from ``trials`` random assignments of all n.

    Args:
        diffs: float64[n], metric of system A minus metric of system B, query by query.
        trials: random sign assignments when more than :data:`EXACT_MAX_N` differences are non-zero.
        seed: random generator seed.

    Returns:
        p in (0, 1]; 1.0 when every difference is 0 (or there are none).

    Example:
        >>> randomization_p([1.0, 2.0, 3.0])  # 2 of the 8 sign assignments reach |mean| 2
        0.25
    """
    d = np.asarray(diffs, dtype=np.float64)
    n = len(d)
    observed = abs(float(d.mean())) if n else 0.0
    if n == 0 or observed <= _TIE:
        return 1.0
    nonzero = d[d != 0.0]
    m = len(nonzero)
    if m <= EXACT_MAX_N:
        sums = np.zeros(1)
        for x in nonzero:  # float64[2^k]: the sums of the first k differences under every assignment of their signs
            sums = np.concatenate((sums + x, sums - x))
        return float(np.count_nonzero(np.abs(sums / n) >= observed - _TIE)) / 2 ** m
    # (sampled over all n: the zeros change no mean, and the figures stay those the seed always gave)
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, trials, _CHUNK):
        size = min(_CHUNK, trials - start)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        extreme += int(np.count_nonzero(np.abs(signs @ d) / n >= observed - _TIE))
    return (extreme + 1) / (trials + 1)


def bootstrap_interval(diffs, *, level: float = 0.95, trials: int = TRIALS, seed: int = SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``diffs``.

    Args:
        diffs: float64[n] per-query differences.
        level: coverage, e.g. 0.95.
        trials: resamples of the n queries (with replacement).
        seed: random generator seed.

    Returns:
        ``(low, high)``; ``(0.0, 0.0)`` for no differences.
    """
    d = np.asarray(diffs, dtype=np.float64)
    n = len(d)
    if n == 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = np.empty(trials)
    for start in range(0, trials, _CHUNK):
        size = min(_CHUNK, trials - start)
        means[start:start + size] = d[rng.integers(0, n, size=(size, n))].mean(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return float(low), float(high)


def compare(a: list[float], b: list[float], *, level: float = 0.95) -> dict:
    """Paired comparison of two systems' per-query values (same queries, same order).

    Args:
        a, b: per-query metric values of systems A and B (e.g. nDCG@10 in [0, 1]).
        level: coverage of the interval.

    Returns:
        ``{"n", "mean_a", "mean_b", "delta", "low", "high", "p"}``: delta = mean(a) − mean(b), its
        bootstrap interval [low, high] and the randomization test's p-value.

    Raises:
        ValueError: ``a`` and ``b`` differ in length.
    """
    if len(a) != len(b):
        raise ValueError(f"paired comparison needs the same queries: {len(a)} against {len(b)} values")
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    d = x - y
    low, high = bootstrap_interval(d, level=level)
    return {"n": len(d), "mean_a": float(x.mean()) if len(d) else 0.0, "mean_b": float(y.mean()) if len(d) else 0.0,
            "delta": float(d.mean()) if len(d) else 0.0, "low": low, "high": high, "p": randomization_p(d)}


def holm(ps: list[float]) -> list[float]:
    """Holm's step-down adjustment of ``ps`` for testing them all at once (S. Holm, "A simple sequentially
    rejective multiple test procedure", Scandinavian Journal of Statistics 6, 1979): the i-th smallest p-value
    times (m − i + 1), kept non-decreasing in that order, capped at 1. An adjusted p-value below α bounds the
    family-wise error rate by α over the m tests, with no assumption on how they depend on one another.

    Returns:
        the adjusted p-values, in the order of ``ps``.
    """
    m = len(ps)
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda j: ps[j])):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out


def sign_test(diffs) -> tuple[int, int, float]:
    """The paired sign test on per-query differences (W. J. Dixon and A. M. Mood, "The statistical sign test",
    JASA 41, 1946): how many are below 0 and above 0 (ties, within :data:`_TIE`, left out) and the exact two-sided
    binomial p-value of so uneven a split under p = ½. For "faster per query" it asks only which system answered
    each query first, so one slow outlier query weighs as one query.

    Returns:
        ``(below, above, p)``; p = 1.0 with no untied difference.

    Example:
        >>> sign_test([-1.0, -2.0, -0.5, 3.0])[:2]
        (3, 1)
    """
    from math import comb

    d = np.asarray(diffs, dtype=np.float64)
    below, above = int(np.count_nonzero(d < -_TIE)), int(np.count_nonzero(d > _TIE))
    n = below + above
    if n == 0:
        return below, above, 1.0
    k = min(below, above)
    tail = sum(comb(n, i) for i in range(k + 1)) / 2 ** n
    return below, above, min(1.0, 2 * tail)
