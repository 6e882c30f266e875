"""The query tokenizer (dreamdb.embeddings.query_tokens) against the full tokenizer.json.

Real model files, real tokenizers library, real SQLite; the reference for every id list is the
``tokenizers`` library's own tokenizer loaded from the whole file.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import GOLD_TRAIN, SHARED

pytestmark = pytest.mark.model

EVAL_QUERIES = [SHARED / "eval-data" / name / "queries.jsonl" for name in ("xquad_tr_en", "scifact", "eips_ercs")]

#: Letters of several scripts, marks, ligatures, emoji, whitespace and punctuation, for generated texts.
ALPHABET = ("abcçdefgğhıijklmnoöprsştuüvyzABCÇİIÖŞÜ0123456789 .,;:!?-_/\\'\"()[]{}<>#@$%^&*~`|  \t\n"
            "日本語中文한국어Ελληνικάالعربيةहिन्दी😀🎉ﬁ①Ⅻ\u0301\u200b")


@pytest.fixture(scope="module")
def full(model_dir):
    """The tokenizer loaded from the whole tokenizer.json."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(model_dir / "tokenizer.json"))


@pytest.fixture()
def model_copy(model_dir, tmp_path) -> Path:
    """A model directory of our own: the graph linked, tokenizer.json copied (its mtime is ours to change)."""
    d = tmp_path / "model"
    d.mkdir()
    os.symlink(model_dir / "model.onnx", d / "model.onnx")
    shutil.copy2(model_dir / "tokenizer.json", d / "tokenizer.json")
    return d


@pytest.fixture(scope="module")
def query_tok(model_dir, tmp_path_factory):
    from dreamdb.embeddings.query_tokens import QueryTokenizer, write_piece_table

    table = tmp_path_factory.mktemp("pieces") / "pieces.sqlite"
    assert write_piece_table(model_dir / "tokenizer.json", table)
    return QueryTokenizer(model_dir / "tokenizer.json", table)


def _generated(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 120))) for _ in range(n)]


def _assert_same(query_tok, full, texts: list[str]) -> int:
    """Assert every text tokenises alike both ways; return how many the query tokenizer took."""
    taken = 0
    for text in texts:
        got = query_tok.encode(text)
        if got is None:
            continue
        taken += 1
        assert got == full.encode(text).ids, text
    return taken


def test_same_ids_as_the_full_tokenizer_on_generated_text(query_tok, full):
    texts = _generated(1500, seed=11) + [
        "", " ", "query: ", "a  b", "   leading and trailing   ", "ﬁ ﬂ ＦＵＬＬ", "İstanbul'da ığdır ÇĞÖŞÜ",
        "DEC-0054 foo_bar.baz() --force", "x" * 300, "query: " + "uyku borcu " * 150]
    assert _assert_same(query_tok, full, texts) == len(texts)


@pytest.mark.skipif(not all(p.is_file() for p in EVAL_QUERIES) or not GOLD_TRAIN.is_file(),
                    reason=f"the evaluation queries are not under {SHARED} (set DREAMDB_SHARED)")
def test_same_ids_as_the_full_tokenizer_on_every_evaluation_query(query_tok, full):
    texts = [json.loads(line)["text"] for p in EVAL_QUERIES for line in p.read_text(encoding="utf-8").splitlines()]
    texts += [json.loads(line)["query"] for line in GOLD_TRAIN.read_text(encoding="utf-8").splitlines()]
    assert len(texts) > 3500  # XQuAD 2,380, EIPs 884, SciFact 300, gold 60
    assert _assert_same(query_tok, full, ["query: " + t for t in texts]) == len(texts)


def test_texts_it_leaves_to_the_full_tokenizer(query_tok):
    from dreamdb.embeddings.query_tokens import MAX_QUERY_CHARS

    assert query_tok.encode("a <mask> b") is None  # an added token's text: the full tokenizer splits on it
    assert query_tok.encode("see <s> here") is None
    assert query_tok.encode("w " * (MAX_QUERY_CHARS // 2 + 1)) is None
    assert query_tok.encode("w " * (MAX_QUERY_CHARS // 2)) is not None


def test_a_table_of_another_tokenizer_state_is_refused(model_copy):
    from dreamdb.embeddings.query_tokens import QueryTokenizer, piece_table_state, write_piece_table

    tok, table = model_copy / "tokenizer.json", model_copy / "pieces.sqlite"
    assert write_piece_table(tok, table)
    QueryTokenizer(tok, table).close()
    assert piece_table_state(tok, table) == "current"
    st = tok.stat()
    os.utime(tok, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    with pytest.raises(ValueError, match="out of date"):
        QueryTokenizer(tok, table)
    assert piece_table_state(tok, table) == "out of date"
    table.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ValueError, match="cannot be read"):
        QueryTokenizer(tok, table)
    assert piece_table_state(tok, table) == "unreadable"
    table.unlink()
    with pytest.raises(ValueError, match="no piece table"):
        QueryTokenizer(tok, table)
    assert piece_table_state(tok, table) == "missing"


def test_only_unigram_tokenizers_get_a_table(tmp_path):
    from tokenizers import Tokenizer, models

    from dreamdb.embeddings.query_tokens import write_piece_table

    other = tmp_path / "tokenizer.json"
    Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1}, unk_token="[UNK]")).save(str(other))
    assert not write_piece_table(other, tmp_path / "pieces.sqlite")
    other.write_text("{not json", encoding="utf-8")
    assert not write_piece_table(other, tmp_path / "pieces.sqlite")
    assert not (tmp_path / "pieces.sqlite").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["tokenizer.json"]  # no temp file left behind


def test_the_embedder_embeds_a_query_without_the_full_tokenizer(model_copy):
    from dreamdb.embeddings.locate import PIECES_SIDECAR
    from dreamdb.embeddings.model import SMALL_BATCH, Embedder

    first = Embedder(model_copy)  # no table yet: the full tokenizer is loaded, then the table written
    assert first._full_tok is not None and (model_copy / PIECES_SIDECAR).is_file()
    queries = ["uyku borcu nasıl hesaplanıyor", "how is sleep debt computed?", "DEC-0054 ﬁx"]
    want = first.embed_queries(queries)

    second = Embedder(model_copy)
    got = second.embed_queries(queries)
    assert second._full_tok is None  # the query was tokenised from the table alone
    assert np.array_equal(got, want)  # the same ids, the same vectors
    passages = [f"note {i}: the chunker splits at headings" for i in range(SMALL_BATCH + 1)]
    assert np.array_equal(second.embed_passages(passages), first.embed_passages(passages))
    assert second._full_tok is not None  # a batch larger than SMALL_BATCH loaded it

    st = (model_copy / "tokenizer.json").stat()  # an edited tokenizer.json: the table is rewritten
    os.utime(model_copy / "tokenizer.json", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert Embedder(model_copy)._full_tok is not None
    fourth = Embedder(model_copy)
    assert np.array_equal(fourth.embed_queries(queries), want) and fourth._full_tok is None
