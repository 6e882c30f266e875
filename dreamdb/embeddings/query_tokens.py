"""Tokenise a short text (a query) without loading the whole XLM-R vocabulary.

Loading ``tokenizer.json`` takes the ``tokenizers`` library 0.7–1.5 s on this machine, nearly all
of it building the Unigram model's 250,002 pieces (a 50,000-piece vocabulary loads in a tenth of
that), and a one-shot ``dreamdb recall --mode hybrid`` needs the tokens of one query, a few dozen
characters. A Unigram tokenisation of a text only ever uses pieces that are substrings of its
pre-tokenised words (Kudo, "Subword regularization", ACL 2018: the segmentation is the
best-scoring path through the lattice of the vocabulary's pieces found in the text), so a model
of exactly those pieces, with their scores, gives the same tokens.

This module keeps the vocabulary in a SQLite table next to the model (:data:`dreamdb.embeddings.locate.PIECES_SIDECAR`,
written once from ``tokenizer.json`` by :func:`write_piece_table`), and :class:`QueryTokenizer`
builds, per text, a ``tokenizers`` Unigram model of the pieces the text holds, with the model
file's own normaliser, pre-tokeniser and post-processor: the tokenisation itself is still the
library's. Two details keep the result identical to the full tokenizer's:

- the unknown-piece score is the vocabulary's lowest score minus a penalty, so the piece with the
  lowest score is always in the small model;
- the special pieces keep their ids (``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3), so the
  post-processor's ids stay right; a text holding an added token's text (``<mask>``) is left to the
  full tokenizer (:meth:`QueryTokenizer.encode` returns ``None``).

``tests/test_query_tokens.py`` compares both on every evaluation query and on generated text.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

from dreamdb.embeddings.locate import stat_key

#: Format of the piece table; a table of another format is rebuilt.
PIECES_FORMAT = 1
#: Longest text (characters) tokenised with a small model: a question, or the prompt hook's cut of a
#: prompt with a pasted log (4,000 characters, :data:`dreamdb.hook.MAX_QUERY_CHARS`), not a document (its
#: substrings, up to the longest piece's length each, are looked up in one statement). On this machine (4 Dec,
#: text of the README): 40 ms for 2,000 characters, 51 ms for 4,000, 112 ms for 8,000, against 2.35 s and
#: ≈ 540 MB loading ``tokenizer.json``; at 2,000 every hook prompt cut to 4,000 took the full tokenizer (QA
#: round 74 F3).
MAX_QUERY_CHARS = 8000
#: Special pieces at the head of XLM-R's vocabulary, in id order.
SPECIAL_PIECES = ("<s>", "<pad>", "</s>", "<unk>")


def write_piece_table(tokenizer_file: Path, dest: Path) -> bool:
    """Write the piece table of ``tokenizer_file`` to ``dest`` atomically (temp file + rename).

    Args:
        tokenizer_file: an XLM-R ``tokenizer.json`` (a Unigram model whose first pieces are
            :data:`SPECIAL_PIECES`), already validated by the caller.
        dest: the table's path (:data:`dreamdb.embeddings.locate.PIECES_SIDECAR` in the model directory).

    Returns:
        True when written; False when the file is not such a tokenizer or ``dest`` cannot be
        written (a read-only model directory): the full tokenizer is used then.
    """
    try:
        key = stat_key(tokenizer_file)
        spec = json.loads(tokenizer_file.read_text(encoding="utf-8"))
        added = [t["content"] for t in spec.get("added_tokens", [])]
        model = spec["model"]
        vocab = model["vocab"]
        if (model.get("type") != "Unigram" or model.get("byte_fallback")
                or [p for p, _s in vocab[:len(SPECIAL_PIECES)]] != list(SPECIAL_PIECES)):
            return False
    except (OSError, ValueError, KeyError, TypeError):
        return False
    lowest = min(range(len(vocab)), key=lambda i: vocab[i][1])
    spec["model"] = {**model, "vocab": []}  # the pipeline around the model, without its pieces
    spec["added_tokens"] = [t for t in spec.get("added_tokens", []) if t.get("id", -1) < len(SPECIAL_PIECES)]
    spec["truncation"] = spec["padding"] = None
    meta = {"format": PIECES_FORMAT, "source": key, "pieces": len(vocab), "lowest": lowest,
            "longest": max(len(p) for p, _s in vocab), "pipeline": spec, "added": added}
    from dreamdb.writes.files import sweep_stale_temps

    sweep_stale_temps(dest.parent, dest.name)
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.tmp")
    written = False
    try:
        tmp.unlink(missing_ok=True)
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode = OFF")  # a temp file renamed when complete: no journal to leave behind
            conn.execute("CREATE TABLE piece (text TEXT NOT NULL, id INTEGER PRIMARY KEY, score REAL NOT NULL)")
            conn.execute("CREATE TABLE meta (value TEXT NOT NULL)")
            conn.executemany("INSERT INTO piece VALUES (?, ?, ?)", ((p, i, s) for i, (p, s) in enumerate(vocab)))
            conn.execute("CREATE INDEX piece_text ON piece (text)")
            conn.execute("INSERT INTO meta VALUES (?)", (json.dumps(meta),))
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, dest)
        written = True
    except (OSError, sqlite3.Error):
        pass
    finally:  # also on Ctrl-C: the table is written again on a later load
        if not written:
            for leftover in (tmp, tmp.with_name(tmp.name + "-journal")):
                try:
                    leftover.unlink(missing_ok=True)
                except OSError:
                    pass
    return written


def piece_table_state(tokenizer_file: Path, table: Path) -> str:
    """How a query will be tokenised, cheaply (the table's one-row meta is read, nothing loaded).

    Returns:
        ``"current"`` (from the piece table), ``"missing"`` or ``"out of date"`` (from the whole
        ``tokenizer.json``, and the table is written on the next load where the model folder is
        writable), ``"unreadable"`` (rewritten then too), or ``"blocked"`` (something that is not a
        file has the table's name: never replaced).
    """
    if not table.is_file():
        return "blocked" if os.path.lexists(table) else "missing"
    try:
        conn = sqlite3.connect(f"file:{table}?mode=ro", uri=True)
        try:
            meta = json.loads(conn.execute("SELECT value FROM meta").fetchone()[0])
        finally:
            conn.close()
        current = meta.get("format") == PIECES_FORMAT and meta.get("source") == stat_key(tokenizer_file)
    except (OSError, sqlite3.Error, ValueError, TypeError, AttributeError):
        return "unreadable"
    return "current" if current else "out of date"


class QueryTokenizer:
    """Tokenises short texts exactly as the model's full ``tokenizer.json`` would (see the module doc).

    Args:
        tokenizer_file: the model's ``tokenizer.json`` (only its size and mtime are read).
        table: its piece table (:func:`write_piece_table`).

    Raises:
        ValueError: the table is missing, of another format, or was written from another state of
            ``tokenizer_file`` (the caller then uses, and rewrites it from, the full tokenizer).
    """

    def __init__(self, tokenizer_file: Path, table: Path) -> None:
        from tokenizers import Tokenizer

        if not table.is_file():
            raise ValueError(f"no piece table at {table}")
        conn = None
        try:
            conn = sqlite3.connect(f"file:{table}?mode=ro", uri=True, check_same_thread=False)
            meta = json.loads(conn.execute("SELECT value FROM meta").fetchone()[0])
            if meta.get("format") != PIECES_FORMAT or meta.get("source") != stat_key(tokenizer_file):
                raise ValueError(f"the piece table {table} is out of date")
            specials = conn.execute("SELECT text, id, score FROM piece WHERE id < ? OR id = ? ORDER BY id",
                                    (len(SPECIAL_PIECES), meta["lowest"])).fetchall()
            spec = dict(meta["pipeline"])
            spec["model"] = {**spec["model"], "vocab": [(p, s) for p, _i, s in specials[:len(SPECIAL_PIECES)]]}
            #: the model file's pipeline around its Unigram model (normaliser, pre-tokeniser, post-processor)
            self._base = Tokenizer.from_str(json.dumps(spec))
            self._longest = int(meta["longest"])
            self._added = tuple(meta.get("added", ()))
        except Exception as exc:  # noqa: BLE001 - sqlite3, JSON, a damaged table: the full tokenizer is used
            if conn is not None:
                conn.close()
            if isinstance(exc, ValueError):
                raise
            raise ValueError(f"the piece table {table} cannot be read: {exc}") from None
        self._conn = conn
        self._lock = threading.Lock()
        self._specials = specials
        #: set when a lookup failed (a damaged page): the table should be written again
        self.broken = False

    def encode(self, text: str) -> list[int] | None:
        """Token ids of ``text`` with ``<s>``/``</s>``, as the full tokenizer gives them (no truncation);
        ``None`` for a text this class leaves to the full tokenizer (longer than
        :data:`MAX_QUERY_CHARS`, or holding an added token's text such as ``<mask>``)."""
        from tokenizers import Tokenizer
        from tokenizers.models import Unigram

        if len(text) > MAX_QUERY_CHARS or any(a in text for a in self._added):
            return None
        base = self._base
        normalized = base.normalizer.normalize_str(text) if base.normalizer is not None else text
        words = base.pre_tokenizer.pre_tokenize_str(normalized) if base.pre_tokenizer is not None else [(normalized, None)]
        longest = self._longest
        wanted = {w[i:j] for w, _span in words for i in range(len(w)) for j in range(i + 1, min(len(w), i + longest) + 1)}
        try:
            with self._lock:
                found = self._conn.execute(
                    "SELECT text, id, score FROM piece WHERE text IN (SELECT value FROM json_each(?)) AND id >= ?",
                    (json.dumps(sorted(wanted)), len(SPECIAL_PIECES))).fetchall()
        except sqlite3.Error:  # a damaged table: the full tokenizer then, and the caller rewrites it
            self.broken = True
            return None
        rows = {i: (p, i, s) for p, i, s in (*self._specials, *found)}  # (the lowest-scoring piece may be found too)
        ids = sorted(rows)  # the special pieces first, at their own ids 0-3
        small = Tokenizer(Unigram([(rows[i][0], rows[i][2]) for i in ids], unk_id=SPECIAL_PIECES.index("<unk>"),
                                  byte_fallback=False))
        small.normalizer, small.pre_tokenizer, small.post_processor = base.normalizer, base.pre_tokenizer, base.post_processor
        return [ids[k] for k in small.encode(text).ids]

    def close(self) -> None:
        """Close the table."""
        self._conn.close()
