"""A query that matched nothing as typed, read again with its misspelled words corrected (QA round 154-D F4).

Real indexes of small vaults; the lexicon case uses the KeNet lexicon built once a run."""

from __future__ import annotations

import pytest

import dreamdb
from dreamdb.ranking.rank import MIN_CORRECTED_LETTERS, SqlVocabulary, one_edit_spellings, plan_query
from tests.conftest import write_doc


def test_one_edit_spellings_are_the_four_damerau_edits():
    got = one_edit_spellings("brian")
    assert {"bian", "brain", "briian", "brien", "brian"[1:]} <= got  # deleted, swapped, inserted, replaced
    assert "brian" not in got and "brain" in got and "brina" in got
    assert all(abs(len(w) - 5) <= 1 for w in got)
    assert len(got) <= 54 * 5 + 25  # Norvig's count for n letters, less the duplicates
    assert "rbina" not in got  # two edits


def _vault(v):
    write_doc(v, "knowledge/dashboard-security.md",
              "---\nname: Dashboard security\n---\nThe dashboard server binds to localhost and checks a token.\n")
    write_doc(v, "knowledge/worktrees.md",
              "---\nname: Worktrees and the brain\n---\nEvery git worktree shares one brain folder.\n")
    write_doc(v, "knowledge/workers.md",
              "---\nname: Background workers\n---\nThe workers drain the queue; workers restart on failure.\n")
    return v


def test_a_query_that_matched_nothing_is_read_with_its_spelling_corrected(tiny_vault):
    with dreamdb.open(_vault(tiny_vault)) as index:
        hits = index.recall("dashbaord securty")
        assert [h.doc_id for h in hits][:1] == ["knowledge/dashboard-security"]
        assert hits[0].score > 0
        assert ("nothing matched the query as typed; read with its spelling corrected: dashbaord → dashboard,"
                " securty → security") in index.take_notes()
        # a typo one edit from two words the notes hold stands for either, as one term (a class)
        hits = index.recall("worktres brian")
        assert hits[0].doc_id == "knowledge/worktrees"
        notes = index.take_notes()
        assert any(n.startswith("nothing matched the query as typed") and "brian → brain" in n
                   and "worktres → " in n and "worktree" in n for n in notes), notes
        # a query that matched something as typed is left as typed: no correction, no note
        hits = index.recall("dashbaord security")
        assert [h.doc_id for h in hits] == ["knowledge/dashboard-security"]
        assert not any("spelling corrected" in n for n in index.take_notes())
        # words too short, capitalised (a name), or with digits are not corrected; nothing is made up
        for query in ("tken", "Brian", "securty2", "zzqqxx"):
            assert index.recall(query) == [], query
            assert not any("spelling corrected" in n for n in index.take_notes())
        assert len("tken") < MIN_CORRECTED_LETTERS
        # the hybrid modes leave typos to the dense channel: their BM25 part is not corrected
        plan = plan_query("dashbaord securty", vocabulary=SqlVocabulary(index.conn))
        assert plan.terms == ["dashbaord", "securti"] and plan.corrected == {}


def test_the_cli_says_which_words_it_corrected(tiny_vault):
    import json

    from click.testing import CliRunner

    from dreamdb.cli import cli

    _vault(tiny_vault)
    out = CliRunner().invoke(cli, ["recall", "--vault", str(tiny_vault), "--json", "dashbaord securty"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["hits"][0]["doc_id"] == "knowledge/dashboard-security"
    assert any("dashbaord → dashboard" in n for n in data["notes"])


def test_a_word_the_lexicon_lists_is_no_typo(tiny_vault, kenet_lexicon, monkeypatch):
    """A word spelled right that no note holds (``goats``, in the lexicon) is a word the notes do not use: one edit
    from it is another word (``goals``), so it is not corrected, while a typo the lexicon does not list is; without a
    lexicon nothing tells the two apart."""
    write_doc(tiny_vault, "knowledge/a.md", "---\nname: Quarterly planning\n---\nThe planning meeting sets goals.\n")
    with dreamdb.open(tiny_vault) as index:  # (the tests' default: no lexicon)
        assert [h.doc_id for h in index.recall("goats")] == ["knowledge/a"]
        assert any("goats → goals" in n for n in index.take_notes())
    monkeypatch.setenv("DREAMDB_LEXICON", str(kenet_lexicon))
    with dreamdb.open(tiny_vault) as index:
        assert index.recall("goats") == []
        assert not any("spelling corrected" in n for n in index.take_notes())
        assert [h.doc_id for h in index.recall("meetnig")] == ["knowledge/a"]
        assert any("meetnig → meeting" in n for n in index.take_notes())


@pytest.mark.parametrize("engine", ["sql", "memory"])
def test_both_engines_correct_alike(tiny_vault, engine):
    _vault(tiny_vault)
    with dreamdb.open(tiny_vault, engine=engine) as index:
        hits = index.recall("dashbaord securty", top=3)
        assert [h.doc_id for h in hits][:1] == ["knowledge/dashboard-security"]


def test_long_runs_of_letters_filters_and_explain_are_handled_honestly(tiny_vault):
    """QA round 154-G F1, F4: a word of thousands of letters (a pasted DNA sequence) made 54n + 25 candidates of n
    letters each (12 s and 3.9 GB in the hook; the CLI failed binding a 1 GB parameter): a run longer than
    MAX_CORRECTED_LETTERS is no typo. Under filters, a query whose words match a note the filters leave out is not
    "nothing matched as typed". --explain says the correction once."""
    from dreamdb.ranking.rank import MAX_CORRECTED_LETTERS

    write_doc(tiny_vault, "knowledge/release-checklist.md", "---\nname: Release checklist\n---\nThe release checklist.\n")
    write_doc(tiny_vault, "knowledge/features/bookmarks.md", "---\nname: Bookmarks\n---\nBookmarks compete in sleep.\n")
    with dreamdb.open(tiny_vault) as index:
        dna = "acgt" * 1000
        assert index.recall(f"checklst {dna}") != []
        notes = index.take_notes()
        assert any("checklst → checklist" in n for n in notes) and not any(dna[:40] in n for n in notes), notes
        word = "checklst" + "z" * (MAX_CORRECTED_LETTERS - 7)  # one letter too long to be corrected
        assert index.recall(word) == []
        assert not any("spelling corrected" in n for n in index.take_notes())
        # a word that matched, in a note the filter leaves out: nothing is corrected, nothing said so
        assert index.recall("bookmarks checklst", types="knowledge") == []
        assert not any("spelling corrected" in n for n in index.take_notes())
        # no note matched as typed: corrected under the filter too
        assert [h.doc_id for h in index.recall("checklst", types="knowledge")] == ["knowledge/release-checklist"]
        assert any("checklst → checklist" in n for n in index.take_notes())
        index.recall("checklst", explain=True)
        notes = index.take_notes()
        assert sum("checklst" in n or "checklst" in n.replace("checklist", "") for n in notes) == 1, notes
        assert not any(n.startswith("matched through another analysis") for n in notes), notes


def test_the_cap_counts_the_words_tried_not_the_words_corrected(tiny_vault):
    """QA round 155-A F2: MAX_SPELLED_WORDS counted corrections, so every eligible word with none was still expanded
    (54n + 25 spellings each, stemmed and looked up): 300 random 30-letter words cost 1.25 s against 0.19 s. The first
    MAX_SPELLED_WORDS eligible words are tried, corrected or not; a typo after them is left as typed."""
    from dreamdb.ranking.rank import MAX_SPELLED_WORDS

    write_doc(tiny_vault, "knowledge/release-checklist.md", "---\nname: Release checklist\n---\nThe release checklist.\n")
    junk = [f"zqxj{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(MAX_SPELLED_WORDS)]  # no note's word near
    with dreamdb.open(tiny_vault) as index:
        # one word fewer than the cap before it: the typo is the last word tried, and corrected
        assert [h.doc_id for h in index.recall(" ".join(junk[1:] + ["checklst"]))] == ["knowledge/release-checklist"]
        assert any("checklst → checklist" in n for n in index.take_notes())
        # the cap's worth of uncorrectable words before it: the typo is the 17th, not tried
        assert index.recall(" ".join(junk + ["checklst"])) == []
        assert not any("spelling corrected" in n for n in index.take_notes())


def test_several_vaults_correct_only_when_none_matched_and_alike(tmp_path):
    """QA round 155-A F1: each vault decided alone whether nothing matched, so one vault's notes read through the
    corrected spelling (`securty` as *security*) came before the only note, in another vault, that held the word as
    typed. A query that matched a note of any vault as typed (one its filters leave out too) is left as typed in all;
    one that matched none is read in every vault with the corrections of all, and said once."""
    a, b = tmp_path / "a" / "_dream_context", tmp_path / "b" / "_dream_context"
    write_doc(a, "knowledge/dashboard-security.md", "---\nname: Dashboard security\ntags: [ops]\n---\n"
              "The dashboard server's security: it binds to localhost and checks a token.\n")
    write_doc(a, "knowledge/workers.md",
              "---\nname: Background workers\n---\nThe workers drain the queue; workers restart on failure.\n")
    write_doc(b, "knowledge/typo-note.md", "---\ntitle: Typo note\n---\nThe securty of the widget is handled elsewhere.\n")
    write_doc(b, "knowledge/worktrees.md",
              "---\nname: Worktrees and the brain\n---\nEvery git worktree shares one brain folder.\n")
    with dreamdb.open([a, b]) as index:
        # matched as typed in b: no vault corrects it
        assert [h.doc_id for h in index.recall("securty", top=10)] == ["knowledge/typo-note"]
        assert not any("spelling corrected" in n for n in index.take_notes())
        # matched as typed in b by a note the filter leaves out: nor is it corrected in a
        assert index.recall("securty", tags="ops") == []
        assert not any("spelling corrected" in n for n in index.take_notes())
        # matched in no vault: every vault reads it with the corrections of all (a's workers, b's worktrees), said once
        hits = index.recall("worktres", top=10)
        assert {(h.doc_id, h.vault) for h in hits} == {("knowledge/workers", str(a)), ("knowledge/worktrees", str(b))}
        notes = [n for n in index.take_notes() if "spelling corrected" in n]
        assert len(notes) == 1 and notes[0].startswith("nothing matched the query as typed in any vault"), notes
        assert "worktres → " in notes[0] and "worktree" in notes[0] and "worke" in notes[0], notes
    # one vault alone still corrects by its own notes
    with dreamdb.open(a) as index:
        assert [h.doc_id for h in index.recall("securty")] == ["knowledge/dashboard-security"]
        assert any("securty → security" in n for n in index.take_notes())


@pytest.mark.parametrize("engine", ["sql", "memory"])
def test_a_correction_is_named_as_the_notes_write_it(tiny_vault, engine):
    """QA round 155-A F5: the note named a correction by its shortest spelling one edit from the typo, which stems to
    a term the notes hold but may be no word of theirs (``securtys → securitys``, ``comitted → … or cometted``). Now by
    the spelling one edit away that the notes write, else by the word they write that term as most often."""
    write_doc(tiny_vault, "knowledge/release.md", "---\nname: Release notes\n---\nThe fix was committed on Friday. "
              "Security is reviewed first: security reviews block a release.\n")
    write_doc(tiny_vault, "knowledge/sky.md", "---\nname: Night sky\n---\nTwo comets crossed the sky; comets are rare.\n")
    with dreamdb.open(tiny_vault, engine=engine) as index:
        assert [h.doc_id for h in index.recall("securtys")] == ["knowledge/release"]
        notes = [n for n in index.take_notes() if "spelling corrected" in n]
        assert notes and notes[0].endswith("securtys → security"), notes
        assert {h.doc_id for h in index.recall("comitted")} == {"knowledge/release", "knowledge/sky"}
        notes = [n for n in index.take_notes() if "spelling corrected" in n]
        assert notes and notes[0].endswith("comitted → comets or committed"), notes  # (one note each: by term)
        # a query read as Turkish (here by one word, için) has no word corrected, its English typos included
        assert index.recall("securtys için") == []
        assert not any("spelling corrected" in n for n in index.take_notes())
