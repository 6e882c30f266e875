"""A query's time intent ("yesterday", "last week", "latest", "dün", "geçen hafta", "en son"): read as a window of
time that steers recency, its words not searched (QA rounds 155-D F2, 156-E)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

import dreamdb
from dreamdb.ranking import signals as S
from dreamdb.ranking.memory import MemoryEngine
from dreamdb.ranking.rank import plan_query, rank
from dreamdb.ranking.timeintent import TimeWindow, find_time_intent, time_window
from dreamdb.records import replace
from tests.conftest import write_docs

NOW = "2026-08-18T12:00:00Z"
NOW_DT = datetime(2026, 8, 18, 12, tzinfo=timezone.utc)
NOW_DAYS = NOW_DT.timestamp() / 86400.0


@pytest.mark.parametrize("query, phrase, kind, amount, rest", [
    ("which test fix landed yesterday", "yesterday", "day", 1, "which test fix landed"),
    ("what did we change in the hook last week", "last week", "span", 7, "what did we change in the hook"),
    ("latest decision about codex", "latest", "recent", 0, "decision about codex"),
    ("recently fixed bugs", "recently", "recent", 0, "fixed bugs"),
    ("yesterday's automations work", "yesterday's", "day", 1, "automations work"),
    ("last week’s backlog grooming", "last week’s", "span", 7, "backlog grooming"),
    ("npm releases shipped in the last 3 days", "last 3 days", "span", 3, "npm releases shipped in the"),
    ("what broke the day before yesterday", "the day before yesterday", "day", 2, "what broke"),
    ("the release two weeks ago", "two weeks ago", "around", 14, "the release"),
    ("dün görevlere hangi özellik eklendi", "dün", "day", 1, "görevlere hangi özellik eklendi"),
    ("geçen hafta telegram ile ilgili ne yaptık", "geçen hafta", "span", 7, "telegram ile ilgili ne yaptık"),
    ("GEÇEN HAFTAKİ sürümler", "GEÇEN HAFTAKİ", "span", 7, "sürümler"),
    ("en son lisans kararı neydi", "en son", "recent", 0, "lisans kararı neydi"),
    ("son zamanlarda düzeltilen hatalar", "son zamanlarda", "recent", 0, "düzeltilen hatalar"),
    ("bugün proje çipleriyle ilgili ne yaptık", "bugün", "day", 0, "proje çipleriyle ilgili ne yaptık"),
    ("son 3 günde ne değişti", "son 3 günde", "span", 3, "ne değişti"),
    # typed without Turkish letters, as Turkish queries often are (QA round 156-E)
    ("gecen hafta telegram ile ilgili ne yaptik", "gecen hafta", "span", 7, "telegram ile ilgili ne yaptik"),
    ("dun gorevlere hangi ozellik eklendi", "dun", "day", 1, "gorevlere hangi ozellik eklendi"),
    ("son 3 gunde ne degisti", "son 3 gunde", "span", 3, "ne degisti"),
    ("uc hafta once surum", "uc hafta once", "around", 21, "surum"),
    ("yakin zamanda duzeltilen hatalar", "yakin zamanda", "recent", 0, "duzeltilen hatalar"),
    # the genitive, the plural locative of a recent period, a suffix after an apostrophe (QA round 157-A)
    ("geçen ayın raporları", "geçen ayın", "span", 30, "raporları"),
    ("bu haftanın işleri", "bu haftanın", "span", 7, "işleri"),
    ("geçen haftanın notları", "geçen haftanın", "span", 7, "notları"),
    ("gecen ayin raporlari", "gecen ayin", "span", 30, "raporlari"),
    ("son aylarda ne değişti", "son aylarda", "recent", 0, "ne değişti"),
    ("son haftalarda düzeltilen hatalar", "son haftalarda", "recent", 0, "düzeltilen hatalar"),
    ("Dün'kü toplantı", "Dün'kü", "day", 1, "toplantı"),
    ("bugün’ün işleri", "bugün’ün", "day", 0, "işleri"),
    ("dünün notları", "dünün", "day", 1, "notları"),
    # numbers of more than three digits, the amount capped at the calendar's length (QA round 157-A)
    ("what broke 1000 days ago", "1000 days ago", "day", 1000, "what broke"),
    ("son 1500 günde ne değişti", "son 1500 günde", "span", 1500, "ne değişti"),
    ("fossils 99999999999999999999999 years ago", "99999999999999999999999 years ago", "around", 3652059, "fossils"),
    ("the last 5000000 days", "last 5000000 days", "span", 3652059, "the"),
])
def test_time_expressions_are_found_and_taken_out(query, phrase, kind, amount, rest):
    intent, left = find_time_intent(query)
    assert (intent.phrase, intent.kind, intent.amount) == (phrase, kind, amount)
    assert " ".join(left.split()) == rest


@pytest.mark.parametrize("query", ["dünya haritası", "son ayarlar", "yesterdays", "the week view", "recent-files menu",
                                   "last weekend", "latestVersion", "0 days ago", "bu ayar", "dune movie notes",
                                   "dunya haritasi", "son ayarlar"])
def test_other_words_are_no_time_intent(query):
    assert find_time_intent(query) == (None, query)


@pytest.mark.parametrize("query", ["knowledge/yesterday", "yesterday.md", "today() slugify generateId",
                                   "utils.today returns", "#today tag", "@yesterday", "see today-fn", "src\\today",
                                   "yesterday/report.txt", "make last-week", "last week_summary", "dün.md",
                                   "-3 days ago"])
def test_a_time_word_joined_to_a_path_or_code_is_searched(query):
    """QA round 157-A F2: the expressions were bounded by non-word characters, so ``/``, ``.``, ``(`` and ``-`` were
    boundaries and ``knowledge/yesterday`` (a note's id), ``yesterday.md`` (its file) printed "No matches.", and
    ``today()`` was not searched. A phrase joined to a path's or code's character is searched as words (``-3 days
    ago``, a minus before the number, too: no time intent)."""
    assert find_time_intent(query) == (None, query)


@pytest.mark.parametrize("query, phrase", [("what changed yesterday.", "yesterday"), ("yesterday, we shipped", "yesterday"),
                                           ("(last week) releases", "last week"), ("was it today?", "today"),
                                           ("yesterday's notes", "yesterday's"), ("dün. ne oldu", "dün"),
                                           ("what happened yesterday...", "yesterday"), ('"yesterday"', "yesterday")])
def test_a_sentences_punctuation_after_a_time_word_is_no_join(query, phrase):
    assert find_time_intent(query)[0].phrase == phrase


def test_recall_finds_a_note_by_an_id_or_file_name_holding_a_time_word(tiny_vault):
    """QA round 157-A F2, end to end: ``knowledge/yesterday`` and ``yesterday.md`` are the note's id and file."""
    write_docs(tiny_vault, {"knowledge/yesterday.md": "---\ntitle: Yesterday\ndate: 2025-01-01\n---\nThe Beatles"
                                                      " song.\n",
                            "knowledge/today-fn.md": "---\ntitle: The today() helper\ndate: 2025-03-01\n---\nOur"
                                                     " date utility today() returns the local date.\n",
                            "knowledge/other.md": "---\ntitle: Other\ndate: 2026-08-17\n---\nslugify notes\n"})
    index = dreamdb.open(tiny_vault)
    for q in ("knowledge/yesterday", "yesterday.md"):
        assert [h.doc_id for h in index.recall(q, top=1, now=NOW)] == ["knowledge/yesterday"], q
    assert index.recall("today() slugify", top=1, now=NOW)[0].doc_id == "knowledge/today-fn"
    index.close()


def test_windows_against_the_clock():
    day = time_window(find_time_intent("yesterday")[0], NOW_DT)
    assert day.as_json() == {"phrase": "yesterday", "from": "2026-08-17T00:00Z", "to": "2026-08-17T23:59Z",
                             "day": "2026-08-17", "scale_days": 1.0, "undated_recency": 0.5}  # (0.5 where no index is read)
    # a clock with an offset: that zone's yesterday for a time of day, the date for a note dated with it alone
    east = time_window(find_time_intent("dün")[0], datetime(2026, 8, 18, 1, tzinfo=timezone(timedelta(hours=3))))
    assert east.as_json() == {"phrase": "dün", "from": "2026-08-16T21:00Z", "to": "2026-08-17T20:59Z",
                              "day": "2026-08-17", "scale_days": 1.0, "undated_recency": 0.5}
    assert east.describe() == "'dün' (2026-08-17, a time of day 2026-08-16T21:00Z to 2026-08-17T20:59Z, scale 1 d, undated ×0.5)"
    week = time_window(find_time_intent("last week")[0], NOW_DT)
    assert (week.start, week.end, week.scale) == (NOW_DAYS - 7, NOW_DAYS, 7.0)
    ago = time_window(find_time_intent("3 weeks ago")[0], NOW_DT)
    assert (ago.start, ago.end, ago.scale) == (NOW_DAYS - 24.5, NOW_DAYS - 17.5, 7.0)
    assert time_window(find_time_intent("latest")[0], NOW_DT) is None  # (names no period)


def _days_of(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=timezone.utc).timestamp() / 86400.0


@pytest.mark.parametrize("query, inside", [("yesterday", "2026-08-17"), ("2 days ago", "2026-08-16"),
                                           ("dün", "2026-08-17"), ("today", "2026-08-18")])
def test_a_note_dated_with_a_date_alone_is_read_as_its_day(query, inside):
    """QA round 157-A F1: the window of "yesterday" ended a microsecond before the next midnight, and a note dated
    with the next date alone (its midnight UTC) was that microsecond after it: recency 1/(1 + 1.2e-11), shown
    ×1.0000, where the day before's note had 0.5. A note dated with a date alone is read by its date, as
    ``--since yesterday --until yesterday`` reads it: the next date is one day outside, as the one before is."""
    w = time_window(find_time_intent(query)[0], NOW_DT)
    day = _days_of(inside)
    assert S.window_recency(day, w, timed=False) == 1.0
    assert S.window_recency(day + 1.0, w, timed=False) == S.window_recency(day - 1.0, w, timed=False) == 0.5
    assert S.window_recency(day + 2.0, w, timed=False) == pytest.approx(1 / 3)
    # a time of day: that day's instants, to its last one
    assert S.window_recency(day + 0.5, w) == S.window_recency(day + 1.0 - 1e-9, w) == 1.0
    assert S.window_recency(day + 1.25, w) == pytest.approx(0.8)


def test_a_date_alone_is_outside_yesterday_with_a_clock_west_of_utc(monkeypatch):
    """QA round 157-A F1: with the machine's clock in Los Angeles, "yesterday" (local) runs to 07:00 UTC of the
    local today, and today's date written alone (its midnight UTC) fell inside it: the union of the local day and
    the UTC date swallowed it."""
    import time

    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        now = datetime(2026, 8, 18, 10).astimezone()  # (the current time as dreamdb reads it: the machine's zone)
        w = time_window(find_time_intent("yesterday")[0], now, machine_clock=True)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert w.as_json()["from"] == "2026-08-17T07:00Z" and w.as_json()["to"] == "2026-08-18T06:59Z"
    assert S.window_recency(_days_of("2026-08-18"), w, timed=False) == 0.5  # (today's date: outside)
    assert S.window_recency(_days_of("2026-08-17"), w, timed=False) == 1.0
    assert S.window_recency(_days_of("2026-08-18") + 3 / 24, w) == 1.0  # (03:00 UTC: 20:00 yesterday, local)


def test_a_days_window_ends_below_the_next_midnight_far_from_1970():
    """QA round 157-A F1: a microsecond (1.2e-11 days) is below a float's resolution there: the window of
    "yesterday" at the end of 9999 ended at the next midnight, shown ``to 9999-12-31T00:00Z``."""
    w = time_window(find_time_intent("yesterday")[0], datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc))
    last = _days_of("9999-12-31")
    assert w.end < last and w.as_json()["to"] == "9999-12-30T23:59Z"
    assert S.window_recency(last, w) < 1.0 and S.window_recency(last, w, timed=False) == 0.5


@pytest.mark.parametrize("query, phrase, also, rest", [
    ("deploy yesterday or last week", "yesterday", ("last week",), "deploy or"),
    ("dün veya geçen hafta deploy", "dün", ("geçen hafta",), "veya deploy"),
    ("latest deploy from last week", "latest", ("last week",), "deploy from"),
    ("today today", "today", ("today",), ""),
    ("the day before yesterday, not yesterday", "the day before yesterday", ("yesterday",), ", not"),
])
def test_every_time_expression_is_taken_out_the_first_is_the_intent(query, phrase, also, rest):
    """QA round 157-A F5: only the first expression was taken out, the later ones searched as words
    ("deploy yesterday or last week" searched ``week``: a note "Last Week Tonight" came up)."""
    intent, left = find_time_intent(query)
    assert (intent.phrase, intent.also) == (phrase, also)
    assert " ".join(left.split()) == rest


def test_a_later_time_expression_is_not_searched(tiny_vault):
    write_docs(tiny_vault, {"knowledge/lwt.md": "---\ntitle: Last Week Tonight\ndate: 2025-01-01\n---\nThe show's"
                                                " episode list, week by week.\n",
                            "knowledge/deploy.md": "---\ntitle: Deploy note\ndate: 2026-08-17\n---\nWe changed the"
                                                   " deploy pipeline.\n"})
    index = dreamdb.open(tiny_vault)
    assert plan_query("deploy yesterday or last week").terms == ["deploy"]
    hits = index.recall("deploy yesterday or last week", top=5, now=NOW, explain=True)
    assert [h.doc_id for h in hits] == ["knowledge/deploy"]
    assert any("not searched either, the first setting the window: 'last week'" in n for n in index.take_notes())
    index.close()


def test_windows_at_the_ends_of_the_calendar():
    """QA round 157-A F4: ``--explain`` raised OverflowError (exit 70) for a window reaching before the year 1; "today"
    at the end of 9999 fell back to the day before; the year 1 was written ``1-01-01T00:00Z``. The window is read
    whole and shown clamped to the years 1–9999, four-digit years."""
    utc = timezone.utc
    w = time_window(find_time_intent("yesterday")[0], datetime(1, 1, 1, tzinfo=utc))
    assert w.as_json() == {"phrase": "yesterday", "from": "0001-01-01T00:00Z", "to": "0001-01-01T00:00Z",
                           "day": "0001-01-01", "scale_days": 1.0, "undated_recency": 0.5}
    assert S.window_recency(_days_of("0001-01-01"), w, timed=False) == 0.5  # (a day after it: as ever)
    w = time_window(find_time_intent("last 999 years")[0], datetime(500, 1, 1, tzinfo=utc))
    assert w.describe() == "'last 999 years' (0001-01-01T00:00Z to 0500-01-01T00:00Z, scale 364635 d, undated ×0.5)"
    w = time_window(find_time_intent("today")[0], datetime(9999, 12, 31, tzinfo=utc))
    assert w.as_json() == {"phrase": "today", "from": "9999-12-31T00:00Z", "to": "9999-12-31T23:59Z",
                           "day": "9999-12-31", "scale_days": 1.0, "undated_recency": 0.5}
    assert S.window_recency(_days_of("9999-12-31"), w, timed=False) == S.window_recency(_days_of("9999-12-31") + 0.9, w) == 1.0
    # a local day whose midnight is before the year 1 in UTC: 0001-01-01T00:00+09:00 is 0000-12-31T15:00Z
    w = time_window(find_time_intent("yesterday")[0], datetime(1, 1, 2, 5, tzinfo=timezone(timedelta(hours=9))))
    assert (w.start, w.end) == (_days_of("0001-01-01") - 9 / 24, pytest.approx(_days_of("0001-01-02") - 9 / 24))
    assert w.as_json()["from"] == "0001-01-01T00:00Z" and w.as_json()["to"] == "0001-01-01T14:59Z"
    for now in (datetime(1, 1, 1, tzinfo=utc), datetime(9999, 12, 31, 23, 59, tzinfo=utc)):
        for q in ("today", "yesterday", "999 days ago", "last 999 years", "999 years ago", "last week"):
            w = time_window(find_time_intent(q)[0], now)
            assert len(w.describe()) and datetime.fromisoformat(w.as_json()["from"].replace("Z", "+00:00"))


def test_cli_explains_a_window_before_the_year_1(tiny_vault):
    from click.testing import CliRunner

    from dreamdb.cli import cli

    _vault(tiny_vault)
    for now, q in (("0001-01-01", "parser fix yesterday"), ("0500-01-01", "parser fix last 999 years")):
        for extra in ([], ["--json"]):
            out = CliRunner().invoke(cli, ["recall", "--vault", str(tiny_vault), "--now", now, "--explain", *extra, q])
            assert out.exit_code == 0, out.output
            assert "0001-01-01T00:00Z" in out.output


@pytest.mark.parametrize("engine", ["sql", "memory"])
def test_recall_reads_a_date_alone_as_its_day(tiny_vault, engine):
    """QA round 157-A F1, end to end: the note dated with today's date alone is a day away from "yesterday", as
    the day before yesterday's is; the note of yesterday comes first alone."""
    write_docs(tiny_vault, {f"knowledge/{name}.md": f"---\ntitle: Deploy note\ndate: {day}\n---\ndeploy pipeline\n"
                            for name, day in (("a-today", "2026-08-18"), ("b-yday", "2026-08-17"),
                                              ("c-2days", "2026-08-16"))})
    index = dreamdb.open(tiny_vault, engine=engine)
    hits = index.recall("deploy pipeline yesterday", top=3, now=NOW, explain=True)
    assert [(h.doc_id, h.signals["recency"]) for h in hits] == [
        ("knowledge/b-yday", 1.0), ("knowledge/a-today", 0.5), ("knowledge/c-2days", 0.5)]
    hits = index.recall("deploy pipeline 2 days ago", top=3, now=NOW, explain=True)
    assert [(h.doc_id, h.signals["recency"]) for h in hits] == [
        ("knowledge/c-2days", 1.0), ("knowledge/b-yday", 0.5), ("knowledge/a-today", pytest.approx(1 / 3))]
    index.close()


def test_window_recency_is_full_inside_and_halves_one_window_away():
    w = TimeWindow("yesterday", 100.0, 101.0, 1.0)
    assert S.window_recency(100.5, w) == 1.0 and S.window_recency(100.0, w) == 1.0
    assert S.window_recency(99.0, w) == 0.5 and S.window_recency(102.0, w) == 0.5  # one scale before, after
    assert S.window_recency(79.0, w) == pytest.approx(1 / 22)
    assert S.window_recency(None, w) == S.window_recency(float("nan"), w) == S.WINDOW_UNKNOWN == 0.5
    assert 0.0 < S.window_recency(-1e9, w) <= 1.0  # (no underflow: content still orders documents far away)
    # (the memory engine's elementwise form, its pruning bound: the same floats)
    from dreamdb.ranking.memory import MemoryEngine

    class Dated:
        date_days = np.array([100.5, 100.0, 99.0, 102.0, 79.0, np.nan, -1e9])

    assert MemoryEngine._window_recency(Dated(), w).tolist() == [
        S.window_recency(d, w) for d in Dated.date_days.tolist()]


def _vault(vault):
    write_docs(vault, {
        # says "yesterday" (a rare word), but is old
        "knowledge/standup.md": "---\ntitle: Standup notes\ndate: 2026-06-01\n---\nyesterday the parser test fix"
                                " landed, and yesterday the build was green.\n",
        # the parser test fix that landed yesterday
        "knowledge/parser-flake.md": "---\ntitle: Parser flake\ndate: 2026-08-17\n---\nA fix for the flaky parser"
                                     " test.\n",
        # more about it, months ago
        "knowledge/parser-history.md": "---\ntitle: Parser test history\ndate: 2026-03-02\n---\nThe parser test fix,"
                                       " another parser test fix, and the parser test suite.\n",
        "knowledge/undated.md": "parser test fix notes without a date\n",
    })


def test_recall_reads_yesterday_as_a_window_not_a_word(tiny_vault):
    _vault(tiny_vault)
    index = dreamdb.open(tiny_vault)
    for q in ("which parser test fix landed yesterday", "dün parser test fix"):
        hits = index.recall(q, top=4, now=NOW)
        assert hits[0].doc_id == "knowledge/parser-flake", q
    # without the intent, the content decides as before
    assert index.recall("parser test fix", top=1, now=NOW)[0].doc_id == "knowledge/parser-history"


def test_latest_is_not_searched_and_keeps_the_plain_recency(tiny_vault):
    _vault(tiny_vault)
    write_docs(tiny_vault, {"knowledge/latest.md": "---\ndate: 2026-01-01\n---\nthe latest parser test fix\n"})
    index = dreamdb.open(tiny_vault)
    for q in ("latest parser test fix", "en son parser test fix"):
        hits = index.recall(q, top=5, now=NOW, explain=True)
        plain = index.recall("parser test fix", top=5, now=NOW, explain=True)
        assert [(h.doc_id, h.rank_score) for h in hits] == [(h.doc_id, h.rank_score) for h in plain]
        assert hits[0].signals["time_intent"] == {"phrase": q[:-len(" parser test fix")], "from": None, "to": None,
                                                  "day": None, "scale_days": None, "undated_recency": None}
        assert any("names no period" in n for n in index.take_notes())


def test_explain_shows_the_time_intent(tiny_vault):
    _vault(tiny_vault)
    index = dreamdb.open(tiny_vault)
    hits = index.recall("which parser test fix landed yesterday", top=4, now=NOW, explain=True)
    notes = index.take_notes()
    # an undated note: the mean window recency of the three dated ones (yesterday's 1; 2026-06-01, 77 days before
    # the window, 1/78; 2026-03-02, 168 days before, 1/169)
    undated = (1.0 + 1 / 78 + 1 / 169) / 3
    assert any("time intent" in n and "'yesterday' (2026-08-17T00:00Z to 2026-08-17T23:59Z, scale 1 d, undated "
               f"×{undated:.4g})" in n for n in notes), notes
    by_id = {h.doc_id: h for h in hits}
    assert by_id["knowledge/parser-flake"].signals["time_intent"] == {
        "phrase": "yesterday", "from": "2026-08-17T00:00Z", "to": "2026-08-17T23:59Z", "day": "2026-08-17",
        "scale_days": 1.0, "undated_recency": pytest.approx(undated, rel=1e-12)}
    assert by_id["knowledge/parser-flake"].signals["recency"] == 1.0
    assert by_id["knowledge/undated"].signals["recency"] == pytest.approx(undated, rel=1e-6)
    assert not any(t["term"] == "yesterday" for h in hits for t in h.terms)  # (not searched)
    plain = index.recall("parser test fix", top=1, now=NOW, explain=True)
    assert plain[0].signals["time_intent"] is None


def test_cli_json_explain_has_the_time_intent(tiny_vault, tmp_path):
    from click.testing import CliRunner

    from dreamdb.cli import cli

    _vault(tiny_vault)
    out = CliRunner().invoke(cli, ["recall", "--vault", str(tiny_vault), "--now", NOW, "--json", "--explain",
                                    "parser test fix yesterday"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["hits"][0]["doc_id"] == "knowledge/parser-flake"
    assert data["hits"][0]["signals"]["time_intent"]["phrase"] == "yesterday"
    text = CliRunner().invoke(cli, ["recall", "--vault", str(tiny_vault), "--now", NOW, "--explain",
                                     "parser test fix yesterday"])
    assert "recency ×1.0000 (time intent 'yesterday')" in text.output
    # a phrase that names no period sets no window: the recency is the plain one, not labelled (QA round 157-A F7)
    text = CliRunner().invoke(cli, ["recall", "--vault", str(tiny_vault), "--now", NOW, "--explain",
                                     "latest parser test fix"])
    assert "names no period" in text.output and "recency ×" in text.output
    assert "(time intent" not in text.output


def test_a_query_of_the_expression_alone_still_searches_its_words(tiny_vault):
    _vault(tiny_vault)
    index = dreamdb.open(tiny_vault)
    plan = plan_query("yesterday")
    assert plan.terms == ["yesterday"] and plan.time_intent.phrase == "yesterday"
    assert [h.doc_id for h in index.recall("yesterday", top=3, now=NOW)] == ["knowledge/standup"]


@pytest.mark.parametrize("kernel", [None, False])
def test_engines_agree_under_a_time_intent(tiny_vault, kernel):
    _vault(tiny_vault)
    write_docs(tiny_vault, {f"knowledge/n{i}.md": f"---\ndate: 2026-{1 + i % 8:02d}-{1 + i % 27:02d}\n---\nparser"
                            f" fix {'test ' * (i % 5)} note {i}\n" for i in range(60)})
    # dated with a time of day around the clock's days (a date alone is read by its date, these by their instant)
    write_docs(tiny_vault, {f"knowledge/t{i}.md": f"---\ndate: 2026-08-{15 + i % 4}T{i % 24:02d}:30:00+05:00\n---\n"
                            f"parser fix {'test ' * (i % 3)} timed {i}\n" for i in range(24)})
    index = dreamdb.open(tiny_vault)
    index.sync()
    engine = MemoryEngine(index.conn, kernel=kernel)
    for q in ("parser test fix yesterday", "parser fix last week", "parser note today", "parser 3 weeks ago",
              "parser timed 2 days ago", "parser fix timed today"):
        plan = plan_query(q)
        plan = replace(plan, window=time_window(plan.time_intent, NOW_DT))
        for top in (1, 3, 10):
            a = rank(index.conn, plan, top=top, now_days=NOW_DAYS)
            b = engine.rank(plan, top=top, now_days=NOW_DAYS)
            assert [x.doc_id for x in a] == [x.doc_id for x in b], (q, top)
            for x, y in zip(a, b):
                assert x.rank_score == pytest.approx(y.rank_score, rel=1e-9)
                assert x.recency == y.recency == S.window_recency(x.date_days, plan.window, len(x.date or "") > 10)


@pytest.mark.parametrize("kernel", [None, False])
def test_the_memory_engine_prunes_a_time_intent_query_by_each_documents_window_recency(tiny_vault, kernel):
    """QA round 156-H F1: the memory engine pruned a time-intent query with the lowest window recency over the vault's
    dates (1/(1 + 240) for "yesterday" against eight months of notes), so nearly every matching document passed the
    pruning and was ranked in Python: 70–191 ms a query on 60,000 documents against 1.6–3.4 ms without the time
    intent. Each document's own window recency is in its bound now: the bound is its rankScore, and only the
    documents that can make the top pass."""
    from dreamdb.ranking.rank import Filters

    write_docs(tiny_vault, {f"knowledge/n{i}.md": f"---\ndate: 2026-{1 + i % 8:02d}-{1 + i % 27:02d}\n---\nparser"
                            f" fix note {i}\n" for i in range(120)})
    index = dreamdb.open(tiny_vault)
    index.sync()
    engine = MemoryEngine(index.conn, kernel=kernel)
    engine._ensure_loaded()
    plan = plan_query("parser fix yesterday")
    plan = replace(plan, window=time_window(plan.time_intent, NOW_DT))
    near = (engine._near_top_kernel if engine.kernel is not None else engine._near_top_numpy)(
        plan, 3, NOW_DAYS, Filters(), {})
    assert 3 <= len(near[0]) <= 12, len(near[0])  # (of 120 matching notes; ties of one date pass together)
    assert [x.doc_id for x in engine.rank(plan, top=3, now_days=NOW_DAYS)] == [
        x.doc_id for x in rank(index.conn, plan, top=3, now_days=NOW_DAYS)]


@pytest.mark.model
def test_the_dense_channel_carries_the_time_intent(tiny_vault, model_dir, monkeypatch):
    """In hybrid modes the dense channel's scores are multiplied by the window's recency before the fusion, as
    BM25's rankScore is: two notes of one text, the one that matches the question better dated months before the
    other, dated yesterday; asked about yesterday, every mode puts yesterday's first, and its fused score (dense mode: the dense score) is the cosine times the
    recency (``--explain``'s ``dense`` stays the cosine)."""
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    text = "The cache eviction policy drops the least recently used entries first when memory runs low.\n"
    write_docs(tiny_vault, {"knowledge/a-old.md": f"---\ntitle: How cache eviction works\ndate: 2026-03-02\n---\n"
                                                  f"How cache eviction works. {text}",
                            "knowledge/b-new.md": f"---\ntitle: Memory notes\ndate: 2026-08-17\n---\n{text}"})
    index = dreamdb.open(tiny_vault, allow_model_build=False)
    index.refresh_embeddings()
    for mode in ("dense", "hybrid", "rrf"):
        plain = index.recall("how does cache eviction work", top=2, mode=mode, now=NOW, explain=True)
        assert plain[0].doc_id == "knowledge/a-old", mode  # (its title and first line are the question's words)
        hits = index.recall("how did cache eviction work yesterday", top=2, mode=mode, now=NOW, explain=True)
        assert [h.doc_id for h in hits] == ["knowledge/b-new", "knowledge/a-old"], mode
        if mode == "dense":
            for h in hits:
                assert h.rank_score == pytest.approx(h.signals["dense"] * h.signals["recency"], abs=2e-6)
            assert hits[1].signals["recency"] < 0.01
    index.close()


def _spread_vault(vault):
    """A year of dated notes on other things, a deploy fix dated three days before yesterday, and an undated diagram
    that says the question's words more often."""
    write_docs(vault, {f"knowledge/month-{m:02d}.md": f"---\ndate: 2025-{m:02d}-15\n---\nbudget review {m}\n"
                       for m in range(1, 13)})
    write_docs(vault, {"knowledge/deploy-fix.md": "---\ntitle: Rollback fix\ndate: 2026-08-14\n---\nThe deploy"
                                                  " pipeline rollback step fixed.\n",
                       "knowledge/diagram.md": "---\ntitle: Deploy pipeline diagram\n---\ndeploy pipeline stages,"
                                               " deploy pipeline arrows\n"})


def test_an_undated_document_takes_the_dated_documents_mean_window_recency(tiny_vault):
    """QA round 157-A F3, 157-F F2: an undated document had recency 0.5 under every window, the value one window length
    away, so under "yesterday" it came before every dated document more than a day off it (undated diagrams filled a
    one-day question's top 5 over the real vault's dated notes). It takes the mean window recency of the vault's dated
    documents now: the recency a date drawn from the vault's would have on average."""
    _spread_vault(tiny_vault)
    index = dreamdb.open(tiny_vault)
    hits = index.recall("deploy pipeline yesterday", top=2, now=NOW, explain=True)
    window = replace(time_window(find_time_intent("yesterday")[0], NOW_DT), unknown=0.5)
    dates = ["2026-08-14"] + [f"2025-{m:02d}-15" for m in range(1, 13)]
    days = [datetime.fromisoformat(d).replace(tzinfo=timezone.utc).timestamp() / 86400.0 for d in dates]
    mean = sum(S.window_recency(d, window) for d in days) / len(days)
    assert 0.02 < mean < 0.05  # (1/(1 + 3) for the fix, about 1/(1 + 300) for each of the twelve)
    assert [h.doc_id for h in hits] == ["knowledge/deploy-fix", "knowledge/diagram"]
    assert hits[0].signals["recency"] == pytest.approx(0.25, abs=1e-6)
    assert hits[1].signals["recency"] == pytest.approx(mean, abs=1e-6)
    assert hits[0].signals["time_intent"]["undated_recency"] == pytest.approx(mean, rel=1e-12)
    # (without the intent the diagram, which says the words more often, comes first)
    assert index.recall("deploy pipeline", top=1, now=NOW)[0].doc_id == "knowledge/diagram"
    # a window as wide as the vault's history: the undated recency near the dated documents' own
    wide = index.recall("deploy pipeline last 2 years", top=2, now=NOW, explain=True)
    assert wide[0].signals["time_intent"]["undated_recency"] == 1.0


@pytest.mark.parametrize("kernel", [None, False])
def test_the_engines_read_the_same_undated_recency(tiny_vault, kernel):
    """The memory engine's sum of the dated documents' window recency is the SQL engine's float (both exactly
    rounded over the same values), so both engines rank an undated document alike."""
    from dreamdb.ranking.rank import window_recency_sums

    _spread_vault(tiny_vault)
    write_docs(tiny_vault, {f"knowledge/n{i}.md": f"---\ndate: 2026-{1 + i % 8:02d}-{1 + i % 27:02d}\n---\nnote {i}\n"
                            for i in range(60)})
    index = dreamdb.open(tiny_vault)
    index.sync()
    engine = MemoryEngine(index.conn, kernel=kernel)
    for phrase in ("yesterday", "last week", "3 weeks ago", "last 2 years"):
        window = time_window(find_time_intent(phrase)[0], NOW_DT)
        assert engine.window_recency_sums(window) == window_recency_sums(index.conn, window)
        assert window_recency_sums(index.conn, window)[1] == 73
    for engine_name in ("memory", "sql"):
        with dreamdb.open(tiny_vault, engine=engine_name) as ix:
            ix.warm()
            hit = next(h for h in ix.recall("deploy pipeline yesterday", top=5, now=NOW, explain=True)
                       if h.doc_id == "knowledge/diagram")
            assert hit.signals["recency"] == pytest.approx(
                window_recency_sums(index.conn, window := time_window(find_time_intent("yesterday")[0], NOW_DT))[0] / 73,
                abs=1e-6), engine_name


def test_several_vaults_pool_the_undated_recency(tmp_path):
    """Searched together, an undated document of any vault takes the mean window recency of the dated documents of all
    of them, as BM25 pools their statistics: the same undated note ranks alike in each."""
    a, b = tmp_path / "a" / "_dream_context", tmp_path / "b" / "_dream_context"
    _spread_vault(a)
    write_docs(b, {"knowledge/diagram.md": "---\ntitle: Deploy pipeline diagram\n---\ndeploy pipeline stages,"
                                           " deploy pipeline arrows\n",
                   "knowledge/recent.md": "---\ndate: 2026-08-17\n---\nrelease notes\n"})
    with dreamdb.open([a, b]) as index:
        hits = index.recall("deploy pipeline yesterday", top=5, now=NOW, explain=True)
    diagrams = [h for h in hits if h.doc_id == "knowledge/diagram"]
    assert len(diagrams) == 2
    window = replace(time_window(find_time_intent("yesterday")[0], NOW_DT), unknown=0.5)
    dates = ["2026-08-14", "2026-08-17"] + [f"2025-{m:02d}-15" for m in range(1, 13)]
    days = [datetime.fromisoformat(d).replace(tzinfo=timezone.utc).timestamp() / 86400.0 for d in dates]
    pooled = sum(S.window_recency(d, window) for d in days) / len(days)
    assert diagrams[0].signals["recency"] == diagrams[1].signals["recency"] == pytest.approx(pooled, abs=1e-6)


@pytest.mark.model
def test_under_a_time_intent_hybrid_ranks_an_entry_the_dense_channel_cannot_judge_at_its_bm25_rank(tiny_vault, model_dir,
                                                                                              monkeypatch):
    """QA round 157-F: a changelog entry has no vector, so in the fusion it had BM25's vote alone against two for every
    embedded note, and hybrid put BM25's right entry below notes that only resembled a time question (40 judged time
    questions over the real vault: hybrid recall@5 0.625 against BM25's 0.925, every loss an entry). Under a time
    intent an entry takes its BM25 rank in the dense channel too (``+unjudged``); without one, it is ranked as
    before: the embedded note, BM25's third, first on its two votes."""
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    entries = [{"date": "2026-08-17", "type": "fix", "scope": "release",
                "summary": "Release signing uses the new certificate",
                "description": "The release signing step of the mac build uses the new certificate."},
               {"date": "2026-08-17", "type": "chore", "scope": "release", "summary": "Release certificate renewed",
                "description": "The release signing certificate was renewed in the keychain."}]
    write_docs(tiny_vault, {
        "core/CHANGELOG.json": json.dumps(entries),
        "knowledge/signing.md": "---\ntitle: Code signing overview\ndate: 2026-08-17\n---\nHow the build signs the"
                                " mac app: the certificate, the keychain, the notarisation.\n",
    })
    index = dreamdb.open(tiny_vault, allow_model_build=False)
    index.refresh_embeddings()
    bm25 = [h.doc_id for h in index.recall("release signing certificate yesterday", top=3, now=NOW)]
    assert bm25 == ["changelog/2026-08-17-release-1", "changelog/2026-08-17-release-2", "knowledge/signing"]
    hits = index.recall("release signing certificate yesterday", top=3, mode="hybrid", now=NOW, explain=True)
    assert [(h.doc_id, h.signals["fusion"]) for h in hits] == [(bm25[0], "rrf+unjudged"), (bm25[1], "rrf+unjudged"),
                                                               (bm25[2], "rrf")]
    assert hits[0].signals["dense"] is None  # (no cosine of its own: the rank it took is BM25's)
    plain = index.recall("release signing certificate", top=3, mode="hybrid", now=NOW, explain=True)
    assert [(h.doc_id, h.signals["fusion"]) for h in plain] == [(bm25[2], "rrf"), (bm25[0], "rrf"), (bm25[1], "rrf")]
    index.close()


@pytest.mark.model
def test_under_a_time_intent_the_fusion_reads_bm25s_coverage_from_its_best_raw_match(tiny_vault, model_dir, monkeypatch):
    """QA round 157-F F1: the fusion's trust in BM25 is bounded by the share of the query's terms its top match holds;
    under a time intent the top by rankScore is the match the window brought first, which may hold fewer of the
    words (an entry of yesterday holding 2 of 4 against a note of March holding all 4), so naming the right window
    cut BM25's say in the fusion (coverage 1.0 → 0.5). The bound reads the best raw match, top_raw's, as without it."""
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    write_docs(tiny_vault, {
        "core/CHANGELOG.json": json.dumps([{"date": "2026-08-17", "type": "fix", "scope": "cache",
                                            "summary": "Cache eviction fixed", "description": "Cache eviction fixed."}]),
        "knowledge/cache.md": "---\ntitle: Cache eviction policy\ndate: 2026-03-02\n---\nThe cache eviction policy"
                              " drops the least recently used entries under memory pressure.\n",
    })
    index = dreamdb.open(tiny_vault, allow_model_build=False)
    index.refresh_embeddings()
    bm25 = index.recall("cache eviction policy pressure yesterday", top=2, now=NOW)
    assert bm25[0].doc_id == "changelog/2026-08-17-cache-1" and bm25[1].score > bm25[0].score
    hits = index.recall("cache eviction policy pressure yesterday", top=2, mode="hybrid", now=NOW, explain=True)
    assert {h.signals["bm25_coverage"] for h in hits} == {1.0}
    index.close()


# -- a window whose words match nothing: the documents dated in it (QA round 157-I F1) ---------------------------------
def _dated_vault(vault):
    write_docs(vault, {
        "knowledge/yday-date.md": "---\ntitle: Parser flake\ndate: 2026-08-17\n---\nA fix for the parser.\n",
        "knowledge/yday-timed.md": "---\ntitle: Build cache\ndate: 2026-08-17T10:00:00Z\n---\nThe build cache.\n",
        "state/yday-task.md": "---\nname: Ship the release\nstatus: todo\nupdated: 2026-08-17\n---\nShip it.\n",
        "knowledge/today.md": "---\ntitle: Linter\ndate: 2026-08-18\n---\nThe linter.\n",
        "knowledge/before.md": "---\ntitle: Docs\ndate: 2026-08-16T23:30:00Z\n---\nThe docs.\n",
        "knowledge/undated.md": "---\ntitle: Misc\n---\nOther things.\n",
    })


@pytest.mark.parametrize("engine", ["sql", "memory"])
def test_a_window_whose_words_match_nothing_lists_the_documents_dated_in_it(tiny_vault, engine):
    _dated_vault(tiny_vault)
    index = dreamdb.open(tiny_vault, engine=engine)
    hits = index.recall("what changed yesterday", top=5, now=NOW)
    # newest first (the timed note at 10:00 after the date alone's midnight), then doc_id; raw score 0
    assert [h.doc_id for h in hits] == ["knowledge/yday-timed", "knowledge/yday-date", "task/yday-task"]
    assert all(h.score == 0.0 and h.rank_score == 0.0 and h.mode == "bm25" for h in hits)
    assert index.take_notes() == ["nothing matched 'what changed'; the documents dated in the window 'yesterday'"
                                  " (2026-08-17), newest first"]  # (said without explain)
    assert [h.doc_id for h in index.recall("what changed yesterday", top=1, now=NOW)] == ["knowledge/yday-timed"]
    # the filters apply
    assert [h.doc_id for h in index.recall("changes from yesterday", top=5, types="task", now=NOW)] == [
        "task/yday-task"]
    # the date-alone / timed reading of window_recency: 2026-08-16T23:30Z is before yesterday, 2026-08-18 after
    week = [h.doc_id for h in index.recall("what did we do last week", top=10, now=NOW)]
    assert week == ["knowledge/today", "knowledge/yday-timed", "knowledge/yday-date", "task/yday-task",
                    "knowledge/before"]
    with_explain = index.recall("what changed yesterday", top=5, now=NOW, explain=True)
    assert [h.signals["recency"] for h in with_explain] == [1.0, 1.0, 1.0]
    index.take_notes()
    # words that match: ranked as ever, no listing
    hits = index.recall("parser yesterday", top=5, now=NOW)
    assert [h.doc_id for h in hits] == ["knowledge/yday-date"] and hits[0].score > 0
    assert not any("nothing matched" in n for n in index.take_notes())
    # no window ("latest"): nothing listed
    assert index.recall("latest changes", top=5, now=NOW) == []
    assert not any("dated in the window" in n for n in index.take_notes())
    index.close()


def _listed_by_the_note(note: str, vault) -> list[str]:
    """The ids the ``list`` command a note names (between backticks) lists, run as pasted."""
    import shlex

    from click.testing import CliRunner

    from dreamdb.cli import cli

    words = shlex.split(note.split("`")[1])
    args = words[words.index("list"):]
    if "--vault" not in args:
        args += ["--vault", str(vault)]
    out = CliRunner().invoke(cli, [*args, "--json"])
    assert out.exit_code == 0, out.output
    return [d["doc_id"] for d in json.loads(out.stdout)]


def test_a_window_with_no_document_dated_in_it_says_how_to_list_by_date(tiny_vault):
    """The note of a time question that matched nothing and found no document in its window names the ``list``
    command that lists the window, its bounds the expression at the recall's clock (QA round 157-J F2: bounds cut to
    the minute, or a calendar day read in UTC where the clock had an offset, listed a document the window left out),
    and says where filters emptied the window, the command listing it without them (F1: it said no document was dated
    in a window that held one)."""
    _dated_vault(tiny_vault)
    index = dreamdb.open(tiny_vault)
    assert index.recall("what changed 5 days ago", top=5, now=NOW) == []
    notes = index.take_notes()
    note = next(n for n in notes if n.startswith("nothing matched 'what changed', and no document is dated in the"
                                                 " window '5 days ago' (2026-08-13); `"))
    assert "list --since '5 days ago' --until '5 days ago' --now 2026-08-18T12:00:00+00:00" in note, note
    assert _listed_by_the_note(note, tiny_vault) == []
    # a document dated in it that the filters drop is not listed either; the note says the filters emptied it
    assert index.recall("what changed yesterday", top=5, types="feature", now=NOW) == []
    note = next(n for n in index.take_notes() if "nothing matched" in n)
    assert "no document the filters keep is dated in the window 'yesterday'" in note and "filters left out" in note
    assert sorted(_listed_by_the_note(note, tiny_vault)) == sorted(
        h.doc_id for h in index.recall("what changed yesterday", top=5, now=NOW))
    assert index.recall("what changed last week", top=5, now="2026-10-18T12:00:00Z") == []
    assert any("(2026-10-11T12:00Z to 2026-10-18T12:00Z)" in n and "list --since 'last week' --until 'last week'"
               " --now 2026-10-18T12:00:00+00:00" in n for n in index.take_notes())
    index.close()


def test_the_list_command_a_note_names_lists_what_the_window_holds_at_the_recalls_clock(tmp_path):
    """QA round 157-J F2: at a clock with seconds, or with an offset, the command's bounds (cut to the minute, or the
    day's date read in UTC) listed a document the window had left out."""
    vault = tmp_path / "_dream_context"
    write_docs(vault, {"knowledge/zebra.md": "---\ndate: 2026-01-01\n---\nzebra\n",
                       "knowledge/late.md": "---\ndate: 2026-08-15T22:00:00Z\n---\nlate\n"})
    index = dreamdb.open(vault)
    for query, now in (("what changed last week", "2026-01-08T00:00:30Z"),
                       ("what changed yesterday", "2026-08-16T10:00:00+03:00")):
        assert index.recall(query, top=5, now=now) == [], query
        note = next(n for n in index.take_notes() if "nothing matched" in n)
        assert "no document is dated in the window" in note, note
        assert _listed_by_the_note(note, vault) == [], note
    index.close()


def test_several_vaults_list_the_documents_dated_in_the_window_when_none_matched(tmp_path):
    a, b = tmp_path / "a" / "_dream_context", tmp_path / "b" / "_dream_context"
    write_docs(a, {"knowledge/one.md": "---\ndate: 2026-08-17T09:00:00Z\n---\nalpha\n",
                   "knowledge/old.md": "---\ndate: 2026-01-01\n---\nalpha\n"})
    write_docs(b, {"knowledge/two.md": "---\ndate: 2026-08-17T11:00:00Z\n---\nbeta\n"})
    with dreamdb.open([a, b]) as index:
        hits = index.recall("what changed yesterday", top=5, now=NOW)
        assert [(h.doc_id, h.vault) for h in hits] == [("knowledge/two", str(b)), ("knowledge/one", str(a))]
        notes = index.take_notes()
        assert notes.count("nothing matched 'what changed'; the documents dated in the window 'yesterday'"
                           " (2026-08-17), newest first") == 1, notes
        # a vault whose words matched: its hits alone, no listing of the other's
        hits = index.recall("alpha yesterday", top=5, now=NOW)
        assert [h.doc_id for h in hits] == ["knowledge/one", "knowledge/old"] and hits[0].score > 0
        assert not any("dated in the window" in n for n in index.take_notes())


def test_cli_lists_yesterdays_document_of_the_example_vault():
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from tests.conftest import ROOT

    for query in ("what changed yesterday", "yesterday", "changes from yesterday", "what did we do last week"):
        out = CliRunner().invoke(cli, ["recall", "--vault", str(ROOT / "examples"), query, "--now", "2026-08-15"])
        assert out.exit_code == 0 and "task/add-dedup-gate" in out.stdout and "No matches." not in out.stdout, query
        assert "note: nothing matched" in out.stderr, query
    out = CliRunner().invoke(cli, ["recall", "--vault", str(ROOT / "examples"), "--json", "what changed yesterday",
                                    "--now", "2026-08-15"])
    data = json.loads(out.stdout)
    assert [h["doc_id"] for h in data["hits"]] == ["task/add-dedup-gate"]
    assert data["notes"] == ["nothing matched 'what changed'; the documents dated in the window 'yesterday'"
                             " (2026-08-14), newest first"]


def test_the_prompt_hook_injects_no_listing_by_date(tmp_path):
    """The listing's hits have raw score 0: the hook, which gates on it, stays silent."""
    import os
    import subprocess
    import sys

    today = datetime.now().astimezone().date().isoformat()
    vault = tmp_path / "proj" / "_dream_context"
    write_docs(vault, {f"knowledge/n{i}.md": f"---\ntitle: Note {i}\ndate: {today}\n---\nzebra {i}\n"
                       for i in range(3)})
    with dreamdb.open(vault) as index:  # (the recall lists them)
        assert len(index.recall("what changed today", top=5)) == 3
    log = tmp_path / "h.log"
    p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "user-prompt-submit"],
                       input=json.dumps({"prompt": "what changed today", "cwd": str(vault.parent)}).encode(),
                       capture_output=True, env={**os.environ, "DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}, timeout=120)
    assert p.returncode == 0 and p.stdout == b"", p.stdout
    assert "no hit holds the prompt's words (first knowledge/n0, raw BM25 score 0); nothing printed" in log.read_text()
