"""Exact BM25 against hand-computed values (SPEC §2: k1 1.5, b 0.75, IDF ln(1+(N−df+0.5)/(df+0.5)))."""

from __future__ import annotations

import math

import pytest

import dreamdb
from dreamdb.ranking import bm25 as F
from dreamdb.ranking import signals as S
from tests.conftest import SHARED, needs_real_vault, write_doc


def test_idf_matches_formula_by_hand():
    # N = 3, df = 1: ln(1 + 2.5/1.5) = ln(2.666…) = 0.980829
    assert F.idf(3, 1) == pytest.approx(0.980829, abs=1e-6)
    # df = 2: ln(1 + 1.5/2.5) = ln(1.6) = 0.470004
    assert F.idf(3, 2) == pytest.approx(0.470004, abs=1e-6)
    # df = N never goes negative
    assert F.idf(3, 3) > 0


def test_bm25_term_by_hand():
    # tf 2, dl 4, avgdl 4: norm = 1 → 0.980829 · 2·2.5/(2 + 1.5) = 1.401185
    assert F.bm25_term(2, 4, 4, F.idf(3, 1)) == pytest.approx(1.401185, abs=1e-6)
    assert F.bm25_term(0, 4, 4, 1.0) == 0.0


def _tiny(vault):
    # After analysis: d1 = alpha | apple banana apple (len 4); d2 = beta | banana cherry (3);
    # d3 = gamma | cherry date fig grape (5). avgdl = 4.
    write_doc(vault, "knowledge/d1.md", "---\ntitle: alpha\n---\napple banana apple\n")
    write_doc(vault, "knowledge/d2.md", "---\ntitle: beta\n---\nbanana cherry\n")
    write_doc(vault, "knowledge/d3.md", "---\ntitle: gamma\n---\ncherry date fig grape\n")


def test_raw_score_equals_hand_computed_bm25(tiny_vault):
    _tiny(tiny_vault)
    index = dreamdb.open(tiny_vault)
    hits = {h.doc_id: h for h in index.recall("apple banana", top=5, now="2026-01-01T00:00:00Z")}
    # d1: apple (tf 2, df 1) 1.401185 + banana (tf 1, df 2, dl = avgdl) 0.470004 = 1.871188
    assert hits["knowledge/d1"].score == pytest.approx(1.871188, abs=1e-6)
    # d2: banana, tf 1, dl 3: 0.470004 · 2.5/(1 + 1.5·(0.25 + 0.75·3/4)) = 0.529582
    assert hits["knowledge/d2"].score == pytest.approx(0.529582, abs=1e-6)
    assert "knowledge/d3" not in hits


def test_raw_score_is_untouched_by_clock_synonyms_and_fields(tiny_vault):
    _tiny(tiny_vault)
    write_doc(tiny_vault, "synonyms.txt", "apple, pomme\n")
    index = dreamdb.open(tiny_vault)
    a = {h.doc_id: h for h in index.recall("apple banana", now="2026-01-01T00:00:00Z")}
    b = {h.doc_id: h for h in index.recall("apple banana", now="2030-01-01T00:00:00Z")}
    assert a["knowledge/d1"].score == b["knowledge/d1"].score
    # undated docs: recency is the 'unknown' constant whatever the clock
    assert a["knowledge/d1"].rank_score == b["knowledge/d1"].rank_score


def test_explain_terms_sum_to_raw_score(tiny_vault):
    _tiny(tiny_vault)
    index = dreamdb.open(tiny_vault)
    (hit,) = [h for h in index.recall("apple banana cherry", explain=True) if h.doc_id == "knowledge/d2"]
    assert sum(t["bm25"] for t in hit.terms) == pytest.approx(hit.score, abs=1e-5)
    s = hit.signals
    expected = (S.base_score(s["bm25"], s["bm25f"]) + s["identity_boost"]) * s["recency"] * s["status_factor"] \
        * s["type_factor"] * s["confidence_factor"]
    assert hit.rank_score == pytest.approx(expected, rel=1e-5)


def test_bm25f_by_hand(tiny_vault):
    # The title field is weighted ×3: a query for 'alpha' on d1 (title only).
    _tiny(tiny_vault)
    index = dreamdb.open(tiny_vault)
    (hit,) = index.recall("alpha", explain=True)
    # avg title length 1, d1 title length 1 → pseudo-tf = 3·1/1 = 3; bm25f = idf·3·2.5/(3+1.5)
    idf = math.log(1 + 2.5 / 1.5)
    assert hit.signals["bm25f"] == pytest.approx(idf * 3 * 2.5 / 4.5, abs=1e-5)
    # identity: 'alpha' covers the title fully → 1.5 · 1² · max(raw, 1)
    assert hit.signals["coverage"] == 1.0
    assert hit.signals["identity_boost"] == pytest.approx(1.5 * max(hit.score, 1.0), abs=1e-5)


def test_signals_reference_constants():
    assert S.recency_factor(None) == 0.925
    assert S.recency_factor(0) == pytest.approx(1.0)
    assert S.recency_factor(120) == pytest.approx(0.925)
    assert S.recency_factor(-5) == pytest.approx(1.0)  # future dates count as today
    assert S.status_factor("completed") == 0.85
    assert S.type_factor("changelog", False) == 0.85
    assert S.type_factor("knowledge", True) == 0.4
    assert S.identity_boost(0.5, 0.5) == pytest.approx(1.5 * 0.25 * 1.0)
    assert S.base_score(2.0, 4.0) == 3.0 and S.base_score(4.0, 2.0) == 4.0


def test_tie_score_keeps_order_and_ties_last_bit_differences():
    """signals.tie_score: what hits sort by before (newest, doc_id)."""
    x = 0.15670808455621799
    assert S.tie_score(x) == S.tie_score(math.nextafter(x, 1.0)) == S.tie_score(0.156708084556218)
    assert S.tie_score(0.0) == 0.0 and S.tie_score(1.0) == 1.0 and S.tie_score(2.5) == 2.5
    assert S.tie_score(x * (1 + 1e-9)) > S.tie_score(x)  # a real difference still orders
    values = sorted(abs(math.sin(i)) * 10 ** (i % 7 - 3) for i in range(2000))
    keys = [S.tie_score(v) for v in values]
    assert keys == sorted(keys) and all(abs(k - v) <= v * 2.0 ** -S.TIE_BITS for k, v in zip(keys, values))


def _versions(vault):
    # After analysis (identifiers beside their pieces, at the same position: tf, not length):
    # r5 = release | v0 ship v0 (len 3; + 0.5.0, 0.6.0 once each);
    # r6 = release | v0 ship (len 2; + 0.6.0); r7 = release | v0 ship sail (len 3).
    write_doc(vault, "knowledge/r5.md", "---\ntitle: release\n---\nv0.5.0 ship, v0.6.0\n")
    write_doc(vault, "knowledge/r6.md", "---\ntitle: release\n---\nv0.6.0 ship\n")
    write_doc(vault, "knowledge/r7.md", "---\ntitle: release\n---\nv0 ship sail\n")


def test_a_version_number_is_one_more_term_by_hand(tiny_vault):
    """QA round 45 M3: ``v0.5.0`` split on punctuation is ``v0`` alone (``5`` and ``0`` are one character), which
    every 0.x version holds; the whole number is a term too (analyzer.identifier_terms)."""
    _versions(tiny_vault)
    index = dreamdb.open(tiny_vault)
    hits = {h.doc_id: h for h in index.recall("v0.5.0", top=5, now="2026-01-01T00:00:00Z", explain=True)}
    assert list(hits)[0] == "knowledge/r5"
    # lengths (body + title) 4, 3, 4: avgdl 11/3; v0 df 3, 0.5.0 df 1
    avgdl = 11 / 3
    v0_r5 = F.bm25_term(2, 4, avgdl, F.idf(3, 3))
    ident_r5 = F.bm25_term(1, 4, avgdl, F.idf(3, 1))
    assert hits["knowledge/r5"].score == pytest.approx(v0_r5 + ident_r5, abs=1e-6)
    assert {t["term"]: t["df"] for t in hits["knowledge/r5"].terms} == {"v0": 3, "0.5.0": 1}
    # r7 holds v0 alone: v0's part only, with its own length
    assert hits["knowledge/r7"].score == pytest.approx(F.bm25_term(1, 4, avgdl, F.idf(3, 3)), abs=1e-6)
    # a query without an identifier scores as the split alone: the identifiers add to no length
    plain = {h.doc_id: h.score for h in index.recall("ship", top=5, now="2026-01-01T00:00:00Z")}
    assert plain["knowledge/r6"] == pytest.approx(F.bm25_term(1, 3, avgdl, F.idf(3, 3)), abs=1e-6)
    assert index.recall("v0.6.0", top=1)[0].doc_id == "knowledge/r6"  # the shorter of the two that hold it


def test_a_camel_case_word_is_found_by_its_parts_by_hand(tiny_vault):
    """``setup version`` finds the note that writes ``setupVersion`` (analyzer.compound_terms), scored as BM25
    over the parts at the word's position: term frequency, not length; and ``setupVersion`` finds notes that
    write the words apart."""
    write_doc(tiny_vault, "knowledge/camel.md", "---\ntitle: drift\n---\nDetect setupVersion drift.\n")
    write_doc(tiny_vault, "knowledge/apart.md", "---\ntitle: drift\n---\nThe setup has a version.\n")
    write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: drift\n---\nUnrelated text here.\n")
    index = dreamdb.open(tiny_vault)
    hits = {h.doc_id: h for h in index.recall("setup version", top=5, now="2026-01-01T00:00:00Z", explain=True)}
    assert set(hits) == {"knowledge/camel", "knowledge/apart"}
    # lengths: drift | detect setupversion drift (4); drift | setup version (3); drift | unrel text (3)
    avgdl = 10 / 3
    expected = F.bm25_term(1, 4, avgdl, F.idf(3, 2)) * 2  # setup and version, df 2 each, tf 1, length 4
    assert hits["knowledge/camel"].score == pytest.approx(expected, abs=1e-6)
    assert hits["knowledge/apart"].score == pytest.approx(F.bm25_term(1, 3, avgdl, F.idf(3, 2)) * 2, abs=1e-6)
    assert "setupVersion" in hits["knowledge/camel"].snippet
    both = [h.doc_id for h in index.recall("setupVersion", top=5)]
    assert both[0] == "knowledge/camel" and "knowledge/apart" in both  # the word itself, then its parts apart


def test_a_snake_case_identifier_finds_the_note_that_names_it(tiny_vault):
    """QA round 78 F5: ``DEFAULT_SNAPSHOT_BUDGET_TOKENS`` ranked the one note naming it fourth, below notes that
    use its words often (snake_case was split into its parts only); the whole identifier is one more term."""
    write_doc(tiny_vault, "knowledge/env.md", "---\ntitle: Settings\n---\nThe default comes from"
              " DEFAULT_SNAPSHOT_BUDGET_TOKENS when set.\n\nOther settings follow here at some length.\n")
    for i in range(3):
        write_doc(tiny_vault, f"knowledge/words{i}.md", f"---\ntitle: Snapshot budget {i}\n---\nThe default snapshot"
                  " budget is counted in tokens; the snapshot budget default tokens.\n")
    index = dreamdb.open(tiny_vault)
    hits = index.recall("DEFAULT_SNAPSHOT_BUDGET_TOKENS", top=5, explain=True)
    assert hits[0].doc_id == "knowledge/env", [h.doc_id for h in hits]
    assert "default_snapshot_budget_tokens" in [t["term"] for t in hits[0].terms]
    assert "DEFAULT_SNAPSHOT_BUDGET_TOKENS" in hits[0].snippet
    assert len(hits) == 4  # (its parts still find the notes that write the words)


def test_a_name_numbered_with_a_hyphen_finds_the_entry_of_that_number(tiny_vault):
    """QA round 127-B F1: 20 changelog entries "PARREM-1 … PARREM-20 parallel entry" tied for ``PARREM-7`` (its 7 was
    dropped as a one-character piece), and the ties' order left PARREM-7 out of the top 5."""
    from dreamdb.writes.changelog import remember

    for i in range(1, 21):
        remember(tiny_vault, f"PARREM-{i} parallel entry", scope="qa")
    index = dreamdb.open(tiny_vault)
    hits = index.recall("PARREM-7", top=5, explain=True)
    assert "PARREM-7 " in hits[0].title + " " and "parrem7" in [t["term"] for t in hits[0].terms], hits[0]
    assert hits[0].score > hits[1].score  # (the others hold parrem only)
    assert "PARREM-17 " in index.recall("parrem-17", top=1)[0].title + " "
    assert len(index.recall("PARREM 7", top=50)) == 20  # (apart, 7 is still no term: every entry matches parrem)


def test_a_name_numbered_with_and_without_its_hyphen_is_one_term(tiny_vault):
    """QA round 153-G F7: ``WS-3`` was the terms ``ws`` and ``ws-3``, ``WS3`` the term ``ws3``, so neither spelling
    found a note written in the other: ``WS-3`` matched ``ws`` alone (every workstream's note) and missed the note
    titled "… WS3"; ``WS4`` missed the note writing ``WS-4``. The name numbered with a hyphen is the term of the name
    written without it, in notes and queries alike."""
    write_doc(tiny_vault, "knowledge/roster.md", "---\nname: \"Sleep Specialist Roster Decision (issue #9 WS3)\"\n---\n"
              "Keep three specialists; the self-check report line was added in WS4.\n")
    write_doc(tiny_vault, "knowledge/reviewer.md", "---\nname: Sub-agent iterative reviewer pattern\n---\n"
              "Three parallel workstreams (WS-1 manifest install, WS-2 sleep specialist fixes, WS-4 dashboard).\n"
              "The reviewer classified the WS-4 dashboard overhaul as additive.\n")
    write_doc(tiny_vault, "knowledge/models.md", "---\nname: Model comparison\n---\nWe compared GPT-4 with Claude.\n")
    write_doc(tiny_vault, "knowledge/costs.md", "---\nname: Model costs\n---\nGPT4 costs more per token.\n")
    index = dreamdb.open(tiny_vault)
    hits = {h.doc_id: h for h in index.recall("WS-3", top=5, explain=True)}
    assert "ws3" in [t["term"] for t in hits["knowledge/roster"].terms], hits  # (here ws, in one note, is the rarer)
    assert "ws3" not in [t["term"] for t in hits["knowledge/reviewer"].terms]  # (it holds ws alone)
    hits = index.recall("WS4", top=5, explain=True)
    assert {h.doc_id for h in hits} == {"knowledge/roster", "knowledge/reviewer"}, hits
    reviewer = next(h for h in hits if h.doc_id == "knowledge/reviewer")
    assert next(t for t in reviewer.terms if t["term"] == "ws4")["tf"]["body"] == 2 and "WS-4" in reviewer.snippet
    assert {h.doc_id for h in index.recall("GPT4")} == {"knowledge/costs", "knowledge/models"}
    assert [h.doc_id for h in index.recall("GPT-4")][0] == "knowledge/models"
    assert "knowledge/costs" in [h.doc_id for h in index.recall("GPT-4")]
    assert [h.doc_id for h in index.recall("WS-2")][0] == "knowledge/reviewer"  # (no note writes WS2: as before)


def test_a_numbered_name_holding_a_digit_is_not_the_name_without_its_hyphen(tiny_vault):
    """QA round 154-A F1: ``v1-2`` was the term ``v12``, so a note on API v1-2 and one on API v12 were found by either
    query with the same score (``ipv4-6``/``ipv46``, ``abc1-2``/``abc12``, ``k8s-1``/``k8s1`` alike). A part before
    the hyphen that holds a digit is not joined to the number; WS-3 and WS3 still find each other, both ways."""
    pairs = (("v12", "v1-2"), ("ipv46", "ipv4-6"), ("abc12", "abc1-2"), ("k8s1", "k8s-1"), ("WS3", "WS-3"),
             ("GPT4", "GPT-4"))
    for n, (joined, hyphenated) in enumerate(pairs):  # (file names without the names: the slug is matched too)
        write_doc(tiny_vault, f"knowledge/joined-{n}.md",
                  f"---\ntitle: Release\n---\nWe shipped API {joined} to everyone.\n")
        write_doc(tiny_vault, f"knowledge/hyphenated-{n}.md",
                  f"---\ntitle: Support\n---\nSupported API {hyphenated} only, older clients.\n")
    index = dreamdb.open(tiny_vault)
    for n, (joined, hyphenated) in enumerate(pairs[:4]):  # (a query for either spelling: the note writing it, alone)
        assert [h.doc_id for h in index.recall(joined)] == [f"knowledge/joined-{n}"], joined
        hits = index.recall(hyphenated, explain=True)
        assert hits[0].doc_id == f"knowledge/hyphenated-{n}", hyphenated
        assert f"knowledge/joined-{n}" not in [h.doc_id for h in hits], hits
        assert hyphenated.lower() in [t["term"] for t in hits[0].terms], hits[0]
    for n, (joined, hyphenated) in enumerate(pairs[4:], 4):  # (letters before the hyphen: both notes, as before)
        for query in (joined, hyphenated):
            found = {h.doc_id for h in index.recall(query)}
            assert found == {f"knowledge/joined-{n}", f"knowledge/hyphenated-{n}"}, query


def test_a_numbered_name_written_with_a_unicode_hyphen_finds_and_is_found_by_the_other_spellings(tiny_vault):
    """QA round 154-A F6: ``WS‐3`` (U+2010) and ``WS‑3`` (U+2011) were the term ``ws`` alone, so neither found nor was
    found by ``WS3``/``WS-3``. They are ``WS-3`` now, in notes and queries; an en dash (``WS–3``) marks a range and
    joins nothing."""
    spellings = {"ascii": "WS-3", "hyphen": "WS\u20103", "nbhyphen": "WS\u20113", "joined": "WS3"}
    for name, written in {**spellings, "endash": "WS\u20133"}.items():
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\ntitle: Plan {name}\n---\nThe {written} roster.\n")
    write_doc(tiny_vault, "knowledge/ranged.md", "---\ntitle: Versions\n---\nWe support API v1\u20102 only.\n")
    write_doc(tiny_vault, "knowledge/twelve.md", "---\ntitle: Versions\n---\nWe support API v12 only.\n")
    index = dreamdb.open(tiny_vault)
    for query in spellings.values():
        hits = index.recall(query, top=10, explain=True)
        held = {h.doc_id for h in hits if "ws3" in [t["term"] for t in h.terms]}
        assert held == {f"knowledge/{name}" for name in spellings}, (query, hits)
        assert "knowledge/endash" not in held
    assert [h.doc_id for h in index.recall("v1-2")] == ["knowledge/ranged"]  # (154-A F1 with U+2010: not v12)
    assert [h.doc_id for h in index.recall("v1\u20112")] == ["knowledge/ranged"]
    assert [h.doc_id for h in index.recall("v12")] == ["knowledge/twelve"]


@needs_real_vault
def test_the_real_vaults_workstreams_are_found_with_and_without_the_hyphen(real_index):
    """QA round 153-G F7 on the real vault: its decision note is titled "Sleep Specialist Roster Decision (issue #9
    WS3)", and the reviewer pattern writes ``WS-4`` four times (``WS-1``, ``WS-2``, ``WS-4`` in one line)."""
    roster, reviewer = "knowledge/sleep-specialist-roster-decision", "knowledge/sub-agent-iterative-reviewer-pattern"
    assert [h.doc_id for h in real_index.recall("WS-3", top=5)][0] == roster
    assert [h.doc_id for h in real_index.recall("WS3", top=5)][0] == roster
    assert reviewer in [h.doc_id for h in real_index.recall("WS4", top=5)]
    assert [h.doc_id for h in real_index.recall("WS-4", top=5)][0] == reviewer


def test_a_note_named_with_a_number_is_found_by_its_name(tiny_vault):
    """QA round 128-A F2: notes TASK-1.md … TASK-9.md, named so only in their file names, tied for ``TASK-7`` (the
    slug's words were its terms, not its whole name) and came in id order, TASK-7 seventh."""
    for i in range(1, 10):
        write_doc(tiny_vault, f"knowledge/TASK-{i}.md", f"Fix the login bug, number {i}.\n")
    index = dreamdb.open(tiny_vault)
    hits = index.recall("TASK-7", top=3, explain=True)
    assert hits[0].doc_id == "knowledge/TASK-7" and hits[0].rank_score > hits[1].rank_score, hits
    assert {"term": "task7", "kind": "query"}.items() <= next(t for t in hits[0].terms if t["term"] == "task7").items()
    assert next(t for t in hits[0].terms if t["term"] == "task7")["tf"]["slug"] == 1


FILE_NAMES = ("parserRewrite", "release-v0.5.0", "build-c++", "notes-c#", "TASK-7", "session_id", "JWTs", "XMLParser")


def _slug_terms(index, doc_id: str, field: str = "tf_slug") -> set[str]:
    return {t for (t,) in index.conn.execute(
        f"SELECT term FROM postings p JOIN documents d ON d.id = p.doc WHERE d.doc_id = ? AND p.{field} > 0", (doc_id,))}


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_file_name_has_the_terms_its_text_has_as_a_title(tiny_vault, engine):
    """QA round 148-A F1: a note's file name (slug) had only its analysed words as terms, not the identifiers the
    title gets for the same text: ``parserRewrite.md`` was ``parserrewrit`` alone (not ``parser``, ``rewrit``),
    ``release-v0.5.0.md`` had no ``0.5.0``, ``build-c++.md`` no ``c++``; a query naming the file exactly ranked a note
    named otherwise first (``parserRewrite`` → ``parser-rewrite``) or tied it (``build c++`` → ``build-c``)."""
    for i, name in enumerate(FILE_NAMES):
        write_doc(tiny_vault, f"knowledge/{name}.md", "---\nname: Design notes\n---\nWhy we split it.\n")
        write_doc(tiny_vault, f"knowledge/titled-{i}.md", f"---\nname: {name}\n---\nWhy we split it.\n")
    index = dreamdb.open(tiny_vault, engine=engine)
    index.sync()
    for i, name in enumerate(FILE_NAMES):  # the file name's terms are the title's (hyphens and underscores as spaces)
        titled = _slug_terms(index, f"knowledge/titled-{i}", "tf_title")
        assert _slug_terms(index, f"knowledge/{name}") == titled, name
    assert _slug_terms(index, "knowledge/parserRewrite") == {"parserrewrit", "parser", "rewrit"}
    assert _slug_terms(index, "knowledge/release-v0.5.0") == {"releas", "v0", "0.5.0"}
    assert _slug_terms(index, "knowledge/build-c++") == {"build", "c++"}
    assert _slug_terms(index, "knowledge/notes-c#") == {"note", "c#"}
    assert _slug_terms(index, "knowledge/JWTs") == {"jwts", "jwt"}
    assert _slug_terms(index, "knowledge/XMLParser") == {"xmlparser", "xml", "parser"}
    assert _slug_terms(index, "knowledge/session_id") == {"session", "id", "session_id"}
    assert _slug_terms(index, "knowledge/TASK-7") == {"task", "task7"}  # (QA round 128-A F2; 153-G F7: task7)
    # the slug stays out of the BM25 fields: no length, no document frequency
    assert index.conn.execute("SELECT len_title, len_description, len_tags, len_body FROM documents"
                              " WHERE doc_id = 'knowledge/parserRewrite'").fetchone() == (2, 0, 0, 1)
    assert index.conn.execute("SELECT df FROM terms WHERE term = '0.5.0'").fetchone() == (1,)  # (titled-1 alone)


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_note_is_found_first_by_its_file_name_as_written(tiny_vault, engine):
    """QA round 148-A F1, the differential test's vault: twins that differ in their file names only (the older
    ``release-v0.5.0`` by its date too); the one named what the query writes covers it whole and comes first."""
    notes = {"parserRewrite": ("Design", "Why we split the parser.", "2026-11-01"),
             "parser-rewrite": ("Design", "Why we split the parser.", "2026-11-01"),
             "release-v0.5.0": ("Release", "Shipped the exporter.", "2026-10-01"),
             "release-v0.6.0": ("Release", "Shipped the exporter.", "2026-11-01"),
             "build-c++": ("Build", "Compiler flags.", "2026-11-01"),
             "build-c": ("Build", "Compiler flags.", "2026-11-01")}
    for name, (title, body, date) in notes.items():
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\nname: {title} notes\ndate: {date}\n---\n{body}\n")
    index = dreamdb.open(tiny_vault, engine=engine)
    for query, first, second in (("parserRewrite", "parserRewrite", "parser-rewrite"),
                                 ("release v0.5.0", "release-v0.5.0", "release-v0.6.0"),
                                 ("build c++", "build-c++", "build-c")):
        hits = index.recall(query, top=2, explain=True, now="2026-12-01T00:00:00Z")
        assert [h.doc_id for h in hits] == [f"knowledge/{first}", f"knowledge/{second}"], query
        assert hits[0].signals["coverage"] == 1.0 and hits[0].rank_score > hits[1].rank_score, query
        assert hits[0].signals["identity_boost"] == pytest.approx(1.5 * hits[0].signals["bm25"], rel=1e-6), query
    # and its camelCase file name's words find it as they find parser-rewrite (both cover the query whole)
    hits = index.recall("parser rewrite", top=2, explain=True, now="2026-12-01T00:00:00Z")
    assert {h.doc_id for h in hits} == {"knowledge/parserRewrite", "knowledge/parser-rewrite"}
    assert [h.signals["coverage"] for h in hits] == [1.0, 1.0] and hits[0].rank_score == hits[1].rank_score


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_explain_gives_a_slug_only_term_the_idf_of_its_df(tiny_vault, engine):
    """QA round 148-A F2: ``--explain`` said ``idf 0.000`` for a query term of df 0 that the hit holds in its slug
    alone (``v0`` of ``release-v0.5.0.md``); docs/json.md defines ``idf`` as the term's IDF, ln(1 + (N − df + 0.5)/
    (df + 0.5)): with N = 2 and df 0, ln 6. Its BM25 shares stay 0 (no BM25 field holds it)."""
    write_doc(tiny_vault, "knowledge/release-v0.5.0.md", "---\nname: Release notes\n---\nShipped the exporter.\n")
    write_doc(tiny_vault, "knowledge/other.md", "---\nname: Build notes\n---\nCompiler flags.\n")
    index = dreamdb.open(tiny_vault, engine=engine)
    hit = index.recall("release v0.5.0", top=1, explain=True)[0]
    lines = {t["term"]: t for t in hit.terms}
    for term in ("v0", "0.5.0"):  # (0.5.0 of the slug: QA round 148-A F1)
        assert lines[term]["df"] == 0 and lines[term]["tf"]["slug"] == 1, lines[term]
        assert lines[term]["idf"] == pytest.approx(math.log(6.0), abs=1e-6) == pytest.approx(1.791759, abs=1e-6)
        assert lines[term]["bm25"] == 0.0 and lines[term]["bm25f"] == 0.0
    # release: df 1 of 2, ln(1 + 1.5/1.5) = ln 2, as before; the query lines still sum to the raw score
    assert lines["releas"]["df"] == 1 and lines["releas"]["idf"] == pytest.approx(math.log(2.0), abs=1e-6)
    assert sum(t["bm25"] for t in hit.terms if t["kind"] == "query") == pytest.approx(hit.score, abs=1e-5)


def test_c_plus_plus_is_searchable(tiny_vault):
    write_doc(tiny_vault, "knowledge/cpp.md", "---\ntitle: rewrite\n---\nWe rewrote the parser in C++ (not C#).\n")
    write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: rewrite\n---\nWe rewrote the parser in Rust.\n")
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall("C++")] == ["knowledge/cpp"]
    assert [h.doc_id for h in index.recall("c#")] == ["knowledge/cpp"]
    assert index.recall("F#") == [] and not any("no searchable terms" in n for n in index.take_notes())


@needs_real_vault
def test_raw_bm25_of_any_document_equals_the_ranking_score(real_index):
    """QA round 48 L5: a document the dense channel brought from below BM25's 50 candidates showed ``bm25 0``
    beside its own matching terms; its raw BM25 is now computed (rank.raw_bm25), equal to the ranking's."""
    from dreamdb.hybrid import CANDIDATES, _dense_only
    from dreamdb.ranking.rank import plan_query, rank, raw_bm25

    plan = plan_query("how do agents remember things between sessions")
    ranked = rank(real_index.conn, plan, top=CANDIDATES, now_days=20683.0)
    everyone = [r[0] for r in real_index.conn.execute("SELECT id FROM documents")]
    raw = raw_bm25(real_index.conn, everyone, plan.terms)
    assert len(ranked) == CANDIDATES and len(raw) > 2 * CANDIDATES  # many more documents match than 50
    for r in ranked:
        assert raw[r.rowid] == pytest.approx(r.score, rel=1e-9)
    # rankScore orders the 50, not the raw score: a document below them may outscore one of them raw
    below = [d for d in raw if d not in {r.rowid for r in ranked}]
    stubs = _dense_only(real_index.conn, below[:10], 20683.0, plan)
    assert all(stubs[d].score == pytest.approx(raw[d], rel=1e-12) and stubs[d].score > 0 for d in below[:10])
    # QA round 68 M1: explained, they carry every BM25 signal the full ranking gives them, not bm25f 0 / base 0
    explained = _dense_only(real_index.conn, below[:10], 20683.0, plan, explain=True)
    whole = {r.rowid: r for r in rank(real_index.conn, plan, top=len(everyone), now_days=20683.0)}
    for d in below[:10]:
        assert explained[d].signals() == whole[d].signals() and explained[d].bm25f > 0 and explained[d].base > 0
    assert raw_bm25(real_index.conn, everyone, []) == {}


def _long_queries(conn, sizes=(4000, 1000)) -> list[str]:
    """Prose queries cut from the vault's own notes: their bodies, in doc_id order, run together and cut into
    pieces of each size (three pieces of each)."""
    bodies = " ".join(b for (b,) in conn.execute("SELECT body FROM documents WHERE type = 'knowledge' ORDER BY doc_id"))
    text = " ".join(bodies.split())
    return [text[start * size:(start + 1) * size] for size in sizes for start in (0, 7, 19)]


def test_a_query_past_the_term_cap_says_how_much_of_it_was_read(tiny_vault):
    """QA round 155-C F2: a query past MAX_QUERY_TERMS distinct terms is read up to the word that brings the last term
    kept, and the note says so (it gave the number of the query's distinct terms, which its words unread no longer
    tell); one whose terms past the cap come of its identifiers, every word read, says as it did."""
    from dreamdb.ranking.rank import MAX_QUERY_TERMS

    _tiny(tiny_vault)
    index = dreamdb.open(tiny_vault)
    words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(300)]  # (300 distinct terms, no stem cut)
    assert index.recall(" ".join(words + ["sleep"] * 500)) == []
    assert index.take_notes() == [f"the query has more than {MAX_QUERY_TERMS} distinct terms; only the first "
                                  f"{MAX_QUERY_TERMS} were used, and its last 544 words, past them, were not read"]
    index.recall(" ".join(words[:250] + [f"{words[i]}_{words[i + 1]}" for i in range(10)]))  # (snake_case: 10 more)
    assert index.take_notes() == [f"the query has 260 distinct terms; only the first {MAX_QUERY_TERMS} were used"]
    index.close()


def test_a_query_of_as_many_terms_as_the_cap_then_repeats_or_stopwords_is_read_whole_without_a_note(tiny_vault,
                                                                                                     monkeypatch):
    """QA round 156-A F5: exactly MAX_QUERY_TERMS distinct words followed by repeats (and a one-letter word or a
    stopword) or by stopwords were said to hold "more than 256 distinct terms", "its last 11 words (or 90), past
    them, were not read": the reading stopped at the 256th term, though no word after it brings another. Such a query
    is read whole, its plan that of every word read, and no note is given; a word past the cut that brings another
    term still cuts it, and the note counts every word past the cut."""
    from dreamdb.ranking import rank
    from dreamdb.ranking.rank import MAX_QUERY_TERMS, plan_query

    _tiny(tiny_vault)
    words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(MAX_QUERY_TERMS)]  # (no stem cut)
    queries = [words + words[:10] + ["x"], words + words[:10] + ["the"], words + ["the", "and", "of"] * 30,
               words + ["Wabx", "WACX", "wadx."] * 5 + ["a"]]  # (capitalised or punctuated: the same terms)
    with monkeypatch.context() as every_word:  # (every word read)
        every_word.setattr(rank, "_words_read", lambda words, *args: len(words))
        whole = [plan_query(" ".join(q), None) for q in queries]
    with dreamdb.open(tiny_vault) as index:
        for q, read_whole in zip(queries, whole):
            plan = plan_query(" ".join(q), None)
            assert plan == read_whole and plan.unread == 0 and len(plan.terms) == MAX_QUERY_TERMS, q[-3:]
            assert index.recall(" ".join(q)) == [] and index.take_notes() == [], q[-3:]
        index.recall(" ".join(words + words[:10] + ["sleep"] + words[:5]))  # (a 257th term, 6 words past the cut)
        assert index.take_notes() == [f"the query has more than {MAX_QUERY_TERMS} distinct terms; only the first "
                                      f"{MAX_QUERY_TERMS} were used, and its last 16 words, past them, were not read"]


@needs_real_vault
def test_a_query_past_the_term_cap_is_read_up_to_its_last_term_kept_and_keeps_its_terms(real_index, kenet_lexicon,
                                                                                        monkeypatch):
    """QA round 155-C F2: every word of a query was analysed and looked up (its language by the lexicon, its
    translations, its forms), though only its first MAX_QUERY_TERMS distinct terms are kept: 50,000 random words took
    9.4 s, under the Index's lock. The words after the one that brings the last term kept are no longer read; the
    plan of such a query (English, Turkish, in title case, over the real vault with the lexicon) has the terms, the
    replacements and the translations it had when every word was read, and one under the cap is read whole."""
    import json
    import random
    import string

    from dreamdb.lexicon import Lexicon
    from dreamdb.ranking import rank
    from dreamdb.ranking.rank import MAX_QUERY_TERMS, SqlVocabulary, plan_query
    from dreamdb.ranking.synonyms import load_synonyms

    conn = real_index.conn
    syn, vocabulary, lexicon = load_synonyms(real_index.vault), SqlVocabulary(conn), Lexicon(kenet_lexicon)
    english = " ".join(" ".join(b for (b,) in conn.execute(
        "SELECT body FROM documents WHERE type = 'knowledge' AND NOT turkish ORDER BY doc_id")).split())
    turkish = [b for (b,) in conn.execute("SELECT body FROM documents WHERE turkish ORDER BY doc_id")]
    xquad = SHARED / "eval-data" / "xquad_tr_en" / "corpus.jsonl"
    if xquad.is_file():  # (the vault's Turkish notes hold 6,000 characters: XQuAD's Turkish paragraphs, where there)
        turkish += [d["text"] for d in map(json.loads, xquad.open(encoding="utf-8")) if d.get("lang") == "tr"][:60]
    turkish = " ".join(" ".join(turkish).split())
    rng = random.Random(5)
    queries = {"english": english[:20_000], "short": english[:1_000],
               "random": " ".join("".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(5_000))}
    if len(turkish) >= 20_000:
        queries.update({"turkish": turkish[:20_000],
                        "title case": " ".join(w.capitalize() for w in turkish[:20_000].split())})
    with monkeypatch.context() as every_word:  # (every word read: as before)
        every_word.setattr(rank, "_words_read", lambda words, *args: len(words), raising=False)
        read_whole = {name: plan_query(text, syn, vocabulary=vocabulary, lexicon=lexicon)
                      for name, text in queries.items()}
    for name, text in queries.items():
        whole, plan = read_whole[name], plan_query(text, syn, vocabulary=vocabulary, lexicon=lexicon)
        assert plan.terms == whole.terms and (plan.turkish, plan.resolved, plan.translated, plan.by_lexicon) == (
            whole.turkish, whole.resolved, whole.translated, whole.by_lexicon), name
        if name == "short":
            assert plan == whole and getattr(plan, "unread", 0) == 0 and len(plan.terms) < MAX_QUERY_TERMS
        else:
            assert getattr(plan, "unread", 0) > len(text.split()) / 2, name  # (terms: fewer where 2 words became 1)
    assert not read_whole["english"].turkish and all(read_whole[n].turkish for n in ("turkish", "title case") if n in
                                                         queries)
    # the lookups are of the words read only: the lexicon's reading of the query's language, of 50,000 words
    seen = []
    real_vote = rank.turkish_by_lexicon
    monkeypatch.setattr(rank, "turkish_by_lexicon", lambda words, *args: seen.append(len(words)) or real_vote(
        words, *args))
    plan = plan_query(" ".join("".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(50_000)), syn,
                      vocabulary=vocabulary, lexicon=lexicon)
    assert len(plan.terms) == MAX_QUERY_TERMS and seen and max(seen) < 1_000 and plan.unread > 49_000


@needs_real_vault
@pytest.mark.parametrize("lengths", ["read once", "a posting at a time"])
def test_the_fast_ranking_statement_gives_the_plain_ones_hits_and_floats(real_index, lengths, monkeypatch):
    """QA round 153-C F1: the ranking statement's fast form (MATERIALIZED tables, ``r`` kept from being flattened
    into ``agg``, field lengths read once a document) returns the very rows of the plain one, the statement before
    it: the same hits in the same order, every float equal to the last bit, on the real vault's notes as long
    prompts (4,000 and 1,000 characters, up to 255 terms), short queries, top 5 and 50 (the candidates a fusion
    asks for), filters, synonyms and translated words counted as classes."""
    import random

    from dreamdb.ranking.rank import MAX_QUERY_TERMS, Filters, SqlVocabulary, plan_query, rank
    from dreamdb.ranking.synonyms import load_synonyms
    from dreamdb.records import replace

    monkeypatch.setattr("dreamdb.ranking.rank.LENGTHS_AFTER_POSTINGS", 0.0 if lengths == "read once" else math.inf)
    conn = real_index.conn
    syn, vocabulary, rng = load_synonyms(real_index.vault), SqlVocabulary(conn), random.Random(11)
    vocab = [t for (t,) in conn.execute("SELECT term FROM terms WHERE df BETWEEN 2 AND 200 ORDER BY term")]
    queries = _long_queries(conn) + ["how do agents remember things between sessions", "sleep debt", "sqlite wal",
                                     "recall hook latency budget", "release checklist"]
    filters = [Filters(), Filters(types=["knowledge", "feature"]), Filters(since_days=20683.0 - 400, min_level=2),
               Filters(exclude_types=["changelog"], include_expired=True)]
    longest = 0
    for i, text in enumerate(queries):
        plan = plan_query(text, syn, vocabulary=vocabulary)
        longest = max(longest, len(plan.terms))
        plans = [plan, replace(plan, translated={t: rng.choice(vocab) for t in plan.terms[::3]})]
        for plan in plans:
            for top in (5, 50):
                f = filters[(i + top) % len(filters)]
                fast = rank(conn, plan, top=top, now_days=20683.0, filters=f)
                plain = rank(conn, plan, top=top, now_days=20683.0, filters=f, plain=True)
                assert len(fast) == min(top, len(plain)) and fast
                assert [(r.doc_id, r.signals(), r.score, r.bm25f, r.structured, r.rank_score) for r in fast] == \
                       [(r.doc_id, r.signals(), r.score, r.bm25f, r.structured, r.rank_score) for r in plain]
    assert longest == MAX_QUERY_TERMS  # (the 4,000-character prompts reach the cap)


@needs_real_vault
def test_a_long_prompt_costs_the_ranking_statement_less_of_its_plain_work(real_index):
    """QA round 153-C F1: a 4,000-character prompt (256 terms) was scored with SQLite evaluating each query term's
    JSON again for every posting, the field-length arithmetic three times over, and reading each posting's
    document row (its body's overflow pages, where the lengths follow it): seconds over 10,000 notes. Now the
    statement reads every document's lengths once (``MATERIALIZE dl``, a scan of ``documents``, which the
    posting loop no longer searches) and the query terms once (``MATERIALIZE q``); counted in SQLite's virtual
    machine instructions (``set_progress_handler``: deterministic, unlike a clock; a row read from the disk
    counts as one), it does at most three quarters of the plain statement's work on the real vault's notes."""
    from dreamdb.ranking.rank import SqlVocabulary, plan_query, rank

    conn = real_index.conn
    counted = [0]

    def count():
        counted[0] += 1
        return 0

    class Recorder:  # the connection, keeping the ranking statement it runs
        def execute(self, sql, params=()):
            if "agg AS" in sql:
                statements.append((sql, params))
            return conn.execute(sql, params)

    for text in _long_queries(conn, sizes=(4000,)):
        plan = plan_query(text, vocabulary=SqlVocabulary(conn))
        work, plans = {}, {}
        for plain in (True, False):
            statements = []
            rank(Recorder(), plan, top=5, now_days=20683.0, plain=plain)
            (sql, params), = statements
            plans[plain] = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
            counted[0] = 0
            conn.set_progress_handler(count, 1000)
            try:
                conn.execute(sql, params).fetchall()
            finally:
                conn.set_progress_handler(None, 0)
            work[plain] = counted[0]
        assert "MATERIALIZE q" in plans[False] and "MATERIALIZE dl" in plans[False]
        assert "MATERIALIZE q" not in plans[True] and "MATERIALIZE dl" not in plans[True]
        # documents searched by row id for the hits' columns only, where the plain statement did so for every posting too
        assert plans[False].count("SEARCH d USING INTEGER PRIMARY KEY (rowid=?)") == 1
        assert plans[True].count("SEARCH d USING INTEGER PRIMARY KEY (rowid=?)") == 2
        assert work[False] * 4 <= work[True] * 3, work


@pytest.mark.parametrize("engine", ["sql", "memory"])
def test_an_explained_recall_reads_the_query_terms_document_frequencies_once(tiny_vault, engine, monkeypatch):
    """QA round 153-C F1: each explained hit (the prompt hook explains its three) read the document frequency of every
    query term again, a scan of all their postings (0.24 s each for a 4,000-character prompt over 10,000 notes); now
    one read serves every hit, whose terms are those it gave alone."""
    from dreamdb.ranking import rank as R

    _tiny(tiny_vault)
    index = dreamdb.open(tiny_vault, engine=engine)
    calls = []
    read = R.document_frequencies
    monkeypatch.setattr(R, "document_frequencies", lambda conn, terms: calls.append(list(terms)) or read(conn, terms))
    hits = index.recall("apple banana cherry", explain=True, top=3)
    assert len(hits) == 3
    explained = [c for c in calls if c == ["appl", "banana", "cherri"]]
    assert len(explained) == (2 if engine == "sql" else 1), calls  # (the SQL engine's ranking reads them too)
    plan = R.plan_query("apple banana cherry")
    for hit in hits:
        rowid = index.conn.execute("SELECT id FROM documents WHERE doc_id = ?", (hit.doc_id,)).fetchone()[0]
        assert hit.terms == R.explain_terms(index.conn, rowid, plan) and hit.terms
