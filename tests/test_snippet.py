"""Snippets (SPEC §2): the body line holding the query's terms (distinct ones by IDF, then most hits), ±1 line."""

from __future__ import annotations

from dreamdb.analyzer import analyze
from dreamdb.ranking.snippet import CLIP_SEARCH_CHARS, MAX_LINE_CHARS, best_snippet


def _terms(query: str, turkish: bool = False) -> list[str]:
    return analyze(query, turkish=turkish)


def test_words_inside_other_words_do_not_count():
    body = "intro\nhomework rework framework networking\nmiddle\nwe work here\nend"
    assert best_snippet(body, _terms("work")) == "middle\nwe work here\nend"


def test_inflections_count_and_ties_go_to_the_earliest_line():
    body = "a\nscores and scoring\nb\nthe score\nc\nscore score score\nd"
    # "scores" and "scoring" both analyze to "score": line 2 has two hits, line 6 three
    assert best_snippet(body, _terms("score")) == "c\nscore score score\nd"
    assert best_snippet("x\nscores\ny\nscore\nz", _terms("score")) == "x\nscores\ny"


def test_short_terms_match_whole_tokens_only():
    body = "first\napis rapid apiary\nsecond\nthe api_key api\nthird"
    # '_' separates words, as the analyzer does: "api_key" holds the token "api"
    assert best_snippet(body, _terms("api")) == "second\nthe api_key api\nthird"


def test_word_at_the_very_start_of_the_body_counts():
    assert best_snippet("debt debt\nother\nmore debt", _terms("debt")) == "debt debt\nother"


def test_long_line_is_clipped_around_the_first_match():
    line = "filler " * 2000 + "needle here " + "tail " * 2000
    snippet = best_snippet("top\n" + line + "\nbottom", _terms("needle"))
    middle = snippet.split("\n")[1]
    assert "needle" in middle and middle.startswith("…") and middle.endswith("…")
    assert len(middle) <= MAX_LINE_CHARS + 2


def test_a_match_past_the_clip_search_is_found_by_the_snippets_regex():
    """QA round 51: the clip looked through a whole 4 MB line 80 characters at a time (7 s a recall), so past
    CLIP_SEARCH_CHARS it showed the line from its start, the word asked for far beyond it (a note of one 1.7 MB line).
    Past them the word is found as the best line's are, by the snippet's regex over the folded line; a line with no
    word of the query's (the match was in another line) is shown from its start."""
    near = "filler " * ((CLIP_SEARCH_CHARS - 1000) // 7) + "needle " + "tail " * 100
    far = "filler " * (CLIP_SEARCH_CHARS // 7 + 10) + "needles " + "tail " * 100
    huge = "filler " * 600_000 + "Needle " + "tail " * 100
    for line in (near, far, huge):
        middle = best_snippet("top\n" + line + "\nbottom", _terms("needle")).split("\n")[1]
        assert "needle" in middle.lower() and middle.startswith("…") and middle.endswith("…"), middle[:80]
        assert len(middle) <= MAX_LINE_CHARS + 2
    # an identifier of the query past them too (QA round 109-A: c++ was shown from the line's start)
    ident = "filler " * (CLIP_SEARCH_CHARS // 7 + 10) + "written in c++ here " + "tail " * 100
    middle = best_snippet("top\n" + ident, {"c++": 1.0}).split("\n")[1]
    assert "c++" in middle and middle.startswith("…"), middle[:80]
    # "needlework" shares the regex's prefix but is another word: never the centre
    decoy = "filler " * (CLIP_SEARCH_CHARS // 7 + 10) + "needlework " + "tail " * 100
    middle = best_snippet("needle top\n" + decoy, _terms("needle")).split("\n")[1]
    assert middle.startswith("filler") and "needlework" not in middle


def test_empty_body_falls_back_to_description():
    assert best_snippet("", _terms("x y"), fallback="  the description  ") == "the description"


def test_a_hits_snippet_comes_from_its_own_document_after_a_rebuild_renumbers_rows(tiny_vault):
    """QA round 12: the body was read later by row id, which a rebuild gives to another document."""
    import dreamdb
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/a.md", "---\ndescription: about a\n---\nalpha line\n")
    write_doc(tiny_vault, "knowledge/b.md", "---\ndescription: about b\n---\nzebra stripes line\n")
    index = dreamdb.open(tiny_vault)
    hits = index.recall("zebra")
    assert [h.doc_id for h in hits] == ["knowledge/b"]
    (tiny_vault / "knowledge" / "a.md").unlink()
    write_doc(tiny_vault, "knowledge/c.md", "---\ndescription: about c\n---\ncarrot line\n")
    index.sync(force=True)  # b is now row 1 and c row 2, the row b had
    rowid_b = index.conn.execute("SELECT id FROM documents WHERE doc_id = 'knowledge/b'").fetchone()[0]
    assert rowid_b == 1
    assert hits[0].snippet == "zebra stripes line"
    gone = index.recall("carrot")
    (tiny_vault / "knowledge" / "c.md").unlink()
    index.sync()
    assert gone[0].snippet == "about c"  # the document is gone: its description, never another body
    index.close()


def test_a_snippet_read_from_a_damaged_index_falls_back_to_the_description(tiny_vault):
    import dreamdb
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/b.md", "---\ndescription: about b\n---\nzebra stripes line\n")
    index = dreamdb.open(tiny_vault)
    hits = index.recall("zebra")
    path = index.index_path
    index.close()
    size = path.stat().st_size
    path.write_bytes(b"\x00garbage" * (size // 8))  # same size: overwritten, not truncated
    assert hits[0].snippet == "about b"
    index.close()


def test_a_snippet_follows_its_file_when_a_new_same_named_file_takes_its_id(tiny_vault):
    """QA round 13: after a rebuild the hit's id and row could both belong to another notes.md."""
    import dreamdb
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/a/notes.md", "zebra text of file A\n")
    write_doc(tiny_vault, "knowledge/b/notes.md", "zebra text of file B\n")
    index = dreamdb.open(tiny_vault)
    (hit,) = [h for h in index.recall("zebra") if h.doc_id == "knowledge/notes-2"]
    assert hit.path.endswith("knowledge/b/notes.md")
    write_doc(tiny_vault, "knowledge/0/notes.md", "zebra text of file 0\n")
    index.sync(force=True)  # b/notes.md is now knowledge/notes-3; notes-2 is a/notes.md, on b's old row
    assert hit.snippet == "zebra text of file B"
    index.close()


def test_the_line_with_the_whole_version_number_wins():
    body = "v0.4.0 was first.\nnothing here\nv0.5.0 shipped the installer.\nv0.6.0 later."
    assert best_snippet(body, ["v0", "0.5.0"]) == "nothing here\nv0.5.0 shipped the installer.\nv0.6.0 later."
    # QA round 46 M5: word hits alone picked another version's line (two "python", two "10" pieces)
    assert best_snippet("Python 3.10 and Python 3.12 were tried.\nz\nw\nWe pin 3.11 now.\nv", ["python", "3.11"]) \
        == "w\nWe pin 3.11 now.\nv"
    assert best_snippet("a\nversion 10.10.9 shipped\nb\nc\nversion 5.10.3 shipped\nd",
                        ["version", "10", "ship", "5.10.3"]).splitlines()[1] == "version 5.10.3 shipped"
    long = "x " * 200 + "C++ rewrite " + "y " * 200
    assert "C++ rewrite" in best_snippet(long, ["c++"])  # clipped around the identifier


def test_lines_of_encoded_data_are_neither_the_best_line_nor_its_context():
    """Session 34's list: a query matching ``-----BEGIN CERTIFICATE-----`` showed the next line of base64; lines of
    data hold no term, so they are left out and the snippet's context is the nearest lines of text."""
    import base64
    import random

    rng = random.Random(7)
    blob = base64.b64encode(bytes(rng.randrange(256) for _ in range(600))).decode()
    pem = "\n".join(blob[i:i + 64] for i in range(0, len(blob), 64))  # PEM's width
    narrow = "\n".join(blob[i:i + 40] for i in range(0, 400, 40))  # narrower than PEM
    body = (f"```\n-----BEGIN CERTIFICATE-----\n{pem}\n-----END CERTIFICATE-----\n```\n"
            "We rotate the certificate every ninety days.\n"
            f"The signing key, pasted:\n{narrow}\nRotated by the release script.")
    terms = _terms("certificate")
    assert best_snippet(body, terms) == "```\n-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----"
    assert best_snippet(body, _terms("pasted signing key")) == (  # (QA round 60 L8: the gap marked)
        "We rotate the certificate every ninety days.\nThe signing key, pasted:\n…\nRotated by the release script.")
    # with no query term, the first two lines of text
    assert best_snippet(f"{pem}\nfirst words\nsecond words", []) == "first words\nsecond words"
    # a body of data alone: the fallback
    assert best_snippet(pem, terms, fallback="A certificate.") == "A certificate."
    # lines of one long word, a path or an identifier are text, kept as context
    text = "internationalization\nsrc/components/certificate_store.py\nRotateCertificateAuthority\nend"
    assert best_snippet(text, terms) == "internationalization\nsrc/components/certificate_store.py\nRotateCertificateAuthority"


def test_a_long_lines_window_opens_on_the_identifier_the_query_names():
    """QA round 79 F4: the window of a long line naming DEFAULT_SNAPSHOT_BUDGET_TOKENS opened on its first "default",
    and the identifier, which the query named whole, was not shown."""
    line = "The default budget and the snapshot talk. " * 20 + "Here DEFAULT_SNAPSHOT_BUDGET_TOKENS sets it." + " x" * 200
    query = "DEFAULT_SNAPSHOT_BUDGET_TOKENS"
    from dreamdb.analyzer import snake_case_terms

    terms = analyze(query) + snake_case_terms(query)
    shown = best_snippet(line + "\nanother line\n", terms)
    assert "DEFAULT_SNAPSHOT_BUDGET_TOKENS" in shown.splitlines()[0] and len(shown.splitlines()[0]) <= MAX_LINE_CHARS + 2
    plain = best_snippet(line + "\nanother line\n", analyze("default snapshot"))
    assert plain.splitlines()[0].startswith("The default budget")  # (no identifier: the first matching word, as before)


def test_the_line_naming_the_rarer_query_word_wins_over_repeats_of_a_common_one(tmp_path):
    """QA round 80-B F8: lines were ranked by their count of hits, so a line saying a common query word three times
    was shown over the one naming the query's rare word beside it once. A line is weighed by the IDF of the distinct
    terms it holds (Lucene's QueryScorer); the count of hits breaks ties."""
    body = "Intro line.\nBM25 BM25 BM25 everywhere in this line.\nmem0 was rejected.\nOutro."
    assert best_snippet(body, {"bm25": 0.2, "mem0": 3.0}).splitlines()[1] == "mem0 was rejected."
    assert best_snippet(body, ["bm25", "mem0"]).splitlines()[1] == "BM25 BM25 BM25 everywhere in this line."  # (hits)
    both = body.replace("mem0 was rejected.", "mem0 was rejected and BM25 adopted.")
    assert best_snippet(both, ["bm25", "mem0"]).splitlines()[1] == "mem0 was rejected and BM25 adopted."  # (distinct)

    import dreamdb
    from tests.conftest import write_doc

    vault = tmp_path / "_dream_context"
    write_doc(vault, "knowledge/decision.md", f"---\ntitle: Decision\n---\n{body}\n")
    for n in range(6):  # bm25 in every note: its IDF is low, mem0's high
        write_doc(vault, f"knowledge/other-{n}.md", f"---\ntitle: Other {n}\n---\nBM25 note {n}.\n")
    with dreamdb.open(vault) as index:
        hit = index.recall("bm25 mem0")[0]
        assert hit.doc_id == "knowledge/decision" and hit.snippet.splitlines()[1] == "mem0 was rejected."


def test_lines_holding_the_same_terms_tie_in_every_process():
    """Summing a line's term weights in a set's order made the sum depend on the process's hash seed (0.1 + 0.2 +
    0.3 is not 0.3 + 0.2 + 0.1 in floating point): two lines holding the same terms did not tie, and which one
    was shown changed from run to run (CI's run of 4 Dec). The earlier line wins in every process."""
    import os
    import subprocess
    import sys

    code = ("from dreamdb.ranking.snippet import best_snippet; print(best_snippet("
            "'x\\nzebra yak walrus vole\\ny\\nvole walrus yak zebra\\nz', "
            "{'zebra': 0.1, 'yak': 0.2, 'walrus': 0.3, 'vole': 0.7}).splitlines()[1])")
    shown = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout.strip()
             for seed in range(24)}
    assert shown == {"zebra yak walrus vole"}


def test_the_snippet_weighs_a_bounded_number_of_candidate_words(monkeypatch):
    """QA round 94-B F2: a 10 MB note of one repeated query word made 2 million candidate words, each stemmed in
    Python: 2.5 s a recall, 8 s a prompt hook. The snippet weighs the first SNIPPET_CANDIDATES of them (in body order),
    and the lines past them are not searched."""
    from dreamdb.ranking import snippet

    body = "\n".join(["alpha filler"] * 30 + ["alpha beta gamma, the line that answers"])
    assert best_snippet(body, ["alpha", "beta", "gamma"]).splitlines()[1] == "alpha beta gamma, the line that answers"
    monkeypatch.setattr(snippet, "SNIPPET_CANDIDATES", 10)
    assert best_snippet(body, ["alpha", "beta", "gamma"]).splitlines()[0] == "alpha filler"
    huge = "word " * 400_000  # (one line: every word a candidate)
    monkeypatch.setattr(snippet, "SNIPPET_CANDIDATES", 20_000)
    assert best_snippet(huge, ["word"]).startswith("word word")


def test_a_changelog_hit_s_snippet_is_never_another_entry_s_text(tiny_vault):
    """QA round 125-A F1: an entry removed before the hit's renumbered the entries after it, and the held hit's
    snippet became the next entry's text under its own title. It falls back to its description; an entry still in
    place (its id and title) gives its text."""
    import json

    import dreamdb
    from tests.conftest import write_doc

    entries = [{"date": "2026-08-01", "scope": "sync", "summary": "alpha zyxqa first entry", "description": "apples"},
               {"date": "2026-08-01", "scope": "sync", "summary": "beta second entry", "description": "bananas"},
               {"date": "2026-08-01", "scope": "sync", "summary": "gamma zyxqa third entry", "description": "cherries"}]
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps(entries))
    index = dreamdb.open(tiny_vault)
    hits = {h.title: h for h in index.recall("zyxqa", top=5)}
    first, third = hits["2026-08-01 sync — alpha zyxqa first entry"], hits["2026-08-01 sync — gamma zyxqa third entry"]
    assert first.doc_id == "changelog/2026-08-01-sync-1" and third.doc_id == "changelog/2026-08-01-sync-3"
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps(entries[1:]))
    index.sync()  # the second entry is now sync-1, the third sync-2
    assert [h.doc_id for h in index.recall("bananas")] == ["changelog/2026-08-01-sync-1"]
    assert "beta" not in first.snippet and "bananas" not in first.snippet
    assert "cherries" not in third.snippet  # (its id is gone: no text of another entry either)
    fresh = index.recall("zyxqa")[0]
    assert fresh.doc_id == "changelog/2026-08-01-sync-2" and "cherries" in fresh.snippet
    # QA round 126-A F1: two entries of one title (same date, scope and summary): the first removed, the second
    # takes its id and title, and its text showed under the first's hit
    twins = [{"date": "2026-05-01", "type": "fix", "scope": "api", "summary": "Fixed zebra bug", "description": d}
             for d in ("first walrus text", "second penguin text")]
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps(twins))
    index.sync()
    (held,) = index.recall("walrus")
    kept = index.recall("penguin")[0]
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps(twins[1:]))
    index.sync()
    assert "penguin" not in held.snippet and held.doc_id == "changelog/2026-05-01-api-1"
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps(twins[::-1]))
    index.sync()  # (the penguin entry is api-1 again, the walrus one api-2)
    assert "walrus" not in kept.snippet
    unchanged = index.recall("penguin")[0]
    index.sync()
    assert "second penguin text" in unchanged.snippet  # (an entry still as it was gives its own text)
    index.close()


def test_a_word_with_combining_marks_is_read_whole_and_its_line_shown():
    """QA round 143-I F1: the snippet read a body word up to its first combining mark (``\\w*``, ``isalnum``), so
    क्षत्रिय (a virama), สวัสดี (Thai vowel signs) and தமிழ் never equalled the indexed term, and a note in Hindi, Thai
    or Tamil showed its first lines instead of the one that matched. The snippet reads words as the analyzer does."""
    for word, line in (("क्षत्रिय", "यह क्षत्रिय शब्द है"), ("สวัสดี", "คำว่า สวัสดี ที่นี่"), ("தமிழ்", "இது தமிழ் மொழி")):
        body = f"line one\nline two\nline three\n{line}\nline five"
        assert best_snippet(body, _terms(word)) == f"line three\n{line}\nline five", word
        # past the clip's search of a long line too (the same regex): its window holds the word
        long_line = "filler " * (CLIP_SEARCH_CHARS // 7 + 10) + line + " tail" * 100
        middle = best_snippet("top\n" + long_line, _terms(word)).split("\n")[1]
        assert word in middle and middle.startswith("…"), (word, middle[:80])
    # the query word's letters after a vowel sign inside a word are the end of another word (कित्रिय), not a hit
    assert best_snippet("a\nकित्रिय\nb\nत्रिय है\nc", _terms("त्रिय")) == "b\nत्रिय है\nc"
    # a short word (never stemmed, matched whole) ending in a mark, and one that another word begins with
    assert best_snippet("a\nb\nc\nयह शब्द है\nd", _terms("है")) == "c\nयह शब्द है\nd"
    assert best_snippet("a\nb\nc\nคำว่า ที่ นี่\nd", _terms("ที่")) == "c\nคำว่า ที่ นี่\nd"
    assert best_snippet("a\nकमी\nb\nकम है\nc", _terms("कम")) == "b\nकम है\nc"


def _clusters_whole(text: str, whole: str) -> bool:
    """Whether ``text`` (a cut of a repetition of ``whole``, ``…`` at its ends dropped) is whole repetitions."""
    text = text.strip("…")
    return text.replace(whole, "") == ""


def test_a_long_lines_cut_splits_no_grapheme_cluster():
    """QA round 143-I F2: the window of a long line was cut by code points, so it began with the tail of a ZWJ family
    (a lone 👦) and ended on half a flag (a lone regional indicator), or cut a Devanagari conjunct in two."""
    family, flag_thumb = "👨‍👩‍👧‍👦", "🇹🇷👍🏽"
    middle = best_snippet("top\n" + family * 60 + " uniqemojiword " + flag_thumb * 60, _terms("uniqemojiword")).split("\n")[1]
    head, tail = middle.split(" uniqemojiword ")
    assert head.startswith("…") and tail.endswith("…")
    assert _clusters_whole(head, family) and _clusters_whole(tail, flag_thumb), ascii(middle)
    middle = best_snippet("top\n" + "क्षत्रिय " * 30 + "नमकबहुत " + "क्षत्रिय " * 40, _terms("नमकबहुत")).split("\n")[1]
    assert middle.startswith("…") and middle.endswith("…")
    assert not middle[1:].startswith(("\u094d", "\u093f", "र", "्", "ष")), middle[:8]  # no half conjunct, no lone mark
    assert not middle[:-1].endswith(("\u094d", "क")), middle[-8:]  # not "क्" (a virama waiting for its letter)
    # a letter and its accents (NFD) and a flag in the description fallback too
    for whole in ("e\u0301\u0323", "🇹🇷", family):
        cut = best_snippet("", [], fallback=whole * 200)
        assert _clusters_whole(cut, whole) and len(cut) <= MAX_LINE_CHARS, ascii(cut[-8:])


def test_a_character_nfkc_makes_longer_does_not_hide_a_match_past_the_clip_search():
    """QA round 143-I F3: one "…" (or ™, ½, ﬁ, half-width ｶﾞ) in a line of more than CLIP_SEARCH_CHARS characters
    made its folded text longer than the line, and the search past them gave up: the line was shown from its start,
    the word asked for far beyond it. Offsets in the folded text are mapped back to the line's."""
    for odd in ("…", "™", "½", "ﬁ", "ｶﾞ", "Ǆ"):
        for where in (0, CLIP_SEARCH_CHARS + 5000):  # before the word, or in the piece of the line that holds it
            line = "and more text here " * ((CLIP_SEARCH_CHARS + 2000) // 19) + " Zielwortxyz " + "end " * 50
            line = line[:where] + odd + line[where:] if where else "Wait" + odd + " " + line
            middle = best_snippet("top\n" + line, _terms("Zielwortxyz")).split("\n")[1]
            assert "Zielwortxyz" in middle and middle.startswith("…"), (odd, where, middle[:60])
            # opened 60 characters before the word, as in a line without the character
            assert middle.index("Zielwortxyz") in range(58, 64), (odd, where, middle.index("Zielwortxyz"))


def test_a_word_the_index_reads_as_a_short_term_or_an_acronym_s_singular_is_a_hit():
    """QA round 149-G F4: the snippet asked a term of three letters or fewer for a whole word, so a longer word the
    index reads as it (``cats`` → ``cat``, ``OKRs`` → ``okr``) was never a hit; and it read no word as the index adds
    it beside its own term (:func:`dreamdb.analyzer.acronym_terms`: ``SDKs`` is ``sdks`` and ``sdk``). A note naming
    the query's word only so showed its first lines."""
    assert best_snippet("top\nmiddle\nplain\nwe feed the cats\nend", _terms("cat")) == "plain\nwe feed the cats\nend"
    assert best_snippet("top\nmiddle\nplain\nwe track OKRs\nend", {"okr": 1.0}, turkish=False) \
        == "plain\nwe track OKRs\nend"
    assert best_snippet("top\nmiddle\nplain\nBoth SDKs ship today\nend", _terms("SDK")) \
        == "plain\nBoth SDKs ship today\nend"
    assert best_snippet("top\nmiddle\nthe sdks folder\nend", _terms("SDK")) == "top\nmiddle"  # (no capitals: sdks)
    # in Turkish text a capital I is dotless ı too (KIRMIZI: kırmızı), as the index reads it
    body = "birinci satır\nikinci satır\nüçüncü satır\nKIRMIZI düğme yandı\nson satır"
    assert best_snippet(body, _terms("kırmızı", turkish=True), turkish=True) == \
        "üçüncü satır\nKIRMIZI düğme yandı\nson satır"
    # and a long line's window opens on such a word
    line = "filler " * 100 + "the SDKs here " + "tail " * 100
    middle = best_snippet("top\n" + line, _terms("SDK")).split("\n")[1]
    assert "SDKs" in middle and middle.startswith("…"), middle


def test_the_members_of_one_class_count_once_in_a_line():
    """A translated query word and its translation count as one term (a class, ``counted_as``): a line holding both
    does not outweigh a line holding one of them and another query word (QA round 149-G F4)."""
    body = "intro\nkedi and cat side by side\nmiddle\nthe cat and the dog\nend"
    weights = {"kedi": 2.0, "cat": 2.0, "dog": 1.0}
    assert best_snippet(body, weights).splitlines()[1] == "kedi and cat side by side"  # (two terms: 4 against 3)
    assert best_snippet(body, weights, counted_as={"kedi": "kedi", "cat": "kedi"}).splitlines()[1] == \
        "the cat and the dog"  # (the class once, 2, against 2 + 1)


def test_a_hit_found_through_a_synonym_shows_its_line_weighed_as_the_ranking_weighs_it(tiny_vault):
    """QA round 149-G F4: the snippet weighed the query's own terms alone, so a note found through a synonym of
    synonyms.txt showed its first lines, none of them the word that matched. A synonym weighs as in BM25F: half its
    IDF (SPEC §2), so a line holding it loses to a line holding the query's word unless the synonym is far rarer."""
    import dreamdb
    from tests.conftest import write_doc

    write_doc(tiny_vault, "synonyms.txt", "kettle, teapot\n")
    write_doc(tiny_vault, "knowledge/kitchen.md", "---\ntitle: Kitchen\n---\nThe cupboard holds the plates.\n"
              "Bowls sit on the left shelf.\nThe teapot stays on the stove.\nSpoons go in the drawer.\n")
    write_doc(tiny_vault, "knowledge/pantry.md", "---\ntitle: Pantry\n---\nFlour and rice on top.\nThe teapot "
              "spare is here.\nJars below.\nThe kettle is boiled twice a day.\nEnd of the list.\n")
    write_doc(tiny_vault, "knowledge/hall.md", "---\ntitle: Hall\n---\nCoats hang here. An old kettle too.\n")
    for n in range(3):
        write_doc(tiny_vault, f"knowledge/garden-{n}.md", f"---\ntitle: Garden {n}\n---\nTomatoes in row {n}.\n")
    with dreamdb.open(tiny_vault) as index:
        hits = {h.doc_id: h for h in index.recall("kettle", top=5)}
        # the synonym alone matched: its line
        assert hits["knowledge/kitchen"].score == 0
        assert hits["knowledge/kitchen"].snippet == \
            "Bowls sit on the left shelf.\nThe teapot stays on the stove.\nSpoons go in the drawer."
        # teapot (df 2 of 6: IDF 1.03, half of it 0.52) against kettle (df 2: 1.03): the query's word (at a full
        # weight the earlier teapot line would tie and be shown)
        assert hits["knowledge/pantry"].snippet == \
            "Jars below.\nThe kettle is boiled twice a day.\nEnd of the list."


def test_a_short_term_starting_many_words_leaves_the_line_naming_it_reachable():
    """QA round 149-H F1: a term of ≤ 3 letters matched at the start of any word (149-G F4's reading of ``cats`` as
    ``cat``), so in a note of 5,001 lines of ``commit common compile`` every word was a candidate for ``com``, the
    candidates' budget (SNIPPET_CANDIDATES) ran out before the last line, and the snippet showed two lines naming no
    query word. Such a term is the whole word, or the word its plural: the line naming it is shown."""
    body = "\n".join(["commit common compile computed"] * 5001 + ["serial port: use com3, the com port"]) + "\n"
    assert best_snippet(body, {"com": 1.0, "port": 1.0}, turkish=False) == \
        "commit common compile computed\nserial port: use com3, the com port"
    body = "\n".join(["config code commit could"] * 5001 + ["the answer: we chose co for this", "end"])
    assert best_snippet(body, ["co"], turkish=False) == "config code commit could\nthe answer: we chose co for this\nend"
    assert best_snippet("a\nb\nc\nwe track OKRs and boxes\nd", {"okr": 1.0}, turkish=False) == \
        "c\nwe track OKRs and boxes\nd"  # (the plural still read as its singular)


def test_a_short_term_finds_its_word_with_a_suffix_as_the_analyzer_reads_it():
    """QA round 150-A F4: a term of ≤ 3 letters was a candidate only as the whole word or its plural (QA round 149-H
    F1), so ``running`` (``run``), ``kışın`` and ``yolları`` (``kış``, ``yol``: in Turkish nearly every short root
    has a suffix) were never candidate lines, and the snippet showed the note's first lines. A longer word starting
    with the term is one where its own analysis is the term (``running`` → ``run``; not ``runner`` nor ``common``
    for ``com``), and in Turkish with the term's last consonant softened (``kabı`` → ``kap``)."""
    body = ("Deploy notes\nThe staging box was rebuilt on Monday.\nThe nightly job is still running after the "
            "upgrade.\nNobody touched the cron table.")
    assert best_snippet(body, {"run": 1.0}, turkish=False) == (
        "The staging box was rebuilt on Monday.\nThe nightly job is still running after the upgrade.\n"
        "Nobody touched the cron table.")
    body = ("Kış lastikleri\nAraç bakımı her sonbahar yapılır.\nKışın yolları buz tutar, zincir takın.\n"
            "Lastik basıncı ayda bir ölçülür.")
    assert best_snippet(body, {"kış": 1.0, "yol": 1.0}, turkish=True) == (
        "Araç bakımı her sonbahar yapılır.\nKışın yolları buz tutar, zincir takın.\nLastik basıncı ayda bir ölçülür.")
    body = "Mutfak\nRaflar dolu.\nYemekten sonra kabı yıkayıp kurulayın.\nSon."
    assert best_snippet(body, {"kap": 1.0}, turkish=True) == (
        "Raflar dolu.\nYemekten sonra kabı yıkayıp kurulayın.\nSon.")
    # the words read: each once, at a word's start, only those analysed to the term (runs is the plural's)
    from dreamdb.analyzer import token_pattern
    from dreamdb.ranking.snippet import _short_forms

    text = "outrunning the runner; running, runs and running again; commit common compile"
    assert _short_forms(["com", "run"], text, False, token_pattern(text)) == ["running"]
    text = "kışın yolları yolcu kabı kapının"
    assert _short_forms(["kap", "kış", "yol"], text, True, token_pattern(text)) == ["kapının", "kabı", "kışın",
                                                                                      "yolları"]


def test_each_short_term_has_its_own_budget_of_words_read():
    """QA round 150-H F4: :func:`_short_forms` read the words of every short term against one budget of
    :data:`MAX_SHORT_FORMS` distinct words, the terms in sorted order, so in a note of 80 distinct words ``comXXX``
    ``com`` spent it and ``run`` never got ``running``: ``recall "run"`` showed the line of ``running``, ``recall
    "run com"`` the note's first lines. Each term now has its own (shared out past :data:`MAX_SHORT_TERMS` terms)."""
    import itertools

    from dreamdb.analyzer import token_pattern
    from dreamdb.ranking.snippet import MAX_SHORT_FORMS, _prefilter, _short_forms

    words = ["com" + "".join(p) for p in itertools.islice(itertools.product("bdfghjklmnpqrtvwxz", repeat=3), 80)]
    assert len(set(words)) == 80 > MAX_SHORT_FORMS
    body = ("Intro line about nothing in particular.\n\n" + "".join(f"Line {i} mentions {w} widget.\n"
                                                                    for i, w in enumerate(words))
            + "\nThe pump was running hot yesterday.\n")
    assert best_snippet(body, {"run": 1.0}, turkish=False) == \
        f"Line 79 mentions {words[-1]} widget.\nThe pump was running hot yesterday."
    assert best_snippet(body, {"com": 1.0, "run": 1.0}, turkish=False) == \
        f"Line 79 mentions {words[-1]} widget.\nThe pump was running hot yesterday."
    folded = body.lower()
    assert [m.group() for m in _prefilter({"com", "run"}, folded).finditer(folded)
            if m.group().startswith("run")] == ["running"]
    assert _short_forms(["com", "run"], folded, False, token_pattern(folded)) == ["running"]
    # past MAX_SHORT_TERMS short terms each gets its share (at least one word), and still reads its own
    from dreamdb.ranking.snippet import MAX_SHORT_TERMS

    many = sorted({"com", "run", "set", "map", "top", "bus", "cap", "dig"})
    assert len(many) == 2 * MAX_SHORT_TERMS
    text = " ".join(words + ["setting", "mapping", "topped", "buses", "capping", "digging", "running"])
    assert _short_forms(many, text, False, token_pattern(text)) == [
        "capping", "digging", "mapping", "running", "setting", "topped"]


def test_a_name_numbered_with_a_hyphen_is_a_hit_of_its_line_for_the_name_without_it():
    """QA round 153-G F7: ``WS-3`` is the term ``ws3`` (:func:`dreamdb.analyzer.numbered_terms`), which the word ``WS3``
    is; the line writing ``WS-3`` is the snippet of a query for either spelling, not the note's first lines."""
    body = "Workstreams of the v0.4 session.\nWS-1 manifest install.\nnothing here\nWS-3 sleep roster plan.\nEnd."
    assert best_snippet(body, ["ws3"]).splitlines()[1] == "WS-3 sleep roster plan."
    assert best_snippet(body, ["ws", "ws3"]).splitlines()[1] == "WS-3 sleep roster plan."  # (not WS-1's: ws alone)
    assert best_snippet(body.replace("WS-3", "WS3"), {"ws": 1.0, "ws3": 3.0}).splitlines()[1] == "WS3 sleep roster plan."
    # (QA round 154-A F6: written with U+2010 or U+2011, the Unicode hyphens, as with "-")
    for hyphen in "\u2010\u2011":
        assert best_snippet(body.replace("-", hyphen), ["ws3"]).splitlines()[1] == f"WS{hyphen}3 sleep roster plan."


def test_a_word_before_a_letter_apostrophe_and_a_suffix_is_read_as_the_index_reads_it(tiny_vault):
    """QA round 156-G F3: an English note writing ``APIʼNİN``, ``APIʹNİN`` or ``Ankaraʼda`` was found by ``api`` or
    ``ankara`` but its snippet showed its first lines: ``ʼ`` (U+02BC) and ``ʹ`` (U+02B9) are letters to the snippet's
    word pattern, so it read ``apiʼnin`` as one word, where the analyzer drops the suffix after them
    (:data:`dreamdb.analyzer.APOSTROPHES`) and indexes ``api``. With ``’ ' ‘ ′ ´`` the line was shown."""
    import dreamdb
    from tests.conftest import write_docs

    filler = "".join(f"Line {i} is about budgets and rent.\n" for i in range(12))
    marks = {"02bc": "\u02bc", "02b9": "\u02b9", "2019": "\u2019", "27": "'", "2018": "\u2018", "2032": "\u2032",
             "b4": "\u00b4"}
    write_docs(tiny_vault, {
        **{f"knowledge/api{k}.md": f"---\ntitle: Note {k}\n---\n{filler}The API{a}NİN keys rotate monthly.\nEnd.\n"
           for k, a in marks.items()},
        **{f"knowledge/ank{k}.md": f"---\ntitle: Trip {k}\n---\n{filler}The meeting in Ankara{a}da covered keys.\n"
                                   "End.\n" for k, a in marks.items()}})
    index = dreamdb.open(tiny_vault)
    for query, line in (("api", "NİN keys rotate"), ("ankara", "da covered keys")):
        hits = index.recall(query, 20, now="2026-08-18")
        assert len(hits) == len(marks), (query, [h.doc_id for h in hits])
        for h in hits:
            assert line in h.snippet.split("\n")[1], (query, h.doc_id, h.snippet)
    # the paths a snippet reads words by: the folded text whole, line by line (a character whose fold is longer),
    # and a long line's search past CLIP_SEARCH_CHARS
    for a in ("\u02bc", "\u02b9"):
        body = "budgets\nrent\nThe APIʼNİN keys\nend".replace("ʼ", a)
        assert best_snippet(body, ["api"], turkish=False).split("\n")[1] == "The API" + a + "NİN keys"
        assert best_snippet(body.replace("rent", "ﬁne rent"), ["api"], turkish=False).split("\n")[1].startswith(
            "The API")
        line = "and more text here " * ((CLIP_SEARCH_CHARS + 2000) // 19) + " Ankara" + a + "da trip " + "end " * 50
        assert "Ankara" + a + "da" in best_snippet("top\n" + line, ["ankara"], turkish=False).split("\n")[1]
    # a letter apostrophe with no suffix the analyzer drops stays inside the word, as the index reads it
    from dreamdb.analyzer import blank_letter_apostrophe_suffixes, fold_case, raw_tokens, token_pattern

    for text in ("APIʼNİN and Oʼbrien, Ankaraʹda; C++ʼın", "ʼda xʼ yʹq Redisʹteyken"):
        folded = fold_case(text)
        blanked = blank_letter_apostrophe_suffixes(folded)
        assert len(blanked) == len(folded) and token_pattern(blanked).findall(blanked) == raw_tokens(text), blanked
