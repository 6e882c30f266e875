"""Snippets: the body line with the most query-term hits, ±1 line of context (SPEC §2)."""

from __future__ import annotations

from dreamdb.analyzer import analyze, is_turkish, raw_tokens

MAX_LINE_CHARS = 240
"""Each snippet line is cut to this many characters (a 1 MB single line stays readable)."""


def _clip(line: str, terms: set[str], turkish: bool) -> str:
    line = line.strip()
    if len(line) <= MAX_LINE_CHARS:
        return line
    # centre the window on the first matching word
    pos = 0
    for word_start in range(0, len(line), 40):
        chunk = line[word_start:word_start + 80]
        if terms.intersection(analyze(chunk, turkish=turkish)):
            pos = max(0, word_start - 60)
            break
    clipped = line[pos:pos + MAX_LINE_CHARS]
    return ("…" if pos else "") + clipped + ("…" if pos + MAX_LINE_CHARS < len(line) else "")


def best_snippet(body: str, query_terms: list[str], *, fallback: str = "") -> str:
    """The most query-dense non-empty body line with one non-empty line before and after.

    Args:
        body: document body.
        query_terms: analyzed query terms.
        fallback: returned when the body is empty (e.g. the description).

    Returns:
        Up to three lines joined by ``\\n``; ties go to the earliest line.
    """
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if not lines:
        return fallback.strip()[:MAX_LINE_CHARS]
    terms = set(query_terms)
    turkish = is_turkish(raw_tokens(body[:20000]))
    best_i, best_hits = 0, 0
    for i, line in enumerate(lines):
        hits = sum(1 for t in analyze(line[:20000], turkish=turkish) if t in terms)
        if hits > best_hits:
            best_i, best_hits = i, hits
    lo, hi = max(0, best_i - 1), min(len(lines), best_i + 2)
    return "\n".join(_clip(ln, terms, turkish) for ln in lines[lo:hi])
