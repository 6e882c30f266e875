"""The rankScore signals of SPEC §2 as pure functions (no clock, no I/O).

rankScore = (base + identity) · recency · status · capture · changelog · confidence, where
base = raw + 0.5·max(0, BM25F − raw) and identity = 1.5·coverage²·max(raw, 1), raw being the
query's raw BM25 with each translated word's class in place of the word
(:func:`dreamdb.ranking.rank.class_members`; the reported ``score`` keeps the word alone).
Every multiplier is ≤ 1, so ``base + identity`` bounds rankScore from above:
:mod:`dreamdb.ranking.rank` uses that bound to stop early, exactly.
"""

from __future__ import annotations

from math import frexp, ldexp

BM25F_MIX = 0.5
"""Weight of BM25F's excess over raw BM25 (SPEC §2: raw + 0.5·max(0, BM25F − raw))."""

IDENTITY_WEIGHT = 1.5
"""Exact-identity boost 1.5 · coverage² · max(raw, 1) (SPEC §2)."""

RECENCY_FLOOR = 0.85
RECENCY_HALF_LIFE_DAYS = 120.0
RECENCY_UNKNOWN = 0.925
"""Recency 0.85 + 0.15 · 0.5^(age_days/120); unknown date 0.925 (SPEC §2)."""

COMPLETED_FACTOR = 0.85
CAPTURE_FACTOR = 0.4
CHANGELOG_FACTOR = 0.85
"""Status ``completed`` ×0.85, captures ×0.4, changelog entries ×0.85 (SPEC §2)."""

CONFIDENCE_FLOOR = 0.8
"""dreamdb's own choice: frontmatter ``confidence`` c ∈ [0, 1] multiplies by 0.8 + 0.2·c (absent: 1)."""

SYNONYM_WEIGHT = 0.5
"""Query-time synonyms count at half weight, in BM25F only (SPEC §2)."""


def base_score(raw: float, bm25f: float) -> float:
    """raw + 0.5·max(0, BM25F − raw)."""
    return raw + BM25F_MIX * max(0.0, bm25f - raw)


def identity_boost(raw: float, coverage: float) -> float:
    """1.5 · coverage² · max(raw, 1); coverage = query terms found in slug/title ÷ query terms."""
    if coverage <= 0:
        return 0.0
    return IDENTITY_WEIGHT * coverage * coverage * max(raw, 1.0)


def recency_factor(age_days: float | None) -> float:
    """0.85 + 0.15·0.5^(age/120); ``None`` (unknown date) → 0.925; future dates count as age 0."""
    if age_days is None:
        return RECENCY_UNKNOWN
    return RECENCY_FLOOR + (1.0 - RECENCY_FLOOR) * 0.5 ** (max(0.0, age_days) / RECENCY_HALF_LIFE_DAYS)


WINDOW_UNKNOWN = 0.5
"""Recency of a document of unknown date under a query's time intent where no index tells more (a
:class:`~dreamdb.ranking.timeintent.TimeWindow` built alone): the value one window length away. A recall gives an
undated document the mean window recency of the vaults' dated documents instead (``TimeWindow.unknown``,
:func:`dreamdb.ranking.rank.window_recency_sums`)."""


def window_recency(date_days: float | None, window, timed: bool = True) -> float:
    """Recency under a query's time intent (:class:`dreamdb.ranking.timeintent.TimeWindow`), in place of
    :func:`recency_factor`: 1 for a document dated inside the window (``start`` to ``end``), 1/(1 + d/``scale``) for
    one dated d days outside it (half at one window length away: "yesterday" halves a day off, "last week" a week
    off); ``window.unknown`` for an unknown date (``None`` or NaN): the recency a date drawn from the vault's would
    have on average (:func:`dreamdb.ranking.rank.window_recency_sums`). In (0, 1]: rankScore's multipliers stay ≤ 1.
    A hyperbola, not 0.5^(d/scale): far from the window the content still orders documents (0.5^(d/scale) is 10⁻⁶
    three weeks before "yesterday", and 0 a few years before, where every document would tie).

    ``timed``: the document is dated with a time of day (its ``date`` longer than ``YYYY-MM-DD``). One dated with a
    date alone is read by its date where a calendar day's window gives one (``day_start`` to ``day_end``), as
    ``--since yesterday --until yesterday`` reads it: the next day's note is a day outside "yesterday", as the day
    before's is (QA round 157-A F1: its midnight UTC was a microsecond after the window, at full recency)."""
    if date_days is None or date_days != date_days:
        return window.unknown
    start, end = (window.start, window.end) if timed or window.day_start is None else (window.day_start,
                                                                                       window.day_end)
    if date_days < start:
        return 1.0 / (1.0 + (start - date_days) / window.scale)
    if date_days > end:
        return 1.0 / (1.0 + (date_days - end) / window.scale)
    return 1.0


def status_factor(status: str | None) -> float:
    """×0.85 for ``completed`` (also ``done``), else 1."""
    return COMPLETED_FACTOR if (status or "").lower() in ("completed", "done") else 1.0


def type_factor(doc_type: str, is_capture: bool) -> float:
    """×0.85 for changelog entries, ×0.4 for captures (bookmarks, digests), else 1."""
    f = CHANGELOG_FACTOR if doc_type == "changelog" else 1.0
    return f * (CAPTURE_FACTOR if is_capture else 1.0)


def confidence_factor(confidence: float | None) -> float:
    """0.8 + 0.2·c for a confidence c in [0, 1]; 1 when absent."""
    if confidence is None:
        return 1.0
    return CONFIDENCE_FLOOR + (1.0 - CONFIDENCE_FLOOR) * min(1.0, max(0.0, confidence))


TIE_BITS = 40
"""Significant bits of rankScore that order hits (:func:`tie_score`); the last 13 of a double's 53 are
where two evaluation orders of the same formula differ (the SQL and memory engines group the BM25
factors and sum the terms differently)."""

TIE_MARGIN = 2.0 ** (2 - TIE_BITS)
"""A relative margin larger than :func:`tie_score`'s rounding: a bound this far below the k-th best
rankScore cannot reach a tie with it (the early stops of both engines keep it)."""


def has_time_of_day(date: str | None) -> bool:
    """Whether a document's stored ``date`` carries a time of day (longer than ``YYYY-MM-DD``): :func:`window_recency`'s
    ``timed``, as the memory engine reads it in SQL (``length(date) > 10``)."""
    return date is not None and len(date) > 10


def tie_order(date_days: float | None, doc_id: str) -> tuple:
    """The sort key that orders documents of one score (after :func:`tie_score`) as BM25's hits are: newest first,
    undated (``None`` or NaN) last, then the smaller ``doc_id``; never the row id, which the order files were
    indexed in decides."""
    return (-date_days if date_days is not None and date_days == date_days else float("inf")), doc_id


def tie_score(rank_score: float) -> float:
    """rankScore rounded to :data:`TIE_BITS` significant bits: what hits are sorted by before the tie-breaks
    (newest, then doc_id), so scores equal but for their last bits tie in every engine alike.

    Monotone (never reorders scores that differ by more than the rounding); 0.0 stays 0.0.
    """
    m, e = frexp(rank_score)
    return ldexp(round(ldexp(m, TIE_BITS)), e - TIE_BITS)
