"""A query's time intent: an explicit relative time expression it holds ("yesterday", "last week", "recently",
"dün", "geçen hafta", "en son"), read as a window of time that steers recency instead of as words to search.

Pure and deterministic: :func:`find_time_intent` reads the query's text alone (no clock), and
:func:`time_window` places the intent it found against the clock the caller passes (``now``); the ranking reads
the window through :func:`dreamdb.ranking.signals.window_recency`. docs/ranking.md ("Time intent") has the rules.

The expressions are a small closed list, in English and Turkish (:data:`_PATTERNS`), matched in any case, each as
whole words, not joined to a path's or code's characters (:data:`_AFTER`): a calendar day (today, yesterday, the day before yesterday, N days ago; bugün, dün, evvelsi gün,
N gün önce), the span of days before now (this/last/past week, month or year, the last N days, weeks or months;
bu/geçen hafta, ay, yıl, son bir hafta, son N gün), a unit around N units ago (2 weeks ago, 3 ay önce), and recency
with no stated span (recently, lately, latest, newest, most recent, these days; en son, en yeni, son zamanlarda,
son günlerde, son haftalarda, son aylarda, son dönemde, geçenlerde, yakın zamanda, yakınlarda), which gives no window (:func:`time_window`): its
words are only not searched. The first one the query holds is its intent; none of them is searched.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime, timezone

from dreamdb.analyzer import TURKISH_LETTERS, TURKISH_TO_ASCII
from dreamdb.ranking.signals import WINDOW_UNKNOWN
from dreamdb.records import record

__all__ = ["TimeIntent", "TimeWindow", "find_time_intent", "time_window"]

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
        also: the query's later time expressions, as written: not searched either, and no part of the window
            ("deploy yesterday or last week": ``("last week",)``).
    """

    phrase: str
    kind: str
    amount: float = 0.0
    width: float = 0.0
    also: tuple = ()


@record(frozen=True)
class TimeWindow:
    """A time intent placed against the clock, in days since 1970-01-01 UTC (what the index stores).

    A document dated from ``start`` to ``end`` (inclusive) is inside it, at full recency; one dated ``d`` days
    outside it has recency 1/(1 + d/``scale``): half at one window length away
    (:func:`dreamdb.ranking.signals.window_recency`). A calendar day's window ("yesterday", "3 days ago") reads a
    document dated with a date alone by its date, as ``--since``/``--until`` do: inside when its date is the day
    (``day_start`` to ``day_end``, that date's midnight UTC), else as many days outside as its date is from the
    day's (the next day's note one day after it, as the day before's is one day before it).

    Attributes:
        phrase: the expression as typed (:attr:`TimeIntent.phrase`).
        start, end: the window's first and last instants (a calendar day's: its midnights in the clock's time
            zone, ``end`` the largest float below the next one; a span's: ``end`` is now).
        scale: the window's length in days, the distance at which recency halves.
        day_start, day_end: a calendar day's window for a document dated with a date alone: the midnights UTC of
            its first and last date (one day: the same); ``None`` for a span, whose ``start`` and ``end`` read such
            a document at its midnight UTC, as ``--since 7d`` does.
        unknown: the recency of a document of unknown date: the mean window recency of the dated documents of the
            vaults searched (:func:`dreamdb.ranking.rank.window_recency_sums`, set by the recall); 0.5, the value
            one window away, where no index is read.
        clock: the recall's clock as given (``--now``: ISO-8601 with its offset), ``None`` for the machine's: the
            ``--now`` of the ``list`` command a note names for the same window.
    """

    phrase: str
    start: float
    end: float
    scale: float
    day_start: float | None = None
    day_end: float | None = None
    unknown: float = WINDOW_UNKNOWN
    clock: str | None = None

    def as_json(self) -> dict:
        """``{"phrase", "from", "to", "day", "scale_days", "undated_recency"}`` (``from``, ``to``: ISO-8601 instants
        in UTC, to the minute; ``day``: a calendar day's date, ``YYYY-MM-DD``, else ``None``; ``undated_recency``:
        :attr:`unknown`), for ``--json --explain``'s ``signals.time_intent``."""
        return {"phrase": self.phrase, "from": _iso(self.start), "to": _iso(self.end),
                "day": None if self.day_start is None else _iso(self.day_start)[:10], "scale_days": self.scale,
                "undated_recency": self.unknown}

    def describe(self) -> str:
        """One line for ``--explain``: ``'yesterday' (2026-08-17T00:00Z to 2026-08-17T23:59Z, scale 1 d, undated
        ×0.0423)``; a calendar day of a clock whose midnights are not UTC's names the date too: ``'yesterday'
        (2026-08-17, a time of day 2026-08-16T21:00Z to 2026-08-17T20:59Z, scale 1 d, undated ×0.0423)``."""
        span = f"{_iso(self.start)} to {_iso(self.end)}"
        if self.day_start is not None and _iso(self.day_start) != _iso(self.start):
            span = f"{_iso(self.day_start)[:10]}, a time of day {span}"
        return f"{self.phrase!r} ({span}, scale {self.scale:g} d, undated ×{self.unknown:.4g})"


_EPOCH = date(1970, 1, 1).toordinal()
_FIRST_DAY, _END_DAY = float(date.min.toordinal() - _EPOCH), float(date.max.toordinal() + 1 - _EPOCH)
"""0001-01-01T00:00Z and 10000-01-01T00:00Z in days since 1970: the dates a note can carry, and ``--now`` take."""


def _iso(days: float) -> str:
    """The instant ``days`` to the minute it is in (floored: a day's last instant, just below the next midnight, is
    its 23:59, where timedelta's rounding to the microsecond gave the next day's 00:00), clamped to the years
    1–9999 (a window reaching before the year 1, "yesterday" of 0001-01-01 or "the last 999 years" of 0500, starts
    at 0001-01-01T00:00Z; one past 9999 ends at 9999-12-31T23:59Z; QA round 157-A F4: OverflowError), the year
    written with four digits (``0001-01-01T00:00Z``)."""
    if not days >= _FIRST_DAY:  # (NaN too)
        days = _FIRST_DAY
    elif days >= _END_DAY:
        days = math.nextafter(_END_DAY, -math.inf)
    whole = math.floor(days)
    minute = min(1439, math.floor((days - whole) * 1440.0))
    when = date.fromordinal(int(whole) + _EPOCH)
    return f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{minute // 60:02d}:{minute % 60:02d}Z"


# -- the expressions ---------------------------------------------------------------------------------------------
_APOS = "['\u2019\u02bc\u2018\u2032\u02b9]"  # (dreamdb.analyzer.APOSTROPHES: "yesterday's", "last week’s")
_POSSESSIVE = f"(?:{_APOS}s)?"
_SUFFIX = rf"(?:{_APOS}[^\W\d_]+)?"
"""A Turkish suffix set off by an apostrophe (``Dün'kü``, ``bugün'e``): part of the expression, not a word to search
(QA round 157-A: ``'kü`` was searched)."""
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "bir": 1, "iki": 2, "uc": 3, "dort": 4, "bes": 5, "alti": 6, "yedi": 7, "sekiz": 8,
            "dokuz": 9, "on": 10}
"""Number words, Turkish ones spelled without their letters (:func:`_plain`: ``üç`` is read ``uc``)."""

def _plain(word: str) -> str:
    """``word`` lowercased and spelled without Turkish letters (``Üç`` → ``uc``, ``gün`` → ``gun``), as a Turkish
    time word may be typed (QA round 156-E: ``dun``, ``gecen hafta``)."""
    return word.lower().replace("i\u0307", "i").translate(TURKISH_TO_ASCII)
_EN_NUMBER = r"(?P<n>[1-9]\d*|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_TR_NUMBER = r"(?P<n>[1-9]\d*|bir|iki|üç|dört|beş|altı|yedi|sekiz|dokuz|on)"
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
    """A number as written: digits (any count; past 9 of them, 10⁹, which :data:`_MAX_DAYS` caps anyway) or a number
    word."""
    text = _plain(text)
    return (int(text) if len(text) <= 9 else 10 ** 9) if text.isdigit() else _NUMBERS[text]


_MAX_DAYS = float(date.max.toordinal())
"""The longest window a time intent reads, in days: the calendar's length, 0001-01-01 to 9999-12-31 (a longer one
reaches past every date a note can carry all the same): "1000 days ago" is read, where a number of more than three
digits was searched as words (QA round 157-A), and "last 99999999 years" is the calendar."""


# (pattern, reading of the match → (kind, amount, width)), tried in this order at each position of the query
_PATTERNS: list[tuple[str, object]] = [
    # calendar days
    (rf"(?:the\s+)?day\s+before\s+yesterday{_POSSESSIVE}", lambda m: ("day", 2.0, 0.0)),
    (r"(?:evvelsi|evvelki)\s+gün(?:kü)?", lambda m: ("day", 2.0, 0.0)),
    (rf"{_EN_NUMBER}\s+days?\s+ago", lambda m: ("day", float(_number(m["n"])), 0.0)),
    (rf"{_TR_NUMBER}\s+gün\s+önce(?:ki)?", lambda m: ("day", float(_number(m["n"])), 0.0)),
    (rf"yesterday{_POSSESSIVE}", lambda m: ("day", 1.0, 0.0)),
    (rf"dün(?:kü|den|e|ün)?{_SUFFIX}", lambda m: ("day", 1.0, 0.0)),
    (r"dun", lambda m: ("day", 1.0, 0.0)),  # (dün typed without its letter; bare: dune is an English word)
    (rf"today{_POSSESSIVE}", lambda m: ("day", 0.0, 0.0)),
    (rf"bugün(?:kü|e|den|ün)?{_SUFFIX}", lambda m: ("day", 0.0, 0.0)),
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
    # (with the genitive too: geçen ayın, bu haftanın, geçen yılın)
    (r"(?:geçen|bu|son)\s+(?P<u>hafta(?:da|daki|ki|lık|nın)?|ay(?:da|daki|ki|lık|ın)?|yıl(?:da|daki|ki|lık|ın)?)",
     lambda m: ("span", _UNIT_DAYS[_tr_unit(m["u"])], 0.0)),
    # recency, no span named
    (r"most\s+recent(?:ly)?|recently|lately|latest|newest|these\s+days", lambda m: ("recent", 0.0, 0.0)),
    (r"en\s+son(?:uncu)?|en\s+yeni|son\s+zamanlarda|son\s+(?:günlerde|haftalarda|aylarda|yıllarda)(?:ki)?"
     r"|son\s+dönemde|geçenlerde|yakın\s+zamanda|yakınlarda", lambda m: ("recent", 0.0, 0.0)),
]
_EITHER = {t: f"[{t}{t.translate(TURKISH_TO_ASCII)}]" for t in TURKISH_LETTERS}  # (ş: [şs])
_AS_WRITTEN = {rf"dün(?:kü|den|e|ün)?{_SUFFIX}"}
"""Patterns whose Turkish letters must be typed (the plain spelling of ``dün``'s suffixed forms, ``dune``, is
English); every other one also matches its words spelled without their Turkish letters (:func:`_either_spelling`)."""


def _either_spelling(pattern: str) -> str:
    """``pattern`` with each Turkish letter also matching the letter typed in its place without Turkish letters
    (``geçen`` → ``ge[çc]en``: ``gecen hafta``, ``son 3 gunde``, ``2 hafta once``), as Turkish queries are often
    typed (the XQuAD track of Turkish questions typed without Turkish letters); the readers fold the match the same
    way (:func:`_plain`)."""
    return pattern if pattern in _AS_WRITTEN else "".join(_EITHER.get(c, c) for c in pattern)


_BEFORE = r"(?<![\w/\\.@#-])"
_AFTER = r"(?![\w(/]|[.-]\w)"
"""What an expression may not be joined to, before and after it: a word's letters, and a path's or code's characters
(``knowledge/yesterday``, ``yesterday.md``, ``today()``, ``utils.today``, ``#today``, ``today-fn``: a file, a
function, a tag or an id, QA round 157-A F2). A sentence's period or comma after it is no join (``what changed
yesterday.``, ``yesterday, we``), nor an apostrophe's suffix (``yesterday's``, ``dün'kü``)."""
_COMPILED = [(re.compile(rf"{_BEFORE}(?:{_either_spelling(p)}){_AFTER}", re.IGNORECASE), read) for p, read in _PATTERNS]


def find_time_intent(text: str) -> tuple[TimeIntent | None, str]:
    """The query's time intent and its text without its time expressions.

    Returns:
        ``(intent, rest)``: the first expression of :data:`_PATTERNS` in ``text`` (the one starting first; at one
        position, the first pattern of the list: "the day before yesterday" before "yesterday"), the later ones
        (each starting after the one before ends) in its :attr:`TimeIntent.also`, and ``text`` with every one of
        them replaced by a space (QA round 157-A F5: "deploy yesterday or last week" searched ``last`` and
        ``week``, and a note "Last Week Tonight" came first); ``(None, text)`` when it holds none.
    """
    if not isinstance(text, str) or not text:
        return None, text
    nexts = [pattern.search(text) for pattern, _ in _COMPILED]  # (each pattern's next match: searched again only
    found, pos = [], 0  # once the scan has passed where it starts)
    while True:
        best = None
        for i, (pattern, _) in enumerate(_COMPILED):
            m = nexts[i]
            if m is not None and m.start() < pos:
                m = nexts[i] = pattern.search(text, pos)
            if m is not None and (best is None or m.start() < best[0].start()):
                best = (m, i)
        if best is None:
            break
        found.append(best)
        pos = best[0].end()
    if not found:
        return None, text
    m, i = found[0]
    kind, amount, width = _COMPILED[i][1](m)
    amount = min(float(amount), _MAX_DAYS)
    rest, at = [], 0
    for later, _ in found:
        rest.append(text[at:later.start()])
        at = later.end()
    rest.append(text[at:])
    return (TimeIntent(m.group(), kind, float(amount), float(width), tuple(x.group() for x, _ in found[1:])),
            " ".join(rest))


def time_window(intent: TimeIntent, now: datetime, *, machine_clock: bool = False) -> TimeWindow | None:
    """``intent`` placed against the clock ``now`` (aware; naive is UTC); ``None`` for ``recent``, which names no
    period.

    * ``day``: the calendar day ``amount`` days before ``now``'s, as ``--since``/``--until`` read ``yesterday``
      (:mod:`dreamdb.timeparse`): a document dated with a date alone is inside when its date is that day's
      (``day_start``, ``day_end``), one dated with a time of day when its instant is within that day's midnights in
      ``now``'s time zone (the machine's zone with ``machine_clock``); scale 1 day.
    * ``span``: the ``amount`` days before ``now``; scale ``amount``.
    * ``around``: ``width`` days centred ``amount`` days before ``now``; scale ``width``.
    * ``recent`` ("latest", "recently", "en son"): no window. Such a word asks for the newest matches first, which
      the plain recency (SPEC §2) already orders by; a window of its own (1/(1 + age/120 days), recency's
      half-life with its floor dropped) was measured and left (docs/ranking.md, "Variants measured and left"): on
      the gold set it put the newest note that matched above the decision the question meant. Its words are not
      searched all the same.
    """
    from dreamdb.timeparse import as_utc

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
    day = date(local.year, local.month, local.day).toordinal() - int(intent.amount)  # (may be before the year 1)
    dated = float(day - _EPOCH)  # (the date's midnight UTC)
    first_days, last_days = _midnight(day, local, machine_clock), _midnight(day + 1, local, machine_clock)
    # (the day's last instant is the largest float below the next midnight, as --until's: a microsecond less is no
    # float at all far from 1970, QA round 157-A F1)
    return TimeWindow(intent.phrase, first_days, math.nextafter(last_days, -math.inf), 1.0, dated, dated)


def _midnight(day: int, local: datetime, machine_clock: bool) -> float:
    """The first instant of the date of ordinal ``day`` (:meth:`date.toordinal`) in ``local``'s time zone (the
    machine's with ``machine_clock``), in days since 1970-01-01 UTC. A date or instant outside the years 1–9999
    (the day before 0001-01-01, the one after 9999-12-31, a midnight east of UTC on 0001-01-01) has ``local``'s
    offset: a window of a day at the ends of the calendar, where it fell back to the day before now (QA round 157-A
    F4: "today" at the end of 9999 was the day before)."""
    from dreamdb.timeparse import _local_midnight

    try:
        d = date.fromordinal(day)
        at = _local_midnight(d) if machine_clock else datetime(d.year, d.month, d.day, tzinfo=local.tzinfo)
        return at.astimezone(timezone.utc).timestamp() / 86400.0
    except (OverflowError, ValueError, OSError):
        return float(day - _EPOCH) - local.utcoffset().total_seconds() / 86400.0
