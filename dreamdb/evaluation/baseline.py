"""The neighbour every figure is measured against: the ``bm25s`` library over the same documents.

Settings: ``bm25s.BM25(k1=1.5, b=0.75, method="lucene")``. Lucene's variant
is the one whose IDF is dreamdb's, ln(1 + (N − df + 0.5)/(df + 0.5)); its
term-frequency part is the classic BM25 saturation, so on identical tokens
the two score alike. Tokenization is bm25s's own: lowercase, the regex
``\\b\\w\\w+\\b``, a bm25s stopword list and a Snowball stemmer of the
language :class:`Bm25sBaseline` is given (by default English; the evaluation
suite gives each index its own,
:func:`dreamdb.evaluation.suite._index_language`: Turkish for an index most
of whose documents are Turkish, as XQuAD's Turkish paragraphs and sentences,
else English); the stemmer is ``snowballstemmer``, passed as bm25s's
stemmer, or PyStemmer instead if installed — the same Snowball algorithm in
C. Documents with a zero score are dropped from the results (bm25s pads the
top k with them), so both systems return only matching documents.

``bm25s`` is an optional dependency (the ``eval`` extra: :func:`dreamdb.extras.install_command`).
"""

from __future__ import annotations

import os
import tempfile
import time

from dreamdb.errors import UsageError

K1, B, METHOD = 1.5, 0.75, "lucene"


def available() -> str | None:
    """``None`` if bm25s can be imported, else the reason it cannot."""
    try:
        import importlib

        importlib.import_module("bm25s")
    except Exception as exc:  # noqa: BLE001 - any import failure means "unavailable"
        from dreamdb.extras import install_command

        return f"bm25s not importable ({type(exc).__name__}: {exc}); {install_command('eval')}"
    return None


def _stemmer(language: str | None):
    if not language:
        return None, "none"
    try:
        import Stemmer  # PyStemmer

        return Stemmer.Stemmer(language), f"PyStemmer {language}"
    except ImportError:
        import snowballstemmer

        return snowballstemmer.stemmer(language), f"snowballstemmer {language}"


class Bm25sBaseline:
    """bm25s over a list of documents, with build and query timing.

    Args:
        ids: document ids (returned by :meth:`search`).
        texts: document texts (same order), e.g. title + body.
        stemmer: Snowball language name, or ``None`` for no stemming.
        stopwords: bm25s stopword set name (``"en"``) or ``None``.

    Raises:
        UsageError: bm25s is not installed.
    """

    def __init__(self, ids: list[str], texts: list[str], *, stemmer: str | None = "english", stopwords: str | None = "en") -> None:
        reason = available()
        if reason:
            raise UsageError(reason)
        import bm25s

        self._bm25s = bm25s
        self.ids = list(ids)
        self.stopwords = stopwords
        self.stemmer, self.stemmer_name = _stemmer(stemmer)
        t0 = time.perf_counter()
        tokens = bm25s.tokenize(list(texts), stopwords=stopwords or [], stemmer=self.stemmer, show_progress=False)
        self.retriever = bm25s.BM25(k1=K1, b=B, method=METHOD)
        self.retriever.index(tokens, show_progress=False)
        self.build_seconds = time.perf_counter() - t0
        self._vocab = set(self.retriever.vocab_dict) if getattr(self.retriever, "vocab_dict", None) else None

    def forget_word_cache(self) -> None:
        """Empty PyStemmer's cache of stemmed words (snowballstemmer keeps none), as
        :func:`dreamdb.evaluation.suite.forget_word_caches` does dreamdb's before each track."""
        size = getattr(self.stemmer, "maxCacheSize", None)
        if isinstance(size, int) and size > 0:
            self.stemmer.maxCacheSize = 0  # (PyStemmer purges its cache down to the new size)
            self.stemmer.maxCacheSize = size

    def describe(self) -> str:
        """One line naming the library version and settings."""
        return (f"bm25s {self._bm25s.__version__} BM25(k1={K1}, b={B}, method={METHOD!r}), "
                f"stopwords={self.stopwords or 'none'}, stemmer={self.stemmer_name}")

    def search(self, query: str, k: int = 10) -> list[str]:
        """The ids of the best ``k`` documents with a positive score, best first.

        Args:
            query: free text (tokenized like the documents).
            k: number of results.

        Returns:
            list of ids (empty when no query term is in the vocabulary).
        """
        toks = self._bm25s.tokenize([query], stopwords=self.stopwords or [], stemmer=self.stemmer,
                                    return_ids=False, show_progress=False)[0]
        if self._vocab is not None:
            toks = [t for t in toks if t in self._vocab]
        if not toks:
            return []
        k = min(k, len(self.ids))
        docs, scores = self.retriever.retrieve([toks], k=k, show_progress=False, n_threads=0)
        return [self.ids[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]

    def size_bytes(self) -> int:
        """Bytes of the saved index (``retriever.save``, without the corpus), measured in a temp dir."""
        with tempfile.TemporaryDirectory() as d:
            self.retriever.save(d, show_progress=False)
            return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
