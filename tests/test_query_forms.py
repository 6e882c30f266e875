"""Query words the index knows under another analysis (language guess, name reading, folded I).

A short query carries little evidence of its language, and a query's case says little about
whether a word is a name, while documents are analysed with the whole text's evidence. These
tests pin the failures a new user met (QA, session 6) to the rules that fix them.
"""

from __future__ import annotations

import pytest

import dreamdb
from dreamdb.analyzer import alternate_terms, analyze, diacritic_terms, query_words
from dreamdb.ranking.rank import plan_query
from dreamdb.store.sync import document_terms
from dreamdb.vault.parse import Document
from tests.conftest import write_doc

TURKISH_NOTE = """---
title: Veritabanı yedekleme politikası
tags: [yedekleme, güvenlik]
---

Şifreleme anahtarı kasada tutulur, yedekler her gece alınır.
Işık sensörü kayıtları da yedeklenir.
"""

ENGLISH_NOTE = """---
title: Bank teller scheduling
---

The teller rota is published weekly; Miller approves the changes.
"""


@pytest.fixture()
def index(tiny_vault):
    write_doc(tiny_vault, "knowledge/turkce-not.md", TURKISH_NOTE)
    write_doc(tiny_vault, "knowledge/teller.md", ENGLISH_NOTE)
    write_doc(tiny_vault, "knowledge/miller-notu.md",
              "---\ntitle: Toplantı notu\n---\n\nMiller'ın önerisi kabul edildi ve bütçe onaylandı.\n")
    ix = dreamdb.open(tiny_vault)
    ix.sync()
    yield ix
    ix.close()


def _slugs(ix, query, **kw):
    return [h.slug for h in ix.recall(query, top=5, **kw)]


def test_capitalised_turkish_word_is_indexed_under_both_analyses():
    stacked: list[str] = []
    terms = analyze("Şifreleme anahtarı ve Miller'ın kitabı", turkish=True, stacked=stacked)
    # primary: the name reading; the suffix after the apostrophe is no word (QA 51: it was the term "ın")
    assert terms == ["şifrelem", "anahtar", "miller", "kitap"]
    assert stacked == ["şifrel", "mil"]  # what a lowercase Turkish query word analyses to
    assert analyze("şifreleme", turkish=True) == ["şifrel"]


def test_stacked_terms_add_frequency_not_length():
    doc = Document(type="knowledge", slug="x", source_path="knowledge/x.md", title="Şifreleme notları",
                   description="", tags=[], body="şifreleme anahtarı ve şifreleme kuralları")
    postings, lengths, turkish = document_terms(doc)
    assert turkish
    assert lengths[0] == 2  # "Şifreleme notları": two words, whatever is stacked
    assert postings["şifrel"][:4] == [1, 0, 0, 2]  # title (stacked) + body twice
    assert postings["şifrelem"][:4] == [1, 0, 0, 0]


def test_alternate_terms_undo_one_guess_each():
    assert query_words("yedekleme", False) == [("yedeklem", "yedekleme", False)]
    assert alternate_terms("yedekleme", False, False) == (("yedekl", True),)  # English guess → Turkish
    assert alternate_terms("ışık", False, True)[0] == ("işık", False)  # a folded capital I
    # QA round 15: one term can be both readings; the English one must stay, for English notes
    assert {("sıcaklık", False), ("sıcaklık", True)} <= set(alternate_terms("sicaklik", True, False)) or \
        ("sıcaklık", False) in alternate_terms("sicaklik", True, False)
    assert alternate_terms("miller", True, True)[0] == ("mil", True)  # name reading → Turkish


@pytest.mark.parametrize("query", ["yedekleme", "şifreleme", "ışık", "Işık", "yedekler", "veritabanı",
                                   "sifreleme", "guvenlik", "isik", "veritabani politikasi"])
def test_turkish_words_find_the_note_that_contains_them(index, query):
    assert _slugs(index, query)[:1] == ["turkce-not"]


def test_known_word_is_never_changed(index):
    # 'teller' is an English term of the index; its Turkish reading ('tel') must not replace it
    plan = plan_query("teller", vocabulary=index._vocabulary())
    assert plan.terms == ["teller"] and plan.resolved == {}
    assert _slugs(index, "teller") == ["teller"]


def test_unknown_word_resolves_to_the_indexed_form(index):
    plan = plan_query("yedekleme politikası", vocabulary=index._vocabulary())
    assert plan.turkish and "yedekl" in plan.terms
    plan = plan_query("yedekleme", vocabulary=index._vocabulary())
    assert plan.terms == ["yedekl"] and plan.resolved == {"yedeklem": "yedekl"}
    assert plan_query("yedekleme").terms == ["yedeklem"]  # without the index: analysis only
    assert plan_query("zzqx", vocabulary=index._vocabulary()).terms == ["zzqx"]  # nothing better: kept


def test_names_still_match_across_languages(index):
    # English query, name in Turkish text; Turkish query word for an English note's name
    assert "miller-notu" in _slugs(index, "Miller")
    assert "teller" in _slugs(index, "Miller'ın rotası")


def test_engines_resolve_alike(index, tiny_vault):
    sql = dreamdb.open(tiny_vault, engine="sql")
    try:
        for q in ("yedekleme", "ışık", "hedefler", "Miller", "teller scheduling"):
            assert [h.doc_id for h in sql.recall(q)] == [h.doc_id for h in index.recall(q)]
            assert [h.score for h in sql.recall(q)] == pytest.approx([h.score for h in index.recall(q)])
    finally:
        sql.close()


def test_explain_names_the_resolution(index):
    index.take_notes()
    index.recall("yedekleme", explain=True)
    assert any("yedeklem → yedekl" in n for n in index.take_notes())


def test_snippet_finds_capitalised_turkish_word(index):
    hit = index.recall("şifreleme")[0]
    assert "Şifreleme anahtarı" in hit.snippet


def test_diacritic_spellings_fewest_changes_first():
    assert diacritic_terms("guvenlik")[:2] == ("guvenlık", "güvenlik")
    assert diacritic_terms("yedekler") == ()  # no letter Turkish writes otherwise
    assert diacritic_terms("şifre") == ()  # already Turkish
    assert diacritic_terms("ioioioi") == ()  # 2^7 spellings: not tried


def test_turkish_spelling_is_the_word_as_meant_keeping_vowel_harmony():
    """The spelling with Turkish letters of a word typed without them, among those an index holds."""
    from dreamdb.analyzer import harmony_breaks, turkish_spelling, turkish_spellings

    assert [harmony_breaks(w) for w in ("yılında", "yılinda", "kaç", "televizyon", "")] == [0, 2, 0, 1, 0]
    assert turkish_spellings("kac") == [("kaç", "kaç")] and turkish_spellings("şifre") == []
    assert turkish_spelling("guvenligi", {"güvenlik"}) == "güvenliği"
    assert turkish_spelling("kac", {"kaç"}) == "kaç"
    # several spellings share the analysis (the suffix is stripped either way): the harmonic one
    assert turkish_spelling("yilinda", {"yıl"}) == "yılında" and stem_of("yılinda") == stem_of("yılında") == "yıl"
    assert turkish_spelling("tarafindan", {"taraf"}) == "tarafından"
    # or the stem is cut short by a suffix typed without its letters (sırasinda → sıras): still the harmonic one
    assert stem_of("sırasinda") == "sıras" and turkish_spelling("sirasinda", {"sıras", "sıra"}) == "sırasında"
    assert turkish_spelling("guvenligi", {"securiti"}) is None  # no spelling of it is analysed so
    assert turkish_spelling("yedekler", {"yedek"}) is None  # no letter Turkish writes otherwise
    assert turkish_spelling("şifre", {"şifr"}) is None  # already Turkish


def test_typed_without_turkish_letters_needs_turkish_stopwords():
    from dreamdb.analyzer import raw_tokens, typed_without_turkish_letters

    def typed(text: str) -> bool:
        return typed_without_turkish_letters(raw_tokens(text))

    assert typed("sunucu guvenligi nasil saglaniyor") and typed("hangi takim kazandi")
    assert typed("kayittan once odeme yapiliyor mu")  # once (önce) is no English evidence here
    assert not typed("sunucu güvenliği nasıl sağlanıyor")  # its letters typed
    assert not typed("wind turbine status") and not typed("sunucu guvenligi")  # no evidence either way
    assert not typed("who checks the sunucu ne zaman")  # as many English stopwords as Turkish ones


def stem_of(word: str) -> str:
    from dreamdb.analyzer import stem

    return stem(word, True)


def _spelled_reference(word: str) -> tuple[str, ...]:
    """diacritic_terms as first written: every spelling (ğ only after a vowel) through stem(), one by one,
    fewest changed letters first, then alphabetical; first occurrences kept."""
    from itertools import product

    from dreamdb.analyzer import _ASCII_TO_TURKISH, _VOWELS, stem

    if not word.isascii() or not word.isalpha():
        return ()
    choices = [(c, _ASCII_TO_TURKISH[c]) if c in _ASCII_TO_TURKISH and (c != "g" or (i and word[i - 1] in _VOWELS))
               else (c,) for i, c in enumerate(word)]
    if sum(len(c) > 1 for c in choices) > 6:
        return ()
    spellings = sorted((sum(a != b for a, b in zip(s, word)), "".join(s)) for s in product(*choices))
    return tuple(dict.fromkeys(stem.__wrapped__(s, True) for n, s in spellings if n))


def test_diacritic_rounds_analyse_every_spelling_as_stem_does():
    """The rounds stem all spellings of a round with one Snowball call and the English step once per
    root: the terms, and their order, are those of stem() on each spelling in turn."""
    from dreamdb.analyzer import diacritic_round, diacritic_rounds, raw_tokens

    text = TURKISH_NOTE + " güneşi izleyen paneller kuruldu; dünya çapında büyüme yavaşladı, yılın başında " \
        "veriler açıklandı. doğru görgü ağaç soğuk iç göç öğün şiş uçuş çiğ gıcırdıyor"
    words = {w.translate(str.maketrans("çğıöşü", "cgiosu")) for w in raw_tokens(text)} | {"cabin", "guvenlik", "ioioio", "sogus", "cig", "ig", "og"}
    checked = 0
    for w in sorted(words):
        assert diacritic_terms(w) == _spelled_reference(w), w
        rounds = [diacritic_round(w, n) for n in range(1, diacritic_rounds(w) + 1)]
        assert tuple(dict.fromkeys(t for r in rounds for t in r)) == diacritic_terms(w)
        checked += bool(diacritic_terms(w))
    assert checked > 25


def test_soft_g_is_only_spelled_after_a_vowel():
    """Turkish writes ğ only after a vowel: a g that starts the word or follows a consonant stays g
    (half the spellings of such a word, each a Turkish stemmer call, were never Turkish)."""
    assert "doğru" in diacritic_terms("dogru")
    assert diacritic_terms("gelir") == ("gelır",)  # not ğelir
    assert not any("ğ" in t for t in diacritic_terms("ingilizce"))  # after n
    assert "görgü" in diacritic_terms("gorgu") and not any(t.startswith("ğ") for t in diacritic_terms("gorgu"))


def test_ascii_spelling_is_not_tried_without_turkish_notes(tiny_vault):
    write_doc(tiny_vault, "knowledge/en.md", "---\ntitle: Guide\n---\nThe word süs appears once in this long enough plain English text about ordinary release checklists and build notes.\n")
    ix = dreamdb.open(tiny_vault)
    ix.sync()
    assert not ix._vocabulary().has_turkish
    assert plan_query("sus", vocabulary=ix._vocabulary()).terms == ["sus"]  # 'süs' is in the index, but no Turkish note


def test_a_slug_alone_does_not_hide_the_turkish_spelling(tiny_vault):
    # The slug 'sifreleme' (ASCII, as Turkish titles get slugged) is indexed, the word itself is 'şifreleme'.
    write_doc(tiny_vault, "knowledge/sifreleme.md", "---\ntitle: Şifreleme anahtarı yönetimi\n---\n"
              "Anahtarlar her ay döndürülür ve kasada saklanır.\n")
    write_doc(tiny_vault, "knowledge/zebra.md", "---\ntitle: Zebra balığı\n---\nZebrafish şifreleme notları burada.\n")
    ix = dreamdb.open(tiny_vault)
    hits = ix.recall("sifreleme", top=5)
    assert {h.slug for h in hits} == {"sifreleme", "zebra"}
    assert all(h.score > 0 for h in hits)
    assert plan_query("sifreleme", vocabulary=ix._vocabulary()).terms == ["şifrel"]


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_word_with_turkish_letters_finds_the_note_typed_without_them(tiny_vault, engine):
    """QA round 135-C F5: a note typed without Turkish letters ("dagitim sureci") was found by an ASCII query, never
    by one with the letters ("dağıtım süreci"): a word with Turkish letters that no note holds is looked up as its
    ASCII spelling, analysed as a Turkish note's word is (``gocu`` is the term ``goç``), where a Turkish note holds
    it; the word's own forms count with it (``kullanıç`` of a note writing "Kullanıcıların")."""
    write_doc(tiny_vault, "knowledge/dagitim-sureci.md", "---\ntitle: Dagitim sureci notlari\ndescription: Sunucuya "
                                                         "yukleme adimlari ve veritabani gocu.\n---\nBu not Turkce "
                                                         "klavye olmadan yazildi. Veritabani gocu sirasinda uygulama "
                                                         "bakim moduna alinir ve kullanicilara bildirim gonderilir.\n")
    write_doc(tiny_vault, "knowledge/arama-loglari.md", "---\ntitle: Arama logları\ndescription: Kullanıcıların "
                                                        "yaptığı aramaların kaydı.\n---\nHer arama sorgusu ClickHouse'a "
                                                        "yazılır.\n")
    write_doc(tiny_vault, "knowledge/doviz.md", "---\ntitle: Döviz kuru servisi\n---\nDöviz kurları her sabah "
                                                "çekilir ve kur tablosuna yazılır.\n")
    with dreamdb.open(tiny_vault, lexicon=None, engine=engine) as ix:
        ix.sync()
        voc = ix._vocabulary()
        plan = plan_query("dağıtım süreci", vocabulary=voc)
        assert plan.turkish and plan.resolved == {"dağıt": "dagit", "süreç": "sureç"}
        assert [h.doc_id for h in ix.recall("dağıtım süreci")] == ["knowledge/dagitim-sureci"]
        assert plan_query("göçü", vocabulary=voc).resolved == {"göç": "goç"}
        plan = plan_query("kullanıcılara bildirim", vocabulary=voc)
        assert plan.resolved["kullanıcı"] == "kullanici" and plan.forms == {"kullanici": ("kullanıç",)}
        assert [h.doc_id for h in ix.recall("kullanıcılara bildirim")] == ["knowledge/dagitim-sureci",
                                                                           "knowledge/arama-loglari"]
        assert plan_query("döviz kuru", vocabulary=voc).resolved == {}  # a word a note holds is never changed
    # an ASCII spelling that Snowball cuts otherwise is another word's (tanindi → tan), and is not looked up
    from dreamdb.ranking.rank import ascii_term

    assert ascii_term("tanındı") is None and ascii_term("dağıtım") == "dagit" and ascii_term("sunucu") is None


def test_english_words_take_turkish_readings_only_from_turkish_notes(tiny_vault):
    write_doc(tiny_vault, "knowledge/budget.md", "---\ntitle: Budget\n---\nThe cost of the festival and its design.\n")
    write_doc(tiny_vault, "knowledge/festival.md", "---\ntitle: Festival design\n---\nStage design and lighting plans.\n")
    write_doc(tiny_vault, "knowledge/not.md", "---\ntitle: Toplantı notu\n---\nBütçe ve tasarım görüşüldü, kararlar alındı.\n")
    ix = dreamdb.open(tiny_vault)
    ix.sync()
    assert ix._vocabulary().has_turkish
    # 'costume' is in no text; its Turkish stem 'cost' is, but only in an English note: not taken
    plan = plan_query("costume design", vocabulary=ix._vocabulary())
    assert plan.terms == ["costum", "design"] and plan.resolved == {}
    assert [h.slug for h in ix.recall("costume design")][:2] == ["festival", "budget"]


def test_turkish_spellings_tried_for_the_first_words_only(index, monkeypatch):
    import dreamdb.ranking.rank as R

    seen = []
    real = R.diacritic_round
    monkeypatch.setattr(R, "diacritic_round", lambda w, n: seen.append(w) or real(w, n))
    words = " ".join(f"zqcg{'' if i < 10 else 'x' * (i // 10)}{chr(97 + i % 10)}" for i in range(40))
    plan_query(words, vocabulary=index._vocabulary())
    assert len(set(seen)) == R.MAX_SPELLED_WORDS


def test_sql_vocabulary_asks_for_turkish_documents_through_an_index(index):
    plan = " ".join(str(r) for r in index.conn.execute("EXPLAIN QUERY PLAN SELECT EXISTS (SELECT 1 FROM documents WHERE turkish)"))
    assert "documents_turkish" in plan  # migration 006: no scan of the documents (bodies) per CLI recall
    from dreamdb.ranking.rank import SqlVocabulary

    assert SqlVocabulary(index.conn).has_turkish is True


def test_english_words_in_an_english_query_are_not_spelled_in_turkish(tiny_vault):
    write_doc(tiny_vault, "knowledge/crew.md", "---\ntitle: Crew rota\n---\nThe crew rota for the river trips and flooding drills.\n")
    write_doc(tiny_vault, "knowledge/tr.md", "---\ntitle: Büyüme\n---\nDünya çapında büyüme yavaşladı; yılın başında veriler açıklandı.\n")
    ix = dreamdb.open(tiny_vault)
    ix.sync()
    voc = ix._vocabulary()
    # "crew"/"river" are in an English note: the query is English, "cabin"/"basin" stay as typed
    assert plan_query("cabin crew", vocabulary=voc).resolved == {}
    assert plan_query("river basin flooding", vocabulary=voc).resolved == {}
    assert [h.slug for h in ix.recall("river basin flooding")] == ["crew"]
    # a query with no English evidence is still spelled out
    assert plan_query("dunya capinda", vocabulary=voc).terms == [t for t in plan_query("dünya çapında", vocabulary=voc).terms]


@pytest.mark.parametrize("query", ["Işık", "DOLAŞIYOR", "KIRMIZI", "ışık", "kırmızı"])
def test_a_capital_i_typed_for_turkish_dotless_i_finds_the_word(tiny_vault, query):
    """QA round 14: the dotless-ı reading of a capital I was indexed for documents, not tried for queries."""
    import dreamdb

    write_doc(tiny_vault, "knowledge/tr.md", "Odada ışık yok ve dolaşıyor kırmızı kedi\n")
    write_doc(tiny_vault, "knowledge/en.md", "An English note about light and a red cat\n")
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall(query)] == ["knowledge/tr"]
    index.close()


def test_an_all_capitals_turkish_word_finds_it_in_an_english_note(tiny_vault):
    """QA round 15: SICAKLIK missed an English note quoting sıcaklık (the dotless reading was tried only over
    an index with Turkish notes, and only as Turkish)."""
    write_doc(tiny_vault, "knowledge/en.md", "An English note mentioning sıcaklık and yazılım words\n")
    index = dreamdb.open(tiny_vault)
    for query in ("SICAKLIK", "YAZILIM", "sıcaklık"):
        assert [h.doc_id for h in index.recall(query)] == ["knowledge/en"], query
    index.close()


def test_a_word_is_spelled_out_once_per_index_state(index, tiny_vault, monkeypatch):
    """Each unknown word's outcome is remembered by the memory engine until the index changes."""
    import dreamdb.ranking.rank as R

    seen = []
    real = R.diacritic_round
    monkeypatch.setattr(R, "diacritic_round", lambda w, n: seen.append((w, n)) or real(w, n))
    first = plan_query("sifreleme gunesi", vocabulary=index._vocabulary())
    assert list(first.resolved.values()) == ["şifrel"] and len(first.terms) == 2  # no note holds güneş yet
    # şifreleme is found among the spellings with one changed letter: no further round is analysed;
    # gunesi (u, s, i) is tried in all three rounds
    assert seen == [("sifreleme", 1), ("gunesi", 1), ("gunesi", 2), ("gunesi", 3)]
    again = plan_query("gunesi sifreleme", vocabulary=index._vocabulary())
    assert again.resolved == first.resolved and len(seen) == 4  # nothing spelled out twice
    write_doc(tiny_vault, "knowledge/gunes.md", "---\ntitle: Güneş paneli\n---\nGüneşi izleyen paneller kuruldu.\n")
    index.sync()
    after = plan_query("gunesi", vocabulary=index._vocabulary())
    assert after.terms == analyze("güneşi", turkish=True) and [h.slug for h in index.recall("gunesi")] == ["gunes"]


def test_a_short_english_note_naming_someone_in_turkish_letters_is_indexed_as_english(tiny_vault):
    """XQuAD's English sentences (``In 1186, Temüjin was elected khan of the Mongols.``) were analysed
    as Turkish for one name among ten words: ``elected`` became a Turkish stem, not English ``elect``."""
    write_doc(tiny_vault, "knowledge/khan.md", "---\nname: Khan\n---\nIn 1186, Temüjin was elected khan of the Mongols.\n")
    write_doc(tiny_vault, "knowledge/seçim.md", "---\nname: Seçim\n---\nTemüjin 1186'da Moğolların hanı seçildi.\n")
    ix = dreamdb.open(tiny_vault)
    try:
        ix.sync()
        assert dict(ix.conn.execute("SELECT slug, turkish FROM documents")) == {"khan": 0, "seçim": 1}
        hits = ix.recall("who was elected", top=3)
        assert [h.slug for h in hits] == ["khan"] and hits[0].score > 0
        assert "elect" in {t for (t,) in ix.conn.execute("SELECT term FROM postings p JOIN documents d ON d.id = p.doc"
                                                       " WHERE d.slug = 'khan'")}
    finally:
        ix.close()



@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_turkish_query_reaches_the_notes_writing_its_word_in_the_form_stemmed_apart(tiny_vault, engine):
    """Snowball Turkish reads the final i of strateji as a case ending (term stratej) but keeps it in
    stratejisi (term strateji): a Turkish question counts both as one term in rankScore; score stays raw
    BM25 over the query's own term."""
    write_doc(tiny_vault, "knowledge/bare.md", "---\ntitle: Plan\n---\nBu yılın strateji belgesi hazır.\n")
    write_doc(tiny_vault, "knowledge/inflected.md", "---\ntitle: Yedekleme\n---\nBulut stratejisi değişti.\n")
    write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: Toplantı\n---\nHaftalık toplantı notları burada.\n")
    with dreamdb.open(tiny_vault, lexicon=None, engine=engine) as ix:
        ix.sync()
        plan = plan_query("yeni stratejisi nedir", vocabulary=ix._vocabulary())
        assert plan.turkish and "strateji" in plan.terms and plan.forms == {"strateji": ("stratej",)}
        hits = ix.recall("yeni stratejisi nedir", explain=True)
        assert sorted(h.doc_id for h in hits) == ["knowledge/bare", "knowledge/inflected"]
        by_id = {h.doc_id: h for h in hits}
        assert by_id["knowledge/bare"].score == 0.0 and by_id["knowledge/inflected"].score > 0
        assert any("strateji (strateji, stratej)" in n for n in ix.take_notes())
        # a bare word's query: the notes writing it inflected
        assert plan_query("strateji nedir", vocabulary=ix._vocabulary()).forms == {"stratej": ("strateji",)}
        # one word alone reads as English; replaced by its Turkish analysis, that term's other form counts too
        alone = plan_query("stratejisi", vocabulary=ix._vocabulary())
        assert not alone.turkish and alone.resolved == {"stratejisi": "strateji"}
        assert alone.forms == {"strateji": ("stratej",)}
        assert sorted(h.doc_id for h in ix.recall("stratejisi")) == ["knowledge/bare", "knowledge/inflected"]
        # an English word is not read as Turkish: no forms
        assert plan_query("strategies", vocabulary=ix._vocabulary()).forms == {}


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_stem_english_notes_hold_too_is_no_form_of_a_turkish_query_word(tiny_vault, engine):
    """QA round 115-C: ``İstanbul'da toplantı`` counted ``top`` in the class of toplantı (its term topla, stemmed
    ``top``, which a Turkish note holds: the ball, or toplamı), so English notes saying "top" came up; a stem that
    notes of another language hold too is a false friend there, and is no form of the word."""
    write_doc(tiny_vault, "knowledge/toplanti.md", "---\ntitle: Haftalık ekip notları\n---\nHaftalık toplantı "
                                                   "notları: ekip toplantısı salı günü yapılır ve kararlar yazılır.\n")
    write_doc(tiny_vault, "knowledge/toplam.md", "---\ntitle: Uyku borcu hesabı\n---\nOturumların ağırlıklı "
                                                 "toplamı hesaplanır ve borç seviyesi bulunur.\n")
    write_doc(tiny_vault, "knowledge/bahce.md", "---\ntitle: Bahçe oyunları\n---\nÇocuklar bahçede top oynadı ve "
                                                "akşam eve döndüler.\n")
    write_doc(tiny_vault, "knowledge/pin.md", "---\ntitle: Sub-agent rail\n---\nThe rail pins to the top of the chat"
                                              " once scrolled past; chips jump back to the top.\n")
    for i in range(4):
        write_doc(tiny_vault, f"knowledge/en{i}.md", f"---\ntitle: Release note {i}\n---\nThis English note is "
                                                     f"about the release process; the build pipeline {i} is at the top.\n")
    with dreamdb.open(tiny_vault, lexicon=None, engine=engine) as ix:
        ix.sync()
        plan = plan_query("İstanbul'da toplantı", vocabulary=ix._vocabulary())
        assert plan.turkish and plan.forms == {"topla": ("toplantı",)}, plan.forms
        # a Turkish stem one English note quotes, beside as many Turkish notes, stays a form (QA round 117-A F2: the
        # note writing tasarımı three times was lost for tasarımlar)
        write_doc(tiny_vault, "knowledge/arayuz.md", "---\ntitle: Arayüz notları\n---\nYeni ekranın tasarımı hafta "
                                                     "içinde bitti. Ekip tasarımda renkleri değiştirdi ve kullanıcılar"
                                                     " bu tasarımı beğendi.\n")
        write_doc(tiny_vault, "knowledge/sprint.md", "---\ntitle: Sprint planı\n---\nBu sprintte yeni tasarımlar için"
                                                     " zaman ayırmadık; öncelik hata düzeltmelerinde.\n")
        write_doc(tiny_vault, "knowledge/glossary.md", "---\ntitle: Turkish glossary\n---\nOur Turkish teammates use"
                                                       " the verb root tasar (to plan, to design) in commit messages.\n")
        ix.sync()
        assert "tasarım" in plan_query("tasarımlar", vocabulary=ix._vocabulary()).forms.get("tasar", ()) or \
            "tasar" in plan_query("tasarımlar", vocabulary=ix._vocabulary()).forms.get("tasarım", ())
        assert "knowledge/arayuz" in [h.doc_id for h in ix.recall("tasarımlar")]
        assert sorted(h.doc_id for h in ix.recall("İstanbul'da toplantı")) == ["knowledge/toplam", "knowledge/toplanti"]


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_stem_english_notes_hold_is_no_form_of_an_english_query_word_either(tiny_vault, engine):
    """QA round 146-E F1: ``sleepy`` (the term ``sleepi``, which a Turkish note holds as the name Sleepy) counted the
    Turkish stem ``sleep`` in its class, since that note also quotes "sleep": every English note on sleep came up
    above the Turkish note writing Sleepy, with a raw score of 0. The guard against a stem more English notes hold
    than Turkish ones holds for an English-read query's words too, read (``sleepi``) or quoted (``taken``, the
    Turkish stem ``take``) in a Turkish note."""
    write_doc(tiny_vault, "knowledge/sleepy-app.md", "---\ntitle: Sleepy app\n---\nThe Sleepy desktop app shows a "
                                                     "sleepy face in the notch.\n")
    write_doc(tiny_vault, "knowledge/night-routine.md", "---\ntitle: Night routine\n---\nWe sleep eight hours. Sleep "
                                                        "quality matters; take a walk and sleep early.\n")
    write_doc(tiny_vault, "knowledge/bedtime.md", "---\ntitle: Bedtime\n---\nGo to sleep before midnight; take "
                                                  "the stairs.\n")
    write_doc(tiny_vault, "knowledge/uyku-notu.md", "---\ntitle: Uyku notu\n---\nBu not tamamen Türkçe yazılmıştır. "
                                                    "Uygulamanın adı Sleepy ve gece boyunca uyku (sleep) düzenini "
                                                    "izliyor. Görev taken olarak işaretlenir. Kullanıcılar için çok "
                                                    "önemlidir, çünkü günlük çalışma düzenini etkiliyor.\n")
    write_doc(tiny_vault, "knowledge/seats.md", "---\ntitle: Seats\n---\nAll seats were taken by noon.\n")
    with dreamdb.open(tiny_vault, lexicon=None, engine=engine) as ix:
        ix.sync()
        assert dict(ix.conn.execute("SELECT slug, turkish FROM documents"))["uyku-notu"] == 1
        for query, term in (("sleepy", "sleepi"), ("taken", "taken")):
            plan = plan_query(query, vocabulary=ix._vocabulary())
            assert not plan.turkish and plan.terms == [term] and plan.forms == {}, (query, plan.forms)
        hits = ix.recall("sleepy")
        assert [h.doc_id for h in hits] == ["knowledge/sleepy-app", "knowledge/uyku-notu"]
        assert all(h.score > 0 for h in hits)
        # (the Turkish note quoting taken holds it only as take: lost with the English notes' take, as toplantı's top)
        assert [h.doc_id for h in ix.recall("taken")] == ["knowledge/seats"]
        # a Turkish word typed alone keeps its other form (the stem no English note holds)
        write_doc(tiny_vault, "knowledge/bare.md", "---\ntitle: Plan\n---\nBu yılın strateji belgesi hazır.\n")
        write_doc(tiny_vault, "knowledge/inflected.md", "---\ntitle: Yedekleme\n---\nBulut stratejisi değişti.\n")
        ix.sync()
        assert plan_query("strateji", vocabulary=ix._vocabulary()).forms == {"strateji": ("stratej",)}


def test_a_capital_that_opens_a_sentence_or_a_title_may_be_no_name(index):
    """QA round 71: Turkish capitalises every sentence's first word, and a prompt begins with one; read as a
    name (its English analysis), ``Yedekler`` was the term ``yedekler`` instead of ``yedek``."""
    from dreamdb.analyzer import opening_capitals, tokens

    def opening(text):
        return sorted(opening_capitals(text, tokens(text)))

    assert opening("Yedekler nerede? Ahmet yaptı. Miller'ın rotası\nKayıtlar da") == [0, 2, 6]
    assert opening("anahtar Şifreleme") == []  # mid-sentence: a name
    assert opening("Sunucu Güvenliği") == [0, 1]  # a title
    assert opening("Işık AYARLARI, Ilık su") == [] and opening("yedekler") == []  # a capital I may be ı: both tried
    # (read both ways by plan_query where asked: QA round 150-A F1; a word in capitals or I alone is still left out)
    assert sorted(opening_capitals("Işık AYARLARI, Ilık su", tokens("Işık AYARLARI, Ilık su"), capital_i=True)) == [0]
    assert opening_capitals("API sorunu. I need it", tokens("API sorunu. I need it"), capital_i=True) == frozenset()
    assert query_words("Yedekler nerede", True, common=frozenset([0])) == [("yedek", "yedekler", False)]
    assert query_words("Yedekler nerede", True) == [("yedekler", "yedekler", True)]
    # plan_query reads it as an ordinary word where a Turkish note holds that reading, else as a name
    vocabulary = index._vocabulary()
    assert plan_query("Yedekler nerede", vocabulary=vocabulary).terms == ["yedek"]
    assert plan_query("Teller rotası", vocabulary=vocabulary).terms[0] == "teller"  # no Turkish note holds "tel"
    assert plan_query("Yedekler nerede").terms == ["yedekler"]  # without the index: analysis only


@pytest.mark.parametrize("query", ["Yedekler nerede", "Şifreleme anahtarı nerede", "Veritabanı Yedekleme Politikası"])
def test_a_turkish_question_scores_alike_with_its_first_capital(index, query):
    lower = query[:1].lower() + query[1:] if query != "Veritabanı Yedekleme Politikası" else query.lower()
    got = [(h.doc_id, h.score, h.rank_score) for h in index.recall(query, now="2026-08-18")]
    assert got and got[0][0] == "knowledge/turkce-not"
    assert got == [(h.doc_id, h.score, h.rank_score) for h in index.recall(lower, now="2026-08-18")]


def test_a_spelling_against_vowel_harmony_gives_way_to_a_later_harmonic_one(tiny_vault):
    """QA round 71: a note writing ``Işık`` also holds ``işık`` (its capital I folded as English folds it), two
    letters from ``isik``; ``ışık`` is three. The spellings stopped at ``işık`` and missed the note writing
    ``ışık`` in lowercase; a spelling against vowel harmony now holds only until a later round finds the word."""
    write_doc(tiny_vault, "knowledge/sensor.md", "---\ntitle: Işık sensörü\n---\n\nIşık seviyesi gece düşük olmalı.\n")
    write_doc(tiny_vault, "knowledge/lamba.md",
              "---\ntitle: Lamba bakımı\n---\n\nKoridordaki ışık ve lamba her ay kontrol edilir.\n")
    ix = dreamdb.open(tiny_vault)
    ix.sync()
    try:
        assert plan_query("isik", vocabulary=ix._vocabulary()).resolved == {"isik": "ışık"}
        typed = [(h.doc_id, h.score) for h in ix.recall("isik", now="2026-08-18")]
        assert {"knowledge/sensor", "knowledge/lamba"} <= {d for d, _s in typed}
        assert typed == [(h.doc_id, h.score) for h in ix.recall("ışık", now="2026-08-18")]
        # a word whose spelling keeps harmony is taken at its round, as before (guvenlik → güvenlik)
        assert plan_query("guvenlik", vocabulary=ix._vocabulary()).resolved.get("guvenlik") in (None, "güvenlik")
    finally:
        ix.close()


def test_a_short_root_with_a_turkish_suffix_and_no_apostrophe_finds_the_english_note(tiny_vault):
    """QA round 72 F2: ``logları`` found the English note on logging, ``loglar`` (typed without Turkish letters,
    so read as English) found nothing: its root ``log`` was shorter than a loanword respelling may be."""
    from dreamdb.ranking.rank import loanword_terms

    assert loanword_terms("loglar", "loglar")[:1] == ("log",) and loanword_terms("apiler", "apiler")[:1] == ("api",)
    # (an English word: no Turkish root, as written; only its respellings, costhume's costhum, which no note holds)
    assert loanword_terms("costume", "costume") == ("costhum",)
    write_doc(tiny_vault, "knowledge/logging.md", "---\ntitle: Logging setup\n---\nApplication log lines go to Loki.\n")
    write_doc(tiny_vault, "knowledge/yedek.md", "---\ntitle: Yedekleme\n---\nYedekler her gece alınır.\n")
    ix = dreamdb.open(tiny_vault)
    try:
        for query in ("loglar", "logları"):
            assert [h.doc_id for h in ix.recall(query)][:1] == ["knowledge/logging"], query
    finally:
        ix.close()


def test_an_english_word_with_a_turkish_plural_against_vowel_harmony_finds_the_english_note(tiny_vault):
    """QA round 72-B: ``pipelinelar`` and ``smsler`` found nothing. A loanword takes its plural as it is said
    (``pipeline`` is said with back vowels: ``-lar``), against the vowel harmony of its spelling, so Snowball
    Turkish strips nothing (``-dan`` of ``pipelinelardan`` it strips, the ``-lar`` before it not); and ``sms``
    has no vowel to keep. The root before the plural is tried as the English word it is; a plural Snowball
    strips itself (``kitaplar`` → ``kitap``) is left to it."""
    from dreamdb.analyzer import stem
    from dreamdb.ranking.rank import loanword_terms

    for word, root in (("pipelinelar", "pipelin"), ("pipelinelardan", "pipelin"), ("serverlar", "server"),
                       ("smsler", "sms"), ("smslerden", "sms")):
        assert loanword_terms(stem(word, True), word)[:1] == (root,), word
    assert "kitap" not in loanword_terms(stem("kitaplar", True), "kitaplar")
    write_doc(tiny_vault, "knowledge/pipeline.md", "---\ntitle: Deploy pipeline\n---\nThe CI pipeline deploys on"
              " every merge. SMS alerts go to on-call.\n")
    write_doc(tiny_vault, "knowledge/yedek.md", "---\ntitle: Yedekleme\n---\nVeritabanı yedekleri her gece alınır.\n")
    ix = dreamdb.open(tiny_vault)
    try:
        for query in ("pipelinelar nerede", "pipelinelardan ne geliyor", "smsler nereye gidiyor"):
            hits = ix.recall(query)
            assert [h.doc_id for h in hits][:1] == ["knowledge/pipeline"] and hits[0].score > 0, query
    finally:
        ix.close()


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_an_english_word_a_turkish_note_quotes_is_found_in_that_note(tiny_vault, engine):
    """QA round 103-B F1: Snowball Turkish reads the English words a Turkish note quotes as Turkish (``token`` is the
    term ``toke``, ``release`` ``relea``, ``pipeline`` ``pipel``), and ``recall token`` found only the English note,
    since the English term was in the index (an English note's). The word's Turkish stem a Turkish note holds now
    counts with it as one term in rankScore; the raw score stays the word's own BM25."""
    write_doc(tiny_vault, "knowledge/tr.md", "---\ntitle: Türkçe not\n---\nBu notta token yenileme akışı anlatılıyor. "
                                             "Her release için pipeline çalışıyor ve sonuç kaydediliyor.\n")
    write_doc(tiny_vault, "knowledge/en.md", "---\ntitle: English note\n---\nThis note covers the token refresh flow. "
                                             "Each release runs the pipeline and records the result in a file; delete it later.\n")
    for i in range(6):  # (notes without the words, so that theirs are rare)
        write_doc(tiny_vault, f"knowledge/other{i}.md", f"---\ntitle: Other {i}\n---\nUnrelated text number {i}.\n")
    ix = dreamdb.open(tiny_vault, engine=engine)
    write_doc(tiny_vault, "knowledge/fil.md", "---\ntitle: Hayvanat bahçesi\n---\nFil ve zürafa dele dele bakıyordu; "
                                              "fil çok büyüktü ve bahçede dolaştı. Akşam fileto yedik.\n")  # (fileto: "file" in a word, QA round 105 F3)
    for word, turkish_term in (("token", "toke"), ("release", "relea"), ("pipeline", "pipel")):
        hits = {h.doc_id: h for h in ix.recall(word, top=5)}
        assert {"knowledge/tr", "knowledge/en"} <= set(hits), (word, list(hits))
        assert hits["knowledge/tr"].score == 0 and hits["knowledge/en"].score > 0
        english = analyze(word, turkish=False)[0]
        assert plan_query(word, vocabulary=ix._vocabulary()).forms == {english: (turkish_term,)}
    # a Turkish note holding the stem of an English word without writing the word is a false friend's (QA round 23)
    for word in ("file", "delete"):
        assert "knowledge/fil" not in [h.doc_id for h in ix.recall(word, top=5)], word
        assert plan_query(word, vocabulary=ix._vocabulary()).forms == {}
    # a Turkish note holding the stem of a Turkish word: the stem does not count, though another one quotes the word
    # (QA round 104-A F3: the elephant note came third for "delete the license file" once a Turkish note quoted "file")
    write_doc(tiny_vault, "knowledge/tr-file.md", "---\ntitle: Dosya sistemi\n---\nBu projede config file okunurken "
                                                 "hata çıkıyor.\n")
    ix.sync()
    assert "knowledge/fil" not in [h.doc_id for h in ix.recall("delete the license file", top=5)]
    # however many Turkish notes quote it, every holder is read for the word itself (QA round 105 F3: 20 were, and
    # "fileto" holds the letters of "file": the elephant note came third)
    (tiny_vault / "knowledge" / "fil.md").unlink()
    for i in range(25):
        write_doc(tiny_vault, f"knowledge/q{i:02d}.md", f"---\ntitle: Not {i}\n---\nBu config file okunurken hata "
                                                       f"çıkıyor, numara {i}.\n")
    write_doc(tiny_vault, "knowledge/zz-fil.md", "---\ntitle: Hayvanat\n---\nFil ve zürafa bahçede dolaştı; fil çok "
                                                "büyüktü. Akşam yemeğinde fileto yedik.\n")
    ix.sync()
    assert "knowledge/zz-fil" not in [h.doc_id for h in ix.recall("delete the license file", top=5)]
    # a Turkish note holding the stem by a tag writes the word too (QA round 106 F2: it switched the rule off)
    write_doc(tiny_vault, "knowledge/tagged.md", "---\ntitle: Etiketli not\ntags: [token]\n---\nKullanıcı oturum "
                                                "açtı.\n")
    ix.sync()
    assert {"knowledge/tr", "knowledge/tagged"} <= {h.doc_id for h in ix.recall("token", top=10)}
