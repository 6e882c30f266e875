"""In-memory BM25 engine for long-lived processes (the Python API, evaluations, servers).

Same formulas, same signals and same tie-breaking as the SQL engine of
:mod:`dreamdb.ranking.rank`, evaluated with numpy over arrays cached in memory:

* per document (loaded once per index generation): field lengths, date,
  the static multipliers (status × type × confidence), identity eligibility;
* per term (on first use, and every posting at once once an index state has
  served :data:`PRELOAD_AFTER_QUERIES` queries, for indexes of up to
  :data:`PRELOAD_MAX_TOKENS` tokens; kept until the index changes): the
  positions of the documents containing it and, with its IDF
  folded in, its BM25 term-frequency part tf·(k1+1)/(tf + k1·(1 − b + b·dl/avgdl)),
  its BM25F saturation (Robertson, Zaragoza & Taylor 2004) and whether it is
  in the slug/title.

A query then costs one call of the C accumulator (:mod:`dreamdb.ranking._kernel`,
compiled at install where a C compiler is present): a term-at-a-time pass over
the query's postings that touches only the documents they reach, bounds each
one's rankScore and keeps those within reach of the top; or, without it, about
twenty numpy passes doing the same (sums per document with np.bincount; then, on
the candidates alone, the bound and one partition), with the same floats. Then
exact arithmetic on the few documents that bound lets through, in the same call
of the kernel (``ranked_top``) or in Python (the date string, status and static
factors of the returned documents are filled in by :meth:`dreamdb.api.Index._hits`
with the rest of each hit).
A translated query word counts with its translation as one term in rankScore, a class
(:func:`dreamdb.ranking.rank.class_members`): its postings are its members' merged, their term
frequencies (kept per field with every posting once all are loaded) summed per document, weighed with
the class's IDF (the kernel's ``class_postings``, else numpy; kept until the index changes).
A cold CLI process keeps the SQL engine (no numpy import), a warm process
answers from here. ``tests/test_memory_engine.py`` checks that both engines
return the same documents with the same scores.
"""

from __future__ import annotations

from itertools import accumulate

import numpy as np

from dreamdb.cognates import term_heads
from dreamdb.config import KERNEL_ENV, kernel_switch  # noqa: F401 - KERNEL_ENV: this module's name for it
from dreamdb.ranking import bm25 as F
from dreamdb.ranking import signals as S
from dreamdb.ranking.rank import (HIT_COLUMNS, Filters, QueryPlan, Ranked, class_members, corpus_stats,
                                  document_frequencies, held_spellings, known_terms, superseded_by)
from dreamdb.store.connect import read_snapshot

try:  # the C accumulator (dreamdb/ranking/_kernel.c), built at install time where a C compiler is present
    from dreamdb.ranking import _kernel as KERNEL
except ImportError:
    KERNEL = None


_FIELDS = ("title", "description", "tags", "body")
_NO_FILTERS = Filters()
_MIN_RECENCY = min(S.RECENCY_FLOOR, S.RECENCY_UNKNOWN) * (1.0 - 1e-9)
"""Lowest recency multiplier, less a margin for rounding: the pruning bound of :meth:`MemoryEngine.rank`."""

PRELOAD_AFTER_QUERIES = 2
"""Queries an index state serves before every posting is loaded at once (:meth:`MemoryEngine.preload`):
until then each query loads its own terms' postings (a few ms). A process that changes the vault
between queries (an agent's ``remember`` before each recall) thus never pays for loading every
posting (≈ 0.3 s on the real vault, at each change), and one serving many queries pays it once.
dreamdb's own choice, not tuned: a state that has served two rankings (empty-result notes rank too)
is taken to be one a process keeps querying (a server, an evaluation)."""

PRELOAD_BATCH = 65_536
"""Postings read at a time by a preload (:meth:`MemoryEngine._preload`): about 20 MB of Python tuples at once, however
large the index."""

PRELOAD_MAX_TOKENS = 6_000_000
"""Indexes of at most this many tokens (documents × average length, from ``corpus_stats``: free to read,
and never fewer than the postings rows, typically ≈ 3× as many) are loaded whole once an index state
has served :data:`PRELOAD_AFTER_QUERIES` queries (≈ 2 s and ≈ 100 MB at the cap); larger ones load
each term's postings on first use only."""


def _near_top(bound, kept, top: int, min_recency: float = _MIN_RECENCY):
    """Positions (int64[k]) of the documents whose rankScore bound ``bound`` · ``kept`` (float64[m] each:
    base + identity, and the static factor, 0 when filtered out) is positive and reaches ``min_recency`` (the lowest
    recency multiplier: :data:`_MIN_RECENCY`, or a time intent's, :meth:`MemoryEngine._min_recency`)
    × the ``top``-th largest: the only documents that can make the top (exact).

    The ``top``-th largest is selected among the bounds of at least half the largest one when
    ``top`` of them reach it (then they hold the whole top, so the value is exact), else among all
    positive bounds: np.partition over a few elements instead of every candidate.
    """
    upper = bound * kept
    if not len(upper):
        return upper.nonzero()[0]
    high = upper >= upper.max() * 0.5
    pool = upper[high]
    if len(pool) < top:
        pool = upper[upper > 0.0]
        if len(pool) <= top:
            return (upper > 0.0).nonzero()[0]
    kth = np.partition(pool, len(pool) - top)[len(pool) - top]
    return (upper >= kth * min_recency).nonzero()[0] if kth > 0 else (upper > 0.0).nonzero()[0]


class MemoryEngine:
    """Caches of one index connection; reloads itself when the index changes.

    Args:
        conn: the index connection (the engine reads from it; it never writes).
        max_cached_terms: posting arrays kept in memory (least recently loaded dropped first).
        kernel: ``True`` sums postings with the C accumulator (ImportError where it was not built),
            ``False`` with numpy passes, ``None`` with the accumulator where it was built unless the
            environment says ``DREAMDB_KERNEL=0``, else with numpy passes. Both give the same rankings,
            float for float.

    Raises:
        ImportError: ``kernel=True`` where the accumulator was not built.
        UsageError: ``DREAMDB_KERNEL`` neither on nor off.
    """

    def __init__(self, conn, *, max_cached_terms: int = 50_000, kernel: bool | None = None) -> None:
        self.conn = conn
        self.max_cached_terms = max_cached_terms
        #: the C accumulator's module when it is used (``kernel`` None: when it was built, unless
        #: ``DREAMDB_KERNEL=0``), else ``None`` (the numpy passes: same rankings, same floats; ``tests/test_kernel.py``).
        if kernel is None:
            kernel = KERNEL is not None and kernel_switch()
        elif kernel and KERNEL is None:
            raise ImportError("dreamdb.ranking._kernel was not built (no C compiler at install time?)")
        self.kernel = KERNEL if kernel else None
        #: with the kernel, rank its candidates in C too (``ranked_top``: the same floats and order as
        #: the Python loop of :meth:`rank`, which ``False`` keeps; ``tests/test_kernel.py`` compares them)
        self.rank_in_kernel = True
        self._order = None
        self._generation = None
        self._probe = None
        self._loanword_heads: frozenset[str] | None = None
        self._terms: dict[str, tuple] = {}
        self._classes: dict[tuple[str, ...], tuple] = {}  # class members → as _term gives a term (see _class)
        self._filter_cache: dict = {}
        #: ``{(word, capitalised, Turkish query, spelled out): the index term it resolves to, or None}``
        #: (filled by :func:`dreamdb.ranking.rank.plan_query`; emptied when the index changes).
        self.resolved_words: dict[tuple, str | None] = {}
        #: ``{documents.id: row of HIT_COLUMNS}``: every document's when the index is preloaded, else those
        #: returned so far (filled by :meth:`dreamdb.api.Index._hits`); cleared when the index changes.
        self.hit_metadata: dict[int, tuple] = {}
        #: ``{documents.id: the row as prepared for a Hit}`` (filled and read by :meth:`dreamdb.api.Index._hits`).
        self.hit_prepared: dict[int, tuple] = {}
        self.superseded_by: dict[str, str] = {}
        self._served = 0  # rankings served since the index state was loaded
        self.frontmatter_unread: tuple | None = None  # (probe, {path: why}): dreamdb.api's, read once per state
        self._preload_due = False  # every posting is to be loaded at once (small enough, not yet done)
        #: while true, the preload a state is due after :data:`PRELOAD_AFTER_QUERIES` queries waits (not
        #: :meth:`preload`): :class:`dreamdb.api.Index` sets it while another process's write lock kept the read's
        #: sync from running, so that the state it would load is about to be replaced (QA round 147-E F5: a recall
        #: under `sync --force` elsewhere took 2.8–3.3 s, the lock's 1.5 s wait and then the preload)
        self.hold_preload = False

    # -- loading ------------------------------------------------------------------
    def _current_generation(self):
        """The key of the index state the caches are loaded from: the sync's generation count and random token (no
        other state of any index has it: a count and corpus statistics alone were met again by an older copy restored
        into the file and synced once; QA round 152-C F1), and the corpus statistics (an index of an older dreamdb
        has no token until its next sync that changes a document). Read when the change probe moved: ≈ 12 µs."""
        row = self.conn.execute(
            "SELECT (SELECT value FROM meta WHERE key = 'generation'), (SELECT value FROM meta WHERE key ="
            " 'generation_token'), n_docs, avg_len FROM corpus_stats WHERE id = 1"
        ).fetchone()
        return row if row is not None else corpus_stats(self.conn)  # raises: the index is damaged

    def refresh(self) -> None:
        """Bring the caches in line with the index if it changed (a cheap probe when it did not)."""
        self._ensure_loaded()

    def _ensure_loaded(self) -> None:
        # Cheap change detection first (no transaction): PRAGMA data_version moves when another
        # connection commits, total_changes when this one writes. On a change, one snapshot for the
        # probe and every table the caches are built from: a sync committing in between would leave
        # postings of documents the document arrays do not hold.
        if self._generation is not None and self.conn.in_transaction:
            # Inside a caller's snapshot (a ranking read term by term): its first read fixes the state
            # every later read sees, so it must come before the probe. A probe read first, then a
            # commit elsewhere, then the first read of postings would mix two states.
            self.conn.execute("SELECT 1 FROM meta LIMIT 1").fetchall()
        if self._generation is not None and self._probe == self._read_probe():
            if self._preload_due and self._served >= PRELOAD_AFTER_QUERIES and not self.hold_preload:
                self._preload_unchanged()
            return
        with read_snapshot(self.conn):
            self._load()

    def preload(self) -> None:
        """Load every posting of the index now (if it has at most :data:`PRELOAD_MAX_TOKENS` tokens), so
        that no later query pays for it; done by itself once an index state has served
        :data:`PRELOAD_AFTER_QUERIES` queries (:meth:`dreamdb.api.Index.warm` calls it)."""
        self._ensure_loaded()
        if self._preload_due:
            self._preload_unchanged()
        if self._slices is not None and self._has_non_turkish:
            _ = self.loanword_heads  # (what a Turkish query's first loanword lookup would build: ≈ 5 ms)

    def _preload_unchanged(self) -> None:
        """:meth:`_preload` in a snapshot of the state the document arrays were loaded from; nothing when
        the index changed since (the next probe sees the change and reloads, with a preload due again)."""
        with read_snapshot(self.conn):
            gen = self._current_generation()  # the snapshot's first read, then the probe: unchanged since
            if gen != self._generation or self._read_probe() != self._probe:  # the arrays' state, or not
                return
            self._preload()
            self.hit_metadata.update((r[0], r[1:]) for r in self.conn.execute(f"SELECT id, {HIT_COLUMNS} FROM documents"))
            self.hit_prepared.clear()  # Index._hits then prepares every document's row at once
            self._preload_due = False

    def _read_probe(self) -> tuple:
        return self.conn.execute("PRAGMA data_version").fetchone()[0], self.conn.total_changes

    @property
    def self_contained(self) -> bool:
        """Whether a ranking and its hits' rows are read from the caches alone (the index was preloaded:
        no statement runs between the change probe and the hits, so they describe one state)."""
        return self._generation is not None and self._slices is not None

    def _load(self) -> None:
        probe = self._read_probe()
        if probe == self._probe and self._generation is not None:
            return
        self._probe = probe
        gen = self._current_generation()
        if gen == self._generation:
            return
        self._terms.clear()
        self._classes.clear()
        self._filter_cache.clear()
        self.resolved_words.clear()
        self.hit_metadata.clear()
        self.hit_prepared.clear()
        rows = self.conn.execute(
            "SELECT id, doc_id, type, date_days, status, is_capture, confidence, identity_boost, level, expires_days,"
            " len_title, len_description, len_tags, len_body, length(date) > 10 FROM documents ORDER BY id"
        ).fetchall()
        n = len(rows)
        self.rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        self.rowid_list = [r[0] for r in rows]
        self.doc_ids = [r[1] for r in rows]
        self._order = None  # see _id_order
        self.types = np.array([r[2] for r in rows], dtype=str)
        self.date_days = np.array([np.nan if r[3] is None else r[3] for r in rows], dtype=np.float64)
        self.types_list = [r[2] for r in rows]
        self.date_days_list = self.date_days.tolist()
        self.timed = np.fromiter((bool(r[14]) for r in rows), dtype=bool, count=n)  # dated with a time of day
        self.timed_list = self.timed.tolist()
        self.static = np.array([S.status_factor(r[4]) * S.type_factor(r[2], bool(r[5])) * S.confidence_factor(r[6])
                                for r in rows], dtype=np.float64)
        self.static_list = self.static.tolist()
        # The accumulator's scratch arrays (C kernel only): zeros between queries, each query restores them.
        if self.kernel is not None:
            self._acc, self._marks, self._touched = np.zeros((n, 4)), np.zeros(n, dtype=np.uint8), np.empty(n, dtype=np.int64)
        self.identity_ok = np.array([bool(r[7]) for r in rows], dtype=bool)
        self._identity_f = self.identity_ok.astype(np.float64)
        self.levels = np.array([r[8] for r in rows], dtype=np.int64)
        # The last instant each document is kept (inf: never expires): the instant it expires (expires_days; a date
        # alone: 00:00 UTC of the next day) less a step, so that `expires >= now_days` here and in the C kernel keeps
        # what SQL's `expires_days > :now_days` keeps (Filters.sql; QA round 145-E F2: a date alone was kept at
        # 00:00 of the next day)
        expires = np.array([np.inf if r[9] is None else r[9] for r in rows], dtype=np.float64)
        self.expires = np.where(np.isfinite(expires), np.nextafter(expires, -np.inf), expires)
        self._has_expiry = bool(np.isfinite(self.expires).any())
        self._turkish_doc = np.zeros(n, dtype=bool)
        turkish_ids = np.fromiter((r[0] for r in self.conn.execute("SELECT id FROM documents WHERE turkish")), dtype=np.int64)
        self._turkish_doc[np.searchsorted(self.rowids, turkish_ids)] = True
        self._has_turkish = bool(len(turkish_ids))
        self._has_non_turkish = len(turkish_ids) < n
        #: ``{changelog doc_id: doc_id of the newest entry superseding it}`` (read by Index._hits).
        self.superseded_by = superseded_by(self.conn)
        self.lens = np.array([r[10:14] for r in rows], dtype=np.float64).reshape(n, 4)
        self.stats = corpus_stats(self.conn)
        self.n_docs = self.stats["n_docs"]
        b = F.B
        avg = self.stats["avg_len"]
        self._raw_norm = F.K1 * ((1.0 - b) + (b * self.lens.sum(axis=1) / avg if avg > 0 else 0.0))
        self._field_norm = np.empty((n, 4))
        for j, f in enumerate(_FIELDS):
            a = self.stats[f"avg_len_{f}"]
            self._field_norm[:, j] = (1.0 - b) + (b * self.lens[:, j] / a if a > 0 else 0.0)
        self._field_w = np.array([F.FIELD_WEIGHTS[f] for f in _FIELDS])
        self._slices: dict[str, tuple[int, int, int]] | None = None  # term → (start, end, df)
        self._cooccurrence_marks = None  # the C kernel's scratch for cooccurrence (uint8[n], zeros)
        self._class_scratch = None  # the C kernel's scratch for class_postings (uint8[n], int64[n, 4]: zeros)
        self._loanword_heads: frozenset[str] | None = None
        tokens = self.n_docs * avg  # COUNT(*) over postings would scan millions of rows on a big index
        self._preload_due = 0 < tokens <= PRELOAD_MAX_TOKENS  # after PRELOAD_AFTER_QUERIES queries
        self._served = 0
        self._generation = gen

    def _derive(self, arr, idf):
        """Per-posting arrays from rows ``[doc, tf_title, tf_description, tf_tags, tf_body, tf_slug]`` (int64[m, 6])
        and each row's term IDF (float64[m]): ``(positions int64[m], weights float64[3, m])``, the weights'
        rows being idf·raw tf part, idf·BM25F saturation and 1.0 where the term is in the slug/title."""
        pos = np.searchsorted(self.rowids, arr[:, 0]).astype(np.int64, copy=False)
        weights = self._weigh(pos, arr[:, 1:5], idf)
        weights[2] = (arr[:, 1] > 0) | (arr[:, 5] > 0)
        return pos, weights

    def _weigh(self, pos, tfs, idf):
        """float64[3, m]: :meth:`_derive`'s weights of postings at document positions ``pos`` (int64[m])
        with term frequencies ``tfs`` (int[m, 4]: title, description, tags, body); the third row is left
        to the caller."""
        tfs = tfs.astype(np.float64)
        tf = tfs.sum(axis=1)
        weights = np.empty((3, len(pos)))
        weights[0] = idf * np.where(tf > 0, tf * (F.K1 + 1.0) / (tf + self._raw_norm[pos]), 0.0)
        pseudo = (tfs * self._field_w / self._field_norm[pos]).sum(axis=1)
        weights[1] = idf * np.where(pseudo > 0, pseudo * (F.K1 + 1.0) / (pseudo + F.K1), 0.0)  # BM25F saturation
        return weights

    def _preload(self) -> None:
        """Load every posting in one pass (rows come in (term, doc) primary-key order); IDF is folded in per term.

        Called in a read snapshot (:meth:`_preload_unchanged`): each term's count of postings is read first, then the
        postings without their term, :data:`PRELOAD_BATCH` rows at a time into one int64[n, 6] array. Read whole, with
        the term of each row, a generated vault of 20,000 notes (3.2 M postings) peaked at 1.5 GB and took 7 s (QA
        round 132-E F4): each row was a tuple of seven objects, twice."""
        grouped = self.conn.execute("SELECT term, COUNT(*) FROM postings GROUP BY term ORDER BY term").fetchall()
        terms = [g[0] for g in grouped]
        ends = np.cumsum(np.fromiter((g[1] for g in grouped), dtype=np.int64, count=len(grouped))).tolist()
        starts = [0] + ends[:-1]
        arr = np.empty((ends[-1] if ends else 0, 6), dtype=np.int64)
        cursor = self.conn.execute(
            "SELECT doc, tf_title, tf_description, tf_tags, tf_body, tf_slug FROM postings ORDER BY term, doc")
        filled = 0
        for batch in iter(lambda: cursor.fetchmany(PRELOAD_BATCH), []):
            arr[filled:filled + len(batch)] = batch
            filled += len(batch)
        assert filled == len(arr), (filled, len(arr))  # (one snapshot: the counts are the rows')
        has_tf = (arr[:, 1:5].sum(axis=1) > 0).astype(np.int64)
        df = np.add.reduceat(has_tf, starts).tolist() if terms else []
        idf_term = np.fromiter((F.idf(self.n_docs, d) for d in df), dtype=np.float64, count=len(df))
        self._pos, self._weights = self._derive(arr, np.repeat(idf_term, np.subtract(ends, starts)))
        # each posting's term frequency per field (title, description, tags, body): classes (_class)
        # sum them across their terms; 16 bits a number unless a term occurs more often in one field
        tfs = arr[:, 1:5]
        self._tf = tfs.astype(np.uint16 if not len(tfs) or tfs.max() <= np.iinfo(np.uint16).max else np.int64)
        self._slices = {t: (a, b, d) for t, a, b, d in zip(terms, starts, ends, df)}
        self._text_terms = frozenset(t for t, d in zip(terms, df) if d)  # df 0: in slugs only
        # The terms in the text of a document analysed as Turkish, and of one analysed otherwise: query
        # planning asks which language's notes hold a word (:meth:`known` with ``in_turkish``).
        if terms:
            turkish = self._turkish_doc[self._pos]
            in_tr = np.add.reduceat(has_tf & turkish, starts).tolist()
            in_other = np.add.reduceat(has_tf & ~turkish, starts).tolist()
        else:
            in_tr = in_other = []
        self._turkish_text_terms = frozenset(t for t, c in zip(terms, in_tr) if c)
        self._other_text_terms = frozenset(t for t, c in zip(terms, in_other) if c)

    def _term(self, term: str, idf: float | None = None):
        """``(positions int64[m], weights float64[3, m], df)`` of one term (weights as in :meth:`_derive`; ``df``
        this index's). ``idf``: the weights' IDF where it is not this index's own (pooled statistics,
        :class:`dreamdb.ranking.rank.Collection`): computed for this query, not kept."""
        if idf is not None:
            return self._pooled_term(term, idf)
        cached = self._terms.get(term)
        if cached is not None:
            return cached
        if self._slices is not None:
            a, b, df = self._slices.get(term, (0, 0, 0))
            cached = self._terms[term] = (self._pos[a:b], self._weights[:, a:b], df)
            return cached
        rows = self.conn.execute(
            "SELECT doc, tf_title, tf_description, tf_tags, tf_body, tf_slug FROM postings WHERE term = ?", (term,)
        ).fetchall()
        if rows:
            arr = np.array(rows, dtype=np.int64)
            df = int(np.count_nonzero(arr[:, 1:5].sum(axis=1)))
            pos, weights = self._derive(arr, F.idf(self.n_docs, df))
        else:
            pos, weights, df = np.empty(0, dtype=np.int64), np.empty((3, 0)), 0
        if len(self._terms) >= self.max_cached_terms:
            self._terms.pop(next(iter(self._terms)))
        cached = self._terms[term] = (pos, weights, df)
        return cached

    def _pooled_term(self, term: str, idf: float):
        """:meth:`_term` weighed with ``idf``: its postings' weights computed as :meth:`_derive` computes them (the
        same floats as an index whose own IDF ``idf`` is), the slug/title row as cached."""
        if self._slices is not None:
            a, b, df = self._slices.get(term, (0, 0, 0))
            pos = self._pos[a:b]
            if not df:  # (slug-only postings: weights 0 whatever the IDF)
                return pos, self._weights[:, a:b], df
            weights = self._weigh(pos, self._tf[a:b], idf)
            weights[2] = self._weights[2, a:b]
            return pos, weights, df
        rows = self.conn.execute(
            "SELECT doc, tf_title, tf_description, tf_tags, tf_body, tf_slug FROM postings WHERE term = ?", (term,)
        ).fetchall()
        if not rows:
            return np.empty(0, dtype=np.int64), np.empty((3, 0)), 0
        arr = np.array(rows, dtype=np.int64)
        df = int(np.count_nonzero(arr[:, 1:5].sum(axis=1)))
        pos, weights = self._derive(arr, idf if df else 0.0)
        return pos, weights, df

    def _pooled_terms(self, terms: list[str], idf: dict[str, float]) -> dict[str, tuple]:
        """:meth:`_pooled_term` of each of ``terms`` held in a BM25 field (``{term: IDF}`` in ``idf``) of a preloaded
        index, weighed in one numpy pass (the same floats; a pass a term cost a 600-word prompt over four vaults
        ≈ 35 ms); ``{}`` when the postings are not all loaded."""
        if self._slices is None:
            return {}
        get = self._slices.get
        held = [(t, s) for t in dict.fromkeys(terms) if (s := get(t)) is not None and s[2]]
        if not held:
            return {}
        lengths = [b - a for _t, (a, b, _df) in held]
        at = np.concatenate([np.arange(a, b) for _t, (a, b, _df) in held])
        pos = self._pos[at]
        weights = self._weigh(pos, self._tf[at], np.repeat([idf[t] for t, _s in held], lengths))
        weights[2] = self._weights[2, at]
        ends = list(accumulate(lengths))
        return {t: (pos[e - k:e], weights[:, e - k:e], s[2]) for (t, s), k, e in zip(held, lengths, ends)}

    def _class(self, members: tuple[str, ...], idf: float | None = None):
        """``(positions int64[m], weights float64[3, m], df)`` of a class of terms
        (:func:`dreamdb.ranking.rank.class_members`): its members' postings with their term frequencies
        summed per document and field, its IDF that of the documents holding any of them; the slug/title
        row is 0 (identity coverage counts the query term itself). From the term frequencies in memory
        once every posting is (:meth:`_preload`), else read from the index (a statement, in the
        caller's snapshot: :meth:`rank` holds one); kept until the index changes. ``idf``: the weights' IDF where
        it is not this index's own (pooled statistics): computed by numpy (the C kernel's ``class_postings`` computes
        this index's), not kept."""
        cached = self._classes.get(members) if idf is None else None
        if cached is not None:
            return cached
        build = getattr(self.kernel, "class_postings", None) if idf is None else None  # (a module built before
        # classes has none)
        spans = [s for s in map(self._slices.get, members) if s is not None and s[1] > s[0]] \
            if self._slices is not None else []
        if self._slices is not None and build is not None:  # merged and weighed in C: the same doubles
            total = sum(b - a for a, b, _df in spans)
            if self._class_scratch is None:
                n = len(self.rowids)
                self._class_scratch = (np.zeros(n, dtype=np.uint8), np.zeros((n, 4), dtype=np.int64))
            pos, weights = np.empty(total, dtype=np.int64), np.empty(3 * total)
            k, df = build(self._pos, self._tf, spans, self._raw_norm, self._field_norm, self._field_w, self.n_docs,
                          F.K1, *self._class_scratch, self._touched, pos, weights)
            pos, weights = pos[:k], weights[:3 * k].reshape(3, k)
        else:
            if self._slices is not None:
                pos = np.concatenate([self._pos[a:b] for a, b, _df in spans]) if spans else np.empty(0, dtype=np.int64)
                tfs = np.concatenate([self._tf[a:b] for a, b, _df in spans]) if spans else np.empty((0, 4), dtype=np.int64)
                if len(spans) > 1:  # each term's postings are in document order: merged, a document's summed
                    order = np.argsort(pos, kind="stable")
                    pos, tfs = pos[order], tfs[order].astype(np.int64)
                    starts = np.flatnonzero(np.concatenate(([True], pos[1:] != pos[:-1])))
                    pos, tfs = pos[starts], np.add.reduceat(tfs, starts, axis=0)
            else:
                arr = np.array(self.conn.execute(
                    "SELECT doc, SUM(tf_title), SUM(tf_description), SUM(tf_tags), SUM(tf_body) FROM postings"
                    f" WHERE term IN ({','.join('?' * len(members))}) GROUP BY doc ORDER BY doc", members).fetchall(),
                    dtype=np.int64).reshape(-1, 5)
                pos, tfs = np.searchsorted(self.rowids, arr[:, 0]).astype(np.int64, copy=False), arr[:, 1:5]
            df = int(np.count_nonzero(tfs.sum(axis=1)))
            if df:
                weights = self._weigh(pos, tfs, F.idf(self.n_docs, df) if idf is None else idf)
                weights[2] = 0.0
        cached = (pos, weights, df) if df else (np.empty(0, dtype=np.int64), np.empty((3, 0)), 0)
        if idf is not None:
            return cached
        if len(self._classes) >= 1000:
            self._classes.clear()
        self._classes[members] = cached
        return cached

    def _postings(self, terms: list[str], term=None):
        """Every posting of ``terms``, concatenated: ``(positions int64[m], weights float64[3, m])``.

        A preloaded index concatenates slices of the flat arrays (no per-term objects are kept, so a
        term's first query costs what its later ones do). ``term``: what gives a term's postings where
        not :meth:`_term` (pooled statistics: :meth:`rank`).
        """
        if term is not None:
            parts = [term(t) for t in terms]
            return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts], axis=1)
        if self._slices is not None:
            get = self._slices.get
            spans = [s for s in map(get, terms) if s is not None and s[1] > s[0]]
            if len(spans) == 1:
                a, b, _df = spans[0]
                return self._pos[a:b], self._weights[:, a:b]
            if not spans:
                return np.empty(0, dtype=np.int64), np.empty((3, 0))
            return (np.concatenate([self._pos[a:b] for a, b, _df in spans]),
                    np.concatenate([self._weights[:, a:b] for a, b, _df in spans], axis=1))
        parts = [self._term(t) for t in terms]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts], axis=1)

    # -- vocabulary (query planning, :func:`dreamdb.ranking.rank.plan_query`) ------
    # They read the caches as of the last probe: callers :meth:`refresh` first (Index.recall does).
    @property
    def has_turkish(self) -> bool:
        """Whether any document was analysed as Turkish."""
        if self._generation is None:
            self._ensure_loaded()
        return self._has_turkish

    @property
    def has_non_turkish(self) -> bool:
        """Whether any document was not analysed as Turkish."""
        if self._generation is None:
            self._ensure_loaded()
        return self._has_non_turkish

    @property
    def loanword_heads(self) -> frozenset[str] | None:
        """:func:`dreamdb.cognates.term_heads` of the terms in the text of a document not analysed as
        Turkish (see :func:`dreamdb.ranking.rank.loanword_terms`); ``None`` until every posting is
        loaded. Built at first use for each index state, or by :meth:`preload` (≈ 5 ms for the real vault's 10,478 such
        terms, 3 Dec)."""
        if self._generation is None:
            self._ensure_loaded()
        if self._slices is None:
            return None
        if self._loanword_heads is None:
            self._loanword_heads = term_heads(self._other_text_terms)
        return self._loanword_heads

    def known(self, terms, *, in_turkish: bool | None = None) -> set[str]:
        """The subset of ``terms`` (any iterable of str) found in some document's text (as
        :func:`dreamdb.ranking.rank.known_terms`)."""
        if self._generation is None:
            self._ensure_loaded()
        if self._slices is None:
            return known_terms(self.conn, terms, in_turkish=in_turkish)
        if in_turkish is None:
            return set(self._text_terms.intersection(terms))
        return set((self._turkish_text_terms if in_turkish else self._other_text_terms).intersection(terms))

    def spellings(self, terms) -> dict[str, dict[str, int]]:
        """The notes' words of ``terms``, read from the documents' text (:func:`dreamdb.ranking.rank.held_spellings`:
        the index keeps no words, nor this engine)."""
        return held_spellings(self.conn, terms)

    def frequencies(self, terms) -> dict[str, int]:
        """``{term: df}`` of the ``terms`` the index holds, from the postings in memory once every one is loaded
        (:attr:`self_contained`), as :func:`dreamdb.ranking.rank.document_frequencies` reads them; else from it."""
        if self._slices is None:
            return document_frequencies(self.conn, list(terms))
        get = self._slices.get
        return {t: s[2] for t in terms if (s := get(t)) is not None}

    def class_frequency(self, members: tuple[str, ...]) -> int:
        """The df of a class of terms (:meth:`_class`), as :func:`dreamdb.ranking.rank.class_frequencies` counts it."""
        return self._class(members)[2]

    def cooccurrence(self, terms, anchors) -> tuple[int, int, dict[str, tuple[int, int]]]:
        """Document counts for :func:`dreamdb.ranking.rank.in_context`, as
        :func:`dreamdb.ranking.rank.cooccurrence_counts` gives them, from the postings in memory (the C
        kernel's ``cooccurrence`` over a preloaded index, else numpy)."""
        if self._generation is None:
            self._ensure_loaded()
        n_docs = len(self.rowid_list)
        if not terms or not anchors:
            return n_docs, 0, {}
        terms, anchors = set(terms), set(anchors)
        count = getattr(self.kernel, "cooccurrence", None)  # (a module built before it had none)
        if count is not None and self._slices is not None:
            get = self._slices.get
            held = [(t, s) for t in terms if (s := get(t)) is not None]
            if self._cooccurrence_marks is None:
                self._cooccurrence_marks = np.zeros(n_docs, dtype=np.uint8)
            n_anchor, both = count(self._pos, [s for s in map(get, anchors) if s is not None],
                                   [s for _t, s in held], self._cooccurrence_marks)
            return n_docs, n_anchor, {t: (k, s[1] - s[0]) for (t, s), k in zip(held, both)}
        with_anchor = np.zeros(n_docs, dtype=bool)  # by document position
        for a in anchors:
            with_anchor[self._term(a)[0]] = True
        out = {}
        for t in terms:
            pos = self._term(t)[0]
            if len(pos):
                out[t] = (int(np.count_nonzero(with_anchor[pos])), len(pos))
        return n_docs, int(np.count_nonzero(with_anchor)), out

    def _kept(self, filters: Filters, window=None):
        """float64[n]: every document's static factor (status × type × confidence), 0 for those the
        filters drop: types, level and dates from the cached arrays, tags and statuses through SQL
        (cached per generation). Expiry is left to the caller (it depends on the clock). Under a time intent
        (``window``, :class:`dreamdb.ranking.timeintent.TimeWindow`) each factor is multiplied by the document's
        :func:`dreamdb.ranking.signals.window_recency` (one numpy pass, not cached): the pruning bound is then the
        rankScore itself but for rounding (QA round 156-H F1: with the lowest window recency over the vault's dates,
        0.002–0.013 for a day or a week against two years of notes, 48,344 of 60,000 documents passed the pruning
        and a query took 70–191 ms, against 1.6–3.4 ms without its time intent)."""
        if window is not None:
            return self._kept(filters) * self._window_recency(window)
        key = (tuple(filters.types or ()), tuple(filters.exclude_types or ()), tuple(filters.tags or ()),
               tuple(filters.statuses or ()), filters.min_level, filters.since_days, filters.until_days,
               filters.since_at_days, filters.until_at_days)
        kept = self._filter_cache.get(key)
        if kept is not None:
            return kept
        kept = np.ones(len(self.rowids), dtype=bool)
        if filters.types:
            kept &= np.isin(self.types, list(filters.types))
        if filters.exclude_types:
            kept &= ~np.isin(self.types, list(filters.exclude_types))
        if filters.min_level is not None:
            kept &= self.levels >= filters.min_level
        with np.errstate(invalid="ignore"):  # undated documents (NaN) fail any date window
            if filters.since_days is not None:
                kept &= self.date_days >= (filters.since_days if filters.since_at_days is None else
                                           np.where(self.timed, filters.since_at_days, filters.since_days))
            if filters.until_days is not None:
                kept &= self.date_days <= (filters.until_days if filters.until_at_days is None else
                                           np.where(self.timed, filters.until_at_days, filters.until_days))
        if filters.tags or filters.statuses:
            where, params = Filters(tags=filters.tags, statuses=filters.statuses, include_expired=True).sql(0.0)
            keep = np.fromiter((r[0] for r in self.conn.execute(f"SELECT d.id FROM documents d WHERE {where}", params)),
                               dtype=np.int64)
            sel = np.zeros(len(self.rowids), dtype=bool)
            sel[np.searchsorted(self.rowids, keep)] = True
            kept &= sel
        kept = self.static if kept.all() else self.static * kept
        if len(self._filter_cache) > 64:
            self._filter_cache.clear()
        self._filter_cache[key] = kept
        return kept

    def _window_recency(self, window):
        """float64[n]: :func:`dreamdb.ranking.signals.window_recency` of every document's date (the same formula,
        elementwise: 1 inside the window, 1/(1 + d/scale) d days outside it, ``window.unknown``
        undated)."""
        d = self.date_days
        start, end = window.start, window.end
        if window.day_start is not None:  # (a date alone is read by its date: signals.window_recency's timed)
            start, end = np.where(self.timed, start, window.day_start), np.where(self.timed, end, window.day_end)
        with np.errstate(divide="ignore", invalid="ignore"):  # (NaN: undated; each branch is computed for every date)
            out = np.where(d < start, 1.0 / (1.0 + (start - d) / window.scale),
                           np.where(d > end, 1.0 / (1.0 + (d - end) / window.scale), 1.0))
        out[np.isnan(d)] = window.unknown
        return out

    def window_recency_sums(self, window) -> tuple[float, int]:
        """:func:`dreamdb.ranking.rank.window_recency_sums` from the loaded dates (the same float: the same values,
        exactly summed). Call after :meth:`refresh`, as ranking does."""
        from math import fsum

        self._ensure_loaded()
        dated = ~np.isnan(self.date_days)
        values = self._window_recency(window)[dated]
        return fsum(values.tolist()), int(dated.sum())

    def _checks_expiry(self, filters: Filters) -> bool:
        return not filters.include_expired and self._has_expiry

    def _near_top_numpy(self, plan: QueryPlan, top: int, now_days: float, filters: Filters, classes: dict,
                        pooled=None):
        """``(positions, raw, bm25f, coverage, structured)`` lists of the documents that can make the top
        ``top`` (see :meth:`rank`; ``classes``: :func:`dreamdb.ranking.rank.class_members` of ``plan``), or
        ``None`` when no document matches: numpy passes over every posting. ``pooled``: ``(term, class)``,
        what gives a term's and a class's postings weighed with pooled statistics (:meth:`rank`), or ``None``."""
        n = len(self.rowids)
        term_of, class_of = pooled if pooled is not None else (None, self._class)
        # One pass per signal: every matched posting's contribution summed per document (np.bincount).
        # IDF is already folded into the cached weights; a term with df 0 (slug-only postings) adds 0
        # to both BM25 sums but still counts for identity coverage.
        pos, w = self._postings(plan.terms, term_of)
        syns = [(p, wt) for p, wt in ((term_of(t) if term_of else self._term(t), wt) for t, wt in plan.synonyms.items())
                if p[2]]
        held = [c for c in map(class_of, classes.values()) if c[2]]
        if not len(pos) and not syns and not held:
            return None
        if not len(pos):  # a synonym alone matches (np.bincount of no postings gives int64 zeros)
            pos, w = np.zeros(1, dtype=np.int64), np.zeros((3, 1))
        raw = np.bincount(pos, weights=w[0], minlength=n)
        if classes:  # BM25F and the raw BM25 rankScore starts from count each class instead of its term
            free = [t for t in plan.terms if t not in classes]
            fpos, fw = self._postings(free, term_of) if free else (np.empty(0, dtype=np.int64), np.empty((3, 0)))
            f_pos = np.concatenate([fpos, *(c[0] for c in held)])
            structured = np.bincount(f_pos, weights=np.concatenate([fw[0], *(c[1][0] for c in held)]), minlength=n)
            f_w = np.concatenate([fw[1], *(c[1][1] for c in held)])
        else:
            f_pos, f_w, structured = pos, w[1], raw
        if syns:
            bm25f = np.bincount(np.concatenate([f_pos, *(p[0] for p, _ in syns)]),
                                weights=np.concatenate([f_w, *(wt * p[1][1] for p, wt in syns)]), minlength=n)
        else:
            bm25f = np.bincount(f_pos, weights=f_w, minlength=n)
        in_title = np.bincount(pos, weights=w[2], minlength=n)
        # Candidates: documents with a positive BM25F (every match, synonyms included) or a query term
        # in their slug/title (identity coverage alone). Every other document's bound is 0; the rest
        # of the arithmetic runs on the candidates only (typically a fraction of the corpus).
        cand = ((bm25f > 0.0) | (in_title > 0.0)).nonzero()[0]  # nonzero of a bool mask: ~4× faster than of floats
        if not len(cand):
            return None
        raw, structured, bm25f = raw[cand], structured[cand], bm25f[cand]
        cov = in_title[cand] * self._identity_f[cand] / len(plan.terms)
        # The per-document arithmetic is that of signals.base_score and signals.identity_boost, in the
        # same order; documents the filters drop get a bound of 0 (their static factor is multiplied by 0).
        base = structured + S.BM25F_MIX * np.maximum(0.0, bm25f - structured)
        identity = S.IDENTITY_WEIGHT * cov * cov * np.maximum(structured, 1.0)
        kept = self._kept(filters, plan.window)[cand]
        if self._checks_expiry(filters):
            kept = kept * (self.expires[cand] >= now_days)
        near = _near_top(base + identity, kept, top, self._min_recency(plan))
        if not len(near):
            return None
        return cand[near].tolist(), raw[near].tolist(), bm25f[near].tolist(), cov[near].tolist(), structured[near].tolist()

    def _near_top_kernel(self, plan: QueryPlan, top: int, now_days: float, filters: Filters, classes: dict,
                         pooled=None):
        """:meth:`_near_top_numpy` in one call of the C accumulator (the same floats), which touches
        only the documents the query's postings reach."""
        syn = [(t, wt) for t, wt in plan.synonyms.items() if wt > 0.0]
        term_of, class_of = pooled if pooled is not None else (self._term, self._class)
        if self._slices is not None and not classes and pooled is None:
            pos, weights, get = self._pos, self._weights, self._slices.get
            spans = [(a, b, 0.0) for a, b, _df in filter(None, map(get, plan.terms)) if b > a]
            spans += [(s[0], s[1], wt) for s, wt in ((get(t), wt) for t, wt in syn) if s is not None and s[2]]
        else:  # terms loaded one by one, or classes: their arrays concatenated, each a span of the whole
            # (kind 0: a query term, or with a weight a synonym; 1: a query term of a class, in the raw
            # score and identity coverage only; 2: a class, in BM25F and the raw BM25 rankScore starts from)
            parts = [(term_of(t), 0.0, 1 if t in classes else 0) for t in plan.terms]
            parts += [(c, 0.0, 2) for c in map(class_of, classes.values()) if c[2]]
            parts += [(p, wt, 0) for p, wt in ((term_of(t), wt) for t, wt in syn) if p[2]]
            parts = [(p, wt, kind) for p, wt, kind in parts if len(p[0])]
            ends = list(accumulate(len(p[0]) for p, _wt, _kind in parts))
            spans = [(e - len(p[0]), e, wt, kind) if kind else (e - len(p[0]), e, wt)
                     for (p, wt, kind), e in zip(parts, ends)]
            if parts:
                pos = np.concatenate([p[0] for p, _wt, _kind in parts])
                weights = np.concatenate([p[1] for p, _wt, _kind in parts], axis=1)
        if not spans:
            return None
        expires = self.expires if self._checks_expiry(filters) else None
        args = (pos, weights, spans, self._acc, self._marks, self._touched, self._identity_f,
                self._kept(filters, plan.window),
                expires, now_days, len(plan.terms), top, S.BM25F_MIX, S.IDENTITY_WEIGHT, self._min_recency(plan))
        ranked_top = getattr(self.kernel, "ranked_top", None)  # (a module built before it had only near_top)
        # (under a time intent recency is window_recency's, which the kernel does not compute: ranked in Python)
        if ranked_top is not None and self.rank_in_kernel and plan.window is None:
            return ranked_top(*args, (self.date_days, self._id_order(), S.RECENCY_FLOOR, S.RECENCY_HALF_LIFE_DAYS,
                                      S.RECENCY_UNKNOWN, S.TIE_BITS)) or None
        near = self.kernel.near_top(*args)
        return near if near[0] else None

    def _min_recency(self, plan: QueryPlan) -> float:
        """The lowest recency multiplier of any document for ``plan`` that its bound does not hold already, less a
        margin for rounding: the pruning factor of :meth:`rank` (:data:`_MIN_RECENCY`; under a time intent 1, less
        the margin: each document's own :func:`dreamdb.ranking.signals.window_recency` is in its static factor,
        :meth:`_kept`, so its bound is its rankScore but for rounding)."""
        return _MIN_RECENCY if plan.window is None else 1.0 - 1e-9

    def _id_order(self):
        """int64[n]: each document's rank in doc_id order (code points, as Python and SQLite's BINARY
        collation compare), the last tie-break of a ranking; computed once per index state."""
        if self._order is None:
            order = np.empty(len(self.doc_ids), dtype=np.int64)
            order[sorted(range(len(self.doc_ids)), key=self.doc_ids.__getitem__)] = np.arange(len(self.doc_ids))
            self._order = order
        return self._order

    # -- ranking ------------------------------------------------------------------
    def rank(self, plan: QueryPlan, *, top: int, now_days: float, filters: Filters | None = None,
             probe: bool = True, collection=None) -> list[Ranked]:
        """The exact top ``top`` documents by rankScore; same contract as :func:`dreamdb.ranking.rank.rank`.

        ``probe=False`` skips the check for index changes when the caller has just made it
        (:meth:`refresh`; Index.recall plans the query against the vocabulary in between).

        ``collection``: IDF from these pooled statistics (:class:`dreamdb.ranking.rank.Collection`, the vaults
        searched together) instead of this index's; the query's postings are then weighed for this query, not
        taken from the caches, which hold this index's IDF (average field lengths stay this index's).

        rankScore = (base + identity) · recency · static with recency in [0.85, 1], so the bound
        (base + identity) · static, computed for every candidate document (C accumulator or numpy
        passes), is within a factor 0.85 of it. Only the documents whose bound reaches 0.85 × the
        ``top``-th best bound can make the top (exact pruning); their recency, rankScore and order
        are computed with the very formulas of the SQL engine (:mod:`dreamdb.ranking.signals`): by the
        C kernel's ``ranked_top`` where it was built (:attr:`rank_in_kernel`), else in Python. Under a time
        intent (``plan.window``) recency is :func:`dreamdb.ranking.signals.window_recency`'s, each document's in its bound
        (:meth:`_kept`: the bound is its rankScore), and the candidates are ranked in Python.
        """
        if not plan.terms or top <= 0:
            return []
        classes = class_members(plan)  # {term: (term, translation)}: ranked as one term each
        if classes and self._slices is None and not self.conn.in_transaction:
            # (classes are then read from the index, :meth:`_class`: in one state with the rest)
            with read_snapshot(self.conn):
                return self.rank(plan, top=top, now_days=now_days, filters=filters, probe=True,
                                 collection=collection)
        if probe or self._generation is None:
            self._ensure_loaded()
        self._served += 1
        n = len(self.rowids)
        if not n or not self.n_docs:
            return []
        filters = filters or _NO_FILTERS
        pooled = None
        if collection is not None:
            big_n = collection.n_docs
            df = collection.frequencies(plan.terms + list(plan.synonyms))
            class_df = dict(zip(classes.values(), collection.class_frequencies(list(classes.values()))))
            weighed = self._pooled_terms([*plan.terms, *plan.synonyms], {t: F.idf(big_n, d) for t, d in df.items()})
            pooled = (lambda t: weighed.get(t) or self._term(t, F.idf(big_n, df[t])),
                      lambda members: self._class(members, F.idf(big_n, class_df[members])))
        if self.kernel is not None and (getattr(self.kernel, "CLASSES", False) or not classes):
            # (a module built before classes leaves them to numpy)
            near = self._near_top_kernel(plan, top, now_days, filters, classes, pooled)
        else:
            near = self._near_top_numpy(plan, top, now_days, filters, classes, pooled)
        if near is None:
            return []
        if type(near) is list:  # ranked by the C kernel (ranked_top), best first
            rowids, doc_ids, types = self.rowid_list, self.doc_ids, self.types_list
            # (i, date, raw, bm25f, coverage, identity, base, recency, rankScore, structured: none from a
            # module built before classes)
            return [Ranked(rowids[t[0]], doc_ids[t[0]], types[t[0]], None, t[1], None, *t[2:8], 1.0, 1.0, 1.0, t[8],
                           structured=t[9] if len(t) > 9 else t[2]) for t in near]
        positions, raws, bm25fs, covs, *rest = near  # (a module built before classes gives no fifth list)
        structured = rest[0] if rest else raws
        # The few documents that can make the top, a row of Python floats each; their base, identity,
        # recency and rankScore are computed in Python with the very formulas and operation order of
        # signals.base_score, signals.identity_boost and the SQL engine (identical floats, fewer numpy calls).
        dates, statics = self.date_days_list, self.static_list
        rows = [(r, f, c, dates[i], statics[i], x) for r, f, c, i, x in zip(raws, bm25fs, covs, positions, structured)]
        recency, unknown, mix, weight, tie = S.recency_factor, S.RECENCY_UNKNOWN, S.BM25F_MIX, S.IDENTITY_WEIGHT, S.tie_score
        window, in_window, timed = plan.window, S.window_recency, self.timed_list
        inf, doc_ids = float("inf"), self.doc_ids
        keyed = []
        for j, (_r, f, c, d, static, x) in enumerate(rows):
            base_j = x + mix * max(0.0, f - x)
            identity_j = weight * c * c * max(x, 1.0)
            if window is None:
                rec = recency(now_days - d) if d == d else unknown  # NaN: unknown date
            else:  # (the query's time intent: QueryPlan.window)
                rec = in_window(d, window, timed[positions[j]])
            # Ties break as in the SQL engine: rankScore (S.tie_score), then newest, then the smaller doc_id.
            score = (base_j + identity_j) * rec * static
            keyed.append((-tie(score), -d if d == d else inf, doc_ids[positions[j]], j, base_j, identity_j, rec, score))
        keyed.sort()
        rowids, types = self.rowid_list, self.types_list
        out = []
        for _tie, newest, doc_id, j, base_j, identity_j, rec, score in keyed[:top]:
            r, f, c = rows[j][:3]
            i = positions[j]
            out.append(Ranked(rowids[i], doc_id, types[i], None, None if newest == inf else -newest, None,
                              r, f, c, identity_j, base_j, rec, 1.0, 1.0, 1.0, score, structured=rows[j][5]))
        return out
