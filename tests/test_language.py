"""Language-centred dense scores (dreamdb/embeddings/language.py): identification, centroids, search.

Mechanics use a deterministic embedder whose vectors carry a strong language direction
(topic + 1.5 × language), so that plain cosine prefers any note in the query's language;
the real model is checked on the real vault's Turkish boards and English notes.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import dreamdb
from dreamdb.embeddings import language, store
from dreamdb.store import connect as db
from tests.conftest import REAL_VAULT_SRC, write_doc

pytestmark = pytest.mark.skipif(not db.CAN_LOAD_EXTENSIONS, reason="the SQLite driver cannot load sqlite-vec")

EN = {
    "backup": "The nightly backup job copies the database to a second disk and keeps thirty daily copies of it.",
    "login": "The login page locks an account for ten minutes after five failed password attempts in a row.",
    "invoice": "Every invoice lists the items, the tax and the shipping cost, and the total is paid within thirty days.",
    "printer": "The office printer needs a new driver after the operating system update, otherwise pages come out blank.",
}
TR = {
    "garden": "Bahçedeki domatesler her sabah sulanıyor ve güneşli günlerde gölgeye alınıyor, yapraklar sararmasın diye.",
    "recipe": "Bu tarif için iki yumurta, bir bardak un ve biraz şeker gerekiyor; hamur bir saat dinlendirilmeli.",
    "train": "Ankara treni sabah yedide kalkıyor ve biletler istasyondaki makinelerden ya da internetten alınabiliyor.",
}
TOPICS = [*EN, *TR]


def _unit(seed_text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(seed_text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(384)
    return v / np.linalg.norm(v)


class BiasedEmbedder:
    """topic vector + 1.5 × language vector (Turkish when the text has Turkish letters), L2-normalised."""

    model_id = "test-biased-1"
    name = "biased"
    dim = 384
    source = "custom"
    path = None

    @staticmethod
    def vec(text: str) -> np.ndarray:
        low = text.lower()
        topic = next((t for t in TOPICS if t in low), "other")
        lang = "tr" if any(ch in low for ch in "çğışöü") else "en"
        v = _unit("topic:" + topic) + 1.5 * _unit("lang:" + lang)
        return (v / np.linalg.norm(v)).astype(np.float32)

    def embed_passages(self, texts):
        return np.stack([self.vec(t) for t in texts]) if texts else np.zeros((0, 384), np.float32)

    def embed_queries(self, texts):
        return self.embed_passages(texts)


def mixed_vault(vault):
    for topic, text in EN.items():
        write_doc(vault, f"knowledge/{topic}.md", f"---\nname: {topic} notes\n---\n{topic}: {text}\n")
    for topic, text in TR.items():
        write_doc(vault, f"knowledge/{topic}.md", f"---\nname: {topic} notları\n---\n{topic}: {text}\n")
    return vault


def embedded(vault, emb=None):
    emb = emb or BiasedEmbedder()
    index = dreamdb.open(vault)
    index.sync()
    store.refresh(index.conn, emb)
    index.embedder = lambda: emb
    return index, emb


def doc_ids(index, hits):
    names = dict(index.conn.execute("SELECT id, doc_id FROM documents"))
    return [names[d] for d, _s in hits]


def test_identify_languages_and_no_language():
    got = language.identify([EN["backup"], TR["recipe"], "0x00ff 0x1234 0xdeadbeef", "", "## User Stories"])
    assert got[:2] == ["en", "tr"]
    assert got[2:] == ["", "", ""]  # hex (zxx), empty and a 3-word heading: no language


def test_centroids_main_language_minimum_and_adjustments():
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((8, 384)).astype(np.float32)
    langs = ["en"] * 5 + ["tr"] * 2 + ["de"]
    sums, counts = language.compute_centroids(langs, vecs)
    assert counts == {"en": 5, "tr": 2, "de": 1}
    np.testing.assert_allclose(sums["tr"], vecs[5:7].sum(0), rtol=1e-6)
    c = language.centroids_from_sums(sums, counts)
    assert c.main == "en" and set(c.means) == {"en", "tr"}  # one German vector: not centred
    q = vecs[5] / np.linalg.norm(vecs[5])
    adj = c.adjustments(q)
    assert set(adj) == {"tr"}
    scale, shift = adj["tr"]
    # the jackknife form: a Turkish chunk p is centred by the mean of the other Turkish chunk
    p, other = vecs[5], vecs[6]
    expected = float(q @ p - q @ (other - vecs[:5].mean(0)))
    assert scale == pytest.approx(2.0) and scale * float(q @ p) + shift == pytest.approx(expected, rel=1e-5)
    # one language (or none with enough vectors): no adjustment at all
    one = language.centroids_from_sums(*language.compute_centroids(["en"] * 3, vecs[:3]))
    assert one.main == "en" and one.adjustments(q) == {}
    assert language.centroids_from_sums({}, {}).adjustments(q) == {}


def test_centring_ranks_the_answer_above_same_language_notes(tiny_vault):
    mixed_vault(tiny_vault)
    index, emb = embedded(tiny_vault)
    with index:
        c = index.conn
        langs = dict(c.execute("SELECT e.lang, COUNT(*) FROM embeddings e GROUP BY e.lang"))
        assert langs == {"en": 4, "tr": 3}
        cent = store.load_centroids(c, emb.model_id)
        assert cent.main == "en" and cent.counts == {"en": 4, "tr": 3}
        # a Turkish question about the backups (an English note)
        q = emb.vec("yedekleme backup gecesi nasıl çalışıyor")
        plain = doc_ids(index, store.dense_search(c, q, emb.model_id, 4))
        assert set(plain[:3]) == {"knowledge/garden", "knowledge/recipe", "knowledge/train"}  # the bias
        assert plain[3] == "knowledge/backup"
        adj = cent.adjustments(q)
        centred = doc_ids(index, store.dense_search(c, q, emb.model_id, 7, lang_adjust=adj))
        assert centred[0] == "knowledge/backup"
        # a Turkish question about a Turkish note still finds it first (its own topic is left out of its mean)
        q2 = emb.vec("domates bahçe garden sulama")
        assert doc_ids(index, store.dense_search(c, q2, emb.model_id, 1, lang_adjust=cent.adjustments(q2))) == ["knowledge/garden"]
        # recall uses it: dense mode through the Index
        hits = index.recall("yedekleme backup gecesi nasıl çalışıyor", mode="dense", top=7, explain=True)
        assert hits[0].doc_id == "knowledge/backup"
        # --explain says which scores were centred: the Turkish notes', not the English ones'
        centred = {h.doc_id: h.signals["dense_centred"] for h in hits}
        assert centred["knowledge/garden"] == centred["knowledge/train"] == "tr" and centred["knowledge/backup"] is None
        from dreamdb.output import hits_text

        text = hits_text(hits, explain=True)
        assert "(tr-centred)" in text and text.count("(tr-centred)") == 3


def test_one_language_index_ranks_by_plain_cosine(tiny_vault):
    for topic, text in EN.items():
        write_doc(tiny_vault, f"knowledge/{topic}.md", f"---\nname: {topic}\n---\n{topic}: {text}\n")
    index, emb = embedded(tiny_vault)
    with index:
        c = index.conn
        cent = store.load_centroids(c, emb.model_id)
        q = emb.vec("login password")
        assert cent.main == "en" and cent.adjustments(q) == {}
        a = store.dense_search(c, q, emb.model_id, 4)
        b = store.dense_search(c, q, emb.model_id, 4, lang_adjust=cent.adjustments(q))
        assert a == b and doc_ids(index, a)[0] == "knowledge/login"


@pytest.mark.parametrize("exact_max", [store.EXACT_MAX_CHUNKS, 0])
def test_knn_search_is_exact_under_adjustments(tiny_vault, monkeypatch, exact_max):
    """The over-fetching KNN stops only when no unseen chunk can beat the k-th document: with the
    centred languages' chunks scored exactly beforehand (few of them), or with the bound widened."""
    monkeypatch.setattr(store, "EXACT_MAX_CHUNKS", exact_max)
    for i in range(40):
        write_doc(tiny_vault, f"knowledge/d{i:02d}.md", f"---\nname: D{i}\n---\nword{i} " * 30 + "\n")
    index, _ = embedded(tiny_vault, emb=None)
    with index:
        c = index.conn
        from tests.test_embed_store import HashEmbedder

        h = HashEmbedder("hash-knn")
        store.refresh(c, h)
        # label half the vectors with a second language and give it a large boost, so the
        # best documents after adjustment are far down the plain cosine order
        rows = [r[0] for r in c.execute("SELECT id FROM embeddings WHERE model_id = 'hash-knn' ORDER BY id")]
        with db.write_transaction(c):
            c.executemany("UPDATE embeddings SET lang = 'xx' WHERE id = ?", [(r,) for r in rows[::2]])
        q = HashEmbedder.vec("query")
        for adj in ({"xx": (1.0, 0.3)}, {"xx": (2.0, -0.5)}, {"xx": (1.0, -0.3)}):
            got_lang, want_lang = {}, {}
            knn = store.dense_search(c, q, "hash-knn", 3, lang_adjust=adj, best_lang=got_lang)
            exact = store.dense_search_numpy(c, q, "hash-knn", 3, lang_adjust=adj)
            assert [d for d, _ in knn] == [d for d, _ in exact]
            assert [s for _, s in knn] == pytest.approx([s for _, s in exact], abs=1e-5)
            store.dense_search(c, q, "hash-knn", 40, lang_adjust=adj, allowed_docs=set(range(1, 100)), best_lang=want_lang)
            assert {d: got_lang[d] for d, _ in knn} == {d: want_lang[d] for d, _ in knn}
        assert store.dense_search(c, q, "hash-knn", 3) != store.dense_search(c, q, "hash-knn", 3, lang_adjust={"xx": (1.0, 0.3)})


def test_upgrade_identifies_languages_lazily_and_refresh_keeps_sums_current(tiny_vault):
    mixed_vault(tiny_vault)
    index, emb = embedded(tiny_vault)
    with index:
        c = index.conn
        assert store.languages_current(c, emb.model_id)
        # as after migration 004 on an index embedded by an older dreamdb
        with db.write_transaction(c):
            c.execute("UPDATE embeddings SET lang = NULL")
            c.execute("DELETE FROM language_centroids")
        assert not store.languages_current(c, emb.model_id) and store.unidentified(c, emb.model_id) == 7
        assert store.load_centroids(c, emb.model_id) is None
        assert store.embed_status(c, emb.model_id)["languages"] == {"?": 7}
        hits = index.recall("yedekleme backup gecesi nasıl çalışıyor", mode="hybrid", top=3)
        assert hits[0].doc_id == "knowledge/backup"
        assert store.languages_current(c, emb.model_id) and store.unidentified(c, emb.model_id) == 0
        assert store.load_centroids(c, emb.model_id).counts == {"en": 4, "tr": 3}
        assert store.embed_status(c, emb.model_id)["languages"] == {"en": 4, "tr": 3}
        # deleting a Turkish note: the next refresh prunes its vector and recomputes the sums
        (tiny_vault / "knowledge" / "train.md").unlink()
        index.sync()
        r = store.refresh(c, emb)
        assert r.pruned == 1
        assert store.load_centroids(c, emb.model_id).counts == {"en": 4, "tr": 2}
        assert store.languages_current(c, emb.model_id)
        # QA repro: replacing the newest note's vector reuses its id (same count, same largest id);
        # the sums must follow the edit anyway
        newest = c.execute("SELECT d.doc_id FROM embeddings e JOIN chunks ch ON ch.content_hash = e.content_hash "
                           "JOIN documents d ON d.id = ch.doc ORDER BY e.id DESC LIMIT 1").fetchone()[0]
        path = tiny_vault / "knowledge" / (newest.split("/", 1)[1] + ".md")
        topic = newest.split("/", 1)[1]
        was_turkish = topic in TR
        body = EN["backup"] if was_turkish else TR["garden"]
        path.write_text(f"---\nname: {topic}\n---\n{topic}: {body}\n", encoding="utf-8")
        index.sync()
        r = store.refresh(c, emb)
        assert (r.embedded, r.pruned) == (1, 1)
        want = {"en": 5, "tr": 1} if was_turkish else {"en": 3, "tr": 3}
        assert store.embed_status(c, emb.model_id)["languages"] == want
        assert store.load_centroids(c, emb.model_id).counts == want
        # a stale signature alone (a refresh killed after embedding) is repaired by the next refresh
        with db.write_transaction(c):
            c.execute("UPDATE language_centroids SET signature = 'g0'")
        assert not store.languages_current(c, emb.model_id)
        store.refresh(c, emb)
        assert store.languages_current(c, emb.model_id)


@pytest.mark.model
@pytest.mark.slow
def test_real_model_turkish_question_finds_english_note_above_turkish_boards(embedder, tmp_path):
    """Real vault: Turkish boards beside English notes; Turkish questions written for this test."""
    if not REAL_VAULT_SRC.is_dir():
        pytest.skip(f"real vault not found at {REAL_VAULT_SRC}")
    import shutil

    vault = tmp_path / "_dream_context"
    files = {
        "knowledge/diagrams/system/sleep-debt/sleep-debt.excalidraw.md",
        "knowledge/patterns/pid-lockfile-concurrent-json.md",
        "knowledge/patterns/test-isolation-injectable-home.md",
        "knowledge/patterns/shared-local-config-split.md",
        "knowledge/patterns/per-session-live-state-files.md",
    }
    for rel in list(files) + [p.relative_to(REAL_VAULT_SRC).as_posix() for p in REAL_VAULT_SRC.glob("knowledge/**/licensing*.excalidraw.md")]:
        dst = vault / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REAL_VAULT_SRC / rel, dst)
    index, _ = embedded(vault, emb=embedder)
    with index:
        c = index.conn
        cent = store.load_centroids(c, embedder.model_id)
        assert cent.main == "en" and cent.counts.get("tr", 0) >= 2
        turkish = {d for (d,) in c.execute(
            "SELECT DISTINCT d.doc_id FROM documents d JOIN chunks ch ON ch.doc = d.id "
            "JOIN embeddings e ON e.content_hash = ch.content_hash WHERE e.lang = 'tr'")}
        assert "knowledge/sleep-debt.excalidraw" in turkish
        for question, answer in (("eşzamanlı yazmalarda JSON dosyasını kilit dosyasıyla korumak", "knowledge/pid-lockfile-concurrent-json"),
                                 ("testlerde ev dizinini enjekte ederek izolasyon sağlamak", "knowledge/test-isolation-injectable-home")):
            q = embedder.embed_queries([question])[0]
            centred = doc_ids(index, store.dense_search(c, q, embedder.model_id, 7, lang_adjust=cent.adjustments(q)))
            assert centred[0] == answer
            plain = doc_ids(index, store.dense_search(c, q, embedder.model_id, 7))
            # centring moves every Turkish board down (or keeps it), never up
            for board in turkish:
                assert centred.index(board) >= plain.index(board)
        # a Turkish question about the Turkish board still finds the board
        q = embedder.embed_queries(["uyku borcu seviyeleri ve oturum skoru"])[0]
        assert doc_ids(index, store.dense_search(c, q, embedder.model_id, 1, lang_adjust=cent.adjustments(q))) == [
            "knowledge/sleep-debt.excalidraw"]


def test_lazy_refresh_before_a_query_keeps_the_identification_cap(tiny_vault, monkeypatch):
    """QA repro: with a note edited, the lazy refresh identified every waiting vector inside the query."""
    import dreamdb.api

    mixed_vault(tiny_vault)
    index, emb = embedded(tiny_vault)
    with index:
        c = index.conn
        with db.write_transaction(c):
            c.execute("UPDATE embeddings SET lang = NULL")
        monkeypatch.setattr(dreamdb.api, "LAZY_LANGUAGE_MAX", 2)
        write_doc(tiny_vault, "knowledge/login.md", "---\nname: login notes\n---\nlogin: " + EN["login"] + " Also SSO.\n")
        index.take_notes()
        hits = index.recall("login password", mode="hybrid")
        assert hits and hits[0].doc_id == "knowledge/login"
        assert store.unidentified(c, emb.model_id) == 6  # the new vector got its language, the others wait
        assert any("not identified yet" in n for n in index.take_notes())
        store.refresh(c, emb)  # dreamdb embed refresh: no cap
        assert store.unidentified(c, emb.model_id) == 0 and store.languages_current(c, emb.model_id)
        index.recall("login password", mode="hybrid")
        assert not [n for n in index.take_notes() if "not identified" in n]


def test_sums_follow_a_deletion_without_an_explicit_refresh(tiny_vault):
    """QA repro: a deleted Turkish note's vector (not yet pruned) kept counting in the Turkish mean."""
    mixed_vault(tiny_vault)
    index, emb = embedded(tiny_vault)
    with index:
        c = index.conn
        (tiny_vault / "knowledge" / "recipe.md").unlink()
        index.recall("yedekleme backup", mode="hybrid")  # lazy sync; nothing to embed
        assert store.load_centroids(c, emb.model_id).counts == {"en": 4, "tr": 2}
        (tiny_vault / "knowledge" / "train.md").unlink()
        index.recall("yedekleme backup", mode="hybrid")
        cent = store.load_centroids(c, emb.model_id)
        assert cent.counts == {"en": 4, "tr": 1} and "tr" not in cent.means  # one vector: not centred


def test_migration_5_on_an_index_with_vectors_signs_the_sums(tiny_vault):
    """QA repro: migration 005 left the counter empty for vectors stored before it, so deletes never made the sums stale."""
    mixed_vault(tiny_vault)
    index, emb = embedded(tiny_vault)
    path = index.index_path
    c = index.conn
    with db.write_transaction(c):  # back to schema 4, as an index embedded before this change
        for name in ("embeddings_generation_insert", "embeddings_generation_delete", "embeddings_generation_lang",
                     "chunks_generation_insert", "chunks_generation_delete"):
            c.execute(f"DROP TRIGGER {name}")
        c.execute("DROP TABLE embedding_generations")
        c.execute("DROP INDEX embeddings_model_lang")
        c.execute("DELETE FROM schema_migrations WHERE version = 5")
        c.execute("UPDATE language_centroids SET signature = '7:7'")  # as migration 004 signed them
    index.close()
    index = dreamdb.open(tiny_vault, index_path=path)
    index.embedder = lambda: emb
    with index:
        c = index.conn
        assert c.execute("SELECT model_id, generation FROM embedding_generations").fetchall() == [(emb.model_id, 1)]
        (tiny_vault / "knowledge" / "garden.md").unlink()
        index.sync()
        r = store.refresh(c, emb)
        assert r.pruned == 1
        assert store.load_centroids(c, emb.model_id).counts == {"en": 4, "tr": 2}
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_filter_without_centred_documents_keeps_the_plain_knn_bound(tiny_vault, monkeypatch):
    """QA repro: a filter removing every Turkish document made the KNN fetch every vector."""
    for i in range(30):
        write_doc(tiny_vault, f"knowledge/e{i:02d}.md", f"---\nname: E{i}\n---\n" + EN["invoice"].replace("Every", f"Note {i}: every") + "\n")
    mixed_vault(tiny_vault)
    index, emb = embedded(tiny_vault)
    with index:
        c = index.conn
        english = {r[0] for r in c.execute("SELECT id FROM documents WHERE doc_id NOT IN "
                                           "('knowledge/garden', 'knowledge/recipe', 'knowledge/train')")}
        q = emb.vec("invoice tax")
        adj = store.load_centroids(c, emb.model_id).adjustments(q)
        assert adj
        monkeypatch.setattr(store, "EXACT_MAX_CHUNKS", 3)  # the allowed set is too big for the exact path
        calls = []
        real = store._docs_for_vectors
        monkeypatch.setattr(store, "_docs_for_vectors", lambda conn, rowids: calls.append(1) or real(conn, rowids))
        got = store.dense_search(c, q, emb.model_id, 1, allowed_docs=english, lang_adjust=adj)
        assert len(calls) == 1  # one KNN round
        assert got == store.dense_search_numpy(c, q, emb.model_id, 1, allowed_docs=english, lang_adjust=adj)


def test_damaged_language_sums_are_not_used_and_are_computed_again(tiny_vault):
    """QA round 77 G8: bytes written into a row of ``language_centroids`` passed integrity_check (SQLite keeps no
    checksum of a row) and changed every dense score. Sums that cannot be sums of unit vectors (not finite, or of a
    norm above their count) centre nothing, and the next hybrid or dense query computes them again."""
    mixed_vault(tiny_vault)
    index, emb = embedded(tiny_vault)
    with index:
        c = index.conn
        query = "yedekleme backup gecesi nasıl çalışıyor"
        want = [(h.doc_id, h.signals["dense"]) for h in index.recall(query, mode="dense", top=7, explain=True)]
        good = dict(c.execute("SELECT lang, vector_sum FROM language_centroids"))
        rng = np.random.default_rng(7)
        for damaged in (rng.bytes(384 * 8), np.full(384, 1e6).tobytes(), b"\x00" * 10):
            c.execute("UPDATE language_centroids SET vector_sum = ? WHERE lang = 'tr'", (damaged,))
            assert store.load_centroids(c, emb.model_id) is None and not store.languages_current(c, emb.model_id)
            got = [(h.doc_id, h.signals["dense"]) for h in index.recall(query, mode="dense", top=7, explain=True)]
            assert got == want  # (computed again before the query)
            assert dict(c.execute("SELECT lang, vector_sum FROM language_centroids")) == good
