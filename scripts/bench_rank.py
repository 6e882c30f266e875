#!/usr/bin/env python
"""Benchmark the SQL engine's ranking (what ``dreamdb recall`` and the prompt hook run) on long prompts and short
queries, the ranking statement's fast form beside its plain form (before QA round 153-C F1) in the same run.

On an indexed vault (a generated one: ``scripts/gen_vault.py``, or one written from the real vault's sentences; the
real vault's copy), for prose queries cut from the vault's own notes (``--long``, 4,000 and 1,000 characters by
default: the bodies of its ``knowledge`` notes in doc_id order, run together) and short ones (``--short``), each
planned once as ``dreamdb recall`` plans it (synonyms, the vocabulary; no lexicon), then ranked (top 5, and the 50
candidates a fusion asks for) by :func:`dreamdb.ranking.rank.rank` with the fast statement and with the plain one,
alternating, ``--runs`` times each: the median of each, and whether the two returned the same hits with the same
floats (every signal equal; a difference ends the benchmark with exit 1). Usage::

    .venv/bin/python scripts/bench_rank.py VAULT [--runs 5] [--long 4000,1000] [--pieces 2] [--short "sleep debt" ...]
                                         [--json]

The vault's index must exist (``dreamdb sync --vault VAULT``); nothing is written.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dreamdb  # noqa: E402
from dreamdb.ranking.rank import SqlVocabulary, plan_query, rank  # noqa: E402
from dreamdb.ranking.synonyms import load_synonyms  # noqa: E402

SHORT = ("sleep debt", "how does the hook decide to inject context", "sqlite wal checkpoint", "release checklist")
"""Short queries timed by default."""

NOW = 20683.0
"""The clock of every ranking (2026-08-18, days since epoch): the same recency in each run."""


def long_queries(conn, sizes: list[int], pieces: int) -> list[str]:
    """``pieces`` prose queries of each size in ``sizes`` (characters), cut from the vault's ``knowledge`` notes'
    bodies in doc_id order, run together (white space collapsed), a few thousand characters apart."""
    text = " ".join(" ".join(b for (b,) in conn.execute(
        "SELECT body FROM documents WHERE type = 'knowledge' ORDER BY doc_id")).split())
    out = []
    for size in sizes:
        for i in range(pieces):
            piece = text[(3 * i + 1) * size:(3 * i + 2) * size]
            if len(piece) == size:
                out.append(piece)
    return out


def timed(conn, plan, top: int, plain: bool):
    """``(seconds, rows)`` of one ranking: the hits as comparable tuples (every signal and float)."""
    start = time.perf_counter()
    hits = rank(conn, plan, top=top, now_days=NOW, plain=plain)
    elapsed = time.perf_counter() - start
    return elapsed, [(h.doc_id, h.score, h.bm25f, h.structured, h.rank_score, tuple(sorted(h.signals().items(), key=str)))
                     for h in hits]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit 1 when the two statements differ, 2 on a bad argument."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vault", type=Path, help="an indexed vault (its folder or its _dream_context)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each statement per query (default 5)")
    ap.add_argument("--long", default="4000,1000", help="sizes of the prose queries, in characters (default 4000,1000)")
    ap.add_argument("--pieces", type=int, default=2, help="prose queries of each size (default 2)")
    ap.add_argument("--short", nargs="*", default=list(SHORT), help="short queries (default: a few of the real vault's)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    try:
        sizes = [int(s) for s in args.long.split(",") if s.strip()]
    except ValueError:
        ap.error(f"--long takes sizes in characters separated by commas, such as 4000,1000, not {args.long!r}")
    if args.runs < 1 or args.pieces < 0 or any(s < 1 for s in sizes):
        ap.error("--runs must be at least 1, --pieces at least 0 and each --long size at least 1")
    index = dreamdb.open(args.vault, engine="sql", auto_sync=False)
    try:
        conn = index.conn
        n_docs = conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        synonyms, vocabulary = load_synonyms(index.vault), SqlVocabulary(conn)
        queries = [("prose", q) for q in long_queries(conn, sizes, args.pieces)] + [("short", q) for q in args.short]
        results = []
        for kind, text in queries:
            plan = plan_query(text, synonyms, vocabulary=vocabulary)
            if not plan.terms:
                continue
            for top in (5, 50):
                times = {True: [], False: []}
                rows = {}
                for run in range(args.runs):
                    for plain in ((True, False) if run % 2 else (False, True)):
                        elapsed, rows[plain] = timed(conn, plan, top, plain)
                        times[plain].append(elapsed)
                same = rows[True] == rows[False]
                results.append({"kind": kind, "characters": len(text), "terms": len(plan.terms), "top": top,
                                "fast_ms": round(statistics.median(times[False]) * 1000, 1),
                                "plain_ms": round(statistics.median(times[True]) * 1000, 1),
                                "hits": len(rows[False]), "same": same,
                                "query": text if kind == "short" else text[:40] + "…"})
    finally:
        index.close()
    if args.json:
        print(json.dumps({"vault": str(args.vault), "documents": n_docs, "runs": args.runs, "results": results}, indent=2))
    else:
        print(f"{args.vault}: {n_docs} documents, median of {args.runs} runs each")
        print(f"{'kind':6} {'chars':>6} {'terms':>5} {'top':>3} {'fast ms':>9} {'plain ms':>9} {'speed-up':>8} same  query")
        for r in results:
            print(f"{r['kind']:6} {r['characters']:6} {r['terms']:5} {r['top']:3} {r['fast_ms']:9.1f} {r['plain_ms']:9.1f} "
                  f"{r['plain_ms'] / max(r['fast_ms'], 0.001):7.2f}x {'yes' if r['same'] else 'NO':4}  {r['query']}")
    if not all(r["same"] for r in results):
        print("bench_rank: the fast and plain statements returned different hits or floats", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from interrupt import run

    sys.exit(run(main))
