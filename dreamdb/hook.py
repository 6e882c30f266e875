"""The Claude Code ``UserPromptSubmit`` prompt hook (SPEC §6).

Reads the hook payload (JSON on stdin: ``prompt``, ``session_id``, ``cwd``),
recalls the top 3 documents and returns a 5–9 line block headed
``— Memory recall (top 3) —`` when the best raw BM25 score is at least
:data:`INJECT_THRESHOLD`. It never fails the prompt: every failure returns an
empty string and is appended to a log file; the process always exits 0.
It never downloads a model: hybrid mode falls back to BM25 quietly.
"""

from __future__ import annotations

import errno
import json
import os
import re
import time
from contextlib import suppress
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from dreamdb.errors import DreamdbError, LockTimeout
from dreamdb.lazy_regex import LazyPattern

MIN_PROMPT_CHARS = 8
"""Prompts shorter than this are skipped (SPEC §6)."""

INJECT_THRESHOLD = 2.0
"""Raw BM25 score the best of the top hits needs before anything is printed (SPEC §2/§6)."""

MAX_QUERY_CHARS = 4000
"""A longer prompt is recalled by its first and last 2,000 characters, less the word each cut splits (a 1 MB prompt
stays fast; :func:`query_text`): a question comes before a pasted log or after it (QA round 70 C-M2: with the first
4,000 only, a question after a 5 KB log was lost)."""

ACKNOWLEDGEMENTS = frozenset(
    """ok okay okey k thanks thank thx ty yes yeah yep yup no nope nah please pls continue go ahead sure great good
    nice cool done proceed lgtm right fine perfect awesome agreed carry keep going next do it that this again retry
    amazing excellent brilliant wonderful super superb cheers kudos bravo wow neat sweet exactly correct indeed
    understood got appreciated appreciate works worked fixed ship
    evet tamam tamamdır teşekkürler teşekkür tşk tşkler sağol sağolun eyvallah sağ ol hayır lütfen devam et peki olur
    güzel harika harikasın süper süpersin mükemmel müthiş muhteşem şahane aferin iyi beğendim anladım anlaşıldı
    çalıştı oldu çıkardın""".split()
)
"""Chat acknowledgements and praise, word by word: a prompt made only of these, the phrases of
:data:`ACKNOWLEDGEMENT_PHRASES` and stopwords is conversation, not a question about the project, so the hook stays
silent however rare the words are in the vault."""

ACKNOWLEDGEMENT_PHRASES = frozenset(tuple(p.split()) for p in (
    "great job", "good job", "nice job", "nice work", "good work", "great work", "well done", "thanks lot",
    "thanks much", "thank much", "looks good", "look good", "looks great", "makes sense",
    "harika oldu", "harika olmuş", "güzel olmuş", "iyi olmuş", "harika iş", "iyi iş", "süper iş", "iş çıkardın",
    "harika iş çıkardın", "eline sağlık", "ellerine sağlık", "elinize sağlık",
    "ellerinize sağlık", "emeğine sağlık", "emeğinize sağlık", "iyi gidiyor", "sağ olun", "devam edelim",
    "süper olmuş", "muhteşem olmuş", "mükemmel olmuş", "güzel oldu", "iyi oldu", "teşekkür ederim",
    "teşekkür ederiz", "tşk ederim"))
"""Praise made of words a question is also made of (``job``, ``work``, ``iş``, ``sağlık``), read as conversation only
together, as written here with stopwords left out (``thanks a lot`` is ``thanks lot``): QA round 74 F8, ``great job,
thanks a lot`` and ``eline sağlık`` injected unrelated notes; QA round 76 F3, the words alone silenced "how does the
job work". Compared without Turkish letters (:func:`_acknowledgement_key`). QA round 78 F1: "that works, thanks",
"awesome, ship it", "çalıştı, teşekkürler", "sağ olun" injected notes."""

GREETINGS = frozenset("""hello hi hey heya hiya howdy hallo yo greetings bye goodbye byebye cya farewell goodnight
    merhaba merhabalar meraba mrb selam selamlar slm günaydın tünaydın hoşgeldin hoşgeldiniz hoşçakal hoşçakalın
    görüşürüz naber nbr nasılsın nasılsınız iyiyim hadi haydi başlayalım""".split())
"""Greetings and farewells, English and Turkish, word by word: the interjections that open or close a conversation
(``hello``, ``merhaba``, ``günaydın``, ``bye``, ``görüşürüz``), and Turkish's one-word greeting questions and openers
(``nasılsın``, ``naber``; ``hadi``, ``başlayalım``), read as :data:`ACKNOWLEDGEMENTS` are: a prompt made only of
these, acknowledgements, the phrases of :data:`GREETING_PHRASES` and :data:`ACKNOWLEDGEMENT_PHRASES` and stopwords is
conversation (QA round 150-F F2: "hello there", "merhaba!", "good morning" and "iyi akşamlar" injected notes, "hello"
the objective "Hello World PR"). A word a question also uses (``morning``, ``good``, ``day``, ``akşamlar``,
``start``) is one only inside a phrase: "morning standup notes" and "good first issue" stay queries."""

GREETING_PHRASES = frozenset(tuple(p.split()) for p in (
    "good morning", "good afternoon", "good evening", "good night", "good day", "nice day", "great day",
    "good weekend", "nice weekend", "see later", "see soon", "see tomorrow", "talk later", "talk soon", "take care",
    "welcome back", "let get started", "lets get started", "let start", "lets start", "let begin", "lets begin",
    "iyi sabahlar", "iyi günler", "iyi akşamlar", "iyi geceler", "iyi çalışmalar", "iyi hafta sonları",
    "hayırlı sabahlar", "hayırlı günler", "hayırlı işler", "kolay gelsin", "hoş geldin", "hoş geldiniz",
    "hoşça kal", "hoşça kalın"))
"""Greetings and farewells made of words a question is also made of, read as conversation only together, written as
:data:`ACKNOWLEDGEMENT_PHRASES` are (stopwords left out: "let's get started" is ``let get started``, "have a nice
day" ``nice day``)."""

GREETING_QUESTIONS = frozenset(tuple(p.split()) for p in (
    "how are you", "how are you doing", "how you doing", "how is it going", "how it going", "how are things",
    "how is everything", "how have you been", "how do you do", "what is up", "what up", "whats up", "sup", "wassup",
    "nasılsın", "nasılsınız", "naber", "nbr", "ne haber", "nasıl gidiyor", "ne var ne yok", "iyi misin",
    "iyi misiniz"))
"""Greetings asked as a question ("how are you?", "what's up?", "nasılsın?", "naber?"), written word for word with
their stopwords (``what's up`` is ``what up``): one that ends its clause (before ``?``, ``!``, ``,``, ``.``, ``;``,
``:``, a line's end or the prompt's) is a greeting, its question mark and question words no question's
(:func:`_is_acknowledgement`): "merhaba, nasılsın?" and "selam, naber?" injected notes (QA round 150-F F2). One
that does not end its clause is a question's words ("how are you handling retries?"), and so is a clause it ends
holding other words ("deploy nasıl gidiyor?" is read for ``deploy``)."""
ADDRESSEES = frozenset(tuple(p.split()) for p in (
    "claude", "claude code", "there", "all", "everyone", "everybody", "team", "folks", "guys", "friend", "friends",
    "buddy", "mate", "bro", "dude", "assistant", "bot",
    "hocam", "dostum", "kanka", "kardeşim", "abi", "arkadaşlar", "arkadaşım", "millet", "ekip", "herkes", "herkese",
    "canım", "asistan"))
"""Whom a greeting is said to, after it in its clause or in a clause of its own after it (:func:`greeting_clause_end`):
the assistant's name and the vocatives of a chat, English and Turkish, a closed list ("hi claude, how are you?",
"Günaydın Claude", "selam millet", "Good morning, Claude!"), and whom thanks and praise are, before or after them
("Thanks, Claude", "Claude, thanks!", "teşekkürler hocam": :func:`_is_acknowledgement`, QA round 152-A F2). Any other
word after a greeting makes its clause a question's words ("hello world", "hi hook")."""
ADDRESS_WORDS = frozenset("my dear you sevgili".split())
"""The words that go with an addressee, in a clause of its own after a greeting ("Hello, my friend!", "Hi, dear
Claude", "hey, you guys", "Selam, sevgili ekip") or in the greeting's own clause ("Hello dear Claude!", "Merhaba
sevgili ekip"), beside :data:`ADDRESSEES`' own (``there``, ``all``, ``everyone``): such a clause, with no other word
(a stopword too) and no ``?``, is the greeting's, and so is one of these words alone ("Hi, you, Claude!", "Hello, my
dear, Claude!"; QA round 152-A F1) (:func:`greeting_clause_end`)."""
_LONGEST_PHRASE = max(map(len, ACKNOWLEDGEMENT_PHRASES | GREETING_PHRASES))
_LONGEST_GREETING_QUESTION = max(map(len, GREETING_QUESTIONS))
_LONGEST_ADDRESSEE = max(map(len, ADDRESSEES))


def _acknowledgement_key(word: str) -> str:
    """A word as :data:`ACKNOWLEDGEMENTS` are compared: Turkish letters as typed without them, so that a capital
    ``I`` lowercased the English way (``SAĞLIK`` → ``sağlik``) and Turkish typed in ASCII (``saglik``) are the word
    (QA round 78 F2: ``ELİNE SAĞLIK`` and ``eline saglik`` injected notes)."""
    from dreamdb.analyzer import TURKISH_TO_ASCII

    return word.translate(TURKISH_TO_ASCII)


OUTCOME_WORDS = frozenset("works worked fixed ship oldu çalıştı çıkardın".split())
"""Words of :data:`ACKNOWLEDGEMENTS` that say how something went, and are a question's or a bug report's words too
(``who fixed it?``, ``how it works``, ``nasıl oldu``): a prompt of these alone is not conversation; beside thanks or
praise it is (``that works, thanks``). QA round 79 F3: alone they silenced "how it works?", whose note the vault has."""

POLITENESS_WORDS = frozenset("please pls plz thanks thank thx lütfen teşekkürler teşekkür tşk tşkler".split())
"""The interjections of politeness, English and Turkish, a closed class (part of :data:`FUNCTION_WORDS`): "please fix
it" injected a real-vault note for ``please`` ("Please run /login", raw BM25 6.8). A prompt of them alone, or with
praise, is still an acknowledgement (:func:`_is_acknowledgement` keeps them: "thanks a lot")."""

FUNCTION_WORDS = frozenset("""could would might shall ought us someone somebody something anyone anybody anything
    everyone everybody everything nobody whoever whatever whichever another others neither
    across along among amongst around beside besides beyond despite toward towards upon although though whether
    whereas
    bana sana ona bize onlara beni seni bizi sizi onları benim senin bizim sizin onların kendim kendin kendimiz
    kendiniz kendisi eder ederim ederiz edin ediniz ediyor ediyorum edebilir edecek etmek etti olur olsun olmak
    olacak olabilir oluyor göre karşı rağmen dolayı üzere boyunca itibaren dair fakat lakin oysa halbuki yoksa
    madem dahi hatta""".split()) | POLITENESS_WORDS
"""Closed-class words that :data:`dreamdb.analyzer.STOPWORDS` (the NLTK lists) leave out: English modal verbs,
pronouns and prepositions and conjunctions, the interjections of politeness (:data:`POLITENESS_WORDS`); Turkish
personal pronouns in their cases, the auxiliary verbs *etmek* and *olmak*, postpositions and conjunctions (the closed
word classes of the two grammars, not words chosen from any
query), less those that are also words of a technical text: English ``may`` (the month), ``must``, ``let``,
``except``, ``unless`` and ``either`` (keywords and names of programming languages), ``none`` (Python's), ``one``,
``since``, ``within``, ``without``, ``inside``, ``near``, ``per``, ``via``, ``onto`` and ``behind`` (git's), the
quantifiers; Turkish forms that are English words (``size``, ``bile``, ``eden``; QA round 101-A F2: "max file size"
lost its ``size``; 102-A F2). The hook reads a prompt without them (:func:`without_function_words`; a word in capitals,
``US``, is an acronym and stays, unless the prompt is typed in capitals: QA rounds 146-D F2, 147-A F1): they say
how something is asked, not what about, and a vault of technical notes holds them so rarely that one alone scored
past the gate (QA round 100-B F1: "can you help us with this one" injected a note for ``us``, raw BM25 7.5; "could you do it for me"
one for ``could``; "bize yardım eder misin" one for ``eder``). Recall itself keeps them (a query names its words)."""

QUESTION_WORDS = frozenset("""what why how when where who whom whose which not never n't cannot
    ne neden niye niçin nasıl kim kime kimin hangi nerede nereye nereden değil mı mi mu mü mısın misin musun müsün
    mıdır midir mudur müdür""".split())
"""A question's or a negation's words (stopwords, which the prompt's words are read without): a prompt holding one,
or a question mark, is no acknowledgement (QA round 79 F3: ``what got fixed?``, ``it's not fixed``, ``çalıştı mı?``
were silenced as thanks)."""


HOOK_OFF = ("0", "false", "no", "off", "n", "none", "never", "disable", "disabled",
            "kapalı", "kapali", "kapat", "hayır", "hayir", "yok", "devre dışı", "devre disi")
"""Values of ``DREAMDB_MEMORY_HOOK`` (stripped, any case) that turn the hook off, in English and in Turkish, as a
number zero is too (``0.0``, ``00``): QA round 76 F11, ``disabled`` kept it on; QA round 77 G6, ``kapalı`` (off),
``hayır``, ``never`` and ``0.0`` did."""


HOOK_ON = ("", "1", "true", "yes", "on", "enabled", "enable", "açık", "acik", "evet")
"""Values of ``DREAMDB_MEMORY_HOOK`` that keep the hook on without a word in its log (any other value not in
:data:`HOOK_OFF` keeps it on and is logged)."""

# (compared with dotless ı read as i: KAPALI lowercases to kapali, DIŞI to dişi)
_HOOK_OFF_DOTTED = frozenset(v.replace("ı", "i") for v in HOOK_OFF)
_HOOK_ON_DOTTED = frozenset(v.replace("ı", "i") for v in HOOK_ON)


def _hook_off(switch: str) -> bool:
    """Whether a ``DREAMDB_MEMORY_HOOK`` value (stripped, lowercase) turns the hook off (:data:`HOOK_OFF`)."""
    if " ".join(switch.replace("ı", "i").replace("-", " ").replace("_", " ").split()) in _HOOK_OFF_DOTTED:
        return True  # (devre-dışı, devre_dışı: QA round 79 F16)
    try:
        return float(switch.replace(",", ".")) == 0  # (0,0: a decimal comma, as Turkish writes it)
    except ValueError:
        return False


TOP = 3
FUSED_DEPTH = 50
"""How many fused hits a hybrid, dense or RRF hook looks through for its :data:`TOP` (each channel's candidates,
:data:`dreamdb.hybrid.CANDIDATES`, not imported: the hook's bm25 path stays light)."""
HEADER = "— Memory recall (top 3) —"
LOCK_WAIT_MS = 1500
"""How long the hook waits for another writer before recalling from the index as it is (ms)."""
REFRESH_SECONDS = 0.5
"""In hybrid mode, how long the hook embeds the chunk texts of edited notes before it recalls (s; the text under
way finishes, up to ≈ 1.5 s for a long one on a busy 2-core machine, and the language identifier's first load,
≈ 0.7 s, falls in the first: in practice one text a prompt); the rest is left to later prompts or ``dreamdb embed
refresh``. QA round 57: with no limit, the first prompt after 20 notes were edited took 12.6-17.6 s on this
busy 2-core machine (20 s in QA's run), embedding their 21 texts, against ≈ 1.3 s with nothing to embed; with
this budget a prompt took 2.7-4.2 s while texts waited. One-shot recalls use
:data:`dreamdb.api.LAZY_REFRESH_SECONDS` (2 s)."""

LOGGED_NOTES = ("used bm25", "BM25's results", "dense results are partial", "dense results cover only",
                "dense scores are not", "rebuilt from the vault", "lexicon is not used", "snippet is left out",
                "spelling corrected")
"""What marks a note of recall's that the hook writes to its log (the rest, a query cut or a filter's, are the command
line's): a quiet fallback to BM25 (no model, a bad setting, no vector yet), dense results left partial (texts still
waiting for embedding, README: "leaving the rest, with a note"; the vectors' languages not identified yet), a
rebuild, a lexicon it could not use (QA round 78 F7), a snippet left out of a damaged index it could not rebuild (QA
round 150-D F1), a prompt that matched nothing read with its spelling corrected (QA round 154-G F4). QA round 144-B F2: in hybrid mode "no dense results yet" and
"dense results are partial" were dropped, and the log said only what was injected."""

INLINE_SYNC_BYTES = 500_000
"""Most bytes of new or changed files the hook indexes itself, in an index already built, before it answers (a changed
``CHANGELOG.json`` or memory file that grew counted by what it grew since the last sync, its unchanged entries keeping
their rows, one as large as it was or smaller, its entries edited or removed, counted whole, QA round 154-G F2:
:func:`dreamdb.store.sync.files_to_index`; a file that grew and was also edited still counts by its growth alone); more are indexed by a ``dreamdb sync`` it starts in the background, and the
prompt is answered from the index as it is (QA round 90-C F1: a 40 MB note held every prompt 10 s). Half of
:data:`INLINE_BUILD_BYTES`, for the budget of a first build: a changed note costs 1.6-2 times a new one (its rows
deleted, then written anew). Notes of about 1 KB: 500 KB of them changed took 0.86 s of CPU to sync, 1 MB of them new
0.96 s (1.5 against 0.96 ms a KB; as hook processes, wall time: 1.3 s syncing those, 1.9 s building these), medians
of 5 runs of ``python scripts/bench_ops.py --only hook-sync`` on 2 cores under a load of 4-8. QA round 154-C F1: at
8,000,000 (and 5,000 files), 3,000 changed notes of 1 KB held a prompt 14 s."""

INLINE_SYNC_READ_BYTES = 8_000_000
"""Most bytes of new or changed files, whole, the hook's own sync reads: a changed ``CHANGELOG.json`` is read and its
entries hashed whole, though only what it grew counts toward :data:`INLINE_SYNC_BYTES` (when it grew) (the real vault's 824 KB with
an entry added: 78 ms of CPU, ``scripts/bench_ops.py --only hook-sync``; ≈ 0.8 s at this limit). More are left to a
background ``dreamdb sync`` as those past :data:`INLINE_SYNC_BYTES` are."""

INLINE_SYNC_FILES = 1_000
"""Most new, changed or removed files the hook indexes itself, whatever their size, before it answers; more are left
to a background ``dreamdb sync`` as :data:`INLINE_SYNC_BYTES` are (QA round 108-B F1: 30,000 new notes of 1.8 MB in
all took 24 s, and a hook its caller stopped rolled them back each time, so they were never indexed). Half of
:data:`INLINE_BUILD_FILES`, for the budget of a first build: 1,000 small notes changed took 0.57 s of CPU to sync,
2,000 new 0.65 s (0.59 against 0.32 ms a note; as hook processes: 1.1 s syncing those, 1.2 s building these), as
measured for :data:`INLINE_SYNC_BYTES`. QA round 154-C F1: at 5,000, 4,991 changed small notes held a prompt 8 s."""

INLINE_BUILD_BYTES = 1_000_000
"""Largest vault (bytes of the files it indexes) whose whole index the hook builds itself before it answers: 1 MB of
notes of about 1 KB took 0.96 s of CPU to index, the hook building it 1.9 s (``scripts/bench_ops.py --only
hook-sync``). A larger vault whose index is missing, was rebuilt after damage, or must be indexed again by a new
analyzer is indexed by a ``dreamdb sync`` the hook starts in the background, and the prompt goes on without memories
(QA round 59 M4: a 60,000-entry changelog held each prompt 9-10 s, and a hook stopped by its timeout lost the build,
so the index was never built)."""

INLINE_BUILD_FILES = 2_000
"""Most files of a vault whose whole index the hook builds itself, whatever their size (2,000 small notes: 0.65 s of
CPU, the hook building them 1.2 s; ``scripts/bench_ops.py --only hook-sync``); a vault of more is built in the
background, as one past :data:`INLINE_BUILD_BYTES` is (QA round 108-B F1)."""


def log_path() -> Path:
    """Where hook failures are logged: ``$DREAMDB_HOOK_LOG`` or ``<user cache>/dreamdb/hook.log``."""
    from dreamdb.config import cache_root, env_path

    env = env_path("DREAMDB_HOOK_LOG")
    if env:
        return Path(env)

    return cache_root() / "hook.log"


def _why(message: str) -> None:
    """Log why a prompt got what it got (nothing, or a block) when ``DREAMDB_HOOK_VERBOSE`` is set: the
    hook is silent by design, and this is how to find out whether it ran and what it saw."""
    if os.environ.get("DREAMDB_HOOK_VERBOSE"):
        _log(message)


_LOG_LINE = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d ")
"""How each line of the log starts (:func:`_log`'s timestamp): a file whose first line does not is not a hook log."""


def _file_there(path: str) -> tuple[bool, bool]:
    """``(exists, name_unread)`` for a hit's file: whether it exists, and whether this Python cannot encode its name
    (file names read as ASCII: ``LC_ALL=C PYTHONUTF8=0``), which is then looked for by its UTF-8 bytes, as the sync
    that indexed it read it: ``os.path.exists`` said False of such a name, and the hook logged an existing note as
    gone, where recall showed it (QA round 156-D F6)."""
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        try:
            return os.path.exists(path.encode("utf-8", "surrogateescape")), True
        except UnicodeEncodeError:  # (a lone surrogate of no byte: no such file)
            return False, True
    return os.path.exists(path), False


def _log(message: str) -> None:
    """Append one line to the log (:func:`log_path`), never raising. Only the default log's folder is created
    (a ``DREAMDB_HOOK_LOG`` naming a folder that does not exist logs nothing), and only a regular file that
    is empty or a hook log already (its first line starts as :func:`_log` starts each line: QA round 48,
    a mistyped ``DREAMDB_HOOK_LOG`` had tracebacks appended to ``/etc/passwd``) is appended to: not a FIFO
    (opening it would wait for a reader), a device, a database or a PDF named by mistake (QA rounds 40
    and 41), or any other text file. A log this user may write but not read (mode 0200) cannot be checked
    and is appended to as it is (QA rounds 43, 44). The message is put on one line (control characters
    shown, whitespace runs made one space)."""
    import stat

    try:
        p = log_path()
        from dreamdb.config import env_path

        if env_path("DREAMDB_HOOK_LOG") is None:  # (the default folder is made; one the user named is not)
            from dreamdb.config import make_private_folders

            make_private_folders(p.parent)  # (0700 whatever the umask: QA round 147-F F2)
        if os.path.islink(p) and not os.path.exists(p):  # a link to nothing: never creates its target (QA 42)
            return
        flags = os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
        try:
            fd, readable = os.open(p, os.O_RDWR | flags, 0o600), True
        except PermissionError:  # a log this user may only write to (mode 0200): appended unread (QA round 43)
            fd, readable = os.open(p, os.O_WRONLY | flags, 0o600), False
        with os.fdopen(fd, "r+b" if readable else "ab") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return
            head = os.pread(fh.fileno(), 64, 0) if readable else b""
            if head and not _LOG_LINE.match(head):
                return
            line = f"{datetime.now(timezone.utc).isoformat(timespec='seconds')} {_one_line(message)}\n".encode("utf-8", "replace")
            if readable and os.fstat(fh.fileno()).st_size > LOG_MAX_BYTES and not os.path.islink(p) \
                    and os.stat(p).st_ino == os.fstat(fh.fileno()).st_ino:
                # one older log kept, and this line starts the new one: written before the move, it left no log
                # where `tail` looks right after the prompt that filled it (QA round 74 F10)
                os.replace(p, p.with_name(p.name + ".1"))
                fh.close()
                with os.fdopen(os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600), "ab") as new:
                    new.write(line)
                return
            fh.write(line)
            fh.flush()
    except (OSError, ValueError):
        pass


LOG_MAX_BYTES = 1 << 20
"""Size (bytes) past which the hook log is moved to ``<log>.1`` (replacing an older one): with
``DREAMDB_HOOK_VERBOSE``/``TIMING`` or a setting it keeps logging, a line a prompt would grow it forever
(QA round 70 C-L11). A log this user cannot read, or a symlink, is left as it is."""


_STAND_IN = re.compile(r"<(?:U\+[0-9A-F]{4,6}|\d+ hidden characters from U\+[0-9A-F]{4,6})>")
"""The names :func:`dreamdb.output.safe_text` writes in place of a hidden character (``<U+2066>``)."""


@lru_cache(maxsize=1)
def _kept_whole() -> re.Pattern:
    """What a cut of :func:`_one_line` keeps whole or leaves out: a hidden character's name (:data:`_STAND_IN`) and
    a flag's tag sequence (:data:`dreamdb.output.FLAG_TAG_SEQUENCE`)."""
    from dreamdb.output import FLAG_TAG_SEQUENCE

    return re.compile(f"{_STAND_IN.pattern}|{FLAG_TAG_SEQUENCE}")


def _one_line(text: str, limit: int | None = None) -> str:
    """``text`` on one line: control characters shown (ESC → ␛, see :func:`dreamdb.output.safe_text`), whitespace
    runs → one space, cut at ``limit`` characters (the ``…`` included); a cut never splits the name of a hidden
    character (``<U+2066>`` is kept whole or left out: a half ``<U+20…`` names nothing, QA round 73), nor a flag's
    tag sequence (:data:`dreamdb.output.FLAG_TAG_SEQUENCE`, kept whole or left out: its first tag characters alone
    are the invisible ones :func:`~dreamdb.output.safe_text` leaves out, QA round 139-C F2), nor any other grapheme
    cluster (:func:`dreamdb.output.cluster_boundary`: a flag 🇹🇷, a family emoji, a conjunct क्ष; QA round 143-I F2)."""
    from dreamdb.output import cluster_boundary, safe_text

    text = " ".join(safe_text(text).split())
    if limit is None or len(text) <= limit:
        return text
    cut = cluster_boundary(text, limit - 1)
    for m in _kept_whole().finditer(text, max(0, cut - 40), cut + 40):
        if m.start() < cut < m.end():
            cut = m.start()
    return text[:cut] + "…"


MAX_ID_CHARS = 100
"""Most characters of an id the block shows (a hit's, and the one superseding it): a longer one is shown by its first
:data:`ID_HEAD_CHARS` characters and its last, ``…`` between them (:func:`_one_line_id`). The slug of a changelog
entry's id is made of its scope, and a scope listing files has no bound: QA round 150-F F5, an entry whose scope
listed 80 files gave a 2,500-character id line in a block of 5–9 lines, whose titles and snippets are cut (90 and 160
characters). The real vault's longest id then was 155 characters, its median 30. ``dreamdb recall`` shows ids whole."""

ID_HEAD_CHARS = 60
"""How many of a long id's first characters the block keeps (:data:`MAX_ID_CHARS`): the type and the date of a
changelog entry, and its scope's first words; its last characters keep the entry's number (``…-ts-1``)."""

_TYPED_ESCAPE = re.compile(r"\\u[0-9a-f]{4}")
"""A character :func:`dreamdb.output.typable_id` writes as ``\\uXXXX`` in a quoted id: a cut keeps it whole."""


def _one_line_id(doc_id: str) -> str:
    """An id on one line, its hidden characters named or counted (:func:`dreamdb.output.visible_id`: QA round 56, an
    id whose file name holds tag characters was shown without them, an id no command could find), quoted where its
    spaces would be lost (:func:`dreamdb.output.typable_id`: QA round 86-A L1); one longer than :data:`MAX_ID_CHARS`
    as its first :data:`ID_HEAD_CHARS` characters, ``…`` and its last (at most :data:`MAX_ID_CHARS` in all), a
    hidden character's name, a ``\\uXXXX`` escape and a grapheme cluster kept whole or left out (QA round 150-F F5)."""
    from dreamdb.output import cluster_boundary, typable_id

    shown = typable_id(doc_id)
    if len(shown) <= MAX_ID_CHARS:
        return shown
    head = cluster_boundary(shown, ID_HEAD_CHARS)
    tail = cluster_boundary(shown, len(shown) - (MAX_ID_CHARS - 1 - ID_HEAD_CHARS), forward=True)
    for pattern in (_kept_whole(), _TYPED_ESCAPE):
        for m in pattern.finditer(shown, max(0, head - 60), head + 60):
            if m.start() < head < m.end():
                head = m.start()
        for m in pattern.finditer(shown, max(0, tail - 60), tail + 60):
            if m.start() < tail < m.end():
                tail = m.end()
    return shown[:head] + "…" + shown[tail:]


def _from_best_line(hit) -> str:
    """A hit's snippet from its best line on (the line holding most of the hit's matched terms, ``Hit.terms``), then
    the line after it: the snippet's line before the best one is context for a reader of three lines, and the block's
    one line cut at 160 characters showed that line alone when it was long (QA round 78 F9: the note on pgbouncer was
    shown by its preamble about CI runners). With no matched term on any line (a hit through a translation), the
    snippet's middle line of three, or its first."""
    from dreamdb.analyzer import analyze, fold_case, identifier_terms, is_identifier_term, joined_terms, numbered_terms
    from dreamdb.ranking.snippet import GAP

    lines = (hit.snippet or "").split("\n")
    if len(lines) < 2:
        return hit.snippet
    terms = {t["term"] for t in getattr(hit, "terms", None) or ()}
    identifiers = {t for t in terms if is_identifier_term(t)}
    # (a line naming one of the query's identifiers whole comes first, as the snippet's own choice does: a line of
    # its words apart, "Claude Code session id", is not the line of CLAUDE_CODE_SESSION_ID; QA round 79 F13)
    held = [(-1, -1) if ln == GAP else (
        len(identifiers.intersection(joined_terms(ln) + identifier_terms(fold_case(ln)))) if identifiers else 0,
        len(terms.intersection(analyze(ln, turkish=True) + numbered_terms(ln))  # (ws3 of WS-3 too)
            .union(terms.intersection(analyze(ln, turkish=False)))))
        for ln in lines]
    best = max(range(len(lines)), key=lambda i: (held[i], -i))
    if held[best] <= (0, 0):
        best = 1 if len(lines) == 3 and lines[1] != GAP else 0
    return "\n".join(ln for ln in lines[best:] if ln != GAP)


def render_block(hits, *, name_vault: bool = False) -> str:
    """The block printed into the agent's context: header, two lines per hit, two footer lines (5–9 lines for 1–3 hits).

    Text from the vault goes through :func:`dreamdb.output.safe_text`: no escape sequence reaches the prompt; ids go
    through :func:`dreamdb.output.visible_id`, one longer than :data:`MAX_ID_CHARS` shown by its start and end
    (:func:`_one_line_id`); titles are cut at 90 characters, snippets at 160. With ``name_vault``, the ``More:`` command names the vault
    (``--vault``): the command alone, run in the prompt's folder, would find none or another
    (:func:`_found_alone`): the vault was found from ``$CLAUDE_PROJECT_DIR`` (QA round 118-A F6), or
    ``$DREAMDB_VAULT`` names another (QA round 139-C F3).
    """
    lines = [HEADER]
    for i, h in enumerate(hits, 1):
        sup = f" — superseded by {_one_line_id(h.superseded_by)}" if h.superseded_by else ""
        # (shown for its translated words, or other forms of them, translated(): not the prompt's words as written;
        # "through a translation" was said of a Turkish note's `toke` for `token` with the lexicon off, 128-B F1)
        via = ", through a translation or another form of a word" if word_score(h) == 0 else ""
        lines.append(f"{i}. [{_one_line_id(h.doc_id)}] {_one_line(h.title, 90)} (score {_score_text(h.score)}{via}){sup}")
        lines.append(f"   {_one_line(_from_best_line(h) or h.description, 160)}")
    lines.append(f"Vault: {_one_line(hits[0].vault, 100)} · scores are raw BM25, shown when the best is ≥ {INJECT_THRESHOLD:g}")
    flag = ""
    if name_vault:
        import shlex

        quoted = shlex.quote(hits[0].vault)
        if _one_line(quoted, 200) == quoted:  # (only a path shown exactly: one with runs of spaces, hidden characters
            flag = f" --vault {quoted}"  # or past 200 characters would name another folder; QA round 120-A F3)
    lines.append(f'More: {_command()} recall{flag} --explain "<query>"')
    return "\n".join(lines) + "\n"


def _found_alone(cwd: str | None, vault: Path) -> bool:
    """Whether ``dreamdb recall`` run in ``cwd`` (default: the working folder) without ``--vault`` finds ``vault``:
    ``$DREAMDB_VAULT``'s vault when it is set (QA round 139-C F3: one exported for another vault was searched by the
    block's ``More:`` command), else the one the walk up from ``cwd`` finds."""
    from dreamdb.vault.discover import find_vault

    try:
        return find_vault(None, cwd=Path(cwd) if cwd else None).resolve() == vault.resolve()
    except Exception:  # noqa: BLE001 - none found, or none usable: the vault is named
        return False


def _command() -> str:
    """How the agent can run dreamdb: ``dreamdb``, or the path this hook runs from when ``dreamdb`` on ``PATH`` is
    not it (:func:`dreamdb.extras.dreamdb_command`; ``hook install`` writes an absolute path when dreamdb is only in
    a virtualenv, which the agent's shell does not activate: QA round 70 C-L9, the block's "More: dreamdb recall"
    failed there), ``dreamdb`` when that path cannot be shown on one line exactly."""
    from dreamdb.extras import dreamdb_command

    command = dreamdb_command()
    return command if _one_line(command, 200) == command else "dreamdb"


def _score_text(score: float) -> str:
    """A hit's raw score as the block prints it: 4 significant digits, as recall prints scores
    (:func:`dreamdb.output._fmt`: ``12.35``, ``1.96``, ``0.03``). QA round 56: a hit kept for its raw score of 0.03
    was printed as ``(score 0.0)``, while hits of raw score 0 are the ones left out; QA round 58: one decimal showed
    1.96 as ``2.0`` beside the footer's "shown when the best is ≥ 2", and 0.05 as ``0.1``."""
    from dreamdb.output import _fmt

    return _fmt(score)


def run(payload_text: str) -> str:
    """Run the hook on a raw stdin payload; return what to print ("" for nothing). Never raises."""
    t0 = time.perf_counter()
    try:
        switch = os.environ.get("DREAMDB_MEMORY_HOOK", "1").strip().lower()
        if _hook_off(switch):  # (said when verbose, as every other outcome is: QA round 146-D F4)
            _why(f"DREAMDB_MEMORY_HOOK={_one_line(os.environ['DREAMDB_MEMORY_HOOK'], 40)!r} turns the hook off;"
                 " nothing printed")
            return ""
        if switch.replace("ı", "i") not in _HOOK_ON_DOTTED:  # kept on, and said (QA round 74 F10)
            _log(f"DREAMDB_MEMORY_HOOK={_one_line(switch, 40)!r} is neither on nor off ({', '.join(HOOK_OFF)} turn "
                 "the hook off); kept on")
        # a UTF-8 byte-order mark before the JSON (a payload written by a Windows tool) is not part of it: RFC 8259
        # lets a reader ignore it, and json.loads refused it (QA round 54 L11); so are whitespace before it and a
        # second one, which a tool that adds its own to a payload that had one writes (QA round 55)
        payload_text = payload_text[_LEADING_WHITESPACE_AND_BOMS.match(payload_text).end():]
        if not payload_text.strip():
            _log("empty payload on stdin; nothing done")
            return ""
        try:
            payload = json.loads(payload_text, parse_int=_parse_int)
        except ValueError as exc:
            _log(f"payload is not JSON ({exc}); nothing done")
            return ""
        except RecursionError:  # ('[' * 100000 was logged as "hook failed: RecursionError", as if a bug: QA 54 L11)
            _log("payload is not usable JSON (nested too deeply to read); nothing done")
            return ""
        if not isinstance(payload, dict):
            _log("payload is not a JSON object; nothing done")
            return ""
        prompt = payload.get("prompt")
        from dreamdb.vault.discover import is_utf8

        if isinstance(prompt, str) and not is_utf8(prompt):
            # a lone surrogate (JSON's "\ud800": a client that cut an emoji in two) is no text: replaced, as
            # invalid bytes on stdin are, rather than losing the prompt's memories (QA round 69 M2)
            prompt = prompt.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        if prompt is not None and not isinstance(prompt, str):  # (QA round 69 D-L4: said "missing or shorter")
            _log(f"payload's prompt is not text (a {type(prompt).__name__}); nothing printed")
            return ""
        if prompt is None or len(prompt.strip()) < MIN_PROMPT_CHARS:
            _why(f"prompt missing or shorter than {MIN_PROMPT_CHARS} characters; nothing printed")
            return ""
        if _is_acknowledgement(prompt):
            keys, words, greets, _asks = _words(prompt)
            # (a prompt of common words alone was said to hold "only symbols, emoji or punctuation": QA round 100-B F5)
            _why("prompt is only an acknowledgement or a greeting (ok, thanks, hello…); nothing printed"
                 if words or greets else
                 "prompt holds only common words (the, could, us…), no word to search for; nothing printed"
                 if keys else "prompt has no words to search for (only symbols, emoji or punctuation); nothing printed")
            return ""
        cwd = payload.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            _log(f"payload's cwd is not text (a {type(cwd).__name__}); the vault is looked for from the hook's own"
                 " working folder")
        if isinstance(cwd, str) and ("\0" in cwd or not _encodable(cwd)):  # (QA round 42: a traceback in the log)
            _log(f"hook: cwd {cwd!r} is not a usable path (a NUL byte or an unpaired surrogate); nothing printed")
            return ""
        return _recall_block(without_function_words(without_greeting(query_text(prompt))), cwd if isinstance(cwd, str) and cwd else None)
    except LockTimeout as exc:  # (a lock is no failure of the hook's: QA round 79 F5, logged as one with a traceback hint)
        _log(f"{exc.message.rstrip('.')}; nothing printed")
        return ""
    except DreamdbError as exc:  # what dreamdb says of the machine or the vault (a full disk…): its message and hint, no
        # "hook failed … DREAMDB_DEBUG" as for a bug (QA round 86-A L3: message and hint ran together, read as a bug)
        _log(f"{exc.message.rstrip('.')}" + (f" ({exc.hint.rstrip('.')})" if exc.hint else "") + "; nothing printed")
        return ""
    except FileNotFoundError as exc:  # the working folder deleted under the hook, with no cwd in the payload
        _log(f"a folder the hook needs is gone ({exc.strerror}: {exc.filename or 'the working folder'}); nothing printed")
        return ""
    except Exception as exc:  # noqa: BLE001 - the hook must never fail the prompt
        if os.environ.get("DREAMDB_DEBUG"):
            with suppress(Exception):  # (imported only here: ≈ 2 ms of every prompt's start-up, with its modules)
                import traceback

                traceback.print_exc()  # (to stderr: the log keeps one line an entry)
        last = exc.__traceback__  # (the frame that raised: the last of the traceback, as traceback.extract_tb's)
        while last is not None and last.tb_next is not None:
            last = last.tb_next
        code = last.tb_frame.f_code if last is not None else None
        where = f" (at {Path(code.co_filename).name}:{last.tb_lineno} in {code.co_name})" if code else ""
        _log(f"hook failed: {type(exc).__name__}: {exc}{where}; DREAMDB_DEBUG=1 prints the traceback on stderr")
        return ""
    except KeyboardInterrupt:  # Ctrl-C / SIGINT while recalling: the prompt goes on without memories
        _log("hook interrupted; nothing printed")
        return ""
    finally:
        if os.environ.get("DREAMDB_HOOK_TIMING"):
            _log(f"hook took {(time.perf_counter() - t0) * 1000:.1f} ms")


_LEADING_WHITESPACE_AND_BOMS = re.compile("[\\s\ufeff]*")
"""What :func:`run` drops before the payload's JSON: whitespace and any number of byte-order marks, in any order."""


def query_text(prompt: str) -> str:
    """What the hook recalls for ``prompt``: the whole of it up to :data:`MAX_QUERY_CHARS` characters, else its first
    and last half of that, less the word either seam cuts (:func:`_before_seam`, :func:`_after_seam`): a word cut
    there is a word less, never a wrong one. QA round 156-B F1: cut at fixed characters, ``the procurator`` across the
    tail's seam left ``curator`` at the tail's start, which recalled and injected feature/brain-curator
    (``misconfiguration``: ``configuration``)."""
    if len(prompt) <= MAX_QUERY_CHARS:
        return prompt
    half = MAX_QUERY_CHARS // 2
    return _before_seam(prompt, half) + "\n" + _after_seam(prompt, len(prompt) - half)


def _in_word(char: str) -> bool:
    """Whether ``char`` is part of a word: a letter, a combining mark or a digit (:func:`_before_seam`)."""
    import unicodedata

    return unicodedata.category(char)[0] in "LMN"


def _before_seam(text: str, cut: int) -> str:
    """``text[:cut]`` less the word the cut splits (``0 < cut < len(text)``): the run of letters, marks and digits
    (:func:`_in_word`) on both sides of the cut, the characters before it dropped (``the procur`` → ``the ``,
    ``a/b/procur`` → ``a/b/``); a half that is one such run is kept as cut (it is no word of any note, whole or cut,
    and all there is to read). Only that run: text written without spaces (Chinese, Japanese, Thai) loses the
    letters since its last punctuation, not the half up to its last line break (QA round 156-G F1: a Japanese
    prompt's head kept 19 of its 2,000 characters)."""
    if not (_in_word(text[cut - 1]) and _in_word(text[cut])):
        return text[:cut]
    i = cut
    while i > 0 and _in_word(text[i - 1]):
        i -= 1
    return text[:i] if i > 0 else text[:cut]


def _after_seam(text: str, cut: int) -> str:
    """``text[cut:]`` less the word the cut splits (``0 < cut < len(text)``), as :func:`_before_seam` reads it: the
    run of letters, marks and digits after the cut dropped."""
    n = len(text)
    if not (_in_word(text[cut - 1]) and _in_word(text[cut])):
        return text[cut:]
    j = cut
    while j < n and _in_word(text[j]):
        j += 1
    return text[j:] if j < n else text[cut:]


def _successors_first(hits: list) -> list:
    """``hits`` with each superseded changelog entry right after the entry that replaced it, when both are there (a
    chain A → B → C as C, B, A), the rest in their order: the agent reads the decision in force first (QA round 74
    F12: the replaced entry, shorter, ranked first; QA round 76 F2: a chain put the oldest first)."""
    ids = {h.doc_id for h in hits}
    after: dict[str, list] = {}
    for h in hits:
        if h.superseded_by in ids and h.superseded_by != h.doc_id:
            after.setdefault(h.superseded_by, []).append(h)
    out: list = []
    seen: set[str] = set()

    def put(h) -> None:
        if h.doc_id in seen:
            return
        seen.add(h.doc_id)
        out.append(h)
        for older in after.get(h.doc_id, ()):
            put(older)

    for h in hits:
        if h.superseded_by not in ids or h.superseded_by == h.doc_id:
            put(h)
    for h in hits:  # (entries that supersede each other in a loop: in their order)
        put(h)
    return out


EXPLAIN_ROUNDING = 1e-6
"""Above the rounding of ``explain``'s figures (6 decimals, :meth:`dreamdb.api.Hit.as_dict`): a difference this small
is no difference."""


def translated(hit) -> bool:
    """Whether ``hit`` holds translations of the prompt's words beyond the words themselves: its BM25 with each
    translated word counted with its translation as one term (``bm25_structured``, from ``explain``) exceeds its
    raw score (:func:`dreamdb.ranking.rank.class_members`)."""
    structured = (hit.signals or {}).get("bm25_structured")
    # (explain's figures are rounded to 6 decimals: an equal one may read 5e-7 above the score, QA round 81-B F1)
    return structured is not None and structured > hit.score + EXPLAIN_ROUNDING


def word_score(hit, incidental: frozenset[str] = frozenset()) -> float:
    """``hit``'s raw BM25 score less what bare numbers (``24``, ``2026``: terms of digits only) and the
    ``incidental`` terms (:func:`file_extension_terms`) give it, from its explained terms. The gate and the hits
    shown use it: a prompt's numbers (a timeout, a pasted log's times and counts) rank hits like any term, but matched
    alone they only find tables of numbers (QA round 70 C-M1: "bump the timeout from 24 to 40 seconds" injected a
    note for its ``24 | 39`` table, at raw score 3.9)."""
    terms = getattr(hit, "terms", None) or ()  # (a hit without explained terms: its raw score, as it is)
    left_out = [t["bm25"] for t in terms
                if t.get("kind") == "query" and (t["term"].isdigit() or t["term"] in incidental)]
    rest = hit.score - sum(left_out)
    # (each figure is rounded: what the numbers leave may be a residue of their rounding, QA round 81-B F1)
    return rest if rest > EXPLAIN_ROUNDING * len(left_out) else 0.0


_FILE_EXTENSION = LazyPattern(r"(?<=\w)\.([a-z][a-z0-9]{1,3}|[A-Z][A-Z0-9]{1,3})(?!\w)")
"""A file name's extension (``utils.py``, ``README.MD``, ``archive.tar.gz``) or a host name's last part
(``github.com``): a dot after a word character, then two to four lowercase (or capital) letters and digits (one
letter is no term: the analyzer drops it; a longer word after a dot is more often a name's part, ``session.commit``,
or a sentence run on, ``build.docker``, than an extension: QA round 133 F3)."""


_NAME_TOKEN = LazyPattern(r"[^\s\"'`()<>\[\]{},;]+")
"""A run of characters a file name and its path are written with (as :data:`dreamdb.ranking.rank._FILE_NAME_RE` reads
one): what an extension (:data:`_FILE_EXTENSION`) ends the name of."""


def file_extension_terms(prompt: str) -> frozenset[str]:
    """The query terms (as :func:`dreamdb.analyzer.stem` makes them, either language) of the extensions of the file
    names in ``prompt`` (``utils.py`` → ``py``) that none of the prompt's other words gives (``logs`` gives ``log``:
    QA round 133 F3, "where are the logs? see a.log" lost its ``log``). Like bare numbers they rank hits, but
    :func:`word_score` leaves them out of the gate: coding prompts are full of paths, and an extension matched alone
    finds whatever note names a file of that kind ("rename foo in utils.py" injected a changelog entry on video
    watching for its ``py``, at raw score 10.1: QA round 132-C F2). A sentence run on at its period, without the
    space after it, is no file name (:func:`dreamdb.ranking.rank.run_on_sentence`): the word after it is one of the
    prompt's ("the cache.then": QA round 150-H F2)."""
    from dreamdb.analyzer import raw_tokens, stem

    def terms(word: str) -> tuple[str, ...]:
        return word, stem(word, False), stem(word, True)

    text = query_text(prompt)
    if "." not in text:
        return frozenset()
    from dreamdb.ranking.rank import run_on_sentence

    found: set[str] = set()

    def without_extensions(token: re.Match) -> str:
        name = token.group()
        if "." not in name:
            return name

        def extension(m: re.Match) -> str:
            if run_on_sentence(name[:m.end()]):
                return m.group()
            found.add(m.group(1).lower())
            return " "

        return _FILE_EXTENSION().sub(extension, name)

    rest = _NAME_TOKEN().sub(without_extensions, text)
    if not found:
        return frozenset()
    own = {t for w in raw_tokens(rest) for t in terms(w)}
    return frozenset(t for e in found for t in terms(e)) - own


def _parse_int(digits: str) -> int | str:
    """A JSON integer as an int, or as its digits (a str) when it is too long for ``int()`` (Python refuses more
    than 4,300 digits, ``sys.set_int_max_str_digits``). QA round 55: a 5,000-digit number in a field the hook
    never reads made json.loads fail, and the whole prompt went without memories ('payload is not JSON')."""
    try:
        return int(digits)
    except ValueError:
        return digits


_CLAUSE = LazyPattern(r"([^?¿!.,;:\n]*)([?¿!.,;:\s]*)")
"""A clause of a prompt and the punctuation that ends it (a question mark, a comma, a line's end…), with the spaces
after it."""


def _words(prompt: str) -> tuple[list[str], list[str], bool, bool]:
    """``(its words, those it says, greets, asks)`` of what the hook reads of ``prompt`` (:func:`query_text`; QA round
    144-B F3: an acknowledgement was looked for in its first 4,000 characters, and a question after them was not
    read), lowercase and as :func:`_acknowledgement_key` reads them: the words it says are neither stopwords nor
    :data:`FUNCTION_WORDS`, but for :data:`POLITENESS_WORDS` ("thanks a lot" is a phrase of thanks; QA round 144-B F5:
    "please, thanks" was said to hold only common words), nor the words of a greeting question ending its clause
    (:data:`GREETING_QUESTIONS`), which ``greets`` says it holds. ``asks``: it holds a question, an ``¿``, a question mark
    after a clause other than such a greeting, or one of :data:`QUESTION_WORDS` outside one."""
    from dreamdb.analyzer import raw_tokens

    stop, polite = _acknowledgement_keys()[4], _polite_keys()
    questions, greeting_questions = _acknowledgement_keys()[3], _greeting_question_keys()
    text = query_text(prompt)
    keys: list[str] = []
    said: list[str] = []
    greets, asks = False, "¿" in text
    for m in _CLAUSE().finditer(text):
        clause = [_acknowledgement_key(w) for w in raw_tokens(m.group(1))]
        if not clause:  # (punctuation alone, before the first word: "?? thanks" asks, as any question mark did)
            asks = asks or "?" in m.group(2)
            continue
        greeting = next((n for n in range(min(len(clause), _LONGEST_GREETING_QUESTION), 0, -1)
                         if tuple(clause[-n:]) in greeting_questions), 0)
        own = clause[:len(clause) - greeting]
        greets = greets or greeting > 0
        asks = asks or ("?" in m.group(2) and not greeting) or not questions.isdisjoint(own)
        keys += clause
        said += [k for k in own if k not in stop or k in polite]
    return keys, said, greets, asks


@lru_cache(maxsize=1)
def _acknowledgement_keys() -> tuple[frozenset, frozenset, frozenset, frozenset, frozenset]:
    """:data:`ACKNOWLEDGEMENTS` with :data:`GREETINGS`, :data:`ACKNOWLEDGEMENT_PHRASES` with :data:`GREETING_PHRASES`,
    :data:`OUTCOME_WORDS`, :data:`QUESTION_WORDS` and :data:`dreamdb.analyzer.STOPWORDS` as :func:`_acknowledgement_key` reads words; made on the first prompt read (the
    analyzer is not imported with the module: a hook turned off never loads it)."""
    from dreamdb.analyzer import STOPWORDS

    def keys(words):
        return frozenset(map(_acknowledgement_key, words))

    return (keys(ACKNOWLEDGEMENTS | GREETINGS),
            frozenset(tuple(map(_acknowledgement_key, p)) for p in ACKNOWLEDGEMENT_PHRASES | GREETING_PHRASES),
            keys(OUTCOME_WORDS), keys(QUESTION_WORDS), keys(STOPWORDS | FUNCTION_WORDS))


@lru_cache(maxsize=1)
def _greeting_question_keys() -> frozenset:
    """:data:`GREETING_QUESTIONS` as :func:`_acknowledgement_key` reads words."""
    return frozenset(tuple(map(_acknowledgement_key, p)) for p in GREETING_QUESTIONS)


@lru_cache(maxsize=1)
def _polite_keys() -> frozenset:
    """:data:`POLITENESS_WORDS` as :func:`_acknowledgement_key` reads words."""
    return frozenset(map(_acknowledgement_key, POLITENESS_WORDS))


@lru_cache(maxsize=1)
def _function_word_pattern() -> re.Pattern:
    """:data:`FUNCTION_WORDS`, also typed without Turkish letters (``göre`` as ``gore``), as whole words of any case."""
    from dreamdb.analyzer import TURKISH_TO_ASCII

    words = FUNCTION_WORDS | {w.translate(TURKISH_TO_ASCII) for w in FUNCTION_WORDS}
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    # a word of the sentence: between spaces or sentence punctuation, never part of a path, a file or code name, a
    # quoted string or a URL (QA round 102-A F2: "src/around/toward.py", "others.py", "\"whatever\"" lost words)
    return re.compile(rf"(?<![^\s,;!?(\[])(?:{alternatives})(?=$|[\s,;!?)\]]|[.:](?:\s|$))", re.IGNORECASE)


def _typed_in_capitals(text: str) -> bool:
    """Whether ``text`` (a prompt) is typed in capitals: most of its words of prose, a word of two letters or more
    made of letters only and of a script with capitals, are all in capitals, its function words not counted (one in
    capitals may be the acronym the prompt names, ``US``). A path, a file or code name, a URL (``main.go``,
    ``app.py``, ``https://…``) is no word of prose, and a word or two in lower case (a command, ``npm``) leave a
    prompt typed in capitals so (QA round 147-A F1: "CAN YOU HELP US WITH npm" was not all capitals, and kept ``US``);
    a prompt whose words are half or more in lower case is a sentence naming acronyms ("how do we use the AWS API for
    US"), and so is one holding a stopword in lower case, whatever the share: a word of the sentence a prompt typed in
    capitals would have in capitals too (QA round 147-H F1: "DNS TTL for US CDN", three acronyms of four words,
    dropped its ``US``), where a command or name in lower case (``npm``) is no stopword. A stopword is one in any
    spelling the hook reads it in (:func:`_acknowledgement_key`: Turkish typed without its letters too, ``icin``,
    ``nasil``; QA round 148-B F4: "US CDN icin DNS TTL ayari" dropped its ``US``, which "US CDN için DNS TTL ayarı"
    keeps). A stopword is one of :data:`FUNCTION_WORDS` too, looked for before they are left out (QA round 149-B F3:
    "US CDN DNS TTL göre", "please fix US CDN DNS" dropped their ``US``, which "US CDN DNS TTL gibi" keeps)."""
    stopwords = _acknowledgement_keys()[4]  # (the analyzer's stopwords and FUNCTION_WORDS)

    def prose(text: str) -> list[str]:
        return [w for w in (w.strip("\"'`.,:;!?()[]{}<>«»“”‘’") for w in text.split())
                if len(w) > 1 and w.isalpha() and w.lower() != w.upper()]

    if any(w.islower() and _acknowledgement_key(w) in stopwords for w in prose(text)):
        return False
    words = prose(_function_word_pattern().sub(" ", text))
    return 2 * sum(w.isupper() for w in words) > len(words)


_OPENING_CLAUSE = LazyPattern(r"\s*([^?¿!.,;:\n]*)(?:(?:[?¿!,;\n]|[.:](?=\s|\Z))[?¿!.,;:\s]*|\s*\Z)")
"""A prompt's first clause and the punctuation that ends it (``,``, ``!``, ``.``, ``?``, ``;``, ``:``, a line's end,
with the spaces after it; a ``.`` or ``:`` before a space or the end only, not a file's or a host's: ``hello.py``,
``hi:8080``), or the prompt's end."""

_DECORATION = LazyPattern(
    r"(?:[:;]|(?<![^\W_])=)['^-]?(?:[)\]}>|*@$]+|\(+|(?:[DPpOoSsXx3]+|/)(?![^\W_]|[/\\]))"  # :) :-) ;) :D :P :(
    # :/ :3 :'( =), not a URL's :// nor code's a=(b)
    r"|\(+[-'^]?[:;=](?![^\W_])"  # (: (-:
    r"|<3+(?![^\W_])|(?<![^\W_])[xX]D+(?![^\W_])|\^[_.-]?\^|-_+-|\\o/"  # <3 xD ^^ ^_^ -_- \o/
    r"|(?:\.{2,}|…+)(?![/\\])"  # ... …, not ../ (a path)
    r"|\([^()?¿\n]*\)")  # (again), read by _decoration
"""Emoticons, ellipses and parenthetical remarks, which :func:`_decoration` reads as a clause's end."""


def _decoration(text: str) -> str:
    """``text`` (a prompt as the hook reads it) with its emoticons (``:)``, ``:-)``, ``;)``, ``:D``, ``:P``, ``:(``,
    ``<3``, ``xD``, ``^^``), ellipses (``...``, ``…``) and parenthetical remarks of words that say nothing (no ``?``,
    no word but stopwords other than :data:`QUESTION_WORDS`, greetings, :data:`ADDRESS_WORDS` and an addressee:
    ``(again)``, ``(hi again)``, ``(:``) written as as many ``!``: a clause's end, as the hook reads a prompt's clauses
    (:func:`greeting_clause_end`, :func:`_is_acknowledgement`), where they ended none ("Merhaba Claude :)", "Hello,
    Claude...", "Hello, Claude (again)!" injected notes: QA round 152-A F2). Of the same length as ``text``: an offset
    in one is the same in the other. A remark of other words stays, "hello (world)", and so does a path's ``../``."""
    from dreamdb.analyzer import lower, normalize

    greetings = _greeting_keys()[0]
    questions, stop = _acknowledgement_keys()[3:]
    plain = (stop - questions) | greetings | frozenset(map(_acknowledgement_key, ADDRESS_WORDS))
    addressees = _addressee_keys()

    def said(m: re.Match) -> str:
        if m.group(0).startswith("(") and m.group(0).endswith(")") and len(m.group(0)) > 2:
            words = (_acknowledgement_key(lower(normalize(w))) for w in _WORD_RE().findall(m.group(0)))
            rest = tuple(k for k in words if k not in plain)
            if rest and rest not in addressees:
                return m.group(0)
        return "!" * len(m.group(0))

    return _DECORATION().sub(said, text)


def greeting_clause_end(text: str) -> int:
    """Where the greeting clauses that open ``text`` (a prompt as the hook reads it, :func:`query_text`) end: ``0`` when
    it opens with none. A greeting clause is made of greetings (:data:`GREETINGS`, the phrases of
    :data:`GREETING_PHRASES`; stopwords between them are passed over, but for :data:`QUESTION_WORDS`: "hello there",
    "let's get started"), then at
    most one addressee (:data:`ADDRESSEES`: "hi claude", "Günaydın Claude"), and nothing else, up to clause punctuation
    (``,``, ``!``, ``.``, ``?``, ``;``, ``:``, a line's end) or the prompt's end: "hello, how does sync work?" opens
    with one, and is recalled as "how does sync work?". A greeting followed by another word in its clause is a
    question's words, whatever its case: "hello world", "Hello World", "hello world pr", "good morning standup", "hi
    hook" (QA round 150-H F1: "hello, how does sync work?" recalled the objective Hello World PR, "merhaba, sync nasıl
    çalışıyor?" changelog entries titled "merhaba", and "hi claude, how are you?" notes on Claude). Clauses are read
    one after another ("Hello! Good morning, …"); a clause made only of an addressee, after a greeting clause (or such
    an addressee's), is the greeting's too: "Good morning, Claude!", "Hello, Claude", "hey there, team!" (QA round
    151-A F1: they injected notes on Claude and teams, and "Hi, Claude. How does sync work?" recalled ``claude``
    beside the question). Another word in it makes it a question's: "hello, world" is recalled as "world"; so does
    a ``?`` after it, or a stopword other than :data:`ADDRESS_WORDS` ("my", "dear"): "Good morning. And the bot?",
    "Hey Claude! Is the team here?" are recalled as "And the bot?" and "Is the team here?" (QA round 151-H F2). A
    clause of ADDRESS_WORDS alone is the greeting's too ("Hi, you, Claude!", "Hello, my dear, Claude!"), and they are
    passed over in the greeting's own clause, wherever they stand: "Hello dear Claude!", "Merhaba sevgili ekip",
    "Hey dear, how does sync work?" (QA round 152-A F1). Emoticons, ellipses and parenthetical remarks of words that
    say nothing end a clause (:func:`_decoration`): "Merhaba Claude :)", "Hello, Claude...", "Hello, Claude (again)!
    How does sync work?" (QA round 152-A F2)."""
    from dreamdb.analyzer import lower, normalize

    greetings, phrases = _greeting_keys()
    questions, stop = _acknowledgement_keys()[3:]
    stop = stop - questions  # (a question's words are no greeting's: "günaydın, başlayalım mı?" asks)
    addressees = _addressee_keys()
    address_words = frozenset(map(_acknowledgement_key, ADDRESS_WORDS))
    text = _decoration(text)  # (":)", "...", "(again)" end a clause: "Merhaba Claude :)", QA round 152-A F2)
    end, greeted = 0, False
    while True:
        m = _OPENING_CLAUSE().match(text, end)
        if m is None or not m.group(1).strip():
            return end
        keys = [_acknowledgement_key(lower(normalize(w))) for w in _WORD_RE().findall(m.group(1))]
        # (a clause made only of an addressee, after a greeting's, is said to it: "Good morning, Claude!", "hey
        # there, team!", QA round 151-A F1; an address, no question or sentence: with no `?` and no word but the
        # addressee's and ADDRESS_WORDS, stopwords too: "Good morning. And the bot?", "Hey Claude! Is the team
        # here?" ask, QA round 151-H F2)
        # (a clause of ADDRESS_WORDS alone is said to the addressee too: "Hi, you, Claude!", "Hello, my dear,
        # Claude!", QA round 152-A F1)
        address = tuple(k for k in keys if k not in address_words)
        if greeted and "?" not in text[m.end(1):m.end()] and (not address or address in addressees):
            end = m.end()
            continue
        # (ADDRESS_WORDS are passed over in the greeting's own clause too, wherever they stand: "Hello dear Claude!",
        # "Merhaba sevgili Claude", "Hey dear team" as "Hello, dear Claude", QA round 152-A F1)
        words = [k for k in keys if (k not in stop or k in greetings) and k not in address_words]
        i = 0
        while i < len(words):  # greetings, each a word or a phrase
            n = next((n for n in range(min(_LONGEST_PHRASE, len(words) - i), 1, -1)
                      if tuple(words[i:i + n]) in phrases), 1 if words[i] in greetings else 0)
            if not n:
                break
            i += n
        if not i or (i < len(words) and tuple(words[i:]) not in addressees):
            return end
        end, greeted = m.end(), True


_WORD_RE = LazyPattern(r"[^\W_]+")


@lru_cache(maxsize=1)
def _greeting_keys() -> tuple[frozenset, frozenset]:
    """:data:`GREETINGS` and :data:`GREETING_PHRASES` as :func:`_acknowledgement_key` reads words."""
    return (frozenset(map(_acknowledgement_key, GREETINGS)),
            frozenset(tuple(map(_acknowledgement_key, p)) for p in GREETING_PHRASES))


@lru_cache(maxsize=1)
def _addressee_keys() -> frozenset:
    """:data:`ADDRESSEES` as :func:`_acknowledgement_key` reads words."""
    return frozenset(tuple(map(_acknowledgement_key, p)) for p in ADDRESSEES)


def without_greeting(text: str) -> str:
    """``text`` (a prompt as the hook reads it) without the greeting clauses that open it (:func:`greeting_clause_end`):
    what the hook recalls for a prompt, with :func:`without_function_words`."""
    return text[greeting_clause_end(text):]


def without_function_words(text: str) -> str:
    """``text`` with each of :data:`FUNCTION_WORDS` (a word of the sentence, between spaces or sentence punctuation,
    in lower case or capitalised) replaced by a space: what the hook recalls for a prompt. A word in capitals
    (``US``, an acronym) in a prompt not typed in capitals, words joined to others (``us-east``, ``src/around/x.py``,
    ``others.py``, ``"whatever"``) and every other character are kept. In a prompt typed in capitals
    (:func:`_typed_in_capitals`) a word in capitals is no sign of an acronym, and goes
    as its lowercase form does (QA round 146-D F2: "PLEASE FIX IT" injected notes for ``please``, "CAN YOU HELP US"
    for ``us``, where "please fix it" printed nothing; 147-A F1: so did "CAN YOU HELP US WITH npm", whose ``npm``
    is in lower case)."""
    pattern = _function_word_pattern()
    shouted = _typed_in_capitals(text)
    return pattern.sub(lambda m: m.group(0) if not shouted and len(m.group(0)) > 1 and m.group(0).isupper()
                       else " ", text)


def _is_acknowledgement(prompt: str) -> bool:
    """Whether the prompt, as the hook reads it (:func:`query_text`), is conversation (:data:`ACKNOWLEDGEMENTS`,
    :data:`GREETINGS`, their phrases, greeting questions ending their clause (:data:`GREETING_QUESTIONS`) and stopwords
    only, not :data:`OUTCOME_WORDS` alone), or has no word at all; never a question (a question mark or one of
    :data:`QUESTION_WORDS`, but for a greeting question's: "merhaba, nasılsın?" is a greeting). It is read after the
    greeting clauses that open it (:func:`greeting_clause_end`), addressees and all: "Günaydın Claude" and "hi
    claude, how are you?" are conversation; and without its emoticons, ellipses and parenthetical remarks of no word
    that says anything (:func:`_decoration`: "thanks xD", "ok :P", "Merhaba Claude :)"). Thanks or praise may be
    said to someone too, with :data:`ADDRESSEES` and :data:`ADDRESS_WORDS` before or after them: "Thanks, Claude",
    "teşekkürler hocam", "great job, team!" (QA round 152-A F2); an addressee alone ("Claude, team") or with
    :data:`OUTCOME_WORDS` alone ("fixed, claude") is no conversation."""
    acknowledgements, phrases, outcomes = _acknowledgement_keys()[:3]
    addressees, address_words = _addressee_keys(), frozenset(map(_acknowledgement_key, ADDRESS_WORDS))
    # (emoticons, "...", "(again)" are read as clause ends: "thanks xD", "Merhaba Claude :)", QA round 152-A F2)
    text = _decoration(query_text(prompt))
    # (a greeting clause, an addressee and all, is conversation: "Günaydın Claude", "hi claude, how are you?" are
    # read as what follows them, QA round 150-H F1)
    cut = greeting_clause_end(text)
    # (stopwords compared without Turkish letters too: "cok" is "çok"; QA round 79 F2)
    keys, words, _greets, asks = _words(text[cut:])
    if keys and asks:
        return False
    if not words:
        return True
    # reached[i]: how words[:i] can be read, as units of acknowledgements, phrases, addressees and words of address
    # (every way of reading it, not the longest phrase first: "süper iş çıkardın" is "süper" + "iş çıkardın", QA round
    # 78 F2): 0, addressees alone (or nothing); 1, acknowledgements all OUTCOME_WORDS ("fixed", "works": a question's
    # words too, QA round 79 F3); 2, an acknowledgement that is no outcome's, which the prompt must hold
    reached: list[set[int]] = [{0}] + [set() for _ in words]
    for end in range(1, len(words) + 1):
        for n in range(1, min(max(_LONGEST_PHRASE, _LONGEST_ADDRESSEE), end) + 1):
            unit, before = tuple(words[end - n:end]), reached[end - n]
            if not before:
                continue
            if unit in addressees or (n == 1 and unit[0] in address_words):
                reached[end] |= before
            if (n == 1 and unit[0] in acknowledgements) or (n > 1 and unit in phrases):
                kind = 1 if all(w in outcomes for w in unit) else 2
                reached[end] |= {max(k, kind) for k in before}
    return 2 in reached[-1]


def _encodable(path: str) -> bool:
    """Whether ``path`` can be passed to the operating system (a lone surrogate from JSON's ``\\ud800`` cannot)."""
    try:
        os.fsencode(path)
    except UnicodeError:
        return False
    return True


def note_ignored_arguments(args) -> None:
    """Write to the hook log that ``args`` (command-line arguments the hook does not take) were ignored: the hook
    never refuses them, since Claude Code reads a hook's exit code 2 as "block this prompt" (QA rounds 52, 53)."""
    if args:
        _log(f"arguments ignored (the hook takes none; the payload comes on stdin): {' '.join(args)[:200]}")


_WITHOUT_MEMORY_MAP = False
"""Whether this process reads the index without a memory map (:func:`run_stdin`: the hook's own process)."""


def run_stdin() -> int:
    """Read the payload from stdin, print the block (if any); always return 0 (the exit code).

    The index is read without a memory map (:func:`dreamdb.store.connect.read_without_memory_map`): the index file
    truncated in place while the hook read it killed it with SIGBUS, exit 135 (QA round 148-D F2)."""
    import sys

    global _WITHOUT_MEMORY_MAP
    _WITHOUT_MEMORY_MAP = True  # (set when the index is opened: a call that opens none imports no SQLite driver)
    out = None
    try:
        try:
            data = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        except (OSError, ValueError, AttributeError):
            data = ""
        out = run(data)
        if out:
            try:
                raw = getattr(sys.stdout, "buffer", None)
                if raw is not None:  # UTF-8, as the agent reads it, whatever the locale (QA round 93-A F3)
                    sys.stdout.flush()
                    raw.write(out.encode("utf-8", "replace"))  # (a lone surrogate: "?", not a lost block)
                    raw.flush()
                else:
                    sys.stdout.write(out)
                    sys.stdout.flush()
            except (OSError, ValueError) as exc:  # the prompt goes on without its memories: say so in the log
                _log(f"could not print the recall block ({exc}); nothing injected")
                _drop_output()
    except KeyboardInterrupt:  # (Ctrl-C, SIGTERM, SIGHUP: entry.main) outside run: logged as run logs it (QA round
        # 146-I F4: one while the hook waited for its payload on stdin exited 0 with nothing in the log)
        with suppress(KeyboardInterrupt):
            _log("hook interrupted while it read the prompt; nothing printed" if out is None
                 else "hook interrupted while it printed the recall block")
    return 0


def _drop_output() -> None:
    """Drop what standard output holds unwritten after a write that failed (a full disk, a closed descriptor), and
    point it at the null device: the buffered writer kept the block, and Python wrote it again at exit, which failed
    again ("Exception ignored in: <_io.TextIOWrapper name=1>"), so the hook exited 120 with that on stderr, buffered
    or not (``PYTHONUNBUFFERED=1``: :func:`dreamdb.entry._buffered_output`), where it always exits 0 (QA round 144-I
    F1). Closing the stream leaves its descriptor open (standard output's streams never close it)."""
    import sys

    from dreamdb.quickcli import _silence_stdout

    with suppress(OSError, ValueError, AttributeError):  # (its flush fails again as it closes: what it held is dropped)
        sys.stdout.close()
    _silence_stdout()


def _recall_mode() -> str:
    """The recall mode ``DREAMDB_RECALL_MODE`` names (spaces around it and its case ignored; unset: bm25), or bm25,
    with a line in the log, when it names none. QA round 57: ``bogus`` made every recall fail, so the hook printed
    nothing at all (the log only said "hook failed: UsageError"); ``dreamdb recall`` still refuses it (exit 2)."""
    from dreamdb.api import MODES

    value = os.environ.get("DREAMDB_RECALL_MODE", "")
    mode = value.strip().lower() or "bm25"
    if mode not in MODES:
        _log(f"DREAMDB_RECALL_MODE={_one_line(value, 60)!r} is unknown (use one of: {', '.join(MODES)}); used bm25")
        return "bm25"
    return mode


BUILD_RETRY_SECONDS = 300
"""After a background build (:func:`_built_elsewhere`) that failed (its output holds an ``Error:`` line), how long
(s) prompts wait before starting another: its output is logged once, and a build that cannot succeed (a full disk,
an index path that cannot be written) is not started again on every prompt (QA round 60 M1). A build that ended
without an error and without the index (killed) is started again at once; one that succeeded never holds one back
(QA round 61 M2)."""

_REPORTED = "# reported by the prompt hook"
"""The line the hook appends to a failed build's log once it has logged it."""


def _build_log(index) -> Path:
    """The file a background build's output goes to, beside the index (in the folder that holds it)."""
    return index.index_path.with_name(index.index_path.name + ".build.log")


def _open_log(path: Path, flags: int) -> int | None:
    """A descriptor of the build log ``path`` opened with ``flags``, only if it is a regular file reached without a
    symbolic link (``O_NOFOLLOW``; ``O_NONBLOCK``: a FIFO never blocks): a repository can ship that path as a link to
    a file of the user's, which a prompt would truncate and fill with note names (QA round 61 H1). ``None``
    otherwise (missing, a link, a FIFO, …): :func:`dreamdb.vault.discover.open_regular`; and for a file of several
    names (a hard link to a file of the user's, which a prompt would empty as well: QA round 114-C F1)."""
    from dreamdb.vault.discover import open_regular

    try:
        fd = open_regular(path, flags, follow=False)
    except OSError:
        return None
    try:
        several = os.fstat(fd).st_nlink > 1
    except OSError:
        several = True
    if several:
        os.close(fd)
        return None
    return fd


def _previous_build(build_log: Path) -> tuple[str, list[str], float]:
    """What the last background build of this index did: ``(state, its output's last lines, age in s of the log)``
    with ``state`` ``"none"`` (no log to read), ``"running"`` (the child holds the log's lock: it inherited the
    descriptor the hook locked), ``"failed"`` (an ``Error:`` line), ``"reported"`` (failed, and logged already)
    or ``"ended"`` (finished without an error: it succeeded, or was killed)."""
    fd = _open_log(build_log, os.O_RDONLY)
    if fd is None:
        return "none", [], 0.0
    try:
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return "running", [], 0.0
        age = time.time() - os.fstat(fd).st_mtime
        size = os.fstat(fd).st_size
        os.lseek(fd, max(0, size - 4000), os.SEEK_SET)
        lines = os.read(fd, 4000).decode("utf-8", "replace").strip().splitlines()
    except (OSError, ImportError):
        return "none", [], 0.0
    finally:
        os.close(fd)
    if lines and lines[-1] == _REPORTED:
        return "reported", lines[:-1], age
    if any(line.startswith("Error:") for line in lines):
        return "failed", lines, age
    return "ended", lines, age


def _built_elsewhere(index, vault: Path) -> bool:
    """Whether the index is to be built by another process rather than this prompt: its whole index is due
    (:func:`dreamdb.store.sync.whole_index_due`) and either a writer holds it, another process rebuilds it after
    damage (:func:`_rebuilt_elsewhere`) or a background build runs (nothing to answer from yet), or one failed less
    than :data:`BUILD_RETRY_SECONDS` ago (its output logged once), or the vault holds more than
    :data:`INLINE_BUILD_BYTES` or :data:`INLINE_BUILD_FILES` to index, in which case a detached ``dreamdb sync`` is
    started for it (it outlives the hook, even one its caller stops; its output goes to :func:`_build_log`). Logged."""
    from dreamdb.store import connect as db
    from dreamdb.store.sync import INDEX_FORMAT, formats_written, stored_index_format, whole_index_due
    from dreamdb.vault.discover import walk_sources

    def due() -> bool:  # (guarded: a damaged index is rebuilt here, whatever the vault's size, as _synced_elsewhere's
        # check does, not a failed hook; QA round 146-D F1: a damaged page of `meta` stopped every prompt)
        return index._guarded(lambda: whole_index_due(index.conn))

    if not due():
        return False
    if _rebuilt_elsewhere(index):  # (a damaged index another process rebuilds: empty until that process's sync takes
        # the write lock, after its walk of the vault; QA round 154-C F2, a prompt between started a sync of its own)
        _why(f"{vault}: the index is being built by another process; nothing printed until it is done")
        return True
    conn = index.conn
    try:  # another process's build is waited for up to LOCK_WAIT_MS, as the README says (QA round 69 E-M2: not at all)
        # (in slices, Ctrl-C seen within 0.1 s: QA round 145-J F1; the busy timeout LOCK_WAIT_MS after it, as before)
        db.execute_waiting(conn, "BEGIN IMMEDIATE", LOCK_WAIT_MS)
        conn.execute("ROLLBACK")
    except db.OperationalError as exc:
        if not db.is_lock_error(exc):
            return False  # (an index that cannot be written: the sync below says how it is read)
        _why(f"{vault}: the index is being built by another process; nothing printed until it is done")
        return True
    if not due():  # built meanwhile by the process waited for: answer from it
        return False
    found = stored_index_format(conn)  # (the row just read: its page is sound)
    stored = (found, INDEX_FORMAT in formats_written(conn)) if found else None
    build_log = _build_log(index)
    if _left_to_background(vault, build_log, "index build", "nothing printed until it is done"):
        return True
    files = size = 0
    for src in walk_sources(vault, include_archives=index.include_archives):
        files += 1
        size += src.size
    if size <= INLINE_BUILD_BYTES and files <= INLINE_BUILD_FILES:
        return False
    index.close()  # (no connection of this process left open on the file the build writes)
    pid = _start_build(vault, index.index_path, build_log)
    if pid is None:
        return False  # (no log file of its own could be made beside the index: built here, as before)
    if pid < 0:
        _why(f"{vault}: a background index build was just started by another prompt; nothing printed")
        return True
    over = f"{size:,} bytes to index, over the {INLINE_BUILD_BYTES:,}" if size > INLINE_BUILD_BYTES else \
        f"{files:,} files to index, over the {INLINE_BUILD_FILES:,}"
    _log(f"{vault}: the index must be {_why_built(stored)} ({over} the hook builds itself): started `dreamdb sync` in"
         f" the background (pid {pid}; its output: {build_log}); nothing printed for this prompt")
    return True


def _rebuilt_elsewhere(index) -> bool:
    """Whether another process holds the index's rebuild lock (``<index>.rebuild.lock``) for :data:`LOCK_WAIT_MS`: it
    found the index damaged and rebuilds it, holding the lock from the moment it deletes the file until its sync has
    filled the new one (:meth:`dreamdb.api.Index._rebuild_lock`). Not this Index's own; not made where it is not there
    (nobody holds it) or cannot be made."""
    path = f"{index.index_path}.rebuild.lock"
    if index._rebuild_held is not None or not os.path.exists(path):
        return False
    from dreamdb import config

    return config.held_elsewhere(path, LOCK_WAIT_MS / 1000)


def _why_built(stored: tuple[str, bool] | None) -> str:
    """What the whole index's build is, for the log: ``built`` (none yet, or after damage), or indexed again for an
    index another version of dreamdb wrote (``stored``: its format, and whether this version wrote the index before:
    two versions taking turns; QA round 115-B F1, the log said "must be built" of every switch)."""
    if stored is None:
        return "built"
    fmt, before = stored
    return (f"indexed again in this version's format (another version of dreamdb, index format {fmt}, indexed it"
            + (" since this one last did: two installs taking turns on a vault index it whole at every switch; use"
               " one version" if before else "") + ")")


def _left_to_background(vault: Path, build_log: Path, what: str, meanwhile: str, *, after_failure: str | None = None
                        ) -> str:
    """``"running"`` when a background ``dreamdb sync`` (its output in ``build_log``) runs, ``"failed"`` when one
    failed less than :data:`BUILD_RETRY_SECONDS` ago, else ``""``; either of the first two is said (``what`` it is:
    "index build", "sync"; ``meanwhile``: what the prompt does while it runs; ``after_failure``: what the prompt does
    after a failure, if the caller does anything). A failure's output is logged once; a build that ended before it
    finished is logged, and another may start."""
    state, lines, age = _previous_build(build_log)
    if state == "running":
        _why(f"{vault}: a background {what} is running; {meanwhile}")
        return "running"
    if state in ("failed", "reported") and age < BUILD_RETRY_SECONDS:
        wait = max(0, int(BUILD_RETRY_SECONDS - age))
        then = f"{after_failure}; " if after_failure else ""
        if state == "failed":
            _log(f"{vault}: the background {what} failed: " + " / ".join(_one_line(line, 300) for line in lines[1:][-3:])
                 + f" (output: {build_log}); {then}the next prompt to try again is in {wait} s, or run: dreamdb sync")
            fd = _open_log(build_log, os.O_WRONLY | os.O_APPEND)
            if fd is not None:
                with suppress(OSError):
                    os.write(fd, f"{_REPORTED}\n".encode())
                os.close(fd)
        else:
            _why(f"{vault}: the background {what} failed (logged before); {then}next try in {wait} s")
        return "failed"
    if state == "ended" and not any(" added, " in line or " indexed again" in line for line in lines):
        # (a sync's last line: "N added, …", or "N files indexed again, …" when it rebuilt the index)
        _log(f"{vault}: the background {what} ended before it finished (stopped or killed:"
             f" {_one_line(lines[-1], 200) if lines else 'no output'}); starting another")
    return ""


def _synced_elsewhere(index, vault: Path) -> bool | None:
    """Whether the changes waiting to be indexed are left to another process, the prompt answering from the index as it
    is (logged): the files new or changed since the last sync hold more than :data:`INLINE_SYNC_BYTES` of text to
    index or :data:`INLINE_SYNC_READ_BYTES` to read, or are more than :data:`INLINE_SYNC_FILES`, and a detached
    ``dreamdb sync`` is started for them, or one runs already (one that failed less than :data:`BUILD_RETRY_SECONDS`
    ago leaves them to this prompt, logged). ``None`` when nothing changed since the last sync: no sync is needed (its
    stat of every file is not made twice: 58 ms a prompt in a vault of 20,000 notes).
    (QA round 90-C F1: a 40 MB note added to an indexed vault held every prompt 10 s and 825 MB, and a hook its caller
    stopped rolled its sync back, so the note was never indexed.)"""
    from dreamdb.store.sync import files_to_index, whole_index_due

    # (guarded: a damaged index is rebuilt here, as the sync it stands before would, not a failed hook)
    pending = index._guarded(lambda: files_to_index(index.conn, vault, include_archives=index.include_archives))
    if pending is None:
        return None
    files, size, read = pending
    if size <= INLINE_SYNC_BYTES and read <= INLINE_SYNC_READ_BYTES and files <= INLINE_SYNC_FILES:
        return False
    if index._guarded(lambda: whole_index_due(index.conn)):  # (a whole index to build, which INLINE_BUILD_* allow here
        return False  # (_built_elsewhere): the limits on changes, half of those, are not a build's)
    build_log = _build_log(index)
    # (after a failure, this prompt syncs: an index left as it was for minutes would answer without the changes, QA
    # round 91 F8: a lock held for 14 s kept the changes out for 5 minutes)
    state = _left_to_background(vault, build_log, "sync", "recalled from the index as it is",
                                after_failure="this prompt syncs the changes itself")
    if state:
        return state == "running"
    pid = _start_build(vault, index.index_path, build_log)
    if pid is None:
        return False  # (no log file of its own could be made beside the index: synced here, as before)
    if pid > 0:
        over = f"{size:,} bytes of new or changed files to index, over the {INLINE_SYNC_BYTES:,} the hook indexes" \
            if size > INLINE_SYNC_BYTES else \
            f"{files:,} files new, changed or removed to index, over the {INLINE_SYNC_FILES:,} the hook indexes" \
            if files > INLINE_SYNC_FILES else \
            f"{read:,} bytes of new or changed files to read, over the {INLINE_SYNC_READ_BYTES:,} the hook reads"
        _log(f"{vault}: {over} itself: started `dreamdb sync` in the background (pid {pid}; its"
             f" output: {build_log}); recalled from the index as it is")
    return True


_PATH_VARIABLES = ("DREAMDB_CACHE_DIR", "DREAMDB_MODEL_DIR", "DREAMDB_HOOK_LOG", "DREAMDB_LEXICON")
"""dreamdb's environment variables that name a file or folder, a relative one taken from the current folder."""


def _child_environment(index_path: Path) -> dict[str, str]:
    """The environment of the background ``dreamdb sync`` (:func:`_start_build`), which runs in another folder: the
    index path this process uses, and every relative path dreamdb's variables give made absolute from this process's
    folder (QA round 116-A F3: a relative DREAMDB_CACHE_DIR put the build in the folder holding the dreamdb package,
    and the hook, looking in its own, started another at every prompt). A word such as ``off`` stays as it is."""
    from dreamdb.lexicon import lexicon_path

    env = dict(os.environ)
    if env.get("DREAMDB_INDEX", "").strip():
        env["DREAMDB_INDEX"] = str(index_path)
    for name in _PATH_VARIABLES:
        value = env.get(name, "")
        if not value.strip() or os.path.isabs(os.path.expanduser(value)):
            continue
        if name == "DREAMDB_LEXICON":  # (read as this process reads it: a word such as off stays a word, QA 117-A F4)
            path = lexicon_path()
            if path is not None:
                env[name] = os.path.abspath(path)
        else:  # (as the value is, spaces too: the path this process uses, QA round 117-A F4)
            env[name] = os.path.abspath(os.path.expanduser(value))
    return env


def _start_build(vault: Path, index_path: Path, build_log: Path) -> int | None:
    """Start ``dreamdb sync`` for ``vault`` in a new session, its output to ``build_log``: its pid; -1 when another
    prompt's build holds the log; ``None`` when the log cannot be made a regular file of its own (a link, a FIFO).

    The log is locked (``flock``) before the child starts, and the child inherits that lock with the descriptor:
    it is held for as long as the child runs, killed or not (:func:`_previous_build`). The child runs the dreamdb
    this process runs, never a ``dreamdb`` module of the project: it starts in the folder that holds the dreamdb
    package, with ``-P`` (Python 3.11+) so that neither that folder nor the project's is searched first (QA round
    60 H1: from the project's folder, ``-m dreamdb`` ran a ``dreamdb.py`` there), and is given the index path,
    absolute, that this process uses."""
    import subprocess
    import sys

    import dreamdb

    try:
        import fcntl
    except ImportError:  # (no flock: the build is made here, as before)
        return None
    fd = _open_log(build_log, os.O_WRONLY | os.O_CREAT)
    if fd is None:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return -1
        os.ftruncate(fd, 0)
        os.write(fd, f"{datetime.now(timezone.utc).isoformat(timespec='seconds')} dreamdb sync --vault {vault}\n".encode())
        trusted = os.path.dirname(os.path.dirname(os.path.abspath(dreamdb.__file__)))
        env = _child_environment(index_path)
        flags = ["-P"] if sys.version_info >= (3, 11) else []
        child = subprocess.Popen([sys.executable, *flags, "-m", "dreamdb", "sync", "--vault", str(vault)],
                                 cwd=trusted, env=env, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd,
                                 start_new_session=True, close_fds=True)
        return child.pid
    except OSError:
        return None
    finally:
        os.close(fd)  # (the child keeps its copies, and with them the lock)


def _recall_block(prompt: str, cwd: str | None) -> str:
    from dreamdb.api import WAL_NOT_FOLDED, Index, index_unwritable
    from dreamdb.errors import IndexUnavailable, LockTimeout, RebuildElsewhere, VaultNotFound
    from dreamdb.store.connect import read_without_memory_map
    from dreamdb.vault.discover import find_vault

    if _WITHOUT_MEMORY_MAP:  # (QA round 148-D F2: SIGBUS, exit 135, of an index truncated in place under the read)
        read_without_memory_map()

    try:
        project = os.environ.get("CLAUDE_PROJECT_DIR", "").strip()  # (QA round 108-B F4: a cwd out of the project)
        vault = find_vault(None, cwd=Path(cwd) if cwd else None, project_first=True,
                           project_dir=Path(project) if project and os.path.isabs(project) else None)
    except (RuntimeError, OSError) as exc:
        from_project = getattr(exc, "project_dir", None)  # (CLAUDE_PROJECT_DIR's walk: named, not cwd, QA 146-D F6)
        if cwd is None and from_project is None or isinstance(exc, FileNotFoundError):
            raise
        # (a symlink loop, a name too long: logged as "hook failed … DREAMDB_DEBUG", a bug's words, QA round 100-B F4)
        reason = "a symlink loop" if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP \
            else exc.strerror or str(exc)
        what = f"cwd {_one_line(repr(cwd), 200)}" if from_project is None else \
            f"CLAUDE_PROJECT_DIR {_one_line(repr(str(from_project)), 200)}"
        _log(f"hook: {what} is not a usable path ({reason}); nothing printed")
        return ""
    except VaultNotFound as exc:
        if exc.from_walk:  # a vault the walk found and refused (a _dream_context link to a folder above it, an
            # unreadable one): its own words, whatever DREAMDB_VAULT says (QA round 116-A F5: "no vault in or above")
            _log(_one_line(f"{exc.message.rstrip('.')}", 400) + "; nothing printed")
        elif os.environ.get("DREAMDB_VAULT", "").strip():  # set, and wrong: that is the reason (QA round 37), not the folder;
            # a setting that turns the hook off is logged, verbose or not, as a bad DREAMDB_RECALL_MODE is (QA round 62 L7)
            _log(_one_line(f"DREAMDB_VAULT={os.environ['DREAMDB_VAULT']}: {exc.message.rstrip('.')}", 400)
                 + "; nothing printed")  # (cut as a whole: the message names the path again, QA round 64 L5)
        elif cwd and not os.path.isdir(cwd):  # (QA round 102-B F2: "no vault in or above examples", a folder that
            # was not there: a relative cwd read from the hook's own working folder)
            _why(f"cwd {_one_line(repr(cwd), 200)} is no folder" + (  # (repr: QA round 139-C F5, "<proj>\n")
                "" if os.path.isabs(cwd) else f" (from {os.getcwd()}, as a relative path is read)") + "; nothing printed")
        else:
            project = os.environ.get("CLAUDE_PROJECT_DIR", "").strip()
            also = f" nor in or above CLAUDE_PROJECT_DIR {project}" if project and os.path.isabs(project) else ""
            where = cwd or os.getcwd()
            real = os.path.realpath(where)  # (the walk goes up the folders' real path, as git's does: a linked
            # folder's is said, not the one the link is in; QA round 121-C F7)
            shown = where if real == os.path.abspath(where) else f"{real} (where {where} leads)"
            why = f"{exc.detail}; " if getattr(exc, "detail", None) else ""  # (QA round 139-C F5: "no vault", of
            # a _dream_context that is a file or a link to nothing, where recall says which)
            _why(f"no _dream_context vault in or above {shown}{also} ({why}and DREAMDB_VAULT is not set); nothing"
                 " printed")
        return ""
    mode = _recall_mode()
    index = Index(vault, auto_sync=False, lock_timeout_ms=LOCK_WAIT_MS, allow_model_build=False, engine="sql",
                  lazy_refresh_seconds=REFRESH_SECONDS)
    index._plan_noted = False  # (explain's notes on how the prompt's words were read: no LOGGED_NOTES among them)
    try:
        if _built_elsewhere(index, vault):
            for warning in index.warnings:  # (an index found damaged when opened, replaced by an empty one that the
                # background build fills: QA round 108-B F2, the log had no word of the damage)
                if "rebuilt from the vault" in warning or "another application's SQLite database" in warning:
                    _log(f"{vault}: {warning} (an empty index, which the build filling it makes whole)")
            return ""
        try:
            # (a damaged index rebuilt by this prompt is written down)
            for warning in ([] if _synced_elsewhere(index, vault) is not False else index.sync().warnings):
                # (QA round 76 F8: the log had no word of it; 101-A F5: nor of a rebuild of another version's index,
                # the older install's hook and a newer command line rebuilding it in turn)
                # (145-J F5: nor of a sync left in the -wal file, the disk full until a later command folds it)
                if "rebuilt from the vault" in warning or "version of dreamdb (index format" in warning \
                        or warning.startswith(WAL_NOT_FOLDED):
                    _log(f"{vault}: {warning}")  # (the vault named: one log for every project, QA round 132-E F3)
        except LockTimeout as exc:
            if isinstance(exc, RebuildElsewhere):  # (damaged, rebuilt by another process: nothing to recall from, and
                raise  # the recall would wait for that rebuild again; QA round 152-C F2)
            _log(f"{vault}: index locked by another writer; recalled from the index as it is")
        except IndexUnavailable as exc:
            # read-only, or a write that a full disk stopped (QA rounds 48, 50): the index as it is still answers
            if index.read_only_reason is None and not index_unwritable(exc):
                raise
            _log(f"{vault}: {exc.message} ({exc.hint}); recalled from the index as it is" if exc.hint else
                 f"{vault}: {exc.message}; recalled from the index as it is")
        # A fused mode's first hits may all be the dense channel's, of raw score 0, which the block leaves out
        # below, while the notes holding the prompt's words come after them (a changelog entry has no vector, a note
        # in the other language takes a BM25 rank from the dense channel: QA round 74 F2, the only notes on
        # "sprockets" were fused 4th and 5th and nothing was printed): the block takes the first TOP of the hits
        # it shows, out of as many as the fusion ranks.
        depth = TOP if mode == "bm25" else FUSED_DEPTH
        hits = index.recall(prompt, top=depth, exclude_types="bookmark", mode=mode, explain=True)  # (terms: word_score)
        # A note whose file is gone since the index was last synced (another process holding the write lock kept this
        # one from syncing) is not shown as a memory: one stat a hit (QA round 86-A M2; recall says so on stderr)
        there = [_file_there(h.path) for h in hits]
        gone = {i for i, (exists, _unnamed) in enumerate(there) if not exists}
        unnamed = [h.doc_id for (exists, name_unread), h in zip(there, hits) if exists and name_unread]
        if unnamed:  # (QA round 156-D F6: logged as gone, where recall said why it skipped them and showed them)
            from dreamdb.vault.discover import python_reads_names_as

            _log(f"{vault}: {len(unnamed)} hit(s) whose file name this Python cannot read (it reads file names as"
                 f" {python_reads_names_as()}, not UTF-8: a C or POSIX locale with PYTHONUTF8=0) shown as the index"
                 f" last synced them, not synced again ({', '.join(unnamed)[:200]}); set PYTHONUTF8=1 or a UTF-8"
                 " locale (LC_ALL=C.UTF-8)")
        if gone:
            _log(f"{vault}: left out {len(gone)} hit(s) whose file is gone since the index was last synced"
                 f" ({', '.join(hits[i].doc_id for i in sorted(gone))[:200]})")
            hits = [h for i, h in enumerate(hits) if i not in gone]
        replaced = False
        for note in index.take_notes():  # a quiet fallback, partial dense results, a rebuild: written down
            # (and a lexicon it could not use: QA round 78 F7, DREAMDB_LEXICON naming another file changed the hits
            # without a word in the log)
            if any(mark in note for mark in LOGGED_NOTES):
                _log(f"{vault}: {note}")
            replaced = replaced or "was deleted or replaced since it was opened" in note
        if replaced and not hits:  # (the index deleted under this prompt, after its sync: the new file holds nothing
            # yet; QA round 100-B F3, logged as "no hit")
            _log(f"{vault}: the index was deleted or replaced during this prompt; nothing printed (the next prompt"
                 " builds it)")
            return ""
        # raw score 0: not the prompt's own words, left out, unless their translations (counted with them in
        # rankScore, classes) are the note's words: "günlükler kaç gün tutuluyor" left out recall's first hit, the
        # English note on log retention (QA round 72 F7)
        incidental = file_extension_terms(prompt)
        shown = [h for h in hits if word_score(h, incidental) > 0 or translated(h)][:TOP]
        shown = _successors_first(shown)
        # The gate is the best raw score among the hits shown, not the first one's: rank 1 may have a raw score
        # of 0 (matched through a translation counted with the query's word) while a runner-up holds the query's
        # words themselves. Bare numbers and file extensions are left out of both (word_score).
        best = max(shown, key=lambda h: word_score(h, incidental), default=None)
        if best is None or word_score(best, incidental) < INJECT_THRESHOLD:
            of = best or (hits[0] if hits else None)
            numbers = "" if of is None or word_score(of, incidental) == of.score else \
                " without bare numbers and file extensions"
            _why(f"{vault}: no hit" if not hits else
                 f"{vault}: no hit holds the prompt's words (first {hits[0].doc_id}, raw BM25 score{numbers} 0);"
                 " nothing printed"
                 if best is None else f"{vault}: best raw BM25 score{numbers} {word_score(best, incidental):.2f} "
                 f"({best.doc_id}) is below {INJECT_THRESHOLD:g}; nothing printed")
            return ""
        _why(f"{vault}: injected {len(shown)} hits, first {shown[0].doc_id}; highest raw BM25 score {best.score:.2f}"
             f" ({best.doc_id}, the gate's)")  # (hits in rankScore order; the gate is on raw scores: QA round 39)
        block = render_block(shown, name_vault=not _found_alone(cwd, vault))  # (before close: snippets read the index)
        for note in index.take_notes():  # (a hit's body read for its snippet from a damaged index rebuilds it, with a
            # note: QA round 150-D F1, the snippet line was left empty without a word in the log)
            if any(mark in note for mark in LOGGED_NOTES):
                _log(f"{vault}: {note}")
        return block
    finally:
        index.close()
