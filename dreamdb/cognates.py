"""English spellings of Turkish loanwords (cognates), for query words the index does not know.

Turkish writes the international vocabulary it borrowed from French and
English as it is pronounced, by regular rules (Türk Dil Kurumu, *Yazım
Kılavuzu*, on the spelling of words of foreign origin): ``c`` sounding k is
written ``k``, ``x`` is ``ks``, ``ph`` is ``f``, ``th`` is ``t``, ``y`` in a vowel's place is
``i``, a soft ``g`` is ``j``, ``s`` between vowels ``z``; and the learned
endings take Turkish forms: -tion/-sion → -syon (-siyon), -ction → -ksiyon,
-ty → -te, -ic/-ical → -ik, -ive → -if, -ism → -izm, -logy → -loji, -graphy
→ -grafi, -nomy → -nomi, -ance/-ence → -ans/-ens, in- → en- before a
consonant (information → enformasyon). So ``konsolidasyon`` is
*consolidation*, ``sistem`` *system*, ``strateji`` *strategy*, ``müzik``
*music*, ``monolitik`` *monolithic*: a Turkish question about an English note shares these words with
it, though BM25 sees different strings.

:func:`english_spellings` undoes the rules: it lists the English spellings a
Turkish root may stand for. Most of them are no word at all; the index's
vocabulary picks the ones that occur in a note not written in Turkish
(:func:`dreamdb.ranking.rank.plan_query`), so the rules only ever connect a
query word to a word that is there. No rule comes from, or was tuned on, an
evaluation query; the rules are the spelling conventions above. The memory engine calls the C
twin of :func:`loanword_spellings`, ``dreamdb.ranking._kernel.loanword_spellings`` (built at install
where a C compiler exists; same lists, and ``english_spellings`` ≈ 14× faster); the functions here
are the reference, and tests hold the two together.

Limits, by design: roots shorter than :data:`MIN_ROOT_LETTERS` (four-letter
roots read as English words are mostly false friends: ``kare`` square is not
*care*), roots with ``ğ`` (it is silent, and dropping it pairs native words
with English ones: ``ağır`` heavy is not *air*), doubled English consonants
(``komisyon`` is not matched to *commission*) and irregular borrowings
(``kalite`` *quality*) are left alone.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations, product

MIN_ROOT_LETTERS = 5
"""Shortest Turkish root given English spellings (see the module docstring)."""

MAX_SPELLINGS = 32
"""Most English spellings listed for one root, fewest letter changes first: a cost bound (each is
stemmed and looked up); a root with more ambiguous letters keeps its likelier spellings."""

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzçıöşüâîû")
"""The letters of a root that is given spellings (ASCII and Turkish, no ``ğ``)."""
_VOWELS_TO_ASCII = str.maketrans({"ı": "i", "ü": "u", "ö": "o", "â": "a", "î": "i", "û": "u"})

_ENDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Turkish ending (after the vowels above became ASCII) → English endings, longest first
    ("ksiyon", ("ction",)), ("lojik", ("logical",)), ("siyon", ("sion", "tion")), ("ziyon", ("sion",)),
    ("syon", ("tion", "sion")), ("zyon", ("sion",)), ("grafi", ("graphy",)), ("metri", ("metry",)),
    ("loji", ("logy",)), ("nomi", ("nomy",)), ("sofi", ("sophy",)),
    ("izm", ("ism",)), ("ite", ("ity",)), ("ans", ("ance",)), ("ens", ("ence",)), ("ik", ("ic", "ical")),
    ("if", ("ive",)),
)
_SOUNDED = {"k": ("c", "ch"), "f": ("ph",), "i": ("y",), "j": ("g",), "z": ("s",), "y": ("i", ""), "ş": ("sh", "ch"),
            "ç": ("ch",), "t": ("th",)}
"""Letters that stand for other English letters some of the time (``teknoloji`` *technology*,
``şampiyon`` *champion*, ``stadyum`` *stadium*, ``teori`` *theory*, ``monolitik`` *monolithic*: Turkish has
no *th*, and writes the Greek theta of borrowed words ``t``, as ``matematik``, ``metodoloji``, ``patoloji``): each
is tried as it is and as each of these. The ``t`` of ``-tik`` too, which is read as ``t`` + ``-ik`` (``-tic``,
``-thic``). ``y``
only where Turkish writes it as a glide, inside the word before a vowel (``medya``, ``radyo``), not
at either end, where it is the same letter in both languages (``party`` must not become *part*).
``ş`` and ``ç`` must change (English has no such letter)."""
_ENDINGS_BY_LAST: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    last: tuple(e for e in _ENDINGS if e[0][-1] == last) for last in {tr[-1] for tr, _en in _ENDINGS}}
""":data:`_ENDINGS` by their last letter (a root is compared with the few that may fit)."""
_MUST_CHANGE = frozenset("şç")
MAX_SOUNDED = 5
"""Letters of one root tried both ways (2^5 · … spellings): a cost bound; later ones stay as written."""


@lru_cache(maxsize=16_384)
def english_spellings(root: str) -> tuple[str, ...]:
    """English spellings a Turkish word's root may stand for, as a loanword (see the module docstring).

    Args:
        root: a lowercase Turkish root (the Turkish stemmer's output, e.g. ``konsolidasyon``).

    Returns:
        distinct lowercase ASCII candidates, never the root itself (``sistem`` → ``("system",)``):
        for each English ending the root's ending may stand for, in :data:`_ENDINGS`' order, its
        spellings with the fewest changed letters first; at most :data:`MAX_SPELLINGS`. Empty for a
        root shorter than :data:`MIN_ROOT_LETTERS`, with ``ğ``, or with a letter that is neither
        ASCII nor Turkish. Cached.

    Example:
        >>> "consolidation" in english_spellings("konsolidasyon")
        True
    """
    if len(root) < MIN_ROOT_LETTERS or "ğ" in root or not _LETTERS.issuperset(root):
        return ()
    word = root.translate(_VOWELS_TO_ASCII)
    endings = _ENDINGS_BY_LAST.get(word[-1], ())
    splits = next(([(word[: -len(tr)], en) for en in ens] for tr, ens in endings
                   if word.endswith(tr) and len(word) > len(tr) + 1), [(word, "")])
    out: dict[str, None] = {}
    for head, ending in splits:  # the rules below apply to the Turkish part only
        if head[:2] == "en" and len(head) > 2 and head[2] not in "aeiou":
            head = "in" + head[2:]  # enformasyon → information
        if "ks" in head:
            head = head.replace("ks", "x")
        forced, optional = [], []  # (position, readings) of ş ç, and of the letters tried both ways
        for i, c in enumerate(head):
            if c in _SOUNDED and (c != "y" or 0 < i < len(head) - 1 and head[i + 1] in "aeiou"):
                (forced if c in _MUST_CHANGE else optional).append((i, _SOUNDED[c]))
        letters = list(head)
        for n in range(min(len(optional), MAX_SOUNDED) + 1):  # fewest changed letters first
            for chosen in combinations(optional[:MAX_SOUNDED], n):
                changes = forced + list(chosen)
                for readings in product(*(alts for _i, alts in changes)):
                    spelled = letters[:]
                    for (i, _alts), reading in zip(changes, readings):
                        spelled[i] = reading
                    text = "".join(spelled) + ending
                    if text != root:
                        out[text] = None
                        if len(out) >= MAX_SPELLINGS:
                            return tuple(out)
    return tuple(out)


HEAD_LETTERS = MIN_ROOT_LETTERS - 1
"""Letters of a spelling's start compared with an index's terms (:func:`term_heads`). English
stemming keeps a word's start (:func:`dreamdb.stemming.english_stem` only cuts a word's end and may
add one letter), so a stem of more than ``HEAD_LETTERS`` letters begins with the word's first
``HEAD_LETTERS``, and one of ``HEAD_LETTERS`` with its first ``HEAD_LETTERS - 1``: a spelling that
begins none of an index's terms that way cannot be analysed into one, and is not analysed."""


def term_heads(terms) -> frozenset[str]:
    """The starts a spelling must begin with to be analysed into one of ``terms`` (English terms of
    at least :data:`HEAD_LETTERS` letters; shorter ones are ignored): the first ``HEAD_LETTERS``
    letters of the longer terms, the first ``HEAD_LETTERS - 1`` of those of ``HEAD_LETTERS`` letters
    (see :data:`HEAD_LETTERS`; :func:`begins_one`)."""
    return frozenset(t[:HEAD_LETTERS] if len(t) > HEAD_LETTERS else t[:-1] for t in terms if len(t) >= HEAD_LETTERS)


def begins_one(spelling: str, heads: frozenset[str]) -> bool:
    """Whether ``spelling`` begins with one of ``heads`` (:func:`term_heads`)."""
    return spelling[:HEAD_LETTERS] in heads or spelling[:HEAD_LETTERS - 1] in heads


def has_loanword_ending(root: str) -> bool:
    """Whether ``root`` ends in one of the Turkish endings of :data:`_ENDINGS` (``-syon``, ``-loji``,
    ``-ik`` …) with at least two letters before it, as :func:`english_spellings` reads them."""
    word = root.translate(_VOWELS_TO_ASCII)
    return any(word.endswith(tr) and len(word) > len(tr) + 1 for tr, _ens in _ENDINGS_BY_LAST.get(word[-1:], ()))


def loanword_spellings(roots, heads: frozenset[str] | None = None) -> list[str]:
    """The distinct :func:`english_spellings` of ``roots`` (a sequence of str), in order, less those
    that begin none of ``heads`` (:func:`begins_one`; ``None`` keeps them all). The memory engine
    calls its C twin, ``dreamdb.ranking._kernel.loanword_spellings`` (same list)."""
    spelled = dict.fromkeys(s for root in roots for s in english_spellings(root))
    return [s for s in spelled if heads is None or begins_one(s, heads)]
