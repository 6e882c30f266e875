"""Turkish loanwords meet their English words (dreamdb/cognates.py, rank.loanword_terms)."""

from __future__ import annotations

import pytest

import dreamdb
from dreamdb.cognates import MAX_SPELLINGS, english_spellings
from dreamdb.ranking import rank
from dreamdb.ranking.rank import loanword_terms, plan_query
from tests.conftest import write_doc

ENGLISH_NOTE = """---
title: Memory consolidation strategy
---

The consolidation system merges new learnings into core files; the strategy keeps the
configuration small and the television of the team calm.
"""


@pytest.mark.parametrize("root, english", [
    ("konsolidasyon", "consolidation"), ("sistem", "system"), ("strateji", "strategy"), ("teknoloji", "technology"),
    ("enformasyon", "information"), ("müzik", "music"), ("televizyon", "television"), ("pozitif", "positive"),
    ("kapitalizm", "capitalism"), ("şampiyon", "champion"), ("stadyum", "stadium"), ("üniversite", "university"),
    ("aksiyon", "action"), ("organizasyon", "organization"), ("konfigürasyon", "configuration"), ("kategori", "category"),
    # th is written t (QA round 157-D F5), in -tik too
    ("monolitik", "monolithic"), ("teori", "theory"), ("matematik", "mathematic"), ("metodoloji", "methodology"),
    ("patoloji", "pathology"), ("katolik", "catholic"), ("ortodoks", "orthodox"), ("empati", "empathy"),
    ("statik", "static"), ("deterministik", "deterministic"),
])
def test_loanword_spelling_rules_give_the_english_word(root, english):
    assert english in english_spellings(root)


def test_spellings_are_english_letters_bounded_and_fewest_changes_first():
    assert english_spellings("sistem")[0] == "system"  # one change
    assert english_spellings("doktor") == ("doctor", "dochtor", "dokthor", "docthor", "dochthor")  # k: c, ch; t: th
    assert all(s.isascii() and s.isalpha() for s in english_spellings("şampiyonluk"))  # ş never kept
    assert len(english_spellings("kikikikikikisyon")) == MAX_SPELLINGS
    assert english_spellings("kare") == ()  # too short: a false friend (square, not care)
    assert english_spellings("ağırlık") == ()  # ğ: dropping the silent letter pairs native words with English ones
    assert english_spellings("abc12") == english_spellings("привет") == ()


def test_the_c_kernel_spells_every_root_out_as_the_python_reference_does():
    """dreamdb.ranking._kernel.english_spellings gives the very tuples of cognates.english_spellings
    (its tables are a copy): over random roots of Turkish and other letters, roots with each ending,
    the en- prefix, ks, glide y, ş and ç, and words long enough to hit MAX_SPELLINGS."""
    import random

    from dreamdb.cognates import _ENDINGS
    from dreamdb.ranking.memory import KERNEL

    if KERNEL is None:
        pytest.skip("the C kernel is not built (no C compiler at install)")
    reference = english_spellings.__wrapped__  # uncached
    rng = random.Random(5)
    letters = "abcçdefgğhıijklmnoöprsştuüvyzâîûqwx"

    def word(lo, hi, alphabet=letters):
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))

    roots = [word(0, 16) for _ in range(20_000)]
    roots += [word(0, 8) + tr for tr, _en in _ENDINGS for _ in range(300)]
    roots += ["en" + word(1, 12, "kfijzyşçsaeo") + tr for tr in ("", "syon", "ik") for _ in range(1000)]
    roots += ["konsolidasyon", "enformasyon", "şampiyonluk", "kikikikikikisyon", "ş" * 40, "k" * 500 + "syon",
              "medya", "yoyoyo", "İstanbul", "Sistem", "sis tem", "sistem1", "ağırlık", "", "ksks", "enks"]
    differing = [r for r in roots if KERNEL.english_spellings(r) != reference(r)]
    assert differing == []
    assert sum(len(reference(r)) == MAX_SPELLINGS for r in roots) > 100  # the cap is exercised
    with pytest.raises(TypeError):
        KERNEL.english_spellings(b"sistem")
    # roots spelled out together, less the spellings that begin no head: cognates.loanword_spellings
    from dreamdb.cognates import loanword_spellings, term_heads

    named = ["system", "consolidation", "strategi", "music", "champion", "taxi", "stadium", "chemic"]
    heads = term_heads(named + [reference(r)[-1] for r in roots[::9] if reference(r)])  # some begin one
    groups = [tuple(roots[i:i + 4]) for i in range(0, len(roots), 4)]
    groups += [("sistemi", "sistem", "siste", "sist"), ("sistem", "sistem"), (), ("kisa",), ("şampiyon", "sampiyon")]
    for group in groups:
        assert KERNEL.loanword_spellings(group, heads) == loanword_spellings(group, heads), group
        assert KERNEL.loanword_spellings(list(group), None) == loanword_spellings(group), group
    kept = sum(len(loanword_spellings(g, heads)) for g in groups)
    assert 1000 < kept < sum(len(loanword_spellings(g)) for g in groups) / 2  # the heads keep some, not all
    assert KERNEL.loanword_spellings(("sistemi", "sistem", "sist"), heads) == ["systemi", "systhemi", "systemy",
                                                                                 "systhemy", "system", "systhem"]
    assert KERNEL.loanword_spellings(("sistemi", "sistem", "sist"), term_heads(["consolidation"])) == []
    assert KERNEL.loanword_spellings(iter(["sistem"]), ["syst", "x"]) == loanword_spellings(["sistem"], ["syst", "x"])
    assert KERNEL.loanword_spellings(["sistem"]) == loanword_spellings(["sistem"])  # heads may be left out
    for bad in ((("sistem", 1), heads), (("sistem",), 5), (5, None), ()):
        with pytest.raises(TypeError):
            KERNEL.loanword_spellings(*bad)


@pytest.mark.parametrize("kernel", [True, False, "built before loanword_spellings"])
def test_loanwords_resolve_alike_with_and_without_the_c_kernel(mixed_vault, kernel):
    import types

    from dreamdb.ranking.memory import KERNEL, MemoryEngine

    if kernel and KERNEL is None:
        pytest.skip("the C kernel is not built (no C compiler at install)")
    ix = dreamdb.open(mixed_vault)
    ix.sync()
    engine = MemoryEngine(ix.conn, kernel=bool(kernel))
    assert (engine.kernel is not None) == bool(kernel)
    if isinstance(kernel, str):  # a stale build (source updated, not reinstalled): the Python spellings
        engine.kernel = types.SimpleNamespace(near_top=KERNEL.near_top)
    plan = plan_query("konsolidasyon sistemi ve stratejisi nasıl çalışıyor", vocabulary=engine)
    assert plan.resolved == {"konsolidasyo": "consolidation", "sist": "system", "strateji": "strategi"}
    assert plan.by_lexicon == []  # loanword readings, not translations (explain: "another analysis")
    ix.close()


@pytest.fixture()
def mixed_vault(tiny_vault):
    write_doc(tiny_vault, "knowledge/consolidation.md", ENGLISH_NOTE)
    write_doc(tiny_vault, "knowledge/turkce.md", "---\ntitle: Toplantı notu\n---\n\nBütçe onaylandı ve ekip "
              "haftalık planı gözden geçirdi; yeni görevler dağıtıldı.\n")
    return tiny_vault


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_turkish_question_finds_the_english_note_through_its_loanwords(mixed_vault, engine):
    ix = dreamdb.open(mixed_vault, engine=engine)
    ix.sync()
    query = "konsolidasyon sistemi ve stratejisi nasıl çalışıyor"
    plan = plan_query(query, vocabulary=ix._vocabulary())
    assert plan.turkish
    assert {"consolidation", "system", "strategi"} <= set(plan.terms)
    assert set(plan.resolved.values()) >= {"consolidation", "system", "strategi"}
    hits = ix.recall(query, top=3, explain=True)
    assert hits[0].slug == "consolidation" and hits[0].score > 0
    assert any("→ consolidation" in n and "→ system" in n for n in ix.take_notes())
    ix.close()


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_turkish_t_reaches_an_english_th(mixed_vault, engine):
    """QA round 157-D F5: ``monolitik`` found nothing though a note says *monolithic*: Turkish writes th as t."""
    write_doc(mixed_vault, "knowledge/fanout.md", "---\ntitle: Fan-out\n---\n\nThe agent no longer runs one "
              "monolithic pass; the theory is that parallel passes finish sooner.\n")
    ix = dreamdb.open(mixed_vault, engine=engine)
    ix.sync()
    plan = plan_query("monolitik geçiş teorisi", vocabulary=ix._vocabulary())
    assert plan.turkish and {"monolithic", "theori"} <= set(plan.terms)
    assert ix.recall("monolitik geçiş teorisi", top=1)[0].slug == "fanout"
    ix.close()


def test_a_word_in_a_note_is_never_read_as_a_loanword(mixed_vault):
    write_doc(mixed_vault, "knowledge/turkce-sistem.md", "---\ntitle: Sistem notu\n---\n\nSistem her gece "
              "yedeklenir ve kayıtlar saklanır; bu sistem eski.\n")
    ix = dreamdb.open(mixed_vault)
    ix.sync()
    plan = plan_query("sistem nasıl yedekleniyor", vocabulary=ix._vocabulary())
    assert "system" not in plan.terms and not any(v == "system" for v in plan.resolved.values())
    ix.close()


def test_the_english_word_must_be_in_a_note_not_written_in_turkish(tiny_vault):
    # "strategy" occurs, but only quoted inside a Turkish note: it cannot stand for the Turkish word there
    write_doc(tiny_vault, "knowledge/turkce.md", "---\ntitle: Toplantı notu\n---\n\nEkip yeni planı (strategy "
              "başlığıyla) gözden geçirdi ve görevler dağıtıldı; bütçe onaylandı.\n")
    write_doc(tiny_vault, "knowledge/english.md", "---\ntitle: Release notes\n---\n\nThe build ships weekly.\n")
    ix = dreamdb.open(tiny_vault)
    ix.sync()
    vocab = ix._vocabulary()
    assert vocab.known(["strategi"]) == {"strategi"} and vocab.known(["strategi"], in_turkish=False) == set()
    assert "strategi" not in plan_query("stratejisi nasıl belirlendi", vocabulary=vocab).terms
    ix.close()


def test_loanwords_are_not_looked_up_for_english_queries_or_turkish_only_notes(tiny_vault, monkeypatch):
    calls = []
    monkeypatch.setattr(rank, "loanword_terms", lambda term, word, *rest: calls.append(word) or ())
    write_doc(tiny_vault, "knowledge/turkce.md", "---\ntitle: Toplantı notu\n---\n\nBütçe onaylandı ve ekip "
              "haftalık planı gözden geçirdi; yeni görevler dağıtıldı.\n")
    ix = dreamdb.open(tiny_vault)
    ix.sync()
    assert not ix._vocabulary().has_non_turkish
    plan_query("konsolidasyon sistemi nasıl çalışıyor", vocabulary=ix._vocabulary())
    assert calls == []  # nothing English to find
    write_doc(tiny_vault, "knowledge/english.md", ENGLISH_NOTE)
    ix.sync()
    assert ix._vocabulary().has_non_turkish
    plan_query("the consolidasyon of teams", vocabulary=ix._vocabulary())  # analysed as English
    assert calls == []
    plan_query("konsolidasyonu nasıl çalışıyor", vocabulary=ix._vocabulary())
    assert calls == ["konsolidasyonu", "çalışıyor"]  # every word no note holds
    ix.close()


def test_roots_cover_a_loanword_the_turkish_stemmer_cut_short():
    from dreamdb.analyzer import stem

    assert stem("sistemi", True) == "sist"  # "-em" read as a possessive suffix
    assert "system" in loanword_terms(stem("sistemi", True), "sistemi")
    assert "consolidation" in loanword_terms(stem("konsolidasyonu", True), "konsolidasyonu")
    assert stem("stadyumda", True) == "stadi"  # not a prefix of the word: roots down to where they part
    assert "stadium" in loanword_terms("stadi", "stadyumda")
    # left whole by Snowball (its vowels break vowel harmony): its last letters are cut too (QA round 24)
    assert stem("performansı", True) == "performansı" and "performanc" in loanword_terms("performansı", "performansı")


def test_turkish_questions_reach_english_words_of_the_real_vault(real_vault_copy):
    ix = dreamdb.open(real_vault_copy)  # a copy: the shared vault is never written to (its .dreamdb/ index)
    ix.sync()
    vocab = ix._vocabulary()
    plan = plan_query("konfigürasyon dosyası ve versiyon stratejisi", vocabulary=vocab)
    assert {"configuration", "version", "strategi"} <= set(plan.terms)
    assert vocab.known(["configuration", "version", "strategi"], in_turkish=False) == {"configuration", "version", "strategi"}
    ix.close()


def test_loanwords_are_tried_for_the_first_words_only(mixed_vault, monkeypatch):
    seen = []
    real = rank.loanword_terms
    monkeypatch.setattr(rank, "loanword_terms", lambda term, word, *rest: seen.append(word) or real(term, word, *rest))
    ix = dreamdb.open(mixed_vault)
    ix.sync()
    words = " ".join(f"kelimeçik{chr(97 + i)}ler" for i in range(rank.MAX_SPELLED_WORDS + 4))
    plan = plan_query(words + " konsolidasyon", vocabulary=ix._vocabulary())
    assert len(seen) == rank.MAX_SPELLED_WORDS and "konsolidasyon" not in seen  # a pasted text stays cheap
    assert "consolidation" not in plan.terms
    assert "consolidation" in plan_query("konsolidasyon " + words, vocabulary=ix._vocabulary()).terms
    ix.close()


def test_y_is_read_as_a_turkish_glide_only_inside_a_word_before_a_vowel():
    assert "stadium" in english_spellings("stadyum") and "media" in english_spellings("medya")
    assert "part" not in english_spellings("party") and "ourselves" not in english_spellings("yourselves")


QA_NOTE = """---
title: Consolidation
---

The consolidation strategy system merges memory notes nightly. Parts list. We are ready for review.
"""


def test_a_name_with_turkish_letters_does_not_make_an_english_query_turkish_for_loanwords(mixed_vault):
    """QA round 22: "Müller party invitation" (one word in three has a Turkish letter, so the query is
    analysed as Turkish) read "party" as a loanword of "part"."""
    write_doc(mixed_vault, "knowledge/qa.md", QA_NOTE)
    ix = dreamdb.open(mixed_vault)
    ix.sync()
    vocab = ix._vocabulary()
    for query in ("Müller party invitation", "Gödel reading group"):
        plan = plan_query(query, vocabulary=vocab)
        assert plan.turkish and plan.resolved == {}, query  # (no English stopword: every word counts)
        assert ix.recall(query) == [], query  # nothing in the vault is about parties or reading
    assert "consolidation" in plan_query("Müller konsolidasyon sürecini nasıl anlattı", vocabulary=vocab).terms
    ix.close()


def test_a_capitalised_word_opening_a_turkish_query_that_a_turkish_note_holds_is_the_query_s_own(mixed_vault):
    """QA round 149-G F1, without a lexicon: a word capitalised where the query opens, read as an ordinary word
    (its Turkish reading is a Turkish note's word), was still left out as a name in deciding whether the query reads
    as Turkish: ``Şifreleme konfigurasyonu``, its one word with a Turkish letter gone, was not tried as loanwords,
    and missed the note on configuration that ``şifreleme konfigurasyonu`` finds."""
    write_doc(mixed_vault, "knowledge/config.md", "---\ntitle: Configuration\n---\n\nThe configuration of the "
              "encryption keys lives in one file.\n")
    write_doc(mixed_vault, "knowledge/anahtar.md", "---\ntitle: Anahtarlar\n---\n\nŞifreleme anahtarları her ay "
              "yenilenir; şifreleme için tek dosya var.\n")
    for engine in ("memory", "sql"):
        with dreamdb.open(mixed_vault, engine=engine) as ix:
            ix.sync()
            for query in ("Şifreleme konfigurasyonu", "şifreleme konfigurasyonu"):
                plan = plan_query(query, vocabulary=ix._vocabulary())
                assert plan.resolved == {"konfigurasyo": "configuration"}, (engine, query)
                assert "config" in [h.slug for h in ix.recall(query, top=3)], (engine, query)
            # a name no Turkish note holds, opening the query, is still a name: no loanwords
            assert plan_query("Müller konfigurasyonu", vocabulary=ix._vocabulary()).resolved == {}, engine


def test_a_capital_i_opening_a_turkish_query_that_a_turkish_note_holds_as_dotless_is_the_query_s_own(mixed_vault):
    """QA round 150-A F1, without a lexicon: a word opening the query with a capital ``I`` (``Işık``, Turkish ``ışık``,
    light) was never read as an ordinary word, though a Turkish note holds it, so ``Işık konfigurasyonu`` was read as
    a name and ``konfigurasyonu``, not as Turkish, and not tried as loanwords: it missed the note on configuration
    that ``ışık konfigurasyonu`` finds. Read with its ``I`` as ``ı``, the word is the query's own, and its term is the
    lowercase query's."""
    write_doc(mixed_vault, "knowledge/config.md", "---\ntitle: Configuration\n---\n\nThe configuration of the "
              "office lamps lives in one file.\n")
    write_doc(mixed_vault, "knowledge/isik.md", "---\ntitle: Lambalar\n---\n\nKoridordaki ışık her gece açık "
              "kalıyor; ışık ayarı için tek dosya var.\n")
    for engine in ("memory", "sql"):
        with dreamdb.open(mixed_vault, engine=engine) as ix:
            ix.sync()
            for query in ("Işık konfigurasyonu", "ışık konfigurasyonu"):
                plan = plan_query(query, vocabulary=ix._vocabulary())
                assert plan.resolved == {"konfigurasyo": "configuration"}, (engine, query)
                assert plan.terms == ["ışık", "configuration"], (engine, query)
                assert [h.slug for h in ix.recall(query, top=2)] == ["isik", "config"], (engine, query)
            # a name no Turkish note holds, with a capital I, is still a name: no loanwords
            assert plan_query("Işıl konfigurasyonu", vocabulary=ix._vocabulary()).resolved == {}, engine


LICENSE_NOTE = """---
title: Licensing policy
---

Delete the license file only after the release; the license file must ship with every package.
"""


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_name_with_turkish_letters_leaves_an_english_query_english(mixed_vault, engine):
    """QA round 23: "Gülşen: delete the license file" was analysed as Turkish (one word in five has a
    Turkish letter): "file" and "delete" became the Turkish stems "fil" and "dele", and Turkish notes
    holding those strings ranked first."""
    write_doc(mixed_vault, "knowledge/licensing.md", LICENSE_NOTE)
    write_doc(mixed_vault, "knowledge/fil.md", "---\ntitle: Hayvanat bahçesi\n---\n\nFil ve zürafa dele dele "
              "bakıyordu; fil çok büyüktü ve bahçede dolaştı.\n")
    ix = dreamdb.open(mixed_vault, engine=engine)
    for query in ("Gülşen: delete the license file", "Ayşe, please delete the license file",  # QA round 24:
                  "ÖZGE: delete the license file", "please ask özge to delete the license file", "delete the façade license file"):
        plan = plan_query(query, vocabulary=ix._vocabulary())
        assert not plan.turkish and {"file", "licens"} <= set(plan.terms), query
        slugs = [h.slug for h in ix.recall(query, top=5)]
        assert slugs[0] == "licensing" and "fil" not in slugs, query
    for query in ("Şifreleme", "Yedekleme Şifreleme", "Güvenlik açıkları nelerdi", "Hangi BM sekreteri Harvard'a gitti",
                  "Doğu Almanyanın son Başbakanı kimdi"):  # no English stopword: every word counts, capitals too
        assert plan_query(query).turkish, query
    assert not plan_query("The license file Gülşen deleted").turkish
    for query in ("the dashboard'da neden hata var", "API key nasıl alınır with curl"):  # more Turkish than English
        assert plan_query(query).turkish, query
    ix.close()


def test_a_turkish_question_in_capitals_is_read_as_turkish(mixed_vault):
    """QA round 22: lowercasing hides Turkish capitals (İ → i, NASIL → nasil), so "KONSOLİDASYON NASIL"
    read as English and found nothing; a dotted capital İ in a word written in capitals is Turkish."""
    ix = dreamdb.open(mixed_vault)
    ix.sync()
    vocab = ix._vocabulary()
    for query in ("KONSOLİDASYON NASIL", "STRATEJİSİ NASIL"):
        plan = plan_query(query, vocabulary=vocab)
        assert plan.turkish and set(plan.resolved.values()) & {"consolidation", "strategi"}, query
        assert [h.slug for h in ix.recall(query)] == ["consolidation"], query
    assert not plan_query("İzmir weather report", vocabulary=vocab).turkish  # a name, not a capitalised sentence
    ix.close()


# -- the vocabulary's heads: roots and spellings that can reach no English term are not analysed -------

def test_english_stems_keep_the_start_the_heads_rely_on():
    """A stem of at least HEAD_LETTERS letters begins the word it came from (english_stem cuts the end
    and may add one letter): begins_one(word, term_heads([stem])) for inflected words of every rule."""
    import random

    from dreamdb.cognates import HEAD_LETTERS, begins_one, term_heads
    from dreamdb.stemming import _EXCEPTIONS, english_stem

    bases = ["hope", "hop", "plan", "agree", "feed", "cry", "try", "fly", "tie", "die", "play", "stay", "bless",
             "pass", "rate", "trouble", "size", "happy", "fall", "tell", "fill", "control", "conflate", "system",
             "strategy", "taxi", "media", "consolidation", "university", "dye", "yield", "eye", "sky", "gene"]
    suffixes = ["", "s", "es", "'s", "s'", "ed", "ing", "ings", "ingly", "edly", "eedly", "ies", "ied", "ly", "e", "l", "y"]
    rng = random.Random(11)
    words = [b + s for b in bases for s in suffixes] + list(_EXCEPTIONS)
    words += ["".join(rng.choice("aeiouybcdeglnrsty") for _ in range(rng.randint(4, 14))) for _ in range(3000)]
    checked = 0
    for word in words:
        t = english_stem(word)
        if len(t) >= HEAD_LETTERS and not word.startswith("'"):
            checked += 1
            assert begins_one(word, term_heads([t])), (word, t)
    assert checked > 3000


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_heads_leave_every_loanword_outcome_as_it_was(mixed_vault, engine):
    from dreamdb.analyzer import stem
    from dreamdb.cognates import begins_one, term_heads

    write_doc(mixed_vault, "knowledge/taxi.md", "---\ntitle: Travel\n---\n\nA taxi to the stadium; the media "
              "version of the music television information.\n")
    ix = dreamdb.open(mixed_vault, engine=engine)
    ix.sync()
    ix.warm()
    vocab = ix._vocabulary()
    heads = getattr(vocab, "loanword_heads", None)
    if engine == "sql":
        assert heads is None  # the SQL engine spells every root out: same outcomes, more work
        heads = term_heads(t for (t,) in ix.conn.execute("SELECT DISTINCT term FROM postings"))
    else:
        assert heads is not None and "taxi"[:3] in heads and "stad" in heads
    english = vocab.known([w for (w,) in ix.conn.execute("SELECT DISTINCT term FROM postings")], in_turkish=False)
    words = ["konsolidasyonu", "sistemi", "stratejisi", "taksiye", "stadyumda", "medyada", "versiyonu", "müziği",
             "televizyonda", "enformasyonu", "görüşmeler", "toplantıda", "bütçesi", "haftalık"]
    for w in words:
        t = stem(w, True)
        full = [x for x in loanword_terms(t, w) if x in english]
        assert [x for x in loanword_terms(t, w, heads) if x in english] == full, w
    native = [s for w in ("görüşmeler", "toplantıda", "bütçesi", "haftalık", "yazılımcı") for s in english_spellings(w)]
    assert len(native) > 20 and sum(begins_one(s, heads) for s in native) < len(native) / 4  # never analysed
    plan = plan_query("taksiye binip stadyumda medyanın konsolidasyonu nasıl", vocabulary=vocab)
    assert plan.turkish
    assert {"taxi", "stadium", "media", "consolidation"} <= set(plan.terms)
    ix.close()


ASCII_NOTES = [("taxi", "Taxi", "The taxi fare to the airport."), ("stadium", "Stadium", "How to get to the stadium by metro."),
               ("config", "System configuration", "Install the configuration file; the system loads it."),
               ("tv", "Television", "The television in the lobby.")]


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_turkish_typed_without_its_letters_reaches_english_notes_through_loanwords(mixed_vault, engine):
    """QA round 23: "taksiye binmek istiyorum" (correct Turkish without a Turkish letter) reads as English,
    so its loanwords were never looked up. A query none of whose words is in a non-Turkish note now is."""
    for slug, title, body in ASCII_NOTES:
        write_doc(mixed_vault, f"knowledge/{slug}.md", f"---\ntitle: {title}\n---\n\n{body}\n")
    ix = dreamdb.open(mixed_vault, engine=engine)
    for query, slug, said in (("taksiye binmek istiyorum", "taxi", "→ taxi"), ("stadyuma nasil gidilir", "stadium", "→ stadium"),
                              ("SISTEM KONFIGURASYONU", "config", "→ configuration"), ("televizyonda", "tv", "→ television")):
        plan = plan_query(query, vocabulary=ix._vocabulary())
        assert not plan.turkish, query  # read as English: no Turkish letter, no Turkish stopword
        hits = ix.recall(query, top=2, explain=True)
        assert hits and hits[0].slug == slug, query
        assert any(said in n for n in ix.take_notes()), query
    from dreamdb.ranking.rank import turkish_looking

    assert turkish_looking("taksiye") and not turkish_looking("reading")  # ("reading" would become "ready")
    # a query with a word of an English note is English: its unknown words are not read as loanwords
    assert plan_query("the taxi to the stadyum", vocabulary=ix._vocabulary()).resolved == {}
    assert ix.recall("zebra quagga") == []
    ix.close()
