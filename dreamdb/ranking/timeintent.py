"""A query's time intent: an explicit relative time expression it holds ("yesterday", "last week", "recently",
"dün", "geçen hafta", "en son"), read as a window of time that steers recency instead of as words to search.

Pure and deterministic: :func:`find_time_intent` reads the query's text alone (no clock), and
:func:`time_window` places the intent it found against the clock the caller passes (``now``); the ranking reads
the window through :func:`dreamdb.ranking.signals.window_recency`. docs/ranking.md ("Time intent") has the rules.

The expressions are a small closed list, in English and Turkish (:data:`_PATTERNS`), matched in any case, each as
whole words: a calendar day (today, yesterday, the day before yesterday, N days ago; bugün, dün, evvelsi gün,
N gün önce), the span of days before now (this/last/past week, month or year, the last N days, weeks or months;
bu/geçen hafta, ay, yıl, son bir hafta, son N gün), a unit around N units ago (2 weeks ago, 3 ay önce), and recency
with no stated span (recently, lately, latest, newest, most recent, these days; en son, en yeni, son zamanlarda,
son günlerde, son dönemde, geçenlerde, yakın zamanda, yakınlarda), which gives no window (:func:`time_window`): its
words are only not searched. The first one the query holds is its intent.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

from dreamdb.analyzer import TURKISH_LETTERS, TURKISH_TO_ASCII
from dreamdb.ranking.signals import WINDOW_UNKNOWN
from dreamdb.records import record

__all__ = ["TimeIntent", "TimeWindow", "find_time_intent", "time_window"]

_MICROSECOND_DAYS = 1e-6 / 86400.0

_UNIT_DAYS = {"day": 1.0, "week": 7.0, "month": 30.0, "year": 365.0}
"""Days in a unit of a span ("last week": the 7 days before now; "last month": the 30 days before now)."""


@record(frozen=True)
class TimeIntent:
    """A relative time expression found in a query (:func:`find_time_intent`); clock-free.

    Attributes:
        phrase: the expression as the query writes it ("yesterday's", "geçen hafta").
        kind: ``day`` (the calendar day ``amount`` days before now's: 0 today, 1 yesterday), ``span`` (the
            ``amount`` days before now), ``around`` (a span of ``width`` days centred ``amount`` days before now) or
            ``recent`` (newest first: no span named).
        amount: days, as ``kind`` reads them (0 for ``recent``).
        width: days of an ``around`` window (the unit named: "2 weeks ago" is a week around 14 days ago); else 0.
    """

    phrase: str
    kind: str
    amount: float = 0.0
    width: float = 0.0


@record(frozen=True)
class TimeWindow:
    """A time intent placed against the clock, in days since 1970-01-01 UTC (what the index stores).

    A document dated from ``start`` to ``end`` (inclusive) is inside it, at full recency; one dated ``d`` days
    outside it has recency 1/(1 + d/``scale``): half at one window length away
    (:func:`dreamdb.ranking.signals.window_recency`).

    Attributes:
        phrase: the expression as typed (:attr:`TimeIntent.phrase`).
        start, end: the window's first and last instants.
        scale: the window's length in days, the distance at which recency halves.
        unknown: the recency of a document of unknown date: the mean window recency of the dated documents of the
            vaults searched (:func:`dreamdb.ranking.rank.window_recency_sums`, set by the recall); 0.5, the value
            one window away, where no index is read.
    """

    phrase: str
    start: float
    end: float
    scale: float
    unknown: float = WINDOW_UNKNOWN

    def as_json(self) -> dict:
        """``{"phrase", "from", "to", "scale_days", "undated_recency"}`` (``from``, ``to``: ISO-8601 instants in UTC,
        to the minute), for ``--json --explain``'s ``signals.time_intent``."""
        return {"phrase": self.phrase, "from": _iso(self.start), "to": _iso(self.end), "scale_days": self.scale,
                "undated_recency": self.unknown}

    def describe(self) -> str:
        """One line for ``--explain``: ``'yesterday' (2026-08-17T00:00Z to 2026-08-17T23:59Z, scale 1 d, undated
        ×0.0423)``."""
        return (f"{self.phrase!r} ({_iso(self.start)} to {_iso(self.end)}, scale {self.scale:g} d, undated "
                f"×{self.unknown:.4g})")


def _iso(days: float) -> str:
    when = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(days=days)
    return when.strftime("%Y-%m-%dT%H:%MZ")


# -- the expressions ---------------------------------------------------------------------------------------------
_APOS = "['\u2019\u02bc\u2018\u2032\u02b9]"  # (dreamdb.analyzer.APOSTROPHES: "yesterday's", "last week’s")
_POSSESSIVE = f"(?:{_APOS}s)?"
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "bir": 1, "iki": 2, "uc": 3, "dort": 4, "bes": 5, "alti": 6, "yedi": 7, "sekiz": 8,
            "dokuz": 9, "on": 10}
"""Number words, Turkish ones spelled without their letters (:func:`_plain`: ``üç`` is read ``uc``)."""

def _plain(word: str) -> str:
    """``word`` lowercased and spelled without Turkish letters (``Üç`` → ``uc``, ``gün`` → ``gun``), as a Turkish
    time word may be typed (QA round 156-E: ``dun``, ``gecen hafta``)."""
    return word.lower().replace("i\u0307", "i").translate(TURKISH_TO_ASCII)
_EN_NUMBER = r"(?P<n>[1-9]\d{0,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_TR_NUMBER = r"(?P<n>[1-9]\d{0,2}|bir|iki|üç|dört|beş|altı|yedi|sekiz|dokuz|on)"
_EN_UNITS = {"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
             "year": "year", "years": "year"}
_EN_UNIT = r"(?P<u>days?|weeks?|months?|years?)"
# a Turkish unit with the case and derivational endings a time word takes (günde, günlerde, haftaki, haftada,
# ayda, aylık, yıllarda …); whole words only, so ``ayar`` is no ``ay``
_TR_UNIT = (r"(?P<u>gün(?:de|deki|lerde|lerdeki|lük|kü)?|hafta(?:da|daki|ki|larda|lardaki|lık)?"
            r"|ay(?:da|daki|ki|larda|lardaki|lık)?|yıl(?:da|daki|ki|larda|lardaki|lık)?)")
_TR_UNITS = {"gun": "day", "haf": "week", "ay": "month", "yil": "year"}


def _tr_unit(word: str) -> str:
    w = _plain(word)
    return _TR_UNITS["haf"] if w.startswith("haf") else _TR_UNITS["ay"] if w.startswith("ay") else \
        _TR_UNITS["gun"] if w.startswith("gun") else _TR_UNITS["yil"]


def _number(text: str) -> int:
    text = _plain(text)
    return int(text) if text.isdigit() else _NUMBERS[text]


# (pattern, reading of the match → (kind, amount, width)), tried in this order at each position of the query
_PATTERNS: list[tuple[str, object]] = [
    # calendar days
    (rf"(?:the\s+)?day\s+before\s+yesterday{_POSSESSIVE}", lambda m: ("day", 2.0, 0.0)),
    (r"(?:evvelsi|evvelki)\s+gün(?:kü)?", lambda m: ("day", 2.0, 0.0)),
    (rf"{_EN_NUMBER}\s+days?\s+ago", lambda m: ("day", float(_number(m["n"])), 0.0)),
    (rf"{_TR_NUMBER}\s+gün\s+önce(?:ki)?", lambda m: ("day", float(_number(m["n"])), 0.0)),
    (rf"yesterday{_POSSESSIVE}", lambda m: ("day", 1.0, 0.0)),
    (r"dün(?:kü|den|e)?", lambda m: ("day", 1.0, 0.0)),
    (r"dun", lambda m: ("day", 1.0, 0.0)),  # (dün typed without its letter; bare: dune is an English word)
    (rf"today{_POSSESSIVE}", lambda m: ("day", 0.0, 0.0)),
    (r"bugün(?:kü|e|den)?", lambda m: ("day", 0.0, 0.0)),
    # a unit around N units ago
    (rf"{_EN_NUMBER}\s+(?P<u>weeks?|months?|years?)\s+ago",
     lambda m: ("around", _number(m["n"]) * _UNIT_DAYS[_EN_UNITS[m["u"].lower()]], _UNIT_DAYS[_EN_UNITS[m["u"].lower()]])),
    (rf"{_TR_NUMBER}\s+(?P<u>hafta|ay|yıl)\s+önce(?:ki)?",
     lambda m: ("around", _number(m["n"]) * _UNIT_DAYS[_tr_unit(m["u"])], _UNIT_DAYS[_tr_unit(m["u"])])),
    # spans before now
    (rf"(?:last|past|previous)\s+{_EN_NUMBER}\s+{_EN_UNIT}",
     lambda m: ("span", _number(m["n"]) * _UNIT_DAYS[_EN_UNITS[m["u"].lower()]], 0.0)),
    (rf"(?:this|last|past|previous)\s+(?P<u>week|month|year){_POSSESSIVE}",
     lambda m: ("span", _UNIT_DAYS[_EN_UNITS[m["u"].lower()]], 0.0)),
    (rf"son\s+{_TR_NUMBER}\s+{_TR_UNIT}", lambda m: ("span", _number(m["n"]) * _UNIT_DAYS[_tr_unit(m["u"])], 0.0)),
    (r"(?:geçen|bu|son)\s+(?P<u>hafta(?:da|daki|ki|lık)?|ay(?:da|daki|ki|lık)?|yıl(?:da|daki|ki|lık)?)",
     lambda m: ("span", _UNIT_DAYS[_tr_unit(m["u"])], 0.0)),
    # recency, no span named
    (r"most\s+recent(?:ly)?|recently|lately|latest|newest|these\s+days", lambda m: ("recent", 0.0, 0.0)),
    (r"en\s+son(?:uncu)?|en\s+yeni|son\s+zamanlarda|son\s+günlerde|son\s+dönemde|geçenlerde|yakın\s+zamanda"
     r"|yakınlarda", lambda m: ("recent", 0.0, 0.0)),
]
_EITHER = {t: f"[{t}{t.translate(TURKISH_TO_ASCII)}]" for t in TURKISH_LETTERS}  # (ş: [şs])
_AS_WRITTEN = {r"dün(?:kü|den|e)?"}
"""Patterns whose Turkish letters must be typed (the plain spelling of ``dün``'s suffixed forms, ``dune``, is
English); every other one also matches its words spelled without their Turkish letters (:func:`_either_spelling`)."""


def _either_spelling(pattern: str) -> str:
    """``pattern`` with each Turkish letter also matching the letter typed in its place without Turkish letters
    (``geçen`` → ``ge[çc]en``: ``gecen hafta``, ``son 3 gunde``, ``2 hafta once``), as Turkish queries are often
    typed (the XQuAD track of Turkish questions typed without Turkish letters); the readers fold the match the same
    way (:func:`_plain`)."""
    return pattern if pattern in _AS_WRITTEN else "".join(_EITHER.get(c, c) for c in pattern)


_COMPILED = [(re.compile(rf"(?<!\w)(?:{_either_spelling(p)})(?!\w)", re.IGNORECASE), read) for p, read in _PATTERNS]


def find_time_intent(text: str) -> tuple[TimeIntent | None, str]:
    """The query's time intent and its text without it.

    Returns:
        ``(intent, rest)``: the first expression of :data:`_PATTERNS` in ``text`` (the one starting first; at one
        position, the first pattern of the list: "the day before yesterday" before "yesterday") and ``text`` with
        it replaced by a space; ``(None, text)`` when it holds none.
    """
    if not isinstance(text, str) or not text:
        return None, text
    best = None
    for pattern, read in _COMPILED:
        m = pattern.search(text)
        if m is not None and (best is None or m.start() < best[0].start()):
            best = (m, read)
    if best is None:
        return None, text
    m, read = best
    kind, amount, width = read(m)
    return TimeIntent(m.group(), kind, float(amount), float(width)), text[:m.start()] + " " + text[m.end():]


def time_window(intent: TimeIntent, now: datetime, *, machine_clock: bool = False) -> TimeWindow | None:
    """``intent`` placed against the clock ``now`` (aware; naive is UTC); ``None`` for ``recent``, which names no
    period.

    * ``day``: the calendar day ``amount`` days before ``now``'s, as ``--since``/``--until`` read ``yesterday``
      (:mod:`dreamdb.timeparse`): the date's midnight UTC to the next (a document dated with a date alone) and
      that day's midnights in ``now``'s time zone (one dated with a time of day; the machine's zone with
      ``machine_clock``), whichever starts first to whichever ends last; scale 1 day.
    * ``span``: the ``amount`` days before ``now``; scale ``amount``.
    * ``around``: ``width`` days centred ``amount`` days before ``now``; scale ``width``.
    * ``recent`` ("latest", "recently", "en son"): no window. Such a word asks for the newest matches first, which
      the plain recency (SPEC §2) already orders by; a window of its own (1/(1 + age/120 days), recency's
      half-life with its floor dropped) was measured and left (docs/ranking.md, "Variants measured and left"): on
      the gold set it put the newest note that matched above the decision the question meant. Its words are not
      searched all the same.
    """
    from dreamdb.timeparse import _local_midnight, as_utc

    now_utc = as_utc(now)
    now_days = now_utc.timestamp() / 86400.0
    if intent.kind == "recent":  # (names no period: the plain recency orders by age, as for any query)
        return None
    if intent.kind == "span":
        return TimeWindow(intent.phrase, now_days - intent.amount, now_days, intent.amount)
    if intent.kind == "around":
        middle = now_days - intent.amount
        return TimeWindow(intent.phrase, middle - intent.width / 2, middle + intent.width / 2, intent.width)
    local = now if now.tzinfo is not None and now.tzinfo.utcoffset(now) is not None else now_utc
    try:
        day = date(local.year, local.month, local.day) - timedelta(days=int(intent.amount))
        nxt = day + timedelta(days=1)
        dated = datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp() / 86400.0
        if machine_clock:
            first, last = _local_midnight(day), _local_midnight(nxt)
        else:
            first = datetime(day.year, day.month, day.day, tzinfo=local.tzinfo)
            last = datetime(nxt.year, nxt.month, nxt.day, tzinfo=local.tzinfo)
        first_days = first.astimezone(timezone.utc).timestamp() / 86400.0
        last_days = last.astimezone(timezone.utc).timestamp() / 86400.0
    except (OverflowError, ValueError, OSError):  # (the first days of the year 1: the span before now instead)
        return TimeWindow(intent.phrase, now_days - intent.amount - 1.0, now_days, 1.0)
    start = min(dated, first_days)
    end = max(dated + 1.0, last_days) - _MICROSECOND_DAYS  # (the day's last instant, as --until's)
    return TimeWindow(intent.phrase, start, end, 1.0)
