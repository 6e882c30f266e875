"""Filters before the limit, time windows, expiry and confidence (SPEC §5)."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys

import pytest

import dreamdb
from dreamdb.errors import UsageError
from tests.conftest import write_doc

NOW = "2026-08-18T00:00:00Z"


@pytest.fixture()
def vault(tiny_vault):
    write_doc(tiny_vault, "knowledge/old.md", "---\ntitle: Old\ndate: 2025-01-01\ntags: [ops]\n---\nquokka notes\n")
    write_doc(tiny_vault, "knowledge/new.md", "---\ntitle: New\nupdated: 2026-08-10\ntags: ['topic:ops', misc]\n---\nquokka notes\n")
    write_doc(tiny_vault, "knowledge/gone.md", "---\ntitle: Gone\nexpires: 2026-01-01\n---\nquokka notes\n")
    write_doc(tiny_vault, "knowledge/unsure.md",
              "---\ntitle: Unsure\nconfidence: 0.1\nupdated: 2026-08-10\ntags: ['topic:ops', misc]\n---\nquokka notes\n")
    write_doc(tiny_vault, "state/task.md", "---\ntitle: Task\nstatus: completed\npriority: low\nupdated: 2026-08-10\n---\nquokka notes\n")
    write_doc(tiny_vault, "knowledge/star.md", "---\ntitle: Star ★★★ rule\nupdated: 2026-08-10\n---\nquokka notes\n")
    return tiny_vault


def ids(hits):
    return [h.doc_id for h in hits]


def test_expired_documents_leave_recall(vault):
    index = dreamdb.open(vault)
    assert "knowledge/gone" not in ids(index.recall("quokka", top=10, now=NOW))
    assert "knowledge/gone" in ids(index.recall("quokka", top=10, now=NOW, include_expired=True))
    assert "knowledge/gone" in ids(index.recall("quokka", top=10, now="2025-12-01T00:00:00Z"))
    # a date alone lasts its whole day, as --until reads one (QA round 48: expired at 00:00 that day)
    assert "knowledge/gone" in ids(index.recall("quokka", top=10, now="2026-01-01T23:59:59Z"))
    assert "knowledge/gone" not in ids(index.recall("quokka", top=10, now="2026-01-02T00:00:01Z"))


def test_a_date_alone_expires_at_midnight_utc_ending_its_day(vault):
    """QA round 145-E F2: ``expires: 2026-01-01`` was still kept at 2026-01-02T00:00:00Z (recall and ``list
    --hide-expired``), gone only a microsecond later; docs/schema.md says it expires at 00:00 UTC of the next day.
    An instant expires at itself too."""
    write_doc(vault, "knowledge/noon.md", "---\ntitle: Noon\nexpires: 2026-01-01T12:00:00Z\n---\nquokka notes\n")
    index = dreamdb.open(vault)
    for doc, last, first_gone in (("knowledge/gone", "2026-01-01T23:59:59.999Z", "2026-01-02T00:00:00Z"),
                                  ("knowledge/noon", "2026-01-01T11:59:59.999Z", "2026-01-01T12:00:00Z")):
        assert doc in ids(index.recall("quokka", top=10, now=last))
        assert doc in [d["doc_id"] for d in index.list_documents(include_expired=False, now=last)]
        assert doc not in ids(index.recall("quokka", top=10, now=first_gone))
        assert doc not in [d["doc_id"] for d in index.list_documents(include_expired=False, now=first_gone)]


def test_only_expired_matches_get_a_note(vault):
    write_doc(vault, "knowledge/giraffe.md", "---\ntitle: Giraffe\nexpires: 2026-01-01\n---\ngiraffe census\n")
    index = dreamdb.open(vault)
    index.take_notes()
    assert index.recall("giraffe", now=NOW) == []
    assert any("past their expires date" in n for n in index.take_notes())
    assert index.recall("zebra", now=NOW) == []  # no match at all: no such note
    assert not any("expires" in n for n in index.take_notes())
    assert ids(index.recall("quokka", top=10, now=NOW)) and not any("expires" in n for n in index.take_notes())


def test_unknown_status_is_named_with_the_ones_present(vault):
    index = dreamdb.open(vault)
    index.take_notes()
    assert index.recall("quokka", status="bogus", now=NOW) == []
    (note,) = [n for n in index.take_notes() if "status" in n]
    assert "no document has the status bogus" in note and "completed" in note
    assert ids(index.recall("quokka", status="COMPLETED", now=NOW)) == ["task/task"]
    assert not [n for n in index.take_notes() if "status" in n]


def test_type_names_ignore_case(vault):
    index = dreamdb.open(vault)
    assert ids(index.recall("quokka", top=1, types="TASK", now=NOW)) == ["task/task"]
    assert "task/task" not in ids(index.recall("quokka", top=10, exclude_types="Task", now=NOW))
    assert [d["doc_id"] for d in index.list_documents(types="TASK")] == ["task/task"]


def test_a_mistyped_type_gets_the_closest_name(vault):
    """QA round 119-A F6: ``--types featur`` said "Unknown document type" with the list, not the type meant."""
    index = dreamdb.open(vault)
    with pytest.raises(UsageError) as info:
        index.recall("x", types="featur")
    assert info.value.message == "Unknown document type 'featur'; did you mean 'feature'?"
    assert info.value.hint.startswith("Types: knowledge, feature")
    with pytest.raises(UsageError) as info:
        index.recall("x", exclude_types="zzz")
    assert info.value.message == "Unknown document type 'zzz'"


def test_confidence_status_and_recency_order_equal_matches(vault):
    hits = dreamdb.open(vault).recall("quokka", top=10, now=NOW, explain=True)
    by = {h.doc_id: h for h in hits}
    assert by["knowledge/new"].score == pytest.approx(by["knowledge/unsure"].score)  # same text length and terms
    assert by["knowledge/unsure"].signals["confidence_factor"] == pytest.approx(0.8 + 0.2 * 0.1)
    assert by["task/task"].signals["status_factor"] == 0.85
    assert by["knowledge/new"].rank_score > by["knowledge/unsure"].rank_score
    assert by["knowledge/new"].signals["recency"] > by["knowledge/old"].signals["recency"]


def test_filters_apply_before_the_limit(vault):
    index = dreamdb.open(vault)
    assert ids(index.recall("quokka", top=1, tags="misc", now=NOW)) == ["knowledge/new"]
    assert set(ids(index.recall("quokka", top=5, tags="topic:ops", now=NOW))) == {"knowledge/new", "knowledge/old", "knowledge/unsure"}
    assert ids(index.recall("quokka", top=1, types="task", now=NOW)) == ["task/task"]
    assert ids(index.recall("quokka", top=5, status="completed", now=NOW)) == ["task/task"]
    assert ids(index.recall("quokka", top=5, level=3, now=NOW)) == ["knowledge/star"]
    assert "task/task" not in ids(index.recall("quokka", top=10, level=2, now=NOW))  # priority: low → level 1
    assert ids(index.recall("quokka", top=5, until="2025-06-01", now=NOW)) == ["knowledge/old"]
    window = ids(index.recall("quokka", top=10, since="-30d", now=NOW))
    assert "knowledge/old" not in window and "knowledge/new" in window
    assert ids(index.recall("quokka", top=10, since="2 weeks", now=NOW)) == ids(index.recall("quokka", top=10, since="-14d", now=NOW))


def test_bad_filter_values(vault):
    index = dreamdb.open(vault)
    for kwargs in ({"since": "whenever"}, {"level": 4}, {"types": "nope"}, {"top": 0}, {"mode": "fuzzy"}, {"now": "soon"}):
        with pytest.raises(UsageError):
            index.recall("quokka", **kwargs)
    # an empty filter string (`--types ""`, an unset shell variable) is not "every type" (QA round 23)
    for kwargs in ({"types": ""}, {"exclude_types": " "}, {"tags": ","}, {"status": ""}, {"types": []}, {"tags": [" "]}):
        with pytest.raises(UsageError, match="is empty|names nothing") as info:  # (QA rounds 23, 24: [] too)
            index.recall("quokka", **kwargs)
        flag = "--" + next(iter(kwargs)).replace("_", "-")  # QA round 42: the hint spoke Python ("None: no filter")
        assert f"leave {flag} out for no filter" in info.value.hint, info.value.hint
    with pytest.raises(UsageError, match="types names nothing \\(--types ',,,' on the command line\\)"):
        index.recall("quokka", types=",,,")  # quoted as given, not as "" (QA round 35)
    with pytest.raises(UsageError, match="--exclude-types"):
        index.recall("quokka", exclude_types="")  # the message names the flag as well
    # the API's own names first, the flag beside (QA round 37: "--now must be…" from a Python call)
    with pytest.raises(UsageError, match=r"^now \(--now\) must be an ISO-8601 instant, got 'soon'"):
        index.recall("quokka", now="soon")
    with pytest.raises(UsageError, match=r"^since \(--since 2026-08-02\) is after until"):
        index.recall("quokka", since="2026-08-02", until="2026-08-01")
    # QA round 121-C F3: --now is read as --since and frontmatter dates are (fromisoformat took fewer forms, fewer
    # still on Python 3.10): the same clock in every ISO form of a day; a month or a year alone is no clock
    same = [h.doc_id for h in index.recall("quokka", top=10, now="2026-08-18T00:00:00Z", since="2026-08-10")]
    for form in ("2026-230", "20260818", "2026-W34-2", "2026-08-18T00:00:00z", "2026-08-17T24:00",
                 "2026-08-18T03:00:00+0300", "2026-08-18T00:00:00,0Z"):
        assert [h.doc_id for h in index.recall("quokka", top=10, now=form, since="2026-08-10")] == same, form
    for form in ("2026-08", "2026", "2026-W34", "2025-W53-1"):
        with pytest.raises(UsageError, match="must be an ISO-8601 instant"):
            index.recall("quokka", now=form)


def test_corpus_wide_filter_questions_use_an_index(vault):
    """Migration 008: 'has anything expired?' (after an empty result, before a hybrid query) and 'which
    statuses exist?' (after an empty result filtered by status) read an index, not the documents table
    with its bodies; the answers stay the same."""
    from dreamdb.ranking.rank import any_expired

    index = dreamdb.open(vault)
    index.sync()
    sql = "EXPLAIN QUERY PLAN SELECT EXISTS (SELECT 1 FROM documents WHERE expires_days <= ?)"
    plan = " ".join(str(r) for r in index.conn.execute(sql, (0.0,)))
    assert "documents_expires" in plan and "SCAN documents" not in plan
    sql = "EXPLAIN QUERY PLAN SELECT DISTINCT LOWER(status) FROM documents WHERE status IS NOT NULL"
    plan = " ".join(str(r) for r in index.conn.execute(sql))
    assert "COVERING INDEX documents_status" in plan and "SCAN documents" not in plan
    gone = index.conn.execute("SELECT expires_days FROM documents WHERE doc_id = 'knowledge/gone'").fetchone()[0]
    assert any_expired(index.conn, gone + 1) and any_expired(index.conn, gone)  # (expired from that instant on)
    assert not any_expired(index.conn, math.nextafter(gone, -math.inf))


def test_dense_channel_filters_documents_only_when_some_are_dropped(vault):
    from dreamdb.hybrid import _allowed_docs
    from dreamdb.ranking.rank import Filters

    index = dreamdb.open(vault)
    index.sync()
    conn = index.conn
    gone = conn.execute("SELECT expires_days FROM documents WHERE doc_id = 'knowledge/gone'").fetchone()[0]
    every = {r[0] for r in conn.execute("SELECT id FROM documents")}
    assert _allowed_docs(conn, Filters(), gone - 1) is None  # nothing expired yet: plain KNN
    kept = _allowed_docs(conn, Filters(), gone + 1)
    gone_id = conn.execute("SELECT id FROM documents WHERE doc_id = 'knowledge/gone'").fetchone()[0]
    assert kept == every - {gone_id}
    assert _allowed_docs(conn, Filters(include_expired=True), gone + 1) is None
    assert _allowed_docs(conn, Filters(types=["task"]), gone - 1) == \
        {r[0] for r in conn.execute("SELECT id FROM documents WHERE type = 'task'")}


@pytest.mark.parametrize("flag", ["explain", "include_expired"])
@pytest.mark.parametrize("value", ["no", 0, None, "false"])
def test_recall_flags_must_be_bools(vault, flag, value):
    """QA round 12: ``include_expired="no"`` was true and returned expired documents."""
    index = dreamdb.open(vault)
    with pytest.raises(UsageError, match=f"{flag} must be True or False"):
        index.recall("quokka", now=NOW, **{flag: value})
    assert "knowledge/gone" in [h.doc_id for h in index.recall("quokka", top=10, now=NOW, include_expired=True)]
    assert "knowledge/gone" not in [h.doc_id for h in index.recall("quokka", top=10, now=NOW, include_expired=False)]
    index.close()


def test_an_empty_result_under_filters_says_the_query_matches_without_them(vault):
    """New-user review: ``--since -30d`` on the example vault returned nothing and said nothing."""
    index = dreamdb.open(vault)
    assert index.recall("quokka", since="2026-08-15", until="2026-08-17", now=NOW) == []
    notes = index.take_notes()
    assert any("not within the filters (since: dates 2026-08-15 to 2026-08-17)" in n
               and "the best match without them is" in n for n in notes), notes
    assert index.recall("quokka", types="thesis", now=NOW) == []
    assert any("not within the filters (types)" in n and ", dated 2026-" in n for n in index.take_notes())
    assert index.recall("zzqxv", types="thesis", now=NOW) == [] and not any("not within" in n for n in index.take_notes())
    rankings = []
    real = index._rank
    index._rank = lambda *a, **k: rankings.append(k["filters"]) or real(*a, **k)
    assert index.recall("zzqxv", types="thesis", since="2026-01-01", now=NOW) == []
    assert len(rankings) == 2 and rankings[1].include_expired  # the recall's own, then one to ask: no match anywhere
    index.close()


def test_api_arguments_of_the_wrong_type_are_usage_errors(vault):
    """QA round 13: recall(mode=3) raised AttributeError; sync(force="no") rebuilt the index."""
    index = dreamdb.open(vault)
    index.sync()
    with pytest.raises(UsageError, match="mode must be a string"):
        index.recall("quokka", mode=3)
    for flag in ("force", "check"):
        with pytest.raises(UsageError, match=f"{flag} must be True or False"):
            index.sync(**{flag: "no"})
    assert not index.sync(force=False).rebuilt
    with pytest.raises(UsageError, match="progress must be a function"):
        index.sync(progress=5)
    with pytest.raises(UsageError, match="force must be True or False"):
        index.refresh_embeddings(force="no")  # (QA round 68 M1: re-embedded everything)
    for call in (index.sync_for_read, index.sync_for_dedup):  # (QA round 151-C F4: "no" read as true)
        with pytest.raises(UsageError, match="wait_for_first_build must be True or False, got 'no'"):
            call(wait_for_first_build="no")
    with pytest.raises(UsageError, match="check must be True or False"):
        index.sync_for_read(check="no")
    assert ids(index.recall("quokka", mode=" BM25 ", now=NOW))  # spaces and case as DREAMDB_RECALL_MODE's (L8)
    index.close()


class _BytesPath:
    """An ``os.PathLike`` whose ``__fspath__`` gives bytes (QA round 139-A F3: a TypeError from deep inside)."""

    def __fspath__(self):
        return b"/tmp/index.db"


@pytest.mark.parametrize("kwargs, message", [
    ({"include_archives": "no"}, "include_archives must be True or False"),
    ({"auto_sync": "no"}, "auto_sync must be True or False"),
    ({"allow_model_build": "no"}, "allow_model_build must be True or False"),
    ({"lock_timeout_ms": "x"}, "lock_timeout_ms must be a whole number"),
    ({"lock_timeout_ms": -1}, "lock_timeout_ms must be a whole number"),
    ({"lazy_refresh_max": "x"}, "lazy_refresh_max must be a whole number"),
    ({"index_path": 5}, "index_path must be a path"),
    ({"index_path": ""}, "index_path is empty"),  # (QA round 75 F11: meant the default index silently)
    ({"index_path": "  "}, "index_path is empty"),  # (QA round 79 F7: an index named two spaces)
    ({"index_path": "/tmp/a\x00b.db"}, "index_path holds a NUL character"),  # (QA round 114-A F3: a raw ValueError)
    ({"index_path": _BytesPath()}, r"index_path must be a path \(str or os.PathLike\), got .*gives bytes"),
    ({"lexicon": _BytesPath()}, r"lexicon must be a path \(str or os.PathLike\), got .*gives bytes"),
    ({"lexicon": ""}, "lexicon is empty"),  # (QA round 139-A F6: ". is not a regular file", a LexiconError)
    ({"lexicon": " "}, "lexicon is empty"),
])
def test_open_refuses_arguments_of_the_wrong_type(vault, kwargs, message):
    """QA round 68 M1: open() took them and failed at the first recall (ValueError, TypeError), or read
    auto_sync="no" as true."""
    with pytest.raises(UsageError, match=message):
        dreamdb.open(vault, **kwargs)
    assert not (vault / ".dreamdb").exists()  # refused before anything was created


def test_open_refuses_a_vault_path_holding_a_nul(tmp_path):
    """QA round 114-A F3: ``dreamdb.open('/tmp/\\x00x')`` raised the ValueError "embedded null byte"."""
    from pathlib import PurePosixPath

    for vault in ("/tmp/\x00x", PurePosixPath(f"{tmp_path}/a\x00b")):
        with pytest.raises(UsageError, match="vault holds a NUL character"):
            dreamdb.open(vault)


def test_a_vault_path_whose_fspath_gives_bytes_is_a_usage_error():
    """QA round 139-A F3: an os.PathLike giving bytes raised TypeError, where bytes themselves are refused."""
    with pytest.raises(UsageError, match=r"vault must be a path \(str or os.PathLike\), got .*gives bytes b'/tmp/"):
        dreamdb.open(_BytesPath())


def test_a_relative_or_home_index_path_is_made_absolute_once(vault, tmp_path, monkeypatch):
    """QA round 139-A F1: ``index_path='r.db'`` was read from the current folder at each use (an ``os.chdir`` built
    a second index there, "the index file r.db was deleted or replaced since it was opened; reopened"), and
    ``'~/i.db'`` made a folder named ``~``: both are read as the vault's path and DREAMDB_INDEX are."""
    home, first, second = tmp_path / "home", tmp_path / "first", tmp_path / "second"
    for folder in (home, first, second):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(first)
    index = dreamdb.open(vault, index_path="r.db")
    assert ids(index.recall("quokka", top=10, now=NOW)) and index.index_path == first / "r.db"
    monkeypatch.chdir(second)
    assert ids(index.recall("quokka", top=10, now=NOW)) and index.take_notes() == []
    assert index.status()["index"] == str(first / "r.db") and os.listdir(second) == []
    index.close()
    with dreamdb.open(vault, index_path="~/i.db") as at_home:
        assert at_home.recall("quokka", top=10, now=NOW) and at_home.index_path == home / "i.db"
    assert (home / "i.db").is_file() and os.listdir(second) == []  # (no folder named ~)
    os.rmdir(second)  # a relative path from a folder that is gone: said so, as for DREAMDB_INDEX
    with pytest.raises(UsageError, match=r"index_path='r.db' is a relative path, and the current folder no longer"):
        dreamdb.open(vault, index_path="r.db")


def test_recall_names_the_type_of_a_time_that_is_no_string(vault):
    """QA round 139-A F5: ``now=1755475200`` was "must be an ISO-8601 instant, got '1755475200'" (quoted as text),
    ``since=-30`` and a timedelta "Cannot understand the time '-30'"; a date is still read as its day."""
    from datetime import date, timedelta

    index = dreamdb.open(vault)
    with pytest.raises(UsageError) as info:
        index.recall("quokka", now=1755475200)
    assert info.value.message == "now must be a datetime or an ISO-8601 string, got int 1755475200"
    for name, value, shown in (("since", -30, "int -30"), ("until", 2.5, "float 2.5"),
                               ("since", timedelta(days=-30), "timedelta datetime.timedelta(days=-30)")):
        with pytest.raises(UsageError) as info:
            index.recall("quokka", now=NOW, **{name: value})
        assert info.value.message == f"{name} must be an ISO-8601 or relative time (a string) or a datetime, got {shown}"
        with pytest.raises(UsageError, match=rf"^{name} must be"):
            index.list_documents(**{name: value})
    assert ids(index.recall("quokka", top=10, since=date(2026, 8, 1), now=date(2026, 8, 18))) == \
        ids(index.recall("quokka", top=10, since="2026-08-01", now="2026-08-18"))


def test_rebuild_needs_a_reason(vault):
    """QA round 75 F11: ``rebuild(None)`` reported "… was unreadable (None); rebuilt from the vault"."""
    with dreamdb.open(vault) as index:
        for reason in (None, "", "  ", 5):
            with pytest.raises(UsageError, match="reason must be a non-empty string"):
                index.rebuild(reason)
        assert index.rebuild("checked by hand").documents > 0


def test_a_rebuild_a_caller_asked_for_is_worded_as_a_request(vault):
    """QA round 151-C F3: ``rebuild("requested by the agent")`` warned "index at … was unreadable (requested by the
    agent); rebuilt from the vault": a caller's reason is a request, not what the index was."""
    with dreamdb.open(vault) as index:
        index.sync()
        warnings = index.rebuild("requested by the agent").warnings
        assert warnings == [f"index at {index.index_path} rebuilt from the vault on request (requested by the agent)"]


def test_a_never_synced_index_opened_without_auto_sync_says_so(vault):
    """QA round 68 M2: with auto_sync=False the empty result said the vault had no notes."""
    index = dreamdb.open(vault, auto_sync=False)
    assert index.recall("quokka", now=NOW) == []
    assert any("never been synced" in n and "sync()" in n for n in index.take_notes())
    index.sync()
    assert ids(index.recall("quokka", now=NOW))


def test_tag_and_status_filters_compare_unicode_forms_alike_and_refuse_undecodable_text(tiny_vault):
    """QA round 14: a tag or status saved decomposed (NFD) was not found by the composed spelling, while the
    note listed the same-looking status as present; undecodable bytes crashed with exit 70."""
    import unicodedata

    nfd = lambda text: unicodedata.normalize("NFD", text)  # noqa: E731
    write_doc(tiny_vault, "knowledge/n.md", f"---\ntags: [{nfd('café')}]\nstatus: {nfd('açık')}\n---\nwalrus note\n")
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall("walrus", tags="café")] == ["knowledge/n"]
    assert [h.doc_id for h in index.recall("walrus", status="açık")] == ["knowledge/n"]
    assert [h.doc_id for h in index.recall("walrus", tags=nfd("café"), status=nfd("Açık"))] == ["knowledge/n"]
    # QA round 58: Turkish dotted capital İ is i, as the analyzer folds it (str.lower adds a combining dot)
    write_doc(tiny_vault, "knowledge/m.md", "---\ntags: [İSTANBUL]\n---\nwalrus note\n")
    assert [h.doc_id for h in index.recall("walrus", tags="istanbul")] == ["knowledge/m"]
    assert [h.doc_id for h in index.recall("walrus", tags="İstanbul")] == ["knowledge/m"]
    # QA round 75 F9: I lowercases to i, not Turkish ı (IĞDIR was not the tag Iğdır); QA round 77 G5: fullwidth forms
    # (＃ｒｅｃａｌｌ) were a tag of their own
    write_doc(tiny_vault, "knowledge/i.md", "---\ntags: [Iğdır, ＃ｒｅｃａｌｌ]\n---\nwalrus note\n")
    for tag in ("IĞDIR", "ığdır", "iğdir", "recall", "#Recall", "Ｒｅｃａｌｌ"):
        assert [h.doc_id for h in index.recall("walrus", tags=tag)] == ["knowledge/i"], tag
    assert index.recall("walrus", tags="igdir") == []  # (ğ is not g)
    # QA round 127-A F4: a fullwidth # or facet : was shown with the tag, where an ASCII one is taken off
    write_doc(tiny_vault, "knowledge/w.md", "---\ntags: ['ｔｏｐｉｃ：Ｗｉｄｅ', '﹟small', '#a﹕b']\n---\nwalrus note\n")
    assert [h.tags for h in index.recall("walrus", tags="wide")] == [["Ｗｉｄｅ", "small", "b"]]
    # QA round 121-C F2: statuses as tags: AKTİF was stored akti̇f (a combining dot), KAPALI matched no kapalı
    write_doc(tiny_vault, "knowledge/s1.md", "---\nstatus: AKTİF\n---\nokapi note\n")
    write_doc(tiny_vault, "knowledge/s2.md", "---\nstatus: kapalı\n---\nokapi note\n")
    write_doc(tiny_vault, "knowledge/s3.md", "---\nstatus: İN_PROGRESS\n---\nokapi note\n")
    write_doc(tiny_vault, "knowledge/s4.md", "---\nstatus: ＤＯＮＥ\n---\nokapi note\n")  # (NFKC, as tags: 122-A F6)
    for status, found in (("aktif", "s1"), ("Aktif", "s1"), ("AKTİF", "s1"), ("KAPALI", "s2"), ("kapali", "s2"),
                          ("Kapalı", "s2"), ("in_progress", "s3"), ("IN_PROGRESS", "s3"), ("done", "s4"),
                          ("ｄｏｎｅ", "s4")):
        assert [h.doc_id for h in index.recall("okapi", status=status)] == [f"knowledge/{found}"], status
    index.take_notes()
    assert index.recall("okapi", status="pasif") == []
    (note,) = [n for n in index.take_notes() if "status" in n]
    assert "aktif" in note and "akti\u0307f" not in note and "kapalı" in note, note
    for name in ("tags", "status", "types"):
        with pytest.raises(UsageError, match="not valid UTF-8"):
            index.recall("walrus", **{name: "\udcff"})
    # QA round 65 L2: the query too (its undecodable bytes reached `recall --json` as raw bytes: invalid UTF-8)
    with pytest.raises(UsageError, match="The query is not valid UTF-8"):
        index.recall("walrus \udcff")
    index.close()
    p = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--vault", str(tiny_vault), "--json",
                        b"walrus \xff"], capture_output=True, timeout=60)
    assert p.returncode == 2 and json.loads(p.stdout.decode("utf-8"))["error"]["message"].startswith(
        "The query is not valid UTF-8"), p


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_tag_filter_reads_its_tags_as_the_indexer_reads_frontmatter_tags(tiny_vault, engine):
    """QA round 19: a tag written '#hash' was indexed as 'hash', but --tags '#hash' looked for '#hash'."""
    from dreamdb.vault.tags import clean_tag

    write_doc(tiny_vault, "knowledge/n.md", "---\ntags: ['#hash', 'topic:Recall', Plain, 'topic:api:V2']\n---\nwalrus note\n")
    index = dreamdb.open(tiny_vault, engine=engine)
    shown = index.recall("walrus")[0].tags
    assert shown == ["hash", "Recall", "Plain", "V2"]
    for tags in ("#hash", "hash", " #HASH ", "topic:recall", "#topic:Recall", "recall", "plain", "#Plain",
                 "v2", "api:v2", "topic:api:V2", *shown):
        assert [h.doc_id for h in index.recall("walrus", tags=tags)] == ["knowledge/n"], tags
    assert index.recall("walrus", tags="topic") == []
    with pytest.raises(UsageError, match="names no tag"):  # (matched nothing, silently: QA round 125-C F5)
        index.recall("walrus", tags="#")
    index.close()
    for text in ("#topic:Recall ", "topic:api:v2", "topic:#x", " # y", "a:", "#", "x:y:#z ", "##a"):
        assert clean_tag(clean_tag(text)) == clean_tag(text), text  # a shown tag reads back as itself


def test_a_tag_written_in_quote_marks_is_the_tag_without_them(tiny_vault):
    """QA round 130-C F9: ``tags: [“security”, ‘infra’]`` (macOS and Word put curly quotes in) was stored with its
    quote marks, so ``list --tags security`` printed "No documents."; one matched pair around the whole tag is taken
    off, quotes inside a tag or without their pair are kept."""
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.vault.tags import clean_tag

    write_doc(tiny_vault, "knowledge/q.md", "---\ntags: [“security”, ‘infra’, „güvenlik“, «réseau», "
                                            "“#topic:”deep””, rock'n'roll, “open]\n---\nwalrus note\n")
    write_doc(tiny_vault, "knowledge/s.md", "---\ntags: x, \"y\"\n---\nokapi note\n")  # (a plain scalar: quotes kept)
    index = dreamdb.open(tiny_vault)
    assert [h.tags for h in index.recall("walrus")] == [
        ["security", "infra", "güvenlik", "réseau", "deep", "rock'n'roll", "“open"]]
    assert [h.tags for h in index.recall("okapi")] == [["x", "y"]]
    for tag in ("security", "“Security”", "güvenlik", "réseau", "deep", "rock'n'roll", "“open"):
        assert [h.doc_id for h in index.recall("walrus", tags=tag)] == ["knowledge/q"], tag
    index.close()
    r = CliRunner().invoke(cli, ["list", "--vault", str(tiny_vault), "--tags", "security"])
    assert r.exit_code == 0 and "knowledge/q" in r.output, r.output
    for text in ("“‘x’”", "#“x”", "topic:‘x’", "»x«", "''", "“a”b”"):
        assert clean_tag(clean_tag(text)) == clean_tag(text), text  # a shown tag reads back as itself


def test_a_tag_of_quote_marks_around_a_facet_is_the_tag_and_one_of_quotes_alone_says_so(tiny_vault):
    """QA round 132-B F6: ``"x":"y"`` was indexed as the tag ``"y`` (its outer marks taken as one pair, the facet
    cut leaving the other alone), so ``--tags y`` found nothing, and ``"a" "b"`` became ``a" "b``; ``--tags '“”'`` was
    said to be a # and a facet prefix, in a filter, a write and sync's warning."""
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.vault.tags import clean_tag

    write_doc(tiny_vault, "knowledge/q.md", "---\ntags: ['\"x\":\"y\"', '\"a\" \"b\"', 'topic:“z', ok]\n---\nwalrus note\n")
    index = dreamdb.open(tiny_vault)
    # (a mark alone after the facet is kept, as without one: QA round 133 F2, era:'90s was 90s and '90s '90s)
    assert [h.tags for h in index.recall("walrus")] == [["y", '"a" "b"', "“z", "ok"]]
    for tag in ("y", '"a" "b"', "“z", '"x":"y"'):
        assert [d["doc_id"] for d in index.list_documents(tags=tag)] == ["knowledge/q"], tag
    for text in ('"x":"y"', '"a" "b"', "topic:“z", "#“x”:‘y’", 'x:y"', 'lang:"#rust"', "x:“#y”"):
        assert clean_tag(clean_tag(text)) == clean_tag(text), text  # a shown tag reads back as itself
    # (QA round 133 F2: lang:"#rust" gave #rust, and rust read again, so --tags 'lang:"#rust"' found nothing)
    assert [clean_tag(t) for t in ('lang:"#rust"', "x:“#y”", "era:'90s", "'90s", "type:students'")] == [
        "rust", "y", "'90s", "'90s", "students'"]
    rng = random.Random(133)
    for text in ("".join(rng.choice("\"'“”‘’«»:#ab ") for _ in range(rng.randint(1, 8))) for _ in range(20_000)):
        assert clean_tag(clean_tag(text)) == clean_tag(text), text
    for tags in ("“”", '""', "#''", "ops,“”"):
        with pytest.raises(UsageError, match=r"names no tag: it is only quote marks, which are not part of a tag"):
            index.list_documents(tags=tags)
        with pytest.raises(UsageError, match=r"names no tag: it is only quote marks, which are not part of a tag"):
            index.update("knowledge/q", tags=tags)
    with pytest.raises(UsageError, match="names no tag: a leading # and a facet prefix"):
        index.update("knowledge/q", tags="ops,#")
    index.close()
    write_doc(tiny_vault, "knowledge/r.md", "---\ntags: ['“”', ok]\n---\nokapi note\n")
    r = CliRunner().invoke(cli, ["sync", "--vault", str(tiny_vault)])
    assert "frontmatter tag '“”' names no tag (it is only quote marks" in r.output, r.output


def test_the_filter_note_names_the_filter_that_excludes_the_matches(vault):
    """QA round 14: --types feature --since -30d blamed both filters though the match was a feature; a match
    that was expired and outside --types got no note."""
    index = dreamdb.open(vault)
    assert index.recall("quokka", types="task", since="2026-08-15", now=NOW) == []
    (note,) = [n for n in index.take_notes() if "not within" in n]
    assert "not within the filters (since: dates 2026-08-15 to …)" in note  # the task is dated 2026-08-10
    write_doc(vault, "knowledge/stale.md", "---\ntitle: Stale\nexpires: 2026-01-01\n---\nnarwhal tusk\n")
    assert index.recall("narwhal", types="task", now=NOW) == []
    (note,) = [n for n in index.take_notes() if "not within" in n]
    assert "(types)" in note and "knowledge/stale" in note and "past its expires date" in note
    index.close()


def test_an_expired_match_under_filters_gets_the_expiry_note_alone(tiny_vault):
    """QA round 15: the filter note blamed --tags although only the match's expiry excluded it."""
    write_doc(tiny_vault, "knowledge/kiwi.md", "---\ntags: [fruit]\nexpires: 2020-01-01\n---\nkiwi\n")
    write_doc(tiny_vault, "state/kiwi2.md", "---\ntags: [veg]\n---\nkiwi\n")
    index = dreamdb.open(tiny_vault)
    assert index.recall("kiwi", tags="fruit", now=NOW) == []
    notes = index.take_notes()
    assert any("past their expires date" in n for n in notes) and not any("not within" in n for n in notes)
    index.close()


def test_until_a_date_keeps_documents_of_that_whole_day(tiny_vault):
    for name, when in [("e", "2026-08-11T23:59:59"), ("b", "2026-08-12T10:00:00Z"), ("c", "2026-08-12"),
                       ("d", "2026-08-13T00:00:00Z")]:
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\ntitle: {name.upper()}\ndate: {when}\n---\nwalrus {name}\n")
    index = dreamdb.open(tiny_vault)
    assert ids(index.recall("walrus", top=10, until="2026-08-11", now=NOW)) == ["knowledge/e"]
    assert sorted(ids(index.recall("walrus", top=10, since="2026-08-12", until="2026-08-12", now=NOW))) == [
        "knowledge/b", "knowledge/c"]
    assert sorted(ids(index.recall("walrus", top=10, until="2026-08-12T09:00:00Z", now=NOW))) == [
        "knowledge/c", "knowledge/e"]  # an instant is a bound to the second
    assert sorted(ids(index.recall("walrus", top=10, until="2026-08", now=NOW))) == [
        "knowledge/b", "knowledge/c", "knowledge/d", "knowledge/e"]


def test_until_at_the_ends_of_the_calendar(tiny_vault):
    """QA round 17: --until 9999 crashed (exit 70) when the empty-result note printed the window;
    --until 0999 kept a document of 1000-01-01 (float days)."""
    for name, when in [("first", "1000-01-01"), ("late", "2026-08-01")]:
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\ntitle: {name}\ndate: {when}\n---\nmarmot {name}\n")
    index = dreamdb.open(tiny_vault)
    assert ids(index.recall("marmot", top=10, until="0999", now=NOW)) == []
    assert any("to 0999-12-31" in n for n in index.take_notes())
    assert ids(index.recall("marmot", top=10, since="2030", until="9999", now=NOW)) == []
    assert any("to 9999-12-31" in n for n in index.take_notes())
    assert sorted(ids(index.recall("marmot", top=10, until="9999", now=NOW))) == ["knowledge/first", "knowledge/late"]


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles", "Pacific/Kiritimati"])
def test_naive_datetimes_are_utc_whatever_the_machine_time_zone(tiny_vault, monkeypatch, zone):
    """QA round 68 H1: a naive datetime as since/until was read in the machine's time zone, while
    ``now`` and the ISO strings read naive values as UTC; datetime.min raised a bare ValueError."""
    import time
    from datetime import datetime

    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: A\ndate: 2026-08-10\n---\nwombat a\n")
        index = dreamdb.open(tiny_vault)
        # 2026-08-09T20:00 UTC is before the note (Aug 10 00:00 UTC); read as Los Angeles time, it was after it
        assert ids(index.recall("wombat", since=datetime(2026, 8, 9, 20), now=NOW)) == ["knowledge/a"]
        assert ids(index.recall("wombat", since="2026-08-09T20:00", now=NOW)) == ["knowledge/a"]
        # 2026-08-10T03:00 UTC is after it; read as Kiritimati time (UTC+14), it was before it
        assert ids(index.recall("wombat", until=datetime(2026, 8, 10, 3), now=NOW)) == ["knowledge/a"]
        assert ids(index.recall("wombat", until=datetime(2026, 8, 9, 23), now=NOW)) == []
        assert ids(index.recall("wombat", since=datetime.min, until=datetime.max, now=datetime(2026, 8, 18))) == [
            "knowledge/a"]
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.parametrize("filters", [
    {"status": "completed"}, {"tags": "ops"}, {"tags": "misc", "exclude_types": "task"}, {"since": "2026-08-01"},
    {"until": "2025-12-31"}, {"since": "-30d"}, {"level": 3}, {"types": "knowledge", "include_expired": False},
    {"include_expired": False},
])
def test_list_keeps_the_documents_recall_keeps_with_the_same_filters(vault, filters):
    """``list`` had only ``--types``: it takes recall's filters, and keeps what recall keeps (every note of this
    vault matches the query), but for expired documents, which it lists unless asked not to."""
    index = dreamdb.open(vault)
    listed = [d["doc_id"] for d in index.list_documents(now=NOW, **filters)]
    recalled = sorted(ids(index.recall("quokka", top=50, now=NOW, **{"include_expired": True, **filters})))
    assert listed == recalled


def test_list_filters_by_value_and_from_the_command_line(vault, capsys):
    from click.testing import CliRunner

    from dreamdb.cli import cli, main

    index = dreamdb.open(vault)
    assert [d["doc_id"] for d in index.list_documents(now=NOW)] == [
        "knowledge/gone", "knowledge/new", "knowledge/old", "knowledge/star", "knowledge/unsure", "task/task"]
    assert [d["doc_id"] for d in index.list_documents(now=NOW, include_expired=False)] == [
        "knowledge/new", "knowledge/old", "knowledge/star", "knowledge/unsure", "task/task"]
    assert [d["doc_id"] for d in index.list_documents(tags="topic:ops", since="2026-08-01", now=NOW)] == [
        "knowledge/new", "knowledge/unsure"]
    r = CliRunner().invoke(cli, ["list", "--vault", str(vault), "--status", "Completed", "--json"])
    assert r.exit_code == 0 and [d["doc_id"] for d in json.loads(r.output)] == ["task/task"], r.output
    r = CliRunner().invoke(cli, ["list", "--vault", str(vault), "--hide-expired", "--now", NOW, "--until", "2025-06-01"])
    assert r.exit_code == 0 and r.output.split("\n")[2].startswith("knowledge/old") and "gone" not in r.output, r.output
    r = CliRunner().invoke(cli, ["list", "--vault", str(vault), "--tags", "nothing-has-it"])
    assert r.exit_code == 0 and r.output.endswith("No documents.\n"), r.output  # (no 'no notes yet': it has some)
    assert "no notes" not in r.output and "no document has the tag nothing-has-it" in r.output, r.output
    assert main(["list", "--vault", str(vault), "--since", "2026-09-01", "--until", "2026-08-01"]) == 2
    assert "is after until" in capsys.readouterr().err
    with pytest.raises(UsageError, match="include_expired"):
        index.list_documents(include_expired="no")


def test_a_repeated_list_filter_adds_to_it_in_recall_and_list(vault, capsys):
    """QA round 153-B F4: a repeated ``--types`` (``--exclude-types``, ``--tags``, ``--status``) kept its last value
    alone, silently. Repeats add up, as a comma list does; a repeat that names nothing is refused as one alone is."""
    from click.testing import CliRunner

    from dreamdb.cli import cli, main

    def listed(*args):
        r = CliRunner().invoke(cli, ["list", "--vault", str(vault), "--now", NOW, "--json", *args])
        assert r.exit_code == 0, r.output
        return [d["doc_id"] for d in json.loads(r.stdout)]

    def recalled(*args):
        r = CliRunner().invoke(cli, ["recall", "--vault", str(vault), "--now", NOW, "--json", "-n", "50", *args,
                                     "quokka"])
        assert r.exit_code == 0, r.output
        return sorted(h["doc_id"] for h in json.loads(r.stdout)["hits"])

    everything = ["knowledge/gone", "knowledge/new", "knowledge/old", "knowledge/star", "knowledge/unsure", "task/task"]
    cases = [
        (["-t", "knowledge", "-t", "task"], everything),
        (["--exclude-types", "knowledge", "--exclude-types", "task"], []),
        (["--tags", "misc", "--tags", "nothing-has-it"], ["knowledge/new", "knowledge/unsure"]),
        (["--status", "completed", "--status", "active"], ["task/task"]),
        (["--tags", "nothing-has-it,misc", "--tags", "nothing-either", "-t", "task", "-t", "knowledge"],
         ["knowledge/new", "knowledge/unsure"]),
        (["--types", "task", "--types", ""], ["task/task"]),  # as --types task, (an empty item of a comma list)
    ]
    for args, expected in cases:
        assert listed(*args) == expected, args
        assert recalled(*args) == [d for d in expected if d != "knowledge/gone"], args  # (expired: recall drops it)
    assert listed("--tags", "misc") == ["knowledge/new", "knowledge/unsure"]  # (one value alone, as before)
    assert listed("--tags", "misc,ops") == ["knowledge/new", "knowledge/old", "knowledge/unsure"]
    assert main(["list", "--vault", str(vault), "--types", "", "-t", " ,"]) == 2
    assert "types names nothing (--types '' --types ' ,' on the command line)" in capsys.readouterr().err


def test_a_lone_surrogate_in_a_filter_or_a_path_is_a_usage_error(vault, tmp_path):
    """QA round 125-C F4: a lone surrogate made in Python (U+D800; the command line makes only U+DC80–U+DCFF of
    undecodable bytes) raised UnicodeEncodeError from the filter's message (os.fsencode), and from the vault's
    and index's paths (os.stat)."""
    index = dreamdb.open(vault)
    for filters in ({"tags": "\ud800"}, {"status": "ok,\ud800x"}, {"types": "\udbff"}, {"exclude_types": "\ud800"}):
        with pytest.raises(UsageError, match="is not valid UTF-8"):
            index.list_documents(**filters)
        with pytest.raises(UsageError, match="is not valid UTF-8"):
            index.recall("quokka", **filters)
    for name in ("since", "until"):  # (named, QA round 126-A F11d: "The time is not valid UTF-8")
        with pytest.raises(UsageError, match=rf"{name} \(--{name}\) is not valid UTF-8"):
            index.list_documents(**{name: "2026-01-0\udcff"})
    with pytest.raises(UsageError, match=r"vault holds a lone surrogate, which no file path can"):
        dreamdb.open(str(tmp_path / "\ud800"))
    with pytest.raises(UsageError, match=r"index_path holds a lone surrogate"):
        dreamdb.open(vault, index_path=str(tmp_path / "\ud800.db"))
    assert index.recall("quokka", tags="ops", now=NOW)  # (the index unharmed)


@pytest.mark.parametrize("tags", ["#", "topic:", "ops,#", ["misc", "a:"]])
def test_a_tag_filter_naming_no_tag_is_refused(vault, tags):
    """QA round 125-C F5: ``--tags '#'`` matched nothing, silently (it names no tag once its # is dropped), while
    ``--tags ,,`` was refused; a write refuses such a tag too."""
    index = dreamdb.open(vault)
    with pytest.raises(UsageError, match=r"The tag '(#|topic:|a:)' names no tag") as info:
        index.list_documents(tags=tags)
    assert "leave --tags out" in info.value.hint
    with pytest.raises(UsageError, match="names no tag"):
        index.recall("quokka", tags=tags)
    assert ids(index.recall("quokka", top=10, tags="#topic:ops", now=NOW)) != []  # (a facet and a # around a tag)


def test_an_empty_filtered_list_or_recall_names_the_statuses_and_tags_no_document_has(vault, capsys):
    """QA round 125-C F6: ``list --status zzz`` printed "No documents." and nothing else (recall named the statuses in
    the index); a tag no document has is named too, by both."""
    from dreamdb.cli import main

    index = dreamdb.open(vault)
    index.take_notes()
    assert index.list_documents(status="zzz") == [] and index.take_notes() == [
        "no document has the status zzz; statuses in the index: completed"]
    assert index.list_documents(tags="nope,none") == []
    (note,) = index.take_notes()
    assert note.startswith("no document has the tags nope, none (`dreamdb sql")
    assert index.recall("quokka", tags="nope") == [] and index.take_notes()[0].startswith("no document has the tag nope ")
    # one tag present: the other one does not explain the empty result (the type and tags together do)
    assert index.list_documents(tags="ops,nope", types="task") == [] and index.take_notes() == [
        "no document is within the filters (types, tags); the index holds 6 documents"]
    assert index.list_documents(types="task", status="completed") != [] and index.take_notes() == []
    assert main(["list", "--vault", str(vault), "--status", "zzz"]) == 0
    out = capsys.readouterr()
    assert out.out == "No documents.\n" and "note: no document has the status zzz" in out.err, out


def test_the_filter_note_shows_a_bound_with_a_time_of_day_as_that_instant(vault):
    """QA round 139-E F4: ``--since -1d`` at noon was shown as "dates 2026-08-10 to …", the date alone, as if the
    window kept that whole day. A bound with a time of day is shown as the instant; a date's as the date."""
    index = dreamdb.open(vault)
    for since, until, window in (
            ("-1d", None, "since: dates 2026-08-10T12:00:00Z to …"),
            ("2026-08-11T00:00:00Z", None, "since: dates 2026-08-11 to …"),  # (a midnight: the day)
            ("2026-08-11T09:30:00+03:00", None, "since: dates 2026-08-11T06:30:00Z to …"),
            (None, "2024-12-31T06:00:00Z", "until: dates … to 2024-12-31T06:00:00Z"),
            (None, "2024-12-31T00:00:00Z", "until: dates … to 2024-12-31T00:00:00Z"),  # (an instant: not that day)
            (None, "2024-12", "until: dates … to 2024-12-31"),  # (a month: to its last day)
            ("2026-08-11", "2026-08-12T08:00:00Z", "since: dates 2026-08-11 to 2026-08-12T08:00:00Z")):
        assert index.recall("quokka", since=since, until=until, now="2026-08-11T12:00:00Z") == []
        (note,) = [n for n in index.take_notes() if "not within" in n]
        assert f"not within the filters ({window})" in note, (since, until, note)
    assert index.list_documents(since="-1d", now="2026-08-11T12:00:00Z") == []
    assert index.take_notes()[0].startswith("no document is within the filters (since: dates 2026-08-10T12:00:00Z")
    index.close()


def test_the_filter_note_shows_a_bound_within_a_second_of_midnight_as_that_instant_not_the_date(vault):
    """QA round 140-C F7a: ``--until 2026-08-01T00:00:00.4Z`` was rounded to the second, then shown as the date
    "2026-08-01" (beside a best match dated that day), and ``--since 2099-01-01T23:59:59.6Z`` as "2099-01-01"."""
    index = dreamdb.open(vault)
    for since, until, window in (
            (None, "2024-12-31T00:00:00.4Z", "until: dates … to 2024-12-31T00:00:00.400Z"),
            (None, "2024-12-30T23:59:59.9996Z", "until: dates … to 2024-12-30T23:59:59.999Z"),  # (141-D F3)
            ("2099-01-01T23:59:59.6Z", None, "since: dates 2099-01-01T23:59:59.600Z to …"),
            ("2099-01-01T00:00:00.001Z", None, "since: dates 2099-01-01T00:00:00.001Z to …"),
            ("2099-01-01", "2099-01-01", "since: dates 2099-01-01 to 2099-01-01")):  # (a date's: the day)
        assert index.recall("quokka", since=since, until=until, now="2026-08-11T12:00:00Z") == []
        (note,) = [n for n in index.take_notes() if "not within" in n]
        assert f"not within the filters ({window})" in note, (since, until, note)
    index.close()


def test_the_filter_note_rounds_a_bound_between_two_milliseconds_into_the_window(vault):
    """QA round 141-D F3: a sub-millisecond bound was rounded to the nearest millisecond, across midnight:
    ``--until 2026-07-29T23:59:59.9996Z`` was shown as "to 2026-07-30T00:00:00Z" beside a best match dated
    2026-07-30, which the filter left out; ``since`` is rounded up, ``until`` down, a whole millisecond kept."""
    index = dreamdb.open(vault)
    for since, until, window in (
            (None, "2024-12-30T23:59:59.9996Z", "until: dates … to 2024-12-30T23:59:59.999Z"),
            (None, "2024-12-30T12:00:00.0004Z", "until: dates … to 2024-12-30T12:00:00Z"),
            ("2099-01-01T00:00:00.0004Z", None, "since: dates 2099-01-01T00:00:00.001Z to …"),
            ("2098-12-31T23:59:59.9994Z", None, "since: dates 2099-01-01T00:00:00Z to …"),  # (its first instant)
            ("2099-01-01T00:00:00.123Z", None, "since: dates 2099-01-01T00:00:00.123Z to …")):
        assert index.recall("quokka", since=since, until=until, now="2026-08-11T12:00:00Z") == []
        (note,) = [n for n in index.take_notes() if "not within" in n]
        assert f"not within the filters ({window})" in note, (since, until, note)
    index.close()


def test_an_empty_filtered_list_names_the_filters_that_leave_out_every_document(vault, tmp_path, capsys):
    """QA round 126-A F8: ``list --since 2030-01-01`` printed "No documents." and no reason, where recall names the
    filters that exclude its matches: the filters that leave out every document on their own are named (else all of
    them), with the documents' dates for a date window, and expiry when only expired documents are within them."""
    from dreamdb.cli import main

    index = dreamdb.open(vault)
    index.take_notes()
    assert index.list_documents(since="2030-01-01", types="task", now=NOW) == []
    assert index.take_notes() == ["no document is within the filters (since: dates 2030-01-01 to …); the index holds"
                                  " 6 documents; the documents are dated 2025-01-01 to 2026-08-10"]
    assert index.list_documents(status="completed", level=3, now=NOW) == []  # (each keeps a document alone)
    assert index.take_notes() == ["no document is within the filters (status, level); the index holds 6 documents"]
    assert index.list_documents(include_expired=False, until="2026-01-01", types="knowledge", now=NOW) != []
    assert index.take_notes() == []
    write_doc(vault, "state/late.md", "---\ntitle: Late\nstatus: late\nexpires: 2026-02-01\n---\nquokka\n")
    assert index.list_documents(include_expired=False, status="late", now=NOW) == []
    assert index.take_notes() == ["only documents past their expires date are within the filters (listed without "
                                  "--hide-expired)"]
    assert [d["doc_id"] for d in index.list_documents(status="late", now=NOW)] == ["task/late"]
    write_doc(tmp_path / "one" / "_dream_context", "knowledge/a.md", "---\ndate: 2026-05-20\n---\nx\n")
    one = dreamdb.open(tmp_path / "one" / "_dream_context")
    assert one.list_documents(since="2026-06-01") == [] and one.take_notes() == [
        "no document is within the filters (since: dates 2026-06-01 to …); the index holds 1 document; the document"
        " is dated 2026-05-20"]  # (QA round 128-A F10: "dated 2026-05-20 to 2026-05-20")
    assert main(["list", "--vault", str(vault), "--until", "2024-12-31", "--now", NOW]) == 0
    out = capsys.readouterr()
    assert out.out == "No documents.\n" and "note: no document is within the filters (until: dates … to 2024-12-31)" \
        in out.err, out


def test_a_vaults_filter_notes_are_dropped_when_another_vault_has_results(vault, tmp_path):
    """QA round 126-A F6: searching two vaults with a tag only one of them has said "no document has the tag …" of
    the other, beside hits carrying it; a vault's notes on how its filters emptied its result are said only when
    every vault's result is empty."""
    other = tmp_path / "other" / "_dream_context"
    write_doc(other, "knowledge/x.md", "---\ntitle: X\ntags: [elsewhere]\n---\nquokka notes\n")
    both = dreamdb.MultiIndex([vault, other])
    both.take_notes()
    assert ids(both.recall("quokka", tags="elsewhere", now=NOW)) == ["knowledge/x"]
    assert [d["doc_id"] for d in both.list_documents(tags="elsewhere", now=NOW)] == ["knowledge/x"]
    assert [d["doc_id"] for d in both.list_documents(since="2026-08-01", types="knowledge", now=NOW)] == [
        "knowledge/new", "knowledge/star", "knowledge/unsure"]
    assert both.take_notes() == []
    assert both.list_documents(tags="nowhere", now=NOW) == [] and both.recall("quokka", tags="nowhere") == []
    notes = both.take_notes()  # (each command names its vault, dreamdb finding neither here: QA round 155-E F4)
    assert notes == [f"{v}: no document has the tag nowhere (`dreamdb sql --vault {v} \"SELECT tag, COUNT(*) FROM"
                     " document_tags GROUP BY tag\"` lists the tags)" for v in (vault.resolve(), other.resolve())], notes


def test_a_vaults_filter_notes_are_dropped_per_thread(vault, tmp_path):
    """QA round 128-A F5: a MultiIndex shared by threads kept which notes to drop in one attribute per Index, which
    another thread's call cleared or replaced: 15-25 notes "no document has the tag ops" of the vault without it
    reached take_notes() in a run, though the other vault always had results."""
    import threading

    other = tmp_path / "other" / "_dream_context"
    write_doc(other, "knowledge/y.md", "---\ntitle: Y\n---\nalpha delta\n")
    both = dreamdb.MultiIndex([other, vault])
    both.take_notes()
    errors = []

    def run(call):
        try:
            for _ in range(40):
                call()
        except Exception as exc:  # (reported below, not lost in the thread)
            errors.append(exc)

    calls = [lambda: both.list_documents(tags="misc", now=NOW), lambda: both.recall("quokka", tags="misc", now=NOW)]
    threads = [threading.Thread(target=run, args=(calls[i % 2],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and both.take_notes() == []


def test_another_threads_note_added_while_filters_are_explained_stays_with_the_index(vault, tmp_path, monkeypatch):
    """QA round 155-C F1: while a read explained why its filters emptied its result, the Index's notes were swapped
    for a list of that read's own: a note another thread added meanwhile (a vault write's, a recall's of the Index
    used alone) went with that read's notes, and a MultiIndex whose other vault had results dropped it; a
    take_notes() meanwhile took from that list. Now only the explaining thread's notes are held back."""
    import threading

    from dreamdb.api import Index

    other = tmp_path / "other" / "_dream_context"
    write_doc(other, "knowledge/x.md", "---\ntitle: X\ntags: [elsewhere]\n---\nquokka notes\n")
    both = dreamdb.MultiIndex([vault, other])
    both.take_notes()
    first = both.indexes[0]
    explain = Index._note_unknown_values
    acts, taken = [], []

    def meanwhile(self, filters):  # (as a switch to another thread there would)
        for act in acts if self is first else ():
            thread = threading.Thread(target=act)
            thread.start()
            thread.join()
        return explain(self, filters)

    monkeypatch.setattr(Index, "_note_unknown_values", meanwhile)
    acts.append(lambda: first.notes.append("another thread's note"))
    assert ids(both.recall("quokka", tags="elsewhere", now=NOW)) == ["knowledge/x"]
    assert both.take_notes() == [f"{first.vault}: another thread's note"]  # (the filter notes dropped: 126-A F6)
    acts.append(lambda: taken.extend(first.take_notes()))
    first.notes.append("an earlier note")
    assert both.recall("quokka", tags="nowhere", now=NOW) == []
    assert taken == ["an earlier note", "another thread's note"]
    notes = both.take_notes()
    assert len(notes) == 2 and all(": no document has the tag nowhere" in n for n in notes), notes


@pytest.mark.parametrize("value", ["no", "", 0, 1, None])
def test_embed_status_s_most_vectors_must_be_a_bool(vault, value):
    """QA round 146-F F2: ``embed_status(most_vectors="no")`` read ``"no"`` as true, where every other flag of
    the API refuses a value that is not a bool."""
    index = dreamdb.open(vault)
    with pytest.raises(UsageError, match=f"most_vectors must be True or False, got {value!r}"):
        index.embed_status(most_vectors=value)
    assert index.embed_status(most_vectors=False)["model_id"] is None
    index.close()


@pytest.mark.parametrize("mode", ["", "  ", "\t"])
def test_an_empty_recall_mode_is_refused(vault, monkeypatch, mode):
    """QA round 146-F F3: ``recall(mode="")`` used ``DREAMDB_RECALL_MODE`` (or bm25) while ``mode="  "`` was refused
    as "Unknown recall mode ''" and the CLI refuses ``--mode ""``: both are refused alike, as an empty ``types``
    is, ``mode=None`` named as the default; of a MultiIndex too."""
    monkeypatch.setenv("DREAMDB_RECALL_MODE", "bm25")
    index = dreamdb.open(vault)
    with pytest.raises(UsageError, match=r"^mode is empty") as caught:
        index.recall("quokka", mode=mode, now=NOW)
    assert "mode=None" in caught.value.hint and "bm25, hybrid, dense, rrf" in caught.value.hint
    assert ids(index.recall("quokka", mode=None, now=NOW))
    index.close()
    other = vault.parent.parent / "other" / "_dream_context"
    write_doc(other, "knowledge/q.md", "---\ntitle: Q\n---\nquokka\n")
    multi = dreamdb.open([vault, other])
    with pytest.raises(UsageError, match=r"^mode is empty"):
        multi.recall("quokka", mode=mode, now=NOW)
    multi.close()
