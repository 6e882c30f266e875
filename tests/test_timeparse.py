"""Tests of dreamdb.timeparse with a fixed evaluation clock."""

from __future__ import annotations

import subprocess
import sys
from datetime import date, datetime, timedelta, timezone

import pytest

from dreamdb.errors import UsageError
from dreamdb.timeparse import age_days, parse_date_value, parse_until, parse_when, until_days

NOW = datetime(2026, 8, 18, 12, 0, tzinfo=timezone.utc)
UTC = timezone.utc


@pytest.mark.parametrize("text, expected", [
    ("-30d", datetime(2026, 7, 19, 12, 0, tzinfo=UTC)),
    ("30d", datetime(2026, 7, 19, 12, 0, tzinfo=UTC)),
    ("30 days", datetime(2026, 7, 19, 12, 0, tzinfo=UTC)),
    ("2 weeks", datetime(2026, 8, 4, 12, 0, tzinfo=UTC)),
    ("1 week ago", datetime(2026, 8, 11, 12, 0, tzinfo=UTC)),
    ("1 WEEK", datetime(2026, 8, 11, 12, 0, tzinfo=UTC)),
    ("3 months", datetime(2026, 5, 18, 12, 0, tzinfo=UTC)),
    ("3mo", datetime(2026, 5, 18, 12, 0, tzinfo=UTC)),
    ("1y", datetime(2025, 8, 18, 12, 0, tzinfo=UTC)),
    ("12h", datetime(2026, 8, 18, 0, 0, tzinfo=UTC)),
    ("90m", datetime(2026, 8, 18, 10, 30, tzinfo=UTC)),
    ("+7d", datetime(2026, 8, 25, 12, 0, tzinfo=UTC)),
    ("1.5d", datetime(2026, 8, 17, 0, 0, tzinfo=UTC)),
    ("  yesterday ", datetime(2026, 8, 17, 0, 0, tzinfo=UTC)),
    ("today", datetime(2026, 8, 18, 0, 0, tzinfo=UTC)),
    ("tomorrow", datetime(2026, 8, 19, 0, 0, tzinfo=UTC)),
    ("now", NOW),
    ("2026-08-01", datetime(2026, 8, 1, tzinfo=UTC)),
    ("2026-08-01T10:15:00Z", datetime(2026, 8, 1, 10, 15, tzinfo=UTC)),
    ("2026-08-01T10:15:00+03:00", datetime(2026, 8, 1, 7, 15, tzinfo=UTC)),
    ("2026-08-01T10:15", datetime(2026, 8, 1, 10, 15, tzinfo=UTC)),
    ("20260801", datetime(2026, 8, 1, tzinfo=UTC)),
    ("2026-W53", datetime(2026, 12, 28, tzinfo=UTC)),  # (2026 has 53 ISO weeks; 2025 has not)
    ("2020-W53-5", datetime(2021, 1, 1, tzinfo=UTC)),
])
def test_parse_when(text: str, expected: datetime):
    got = parse_when(text, NOW)
    assert got == expected
    assert got.tzinfo is not None and got.utcoffset() == timedelta(0)


def test_month_arithmetic_is_calendar_aware():
    end_of_march = datetime(2026, 3, 31, tzinfo=UTC)
    assert parse_when("1 month", end_of_march) == datetime(2026, 2, 28, tzinfo=UTC)


def test_naive_now_is_utc():
    assert parse_when("1d", datetime(2026, 8, 18)) == datetime(2026, 8, 17, tzinfo=UTC)


def test_aware_non_utc_now_is_converted():
    istanbul = timezone(timedelta(hours=3))
    assert parse_when("now", datetime(2026, 8, 18, 3, 0, tzinfo=istanbul)) == datetime(2026, 8, 18, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize("text", ["", "   ", "soon", "30 parsecs", "+3 days ago", "2026-13-45", "last tuesday", "d30",
                                  "2025-W53", "2027-W53-1", "2025W531", "2025-W53-1T10:00:00Z"])  # (no week 53: 118-B F5)
def test_unparseable_is_usage_error_naming_forms(text: str):
    with pytest.raises(UsageError) as info:
        parse_when(text, NOW)
    assert "-30d" in info.value.hint and "ISO-8601" in info.value.hint
    assert info.value.exit_code == 2


@pytest.mark.parametrize("text", ["-99999999999d", "+5000000 years", "-999999999999999 hours"])
def test_out_of_range_amount_says_so(text: str):
    with pytest.raises(UsageError) as info:
        parse_when(text, NOW)
    assert "out of range" in info.value.message and info.value.exit_code == 2


def test_a_relative_time_out_of_range_because_of_the_clock_names_the_clock():
    """QA round 80-A F7: ``--now 0001-01-01 --since -30d`` suggested "a smaller amount, e.g. -30d"."""
    with pytest.raises(UsageError) as info:
        parse_when("-30d", datetime(1, 1, 1, tzinfo=UTC))
    assert "for the clock 0001-01-01T00:00:00+00:00" in info.value.message and "--now when given" in info.value.hint


@pytest.mark.parametrize("now, text", [(datetime(1, 1, 1, tzinfo=UTC), "yesterday"),
                                       (datetime(9999, 12, 31, 12, tzinfo=UTC), "tomorrow")])
def test_keyword_past_the_calendar_edge_says_so(now: datetime, text: str):
    with pytest.raises(UsageError) as info:
        parse_when(text, now)
    assert "out of range" in info.value.message and info.value.exit_code == 2
    assert parse_when("today", now).year == now.year


@pytest.mark.parametrize("offset_hours, day", [(9, 6), (-8, 5), (0, 5)])
def test_today_is_the_calendar_date_of_the_clock_in_its_own_offset(offset_hours: int, day: int):
    """QA round 114-B F3: ``remember`` dates an entry by the local date, but ``today`` was UTC's: in Tokyo before
    09:00 ``--since today`` left out what was just written. The same instant, read in three offsets."""
    instant = datetime(2026, 12, 5, 17, 5, tzinfo=UTC)
    now = instant.astimezone(timezone(timedelta(hours=offset_hours)))
    assert parse_when("today", now) == datetime(2026, 12, day, tzinfo=UTC)
    assert parse_when("yesterday", now) == datetime(2026, 12, day - 1, tzinfo=UTC)
    assert until_days("today", now) < datetime(2026, 12, day + 1, tzinfo=UTC).timestamp() / 86400
    assert parse_when("now", now) == instant and parse_when("-1d", now) == instant - timedelta(days=1)


@pytest.mark.parametrize("now", [datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))),
                                 datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-12)))])
def test_clock_with_an_offset_past_the_calendar_edge_says_so(now: datetime):
    """QA round 10: the clock's conversion to UTC overflowed (an internal error) before any keyword was read."""
    with pytest.raises(UsageError, match="out of range in UTC"):
        parse_when("2026-01-01", now)


@pytest.mark.parametrize("value, expected", [
    (date(2026, 8, 2), datetime(2026, 8, 2, tzinfo=UTC)),
    (datetime(2026, 8, 2, 5, 6), datetime(2026, 8, 2, 5, 6, tzinfo=UTC)),
    (datetime(2026, 8, 2, 5, 6, tzinfo=timezone(timedelta(hours=2))), datetime(2026, 8, 2, 3, 6, tzinfo=UTC)),
    ("2026-08-02", datetime(2026, 8, 2, tzinfo=UTC)),
    ("2026-08-02T01:02:03Z", datetime(2026, 8, 2, 1, 2, 3, tzinfo=UTC)),
    ("2026-08-02 01:02:03", datetime(2026, 8, 2, 1, 2, 3, tzinfo=UTC)),
    (" 2026-08-02 ", datetime(2026, 8, 2, tzinfo=UTC)),
    ("yesterday", None),
    ("not a date", None),
    ("2026-02-30", None),
    ("", None),
    (None, None),
    (True, None),
    (20260802, None),
    (["2026-08-02"], None),
])
def test_parse_date_value(value, expected):
    assert parse_date_value(value) == expected


@pytest.mark.parametrize("text, expected", [
    ("20260818T120000Z", datetime(2026, 8, 18, 12, tzinfo=UTC)),
    ("2026-230T12:00Z", datetime(2026, 8, 18, 12, tzinfo=UTC)),
    ("2026-W34-2T12:00Z", datetime(2026, 8, 18, 12, tzinfo=UTC)),
    ("2026-w34-2t12:00z", datetime(2026, 8, 18, 12, tzinfo=UTC)),
    ("2026-w34-2", datetime(2026, 8, 18, tzinfo=UTC)),
    ("2026w342", datetime(2026, 8, 18, tzinfo=UTC)),
    ("2026-08-18t12:00:00+02:00", datetime(2026, 8, 18, 10, tzinfo=UTC)),
    ("2026-08", None), ("2026-W34", None), ("2026", None), ("2025-w53-1", None),
])
def test_a_clock_a_since_and_a_frontmatter_date_read_one_set_of_forms(text, expected):
    """QA round 145-E F5: frontmatter refused ``20260818T120000Z``, ``2026-230T12:00Z`` and ``2026-W34-2T12:00Z``,
    which --now and --since took, and --now refused the lowercase ``2026-w34-2`` frontmatter took. A day or an
    instant is read alike everywhere; a month, a week or a year alone is no date (--since takes it as a period)."""
    from dreamdb.api import _now
    from dreamdb.vault.parse import date_value

    assert parse_date_value(text) == expected
    if expected is None:
        with pytest.raises(UsageError):
            _now(text)
        assert date_value(text) is None
        return
    assert _now(text) == expected and parse_when(text, NOW) == expected
    day_alone = "t" not in text.lower()
    assert date_value(text) == (expected.date().isoformat() if day_alone else expected.strftime("%Y-%m-%dT%H:%M:%SZ"))


@pytest.mark.parametrize("text, expected", [
    ("2026-08-18 10:00:00 -5", datetime(2026, 8, 18, 15, tzinfo=UTC)),
    ("2026-08-18T10:00:00-5", datetime(2026, 8, 18, 15, tzinfo=UTC)),
    ("2026-08-18 10:00:00 +5:30", datetime(2026, 8, 18, 4, 30, tzinfo=UTC)),
    ("2026-08-18 10:00:00+5:30", datetime(2026, 8, 18, 4, 30, tzinfo=UTC)),
    ("2026-08-18  10:00:00  +12", datetime(2026, 8, 17, 22, tzinfo=UTC)),
    ("2026-8-18 1:00:00 -5", datetime(2026, 8, 18, 6, tzinfo=UTC)),
    ("2026-8-1 1:00:00", datetime(2026, 8, 1, 1, tzinfo=UTC)),
    ("2026-08-18 10:00:00.", datetime(2026, 8, 18, 10, tzinfo=UTC)),
    ("2026-08-18 10:00:00. -5", datetime(2026, 8, 18, 15, tzinfo=UTC)),
    ("2026-08-18 10:00:00.25 -5", datetime(2026, 8, 18, 15, 0, 0, 250000, tzinfo=UTC)),
    ("2026-08-18 10:00:00 Z", datetime(2026, 8, 18, 10, tzinfo=UTC)),
    ("2026-08-18 10:00:00 -05", datetime(2026, 8, 18, 15, tzinfo=UTC)),
])
def test_a_quoted_yaml_timestamp_is_the_instant_yaml_reads_unquoted(text, expected):
    """QA round 150-A F3: ``updated: "2026-08-18 10:00:00 -5"`` (quoted) was the date 2026-08-18 alone, with the
    warning "a date followed by no valid time of day", where unquoted it is the instant 15:00Z (PyYAML's
    timestamp): parse_instant raised "Unused components in ISO string" on an offset of one digit (``-5``,
    ``+5:30``), and a month, day or hour of one digit (``2026-8-18 1:00:00``) was no date at all. Every YAML 1.1
    timestamp with a time is read as YAML reads it, by the index, --now and --since alike."""
    import yaml

    from dreamdb.api import _now
    from dreamdb.timeparse import parse_instant
    from dreamdb.vault.parse import _date_warnings, date_value

    assert as_utc_of(yaml.safe_load(f"u: {text}")["u"]) == expected  # (what YAML reads unquoted)
    assert parse_date_value(text) == expected and as_utc_of(parse_instant(text)) == expected
    assert date_value(text) == expected.isoformat().replace("+00:00", "Z")
    assert _date_warnings("k.md", {"updated": text}, ["updated"]) == []
    assert _now(text) == expected and parse_when(text, NOW) == expected


@pytest.mark.parametrize("text", ["2026-08-18 10:00:00 +24", "2026-08-18 25:00:00 -5", "2026-2-30 10:00:00",
                                  "2026-08-18 10:00:00 -5:3", "2026-08-18 10:00:00 - 5"])
def test_a_yaml_timestamp_of_impossible_fields_is_no_instant(text):
    """The YAML 1.1 forms (QA round 150-A F3) read no impossible date, time or offset: such a text is no instant."""
    from dreamdb.timeparse import parse_instant

    with pytest.raises(ValueError):
        parse_instant(text)
    assert parse_date_value(text) is None
    with pytest.raises(UsageError):
        parse_when(text, NOW)


def as_utc_of(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def test_age_days():
    assert age_days(datetime(2026, 8, 17, 12, tzinfo=UTC), NOW) == 1.0
    assert age_days(datetime(2026, 8, 18, 0, tzinfo=UTC), NOW) == 0.5
    assert age_days(datetime(2026, 8, 19, 12), NOW) == -1.0  # naive = UTC; future is negative
    assert age_days(parse_date_value("2026-04-20"), NOW) == pytest.approx(120.5)


def test_import_is_light():
    code = ("import sys, dreamdb.timeparse; "
            "bad = [m for m in ('dateutil', 'yaml', 'numpy', 'filelock') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


_CLOCK = datetime(2026, 8, 18, 13, 0, tzinfo=timezone.utc)
_END = timedelta(microseconds=1)


@pytest.mark.parametrize("text,expected", [
    ("2026-08-11", datetime(2026, 8, 12, tzinfo=timezone.utc) - _END),  # a date: its whole day
    ("20260811", datetime(2026, 8, 12, tzinfo=timezone.utc) - _END),
    ("today", datetime(2026, 8, 19, tzinfo=timezone.utc) - _END),
    ("yesterday", datetime(2026, 8, 18, tzinfo=timezone.utc) - _END),
    ("2026-02", datetime(2026, 3, 1, tzinfo=timezone.utc) - _END),  # a month: to its last day
    ("2026", datetime(2027, 1, 1, tzinfo=timezone.utc) - _END),
    ("9999-12-31", datetime.max.replace(tzinfo=timezone.utc)),  # no next day to count back from
    ("2026-223", datetime(2026, 8, 12, tzinfo=timezone.utc) - _END),  # ordinal date: day 223
    ("2026-W33-2", datetime(2026, 8, 12, tzinfo=timezone.utc) - _END),  # ISO week date: that Tuesday
    ("2026-W33", datetime(2026, 8, 17, tzinfo=timezone.utc) - _END),  # ISO week: to its Sunday
    ("2026-08-11T10:00", datetime(2026, 8, 11, 10, tzinfo=timezone.utc)),  # an instant is itself
    ("-3d", _CLOCK - timedelta(days=3)),
    ("now", _CLOCK),
])
def test_until_names_the_last_instant_of_a_calendar_period(text, expected):
    assert parse_until(text, _CLOCK) == expected


def test_until_days_is_just_below_the_next_period_even_far_from_1970():
    """A microsecond is below a float's resolution in days before ~1600: the bound is the largest
    float below the next period's start, so a document dated 1000-01-01 is after ``--until 0999``."""
    import math

    def days(dt):
        return dt.timestamp() / 86400.0

    for text, nxt in [("0999", datetime(1000, 1, 1, tzinfo=timezone.utc)), ("0001", datetime(2, 1, 1, tzinfo=timezone.utc)),
                      ("2026-08-11", datetime(2026, 8, 12, tzinfo=timezone.utc))]:
        bound = until_days(text, _CLOCK)
        assert bound < days(nxt) and bound == math.nextafter(days(nxt), -math.inf)
        assert bound >= days(nxt - timedelta(seconds=1))
    assert until_days("9999", _CLOCK) == math.inf and until_days("-3d", _CLOCK) == days(_CLOCK - timedelta(days=3))


@pytest.fixture
def machine_zone(monkeypatch):
    """Set the machine's time zone (``TZ``, a POSIX rule: no tz database needed) for the test's duration."""
    import time

    def use(rule: str) -> None:
        monkeypatch.setenv("TZ", rule)
        time.tzset()

    yield use
    monkeypatch.undo()
    time.tzset()


def _days(*utc: int) -> float:
    """An instant given as UTC (year, month, day[, hour]) in days since 1970-01-01 UTC, as the bounds are."""
    return datetime(*utc, tzinfo=timezone.utc).timestamp() / 86400.0


def test_a_local_day_at_offset_zero_keeps_the_machines_summer_time_change(machine_zone):
    """QA round 121-A F1: at +00:00 (London in winter) the local day was taken as the UTC day, though on 25 October
    2026 London's day starts at 00:00 BST, 23:00 UTC the day before (and lasts 25 hours)."""
    from dreamdb.timeparse import calendar_day_instants

    machine_zone("GMT0BST,M3.5.0/1,M10.5.0")
    now = datetime(2026, 10, 25, 12, 0).astimezone()  # the machine's clock: +00:00 at noon
    assert now.utcoffset() == timedelta(0)
    first, last = calendar_day_instants("today", now, machine_clock=True)
    assert first == _days(2026, 10, 24, 23)
    assert _days(2026, 10, 25, 23) < last < _days(2026, 10, 26)
    # a clock given with its offset (--now …Z) is that offset's, on every machine, London's too (QA round 122-A F2)
    for clock in (now, datetime(2026, 10, 25, 12, tzinfo=timezone.utc)):
        first, last = calendar_day_instants("today", clock)
        assert first == _days(2026, 10, 25) and _days(2026, 10, 25, 23) < last < _days(2026, 10, 26)


def test_a_local_day_of_a_zone_clock_has_that_zones_midnights(machine_zone):
    """QA round 122-A F2: a ``ZoneInfo`` clock whose offset was the machine's got the machine zone's midnights, and one
    whose offset was not got a fixed offset's; a zone's day is its own, summer time and all, on any machine."""
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        london = zoneinfo.ZoneInfo("Europe/London")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no time zone database here (tzdata)")
    from dreamdb.timeparse import calendar_day_instants

    for machine in ("UTC0", "XST-9"):
        machine_zone(machine)
        first, last = calendar_day_instants("today", datetime(2026, 10, 25, 12, tzinfo=london))
        assert first == _days(2026, 10, 24, 23) and _days(2026, 10, 25, 23) < last < _days(2026, 10, 26), machine


def test_a_local_day_whose_midnight_the_clocks_skip_starts_at_the_jump(machine_zone):
    """QA round 121-A F2: where summer time begins at midnight (00:00 → 01:00, day 249 = 6 September), the C library
    reads that midnight as 23:00 the day before, so a note of 23:30 on the 5th counted as the 6th's."""
    from dreamdb.timeparse import calendar_day_instants

    machine_zone("XST4XDT3,J249/0,J300/0")
    now = datetime(2026, 9, 6, 12, 0).astimezone()  # -03:00
    first, last = calendar_day_instants("today", now, machine_clock=True)
    assert first == _days(2026, 9, 6, 4)  # 00:00 -04:00, the instant of the jump
    assert _days(2026, 9, 7, 2) < last < _days(2026, 9, 7, 3)
    first, last = calendar_day_instants("yesterday", now, machine_clock=True)  # the 5th: 23 hours, up to the jump
    assert first == _days(2026, 9, 5, 4)
    assert _days(2026, 9, 6, 3) < last < _days(2026, 9, 6, 4)


# -- a query's time expressions (QA round 157-I F2: `--since "last week"` was refused) ---------------------------------
@pytest.mark.parametrize("text, since, until", [
    # spans: the N days before now, to now
    ("last week", NOW - timedelta(days=7), NOW),
    ("past week", NOW - timedelta(days=7), NOW),
    ("Last Month", NOW - timedelta(days=30), NOW),
    ("past 3 days", NOW - timedelta(days=3), NOW),
    ("last 2 weeks", NOW - timedelta(days=14), NOW),
    ("geçen hafta", NOW - timedelta(days=7), NOW),
    ("gecen hafta", NOW - timedelta(days=7), NOW),
    ("geçen ay", NOW - timedelta(days=30), NOW),
    ("son 3 gün", NOW - timedelta(days=3), NOW),
    # calendar days: as yesterday, the whole day
    ("dün", datetime(2026, 8, 17, tzinfo=UTC), datetime(2026, 8, 18, tzinfo=UTC) - timedelta(microseconds=1)),
    ("the day before yesterday", datetime(2026, 8, 16, tzinfo=UTC),
     datetime(2026, 8, 17, tzinfo=UTC) - timedelta(microseconds=1)),
    ("bugün", datetime(2026, 8, 18, tzinfo=UTC), datetime(2026, 8, 19, tzinfo=UTC) - timedelta(microseconds=1)),
    ("3 gün önce", datetime(2026, 8, 15, tzinfo=UTC), datetime(2026, 8, 16, tzinfo=UTC) - timedelta(microseconds=1)),
    # N units ago: that instant, as "2 weeks ago" (a relative form) is
    ("two weeks ago", NOW - timedelta(days=14), NOW - timedelta(days=14)),
    ("2 hafta önce", NOW - timedelta(days=14), NOW - timedelta(days=14)),
])
def test_since_and_until_read_a_querys_time_expressions(text, since, until):
    assert parse_when(text, NOW) == since
    assert parse_until(text, NOW) == until
    assert until_days(text, NOW) == pytest.approx(until.timestamp() / 86400.0, abs=1e-9)


def test_the_forms_read_before_keep_their_reading():
    assert parse_when("2 weeks ago", NOW) == NOW - timedelta(days=14)
    assert parse_until("3 days ago", NOW) == NOW - timedelta(days=3)  # (an instant, not a day)
    assert parse_until("yesterday", NOW) == datetime(2026, 8, 18, tzinfo=UTC) - timedelta(microseconds=1)


@pytest.mark.parametrize("text", ["recently", "latest", "en son", "last week deploy", "yesterday or last week",
                                  "last tuesday"])
def test_an_expression_naming_no_period_or_more_than_one_is_refused(text):
    with pytest.raises(UsageError) as info:
        parse_when(text, NOW)
    assert "last week" in info.value.hint


def test_a_local_calendar_day_of_a_query_expression_has_the_clocks_midnights():
    from dreamdb.timeparse import calendar_day_instants

    tokyo = datetime(2026, 8, 18, 3, 0, tzinfo=timezone(timedelta(hours=9)))
    assert calendar_day_instants("dün", tokyo) == calendar_day_instants("yesterday", tokyo) is not None
    assert calendar_day_instants("last week", tokyo) is None


def test_cli_list_and_recall_take_last_week(tmp_path):
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from tests.conftest import ROOT

    for args in (["list"], ["recall", "dedup"]):
        out = CliRunner().invoke(cli, [*args, "--vault", str(ROOT / "examples"), "--since", "last week", "--until",
                                       "last week", "--now", "2026-08-15"])
        assert out.exit_code == 0, out.output
        assert "task/add-dedup-gate" in out.stdout
    out = CliRunner().invoke(cli, ["list", "--vault", str(ROOT / "examples"), "--since", "geçen hafta", "--until", "dün",
                                   "--now", "2026-08-15"])
    assert out.exit_code == 0 and "task/add-dedup-gate" in out.stdout
    out = CliRunner().invoke(cli, ["list", "--vault", str(ROOT / "examples"), "--since", "dün", "--until", "dün",
                                   "--now", "2026-08-16"])
    assert out.exit_code == 0 and "task/add-dedup-gate" not in out.stdout
