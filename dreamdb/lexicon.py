"""A Turkish–English dictionary for cross-language recall, built from KeNet.

A Turkish question over English notes shares few words with them: BM25 needs
the English word. :func:`dreamdb.ranking.rank.plan_query` already turns a
Turkish loanword into its English spelling (``konsolidasyon`` →
*consolidation*); this module supplies the rest of the vocabulary: the
interlingual links of KeNet, the Turkish WordNet (Bakay et al., "Turkish
WordNet KeNet", Global WordNet Conference 2021), whose 23,000 Turkish synsets
point to their English WordNet 3.1 synsets (``uyku`` → *sleep, nap,
slumber*). The same links read backwards give the English → Turkish side.

The data ships in the PyPI package ``NlpToolkit-WordNet`` (GPL-3.0; the
``lexicon`` extra installs it). dreamdb does not redistribute it:
``dreamdb lexicon build`` reads the two XML files of the installed package
once (about 10 s) and writes a SQLite file (about 8 MB) into the user data folder,
which recall then reads, a few lookups per query, only for query words that
are in no note.

The file holds words as written (``uyku``), apart as dreamdb's analyzer stems
them (``citi`` for *city*, which *cities* also gives), and Turkish words apart
as typed without their letters (``guvenlik``), each with its translations in
order: the Turkish word's senses in KeNet's order, then the English synset's
words in WordNet's order (most frequent first), after the senses of the words
of software work that :mod:`dreamdb.glossary` lists (``sürüm``: *version*
before KeNet's *circulation*). Translations are stored as
words and as their terms, tagged with the analyzer version that made them: a
file built by another version is analysed at lookup time, so an analyzer change
never leaves stale terms. A change of the layout or of the key stems bumps
:data:`LEXICON_FORMAT`, and :func:`lexicon_status` then says to rebuild.

Resolution of the file: ``DREAMDB_LEXICON`` (a path, or ``off``), else
``<user data dir>/lexicons/kenet-tr-en.sqlite``.
"""

from __future__ import annotations

import errno
import functools
import os
import sqlite3
import stat
import time
from pathlib import Path

from dreamdb.errors import LexiconError, NotFound, UsageError, WriteRefused
from dreamdb.extras import dreamdb_command, install_command
from dreamdb.glossary import COMPUTING_TR_EN, GLOSSARY_VERSION

ENV_LEXICON = "DREAMDB_LEXICON"
"""Environment variable: the lexicon file to use, or ``off`` (also ``0``, ``no``, ``false``) for none."""

FILE_NAME = "kenet-tr-en.sqlite"
"""File name of the built lexicon in ``<user data dir>/lexicons/``."""

LEXICON_FORMAT = 3
"""Version of the file's layout and key stems; a file of another version is not used (rebuild it)."""

SOURCE_PACKAGE = "NlpToolkit-WordNet"
"""The PyPI distribution holding KeNet's XML files (module ``WordNet.data``)."""

TURKISH_FILE = "turkish_wordnet.xml"
ENGLISH_FILE = "english_wordnet_version_31.xml"

TR_EN, EN_TR = "tr-en", "en-tr"
"""The two directions of :meth:`Lexicon.translations`."""

VERB_ENDINGS = ("mak", "mek")
"""Turkish infinitive endings: KeNet lists a verb as ``hesaplamak``; its root ``hesapla`` is kept as a
word too (after the words KeNet lists, so ``yaz`` the season comes before ``yazmak``'s root)."""

VERB_ROOT_LETTERS = 3
"""Shortest verb root kept as a word."""

STEMMED = " stem"
"""Suffix of a direction's table keyed by dreamdb's stems of the words (``tr-en stem``)."""

ASCII = " ascii"
"""Suffix of the Turkish → English table keyed by the words with their Turkish letters typed as plain
ones (``guvenlik`` for *güvenlik*, ``ı`` as ``i``: :data:`_PLAIN_LETTERS`)."""

MAX_TRANSLATIONS = 24
"""Translations kept per word and direction (the most frequent senses come first)."""

PRELOAD_AFTER_SECONDS = 0.2
"""Time spent in lookup statements (s) after which a process reads the whole lexicon into memory
(:meth:`Lexicon.preload`). It is about what that read costs (0.20 s for KeNet's 93,000 keys on our
2-core machine): the rule of the ski-rental problem (rent until the rent paid equals the price), so
a process never spends more than twice what the better choice in hindsight would have cost. A
one-query process (the CLI, a prompt hook) never pays for the read; a server or an evaluation pays
it once, after which a lookup is a dict access instead of a statement (≈ 50 µs)."""

_PLAIN_LETTERS = str.maketrans("çğıöşüâîû", "cgiosuaiu")
"""Turkish letters as typed on a keyboard without them."""

_OFF = frozenset({"off", "0", "no", "false", "none"})


def default_lexicon_path() -> Path:
    """``<user data dir>/lexicons/kenet-tr-en.sqlite`` (may not exist)."""
    from dreamdb.embeddings.locate import user_data_root

    return user_data_root() / "lexicons" / FILE_NAME


def lexicon_path() -> Path | None:
    """The lexicon file recall uses: ``DREAMDB_LEXICON`` if set (``None`` when it says ``off``), else
    :func:`default_lexicon_path`. The file may not exist. (Worked out once per value of the variables
    it depends on: recall asks on every query.)"""
    return _lexicon_path(os.environ.get(ENV_LEXICON, "").strip(), os.environ.get("XDG_DATA_HOME"),
                         os.environ.get("HOME"))


@functools.lru_cache(maxsize=8)
def _lexicon_path(env: str, _data_home, _home) -> Path | None:
    if env.lower() in _OFF and env:
        return None
    from dreamdb.config import expand_user

    return expand_user(env) if env else default_lexicon_path()


def source_dir() -> Path | None:
    """The folder of the installed ``NlpToolkit-WordNet`` XML files, or ``None`` when it is not installed."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("WordNet")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        data = Path(folder) / "data"
        if (data / TURKISH_FILE).is_file() and (data / ENGLISH_FILE).is_file():
            return data
    return None


def _source_version() -> str:
    from importlib import metadata

    try:
        return metadata.version(SOURCE_PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"


def read_kenet(data_dir: str | os.PathLike, *, hint: str | None = None) -> list[tuple[str, int, int, str, int]]:
    """Read KeNet's interlingual synonym links.

    Only one-word entries on both sides are kept (``sleep``, not *body of water*): a query word
    stands for one term.

    Args:
        data_dir: the folder holding ``turkish_wordnet.xml`` and ``english_wordnet_version_31.xml``.
        hint: what the error tells to do (default: reinstall the package).

    Returns:
        ``[(turkish word, its sense number, its place in its synset, english word, its place in its
        synset)]``, each link once, in the files' order. KeNet numbers a word's common senses first;
        WordNet lists a synset's most frequent word first.

    Raises:
        LexiconError: a file is missing or is not KeNet's XML.
    """
    import xml.etree.ElementTree as ET

    data = Path(data_dir)
    links: list[tuple[str, int, int, str]] = []  # (turkish word, sense, place, english synset id)
    wanted: set[str] = set()
    try:
        for _event, el in ET.iterparse(data / TURKISH_FILE):
            if el.tag != "SYNSET":
                continue
            ids = [i.text.strip() for i in el.findall("ILR")
                   if i.text and (i.findtext("TYPE") or "").strip() == "SYNONYM"]
            if ids:
                for place, lit in enumerate(el.findall("SYNONYM/LITERAL")):
                    word = (lit.text or "").strip()
                    if word and " " not in word:
                        sense = int((lit.findtext("SENSE") or "99").strip() or 99)
                        links.extend((word, sense, place, i) for i in ids)
                wanted.update(ids)
            el.clear()
        english: dict[str, list[str]] = {}
        for _event, el in ET.iterparse(data / ENGLISH_FILE):
            if el.tag != "SYNSET":
                continue
            sid = (el.findtext("ID") or "").strip()
            if sid in wanted:
                english[sid] = [(lit.text or "").strip() for lit in el.findall("SYNONYM/LITERAL")]
            el.clear()
    except (OSError, ET.ParseError, ValueError) as exc:
        raise LexiconError(f"Cannot read KeNet's data in {data}: {exc}",
                           hint=hint or f"Reinstall it: pip install --force-reinstall {SOURCE_PACKAGE}") from exc
    if not links or not english:  # (QA round 68 L9: an empty English file was blamed on the Turkish one)
        raise LexiconError(f"No interlingual links found in {data / TURKISH_FILE}" if not links else
                           f"None of the English synsets {data / TURKISH_FILE} links to is in {data / ENGLISH_FILE}",
                           hint=hint or f"Is this {SOURCE_PACKAGE}'s data folder? Reinstall it.")
    return [(tr, sense, place, en, n) for tr, sense, place, sid in links
            for n, en in enumerate(english.get(sid, ())) if en.isalpha()]


def _table(pairs, key_of, limit: int) -> dict[str, list[str]]:
    """``{key_of(source word): [translation, …]}`` from ``(source word, translation)`` pairs in order:
    translations deduplicated in order, at most ``limit`` a key."""
    table: dict[str, dict[str, None]] = {}
    for src, dst in pairs:
        row = table.setdefault(key_of(src), {})
        if len(row) < limit:
            row.setdefault(dst, None)
    return {k: list(v) for k, v in table.items()}


class SourceNotFound(NotFound, UsageError):
    """:func:`build_lexicon`'s ``source`` folder is not there or lacks KeNet's files: not found, exit 7, as a
    ``--from`` folder that is not there and ``model install --from`` of a folder without tokenizer.json (QA round
    152-F F5: exit 2); a :class:`~dreamdb.errors.UsageError` too, as it was raised before."""


def build_lexicon(dest: str | os.PathLike | None = None, source: str | os.PathLike | None = None,
                  announce=None) -> dict:
    """Build the lexicon file from KeNet's XML (see the module docstring); atomic (temp file + rename).

    Args:
        dest: the file to write (a symlink is written through); default :func:`lexicon_path`.
        source: KeNet's data folder; default the installed ``NlpToolkit-WordNet`` package's.
        announce: called with no argument once the destination is checked, before the reading starts.

    Returns:
        ``{"path", "tr_en" (keys), "en_tr" (keys), "links", "seconds", "source", "source_version"}``.

    Raises:
        LexiconError: the source package is not installed, or its data cannot be read.
        SourceNotFound: ``source`` is no folder or lacks KeNet's files (a NotFound, exit 7, and still a UsageError).
        UsageError: ``dest`` is a folder or a file that is not a lexicon (see
            :func:`writable_target`), or ``DREAMDB_LEXICON`` is off and no ``dest`` is given.
    """
    from dreamdb.analyzer import lower, stem

    started = time.perf_counter()
    data = Path(source) if source is not None else source_dir()
    if data is None:
        raise LexiconError(f"KeNet's data is not installed (PyPI package {SOURCE_PACKAGE})",
                           hint=f"Run: {install_command('lexicon')}  then: {dreamdb_command()} lexicon build")
    if dest is None and lexicon_path() is None:
        raise UsageError(f"{ENV_LEXICON} switches the lexicon off, so there is no file to build",
                         hint=f"Give one with --to FILE (or {ENV_LEXICON}=FILE), or unset {ENV_LEXICON}.")
    target = writable_target(Path(dest) if dest is not None else lexicon_path())
    hint = ("Is this KeNet's data folder (turkish_wordnet.xml, english_wordnet_version_31.xml)?" if source is not None
            else f"Reinstall it: pip install --force-reinstall {SOURCE_PACKAGE}")
    missing = [name for name in (TURKISH_FILE, ENGLISH_FILE) if not (data / name).is_file()]
    # a folder given by hand that is not there, or lacks KeNet's files: not found (exit 7, as a missing --from folder
    # and model install --from of a folder without tokenizer.json; QA round 152-F F5: exit 2 here, 8 there), said
    # before the 10 s read starts
    if source is not None and not data.is_dir():
        raise SourceNotFound(f"No folder at {data}", hint=hint)
    if source is not None and missing:
        raise SourceNotFound(f"{data} is not KeNet's data folder: no {' or '.join(missing)} in it", hint=hint)
    if announce is not None:
        announce()
    # the glossary's senses of the words of software work first (sense -1: before KeNet's), then KeNet's
    links = [(tr, -1, 0, en, n) for tr, ens in COMPUTING_TR_EN for n, en in enumerate(ens)]
    links += read_kenet(data, hint=hint)
    # Turkish → English: the Turkish word's senses in order, each synset's English words in order.
    by_turkish = sorted((lower(tr), sense, en_place, en.lower()) for tr, sense, _p, en, en_place in links)
    pairs = [(tr, en) for tr, _s, _n, en in by_turkish]
    # a verb is listed by its infinitive (hesaplamak); a query has its root and suffixes (hesaplanıyor)
    pairs += [(tr[:-3], en) for tr, en in pairs if tr.endswith(VERB_ENDINGS) and len(tr) - 3 >= VERB_ROOT_LETTERS]
    by_word = _table(pairs, str, MAX_TRANSLATIONS)
    # the Turkish words typed without their letters (guvenlik), first words first
    typed = [(w, t) for w, ts in by_word.items() if w != w.translate(_PLAIN_LETTERS) for t in ts]
    tr_en = (by_word, _table(pairs, lambda w: stem(w, True), MAX_TRANSLATIONS),
             _table(typed, lambda w: w.translate(_PLAIN_LETTERS), MAX_TRANSLATIONS))
    # English → Turkish: first the Turkish words of whom this is the commonest sense, then by their
    # place in their synset (KeNet lists a synset's usual word first).
    by_english = sorted((en.lower(), sense, place, lower(tr)) for tr, sense, place, en, _n in links)
    en_pairs = [(en, tr) for en, _s, _p, tr in by_english]
    en_tr = (_table(en_pairs, str, MAX_TRANSLATIONS), _table(en_pairs, lambda w: stem(w, False), MAX_TRANSLATIONS))
    meta = {"format": str(LEXICON_FORMAT), "source": SOURCE_PACKAGE, "source_version": _source_version(),
            "links": str(len(links)), "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    meta["analyzer_version"] = terms_version()
    meta["glossary_version"] = GLOSSARY_VERSION
    rows = [(direction + suffix, k, "\t".join(v), "\t".join(analysed_translations(v, direction == EN_TR)))
            for direction, tables in ((TR_EN, tr_en), (EN_TR, en_tr))
            for suffix, table in zip(("", STEMMED, ASCII), tables) for k, v in table.items()]
    _write_atomic(target, meta, rows)
    _OPENED.clear()
    return {"path": str(target), "tr_en": len(tr_en[0]), "en_tr": len(en_tr[0]), "links": len(links),
            "seconds": round(time.perf_counter() - started, 2), "source": SOURCE_PACKAGE,
            "source_version": meta["source_version"]}


def writable_target(path: Path) -> Path:
    """The file a build may write for ``path`` (a symlink is written through), its folder created.

    Raises:
        UsageError: ``path`` is a folder.
        WriteRefused: ``path`` is a file that is not a lexicon (a mistyped path must not replace a note, an index
            or a device; exit 6, as ``model build --dest`` refuses a folder of other files: QA round 65 L8), or it
            cannot be written there (its name, its folder: exit 6 as the model's).
    """
    target = Path(os.path.realpath(path))
    try:
        target.lstat()
    except (FileNotFoundError, NotADirectoryError):
        pass  # (a new file; a file where its folder should be: the folder's creation says so below)
    except OSError as exc:  # a name too long, a folder that cannot be searched (QA round 68 H1: exit 70; exit 6 as
        raise WriteRefused(f"Cannot write the lexicon to {path}: {exc.strerror or exc}",  # every refused path: 116-A F8)
                           hint=f"Choose a writable path with --to FILE or {ENV_LEXICON}=FILE") from None
    if target.is_dir():
        raise UsageError(f"{path} is a folder", hint=f"Give the lexicon file's path, e.g. {path}/{FILE_NAME}")
    if os.path.lexists(target):
        if not target.is_file():
            raise WriteRefused(f"{path} exists and is not a regular file: it is never replaced",
                             hint=f"Give a new file's path (e.g. …/{FILE_NAME}).")
        if target != Path(os.path.realpath(default_lexicon_path())) and not _is_lexicon_file(target):
            raise WriteRefused(f"{path} exists and is not a dreamdb lexicon: it is never replaced",
                             hint=f"Give a new file's path (e.g. …/{FILE_NAME}), or, if it is a damaged "
                                  "lexicon, delete it first.")
    from dreamdb.config import SQLITE_MAX_PATH_BYTES, sqlite_path_problem

    tmp = _temp_path(target)
    too_long = sqlite_path_problem(tmp)  # (SQLite builds it there: QA round 143-B F1)
    if too_long is not None:
        over = len(os.fsencode(os.path.realpath(tmp))) - SQLITE_MAX_PATH_BYTES
        raise WriteRefused(f"Cannot write the lexicon to {path}: SQLite cannot open the file it is built in beside it"
                           f" ({tmp.name}): {too_long}",
                           hint=f"Choose a path at least {over} bytes shorter with --to FILE or {ENV_LEXICON}=FILE")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # (refused as the model's folder is, exit 6, naming the file on the way: QA round 114-B F9)
        from dreamdb.config import file_on_the_way

        blocking = file_on_the_way(target.parent)
        why = f"{blocking} is a file, not a folder" if blocking is not None else exc.strerror or exc
        raise WriteRefused(f"Cannot create the folder {target.parent}: {why}",
                           hint=f"Choose a writable path with --to FILE or {ENV_LEXICON}=FILE") from None
    probe = _temp_path(target)
    try:  # before the 10 s of reading: can a file be written beside it?
        with open(probe, "xb"):
            pass
        probe.unlink()
    except OSError as exc:  # (refused, exit 6, as a folder that cannot be made is: QA round 116-A F8, exit 1)
        raise WriteRefused(f"Cannot write the lexicon to {target}: {exc.strerror or exc}",
                           hint=f"Choose a writable path with --to FILE or {ENV_LEXICON}=FILE") from None
    return target


def _temp_path(target: Path) -> Path:
    """The file a build writes before renaming it over ``target``."""
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def _is_lexicon_file(path: Path) -> bool:
    """Whether ``path`` (a regular file) is a SQLite file with a lexicon's ``meta`` table naming KeNet's
    package as its source (any format, even damaged otherwise: such a file may be rebuilt). Read as
    immutable: no lock, no ``-wal``/``-shm`` file left beside someone else's database."""
    try:
        with open(path, "rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                return False
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'source'").fetchone()
        finally:
            conn.close()
    except (OSError, sqlite3.Error):
        return False
    return row is not None and row[0] == SOURCE_PACKAGE


def _write_atomic(target: Path, meta: dict, rows: list) -> None:
    """Write a lexicon file beside ``target`` and rename it over ``target`` when complete (first removing the
    temporary files of builds that were killed: QA round 68 L2)."""
    from dreamdb.writes.files import file_size_limited, sweep_stale_temps

    sweep_stale_temps(target.parent, f".{target.name}")
    tmp = _temp_path(target)
    try:
        try:
            tmp.unlink(missing_ok=True)
            conn = sqlite3.connect(tmp)
            try:
                conn.executescript(
                    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                    "CREATE TABLE translations (direction TEXT NOT NULL, word TEXT NOT NULL, targets TEXT NOT NULL,"
                    " terms TEXT NOT NULL, PRIMARY KEY (direction, word)) WITHOUT ROWID;")
                conn.executemany("INSERT INTO translations VALUES (?, ?, ?, ?)", rows)
                conn.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
                conn.commit()
            finally:
                conn.close()
            os.replace(tmp, target)
            st = target.stat()
            _mark_verified(target, (st.st_size, st.st_mtime_ns))  # built now, so sound: no check at its first use
        finally:
            for left in (tmp, Path(f"{tmp}-journal")):  # (its journal too, on a full disk: QA round 123-B F6)
                try:
                    left.unlink(missing_ok=True)
                except OSError:
                    pass
    except (OSError, sqlite3.Error) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        full = getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or "disk is full" in reason
        too_large = getattr(exc, "errno", None) == errno.EFBIG or ("disk I/O error" in reason and file_size_limited())
        raise LexiconError(f"Cannot write the lexicon to {target}: "
                           + ("it is larger than this process's file size limit (ulimit -f)" if too_large else reason),
                           hint=f"Free space on that disk (the lexicon takes about 9 MB), or choose another path with"
                                f" --to FILE or {ENV_LEXICON}=FILE" if full else
                           "Raise the file size limit (ulimit -f; the lexicon takes about 9 MB), then retry." if too_large
                           else f"Choose a writable path with --to FILE or {ENV_LEXICON}=FILE") from exc


TERMS_VERSION = "3"
"""Version of the analysed ``terms`` a build stores (:func:`analysed_translations`), beside the
analyzer's: ``2`` adds a Turkish translation's word as written after its term; ``3`` keeps Turkish terms of two
letters with a Turkish letter (``ağ``, ``iş``). A file of another
version still works, analysing each translation when it is looked up (:attr:`Lexicon.analysed`)."""


def terms_version() -> str:
    """What a lexicon's ``analyzer_version`` meta key holds when its terms are this dreamdb's:
    :data:`dreamdb.analyzer.ANALYZER_VERSION` and :data:`TERMS_VERSION`, as ``11+2``."""
    from dreamdb.analyzer import ANALYZER_VERSION

    return f"{ANALYZER_VERSION}+{TERMS_VERSION}"


def analysed_translations(words, into_turkish: bool) -> tuple[str, ...]:
    """Translations as dreamdb indexes their language: each word's term (Turkish analysis for
    Turkish words), stopwords and terms under 3 letters left out, but for Turkish ones of two letters with a
    Turkish letter (``ağ``, network; ``iş``, job: QA round 58, *network* did not reach a note writing ``ağ``; the
    two-letter terms left out are fragments such as ``ad`` or ``en``), duplicates dropped, in order.

    A Turkish word is followed by the word itself as written (one word, not a phrase), which the index
    holds where the word ends a longer one's stem: Snowball Turkish reads the final ``i`` of
    ``strateji`` as a case ending (term ``stratej``) but keeps it in ``stratejisi`` (term ``strateji``),
    so *strategy* must reach both. Measured (2 Dec, BM25 nDCG@10, same-moment runs): XQuAD paragraphs
    en→tr 0.754 → 0.760, sentences en→tr 0.552 → 0.561, paragraphs en→mixed 0.858 → 0.861; the gold set
    and every other track unchanged."""
    from dreamdb.analyzer import STOPWORDS, stem

    if into_turkish:
        out = (t for w in words if w not in STOPWORDS for t in (stem(w, True), w if " " not in w else ""))
    else:
        out = (stem(w, False) for w in words if w not in STOPWORDS)
    return tuple(t for t in dict.fromkeys(out) if len(t) >= 3 or (into_turkish and len(t) == 2 and not t.isascii()))


_EMPTY: dict = {}


def _what_database(conn: sqlite3.Connection, meta: dict) -> str:
    """What a SQLite file with a ``meta`` table but no lexicon format is, for the message that refuses it:
    a dreamdb index (its ``meta`` names the vault, beside a ``documents`` table) or another SQLite file.
    QA round 56: a dreamdb index named by ``DREAMDB_LEXICON`` was said to have "format None"."""
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error:
        tables = set()
    if "vault" in meta and "documents" in tables:
        return "a dreamdb index"
    return "another SQLite file"


def _remedy(path: Path, *, damaged: bool = False) -> str:
    """What to do about a lexicon file that cannot be used: rebuild it when a build may replace it (a
    lexicon of any format, even damaged, or the default path: :func:`writable_target`), else point
    ``DREAMDB_LEXICON`` elsewhere, since a build never replaces a file that is not a lexicon (QA round 56:
    a dreamdb index named by it was answered "run: dreamdb lexicon build", which then refused it). A
    ``damaged`` file whose ``meta`` cannot be read is one a build refuses to replace elsewhere than at the
    default path, so the remedy there is to delete it first."""
    try:
        rebuildable = (os.path.realpath(path) == os.path.realpath(default_lexicon_path())
                       or _is_lexicon_file(Path(os.path.realpath(path))))
    except OSError:
        rebuildable = False
    if rebuildable:
        return f"run: {dreamdb_command()} lexicon build"
    if damaged:
        return (f"if it was a lexicon, delete it and run: {dreamdb_command()} lexicon build (with {ENV_LEXICON} still"
                " set);"
                f" else point {ENV_LEXICON} at a lexicon file")
    return f"point {ENV_LEXICON} at a lexicon file, or at a new file's path and run: {dreamdb_command()} lexicon build"


@functools.lru_cache(maxsize=65536)
def _split(value) -> tuple[str, ...]:
    """A stored list of translations (tab-joined) as a tuple; ``""`` → ``()``, and so is a value that is
    not text (a damaged or hand-edited row: a blob, a number, NULL), as a damaged page is: no translations,
    never a crash."""
    return tuple(t for t in value.split("\t") if t) if isinstance(value, str) else ()


class Lexicon:
    """A built lexicon file, opened read-only; lookups are cached.

    Attributes:
        path: the file.
        stamp: ``(size in bytes, mtime in ns)`` of the file when opened (what a cache keyed on it sees).
        meta: the file's ``meta`` table (``format``, ``source``, ``source_version``, ``links``, ``built_at``).
        memo: a dict for the caller's outcomes derived from this file (it lives as long as the file is unchanged).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        """Open ``path``. Raises :class:`LexiconError` when it cannot be read or is not a lexicon of this format."""
        self.path = Path(path)
        try:
            st = self.path.stat()
        except OSError as exc:
            raise LexiconError(f"Cannot read the lexicon {self.path}: {exc.strerror or exc}",
                               hint=f"Build it: {dreamdb_command()} lexicon build") from exc
        if not stat.S_ISREG(st.st_mode):
            raise LexiconError(f"{self.path} is not a regular file", hint="Point DREAMDB_LEXICON at a lexicon file.")
        if not os.access(self.path, os.R_OK):  # (SQLite's own error called it "another SQLite file": QA round 68 M7)
            raise LexiconError(f"Cannot read the lexicon {self.path}: permission denied",
                               hint=f"Give yourself read permission on it (chmod u+r '{self.path}'), or build your own:"
                                    f" {dreamdb_command()} lexicon build")
        from dreamdb.config import SQLITE_MAX_PATH_BYTES, sqlite_path_problem

        too_long = sqlite_path_problem(self.path)
        if too_long is not None:  # (SQLite's own error called it "another SQLite file": QA round 143-B F1)
            raise LexiconError(f"Cannot open the lexicon {self.path}: {too_long}",
                               hint=f"move it to a path of at most {SQLITE_MAX_PATH_BYTES} bytes, then point"
                                    f" {ENV_LEXICON} there; a link to it does not do, as SQLite follows links")
        self.stamp = (st.st_size, st.st_mtime_ns)
        conn = None
        try:
            # immutable: no file locking on each statement (3× faster lookups); a build replaces the
            # file whole (rename), and load_lexicon reopens a file whose size or mtime changed
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro&immutable=1", uri=True,
                                   check_same_thread=False)
            self.meta = dict(conn.execute("SELECT key, value FROM meta"))
            if "format" not in self.meta and self.meta.get("source") != SOURCE_PACKAGE:
                raise LexiconError(f"{self.path} is not a dreamdb lexicon (no format recorded): it looks like "
                                   f"{_what_database(conn, self.meta)}", hint=_remedy(self.path))
            if str(self.meta.get("format")) != str(LEXICON_FORMAT):
                raise LexiconError(f"{self.path} has format {self.meta.get('format')}, this dreamdb reads "
                                   f"{LEXICON_FORMAT}", hint=f"Rebuild it: {dreamdb_command()} lexicon build")
            conn.execute("SELECT direction, word, targets, terms FROM translations LIMIT 1").fetchall()
            _verify(conn, self.path, self.stamp)
        except (sqlite3.Error, LexiconError) as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, LexiconError):
                raise
            # no meta table to read: a SQLite file of something else, unless it is empty, damaged (a page
            # missing or mangled: a build cut short, a truncated copy) or no SQLite file at all
            damaged = "malformed" in str(exc)
            what = ("" if hasattr(self, "meta") or "not a database" in str(exc) else
                    "; it is an empty file" if not self.stamp[0] else
                    "; it is a damaged SQLite file (cut short or corrupt)" if damaged else
                    "; it looks like another SQLite file")
            raise LexiconError(f"{self.path} is not a usable dreamdb lexicon ({exc}){what}" if damaged else
                               f"{self.path} is not a dreamdb lexicon ({exc}){what}",
                               hint=_remedy(self.path, damaged=damaged)) from exc
        self._conn = conn
        #: whether the file's analysed terms are this analyzer's (else translations are analysed when looked up)
        self.analysed = self.meta.get("analyzer_version") == terms_version()
        self._cache: dict[tuple[str, str, str], tuple[str, ...]] = {}  # (table, key, column) → translations
        #: For the caller: outcomes derived from this file (e.g. a query word's analysed translations).
        self.memo: dict = {}
        self._sql_seconds = 0.0  # time spent in lookup statements (see PRELOAD_AFTER_SECONDS)
        self._loaded: dict[str, dict[str, dict[str, str]]] = {}  # column → table → key → tab-joined value

    def close(self) -> None:
        """Close its SQLite connection: lookups that would read the file then raise ``sqlite3.ProgrammingError``.
        For a Lexicon opened for a moment (:func:`lexicon_status`): the connection sits in a reference cycle, which
        only Python's cycle collector frees, so each one left open held a file descriptor until then (QA round
        143-F F1: a server polling ``Index.status()`` ran out of them)."""
        self._conn.close()

    @property
    def in_memory(self) -> bool:
        """Whether the column lookups read (``terms`` or ``targets``, see :meth:`translated_terms`) is
        in memory (:meth:`preload`): lookups then cost a dict access each, and need no prefetch."""
        return ("terms" if self.analysed else "targets") in self._loaded

    def preload(self, column: str | None = None) -> None:
        """Read every key of ``column`` (``terms``, the default when the file was built by this
        analyzer, else ``targets``) into memory, so that lookups run no statement: about 0.2 s and
        17 MB for KeNet. Done by itself once lookups have cost :data:`PRELOAD_AFTER_SECONDS`;
        :meth:`dreamdb.api.Index.warm` does it at once. A damaged file leaves the lookups to SQL."""
        column = column or ("terms" if self.analysed else "targets")
        if column not in ("terms", "targets") or column in self._loaded:
            return
        tables: dict[str, dict[str, str]] = {}
        try:
            for table, in self._conn.execute("SELECT DISTINCT direction FROM translations").fetchall():
                tables[table] = dict(self._conn.execute(
                    f"SELECT word, {column} FROM translations WHERE direction = ?", (table,)))
        except sqlite3.Error:
            return
        self._loaded[column] = tables

    def translated_terms(self, direction: str, words, stems=(), *, ascii: bool = False) -> tuple[str, ...]:
        """:meth:`first_translations` analysed as dreamdb indexes their language
        (:func:`analysed_translations`): read from the file when it was built by this analyzer, else
        analysed now. Either way they are the analysed translations of the first key (in :meth:`_pairs`' order)
        whose analysis is not empty: a key whose translations all analyse to nothing (``yeniden``: *again*, an
        English stopword) passes to the next (its stem ``yeni``: *new*), as the file's stored terms, empty for it,
        do. Analysed now, the first key with translations was taken, and a file an earlier dreamdb built gave
        ``yeniden`` no translation where a rebuilt one gives *new* (63 XQuAD Turkish questions' top 10s moved,
        7 Dec 2026)."""
        if self.analysed:
            return self.first_translations(direction, words, stems, column="terms", ascii=ascii)
        into_turkish = direction == EN_TR
        pairs = list(dict.fromkeys(self._pairs(direction, words, stems, ascii)))
        loaded = self._loaded.get("targets")
        if loaded is None:
            self._fetch(pairs, "targets")  # (one statement for every key)
        for table, key in pairs:
            if loaded is not None:
                value = loaded.get(table, _EMPTY).get(key)
                targets = _split(value) if value else ()
            else:
                targets = self._cache[(table, key, "targets")]
            if targets and (found := analysed_translations(targets, into_turkish)):
                return found
        return ()

    def translations(self, direction: str, word: str, *, stemmed: bool = False, ascii: bool = False) -> tuple[str, ...]:
        """The translations of ``word`` (lowercase as written; with ``stemmed``, a stem of dreamdb's
        analyzer, matching every word of that stem; with ``ascii``, a Turkish word typed without its
        letters, ``guvenlik`` for *güvenlik*), most common sense first; ``()`` when it has none.
        ``direction``: :data:`TR_EN` or :data:`EN_TR`."""
        table = direction + (STEMMED if stemmed else ASCII if ascii else "")
        return self._lookup(table, (word,), "targets")[0]

    def has(self, direction: str, word: str, *, stemmed: bool = False, ascii: bool = False) -> bool:
        """Whether :meth:`translations` of ``word`` (same arguments) has any: a dict access once either column is in
        memory (:meth:`preload` reads every key with it; a key is written only with translations), else one lookup."""
        table = direction + (STEMMED if stemmed else ASCII if ascii else "")
        loaded = next(iter(self._loaded.values()), None)
        if loaded is not None:
            return word in loaded.get(table, _EMPTY)
        return bool(self._lookup(table, (word,), "targets")[0])

    @staticmethod
    def _pairs(direction: str, words, stems, ascii: bool) -> list[tuple[str, str]]:
        """``(table, key)`` in the order they are tried: each word as written (then, with ``ascii``,
        as a Turkish word typed without its letters), then each stem."""
        tables = (direction, direction + ASCII) if ascii else (direction,)
        return [*((t, k) for k in words for t in tables), *((direction + STEMMED, k) for k in stems)]

    def first_translations(self, direction: str, words, stems=(), *, column: str = "targets",
                           ascii: bool = False) -> tuple[str, ...]:
        """The translations of the first of ``words`` that has any (as written; with ``ascii``, each
        also as Turkish typed without its letters), else of the first of ``stems`` (see
        :meth:`translations`); ``()`` if none has. At most one SQL statement.
        ``column="terms"``: their analysed terms (:meth:`translated_terms`)."""
        loaded = self._loaded.get(column)
        if loaded is not None:  # in memory: each key a dict access, until the first that has translations
            # (in :meth:`_pairs`' order, without building the pairs; a key without translations, absent or "", is
            # passed over before splitting: a query's Turkish word tries some 30 keys, most of them absent)
            rows = loaded.get(direction, _EMPTY)
            plain = loaded.get(direction + ASCII, _EMPTY) if ascii else None
            for key in words:
                for table in (rows, plain) if ascii else (rows,):
                    value = table.get(key)
                    if value and (found := _split(value)):
                        return found
            rows = loaded.get(direction + STEMMED, _EMPTY)
            for key in stems:
                value = rows.get(key)
                if value and (found := _split(value)):
                    return found
            return ()
        pairs = self._pairs(direction, words, stems, ascii)
        self._fetch(list(dict.fromkeys(pairs)), column)
        return next((f for f in (self._cache[(*p, column)] for p in pairs) if f), ())

    def prefetch(self, direction: str, words=(), stems=(), *, column: str = "terms", ascii: bool = False) -> None:
        """Look up many keys at once (one statement), so that the lookups that follow
        (:meth:`translated_terms` of a query's words) are found in the cache. Nothing to do once the
        lexicon is in memory (:attr:`in_memory`)."""
        if self.in_memory:
            return
        self._fetch(list(dict.fromkeys(self._pairs(direction, words, stems, ascii))), column)

    def _lookup(self, table: str, keys: tuple[str, ...], column: str) -> list[tuple[str, ...]]:
        """The ``column`` (``targets`` or ``terms``) of each key (``()`` for none), from the cache or one statement."""
        self._fetch([(table, k) for k in dict.fromkeys(keys)], column)
        return [self._cache[(table, k, column)] for k in keys]

    def _fetch(self, pairs: list[tuple[str, str]], column: str) -> None:
        """Read the ``(table, key)`` pairs not in the cache into it (``()`` for those the file lacks)."""
        cache = self._cache
        missing = [p for p in pairs if (*p, column) not in cache]
        if not missing:
            return
        if len(cache) > 100_000:
            cache.clear()
        by_table: dict[str, list[str]] = {}
        for table, key in missing:
            by_table.setdefault(table, []).append(key)
        found: dict[tuple[str, str], str] = {}
        loaded = self._loaded.get(column)
        if loaded is not None:
            for table, keys in by_table.items():
                rows = loaded.get(table, {})
                found.update(((table, k), rows[k]) for k in keys if k in rows)
            by_table = {}
        started = time.perf_counter()
        try:
            for table, keys in by_table.items():  # one statement a table (the primary key's range scans)
                for i in range(0, len(keys), 500):
                    chunk = keys[i:i + 500]
                    found.update(((table, w), v) for w, v in self._conn.execute(
                        f"SELECT word, {column} FROM translations WHERE direction = ? AND word IN "
                        f"({', '.join('?' * len(chunk))})", (table, *chunk)))
        except (sqlite3.Error, UnicodeError):  # the file was replaced or damaged under us, or a key is no
            found = {}  # text SQLite can take (a lone surrogate): no translations, never a crash
        for p in missing:
            cache[(*p, column)] = _split(found.get(p, ""))
        if by_table:
            self._sql_seconds += time.perf_counter() - started
            if self._sql_seconds >= PRELOAD_AFTER_SECONDS:
                self._sql_seconds = 0.0  # (the other column, if ever looked up, earns its own read)
                self.preload(column)


def _check_marker(path: Path) -> Path:
    """Where the check of the lexicon file ``path`` is remembered: one small file per lexicon path in
    ``lexicon-checks/`` of ``DREAMDB_CACHE_DIR``, else of ``$XDG_CACHE_HOME/dreamdb`` (an absolute one, as the XDG
    specification and platformdirs take it: a relative one filled the working folder, QA round 86-B F8; default
    ``~/.cache``). Without importing platformdirs, on the recall path."""
    import hashlib

    from dreamdb.config import env_path, expand_user

    name = hashlib.sha256(os.fsencode(str(path.resolve()))).hexdigest()[:24]
    own = env_path("DREAMDB_CACHE_DIR")
    if own:
        return expand_user(own) / "lexicon-checks" / name
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dreamdb" / "lexicon-checks" / name


def _mark_verified(path: Path, stamp: tuple[int, int]) -> None:
    """Remember that the file ``path`` with ``stamp`` (size, mtime in ns) passed the check (best effort:
    without a writable cache folder, each process checks again, ≈ 20 ms)."""
    marker = _check_marker(path)
    try:
        from dreamdb.config import write_private_file

        write_private_file(marker, f"{stamp[0]} {stamp[1]}\n".encode("ascii"))  # (0700, 0600: QA round 147-F F2)
    except OSError:
        pass


def _verify(conn, path: Path, stamp: tuple[int, int]) -> None:
    """Check the lexicon file's structure once per version of it (size and mtime; :func:`_mark_verified`):
    SQLite's ``quick_check`` (≈ 20 ms for KeNet's 8 MB), since a damaged page would otherwise make the
    lookups it holds fail quietly, each word on it read as having no translation.

    Raises:
        LexiconError: the check found damage.
    """
    try:
        if _check_marker(path).read_text(encoding="ascii").split() == [str(stamp[0]), str(stamp[1])]:
            return
    except (OSError, ValueError):
        pass
    try:
        problems = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)")]
    except sqlite3.DatabaseError as exc:  # a page too damaged to walk
        problems = [str(exc)]
    if problems != ["ok"]:
        raise LexiconError(f"{path} is damaged (SQLite's quick_check: {problems[0]})",
                           hint=f"Rebuild it: {dreamdb_command()} lexicon build")
    _mark_verified(path, stamp)


_OPENED: dict[Path, Lexicon] = {}


def load_lexicon() -> Lexicon | None:
    """The lexicon recall uses (see :func:`lexicon_path`), or ``None`` when there is none, it is
    switched off, or the file is not usable (:func:`lexicon_status` says why). Opened once per
    process and reopened when the file changes; costs one ``stat`` otherwise."""
    path = lexicon_path()
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError as exc:
        if os.environ.get(ENV_LEXICON, "").strip():  # named by the user: a missing file is worth a word
            why = (f"which does not exist (build it there: {dreamdb_command()} lexicon build; "
                   if exc.errno == errno.ENOENT else
                   f"which cannot be checked ({exc.strerror or exc}; ")  # (QA round 68 H1)
            _UNUSABLE[path] = ((0, 0), f"{ENV_LEXICON} names {path}, {why}point {ENV_LEXICON} at a lexicon file;"
                                       f" or set {ENV_LEXICON}=off)")
        return None
    if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block or mislead the open
        why = f"{path} is a folder" if stat.S_ISDIR(st.st_mode) else f"{path} is not a regular file"
        _UNUSABLE[path] = ((st.st_size, st.st_mtime_ns), f"{why} (point {ENV_LEXICON} at a lexicon file, or set "
                                                          f"{ENV_LEXICON}=off)")
        return None
    opened = _OPENED.get(path)
    if opened is not None and opened.stamp == (st.st_size, st.st_mtime_ns):
        return opened
    try:
        opened = Lexicon(path)
    except (LexiconError, OSError) as exc:
        _UNUSABLE[path] = ((st.st_size, st.st_mtime_ns), (getattr(exc, "message", None) or str(exc))
                           + f" ({getattr(exc, 'hint', None) or _remedy(path)}; or {ENV_LEXICON}=off)")
        return None
    _UNUSABLE.pop(path, None)
    _OPENED[path] = opened
    return opened


_UNUSABLE: dict[Path, tuple[tuple[int, int], str]] = {}  # path → (stamp, why), for unusable_lexicon


def unusable_lexicon() -> tuple[tuple, str] | None:
    """After :func:`load_lexicon` returned ``None``: ``((path, size, mtime), why)`` when that was
    because the file recall would read exists but is no lexicon of this format (an older build, a
    damaged file) or no file (a folder), ``why`` ending with what to do; else ``None`` (none is
    built, or it is switched off: nothing to say)."""
    path = lexicon_path()
    found = _UNUSABLE.get(path) if path is not None else None
    return ((path, *found[0]), found[1]) if found else None


def lexicon_status() -> dict:
    """What recall will use: ``{"installed": bool, "path", "reason" (when not installed), "source",
    "source_version", "built_at", "links", "size_bytes", "source_installed": bool}``."""
    path = lexicon_path()
    status: dict = {"installed": False, "path": os.path.abspath(path) if path else None,  # (QA round 68 L3: as set)
                    "source_installed": source_dir() is not None}
    hint = (f"{dreamdb_command()} lexicon build" if status["source_installed"]
            else f"{install_command('lexicon')}  then: {dreamdb_command()} lexicon build")
    if path is None:
        status["reason"] = f"switched off by {ENV_LEXICON}"
        return status
    try:
        mode = path.stat().st_mode
    except OSError as exc:  # (an unreadable folder, a name too long: exit 70 before, QA round 68 H1)
        mode = None
        if exc.errno != errno.ENOENT:
            status["reason"] = (f"{path} cannot be checked ({exc.strerror or exc}): point {ENV_LEXICON} at a file"
                                " you can read")
            return status
    if mode is not None and stat.S_ISDIR(mode):
        status["reason"] = f"{path} is a folder ({ENV_LEXICON} must name a file)"
        return status
    if mode is None or not stat.S_ISREG(mode):
        status["reason"] = (f"not built: no file at {path} (run: {hint})" if not os.path.lexists(path)
                            else f"{path} is not a regular file (point {ENV_LEXICON} at a lexicon file, or at a new"
                                 f" file's path and run: {dreamdb_command()} lexicon build)")  # (a build never replaces it)
        return status
    try:
        lex = Lexicon(path)
    except LexiconError as exc:
        status["reason"] = f"{exc.message} ({exc.hint or _remedy(path)})"
        return status
    except OSError as exc:
        status["reason"] = f"cannot read {path}: {exc.strerror or exc}"
        return status
    try:
        status.update(describe(lex))
    finally:
        lex.close()
    return status


def describe(lex: Lexicon) -> dict:
    """``{"installed": True, "path", "size_bytes", "source", "source_version", "built_at", "links"
    (int, or None when the file's is not a number; KeNet's and the glossary's, :mod:`dreamdb.glossary`),
    "glossary_version" (the glossary's the file holds, or None: built before it; "current_glossary_version" is
    this dreamdb's), "analyzer_version" (the file's, or None),
    "analysed" (bool: its terms are this dreamdb's analyzer's, "current_analyzer_version"; else each
    lookup analyses the translations it returns, slower until the file is built again)}`` of an opened
    lexicon."""
    links = str(lex.meta.get("links"))
    return {"installed": True, "path": os.path.abspath(lex.path), "size_bytes": lex.stamp[0],
            **{k: lex.meta.get(k) for k in ("source", "source_version", "built_at")},
            "links": int(links) if links.isascii() and links.isdigit() else None,
            "analyzer_version": lex.meta.get("analyzer_version"), "analysed": lex.analysed,
            "current_analyzer_version": _analyzer_version(),
            "glossary_version": lex.meta.get("glossary_version"), "current_glossary_version": GLOSSARY_VERSION}


def _analyzer_version() -> str:
    """This dreamdb's :func:`terms_version` (the analyzer's version and :data:`TERMS_VERSION`; status only)."""
    return terms_version()
