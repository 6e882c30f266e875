"""Query-time synonyms: a small generic built-in table plus the vault's own file.

Synonyms only expand the query for BM25F at weight 0.5 (rankScore); the raw
``score`` never sees them (SPEC §2). The vault file is
``<vault>/synonyms.txt``: one group per line, terms separated by commas,
``#`` at a line's start or after a space starts a comment (``c#`` is a term).
A query term that is an entry of a group expands to the group's other terms; an entry of several words
(``release checklist``, ``v0.5.0``) stands for its group only in a query holding all of its words
(:meth:`SynonymTable.expand_query`), and a matched group's entry of several words adds each of its words.
Entries and query terms are matched with Turkish ``ı`` read as ``i`` (:func:`match_key`).
The built-in table stays small and generic; it is never tuned on evaluation
queries.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from dreamdb.analyzer import (NOT_TURKISH_LETTERS, STOPWORDS, dotless_capitals, drop_data, fold_case, identifier_terms,
                              is_turkish_text, joined_terms, lower, normalize, query_words, stem, tokens)
from dreamdb.vault.encoding import wide_unicode_codec

VAULT_SYNONYMS_FILE = "synonyms.txt"  # (discover.SYNONYMS_FILE names it too: a link to it is no note)

BUILTIN_GROUPS: tuple[tuple[str, ...], ...] = (
    ("database", "db"),
    ("configuration", "config", "settings"),
    ("authentication", "auth", "login"),
    ("repository", "repo"),
    ("documentation", "docs"),
    ("directory", "folder"),
    ("performance", "perf"),
    ("delete", "remove"),
    ("error", "failure"),
    ("bug", "defect"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("python", "py"),
    ("kubernetes", "k8s"),
    ("environment", "env"),
    ("dependency", "dep"),
    ("message", "msg"),
    ("application", "app"),
)
"""Common software abbreviations and their expansions (generic, not vault-specific)."""


def match_key(term: str) -> str:
    """What a synonym entry's term and a query's term are matched by: the term with Turkish dotless ``ı`` read as
    ``i``. A capital ``I`` is the capital of both (Turkish ``I``/``ı``, ``İ``/``i``), and lowercasing makes it ``i``:
    ``SICAKLIK`` is the term ``sicaklik``, the entry ``sıcaklık`` the term ``sıcaklık`` (QA round 143-D F2), as tags
    and statuses are matched (:func:`dreamdb.vault.tags.tag_key`). The terms searched stay as analysed."""
    return term.replace("ı", "i")


_BACK_VOWELS, _VOWELS = frozenset("aıou"), frozenset("aıoueiöü")


def harmonic_reading(written: str, folded: str) -> str | None:
    """``folded`` (the word ``written`` lowercased) with each capital ``I`` read as Turkish vowel harmony reads it:
    ``ı`` after a back vowel (a ı o u), ``i`` after a front one; with no vowel before it, as the first other vowel
    after it (``SICAKLIK`` → ``sıcaklık``, ``HESAPLARI`` → ``hesapları``, ``TELEVIZYONLARI`` → ``televizyonları``,
    ``DRIVEN`` → ``driven``), ``ı`` where every vowel is an ``I`` (``KIZ`` → ``kız``). ``None`` when that reading is
    ``folded`` itself (no capital ``I``, or each read ``i``), or folding changed the word's length. Source: Turkish
    suffixes take the backness of the vowel before them (progressive palatal harmony, A. Göksel and C. Kerslake,
    *Turkish: A Comprehensive Grammar*, Routledge 2005, §2.2), in loanwords too (``hesap-ları``); the capital of
    ``ı`` is ``I``, which lowercasing makes ``i``."""
    if "I" not in written or len(written) != len(folded):
        return None
    chars = list(folded)
    for k, letter in enumerate(written):
        if letter != "I":
            continue
        before = next((c for c in reversed(chars[:k]) if c in _VOWELS), None)
        if before is None:
            before = next((c for w, c in zip(written[k + 1:], folded[k + 1:]) if c in _VOWELS and w != "I"), None)
        chars[k] = "ı" if before is None or before in _BACK_VOWELS else "i"
    reading = "".join(chars)
    return None if reading == folded else reading


def dotless_reading(written: str, folded: str) -> str | None:
    """A word written with a capital ``I`` read as Turkish reads it (:func:`harmonic_reading`: ``SICAKLIK`` →
    ``sıcaklık``, ``AYARLARI`` → ``ayarları``, ``HESABI`` → ``hesabı``), whose Turkish term (``sıcaklık``, ``ayar``,
    ``hesap``) matches synonym entries too (:func:`entry_terms`, :func:`dreamdb.ranking.rank.plan_query`);
    ``written``: the word as typed, ``folded``: lowercased. ``None`` when that reading is the word as folded, or holds
    a letter Turkish lacks (``WIFI``, ``EXISTENCE``). An English word in capitals reads its ``I`` as ``i`` before a
    front vowel (``DRIVEN``, ``GIVEN``, ``PIECE``: QA round 143-H F1, read ``drıven`` they expanded through the
    entries ``drive`` and ``give``), and a Turkish loanword keeps its ``ı`` suffixes (``HESAPLARI``, ``TELEFONLARI``:
    QA round 143-L F1, a test of the whole word's harmony took their group away). Where the index or the lexicon
    knows the word only as written, with ``i`` (``CABIN``, read ``cabın``, the term ``cap``), the reading is not
    matched (:func:`dreamdb.ranking.rank.dotted_words`; QA round 144-A F1)."""
    reading = harmonic_reading(written, folded)
    if reading is None or not NOT_TURKISH_LETTERS.isdisjoint(reading):
        return None
    return reading


class Entry(NamedTuple):
    """An entry of a group as :func:`entry_terms` reads it."""

    one: bool
    """The entry is one identifier (``c++``, ``TASK-7``): its items are its identifier terms, not its parts."""
    items: list[tuple[str, ...]]
    """Each word's terms (its term, then its other forms), then the identifiers it holds, duplicates left out."""
    words: list[str]
    """Its words (letter and digit runs, case folded), those the analyzer drops too."""
    stopwords: list[str]
    """Those of its words that are stopwords (:data:`dreamdb.analyzer.STOPWORDS`: the analyzer drops them)."""
    readings: tuple[tuple[str, str, str], ...] = ()
    """``(term, word, reading)`` for each term of its items that a word has only as its capital ``I`` read with ``ı``
    (:func:`dotless_reading`: ``CABIN``'s ``cap``, of ``cabın``), with the word (folded) and that reading."""

    @property
    def shortened(self) -> bool:
        """An entry of several words that the stopwords leave one word (``not working``, ``up time``): read as
        that word, it would stand for its group alone, the opposite of what it says (QA round 143-D F3), so it
        is left out."""
        return not self.one and len(self.items) == 1 and len(self.words) >= 2 and bool(self.stopwords)


@lru_cache(maxsize=1 << 15)  # (read_groups and SynonymTable read each entry: once; QA round 143-H F5, a 5,000-line
def entry_terms(text: str) -> Entry:  # file took 0.9 s to load, 0.35 s before the reasons; the Entry is shared: read it)
    """An entry of a group as the query reads it (:class:`Entry`): ``one`` when the entry is one identifier
    (``c++``, ``TASK-7``: its items are its identifier terms, not its parts), and ``items`` each word's terms
    otherwise, then the identifiers it holds (``v0.5.0``'s ``0.5.0``), duplicates left out; and its words, with
    the stopwords among them.

    A word is read as a query reads a word typed in lowercase (:func:`dreamdb.analyzer.query_words`), whatever its
    case: read as a document, a capitalised word of a Turkish entry was a name and not stemmed (``Dağıtım`` →
    ``dağıtım``, while the query's ``dağıtım`` is ``dağıt``), and the entry matched no query (QA round 141-A F1);
    :func:`dreamdb.ranking.rank.plan_query` gives the expansion a capitalised query word read that way too. A word of
    a Turkish entry is also its term as written (``sürüm``: the term ``sür``, and ``sürüm``), the term Snowball
    Turkish gives its inflected forms (``sürümler``, ``sürümleri``), as ranking counts a Turkish word's two forms as
    one (:func:`dreamdb.ranking.rank.other_forms`; QA round 141-A F2). A word written with a capital ``I`` is also its
    Turkish term read with ``ı`` (:func:`dotless_reading`: ``KAPALI`` is the term ``kapali``, and
    ``kapal``, the query ``kapalı``'s), as documents index it (QA round 143-D F2); such a term is one of its
    ``readings`` too, matched only where the word is not to be read as written (:meth:`SynonymTable.expand_query`)."""
    whole = identifier_terms(fold_case(text)) + joined_terms(normalize(text))  # c++, 0.5.0, session_id
    written = drop_data(normalize(text))
    folded = lower(dotless_capitals(written))  # (as plan_query folds a query)
    words = tokens(folded, data_dropped=True)
    stopwords = [w for w in words if w in STOPWORDS]
    # (QA round 79 F12) an identifier that is the whole entry is not its parts: `task-7, t7` grouped task too
    # (128-A F3); one that is part of it (TASK-7.5's 7.5, v0.5.0's 0.5.0) is not the entry alone (129-A F1)
    # (a name numbered with a hyphen is its term without it: TASK-7 is task7, numbered_terms; written with U+2010 or
    # U+2011 too, which fold_case makes U+2010: TASK‐7, v1‐2, 154-A F6)
    one = fold_case(text).strip().replace("\u2010", "-")
    if one in whole or (one.count("-") == 1 and one.replace("-", "") in whole):
        return Entry(True, [(t,) for t in dict.fromkeys(whole)], words, stopwords)
    turkish = is_turkish_text(words)
    # a word written with a capital I read with ı too, as documents and queries are (`KAPALI`: kapalı's term kapal);
    # a term only that reading gives is one of the entry's readings (`CABIN`'s cap: QA round 144-A F1)
    dotless = {w: r for w, o in zip(words, tokens(written, data_dropped=True))
               if (r := dotless_reading(o, w)) is not None}
    items, readings = [], []
    for t, w, _cap in query_words(folded, turkish, words, words):
        own = (t, w) if turkish and t != w else (t,)
        if w in dotless and (d := stem(dotless[w], True)) not in own:
            own += (d,)
            readings.append((d, w, dotless[w]))
        items.append(own)
    return Entry(False, list(dict.fromkeys(items + [(t,) for t in whole])), words, stopwords,
                 tuple(dict.fromkeys(readings)))


class SynonymTable:
    """Maps an analyzed term to the analyzed terms of its groups, matched by :func:`match_key`; an entry the
    stopwords shorten to one word (:attr:`Entry.shortened`) is left out.

    Args:
        groups: iterable of term groups (raw text; analyzed here).
        problem: what recall says about the vault's file (not read, or lines of it not used; ``None``: none).
    """

    def __init__(self, groups, problem: str | None = None) -> None:
        self.problem = problem
        # term → the groups holding it: memory linear in the groups' sizes (a set of the other terms per
        # term grew with the square of a group's size: 5,000 words took 2.6 GB, QA round 42); a group is its
        # words' terms (entry_terms' items: a word's term, then its other form), and adds each word's term
        self._groups: list[tuple[tuple[str, ...], ...]] = []
        self._keys: list[tuple[frozenset[str], ...]] = []  # each group's items as match_key reads them
        self._of: dict[str, list[int]] = {}  # (keys: match_key's)
        # an entry of several words (each term of its first word → its words' terms, its group): `release
        # checklist, shipping` made checklist alone a synonym of releas and ship, and `sqlite, sql lite` sql one of
        # lite (QA round 140-A F2)
        self._phrases: dict[str, list[tuple[tuple[frozenset[str], ...], int]]] = {}
        # a key a group holds only as an entry's word typed with a capital I read with ı (Entry.readings) → (the
        # group, that word, its reading): not matched where the word is read as written (expand_query's dotted)
        self._read: dict[str, list[tuple[int, str, str]]] = {}
        for group in groups:
            words, alone, phrases, read, plain = [], [], [], {}, set()
            for text in group:
                entry = entry_terms(text)
                if entry.shortened:  # (`not working` is not `working`: QA round 143-D F3)
                    continue
                words.extend(entry.items)
                (alone if entry.one or len(entry.items) < 2 else phrases).append(entry.items)
                only_read = {t for t, _w, _r in entry.readings}
                plain.update(match_key(t) for item in entry.items for t in item if t not in only_read)
                read.update((match_key(t), (w, r)) for t, w, r in entry.readings)
            uniq = tuple(dict.fromkeys(words))
            if len({match_key(item[0]) for item in uniq}) < 2:
                continue
            for k, (w, r) in read.items():
                if k not in plain:
                    self._read.setdefault(k, []).append((len(self._groups), w, r))
            for k in dict.fromkeys(match_key(t) for items in alone for item in items for t in item):
                self._of.setdefault(k, []).append(len(self._groups))
            for items in phrases:
                parts = tuple(frozenset(map(match_key, item)) for item in items)
                for k in parts[0]:
                    self._phrases.setdefault(k, []).append((parts, len(self._groups)))
            self._groups.append(uniq)
            self._keys.append(tuple(frozenset(map(match_key, item)) for item in uniq))

    def expand(self, term: str, dotted=frozenset()) -> set[str]:
        """Synonym terms of ``term`` (empty set if none): the other terms of the groups it is an entry of by
        itself (an entry of several words is matched by :meth:`expand_query`), both read by :func:`match_key`;
        not through a word of ``dotted`` read with ``ı`` (:meth:`expand_query`)."""
        key = match_key(term)
        off = {g for g, w, _r in self._read.get(key, ()) if w in dotted} if dotted else ()
        found: set[str] = set()
        for g in self._of.get(key, ()):  # (not its own other form)
            if g not in off:
                found.update(item[0] for item, keys in zip(self._groups[g], self._keys[g]) if key not in keys)
        return {t for t in found if match_key(t) != key}

    def readings(self, terms) -> list[tuple[str, str]]:
        """``(word, reading)`` for each entry's word typed with a capital ``I`` that one of ``terms`` matches only as
        that ``I`` read with ``ı`` (:attr:`Entry.readings`: the term ``cap`` matches ``CABIN`` only read ``cabın``),
        for :meth:`expand_query`'s ``dotted``."""
        return list(dict.fromkeys((w, r) for k in dict.fromkeys(map(match_key, terms))
                                  for _g, w, r in self._read.get(k, ())))

    def expand_query(self, terms, dotted=frozenset()) -> list[str]:
        """Synonym terms of a query's ``terms``, none of them: each term's :meth:`expand` (sorted), then the
        terms of each group with an entry of several words all of which the query holds, a word by any of its
        terms (``release checklist`` in ``checklist for the release``), but a word's term when the query holds
        another of its terms; terms read by :func:`match_key`. An entry's word typed with a capital ``I`` that is in
        ``dotted`` (folded: words to read as written, with ``i``, :func:`dreamdb.ranking.rank.dotted_words`) is not
        matched by the term of its reading with ``ı`` (:meth:`readings`; QA round 144-A F1: ``CABIN, hut`` made ``cap``
        a synonym of ``hut``)."""
        held = set(map(match_key, terms))
        off = {(g, k) for k in held for g, w, _r in self._read.get(k, ()) if w in dotted} if dotted else set()
        found: dict[str, None] = {}
        for t in terms:
            found.update(dict.fromkeys(sorted(self.expand(t, dotted))))
        for k in dict.fromkeys(map(match_key, terms)):
            for words, g in self._phrases.get(k, ()):
                here = held.difference(h for f, h in off if f == g) if off else held
                if all(not here.isdisjoint(word) for word in words):
                    found.update(dict.fromkeys(sorted(item[0] for item, keys in zip(self._groups[g], self._keys[g])
                                                      if held.isdisjoint(keys))))
        return [s for s in found if match_key(s) not in held]

    def __len__(self) -> int:
        return len(self._of)


MAX_SYNONYMS_BYTES = 1 << 20
"""Largest ``synonyms.txt`` read (1 MiB): a vault's own groups are a few hundred lines, a few KB; a larger
file (a log pasted by mistake, a link to a device) would cost every query seconds (QA round 40: 12 MB,
30 s a recall)."""


class SynonymsFileRefused(Exception):
    """``synonyms.txt`` is not read: the message says why."""


class SynonymsNotText(SynonymsFileRefused):
    """``synonyms.txt`` is a small file of the vault but not text it can read (not UTF-8, binary): the message says
    how to save it (QA round 140-A F4: it was told to be a small text file in the vault, which it is)."""


def _read_text(path: Path, vault_real: str | None) -> str:
    """The file's text (UTF-8, or UTF-16 with a byte-order mark), read only if it is a regular file of at most
    :data:`MAX_SYNONYMS_BYTES` whose real path lies inside the vault (a link to a note of the vault is
    fine, one to ``/etc/passwd`` or a FIFO is not: it would be read, or hang, on every query).

    Raises:
        FileNotFoundError: no such file.
        SynonymsFileRefused: not read, and why.
        SynonymsNotText: not UTF-8 text (nor UTF-16 or UTF-32 with its byte-order mark).
        OSError: it could not be read.
    """
    real = os.path.realpath(path)
    if vault_real is not None and os.path.commonpath([vault_real, real]) != vault_real:
        raise SynonymsFileRefused(f"{path} links outside the vault (to {real})")
    # O_NONBLOCK: a FIFO put there is not waited on (its type is checked on the open file, not before it)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SynonymsFileRefused(f"{path} is not a regular file")
        if st.st_size > MAX_SYNONYMS_BYTES:
            raise SynonymsFileRefused(f"{path} has {st.st_size:,} bytes, over the {MAX_SYNONYMS_BYTES:,} read")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(MAX_SYNONYMS_BYTES + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > MAX_SYNONYMS_BYTES:  # grew since fstat
        raise SynonymsFileRefused(f"{path} has over {MAX_SYNONYMS_BYTES:,} bytes")
    # (UTF-16 or UTF-32 with its byte-order mark, as a Windows editor saves it, is read; other text that is not UTF-8 is said,
    # not read as replacement characters that match nothing: QA round 78-A F3)
    codec = wide_unicode_codec(data)  # (UTF-32's first: QA 79 F8)
    if codec:
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            raise SynonymsNotText(f"{path} starts with a {codec.upper()} byte-order mark but is not"
                                      f" {codec.upper()} text; save it as UTF-8") from None
    if b"\0" in data:
        raise SynonymsNotText(f"{path} looks binary (it holds NUL bytes), not UTF-8 text; save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SynonymsNotText(f"{path} is not UTF-8 text (byte {exc.start:,} cannot be read); save it as UTF-8")


_COMMENT = re.compile(r"(?:^|(?<=\s))#")
"""Where a comment starts: a ``#`` at the line's start or after white space (``c#`` is a language's name)."""

_WORD = re.compile(r"[^\W_]+")
"""A run of letters or digits: how a line's words are counted (``-``, ``_``, ``/`` and spaces part them,
as the analyzer's tokens)."""

MAX_GROUP_TERMS = 64
"""Most words one line of ``synonyms.txt`` may hold to be used: a synonym group is a few words of one meaning;
a line of many more is a list pasted by mistake, and each of its words would expand a query into all the
others (QA round 42: 3,000 words on a line, 1.5 s and 410 MB a recall)."""


_LINE_END = re.compile(r"\r\n|\r|\n")
"""Where a line of ``synonyms.txt`` ends, as an editor reads it: CR LF (Windows), LF, or a lone CR (classic Mac
OS: QA round 143-D F4, its lines were one group). A form feed or U+2028 inside a line does not end it (QA round
141-A F5)."""

UNUSED_LINES = {
    "no comma": "one term, no synonym (a line's terms are separated by commas)",
    "one term": "one term, no synonym",
    "no term": "no term",
    "dropped": "fewer than two terms once the analyzer drops its stopwords and one-letter words (`not`, `the`, `up`)",
    "same term": "its entries are one term as the analyzer reads them (`release, releases`: one stem; case, and"
                 " Turkish ı for i, do not count)",
}
"""Why a line of ``synonyms.txt`` is not used (its kind in :func:`read_groups`'s ``unused``, from
:func:`_unused_kind`), as recall says it."""

SHORTENED_ENTRIES = ("an entry of several words that the analyzer's stopwords leave one word is left out (`not working`"
                     " would stand for `working`); a line left with fewer than two terms is not used")
"""What recall says of the lines in :func:`read_groups`'s ``shortened`` (:attr:`Entry.shortened`)."""


def _unused_kind(line: str, entries: list[Entry]) -> str | None:
    """Why a line of ``synonyms.txt`` whose entries read as ``entries`` (:func:`entry_terms`) is no group (a key of
    :data:`UNUSED_LINES`), or ``None`` when it is one: two entries or more with terms, of two terms or more
    (:func:`match_key`'s). ``line``: the line as written, its comment too (a comma there is a comma typed). The
    kind is what the analyzer made of each entry: no entry with a letter or digit is ``no term`` (``, ,``,
    ``;;; , ---``); an entry whose words the analyzer drops all is ``dropped`` (``not, negation``); entries that
    all read as one term, ``same term`` (``foo, FOO``, ``release, releases``); else one entry has terms, ``one
    term`` (``foo,``), or ``no comma`` when the line has none (``sql lite``). QA round 143-D F1: the kind was
    told from the number of commas, and ``foo, foo`` sent the reader to look for stopwords."""
    termed = [e for e in entries if e.items]
    if len(termed) >= 2 and len({match_key(item[0]) for e in termed for item in e.items}) >= 2:
        return None
    if not any(e.words or e.items for e in entries):
        return "no term"
    if any(e.words and not e.items for e in entries):
        return "dropped"
    if len(termed) >= 2:
        return "same term"
    return "one term" if "," in line else "no comma"


def read_groups(path: Path, vault: Path | None = None, skipped: list | None = None,
                hashed: list | None = None, unused: dict | None = None,
                shortened: list | None = None) -> list[list[str]]:
    """Parse a synonyms file: one group per line, terms separated by commas; ``#`` at the line's start or after
    a space or tab starts a comment (so ``c#`` and ``f#`` can be named: ``csharp, c#``).

    A missing or unreadable file has no groups. With ``vault``, the file must lie inside it (after links).
    A line of over :data:`MAX_GROUP_TERMS` words is not used; its line number goes to ``skipped``. A line with a
    term holding a ``#`` that names no identifier (``rest#TODO``: a comment once, before ``c#`` could be named)
    is used as written, and its number goes to ``hashed``. An entry of a line of several entries that the stopwords
    shorten to one word (``not working``: :attr:`Entry.shortened`) is left out of its group, and the line's number
    goes to ``shortened``. A line that is otherwise no group goes to ``unused`` under its kind (:data:`UNUSED_LINES`,
    :func:`_unused_kind`): one term and no comma (``sql lite``), one term (``foo,``), no term (``, ,``), fewer
    than two terms as the analyzer reads them (``not, negation``: ``not`` is a stopword), or entries of one term
    (``release, releases``). Lines are counted as an editor counts them (:data:`_LINE_END`: at each CR LF, LF or
    lone CR).

    Raises:
        SynonymsFileRefused: the file is not a regular file, is larger than :data:`MAX_SYNONYMS_BYTES`, or
            links outside ``vault``; :class:`SynonymsNotText`: it is not text.
    """
    try:
        text = _read_text(path, os.path.realpath(vault) if vault is not None else None)
    except SynonymsFileRefused:
        raise
    except (OSError, ValueError):
        return []
    groups = []
    for number, written in enumerate(_LINE_END.split(text), 1):
        line = _COMMENT.split(written, 1)[0].strip()
        if line:
            group = [t.strip() for t in line.split(",") if t.strip()]
            if len(_WORD.findall(line)) > MAX_GROUP_TERMS:  # words, also within one term (w0-w1-…: QA 43, 44)
                if skipped is not None:
                    skipped.append(number)
            else:  # (as SynonymTable reads it: a line of stopwords was dropped unsaid, 141-A F3)
                entries = [entry_terms(t) for t in group]
                cut = len(group) >= 2 and any(e.shortened for e in entries)
                if cut:
                    group = [t for t, e in zip(group, entries) if not e.shortened]
                    entries = [e for e in entries if not e.shortened]
                    if shortened is not None:
                        shortened.append(number)
                kind = _unused_kind(written, entries)
                if kind is None:
                    groups.append(group)
                elif unused is not None and not cut:
                    unused.setdefault(kind, []).append(number)
            if hashed is not None and any("#" in t and not identifier_terms(fold_case(t)) for t in group):
                hashed.append(number)
    return groups


_cache: dict[str, tuple[tuple[int, int], SynonymTable]] = {}


def load_synonyms(vault: Path | None) -> SynonymTable:
    """Built-in groups plus ``<vault>/synonyms.txt`` (re-read when the file's mtime, size or ctime changes)."""
    ck = os.path.join(vault, VAULT_SYNONYMS_FILE) if vault else ""
    broken = None  # a link to nothing is said, not passed over in silence (QA round 41)
    try:
        # (lstat first: a vault without the file, the usual case, costs one system call where a failed stat and
        # islink's lstat cost two; a file that is not a link has the very stat stat would give)
        entry = os.lstat(ck) if ck else None
    except OSError:
        entry = None  # (nothing there, not even a link)
    try:
        st = os.stat(ck) if entry is not None and stat.S_ISLNK(entry.st_mode) else entry
        key = (st.st_mtime_ns, st.st_size, st.st_ctime_ns) if st else (0, 0, 0)
    except OSError as exc:
        key = (0, 0, 0)
        if os.path.islink(ck):
            target = os.readlink(ck)
            key = (-1, hash(target), 0)
            broken = (f"{ck} is a link to {target}, which "
                      + ("leads in a loop" if exc.errno == errno.ELOOP else "does not exist"))
    hit = _cache.get(ck)
    if hit and hit[0] == key:
        return hit[1]
    path = Path(ck) if ck else None
    groups, problem = [], None
    if broken:
        problem = f"{broken}; its synonyms are not used"
    elif path and key != (0, 0, 0):
        skipped: list[int] = []
        hashed: list[int] = []
        unused: dict[str, list[int]] = {}
        shortened: list[int] = []
        try:
            groups = read_groups(path, vault, skipped, hashed, unused, shortened)
        except SynonymsNotText as exc:
            problem = f"{exc}; its synonyms are not used"
        except SynonymsFileRefused as exc:
            problem = f"{exc}; its synonyms are not used (make it a small text file in the vault)"
        said = []  # each kind of line said, not only the last (QA round 140-A F3)
        for numbers, what in (
                (hashed, ": a # inside a term is read as part of it (a comment starts with # at a line's start or"
                         " after a space: `rest # note`)"),  # (QA round 50: words after a # written without a
                # space became synonyms without a word)
                (skipped, f" not used: over {MAX_GROUP_TERMS} words (a line is one group of words meaning the same)"),
                (shortened, f": {SHORTENED_ENTRIES}"),
                *((unused.get(kind), f" not used: {why}") for kind, why in UNUSED_LINES.items())):
            if numbers:
                lines = ", ".join(map(str, numbers[:5])) + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")
                said.append(f"line{'s' if len(numbers) > 1 else ''} {lines}{what}")
        if said:
            problem = f"{path}: " + "; ".join(said)
    table = SynonymTable([*BUILTIN_GROUPS, *groups], problem)
    _cache[ck] = (key, table)
    return table
