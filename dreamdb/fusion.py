"""Fusion of the BM25 and dense channels (SPEC §3), as pure functions.

Confidence-adaptive fusion, reference constants from dreamcontext v0.24:

* BM25 decisive (top raw score ≥ :data:`DECISIVE_BM25`): score-preserving
  relative fusion — min-max normalise both channels and take
  (1 − λ)·bm25 + λ·dense with λ = :data:`RELATIVE_LAMBDA`, so dense can never
  flip an exact-token win.
* Otherwise weighted reciprocal rank fusion Σ wᵢ/(k + rankᵢ) (Cormack,
  Clarke & Büttcher 2009, k = 60) with BM25 0.6 / dense 0.4, and a pin guard
  that keeps BM25's top-1 first when its rankScore is ≥ 1.35× the runner-up's.
  dreamdb scales the BM25 weight by the query's term coverage: the fraction of
  its terms that occur in the corpus, and at most the fraction that BM25's top
  document contains (:func:`dreamdb.hybrid.top_match_coverage`). A question
  in another language shares only names and numbers with the corpus, and
  BM25's ranking of those few terms should not outvote the multilingual dense
  channel; likewise a top hit that matched two rare words of a five-word
  question (a note in the question's language quoting them, while the answer
  is written in another) is confident about those two words only. No constant
  is involved; when the top document holds every query term the weights are
  the reference's.
* For the same reason BM25's two confidence signals count in proportion to
  the part of the query BM25 could see: it is decisive when top raw score ×
  coverage ≥ 18, and the pin guard needs a lead of 1.35 / coverage. A top hit
  that matched only the names in a foreign-language question is a partial
  match whose lead says little about the words BM25 could not see, while one
  stray unknown word in an exact title barely changes the test. At full
  coverage both are the reference's. Measured with ``python -m eval --set all
  --modes hybrid`` against the reference rule (corpus coverage only): XQuAD paragraphs tr→en nDCG@10
  0.814 → 0.818, en→tr 0.831 → 0.841, SciFact 0.687 → 0.691 (train split
  0.710 → 0.713), gold recall@1 76.7 → 78.3 (Turkish 25.0 → 37.5), no set lower. Turning both signals
  off below full coverage scored a little higher on those sets but lost exact
  titles followed by one unknown word (77 instead of 79 of 80 real-vault titles
  kept first), so the proportional form was kept. Bounding the coverage by the
  top document's (30 Nov 2026, same command): gold recall@1 78.3 → 80.0, SciFact
  0.691 → 0.696, XQuAD paragraphs tr→mixed 0.720 → 0.768, en→mixed 0.757 →
  0.802, en→tr 0.837 → 0.844, sentences en→en 0.869 → 0.878; lower: EIPs
  descriptions 0.934 → 0.932 and Turkish typed without its letters 0.946 → 0.934
  (an ASCII word with no Turkish spelling in the index now counts as uncovered).

* A document written in another language than the query (Turkish and not
  Turkish, as the analyzer tells them) is one BM25 cannot read: its words are
  not the query's, so BM25 leaves it out or ranks it on shared names alone,
  while the multilingual dense channel can judge it. In the weighted RRF its
  BM25 rank is therefore imputed from the channel that can read it: the
  better of its own BM25 rank and its dense rank (a missing rank counts as
  none). Documents in the query's language are fused as before, and so is
  every document of a one-language vault queried in its language; no
  constant is involved. Measured with ``python -m eval --set all --modes
  hybrid`` (1 Dec 2026) against the same code without it: XQuAD paragraphs
  tr→mixed nDCG@10 0.772 → 0.896, en→mixed 0.800 → 0.920 (both now above
  dense alone, 0.880 and 0.906), en→tr 0.847 → 0.853, sentences tr→en 0.714 →
  0.727, en→tr 0.697 → 0.706; gold recall@1 80.0 → 81.7 and recall@5 93.3 →
  95.0 (Turkish 37.5 → 50.0 and 75.0 → 87.5); lower: paragraphs tr→en 0.828 →
  0.826, en→en 0.9794 → 0.9791; SciFact, EIPs and the one-language Turkish
  tracks unchanged. Counting a question typed in Turkish without its letters
  as Turkish (:func:`dreamdb.hybrid.query_is_turkish`) kept Turkish typed in
  ASCII at 0.935 (0.926 when only the stopword test named the language).
  Nothing is imputed for a query that BM25 reads in the other language:
  one translated into it through the lexicon or a loanword, with at least
  as many of its terms found there as in its own language
  (:func:`dreamdb.hybrid.reads_other_language`, 2 Dec 2026; measured there).
  An imputed rank is one BM25's own list has: a cross-language document the
  dense channel ranks deeper than BM25's list is long stays unranked by BM25,
  as a document in the query's language that BM25 did not match is (QA round
  153-B F1: in the example vault the one Turkish note, last of 11 by the dense
  channel for ``prompt hook``, took BM25 rank 11 of a list of 3 and came third
  on both channels' shares, above every English note with one). Measured (7
  Dec 2026) over 240 XQuAD paragraphs, n of them Turkish, hybrid with the
  model's vectors of the paragraphs and of two questions each: English
  questions on English paragraphs with a Turkish paragraph of another article
  in their top 3, n = 2: 4.93 % → 3.38 %, n = 5: 8.78 % → 6.28 % (three draws
  of the Turkish paragraphs each); nDCG@10 of every question group (Turkish or
  English questions, on Turkish or English paragraphs) unchanged, and over the
  eval's corpus of both languages (``para-mixed``) English questions on
  Turkish paragraphs 0.892 → 0.891, the rest unchanged; the gold set's
  rankings (``python -m eval --set dreamcontext --modes bm25,hybrid``)
  unchanged.

Plain RRF (equal weights, no pin guard) exists for A/B comparison only.
Inputs are ``{key: score}`` maps or best-first key lists; outputs are
best-first ``[(key, fused score)]`` lists, ties broken by key for determinism.
"""

from __future__ import annotations

DECISIVE_BM25 = 18.0
"""Top raw BM25 score (× coverage) from which BM25 is decisive and relative fusion is used (SPEC §3, the reference
system's constant)."""
RELATIVE_LAMBDA = 0.1
"""λ, the dense channel's share in relative fusion, (1 − λ)·bm25 + λ·dense of min-max scores (SPEC §3)."""
RRF_K = 60
"""k of reciprocal rank fusion, Σ wᵢ/(k + rankᵢ) (Cormack, Clarke & Büttcher, SIGIR 2009; SPEC §3)."""
BM25_WEIGHT = 0.6
"""BM25's weight in weighted RRF at full coverage (SPEC §3)."""
DENSE_WEIGHT = 0.4
"""The dense channel's weight in weighted RRF (SPEC §3)."""
PIN_RATIO = 1.35
"""BM25's top hit stays first when its rankScore is at least this many times the runner-up's (÷ coverage; SPEC §3,
the pin guard)."""


def min_max(scores: dict) -> dict:
    """Min-max normalise to [0, 1]; all-equal scores map to 1.0. Scores must be finite (a NaN makes every value
    NaN)."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return {k: 1.0 for k in scores}
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def _ordered(fused: dict) -> list[tuple]:
    return sorted(fused.items(), key=lambda kv: (-kv[1], str(kv[0])))


def relative_fusion(bm25: dict, dense: dict, lam: float = RELATIVE_LAMBDA) -> list[tuple]:
    """(1 − λ)·minmax(bm25) + λ·minmax(dense); a key missing from a channel scores 0 there."""
    nb, nd = min_max(bm25), min_max(dense)
    keys = set(nb) | set(nd)
    return _ordered({k: (1 - lam) * nb.get(k, 0.0) + lam * nd.get(k, 0.0) for k in keys})


def weighted_rrf(rankings: list[list], weights: list[float], k: int = RRF_K) -> list[tuple]:
    """Σ wᵢ/(k + rankᵢ) over the rankings (rank 1-based) in which a key appears.

    Raises:
        ValueError: not one weight per ranking (``zip`` dropped the rankings past the weights: QA round 107 F11),
            or ``k`` below 0.
    """
    if len(rankings) != len(weights) or k < 0:
        raise ValueError(f"weighted_rrf needs one weight per ranking and k ≥ 0 (got {len(rankings)} rankings, "
                         f"{len(weights)} weights, k={k})")
    return _rrf([{key: r for r, key in enumerate(ranking, 1)} for ranking in rankings], weights, k)


def _rrf(ranks: list[dict], weights: list[float], k: int = RRF_K) -> list[tuple]:
    """Σ wᵢ/(k + rankᵢ) over ``{key: rank}`` maps (rank 1-based; a key missing from a map adds nothing)."""
    fused: dict = {}
    for rank_of, w in zip(ranks, weights):
        for key, r in rank_of.items():
            fused[key] = fused.get(key, 0.0) + w / (k + r)
    return _ordered(fused)


def imputed_bm25_ranks(bm25_ranked: list, dense_ranked: list, cross_language) -> tuple[dict, set]:
    """BM25 ranks (1-based) with those of cross-language documents imputed from the dense channel.

    Args:
        bm25_ranked: keys best-first by BM25.
        dense_ranked: keys best-first by cosine.
        cross_language: keys of documents in another language than the query (BM25 cannot read them).

    Returns:
        ``({key: rank}, keys whose rank was imputed)``: a cross-language document the dense channel
        ranks better than BM25 does (or BM25 does not rank at all) takes its dense rank, when that is
        a rank BM25's own list has (at most ``len(bm25_ranked)``; see the module docstring).
    """
    ranks = {key: r for r, key in enumerate(bm25_ranked, 1)}
    imputed = set()
    if cross_language:
        # (no deeper than BM25's own list: below its last document are the ones it did not match, which take no
        # BM25 rank; QA round 153-B F1)
        for r, key in enumerate(dense_ranked[:len(bm25_ranked)], 1):
            if key in cross_language and r < ranks.get(key, r + 1):
                ranks[key] = r
                imputed.add(key)
    return ranks, imputed


def pin_guard(fused: list[tuple], bm25_ranked: list, bm25_scores: dict, ratio: float = PIN_RATIO) -> tuple[list[tuple], bool]:
    """Move BM25's top-1 to the front when its score is ≥ ``ratio`` × BM25's runner-up.

    Returns:
        ``(fused list, pinned?)``; the pinned key keeps its fused score.
    """
    if not bm25_ranked:
        return fused, False
    top = bm25_ranked[0]
    second = bm25_scores.get(bm25_ranked[1], 0.0) if len(bm25_ranked) > 1 else 0.0
    if bm25_scores.get(top, 0.0) < ratio * second or not fused or fused[0][0] == top:
        return fused, False
    item = next((kv for kv in fused if kv[0] == top), None)
    if item is None:
        return fused, False
    return [item] + [kv for kv in fused if kv[0] != top], True


def adaptive_fusion(bm25_ranked: list, bm25_scores: dict, top_raw: float, dense_ranked: list,
                    dense_scores: dict, term_coverage: float = 1.0, cross_language=frozenset()) -> tuple[list[tuple], dict]:
    """SPEC §3 hybrid: relative fusion when BM25 is decisive, else weighted RRF + pin guard.

    Args:
        bm25_ranked: keys best-first by BM25 rankScore.
        bm25_scores: ``{key: rankScore}``.
        top_raw: the best raw BM25 score of the query (the decisiveness test).
        dense_ranked: keys best-first by cosine.
        dense_scores: ``{key: cosine}``.
        term_coverage: fraction (0–1) of the query's terms found in the corpus. The BM25 RRF
            weight is ``BM25_WEIGHT × term_coverage``, BM25 is decisive when
            ``top_raw × term_coverage ≥ DECISIVE_BM25``, and the pin guard needs a lead of
            ``PIN_RATIO / term_coverage`` (none at coverage 0); see the module docstring.
        cross_language: keys of documents in another language than the query: in the RRF their
            BM25 rank is imputed (:func:`imputed_bm25_ranks`; see the module docstring).

    Returns:
        ``(fused best-first [(key, score)], info)`` where ``info`` names the
        method (``relative`` or ``rrf``), whether the pin guard fired,
        ``partial`` when the coverage was below 1 (the tests above were scaled),
        ``imputed``: the keys whose BM25 rank was imputed (when there are any), and for ``rrf``
        ``weights`` ``[BM25, dense]``, ``k`` and ``bm25_ranks`` (``{key: 1-based rank}``, imputed ones
        included: the ranks the fused scores were computed from).
    """
    info: dict = {"partial": True} if term_coverage < 1.0 else {}
    if top_raw * term_coverage >= DECISIVE_BM25:
        return relative_fusion(bm25_scores, dense_scores), {"method": "relative", "lambda": RELATIVE_LAMBDA,
                                                            "pinned": False, **info}
    w_bm25 = BM25_WEIGHT * term_coverage
    # (with no BM25 weight, as for a question none of whose words the vault holds, nothing is imputed)
    bm25_ranks, imputed = imputed_bm25_ranks(bm25_ranked, dense_ranked, cross_language if w_bm25 > 0 else ())
    fused = _rrf([bm25_ranks, {key: r for r, key in enumerate(dense_ranked, 1)}], [w_bm25, DENSE_WEIGHT])
    pinned = False
    if term_coverage > 0:
        fused, pinned = pin_guard(fused, bm25_ranked, bm25_scores, PIN_RATIO / term_coverage)
    if imputed:
        info["imputed"] = imputed
    return fused, {"method": "rrf", "weights": [w_bm25, DENSE_WEIGHT], "k": RRF_K, "pinned": pinned,
                   "bm25_ranks": bm25_ranks, **info}
