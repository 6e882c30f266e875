"""Hybrid, dense and RRF recall: the embedding overlay on top of BM25 (SPEC §3).

BM25 stays the base: it supplies the candidates' raw ``score`` in every mode.
The dense channel embeds the query with the local model, finds the nearest
chunks in sqlite-vec and scores each document by its best chunk (cosine,
language-centred: :mod:`dreamdb.embeddings.language`); a question typed in
Turkish without its letters is embedded with the letters its words have in the
Turkish notes (:func:`dense_query_text`); the two
channels are then fused (:mod:`dreamdb.fusion`). When no model is usable the
caller falls back to BM25 and says why.
"""

from __future__ import annotations

import re

from dreamdb.reinstall import require_same_install

require_same_install()  # (loaded when first needed, as fusion after it: not from another version installed since; QA
# round 132-E F1)

from dreamdb import fusion  # noqa: E402
from dreamdb.analyzer import (TURKISH_LETTERS, TURKISH_STOPWORD_SPELLINGS, TURKISH_TO_ASCII, fold_case,  # noqa: E402
                              query_words, raw_tokens, stem, turkish_spelling, turkish_spellings,
                              typed_without_turkish_letters)
from dreamdb.ranking import signals as S  # noqa: E402
from dreamdb.ranking.rank import (Filters, QueryPlan, Ranked, any_expired, class_members,  # noqa: E402
                                  document_frequencies, known_terms, rank, raw_bm25)
from dreamdb.records import replace  # noqa: E402

CANDIDATES = 50
"""Documents taken from each channel before fusion."""


def _allowed_docs(conn, filters: Filters, now_days: float) -> set[int] | None:
    """The documents the filters keep, or None when they keep every document (plain KNN)."""
    if filters == Filters() and not any_expired(conn, now_days):
        return None  # the default filter drops only expired documents, and there are none (an indexed lookup)
    where, params = filters.sql(now_days)
    kept = conn.execute(f"SELECT COUNT(*) FROM documents d WHERE {where}", params).fetchone()[0]
    if kept == conn.execute("SELECT n_docs FROM corpus_stats WHERE id = 1").fetchone()[0]:
        return None
    return {r[0] for r in conn.execute(f"SELECT d.id FROM documents d WHERE {where}", params)}


def _dense_only(conn, rowids: list[int], now_days: float, plan: QueryPlan, explain: bool = False) -> dict[int, Ranked]:
    """Ranked stubs for documents the dense channel found but BM25's candidates did not hold: their ``score``
    is still their raw BM25 for the query's terms (0 when they hold none; QA round 48: a note below
    BM25's top :data:`CANDIDATES` showed ``bm25 0`` beside its own matching terms). With ``explain``, every
    BM25 signal of theirs (BM25F, base, identity), as BM25 alone would rank them (QA round 68 M1: ``bm25f 0``
    and ``base 0`` beside a positive ``bm25``); the fusion does not read them (such a document has no BM25
    rank among the candidates)."""
    if not rowids:
        return {}
    full = {}
    if explain and plan.terms:
        full = {r.rowid: r for r in rank(conn, plan, top=len(rowids), now_days=now_days,
                                          filters=Filters(include_expired=True), only=rowids)}
    out = dict(full)
    rest = [r for r in rowids if r not in full]  # (the ones without a query term, when explained)
    if not rest:
        return out
    raw = raw_bm25(conn, rest, plan.terms)
    marks = ",".join("?" * len(rest))
    for rowid, doc_id, typ, date, date_days, status, is_capture, confidence in conn.execute(
        f"SELECT id, doc_id, type, date, date_days, status, is_capture, confidence FROM documents WHERE id IN ({marks})", rest
    ):
        rec = (S.recency_factor(None if date_days is None else now_days - date_days) if plan.window is None
               else S.window_recency(date_days, plan.window, S.has_time_of_day(date)))
        out[rowid] = Ranked(rowid, doc_id, typ, date, date_days, status, raw.get(rowid, 0.0), 0.0, 0.0, 0.0, 0.0,
                            rec, S.status_factor(status), S.type_factor(typ, bool(is_capture)),
                            S.confidence_factor(confidence), 0.0)
    return out


def term_coverage(conn, terms: list[str]) -> float:
    """Fraction of the query's terms that occur in the corpus (0.0–1.0; 0.0 for no terms).

    The lexical evidence BM25 can have for this query: a Turkish question over an English
    vault may share only names and numbers with it, so most of its terms are unknown. A term
    found only in slugs counts as known (it feeds the identity boost of rankScore).
    """
    if not terms:
        return 0.0
    df = document_frequencies(conn, terms)
    return sum(1 for t in terms if t in df) / len(terms)


def top_match_coverage(conn, rowid: int, terms: list[str], classes: dict[str, tuple[str, ...]] | None = None) -> float:
    """Fraction of the query's terms found in the text (title, description, tags, body) of document
    ``rowid`` — BM25's best match (0.0–1.0; 0.0 for no terms). A term with a class
    (:func:`dreamdb.ranking.rank.class_members`: the word and its translation, counted as one term in
    rankScore) is found when the text holds any member.

    How much of the query BM25's confidence rests on: a top hit that matched two rare words of a
    five-word question (a Turkish board quoting them, say) scores high on those two alone. The classes
    count because the top hit is the top by rankScore, which counts them: ``where are backups stored`` put
    first a Turkish note holding *yedek* (``backup``'s class) and not ``backup``; counted by its terms
    alone, it covered nothing, and the coverage of 0 silenced BM25, which ranked the one English note
    holding *backup* (raw 5.47) 20th in hybrid (QA round 72). Measured (4 Dec, hybrid nDCG@10, ``python -m eval
    --set xquad --set dreamcontext --modes bm25,hybrid``, beside a change that moved BM25 by at most 0.001):
    XQuAD paragraphs of both languages, Turkish questions 0.900 → 0.906, English ones 0.928 → 0.933; en→tr
    0.880 → 0.883; Turkish typed without its letters 0.949 → 0.950; sentences tr→tr 0.836 → 0.835; the gold
    set and the other tracks unchanged.
    """
    if not terms:
        return 0.0
    classes = classes or {}
    members = list(dict.fromkeys(m for t in terms for m in classes.get(t, (t,))))
    marks = ",".join("?" * len(members))
    found = {t for (t,) in conn.execute(f"SELECT term FROM postings WHERE doc = ? AND term IN ({marks})"
                                         " AND tf_title + tf_description + tf_tags + tf_body > 0", [rowid, *members])}
    return sum(1 for t in terms if not found.isdisjoint(classes.get(t, (t,)))) / len(terms)


def _same_word(term: str, found: str) -> bool:
    """Whether ``found`` is another form of the query term ``term`` rather than a translation of it: the
    two agree, Turkish letters read as their ASCII look-alikes, up to the last letter of the shorter
    (a stem's final consonant may be hardened: ``guvenligi`` → ``güvenlik``; ``sunuç`` → ``sunucu``,
    another analysis of the same word); ``server`` → ``sunuç`` or ``güvenlik`` → ``securiti`` are
    translations."""
    n = max(min(len(term), len(found)) - 1, 2)
    return term.translate(TURKISH_TO_ASCII)[:n] == found.translate(TURKISH_TO_ASCII)[:n]


def _turkish_spelling(term: str, found: str) -> bool:
    """Whether ``found`` is the ASCII query term ``term`` spelled with Turkish letters (``kac`` → ``kaç``)."""
    return (bool(TURKISH_LETTERS.intersection(found)) and not TURKISH_LETTERS.intersection(term)
            and _same_word(term, found))


def query_is_turkish(plan: QueryPlan) -> bool:
    """Whether the query is written in Turkish: analysed as Turkish, or one of its ASCII words was found
    only in a Turkish spelling (``kac`` read as ``kaç``: Turkish typed without its letters, which the
    stopword test misses for about a fifth of XQuAD's questions). An English word replaced by its
    Turkish translation (``server`` → ``sunuç``) does not make the query Turkish."""
    return plan.turkish or any(_turkish_spelling(term, found) for term, found in plan.resolved.items())


def reads_other_language(conn, plan: QueryPlan, turkish: bool | None = None) -> bool:
    """Whether BM25 reads the query in the other language (Turkish and not Turkish, see
    :func:`query_is_turkish`), so that documents of that language are not ones it cannot read.

    Two things must hold. The query's terms reach into that language through the lexicon or a
    loanword: translations of the query's words (``plan.translated``: counted with them as one term,
    or as synonyms), or a query word replaced
    (``plan.resolved``) by a term, not another form of the word (:func:`_same_word`), that a
    document of the other language holds (``güvenliği`` → *security*; not ``sunucu``, which an
    English note quoting the Turkish word holds as typed); names shared by both languages are
    found as typed, not replaced, and do not count. And some of its terms (``plan.terms``: the
    query's words as BM25 scores them, after any replacement; synonyms aside) occur in documents
    of the other language, at least as many as in documents of its own: a Turkish question over a
    vault of English notes and a few Turkish ones is read in English, while over a vault of both
    languages in equal parts most of its words are found as typed in the Turkish notes, and the
    English ones are reached only through a translation here and there (which counts in rankScore
    alone).

    Args:
        conn: the index connection (up to three ``known_terms`` lookups: 0.03–0.07 ms on the
            real vault).
        plan: the analysed query (:func:`dreamdb.ranking.rank.plan_query`).
        turkish: :func:`query_is_turkish` of ``plan``, when the caller has it.

    Returns:
        bool; no constant is involved (measured: :func:`cross_language_documents`).
    """
    turkish = query_is_turkish(plan) if turkish is None else turkish
    if not plan.translated:
        # (another form of the word, which an English note quoting it may hold, is no translation)
        replaced = {found for term, found in plan.resolved.items() if not _same_word(term, found)}
        if not (replaced and known_terms(conn, replaced, in_turkish=not turkish)):
            return False
    other = known_terms(conn, plan.terms, in_turkish=not turkish)
    return bool(other) and len(other) >= len(known_terms(conn, plan.terms, in_turkish=turkish))


def cross_language_documents(conn, plan: QueryPlan, rowids) -> set[int]:
    """The documents among ``rowids`` written in another language than the query (Turkish and not Turkish,
    as the analyzer tells them: ``documents.turkish``; :func:`query_is_turkish`) that BM25 cannot read
    (:func:`dreamdb.fusion.imputed_bm25_ranks`): none when BM25 reads the query in their language,
    through the lexicon or a loanword (:func:`reads_other_language`).

    Measured with ``python -m eval --set dreamcontext --set xquad --modes hybrid`` (2 Dec 2026) against
    imputing for every document of the other language: gold recall@1 81.7 → 85.0, recall@5 95.0 →
    96.7, nDCG@10 0.846 → 0.873 (Turkish questions recall@1 50.0 → 75.0): a Turkish question
    translated into the English notes had every note's BM25 rank replaced by a better dense one,
    which made the fusion the dense ranking. XQuAD nDCG@10: paragraphs tr→en 0.848 → 0.882,
    sentences tr→en 0.739 → 0.771, en→tr 0.721 → 0.734, both languages 0.899 → 0.901 (Turkish
    questions) and 0.912 → 0.925 (English); lower: paragraphs en→tr 0.873 → 0.872 (full run of 2 Dec,
    07:47 UTC). Without the second condition of :func:`reads_other_language` (translations alone),
    both languages fell to 0.889 and 0.889 (gold nDCG@10 0.881); before an English word replaced by
    its Turkish translation stopped counting as a Turkish spelling (:func:`query_is_turkish`), English
    questions over both languages scored 0.919 and sentences en→tr 0.725.
    """
    rowids = list(rowids)
    if not rowids:
        return set()
    turkish = query_is_turkish(plan)
    if reads_other_language(conn, plan, turkish):
        return set()
    marks = ",".join("?" * len(rowids))
    return {r for r, tr in conn.execute(f"SELECT id, turkish FROM documents WHERE id IN ({marks})", rowids)
            if bool(tr) != turkish}


_QUERY_CACHE: dict[tuple[str, str], object] = {}
_QUERY_CACHE_MAX = 256


_WORD_RE = re.compile(r"[^\W_]+")
"""A word of the query as typed (the analyzer's letter and digit runs)."""


def dense_query_text(conn, plan: QueryPlan) -> str:
    """The query as the dense channel embeds it: for a query typed in Turkish without its letters
    (:func:`dreamdb.analyzer.typed_without_turkish_letters`: no Turkish letter, and more Turkish
    stopwords so typed, ``nasil``, than English ones), ``plan.text`` with each word that BM25 did
    not find as typed (``plan.resolved``) and whose Turkish analysis no Turkish note holds written
    with the letters meant
    (:func:`dreamdb.analyzer.turkish_spelling`: of its spellings that a Turkish note holds, the one
    that keeps vowel harmony: ``guvenligi`` → ``güvenliği``, ``sirasinda`` → ``sırasında``), and each
    Turkish stopword so typed with its letters when that spelling is the only one and no note holds
    the word as typed (``nasil`` → ``nasıl``); the text as typed otherwise.

    The embedding model reads ``guvenligi`` as a different, rarer string than ``güvenliği``, so a
    question typed on a keyboard without Turkish letters finds less than the same question spelled
    out, while the index's Turkish notes show which spelling was meant. Words a note holds as
    typed are kept (a loanword's own vowels, ``mezunu``, are not "harmonised"); English keywords
    (``wind turbine status``, whose ``turbine`` a Turkish note may hold as *türbin*) carry no
    Turkish stopword and are left alone. No constant is involved.
    Measured (``python -m eval --set xquad --modes hybrid,dense``, 2 Dec 2026), XQuAD Turkish
    questions typed without their letters → Turkish paragraphs, nDCG@10: dense 0.857 → 0.916,
    hybrid 0.935 → 0.951 (the same questions with their letters: dense 0.939, hybrid 0.960); no
    other track's query text changes (gold set included).

    Args:
        conn: the index connection (one ``known_terms`` lookup, for a query typed in Turkish without its letters).
        plan: the analysed query (:func:`dreamdb.ranking.rank.plan_query`).

    Returns:
        str: the text to embed as a ``query:``.
    """
    words = raw_tokens(plan.text)
    if not typed_without_turkish_letters(words):
        return plan.text
    # the words BM25 did not find as typed (it found another analysis, or, beyond MAX_QUERY_TERMS, did not look)
    unread = {w: stem(w, True) for term, w, _cap in query_words(plan.text, plan.turkish)
              if term in plan.resolved or term not in plan.terms}
    options = {w: turkish_spellings(w) for w in unread}
    stopwords = {w: TURKISH_STOPWORD_SPELLINGS[w] for w in set(words) if w in TURKISH_STOPWORD_SPELLINGS}
    wanted = {t for found in options.values() for _s, t in found} | set(unread.values()) | \
        {stem(w, True) for w in stopwords}
    known = known_terms(conn, wanted, in_turkish=True)
    spelled = {w: sp for w, sp in ((w, turkish_spelling(w, known)) for w, own in unread.items() if own not in known)
               if sp is not None}
    spelled.update((w, sp) for w, sp in stopwords.items() if stem(w, True) not in known)
    if not spelled:
        return plan.text

    def restore(match: re.Match) -> str:
        typed = match.group()
        restored = spelled.get(fold_case(typed))
        if restored is None:
            return typed
        upper = restored.replace("i", "İ").upper()  # Turkish capitals: i → İ, ı → I
        if typed.isupper() and len(typed) > 1:
            return upper
        return upper[0] + restored[1:] if typed[0].isupper() else restored

    return _WORD_RE.sub(restore, plan.text)


def clear_query_cache() -> None:
    """Forget the query embeddings :func:`query_vector` kept (the evaluation times each mode with its own)."""
    _QUERY_CACHE.clear()


def query_vector(embedder, text: str):
    """The query's embedding, float32[384], cached per (model, text) for the process (agents repeat queries)."""
    key = (embedder.model_id, text)
    vec = _QUERY_CACHE.get(key)
    if vec is None:
        vec = embedder.embed_queries([text])[0]
        if len(_QUERY_CACHE) >= _QUERY_CACHE_MAX:
            _QUERY_CACHE.pop(next(iter(_QUERY_CACHE)))
        _QUERY_CACHE[key] = vec
    return vec


def _ties_broken(fused: list[tuple], by_row: dict, *, keep_first: bool) -> list[tuple]:
    """``fused`` (``(rowid, fused score)``, best first) with documents of the same score (to
    :data:`dreamdb.ranking.signals.TIE_BITS` bits, :func:`~dreamdb.ranking.signals.tie_score`) in the order BM25's
    hits break ties: newest first (undated last), then the smaller ``doc_id``. The fusion functions break them by
    the key, a row id, which differs between two indexes of the same vault (QA round 66 M1: RRF's 1/(60+1) +
    1/(60+3) and 1/(60+3) + 1/(60+1) are the same float, and an edited and restored note changed the order).
    ``keep_first``: the pin guard's document stays first (it keeps its fused score, which need not lead)."""
    head, rest = (fused[:1], fused[1:]) if keep_first else ([], fused)

    def key(kv):
        r = by_row[kv[0]]
        return -S.tie_score(kv[1]), S.tie_order(r.date_days, r.doc_id)

    return head + sorted(rest, key=key)


def fusion_terms(info: dict, keys: list, bm_keys: list, dense_keys: list, bm_scores: dict, cos: dict) -> dict:
    """What the fused score of each of ``keys`` adds up from, for ``--explain`` (QA round 68 M2: the weights
    and ranks were not shown, so an RRF score could not be checked).

    Args:
        info: the fusion's ``info`` (:func:`dreamdb.fusion.adaptive_fusion`; ``method`` at least).
        keys: the documents to explain.
        bm_keys, dense_keys: each channel's candidates, best first.
        bm_scores, cos: BM25 rankScore and dense score of each channel's candidates.

    Returns:
        ``{key: terms}``; terms for ``relative``: ``{"bm25_normalised", "dense_normalised", "lambda"}``
        (rank_score = (1 − λ)·bm25_normalised + λ·dense_normalised; min-max over each channel's candidates, 0
        where a channel did not find the document); for ``rrf`` / ``rrf-plain``: ``{"bm25_rank", "bm25_weight",
        "dense_rank", "dense_weight", "k"}`` (rank_score = Σ weight/(k + rank) over the channels that ranked
        it; a rank is ``None`` where a channel did not; ``bm25_rank_imputed`` when it was taken from the dense
        channel, :func:`dreamdb.fusion.imputed_bm25_ranks`); ``None`` for ``dense`` (rank_score is the dense
        score itself). A pinned first hit keeps the fused score its terms add up to.
    """
    method = info["method"]
    if method == "relative":
        nb, nd = fusion.min_max(bm_scores), fusion.min_max(cos)
        return {key: {"bm25_normalised": round(nb.get(key, 0.0), 6), "dense_normalised": round(nd.get(key, 0.0), 6),
                      "lambda": info["lambda"]} for key in keys}
    if method not in ("rrf", "rrf-plain"):
        return {key: None for key in keys}
    ranks = info.get("bm25_ranks") or {k: r for r, k in enumerate(bm_keys, 1)}
    dense_ranks = {k: r for r, k in enumerate(dense_keys, 1)}
    w_bm25, w_dense = info["weights"]
    imputed = info.get("imputed", ())
    out = {}
    for key in keys:
        out[key] = {"bm25_rank": ranks.get(key), "bm25_weight": round(w_bm25, 6), "dense_rank": dense_ranks.get(key),
                    "dense_weight": w_dense, "k": info.get("k", fusion.RRF_K)}
        if key in imputed:
            out[key]["bm25_rank_imputed"] = True
    return out


def _unjudged_at_bm25_rank(conn, model_id: str, bm: list[Ranked], dense: list[tuple]) -> tuple[list[tuple], set]:
    """The dense ranking with each of BM25's candidates the dense channel holds no vector of (a changelog entry,
    never embedded; a note of a title alone) placed at its BM25 rank, with the score of the document the dense
    channel has at that rank, for a query with a time intent.

    The dense channel cannot judge a document it has no vector of, and in the fusion such a document had BM25's
    vote alone, against two votes for every embedded note: under a time intent ("what did we change last week"),
    whose answers are mostly changelog entries, hybrid put BM25's right entry below notes that only resembled the
    question (QA round 157-F: 40 judged time questions over the real vault, hybrid recall@5 0.625 against BM25's
    0.925, every loss an entry). Taking BM25's rank in both channels, the entry keeps the rank BM25's evidence
    gives it. Only under a time intent: for other questions an entry quoting a note's words is mostly a pointer to
    the note, which the dense channel judges better (docs/hybrid.md: the entries embedded, and this same imputation
    for every query, lowered the gold set's hybrid recall@1 81.7 → 75.0).

    Args:
        conn: index connection.
        model_id: the model whose vectors count.
        bm: BM25's candidates, best first.
        dense: ``[(documents.id, score)]`` best first.

    Returns:
        ``(dense ranking, the ids placed)``.
    """
    scores = dict(dense)
    candidates = [r.rowid for r in bm if r.rowid not in scores]
    if not candidates:
        return dense, set()
    from dreamdb.embeddings import store

    judged = store.documents_with_vectors(conn, model_id, candidates)
    unjudged = {d for d in candidates if d not in judged}
    if not unjudged:
        return dense, set()
    order = [d for d, _ in dense]
    for position, r in enumerate(bm):
        if r.rowid in unjudged:
            at = min(position, len(order))
            scores[r.rowid] = scores[order[at]] if at < len(order) else (scores[order[-1]] if order else 0.0)
            order.insert(at, r.rowid)
    return [(d, scores[d]) for d in order], unjudged


def hybrid_rank(conn, embedder, plan: QueryPlan, *, mode: str, top: int, now_days: float,
                filters: Filters, bm25_rank=None, dense_text: str | None = None, explain: bool = False) -> list[Ranked]:
    """Rank with the dense channel: ``hybrid`` (adaptive fusion), ``dense`` (cosine only) or ``rrf`` (plain RRF).

    Args:
        conn: index connection with sqlite-vec loaded and vectors refreshed.
        embedder: :class:`dreamdb.embeddings.model.Embedder`.
        plan: the analyzed query (:func:`dense_query_text` of it is embedded as a ``query:``).
        mode: ``hybrid``, ``dense`` or ``rrf``.
        top: result limit.
        now_days: the clock (days since epoch).
        filters: applied to both channels before the limit.
        bm25_rank: the BM25 ranking function to use (the index's engine); default the SQL engine.
        dense_text: :func:`dense_query_text` of ``plan``, when the caller has it (worked out here otherwise).
        explain: also work out every BM25 signal of the documents only the dense channel found, and
            what each fused score adds up from (``Ranked.fused_from``, :func:`fusion_terms`).

    Returns:
        list[Ranked] best first; ``rank_score`` is the fused score, ``score`` stays raw BM25,
        ``dense`` holds the dense score (cosine, language-centred by
        :mod:`dreamdb.embeddings.language` for chunks outside the index's main language)
        and ``fusion`` the method.
    """
    from dreamdb.embeddings import store

    bm25_rank = bm25_rank or (lambda p, **kw: rank(conn, p, **kw))
    bm = bm25_rank(plan, top=CANDIDATES, now_days=now_days, filters=filters) if plan.terms else []
    qvec = query_vector(embedder, dense_text if dense_text is not None else dense_query_text(conn, plan))
    allowed = _allowed_docs(conn, filters, now_days)
    centroids = store.load_centroids(conn, embedder.model_id)
    adjust = centroids.adjustments(qvec) if centroids is not None else {}
    centred: dict = {}
    dense = store.dense_search(conn, qvec, embedder.model_id, CANDIDATES, allowed_docs=allowed, lang_adjust=adjust,
                               best_lang=centred)
    by_row = {r.rowid: r for r in bm}
    cos = dict(dense)
    missing = [d for d, _ in dense if d not in by_row]
    by_row.update(_dense_only(conn, missing, now_days, plan, explain))
    if lost := [d for d in missing if d not in by_row]:
        # (QA round 97-B F1: a document row deleted by another program, its chunks kept, was "internal error: KeyError";
        # a DatabaseError is damage to Index._guarded, which rebuilds the index from the vault, its vectors carried over)
        from dreamdb.store.connect import DatabaseError

        raise DatabaseError(f"the index is damaged: {len(lost)} chunk(s) name a document it does not hold "
                            f"(documents.id {lost[0]})")
    if plan.window is not None:
        # Under a time intent the dense channel's scores carry its recency as BM25's rankScore does (a positive
        # score multiplied by it: the channel's order, and what relative fusion normalises); no other recency
        # enters them (SPEC §3)
        dense = [(d, c * by_row[d].recency if c > 0.0 else c) for d, c in dense]
        dense.sort(key=lambda dc: -dc[1])
    unjudged: set = set()
    if plan.window is not None and mode == "hybrid" and bm:
        dense, unjudged = _unjudged_at_bm25_rank(conn, embedder.model_id, bm, dense)
    scores = dict(dense)  # (what the fusion reads; a hit's dense signal stays its cosine, cos)
    # Documents of one dense score (the same chunk text in two notes: a copy, or a shared title and description) in
    # the order BM25 breaks ties, not by row id, which the order files were indexed in decides: a rebuild of the same
    # vault reordered the fused results (QA round 125-B F1)
    dense = _ties_broken(dense, by_row, keep_first=False)
    bm_keys = [r.rowid for r in bm]
    bm_scores = {r.rowid: r.rank_score for r in bm}
    dense_keys = [d for d, _ in dense]
    if mode == "dense":
        fused, info = [(d, c) for d, c in dense], {"method": "dense"}
    elif mode == "rrf":
        fused, info = fusion.weighted_rrf([bm_keys, dense_keys], [1.0, 1.0]), {"method": "rrf-plain",
                                                                               "weights": [1.0, 1.0]}
    else:
        top_raw = max((r.score for r in bm), default=0.0)
        # The part of the query BM25's evidence covers: its terms known to the corpus, and at most
        # those its best match contains (see dreamdb.fusion).
        coverage = term_coverage(conn, plan.terms)
        if bm:  # BM25's top hit by rankScore, the one the pin guard keeps first; under a time intent the best raw
            # match, top_raw's: the window reorders BM25's list by date, and the fusion's trust in BM25 reads its
            # evidence for the words (QA round 157-F F1: naming the window made the entry it brought first, holding
            # 6 of the question's 10 words, cut the coverage 1.0 → 0.6 and BM25's say with it)
            lead = bm[0] if plan.window is None else max(bm, key=lambda r: r.score)
            coverage = min(coverage, top_match_coverage(conn, lead.rowid, plan.terms, class_members(plan)))
        other_language = cross_language_documents(conn, plan, set(bm_keys) | set(dense_keys))
        fused, info = fusion.adaptive_fusion(bm_keys, bm_scores, top_raw, dense_keys, scores, term_coverage=coverage,
                                             cross_language=other_language)
        info["coverage"] = coverage
    fused = _ties_broken(fused, by_row, keep_first=bool(info.get("pinned")))
    method = info["method"] + ("+pin" if info.get("pinned") else "") + ("+partial" if info.get("partial") else "")
    imputed = info.get("imputed", ())
    out = []
    terms = fusion_terms(info, [key for key, _ in fused[:top]], bm_keys, dense_keys, bm_scores, scores) if explain else {}
    pinned = fused[0][0] if fused and info.get("pinned") else None  # (kept first: _ties_broken)
    for key, value in fused[:top]:
        out.append(replace(by_row[key], rank_score=value, dense=cos.get(key), dense_centred=centred.get(key),
                           fusion=method + ("+imputed" if key in imputed else "") + ("+unjudged" if key in unjudged
                                                                                     else ""),
                           bm25_coverage=info.get("coverage"), fused_from=terms.get(key), _pinned=key == pinned))
    return out
