"""Split a document into embedding chunks (SPEC §3). Pure: no I/O, no heavy imports.

Rules (reference constants from SPEC §3, "about 200–512 tokens"):

1. The text is the document's description (as a first paragraph, unless the
   body already contains it) followed by its body, both without their runs of
   encoded data (base64, keys, tokens: :func:`embedded_text`).
2. It is cut into *sections* at markdown headings, ATX (``#`` … ``######``)
   and setext (a line of heading length, :data:`SETEXT_HEADING_MAX_WORDS` words and
   :data:`SETEXT_HEADING_MAX_CHARS` characters at most, over a ``===`` or ``---``
   underline, :func:`_blocks`: a ``---`` line after a blank line is a thematic
   break, and one under a longer paragraph or one of several lines too, the
   paragraph text), never inside a fenced code block opened by ``` or ``~~~``, an HTML
   comment block (``<!--`` … ``-->``) or a raw HTML block (``<pre>`` …
   ``</pre>``, also script, style, textarea): a heading-looking line inside
   one is code or hidden text, not a heading (:mod:`dreamdb.vault.literal_blocks`).
   An unclosed one runs to the end of the document.
3. Sections under :data:`MERGE_BELOW_WORDS` (100) words merge forward into the
   next one; a small last section merges backward when the result stays
   within :data:`SPLIT_ABOVE_WORDS`.
4. Pieces over :data:`SPLIT_ABOVE_WORDS` (380) words are split at paragraph
   boundaries (blank lines outside fences), packed greedily up to that size.
   A paragraph that is itself over the limit (a long fence included: the one
   exception to "never inside a fence", needed to keep chunks bounded) is
   split at line ends, and a line over the limit by words. No chunk exceeds
   380 words or :data:`MAX_CHUNK_CHARS` characters of content. A last piece
   under :data:`MERGE_BELOW_WORDS` words (the greedy packing's tail) shares the
   parts of the last two pieces with the one before it, as evenly as the limits
   allow, as a small last section merges backward; and a piece of headings (and
   HTML comments) alone is no chunk, wherever it falls, its blocks read as the
   whole text's reading made them (:func:`_blocks`) (cut from the paragraph
   that follows it because that paragraph fills a chunk by itself, or a note's
   last headings, with nothing under them, after a section too long to take
   them in): a label with nothing under it, whose vector lies near every short
   query (BM25 still reads it). A note of headings alone keeps its first such
   piece, as all it says. A heading-looking line inside a fence is text there
   too: a piece holding a fence of ``# …`` lines is kept.
5. The title is prepended to every chunk: ``"<title>\\n\\n<content>"``.
   A document cut into several chunks also gets a *summary chunk*,
   ``"<title>\\n\\n<description>"``, after its content chunks: a curated
   one-line summary is what paraphrasing questions resemble most, and inside
   a 380-word chunk it is diluted (on the dreamcontext gold set, hybrid
   recall@5 went from 90.0 to 93.3 with no other change).
6. At most :data:`MAX_CHUNKS_PER_DOCUMENT` content chunks per document; the rest of a
   huge document is left to keyword search (BM25 indexes all of it). Work is
   bounded too: a 2 MB document chunks in well under a second.

Edge cases: :func:`chunk_document` gives a document with a title but no
description/body one chunk holding the title, and one with no text at all (no
title either) none; the index embeds neither (:func:`has_text_to_embed`: a note
of a title alone gets no chunk, docs/hybrid.md).

The chunk's ``content_hash`` is the sha256 (hex) of its full text (title
included), so identical text gets the identical key in every document and an
edit re-embeds only the chunks whose text changed.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from dreamdb.analyzer import drop_data
from dreamdb.vault.literal_blocks import COMMENT_OPENING, block_opening, closes_block

#: Sections shorter than this (words) merge forward (SPEC §3 reference).
MERGE_BELOW_WORDS = 100
#: Pieces longer than this (words) are split at paragraphs (SPEC §3 reference).
SPLIT_ABOVE_WORDS = 380
#: Hard cap on one chunk's content in characters (a 380-"word" run of base64 or
#: unspaced text could otherwise be megabytes; the model sees ≤ 512 tokens anyway).
MAX_CHUNK_CHARS = 4000
#: Chunks kept per document (≈ 48k words); the tail of a longer document is not embedded.
MAX_CHUNKS_PER_DOCUMENT = 128
#: Document types that get no chunks, hence no vectors: the dense channel never returns
#: them (BM25 still does). Reference: dreamcontext v0.14 ``DENSE_EXCLUDED_TYPES`` —
#: short changelog pointer entries have focused vectors that crowd out the canonical
#: documents they point to; excluding them lifted the reference's held-out dense-only
#: recall@1 from 36.7 to 56.7. It also saves about a fifth of the real vault's embedding time.
DENSE_EXCLUDED_TYPES = frozenset({"changelog"})
#: Version of these rules, stored with each chunked document: changing it re-chunks the index
#: (unchanged chunk texts keep their vectors: they are keyed by content hash). 5: documents
#: without text of their own get no chunks (:func:`has_text_to_embed`); 6: runs of encoded data left out
#: (:func:`embedded_text`); 7: a long identifier of short words is no such run
#: (:data:`dreamdb.analyzer.MIN_COMMON_LETTER_SHARE`); 8: a piece of headings alone, cut from
#: what follows it, is no chunk, and a small last piece shares with the one before (QA round 154-D F1); 9:
#: setext headings are headings, and a piece of headings alone is no chunk wherever it falls (QA round 155-A F3).
#: 10: a setext heading is one line of heading length (SETEXT_HEADING_MAX_WORDS, _CHARS): a longer paragraph
#: over --- or === is text, never dropped as a piece of headings alone (QA round 156-A F3).
CHUNKER_VERSION = "10"

SETEXT_HEADING_MAX_WORDS = 12
"""Words a setext heading's text holds at most (:func:`_blocks`): a line of more words, or several lines, over a
``---`` or ``===`` line is a paragraph of text ending at a thematic break (QA round 156-A F3: an 83-word paragraph
written right above a ``---`` was read as a heading, and cut from the paragraph after it, dropped as a piece of
headings alone). 1,363 of the real vault's 1,428 ATX headings hold at most 12 words."""

SETEXT_HEADING_MAX_CHARS = 100
"""Characters a setext heading's text holds at most (:data:`SETEXT_HEADING_MAX_WORDS`; for text written without
spaces): 1,392 of the real vault's 1,428 ATX headings hold at most 100."""


_WORD_CHAR = re.compile("[^\\W_\u115f\u1160\u3164\uffa0]")
"""A letter or a digit, of any script: what a text needs to say anything (not the Hangul fillers, letters that show
nothing)."""


def embedded_text(text: str | None) -> str:
    """``text`` as the model reads it: without its runs of encoded data (:func:`dreamdb.analyzer.drop_data`: base64,
    a pasted key or image, JSON Web Tokens), which BM25 does not read as words either. Embedded, such a run gave a
    chunk whose vector lay near every Turkish question over an English vault: a note holding a pasted certificate
    came first in dense and hybrid recall for ``önbellek``, which only another note held (QA round 130-C F2)."""
    return drop_data(text) if text else ""


def composed(text: str) -> str:
    """``text`` in composed form (Unicode NFC), as the embedding model is given it (:class:`dreamdb.embeddings.model.
    Embedder`) and as the dedup gate compares texts (:func:`dreamdb.dedup.dedup`): the XLM-R tokenizer's normaliser
    does not compose a letter written as a base and a combining mark (decomposed, NFD: text from macOS file names
    or some editors), which it then reads as more, rarer tokens (a Turkish note: 45 tokens composed, 69 decomposed).
    QA round 149-C F1: an exact decomposed copy of a note was REVIEW at 0.957, not an identical MERGE, and a
    decomposed query scored 0.870 where the composed one scored 0.915; BM25 reads both alike (NFKC,
    :func:`dreamdb.analyzer.normalize`). Text in composed form already (nearly all) is returned as it is, after a
    quick check."""
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def has_text_to_embed(body: str | None, description: str | None) -> bool:
    """Whether an indexed document has text of its own to embed: a body or a description holding a letter or a digit
    (any script) outside runs of encoded data (:func:`embedded_text`: a note of a pasted key alone has none). Markup alone (a code fence, ``***``, empty ``-`` bullets, ``<!-- -->``) or invisible characters
    (U+200B, the Hangul filler, the braille blank) is none (QA round 122-A F1: template notes of such bodies took the
    first places as empty ones had).

    One without (an empty file, a note of a title alone) gets no chunks, hence no vector: its name is all it says,
    which BM25 matches, and the vector of a bare name (``scratch``, ``todo``) lies near every short query. QA round
    121-B F1: empty notes took the first places of Turkish questions over an English vault, in dense and hybrid
    recall, above the notes holding every word of the question (their language undetermined, their cosine was not
    language-centred, and in hybrid their BM25 rank was imputed from the dense one, as a note BM25 cannot read).
    (A draft's chunks for ``embed dedup`` are made by :func:`chunk_with_coverage` regardless.)"""
    return (_WORD_CHAR.search(embedded_text(body)) is not None
            or _WORD_CHAR.search(embedded_text(description)) is not None)


_HEADING_RE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
"""An ATX heading line (CommonMark 0.31.2, "ATX headings"): 1 to 6 ``#``, indented at most 3 spaces, then a space, a
tab or the end of the line."""

_SETEXT_UNDERLINE_RE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
"""A setext heading underline (CommonMark 0.31.2, "Setext headings"): a run of ``=`` or of ``-``, indented at most 3
spaces, then only spaces or tabs. Right under a paragraph of one line of heading length
(:data:`SETEXT_HEADING_MAX_WORDS`) it makes that line a heading (``=`` level 1, ``-`` level 2); under a longer
paragraph, or one of several lines, it ends that paragraph (authors write ``---`` as a thematic break with no blank
line above it: CommonMark's heading of any length dropped text); anywhere else a ``---`` line is a thematic break
(or, opening the file, the frontmatter's fence, already removed by then) and a ``===`` line is text."""

_NOT_PARAGRAPH_LINE_RE = re.compile(r"^(?: {0,3}(?:\t|[>|]|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))| {4})")
"""A line that opens a block quote, a list item, a table row or indented code: a paragraph holding one is no setext
heading's text (CommonMark: an underline under a list item or a block quote is a thematic break, or a lazy
continuation line), so its underline is left as text. Containers are not parsed here (as in
:mod:`dreamdb.vault.literal_blocks`); read this way, such a line never makes the text above a heading."""


@dataclass(frozen=True)
class Chunk:
    """One embedding unit of a document.

    Attributes:
        ordinal: position in the document, from 0.
        text: title + blank line + content (what gets embedded as a passage).
        content_hash: sha256 hex of ``text`` (UTF-8): the embedding's key.
        n_words: whitespace-separated words in ``text``.
    """

    ordinal: int
    text: str
    content_hash: str
    n_words: int


def text_hash(text: str) -> str:
    """sha256 (hex, 64 chars) of ``text`` encoded as UTF-8 (lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _blocks(text: str) -> list[tuple[str, str]]:
    """Cut text into ``(kind, text)`` blocks: ``heading`` blocks, ``fence`` blocks (fenced code, HTML comment and raw
    HTML blocks: :mod:`dreamdb.vault.literal_blocks`), ``para`` paragraphs.

    Blank lines separate paragraphs; fences and comments are kept whole (with their blank lines). A heading is an ATX
    heading line (``## Notes``) or a setext heading: a paragraph of one line of heading length
    (:data:`SETEXT_HEADING_MAX_WORDS`, :data:`SETEXT_HEADING_MAX_CHARS`) with the underline under it (``Notes`` then
    ``=====`` or ``-----``; :data:`_SETEXT_UNDERLINE_RE`), unless that line opens a list item, a block quote, a table
    row or indented code (:data:`_NOT_PARAGRAPH_LINE_RE`). QA round 155-A F3: a setext heading was a paragraph, so a
    note written with them was cut at none of its headings and a heading whose paragraph fills a chunk was a chunk of
    its own, ``User Stories`` over ``====``, where ``## User Stories`` is none. Under a paragraph of several lines or
    of a longer one the underline is its last line, and ends it: QA round 156-A F3, read as CommonMark reads it (a
    heading of any length), an 83-word paragraph written right above a ``---`` break was a heading, which cut from
    the paragraph after it was dropped as a piece of headings alone (a 300-word one the same, a note's last
    paragraph glued to a trailing ``---``).
    """
    out: list[tuple[str, str]] = []
    para: list[str] = []
    lines = text.split("\n")
    i, n = 0, len(lines)

    def flush() -> None:
        if para:
            out.append(("para", "\n".join(para)))
            para.clear()

    while i < n:
        line = lines[i]
        mark = block_opening(line)
        if mark:
            flush()
            j = i + 1
            while j < n and not closes_block(lines[j], mark):
                j += 1
            out.append(("fence", "\n".join(lines[i : j + 1])))
            i = j + 1
            continue
        if _HEADING_RE.match(line):
            flush()
            out.append(("heading", line))
        elif para and _SETEXT_UNDERLINE_RE.match(line) and not any(_NOT_PARAGRAPH_LINE_RE.match(p) for p in para):
            para.append(line)
            if len(para) == 2 and _heading_length(para[0]):
                out.append(("heading", "\n".join(para)))
                para.clear()
            else:  # (text: the underline is a thematic break, or text, that ends it)
                flush()
        elif not line.strip():
            flush()
        else:
            para.append(line)
        i += 1
    flush()
    return out


def _heading_length(line: str) -> bool:
    """Whether ``line`` is short enough for a setext heading's text (:data:`SETEXT_HEADING_MAX_WORDS`,
    :data:`SETEXT_HEADING_MAX_CHARS`)."""
    text = line.strip()
    return len(text) <= SETEXT_HEADING_MAX_CHARS and len(text.split()) <= SETEXT_HEADING_MAX_WORDS


_COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.S)

Block = tuple[str, str]
"""``(kind, text)``, as :func:`_blocks` reads them."""


def _says_something(kind: str, text: str, block: str | None = None) -> bool:
    """Whether ``text`` (block ``block`` of kind ``kind``, as :func:`_blocks` read it in the whole text, or a part of
    it) holds a letter or digit outside headings and HTML comments: a line inside a fenced code block or a raw HTML
    block is text, not a heading (QA round 154-G F3: a code block of ``# step`` lines, or a markdown template fenced
    without a language tag, ``# Title``, ``## Context``, was taken for a piece of headings alone and dropped), and a
    setext heading (``Criteria`` over ``--------``) is a heading as an ATX one is (QA round 155-A F3). The kind is the
    whole text's reading, not a chunk's read again: QA round 156-A F3, a paragraph's last line over a ``---``, cut
    from the lines above it, would read as a heading alone."""
    if kind == "heading":
        return False
    if kind == "para" or block_opening((block if block is not None else text).split("\n", 1)[0]) == COMMENT_OPENING:
        text = _COMMENT_RE.sub("", text)
    return _WORD_CHAR.search(text) is not None


def _sections(blocks: list[Block]) -> list[list[Block]]:
    """Group blocks into sections, each starting at a heading (the first may have none)."""
    sections: list[list[Block]] = []
    cur: list[Block] = []
    for block in blocks:
        if block[0] == "heading" and cur:
            sections.append(cur)
            cur = []
        cur.append(block)
    if cur:
        sections.append(cur)
    return sections


def _wc(paras: list[str]) -> int:
    return sum(len(p.split()) for p in paras)


def _bwc(blocks: list[Block]) -> int:
    return sum(len(text.split()) for _kind, text in blocks)


def _split_oversized(par: str) -> list[str]:
    """Split one paragraph over the limits at line ends, then by words, then by characters."""
    if len(par.split()) <= SPLIT_ABOVE_WORDS and len(par) <= MAX_CHUNK_CHARS:
        return [par]
    pieces: list[str] = []
    for line in par.split("\n"):
        if len(line.split()) <= SPLIT_ABOVE_WORDS and len(line) <= MAX_CHUNK_CHARS:
            pieces.append(line)
            continue
        run: list[str] = []
        run_chars = 0
        for word in line.split():
            while len(word) > MAX_CHUNK_CHARS:  # one enormous "word" (base64, unspaced text)
                if run:
                    pieces.append(" ".join(run))
                    run, run_chars = [], 0
                pieces.append(word[:MAX_CHUNK_CHARS])
                word = word[MAX_CHUNK_CHARS:]
            if run and (len(run) >= SPLIT_ABOVE_WORDS or run_chars + 1 + len(word) > MAX_CHUNK_CHARS):
                pieces.append(" ".join(run))
                run, run_chars = [], 0
            run.append(word)
            run_chars += len(word) + 1
        if run:
            pieces.append(" ".join(run))
    return _pack(pieces, "\n")


def _fits(parts: list[str], sep: str) -> bool:
    return _wc(parts) <= SPLIT_ABOVE_WORDS and len(sep.join(parts)) <= MAX_CHUNK_CHARS


def _pack(parts: list[str], sep: str) -> list[str]:
    """Greedily join parts (each within the limits) into pieces within the limits (:func:`_pack_spans`)."""
    return [sep.join(parts[a:b]) for a, b in _pack_spans(parts, sep)]


def _pack_spans(parts: list[str], sep: str) -> list[tuple[int, int]]:
    """Where :func:`_pack` cuts ``parts``: ``(start, end)`` of each piece, in order. Greedily joins parts (each within
    the limits) into pieces within the limits; a last piece under :data:`MERGE_BELOW_WORDS` words shares the parts of
    the last two pieces with the one before it, as evenly as the limits allow (rule 4: greedy packing left a tail of a
    few words, ``cooldown'dan önce gelir.``, a chunk of its own whose vector, a title and four words, lay near many
    queries: QA round 154-D F1)."""
    spans: list[list[int]] = []
    start = 0
    words = chars = 0
    for i, p in enumerate(parts):
        w, c = len(p.split()), len(p)
        if i > start and (words + w > SPLIT_ABOVE_WORDS or chars + len(sep) + c > MAX_CHUNK_CHARS):
            spans.append([start, i])
            start, words, chars = i, 0, 0
        words += w
        chars += c + (len(sep) if i > start else 0)
    if start < len(parts):
        spans.append([start, len(parts)])
    if len(spans) > 1 and _wc(parts[spans[-1][0]:spans[-1][1]]) < MERGE_BELOW_WORDS:
        a, b = spans[-2][0], spans[-1][1]
        both = parts[a:b]
        total = _wc(both)
        best = None
        for j in range(1, len(both)):  # (the greedy cut is one of these, so some cut fits)
            head, tail = both[:j], both[j:]
            if _fits(head, sep) and _fits(tail, sep):
                spread = abs(total - 2 * _wc(head))
                if best is None or spread < best[0]:
                    best = (spread, j)
        if best is not None:
            spans[-2:] = [[a, a + best[1]], [a + best[1], b]]
    return [(a, b) for a, b in spans]


def _split_piece(blocks: list[Block]) -> list[tuple[str, bool]]:
    """One merged piece → contents within the limits (split at paragraphs, then inside), each with whether it says
    something (:func:`_says_something` of its blocks or their parts, as the whole text's reading made them)."""
    text = "\n\n".join(t for _k, t in blocks)
    if _bwc(blocks) <= SPLIT_ABOVE_WORDS and len(text) <= MAX_CHUNK_CHARS:
        return [(text, any(_says_something(kind, t) for kind, t in blocks))]
    parts: list[str] = []
    says: list[bool] = []
    for kind, block in blocks:
        for part in _split_oversized(block):
            parts.append(part)
            says.append(_says_something(kind, part, block))
    return [("\n\n".join(parts[a:b]), any(says[a:b])) for a, b in _pack_spans(parts, "\n\n")]


@dataclass(frozen=True)
class Chunking:
    """Chunks of a text and how much of it they hold (:func:`chunk_with_coverage`).

    Attributes:
        chunks: as :func:`chunk_document` returns them.
        truncated: content past :data:`MAX_CHUNKS_PER_DOCUMENT` (or ``max_chunks``) chunks was dropped (a piece of
            headings alone past them, which would be no chunk either, is not counted as content dropped).
        words: whitespace-separated words of the description (when prepended) and body, a word longer than
            :data:`MAX_CHUNK_CHARS` counted as the pieces the chunks cut it into (one per :data:`MAX_CHUNK_CHARS`
            characters begun: :func:`count_words`).
        kept_words: of those, the words in the kept content chunks, counted in them (fewer than ``words`` when
            truncated, or if any text were ever left out otherwise). In a text not truncated, the few words of a
            piece of headings alone that is no chunk (rule 4) count as kept: BM25 reads them, and the headings of the
            text that follows them are kept with it when they are not cut from it.
    """

    chunks: list[Chunk]
    truncated: bool
    words: int
    kept_words: int


_SPACE_RE = re.compile(r"\s")


def count_words(text: str) -> int:
    """Whitespace-separated words of ``text`` as the chunks count them: a word longer than :data:`MAX_CHUNK_CHARS`
    (unspaced text such as Japanese or Chinese, a long run of one letter) counts once per :data:`MAX_CHUNK_CHARS`
    characters begun, the pieces the chunks cut it into (:func:`_split_oversized`). The chunks' own words, counted by
    ``str.split``, are then always a part of these: counted as one word, a 2 MB run of Japanese text was "3 words"
    of which "129" were embedded, and the cap's cut was not reported (QA round 147-C F1)."""
    words = text.split()
    return len(words) + sum((len(w) - 1) // MAX_CHUNK_CHARS for w in words if len(w) > MAX_CHUNK_CHARS)

HEAD_CHARS_PER_CHUNK = 2 * MAX_CHUNK_CHARS
"""Characters of a huge text's head read for each chunk kept (:func:`chunk_with_coverage`): twice the most a chunk
holds, so that blank lines and short paragraphs rarely leave the head short of chunks (it is then read whole)."""


def _merged(sections: list[list[Block]]) -> Iterator[list[Block]]:
    """The sections merged (rule 3), one piece at a time in text order: a section under :data:`MERGE_BELOW_WORDS`
    words joins the next one, and a small last one the piece before it when the two stay within
    :data:`SPLIT_ABOVE_WORDS`. Lazy, so that a huge document is merged only as far as its chunks are needed."""
    last: list[Block] | None = None  # (held back until the next piece is made: a small last section may join it)
    buf: list[Block] = []
    for sec in sections:
        buf.extend(sec)
        if _bwc(buf) >= MERGE_BELOW_WORDS:
            if last is not None:
                yield last
            last, buf = buf, []
    if buf:
        if last is not None and _bwc(last) + _bwc(buf) <= SPLIT_ABOVE_WORDS:
            last = last + buf
        else:
            if last is not None:
                yield last
            last = buf
    if last is not None:
        yield last


def _contents(body: str, max_chunks: int) -> tuple[list[str], bool, int]:
    """The first ``max_chunks`` chunk contents of ``body`` (without the title), whether text was left out (a piece
    of headings alone left out is no text left out: it would be no chunk), and the words of the pieces of headings
    alone left out (:attr:`Chunking.kept_words` counts them as kept in a text not truncated)."""
    contents: list[str] = []
    label = None  # the first piece of headings alone, the content of a note of nothing else
    unsaid = 0  # (words of the pieces of headings alone left out)
    for piece in _merged(_sections(_blocks(body))):
        for content, says in _split_piece(piece):
            # A piece of headings (and comments) alone is no chunk, wherever it falls: a label with nothing under it,
            # whose vector lies near every short query, as a bare name's does; BM25 still reads it. QA round 154-D F1:
            # a heading whose first paragraph fills a chunk alone, ``## User Stories``; 155-A F3: the last heading of
            # a note, ``## Related`` with nothing under it, ``## Open questions`` over ``<!-- to fill -->``.
            if says:
                contents.append(content)
                continue
            if label is None and content.strip():
                label = content
            unsaid += len(content.split())
        if len(contents) > max_chunks:
            break
    if not contents and label is not None:
        contents = [label]  # (a note of headings alone: they are all it says)
        unsaid -= len(label.split())
    return contents[:max_chunks], len(contents) > max_chunks, unsaid


def chunk_document(title: str, body: str, description: str = "", *,
                   max_chunks: int = MAX_CHUNKS_PER_DOCUMENT) -> list[Chunk]:
    """Chunk one document for embedding (rules in the module docstring).

    Args:
        title: document title, prepended to every chunk.
        body: markdown body.
        description: one-line description; becomes the first paragraph unless the body contains it.
        max_chunks: keep at most this many chunks (default :data:`MAX_CHUNKS_PER_DOCUMENT`).

    Returns:
        list[Chunk], ordinals 0..n-1 in document order; ``[]`` only when title,
        description and body are all blank.
    """
    return chunk_with_coverage(title, body, description, max_chunks=max_chunks).chunks


def chunk_with_coverage(title: str, body: str, description: str = "", *,
                        max_chunks: int = MAX_CHUNKS_PER_DOCUMENT) -> Chunking:
    """:func:`chunk_document`, also saying whether the cap cut the text and how much of it the chunks hold.

    The dedup gate compares a candidate by these chunks only, so a draft longer than the cap had its tail
    silently left out (QA round 57 M3: a draft holding a note word for word after chunk 128 got CREATE);
    with this it can say so. Same arguments as :func:`chunk_document`.
    """
    title = (title or "").strip()
    body = embedded_text((body or "").replace("\r\n", "\n").replace("\r", "\n"))
    description = embedded_text(description).strip()
    if description and description not in body:
        body = description + "\n\n" + body
    contents, truncated = None, False
    limit = (max_chunks + 2) * HEAD_CHARS_PER_CHUNK
    if len(body) > limit and (space := _SPACE_RE.search(body, limit)) is not None:
        cut = space.start()
        # A huge text (QA round 83-B F9: 20 MB took seconds, though 128 chunks hold ~500 KB of it): its chunks are
        # those of a head of it, when the head alone gives two more than are kept. Chunks are made in text order and
        # greedily, so only the last ones of the head (from where it was cut) can differ from the whole text's.
        head, _truncated, _unsaid = _contents(body[:cut], max_chunks + 2)
        if len(head) >= max_chunks + 2:
            contents, truncated = head[:max_chunks], True
    if contents is None:
        contents, truncated, unsaid = _contents(body, max_chunks)
    words = count_words(body)
    # (counted in the chunks, not taken to be all unless truncated: QA round 156-A F3, a paragraph read as a heading
    # and dropped was said kept, 404 of 404 words)
    kept_words = sum(len(c.split()) for c in contents) + (0 if truncated else unsaid)

    if not contents:
        if not title:
            return Chunking([], truncated, words, kept_words)
        contents = [""]
    texts = [f"{title}\n\n{content}" if title and content else (title or content) for content in contents]
    if description:
        summary = f"{title}\n\n{description}" if title else description
        if len(texts) > 1 and summary not in texts:
            texts.append(summary)
    chunks = [Chunk(ordinal=i, text=t, content_hash=text_hash(t), n_words=len(t.split())) for i, t in enumerate(texts)]
    return Chunking(chunks, truncated, words, kept_words)
