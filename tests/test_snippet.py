"""Snippets (SPEC §2): the body line with the most query-term hits, ±1 line."""

from __future__ import annotations

from dreamdb.analyzer import analyze
from dreamdb.ranking.snippet import MAX_LINE_CHARS, best_snippet


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


def test_empty_body_falls_back_to_description():
    assert best_snippet("", _terms("x y"), fallback="  the description  ") == "the description"
