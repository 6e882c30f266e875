"""Chunks + vectors in the index: refresh, resume, prune, parallel refreshes, dense search.

Mechanics use a deterministic hash embedder (``HashEmbedder``: fast, and the
counts are what matters); retrieval quality and the end-to-end path use the
real model on a ~20-document subset of the real vault (``embedded_subset``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import dreamdb
from dreamdb.embeddings import store
from dreamdb.errors import UsageError
from dreamdb.store import connect as db
from tests.conftest import ROOT, copy_vault, small_file_system, write_doc

pytestmark = pytest.mark.skipif(not db.CAN_LOAD_EXTENSIONS, reason="the SQLite driver cannot load sqlite-vec")


class HashEmbedder:
    """Deterministic unit vectors from the sha256 of the text; counts every text it embeds."""

    def __init__(self, model_id: str = "test-hash-1") -> None:
        self.model_id = model_id
        self.name = "hash"
        self.dim = 384
        self.source = "custom"
        self.path = None
        self.calls: list[str] = []

    def embed_passages(self, texts):
        self.calls.extend(texts)
        return np.stack([self.vec(t) for t in texts]) if texts else np.zeros((0, 384), np.float32)

    @staticmethod
    def vec(text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
        return v / np.linalg.norm(v)


def para(tag: str, n: int = 150) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def make_vault(vault, n_docs: int = 6):
    for i in range(n_docs):
        write_doc(vault, f"knowledge/doc{i}.md",
                  f"---\nname: Doc {i}\n---\n# Part A\n\n{para(f'a{i}x')}\n\n# Part B\n\n{para(f'b{i}x')}\n")
    return vault


def open_synced(vault):
    index = dreamdb.open(vault)
    index.sync()
    return index


def test_refresh_refuses_an_embedder_that_is_none_before_it_syncs(tiny_vault):
    """QA round 139-A F3: ``refresh_embeddings(embedder=3)`` synced, then raised AttributeError ('int' object has no
    attribute 'model_id')."""
    make_vault(tiny_vault, n_docs=2)
    with dreamdb.open(tiny_vault) as index:
        for wrong in (3, "e5s-1234", object()):
            with pytest.raises(UsageError, match=r"^embedder must be an Embedder .* or None, got "):
                index.refresh_embeddings(embedder=wrong)
        assert not index.index_path.exists()  # (refused before the sync)
        assert index.refresh_embeddings(embedder=HashEmbedder()).embedded > 0


def test_a_forced_refresh_waiting_for_another_forced_one_does_not_say_that_one_stopped(tiny_vault, monkeypatch):
    """QA round 128-A F6: a second ``--force`` started while the first ran said "an earlier forced refresh stopped
    with 35 texts left", read before it waited for the first, which then finished. The texts left are read once the
    lock is taken; a forced run that did stop (here: the lock free, its mark left) is still named."""
    monkeypatch.chdir(tiny_vault.parent)  # (dreamdb finds the vault from here: its notes' commands need no --vault)
    import threading

    from filelock import FileLock

    from dreamdb.embeddings import store

    make_vault(tiny_vault, n_docs=3)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        index.refresh_embeddings(embedder=emb)
        key = store.FORCED_KEY + emb.model_id
        index.conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, "1000000"))  # (a forced run under way)
        assert store.forced_remaining(index.conn, emb.model_id) > 0
        other = FileLock(str(index.index_path.parent / store.LOCK_FILE_NAME))
        other.acquire()
        waiting = threading.Event()
        run = threading.Thread(target=lambda: index.refresh_embeddings(
            force=True, embedder=emb, on_wait=lambda now: waiting.set() if now else None))
        run.start()
        assert waiting.wait(30)
        with dreamdb.open(tiny_vault) as finisher:  # (the other run finishes: its mark goes)
            finisher.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        other.release()
        run.join(60)
        assert not run.is_alive() and not any("earlier forced refresh" in n for n in index.take_notes())
        index.conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, "1000000"))  # (one that stopped)
        left = store.forced_remaining(index.conn, emb.model_id)
        index.refresh_embeddings(force=True, embedder=emb)
        assert [n for n in index.take_notes() if "earlier forced refresh" in n] == [
            f"an earlier forced refresh (`embed refresh --force`) stopped with {left} texts left to re-embed; this one"
            " starts over (a refresh without force, `dreamdb embed refresh`, would finish that one)"]


def test_a_refresh_runs_its_batches_short_and_long_in_turn_so_its_rate_holds(tiny_vault):
    """QA round 127-C F4: batches ran shortest first, so the first minutes went 4-10 times faster than the last and
    the progress bar said 1 minute left of 9. Batches still group similar lengths (less padding); they run from
    both ends in turn, and the progress counts the texts done."""
    from dreamdb.embeddings import store

    for i in range(6):
        write_doc(tiny_vault, f"knowledge/n{i}.md", f"---\nname: N{i}\n---\n{para(f'w{i}x', 10 + 40 * i)}\n")

    class Batches(HashEmbedder):
        def __init__(self):
            super().__init__()
            self.batches: list[list[int]] = []

        def embed_passages(self, texts):
            self.batches.append(sorted(len(t) for t in texts))
            return super().embed_passages(texts)

    emb, seen = Batches(), []
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, emb, batch_size=2, progress=lambda done, total: seen.append((done, total)))
    lengths = sorted(n for b in emb.batches for n in b)
    pairs = [lengths[i:i + 2] for i in range(0, len(lengths), 2)]
    assert len(pairs) >= 3 and emb.batches == [pairs[0], pairs[-1], *store._from_both_ends(pairs[1:-1])]
    assert seen == [(0, len(lengths)), *((min(2 * k, len(lengths)), len(lengths)) for k in range(1, len(pairs) + 1))]


def test_embed_refresh_that_waited_for_another_also_embeds_the_notes_written_meanwhile(tiny_vault):
    """QA round 68 L2: a second `embed refresh` that waited on the lock worked from the vault as synced before the
    wait: notes added during the other refresh's minutes stayed unchunked ("5 to chunk") after both exited 0."""
    import threading

    from filelock import FileLock

    from dreamdb.cli.embed import _run_refresh

    make_vault(tiny_vault, n_docs=2)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:  # (the CLI syncs, then refreshes)
        path = str(store.index_file(index.conn).parent / store.LOCK_FILE_NAME)
        held = threading.Event()

        def other_refresh() -> None:
            with FileLock(path):
                held.set()
                time.sleep(0.5)
                write_doc(tiny_vault, "knowledge/meanwhile.md", f"---\nname: Meanwhile\n---\n{para('m0x')}\n")

        other = threading.Thread(target=other_refresh)
        other.start()
        held.wait()
        report = _run_refresh(index, emb, force=False, show_bar=False)
        other.join()
        assert report.embedded == 5 and report.pending == 0 and report.chunked_docs == 3
        st = store.embed_status(index.conn, emb.model_id)
        assert (st["docs_pending"], st["pending"], st["documents"]) == (0, 0, 3)


def test_refresh_embeds_all_then_nothing_twice(tiny_vault):
    make_vault(tiny_vault)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        r1 = store.refresh(index.conn, emb, batch_size=4)
        assert r1.chunked_docs == 6 and r1.embedded == 12 and r1.chunks == 12 and r1.pending == 0 and r1.pruned == 0
        assert store.pending(index.conn, emb.model_id) == 0
        r2 = store.refresh(index.conn, emb)
        assert (r2.chunked_docs, r2.embedded, r2.pruned) == (0, 0, 0)
        assert len(emb.calls) == len(set(emb.calls)) == 12
        st = store.embed_status(index.conn, emb.model_id)
        assert st["embedded"] == st["chunks"] == 12 and st["pending"] == 0 and st["vectors"] == 12
        assert st["vectors_bytes"] == 12 * 384 * 4 and st["model_name"] == "hash"
        # the views work
        assert index.conn.execute("SELECT COUNT(*) FROM chunk_vectors WHERE model_id = ?", (emb.model_id,)).fetchone()[0] == 12
        cov = index.conn.execute("SELECT chunks, embedded, vectors FROM embedding_coverage").fetchone()
        assert tuple(cov) == (12, 12, 12)


class NanEmbedder(HashEmbedder):
    """:class:`HashEmbedder` whose vector of a text holding ``debt`` is NaN: a damaged model."""

    def embed_passages(self, texts):
        vecs = super().embed_passages(texts)
        vecs[["debt" in t for t in texts]] = np.nan
        return vecs


def test_a_vector_of_nan_is_never_stored(tiny_vault):
    """QA round 139-B F2: a damaged model's NaN vectors were stored and counted as embedded; their notes matched no
    query."""
    from dreamdb.errors import ModelError

    write_doc(tiny_vault, "knowledge/sleep.md", "---\nname: Sleep\n---\nEach session accumulates sleep debt.\n")
    with open_synced(tiny_vault) as index:
        with pytest.raises(ModelError, match="NaN"):
            store.refresh(index.conn, NanEmbedder())
        assert index.conn.execute("SELECT COUNT(*) FROM vec_embeddings").fetchone()[0] == 0
        assert store.pending(index.conn, "test-hash-1") == 1


def test_vectors_of_nan_an_older_version_stored_are_embedded_again_by_the_next_refresh(tiny_vault):
    """QA round 139-B F2: vectors of NaN stored before the fix counted as embedded for ever (a refresh found
    nothing to do); the next refresh deletes them and embeds their texts again, once."""
    make_vault(tiny_vault, n_docs=3)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        assert store.refresh(index.conn, emb).embedded == 6
        conn = index.conn
        victim = conn.execute("SELECT rowid FROM vec_embeddings ORDER BY rowid LIMIT 1").fetchone()[0]
        with store.write_transaction(conn):  # what an older version stored from a damaged model
            conn.execute("DELETE FROM vec_embeddings WHERE rowid = ?", (victim,))
            conn.execute("INSERT INTO vec_embeddings (rowid, model_id, embedding) VALUES (?, ?, ?)",
                         (victim, emb.model_id, np.full(384, np.nan, np.float32).tobytes()))
            conn.execute("DELETE FROM meta WHERE key LIKE 'embed_finite_checked:%'")  # (not written by it)
        emb.calls.clear()
        report = store.refresh(conn, emb)
        assert report.embedded == 1 and len(emb.calls) == 1 and report.pending == 0
        blobs = [r[0] for r in conn.execute("SELECT embedding FROM vec_embeddings")]
        assert len(blobs) == 6 and np.isfinite(np.frombuffer(b"".join(blobs), np.float32)).all()
        assert store.refresh(conn, emb).embedded == 0 and len(emb.calls) == 1


@contextlib.contextmanager
def _embedded_before_the_nan_check(vault):
    """An Index of a vault of 3 notes, embedded by a :class:`HashEmbedder`, made one whose vectors predate the NaN check
    (its mark for the model removed): ``(index, embedder, the mark's key)``."""
    make_vault(vault, n_docs=3)
    emb = HashEmbedder()
    key = store.FINITE_KEY + emb.model_id
    with open_synced(vault) as index:
        assert store.refresh(index.conn, emb).embedded == 6
        with store.write_transaction(index.conn):
            index.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        yield index, emb, key


def _store_a_nan_vector(conn) -> int:
    """Overwrite the first stored vector with NaN (what an older version stored from a damaged model); its rowid."""
    victim = conn.execute("SELECT rowid FROM vec_embeddings ORDER BY rowid LIMIT 1").fetchone()[0]
    with store.write_transaction(conn):
        conn.execute("UPDATE vec_embeddings SET embedding = ? WHERE rowid = ?",
                     (np.full(384, np.nan, np.float32).tobytes(), victim))
    return victim


def test_an_index_older_than_the_nan_check_is_looked_through_once_not_on_every_no_change_refresh(tiny_vault):
    """QA round 140-C F5: with every vector current, a refresh read all of the model's vectors for NaN on each call
    (35 ms against 5 on the real vault) and never marked them looked through; the first refresh now marks them, and
    the next ones do not read them again (a NaN vector stored after the mark stays: no refresh scanned for it)."""
    with _embedded_before_the_nan_check(tiny_vault) as (index, emb, key):
        conn = index.conn
        emb.calls.clear()
        report = store.refresh(conn, emb)
        assert (report.embedded, report.pending, emb.calls) == (0, 0, [])
        assert conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone() == ("1",)
        victim = _store_a_nan_vector(conn)
        assert store.refresh(conn, emb).embedded == 0 and emb.calls == []
        blob = conn.execute("SELECT embedding FROM vec_embeddings WHERE rowid = ?", (victim,)).fetchone()[0]
        assert np.isnan(np.frombuffer(blob, np.float32)).all()


def test_a_no_change_refresh_of_a_read_only_index_older_than_the_nan_check_writes_nothing(tiny_vault):
    """QA round 141-D F1: on an index SQLite could open only read-only, made before the NaN check (no key), a refresh
    with nothing to do took its writing path and failed on every call (a raw OperationalError from register_model;
    `embed refresh` exit 4), where it said "0 embedded". It looks read-only now, and the key waits for a writable
    index; vectors of NaN there are a write it needs, refused as IndexUnavailable (from Index), not a raw error."""
    from dreamdb.errors import IndexUnavailable

    with _embedded_before_the_nan_check(tiny_vault) as (index, emb, key):
        conn = index.conn
        path = index.index_path
        ro = db.connect(path, readonly=True, vec=True)
        try:
            emb.calls.clear()
            for _ in range(2):
                report = store.refresh(ro, emb)
                assert (report.embedded, report.pending, report.chunks, emb.calls) == (0, 0, 6, [])
            assert ro.execute("SELECT 1 FROM meta WHERE key = ?", (key,)).fetchone() is None
            _store_a_nan_vector(conn)  # what an older version stored from a damaged model
            index._conn, ro = ro, index._conn  # (the Index's connection is the read-only one now)
            with pytest.raises(IndexUnavailable, match="cannot be written .*readonly database"):
                index.refresh_embeddings(embedder=emb)
            assert emb.calls == []
        finally:
            index._conn, ro = ro, index._conn
            ro.close()
        report = store.refresh(conn, emb)  # writable again: the NaN vector's text is embedded again, the key set
        assert report.embedded == 1
        assert conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone() == ("1",)


# ------------------------------------------------------------------ vectors of decomposed text (QA round 157-B F1)

NFD_NOTE = ("---\nname: Gölge çalışma notları\n---\nŞirket içi öğrenme oturumlarında gölgeleme yöntemi kullanılıyor:"
            " yeni başlayan bir çalışan, deneyimli bir mühendisin yanında bir hafta boyunca çalışır, her gün kısa"
            " notlar düşer ve cuma günü öğrendiklerini özetler. Bu yöntem ölçülebilir bir iyileşme sağladı.\n")
"""A Turkish note, written decomposed (NFD) into the vault by :func:`_nfc_vault`: one chunk, not in NFC."""


NFC_KEY = "nfc_vectors"
"""``meta`` key (:data:`dreamdb.store.sync.NFC_VECTORS_KEY`): ``done`` once the vectors of decomposed texts an older
version may have computed were deleted, or none can have been."""


def _nfc_vault(vault):
    """Three notes of one chunk each: a Turkish one written decomposed (NFD, as text pasted from some macOS sources), a
    Turkish one composed (NFC, non-ASCII all the same) and an English one."""
    import unicodedata

    write_doc(vault, "knowledge/golge.md", unicodedata.normalize("NFD", NFD_NOTE))
    write_doc(vault, "knowledge/tuz.md", "---\nname: Tuz ve şeker\n---\nMutfakta tuz ile şekerin yerini karıştırmamak"
                                         " için kavanozların üstüne büyük etiketler yapıştırdık.\n")
    write_doc(vault, "knowledge/sleep.md", "---\nname: Sleep debt\n---\nEach late session adds sleep debt that the"
                                           " weekend does not pay back in full.\n")
    return vault


def _nfd_hash(conn) -> str:
    """The content hash of the one chunk text of :func:`_nfc_vault` not in NFC."""
    import unicodedata

    (found,) = [h for h, t in conn.execute("SELECT content_hash, text FROM chunks")
                if not unicodedata.is_normalized("NFC", t)]
    return found


def _vectors(conn) -> dict[str, tuple[int, bytes]]:
    """``{content hash: (embeddings.id, vector bytes)}`` of every stored vector."""
    return {h: (i, v) for h, i, v in conn.execute(
        "SELECT e.content_hash, e.id, v.embedding FROM embeddings e JOIN vec_embeddings v ON v.rowid = e.id")}


def _as_written_by(conn, history: str | None, old_vectors: dict[str, bytes] | None = None) -> None:
    """Make the index one a version of ``history`` (``formats_written``, oldest first; None: before 0.3.7, which
    recorded none) left: its format the last of them (an older format, whose next sync rebuilds the index as an
    upgrade does), no :data:`~dreamdb.store.sync.NFC_VECTORS_KEY`, and ``old_vectors`` ({content hash: vector})
    stored in place of the vectors of those texts, as such a version computed them."""
    with store.write_transaction(conn):
        for h, vector in (old_vectors or {}).items():
            conn.execute("UPDATE vec_embeddings SET embedding = ? WHERE rowid = (SELECT id FROM embeddings WHERE"
                         " content_hash = ?)", (vector, h))
        conn.execute("DELETE FROM meta WHERE key IN (?, 'formats_written')", (NFC_KEY,))
        if history is not None:
            conn.execute("INSERT INTO meta (key, value) VALUES ('formats_written', ?)", (history,))
        conn.execute("UPDATE meta SET value = ? WHERE key = 'analyzer_version'",
                     (history.split(",")[-1] if history else "21.15.11",))


NEWER_FORMATS = "21.40.18,21.41.18,21.42.18,21.43.19,21.44.20,22.44.20,23.44.20,24.44.20"
"""Eight formats (``formats_written`` keeps 8) of versions since 0.3.19: an older one may have been left out."""


@pytest.mark.parametrize("history", [None, "21.15.11", "21.36.17,21.39.18", NEWER_FORMATS],
                         ids=["before-0.3.7", "0.3.2-ish", "0.3.13-0.3.18", "eight-formats"])
def test_the_vector_of_a_decomposed_text_an_older_version_stored_is_embedded_again_once(tiny_vault, history):
    """QA round 157-B F1: the vectors a version before 0.3.19 computed from a decomposed (NFD) chunk text, kept by its
    hash after the embedder began composing text (NFC), are deleted once on the upgrade, so the refresh embeds exactly
    those texts again; a composed text's vector is kept, non-ASCII or not. Done once: the next refreshes embed nothing."""
    _nfc_vault(tiny_vault)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        assert store.refresh(index.conn, emb).embedded == 3
        nfd = _nfd_hash(index.conn)
        before = _vectors(index.conn)
        _as_written_by(index.conn, history)
    emb.calls.clear()
    with dreamdb.open(tiny_vault) as index:  # this version opens the index the older one left: synced, then refreshed
        report = index.refresh_embeddings(embedder=emb)
        conn = index.conn
        assert (report.embedded, report.pending) == (1, 0), report
        assert [hashlib.sha256(t.encode()).hexdigest() for t in emb.calls] == [nfd]
        after = _vectors(conn)
        assert after.keys() == before.keys()
        assert all(after[h] == before[h] for h in before if h != nfd)
        assert conn.execute("SELECT value FROM meta WHERE key = ?", (NFC_KEY,)).fetchone() == ("done",)
        assert index.refresh_embeddings(embedder=emb).embedded == 0 and len(emb.calls) == 1
    with dreamdb.open(tiny_vault) as index:
        assert index.refresh_embeddings(embedder=emb).embedded == 0 and len(emb.calls) == 1


@pytest.mark.parametrize("history", ["fresh", "current", "21.40.18", "21.40.18,21.41.18,23.44.20"])
def test_an_index_only_versions_since_0_3_19_embedded_keeps_every_vector(tiny_vault, history):
    """QA round 157-B F1: a new index, one of this version's format made before the deletion (no key), and ones only
    versions since 0.3.19 (index format 21.40.18, whose embedder composes text) synced lose no vector, the decomposed
    text's included, and the key says so at once."""
    from dreamdb.store.sync import INDEX_FORMAT

    _nfc_vault(tiny_vault)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        conn = index.conn
        assert conn.execute("SELECT value FROM meta WHERE key = ?", (NFC_KEY,)).fetchone() == ("done",)
        assert store.refresh(conn, emb).embedded == 3
        before = _vectors(conn)
        if history != "fresh":
            _as_written_by(conn, INDEX_FORMAT if history == "current" else history)
    emb.calls.clear()
    with dreamdb.open(tiny_vault) as index:
        report = index.refresh_embeddings(embedder=emb)
        assert (report.embedded, report.pending, emb.calls) == (0, 0, []), report
        assert _vectors(index.conn) == before
        assert index.conn.execute("SELECT value FROM meta WHERE key = ?", (NFC_KEY,)).fetchone() == ("done",)


def test_a_read_only_index_an_older_version_embedded_without_decomposed_text_refreshes_without_writing(tiny_vault):
    """QA round 157-B F1, as 141-D F1 for the NaN check: where no decomposed text has a vector there is nothing to
    delete, so a refresh of such an index SQLite opened read-only stays on its read-only path ("0 embedded", not exit
    4), and the key waits for a writable index."""
    _nfc_vault(tiny_vault)
    (tiny_vault / "knowledge" / "golge.md").unlink()
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        conn = index.conn
        assert store.refresh(conn, emb).embedded == 2
        with store.write_transaction(conn):
            conn.execute("UPDATE meta SET value = 'due' WHERE key = ?", (NFC_KEY,))
        ro = db.connect(index.index_path, readonly=True, vec=True)
        try:
            emb.calls.clear()
            for _ in range(2):
                report = store.refresh(ro, emb)
                assert (report.embedded, report.pending, emb.calls) == (0, 0, [])
            assert ro.execute("SELECT value FROM meta WHERE key = ?", (NFC_KEY,)).fetchone() == ("due",)
        finally:
            ro.close()
        assert store.refresh(conn, emb).embedded == 0 and emb.calls == []
        assert conn.execute("SELECT value FROM meta WHERE key = ?", (NFC_KEY,)).fetchone() == ("done",)


def test_a_damage_rebuild_carries_whether_an_older_version_s_vectors_wait(tiny_vault):
    """QA round 157-B F1: a damage rebuild carries the stored vectors into a new file, which records no format: the
    decomposed text's vector an older version computed is still embedded again, and a newer version's is not."""
    import sqlite3 as stdlib_sqlite3

    _nfc_vault(tiny_vault)
    emb = HashEmbedder()
    for history, embedded in (("21.39.18", 1), ("21.40.18", 0)):
        with open_synced(tiny_vault) as index:
            store.refresh(index.conn, emb)
            _as_written_by(index.conn, history)
            index.sync()  # (this version's first sync: the decision is recorded before its format is)
            path = index.index_path
        with stdlib_sqlite3.connect(path) as c:
            c.execute("DROP TABLE corpus_stats")
        emb.calls.clear()
        with dreamdb.open(tiny_vault) as index:
            synced = index.sync()
            assert any("rebuilt from the vault (its 3 stored embeddings kept)" in w for w in synced.warnings), synced
            report = index.refresh_embeddings(embedder=emb)
            assert (report.embedded, len(emb.calls), report.pending) == (embedded, embedded, 0), (history, report)


@pytest.mark.model
@pytest.mark.parametrize("how", ["refresh", "recall"])
def test_an_index_an_older_version_embedded_ranks_as_a_new_one_once_upgraded(tiny_vault, tmp_path, model_dir,
                                                                               embedder, monkeypatch, how):
    """QA round 157-B F1, as found: after an upgrade from 0.3.18 or earlier, a decomposed (NFD) note kept the vector the
    old version computed from its decomposed tokens (its text, and the hash keying the vector, unchanged), `embed
    refresh` said "0 embedded, 3 reused", and dense recall ranked otherwise than on a new index. The upgraded index's
    first refresh (or the hybrid recall's own refresh before it) embeds that text again, and dense recall then gives
    a new index's scores."""
    from dreamdb.embeddings import model as model_module

    monkeypatch.setenv("DREAMDB_MODEL_DIR", str(model_dir))
    _nfc_vault(tiny_vault)
    query = "öğrenme oturumlarında gölgeleme yöntemi"
    fresh_path = tmp_path / "fresh" / "index.db"
    with dreamdb.open(tiny_vault, index_path=fresh_path) as fresh:
        assert fresh.refresh_embeddings(embedder=embedder).embedded == 3
        expected = [(h.doc_id, round(h.rank_score, 5)) for h in fresh.recall(query, mode="dense", top=3)]
        fresh_vectors = _vectors(fresh.conn)
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, embedder)
        nfd = index.conn.execute("SELECT text FROM chunks WHERE content_hash = ?", (_nfd_hash(index.conn),)).fetchone()[0]
        with monkeypatch.context() as m:  # the embedder of 0.3.18 and earlier: the text to the tokenizer as written
            m.setattr(model_module, "_encodable", lambda text: text)
            old = embedder.embed_passages([nfd])[0]
        assert float(old @ np.frombuffer(fresh_vectors[_nfd_hash(index.conn)][1], np.float32)) < 0.99
        _as_written_by(index.conn, "21.39.18", {_nfd_hash(index.conn): old.astype(np.float32).tobytes()})
    with dreamdb.open(tiny_vault) as index:
        if how == "refresh":
            report = index.refresh_embeddings(embedder=embedder)
            assert (report.embedded, report.reused) == (1, 2), report
        got = [(h.doc_id, round(h.rank_score, 5)) for h in index.recall(query, mode="dense", top=3)]
        assert got == expected
        assert got[0][0] == "knowledge/golge"
        upgraded = _vectors(index.conn)
        assert upgraded.keys() == fresh_vectors.keys()
        for h, (_id, vector) in upgraded.items():
            np.testing.assert_allclose(np.frombuffer(vector, np.float32),
                                       np.frombuffer(fresh_vectors[h][1], np.float32), atol=1e-5)


def test_a_refresh_that_must_wait_for_another_says_so_first(tiny_vault):
    """QA round 9: a second `embed refresh` waited minutes for the first without a word."""
    import threading

    from filelock import FileLock

    from dreamdb.errors import LockTimeout

    make_vault(tiny_vault, n_docs=2)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        path = str(store.index_file(index.conn).parent / store.LOCK_FILE_NAME)
        held, done = threading.Event(), threading.Event()

        def other_refresh(seconds: float) -> None:  # another holder (filelock refuses one thread twice)
            with FileLock(path):
                held.set()
                done.wait(seconds)

        threading.Thread(target=other_refresh, args=(0.5,)).start()
        held.wait()
        waits: list[tuple[bool, float]] = []
        t0 = time.monotonic()
        r = store.refresh(index.conn, emb, on_wait=lambda w: waits.append((w, time.monotonic() - t0)))
        assert [w for w, _ in waits] == [True, False] and waits[0][1] < 0.4 <= waits[1][1]  # told first, then waited
        assert r.embedded == 4
        calls: list[bool] = []
        assert store.refresh(index.conn, emb, on_wait=calls.append).embedded == 0 and calls == []
        held.clear()
        threading.Thread(target=other_refresh, args=(5.0,)).start()
        held.wait()
        with pytest.raises(LockTimeout):  # a set timeout still ends in LockTimeout, after the notice
            store.compact(index.conn, lock_timeout=0.2, on_wait=calls.append)
        done.set()
        assert calls == [True]  # no False: the lock was never taken


def test_changelog_entries_get_no_vectors(tiny_vault):
    """DENSE_EXCLUDED_TYPES: changelog entries are chunked to nothing, so the dense channel never returns them."""
    make_vault(tiny_vault, 2)
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-05-01", "type": "feat", "scope": "recall", "description": para("a0x", 40)},
        {"date": "2026-05-02", "type": "fix", "scope": "sync", "description": "renamed files keep their vectors"},
    ]))
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        c = index.conn
        assert c.execute("SELECT COUNT(*) FROM documents WHERE type = 'changelog'").fetchone()[0] == 2
        r = store.refresh(c, emb)
        assert r.chunked_docs == 4 and r.chunks == 4 and r.embedded == 4
        assert not any("renamed files" in t for t in emb.calls)
        assert c.execute("""SELECT COUNT(*) FROM chunks ch JOIN documents d ON d.id = ch.doc
                            WHERE d.type = 'changelog'""").fetchone()[0] == 0
        assert c.execute("""SELECT COUNT(*) FROM chunked_documents s JOIN documents d ON d.id = s.doc
                            WHERE d.type = 'changelog' AND s.n_chunks = 0""").fetchone()[0] == 2
        assert store.pending(c, emb.model_id) == 0
        # the changelog entry's exact text as the query: still only knowledge documents come back
        q = emb.embed_passages(["renamed files keep their vectors"])[0]
        types = {c.execute("SELECT type FROM documents WHERE id = ?", (d,)).fetchone()[0]
                 for d, _s in store.dense_search(c, q, emb.model_id, 10)}
        assert types == {"knowledge"}


def test_documents_without_text_of_their_own_get_no_vectors(tiny_vault):
    """QA round 121-B F1: empty notes (their one chunk their name, ``scratch``) took the first places of dense and
    hybrid recall for a Turkish question over an English vault. A document with a blank body and description has
    no chunk; one with a description alone has it, and an index chunked before loses the empty note's vector."""
    make_vault(tiny_vault, 2)
    write_doc(tiny_vault, "knowledge/scratch.md", "")
    write_doc(tiny_vault, "knowledge/titled.md", "---\ntitle: Decide the cache size\n---\n  \n")
    write_doc(tiny_vault, "knowledge/described.md", "---\ndescription: the cache size we chose\n---\n")
    # markup or invisible characters alone are no text either (QA round 122-A F1: template notes)
    for name, body in (("fence", "```\n```\n"), ("zwsp", "\u200b\n"), ("bullets", "- \n- \n"), ("comment", "<!-- -->\n"),
                       ("rule", "***\n"), ("filler", "\u3164\u3164\n"), ("braille", "\u2800\n")):
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\ntitle: {name}\n---\n{body}")
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        c = index.conn
        r = store.refresh(c, emb)
        chunked = dict(c.execute("SELECT d.slug, s.n_chunks FROM chunked_documents s JOIN documents d ON d.id = s.doc"))
        assert chunked == {"doc0": 2, "doc1": 2, "scratch": 0, "titled": 0, "described": 1, "fence": 0, "zwsp": 0,
                           "bullets": 0, "comment": 0, "rule": 0, "filler": 0, "braille": 0}, chunked
        assert r.unembedded_docs == 0 and store.pending(c, emb.model_id) == 0  # (no type excluded here)
        for name in ("scratch", "Decide the cache size"):  # the bare name's own vector as the query
            hits = store.dense_search(c, emb.vec(name), emb.model_id, 10)
            slugs = {c.execute("SELECT slug FROM documents WHERE id = ?", (d,)).fetchone()[0] for d, _s in hits}
            assert slugs == {"doc0", "doc1", "described"}, (name, slugs)
        # an index chunked by the rules before (its empty note chunked as its name) drops that chunk and its vector
        scratch = c.execute("SELECT id FROM documents WHERE slug = 'scratch'").fetchone()[0]
        with db.write_transaction(c):
            c.execute("INSERT INTO chunks (doc, ordinal, content_hash, text, n_words) VALUES (?, 0, 'h', 'scratch', 1)",
                      (scratch,))
            c.execute("UPDATE chunked_documents SET chunker = '4', n_chunks = 1")
        store.refresh(c, emb)
        assert c.execute("SELECT COUNT(*) FROM chunks WHERE doc = ?", (scratch,)).fetchone()[0] == 0
        assert c.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == 5


def test_edit_reembeds_only_changed_chunks_and_delete_prunes(tiny_vault):
    make_vault(tiny_vault)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, emb)
        emb.calls.clear()
        p = tiny_vault / "knowledge" / "doc2.md"
        p.write_text(p.read_text().replace("b2x149", "edited"), encoding="utf-8")
        index.sync()
        assert store.pending(index.conn, emb.model_id) >= 1
        r = store.refresh(index.conn, emb)
        assert r.chunked_docs == 1 and r.embedded == 1 and r.reused == 1 and r.pruned == 1
        assert len(emb.calls) == 1 and "edited" in emb.calls[0]
        # delete a document: its vectors go
        (tiny_vault / "knowledge" / "doc3.md").unlink()
        index.sync()
        r = store.refresh(index.conn, emb)
        assert r.pruned == 2 and r.embedded == 0 and r.chunks == 10
        n_vec = index.conn.execute("SELECT COUNT(*) FROM vec_embeddings WHERE model_id = ?", (emb.model_id,)).fetchone()[0]
        assert n_vec == index.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 10


def test_resync_of_same_text_reuses_vectors(tiny_vault):
    make_vault(tiny_vault, 3)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, emb)
        emb.calls.clear()
        index.sync(force=True)  # every document row deleted and re-inserted
        r = store.refresh(index.conn, emb)
        assert r.chunked_docs == 3 and r.embedded == 0 and r.reused == 6 and emb.calls == []


def test_prune_waits_while_documents_wait_to_be_chunked(tiny_vault):
    """QA repro: a rebuild between a refresh's chunking and its pruning deleted every vector."""
    make_vault(tiny_vault, 4)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, emb)
        vectors = index.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        assert vectors == 8
        index.sync(force=True)  # chunks emptied: every document waits to be chunked again
        assert store.documents_to_chunk(index.conn) == 4
        assert store.prune(index.conn) == 0
        assert index.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == vectors
        # status says the vectors are kept (QA round 9: "0/0 chunks embedded, 4 pending" looked like a loss)
        summary = store.embed_status(index.conn, emb.model_id)["summary"]
        assert "0/0 chunks embedded" in summary and "4 documents to chunk" in summary and "8 vectors stored" in summary
        emb.calls.clear()
        r = store.refresh(index.conn, emb)
        assert (r.embedded, r.reused, r.pruned) == (0, 8, 0) and emb.calls == []
        assert store.embed_status(index.conn, emb.model_id)["summary"].endswith("8/8 chunks embedded with hash test-hash-1, up to date")
        # Index.embed_status: the same, and an id that is no string is a usage error (QA round 83-A F7: a TypeError)
        assert index.embed_status(emb.model_id)["embedded"] == 8 and index.embed_status("other-model")["embedded"] == 0
        for bad in (5, b"test-hash-1", ["test-hash-1"]):
            with pytest.raises(UsageError, match="model_id must be a string"):
                index.embed_status(bad)


def test_a_changelog_entry_is_no_document_to_chunk_in_the_status(tiny_vault):
    """QA round 157-I F3: after every ``remember`` the status read "4/4 chunks embedded …, 1 documents to chunk, 0 chunk
    texts to embed (4 vectors stored are reused …; run: dreamdb embed refresh)", and the refresh only recorded the
    changelog entry (never embedded, by design). A changelog entry counts as chunked from the start: the status says
    up to date; a document to chunk is counted in words ("1 document to chunk")."""
    make_vault(tiny_vault, 2)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, emb)
        index.remember("Sleep debt is computed nightly")
        index.sync()
        st = store.embed_status(index.conn, emb.model_id)
        assert st["summary"] == "4/4 chunks embedded with hash test-hash-1, up to date", st["summary"]
        assert (st["documents"], st["chunked_documents"], st["unembedded_documents"], st["docs_pending"]) == (3, 3, 1, 0)
        assert store.refresh(index.conn, emb).embedded == 0
        assert store.embed_status(index.conn, emb.model_id) == st  # the refresh only recorded it
        write_doc(tiny_vault, "knowledge/doc0.md", f"---\nname: Doc 0\n---\n{para('c0x')}\n")
        index.remember("Recall syncs lazily")
        index.sync()
        st = store.embed_status(index.conn, emb.model_id)
        assert (st["documents"], st["chunked_documents"], st["unembedded_documents"], st["docs_pending"]) == (4, 3, 2, 1)
        assert ", 1 document to chunk, 0 chunk texts to embed (4 vectors stored are reused" in st["summary"], st["summary"]


def test_status_of_a_vault_never_chunked_says_no_vectors_yet(tiny_vault):
    """QA round 147-D F1: before the first ``embed refresh`` the summary read "0/0 chunks embedded with …, 3 documents
    to chunk, 0 chunk texts to embed (0 vectors stored are reused for unchanged texts; …)", as if done and empty. It
    now says there are no vectors yet and how many documents wait to be chunked and embedded; with chunks and no
    vector, no "0 vectors stored are reused"."""
    make_vault(tiny_vault, 3)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        st = store.embed_status(index.conn, emb.model_id, most_vectors=False, name="hash")
        assert (st["docs_pending"], st["chunks"], st["pending"], st["vectors"]) == (3, 0, 0, 0)
        assert st["summary"] == ("no vectors yet with hash test-hash-1: 3 documents to chunk and embed: hybrid recall"
                                 " falls back to BM25 until they are made (run: dreamdb embed refresh)")
        assert store.chunk_pending_documents(index.conn)[0] == 3  # chunked, not embedded
        write_doc(tiny_vault, "knowledge/doc3.md", f"---\nname: Doc 3\n---\n{para('c3x')}\n")
        index.sync()
        summary = store.embed_status(index.conn, emb.model_id, most_vectors=False, name="hash")["summary"]
        assert summary.startswith("0/6 chunks embedded with hash test-hash-1, 1 document to chunk, 6 chunk texts to"
                                  " embed (run: dreamdb embed refresh); none of this model's vectors yet"), summary
        assert "vectors stored" not in summary
        store.refresh(index.conn, emb)
        assert store.embed_status(index.conn, emb.model_id)["summary"].endswith("7/7 chunks embedded with hash"
                                                                                " test-hash-1, up to date")


class QueryHashEmbedder(HashEmbedder):
    """HashEmbedder that also embeds queries (for recall through the Index)."""

    def embed_queries(self, texts):
        return np.stack([self.vec(t) for t in texts])


def embedded_index(vault, n_docs: int, **kwargs):
    """An index of ``n_docs`` embedded documents whose recalls use a :class:`QueryHashEmbedder`: ``(index, embedder)``."""
    make_vault(vault, n_docs)
    emb = QueryHashEmbedder()
    index = dreamdb.open(vault, **kwargs)
    index.sync()
    store.refresh(index.conn, emb)
    index.embedder = lambda: emb
    return index, emb


def rebuilt_index_with_vectors(vault):
    """6 embedded documents, then a forced rebuild (chunks emptied, vectors kept); lazy refresh limit 2."""
    index, emb = embedded_index(vault, 6, lazy_refresh_max=2)
    index.sync(force=True)
    return index, emb


def test_an_empty_hybrid_result_gets_the_notes_bm25_gives(tiny_vault):
    """QA round 10: the notes explaining an empty result (here an unknown status) were BM25's only."""
    index, _emb = embedded_index(tiny_vault, 2)
    index.take_notes()
    for mode in ("hybrid", "dense", "rrf"):
        assert index.recall("a0x1", mode=mode, status="bogus", now="2026-08-18T00:00:00Z") == []
        assert any("no document has the status bogus" in n for n in index.take_notes()), mode


def test_take_notes_from_another_thread_while_a_hybrid_recall_reads_the_notes(tiny_vault):
    """QA round 155-C F1: take_notes() popped the notes without a lock while a hybrid recall without vectors
    iterated them (whether they held its note yet): ``RuntimeError: deque mutated during iteration`` from recall
    (3 in 30 s of two threads). The notes now have a lock of their own, and are iterated through a copy."""
    import threading

    make_vault(tiny_vault, 4)
    index = dreamdb.open(tiny_vault, lazy_refresh_max=1)
    index.sync()
    emb = QueryHashEmbedder()
    index.embedder = lambda: emb
    taken = []

    class Meanwhile(str):
        """A note whose reading lets another thread take the notes (as a switch to another thread there would)."""

        def startswith(self, *args):
            thread = threading.Thread(target=lambda: taken.extend(index.take_notes()))
            thread.start()
            thread.join()
            return str.startswith(self, *args)

    index.notes.extend([Meanwhile("an earlier note"), "another"])
    assert index.recall("a0x1", mode="hybrid")
    assert taken == ["an earlier note", "another"]
    notes = index.take_notes()
    assert len(notes) == 1 and notes[0].startswith("no dense results yet: no chunk has a vector"), notes


def test_the_hit_the_pin_guard_keeps_first_says_so_in_the_human_output(tiny_vault):
    """QA round 157-I F4: BM25's clear first, a changelog entry (no vector), kept first by the pin guard with its fused
    score, showed "1. changelog/… (rank 0.009836 …)" above "2. knowledge/… (rank 0.01593 …)" with no sign why. The
    line says it is pinned where a hit below it ranks higher; --json is unchanged (signals.fusion's +pin with
    --explain)."""
    from dreamdb import output
    from dreamdb.records import replace

    make_vault(tiny_vault, 3)
    write_doc(tiny_vault, "knowledge/tokens.md", f"---\nname: Tokens\n---\nOur tokens are kept short. {para('z', 60)}\n")
    index = dreamdb.open(tiny_vault)
    index.remember("Token rotation: tokens rotate every day, the rotation job runs nightly", summary="Token rotation")
    index.sync()
    emb = QueryHashEmbedder()
    store.refresh(index.conn, emb)
    index.embedder = lambda: emb
    hits = index.recall("token rotation", mode="hybrid")
    assert hits[0].type == "changelog" and hits[0].rank_score < hits[1].rank_score, hits
    lines = [line for line in output.hits_text(hits).splitlines() if line[:1].isdigit()]
    assert lines[0].startswith(f"1. {hits[0].doc_id}  (rank 0.009836 · pinned: BM25's clear first · bm25 "), lines
    assert not any("pinned" in line for line in lines[1:]), lines
    assert "pinned" not in json.dumps([h.as_dict() for h in hits])  # (--json as it was)
    assert index.recall("token rotation", mode="hybrid", explain=True)[0].signals["fusion"] == "rrf+pin"
    # a pinned hit that leads anyway needs no word
    assert "pinned" not in output.hits_text([replace(hits[0], rank_score=0.02), *hits[1:]])
    # (below the list's first, as another vault's pinned first in a merged list: not the list's clear first, 157-J F4)
    assert "pinned" not in output.hits_text([hits[1], hits[0], *hits[1:]])


def test_hybrid_query_after_a_rebuild_rechunks_and_reuses_vectors(tiny_vault):
    """QA repro: after a rebuild, hybrid recall used BM25 only ("… waiting to be embedded") until embed refresh."""
    index, emb = rebuilt_index_with_vectors(tiny_vault)
    assert store.pending(index.conn, emb.model_id) == 6 > index.lazy_refresh_max
    emb.calls.clear()
    hits = index.recall("a3x5 b3x7", mode="hybrid", explain=True)
    assert hits[0].doc_id == "knowledge/doc3" and all(h.signals["dense"] is not None for h in hits)
    assert not [n for n in index.take_notes() if "wait for embedding" in n]
    assert store.pending(index.conn, emb.model_id) == 0 and emb.calls == []  # nothing embedded again


def test_a_hybrid_query_over_a_vault_never_embedded_says_its_results_are_bm25s(tiny_vault):
    """QA round 38: with no vector at all, the note said the dense results were "partial"."""
    make_vault(tiny_vault, 4)
    emb = QueryHashEmbedder()
    index = dreamdb.open(tiny_vault, lazy_refresh_max=1)
    index.sync()
    index.embedder = lambda: emb
    hits = index.recall("a0x1", mode="hybrid")
    assert hits and emb.calls == [] and index.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 0
    notes = index.take_notes()
    assert any(n.startswith("no dense results yet: no chunk has a vector (8 chunk texts wait for embedding), so these"
                            " are BM25's results") for n in notes), notes
    # QA round 68 M1: dense mode too answers with BM25's hits, as the note says, not with nothing; QA round 83-A F5:
    # and so do hybrid and rrf, labelled bm25 with BM25's rankScores (they were labelled with the mode asked for,
    # their scores a fusion's of BM25 with nothing)
    bm25 = [(h.doc_id, h.rank_score, h.mode) for h in index.recall("a0x1", mode="bm25")]
    assert [(h.doc_id, h.rank_score, h.mode) for h in hits] == bm25 and bm25[0][1] > 1.0
    for mode in ("dense", "rrf"):
        assert [(h.doc_id, h.rank_score, h.mode) for h in index.recall("a0x1", mode=mode)] == bm25, mode
        notes = index.take_notes()
        assert sum(n.startswith("no dense results yet: no chunk has a vector") for n in notes) == 1, notes
    # vectors kept for documents an index rebuild left to chunk again: none answers yet (QA round 122-B F3: "partial")
    store.refresh(index.conn, emb)
    index.sync(force=True)
    assert index.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == 0
    assert index.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 8
    index.take_notes()
    holder = db.connect(index.index_path)  # (another writer holds the index: no chunking now)
    holder.execute("BEGIN IMMEDIATE")
    try:
        index.recall("a0x1", mode="hybrid")
    finally:
        holder.rollback()
        holder.close()
    notes = index.take_notes()
    assert any(n.startswith("no dense results yet: no chunk has a vector (4 documents to chunk wait for embedding)")
               for n in notes), notes


def test_dense_recall_after_another_processs_rebuild_answers_with_bm25s_hits_not_none(tiny_vault, monkeypatch):
    """QA round 145-B F1: after another process's ``sync --force`` (every document left to chunk again, the vectors
    kept), dense recall answered no hit at all: under that process's write lock with the note "these are BM25's
    results", and, when the rebuild came between the lazy refresh and the ranking, without a note. Whether any chunk
    has a vector is read in the ranking's snapshot; none: BM25 answers, with the note."""
    monkeypatch.chdir(tiny_vault.parent)  # (dreamdb finds the vault from here: its notes' commands need no --vault)
    index, emb = embedded_index(tiny_vault, 4, lock_timeout_ms=100)  # (its lazy work waits out a writer briefly)
    query = "a0x1 a1x2 a2x3"
    bm25 = [h.doc_id for h in index.recall(query, mode="bm25")]
    assert sorted(bm25) == ["knowledge/doc0", "knowledge/doc1", "knowledge/doc2"]
    dense = [(h.doc_id, h.mode) for h in index.recall(query, mode="dense")]
    assert len(dense) == 4 and {m for _, m in dense} == {"dense"}
    index.take_notes()
    other = dreamdb.open(tiny_vault)  # (its own connection: another process)
    other.sync(force=True)
    waiting = "no dense results yet: no chunk has a vector (4 documents to chunk wait for embedding), so these are" \
              " BM25's results; run: dreamdb embed refresh"
    holder = db.connect(index.index_path)  # another writer holds the index: no chunking now
    holder.execute("BEGIN IMMEDIATE")
    try:
        for mode in ("dense", "hybrid", "rrf"):
            hits = index.recall(query, mode=mode)
            assert [(h.doc_id, h.mode) for h in hits] == [(d, "bm25") for d in bm25], mode
            assert index.take_notes() == [waiting], mode
    finally:
        holder.rollback()
        holder.close()
    # the race: the refresh found nothing waiting, then the rebuild committed before the ranking's snapshot
    assert [(h.doc_id, h.mode) for h in index.recall(query, mode="dense")] == dense  # (chunked again)
    assert index.take_notes() == []
    refresh = index._lazy_refresh

    def rebuilt_meanwhile(e):
        left = refresh(e)
        other.sync(force=True)
        return left

    monkeypatch.setattr(index, "_lazy_refresh", rebuilt_meanwhile)
    hits = index.recall(query, mode="dense")
    assert [(h.doc_id, h.mode) for h in hits] == [(d, "bm25") for d in bm25]
    assert index.take_notes() == [waiting]


def test_a_hybrid_query_over_changelog_entries_only_says_they_get_no_vectors(tiny_vault):
    """QA round 90-B F12: in a vault of changelog entries only, hybrid recall said "no dense results yet … run:
    dreamdb embed refresh", and still did after the refresh ran: changelog entries get no vectors, by design."""
    import json

    from tests.conftest import write_doc

    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-01-01", "type": "fix", "scope": "sleep", "summary": "sleep debt fixed"}]))
    emb = QueryHashEmbedder()
    index = dreamdb.open(tiny_vault)
    index.embedder = lambda: emb
    index.refresh_embeddings()
    hits = index.recall("sleep debt", mode="hybrid")
    assert [h.doc_id for h in hits] == ["changelog/2026-01-01-sleep-1"] and emb.calls == []
    assert index.take_notes() == ["no dense results: changelog entries get no vectors (they are left to BM25), and the"
                                  " vault has no other documents, so these are BM25's results"]
    # a vault of no documents at all is said to be one (QA round 104-B F7: the changelog was blamed)
    (tiny_vault / "core" / "CHANGELOG.json").unlink()
    assert index.recall("sleep debt", mode="hybrid") == []
    assert "no dense results: the index holds no documents" in index.take_notes()


def test_a_hybrid_query_over_notes_without_text_of_their_own_says_they_get_no_chunk(tiny_vault):
    """QA round 157-G F3: in a vault of notes of a title alone (an empty body, encoded data only), hybrid recall said
    "no dense results yet: no text has a vector … run: dreamdb embed refresh", and still did after the refresh ran
    (``status``: "0/0 chunks embedded, up to date"): such a note gets no chunk, by design. The note says why."""
    import json

    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/sleep.md", "---\nname: Sleep debt\n---\n")
    emb = QueryHashEmbedder()
    index = dreamdb.open(tiny_vault)
    index.embedder = lambda: emb
    index.refresh_embeddings()
    assert [h.doc_id for h in index.recall("sleep debt", mode="hybrid")] == ["knowledge/sleep"] and emb.calls == []
    assert index.take_notes() == ["no dense results: the vault's one document holds no text of its own to embed (a"
                                  " title alone, an empty body, or encoded data only; BM25 finds it by its name), so"
                                  " these are BM25's results"]
    key = __import__("base64").b64encode(bytes(range(256)) * 3).decode()
    write_doc(tiny_vault, "knowledge/key.md", f"---\nname: Sleep key\n---\n{key}\n")  # (a pasted key alone)
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-01-01", "type": "fix", "scope": "sleep", "summary": "sleep debt fixed"}]))
    index.refresh_embeddings()
    assert len(index.recall("sleep", mode="hybrid")) == 3
    assert index.take_notes() == ["no dense results: none of the vault's 2 documents besides changelog entries (which"
                                  " get no vectors) holds text of its own to embed (a title alone, an empty body, or"
                                  " encoded data only; BM25 finds them by their names), so these are BM25's results"]
    assert store.nothing_to_embed(index.conn) is not None
    write_doc(tiny_vault, "knowledge/text.md", "---\nname: Text\n---\nSleep debt adds up night by night.\n")
    index.sync()
    assert store.nothing_to_embed(index.conn) is None  # (a document to chunk: a refresh has work)
    store.chunk_pending_documents(index.conn)
    assert store.nothing_to_embed(index.conn) is None  # (a chunk to embed)


def test_a_hybrid_query_never_embeds_more_than_the_lazy_limit_for_one_large_changed_note(tiny_vault, monkeypatch):
    """QA round 20: a note waiting to be chunked counted as 1 pending item, so a recall (and the prompt hook)
    embedded all its chunks: 73 s for a rewritten 400-section note. Chunk first, then count chunk texts."""
    monkeypatch.chdir(tiny_vault.parent)  # (dreamdb finds the vault from here: its notes' commands need no --vault)
    index, emb = embedded_index(tiny_vault, 2, lazy_refresh_max=3)
    big = "\n\n".join(f"# Section {i}\n\n{para(f'big{i}x')}" for i in range(8))  # 8 chunks
    write_doc(tiny_vault, "knowledge/big.md", f"---\nname: Big\n---\n{big}\n")
    emb.calls.clear()
    hits = index.recall("a0x1 big3x5", mode="hybrid")
    assert hits and emb.calls == []  # nothing embedded inside the query
    assert "dense results are partial: 8 chunk texts still wait for embedding; run: dreamdb embed refresh" \
        in index.take_notes()
    write_doc(tiny_vault, "knowledge/small.md", f"---\nname: Small\n---\n{para('small')}\n")
    store.refresh(index.conn, emb)  # (the large note's 8 texts, and the small one's)
    write_doc(tiny_vault, "knowledge/small.md", f"---\nname: Small\n---\n{para('tiny')}\n")
    emb.calls.clear()
    assert index.recall("tiny3", mode="hybrid")[0].doc_id == "knowledge/small"
    assert len(emb.calls) == 1 and not [n for n in index.take_notes() if "waiting" in n]  # within the limit: embedded


def test_notes_on_texts_waiting_say_a_refresh_is_under_way_while_another_process_runs_one(tiny_vault, monkeypatch):
    """QA round 147-D F2: while ``embed refresh`` ran in another process, a hybrid recall said "dense results are
    partial: … still wait for embedding; run: dreamdb embed refresh", telling the user to start a second one (which
    would only wait for it). While another process holds the refresh lock the notes say a refresh is under way."""
    monkeypatch.chdir(tiny_vault.parent)  # (dreamdb finds the vault from here: its notes' commands need no --vault)
    index, emb = embedded_index(tiny_vault, 2, lazy_refresh_max=3)
    big = "\n\n".join(f"# Section {i}\n\n{para(f'big{i}x')}" for i in range(8))  # 8 chunks: more than the limit
    write_doc(tiny_vault, "knowledge/big.md", f"---\nname: Big\n---\n{big}\n")
    under_way = ("another dreamdb process is refreshing the embeddings now (dreamdb embed status shows its progress;"
                 " the texts it embeds serve the next queries)")
    emb.calls.clear()
    lock = str(index.index_path.parent / store.LOCK_FILE_NAME)
    holder = subprocess.Popen(  # (another process's refresh: it holds the lock until its stdin closes)
        [sys.executable, "-c", "import sys; from filelock import FileLock; lock = FileLock(sys.argv[1]); lock.acquire();"
         " print('held', flush=True); sys.stdin.read()", lock], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        assert store.refresh_running(index.conn)
        assert index.recall("a0x1 big3x5", mode="hybrid") and emb.calls == []
        assert f"dense results are partial: 8 chunk texts still wait for embedding; {under_way}" in index.take_notes()
        # with no vector at all yet (the first refresh under way), the same
        index.conn.execute("DELETE FROM embeddings")
        index.recall("a0x1", mode="hybrid")
        assert ("no dense results yet: no chunk has a vector (12 chunk texts wait for embedding), so these are BM25's"
                f" results; {under_way}") in index.take_notes()
    finally:
        holder.communicate("")
    assert not store.refresh_running(index.conn)  # (the probe let go of the lock: it is free again)
    index.recall("a0x1 big3x5", mode="hybrid")
    assert ("no dense results yet: no chunk has a vector (12 chunk texts wait for embedding), so these are BM25's"
            " results; run: dreamdb embed refresh") in index.take_notes()
    index.close()


def test_a_refresh_starting_while_a_probe_holds_the_lock_neither_waits_nor_fails(tiny_vault, monkeypatch):
    """QA round 147-I F1: :func:`store.refresh_running` (a recall's probe) takes the refresh lock for a moment to tell
    whether a refresh holds it; a refresh starting in that moment said "Another dreamdb process is refreshing…,
    waiting" (its ``on_wait``), or with no time to wait raised ``LockTimeout``, though none ran. A refresh that finds
    the lock taken gives it :data:`store.PROBE_GRACE_SECONDS` first. Here a holder lets go after 0.1 s, within a
    grace made 5 s, so that a loaded machine cannot make the test fail."""
    import threading

    from filelock import FileLock

    index, _emb = embedded_index(tiny_vault, 2)
    monkeypatch.setattr(store, "PROBE_GRACE_SECONDS", 5.0, raising=False)
    held, go = threading.Event(), threading.Event()

    def probe():
        lock = FileLock(str(index.index_path.parent / store.LOCK_FILE_NAME), thread_local=False)
        lock.acquire()
        held.set()
        go.wait(10)
        time.sleep(0.1)
        lock.release()

    for timeout in (0, None):
        waits = []
        t = threading.Thread(target=probe)
        t.start()
        assert held.wait(10)
        go.set()
        with store._RefreshLock(index.conn, timeout, waits.append):  # (no LockTimeout for 0)
            assert waits == []  # (no word of another refresh)
        t.join(10)
        held.clear()
        go.clear()
    index.close()


def test_lazy_rechunk_does_not_wait_out_another_writer(tiny_vault):
    """QA repro: a hybrid query after a rebuild waited 10 s for another writer's lock, then failed with exit 5."""
    index, _emb = rebuilt_index_with_vectors(tiny_vault)
    holder = db.connect(index.index_path)
    holder.execute("BEGIN IMMEDIATE")  # another process's long sync or refresh
    try:
        t0 = time.perf_counter()
        hits = index.recall("a3x5 b3x7", mode="hybrid")
        waited = time.perf_counter() - t0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert hits[0].doc_id == "knowledge/doc3"  # answered (BM25 carries it), not a lock error
    assert waited < 8  # at most the lazy wait of 1.5 s for the sync and for the chunking, not the 10 s timeout
    assert [n for n in index.take_notes() if "wait for embedding" in n]
    assert index.conn.execute("PRAGMA busy_timeout").fetchone()[0] == index.lock_timeout_ms


def test_a_hybrid_read_waits_for_another_writers_lock_once_not_for_each_lazy_write(tiny_vault):
    """QA round 145-J F2: with notes waiting to be chunked and an edit, under another process's write lock, a hybrid
    recall waited 1.5 s for its sync and again for the chunking, the embedding and the languages (6.6 s), and the
    prompt hook, whose own ``sync()`` met the lock, 1.5 s more for each (5-6.7 s): the README promises 1.5 s."""
    index, emb = embedded_index(tiny_vault, 2)
    for i in range(3):  # notes synced, not chunked: they wait
        write_doc(tiny_vault, f"knowledge/probe{i}.md", f"---\nname: Probe {i}\n---\n{para(f'probe{i}x')}\n")
    index.sync()
    assert store.documents_to_chunk(index.conn) == 3
    hook = dreamdb.open(tiny_vault, auto_sync=False, lock_timeout_ms=1500)  # (as the prompt hook opens it)
    hook.embedder = lambda: emb
    write_doc(tiny_vault, "knowledge/doc0.md", f"---\nname: Doc 0\n---\n{para('edited')}\n")  # an edit: the sync waits
    holder = db.connect(index.index_path)
    holder.execute("BEGIN IMMEDIATE")  # another process's long sync or refresh
    try:
        t0 = time.perf_counter()
        hits = index.recall("probe1x3 a1x2", mode="hybrid")
        recall_took = time.perf_counter() - t0
        t0 = time.perf_counter()
        with pytest.raises(dreamdb.errors.LockTimeout):
            hook.sync()
        sync_took = time.perf_counter() - t0
        t0 = time.perf_counter()
        hook_hits = hook.recall("probe1x3 a1x2", mode="hybrid")
        hook_took = time.perf_counter() - t0
        t0 = time.perf_counter()
        index.recall("probe1x3 a1x2", mode="dense")
        dense_took = time.perf_counter() - t0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert hits and hook_hits  # answered from the index as it is (BM25 carries the notes waiting)
    assert 1.4 < recall_took < 2.3, recall_took  # the sync's 1.5 s, not 1.5 s a lazy write more
    assert 1.4 < dense_took < 2.3, dense_took
    assert 1.4 < sync_took < 2.0 and hook_took < 0.5, (sync_took, hook_took)  # the hook's sync waited: its recall not
    assert store.documents_to_chunk(index.conn) == 3  # nothing written under the lock…
    assert any("wait" in n for n in index.take_notes())
    assert index.conn.execute("PRAGMA busy_timeout").fetchone()[0] == index.lock_timeout_ms
    assert hook.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1500
    hook.recall("probe1x3 a1x2", mode="hybrid")  # …and once the lock is gone, the next read does the lazy writes
    assert store.documents_to_chunk(hook.conn) == 0 and store.pending(hook.conn, emb.model_id) == 0


def test_force_reembeds_everything_for_this_model_only(tiny_vault):
    make_vault(tiny_vault, 2)
    a, b = HashEmbedder("model-a"), HashEmbedder("model-b")
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, a)
        store.refresh(index.conn, b)
        a.calls.clear()
        r = store.refresh(index.conn, a, force=True)
        assert r.embedded == 4 and len(a.calls) == 4
        assert index.conn.execute("SELECT COUNT(*) FROM embeddings WHERE model_id = 'model-b'").fetchone()[0] == 4


def test_interrupted_refresh_keeps_finished_batches_and_resumes(tiny_vault):
    make_vault(tiny_vault, 6)  # 12 chunks
    emb = HashEmbedder()

    class Stop(Exception):
        pass

    def progress(done, total):
        if done >= 8:  # after two batches of 4
            raise Stop

    with open_synced(tiny_vault) as index:
        with pytest.raises(Stop):
            store.refresh(index.conn, emb, batch_size=4, progress=progress)
        assert store.embed_status(index.conn, emb.model_id)["embedded"] == 8
        assert store.pending(index.conn, emb.model_id) == 4
        emb.calls.clear()
        r = store.refresh(index.conn, emb, batch_size=4)
        assert r.embedded == 4 and len(emb.calls) == 4 and r.pending == 0
        assert index.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


class FakeClock:
    """A clock (s) that only moves when an embedder says so: a refresh's time budget without waiting."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class SlowHashEmbedder(QueryHashEmbedder):
    """QueryHashEmbedder whose every text takes ``seconds`` of a :class:`FakeClock`."""

    def __init__(self, clock: FakeClock, seconds: float) -> None:
        super().__init__()
        self.clock, self.seconds = clock, seconds

    def embed_passages(self, texts):
        self.clock.now += self.seconds * len(texts)
        return super().embed_passages(texts)


def test_a_refresh_with_a_time_budget_stops_between_batches_and_keeps_what_it_embedded(tiny_vault, monkeypatch):
    """QA round 57: the refresh before a hybrid query had no time limit (a prompt hook call took 20 s)."""
    make_vault(tiny_vault, 6)  # 12 chunk texts
    clock = FakeClock()
    monkeypatch.setattr(store, "_clock", clock)
    emb = SlowHashEmbedder(clock, 1.0)
    with open_synced(tiny_vault) as index:
        r = store.refresh(index.conn, emb, batch_size=2, time_budget=0)  # the first batch runs, then it stops
        assert (r.embedded, r.pending, len(emb.calls)) == (2, 10, 2)
        assert store.pending(index.conn, emb.model_id) == 10
        assert store.embed_status(index.conn, emb.model_id)["embedded"] == 2
        r = store.refresh(index.conn, emb, batch_size=2, time_budget=4.0)  # 2 s a batch: 4 s reached, no third
        assert (r.embedded, r.pending, len(emb.calls)) == (4, 6, 6)
        r = store.refresh(index.conn, emb, batch_size=2, time_budget=3.0)  # the second batch ends past it
        assert (r.embedded, r.pending, len(emb.calls)) == (4, 2, 10)
        r = store.refresh(index.conn, emb, batch_size=2)  # no budget: the rest
        assert (r.embedded, r.pending) == (2, 0)
        assert len(emb.calls) == len(set(emb.calls)) == 12  # nothing embedded twice


def test_a_hybrid_query_embeds_pending_chunks_for_its_time_budget_only(tiny_vault, monkeypatch):
    """QA round 57: a hybrid query embedded up to 64 pending chunk texts before answering, however long they
    took (13 s for the chunks of 20 edited notes); now it stops after ``lazy_refresh_seconds`` and says what waits."""
    monkeypatch.chdir(tiny_vault.parent)  # (dreamdb finds the vault from here: its notes' commands need no --vault)
    index, _ = embedded_index(tiny_vault, 2)
    clock = FakeClock()
    monkeypatch.setattr(store, "_clock", clock)
    emb = SlowHashEmbedder(clock, 0.75)  # 0.75 s a text
    index.embedder = lambda: emb
    assert index.lazy_refresh_seconds == dreamdb.api.LAZY_REFRESH_SECONDS == 2.0
    for i in range(2, 6):  # 8 new chunk texts, within the count limit of 64
        write_doc(tiny_vault, f"knowledge/doc{i}.md",
                  f"---\nname: Doc {i}\n---\n# A\n\n{para(f'a{i}x')}\n\n# B\n\n{para(f'b{i}x')}\n")
    hits = index.recall("a0x1", mode="hybrid")
    assert hits[0].doc_id == "knowledge/doc0" and len(emb.calls) == 3  # 0.75, 1.5, 2.25 s: the third ends past 2 s
    assert "dense results are partial: 5 chunk texts still wait for embedding; run: dreamdb embed refresh" \
        in index.take_notes()
    assert store.pending(index.conn, emb.model_id) == 5  # the 3 embedded were kept
    index.recall("a0x1", mode="hybrid")
    assert len(emb.calls) == 6 and len(set(emb.calls)) == 6
    assert "dense results are partial: 2 chunk texts still wait for embedding; run: dreamdb embed refresh" \
        in index.take_notes()
    index.recall("a0x1", mode="hybrid")  # the last two
    assert len(emb.calls) == 8 and store.pending(index.conn, emb.model_id) == 0
    assert not [n for n in index.take_notes() if "for embedding" in n]
    index.close()
    index = dreamdb.open(tiny_vault, lazy_refresh_seconds=0)  # a budget of 0: one text a query
    index.embedder = lambda: emb
    write_doc(tiny_vault, "knowledge/doc0.md", f"---\nname: Doc 0\n---\n# A\n\n{para('c0x')}\n\n# B\n\n{para('d0x')}\n")
    index.recall("c0x1", mode="hybrid")
    assert len(emb.calls) == 9 and store.pending(index.conn, emb.model_id) == 1
    for bad in (-1, "2", True, float("nan"), float("inf")):
        with pytest.raises(dreamdb.errors.UsageError, match="lazy_refresh_seconds must be a number of seconds"):
            dreamdb.open(tiny_vault, lazy_refresh_seconds=bad)
    index.close()


def test_a_hybrid_query_does_not_wait_for_another_processs_refresh_past_its_budget(tiny_vault, monkeypatch):
    """QA round 57: the refresh before a hybrid query waited for another process's refresh as long as it took."""
    monkeypatch.chdir(tiny_vault.parent)  # (dreamdb finds the vault from here: its notes' commands need no --vault)
    from filelock import FileLock

    index, emb = embedded_index(tiny_vault, 2, lazy_refresh_seconds=0)
    write_doc(tiny_vault, "knowledge/doc5.md", f"---\nname: Doc 5\n---\n{para('e5x')}\n")
    emb.calls.clear()
    with FileLock(str(index.index_path.parent / store.LOCK_FILE_NAME)):  # (another process's `embed refresh`)
        hits = index.recall("e5x3", mode="hybrid")
    assert hits[0].doc_id == "knowledge/doc5" and emb.calls == []
    # (not "run: dreamdb embed refresh" while one runs: QA round 147-D F2)
    assert ("dense results are partial: 1 chunk text still waits for embedding; another dreamdb process is refreshing"
            " the embeddings now (dreamdb embed status shows its progress; the texts it embeds serve the next queries)"
            in index.take_notes())
    index.close()


def test_killed_refresh_process_resumes(tiny_vault):
    make_vault(tiny_vault, 8)  # 16 chunks
    with open_synced(tiny_vault):
        pass
    code = _worker_code(tiny_vault, delay=0.3, batch=2, out=None)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    for line in proc.stdout:  # wait until some batches are committed
        if line.startswith("progress") and int(line.split()[1]) >= 6:
            break
    proc.kill()
    proc.wait(timeout=30)
    emb = HashEmbedder()
    with dreamdb.open(tiny_vault) as index:
        done = store.embed_status(index.conn, emb.model_id)["embedded"]
        assert 6 <= done < 16
        r = store.refresh(index.conn, emb)
        assert r.embedded == 16 - done and len(emb.calls) == 16 - done
        assert index.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _worker_code(vault, *, delay: float, batch: int, out) -> str:
    return textwrap.dedent(f"""
        import json, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        import dreamdb
        from dreamdb.embeddings import store
        from tests.test_embed_store import HashEmbedder

        class Slow(HashEmbedder):
            def embed_passages(self, texts):
                time.sleep({delay})
                return super().embed_passages(texts)

        emb = Slow()
        with dreamdb.open({str(vault)!r}) as index:
            r = store.refresh(index.conn, emb, batch_size={batch},
                              progress=lambda d, t: print("progress", d, t, flush=True))
        print("report", json.dumps(r.as_dict()), len(emb.calls), flush=True)
    """)


def test_two_refreshes_in_parallel_processes(tiny_vault):
    make_vault(tiny_vault, 6)  # 12 chunks
    with open_synced(tiny_vault):
        pass
    code = _worker_code(tiny_vault, delay=0.05, batch=3, out=None)
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        line = [l for l in out.splitlines() if l.startswith("report")][0]
        reports.append((json.loads(line.split(" ", 1)[1].rsplit(" ", 1)[0]), int(line.rsplit(" ", 1)[1])))
    assert sorted(r["embedded"] for r, _calls in reports) == [0, 12]
    assert sum(calls for _r, calls in reports) == 12  # nothing embedded twice
    with dreamdb.open(tiny_vault) as index:
        c = index.conn
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert c.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 12
        assert c.execute("SELECT COUNT(*) FROM vec_embeddings").fetchone()[0] == 12
        assert c.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == 12


def test_dense_search_never_compares_other_models(tiny_vault):
    make_vault(tiny_vault, 4)
    a, b = HashEmbedder("model-a"), HashEmbedder("model-b")
    with open_synced(tiny_vault) as index:
        c = index.conn
        store.refresh(c, a)
        # model-b vectors: only for doc0, and equal to the query
        doc0 = c.execute("SELECT id FROM documents WHERE doc_id = 'knowledge/doc0'").fetchone()[0]
        text = c.execute("SELECT text FROM chunks WHERE doc = ? AND ordinal = 0", (doc0,)).fetchone()[0]
        store.refresh(c, b)
        q = HashEmbedder.vec(text)
        hits_a = store.dense_search(c, q, "model-a", 10)
        assert hits_a[0][0] == doc0 and abs(hits_a[0][1] - 1.0) < 1e-5 and len(hits_a) == 4
        # a model with no vectors returns nothing, never model-a's vectors
        assert store.dense_search(c, q, "model-unknown", 5) == []
        # delete model-a's vectors: model-b's are not returned for model-a
        with db.write_transaction(c):
            store._delete_vectors(c, [r[0] for r in c.execute("SELECT id FROM embeddings WHERE model_id = 'model-a'")])
        assert store.dense_search(c, q, "model-a", 5) == []
        assert store.dense_search(c, q, "model-b", 1)[0][0] == doc0


@contextlib.contextmanager
def _embedded(vault, n: int):
    """An index of :func:`make_vault` ``(vault, n)``, synced and embedded by a HashEmbedder:
    ``(connection, embedder, {doc_id: rowid})``."""
    make_vault(vault, n)
    emb = HashEmbedder()
    with open_synced(vault) as index:
        store.refresh(index.conn, emb)
        yield index.conn, emb, dict(index.conn.execute("SELECT doc_id, id FROM documents"))


def _chunk_text(c, doc: int, ordinal: int) -> str:
    return c.execute("SELECT text FROM chunks WHERE doc = ? AND ordinal = ?", (doc, ordinal)).fetchone()[0]


def test_dense_search_scores_doc_by_best_chunk_and_filters(tiny_vault):
    with _embedded(tiny_vault, 5) as (c, emb, ids):
        q = HashEmbedder.vec(_chunk_text(c, ids["knowledge/doc3"], 1))
        hits = store.dense_search(c, q, emb.model_id, 5)
        assert hits[0][0] == ids["knowledge/doc3"] and hits[0][1] > 0.9999
        assert [d for d, _s in hits] == [d for d, _s in store.dense_search_numpy(c, q, emb.model_id, 5)]
        assert all(hits[i][1] >= hits[i + 1][1] for i in range(len(hits) - 1))
        allowed = {ids["knowledge/doc1"], ids["knowledge/doc4"]}
        got = store.dense_search(c, q, emb.model_id, 5, allowed_docs=allowed)
        assert {d for d, _s in got} == allowed
        assert store.dense_search(c, q, emb.model_id, 5, allowed_docs=set()) == []
        vecs = store.doc_chunk_vectors(c, [ids["knowledge/doc3"]], emb.model_id)
        assert vecs[ids["knowledge/doc3"]].shape == (2, 384)
        with pytest.raises(dreamdb.errors.UsageError):
            store.dense_search(c, np.zeros(10, np.float32), emb.model_id, 5)


def test_dense_search_skips_a_vector_with_no_direction(tiny_vault):
    """QA round 62 M2: sqlite-vec's cosine distance to an all-zero vector is NULL, and the search failed on it
    (``1.0 - None``) with an internal error; such a vector is no similarity, and the others are still ranked."""
    with _embedded(tiny_vault, 4) as (c, emb, ids):
        text = _chunk_text(c, ids["knowledge/doc2"], 0)
        zeroed = c.execute("SELECT e.id FROM embeddings e JOIN chunks k ON k.content_hash = e.content_hash"
                           " WHERE k.doc = ? AND e.model_id = ?", (ids["knowledge/doc1"], emb.model_id)).fetchall()
        with db.write_transaction(c):
            for (rowid,) in zeroed:
                c.execute("UPDATE vec_embeddings SET embedding = ? WHERE rowid = ?", (np.zeros(384, np.float32).tobytes(), rowid))
        hits = store.dense_search(c, HashEmbedder.vec(text), emb.model_id, 10)
        assert hits[0][0] == ids["knowledge/doc2"] and abs(hits[0][1] - 1.0) < 1e-5
        assert ids["knowledge/doc1"] not in {d for d, _s in hits} and len(hits) == 3


def test_a_chunk_has_one_dense_score_however_it_is_found(tiny_vault, monkeypatch):
    """QA round 144-F F2: the KNN scored a chunk by sqlite-vec's cosine, a filter's exact path (and the centred
    languages scored beforehand) by numpy's product, which differed in the last float32 digits and by the rows scored
    beside it: a filter that removed nothing moved a note's dense score (up to 9·10⁻⁷, enough to swap two notes), and
    a vector with no direction, which the KNN leaves out, scored 0. Every path scores a chunk as the KNN does."""
    with _embedded(tiny_vault, 12) as (c, emb, ids):
        q = HashEmbedder.vec("a query near none of them")
        everything = store.dense_search(c, q, emb.model_id, 12)
        assert len(everything) == 12
        assert store.dense_search(c, q, emb.model_id, 12, allowed_docs=set(ids.values())) == everything
        for doc, score in everything:
            assert store.dense_search(c, q, emb.model_id, 1, allowed_docs={doc}) == [(doc, score)]
        baseline = store.dense_search_numpy(c, q, emb.model_id, 12)  # (numpy's products: the last digits differ)
        assert [s for _d, s in baseline] == pytest.approx([s for _d, s in everything], abs=1e-5)
        rows = [r[0] for r in c.execute("SELECT id FROM embeddings WHERE model_id = ? ORDER BY id", (emb.model_id,))]
        with db.write_transaction(c):
            c.executemany("UPDATE embeddings SET lang = 'xx' WHERE id = ?", [(r,) for r in rows[::3]])
        adjust = {"xx": (1.5, -0.2)}
        centred = store.dense_search(c, q, emb.model_id, 12, lang_adjust=adjust)  # its chunks scored beforehand
        assert centred != everything
        with monkeypatch.context() as m:
            m.setattr(store, "EXACT_MAX_CHUNKS", 0)  # by the KNN alone, its bound widened
            assert store.dense_search(c, q, emb.model_id, 12, lang_adjust=adjust) == centred
        assert store.dense_search(c, q, emb.model_id, 12, allowed_docs=set(ids.values()), lang_adjust=adjust) == centred
        with db.write_transaction(c):
            c.execute("UPDATE vec_embeddings SET embedding = ? WHERE rowid = ?", (np.zeros(384, np.float32).tobytes(), rows[0]))
        plain = store.dense_search(c, q, emb.model_id, 12)
        assert store.dense_search(c, q, emb.model_id, 12, allowed_docs=set(ids.values())) == plain
        assert 0.0 not in {s for _d, s in plain}


def test_pending_is_cheap(real_index):
    c = real_index.conn
    store.chunk_pending_documents(c)
    store.pending(c, "any")
    t0 = time.perf_counter()
    for _ in range(20):
        store.pending(c, "any")
    ms = (time.perf_counter() - t0) / 20 * 1000
    assert ms < 20, f"pending() took {ms:.1f} ms on the real vault"


def test_status_without_vector_tables(tmp_path):
    conn = db.connect(tmp_path / "plain.db")
    conn.execute("CREATE TABLE documents (id INTEGER PRIMARY KEY)")
    assert store.embed_status(conn)["available"] is False
    with pytest.raises(dreamdb.errors.DriverError):
        store.pending(conn, "m")


def test_migration_skipped_without_vec(tmp_path, monkeypatch):
    from dreamdb.store import migrations

    monkeypatch.setattr(db, "CAN_LOAD_EXTENSIONS", False)
    conn = db.connect(tmp_path / "i.db")
    applied = migrations.migrate(conn)
    assert 2 not in applied and 2 in migrations.pending(conn)
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks'").fetchone() is None
    monkeypatch.setattr(db, "CAN_LOAD_EXTENSIONS", True)
    assert 2 in migrations.migrate(conn) and migrations.pending(conn) == []
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vec_embeddings'").fetchone()


# ------------------------------------------------------------- real model


PARAPHRASES = {
    "knowledge/freeze-and-receipt-delivery": "after an artifact passes its last check, lock it and never change it; ship a copy of the exact bytes and validate that copy",
    "knowledge/git-pinned-evidence": "statements about where code lives go stale, so anchor each to a file path and a full commit hash and verify them",
    "knowledge/diagnostic-repair-loop": "a checker that only says invalid makes the agent guess; report each failure as a structured diagnosis it can act on",
    "knowledge/canonical-form-delta": "before comparing two structured documents normalise both into one deterministic form so key order and URL spelling do not hide the real change",
    "knowledge/forward-compatible-field-cast": "read a model field that does not exist yet through a typed cast with a fallback so the code works now and upgrades later",
    "knowledge/hook-delivered-must-not-miss-rules": "rules that must never be missed belong in the hook itself, not only in the skill text",
    "knowledge/pid-lockfile-concurrent-json": "serialise concurrent command line invocations writing shared JSON state with exclusive PID lock files",
    "knowledge/per-session-live-state-files": "live progress of agent runs shown in the dashboard has to be stored in one file per session",
    "knowledge/test-isolation-injectable-home": "keep tests that touch the home directory away from the developer's real files by injecting the home path",
    "knowledge/shared-local-config-split": "split application settings into a team file kept in version control and a personal local file",
    "knowledge/lean-task-authoring-pattern": "tasks get sentence style names instead of slugs and every creation requires a reason why",
    "knowledge/graphify-coexistence-decision": "how the tool works alongside code graph tools: read-only detection and routing exploration to them",
}


@pytest.mark.model
def test_real_refresh_report(embedded_subset, embedder, tmp_path):
    vault = copy_vault(embedded_subset, tmp_path)
    with dreamdb.open(vault) as index:
        index.sync()
        c = index.conn
        st = store.embed_status(c, embedder.model_id)
        assert st["chunks"] >= 40 and st["embedded"] == st["chunks"] and st["pending"] == 0
        t0 = time.perf_counter()
        r = store.refresh(c, embedder)
        assert (r.embedded, r.chunked_docs, r.pruned) == (0, 0, 0)
        assert (time.perf_counter() - t0) * 1000 < 200
        # edit one section of a real document: only its changed chunk is embedded
        p = vault / "knowledge/patterns/git-pinned-evidence.md"
        text = p.read_text(encoding="utf-8")
        chunks_before = c.execute("SELECT COUNT(*) FROM chunks c JOIN documents d ON d.id = c.doc "
                                  "WHERE d.doc_id = 'knowledge/git-pinned-evidence'").fetchone()[0]
        assert chunks_before >= 2
        p.write_text(text.rstrip() + "\n\nOne more sentence about verifying pinned commit evidence.\n", encoding="utf-8")
        index.sync()
        r = store.refresh(c, embedder)
        assert r.chunked_docs == 1 and r.embedded == 1 and r.reused == chunks_before - 1
        assert store.pending(c, embedder.model_id) == 0


@pytest.mark.model
def test_dense_search_finds_paraphrased_descriptions(embedded_subset, embedder):
    with dreamdb.open(embedded_subset, auto_sync=False) as index:
        c = index.conn
        ids = dict(c.execute("SELECT doc_id, id FROM documents"))
        qs = embedder.embed_queries(list(PARAPHRASES.values()))
        ranks = {}
        for (doc_id, _text), q in zip(PARAPHRASES.items(), qs):
            hits = [d for d, _s in store.dense_search(c, q, embedder.model_id, 10)]
            assert hits == [d for d, _s in store.dense_search_numpy(c, q, embedder.model_id, 10)]
            ranks[doc_id] = hits.index(ids[doc_id]) + 1 if ids[doc_id] in hits else None
        top3 = sum(1 for r in ranks.values() if r is not None and r <= 3)
        print(f"\nparaphrase ranks: {ranks}")
        assert top3 >= 0.75 * len(PARAPHRASES), ranks


def test_compact_gives_back_the_space_of_deleted_vectors(tiny_vault):
    make_vault(tiny_vault, 560)  # 1,120 chunks: sqlite-vec allocates vectors 1,024 at a time
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, emb)
        for i in range(60, 560):
            (tiny_vault / "knowledge" / f"doc{i}.md").unlink()
        index.sync()
        assert store.refresh(index.conn, emb).pruned == 1000
        c = index.conn
        q = HashEmbedder.vec(c.execute("SELECT text FROM chunks ORDER BY id LIMIT 1").fetchone()[0])
        before_hits = store.dense_search(c, q, emb.model_id, 10)
        ids_before = sorted(r[0] for r in c.execute("SELECT id FROM embeddings"))
        r = store.compact(c)
        assert r["vectors"] == 120 and r["bytes_after"] < r["bytes_before"] - 1024 * 384 * 4
        assert sorted(r[0] for r in c.execute("SELECT rowid FROM vec_embeddings")) == ids_before
        assert store.dense_search(c, q, emb.model_id, 10) == before_hits
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert store.refresh(index.conn, emb).embedded == 0  # nothing to redo
    p = subprocess.run([sys.executable, "-m", "dreamdb", "embed", "compact", "--vault", str(tiny_vault), "--json"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["vectors"] == 120 and out["bytes_after"] <= out["bytes_before"] and out["checkpointed"] is True
    # (QA round 79 F6: with another process reading, the compacted pages stay in the WAL: said, not a silent growth)
    from dreamdb.store import connect as db

    reader = db.connect(tiny_vault / ".dreamdb" / "index.db")
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM documents").fetchone()
    try:
        p = subprocess.run([sys.executable, "-m", "dreamdb", "embed", "compact", "--vault", str(tiny_vault)],
                           capture_output=True, text=True, cwd=ROOT, timeout=120)
    finally:
        reader.rollback()
        reader.close()
    assert p.returncode == 0 and "another process is reading the index" in p.stderr, p.stderr


def _stop_a_forced_refresh_after_one_batch(index, emb) -> None:
    """Run ``refresh(force=True)`` in batches of 4 and stop it (an exception from its progress callback) once the first
    batch is stored: the state a killed or running ``--force`` leaves in the index."""
    class Stop(Exception):
        pass

    def progress(done, total):
        if done >= 4:
            raise Stop

    with pytest.raises(Stop):
        store.refresh(index.conn, emb, force=True, batch_size=4, progress=progress)


def test_interrupted_forced_refresh_leaves_every_text_with_a_vector(tiny_vault):
    """--force replaces each text's vector in the transaction that stores the new one: stopped halfway,
    every chunk text still has a vector (half new, half old), and hybrid recall is never partial."""
    make_vault(tiny_vault, 6)  # 12 chunk texts
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, emb)
        before = dict(index.conn.execute("SELECT content_hash, id FROM embeddings"))
        _stop_a_forced_refresh_after_one_batch(index, emb)
        after = dict(index.conn.execute("SELECT content_hash, id FROM embeddings"))
        assert set(after) == set(before) and store.pending(index.conn, emb.model_id) == 0
        assert sum(after[h] != before[h] for h in before) == 4  # one batch replaced, the rest kept
        assert index.conn.execute("SELECT COUNT(*) FROM vec_embeddings").fetchone()[0] == 12
        assert index.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # QA round 45 M1: a plain refresh finishes the forced one (it said "run refresh again to finish",
        # and that did nothing: every text had a vector); the lazy refresh before a query leaves it
        st = store.embed_status(index.conn, emb.model_id)
        assert st["reembed_pending"] == 8 == store.forced_remaining(index.conn, emb.model_id)
        assert "8 chunk texts still to re-embed" in st["summary"]
        assert "up to date" not in st["summary"]  # (QA round 121-B F3: "…, up to date; 8 chunk texts still to …")
        # its documents waiting to be chunked again (another version's sync): still said (QA round 122-B F5)
        with db.write_transaction(index.conn):
            index.conn.execute("DELETE FROM chunked_documents")
            index.conn.execute("DELETE FROM chunks")
        st = store.embed_status(index.conn, emb.model_id)
        assert st["reembed_pending"] == 0 and "an interrupted --force goes on once the documents are chunked" in st["summary"]
        store.chunk_pending_documents(index.conn)
        emb.calls.clear()
        assert store.refresh(index.conn, emb, resume_forced=False).embedded == 0 and not emb.calls
        r = store.refresh(index.conn, emb, batch_size=4)
        assert r.embedded == 8 and len(emb.calls) == len(set(emb.calls)) == 8  # the texts not re-embedded yet, once each
        final = dict(index.conn.execute("SELECT content_hash, id FROM embeddings"))
        assert all(final[h] != before[h] for h in before) and store.forced_remaining(index.conn, emb.model_id) == 0
        assert store.refresh(index.conn, emb).embedded == 0  # done: the marker is gone
        assert index.conn.execute("SELECT COUNT(*) FROM meta WHERE key LIKE 'embed_force_below:%'").fetchone()[0] == 0


def test_a_forced_refresh_running_in_another_process_is_not_said_interrupted(tiny_vault, monkeypatch, capsys):
    """QA round 149-C F3: while ``embed refresh --force`` ran in another process, ``embed status`` said "96 texts still
    to re-embed for an interrupted --force (…; run: dreamdb embed refresh)", and its JSON summary the same: the texts
    it has left are said to be re-embedded now, as a recall's note says of a running refresh."""
    monkeypatch.chdir(tiny_vault.parent)  # (dreamdb finds the vault from here: its notes' commands need no --vault)
    from dreamdb.cli import main
    from dreamdb.embeddings import locate

    make_vault(tiny_vault, 6)  # 12 chunk texts
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, emb)
        _stop_a_forced_refresh_after_one_batch(index, emb)  # (the state a --force under way leaves: 8 texts left)
    # the installed model, as embed status finds it (the vectors' model)
    monkeypatch.setattr(locate, "model_status", lambda identify=False: {
        "installed": True, "path": str(tiny_vault / "model"), "model_id": emb.model_id, "runtime_missing": []})
    interrupted = ("8 texts still to re-embed for an interrupted --force (their vectors are used meanwhile; run:"
                   " dreamdb embed refresh)")
    running = ("8 texts still to re-embed for a --force (another dreamdb process is refreshing the embeddings now:"
               " their vectors are used meanwhile)")

    def status() -> tuple[str, str]:
        assert main(["embed", "status", "--vault", str(tiny_vault)]) == 0
        text = capsys.readouterr().out
        assert main(["embed", "status", "--vault", str(tiny_vault), "--json"]) == 0
        st = json.loads(capsys.readouterr().out)
        assert st["reembed_pending"] == 8, st
        return next(line for line in text.splitlines() if line.startswith("re-embed:")), st["summary"]

    line, summary = status()
    assert line == f"re-embed:  {interrupted}"
    assert summary.endswith("; 8 chunk " + interrupted[2:]), summary
    lock = str(tiny_vault / ".dreamdb" / store.LOCK_FILE_NAME)
    holder = subprocess.Popen(  # (the --force's process: it holds the refresh lock until its stdin closes)
        [sys.executable, "-c", "import sys; from filelock import FileLock; lock = FileLock(sys.argv[1]); lock.acquire();"
         " print('held', flush=True); sys.stdin.read()", lock], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        line, summary = status()
    finally:
        holder.communicate("")
    assert line == f"re-embed:  {running}"
    assert summary.endswith("; 8 chunk " + running[2:]) and "interrupted" not in summary, summary


def test_a_forced_refresh_ends_done_when_the_newest_vector_is_replaced_first(tiny_vault):
    """The newest vector (highest id) is a short text, so the first batch replaces it: SQLite would give the
    new vectors ids at or below the forced run's bound, and the run would seem unfinished for ever."""
    make_vault(tiny_vault, 3)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        store.refresh(index.conn, emb)
        write_doc(tiny_vault, "knowledge/short.md", "---\nname: S\n---\nshort\n")
        index.sync()
        store.refresh(index.conn, emb)
        old_max, newest = index.conn.execute("SELECT id, content_hash FROM embeddings ORDER BY id DESC LIMIT 1").fetchone()
        texts = index.conn.execute("SELECT COUNT(DISTINCT content_hash) FROM chunks").fetchone()[0]
        r = store.refresh(index.conn, emb, force=True, batch_size=2)
        assert r.embedded == texts and store.forced_remaining(index.conn, emb.model_id) == 0
        first_id, first = index.conn.execute("SELECT id, content_hash FROM embeddings ORDER BY id LIMIT 1").fetchone()
        assert first == newest and first_id > old_max  # the shortest, re-embedded first, above every older id
        assert index.conn.execute("SELECT COUNT(*) FROM meta WHERE key LIKE 'embed_force_below:%'").fetchone()[0] == 0
        emb.calls.clear()
        assert store.refresh(index.conn, emb).embedded == 0 and not emb.calls


def test_refresh_rechunks_after_a_sync_force_in_the_middle(tiny_vault):
    """Another process's sync --force empties the chunks while a refresh embeds: the refresh chunks the
    documents again before it ends (their vectors are kept), instead of reporting success with 0 chunks."""
    make_vault(tiny_vault, 6)
    emb = HashEmbedder()
    fired = []

    with open_synced(tiny_vault) as index:
        def progress(done, total):
            if done and not fired:  # after the first committed batch
                fired.append(True)
                other = dreamdb.open(tiny_vault)
                other.sync(force=True)
                other.close()

        r = store.refresh(index.conn, emb, batch_size=4, progress=progress)
        assert fired and r.chunks == 12 and r.pending == 0
        assert store.documents_to_chunk(index.conn) == 0
        assert r.embedded == 12  # each text once: the re-chunked texts kept their vectors
        # the vault's 6 documents, chunked twice, are 6 (QA round 122-B F6: the attempts' sum, 12)
        assert r.chunked_docs == 6 and r.reused == 0  # (its 12 texts embedded by this run, none reused)


def test_a_document_past_the_chunk_cap_is_named_with_how_much_of_it_has_vectors(tiny_vault):
    """Session 34's list: a note longer than MAX_CHUNKS_PER_DOCUMENT chunks had its tail left without vectors, and
    neither `embed refresh` nor `embed status` said so (the issue's 2 MB document)."""
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.embeddings.chunk import MAX_CHUNKS_PER_DOCUMENT

    n = MAX_CHUNKS_PER_DOCUMENT + 12
    sections = "\n\n".join(f"# S{i}\n\n{para(f's{i}x')}" for i in range(n))  # 152 words a section: a chunk each
    write_doc(tiny_vault, "knowledge/huge.md", f"---\nname: Huge\n---\n{sections}\n")
    make_vault(tiny_vault, 2)
    emb = HashEmbedder()
    with open_synced(tiny_vault) as index:
        report = store.refresh(index.conn, emb)
        cut = [{"doc_id": "knowledge/huge", "words": 152 * n, "embedded_words": 152 * MAX_CHUNKS_PER_DOCUMENT}]
        assert report.documents_cut == cut and report.as_dict()["documents_cut"] == cut
        st = store.embed_status(index.conn, emb.model_id)
        assert st["documents_cut"] == cut and "knowledge/huge (19,456 of 21,280 words)" in st["summary"]
        assert store.refresh(index.conn, emb).documents_cut == cut  # said again while it lasts
        # an index from before migration 010 has no counts: its documents are chunked again, vectors reused
        with db.write_transaction(index.conn):
            index.conn.execute("UPDATE chunked_documents SET words = NULL, embedded_words = NULL")
        assert store.documents_to_chunk(index.conn) == 3 and store.embed_status(index.conn)["documents_cut"] == []
        assert store.embed_status(index.conn)["docs_uncounted"] == 3  # (QA round 60 L6: said apart from "to chunk")
        summary = store.embed_status(index.conn)["summary"]  # (QA round 61 L4: dreamdb status's line too)
        assert "3 documents chunked by an older dreamdb to count again" in summary and "to chunk," not in summary
        from click.testing import CliRunner as Runner

        from dreamdb.cli import cli as dreamdb_cli

        said = Runner().invoke(dreamdb_cli, ["embed", "status", "--vault", str(tiny_vault)]).output
        assert "documents: 3 (3 chunked, 0 to chunk, 3 to count again: chunked by an older dreamdb" in said, said
        calls = len(emb.calls)
        again = store.refresh(index.conn, emb)
        assert again.chunked_docs == 3 and again.embedded == 0 and len(emb.calls) == calls
        assert again.documents_cut == cut
    result = CliRunner().invoke(cli, ["embed", "status", "--vault", str(tiny_vault)])
    assert result.exit_code == 0 and "cut:       1 document longer than the cap of 128 chunks" in result.output
    # cut short below the cap: nothing to say
    write_doc(tiny_vault, "knowledge/huge.md", "---\nname: Huge\n---\n" + sections.split("# S100")[0])
    with open_synced(tiny_vault) as index:
        assert store.refresh(index.conn, emb).documents_cut == []
        assert store.embed_status(index.conn, emb.model_id)["documents_cut"] == []


def test_a_document_of_unspaced_text_past_the_chunk_cap_is_named_as_cut(tiny_vault):
    """QA round 147-C F1: a document the cap cut on characters (Japanese without spaces, one long run of a letter) was
    counted as "3 words" of which "129" had vectors, so neither ``embed refresh`` nor ``embed status`` named it. Such a
    word now counts once per MAX_CHUNK_CHARS characters begun, as its chunks cut it; an index's rows counted the old way
    (more words embedded than the text holds) are counted again by the next refresh, their vectors kept."""
    from dreamdb.embeddings.chunk import MAX_CHUNK_CHARS

    n = MAX_CHUNK_CHARS * 130 + 7  # just past the cap: 131 pieces of MAX_CHUNK_CHARS
    write_doc(tiny_vault, "knowledge/bigcjk.md", "# 大きい\n\n" + ("睡眠負債は蓄積する" * (n // 9 + 1))[:n] + "\n")
    write_doc(tiny_vault, "knowledge/bigword.md", "# Big word\n\n" + "x" * n + "\n")
    make_vault(tiny_vault, 1)
    emb = HashEmbedder()
    # (the heading, cut from the pieces of the word after it, is no chunk of its own: chunker 8)
    cut = [{"doc_id": "knowledge/bigword", "words": 134, "embedded_words": 128},
           {"doc_id": "knowledge/bigcjk", "words": 133, "embedded_words": 128}]
    with open_synced(tiny_vault) as index:
        assert store.refresh(index.conn, emb).documents_cut == cut
        st = store.embed_status(index.conn, emb.model_id)
        assert st["documents_cut"] == cut
        assert ("2 documents longer than the cap of 128 chunks: only their first chunks have vectors, the rest is found"
                " by BM25 alone (split them into several notes to embed all): knowledge/bigword (128 of 134 words),"
                " knowledge/bigcjk (128 of 133 words)") in st["summary"], st["summary"]
        # the rows an older dreamdb wrote (one word each, its pieces counted in the chunks): counted again
        with db.write_transaction(index.conn):
            for doc_id, words in (("knowledge/bigcjk", 3), ("knowledge/bigword", 4)):
                index.conn.execute("UPDATE chunked_documents SET words = ? WHERE doc = (SELECT id FROM documents"
                                   " WHERE doc_id = ?)", (words, doc_id))
        assert store.documents_to_chunk(index.conn) == 2
        calls = len(emb.calls)
        again = store.refresh(index.conn, emb)
        assert again.chunked_docs == 2 and again.embedded == 0 and len(emb.calls) == calls
        assert again.documents_cut == cut and store.documents_to_chunk(index.conn) == 0


def test_the_machines_limits_during_a_hybrid_query_leave_the_stored_vectors_or_bm25_to_answer(tiny_vault, monkeypatch):
    """QA round 83-B F1, F2: under a memory limit, the language identification of a changed note's new chunks raised
    MemoryError, and hybrid recall, ``embed refresh`` and the prompt hook failed (exit 70; the hook printed nothing);
    a temporary folder too small for py3langid's unpacked model (~70 MB) read as standard output's error (exit 74).
    Now the texts waiting stay pending (rolled back) and BM25 answers, with a note (QA round 84: the vectors stored
    answered, and the notes waiting fell far down); so does a query the dense channel cannot embed; the language
    identifier's failure names its temporary folder, or the open-file limit."""
    import errno

    from dreamdb.embeddings import language
    from dreamdb.errors import ModelError

    index, emb = embedded_index(tiny_vault, 3)
    write_doc(tiny_vault, "knowledge/doc0.md", "---\nname: Doc 0\n---\n# Part A\n\nchanged text about quokkas a0x1\n")
    index.take_notes()

    def no_memory(*_args, **_kwargs):
        raise MemoryError()

    monkeypatch.setattr(language, "identify", no_memory)
    # BM25 answers (QA round 84: the notes waiting, BM25's best, fell far down the fused ranking, with no dense vote)
    hits = index.recall("quokkas", mode="hybrid")
    assert hits and hits[0].doc_id == "knowledge/doc0" and {h.mode for h in hits} == {"bm25"}
    assert any(n.startswith("hybrid recall unavailable, used bm25: the texts waiting for embedding could not be"
                            " embedded now (not enough memory)") for n in index.take_notes())
    assert store.pending(index.conn, emb.model_id) > 0  # nothing half-stored
    assert index.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    monkeypatch.undo()  # (the texts waiting are embedded now; the query's embedding runs out of memory)
    monkeypatch.setattr(emb, "embed_queries", no_memory)
    hits = index.recall("b2x3 unseen words", mode="hybrid")
    assert hits and {h.mode for h in hits} == {"bm25"}
    assert any("hybrid recall unavailable, used bm25: not enough memory for the dense channel" in n
               for n in index.take_notes())
    monkeypatch.undo()
    # py3langid unpacks its model into a temporary file: a full folder or a file-size limit is said as such
    from py3langid.langid import LanguageIdentifier

    def too_large(*_args, **_kwargs):
        raise OSError(errno.EFBIG, "File too large")

    monkeypatch.setattr(language, "_IDENTIFIER", None)
    monkeypatch.setattr(LanguageIdentifier, "from_model_file", classmethod(too_large))
    with pytest.raises(ModelError, match=r"could not unpack its model into a temporary file of about 70 MB in .*: File"
                                         r" too large") as caught:
        language.identify(["some text"])
    assert "TMPDIR" in caught.value.hint

    def no_files(*_args, **_kwargs):  # (QA round 84: the open-file limit was said to be a full temporary folder)
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(LanguageIdentifier, "from_model_file", classmethod(no_files))
    with pytest.raises(ModelError, match="may open no more files") as caught:
        language.identify(["some text"])
    assert "ulimit -n" in caught.value.hint and "TMPDIR" not in caught.value.hint


def test_a_command_out_of_memory_or_file_handles_says_so(capsys):
    """QA round 83-B F1, F6: a MemoryError or EMFILE ended as "internal error" (exit 70), or, for EMFILE while the
    index was opened, as a hint to fix its permissions."""
    import errno

    from dreamdb import quickcli

    def no_memory():
        raise MemoryError()

    def no_files():
        raise OSError(errno.EMFILE, "Too many open files", "/some/module.py")

    assert quickcli.run_guarded(no_memory) == 1
    assert "Error: Not enough memory to finish the command" in capsys.readouterr().err
    assert quickcli.run_guarded(no_files) == 1
    err = capsys.readouterr().err
    assert "may open no more files" in err and "ulimit -n" in err and "internal error" not in err

    def no_library():  # (QA round 85 F2: a memory limit that keeps a shared library from loading was exit 70)
        raise ImportError("libsqlite3.so.0: failed to map segment from shared object")

    assert quickcli.run_guarded(no_library) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: Not enough memory to load a library") and "ulimit -v" in err


def test_a_model_that_cannot_load_for_lack_of_memory_or_files_is_not_called_corrupt(monkeypatch, tmp_path):
    """QA round 83-B F4: onnxruntime's std::bad_alloc (a memory limit) and system error 24 (the open-file limit) were
    reported as a corrupt model, with a reinstall hint that cannot help."""
    from dreamdb.embeddings import model
    from dreamdb.errors import ModelError

    for text, said in (("Load model from m.onnx failed:std::bad_alloc", "Not enough memory to load"),
                       ("Load model from m.onnx failed:system error number 24", "may open no more files"),
                       ("Load model from m.onnx failed:Protobuf parsing failed.", "corrupt or not an ONNX model")):
        def failing(*_args, text=text, **_kwargs):
            raise RuntimeError(text)

        monkeypatch.setattr(model.ort, "InferenceSession", failing)
        with pytest.raises(ModelError, match=said) as caught:
            model._load_session(tmp_path / "m.onnx", 1)
        rebuild = caught.value.hint.startswith("Build or install the model again")  # (QA round 102-B F6's wording)
        assert rebuild == (said == "corrupt or not an ONNX model"), caught.value.hint


def test_a_model_folder_whose_path_is_not_utf8_is_recorded_as_its_error_output_shows_it(tiny_vault):
    """QA round 150-I F3: a refresh with a model loaded from a folder whose path is not UTF-8 failed recording it in
    ``models`` (an internal error, UnicodeEncodeError: SQLite's TEXT is UTF-8); the path is stored as the error output
    shows it, ``mdl\\udcff``."""
    import os

    make_vault(tiny_vault, n_docs=2)
    emb = HashEmbedder()
    emb.path = Path("/models") / os.fsdecode(b"mdl\xff") / "multilingual-e5-small"
    with dreamdb.open(tiny_vault) as index:
        assert index.refresh_embeddings(embedder=emb).embedded >= 2
        stored = index.conn.execute("SELECT path FROM models").fetchall()
    assert stored == [("/models/mdl\\udcff/multilingual-e5-small",)]


def test_a_runtime_or_tokenizer_that_cannot_load_for_lack_of_memory_is_not_called_missing_or_damaged(monkeypatch,
                                                                                                       tmp_path):
    """QA round 84: under a memory limit, onnxruntime's native module failed to import and the message said to
    install the runtime (installed), and tokenizers' "out of memory" was reported as a tokenizer.json to reinstall."""
    from dreamdb.embeddings import model
    from dreamdb.errors import ModelError, ModelNotInstalled

    failed = ImportError("libonnxruntime.so: failed to map segment from shared object: Cannot allocate memory",
                         name="onnxruntime.capi.onnxruntime_pybind11_state")
    monkeypatch.setattr(model, "_IMPORT_ERROR", failed)
    exc = model._runtime_unavailable()
    assert isinstance(exc, ModelError) and "installed but could not be loaded" in exc.message and "ulimit -v" in exc.hint
    monkeypatch.setattr(model, "_IMPORT_ERROR", ModuleNotFoundError("No module named 'nosuchruntime'",
                                                                     name="nosuchruntime"))
    exc = model._runtime_unavailable()
    assert isinstance(exc, ModelNotInstalled) and "is not installed (nosuchruntime)" in exc.message

    class OutOfMemory:
        @staticmethod
        def from_buffer(_data):
            raise Exception("out of memory")

    monkeypatch.setattr(model, "Tokenizer", OutOfMemory)
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError, match="Not enough memory to load") as caught:
        model._load_tokenizer(tmp_path / "tokenizer.json")
    assert "model install" not in caught.value.hint


def test_a_model_that_cannot_load_at_the_open_file_limit_leaves_bm25_to_answer_and_is_tried_again(tiny_vault,
                                                                                                 monkeypatch, tmp_path):
    """QA round 85 F4: at ``ulimit -n 10`` hybrid recall failed (exit 1: onnxruntime's import could open no more
    files) where a model that cannot load leaves BM25 to answer, with a note; the machine's limit may pass, so the
    next query tries the model again."""
    import errno

    from dreamdb.embeddings import locate, model

    if not db.CAN_LOAD_EXTENSIONS:
        pytest.skip("this SQLite driver cannot load sqlite-vec: no model is ever loaded")
    make_vault(tiny_vault, 3)
    index = dreamdb.open(tiny_vault)
    index.sync()
    calls = []

    def no_files(*_args, **_kwargs):
        calls.append(1)
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(locate, "find_model_dir", lambda: tmp_path)
    monkeypatch.setattr(model, "get_embedder", no_files)
    for n in (1, 2):
        hits = index.recall("a1x1", mode="hybrid")
        assert hits and hits[0].doc_id == "knowledge/doc1" and {h.mode for h in hits} == {"bm25"}
        assert any(note.startswith("hybrid recall unavailable, used bm25: the embedding model could not be loaded: Too"
                                   " many open files (raise the open-file limit") for note in index.take_notes())
        assert len(calls) == n


@pytest.mark.model
def test_hybrid_recall_under_an_address_space_limit_falls_back_or_says_so(model_dir, tmp_path):
    """QA round 123-B F3, F4: under ``ulimit -v`` numpy's OpenBLAS could not start its threads and raised SIGINT in
    the process: hybrid recall said "Interrupted." (exit 130) though nobody interrupted it, or OpenBLAS exited 1 with
    no JSON; lower, the fallback's note said the installed runtime was "not installed". Over a sweep of limits, each
    recall now answers (BM25 with a note naming memory where the model cannot load) or says it lacks memory, in JSON."""
    import os
    import resource
    import shutil

    vault = tmp_path / "project" / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    env = dict(os.environ, DREAMDB_MODEL_DIR=str(model_dir), PYTHONPATH=str(ROOT))
    for name in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        env.pop(name, None)
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "embed", "refresh", "--vault", str(vault)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    outcomes = []
    for kib in (60_000, 80_000, 100_000, 120_000, 150_000, 200_000, 300_000, 400_000, 800_000, 1_600_000):
        def limit(kib=kib):
            resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))

        p = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--vault", str(vault), "--mode", "hybrid",
                            "--json", "sleep debt"], env=env, preexec_fn=limit, capture_output=True, text=True,
                           timeout=120)
        assert p.returncode in (0, 1) and "Interrupted" not in p.stderr, (kib, p.returncode, p.stderr[-600:])
        if p.returncode == 1 and not p.stdout and "OpenBLAS error: Memory allocation still failed" in p.stderr:
            outcomes.append("OpenBLAS's exit")  # (its buffer cannot be allocated as numpy loads: it ends the
            continue  # process itself, exit 1, in a narrow band of limits; nothing dreamdb can catch)
        out = json.loads(p.stdout)
        if p.returncode == 1:
            assert "memory" in out["error"]["message"].lower(), (kib, out)
            outcomes.append("error")
        elif out["mode"] == "bm25":
            notes = " ".join(out["notes"])
            assert "memory" in notes and "not installed" not in notes, (kib, notes)
            outcomes.append("fallback")
        else:
            outcomes.append(out["mode"])
    assert "fallback" in outcomes and "hybrid" in outcomes, outcomes


def test_a_refresh_from_inside_another_index_s_refresh_is_a_lock_timeout(tmp_path):
    """QA round 125-C F2: a second Index of the same vault refreshing from inside the first's progress callback raised
    filelock's bare RuntimeError ("Deadlock: … already held by a different FileLock instance in this thread"), no
    DreamdbError; it is a LockTimeout saying so, and the first refresh, stopped by it, is resumed by the next."""
    from dreamdb.errors import LockTimeout

    import shutil

    vault = shutil.copytree(ROOT / "examples", tmp_path / "ex", ignore=shutil.ignore_patterns(".dreamdb"))
    first, second = dreamdb.open(vault), dreamdb.open(vault)
    emb = HashEmbedder()

    def progress(done, total):
        second.refresh_embeddings(embedder=emb)

    with pytest.raises(LockTimeout, match="Another open Index of this process, in this same thread") as info:
        first.refresh_embeddings(embedder=emb, progress=progress)
    assert info.value.exit_code == 5 and "after the other refresh returns" in info.value.hint
    again = first.refresh_embeddings(embedder=emb).as_dict()
    assert again["pending"] == 0 and again["chunks"] > 0 and first.check() == []
    last = first.refresh_embeddings(embedder=emb).as_dict()
    assert (last["embedded"], last["chunked_docs"], last["pending"]) == (0, 0, 0)


def test_the_dense_cut_through_documents_of_one_score_is_the_same_in_every_index_of_a_vault(tmp_path):
    """QA round 126-A F3: 60 stub notes of one text share a vector, and a dense search of k = 25 kept the 25 of the
    smallest row ids, which the order the notes were indexed in decides: an index grown 31..60 then 1..30 kept
    s01..s20 and s31..s35, a fresh one s01..s25. The cut orders them as BM25 breaks ties: newest, then doc_id."""
    stub = "---\ntitle: Stub\ndescription: placeholder to fill\n---\ntodo placeholder\n"
    emb = HashEmbedder()

    def stubs(vault, numbers):
        for i in numbers:
            write_doc(vault, f"knowledge/s{i:02d}.md", stub)

    grown, fresh = tmp_path / "grown" / "_dream_context", tmp_path / "fresh" / "_dream_context"
    stubs(grown, range(31, 61))
    write_doc(grown, "knowledge/dated.md", "---\ntitle: Stub\ndescription: placeholder to fill\ndate: 2026-01-02\n---\n"
                                           "todo placeholder\n")
    with dreamdb.open(grown) as index:
        index.refresh_embeddings(embedder=emb)
    stubs(grown, range(1, 31))
    stubs(fresh, range(1, 61))
    write_doc(fresh, "knowledge/dated.md", (grown / "knowledge" / "dated.md").read_text(encoding="utf-8"))
    kept = []
    for vault in (grown, fresh):
        with dreamdb.open(vault) as index:
            index.refresh_embeddings(embedder=emb)
            (text,) = {t for (t,) in index.conn.execute("SELECT text FROM chunks")}  # (one text: a dated copy too)
            ids = dict(index.conn.execute("SELECT id, doc_id FROM documents"))
            top = store.dense_search(index.conn, emb.vec(text), emb.model_id, 25)
            kept.append([ids[d] for d, _s in top])
    assert kept[0] == kept[1] == ["knowledge/dated"] + [f"knowledge/s{i:02d}" for i in range(1, 25)]


class DiskFillingEmbedder(HashEmbedder):
    """A :class:`HashEmbedder` that, at its ``fill_at``-th call, fills the disk holding ``filler`` (another program's
    download, say) before it answers: the batch it embeds then cannot be stored."""

    def __init__(self, filler, fill_at: int) -> None:
        super().__init__()
        self.filler, self.fill_at, self.batches = filler, fill_at, 0

    def embed_passages(self, texts):
        self.batches += 1
        if self.batches == self.fill_at:
            with open(self.filler, "wb", buffering=0) as f, contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * 4096)
        return super().embed_passages(texts)


@pytest.mark.parametrize("fill_at, kept", [(1, 0), (2, store.DEFAULT_BATCH_SIZE)])
def test_a_refresh_a_full_disk_stops_gives_the_disk_back_and_says_what_it_kept(tmp_path, fill_at, kept):
    """QA round 148-D F1: an `embed refresh` a full disk stopped left its -wal file (376 KB) behind, the pages of
    its refused write after those of the chunks it had committed, which SQLite could not copy into the index file
    on the full disk: the disk stayed at 0 bytes free (a failed sync gives the space back), and the error said "the
    texts embedded before were kept", its hint "the index was left as it was", where none had been embedded. The
    refresh folds the -wal file into the index after each write, and empties it after a refused one; the error
    says how many texts were kept, if any."""
    from dreamdb.errors import IndexUnavailable

    with small_file_system(tmp_path / "small", "size=4m") as small:
        vault = make_vault(small / "project" / "_dream_context", n_docs=12)  # (24 texts: two batches of 16 and 8)
        emb = DiskFillingEmbedder(small / "filler", fill_at)
        with open_synced(vault) as index:
            with pytest.raises(IndexUnavailable) as info:
                index.refresh_embeddings(embedder=emb)
            wal = Path(f"{index.index_path}-wal")
            assert not wal.exists() or wal.stat().st_size == 0, wal.stat().st_size  # (its disk space given back)
            assert index.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == kept
            said = f"{info.value.message}\n{info.value.hint}"
            assert "left as it was" not in said, said
            if kept:
                assert f"the {kept} texts it embedded before were kept" in info.value.message, said
                assert f"the {kept} texts embedded before it stopped were kept" in info.value.hint, said
            else:
                assert "no text was embedded" in info.value.message and "before were kept" not in said, said
            (small / "filler").unlink()
            report = index.refresh_embeddings(embedder=HashEmbedder())  # (room again: the rest is embedded)
            assert (report.embedded, report.pending) == (24 - kept, 0)
