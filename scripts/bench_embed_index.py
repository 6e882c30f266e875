#!/usr/bin/env python
"""Benchmark the vector index: full embedding, no-change refresh, dense search, vec load cost.

Each figure has a baseline beside it:

* vec load per connection: ``connect(vec=True)`` vs ``connect()``.
* first full embedding: wall time of ``refresh`` vs the time spent inside
  ``embed_passages`` (the model itself), i.e. the store's overhead.
* no-change refresh: ``refresh`` vs ``pending`` (the lazy check before each
  hybrid query) vs a no-change ``Index.sync``.
* ``dreamdb recall --mode hybrid`` as a process (wall ms) vs the same in BM25 mode (compiled bytecode
  cached, as from an installed wheel, this tree's dreamdb: ``bench_recall.cli_env`` and ``dreamdb_command``).
* dense search p50: vec0 KNN (``dense_search``) vs numpy brute force reading the
  vectors from SQLite (``dense_search_numpy``) vs numpy on a matrix already in RAM.

All timings are medians over ``--runs`` repetitions, except the full embedding
(one run: minutes on 2 cores). The vault is copied to a work folder first; the
shared vault is never written. ``--workdir DIR`` keeps the copy and its index,
so a later run skips the full embedding and reports the saved figure.

Usage:
    python scripts/bench_embed_index.py                 # the real vault (~1,350 chunks; several minutes)
    python scripts/bench_embed_index.py --quick         # 40 small documents, 3 runs (CI)
    python scripts/bench_embed_index.py --workdir /tmp/bench-embed --json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


def default_vault() -> Path:
    """The real vault under the evaluation data folder (``$DREAMDB_EVAL_DATA``, else ``../shared``: as
    ``dreamdb eval`` and ``scripts/bench_recall.py`` find it)."""
    from settings import data_folder  # ($DREAMDB_EVAL_DATA naming no folder: exit 7, QA round 143-A F3)

    return data_folder(None, "bench_embed_index", hint="Set DREAMDB_EVAL_DATA to the folder holding vaults/, or give"
                       " a vault with --vault.") / "vaults" / "dreamcontext" / "_dream_context"


def median_ms(fn, runs: int) -> float:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return statistics.median(out)


def quick_notes(src: Path) -> list[Path]:
    """The notes a ``--quick`` run copies: the 40 smallest ``.md`` files under ``src/knowledge`` (none in a hidden
    folder; ~1 min to embed)."""
    return sorted((p for p in (src / "knowledge").rglob("*.md") if "/." not in str(p.relative_to(src))),
                  key=lambda p: (p.stat().st_size, str(p)))[:40]


def copy_vault(src: Path, work: Path, quick: bool) -> Path:
    """``src`` (its 40 smallest knowledge notes with ``quick``) copied to ``work/_dream_context``, writable; a copy
    of the same source and mode is reused (:func:`workdir.vault_copy`)."""
    from workdir import vault_copy

    def make(dest: Path) -> None:
        if quick:
            for p in quick_notes(src):
                t = dest / p.relative_to(src)
                t.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(p, t)
        else:
            shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".dreamdb"))
        for dirpath, _dirs, files in os.walk(dest):
            os.chmod(dirpath, 0o755)
            for f in files:
                os.chmod(os.path.join(dirpath, f), 0o644)

    return vault_copy(src, work, "quick" if quick else "full", make)


class TimedEmbedder:
    """Wraps an Embedder and accumulates the time spent in the model."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.model_id, self.name, self.dim, self.source, self.path = inner.model_id, inner.name, inner.dim, inner.source, inner.path
        self.seconds = 0.0
        self.texts = 0

    def embed_passages(self, texts):
        t0 = time.perf_counter()
        v = self.inner.embed_passages(texts)
        self.seconds += time.perf_counter() - t0
        self.texts += len(texts)
        return v


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, default=None,
                    help="a _dream_context folder (default: the real vault under $DREAMDB_EVAL_DATA or ../shared)")
    ap.add_argument("--quick", action="store_true", help="the 40 smallest knowledge files, 3 runs")
    ap.add_argument("--runs", type=int, default=None, help="repetitions per timing (default 20, quick 3)")
    ap.add_argument("--queries", type=int, default=None, help="dense-search queries (default 50; quick: 10)")
    ap.add_argument("--workdir", type=Path, help="keep the vault copy + index here (reused by later runs)")
    ap.add_argument("--model-dir", help="model directory (default: DREAMDB_MODEL_DIR / user data dir)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    for name in ("runs", "queries", "threads"):  # (before the skip below: QA round 147-G F8, --runs 0 exited 0)
        if getattr(args, name) is not None and getattr(args, name) < 1:
            ap.error(f"--{name} must be at least 1 (got {getattr(args, name)})")
    given = args.vault is not None
    args.vault = args.vault if given else default_vault()
    if not (args.vault / "knowledge").is_dir() if args.quick else not args.vault.is_dir():
        if not given:  # a clone without ../shared: skipped, as bench_recall.py skips its real-vault part (QA 68 M6)
            print(f"skipped: no vault at {args.vault} (../shared exists only on dreamdb machines; set"
                  " DREAMDB_EVAL_DATA or give a vault with --vault)")
            return 0
        ap.error(f"no vault at {args.vault} (a _dream_context folder{' with knowledge/' if args.quick else ''}):"
                 " give one with --vault")
    if args.quick and not quick_notes(args.vault):  # (QA round 147-G F8: "Vault path does not exist" of the copy)
        ap.error(f"no note to benchmark in {args.vault / 'knowledge'} (--quick embeds its 40 smallest .md files)")
    from settings import scrub

    scrub("bench_embed_index")  # (QA round 122-C F5: DREAMDB_RECALL_MODE made its "bm25" figure a hybrid one)
    from dreamdb.errors import DreamdbError

    try:
        if args.workdir is not None:
            from bench_recall import set_workdir
            from workdir import prepare

            work = prepare(args.workdir, args.vault)
            set_workdir(work)  # (the timed processes' bytecode kept there, not in the source tree: QA round 147-G F7)
            return bench(args, work)
        with tempfile.TemporaryDirectory(prefix="bench-embed-") as tmp:  # removed afterwards, whatever happens
            return bench(args, Path(tmp))
    except DreamdbError as exc:  # no model, no vault, …: say so, as the CLI does
        print(f"bench_embed_index: {exc.message}" + (f"\n  hint: {exc.hint}" if exc.hint else ""), file=sys.stderr)
        return exc.exit_code


def bench(args, work: Path) -> int:
    """Run every measurement in the folder ``work`` and print them (``args``: the parsed options)."""
    runs = args.runs or (3 if args.quick else 20)
    n_queries = args.queries or (10 if args.quick else 50)

    import numpy as np

    import dreamdb
    from dreamdb.embeddings import store
    from dreamdb.embeddings.model import Embedder
    from dreamdb.store import connect as db

    vault = copy_vault(args.vault, work, args.quick)
    res: dict = {"vault": str(vault), "quick": args.quick, "runs": runs, "driver": f"{db.DRIVER_NAME} {db.sqlite3.sqlite_version}"}

    # vec load cost per connection
    probe = work / "probe.db"
    db.connect(probe).close()
    res["connect_ms"] = median_ms(lambda: db.connect(probe).close(), max(runs, 20))
    res["connect_vec_ms"] = median_ms(lambda: db.connect(probe, vec=True).close(), max(runs, 20))

    index = dreamdb.open(vault)
    sync = index.sync()
    res["documents"] = sync.documents
    c = index.conn
    rows = c.execute("SELECT id, title, description FROM documents WHERE description != '' ORDER BY id").fetchall()
    if not rows:  # (notes without descriptions: their titles and first words; QA round 122-C F6, a traceback)
        rows = c.execute("SELECT id, title, substr(body, 1, 200) FROM documents WHERE type != 'changelog'"
                         " AND trim(body) != '' ORDER BY id").fetchall()
    if not rows:  # (said before the model is loaded, naming the vault given, not its copy: QA round 147-G F8)
        from dreamdb.errors import UsageError

        index.close()
        raise UsageError(f"the vault {args.vault} has no note with text to make a query of")

    emb = Embedder(args.model_dir, threads=args.threads)
    res["model_id"], res["model_load_ms"] = emb.model_id, round(emb.load_ms, 1)

    saved = work / "full_embed.json"
    if store.pending(c, emb.model_id) or not saved.exists():
        timed = TimedEmbedder(emb)
        t0 = time.perf_counter()
        rep = store.refresh(c, timed)
        wall = time.perf_counter() - t0
        full = {"chunks": rep.chunks, "embedded": rep.embedded, "seconds": round(wall, 2),
                "chunks_per_s": round(rep.embedded / wall, 2) if wall else None,
                "model_seconds": round(timed.seconds, 2), "store_overhead_s": round(wall - timed.seconds, 2)}
        saved.write_text(json.dumps(full), encoding="utf-8")
    else:
        full = {**json.loads(saved.read_text(encoding="utf-8")), "cached": True}
    res["full_embed"] = full

    res["refresh_nochange_ms"] = median_ms(lambda: store.refresh(c, emb), runs)
    res["pending_ms"] = median_ms(lambda: store.pending(c, emb.model_id), runs)
    res["sync_nochange_ms"] = median_ms(lambda: index.sync(), runs)

    rng = np.random.default_rng(0)
    picks = [rows[i] for i in rng.choice(len(rows), size=min(n_queries, len(rows)), replace=False)]
    qv = emb.embed_queries([f"{t}: {d}" for _i, t, d in picks])
    res["queries"] = len(picks)
    n_vec = c.execute("SELECT COUNT(*) FROM embeddings WHERE model_id = ?", (emb.model_id,)).fetchone()[0]
    res["vectors"] = n_vec

    def per_query(fn) -> float:
        return statistics.median(median_ms(lambda q=q: fn(q), max(1, runs // 4)) for q in qv)

    res["dense_vec0_p50_ms"] = per_query(lambda q: store.dense_search(c, q, emb.model_id, 10))
    res["dense_numpy_sql_p50_ms"] = per_query(lambda q: store.dense_search_numpy(c, q, emb.model_id, 10))
    doc_ids, mat, _langs = store._vectors_for_docs(c, emb.model_id, None)

    def in_ram(q):
        s = mat @ q
        best: dict = {}
        for d, v in zip(doc_ids.tolist(), s.tolist()):
            if v > best.get(d, -2):
                best[d] = v
        return sorted(best.items(), key=lambda x: -x[1])[:10]

    res["dense_numpy_ram_p50_ms"] = per_query(in_ram)
    hit3 = 0
    for (doc, _t, _d), q in zip(picks, qv):
        hit3 += doc in [d for d, _s in store.dense_search(c, q, emb.model_id, 3)]
    res["title_description_query_top3"] = f"{hit3}/{len(picks)}"
    index.close()

    # Whole recall calls in process: hybrid (query embedding uncached) beside BM25 on the same index.
    import os

    from dreamdb import hybrid

    # the model measured (--model-dir) is the one recall uses, here and in the child processes below, whatever
    # DREAMDB_MODEL_DIR said (QA round 40: a DREAMDB_MODEL_DIR naming no model made the children fall back to BM25)
    os.environ["DREAMDB_MODEL_DIR"] = str(emb.path)
    texts = [t for _i, t, _d in picks]
    ix = dreamdb.open(vault)
    ix.recall(texts[0], mode="hybrid")  # loads the model once

    def hybrid_uncached(t):
        hybrid._QUERY_CACHE.clear()
        return ix.recall(t, top=10, mode="hybrid")

    # with and without language centring (dreamdb/embeddings/language.py), alternating query by query
    centroids = store.load_centroids

    def uncentred(t):
        store.load_centroids = lambda conn, model_id: None
        try:
            return hybrid_uncached(t)
        finally:
            store.load_centroids = centroids

    with_c, without_c = [], []
    for t in texts:
        with_c.append(median_ms(lambda t=t: hybrid_uncached(t), max(1, runs // 4)))
        without_c.append(median_ms(lambda t=t: uncentred(t), max(1, runs // 4)))
    res["hybrid_recall_p50_ms"] = statistics.median(with_c)
    res["hybrid_uncentred_p50_ms"] = statistics.median(without_c)
    res["bm25_recall_p50_ms"] = statistics.median(median_ms(lambda t=t: ix.recall(t, top=10, mode="bm25"),
                                                            max(1, runs // 4)) for t in texts)
    res["query_embed_p50_ms"] = statistics.median(median_ms(lambda t=t: emb.embed_queries([t]), max(1, runs // 4)) for t in texts)
    ix.close()

    # `dreamdb recall` as a process (Python start-up, model load, one query), hybrid beside BM25, alternating; with
    # compiled bytecode cached, as the other benchmarks time processes (QA round 145-G F3: os.environ as it was, so
    # under PYTHONDONTWRITEBYTECODE=1 every start compiled dreamdb anew: 337 ms against 142)
    import subprocess

    from bench_recall import cli_env, dreamdb_command, processes_note

    env = cli_env()
    res["processes"] = processes_note()
    walls: dict = {"hybrid": [], "bm25": []}
    for i in range(2 if args.quick else 5):
        for mode in (("hybrid", "bm25") if i % 2 == 0 else ("bm25", "hybrid")):
            t0 = time.perf_counter()
            p = subprocess.run([*dreamdb_command(), "recall", texts[i % len(texts)], "--vault", str(vault),
                                "--mode", mode, "--json"], capture_output=True, text=True, env=env)
            walls[mode].append((time.perf_counter() - t0) * 1000)
            try:
                out = json.loads(p.stdout or "{}")
            except ValueError:
                out = {}
            if p.returncode != 0 or out.get("mode", mode) != mode:
                why = p.stderr.strip()[-500:] or (f"it answered in mode {out.get('mode')!r}: "
                                                 + "; ".join(out.get("notes") or ["no note"]))
                raise SystemExit(f"bench_embed_index: dreamdb recall --mode {mode} failed (exit {p.returncode}): {why}")
    res["cli_hybrid_ms"], res["cli_bm25_ms"] = (round(statistics.median(walls[m]), 1) for m in ("hybrid", "bm25"))

    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    f = res["full_embed"]
    print(f"vault {res['vault']} · {res['documents']} documents · {res['vectors']} vectors · {res['driver']} · model {res['model_id']}")
    print(f"vec load per connection    {res['connect_vec_ms']:.2f} ms   (baseline connect without vec {res['connect_ms']:.2f} ms)")
    print(f"full embedding             {f['chunks']} chunks, {f['seconds']} s, {f['chunks_per_s']} chunks/s"
          f"   (model alone {f['model_seconds']} s; store overhead {f['store_overhead_s']} s){' [cached]' if f.get('cached') else ''}")
    print(f"no-change refresh          {res['refresh_nochange_ms']:.2f} ms   (pending() {res['pending_ms']:.2f} ms; no-change sync {res['sync_nochange_ms']:.2f} ms)")
    print(f"dense_search p50 (k=10)    vec0 {res['dense_vec0_p50_ms']:.2f} ms   (numpy via SQL {res['dense_numpy_sql_p50_ms']:.2f} ms;"
          f" numpy in RAM {res['dense_numpy_ram_p50_ms']:.2f} ms)")
    print(f"title+description as query → own doc in top 3: {res['title_description_query_top3']}")
    print(f"recall p50 in process      hybrid {res['hybrid_recall_p50_ms']:.1f} ms   (without language centring"
          f" {res['hybrid_uncentred_p50_ms']:.1f} ms; bm25 {res['bm25_recall_p50_ms']:.2f} ms;"
          f" query embedding alone {res['query_embed_p50_ms']:.1f} ms)")
    print(f"dreamdb recall as a process hybrid {res['cli_hybrid_ms']:.0f} ms   (bm25 {res['cli_bm25_ms']:.0f} ms; wall, median;"
          f" {res['processes']})")
    return 0


if __name__ == "__main__":
    from interrupt import run

    raise SystemExit(run(main))
