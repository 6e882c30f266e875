"""Snippets: the body line that answers the query best (the distinct query terms it holds, weighed by their IDF,
then SPEC §2's most query-term hits), ±1 line of context."""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from itertools import islice

from dreamdb.analyzer import (TURKISH_LETTERS, acronym_terms, analyze, ascii_terms, blank_letter_apostrophe_suffixes,
                              compound_terms, dotless_capitals, dotted_terms, drop_data, fold_case, has_case_change,
                              holds_numbering_hyphen, identifier_terms, is_identifier_term, is_turkish_text,
                              joined_terms, lower, normalize, numbered_terms, raw_tokens, stem, token_pattern, tokens)
from dreamdb.output import cluster_boundary

SNIPPET_COMPOUND_CHARS = 50_000
"""How much of a body (characters, from its start) the snippet searches for camelCase words whose parts are query
terms (:func:`dreamdb.analyzer.compound_terms`): on a note holding a 2 MB pasted screenshot, its best snippet took
47 ms against 42 ms without this search (3 Dec); searching the whole body took 3.5 s (QA round 50)."""

SNIPPET_CANDIDATES = 20_000
"""How many words that may be query terms (:func:`_candidates`, body order) the snippet weighs, at most: past them
the lines after are not searched. A 10 MB note of one repeated query word made 2 million of them, each stemmed in
Python: 2.5 s a recall and 8 s a prompt hook (QA round 94-B F2); 20,000 take ≈ 25 ms, and a note holds that many
matches of a query's words only when it is far longer than any note written by hand."""

MAX_SHORT_WORDS = 1_024
"""How many words starting with a query term of ≤ 3 letters (and longer than it) :func:`_short_forms` reads in one
body, for each such term, at most: each costs ≈ 0.4 µs in Python, so ≈ 0.4 ms at most (QA round 149-H F1's note of
5,001 lines of ``commit common compile computed`` holds 20,004 for ``com``); past them, in body order, no longer word
is a candidate for that term (the term as the whole word, or its plural, still is). The real vault's notes hold at
most 1,561 (``com`` in its changelog of 820 KB), ``run`` 237."""

MAX_SHORT_FORMS = 64
"""How many distinct such words :func:`_short_forms` analyses in one body for each such term, at most (each word
analysed once)."""

MAX_SHORT_TERMS = 4
"""How many query terms of ≤ 3 letters get the whole of :data:`MAX_SHORT_WORDS` and :data:`MAX_SHORT_FORMS` each:
with more, each gets ``MAX_SHORT_TERMS / n`` of both (at least 1), so a query's cost stays that of 4 such terms.
Each term has its own budget (QA round 150-H F4: one budget shared by all, ``com`` spent it on the 80 distinct
``comXXX`` words of a note, and ``run`` of ``recall "run com"`` never got ``running``)."""

MAX_LINE_CHARS = 240
"""Each snippet line is cut to this many characters (a 1 MB single line stays readable)."""

CLIP_SEARCH_CHARS = 20_000
"""How far into a long line (characters) :func:`_clip` looks for a query term to centre the cut on; past it the line
is shown from its start. Looking through a whole 4 MB line of pasted base64, 80 characters at a time, made a
recall take 7 s and the prompt hook 8 s (QA round 51)."""


_ACRONYM_RE = re.compile(r"[A-Z][A-Z0-9]*[A-Z]s|[A-Z]S")
"""Where :func:`dreamdb.analyzer.acronym_terms` may find a term (every word it reads holds capitals and an ``s``, or a
capital and an ``S``): text without a match is not given to it."""

_DATA_LINE_RE = re.compile(r"[A-Za-z0-9+/=_.-]{16,}")
"""A line that may be encoded data (base64, base64url, a JSON Web Token): of those characters alone, 16 or more."""

GAP = "…"
"""The line shown between two snippet lines that lines of encoded data part."""

DATA_WINDOW_LINES = 64
"""How many lines on each side of a snippet's best line are checked for encoded data (:func:`_data_lines`): its
context is the nearest lines of text within them. Checking a whole 2 MB note of wrapped base64 took 181 ms (3 Dec);
a window of lines, about 1 ms."""

MAX_DATA_WINDOWS = 8
"""Windows checked before a body whose best lines are all data gets its fallback (the description) instead."""


def _data_lines(lines: list[str], lo: int, hi: int) -> set[int]:
    """The indices in ``[lo, hi)`` of ``lines`` that are encoded data: lines of :data:`_DATA_LINE_RE`'s characters
    alone that :func:`dreamdb.analyzer.drop_data` leaves out of the text around them (a PEM block's lines, base64
    wrapped at any width, a pasted token; judged with 8 lines more on each side, as wrapped base64 is told by its
    lines' common width). Lines of words, paths and identifiers are text."""
    candidates = [i for i in range(lo, hi) if _DATA_LINE_RE.fullmatch(lines[i].strip())]
    if not candidates:
        return set()
    kept = {ln.strip() for ln in drop_data("\n".join(lines[max(0, lo - 8):hi + 8])).split("\n")}
    return {i for i in candidates if lines[i].strip() not in kept}


def _clip(line: str, terms: set[str], turkish: bool) -> str:
    line = line.strip()
    if len(line) <= MAX_LINE_CHARS:
        return line
    # centre the window on the first of the query's identifiers the line names (QA round 79 F4: the window of a long
    # line holding DEFAULT_SNAPSHOT_BUDGET_TOKENS opened on its first "default"), else on the first matching word
    folded = fold_case(line[:CLIP_SEARCH_CHARS])
    named = [i for i in (folded.find(t) for t in terms if is_identifier_term(t)) if i >= 0]
    pos = 0
    if named and len(folded) == len(line[:CLIP_SEARCH_CHARS]):
        pos = max(0, min(named) - 60)
    else:
        for word_start in range(0, min(len(line), CLIP_SEARCH_CHARS), 40):
            chunk = line[word_start:word_start + 80]
            if (not terms.isdisjoint(analyze(chunk, turkish=turkish))
                    or not terms.isdisjoint(identifier_terms(fold_case(chunk)))
                    or not terms.isdisjoint(compound_terms(normalize(chunk)))
                    or not terms.isdisjoint(numbered_terms(normalize(chunk)))
                    or not terms.isdisjoint(_stacked_terms(chunk, turkish))):
                pos = max(0, word_start - 60)
                break
        else:
            pos = _first_word_past_search(line, terms, turkish)
    return _window(line, pos)


def _head(text: str) -> str:
    """``text`` stripped and cut to :data:`MAX_LINE_CHARS` characters, at a grapheme cluster boundary."""
    text = text.strip()
    return text[:cluster_boundary(text, MAX_LINE_CHARS)]


def _window(line: str, pos: int) -> str:
    """:data:`MAX_LINE_CHARS` characters of ``line`` from ``pos`` on, each end moved into the window to the nearest
    place that splits no grapheme cluster (:func:`dreamdb.output.cluster_boundary`: QA round 143-I F2, a cut showed
    half a flag, the tail of a family emoji, half a conjunct), ``…`` written where the line goes on."""
    start = cluster_boundary(line, pos, forward=True) if pos else 0
    end = cluster_boundary(line, pos + MAX_LINE_CHARS)
    if end <= start:  # (one cluster longer than the window: cut where asked)
        start, end = pos, pos + MAX_LINE_CHARS
    return ("…" if start else "") + line[start:end] + ("…" if end < len(line) else "")


def _first_word_past_search(line: str, terms: set[str], turkish: bool) -> int:
    """Where to open the window of a line longer than :data:`CLIP_SEARCH_CHARS` whose first characters hold no query
    term: 60 characters before the first word past them that analyzes to one (found as :func:`best_snippet` finds
    them, by :func:`_prefilter`'s regex, at most :data:`SNIPPET_CANDIDATES` words weighed), else 0. QA round 104: a
    note of one 1.7 MB line showed its first 240 characters, the word asked for far beyond them."""
    words = {t for t in terms if not is_identifier_term(t)}
    if len(line) <= CLIP_SEARCH_CHARS or not terms:
        return 0
    folded = _FoldedLine(line)
    # an identifier of the query (c++, v0.5.0: is_identifier_term) by its text, as _clip finds one in the first part
    named = [i for i in (folded.text.find(t, folded.search_from) for t in terms if is_identifier_term(t)) if i >= 0]
    if named:
        return max(0, folded.line_offset(min(named)) - 60)
    text = _as_words(folded.text)
    pre = _prefilter(words, text) if words else None
    for i, w in islice(_candidates(pre, text, folded.search_from), SNIPPET_CANDIDATES) if pre else ():
        if _matched_term(w, terms, turkish):
            return max(0, folded.line_offset(i) - 60)
    return 0


FOLD_PIECE_CHARS = 4096
"""The length (characters, to the next space, else the next grapheme cluster boundary) of the pieces
:class:`_FoldedLine` folds one by one."""


class _FoldedLine:
    """:func:`dreamdb.analyzer.fold_case` of a long line, folded piece by piece (:data:`FOLD_PIECE_CHARS`, cut at
    grapheme cluster boundaries, which normalisation does not cross), so that an offset in the folded text maps
    back to the line's although NFKC made some characters longer (QA round 143-I F3: one "…", "™", "½" or "ﬁ" in a
    line of 40,000 characters made its snippet open on the line's start, the word asked for far past it): in a piece
    that kept its length an offset is the same; in one that did not, it is found by folding the piece's prefixes
    (a binary search). Linear in the line's length.

    Attributes:
        text: the folded line.
        search_from: the offset in ``text`` of the line's :data:`CLIP_SEARCH_CHARS`-th character (or the grapheme
            cluster boundary before it).
    """

    def __init__(self, line: str) -> None:
        self._line = line
        self._starts: list[int] = []  # each piece's offset in the line …
        self._folded_starts: list[int] = []  # … and in the folded text
        pieces: list[str] = []
        at, folded_at = 0, 0
        split = cluster_boundary(line, CLIP_SEARCH_CHARS)
        self.search_from = 0
        while at < len(line):
            end = split if at < split else line.find(" ", at + FOLD_PIECE_CHARS, at + 2 * FOLD_PIECE_CHARS)
            if end < 0:  # (no space to end the piece at: a grapheme cluster boundary)
                end = cluster_boundary(line, at + FOLD_PIECE_CHARS, forward=True, flags=False)
            if end <= at:
                end = min(len(line), at + FOLD_PIECE_CHARS)
            if at == split:
                self.search_from = folded_at
            piece = fold_case(line[at:end])
            self._starts.append(at)
            self._folded_starts.append(folded_at)
            pieces.append(piece)
            at, folded_at = end, folded_at + len(piece)
        self._starts.append(len(line))
        self._folded_starts.append(folded_at)
        self.text = "".join(pieces)

    def line_offset(self, i: int) -> int:
        """The offset in the line of the character that folded into ``text[i]`` (or the first one after it)."""
        k = bisect_right(self._folded_starts, i) - 1
        if k >= len(self._starts) - 1:
            return len(self._line)
        start, end = self._starts[k], self._starts[k + 1]
        want = i - self._folded_starts[k]
        if self._folded_starts[k + 1] - self._folded_starts[k] == end - start:
            return start + want
        lo, hi = 0, end - start  # the shortest prefix of the piece that folds to more than `want` characters
        piece = self._line[start:end]
        while lo < hi:
            mid = (lo + hi) // 2
            if len(fold_case(piece[:mid + 1])) > want:
                hi = mid
            else:
                lo = mid + 1
        return start + lo


def _as_words(folded: str) -> str:
    """Folded text as the snippet reads its words, offsets kept: ``_`` a space (``snake_case`` two words) and a
    Turkish suffix after ``ʼ`` or ``ʹ`` blanked (:func:`dreamdb.analyzer.blank_letter_apostrophe_suffixes`), as the
    analyzer reads them."""
    return blank_letter_apostrophe_suffixes(folded.replace("_", " "))


def _prefilter(terms: set[str], folded: str, turkish: bool = False) -> re.Pattern:
    """A regex matching, among others, every word of ``folded`` (folded text, ``_`` → space) that can analyze to
    one of ``terms``; :func:`_candidates` keeps the matches that start a word. A match runs to the end of its word
    as the analyzer reads words (:func:`dreamdb.analyzer.token_pattern`: a Devanagari virama or a Thai vowel sign
    is inside a word; QA round 143-I F1: ``\\w*`` ended क्षत्रिय at its first mark, and no line of a note in Hindi,
    Thai or Tamil was ever shown for its words).

    Stemming only rewrites a word's ending (plural ``-ies`` → ``-y``, Turkish
    consonant softening ``ğ`` → ``k``), so a token starting with all but the
    stem's last letter (capped at 5) is a safe pre-filter; a term of ≤ 3
    characters must be the whole word, the word its plural (``cats`` → ``cat``, ``OKRs`` → ``okr``, ``boxes``;
    QA round 149-G F4, such words were never found), or one of the longer words of ``folded`` that start with it
    and analyze to it (:func:`_short_forms`: ``running`` → ``run``, ``yolları`` → ``yol``, ``kışın`` → ``kış``),
    spelled out: all but its last letter, one or two, would make nearly every word a candidate, and so would the
    term at any word's start (QA round 149-H F1: in a note of 5,001 lines of ``commit common compile``, ``com``
    spent :data:`SNIPPET_CANDIDATES` before the line naming ``com port``; QA round 150-A F4: with the term as the
    whole word only, the line of ``running``, ``yolları`` or ``kışın`` was never a candidate, and the snippet
    showed the note's first lines). A word whose stemming rewrote the last letter of a term that short
    (``using`` → ``use``) is not found, but for Turkish consonant softening (``kabı`` → ``kap``). In Turkish
    text a term's ``ı`` may be
    written ``I`` and folded ``i`` (``KIRMIZI``, indexed as ``kırmızı`` too: :func:`_stacked_terms`); in other text a
    term's ``i`` may be folded ``ı`` (``DİYARBAKIR``, read ``diyarbakır`` and indexed as ``diyarbakir`` too), and its
    ``c g i o s u`` the text's ``ç ğ ı ö ş ü`` (``ŞIRNAK`` indexed as ``sirnak`` too:
    :func:`dreamdb.analyzer.ascii_terms`). The pattern
    has no leading ``\\b``: without it the regex engine scans for the alternatives' first letters, ≈ 4× faster on
    a 50 KB body.
    """
    pattern = token_pattern(folded)
    word = pattern.pattern
    prefixes = [re.escape(t[: min(len(t) - 1, 5)]) for t in sorted(terms) if len(t) > 3]
    short_terms = sorted(t for t in terms if len(t) <= 3)
    short = [re.escape(t) for t in short_terms]
    if turkish:
        prefixes, short = ([p.replace("ı", "[ıi]") for p in parts] for parts in (prefixes, short))
    elif not TURKISH_LETTERS.isdisjoint(folded):  # (a note not read as Turkish reads DİYARBAKIR as diyarbakır and
        # indexes diyarbakir beside it, :func:`dreamdb.analyzer.dotted_terms`, and ŞIRNAK's şırnak as sirnak too,
        # :func:`dreamdb.analyzer.ascii_terms`: the term's i may be the text's ı, its s ş, …; QA round 156-G F2,
        # Balikesir's line was no candidate, and the snippet showed the note's first lines; F4)
        prefixes, short = ([p.translate(_TURKISH_SPELLINGS) for p in parts] for parts in (prefixes, short))
    if short_terms:  # (its longer words that analyze to it, spelled out, with the term)
        short += map(re.escape, _short_forms(short_terms, folded, turkish, pattern))
    alternatives = ([r"(?:" + "|".join(prefixes) + r")(?:" + word + ")?"] if prefixes else []) + (
        [r"(?:" + "|".join(short) + r")(?:e?s)?(?!" + word + ")"] if short else [])
    return re.compile("|".join(alternatives))


_TURKISH_SPELLINGS = str.maketrans({a: f"[{a}{t}]" for a, t in zip("cgiosu", "çğıöşü")})
"""``str.translate`` table: each ASCII letter a Turkish letter is typed as (:data:`dreamdb.analyzer.TURKISH_TO_ASCII`)
to a class of it and that letter (``s`` → ``[sş]``): a term's letters as a note not read as Turkish may write them."""

_SOFTENED = {"p": "b", "ç": "c", "t": "d", "k": "ğ"}
"""Turkish consonant softening before a vowel (``kap`` → ``kabı``), which Snowball Turkish undoes (``kabı`` → ``kap``)."""


def _short_forms(short: list[str], folded: str, turkish: bool, word: re.Pattern) -> list[str]:
    """The distinct longer words of ``folded`` that start with one of the ``short`` terms (≤ 3 letters; in Turkish
    text also with its last consonant softened: ``kab`` for ``kap``) and analyze to one of them
    (:func:`_matched_term`: ``running`` → ``run``, ``yolları`` → ``yol``; not ``common`` for ``com``), term by term
    in the order given, each term's in the order met. Each term has its own budget: of the first
    :data:`MAX_SHORT_WORDS` words starting with it (with each of its spellings), at most :data:`MAX_SHORT_FORMS`
    distinct words not read before analysed, each once (both shared out when there are more than
    :data:`MAX_SHORT_TERMS` terms). ``word``: the pattern of a word (:func:`dreamdb.analyzer.token_pattern`).

    Such a word is found at a word's start only (no letter or digit before it: ``recommit`` is not read for
    ``com``), with the term's letters searched for by the regex engine, in C."""
    wanted = set(short)
    n = max(len(wanted), MAX_SHORT_TERMS)
    words_each = max(1, MAX_SHORT_WORDS * MAX_SHORT_TERMS // n)
    forms_each = max(1, MAX_SHORT_FORMS * MAX_SHORT_TERMS // n)
    seen: set[str] = set()
    forms: list[str] = []
    for t in dict.fromkeys(short):
        budget = forms_each
        heads = (t, *((t[:-1] + _SOFTENED[t[-1]],) if turkish and len(t) > 1 and t[-1] in _SOFTENED else ()))
        for head in heads:
            # (looked behind past the prefix, so that the engine still scans for its letters: ≈ 4× faster; the word
            # read to its end by its own pattern, not compiled into this one: a pattern of every combining mark's
            # takes ≈ 3 ms to compile)
            found = re.compile(re.escape(head) + r"(?<![^\W_]" + "." * len(head) + r")[^\W_]").finditer(folded)
            for m in islice(found, words_each):
                w = word.match(folded, m.start()).group()
                if w in seen:
                    continue
                if not budget:
                    break
                budget -= 1
                seen.add(w)
                # (not a plural the term's own alternative reads: cats, boxes)
                if w[len(head):] not in ("s", "es") and _matched_term(w, wanted, turkish) is not None:
                    forms.append(w)
    return forms


def _candidates(pre: re.Pattern, folded: str, start: int = 0):
    """``(offset, word)`` of each match of ``pre`` from ``start`` on that starts a word (the character before it is
    none of a word's, :func:`dreamdb.analyzer.token_pattern`; the leftmost match inside a word runs to its end, so no
    word start is skipped)."""
    word = token_pattern(folded)
    for m in pre.finditer(folded, start):
        i = m.start()
        if i == 0 or not word.match(folded, i - 1, i):
            yield i, m.group()



def _matched_term(word: str, terms: set[str], turkish: bool) -> str | None:
    """The query term a folded body word analyzes to, else ``None``; in Turkish text a capitalised word is
    indexed under its name and Turkish analyses (case is gone here, so both are tried)."""
    term = stem(word, turkish)
    if term in terms:
        return term
    if turkish:
        term = stem(word, False)
        if term in terms:
            return term
    elif not TURKISH_LETTERS.isdisjoint(word):  # (a word with a Turkish letter, spelled without it: ascii_terms)
        return next((t for t in ascii_terms([word]) if t in terms), None)
    return None


def _stacked_terms(line: str, turkish: bool) -> list[str]:
    """Terms the index holds of ``line``'s words beside the words' own (:func:`dreamdb.analyzer.analyze`'s and
    :func:`dreamdb.store.sync.document_terms`' stacked terms) that :func:`_matched_term` does not read from a folded
    word: an acronym's plural as its singular (``PRDs`` → ``prd``, :func:`dreamdb.analyzer.acronym_terms`: stemming
    keeps ``prds``) and, in Turkish text, a capitalised word's readings (``KIRMIZI`` → ``kırmız``, its capital ``I``
    read as dotless ``ı``), in other text a word with a capital ``I`` and a Turkish-only letter as lowercased
    (``DİYARBAKIR`` → ``diyarbakir``, :func:`dreamdb.analyzer.dotted_terms`; its folded word is ``diyarbakır``). Only
    text that may hold one is analysed (:data:`_ACRONYM_RE`, a capital ``I``)."""
    out = acronym_terms(normalize(line)) if _ACRONYM_RE.search(line) else []
    if "I" in line:
        if turkish:  # (analyze's stacked terms: a capitalised word's Turkish and dotless readings)
            analyze(line, turkish=True, stacked=out)
        elif (read := dotless_capitals(written := drop_data(normalize(line)))) != written:  # (document_terms')
            out += dotted_terms(tokens(lower(written), data_dropped=True), tokens(lower(read), data_dropped=True))
    return out


def _stacked_match(written: str, terms: set[str], turkish: bool) -> str | None:
    """The first of ``terms`` among :func:`_stacked_terms` of a word as written (each comes of a capital), else
    ``None``."""
    if written.islower():
        return None
    return next((t for t in _stacked_terms(written, turkish) if t in terms), None)


def _line_weight(held, weight: dict[str, float], counted_as: dict[str, str] | None) -> float:
    """The summed weights of the distinct query terms a line holds (``held``), the members of one class counting once
    (``counted_as``: a member → its class's query term), at the greatest of their weights. ``math.fsum``: exactly
    rounded, so a sum does not depend on the set's order, which hash randomisation changes from one process to the
    next (two lines holding the same terms tie, and the earlier one wins, in every run)."""
    if not counted_as:
        return math.fsum(weight[t] for t in held)
    units: dict[str, float] = {}
    for t in held:
        unit = counted_as.get(t, t)
        units[unit] = max(units.get(unit, 0.0), weight[t])
    return math.fsum(units.values())


def best_snippet(body: str, query_terms: list[str] | dict[str, float], *, fallback: str = "",
                 turkish: bool | None = None, counted_as: dict[str, str] | None = None) -> str:
    """The body line that answers the query best, with one non-empty line before and after (lines of encoded
    data left out: :func:`_data_lines`; where they part two lines shown, a :data:`GAP` line between).

    A line is scored as Lucene's highlighter scores a fragment (``QueryScorer``: the summed weights of the
    distinct query terms it holds), each term weighing its IDF: a line naming a rare word of the query and a
    common one answers better than one repeating the common word (QA round 80-B F8: for "why did we pick BM25
    instead of mem0", a line saying BM25 three times was shown over the one naming mem0). SPEC §2's "most
    query-term hits" breaks ties.

    Args:
        body: document body.
        query_terms: analyzed query terms, or ``{term: weight}`` (a recall passes every term that may have matched
            the hit, weighed as its ranking counts it: :meth:`dreamdb.api.Index._term_weights`; a list weighs every
            term 1).
        fallback: returned when the body is empty (e.g. the description).
        turkish: analyze as Turkish (the document's language); ``None`` detects it.
        counted_as: ``{term: the query term it counts as}``, for terms counted together as one (a translated query
            word's class: the word, its translation, their other forms); a line holding several counts them once.

    Returns:
        Up to three lines joined by ``\\n``: around the line with the most hits of the query's identifiers
        (:func:`dreamdb.analyzer.identifier_terms`), then the greatest weight of distinct terms (a part of a
        camelCase word, :func:`dreamdb.analyzer.compound_terms`, counts too, and an acronym's plural as its
        singular, :func:`_stacked_terms`), then the most hits; ties go to the earliest line.
    """
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if not lines:
        return _head(fallback)
    weight = dict(query_terms) if isinstance(query_terms, dict) else dict.fromkeys(query_terms, 1.0)
    terms = set(weight)
    if turkish is None:
        turkish = is_turkish_text(raw_tokens(body[:20000]))
    if not terms:
        data = _data_lines(lines, 0, min(len(lines), DATA_WINDOW_LINES))
        first = [ln for i, ln in enumerate(lines[:DATA_WINDOW_LINES]) if i not in data][:2]
        return "\n".join(_clip(ln, terms, bool(turkish)) for ln in first) if first else _head(fallback)
    # identifiers (0.5.0, c++: analyzer.identifier_terms) are counted on their own; words through the regex
    identifiers = set(filter(is_identifier_term, terms))
    words = terms - identifiers
    # One regex pass over the whole folded text; hits are mapped to lines by offset.
    text = "\n".join(lines)
    # (a word ends before ʼ or ʹ and the suffix the analyzer drops after it, as the index read it: QA round 156-G F3)
    folded = _as_words(fold_case(text))
    pre = _prefilter(words, folded, turkish) if words else None
    counts = [0] * len(lines)
    found: dict[int, set[str]] = {}  # line → the distinct terms it holds

    def hit(line: int, term: str) -> None:
        counts[line] += 1
        found.setdefault(line, set()).add(term)

    if pre is None:
        pass
    elif len(folded) != len(text):  # a rare character whose lowercase is longer: go line by line
        left = SNIPPET_CANDIDATES
        for n, ln in enumerate(lines):
            folded_line = _as_words(fold_case(ln))
            same = len(folded_line) == len(ln)  # (else no word as written: its analyses beside its own are not read)
            for i, w in _candidates(pre, folded_line):
                term = _matched_term(w, terms, turkish) or (same and _stacked_match(ln[i:i + len(w)], terms, turkish))
                if term:
                    hit(n, term)
                left -= 1
                if not left:
                    break
            if not left:
                break
    else:
        starts, pos = [], 0
        for ln in lines:
            starts.append(pos)
            pos += len(ln) + 1
        for i, w in islice(_candidates(pre, folded), SNIPPET_CANDIDATES):
            term = _matched_term(w, terms, turkish) or _stacked_match(text[i:i + len(w)], terms, turkish)
            if term:
                hit(bisect_right(starts, i) - 1, term)
    # the parts of a camelCase word (setupVersion: analyzer.compound_terms) are hits of their line too, on the
    # first SNIPPET_COMPOUND_CHARS characters (QA round 50: every line of a 2 MB note split twice, 3.5 s a recall)
    if words and has_case_change(text):
        budget = SNIPPET_COMPOUND_CHARS
        for i, ln in enumerate(lines):
            budget -= len(ln)
            if budget < 0:
                break
            for part in compound_terms(normalize(ln)):
                if part in words:
                    hit(i, part)
    # a name numbered with a hyphen (WS-3) is a hit of its line for its term, the name without the hyphen (ws3:
    # analyzer.numbered_terms), as the word WS3 is through the regex (QA round 153-G F7)
    # (v1-2, whose term keeps its hyphen, is an identifier: counted below, as a line's joined_terms; 154-A F1)
    numbered = {w for w in words if w[-1:].isdecimal() and w[:-1].isalpha()} if holds_numbering_hyphen(text) else None
    if numbered:
        for i, ln in enumerate(lines):
            if holds_numbering_hyphen(ln):  # (WS‐3 too: U+2010, 154-A F6)
                for name in numbered_terms(ln):
                    if name in numbered:
                        hit(i, name)
    # A line holding one of the query's identifiers comes first: its pieces (v0 of v0.5.0) are in every
    # version's line, so word hits alone would pick the line of another version (QA round 46 M5)
    held = [0] * len(lines)
    if identifiers:
        for i, ln in enumerate(lines):
            held[i] = sum(map(identifiers.__contains__, identifier_terms(fold_case(ln)) + joined_terms(ln)))
    # Lines of encoded data hold no term of the index: never the best line (a term's letters can occur in base64
    # after a / or +), nor its context (session 34's list: a query matching -----BEGIN CERTIFICATE----- showed the
    # next line of base64). They are told apart near the best line only (DATA_WINDOW_LINES).
    score = [(held[i], _line_weight(found.get(i, ()), weight, counted_as), counts[i]) for i in range(len(lines))]
    data: set[int] = set()
    for _window in range(MAX_DATA_WINDOWS):
        best_i, best_hits = -1, (-1, -1.0, -1)
        for i, hits in enumerate(score):
            if hits > best_hits and i not in data:
                best_i, best_hits = i, hits
        if best_i < 0:
            break
        lo, hi = max(0, best_i - DATA_WINDOW_LINES), min(len(lines), best_i + DATA_WINDOW_LINES + 1)
        data |= _data_lines(lines, lo, hi)
        if best_i not in data:
            before = next((j for j in range(best_i - 1, lo - 1, -1) if j not in data), None)
            after = next((j for j in range(best_i + 1, hi) if j not in data), None)
            shown = []
            for j in (before, best_i, after):
                if j is not None:
                    if shown and j - shown[-1][0] > 1:  # lines of data between: a gap, marked (QA round 60 L8)
                        shown.append((j, GAP))
                    shown.append((j, _clip(lines[j], terms, turkish)))
            return "\n".join(text for _j, text in shown)
    return _head(fallback)
