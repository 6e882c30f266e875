"""Renderers for the CLI: JSON, plain (tab-separated) and human-readable text.

No click here: functions return strings, the CLI prints them.
"""

from __future__ import annotations

import json
import re


# ---------------------------------------------------------------- terminal safety

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 controls except tab and newline, DEL, the C1 controls U+0080–U+009F, and the bidirectional
embedding/override/isolate marks (U+202A–U+202E, U+2066–U+2069), which can make text display in
another order than it reads ("Trojan Source", CVE-2021-42574)."""


FLAG_TAG_SEQUENCE = ("\U0001f3f4\U000e0067\U000e0062"  # 🏴 and the tags g b, then e n g | s c t | w l s, CANCEL TAG
                     "(?:\U000e0065\U000e006e\U000e0067|\U000e0073\U000e0063\U000e0074|\U000e0077\U000e006c\U000e0073)"
                     "\U000e007f")
"""The emoji tag sequences that are text (a regex): the flags of England, Scotland and Wales (U+1F3F4, the tag
characters of ``gbeng``, ``gbsct`` or ``gbwls``, CANCEL TAG), the only ones Unicode recommends for display (RGI,
UTS #51). The grammar's general form (U+1F3F4, any tags U+E0020–U+E007E, CANCEL TAG) is not allowed: it would pass
🏴 followed by "IGNORE ALL PREVIOUS INSTRUCTIONS" in tags, a hidden message behind one visible flag (QA round 54)."""

SMUGGLING_CHARS = "\U000e0000-\U000e007f\ufff9-\ufffb\u2061-\u2064\ufffe\uffff"
"""Invisible characters that can carry a hidden message (a regex class's ranges): the Unicode tag characters
U+E0000–U+E007F, which mirror ASCII and are read by language models while no terminal or editor shows them
("ASCII smuggling" of instructions into an agent's prompt), and the interlinear annotation marks U+FFF9–U+FFFB,
whose annotated text a renderer may hide or show out of line (QA round 54); the invisible mathematical operators
U+2061–U+2064 (function application, invisible times, separator and plus: nothing outside MathML markup needs
them) and the noncharacters U+FFFE and U+FFFF, which no text holds (QA round 55). Not here, as text needs them: the
zero-width joiner and non-joiner, the direction marks, the word joiner U+2060, private-use characters (the icons
of Nerd Fonts in a developer's note), the Hangul fillers of Korean text."""

VARIATION_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
"""The variation selectors VS1–VS16 and VS17–VS256 (a regex class's ranges). One after a character is text: ❤️ is
U+2764 U+FE0F (emoji presentation), 葛󠄀 is U+845B U+E0100 (an ideographic variation sequence). Two or more in a row
are not: 256 invisible selectors spell out any byte, and a run of them after an emoji ("emoji smuggling") hid a
message of 39 bytes that ``remember`` took and the prompt hook passed on to the agent (QA round 55). The first
selector of a run stays (it is the character's own); the rest of the run is smuggled."""

_SMUGGLED = re.compile(f"{FLAG_TAG_SEQUENCE}|[{SMUGGLING_CHARS}][{SMUGGLING_CHARS}{VARIATION_SELECTORS}]*"
                       f"|(?<=[{VARIATION_SELECTORS}])[{VARIATION_SELECTORS}][{SMUGGLING_CHARS}{VARIATION_SELECTORS}]*")
"""A flag (kept), or a hidden message: a run that starts with a character of :data:`SMUGGLING_CHARS`, or with a
variation selector right after another, and takes in every selector and smuggling character after it. Tag characters
between the selectors (VS, tag, VS, tag …) are part of the run: were the tags left out alone, the selectors they
kept apart would make a run of their own in the output."""

_ANY_SMUGGLING = re.compile(f"[{SMUGGLING_CHARS}{VARIATION_SELECTORS}]"
                            f"(?:(?<=[{SMUGGLING_CHARS}])|(?<=[{VARIATION_SELECTORS}][{VARIATION_SELECTORS}]))")
"""A quick look for them first: a search for one class is 4× faster than :data:`_SMUGGLED`'s alternation, which
added 0.4 s to 10 MB of ``sql --json`` output that held none. A variation selector found is looked behind (QA round
55): text with emoji (⚠️, ✔️, each with one U+FE0F) takes the fast path too; 14 MB of JSON: 0.12 s before the
selectors, 0.19 s with this check, 0.39 s with an alternation ``[…]|[VS][VS]``."""


def _keep_flags(m: re.Match) -> str:
    return m.group() if m.group()[0] == "\U0001f3f4" else ""


def _json_escaped(m: re.Match) -> str:
    return m.group() if m.group()[0] == "\U0001f3f4" else json.dumps(m.group())[1:-1]


def _unsmuggled(text: str, repl) -> str:
    """``text`` with each hidden-message run of :data:`_SMUGGLED` (outside a flag) replaced by ``repl`` (of the
    match)."""
    if text.isascii() or _ANY_SMUGGLING.search(text) is None:
        return text
    return _SMUGGLED.sub(repl, text)


def escape_smuggling(text: str) -> str:
    """``text`` with the characters that can carry a hidden message (:data:`SMUGGLING_CHARS` outside a flag, a
    variation selector after another) written as JSON's ``\\u`` escapes: what :func:`to_json` does to its output,
    and ``sql --format csv`` to its text (QA round 55)."""
    return _unsmuggled(text, _json_escaped)


def show_controls(text: str) -> str:
    """``text`` with its control characters and bidirectional marks shown as :func:`safe_text` shows them (ESC as
    ``␛``), newline and tab kept; nothing else changed (``sql --format csv`` on a terminal, QA round 55)."""
    return _CONTROL.sub(_picture, text)


def count_noun(n: int, one: str, many: str | None = None) -> str:
    """``"1 chunk text"``, ``"3 chunk texts"``, ``"0 chunk texts"`` (``many``: an irregular plural)."""
    return f"{n} {one}" if n == 1 else f"{n} {many or one + 's'}"


def _picture(m: re.Match) -> str:
    c = ord(m.group())
    if c >= 0x2000:
        return f"<U+{c:04X}>"  # a bidirectional mark, named instead of obeyed
    if c < 0x20:
        return chr(0x2400 + c)  # Control Pictures: ESC → ␛, BEL → ␇, CR → ␍ …
    if c == 0x7F:
        return "\u2421"  # ␡
    return "\u241b" + chr(c - 0x40)  # a C1 control as ␛ + its 7-bit form: CSI U+009B → ␛[, OSC U+009D → ␛]


def safe_text(text) -> str:
    """``text`` made safe to print on a terminal or into an agent's prompt.

    Every control character but newline and tab is replaced by a visible stand-in,
    so an escape sequence shows up as text instead of acting: ESC → ``␛`` (so
    ``ESC[31m`` prints as ``␛[31m``), BEL → ``␇``, CR → ``␍``, DEL → ``␡``, any other
    C0 control → its Control Pictures symbol (U+2400 + code), and a C1 control
    (U+0080–U+009F) → ``␛`` followed by its 7-bit equivalent (CSI U+009B → ``␛[``), and a
    bidirectional override or isolate mark → ``<U+202E>`` and the like.
    The invisible characters that can smuggle a message (:data:`SMUGGLING_CHARS`: Unicode tag
    characters outside a flag's :data:`FLAG_TAG_SEQUENCE`, interlinear annotation marks, invisible operators,
    noncharacters) are left out (QA round 54), and so is a run of :data:`VARIATION_SELECTORS` after its first
    selector (QA round 55: a message hidden after an emoji reached the agent): a hand-written note can carry
    them (``remember`` and ``update`` refuse them), and the prompt hook's block must not pass hidden instructions
    to the agent; named one by one, as the bidirectional marks are, a 40-character message would fill the line
    with ``<U+E0049>``.
    Everything else, newline and tab included, is kept.

    For human-readable output only, applied when printing (the vault and the index
    keep the text as it is; ``--json`` output encodes it faithfully, see :func:`to_json`).
    ``None`` gives ``""``; other non-strings are converted with ``str``.
    """
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    return _unsmuggled(_CONTROL.sub(_picture, text), _keep_flags)


def _safe_cell(v):
    """A table cell on one line: control characters shown (:func:`safe_text`), a tab as ``␉`` and a newline
    as ``␊`` (as :func:`hits_plain` shows them; a raw tab broke the columns)."""
    return visible_field(v) if isinstance(v, str) else v


def to_json(obj) -> str:
    """Pretty JSON (UTF-8 kept, keys in insertion order).

    JSON is data, so the text stays exact; but the invisible characters of :data:`SMUGGLING_CHARS` (outside a
    flag's tag sequence) are written as ``\\u`` escapes (``\\udb40\\udc49`` for U+E0049), which decode to
    the same string: an agent reading ``recall --json`` sees that they are there instead of reading a hidden
    message (QA round 54). So are the variation selectors of a run after its first (QA round 55, see
    :data:`VARIATION_SELECTORS`)."""
    return escape_smuggling(json.dumps(obj, ensure_ascii=False, indent=2, default=str))


def table(rows: list[dict] | list[list], headers: list[str] | None = None) -> str:
    """A plain-text table (``tabulate``'s ``simple`` format), control characters in cells and headers made visible (:func:`safe_text`)."""
    from tabulate import tabulate

    if rows and isinstance(rows[0], dict):
        headers = headers or list(rows[0].keys())
        rows = [[r.get(h) for h in headers] for r in rows]
    rows = [[_safe_cell(v) for v in r] for r in rows]
    headers = [safe_text(h) for h in headers or []]
    return tabulate(rows, headers=headers or [], tablefmt="simple", disable_numparse=True, missingval="")


def _fmt(x: float) -> str:
    """A score with 4 significant digits: BM25 (12.35) and fused scores (0.01639, where 3 decimals
    would print three different hits as 0.016) both stay distinguishable."""
    return f"{x:.4g}"


def hits_text(hits, *, explain: bool = False) -> str:
    """Human-readable recall results: rank, scores, id, title, path, snippet (and signals with ``explain``).

    Text from the vault is passed through :func:`safe_text` (escape sequences shown, never acted on).
    """
    lines: list[str] = []
    for i, h in enumerate(hits, 1):
        meta = [f"rank {_fmt(h.rank_score)}", f"bm25 {_fmt(h.score)}"]
        if h.date:
            meta.append(str(h.date)[:10])
        if h.status:
            meta.append(h.status)
        lines.append(f"{i}. {_safe_cell(h.doc_id)}  ({' · '.join(meta)})")
        lines.append(f"   {_safe_cell(h.title)}")  # one line each: a newline in a title or file name is shown as ␊
        if h.superseded_by:
            lines.append(f"   ⚠ superseded by {h.superseded_by}")
        lines.append(f"   {_safe_cell(h.path)}")
        for sl in safe_text(h.snippet).splitlines():  # after safe_text: a CR is shown as ␍, not taken as a line break
            lines.append(f"   │ {sl}")
        if explain and h.signals:
            s = h.signals
            lines.append(
                "   signals: "
                f"bm25 {s['bm25']:.4f}"
                + (f" · with classes {s['bm25_structured']:.4f}"
                   if s.get("bm25_structured") is not None and s["bm25_structured"] != s["bm25"] else "")
                + f" · bm25f {s['bm25f']:.4f} · base {s['base']:.4f} · title coverage {s['coverage']:.2f}"
                f" · identity +{s['identity_boost']:.4f} · recency ×{s['recency']:.4f} · status ×{s['status_factor']}"
                f" · type ×{s['type_factor']} · confidence ×{s['confidence_factor']:.3f}"
                + (f" · dense {s['dense']:.4f}" if s.get("dense") is not None else "")
                + (f" ({s['dense_centred']}-centred)" if s.get("dense_centred") else "")
                + (f" · fusion {s['fusion']}" if s.get("fusion") else "")
                + (f" (BM25 term coverage {s['bm25_coverage']:.2f})" if s.get("bm25_coverage") is not None else "")
                + f" → rankScore {s['rank_score']:.4f}"
            )
            # a query term counted in a class row has its bm25f there, not 0 (QA round 41)
            in_class = {m for t in h.terms or [] if t["kind"] == "class" for m in t["term"].split("|")}
            for t in h.terms or []:
                tf = t["tf"]
                bm25f = "in class" if t["kind"] == "query" and t["term"] in in_class else f"{t['bm25f']:.4f}"
                lines.append(
                    f"     {t['term']:<18} {t['kind']:<7} df {t['df']:<5} idf {t['idf']:.3f}  tf title {tf['title']} desc {tf['description']}"
                    f" tags {tf['tags']} body {tf['body']} slug {tf['slug']}  bm25 {t['bm25']:.4f} bm25f {bm25f}"
                )
        lines.append("")
    return safe_text("\n".join(lines).rstrip()) + ("\n" if lines else "")


def visible_field(text) -> str:
    """One tab-separated field: :func:`safe_text`, with a tab or newline (which would split the line) shown as
    ``␉`` / ``␊``: visibly not the character, never passed off as a space in a path that would not exist."""
    return safe_text(text).replace("\t", "\u2409").replace("\n", "\u240a")


def hits_plain(hits) -> str:
    """One tab-separated line per hit: rankScore, score, doc_id, title, path (fields made safe with :func:`safe_text`)."""
    return "".join(f"{h.rank_score:.4f}\t{h.score:.4f}\t{visible_field(h.doc_id)}\t{visible_field(h.title)}\t{visible_field(h.path)}\n" for h in hits)


class ProgressBar:
    """A click progress bar on stderr, drawn lazily: click is imported on the first update, so a
    command that never reports progress stays light. One bar per ``label``: an update with a new
    label ends the current bar and starts the next (one bar per file of a model download).

    Args:
        enabled: draw anything at all (callers pass ``not as_json`` and the like); also off when
            stderr is not a terminal.
        min_total: draw no bar for a task of fewer steps than this.
        show_eta: show click's time estimate (only when a total is known).
    """

    def __init__(self, enabled: bool = True, *, min_total: int = 0, show_eta: bool = True) -> None:
        import sys

        self.enabled = enabled and sys.stderr.isatty()
        self.min_total = min_total
        self.show_eta = show_eta
        self.bar = None
        self.label = None
        self.done = 0

    def update(self, label: str, done: int, total: int | None) -> None:
        """Move the bar of ``label`` to ``done`` of ``total`` (``None``: unknown total)."""
        if not self.enabled or (total or 0) < self.min_total:
            return
        if label != self.label or self.bar is None:
            import sys

            import click

            self.close()
            self.label, self.done = label, 0
            self.bar = click.progressbar(length=total or 0, label=label, file=sys.stderr,
                                         show_eta=self.show_eta and bool(total))
            self.bar.__enter__()
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        """End the current bar's line (no-op when none was drawn)."""
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


class SyncProgress(ProgressBar):
    """The ``(done, total)`` callable a sync reports to (:func:`dreamdb.store.sync.sync`): a bar only
    when at least :data:`MIN_FILES` files are read (a no-change or small sync shows nothing)."""

    MIN_FILES = 50
    """Fewer files are read in well under a second: no bar."""

    def __init__(self, label: str = "Indexing", enabled: bool = True) -> None:
        super().__init__(enabled, min_total=self.MIN_FILES)
        self.sync_label = label

    def __call__(self, done: int, total: int) -> None:
        self.update(self.sync_label, done, total)
