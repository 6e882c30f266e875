"""BM25 over several vaults weighs terms with collection statistics pooled over them (QA round 155-E F2)."""

from __future__ import annotations

import itertools

import dreamdb
from tests.conftest import write_doc

NOW = "2026-08-18"
NOTE = "---\ntitle: Release checklist\n---\nrelease checklist: tag build publish announce version bump\n"
SYLLABLES = ("ka", "lo", "mi", "nu", "pe", "ro", "su", "ti", "vo", "ze")


def _words():
    """Made-up words, each once: a filler note's text shares none with another's, nor with the note's."""
    return ("".join(p) for p in itertools.product(SYLLABLES, repeat=4))


def _vault(root, name: str, fillers: int, weak: int = 0):
    """A vault of the release checklist note and ``fillers`` notes of the same field lengths (a 2-word title, an
    8-word body: every vault's average field lengths alike), ``weak`` of them saying "release" and "checklist" once
    in their body."""
    vault = root / name / "_dream_context"
    write_doc(vault, "knowledge/release-checklist.md", NOTE)
    words = _words()
    for i in range(fillers):
        body = [next(words) for _ in range(8)]
        if i < weak:
            body[3:5] = "release", "checklist"
        write_doc(vault, f"knowledge/filler-{i:03}.md",
                  f"---\ntitle: {next(words)} {next(words)}\n---\n{' '.join(body)}\n")
    return vault


def test_one_note_scores_alike_in_a_small_and_a_big_vault_searched_together(tmp_path):
    """QA round 155-E F2: each vault weighed a term with its own IDF, bounded by ln(1 + 2N), so the note scored 4.08
    in a 3-document vault and 23.0 in a 771-document one. With N and df pooled, it scores alike in both (their
    average field lengths alike) and both copies come first for its title."""
    small, big = _vault(tmp_path, "small", 2), _vault(tmp_path, "big", 300, weak=5)
    for engine in ("memory", "sql"):
        for order in ((small, big), (big, small)):
            with dreamdb.open(list(order), engine=engine) as index:
                if engine == "memory" and order[0] == big:
                    index.warm()  # (every posting in memory: the IDF folded into them is each vault's own)
                hits = index.recall("release checklist", top=5, now=NOW, explain=True)
            assert [h.doc_id for h in hits[:2]] == ["knowledge/release-checklist"] * 2
            assert {h.vault for h in hits[:2]} == {str(small.resolve()), str(big.resolve())}
            assert hits[0].rank_score == hits[1].rank_score and hits[0].score == hits[1].score
            # the IDF of the pooled counts: 305 documents, "release" in 7 of them
            assert [(t["term"], t["df"]) for t in hits[0].terms] == [(t["term"], t["df"]) for t in hits[1].terms]
            assert ("releas", 7) in [(t["term"], t["df"]) for t in hits[0].terms]


def test_a_small_vaults_title_match_comes_before_a_big_vaults_weak_matches(tmp_path):
    """QA round 155-E F2: a 3-document vault's exact title match came 19th under a 771-document vault's notes
    saying a query word once. Pooled, the title match comes first, then the weak matches, whichever vault holds
    them; a vault searched alone ranks as before (its own statistics)."""
    small = tmp_path / "small" / "_dream_context"
    write_doc(small, "knowledge/release-checklist.md", NOTE)
    write_doc(small, "knowledge/other.md", "---\ntitle: Kalomi nupero\n---\nsutivo zekalo mirosu\n")
    big = _vault(tmp_path, "big", 300, weak=5)
    (big / "knowledge" / "release-checklist.md").unlink()
    with dreamdb.open([big, small]) as index:
        hits = index.recall("release checklist", top=5, now=NOW)
    assert (hits[0].doc_id, hits[0].vault) == ("knowledge/release-checklist", str(small.resolve()))
    assert {h.vault for h in hits[1:]} == {str(big.resolve())}
    assert hits[0].rank_score > 2 * hits[1].rank_score
    with dreamdb.open(small) as alone, dreamdb.open([small, small]) as twice:  # (one vault: its own statistics)
        assert [h.rank_score for h in alone.recall("release checklist", now=NOW)] == [
            h.rank_score for h in twice.recall("release checklist", now=NOW)]


def test_a_vault_gone_after_the_statistics_is_left_out_not_the_one_asking(tmp_path, monkeypatch):
    """QA round 155-H F1: a vault removed after its statistics were read made the next vault's ranking, asking it for
    document frequencies, raise VaultNotFound: that vault was left out as gone too, and with every vault "gone" the
    recall raised. The gone vault now adds nothing to the pooled counts and is left out with a note; the other
    answers."""
    import shutil

    from dreamdb.api import Index

    first, second = _vault(tmp_path, "first", 2), _vault(tmp_path, "second", 20, weak=3)
    with dreamdb.open([first, second], engine="sql") as index:
        index.recall("release checklist", now=NOW)
        taken = Index._collection_part
        calls = []

        def part_then_remove(self):
            out = taken(self)
            calls.append(self)
            if len(calls) == 2:  # (both vaults' statistics read: the first one goes)
                shutil.rmtree(first.parent)
            return out

        monkeypatch.setattr(Index, "_collection_part", part_then_remove)
        hits = index.recall("release checklist", top=3, now=NOW)
        notes = index.take_notes()
    assert hits and {h.vault for h in hits} == {str(second.resolve())}, hits
    assert hits[0].doc_id == "knowledge/release-checklist"
    assert any(n.startswith(f"{first.resolve()}: left out") or "left out" in n for n in notes), notes


def test_each_vault_is_synced_once_a_recall(tmp_path, monkeypatch):
    """QA round 155-H F2: pooling the statistics synced every vault, then its recall synced it again (three times
    with a spelling correction's second reading); and hybrid recalls, which merge by rank, pooled them too."""
    from dreamdb.api import Index

    small, big = _vault(tmp_path, "small", 2), _vault(tmp_path, "big", 20, weak=3)
    with dreamdb.open([small, big]) as index:
        index.recall("release checklist", now=NOW)
        synced = []
        real = Index._sync_before_read
        monkeypatch.setattr(Index, "_sync_before_read", lambda self: (synced.append(str(self.vault)), real(self))[1])
        assert index.recall("release checklist", now=NOW)[0].doc_id == "knowledge/release-checklist"
        assert sorted(synced) == sorted([str(small), str(big)]), synced
        synced.clear()
        index.recall("releese checklst", now=NOW)  # (no vault matches it as typed: read again, corrected)
        assert sorted(synced) == sorted([str(small), str(big)]), synced
        synced.clear()
        pooled = []
        monkeypatch.setattr(Index, "_collection_part", lambda self: pooled.append(self) or (0, dict, list))
        index.recall("release checklist", now=NOW, mode="dense")
        assert pooled == []
