"""Exact BM25 recall over the postings tables, sorted by rankScore.

One SQL statement aggregates, per matching document, the raw BM25 score
(flat, over the union of fields), BM25F (field-weighted, with synonyms at half
weight; a translated word and its translation as one term, :func:`class_members`),
the raw BM25 rankScore starts from (with those classes in place of their words)
and how many query terms the slug/title cover, and orders documents by
the upper bound ``base + identity`` of rankScore. Python then applies the
multipliers (all ≤ 1) in that order and stops as soon as the bound falls
below the k-th best rankScore: the top k is exact without scoring every match.

Everything is deterministic: the clock comes in as ``now_days``; ties break by
rankScore, then newest, then ``doc_id``.
"""

from __future__ import annotations

import heapq
import json
import math
import re
from functools import lru_cache
from itertools import product

from dreamdb.analyzer import (ASCII_TYPED_TURKISH_STOPWORDS, ENGLISH_ONLY_STOPWORDS, NOMINAL_SUFFIXES,
                               NOT_TURKISH_LETTERS, PLAIN_TYPED_TURKISH_STOPWORDS, PRIVATIVE_RE, STOPWORDS,
                               TURKISH_STOPWORDS, TURKISH_TO_ASCII,
                               VERB_INFLECTIONS, acronym_terms, alternate_terms, analyze, compound_terms, diacritic_round,
                               diacritic_rounds, english_by_function_words, identifier_terms, is_turkish,
                               dotless_capitals, drop_data, harmony_breaks, is_turkish_text, lower, normalize, opening_capitals,
                               joined_terms, query_words, stem, tokens)
from dreamdb.cognates import HEAD_LETTERS, has_loanword_ending, loanword_spellings
from dreamdb.lazy_regex import LazyPattern
from dreamdb.stemming import english_stem
from dreamdb.ranking import bm25 as F
from dreamdb.ranking import signals as S
from dreamdb.ranking.synonyms import dotless_reading
from dreamdb.records import factory, record, replace
from dreamdb.vault.tags import status_key, tag_key

HIT_COLUMNS = ("slug, title, description, source_path, level, tags, turkish, date, status, is_capture, confidence,"
               " CASE WHEN type IN ('memory', 'changelog') THEN content_hash END")
"""``documents`` columns a hit is built from (:meth:`dreamdb.api.Index._hits`; the memory engine caches them); the
last, a memory section's or changelog entry's ``content_hash`` (its id and text), finds its body for a snippet read
later (NULL for a note, one document per file, found by its file)."""

MAX_QUERY_TERMS = 256
"""Distinct query terms kept (a 10,000-character query stays cheap); the rest are ignored, and the words after the one
that brings the last term kept are not read at all (:func:`plan_query`: QA round 155-C F2, a recall of 50,000 words
took 9.4 s, each word analysed and looked up; docs/ranking.md has the figures)."""


@record
class QueryPlan:
    """An analyzed query.

    Attributes:
        text: the query as typed.
        terms: distinct analyzed terms, in order (they make the raw score).
        synonyms: ``{term: weight}`` of expansion terms (BM25F only).
        turkish: whether the query was analyzed as Turkish.
        dropped: distinct terms left out beyond :data:`MAX_QUERY_TERMS`, of the words read (see ``unread``).
        resolved: ``{term as analyzed: the index's term used instead}`` for query words whose
            own analysis is not in the index but another analysis is (see :func:`plan_query`).
        translated: ``{query term: its translation}`` (:func:`translation_synonyms`): in rankScore the term
            and its translation count as one term, a *class* (:func:`class_members`); the raw ``score``
            keeps the term alone.
        by_lexicon: the terms of ``resolved`` replaced by a translation (not another analysis, spelling
            or loanword reading), in query order: what ``--explain`` calls translations.
        forms: ``{a term: its other forms the notes hold}`` (:func:`other_forms`: a Turkish word as
            written beside its stem, ``takım`` beside ``tak``), for a translation's term and, in a query
            analysed as Turkish, for the query's own terms (:func:`_own_forms`); counted with the term in
            its class (:func:`class_members`), in rankScore only.
        corrected: ``{query word as typed: its corrected spelling}`` (:func:`spelling_corrections`; only when
            planned with ``correct`` or given ``corrections``).
        corrections: the corrections read into this plan, as :func:`spelling_corrections` gives them (a
            :class:`~dreamdb.multi.MultiIndex` merges its vaults' with :func:`merge_corrections`).
        unread: the query's words left unread, after the one that brought its :data:`MAX_QUERY_TERMS`-th
            distinct term (none of them would add a term kept; QA round 155-C F2), where some word of them brings
            another term (the query has more than :data:`MAX_QUERY_TERMS`); 0 when every word was read, as when the
            words past that one bring no other term (QA round 156-A F5).
        time_intent: the relative time expression the query holds ("yesterday", "geçen hafta", "latest":
            :func:`dreamdb.ranking.timeintent.find_time_intent`), whose words are then not searched (``text`` is
            the query without them) unless the query has no other term, else ``None``.
        window: ``time_intent`` placed against the recall's clock (:func:`dreamdb.ranking.timeintent.time_window`,
            set by :meth:`dreamdb.Index.recall`): the ranking's recency is then
            :func:`dreamdb.ranking.signals.window_recency`'s; ``None``: the plain recency of SPEC §2.
    """

    text: str
    terms: list[str]
    synonyms: dict[str, float] = factory(dict)
    turkish: bool = False
    dropped: int = 0
    resolved: dict[str, str] = factory(dict)
    translated: dict[str, str] = factory(dict)
    by_lexicon: list[str] = factory(list)
    forms: dict[str, tuple[str, ...]] = factory(dict)
    corrected: dict[str, str] = factory(dict)
    corrections: dict[str, tuple[str, tuple[tuple[str, str, int], ...]]] = factory(dict)
    unread: int = 0
    time_intent: object = None
    window: object = None


def class_members(plan: QueryPlan) -> dict[str, tuple[str, ...]]:
    """``{query term: (the term, its translation)}``: the query's translated words that the notes hold
    as the query wrote them, as the ranking counts them in rankScore, each with its translation as one
    term, a *class* (Pirkola's structured query: a word's translations are synonyms of one another, and
    their class has one term frequency, the sum of its members', and one document frequency, that of the
    documents holding any of them). A word the notes do not hold was replaced (``plan.resolved``: by a
    translation, a loanword, another analysis): its replacement is already in the notes' words, and a
    translation of it beside is another sense, kept a synonym (``güvenliği`` → *security*, and
    *safety* beside: one class of the two would give *security* the document frequency of both).

    A Turkish word written once in an English vault (``uyku``, df 1) would otherwise weigh as a rare
    term while the notes about it (*sleep*, df 215) get only a synonym's half weight: with the class,
    both count alike. The raw ``score`` (SPEC §2) keeps the term alone; the class replaces it in the
    raw BM25 rankScore starts from (:attr:`Ranked.structured`) and in BM25F. Source: A. Pirkola, "The
    effects of query structure and dictionary setups in dictionary-based cross-language information
    retrieval", SIGIR 1998 (the ``#syn`` operator of InQuery); K. Darwish & D. Oard, "Probabilistic
    structured query methods", SIGIR 2003. No constant is involved. Measured (``python -m eval --set all
    --modes bm25,hybrid,dense``, 2 Dec 14:39 against 13:21, nDCG@10): BM25 on XQuAD paragraphs of both
    languages 0.789 → 0.859 (Turkish questions) and 0.790 → 0.859 (English), en→tr 0.744 → 0.754,
    sentences en→tr 0.542 → 0.552, gold set 0.777 → 0.784 (recall@3 86.7 → 90.0); hybrid within
    ±0.002 everywhere. Classes for replaced words too (their replacement with the other sense) gave
    XQuAD BM25 tr→en 0.818 and sentences tr→en 0.660, but lowered gold hybrid recall@1 to 83.3
    (``--set dreamcontext --set xquad``, same day): a broad second sense blurs a precise first one.
    """
    return _classes(plan.translated, plan.resolved, plan.terms, plan.forms)


def _classes(translated: dict[str, str], resolved: dict[str, str], terms: list[str],
             forms: dict[str, tuple[str, ...]] | None = None) -> dict[str, tuple[str, ...]]:
    """:func:`class_members` from a plan's parts (:func:`plan_query` needs it before the plan is made)."""
    forms = forms or {}
    replaced = set(resolved.values())
    out = {t: (t, *forms.get(t, ()), c, *forms.get(c, ())) for t, c in translated.items()
           if _counted_with(t, c, replaced, terms)}
    # a word replaced by a translation (or, in a Turkish query, a word as the notes hold it): its other forms
    out.update((r, (r, *forms[r])) for r in terms if r in forms and r not in out)
    return out


def _counted_with(term: str, translation: str, replaced: set[str], terms: list[str]) -> bool:
    """Whether a query term's translation counts with it as one term (:func:`class_members`), not as a synonym."""
    return term in terms and term not in replaced and translation != term


def _own_forms(qwords, terms: list[str], resolved: dict[str, str], vocabulary, forms: dict, turkish: bool) -> None:
    """Add to ``forms`` the other forms (:func:`other_forms`) that Turkish notes hold of a Turkish query's terms:
    of a word the notes hold as analysed, the word as written (``strateji`` is the term ``stratej``, and
    ``stratejisi`` in a note is ``strateji``) and its term's stem (``stratejisi`` → ``strateji`` →
    ``stratej``, the term of a note writing ``strateji``); of a word replaced (another analysis, a
    Turkish spelling), the replacement's stem. Of a query analysed as English (``stratejisi`` alone reads
    as English), only its words whose term a Turkish note holds: replaced by it (their Turkish analysis),
    or found as they are (``strateji`` alone: QA round 41, the notes writing ``strateji``, the term
    ``stratej``, were missed), by that term's stem; and an English word a Turkish note quotes, which Snowball
    Turkish reads as Turkish there, by that Turkish analysis, where a Turkish note holding it writes the word
    (:func:`quoted_in_turkish`; QA round 103-B F1: ``token``, ``release`` and ``salience`` in a Turkish note are
    the terms ``toke``, ``relea`` and ``sali``, and ``recall token`` missed that note), and only where every Turkish
    note holding it does (the same stem of a Turkish word is a false friend, ``file`` → ``fil``, elephant). At most
    three vocabulary lookups for the query, and one search of Turkish notes' text per such English word.

    Measured (3 Dec, BM25 nDCG@10, ``python -m eval --set dreamcontext --set xquad --modes bm25``,
    same tree with and without): XQuAD paragraphs tr→tr 0.944 → 0.953, sentences tr→tr 0.780 → 0.794,
    both languages (Turkish questions) 0.861 → 0.865, Turkish typed in plain letters 0.942 → 0.944; the
    gold set and every English-question track unchanged. The stem alone, without the word as written:
    0.952 and 0.791. The words of an English-read query found as they are (3 Dec, same command): para
    en→tr 0.771 → 0.772, tr-ascii→tr 0.946 → 0.947, sentences en→tr 0.576 → 0.575, the rest unchanged.
    Measured and removed (QA round 44): a word's beginnings the notes hold as terms stemming to its term
    (``stratejimiz``, the term ``stratej``, would reach ``strateji``); nDCG@10 was unchanged but for
    sentences en→tr 0.575 → 0.576, and where Snowball's stem is wrong it joined other words
    (``karınca``, the stem ``kar``: ``karı``, ``karın``). An English word's Turkish stem where a Turkish note
    quotes the word (5 Dec, same command, and ``--set dreamcontext --modes bm25,hybrid``): every question's
    top 10 unchanged on every track. Measured and not kept: every English-read word's Turkish stem a Turkish note
    holds, quoted or not: para en→tr 0.777 → 0.779, both languages (English questions) 0.868 → 0.870, sentences
    en→tr 0.5839 → 0.5838, but a Turkish note on an elephant (``fil``) came up for ``delete the license file``.

    Of a query of either language, a term's stem that more notes of another language hold than Turkish notes is left
    out: a false friend there (``toplantı``, the term ``topla``, stemmed ``top``: the class counted every English
    "top"; QA round 115-C; one English note quoting a Turkish word beside Turkish notes holding it does not: 117-A
    F2). Measured (5 Dec, ``--set xquad --set dreamcontext --modes bm25`` and ``--set dreamcontext --modes
    bm25,hybrid``, same tree with and without): every question's top 10 unchanged on every track (with any other
    language's holder as a veto instead of most holders: two questions' top 10 reordered, nDCG@10 unchanged). An
    English-read query's word too (QA round 146-E F1: ``sleepy``, the term ``sleepi`` a Turkish note holds as the
    name Sleepy, stemmed ``sleep``, which that note quotes: the class counted every English note on sleep above the
    notes writing Sleepy; ``taken``, quoted in a Turkish note as the term ``take``, counted every English "take").

    Known imprecision: a capitalised word of a Turkish note is indexed under two analyses, its name
    reading (as written) and its Turkish stem (:func:`dreamdb.analyzer.analyze`'s ``stacked``), so when
    those are the two forms in a class, that one occurrence counts twice in the class's term frequency
    (rankScore only; BM25's saturation bounds it)."""
    cands: dict[str, tuple[str, ...]] = {}
    written: dict[str, str] = {}
    into: dict[str, str] = {}  # a Turkish word's own term → the term of its ASCII spelling that replaced it
    for t, w, _cap in qwords:
        r = resolved.get(t, t)
        if r in terms and r not in forms and r not in cands:
            # (a word replaced by its ASCII spelling, kullanıcı by kullanici: its own term's forms count too, with it,
            # kullanıç of a note writing kullanıcıların; QA round 135-C F5)
            for k in (r, t) if turkish and r != t and r == ascii_term(w) and t not in cands else (r,):
                # the word as written for a Turkish query's own word; the term's stem for every word
                # (and an English word's own Turkish analysis, as a Turkish note indexes it: salience → sali, where
                # the English term's, salienc → salienç, is another)
                cands[k] = tuple(c for c in dict.fromkeys((w if turkish and k == t else k, stem(k, True),
                                                           *(() if turkish else (stem(w, True),))))
                                 if c != k and c != r and c not in terms)
                written[k] = w
                if k != r:
                    into[k] = r
    read: set[str] = set()
    if not turkish and cands:  # (an English query's words: those Turkish notes hold, as Turkish words)
        read = vocabulary.known(set(cands), in_turkish=True)
    pool = {c for cs in cands.values() for c in cs}
    held = vocabulary.known(pool, in_turkish=True) if pool else set()
    if held:
        # a term's stem that more notes of another language hold than Turkish notes is their word, a false friend
        # (toplantı's topla → top, which one Turkish note holds of toplam and 105 English notes as "top": the class
        # counted every one; QA round 115-C); one an English note quotes beside Turkish notes stays (konsolidasyo,
        # tasar: 117-A F2). So too of an English-read query's word (sleepy, the term sleepi a Turkish note holds as
        # the name Sleepy, whose Turkish stem sleep that note quotes, and every English note holds: QA round 146-E F1)
        stems = held - {written[r] for r in cands}
        conn = getattr(vocabulary, "conn", None)
        if stems and conn is not None:
            foreign = vocabulary.known(stems, in_turkish=False)
            held -= {t for t, (tr, other) in language_document_counts(conn, foreign).items() if other > tr}
    if not turkish:
        # an English word's Turkish stem counts only where a Turkish note quotes the word as written: Snowball
        # Turkish reads it as Turkish there (QA round 103-B F1: token → toke), while the same stem of a Turkish word
        # is a false friend (file → fil, elephant; delete → dele: QA round 23)
        conn = getattr(vocabulary, "conn", None)
        memo = getattr(vocabulary, "resolved_words", None)
        quoted = {r: c for r, cs in cands.items() if r not in read and conn is not None
                  for c in [stem(written[r], True)]
                  if c in cs and c in held and quoted_in_turkish(conn, written[r], c, memo)}
        forms.update((r, (c,)) for r, c in quoted.items())
        cands = {r: cs for r, cs in cands.items() if r in read}
    for r, cs in cands.items():
        found = other_forms(r, tuple(c for c in cs if c in held))
        if found:
            term = into.get(r, r)
            forms[term] = tuple(dict.fromkeys((*forms.get(term, ()), *found)))


def language_document_counts(conn, terms) -> dict[str, tuple[int, int]]:
    """``{term: (documents analysed as Turkish holding it, other documents holding it)}`` of ``terms`` that some
    document's text holds (title, description, tags or body)."""
    if not terms:
        return {}
    rows = conn.execute("SELECT p.term, SUM(d.turkish != 0), SUM(d.turkish = 0) FROM postings p JOIN documents d ON "
                        "d.id = p.doc WHERE p.term IN (SELECT value FROM json_each(?)) AND p.tf_title + "
                        "p.tf_description + p.tf_tags + p.tf_body > 0 GROUP BY p.term", (json.dumps(sorted(terms)),))
    return {t: (int(a or 0), int(b or 0)) for t, a, b in rows}


def quoted_in_turkish(conn, word: str, term: str, memo: dict | None = None) -> bool:
    """Whether ``term``, in every document analysed as Turkish that holds it, is ``word`` quoted (lowercase, a whole
    word of its title, description, tags or body): an English word Turkish notes quote (``token``, the term ``toke``
    there), not a Turkish word of that stem too (``fil``, elephant, for ``file``: one Turkish note holding the stem
    without the word and the stem does not count, QA round 104-A F3, 105 F3; the word inside another, ``fileto``,
    is not the word). SQLite first looks for a holder without the word's letters (``instr`` over its text in lower
    case), which ends the search at the first (QA round 104-A F4: 95 ms a query over 1,630 Turkish notes holding
    ``mil`` for ``mile``); then each holder is read for the word as a whole word. ``memo`` (a vocabulary's
    ``resolved_words``, emptied when the index changes) keeps the answer: a word 3,000 Turkish notes quote took
    29 ms a query to confirm (QA round 105 F10)."""
    key = ("quoted", word, term)
    if memo is not None and key in memo:
        return bool(memo[key])
    # (its tags too, as written: a note tagged token holds the stem; QA round 106 F2, it switched the rule off)
    text = "lower(d.title || ' ' || d.description || ' ' || d.tags || ' ' || d.body)"
    holders = "FROM postings p JOIN documents d ON d.id = p.doc WHERE p.term = ? AND d.turkish"
    found = False
    if not conn.execute(f"SELECT EXISTS (SELECT 1 {holders} AND instr({text}, ?) = 0)", (term, word)).fetchone()[0]:
        pattern = re.compile(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])")
        rows = conn.execute(f"SELECT d.title, d.description, d.tags, d.body {holders}", (term,))
        found = True
        for title, description, tags, body in rows:
            if not pattern.search(lower(f"{title}\n{description}\n{tags}\n{body}")):
                found = False
                break
    if memo is not None:
        if len(memo) > RESOLVED_WORDS_MAX:
            memo.clear()
        memo[key] = "1" if found else None
    return found


def other_forms(term: str, held) -> tuple[str, ...]:
    """The terms among ``held`` (translations of one query word that the notes hold) that are forms of the
    same word as ``term``: a Turkish translation is indexed as its stem and as written
    (:func:`dreamdb.lexicon.analysed_translations`), and Snowball Turkish reads the two differently in the
    notes: ``takım`` (team) is the term ``tak`` (its ``-ım`` read as a possessive) while ``takımlar`` is
    ``takım``; ``strateji`` is ``stratej`` while ``stratejisi`` is ``strateji``. Of a word ``w`` with
    stem ``s``, either one's other is the form (``held`` keeps its order); ``()`` when there is none.

    Counted with ``term`` in its class (:func:`class_members`), every note writing the word in either form
    counts, as the one word it is; no constant is involved."""
    root = stem(term, True)
    return tuple(y for y in held if y != term and (y == root or stem(y, True) == term))


def plan_query(text: str, synonym_table=None, vocabulary=None, lexicon=None, *, correct: bool = False,
               corrections: dict | None = None, time_intent: bool = True) -> QueryPlan:
    """Analyze a query (same analyzer as documents; never parsed as a query language).

    A relative time expression in the query ("yesterday", "last week", "recently", "dün", "geçen hafta", "en son":
    :func:`dreamdb.ranking.timeintent.find_time_intent`) is its time intent (``QueryPlan.time_intent``), not words
    to search: the rest of the query is analysed (``QueryPlan.text``), unless it has no term, when the whole query
    is (and the intent kept). ``time_intent=False`` reads the query whole (an index of no dated document: no window
    of time could steer it, and the words are left to the query as written).

    Args:
        text: the query.
        synonym_table: :class:`dreamdb.ranking.synonyms.SynonymTable` or ``None``: its groups expand the
            query's terms, its words as analysed before another analysis or a translation replaced them, a
            capitalised word of a Turkish query read as an ordinary word too (as the table reads its entries),
            a word typed with a capital ``I`` read with Turkish ``ı`` too
            (:func:`dreamdb.ranking.synonyms.dotless_reading`, as documents index it: ``AYARLARI`` is
            ``ayarları``, the term ``ayar``) unless the index or the ``lexicon`` knows it only as written
            (:func:`dotted_words`: ``CABIN`` is not ``cabın``, the term ``cap``), as an entry's word is read, and
            the other forms counted with a term.
        vocabulary: the index's vocabulary (:class:`SqlVocabulary`, or the memory engine), or
            ``None``. With it, a query word whose term is in no document's text (title,
            description, tags, body) is looked up in its other analyses
            (:func:`dreamdb.analyzer.alternate_terms`: the other language, the name reading,
            ``ı`` typed for a folded ``I``; then, over an index with Turkish notes, the Turkish
            spellings of an ASCII word, :func:`dreamdb.analyzer.diacritic_terms`, or the ASCII
            spelling of a word with Turkish letters as a Turkish note typed without them holds it,
            :func:`ascii_term`, found in a Turkish document, for at most
            :data:`MAX_SPELLED_WORDS` words, and in a query analysed as English only when none
            of its words is in a non-Turkish note, or its words no such note holds read as Turkish by the
            ``lexicon`` (:func:`turkish_by_lexicon`, which then translates its words as a Turkish question's);
            last, in a query whose own words, not only a
            name in it, read as Turkish (or that is written in capitals with a dotted ``İ``), the
            English words it may be a loanword of, :func:`loanword_terms`, found in a note not
            analysed as Turkish, for at most :data:`MAX_SPELLED_WORDS` words too; with a
            ``lexicon``, then its translations, :func:`translated_terms`: a Turkish query's word
            into English, found in a note not analysed as Turkish, or a word of a query analysed
            as English into Turkish, found in a Turkish note) and the first one found in a text is
            used instead.
            A Turkish analysis of a word of a query analysed as English must be found in a
            Turkish document (``costume`` must not become English ``cost`` through a Turkish
            stem). A word found in a text is never changed, and a query analysed as English
            over an index without Turkish documents is not looked up at all (unless, with a lexicon, it
            reads as Turkish by :func:`turkish_by_lexicon`), so English queries on English notes analyse
            exactly as before. The score stays BM25 over one term per
            query word.
        lexicon: :class:`dreamdb.lexicon.Lexicon` (a Turkish–English dictionary) or ``None``. A word the query
            writes only in a file name or its path (:func:`name_words`) is not translated. With it, a query read as
            Turkish (analysed so, or by :func:`turkish_by_lexicon`) leaves out its Turkish stopwords typed without
            their letters (:func:`plain_typed_stopwords`: ``icin``, ``cok``), as it leaves them out written with them.
        correct: also correct the spelling of an English query's words no note holds
            (:func:`spelling_corrections`; :meth:`dreamdb.Index.recall` asks for it when the query as typed matched
            nothing). A query analysed as Turkish (one Turkish word can make it so: ``securtys için``), or read as
            Turkish typed without its letters (by the ``lexicon``), has no word corrected, its English typos
            included.
        corrections: corrections to read instead of this vocabulary's own, as :func:`spelling_corrections` gives
            them (:func:`merge_corrections` of several vaults': :meth:`dreamdb.multi.MultiIndex.recall` has every
            vault read the query with the corrections of all, QA round 155-A F1); each is read where ``correct`` would
            correct (an English query, the word's term in no other reading); ``None``: ``correct`` decides.

    Returns:
        QueryPlan.
    """
    from dreamdb.ranking.timeintent import find_time_intent

    intent, rest = find_time_intent(text) if time_intent else (None, text)
    if intent is None:
        return _plan_query(text, synonym_table, vocabulary, lexicon, correct=correct, corrections=corrections)
    plan = _plan_query(rest, synonym_table, vocabulary, lexicon, correct=correct, corrections=corrections)
    if not plan.terms:  # (the expression is all the query has: its words are searched too)
        plan = _plan_query(text, synonym_table, vocabulary, lexicon, correct=correct, corrections=corrections)
    return replace(plan, time_intent=intent)


def _plan_query(text: str, synonym_table=None, vocabulary=None, lexicon=None, *, correct: bool = False,
                corrections: dict | None = None) -> QueryPlan:
    """:func:`plan_query` of a text read whole (no time intent taken out)."""
    written = drop_data(normalize(text))  # (encoded data is found in the text as written)
    folded = lower(dotless_capitals(written))
    words = tokens(folded, data_dropped=True)  # raw_tokens(text), from the one normalisation
    written_words = tokens(written, data_dropped=True)  # the words as written (capitals: names)
    shouted = _shouted_turkish(written)
    # An English sentence with a name in Turkish letters is English ("Gülşen: delete the license file";
    # read as Turkish, "file" and "delete" would become the Turkish stems "fil" and "dele").
    turkish = shouted or is_turkish_text(words)
    qwords = None  # query_words(…): (term, word, capitalised), computed once, when a stage needs it
    # Only the words up to the one that brings the query's MAX_QUERY_TERMS-th distinct term are read further: the
    # rest could add no term kept, and each word read costs lookups (QA round 155-C F2: 50,000 words took 9.4 s).
    # Read with the whole query's language, they give the terms the whole query gave (a Turkish query's opening
    # words as read there, _common_openings: more words read when fewer terms came of them than counted)
    every = len(words)
    wanted = MAX_QUERY_TERMS
    while True:
        read = _words_read(words, written_words, turkish, wanted)
        some, some_written = (words[:read], written_words[:read]) if read < every else (words, written_words)
        # (a Turkish query's words capitalised where it, a sentence or a line opens, read as ordinary words)
        # (and those with a capital I read as ordinary words with it as ı or as i, for its own words: "Isıtma sorunu")
        common, own = _common_openings(written, some, some_written, vocabulary) if turkish else (frozenset(),) * 2
        if turkish:  # its terms are analyze's (a Turkish query keeps the words beside them anyway)
            qwords = query_words(text, True, some, some_written, common)
            distinct = list(dict.fromkeys(t for t, _w, _cap in qwords))
        else:  # (analyze's table of English terms: cheaper when nothing else needs the words)
            distinct = list(dict.fromkeys(analyze(text, turkish=False, words=some)))
        if read == every or len(distinct) >= MAX_QUERY_TERMS:
            break
        wanted += MAX_QUERY_TERMS - len(distinct)
    words, written_words, unread = some, some_written, every - read
    # A query read as Turkish, analysed so or typed without its letters and read so by the lexicon
    # (turkish_by_lexicon), leaves out its Turkish stopwords typed without their letters too, as a Turkish query
    # leaves them out written with them: icin, cok, degil were searched, and translated as Turkish words (icin → past,
    # cok → collapse: QA round 157-D F1), where için, çok, değil are not
    by_lexicon_reading = None  # turkish_by_lexicon(words, …), asked once
    skip = frozenset()
    if lexicon is not None and not PLAIN_TYPED_TURKISH_STOPWORDS.isdisjoint(words):
        if not turkish and vocabulary is not None:
            by_lexicon_reading = turkish_by_lexicon(words, lexicon, vocabulary)
        if turkish or by_lexicon_reading:
            skip = plain_typed_stopwords(words, lexicon)
    if skip:
        if turkish:
            qwords = [q for q in qwords if q[1] not in skip]
            distinct = list(dict.fromkeys(t for t, _w, _cap in qwords))
        else:
            distinct = list(dict.fromkeys(analyze(text, turkish=False, words=[w for w in words if w not in skip])))
    if not unread:  # (a query cut short has its MAX_QUERY_TERMS terms before these: none would be kept)
        # (v0.5.0 → 0.5.0, C++ → c++: one more term each; setupVersion → setup, version; JWTs → jwt; SESSION_ID →
        # session_id)
        identifiers = (identifier_terms(folded) + compound_terms(written) + acronym_terms(written)
                       + joined_terms(written))
        if vocabulary is not None and not turkish and "s" in folded:
            identifiers += _held_whole(words, vocabulary)  # (ios typed in lowercase: the iOS notes' term too)
        if identifiers:
            distinct = list(dict.fromkeys(distinct + identifiers))
    dropped = max(0, len(distinct) - MAX_QUERY_TERMS)
    distinct = distinct[:MAX_QUERY_TERMS]
    resolved: dict[str, str] = {}
    corrected: dict[str, str] = {}
    applied: dict[str, tuple[str, tuple[tuple[str, str, int], ...]]] = {}  # (the corrections read: plan.corrections)
    by_lexicon: list[str] = []
    forms: dict[str, tuple[str, ...]] = {}  # a translation's term → its other forms (other_forms)
    # A Turkish question whose own words, not only a name in it, read as Turkish, over an index with
    # notes that are not Turkish: its words may be loanwords of theirs, or be translated into theirs
    # (a word capitalised where the query opens is its own where read as an ordinary word, or where the lexicon
    # lists it as a Turkish word: "Güncelleme sorunu", QA round 149-G F1)
    # (and one with a capital I where, read with it as ı or as i, it is: "Isıtma sorunu", QA round 150-A F1)
    reads_turkish = bool(turkish and vocabulary is not None and vocabulary.has_non_turkish
                         and (shouted or is_turkish(_own_words(words, written_words, own))
                              or (lexicon is not None and is_turkish(_own_words(
                                  words, written_words, own | _listed_openings(written, words, written_words,
                                                                               lexicon))))))
    # A query typed without Turkish letters whose words read as Turkish by the lexicon (turkish_by_lexicon), over an
    # index with notes not analysed as Turkish: its words are translated into those notes as a Turkish question's are
    # (QA round 151-E F1: "mac bildirimleri" found the one English note quoting *Bildirim*, not the 25 on notifications),
    # its words a Turkish note holds too, counted with their translations as the same words written with their letters
    # are (QA round 157-D F2: "iki oturum" kept iki and oturum alone, where "iki oturum ş" counted iki|two, oturum|session)
    letterless = bool(not turkish and lexicon is not None and vocabulary is not None and distinct
                      and vocabulary.has_non_turkish and (turkish_by_lexicon(words, lexicon, vocabulary)
                                                          if by_lexicon_reading is None else by_lexicon_reading))
    translates = bool(lexicon is not None and vocabulary is not None and distinct
                      and (letterless or _translates(turkish, vocabulary, reads_turkish)))
    names = name_words(written) if lexicon is not None else frozenset()  # (not translated: a file name's parts)
    # "I" in the query: a capital I may stand for Turkish dotless ı (SICAKLIK), in any note's text;
    # with a lexicon, a query none of whose words a note holds may be Turkish typed without its
    # letters, translated into English notes (a query with a word the notes hold is left as before)
    if vocabulary is not None and distinct and (turkish or vocabulary.has_turkish or "I" in text or (
            lexicon is not None and vocabulary.has_non_turkish and (
                not vocabulary.known(distinct) or letterless))):
        if qwords is None:
            qwords = query_words(text, turkish, words, written_words, skip=skip)
        resolved, by_lexicon, forms = _resolve(text, qwords, turkish, distinct, vocabulary, reads_turkish=reads_turkish,
                                               translates=translates, lexicon=lexicon, names=names,
                                               letterless=letterless)
    if (correct or corrections is not None) and vocabulary is not None and distinct and not turkish and not letterless:
        if corrections is None:
            if qwords is None:
                qwords = query_words(text, turkish, words, written_words, skip=skip)
            corrections = spelling_corrections(qwords, distinct, resolved, vocabulary, lexicon)
        for term in distinct:  # (in the query's order)
            if term not in corrections or term in resolved:
                continue
            applied[term] = typed, found = corrections[term]
            best, *others = (t for t, _spelling, _docs in found)
            resolved[term] = best
            corrected[typed] = " or ".join(spelling for _t, spelling, _docs in found)
            if others:
                forms[best] = tuple(dict.fromkeys((*forms.get(best, ()), *others)))
    terms = list(dict.fromkeys(resolved.get(t, t) for t in distinct))
    forms = {r: kept for r, found in forms.items() if (kept := tuple(f for f in found if f not in terms))}
    syn: dict[str, float] = {}
    translated: dict[str, str] = {}
    if translates and terms:
        if qwords is None:
            qwords = query_words(text, turkish, words, written_words, skip=skip)
        chosen_words = [q for q in qwords if q[1] not in names] if names else qwords
        chosen = translation_synonyms(chosen_words, turkish or letterless, terms, vocabulary, lexicon, resolved)
        # (a replaced word's "other sense" that is only another form of its replacement is in its class already)
        translated = {t: found[0] for t, found in chosen.items() if found[0] not in forms.get(t, ())}
        forms.update((found[0], found[1:]) for t, found in chosen.items() if found[1:] and t in translated)
        # a word the notes hold as written counts with its translation as one term (class_members); a word
        # replaced (by a translation, a loanword, another analysis) keeps its other sense as a synonym,
        # with that sense's other forms
        replaced = set(resolved.values())
        for t, c in translated.items():
            if not _counted_with(t, c, replaced, terms):
                syn.update(dict.fromkeys((c, *forms.get(c, ())), S.SYNONYM_WEIGHT))
    # a Turkish query's own words too, and the words of another one that a Turkish note holds
    if vocabulary is not None and terms and vocabulary.has_turkish:
        if qwords is None:
            qwords = query_words(text, turkish, words, written_words, skip=skip)
        _own_forms(qwords, terms, resolved, vocabulary, forms, turkish)
    if synonym_table is not None:  # the query's words as typed too, where a translation or another analysis
        # replaced them (`sürüm, checklist` gave sürüm → version no checklist: QA round 140-A F1), a capitalised
        # word of a Turkish query read as an ordinary word too, as the entries are read (`Dağıtım` was the name
        # dağıtım, the entry `dağıtım` the term dağıt: QA round 141-A F1), and the forms counted with a term
        seen = terms + distinct + ([stem(w, True) for _t, w, cap in qwords if cap] if turkish else [])
        counted = [f for fs in forms.values() for f in fs]
        # and a word typed with a capital I read with ı, as a document's (`AYARLARI, SICAKLIK`: QA round 143-D F2),
        # where it is no word the index or the lexicon knows only as written, as an entry's word (`CABIN` is not
        # cabın, the term cap, nor the entry `CABIN` the query `cap`: QA round 144-A F1)
        readings = [(w, r) for w, o in zip(words, written_words)
                    if len(w) > 1 and w not in STOPWORDS and w not in skip and (r := dotless_reading(o, w)) is not None]
        read = [(w, stem(r, True)) for w, r in readings]
        dotted = dotted_words(readings + synonym_table.readings(seen + [t for _w, t in read] + counted), vocabulary,
                              lexicon)
        seen += [t for w, t in read if w not in dotted]
        for s in synonym_table.expand_query(list(dict.fromkeys(seen + counted)), dotted):
            syn.setdefault(s, S.SYNONYM_WEIGHT)
    if syn and translated:
        # a term counted in a class (a translation counted with the query's word) is counted there, at full weight,
        # and not again as a synonym (QA round 146-E F2: with `sleep, consolidation`, `uyku konsolidasyonu` counted
        # sleep in the class uyku|sleep and as consolidation's synonym)
        in_class = {m for ms in _classes(translated, resolved, terms, forms).values() for m in ms}
        syn = {s: w for s, w in syn.items() if s not in in_class}
    return QueryPlan(text, terms, syn, turkish, dropped, resolved, translated, by_lexicon, forms, corrected, applied,
                     unread)


def _words_read(words: list[str], written: list[str], turkish: bool, wanted: int = MAX_QUERY_TERMS) -> int:
    """How many of a query's ``words`` (folded, :func:`dreamdb.analyzer.tokens`; ``written``: as written) to read:
    up to the one that brings its ``wanted``-th distinct term, each word read as :func:`dreamdb.analyzer.query_words`
    reads it (a capitalised word of a Turkish query by its name reading: :func:`plan_query` reads more when some
    opening word read as an ordinary word gave fewer terms), every word when they hold fewer, or when no word past
    that one brings another term (repeats, stopwords, one-letter words: QA round 156-A F5, 256 distinct words and 11
    repeats were said to hold more than 256 distinct terms, "its last 11 words … were not read"). A Turkish query's
    words read are not all capitalised unless all of its words are (:func:`dreamdb.analyzer.opening_capitals` reads
    such a query as a title: the words read must be read as the whole query's are). The loop stops at the first word
    past the ``wanted``-th term that brings another: its cost is bounded by the words read (a set lookup a word past
    it, a stem a new word), but for the one set of the query's words (C-level) that tells a query of fewer distinct
    words than ``wanted`` (each word one term at most; a Turkish one two, as written capitalised or not) from the
    others."""
    if len(written) != len(words):  # pragma: no cover - folding never splits tokens (as query_words)
        written = words
    if len(words) <= wanted or len(set(words)) * (2 if turkish else 1) <= wanted:
        return len(words)
    seen, terms = set(), set()

    def new_term(j: int) -> bool:  # (the j-th word read: whether it brings a term the words before did not)
        w = words[j]
        if len(w) > 1 and w not in STOPWORDS:
            key = (w, turkish and not written[j][:1].isupper())
            if key not in seen:
                seen.add(key)
                term = stem(*key)
                if term not in terms:
                    terms.add(term)
                    return True
        return False

    for i in range(len(words)):
        if new_term(i) and len(terms) >= wanted:
            break
    else:
        return len(words)
    read = i + 1
    if turkish and all(o[:1].isupper() for o in written[:read]):
        read = next((j + 1 for j in range(read, len(words)) if not written[j][:1].isupper()), read)
        for j in range(i + 1, read):
            new_term(j)
    # (past the cut, a word that brings another term: else every word is read, nothing left out)
    return read if any(new_term(j) for j in range(read, len(words))) else len(words)


MAX_CORRECTED_LETTERS = 30
"""Longest query word :func:`spelling_corrections` corrects: its candidates are 54n + 25 spellings of n letters each,
so their work and memory grow with n² (QA round 154-G F1: a pasted DNA sequence of 3,900 letters held the prompt hook
12 s at 3.9 GB); a run of letters longer than English words (the longest in common dictionaries have about 30) is no
typo of one. At most the first :data:`MAX_SPELLED_WORDS` such words of a query are tried, corrected or not."""

MIN_CORRECTED_LETTERS = 5
"""Shortest query word :func:`spelling_corrections` corrects: one edit of a word of four letters or fewer reaches
another common word too often to be a typo's correction (Lucene's ``FuzzyQuery`` with ``AUTO`` fuzziness allows no
edit below 3 characters and one up to 5; a word of 5 or more letters here gets one, never two: the candidates of two
edits are thousands)."""

_CORRECTION_LETTERS = "abcdefghijklmnopqrstuvwxyz"
"""The letters :func:`one_edit_spellings` inserts and replaces with (an English query's typos: ASCII words only)."""


def one_edit_spellings(word: str) -> set[str]:
    """Every spelling one Damerau–Levenshtein edit from ``word`` (a lowercase ASCII word): a letter deleted,
    inserted or replaced, or two adjacent letters swapped (Damerau 1964: these four make about 80 % of typing errors;
    the candidate set is Norvig's ``edits1``, 54n + 25 strings for n letters)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in _CORRECTION_LETTERS}
    out |= {a + c + b for a, b in splits for c in _CORRECTION_LETTERS}
    out.discard(word)
    return out


def _listed_word(word: str, lexicon) -> bool:
    """Whether the lexicon lists ``word`` (lowercase ASCII) as an English word, as written or by its stem
    (``collars``), or as a Turkish word, as written or typed without its letters."""
    from dreamdb.lexicon import EN_TR, TR_EN

    return bool(lexicon.has(EN_TR, word) or lexicon.has(EN_TR, english_stem(word), stemmed=True)
                or lexicon.has(TR_EN, word) or lexicon.has(TR_EN, word, ascii=True))


def spelling_corrections(qwords: list[tuple[str, str, bool]], distinct: list[str], resolved: dict[str, str],
                         vocabulary, lexicon) -> dict[str, tuple[str, tuple[tuple[str, str, int], ...]]]:
    """``{term: (the word as typed, ((a correction's term, its spelling, documents holding the term), …))}`` for the
    words of an English query (:func:`plan_query` asks for none in a query analysed as Turkish, or read as Turkish
    typed without its letters: one Turkish word, ``için``, leaves every English typo of the query as typed) that no
    note holds
    in any reading and that read, one edit away, as words notes not analysed as Turkish hold (a typo: ``securty``,
    ``licencing``, ``consolidaton``), the correction most documents hold first (then in order). :func:`plan_query`
    replaces the term by the first and counts the others with it as one term, a class (:func:`class_members`), as
    a word's translations are: a typo one edit from two words (``worktres``: *workers*, *worktrees*) stands for
    either, and neither is guessed.

    Only a word of :data:`MIN_CORRECTED_LETTERS` to :data:`MAX_CORRECTED_LETTERS` ASCII letters (the first
    :data:`MAX_SPELLED_WORDS` such words of a query are tried, whether a correction is found or not: QA round 155-A
    F2, a prompt of 300 random 30-letter words was expanded word by word, 1.25 s, as only corrections counted), not
    capitalised (a name the notes do not
    hold is no typo of a word they do), that the ``lexicon`` (when there is one) does not list as an English or a
    Turkish word (as written or by its stem: a word spelled right that no note holds is a word the notes do not
    use, and one edit from it is another word), and whose term no other reading replaced (``resolved``) is
    corrected; the
    correction's term is analysed as the query's words are (English), and replaces the term as another analysis
    does (:func:`plan_query`'s ``resolved``): a word found in a note is never changed. QA round 154-D F4: BM25 found
    nothing for ``dashbaord securty`` or ``worktres and the brian``, and the prompt hook's default mode is BM25.
    A correction's spelling is the one the notes write (:func:`_shown_spelling`, :func:`held_spellings`: the
    spelling one edit away if a note writes it, else the word the notes write the term as most often), what the
    recall's note shows.

    Used only for a query that matched nothing as typed (:meth:`dreamdb.Index.recall`; over several vaults, nothing
    in any, each vault's corrections merged, :meth:`dreamdb.multi.MultiIndex.recall`): corrected on every query,
    XQuAD's and SciFact's English questions lost as many places as they gained (``python -m eval --set xquad --set
    scifact --modes bm25``, 7 Dec 2026: SciFact nDCG@10 0.6830 → 0.6827, XQuAD sentences en→en 0.8406 → 0.8404,
    paragraphs en→mixed 0.8694 → 0.8684, paragraphs en→en 0.9698 → 0.9703; ``latest`` read as a typo of *late*,
    ``parliment`` corrected where a Turkish paragraph held the answer), since a rare word spelled right that no
    note holds has neighbours one edit away too. Source of the method: Damerau 1964 (one edit), Norvig's
    spelling corrector (its candidates, the most frequent first).

    Args:
        qwords: :func:`dreamdb.analyzer.query_words` of the query (English).
        distinct: the query's distinct terms.
        resolved: terms already replaced by another reading (left alone).
        vocabulary: the index's vocabulary (``known``, ``cooccurrence``, ``spellings``).
        lexicon: :class:`dreamdb.lexicon.Lexicon` (its English and Turkish headwords) or ``None``.
    """
    unknown = set(distinct) - set(resolved) - vocabulary.known(distinct)
    if not unknown:
        return {}
    out: dict[str, tuple[str, tuple[tuple[str, str, int], ...]]] = {}
    tried: set[str] = set()  # (the words tried, corrected or not: QA round 155-A F2, the cap counted corrections)
    for term, word, cap in qwords:
        if term not in unknown or term in tried or cap or not MIN_CORRECTED_LETTERS <= len(word) <= MAX_CORRECTED_LETTERS \
                or not (word.isascii() and word.isalpha()) or (lexicon is not None and _listed_word(word, lexicon)):
            continue
        if len(tried) >= MAX_SPELLED_WORDS:
            break
        tried.add(term)
        candidates: dict[str, list[str]] = {}  # the term of each spelling one edit away: its spellings, shortest first
        for w in sorted(one_edit_spellings(word), key=lambda w: (len(w), w)):
            if w not in STOPWORDS:
                candidates.setdefault(stem(w, False), []).append(w)
        candidates.pop(term, None)
        found = vocabulary.known(candidates, in_turkish=False)
        if not found:
            continue
        _n, _a, counts = vocabulary.cooccurrence(sorted(found), sorted(found)[:1])
        written = vocabulary.spellings(found)
        out[term] = (word, _by_documents((t, _shown_spelling(candidates[t], written.get(t)), counts.get(t, (0, 0))[1])
                                         for t in found))
    return out


def _shown_spelling(spellings: list[str], written: dict[str, int] | None) -> str:
    """How a correction's note names a correction: of its ``spellings`` one edit from the typo (shortest first), the
    first the notes write (``written``: :func:`held_spellings`' words of its term), else the word the notes write
    it most often as (then the shortest, then alphabetically), else the shortest spelling (QA round 155-A F5:
    ``securtys → securitys``, ``comitted → … or cometted``, spellings of the term no note writes)."""
    if written:
        return next((w for w in spellings if w in written), None) or min(written, key=lambda w: (-written[w], len(w), w))
    return spellings[0]


SPELLING_SAMPLE_DOCUMENTS = 3
"""Documents :func:`held_spellings` reads for a term's words: those where the term is most frequent (its title,
description and body term frequencies summed), a few lookups a correction (its note's words only)."""

SPELLING_SAMPLE_CHARS = 20_000
"""Characters of each such document's text :func:`held_spellings` reads (its title, description and body, in that
order): a long note's head, so that a correction of a prompt stays a few milliseconds."""


def held_spellings(conn, terms) -> dict[str, dict[str, int]]:
    """``{term: {a word as the notes write it, lowercased: times written}}``: the ASCII words whose English term is
    one of ``terms`` in the :data:`SPELLING_SAMPLE_DOCUMENTS` documents not analysed as Turkish where the term is most
    frequent (the first :data:`SPELLING_SAMPLE_CHARS` characters of each), for :func:`spelling_corrections`' note;
    a term none of whose words is found so (a word of a slug or tags alone, or of a long note's tail) is left out.
    The index keeps terms, not words: the words are read from the documents' text. ``conn``: the index connection.

    A word is read where it begins with the term but for its last letter (an English stem is its word's head, its
    last letter changed at most: *security* → ``securiti``; the few irregular exceptions of Snowball's list, *dying*
    → ``die``, are not found), ASCII letters from a non-letter to a non-letter."""
    out: dict[str, dict[str, int]] = {}
    for term in terms:
        rows = conn.execute(  # (the texts of the chosen documents only)
            "SELECT substr(title || ' ' || description || ' ' || body, 1, ?) FROM documents WHERE id IN"
            " (SELECT p.doc FROM postings p JOIN documents d ON d.id = p.doc WHERE p.term = ? AND NOT d.turkish"
            " ORDER BY p.tf_title + p.tf_description + p.tf_body DESC, p.doc LIMIT ?)",
            (SPELLING_SAMPLE_CHARS, term, SPELLING_SAMPLE_DOCUMENTS)).fetchall()
        # (lowercased, and the term's head first, a literal the search skips to: a lookbehind before it cost 20 times
        # as much; a letter before or after it makes another word)
        pattern = re.compile(rf"{re.escape(term[:-1])}[a-z]*")
        words: dict[str, int] = {}
        for (text,) in rows:
            text = (text or "").lower()
            for m in pattern.finditer(text):
                start, end = m.span()
                if not (start and text[start - 1].isalpha()) and not (end < len(text) and text[end].isalpha()):
                    words[m.group()] = words.get(m.group(), 0) + 1
        counts = {w: n for w, n in words.items() if stem(w, False) == term}
        if counts:
            out[term] = counts
    return out


def merge_corrections(found: list[dict[str, tuple[str, tuple[tuple[str, str, int], ...]]]]
                      ) -> dict[str, tuple[str, tuple[tuple[str, str, int], ...]]]:
    """Several indexes' :func:`spelling_corrections` of one query (a :class:`~dreamdb.multi.MultiIndex`'s vaults) as
    one: a word's corrections are those of every index, each term's documents summed over them, the one most
    documents hold first (then by term), its spelling the one of the index where most documents hold it (the
    first such index on a tie). QA round 155-A F1: each vault read a query by its own notes' words, so one typo
    stood for other words in each vault."""
    merged: dict[str, tuple[str, dict[str, list]]] = {}
    for corrections in found:
        for term, (typed, spelled) in corrections.items():
            _typed, by_term = merged.setdefault(term, (typed, {}))
            for t, spelling, docs in spelled:
                seen = by_term.setdefault(t, [spelling, 0, docs])
                seen[1] += docs
                if docs > seen[2]:
                    seen[0], seen[2] = spelling, docs
    return {term: (typed, _by_documents((t, spelling, docs) for t, (spelling, docs, _most) in by_term.items()))
            for term, (typed, by_term) in merged.items()}


def _by_documents(found) -> tuple[tuple[str, str, int], ...]:
    """``(term, spelling, documents)`` triples, the most documents first, then by term."""
    return tuple(sorted(found, key=lambda c: (-c[2], c[0])))


def _common_openings(text: str, words: list[str], written: list[str],
                     vocabulary) -> tuple[frozenset[int], frozenset[int]]:
    """Of a Turkish query's words capitalised where a sentence or a title opens
    (:func:`dreamdb.analyzer.opening_capitals`), those to read as ordinary words, not names: the ones whose
    Turkish analysis a Turkish note holds (``Yedekler nerede`` → ``yedek``). The others keep the name
    reading (``Rankine çevriminin…`` → ``rankin``, not ``rank``). One vocabulary lookup, only for a query with
    such a word over an index with Turkish notes. ``text``: the query after :func:`dreamdb.analyzer.normalize`
    and :func:`dreamdb.analyzer.drop_data`; ``words``: its folded words; ``written``: its words as written.

    A word with a capital ``I`` (not in capitals throughout) is one too, read with it as ``ı`` and as ``i``
    (:func:`_opening_readings`: ``Isıtma``, ``Ilık``, ``Işık``): it is read as an ordinary word where its Turkish
    analysis as folded (the one :func:`dreamdb.analyzer.query_words` then gives it) is held, as any other, and is
    the query's own word, no name, in deciding whether it reads as Turkish (:func:`_own_words`) where a Turkish
    note holds any reading's Turkish analysis, the same as its name's too (``ışık``): QA round 150-A F1, left out,
    ``Işık konfigurasyonu`` was read as a name and ``konfigurasyonu``, not as Turkish, and missed the note on
    configuration that ``ışık konfigurasyonu`` finds through its loanword (a word without a capital ``I`` whose
    two analyses agree, ``Çay``, was left out of the query's own words too, since it gains nothing read as an
    ordinary word: it counts as ``Işık`` does). Measured (7 Dec, BM25, ``python -m eval --set xquad --set
    dreamcontext --modes bm25 --no-baseline``): 1 of 13,150 per-question top 10s changed (a Turkish question typed
    without its letters opening with a capital ``I``, now read as the ordinary word, its gold note still first),
    every metric unchanged.

    Returns:
        ``(common, own)``: the indexes into ``words`` to read as ordinary words
        (:func:`dreamdb.analyzer.query_words`' ``common``), and those to count as the query's own words
        (:func:`_own_words`), a superset; empty sets without such a word or Turkish notes.

    Measured (4 Dec, BM25 nDCG@10, ``python -m eval --set xquad --set dreamcontext --modes bm25``): against
    every such word read as a name, as before, XQuAD paragraphs with Turkish questions over notes of both
    languages 0.864 → 0.868, sentences tr→tr 0.792 → 0.791 (a question copying its sentence's capitalised
    first word, ``Hedefte``, matched that form alone), the gold set and every other track unchanged; against
    every such word read as an ordinary word, paragraphs tr→en 0.814 → 0.816, sentences tr→en 0.644 → 0.645."""
    none = frozenset()
    if vocabulary is None or not vocabulary.has_turkish:
        return none, none
    # each opening word's Turkish analyses, of the word as folded first
    readings = {i: tuple(dict.fromkeys(stem(r, True) for r in rs))
                for i, rs in _opening_readings(text, words, written).items()}
    if not readings:
        return none, none
    held = vocabulary.known({t for ts in readings.values() for t in ts}, in_turkish=True)
    # read as ordinary words: those whose analysis as folded is held and is no name's (its English analysis)
    common = frozenset(i for i, ts in readings.items() if ts[0] in held and ts[0] != stem(words[i], False))
    return common, common | frozenset(i for i, ts in readings.items() if not held.isdisjoint(ts))


def _opening_readings(text: str, words: list[str], written: list[str]) -> dict[int, tuple[str, ...]]:
    """The words of a query capitalised where it, a sentence or a line opens
    (:func:`dreamdb.analyzer.opening_capitals`, with a capital ``I``), more than one letter long and no stopwords:
    index into ``words`` → its readings as an ordinary word, the word as folded first (``words[i]``), then, for one
    with a capital ``I``, with every such ``I`` read as ``ı`` (:func:`dreamdb.analyzer.dotless_word`) and as ``i``
    where those differ from it: ``Ilık`` → ``ılık``, ``ilık``; ``Ilik`` → ``ilik``, ``ılik``. Turkish writes the
    capital of ``ı`` as ``I`` and lowercasing makes it ``i`` (or :func:`dreamdb.analyzer.dotless_capitals`, in a word
    with a Turkish-only letter, ``ı``): either may be the word. ``{}`` when there is none. ``text``, ``words``,
    ``written``: as for :func:`_common_openings`."""
    if len(written) != len(words):  # pragma: no cover - folding never splits tokens
        return {}
    out = {}
    for i in opening_capitals(text, written, capital_i=True):
        w, o = words[i], written[i]
        if len(w) > 1 and w not in STOPWORDS:
            rs = [w]
            if "I" in o and len(o) == len(w):
                rs += ["".join(c if x != "I" else d for c, x in zip(w, o)) for d in "ıi"]
            out[i] = tuple(dict.fromkeys(rs))
    return out


def _held_whole(words: list[str], vocabulary) -> list[str]:
    """Terms of the query's acronyms typed in lowercase, as :func:`dreamdb.analyzer.acronym_terms` indexes them
    written with capitals: a word of three letters ending in ``s`` that English stemming cuts (``ios`` → ``io``,
    ``aws`` → ``aw``) and that the index holds whole (``iOS``, ``AWS``), and the singular of a plural that stemming
    keeps and that has no vowel but its ``s``'s (``jwts``, ``prs``, ``sdks``: ``jwt``, held by the notes that write
    ``JWT``). The query counts that term too: ``ios`` ranked the note on disk IO before the one on iOS, and ``jwts``
    missed the notes writing ``JWT`` (QA round 58). One vocabulary lookup; a word no note writes that way adds
    nothing. Longer words are left to their stems: a note holds ``calls`` or ``slots`` whole for other reasons, and
    counting them lowered EIPs title queries' recall@1 from 834 to 823 of 1,196 (3 Dec)."""
    cut, singular = [], {}
    for w in dict.fromkeys(words):
        if len(w) > 2 and w[-1] == "s" and w not in STOPWORDS and w.isalpha():
            if stem(w, False) != w:
                if len(w) == 3:
                    cut.append(w)
            elif _VOWELS_RE.search(w, 0, len(w) - 1) is None:
                singular[w[:-1]] = w
    if not cut and not singular:
        return []
    held = vocabulary.known([*cut, *singular])
    return [w for w in cut if w in held] + [w for w in singular if w in held]


_VOWELS_RE = re.compile("[aeiouyıöü]")


def turkish_looking(word: str) -> bool:
    """Whether a word typed in ASCII shows Turkish form: a Turkish suffix (its Turkish analysis is
    not its English one: ``taksiye``, ``televizyonda``) or a loanword ending
    (:func:`dreamdb.cognates.has_loanword_ending`: ``konfigurasyon``). A guard, not a language test:
    ``reading`` shows neither, so an English query that matches nothing is not read as loanwords
    (``reading`` → *ready*). A Turkish plural Snowball leaves (against vowel harmony, ``pipelinelar``, or after
    no vowel, ``smsler``: :data:`_PLURAL_ENDING`) is such a suffix too (QA round 76 F6: alone, such a word was
    read as English, and found nothing)."""
    base = stem(word, True)
    return base != stem(word, False) or has_loanword_ending(word) or _plural_root(base) is not None


def _plural_root(base: str) -> str | None:
    """The root before a Turkish plural that Snowball left on a word's stem ``base`` (:data:`_PLURAL_ENDING`), if
    it has three letters or more: ``pipelinelar`` → ``pipeline``, ``smsler`` → ``sms``; else ``None``."""
    m = _PLURAL_ENDING.search(base)
    return base[:m.start()] if m is not None and m.start() >= 3 else None


def english_word(word: str, lexicon) -> bool:
    """Whether the lexicon has ``word`` (lowercase, as written, or an inflection of it: ``collars``) as an English
    word and not as a Turkish one, as written or typed without Turkish letters: ``dollar``, ``collar`` (not
    ``kale``, both, nor ``taksiye``, neither).
    Such a word of a query read as English is not read as Turkish typed without its letters (QA round 77 G3:
    ``dollar``, which no note holds, was read as ``dol`` + the plural ``-lar`` and found notes on *full*; ``collar``
    became ``col``). ``False`` without a lexicon. Kept in the lexicon's ``memo`` (a pure function of the word and the
    file: two stages of a query ask for each of its words, and queries repeat words)."""
    from dreamdb.lexicon import EN_TR, TR_EN

    if lexicon is None:
        return False
    key = ("english word", word)
    found = lexicon.memo.get(key)
    if found is None:
        # (an inflected English word by its stem: collars, collared; QA round 79 F11)
        found = (lexicon.has(EN_TR, word) or lexicon.has(EN_TR, english_stem(word), stemmed=True)) and not (
            lexicon.has(TR_EN, word) or (word.isascii() and lexicon.has(TR_EN, word, ascii=True)))
        if len(lexicon.memo) >= RESOLVED_WORDS_MAX:
            lexicon.memo.clear()
        lexicon.memo[key] = found
    return found


def dotted_words(readings, vocabulary, lexicon) -> set[str]:
    """Of ``readings`` (``(word, reading)``: a word typed with a capital ``I``, folded, and that ``I`` read with
    Turkish ``ı``, :func:`dreamdb.ranking.synonyms.dotless_reading`), the words to read as written, with ``i``
    alone: those the index or the lexicon knows as written and not as read. The index knows a word as written where
    a note holds its English term (its Turkish one is the reading's: ``cabin`` and ``cabın`` are both ``cap``), and
    its reading where a Turkish note holds the reading's Turkish term; the lexicon knows a word as written where it
    has it as an English word (:func:`english_word`: ``cabin``, ``login``) or as a Turkish one (``latin``, ``iki``),
    and its reading where it has the reading or the reading's term as a Turkish word (``kapalı``; ``hesap`` for
    ``hesapları``). QA round 144-A F1: ``CABIN`` read ``cabın``, the term ``cap``, took the synonyms of ``cap``,
    ``LATIN`` those of ``lat``. A word neither knows as written keeps both readings (``HESAPLARI``, ``AYARLARI``;
    ``ADMIN``, which the lexicon lacks, and every word without an index or a lexicon): its capital ``I`` is all there
    is to tell them apart by, and it may be either letter."""
    if not readings or (vocabulary is None and lexicon is None):
        return set()
    from dreamdb.lexicon import TR_EN

    as_written = as_read = set()
    if vocabulary is not None:
        as_written = vocabulary.known({stem(w, False) for w, _r in readings})
        as_read = vocabulary.known({stem(r, True) for _w, r in readings}, in_turkish=True)
    return {w for w, r in readings
            if (stem(w, False) in as_written or english_word(w, lexicon)
                or (lexicon is not None and lexicon.has(TR_EN, w)))
            and not (stem(r, True) in as_read or (lexicon is not None and (lexicon.has(TR_EN, r)
                                                                           or lexicon.has(TR_EN, stem(r, True)))))}


def turkish_typed_plainly(word: str, lexicon) -> bool:
    """Whether the lexicon has ``word`` as a Turkish word typed without its letters (``ozet``: *özet*; ``gunluk``:
    *günlük*) and in no sense an English word, as written or inflected (``basin``, English and *basın*, is none):
    ASCII, with no letter Turkish lacks, and other than its Turkish spelling (``kale``, spelled as Turkish writes it,
    is none). ``False`` without a lexicon. Kept in the lexicon's ``memo``."""
    from dreamdb.lexicon import EN_TR, TR_EN

    if lexicon is None or not word.isascii() or not NOT_TURKISH_LETTERS.isdisjoint(word):
        return False
    key = ("typed plainly", word)
    found = lexicon.memo.get(key)
    if found is None:
        found = (not lexicon.has(TR_EN, word) and lexicon.has(TR_EN, word, ascii=True)
                 and not lexicon.has(EN_TR, word) and not lexicon.has(EN_TR, english_stem(word), stemmed=True))
        if len(lexicon.memo) >= RESOLVED_WORDS_MAX:
            lexicon.memo.clear()
        lexicon.memo[key] = found
    return found


_SPELLED_VERB_ENDINGS = (
    rf"(?:{VERB_INFLECTIONS}"
    r"|m[ıiuü]yor(?:um|sun|uz|sunuz|lar)?"  # negative progressive: çalışmıyor
    # aorist, positive and negative: çalışır, olmaz
    r"|(?:[ıiuüae]?r|m[ae]z)(?:[ıiuü]m|s[ıiuü]n|[ıiuü]z|s[ıiuü]n[ıiuü]z|l[ae]r)?)")
""":data:`dreamdb.analyzer.VERB_INFLECTIONS` with the negative progressive and the aorist, positive and negative
(Göksel & Kerslake 2005, ch. 8): the verb endings :func:`_spelled_inflection_roots` reads off a word. Not in
:func:`verb_infinitives`, where an aorist would make nouns verbs (``yazar``, author, is ``yaz`` + ``-Ar``); for
telling a Turkish word typed without its letters, the verb must be in the lexicon all the same."""

_AFTER_VOWEL = "(?<=[aeıioöuü])"
_AFTER_CONSONANT = "(?<![aeıioöuü])"


def _in_syllables(pattern: str) -> str:
    """``pattern``, Turkish inflections as :data:`dreamdb.analyzer.NOMINAL_SUFFIXES` writes them, with Turkish's buffer
    letters and linking vowels where its syllables want them, where the pattern, written to cut suffixes off a word,
    takes either or none (Göksel & Kerslake 2005, §2.3): a buffer ``y`` after a vowel and never after a consonant
    (``-(y)A``, ``-(y)lA``, ``-(y)DI``, ``-(y)mIş``: ``masaya``, ``masayla``; ``-DIr`` takes none: ``masadır``), a
    buffer ``s`` or ``n`` (``-(s)I``, ``-(n)In``, the ``n`` of ``-(n)DA`` and of ``-nI``, ``-nA`` after a
    possessive) after a vowel only, and an optional linking vowel (``[ıiuü]?`` before ``-m``, ``-n``, ``-mIz``,
    ``-yor``; ``[ıiuüae]?`` before the aorist's ``-r``) after a consonant always and after a vowel never: not
    ``stat`` + ``-m``, ``sol`` + ``-r``, ``teşt`` + ``-m`` + ``-e``, ``çent`` + ``-i`` + ``-le``. The letter before
    the suffix is looked back at: match ``root[-1] + suffix`` from position 1."""
    pattern = pattern.replace("y?[dt][ıiuü]r", "[dt][ıiuü]r")
    pattern = pattern.replace("|n[ıiuüae])", "|n?[ıiuüae])")
    pattern = re.sub(r"y\?(?=[\[a-zçğıöşü])", f"(?:{_AFTER_VOWEL}y|{_AFTER_CONSONANT})", pattern)
    pattern = re.sub(r"([sn])\?(?=[\[a-zçğıöşü])", rf"(?:{_AFTER_VOWEL}\1)?", pattern)
    return re.sub(r"(\[ıiuü(?:ae)?\])\?", rf"(?:{_AFTER_CONSONANT}\1|{_AFTER_VOWEL})", pattern)


_SPELLED_ENDING_RES = (LazyPattern(_in_syllables(NOMINAL_SUFFIXES)), LazyPattern(_in_syllables(_SPELLED_VERB_ENDINGS)))
"""A noun's inflections and a verb's (:data:`_SPELLED_VERB_ENDINGS`), in Turkish letters and syllables
(:func:`_in_syllables`), matched after the root's last letter (``fullmatch(root[-1] + suffix, 1)``)."""

_TYPED_ENDING_RES = tuple(LazyPattern(p.translate(TURKISH_TO_ASCII)) for p in (NOMINAL_SUFFIXES, _SPELLED_VERB_ENDINGS))
"""The same typed without Turkish letters: a quick test of a word's rest before its Turkish spellings are tried."""

_ASCII_TO_TURKISH = {a: chr(t) for t, a in TURKISH_TO_ASCII.items()}
"""Each ASCII letter Turkish typed without its letters puts for one of them, to that letter (``s`` → ``ş``)."""

_ROUNDED_VOWELS = frozenset("oöuü")

_VOICELESS = frozenset("çfhkpsşt")
"""The voiceless consonants of Turkish, after which a suffix's ``D`` is ``t`` (``sort`` + ``-DIr``: ``sorttur``;
``hata`` + ``-DIr``: ``hatadır``; Göksel & Kerslake 2005, §2.3)."""

_TURKISH_LETTERS = frozenset("çğıöşü")

_SPELLING_SLOTS_MAX = 6
"""Most letters of a word's part that :func:`_spelled_inflection_roots` spells with Turkish letters or without
(2^6 spellings at most, as :func:`dreamdb.analyzer.diacritic_terms`)."""


def _turkish_spellings(part: str, after: str = "") -> list[str]:
    """The spellings of ``part`` (lowercase, ASCII) with Turkish letters or without, ``part`` itself first: ç ğ ı ö
    ş ü where c g i o s u stand, ``ğ`` only after a vowel (``after``: the letter before ``part``). ``[]`` for a part
    with more than :data:`_SPELLING_SLOTS_MAX` such letters."""
    slots = [i for i, c in enumerate(part) if c in _ASCII_TO_TURKISH
             and (c != "g" or (part[i - 1] if i else after[-1:]) in ("a", "e", "i", "o", "u"))]
    if len(slots) > _SPELLING_SLOTS_MAX:
        return []
    spellings = []
    for chosen in product((False, True), repeat=len(slots)):
        chars = list(part)
        for i, turkish in zip(slots, chosen):
            if turkish:
                chars[i] = _ASCII_TO_TURKISH[chars[i]]
        spellings.append("".join(chars))
    return spellings


def _suffix_spellings(word: str, n: int, kind: int) -> list[str]:
    """The spellings of ``word[n:]`` (``word`` lowercase, ASCII) with Turkish letters or without
    (:func:`_turkish_spellings`) that are a noun's inflections (``kind`` 0) or a verb's (1) in Turkish syllables
    after ``word[:n]``: a buffer letter only between two vowels and a linking vowel between two consonants
    (:func:`_in_syllables`: not ``stat`` + ``-m``, ``sol`` + ``-r``, ``reis`` + ``-sü``), no two vowels side by
    side."""
    head, rest = word[:n], word[n:]
    if not _TYPED_ENDING_RES[kind]().fullmatch(rest):
        return []
    return [spelled for spelled in _turkish_spellings(rest, head)
            if _SPELLED_ENDING_RES[kind]().fullmatch(head[-1] + spelled, 1)
            and not any(a in _TURKISH_VOWELS and b in _TURKISH_VOWELS
                        for a, b in zip(head[-1] + spelled[:-1], spelled))]


def _joins(root: str, suffix: str) -> bool:
    """Whether ``suffix`` (in Turkish letters) follows ``root`` (in Turkish letters, as the lexicon has it) as
    Turkish suffixes follow a root: in vowel harmony with the root's last vowel, each vowel back where the one
    before it is back and front where it is front, a high vowel (ı i u ü, the four-way ``I`` of ``-(s)I``,
    ``-DIr``, ``-(I)r``) rounded where the one before it is rounded and unrounded where it is not (``reis`` +
    ``-sü``, ``sort`` + ``-dır``, ``atom`` + ``-ü`` break it: ``reisi``, ``sortdur``, ``atomu``), ``-yor``'s ``o``
    and what follows it, which keep no harmony with the root, aside (Göksel & Kerslake 2005, §2.2); and each ``d`` or
    ``t`` (the ``D`` of ``-DA``, ``-DIr``, ``-DI``) ``t`` after a voiceless consonant and ``d`` elsewhere (§2.3)."""
    before = next((c for c in reversed(root) if c in _TURKISH_VOWELS), None)
    if before is None:
        return False
    for c in suffix.split("yor", 1)[0]:
        if c in _TURKISH_VOWELS:
            if (c in _BACK_VOWELS) != (before in _BACK_VOWELS) or (
                    c in "ıiuü" and (c in _ROUNDED_VOWELS) != (before in _ROUNDED_VOWELS)):
                return False
            before = c
    joined = root + suffix
    return all((c == "t") == (joined[i - 1] in _VOICELESS) for i, c in enumerate(joined) if i >= len(root)
               and c in "dt")


@lru_cache(maxsize=4096)
def _spelled_inflection_roots(word: str) -> tuple[str, ...]:
    """The lexicon keys, in Turkish letters as the lexicon writes them, that would make ``word`` (lowercase, ASCII)
    an inflected Turkish word typed without its letters, for :func:`turkish_only_word`: each spelling
    (:func:`_turkish_spellings`) of each beginning of at least :data:`TRANSLATION_MIN_LETTERS` letters (its last
    consonant devoiced too, where a vowel follows) after which the rest, spelled with Turkish letters or not, is
    a noun's inflections (:data:`dreamdb.analyzer.NOMINAL_SUFFIXES`: ``ayarlari``, *ayar* + ``-ları``; ``hatasi``,
    *hata* + ``-sı``), and the infinitive of each spelling of each root of three letters or more after which it is a
    verb's (:data:`_SPELLED_VERB_ENDINGS`: ``calisir``, ``calismiyor``: *çalışmak*), the suffix in Turkish syllables
    (:func:`_suffix_spellings`) and in vowel harmony and consonant assimilation with that spelling of the root
    (:func:`_joins`: not with a guess at it, which took ``atomu`` for *atöm* + ``-ü``), and a Turkish letter in the
    root or the suffix (the word is one typed without its letters: ``elide``, *elit* + ``-e``, is none; a root's
    ``k`` written ``ğ`` before a vowel counts, ``baloncuga``: *baloncuk*). The stemmer cuts no suffix
    typed without its letters (``ayarlari``, ``hatasi``, ``calisir`` stay whole), so such words had no Turkish reading
    and a whole Turkish query so typed read as English (QA round 152-A F3). A shorter beginning, a restored vowel
    (``kayıt`` of ``kaydı``) or a shorter verb root would make English words Turkish: ``admin`` (*adım*), ``anti``
    (*anıt*, *anmak*), ``ascii`` (*aşçı* + ``ı``, no buffer letter), ``align`` (*alık*: no ``ğ`` before a
    consonant); and so would a suffix needing no Turkish letter, or out of Turkish syllables or harmony (QA round
    153-A F1: ``elide``, *elit* + ``-e``; ``solr``, *sol* + ``-r``; ``sortdir``, *sort* + ``-dır``). ``()`` for a word
    of more letters than a lexicon word and its inflections. Kept per process for the last 4,096 words (and each
    word's answer in the lexicon's ``memo``, :func:`turkish_only_word`)."""
    if len(word) > TRANSLATION_MAX_LETTERS + INFLECTION_MAX_LETTERS:
        return ()
    keys = []
    for n in range(len(word) - 1, 2, -1):
        head, rest = word[:n], word[n:]
        for kind in (0, 1):
            suffixes = _suffix_spellings(word, n, kind) if kind or n >= TRANSLATION_MIN_LETTERS else ()
            if not suffixes:
                continue
            for spelled in _turkish_spellings(head):
                # a word typed without its letters has one of them in its root or its suffix, ğ of a root's k before
                # a vowel too (baloncuğa: baloncuk); elide (elit + -e), sitedir (site + -dir) have none
                joins = suffixes if not _TURKISH_LETTERS.isdisjoint(spelled) else [
                    s for s in suffixes if not _TURKISH_LETTERS.isdisjoint(s)]
                # a root's voiced last consonant before a vowel is voiceless on its own (kitabı: kitap; ağacı:
                # ağaç; güdüyor: gütmek): a noun's p ç t k (k as ğ after a vowel, as g after n: rengi, renk), a
                # verb's t
                voiced = (spelled[-1] == "d" if kind else spelled[-1] in "bdğ" or spelled[-2:] == "ng")
                roots = [spelled[:-1] + _HARDENED[spelled[-1]], spelled] if voiced and rest[0] in "aeiou" else [spelled]
                keys.extend((root + ("mak" if next(c for c in reversed(root) if c in _TURKISH_VOWELS) in _BACK_VOWELS
                                     else "mek")) if kind else root
                            for root in roots if any(_joins(root, s) for s in joins))
    return tuple(dict.fromkeys(keys))


def turkish_only_word(word: str, lexicon) -> bool:
    """Whether the lexicon has ``word`` (lowercase, ASCII) as a Turkish word, as written or typed without its letters,
    itself or its Turkish stem (``rakip``; ``analizi``: *analiz*; ``bildirimleri``: *bildirim*; ``mac``: *maç*), or
    the root of one of its Turkish spellings with an inflection after it (:func:`_spelled_inflection_roots`: a suffix
    typed without its letters, which the stemmer does not cut, ``ayarlari``: *ayar*, ``hatasi``: *hata*, ``calisir``:
    *çalışmak*; QA round 152-A F3), and in no sense as an English one, as written or inflected (``yap``, English too,
    is none; nor ``basin``): the counterpart of :func:`english_word`. ``False`` without a lexicon, and for a word with
    a letter Turkish lacks or one not of letters alone. Kept in the lexicon's ``memo``."""
    from dreamdb.lexicon import EN_TR, TR_EN

    if lexicon is None or not word.isascii() or not word.isalpha() or not NOT_TURKISH_LETTERS.isdisjoint(word):
        return False
    key = ("turkish only", word)
    found = lexicon.memo.get(key)
    if found is None:
        found = (not lexicon.has(EN_TR, word) and not lexicon.has(EN_TR, english_stem(word), stemmed=True)
                 and (any(lexicon.has(TR_EN, w) or lexicon.has(TR_EN, w, ascii=True)
                          for w in dict.fromkeys((word, stem(word, True))))
                      or bool(lexicon.first_translations(TR_EN, _spelled_inflection_roots(word)))))
        if len(lexicon.memo) >= RESOLVED_WORDS_MAX:
            lexicon.memo.clear()
        lexicon.memo[key] = found
    return found


def turkish_by_lexicon(words: list[str], lexicon, vocabulary) -> bool:
    """Whether a query typed without Turkish letters reads as Turkish by its words: more of its ``words`` (folded,
    :func:`dreamdb.analyzer.tokens`) are Turkish stopwords (typed with or without their letters) or words the lexicon
    has as Turkish only (:func:`turkish_only_word`) than are English-only stopwords or words it has as English only
    (:func:`english_word`), the count :func:`dreamdb.analyzer.english_by_function_words` makes of function words; a
    Turkish-only word that a note not analysed as Turkish holds as the query analyses it (as English) is not counted:
    the notes quote Turkish words and name things (``funnel analizi``, the *Mac*), so it says nothing of the query's
    language (and is kept as typed anyway). And more of its ``words`` must be Turkish stopwords or Turkish-only words
    (held or not) than English-only stopwords, English-only words and words (not stopwords) of both languages or of
    neither that a note not analysed as Turkish holds: the tech words of an English query (``sync``, ``api``,
    ``test``) are in the lexicon as both or not at all and cast no vote, so one brand or abbreviation it has as
    Turkish only (``asana``, ``bal``) outvoted none (QA round 151-H F1); such a word no such note holds
    (``sifrelenir``) says nothing, as a held Turkish-only word says nothing in the votes. ``rakip analizi`` and ``rakip analizi yap`` read as Turkish (``analizi`` is in
    one English note; QA round 151-E F1); ``mac`` alone, ``cabin crew``, ``sleep nehir`` (one each), ``asana sync``,
    ``bal test`` do not, nor a query English by its function words
    (:func:`dreamdb.analyzer.english_by_function_words`). ``False`` without a lexicon or a vocabulary."""
    if lexicon is None or vocabulary is None or english_by_function_words(words):  # (English by its function words)
        return False
    kinds = {}
    for w in dict.fromkeys(words):
        if w in ENGLISH_ONLY_STOPWORDS and w not in ASCII_TYPED_TURKISH_STOPWORDS:
            kinds[w] = -1
        elif w in TURKISH_STOPWORDS or w in ASCII_TYPED_TURKISH_STOPWORDS:
            kinds[w] = 1
        elif w in STOPWORDS:  # (a stopword of both readings, "a", "in": no vote, and no content word either)
            kinds[w] = 0
        elif english_word(w, lexicon):
            kinds[w] = -2
        elif turkish_only_word(w, lexicon):
            kinds[w] = 2
        else:  # (a content word of both languages or neither: "test", "sync", "api"; no vote, but not Turkish)
            kinds[w] = -3
    if not any(k > 0 for k in kinds.values()):
        return False
    turkish_words = {w: stem(w, False) for w, k in kinds.items() if k == 2}
    held = vocabulary.known(set(turkish_words.values()), in_turkish=False) if turkish_words else set()
    # Two counts, both of which must say Turkish: the votes, where a word of both languages or of neither casts none
    # and a Turkish-only word a note not analysed as Turkish holds says nothing; and the query's words, where a
    # content word with no Turkish-only reading that such a note holds counts as not Turkish ("asana sync": one
    # Turkish-only word beside a word the English notes use is no Turkish query, QA round 151-H F1; one no such note
    # holds, "sifrelenir", says nothing, as in the votes) and a held Turkish-only word as Turkish still (a Turkish
    # word, if a quoted one: "rakip analizi yap")
    votes = [k for w in words if (k := kinds.get(w)) and (k != 2 or turkish_words[w] not in held)]
    if sum(k > 0 for k in votes) <= sum(k < 0 for k in votes if k != -3):
        return False
    others = {w: stem(w, False) for w, k in kinds.items() if k == -3}
    in_english = vocabulary.known(set(others.values()), in_turkish=False) if others else set()
    return (sum(kinds[w] > 0 for w in words)
            > sum(kinds[w] < 0 and (kinds[w] != -3 or others[w] in in_english) for w in words))


def plain_typed_stopwords(words: list[str], lexicon) -> frozenset[str]:
    """Of a query's ``words`` (folded, :func:`dreamdb.analyzer.tokens`), read as Turkish, its Turkish stopwords typed
    without their Turkish letters (:data:`dreamdb.analyzer.PLAIN_TYPED_TURKISH_STOPWORDS`: ``icin``, ``cok``,
    ``degil``) to leave out of it, as a Turkish query's stopwords written with them are (:func:`plan_query`): but a
    form the ``lexicon`` has as a Turkish word as typed, a word of its own (``su``, *water*, beside ``şu``), and none
    when they are all the words that give the query a term (``nasil`` alone is searched). Empty without a lexicon."""
    if lexicon is None:
        return frozenset()
    from dreamdb.lexicon import TR_EN

    found = frozenset(w for w in words if w in PLAIN_TYPED_TURKISH_STOPWORDS and not lexicon.has(TR_EN, w))
    if found and all(w in found or len(w) < 2 or w in STOPWORDS for w in words):
        return frozenset()
    return found


def _own_words(words: list[str], originals: list[str], common: frozenset[int] = frozenset()) -> list[str]:
    """The query's ``words`` less its names: those written with a capital first letter (not in
    capitals throughout), as ``originals`` has them, unless they are stopwords (``The``, ``Hangi``)
    or their indexes are in ``common``: capitalised where the query, a sentence or a line opens, and
    known as ordinary words (:func:`_common_openings`, :func:`_listed_openings`). A query whose every
    word is so written (``Sunucu Güvenliği``, a title) names nothing by it: all its words are its own."""
    if len(originals) != len(words):  # pragma: no cover - folding never splits tokens
        return words
    names = [o[:1].isupper() and not o.isupper() for o in originals]
    if all(names):
        return words
    return [w for i, (w, name) in enumerate(zip(words, names)) if not name or w in STOPWORDS or i in common]


def _listed_openings(text: str, words: list[str], written: list[str], lexicon) -> frozenset[int]:
    """Of a query's words capitalised where it, a sentence or a line opens
    (:func:`dreamdb.analyzer.opening_capitals`), those the ``lexicon`` lists as Turkish words as written: words of
    the query's own, not names, in deciding whether it reads as Turkish (:func:`_own_words`). Turkish capitalises
    a sentence's first word, and a prompt begins with one: read as a name, ``Güncelleme`` (update) left
    ``Güncelleme sorunu`` no word with a Turkish letter, so it was not translated, while ``güncelleme sorunu`` was
    (QA round 149-G F1). A name the lexicon does not list stays a name (``Müller party invitation`` is English).
    A word with a capital ``I`` is looked up with it read as ``ı`` and as ``i`` too (:func:`_opening_readings`:
    ``Isıtma``, ``Ilık``, ``Işık`` were left out, and ``Isıtma sorunu`` found nothing; QA round 150-A F1).
    A reading is listed where the lexicon has as a Turkish word it, its Turkish analysis
    (:func:`dreamdb.analyzer.stem`, as :func:`_common_openings` reads an opening word and :func:`dotted_words` a
    reading), or a beginning of it no shorter than that analysis, its last consonant devoiced or not (the roots
    :func:`translated_terms` tries, as :func:`_shorter_root_translations` bounds them): a word with a suffix,
    ``Işığı`` (*ışık*), ``Ekranı`` (*ekran*), ``Güncellemeyi`` (*güncelleme*), is no name either (QA round 150-H F3:
    looked up as written alone, it was read as one, and ``Işığı kapat``, whose other word has no Turkish letter,
    found nothing, while ``ışığı kapat`` was translated and found the notes on *light*). A shorter root, a vowel
    restored or the analysis among the stems of the lexicon's words would make names words: ``Gülşen`` (*gülüş*),
    ``Şükrü`` (*şükür*), ``Işıl``. ``text``, ``words``, ``written``: as for :func:`_common_openings`. One lexicon
    lookup (at most one SQL statement) a word, only for a query that reads as Turkish by no other of its words.

    Measured (7 Dec, BM25, ``python -m eval --set xquad --set dreamcontext --modes bm25`` and ``--set scifact --set
    eips``), with :func:`_own_words` counting :func:`_common_openings`' words too: XQuAD sentences tr→en nDCG@10
    0.646 → 0.647 (one question's sentence from below the tenth to first), the lists of 4 of 1,190 questions changed
    in three tracks, no gold rank worse; every other track, the gold set, SciFact and EIPs unchanged. With the roots
    (150-H F3; 7 Dec, ``--set xquad --set dreamcontext --modes bm25``): 7 of 13,150 per-question top 10s changed, three
    Turkish questions over English paragraphs and sentences that found two, three or no sentences and now find ten:
    paragraphs tr→mixed nDCG@10 0.8680 → 0.8685 (one gold from third to first), sentences tr→en 0.6472 → 0.6474 (one
    from below the tenth to seventh), no gold rank worse; the gold set and every other track unchanged."""
    from dreamdb.lexicon import TR_EN

    listed = set()
    for i, rs in _opening_readings(text, words, written).items():
        analyses = {r: stem(r, True) for r in rs}
        # (the reading, its analysis, and the beginnings of it no shorter than its analysis, the last letter
        # devoiced or not: a shorter one is another word, as _shorter_root_translations reads a word; no vowel
        # restored, Şükrü is no şükür's; not the analysis among the stems of the lexicon's words: Işıl's ışıl is one)
        keys = dict.fromkeys(k for r, t in analyses.items() for k in (
            *(f for f in _turkish_lookup_forms(r) if len(f) >= len(t) and r.startswith(f[:-1])), r, t))
        if lexicon.first_translations(TR_EN, list(keys)):
            listed.add(i)
    return frozenset(listed)


def _shouted_turkish(written: str) -> bool:
    """Whether ``written`` (a query after :func:`dreamdb.analyzer.normalize`) has a word written in capitals with a dotted capital ``İ`` (``KONSOLİDASYON
    NASIL``): only Turkish (and Azerbaijani) writes that letter, and lowercasing hides it (``İ`` → ``i``,
    and ``NASIL`` reads ``nasil``, not the stopword ``nasıl``). A name (``İzmir``) is not such a word."""
    return "\u0130" in written and any("\u0130" in w and w.isupper() for w in tokens(written))


_FILE_NAME_RE = LazyPattern(r"[^\s\"'`()<>\[\]{},;]*[^\W_]\.(?:[a-z][a-z0-9]{1,3}|[A-Z][A-Z0-9]{1,3})(?!\w)")
"""A file name with its extension of two to four lowercase (or capital) letters and digits, and the path before it
(``utils.py``, ``src/lib/README.MD``, ``archive.tar.gz``), or a host name (``github.com``): as the prompt hook reads an
extension (:data:`dreamdb.hook._FILE_EXTENSION`; ``sentence.Then`` is none). One that is a sentence run on at its
period is none either (:func:`run_on_sentence`: ``cache.then``)."""

@lru_cache(maxsize=1)
def _run_on_openers() -> frozenset[str]:
    """:data:`dreamdb.analyzer.STOPWORDS`, with the Turkish ones typed without their letters too (``cok``, ``icin``),
    less the file extensions Python knows (:func:`known_extensions`: ``so``, ``me``)."""
    return (STOPWORDS | frozenset(w.translate(TURKISH_TO_ASCII) for w in STOPWORDS)) - known_extensions()


@lru_cache(maxsize=1)
def known_extensions() -> frozenset[str]:
    """The file extensions of Python's :mod:`mimetypes` built-in tables (``py``, ``so``, ``bat``, ``bin``, ``zip``;
    without the dot, in lower case), read without the system's files (``/etc/mime.types``, the Windows registry,
    which ``mimetypes.init`` adds and differ from machine to machine): the same on every machine for a Python
    version; later versions add some (3.14: ``md``, ``yaml``, ``toml``, ``deb``), none of them a stopword."""
    import mimetypes

    tables = (getattr(mimetypes, "_types_map_default", None) or mimetypes.types_map,
              getattr(mimetypes, "_common_types_default", None) or mimetypes.common_types)
    return frozenset(e[1:].lower() for t in tables for e in t)


def run_on_sentence(name: str) -> bool:
    """Whether ``name`` (a match of :data:`_FILE_NAME_RE`, as written: ``word.ext``) is two words of a sentence run
    on at its period, written without the space after it ("fix the cache.then restart", "önbellek
    temizlenmiyor.ama neden", "kod çöktü.bu hata", "YOLLAR.BU"), not a file or host name. It is when it has one dot
    and no path (a ``/`` or ``\\``: ``src/utils.py`` and ``archive.tar.gz``, ``www.example.de`` are names, whatever
    their last part) and the word after its dot, in lowercase (a sentence typed in capitals has its first word so:
    ``YOLLAR.BU``), is a stopword of either language (:data:`dreamdb.analyzer.STOPWORDS`, Turkish ones typed without
    their letters too): a sentence's first word often is one, an extension seldom (a host's country may be:
    ``example.de`` and ``example.it`` are read as words, as every name was before QA round 150-F F4). A stopword
    Python knows as a file extension (:func:`known_extensions`: ``so``, ``me``) is one: ``utils.so`` is a name (QA
    round 151-A F2: read as a sentence, "rename foo in utils.so" translated ``utils`` by its stem, ``hayır``, and
    brought a Turkish diagram note at BM25 0). Extensions no such table lists (``Makefile.in``, ``a.out``) and
    countries' hosts stay read as a sentence's words.

    Not a word a lexicon lists: it lists ``md``, ``log``, ``go``, ``zip``, ``org``, ``dev``, ``bin``, ``git``, ``bat``,
    ``bak``, ``mat`` and ``cs``, the extensions of ``README.md``, ``main.go``, ``başlat.bat``, ``yedek_şema.bak``,
    also after a word written with a Turkish letter (QA round 150-J F1: read so, ``başlat.bat çalışmıyor`` translated
    ``bat`` as *generation*, and the prompt hook counted ``çıktı.bin``'s ``bin``, matched in a note's ``/usr/bin``
    lines, toward its gate); a verb's root after the dot (``kayıt.ol``) stays a name's part. (QA round 150-H F2:
    every ``word.xx`` to ``word.xxxx`` was read as a file name, and "önbellek temizlenmiyor.ama neden" no longer
    translated ``temizlenmiyor``, which "önbellek temizlenmiyor. ama neden" did.)"""
    if "/" in name or "\\" in name or name.count(".") != 1:
        return False
    return name.split(".")[1].lower() in _run_on_openers()


def name_words(written: str) -> frozenset[str]:
    """The words of ``written`` (a query as written, after :func:`dreamdb.analyzer.normalize`; folded as
    :func:`plan_query` folds them) that it writes only in file names and their paths (:data:`_FILE_NAME_RE`:
    ``utils`` and ``py`` of "rename foo in utils.py"), not also as words of its own ("the utils of a.py" keeps
    ``utils`` a word). Such a word is a name's part, no word of the language: :func:`plan_query` does not translate
    it. (QA round 150-F F4: ``utils`` of ``utils.py``, no dictionary word, was looked up by its stem ``util``, the
    stem of *utile*, and became the Turkish ``hayırlı``, "charitable", whose stem ``hayır``, "no", a Turkish diagram
    note held: the English prompt's first hit, at raw score 0.) A sentence run on at its period is no name
    (:func:`run_on_sentence`: "fix the cache.then restart" gives none)."""
    if "." not in written:
        return frozenset()
    found = [m.group() for m in _FILE_NAME_RE().finditer(written) if not run_on_sentence(m.group())]
    if not found:
        return frozenset()

    def words(text: str) -> set[str]:
        return set(tokens(lower(dotless_capitals(text)), data_dropped=True))

    rest = _FILE_NAME_RE().sub(lambda m: m.group() if run_on_sentence(m.group()) else " ", written)
    return frozenset(words(" ".join(found)) - words(rest))


MAX_SPELLED_WORDS = 16
"""Query words tried in their Turkish spellings (up to 63 each; a word with Turkish letters, in its one ASCII
spelling, :func:`ascii_term`) or as loanwords (up to 32 English
spellings of a few roots each, ≈ 0.03 ms a word with the C kernel, 0.1 ms without), or, in a query that matched
nothing, for a spelling correction (:func:`spelling_corrections`: 54n + 25 spellings of n letters each, stemmed and
looked up): a question has a handful of unknown words; a pasted text of hundreds would cost seconds."""


RESOLVED_WORDS_MAX = 100_000
"""Outcomes kept in a vocabulary's ``resolved_words`` before it starts afresh: about 140 bytes each of Python objects
by ``tracemalloc`` (a key of the word and its settings, the outcome), so some 14 MB at the bound, and about twice
that of a long-lived process's resident memory (QA round 147-E F4: it was said to be a few MB)."""


ANY, TURKISH, OTHER = 0, 1, 2
"""Where a query word's replacement must occur (:func:`_resolve`): in any text, in a document analysed
as Turkish, in one that is not."""


LOANWORD_SUFFIX_LETTERS = 2
"""Letters cut off, one at a time, a word the Turkish stemmer leaves whole (:func:`loanword_terms`):
a possessive or case ending after a loanword (``performans-ı``, ``sistem-de``), which Snowball
Turkish does not strip when the word's vowels break vowel harmony, as loanwords' do."""


_PLURAL_ENDING = re.compile("(?:lar|ler)(?:ı|i|ın|in|a|e|da|de|dan|den|la|le)?$")
"""The Turkish plural and a case or possessive ending after it (``-lar``, ``-ları``, ``-lerden``; Göksel & Kerslake
2005, ch. 8 and 14), which a loanword often takes against vowel harmony, as it is said (``serverlar``,
``pipelinelar``): Snowball Turkish then strips nothing, and a word without a vowel before it (``smsler``) has no
stem to strip to. Measured (4 Dec, BM25 nDCG@10, ``python -m eval --set xquad --set dreamcontext --modes bm25``,
per-question rows against the code before): one question changed, sentences tr→en 0.645 → 0.646
(``Fransızların`` reached the paragraphs on the French); every other track and the gold set unchanged. Such a word
alone, read as English, is Turkish-looking (:func:`turkish_looking`), and the root Snowball leaves is tried as
written (:func:`loanword_terms`; QA round 76 F6), same command: paragraphs tr→en 0.815 → 0.816 and sentences
tr→en +0.0003 (``Gurular kimleri kontrol eder?``: ``gurular`` → *guru*), nothing else moved."""


def loanword_terms(term: str, word: str, heads=None, spellings=loanword_spellings) -> tuple[str, ...]:
    """English terms a query word may stand for as a Turkish loanword (``konsolidasyonu`` →
    ``consolidation``), in order; may be empty.

    The Turkish stemmer may cut a loanword short (``sistemi`` → ``sist``: ``-em`` reads as a
    possessive), so the roots tried are the word's own term, then the word cut after each letter from
    its own end back to where its Turkish stem departs from it, longest first (``sistemi``,
    ``sistem``, ``siste``, ``sist``; ``stadyumda``, whose stem is ``stadi``: down to ``stad``);
    each root's :func:`dreamdb.cognates.english_spellings` are analysed as English. Terms shorter
    than :data:`dreamdb.cognates.HEAD_LETTERS` letters are left out: from a root of at least five
    letters, a three-letter English word is a false friend (and ``heads`` relies on it).

    Args:
        term: the word's term (its analysis as the query read it).
        word: the word, lowercase.
        heads: optional, :func:`dreamdb.cognates.term_heads` of the terms the result will be
            looked up among (a vocabulary's ``loanword_heads``). Spellings that begin none of them
            are not analysed (most of them): the terms returned that are among those looked up
            are the same, in the same order.
        spellings: the function that spells roots out, :func:`dreamdb.cognates.loanword_spellings`
            or its C twin ``dreamdb.ranking._kernel.loanword_spellings`` (the same list, faster).
    """
    base = stem(word, True)
    cut = next((i for i, (a, b) in enumerate(zip(base, word)) if a != b), min(len(base), len(word)))
    if cut == len(word):  # left whole: Snowball strips no suffix across a loanword's mixed vowels (performansı)
        cut -= LOANWORD_SUFFIX_LETTERS
    # ... nor a plural against harmony (serverlar, pipelinelardan: -dan stripped, -lar kept), nor one after no vowel
    # (smsler); a plural Snowball strips (kitaplar) is left to it
    plural = _plural_root(base)
    roots = dict.fromkeys([term, *(word[:n] for n in range(len(word), cut - 1, -1)), *((plural,) if plural else ())])
    spelled = spellings(tuple(roots), heads)
    # (spellings are ASCII letters only, whose English analysis, stem(s, False), is english_stem(s))
    found = tuple(t for t in dict.fromkeys(map(english_stem, spelled)) if t != term and len(t) >= HEAD_LETTERS)
    if 3 <= len(base) and base != word and base.isascii() and base != term and english_stem(base) != english_stem(word):
        # the root Snowball leaves of a word with a Turkish suffix and no apostrophe, as written: a short one
        # (loglar, apiler; QA round 72 F2: loglar found nothing, logları the note), or one of a query read as
        # English, whose term is the whole word (containerlardan alone: QA round 76 F6)
        found = tuple(dict.fromkeys((english_stem(base), *found)))
    if plural is not None and plural.isascii() and english_stem(plural) != term:
        # the root as written: an English word with a Turkish plural (serverlar, smsler), not a respelling of one;
        # then its other analyses (SMS, an acronym's plural, is the term sm: QA round 77 G1)
        others = (a for a, _turkish in alternate_terms(plural, False, False))
        found = tuple(t for t in dict.fromkeys((english_stem(plural), *others, *found)) if t != term)
    return found


TRANSLATION_MIN_LETTERS = 4
"""Shortest beginning of a Turkish word looked up in the lexicon (:func:`translated_terms`)."""

TRANSLATION_MAX_LETTERS = 48
"""Longest beginning of a Turkish word looked up in the lexicon: longer than any word of it (KeNet's
longest has 20 letters) and than the longest Turkish word usually cited (43 letters). Without a bound,
a 10,000-letter token was looked up by 10,000 beginnings (1.7 s, 98 MB; QA round 35)."""

_HARDENED = {"b": "p", "c": "ç", "d": "t", "g": "k", "ğ": "k"}
"""Turkish final devoicing read backwards: a stem ending in a voiced consonant before a suffix's vowel
is written with its voiceless twin on its own (``borcu`` → *borç*, ``kitabı`` → *kitap*,
``ırmağı`` → *ırmak*)."""


_TURKISH_VOWELS = frozenset("aeıioöuü")

_DROPPED_VOWEL = {"a": "ı", "ı": "ı", "e": "i", "i": "i", "o": "u", "u": "u", "ö": "ü", "ü": "ü"}
"""Turkish vowel elision read backwards: some nouns lose the high vowel of their last syllable before a
suffix's vowel (``beyin`` → ``beyni``, ``şehir`` → ``şehri``, ``oğul`` → ``oğlu``, ``kayıt`` → ``kaydı``);
the vowel restored between a beginning's last two consonants follows two-way vowel harmony with the
vowel before them (Göksel & Kerslake, *Turkish: A Comprehensive Grammar*, Routledge 2005, on stems that
lose a vowel). Keyed by that vowel."""


_VERB_ENDING_RE = LazyPattern(VERB_INFLECTIONS)
"""The inflections of a Turkish verb :func:`verb_infinitives` reads off a word's end
(:data:`dreamdb.analyzer.VERB_INFLECTIONS`). Snowball's Turkish stemmer reads nouns only."""

_VERB_ENDING_AT_RE = LazyPattern(rf"(?=(?:{VERB_INFLECTIONS})\Z)")
"""Where :data:`_VERB_ENDING_RE` matches the rest of a word: one scan finds every such place (``finditer``), where
a loop fullmatched each rest in turn (a third of a new Turkish query word's lookup forms, :func:`_turkish_lookup_forms`)."""

_BACK_VOWELS = frozenset("aıou")

_NOMINAL_SUFFIXES_RE = LazyPattern(NOMINAL_SUFFIXES)


INFLECTION_MAX_LETTERS = 32
"""Longest run of inflections :func:`_turkish_lookup_forms` reads off a Turkish word (a verb's, :data:`_VERB_ENDING_RE`,
at most 11 letters; a noun's, with ``-ki``, a case and a copula, or a privative's, about 30). A longer word than
:data:`TRANSLATION_MAX_LETTERS` and this can be no lexicon word with its inflections: it is looked up by its
beginnings alone (QA round 75 F1: a 300,000-letter query word took 3.4 s in the verb readings, whose loop copied
the word's rest for each of its letters; one of 10 million never finished)."""


def verb_infinitives(word: str) -> list[str]:
    """The infinitives (``-mak``/``-mek``, by vowel harmony: the dictionary form of a Turkish verb) of the roots a
    word may be a verb of, longest root first: each beginning of two letters or more followed by an inflection of
    :data:`_VERB_ENDING_RE`, and, for a root ending in ``d`` or ``ğ`` before a vowel, the root with the voiceless
    consonant it is written with on its own (``gidiyor`` → *gitmek*). ``yazdık`` (we wrote) → ``yazmak``;
    ``okuduk`` (we read) → ``okumak``; ``gitmeliyiz`` (we must go) → ``gitmek``; ``geçen`` → ``geçmek``.

    The lexicon lists verbs by their infinitive, so a verb form reached only a noun that begins like it: ``yazdık``
    was *lettering* (of ``yazı``), ``okuduk`` *teach* (of ``okut``, to make read), ``gitmeliyiz`` *passage* (of
    ``gitme``, the going), and ``geçen`` (last, passing) *corner* (of ``geçe``; QA rounds 51 and 52).
    :func:`_turkish_lookup_forms` tries these right after the word itself unless a noun with a longer root explains
    the whole word (``kaydı``: *kayıt*); a root whose infinitive the lexicon does not have is no verb."""
    out = []
    if len(word) > TRANSLATION_MAX_LETTERS + INFLECTION_MAX_LETTERS:
        return out
    # (each n from the end back to 2 where word[n:] is an inflection: _VERB_ENDING_RE, which matches no empty rest)
    for n in reversed([m.start() for m in _VERB_ENDING_AT_RE().finditer(word, 2)]):
        root, rest = word[:n], word[n:]
        vowel = next((c for c in reversed(root) if c in _TURKISH_VOWELS), None)
        if vowel is None:
            continue
        ending = "mak" if vowel in _BACK_VOWELS else "mek"
        if root[-1] in "dğ" and rest[0] in _TURKISH_VOWELS:
            out.append(root[:-1] + _HARDENED[root[-1]] + ending)
        out.append(root + ending)
        if rest[1:4] == "yor" and root[-1] not in _TURKISH_VOWELS:
            # a root's final a or e narrows before -yor (güncelle → güncelliyor, hesapla → hesaplıyor: QA round 52)
            out.append(root + ending[1] + ending)
    return list(dict.fromkeys(out))


_PERSON_ENDING = r"(?:[ıiuü]m|s[ıiuü]n|[ıiuü]z|s[ıiuü]n[ıiuü]z|l[ae]r)?"
_VOICE_RE = LazyPattern(
    # the passive: -n after a vowel, -In after l, -Il after another consonant (Göksel & Kerslake 2005, ch. 8)
    r"(?=(?P<passive>(?<=[aeıioöuü])n|(?<=l)[ıiuü]n|(?<![aeıioöuül])[ıiuü]l)?"
    rf"(?:(?P<narrowed>m[ıiuü])yor{_PERSON_ENDING}"  # the negation's -mI- before -yor: silinmiyor
    r"|(?P<negation>m[ae])?"  # the negation -mA
    rf"(?:(?(negation)z{_PERSON_ENDING}|(?!))"  # the negative aorist -mAz: silmez
    rf"|(?(negation)(?!)|(?(passive)[ıiuü]r{_PERSON_ENDING}|(?!)))"  # the aorist -Ir after the passive: yapılır
    r"|(?(negation)|(?(passive)|(?!)))"  # (a passive or a negation before any of these:)
    rf"(?:{VERB_INFLECTIONS}"
    r"|y?[ıiuü]nc[ae]"  # the converb -(y)IncA: yapılınca
    r"|m[ae]k(?:t[ae]n?|l[ae])?"  # the infinitive, with its cases: silinmek, yapılmakta
    # the verbal noun -mA and the participle -DIk, inflected as nouns: silinmesi, yapılmadan, silindiği, yapıldıktan
    rf"|(?:m[ae]|[dt][ıiuü][kğ]){NOMINAL_SUFFIXES})))\Z)")
"""Where a Turkish verb's root may end before a passive or a negation and a verb's ending (:func:`voice_infinitives`):
a zero-width match at each such place (``finditer``), the passive and the negation ``-mA`` in named groups. The endings
are :data:`dreamdb.analyzer.VERB_INFLECTIONS`, the converb ``-(y)IncA``, the aorist and the verbal nouns ``-mAk``,
``-mA`` and ``-DIk`` with a noun's inflections (Göksel & Kerslake 2005, ch. 8): after a passive or a negation a
word is a verb's, so the aorist and the verbal nouns, which :func:`verb_infinitives` leaves alone (``yazar``,
author, is ``yaz`` + ``-Ar``; ``silme``, wiping, is a noun of its own), are read too."""


_AUXILIARY_ROOTS = frozenset(("et", "ed", "ol", "kıl", "kil", "eyle"))
"""The roots of Turkish's auxiliary verbs (*yardımcı fiiller*), *etmek*, *olmak*, *kılmak* and *eylemek* (``ed``
before a vowel; ``kil`` typed without its letters), which make a verb of the noun before them (*inşa etmek*, to
build): :func:`voice_infinitives` does not read their passive or negation, as in ``inşa edildi`` (was built) the
topic is the noun's (``edildi`` read as *etmek* was *perform*, *execute*, *buy*)."""

_NO_VERB_STEMS = TURKISH_STOPWORDS | ASCII_TYPED_TURKISH_STOPWORDS
"""Stems with their passive that :func:`voice_infinitives` reads as no verb's, the stopwords: ``değil`` + ``-di``,
"was not", is no passive of *değmek*, to touch."""


def voice_infinitives(word: str) -> list[tuple[int, list[str]]]:
    """The infinitives a Turkish verb form reaches past its passive and its negation, which the lexicon does not
    list: ``silmemek`` (not to erase) → *silmek*, ``silinmesi`` (its being erased) → *silmek*, ``yapılmadı`` (it was
    not done) → *yapmak*, ``silinmiyor`` (it is not erased) → *silmek*. One ``(letters, infinitives)``
    for each place a root may end before a passive or a negation and a verb's ending (:data:`_VOICE_RE`), longest
    root first: ``letters``, those of the root with its passive and negation (``silin`` of ``silinmesi``), and the
    infinitives of that stem, of the root with its passive, and of the root alone (with a final ``d`` or ``ğ``
    before the passive's vowel devoiced first, as :func:`verb_infinitives` reads one: ``gidildi`` → *gitmek*),
    longest first: a lexicon verb of the longer stem (*bulunmak*, to be located, of ``bulunan``; *alınmak*, to take
    offence) is found before the root's. A word with neither (``silme``, ``kalem``), or with nothing after them
    (``gelin``, bride), has none. For retrieval the negation is dropped with the passive: a note on erasing files
    answers a question about not erasing them, as its words, not their polarity, are what BM25 matches."""
    out = []
    if len(word) > TRANSLATION_MAX_LETTERS + INFLECTION_MAX_LETTERS:
        return out
    for m in reversed(list(_VOICE_RE().finditer(word, 2))):
        n = m.start()
        root, passive = word[:n], m.group("passive") or ""
        if _TURKISH_VOWELS.isdisjoint(root) or root + passive in _NO_VERB_STEMS or root in _AUXILIARY_ROOTS:
            continue
        stems = []
        if m.group("negation"):
            stems.append(word[:m.end("negation")])
        if passive:
            stems.append(root + passive)
        if root[-1] in "dğ" and passive and passive[0] in _TURKISH_VOWELS:
            stems.append(root[:-1] + _HARDENED[root[-1]])
        stems.append(root)
        infinitives = []
        for s in stems:
            vowel = next(c for c in reversed(s) if c in _TURKISH_VOWELS)
            infinitives.append(s + ("mak" if vowel in _BACK_VOWELS else "mek"))
        voiced = max(m.end("negation"), m.end("narrowed"), n + len(passive))  # (-1 for a group not there)
        out.append((voiced, list(dict.fromkeys(infinitives))))
    return out


_TYPED_PLAIN = frozenset("cgiosu")
"""The letters Turkish typed without its letters puts for ç ğ ı ö ş ü."""

_PRIVATIVE_RE = PRIVATIVE_RE  # (dreamdb.analyzer's: its stemmer keeps the suffix too)

_PRIVATIVE_AT_RE = LazyPattern(rf"(?=(?:{PRIVATIVE_RE.pattern})\Z)")
"""The first place where :data:`_PRIVATIVE_RE` matches the rest of a word, in one scan (``search``)."""


@lru_cache(maxsize=4096)
def _turkish_lookup_forms(word: str) -> tuple[str, ...]:
    """The beginnings of a Turkish word looked up in the lexicon, longest first (see :func:`translated_terms`):
    each beginning followed by more of the word with its last consonant devoiced (:data:`_HARDENED`), then as
    written, then, where it ends in two consonants before a vowel, with the vowel they may have lost
    (:data:`_DROPPED_VOWEL`; in plain letters for a word typed without Turkish letters), devoiced then as
    it is. No beginning shorter than a privative ``-sIz`` (:data:`_PRIVATIVE_RE`) and the suffix: ``başarısız``
    (unsuccessful) was read as *success*, the translation of its root ``başarı`` (QA round 55). Kept per process
    for the last 4,096 words (a pure function of the word; three stages of a query ask for
    it: measured on 400 XQuAD tr→en questions, recall p50 1.77 → 1.53 ms in process). A verb's infinitives
    (:func:`verb_infinitives`) come right after the word itself unless a noun with a longer root explains it, else
    last; those reached past a passive or a negation (:func:`voice_infinitives`) before the beginnings no longer than
    the root with them (``silinmesi``: *silmek* before ``silin``, which the lexicon has as *şilin*, shilling)."""
    forms = []
    plain = word.isascii()
    inflected = len(word) <= TRANSLATION_MAX_LETTERS + INFLECTION_MAX_LETTERS  # (else beginnings only)
    # (not shorter than a privative -sIz and what it takes with it: başarısız is not başarı's, QA round 55)
    # (the first n ≥ 2 where word[n:] is one; the suffix has 3 letters, so n ≤ len(word) - 3)
    privative = (m.start() + 3 if (m := _PRIVATIVE_AT_RE().search(word, 2)) else 0) if inflected else 0
    # (of at most TRANSLATION_MAX_LETTERS letters; from one under the minimum: a vowel restored lengthens it)
    for n in range(min(len(word), TRANSLATION_MAX_LETTERS), max(TRANSLATION_MIN_LETTERS - 2, privative - 1), -1):
        head = word[:n]
        if n == len(word):
            forms.append(head)
            continue
        if head[-1] in _HARDENED:
            forms.append(head[:-1] + _HARDENED[head[-1]])
        forms.append(head)
        if word[n] in _TURKISH_VOWELS and head[-2] not in _TURKISH_VOWELS and head[-1] not in _TURKISH_VOWELS:
            before = next((c for c in reversed(head[:-2]) if c in _TURKISH_VOWELS), None)
            vowel = _DROPPED_VOWEL.get(before)
            if vowel is not None:
                restored = head[:-1] + (vowel.translate(TURKISH_TO_ASCII) if plain else vowel) + head[-1]
                if restored[-1] in _HARDENED:
                    forms.append(restored[:-1] + _HARDENED[restored[-1]])
                forms.append(restored)
    # (and a shorter word itself typed without Turkish letters, which the lexicon's stems, in Turkish letters, cannot
    # reach: hiz, for hız, was never looked up, QA round 72; a short word in Turkish letters is reached by its stem)
    short = plain and len(word) < TRANSLATION_MIN_LETTERS and not _TYPED_PLAIN.isdisjoint(word)
    forms = [f for f in dict.fromkeys(forms) if len(f) >= TRANSLATION_MIN_LETTERS or (short and f == word)]
    verbs = verb_infinitives(word)
    voiced_at: dict[int, list[str]] = {}
    for voiced, infinitives in voice_infinitives(word) if inflected else ():
        # a verb's root past its passive or negation (silinmesi: silmek, not silin, "shilling"; yapmadı: yapmak, not
        # yapma, "fake"), after the beginnings longer than the root with them, which a noun may explain (kalemi),
        # and, of the word's other verb readings, after those of a root as long or longer
        at = next((i for i in range(1, len(forms)) if len(forms[i]) <= voiced), len(forms))
        voiced_at.setdefault(at, []).extend((*(v for v in verbs if len(v) - 3 >= voiced), *infinitives))
    for at in sorted(voiced_at, reverse=True):
        forms[at:at] = voiced_at[at]
    if verbs:
        # a verb's inflected form (yazdık, okuduk) is read as the verb, its infinitive, unless a noun that explains
        # the whole word, its root longer, is there (kaydı: kayıt's, "record", not kaymak's, "slid")
        # (not a vowel's bare -n, "your": in written Turkish far rarer than the participle -(y)An, geçen, kalan)
        noun = next((n for n in range(len(word) - 1, 1, -1)
                     if word[n:] != "n" and _NOMINAL_SUFFIXES_RE().fullmatch(word[n:])), 0)
        verb = len(verbs[0]) - 3  # (its root's letters)
        forms = forms[:1] + verbs + forms[1:] if verb >= noun else forms + verbs
    return tuple(dict.fromkeys(forms))


def _shorter_root_translations(term: str, word: str, lexicon) -> list[tuple[str, ...]]:
    """The terms of the translations of each root of a Turkish word after the first that has any (see
    :func:`translated_terms`), longest first: ``öncelikler`` is first *öncelikle* (primarily), then
    *öncelik* (priority). :func:`_resolve` tries them in turn while no note holds the ones before.

    Only roots at least as long as the word's stem ``term`` (what Snowball Turkish leaves of it once its
    inflection is stripped): a shorter one cuts a derivational suffix or the word itself, and is another
    word (QA rounds 48 and 50: ``istanbul`` and ``istanbulda``, whose translations *istanbul* and
    *constantinople* no note held, became *heat* through ``ısıt``; ``ankaraya`` became *ready*; and
    ``güvenliği``, *security*, no longer becomes *safe* through ``güvenli``). ``öncelikler`` still
    reaches ``öncelik``, its stem, past ``öncelikle``, a longer beginning."""
    from dreamdb.lexicon import TR_EN

    ascii = word.isascii()
    looked_up = ((form, lexicon.translated_terms(TR_EN, [form], ascii=ascii))
                 for form in _turkish_lookup_forms(word) if len(form) >= len(term))
    found = [f for _form, f in looked_up if f]
    return [kept for f in found[1:] if (kept := tuple(a for a in f if a != term))]


def lookup_keys(term: str, word: str, from_turkish: bool) -> tuple[list[str], tuple[str, ...], bool]:
    """``(words, stems, ascii)`` a query word is looked up by, in order (see :func:`translated_terms`)."""
    if from_turkish:
        return _turkish_lookup_forms(word), (term,), word.isascii()
    return [word], (term,), False


def _prefetch(lexicon, pairs: list[tuple[str, str]], from_turkish: bool) -> None:
    """Look the ``(term, word)`` pairs up in the lexicon in one statement
    (:meth:`dreamdb.lexicon.Lexicon.prefetch`), so that their :func:`translated_terms` find them cached."""
    if lexicon.in_memory:
        return
    from dreamdb.lexicon import EN_TR, TR_EN

    pairs = [(t, w) for t, w in pairs if (t, w, from_turkish) not in lexicon.memo]
    if len(pairs) > 1 and lexicon.analysed:
        forms = [lookup_keys(t, w, from_turkish) for t, w in pairs]
        lexicon.prefetch(TR_EN if from_turkish else EN_TR, [k for f in forms for k in f[0]],
                         [k for f in forms for k in f[1]], ascii=any(f[2] for f in forms))


def _word_translations(term: str, word: str, lexicon, from_turkish: bool, capital_i: bool) -> tuple[str, ...]:
    """:func:`translated_terms`; for a Turkish word of a query with a capital ``I`` (which may stand for
    dotless ``ı``: ``TAŞKINI``, lowercased ``taşkini``), then of the word with its ``i`` read as ``ı``."""
    found = translated_terms(term, word, lexicon, from_turkish)
    if found or not (from_turkish and capital_i and "i" in word):
        return found
    dotless = word.replace("i", "ı")
    return translated_terms(stem(dotless, True), dotless, lexicon, True)


def translated_terms(term: str, word: str, lexicon, from_turkish: bool) -> tuple[str, ...]:
    """The terms of a query word's translations (``uykusu`` → ``sleep``, ``slumber``, ``nap``), most
    common sense first; may be empty.

    A Turkish word is a root and suffixes, so its root is the longest beginning of it (of at least
    :data:`TRANSLATION_MIN_LETTERS` letters) that the lexicon has as a word, each beginning tried
    first with its last consonant devoiced (:data:`_HARDENED`): ``uykusu`` → *uyku* (not
    *uykusuz*, "sleepless", whose stem is also ``uykus``), ``güvenliği`` → *güvenlik* (before
    *güvenli*), ``borcu`` → *borç*, and then, where it ends in two consonants before a vowel, with the
    vowel a noun may drop there restored (:data:`_DROPPED_VOWEL`: ``beynini`` → *beyin*, ``kaydı`` →
    *kayıt*), a verb's form by its infinitive (:func:`verb_infinitives`), past its passive or negation too
    (:func:`voice_infinitives`: ``silmemek`` → *silmek*; :func:`_resolve` tries the shorter roots' translations when
    no note holds these,
    :func:`_shorter_root_translations`); each beginning of a word typed in plain letters is also read as
    Turkish typed without its letters (``guvenligi`` → *güvenlik*); failing that, its term is looked
    up among the stems of the lexicon's words. An English word is looked up as written, then by its
    term (``cities`` → ``citi``, the stem of *city*). Translations are analysed in their language;
    stopwords and the word's own term are left out.

    Args:
        term: the word's term (its analysis as the query read it).
        word: the word, lowercase.
        lexicon: :class:`dreamdb.lexicon.Lexicon` (its ``memo`` keeps each word's outcome).
        from_turkish: translate Turkish → English (else English → Turkish).
    """
    memo = lexicon.memo
    key = (term, word, from_turkish)
    terms = memo.get(key)
    if terms is None:
        from dreamdb.lexicon import EN_TR, TR_EN  # (here: a word met before costs a dict access, not an import)

        words, stems, ascii = lookup_keys(term, word, from_turkish)
        found = lexicon.translated_terms(TR_EN if from_turkish else EN_TR, words, stems, ascii=ascii)
        # (the word's own term left out; most words' translations do not hold it, and are kept as they are)
        terms = tuple(t for t in found if t != term) if term in found else tuple(found)
        if len(memo) >= RESOLVED_WORDS_MAX:
            memo.clear()
        memo[key] = terms
    return terms


def english_reading(terms, lexicon, vocabulary) -> set[str]:
    """Of ``terms`` (the terms of an English word's Turkish translations, :func:`translated_terms`), those an English
    note would match as an English word: the lexicon has the term, as written, as an English word, and a note not
    analysed as Turkish holds it. Empty without a lexicon or ``terms``.

    The index keeps one term whatever the language of the note holding it, so a Turkish translation spelled as an
    English word (*roll* → ``top``, ball; *share* → ``pay``; *process* → *proses*, the term ``prose``) counts, with an
    English query's word, that English word in every English note writing it (*top-level*, *pay*, *prose*): notes on
    something else rather than the Turkish notes on the word (QA round 153-G F4: *roll out* found notes on *top-level*
    at raw score 0, and its rollout note in none of the first 40). The counterpart of :func:`english_word`, which keeps
    a Turkish query's English word from being translated as Turkish. A term no English note holds is only the Turkish
    word it is, and is kept (an index of Turkish notes alone drops none). Used where an English word's translations
    are chosen: :func:`translation_synonyms` (a class member) and :func:`_resolve` (a replacement). Only a term the
    lexicon has as written is known: a Turkish term equal to the English stem of another word (``veri``, the stem of
    the stopword *very*) is no English word a note writes, and an inflection the lexicon does not list (*data* →
    ``done``) is not known. Measured (7 Dec, BM25, ``python -m eval``): XQuAD paragraphs en→mixed nDCG@10 0.8684 →
    0.8694 (6 questions' answers higher, 5 lower); every other XQuAD track, the gold set's scores, SciFact and the EIPs
    unchanged."""
    if lexicon is None or not terms:
        return set()
    from dreamdb.lexicon import EN_TR

    english = {c for c in terms if lexicon.has(EN_TR, c)}
    return vocabulary.known(english, in_turkish=False) if english else set()


def _translates(turkish: bool, vocabulary, reads_turkish: bool) -> bool:
    """Whether a query's words are translated (with a lexicon): a Turkish question's (its own words
    Turkish, not only a name in it, as for loanwords: ``reads_turkish``, see :func:`plan_query`)
    where the index has notes not analysed as Turkish; a query analysed as English where it has
    Turkish notes."""
    return reads_turkish if turkish else vocabulary.has_turkish


def translation_synonyms(qwords: list[tuple[str, str, bool]], turkish: bool, terms: list[str],
                         vocabulary, lexicon, resolved: dict[str, str] | None = None) -> dict[str, str]:
    """``{query term: (synonym, its other forms)}``: for each query word a note has (of the first
    :data:`MAX_SPELLED_WORDS`), its translation (:func:`translated_terms`) that a note of the other language
    holds, as a synonym (BM25F at :data:`dreamdb.ranking.signals.SYNONYM_WEIGHT`; the raw score is unchanged),
    followed by that translation's other forms the notes hold (:func:`other_forms`); of several,
    the one the query's words go with (:func:`in_context`; the word itself is one of them: a note
    writing *sunucu* beside *server* tells which sense the notes use).

    In a vault of both languages a query word may be in a few notes of its own language while the
    note sought is in the other (``sunucu`` in one Turkish note, *server* in the English ones);
    the synonym lets both count, as a user's synonym table would (Pirkola, "The effects of query
    structure and dictionary setups in dictionary-based cross-language information retrieval",
    SIGIR 1998: translations as synonyms of one another). A vocabulary's ``resolved_words`` (the
    memory engine's, emptied when the index changes) keeps each word's outcome.

    ``resolved`` is :func:`_resolve`'s ``{term: replacement}``: a word that no note holds as the
    query analysed it is in ``terms`` as its replacement, and is translated all the same: one a note
    has under another analysis (``sunucusu``, whose own term ``sunucus`` no note has), and one
    replaced by a translation or a loanword, whose synonym is then another sense of it, when the
    query's words go with another (``güvenliği`` → *security*, and *safety* as a synonym): dictionary
    translations as synonyms of one another (Pirkola 1998). Measured (XQuAD, BM25 nDCG@10, quick run,
    2 Dec): leaving the translated words out of this stage lowers paragraphs tr→en 0.813 → 0.797
    and en→tr 0.744 → 0.732.
    """
    resolved = resolved or {}
    memo = getattr(vocabulary, "resolved_words", None)
    if memo is None:
        memo = {}
    keys: dict[str, tuple] = {}  # term → its memo key (a word's outcome depends on it, the lexicon and the index)
    for t, w, _cap in qwords:
        if resolved.get(t, t) in terms and t not in keys and len(keys) < MAX_SPELLED_WORDS:
            if turkish and english_word(w, lexicon):  # (no Turkish sense of an English word: "dollar kuru", QA 79 F11)
                continue
            keys[t] = ("synonym", t, w, turkish, lexicon.stamp)
    _prefetch(lexicon, [(t, k[2]) for t, k in keys.items() if k not in memo], turkish)
    candidates = {t: translated_terms(t, k[2], lexicon, turkish) for t, k in keys.items() if k not in memo}
    pool = {c for found in candidates.values() for c in found}
    there = vocabulary.known(pool, in_turkish=not turkish) if pool else set()
    if not turkish:  # (a Turkish term an English note holds as an English word: "top", "pay"; QA round 153-G F4)
        there -= english_reading(there, lexicon, vocabulary)
    held = {t: memo[k] for t, k in keys.items() if t not in candidates}  # term → its translations the notes hold
    for t, found in candidates.items():
        held[t] = tuple(c for c in found if c in there)
        if len(memo) >= RESOLVED_WORDS_MAX:
            memo.clear()
        memo[keys[t]] = held[t]
    outcome = in_context(held, set(terms), vocabulary)
    # (forms: of Turkish translations, those of a query analysed as English)
    return {resolved.get(t, t): (c, *(() if turkish else (f for f in other_forms(c, held[t]) if f not in terms)))
            for t in keys if (c := outcome[t]) is not None and c not in terms}


SIGNIFICANT_G2 = 3.841458820694124
"""G² from which an association is significant (p < 0.05), and the margin by which one sense's G² must
exceed another's to set it apart (:func:`in_context`): the 95th percentile of χ² with one degree of
freedom, G²'s asymptotic distribution on a 2×2 table (Dunning 1993)."""


def association(both: int, n_term: int, n_anchor: int, n_docs: int) -> float:
    """How strongly a term goes with the anchors across ``n_docs`` documents: Dunning's log-likelihood
    ratio G² of the 2×2 table (documents with the term or not × with an anchor or not) when they share
    more documents than chance gives (``both > n_term · n_anchor / n_docs``), else 0.0.

    G² weighs the evidence, not only its size: one shared document between a rare term and a rare anchor
    is little evidence, and a rare sense no longer wins on it (a ratio such as Ballesteros & Croft's
    ``em`` would pick it). Source: T. Dunning, "Accurate methods for the statistics of surprise and
    coincidence", Computational Linguistics 19(1), 1993.
    """
    if n_term <= 0 or n_anchor <= 0 or n_docs <= 0 or both * n_docs <= n_term * n_anchor:
        return 0.0
    # the cells (both, term alone, anchor alone, neither), each o · ln(o / expected) where o > 0, summed in that
    # order: the very floats of a loop over them, written out (a query scores some 30 senses, and the loop's
    # generator cost more than its arithmetic)
    log = math.log
    no_term, no_anchor = n_docs - n_term, n_docs - n_anchor
    parts = []
    if both > 0:
        parts.append(both * log(both * n_docs / (n_term * n_anchor)))
    if (o := n_term - both) > 0:
        parts.append(o * log(o * n_docs / (n_term * no_anchor)))
    if (o := n_anchor - both) > 0:
        parts.append(o * log(o * n_docs / (no_term * n_anchor)))
    if (o := n_docs - n_term - n_anchor + both) > 0:
        parts.append(o * log(o * n_docs / (no_term * no_anchor)))
    return 2.0 * sum(parts)


def in_context(held: dict[str, tuple[str, ...]], anchors: set[str], vocabulary) -> dict[str, str | None]:
    """``{term: translation}``: for each query term, of its translations the notes hold (``held[term]``, in
    the lexicon's order, commonest sense first), the one most associated (:func:`association`) in the
    index's documents with ``anchors``, the query's words as the notes hold them (its translations left
    out of them), or rather, when that association is significant (G² ≥ :data:`SIGNIFICANT_G2`), the
    first sense whose association is significant and less than :data:`SIGNIFICANT_G2` below it; ties
    (none associated, or a query with no such word) keep the lexicon's order; ``None`` for a term with
    none.

    A dictionary lists a word's senses, and its first is often not the one a note means (``sunucu``:
    *host* before *server*); the query's words tell which (``dashboard sunucusu nasıl``: *server* is
    the one written beside *dashboard*). This is the co-occurrence disambiguation of Ballesteros &
    Croft, "Resolving ambiguity for cross-language retrieval", SIGIR 1998, counted in the index itself,
    with Dunning's G² as the measure (their ``em`` ratio let one shared document pick a rare sense:
    gold set BM25 recall@5 88.3 with it, 91.7 with G², XQuAD unchanged; quick runs, 2 Dec).

    G² measures how sure the evidence is, not how strong the association: a common word shares more
    documents with anything, so it can outscore the sense meant while both are plainly associated
    (``borcu`` beside ``uyku``: *debt* G² 4.0, *post* 5.7, in 5 notes holding an anchor). Senses that
    the evidence supports and does not set clearly apart (G² within the same 3.84, a likelihood-ratio
    margin at p < 0.05) keep the lexicon's order; a sense far more associated than an earlier one
    still wins (``çalışıyor`` beside ``hafıza``: *work* G² 77.7 over *try* 26.8); the evidence alone
    decides among senses none of which it supports. Measured (2 Dec, BM25 nDCG@10, same-moment runs,
    against the strongest sense alone): gold set 0.784 → 0.791 (recall@1 68.3 → 70.0, recall@5
    91.7 → 93.3), hybrid unchanged; XQuAD within ±0.001 on every track. Variants measured and left:
    the first significant sense alone (gold 0.796, r@5 91.7, but *try* for ``çalışıyor`` and *host*
    beside *dashboard*); the lexicon's first sense when none is significant, or the first within 3.84
    of the best whatever its evidence (XQuAD paragraphs en→tr 0.754 → 0.742, tr→en 0.814 → 0.807).
    One count of the vocabulary (``cooccurrence``) serves every term of the query.
    """
    out = {t: (own[0] if own else None) for t, own in held.items()}
    ambiguous = {t: own for t, own in held.items() if len(own) > 1}
    candidates = {c for own in ambiguous.values() for c in own}
    # each term's anchors leave out its own translations; when no anchor is a translation of any of them
    # (the usual case), those are the same anchors for all, counted once
    groups = [(list(ambiguous), anchors)] if anchors.isdisjoint(candidates) else \
        [([t], anchors.difference(own)) for t, own in ambiguous.items()]
    for terms, their_anchors in groups:
        if not their_anchors:
            continue
        wanted = {c for t in terms for c in ambiguous[t]}
        n_docs, n_anchor, counts = vocabulary.cooccurrence(wanted, their_anchors)
        score = {c: association(*counts.get(c, (0, 0)), n_anchor, n_docs) for c in wanted}
        for t in terms:
            senses = ambiguous[t]
            best = max(senses, key=score.__getitem__)  # the first of the best: the lexicon's order breaks ties
            if score[best] >= SIGNIFICANT_G2:  # the first sense the evidence supports and does not set below the best
                floor = max(SIGNIFICANT_G2, score[best] - SIGNIFICANT_G2)
                best = next(c for c in senses if score[c] >= floor)
            out[t] = best
    return out


def _harmonic_spelling(hit, alts, found, kept: str | None) -> str | None:
    """Of a round of a word's Turkish spellings (:func:`_resolve`), the term to take: of those the notes hold,
    the first that breaks vowel harmony least (:func:`dreamdb.analyzer.harmony_breaks`), or ``kept``, one
    an earlier round found, when it breaks it no more.

    A round changes a fixed number of letters, and the notes may hold a spelling with fewer changes that is
    no Turkish word: a note writing ``Işık`` holds ``işık`` (its capital ``I`` folded as English folds it,
    beside ``ışık``), so ``isik`` stopped at ``işık`` two letters in and missed the notes writing ``ışık``
    (three; QA round 71). Turkish suffixes follow the root's vowels, so a word rarely breaks harmony more
    than its root does (A. Göksel and C. Kerslake, *Turkish: A Comprehensive Grammar*, §2.2); a spelling
    that breaks it is kept only until a later round finds one that breaks it less.

    Measured (4 Dec, BM25 nDCG@10, ``python -m eval --set xquad --set dreamcontext --modes bm25``): XQuAD
    paragraphs with Turkish questions typed without Turkish letters 0.946 → 0.947 (one question better, none
    worse); every other track and the gold set unchanged."""
    if hit is not None:
        hit = min((a for a, w in alts if a in found[w]), key=harmony_breaks)
    if kept is not None and (hit is None or harmony_breaks(kept) <= harmony_breaks(hit)):
        return kept
    return hit


def _resolve(text: str, qwords: list[tuple[str, str, bool]], turkish: bool, distinct: list[str],
             vocabulary, *, reads_turkish: bool = False, translates: bool = False,
             lexicon=None, names: frozenset[str] = frozenset(),
             letterless: bool = False) -> tuple[dict[str, str], list[str], dict[str, tuple[str, ...]]]:
    """``({term: replacement}, [terms replaced by a translation], {such a replacement: its other forms the
    notes hold})`` for the query terms in no document's text (see :func:`plan_query`; ``qwords``:
    :func:`dreamdb.analyzer.query_words` of the query; ``reads_turkish`` and ``translates``: as
    :func:`plan_query` found them; ``names``: the words written only in file names, :func:`name_words`, not
    translated; ``letterless``: the query, typed without Turkish letters, reads as Turkish by the lexicon, as
    :func:`plan_query` found by :func:`turkish_by_lexicon`; the forms: :func:`other_forms`).

    A word's replacement depends on the word, its case, the query's language, whether its Turkish
    spellings are tried, and the vocabulary alone: a vocabulary with a ``resolved_words`` dict (the
    memory engine's, emptied when the index changes) keeps each word's outcome, so a word met
    again is not spelled out again. A word translated into several terms the notes hold keeps them
    all as its outcome; which one replaces it depends on the rest of the query (:func:`in_context`).
    """
    found_as_is = vocabulary.known(distinct)
    wanted = set(distinct).difference(found_as_is)
    if not wanted:
        return {}, [], {}
    # Turkish spellings of ASCII words, first words first: for a query analysed as English only when
    # none of its words is in a non-Turkish note's text (in "cabin crew", "crew" says the query is
    # English, and "cabin" must not become "çap"; "yedekler sifrelenir" has no such word).
    # (a word an English note holds says so unless the query's words read as Turkish by the lexicon: "rakip analizi",
    # whose "analizi" one English note quotes, QA round 151-E F1)
    no_english_word = not turkish and (not vocabulary.known(found_as_is, in_turkish=False) or letterless)
    spell = vocabulary.has_turkish and (turkish or no_english_word)
    # A query whose function words say it is English ("the ansible") is not read as Turkish by the words of English
    # notes (loanwords, translations: "ansible" became "ansı", remember; QA round 83-A F2); its words' Turkish
    # spellings that a Turkish note holds still count ("where is the gunluk ozet": günlük, özet; QA round 84)
    no_english_word = no_english_word and not english_by_function_words(tokens(lower(text)))
    memo = getattr(vocabulary, "resolved_words", None)
    # Loanwords: a Turkish question may borrow words of English notes (see loanword_terms). Its own
    # words must read as Turkish, not only a name in it: "Müller party invitation" is English. A query
    # analysed as English, none of whose words is in a non-Turkish note, may be Turkish typed without
    # its letters ("taksiye binmek istiyorum"): its words that look Turkish are tried too
    # (turkish_looking: "taksiye", not "reading", which would become "ready").
    loanwords = vocabulary.has_non_turkish and (reads_turkish if turkish else no_english_word)
    # (the memory engine lists its English terms' first letters: most spellings begin none, and are not analysed)
    heads = getattr(vocabulary, "loanword_heads", None) if loanwords else None
    # the memory engine's C kernel spells roots out faster (a module built before it could is passed over)
    spellings = getattr(getattr(vocabulary, "kernel", None), "loanword_spellings", loanword_spellings)
    # Translations (with a lexicon): a Turkish question's words into English where the index has
    # English notes (as for loanwords), an English query's words into Turkish where it has Turkish ones.
    # (and a query analysed as English none of whose words is in a non-Turkish note may be Turkish typed
    # without its letters, "uyku borcu": its words are tried as Turkish too, into an English note)
    directions = ((turkish,) if translates else ()) + (
        (True,) if lexicon is not None and no_english_word and vocabulary.has_non_turkish else ())
    stamp = lexicon.stamp if directions else None
    # term → (folded word, capitalised, query analysed as Turkish, spelled out, read as a loanword,
    # translated (by the lexicon of this stamp))
    keys: dict[str, tuple] = {}
    for t, w, cap in qwords:
        if t in wanted and t not in keys:
            first = len(keys) < MAX_SPELLED_WORDS
            # (a word that the lexicon has as an English word and not as a Turkish one is not translated as Turkish,
            # nor, in a query read as English, read as Turkish typed without its letters: dollar is no plural of
            # dol, collar none of col, in "dollar kuru nedir" too; QA rounds 77 G3, 79 F11)
            # (nor a word with a letter Turkish lacks: deltaxyz is no inflection of delta, QA round 83-A F2)
            english = first and (True in directions or (loanwords and not turkish)) and (
                not NOT_TURKISH_LETTERS.isdisjoint(w) or english_word(w, lexicon))
            # (a word of a query read as English by another word that the lexicon has as a Turkish word typed without
            # its letters, and not as an English one, is spelled out all the same, in Turkish notes: "ozet agent"
            # found özet in none, since "agent" is in English notes; "cabin crew" keeps cabin as typed; QA round 85 F1)
            plain_turkish = (first and not spell and vocabulary.has_turkish and turkish_typed_plainly(w, lexicon))
            keys[t] = (w, cap, turkish, (spell or plain_turkish) and first,
                       loanwords and first and (turkish or (turkish_looking(w) and not english)),
                       tuple(d for d in directions if not (d and english)) if first and w not in names else (), stamp)
    outcome = {t: memo[k] for t, k in keys.items() if k in memo} if memo is not None else {}
    for from_turkish in directions:  # each word's lexicon keys in one statement, should its turn come
        _prefetch(lexicon, [(t if from_turkish == turkish else stem(k[0], from_turkish), k[0])
                            for t, k in keys.items() if t not in outcome and k[5]], from_turkish)
    # Each word's options in order: its other analyses, then its Turkish spellings one round at a time
    # (one changed letter, then two, …), then the English words it may be a Turkish loanword of and
    # its translations (English into a Turkish note, Turkish into another): the first option in a
    # text is the outcome, so a round is analysed only when every option before it is in no text.
    # An option is (term, where): ANY text, a TURKISH document (the Turkish reading of a word of a
    # query analysed as English: "costume" must not become English "cost"), or an OTHER one (an
    # English spelling of a Turkish word: an English note is where it can stand for the word).
    # A word with Turkish letters that no note holds, then, its ASCII spelling as a Turkish note typed without those
    # letters holds it (analysed as Turkish, as that note's word is: Snowball may give it a Turkish letter back,
    # kullanicilara → kullanici, agac → agaç), in a document analysed as Turkish: the reverse of the Turkish
    # spellings of an ASCII word, for the same words (QA round 135-C F5: "dağıtım süreci" missed the note typed
    # "dagitim sureci")
    where = TURKISH if not turkish else ANY
    options: dict[str, tuple[tuple[str, int], ...]] = {
        t: tuple(dict.fromkeys((*((a, where if tr else ANY) for a, tr in alternate_terms(w, cap, turkish)),
                                *(((plain, TURKISH),) if tried and (plain := ascii_term(w)) is not None else ()))))
        for t, (w, cap, _turkish, tried, *_rest) in keys.items() if t not in outcome}
    rounds = {t: diacritic_rounds(keys[t][0]) if keys[t][3] else 0 for t in options}
    spelled: dict[str, str] = {}  # term → a Turkish spelling's term found against vowel harmony, kept while later rounds look on
    translations: dict[str, set[str]] = {}  # term → its translations among its options (the last round's)
    loans: dict[str, set[str]] = {}  # term → its loanword readings among its options
    shorter: dict[str, list[tuple[str, ...]] | None] = {}  # term → the translations of its shorter roots, longest first
    done = 0
    while options:
        in_text = vocabulary.known({a for alts in options.values() for a, _w in alts})
        found = {ANY: in_text}
        for need, in_turkish in ((TURKISH, True), (OTHER, False)):
            wanted_here = {a for alts in options.values() for a, w in alts if w == need and a in in_text}
            found[need] = vocabulary.known(wanted_here, in_turkish=in_turkish) if wanted_here else set()
        done += 1
        later: dict[str, tuple[tuple[str, int], ...]] = {}
        for t, alts in options.items():
            hit = next((a for a, w in alts if a in found[w]), None)
            if hit in translations.get(t, ()) and hit not in loans.get(t, ()):
                # no loanword reading held: all its translations the notes hold (a loanword reading that is a
                # translation too, "server" of serverlardan, is the word itself: QA round 77 G2, "host" won by context)
                hit = tuple(a for a, w in alts if a in translations[t] and a in found[w])
            if 2 <= done <= rounds[t] + 1:  # these options were a round of the word's Turkish spellings
                hit = _harmonic_spelling(hit, alts, found, spelled.get(t))
                if hit is not None and harmony_breaks(hit) and done <= rounds[t]:
                    spelled[t], hit = hit, None  # against vowel harmony: a later round may hold the word
                elif hit is None and done == rounds[t] + 1:
                    hit = spelled.get(t)
            if hit is None and done <= rounds[t]:
                later[t] = tuple((a, where) for a in diacritic_round(keys[t][0], done))
                continue
            if hit is None and done == rounds[t] + 1 and (keys[t][4] or keys[t][5]):
                w = keys[t][0]
                translated = [(a, OTHER if from_turkish else TURKISH) for from_turkish in keys[t][5]
                              for a in _word_translations(t if from_turkish == turkish else stem(w, from_turkish), w,
                                                          lexicon, from_turkish, "I" in text)]
                if False in keys[t][5]:  # (into Turkish: not a term English notes hold as an English word, QA 153-G F4)
                    english = english_reading({a for a, where in translated if where == TURKISH}, lexicon, vocabulary)
                    translated = [(a, where) for a, where in translated if where != TURKISH or a not in english]
                loan = loanword_terms(t, w, heads, spellings) if keys[t][4] else ()
                loans[t] = set(loan)
                later[t] = tuple(dict.fromkeys([*((a, OTHER) for a in loan), *translated]))
                if True in keys[t][5] and translated:  # a Turkish word's shorter roots, should no note hold these
                    shorter[t] = None  # (looked up when needed)
                if later[t]:
                    translations[t] = {a for a, _w in translated}
                    continue
                del later[t]
            if hit is None and t in shorter:  # its longest root's translations in no note: the next root's
                if shorter[t] is None:
                    shorter[t] = _shorter_root_translations(t if turkish else stem(keys[t][0], True), keys[t][0],
                                                            lexicon)
                if shorter[t]:
                    later[t] = tuple((a, OTHER) for a in shorter[t].pop(0))
                    translations[t] = {a for a, _w in later[t]}
                    continue
            outcome[t] = hit
            if memo is not None:
                if len(memo) >= RESOLVED_WORDS_MAX:
                    memo.clear()
                memo[keys[t]] = hit
        options = later
    # A word translated (its outcome: the translations the notes hold, a tuple): the query's other words
    # choose among them
    held = {t: o for t, o in outcome.items() if isinstance(o, tuple)}
    forms: dict[str, tuple[str, ...]] = {}
    if held:
        anchors = set(found_as_is) | {o for o in outcome.values() if isinstance(o, str)}
        outcome.update(in_context(held, anchors, vocabulary))
        # (forms: of Turkish translations, those into Turkish)
        forms = {c: found for t, own in held.items()
                 if False in keys[t][5] and (c := outcome[t]) and (found := other_forms(c, own))}
    return ({t: outcome[t] for t in keys if outcome[t] is not None}, [t for t in keys if t in held and outcome[t]],
            forms)


def ascii_term(word: str) -> str | None:
    """The term of ``word`` (folded, with a Turkish letter) typed without its Turkish letters, in a note analysed as
    Turkish: its ASCII spelling (:data:`dreamdb.analyzer.TURKISH_TO_ASCII`) through Snowball Turkish, as
    :func:`dreamdb.analyzer.analyze` reads that note's word (``dağıtım`` → ``dagit``; ``göçü`` → ``goç``, not ``goc``).
    ``None`` for a word with no Turkish letter, with another letter that is not ASCII, a stopword, or one whose
    ASCII spelling Snowball cuts otherwise than the word (but for the letters): without them it reads other
    suffixes, and its term is another word's (``tanındı`` is the term ``tanındı``, ``tanindi`` the term ``tan``)."""
    plain = word.translate(TURKISH_TO_ASCII)
    if plain == word or not plain.isascii() or not plain.isalpha() or plain in STOPWORDS:
        return None
    term = stem(plain, True)
    return term if term.translate(TURKISH_TO_ASCII) == stem(word, True).translate(TURKISH_TO_ASCII) else None


def any_expired(conn, now_days: float) -> bool:
    """Whether some document has expired at ``now_days`` (days since epoch): its ``expires_days`` is at or before it,
    as :meth:`Filters.sql` drops it (an indexed lookup since schema 8)."""
    return bool(conn.execute("SELECT EXISTS (SELECT 1 FROM documents WHERE expires_days <= ?)", (now_days,)).fetchone()[0])


def superseded_by(conn, doc_ids=None) -> dict[str, str]:
    """``{changelog doc_id: doc_id of the newest entry superseding it}`` (of ``doc_ids`` only, when given).

    Newest: the latest ``date``; of entries of one date, the one nearer the file's newest end (its
    first entries when the file lists the newest first, as the reference tool writes it, else its last;
    told by comparing the dates (``date_days``) of its first and last entries with one: newest-first only when
    the first is later, the rule of :func:`dreamdb.vault.parse.changelog_newest_first` by which the ids are
    numbered, so ``remember``, which appends where the dates tie, and this agree: QA round 41), then the higher
    ``doc_id``. Not the
    largest ``doc_id`` (QA round 40: ``…-writes-2`` sorted after ``…-note-2``, a newer correction)."""
    newest_first = conn.execute(
        "SELECT (SELECT date_days FROM documents WHERE type = 'changelog' AND date_days IS NOT NULL"
        " ORDER BY ordinal LIMIT 1) > (SELECT date_days FROM documents WHERE type = 'changelog'"
        " AND date_days IS NOT NULL ORDER BY ordinal DESC LIMIT 1)").fetchone()[0]
    where = ""
    params: tuple = ()
    if doc_ids is not None:
        where = " AND supersedes IN (SELECT value FROM json_each(?))"
        params = (json.dumps(list(doc_ids)),)
    rows = conn.execute("SELECT supersedes, doc_id, date_days, ordinal FROM documents"
                        " WHERE supersedes IS NOT NULL" + where, params).fetchall()
    sign = -1 if newest_first == 1 else 1
    best: dict[str, tuple] = {}
    for target, doc_id, days, ordinal in rows:
        key = (-math.inf if days is None else days, sign * ordinal, doc_id)
        if target not in best or key > best[target][0]:
            best[target] = (key, doc_id)
    return {t: d for t, (_k, d) in best.items()}


def known_terms(conn, terms, *, in_turkish: bool | None = None) -> set[str]:
    """The subset of ``terms`` (any iterable of str) found in some document's text (title, description,
    tags or body: a slug alone does not count); with ``in_turkish`` True (False), in a document
    analysed as Turkish (as another language)."""
    if not terms:
        return set()
    turkish = "" if in_turkish is None else \
        f" AND EXISTS (SELECT 1 FROM documents d WHERE d.id = p.doc AND {'' if in_turkish else 'NOT '}d.turkish)"
    rows = conn.execute("SELECT j.value FROM json_each(?) j WHERE EXISTS (SELECT 1 FROM postings p WHERE p.term = j.value"
                        f" AND p.tf_title + p.tf_description + p.tf_tags + p.tf_body > 0{turkish})", (json.dumps(sorted(terms)),))
    return {r[0] for r in rows}


def cooccurrence_counts(conn, terms, anchors) -> tuple[int, int, dict[str, tuple[int, int]]]:
    """Document counts for :func:`in_context`: ``(documents, documents holding an anchor,
    {term: (documents holding it and an anchor, documents holding it)})`` for each of ``terms`` that
    some document holds (a posting of any field, slug included, counts as holding)."""
    n_docs = conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    if not terms or not anchors:
        return n_docs, 0, {}
    anchors_json = json.dumps(sorted(set(anchors)))
    with_anchor = "SELECT a.doc FROM postings a WHERE a.term IN (SELECT value FROM json_each(?))"
    n_anchor = conn.execute(f"SELECT COUNT(DISTINCT doc) FROM ({with_anchor})", (anchors_json,)).fetchone()[0]
    rows = conn.execute(
        f"SELECT p.term, SUM(p.doc IN ({with_anchor})), COUNT(*) FROM postings p"
        " WHERE p.term IN (SELECT value FROM json_each(?)) GROUP BY p.term", (anchors_json, json.dumps(sorted(set(terms)))))
    return n_docs, n_anchor, {t: (both, n) for t, both, n in rows}


class SqlVocabulary:
    """The index's vocabulary for :func:`plan_query`, read with SQL (one recall's worth; not cached).

    Attributes:
        has_turkish: whether any document was analysed as Turkish.
        has_non_turkish: whether any document was not.
    """

    def __init__(self, conn) -> None:
        self.conn = conn

    @property
    def has_turkish(self) -> bool:
        return bool(self.conn.execute("SELECT EXISTS (SELECT 1 FROM documents WHERE turkish)").fetchone()[0])

    @property
    def has_non_turkish(self) -> bool:
        return bool(self.conn.execute("SELECT EXISTS (SELECT 1 FROM documents WHERE NOT turkish)").fetchone()[0])

    def known(self, terms, *, in_turkish: bool | None = None) -> set[str]:
        """See :func:`known_terms`."""
        return known_terms(self.conn, terms, in_turkish=in_turkish)

    def cooccurrence(self, terms, anchors) -> tuple[int, int, dict[str, tuple[int, int]]]:
        """See :func:`cooccurrence_counts`."""
        return cooccurrence_counts(self.conn, terms, anchors)

    def spellings(self, terms) -> dict[str, dict[str, int]]:
        """See :func:`held_spellings`."""
        return held_spellings(self.conn, terms)


@record
class Filters:
    """Filters applied in SQL, before the result limit (SPEC §5).

    Attributes:
        types: keep only these document types (``None`` = all).
        exclude_types: drop these types.
        tags: keep documents carrying any of these tags (case-insensitive, facet prefix ignored).
        statuses: keep documents whose status is one of these.
        min_level: keep documents of importance ≥ this (1–3).
        since_days, until_days: keep documents dated inside this window (days since epoch, inclusive);
            undated documents are dropped when a window is set.
        since_at_days, until_at_days: the window's bounds for documents dated with a time of day, where they
            differ (a local calendar day: ``today`` in Tokyo starts at 15:00 UTC the day before, while a document
            dated with that date alone is dated midnight UTC; :func:`dreamdb.timeparse.calendar_day_instants`);
            ``None``: the same as ``since_days``/``until_days``.
        include_expired: keep documents whose ``expires`` is before now.
    """

    types: list[str] | None = None
    exclude_types: list[str] | None = None
    tags: list[str] | None = None
    statuses: list[str] | None = None
    min_level: int | None = None
    since_days: float | None = None
    until_days: float | None = None
    include_expired: bool = False
    since_at_days: float | None = None
    until_at_days: float | None = None

    def sql(self, now_days: float) -> tuple[str, dict]:
        """``(WHERE clause over alias d, parameters)``."""
        where, params = [], {}
        if self.types:
            where.append(f"d.type IN ({_in(self.types, 'ty', params)})")
        if self.exclude_types:
            where.append(f"d.type NOT IN ({_in(self.exclude_types, 'xt', params)})")
        if self.tags:
            tags = [tag_key(t) for t in self.tags if tag_key(t)]
            where.append(f"EXISTS (SELECT 1 FROM document_tags g WHERE g.doc = d.id AND g.tag IN ({_in(tags, 'tg', params)}))")
        if self.statuses:
            where.append(f"REPLACE(d.status, 'ı', 'i') IN ({_in([status_key(s) for s in self.statuses], 'st', params)})")
        if self.min_level is not None:
            where.append("d.level >= :min_level")
            params["min_level"] = self.min_level
        for name, op, days, at in (("since", ">=", self.since_days, self.since_at_days),
                                   ("until", "<=", self.until_days, self.until_at_days)):
            if days is None:
                continue
            params[name] = days
            if at is None:
                where.append(f"d.date_days {op} :{name}")
            else:  # (a date with a time of day, longer than YYYY-MM-DD, is compared with the instant)
                where.append(f"d.date_days {op} (CASE WHEN length(d.date) > 10 THEN :{name}_at ELSE :{name} END)")
                params[f"{name}_at"] = at
        if not self.include_expired:
            # expires_days is the instant the document expires (a date alone: 00:00 UTC of the next day), so it is
            # kept only before it (QA round 145-E F2: `expires: 2026-08-18` was kept at 2026-08-19T00:00Z);
            # the memory engine's MemoryEngine.expires is that instant less a step, compared with >=: the same
            where.append("(d.expires_days IS NULL OR d.expires_days > :now_days)")
            params["now_days"] = now_days
        return (" AND ".join(where) or "1"), params


def _in(values, prefix: str, params: dict) -> str:
    names = []
    for i, v in enumerate(values):
        params[f"{prefix}{i}"] = v
        names.append(f":{prefix}{i}")
    return ", ".join(names)


@record
class Ranked:
    """One ranked document with every signal that produced its rankScore.

    Attributes:
        rowid: ``documents.id``.
        doc_id, type, date, status: from ``documents``.
        score: raw BM25 (SPEC §2 ``score``; thresholds gate on it).
        bm25f: BM25F with synonyms (a translated query word counts with its translation as one term:
            :func:`class_members`).
        coverage: query terms found in slug/title ÷ query terms.
        identity: identity boost added.
        base: structured + 0.5·max(0, BM25F − structured).
        recency, status_factor, type_factor, confidence_factor: multipliers.
        rank_score: what hits are sorted by (the fused score in hybrid modes).
        dense: best-chunk dense score in hybrid modes (cosine, language-centred for chunks
            outside the index's main language), else ``None``.
        dense_centred: the language the best chunk's score was centred for, else ``None``.
        bm25_coverage: in hybrid mode, the share of query terms BM25's evidence covers (known to the
            corpus and found in BM25's top hit; :mod:`dreamdb.fusion`), else ``None``.
        fusion: fusion method in hybrid modes (``relative``, ``rrf``, ``rrf+pin``,
            ``dense``, ``rrf-plain``; ``+partial`` when some query terms are unknown to the
            corpus, so BM25's decisive test and pin guard were scaled by its term coverage;
            ``+imputed`` on a document in another language than the query whose BM25 rank was
            taken from the dense channel, :func:`dreamdb.fusion.imputed_bm25_ranks`).
        structured: the raw BM25 that base and identity start from: ``score``, with each translated
            query word's class in place of the word (:func:`class_members`); ``None``: ``score``.
        fused_from: in hybrid modes with ``explain``, the terms the fused ``rank_score`` adds up
            from (:func:`dreamdb.hybrid.fusion_terms`), else ``None``.
        _pinned: the document the pin guard kept first in a hybrid recall (its fused score need not lead); private,
            for the human output alone (:func:`dreamdb.output.hits_text`).
    """

    rowid: int
    doc_id: str
    type: str
    date: str | None
    date_days: float | None
    status: str | None
    score: float
    bm25f: float
    coverage: float
    identity: float
    base: float
    recency: float
    status_factor: float
    type_factor: float
    confidence_factor: float
    rank_score: float
    dense: float | None = None
    fusion: str | None = None
    dense_centred: str | None = None
    bm25_coverage: float | None = None
    structured: float | None = None
    fused_from: dict | None = None
    _pinned: bool = False

    def signals(self) -> dict:
        """Every signal, JSON-ready (``--explain``)."""
        return {
            "bm25": round(self.score, 6), "bm25f": round(self.bm25f, 6), "base": round(self.base, 6),
            "coverage": round(self.coverage, 6), "identity_boost": round(self.identity, 6),
            "recency": round(self.recency, 6), "status_factor": self.status_factor,
            "type_factor": self.type_factor, "confidence_factor": round(self.confidence_factor, 6),
            "rank_score": round(self.rank_score, 6),
            "dense": None if self.dense is None else round(self.dense, 6), "fusion": self.fusion,
            "dense_centred": self.dense_centred,
            "bm25_coverage": None if self.bm25_coverage is None else round(self.bm25_coverage, 6),
            "bm25_structured": round(self.score if self.structured is None else self.structured, 6),
            "fused_from": self.fused_from,
        }


# The ranking statement (:func:`ranking_sql`). Its fast form (QA round 153-C F1: a 4,000-character prompt over
# 10,000 notes, 449,000 postings, took seconds) differs from the plain one in three ways that leave every float as
# it was, summed in the same order: q, c and ci are MATERIALIZED (read as views, their json_extract calls ran
# again for every posting joined with them); r ends in LIMIT -1, which keeps SQLite from flattening it into agg,
# where each of its columns was computed again wherever agg names it (tff, four divisions, three times a
# posting); and a query of many postings (LENGTHS_AFTER_POSTINGS) reads the field lengths of every document the
# filters keep once, into dl, where a posting's lookup in documents reads the body's overflow pages too (the
# lengths are stored after it).
_SQL = """
WITH q(term, idf, w_raw, w_f, w_rank) AS {materialized}(
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
           json_extract(value, '$[3]'), json_extract(value, '$[4]')
    FROM json_each(:q)
),
c(term, cls) AS {materialized}(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(:c)),
ci(cls, idf) AS {materialized}(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(:ci)),{lengths}
src AS (
    SELECT p.doc AS doc, q.idf AS idf, q.w_raw AS w_raw, q.w_f AS w_f, q.w_rank AS w_rank, p.tf_title AS tf_title,
           p.tf_description AS tf_description, p.tf_tags AS tf_tags, p.tf_body AS tf_body, p.tf_slug AS tf_slug
    FROM q JOIN postings p ON p.term = q.term
    UNION ALL
    SELECT k.doc, ci.idf, 0.0, 1.0, 1.0, k.tf_title, k.tf_description, k.tf_tags, k.tf_body, 0
    FROM (SELECT c.cls AS cls, p.doc AS doc, SUM(p.tf_title) AS tf_title, SUM(p.tf_description) AS tf_description,
                 SUM(p.tf_tags) AS tf_tags, SUM(p.tf_body) AS tf_body
          FROM c JOIN postings p ON p.term = c.term GROUP BY c.cls, p.doc) k JOIN ci ON ci.cls = k.cls
),
r AS (
    SELECT s.doc AS doc, s.idf AS idf, s.w_raw AS w_raw, s.w_f AS w_f, s.w_rank AS w_rank,
           s.tf_title + s.tf_description + s.tf_tags + s.tf_body AS tf,
           d.len_title + d.len_description + d.len_tags + d.len_body AS dl,
           :w_title * s.tf_title / (:nb + :b_title * d.len_title)
         + :w_description * s.tf_description / (:nb + :b_description * d.len_description)
         + :w_tags * s.tf_tags / (:nb + :b_tags * d.len_tags)
         + :w_body * s.tf_body / (:nb + :b_body * d.len_body) AS tff,
           (s.tf_title > 0 OR s.tf_slug > 0) AS in_id,
           d.identity_boost AS ib
    FROM {documents}{limit}
),
agg AS (
    SELECT doc,
           SUM(CASE WHEN tf > 0 THEN w_raw * idf * tf * (:k1 + 1) / (tf + :k1 * (:nb + :b_avg * dl)) ELSE 0.0 END) AS raw,
           SUM(CASE WHEN tf > 0 THEN w_rank * idf * tf * (:k1 + 1) / (tf + :k1 * (:nb + :b_avg * dl)) ELSE 0.0 END) AS rr,
           SUM(CASE WHEN tff > 0 THEN w_f * idf * tff * (:k1 + 1) / (tff + :k1) ELSE 0.0 END) AS bm25f,
           SUM(w_raw > 0 AND in_id) AS id_hits,
           MAX(ib) AS ib
    FROM r GROUP BY doc
)
SELECT a.doc, a.raw, a.rr, a.bm25f, a.id_hits, a.ib,
       a.rr + :mix * MAX(0, a.bm25f - a.rr)
         + CASE WHEN a.ib AND a.id_hits > 0
                THEN :idw * (a.id_hits * 1.0 / :nq) * (a.id_hits * 1.0 / :nq) * MAX(a.rr, 1) ELSE 0 END AS ub,
       d.doc_id, d.type, d.date, d.date_days, d.status, d.is_capture, d.confidence
FROM agg a JOIN documents d ON d.id = a.doc
WHERE a.raw > 0 OR a.bm25f > 0 OR (a.ib AND a.id_hits > 0)
ORDER BY ub DESC, d.doc_id
"""


_LENGTHS = """
dl(id, len_title, len_description, len_tags, len_body, identity_boost) AS MATERIALIZED (
    SELECT d.id, d.len_title, d.len_description, d.len_tags, d.len_body, d.identity_boost FROM documents d
    WHERE {where}
),"""

LENGTHS_AFTER_POSTINGS = 2.0
"""Postings to score per document of the index from which :func:`rank` reads every document's field lengths once
(``dl`` in :data:`_SQL`) rather than once a posting. Measured on a generated vault of 10,000 notes (QA round 153-C
F1, median of 5, on a machine shared with other jobs): reading them all took 50 ms; a 3-word query of 6,762
postings took 190 ms looking them up a posting and 209 ms reading them all, a 4-word one of 14,527 postings 400
and 396 ms: the two cost alike near 1.4 postings a document, and reading them all saves time beyond."""


def ranking_sql(where: str, postings: int, n_docs: int, *, plain: bool = False) -> str:
    """:data:`_SQL` for the filter ``where`` (over alias ``d``) and a query of ``postings`` postings over
    ``n_docs`` documents: field lengths looked up a posting at a time, or read once for every document
    (:data:`LENGTHS_AFTER_POSTINGS`). ``plain``: the statement as it was before QA round 153-C F1 (no
    MATERIALIZED tables, ``r`` flattened into ``agg``, lengths looked up a posting at a time), which returns the
    same rows, slower (the tests and ``scripts/bench_rank.py`` compare the two)."""
    if plain:
        return _SQL.format(materialized="", lengths="", limit="",
                           documents=f"src s JOIN documents d ON d.id = s.doc\n    WHERE {where}")
    if postings >= LENGTHS_AFTER_POSTINGS * n_docs:
        return _SQL.format(materialized="MATERIALIZED ", lengths=_LENGTHS.format(where=where), limit=" LIMIT -1",
                           documents="src s JOIN dl d ON d.id = s.doc")
    return _SQL.format(materialized="MATERIALIZED ", lengths="", limit=" LIMIT -1",
                       documents=f"src s JOIN documents d ON d.id = s.doc\n    WHERE {where}")


def corpus_stats(conn) -> dict:
    """``corpus_stats`` row as a dict (n_docs, avg_len, avg_len_<field>).

    Raises:
        DatabaseError: the row is missing (a damaged index; callers rebuild it).
    """
    row = conn.execute(
        "SELECT n_docs, avg_len, avg_len_title, avg_len_description, avg_len_tags, avg_len_body FROM corpus_stats WHERE id = 1"
    ).fetchone()
    if row is None:  # migration 001 inserts it and nothing deletes it: the file is damaged
        from dreamdb.store.connect import DatabaseError

        raise DatabaseError("database disk image is malformed (the corpus_stats row is missing)")
    keys = ("n_docs", "avg_len", "avg_len_title", "avg_len_description", "avg_len_tags", "avg_len_body")
    return dict(zip(keys, row))


def document_frequencies(conn, terms: list[str]) -> dict[str, int]:
    """``{term: df}`` over the union of BM25 fields (slug-only occurrences do not count)."""
    if not terms:
        return {}
    marks = ",".join("?" * len(terms))
    rows = conn.execute(
        f"SELECT term, SUM(tf_title + tf_description + tf_tags + tf_body > 0) FROM postings WHERE term IN ({marks}) GROUP BY term",
        terms,
    )
    return {t: int(df or 0) for t, df in rows}


def raw_bm25(conn, rowids: list[int], terms: list[str]) -> dict[int, float]:
    """``{rowid: raw BM25}`` of the documents ``rowids`` for the query ``terms`` (SPEC §2 ``score``: each term's
    :func:`dreamdb.ranking.bm25.bm25_term` over the text fields, summed), for documents a ranking did not
    score: those the dense channel alone brought (:func:`dreamdb.hybrid.hybrid_rank`). A document holding
    no term is absent. Equal to :func:`rank`'s ``score`` to within float rounding (terms summed in
    another order)."""
    if not rowids or not terms:
        return {}
    stats = corpus_stats(conn)
    df = document_frequencies(conn, terms)
    out: dict[int, float] = {}
    rows = conn.execute(
        "SELECT p.doc, p.term, p.tf_title + p.tf_description + p.tf_tags + p.tf_body,"
        " d.len_title + d.len_description + d.len_tags + d.len_body FROM postings p JOIN documents d ON d.id = p.doc"
        " WHERE p.doc IN (SELECT value FROM json_each(?)) AND p.term IN (SELECT value FROM json_each(?))"
        " AND p.tf_title + p.tf_description + p.tf_tags + p.tf_body > 0",
        (json.dumps(list(rowids)), json.dumps(list(dict.fromkeys(terms)))))
    for doc, term, tf, dl in rows:
        out[doc] = out.get(doc, 0.0) + F.bm25_term(tf, dl, stats["avg_len"], F.idf(stats["n_docs"], df[term]))
    return out


def class_frequencies(conn, classes: list[tuple[str, ...]]) -> list[int]:
    """Each class's document frequency (:func:`class_members`): the documents holding any of its
    terms in a BM25 field (slug-only occurrences do not count), in order."""
    out = []
    for members in classes:
        marks = ",".join("?" * len(members))
        out.append(conn.execute(f"SELECT COUNT(DISTINCT doc) FROM postings WHERE term IN ({marks}) "
                                "AND tf_title + tf_description + tf_tags + tf_body > 0", members).fetchone()[0])
    return out


class Collection:
    """Collection statistics pooled over several indexes searched together: the document count ``n_docs`` (N)
    and the document frequencies (df) that BM25's IDF reads (SPEC §2), summed over the indexes, where each
    index would read its own.

    A :class:`~dreamdb.multi.MultiIndex` ranks each vault's BM25 with them, so that a term weighs alike in every
    vault of one search and one note scores alike in any of them: the global IDF of distributed IR (Callan 2000,
    "Distributed information retrieval", in *Advances in Information Retrieval*, §4, merging with shared
    collection statistics; Elasticsearch's ``dfs_query_then_fetch`` does the same across shards). Each vault's
    IDF of its own counts is below ln(1 + N) for a word it holds: a 3-document vault's rarest word weighed 0.98, a
    771-document vault's 6.2, and a small vault's exact title match sank under a big vault's weak matches
    (QA round 155-E F2). Field length normalisation stays each vault's own (its average field lengths).

    Args:
        parts: one ``(n_docs, frequencies, class_frequencies, window_sums)`` per index: its document count, a
            function ``terms → {term: df}`` (:func:`document_frequencies`: terms it lacks may be absent), a function
            ``classes → [df, …]`` (:func:`class_frequencies`: the documents holding any member of a class) and one
            ``window → (sum, count)`` (:func:`window_recency_sums`; optional: a 3-tuple counts no dated document).

    The pooled df of a class is the sum of each index's (a document is in one index). Lookups are kept, so
    the indexes are asked once per term and class however many of them rank with these statistics.
    """

    def __init__(self, parts) -> None:
        self._parts = list(parts)
        self.n_docs: int = sum(p[0] for p in self._parts)
        self._df: dict[str, int] = {}
        self._class_df: dict[tuple[str, ...], int] = {}

    def frequencies(self, terms) -> dict[str, int]:
        """``{term: pooled df}`` for each of ``terms`` (0 for a term no index holds in a BM25 field)."""
        wanted = [t for t in dict.fromkeys(terms) if t not in self._df]
        if wanted:
            found = dict.fromkeys(wanted, 0)
            for part in self._parts:
                for t, d in part[1](wanted).items():
                    found[t] += d
            self._df.update(found)
        return {t: self._df[t] for t in terms}

    def class_frequencies(self, classes) -> list[int]:
        """The pooled df of each class (a tuple of terms, :func:`class_members`), in order."""
        wanted = [c for c in dict.fromkeys(classes) if c not in self._class_df]
        if wanted:
            found = [0] * len(wanted)
            for part in self._parts:
                found = [a + b for a, b in zip(found, part[2](wanted))]
            self._class_df.update(zip(wanted, found))
        return [self._class_df[c] for c in classes]

    def window_recency_sums(self, window) -> tuple[float, int]:
        """``(sum, count)`` of the window recency of the dated documents of every index (:func:`window_recency_sums`
        pooled): their mean is the recency of an undated document in any of them (QA round 157-F F2)."""
        total, count = 0.0, 0
        for part in self._parts:
            if len(part) > 3:
                s, c = part[3](window)
                total, count = total + s, count + c
        return total, count


def window_recency_sums(conn, window) -> tuple[float, int]:
    """``(sum, count)`` of :func:`dreamdb.ranking.signals.window_recency` over the index's dated documents, for the
    recency of a document of unknown date under a query's time intent: their mean, the recency a date drawn from
    the vault's own dates would have on average (the expected value of an unknown quantity under its observed
    distribution). Where most documents are far from a narrow window ("yesterday" against a year of notes) it is
    small, and an undated document ranks below the dated ones near the window, not above all but those within one
    window length, as a fixed 0.5 made it (QA round 157-A F3, 157-F F2: undated diagrams, 2.6% of the real vault,
    took 16 of 75 hybrid top-5 places over 15 one-day questions, none an answer); for a window as wide as the
    vault's history it is near 1, as the dated documents' own.

    Args:
        conn: index connection.
        window: :class:`dreamdb.ranking.timeintent.TimeWindow` (its ``start``, ``end``, ``scale``; days since the
            epoch).

    Returns:
        ``(sum, count)``: ``count`` 0 where no document is dated. The sum is exactly rounded (``math.fsum``) of the
        values :func:`~dreamdb.ranking.signals.window_recency` gives, so the memory engine's
        (:meth:`dreamdb.ranking.memory.MemoryEngine.window_recency_sums`) is the same float.
    """
    from math import fsum

    values = [S.window_recency(d, window, S.has_time_of_day(date)) for d, date in
              conn.execute("SELECT date_days, date FROM documents WHERE date_days IS NOT NULL")]
    return fsum(values), len(values)


def rank(conn, plan: QueryPlan, *, top: int, now_days: float, filters: Filters | None = None,
         only: list[int] | None = None, plain: bool = False,
         collection: Collection | None = None) -> list[Ranked]:
    """The exact top ``top`` documents for ``plan`` by rankScore.

    Args:
        conn: index connection.
        plan: from :func:`plan_query`.
        top: result limit (applied after filters).
        now_days: the clock, as days since epoch (recency, expiry; under a time intent, ``plan.window`` gives
            recency: :func:`dreamdb.ranking.signals.window_recency`).
        filters: SQL filters, or ``None``.
        only: rank only these ``documents.id`` values (the BM25 signals of documents another channel
            found: :func:`dreamdb.hybrid.hybrid_rank` explaining its dense-only hits); ``None``: all.
        plain: score with the statement as it was before QA round 153-C F1 (:func:`ranking_sql`): the same
            hits and floats, slower; for tests and benchmarks.
        collection: IDF from these pooled statistics (:class:`Collection`: the vaults searched together) instead
            of this index's document count and document frequencies; average field lengths stay this index's.
            ``None``: this index's own (a single vault).

    Returns:
        list[Ranked], best first (rankScore desc, then newest, then doc_id).
    """
    if not plan.terms or top <= 0:
        return []
    stats = corpus_stats(conn)
    n = stats["n_docs"]
    if not n:
        return []
    all_terms = plan.terms + list(plan.synonyms)
    df = document_frequencies(conn, all_terms)
    classes = class_members(plan)
    class_df = class_frequencies(conn, list(classes.values()))
    # the IDF's N and df: this index's, or those pooled over the vaults searched together (the terms and classes
    # this index holds are still those it has postings of: df, class_df)
    n_idf, df_idf, class_df_idf = n, df, class_df
    if collection is not None:
        n_idf = collection.n_docs
        df_idf = collection.frequencies([t for t in all_terms if df.get(t)])
        class_df_idf = collection.class_frequencies(list(classes.values()))
    # q rows: [term, idf, weight in the raw score, in BM25F, in the raw BM25 rankScore starts from];
    # a term of a class counts in the raw score (and identity coverage) only, its class in the other two
    q = []
    for t in plan.terms:
        if df.get(t):
            idf = F.idf(n_idf, df_idf[t])
            q.append([t, idf, 1.0, 0.0, 0.0] if t in classes else [t, idf, 1.0, 1.0, 1.0])
    for t, w in plan.synonyms.items():
        if df.get(t):
            q.append([t, F.idf(n_idf, df_idf[t]), 0.0, w, 0.0])
    # slug-only terms (df 0) still count for identity coverage
    for t in plan.terms:
        if not df.get(t):
            q.append([t, 0.0, 1.0, 0.0, 0.0])
    c = [[m, i] for i, members in enumerate(classes.values()) for m in members]
    ci = [[i, F.idf(n_idf, class_df_idf[i])] for i in range(len(classes)) if class_df[i]]
    where, params = (filters or Filters()).sql(now_days)
    if only is not None:
        where += f" AND d.id IN ({_in(list(only), 'only', params)})" if only else " AND 0"
    b = F.B
    params.update(
        q=json.dumps(q), c=json.dumps(c), ci=json.dumps(ci), k1=F.K1, nb=1.0 - b, mix=S.BM25F_MIX,
        idw=S.IDENTITY_WEIGHT, nq=len(plan.terms),
        b_avg=b / stats["avg_len"] if stats["avg_len"] > 0 else 0.0,
    )
    for f in ("title", "description", "tags", "body"):
        avg = stats[f"avg_len_{f}"]
        params[f"w_{f}"] = F.FIELD_WEIGHTS[f]
        params[f"b_{f}"] = b / avg if avg > 0 else 0.0
    postings = sum(df.get(t, 0) for t in all_terms) + sum(class_df)
    window = plan.window
    heap: list = []  # min-heap of (sort key, Ranked), size ≤ top
    for row in conn.execute(ranking_sql(where, postings, n, plain=plain), params):
        doc, raw, structured, bm25f, id_hits, ib, ub, doc_id, typ, date, date_days, status, is_capture, confidence = row
        if len(heap) >= top and ub < heap[0][0][0] * (1.0 - S.TIE_MARGIN):
            break
        coverage = (id_hits / len(plan.terms)) if ib else 0.0
        base = S.base_score(structured, bm25f)
        identity = S.identity_boost(structured, coverage)
        if window is None:
            rec = S.recency_factor(None if date_days is None else now_days - date_days)
        else:  # (the query's time intent: QueryPlan.window)
            rec = S.window_recency(date_days, window, S.has_time_of_day(date))
        sf = S.status_factor(status)
        tf_ = S.type_factor(typ, bool(is_capture))
        cf = S.confidence_factor(confidence)
        rank_score = (base + identity) * rec * sf * tf_ * cf
        item = Ranked(doc, doc_id, typ, date, date_days, status, raw, bm25f, coverage, identity, base, rec, sf, tf_, cf,
                      rank_score, structured=structured)
        key = _sort_key(item)
        if len(heap) < top:
            heapq.heappush(heap, (key, item))
        elif key > heap[0][0]:
            heapq.heapreplace(heap, (key, item))
    return [item for _, item in sorted(heap, key=lambda kv: kv[0], reverse=True)]


class _DocIdDesc(str):
    """Reverses string order so that, inside a max-sort key, smaller doc_ids win ties."""

    def __lt__(self, other):  # noqa: D105
        return str.__gt__(self, other)

    def __gt__(self, other):  # noqa: D105
        return str.__lt__(self, other)


def _sort_key(item: Ranked) -> tuple:
    newest = item.date_days if item.date_days is not None else float("-inf")
    return (S.tie_score(item.rank_score), newest, _DocIdDesc(item.doc_id))


def explanation_frequencies(conn, plan: QueryPlan,
                            collection: Collection | None = None) -> tuple[dict[str, int], list[int]]:
    """``(df of each query term and synonym, df of each class)``: what :func:`explain_terms` reads for any document,
    read once for all the hits of a ranking (each read scans every posting of the query's terms: 0.24 s for a
    4,000-character prompt over 10,000 notes, once a hit before QA round 153-C F1). With ``collection``, the
    pooled ones (:class:`Collection`), as :func:`rank` weighs them."""
    terms, classes = plan.terms + list(plan.synonyms), list(class_members(plan).values())
    if collection is not None:
        return collection.frequencies(terms), collection.class_frequencies(classes)
    return document_frequencies(conn, terms), class_frequencies(conn, classes)


def explain_terms(conn, rowid: int, plan: QueryPlan, frequencies: tuple | None = None,
                  collection: Collection | None = None) -> list[dict]:
    """Per-term breakdown of one document's raw BM25 and BM25F, recomputed with :mod:`dreamdb.ranking.bm25`.

    ``frequencies``: :func:`explanation_frequencies` of ``conn``, ``plan`` and ``collection``, read once for
    several documents (``None``: read here). ``collection``: the pooled statistics :func:`rank` weighed with
    (:class:`Collection`: each line's ``df`` and ``idf`` are then the pooled ones), or ``None``.

    A translated query word's line gives its raw BM25 (part of ``score``) and a BM25F of 0: it counts
    in BM25F, and in the raw BM25 that rankScore starts from, through its class's line (kind
    ``class``, term ``word|translation``: the members' term frequencies summed, the class's document
    frequency; :func:`class_members`), whose ``bm25`` is its part of ``Ranked.structured``.

    Returns:
        ``[{term, kind ('query'|'synonym'|'class'), df, idf, tf: {field: n}, bm25, bm25f, in_class}]`` for matched
        terms (``idf``: :func:`dreamdb.ranking.bm25.idf` of ``df``, of a df of 0 too: a term the document holds in
        its slug alone, whose ``bm25`` and ``bm25f`` are 0); ``in_class`` is true on a query term counted in its
        class (its ``bm25f`` of 0 is there: QA round 65 L7, ``--json`` said 0.0 where the text says ``bm25f in
        class``), false on every other line.
    """
    stats = corpus_stats(conn)
    classes = class_members(plan)
    terms = plan.terms + list(plan.synonyms)
    looked_up = list(dict.fromkeys(terms + [m for members in classes.values() for m in members]))
    df, class_df = frequencies if frequencies is not None else explanation_frequencies(conn, plan, collection)
    n_docs = collection.n_docs if collection is not None else stats["n_docs"]
    lens = conn.execute(
        "SELECT len_title, len_description, len_tags, len_body FROM documents WHERE id = ?", (rowid,)
    ).fetchone()
    lengths = dict(zip(("title", "description", "tags", "body"), lens))
    avgs = {f: stats[f"avg_len_{f}"] for f in lengths}
    marks = ",".join("?" * len(looked_up))
    rows = {r[0]: r[1:] for r in conn.execute(
        f"SELECT term, tf_title, tf_description, tf_tags, tf_body, tf_slug FROM postings WHERE doc = ? AND term IN ({marks})",
        [rowid, *looked_up],
    )}

    def line(term, kind, tfs, slug, df_v, weight, raw_counts, f_counts):
        # the formula's IDF for a df of 0 too (a term the hit holds in its slug alone said 0.000: QA round 148-A F2);
        # its bm25 and bm25f stay 0, its term frequency being 0 in every BM25 field
        idf_v = F.idf(n_docs, df_v)
        tf = sum(tfs.values())
        raw = F.bm25_term(tf, sum(lengths.values()), stats["avg_len"], idf_v) if raw_counts else 0.0
        f = weight * F.bm25f_term(F.bm25f_pseudo_tf(tfs, lengths, avgs), idf_v) if f_counts else 0.0
        return {"term": term, "kind": kind, "df": df_v, "idf": round(idf_v, 6), "tf": {**tfs, "slug": slug},
                "bm25": round(raw, 6), "bm25f": round(f, 6), "in_class": kind == "query" and not f_counts}

    out = []
    for term in (t for t in terms if t in rows):
        tt, td, tg, tb, ts = rows[term]
        is_syn = term not in plan.terms
        out.append(line(term, "synonym" if is_syn else "query", {"title": tt, "description": td, "tags": tg, "body": tb},
                        ts, df.get(term, 0), plan.synonyms.get(term, 1.0) if is_syn else 1.0, not is_syn,
                        term not in classes))
    for members, df_v in zip(classes.values(), class_df):
        held = [rows[m] for m in members if m in rows]
        if held:
            tfs = {f: sum(r[j] for r in held) for j, f in enumerate(("title", "description", "tags", "body"))}
            out.append(line("|".join(members), "class", tfs, max(r[4] for r in held), df_v, 1.0, True, True))
    return out
