"""Parsing of time expressions (``--since``, ``--until``, ``--now``) and frontmatter dates.

Every datetime this module returns is timezone-aware and in UTC. Naive inputs
(an ISO string without an offset, a YAML ``date``) are taken to be UTC, so the
same vault and the same ``--now`` give the same answer on every machine.

This module is on the CLI's hot path: it imports only the standard library at
module level; ``dateutil`` is imported inside the functions that need it.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

__all__ = ["ACCEPTED_FORMS", "age_days", "calendar_day_instants", "parse_date_value", "parse_until", "parse_when",
           "until_days"]

ACCEPTED_FORMS = (
    "an ISO-8601 date or instant (2026-08-01, 2026-08-01T12:00:00Z), "
    "a relative span meaning that long before now (-30d, 30d, 12h, 2 weeks, "
    "1 week ago, 3 months, 1y; a leading '+' means after now), "
    "one of: now, today, yesterday, tomorrow, "
    "or a time expression as recall reads one in a query (last week, past month, last 3 days, two weeks ago, "
    "the day before yesterday; geçen hafta, dün, son 3 gün)"
)

# unit word -> (kind, multiplier). kind "td" = timedelta seconds, "months" = calendar months.
_UNITS: dict[str, tuple[str, float]] = {}
for _names, _spec in (
    (("s", "sec", "secs", "second", "seconds"), ("td", 1.0)),
    (("m", "min", "mins", "minute", "minutes"), ("td", 60.0)),
    (("h", "hr", "hrs", "hour", "hours"), ("td", 3600.0)),
    (("d", "day", "days"), ("td", 86400.0)),
    (("w", "wk", "wks", "week", "weeks"), ("td", 7 * 86400.0)),
    (("mo", "mon", "mos", "month", "months"), ("months", 1.0)),
    (("y", "yr", "yrs", "year", "years"), ("months", 12.0)),
):
    for _n in _names:
        _UNITS[_n] = _spec

_RELATIVE_RE = re.compile(
    r"^(?P<sign>[+-])?\s*(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[a-z]+)(?P<ago>\s+ago)?$"
)


def as_utc(value: datetime) -> datetime:
    """Return ``value`` as an aware UTC datetime (naive values are taken as UTC).

    Raises:
        UsageError: the instant falls before year 1 or after year 9999 in UTC (0001-01-01T00:00+14:00).
    """
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        return value.replace(tzinfo=timezone.utc)
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:
        from dreamdb.errors import UsageError

        raise UsageError(f"The time {value.isoformat()} is out of range in UTC (before year 1 or after year 9999).",
                         hint="Use a time at least a day inside the years 1-9999.") from None


def clamped_utc(value: datetime) -> datetime:
    """:func:`as_utc` for a value read from the vault, which must never stop a sync: an instant that falls
    outside the years 1–9999 in UTC (``expires: 9999-12-31T23:00:00-05:00``, a way to write "never") is the
    end of that range it passed (QA round 70 B-H2: every command exited 70 on such a note)."""
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        return value.replace(tzinfo=timezone.utc)
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:
        return _END_OF_TIME if value.year > 1 else datetime.min.replace(tzinfo=timezone.utc)


def _start_of_day(value: datetime) -> datetime:
    return value.replace(hour=0, minute=0, second=0, microsecond=0)


_DAY_RE = DAY_FORMS = re.compile(r"^\d{4}(?:-?\d{2}-?\d{2}|-?\d{3}|-?w\d{2}-?\d)$")
"""A calendar day: 2026-08-11, 20260811, the ordinal 2026-223, the week date 2026-W33-2 (lowercased)."""
_WEEK_RE = re.compile(r"^\d{4}-?w\d{2}$")
_MONTH_RE = re.compile(r"^\d{4}-\d{2}$")
_YEAR_RE = re.compile(r"^\d{4}$")
_LAST_MICROSECOND = timedelta(microseconds=1)
_END_OF_TIME = datetime.max.replace(tzinfo=timezone.utc)


_WEEK_DATE_RE = re.compile(r"(\d{4})-?[wW](\d{2})(?:-?(\d))?")


def isoparse(text: str) -> datetime:
    """``dateutil.parser.isoparse(text)``, its letters in any case (``2026-w34-2``, ``…t12:00z``: dateutil refused a
    lowercase ``w``, which frontmatter took, QA round 145-E F5), refusing a week that the year has not:
    ``2025-W53-1`` (2025 has 52 ISO weeks), which dateutil takes for the Monday after (2026-W01-1) as long as the
    week is 1–53 (QA round 118-B F5: a frontmatter date and ``--since`` took it without a word).

    Raises:
        ValueError, OverflowError: as dateutil's (``text`` is no ISO-8601 date or date-time).
    """
    from dateutil.parser import isoparse as _isoparse

    text = text.upper()
    m = _WEEK_DATE_RE.match(text)
    if m is not None:
        date.fromisocalendar(int(m[1]), int(m[2]), int(m[3] or 1))  # (raises ValueError for a week the year lacks)
    return _isoparse(text)


_CALENDAR_DATE = re.compile(r"\d{4}-\d\d-\d\d(?![\d-])")
"""A text that starts with a calendar date (``2026-08-18``, ``2026-08-18T09:30Z``)."""

_YAML_TIMESTAMP = re.compile(r"""
    (?P<year>\d{4}) - (?P<month>\d\d?) - (?P<day>\d\d?)
    (?: T | [ \t]+ ) (?P<hour>\d\d?) : (?P<minute>\d\d) : (?P<second>\d\d) (?: \. (?P<fraction>\d*) )?
    (?: [ \t]* (?: (?P<z>Z) | (?P<sign>[-+]) (?P<tz_hour>\d\d?) (?: : (?P<tz_minute>\d\d) )? ) )?""", re.VERBOSE)
"""A YAML 1.1 timestamp with a time of day (https://yaml.org/type/timestamp.html), uppercased: a month, a day or an
hour of one digit (``2026-8-18 1:00:00``), spaces or tabs before the zone, an offset of hours of one digit
(``-5``, ``+5:30``), a fraction of no digits (``10:00:00.``). ISO-8601 has no such forms; YAML reads them unquoted
as timestamps, and :func:`parse_instant` reads them quoted as the same instants (QA round 150-A F3)."""


def _yaml_timestamp(text: str) -> datetime | None:
    """``text`` (uppercased) read as PyYAML reads a YAML 1.1 timestamp (:data:`_YAML_TIMESTAMP`): aware when it has a
    zone, else naive; ``None`` when it has no such form.

    Raises:
        ValueError: the form's fields are no date or time (``2026-2-30 10:00:00``, ``25:00:00``, an offset of 24 h).
    """
    m = _YAML_TIMESTAMP.fullmatch(text)
    if m is None:
        return None
    fraction = int((m["fraction"] or "")[:6].ljust(6, "0"))
    zone = None
    if m["z"]:
        zone = timezone.utc
    elif m["sign"]:
        offset = timedelta(hours=int(m["tz_hour"]), minutes=int(m["tz_minute"] or 0))
        zone = timezone(-offset if m["sign"] == "-" else offset)  # (ValueError from 24 h on)
    return datetime(int(m["year"]), int(m["month"]), int(m["day"]), int(m["hour"]), int(m["minute"]),
                    int(m["second"]), fraction, tzinfo=zone)


def parse_instant(text: str) -> datetime:
    """An ISO-8601 day or instant: a clock (``--now``, a write's ``now``) and a frontmatter or changelog date
    (:func:`parse_date_value`) alike, read as :func:`isoparse` reads ``--since``: the forms of a day
    (``2026-08-18``, ``20260818``, ``2026-230``, ``2026-W34-2``), each with a time or not (``20260818T120000Z``,
    ``2026-230T12:00Z``, ``2026-W34-2T12:00Z``), a time with ``Z``, an offset or none (naive: the caller's
    reading), ``24:00``, a decimal comma, the letters in any case (``2026-w34-2``, ``…t12:00z``); and every YAML 1.1
    timestamp with a time (:data:`_YAML_TIMESTAMP`: ``2026-08-18 10:00:00 -5``, ``… +5:30``, ``2026-8-18 1:00:00``),
    as the instant YAML reads it unquoted (QA round 150-A F3: quoted, it was the date alone).
    ``datetime.fromisoformat`` took fewer, and fewer still on Python 3.10 (QA round 121-C F3: ``--now 2026-230``
    refused where ``--since 2026-230`` was taken; 145-E F5: frontmatter refused ``20260818T120000Z``, ``--now``
    ``2026-w34-2``). A month, a week or a year alone is no day (``--since`` takes them as periods).

    Returns:
        A datetime: aware when ``text`` has a ``Z`` or an offset, else naive.

    Raises:
        ValueError: ``text`` is none of these (or names a week the year has not).
    """
    text = text.strip().upper()
    if not _CALENDAR_DATE.match(text) and not _YAML_TIMESTAMP.fullmatch(text):  # (YYYY-MM-DD…: a day, read below
        day = re.split(r"[T ]", text, maxsplit=1)[0]  # in a microsecond; 2026-8-1 1:00:00, a YAML timestamp)
        if len(re.sub(r"\D", "", day)) < 7:  # (YYYYDDD, YYYYWwwD, YYYYMMDD: a day; 2026-08, 2026-W34 or 2026 is not)
            raise ValueError(f"not a day or an instant: {text!r}")
    try:  # (the common forms, in a microsecond: the clock of every query an evaluation runs, where dateutil takes
        return datetime.fromisoformat(text)  # 25 µs; it reads them as dateutil does)
    except ValueError:
        pass
    try:
        return isoparse(text)
    except OverflowError as exc:
        raise ValueError(str(exc)) from None
    except ValueError:  # (a YAML timestamp ISO-8601 has not: 2026-08-18 10:00:00 -5, QA round 150-A F3)
        when = _yaml_timestamp(text)
        if when is None:
            raise
        return when


def _next_period_start(text: str, start: datetime) -> datetime | None:
    """The start of the period after the one ``text`` names (a day, ISO week, month or year starting at
    ``start``); ``None`` when ``text`` names an instant; :data:`datetime.max` past the year 9999."""
    lowered = text.strip().lower() if isinstance(text, str) else ""
    try:
        if _DAY_RE.match(lowered) or lowered in ("today", "yesterday", "tomorrow"):
            return start + timedelta(days=1)
        intent = _whole_intent(text)
        if intent is not None and intent.kind == "day":  # (dün, the day before yesterday: that day's end)
            return start + timedelta(days=1)
        if _WEEK_RE.match(lowered):
            return start + timedelta(days=7)
        if _MONTH_RE.match(lowered):
            from dateutil.relativedelta import relativedelta

            return start + relativedelta(months=1)
        if _YEAR_RE.match(lowered):
            return start.replace(year=start.year + 1)
    except (OverflowError, ValueError):  # the last day, week, month or year of 9999
        return _END_OF_TIME
    return None


def parse_until(text: str, now: datetime) -> datetime:
    """Parse an ``--until`` bound: as :func:`parse_when`, but a calendar period names its last instant.

    ``2026-08-11`` (also ``20260811``, ``2026-223``, ``2026-W33-2``, ``today``, ``yesterday``,
    ``tomorrow``) means up to the end of that day, ``2026-W33`` the end of that ISO week, ``2026-08``
    the end of that month, ``2026`` the end of that year (each minus one microsecond: the bound is
    inclusive), so ``--until 2026-08-11`` keeps a document dated 2026-08-11T23:59 and
    ``--since D --until D`` is the whole day D. Instants and relative spans (``-30d``) are taken as
    they are. :func:`until_days` gives the same bound as a day count for filtering.

    Returns:
        A timezone-aware datetime in UTC.

    Raises:
        UsageError: as :func:`parse_when`.
    """
    start = parse_when(text, now)
    intent = _whole_intent(text)
    if intent is not None and intent.kind == "span":  # (last week: the 7 days before now, which end now)
        return as_utc(now)
    nxt = _next_period_start(text, start)
    if nxt is None:
        return start
    return nxt if nxt == _END_OF_TIME else nxt - _LAST_MICROSECOND


def until_days(text: str, now: datetime) -> float:
    """The ``--until`` bound of :func:`parse_until` in days since 1970-01-01 UTC (what the index stores).

    A period's bound is the largest float below the next period's start (:func:`math.nextafter`):
    one microsecond is below a float's resolution in days far from 1970 (``--until 0999`` would
    keep a document dated 1000-01-01). Past the year 9999 the bound is infinite.

    Raises:
        UsageError: as :func:`parse_when`.
    """
    import math

    start = parse_when(text, now)
    intent = _whole_intent(text)
    if intent is not None and intent.kind == "span":  # (last week ends now)
        return as_utc(now).timestamp() / 86400.0
    nxt = _next_period_start(text, start)
    if nxt is None:
        return start.timestamp() / 86400.0
    if nxt == _END_OF_TIME:
        return math.inf
    return math.nextafter(nxt.timestamp() / 86400.0, -math.inf)


def parse_when(text: str, now: datetime) -> datetime:
    """Parse a ``--since``/``--until`` style time expression.

    Accepted forms:

    * ISO-8601 dates and instants (``2026-08-01``, ``2026-08-01T12:00``,
      ``2026-08-01T12:00:00+03:00``, ``...Z``), and YAML 1.1 timestamps
      (``2026-08-01 12:00:00 -5``); a value without an offset is UTC,
      a date alone means midnight UTC.
    * Relative spans, counted back from ``now``: ``-30d``, ``30d``, ``12h``,
      ``90m`` (minutes), ``2 weeks``, ``1 week ago``, ``3 months`` / ``3mo``
      (calendar months), ``1y``. A leading ``+`` counts forward instead
      (``+7d`` = a week after ``now``).
    * Keywords: ``now``; ``today``, ``yesterday``, ``tomorrow``: that calendar
      date in ``now``'s own offset (the local date, for the current time), as
      the date typed out would be read (midnight UTC starting it).
    * A time expression as recall reads one in a query
      (:func:`dreamdb.ranking.timeintent.find_time_intent`, its reading, not a second list), the whole text:
      a calendar day (``dün``, ``the day before yesterday``, ``three days ago``) as ``yesterday`` is read;
      a span (``last week``, ``past month``, ``last 3 days``, ``geçen hafta``, ``son 3 gün``) its start, the
      7, 30 or N days before now (:func:`parse_until`: its end, now); a unit N units ago (``two weeks ago``,
      ``2 hafta önce``) the instant that many days before now, as ``2 weeks ago`` is. One naming no period
      (``recently``, ``latest``) is refused (QA round 157-I F2: ``--since "last week"`` was refused while the
      README said the query's window is read as ``--since 7d`` reads).

    Args:
        text: the expression, case-insensitive, surrounding spaces ignored.
        now: the reference instant (the evaluation clock); a naive value is
            taken as UTC.

    Returns:
        A timezone-aware datetime in UTC.

    Raises:
        UsageError: the text matches none of the accepted forms (the message
            lists them).
    """
    now_utc = as_utc(now)
    if not isinstance(text, str):
        _bad(text)
    raw = text.strip()
    lowered = raw.lower()
    if not lowered:
        _bad(text)

    today = _calendar_day(now, now_utc)
    keyword = {
        "now": lambda: now_utc,
        "today": lambda: today,
        "yesterday": lambda: today - timedelta(days=1),
        "tomorrow": lambda: today + timedelta(days=1),
    }.get(lowered)
    if keyword is not None:
        try:
            return keyword()
        except OverflowError:  # yesterday of 0001-01-01, tomorrow of 9999-12-31
            from dreamdb.errors import UsageError

            raise UsageError(f"The time {text!r} is out of range (before year 1 or after year 9999)"
                             f" for the clock {now_utc.isoformat()}.", hint="Check --now.") from None

    match = _RELATIVE_RE.match(lowered)
    if match:
        unit = _UNITS.get(match.group("unit"))
        if unit is None:
            _bad(text)
        if match.group("sign") == "+" and match.group("ago"):
            _bad(text)
        direction = 1 if match.group("sign") == "+" else -1
        amount = float(match.group("num"))
        kind, mult = unit
        try:
            if kind == "td":
                return now_utc + direction * timedelta(seconds=amount * mult)
            months = amount * mult
            if months != int(months):
                # Fractional months: approximate with 30.436875-day months.
                return now_utc + direction * timedelta(days=months * 30.436875)
            from dateutil.relativedelta import relativedelta

            return now_utc + direction * relativedelta(months=int(months))
        except (OverflowError, ValueError):
            from dreamdb.errors import UsageError

            raise UsageError(f"The time {text!r} is out of range (before year 1 or after year 9999) for the clock"
                             f" {now_utc.isoformat()}.",
                             hint="Use an amount that stays within years 1–9999 of that clock (the current time,"
                                  " or --now when given).") from None

    if raw[:1].isdigit():
        try:
            return as_utc(isoparse(raw))
        except (ValueError, OverflowError):
            pass
        try:  # (a YAML 1.1 timestamp, 2026-08-18 10:00:00 -5, as parse_instant and --now read it: QA round 150-A F3)
            when = _yaml_timestamp(raw.upper())
        except ValueError:
            when = None
        if when is not None:
            return as_utc(when)
    intent = _whole_intent(raw)
    if intent is not None:
        try:
            if intent.kind == "day":
                return today - timedelta(days=intent.amount)
            return now_utc - timedelta(days=intent.amount)  # (a span's start; N units ago: that instant)
        except OverflowError:
            from dreamdb.errors import UsageError

            raise UsageError(f"The time {text!r} is out of range (before year 1 or after year 9999)"
                             f" for the clock {now_utc.isoformat()}.", hint="Check --now.") from None
    _bad(text)
    raise AssertionError("unreachable")  # pragma: no cover


def _whole_intent(text: object):
    """The time intent (:func:`dreamdb.ranking.timeintent.find_time_intent`) ``text`` is wholly made of, when it names
    a day, a span or a unit ago (not ``recently``, which names no period), else ``None``: how ``--since``/``--until``
    read ``last week``, ``dün`` or ``geçen hafta`` as a query's time intent does. A form :func:`parse_when` reads
    otherwise (``yesterday``, ``3 days ago``: that instant) is none."""
    if not isinstance(text, str) or not text.strip() or text.strip().lower() in _CALENDAR_WORDS \
            or _RELATIVE_RE.match(text.strip().lower()):
        return None
    from dreamdb.ranking.timeintent import find_time_intent

    intent, rest = find_time_intent(text.strip())
    if intent is None or intent.kind == "recent" or intent.also or rest.strip():
        return None
    return intent


def _calendar_day(now: datetime, now_utc: datetime) -> datetime:
    """The day ``today`` names: the calendar date ``now`` shows in its own offset (the machine's time zone for the
    current time, the given offset for ``--now``; UTC for a naive value), as that date's midnight UTC, which is how
    a date alone is read everywhere else. So ``--since today`` is the date typed out, and keeps what ``remember``
    dated today in the local time zone (QA round 114-B F3: in Tokyo, before 09:00, it meant yesterday's date)."""
    if now.tzinfo is None or now.tzinfo.utcoffset(now) is None:
        now = now_utc
    return datetime(now.year, now.month, now.day, tzinfo=timezone.utc)


_CALENDAR_WORDS = {"yesterday": -1, "today": 0, "tomorrow": 1}


def calendar_day_instants(text: str, now: datetime, *, machine_clock: bool = False) -> tuple[float, float] | None:
    """For ``today``, ``yesterday`` or ``tomorrow`` (or a calendar day read as a query's time intent: ``dün``, ``the
    day before yesterday``, :func:`parse_when`): the first and last instant of that local day (its midnight to
    the next one less a step), in days since 1970-01-01 UTC; ``None`` for any other text, or a naive ``now``.

    :func:`parse_when` reads these words as the date typed out (midnight UTC), which is right for a document dated
    with a date alone; a document dated with a time of day is compared with these instants instead (QA round 118-B
    F3: in Tokyo at 08:30, ``--since today`` left out a note stamped 08:00 that day, 23:00 UTC the day before).

    Whose midnights: with ``machine_clock`` (``now`` is the current time dreamdb read, in the machine's time zone)
    that zone's, a summer time change included, also where its offset is +00:00 at the moment (QA rounds 120-A F4,
    121-A F1, F2); else ``now``'s own time zone's: a fixed offset's (``--now 2026-10-25T12:00Z`` means the same on
    every machine, QA round 122-A F2), or a zone's (a ``ZoneInfo`` clock from Python: its own summer time).
    """
    import math

    offset = now.tzinfo.utcoffset(now) if now.tzinfo is not None else None
    shift = _CALENDAR_WORDS.get(text.strip().lower()) if isinstance(text, str) else None
    if shift is None and offset is not None and isinstance(text, str) and (
            not text.strip()[:1].isdigit() or " " in text.strip()):  # (dün, the day before yesterday, 3 gün önce)
        intent = _whole_intent(text)
        if intent is not None and intent.kind == "day":
            shift = -int(intent.amount)
    if shift is None or offset is None:
        return None
    try:
        day = date(now.year, now.month, now.day) + timedelta(days=shift)
        nxt = day + timedelta(days=1)
        if machine_clock:
            start, end = _local_midnight(day), _local_midnight(nxt)
        else:  # (wall-clock midnights of now's zone; a fixed offset's are 24 h apart)
            start = datetime(day.year, day.month, day.day, tzinfo=now.tzinfo)
            end = datetime(nxt.year, nxt.month, nxt.day, tzinfo=now.tzinfo)
        first = start.astimezone(timezone.utc).timestamp() / 86400.0
        last = end.astimezone(timezone.utc).timestamp() / 86400.0
    except (OverflowError, ValueError, OSError):  # the first or last day of the years 1–9999: as the dates are
        return None
    return first, math.nextafter(last, -math.inf)


def _local_midnight(day: date) -> datetime:
    """The first instant of ``day`` in the machine's time zone (aware). Where the clocks jump forward at midnight
    (Santiago in September, Cairo, Havana), 00:00 is no local time and the C library reads it in the new offset, an
    hour before the jump (23:00 the day before); the day then starts at the jump, midnight in the old offset
    (QA round 121-A F2)."""
    start = datetime(day.year, day.month, day.day).astimezone()
    if start.date() < day:
        start = datetime(day.year, day.month, day.day, tzinfo=timezone(start.utcoffset()))
    return start


def _bad(text: object) -> None:
    from dreamdb.errors import UsageError

    if isinstance(text, str):  # (bytes a terminal or an ASCII Python could not decode: said so, QA round 98-A F11)
        from dreamdb.vault.discover import require_utf8

        require_utf8(text, "The time")
    raise UsageError(
        f"Cannot understand the time {text!r}.",
        hint=f"Use {ACCEPTED_FORMS}.",
    )


def parse_date_value(value: object) -> datetime | None:
    """Interpret a frontmatter or changelog date value.

    YAML gives ``date``/``datetime`` objects for unquoted dates and ``str`` for
    quoted ones; both are accepted. This never raises: a value that is not a
    recognisable date gives ``None`` (the caller treats the date as unknown).

    Args:
        value: a ``datetime``, ``date``, ISO-8601 string (a day or an instant in the forms :func:`parse_instant`
            reads, as ``--now`` takes them; a month, week or year alone is none), or anything else.

    Returns:
        A timezone-aware UTC datetime (a date alone is midnight UTC; naive
        values are UTC; one outside the years 1–9999 in UTC is clamped, :func:`clamped_utc`), or ``None``
        when the value is missing or unparseable.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        return clamped_utc(value)
    if isinstance(value, date):
        return datetime.combine(value, time(0, 0), tzinfo=timezone.utc)
    if isinstance(value, str):
        text = value.strip()
        if not text or not text[:1].isdigit():
            return None
        try:  # (the forms --now takes, one parser for both: QA round 145-E F5)
            return clamped_utc(parse_instant(text))
        except (ValueError, OverflowError):
            return None
    return None


def age_days(then: datetime, now: datetime) -> float:
    """Age of ``then`` as seen from ``now``.

    Args:
        then: the instant (naive = UTC).
        now: the reference instant (naive = UTC).

    Returns:
        ``now - then`` in days (float, 1.0 = 86,400 s); negative when ``then``
        is after ``now``.
    """
    return (as_utc(now) - as_utc(then)).total_seconds() / 86400.0
