"""The SPEC §3 chunker: headings, fences, merge/split sizes, title, bounds, stable hashes."""

from __future__ import annotations

import hashlib
import time

from dreamdb.embeddings.chunk import (
    MAX_CHUNK_CHARS,
    MAX_CHUNKS_PER_DOCUMENT,
    MERGE_BELOW_WORDS,
    SPLIT_ABOVE_WORDS,
    chunk_document,
    has_text_to_embed,
)


def words(n: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def content(c) -> str:
    return c.text.split("\n\n", 1)[1] if "\n\n" in c.text else ""


def test_splits_at_headings_when_sections_are_big_enough():
    body = f"# One\n\n{words(150, 'a')}\n\n## Two\n\n{words(150, 'b')}\n\n### Three\n\n{words(150, 'c')}\n"
    cs = chunk_document("Doc", body)
    assert [c.ordinal for c in cs] == [0, 1, 2]
    assert content(cs[0]).startswith("# One") and "b0" not in cs[0].text
    assert content(cs[1]).startswith("## Two") and "a0" not in cs[1].text
    assert content(cs[2]).startswith("### Three")


def test_title_prepended_to_every_chunk():
    body = f"# A\n\n{words(200)}\n\n# B\n\n{words(200)}"
    cs = chunk_document("My Title", body)
    assert len(cs) == 2 and all(c.text.startswith("My Title\n\n") for c in cs)


def test_small_sections_merge_forward():
    body = f"# A\n\n{words(30, 'a')}\n\n# B\n\n{words(30, 'b')}\n\n# C\n\n{words(150, 'c')}\n\n# D\n\n{words(150, 'd')}"
    cs = chunk_document("T", body)
    assert len(cs) == 2
    assert "a0" in cs[0].text and "b0" in cs[0].text and "c0" in cs[0].text
    assert content(cs[1]).startswith("# D")


def test_small_last_section_merges_backward():
    body = f"# A\n\n{words(150, 'a')}\n\n# B\n\n{words(20, 'b')}"
    cs = chunk_document("T", body)
    assert len(cs) == 1 and "b19" in cs[0].text


def test_big_section_split_at_paragraphs():
    paras = [words(100, f"p{i}x") for i in range(8)]  # 800 words, one section
    cs = chunk_document("T", "# Big\n\n" + "\n\n".join(paras))
    assert len(cs) >= 3
    for c in cs:
        assert len(content(c).split()) <= SPLIT_ABOVE_WORDS
        # paragraphs are never cut: each paragraph's first and last word are in the same chunk
    for i in range(8):
        holder = [c for c in cs if f"p{i}x0 " in c.text]
        assert len(holder) == 1 and f"p{i}x99" in holder[0].text


def test_oversized_paragraph_split_by_words():
    cs = chunk_document("T", words(1000))
    assert len(cs) == 3
    assert all(len(content(c).split()) <= SPLIT_ABOVE_WORDS for c in cs)
    assert " ".join(content(c) for c in cs) == words(1000)


def test_heading_inside_fence_is_not_a_boundary():
    fence = "```python\n# not a heading\nx = 1\n\n# still code\n```"
    body = f"# Real\n\n{words(120, 'a')}\n\n{fence}\n\n{words(5, 'z')}\n\n# Next\n\n{words(120, 'b')}"
    cs = chunk_document("T", body)
    assert len(cs) == 2
    assert fence in cs[0].text  # the whole fence, blank line included, in one chunk
    assert content(cs[1]).startswith("# Next")


def test_heading_inside_an_html_comment_block_is_not_a_boundary():
    comment = "<!--\n# not a heading\n\n## nor this\n-->"
    body = f"# Real\n\n{words(120, 'a')}\n\n{comment}\n\n{words(5, 'z')}\n\n# Next\n\n{words(120, 'b')}"
    cs = chunk_document("T", body)
    assert len(cs) == 2
    assert comment in cs[0].text  # kept whole, blank line included
    assert content(cs[1]).startswith("# Next")


def test_tilde_fence_and_longer_fence_markers():
    fence = "~~~~\n# comment\n~~~\n## also code\n~~~~"
    body = f"# A\n\n{words(120)}\n\n{fence}\n\n# B\n\n{words(120, 'b')}"
    cs = chunk_document("T", body)
    assert len(cs) == 2 and fence in cs[0].text


def test_fences_never_split_when_a_section_is_split():
    fence = "```\n" + "\n".join(f"line {i} of code" for i in range(40)) + "\n```"  # 160 words
    body = "# S\n\n" + "\n\n".join([words(150, "a"), fence, words(150, "b"), words(150, "c")])
    cs = chunk_document("T", body)
    assert sum(fence in c.text for c in cs) == 1
    assert all("```" not in c.text or fence in c.text for c in cs)


def test_unclosed_fence_runs_to_the_end():
    body = f"# A\n\n{words(120)}\n\n```\n# inside\n{words(10, 'z')}"
    cs = chunk_document("T", body)
    assert len(cs) == 1 and "# inside" in cs[0].text


def test_description_first_unless_in_body():
    cs = chunk_document("T", words(20), description="A short summary.")
    assert len(cs) == 1 and content(cs[0]).startswith("A short summary.")
    cs2 = chunk_document("T", "A short summary.\n\n" + words(20), description="A short summary.")
    assert content(cs2[0]).count("A short summary.") == 1


def test_summary_chunk_for_documents_of_several_chunks():
    body = f"# A\n\n{words(150)}\n\n# B\n\n{words(150, 'b')}"
    cs = chunk_document("Sleep debt", body, description="How sleep debt is scored.")
    assert [c.ordinal for c in cs] == [0, 1, 2]
    assert cs[-1].text == "Sleep debt\n\nHow sleep debt is scored." and cs[-1].n_words == 7
    assert content(cs[0]).startswith("How sleep debt is scored.")  # still the first paragraph too
    assert len(chunk_document("Sleep debt", body)) == 2  # no description, no summary chunk
    # one chunk: the description is already a large part of it
    assert len(chunk_document("Sleep debt", words(50), description="How sleep debt is scored.")) == 1


def test_empty_documents():
    only_title = chunk_document("Just a title", "")
    assert len(only_title) == 1 and only_title[0].text == "Just a title" and only_title[0].n_words == 3
    assert chunk_document("", "  \n\n ") == []
    assert chunk_document("", "", "") == []
    assert chunk_document("", "body only")[0].text == "body only"


BASE64 = "\n".join(["MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ"] * 12) + "\nRTESMBAGA1UEChMJQmFsdGltb3Jl"
PEM = f"-----BEGIN CERTIFICATE-----\n{BASE64}\n-----END CERTIFICATE-----"


def test_runs_of_encoded_data_are_not_embedded():
    """QA round 130-C F2: a chunk of a pasted certificate or image lay near every Turkish question over an English
    vault (first in dense and hybrid recall for a word only another note held). BM25 reads no words in such runs,
    and the model now reads none either; a note of such a run alone has no text to embed."""
    chunks = chunk_document("Nginx", f"Certificate for nginx below:\n\n{PEM}\n\nEnd of certificate.",
                            "TLS setup")
    assert [c.text for c in chunks] == [
        "Nginx\n\nTLS setup\n\nCertificate for nginx below:\n\n-----BEGIN CERTIFICATE-----\n\n"
        "-----END CERTIFICATE-----\n\nEnd of certificate."]
    assert not has_text_to_embed(BASE64, "") and has_text_to_embed(BASE64, "TLS setup")
    assert chunk_document("Key", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5")[
        0].text == "Key"
    # (QA round 132-B F5: a test's name of short words is no such run; it was left out of the chunk)
    name = "shouldReturn404WhenUserIdIsNullAndApiKeyIsMissingInV2RequestToS3"
    assert chunk_document("Tests", f"The test {name} guards the gateway.")[0].text == \
        f"Tests\n\nThe test {name} guards the gateway."


def test_hashes_are_sha256_of_text_and_stable():
    body = f"# A\n\n{words(150)}\n\n# B\n\n{words(150, 'b')}"
    a = chunk_document("T", body)
    b = chunk_document("T", body)
    assert [c.content_hash for c in a] == [c.content_hash for c in b]
    assert a[0].content_hash == hashlib.sha256(a[0].text.encode()).hexdigest()
    # editing section B leaves A's hash alone
    c = chunk_document("T", body.replace("b149", "changed"))
    assert c[0].content_hash == a[0].content_hash and c[1].content_hash != a[1].content_hash
    # the title is part of the text, so another title gives other hashes
    assert chunk_document("U", body)[0].content_hash != a[0].content_hash


def test_crlf_same_as_lf():
    body = f"# A\n\n{words(150)}\n\n# B\n\n{words(150, 'b')}"
    assert [c.content_hash for c in chunk_document("T", body.replace("\n", "\r\n"))] == \
           [c.content_hash for c in chunk_document("T", body)]


def test_two_megabyte_document_is_bounded():
    section = "## Section\n\n" + ("Karar: hibrit aramada BM25 taban kalır; dense sadece yeniden sıralar. " * 60) + "\n\n"
    body = (section * 2000)[:2_000_000]
    t0 = time.perf_counter()
    cs = chunk_document("Huge", body)
    took = time.perf_counter() - t0
    assert len(cs) == MAX_CHUNKS_PER_DOCUMENT
    assert took < 2.0, f"2 MB took {took:.2f} s"
    assert all(len(content(c)) <= MAX_CHUNK_CHARS and len(content(c).split()) <= SPLIT_ABOVE_WORDS for c in cs)


def test_no_spaces_megabyte_line_is_cut_by_characters():
    cs = chunk_document("B64", "x" * 1_000_000)
    assert 1 < len(cs) <= MAX_CHUNKS_PER_DOCUMENT
    assert all(len(content(c)) <= MAX_CHUNK_CHARS for c in cs)


def test_a_text_cut_by_characters_counts_fewer_words_kept_than_it_holds():
    """QA round 147-C F1: a word longer than MAX_CHUNK_CHARS (unspaced Japanese, a run of one letter) counted as one
    word of the text and as one word per piece in its chunks, so a text the cap cut held "3 words" of which "129"
    were kept, and was reported as not cut. Such a word now counts as its pieces, one per MAX_CHUNK_CHARS begun."""
    from dreamdb.embeddings.chunk import chunk_with_coverage, count_words

    assert count_words("a " + "x" * MAX_CHUNK_CHARS) == 2
    assert count_words("a " + "x" * (MAX_CHUNK_CHARS + 1)) == 3
    assert count_words("a " + "x" * (3 * MAX_CHUNK_CHARS) + " b") == 5
    n = MAX_CHUNK_CHARS * (MAX_CHUNKS_PER_DOCUMENT + 2) + 7  # just past the cap: 131 pieces
    cjk = "# 大きい\n\n" + ("睡眠負債は蓄積する" * (n // 9 + 1))[:n]
    # (128 pieces of the 131, the heading cut from them no chunk of its own (chunker 8): 128 of 133 words)
    for body, words, kept in ((cjk, 133, 128), ("# Big word\n\n" + "x" * n, 134, 128), ("x" * n, 131, 128)):
        got = chunk_with_coverage("T", body)
        assert got.truncated and len(got.chunks) == MAX_CHUNKS_PER_DOCUMENT
        assert (got.words, got.kept_words) == (words, kept)
        assert kept == sum(len(content(c).split()) for c in got.chunks)
    short = chunk_with_coverage("T", "x" * (MAX_CHUNK_CHARS * 3))  # within the cap: all of it kept
    assert not short.truncated and short.words == short.kept_words == 3


def test_merge_constant_is_respected():
    # every chunk but possibly the last has at least MERGE_BELOW_WORDS words of content
    body = "\n\n".join(f"# H{i}\n\n{words(40, f's{i}x')}" for i in range(20))
    cs = chunk_document("T", body)
    assert all(len(content(c).split()) >= MERGE_BELOW_WORDS for c in cs[:-1])
    assert sum(len(content(c).split()) for c in cs) == 20 * 41 + 20  # every word kept ('#', 'Hi', 40 words)


def _synthetic_bodies() -> list[str]:
    """Texts whose structure crosses where a head would be cut: a fence, a heading run, blank-line runs, one giant
    line, an unclosed fence, a comment block, short and long paragraphs mixed."""
    para = "Karar: hibrit aramada BM25 taban kalır; dense sadece yeniden sıralar. "
    return [
        "\n\n".join(f"## H{i}\n\n" + para * (i % 7 + 1) for i in range(100)),
        "intro " * 50 + "\n\n```python\n" + "\n".join(f"x{i} = {i}  # code line" for i in range(1500)) + "\n```\n\ntail",
        ("\n" * 2000).join(words(90, f"p{i}_") for i in range(60)),
        words(160_000, "g"),  # (over a megabyte: the head path of a note's full 128 chunks)
        "start\n\n```\n" + "\n".join(words(30, f"u{i}_") for i in range(600)),
        "<!--\n" + "\n".join(words(20, f"c{i}_") for i in range(500)) + "\n-->\n\n" + words(2000, "after"),
        "\n\n".join(words(5 if i % 3 else 700, f"m{i}_") for i in range(150)),
    ]


def test_a_huge_texts_chunks_from_its_head_are_the_whole_texts(monkeypatch):
    """QA round 83-B F9: a 20 MB note took seconds to chunk (the hook's first hybrid prompt after editing it: 5 s),
    though its 128 chunks hold a few hundred KB. Its chunks now come from a head of it when that head alone gives two
    more than are kept. Checked against the whole text's chunking on texts built to cross the cut and on every note
    of the example and real vaults, with few chunks kept and a short head so that the head path runs on most of
    them."""
    from pathlib import Path

    from dreamdb.embeddings import chunk
    from dreamdb.embeddings.chunk import chunk_with_coverage
    from tests.conftest import REAL_VAULT_SRC, ROOT

    bodies = _synthetic_bodies()
    for root in (ROOT / "examples" / "_dream_context", REAL_VAULT_SRC):
        if root.is_dir():
            bodies += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(Path(root).rglob("*.md"))]
    whole = chunk._contents
    from_head = []

    def contents(body, max_chunks):  # (counts the texts chunked from their head)
        out = whole(body, max_chunks)
        from_head.append(max_chunks == wanted + 2 and len(out[0]) >= max_chunks)
        return out

    monkeypatch.setattr(chunk, "_contents", contents)
    for wanted, span in ((1, 1500), (2, 2000), (3, 3000), (MAX_CHUNKS_PER_DOCUMENT, chunk.HEAD_CHARS_PER_CHUNK)):
        from_head.clear()
        for body in bodies if wanted < MAX_CHUNKS_PER_DOCUMENT else [b for b in bodies if len(b) > 10**6]:
            monkeypatch.setattr(chunk, "HEAD_CHARS_PER_CHUNK", span)
            got = chunk_with_coverage("T", body, "a description", max_chunks=wanted)
            monkeypatch.setattr(chunk, "HEAD_CHARS_PER_CHUNK", 10**15)  # the whole text, always
            assert got == chunk_with_coverage("T", body, "a description", max_chunks=wanted), (wanted, body[:80])
        # (the real vault's notes are most of the texts; without ../shared the example vault's and the built ones: QA
        # round 88 A2)
        enough = 1 if wanted == MAX_CHUNKS_PER_DOCUMENT else 40 if REAL_VAULT_SRC.is_dir() else 4
        assert sum(from_head) >= enough, (wanted, sum(from_head))


def test_a_heading_cut_from_what_follows_and_a_small_tail_are_no_chunks_of_their_own():
    """QA round 154-D F1: chunks of a title and a few words lay near many queries in the dense channel (a heading whose
    first paragraph fills a chunk by itself, ``## User Stories``; the greedy packing's last few words,
    ``cooldown'dan önce gelir.``). A piece of headings and comments alone is no chunk, and a small last piece shares
    the last two pieces' parts with the one before it."""
    from dreamdb.embeddings.chunk import MERGE_BELOW_WORDS, SPLIT_ABOVE_WORDS

    full = " ".join(f"w{i}" for i in range(SPLIT_ABOVE_WORDS))  # a paragraph that fills a chunk alone
    opening = " ".join(f"o{i}" for i in range(MERGE_BELOW_WORDS + 20))  # a section of its own
    body = f"{opening}\n\n## User Stories\n\n<!-- newest first -->\n\n{full}\n"
    chunks = chunk_document("Sleepy search", body)
    contents = [content(c) for c in chunks]
    assert contents == [opening, full]  # the heading and its comment: no chunk of their own
    assert all(c.n_words <= SPLIT_ABOVE_WORDS + 2 for c in chunks)  # (title "Sleepy search" + content)
    assert not any(c.strip().startswith("## User Stories") for c in contents)
    # the heading is still the note's text: BM25 reads the body, and a heading alone in a note still gets its chunk
    assert [content(c) for c in chunk_document("T", "## User Stories")] == ["## User Stories"]

    # a small tail: 3 lines of 100 words, one of 80, then one of 3; greedy packing gave [380 words], [3 words]
    lines = [" ".join(f"l{j}x{i}" for i in range(100 if j < 3 else 80)) for j in range(4)] + ["önce gelir tail"]
    paragraph = "\n".join(lines)  # one paragraph over the limit: split at line ends
    pieces = [content(c) for c in chunk_document("T", paragraph)]
    sizes = [len(p.split()) for p in pieces]
    assert sum(sizes) == 383 and len(pieces) == 2
    assert min(sizes) >= MERGE_BELOW_WORDS and max(sizes) <= SPLIT_ABOVE_WORDS
    assert sizes == [200, 183]  # as evenly as the lines allow
    assert "\n".join(pieces) == paragraph  # nothing lost or reordered


def test_a_fence_of_heading_looking_lines_cut_from_what_precedes_it_is_kept():
    """QA round 154-G F3: a piece holding a fenced block whose lines all start with ``# `` (shell comments, a markdown
    template fenced without a language tag) was taken for a piece of headings alone and dropped; the lines inside a
    fence are text. A piece of real headings and comments alone is still no chunk."""
    from dreamdb.embeddings.chunk import SPLIT_ABOVE_WORDS, chunk_with_coverage

    words = " ".join(f"w{i}" for i in range(SPLIT_ABOVE_WORDS - 10))
    steps = "```\n" + "\n".join(f"# step{i} do the thing" for i in range(10)) + "\n```"
    chunking = chunk_with_coverage("T", f"## Setup\n\n{words}\n\n{steps}\n")
    contents = [content(c) for c in chunking.chunks]
    assert contents == [f"## Setup\n\n{words}", steps], contents

    template = "~~~\n# Title\n\n" + "\n\n".join(f"## Section {i} of the record" for i in range(4)) + "\n~~~"
    contents = [content(c) for c in chunk_document("T", f"## Setup\n\n{words}\n\n{template}\n")]
    assert contents == [f"## Setup\n\n{words}", template], contents

    html = "<pre>\n" + "\n".join(f"# line {i} of the output" for i in range(4)) + "\n</pre>"
    contents = [content(c) for c in chunk_document("T", f"## Setup\n\n{words}\n\n{html}\n")]
    assert contents[-1] == html, contents

    # a fence opened and closed with nothing to say, then a heading and a comment: no chunk of their own
    full = " ".join(f"f{i}" for i in range(SPLIT_ABOVE_WORDS))
    opening = " ".join(f"o{i}" for i in range(120))
    contents = [content(c) for c in chunk_document("T", f"{opening}\n\n## Notes\n\n```\n```\n\n<!--\n# x\n-->\n\n{full}\n")]
    assert contents == [opening, full], contents


def test_a_setext_heading_is_a_heading():
    """QA round 155-A F3: a setext heading (``User Stories`` over ``====``, ``Criteria`` over ``----``) was read as a
    paragraph: a note written with them was cut at none of its headings, and a heading whose paragraph fills a chunk
    was a chunk of its own (``'User Stories\\n============'``, 3 words with the title), where ``## User Stories`` is
    none. Read as CommonMark does: the underline makes the paragraph right above it a heading (one line of heading
    length: QA round 156-A F3); a ``---`` line after a blank line is a thematic break, and one under a list item or a
    quote is no underline of it."""
    from dreamdb.embeddings.chunk import _blocks

    first, second = words(379, "u"), words(379, "c")
    setext = f"User Stories\n============\n\n{first}\n\nCriteria\n--------\n\n{second}"
    atx = f"## User Stories\n\n{first}\n\n## Criteria\n\n{second}"
    assert [content(c) for c in chunk_document("T", setext)] == [first, second]
    assert [content(c) for c in chunk_document("T", atx)] == [first, second]

    # cut at a setext heading as at an ATX one: the heading starts its section's chunk
    body = f"{words(150, 'a')}\n\nTwo\n---\n\n{words(150, 'b')}\n\nThree in a line\n=====\n{words(150, 'c')}"
    assert [content(c) for c in chunk_document("Doc", body)] == [
        words(150, "a"), f"Two\n---\n\n{words(150, 'b')}", f"Three in a line\n=====\n\n{words(150, 'c')}"]

    assert _blocks("text\n\n---\n\nmore") == [("para", "text"), ("para", "---"), ("para", "more")]  # a thematic break
    assert _blocks("===\ntext") == [("para", "===\ntext")]  # no paragraph above: text
    for above in ("- item", "1. item", "> quoted", "| a | b |", "    code", "intro\n* item"):
        assert [kind for kind, _ in _blocks(f"{above}\n---")] == ["para"], above
    assert _blocks("```\nfenced\n---\n```") == [("fence", "```\nfenced\n---\n```")]  # in a fence: code



def test_text_right_above_a_break_is_never_dropped():
    """QA round 156-A F3: a paragraph written right above a ``---`` line (a thematic break, to its author) was read as
    a setext heading of any length, and cut from the paragraph after it, dropped as a piece of headings alone, yet
    counted as kept: an 83-word paragraph then a 320-word one gave one chunk of 321 words, kept_words 404 of 404. A
    setext heading is one line of heading length; a longer paragraph, or one of several lines, is text, which the
    underline ends. Checked besides on every note of the example and real vaults: no word of text is left out."""
    from collections import Counter
    from pathlib import Path

    from dreamdb.embeddings.chunk import (SETEXT_HEADING_MAX_CHARS, SETEXT_HEADING_MAX_WORDS, SPLIT_ABOVE_WORDS,
                                          _COMMENT_RE, _WORD_CHAR, _blocks, chunk_with_coverage,
                                          embedded_text)
    from dreamdb.vault.literal_blocks import COMMENT_OPENING, block_opening
    from tests.conftest import REAL_VAULT_SRC, ROOT

    p1, p2, p300 = words(83, "p"), words(320, "q"), words(300, "r")
    for body, want in ((f"{p1}\n---\n\n{p2}", [f"{p1}\n---", p2]),
                       (f"{p300}\n---\n\n{p2}", [f"{p300}\n---", p2]),
                       (f"{p300}\n===\n\n{p2}", [f"{p300}\n===", p2]),
                       (f"{p300}\n---\n{p2}", [f"{p300}\n---", p2]),  # (the break ends the paragraph)
                       # a note's last paragraph glued to a trailing ---, after a section too long to take it in
                       (f"## Intro\n\n{words(377, 'i')}\n\n{p1}\n---\n",
                        [f"## Intro\n\n{words(377, 'i')}", f"{p1}\n---"]),
                       # a paragraph's short last line over the break, cut from the lines above it: its text still
                       (f"{words(SPLIT_ABOVE_WORDS - 1, 'l')}\nthe last line\n---\n\n{words(SPLIT_ABOVE_WORDS, 'n')}",
                        [words(SPLIT_ABOVE_WORDS - 1, "l"), "the last line\n---", words(SPLIT_ABOVE_WORDS, "n")])):
        got = chunk_with_coverage("T", body)
        assert [content(c) for c in got.chunks] == want, body[:40]
        assert got.kept_words == got.words and not got.truncated

    # a heading is one line of heading length; a longer one, or several lines, is text
    at_most = " ".join(["word"] * SETEXT_HEADING_MAX_WORDS)
    assert _blocks(f"{at_most}\n---")[0][0] == "heading"
    assert _blocks(f"{at_most} more\n---")[0][0] == "para"
    assert _blocks("x" * SETEXT_HEADING_MAX_CHARS + "\n===")[0][0] == "heading"
    assert _blocks("x" * (SETEXT_HEADING_MAX_CHARS + 1) + "\n===")[0][0] == "para"
    assert _blocks("Three\nin two lines\n=====\nmore") == [("para", "Three\nin two lines\n====="), ("para", "more")]

    # no word of text left out of any note: only headings, comments and markup make a piece of nothing to say
    bodies = [f"{p1}\n---\n\n{p2}"]
    for root in (ROOT / "examples" / "_dream_context", REAL_VAULT_SRC):
        if root.is_dir():
            bodies += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(Path(root).rglob("*.md"))]
    for body in bodies:
        got = chunk_with_coverage("T", body)
        if got.truncated:
            continue
        assert got.kept_words == got.words, body[:80]
        text = embedded_text(body.replace("\r\n", "\n").replace("\r", "\n"))
        said = Counter()  # (words of text: letters or digits, outside headings and comments)
        for kind, block in _blocks(text):
            if kind == "para" or block_opening(block.split("\n", 1)[0]) == COMMENT_OPENING:
                block = _COMMENT_RE.sub("", block)
            if kind != "heading":
                said.update(w for w in block.split() if _WORD_CHAR.search(w))
        chunked = Counter(w for c in got.chunks for w in content(c).split())
        assert not said - chunked, (body[:80], list((said - chunked).items())[:5])


def test_a_last_heading_with_nothing_under_it_is_no_chunk():
    """QA round 155-A F3: a piece of headings alone was no chunk only where it was cut from the paragraph after it; a
    note's last heading, with nothing under it (``## Related``, ``## Related`` then ``### See also``, ``## Open
    questions`` over a comment) and after a section too long to take it in, was a chunk of its own, which dense recall
    ranked first for ``see also``. Such a piece is no chunk wherever it falls, unless it is all the note says."""
    from dreamdb.embeddings.chunk import chunk_with_coverage

    intro = words(377, "i")  # (with its heading, 379 words: the section takes no 2 more)
    for tail in ("## Related\n", "## Related\n\n### See also", "## Open questions\n\n<!-- to fill -->", "Related\n---"):
        body = f"## Intro\n\n{intro}\n\n{tail}"
        assert [content(c) for c in chunk_document("T", body)] == [f"## Intro\n\n{intro}"], tail
        got = chunk_with_coverage("T", body, max_chunks=1)
        assert len(got.chunks) == 1 and not got.truncated, tail  # (the label past the cap is no text left out)
    # a note of headings alone keeps them, as a note of one heading does
    assert [content(c) for c in chunk_document("T", "# A\n\n## B")] == ["# A\n\n## B"]
    assert [content(c) for c in chunk_document("T", "Related\n=======")] == ["Related\n======="]
    # and one more chunk of text than kept is still a text cut
    got = chunk_with_coverage("T", f"## Intro\n\n{intro}\n\n## More\n\n{intro}", max_chunks=1)
    assert got.truncated and len(got.chunks) == 1

