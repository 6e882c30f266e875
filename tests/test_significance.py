"""Paired significance (dreamdb.evaluation.significance) and the report rows built on it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dreamdb.evaluation import significance as SIG
from dreamdb.evaluation import suite


def _exact_by_hand(diffs):
    """The randomization test written out: every sign assignment, one by one."""
    observed = abs(sum(diffs) / len(diffs))
    extreme = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        if abs(sum(s * d for s, d in zip(signs, diffs)) / len(diffs)) >= observed - 1e-12:
            extreme += 1
    return extreme / 2 ** len(diffs)


def test_randomization_p_hand_computed():
    # Sums of ±1 ±2 ±3: 6, 4, 2, 0, 0, -2, -4, -6; only ±6 reach the observed |sum| 6.
    assert SIG.randomization_p([1.0, 2.0, 3.0]) == 0.25
    # Zeros cannot change sign: [1, 0, 0, 1] has |sum| 2 under half of the 16 assignments.
    assert SIG.randomization_p([1.0, 0.0, 0.0, 1.0]) == 0.5
    assert SIG.randomization_p([0.0, 0.0, 0.0]) == 1.0
    assert SIG.randomization_p([]) == 1.0


def test_exact_enumeration_matches_the_written_out_test():
    rng = np.random.default_rng(3)
    for n in (5, 9, 12):
        d = rng.normal(0.05, 0.2, n).round(3).tolist()
        assert SIG.randomization_p(d) == pytest.approx(_exact_by_hand(d), abs=1e-12)


def test_monte_carlo_estimate_is_close_to_the_exact_value():
    # 22 non-zero differences > EXACT_MAX_N: sampled; compared with all 4,194,304 assignments.
    rng = np.random.default_rng(11)
    d = rng.normal(0.04, 0.3, 22)
    assert len(d) > SIG.EXACT_MAX_N
    sums = np.zeros(1)
    for x in d:
        sums = np.concatenate((sums + x, sums - x))
    exact = float(np.mean(np.abs(sums) / 22 >= abs(d.mean()) - 1e-12))
    estimate = SIG.randomization_p(d)
    assert 0.05 < exact < 0.95  # a case where the estimate has something to get right
    assert estimate == pytest.approx(exact, abs=0.02)
    assert SIG.randomization_p(d) == estimate  # seeded: the same figure every time


def test_the_exact_test_counts_only_the_queries_that_differ():
    """QA round 150-G F2: exact enumeration was chosen by the number of queries (≤ 16), so 16 wins and 2 losses
    among 60 gold queries (42 ties, which no sign flip changes) were sampled: 0.0008 for dreamdb's BM25 against
    bm25s in RESULTS.md's run, printed "p < 0.001", where the exact p is 344 / 2^18 = 0.00131, the sign test's
    binomial 2 · (C(18,0) + C(18,1) + C(18,2)) / 2^18. The choice is now by the non-zero differences, which alone
    are enumerated."""
    d = [100.0] * 16 + [-100.0] * 2 + [0.0] * 42  # recall@1 ×100, as the report compares the gold set
    exact = 2 * (1 + 18 + 153) / 2 ** 18
    assert SIG.randomization_p(d) == exact == pytest.approx(0.0013123, abs=1e-7)
    assert SIG.sign_test(d) == (2, 16, pytest.approx(exact))
    assert SIG.randomization_p(list(np.random.default_rng(2).permutation(d))) == exact  # (where the ties are)
    assert suite._fmt_p(SIG.randomization_p(d)) == "0.001"
    # the written-out test over all n, ties included, for a few (2^14 assignments)
    small = [0.5, 0.0, -0.25, 0.0, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1]
    assert SIG.randomization_p(small) == pytest.approx(_exact_by_hand(small), abs=1e-12)
    # 20 non-zero differences are still exact: 1 of 2^20 assignments and its mirror reach all 20 wins
    assert SIG.randomization_p([1.0] * 20 + [0.0] * 280) == 2 / 2 ** 20


def test_clear_difference_gets_the_smallest_estimable_p():
    assert SIG.randomization_p([0.1] * 100) == pytest.approx(1 / (SIG.TRIALS + 1))


def test_bootstrap_interval():
    assert SIG.bootstrap_interval([0.5] * 10) == (0.5, 0.5)
    assert SIG.bootstrap_interval([]) == (0.0, 0.0)
    rng = np.random.default_rng(5)
    d = rng.exponential(0.2, 300) - 0.1
    low, high = SIG.bootstrap_interval(d)
    assert low < d.mean() < high
    # Width ≈ 2 × 1.96 × standard error of the mean for n = 300.
    assert high - low == pytest.approx(2 * 1.96 * d.std() / np.sqrt(len(d)), rel=0.15)
    assert SIG.bootstrap_interval(d) == (low, high)


def test_compare():
    c = SIG.compare([1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0])
    assert (c["n"], c["mean_a"], c["mean_b"], c["delta"], c["p"]) == (4, 0.75, 0.25, 0.5, 0.5)
    assert c["low"] <= 0.5 <= c["high"]
    with pytest.raises(ValueError):
        SIG.compare([1.0], [1.0, 0.0])


def _gold_rows(hits_at_1, category="x"):
    return [{"id": f"q{i}", "category": category, "r@1": float(h), "ndcg@10": float(h)} for i, h in enumerate(hits_at_1)]


def _gold_result(rows):
    return {"rows": rows, "by_category": {"all": _agg(rows), **{c: _agg([r for r in rows if r["category"] == c])
                                                               for c in {r["category"] for r in rows}}}}


def _agg(rows):
    n = len(rows)
    return {"n": n, "r@1": 100.0 * sum(r["r@1"] for r in rows) / n, "r@5": 100.0 * sum(r["r@1"] for r in rows) / n}


def test_comparisons_and_category_floor_on_a_gold_track():
    bm25 = _gold_rows([1, 0, 0, 1]) + _gold_rows([1, 1], category="turkish")
    hybrid = _gold_rows([1, 1, 1, 1]) + _gold_rows([0, 1], category="turkish")
    results = {"sets": {"dreamcontext": {"tracks": {"gold-train": {
        "dreamdb": {"bm25": _gold_result(bm25), "hybrid": _gold_result(hybrid)},
        "bm25s": {"rows": _gold_rows([0, 0, 0, 1]) + _gold_rows([0, 0], category="turkish")}}}}}}
    comps = suite.comparisons(results)
    pairs = [(c["a"], c["b"], c["metric"]) for c in comps]
    assert pairs == [("dreamdb hybrid", "dreamdb bm25", "r@1"), ("dreamdb hybrid", "dreamdb bm25", "ndcg@10"),
                     ("dreamdb bm25", "bm25s", "r@1"), ("dreamdb bm25", "bm25s", "ndcg@10")]
    first = comps[0]
    # recall@1 per query ×100 like the tables: hybrid 5/6, bm25 4/6.
    assert first["mean_a"] == pytest.approx(500 / 6) and first["delta"] == pytest.approx(100 / 6)
    # Per-query differences [0, 100, 100, 0, -100, 0]: ±100 ±100 ±100 never sums to less than 100 in
    # absolute value, so no sign assignment is less extreme than the observed one.
    assert first["p"] == 1.0
    floor = suite._category_floor(results)
    assert len(floor) == 1 and floor[0][2] == "NOT met"
    assert "turkish r@1 50.0 < 100.0" in floor[0][1]


def test_hybrid_is_compared_with_dense_when_both_ran():
    rows = _gold_rows([1, 0, 1])
    track = {"dreamdb": {"bm25": _gold_result(rows), "hybrid": _gold_result(_gold_rows([1, 1, 1])),
                         "dense": _gold_result(_gold_rows([0, 1, 1]))}}
    comps = suite.comparisons({"sets": {"s": {"tracks": {"t": track}}}})
    assert [(c["a"], c["b"]) for c in comps if c["metric"] == "r@1"] == [
        ("dreamdb hybrid", "dreamdb bm25"), ("dreamdb dense", "dreamdb bm25"), ("dreamdb hybrid", "dreamdb dense")]
    last = [c for c in comps if c["metric"] == "r@1"][-1]
    # Differences [+100, 0, 0]: one query decides; every sign assignment is as extreme, p = 1.
    assert last["delta"] == pytest.approx(100 / 3) and last["p"] == 1.0



def test_holm_adjusts_for_the_tests_made_together():
    """QA round 86-C M1: 64 comparisons, none corrected for the others. Holm (1979): the i-th smallest of m p-values
    times m − i + 1, kept non-decreasing, capped at 1; in the order given."""
    assert SIG.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert SIG.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert SIG.holm([]) == []
    rows = [{"p": p} for p in (0.038, 0.2, 0.001)]
    adjusted = SIG.holm([r["p"] for r in rows])
    assert adjusted == pytest.approx([0.076, 0.2, 0.003]) and all(a >= r["p"] for a, r in zip(adjusted, rows))


def test_sign_test_is_the_exact_binomial():
    """The paired sign test behind "faster per query": ties are left out, p is two-sided and exact."""
    from math import comb

    below, above, p = SIG.sign_test([-1.0] * 8 + [1.0] * 2 + [0.0] * 5)
    assert (below, above) == (8, 2) and p == pytest.approx(2 * sum(comb(10, i) for i in range(3)) / 2 ** 10)
    assert SIG.sign_test([0.0, 0.0]) == (0, 0, 1.0)
    assert SIG.sign_test([1.0] * 5 + [-1.0] * 5)[2] == 1.0


def test_the_speed_verdict_pairs_the_queries_and_the_quality_verdict_says_chance():
    """QA round 86-C M2: "faster" was one pass's two p50s compared with <, so it flipped between runs on noise
    (0.12 against 0.12 ms); "≥ bm25s" read 0.841 against 0.840 (p 0.81) as a win with no word of chance."""
    def run(ndcgs, ms):
        rows = [{"ndcg@10": n, "ms": t} for n, t in zip(ndcgs, ms)]
        return {"metrics": {"ndcg@10": float(np.mean(ndcgs))}, "latency_ms": {"p50": float(np.median(ms))}, "rows": rows}

    n = 60
    base = [0.5] * n
    faster = run(base, [0.10] * 50 + [0.30] * 10)
    same = run(base, [0.10 + 0.01 * (i % 2) for i in range(n)])
    bm25s = run(base, [0.105] * n)
    results = {"sets": {"x": {"tracks": {"faster": {"dreamdb": {"bm25": faster}, "bm25s": bm25s},
                                         "even": {"dreamdb": {"bm25": same}, "bm25s": bm25s}}}}}
    verdicts = {label.split(":")[0]: v for label, _m, v in suite.targets_check(results) if "bm25s" in label}
    assert verdicts["x faster"] == ("quality met (within chance, p 1.000), speed met (first on 50 of 60 queries, "
                                    "sign test p < 0.001)"), verdicts
    assert verdicts["x even"].endswith("speed NOT met: no difference beyond chance (dreamdb first on 30 of 60 "
                                       "queries, p 1.000)"), verdicts


def test_figures_that_round_alike_but_differ_are_shown_apart():
    """QA round 143-A F5: "0.841 vs 0.841 … quality NOT met" (the means 0.84055 and 0.84100): the figures of a target
    get as many more decimals as tell them apart; equal figures, and figures apart already, keep their usual form."""
    def run(ndcg):
        return {"metrics": {"ndcg@10": ndcg}, "latency_ms": {"p50": 0.2}}

    results = {"sets": {"x": {"tracks": {"t": {"dreamdb": {"bm25": run(0.84055)}, "bm25s": run(0.841)},
                                         "u": {"dreamdb": {"bm25": run(0.8412)}, "bm25s": run(0.8412)},
                                         "v": {"dreamdb": {"bm25": run(0.7)}, "bm25s": run(0.841)}}}}}
    measured = {label.split(":")[0]: (m, v) for label, m, v in suite.targets_check(results)}
    assert measured["x t"][0].startswith("0.8406 vs 0.8410;") and "quality NOT met" in measured["x t"][1]
    assert measured["x u"][0].startswith("0.841 vs 0.841;") and measured["x u"][1].startswith("quality met")
    assert measured["x v"][0].startswith("0.700 vs 0.841;")
    assert suite._fmt_apart("r@1", 66.66, 66.7) == ("66.66", "66.70")
    # a threshold target: 0.6699 against ≥ 0.67 is not "0.670 … NOT met"
    track = {"dreamdb": {"bm25": {"metrics": {"ndcg@10": 0.6699}, "by_category": {}}}}
    got = suite.targets_check({"modes": ["bm25"], "sets": {"scifact": {"tracks": {"test": track}}}})
    assert ("SciFact BM25 nDCG@10 ≥ 0.67", "0.6699", "NOT met") in got, got
