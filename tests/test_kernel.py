"""The C accumulator (dreamdb/ranking/_kernel.c) ranks exactly as the numpy passes it replaces,
is built by the install where a C compiler exists, and never breaks an install where none does."""

from __future__ import annotations

import hashlib
import importlib.util
import random
import shutil
import sys
import sysconfig

import numpy as np
import pytest

import dreamdb
from dreamdb.cli import main
from dreamdb.ranking import memory as M
from dreamdb.ranking.memory import MemoryEngine
from dreamdb.ranking.rank import Filters, plan_query
from dreamdb.ranking.synonyms import load_synonyms
from dreamdb.records import replace
from tests.conftest import ROOT, needs_real_vault, write_docs

NOW = 20683.0  # 2026-08-18 in days since epoch
SOURCE = ROOT / "dreamdb" / "ranking" / "_kernel.c"
needs_kernel = pytest.mark.skipif(M.KERNEL is None, reason="the C accumulator is not built (no C compiler at install)")


def _compiler() -> str | None:
    ld = sysconfig.get_config_var("LDSHARED")
    return shutil.which(ld.split()[0]) if ld else None


@pytest.mark.skipif(_compiler() is None, reason="no C compiler named by this Python (sysconfig LDSHARED)")
def test_kernel_is_built_from_the_current_source():
    assert M.KERNEL is not None, "dreamdb.ranking._kernel is missing: reinstall (pip install -e .) to compile it"
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()
    assert M.KERNEL.SOURCE_SHA256 == digest, "the built _kernel is older than _kernel.c: reinstall (pip install -e .)"


@needs_kernel
def test_kernel_can_be_turned_off_for_comparisons(tiny_vault, monkeypatch, capsys):
    from dreamdb.errors import UsageError

    index = dreamdb.open(tiny_vault)
    assert MemoryEngine(index.conn).kernel is M.KERNEL
    for off in ("0", "false", " OFF ", "no"):
        monkeypatch.setenv("DREAMDB_KERNEL", off)
        assert MemoryEngine(index.conn).kernel is None, off
    assert MemoryEngine(index.conn, kernel=True).kernel is M.KERNEL  # an explicit choice wins
    monkeypatch.setenv("DREAMDB_KERNEL", "1")
    assert MemoryEngine(index.conn).kernel is M.KERNEL
    monkeypatch.setenv("DREAMDB_KERNEL", "fast")
    with pytest.raises(UsageError, match="DREAMDB_KERNEL"):
        MemoryEngine(index.conn)
    # QA session 20: the CLI (SQL engine, which never reads it) accepted any value
    assert main(["recall", "--vault", str(tiny_vault), "anything"]) == 2
    assert "DREAMDB_KERNEL='fast' is neither on nor off" in capsys.readouterr().err


def test_status_says_which_accumulator_a_long_lived_process_uses(tiny_vault, monkeypatch):
    index = dreamdb.open(tiny_vault)
    assert index.status()["bm25_accumulator"] == ("C" if M.KERNEL is not None else "numpy")
    monkeypatch.setenv("DREAMDB_KERNEL", "off")
    assert index.status()["bm25_accumulator"] == ("numpy (DREAMDB_KERNEL=0)" if M.KERNEL is not None else "numpy")


def test_without_the_accumulator_recall_uses_the_numpy_passes(tiny_vault, monkeypatch):
    """QA session 15: where nothing was compiled (no C compiler at install), every recall through the
    Python API raised ImportError: the engine's default asked for the accumulator regardless."""
    write_docs(tiny_vault, {"knowledge/otter.md": "---\ntitle: Otter dam\n---\notter dam survey\n",
                            "knowledge/dam.md": "dam notes, otter sighting\n"})
    monkeypatch.setattr(M, "KERNEL", None)
    index = dreamdb.open(tiny_vault)
    hits = index.recall("otter dam")
    assert [h.doc_id for h in hits] == ["knowledge/otter", "knowledge/dam"] and index._memory.kernel is None
    sql = dreamdb.open(tiny_vault, engine="sql")
    assert [h.as_dict() for h in hits] == [h.as_dict() for h in sql.recall("otter dam")]
    with pytest.raises(ImportError, match="not built"):
        MemoryEngine(index.conn, kernel=True)


def _queries(conn, rng, n):
    vocab = [t for (t,) in conn.execute("SELECT term FROM terms WHERE df >= 1 ORDER BY term")]
    titles = [t for (t,) in conn.execute("SELECT title FROM documents ORDER BY doc_id LIMIT 40")]
    return titles + [" ".join(rng.sample(vocab, rng.randint(1, min(12, len(vocab))))) for _ in range(n)]


def _agree(index, queries, *, preload: bool, monkeypatch):
    if not preload:  # the per-term path of indexes too large to load whole
        monkeypatch.setattr(M, "PRELOAD_MAX_TOKENS", 0)
    conn = index.conn
    syn = load_synonyms(index.vault)
    kernel, numpy = MemoryEngine(conn, kernel=True), MemoryEngine(conn, kernel=False)
    near_top = MemoryEngine(conn, kernel=True)  # the kernel's candidates, ranked by the Python loop
    near_top.rank_in_kernel = False
    assert kernel.kernel is not None and numpy.kernel is None
    filters = [Filters(), Filters(types=["knowledge", "feature"]), Filters(since_days=NOW - 60, min_level=2),
               Filters(tags=["recall"]), Filters(exclude_types=["changelog"], include_expired=True)]
    vocab = [t for (t,) in conn.execute("SELECT term FROM terms WHERE df >= 1 ORDER BY term")]
    rng = random.Random(5)
    compared = 0
    for i, q in enumerate(queries):
        plan = plan_query(q, syn, vocabulary=kernel)
        if i % 3 == 1 and plan.terms:  # translated words: classes (rank.class_members), spans of kinds 1 and 2
            plan = replace(plan, translated={t: rng.choice(vocab) for t in plan.terms[:2]})
        f = filters[i % len(filters)]
        for top in (1, 5, 50):
            a = kernel.rank(plan, top=top, now_days=NOW, filters=f)
            b = numpy.rank(plan, top=top, now_days=NOW, filters=f)
            assert a == b == near_top.rank(plan, top=top, now_days=NOW, filters=f), (q, f, top)  # floats exactly
            compared += bool(a)
    assert compared > len(queries)  # most queries return hits: the comparison is not of empty lists
    assert not kernel._acc.any() and not kernel._marks.any()  # the scratch arrays are left as found


@needs_kernel
@needs_real_vault
@pytest.mark.parametrize("preload", [True, False])
def test_kernel_and_numpy_passes_rank_alike_on_real_vault(real_index, preload, monkeypatch):
    _agree(real_index, _queries(real_index.conn, random.Random(11), 150), preload=preload, monkeypatch=monkeypatch)


@needs_kernel
@pytest.mark.parametrize("preload", [True, False])
def test_kernel_and_numpy_passes_rank_alike_with_synonyms_slugs_expiry(tiny_vault, preload, monkeypatch):
    """Synonym-only matches, slug-only matches (identity without BM25), expired and filtered documents,
    ties between identical notes: the cases where the accumulator's candidates and bound can differ."""
    rng = random.Random(3)
    words = "otter dam survey burrow wombat tunnel excavation güneş paneli şifreleme backup encryption".split()
    files = {}
    for i in range(160):
        fm = [f"title: {rng.choice(['Otter dam', 'Survey', 'Güneş', 'Backup plan', 'Misc'])}"]
        fm += [f"updated: {d}" for d in [rng.choice([None, "2026-01-05", "2026-08-01", "2020-03-03"])] if d]
        fm += [f"expires: {d}" for d in [rng.choice([None, None, "2026-01-01", "2027-01-01"])] if d]
        fm += [f"status: {s}" for s in [rng.choice([None, "completed", "active"])] if s]
        fm += [f"tags: [{t}]" for t in [rng.choice([None, "recall", "ops"])] if t]
        body = " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))
        folder = rng.choice(["knowledge", "state", "feature"])
        files[f"{folder}/{rng.choice(['otter', 'dam', 'note'])}-{i}.md"] = "---\n" + "\n".join(fm) + f"\n---\n{body}\n"
    files["knowledge/spade-digging.md"] = "---\ntitle: Digging plans\n---\ndepth notes\n"
    write_docs(tiny_vault, files)
    (tiny_vault / "synonyms.txt").write_text("burrow, excavation\nspade, tunnel\n", encoding="utf-8")
    index = dreamdb.open(tiny_vault)
    index.sync()
    queries = [" ".join(rng.sample(words, rng.randint(1, 5))) for _ in range(80)] + ["spade", "digging", "otter otter"]
    _agree(index, queries, preload=preload, monkeypatch=monkeypatch)


@needs_kernel
def test_kernel_refuses_inconsistent_arrays_and_leaves_scratch_clean():
    n = 4
    acc, marks, touched = np.zeros((n, 4)), np.zeros(n, dtype=np.uint8), np.empty(n, dtype=np.int64)
    ones = np.ones(n)
    pos, w = np.array([0, 3, 1], dtype=np.int64), np.ones((3, 3))

    def call(p=pos, weights=w, spans=((0, 3, 0.0),), kept=ones, top=2):
        return M.KERNEL.near_top(p, weights, list(spans), acc, marks, touched, ones, kept, None, NOW, 2, top,
                                 0.5, 1.5, M._MIN_RECENCY)

    positions, raw, bm25f, cov, structured = call()
    assert sorted(positions) == [0, 1, 3] and raw == bm25f == structured == [1.0, 1.0, 1.0] and cov == [0.5, 0.5, 0.5]
    # a query term of a class (kind 1: the raw score and coverage) and its class (kind 2: BM25F and the
    # raw BM25 rankScore starts from), in one array: postings 0-2 the term's, 3-4 the class's
    p5, w5 = np.array([0, 3, 1, 0, 2], dtype=np.int64), np.array([[1.0, 1, 1, 4, 8], [2, 2, 2, 5, 9], [1, 0, 0, 0, 0]])
    rows = {d: (r, f, c, x) for d, r, f, c, x in zip(*call(p=p5, weights=w5, spans=((0, 3, 0.0, 1), (3, 5, 0.0, 2)), top=4))}
    # (documents 1 and 3 have the term's raw score only: no BM25F, no slug/title match, no bound)
    assert rows == {0: (1.0, 5.0, 0.5, 4.0), 2: (0.0, 9.0, 0.0, 8.0)} and not acc.any() and not marks.any()
    for bad, message in [(dict(p=np.array([0, 9, 1], dtype=np.int64)), "out of range"),
                         (dict(spans=((0, 4, 0.0),)), "outside"),
                         (dict(weights=np.ones((3, 2))), "disagree"),
                         (dict(kept=np.ones(3)), "disagree"),
                         (dict(top=0), "positive"),
                         (dict(spans=((0, 3, 0.0, 3),)), "kind"), (dict(spans=((0, 3, 0.5, 2),)), "kind")]:
        with pytest.raises(ValueError, match=message):
            call(**bad)
        assert not acc.any() and not marks.any()
    dates, order = np.array([NOW - 1, np.nan, NOW, NOW]), np.array([3, 2, 1, 0], dtype=np.int64)
    ranked = M.KERNEL.ranked_top(pos, w, [(0, 3, 0.0)], acc, marks, touched, ones, ones, None, NOW, 2, 2, 0.5, 1.5,
                                 M._MIN_RECENCY, (dates, order, 0.85, 120.0, 0.925, 40))
    # document 3, dated today, first; then 0, dated yesterday; the undated 1 (recency 0.925) cut at top 2
    assert [(r[0], r[1]) for r in ranked] == [(3, NOW), (0, NOW - 1)] and ranked[0][7] == 1.0
    # QA session 20: a huge top overflowed the heap's allocation (a crash); it means every document
    everything = M.KERNEL.ranked_top(pos, w, [(0, 3, 0.0)], acc, marks, touched, ones, ones, None, NOW, 2, 2 ** 61,
                                     0.5, 1.5, M._MIN_RECENCY, (dates, order, 0.85, 120.0, 0.925, 40))
    assert [r[0] for r in everything] == [3, 0, 1] and len(call(top=2 ** 61)[0]) == 3
    for bad_dates, bad_order in [(np.ones(3), order), (dates, order[:3]), (dates, order.astype(np.float64))]:
        with pytest.raises((ValueError, TypeError)):
            M.KERNEL.ranked_top(pos, w, [(0, 3, 0.0)], acc, marks, touched, ones, ones, None, NOW, 2, 2, 0.5, 1.5,
                                M._MIN_RECENCY, (bad_dates, bad_order, 0.85, 120.0, 0.925, 40))
        assert not acc.any() and not marks.any()
    with pytest.raises(TypeError, match="C-contiguous"):
        call(weights=np.ones((3, 3)).T)  # float64 but not C-contiguous
    with pytest.raises(TypeError, match="int64"):
        call(p=pos.astype(np.float64))  # 8-byte items, but not positions
    with pytest.raises(TypeError, match="float64"):
        call(weights=np.ones((3, 3), dtype=np.int64))
    assert not acc.any() and not marks.any()
    assert not acc.any() and not marks.any()


@needs_kernel
@needs_real_vault
def test_class_postings_in_c_equal_numpy_and_leave_scratch_clean(real_index):
    """MemoryEngine._class (a translated word and its translation as one term, rank.class_members) from the
    kernel's class_postings and from numpy: the same positions and the same doubles, with 16-bit and
    64-bit term frequencies."""
    kernel, numpy = MemoryEngine(real_index.conn, kernel=True), MemoryEngine(real_index.conn, kernel=False)
    kernel.preload(), numpy.preload()
    conn = real_index.conn
    common = [t for (t,) in conn.execute("SELECT term FROM terms WHERE df BETWEEN 20 AND 400 ORDER BY term LIMIT 30")]
    rare = [t for (t,) in conn.execute("SELECT term FROM terms WHERE df = 1 ORDER BY term LIMIT 10")]
    classes = [(a, b) for a, b in zip(rare, common)] + [(a, b) for a, b in zip(common, common[1:])] + [("nosuchterm", common[0])]
    for wide in (False, True):
        if wide:
            kernel._tf = kernel._tf.astype(np.int64)
            kernel._classes.clear()
        for members in classes:
            (p1, w1, df1), (p2, w2, df2) = kernel._class(members), numpy._class(members)
            assert df1 == df2 > 0 and p1.tolist() == p2.tolist() and w1.tolist() == w2.tolist(), members
    marks, sums = kernel._class_scratch
    assert not marks.any() and not sums.any()  # left as found
    args = (kernel._pos, kernel._tf, [(0, 3)], kernel._raw_norm, kernel._field_norm, kernel._field_w, kernel.n_docs,
            1.5, marks, sums, kernel._touched)
    with pytest.raises(ValueError, match="fewer"):
        M.KERNEL.class_postings(*args, np.empty(2, dtype=np.int64), np.empty(6))
    with pytest.raises(ValueError, match="outside"):
        M.KERNEL.class_postings(*args[:2], [(0, len(kernel._pos) + 1)], *args[3:], np.empty(2, dtype=np.int64), np.empty(6))
    with pytest.raises(TypeError, match="uint16 or int64"):
        M.KERNEL.class_postings(args[0], kernel._tf.astype(np.float64), *args[2:], np.empty(3, dtype=np.int64), np.empty(9))
    assert not marks.any() and not sums.any()


def _load(path):
    spec = importlib.util.spec_from_file_location("_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(_compiler() is None, reason="no C compiler named by this Python (sysconfig LDSHARED)")
def test_build_hook_compiles_the_kernel_and_falls_back_without_a_compiler(tmp_path, monkeypatch):
    pytest.importorskip("hatchling")
    sys.path.insert(0, str(ROOT))
    try:
        import hatch_build
    finally:
        sys.path.remove(str(ROOT))
    root = tmp_path / "tree"
    (root / "dreamdb" / "ranking").mkdir(parents=True)
    shutil.copy(SOURCE, root / "dreamdb" / "ranking" / "_kernel.c")
    built, why = hatch_build.compile_kernel(root)
    assert built is not None and why == "", why
    assert _load(built).SOURCE_SHA256 == hashlib.sha256(SOURCE.read_bytes()).hexdigest()
    built.unlink()
    real = sysconfig.get_config_var
    monkeypatch.setattr(sysconfig, "get_config_var",
                        lambda name: "/nonexistent/cc -shared" if name == "LDSHARED" else real(name))
    stale = root / "dreamdb" / "ranking" / f"_kernel{sysconfig.get_config_var('EXT_SUFFIX')}"
    stale.write_bytes(b"an older build")  # QA session 15: kept and imported though its source had changed
    built, why = hatch_build.compile_kernel(root)
    assert built is None and "/nonexistent/cc" in why
    assert sorted(p.name for p in (root / "dreamdb" / "ranking").iterdir()) == ["_kernel.c"]  # nothing half-written or stale
    stale.write_bytes(b"an editable install's build")  # QA round 25: DREAMDB_NO_KERNEL=1 kept it, and it was imported
    assert hatch_build.skip_kernel(root) == stale
    assert sorted(p.name for p in (root / "dreamdb" / "ranking").iterdir()) == ["_kernel.c"]
    assert hatch_build.skip_kernel(root) is None
    # QA round 86-B F10: `DREAMDB_NO_KERNEL=1 pip wheel .` deleted the module the tree's editable install imports;
    # only an editable build removes it (a wheel never packs it: *.so is gitignored)
    monkeypatch.setenv("DREAMDB_NO_KERNEL", "1")
    hook = hatch_build.KernelBuildHook(str(root), {}, None, None, str(tmp_path / "dist"), "wheel")
    for version, kept in (("standard", True), ("editable", False)):
        stale.write_bytes(b"an editable install's build")
        data = {"artifacts": []}
        hook.initialize(version, data)
        assert stale.exists() is kept and data == {"artifacts": []}, version
    # an off value builds the kernel (QA round 90-B F9: any non-empty value, `0` too, skipped it)
    for value, skipped in (("0", False), ("off", False), (" False ", False), ("", False), ("yes", True), ("1", True),
                           ("maybe", True)):
        monkeypatch.setenv("DREAMDB_NO_KERNEL", value)
        assert hatch_build.kernel_skipped() is skipped, value


@needs_real_vault
def test_cooccurrence_counts_agree_between_kernel_numpy_and_sql(real_index, monkeypatch):
    """The document counts that choose among a word's translations (rank.in_context): the C kernel over a
    preloaded index, numpy over terms loaded one by one, and SQL give the same integers, and the kernel's
    scratch marks are left zeros."""
    from dreamdb.ranking.rank import cooccurrence_counts

    conn = real_index.conn
    vocab = [r[0] for r in conn.execute("SELECT term FROM postings GROUP BY term HAVING COUNT(*) BETWEEN 1 AND 80")]
    rng = random.Random(5)
    preloaded = MemoryEngine(conn)
    preloaded.preload()
    one_by_one = MemoryEngine(conn, kernel=False)
    one_by_one.refresh()
    engines = [preloaded, one_by_one]
    assert preloaded._slices is not None and one_by_one._slices is None
    nonzero = 0
    for _ in range(60):
        terms, anchors = rng.sample(vocab, 6) + ["no-such-term"], rng.sample(vocab, rng.randint(1, 5))
        expected = cooccurrence_counts(conn, terms, anchors)
        for engine in engines:
            n_docs, n_anchor, counts = engine.cooccurrence(terms, anchors)
            assert (n_docs, n_anchor) == expected[:2]
            assert {t: c for t, c in counts.items() if c[1]} == expected[2], (terms, anchors)
        nonzero += sum(both > 0 for both, _n in expected[2].values())
        assert all(0 <= both <= n <= expected[0] for both, n in expected[2].values())
    assert nonzero > 20  # terms that share documents with the anchors: not a comparison of zeros
    if M.KERNEL is not None:  # the kernel counted, and left its scratch as it found it
        assert preloaded._cooccurrence_marks is not None and not preloaded._cooccurrence_marks.any()


@needs_kernel
def test_kernel_cooccurrence_counts_and_checks_its_spans():
    pos = np.array([0, 1, 2, 1, 3, 3], dtype=np.int64)  # anchor a: docs 0, 1; b: doc 2; term t: docs 1, 3, 3
    marks = np.zeros(4, dtype=np.uint8)
    assert M.KERNEL.cooccurrence(pos, [(0, 2, 2)], [(2, 3, 1), (3, 6, 3)], marks) == (2, [0, 1])
    assert M.KERNEL.cooccurrence(pos, [(0, 2), (0, 3)], [(3, 5)], marks) == (3, [1])  # docs 0, 1, 2 hold an anchor
    assert not marks.any()
    with pytest.raises(ValueError, match="outside the postings"):
        M.KERNEL.cooccurrence(pos, [(0, 9)], [], marks)
    with pytest.raises(ValueError, match="outside marks"):
        M.KERNEL.cooccurrence(pos, [(0, 5)], [], np.zeros(3, dtype=np.uint8))
    with pytest.raises(TypeError):
        M.KERNEL.cooccurrence(pos, [(0,)], [], marks)
    assert not marks.any()
    with pytest.raises(ValueError, match="share memory"):  # a mark written would change a position read
        M.KERNEL.cooccurrence(pos, [(0, 1)], [(0, 4)], pos.view(np.uint8))
    dirty = np.array([0, 1, 0, 0], dtype=np.uint8)
    with pytest.raises(ValueError, match="must be zeros"):
        M.KERNEL.cooccurrence(pos, [(0, 2)], [(3, 5)], dirty)
    assert dirty.tolist() == [0, 1, 0, 0]  # rejected before any mark was written
