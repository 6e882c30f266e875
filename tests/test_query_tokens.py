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
def piece_table(model_dir, tmp_path_factory) -> Path:
    """The piece table of the model's tokenizer.json, written once for the module (read-only use: copy it)."""
    from dreamdb.embeddings.query_tokens import write_piece_table

    table = tmp_path_factory.mktemp("pieces") / "pieces.sqlite"
    assert write_piece_table(model_dir / "tokenizer.json", table)
    return table


@pytest.fixture(scope="module")
def query_tok(model_dir, piece_table):
    from dreamdb.embeddings.query_tokens import QueryTokenizer

    return QueryTokenizer(model_dir / "tokenizer.json", piece_table)


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


def test_the_prompt_hooks_longest_text_is_tokenised_from_the_table(query_tok, full):
    """QA round 74 F3: the hook cuts a long prompt to 4,000 characters, over the table's 2,000 then, so every such
    hybrid prompt loaded tokenizer.json (2.4 s, 540 MB). A cut prompt is now tokenised from the table, the same ids."""
    from dreamdb.hook import MAX_QUERY_CHARS as HOOK_CHARS
    from dreamdb.hook import query_text

    log = "".join(f"2026-12-04T10:{i % 60:02d}:00 ERROR worker-{i} failed: timeout after {i * 7} ms (retry {i % 3})\n"
                  for i in range(400))
    prompt = "why does the sync worker time out? " + log
    text = "query: " + query_text(prompt)
    # (cut to the most the hook reads, less the words its seams split: QA round 156-B F1)
    assert len(prompt) > HOOK_CHARS and len(text) > HOOK_CHARS - 100
    assert _assert_same(query_tok, full, [text]) == 1


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


def test_a_query_longer_than_the_table_takes_is_tokenised_from_its_head(model_copy):
    """QA round 76 F12: a query over the table's 8,000 characters loaded tokenizer.json (4.4 s, 554 MB) though only
    its first 512 tokens are used. Its first 8,000 characters, less the word the cut may split, hold more tokens
    than are kept: those are tokenised from the table, the same ids as the full tokenizer's, truncated."""
    from dreamdb.embeddings.model import Embedder
    from dreamdb.embeddings.query_tokens import MAX_QUERY_CHARS

    first = Embedder(model_copy)  # (writes the table; keeps its full tokenizer, the reference)
    words = "uyku borcu nasıl hesaplanıyor how is sleep debt computed DEC-0054 ﬁx kaydı gitmeliyiz".split()
    long_query = " ".join(words[i % len(words)] for i in range(3000))
    assert len(long_query) > MAX_QUERY_CHARS
    want = first._encode(["query: " + long_query], True)[0]
    second = Embedder(model_copy)
    assert second._encode(["query: " + long_query], True)[0] == want and len(want) == second.max_length
    assert second._full_tok is None  # (from the table alone)
    assert np.array_equal(second.embed_queries([long_query]), first.embed_queries([long_query]))
    # no word boundary in reach (QA round 77 G9: these loaded tokenizer.json, 550 MB): the head's tokens once they
    # are 4 times the kept ones, as the full tokenizer's long-text path accepts; the same ids
    rng = random.Random(7)
    for unspaced in ("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(MAX_QUERY_CHARS + 10)),
                     "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(MAX_QUERY_CHARS - 3)),
                     "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(20_000))):
        assert second._encode(["query: " + unspaced], True)[0] == first._encode(["query: " + unspaced], True)[0]
    assert second._full_tok is None


def test_the_embedder_embeds_a_query_without_the_full_tokenizer(model_copy):
    from dreamdb.embeddings.locate import PIECES_SIDECAR
    from dreamdb.embeddings.model import TABLE_CHARS, Embedder

    first = Embedder(model_copy)  # no table yet: the full tokenizer is loaded, then the table written
    assert first._full_tok is not None and (model_copy / PIECES_SIDECAR).is_file()
    queries = ["uyku borcu nasıl hesaplanıyor", "how is sleep debt computed?", "DEC-0054 ﬁx"]
    want = first.embed_queries(queries)

    second = Embedder(model_copy)
    got = second.embed_queries(queries)
    assert second._full_tok is None  # the queries were tokenised from the table alone
    assert np.array_equal(got, want)  # the same ids, the same vectors
    passages = [f"note {i}: the chunker splits at headings " * 20 for i in range(8)]
    assert np.array_equal(second.embed_passages(passages), first.embed_passages(passages))
    assert second._full_tok is None
    chunks = [f"chunk {i}: " + "sleep debt levels and consolidation " * 30 for i in range(3)]
    assert np.array_equal(second.embed_passages(chunks), first.embed_passages(chunks))
    assert second._full_tok is None
    # past TABLE_CHARS characters: the full tokenizer is loaded. The budget counts characters, so chunks of
    # 1,000 padded with spaces (one token to the model) cross it as 100 chunks of prose do, in a tenth of the inference
    second.embed_passages([f"chunk {i}: sleep debt levels" + " " * 980 for i in range(TABLE_CHARS // 1000)])
    assert second._full_tok is not None

    st = (model_copy / "tokenizer.json").stat()  # an edited tokenizer.json: the table is rewritten
    os.utime(model_copy / "tokenizer.json", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert Embedder(model_copy)._full_tok is not None
    fourth = Embedder(model_copy)
    assert np.array_equal(fourth.embed_queries(queries), want) and fourth._full_tok is None


def test_the_full_tokenizer_loaded_later_is_the_one_loaded_with_the_model(model_copy, piece_table, model_dir, embedder,
                                                                          tmp_path):
    """QA round 144-C F1: an Embedder tokenises from the piece table, and loads tokenizer.json only past TABLE_CHARS
    characters, minutes into an ``embed refresh``. A model installed into its folder meanwhile (a new folder renamed
    into place, as model install and build do) had its tokenizer loaded then, and the vectors of its tokens were
    stored under the id of the model loaded, for good. The tokenizer is read from the file opened at the load; one
    written in place since stops the embedding with an error instead."""
    from dreamdb.embeddings.locate import PIECES_SIDECAR
    from dreamdb.embeddings.model import TABLE_CHARS, Embedder
    from dreamdb.errors import ModelError

    shutil.copy2(piece_table, model_copy / PIECES_SIDECAR)  # (the table of the copied tokenizer.json)
    emb = Embedder(model_copy)
    assert emb._full_tok is None
    spec = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = spec["model"]["vocab"]
    sleep, debt = (next(i for i, (piece, _score) in enumerate(vocab) if piece == w) for w in ("▁sleep", "▁debt"))
    vocab[sleep], vocab[debt] = vocab[debt], vocab[sleep]  # another model: two pieces at each other's ids
    other = tmp_path / "other"
    other.mkdir()
    os.symlink(model_dir / "model.onnx", other / "model.onnx")
    (other / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    model_copy.rename(tmp_path / "replaced")
    other.rename(model_copy)
    emb.embed_passages([f"chunk {i}: notes" + " " * 990 for i in range(TABLE_CHARS // 1000 + 1)])
    assert emb._full_tok is not None  # (loaded now, past TABLE_CHARS)
    text = ["how is sleep debt computed?"]
    assert np.array_equal(emb.embed_passages(text), embedder.embed_passages(text))  # the model of its model_id
    assert not np.array_equal(Embedder(model_copy).embed_passages(text), embedder.embed_passages(text))  # (not the new)

    again = Embedder(model_copy)  # (the new model's piece table, written by its first load just above)
    assert again._full_tok is None
    st = (model_copy / "tokenizer.json").stat()
    os.utime(model_copy / "tokenizer.json", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # written in place
    with pytest.raises(ModelError, match="was replaced or changed while it was in use") as caught:
        again.embed_passages([f"chunk {i}: notes" + " " * 990 for i in range(TABLE_CHARS // 1000 + 1)])
    assert caught.value.hint == ("Run the command again; in Python, an Index loads the model anew for its next query."
                                 " Either reads the model as it is now.")
    assert again.replaced  # (get_embedder and an Index load the model anew: QA round 145-A F2)


def test_a_damaged_table_is_written_anew(model_copy, piece_table):
    """QA round 33: pages zeroed inside the table left it "current" while every query fell back, forever."""
    import sqlite3

    from dreamdb.embeddings.locate import PIECES_SIDECAR
    from dreamdb.embeddings.model import Embedder
    from dreamdb.embeddings.query_tokens import piece_table_state

    table = model_copy / PIECES_SIDECAR
    shutil.copy2(piece_table, table)  # the table of the copied tokenizer.json, as a first load writes it
    want = Embedder(model_copy).embed_queries(["how is sleep debt computed?"])
    page = sqlite3.connect(table).execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(table.read_bytes())
    at = len(data) * 3 // 4 // page * page  # the text index, written last, takes the file's end
    data[at: at + 200 * page] = bytes(200 * page)  # zeroed pages, as a disk error would leave them
    table.write_bytes(bytes(data))
    st = (model_copy / "tokenizer.json").stat()
    assert piece_table_state(model_copy / "tokenizer.json", table) == "current"  # its meta is intact
    emb = Embedder(model_copy)
    assert emb._query_tok is not None
    assert np.array_equal(emb.embed_queries(["how is sleep debt computed?"]), want)  # by the full tokenizer
    assert emb._query_tok is None and emb._full_tok is not None
    again = Embedder(model_copy)  # the table was written anew
    assert np.array_equal(again.embed_queries(["how is sleep debt computed?"]), want)
    assert again._full_tok is None and not again._query_tok.broken
    assert (model_copy / "tokenizer.json").stat().st_mtime_ns == st.st_mtime_ns


def test_a_tokenizer_without_normaliser_or_pre_tokenizer_gives_the_same_ids(model_dir, tmp_path):
    """QA round 33: a tokenizer.json whose normalizer is null passed the install check, then every query crashed."""
    from tokenizers import Tokenizer

    from dreamdb.embeddings.query_tokens import QueryTokenizer, write_piece_table

    spec = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    texts = ["query: uyku borcu nasıl hesaplanıyor", "  two  spaces ﬁ ①", "İstanbul'da", ""] + _generated(200, seed=5)
    for part in ("normalizer", "pre_tokenizer"):
        tok = tmp_path / f"no-{part}.json"
        tok.write_text(json.dumps({**spec, part: None}), encoding="utf-8")
        assert write_piece_table(tok, tmp_path / f"{part}.sqlite")
        assert _assert_same(QueryTokenizer(tok, tmp_path / f"{part}.sqlite"), Tokenizer.from_file(str(tok)), texts) == len(texts)


def test_an_interrupted_write_leaves_no_temp_file_and_stale_ones_are_swept(model_copy, monkeypatch):
    """QA round 33: Ctrl-C during the first hybrid recall left .dreamdb-pieces.sqlite.<pid>.tmp behind,
    and `model build --force` then refused the folder as not a model's."""
    import subprocess
    import sys

    from dreamdb.embeddings import locate, query_tokens
    from dreamdb.embeddings.locate import PIECES_SIDECAR

    table = model_copy / PIECES_SIDECAR
    real_replace = os.replace

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(query_tokens.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        query_tokens.write_piece_table(model_copy / "tokenizer.json", table)
    monkeypatch.setattr(query_tokens.os, "replace", real_replace)
    assert sorted(p.name for p in model_copy.iterdir()) == ["model.onnx", "tokenizer.json"]

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    stale = [model_copy / f"{PIECES_SIDECAR}.{gone}.tmp", model_copy / f"{PIECES_SIDECAR}.{gone}.tmp-journal"]
    for p in stale:
        p.write_bytes(b"half a table")
    live = model_copy / f"{PIECES_SIDECAR}.{os.getppid()}.tmp"  # a writer still running keeps its file
    live.write_bytes(b"being written")
    locate.check_replaceable(model_copy)  # a folder with sidecar temp files is still a model's
    assert query_tokens.write_piece_table(model_copy / "tokenizer.json", table)
    assert not any(p.exists() for p in stale) and live.exists() and table.is_file()


def test_a_folder_under_a_model_file_name_is_not_replaced(model_copy):
    """QA round 33: `model build --force` deleted a folder named .dreamdb-pieces.sqlite with a user file in it."""
    from dreamdb.embeddings import locate
    from dreamdb.errors import WriteRefused

    (model_copy / locate.PIECES_SIDECAR).mkdir()
    (model_copy / locate.PIECES_SIDECAR / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(WriteRefused, match=r"\.dreamdb-pieces\.sqlite"):
        locate.check_replaceable(model_copy)
    from dreamdb.embeddings.query_tokens import piece_table_state, write_piece_table

    assert piece_table_state(model_copy / "tokenizer.json", model_copy / locate.PIECES_SIDECAR) == "blocked"
    assert not write_piece_table(model_copy / "tokenizer.json", model_copy / locate.PIECES_SIDECAR)
    assert (model_copy / locate.PIECES_SIDECAR / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_a_query_with_bytes_that_were_not_utf8_is_embedded(model_dir):
    """QA round 33: `dreamdb recall --mode hybrid $'sleep \\xfe debt'` (a Latin-5 terminal) exited 70."""
    from dreamdb.embeddings.model import Embedder

    emb = Embedder(model_dir)
    got = emb.embed_queries(["sleep \udcfe debt"])  # as Python decodes the argument: a lone surrogate
    assert np.array_equal(got, emb.embed_queries(["sleep \ufffd debt"]))
    assert emb.count_tokens(["a \ud800 b"]) == emb.count_tokens(["a \ufffd b"])
