"""SPEC §4 dedup gate with the real model on a subset of the real vault."""

from __future__ import annotations

import json
import os
import shlex
import re
import subprocess
import sys

import pytest

import dreamdb
from dreamdb.dedup import LOG_FILE_NAME, decide, dedup
from dreamdb.errors import UsageError
from tests.conftest import ROOT, another_refresh_running, copy_vault

DOC = "knowledge/patterns/git-pinned-evidence.md"


def _front(text: str) -> tuple[dict, str]:
    import yaml

    m = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    return yaml.safe_load(m.group(1)), m.group(2)


def test_decide_rules():
    assert decide([0.99, 0.95])[0] == "MERGE"
    assert decide([0.98, 0.97])[0] == "REVIEW"  # too close to the runner-up
    assert decide([0.975]) == ("MERGE", "top 0.9750 ≥ 0.97 and the only document compared")  # (not "ahead of the
    assert decide([0.99, 0.95])[1] == "top 0.9900 ≥ 0.97 and ahead of the next by 0.0400 ≥ 0.02"  # next by 1.9750")
    assert decide([0.92, 0.5])[0] == "REVIEW"
    assert decide([0.90, 0.5])[0] == "CREATE"
    assert decide([])[0] == "CREATE"
    assert decide([0.90], review=0.85)[0] == "REVIEW"


def test_a_lone_neighbour_is_ahead_by_any_margin():
    """QA round 157-G F2: a lone neighbour at or above the merge threshold with ``--margin 2`` was REVIEW "only 1.8006
    ahead of the next, < 2.0", of a next at -1.0 that no document has: it is the only document compared, MERGE."""
    assert decide([0.8006], merge=0.8, margin=2.0) == ("MERGE", "top 0.8006 ≥ 0.8 and the only document compared")
    assert decide([0.98], margin=2.0) == ("MERGE", "top 0.9800 ≥ 0.97 and the only document compared")
    assert decide([0.95], margin=2.0) == ("REVIEW", "top 0.9500 ≥ 0.91")  # (under the merge threshold: no word of a next)
    assert decide([0.98, 0.97], margin=2.0) == ("REVIEW", "top 0.9800 ≥ 0.91 (≥ 0.97, but only 0.0100 ahead of the"
                                                " next, < 2.0)")


@pytest.mark.parametrize("thresholds, message", [
    ({"merge": 2}, "--merge is a cosine similarity threshold: it must be between -1 and 1, got 2"),
    ({"merge": 1.01}, "--merge is a cosine similarity threshold: it must be between -1 and 1, got 1.01"),
    ({"review": 1.5, "merge": 1.5}, "--merge is a cosine similarity threshold: it must be between -1 and 1"),
    ({"review": -1.5}, "--review is a cosine similarity threshold: it must be between -1 and 1, got -1.5"),
    ({"merge": float("nan")}, "--merge must be a number, got nan"),
    ({"margin": 2.5}, "--margin is a difference of two cosines: it must be between 0 and 2"),
    ({"merge": 0.5}, "--merge 0.5 is below --review 0.91"),
    ({"review": "0.9"}, "--review must be a number, got '0.9'"),
])
def test_thresholds_that_could_never_be_met_are_refused_by_the_library(thresholds, message):
    """QA round 54 L9: ``--merge 2`` was accepted (a MERGE could never come of it). The library checks, before
    it reads the index or runs the model (none is given here), so a Python caller is refused as the CLI is."""
    with pytest.raises(UsageError, match=re.escape(message) + ".*no comparison was made"):
        dedup(None, None, title="x", content="y", **thresholds)


@pytest.mark.parametrize("field", ["title", "description", "content"])
def test_a_candidate_that_is_not_utf8_is_refused_by_the_library(field):
    """QA round 65: ``embed dedup --title $'sleep \\xff'`` reached the decision log, which cannot hold the bytes: exit 70."""
    given = {"title": "x", "content": "y", field: "sleep \udcff"}
    with pytest.raises(UsageError, match=f"The {field} is not valid UTF-8"):
        dedup(None, None, **given)


@pytest.mark.parametrize("given, message", [({"log": "no"}, "log must be True or False, got 'no'"),
                                            ({"exclude": "feature/x"}, "exclude must be a list of doc_ids")])
def test_a_log_flag_or_an_exclude_of_the_wrong_type_is_refused_by_the_library(given, message):
    """QA round 107 F4: ``log="no"`` logged the decision, and ``exclude="feature/x"`` was read letter by letter."""
    with pytest.raises(UsageError, match=re.escape(message)):
        dedup(None, None, title="x", content="y", **given)


def test_thresholds_at_the_ends_of_their_ranges_are_accepted():
    from dreamdb.dedup import check_thresholds

    check_thresholds(merge=1, margin=2, review=1)  # 1: met by an exact copy (float32 cosines reach 1.0000001)
    check_thresholds(merge=-1, margin=0, review=-1)


@pytest.mark.model
def test_near_copy_merges_unrelated_creates_and_log(embedded_subset, embedder, tmp_path):
    vault = copy_vault(embedded_subset, tmp_path)
    meta, body = _front((vault / DOC).read_text(encoding="utf-8"))
    near = body.replace("rots silently", "silently rots").replace("Pin ", "Always pin ", 1)
    with dreamdb.open(vault) as index:
        index.sync()
        r = dedup(index, embedder, title=meta["name"], description=meta.get("description", ""), content=near)
        assert r.verdict == "MERGE", r.as_dict()
        assert r.neighbours[0][0] == "knowledge/git-pinned-evidence" and r.neighbours[0][2] >= 0.97
        assert len(r.neighbours) <= 5 and r.candidate_chunks >= 2

        other = dedup(index, embedder, title="Sourdough bread at home",
                      content="Mix flour, water and salt, fold the dough every hour, proof overnight in the fridge and "
                              "bake at 250 degrees in a covered pot for forty minutes.")
        assert other.verdict == "CREATE" and other.neighbours[0][2] < 0.91

        stricter = dedup(index, embedder, title=meta["name"], description=meta.get("description", ""), content=near,
                         margin=1.0, top=2)  # (merge=1.01 did this before QA round 54: above 1 is refused now)
        assert stricter.verdict == "REVIEW" and len(stricter.neighbours) == 2
        looser = dedup(index, embedder, title="Sourdough bread at home", content="Bake bread.", review=0.0)
        assert looser.verdict == "REVIEW"

        log = index.index_path.parent / LOG_FILE_NAME
        lines = [json.loads(l) for l in log.read_text(encoding="utf-8").splitlines()]
        assert [l["verdict"] for l in lines] == ["MERGE", "CREATE", "REVIEW", "REVIEW"]
        assert lines[0]["title"] == meta["name"] and lines[0]["neighbours"][0]["doc_id"] == "knowledge/git-pinned-evidence"
        assert lines[0]["time"] and lines[0]["thresholds"]["merge"] == 0.97
        with pytest.raises(UsageError):
            dedup(index, embedder, title="", content="  ")
        with pytest.raises(UsageError):
            dedup(index, embedder, title="x", content="y", top=0)


@pytest.mark.model
def test_a_whole_note_with_frontmatter_scores_as_its_indexed_self(embedded_subset, embedder, tmp_path):
    """QA round 20: the exact file of an indexed note scored 0.9797 (its YAML compared as text), its body 1.0."""
    vault = copy_vault(embedded_subset, tmp_path)
    text = (vault / "knowledge/patterns/code-structure-patterns.md").read_text(encoding="utf-8")  # one chunk
    meta, body = _front(text)
    with dreamdb.open(vault) as index:
        index.sync()
        whole = dedup(index, embedder, title=meta["name"], content=text, log=False)
        parts = dedup(index, embedder, title=meta["name"], description=meta.get("description", ""), content=body, log=False)
    assert whole.neighbours[0][0] == parts.neighbours[0][0] == "knowledge/code-structure-patterns"
    assert whole.neighbours[0][2] == pytest.approx(parts.neighbours[0][2], abs=1e-6) and whole.neighbours[0][2] > 0.999
    assert whole.candidate_chunks == 1 and whole.verdict == "MERGE"


def test_if_present_without_model_is_skipped(tiny_vault, tmp_path):
    import os

    env = {**os.environ, "DREAMDB_MODEL_DIR": str(tmp_path / "no-model")}
    proc = subprocess.run(
        [sys.executable, "-m", "dreamdb", "embed", "dedup", "--vault", str(tiny_vault), "--title", "T", "--stdin",
         "--if-present", "--json"], input="some content", capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "SKIPPED"
    quiet = subprocess.run(
        [sys.executable, "-m", "dreamdb", "embed", "dedup", "--vault", str(tiny_vault), "--title", "T", "--stdin",
         "--if-present"], input="some content", capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    # the verdict line, as for CREATE/MERGE/REVIEW (QA round 14: it printed nothing), and nothing on stderr
    assert quiet.returncode == 0 and quiet.stdout.startswith("SKIPPED: ") and quiet.stderr == ""


def _sections(n: int) -> str:
    """``n`` sections of 103 words each (a heading of 3, a paragraph of 100): one chunk each."""
    return "\n\n".join(f"## Part {i}\n\n" + " ".join(["word"] * 100) for i in range(n))


def test_the_chunking_of_a_candidate_says_when_the_cap_cut_it():
    """QA round 57 M3: a candidate is compared by its first MAX_CHUNKS_PER_DOCUMENT (128) chunks only, and nothing
    said so; the chunker now tells whether it cut the text and how many of its words the chunks hold."""
    from dreamdb.embeddings.chunk import MAX_CHUNKS_PER_DOCUMENT, chunk_document, chunk_with_coverage

    assert MAX_CHUNKS_PER_DOCUMENT == 128
    cut = chunk_with_coverage("Long draft", _sections(130))
    assert cut.truncated and len(cut.chunks) == 128
    assert (cut.words, cut.kept_words) == (130 * 103, 128 * 103)
    assert [c.text for c in cut.chunks] == [c.text for c in chunk_document("Long draft", _sections(130))]
    full = chunk_with_coverage("Long draft", _sections(128))  # exactly the cap: nothing left out
    assert not full.truncated and len(full.chunks) == 128 and full.words == full.kept_words == 128 * 103
    short_tail = chunk_with_coverage("Long draft", _sections(128) + "\n\n## Tail\n\nthe last words")
    assert not short_tail.truncated and short_tail.kept_words == 128 * 103 + 5  # merged into the 128th chunk
    long_tail = chunk_with_coverage("Long draft", _sections(128) + "\n\n## Tail\n\n" + " ".join(["tail"] * 100))
    assert long_tail.truncated and long_tail.words - long_tail.kept_words == 102  # a 129th chunk: left out


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_candidate_of_unspaced_text_past_the_cap_is_compared_in_part_of_its_words(tmp_path):
    """QA round 147-C F1: a draft of one long run of unspaced text, cut by the cap on characters, said "only its first
    128 of 1 words (12800%) were compared" (compared_share 128.0): its one word counted as one, its pieces in the
    chunks as 128. Such a word now counts once per MAX_CHUNK_CHARS characters begun."""
    from dreamdb.embeddings.chunk import MAX_CHUNK_CHARS
    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "other.md").write_text("---\ntitle: Other\n---\nUnrelated words about gardens.\n")
    index, emb = embedded(vault, QueryHashEmbedder())
    with index:
        r = dedup(index, emb, title="draft", content="x" * (MAX_CHUNK_CHARS * 130 + 7), log=False)
        d = r.as_dict()
        assert (d["candidate_truncated"], d["candidate_words"], d["compared_words"]) == (True, 131, 128), d
        assert d["compared_share"] == round(128 / 131, 4) < 1
        assert r.notes()[0].startswith("the candidate was cut at 128 chunks (the cap per document): only its first"
                                       " 128 of 131 words (98%) were compared"), r.notes()


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_candidate_titled_as_an_existing_note_is_at_least_review(tiny_vault):
    """QA round 74 F11: a candidate titled "sleep-consolidation" (or "Linked repos") got CREATE beside the very note of
    that name, the title alone reaching a cosine under REVIEW's 0.91. A document whose slug, or title made a slug,
    is the candidate's title makes the verdict at least REVIEW, and is named; changelog entries do not count."""
    from dreamdb.dedup import same_named
    from tests.conftest import write_doc
    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    write_doc(tiny_vault, "knowledge/features/sleep-consolidation.md", "---\ntitle: Sleep consolidation\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/linked.md", "---\ntitle: Linked repos\n---\nrepos that link\n")
    write_doc(tiny_vault, "knowledge/0.soul_h2.md", "---\ntitle: Soul archive\n---\nwho we are\n")
    write_doc(tiny_vault, "knowledge/dagitim.md", "---\ntitle: Dağıtım Süreci\n---\nsürüm adımları\n")
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([{"date": "2026-11-30", "type": "fix", "scope": "x",
                                                             "description": "Unrelated words"}]))
    index, _emb = embedded(tiny_vault, QueryHashEmbedder())
    with index:
        conn = index.conn
        assert same_named(conn, "Sleep consolidation") == ["feature/sleep-consolidation"]
        assert same_named(conn, "sleep-consolidation") == ["feature/sleep-consolidation"]
        assert same_named(conn, "LINKED  repos!") == ["knowledge/linked"]  # (its title, slug "linked")
        assert same_named(conn, "linked") == ["knowledge/linked"]
        assert same_named(conn, "Sleep") == [] and same_named(conn, "") == [] and same_named(conn, "  ") == []
        # a slug with a dot or an underscore, a doc_id, a file name (QA round 76 F4)
        for title in ("0.soul_h2", "knowledge/0.soul_h2", "0.soul_h2.md", "Soul archive"):
            assert same_named(conn, title) == ["knowledge/0.soul_h2"], title
        assert same_named(conn, "knowledge/linked") == ["knowledge/linked"]
        # a Turkish title in capitals: the capital of ı is I (QA round 143-H F2)
        for title in ("DAĞITIM SÜRECİ", "Dağıtım süreci", "DAĞITIM süreci", "dagitim"):
            assert same_named(conn, title) == ["knowledge/dagitim"], title
        title = conn.execute("SELECT title FROM documents WHERE type = 'changelog'").fetchone()[0]
        assert same_named(conn, title) == []
        emb = QueryHashEmbedder()
        other = dedup(index, emb, title="Completely different words", log=False)
        assert other.verdict == "CREATE" and other.same_title == []
        named = dedup(index, emb, title="Sleep consolidation", log=False)
        assert named.verdict == "REVIEW" and named.same_title == ["feature/sleep-consolidation"]
        assert named.reason.startswith("feature/sleep-consolidation has this title (top ") and \
            named.as_dict()["same_title"] == ["feature/sleep-consolidation"]


@pytest.mark.model
def test_a_copy_with_text_added_is_review_and_an_identical_copy_says_so(embedded_subset, embedder, tmp_path):
    """QA round 97-C F4: the max over chunk pairs let one copied section stand for a whole candidate: an existing
    note with thousands of new words around it was MERGE at 0.996. A MERGE needs every candidate chunk to have a
    near-copy in the top document; ``identical`` tells a copy of its very text (title included) from a near one."""
    vault = copy_vault(embedded_subset, tmp_path)
    meta, body = _front((vault / DOC).read_text(encoding="utf-8"))
    added = (body + "\n\n## Deployment\n\n" + "The deployment pipeline runs on Kubernetes with canary releases. " * 60
             + "\n\n## Billing\n\n" + "Invoices are generated monthly by Stripe webhooks and kept in Postgres. " * 60)
    with dreamdb.open(vault) as index:
        index.sync()
        same = dedup(index, embedder, title=meta["name"], description=meta.get("description", ""), content=body,
                     log=False)
        assert same.verdict == "MERGE" and same.identical, same.as_dict()
        assert same.chunks_matched == same.candidate_chunks >= 2
        near = dedup(index, embedder, title=meta["name"], description=meta.get("description", ""),
                     content=body.replace("Pin ", "Always pin ", 1), log=False)
        assert near.verdict == "MERGE" and not near.identical and near.chunks_matched == near.candidate_chunks
        more = dedup(index, embedder, title=meta["name"], description=meta.get("description", ""), content=added)
        assert more.neighbours[0][0] == "knowledge/git-pinned-evidence" and more.neighbours[0][2] >= 0.97
        assert more.verdict == "REVIEW" and not more.identical, more.as_dict()
        assert same.candidate_chunks <= more.chunks_matched < more.candidate_chunks
        missed = more.candidate_chunks - more.chunks_matched
        assert (f"but {missed} of the candidate's {more.candidate_chunks} chunks {'has' if missed == 1 else 'have'}"
                " no near-copy (≥ 0.97) in it: the candidate adds text") in more.reason
        d = more.as_dict()
        assert d["neighbours"][0]["path"] == str(vault / DOC) and d["types_not_compared"] == ["changelog"]
        line = json.loads((index.index_path.parent / LOG_FILE_NAME).read_text(encoding="utf-8").splitlines()[-1])
        assert line["reason"] == more.reason and line["chunks_matched"] == more.chunks_matched  # (97-C F5)
        # QA round 125-B F3: the note edited since the last refresh (its changed chunk has no vector yet): a copy of it
        # as it was is not said to add text without a word of the part compared
        with open(vault / DOC, "a", encoding="utf-8") as fh:
            fh.write("\n\n## Appendix\n\nThe submarine reactor cools the turbines.\n")
        index.sync()
        from dreamdb.embeddings import store

        store.chunk_pending_documents(index.conn)  # (chunked, as `embed dedup --if-present` leaves it: not embedded)
        part = dedup(index, embedder, title=meta["name"], description=meta.get("description", ""), content=body,
                     log=False)
        assert part.verdict == "REVIEW" and part.documents_outdated == 1, part.as_dict()
        assert "1 of the candidate's 4 chunks has no near-copy" in part.reason, part.reason  # (126-A F11e: "have")
        assert ("in it: it was compared in part (edited since the last refresh: `dreamdb embed refresh --vault"
                f" {shlex.quote(str(vault.resolve()))}` embeds the rest), or the candidate adds text") in part.reason, \
            part.reason  # (the vault named, not found from the working folder: QA round 156-D F1)


@pytest.mark.model
def test_a_draft_saved_in_the_vault_is_not_its_own_neighbour(embedded_subset, model_dir, tmp_path):
    """QA round 97-C F3: ``embed dedup --file`` of a note already written into the vault embedded it first and then
    found it: MERGE at 1.0 against itself. The note the file is is left out, and the result says so."""
    import os

    vault = copy_vault(embedded_subset, tmp_path)
    draft = vault / "knowledge" / "git-evidence-draft.md"
    draft.write_text((vault / DOC).read_text(encoding="utf-8").replace("name:", "name: Draft of", 1), encoding="utf-8")
    env = {**os.environ, "DREAMDB_MODEL_DIR": str(model_dir)}
    p = subprocess.run([sys.executable, "-m", "dreamdb", "embed", "dedup", "--vault", str(vault), "--title", "Pinned",
                        "--file", str(draft), "--json"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["excluded"] == ["knowledge/git-evidence-draft"], d
    assert d["neighbours"][0]["doc_id"] == "knowledge/git-pinned-evidence" and d["verdict"] == "MERGE", d
    assert "knowledge/git-evidence-draft" not in [n["doc_id"] for n in d["neighbours"]]
    text = subprocess.run([sys.executable, "-m", "dreamdb", "embed", "dedup", "--vault", str(vault), "--title", "Pinned",
                           "--file", str(draft)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert text.returncode == 0 and f"note: {draft} is the indexed knowledge/git-evidence-draft: compared with the" \
        " other documents" in text.stderr, text.stderr
    # a hard link to it outside the vault is the same note; a CHANGELOG.json names no neighbour (QA round 98-A F9)
    linked = tmp_path / "linked-draft.md"
    os.link(draft, linked)
    (vault / "core").mkdir(exist_ok=True)
    (vault / "core" / "CHANGELOG.json").write_text(json.dumps([{"date": "2026-08-01", "type": "fix", "scope": "x",
                                                                "description": "Pinned evidence rots silently"}]))
    for given, excluded in ((linked, ["knowledge/git-evidence-draft"]), (vault / "core" / "CHANGELOG.json", [])):
        p = subprocess.run([sys.executable, "-m", "dreamdb", "embed", "dedup", "--vault", str(vault), "--title", "X",
                            "--file", str(given), "--json"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
        assert p.returncode == 0 and json.loads(p.stdout)["excluded"] == excluded, (given, p.stdout[:500], p.stderr)


@pytest.mark.model
def test_if_present_after_a_rebuild_compares_against_the_vectors_kept(embedded_subset, model_dir, tmp_path):
    """QA round 97-C F2: after ``sync --force`` every document waits to be chunked again, and ``--if-present`` said
    SKIPPED ("no document of the index has vectors") with all of them stored. Chunking needs no model: it is done,
    and the vectors kept are the chunks' again."""
    import os

    vault = copy_vault(embedded_subset, tmp_path)
    env = {**os.environ, "DREAMDB_MODEL_DIR": str(model_dir)}

    def run(*args):
        return subprocess.run([sys.executable, "-m", "dreamdb", *args, "--vault", str(vault)], capture_output=True,
                               text=True, env=env, cwd=ROOT, timeout=600)

    assert run("sync", "--force").returncode == 0
    p = run("embed", "dedup", "--title", "Pinned evidence", "--if-present", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["verdict"] != "SKIPPED", p.stdout
    assert json.loads(p.stdout)["documents_not_compared"] == 0


def test_the_decision_log_is_never_followed_and_is_rotated(tmp_path):
    """QA round 97-C F5: the log followed a link (appending to any file it named) and grew without bound."""
    from dreamdb.dedup import LOG_MAX_BYTES, DedupResult, _append_log

    result = DedupResult(verdict="CREATE", neighbours=[], thresholds={}, reason="top 0.5 < 0.91")
    precious = tmp_path / "precious.txt"
    precious.write_text("user data\n")
    (tmp_path / LOG_FILE_NAME).symlink_to(precious)
    assert _append_log(tmp_path, "T", result) is None and precious.read_text() == "user data\n"
    (tmp_path / LOG_FILE_NAME).unlink()
    os.link(precious, tmp_path / LOG_FILE_NAME)  # (a hard link, as a cp -al snapshot makes: QA round 113-A F3)
    assert _append_log(tmp_path, "T", result) is None and precious.read_text() == "user data\n"
    (tmp_path / LOG_FILE_NAME).unlink()
    log = tmp_path / LOG_FILE_NAME
    log.write_bytes(b"x" * (LOG_MAX_BYTES + 1))
    assert _append_log(tmp_path, "T", result) == str(log)
    assert (tmp_path / (LOG_FILE_NAME + ".1")).stat().st_size == LOG_MAX_BYTES + 1
    assert json.loads(log.read_text(encoding="utf-8"))["reason"] == "top 0.5 < 0.91"


def test_a_snake_case_title_names_the_note_of_that_slug(tmp_path):
    """QA round 97-C F7: ``--title licensing_policy`` was CREATE beside ``knowledge/licensing-policy``."""
    from dreamdb.dedup import same_named

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "licensing-policy.md").write_text("---\ntitle: Licensing policy\n---\nApache-2.0.\n")
    (vault / "knowledge" / "snake_note.md").write_text("---\ntitle: Snake\n---\nbody\n")
    with dreamdb.open(vault) as index:
        index.sync()
        assert same_named(index.conn, "licensing_policy") == ["knowledge/licensing-policy"]
        assert same_named(index.conn, "snake-note") == same_named(index.conn, "snake_note") == ["knowledge/snake_note"]


def test_same_named_files_all_share_their_title_and_a_number_suffix_names_none(tmp_path):
    """QA round 143-C F1: of two files named ``notes.md`` (ids ``knowledge/notes``, ``knowledge/notes-2``) only the first
    had the title ``notes``, and ``notes-2`` named the second, whose file is ``notes.md``: the id's numbered slug was
    compared, not the file's own name."""
    from dreamdb.dedup import same_named

    vault = tmp_path / "_dream_context"
    for folder, title in (("fa", "Meeting notes"), ("fb", "Bread notes")):
        (vault / "knowledge" / folder).mkdir(parents=True)
        (vault / "knowledge" / folder / "notes.md").write_text(f"---\ntitle: {title}\n---\nbody\n")
        (vault / "knowledge" / folder / "Grüße.md").write_text("---\ntitle: Greetings\n---\nbody\n")
    with dreamdb.open(vault) as index:
        index.sync()
        ids = {r[0] for r in index.conn.execute("SELECT doc_id FROM documents")}
        assert {"knowledge/notes", "knowledge/notes-2", "knowledge/Grüße", "knowledge/Grüße-2"} <= ids
        for title in ("notes", "Notes", "notes.md", "knowledge/notes"):
            assert same_named(index.conn, title) == ["knowledge/notes", "knowledge/notes-2"], title
        assert same_named(index.conn, "Grüße") == ["knowledge/Grüße", "knowledge/Grüße-2"]
        assert same_named(index.conn, "notes-2") == same_named(index.conn, "knowledge/notes-2") == []
        assert same_named(index.conn, "Bread notes") == ["knowledge/notes-2"]  # (its title)


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_copy_under_another_title_is_not_said_to_add_text(tmp_path):
    """QA round 143-C F2: an exact copy of a note given a shorter --title was REVIEW, "1 of the candidate's 21 chunks
    has no near-copy … the candidate adds text": the title begins each chunk, and a short chunk's cosine fell under
    0.97 with the title alone changed. The reason says so when the chunks without a near-copy are, without their
    title, the note's; text of its own added (or changed) is still said to be added."""
    import numpy as np

    from tests.test_embed_store import QueryHashEmbedder, para
    from tests.test_language import embedded

    class TitleWeighsOnShortChunks(QueryHashEmbedder):
        """A chunk of 20 words or more is embedded without its title; a shorter one with it (as a model's cosine
        of a short chunk moves with its title)."""

        def embed_passages(self, texts):
            return np.stack([self.vec(t.split("\n\n", 1)[1] if len(t.split("\n\n", 1)[-1].split()) >= 20 else t)
                             for t in texts])

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    body = f"# Part A\n\n{para('ax')}\n\n# Part B\n\n{para('bx')}\n"
    (vault / "knowledge" / "recall.md").write_text(
        f"---\ntitle: Recall engine and its many parts\ndescription: Short summary.\n---\n{body}")
    index, emb = embedded(vault, TitleWeighsOnShortChunks())
    with index:
        copy = dedup(index, emb, title="Recall engine", description="Short summary.", content=body, log=False)
        assert copy.verdict == "REVIEW" and copy.candidate_chunks == 3 and copy.chunks_matched == 2, copy.as_dict()
        assert copy.reason.endswith("but 1 of the candidate's 3 chunks has no near-copy (≥ 0.97) in it: only the"
                                    " title differs (it begins each chunk), and that chunk without it is the note's:"
                                    " the candidate adds no text"), copy.reason
        other = dedup(index, emb, title="Recall engine", description="Another summary.", content=body, log=False)
        assert other.verdict == "REVIEW" and other.chunks_matched == 1, other.as_dict()  # (the description heads part A)
        assert other.reason.endswith("2 of the candidate's 3 chunks have no near-copy (≥ 0.97) in it: the candidate"
                                     " adds text"), other.reason
        same = dedup(index, emb, title="Recall engine and its many parts", description="Short summary.",
                     content=body, log=False)
        assert same.verdict == "MERGE" and same.identical, same.as_dict()


def test_processes_rotating_the_decision_log_at_once_keep_the_rotated_history(tmp_path):
    """QA round 98-A F7: of processes that found the log full at once, a second moved the fresh log over the one just
    rotated, and the history went. Only the process that still holds the full file rotates it."""
    script = f"""
import os, sys
from pathlib import Path
import dreamdb.dedup as d
d.LOG_MAX_BYTES = 4096
result = d.DedupResult(verdict="CREATE", neighbours=[], thresholds={{}})
folder, small = Path({str(tmp_path)!r}), 0
for i in range(400):
    assert d._append_log(folder, f"p{{sys.argv[1]}}-{{i}}", result)
    try:
        small += os.stat(folder / "dedup.log.jsonl.1").st_size < 4096
    except FileNotFoundError:
        pass
print(small)
"""
    procs = [subprocess.Popen([sys.executable, "-c", script, str(i)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
             for i in range(3)]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert outs == ["0", "0", "0"], outs
    rotated = (tmp_path / (LOG_FILE_NAME + ".1")).read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["verdict"] == "CREATE" for line in rotated)


@pytest.mark.skipif(not hasattr(os, "pread") or sys.platform == "win32", reason="needs RLIMIT_FSIZE and pread")
def test_a_decision_log_line_is_appended_whole_or_not_at_all(tmp_path):
    """QA round 152-B F1: a write cut short (a file size limit, a full disk) left part of the line in the log, and
    the next decision's line was joined to it: that line and the next were not JSON. The part is truncated back,
    and a log whose last line was cut (no newline at its end) gets one before the next line."""
    script = f"""
import json, os, resource
from pathlib import Path
import dreamdb.dedup as d
result = d.DedupResult(verdict="CREATE", neighbours=[], thresholds={{}}, reason="top 0.5 < 0.91")
folder = Path({str(tmp_path)!r})
log = folder / d.LOG_FILE_NAME
assert d._append_log(folder, "first", result) == str(log)
size = log.stat().st_size
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, hard))  # (room for 100 bytes of the next line only)
print(d._append_log(folder, "cut", result), log.stat().st_size - size)
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
print(d._append_log(folder, "after", result) == str(log))
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["None", "0", "True"], p.stdout  # (not logged, and nothing of it left)
    log = tmp_path / LOG_FILE_NAME
    assert [json.loads(line)["title"] for line in log.read_text(encoding="utf-8").splitlines()] == ["first", "after"]

    from dreamdb.dedup import DedupResult, _append_log

    result = DedupResult(verdict="CREATE", neighbours=[], thresholds={}, reason="top 0.5 < 0.91")
    with open(log, "ab") as f:
        f.write(b'{"time": "2026-12-07T14:00:00+00:00", "tit')  # (a line cut by a process killed mid-write)
    assert _append_log(tmp_path, "repaired", result) == str(log)
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[2] == '{"time": "2026-12-07T14:00:00+00:00", "tit' and len(lines) == 4, lines
    assert [json.loads(line)["title"] for line in (*lines[:2], lines[3])] == ["first", "after", "repaired"]


def test_processes_appending_at_once_keep_each_line_whole_across_rotations(tmp_path):
    """QA round 152-B F1: the log is appended under a lock of it now; four processes appending long lines at once
    past :data:`~dreamdb.dedup.LOG_MAX_BYTES` (rotating it) still leave every line whole."""
    script = f"""
import sys
from pathlib import Path
import dreamdb.dedup as d
result = d.DedupResult(verdict="CREATE", neighbours=[], thresholds={{}}, reason="x" * 60000)
for i in range(12):
    assert d._append_log(Path({str(tmp_path)!r}), f"p{{sys.argv[1]}}-{{i}}", result)
"""
    procs = [subprocess.Popen([sys.executable, "-c", script, str(i)], cwd=ROOT) for i in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    lines = [line for name in (LOG_FILE_NAME + ".1", LOG_FILE_NAME)
             for line in (tmp_path / name).read_text(encoding="utf-8").splitlines()]
    assert (tmp_path / (LOG_FILE_NAME + ".1")).stat().st_size > 2 ** 20  # (rotated past 1 MiB)
    assert all(json.loads(line)["reason"] == "x" * 60000 for line in lines)


@pytest.mark.model
def test_if_present_on_an_index_that_cannot_be_written_compares_or_skips(embedded_subset, model_dir, tmp_path,
                                                                         monkeypatch, capsys):
    """QA round 98-A F10: --if-present chunks the documents waiting after a rebuild; on an index that cannot be
    written that write exited 4, where --if-present promises SKIPPED or a verdict, exit 0."""
    from dreamdb.cli import main
    from dreamdb.embeddings import store
    from dreamdb.errors import IndexUnavailable
    from dreamdb.store.connect import OperationalError

    vault = copy_vault(embedded_subset, tmp_path)
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    assert main(["sync", "--force", "--vault", str(vault)]) == 0

    def cannot_write(conn, **_kw):  # (what SQLite raises there: QA round 143-E F1, an IndexUnavailable never came)
        raise OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(store, "chunk_pending_documents", cannot_write)
    capsys.readouterr()
    assert main(["embed", "dedup", "--vault", str(vault), "--title", "Pinned evidence", "--if-present", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "SKIPPED" and "wait to be chunked again" in out["reason"], out  # (their vectors are
    assert "the index cannot be written (attempt to write a readonly database)" in out["reason"], out  # there: 144-A F3)
    # the sync before it cannot write either (QA round 99-A F4: exit 4 on a read-only index): read as it is
    monkeypatch.undo()
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    assert main(["embed", "refresh", "--vault", str(vault)]) == 0
    (vault / "knowledge" / "fresh-note.md").write_text("---\nname: Fresh\n---\nA note the index has not seen.\n")
    from dreamdb.api import Index

    real_sync = Index.sync

    def read_only_sync(self, **kw):  # (the check's sync; the read's own, as a read-only index answers it, goes on)
        if kw.get("check"):
            raise IndexUnavailable("The index cannot be written: attempt to write a readonly database")
        return real_sync(self, **kw)

    monkeypatch.setattr(Index, "sync", read_only_sync)
    capsys.readouterr()
    assert main(["embed", "dedup", "--vault", str(vault), "--title", "Pinned evidence", "--if-present", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] in ("MERGE", "REVIEW", "CREATE") and out["neighbours"], out


@pytest.mark.model
def test_if_present_answers_or_skips_while_another_process_holds_the_index(embedded_subset, model_dir, tmp_path,
                                                                           monkeypatch, capsys):
    """QA round 143-E F1: with another process holding the write lock (a long ``sync --force`` or ``embed refresh``)
    and a draft just written into the vault, ``--if-present`` waited 10 s and exited 5, where it promises a verdict
    against the vectors there are, or SKIPPED; recall answers after 1.5 s with a note, and so does the gate now (the
    plain gate too, when it has nothing to embed)."""
    from dreamdb.cli import main
    from dreamdb.store import connect as db

    vault = copy_vault(embedded_subset, tmp_path)
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    draft = vault / "knowledge" / "patterns" / "git-pinned-evidence.md"
    draft.write_text(draft.read_text(encoding="utf-8") + "\nA line the agent just added.\n", encoding="utf-8")
    holder = db.connect(vault / ".dreamdb" / "index.db")  # (dreamdb's driver: the same SQLite library shares its locks)
    holder.execute("BEGIN IMMEDIATE")  # another process's long sync or refresh
    try:
        for extra in (["--if-present"], []):
            capsys.readouterr()
            code = main(["embed", "dedup", "--vault", str(vault), "--title", "Pinned evidence", "--json", *extra])
            out, err = capsys.readouterr()
            assert code == 0, (extra, err)
            result = json.loads(out)
            assert result["verdict"] in ("MERGE", "REVIEW", "CREATE") and result["neighbours"], result
            assert "another process holds the index" in err and "answered from the index as it is" in err, err
        # no vectors to compare with (every document waits to be chunked again, as after another version's sync, and
        # the lock keeps the chunking out): SKIPPED, with the reason
        holder.execute("ROLLBACK")
        assert main(["sync", "--force", "--vault", str(vault)]) == 0
        holder.execute("BEGIN IMMEDIATE")
        capsys.readouterr()
        code = main(["embed", "dedup", "--vault", str(vault), "--title", "Pinned evidence", "--if-present", "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert json.loads(out)["verdict"] == "SKIPPED", out
    finally:
        holder.close()


@pytest.mark.model
def test_if_present_skips_on_an_immutable_index_whose_documents_wait_to_be_chunked(tiny_vault, model_dir, monkeypatch,
                                                                                    capsys):
    """QA round 143-E F1: an immutable index (``chattr +i``) whose documents were never chunked made ``--if-present``
    exit 4 ("The index cannot be written"), where it promises SKIPPED when no vectors exist."""
    import shutil

    from dreamdb.cli import main

    (tiny_vault / "knowledge").mkdir(parents=True, exist_ok=True)
    (tiny_vault / "knowledge" / "cache.md").write_text("---\ntitle: Cache\n---\nThe cache layer evicts with LRU.\n")
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    assert main(["sync", "--vault", str(tiny_vault)]) == 0
    index = tiny_vault / ".dreamdb" / "index.db"
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(index)], capture_output=True).returncode:
        pytest.skip("needs chattr +i (root on a file system with attributes)")
    try:
        capsys.readouterr()
        code = main(["embed", "dedup", "--vault", str(tiny_vault), "--title", "Cache", "--if-present", "--json"])
        out, err = capsys.readouterr()
    finally:
        subprocess.run(["chattr", "-i", str(index)], check=True)
    assert code == 0, err
    assert json.loads(out) == {"verdict": "SKIPPED", "reason": "the index has no vectors yet (run: dreamdb embed refresh"
                               f" --vault {shlex.quote(str(tiny_vault.resolve()))})", "neighbours": []}


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_if_present_after_a_rebuild_names_the_lock_or_the_read_only_index_that_keeps_the_chunking_out(
        tmp_path, monkeypatch, capsys):
    """QA round 144-A F3: after ``sync --force`` every document waits to be chunked again (its vectors kept, keyed by
    chunk text); with another process holding the write lock, or the index read-only, ``--if-present`` said SKIPPED
    "no document of the index has vectors of the installed model … yet (run: dreamdb embed refresh)", nothing on
    stderr, every vector there (and the refresh it advised cannot run on a read-only index). It names the lock or the
    read-only index now, with a note; once the lock is gone the documents are chunked and compared."""
    from dreamdb.cli import main
    from dreamdb.dedup import coverage
    from dreamdb.embeddings import store
    from dreamdb.embeddings.locate import compute_model_id
    from dreamdb.store import connect as db
    from tests.test_embed_store import HashEmbedder, make_vault

    fake = tmp_path / "model"  # (an installed model's files: only their hash is read on the way to this SKIPPED)
    fake.mkdir()
    (fake / "model.onnx").write_bytes(b"\0" * 2048)
    (fake / "tokenizer.json").write_text("{}")
    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(fake))
    model_id = compute_model_id(fake)
    vault = make_vault(tmp_path / "project" / "_dream_context", n_docs=3)
    with dreamdb.open(vault) as index:
        assert index.refresh_embeddings(embedder=HashEmbedder(model_id)).embedded == 6
    assert main(["sync", "--force", "--vault", str(vault)]) == 0
    holder = db.connect(vault / ".dreamdb" / "index.db")  # (dreamdb's driver: the same SQLite library shares its locks)
    holder.execute("BEGIN IMMEDIATE")  # another process's long sync or refresh
    try:
        capsys.readouterr()
        code = main(["embed", "dedup", "--vault", str(vault), "--title", "Doc 1", "--if-present", "--json"])
        out, err = capsys.readouterr()
    finally:
        holder.close()
    assert code == 0, err
    assert json.loads(out) == {"verdict": "SKIPPED", "neighbours": [], "reason": (
        f"the index's documents wait to be chunked again before their vectors of the installed model {model_id} can be"
        " compared, which cannot be done now: another process holds the index (a dreamdb sync or refresh, a program"
        " reading it in a transaction, or another open Index of this process); run this again once it is done")}
    assert err.startswith("note: 3 documents of the index wait to be chunked again (after a rebuild, or an edit) and"
                          " are compared only once they are, which cannot be done now: another process holds the"
                          " index"), err

    def cannot_write(conn, **_kw):  # (what SQLite raises on an immutable or read-only index)
        raise db.OperationalError("attempt to write a readonly database")

    with monkeypatch.context() as m:
        m.setattr(store, "chunk_pending_documents", cannot_write)
        code = main(["embed", "dedup", "--vault", str(vault), "--title", "Doc 1", "--if-present", "--json"])
        out, err = capsys.readouterr()
    assert code == 0, err
    reason = json.loads(out)["reason"]
    assert reason.startswith("the index's documents wait to be chunked again before their vectors of the installed"
                             f" model {model_id} can be compared, which cannot be done now: the index cannot be written"
                             " (attempt to write a readonly database); make "), reason
    assert "embed refresh" not in reason and "the index cannot be written" in err, err
    with dreamdb.open(vault) as index:  # the lock gone, writable: chunked, every document compared, nothing embedded
        assert index.sync_for_dedup() is None and index.take_notes() == []
        assert coverage(index.conn, model_id) == {"compared": 3, "not_compared": 0, "outdated": 0}


_BOARD = ("# Excalidraw Data\n\n## Text Elements\nIndex file lives beside the vault ^abc123\n\n"
          "Vectors are stored in sqlite-vec ^def456\n\n## Drawing\n```json\n"
          + json.dumps({"type": "excalidraw", "version": 2, "elements": [
              {"id": "abc123", "type": "text", "x": 10, "y": 20, "text": "Index file lives beside the vault",
               "strokeColor": "#1e1e1e", "seed": 12345, "version": 7}], "appState": {"gridSize": None}})
          + "\n```\n%%\n")
_BYTE_COPIES = {  # file name: (its text, the title the indexer reads)
    "listdesc.md": ("---\ntitle: List description\ndescription: [alpha, beta]\n---\nA description of two words.\n",
                    "List description"),
    "numdesc.md": ("---\ntitle: Numeric description\ndescription: 2026\n---\nA description YAML reads as a number.\n",
                   "Numeric description"),
    "datedesc.md": ("---\ntitle: Dated description\nsummary: 2026-05-01\n---\nA summary YAML reads as a date.\n",
                    "Dated description"),
    "board.md": ("---\nexcalidraw-plugin: parsed\ntitle: Storage board\n---\n" + _BOARD, "Storage board"),
    "sketch.excalidraw.md": ("---\ntags: [drawing]\n---\n" + _BOARD.replace("lives", "sits"), "sketch.excalidraw"),
    "datauri.md": ("---\ntitle: Architecture diagram\n---\nThe sync feeds the tables.\n\n![pipeline](data:image/png;"
                   "base64," + "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk" * 20 + ")\n\nThe end.\n",
                   "Architecture diagram"),
}


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_byte_copy_of_a_note_is_read_as_the_indexer_reads_it(tmp_path):
    """QA round 145-F F1: the gate read a candidate's frontmatter itself: a description that is a list, a number or a
    date was dropped (the indexer joins its items, writes it as text), an Excalidraw board was compared by its Drawing
    JSON (7 chunks against the indexed board's text elements, 1), a base64 data: URI by its payload; an exact copy of
    each was REVIEW or not identical. The candidate is read by the indexer's parse_markdown: each is MERGE, identical."""
    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    for file_name, (text, _title) in _BYTE_COPIES.items():
        (vault / "knowledge" / file_name).write_text(text, encoding="utf-8")
    index, emb = embedded(vault, QueryHashEmbedder())
    with index:
        for file_name, (text, title) in _BYTE_COPIES.items():
            r = dedup(index, emb, title=title, content=text, name=str(tmp_path / "drafts" / file_name), log=False)
            assert r.verdict == "MERGE" and r.identical and r.candidate_chunks == 1, (file_name, r.as_dict())
            assert r.neighbours[0][0] == "knowledge/" + file_name[:-3] and r.neighbours[0][2] > 0.999, file_name
            assert dedup(index, emb, title="", content=text, name=file_name, log=False).identical, file_name
        # a board found by its frontmatter key, as the indexer finds it, whatever the draft's name
        board = dedup(index, emb, title="Storage board", content=_BYTE_COPIES["board.md"][0], log=False)
        assert board.identical and board.candidate_words == 11, board.as_dict()


@pytest.mark.parametrize("given, message", [
    ({"title": 5}, "title must be a string (or None), got int 5"),
    ({"content": b"abc"}, "content must be a string (or None), got bytes b'abc'"),
    ({"description": ["a", "b"]}, "description must be a string (or None), got list ['a', 'b']"),
    ({"name": 3.5}, "name must be a string (or None), got float 3.5"),
])
def test_a_candidate_that_is_not_text_is_refused_by_the_library(given, message):
    """QA round 145-F F7: ``title=5`` raised AttributeError in the chunker, ``content=b"…"`` TypeError in the
    frontmatter reader, where the docstring promises UsageError; nothing is read or embedded (none is given here)."""
    with pytest.raises(UsageError, match=re.escape(message)):
        dedup(None, None, **{"title": "x", "content": "y", **given})


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_thresholds_of_any_real_type_are_used_and_logged_as_floats(tmp_path):
    """QA round 145-F F7: ``merge=np.float32(0.97)`` (or a Fraction) passed the check, then the decision log's
    json.dumps raised TypeError after the embedding, the decision lost; and ``content=None`` raised AttributeError.
    The thresholds are floats from the check on; None is no text, as for the description."""
    from fractions import Fraction

    import numpy as np

    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "sleep.md").write_text("---\ntitle: Sleep debt\n---\nSleep debt grows per tool call.\n")
    index, emb = embedded(vault, QueryHashEmbedder())
    with index:
        for merge in (np.float32(0.97), Fraction(97, 100), np.float64(0.97)):
            r = dedup(index, emb, title="Sleep debt", content="Sleep debt grows per tool call.", merge=merge,
                      margin=np.float32(0.5), review=Fraction(9, 10))
            assert r.verdict == "MERGE" and r.identical and r.log_path is not None, (merge, r.as_dict())
            assert all(type(v) is float for v in r.thresholds.values()), r.thresholds
            assert r.thresholds == {"merge": float(merge), "margin": 0.5, "review": 0.9}
            json.dumps(r.as_dict())
            line = json.loads(open(r.log_path, encoding="utf-8").read().splitlines()[-1])
            assert line["verdict"] == "MERGE" and line["thresholds"] == r.thresholds
        none = dedup(index, emb, title="Sleep debt", description=None, content=None, log=False)
        assert none.candidate_chunks == 1 and none.same_title == ["knowledge/sleep"]


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_merge_with_an_archived_note_says_it_is_archived(tmp_path, monkeypatch):
    """QA round 145-F F6: with DREAMDB_INCLUDE_ARCHIVES=1, MERGE named knowledge/old-deploy (from
    knowledge/.archive/old-deploy.md) with the advice to update it, which `update` refuses (dreamdb edits no archive
    folder). The reason says it is archived and what to do instead; each neighbour says whether it is (JSON, log)."""
    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    monkeypatch.setenv("DREAMDB_INCLUDE_ARCHIVES", "1")
    vault = tmp_path / "_dream_context"
    (vault / "knowledge" / ".archive").mkdir(parents=True)
    (vault / "knowledge" / ".archive" / "old-deploy.md").write_text("---\ntitle: Old deploy\n---\nDeploy by ftp.\n")
    (vault / "knowledge" / "live.md").write_text("---\ntitle: Live deploy\n---\nDeploy by rsync.\n")
    index, emb = embedded(vault, QueryHashEmbedder())
    with index:
        old = dedup(index, emb, title="Old deploy", content="Deploy by ftp.")
        assert old.verdict == "MERGE" and old.archived == ["knowledge/old-deploy"], old.as_dict()
        assert old.reason.endswith("; knowledge/old-deploy is archived (knowledge/.archive/old-deploy.md), and dreamdb"
                                   " does not edit archive folders: restore it (move the file out of the archive"
                                   " folder) to update it, or create a new note"), old.reason
        assert [(n["doc_id"], n["archived"]) for n in old.as_dict()["neighbours"]] == [
            ("knowledge/old-deploy", True), ("knowledge/live", False)]
        line = json.loads(open(old.log_path, encoding="utf-8").read().splitlines()[-1])
        assert line["neighbours"][0]["archived"] is True and "is archived" in line["reason"]
        live = dedup(index, emb, title="Live deploy", content="Deploy by rsync.", log=False)
        assert live.verdict == "MERGE" and live.archived == ["knowledge/old-deploy"] and "archived" not in live.reason


def test_a_vault_whose_one_note_with_vectors_is_the_candidate_says_so(tmp_path):
    """QA round 145-K F2: ``embed dedup --file`` of the one note of a vault (its other documents changelog entries,
    or none) said "no indexed document has vectors", with that note embedded and nothing pending: the note was the
    candidate, left out. The reason says so; a vault with no vectors at all keeps the old reason."""
    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "why-sqlite.md").write_text("---\ntitle: Why SQLite\n---\nWe chose SQLite.\n")
    index, emb = embedded(vault, QueryHashEmbedder())
    with index:
        alone = dedup(index, emb, title="Why SQLite", content="We chose SQLite.", exclude=["knowledge/why-sqlite"],
                      log=False)
        assert alone.verdict == "CREATE" and alone.excluded == ["knowledge/why-sqlite"], alone.as_dict()
        assert alone.reason == ("no other indexed document has vectors to compare with (knowledge/why-sqlite, the"
                                " candidate itself, left out)"), alone.reason
    assert decide([]) == ("CREATE", "no indexed document has vectors")


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_candidate_whose_content_holds_no_text_of_its_own_says_it_was_compared_by_its_title(tmp_path):
    """QA round 157-G F5: ``embed dedup --file`` of a file holding no text to compare (a frontmatter alone, a pasted
    key alone) was compared by its title alone, silently: CREATE, ``candidate_words`` 0, notes ``[]``. A note says so
    (in the decision's log line too); such a file is a note the vault indexes (by its name), so it is not refused as
    an empty one is. Without content, the title alone is compared by design: no note."""
    import base64

    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "why-sqlite.md").write_text("---\ntitle: Why SQLite\n---\nWe chose SQLite.\n")
    index, emb = embedded(vault, QueryHashEmbedder())
    key = base64.b64encode(bytes(range(256)) * 3).decode()
    said = ("the candidate's content holds no text of its own to compare (a frontmatter alone, markup, or encoded data"
            " only): it was compared by {} alone.")
    with index:
        for content, by in (("---\ntitle: Sleep debt\n---\n", "its title"), (f"{key}\n", "its title"),
                            ("---\ndescription: How sleep debt adds up\n---\n```\n```\n", "its title and description")):
            r = dedup(index, emb, title="Sleep debt", content=content, log=False)
            assert r.compared_by == by and (r.candidate_words == 0) == (by == "its title"), r.as_dict()
            assert r.notes() == [said.format(by)], r.notes()
        logged = dedup(index, emb, title="Sleep debt", content=f"{key}\n")
        line = json.loads((vault / ".dreamdb" / LOG_FILE_NAME).read_text(encoding="utf-8").splitlines()[-1])
        assert logged.log_path and line["notes"] == [said.format("its title")], line
        for content in ("", "Sleep debt adds up night by night."):  # (the title alone by design; text of its own)
            r = dedup(index, emb, title="Sleep debt", content=content, log=False)
            assert r.compared_by is None and r.notes() == [], r.notes()


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_an_exact_copy_meets_merge_1_in_every_chunk_as_in_its_score(tmp_path):
    """QA round 145-F F2: with ``--merge 1`` an exact copy was REVIEW, "1 of the candidate's 1 chunks has no near-copy
    (≥ 1.0) in it: the candidate adds text", with identical true and chunks_matched 0: its neighbour scored 1.0
    (sqlite-vec's cosine) and its chunk 0.99999994 (numpy's float32 product). This chunk's vector is one of those."""
    import numpy as np

    from dreamdb.embeddings.chunk import chunk_with_coverage
    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    title, body = "Note 3", "The cache keeps 3 entries."
    v = QueryHashEmbedder.vec(chunk_with_coverage(title, body, "").chunks[0].text)
    assert float((v[None, :] @ v[None, :].T)[0, 0]) == np.float32(0.99999994)  # (the product that said "adds text")
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "note3.md").write_text(f"---\ntitle: {title}\n---\n{body}\n")
    (vault / "knowledge" / "other.md").write_text("---\ntitle: Other\n---\nUnrelated words about gardens.\n")
    index, emb = embedded(vault, QueryHashEmbedder())
    with index:
        copy = dedup(index, emb, title=title, content=body, merge=1.0, review=0.91, log=False)
        assert copy.neighbours[0][:2] == ("knowledge/note3", title) and copy.neighbours[0][2] >= 1.0
        assert (copy.verdict, copy.identical, copy.chunks_matched, copy.candidate_chunks) == ("MERGE", True, 1, 1), \
            copy.as_dict()
        assert copy.reason.startswith("top 1.0000 ≥ 1.0 and ahead of the next by ") and \
            copy.reason.endswith("; its text is identical; knowledge/note3 has this title"), copy.reason


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_copy_of_a_note_in_decomposed_unicode_is_identical(tmp_path):
    """QA round 149-C F1: an exact copy of a Turkish note in decomposed form (NFD) was compared by the hashes of its
    chunk texts, which differ from the composed note's, so it was never ``identical`` (and, embedded as it was, REVIEW
    at 0.957). Texts are compared in composed form (NFC), as the model is given them; the embedder here composes
    too, as :class:`dreamdb.embeddings.model.Embedder` does."""
    import unicodedata

    import numpy as np

    from dreamdb.embeddings.chunk import composed
    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    class ComposingEmbedder(QueryHashEmbedder):
        def embed_passages(self, texts):
            return np.stack([self.vec(composed(t)) for t in texts])

    title = "Güvenlik duvarı değişiklikleri"
    note = (f"---\nname: {title}\ndescription: Güvenlik duvarı kurallarının gözden geçirilmesi.\n---\n"
            "Güvenlik duvarı kurallarında yapılacak her değişiklik önce küçük bir değişiklik isteği olarak açılır.\n")
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "guvenlik.md").write_text(note, encoding="utf-8")
    (vault / "knowledge" / "other.md").write_text("---\ntitle: Other\n---\nUnrelated words about gardens.\n")
    index, emb = embedded(vault, ComposingEmbedder())
    with index:
        nfd = unicodedata.normalize("NFD", note)
        assert nfd != note
        copy = dedup(index, emb, title=unicodedata.normalize("NFD", title), content=nfd, log=False)
        assert (copy.verdict, copy.neighbours[0][0], copy.identical, copy.chunks_matched) == \
            ("MERGE", "knowledge/guvenlik", True, 1), copy.as_dict()
        assert "; its text is identical" in copy.reason, copy.reason


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_title_with_a_slash_is_read_as_a_doc_id_or_path_only_when_written_as_one(tmp_path):
    """QA round 145-F F3: ``--title "Why we use a reverse proxy/server"`` was REVIEW, "knowledge/server has this title":
    the part after its last ``/`` was read as a doc_id's or path's file name. A title is read so only when it ends
    with ``.md`` or begins with a document type or a top folder of the vault, then ``/``."""
    from dreamdb.dedup import same_named
    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    vault = tmp_path / "_dream_context"
    (vault / "knowledge" / "features").mkdir(parents=True)
    (vault / "knowledge" / "server.md").write_text("---\ntitle: Server\n---\nnginx in front of two gunicorn workers.\n")
    (vault / "knowledge" / "features" / "sleep.md").write_text("---\ntitle: Sleep fan-out\n---\nagents sleep.\n")
    (vault / "knowledge" / "split.md").write_text("---\ntitle: Client/server split\n---\nthin clients.\n")
    index, emb = embedded(vault, QueryHashEmbedder())
    with index:
        conn = index.conn
        for title in ("Why we use a reverse proxy/server", "TCP/server", "proxy / server", "reverse proxy/server"):
            assert same_named(conn, title) == [], title
        for title in ("knowledge/server", "Knowledge/Server", "server.md", "knowledge/ops/server.md", "SERVER.MD",
                      "Server", "a draft/server.md"):
            assert same_named(conn, title) == ["knowledge/server"], title
        assert same_named(conn, "feature/sleep") == same_named(conn, "Sleep fan-out") == ["feature/sleep"]
        assert same_named(conn, "Client/Server split") == ["knowledge/split"]  # (its title, slash and all)
        proxy = dedup(index, emb, title="Why we use a reverse proxy/server", description="One VM", log=False)
        assert proxy.verdict == "CREATE" and proxy.same_title == [], proxy.as_dict()


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_title_beginning_with_any_document_type_is_read_as_a_doc_id(tmp_path):
    """QA round 147-B F2: ``--title bookmark/release-checklist`` was CREATE, no same title, beside
    ``knowledge/release-checklist``, where ``insight/release-checklist`` was REVIEW naming it: the document types a
    title may begin with were those the vault held. Any document type is read so (docs/json.md, same_title)."""
    from dreamdb.dedup import same_named
    from tests.test_embed_store import QueryHashEmbedder
    from tests.test_language import embedded

    vault = tmp_path / "_dream_context"
    (vault / "knowledge" / "a").mkdir(parents=True)
    (vault / "knowledge" / "release-checklist.md").write_text("---\ntitle: Release checklist\n---\nTag, build.\n")
    (vault / "knowledge" / "notes.md").write_text("---\ntitle: Meeting notes\n---\nMonday.\n")
    (vault / "knowledge" / "a" / "notes.md").write_text("---\ntitle: Bread notes\n---\nFlour.\n")
    index, emb = embedded(vault, QueryHashEmbedder())
    with index:
        conn = index.conn
        assert {r[0] for r in conn.execute("SELECT DISTINCT type FROM documents")} == {"knowledge"}
        for doc_type in ("insight", "bookmark", "feature", "task", "thesis", "Objective", "memory"):
            assert same_named(conn, f"{doc_type}/release-checklist") == ["knowledge/release-checklist"], doc_type
            assert same_named(conn, f"{doc_type}/notes") == ["knowledge/notes", "knowledge/notes-2"], doc_type
        assert same_named(conn, "bookmarks/notes") == same_named(conn, "draft/notes") == []  # (no type: a title)
        named = dedup(index, emb, title="bookmark/release-checklist", description="Other words", log=False)
        assert named.verdict == "REVIEW" and named.same_title == ["knowledge/release-checklist"], named.as_dict()


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_retitled_draft_with_changed_text_is_not_said_to_add_no_text(tmp_path):
    """QA round 145-F F4: a draft under another title that changed "must always run in the background" to "must not
    run" was REVIEW, "only the title differs (it begins each chunk), and that chunk without it is the note's: the
    candidate adds no text": the chunk the title moved under --merge was the note's, and the changed chunks, near by
    cosine (≥ --merge), were taken as unchanged. "Adds no text" needs every chunk's text (without the title) to be the
    note's."""
    import numpy as np

    from tests.test_embed_store import QueryHashEmbedder, para
    from tests.test_language import embedded

    class BlindToNegation(QueryHashEmbedder):
        """A chunk of 20 words or more is embedded without its title and without "always" or "not" (a cosine
        cannot see an inserted "not"); a shorter one with its title."""

        def embed_passages(self, texts):
            def seen(t):
                body = t.split("\n\n", 1)[-1]
                if len(body.split()) < 20:
                    return t
                return " ".join(w for w in body.split() if w not in ("always", "not"))
            return np.stack([self.vec(seen(t)) for t in texts])

    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    body = (f"# Part A\n\n{para('ax')}\n\n# Part B\n\nThe embedding refresh must always run in the background."
            f" {para('bx')}\n")
    (vault / "knowledge" / "refresh.md").write_text(
        f"---\ntitle: Embedding refresh in the background\ndescription: Short summary.\n---\n{body}")
    index, emb = embedded(vault, BlindToNegation())
    with index:
        changed = dedup(index, emb, title="Background refresh", description="Short summary.",
                        content=body.replace("must always run", "must not run"), log=False)
        assert (changed.verdict, changed.candidate_chunks, changed.chunks_matched) == ("REVIEW", 3, 2), \
            changed.as_dict()
        assert "adds no text" not in changed.reason and "only the title differs" not in changed.reason, changed.reason
        assert changed.reason.endswith(
            "but 1 of the candidate's 3 chunks has no near-copy (≥ 0.97) in it: that chunk without the title (it begins"
            " each chunk) is the note's, but the text of 1 other chunk differs from the note's, though near by cosine"
            ' (which cannot see a changed number or an inserted "not")'), changed.reason
        copy = dedup(index, emb, title="Background refresh", description="Short summary.", content=body, log=False)
        assert (copy.verdict, copy.chunks_matched) == ("REVIEW", 2) and copy.reason.endswith(
            "only the title differs (it begins each chunk), and that chunk without it is the note's: the candidate"
            " adds no text"), copy.reason


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_the_plain_gate_compares_as_it_is_while_another_process_holds_the_index(tmp_path, monkeypatch, capsys):
    """QA round 145-F F5: without --if-present, with a note edited and synced and another process holding the index,
    the gate said "Embedding the vault first (1 documents or chunks waiting; …)…" and exited 5 after 10 s; after
    ``sync --force`` a note said the documents are compared only once they are chunked, which cannot be done now, and
    then "Embedding the vault first…" and exit 5. --help says the gate compares against the index as it is then, with
    a note, as recall does, and SKIPPED names the lock when no document is compared: it does, exit 0."""
    from dreamdb.cli import main
    from dreamdb.embeddings import model
    from dreamdb.store import connect as db
    from tests.test_embed_store import HashEmbedder, make_vault

    emb = HashEmbedder("test-hash-lock")
    monkeypatch.setattr(model, "get_embedder", lambda *a, **kw: emb)  # (the model the CLI would load)
    vault = make_vault(tmp_path / "project" / "_dream_context", n_docs=3)
    with dreamdb.open(vault) as index:
        assert index.refresh_embeddings(embedder=emb).embedded == 6
    doc = vault / "knowledge" / "doc1.md"
    doc.write_text(doc.read_text(encoding="utf-8") + "\nA line the agent just added.\n", encoding="utf-8")
    assert main(["sync", "--vault", str(vault)]) == 0
    gate = ["embed", "dedup", "--vault", str(vault), "--title", "Doc 0", "--file", str(tmp_path / "draft.md")]
    (tmp_path / "draft.md").write_text((vault / "knowledge" / "doc0.md").read_text(encoding="utf-8"))
    holder = db.connect(vault / ".dreamdb" / "index.db")  # (dreamdb's driver: the same SQLite library shares its locks)
    holder.execute("BEGIN IMMEDIATE")  # another process's long sync or refresh
    try:
        capsys.readouterr()
        code = main([*gate, "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        result = json.loads(out)
        assert (result["verdict"], result["neighbours"][0]["doc_id"], result["identical"]) == \
            ("MERGE", "knowledge/doc0", True), result
        assert result["documents_not_compared"] == 1, result  # (doc1, as edited: its chunks wait)
        assert "Embedding the vault first" not in err and "1 document of the index waits to be chunked again" in err \
            and "another process holds the index" in err, err
        code = main(gate)
        out, err = capsys.readouterr()
        assert code == 0 and out.startswith("MERGE: "), (out, err)
        assert "Embedding the vault first" not in err and "note: 1 indexed document not compared" in err, err
        # after a rebuild every document waits to be chunked again, which the lock keeps out: SKIPPED names it
        holder.execute("ROLLBACK")
        assert main(["sync", "--force", "--vault", str(vault)]) == 0
        holder.execute("BEGIN IMMEDIATE")
        capsys.readouterr()
        code = main(gate)
        out, err = capsys.readouterr()
        assert code == 0, err
        assert out == ("SKIPPED: the index's documents wait to be chunked again before their vectors of the installed"
                       " model test-hash-lock can be compared, which cannot be done now: another process holds the index"
                       " (a dreamdb sync or refresh, a program reading it in a transaction, or another open Index of this"
                       " process); run this again once it is done\n"), out
        assert "Embedding the vault first" not in err and "3 documents of the index wait to be chunked again" in err, err
    finally:
        holder.close()
    code = main([*gate, "--json"])  # the lock gone: chunked, the edit embedded, every document compared
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    assert result["verdict"] == "MERGE" and result["documents_not_compared"] == 0, result


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_gate_compared_as_the_index_is_says_so_in_its_json_and_its_log(tmp_path, monkeypatch, capsys):
    """QA round 149-C F2: ``embed dedup --json`` while another process held the index's write lock gave MERGE with a
    note whose file was gone, and only stderr said the index was read as it was: no ``notes`` key (recall --json and
    sql carry one for this), nothing in the decision's log line. Both carry the note now."""
    from dreamdb.cli import main
    from dreamdb.dedup import LOG_FILE_NAME
    from dreamdb.embeddings import model
    from dreamdb.store import connect as db
    from tests.test_embed_store import HashEmbedder, make_vault

    emb = HashEmbedder("test-hash-stale")
    monkeypatch.setattr(model, "get_embedder", lambda *a, **kw: emb)
    vault = make_vault(tmp_path / "project" / "_dream_context", n_docs=3)
    with dreamdb.open(vault) as index:
        assert index.refresh_embeddings(embedder=emb).embedded == 6
    draft = tmp_path / "draft.md"
    draft.write_text((vault / "knowledge" / "doc0.md").read_text(encoding="utf-8"), encoding="utf-8")
    gate = ["embed", "dedup", "--vault", str(vault), "--title", "Doc 0", "--file", str(draft), "--json"]
    log = vault / ".dreamdb" / LOG_FILE_NAME
    holder = db.connect(vault / ".dreamdb" / "index.db")
    holder.execute("BEGIN IMMEDIATE")  # another process's long sync or refresh
    try:
        (vault / "knowledge" / "doc0.md").unlink()
        capsys.readouterr()
        code = main(gate)
        out, err = capsys.readouterr()
    finally:
        holder.close()
    assert code == 0, err
    result = json.loads(out)
    stale = ("another process holds the index (a dreamdb sync or refresh, a program reading it in a transaction, or"
             " another open Index of this process); answered from the index as it is (vault edits since its last"
             " sync may be missing)")
    assert (result["verdict"], result["neighbours"][0]["doc_id"]) == ("MERGE", "knowledge/doc0"), result
    assert result["notes"] == [stale], result
    assert f"note: {stale}" in err, err
    assert json.loads(log.read_text(encoding="utf-8").splitlines()[-1])["notes"] == [stale]
    code = main(gate)  # the lock gone: synced, doc0 gone from the index, nothing to say
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert code == 0 and result["verdict"] != "MERGE" and result["notes"] == [], result
    assert json.loads(log.read_text(encoding="utf-8").splitlines()[-1])["notes"] == []


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_a_refresh_waited_for_before_the_gate_is_in_its_json_notes_and_its_log(tmp_path, monkeypatch, capsys):
    """QA round 152-B F2: ``embed dedup --json`` that waited ~40 s for another process's ``embed refresh`` said so on
    stderr alone: ``notes`` was [] and the decision's log line had no note of it (docs/json.md lists "a lock waited
    for" among its notes)."""
    import threading

    from filelock import FileLock

    from dreamdb.cli import main
    from dreamdb.embeddings import model, store
    from tests.test_embed_store import HashEmbedder, make_vault

    emb = HashEmbedder("test-hash-wait")
    monkeypatch.setattr(model, "get_embedder", lambda *a, **kw: emb)
    vault = make_vault(tmp_path / "project" / "_dream_context", n_docs=3)
    assert main(["sync", "--vault", str(vault)]) == 0  # (no vectors yet: the gate embeds the vault first)
    (tmp_path / "draft.md").write_text((vault / "knowledge" / "doc0.md").read_text(encoding="utf-8"))
    held, done = threading.Event(), threading.Event()

    def other_refresh() -> None:  # (another process's embed refresh, holding the refresh lock for 1.5 s)
        with FileLock(str(vault / ".dreamdb" / store.LOCK_FILE_NAME)):
            held.set()
            done.wait(1.5)

    holder = threading.Thread(target=other_refresh)
    holder.start()
    assert held.wait(10)
    capsys.readouterr()
    code = main(["embed", "dedup", "--vault", str(vault), "--title", "Doc 0", "--file", str(tmp_path / "draft.md"),
                 "--json"])
    holder.join(10)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Another dreamdb process is refreshing this index's embeddings; waiting" in err, err
    result = json.loads(out)
    assert result["verdict"] == "MERGE" and result["documents_not_compared"] == 0, result
    assert len(result["notes"]) == 1, result
    waited = re.fullmatch(r"another dreamdb process was refreshing this index's embeddings: waited (\d+\.\d) s for"
                          r" it to finish before comparing", result["notes"][0])
    assert waited and 0.1 <= float(waited.group(1)) <= 1.5, result["notes"]
    logged = json.loads((vault / ".dreamdb" / LOG_FILE_NAME).read_text(encoding="utf-8").splitlines()[-1])
    assert logged["notes"] == result["notes"], logged
    code = main(["embed", "dedup", "--vault", str(vault), "--title", "Doc 0", "--file", str(tmp_path / "draft.md"),
                 "--json"])  # (nothing waited for: nothing said)
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["notes"] == [] and "waiting" not in err, (out, err)


def test_if_present_names_what_the_model_folder_lacks_or_is(tmp_path, monkeypatch, capsys):
    """QA round 152-B F3a, c: ``--if-present`` with DREAMDB_MODEL_DIR set to a folder without tokenizer.json, a file
    or a missing path said only "no embedding model installed", where recall and embed status name the cause (and the
    variable's fix); a model file that is a folder, a FIFO or a link to a device was said to be "missing"."""
    from dreamdb.cli import main
    from dreamdb.embeddings import locate
    from tests.test_embed_store import make_vault

    vault = make_vault(tmp_path / "project" / "_dream_context", n_docs=1)
    gate = ["embed", "dedup", "--vault", str(vault), "--title", "x", "--if-present", "--json"]

    def reason(model_dir) -> str:
        monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
        capsys.readouterr()
        assert main(gate) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["verdict"] == "SKIPPED", out
        return out["reason"]

    unset = "(unset DREAMDB_MODEL_DIR to use the model of the default folder"
    no_tokenizer = tmp_path / "m1"
    no_tokenizer.mkdir()
    (no_tokenizer / "model.onnx").write_bytes(b"a graph whose tokenizer.json is gone")
    for folder, why in ((no_tokenizer, f"tokenizer.json missing in {no_tokenizer}"),
                        (tmp_path / "m2", f"no model directory at {tmp_path / 'm2'}"),
                        (no_tokenizer / "model.onnx", f"{no_tokenizer / 'model.onnx'} is a file, not a model"
                                                       " directory")):
        said = reason(folder)
        assert said.startswith(f"no embedding model in DREAMDB_MODEL_DIR: {why} {unset}"), said
        assert why == locate.missing_reason(folder)  # (model status's and recall's words)
    # a model file that is there as something else than a file is said to be that, not "missing"
    odd = tmp_path / "m3"
    odd.mkdir()
    (odd / "tokenizer.json").write_text("{}")
    (odd / "model.onnx").mkdir()
    assert reason(odd).startswith(f"no embedding model in DREAMDB_MODEL_DIR: {odd / 'model.onnx'} is a folder, not a"
                                  f" file {unset}"), reason(odd)
    (odd / "model.onnx").rmdir()
    if os.path.exists("/dev/zero"):
        (odd / "model.onnx").symlink_to("/dev/zero")
        assert locate.missing_reason(odd) == f"{odd / 'model.onnx'} is a link to a device (/dev/zero), not a file"
        (odd / "model.onnx").unlink()
    (odd / "model.onnx").symlink_to(odd / "gone.onnx")
    assert locate.missing_reason(odd) == f"{odd / 'model.onnx'} is a link to {odd / 'gone.onnx'}, which does not exist"
    (odd / "model.onnx").unlink()
    assert locate.missing_reason(odd) == f"model.onnx missing in {odd}"
    if hasattr(os, "mkfifo"):
        (odd / "tokenizer.json").unlink()
        os.mkfifo(odd / "tokenizer.json")
        assert locate.missing_reason(odd) == f"{odd / 'tokenizer.json'} is a FIFO (named pipe), not a file"
        assert locate.model_status()["reason"] == locate.missing_reason(odd)
    # the default folder (no variable) says what it lacks too
    monkeypatch.delenv("DREAMDB_MODEL_DIR")
    monkeypatch.setattr(locate, "default_model_dir", lambda: no_tokenizer)
    capsys.readouterr()
    assert main(gate) == 0
    assert json.loads(capsys.readouterr().out)["reason"] == ("no embedding model installed: tokenizer.json missing in"
                                                             f" {no_tokenizer}")


@pytest.mark.skipif(not __import__("dreamdb.store.connect", fromlist=["x"]).CAN_LOAD_EXTENSIONS,
                    reason="the SQLite driver cannot load sqlite-vec")
def test_documents_a_running_refresh_has_not_embedded_yet_are_said_to_wait_for_it(tmp_path):
    """QA round 152-B F3b: while another process did the first refresh of an index, the gate said REVIEW "it was
    compared in part (edited since the last refresh…)" and "23 indexed documents compared in part or as chunked by
    an older chunker: run `dreamdb embed refresh`…", of notes nobody had edited. With a refresh under way the reason
    and the note say it is, and to run the gate again once it is done."""

    from dreamdb.embeddings import store
    from tests.test_embed_store import HashEmbedder, make_vault

    emb = HashEmbedder("test-hash-running")
    vault = make_vault(tmp_path / "project" / "_dream_context", n_docs=3)
    doc = vault / "knowledge" / "doc0.md"
    with dreamdb.open(vault) as index:
        assert index.refresh_embeddings(embedder=emb).embedded == 6
        doc.write_text(doc.read_text(encoding="utf-8") + "\n# Part C\n\nThe submarine reactor cools the turbines.\n",
                       encoding="utf-8")
        index.sync()
        store.chunk_pending_documents(index.conn)  # (its new chunk has no vector yet: doc0 is compared in part)
        text = doc.read_text(encoding="utf-8")
        edited = dedup(index, emb, title="Doc 0", content=text, log=False)
        assert edited.verdict == "REVIEW" and edited.documents_outdated == 1, edited.as_dict()
        refresh = f"dreamdb embed refresh --vault {shlex.quote(str(vault.resolve()))}"  # (QA round 156-D F1)
        assert edited.reason.endswith(f"in it: it was compared in part (edited since the last refresh: `{refresh}`"
                                      " embeds the rest), or the candidate adds text; knowledge/doc0 has this"
                                      " title"), edited.reason
        assert edited.notes() == ["1 indexed document compared in part or as chunked by an older chunker: run"
                                  f" `{refresh}` to compare them as they are now."]
        with another_refresh_running(vault):  # (another process's embed refresh under way)
            running = dedup(index, emb, title="Doc 0", content=text, log=False)
        assert running.verdict == "REVIEW", running.as_dict()
        assert running.reason.endswith("in it: it was compared in part (another dreamdb process is refreshing the"
                                       " embeddings now, and the rest of it has no vectors yet: run this again once"
                                       " it is done), or the candidate adds text; knowledge/doc0 has this title"), \
            running.reason
        assert "edited" not in running.reason
        assert running.refresh_running and not edited.refresh_running
        assert running.notes() == ["1 indexed document compared in part or as chunked by an older chunker: another"
                                   " dreamdb process is refreshing the embeddings now; run this again once it is done"
                                   " to compare them as they are now."]
        running.documents_not_compared = 2
        assert running.notes()[0].startswith("2 indexed documents not compared (no vectors for the model yet); 1 ")


@pytest.mark.model
def test_if_present_skips_at_once_on_an_index_another_process_builds_for_the_first_time(tiny_vault, model_dir,
                                                                                       monkeypatch, capsys):
    """QA round 146-A F2: ``--if-present`` on an index another process was building for the first time waited the
    whole lock timeout (10 s), then exited 5 ("…has not finished within 10 s: there is nothing to answer from yet"),
    where it promises a verdict or SKIPPED, never exit 4 or 5 because the index cannot be written now. An index being
    built has no vectors: SKIPPED (exit 0) says why, after the short wait a read gives a lock, not the 10 s."""
    import time

    from dreamdb.cli import main
    from tests.conftest import held_by_another_process, write_doc

    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    write_doc(tiny_vault, "knowledge/sleep.md", "---\ntitle: Sleep debt\n---\nSleep debt adds up night by night.\n")
    with dreamdb.open(tiny_vault, auto_sync=False) as index:
        index.conn  # made, never synced: the other process's first build, under way
        index_path = index.index_path
    with held_by_another_process(index_path, exclusive=False):
        capsys.readouterr()
        started = time.monotonic()
        code = main(["embed", "dedup", "--vault", str(tiny_vault), "--title", "x", "--description", "sleep debt",
                     "--if-present", "--json"])
        waited = time.monotonic() - started
        out, err = capsys.readouterr()
    assert code == 0, (out, err)
    result = json.loads(out)
    assert result["verdict"] == "SKIPPED" and "building the index for the first time" in result["reason"], result
    assert waited < 6, waited  # (the short wait of a read, 1.5 s; the lock timeout is 10 s)


@pytest.mark.model
def test_if_present_skips_on_an_index_a_full_disk_keeps_from_being_built(tiny_vault, model_dir):
    """QA round 146-A F2: ``--if-present`` where the index could not be built (a file size limit standing for a full
    disk), with no index at all or with an empty one never synced (the prompt hook's), exited 4 ("Cannot build the
    index … nothing to answer from yet"): SKIPPED (exit 0), the reason said, and the index as it was."""
    import resource

    for n in range(60):  # (more than the limit below holds)
        body = " ".join(f"w{n}x{(n * 7919 + i * 104729) % 99991}" for i in range(300))
        (tiny_vault / "knowledge").mkdir(exist_ok=True)
        (tiny_vault / "knowledge" / f"note-{n}.md").write_text(f"---\ntitle: Note {n}\n---\n{body}\n", encoding="utf-8")
    index_path = dreamdb.open(tiny_vault, auto_sync=False).index_path
    env = {**os.environ, "DREAMDB_MODEL_DIR": str(model_dir), "PYTHONPATH": str(ROOT)}
    for made in (False, True):
        if made:
            with dreamdb.open(tiny_vault, auto_sync=False) as index:
                index.conn  # made, never synced (as the prompt hook leaves it before its background build)
        limit = 32 * 1024 + (index_path.stat().st_size if made else 0)
        p = subprocess.run([sys.executable, "-m", "dreamdb", "embed", "dedup", "--vault", str(tiny_vault), "--title",
                            "x", "--if-present", "--json"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
                           preexec_fn=lambda limit=limit: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
        assert p.returncode == 0 and "Traceback" not in p.stderr, (made, p.returncode, p.stdout, p.stderr)
        result = json.loads(p.stdout)
        assert result["verdict"] == "SKIPPED" and "the index cannot be built now" in result["reason"], (made, result)
        assert index_path.exists() is made, made  # (a new index removed; another's left as it was)
