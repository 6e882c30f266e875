/* The memory engine's hot paths (dreamdb.ranking.memory), in C: its BM25 accumulator, the
 * English spellings of Turkish loanwords that query planning looks up (dreamdb.cognates), and the
 * document counts that choose among a query word's translations (dreamdb.ranking.rank.in_context).
 *
 * One call does what MemoryEngine.rank's numpy passes do between the postings and the
 * documents that can make the top (three np.bincount sums, the candidate mask, the rankScore
 * upper bound and _near_top): a term-at-a-time accumulator over the query's postings, touching
 * only the documents they reach, with the very floating-point operations of the numpy code in
 * the same order (so the same doubles come out; compiled with -ffp-contract=off, no fused
 * multiply-add).
 *
 * Built by hatch_build.py when a C compiler is present; without it dreamdb uses the numpy
 * passes and the Python spellings (tests/test_kernel.py and tests/test_cognates.py check both give
 * identical rankings and spellings).
 *
 * It reads every array through the buffer protocol (no numpy headers at build time).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef SOURCE_SHA256
#define SOURCE_SHA256 ""  /* hatch_build.py passes this file's sha256 */
#endif

/* Documents ahead whose accumulator lines the bound pass prefetches: on an index too large for the
   caches (100k notes: 3.2 MB of accumulators) the pass over the touched documents is a gather. */
#define PREFETCH_AHEAD 16

typedef struct {
    Py_buffer view;
    int held;
} Buf;

/* Kinds of items a buffer must hold: 'i' int64, 'f' float64, 'u' uint8. */
static int format_is(const char *format, char kind) {
    if (!format)
        return kind == 'u'; /* no format given: unsigned bytes */
    if (*format == '@' || *format == '=' || *format == '<')
        format++;
    switch (kind) {
    case 'i': return (format[0] == 'q' || (format[0] == 'l' && sizeof(long) == 8)) && !format[1];
    case 'f': return format[0] == 'd' && !format[1];
    case 'u': return format[0] == 'B' && !format[1];
    }
    return 0;
}

static int get_buf(PyObject *obj, Buf *b, const char *name, char kind, int writable) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &b->view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: a C-contiguous%s buffer is needed", name, writable ? " writable" : "");
        return -1;
    }
    b->held = 1;
    if (!format_is(b->view.format, kind)) {
        PyErr_Format(PyExc_TypeError, "%s: %s items are needed", name,
                     kind == 'i' ? "int64" : kind == 'f' ? "float64" : "uint8");
        return -1;
    }
    return 0;
}

static void release(Buf *b) {
    if (b->held) {
        PyBuffer_Release(&b->view);
        b->held = 0;
    }
}

/* Min-heap of the `size` largest bounds seen so far (top <= a few dozen). */
static void heap_push(double *heap, Py_ssize_t *size, Py_ssize_t cap, double v) {
    Py_ssize_t i;
    if (*size < cap) {
        i = (*size)++;
        while (i > 0) {
            Py_ssize_t parent = (i - 1) / 2;
            if (heap[parent] <= v)
                break;
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = v;
        return;
    }
    if (v <= heap[0])
        return;
    i = 0;
    for (;;) {
        Py_ssize_t l = 2 * i + 1, r = l + 1, m = i;
        double mv = v;
        if (l < cap && heap[l] < mv) { m = l; mv = heap[l]; }
        if (r < cap && heap[r] < mv) { m = r; mv = heap[r]; }
        if (m == i)
            break;
        heap[i] = heap[m];
        i = m;
    }
    heap[i] = v;
}

PyDoc_STRVAR(near_top_doc,
"near_top(pos, weights, spans, acc, marks, touched, identity, kept, expires, now_days, n_terms, top,\n"
"         bm25f_mix, identity_weight, min_recency) -> (positions, raw, bm25f, coverage, structured)\n"
"\n"
"The documents whose rankScore bound reaches min_recency x the top-th best bound (see\n"
"dreamdb.ranking.memory.MemoryEngine.rank), with their raw BM25, BM25F and coverage, as lists.\n"
"\n"
"pos: int64[m] document positions of the postings; weights: float64[3, m] (idf x raw tf part,\n"
"idf x BM25F saturation, 1.0 where the term is in the slug/title); spans: sequence of\n"
"(start, end, synonym_weight[, kind]): postings [start, end) of a query term (synonym_weight 0) or of a\n"
"synonym (its BM25F weight times synonym_weight, nothing else); kind 1: a query term of a class, in the\n"
"raw score and the slug/title count only; kind 2: a class (dreamdb.ranking.rank.class_members), in BM25F\n"
"and the raw BM25 rankScore starts from only (returned as a fifth list). acc: float64[n, 4] zeros,\n"
"marks: uint8[n] zeros, touched: int64[n] (scratch, left as found); identity: float64[n] 1.0\n"
"where identity coverage counts; kept: float64[n] static factor, 0 for filtered documents;\n"
"expires: float64[n] or None (a document with expires < now_days is dropped).");

/* One candidate of ranked_top: its rankScore and what orders it (see rank_order). */
typedef struct {
    double tie;      /* rankScore rounded to tie_bits significant bits (signals.tie_score) */
    double newest;   /* -date_days, +inf for an unknown date (newest first, undated last) */
    int64_t order;   /* the rank of its doc_id in code-point order (smaller first) */
    int64_t d;       /* its position */
    double raw, f, cov, identity, base, recency, score, structured;
} Ranked;

static int rank_order(const void *pa, const void *pb) {
    const Ranked *a = (const Ranked *)pa, *b = (const Ranked *)pb;
    if (a->tie != b->tie)
        return a->tie > b->tie ? -1 : 1;
    if (a->newest != b->newest)
        return a->newest < b->newest ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

/* signals.tie_score: frexp, the mantissa scaled to `bits` bits and rounded half to even (Python's
   round(); nearbyint in the default rounding mode), scaled back. */
static double tie_score(double x, int bits) {
    int e;
    double m = frexp(x, &e);
    return ldexp(nearbyint(ldexp(m, bits)), e - bits);
}

static PyObject *accumulate(PyObject *args, int final) {
    PyObject *o_pos, *o_w, *spans, *o_acc, *o_marks, *o_touched, *o_ident, *o_kept, *o_exp;
    PyObject *o_dates = NULL, *o_order = NULL;
    double now_days, mix, iweight, min_recency, floor_ = 0.0, half_life = 1.0, unknown = 0.0;
    Py_ssize_t n_terms, top;
    int tie_bits = 0;
    if (!final ? !PyArg_ParseTuple(args, "OOOOOOOOOdnnddd", &o_pos, &o_w, &spans, &o_acc, &o_marks, &o_touched,
                                   &o_ident, &o_kept, &o_exp, &now_days, &n_terms, &top, &mix, &iweight, &min_recency)
               : !PyArg_ParseTuple(args, "OOOOOOOOOdnnddd(OOdddi)", &o_pos, &o_w, &spans, &o_acc, &o_marks,
                                   &o_touched, &o_ident, &o_kept, &o_exp, &now_days, &n_terms, &top, &mix, &iweight,
                                   &min_recency, &o_dates, &o_order, &floor_, &half_life, &unknown, &tie_bits))
        return NULL;
    Buf b_pos = {0}, b_w = {0}, b_acc = {0}, b_marks = {0}, b_touched = {0}, b_ident = {0}, b_kept = {0}, b_exp = {0};
    Buf b_dates = {0}, b_order = {0};
    Ranked *ranked = NULL;
    double *upper = NULL;   /* each touched document's bound */
    int64_t *cand = NULL;   /* the candidates' positions */
    PyObject *result = NULL, *seq = NULL;
    double *heap = NULL;
    Py_ssize_t n_touched = 0;
    double *acc = NULL;
    uint8_t *marks = NULL;
    int64_t *touched = NULL;
    Py_ssize_t n = 0;

    if (get_buf(o_pos, &b_pos, "pos", 'i', 0) < 0 || get_buf(o_w, &b_w, "weights", 'f', 0) < 0 ||
        get_buf(o_acc, &b_acc, "acc", 'f', 1) < 0 || get_buf(o_marks, &b_marks, "marks", 'u', 1) < 0 ||
        get_buf(o_touched, &b_touched, "touched", 'i', 1) < 0 || get_buf(o_ident, &b_ident, "identity", 'f', 0) < 0 ||
        get_buf(o_kept, &b_kept, "kept", 'f', 0) < 0)
        goto done;
    if (o_exp != Py_None && get_buf(o_exp, &b_exp, "expires", 'f', 0) < 0)
        goto done;
    if (final && (get_buf(o_dates, &b_dates, "date_days", 'f', 0) < 0 || get_buf(o_order, &b_order, "order", 'i', 0) < 0))
        goto done;
    Py_ssize_t m = b_pos.view.len / 8;
    n = b_marks.view.len;
    if (b_w.view.len != 3 * m * 8 || b_acc.view.len != 4 * n * 8 || b_touched.view.len != n * 8 ||
        b_ident.view.len != n * 8 || b_kept.view.len != n * 8 || (b_exp.held && b_exp.view.len != n * 8) ||
        (final && (b_dates.view.len != n * 8 || b_order.view.len != n * 8))) {
        PyErr_SetString(PyExc_ValueError, "near_top: array lengths disagree");
        goto done;
    }
    if (n_terms <= 0 || top <= 0) {
        PyErr_SetString(PyExc_ValueError, "near_top: n_terms and top must be positive");
        goto done;
    }
    if (top > n)  /* no more than every document (and a size the heap's allocation cannot overflow) */
        top = n > 0 ? n : 1;
    const int64_t *pos = (const int64_t *)b_pos.view.buf;
    const double *w0 = (const double *)b_w.view.buf, *w1 = w0 + m, *w2 = w0 + 2 * m;
    acc = (double *)b_acc.view.buf;
    /* acc[4 d + 0, 1, 2, 3]: document d's raw BM25, BM25F, slug/title count and the raw BM25 with classes
       in place of their terms, which base and identity start from (one cache line a document) */
    marks = (uint8_t *)b_marks.view.buf;
    touched = (int64_t *)b_touched.view.buf;
    const double *ident = (const double *)b_ident.view.buf, *kept = (const double *)b_kept.view.buf;
    const double *expires = b_exp.held ? (const double *)b_exp.view.buf : NULL;

    seq = PySequence_Fast(spans, "spans must be a sequence");
    if (!seq)
        goto done;
    Py_ssize_t n_spans = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t s = 0; s < n_spans; s++) {
        Py_ssize_t a, e;
        double syn;
        int kind = 0;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, s), "nnd|i", &a, &e, &syn, &kind))
            goto done;
        if (a < 0 || e > m || a > e) {
            PyErr_SetString(PyExc_ValueError, "near_top: a span lies outside the postings");
            goto done;
        }
        if (kind < 0 || kind > 2 || (kind && syn != 0.0)) {
            PyErr_SetString(PyExc_ValueError, "near_top: a span's kind is 0, 1 or 2 (1 and 2 with synonym_weight 0)");
            goto done;
        }
        for (Py_ssize_t i = a; i < e; i++) {
            int64_t d = pos[i];
            if (d < 0 || d >= n) {
                PyErr_SetString(PyExc_ValueError, "near_top: a posting's document position is out of range");
                goto done;
            }
            if (!marks[d]) {
                marks[d] = 1;
                touched[n_touched++] = d;
            }
            double *a_d = acc + 4 * d;
            if (kind == 1) {
                a_d[0] += w0[i];
                a_d[2] += w2[i];
            } else if (kind == 2) {
                a_d[1] += w1[i];
                a_d[3] += w0[i];
            } else if (syn == 0.0) {
                a_d[0] += w0[i];
                a_d[1] += w1[i];
                a_d[2] += w2[i];
                a_d[3] += w0[i];
            } else {
                a_d[1] += syn * w1[i];
            }
        }
    }

    /* The rankScore bound of every touched document (0 unless it is a candidate: a positive BM25F
       or a query term in its slug/title), in touched order, and the top-th largest of them. */
    heap = (double *)PyMem_Malloc(sizeof(double) * (size_t)top);
    if (!heap) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t heap_size = 0, positive = 0;
    upper = (double *)PyMem_Malloc(sizeof(double) * (size_t)(n_touched ? n_touched : 1));
    if (!upper) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t t = 0; t < n_touched; t++) {
        int64_t d = touched[t];
        if (t + PREFETCH_AHEAD < n_touched) {  /* a gather from three arrays: ask for the lines early */
            int64_t ahead = touched[t + PREFETCH_AHEAD];
            __builtin_prefetch(acc + 4 * ahead, 0);
            __builtin_prefetch(ident + ahead, 0);
            __builtin_prefetch(kept + ahead, 0);
        }
        const double *a_d = acc + 4 * d;
        double u = 0.0;
        if (a_d[1] > 0.0 || a_d[2] > 0.0) {
            double r = a_d[3];
            double cov = a_d[2] * ident[d] / (double)n_terms;
            double diff = a_d[1] - r;
            double base = r + mix * (diff > 0.0 ? diff : 0.0);
            double identity = iweight * cov * cov * (r > 1.0 ? r : 1.0);
            double k = kept[d];
            if (expires && !(expires[d] >= now_days))
                k = k * 0.0;
            u = (base + identity) * k;
        }
        upper[t] = u;
        if (u > 0.0) {
            positive++;
            heap_push(heap, &heap_size, top, u);
        }
    }
    double threshold = 0.0;
    int all_positive = positive <= top;
    if (!all_positive)
        threshold = heap[0] * min_recency;
    /* The candidates: the touched documents whose bound reaches the threshold (every positive one
       when there are no more than `top`), in touched order. */
    cand = (int64_t *)PyMem_Malloc(sizeof(int64_t) * (size_t)(n_touched ? n_touched : 1));
    if (!cand) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n_cand = 0;
    for (Py_ssize_t t = 0; t < n_touched; t++) {
        double u = upper[t];
        if (u > 0.0 && (all_positive || u >= threshold))
            cand[n_cand++] = touched[t];
    }

    if (final) {
        /* The candidates' rankScore, with the formulas and operation order of MemoryEngine.rank's
           Python (signals.base_score, identity_boost, recency_factor; kept is the static factor of a
           document the filters keep), sorted as it sorts them; the first `top`, as tuples. */
        const double *dates = (const double *)b_dates.view.buf;
        const int64_t *order = (const int64_t *)b_order.view.buf;
        ranked = (Ranked *)PyMem_Malloc(sizeof(Ranked) * (size_t)(n_cand ? n_cand : 1));
        if (!ranked) {
            PyErr_NoMemory();
            goto done;
        }
        Py_ssize_t k = n_cand;
        for (Py_ssize_t j = 0; j < n_cand; j++) {
            int64_t d = cand[j];
            const double *a_d = acc + 4 * d;
            Ranked *c = ranked + j;
            double r = a_d[3], f = a_d[1];
            double cov = a_d[2] * ident[d] / (double)n_terms;
            double diff = f - r;
            c->base = r + mix * (diff > 0.0 ? diff : 0.0);
            c->identity = iweight * cov * cov * (r > 1.0 ? r : 1.0);
            double date = dates[d];
            if (date == date) {
                double age = now_days - date;
                c->recency = floor_ + (1.0 - floor_) * pow(0.5, (age > 0.0 ? age : 0.0) / half_life);
                c->newest = -date;
            } else {
                c->recency = unknown;
                c->newest = Py_HUGE_VAL;
            }
            c->score = (c->base + c->identity) * c->recency * kept[d];
            c->tie = tie_score(c->score, tie_bits);
            c->order = order[d];
            c->d = d;
            c->raw = a_d[0];
            c->structured = r;
            c->f = f;
            c->cov = cov;
        }
        qsort(ranked, (size_t)k, sizeof(Ranked), rank_order);
        if (k > top)
            k = top;
        PyObject *out = PyList_New(k);
        if (!out)
            goto done;
        for (Py_ssize_t j = 0; j < k; j++) {
            Ranked *c = ranked + j;
            PyObject *row = c->newest == Py_HUGE_VAL
                ? Py_BuildValue("(LOdddddddd)", (long long)c->d, Py_None, c->raw, c->f, c->cov, c->identity, c->base,
                                c->recency, c->score, c->structured)
                : Py_BuildValue("(Lddddddddd)", (long long)c->d, -c->newest, c->raw, c->f, c->cov, c->identity,
                                c->base, c->recency, c->score, c->structured);
            if (!row) {
                Py_DECREF(out);
                goto done;
            }
            PyList_SET_ITEM(out, j, row);
        }
        result = out;
        goto done;
    }

    PyObject *l_pos = PyList_New(0), *l_raw = PyList_New(0), *l_f = PyList_New(0), *l_cov = PyList_New(0);
    PyObject *l_st = PyList_New(0);
    if (!l_pos || !l_raw || !l_f || !l_cov || !l_st) {
        Py_XDECREF(l_pos); Py_XDECREF(l_raw); Py_XDECREF(l_f); Py_XDECREF(l_cov); Py_XDECREF(l_st);
        goto done;
    }
    for (Py_ssize_t j = 0; j < n_cand; j++) {
        int64_t d = cand[j];
        const double *a_d = acc + 4 * d;
        double cov = a_d[2] * ident[d] / (double)n_terms;
        PyObject *v;
        int bad = 0;
        v = PyLong_FromLongLong(d); bad |= !v || PyList_Append(l_pos, v) < 0; Py_XDECREF(v);
        v = PyFloat_FromDouble(a_d[0]); bad |= !v || PyList_Append(l_raw, v) < 0; Py_XDECREF(v);
        v = PyFloat_FromDouble(a_d[1]); bad |= !v || PyList_Append(l_f, v) < 0; Py_XDECREF(v);
        v = PyFloat_FromDouble(cov); bad |= !v || PyList_Append(l_cov, v) < 0; Py_XDECREF(v);
        v = PyFloat_FromDouble(a_d[3]); bad |= !v || PyList_Append(l_st, v) < 0; Py_XDECREF(v);
        if (bad) {
            Py_DECREF(l_pos); Py_DECREF(l_raw); Py_DECREF(l_f); Py_DECREF(l_cov); Py_DECREF(l_st);
            goto done;
        }
    }
    result = Py_BuildValue("(NNNNN)", l_pos, l_raw, l_f, l_cov, l_st);

done:
    /* Leave the scratch arrays as found (zeros), whatever happened. */
    if (acc && marks && touched) {
        for (Py_ssize_t t = 0; t < n_touched; t++) {
            int64_t d = touched[t];
            acc[4 * d] = acc[4 * d + 1] = acc[4 * d + 2] = acc[4 * d + 3] = 0.0;
            marks[d] = 0;
        }
    }
    PyMem_Free(heap);
    PyMem_Free(upper);
    PyMem_Free(cand);
    PyMem_Free(ranked);
    Py_XDECREF(seq);
    release(&b_pos); release(&b_w); release(&b_acc); release(&b_marks); release(&b_touched);
    release(&b_ident); release(&b_kept); release(&b_exp); release(&b_dates); release(&b_order);
    return result;
}

static PyObject *near_top(PyObject *Py_UNUSED(self), PyObject *args) {
    return accumulate(args, 0);
}

PyDoc_STRVAR(ranked_top_doc,
"ranked_top(pos, weights, spans, acc, marks, touched, identity, kept, expires, now_days, n_terms, top,\n"
"           bm25f_mix, identity_weight, min_recency,\n"
"           (date_days, order, recency_floor, half_life_days, recency_unknown, tie_bits))\n"
"    -> [(position, date_days or None, raw, bm25f, coverage, identity, base, recency, rank_score, structured)]\n"
"\n"
"near_top's candidates ranked as dreamdb.ranking.memory.MemoryEngine.rank ranks them in Python\n"
"(the same formulas, operation order and doubles, base and identity from `structured`, the raw BM25\n"
"with classes in place of their terms): rankScore = (base + identity) x recency x kept,\n"
"recency = floor + (1 - floor) x 0.5^(max(0, now_days - date) / half_life), recency_unknown for an\n"
"unknown date (NaN); sorted by rankScore rounded to tie_bits significant bits (signals.tie_score),\n"
"then newest, then doc_id (order: int64[n], each document's doc_id rank in code-point order); the\n"
"first `top`, best first. date_days: float64[n].");

static PyObject *ranked_top(PyObject *Py_UNUSED(self), PyObject *args) {
    return accumulate(args, 1);
}

/* ---- English spellings of Turkish loanwords: dreamdb.cognates.english_spellings, in C ----
 *
 * The same rules, tables and output order as the Python function, which is the reference and
 * documents the rules and their source (tests/test_cognates.py checks both give the same tuples on
 * a large random set of roots that exercises every ending and letter). A root's letters are held
 * as bytes: ASCII letters as themselves, the Turkish vowels already read as ASCII (ı î -> i,
 * ü û -> u, ö -> o, â -> a), 'C' for ç and 'S' for ş (English has neither, so both must change). */

#define SP_MIN_ROOT 5       /* cognates.MIN_ROOT_LETTERS */
#define SP_MAX_SPELLINGS 32 /* cognates.MAX_SPELLINGS */
#define SP_MAX_SOUNDED 5    /* cognates.MAX_SOUNDED */
#define SP_HEAD_LETTERS 4   /* cognates.HEAD_LETTERS */

static const struct { const char *tr; const char *en[2]; } SP_ENDINGS[] = { /* cognates._ENDINGS */
    {"ksiyon", {"ction", NULL}}, {"lojik", {"logical", NULL}}, {"siyon", {"sion", "tion"}},
    {"ziyon", {"sion", NULL}}, {"syon", {"tion", "sion"}}, {"zyon", {"sion", NULL}},
    {"grafi", {"graphy", NULL}}, {"metri", {"metry", NULL}}, {"loji", {"logy", NULL}},
    {"nomi", {"nomy", NULL}}, {"sofi", {"sophy", NULL}},
    {"izm", {"ism", NULL}}, {"ite", {"ity", NULL}}, {"ans", {"ance", NULL}}, {"ens", {"ence", NULL}},
    {"ik", {"ic", "ical"}}, {"if", {"ive", NULL}},
};

/* cognates._SOUNDED: a letter's other readings (NULL-terminated), or NULL for a letter kept as written. */
static const char *const *sp_readings(char c) {
    static const char *const k[] = {"c", "ch", NULL}, *const f[] = {"ph", NULL}, *const i[] = {"y", NULL},
                             *const j[] = {"g", NULL}, *const z[] = {"s", NULL}, *const y[] = {"i", "", NULL},
                             *const sh[] = {"sh", "ch", NULL}, *const ch[] = {"ch", NULL}, *const t[] = {"th", NULL};
    switch (c) {
    case 'k': return k;
    case 'f': return f;
    case 'i': return i;
    case 'j': return j;
    case 'z': return z;
    case 'y': return y;
    case 'S': return sh;
    case 'C': return ch;
    case 't': return t;
    }
    return NULL;
}

static int sp_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

typedef struct {
    char *mem;          /* what sp_spell allocated (sp_free releases it) */
    void *scratch;
    char *buf;          /* the spellings one after another; the one being built after them */
    Py_ssize_t used, start[SP_MAX_SPELLINGS], len[SP_MAX_SPELLINGS];
    int count;
    const char *root;   /* the root, when it is ASCII (a spelling equal to it is left out), else NULL */
    Py_ssize_t root_len;
    /* scratch, one slot per letter of the root: */
    Py_ssize_t *pos, *reading;  /* the changed letters' positions (forced, then chosen), their reading */
    const char *const **alts;   /* the changed letters' readings */
    Py_ssize_t *opt;            /* positions of the letters that may change */
    const char **sub;           /* per letter of the head: its reading, or NULL */
} Spellings;

/* Lists buf[used:used+n] unless it is the root or listed already; 1 when the list is then full. */
static int sp_add(Spellings *o, Py_ssize_t n) {
    const char *text = o->buf + o->used;
    if (o->root && n == o->root_len && memcmp(text, o->root, (size_t)n) == 0)
        return 0;
    for (int s = 0; s < o->count; s++)
        if (o->len[s] == n && memcmp(o->buf + o->start[s], text, (size_t)n) == 0)
            return 0;
    o->start[o->count] = o->used;
    o->len[o->count] = n;
    o->used += n;
    return ++o->count >= SP_MAX_SPELLINGS;
}

/* Lists the spellings of one (head, ending) split, fewest changed letters first; 1 when the list is
 * full. head is changed in place. */
static int sp_split(Spellings *o, char *head, Py_ssize_t hl, const char *ending) {
    Py_ssize_t el = (Py_ssize_t)strlen(ending);
    if (hl > 2 && head[0] == 'e' && head[1] == 'n' && !sp_vowel(head[2]))
        head[0] = 'i'; /* enformasyon -> information */
    Py_ssize_t w = 0;
    for (Py_ssize_t r = 0; r < hl; r++) { /* ks -> x, left to right */
        if (head[r] == 'k' && r + 1 < hl && head[r + 1] == 's') {
            head[w++] = 'x';
            r++;
        } else {
            head[w++] = head[r];
        }
    }
    hl = w;
    Py_ssize_t n_forced = 0, n_opt = 0;
    for (Py_ssize_t i = 0; i < hl; i++) {
        char c = head[i];
        const char *const *r = sp_readings(c);
        if (!r || (c == 'y' && !(i > 0 && i < hl - 1 && sp_vowel(head[i + 1]))))
            continue;
        if (c == 'S' || c == 'C') {
            o->pos[n_forced] = i;
            o->alts[n_forced++] = r;
        } else if (n_opt < SP_MAX_SOUNDED) {
            o->opt[n_opt++] = i;
        }
    }
    Py_ssize_t chosen[SP_MAX_SOUNDED];
    for (Py_ssize_t i = 0; i < hl; i++)
        o->sub[i] = NULL;
    for (Py_ssize_t n = 0; n <= n_opt; n++) {
        for (Py_ssize_t c = 0; c < n; c++)
            chosen[c] = c;
        for (;;) { /* each n-combination of the letters that may change, in itertools.combinations order */
            Py_ssize_t m = n_forced + n;
            for (Py_ssize_t c = 0; c < n; c++) {
                o->pos[n_forced + c] = o->opt[chosen[c]];
                o->alts[n_forced + c] = sp_readings(head[o->opt[chosen[c]]]);
            }
            for (Py_ssize_t c = 0; c < m; c++)
                o->reading[c] = 0;
            for (;;) { /* each reading of the changed letters, in itertools.product order (last fastest) */
                for (Py_ssize_t c = 0; c < m; c++)
                    o->sub[o->pos[c]] = o->alts[c][o->reading[c]];
                char *t = o->buf + o->used;
                for (Py_ssize_t i = 0; i < hl; i++) {
                    if (o->sub[i]) {
                        for (const char *s = o->sub[i]; *s; s++)
                            *t++ = *s;
                    } else {
                        *t++ = head[i];
                    }
                }
                memcpy(t, ending, (size_t)el);
                t += el;
                if (sp_add(o, t - (o->buf + o->used)))
                    return 1;
                Py_ssize_t c = m - 1;
                while (c >= 0 && !o->alts[c][++o->reading[c]]) {
                    o->reading[c] = 0;
                    c--;
                }
                if (c < 0)
                    break;
            }
            for (Py_ssize_t c = 0; c < m; c++)
                o->sub[o->pos[c]] = NULL;
            Py_ssize_t c = n - 1; /* the next combination */
            while (c >= 0 && chosen[c] == n_opt - n + c)
                c--;
            if (c < 0)
                break;
            chosen[c]++;
            for (Py_ssize_t d = c + 1; d < n; d++)
                chosen[d] = chosen[d - 1] + 1;
        }
    }
    return 0;
}

/* Lists the spellings of `root` (a str) in o, whose buffers it allocates (sp_free releases them);
 * -1 with an exception set on failure. */
static int sp_spell(Spellings *o, PyObject *root) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(root);
    memset(o, 0, sizeof *o);
    if (n < SP_MIN_ROOT)
        return 0;
    int kind = PyUnicode_KIND(root);
    const void *data = PyUnicode_DATA(root);
    Py_ssize_t most = 2 * n + 8; /* longest spelling: every letter read as two, the longest ending */
    size_t slots = (size_t)n + 1;
    char *mem = PyMem_Malloc(2 * slots + (size_t)(SP_MAX_SPELLINGS + 1) * (size_t)most);
    void *scratch = PyMem_Malloc(slots * (3 * sizeof(Py_ssize_t) + sizeof(const char *const *) + sizeof(const char *)));
    if (!mem || !scratch) {
        PyMem_Free(mem);
        PyMem_Free(scratch);
        PyErr_NoMemory();
        return -1;
    }
    o->mem = mem;
    o->scratch = scratch;
    char *word = mem, *head = mem + slots;
    o->buf = mem + 2 * slots;
    o->pos = scratch;
    o->reading = o->pos + slots;
    o->opt = o->reading + slots;
    o->alts = (const char *const **)(o->opt + slots);
    o->sub = (const char **)(o->alts + slots);
    int ascii = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= 'a' && c <= 'z') {
            word[i] = (char)c;
            continue;
        }
        ascii = 0;
        switch (c) {
        case 0x131: case 0xEE: word[i] = 'i'; break; /* ı î */
        case 0xFC: case 0xFB: word[i] = 'u'; break;  /* ü û */
        case 0xF6: word[i] = 'o'; break;             /* ö */
        case 0xE2: word[i] = 'a'; break;             /* â */
        case 0xE7: word[i] = 'C'; break;             /* ç */
        case 0x15F: word[i] = 'S'; break;            /* ş */
        default: return 0;                           /* ğ (silent), or no Turkish letter: none */
        }
    }
    o->root = ascii ? word : NULL;
    o->root_len = n;
    const char *const *endings = NULL;
    Py_ssize_t tl = 0;
    for (size_t e = 0; e < sizeof SP_ENDINGS / sizeof SP_ENDINGS[0] && !endings; e++) {
        tl = (Py_ssize_t)strlen(SP_ENDINGS[e].tr);
        if (n > tl + 1 && memcmp(word + n - tl, SP_ENDINGS[e].tr, (size_t)tl) == 0)
            endings = SP_ENDINGS[e].en;
    }
    static const char *const none[] = {"", NULL};
    if (!endings) {
        endings = none;
        tl = 0;
    }
    for (int e = 0; e < 2 && endings[e]; e++) {
        memcpy(head, word, (size_t)(n - tl));
        if (sp_split(o, head, n - tl, endings[e]))
            break;
    }
    return 0;
}

static void sp_free(Spellings *o) {
    PyMem_Free(o->mem);
    PyMem_Free(o->scratch);
}

PyDoc_STRVAR(english_spellings_doc,
"english_spellings(root) -> tuple[str, ...]\n"
"\n"
"dreamdb.cognates.english_spellings, in C: the English spellings a Turkish root may stand for as\n"
"a loanword, the same tuple in the same order (see that function for the rules).");

static PyObject *english_spellings(PyObject *Py_UNUSED(self), PyObject *arg) {
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError, "english_spellings: a str is needed, not %.80s", Py_TYPE(arg)->tp_name);
    Spellings o;
    if (sp_spell(&o, arg) < 0)
        return NULL;
    PyObject *result = PyTuple_New(o.count);
    for (int s = 0; result && s < o.count; s++) {
        PyObject *v = PyUnicode_DecodeASCII(o.buf + o.start[s], o.len[s], NULL);
        if (!v) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, s, v);
    }
    sp_free(&o);
    return result;
}

/* Whether text[0..n) begins one of heads (cognates.begins_one: its first SP_HEAD_LETTERS letters,
 * or SP_HEAD_LETTERS - 1 of them, are a member); -1 on error. */
static int sp_begins_one(const char *text, Py_ssize_t n, PyObject *heads) {
    for (Py_ssize_t k = SP_HEAD_LETTERS; k >= SP_HEAD_LETTERS - 1; k--) {
        PyObject *start = PyUnicode_DecodeASCII(text, n < k ? n : k, NULL);
        if (!start)
            return -1;
        int in = PySequence_Contains(heads, start);
        Py_DECREF(start);
        if (in)
            return in;
    }
    return 0;
}

PyDoc_STRVAR(loanword_spellings_doc,
"loanword_spellings(roots, heads=None) -> list[str]\n"
"\n"
"dreamdb.cognates.loanword_spellings, in C: the distinct English spellings of the roots (an iterable\n"
"of str), in order, less those that begin none of heads (a container of str, best a frozenset; None:\n"
"keep all).");

static PyObject *loanword_spellings(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *roots, *heads = Py_None;
    if (!PyArg_ParseTuple(args, "O|O", &roots, &heads))
        return NULL;
    if (heads == Py_None)
        heads = NULL;
    PyObject *seq = PySequence_Fast(roots, "loanword_spellings: roots must be a sequence of str");
    if (!seq)
        return NULL;
    PyObject *out = PyList_New(0), *seen = PySet_New(NULL);
    if (!seen)
        Py_CLEAR(out);
    for (Py_ssize_t r = 0; out && seen && r < PySequence_Fast_GET_SIZE(seq); r++) {
        PyObject *root = PySequence_Fast_GET_ITEM(seq, r);
        if (!PyUnicode_Check(root)) {
            PyErr_Format(PyExc_TypeError, "loanword_spellings: a root is a %.80s, not a str", Py_TYPE(root)->tp_name);
            Py_CLEAR(out);
            break;
        }
        Spellings o;
        if (sp_spell(&o, root) < 0) {
            Py_CLEAR(out);
            break;
        }
        for (int s = 0; s < o.count; s++) {
            int keep = heads ? sp_begins_one(o.buf + o.start[s], o.len[s], heads) : 1;
            PyObject *v = keep > 0 ? PyUnicode_DecodeASCII(o.buf + o.start[s], o.len[s], NULL) : NULL;
            int fresh = v ? !PySet_Contains(seen, v) : 0;
            if (keep < 0 || (keep && !v) || (fresh && (PySet_Add(seen, v) < 0 || PyList_Append(out, v) < 0))) {
                Py_XDECREF(v);
                Py_CLEAR(out);
                break;
            }
            Py_XDECREF(v);
        }
        sp_free(&o);
    }
    Py_DECREF(seq);
    Py_XDECREF(seen);
    return out;
}

/* ---- Porter2's inflectional steps: dreamdb.stemming.english_stem_reference, in C ----
 *
 * The same steps (0, 1a, 1b, 1c, 5), fast paths, exceptions and y marking as the Python function,
 * which is the reference and cites the algorithm (tests/test_stemming.py checks both give the same
 * stem for every word of the real vault and of large random sets). Letters are compared as code
 * points: only ASCII ones take part in a rule, as in the Python function. */

static int es_vowel(Py_UCS4 c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y'; }

static int es_ends(const Py_UCS4 *w, Py_ssize_t n, const char *suf) {
    Py_ssize_t k = (Py_ssize_t)strlen(suf);
    if (k > n)
        return 0;
    for (Py_ssize_t i = 0; i < k; i++)
        if (w[n - k + i] != (Py_UCS4)(unsigned char)suf[i])
            return 0;
    return 1;
}

static int es_is(const Py_UCS4 *w, Py_ssize_t n, const char *s) { return (Py_ssize_t)strlen(s) == n && es_ends(w, n, s); }

static int es_has_vowel(const Py_UCS4 *w, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (es_vowel(w[i]))
            return 1;
    return 0;
}

static Py_ssize_t es_region(const Py_UCS4 *w, Py_ssize_t n, Py_ssize_t start) {
    for (Py_ssize_t i = start + 1; i < n; i++)
        if (!es_vowel(w[i]) && es_vowel(w[i - 1]))
            return i + 1;
    return n;
}

/* stemming._r1_r2 */
static void es_r1_r2(const Py_UCS4 *w, Py_ssize_t n, Py_ssize_t *r1, Py_ssize_t *r2) {
    static const char *const prefixes[] = {"gener", "commun", "arsen"};
    *r1 = -1;
    for (int p = 0; p < 3 && *r1 < 0; p++) {
        Py_ssize_t k = (Py_ssize_t)strlen(prefixes[p]), i = 0;
        while (i < k && i < n && w[i] == (Py_UCS4)prefixes[p][i])
            i++;
        if (i == k)
            *r1 = k;
    }
    if (*r1 < 0)
        *r1 = es_region(w, n, 0);
    *r2 = *r1 < n ? es_region(w, n, *r1) : n;
}

/* stemming._short_syllable_at_end */
static int es_short_end(const Py_UCS4 *w, Py_ssize_t n) {
    if (n == 2)
        return es_vowel(w[0]) && !es_vowel(w[1]);
    if (n >= 3)
        return !es_vowel(w[n - 3]) && es_vowel(w[n - 2]) && !es_vowel(w[n - 1]) && w[n - 1] != 'w' && w[n - 1] != 'x' &&
               w[n - 1] != 'Y';
    return 0;
}

static const char *const ES_EXCEPTIONS[][2] = { /* stemming._EXCEPTIONS */
    {"skis", "ski"}, {"skies", "sky"}, {"dying", "die"}, {"lying", "lie"}, {"tying", "tie"}, {"idly", "idl"},
    {"gently", "gentl"}, {"ugly", "ugli"}, {"early", "earli"}, {"only", "onli"}, {"singly", "singl"}, {"sky", "sky"},
    {"news", "news"}, {"howe", "howe"}, {"atlas", "atlas"}, {"cosmos", "cosmos"}, {"bias", "bias"}, {"andes", "andes"},
};
static const char *const ES_AFTER_1A[] = { /* stemming._AFTER_1A */
    "inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed",
};
static const char *const ES_DOUBLES[] = {"bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"};

/* The stem of word[0..n) in w (room for n + 2 letters; marked: scratch of n); its length. */
static Py_ssize_t es_steps(const Py_UCS4 *word, Py_ssize_t n, Py_UCS4 *w, Py_UCS4 *marked) {
    Py_ssize_t off = 0;
    while (off < n && word[off] == '\'')
        off++;
    Py_ssize_t wn = n - off;
    memcpy(w, word + off, sizeof(Py_UCS4) * (size_t)wn);
    if (wn && w[0] == 'y')
        w[0] = 'Y';
    memcpy(marked, w, sizeof(Py_UCS4) * (size_t)wn);
    for (Py_ssize_t i = 1; i < wn; i++) /* a y after a vowel (as the word was before this pass) */
        if (w[i] == 'y' && es_vowel(w[i - 1]))
            marked[i] = 'Y';
    Py_ssize_t mn = wn;
    memcpy(w, marked, sizeof(Py_UCS4) * (size_t)wn);
    /* Step 0: possessive apostrophes */
    if (es_ends(w, wn, "'s'"))
        wn -= 3;
    else if (es_ends(w, wn, "'s"))
        wn -= 2;
    else if (es_ends(w, wn, "'"))
        wn -= 1;
    /* Step 1a: plurals */
    if (es_ends(w, wn, "sses"))
        wn -= 2;
    else if (es_ends(w, wn, "ied") || es_ends(w, wn, "ies"))
        wn -= wn > 4 ? 2 : 1;
    else if (es_ends(w, wn, "us") || es_ends(w, wn, "ss"))
        ;
    else if (es_ends(w, wn, "s") && es_has_vowel(w, wn >= 2 ? wn - 2 : 0))
        wn -= 1;
    for (size_t a = 0; a < sizeof ES_AFTER_1A / sizeof ES_AFTER_1A[0]; a++)
        if (es_is(w, wn, ES_AFTER_1A[a]))
            return wn;
    Py_ssize_t r1, r2;
    /* Step 1b: -eed, -ed, -ing */
    const char *eed = es_ends(w, wn, "eedly") ? "eedly" : es_ends(w, wn, "eed") ? "eed" : NULL;
    if (eed) {
        Py_ssize_t k = (Py_ssize_t)strlen(eed);
        es_r1_r2(marked, mn, &r1, &r2);
        if (wn - k >= r1) {
            wn -= k;
            w[wn++] = 'e';
            w[wn++] = 'e';
        }
    } else {
        static const char *const sufs[] = {"ingly", "edly", "ing", "ed"};
        for (int s = 0; s < 4; s++) {
            if (!es_ends(w, wn, sufs[s]))
                continue;
            Py_ssize_t k = (Py_ssize_t)strlen(sufs[s]);
            if (es_has_vowel(w, wn - k)) {
                wn -= k;
                int doubled = 0;
                for (int d = 0; d < 9 && !doubled; d++)
                    doubled = es_ends(w, wn, ES_DOUBLES[d]);
                if (es_ends(w, wn, "at") || es_ends(w, wn, "bl") || es_ends(w, wn, "iz")) {
                    w[wn++] = 'e';
                } else if (doubled) {
                    wn -= 1;
                } else {
                    es_r1_r2(marked, mn, &r1, &r2);
                    if (r1 >= wn && es_short_end(w, wn))
                        w[wn++] = 'e';
                }
            }
            break;
        }
    }
    /* Step 1c: final y -> i after a consonant that is not the first letter */
    if (wn > 2 && (w[wn - 1] == 'y' || w[wn - 1] == 'Y') && !es_vowel(w[wn - 2]))
        w[wn - 1] = 'i';
    /* Step 5: final e, ll */
    if (es_ends(w, wn, "e") || es_ends(w, wn, "ll")) {
        es_r1_r2(marked, mn, &r1, &r2);
        if (r1 > wn)
            r1 = wn;
        if (r2 > wn)
            r2 = wn;
        if (es_ends(w, wn, "e")) {
            if (wn - 1 >= r2 || (wn - 1 >= r1 && !es_short_end(w, wn - 1)))
                wn -= 1;
        } else if (wn - 1 >= r2) {
            wn -= 1;
        }
    }
    for (Py_ssize_t i = 0; i < wn; i++)
        if (w[i] == 'Y')
            w[i] = 'y';
    return wn;
}

PyDoc_STRVAR(english_stem_doc,
"english_stem(word) -> str\n"
"\n"
"dreamdb.stemming.english_stem_reference, in C: Porter2's inflectional steps, the same stem.");

static PyObject *english_stem(PyObject *Py_UNUSED(self), PyObject *arg) {
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError, "english_stem: a str is needed, not %.80s", Py_TYPE(arg)->tp_name);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    if (n <= 2)
        return Py_NewRef(arg);
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    Py_UCS4 last = PyUnicode_READ(kind, data, n - 1), first = PyUnicode_READ(kind, data, 0);
    /* no step can apply (the Python function's fast paths; the exceptions end in s, g, y, e or l) */
    if (last != '\'' && last != 's' && last != 'd' && last != 'g' && last != 'y' && last != 'e' && last != 'l')
        return Py_NewRef(arg);
    Py_UCS4 local[3 * 64 + 2], *word = local;
    if (n > 64 && !(word = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(3 * n + 2))))
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++)
        word[i] = PyUnicode_READ(kind, data, i);
    PyObject *result = NULL;
    for (size_t e = 0; e < sizeof ES_EXCEPTIONS / sizeof ES_EXCEPTIONS[0]; e++) {
        if (es_is(word, n, ES_EXCEPTIONS[e][0])) {
            result = PyUnicode_FromString(ES_EXCEPTIONS[e][1]);
            goto done;
        }
    }
    Py_UCS4 before = PyUnicode_READ(kind, data, n - 2);
    if (((last == 'l' && before != 'l') || (last == 'g' && !es_ends(word, n, "ing")) || (last == 'd' && before != 'e')) &&
        first != '\'') {
        result = Py_NewRef(arg);
        goto done;
    }
    Py_UCS4 *w = word + n, *marked = word + 2 * n + 2;
    Py_ssize_t wn = es_steps(word, n, w, marked);
    result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, w, wn);
done:
    if (word != local)
        PyMem_Free(word);
    return result;
}

/* Read span `s` of a sequence of (start, end) pairs into *a, *e, checked against the postings' length m. */
static int get_span(PyObject *seq, Py_ssize_t s, Py_ssize_t m, Py_ssize_t *a, Py_ssize_t *e) {
    PyObject *span = PySequence_Fast_GET_ITEM(seq, s);
    if (!PyTuple_Check(span) || PyTuple_GET_SIZE(span) < 2) {
        PyErr_SetString(PyExc_TypeError, "cooccurrence: each span must be a tuple (start, end, ...)");
        return -1;
    }
    *a = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 0));
    *e = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 1));
    if ((*a == -1 || *e == -1) && PyErr_Occurred())
        return -1;
    if (*a < 0 || *e > m || *a > *e) {
        PyErr_SetString(PyExc_ValueError, "cooccurrence: a span lies outside the postings");
        return -1;
    }
    return 0;
}

/* Check that each of the n_spans spans of seq lies inside pos[0:m], that its positions lie inside
   marks[0:n], and that their marks are zeros (a dirty scratch would be counted as anchors). */
static int check_spans(PyObject *seq, Py_ssize_t n_spans, const int64_t *pos, Py_ssize_t m, const uint8_t *marks,
                       Py_ssize_t n) {
    Py_ssize_t a, e;
    for (Py_ssize_t s = 0; s < n_spans; s++) {
        if (get_span(seq, s, m, &a, &e) < 0)
            return -1;
        for (Py_ssize_t i = a; i < e; i++) {
            if (pos[i] < 0 || pos[i] >= n) {
                PyErr_SetString(PyExc_ValueError, "cooccurrence: a position lies outside marks");
                return -1;
            }
            if (marks[pos[i]]) {
                PyErr_SetString(PyExc_ValueError, "cooccurrence: marks must be zeros");
                return -1;
            }
        }
    }
    return 0;
}

PyDoc_STRVAR(cooccurrence_doc,
"cooccurrence(pos, anchor_spans, term_spans, marks) -> (documents holding an anchor, [per term span: those of\n"
"its documents that hold an anchor])\n\n"
"pos: int64[m] document positions of the postings; anchor_spans, term_spans: sequences of tuples whose first two\n"
"items are a (start, end) slice of pos, one per term (MemoryEngine's (start, end, df) will do); marks: uint8[n] scratch, all zeros (left all zeros). The counts of\n"
"dreamdb.ranking.rank.cooccurrence_counts, which MemoryEngine.cooccurrence gives with numpy without this.");

static PyObject *cooccurrence(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *o_pos, *anchor_spans, *term_spans, *o_marks, *anchors = NULL, *terms = NULL, *counts = NULL;
    PyObject *result = NULL;
    Buf b_pos = {0}, b_marks = {0};
    const int64_t *pos = NULL;
    uint8_t *marks = NULL;
    Py_ssize_t m = 0, n = 0, n_anchor = 0, a = 0, e = 0, n_a = 0, n_t = 0, s, i;
    int marked = 0;
    if (!PyArg_ParseTuple(args, "OOOO", &o_pos, &anchor_spans, &term_spans, &o_marks))
        return NULL;
    if (get_buf(o_pos, &b_pos, "pos", 'i', 0) < 0 || get_buf(o_marks, &b_marks, "marks", 'u', 1) < 0)
        goto done;
    anchors = PySequence_Fast(anchor_spans, "anchor_spans must be a sequence");
    terms = anchors ? PySequence_Fast(term_spans, "term_spans must be a sequence") : NULL;
    if (!terms)
        goto done;
    pos = (const int64_t *)b_pos.view.buf;
    marks = (uint8_t *)b_marks.view.buf;
    m = b_pos.view.len / 8;
    n = b_marks.view.len;
    n_a = PySequence_Fast_GET_SIZE(anchors);
    n_t = PySequence_Fast_GET_SIZE(terms);
    if ((const char *)marks < (const char *)pos + b_pos.view.len && (const char *)pos < (const char *)marks + n) {
        PyErr_SetString(PyExc_ValueError, "cooccurrence: marks must not share memory with pos");
        goto done;
    }
    /* every span, position and mark checked before a mark is written */
    if (check_spans(anchors, n_a, pos, m, marks, n) < 0 || check_spans(terms, n_t, pos, m, marks, n) < 0)
        goto done;
    for (s = 0; s < n_a; s++) {
        get_span(anchors, s, m, &a, &e);
        for (i = a; i < e; i++)
            if (!marks[pos[i]]) {
                marks[pos[i]] = 1;
                n_anchor++;
            }
    }
    marked = 1;
    counts = PyList_New(n_t);
    if (!counts)
        goto done;
    for (s = 0; s < n_t; s++) {
        Py_ssize_t both = 0;
        get_span(terms, s, m, &a, &e);
        for (i = a; i < e; i++)
            both += marks[pos[i]];
        PyObject *v = PyLong_FromSsize_t(both);
        if (!v)
            goto done;
        PyList_SET_ITEM(counts, s, v);  /* steals v */
    }
    result = Py_BuildValue("(nO)", n_anchor, counts);
done:
    if (marked)  /* leave the scratch as it came: zeros */
        for (s = 0; s < n_a; s++) {
            get_span(anchors, s, m, &a, &e);
            for (i = a; i < e; i++)
                marks[pos[i]] = 0;
        }
    Py_XDECREF(counts);
    Py_XDECREF(anchors);
    Py_XDECREF(terms);
    release(&b_pos);
    release(&b_marks);
    return result;
}

static int cmp_int64(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

PyDoc_STRVAR(class_postings_doc,
"class_postings(pos, tf, spans, raw_norm, field_norm, field_w, n_docs, k1, marks, sums, touched, out_pos, out_w)\n"
"    -> (k, df)\n\n"
"dreamdb.ranking.memory.MemoryEngine._class in C: the postings of a class of terms (each of `spans`, a\n"
"(start, end, ...) slice of the flat postings, one per member), their term frequencies summed per\n"
"document and field, weighed as MemoryEngine._weigh weighs a term's (the same formulas, operation order\n"
"and doubles) with the IDF of the class's document frequency df (documents whose summed text tf is\n"
"positive): ln(1 + (n_docs - df + 0.5)/(df + 0.5)). pos: int64[m]; tf: uint16 or int64 [m, 4] (title,\n"
"description, tags, body); raw_norm: float64[n]; field_norm: float64[n, 4]; field_w: float64[4]; marks:\n"
"uint8[n] and sums: int64[n, 4], zeros (left zeros); touched: int64[n] scratch; out_pos: int64[cap],\n"
"out_w: float64[3 * cap], cap at least the spans' total length: out_pos[:k] receives the class's document\n"
"positions, ascending, and out_w[:3 k] its weights as float64[3, k] (idf x raw tf part, idf x BM25F\n"
"saturation, 0).");

static PyObject *class_postings(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *o_pos, *o_tf, *spans, *o_rn, *o_fn, *o_fw, *o_marks, *o_sums, *o_touched, *o_opos, *o_ow;
    Py_ssize_t n_docs;
    double k1;
    if (!PyArg_ParseTuple(args, "OOOOOOndOOOOO", &o_pos, &o_tf, &spans, &o_rn, &o_fn, &o_fw, &n_docs, &k1, &o_marks,
                          &o_sums, &o_touched, &o_opos, &o_ow))
        return NULL;
    Buf b_pos = {0}, b_tf = {0}, b_rn = {0}, b_fn = {0}, b_fw = {0}, b_marks = {0}, b_sums = {0}, b_touched = {0};
    Buf b_opos = {0}, b_ow = {0};
    PyObject *seq = NULL, *result = NULL;
    uint8_t *marks = NULL;
    int64_t *sums = NULL, *touched = NULL;
    Py_ssize_t k = 0;
    if (get_buf(o_pos, &b_pos, "pos", 'i', 0) < 0 || get_buf(o_rn, &b_rn, "raw_norm", 'f', 0) < 0 ||
        get_buf(o_fn, &b_fn, "field_norm", 'f', 0) < 0 || get_buf(o_fw, &b_fw, "field_w", 'f', 0) < 0 ||
        get_buf(o_marks, &b_marks, "marks", 'u', 1) < 0 || get_buf(o_sums, &b_sums, "sums", 'i', 1) < 0 ||
        get_buf(o_touched, &b_touched, "touched", 'i', 1) < 0 || get_buf(o_opos, &b_opos, "out_pos", 'i', 1) < 0 ||
        get_buf(o_ow, &b_ow, "out_w", 'f', 1) < 0)
        goto done;
    if (PyObject_GetBuffer(o_tf, &b_tf.view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_SetString(PyExc_TypeError, "tf: a C-contiguous buffer is needed");
        goto done;
    }
    b_tf.held = 1;
    const char *tf_format = b_tf.view.format ? b_tf.view.format : "B";
    if (*tf_format == '@' || *tf_format == '=' || *tf_format == '<')
        tf_format++;
    int wide = format_is(b_tf.view.format, 'i');
    if (!wide && !(tf_format[0] == 'H' && !tf_format[1])) {
        PyErr_SetString(PyExc_TypeError, "tf: uint16 or int64 items are needed");
        goto done;
    }
    Py_ssize_t m = b_pos.view.len / 8, n = b_marks.view.len, cap = b_opos.view.len / 8;
    if (b_tf.view.len != 4 * m * (wide ? 8 : 2) || b_rn.view.len != n * 8 || b_fn.view.len != 4 * n * 8 ||
        b_fw.view.len != 4 * 8 || b_sums.view.len != 4 * n * 8 || b_touched.view.len != n * 8 ||
        b_ow.view.len != 3 * cap * 8) {
        PyErr_SetString(PyExc_ValueError, "class_postings: array lengths disagree");
        goto done;
    }
    const int64_t *pos = (const int64_t *)b_pos.view.buf;
    const uint16_t *tf16 = (const uint16_t *)b_tf.view.buf;
    const int64_t *tf64 = (const int64_t *)b_tf.view.buf;
    const double *rn = (const double *)b_rn.view.buf, *fn = (const double *)b_fn.view.buf;
    const double *fw = (const double *)b_fw.view.buf;
    marks = (uint8_t *)b_marks.view.buf;
    sums = (int64_t *)b_sums.view.buf;
    touched = (int64_t *)b_touched.view.buf;
    int64_t *opos = (int64_t *)b_opos.view.buf;
    double *ow = (double *)b_ow.view.buf;
    seq = PySequence_Fast(spans, "spans must be a sequence");
    if (!seq)
        goto done;
    Py_ssize_t n_spans = PySequence_Fast_GET_SIZE(seq), total = 0, a, e;
    for (Py_ssize_t s = 0; s < n_spans; s++) {  /* every span and position checked before a mark is written */
        PyObject *span = PySequence_Fast_GET_ITEM(seq, s);
        if (!PyTuple_Check(span) || PyTuple_GET_SIZE(span) < 2) {
            PyErr_SetString(PyExc_TypeError, "class_postings: each span must be a tuple (start, end, ...)");
            goto done;
        }
        a = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 0));
        e = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 1));
        if ((a == -1 || e == -1) && PyErr_Occurred())
            goto done;
        if (a < 0 || e > m || a > e) {
            PyErr_SetString(PyExc_ValueError, "class_postings: a span lies outside the postings");
            goto done;
        }
        for (Py_ssize_t i = a; i < e; i++)
            if (pos[i] < 0 || pos[i] >= n) {
                PyErr_SetString(PyExc_ValueError, "class_postings: a posting's document position is out of range");
                goto done;
            }
        total += e - a;
    }
    if (total > cap) {
        PyErr_SetString(PyExc_ValueError, "class_postings: out_pos holds fewer items than the spans");
        goto done;
    }
    for (Py_ssize_t s = 0; s < n_spans; s++) {
        PyObject *span = PySequence_Fast_GET_ITEM(seq, s);
        a = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 0));
        e = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 1));
        for (Py_ssize_t i = a; i < e; i++) {
            int64_t d = pos[i];
            if (!marks[d]) {
                marks[d] = 1;
                touched[k++] = d;
            }
            for (int f = 0; f < 4; f++)
                sums[4 * d + f] += wide ? tf64[4 * i + f] : (int64_t)tf16[4 * i + f];
        }
    }
    qsort(touched, (size_t)k, sizeof(int64_t), cmp_int64);
    Py_ssize_t df = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        const int64_t *t = sums + 4 * touched[j];
        df += (t[0] + t[1] + t[2] + t[3]) > 0;
    }
    /* F.idf and MemoryEngine._weigh, operation for operation */
    double idf = log(1.0 + ((double)(n_docs - df) + 0.5) / ((double)df + 0.5));
    for (Py_ssize_t j = 0; j < k; j++) {
        int64_t d = touched[j];
        const int64_t *t = sums + 4 * d;
        double tfs[4] = {(double)t[0], (double)t[1], (double)t[2], (double)t[3]};
        double tf = ((tfs[0] + tfs[1]) + tfs[2]) + tfs[3];
        double pseudo = 0.0;
        for (int f = 0; f < 4; f++)
            pseudo += (tfs[f] * fw[f]) / fn[4 * d + f];
        opos[j] = d;
        ow[j] = idf * (tf > 0.0 ? (tf * (k1 + 1.0)) / (tf + rn[d]) : 0.0);
        ow[k + j] = idf * (pseudo > 0.0 ? (pseudo * (k1 + 1.0)) / (pseudo + k1) : 0.0);
        ow[2 * k + j] = 0.0;
    }
    result = Py_BuildValue("(nn)", k, df);
done:
    if (marks && sums && touched)  /* leave the scratch as it came: zeros */
        for (Py_ssize_t j = 0; j < k; j++) {
            int64_t d = touched[j];
            marks[d] = 0;
            sums[4 * d] = sums[4 * d + 1] = sums[4 * d + 2] = sums[4 * d + 3] = 0;
        }
    Py_XDECREF(seq);
    release(&b_pos); release(&b_tf); release(&b_rn); release(&b_fn); release(&b_fw); release(&b_marks);
    release(&b_sums); release(&b_touched); release(&b_opos); release(&b_ow);
    return result;
}

static PyMethodDef methods[] = {
    {"near_top", near_top, METH_VARARGS, near_top_doc},
    {"ranked_top", ranked_top, METH_VARARGS, ranked_top_doc},
    {"english_spellings", english_spellings, METH_O, english_spellings_doc},
    {"loanword_spellings", loanword_spellings, METH_VARARGS, loanword_spellings_doc},
    {"english_stem", english_stem, METH_O, english_stem_doc},
    {"cooccurrence", cooccurrence, METH_VARARGS, cooccurrence_doc},
    {"class_postings", class_postings, METH_VARARGS, class_postings_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernel",
    "Hot paths of dreamdb's memory engine (see dreamdb.ranking.memory): the BM25 accumulator, the English "
    "spellings of Turkish loanwords and the co-occurrence counts of translations; optional, built from C.",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernel(void) {
    PyObject *m = PyModule_Create(&module);
    /* CLASSES: spans take a kind (see near_top), and rankings carry the raw BM25 with classes */
    if (m && (PyModule_AddStringConstant(m, "SOURCE_SHA256", SOURCE_SHA256) < 0 ||
              PyModule_AddIntConstant(m, "CLASSES", 1) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
