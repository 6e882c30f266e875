#!/usr/bin/env python
"""Generate a synthetic ``_dream_context`` vault for scale benchmarks.

``N`` markdown notes under ``knowledge/<topic>/`` with YAML frontmatter
(``title``, ``description``, ``tags``, ``date``) and a body of a few
``##`` sections. Words are drawn from a Zipf distribution (s ≈ 1.07) over a
vocabulary whose head is common English and whose long tail is made of
English-looking syllable compounds, so document frequencies look like a real
corpus (a few very frequent terms, a long tail of rare ones). Deterministic:
the same ``--seed`` and ``--docs`` give byte-identical files.

Usage::

    .venv/bin/python scripts/gen_vault.py OUT_DIR [--docs 100000] [--seed 7] [--vocab 60000]

``OUT_DIR/_dream_context`` is created, or replaced when this script wrote it
(it marks its vaults; any other folder there is refused); ``OUT_DIR/gen.json``
records the parameters, and a second call with the same parameters does nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np

HEAD = (
    "the of and to in is that for it as with was on be by this are from or have an which not at but can we "
    "use when data index query vault memory recall search file sync change decision note agent model user "
    "test build release version config error cache table score rank term document session hook token time "
    "value update delete store load read write path name type state task feature knowledge changelog "
    "server client request response api schema field column row key lock retry timeout batch stream queue "
    "worker thread process signal event handler module package library function method class object list "
    "map set graph node edge tree branch merge commit review deploy rollback migrate upgrade design plan "
    "measure benchmark latency throughput memory disk network security auth permission secret policy "
    "because should would could might must never always often usually first last next previous new old "
    "fast slow small large simple complex stable flaky local remote manual automatic default custom"
).split()
ONSETS = ("b bl br c ch cl cr d dr f fl fr g gl gr h j k l m n p pl pr qu r s sc sh sl sm sn sp st str t th tr v w wh z").split()
NUCLEI = ("a e i o u ai ea ee oa oo ou ie").split()
CODAS = ("", "", "n", "r", "l", "s", "t", "st", "nd", "ng", "ck", "m", "rt", "sh", "x")
SUFFIXES = ("", "", "", "er", "ing", "ed", "ion", "ly", "ness", "able", "ment", "ity", "ize")


def make_vocab(size: int, rng: np.random.Generator) -> list[str]:
    """Common English words first, then unique pseudo-words of 1–3 syllables plus a suffix."""
    vocab = list(dict.fromkeys(HEAD))
    seen = set(vocab)
    while len(vocab) < size:
        n = int(rng.integers(1, 4))
        w = "".join(ONSETS[rng.integers(len(ONSETS))] + NUCLEI[rng.integers(len(NUCLEI))] + CODAS[rng.integers(len(CODAS))]
                    for _ in range(n)) + SUFFIXES[rng.integers(len(SUFFIXES))]
        if len(w) > 2 and w not in seen:
            seen.add(w)
            vocab.append(w)
    return vocab


class ZipfSampler:
    """Draw word indices with P(rank r) ∝ 1 / r^s over a bounded vocabulary."""

    def __init__(self, n: int, s: float, rng: np.random.Generator) -> None:
        w = 1.0 / np.arange(1, n + 1) ** s
        self.cdf = np.cumsum(w) / w.sum()
        self.rng = rng

    def draw(self, k: int) -> np.ndarray:
        """``k`` word indices."""
        return np.minimum(np.searchsorted(self.cdf, self.rng.random(k)), len(self.cdf) - 1)


OWN_MARK = ".gen-vault"
"""File this script puts in the vault it writes: only such a vault is replaced (never a user's)."""
MIN_VOCAB = 5000
"""Smallest vocabulary: titles draw from ranks 200–5000."""
MAX_VOCAB = 2_000_000
"""Largest vocabulary (made word by word: ten million took minutes before the first note)."""


def _old_marker(marker: Path) -> bool:
    """Whether ``gen.json`` beside the vault is this script's (versions before :data:`OWN_MARK` wrote only it)."""
    try:
        return "version" in json.loads(marker.read_text())
    except (OSError, ValueError, TypeError):
        return False


class GenError(Exception):
    """A folder or parameter this script refuses (message for the user)."""


def generate(out: Path, docs: int, seed: int = 7, vocab_size: int = 60000) -> Path:
    """Write the vault (unless ``out/gen.json`` says it is already there) and return its ``_dream_context`` path.

    Args:
        out: output folder.
        docs: number of notes.
        seed: RNG seed.
        vocab_size: vocabulary size.

    Returns:
        The ``_dream_context`` folder.

    Raises:
        GenError: ``out/_dream_context`` exists and this script did not write it (it holds no
            :data:`OWN_MARK`), ``out`` is not a folder or lies in a vault, ``docs`` < 1, ``vocab_size``
            outside :data:`MIN_VOCAB`–:data:`MAX_VOCAB`, or ``seed`` < 0.
    """
    out = Path(out)
    if docs < 1 or not MIN_VOCAB <= vocab_size <= MAX_VOCAB or seed < 0:  # (QA round 103-A F2: a negative seed was
        # numpy's traceback, after the marker was written; --vocab 100000000 ran for minutes)
        raise GenError(f"--docs must be at least 1, --vocab from {MIN_VOCAB} to {MAX_VOCAB} and --seed at least 0 "
                       f"(got {docs}, {vocab_size}, {seed})")
    if out.exists() and not out.is_dir():
        raise GenError(f"{out} is not a folder")
    if out.name == "_dream_context" or any(a.name == "_dream_context" for a in out.absolute().parents):
        raise GenError(f"{out} is inside a vault; give a folder outside any _dream_context")
    params = {"docs": docs, "seed": seed, "vocab": vocab_size, "version": 1}
    vault = out / "_dream_context"
    marker = out / "gen.json"
    try:
        if json.loads(marker.read_text()) == params and vault.is_dir():
            return vault
    except (OSError, ValueError):
        pass
    if vault.exists() or vault.is_symlink():
        if not ((vault / OWN_MARK).is_file() or _old_marker(marker)) or vault.is_symlink():
            raise GenError(f"{vault} exists and was not made by this script; it is left as it is. "
                           "Give an empty or new folder.")
        shutil.rmtree(vault)
    vault.mkdir(parents=True)
    (vault / OWN_MARK).write_text("generated by scripts/gen_vault.py; the folder is replaced at the next call\n")
    rng = np.random.default_rng(seed)
    vocab = make_vocab(vocab_size, rng)
    z = ZipfSampler(len(vocab), 1.07, rng)
    topic_words = vocab[200:260]
    tags_pool = [f"topic:{w}" for w in vocab[60:140]]
    topics = [f"{w}" for w in topic_words[:24]]
    for t in topics:
        (vault / "knowledge" / t).mkdir(parents=True, exist_ok=True)
    for i in range(docs):
        title_words = [vocab[j] for j in z.draw(int(rng.integers(3, 8))) if j >= 40] or [vocab[int(rng.integers(200, 5000))]]
        title = " ".join(title_words).capitalize()
        desc = " ".join(vocab[j] for j in z.draw(int(rng.integers(8, 20))))
        tags = sorted({tags_pool[int(rng.integers(len(tags_pool)))] for _ in range(int(rng.integers(1, 5)))})
        date = f"20{24 + int(rng.integers(0, 3))}-{1 + int(rng.integers(0, 12)):02d}-{1 + int(rng.integers(0, 28)):02d}"
        sections = []
        for _s in range(int(rng.integers(1, 5))):
            head = " ".join(vocab[j] for j in z.draw(int(rng.integers(1, 4)))).capitalize()
            paras = []
            for _p in range(int(rng.integers(1, 4))):
                words = [vocab[j] for j in z.draw(int(rng.integers(20, 90)))]
                paras.append(" ".join(words).capitalize() + ".")
            sections.append(f"## {head}\n\n" + "\n\n".join(paras))
        slug = f"note-{i:06d}-{title_words[0]}"
        text = (f"---\ntitle: {json.dumps(title)}\ndescription: {json.dumps(desc)}\n"
                f"tags: [{', '.join(tags)}]\ndate: {date}\n---\n\n# {title}\n\n" + "\n\n".join(sections) + "\n")
        (vault / "knowledge" / topics[i % len(topics)] / f"{slug}.md").write_text(text, encoding="utf-8")
    marker.write_text(json.dumps(params))
    return vault


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="output folder (gets _dream_context/ and gen.json)")
    ap.add_argument("--docs", type=int, default=100_000, help="number of notes (default 100000)")
    ap.add_argument("--seed", type=int, default=7, help="RNG seed (default 7)")
    ap.add_argument("--vocab", type=int, default=60_000, help="vocabulary size (default 60000)")
    a = ap.parse_args(argv)
    try:
        vault = generate(a.out, a.docs, a.seed, a.vocab)
    except (GenError, OSError) as exc:
        print(f"gen_vault: {exc}", file=sys.stderr)
        return 2
    print(vault)
    return 0


if __name__ == "__main__":
    from interrupt import run

    sys.exit(run(main))
