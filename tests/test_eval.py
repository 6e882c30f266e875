"""The evaluation suite: metrics by hand, the BEIR loader + vault conversion end to end, a CLI smoke run."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import dreamdb
from dreamdb.errors import UsageError
from dreamdb.evaluation import beir, suite
from dreamdb.evaluation.gold import load_gold
from dreamdb.evaluation import metrics as M
from tests.conftest import EVAL_DATA, gold_data_folder

ROOT = Path(__file__).resolve().parents[1]


# -- metrics, hand-computed -------------------------------------------------------------------------------------------
def test_ndcg_graded_gains():
    """trec_eval's linear gains, as pytrec_eval's ndcg_cut and BEIR (QA round 66 L3: they were 2^rel − 1)."""
    ranked = ["x", "a", "y", "b"]
    rel = {"a": 2, "b": 1}
    dcg = 2 / math.log2(3) + 1 / math.log2(5)  # grade 2 at rank 2, grade 1 at rank 4
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert M.ndcg_at(ranked, rel, 10) == pytest.approx(dcg / idcg)
    assert M.ndcg_at(["a", "b"], rel, 10) == pytest.approx(1.0)
    assert M.ndcg_at(["x"], rel, 10) == 0.0
    assert M.ndcg_at(ranked, rel, 1) == 0.0


def test_gold_ndcg_is_the_protocols_first_hit_form():
    """QA round 66 M2: the protocol's nDCG@10 (binary) is of the first hit in expected ∪ alt; every target was taken
    as relevant, so a query answered at rank 1 whose alternative was missing scored 1/(1 + 1/log2 3) = 0.61."""
    from dreamdb.evaluation.gold import score_ranked

    targets = {"feature/a", "knowledge/b"}
    assert score_ranked(["feature/a", "x", "y"], targets)["ndcg@10"] == 1.0
    assert score_ranked(["x", "y", "knowledge/b", "feature/a"], targets)["ndcg@10"] == pytest.approx(1 / math.log2(4))
    assert score_ranked(["x"] * 10 + ["feature/a"], targets)["ndcg@10"] == 0.0
    assert M.first_hit_ndcg_at(["x", "a"], {"a"}, 1) == 0.0


def test_mrr_recall_hit():
    assert M.mrr_at(["x", "y", "a"], {"a"}, 10) == pytest.approx(1 / 3)
    assert M.mrr_at(["x", "y", "a"], {"a"}, 2) == 0.0
    assert M.recall_at(["a", "x", "b"], {"a", "b", "c"}, 1) == pytest.approx(1 / 3)
    assert M.recall_at(["a", "x", "b"], {"a", "b", "c"}, 3) == pytest.approx(2 / 3)
    assert M.recall_at(["a"], {"a": 0, "b": 1}, 1) == 0.0  # grade 0 is not relevant
    assert M.hit_at(["x", "a"], {"a", "b"}, 1) == 0.0 and M.hit_at(["x", "a"], {"a", "b"}, 2) == 1.0
    assert M.percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)


def test_score_beir_and_mean():
    row = beir.score_beir(["x", "a", "y"], {"a": 1, "b": 1})
    assert row["r@1"] == 0.0 and row["r@3"] == 0.5 and row["mrr"] == 0.5 and row["rank"] == 2
    m = beir.mean_metrics([row, beir.score_beir(["b"], {"b": 1})])
    assert m["n"] == 2 and m["r@1"] == pytest.approx(50.0) and m["mrr"] == pytest.approx(0.75)


# -- loader + conversion, end to end through dreamdb ------------------------------------------------------------------
DOCS = [
    {"id": "S-1", "title": "Sleep consolidation", "text": "The nightly sleep cycle consolidates agent memory into knowledge notes."},
    {"id": "S-2", "title": "Database postings", "text": "SQLite postings store term frequencies for exact BM25 scoring."},
    {"id": "S-3", "title": "Turkish morphology", "text": "Suffixes such as -lar and -ler mark the plural in Turkish words."},
    {"id": "S-4", "title": "Release notes", "text": "Version two ships a hybrid recall mode with local embeddings."},
]
QUERIES = [{"id": "q1", "text": "sqlite postings"}, {"id": "q2", "text": "memory consolidation during sleep"}]
QRELS = "qid\tdocid\trel\nq1\tS-2\t1\nq2\tS-1\t2\nq2\tS-4\t1\n"


@pytest.fixture()
def tiny(tmp_path):
    root = tmp_path / "tiny"
    root.mkdir()
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in DOCS) + "\n", encoding="utf-8")
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in QUERIES) + "\n", encoding="utf-8")
    (root / "qrels.tsv").write_text(QRELS, encoding="utf-8")
    return root


def test_loader(tiny):
    c = beir.load_collection(tiny)
    assert list(c.corpus) == ["S-1", "S-2", "S-3", "S-4"]
    assert c.qrels == {"q1": {"S-2": 1}, "q2": {"S-1": 2, "S-4": 1}}
    assert c.judged_queries() == [("q1", "sqlite postings"), ("q2", "memory consolidation during sleep")]
    sub = beir.subset(c, doc_filter=lambda d: d["id"] != "S-4", name="t")
    assert sub.qrels["q2"] == {"S-1": 2}
    (tiny / "bad.tsv").write_text("qid docid rel\nq1 S-1\n", encoding="utf-8")
    with pytest.raises(UsageError):
        beir.read_qrels(tiny / "bad.tsv")


def test_conversion_and_recall_end_to_end(tiny, tmp_path):
    c = beir.load_collection(tiny)
    docs = [(d, r["title"], r["text"]) for d, r in c.corpus.items()]
    vb = beir.corpus_to_vault(docs, tmp_path / "cache")
    assert vb.rebuilt and len(vb.slug_to_id) == 4
    md = (vb.vault / "knowledge" / "d000001.md").read_text(encoding="utf-8")
    assert md.startswith('---\ntitle: "Database postings"\n---\n') and "SQLite postings" in md
    assert not beir.corpus_to_vault(docs, tmp_path / "cache").rebuilt  # cached: same corpus, no rewrite
    assert beir.corpus_to_vault(docs[:3], tmp_path / "cache").rebuilt  # corpus changed: rebuilt
    # a manifest of another shape is stale, converted again (QA round 117-B F3: AttributeError on every later run)
    for manifest in ("[1, 2]", '{"key": "x"}', '{"key": "x", "slug_to_id": [1]}'):
        (tmp_path / "cache" / "manifest.json").write_text(manifest, encoding="utf-8")
        assert beir.corpus_to_vault(docs, tmp_path / "cache").rebuilt
    # a rewrite for other documents interrupted half-way: the next run of these converts them again (QA round 122-C
    # F1: the half-written vault was taken under the manifest of these, and scored)
    real_render = beir.render_markdown
    calls = []

    def interrupted(title, text):
        calls.append(title)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_render(title, text)

    beir.render_markdown = interrupted
    try:
        with pytest.raises(KeyboardInterrupt):
            beir.corpus_to_vault(docs[1:], tmp_path / "cache")
    finally:
        beir.render_markdown = real_render
    again = beir.corpus_to_vault(docs, tmp_path / "cache")
    assert again.rebuilt and len(list((again.vault / "knowledge").glob("*.md"))) == 4

    vb = beir.corpus_to_vault(docs, tmp_path / "cache")
    ix = dreamdb.open(vb.vault, index_path=tmp_path / "cache" / "index.db", auto_sync=False)
    assert ix.sync().documents == 4
    hits = ix.recall("sqlite postings", top=10)
    assert hits[0].doc_id == "knowledge/d000001" and vb.corpus_id(hits[0].doc_id) == "S-2"

    def search(text):
        return [vb.corpus_id(h.doc_id) for h in ix.recall(text, top=10)]

    res = beir.run_queries(search, c.judged_queries(), c.qrels)
    by_id = {r["id"]: r for r in res["rows"]}
    assert by_id["q1"]["ndcg@10"] == pytest.approx(1.0)
    q2 = by_id["q2"]
    assert q2["rank"] == 1  # S-1 first
    assert q2["r@10"] == pytest.approx(0.5)  # S-4 shares no term with the query
    assert q2["ndcg@10"] == pytest.approx(2 / (2 + 1 / math.log2(3)))
    assert res["metrics"]["n"] == 2 and res["latency_ms"]["p50"] > 0
    ix.close()


def test_baseline_same_documents(tiny):
    pytest.importorskip("bm25s")
    from dreamdb.evaluation.baseline import Bm25sBaseline

    c = beir.load_collection(tiny)
    bl = Bm25sBaseline(list(c.corpus), [f"{r['title']}\n{r['text']}" for r in c.corpus.values()])
    assert bl.search("sqlite postings")[0] == "S-2"
    assert bl.search("zzzunknownzzz") == []
    assert "lucene" in bl.describe() and bl.size_bytes() > 0


def test_copy_vault_never_writes_source(tmp_path):
    src = tmp_path / "src" / "EIPS"
    src.mkdir(parents=True)
    (src / "eip-1.md").write_text("---\ntitle: Purpose\n---\n\nBody text.\n", encoding="utf-8")
    os.chmod(src / "eip-1.md", 0o444)
    vb = beir.copy_vault(tmp_path / "src", tmp_path / "cache", into="knowledge")
    assert (vb.vault / "knowledge" / "EIPS" / "eip-1.md").exists() and vb.slug_to_id == {"eip-1": "eip-1"}
    assert os.access(vb.vault / "knowledge" / "EIPS" / "eip-1.md", os.W_OK)
    assert vb.corpus_id("knowledge/eip-1") == "eip-1"


def test_missing_data_is_not_found(tmp_path):
    """Exit 7, as every folder an option names that is not there (QA round 130-D F2: it was 2)."""
    from dreamdb.errors import NotFound

    with pytest.raises(NotFound):
        suite.check_data(tmp_path / "absent", ["scifact"], explicit=True)
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(tmp_path / "absent")],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 7 and "Traceback" not in r.stderr
    assert f"Evaluation data folder not found: {tmp_path / 'absent'} (the path does not exist)." in r.stderr
    (tmp_path / "a-file").write_text("x")  # (a file for the folder: 7 too; QA round 132-B F4, click's 2)
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(tmp_path / "a-file")],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 7 and f"{tmp_path / 'a-file'} (the path is not a folder)." in r.stderr, r.stderr


def test_a_set_missing_any_file_it_reads_is_skipped_before_the_run(tmp_path):
    """QA round 68 M2: eips without queries_title.jsonl passed the check and failed the run after the sets before
    it had run (exit 2, no report); L8: "No evaluation data under DIR" did not say what it looked for."""
    data = tmp_path / "data"
    eips = data / "eval-data" / "eips_ercs"
    (eips / "vault").mkdir(parents=True)
    for f in ("corpus.jsonl", "queries.jsonl", "qrels.tsv", "qrels_title.tsv"):
        (eips / f).write_text("")
    sci = data / "eval-data" / "scifact"
    sci.mkdir(parents=True)
    for f in ("corpus.jsonl", "queries.jsonl", "qrels.tsv"):
        (sci / f).write_text("")
    ok, notes = suite.check_data(data, ["scifact", "eips"], explicit=False)
    assert ok == ["scifact"] and notes == [f"set eips: skipped, missing {eips / 'queries_title.jsonl'}"]
    with pytest.raises(UsageError, match="queries_title.jsonl"):
        suite.check_data(data, ["eips"], explicit=True)
    with pytest.raises(UsageError, match=r"missing xquad: eval-data/xquad_tr_en/corpus.jsonl, "
                                         r"eval-data/xquad_tr_en/corpus_sent.jsonl"):
        suite.check_data(data, ["xquad"], explicit=False)
    # QA round 86-C M5: the files missing are named, not the first two looked for (which were there)
    (sci / "qrels.tsv").unlink()
    with pytest.raises(UsageError) as info:
        suite.check_data(data, ["scifact"], explicit=False)
    assert info.value.message.endswith("(missing scifact: eval-data/scifact/qrels.tsv)"), info.value.message


@pytest.mark.parametrize("line, said", [
    (b"\xff\n", "not UTF-8 text"),
    (b"", "holds no query"),
    (b'{"id": "q1", "query": 5, "expected": ["feature/x"]}\n', "'query' must be a non-empty string"),
    ('{"id": "q1", "query": "\u200b", "expected": ["feature/x"]}\n'.encode(), "'query' must be a non-empty string"),
    (b'{"id": "q1", "query": "sleep", "expected": "feature/x"}\n', "'expected' must be a list of type/slug strings"),
    (b'{"id": "q1", "query": "sleep", "expected": [1]}\n', "'expected' must be a list"),
    (b'{"id": "q1", "query": "sleep"}\n', "no target"),
    (b'["q1"]\n', "must be a JSON object"),
    # QA round 68 L5: null, a list or an object was turned into "None", "['a']"; a missing id said "('id')"
    (b'{"id": null, "query": "sleep", "expected": ["feature/x"]}\n', "'id' must be a non-empty string or an integer"),
    (b'{"id": ["a"], "query": "sleep", "expected": ["feature/x"]}\n', "'id' must be a non-empty string or an integer"),
    (b'{"query": "sleep", "expected": ["feature/x"]}\n', "'id' must be a non-empty string or an integer, got None"),
    (b'{"id": true, "query": "sleep", "expected": ["feature/x"]}\n', "'id' must be a non-empty string or an integer"),
])
def test_a_malformed_gold_set_is_refused_with_its_line(tmp_path, line, said):
    """QA round 20: a non-UTF-8 gold file ended in exit 70, an empty one in "KeyError: 'all'" and exit 0, and
    "expected": "feature/x" (a string) was scored against its characters: R@1 0.0, silently."""
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes(line)
    with pytest.raises(UsageError, match=re.escape(said)):
        load_gold(gold)


@pytest.mark.parametrize("corpus, queries, said", [
    (b"\xff\n", None, "corpus.jsonl:1: not UTF-8 text"),
    (b'{"title": "T", "text": "no id"}\n', None, 'corpus.jsonl:1: a record needs an "id"'),
    (b'{"id": "S-1", "text": 5}\n', None, 'corpus.jsonl:1: "text" must be text, got int'),
    (None, b'{"text": "a query"}\n', 'queries.jsonl:1: a record needs an "id"'),
    (None, b'"just text"\n', "queries.jsonl:1: a record must be a JSON object"),
])
def test_a_malformed_collection_is_refused_with_its_line(tiny, corpus, queries, said):
    if corpus is not None:
        (tiny / "corpus.jsonl").write_bytes(corpus)
    if queries is not None:
        (tiny / "queries.jsonl").write_bytes(queries)
    with pytest.raises(UsageError, match=re.escape(said)):
        beir.load_collection(tiny)


def test_a_malformed_gold_set_exits_2_through_the_cli(tmp_path):
    data = tmp_path / "data"
    (data / "eval").mkdir(parents=True)
    (data / "vaults" / "dreamcontext" / "_dream_context" / "knowledge").mkdir(parents=True)
    (data / "eval" / "dreamcontext-gold-train.jsonl").write_bytes(b"\xff\n")
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--set", "dreamcontext",
                        "--no-baseline", "--cache", str(tmp_path / "cache")], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 2 and "not UTF-8 text" in r.stderr and "Traceback" not in r.stderr


def test_gold_targets_that_are_no_document_of_the_vault_are_warned_of(tmp_path):
    """QA round 59 L11: a gold line expecting `knowledge/does-not-exist` was scored as a plain miss, with no word."""
    data = tmp_path / "data"
    (data / "eval").mkdir(parents=True)
    notes = data / "vaults" / "dreamcontext" / "_dream_context" / "knowledge"
    notes.mkdir(parents=True)
    (notes / "walrus.md").write_text("---\ntitle: Walrus\n---\nwalrus tusks and whiskers\n")
    (data / "eval" / "dreamcontext-gold-train.jsonl").write_text("\n".join(json.dumps(q) for q in (
        {"id": "q1", "query": "walrus tusks", "expected": ["knowledge/walrus"], "alt": ["knowledge/walrus-old"]},
        {"id": "q2", "query": "nothing here", "expected": ["knowledge/does-not-exist"]})) + "\n")
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--set", "dreamcontext",
                        "--no-baseline", "--modes", "bm25", "--cache", str(tmp_path / "cache"), "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert ("dreamcontext gold-train: warning: 2 gold target(s) are no document of the index (q1: knowledge/walrus-old,"
            " q2: knowledge/does-not-exist); no target of 1 query is one (q2), so they cannot be found") in r.stderr
    info = json.loads(r.stdout)["sets"]["dreamcontext"]["indexes"]["vault"]
    assert info["missing_gold_targets"] == {"gold-train": [["q1", "knowledge/walrus-old", False],
                                                            ["q2", "knowledge/does-not-exist", True]]}
    # without a lexicon (the tests' setting), the run says so: Turkish figures are lower (QA round 106 F6)
    assert "note: no Turkish–English lexicon (" in r.stderr and "run without translations" in r.stderr
    assert any("no Turkish–English lexicon" in n for n in json.loads(r.stdout)["notes"])


def test_an_installed_dreamdb_evaluates_nothing_relative_to_the_working_folder(tmp_path, monkeypatch, capsys):
    """QA round 93-C F5: from an installed wheel, ``dreamdb eval`` took the working folder for the repository: the
    user's project's commit recorded as dreamdb's, ``./eval/.cache`` made wherever it ran, ``../shared`` of that folder
    read as the data. Outside a source checkout the data folder must be given, the cache goes to dreamdb's user cache
    folder, the report to a --results-file, and the commit says which installed version ran."""
    from dreamdb.cli import main
    from dreamdb.evaluation import suite

    monkeypatch.setattr(suite, "source_root", lambda: None)
    monkeypatch.delenv("DREAMDB_EVAL_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    code = main(["eval", "--set", "dreamcontext", "--no-baseline"])
    err = capsys.readouterr().err
    assert code == 2 and "No evaluation data folder given" in err and "--data DIR" in err, err
    code = main(["eval", "--data", str(tmp_path), "--modes", "bm25,hybrid,dense", "--write-results"])
    err = capsys.readouterr().err
    assert code == 2 and "this dreamdb is installed" in err and "--results-file PATH" in err, err
    from dreamdb.config import cache_root

    assert suite.default_cache_dir() == cache_root() / "eval" and tmp_path not in suite.default_cache_dir().parents
    import dreamdb

    assert suite.machine_info()["commit"] == f"dreamdb {dreamdb.__version__}, installed"
    assert not (tmp_path / "eval").exists()


# -- CLI smoke --------------------------------------------------------------------------------------------------------
DATA = EVAL_DATA


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "eval-data" / "scifact" / "corpus.jsonl").exists(),
                    reason=f"evaluation data not found at {DATA} (set DREAMDB_SHARED or DREAMDB_EVAL_DATA)")
def test_cli_quick_scifact(tmp_path):
    report = tmp_path / "RESULTS.md"
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--quick", "--data", str(DATA), "--set", "scifact",
                        "--modes", "bm25", "--cache", str(tmp_path / "cache"), "--results-file", str(report), "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    t = out["sets"]["scifact"]["tracks"]["test"]
    assert t["n"] == suite.QUICK_QUERIES
    m, b = t["dreamdb"]["bm25"]["metrics"], t["bm25s"]["metrics"]
    assert 0.3 < m["ndcg@10"] <= 1.0 and m["n"] == suite.QUICK_QUERIES
    assert out["sets"]["scifact"]["indexes"]["corpus"]["documents"] == 5183
    # The paired comparison of dreamdb BM25 with bm25s, from the per-query rows the JSON leaves out.
    (c,) = out["comparisons"]
    assert (c["a"], c["b"], c["metric"], c["n"]) == ("dreamdb bm25", "bm25s", "ndcg@10", suite.QUICK_QUERIES)
    assert c["delta"] == pytest.approx(m["ndcg@10"] - b["ndcg@10"]) and c["low"] <= c["delta"] <= c["high"]
    assert 0.0 < c["p"] <= 1.0
    # each verdict says it is a quick run's, as the text does (QA round 135-B F5: the JSON gave "NOT met" alone)
    targets = {t["target"]: t for t in out["targets"]}
    bm25_target = targets["SciFact BM25 nDCG@10 ≥ 0.67"]
    assert bm25_target["verdict"] in ("met", "NOT met") and bm25_target["note"].startswith("quick run: the first")
    md = report.read_text(encoding="utf-8")
    assert "## Paired comparisons" in md and f"| scifact | test | dreamdb bm25 | bm25s | ndcg@10 | {suite.QUICK_QUERIES} |" in md
    assert "- this run wall time:" in md and "full-run" not in md  # (a quick run of one set: QA round 122-C F7)


@pytest.mark.model
def test_hybrid_mode_on_a_tiny_collection(tiny, tmp_path, model_dir, monkeypatch):
    """The suite embeds the collection, runs hybrid beside bm25 and finds the paraphrase bm25 misses."""
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    c = beir.load_collection(tiny)
    docs = [(d, r["title"], r["text"]) for d, r in c.corpus.items()]
    vb = beir.corpus_to_vault(docs, tmp_path / "cache")
    ix = dreamdb.open(vb.vault, index_path=tmp_path / "cache" / "index.db", auto_sync=False)
    ix.sync()
    assert ix.refresh_embeddings().embedded == 4

    def search(mode):
        return lambda text: [vb.corpus_id(h.doc_id) for h in ix.recall(text, top=10, mode=mode)]

    bm = beir.run_queries(search("bm25"), c.judged_queries(), c.qrels)
    hy = beir.run_queries(search("hybrid"), c.judged_queries(), c.qrels)
    assert {r["id"]: r["r@10"] for r in bm["rows"]}["q2"] == pytest.approx(0.5)
    assert {r["id"]: r["r@10"] for r in hy["rows"]}["q2"] == pytest.approx(1.0)  # S-4 via the dense channel
    assert hy["metrics"]["ndcg@10"] >= bm["metrics"]["ndcg@10"]
    ix.close()


@pytest.mark.skipif(not (DATA / "eval-data" / "xquad_tr_en" / "corpus.jsonl").exists(),
                    reason=f"evaluation data not found at {DATA} (set DREAMDB_SHARED or DREAMDB_EVAL_DATA)")
def test_xquad_mixed_language_track_plan():
    """The mixed-language corpus holds each paragraph once, in English for half of the articles and in
    Turkish for the rest, and every question's relevant paragraph is in it."""
    p = suite.plan_set("xquad", DATA)
    spec = next(s for s in p.indexes if s.key == "para-mixed")
    assert "240 paragraphs" in spec.desc
    tracks = {t.name: t for t in p.tracks if t.index == "para-mixed"}
    assert set(tracks) == {"para tr→mixed", "para en→mixed"}
    corpus = [json.loads(l) for l in (DATA / "eval-data" / "xquad_tr_en" / "corpus.jsonl").read_text().splitlines()]
    by_id = {d["id"]: d for d in corpus}
    for t in tracks.values():
        assert len(t.queries) == 1190
        docs = {d for q, _text in t.queries for d in t.qrels[q]}
        assert all(len(t.qrels[q]) == 1 for q, _text in t.queries)  # only one language version is in the corpus
        paras = {by_id[d]["para"] for d in docs}
        assert len(docs) == len(paras) == 240  # each paragraph once
        langs = {by_id[d]["lang"] for d in docs}
        assert langs == {"en", "tr"}
        for art in {by_id[d]["article"] for d in docs}:  # one language per article
            assert len({by_id[d]["lang"] for d in docs if by_id[d]["article"] == art}) == 1


def test_without_turkish_letters():
    assert suite.without_turkish_letters("Işık ÇAĞRI şöyle: İstanbul'u gördü") == "Isik CAGRI soyle: Istanbul'u gordu"


@pytest.mark.skipif(not (DATA / "eval-data" / "xquad_tr_en" / "corpus.jsonl").exists(),
                    reason=f"evaluation data not found at {DATA} (set DREAMDB_SHARED or DREAMDB_EVAL_DATA)")
def test_xquad_ascii_track_plan():
    """The Turkish questions typed without Turkish letters ask the Turkish paragraphs, with the tr→tr judgements."""
    p = suite.plan_set("xquad", DATA)
    tracks = {t.name: t for t in p.tracks}
    ascii_t, plain = tracks["para tr-ascii→tr"], tracks["para tr→tr"]
    assert ascii_t.index == plain.index == "para-tr" and ascii_t.qrels == plain.qrels
    assert [q for q, _ in ascii_t.queries] == [q for q, _ in plain.queries] and len(ascii_t.queries) == 1190
    assert all(text.isascii() or not set(text) & set("çğıöşüÇĞİÖŞÜ") for _, text in ascii_t.queries)
    changed = sum(a != b for (_, a), (_, b) in zip(ascii_t.queries, plain.queries))
    assert changed > 1000  # almost every Turkish question has a Turkish letter


def test_unwritable_report_or_cache_paths_are_refused_before_the_run(tmp_path):
    """QA round 23: a --results-file in a missing folder, or a --cache that cannot be made, ended a whole
    run with exit 70 (internal error); both are usage errors found before any work."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    for args, said in ((["--results-file", str(tmp_path / "missing" / "sub" / "r.md")], "does not exist"),
                       (["--cache", str(afile / "cache")], "Cannot use the cache folder")):
        # no data at all: had the run started, it would have stopped on that first
        r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(tmp_path / "absent"), *args],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_a_cache_folder_or_last_run_with_no_write_bit_is_refused_before_the_run_even_for_root(tmp_path):
    """QA round 150-G F3: as root, ``--cache`` a ``chmod 555`` folder was written into (exit 0), and a 444
    ``last-run.json`` was refused only after the whole run (exit 74), where dreamdb's vault writes take a folder or
    file with no write bit as read-only even for root (commit 9d0b88a). Each is refused before any work, exit 2; as
    another user the access check refused them before, without the reason."""
    ro, above, cache = tmp_path / "ro", tmp_path / "above", tmp_path / "cache"
    for folder in (ro, above, cache):
        folder.mkdir()
    (cache / "last-run.json").write_text("{}")
    locked = (ro, above, cache / "last-run.json")
    for path in locked:
        path.chmod(0o444 if path.is_file() else 0o555)
    mode = "(mode {}: no write permission)"
    try:
        for args, said, hint in (
                (["--cache", ro], f"Cannot write in the cache folder {ro}: it is read-only {mode.format(555)}",
                 "Give --cache a folder you can write."),
                (["--cache", above / "sub" / "c"], f"Cannot make the cache folder {above / 'sub' / 'c'}: the folder"
                 f" {above} it would be made in is read-only {mode.format(555)}", "Give --cache a folder you can write."),
                (["--cache", cache], f"Cannot write {cache / 'last-run.json'}: it is read-only {mode.format(444)}",
                 "Fix its permissions, or give --cache another folder.")):
            # (no data at all: had the run started, it would have stopped on that first, exit 7)
            r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(tmp_path / "absent"),
                                *map(str, args)], capture_output=True, text=True, timeout=120)
            assert (r.returncode, r.stderr) == (2, f"Error: {said}\nHint: {hint}\n"), args
        assert not any(ro.iterdir()) and not any(above.iterdir()) and (cache / "last-run.json").read_text() == "{}"
    finally:
        for path in locked:
            path.chmod(0o644 if path.is_file() else 0o755)


def test_a_report_path_under_a_file_or_a_link_into_a_missing_folder_is_refused_before_the_run(tmp_path):
    """QA round 144-A F4: ``--results-file et/del.md/x.md``, ``et/del.md`` a file, was said to be in a folder that
    does not exist ("Create it first"); a link to a file in a missing folder, or under a file, passed the check on the
    path as typed and failed after the whole run (exit 74, the second with a raw "[Errno 20] Not a directory"). The
    folder the report is written in, where the links lead, is checked, and said to be missing or a file."""
    (tmp_path / "del.md").write_text("x")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "missing" / "r.md")
    (tmp_path / "underfile.md").symlink_to(tmp_path / "del.md" / "sub")
    (tmp_path / "folder").symlink_to(tmp_path / "gone")
    said = "Error: Cannot write the report {}{}: {}\n"
    for target, lead, what, hint in (
            (tmp_path / "del.md" / "x.md", None, f"{tmp_path / 'del.md'} is a file, not a folder", "Move that file"),
            (tmp_path / "del.md" / "a" / "x.md", None, f"{tmp_path / 'del.md'} is a file, not a folder",
             "Move that file"),
            (tmp_path / "dangling.md", tmp_path / "missing" / "r.md",
             f"the folder {tmp_path / 'missing'} does not exist", "Create it first"),
            (tmp_path / "underfile.md", tmp_path / "del.md" / "sub", f"{tmp_path / 'del.md'} is a file, not a folder",
             "Move that file"),
            (tmp_path / "folder" / "r.md", tmp_path / "gone" / "r.md", f"the folder {tmp_path / 'gone'} does not exist",
             "Create it first")):
        # (no data at all: had the run started, it would have stopped on that first, exit 7)
        r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(tmp_path / "absent"), "--cache",
                            str(tmp_path / "c"), "--results-file", str(target)], capture_output=True, text=True,
                           timeout=120)
        via = f" (its links lead to {lead})" if lead else ""
        assert r.returncode == 2 and r.stderr.startswith(said.format(target, via, what)), (target, r.stderr)
        assert f"Hint: {hint}" in r.stderr and "Errno" not in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(tmp_path / "absent"), "--cache",
                        str(tmp_path / "c"), "--results-file", "del.md/x.md"], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)  # (named as typed)
    assert r.returncode == 2 and "report del.md/x.md: del.md is a file, not a folder" in r.stderr, r.stderr


def test_a_report_path_through_a_loop_of_links_is_refused_before_the_run(tmp_path):
    """QA round 144-I F3: ``--results-file loop``, ``loop`` a link to itself (or ``a`` and ``b`` linked to each other),
    ran the whole evaluation, then failed "[Errno 40] Too many levels of symbolic links", exit 74: the check's
    realpath of a looping path is that path, as for a file that is not there yet. It is refused before the run."""
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    for target, what in (("loop", "it is a symlink loop (a link that leads back to itself)"),
                         ("a", "it is a symlink loop (a link that leads back to itself)"),
                         ("loop/r.md", "it goes through a symlink loop: loop is a link that leads back to itself")):
        # (no data at all: had the run started, it would have stopped on that first, exit 7)
        r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(tmp_path / "absent"), "--cache",
                            str(tmp_path / "c"), "--results-file", target], capture_output=True, text=True,
                           timeout=120, cwd=tmp_path)
        assert r.returncode == 2 and r.stderr == (f"Error: Cannot write the report {target}: {what}\n"
                                                  "Hint: Fix the link, or give --results-file another path.\n"), r.stderr


def test_a_report_path_down_a_long_chain_of_links_is_no_loop(tmp_path):
    """QA round 144-J F1: ``--results-file l45``, a chain of 45 links ending at a file (more than Linux follows, so
    ``stat`` fails with ELOOP), was refused as "a symlink loop", though the report is written through its realpath;
    and ``r.md -> loop/x`` was said to be a loop itself. A chain that ends passes the check (the run then stops on the
    missing data, exit 7); a link into a loop names the loop."""
    from dreamdb.vault.discover import looping_link, path_problem, symlink_loop, too_many_links

    (tmp_path / "real.md").touch()
    previous = "real.md"
    for i in range(1, 46):
        (tmp_path / f"l{i}").symlink_to(previous)
        previous = f"l{i}"
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "r.md").symlink_to("loop/x")
    l45 = tmp_path / "l45"
    assert not symlink_loop(l45) and too_many_links(l45) and looping_link(l45) is None
    assert path_problem(l45, folder=False) == ("cannot be followed: it is a chain of more symbolic links than the"
                                               " system follows (too many links to follow)")
    assert looping_link(tmp_path / "r.md") == tmp_path / "loop"
    for target, code, said in (("l45", 7, None), ("r.md", 2, "Error: Cannot write the report r.md: it goes through a"
                                                            " symlink loop: loop is a link that leads back to itself")):
        r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(tmp_path / "absent"), "--cache",
                            str(tmp_path / "c"), "--results-file", target], capture_output=True, text=True,
                           timeout=120, cwd=tmp_path)
        assert r.returncode == code and (said in r.stderr if said else "loop" not in r.stderr), r.stderr


def test_a_report_path_to_the_commands_own_output_or_a_descriptor_is_refused_before_the_run(tmp_path):
    """QA round 143-H F3: ``--json --results-file /dev/stdout > o.json`` exited 0 with o.json holding the markdown alone
    (the report, renamed over o.json, took the place of the shell's file; the JSON went to the replaced one), and with
    stdout a pipe the message named ``/proc/<pid>/fd/pipe:[…]``, which does not exist: such a path is refused before
    the run, whatever leads to it (``/proc/self/fd/1``, a link, the same file as the output, ``/dev/fd/N``)."""
    base = [sys.executable, "-m", "dreamdb", "eval", "--data", str(tmp_path / "absent"), "--cache", str(tmp_path / "c"),
            "--json"]  # (no data at all: had the run started, it would have stopped on that first, exit 7)
    out = tmp_path / "o.json"
    link = tmp_path / "link.md"
    link.symlink_to("/dev/stdout")
    said = "--results-file {} names this command's standard output: the report would replace the file that goes to"
    hint = "Hint: Give --results-file the path of a file: the markdown report goes there"
    for target in ("/dev/stdout", "/proc/self/fd/1", str(out), str(link)):
        with open(out, "w") as stdout:  # (as the shell's > o.json)
            r = subprocess.run([*base, "--results-file", target], stdout=stdout, stderr=subprocess.PIPE, text=True,
                               timeout=120)
        document = json.loads(out.read_text())  # one JSON document: the error's
        assert r.returncode == 2 and document["error"]["message"].startswith(said.format(target)), (target, r.stderr)
        assert r.stderr.startswith("Error: " + said.format(target)) and hint in r.stderr, r.stderr
    r = subprocess.run([*base, "--results-file", "/dev/stdout"], capture_output=True, text=True, timeout=120)  # a pipe
    assert r.returncode == 2 and said.format("/dev/stdout") in r.stderr and "pipe:[" not in r.stderr, r.stderr
    r = subprocess.run([*base, "--results-file", "/dev/stderr"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=120)
    assert r.returncode == 2 and "names this command's standard output and error" in r.stdout, r.stdout
    reader, writer = os.pipe()
    try:
        for number, which in ((writer, "is a pipe, socket, terminal or device, not a file"), (99, "is not open")):
            r = subprocess.run([*base, "--results-file", f"/dev/fd/{number}"], capture_output=True, text=True,
                               timeout=120, pass_fds=(writer,))
            assert r.returncode == 2 and f"names file descriptor {number}, which {which}" in r.stderr, r.stderr
            assert "pipe:[" not in r.stderr and hint in r.stderr, r.stderr
    finally:
        os.close(reader)
        os.close(writer)
    r = subprocess.run([*base, "--results-file", os.devnull], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "it is not a regular file (a pipe, device or socket)" in r.stderr, r.stderr
    kept = tmp_path / "r.md"  # a file through a descriptor is a file: the run goes on (to the missing data)
    with open(kept, "w") as handle:
        r = subprocess.run([*base, "--results-file", f"/dev/fd/{handle.fileno()}"], capture_output=True, text=True,
                           timeout=120, pass_fds=(handle.fileno(),))
    assert r.returncode == 7 and "Evaluation data folder not found" in r.stderr, r.stderr
    gone = tmp_path / "gone.md"  # a file deleted since it was opened: no path leads to it (QA round 143-K F3: the
    with open(gone, "w") as handle:  # report went to a new file named "gone.md (deleted)")
        gone.unlink()
        r = subprocess.run([*base, "--results-file", f"/dev/fd/{handle.fileno()}"], capture_output=True, text=True,
                           timeout=120, pass_fds=(handle.fileno(),))
    assert r.returncode == 2 and "a file deleted or replaced since it was opened" in r.stderr, r.stderr
    assert not list(tmp_path.glob("gone.md*"))
    (tmp_path / "x.md").write_text("")  # (QA round 143-L F2: deleted, but still linked as y.md)
    os.link(tmp_path / "x.md", tmp_path / "y.md")
    with open(tmp_path / "x.md", "w") as handle:
        (tmp_path / "x.md").unlink()
        r = subprocess.run([*base, "--results-file", f"/dev/fd/{handle.fileno()}"], capture_output=True, text=True,
                           timeout=120, pass_fds=(handle.fileno(),))
    assert r.returncode == 2 and "a file deleted or replaced since it was opened" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.glob("[xy].md*")) == ["y.md"]


def test_faster_than_bm25s_means_strictly_faster():
    """QA round 66 L2: a tie (0.56 vs 0.56 ms on SciFact) was counted as "speed met"."""
    def track(ms_dreamdb: float, ms_bm25s: float) -> dict:
        run = lambda ndcg, ms: {"metrics": {"ndcg@10": ndcg}, "latency_ms": {"p50": ms}}  # noqa: E731
        return {"dreamdb": {"bm25": run(0.70, ms_dreamdb)}, "bm25s": run(0.69, ms_bm25s)}

    results = {"sets": {"scifact": {"tracks": {"tie": track(0.56, 0.56), "faster": track(0.55, 0.56),
                                               "slower": track(0.57, 0.56)}}}}
    verdicts = {label.split(":")[0]: verdict for label, _m, verdict in suite.targets_check(results)
                if "bm25s" in label}
    assert verdicts == {"scifact tie": "quality met, speed NOT met", "scifact faster": "quality met, speed met",
                        "scifact slower": "quality met, speed NOT met"}


def test_the_text_table_keeps_a_space_between_columns_of_any_width():
    """QA round 78 F3: ``para tr-ascii→tr`` (16 characters) ran into the system column (``…→trdreamdb bm25``)."""
    from dreamdb.cli.evaluate import _text_table
    from dreamdb.evaluation import suite

    metrics = {"r@1": 0.9, "r@3": 0.95, "r@5": 0.97, "r@10": 0.99, "mrr": 0.93, "ndcg@10": 0.947}
    track = {"n": 1190, "dreamdb": {"bm25": {"metrics": metrics, "latency_ms": {"mean": 0.2, "p50": 0.2, "p90": 0.3}}}}
    results = {"sets": {"xquad": {"tracks": {"para tr-ascii→tr": track, "a-very-long-track-name-indeed": track},
                                  "indexes": {}}}, "wall_s": 1.0}
    rows = [ln for ln in _text_table(suite, results).splitlines() if ln.startswith("xquad")]
    assert len(rows) == 2
    for ln in rows:
        assert "  dreamdb bm25" in ln and ln.split()[-8] == "1190", ln


def test_the_text_table_columns_stay_in_line_after_wide_characters():
    """QA round 143-I F4: a column was padded by characters, so a track named in CJK letters pushed the system column
    one cell right for each; it is padded by terminal cells (``output.pad``)."""
    from wcwidth import wcswidth

    from dreamdb.cli.evaluate import _text_table
    from dreamdb.evaluation import suite

    metrics = {"r@1": 0.9, "r@3": 0.95, "r@5": 0.97, "r@10": 0.99, "mrr": 0.93, "ndcg@10": 0.947}
    track = {"n": 7, "dreamdb": {"bm25": {"metrics": metrics, "latency_ms": {"mean": 0.2, "p50": 0.2, "p90": 0.3}}}}
    results = {"sets": {"xquad": {"tracks": {"日本語の質問と答えの組": track, "plain": track}, "indexes": {}}}, "wall_s": 1.0}
    rows = [ln for ln in _text_table(suite, results).splitlines() if ln.startswith("xquad")]
    assert len(rows) == 2 and len({wcswidth(ln[:ln.index("dreamdb bm25")]) for ln in rows}) == 1, rows


def _gold_data(tmp_path: Path) -> Path:
    """A data folder with the dreamcontext set only: two notes and two gold questions, the file with a byte order mark
    as some editors save it (read as the text it is: QA round 86-C L7)."""
    return gold_data_folder(tmp_path, {"alpha": "The alpha note on sleep debt.", "beta": "The beta note on prompt hooks."},
                            [{"id": "q1", "query": "sleep debt", "expected": ["knowledge/alpha"], "category": "exact-term",
                              "lang": "en"},
                             {"id": "q2", "query": "prompt hooks", "expected": ["knowledge/beta"],
                              "category": "exact-term", "lang": "en"}], bom=True)


def test_a_run_that_scores_nothing_fails_and_a_partial_run_never_replaces_the_report(tmp_path, capsys):
    """QA round 86-C M4: a run whose every mode was unavailable exited 0; L3: a quick run of one set replaced the
    tracked report of every set; L7: a gold file with a byte order mark was refused."""
    from dreamdb.cli import main

    data = _gold_data(tmp_path)
    assert [q.id for q in load_gold(data / "eval" / "dreamcontext-gold-train.jsonl")] == ["q1", "q2"]

    def run(*args):
        return subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--set", "dreamcontext",
                               "--cache", str(tmp_path / "cache"), *args], capture_output=True, text=True, cwd=ROOT,
                              timeout=300)

    r = run("--no-baseline")
    assert r.returncode == 0 and "dreamdb bm25" in r.stdout, r.stderr
    r = run("--no-baseline", "--modes", "hybrid", "--max-embed", "0")
    assert r.returncode == 1 and "No track was scored" in r.stderr and "unavailable" in r.stderr, r.stderr
    # QA round 87 M2: a report named for the run is not overwritten by a run that scored nothing
    kept = tmp_path / "kept.md"
    kept.write_text("# dreamdb evaluation results\n\nan earlier report\n")
    r = run("--no-baseline", "--modes", "hybrid", "--max-embed", "0", "--results-file", str(kept))
    assert r.returncode == 1 and kept.read_text() == "# dreamdb evaluation results\n\nan earlier report\n", r.stderr
    report = ROOT / "eval" / "RESULTS.md"
    before = report.read_bytes()
    full = ["--set", "all", "--modes", "bm25,hybrid,dense"]  # (each case below one thing short of the full run)
    for args in (["--quick", *full], ["--set", "dreamcontext", "--modes", "bm25,hybrid,dense"], ["--no-baseline", *full],
                 ["--set", "all", "--modes", "hybrid,dense"], ["--set", "all", "--modes", "bm25"]):
        # (a quick run, one set of four, no bm25s, no BM25, no hybrid nor dense: QA rounds 86-C L3, 87 M2, 88 B5)
        # (refused before any run: in this process, as the CLI's main, not a process started for each)
        try:
            code = main(["eval", "--data", str(data), "--cache", str(tmp_path / "c"), "--write-results", *args])
        finally:
            changed, _ = report.read_bytes() != before, report.write_bytes(before)  # (a failing run wrote it: undone)
        err = capsys.readouterr().err
        assert code == 2 and "--write-results takes every set" in err and not changed, (args, err)
    # a full run whose hybrid and dense were unavailable (no vectors, as on a machine without the model) leaves the
    # report as it was (QA round 89 F4)
    try:
        r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--cache", str(tmp_path / "c"),
                            "--modes", "bm25,hybrid,dense", "--max-embed", "0", "--write-results"], capture_output=True,
                           text=True, cwd=ROOT, timeout=300)
    finally:
        changed, _ = report.read_bytes() != before, report.write_bytes(before)
    assert r.returncode == 1 and "eval/RESULTS.md was not regenerated" in r.stderr and not changed, r.stderr
    r = run("--no-baseline", "--quick", "--results-file", str(tmp_path / "r.md"))
    assert r.returncode == 0 and (tmp_path / "r.md").read_text(encoding="utf-8").startswith("# dreamdb evaluation")


def test_an_unwritable_last_run_file_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    """QA round 86-C M6: a read-only ``last-run.json`` was found after the whole run, whose figures were then lost
    (exit 2, no table). Refused first (os.access, as a user who is not root sees it)."""
    from dreamdb.cli import main

    data = _gold_data(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    last = cache / "last-run.json"
    last.write_text("{}")
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == last else real(p, mode, **kw))
    code = main(["eval", "--data", str(data), "--set", "dreamcontext", "--cache", str(cache), "--no-baseline"])
    err = capsys.readouterr().err
    assert code == 2 and f"Cannot write {last}: permission denied" in err and "dreamdb bm25" not in err, err


def test_the_baseline_speaks_the_language_of_most_documents_and_each_track_starts_cold(tmp_path):
    """QA round 86-C H1: bm25s stemmed XQuAD's Turkish paragraphs with the English stemmer (tr→tr 0.895, where the
    collection's own baseline, with the Turkish one, is 0.936); M3: later tracks ran with the word caches an earlier
    track filled."""
    from dreamdb import analyzer

    k = tmp_path / "_dream_context" / "knowledge"
    k.mkdir(parents=True)
    texts = ["Uyku borcu nasıl hesaplanır ve eşikler neler?", "Sunucu güvenliği için yapılandırma önerileri.",
             "The sleep debt thresholds, in English."]
    for i, text in enumerate(texts):
        (k / f"n{i}.md").write_text(f"---\ntitle: n{i}\n---\n{text}\n", encoding="utf-8")
    ix = dreamdb.open(tmp_path / "_dream_context", index_path=tmp_path / "i.db")
    ix.sync()
    assert suite._index_language(ix) == ("turkish", "tr")
    (k / "n3.md").write_text("---\ntitle: n3\n---\nAnother English note about hooks.\n", encoding="utf-8")
    ix.sync()
    assert suite._index_language(ix) == ("english", "en")  # (half of each: English)
    ix.recall("uyku borcu eşikleri")
    assert analyzer.stem.cache_info().currsize > 0
    tables = analyzer._turkish_stemmer.cache_info().currsize
    suite.forget_word_caches(ix)
    assert analyzer.stem.cache_info().currsize == 0 and analyzer.diacritic_terms.cache_info().currsize == 0
    assert analyzer._turkish_stemmer.cache_info().currsize == tables  # (a table loaded once stays)
    ix.close()


def test_results_that_cannot_be_written_are_printed_and_exit_74(tmp_path):
    """QA round 86-C M6: the figures of a whole run were lost when the results could not be written (exit 2, no
    table); 87 L7: the hint spoke of free space and permissions for a link to nothing."""
    data = _gold_data(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "last-run.json").symlink_to(tmp_path / "missing" / "last-run.json")
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--set", "dreamcontext",
                        "--cache", str(cache), "--no-baseline"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 74 and "dreamdb bm25" in r.stdout, (r.stdout, r.stderr)
    assert "Cannot write the results" in r.stderr and "(a link to nothing?)" in r.stderr, r.stderr


def test_the_first_timed_query_of_a_mode_embeds_its_own_query(tmp_path, monkeypatch):
    """QA round 147-G F4: the warm-up ran a track's first query after the query cache was cleared, so that query's
    timed run reused the embedding the warm-up had cached (1.4–10 ms against 12–33 ms for the others). The cache is
    cleared after the warm-up too: every timed query, the first too, finds its embedding not yet made."""
    from dreamdb import hybrid

    data = _gold_data(tmp_path)
    cached_when_timed = []

    def fake_search(ix, mode, now, mapper):
        def search(text):  # as hybrid.query_vector: the query's embedding kept for the process
            key = ("fake-model", text)
            if key not in hybrid._QUERY_CACHE:
                hybrid._QUERY_CACHE[key] = [0.0]
            return []
        return search

    def run_track(track, search, progress, label):
        cached_when_timed.extend(("fake-model", q) in hybrid._QUERY_CACHE for _qid, q in track.queries)
        for _qid, q in track.queries:
            search(q)
        return {"metrics": {}}

    monkeypatch.setattr(suite, "_dreamdb_search", fake_search)
    monkeypatch.setattr(suite, "_run_track", run_track)
    out = suite.run_set(suite.plan_set("dreamcontext", data), tmp_path / "cache", modes=["hybrid", "dense"],
                        baseline=False)
    assert set(out["tracks"]["gold-train"]["dreamdb"]) == {"hybrid", "dense"}
    assert cached_when_timed == [False, False, False, False], cached_when_timed  # two queries, two modes


def test_a_report_that_cannot_be_written_says_last_run_json_was(tmp_path, monkeypatch, capsys):
    """QA round 147-G F5: the report's folder removed while the run ran ended "Cannot write …/gone/r.md: No such file
    or directory; nothing was changed", exit 74, though last-run.json had been replaced by this run; it now says so."""
    import shutil

    from dreamdb.cli import main

    data = _gold_data(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "last-run.json").write_text('{"the": "previous run"}', encoding="utf-8")
    gone = tmp_path / "gone"
    gone.mkdir()
    run_suite = suite.run_suite

    def run_then_remove_the_folder(*args, **kwargs):
        results = run_suite(*args, **kwargs)
        shutil.rmtree(gone)
        return results

    monkeypatch.setattr(suite, "run_suite", run_then_remove_the_folder)
    code = main(["eval", "--data", str(data), "--set", "dreamcontext", "--cache", str(cache), "--no-baseline",
                 "--results-file", str(gone / "r.md")])
    err = capsys.readouterr().err
    last = json.loads((cache / "last-run.json").read_text(encoding="utf-8"))
    assert code == 74 and last["sets"]["dreamcontext"]["tracks"]["gold-train"]["dreamdb"]["bm25"]["metrics"]["r@1"] \
        == 100.0, err
    assert "nothing was changed" not in err and f": No such file or directory; {cache / 'last-run.json'} was written" \
        " (this run's per-query results); the figures are printed above." in err, err
    assert f"Cannot write the results: Cannot write {gone / 'r.md'}" in err, err


def test_a_json_run_that_fails_after_measuring_prints_one_document(tmp_path):
    """QA round 143-A F1: ``eval --json`` printed the run's summary, then the error object (two JSON documents, and a
    reader's ``json.loads`` failed) when the run failed after measuring: no track scored (exit 1), results not
    written (74). One document now: the error object, the summary beside it as ``results``."""
    data = _gold_data(tmp_path)

    def run(cache, *args):
        return subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--set", "dreamcontext",
                               "--cache", str(cache), "--no-baseline", "--json", *args], capture_output=True, text=True,
                              cwd=ROOT, timeout=300)

    r = run(tmp_path / "c1", "--modes", "hybrid", "--max-embed", "0")
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["error"]["exit_code"] == 1, (r.stdout, r.stderr)
    assert doc["error"]["message"] == ("No track was scored: every mode asked for was unavailable (the reasons are in "
                                       "the JSON document's results).")
    why = doc["results"]["sets"]["dreamcontext"]["tracks"]["gold-train"]["dreamdb"]["hybrid"]["unavailable"]
    # (the reason the mode was unavailable: no model installed, or, with one, the vault's chunks over --max-embed 0)
    assert "over --max-embed 0" in why or "no embedding model is installed" in why, why
    cache = tmp_path / "c2"
    cache.mkdir()
    (cache / "last-run.json").symlink_to(tmp_path / "missing" / "last-run.json")
    r = run(cache)
    doc = json.loads(r.stdout)
    assert r.returncode == 74 and doc["error"]["exit_code"] == 74 and "(a link to nothing?)" in doc["error"]["hint"]
    assert doc["error"]["message"].startswith("Cannot write the results: ") and doc["error"]["message"].endswith(
        "; the figures are in the JSON document's results.") and "\n" not in doc["error"]["message"], doc["error"]
    assert doc["results"]["sets"]["dreamcontext"]["tracks"]["gold-train"]["dreamdb"]["bm25"]["metrics"]["r@1"] == 100.0
    assert doc["results"]["targets"][0] == {"target": "dreamcontext gold BM25 recall@1 ≥ 80", "measured": "100.0",
                                            "verdict": "met"}


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not Path("/proc/version").is_file(),
                    reason="root writes past a mode of 444 (another user is refused before the run); Linux's /proc")
def test_results_that_cannot_be_written_say_why_on_one_line_with_a_hint_that_works(tmp_path):
    """QA round 143-A F4: the exit-74 message showed the refusal's own newline as ``␊`` mid-sentence, and told
    ``/proc/version`` (the kernel's file) to chmod u+w; the chmod hint stays where the mode is the cause."""
    data = _gold_data(tmp_path)
    protected = tmp_path / "protected.md"
    protected.write_text("# dreamdb evaluation results\n\nkept\n")  # (an earlier report: another file is refused)
    protected.chmod(0o444)
    last = tmp_path / "c" / "last-run.json"  # (written: only the report failed, QA round 147-G F5)
    for target, said, hint in (
            (protected, f"Error: Cannot write the results: {protected} is write-protected (mode 444); it was not "
             f"changed; {last} was written (this run's per-query results); the figures are printed above.",
             "Hint: Give it write permission (chmod u+w) if dreamdb should edit it."),):
        r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--set", "dreamcontext",
                            "--cache", str(tmp_path / "c"), "--no-baseline", "--results-file", str(target)],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert r.returncode == 74 and "dreamdb bm25" in r.stdout, r.stderr
        assert r.stderr.splitlines()[-2:] == [said, hint], r.stderr
    assert protected.read_text() == "# dreamdb evaluation results\n\nkept\n"
    # /proc/version (the kernel's file, no earlier report) is refused before the run now (QA round 156-C F1)
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--set", "dreamcontext",
                        "--cache", str(tmp_path / "c"), "--no-baseline", "--results-file", "/proc/version"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 6 and not r.stdout and "/proc/version exists and is not a dreamdb evaluation report" \
        in r.stderr, r.stderr


def test_a_report_path_that_is_another_file_or_in_a_vault_is_refused_and_never_replaced(tmp_path, monkeypatch,
                                                                                         capsys):
    """QA round 156-C F1: ``--results-file thesis.txt`` replaced the file, whatever it held (a vault's
    ``CHANGELOG.json`` too), exit 0. An existing file that is not empty and not an earlier report (its first line
    "# dreamdb evaluation results"), and any path inside a vault (as typed, or where a link leads), are refused
    before the run, exit 6, and the file is left as it was; one put there while the run ran is not replaced
    either (exit 74). An earlier report, or an empty file, is replaced."""
    from dreamdb.cli import main

    thesis = tmp_path / "thesis.txt"
    thesis.write_text("my thesis\n")
    vault = tmp_path / "p" / "_dream_context"
    (vault / "core").mkdir(parents=True)
    changelog = vault / "core" / "CHANGELOG.json"
    changelog.write_text('{"entries": []}\n')
    (tmp_path / "vlink").symlink_to(vault)
    (tmp_path / "thesis-link.md").symlink_to(thesis)
    inside = "Error: Cannot write the report {}: it is inside the vault " + str(vault) + ", whose files are its notes" \
             " (a report there would be indexed as one, or replace one)\nHint: Give --results-file a path outside" \
             " the vault.\n"
    other = "Error: {} exists and is not a dreamdb evaluation report (its first line is not \"# dreamdb evaluation" \
            " results\"): it is never replaced\nHint: Give --results-file a new file's path or an earlier report's, or" \
            " move that file aside.\n"
    for target, said in ((thesis, other), (tmp_path / "thesis-link.md", other), (changelog, inside),
                         (vault / "report.md", inside), (tmp_path / "vlink" / "report.md", inside)):
        # (no data at all: had the run started, it would have stopped on that first, exit 7)
        r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(tmp_path / "absent"), "--cache",
                            str(tmp_path / "c"), "--results-file", str(target)], capture_output=True, text=True,
                           timeout=120)
        assert (r.returncode, r.stderr) == (6, said.format(target)), (target, r.stderr)
    assert thesis.read_text() == "my thesis\n" and changelog.read_text() == '{"entries": []}\n'
    assert sorted(p.name for p in vault.iterdir()) == ["core"]
    data = _gold_data(tmp_path)
    earlier, empty = tmp_path / "earlier.md", tmp_path / "empty.md"
    earlier.write_text("# dreamdb evaluation results\n\nan earlier run\n")
    empty.touch()
    for target in (earlier, empty):
        assert main(["eval", "--data", str(data), "--set", "dreamcontext", "--cache", str(tmp_path / "c"),
                     "--no-baseline", "--results-file", str(target)]) == 0, capsys.readouterr().err
        assert target.read_text().startswith("# dreamdb evaluation results\n") and "earlier run" not in \
            target.read_text()
    late = tmp_path / "late.md"
    run_suite = suite.run_suite

    def run_then_write_the_file(*args, **kwargs):
        results = run_suite(*args, **kwargs)
        late.write_text("written meanwhile\n")
        return results

    monkeypatch.setattr(suite, "run_suite", run_then_write_the_file)
    capsys.readouterr()
    code = main(["eval", "--data", str(data), "--set", "dreamcontext", "--cache", str(tmp_path / "c"), "--no-baseline",
                 "--results-file", str(late)])
    err = capsys.readouterr().err
    assert code == 74 and late.read_text() == "written meanwhile\n", err
    assert f"Cannot write the results: {late} exists and is not a dreamdb evaluation report" in err, err


def test_a_kept_index_of_a_copied_cache_serves_the_copy(tmp_path):
    """A cache copied elsewhere (its embeddings hours of work) failed every run while the old one was still there:
    "The index … mirrors another vault"; the evaluation's own kept index now serves the copy's vault."""
    import shutil

    from dreamdb.evaluation.suite import _adopt_kept_index

    old = tmp_path / "old" / "_dream_context"
    (old / "knowledge").mkdir(parents=True)
    (old / "knowledge" / "a.md").write_text("---\ntitle: A\n---\nwombat notes\n", encoding="utf-8")
    dreamdb.open(old, index_path=tmp_path / "old" / "index.db").sync()
    shutil.copytree(tmp_path / "old", tmp_path / "new")
    new = tmp_path / "new" / "_dream_context"
    with pytest.raises(dreamdb.errors.UsageError, match="mirrors another vault"):
        dreamdb.open(new, index_path=tmp_path / "new" / "index.db").sync()
    assert _adopt_kept_index(tmp_path / "new" / "index.db", new) == str(old)
    assert [h.doc_id for h in dreamdb.open(new, index_path=tmp_path / "new" / "index.db").recall("wombat")] == \
        ["knowledge/a"]
    assert _adopt_kept_index(tmp_path / "new" / "index.db", new) is None
    assert _adopt_kept_index(tmp_path / "none.db", new) is None
    # another program's SQLite file with a meta table is never written (QA round 105 F11)
    other = tmp_path / "other.db"
    with contextlib.closing(sqlite3.connect(other)) as con, con:
        con.executescript("CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('vault', '/elsewhere');")
    assert _adopt_kept_index(other, new) is None
    assert sqlite3.connect(other).execute("SELECT value FROM meta").fetchone()[0] == "/elsewhere"


def test_adopting_a_kept_index_leaves_the_locks_of_a_live_index_in_the_process(tmp_path):
    """QA round 114-A F1: a second SQLite library in a process (the standard library's ``sqlite3`` beside dreamdb's
    ``sqlean``) keeps its own table of a file's locks, and closing its connection drops those dreamdb's connection
    holds: the next writes damaged the index ("UNIQUE constraint failed: postings…"), which was rebuilt and lost its
    embeddings. The evaluation's one raw connection to an index goes through dreamdb's driver."""
    import shutil

    from dreamdb.evaluation.suite import _adopt_kept_index
    from tests.conftest import REAL_VAULT_SRC

    if not REAL_VAULT_SRC.is_dir():  # (a vault of its size: a small one's writes did not meet the damage)
        pytest.skip(f"real vault not found at {REAL_VAULT_SRC}")
    vault = tmp_path / "_dream_context"
    shutil.copytree(REAL_VAULT_SRC, vault, ignore=shutil.ignore_patterns(".dreamdb"))
    for folder, _dirs, files in os.walk(vault):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    path = tmp_path / "index.db"
    live = dreamdb.open(vault, index_path=path)
    live.recall("sleep debt")
    assert _adopt_kept_index(path, vault) is None  # (its own vault: read, not written)
    for i in range(4):  # writes from this process and from another one, as the QA round's
        (vault / "knowledge" / f"lib{i}.md").write_text(f"---\ntitle: lib {i}\n---\nlibword{i} " + "filler " * 200)
        assert [h.doc_id for h in live.recall(f"libword{i}")] == [f"knowledge/lib{i}"]
        (vault / "knowledge" / f"cli{i}.md").write_text(f"---\ntitle: cli {i}\n---\ncliword{i} " + "other " * 200)
        ran = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--vault", str(vault), "--json", f"cliword{i}"],
                             env={**os.environ, "DREAMDB_INDEX": str(path)}, capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0 and "rebuilt" not in ran.stderr, ran.stderr
    notes = live.take_notes()
    assert not [n for n in notes if "rebuilt" in n or "unreadable" in n], notes
    assert live.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    live.close()


def test_two_runs_on_one_cache_take_turns_on_a_set(tmp_path):
    """QA round 117-B F1, F2: two evaluation runs on one --cache at once removed each other's vault files and
    throwaway index: a half-written SciFact vault (3,266 of 5,183 documents) was trusted by every later run, and
    build sizes came out 0.0 MB. A run holds its set's lock; a second one says it waits, and waits."""
    import threading
    import time

    from dreamdb.evaluation.suite import _set_lock

    said: list[str] = []
    order: list[str] = []
    first_in = threading.Event()

    def first() -> None:
        with _set_lock(tmp_path / "scifact", said.append):
            first_in.set()
            time.sleep(0.5)
            order.append("first done")

    holder = threading.Thread(target=first)
    holder.start()
    first_in.wait(10)
    with _set_lock(tmp_path / "scifact", said.append):
        order.append("second in")
    holder.join(10)
    assert order == ["first done", "second in"]
    assert said == [f"scifact: another evaluation run is using the cache {tmp_path / 'scifact'}; waiting for it to end"]


def test_a_hit_of_no_corpus_id_keeps_its_rank_as_a_miss():
    """QA round 122-C F2: dreamdb's hits of notes the collection does not hold were left out, moving those below them
    up a place (r@1 1.0 where the first hit was such a note), while bm25s's kept their rank: both keep it, a miss."""
    from types import SimpleNamespace

    from dreamdb.evaluation import suite

    class Index:
        def recall(self, text, **kwargs):
            return [SimpleNamespace(doc_id=d, mode="bm25") for d in ("knowledge/extra", "knowledge/eip-1")]

    search = suite._dreamdb_search(Index(), "bm25", None, {"knowledge/eip-1": "eip-1"}.get)
    ranked = search("what is eip 1")
    assert ranked == [None, "eip-1"]
    assert beir.score_beir(ranked, {"eip-1": 1})["r@1"] == 0.0 and beir.score_beir(ranked, {"eip-1": 1})["mrr"] == 0.5


def test_a_cached_vault_copy_changed_since_it_was_written_is_made_again_with_a_note(tiny, tmp_path):
    """QA round 135-D F1: a file deleted from (or added to) the converted vault in the cache was trusted under its
    manifest: 7 documents of 8 scored, a different nDCG, exit 0, no note."""
    c = beir.load_collection(tiny)
    docs = [(d, r["title"], r["text"]) for d, r in c.corpus.items()]
    cache = tmp_path / "cache"
    assert beir.corpus_to_vault(docs, cache).note is None
    knowledge = cache / "_dream_context" / "knowledge"
    (knowledge / "d000001.md").unlink()
    vb = beir.corpus_to_vault(docs, cache)
    assert vb.rebuilt and (knowledge / "d000001.md").exists() and len(list(knowledge.iterdir())) == 4
    assert vb.note and "was changed since it was written (3 files" in vb.note and "written: 4 files" in vb.note
    assert not beir.corpus_to_vault(docs, cache).rebuilt  # (as written again: reused)
    (knowledge / "d000001.md").rename(knowledge / "zzz.md")  # (count and size alike: QA round 137 F1)
    vb = beir.corpus_to_vault(docs, cache)
    assert vb.rebuilt and "a file renamed" in vb.note and (knowledge / "d000001.md").exists()
    assert not (knowledge / "zzz.md").exists()
    (knowledge / "report.md").write_text("# a report\n", encoding="utf-8")
    vb = beir.corpus_to_vault(docs, cache)
    assert vb.rebuilt and "5 files" in vb.note and not (knowledge / "report.md").exists()
    # a copied vault too, and a manifest of an earlier dreamdb (no listing) is made again once
    src = tmp_path / "src"
    (src / "knowledge").mkdir(parents=True)
    (src / "knowledge" / "a.md").write_text("---\ntitle: A\n---\nwombat\n", encoding="utf-8")
    assert beir.copy_vault(src, tmp_path / "copy").rebuilt
    (tmp_path / "copy" / "_dream_context" / "knowledge" / "a.md").write_text("---\ntitle: A\n---\n", encoding="utf-8")
    vb = beir.copy_vault(src, tmp_path / "copy")
    assert vb.rebuilt and "bytes" in vb.note
    manifest = json.loads((tmp_path / "copy" / "manifest.json").read_text(encoding="utf-8"))
    for earlier in (None, manifest["files"][:2]):  # (none, or count and size alone: QA round 138 F4, "changed")
        if earlier is None:
            del manifest["files"]
        else:
            manifest["files"] = earlier
        (tmp_path / "copy" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        vb = beir.copy_vault(src, tmp_path / "copy")
        assert vb.rebuilt and vb.note is None
        manifest = json.loads((tmp_path / "copy" / "manifest.json").read_text(encoding="utf-8"))
    assert not beir.copy_vault(src, tmp_path / "copy").rebuilt


def test_a_changed_cache_copy_is_said_and_a_report_inside_the_cache_is_refused(tmp_path):
    """QA round 135-D F1 through the CLI: the note, the documents as written; --results-file inside the cache folder
    (the vault, whose next run indexed it; last-run.json, which it replaced) refused before the run, exit 2."""
    data = _gold_data(tmp_path)
    cache = tmp_path / "cache"
    args = [sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--set", "dreamcontext", "--no-baseline",
            "--json", "--cache", str(cache)]
    r = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    (cache / "dreamcontext" / "vault" / "_dream_context" / "knowledge" / "alpha.md").unlink()
    r = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0 and "note: the cached copy" in r.stderr and "made again" in r.stderr, r.stderr
    index = json.loads(r.stdout)["sets"]["dreamcontext"]["indexes"]["vault"]
    assert index["documents"] == 2 and index["vault_written"], index
    for inside in (cache / "dreamcontext" / "vault" / "_dream_context" / "knowledge" / "report.md",
                   cache / "last-run.json"):
        before = (cache / "last-run.json").read_bytes()
        r = subprocess.run(args + ["--results-file", str(inside)], capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert r.returncode == 2 and f"The report {inside} is inside the cache folder {cache}" in r.stderr, r.stderr
        assert not (inside.parent / "report.md").exists() and (cache / "last-run.json").read_bytes() == before


def test_the_results_files_are_replaced_whole_or_not_at_all(tmp_path):
    """QA round 135-D F2: a run whose results could not be encoded (a lone surrogate) left ``last-run.json`` empty;
    it and the report are written to a temporary file renamed over them."""
    from dreamdb.cli import evaluate as E

    last = tmp_path / "last-run.json"
    last.write_text('{"the": "previous run"}', encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        E._write_atomically(last, '{"id": "g\ud800"}')
    assert last.read_text(encoding="utf-8") == '{"the": "previous run"}' and os.listdir(tmp_path) == ["last-run.json"]
    link = tmp_path / "report.md"
    link.symlink_to(last)  # (through a link: the file it names, the link kept)
    E._write_atomically(link, "# report\n")
    assert link.is_symlink() and last.read_text(encoding="utf-8") == "# report\n"


def test_the_data_folder_from_the_environment_may_start_with_a_tilde(tmp_path):
    """QA round 135-D F6: DREAMDB_EVAL_DATA='~/tg' was "Evaluation data folder not found: ~/tg" (click took the
    variable as written; the other DREAMDB_* path variables expand ~)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "tg").symlink_to(_gold_data(tmp_path))
    env = {**os.environ, "HOME": str(home), "DREAMDB_EVAL_DATA": "~/tg"}
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--set", "dreamcontext", "--no-baseline", "--cache",
                        str(tmp_path / "cache")], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert r.returncode == 0 and "dreamdb bm25" in r.stdout, r.stderr
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--set", "dreamcontext", "--no-baseline", "--cache",
                        str(tmp_path / "cache")], capture_output=True, text=True, cwd=ROOT, timeout=300,
                       env={**env, "DREAMDB_EVAL_DATA": "~/none"})
    assert r.returncode == 7 and f"not found: {home / 'none'}" in r.stderr, r.stderr


def test_the_report_breaks_down_every_mode_run_with_or_without_bm25_and_the_baseline(tmp_path):
    """QA round 147-G F6: --modes hybrid wrote no per-category or per-language table though last-run.json had them;
    with bm25,hybrid,dense the per-language table was bm25 beside bm25s only; with --no-baseline the tables were headed
    "(dreamdb bm25 vs bm25s)" and filled with "–". The tables now cover the modes run (and bm25s where it ran); a full
    run keeps its bm25-vs-bm25s tables as they were."""
    import copy

    from dreamdb.cli import main

    data = gold_data_folder(tmp_path, {"alpha": "The alpha note on sleep debt.", "beta": "The beta note on prompt hooks."},
                            [{"id": "q1", "query": "sleep debt", "expected": ["knowledge/alpha"], "category": "exact",
                              "lang": "en"},
                             {"id": "q2", "query": "prompt hooks", "expected": ["knowledge/gamma"], "category": "topic",
                              "lang": "tr"}])
    assert main(["eval", "--data", str(data), "--set", "dreamcontext", "--cache", str(tmp_path / "c"), "--modes",
                 "bm25", "--json"]) == 0
    run = json.loads((tmp_path / "c" / "last-run.json").read_text(encoding="utf-8"))

    def report(modes, baseline):  # (the bm25 figures as every mode's: the tables' layout is what is checked)
        r = copy.deepcopy(run)
        track = r["sets"]["dreamcontext"]["tracks"]["gold-train"]
        track["dreamdb"] = {m: copy.deepcopy(track["dreamdb"]["bm25"]) for m in modes}
        if not baseline:
            track.pop("bm25s")
        return suite.render_markdown({**r, "modes": modes, "baseline": baseline})

    text = report(["hybrid"], True)
    assert "### gold-train by category, dreamdb hybrid and bm25s (R@1 / R@5)\n\n| category | n | hybrid | bm25s |\n" \
        "|---|---|---|---|\n| all | 2 | 50.0 / 50.0 | 50.0 / 50.0 |\n| exact | 1 | 100.0 / 100.0 | 100.0 / 100.0 |\n" \
        "| topic | 1 | 0.0 / 0.0 | 0.0 / 0.0 |\n" in text, text
    assert "### gold-train by language, dreamdb hybrid and bm25s (R@1 / R@5)" in text and "vs bm25s" not in text
    text = report(["bm25", "hybrid", "dense"], True)  # the full run's tables, and every mode by language beside them
    for heading in ("by category (dreamdb bm25 vs bm25s)", "by language (dreamdb bm25 vs bm25s)",
                    "by category, every mode (R@1 / R@5)", "by language, every mode (R@1 / R@5)"):
        assert f"### gold-train {heading}\n" in text, heading
    assert "| language | n | bm25 | hybrid | dense |\n|---|---|---|---|---|\n| all | 2 | 50.0 / 50.0 | 50.0 / 50.0 |" \
        " 50.0 / 50.0 |\n| en | 1 | 100.0 / 100.0 | 100.0 / 100.0 | 100.0 / 100.0 |\n" in text, text
    text = report(["bm25"], False)
    assert "vs bm25s" not in text and "– | – | –" not in text, text
    assert "### gold-train by language, dreamdb bm25 (R@1 / R@5)\n\n| language | n | bm25 |\n|---|---|---|\n" \
        "| all | 2 | 50.0 / 50.0 |\n| en | 1 | 100.0 / 100.0 |\n| tr | 1 | 0.0 / 0.0 |\n" in text, text


def test_names_of_the_data_in_the_markdown_report_keep_its_tables_whole(tmp_path):
    """QA round 143-A F2: a gold category ``a|b`` added a column to the "by category" table, one with a newline split
    its row: each cell of the data's text is one line with ``|`` escaped."""
    data = gold_data_folder(tmp_path, {"alpha": "The alpha note on sleep debt."},
                            [{"id": "q1", "query": "sleep debt", "expected": ["knowledge/alpha"], "category": "a|b",
                              "lang": "e|n"},
                             {"id": "q2", "query": "sleep debt", "expected": ["knowledge/alpha"], "category": "x\ny"}])
    report = tmp_path / "r.md"
    r = subprocess.run([sys.executable, "-m", "dreamdb", "eval", "--data", str(data), "--set", "dreamcontext",
                        "--cache", str(tmp_path / "cache"), "--modes", "bm25", "--no-baseline", "--results-file",
                        str(report)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    text = report.read_text(encoding="utf-8")
    assert "| a\\|b | 1 | 100.0 / 100.0 |" in text and "| x␊y | 1 | 100.0 / 100.0 |" in text \
        and "| e\\|n | 1 | 100.0 / 100.0 |" in text, text  # (--no-baseline: dreamdb bm25's tables, QA round 147-G F6)
    for table in re.findall(r"(?:^\|.*\n)+", text, flags=re.M):  # every row of a table has its header's cells
        widths = {len(re.split(r"(?<!\\)\|", row)) for row in table.splitlines()}
        assert len(widths) == 1, table


def test_the_report_records_the_program_options_typed_before_eval(tmp_path):
    """QA round 145-G F1: ``dreamdb --json eval …`` (and ``dreamdb -- eval …``) was recorded as ``dreamdb eval``
    alone, in the JSON's ``command`` and the report's ``- command:`` line: the command is kept as typed."""
    data = gold_data_folder(tmp_path, {"alpha": "The alpha note on sleep debt."},
                            [{"id": "q1", "query": "sleep debt", "expected": ["knowledge/alpha"]}])
    report = tmp_path / "r.md"
    tail = ["--data", str(data), "--set", "dreamcontext", "--cache", str(tmp_path / "cache"), "--modes", "bm25",
            "--no-baseline", "--results-file", str(report)]
    r = subprocess.run([sys.executable, "-m", "dreamdb", "--json", "eval", *tail], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    typed = "dreamdb --json eval " + " ".join(tail)
    assert json.loads(r.stdout)["command"] == typed
    assert f"- command: `{typed}`" in report.read_text(encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "dreamdb", "--", "eval", *tail], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "- command: `dreamdb -- eval " + " ".join(tail) + "`" in report.read_text(encoding="utf-8")


def test_baseline_says_whether_bm25s_ran_not_whether_it_was_asked_for(tmp_path, monkeypatch):
    """QA round 151-D F3: docs/json.md says ``baseline`` is whether bm25s ran beside dreamdb, but the run stored the
    --baseline flag: true where bm25s could not be imported and every track said it was unavailable. It is whether
    bm25s ran, and a run asking for it without it says why in ``notes``."""
    data = _gold_data(tmp_path)
    said = []

    def run(cache, baseline):
        return suite.run_suite(["dreamcontext"], data=data, cache=tmp_path / cache, modes=["bm25"], baseline=baseline,
                               explicit=True, log=said.append)

    assert run("off", False)["baseline"] is False
    from dreamdb.evaluation.baseline import available

    if available() is None:  # (bm25s installed: it runs)
        ran = run("on", True)
        assert ran["baseline"] is True and "build_s" in ran["sets"]["dreamcontext"]["indexes"]["vault"]["bm25s"], ran
        assert not any("bm25s" in n for n in ran["notes"])
    monkeypatch.setitem(sys.modules, "bm25s", None)  # (bm25s not importable, as without the eval extra)
    said.clear()
    missing = run("missing", True)
    assert missing["baseline"] is False
    track = missing["sets"]["dreamcontext"]["tracks"]["gold-train"]
    assert "unavailable" in track["bm25s"] and "metrics" in track["dreamdb"]["bm25"]
    assert [n for n in missing["notes"] if n.startswith("the bm25s baseline did not run: bm25s not importable")], \
        missing["notes"]
    assert any(s.startswith("note: the bm25s baseline does not run: bm25s not importable") for s in said), said
    assert "; baseline: off" in suite.render_markdown({**missing, "wall_s": 1.0})
