"""English inflectional stemming: the inflectional steps of Porter2 (Snowball English).

SPEC §2 asks for conservative stemming that only collapses inflections
(``databases`` → ``database``). Porter2 (Porter 2001, "The English (Porter2)
stemming algorithm", snowballstem.org/algorithms/english/stemmer.html) does
that in steps 0, 1a, 1b and 1c (possessives, plurals, ``-ed``/``-ing``,
final ``-y``) and the final-``e``/``-ll`` tidy-up of step 5; steps 2–4 remove
derivational suffixes (``-ization``, ``-ful``, ``-ness``, ``-ive``…), which
would merge words of different meaning (``organization`` → ``organ``), so
they are left out. The Snowball library implements only the whole algorithm,
hence this transcription of the steps we keep. Its output is a stem, not a
word (``decided`` and ``decide`` → ``decid``), used only to match.

:func:`english_stem_reference` is the transcription, in Python. :data:`english_stem`, which
dreamdb calls, is its C twin ``dreamdb.ranking._kernel.english_stem`` where the install compiled
it (same stems, ≈ 10× faster; ``tests/test_stemming.py`` holds the two together), else the
reference itself.
"""

from __future__ import annotations

import re

_VOWELS = frozenset("aeiouy")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
_EXCEPTIONS = {
    "skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie", "idly": "idl", "gently": "gentl",
    "ugly": "ugli", "early": "earli", "only": "onli", "singly": "singl", "sky": "sky", "news": "news", "howe": "howe",
    "atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes",
}
_RULE_ENDINGS = frozenset("'sdgyel")
"""Last letters some step acts on: ' and s (steps 0, 1a), d and g (-ed, -eed, -ing), y (-edly,
-ingly, step 1c), e and l (step 5). A word ending otherwise is its own stem."""
_Y_AFTER_VOWEL = re.compile("(?<=[aeiouy])y")
"""A ``y`` after a vowel, which Porter2 marks as a consonant (``Y``)."""
_AFTER_1A = frozenset(("inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed"))


def _r1_r2(w: str) -> tuple[int, int]:
    def region(start: int) -> int:
        for i in range(start + 1, len(w)):
            if w[i] not in _VOWELS and w[i - 1] in _VOWELS:
                return i + 1
        return len(w)

    for prefix in ("gener", "commun", "arsen"):
        if w.startswith(prefix):
            r1 = len(prefix)
            break
    else:
        r1 = region(0)
    return r1, region(r1) if r1 < len(w) else len(w)


def _short_syllable_at_end(w: str) -> bool:
    n = len(w)
    if n == 2:
        return w[0] in _VOWELS and w[1] not in _VOWELS
    if n >= 3:
        return w[-3] not in _VOWELS and w[-2] in _VOWELS and w[-1] not in _VOWELS and w[-1] not in "wxY"
    return False


def _has_vowel(s: str) -> bool:
    return any(c in _VOWELS for c in s)


def english_stem_reference(word: str) -> str:
    """Stem a lowercase English word with Porter2's inflectional steps (0, 1a, 1b, 1c, 5).

    Words of ≤ 2 letters and the algorithm's exception words are returned as
    defined by Porter2. Example: ``databases`` → ``databas``, ``protecting`` →
    ``protect``, ``policies`` → ``polici``, ``organization`` unchanged.
    """
    if len(word) <= 2:
        return word
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    last = word[-1]
    if last not in _RULE_ENDINGS:  # no step below can apply (a fast path; same result)
        return word
    # Fast paths, same result: of the rules on a last l, g or d, only -ll (step 5), -ing (step 1b)
    # and -ed (-ied, -eed, -ed: steps 1a and 1b; the -ed words of _AFTER_1A) can apply.
    if ((last == "l" and word[-2] != "l") or (last == "g" and not word.endswith("ing"))
            or (last == "d" and word[-2] != "e")) and word[0] != "'":  # (a leading ' is stripped below)
        return word
    w = word.lstrip("'")
    if w.startswith("y"):
        w = "Y" + w[1:]
    if "y" in w:
        w = _Y_AFTER_VOWEL.sub("Y", w)
    marked = w  # R1 and R2 are regions of the word as marked here (computed when a rule needs them)
    # Step 0: possessive apostrophes
    for suf in ("'s'", "'s", "'"):
        if w.endswith(suf):
            w = w[: -len(suf)]
            break
    # Step 1a: plurals
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith(("ied", "ies")):
        w = w[:-2] if len(w) > 4 else w[:-1]
    elif w.endswith(("us", "ss")):
        pass
    elif w.endswith("s") and _has_vowel(w[:-2]):
        w = w[:-1]
    if w in _AFTER_1A:
        return w
    # Step 1b: -eed, -ed, -ing
    for suf in ("eedly", "eed"):
        if w.endswith(suf):
            if len(w) - len(suf) >= _r1_r2(marked)[0]:
                w = w[: -len(suf)] + "ee"
            break
    else:
        for suf in ("ingly", "edly", "ing", "ed"):
            if w.endswith(suf):
                stem = w[: -len(suf)]
                if _has_vowel(stem):
                    w = stem
                    if w.endswith(("at", "bl", "iz")):
                        w += "e"
                    elif w.endswith(_DOUBLES):
                        w = w[:-1]
                    elif _r1_r2(marked)[0] >= len(w) and _short_syllable_at_end(w):
                        w += "e"
                break
    # Step 1c: final y → i after a consonant that is not the first letter
    if len(w) > 2 and w[-1] in "yY" and w[-2] not in _VOWELS:
        w = w[:-1] + "i"
    # Step 5: final e, ll
    if not w.endswith(("e", "ll")):
        return w.replace("Y", "y")
    r1, r2 = _r1_r2(marked)
    r1, r2 = min(r1, len(w)), min(r2, len(w))
    if w.endswith("e"):
        if len(w) - 1 >= r2 or (len(w) - 1 >= r1 and not _short_syllable_at_end(w[:-1])):
            w = w[:-1]
    elif w.endswith("ll") and len(w) - 1 >= r2:
        w = w[:-1]
    return w.replace("Y", "y")


try:  # the C twin, built at install where a C compiler is present (dreamdb/ranking/_kernel.c)
    from dreamdb.ranking._kernel import english_stem
except ImportError:  # pragma: no cover - an install without a C compiler
    english_stem = english_stem_reference
