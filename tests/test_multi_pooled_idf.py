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
        index.recall("release checklist", now=NOW, mode="dense")  # (pooled too, for a fallback: QA round 156-A F1)
        assert sorted(synced) == sorted([str(small), str(big)]), synced


def test_a_hybrid_recall_that_falls_back_to_bm25_in_every_vault_ranks_as_bm25(tmp_path, monkeypatch):
    """QA round 156-A F1: a hybrid, rrf or dense recall of several vaults that fell back to BM25 in each (no model,
    no vectors) weighed each vault's terms with its own statistics, where a BM25 recall pools them: a 3-note vault's
    title match came 7th (raw 2.118) where BM25 put it 1st (5.01). Every mode that falls back in every vault now
    answers BM25's hits, scores and order; mode or DREAMDB_RECALL_MODE."""
    small = tmp_path / "small" / "_dream_context"
    write_doc(small, "knowledge/release-checklist.md", NOTE)
    write_doc(small, "knowledge/other.md", "---\ntitle: Kalomi nupero\n---\nsutivo zekalo mirosu\n")
    big = _vault(tmp_path, "big", 300, weak=5)
    (big / "knowledge" / "release-checklist.md").unlink()
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(tmp_path / "no-model"))  # (no model: hybrid recall falls back)

    def seen(hits):
        return [(h.vault, h.doc_id, h.score, h.rank_score, h.mode) for h in hits]

    with dreamdb.open([big, small]) as index:
        bm25 = seen(index.recall("release checklist", top=8, now=NOW))
        assert bm25[0][:2] == (str(small.resolve()), "knowledge/release-checklist")
        for mode in ("hybrid", "rrf", "dense"):
            assert seen(index.recall("release checklist", top=8, now=NOW, mode=mode)) == bm25, mode
        monkeypatch.setenv("DREAMDB_RECALL_MODE", "hybrid")
        assert seen(index.recall("release checklist", top=8, now=NOW)) == bm25
        assert any(n.startswith("hybrid recall unavailable, used bm25") for n in index.take_notes())


def test_a_vault_that_falls_back_beside_one_that_does_not_keeps_its_bm25_order(tmp_path, monkeypatch):
    """QA round 156-A F1, its mixed case: one vault answers a hybrid recall, the other falls back to BM25 (no vectors
    yet). Their hits merge by rank (a fused score and a BM25 rankScore do not compare); the fallen-back vault's hits
    are those a BM25 recall of the same vaults gives it, weighed with the pooled statistics."""
    from dreamdb.api import Index
    from dreamdb.records import replace

    small = tmp_path / "small" / "_dream_context"
    write_doc(small, "knowledge/release-checklist.md", NOTE)
    write_doc(small, "knowledge/other.md", "---\ntitle: Kalomi nupero\n---\nsutivo zekalo mirosu\n")
    big = _vault(tmp_path, "big", 300, weak=5)

    def hybrid(self, plan, mode, top, now_days, filters, explain):
        if self.vault == big.resolve():  # (no vectors: it falls back)
            self.notes.append("no dense results yet: no text has a vector, so these are BM25's results")
            return None
        # (the small vault fuses: its BM25 channel by its own statistics, RRF scores)
        hits = self._hits(self._rank(plan, top=top, now_days=now_days, filters=filters), plan, mode=mode,
                          explain=explain)
        return [replace(h, rank_score=1 / (60 + r)) for r, h in enumerate(hits, 1)]

    with dreamdb.open([big, small]) as index:
        pooled = [(h.doc_id, h.score, h.rank_score) for h in index.recall("release checklist", top=8, now=NOW)
                  if h.vault == str(big.resolve())]
        monkeypatch.setattr(Index, "_hybrid", hybrid)
        hits = index.recall("release checklist", top=8, now=NOW, mode="hybrid")
    of_big = [(h.doc_id, h.score, h.rank_score) for h in hits if h.vault == str(big.resolve())]
    assert {h.mode for h in hits if h.vault == str(big.resolve())} == {"bm25"}
    assert of_big == pooled[:len(of_big)] and len(of_big) >= 4, (of_big, pooled)
    assert {h.mode for h in hits if h.vault == str(small.resolve())} == {"hybrid"}
    assert {h.vault for h in hits[:2]} == {str(big.resolve()), str(small.resolve())}  # (each vault's first: by rank)


def test_a_vault_left_out_while_the_statistics_are_read_is_not_waited_for_again(tmp_path, monkeypatch):
    """A vault whose index another process is building was waited for (up to ``lock_timeout_ms``) when the
    statistics were pooled, left out, then waited for again by its recall: `recall --vault A --vault B` took twice
    the wait (2.4 s for lock_timeout_ms=1000). Pooled in every mode since QA round 156-A F1, a hybrid recall would
    have waited twice too. It is left out once, with one note, in every mode."""
    from dreamdb.api import Index
    from dreamdb.errors import FirstBuildElsewhere

    small, big = _vault(tmp_path, "small", 2), _vault(tmp_path, "big", 20, weak=3)
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(tmp_path / "no-model"))
    with dreamdb.open([small, big]) as index:
        index.recall("release checklist", now=NOW)
        taken, recalled = Index._collection_part, []
        real_recall = Index.recall

        def part(self):
            if self.vault == big.resolve():
                raise FirstBuildElsewhere("Another dreamdb process is building the index for the first time.")
            return taken(self)

        monkeypatch.setattr(Index, "_collection_part", part)
        monkeypatch.setattr(Index, "recall", lambda self, *a, **k: (recalled.append(self.vault), real_recall(
            self, *a, **k))[1])
        for mode in ("bm25", "hybrid"):
            hits = index.recall("release checklist", now=NOW, mode=mode)
            assert {h.vault for h in hits} == {str(small.resolve())}
            assert recalled == [small.resolve()], recalled
            assert [n for n in index.take_notes() if "left out" in n] == [
                f"{big.resolve()}: left out: Another dreamdb process is building the index for the first time."]
            recalled.clear()


def test_a_time_intent_is_read_alike_in_a_vault_of_undated_notes_searched_with_a_dated_one(tmp_path):
    """QA round 157-A F6: a vault with no dated note searched ``yesterday`` as a word while a dated vault read it as a
    window: the undated vault's note kept its plain recency (0.925) where the same note in the dated vault had 0.5,
    and its note merely holding the word "yesterday" came first. Searched together, every vault reads the window."""
    dated = tmp_path / "dated" / "_dream_context"
    undated = tmp_path / "undated" / "_dream_context"
    deploy = "---\ntitle: Deploy pipeline note\n{date}---\ndeploy pipeline steps and rollback\n"
    write_doc(dated, "knowledge/d-yday.md", deploy.format(date="date: 2026-08-17\n"))
    write_doc(dated, "knowledge/d-undated.md", deploy.format(date=""))
    write_doc(dated, "knowledge/budget.md", "---\ntitle: Budget\ndate: 2026-08-07\n---\nbudget review\n")
    write_doc(undated, "knowledge/u-undated.md", deploy.format(date=""))
    write_doc(undated, "knowledge/retro.md", "---\ntitle: Retro\n---\nwhat we said yesterday in the retro\n")
    for order in ((dated, undated), (undated, dated)):
        with dreamdb.open(list(order)) as index:
            hits = index.recall("deploy pipeline yesterday", top=5, now="2026-08-18T12:00:00Z", explain=True)
        assert [h.doc_id for h in hits] == ["knowledge/d-yday"] + sorted(["knowledge/d-undated", "knowledge/u-undated"])
        # (the same undated note, the same recency in both vaults; the retro note's "yesterday" is not searched)
        # (an undated note's: the mean window recency of the dated notes, yesterday's 1 and 1/(1 + 10) ten days off)
        assert hits[0].signals["recency"] == 1.0
        assert hits[1].signals["recency"] == hits[2].signals["recency"] == round((1 + 1 / 11) / 2, 6)
    with dreamdb.open(undated) as alone:  # (a vault of undated notes searched alone reads the query whole)
        assert "knowledge/retro" in [h.doc_id for h in alone.recall("deploy pipeline yesterday", now="2026-08-18")]
