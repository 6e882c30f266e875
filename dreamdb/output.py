"""Renderers for the CLI: JSON, plain (tab-separated) and human-readable text.

No click here: functions return strings, the CLI prints them.
"""

from __future__ import annotations

import json


def to_json(obj) -> str:
    """Pretty JSON (UTF-8 kept, keys in insertion order)."""
    return json.dumps(obj, ensure_ascii=False, indent=2, default=str)


def table(rows: list[dict] | list[list], headers: list[str] | None = None) -> str:
    """A plain-text table (``tabulate``'s ``simple`` format)."""
    from tabulate import tabulate

    if rows and isinstance(rows[0], dict):
        headers = headers or list(rows[0].keys())
        rows = [[r.get(h) for h in headers] for r in rows]
    return tabulate(rows, headers=headers or [], tablefmt="simple", disable_numparse=True, missingval="")


def _fmt(x: float) -> str:
    return f"{x:.3f}"


def hits_text(hits, *, explain: bool = False) -> str:
    """Human-readable recall results: rank, scores, id, title, path, snippet (and signals with ``explain``)."""
    lines: list[str] = []
    for i, h in enumerate(hits, 1):
        meta = [f"rank {_fmt(h.rank_score)}", f"bm25 {_fmt(h.score)}"]
        if h.date:
            meta.append(str(h.date)[:10])
        if h.status:
            meta.append(h.status)
        lines.append(f"{i}. {h.doc_id}  ({' · '.join(meta)})")
        lines.append(f"   {h.title}")
        if h.superseded_by:
            lines.append(f"   ⚠ superseded by {h.superseded_by}")
        lines.append(f"   {h.path}")
        for sl in (h.snippet or "").splitlines():
            lines.append(f"   │ {sl}")
        if explain and h.signals:
            s = h.signals
            lines.append(
                "   signals: "
                f"bm25 {s['bm25']:.4f} · bm25f {s['bm25f']:.4f} · base {s['base']:.4f} · coverage {s['coverage']:.2f}"
                f" · identity +{s['identity_boost']:.4f} · recency ×{s['recency']:.4f} · status ×{s['status_factor']}"
                f" · type ×{s['type_factor']} · confidence ×{s['confidence_factor']:.3f}"
                + (f" · dense {s['dense']:.4f}" if s.get("dense") is not None else "")
                + (f" · fusion {s['fusion']}" if s.get("fusion") else "")
                + f" → rankScore {s['rank_score']:.4f}"
            )
            for t in h.terms or []:
                tf = t["tf"]
                lines.append(
                    f"     {t['term']:<18} {t['kind']:<7} df {t['df']:<5} idf {t['idf']:.3f}  tf title {tf['title']} desc {tf['description']}"
                    f" tags {tf['tags']} body {tf['body']} slug {tf['slug']}  bm25 {t['bm25']:.4f} bm25f {t['bm25f']:.4f}"
                )
        lines.append("")
    return "\n".join(lines).rstrip() + ("\n" if lines else "")


def hits_plain(hits) -> str:
    """One tab-separated line per hit: rankScore, score, doc_id, title, path."""
    return "".join(f"{h.rank_score:.4f}\t{h.score:.4f}\t{h.doc_id}\t{h.title}\t{h.path}\n" for h in hits)
