"""Text analysis shared by indexing and querying (SPEC §2 "Analyzer").

Pipeline, identical for documents and queries:

0. Unicode NFKC normalisation: text typed or saved decomposed (``S`` +
   combining cedilla, as macOS file names and some editors produce) reads
   as the composed ``Ş``, and compatibility forms (ligatures ``ﬁ``,
   full-width ``Ａ``) as their plain letters. Invisible format characters
   (soft hyphen, zero-width joiners), Hebrew points, Arabic short vowels
   and tatweel are removed (a word matches with or without them); other
   combining marks (Devanagari, Thai vowel signs) stay inside their word.
   An acute accent ``´`` typed for an apostrophe between letters is ``'``.
1. Lowercase with Turkish-aware folding of ``İ`` (→ ``i``); Turkish letters
   ç ğ ı ö ş ü are kept. A capital ``I`` in a word holding a Turkish-only
   letter (``Ş Ğ ı İ``, either case) is ``ı`` (``ŞIRNAK`` → ``şırnak``,
   ``DİYARBAKIR`` → ``diyarbakır``; ``ISPARTA``, with none, → ``isparta``:
   :func:`fold_written`), in a query and in a note not read as Turkish,
   which indexes the lowercased reading beside it (:func:`dotted_terms`); a
   Turkish note indexes that reading beside the lowercased one (``stacked``,
   below).
2. Split on everything that is not a letter or digit (whitespace, ``-``,
   ``_``, punctuation), so ``DEC-0054`` → ``dec``, ``0054`` and FTS syntax
   characters (``"``, ``*``, ``:``, ``(``, ``NOT``…) are plain text: the
   query is never parsed as a query language. A Turkish suffix or an English
   contraction after an apostrophe (:data:`APOSTROPHES`) is no word
   (``API'nin``, ``Docker‘dan``: :data:`_APOSTROPHE_SUFFIX`).
3. Drop tokens of length ≤ 1 and stopwords (English + Turkish particles and
   question words).
4. Conservative stemming that only collapses inflections: Turkish nominal
   inflection with the Snowball Turkish stemmer (Eryiğit & Adalı 2004) on
   text detected as Turkish, then, for every text, the inflectional steps of
   Porter2 (:mod:`dreamdb.stemming`), so names shared by Turkish and English
   text get the same term.
   Tokens containing digits are identifiers and never stemmed.

A capitalised word of Turkish text is ambiguous: a name (Turkish writes a
name's suffixes after an apostrophe, so the token is bare and must not be
Turkish-stemmed) or an ordinary word opening a sentence or a title
(``Şifreleme anahtarı…``), which a lowercase query must find. Documents
index both analyses at the same position (the second one, from
``stacked``, adds to term frequency but not to length; a word written with
capital ``I`` gets a third, with the Turkish lowercase ``ı``: ``KIRMIZI``
is ``kırmızı``); a query, whose
words have no reliable case, keeps one analysis per word and is matched
against the index's vocabulary by :func:`alternate_terms` (a capital that opens
a sentence or a title may be no name's: :func:`opening_capitals`).

Changing anything here changes every score: bump :data:`ANALYZER_VERSION`,
which makes the next sync rebuild the index.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from bisect import bisect_right
from functools import lru_cache
from itertools import combinations

from dreamdb.lazy_regex import LazyPattern
from dreamdb.stemming import english_stem

ANALYZER_VERSION = "24"  # 24: a note not read as Turkish also indexes a word with ç ğ ı ö ş ü spelled without them (ŞIRNAK: sirnak, Müller: muller); 23: a note not read as Turkish also indexes the lowercased reading of a word it reads with ı (DİYARBAKIR: diyarbakir beside diyarbakır), and _ and the letter-like apostrophes ʼ ʹ end a word for dotless_capitals (APIʼNİN: api); 22: a capital I in a word holding a Turkish-only letter (Ş Ğ ı İ) is ı in a note of any language, as in a query (ŞIRNAK is şırnak); marks typed for an apostrophe between letters (‘ ′ ʹ ´) separate a Turkish suffix as the apostrophe does; 11: a document is Turkish by is_turkish_text, as a query is; 12–14: suffixes after an apostrophe; 15–17: encoded data dropped; 18, 19: privative -sIz kept (with -ken), lists of names are no data; 20, 21: narrow-wrapped base64 (indented too), git binary patches dropped

_TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)

# English: the NLTK stopword list (BSD-licensed corpus, 179 words).
ENGLISH_STOPWORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them their
    theirs themselves what which who whom this that that'll these those am is are was were be been
    being have has had having do does did doing a an the and but if or because as until while of
    at by for with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how all any
    both each few more most other some such no nor not only own same so than too very s t can
    will just don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't
    didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't
    mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't
    wouldn wouldn't""".split()
)

# Turkish: the NLTK Turkish stopword list (53 words) plus the particles and
# question words named in SPEC §2 (veya, için, gibi, nasıl, neden, nedir, hangi…).
TURKISH_STOPWORDS = frozenset(
    """acaba ama aslında az bazı belki biri birkaç birşey biz bu çok çünkü da daha de defa diye eğer
    en gibi hem hep hepsi her hiç için ile ise kez ki kim mı mu mü mi nasıl ne neden nerde nerede
    nereye niçin niye o sanki şey siz şu tüm ve veya ya yani nedir hangi hangisi kadar olarak
    sonra önce ben sen onlar bir bunu şunu onu bunun onun dir dır dur dür mısın misin musun müsün
    değil var yok""".split()
)

STOPWORDS = ENGLISH_STOPWORDS | TURKISH_STOPWORDS
ENGLISH_ONLY_STOPWORDS = frozenset(w for w in ENGLISH_STOPWORDS if len(w) >= 3) - TURKISH_STOPWORDS
"""English stopwords of three letters or more that are not Turkish ones: evidence that a text is English.
Shorter ones are left out: Turkish splits suffixes off names at an apostrophe (``Harvard'a``,
``Paris'in``), which leaves ``a`` and ``in`` as words."""

_VOWELS = frozenset("aeıioöuüâîû")
_HARMONY_VOWELS = frozenset("ıiuü")
"""Snowball's Turkish stemmer appends one of these (by vowel harmony) to every stem that ends
in d or g (its ``append_U_to_stems_ending_with_d_or_g`` step): ``dashboard`` → ``dashboardı``,
``dashboardda`` → ``dashboardı``, ``threadde`` → ``threadı``. dreamdb takes the vowel off
again when it stands where the word itself has a consonant or nothing, so the loanwords and
names of Turkish text meet the same words in English text. Where the word has a vowel at that
place the stem is Snowball's (``bugün`` → ``bugu``, not the English ``bug``; ``kedi``,
``yardımı`` → ``yardı``)."""

MIN_TURKISH_STEM = 3
"""Shortest Turkish stem kept: the Snowball Turkish stemmer, having no dictionary, cuts short
words to fragments (ürün → ür, isimle → is) that collide with unrelated terms; shorter stems
fall back to the unstemmed word."""

TURKISH_LETTERS = frozenset("çğıöşü")
"""The lowercase letters of Turkish that English lacks."""
_TURKISH_ASCII_STOPWORDS = frozenset(w for w in TURKISH_STOPWORDS if TURKISH_LETTERS.isdisjoint(w))
"""Turkish stopwords without a Turkish letter (the others are counted by their letter)."""
TURKISH_DETECTION_RATIO = 0.08
"""A text is Turkish when this share of its words carry ç ğ ı ö ş ü or are Turkish stopwords.

Turkish prose has a Turkish letter in roughly every second word; English
prose has none. 0.08 leaves room for English text quoting a Turkish word.
"""


_IGNORABLE_RE = re.compile(
    "["
    "\u00ad\u061c\u180e\u200c-\u200f\u202a-\u202e\u2060-\u2062\u2064\u2066-\u206f\ufeff"  # format characters (Cf)
    "\ufe00-\ufe0f\U000e0100-\U000e01ef\U000e0001\U000e0020-\U000e007f"  # variation selectors, tag characters
    "\u0300-\u036f"  # combining diacritical marks NFKC could not compose (i + dot above)
    "\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"  # Hebrew points and cantillation
    "\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed"  # Arabic marks
    "\u0640"  # Arabic tatweel (kashida): stretches a word, is no letter
    "]+"
)
"""What :func:`normalize` removes: characters that change how a word looks, never which word it is.
Format characters (soft hyphen, zero-width (non-)joiner, word joiner, bidi controls, BOM) and
variation selectors would otherwise split a word in two or stick to it (the zero-width space and
the invisible separator do mark a break between words, as Thai writes it: they become spaces); Hebrew points and Arabic short vowels are written in some texts
and left out in most, so a word must match either way. Marks that tell words apart (Devanagari
and Thai vowel signs: काम work, कम less) are kept, inside their word (:func:`tokens`)."""


_FIRST_MARK = "\u0300"
"""The lowest code point of :data:`dreamdb.unicode_marks.MARK_CLASS` and of :data:`_IGNORABLE_RE` but
U+00AD (both checked by tests/test_analyzer.py): text below it (ASCII, Latin-1, Turkish, most
European languages) holds no combining mark and, the soft hyphen aside, nothing to remove."""

_FROM_FIRST_MARK_RE = re.compile(f"[^\x00-{chr(ord(_FIRST_MARK) - 1)}]")
"""A code point from :data:`_FIRST_MARK` up (a search costs a tenth of what ``max(text)`` does).
Written as the complement of the range below it: the same set, but ``[\u0300-\U0010ffff]`` takes
the regex compiler ~5–9 ms (it maps the whole range), paid by every CLI call at import."""


NORMALIZE_BY_LINES_FROM = 2048
"""Length (characters) from which :func:`normalize` takes a text line by line."""


def normalize(text: str) -> str:
    """Unicode NFKC (Unicode Standard Annex #15) of ``text``, without the characters of
    :data:`_IGNORABLE_RE`; ASCII text is returned as it is.

    Decomposed letters become one code point (``S`` + U+0327 → ``Ş``), so they are not split at
    the combining mark; compatibility forms become plain letters (``ﬁ`` → ``fi``). An acute accent ``´`` typed
    for an apostrophe between letters (``GitHub´dan``, :data:`_ACUTE_APOSTROPHE_RE`) is written ``'`` first: NFKC
    makes it a space and a combining accent, which is removed.
    """
    if text.isascii():
        return text
    if "\u00b4" in text:  # (an acute accent typed for an apostrophe, before NFKC makes it a space and a mark)
        text = _ACUTE_APOSTROPHE_RE.sub("'", text)
    if len(text) > NORMALIZE_BY_LINES_FROM and "\n" in text:
        # line by line: a line already normalised costs a quick check, where a text with one "…" anywhere was
        # normalised whole (125 KB: 3.4 ms against 0.17). NFKC composes nothing across a line feed (a starter
        # composing with no character), so the result is the same text
        text = "\n".join([unicodedata.normalize("NFKC", line) for line in text.split("\n")])
    else:
        text = unicodedata.normalize("NFKC", text)
    if _FROM_FIRST_MARK_RE.search(text) is None:  # Latin text: of the ignorable characters, only U+00AD
        return text.replace("\u00ad", "") if "\u00ad" in text else text
    if "\u200b" in text or "\u2063" in text:  # zero-width space, invisible separator: a break between words
        text = text.replace("\u200b", " ").replace("\u2063", " ")
    return _IGNORABLE_RE.sub("", text) if _IGNORABLE_RE.search(text) else text


@lru_cache(maxsize=1)
def _marked_token_re() -> re.Pattern:
    """Words whose letters may carry combining marks (compiled on the first non-ASCII text)."""
    from dreamdb.unicode_marks import MARK_CLASS

    return re.compile(f"(?:[^\\W_]|[{MARK_CLASS}])+")


@lru_cache(maxsize=1)
def _marks() -> frozenset[str]:
    """The characters of :data:`dreamdb.unicode_marks.MARK_CLASS` (made on the first text with a code point from
    U+0300 up; ≈ 0.3 ms). A set, not a regex: searching text for MARK_CLASS, ~300 ranges tried per character, cost
    more than reading its words with it, and a class of the BMP's marks alone, looked up in one table, takes ≈ 7 ms
    to compile, paid by a recall whose snippet holds a dash."""
    from dreamdb.unicode_marks import MARK_CLASS

    chars, i = [], 0
    while i < len(MARK_CLASS):  # (single characters and ranges a-b, no escapes)
        first = MARK_CLASS[i]
        last, i = (MARK_CLASS[i + 2], i + 3) if MARK_CLASS[i + 1:i + 2] == "-" else (first, i + 1)
        chars.extend(map(chr, range(ord(first), ord(last) + 1)))
    return frozenset(chars)


def _holds_mark(text: str) -> bool:
    """Whether ``text`` holds a character of :data:`dreamdb.unicode_marks.MARK_CLASS`, read among its code points
    from U+0300 up (an em dash, an arrow: few in most text)."""
    return not _marks().isdisjoint(_FROM_FIRST_MARK_RE.findall(text))




APOSTROPHES = "'\u2019\u02bc\u2018\u2032\u02b9"
"""The characters read as an apostrophe between letters: ``'``, the right single quotation mark ``’`` (U+2019) and
the modifier letter apostrophe ``ʼ`` (U+02BC), and what is typed for one: the left single quotation mark ``‘``
(U+2018, an editor's smart quote turned the wrong way), the prime ``′`` (U+2032) and the modifier letter prime ``ʹ``
(U+02B9), which look like it (QA round 155-G F2: ``Docker‘dan`` gave the terms ``docker`` and ``dan``, and
``Redisʹin``, ``ʹ`` being a letter, ``redisʹin``, which ``Redis`` did not find). The acute accent ``´`` (U+00B4) is
one too, made ``'`` by :func:`normalize` before NFKC splits it into a space and a combining accent
(:data:`_ACUTE_APOSTROPHE_RE`). Not the backtick, which marks code in markdown."""

_APOSTROPHE_SUFFIX_RE = re.compile(rf"[{APOSTROPHES}](?<=[^\W_][{APOSTROPHES}]|[#+][{APOSTROPHES}])([^\W\d_]{{1,16}})(?![^\W_])")
"""Letters written after an apostrophe (:data:`APOSTROPHES`) inside a word (``hook'un``, ``API'nin``, ``we're``):
candidates for :data:`_APOSTROPHE_SUFFIX`. (The apostrophe comes first in the pattern, the letter before it in a
look-behind: the regex engine then skips to apostrophes, 5× faster on the real vault's CHANGELOG.json than a leading
look-behind.)"""

_ACUTE_APOSTROPHE_RE = re.compile(r"\u00b4(?<=[^\W_]\u00b4|[#+]\u00b4)(?=[^\W\d_])")
"""An acute accent ``´`` (U+00B4) between a letter (or ``#``, ``+``) and a letter, typed for an apostrophe
(``GitHub´dan``): :func:`normalize` writes it ``'``."""

_PLURAL = r"(?:l[ae]r)?"
_POSSESSIVE = r"(?:[ıiuü]?m[ıiuü]z|[ıiuü]?n[ıiuü]z|l[ae]r[ıiuü]|[ıiuü]?m|[ıiuü]?n|s?[ıiuü])?"
_CASE = r"(?:n?[dt][ae]n?|n?[ıiuü]n|y?l[ae]|y?[ıiuüae]|n[ıiuüae])?"  # (buffer n, y)
_PERSON = r"(?:m|n|k|n[ıiuü]z|l[ae]r)?"  # after the past and the conditional copula
_PERSON_Z = r"(?:[ıiuü]m|s[ıiuü]n|[ıiuü]z|s[ıiuü]n[ıiuü]z|l[ae]r)?"  # after the evidential copula

NOMINAL_SUFFIXES = (_PLURAL + _POSSESSIVE + _CASE +
                    r"(?:[dt][ae]ki|ki)?"  # -ki
                    r"(?:y?[dt][ıiuü]r|y?d[ıiuü]|y?m[ıiuü]ş)?")  # copula
"""A regex of the inflections a Turkish noun takes, in order, each optional: plural, possessive, case with its buffer
letter, ``-ki``, copula, with vowel harmony's and consonant assimilation's variants (Göksel & Kerslake, *Turkish:
A Comprehensive Grammar*, 2005, ch. 8). Without the copula's personal endings (:data:`NOMINAL_INFLECTIONS`): with
them a verb form ending ``-Iz`` or ``-Im`` reads as a noun of a longer root (``gitmeliyiz`` as ``gitmeliy`` + ``-iz``),
and :func:`dreamdb.ranking.rank.verb_infinitives` is passed over for it."""

NOMINAL_INFLECTIONS = (
    _PLURAL + _POSSESSIVE + _CASE +
    r"(?:(?:[dt][ae]ki|ki)" + _CASE + r")?"  # -ki, and a case after it (GitHub'dakini)
    r"(?:y?[dt][ıiuü]r(?:l[ae]r)?"  # copula: -DIr
    r"|y?[dt][ıiuü]" + _PERSON +  # past (Türkiye'deydik)
    r"|y?m[ıiuü]ş" + _PERSON_Z +  # evidential
    r"|y?s[ae]" + _PERSON +  # conditional
    r"|y?[ıiuü]m|s[ıiuü]n(?:[ıiuü]z)?|y?[ıiuü]z)?")  # present, with its person (Ankara'dayız)
""":data:`NOMINAL_SUFFIXES` with a case after ``-ki`` and the copula's tenses with their personal endings (Göksel &
Kerslake 2005, ch. 8): what may follow a name's apostrophe (:data:`_APOSTROPHE_SUFFIX`)."""

PRIVATIVE_RE = LazyPattern(r"(s[ıiuü]z(?:l[ıiuü][kğ]|l[ae]ş)?)" + NOMINAL_SUFFIXES + r"(?:y?ken)?")
"""The privative suffix ``-sIz`` ("without": ``başarısız``, unsuccessful; ``hatasız``, without errors), with the
``-lIk`` or ``-lAş`` it may take (group 1), a noun's inflections and the converb ``-(y)ken`` (``şifresizken``, while
without a password) (Göksel & Kerslake 2005, ch. 7): a derivation, which makes a word of the opposite sense, not an
inflection."""

VERB_INFLECTIONS = (
    r"(?:m[ae])?"  # negation (yazmadık)
    r"(?:[dt][ıiuü](?:m|n|k|n[ıiuü]z|l[ae]r)?"  # past: yazdı, yazdık, gittik
    r"|m[ıiuü]ş(?:[ıiuü]m|s[ıiuü]n|[ıiuü]z|s[ıiuü]n[ıiuü]z|l[ae]r)?"  # evidential: yazmış
    r"|[ıiuü]?yor(?:[ıiuü]m|um|sun|uz|sunuz|lar)?"  # progressive: yazıyor, okuyoruz, gidiyor
    r"|y?[ae]c[ae](?:k|ğ[ıiuü]m|ks[ıiuü]n|ğ[ıiuü]z|ks[ıiuü]n[ıiuü]z|kl[ae]r)"  # future: yazacak, gideceğiz
    r"|m[ae]l[ıiuü](?:y[ıiuü]m|s[ıiuü]n|y[ıiuü]z|s[ıiuü]n[ıiuü]z|l[ae]r)?"  # necessitative: gitmeliyiz
    r"|y?[ae]n"  # participle -(y)An: geçen, okuyan
    r"|[dt][ıiuü][kğ](?:[ıiuü]m|[ıiuü]n|[ıiuü]|[ıiuü]m[ıiuü]z|[ıiuü]n[ıiuü]z)?"  # -DIk participle: yazdığımız
    r"|y?[ıiuü]p|y?[ae]r[ae]k)")  # converbs: yazıp, okuyarak
"""A regex of the inflections of a Turkish verb read off a word's end: tense, aspect or mood with the person, the
participles ``-(y)An`` and ``-DIk`` and two converbs, each after an optional negation, with vowel harmony's and
consonant assimilation's variants (Göksel & Kerslake 2005, ch. 8)."""

_APOSTROPHE_SUFFIX = LazyPattern(
    r"(?:l[ıiuü]k|l[ıiuü]|s[ıiuü]z)?" + NOMINAL_INFLECTIONS + r"(?:l[ae]r" + NOMINAL_INFLECTIONS + r")?(?:y?ken)?"
    r"|l[ae]" + VERB_INFLECTIONS +  # a verb made of the word: merge'ledik, deploy'ladık
    r"|re|ll|ve|s|t|d|m")  # English contractions: we're, we'll, I've, it's, don't, I'd, I'm
"""The endings written after an apostrophe that :func:`tokens` drops: Turkish inflectional suffixes, which Turkish
spelling separates from a proper noun, an abbreviation or a foreign word with an apostrophe (TDK's *kesme
işareti* rule: ``İstanbul'da``, ``API'nin``, ``Docker'la``, ``PR'ları``, ``GitHub'daki``, ``README'lerinden``),
as their grammar gives them (:data:`NOMINAL_INFLECTIONS`, after ``-lI``, ``-sIz`` or ``-lIk`` and again after ``-ki``
with a plural: ``Docker'lı``, ``API'siz``, ``Jira'dakiler``, ``Redis'teyken``), a verb made of the word
(``merge'ledik``: ``-lA`` and :data:`VERB_INFLECTIONS`), and English contractions. Kept as words, they were terms of their
own: ``hook'un`` gave ``un``, a rare term (df 21 in the real vault) that ranked a ClickUp note first for
``hook'un davranışı`` (QA round 51). Anything else after an apostrophe is a word (``O'Brien``, ``o'clock``)."""


_CONTRACTIONS = frozenset(("re", "ll", "ve", "s", "t", "d", "m"))
"""The English contractions of :data:`_APOSTROPHE_SUFFIX`, looked up first: English text then never compiles the
pattern (7 ms, :mod:`dreamdb.lazy_regex`)."""


def _drop_suffix(match: re.Match) -> str:
    suffix = lower(match.group(1))
    return " " if suffix in _CONTRACTIONS or _APOSTROPHE_SUFFIX().fullmatch(suffix) else match.group()


_BASE64_MARKS = bytes(0x62 if b < 0x80 and (chr(b).isalnum() or chr(b) in "+/_-") else 0x20 for b in range(256))
"""``bytes.translate`` table: a character of base64 or base64url (letters, digits, ``+``, ``/``, ``-``, ``_``) →
``b``, any other byte → space (padding ``=`` too: ``key=`` before a value stays a word)."""

_DIGIT_RE = re.compile(rb"[0-9]")

_SEPARATOR_RE = re.compile(rb"[+/_-]")

_HEX_RUN_RE = re.compile(rb"(?<![0-9A-Za-z])(?:[0-9a-f]{12,}|[0-9A-F]{12,})(?![0-9A-Za-z])")
"""A hexadecimal number of one case and 12 digits or more between separators (a commit hash or a digest in a path or
URL): :func:`_is_encoded` reads it as one separator, for its digits alone would count as many short runs of letters
(QA round 58: ``https://github.com/acme/widgetfactory/blob/4f3a9c2e…/src/widgetfactory/TokenBucketLimiter.py``
was dropped whole). In random base64 such a run between separators is vanishingly rare."""

MIN_DATA_SEGMENT = 8
"""Fewest characters a run of base64 holds per ``+``, ``/``, ``-`` or ``_`` (on average, counting the run's ends) for
:func:`_is_encoded` to take it for data when its runs of letters of one case average :data:`MIN_LISTED_PART_LETTERS`
or more: base64 has one such character in 32, base64url too, while a list of names joined by them has one every few
(``AES128/AES256/ChaCha20/Poly1305/…``, ``IPv4/IPv6/TCP/UDP/…``, ``Ctrl+Alt+Del/Cmd+Shift+P``: QA round 56, dropped
as data). Measured on 200,000 random runs of each length (``/tmp`` script, 3 Dec): both hold by chance for 27 runs
of 60 characters (0.014 %), 6 of 64 and 1 of 76 (the lines of PEM and of the ``base64`` command), and such a line of
a pasted blob is indexed as words, as every line was before :func:`drop_data`; by the separators alone, 0.25 %,
0.09 % and 0.05 %. A list of chemical formulas (``H2O/CO2/NaCl/C6H12O6/…``, letters of one case averaging 1.6) is
still taken for data."""

MIN_LISTED_PART_LETTERS = 2.3
"""Fewest letters the runs of one case of a list of names average (``IPv4/IPv6/TCP/…``: 2.5; ``AES128/…/RSA2048``:
3.1) for :data:`MIN_DATA_SEGMENT` to keep it; random base64 averages 1.9."""

_LETTER_PART_RE = re.compile(rb"[A-Z]?[a-z]+|[A-Z]+")
"""The runs of letters of one case (a capital may start a run of small ones), for :func:`_is_encoded`."""

MAX_DATA_PART_LETTERS = 4.0
"""Letters per run of one case (:data:`_LETTER_PART_RE`) under which a run of mixed case is encoded data
(:func:`_is_encoded`): random base64 averages about 1.9, and stayed under 3.7 in 50,000 samples of 60 characters;
words average 5 or more (``packages/frontend/src/components/…/Chart2D/Legend`` 6.3,
``getUserAccountSettingsForOrganizationV2…`` 5.6)."""

_COMMON_LETTERS = b"etaoinshrdluETAOINSHRDLU"
_SMALL_LETTERS = bytes(range(97, 123))
_ASCII_LETTERS = bytes(range(65, 91)) + _SMALL_LETTERS

MIN_COMMON_LETTER_SHARE = 0.7
"""Share of a run's letters that are English's twelve most frequent, ``etaoin shrdlu`` (the order of the Linotype
keyboard's first two columns, from letter frequencies in print), from which :func:`_is_encoded` reads a run whose
runs of one case average :data:`MIN_WORD_PART_LETTERS` to :data:`MAX_DATA_PART_LETTERS` letters as words, not data,
when :data:`MIN_COMMON_SMALL_LETTER_SHARE` of its small letters are too: a long identifier made of short words, as
test names are (``shouldReturn404WhenUserIdIsNullAndApiKeyIsMissingInV2RequestToS3``: 0.86 and 0.91, its runs of
one case averaging 3.5 letters, which alone took it for data; QA round 132-B F5), or Turkish ones
(``kullaniciKimligiBosIse…``: 0.77 and 0.83). In random base64 each letter is one of them with probability 12/26;
measured on 300,000 random runs of each length (6 Dec): the three tests held by chance for 2 runs of 60 characters
(0.0007 %) and none of 64 or 76, where test names share 0.77–0.87 of their letters and 0.82–0.91 of their small ones,
their runs averaging 3.2–6.1 letters."""

MIN_COMMON_SMALL_LETTER_SHARE = 0.75
"""Share of a run's small letters that are ``etaoin shrdlu`` for :data:`MIN_COMMON_LETTER_SHARE` to hold: base64 of
data with many zero bytes (a PNG's header, ``iVBORw0KGgoAAAANSUhEUgAAAIAAAACACAYAAADD…``) is mostly ``A``, one of
them in capitals (all its letters 0.73, its small ones 0.38: an EIP's pasted image was read as words)."""

MIN_WORD_PART_LETTERS = 2.5
"""Fewest letters a run's runs of one case average for :data:`MIN_COMMON_LETTER_SHARE` to read it as words; random
base64 averages 1.9 (see :data:`MAX_DATA_PART_LETTERS`)."""

_JWT_RE = re.compile(r"(?<![\w.-])eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*", re.ASCII)
"""A JSON Web Token: two base64url segments that each encode a JSON object (whose base64 starts ``eyJ``, the
encoding of ``{"``) and a signature, joined by dots (RFC 7519)."""


_GIT_BINARY_PATCH_RE = re.compile(
    rb"^GIT binary patch\r?\n(?:(?:literal|delta) [0-9]+\r?\n(?:[A-Za-z][0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]+\r?\n)+"
    rb"(?:\r?\n|\Z))+", re.MULTILINE)
"""The data of a binary file in ``git diff --binary`` (and ``git format-patch``): after the line ``GIT binary patch``,
a ``literal`` or ``delta`` line and lines of base85, each led by a letter that gives its length, up to an empty line
(git's ``diff.c``, ``emit_binary_diff_body``). Indexed as words, a prompt holding such a patch made the hook inject
unrelated notes (QA round 56: raw score 18.9 from its fragments; a note of 3 MB of base85 gave 325,842 postings)."""


_NARROW_WRAPPED = (
    rb"\n([ \t]*+(?:>[ \t]*+)*+)[A-Za-z0-9+/_-]{16,59}+[ \t]*+\r?\n(?:\1[A-Za-z0-9+/_-]{16,59}+[ \t]*+\r?\n)+"
    rb"(?:\1[A-Za-z0-9+/_-]{1,59}+=*+[ \t]*+(?=\r?\n|\r?\Z))?")
_NARROW_WRAPPED_RE = re.compile(
    _NARROW_WRAPPED if sys.version_info >= (3, 11) else _NARROW_WRAPPED.replace(b"*+", b"*").replace(b"}+", b"}"))
"""Two lines or more after a newline, each of base64 characters alone and shorter than :data:`MIN_BASE64_RUN`, after
the same indent or ``>`` quote marks (group 1; QA round 58: an indented code block, a quote), and the line after them,
which may be their short last one: base64 wrapped narrower than the 64 or 76 columns of PEM and MIME
(:func:`_narrow_wrapped` tells whether it is). 5 ms on the real vault's CHANGELOG.json three times over (2.4 MB),
where a pattern led by ``^`` took 30, and one without possessive quantifiers 14 (they spare the regex engine the
backtracking of each indented line of JSON). Python 3.10's ``re`` has no possessive quantifiers (QA round 67 H1:
every command failed to import there); it gets the same pattern with greedy ones, which match alike, since each
possessive run is followed by characters it cannot take."""


def _narrow_wrapped(m: re.Match) -> bytes:
    """A match of :data:`_NARROW_WRAPPED_RE` without the data it holds: its first lines of one width (wrapped text),
    two or more, with the shorter line after them when :func:`_tail_like` finds it to be their end, when their
    characters together are encoded data (:func:`_is_encoded`); the lines after those are kept as they are, and so
    is the whole match when it holds no data. QA round 56: 1.2 KB of base64 wrapped at 56, 48 or 40 columns gave
    87, 107 and 144 terms, where wrapped at 64 it gave none."""
    prefix = len(m.group(1))
    rows = m.group()[1:].splitlines(keepends=True)
    lines = [row[prefix:].rstrip() for row in rows]
    width = len(lines[0])
    n = next((k for k, line in enumerate(lines) if len(line) != width), len(lines))
    if n < len(lines) and len(lines[n]) < width and _tail_like(lines[n]):
        n += 1
    joined = b"".join(lines[:n])
    if n < 2 or len(joined) < MIN_BASE64_RUN or not _is_encoded(joined):
        return m.group()
    return b"\n " + (b"\n" + b"".join(rows[n:]) if n < len(rows) else b"")


def _is_encoded(run: bytes) -> bool:
    """Whether a run of base64 characters is encoded data, not words (:func:`drop_data`): it holds a digit, capitals
    and small letters, and its runs of letters of one case are short (:data:`MAX_DATA_PART_LETTERS`), as in random
    base64; a path, an identifier or a word has long ones, and a hex digest, base32 or a bech32 address has one
    case (QA round 55: ``packages/frontend/src/components/dashboard/widgets/Chart2D/Legend`` was dropped by a
    rule without it); an identifier of short words has English's common letters (:data:`MIN_COMMON_LETTER_SHARE`)."""
    if _DIGIT_RE.search(run) is None:
        return False
    if _HEX_RUN_RE.search(run) is not None:  # a commit hash in a path or URL: a name, not random base64
        run = _HEX_RUN_RE.sub(b"/", run)
    parts = _LETTER_PART_RE.findall(run)
    if not parts or run.isupper() or run.islower():
        return False
    letters = sum(map(len, parts))
    if letters >= MIN_LISTED_PART_LETTERS * len(parts) and \
            len(run) < MIN_DATA_SEGMENT * (len(_SEPARATOR_RE.findall(run)) + 1):
        return False  # a list of short names (AES128/ChaCha20/Poly1305/…): base64 has few separators
    if letters >= MAX_DATA_PART_LETTERS * len(parts):
        return False
    return letters < MIN_WORD_PART_LETTERS * len(parts) or not _common_letters(run)


def _common_letters(run: bytes) -> bool:
    """Whether :data:`MIN_COMMON_LETTER_SHARE` of the ASCII letters of ``run``, and
    :data:`MIN_COMMON_SMALL_LETTER_SHARE` of its small ones, are English's commonest."""
    common = len(run) - len(run.translate(None, _COMMON_LETTERS))
    small = len(run) - len(run.translate(None, _COMMON_LETTERS[:12]))
    return (common >= MIN_COMMON_LETTER_SHARE * (len(run) - len(run.translate(None, _ASCII_LETTERS)))
            and small >= MIN_COMMON_SMALL_LETTER_SHARE * (len(run) - len(run.translate(None, _SMALL_LETTERS))))


_LINE_BREAK_RE = re.compile(rb"(?:\s|\\[nr])+")
"""White space, or a line break escaped in a JSON or C string (``\\n``): what separates the lines of wrapped base64."""

_CASE_CHANGE_RE = re.compile(rb"[a-z][A-Z]|[A-Z][a-z]")


def _encoded_tail(raw: bytes, marks: bytes, end: int) -> int:
    """Where the encoded data that ends a line of base64 at ``end`` ends: its last line, shorter than
    :data:`MIN_BASE64_RUN` characters, when it follows on the next line (``\\n`` in a JSON string too) and
    :func:`_tail_like` finds it to be; a word written after the data (``end``, ``The``) is not. ``end`` otherwise."""
    gap = _LINE_BREAK_RE.match(raw, end)
    if gap is None:
        return end
    start = gap.end()
    if start >= len(raw) or marks[start] != 0x62:
        return end
    stop = marks.find(b" ", start)
    stop = len(raw) if stop < 0 else stop
    tail = raw[start:stop]
    return stop if len(tail) < MIN_BASE64_RUN and _tail_like(tail) else end


def _tail_like(tail: bytes) -> bool:
    """Whether a line shorter than a wrapped line of base64 after it is its end (:func:`_encoded_tail`,
    :func:`_narrow_wrapped`): it ends in ``=`` padding, or it holds a digit, a ``+`` or ``/``, or three changes of
    case, as the end of random base64 does, and no run of letters of one case as long as words have
    (:data:`MAX_DATA_PART_LETTERS` on average). QA round 58: ``Deprecated``, ``Rotated2026`` or
    ``PostgreSQLAdapter`` on the line after a blob were dropped with it."""
    if tail.endswith(b"="):
        return True
    if not (_DIGIT_RE.search(tail) or b"+" in tail or b"/" in tail or len(_CASE_CHANGE_RE.findall(tail)) >= 3):
        return False
    parts = _LETTER_PART_RE.findall(tail)
    return not parts or sum(map(len, parts)) < MAX_DATA_PART_LETTERS * len(parts)


def drop_data(text: str) -> str:
    """``text`` (as written: the rule reads case) without its runs of encoded data, which are no words: each run of
    at least :data:`MIN_BASE64_RUN` characters of base64 or base64url (:data:`_BASE64_MARKS`) that
    :func:`_is_encoded` finds to be data (a line of base64, wrapped or not, a pasted image, key or ``sha512-``
    integrity string, also inside quotes, backticks or a JSON string, and the shorter last line of wrapped base64:
    :func:`_encoded_tail`; base64 wrapped narrower, :func:`_narrow_wrapped`), JSON Web Tokens (:data:`_JWT_RE`) and
    the base85 of git's binary patches (:data:`_GIT_BINARY_PATCH_RE`). Paths, identifiers and words of that length,
    hex digests, ``0x`` numbers and other text of one case are kept. :func:`raw_tokens`
    drops the runs found in the text as written before it folds case.

    Indexed as words, such runs gave a note of 4 MB of pasted base64 157,567 distinct terms (``add``, ``ada``…)
    that other queries matched, and a prompt holding base64 or a JWT made the hook inject notes matching its
    fragments (``ms``, ``6h``, ``twenti``: QA rounds 54 and 55). C-level searches; text without a run of
    :data:`MIN_BASE64_RUN` such characters is returned as it is."""
    if "eyJ" in text:  # (first: a JWT's payload alone is a run of base64 the loop below drops)
        text = _JWT_RE.sub(" ", text)
    if len(text) >= MIN_BASE64_RUN:
        # (on the UTF-8 bytes: a search of non-ASCII text as str costs twice as much, QA round 58's timing)
        raw = text.encode("utf-8", "surrogatepass")
        edited = False
        if b"GIT binary patch" in raw:
            raw, n = _GIT_BINARY_PATCH_RE.subn(b" ", raw)
            edited = n > 0
        if b"\n" in raw:
            framed = b"\n" + raw  # (the pattern starts at a newline: the regex engine skips from one to the next)
            if _NARROW_WRAPPED_RE.search(framed) is not None:
                dropped = _NARROW_WRAPPED_RE.sub(_narrow_wrapped, framed)[1:]
                edited = edited or dropped != raw
                raw = dropped
        marks = raw.translate(_BASE64_MARKS)
        needle = b"b" * MIN_BASE64_RUN
        at = marks.find(needle)
        pieces, done = [], 0
        while at >= 0:
            start = marks.rfind(b" ", 0, at) + 1
            end = marks.find(b" ", at)
            end = len(raw) if end < 0 else end
            if _is_encoded(raw[start:end]):
                pieces.append(raw[done:start])
                done = end = _encoded_tail(raw, marks, end)
            at = marks.find(needle, end)
        if pieces:
            text = (b" ".join(pieces) + b" " + raw[done:]).decode("utf-8", "surrogatepass")
        elif edited:
            text = raw.decode("utf-8", "surrogatepass")
    return text


def tokens(text: str, *, data_dropped: bool = False) -> list[str]:
    """The letter/digit runs of already normalised text, each word's combining marks kept inside it
    (a Devanagari vowel sign or a Thai tone mark does not end a word), without the suffixes written
    after an apostrophe (:data:`_APOSTROPHE_SUFFIX`: ``API'nin`` is ``API``) and without runs of encoded
    data (:func:`drop_data`: base64, JSON Web Tokens).

    Text without a combining mark takes the plain pattern, which reads the same words there: the marked one, a
    class of ~300 ranges tried per character, costs ~4× as much on a Turkish question, and ~4.5× on the real vault's
    notes that hold a dash or an arrow (:func:`token_pattern`).
    """
    if not data_dropped:
        text = drop_data(text)
    if any(a in text for a in APOSTROPHES):
        text = _APOSTROPHE_SUFFIX_RE.sub(_drop_suffix, text)
    return token_pattern(text).findall(text)


LETTER_APOSTROPHES = "\u02bc\u02b9"
"""The apostrophes of :data:`APOSTROPHES` that are letters to Unicode (``ʼ`` U+02BC, ``ʹ`` U+02B9), so inside a word to
:func:`token_pattern`: :func:`tokens` ends a word before one only by dropping the suffix after it."""


def blank_letter_apostrophe_suffixes(text: str) -> str:
    """``text`` (normalised, folded or not) with each apostrophe that is a letter (:data:`LETTER_APOSTROPHES`) and the
    suffix after it that :func:`tokens` drops (:data:`_APOSTROPHE_SUFFIX`) written as spaces, one for one, so that
    offsets into the text stay valid: what reads the text's words by offset with :func:`token_pattern` (a snippet's,
    :mod:`dreamdb.ranking.snippet`) then ends the word before it where the index did (QA round 156-G F3: ``APIʼNİN``
    was read as one word, ``apiʼnin``, and the snippet showed the note's first lines). The other apostrophes end a
    word to that pattern already; their suffixes are left alone (deciding them may compile
    :data:`_APOSTROPHE_SUFFIX`, ≈ 15 ms, in a recall of English notes writing ``o'clock``). Text without such a
    letter is returned as it is (a scan of each, in C)."""
    if not any(a in text for a in LETTER_APOSTROPHES):
        return text
    return _APOSTROPHE_SUFFIX_RE.sub(_blank_suffix, text)


def _blank_suffix(match: re.Match) -> str:
    """:func:`_drop_suffix`'s decision for a suffix after a letter apostrophe, the suffix dropped written as spaces
    with its apostrophe."""
    if match.group()[0] not in LETTER_APOSTROPHES or _drop_suffix(match) != " ":
        return match.group()
    return " " * (match.end() - match.start())


def token_pattern(text: str) -> re.Pattern:
    """The pattern of :func:`tokens`' words (one or more of their characters) for already normalised ``text``:
    letters and digits (``[^\\W_]``), and where ``text`` holds a combining mark, the combining marks inside a word
    too (:data:`dreamdb.unicode_marks.MARK_CLASS`: the virama of क्षत्रिय, Thai vowel signs). What reads a word of
    the text elsewhere (a snippet's word, :mod:`dreamdb.ranking.snippet`) takes it from here, so it ends the word
    where the index did. Text with no mark takes the plain pattern, whose words there are the marked one's: text
    below U+0300, and text whose code points from there up (an em dash, an arrow) are no mark (:func:`_holds_mark`);
    the marked one read the real vault's notes ≈ 4.5× as slowly, most of them holding a dash (QA round 152-A F4:
    ``sync --check`` reads every document's words to compare its language)."""
    if text.isascii() or _FROM_FIRST_MARK_RE.search(text) is None or not _holds_mark(text):
        return _TOKEN_RE
    return _marked_token_re()


def fold_case(text: str) -> str:
    """:func:`normalize`, then :func:`fold_written` (:func:`lower`, a capital ``I`` beside a Turkish-only letter
    read as ``ı``)."""
    return fold_written(normalize(text))


def lower(normalized: str) -> str:
    """Lowercase already normalised text, mapping Turkish dotted capital ``İ`` to ``i`` (not ``i̇``),
    and Latin letters with diacritics other than Turkish letters to their base letter
    (:func:`latin_fold_table`: ``café`` → ``cafe``, ``Ça`` → ``ça``)."""
    low = normalized.replace("İ", "i").lower()
    if low.isascii():
        return low
    # (the letters to fold replaced where they are, found by a scan in C: str.translate looks every character up in
    # the table, 11.7 ms for a 125 KB note, where lower() takes 0.4; a recall's snippets of ten hits took up to 39 ms)
    folded = _latin_fold_chars()
    return _latin_folded_re().sub(lambda m: folded[m.group()], low)


_TURKISH_ONLY_LETTER_RE = re.compile("[ŞşĞğıİ]")
"""Letters that only Turkish (and Azerbaijani) orthography writes: a word holding one is Turkish."""

_CAPITAL_I_ON_RE = re.compile(rf"I[^\W_{APOSTROPHES}]*")
"""A capital ``I`` and the rest of its word, taken whole: a run of letters and digits, ``\\w`` but ``_`` (as
:func:`tokens` reads words: ``ADMIN_ŞİFRESİ`` is two) and but the apostrophe's look-alikes (:data:`APOSTROPHES`:
``ʼ`` and ``ʹ`` are letters to Unicode, but the Turkish suffix written after one is no part of the word). Nothing
follows it in the pattern, so nothing is tried again (Python 3.10's ``re`` has no possessive quantifier). Its first
character is a literal, so the regex engine skips to the ``I``s, and each word is met once, from its first ``I``:
:func:`dotless_capitals` reads the word from its start. (``\\w*I\\w*``, tried at every position, backtracked over
each word: a word of 20,000 letters took 3.7 s, and a 130 KB Turkish text with a capital ``I`` every few words
≈ 16 ms, ≈ 3 ms this way.)"""


def dotless_capitals(written: str) -> str:
    """``written`` with each capital ``I`` of a word that also holds a Turkish-only letter (``Ş Ğ ı İ``, either
    case: :data:`_TURKISH_ONLY_LETTER_RE`) written ``ı``: Turkish orthography writes the capital of ``i`` as
    ``İ``, so in such a word ``I`` is dotless (``IŞIK`` → ``ıŞıK``, which :func:`lower` makes ``ışık``, where
    lowercasing alone gives ``işik``; ``DİYARBAKIR`` → ``diyarbakır``). A word is a run of letters and digits
    (:data:`_CAPITAL_I_ON_RE`): ``_`` and an apostrophe (:data:`APOSTROPHES`, ``ʼ`` and ``ʹ`` too, which are
    letters) end it, so the suffix after one (``APIʼNİN``, as ``API'NİN``) or an identifier's next part
    (``ADMIN_ŞİFRESİ``) leaves the ``I`` of ``API`` and ``ADMIN`` as it is (QA round 156-A F4: they were ``apı`` and
    ``admın``). A word without such a letter keeps its ``I`` (``API``, ``ISPARTA``, ``KIRMIZI``: English or Turkish,
    the reader cannot tell). One letter for one: offsets into the text stay valid. Text without a capital ``I`` or
    without such a letter is returned as it is (a scan of each, in C).

    Queries and documents not read as Turkish (:func:`fold_written`; a Turkish document indexes both readings of a
    capitalised word, :func:`analyze`'s ``stacked``): a query must not pick the ``i`` reading where the word is
    certainly Turkish (QA round 70 M1: ``IŞIK AYARLARI`` matched only a note's ``IŞIK``, through its ``işik``
    term, not its ``ışık`` ones, and scored below ``ışık ayarları``), and an English note holds the word as a
    query reads it (QA round 155-G F1: its ``ŞIRNAK`` was the term ``şirnak``, which neither ``ŞIRNAK`` nor
    ``Şırnak`` gave, and its ``DİYARBAKIR`` ``diyarbakir``), and that one too (:func:`dotted_terms`)."""
    if "I" not in written or _TURKISH_ONLY_LETTER_RE.search(written) is None:
        return written
    pieces: list[str] = []
    done = 0
    for m in _CAPITAL_I_ON_RE.finditer(written):
        start, end = m.span()
        while start > done and (c := written[start - 1]).isalnum() and c not in APOSTROPHES:  # (the word's start)
            start -= 1
        if _TURKISH_ONLY_LETTER_RE.search(written, start, end) is not None:
            pieces += (written[done:start], written[start:end].replace("I", "ı"))
            done = end
    if not pieces:
        return written
    pieces.append(written[done:])
    return "".join(pieces)


def fold_written(written: str) -> str:
    """Already normalised text (:func:`normalize`) folded as the analyzer reads a query and a document not read as
    Turkish (:func:`dreamdb.store.sync.document_terms`): :func:`lower` of :func:`dotless_capitals` (``ŞIRNAK`` →
    ``şırnak``, ``ISPARTA`` → ``isparta``). Its length is :func:`lower`'s."""
    return lower(dotless_capitals(written))


def dotted_terms(lowered: list[str], read: list[str]) -> list[str]:
    """The terms of a text not read as Turkish that its words have as :func:`lower` alone reads them, beside those of
    :func:`fold_written`'s reading: ``lowered`` and ``read`` are the text's words (:func:`tokens`) of each, one for
    one; for each word they differ in (a capital ``I`` of a word with a Turkish-only letter, :func:`dotless_capitals`),
    the lowered word's term (English analysis) where it is another than the read one's: ``DİYARBAKIR`` (read
    ``diyarbakır``) gives ``diyarbakir``, ``ŞIRNAK`` (``şırnak``) ``şirnak``. A document not read as Turkish indexes
    them as a Turkish one indexes its capitalised words' dotless readings (stacked: term frequency, not length), so a
    query typed without the Turkish letter finds the word (QA round 156-A F2: ``Diyarbakir``, ``DIYARBAKIR`` and
    ``Balikesir`` found no English note writing ``DİYARBAKIR`` or ``BALIKESİR`` once it was read with ``ı``; a vault
    with no Turkish note tries no Turkish spelling of a query's word). ``[]`` where the lists' lengths differ."""
    if len(lowered) != len(read):  # pragma: no cover - one letter for one: the same words
        return []
    out = []
    for w, r in zip(lowered, read):
        if w != r and len(w) > 1 and w not in STOPWORDS and (t := stem(w, False)) != (
                stem(r, False) if len(r) > 1 and r not in STOPWORDS else ""):
            out.append(t)
    return out


def ascii_terms(read: list[str]) -> list[str]:
    """The terms of a text not read as Turkish that its words holding a Turkish letter (:data:`TURKISH_LETTERS`: ç ğ ı
    ö ş ü, which :func:`lower` keeps) have spelled without it (:data:`TURKISH_TO_ASCII`), beside their own: ``read``
    is the text's words (:func:`tokens` of :func:`fold_written`'s reading); for each such word, the English term of
    its ASCII spelling where it is another than the word's own, and that spelling is no stopword: ``şırnak`` gives
    ``sirnak``, ``ışık`` ``isik``, ``müller`` ``muller``, ``façade`` ``facad``. A document not read as Turkish indexes
    them stacked, as it does :func:`dotted_terms`, so a query typed without the letters finds the word in a vault
    with no Turkish note, where no Turkish spelling of a query's word is tried (QA round 156-G F4: ``sirnak``,
    ``SIRNAK`` found no English note writing ``ŞIRNAK``, ``isik`` none writing ``IŞIK``), as ``cafe`` finds ``café``
    (:func:`latin_fold_table`). A Turkish note's words are left alone: a query's Turkish spellings find them
    (:func:`diacritic_terms`), and in Turkish the letters tell words apart (``şık``, ``sık``)."""
    found = {}  # (each distinct word read once: 19,121 words of README.md took 3.2 ms one by one, ≈ 1 ms so)
    for w in set(read):
        if len(w) > 1 and not TURKISH_LETTERS.isdisjoint(w) and w not in STOPWORDS:
            plain = w.translate(TURKISH_TO_ASCII)
            if plain not in STOPWORDS and (t := stem(plain, False)) != stem(w, False):
                found[w] = t
    return [found[w] for w in read if w in found] if found else []


def dotless_word(written: str, folded: str) -> str | None:
    """The folded word ``folded`` with Turkish dotless ``ı`` where ``written`` (the same word as written) has a
    capital ``I`` (``KIRMIZI``, ``kirmizi`` → ``kırmızı``; ``Işık``, ``işık`` → ``ışık``), or ``None`` when it has
    none (or folding changed its length). Turkish writes the capital of ``ı`` as ``I``, lowercasing makes it ``i``:
    documents index this reading's Turkish stem beside the others (:func:`analyze`'s ``stacked``), and
    :func:`dreamdb.ranking.rank.plan_query` gives it to the synonym table."""
    if "I" not in written or len(written) != len(folded):
        return None
    return "".join("ı" if c == "I" else x for c, x in zip(written, folded))


KEPT_LETTERS = frozenset("çğıöşü")
"""Letters with a diacritic that :func:`lower` keeps: Turkish writes different words with them
(``şık`` elegant, ``sık`` frequent)."""


@lru_cache(maxsize=1)
def _latin_folded_re() -> re.Pattern:
    """One character of :func:`latin_fold_table`'s (:func:`lower` replaces each match)."""
    return re.compile("[" + "".join(re.escape(chr(cp)) for cp in sorted(latin_fold_table())) + "]")


@lru_cache(maxsize=1)
def _latin_fold_chars() -> dict[str, str]:
    """:func:`latin_fold_table` keyed by character."""
    return {chr(cp): base for cp, base in latin_fold_table().items()}


@lru_cache(maxsize=1)
def latin_fold_table() -> dict[int, str]:
    """``str.translate`` table: each lowercase Latin letter with diacritics (Latin-1 Supplement,
    Latin Extended-A and -B, Latin Extended Additional) that decomposes into an ASCII letter and
    combining marks, to that letter, but :data:`KEPT_LETTERS`; and ``ø ł đ ħ`` (no decomposition)
    to ``o l d h``. One letter for one, so offsets into the text stay valid.

    Folding diacritics is what SQLite's own FTS5 tokenizer does by default (``unicode61``,
    ``remove_diacritics``): a query typed ``cafe`` or ``Beyonce`` finds ``café`` and ``Beyoncé``,
    and the other way round.
    """
    table = {ord(c): b for c, b in zip("øłđħ", "oldh")}
    for cp in [*range(0xC0, 0x250), *range(0x1E00, 0x1F00)]:
        c = chr(cp)
        if c != c.lower() or c in KEPT_LETTERS:
            continue
        d = unicodedata.normalize("NFD", c)
        if len(d) > 1 and d[0].isascii() and d[0].isalpha():
            table[cp] = d[0]
    return table


IDENTIFIERS_VERSION = "20"  # 20: a numbered name joined only where the part before the hyphen is letters alone (v1-2 keeps its hyphen, not v12), and U+2010/U+2011 hyphens number a name as "-" does; 19: numbered_terms written without the hyphen (WS-3 is ws3, the term WS3 is); 18: the slug analysed as the title (its camelCase parts, dotted numbers, c++); 17: and its small letters too (MIN_COMMON_SMALL_LETTER_SHARE); 16: such a name split into its camelCase parts up to MAX_NAME_CHARS; 15: a long identifier of short words is no encoded data (MIN_COMMON_LETTER_SHARE; drop_data's rule, but a lexicon's translations hold no run of 60 characters); 14: no numbered term in a dotted run; 13: joined_terms of the slug; 12: numbered_terms; 11: snake_case_terms; 2: C++17 is c++; 3: C++2b and C#10 too; 4: compound_terms (camelCase); 5, 6: XMLParser, utf8Decode, userIDs, log4j; 7: OAuth, ÇalışanListesi; 8: long paths with a digit split; 9, 10: acronym_terms, PostgreSQL joined
"""Version of :func:`identifier_terms`', :func:`compound_terms`' and :func:`joined_terms`' rules: part of the index format
(:data:`dreamdb.store.sync.INDEX_FORMAT`), so a change rebuilds the index; not of a lexicon's terms, which
hold no identifier."""

_DOT_DIGIT_RE = re.compile(r"\.\d")
r"""Where a dotted number may be: a literal first character lets the regex engine skip ahead, where a pattern
starting with ``\d`` or a look-behind is tried at every position (the real vault's CHANGELOG.json three
times over, 2.4 MB: 25 ms for :func:`identifier_terms`, 145 ms for one look-behind pattern, 3 Dec)."""
_DOTTED_NUMBER_RE = re.compile(r"\d+(?:\.\d+)+")
_LANGUAGE_MARK_RE = re.compile(r"\+\+|#")


def identifier_terms(folded: str) -> list[str]:
    """Identifiers that the split on punctuation (step 2) loses, as terms of their own, in order,
    duplicates kept: a dotted number (``v0.5.0`` → ``0.5.0``, ``1.2.3``, ``3.11``, ``127.0.0.1``; a
    letter before it stays in its own token, ``v0``, so ``0.5.0`` and ``v0.5.0`` find each other), and
    a one-letter language name written with ``++`` or ``#`` (``c++``, ``c#``, ``f#``; ``C++17``, ``C++2b`` and ``C#10`` are ``c++`` and ``c#``); the dotted
    numbers first, then the names.

    Split, ``v0.5.0`` is ``v0`` alone (``5`` and ``0`` are one character: dropped), which every
    version of the 0 series holds, and ``C++`` is nothing. Unicode's word boundaries keep such
    sequences whole (UAX #29, rules WB11/WB12: digits joined by ``.`` are one word), as Lucene's
    StandardTokenizer does; dreamdb keeps the split of SPEC §2 and adds the whole identifier beside
    its pieces: documents index it at the same position, adding to term frequency and not to length
    (as ``stacked`` analyses do, :func:`analyze`), and a query counts it as one more term. A query
    without such an identifier therefore scores exactly as before.

    Measured (3 Dec, BM25, ``python -m eval --set dreamcontext --set xquad --set scifact --set eips
    --modes bm25``): 6 of 4,820 queries hold an identifier; every XQuAD, SciFact and EIPs figure is
    unchanged to three decimals; the gold set loses one recall@1 (nDCG@10 0.797 → 0.792): ``BM25
    ranking k1 1.5 b 0.75 over the corpus`` now ranks first the changelog entry that writes ``k1 1.5 b
    0.75`` (the feature note, labelled, goes from first to third). Counted in rankScore only, at a
    synonym's weight, the gold set stays at 0.796, but ``what did we ship in v0.5.0?`` keeps notes
    about v0.6.0 and v0.22.0 at ranks 2 to 4 (QA round 45 M3), which the term in the raw score puts
    below the notes that write ``v0.5.0``.

    Args:
        folded: text after :func:`fold_case` (identifiers are matched on digits, ``.``, ``+``, ``#``
            and one lowercase letter).
    """
    out: list[str] = []
    end = 0  # (the dots of a number already taken are not looked at again)
    for m in _DOT_DIGIT_RE.finditer(folded) if "." in folded else ():
        i = m.start()
        if i < end or not i or not folded[i - 1].isdecimal():  # (isdecimal: what \d matches)
            continue
        start = i - 1
        while start and folded[start - 1].isdecimal():
            start -= 1
        if start and folded[start - 1] == ".":  # x.1.2: not a number's beginning
            end = i + 1
            continue
        number = _DOTTED_NUMBER_RE.match(folded, start)
        out.append(number.group())
        end = number.end()
    for m in _LANGUAGE_MARK_RE.finditer(folded) if "+" in folded or "#" in folded else ():
        i, j = m.start(), m.end()
        after = j
        if after < len(folded) and folded[after].isdecimal():  # a version: c++17, c++2b (a draft's name), c#10
            while after < len(folded) and _is_word(folded[after]):
                after += 1
        if (i and folded[i - 1].isalpha() and (i == 1 or not _is_word(folded[i - 2]))
                and (after == len(folded) or not (_is_word(folded[after]) or folded[after] in "+#"))):
            out.append(folded[i - 1:j])
    return out


def is_identifier_term(term: str) -> bool:
    """Whether a term is one of :func:`identifier_terms`' (``0.5.0``, ``c++``) or :func:`snake_case_terms`'
    (``session_id``), not a token's: it holds a character the split on punctuation removes (``.``, ``+``,
    ``#``, ``_``, ``-``). A :func:`numbered_terms` term (``task7`` of ``TASK-7``) is the token ``TASK7`` is, and no
    identifier by this test; one that keeps its hyphen (``v1-2``) is."""
    return "." in term or "+" in term or "#" in term or "_" in term or "-" in term


MAX_SNAKE_CASE_CHARS = 64
"""Longest snake_case identifier :func:`snake_case_terms` keeps whole (environment variables and constants are
shorter: ``DREAMCONTEXT_LAB_SYNC_CONCURRENCY`` has 33 characters); a longer run is data."""

_SNAKE_CASE_RE = re.compile(r"(?<![^\W_])[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+(?![^\W_])")
"""An ASCII word of letters and digits joined by single underscores, not inside a longer word (``__init__``'s
``init`` has no underscore between two parts; ``ÇALIŞAN_ID`` is no ASCII identifier)."""


def snake_case_terms(written: str) -> list[str]:
    """Each snake_case identifier (``CLAUDE_CODE_SESSION_ID``, ``O_EXCL``, ``eth_chainId``) as one lowercase term,
    underscores kept (``claude_code_session_id``), in order, duplicates kept.

    Step 2 splits on the underscore, so such an identifier was only its parts (``claud``, ``code``, ``session``,
    ``id``), which many notes hold, and a query for an environment variable ranked the notes that use its words
    above the one note that names it (QA round 78 F5: ``DEFAULT_SNAPSHOT_BUDGET_TOKENS`` fourth; camelCase words
    were kept whole already, :func:`compound_terms`). As with :func:`identifier_terms`, the whole identifier is
    added beside its parts (a document indexes it at their position: term frequency, not length), and a query
    counts it as one more term; text without one scores as before. Not longer than
    :data:`MAX_SNAKE_CASE_CHARS`.

    Args:
        written: text as written (case kept), after :func:`normalize`.
    """
    if "_" not in written:
        return []
    return [m.group().lower() for m in _SNAKE_CASE_RE.finditer(written) if len(m.group()) <= MAX_SNAKE_CASE_CHARS]


NUMBERING_HYPHENS = "-\u2010\u2011"
"""The characters that join a name to its number in :func:`numbered_terms`: the hyphen-minus and the two Unicode
hyphens, U+2010 HYPHEN and U+2011 NON-BREAKING HYPHEN, which typeset text and editors put where a keyboard puts
``-`` (SciFact's abstracts write ``PD‐1``, ``Sepsis‐3``, ``ZUMA‐1`` with U+2010; the EIPs ``SHA‑2``, ``version‑1``
with U+2011), so ``WS‐3`` and ``WS‑3`` are ``WS-3`` (QA round 154-A F6: they were ``ws`` alone). :func:`normalize`
(NFKC) makes U+2011 a U+2010 and leaves U+2010 as it is, so both are named here (and a caller passing text not
normalised, the hook's snippet lines, finds U+2011 too); U+FE63 SMALL and U+FF0D FULLWIDTH HYPHEN-MINUS become
``-`` there, and a soft hyphen (U+00AD) is removed, ``WS\u00ad3`` being the word ``WS3``. The dashes are no hyphens
and are left out: the en dash (U+2013) marks a range or a connection (``pages 3–5``, ``Q1–2``, ``London–Paris``;
SciFact's abstracts write it in citation ranges stuck to a word, ``lymphoma1–3``, and in ``CHMP1–3``, three
proteins), so joining it would make a range a name; the figure dash (U+2012, between digits: telephone numbers),
the minus sign (U+2212: ``x−1``) and the em dash (U+2014, between clauses) name no number either. They split words
as any punctuation does."""

_HYPHEN_DIGIT_RE = re.compile(f"[{NUMBERING_HYPHENS}][0-9]")
"""Where a hyphenated number may be (:func:`numbered_terms`): a literal first character, as :data:`_DOT_DIGIT_RE`."""


def holds_numbering_hyphen(text: str) -> bool:
    """Whether ``text`` holds one of :data:`NUMBERING_HYPHENS` (so may hold a :func:`numbered_terms` name)."""
    return "-" in text or (not text.isascii() and ("\u2010" in text or "\u2011" in text))


def numbered_terms(written: str) -> list[str]:
    """Each name numbered with a hyphen and one digit (``TASK-7``, ``IL-6``, ``utf-8``, ``GPT-4``) as one lowercase
    term, written without its hyphen (``task7``; ``v1-2`` keeps it, below), in order, duplicates kept: an ASCII word
    that starts with a letter, a hyphen (``-``, U+2010 or U+2011: :data:`NUMBERING_HYPHENS`, not an en dash) and one
    ASCII digit, not inside a longer run of words joined by hyphens or dots (``2026-01-02``, ``a-b-7``, ``x.y-7``,
    ``TASK-7.5`` give none), at most :data:`MAX_SNAKE_CASE_CHARS` long.

    Step 2 splits on the hyphen and drops one-character pieces, so ``TASK-7`` was ``task`` alone: the notes
    ``TASK-1`` to ``TASK-9`` tied, and a query for one of them ranked it by chance (QA round 127-B F1); ``IL-6`` and
    ``IL-2`` were one term. As with :func:`snake_case_terms`, the whole name is added beside its parts (term
    frequency, not length), and a query counts it as one more term; text without one scores as before. The term is
    the token the name written without its hyphen is (``WS3``, ``GPT4``, ``IL6``, ``utf8``: digits, never stemmed), so
    the two spellings meet, in notes and queries alike (QA round 153-G F7: ``WS-3`` did not find the note titled
    ``… WS3``, nor ``WS4`` the note that writes ``WS-4``; the term was ``ws-3``, which no note writing ``WS3``
    holds). Only a name whose part before the hyphen is letters alone is written so (``WS``, ``GPT``, ``utf``): where
    that part holds a digit, dropping the hyphen makes another number or another name (``v1-2`` is not ``v12``,
    ``ipv4-6`` not ``ipv46``, ``abc1-2`` not ``abc12``; ``k8s-1``, whose part ends in a letter, is not ``k8s1``
    either: its digits would run on into the name's own; QA round 154-A F1), and the term keeps its hyphen
    (``v1-2``, ``k8s-1``: the term such a name had before 153-G F7, an identifier by :func:`is_identifier_term`).
    A number of two digits or more is a term already (``EIP-1559``: ``eip``, ``1559``): with every name
    numbered so as one more term, the EIPs' description queries, which name the EIPs they extend, lost 11 and gained
    5 (nDCG@10 0.9155 → 0.9134, SciFact 0.6797 → 0.6790; ``python -m eval --set eips --set scifact --modes bm25``,
    6 Dec), so ``EIP-1559`` and ``EIP1559`` (or ``ES-2015`` and ``ES2015``) do not meet.

    Args:
        written: text as written (case kept), after :func:`normalize`.
    """
    out: list[str] = []
    for m in _HYPHEN_DIGIT_RE.finditer(written) if holds_numbering_hyphen(written) else ():
        i = start = m.start()
        while start and written[start - 1].isascii() and written[start - 1].isalnum():
            start -= 1
        if start == i or not written[start].isalpha() or (
                start and (_is_word(written[start - 1]) or written[start - 1] in "_." + NUMBERING_HYPHENS)):
            continue  # (no word, or one starting with a digit: a date's; or a part of a longer run: a-b-7, x.y-7)
        end = i + 2
        if end < len(written) and (_is_word(written[end]) or written[end] in "_" + NUMBERING_HYPHENS or (
                written[end] == "." and written[end + 1:end + 2].isdecimal())):
            continue  # (a number of two digits or more is a term of its own; GPT-4o, a-7-b, TASK-7.5: the name goes on)
        if end - start <= MAX_SNAKE_CASE_CHARS:
            # (joined after letters only: v1-2 is no v12, ipv4-6 no ipv46, k8s-1 no k8s1; such a name keeps its hyphen)
            name = written[start:i]
            out.append((name + ("" if name.isalpha() else "-") + written[i + 1]).lower())
    return out


def joined_terms(written: str) -> list[str]:
    """The identifiers whose parts the split on punctuation separates, each as one term: :func:`snake_case_terms`
    (``session_id``), then :func:`numbered_terms` (``task7`` of ``TASK-7``)."""
    return snake_case_terms(written) + numbered_terms(written)


_CASE_MARKS = bytes(0x41 if 0x41 <= b <= 0x5A else 0x61 if b >= 0x80 or chr(b).isalnum() else 0x20 for b in range(256))
"""``bytes.translate`` table for UTF-8 text: an ASCII capital → ``A``; a small letter, a digit or any byte of a
non-ASCII character → ``a``; any other byte → space. The bytes of a word are then the non-space ones, and
:data:`_CASE_CHANGES` mark where a word may change case (:func:`compound_terms`). A byte table, ``bytes.find``
and ``bytes.rfind`` run in C: the real vault's CHANGELOG.json three times over (2.4 MB, 10,182 case changes) is
searched in 19 ms, where the regex ``[a-z][A-Z]``, tried at every position, takes 48 ms."""

_CASE_CHANGES = (b"aA", b"AAAAaa")
"""Where a word may start a new part, in :data:`_CASE_MARKS`: a capital after a small letter (``setupVersion``), a
digit (``utf8Decode``, ``sha256Hash``) or a letter beyond ASCII (``kullanıcıAdı``; the decoded word is checked),
and a capitalised word after a run of three capitals or more (``XMLParser``, ``JSONDecoder``: QA round 51). After
two capitals, the same shape is a name more often than a compound (``SQLite``, and in SciFact's abstracts
``GTPase``, ``ATPase``, ``NETosis``, ``CBFbeta``, split into ``gt``, ``pase``…); ``IOError`` stays whole with them."""

_SPACE_MARKS = bytes(0x20 if chr(b).isspace() and b < 0x80 else 0x78 for b in range(256))
"""``bytes.translate`` table: an ASCII white-space byte → space, any other → ``x`` (:data:`MAX_COMPOUND_RUN`)."""

_DATA_MARKS = bytes(0x20 if chr(b).isspace() and b < 0x80 else
                    0x62 if b < 0x80 and (chr(b).isalnum() or chr(b) in "+/=") else 0x78 for b in range(256))
"""``bytes.translate`` table: ASCII white space → space, a base64 character → ``b``, any other byte → ``x``."""

MIN_BASE64_RUN = 60
"""Shortest run of base64 characters that :func:`drop_data` and :func:`compound_terms` take for data when
:func:`_is_encoded` finds it to be: base64 is wrapped at 76 columns by the ``base64`` command and MIME, at 64 in PEM
(QA round 52: 0.6 MB of wrapped base64 used up :data:`MAX_COMPOUND_SPANS` and gave 50,000 parts of noise)."""

MAX_COMPOUND_RUN = 1_000
"""Longest run of text without white space (bytes) in which :func:`compound_terms` looks for words: a longer one is
data, such as a screenshot pasted as base64 or a minified script, and is skipped whole, so that an identifier
written after it is still split (QA round 51: 4 MB of base64 used up :data:`MAX_COMPOUND_SPANS`, and
``uniqueWordZebra`` after it was not found by ``zebra``)."""

_LATIN_CAPITALS = "".join(chr(c) for c in (*range(0xC0, 0x250), *range(0x1E00, 0x1F00)) if chr(c).isupper())
"""The capitals of the Latin script beyond ASCII (Latin-1 Supplement, Extended-A and -B, Extended Additional:
``Ç``, ``Ş``, ``İ``, ``Ö``…), for the parts' pattern: ``re`` has no class of capitals."""

_CAPITAL = "A-Z" + _LATIN_CAPITALS
_SMALL = rf"[^\W\d_{_CAPITAL}]"  # a letter that is no capital


def _compound_part_pattern(capital: str, small: str) -> str:
    """:data:`_COMPOUND_PART_RE`'s source with ``capital`` (a class's ranges) and ``small`` (a class)."""
    return (rf"[{capital}]{{2,}}s(?!{small})|\d*[{capital}]+\d*(?=[{capital}]{small}{{2}})"
            rf"|\d*[{capital}]?\d*{small}+(?:\d+{small}*)*|\d*[{capital}]+\d*|\d+")


_COMPOUND_PART_RE = LazyPattern(_compound_part_pattern(_CAPITAL, _SMALL))
"""The parts of a camelCase or PascalCase token: a run of capitals and an ``s`` not followed by a small letter
(``IDs`` of ``userIDs``, ``URLs`` of ``getURLsForUser``: a plural acronym), a run of capitals before a capitalised
part (``XML`` of ``XMLHttpRequest``, ``2FA`` of ``2FAEnabled``, ``ŞİRKET`` of ``ŞİRKETAdı``), a capital with the
small letters and digits after it (``Version``, ``log4j`` of ``log4jConfig``, ``K8s`` of ``K8sCluster``, ``i18n`` of
``i18nKeys``), a run of capitals at the end (``QL`` of ``GraphQL``); digits stay with the letters around them
(``getV2Config`` → ``get``, ``V2``, ``Config``). Capitals are Latin ones, with and without diacritics (QA round 54:
``ÇalışanListesi``, ``veriÖnbelleği``)."""

_ASCII_COMPOUND_PART_RE = LazyPattern(_compound_part_pattern("A-Z", "[a-z]"))
""":data:`_COMPOUND_PART_RE` for a word of ASCII alone, on which it matches the same (``[^\\W\\d_A-Z…]`` is ``[a-z]``
there), compiled in 0.3 ms instead of 2–6 ms: its classes of Latin capitals are what takes the time."""

_INTO_LATIN_CAPITAL_RE = re.compile(rf"[^\W\d_](?=[{_LATIN_CAPITALS}])")
"""A letter before a capital beyond ASCII (``iÖ`` of ``veriÖnbelleği``): a case change the byte marks of
:data:`_CASE_MARKS`, which read every byte beyond ASCII as a small letter, do not see."""

MAX_JOINED_PART_LETTERS = 2
"""Most letters of a part that :func:`_compound_parts` also keeps joined to the parts beside it: a part of one or two
letters is mostly a piece of a name (``O`` of ``OAuth``, ``My`` of ``MySQL``, ``QL`` of ``GraphQL``, ``IP`` and
``v6`` of ``IPv6``), which a user types whole (QA round 54: ``oauth`` did not find ``OAuthClient``). Words have
three letters or more (:data:`MIN_PART_LETTERS`)."""

_COMPOUND_PARTS: dict[str, tuple[str, ...]] = {}
_COMPOUND_PARTS_MAX = 100_000

MAX_COMPOUND_CHARS = 48
"""Longest word :func:`compound_terms` splits: identifiers are shorter (``AbstractSingletonProxyFactoryBean`` has
33 letters); a longer run of mixed case is data, such as a line of base64 (64 or 76 characters), whose "parts"
are noise and whose splitting made a recall with a 2 MB pasted screenshot in a note 10 times slower (QA round 50)."""


MAX_NAME_CHARS = 160
"""Longest word :func:`compound_terms` splits when its letters are English's common ones
(:data:`MIN_COMMON_LETTER_SHARE`), as a long name's of short words are (a test's name,
``shouldReturn404WhenUserIdIsNullAndApiKeyIsMissingInV2RequestToS3``: 64 characters; QA round 132-E F2, found by
its whole name alone), where :data:`MAX_COMPOUND_CHARS` bounds any other: test names run to 100 characters and more
in the BDD style, and ``MAX_NAME_CHARS`` ends the splitting of a longer word, read as data."""

MIN_PART_LETTERS = 3
"""Fewest letters a camelCase word's parts average for it to be split (:func:`compound_terms`): words have three
letters or more (``setupVersion``: 5.5, ``getV2Config``: 3.3), while random mixed case, such as base64 between its
``+`` and ``/``, changes case every one or two characters (QA round 50). Letters only count: a word of two-letter
parts (``dcId``) is kept whole, and so is ``x86Arch`` (2.5)."""

MAX_COMPOUND_SPANS = 50_000
"""Most words with a case change one call of :func:`compound_terms` looks at: a text with more is mostly data (the real
vault's indexed note with the most holds 1,172). Base64 is skipped whole, on one line (:data:`MAX_COMPOUND_RUN`) or
wrapped (:data:`MIN_BASE64_RUN`); at the bound, a call takes about a second (2 MB of nothing but random camelCase
words: 200,000 of them, of which the first 50,000 are split)."""


_ACRONYM_PLURAL_RE = re.compile(r"(?<![^\W_])([A-Z][A-Z0-9]*[A-Z])s(?![^\W_])")
"""A word of two capitals or more and a small ``s``, the plural of an acronym (``JWTs``, ``PRs``, ``CPUs``, ``VMs``);
not ``K8s`` (a digit before the ``s``), nor ``userIDs`` inside a word (:func:`compound_terms` splits those)."""

_CAPITAL_S_RE = re.compile(r"(?<![^\W_])(?:[a-z]{1,6}[A-Z]*|[A-Z]?)[A-Z]S(?![^\W_])")
"""A short name whose ``S`` is a capital after a capital, a letter of the name and no plural: ``AWS``, ``EKS``,
``OS``, ``iOS``, ``macOS``, ``tvOS``, ``watchOS``; not a word of four capitals or more, which is as often an English
plural shouted or an opcode (``CALLS``, ``LOGS``, ``SLOTS`` in the EIPs: QA round 58)."""


def acronym_terms(written: str) -> list[str]:
    """Terms of acronyms that case-blind analysis gets wrong, in order, duplicates kept: the singular of an acronym's
    plural (``JWTs`` → ``jwt``, ``CPUs`` → ``cpu``, where English stemming leaves ``jwts`` and ``cpus``: it keeps an
    ``s`` after most consonants), and a name ending in a capital ``S`` whole (``iOS`` → ``ios``, ``AWS`` → ``aws``,
    ``macOS`` → ``macos``, which stemming makes ``io``, ``aw`` and ``maco``: the ``IO`` note ranked above the ``iOS``
    one for the query ``iOS``). Only those whose term differs from the word's own, and no stopword; like
    :func:`compound_terms`, they are added beside the word's term, which stays (a document indexes them at the
    word's position, as term frequency, not length), so a query written in lowercase finds what it found before
    (QA round 56: ``JWT``, ``PR`` and ``SDK`` did not find notes on ``JWTs``, ``PRs`` and ``SDKs``).

    Args:
        written: text as written (case kept), after :func:`normalize`.
    """
    out: list[str] = []
    if "s" in written:
        for m in _ACRONYM_PLURAL_RE.finditer(written):
            term = stem(lower(m.group(1)), False)
            if term != stem(lower(m.group()), False) and term not in STOPWORDS:
                out.append(term)
    if "S" in written:
        for m in _CAPITAL_S_RE.finditer(written):
            term = lower(m.group())
            if term != stem(term, False) and term not in STOPWORDS:
                out.append(term)
    return out


def has_case_change(written: str) -> bool:
    """Whether ``written`` may hold a word that :func:`compound_terms` splits (one of :data:`_CASE_CHANGES`): one
    C-level translate and two searches, ≈ 2 ms a megabyte."""
    marks = written.encode("utf-8", "surrogatepass").translate(_CASE_MARKS)
    return any(marks.find(change) >= 0 for change in _CASE_CHANGES)


def compound_terms(written: str) -> list[str]:
    """The parts of each word written in camelCase or PascalCase (``setupVersion``, ``safeChildPath``,
    ``XMLHttpRequest``, ``GitHub``, ``XMLParser``, ``utf8Decode``), as terms of their own, in order,
    duplicates kept: ``setupVersion`` → ``setup``, ``version``; ``isDeleted`` → ``delet`` (``is`` is a
    stopword). Each part is analysed as an English word (identifiers are code: ``sessionId`` is
    ``session``, ``id`` in a Turkish note too); a part of one letter or a stopword is left out, as in
    step 3, and so is a part whose term is the whole word's.

    Step 2 keeps such a word whole (``setupversion``), so ``setup version`` did not find a note that
    writes ``setupVersion``, nor the other way round. Splitting identifiers at case changes is what
    code search does (Lucene's ``WordDelimiterGraphFilter``, ``splitOnCaseChange`` with
    ``preserveOriginal``; Enslen, Hill, Pollock & Vijay-Shanker, "Mining source code to automatically
    split identifiers for software analysis", MSR 2009). As with :func:`identifier_terms`, dreamdb
    keeps the word and adds its parts: a document indexes them at the word's position (term frequency,
    not length), and a query counts them as more terms. Text without such a word scores as before.

    A part starts at a capital after a small letter, a digit or a letter beyond ASCII, and at a
    capitalised word after a run of three capitals or more (:data:`_CASE_CHANGES`): ``XMLParser`` → ``xml``,
    ``parser`` (QA round 51: ``XMLParser``, ``JSONDecoder`` and ``utf8Decode`` were kept whole while
    ``XMLHttpRequest`` and ``getV2Config`` were split); ``SQLite`` and ``GTPase`` stay whole. Capitals with
    diacritics count as capitals (``ÇalışanListesi``, ``veriÖnbelleği``, ``ŞİRKETAdı``), and the parts of a word in
    Turkish letters are also analysed as Turkish, as a query in Turkish reads them. A part of one or two letters is
    also kept joined to the parts beside it (:data:`MAX_JOINED_PART_LETTERS`: ``OAuthClient`` → ``oauth`` too,
    ``MySQLDump`` → ``mysql``, ``IPv6Address`` → ``ipv6``; QA round 54). A run of
    capitals followed by an ``s`` is one part, the plural of an acronym (``APIs``, ``userIDs`` → ``user``,
    ``id``), and a word of capitals alone is not split (``HTTP``), nor one longer than
    :data:`MAX_COMPOUND_CHARS` (but for a long name of English's common letters, :data:`MAX_NAME_CHARS`) or whose parts average under :data:`MIN_PART_LETTERS` letters, nor a word of a run
    :func:`_data_runs` finds (base64 is data, not identifiers). Nor is a word that
    is one part of two letters or more and a letter (``iPhone``, ``mRNA``, and the gene names ``clpC``,
    ``RhoA``): a name with a letter before or after it, not a compound; split, the gene ``clpC`` was found
    by ``clp``, which ``clpP`` and ``clpX`` hold (SciFact, below).

    The real vault's notes write 1,735 such words (``safeChildPath`` in 18 notes, none of which says
    "safe child path"). Measured (3 Dec, same tree with and without, ``python -m eval --set all --modes
    bm25``; gold set with ``--modes bm25,hybrid``): every XQuAD track within ±0.001 nDCG@10; SciFact
    0.678 → 0.678 (0.675 with names such as ``clpC`` split); EIPs descriptions 0.917 → 0.916, titles
    0.816 → 0.821 (code-heavy bodies: ``balanceOf``, ``eth_chainId``); gold set BM25 recall@1 70.0 → 71.7,
    nDCG@10 0.792 → 0.790, hybrid recall@1 85.0 → 83.3 (one query, whose two first notes are 0.04 apart in
    rankScore).

    Args:
        written: text as written (case kept), after :func:`normalize`.
    """
    raw = written.encode("utf-8", "surrogatepass")
    marks = raw.translate(_CASE_MARKS)
    lower_upper, run_word = (marks.find(change) for change in _CASE_CHANGES)
    out: list[str] = []
    if len(raw) != len(written):  # beyond ASCII: case changes into a capital the byte marks do not see
        out = _latin_capital_parts(written)
    if lower_upper < 0 and run_word < 0:
        return out
    # runs of data (base64, minified code: _data_runs), skipped whole
    data_runs = _data_runs(raw)
    run_starts = [r[0] for r in data_runs]
    n = len(raw)
    spans = 0
    while spans < MAX_COMPOUND_SPANS:
        i = lower_upper if run_word < 0 or 0 <= lower_upper < run_word else run_word
        k = bisect_right(run_starts, i) - 1 if data_runs else -1
        if k >= 0 and i < data_runs[k][1]:
            end = data_runs[k][1]  # (a skip costs two searches, and is not counted: QA round 53)
        else:
            spans += 1
            # the word around it: the run of word bytes (C-level searches for the spaces of the marks)
            start = marks.rfind(b" ", 0, i) + 1
            end = marks.find(b" ", i)
            if end < 0:
                end = n
            if end - start <= 4 * MAX_NAME_CHARS:  # (UTF-8: up to 4 bytes a character)
                span = raw[start:end].decode("utf-8", "replace")
                parts = _COMPOUND_PARTS.get(span)
                if parts is None:
                    parts = _compound_parts(span)
                    if len(_COMPOUND_PARTS) >= _COMPOUND_PARTS_MAX:
                        _COMPOUND_PARTS.clear()
                    _COMPOUND_PARTS[span] = parts
                out.extend(parts)
        if 0 <= lower_upper < end:
            lower_upper = marks.find(_CASE_CHANGES[0], end)
        if 0 <= run_word < end:
            run_word = marks.find(_CASE_CHANGES[1], end)
        if lower_upper < 0 and run_word < 0:
            break
    return out


def _data_runs(raw: bytes) -> list[tuple[int, int]]:
    """``(start, end)`` byte offsets of the runs of ``raw`` that :func:`compound_terms` skips as data, in order: runs
    without ASCII white space longer than :data:`MAX_COMPOUND_RUN`, and runs between white space of at least
    :data:`MIN_BASE64_RUN` base64 characters (letters, digits, ``+``, ``/``, ``=``) that :func:`_is_encoded` finds
    to be data, as :func:`drop_data` does: a line of base64 as the ``base64`` command wraps it (76 columns), not a
    path (``packages/frontend/components/Chart2D/LegendRenderer``, whose parts a rule of a digit alone did not
    split). C-level searches: a long needle is skipped through quickly."""
    marks = raw.translate(_DATA_MARKS)
    runs = []
    b64_needle = b"b" * MIN_BASE64_RUN
    spaces = raw.translate(_SPACE_MARKS)
    needle = b"x" * (MAX_COMPOUND_RUN + 1)
    at = spaces.find(needle)
    while at >= 0:
        end = spaces.find(b" ", at)
        end = len(raw) if end < 0 else end
        runs.append((spaces.rfind(b" ", 0, at) + 1, end))
        at = spaces.find(needle, end)
    at = marks.find(b64_needle)
    while at >= 0:
        start = marks.rfind(b" ", 0, at) + 1
        end = marks.find(b" ", at)
        end = len(raw) if end < 0 else end
        if marks.find(b"x", start, end) < 0 and _is_encoded(raw[start:end]):  # base64 characters only, data
            runs.append((start, end))
        at = marks.find(b64_needle, end)
    return sorted(runs)


def _latin_capital_parts(written: str) -> list[str]:
    """:func:`compound_terms` of the words with a case change into a capital beyond ASCII (``veriÖnbelleği``) and
    none the byte marks see (those words are split with the rest), for the first :data:`MAX_COMPOUND_SPANS`."""
    out: list[str] = []
    done = -1
    for k, m in enumerate(_INTO_LATIN_CAPITAL_RE.finditer(written)):
        if k >= MAX_COMPOUND_SPANS:
            break
        if m.start() < done:
            continue  # (another change of a word already split)
        start = m.start()
        while start > 0 and start > m.start() - 4 * MAX_COMPOUND_CHARS and _is_word(written[start - 1]):
            start -= 1
        end = _TOKEN_RE.match(written, m.start()).end()
        done = end
        word = written[start:end]
        marks = word.encode("utf-8", "surrogatepass").translate(_CASE_MARKS)
        if all(marks.find(change) < 0 for change in _CASE_CHANGES):
            out.extend(_compound_parts(word))
    return out


def _compound_parts(span: str) -> tuple[str, ...]:
    """:func:`compound_terms` of one run of word bytes (a token, or a few joined by non-ASCII punctuation)."""
    out = []
    for word in tokens(span):
        if len(word) > MAX_COMPOUND_CHARS and (len(word) > MAX_NAME_CHARS or not word.isascii()
                                               or not _common_letters(word.encode("ascii"))):
            continue
        found = (_ASCII_COMPOUND_PART_RE if word.isascii() else _COMPOUND_PART_RE)().findall(word)
        # (a plural acronym's s, IDs of userIDs, is neither a letter of the part nor of its term)
        plurals = sum(len(p) > 2 and p[-1] == "s" and p[-2].isupper() for p in found)
        if sum(map(str.isalpha, word)) - plurals < MIN_PART_LETTERS * len(found):  # short parts: data (base64)
            continue
        if plurals:
            found = [p[:-1] if len(p) > 2 and p[-1] == "s" and p[-2].isupper() else p for p in found]
        lowered = list(map(lower, found))
        parts = [p for p in lowered if len(p) > 1]
        if sum(not p.isdigit() for p in parts) < 2:  # one word and a letter (clpC, RhoA, iPhone, mRNA): a name,
            continue  # not a compound; nor is a number and a word (550E8400 of a UUID, 1Password)
        if not any(c.isupper() and (not word[i - 1].isupper() or word[i + 1:i + 2].islower())
                   for i, c in enumerate(word) if i):
            continue  # no capital starts a part after the first letter (abc123def, HTTP)
        # a part of one or two letters, joined to the parts beside it too (OAuth, MySQL, GraphQL, IPv6)
        short = [i for i, p in enumerate(lowered) if sum(map(str.isalpha, p)) <= MAX_JOINED_PART_LETTERS]
        starts = {k for i in short for k in (i - 1, i) if 0 <= k < len(lowered) - 1}
        # and a run of capitals to a word before it (PostgreSQL of PostgreSQLAdapter, QA round 56)
        starts.update(i - 1 for i in range(1, len(found)) if found[i].isupper() and found[i].isalpha()
                      and len(found[i]) > MAX_JOINED_PART_LETTERS and found[i - 1][:1].isupper()
                      and not found[i - 1].isupper())
        joined = [lowered[j] + lowered[j + 1] for j in sorted(starts)]
        whole = stem(lower(word), False)
        turkish = not word.isascii()  # (the parts of a word in Turkish letters are read in both languages: ödeme)
        for p in (*parts, *joined):
            if p not in STOPWORDS:
                term = stem(p, False)
                if term != whole:
                    out.append(term)
                if turkish and (alt := stem(p, True)) not in (term, whole):
                    out.append(alt)
    return tuple(out)


def _is_word(c: str) -> bool:
    r"""A letter or digit (a character of a token: ``[^\W_]``)."""
    return c.isalnum()


def raw_tokens(text: str) -> list[str]:
    """Split text into letter/digit runs, folded (:func:`fold_written`; no stopword removal, no stemming); encoded
    data (:func:`drop_data`) is found in the text as written, before case is folded."""
    return tokens(fold_written(drop_data(normalize(text))), data_dropped=True)


def is_turkish(words: list[str]) -> bool:
    """Guess whether a tokenised text is Turkish (see :data:`TURKISH_DETECTION_RATIO`)."""
    return bool(words) and _turkish_hits(words) / len(words) >= TURKISH_DETECTION_RATIO


def _turkish_hits(words: list[str]) -> int:
    """How many of ``words`` carry a Turkish letter or are Turkish stopwords."""
    hits = sum(map(_TURKISH_ASCII_STOPWORDS.__contains__, words))
    if not TURKISH_LETTERS.isdisjoint("".join(words)):  # else no word has a Turkish letter: skip the loop
        hits += sum(1 for w in words if not TURKISH_LETTERS.isdisjoint(w))
    return hits


def is_turkish_text(words: list[str]) -> bool:
    """Whether a tokenised query or document is Turkish: :func:`is_turkish`, unless the text is English
    that names someone or quotes a word in Turkish letters (``delete the façade file``, ``ask özge to
    delete the license file``, ``In 1186, Temüjin was elected khan``): English when its
    :data:`ENGLISH_ONLY_STOPWORDS` are at least as many as its words with Turkish letters and its
    Turkish stopwords.

    A short text is where this matters: one name in a ten-word English sentence is 10 % of its words,
    over :data:`TURKISH_DETECTION_RATIO`, and an English note read as Turkish gets Turkish stems
    (``elected`` → ``elect`` no longer matches). Turkish prose has few English-only stopwords (``the``,
    ``and``, ``was``), English prose has them in every line.
    """
    hits = _turkish_hits(words) if words else 0
    if not words or hits / len(words) < TURKISH_DETECTION_RATIO:  # is_turkish, with the hits kept
        return False
    english = sum(map(ENGLISH_ONLY_STOPWORDS.__contains__, words))
    return not english or hits > english


@lru_cache(maxsize=1)
def _turkish_stemmer():
    """Snowball's Turkish stemmer: PyStemmer's C build of it, else the pure-Python snowballstemmer.

    Both are generated from the same Snowball source and stem identically
    (tests/test_analyzer.py compares them on 10,000 Turkish words); the C one
    takes ~5 µs a word instead of ~130 µs, which is most of a Turkish query's
    cost. The pure-Python fallback is loaded without the package's
    ``__init__``: ``import snowballstemmer`` imports all 30 of its languages
    (~40 ms, paid by every CLI call and prompt hook that meets Turkish text),
    so the Turkish module and its two helpers are loaded from the same folder
    under a private package name, leaving the real ``snowballstemmer`` package
    untouched for anyone else; any problem falls back to the normal import.
    """
    try:
        import Stemmer  # PyStemmer

        # Its own word cache off (size 0): :func:`stem` caches in front of it, and PyStemmer's cache,
        # once full, purges on cache misses, which made a miss ~2× as slow (query words spelled out
        # in Turkish letters, a first sync of Turkish notes are almost all misses).
        return Stemmer.Stemmer("turkish", 0)
    except (ImportError, KeyError):
        return _python_turkish_stemmer()


def _python_turkish_stemmer():
    """snowballstemmer's Turkish stemmer (pure Python), loaded as described in :func:`_turkish_stemmer`."""
    import importlib
    import importlib.util
    import sys
    import types

    try:
        spec = importlib.util.find_spec("snowballstemmer")
        name = "_dreamdb_snowball"
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = list(spec.submodule_search_locations)
            sys.modules[name] = pkg
        return importlib.import_module(f"{name}.turkish_stemmer").TurkishStemmer()
    except Exception:  # noqa: BLE001 - a different package layout: the documented import path
        from snowballstemmer.turkish_stemmer import TurkishStemmer

        return TurkishStemmer()


@lru_cache(maxsize=200_000)
def stem(word: str, turkish: bool) -> str:
    """Stem one lowercase word (cached: up to 200,000 words, about 140 bytes each of Python objects by
    ``tracemalloc``, so some 28 MB, and nearer 45 MB of a process's resident memory once a long-lived process has
    met that many distinct words, its queries' among them; QA round 147-E F4).

    Identifiers with digits are unchanged. Every other word goes through the
    English inflectional stemmer, so a name or loanword is stemmed the same in
    Turkish and English text (``Panthers'ın`` → ``panther`` like ``Panthers``);
    in Turkish text the Turkish stemmer first removes Turkish inflection.
    """
    if not word.isalpha():  # tokens are runs of letters and digits: this one has a digit
        return word
    if turkish and len(word) > 3:
        word = _turkish_root(word, _turkish_stemmer().stemWord(word))
    return english_stem(word)


def _turkish_root(word: str, stem: str) -> str:
    """What :func:`stem` keeps of a word of 4+ letters given Snowball Turkish's stem of it: the stem
    less an appended harmony vowel, or the word itself when the stem is too short or a stopword."""
    if stem[-1:] in _HARMONY_VOWELS and stem[-2:-1] in ("d", "g") and word.startswith(stem[:-1]) \
            and word[len(stem) - 1 : len(stem)] not in _VOWELS:
        stem = stem[:-1]  # Snowball's appended vowel, see _HARMONY_VOWELS
    if "z" in word[len(stem):]:
        stem = _privative_root(word, stem)
    return stem if len(stem) >= MIN_TURKISH_STEM and stem not in STOPWORDS else word


def _privative_root(word: str, stem: str) -> str:
    """``stem``, or, when Snowball cut into or off a privative ``-sIz`` (:data:`PRIVATIVE_RE`), the word up to
    the end of the suffix and the ``-lIk``/``-lAş`` it took (``ğ`` written back as ``k``): ``hatasız`` (without
    errors) is ``hatasız``, not ``hata`` (error), and ``başarısızlığı`` is ``başarısızlık`` (failure). Snowball's
    Turkish stemmer reads ``-sIz`` as a possessive and the copula's ``-(y)Iz``: with it, a note on error-free
    builds was a note on errors, and a query for ``kablosuz`` (wireless) was translated *cable* (QA round 56)."""
    for n in range(max(2, len(stem) - 2), len(word) - 2):
        m = PRIVATIVE_RE().fullmatch(word, n)
        if m is not None:
            end = m.end(1)
            if end <= len(stem):
                return stem
            root = word[:end]
            return root[:-1] + "k" if root.endswith("ğ") else root
    return stem


_ENGLISH_TERMS: dict[str, str] = {}
_ENGLISH_TERMS_MAX = 500_000
"""The term of each word met in non-Turkish text ("" for stopwords and 1-letter words), memoised:
a plain dict read with ``map`` costs far less per word than a call per word."""


def analyze(text: str, turkish: bool | None = None, *, words: list[str] | None = None,
            stacked: list[str] | None = None, originals: list[str] | None = None) -> list[str]:
    """Turn text into index/query terms, in order, duplicates kept.

    Args:
        text: any text (a document field or a query).
        turkish: force the language decision; ``None`` detects it with :func:`is_turkish_text`.
        words: ``raw_tokens(text)`` when the caller already has them.
        originals: ``tokens(normalize(text))`` (the words as written) when the caller has them.
        stacked: documents pass a list: it receives the Turkish analysis of each capitalised
            word of Turkish text where it differs from the name analysis returned (see the
            module docstring). Queries pass nothing.

    Returns:
        list[str]: terms (lowercase, stopwords removed, stemmed).

    Example:
        >>> analyze("Which databases did DEC-0054 pick?")
        ['databas', 'dec', '0054', 'pick']
    """
    if words is None:
        words = raw_tokens(text)
    if turkish is None:
        turkish = is_turkish_text(words)
    out = []
    if turkish:
        # Turkish orthography separates suffixes of proper nouns with an apostrophe
        # (Allen'ın), so a capitalised token may be a bare name: its primary term is not
        # Turkish-stemmed.
        if originals is None:
            originals = tokens(normalize(text))
        if len(originals) != len(words):  # pragma: no cover - folding never splits tokens
            originals = words
        for w, o in zip(words, originals):
            if len(w) > 1 and w not in STOPWORDS:
                if o[:1].isupper():
                    term = stem(w, False)
                    if stacked is not None:
                        alt = stem(w, True)
                        if alt != term:
                            stacked.append(alt)
                        if (undotted := dotless_word(o, w)) is not None:
                            # Turkish capital I is the capital of dotless ı (KIRMIZI = kırmızı), but
                            # lowercasing gives i, right for names and English (IBM): index both.
                            dotless = stem(undotted, True)
                            if dotless not in (term, alt):
                                stacked.append(dotless)
                else:
                    term = stem(w, True)
                out.append(term)
        return out
    global _ENGLISH_TERMS
    terms = _ENGLISH_TERMS
    new = set(words).difference(terms)
    if new:
        if len(terms) + len(new) > _ENGLISH_TERMS_MAX:  # a fresh dict: other threads keep reading the old one
            terms = _ENGLISH_TERMS = {}
            new = set(words)
        for w in new:
            terms[w] = stem(w, False) if len(w) > 1 and w not in STOPWORDS else ""
    return [t for t in map(terms.__getitem__, words) if t]


def query_words(text: str, turkish: bool, words: list[str] | None = None,
                originals: list[str] | None = None, common: frozenset[int] = frozenset(),
                skip: frozenset[str] = frozenset()) -> list[tuple[str, str, bool]]:
    """``(term, folded word, capitalised)`` for each word of a query that yields a term, in order.

    The terms are exactly :func:`analyze`'s (same language decision, same rules); the word and
    its case are kept for :func:`alternate_terms`. ``words`` and ``originals`` as in :func:`analyze`;
    ``common``: indexes of capitalised words to read as ordinary words all the same (see
    :func:`opening_capitals`); ``skip``: folded words left out as stopwords are (a Turkish query's stopwords typed
    without their Turkish letters, :data:`PLAIN_TYPED_TURKISH_STOPWORDS`, where
    :func:`dreamdb.ranking.rank.plan_query` reads the query as Turkish).
    """
    if words is None:
        words = raw_tokens(text)
    if originals is None:
        originals = tokens(normalize(text))
    if len(originals) != len(words):  # pragma: no cover - folding never splits tokens
        originals = words
    out = []
    for i, (w, o) in enumerate(zip(words, originals)):
        if len(w) > 1 and w not in STOPWORDS and w not in skip:
            cap = o[:1].isupper() and (not common or i not in common)
            out.append((stem(w, turkish and not cap), w, cap))
    return out


_APOSTROPHES = frozenset(APOSTROPHES)
_SENTENCE_BREAK_RE = re.compile(r"(?<=[.!?…:;])\s+|\n\s*")
"""Where a sentence (or a line) ends: after ``. ! ? … : ;`` and whitespace, or at a line break."""


def opening_capitals(written: str, originals: list[str], *, capital_i: bool = False) -> frozenset[int]:
    """Indexes (into ``originals``, the words of ``written``: a query after :func:`normalize` and :func:`drop_data`,
    as written) of the capitalised words whose capital may be
    the text's and not the word's: the first word of each sentence or line (``Yedekler nerede?``), and every
    word of a text whose words are all capitalised (a title: ``Sunucu Güvenliği``), unless it has a capital
    ``I`` (which may stand for ``ı``: :func:`alternate_terms` tries both for a capitalised word) or
    is written with a suffix after an apostrophe (``Miller'ın``: a name, as Turkish spells one).
    With ``capital_i``, a word with a capital ``I`` not written in capitals throughout counts too (``Isıtma``,
    ``Ilık``: the caller reads its ``I`` as ``ı`` and as ``i``, :func:`dotless_word`); a word in capitals
    (``API``, ``AYARLARI``) is still left out, and ``I`` alone is no word a caller reads (one letter).
    ``originals`` may be the first words of ``written`` only (a long query's words read,
    :func:`dreamdb.ranking.rank.plan_query`; not all capitalised unless all of ``written``'s are): none past them
    is given, and the text past them is not split.

    Turkish writes a name's suffixes after an apostrophe, so a capitalised bare word may be a name, and a
    query reads it as one (its English analysis); but Turkish also capitalises every sentence's first word,
    and a prompt or a question begins with one. Read as a name, ``Yedekler`` (backups) was the term
    ``yedekler``, held only by the notes that begin a sentence with it, and scored 0.90 where ``yedekler``
    scored 1.72 (QA round 71). :func:`dreamdb.ranking.rank.plan_query` reads such a word as an ordinary
    Turkish word where a Turkish note holds that reading: a name opens a sentence as often (``Rankine
    çevriminin…``), and its Turkish reading, ``rank``, is an English note's word.
    """
    caps = [o[:1].isupper() and ("I" not in o or (capital_i and not o.isupper())) for o in originals]
    if not any(caps):
        return frozenset()
    if all(o[:1].isupper() for o in originals):
        return frozenset(i for i, c in enumerate(caps) if c)
    parts = _SENTENCE_BREAK_RE.split(written) if _SENTENCE_BREAK_RE.search(written) else (written,)
    starts, n = set(), 0
    for k, part in enumerate(parts):
        if n >= len(caps):  # (past the words given: a query's words read, plan_query, may be the first of the text's)
            break
        if caps[n]:
            first = _TOKEN_RE.search(part)
            if first is None or part[first.end():first.end() + 1] not in _APOSTROPHES:  # (Miller'ın: a name)
                starts.add(n)
        if k + 1 < len(parts):
            n += len(tokens(part, data_dropped=True))
    return frozenset(starts)


@lru_cache(maxsize=16_384)
def alternate_terms(word: str, capitalised: bool, turkish: bool) -> tuple[tuple[str, bool], ...]:
    """Other analyses of one query word, best first, for a term the index does not know.

    The language of a short query is a guess (``yedekleme`` has no Turkish letter and is
    analysed as English, while the Turkish note that contains it was Turkish-stemmed), and
    so is whether a capitalised word is a name. Each alternative undoes one guess:

    1. the other analysis: Turkish stemming for a word analysed as English or as a name,
       the name (English) analysis for a word analysed as Turkish;
    2. for a word starting with ``ı``, with that letter written ``i``: the index folds the
       capital ``I`` to ``i`` (``Irmak`` → ``irmak``; ``Işık`` → ``işık`` in Turkish text, a word
       with a Turkish-only letter being ``ışık`` elsewhere: :func:`dotless_capitals`), as English
       text needs, so a query typed ``ırmak`` looks for that form too; and back, for a capitalised
       word: ``Irmak`` (folded ``irmak``) and ``KIRMIZI`` (``kirmizi``) also look for ``ırmak`` and
       ``kırmızı``;
    3. for a word ending in ``s`` that stemming keeps (English stemming keeps an ``s`` after most
       consonants), the word without it: ``jwts`` typed in lowercase looks for ``jwt``, the term of the
       notes that write ``JWT`` (QA round 58; written ``JWTs``, :func:`acronym_terms` gives it).

    Returns:
        ``((term, analysed as Turkish?), ...)``: distinct terms other than the word's own term (may
        be empty); cached per (word, capitalised, turkish).
    """
    own = stem(word, turkish and not capitalised)
    variants = [word, "i" + word[1:]] if word[0] == "ı" else [word]
    if capitalised and "i" in word:
        # a capital I typed for Turkish dotless ı (Işık → işık, KIRMIZI → kirmizi): the word with ı
        # for its first letter, and with ı for every i (an all-capitals word)
        variants += list(dict.fromkeys(v for v in ("ı" + word[1:] if word[0] == "i" else word, word.replace("i", "ı"))
                                       if v != word))
    out: list[tuple[str, bool]] = []
    for w in variants:
        for as_turkish in (not (turkish and not capitalised), turkish and not capitalised):
            if len(w) > 1 and w not in STOPWORDS:
                t = stem(w, as_turkish)
                if t != own and (t, as_turkish) not in out:  # one term can be both readings: English notes too
                    out.append((t, as_turkish))
    if word.endswith("s") and len(word) > 2 and own == word and (t := stem(word[:-1], False)) not in STOPWORDS:
        out.append((t, False))  # 3. a plural the stemmer keeps: jwts, prs, sdks (QA round 58)
    return tuple(out)


_ASCII_TO_TURKISH = {"c": "ç", "g": "ğ", "i": "ı", "o": "ö", "s": "ş", "u": "ü"}
TURKISH_TO_ASCII = str.maketrans({t: a for a, t in _ASCII_TO_TURKISH.items()})
"""``str.translate`` table: each of ç ğ ı ö ş ü to the ASCII letter Turkish typed without its letters
puts in its place (the reverse of :func:`diacritic_terms`' spellings)."""
MAX_DIACRITIC_VARIANTS = 64
"""Most spellings :func:`diacritic_terms` tries for one word (2^6: six letters that Turkish may
have written with a diacritic); a more ambiguous word is not tried. A cost bound: a spelling
costs ≈ 3 µs to analyse, so the 16 words of :data:`dreamdb.ranking.rank.MAX_SPELLED_WORDS` stay
within ≈ 3 ms, the in-process recall budget."""


@lru_cache(maxsize=16_384)
def _diacritic_slots(word: str) -> tuple[int, ...]:
    """Positions of ``word`` where Turkish may have written ç ğ ı ö ş ü for c g i o s u (ğ only after a
    vowel, as Turkish writes it); empty for a word not tried (a non-ASCII letter, a digit, more than
    log2(:data:`MAX_DIACRITIC_VARIANTS`) such letters). Cached: each round of a word asks again."""
    if not word.isascii() or not word.isalpha():
        return ()
    # ğ (soft g) only ever follows a vowel in Turkish spelling: never first, never after a consonant
    # (the letter before a g is a vowel or not whichever way it is spelled: c/ç, s/ş are both consonants)
    slots = tuple(i for i, c in enumerate(word) if c in _ASCII_TO_TURKISH and (c != "g" or (i and word[i - 1] in _VOWELS)))
    return slots if 2 ** len(slots) <= MAX_DIACRITIC_VARIANTS else ()


def diacritic_rounds(word: str) -> int:
    """How many letters of ``word`` :func:`diacritic_round` may change (0: the word is not tried)."""
    return len(_diacritic_slots(word))


@lru_cache(maxsize=16_384)
def diacritic_round(word: str, changes: int) -> tuple[str, ...]:
    """Turkish analyses of the spellings of ``word`` with exactly ``changes`` of its letters written
    as Turkish letters (``sifrelenir`` → ``şifrelenir`` at 1), in the alphabetical order of the
    spellings: one round of :func:`diacritic_terms`, so a caller can stop at the first round that
    holds a known term.

    Returns:
        distinct terms (empty when ``changes`` is not in 1 … :func:`diacritic_rounds`); cached.
    """
    return tuple(dict.fromkeys(_spelling_terms(word, _spellings(word, changes))))


def _spelling_terms(word: str, spelled: list[str]) -> list[str]:
    """``stem(s, True)`` of each of ``spelled`` (spellings of ``word``, so of its length), in order:
    Snowball called once for all of them (one C call) and the English step once per distinct root
    (spellings often share one)."""
    if not spelled:
        return []
    roots = list(map(_turkish_root, spelled, _turkish_stemmer().stemWords(spelled))) if len(word) > 3 else spelled
    terms = {root: english_stem(root) for root in dict.fromkeys(roots)}
    return [terms[root] for root in roots]


def _spellings(word: str, changes: int) -> list[str]:
    """The spellings of ``word`` with exactly ``changes`` of its :func:`_diacritic_slots` letters written
    as Turkish letters, in alphabetical order (empty when ``changes`` is not in 1 … their number)."""
    slots = _diacritic_slots(word)
    if not 1 <= changes <= len(slots):
        return []
    spelled = []
    for chosen in combinations(slots, changes):
        chars = list(word)
        for i in chosen:
            chars[i] = _ASCII_TO_TURKISH[chars[i]]
        spelled.append("".join(chars))
    spelled.sort()
    return spelled


_BACK_VOWELS = frozenset("aıou")
_FRONT_VOWELS = frozenset("eiöü")


def harmony_breaks(word: str) -> int:
    """How many times the vowels of ``word`` switch between back (a ı o u) and front (e i ö ü): 0 for a
    word that keeps Turkish vowel harmony (``yılında``), more for one that does not (``yılinda``).

    Source: the major (palatal) vowel harmony of Turkish suffixes, A. Göksel and C. Kerslake,
    *Turkish: A Comprehensive Grammar*, Routledge 2005, §2.2.
    """
    breaks, last = 0, None
    for c in word:
        back = True if c in _BACK_VOWELS else False if c in _FRONT_VOWELS else None
        if back is not None:
            breaks += last is not None and back != last
            last = back
    return breaks


def turkish_spellings(word: str) -> list[tuple[str, str]]:
    """``(spelling, its Turkish analysis)`` for every spelling of ``word`` with Turkish letters that
    :func:`diacritic_terms` tries, in its order (fewer changed letters first, then alphabetical);
    empty for a word it does not try."""
    out = []
    for changes in range(1, diacritic_rounds(word) + 1):
        spelled = _spellings(word, changes)
        out.extend(zip(spelled, _spelling_terms(word, spelled)))
    return out


def turkish_spelling(word: str, known) -> str | None:
    """The spelling of ``word`` with Turkish letters that was meant, for a word typed without them:
    of its spellings (:func:`turkish_spellings`) whose analysis is in ``known`` (the terms an index
    holds), the one that keeps vowel harmony best (:func:`harmony_breaks`), then the first.

    Several spellings are often analysed into terms an index holds, the stem being the same
    whatever the suffix's letters or cut short by one of them (``sirasinda``: *sıras* from
    ``sırasinda``, *sıra* from ``sırasında``); the harmonic one is the word (``sırasında``,
    ``yılında`` rather than ``yılinda``).

    Args:
        word: a query word, lowercase (as :func:`query_words` gives it).
        known: a container of terms (``in`` is all it needs).

    Returns:
        the spelling, or ``None`` when no spelling of ``word`` (at most
        :data:`MAX_DIACRITIC_VARIANTS`) is analysed into a known term.
    """
    best = None  # (harmony breaks, spelling): the first of the fewest breaks
    for spelled, analysed in turkish_spellings(word):
        if analysed in known and (best is None or harmony_breaks(spelled) < best[0]):
            best = (harmony_breaks(spelled), spelled)
    return best[1] if best is not None else None


ASCII_TYPED_TURKISH_STOPWORDS = frozenset(w.translate(TURKISH_TO_ASCII) for w in TURKISH_STOPWORDS)
"""The Turkish stopwords as typed without Turkish letters (``nasil``, ``icin``, ``ne``)."""
PLAIN_TYPED_TURKISH_STOPWORDS = ASCII_TYPED_TURKISH_STOPWORDS - STOPWORDS
"""Of :data:`ASCII_TYPED_TURKISH_STOPWORDS`, those that are no stopword as typed (``icin``, ``cok``, ``degil``; not
``ne``, ``ve``): :data:`STOPWORDS` leaves them in a query, and :func:`dreamdb.ranking.rank.plan_query` leaves them out
of one it reads as Turkish."""


def _stopword_spellings() -> dict[str, str]:
    by_ascii: dict[str, set[str]] = {}
    for w in TURKISH_STOPWORDS:
        by_ascii.setdefault(w.translate(TURKISH_TO_ASCII), set()).add(w)
    return {a: next(iter(ws)) for a, ws in by_ascii.items() if len(ws) == 1 and a not in ws}


TURKISH_STOPWORD_SPELLINGS = _stopword_spellings()
"""``{typed without Turkish letters: Turkish stopword}`` for the Turkish stopwords with a Turkish letter
whose ASCII form is neither another stopword's spelling nor a stopword itself (``nasil`` → ``nasıl``;
not ``mi``, a stopword as typed, whose ``mı`` vowel harmony decides)."""


def typed_without_turkish_letters(words: list[str]) -> bool:
    """Whether folded words (:func:`raw_tokens`) read as Turkish typed on a keyboard without its
    letters: none has a Turkish letter, and more of them are Turkish stopwords so typed
    (:data:`ASCII_TYPED_TURKISH_STOPWORDS`: ``nasil``, ``hangi``) than English-only stopwords (a word that
    is both, ``once`` for *önce*, counts for neither). A few keywords (``wind turbine status``,
    ``sunucu guvenligi``) carry no such evidence and read as not.
    """
    if not TURKISH_LETTERS.isdisjoint("".join(words)):
        return False
    turkish = sum(map(ASCII_TYPED_TURKISH_STOPWORDS.__contains__, words))
    english = sum(1 for w in words if w in ENGLISH_ONLY_STOPWORDS and w not in ASCII_TYPED_TURKISH_STOPWORDS)
    return turkish > english


def english_by_function_words(words: list[str]) -> bool:
    """Whether folded words (:func:`raw_tokens`) read as English by their function words: more of them are
    English-only stopwords (:data:`ENGLISH_ONLY_STOPWORDS`; not one a Turkish stopword typed without its letters
    spells, ``once`` for *önce*) than Turkish stopwords, typed with or without Turkish letters. ``the ansible``
    does; ``uyku borcu`` (no function word) and ``taksiye binmek istiyorum`` do not."""
    english = turkish = 0
    for w in words:
        if w in ENGLISH_ONLY_STOPWORDS:
            english += w not in ASCII_TYPED_TURKISH_STOPWORDS
        elif w in TURKISH_STOPWORDS or w in ASCII_TYPED_TURKISH_STOPWORDS:
            turkish += 1
    return english > turkish


NOT_TURKISH_LETTERS = frozenset("qwx")
"""Letters the Turkish alphabet lacks (it has 29 letters: no q, w, x; TDK *Yazım Kılavuzu*): a word holding one is
not Turkish, as written or typed without its letters (``deltaxyz``, ``workflow``)."""


@lru_cache(maxsize=4096)
def diacritic_terms(word: str) -> tuple[str, ...]:
    """Turkish analyses of ``word`` as it may have been meant with Turkish letters, for a query
    typed without them (``sifrelenir`` → ``şifrelenir``).

    Every spelling that puts ç ğ ı ö ş ü where c g i o s u stand (ğ only after a vowel, as Turkish
    writes it) is analysed as Turkish; the index's vocabulary picks among them
    (:func:`dreamdb.ranking.rank.plan_query`, one :func:`diacritic_round` at a time). Spellings with
    fewer changed letters come first, then alphabetical order.

    Returns:
        distinct terms (empty for a word with a non-ASCII letter or with more than
        log2(:data:`MAX_DIACRITIC_VARIANTS`) ambiguous letters); cached per word.
    """
    return tuple(dict.fromkeys(t for n in range(1, diacritic_rounds(word) + 1) for t in diacritic_round(word, n)))


def term_frequencies(terms: list[str]) -> dict[str, int]:
    """Count terms: ``{term: term frequency}``."""
    tf: dict[str, int] = {}
    for t in terms:
        tf[t] = tf.get(t, 0) + 1
    return tf
