"""The C twin of Porter2's inflectional steps gives the reference's stems (dreamdb/stemming.py,
dreamdb/ranking/_kernel.c)."""

from __future__ import annotations

import random
import re

import pytest

from dreamdb import stemming
from dreamdb.stemming import english_stem_reference
from tests.conftest import REAL_VAULT_SRC, needs_real_vault

try:
    from dreamdb.ranking._kernel import english_stem as c_stem
except ImportError:  # pragma: no cover - an install without a C compiler
    c_stem = None

needs_kernel = pytest.mark.skipif(c_stem is None, reason="the C kernel is not built (no C compiler at install)")


def _differing(words) -> list[tuple[str, str, str]]:
    return [(w, english_stem_reference(w), c_stem(w)) for w in words if c_stem(w) != english_stem_reference(w)]


def test_dreamdb_stems_with_the_c_twin_where_it_was_built():
    assert stemming.english_stem is (c_stem if c_stem is not None else english_stem_reference)


@needs_kernel
def test_the_c_twin_stems_every_inflected_and_random_word_as_the_reference():
    rng = random.Random(3)
    bases = ["hope", "hop", "plan", "agree", "feed", "cry", "try", "fly", "tie", "play", "stay", "bless", "pass",
             "rate", "gener", "generous", "commun", "communal", "arsen", "arsenal", "yell", "eye", "yay", "control"]
    suffixes = ["", "s", "es", "'s", "s'", "ed", "ing", "ings", "ingly", "edly", "eedly", "eed", "ies", "ied", "ly",
                "e", "l", "ll", "y", "'", "''"]
    words = [p + b + s for b in bases for s in suffixes for p in ("", "'", "y")]
    words += list(stemming._EXCEPTIONS) + list(stemming._AFTER_1A) + [w + "s" for w in stemming._AFTER_1A]
    words += ["", "a", "ab", "'''", "'s'", "ies", "sses", "Yes", "aYy", "ayyy", "x" * 300 + "ings", "über", "çalışıyor"]
    # rule letters and apostrophes often, so every step and region is reached; then any letters
    words += ["".join(rng.choice("aeiouybcdeglnrstyY'swx") for _ in range(rng.randint(0, 14))) for _ in range(60_000)]
    words += ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzçğıöşüéßY'") for _ in range(rng.randint(0, 14)))
              for _ in range(20_000)]
    assert _differing(words) == []
    assert sum(english_stem_reference(w) != w for w in words) > 15_000  # the steps do act
    with pytest.raises(TypeError):
        c_stem(b"databases")


@needs_kernel
@needs_real_vault
def test_the_c_twin_stems_the_real_vault_as_the_reference():
    words = {w for path in REAL_VAULT_SRC.rglob("*.md")
             for w in re.findall(r"[^\W_]+", path.read_text(encoding="utf-8", errors="replace").lower())}
    assert len(words) > 3000
    assert _differing(words) == []
