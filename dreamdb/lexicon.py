"""A Turkish–English dictionary for cross-language recall, built from KeNet.

A Turkish question over English notes shares few words with them: BM25 needs
the English word. :func:`dreamdb.ranking.rank.plan_query` already turns a
Turkish loanword into its English spelling (``konsolidasyon`` →
*consolidation*); this module supplies the rest of the vocabulary: the
interlingual links of KeNet, the Turkish WordNet (Bakay et al., "A Tree-based
Approach for English-to-Turkish Translation", and Ehsani et al., "KeNet:
A Comprehensive Turkish Wordnet", GWC 2021), whose 23,000 Turkish synsets
point to their English WordNet 3.1 synsets (``uyku`` → *sleep, nap,
slumber*). The same links read backwards give the English → Turkish side.

The data ships in the PyPI package ``NlpToolkit-WordNet`` (GPL-3.0; the
``lexicon`` extra installs it). dreamdb does not redistribute it:
``dreamdb lexicon build`` reads the two XML files of the installed package
once (about 10 s) and writes a small SQLite file into the user data folder,
which recall then reads, a few lookups per query, only for query words that
are in no note.

The file holds words as written (``uyku``) and, apart, as dreamdb's analyzer
stems them (``citi`` for *city*, which *cities* also gives), each with its
translations in order: the Turkish word's senses in KeNet's order,
then the English synset's words in WordNet's order (most frequent first).
Translations are stored as words and analysed at query time, so an analyzer
change never leaves stale terms; a change of the key stems bumps
:data:`LEXICON_FORMAT`, and :func:`lexicon_status` then says to rebuild.

Resolution of the file: ``DREAMDB_LEXICON`` (a path, or ``off``), else
``<user data dir>/lexicons/kenet-tr-en.sqlite``.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from dreamdb.errors import LexiconError, UsageError

ENV_LEXICON = "DREAMDB_LEXICON"
"""Environment variable: the lexicon file to use, or ``off`` (also ``0``, ``no``, ``false``) for none."""

FILE_NAME = "kenet-tr-en.sqlite"
"""File name of the built lexicon in ``<user data dir>/lexicons/``."""

LEXICON_FORMAT = 1
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

MAX_TRANSLATIONS = 24
"""Translations kept per word and direction (the most frequent senses come first)."""

_OFF = frozenset({"off", "0", "no", "false", "none"})


def default_lexicon_path() -> Path:
    """``<user data dir>/lexicons/kenet-tr-en.sqlite`` (may not exist)."""
    from dreamdb.embeddings.locate import user_data_root

    return user_data_root() / "lexicons" / FILE_NAME


def lexicon_path() -> Path | None:
    """The lexicon file recall uses: ``DREAMDB_LEXICON`` if set (``None`` when it says ``off``), else
    :func:`default_lexicon_path`. The file may not exist."""
    env = os.environ.get(ENV_LEXICON, "").strip()
    if env.lower() in _OFF and env:
        return None
    return Path(env).expanduser() if env else default_lexicon_path()


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


def read_kenet(data_dir: str | os.PathLike) -> list[tuple[str, int, int, str, int]]:
    """Read KeNet's interlingual synonym links.

    Only one-word entries on both sides are kept (``sleep``, not *body of water*): a query word
    stands for one term.

    Args:
        data_dir: the folder holding ``turkish_wordnet.xml`` and ``english_wordnet_version_31.xml``.

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
                           hint=f"Reinstall it: pip install --force-reinstall {SOURCE_PACKAGE}") from exc
    if not links or not english:
        raise LexiconError(f"No interlingual links found in {data / TURKISH_FILE}",
                           hint=f"Is this {SOURCE_PACKAGE}'s data folder? Reinstall it.")
    return [(tr, sense, place, en, n) for tr, sense, place, sid in links
            for n, en in enumerate(english.get(sid, ())) if en.isalpha()]


def _tables(pairs: list[tuple[str, str]], stem_of, limit: int) -> tuple[dict, dict]:
    """``({word: [translation, …]}, {stem: [translation, …]})`` from ``(source word, translation)``
    pairs in order: translations deduplicated in order, at most ``limit`` a key."""
    words: dict[str, dict[str, None]] = {}
    stems: dict[str, dict[str, None]] = {}
    for src, dst in pairs:
        for table, key in ((words, src), (stems, stem_of(src))):
            row = table.setdefault(key, {})
            if len(row) < limit:
                row.setdefault(dst, None)
    return ({k: list(v) for k, v in words.items()}, {k: list(v) for k, v in stems.items()})


def build_lexicon(dest: str | os.PathLike | None = None, source: str | os.PathLike | None = None) -> dict:
    """Build the lexicon file from KeNet's XML (see the module docstring); atomic (temp file + rename).

    Args:
        dest: the file to write; default :func:`lexicon_path` (or the default path when that is ``off``).
        source: KeNet's data folder; default the installed ``NlpToolkit-WordNet`` package's.

    Returns:
        ``{"path", "tr_en" (keys), "en_tr" (keys), "links", "seconds", "source", "source_version"}``.

    Raises:
        LexiconError: the source package is not installed, or its data cannot be read.
        UsageError: ``dest`` is a folder.
    """
    from dreamdb.analyzer import lower, stem

    started = time.perf_counter()
    data = Path(source) if source is not None else source_dir()
    if data is None:
        raise LexiconError(f"KeNet's data is not installed (PyPI package {SOURCE_PACKAGE})",
                           hint="Run: pip install 'dreamdb[lexicon]'  then: dreamdb lexicon build")
    target = Path(dest) if dest is not None else (lexicon_path() or default_lexicon_path())
    if target.is_dir():
        raise UsageError(f"{target} is a folder", hint="Give the lexicon file's path, e.g. …/kenet-tr-en.sqlite")
    links = read_kenet(data)
    # Turkish → English: the Turkish word's senses in order, each synset's English words in order.
    by_turkish = sorted((lower(tr), sense, en_place, en.lower()) for tr, sense, _p, en, en_place in links)
    pairs = [(tr, en) for tr, _s, _n, en in by_turkish]
    # a verb is listed by its infinitive (hesaplamak); a query has its root and suffixes (hesaplanıyor)
    pairs += [(tr[:-3], en) for tr, en in pairs if tr.endswith(VERB_ENDINGS) and len(tr) - 3 >= VERB_ROOT_LETTERS]
    tr_en = _tables(pairs, lambda w: stem(w, True), MAX_TRANSLATIONS)
    # English → Turkish: first the Turkish words of whom this is the commonest sense, then by their
    # place in their synset (KeNet lists a synset's usual word first).
    by_english = sorted((en.lower(), sense, place, lower(tr)) for tr, sense, place, en, _n in links)
    en_tr = _tables([(en, tr) for en, _s, _p, tr in by_english], lambda w: stem(w, False), MAX_TRANSLATIONS)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.unlink(missing_ok=True)
        conn = sqlite3.connect(tmp)
        try:
            conn.executescript(
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "CREATE TABLE translations (direction TEXT NOT NULL, word TEXT NOT NULL, targets TEXT NOT NULL,"
                " PRIMARY KEY (direction, word)) WITHOUT ROWID;")
            rows = [(direction + suffix, k, "\t".join(v))
                    for direction, tables in ((TR_EN, tr_en), (EN_TR, en_tr))
                    for suffix, table in zip(("", STEMMED), tables) for k, v in table.items()]
            conn.executemany("INSERT INTO translations VALUES (?, ?, ?)", rows)
            meta = {"format": str(LEXICON_FORMAT), "source": SOURCE_PACKAGE, "source_version": _source_version(),
                    "links": str(len(links)), "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            conn.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, target)
    except OSError as exc:
        raise LexiconError(f"Cannot write the lexicon to {target}: {exc.strerror or exc}",
                           hint=f"Choose a writable path with {ENV_LEXICON}=FILE or --to FILE") from exc
    finally:
        tmp.unlink(missing_ok=True)
    _OPENED.clear()
    return {"path": str(target), "tr_en": len(tr_en[0]), "en_tr": len(en_tr[0]), "links": len(links),
            "seconds": round(time.perf_counter() - started, 2), "source": SOURCE_PACKAGE,
            "source_version": meta["source_version"]}


class Lexicon:
    """A built lexicon file, opened read-only; lookups are cached.

    Attributes:
        path: the file.
        stamp: ``(size in bytes, mtime in ns)`` of the file when opened (what a cache keyed on it sees).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        """Open ``path``. Raises :class:`LexiconError` when it is not a lexicon of this format."""
        self.path = Path(path)
        st = self.path.stat()
        self.stamp = (st.st_size, st.st_mtime_ns)
        try:
            self._conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                         check_same_thread=False)
            self.meta = dict(self._conn.execute("SELECT key, value FROM meta"))
        except sqlite3.Error as exc:
            raise LexiconError(f"{self.path} is not a dreamdb lexicon ({exc})",
                               hint="Rebuild it: dreamdb lexicon build") from exc
        if self.meta.get("format") != str(LEXICON_FORMAT):
            raise LexiconError(f"{self.path} has format {self.meta.get('format')}, this dreamdb reads {LEXICON_FORMAT}",
                               hint="Rebuild it: dreamdb lexicon build")
        self._cache: dict[tuple[str, str], tuple[str, ...]] = {}  # (table, key) → translations

    def translations(self, direction: str, word: str, *, stemmed: bool = False) -> tuple[str, ...]:
        """The translations of ``word`` (lowercase as written; with ``stemmed``, a stem of dreamdb's
        analyzer, matching every word of that stem), most common sense first; ``()`` when it has
        none. ``direction``: :data:`TR_EN` or :data:`EN_TR`."""
        return self._lookup(direction + STEMMED if stemmed else direction, (word,))[0]

    def first_translations(self, direction: str, words, stems=()) -> tuple[str, ...]:
        """The translations of the first of ``words`` (as written) that has any, else of the first of
        ``stems`` (see :meth:`translations`); ``()`` if none has. One SQL statement per kind of key."""
        for keys, table in ((words, direction), (stems, direction + STEMMED)):
            keys = tuple(keys)
            if keys:
                found = next((f for f in self._lookup(table, keys) if f), None)
                if found:
                    return found
        return ()

    def _lookup(self, table: str, keys: tuple[str, ...]) -> list[tuple[str, ...]]:
        """The translations of each key (``()`` for none), from the cache or one statement."""
        cache = self._cache
        missing = [k for k in dict.fromkeys(keys) if (table, k) not in cache]
        if missing:
            if len(cache) > 100_000:
                cache.clear()
            found: dict[str, str] = {}
            try:
                for i in range(0, len(missing), 500):
                    chunk = missing[i:i + 500]
                    found.update(self._conn.execute(
                        f"SELECT word, targets FROM translations WHERE direction = ? AND word IN "
                        f"({', '.join('?' * len(chunk))})", (table, *chunk)))
            except sqlite3.Error:  # the file was replaced or damaged under us: no translations, never a crash
                found = {}
            for k in missing:
                cache[(table, k)] = tuple(found[k].split("\t")) if k in found else ()
        return [cache[(table, k)] for k in keys]


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
    except OSError:
        return None
    opened = _OPENED.get(path)
    if opened is not None and opened.stamp == (st.st_size, st.st_mtime_ns):
        return opened
    try:
        opened = Lexicon(path)
    except (LexiconError, OSError):
        return None
    _OPENED[path] = opened
    return opened


def lexicon_status() -> dict:
    """What recall will use: ``{"installed": bool, "path", "reason" (when not installed), "source",
    "source_version", "built_at", "links", "size_bytes", "source_installed": bool}``."""
    path = lexicon_path()
    status: dict = {"installed": False, "path": str(path) if path else None,
                    "source_installed": source_dir() is not None}
    hint = ("dreamdb lexicon build" if status["source_installed"]
            else "pip install 'dreamdb[lexicon]'  then: dreamdb lexicon build")
    if path is None:
        status["reason"] = f"switched off by {ENV_LEXICON}"
        return status
    if not path.is_file():
        status["reason"] = f"not built (run: {hint})"
        return status
    try:
        lex = Lexicon(path)
    except (LexiconError, OSError) as exc:
        status["reason"] = f"{exc} (run: dreamdb lexicon build)"
        return status
    status.update(installed=True, size_bytes=path.stat().st_size,
                  **{k: lex.meta.get(k) for k in ("source", "source_version", "built_at")},
                  links=int(lex.meta.get("links", 0)))
    return status
