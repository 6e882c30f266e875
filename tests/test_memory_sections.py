"""``core/2.memory.md`` → one memory document per ``## `` section (SPEC §1), read as CommonMark reads it.

QA found that a ``## `` line inside a fenced code block cut a section in two, that ``## Notes on C#``
lost its ``#``, that a CRLF ``## Alpha ##`` kept its closing ``##``, and that text before the first
``## `` heading vanished without a word. Rules: https://spec.commonmark.org/0.31.2/, sections
"ATX headings" and "Fenced code blocks". Real files, real SQLite, no mocks.
"""

from __future__ import annotations

import re

import pytest

import dreamdb
from dreamdb.analyzer import ANALYZER_VERSION
from dreamdb.vault.parse import parse_memory
from tests.conftest import REAL_VAULT_SRC, ROOT, needs_real_vault, write_doc

MEM = "core/2.memory.md"
PREAMBLE_WARNING = f"{MEM}: text before the first '## ' heading is not indexed; put it under a '## ' heading"
NO_SECTION_WARNING = f"{MEM}: no '## ' heading, so none of its text is indexed; put it under a '## ' heading"


def sections(text: str) -> list[tuple[str, str, str]]:
    """``(slug, title, body)`` of each memory document parsed from ``text``; asserts there is no warning."""
    docs, warnings = parse_memory(MEM, text)
    assert warnings == []
    return [(d.slug, d.title, d.body) for d in docs]


def memory_rows(index) -> list[tuple[str, str, str]]:
    """``(doc_id, title, body)`` of the indexed memory documents, in file order."""
    return [tuple(r) for r in index.conn.execute(
        "SELECT doc_id, title, body FROM documents WHERE type = 'memory' ORDER BY ordinal")]


# ---------------------------------------------------------------- fenced code blocks


def test_a_heading_inside_a_backtick_fence_stays_in_the_section_body():
    """The QA repro, verbatim: no ``memory/not-a-heading-inside-fence``, and ``memory/first`` keeps its fence."""
    text = "## First\nkoala one\n\n```md\n## Not a heading inside fence\nkoala fence\n```\n"
    assert sections(text) == [
        ("first", "First", "koala one\n\n```md\n## Not a heading inside fence\nkoala fence\n```"),
    ]


def test_a_heading_inside_a_tilde_fence_stays_in_the_section_body_and_headings_resume_after_it():
    text = "## One\none\n~~~\n## Two\n~~~\n## Three\nthree\n"
    assert sections(text) == [("one", "One", "one\n~~~\n## Two\n~~~"), ("three", "Three", "three")]


@pytest.mark.parametrize("opening, closing, closes", [
    ("```", "```", True),
    ("```", "`````", True),            # a longer closing run closes
    ("~~~~", "~~~~~~", True),
    ("```", "   ```  \t", True),       # indented up to 3 spaces, spaces and tabs after
    ("````", "```", False),            # a shorter run does not
    ("~~~", "```", False),             # nor the other character
    ("```", "~~~", False),
    ("```", "    ```", False),         # 4 spaces: an indented line, not a closing fence
    ("```", "``` json", False),        # a closing fence has no info string
])
def test_a_fence_closes_only_at_a_run_of_its_character_at_least_as_long(opening, closing, closes):
    text = f"## Open\n{opening}\n## Inside\n{closing}\n## After\nafter\n"
    if closes:
        assert sections(text) == [("open", "Open", f"{opening}\n## Inside\n{closing.rstrip()}"), ("after", "After", "after")]
    else:  # never closed: the fence runs to the end of the file, so ## After is code too
        assert sections(text) == [("open", "Open", f"{opening}\n## Inside\n{closing}\n## After\nafter")]


def test_a_markdown_sample_fenced_with_four_backticks_keeps_its_inner_fence_and_heading():
    """As in the real vault's workspace/automations-redesign/plan-validated.md: ```` around ## and ```."""
    text = "## Outer\nsample:\n\n````markdown\n## Flow\n\n```json\n{}\n```\n````\n\n## After\nafter\n"
    assert sections(text) == [
        ("outer", "Outer", "sample:\n\n````markdown\n## Flow\n\n```json\n{}\n```\n````"),
        ("after", "After", "after"),
    ]


def test_an_unclosed_fence_runs_to_the_end_of_the_file():
    text = "## A\nalpha\n```python\n## B\nbeta\n\n~~~\n## C\n"
    assert sections(text) == [("a", "A", "alpha\n```python\n## B\nbeta\n\n~~~\n## C")]


def test_what_opens_a_fence():
    """Up to 3 spaces of indentation; a backtick fence's info string has no backtick (a tilde fence's may)."""
    text = ("## A\n   ```\n## in one\n   ```\n"
            "## B\n``` a`b\n"               # inline code, not a fence: the next ## is a heading
            "## C\n    ```\n"               # indented code, not a fence
            "## D\n~~~ a`b\n## in two\n~~~\n")
    assert sections(text) == [
        ("a", "A", "```\n## in one\n   ```"),
        ("b", "B", "``` a`b"),
        ("c", "C", "```"),
        ("d", "D", "~~~ a`b\n## in two\n~~~"),
    ]


def test_repeated_headings_are_numbered_and_fenced_ones_do_not_count():
    text = "## Notes\none\n```\n## Notes\n```\n## Notes\ntwo\n## Notes\nthree\n"
    assert sections(text) == [
        ("notes", "Notes", "one\n```\n## Notes\n```"),
        ("notes-2", "Notes", "two"),
        ("notes-3", "Notes", "three"),
    ]


def test_a_repeated_heading_skips_the_number_another_section_has_as_its_own_slug():
    """QA round 19: ## Beta, ## Beta, ## Beta 2 were beta, beta-2, beta-2-2: memory/beta-2 was not "Beta 2"."""
    text = "## Beta\none\n## Beta\ntwo\n## Beta 2\nthree\n## Beta\nfour\n"
    assert sections(text) == [
        ("beta", "Beta", "one"), ("beta-3", "Beta", "two"), ("beta-2", "Beta 2", "three"), ("beta-4", "Beta", "four"),
    ]


# ---------------------------------------------------------------- HTML comment blocks


def test_a_heading_inside_an_html_comment_block_stays_in_the_section_body():
    """CommonMark HTML block type 2: from a line starting with <!-- to the first line containing -->."""
    text = "## First\nhello\n<!--\n## hidden\nstill comment\n-->\nmore\n## Second\nbye\n"
    assert sections(text) == [
        ("first", "First", "hello\n<!--\n## hidden\nstill comment\n-->\nmore"),
        ("second", "Second", "bye"),
    ]


def test_what_opens_and_closes_an_html_comment_block():
    text = ("## A\n   <!-- draft\n## in one -->\n"       # indented up to 3 spaces; closes on the line holding -->
            "## B\n<!-- one line --> text\n"            # closed on its opening line: nothing stays open
            "## C\n<!-->\n"                              # <!--> holds --> too (CommonMark's end condition)
            "## D\ntext <!-- inline\n## E\n-->\n"       # a comment opened mid-line hides no heading
            "## F\n    <!--\n## G\n")                    # 4 spaces: indented code, not a comment block
    assert [slug for slug, _t, _b in sections(text)] == ["a", "b", "c", "d", "e", "f", "g"]
    assert sections(text)[0] == ("a", "A", "<!-- draft\n## in one -->")
    assert sections(text)[4] == ("e", "E", "-->")


def test_an_unclosed_html_comment_runs_to_the_end_and_a_fence_inside_it_is_comment_text():
    text = "## A\n<!--\n```\n-->\n## B\nb\n<!--\n## C\n"
    assert sections(text) == [("a", "A", "<!--\n```\n-->"), ("b", "B", "b\n<!--\n## C")]


def test_a_comment_opening_inside_a_fence_is_code():
    text = "## A\n```\n<!--\n```\n## B\nb\n"
    assert sections(text) == [("a", "A", "```\n<!--\n```"), ("b", "B", "b")]


def test_a_heading_inside_a_raw_html_block_stays_in_the_section_body():
    """QA round 19: ``## `` lines inside <pre>…</pre> started sections. CommonMark HTML block type 1."""
    text = ("## A\n<pre>\n## inside pre\n</pre>\n"
            "## B\n<PRE class=x>one line</pre>\n"       # closed on its opening line, any case
            "## C\n<script\n## in script\n</SCRIPT> after\n"
            "## D\n<presentation>\n"                    # not a pre tag: the next ## is a heading
            "## E\n<textarea>\n## F\n")                 # never closed: runs to the end
    assert sections(text) == [
        ("a", "A", "<pre>\n## inside pre\n</pre>"),
        ("b", "B", "<PRE class=x>one line</pre>"),
        ("c", "C", "<script\n## in script\n</SCRIPT> after"),
        ("d", "D", "<presentation>"),
        ("e", "E", "<textarea>\n## F"),
    ]


# ---------------------------------------------------------------- ATX headings


def test_a_closing_run_of_hashes_is_stripped_only_after_a_space_or_tab():
    text = ("## Notes on C#\nc\n## Alpha ##\na\n## Beta #\t \nb\n## #hashtag\nh\n"
            "## F# and C# ###\nf\n## Gamma ## x\ng\n## Delta#\nd\n")
    assert [(slug, title) for slug, title, _ in sections(text)] == [
        ("notes-on-c", "Notes on C#"),      # the slug is the one it always had
        ("alpha", "Alpha"),
        ("beta", "Beta"),
        ("hashtag", "#hashtag"),
        ("f-and-c", "F# and C#"),
        ("gamma-x", "Gamma ## x"),          # not at the end of the line: text
        ("delta", "Delta#"),
    ]


def test_crlf_line_endings():
    text = "## Alpha ##\r\nfirst line\r\nsecond\r\n\r\n```\r\n## Fenced\r\n```\r\n## Beta\r\nbeta\r\n"
    assert sections(text) == [
        ("alpha", "Alpha", "first line\r\nsecond\r\n\r\n```\r\n## Fenced\r\n```"),
        ("beta", "Beta", "beta"),
    ]
    # a lone CR ends a line too (CommonMark), as in the chunker; a file of such line ends is read as lines (QA round
    # 90-C F5: its frontmatter was missed)
    assert sections("## Alpha ##\r```\r## Fenced\r```\r## Beta\rbeta") == [
        ("alpha", "Alpha", "```\n## Fenced\n```"), ("beta", "Beta", "beta")]


def test_a_heading_may_be_indented_up_to_three_spaces():
    text = ("   ## Three spaces\nthree\n    ## Four spaces is code\n\t## A tab is code\n"
            "##No space is text\n### An H3 is not a section\n ## One\none\n")
    assert sections(text) == [
        ("three-spaces", "Three spaces",
         "three\n    ## Four spaces is code\n\t## A tab is code\n##No space is text\n### An H3 is not a section"),
        ("one", "One", "one"),
    ]


def test_an_empty_heading_ends_the_section_and_never_makes_a_title_of_hashes():
    """``##    ###`` is an empty H2 (CommonMark): it ends the section before it; its own text is kept under
    the slug fallback ``section`` with an empty title; an empty heading with no text (a divider) makes nothing."""
    text = "## Before\nb\n##    ###\norphan text\n##\n## ##\n\n## After\na\n##\nmore orphan text\n"
    assert sections(text) == [
        ("before", "Before", "b"),
        ("section", "", "orphan text"),
        ("after", "After", "a"),
        ("section-2", "", "more orphan text"),
    ]


# ---------------------------------------------------------------- text outside any section


def test_substantive_text_before_the_first_heading_is_reported():
    harmless = [
        "",
        "\n \n\t\n",
        "# Memory\n\n",
        "   # Memory #\n",
        "#\n",
        "<!-- one -->\n<!--\nmulti\n\nline\n-->\n",
        "---\n***\n_ _ _\n- - -\n",
        "# Memory\n<!-- kept by the agent -->\n\n---\n\n",
    ]
    substantive = [
        "Remember the koala.\n",
        "# Memory\n# A second title\n",
        "### A sub heading\n",
        "- a list item\n",
        "<!-- a comment --> then text\n",
        "```\n## fenced, not a heading\n```\n",
        "    indented code\n",
        "--\n",
    ]
    for preamble in harmless:
        docs, warnings = parse_memory(MEM, f"---\nname: m\n---\n{preamble}## A\na\n")
        assert ([d.doc_id for d in docs], warnings) == (["memory/a"], []), preamble
    for preamble in substantive:
        docs, warnings = parse_memory(MEM, f"---\nname: m\n---\n{preamble}## A\na\n")
        assert ([d.doc_id for d in docs], warnings) == (["memory/a"], [PREAMBLE_WARNING]), preamble
        assert docs[0].body == "a"  # the rule stays: one document per section, the preamble in none
    # an unclosed frontmatter block is the body: its own warning covers those lines, no second one
    docs, warnings = parse_memory(MEM, "---\nname: m\n## A\na\n")
    assert warnings == [f"{MEM}: frontmatter block is not closed by a '---' line; indexed every section of the file"]


def test_a_file_opening_with_a_horizontal_rule_loses_no_section():
    """QA round 19: '---' rules around text read as a frontmatter block that was no mapping, and the text
    between them (here the whole section Alpha) was dropped from the index."""
    docs, warnings = parse_memory(MEM, "---\n## Alpha\nalpha body\n\n---\n## Beta\nbeta body\n")
    assert [(d.doc_id, d.body) for d in docs] == [("memory/alpha", "alpha body\n\n---"), ("memory/beta", "beta body")]
    assert warnings == [f"{MEM}: the lines between the first two '---' lines are no YAML mapping (a text), so no "
                        "frontmatter; indexed every section of the file"]
    docs, warnings = parse_memory(MEM, "---\n- one\n- two\n---\n## A\na\n")  # a list: no frontmatter either
    assert [d.doc_id for d in docs] == ["memory/a"] and "(a list)" in warnings[0]
    assert warnings[1:] == [PREAMBLE_WARNING]  # "- one - two" is in no section: said


def test_the_memory_files_frontmatter_dates_are_checked_as_a_notes():
    """QA round 145-E F3: ``updated: 2026/08/18`` in the memory file was dropped without a word (a note's is warned
    of), and its ``expires:`` ignored silently: the sections never expire, which a warning now says, once."""
    docs, warnings = parse_memory(MEM, "---\nupdated: 2026/08/18\ndate: 2026-08-01T25:00\nexpires: 2026-09-01\n"
                                       "---\n## A\na\n## B\nb\n")
    assert [(d.doc_id, d.date, d.expires) for d in docs] == [("memory/a", "2026-08-01", None),
                                                             ("memory/b", "2026-08-01", None)]
    assert warnings == [
        f"{MEM}: frontmatter updated '2026/08/18' is not a date (YYYY-MM-DD…); ignored",
        f"{MEM}: frontmatter date '2026-08-01T25:00' is a date followed by no valid time of day; its date alone is used",
        f"{MEM}: frontmatter expires is ignored: the sections of the memory file never expire; give what should expire"
        " a note of its own (knowledge/…) with its expires date"]
    assert parse_memory(MEM, "---\nupdated: 2026-08-18\n---\n## A\na\n")[1] == []


def test_a_file_with_text_but_no_section_is_reported():
    for text in ("# Memory\n\nWe chose SQLite.\n", "We chose SQLite.", "```\n## fenced only\n```\n",
                 "---\nname: m\n---\n### Only an H3\n"):
        assert parse_memory(MEM, text) == ([], [NO_SECTION_WARNING]), text
    for text in ("", "# Memory\n", "---\nname: m\n---\n", "---\nname: m\n---\n\n# Memory\n\n<!-- empty -->\n"):
        assert parse_memory(MEM, text) == ([], []), text


# ---------------------------------------------------------------- normal files: unchanged


def _split_as_before(text: str) -> list[tuple[str, str, str]]:
    """The parser before the fence/ATX fixes, for checking that ordinary files read the same:
    a plain split on ``##`` lines, slugs numbered alike."""
    from dreamdb.vault.frontmatter import split_frontmatter
    from dreamdb.vault.parse import slugify

    parts = re.split(r"^##[ \t]+(.+?)[ \t]*#*[ \t]*$", split_frontmatter(text)[1], flags=re.MULTILINE)
    seen: dict[str, int] = {}
    out = []
    for i in range(1, len(parts) - 1, 2):
        heading, content = parts[i].strip(), parts[i + 1].strip()
        seen[slugify(heading)] = n = seen.get(slugify(heading), 0) + 1
        out.append((slugify(heading) + ("" if n == 1 else f"-{n}"), heading, content))
    return out


ORDINARY = """---
name: active-decisions
type: memory
updated: '2026-08-12T00:00:00Z'
---

## Technical Decisions

- **★★★ Writes are atomic (2026-07-02)**: temp file, then rename. Code: `os.replace(tmp, path)`.
- **★ Keep synonyms in the vault**: `synonyms.txt`.

```sh
dreamdb sync   # a fence without a heading in it
```

## Known Issues ##

### Sub-heading stays in the body

- **Slow tests (2026-07-27)**: run the suite alone.

## Known Issues
second one
"""


def test_an_ordinary_memory_file_gives_the_same_documents_as_before():
    docs, warnings = parse_memory(MEM, ORDINARY)
    assert warnings == []
    assert [(d.slug, d.title, d.body) for d in docs] == _split_as_before(ORDINARY)
    assert [(d.slug, d.ordinal, d.level, d.date) for d in docs] == [
        ("technical-decisions", 0, 3, "2026-08-12T00:00:00Z"),
        ("known-issues", 1, 2, "2026-08-12T00:00:00Z"),
        ("known-issues-2", 2, 2, "2026-08-12T00:00:00Z"),
    ]
    example = (ROOT / "examples" / "_dream_context" / "core" / "2.memory.md").read_text(encoding="utf-8")
    assert sections(example) == _split_as_before(example)
    assert [s for s, _, _ in sections(example)] == ["technical-decisions", "known-issues"]


@needs_real_vault
def test_the_real_vault_memory_file_gives_the_same_documents_as_before():
    text = (REAL_VAULT_SRC / "core" / "2.memory.md").read_text(encoding="utf-8")
    assert sections(text) == _split_as_before(text)
    assert [s for s, _, _ in sections(text)] == ["active-memory", "technical-decisions", "known-issues"]


# ---------------------------------------------------------------- end to end: sync, list, recall


def test_sync_indexes_sections_as_commonmark_reads_them_and_warns_once(tiny_vault):
    write_doc(tiny_vault, MEM, (
        "---\nname: memory\n---\n# Memory\n\nLoose wombat note.\n\n"
        "## First\nkoala one\n\n```md\n## Not a heading inside fence\nkoala fence\n```\n\n"
        "## Notes on C#\nsharp numbat\n\n"
        "## Alpha ##\n~~~\n## Tilde fenced\n~~~\n\n"
        "##    ###\n\n"
        "## Alpha\nsecond alpha\n"))
    write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: Other\n---\nunrelated\n")
    with dreamdb.open(tiny_vault) as index:
        report = index.sync()
        assert report.warnings == [PREAMBLE_WARNING]
        assert [(d["doc_id"], d["title"]) for d in index.list_documents(types="memory")] == [
            ("memory/alpha", "Alpha"), ("memory/alpha-2", "Alpha"), ("memory/first", "First"),
            ("memory/notes-on-c", "Notes on C#")]
        assert memory_rows(index) == [
            ("memory/first", "First", "koala one\n\n```md\n## Not a heading inside fence\nkoala fence\n```"),
            ("memory/notes-on-c", "Notes on C#", "sharp numbat"),
            ("memory/alpha", "Alpha", "~~~\n## Tilde fenced\n~~~"),
            ("memory/alpha-2", "Alpha", "second alpha"),
        ]
        assert [h.doc_id for h in index.recall("koala fence")][:1] == ["memory/first"]
        assert index.recall("wombat") == []  # the preamble: reported, not indexed
        assert index.sync().warnings == []   # shown once: nothing to re-parse
        assert index.sync(force=True).warnings == [PREAMBLE_WARNING]


def test_sync_of_a_crlf_memory_file(tiny_vault):
    (tiny_vault / "core").mkdir()
    (tiny_vault / MEM).write_bytes(
        "## Alpha ##\r\nalpha body\r\n```\r\n## Fenced\r\n```\r\n## Notes on C#\r\nsharp\r\n".encode())
    with dreamdb.open(tiny_vault) as index:
        assert index.sync().warnings == []
        assert memory_rows(index) == [
            ("memory/alpha", "Alpha", "alpha body\n```\n## Fenced\n```"),  # (line ends read as LF: QA round 120-B)
            ("memory/notes-on-c", "Notes on C#", "sharp"),
        ]


def test_sync_warns_about_a_memory_file_without_sections_until_it_has_one(tiny_vault):
    p = write_doc(tiny_vault, MEM, "# Memory\n\nWe chose SQLite for the okapi index.\n")
    with dreamdb.open(tiny_vault) as index:
        assert index.sync().warnings == [NO_SECTION_WARNING]
        assert memory_rows(index) == [] and index.recall("okapi") == []
        p.write_text("# Memory\n\n## Decisions\n\nWe chose SQLite for the okapi index.\n", encoding="utf-8")
        assert index.sync().warnings == []
        assert [h.doc_id for h in index.recall("okapi")] == ["memory/decisions"]


def test_an_index_built_by_the_previous_parser_is_reparsed_on_its_next_sync(tiny_vault):
    """PARSER_VERSION went 4 → 5: an index a parser-4 dreamdb wrote rebuilds at the next sync, no edit needed."""
    write_doc(tiny_vault, MEM, "## First\nkoala one\n```\n## Fenced\n```\n")
    with dreamdb.open(tiny_vault) as index:
        index.sync()
        index.conn.execute("UPDATE meta SET value = ? WHERE key = 'analyzer_version'", (f"{ANALYZER_VERSION}.4",))
        report = index.sync()
        assert report.rebuilt and report.changed == 1
        assert [r[0] for r in memory_rows(index)] == ["memory/first"]


def test_recall_over_a_memory_file_without_sections_says_why_nothing_is_indexed(tiny_vault):
    write_doc(tiny_vault, "core/2.memory.md", "# Memory\n\nFacts about platypus.\n")
    index = dreamdb.open(tiny_vault)
    assert index.recall("platypus") == []
    notes = index.take_notes()
    assert any("no '## ' heading" in n for n in notes)  # the sync's warning
    assert any("core/2.memory.md holds no indexable text" in n for n in notes)
    assert not any("no notes in the folders dreamdb reads" in n for n in notes)
