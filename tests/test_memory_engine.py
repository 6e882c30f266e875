"""The in-memory engine returns exactly what the SQL engine returns (documents, order, scores)."""

from __future__ import annotations

import random

import pytest

import dreamdb
from dreamdb.ranking.memory import MemoryEngine
from dreamdb.ranking.rank import Filters, class_members, plan_query, rank
from dreamdb.records import replace
from dreamdb.ranking.synonyms import load_synonyms
from tests.conftest import held_by_another_process, needs_real_vault, write_doc, write_docs

NOW = 20683.0  # 2026-08-18 in days since epoch


def _same(a, b):
    assert [x.doc_id for x in a] == [x.doc_id for x in b]
    for x, y in zip(a, b):
        assert x.score == pytest.approx(y.score, rel=1e-9, abs=1e-12)
        assert x.rank_score == pytest.approx(y.rank_score, rel=1e-9, abs=1e-12)
        assert x.signals()["identity_boost"] == pytest.approx(y.signals()["identity_boost"], abs=1e-9)
        assert x.signals()["bm25_structured"] == pytest.approx(y.signals()["bm25_structured"], rel=1e-9, abs=1e-12)
        assert x.date_days == y.date_days and x.type == y.type  # date string and factors are filled by Index._hits


@needs_real_vault
@pytest.mark.parametrize("preload", [True, False, "in small batches"])
def test_engines_agree_on_real_vault(real_index, preload, monkeypatch):
    if not preload:  # the per-term path used for indexes too large to load whole
        monkeypatch.setattr("dreamdb.ranking.memory.PRELOAD_MAX_TOKENS", 0)
    if preload == "in small batches":  # (postings read a batch at a time, their terms apart: QA round 132-E F4)
        monkeypatch.setattr("dreamdb.ranking.memory.PRELOAD_BATCH", 997)
    conn = real_index.conn
    syn = load_synonyms(real_index.vault)
    rng = random.Random(7)
    vocab = [t for (t,) in conn.execute("SELECT term FROM terms WHERE df BETWEEN 2 AND 200 ORDER BY term")]
    titles = [t for (t,) in conn.execute("SELECT title FROM documents ORDER BY doc_id LIMIT 60")]
    queries = titles + [" ".join(rng.sample(vocab, rng.randint(1, 8))) for _ in range(120)]
    engine = MemoryEngine(conn)
    filters = [Filters(), Filters(types=["knowledge", "feature"]), Filters(since_days=NOW - 60, min_level=2),
               Filters(tags=["recall"]), Filters(exclude_types=["changelog"], include_expired=True)]
    classed = 0
    for i, q in enumerate(queries):
        plan = plan_query(q, syn)
        if i % 2 and plan.terms:  # translated words (a lexicon's): each counted with its translation as a class
            plan = replace(plan, translated={t: rng.choice(vocab) for t in plan.terms[::2]})
            classed += bool(class_members(plan))
        f = filters[i % len(filters)]
        _same(rank(conn, plan, top=10, now_days=NOW, filters=f), engine.rank(plan, top=10, now_days=NOW, filters=f))
    assert classed > 50


def test_memory_engine_follows_index_changes(tiny_vault):
    write_doc(tiny_vault, "knowledge/a.md", "lemur habitat notes\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    engine = MemoryEngine(index.conn)
    plan = plan_query("lemur")
    assert [r.doc_id for r in engine.rank(plan, top=5, now_days=NOW)] == ["knowledge/a"]
    write_doc(tiny_vault, "knowledge/b.md", "---\ntitle: Lemur\n---\nlemur lemur\n")
    index.sync()
    got = engine.rank(plan, top=5, now_days=NOW)
    _same(got, rank(index.conn, plan, top=5, now_days=NOW))
    assert [r.doc_id for r in got] == ["knowledge/b", "knowledge/a"]


def test_hits_read_bodies_lazily_and_pickle(real_index):
    import pickle

    hits = real_index.recall("sleep debt thresholds", top=3)
    assert hits and all(h._snippet_source is not None for h in hits)
    copies = pickle.loads(pickle.dumps(hits))  # computes each snippet from the body in the index
    for h, c in zip(hits, copies):
        body = real_index.conn.execute("SELECT body FROM documents WHERE doc_id = ?", (h.doc_id,)).fetchone()[0]
        # (a long line is shown clipped, "…" marking each cut end: what is between is the body's text)
        assert c.snippet == h.snippet and c.snippet.splitlines()[0].strip("…") in body


def test_hit_metadata_cache_follows_edits(tiny_vault):
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: Tapir care\n---\ntapir feeding schedule\n")
    index = dreamdb.open(tiny_vault)  # memory engine, lazy sync before every recall
    assert [h.title for h in index.recall("tapir")] == ["Tapir care"]
    assert [h.title for h in index.recall("tapir")] == ["Tapir care"]  # second time from the cache
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: Tapir husbandry\n---\ntapir feeding schedule, revised\n")
    hits = index.recall("tapir")
    assert [h.title for h in hits] == ["Tapir husbandry"] and "revised" in hits[0].snippet
    # a second Index on the same file edits through its own connection: the first one sees it too
    other = dreamdb.open(tiny_vault)
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: Tapir keeping\n---\ntapir feeding schedule\n")
    other.sync()
    index.auto_sync = False
    assert [h.title for h in index.recall("tapir")] == ["Tapir keeping"]


def test_first_hits_of_a_preloaded_index_prepare_every_row_alike(tiny_vault):
    """The first recall of a preloaded index prepares every document's hit row at once; a later hit
    on another document is served from them, equal to what the SQL engine builds."""
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: Tapir care\ntags: [zoo, mammals]\n---\ntapir feeding\n")
    write_doc(tiny_vault, "state/b.md", "---\ntitle: Okapi task\nstatus: completed\nlevel: 3\n---\nokapi check\n")
    write_doc(tiny_vault, "knowledge/c.md", "---\ntitle: Wombat\ndate: 2026-05-01\n---\nwombat burrow\n")
    index, sql = dreamdb.open(tiny_vault), dreamdb.open(tiny_vault, engine="sql")
    index.warm()  # preloaded at once (recall does it by itself after a few queries)
    index.recall("tapir")
    assert len(index._memory.hit_prepared) == 3
    for q in ("okapi", "wombat", "tapir okapi wombat"):
        got, want = index.recall(q, top=5), sql.recall(q, top=5)
        assert [h.as_dict() for h in got] == [h.as_dict() for h in want] and got
    write_doc(tiny_vault, "state/b.md", "---\ntitle: Okapi task\nstatus: active\nlevel: 1\n---\nokapi check\n")
    got = index.recall("okapi")  # a new state, not preloaded yet: its hits' rows are prepared one by one
    assert [h.as_dict() for h in got] == [h.as_dict() for h in sql.recall("okapi")]
    assert got[0].status == "active" and len(index._memory.hit_prepared) == 1
    index.warm()
    got = index.recall("okapi")
    assert [h.as_dict() for h in got] == [h.as_dict() for h in sql.recall("okapi")]
    assert got[0].status == "active" and len(index._memory.hit_prepared) == 3


def test_ties_and_recency_pruning_match_sql_engine(tiny_vault):
    """Equal rankScores break by newest date, then the smaller doc_id; recency is applied after exact
    pruning (an older document with a higher BM25 can still lose to a recent one): same as SQL."""
    same = "otter dam survey\n"
    for name, date in [("b", "2026-08-01"), ("a", "2026-08-01"), ("c", "2026-07-01"), ("d", None), ("e", "2026-08-01")]:
        front = f"---\nupdated: {date}\n---\n" if date else ""
        write_doc(tiny_vault, f"knowledge/{name}.md", front + same)
    # an old document with more matches and a recent one with fewer, among many weak matches
    write_doc(tiny_vault, "knowledge/old.md", "---\nupdated: 2020-01-01\n---\notter otter dam dam survey notes\n")
    write_doc(tiny_vault, "knowledge/new.md", "---\nupdated: 2026-08-17\n---\notter otter dam survey notes\n")
    for i in range(40):
        write_doc(tiny_vault, f"knowledge/filler-{i:02d}.md", f"---\nupdated: 2026-0{1 + i % 8}-10\n---\n"
                  + "otter " + "padding words here " * (1 + i % 7) + "\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    engine = MemoryEngine(index.conn)
    plan = plan_query("otter dam survey")
    for top in (1, 2, 3, 5, 8, 20, 50):
        _same(engine.rank(plan, top=top, now_days=NOW), rank(index.conn, plan, top=top, now_days=NOW))
    order = [r.doc_id for r in engine.rank(plan, top=8, now_days=NOW)]
    five = [d for d in order if d[-1] in "abcde" and len(d) == len("knowledge/a")]
    assert five == ["knowledge/a", "knowledge/b", "knowledge/e", "knowledge/c", "knowledge/d"]  # tie: newest, then id
    assert order.index("knowledge/new") < order.index("knowledge/old")


def test_candidates_matched_only_by_slug_synonym_or_filtered_out_agree_with_sql_engine(tiny_vault):
    """The memory engine scores only the documents a query term (or synonym) reaches: a document whose
    only match is its file name (identity coverage without BM25), one reached only through a vault
    synonym, an expired one and one the type filter drops must come out exactly as in the SQL engine."""
    write_docs(tiny_vault, {
        "knowledge/wombat-burrow.md": "---\ntitle: Digging plans\n---\ndepth notes\n",
        "knowledge/dig.md": "---\ntitle: Dig log\n---\nwombat burrow digging log\n",
        "knowledge/tunnel.md": "---\ntitle: Tunnel\n---\nexcavation tunnel under the shed\n",
        "knowledge/old-burrow.md": "---\ntitle: Old burrow\nexpires: 2026-01-01\n---\nwombat burrow abandoned\n",
        "state/burrow-task.md": "---\ntitle: Burrow task\nstatus: active\n---\nwombat burrow repair\n",
    })
    (tiny_vault / "synonyms.txt").write_text("burrow, excavation\nspade, excavation\n", encoding="utf-8")
    index = dreamdb.open(tiny_vault)
    index.sync()
    engine = MemoryEngine(index.conn)
    syn = load_synonyms(index.vault)
    plan = plan_query("wombat burrow", syn)
    cases = [Filters(), Filters(types=["knowledge"]), Filters(include_expired=True), Filters(exclude_types=["task"])]
    for f in cases:
        for top in (1, 2, 10):
            _same(engine.rank(plan, top=top, now_days=NOW, filters=f), rank(index.conn, plan, top=top, now_days=NOW, filters=f))
    got = {r.doc_id: r for r in engine.rank(plan, top=10, now_days=NOW)}
    assert got["knowledge/wombat-burrow"].score == 0 and got["knowledge/wombat-burrow"].identity > 0  # slug only
    by_sql = {r.doc_id: r for r in rank(index.conn, plan, top=10, now_days=NOW)}
    assert repr(by_sql["knowledge/wombat-burrow"].score) == repr(got["knowledge/wombat-burrow"].score) == "0.0"
    assert got["knowledge/tunnel"].score == 0 and got["knowledge/tunnel"].bm25f > 0  # synonym only
    assert "knowledge/old-burrow" not in got  # expired at NOW
    # no query term in the index, a synonym alone matches: the score is a float 0.0 (np.bincount of no
    # postings gives int64 zeros), as the SQL engine returns it
    spade = plan_query("spade", syn)
    only = engine.rank(spade, top=5, now_days=NOW)
    assert [r.doc_id for r in only] == ["knowledge/tunnel"] and repr(only[0].score) == "0.0"
    _same(only, rank(index.conn, spade, top=5, now_days=NOW))
    assert "knowledge/old-burrow" in {r.doc_id for r in engine.rank(plan, top=10, now_days=NOW, filters=cases[2])}
    assert "task/burrow-task" not in {r.doc_id for r in engine.rank(plan, top=10, now_days=NOW, filters=cases[3])}


def test_engines_agree_on_expiry_at_the_instant_it_passes(tiny_vault):
    """QA round 145-E F2: a date alone (``expires: 2026-08-18``) expires at 00:00 UTC of the next day, an instant
    at itself: the SQL filter, the numpy passes and the C kernel (either ranking) drop the document from that
    instant on and keep it a step before."""
    import math

    from dreamdb.ranking.memory import KERNEL

    write_docs(tiny_vault, {
        "knowledge/day.md": "---\ntitle: Day\nexpires: 2026-08-18\n---\nwombat burrow day\n",
        "knowledge/noon.md": "---\ntitle: Noon\nexpires: 2026-08-18T12:00:00Z\n---\nwombat burrow noon\n",
        "knowledge/kept.md": "---\ntitle: Kept\n---\nwombat burrow kept\n",
    })
    index = dreamdb.open(tiny_vault)
    index.sync()
    plan = plan_query("wombat burrow", load_synonyms(index.vault))
    engines = [MemoryEngine(index.conn, kernel=False)]
    if KERNEL is not None:
        engines.append(MemoryEngine(index.conn, kernel=True))
        engines.append(MemoryEngine(index.conn, kernel=True))
        engines[-1].rank_in_kernel = False
    for doc, gone_at in (("knowledge/day", NOW + 1.0), ("knowledge/noon", NOW + 0.5)):
        for now_days, kept in ((math.nextafter(gone_at, -math.inf), True), (gone_at, False)):
            by_sql = rank(index.conn, plan, top=10, now_days=now_days)
            assert (doc in {r.doc_id for r in by_sql}) is kept, (doc, now_days)
            for engine in engines:
                _same(engine.rank(plan, top=10, now_days=now_days), by_sql)


def test_near_top_keeps_exactly_the_bounds_within_reach_of_the_top():
    """_near_top must return every position whose bound reaches 0.85 × the top-th largest positive bound
    (so no document that could make the top is pruned), and nothing else; checked against a plain sort."""
    import numpy as np

    from dreamdb.ranking.memory import _MIN_RECENCY, _near_top

    rng = np.random.default_rng(3)
    for trial in range(400):
        m = int(rng.integers(0, 60))
        upper = rng.choice([0.0, 0.0, 1.0, 2.0, 5.0], size=m) * rng.random(m) ** int(rng.integers(1, 6))
        top = int(rng.integers(1, 12))
        positive = np.sort(upper[upper > 0])[::-1]
        if len(positive) <= top:
            expected = set(np.flatnonzero(upper > 0))
        else:
            expected = set(np.flatnonzero(upper >= positive[top - 1] * _MIN_RECENCY))
        assert set(_near_top(upper, np.ones(m), top).tolist()) == expected, (trial, upper.tolist(), top)


def test_near_ties_break_alike_in_both_engines(tiny_vault):
    """QA round 18: the engines group the BM25 factors differently, so equal rankScores could differ in
    their last bits and break ties (newest, doc_id) differently at the cut-off; rankScore is compared
    to 40 significant bits (signals.tie_score) in both."""
    import random

    rnd = random.Random(5)
    for i in range(240):
        fm = [f"title: {rnd.choice(['Same', 'Güneş', 'encryption'])}"]
        fm += [f"date: '{d}'" for d in [rnd.choice([None, "2026-05-01", "2026-11-30"])] if d]
        fm += [f"status: {s}" for s in [rnd.choice([None, "completed", "active"])] if s]
        fm += [f"confidence: {c}" for c in [rnd.choice([None, 0.25, 0.5, 1])] if c is not None]
        body = rnd.choice(["güneş paneli şifreleme", "encryption backup sun", "encryption backup sun panel"])
        folder = rnd.choice(["knowledge", "state"])
        write_doc(tiny_vault, f"{folder}/{rnd.choice(['same', 'sun', 'x'])}-{i}.md", "---\n" + "\n".join(fm) + f"\n---\n{body}\n")
    memory, sql = dreamdb.open(tiny_vault), dreamdb.open(tiny_vault, engine="sql")
    memory.sync()
    for query in ("panel", "encryption backup", "sun", "güneş şifreleme"):
        for types in (None, "task"):
            a = [h.doc_id for h in memory.recall(query, top=50, types=types, now="2026-12-01")]
            b = [h.doc_id for h in sql.recall(query, top=50, types=types, now="2026-12-01")]
            assert a == b and a, (query, types)
            for top in (3, 7, 15):
                assert [h.doc_id for h in memory.recall(query, top=top, types=types, now="2026-12-01")] == a[:top]


def test_an_index_state_is_loaded_whole_only_once_it_has_served_queries(tiny_vault):
    """QA session 15: each recall after a vault change loaded every posting again (≈ 0.3 s on the real
    vault), so a process that writes before each recall (an agent) paid it every time. A new state is
    served from each query's own terms until it has served PRELOAD_AFTER_QUERIES queries."""
    from dreamdb.ranking.memory import PRELOAD_AFTER_QUERIES

    write_docs(tiny_vault, {f"knowledge/n{i}.md": f"---\ntitle: Note {i}\n---\notter dam survey {i}\n" for i in range(5)})
    index, sql = dreamdb.open(tiny_vault), dreamdb.open(tiny_vault, engine="sql")
    for i in range(3):
        write_doc(tiny_vault, f"knowledge/new-{i}.md", f"otter count {i}, dam height\n")  # a change before each recall
        got = index.recall("otter dam", top=10)
        assert [h.as_dict() for h in got] == [h.as_dict() for h in sql.recall("otter dam", top=10)]
        assert f"knowledge/new-{i}" in {h.doc_id for h in got} and not index._memory.self_contained
    for _ in range(PRELOAD_AFTER_QUERIES):
        index.recall("survey")
    assert index._memory.self_contained  # this state has served enough queries: every posting is loaded
    assert [h.as_dict() for h in index.recall("otter dam", top=10)] == [h.as_dict() for h in sql.recall("otter dam", top=10)]
    write_doc(tiny_vault, "knowledge/last.md", "otter\n")
    index.recall("otter")
    assert not index._memory.self_contained
    index.warm()  # a long-lived process can load it at once
    assert index._memory.self_contained
    # with the starts of its English terms a Turkish query's loanwords are checked against (no query pays for it)
    assert index._memory._loanword_heads is not None and "otte" in index._memory._loanword_heads
    assert [h.as_dict() for h in index.recall("otter", top=10)] == [h.as_dict() for h in sql.recall("otter", top=10)]


def test_no_preload_of_an_index_another_process_is_writing(tiny_vault):
    """QA round 147-E F5: while another process ran `sync --force`, a long-lived Index's recall waited for its lock
    (at most 1.5 s, as documented), answered from the index as it is, and then, the index looking unchanged, loaded
    every posting of a state the running sync was about to replace (2.8–3.3 s in all). While the read's sync meets
    another process's lock no automatic preload runs; it does once the index can be synced again."""
    from dreamdb.ranking.memory import PRELOAD_AFTER_QUERIES

    write_docs(tiny_vault, {f"knowledge/n{i}.md": f"---\ntitle: Note {i}\n---\notter dam survey {i}\n" for i in range(5)})
    index = dreamdb.open(tiny_vault, lock_timeout_ms=200)  # (the lazy sync's wait for the lock: 0.2 s)
    index.recall("otter")
    with held_by_another_process(index.index_path, exclusive=False):  # (its write lock, as a sync's)
        for i in range(PRELOAD_AFTER_QUERIES + 2):
            write_doc(tiny_vault, "knowledge/changing.md", f"otter {i}\n")  # (the read's sync has a file to index)
            assert len(index.recall("otter dam survey", top=10)) == 5  # (from the index as it is)
            assert index.read_as_is is not None
        assert index._memory._preload_due and not index._memory.self_contained  # (the preload did not run)
    index.recall("otter")  # synced: a new state
    for _ in range(PRELOAD_AFTER_QUERIES):
        index.recall("survey")
    assert index.read_as_is is None and index._memory.self_contained
    index.close()
