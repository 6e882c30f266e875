"""Fusion arithmetic by hand (SPEC §3 reference constants)."""

from __future__ import annotations

import pytest

from dreamdb import fusion as F


def test_min_max():
    assert F.min_max({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    assert F.min_max({"a": 5.0}) == {"a": 1.0}


def test_relative_fusion_cannot_flip_a_decisive_bm25_win():
    # a: 0.9·1 + 0.1·0 = 0.9 ; b: 0.9·0 + 0.1·1 = 0.1
    fused = F.relative_fusion({"a": 30.0, "b": 20.0}, {"a": 0.80, "b": 0.90})
    assert fused[0] == ("a", pytest.approx(0.9)) and fused[1] == ("b", pytest.approx(0.1))
    fused, info = F.adaptive_fusion(["a", "b"], {"a": 30.0, "b": 20.0}, 25.0, ["b", "a"], {"a": 0.8, "b": 0.9})
    assert info["method"] == "relative" and fused[0][0] == "a"


def test_weighted_rrf_by_hand():
    fused = dict(F.weighted_rrf([["a", "b"], ["b", "a"]], [0.6, 0.4]))
    assert fused["a"] == pytest.approx(0.6 / 61 + 0.4 / 62)
    assert fused["b"] == pytest.approx(0.6 / 62 + 0.4 / 61)
    assert fused["a"] > fused["b"]


def test_pin_guard_keeps_a_clear_bm25_winner():
    # RRF alone: b = 0.6/62 + 0.4/61 = 0.016235 beats a = 0.6/61 = 0.009836
    bm_keys, bm_scores = ["a", "b"], {"a": 10.0, "b": 7.0}  # 10 ≥ 1.35 × 7
    fused, info = F.adaptive_fusion(bm_keys, bm_scores, 9.0, ["b", "c", "d"], {"b": 0.9, "c": 0.8, "d": 0.7})
    assert info == {"method": "rrf", "weights": [0.6, 0.4], "k": 60, "pinned": True, "bm25_ranks": {"a": 1, "b": 2}}
    assert [k for k, _ in fused][:2] == ["a", "b"]
    # no pin when BM25's lead is small (10 < 1.35 × 8)
    fused, info = F.adaptive_fusion(bm_keys, {"a": 10.0, "b": 8.0}, 9.0, ["b", "c"], {"b": 0.9, "c": 0.8})
    assert not info["pinned"] and fused[0][0] == "b"


def test_rrf_bm25_weight_follows_term_coverage():
    bm_keys, bm_scores = ["a", "b"], {"a": 5.0, "b": 4.9}  # no pin: 5.0 < 1.35 × 4.9
    dense_keys, cos = ["b", "a"], {"a": 0.80, "b": 0.90}
    # every query term known to the corpus: the reference weights, BM25's top-1 wins
    fused, info = F.adaptive_fusion(bm_keys, bm_scores, 5.0, dense_keys, cos, term_coverage=1.0)
    assert info["weights"] == [0.6, 0.4] and fused[0][0] == "a"
    # half of them unknown (a question in another language): BM25 weight 0.6 × 0.5 = 0.3
    fused, info = F.adaptive_fusion(bm_keys, bm_scores, 5.0, dense_keys, cos, term_coverage=0.5)
    assert info["weights"] == [pytest.approx(0.3), 0.4]
    d = dict(fused)
    assert d["a"] == pytest.approx(0.3 / 61 + 0.4 / 62) and d["b"] == pytest.approx(0.3 / 62 + 0.4 / 61)
    assert fused[0][0] == "b"
    # at full coverage a top raw score of 30 is decisive: relative fusion keeps BM25's winner
    fused, info = F.adaptive_fusion(bm_keys, {"a": 30.0, "b": 20.0}, 30.0, dense_keys, cos, term_coverage=1.0)
    assert info["method"] == "relative" and fused[0][0] == "a"


def test_partial_coverage_scales_the_decisive_test_and_the_pin_guard():
    """BM25's evidence counts in proportion to the share of the query it could see."""
    bm_keys, bm_scores = ["a", "b"], {"a": 30.0, "b": 10.0}  # a 3× lead
    dense_keys, cos = ["b", "c", "a"], {"a": 0.70, "b": 0.90, "c": 0.85}
    fused, info = F.adaptive_fusion(bm_keys, bm_scores, 30.0, dense_keys, cos, term_coverage=1.0)
    assert info["method"] == "relative" and "partial" not in info and fused[0][0] == "a"
    # 3 of 4 terms known: 30 × 0.75 = 22.5 ≥ 18, still decisive
    fused, info = F.adaptive_fusion(bm_keys, bm_scores, 30.0, dense_keys, cos, term_coverage=0.75)
    assert info["method"] == "relative" and info["partial"] and fused[0][0] == "a"
    # 1 of 2 known: 30 × 0.5 = 15 < 18, RRF; the lead of 3× ≥ 1.35 / 0.5 = 2.7 still pins
    fused, info = F.adaptive_fusion(bm_keys, bm_scores, 30.0, dense_keys, cos, term_coverage=0.5)
    assert info["method"] == "rrf" and info["pinned"] and fused[0][0] == "a"
    # 1 of 3 known: the pin would need a 4.05× lead; plain weighted RRF with BM25 weight 0.6 / 3
    fused, info = F.adaptive_fusion(bm_keys, bm_scores, 30.0, dense_keys, cos, term_coverage=1 / 3)
    assert info["method"] == "rrf" and not info["pinned"] and info["partial"]
    d = dict(fused)
    assert d["a"] == pytest.approx(0.2 / 61 + 0.4 / 63)
    assert d["b"] == pytest.approx(0.2 / 62 + 0.4 / 61)
    assert [k for k, _ in fused] == ["b", "a", "c"]
    # nothing known (coverage 0): dense order, no pin
    fused, info = F.adaptive_fusion([], {}, 0.0, dense_keys, cos, term_coverage=0.0)
    assert [k for k, _ in fused] == ["b", "c", "a"] and not info["pinned"]


def test_a_cross_language_document_takes_its_dense_rank_when_that_is_better():
    """BM25 ranks two same-language notes that share words with the question; the note that answers it is
    written in the other language, so BM25 misses it, and the dense channel ranks it first."""
    bm_keys, bm_scores = ["same-1", "same-2", "other-2"], {"same-1": 6.0, "same-2": 5.5, "other-2": 5.0}
    dense_keys, cos = ["other-1", "same-2", "other-2", "same-1"], {"other-1": 0.9, "same-2": 0.8, "other-2": 0.7, "same-1": 0.6}
    plain, info = F.adaptive_fusion(bm_keys, bm_scores, 6.0, dense_keys, cos)
    assert plain[0][0] == "same-2" and "imputed" not in info
    fused, info = F.adaptive_fusion(bm_keys, bm_scores, 6.0, dense_keys, cos, cross_language={"other-1", "other-2"})
    assert fused[0][0] == "other-1" and info["imputed"] == {"other-1"}  # other-2: rank 3 in both, kept
    ranks, imputed = F.imputed_bm25_ranks(bm_keys, dense_keys, {"other-1", "other-2", "same-1"})
    assert ranks == {"same-1": 1, "same-2": 2, "other-2": 3, "other-1": 1} and imputed == {"other-1"}
    # the fused score is the RRF of the imputed ranks, exactly
    w = F.BM25_WEIGHT
    assert dict(fused)["other-1"] == pytest.approx(w / (F.RRF_K + 1) + F.DENSE_WEIGHT / (F.RRF_K + 1))
    assert dict(fused)["same-1"] == dict(plain)["same-1"]  # a document in the query's language is fused as before
    # no BM25 weight (no query word in the vault): nothing to impute
    _fused, info = F.adaptive_fusion([], {}, 0.0, dense_keys, cos, term_coverage=0.0, cross_language={"other-1"})
    assert "imputed" not in info


def test_a_cross_language_document_below_bm25s_list_takes_no_bm25_rank():
    """QA round 153-B F1: the example vault, English query ``prompt hook``. BM25 ranks 3 documents; the one Turkish
    note (knowledge/uyku-borcu) matches no word and the dense channel ranks it last, 11th. Its dense rank was imputed
    as its BM25 rank, 11th of a list of 3, and with both shares, 0.6/71 + 0.4/71, it came 3rd, above every English
    note BM25 did not match (one share each). A rank deeper than BM25's list is where BM25 leaves the documents it
    did not match: none is imputed there."""
    bm_keys = ["feature/prompt-hook", "changelog/2026-08-12-recall-1", "knowledge/decision-sqlite-index"]
    bm_scores = {"feature/prompt-hook": 11.0719, "changelog/2026-08-12-recall-1": 2.3989,
                 "knowledge/decision-sqlite-index": 0.8548}
    dense_keys = ["feature/prompt-hook", "knowledge/decision-sqlite-index", "task/add-dedup-gate",
                  "insight/short-queries", "memory/technical-decisions", "memory/known-issues",
                  "objective/ship-hybrid-recall", "feature/sleep-consolidation", "knowledge/release-checklist",
                  "thesis/bm25-first", "knowledge/uyku-borcu"]
    cos = {k: 0.88 - 0.01 * i for i, k in enumerate(dense_keys)}
    turkish = {"knowledge/uyku-borcu"}
    ranks, imputed = F.imputed_bm25_ranks(bm_keys, dense_keys, turkish)
    assert imputed == set() and "knowledge/uyku-borcu" not in ranks
    fused, info = F.adaptive_fusion(bm_keys, bm_scores, 5.5951, dense_keys, cos, cross_language=turkish)
    order = [k for k, _ in fused]
    assert "imputed" not in info and order[-1] == "knowledge/uyku-borcu"
    assert dict(fused)["knowledge/uyku-borcu"] == pytest.approx(F.DENSE_WEIGHT / (F.RRF_K + 11))
    # within BM25's list it is imputed as before: dense 3rd of 11, BM25's list 3 long
    moved = dense_keys[:2] + ["knowledge/uyku-borcu"] + dense_keys[2:-1]
    ranks, imputed = F.imputed_bm25_ranks(bm_keys, moved, turkish)
    assert imputed == turkish and ranks["knowledge/uyku-borcu"] == 3
    # and at 4th, one past the list's end, it is not
    moved = dense_keys[:3] + ["knowledge/uyku-borcu"] + dense_keys[3:-1]
    assert F.imputed_bm25_ranks(bm_keys, moved, turkish)[1] == set()


def test_the_query_language_counts_turkish_typed_without_its_letters():
    from dreamdb.hybrid import query_is_turkish
    from dreamdb.ranking.rank import QueryPlan

    assert query_is_turkish(QueryPlan("x", ["x"], turkish=True))
    assert query_is_turkish(QueryPlan("panthers kac puan", ["panther", "kac", "puan"], resolved={"kac": "kaç"}))
    assert not query_is_turkish(QueryPlan("Panthers points", ["panther", "point"], resolved={"panthers": "panther"}))
    assert not query_is_turkish(QueryPlan("şu", ["şu"], resolved={"şu": "şu"}))  # letters typed: analysed already
    assert query_is_turkish(QueryPlan("sunucu guvenligi", ["sunucu", "guvenligi"], resolved={"guvenligi": "güvenlik"}))
    # an English word replaced by its Turkish translation is no Turkish spelling of it
    assert not query_is_turkish(QueryPlan("how often are server files backed up", ["server", "file", "back"],
                                          resolved={"server": "sunuç", "file": "dosya"}))


def test_cross_language_documents_are_those_of_the_other_language(tiny_vault):
    import dreamdb
    from dreamdb.hybrid import cross_language_documents
    from dreamdb.ranking.rank import QueryPlan
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/en.md", "---\ntitle: Backups\n---\nThe database is backed up every night at two.\n")
    write_doc(tiny_vault, "knowledge/tr.md", "---\ntitle: Yedekler\n---\nVeritabanı her gece saat ikide yedeklenir ve bu "
                                              "yedekler bir hafta saklanır.\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    ids = dict(index.conn.execute("SELECT doc_id, id FROM documents"))
    both = [ids["knowledge/en"], ids["knowledge/tr"]]
    assert cross_language_documents(index.conn, QueryPlan("q", ["q"], turkish=True), both) == {ids["knowledge/en"]}
    assert cross_language_documents(index.conn, QueryPlan("q", ["q"]), both) == {ids["knowledge/tr"]}
    assert cross_language_documents(index.conn, QueryPlan("q", ["q"]), []) == set()


def test_the_text_explanation_writes_out_what_a_fused_score_adds_up_from():
    """QA round 68 M2: ``--explain`` named the fusion but not the ranks and weights of an RRF score."""
    from dreamdb.output import _fused_from_text

    rrf = {"bm25_rank": 2, "bm25_weight": 0.45, "dense_rank": None, "dense_weight": 0.4, "k": 60}
    assert _fused_from_text(rrf) == ": 0.45/(60+2) + dense unranked"
    rrf.update(dense_rank=1, bm25_rank_imputed=True)
    assert _fused_from_text(rrf) == ": 0.45/(60+2) (BM25 rank imputed from dense) + 0.4/(60+1)"
    assert _fused_from_text({"bm25_normalised": 1.0, "dense_normalised": 0.25, "lambda": 0.1}) == ": 0.9×1.0000 + 0.1×0.2500"
    assert _fused_from_text(None) == ""


def test_weighted_rrf_needs_one_weight_per_ranking():
    """QA round 107 F11: a missing weight silently dropped a ranking (``zip``)."""
    with pytest.raises(ValueError, match="one weight per ranking"):
        F.weighted_rrf([["a"], ["b"]], [1.0])
    with pytest.raises(ValueError):
        F.weighted_rrf([["a"]], [1.0], k=-1)
    assert F.weighted_rrf([["a"], ["b", "a"]], [1.0, 1.0])[0][0] == "a"
