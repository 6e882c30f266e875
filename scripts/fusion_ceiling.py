#!/usr/bin/env python3
"""How far fusion alone can take hybrid recall on a collection: the BM25 and dense channels of every
query, fused by the adaptive rule and by its alternatives, scored with the same metric.

Each query is recalled once in hybrid mode through the index the evaluation suite built (so its
vectors must exist: run ``python -m eval --set scifact --modes hybrid`` first; an index any chunk of
which has no vector is refused, exit 1, naming the command that embeds them); the inputs the fusion
received (BM25's candidates and rankScores, the dense candidates and cosines, the top raw score, the
coverage) are recorded, then fused again offline by each variant. No constant is tuned here: the
variants are the SPEC's rule, the rule with one of its two branches only, plain RRF, and the
relative branch's λ at other values, to see whether any fusion of these two channels reaches a
target, or whether a channel is the limit.

Usage::

    python scripts/fusion_ceiling.py --set scifact --data ../shared --cache eval/.cache

Prints nDCG@10 per variant and how many queries took each branch of the SPEC's rule.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import dreamdb  # noqa: E402
from dreamdb import fusion  # noqa: E402
from dreamdb import hybrid as H  # noqa: E402
from dreamdb.evaluation import beir  # noqa: E402


#: The notes of a hybrid recall whose dense channel ranked only some documents (the others' chunks have no vector).
PARTIAL_NOTES = ("dense results are partial", "dense results cover only")


def _record(ix, queries, now) -> list[tuple[str, dict | None]]:
    """``[(query id, fusion inputs or None)]``: what :func:`dreamdb.fusion.adaptive_fusion` received.

    Raises:
        SystemExit: (with the reason) a recall fell back from hybrid, or its dense channel was partial (a note of
            :data:`PARTIAL_NOTES`: chunks without a vector)."""
    seen: list[dict] = []
    original = H.fusion.adaptive_fusion

    def spy(bm_keys, bm_scores, top_raw, dense_keys, cos, term_coverage=1.0, cross_language=frozenset()):
        seen.append({"bm_keys": bm_keys, "bm_scores": bm_scores, "top_raw": top_raw, "dense_keys": dense_keys,
                     "cos": cos, "coverage": term_coverage, "cross": set(cross_language)})
        return original(bm_keys, bm_scores, top_raw, dense_keys, cos, term_coverage=term_coverage,
                        cross_language=cross_language)

    H.fusion.adaptive_fusion = spy
    try:
        out = []
        for qid, text in queries:
            seen.clear()
            hits = ix.recall(text, top=10, mode="hybrid", now=now, exclude_types="bookmark")
            notes = ix.take_notes()
            if hits and hits[0].mode != "hybrid":
                raise SystemExit(f"hybrid fell back to {hits[0].mode}: {'; '.join(notes)}")
            partial = [n for n in notes if n.startswith(PARTIAL_NOTES)]
            if partial:  # (texts left unembedded since the check in main: the dense channel covers only some
                # documents, and every variant's figure would be of those; QA round 150-G F1)
                raise SystemExit(f"fusion_ceiling: query {qid}: {partial[0]}")
            out.append((qid, seen[0] if seen else None))
        return out
    finally:
        H.fusion.adaptive_fusion = original


def _variants():
    def spec(r):
        return fusion.adaptive_fusion(r["bm_keys"], r["bm_scores"], r["top_raw"], r["dense_keys"], r["cos"],
                                      term_coverage=r["coverage"], cross_language=r["cross"])[0]

    def rrf_branch_only(r):  # the SPEC's rule with BM25 never "decisive"
        return fusion.adaptive_fusion(r["bm_keys"], r["bm_scores"], 0.0, r["dense_keys"], r["cos"],
                                      term_coverage=r["coverage"], cross_language=r["cross"])[0]

    def relative_branch_only(r):
        return fusion.relative_fusion(r["bm_scores"], r["cos"])

    def plain_rrf(r):
        return fusion.weighted_rrf([r["bm_keys"], r["dense_keys"]], [1.0, 1.0])

    out = [("SPEC rule (as recall ranks)", spec), ("weighted RRF + pin guard only", rrf_branch_only),
           ("relative fusion only (λ 0.1)", relative_branch_only), ("plain RRF", plain_rrf),
           ("BM25 alone", lambda r: [(k, 0.0) for k in r["bm_keys"]]),
           ("dense alone", lambda r: [(k, 0.0) for k in r["dense_keys"]])]
    for lam in (0.2, 0.3, 0.5):
        def decisive_with(r, lam=lam):
            if r["top_raw"] * r["coverage"] >= fusion.DECISIVE_BM25:
                return fusion.relative_fusion(r["bm_scores"], r["cos"], lam)
            return spec(r)
        out.append((f"SPEC rule, relative λ {lam}", decisive_with))
    return out


def _dense_incomplete(ix, folder: Path, rebuild: str) -> str | None:
    """Why the dense channel of the evaluation index ``ix`` (in ``folder``; ``rebuild``: the eval command's hint) cannot
    be measured, or ``None``: no embedding model, or chunks without a vector (counted as the evaluation suite counts
    them for ``--max-embed``: :func:`dreamdb.evaluation.suite.chunks_waiting`, which chunks the documents not chunked
    yet). A recall embeds at most a few dozen waiting chunks and ranks without the rest (its note "dense results are
    partial"): every variant was scored on a dense channel that covered 40 of 110 documents, "dense alone" with it,
    exit 0 (QA round 150-G F1)."""
    from dreamdb.evaluation import suite

    emb = ix.embedder()
    if emb is None:
        return f"the dense channel cannot be measured: {ix.model_problem or 'no embedding model'}"
    waiting = suite.chunks_waiting(ix, emb.model_id)
    if waiting:
        return (f"the dense channel of the evaluation index at {folder} is incomplete: {waiting} chunk"
                f"{'s' if waiting != 1 else ''} would need embedding first; embed "
                f"{'them' if waiting != 1 else 'it'} with `{suite.embed_refresh_command(ix.index_path, ix.vault)}`"
                f" or {rebuild}")
    return None


def _manifest(folder: Path) -> tuple[dict, str | None]:
    """``(slug_to_id, None)`` of the evaluation's ``manifest.json`` in ``folder``, or ``({}, why)`` when it cannot be
    read or is none the evaluation wrote (not JSON, not an object with a ``slug_to_id`` object)."""
    path = folder / beir.MANIFEST
    try:
        man = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return {}, f"{path} cannot be read: {exc.strerror or exc}"
    except ValueError:  # (not JSON, or not UTF-8)
        return {}, f"{path} is not JSON"
    if not isinstance(man, dict) or not isinstance(man.get("slug_to_id"), dict):
        return {}, f"{path} holds no slug_to_id map"
    return man["slug_to_id"], None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=("scifact",), default="scifact", help="collection (its test split)")
    ap.add_argument("--data", default=None, help="the shared data folder (eval-data/; default: $DREAMDB_EVAL_DATA, "
                                                 "else ../shared beside the repository, as python -m eval)")
    ap.add_argument("--cache", default=str(ROOT / "eval" / ".cache"), help="the evaluation suite's cache")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "scripts"))
    from settings import data_folder

    data = data_folder(args.data, "fusion_ceiling")  # (one named that is not there: exit 7, QA round 143-A F3)
    # (QA round 103-A F2: missing data or a partial cache were tracebacks; data absent is a skip, as the other scripts')
    if not (data / "eval-data" / "scifact" / "corpus.jsonl").is_file():
        print(f"skipped: no SciFact at {data / 'eval-data' / 'scifact'} (pass --data or set DREAMDB_EVAL_DATA)")
        return 0
    folder = Path(args.cache) / "scifact" / "corpus"
    if not (folder / "index.db").is_file() or not (folder / "manifest.json").is_file():
        print(f"fusion_ceiling: no evaluation index at {folder}: run python -m eval --set scifact --modes hybrid "
              f"--cache {args.cache} first", file=sys.stderr)
        return 1
    from dreamdb.errors import DreamdbError

    try:
        coll = beir.load_collection(data / "eval-data" / "scifact")
    except DreamdbError as exc:
        print(f"fusion_ceiling: {exc.message}", file=sys.stderr)
        return 1
    rebuild = f"rerun python -m eval --set scifact --modes hybrid --cache {args.cache}"
    slug_to_id, why = _manifest(folder)
    if why is None and not (folder / beir.VAULT_DIR).is_dir():
        why = f"no vault {folder / beir.VAULT_DIR} beside it"
    if why is not None:  # (QA round 147-G F3: a partial or foreign cache was a JSONDecodeError, KeyError or
        # VaultNotFound traceback)
        print(f"fusion_ceiling: the evaluation index at {folder} is damaged ({why}): {rebuild}", file=sys.stderr)
        return 1
    try:
        ix = dreamdb.open(folder / beir.VAULT_DIR, index_path=folder / "index.db", auto_sync=False)
        rows = dict(ix.conn.execute("SELECT id, doc_id FROM documents"))
        if not rows or not slug_to_id:  # (an empty index file: every query scored 0, exit 0)
            print(f"fusion_ceiling: the evaluation index at {folder} is damaged (it holds no document): {rebuild}",
                  file=sys.stderr)
            return 1
        why = _dense_incomplete(ix, folder, rebuild)
        if why is not None:
            print(f"fusion_ceiling: {why}", file=sys.stderr)
            return 1
        recorded = _record(ix, coll.judged_queries(), None)
    except DreamdbError as exc:
        print(f"fusion_ceiling: the evaluation index at {folder} cannot be read ({exc.message}): {rebuild}",
              file=sys.stderr)
        return 1
    results = {}
    branch = {"relative": 0, "rrf": 0}
    for qid, r in recorded:
        if r is not None:
            branch["relative" if r["top_raw"] * r["coverage"] >= fusion.DECISIVE_BM25 else "rrf"] += 1
    for name, fuse in _variants():
        total = 0.0
        for qid, r in recorded:
            ranked = [slug_to_id.get(rows[k].split("/", 1)[1]) for k, _ in fuse(r)[:10]] if r is not None else []
            total += beir.score_beir(ranked, coll.qrels.get(qid, {}), 10)["ndcg@10"]
        results[name] = total / len(recorded)
    if args.json:
        print(json.dumps({"set": args.set, "queries": len(recorded), "branches": branch, "ndcg@10": results}, indent=2))
        return 0
    print(f"{args.set} test, {len(recorded)} queries; the SPEC rule took relative fusion for {branch['relative']}"
          f" and weighted RRF for {branch['rrf']}")
    for name, value in results.items():
        print(f"  {name:34s} nDCG@10 {value:.4f}")
    return 0


if __name__ == "__main__":
    from interrupt import run

    raise SystemExit(run(main))
