"""QA round 62: the evaluation suite's loaders refuse malformed data with file and line, warn of judgements
naming what a collection does not hold, count an uncategorised gold query once, and the --max-embed hint is a
command that runs. Tiny collections on disk, real SQLite, no mocks."""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from dreamdb.errors import UsageError
from dreamdb.evaluation import beir, gold, suite
from tests.conftest import EVAL_DATA, gold_data_folder

ROOT = Path(__file__).resolve().parents[1]

DOCS = [
    {"id": "S-1", "title": "Sleep consolidation", "text": "The nightly sleep cycle consolidates agent memory into knowledge notes."},
    {"id": "S-2", "title": "Database postings", "text": "SQLite postings store term frequencies for exact BM25 scoring."},
    {"id": "S-3", "title": "Turkish morphology", "text": "Suffixes such as -lar and -ler mark the plural in Turkish words."},
]
QUERIES = [{"id": "q1", "text": "sqlite postings"}, {"id": "q2", "text": "memory consolidation during sleep"}]
QRELS = "qid\tdocid\trel\nq1\tS-2\t1\nq2\tS-1\t1\n"


def _jsonl(records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def write_collection(root: Path, docs=DOCS, queries=QUERIES, qrels=QRELS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text(docs if isinstance(docs, str) else _jsonl(docs), encoding="utf-8")
    (root / "queries.jsonl").write_text(queries if isinstance(queries, str) else _jsonl(queries), encoding="utf-8")
    (root / "qrels.tsv").write_text(qrels, encoding="utf-8")
    return root


def run_cli(*args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dreamdb", "eval", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


# -- M1: the gold set's groups --------------------------------------------------------------------------------------
def _gold_data(tmp_path: Path, lines: list[dict]) -> Path:
    return gold_data_folder(tmp_path, {"walrus": "walrus tusks and whiskers", "otter": "otters hold hands while they sleep"},
                            lines)


def test_an_uncategorised_gold_query_is_its_own_group_and_counted_once_overall(tmp_path):
    """QA round 62 M1: a query without a category was filed under "all" and added to "all" a second time:
    two queries gave by_category.all n=3, and the overall recall was skewed towards the uncategorised one."""
    data = _gold_data(tmp_path, [
        {"id": "q1", "query": "walrus tusks", "expected": ["knowledge/walrus"], "category": "exact-term", "lang": "en"},
        {"id": "q2", "query": "otters sleep", "expected": ["knowledge/otter"]},  # no category, no lang
        {"id": "q3", "query": "zebra stripes", "expected": ["knowledge/walrus"], "category": None, "lang": None},
    ])
    qs = gold.load_gold(data / "eval" / "dreamcontext-gold-train.jsonl")
    assert [(q.category, q.lang) for q in qs] == [("exact-term", "en"), ("uncategorised", "unknown"),
                                                  ("uncategorised", "unknown")]
    out = suite.run_suite(["dreamcontext"], data=data, cache=tmp_path / "cache", modes=["bm25"], baseline=False)
    r = out["sets"]["dreamcontext"]["tracks"]["gold-train"]["dreamdb"]["bm25"]
    assert {g: m["n"] for g, m in r["by_category"].items()} == {"all": 3, "exact-term": 1, "uncategorised": 2}
    assert {g: m["n"] for g, m in r["by_lang"].items()} == {"all": 3, "en": 1, "unknown": 2}
    assert r["metrics"]["n"] == 3
    # q1 and q2 are found first, q3 (no word of the vault) is not: 2 of 3 overall, 1 of 2 uncategorised
    assert r["metrics"]["r@1"] == pytest.approx(200 / 3)
    assert r["by_category"]["uncategorised"]["r@1"] == pytest.approx(50.0)
    assert r["by_category"]["exact-term"]["r@1"] == pytest.approx(100.0)


@pytest.mark.parametrize("field, value", [("category", "all"), ("category", "All"), ("lang", "all")])
def test_a_gold_group_named_all_is_refused_with_its_line(tmp_path, field, value):
    """"all" names the overall row: a category (or language) of that name would count its queries twice there."""
    path = tmp_path / "gold.jsonl"
    path.write_text(_jsonl([{"id": "q1", "query": "walrus", "expected": ["knowledge/walrus"]},
                            {"id": "q2", "query": "otter", "expected": ["knowledge/otter"], field: value}]),
                    encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(f"{path}:2: not a gold query ('{field}' may not be '{value}'")):
        gold.load_gold(path)


def test_a_gold_category_that_is_not_text_is_refused(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text(_jsonl([{"id": "q1", "query": "walrus", "expected": ["knowledge/walrus"], "category": ["a"]}]))
    with pytest.raises(UsageError, match=re.escape(f"{path}:1: not a gold query ('category' must be a string")):
        gold.load_gold(path)


def test_a_gold_query_id_given_twice_is_refused_with_its_line(tmp_path):
    """QA round 64: a duplicate id was scored twice (the BEIR loaders refuse one since round 62)."""
    path = tmp_path / "gold.jsonl"
    path.write_text(_jsonl([{"id": "q1", "query": "walrus", "expected": ["knowledge/walrus"]},
                            {"id": 2, "query": "otter", "expected": ["knowledge/otter"]},
                            {"id": "2", "query": "seal", "expected": ["knowledge/seal"]}]), encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(f"{path}:3: not a gold query (duplicate id '2' (already on line 2)")):
        gold.load_gold(path)


def test_aggregate_never_counts_a_row_twice_overall():
    rows = [{"category": c, "r@1": r, "r@3": r, "r@5": r, "r@10": r, "mrr": r, "ndcg@10": r}
            for c, r in (("all", 1.0), ("turkish", 0.0))]
    agg = gold.aggregate(rows, "category")
    assert {g: m["n"] for g, m in agg.items()} == {"all": 2, "turkish": 1}
    assert agg["all"]["r@1"] == pytest.approx(50.0)


# -- L1: malformed collections ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("docs, queries, said", [
    # 3 and "3" are one id: the qrels name documents as text
    ([{"id": 3, "text": "a"}, {"id": "4", "text": "b"}, {"id": "3", "text": "c"}], None,
     "corpus.jsonl:3: duplicate id '3' (already on line 1)"),
    ([{"id": "S-1", "text": "a"}, {"id": "S-1", "text": "b"}], None, "corpus.jsonl:2: duplicate id 'S-1' (already on line 1)"),
    (None, [{"id": "q1", "text": "a"}, {"id": "q1", "text": "b"}], "queries.jsonl:2: duplicate id 'q1' (already on line 1)"),
    (None, [{"id": "q1", "text": "a"}, {"id": "q2", "text": ""}], 'queries.jsonl:2: a query needs a non-empty "text", got \'\''),
    (None, [{"id": "q1", "text": "   "}], 'queries.jsonl:1: a query needs a non-empty "text"'),
    # QA round 64: a zero-width space alone (or with a word joiner) shows nothing, as spaces do
    (None, [{"id": "q1", "text": "\u200b"}], 'queries.jsonl:1: a query needs a non-empty "text"'),
    (None, [{"id": "q1", "text": " \u2060\u200b "}], 'queries.jsonl:1: a query needs a non-empty "text"'),
    (None, [{"id": "q1", "text": None}], 'queries.jsonl:1: a query needs a non-empty "text", got None'),
    (None, [{"id": "q1"}], 'queries.jsonl:1: a query needs a non-empty "text", got None'),
    ("", None, "corpus.jsonl holds no documents"),
    ("\n\n", None, "corpus.jsonl holds no documents"),
    (None, "", "queries.jsonl holds no queries"),
])
def test_a_malformed_collection_is_refused_with_file_and_line(tmp_path, docs, queries, said):
    """QA round 62 L1: a duplicate id kept the last record (a document disappeared), an empty query was run,
    an empty corpus gave a run of zeros."""
    root = write_collection(tmp_path / "c", DOCS if docs is None else docs, QUERIES if queries is None else queries)
    with pytest.raises(UsageError, match=re.escape(f"{root}/{said}")):
        beir.load_collection(root)


def test_judgements_naming_unknown_queries_or_documents_are_warned_of(tmp_path):
    root = write_collection(tmp_path / "c", qrels="qid\tdocid\trel\nq1\tS-2\t1\nq1\tS-9\t1\nq2\tS-1\t1\n"
                                                  "q7\tS-1\t1\nq8\tS-3\t2\n")
    c = beir.load_collection(root)
    assert c.unknown_qrels == [("q1", "S-9"), ("q7", "S-1"), ("q8", "S-3")]
    assert c.warnings == [f"warning: {root}/qrels.tsv: 3 judgement(s) name what the collection does not hold: 2 queries"
                          " not in queries.jsonl (q7, q8), never asked; 1 judged document(s) not in corpus.jsonl"
                          " (q1: S-9), which cannot be found"]
    # the judgements are kept as read: q1's S-9 counts against it, as BEIR scores it
    assert c.qrels["q1"] == {"S-2": 1, "S-9": 1}
    assert beir.load_collection(write_collection(tmp_path / "ok")).warnings == []


def _scifact_data(tmp_path: Path, **kw) -> Path:
    data = tmp_path / "data"
    write_collection(data / "eval-data" / "scifact", **kw)
    return data


def test_the_suite_reports_unknown_judgements_in_notes_and_json(tmp_path):
    data = _scifact_data(tmp_path, qrels="qid\tdocid\trel\nq1\tS-2\t1\nq2\tS-1\t1\nq2\tS-77\t1\nq9\tS-3\t1\n")
    r = run_cli("--data", data, "--set", "scifact", "--no-baseline", "--modes", "bm25", "--cache", tmp_path / "cache",
                "--json")
    assert r.returncode == 0, r.stderr
    qrels = data / "eval-data" / "scifact" / "qrels.tsv"
    said = (f"set scifact: warning: {qrels}: 2 judgement(s) name what the collection does not hold: 1 query not in"
            " queries.jsonl (q9), never asked; 1 judged document(s) not in corpus.jsonl (q2: S-77), which cannot be found")
    assert said in r.stderr
    out = json.loads(r.stdout)
    assert said in out["notes"]
    assert out["sets"]["scifact"]["unknown_qrels"] == {"scifact/qrels.tsv": [["q2", "S-77"], ["q9", "S-3"]]}
    m = out["sets"]["scifact"]["tracks"]["test"]["dreamdb"]["bm25"]["metrics"]
    assert m["n"] == 2 and m["r@10"] == pytest.approx(75.0)  # q2 found S-1, never the absent S-77
    # a clean collection: no note, no key
    clean = run_cli("--data", _scifact_data(tmp_path / "clean"), "--set", "scifact", "--no-baseline", "--cache",
                    tmp_path / "cache2", "--json")
    assert clean.returncode == 0 and "warning" not in clean.stderr
    assert json.loads(clean.stdout)["notes"] == [] and "unknown_qrels" not in json.loads(clean.stdout)["sets"]["scifact"]


@pytest.mark.parametrize("grade", ["inf", "1e999", "-inf", "nan", "x"])
def test_a_grade_that_is_no_finite_number_is_a_usage_error(tmp_path, grade):
    """QA round 62 L2: a grade of inf or 1e999 raised OverflowError, an internal error (exit 70)."""
    path = tmp_path / "qrels.tsv"
    path.write_text(f"qid\tdocid\trel\nq1\tS-1\t1\nq2\tS-2\t{grade}\n", encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(f"{path}:3: expected 'qid docid rel' with a finite number as grade")):
        beir.read_qrels(path)


def test_trec_qrels_are_read_by_their_columns_and_mixed_widths_refused(tmp_path):
    """QA round 68 M3: a TREC qrels file (``qid Q0 docid rel``) was read with "Q0" as the document and the
    document as the grade: everything scored 0.000 and the run exited 0."""
    path = tmp_path / "qrels.txt"
    path.write_text("q1 Q0 S-1 2\nq1 0 S-3 1\nq2 Q0 S-2 0\n", encoding="utf-8")
    assert beir.read_qrels(path) == {"q1": {"S-1": 2, "S-3": 1}, "q2": {"S-2": 0}}
    path.write_text("qid\tdocid\trel\nq1\tS-1\t1\nq2\tQ0\tS-2\t1\n", encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(f"{path}:3: expected 'qid docid rel' (BEIR) or 'qid iteration docid"
                                                   " rel' (TREC) on every line, found 4 columns after lines of 3")):
        beir.read_qrels(path)
    path.write_text("q1 S-1 1 extra more\n", encoding="utf-8")
    with pytest.raises(UsageError, match="found 5 columns"):
        beir.read_qrels(path)


def test_a_pair_judged_twice_with_two_grades_is_refused_and_all_zero_queries_are_warned_of(tmp_path):
    """QA round 100-A F1: a query–document pair judged 1 then 0 was read as its last grade, silently: the query
    left the scored set (n 15 → 14) and the figures rose. Two grades for one pair are refused with both lines; the
    same grade twice is one judgement; a query judged with no relevant document is warned of (it cannot be scored)."""
    path = tmp_path / "qrels.tsv"
    path.write_text("qid\tdocid\trel\nq1\tS-1\t1\nq1\tS-1\t1\nq2\tS-2\t1\nq1\tS-1\t0\n", encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(f"{path}:5: query 'q1' and document 'S-1' were judged 1 on line 2 "
                                                   "and 0 here")):
        beir.read_qrels(path)
    path.write_text("qid\tdocid\trel\nq1\tS-1\t1\nq1\tS-1\t1\nq2\tS-2\t0\nq3\tS-1\t0\n", encoding="utf-8")
    assert beir.read_qrels(path) == {"q1": {"S-1": 1}, "q2": {"S-2": 0}, "q3": {"S-1": 0}}
    assert beir.unjudged_note(beir.read_qrels(path), {"q1", "q2"}, "qrels.tsv") == (
        "warning: qrels.tsv: 1 query is judged with no relevant document (no grade above 0): not scored (q2)")


def test_tabs_and_spaces_at_a_qrels_lines_end_are_no_column(tmp_path):
    """QA round 145-G F6: "1<TAB>31715818<TAB>1<TAB>" (a trailing tab on every line, header too) was read as a TREC
    line with an empty grade: "qrels.tsv:2: expected 'qid docid rel' with a finite number as grade"."""
    path = tmp_path / "qrels.tsv"
    path.write_text("query-id\tcorpus-id\tscore\t\n1\t31715818\t1\t\n3\t14717500\t2\t \t\n", encoding="utf-8")
    assert beir.read_qrels(path) == {"1": {"31715818": 1}, "3": {"14717500": 2}}
    path.write_text("q1 0 S-1 1\t\nq2 0 S-2 1 \n", encoding="utf-8")  # TREC's four columns stay four
    assert beir.read_qrels(path) == {"q1": {"S-1": 1}, "q2": {"S-2": 1}}


def test_a_fractional_grade_is_kept_as_a_graded_relevance(tmp_path):
    """QA round 145-G F4: a grade of 0.5 was truncated to 0, so its query was warned of as "judged with no relevant
    document (every grade 0)", and a file of 0.9 grades exited 2 with "no query has a relevant document (a grade above
    0)": the fraction is kept, relevant when above 0, its nDCG gain the grade itself; whole grades stay ints."""
    path = tmp_path / "qrels.tsv"
    path.write_text("qid\tdocid\trel\nq1\tS-1\t0.5\nq1\tS-2\t2.0\nq2\tS-3\t0.9\nq3\tS-1\t-0.5\n", encoding="utf-8")
    qrels = beir.read_qrels(path)
    assert qrels == {"q1": {"S-1": 0.5, "S-2": 2}, "q2": {"S-3": 0.9}, "q3": {"S-1": -0.5}}
    assert type(qrels["q1"]["S-2"]) is int
    assert beir.unjudged_note(qrels, {"q1", "q2", "q3"}, "qrels.tsv") == (
        "warning: qrels.tsv: 1 query is judged with no relevant document (no grade above 0): not scored (q3)")
    scores = beir.score_beir(["S-1", "S-9", "S-2"], qrels["q1"])
    assert scores["r@1"] == 0.5 and scores["rank"] == 1
    assert scores["ndcg@10"] == pytest.approx((0.5 + 2 / math.log2(4)) / (2 + 0.5 / math.log2(3)))
    data = _scifact_data(tmp_path, qrels="qid\tdocid\trel\nq1\tS-2\t0.9\nq2\tS-1\t0.9\n")
    plan = suite.plan_set("scifact", data)
    assert [len(t.queries) for t in plan.tracks] == [2] and plan.warnings == []


@pytest.mark.parametrize("kw, said", [
    ({"qrels": "qid\tdocid\trel\nq1\tS-2\t1e999\n"}, "qrels.tsv:2: expected 'qid docid rel' with a finite number as grade"),
    ({"docs": [{"id": 3, "text": "a"}, {"id": "3", "text": "b"}]}, "corpus.jsonl:2: duplicate id '3' (already on line 1)"),
    ({"queries": [{"id": "q1", "text": ""}]}, 'queries.jsonl:1: a query needs a non-empty "text"'),
    ({"docs": ""}, "corpus.jsonl holds no documents"),
    # QA round 68 M4: scored 0.000, "NOT met", exit 0
    ({"qrels": "qid\tdocid\trel\nq1\tS-2\t0\n"}, "set scifact: no query has a relevant document"),
    ({"qrels": "qid\tdocid\trel\n"}, "set scifact: no query has a relevant document"),
])
def test_malformed_collections_exit_2_through_the_cli(tmp_path, kw, said):
    data = _scifact_data(tmp_path, **kw)
    r = run_cli("--data", data, "--set", "scifact", "--no-baseline", "--cache", tmp_path / "cache")
    assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, r.stderr


DATA = EVAL_DATA


@pytest.mark.skipif(not (DATA / "eval-data" / "xquad_tr_en" / "corpus.jsonl").exists(),
                    reason=f"evaluation data not found at {DATA} (set DREAMDB_SHARED or DREAMDB_EVAL_DATA)")
@pytest.mark.parametrize("name", ["scifact", "xquad", "eips"])
def test_the_real_collections_pass_the_checks(name):
    p = suite.plan_set(name, DATA)
    assert p.warnings == [] and p.unknown_qrels == {}
    assert p.tracks and all(t.queries for t in p.tracks)


def test_xquad_is_checked_too(tmp_path):
    """xquad is read through read_records and read_qrels, not load_collection: the same checks hold."""
    root = tmp_path / "data" / "eval-data" / "xquad_tr_en"
    root.mkdir(parents=True)
    corpus = [{"id": f"{lang}-p1", "lang": lang, "article": "a", "para": 1, "text": "paragraph"} for lang in ("en", "tr")]
    (root / "corpus.jsonl").write_text(_jsonl(corpus), encoding="utf-8")
    (root / "corpus_sent.jsonl").write_text(_jsonl(corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text(_jsonl([{"id": "q1", "lang": "en", "text": "what"},
                                                 {"id": "q2", "lang": "tr", "text": "ne"}]), encoding="utf-8")
    for f in ("qrels.tsv", "qrels_sent.tsv", *(f"qrels_{g}{d}.tsv" for g in ("", "sent_")
                                               for d in ("tr2tr", "en2en", "tr2en", "en2tr"))):
        (root / f).write_text("qid\tdocid\trel\nq1\ten-p1\t1\nq2\ttr-p1\t1\n", encoding="utf-8")
    (root / "qrels_tr2en.tsv").write_text("qid\tdocid\trel\nq2\ten-p9\t1\n", encoding="utf-8")
    p = suite.plan_set("xquad", root.parent.parent)
    assert p.unknown_qrels == {"xquad_tr_en/qrels_tr2en.tsv": [["q2", "en-p9"]]}
    assert p.warnings == [f"warning: {root}/qrels_tr2en.tsv: 1 judgement(s) name what the collection does not hold:"
                          " 1 judged document(s) not in corpus.jsonl (q2: en-p9), which cannot be found",
                          *(f"warning: track para {lang}→mixed skipped: no query has a relevant document (a grade above 0)"
                            for lang in ("tr",))]  # (one paragraph a language: nothing to mix, QA round 68 M4)
    assert p.tracks and all(t.queries for t in p.tracks)
    # a query judged with grade 0 alone is neither scored nor silent (QA round 101-A F3: n 2, R@1 50.0, no word)
    (root / "queries.jsonl").write_text(_jsonl([{"id": "q1", "lang": "en", "text": "what"},
                                                 {"id": "q3", "lang": "en", "text": "which"}]), encoding="utf-8")
    (root / "qrels_en2en.tsv").write_text("qid\tdocid\trel\nq1\ten-p1\t1\nq3\ten-p1\t0\n", encoding="utf-8")
    p = suite.plan_set("xquad", root.parent.parent)
    assert [t.queries for t in p.tracks if t.name == "para en→en"] == [[("q1", "what")]]
    assert f"warning: {root}/qrels_en2en.tsv: 1 query is judged with no relevant document (no grade above 0): not scored" \
        " (q3)" in p.warnings, p.warnings
    (root / "queries.jsonl").write_text(_jsonl([{"id": "q1", "lang": "en", "text": "what"},
                                                 {"id": "q1", "lang": "tr", "text": "ne"}]), encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(f"{root}/queries.jsonl:2: duplicate id 'q1' (already on line 1)")):
        suite.plan_set("xquad", root.parent.parent)


def test_xquad_refuses_a_record_of_another_language_value(tmp_path):
    """QA round 147-G F1: a corpus document of "lang": "EN" was left out of the English paragraphs (its en→en question
    scored 0, no word) and put among the mixed track's Turkish paragraphs; a query of "EN" was dropped. Any lang but
    "en" or "tr" is refused, naming the file, line and record."""
    root = tmp_path / "data" / "eval-data" / "xquad_tr_en"
    root.mkdir(parents=True)
    corpus = [{"id": f"{lang}-p1", "lang": lang, "article": "a", "text": "paragraph"} for lang in ("en", "tr")]
    for f in ("corpus.jsonl", "corpus_sent.jsonl"):
        (root / f).write_text(_jsonl(corpus), encoding="utf-8")
    queries = [{"id": "q1", "lang": "en", "text": "what"}, {"id": "q2", "lang": "tr", "text": "ne"}]
    (root / "queries.jsonl").write_text(_jsonl(queries), encoding="utf-8")
    for f in ("qrels.tsv", *(f"qrels_{g}{d}.tsv" for g in ("", "sent_") for d in ("tr2tr", "en2en", "tr2en", "en2tr"))):
        (root / f).write_text("qid\tdocid\trel\nq1\ten-p1\t1\nq2\ttr-p1\t1\n", encoding="utf-8")
    assert [t.name for t in suite.plan_set("xquad", root.parent.parent).tracks][:2] == ["para tr→tr", "para en→en"]
    (root / "corpus.jsonl").write_text(_jsonl([{**corpus[0], "lang": "EN"}, corpus[1]]), encoding="utf-8")
    with pytest.raises(UsageError) as info:
        suite.plan_set("xquad", root.parent.parent)
    assert info.value.message == f"{root}/corpus.jsonl:1: corpus record 'en-p1' has \"lang\" 'EN'; it must be 'en' or 'tr'"
    (root / "corpus.jsonl").write_text(_jsonl(corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text(_jsonl([queries[0], {**queries[1], "lang": None}]), encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(f"{root}/queries.jsonl:2: queries record 'q2' has \"lang\" None")):
        suite.plan_set("xquad", root.parent.parent)


def test_eips_judged_documents_that_reach_no_indexed_note_are_warned_of(tmp_path):
    """QA round 147-G F1: an EIPs corpus record without its note's "path" (the note indexed, but mapped to no id) and
    one whose path names no file of the vault were scored as misses, nDCG 0.500 with nothing said. The run warns of
    them per track (count, first ids, the queries that cannot be found) and lists them in unindexed_judged."""
    root = tmp_path / "data" / "eval-data" / "eips_ercs"
    for rel, text in (("EIPS/eip-1.md", "alpha gas opcode shift"), ("EIPS/eip-2.md", "beta token standard transfer"),
                      ("ERCS/eip-4.md", "gamma wallet signature")):
        (root / "vault" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "vault" / rel).write_text(f"---\ntitle: {rel}\n---\n{text}\n", encoding="utf-8")
    (root / "corpus.jsonl").write_text(_jsonl([
        {"id": "eip-1", "title": "Alpha", "text": "alpha gas opcode shift", "path": "EIPS/eip-1.md"},
        {"id": "eip-2", "title": "Beta", "text": "beta token standard transfer", "path": "EIPS/eip-2.md"},
        {"id": "eip-3", "title": "Delta", "text": "delta missing note", "path": "EIPS/eip-3.md"},
        {"id": "eip-4", "title": "Gamma", "text": "gamma wallet signature"}]), encoding="utf-8")
    (root / "queries.jsonl").write_text(_jsonl([{"id": f"desc:{i}", "text": t} for i, t in (
        (1, "alpha opcode"), (2, "beta transfer"), (3, "delta note"), (4, "gamma wallet"))]), encoding="utf-8")
    (root / "qrels.tsv").write_text("".join(f"desc:{i}\teip-{i}\t1\n" for i in range(1, 5)), encoding="utf-8")
    (root / "queries_title.jsonl").write_text(_jsonl([{"id": "title:1", "text": "Alpha"}]), encoding="utf-8")
    (root / "qrels_title.tsv").write_text("title:1\teip-1\t1\n", encoding="utf-8")
    said = []
    out = suite.run_set(suite.plan_set("eips", root.parent.parent), tmp_path / "cache", modes=["bm25"],
                        baseline=False, log=said.append)
    assert "eips description: warning: 2 judged document(s) are in no document of the index vault (eip-3, eip-4), so" \
        " they cannot be found; no relevant document of 2 queries is there (desc:3, desc:4)" in said, said
    assert out["indexes"]["vault"]["unindexed_judged"] == {"description": ["eip-3", "eip-4"]}
    assert "unindexed_judged" not in out["indexes"]["body"] and not any("title: warning" in s for s in said)


# -- L3: the --max-embed hint ---------------------------------------------------------------------------------------
def test_embed_refresh_command_quotes_the_paths(tmp_path):
    index = tmp_path / "it's a cache" / "scifact" / "corpus" / "index.db"
    vault = index.parent / "_dream_context"
    cmd = suite.embed_refresh_command(index, vault)
    assert cmd == f"DREAMDB_INDEX={shlex.quote(str(index))} dreamdb embed refresh --vault {shlex.quote(str(vault))}"
    assert shlex.split(cmd) == [f"DREAMDB_INDEX={index}", "dreamdb", "embed", "refresh", "--vault", str(vault)]


@pytest.mark.model
def test_the_max_embed_hint_is_a_command_that_embeds_the_cached_index(tmp_path, model_dir, monkeypatch):
    """QA round 62 L3: the hint said "run dreamdb embed refresh on <cache>/…/index.db", which cannot be run.
    It now prints the command; run as printed (by a shell), it embeds the very index the suite then uses."""
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    data = _scifact_data(tmp_path)
    cache = tmp_path / "my cache"
    plan = suite.plan_set("scifact", data)
    res = suite.run_set(plan, cache, modes=["bm25", "hybrid"], baseline=False, max_embed=0)
    folder = cache / "scifact" / "corpus"
    cmd = suite.embed_refresh_command(folder / "index.db", folder / "_dream_context")
    assert shlex.quote(str(folder / "index.db")) in cmd and "'" in cmd  # the space is quoted
    why = res["tracks"]["test"]["dreamdb"]["hybrid"]["unavailable"]
    assert why == (f"3 chunks would need embedding first (over --max-embed 0); embed them with `{cmd}`"
                   " or raise --max-embed")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    again = suite.run_set(suite.plan_set("scifact", data), cache, modes=["bm25", "hybrid"], baseline=False, max_embed=0)
    hybrid = again["tracks"]["test"]["dreamdb"]["hybrid"]
    assert "unavailable" not in hybrid and hybrid["metrics"]["n"] == 2
    assert again["indexes"]["corpus"]["embed"]["embedded"] == 0  # all done by the command


def test_each_mode_is_run_once_and_embeds_its_own_queries(tmp_path, monkeypatch):
    """QA round 68 L1: --modes bm25,BM25 ran BM25 twice; M5: the first dense mode embedded every query and the
    next ones found them cached, so dense looked 3.5 ms against hybrid's 12.8: each mode now starts with none."""
    from dreamdb.cli import main

    data = _scifact_data(tmp_path)
    cleared = []
    monkeypatch.setattr(suite, "clear_query_cache", lambda: cleared.append(True))
    assert main(["eval", "--data", str(data), "--set", "scifact", "--no-baseline", "--modes", "bm25, BM25,bm25",
                 "--cache", str(tmp_path / "cache"), "--json"]) == 0
    assert len(cleared) == 2  # one track, one mode: before its warm-up and after it (QA round 147-G F4)


def test_python_m_eval_prints_a_json_error_as_dreamdb_eval_does(tmp_path):
    """QA round 68 L4: `python -m eval --json` printed nothing on stdout for a refused option (it bypassed the
    console script's entry point, which turns --json errors into JSON)."""
    for argv in ([sys.executable, "-m", "eval"], [sys.executable, "-m", "dreamdb", "eval"]):
        p = subprocess.run([*argv, "--json", "--modes", "x", "--data", str(tmp_path)], capture_output=True, text=True,
                           cwd=ROOT, timeout=60)
        assert p.returncode == 2 and json.loads(p.stdout) == {"error": {
            "message": "Unknown mode 'x'", "hint": "Modes: bm25, hybrid, dense, rrf", "exit_code": 2}}, argv


def test_a_cache_in_the_data_folder_or_a_folder_in_the_reports_place_is_refused_before_the_run(tmp_path):
    """QA round 68 L6: a folder named last-run.json was found only after the run, which then wrote no report (with
    the hint "free some space"); L11: --cache inside --data wrote into the data folder that is never written, and
    a quick run's target verdicts did not say they rested on 50 queries."""
    data = _scifact_data(tmp_path)
    r = run_cli("--data", data, "--set", "scifact", "--no-baseline", "--cache", data / "eval-data" / "cache")
    assert r.returncode == 2 and "is inside the evaluation data folder" in r.stderr
    assert not (data / "eval-data" / "cache").exists()
    # the report too (QA round 122-C F3: --results-file overwrote the gold file of the data folder)
    corpus = data / "eval-data" / "scifact" / "corpus.jsonl"
    before = corpus.read_bytes()
    r = run_cli("--data", data, "--set", "scifact", "--no-baseline", "--cache", tmp_path / "c2", "--results-file", corpus)
    assert r.returncode == 2 and "The report" in r.stderr and "is inside the evaluation data folder" in r.stderr
    assert corpus.read_bytes() == before
    (tmp_path / "cache" / "last-run.json").mkdir(parents=True)
    r = run_cli("--data", data, "--set", "scifact", "--no-baseline", "--cache", tmp_path / "cache")
    assert r.returncode == 2 and f"Cannot write {tmp_path / 'cache' / 'last-run.json'}: it is a folder" in r.stderr
    (tmp_path / "report.md").mkdir()
    r = run_cli("--data", data, "--set", "scifact", "--no-baseline", "--cache", tmp_path / "cache2", "--results-file",
                tmp_path / "report.md")
    assert r.returncode == 2 and "report.md' is a directory" in r.stderr  # (click's own check)
    r = run_cli("--data", data, "--set", "scifact", "--no-baseline", "--cache", tmp_path / "cache2", "--quick")
    assert r.returncode == 0 and "target: SciFact BM25 nDCG@10 ≥ 0.67: " in r.stdout
    verdicts = [line for line in r.stdout.splitlines() if line.startswith("target: SciFact BM25")]
    assert verdicts and verdicts[0].endswith("(quick run: the first queries of each track only, not the target's measure)")
    targets = [line for line in r.stdout.splitlines() if line.startswith("target: ")]
    assert targets and all("SciFact" in line for line in targets), targets  # (F3: sets not asked for: no line)


def test_a_kept_index_found_damaged_is_rebuilt_with_a_note(tmp_path):
    """QA round 100-A F5: the evaluation's kept index (the one whose embeddings are reused), found damaged, was rebuilt
    without a word (``notes`` empty, its vectors gone, and dense then said "N chunks would need embedding" with no
    word why). The rebuild is said in the log and in the set's ``index_notes``."""
    data = _scifact_data(tmp_path)
    cache = tmp_path / "cache"
    args = ("--data", data, "--set", "scifact", "--no-baseline", "--modes", "bm25", "--cache", cache, "--json")
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    assert "index_notes" not in json.loads(first.stdout)["sets"]["scifact"]["indexes"]["corpus"]
    kept = cache / "scifact" / "corpus" / "index.db"
    size = kept.stat().st_size
    with open(kept, "r+b") as f:  # the pages after the header: tables' b-trees, as a bad disk leaves them
        f.seek(4096)
        f.write(b"\xff" * (size - 4096))
    again = run_cli(*args)
    assert again.returncode == 0, again.stderr
    notes = json.loads(again.stdout)["sets"]["scifact"]["indexes"]["corpus"].get("index_notes")
    assert notes and any("rebuilt from the vault" in n for n in notes), (notes, again.stderr)
    assert "scifact/corpus: note: " in again.stderr
    assert json.loads(again.stdout)["sets"]["scifact"]["tracks"]["test"]["dreamdb"]["bm25"]["metrics"] == \
        json.loads(first.stdout)["sets"]["scifact"]["tracks"]["test"]["dreamdb"]["bm25"]["metrics"]


def test_a_set_folder_the_run_cannot_make_is_said_in_words_and_nothing_scored_is_exit_1(tmp_path):
    """QA round 100-A F6: a cache whose set folder could not be made (sysfs as root: EPERM) was reported as
    "error: PermissionError: [Errno 1] …" on every track, and the run ended in exit 74, "cannot write the results
    (the figures are printed above)", though no figure was scored. The cause is said in words; nothing scored is
    exit 1, as the README says."""
    data = _scifact_data(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "scifact").write_text("a file where the set's folder goes")
    r = run_cli("--data", data, "--set", "scifact", "--no-baseline", "--modes", "bm25", "--cache", cache)
    assert r.returncode == 1 and "No track was scored" in r.stderr, r.stderr
    assert f"error: cannot use {cache / 'scifact' / 'corpus'}: Not a directory" in r.stdout + r.stderr
    assert "NotADirectoryError" not in r.stdout + r.stderr


def test_a_document_the_sync_skips_is_said_in_the_runs_notes(tmp_path):
    """QA round 122-C F4: a corpus document holding a NUL byte was skipped by the sync ("looks binary"), so scored as
    never found, and said only as a count in the JSON (``sync_warnings``): now a note with the sync's words."""
    docs = [dict(d) for d in DOCS]
    docs[1]["text"] = "SQLite postings\u0000 store term frequencies"
    r = run_cli("--data", _scifact_data(tmp_path, docs=docs), "--set", "scifact", "--no-baseline", "--cache",
                tmp_path / "cache")
    assert r.returncode == 0, r.stderr
    assert "scifact/corpus: note: the sync of 2 documents warned 1 time (knowledge/d000001.md:" in r.stderr, r.stderr


# -- QA round 135-D ---------------------------------------------------------------------------------------------------
def test_a_lone_surrogate_is_refused_at_load_with_file_and_line(tmp_path):
    """F2: a lone surrogate (``\\ud800``, legal JSON, no text) in a gold id was run whole and ended in exit 70 when the
    results were written; in a query the whole index's result was "The query is not valid UTF-8", no file or line."""
    ok = '{"id": "g1", "query": "sleep", "expected": ["knowledge/otter"]}\n'
    for line, where in (('{"id": "g\\ud800", "query": "sleep", "expected": ["knowledge/otter"]}\n', "'id'"),
                        ('{"id": "g2", "query": "sle\\udc00ep", "expected": ["knowledge/otter"]}\n', "'query'"),
                        ('{"id": "g2", "query": "sleep", "expected": ["knowledge/\\ud83d"]}\n', "'expected'")):
        (tmp_path / "gold.jsonl").write_text(ok + line, encoding="utf-8")
        with pytest.raises(UsageError, match=re.escape("gold.jsonl:2: not a gold query (a lone surrogate") + ".*" + where):
            gold.load_gold(tmp_path / "gold.jsonl")
    # a pair (an emoji written as two escapes) is text: read as it is
    (tmp_path / "gold.jsonl").write_text(ok.replace("sleep", "sleep \\ud83d\\ude00"), encoding="utf-8")
    assert gold.load_gold(tmp_path / "gold.jsonl")[0].query == "sleep \U0001F600"
    for name, text, where in (("corpus.jsonl", _jsonl(DOCS[:2]) + '{"id": "S-3", "text": "x\\ud800"}\n', "'text'"),
                              ("queries.jsonl", '{"id": "q\\udfff", "text": "sleep"}\n', "'id'")):
        root = write_collection(tmp_path / name.split(".")[0], **{name.split(".")[0].replace("corpus", "docs"): text})
        line = text.count("\n")
        with pytest.raises(UsageError, match=re.escape(f"{name}:{line}: a lone surrogate") + ".*" + where):
            beir.load_collection(root)


def test_a_gold_set_with_a_lone_surrogate_exits_2_before_the_run(tmp_path):
    """F2 through the CLI: refused at load (exit 2) with the file and line, before a run that ended in exit 70."""
    data = _gold_data(tmp_path, [{"id": "g1", "query": "otters", "expected": ["knowledge/otter"]}])
    gold_file = data / "eval" / "dreamcontext-gold-train.jsonl"
    gold_file.write_text('{"id": "g\\ud800", "query": "otters", "expected": ["knowledge/otter"]}\n', encoding="utf-8")
    r = run_cli("--data", data, "--set", "dreamcontext", "--no-baseline", "--cache", tmp_path / "cache")
    assert r.returncode == 2 and f"{gold_file}:1: not a gold query (a lone surrogate" in r.stderr, r.stderr
    assert "internal error" not in r.stderr and "dreamcontext/vault: indexing" not in r.stderr


def test_lines_end_at_a_newline_only(tmp_path):
    """F4: a raw U+2028 or U+0085 inside a JSON string (``json.dumps(ensure_ascii=False)`` writes them) was taken for
    the end of the line by ``str.splitlines``: "not a gold query (Unterminated string …)", exit 2."""
    lines = [{"id": "g1", "query": "sleep\u2028consolidation", "expected": ["knowledge/otter"]},
             {"id": "g2", "query": "walrus\x85tusks\x0cand whiskers", "expected": ["knowledge/walrus"]}]
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\r\n" for x in lines),
                                         encoding="utf-8")
    assert [q.query for q in gold.load_gold(tmp_path / "gold.jsonl")] == [x["query"] for x in lines]
    (tmp_path / "qrels.tsv").write_text("qid\tdocid\trel\r\nq1\tS\u2028-1\t1\nq\x852\tS-2\t1\n", encoding="utf-8")
    assert beir.read_qrels(tmp_path / "qrels.tsv") == {"q1": {"S\u2028-1": 1}, "q\x852": {"S-2": 1}}
    root = write_collection(tmp_path / "c", docs="".join(json.dumps(d, ensure_ascii=False) + "\n" for d in
                                                         [{**DOCS[0], "text": "night\u2028ly"}, *DOCS[1:]]))
    assert beir.load_collection(root).corpus["S-1"]["text"] == "night\u2028ly"


def test_a_lone_carriage_return_is_no_line_end_and_a_bad_byte_is_said_at_its_own_line(tmp_path):
    """QA round 137 F4: a raw CR between a record's fields (JSON white space) was read as the end of a line by
    Python's universal newlines, and the record refused as two; a line that is not UTF-8 was named by the line 8 KB
    of decoding had reached (line 3,000's bad byte said at 2,977, line 5's at 1)."""
    (tmp_path / "gold.jsonl").write_text('{"id": "g1",\r"query": "otter", "expected": ["knowledge/otter"]}\n',
                                         encoding="utf-8", newline="")
    assert [q.id for q in gold.load_gold(tmp_path / "gold.jsonl")] == ["g1"]
    records = "".join(json.dumps(d) + "\n" for d in DOCS)
    root = write_collection(tmp_path / "c", docs=records.replace('"title":', '\r"title":', 1))
    assert len(beir.load_collection(root).corpus) == len(DOCS)
    # (a TSV's lone CR is a line end, as in an old Mac file: QA round 138 F3, the whole file was read as its header)
    (tmp_path / "qrels.tsv").write_bytes(b"query-id\tcorpus-id\tscore\r1\td1\t1\r2\td2\t1\r")
    assert beir.read_qrels(tmp_path / "qrels.tsv") == {"1": {"d1": 1}, "2": {"d2": 1}}
    corpus = tmp_path / "many.jsonl"
    corpus.write_bytes(b"".join(json.dumps({"_id": f"d{i}", "title": "t", "text": "x" * 40}).encode() + b"\n"
                                for i in range(2999)) + b'{"_id": "bad", "title": "t", "text": "\xff"}\n')
    with pytest.raises(UsageError, match=r"many\.jsonl:3000: not UTF-8 text"):
        beir.read_jsonl_lines(corpus)
