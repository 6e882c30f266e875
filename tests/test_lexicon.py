"""The Turkish–English lexicon (dreamdb/lexicon.py) and recall's translations (rank.translated_terms,
rank.translation_synonyms): built from a small file in KeNet's format, and from the real KeNet package."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

import dreamdb
from dreamdb.analyzer import ANALYZER_VERSION, stem
from dreamdb.cli import cli, main
from dreamdb.errors import LexiconError, WriteRefused
from dreamdb.glossary import COMPUTING_TR_EN
from dreamdb.lexicon import (EN_TR, LEXICON_FORMAT, TERMS_VERSION, TR_EN, Lexicon, build_lexicon, lexicon_path,
                             lexicon_status, load_lexicon, read_kenet, unusable_lexicon)
from dreamdb.output import hits_text
from dreamdb.ranking.rank import class_members, other_forms, plan_query, translated_terms
from dreamdb.ranking.synonyms import load_synonyms
from tests.conftest import needs_real_vault, write_doc

TURKISH_XML = """<SYNSETS>
<SYNSET><ID>TUR10-1</ID><SYNONYM><LITERAL>uyku<SENSE>1</SENSE></LITERAL></SYNONYM><POS>n</POS><ILR>ENG31-1-n<TYPE>SYNONYM</TYPE></ILR><DEF>uyumak</DEF></SYNSET>
<SYNSET><ID>TUR10-2</ID><SYNONYM><LITERAL>borç<SENSE>1</SENSE></LITERAL></SYNONYM><ILR>ENG31-2-n<TYPE>SYNONYM</TYPE></ILR></SYNSET>
<SYNSET><ID>TUR10-3</ID><SYNONYM><LITERAL>görev<SENSE>1</SENSE></LITERAL><LITERAL>borç<SENSE>2</SENSE></LITERAL></SYNONYM><ILR>ENG31-3-n<TYPE>SYNONYM</TYPE></ILR></SYNSET>
<SYNSET><ID>TUR10-4</ID><SYNONYM><LITERAL>nehir<SENSE>1</SENSE></LITERAL><LITERAL>ırmak<SENSE>1</SENSE></LITERAL></SYNONYM><ILR>ENG31-4-n<TYPE>SYNONYM</TYPE></ILR></SYNSET>
<SYNSET><ID>TUR10-5</ID><SYNONYM><LITERAL>sunucu<SENSE>1</SENSE></LITERAL></SYNONYM><ILR>ENG31-5-n<TYPE>SYNONYM</TYPE></ILR></SYNSET>
<SYNSET><ID>TUR10-6</ID><SYNONYM><LITERAL>güvenlik<SENSE>1</SENSE></LITERAL></SYNONYM><ILR>ENG31-6-n<TYPE>SYNONYM</TYPE></ILR></SYNSET>
<SYNSET><ID>TUR10-7</ID><SYNONYM><LITERAL>güvenli<SENSE>1</SENSE></LITERAL></SYNONYM><ILR>ENG31-9-a<TYPE>SYNONYM</TYPE></ILR></SYNSET>
<SYNSET><ID>TUR10-8</ID><SYNONYM><LITERAL>su yolu<SENSE>1</SENSE></LITERAL></SYNONYM><ILR>ENG31-4-n<TYPE>SYNONYM</TYPE></ILR></SYNSET>
<SYNSET><ID>TUR10-9</ID><SYNONYM><LITERAL>şehir<SENSE>1</SENSE></LITERAL></SYNONYM><ILR>ENG31-7-n<TYPE>HYPERNYM</TYPE></ILR></SYNSET>
<SYNSET><ID>TUR10-10</ID><SYNONYM><LITERAL>hesaplamak<SENSE>1</SENSE></LITERAL></SYNONYM><ILR>ENG31-8-v<TYPE>SYNONYM</TYPE></ILR></SYNSET>
<SYNSET><ID>TUR10-11</ID><SYNONYM><LITERAL>uykusuz<SENSE>1</SENSE></LITERAL></SYNONYM><ILR>ENG31-10-a<TYPE>SYNONYM</TYPE></ILR></SYNSET>
</SYNSETS>
"""

ENGLISH_XML = """<SYNSETS>
<SYNSET><ID>ENG31-1-n</ID><SYNONYM><LITERAL>sleep<SENSE>0</SENSE></LITERAL><LITERAL>slumber<SENSE>0</SENSE></LITERAL></SYNONYM><POS>n</POS><DEF>a natural state</DEF></SYNSET>
<SYNSET><ID>ENG31-2-n</ID><SYNONYM><LITERAL>debt<SENSE>0</SENSE></LITERAL></SYNONYM></SYNSET>
<SYNSET><ID>ENG31-3-n</ID><SYNONYM><LITERAL>duty<SENSE>0</SENSE></LITERAL><LITERAL>task<SENSE>0</SENSE></LITERAL></SYNONYM></SYNSET>
<SYNSET><ID>ENG31-4-n</ID><SYNONYM><LITERAL>river<SENSE>0</SENSE></LITERAL><LITERAL>body of water<SENSE>0</SENSE></LITERAL></SYNONYM></SYNSET>
<SYNSET><ID>ENG31-5-n</ID><SYNONYM><LITERAL>host<SENSE>0</SENSE></LITERAL><LITERAL>server<SENSE>0</SENSE></LITERAL></SYNONYM></SYNSET>
<SYNSET><ID>ENG31-6-n</ID><SYNONYM><LITERAL>security<SENSE>0</SENSE></LITERAL></SYNONYM></SYNSET>
<SYNSET><ID>ENG31-7-n</ID><SYNONYM><LITERAL>city<SENSE>0</SENSE></LITERAL></SYNONYM></SYNSET>
<SYNSET><ID>ENG31-8-v</ID><SYNONYM><LITERAL>calculate<SENSE>0</SENSE></LITERAL><LITERAL>compute<SENSE>0</SENSE></LITERAL></SYNONYM></SYNSET>
<SYNSET><ID>ENG31-9-a</ID><SYNONYM><LITERAL>safe<SENSE>0</SENSE></LITERAL></SYNONYM></SYNSET>
<SYNSET><ID>ENG31-10-a</ID><SYNONYM><LITERAL>sleepless<SENSE>0</SENSE></LITERAL></SYNONYM></SYNSET>
</SYNSETS>
"""


@pytest.fixture()
def kenet_dir(tmp_path):
    """A folder with two small files in KeNet's format."""
    d = tmp_path / "kenet"
    d.mkdir()
    (d / "turkish_wordnet.xml").write_text(TURKISH_XML, encoding="utf-8")
    (d / "english_wordnet_version_31.xml").write_text(ENGLISH_XML, encoding="utf-8")
    return d


@pytest.fixture()
def small_lexicon(kenet_dir, tmp_path):
    path = tmp_path / "lex" / "small.sqlite"
    build_lexicon(path, kenet_dir)
    return Lexicon(path)


# (a build counts the glossary's word pairs with KeNet's: dreamdb.glossary)
_GLOSSARY_LINKS = sum(len(ens) for _tr, ens in COMPUTING_TR_EN)


def test_read_kenet_keeps_one_word_synonym_links_with_their_sense_and_place(kenet_dir):
    links = read_kenet(kenet_dir)
    assert ("uyku", 1, 0, "sleep", 0) in links and ("uyku", 1, 0, "slumber", 1) in links
    assert ("borç", 2, 1, "task", 1) in links
    assert not any(tr == "su yolu" or en == "body of water" for tr, _s, _p, en, _n in links)  # several words
    assert not any(tr == "şehir" for tr, *_ in links)  # a hypernym link is no translation
    assert len(links) == 16


def test_translations_are_ordered_by_sense_then_synset_order(small_lexicon):
    lex = small_lexicon
    assert lex.translations(TR_EN, "uyku") == ("sleep", "slumber")
    assert lex.translations(TR_EN, "borç") == ("debt", "duty", "task")  # sense 1 before sense 2
    assert lex.translations(TR_EN, "hesapla") == ("calculate", "compute")  # a verb's root, from its infinitive
    assert lex.translations(EN_TR, "duty") == ("görev", "borç")  # görev's first sense, borç's second
    assert lex.translations(EN_TR, "river") == ("nehir", "ırmak")
    assert lex.translations(EN_TR, "citi", stemmed=True) == ()  # şehir links by hypernym only
    assert lex.translations(EN_TR, "server", stemmed=True) == ("sunucu",)
    assert lex.translations(TR_EN, "kedi") == ()
    assert lex.meta["format"] == str(LEXICON_FORMAT) and int(lex.meta["links"]) == 16 + _GLOSSARY_LINKS


def test_a_word_met_before_is_a_memo_lookup_without_an_import(small_lexicon, monkeypatch):
    """QA round 151-P: translated_terms imported the lexicon's direction names on every call, a word already in the
    memo too (≈ 0.7 µs each, several words a query), and took its own term out of every word's translations with a
    generator where most hold no such term. Same outcome: the translations as a tuple, the word's own term left out."""
    import builtins

    lex = small_lexicon
    first = translated_terms("uykus", "uykusu", lex, True)
    assert first == ("sleep", "slumber") and translated_terms("nehir", "river", lex, False) == ("ırmak",)
    imported = []
    real_import = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda name, *a, **k: imported.append(name) or real_import(name, *a, **k))
    assert translated_terms("uykus", "uykusu", lex, True) is first and imported == []


def test_a_turkish_word_is_looked_up_by_its_longest_root(small_lexicon):
    lex = small_lexicon
    assert translated_terms("uykus", "uykusu", lex, True) == ("sleep", "slumber")  # not uykusuz, "sleepless"
    assert translated_terms("güvenlik", "güvenliği", lex, True) == ("securiti",)  # devoiced ğ → k before güvenli
    assert translated_terms("güvenli", "güvenli", lex, True) == ("safe",)
    assert translated_terms("borcu", "borcu", lex, True)[:2] == ("debt", "duti")  # c → ç
    assert translated_terms("sunucus", "sunucusu", lex, True) == ("host", "server")
    assert translated_terms("hesaplanıyor", "hesaplanıyor", lex, True) == ("calculat", "comput")
    assert translated_terms("nehir", "nehirlerde", lex, True) == ("river",)
    # a noun that drops its last vowel before a suffix's (nehir → nehri): the vowel restored, by vowel harmony,
    # also typed without Turkish letters; a word of the same shape that lost no vowel is no river
    assert translated_terms(stem("nehrinde", True), "nehrinde", lex, True) == ("river",)
    assert translated_terms("nehr", "nehri", lex, True) == ("river",)
    assert translated_terms("kedi", "kedisi", lex, True) == ()
    assert translated_terms("nahri", "nahri", lex, True) == ()  # after a, the dropped vowel is ı: nahır
    # English → Turkish: as written, then by its stem; the Turkish words analysed as Turkish
    assert translated_terms("river", "rivers", lex, False) == ("nehir", "ırmak")
    assert translated_terms("sleep", "sleeping", lex, False) == ("uyku",)


def test_a_root_shorter_than_the_word_s_stem_is_not_tried(tiny_vault, small_lexicon):
    """``güvenliği`` is *güvenlik* (security), its stem: over notes that say *safe* but never *security*, its
    shorter root *güvenli* (safe) is another word, cut by a derivational suffix, and is not tried (QA round 50:
    that fallback made ``istanbulda`` *heat*); the word is left as it is, in both engines."""
    from dreamdb.ranking.rank import _shorter_root_translations

    assert translated_terms("güvenlik", "güvenliği", small_lexicon, True) == ("securiti",)
    assert _shorter_root_translations("güvenlik", "güvenliği", small_lexicon) == []
    assert _shorter_root_translations("güvenlik", "güvenlik", small_lexicon) == []
    assert _shorter_root_translations("uykus", "uykusu", small_lexicon) == []  # one root only
    write_doc(tiny_vault, "knowledge/backups.md", "---\ntitle: Backups\n---\nBackups stay safe offline.\n")
    write_doc(tiny_vault, "knowledge/party.md", ENGLISH_NOTES["knowledge/sleep-debt.md"])
    for engine in ("memory", "sql"):
        with dreamdb.open(tiny_vault, lexicon=small_lexicon, engine=engine) as ix:
            ix.sync()
            plan = plan_query("güvenliği nasıl sağlanıyor", vocabulary=ix._vocabulary(), lexicon=small_lexicon)
            assert "güvenlik" not in plan.resolved, engine
            assert ix.recall("güvenliği nasıl sağlanıyor") == []


def test_the_stem_is_reached_past_a_longer_beginning_and_names_are_not_cut(kenet_lexicon):
    """QA round 35: ``öncelikler`` was *öncelikle* ("primarily") and never *öncelik* ("priority"), its stem; QA
    rounds 48 and 50: ``istanbul``, ``istanbulda`` and ``ankaraya``, whose translations no note held, became
    *heat* (``ısıt``) and *ready* (``anık``) through beginnings shorter than the name."""
    from dreamdb.analyzer import stem
    from dreamdb.ranking.rank import _shorter_root_translations

    lex = Lexicon(kenet_lexicon)
    found = _shorter_root_translations(stem("öncelikler", True), "öncelikler", lex)
    assert found and "prioriti" in found[0]
    for word in ("istanbul", "istanbulda", "ankaraya", "ankara"):
        assert _shorter_root_translations(stem(word, True), word, lex) == [], word


@pytest.mark.parametrize("word, infinitives", [
    ("yazdık", ["yazmak"]), ("okuduk", ["okumak"]), ("gitmeliyiz", ["gitmek"]), ("yapmadık", ["yapmamak", "yapmak"]),
    ("gidiyor", ["gidimek", "gitmek", "gidmek", "gidemek"]), ("okuyacak", ["okuymak", "okumak"]), ("yazdığımız", ["yazmak"]),
    ("geçen", ["geçmek"]), ("kitabı", []), ("uykusu", []), ("güvenliği", []),
    # a root's final a or e narrows before -yor (QA round 52)
    ("güncelliyoruz", ["güncellimek", "güncellmek", "güncellemek"]), ("hesaplıyoruz", ["hesaplımak", "hesaplmak", "hesaplamak"]),
])
def test_verb_infinitives_read_a_turkish_verbs_inflection_off_its_end(word, infinitives):
    """QA round 51: verbs were read as nouns that begin like them (yazdık → *lettering*, okuduk → *teach*)."""
    from dreamdb.ranking.rank import verb_infinitives

    assert verb_infinitives(word) == infinitives


def test_a_word_longer_than_any_lexicon_word_and_its_inflections_is_looked_up_by_its_beginnings_alone():
    """QA round 75 F1: the verb and privative readings of a query word walked every letter of it, copying the rest
    each time: a 300,000-letter word took 3.4 s, one of 10 million never finished. A word longer than the longest
    lexicon word and its inflections can be neither; its beginnings are still looked up, as before."""
    from dreamdb.ranking.rank import (INFLECTION_MAX_LETTERS, TRANSLATION_MAX_LETTERS, TRANSLATION_MIN_LETTERS,
                                      _turkish_lookup_forms, verb_infinitives)

    longest = TRANSLATION_MAX_LETTERS + INFLECTION_MAX_LETTERS
    root = "yaz" * 16  # a 48-letter "root"
    assert verb_infinitives(root + "dık") == [root + "mak"]  # (51 letters: read)
    assert verb_infinitives("a" * (longest - 3) + "dık")  # the longest word still read
    assert verb_infinitives("a" * (longest - 2) + "dık") == []
    word = "k" * 300_000 + "dık"
    forms = _turkish_lookup_forms(word)
    assert forms == tuple(word[:n] for n in range(TRANSLATION_MAX_LETTERS, TRANSLATION_MIN_LETTERS - 1, -1))


def test_the_inflection_scans_find_what_fullmatching_each_rest_of_the_word_finds():
    """:func:`verb_infinitives` and :func:`_turkish_lookup_forms` find the places where a word's rest is a verb's
    inflection, or a privative, in one regex scan each (a third of a new Turkish query word's lookup forms; QA round
    143-S): the same places, in the same order, as fullmatching each rest in turn, on 20,000 letter strings of up to
    16 letters and words written to reach every alternative."""
    import random

    from dreamdb.analyzer import PRIVATIVE_RE
    from dreamdb.ranking import rank

    verb, privative = rank._VERB_ENDING_RE(), PRIVATIVE_RE()
    rng = random.Random(143)
    words = ["".join(rng.choice("abcdeğgiıklmnoöprsştuüyz") for _ in range(rng.randint(0, 16))) for _ in range(20_000)]
    endings = ["dı", "tık", "dınız", "mışsınız", "ıyorum", "yorlar", "yacağız", "eceksiniz", "meliyiz", "malılar", "yen",
               "an", "dığımız", "tiğiniz", "ıp", "yerek", "madık", "meyecekler", "sız", "suzluk", "sizleşti", "sızken",
               "sizlerinden", "n", ""]
    words += [root + e for root in ("yaz", "gid", "oku", "başarı", "şifre", "a", "kk") for e in endings]
    for word in words:
        places = [n for n in range(len(word) - 1, 1, -1) if verb.fullmatch(word[n:])]
        assert [n for n in reversed([m.start() for m in rank._VERB_ENDING_AT_RE().finditer(word, 2)])] == places, word
        first = next((n + 3 for n in range(2, len(word) - 2) if privative.fullmatch(word, n)), 0)
        found = rank._PRIVATIVE_AT_RE().search(word, 2)
        assert (found.start() + 3 if found else 0) == first, word
    assert any(verb.fullmatch(w[n:]) for w in words for n in range(2, len(w)))  # (the scans found some)


def test_a_turkish_verb_form_is_translated_as_the_verb(kenet_lexicon):
    """QA round 51: ``yazdık`` (we wrote) was *lettering*, ``okuduk`` (we read) *teach*, ``gitmeliyiz`` (we must go)
    *passage*; the infinitive, as KeNet lists a verb, comes first unless a noun with a longer root explains the word."""
    from dreamdb.analyzer import stem
    from dreamdb.ranking.rank import _turkish_lookup_forms, translated_terms

    lex = Lexicon(kenet_lexicon)
    assert translated_terms(stem("yazdık", True), "yazdık", lex, True)[0] == "write"
    assert translated_terms(stem("okuduk", True), "okuduk", lex, True)[0] == "read"
    # (go, under three letters, is no translation term: move is the verb's next sense)
    assert translated_terms(stem("gitmeliyiz", True), "gitmeliyiz", lex, True)[:2] == ("move", "depart")
    assert _turkish_lookup_forms("yazdık")[:2] == ("yazdık", "yazmak")
    # QA round 52: geçen (last, passing) was geçe's ("corner"): a vowel's bare -n ("your") does not outrank the
    # participle -(y)An; -iyor after a narrowed vowel reaches the verb (güncelliyoruz: güncellemek, "update")
    assert _turkish_lookup_forms("geçen")[:2] == ("geçen", "geçmek")
    assert translated_terms(stem("güncelliyoruz", True), "güncelliyoruz", lex, True)[0] == "updat"


@pytest.mark.parametrize("word, voiced", [
    ("silmemek", [(5, ["silmemek", "silmek"])]),  # negation + infinitive
    ("yapmamak", [(5, ["yapmamak", "yapmak"])]),
    ("silmez", [(5, ["silmemek", "silmek"])]),  # negative aorist
    ("silinmesi", [(5, ["silinmek", "silimek"]), (5, ["silinmek", "silmek"])]),  # passive + verbal noun
    ("yapıldı", [(5, ["yapılmak", "yapmak"])]),  # passive + past
    ("yapılmadı", [(7, ["yapılmamak", "yapılmak"]), (7, ["yapılmamak", "yapılmak", "yapmak"])]),
    ("silinmiyor", [(7, ["silinmek"]), (7, ["silinmek", "silimek"]), (7, ["silinmek", "silmek"])]),  # -mI- before -yor
    ("okunan", [(4, ["okunmak", "okumak"])]),  # -n after a vowel
    ("gidildi", [(5, ["gidilmek", "gitmek", "gidmek"])]),  # d before the passive's vowel: git
    # nothing after the passive, a noun's suffix after it, no passive or negation: no reading
    ("gelin", []), ("gelinden", []), ("kalem", []), ("silme", []), ("silmeyi", []), ("ekmek", []), ("zaman", []),
    ("değildi", []),  # a stopword (değil) is no verb's stem
    ("edildi", []), ("etmemek", []),  # nor an auxiliary's (etmek): inşa edildi, was built
])
def test_voice_infinitives_read_a_verbs_passive_and_negation_off(word, voiced):
    """QA round 157-D F4: ``silmemek`` (not to erase) found nothing and ``silinmesi`` (its being erased) was *bob*
    (``silin``, *şilin*): the lexicon lists verbs by their infinitive, without the passive or the negation."""
    from dreamdb.ranking.rank import voice_infinitives

    assert voice_infinitives(word) == voiced


def test_a_negated_or_passive_verb_is_translated_as_the_verb(kenet_lexicon):
    """QA round 157-D F4: past a verb's passive and negation its infinitive is looked up, before the beginnings no
    longer than the root with them (``silin``, *shilling*; ``yapma``, *fake*); a noun stays a noun."""
    from dreamdb.analyzer import stem
    from dreamdb.ranking.rank import _turkish_lookup_forms, translated_terms

    lex = Lexicon(kenet_lexicon)

    def first(word):
        found = translated_terms(stem(word, True), word, lex, True)
        return found[0] if found else None

    assert first("silmek") == first("silmemek") == first("silinmesi") == first("silinmiyor") == "eras"
    assert first("yapmak") == first("yapmamak") == first("yapılmadı") == first("yapıldı")
    assert first("yapmamak") not in lex.translated_terms(TR_EN, ["yapma"])  # (not the noun yapma, "fake")
    forms = _turkish_lookup_forms("silinmesi")
    assert forms.index("silmek") < forms.index("silin")
    assert first("gelin") == "bride" and first("kalem") == first("kalemi")
    assert first("silindir") == "cylinder"  # (a noun as long as the word: found first)


def test_the_forms_of_a_turkish_word_looked_up_restore_a_dropped_vowel_after_devoicing():
    from dreamdb.ranking.rank import _turkish_lookup_forms

    assert _turkish_lookup_forms("beynini") == ("beynini", "beynin", "beyni", "beyn", "beyin")
    # kayıt, "record"; the verb kaymak ("kay-dı", slid) after the noun, whose root is longer
    assert _turkish_lookup_forms("kaydı") == ("kaydı", "kayt", "kayd", "kayıt", "kayıd", "kaymak")
    assert _turkish_lookup_forms("oğlu") == ("oğlu", "oğul")  # restored to four letters from a three-letter beginning
    assert _turkish_lookup_forms("göğsü") == ("göğsü", "göğs", "göğüs")  # harmony: ö → ü
    assert _turkish_lookup_forms("akli") == ("akli", "akil")  # typed without its letters: ı → i, as in the ASCII table
    # a restored form comes after the longer beginnings as written: uyku is found before uyuk is tried
    assert _turkish_lookup_forms("uykusu") == ("uykusu", "uykus", "uyku", "uyuk")
    assert "sunuç" in _turkish_lookup_forms("sunucusu") and len(_turkish_lookup_forms("sunucusu")) == 6  # no CC: none
    assert _turkish_lookup_forms("evi") == ("evi",)  # under four letters: the word alone (it may be typed plain)
    assert _turkish_lookup_forms("ağı") == () and _turkish_lookup_forms("yaz") == ()  # (reached by their stems)
    # a token of thousands of letters is looked up by its beginnings of at most 48 (QA round 35: 1.7 s, 98 MB)
    forms = _turkish_lookup_forms("a" * 10_000)
    assert forms[0] == "a" * 48 and len(forms) == 45 and max(map(len, forms)) == 48


def test_a_preloaded_lexicon_answers_as_its_statements_do(small_lexicon, kenet_dir, tmp_path, monkeypatch,
                                                         tiny_vault):
    """Lookups after :meth:`Lexicon.preload` (dicts in memory) equal those made by SQL statements."""
    import dreamdb.lexicon as L

    words = ["uyku", "borç", "hesapla", "kedi", "güvenlik", "guvenlik", "uykus"]
    by_sql = Lexicon(small_lexicon.path)
    expected = [(by_sql.translations(TR_EN, w), by_sql.translations(TR_EN, w, ascii=True),
                 by_sql.translations(EN_TR, w, stemmed=True), translated_terms(w, w + "su", by_sql, True))
                for w in words] + [by_sql.translations(EN_TR, "duty")]
    assert by_sql._loaded == {}  # lookups well under PRELOAD_AFTER_SECONDS read nothing whole
    fresh = Lexicon(small_lexicon.path)
    fresh.preload()
    fresh.preload("targets")
    assert set(fresh._loaded) == {"terms", "targets"} and fresh._loaded["targets"]["tr-en"]["uyku"] == "sleep\tslumber"
    fresh._conn.close()  # from now on a statement would fail (and read as "no translation")
    got = [(fresh.translations(TR_EN, w), fresh.translations(TR_EN, w, ascii=True),
            fresh.translations(EN_TR, w, stemmed=True), translated_terms(w, w + "su", fresh, True))
           for w in words] + [fresh.translations(EN_TR, "duty")]
    assert got == expected and expected[0][0] == ("sleep", "slumber")
    # The rule of PRELOAD_AFTER_SECONDS: once lookups have cost that much, the column is read whole
    monkeypatch.setattr(L, "PRELOAD_AFTER_SECONDS", 0.0)
    eager = Lexicon(small_lexicon.path)
    assert eager.translations(TR_EN, "borç") == ("debt", "duty", "task") and "targets" in eager._loaded
    # Index.warm() reads the index's lexicon into memory at once
    with dreamdb.open(tiny_vault, lexicon=small_lexicon.path) as ix:
        ix.warm()
        assert "terms" in ix._lexicon()._loaded



def test_the_first_translations_of_a_list_of_keys_are_alike_by_sql_and_preloaded(small_lexicon):
    """:meth:`Lexicon.first_translations` of several words and stems, as a Turkish query word's lookup forms ask, with
    and without Turkish typed plainly: the first key with translations wins, a key without any (absent, or with no
    term left once analysed) is passed over, by SQL statements and from either preloaded column alike (QA round
    143-S: the preloaded lookup walks the keys without building their pairs)."""
    keys = ["nosuchword", "uykusu", "uyku", "borcu", "borç", "borc", "kedi", "guvenlik", "güvenlik", "sleep", "duty"]
    cases = [(d, words, stems, ascii) for d in (TR_EN, EN_TR) for ascii in (False, True)
             for words, stems in ((keys, ()), (keys[::-1], ()), (keys[:2], ("uyku", "borç")), ((), ("uykus", "uyku")),
                                  (["nosuchword"], ("nosuchstem",)), ((), ()), (["borc", "uyku"], ("kedi",)))]
    by_sql = Lexicon(small_lexicon.path)
    expected = {column: [by_sql.first_translations(d, w, s, column=column, ascii=a) for d, w, s, a in cases]
                for column in ("terms", "targets")}
    assert by_sql._loaded == {} and any(expected["terms"]) and () in expected["terms"]
    for column in ("terms", "targets"):
        fresh = Lexicon(small_lexicon.path)
        fresh.preload(column)
        fresh._conn.close()  # a statement now would fail (and read as "no translation")
        assert [fresh.first_translations(d, w, s, column=column, ascii=a) for d, w, s, a in cases] == expected[column]


def test_whether_a_word_has_translations_is_answered_alike_by_sql_and_by_either_preloaded_column(small_lexicon):
    """:meth:`Lexicon.has` (what :func:`english_word` asks, twice a word of every query) agrees with
    :meth:`Lexicon.translations` whether lookups run statements or read a preloaded column, ``terms`` (what
    ``Index.warm`` loads, whose value may be empty) included; no statement once a column is in memory."""
    keys = [(d, w, stemmed, ascii) for d in (TR_EN, EN_TR) for w in ("uyku", "borç", "borc", "duty", "sleep", "kedi",
                                                                        "uykus", "debt", "nosuchword")
            for stemmed, ascii in ((False, False), (True, False), (False, True))]
    by_sql = Lexicon(small_lexicon.path)
    expected = [bool(by_sql.translations(d, w, stemmed=s, ascii=a)) for d, w, s, a in keys]
    assert [by_sql.has(d, w, stemmed=s, ascii=a) for d, w, s, a in keys] == expected
    assert True in expected and False in expected and by_sql._loaded == {}
    for column in ("terms", "targets"):
        fresh = Lexicon(small_lexicon.path)
        fresh.preload(column)
        fresh._conn.close()  # a statement now would fail (and read as "no translation")
        assert [fresh.has(d, w, stemmed=s, ascii=a) for d, w, s, a in keys] == expected, column


ENGLISH_NOTES = {
    "knowledge/sleep-debt.md": "---\ntitle: Sleep debt scoring\n---\nEach skipped consolidation adds to the sleep debt; "
                               "the debt decides when to run.\n",
    "knowledge/server-hardening.md": "---\ntitle: Dashboard server hardening\n---\nThe local server checks the Origin "
                                     "header: security against malicious websites.\n",
    "knowledge/release-notes.md": "---\ntitle: Release notes\n---\nWe shipped the installer and the dashboard theme.\n",
}


def test_a_turkish_question_finds_english_notes_through_the_lexicon(tiny_vault, small_lexicon):
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    query = "uyku borcu nasıl hesaplanıyor"
    with dreamdb.open(tiny_vault, lexicon=None) as ix:
        assert ix.recall(query, top=3) == []  # no word of the question is in a note
    for engine in ("memory", "sql"):
        with dreamdb.open(tiny_vault, lexicon=small_lexicon, engine=engine) as ix:
            hits = ix.recall(query, top=3)
            assert [h.slug for h in hits] == ["sleep-debt"], engine
            plan = plan_query(query, vocabulary=ix._vocabulary(), lexicon=small_lexicon)
            assert plan.resolved == {"uyku": "sleep", "borcu": "debt"} and plan.by_lexicon == ["uyku", "borcu"]
            # met again (the memo keeps each word's outcome), a translation is still one
            assert plan_query(query, vocabulary=ix._vocabulary(), lexicon=small_lexicon).by_lexicon == ["uyku", "borcu"]
            assert ix.recall("sunucu güvenliği", top=1)[0].slug == "server-hardening"


def test_a_word_a_note_has_is_kept_and_counted_with_its_translation_as_one_term(tiny_vault, small_lexicon):
    write_docs = dict(ENGLISH_NOTES)
    write_docs["knowledge/sunucu-notlari.md"] = ("---\ntitle: Sunucu notları\n---\nBu sunucu için yedekleme planı ve "
                                                 "günlük kontroller burada tutulur.\n")
    for rel, text in write_docs.items():
        write_doc(tiny_vault, rel, text)
    with dreamdb.open(tiny_vault, lexicon=small_lexicon) as ix:
        ix.sync()
        plan = plan_query("sunucu güvenliği nasıl sağlanıyor", vocabulary=ix._vocabulary(), lexicon=small_lexicon)
        assert "sunuç" in plan.terms  # (Snowball's stem of sunucu) in a Turkish note: never replaced
        assert plan.resolved.get("güvenlik") == "securiti"  # in no note: translated
        assert plan.synonyms == {}  # the English notes' word for it is no synonym: the two are one term, a class
        assert plan.translated == {"sunuç": "server"}
        # (the title's capitalised "Sunucu" is also indexed as written, the form of sunucu beside its stem sunuç)
        assert plan.forms == {"sunuç": ("sunucu",)}
        assert class_members(plan) == {"sunuç": ("sunuç", "sunucu", "server")}
        hits = ix.recall("sunucu güvenliği nasıl sağlanıyor", top=3, explain=True)
        notes = ix.take_notes()
        # (a translation's note names the query's word as typed, not its term: sunucu, not sunuç)
        assert any(n.startswith("translations counted with the query word as one term in rankScore (the sense the "
                                "query's other words go with most") and n.endswith("): sunucu → server") for n in notes)
        # a word replaced by its translation is said to be, not "matched through another analysis" (QA round 35)
        assert plan.by_lexicon == ["güvenlik"]
        # and the translation as the dictionary writes it, not its term securiti (QA round 38)
        assert any(n.startswith("replaced by a translation") and n.endswith(": güvenliği → security") for n in notes)
        assert not any("another analysis" in n for n in notes)
        assert {h.slug for h in hits[:2]} == {"sunucu-notlari", "server-hardening"}  # the Turkish note and the English one
        english = next(h for h in hits if h.slug == "server-hardening")
        terms = {t["term"]: t for t in english.terms}
        assert {t: v["kind"] for t, v in terms.items()} == {"securiti": "query", "sunuç|sunucu|server": "class"}
        # the raw score is the query's words' alone; rankScore's raw BM25 counts the class in place of sunuç
        assert english.score == pytest.approx(terms["securiti"]["bm25"], abs=1e-6)
        assert english.signals["bm25_structured"] == pytest.approx(
            terms["securiti"]["bm25"] + terms["sunuç|sunucu|server"]["bm25"], abs=1e-5)
        assert terms["sunuç|sunucu|server"]["df"] == 2  # the Turkish note and the English one: the documents holding either
    with dreamdb.open(tiny_vault, lexicon=None) as ix:
        assert [h.slug for h in ix.recall("sunucu güvenliği nasıl sağlanıyor", top=3)] == ["sunucu-notlari"]
        assert plan_query("sunucu güvenliği", vocabulary=ix._vocabulary()).synonyms == {}


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_hit_found_through_a_translation_shows_the_line_naming_it(tiny_vault, small_lexicon, engine):
    """QA round 149-G F4: the snippet weighed the query's own terms alone, so an English note found through the
    translation counted with a Turkish query word (its class) showed its first lines, none of them naming the word
    that matched. Every member of the class weighs the class's IDF, once in a line."""
    write_doc(tiny_vault, "knowledge/uyku-notu.md", "---\ntitle: Uyku notu\n---\nGece uyku düzeni burada tutulur.\n")
    write_doc(tiny_vault, "knowledge/evening.md", "---\ntitle: Evening routine\n---\nDinner is at seven.\nThe dishes "
              "are washed after.\nA walk around the block follows.\nLights out and sleep by eleven.\nAlarm set for six.\n")
    write_doc(tiny_vault, "knowledge/garden.md", "---\ntitle: Garden\n---\nTomatoes and beans.\n")
    with dreamdb.open(tiny_vault, lexicon=small_lexicon, engine=engine) as ix:
        ix.sync()
        query = "uyku saatleri nasıl"
        assert class_members(plan_query(query, vocabulary=ix._vocabulary(), lexicon=small_lexicon)) == \
            {"uyku": ("uyku", "sleep")}
        hits = {h.doc_id: h for h in ix.recall(query, top=3)}
        assert hits["knowledge/evening"].score == 0  # (the translation alone matched)
        assert hits["knowledge/evening"].snippet == \
            "A walk around the block follows.\nLights out and sleep by eleven.\nAlarm set for six."
        assert hits["knowledge/uyku-notu"].snippet == "Gece uyku düzeni burada tutulur."


def test_a_rare_turkish_word_in_an_english_vault_weighs_as_its_class_not_as_a_rare_term(tiny_vault, small_lexicon):
    """The kind of failure classes fix: an English vault whose one diagram has a Turkish label (``uyku``):
    the word alone is rare there (df 1, the highest IDF), so a Turkish question about sleep debt put the
    diagram first, while its translation *sleep*, in the notes about it, only counted as a synonym."""
    notes = dict(ENGLISH_NOTES)
    notes["knowledge/board.md"] = ("---\ntitle: Whiteboard\n---\nA drawing of the pipeline with the shapes and arrows "
                                   "of the week, colours and labels: uyku\n")
    for i in range(4):  # sleep in several notes: its IDF, and with it the class's, is low
        notes[f"knowledge/sleep-{i}.md"] = f"---\ntitle: Sleep log {i}\n---\nSleep consolidation ran at night {i}.\n"
    for rel, text in notes.items():
        write_doc(tiny_vault, rel, text)
    query = "uyku borcu nasıl hesaplanıyor"
    for engine in ("memory", "sql"):
        with dreamdb.open(tiny_vault, lexicon=small_lexicon, engine=engine) as ix:
            hits = ix.recall(query, top=10, explain=True)
            slugs = [h.slug for h in hits]
            assert slugs[0] == "sleep-debt", (engine, slugs)
            # the notes about sleep before the drawing (with uyku as a rare term of its own: the drawing second)
            assert slugs.index("board") > max(slugs.index(f"sleep-{i}") for i in range(4)), (engine, slugs)
            board = next(h for h in hits if h.slug == "board")
            uyku = next(t for t in board.terms if t["term"] == "uyku")
            assert uyku["df"] == 1 and board.score == pytest.approx(uyku["bm25"], abs=1e-6)  # its raw score: SPEC's
            assert board.signals["bm25_structured"] < board.score  # the class {uyku, sleep}: df 6, a lower IDF
            assert hits[0].score > 0  # debt: the translation of borcu, a query term (no note has borcu)


def test_explain_names_classes_and_synonyms_apart(tiny_vault, small_lexicon):
    """QA session 25: the note called every translation "counted with the query word as one term", also the
    other sense of a replaced word, which is a half-weight synonym."""
    notes = dict(ENGLISH_NOTES)
    # an English note quoting the Turkish word: its English analysis (sunucusu) is the index's term, not the
    # query's Turkish one (sunucus), which is replaced by it
    notes["knowledge/hosting.md"] = "---\ntitle: Hosting\n---\nThe dashboard server, sunucusu in Turkish.\n"
    notes["knowledge/uyku-notu.md"] = "---\ntitle: Uyku notu\n---\nGece uyku düzeni ve uyku saatleri burada.\n"
    for rel, text in notes.items():
        write_doc(tiny_vault, rel, text)
    with dreamdb.open(tiny_vault, lexicon=small_lexicon) as ix:
        ix.sync()
        query = "uyku sunucusu nasıl"
        plan = plan_query(query, vocabulary=ix._vocabulary(), lexicon=small_lexicon)
        classes = class_members(plan)
        replaced = {b: a for a, b in plan.resolved.items()}
        assert classes and "uyku" in classes and any(t in replaced for t in plan.translated), plan
        ix.recall(query, top=3, explain=True)
        notes = ix.take_notes()
        one_term = next(n for n in notes if n.startswith("translations counted with the query word as one term"))
        as_synonym = next(n for n in notes if n.startswith("translations of words the query had replaced, added as synonyms"))
        assert "uyku → sleep" in one_term and "uyku" not in as_synonym
        assert all(f"{t} → {c}" in as_synonym and f"{t} →" not in one_term
                   for t, c in plan.translated.items() if t not in classes)


def test_the_hook_gates_on_the_best_raw_score_of_its_hits_not_the_first_ones(tiny_vault, small_lexicon, monkeypatch,
                                                                              tmp_path):
    """QA session 25: a note matched through a translation alone (raw score 0) can rank first now that the
    translation counts with the word; the hook checked the first hit's raw score and printed nothing,
    though the second held the prompt's word itself (raw score ≥ 2)."""
    from dreamdb import hook

    write_doc(tiny_vault, "knowledge/board.md", "---\ntitle: Whiteboard\n---\nShapes and arrows of the week: uyku\n")
    write_doc(tiny_vault, "knowledge/sleep-guide.md", "---\ntitle: Sleep guide\n---\nSleep, sleep and sleep again: "
              "how sleep works, when sleep runs, why sleep matters.\n")
    for i in range(20):
        write_doc(tiny_vault, f"knowledge/filler-{i}.md", f"---\ntitle: Garden {i}\n---\nTomatoes and beans {i}.\n")
    monkeypatch.setenv("DREAMDB_LEXICON", str(small_lexicon.path))
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "hook.log"))
    prompt = "uyku nasıl işliyor acaba"
    with dreamdb.open(tiny_vault) as ix:
        hits = ix.recall(prompt, top=3)
    assert [(h.slug, h.score > 0) for h in hits[:2]] == [("sleep-guide", False), ("board", True)]
    assert hits[1].score >= hook.INJECT_THRESHOLD
    out = hook.run(json.dumps({"prompt": prompt, "session_id": "s", "cwd": str(tiny_vault.parent)}))
    lines = out.splitlines()
    # (the gate is board's raw score; the block keeps recall's order, the sleep guide shown for its translated word:
    # QA round 72 F7, where it was left out)
    assert lines[0] == hook.HEADER and lines[1] == "1. [knowledge/sleep-guide] Sleep guide (score 0, through a translation or another form of a word)"
    assert lines[3].startswith("2. [knowledge/board]"), out


def test_documents_a_translated_query_reads_are_not_treated_as_unreadable_by_the_fusion(tiny_vault, small_lexicon):
    """Hybrid fusion imputes a dense rank for documents in another language than the query, which BM25
    cannot read (dreamdb.fusion.imputed_bm25_ranks); a query translated into their language reads them."""
    from dreamdb.hybrid import cross_language_documents, reads_other_language
    from dreamdb.ranking.rank import QueryPlan

    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    write_doc(tiny_vault, "knowledge/sunucu-notlari.md", "---\ntitle: Sunucu notları\n---\nBu sunucu için yedekleme "
              "planı ve günlük kontroller burada tutulur.\n")
    with dreamdb.open(tiny_vault, lexicon=small_lexicon) as ix:
        ix.sync()
        rows = dict(ix.conn.execute("SELECT doc_id, id FROM documents"))
        everything = set(rows.values())
        english = everything - {rows["knowledge/sunucu-notlari"]}
        query = "sunucu güvenliği nasıl sağlanıyor"
        translated = plan_query(query, vocabulary=ix._vocabulary(), lexicon=small_lexicon)
        assert translated.translated and reads_other_language(ix.conn, translated)
        assert cross_language_documents(ix.conn, translated, everything) == set()
        # the same question without a lexicon shares no word with the English notes: they are imputed
        alone = plan_query(query, vocabulary=ix._vocabulary(), lexicon=None)
        assert not reads_other_language(ix.conn, alone)
        assert cross_language_documents(ix.conn, alone, everything) == english
        # a word replaced by a term of an English note (a translation) is enough, without synonyms …
        replaced = QueryPlan(query, ["sunuç", "securiti"], turkish=True, resolved={"güvenlik": "securiti"})
        assert reads_other_language(ix.conn, replaced)
        # … but not one replaced by another Turkish analysis (a note of the query's own language)
        own = QueryPlan(query, ["sunuç"], turkish=True, resolved={"sunucus": "sunuç"})
        assert not reads_other_language(ix.conn, own) and cross_language_documents(ix.conn, own, everything) == english
        # nor by the word as an English note quoting it holds it (another form of it, no translation)
        write_doc(tiny_vault, "knowledge/eval-notes.md", "---\ntitle: Eval notes\n---\nThe question 'sunucu "
                  "güvenliği' was asked in Turkish; the answer is the server note.\n")
        ix.sync()
        quoted = QueryPlan(query, ["sunucu"], turkish=True, resolved={"sunuç": "sunucu"})
        assert "sunucu" in ix._vocabulary().known({"sunucu"}, in_turkish=False)
        assert not reads_other_language(ix.conn, quoted)
        rows = dict(ix.conn.execute("SELECT doc_id, id FROM documents"))
        everything = set(rows.values())
        english = everything - {rows["knowledge/sunucu-notlari"]}
        # translated, but more of its terms are in the Turkish note than in English ones: read in Turkish
        turkish_terms = [t for (t,) in ix.conn.execute(
            "SELECT term FROM postings WHERE doc = ? AND tf_body > 0 ORDER BY term", (rows["knowledge/sunucu-notlari"],))]
        mostly_turkish = QueryPlan(query, [*turkish_terms[:2], "securiti"], turkish=True, translated={"sunuç": "server"},
                                   resolved={"güvenlik": "securiti"})
        assert not reads_other_language(ix.conn, mostly_turkish)
        assert cross_language_documents(ix.conn, mostly_turkish, everything) == english
        even = QueryPlan(query, [turkish_terms[0], "securiti"], turkish=True, translated={"sunuç": "server"})
        assert reads_other_language(ix.conn, even)  # as many terms in each language: read in the other
        # translated, but BM25 reads none of its terms anywhere: it reads nothing, in no language
        assert not reads_other_language(ix.conn, QueryPlan("zzz", ["zzzq"], turkish=True, translated={"zzzq": "server"}))


def test_a_word_of_several_senses_is_translated_into_the_one_the_query_s_other_words_go_with(tiny_vault, small_lexicon):
    """``sunucu`` is *host* (its first sense) or *server*; beside *dashboard*, which the notes hold as written,
    the notes' *server* is the one meant (Ballesteros & Croft's co-occurrence), in both engines."""
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    write_doc(tiny_vault, "knowledge/party.md", "---\ntitle: Party host duties\n---\nThe host greets every guest.\n")
    for engine in ("memory", "sql"):
        with dreamdb.open(tiny_vault, lexicon=small_lexicon, engine=engine) as ix:
            ix.sync()
            if engine == "memory":
                ix.warm()  # the kernel's counts (a preloaded index)
            vocabulary = ix._vocabulary()
            assert translated_terms("sunucus", "sunucusu", small_lexicon, True)[:2] == ("host", "server")
            plan = plan_query("dashboard sunucusu ölçümü", vocabulary=vocabulary, lexicon=small_lexicon)
            assert plan.resolved["sunucus"] == "server", engine
            assert ix.recall("dashboard sunucusu ölçümü", top=1)[0].slug == "server-hardening"
            # with no other word the notes hold, the lexicon's order stands
            assert plan_query("sunucusu ölçümü", vocabulary=vocabulary, lexicon=small_lexicon).resolved["sunucus"] == "host"


def test_a_choice_made_in_context_is_not_remembered_for_another_query(tiny_vault, small_lexicon):
    """The per-word memo keeps every sense the notes hold, not the one a query chose: ``sunucusu`` is
    *server* beside *dashboard*, and *host* again in the next query without it, in one process."""
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    write_doc(tiny_vault, "knowledge/party.md", "---\ntitle: Party host duties\n---\nThe host greets every guest.\n")
    with dreamdb.open(tiny_vault, lexicon=small_lexicon, engine="memory") as ix:
        ix.sync()
        vocabulary = ix._vocabulary()
        for query, sense in [("dashboard sunucusu ölçümü", "server"), ("sunucusu ölçümü", "host"),
                             ("dashboard sunucusu ölçümü", "server")]:
            assert plan_query(query, vocabulary=vocabulary, lexicon=small_lexicon).resolved["sunucus"] == sense
        assert any(isinstance(v, tuple) and "server" in v for v in vocabulary.resolved_words.values())


def test_association_is_dunnings_g2_of_documents_beyond_chance():
    import math

    from dreamdb.ranking.rank import association

    # 10 documents, 4 hold an anchor, a term in 2, both with an anchor: cells 2, 0, 2, 6 (rows 2 / 8, columns 4 / 6)
    expected = 2 * (2 * math.log(2 * 10 / (2 * 4)) + 2 * math.log(2 * 10 / (8 * 4)) + 6 * math.log(6 * 10 / (8 * 6)))
    assert association(2, 2, 4, 10) == pytest.approx(expected) == pytest.approx(4.4629, abs=1e-4)
    assert association(1, 5, 4, 10) == 0.0  # fewer shared documents than chance (2): no association
    assert association(0, 0, 4, 10) == association(3, 3, 0, 10) == 0.0
    # one shared document of a rare term weighs less than two of a common one (771 notes, 5 with an anchor)
    assert association(1, 12, 5, 771) < association(2, 60, 5, 771)
    # each cell written out (QA round 143-S) gives the very floats of the sum over the four cells, in their order
    import random

    rng = random.Random(143)
    for _ in range(20_000):
        n_docs = rng.randint(1, 3000)
        n_term, n_anchor = rng.randint(0, n_docs), rng.randint(0, n_docs)
        both = rng.randint(max(0, n_term + n_anchor - n_docs), min(n_term, n_anchor))
        if n_term <= 0 or n_anchor <= 0 or both * n_docs <= n_term * n_anchor:
            assert association(both, n_term, n_anchor, n_docs) == 0.0
            continue
        cells = (both, n_term - both, n_anchor - both, n_docs - n_term - n_anchor + both)
        rows, cols = (n_term, n_docs - n_term), (n_anchor, n_docs - n_anchor)
        g2 = 2.0 * sum(o * math.log(o * n_docs / (rows[i // 2] * cols[i % 2])) for i, o in enumerate(cells) if o > 0)
        assert association(both, n_term, n_anchor, n_docs) == g2


def test_a_sense_the_notes_significantly_associate_keeps_the_lexicon_s_order(tiny_vault):
    """20 notes, 4 holding the anchor. ``alpha`` (G² 7.5) and ``beta`` (8.0) are both significant (p < 0.05)
    and less than 3.84 apart: the lexicon's order decides. ``zeta`` (in all 4, G² 20.0) is far above ``alpha``:
    it wins. ``delta`` (G² 1.0) and ``gamma`` (3.4) are neither significant: the stronger one wins, as it did
    before. In both engines."""
    from dreamdb.ranking.rank import SIGNIFICANT_G2, association, in_context

    words = {1: "anchor alpha beta zeta delta", 2: "anchor alpha beta zeta", 3: "anchor beta zeta gamma",
             4: "anchor zeta", 5: "delta beta"}
    for n in range(1, 21):
        write_doc(tiny_vault, f"knowledge/n{n:02d}.md", f"---\ntitle: Nota\n---\n{words.get(n, 'filler')} text\n")
    alpha, beta, zeta = association(2, 2, 4, 20), association(3, 4, 4, 20), association(4, 4, 4, 20)
    assert SIGNIFICANT_G2 <= alpha < beta < alpha + SIGNIFICANT_G2 < zeta
    assert association(1, 2, 4, 20) < association(1, 1, 4, 20) < SIGNIFICANT_G2
    for engine in ("memory", "sql"):
        with dreamdb.open(tiny_vault, engine=engine) as ix:
            ix.sync()
            vocabulary = ix._vocabulary()
            assert vocabulary.cooccurrence({"alpha", "beta", "zeta", "gamma", "delta"}, {"anchor"}) == \
                (20, 4, {"alpha": (2, 2), "beta": (3, 4), "zeta": (4, 4), "gamma": (1, 1), "delta": (1, 2)})
            chosen = in_context({"a": ("alpha", "beta"), "b": ("beta", "alpha"), "c": ("delta", "gamma"),
                                 "d": ("alpha", "beta", "zeta")}, {"anchor"}, vocabulary)
            assert chosen == {"a": "alpha", "b": "beta", "c": "gamma", "d": "zeta"}, engine


def test_an_english_query_finds_turkish_notes_through_the_lexicon(tiny_vault, small_lexicon):
    write_doc(tiny_vault, "knowledge/nehir-olcumleri.md", "---\ntitle: Nehir ölçümleri\n---\nNehir kenarındaki "
              "istasyonların su seviyesi ölçümleri haftalık toplanır.\n")
    write_doc(tiny_vault, "knowledge/kahve.md", "---\ntitle: Kahve makinesi\n---\nOfisteki kahve makinesinin "
              "bakım takvimi.\n")
    with dreamdb.open(tiny_vault, lexicon=small_lexicon) as ix:
        assert [h.slug for h in ix.recall("rivers", top=2)] == ["nehir-olcumleri"]
    with dreamdb.open(tiny_vault, lexicon=None) as ix:
        assert ix.recall("rivers", top=2) == []


def test_a_word_written_only_in_a_file_name_is_not_translated(tiny_vault, small_lexicon):
    """QA round 150-F F4: ``utils`` of ``utils.py`` in an English prompt was translated (by its stem, into the Turkish
    ``hayırlı``, whose stem ``hayır`` a Turkish note held), and that note came first at raw score 0. A word the query
    writes only in a file name or its path is a name's part, not translated; written as a word of its own too, it is."""
    write_doc(tiny_vault, "knowledge/nehir-olcumleri.md", "---\ntitle: Nehir ölçümleri\n---\nNehir kenarındaki "
              "istasyonların su seviyesi ölçümleri haftalık toplanır.\n")
    write_doc(tiny_vault, "knowledge/river-loader.md", "---\ntitle: River loader\n---\nThe river loader reads the "
              "gauge files; rename foo there.\n")
    write_doc(tiny_vault, "knowledge/kahve.md", "---\ntitle: Kahve makinesi\n---\nOfisteki kahve makinesinin "
              "bakım takvimi.\n")
    write_doc(tiny_vault, "knowledge/sunucu.md", "---\ntitle: Sunucu ayarları\n---\nBu sunucu için yedekleme planı.\n")
    with dreamdb.open(tiny_vault, lexicon=small_lexicon) as ix:
        ix.sync()
        vocabulary = ix._vocabulary()
        # a word no note holds, in a file name: not replaced by its translation (sunucu), where as a word it is
        assert plan_query("rename foo in servers.py", vocabulary=vocabulary, lexicon=small_lexicon).resolved == {}
        assert plan_query("rename foo in servers", vocabulary=vocabulary, lexicon=small_lexicon).resolved == \
            {"server": "sunuç"}
        # a word a note holds, in a file name: not counted with its translation (no class), where as a word it is
        assert plan_query("rename foo in river.py", vocabulary=vocabulary, lexicon=small_lexicon).translated == {}
        assert plan_query("rename foo in the river.py river", vocabulary=vocabulary,
                          lexicon=small_lexicon).translated == {"river": "nehir"}
        assert [h.slug for h in ix.recall("rename foo in river.py", top=3)] == ["river-loader"]
        assert [h.slug for h in ix.recall("rename foo in servers.py", top=3)] == ["river-loader"]
        assert "sunucu" in [h.slug for h in ix.recall("rename foo in servers", top=3)]
        assert "nehir-olcumleri" in [h.slug for h in ix.recall("rename foo in the river loader", top=3)]
    from dreamdb.ranking.rank import name_words

    assert name_words("rename foo in src/rivers.py") == {"src", "rivers", "py"}
    assert name_words("the rivers in rivers.py, see github.com") == {"py", "github", "com"}
    assert name_words("README.MD and archive.tar.gz") == {"readme", "md", "archive", "tar", "gz"}
    assert name_words("a sentence.Then another, v1.2 and 3.14") == frozenset()


def test_a_sentence_run_on_at_its_period_is_no_file_name(tiny_vault, small_lexicon, kenet_lexicon):
    """QA round 150-H F2 (a regression of 150-F F4): every ``word.xx`` to ``word.xxxx`` was read as a file name, so a
    sentence run on without the space after its period lost its last word's translation: "önbellek
    temizlenmiyor.ama neden" no longer translated ``temizlenmiyor``, which "önbellek temizlenmiyor. ama neden" did. A
    run-on ``word.word`` is a name only when the word after its dot cannot be the next sentence's first word (a
    stopword; a Turkish word the lexicon lists after a Turkish word), unless it has a path or a second dot."""
    from dreamdb import hook as H
    from dreamdb.analyzer import normalize
    from dreamdb.ranking.rank import name_words

    write_doc(tiny_vault, "knowledge/nehir-olcumleri.md", "---\ntitle: Nehir ölçümleri\n---\nNehir kenarındaki "
              "istasyonların su seviyesi ölçümleri haftalık toplanır.\n")
    write_doc(tiny_vault, "knowledge/river-loader.md", "---\ntitle: River loader\n---\nThe river loader reads the "
              "gauge files; rename foo there.\n")
    with dreamdb.open(tiny_vault, lexicon=small_lexicon) as ix:
        ix.sync()
        vocabulary = ix._vocabulary()
        for q in ("rename foo in the river.then restart", "rename foo in the river. then restart"):
            assert plan_query(q, vocabulary=vocabulary, lexicon=small_lexicon).translated == {"river": "nehir"}, q
        assert plan_query("rename foo in river.py", vocabulary=vocabulary, lexicon=small_lexicon).translated == {}
    lex = Lexicon(kenet_lexicon)
    for q in ("fix the cache.then restart", "var.ne", "kod çöktü.bu hata", "YOLLAR.BU", "önbellek temizlenmiyor.ama neden"):
        assert name_words(normalize(q)) == frozenset(), q
    # names stay names: a path, a second dot, an extension no stopword, though the lexicon lists it as a Turkish word
    # (QA round 150-J F1: after a word with a Turkish letter, bat, bin, bak were read as words and translated)
    assert lex.has(TR_EN, "bat") and lex.has(TR_EN, "bin")
    assert name_words("rename foo in src/rivers.py") == {"src", "rivers", "py"}
    assert name_words("README.MD and archive.tar.gz, app.log") == {"readme", "md", "archive", "tar", "gz", "app", "log"}
    assert name_words("see github.com, example.org and main.go") == {"github", "com", "example", "org", "main", "go"}
    assert name_words("src/then.de and www.example.de") == {"src", "then", "de", "www", "example"}
    assert name_words(normalize("başlat.bat çalışmıyor, çıktı.bin büyük")) == {"başlat", "bat", "çıktı", "bin"}
    # the hook reads an extension so too: the word after the period is the prompt's, counted by the gate
    assert H.file_extension_terms("the cache.then restart") == frozenset()
    assert H.file_extension_terms("çıktı.bin boyutu çok büyük") == {"bin"}
    assert H.file_extension_terms("başlat.bat and utils.py, README.MD") >= {"bat", "py", "md"}
    # with the real vault's words: the run-on query translates as the spaced one does
    d = tiny_vault.parent.parent / "cache-project" / "_dream_context"
    write_doc(d, "knowledge/cache-cleanup.md", "---\ntitle: Cache cleanup\n---\nThe build cache is cleaned on every "
              "release; clean it by hand when a stale entry stays.\n")
    write_doc(d, "knowledge/yedekleme.md", "---\ntitle: Yedekleme\n---\nSunucu yedekleri her gece alınır.\n")
    write_doc(d, "knowledge/codegen.md", "---\ntitle: Code generation\n---\nThe generation step writes the stubs.\n")
    with dreamdb.open(d, lexicon=lex) as ix:
        ix.sync()
        vocabulary = ix._vocabulary()
        for q in ("önbellek temizlenmiyor.ama neden", "önbellek temizlenmiyor. ama neden"):
            assert plan_query(q, vocabulary=vocabulary, lexicon=lex).resolved.get("temizlenmiyor") == "clean", q
        # (150-J F1: bat of başlat.bat was translated, generation, as the Turkish word the lexicon lists)
        plan = plan_query("başlat.bat çalışmıyor", vocabulary=vocabulary, lexicon=lex)
        assert "bat" not in plan.resolved and "bat" not in plan.translated, (plan.resolved, plan.translated)


def test_a_stopword_python_knows_as_an_extension_ends_a_file_name(tiny_vault, small_lexicon):
    """QA round 151-A F2: the part after a ``word.xx``'s dot was a sentence's next word whenever it was a stopword,
    and ``so`` is one: "rename foo in utils.so" translated ``utils`` by its stem (``hayır``) and brought a Turkish
    note at BM25 0, where "rename foo in utils.py" did not. A stopword that Python's mimetypes tables list as a
    file's extension (``so``, ``me``) ends a name; other stopwords still run a sentence on (``cache.then``)."""
    from dreamdb.analyzer import normalize
    from dreamdb.ranking.rank import known_extensions, name_words, run_on_sentence

    assert {"so", "me", "py", "bat", "bin", "zip"} <= known_extensions()
    assert "then" not in known_extensions() and "ama" not in known_extensions() and "bu" not in known_extensions()
    for name in ("utils.so", "libfoo.SO", "intro.me", "başlat.bat", "çıktı.bin"):
        assert not run_on_sentence(name), name
    for name in ("cache.then", "temizlenmiyor.ama", "çöktü.bu", "YOLLAR.BU", "var.ne"):
        assert run_on_sentence(name), name
    assert name_words("rename foo in utils.so") == {"utils", "so"}
    assert name_words(normalize("fix the cache.then restart")) == frozenset()
    write_doc(tiny_vault, "knowledge/sunucu.md", "---\ntitle: Sunucu ayarları\n---\nBu sunucu için yedekleme planı.\n")
    write_doc(tiny_vault, "knowledge/river-loader.md", "---\ntitle: River loader\n---\nThe river loader reads the "
              "gauge files; rename foo there.\n")
    with dreamdb.open(tiny_vault, lexicon=small_lexicon) as ix:
        ix.sync()
        vocabulary = ix._vocabulary()
        # (servers is no note's word: as a word it is translated, sunucu; in a file name it is a name's part)
        for q in ("rename foo in servers.so", "rename foo in servers.py"):
            assert plan_query(q, vocabulary=vocabulary, lexicon=small_lexicon).resolved == {}, q
            assert [h.slug for h in ix.recall(q, top=3)] == ["river-loader"], q


def test_english_queries_on_english_notes_are_untouched(tiny_vault, small_lexicon):
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    with dreamdb.open(tiny_vault, lexicon=small_lexicon) as ix:
        ix.sync()
        with_lexicon = plan_query("server sleep rivers", vocabulary=ix._vocabulary(), lexicon=small_lexicon)
        without = plan_query("server sleep rivers", vocabulary=ix._vocabulary())
        assert with_lexicon == without and without.synonyms == {} and without.resolved == {}


def test_the_environment_chooses_or_switches_off_the_lexicon(monkeypatch, small_lexicon, tmp_path):
    monkeypatch.setenv("DREAMDB_LEXICON", "off")
    assert lexicon_path() is None and load_lexicon() is None
    assert lexicon_status()["reason"] == "switched off by DREAMDB_LEXICON"
    monkeypatch.setenv("DREAMDB_LEXICON", str(small_lexicon.path))
    assert load_lexicon() is load_lexicon()  # opened once
    st = lexicon_status()
    assert st["installed"] and st["links"] == 16 + _GLOSSARY_LINKS and st["path"] == str(small_lexicon.path)
    monkeypatch.setenv("DREAMDB_LEXICON", str(tmp_path / "none.sqlite"))
    assert load_lexicon() is None and lexicon_status()["reason"].startswith("not built")


def test_a_lexicon_of_another_format_or_a_damaged_file_is_not_used(monkeypatch, small_lexicon, tmp_path, tiny_vault):
    conn = sqlite3.connect(small_lexicon.path)
    conn.execute("UPDATE meta SET value = '999' WHERE key = 'format'")
    conn.commit()
    conn.close()
    monkeypatch.setenv("DREAMDB_LEXICON", str(small_lexicon.path))
    assert load_lexicon() is None
    assert "format 999" in lexicon_status()["reason"] and "dreamdb lexicon build" in lexicon_status()["reason"]
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database" * 100)
    monkeypatch.setenv("DREAMDB_LEXICON", str(junk))
    assert load_lexicon() is None
    with pytest.raises(LexiconError, match="not a dreamdb lexicon"):
        Lexicon(junk)
    # passed as lexicon=, the hint speaks of that argument, not of the variable (QA round 75 F11)
    with pytest.raises(LexiconError, match="not a dreamdb lexicon") as info:
        dreamdb.open(tiny_vault, lexicon=junk)
    assert "lexicon=" in info.value.hint and "DREAMDB_LEXICON" not in info.value.hint


def test_a_dreamdb_index_or_another_sqlite_file_named_as_the_lexicon_is_said_to_be_no_lexicon(monkeypatch, tiny_vault,
                                                                                              tmp_path):
    """QA round 56: ``DREAMDB_LEXICON`` naming a dreamdb index was answered "has format None", and told to run a
    build that then refuses to replace it (a build never replaces a file that is not a lexicon)."""
    write_doc(tiny_vault, "knowledge/a.md", "---\nname: A\n---\nsleep debt\n")
    with dreamdb.open(tiny_vault) as ix:
        ix.sync()
        index_file = ix.index_path
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    conn.commit()
    conn.close()
    bare = tmp_path / "bare.sqlite"
    conn = sqlite3.connect(bare)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    for path, what in ((index_file, "(no format recorded): it looks like a dreamdb index"),
                       (other, "(no format recorded): it looks like another SQLite file"),
                       (bare, "(no such table: meta); it looks like another SQLite file")):
        monkeypatch.setenv("DREAMDB_LEXICON", str(path))
        reason = lexicon_status()["reason"]
        assert reason == (f"{path} is not a dreamdb lexicon {what} (point DREAMDB_LEXICON at a lexicon file, or at a"
                          " new file's path and run: dreamdb lexicon build)")
        assert load_lexicon() is None and "format None" not in unusable_lexicon()[1]
        with pytest.raises(LexiconError) as info:
            Lexicon(path)
        assert "format None" not in info.value.message and "point DREAMDB_LEXICON" in info.value.hint
    result = CliRunner().invoke(cli, ["lexicon", "status"])
    assert result.exit_code == 0 and "it looks like another SQLite file" in result.output
    result = CliRunner().invoke(cli, ["lexicon", "build"])  # (what the old message said to run)
    assert isinstance(result.exception, dreamdb.errors.WriteRefused) and "it is never replaced" in result.exception.message


def test_a_lexicon_with_a_damaged_page_is_refused_not_read_quietly(small_lexicon, tmp_path, monkeypatch):
    """QA round 4 (left then, done in session 27): a page-damaged lexicon was used, and the words on its
    damaged pages read as having no translation. The file is checked once per version (size, mtime)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("DREAMDB_CACHE_DIR")  # (which the markers go to when set)
    path = tmp_path / "big.sqlite"
    shutil.copy(small_lexicon.path, path)
    conn = sqlite3.connect(path)
    conn.executemany("INSERT INTO translations VALUES (?, ?, ?, ?)",
                     [(TR_EN, f"kelime{i:05d}", f"word{i}", f"word{i}") for i in range(3000)])
    conn.commit()
    conn.close()
    assert Lexicon(path).translations(TR_EN, "kelime01500") == ("word1500",)
    checks = list((tmp_path / "cache" / "dreamdb" / "lexicon-checks").iterdir())
    assert len(checks) == 1  # the sound file's check is remembered
    data = bytearray(path.read_bytes())
    middle = len(data) // 4096 // 2
    data[middle * 4096:(middle + 1) * 4096] = b"\xff" * 4096
    path.write_bytes(bytes(data))
    with pytest.raises(LexiconError, match="is damaged") as info:
        Lexicon(path)
    assert "dreamdb lexicon build" in info.value.hint
    monkeypatch.setenv("DREAMDB_LEXICON", str(path))
    assert load_lexicon() is None and "is damaged" in lexicon_status()["reason"]


def test_a_truncated_lexicon_is_said_to_be_damaged_with_the_way_to_rebuild_it(small_lexicon, kenet_dir, tmp_path,
                                                                               monkeypatch):
    """Session 34 left: a lexicon cut short (a copy stopped midway) was said to "look like another SQLite file",
    and told to point DREAMDB_LEXICON elsewhere, though a build at that path is what it needs (after deleting
    it: a build never replaces a file it cannot tell is a lexicon)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "cut.sqlite"
    path.write_bytes(small_lexicon.path.read_bytes()[:4096])  # the first page: the schema, not the tables
    monkeypatch.setenv("DREAMDB_LEXICON", str(path))
    reason = lexicon_status()["reason"]
    assert "damaged SQLite file" in reason and "another SQLite file" not in reason, reason
    assert "delete it and run: dreamdb lexicon build" in reason
    assert load_lexicon() is None and "delete it and run" in unusable_lexicon()[1]
    result = CliRunner().invoke(cli, ["lexicon", "build", "--from", str(kenet_dir)])
    assert isinstance(result.exception, dreamdb.errors.WriteRefused)  # not replaced: what the hint says first
    path.unlink()  # the advice, followed
    result = CliRunner().invoke(cli, ["lexicon", "build", "--from", str(kenet_dir)])
    assert result.exit_code == 0, result.output
    assert lexicon_status()["installed"] and load_lexicon() is not None


def test_recall_says_once_when_the_lexicon_file_it_would_use_is_unusable(monkeypatch, tiny_vault, small_lexicon,
                                                                          tmp_path):
    """QA session 20: an old-format or damaged lexicon was ignored in silence (only `lexicon status` said why)."""
    write_doc(tiny_vault, "knowledge/sleep-debt.md", ENGLISH_NOTES["knowledge/sleep-debt.md"])
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database" * 100)
    monkeypatch.setenv("DREAMDB_LEXICON", str(junk))
    with dreamdb.open(tiny_vault) as ix:
        assert [h.slug for h in ix.recall("sleep debt")] == ["sleep-debt"]
        first = ix.take_notes()
        assert any("lexicon is not used" in n and "not a dreamdb lexicon" in n for n in first), first
        ix.recall("sleep debt")
        assert not any("lexicon" in n for n in ix.take_notes())  # once per file state, not per query
    result = CliRunner().invoke(cli, ["recall", "--vault", str(tiny_vault), "sleep", "debt", "--json"])
    assert result.exit_code == 0 and any("lexicon is not used" in n for n in json.loads(result.output)["notes"])
    # a file DREAMDB_LEXICON names that does not exist (a typo, or not built yet): said, with the path (QA round 35)
    missing = tmp_path / "never-built.sqlite"
    monkeypatch.setenv("DREAMDB_LEXICON", str(missing))
    with dreamdb.open(tiny_vault) as ix:
        ix.recall("sleep debt")
        assert any(f"DREAMDB_LEXICON names {missing}, which does not exist" in n for n in ix.take_notes())
    assert str(missing) in lexicon_status()["reason"]
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for quiet in ("", "off"):  # nothing built where dreamdb looks by default, or switched off: nothing to say
        monkeypatch.setenv("DREAMDB_LEXICON", quiet)
        with dreamdb.open(tiny_vault) as ix:
            ix.recall("sleep debt")
            assert not any("lexicon" in n for n in ix.take_notes())
    # a key SQLite cannot take (a lone surrogate) reads as "no translation", preloaded or not
    assert small_lexicon.translations(TR_EN, "uy\ud800") == ()
    small_lexicon.preload("targets")
    assert small_lexicon.translations(TR_EN, "uy\ud800") == ()


def test_a_row_that_is_not_text_reads_as_no_translation(monkeypatch, tiny_vault, small_lexicon, tmp_path):
    """QA round 35: a row whose translations were a blob crashed recall (exit 70, a TypeError in the API)."""
    import shutil

    damaged = tmp_path / "damaged.sqlite"
    shutil.copy(small_lexicon.path, damaged)
    conn = sqlite3.connect(damaged)
    assert conn.execute("UPDATE translations SET terms = x'ff00', targets = x'00' WHERE word = 'uyku'").rowcount > 0
    conn.commit()
    conn.close()
    write_doc(tiny_vault, "knowledge/sleep-debt.md", ENGLISH_NOTES["knowledge/sleep-debt.md"])
    monkeypatch.setenv("DREAMDB_LEXICON", str(damaged))
    for warm in (False, True):  # by SQL statements, then preloaded
        with dreamdb.open(tiny_vault) as ix:
            if warm:
                ix.warm()
            assert [h.slug for h in ix.recall("uyku borcu nasıl hesaplanıyor")] == ["sleep-debt"]  # through borç
            assert Lexicon(damaged).translations(TR_EN, "uyku") == ()
    result = CliRunner().invoke(cli, ["recall", "--vault", str(tiny_vault), "uyku borcu nasıl", "--json"])
    assert result.exit_code == 0, result.output


def test_a_failed_build_keeps_the_previous_lexicon(kenet_dir, tmp_path):
    dest = tmp_path / "lex.sqlite"
    build_lexicon(dest, kenet_dir)
    before = dest.read_bytes()
    (kenet_dir / "turkish_wordnet.xml").write_text("<SYNSETS><SYNSET>broken", encoding="utf-8")
    with pytest.raises(LexiconError, match="Cannot read KeNet"):
        build_lexicon(dest, kenet_dir)
    assert dest.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left
    empty = tmp_path / "empty"
    empty.mkdir()
    for name in ("turkish_wordnet.xml", "english_wordnet_version_31.xml"):
        (empty / name).write_text("<SYNSETS></SYNSETS>", encoding="utf-8")
    with pytest.raises(LexiconError, match="No interlingual links"):
        build_lexicon(dest, empty)
    (empty / "turkish_wordnet.xml").write_text(TURKISH_XML, encoding="utf-8")  # QA round 68 L9: the English file's fault
    with pytest.raises(LexiconError, match="None of the English synsets .*turkish_wordnet.xml links to is in .*"
                                           "english_wordnet_version_31.xml"):
        build_lexicon(dest, empty)


def test_cli_build_and_status(kenet_dir, tmp_path, monkeypatch, capsys, tiny_vault):
    import subprocess
    import sys

    dest = tmp_path / "cli.sqlite"
    # QA round 68 L2: a build killed with kill -9 left its 4 MB temporary file for good
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale, live = tmp_path / f".cli.sqlite.{gone}.tmp", tmp_path / f".cli.sqlite.{os.getppid()}.tmp"
    stale.write_bytes(b"half a lexicon")
    live.write_bytes(b"being written by a running build")
    runner = CliRunner()
    res = runner.invoke(cli, ["lexicon", "build", "--from", str(kenet_dir), "--to", str(dest), "--json"])
    assert res.exit_code == 0, res.output
    assert not stale.exists() and live.exists()
    built = json.loads(res.stdout)
    assert built["path"] == str(dest) and built["links"] == 16 + _GLOSSARY_LINKS and built["tr_en"] >= 8
    monkeypatch.setenv("DREAMDB_LEXICON", str(dest))
    res = runner.invoke(cli, ["lexicon", "status", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["installed"] is True
    res = runner.invoke(cli, ["lexicon", "status"])
    assert f"{16 + _GLOSSARY_LINKS} Turkish–English word pairs" in res.output and "glossary" not in res.output
    # a file built before the glossary: status says to build it again
    with sqlite3.connect(dest) as conn:
        conn.execute("DELETE FROM meta WHERE key = 'glossary_version'")
    conn.close()
    res = runner.invoke(cli, ["lexicon", "status"])
    assert "glossary:   built without this dreamdb's glossary" in res.output and "dreamdb lexicon build" in res.output
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: A\n---\nsleep\n")
    out = runner.invoke(cli, ["status", "--vault", str(tiny_vault)]).output
    assert "built without this dreamdb's glossary of the words of software work: run `dreamdb lexicon build`" in out
    # a folder that is not KeNet's: said before reading (QA round 45 L10: exit 1 after "Reading … (about 10 s)"), not
    # found (exit 7), as model install --from of a folder without tokenizer.json (QA round 152-F F5: exit 2)
    assert main(["lexicon", "build", "--from", str(tmp_path), "--to", str(tmp_path / "x.sqlite")]) == 7
    err = capsys.readouterr().err
    assert f"Error: {tmp_path} is not KeNet's data folder: no turkish_wordnet.xml or english_wordnet_version_31.xml" \
        in err and "Is this KeNet's data folder" in err and "Traceback" not in err and "Reading" not in err
    assert not (tmp_path / "x.sqlite").exists()


def test_a_lexicon_built_by_another_analyzer_is_analysed_at_lookup_and_status_says_so(kenet_dir, tmp_path, monkeypatch,
                                                                                       tiny_vault):
    """A file whose stored terms are another analyzer version's (dreamdb upgraded since `lexicon build`)
    gives the same translations, analysed at each lookup, and `lexicon status` says to build it again
    (measured 2 Dec: gold-set recall 0.86 → 0.62 ms p50 on the first pass once it was rebuilt)."""
    import sqlite3

    dest = tmp_path / "old.sqlite"
    build_lexicon(dest, kenet_dir)
    fresh = Lexicon(dest)
    expected = {w: translated_terms(stem(w, True), w, fresh, True) for w in ("uykusu", "borcu", "güvenliği")}
    with sqlite3.connect(dest) as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'analyzer_version'")
    conn.close()
    old = Lexicon(dest)
    assert fresh.analysed and not old.analysed
    assert {w: translated_terms(stem(w, True), w, old, True) for w in expected} == expected
    monkeypatch.setenv("DREAMDB_LEXICON", str(dest))
    st = lexicon_status()
    assert st["installed"] and st["analysed"] is False and st["analyzer_version"] == "1"
    assert st["current_analyzer_version"] == f"{ANALYZER_VERSION}+{TERMS_VERSION}" != "1"
    out = CliRunner().invoke(cli, ["lexicon", "status"]).output
    assert f"stored by analyzer 1, this dreamdb's is {ANALYZER_VERSION}+{TERMS_VERSION}" in out
    assert "dreamdb lexicon build" in out
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: A\n---\nsleep\n")
    out = CliRunner().invoke(cli, ["status", "--vault", str(tiny_vault)]).output
    assert "its terms are another analyzer's (slower lookups): run `dreamdb lexicon build`" in out


def test_build_without_the_source_package_says_what_to_install(monkeypatch, tmp_path):
    import dreamdb.lexicon as L

    monkeypatch.setattr(L, "source_dir", lambda: None)
    with pytest.raises(LexiconError) as err:
        build_lexicon(tmp_path / "x.sqlite")
    from dreamdb.extras import install_command

    assert err.value.hint == f"Run: {install_command('lexicon')}  then: dreamdb lexicon build"
    assert "[lexicon]" in err.value.hint or "NlpToolkit-WordNet" in err.value.hint  # not PyPI's unrelated dreamdb


@pytest.mark.slow
def test_the_real_kenet_lexicon(kenet_lexicon):
    lex = Lexicon(kenet_lexicon)
    assert int(lex.meta["links"]) > 50_000
    assert lex.translations(TR_EN, "uyku")[0] == "sleep"
    assert "security" in lex.translations(TR_EN, "güvenlik")
    assert "uyku" in lex.translations(EN_TR, "sleep")
    assert "şehir" in lex.translations(EN_TR, "citi", stemmed=True)
    assert translated_terms("nehir", "nehirde", lex, True)[0] == "river"


@pytest.mark.slow
def test_an_english_word_reaches_a_turkish_note_whose_inflection_keeps_a_final_vowel(kenet_lexicon, tiny_vault,
                                                                                      monkeypatch):
    """QA round 38: "backup strategy" found nothing in a note titled "Veritabanı yedekleme stratejisi": strategy's
    translation strateji has the term stratej (Snowball reads its final i as a case ending), stratejisi has
    strateji. A Turkish translation is now also looked up as written."""
    from dreamdb.lexicon import analysed_translations, terms_version

    assert analysed_translations(["strateji", "yedekleme planı"], True)[:2] == ("stratej", "strateji")
    # QA round 58: a Turkish term of two letters with a Turkish letter is kept (network → ağ); other ones are not
    assert analysed_translations(["ağ", "şebeke"], True) == ("ağ", "şebek", "şebeke")
    assert analysed_translations(["ad", "isim"], True) == ("isim",) and analysed_translations(["go"], False) == ()
    assert Lexicon(kenet_lexicon).meta["analyzer_version"] == terms_version()
    monkeypatch.setenv("DREAMDB_LEXICON", str(kenet_lexicon))
    write_doc(tiny_vault, "knowledge/yedekleme.md", "---\ntitle: Veritabanı yedekleme stratejisi\n---\n"
                                                  "Gece yedekleri şifrelenir ve başka bir bölgede saklanır.\n")
    write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: Release checklist\n---\nThe steps of a release.\n")
    with dreamdb.open(tiny_vault) as ix:
        assert [h.doc_id for h in ix.recall("strategy", explain=True)] == ["knowledge/yedekleme"]
        ix.take_notes()
    # --explain names the translation as the dictionary writes it, also when the term chosen is its stem
    (tiny_vault / "knowledge" / "yedekleme.md").unlink()
    write_doc(tiny_vault, "knowledge/plan.md", "---\ntitle: Plan\n---\nBu yılın strateji belgesi.\n")
    with dreamdb.open(tiny_vault) as ix:
        assert [h.doc_id for h in ix.recall("strategy", explain=True)] == ["knowledge/plan"]
        notes = ix.take_notes()
        assert any(n.endswith(": strategy → strateji") for n in notes) and not any("stratej," in n or
                                                                                  n.endswith("stratej") for n in notes)


def test_the_other_forms_of_a_translation_are_its_stem_or_the_word_it_is_the_stem_of():
    # Snowball reads the final i of strateji as a case ending, and -ım of takım as a possessive
    assert stem("strateji", True) == "stratej" and stem("stratejisi", True) == "strateji" and stem("takım", True) == "tak"
    assert other_forms("strateji", ("plan", "stratej", "strateji")) == ("stratej",)
    held = ("tak", "takım", "grup", "ekip")
    assert other_forms("tak", held) == ("takım",)
    assert other_forms("takım", held) == ("tak",)
    assert other_forms("grup", held) == () and other_forms("tak", ("tak", "grup")) == ()


@pytest.mark.slow
def test_notes_writing_either_form_of_a_translation_are_found_alike(kenet_lexicon, tiny_vault, monkeypatch):
    """``strateji`` is the term ``stratej``, ``stratejisi`` the term ``strateji``: an English query's
    translation counts both forms as one term (its class), so both notes are found, and a replaced word's
    other form is not also added as a synonym."""
    monkeypatch.setenv("DREAMDB_LEXICON", str(kenet_lexicon))
    write_doc(tiny_vault, "knowledge/yedekleme.md", "---\ntitle: Veritabanı yedekleme stratejisi\n---\n"
                                                  "Gece yedekleri şifrelenir ve başka bir bölgede saklanır.\n")
    write_doc(tiny_vault, "knowledge/plan.md", "---\ntitle: Plan\n---\nBu yılın strateji belgesi.\n")
    write_doc(tiny_vault, "knowledge/diger.md", "---\ntitle: Toplantı\n---\nHaftalık toplantı notları.\n")
    with dreamdb.open(tiny_vault) as ix:
        ix.sync()
        plan = plan_query("strategy", vocabulary=ix._vocabulary(), lexicon=ix._lexicon())
        (term,) = plan.terms
        assert {term, *plan.forms[term]} == {"stratej", "strateji"}
        assert class_members(plan) == {term: (term, *plan.forms[term])} and not plan.synonyms
        hits = ix.recall("strategy", top=5)
        assert sorted(h.doc_id for h in hits) == ["knowledge/plan", "knowledge/yedekleme"]
        assert all(h.rank_score > 0 for h in hits)


def test_a_turkish_word_read_as_english_counts_with_its_other_form(tiny_vault):
    """QA round 41: ``strateji`` alone reads as English and is found as it is (``stratejisi`` is the term
    ``strateji``); the note writing ``strateji`` (the term ``stratej``) was missed."""
    write_doc(tiny_vault, "knowledge/yedekleme.md", "---\ntitle: Veritabanı yedekleme stratejisi\n---\n"
                                                  "Gece yedekleri şifrelenir ve başka bir bölgede saklanır.\n")
    write_doc(tiny_vault, "knowledge/plan.md", "---\ntitle: Plan\n---\nBu yılın strateji belgesi.\n")
    write_doc(tiny_vault, "knowledge/diger.md", "---\ntitle: Toplantı\n---\nHaftalık toplantı notları.\n")
    with dreamdb.open(tiny_vault, lexicon=None) as ix:
        ix.sync()
        plan = plan_query("strateji", vocabulary=ix._vocabulary())
        assert plan.terms == ["strateji"] and plan.forms == {"strateji": ("stratej",)}
        hits = ix.recall("strateji", top=5)
        assert sorted(h.doc_id for h in hits) == ["knowledge/plan", "knowledge/yedekleme"]
        score = {h.doc_id: h.score for h in hits}  # raw BM25 is of the query's term alone; rankScore counts the class
        assert score["knowledge/yedekleme"] > 0 == score["knowledge/plan"] and all(h.rank_score > 0 for h in hits)
        # QA round 44: a word's beginnings are not its forms (karınca, the stem kar, is not karın nor karı)
        write_doc(tiny_vault, "knowledge/karinca.md", "---\ntitle: Koloni\n---\nBahçedeki karınca kolonisi büyüdü.\n")
        write_doc(tiny_vault, "knowledge/karin.md", "---\ntitle: Sağlık\n---\nKarınlar ağrıyordu, doktora gittiler.\n")
        ix.sync()
        forms = plan_query("karınca", vocabulary=ix._vocabulary()).forms
        assert not any({"karın", "karı"} & set(f) for f in forms.values()), forms
        text = hits_text(ix.recall("strateji", top=5, explain=True), explain=True)
        assert "strateji           query" in text and "bm25f in class" in text  # not 0.0000 (its bm25f is the class's)


@needs_real_vault
@pytest.mark.slow
def test_turkish_questions_on_the_real_vault_reach_its_english_notes(kenet_lexicon, real_vault_copy):
    """The real vault's notes are mostly English, with some Turkish; "fiyatlandırma" (pricing) is in none."""
    lex = Lexicon(kenet_lexicon)
    query = "fiyatlandırma stratejisi"
    with dreamdb.open(real_vault_copy, lexicon=lex) as ix:
        ix.sync()
        plan = plan_query(query, vocabulary=ix._vocabulary(), lexicon=lex)
        assert plan.resolved["fiyatlandırma"] == "price"  # KeNet's first translation an English note has
        hits = ix.recall(query, top=3, explain=True)
        assert all("price" in {t["term"] for t in h.terms} for h in hits[:2])
    with dreamdb.open(real_vault_copy, lexicon=None) as ix:
        hits = ix.recall(query, top=3, explain=True)
        assert not any("price" in {t["term"] for t in h.terms} for h in hits)


@needs_real_vault
@pytest.mark.slow
def test_a_significant_first_sense_and_a_dropped_vowel_on_the_real_vault(kenet_lexicon, real_vault_copy):
    """Beside ``uyku``, ``borcu`` is *debt* (KeNet's first sense, G² 4.0 over the notes holding an anchor), not
    the commoner *post* (G² 5.7); ``beynini`` is looked up as *beyin* (brain), ``kaydı`` as *kayıt* (registration, record)."""
    lex = Lexicon(kenet_lexicon)
    with dreamdb.open(real_vault_copy, lexicon=lex) as ix:
        ix.sync()
        vocabulary = ix._vocabulary()
        plan = plan_query("uyku borcu nasıl hesaplanıyor", vocabulary=vocabulary, lexicon=lex)
        assert plan.translated["borcu"] == "debt"
        assert translated_terms("borcu", "borcu", lex, True).index("post") > 0  # a later sense, the notes hold it
        assert plan_query("projenin beynini bağlama", vocabulary=vocabulary, lexicon=lex).resolved["beyn"] == "brain"
        assert "record" in translated_terms(stem("kaydı", True), "kaydı", lex, True)  # none without the vowel


def test_a_build_never_replaces_a_file_that_is_not_a_lexicon(kenet_dir, tmp_path, monkeypatch):
    notes = tmp_path / "notes.txt"
    notes.write_text("my precious notes", encoding="utf-8")
    with pytest.raises(dreamdb.errors.WriteRefused, match="is not a dreamdb lexicon: it is never replaced"):
        build_lexicon(notes, kenet_dir)
    assert notes.read_text(encoding="utf-8") == "my precious notes"
    other_db = tmp_path / "index.db"
    conn = sqlite3.connect(other_db)
    conn.execute("CREATE TABLE documents (x)")
    conn.commit()
    conn.close()
    with pytest.raises(dreamdb.errors.WriteRefused):
        build_lexicon(other_db, kenet_dir)
    # an earlier lexicon, even of another format, is rebuilt; a symlink to one is written through
    real = tmp_path / "real.sqlite"
    build_lexicon(real, kenet_dir)
    link = tmp_path / "link.sqlite"
    link.symlink_to(real)
    build_lexicon(link, kenet_dir)
    assert link.is_symlink() and Lexicon(link).translations(TR_EN, "uyku") == ("sleep", "slumber")
    # a file under a file: one clear error
    with pytest.raises((LexiconError, dreamdb.errors.UsageError, dreamdb.errors.WriteRefused)):
        build_lexicon(notes / "x.sqlite", kenet_dir)
    # DREAMDB_LEXICON=off: no default file to build into
    monkeypatch.setenv("DREAMDB_LEXICON", "off")
    with pytest.raises(dreamdb.errors.UsageError, match="switches the lexicon off"):
        build_lexicon(None, kenet_dir)


def test_status_names_what_is_wrong_with_the_file(monkeypatch, small_lexicon, tmp_path, tiny_vault):
    monkeypatch.setenv("DREAMDB_LEXICON", str(tmp_path))
    assert "is a folder" in lexicon_status()["reason"]
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: A\n---\nsleep notes\n")
    with dreamdb.open(tiny_vault) as ix:  # QA session 25: recall said nothing of it
        assert [h.slug for h in ix.recall("sleep notes")] == ["a"]
        assert f"the Turkish–English lexicon is not used: {tmp_path} is a folder (point DREAMDB_LEXICON at a lexicon " \
               "file, or set DREAMDB_LEXICON=off)" in ix.take_notes()
    conn = sqlite3.connect(small_lexicon.path)
    conn.execute("UPDATE meta SET value = 'abc' WHERE key = 'links'")
    conn.commit()
    monkeypatch.setenv("DREAMDB_LEXICON", str(small_lexicon.path))
    st = lexicon_status()
    assert st["installed"] and st["links"] is None
    conn.execute("DROP TABLE translations")
    conn.commit()
    conn.close()
    st = lexicon_status()
    assert not st["installed"] and "\n" not in st["reason"] and "no such table" in st["reason"]
    assert load_lexicon() is None


def test_a_lexicon_path_that_cannot_be_checked_or_read_is_said_so_without_a_crash(monkeypatch, small_lexicon, tmp_path,
                                                                                     tiny_vault, capsys):
    """QA round 68 H1: DREAMDB_LEXICON naming a path too long (or in a folder that cannot be searched) crashed
    `lexicon status`, `status` and `lexicon build` (exit 70: an unguarded is_dir()), and recall's note said the
    file did not exist; M7: a lexicon the user cannot read was called "another SQLite file"."""
    import subprocess
    import sys

    from tests.conftest import permissions_bite

    long = str(tmp_path / ("a" * 300))
    monkeypatch.setenv("DREAMDB_LEXICON", long)
    assert lexicon_status()["reason"].endswith("cannot be checked (File name too long): point DREAMDB_LEXICON at a"
                                               " file you can read")
    assert main(["lexicon", "build"]) == 6  # (refused, as a folder that cannot be made is: QA round 116-A F8, exit 1)
    assert "Cannot write the lexicon to" in capsys.readouterr().err
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: A\n---\nsleep notes\n")
    with dreamdb.open(tiny_vault) as ix:
        assert [h.slug for h in ix.recall("sleep notes")] == ["a"]
        assert any("which cannot be checked (File name too long;" in n for n in ix.take_notes())
    assert main(["status", "--vault", str(tiny_vault)]) == 0
    assert "cannot be checked (File name too long)" in capsys.readouterr().out
    # unreadable: as a user whose permissions apply (root reads anything)
    prefix = permissions_bite()
    unreadable = tmp_path / "mine.sqlite"
    shutil.copy(small_lexicon.path, unreadable)
    unreadable.chmod(0)
    p = subprocess.run([*prefix, sys.executable, "-m", "dreamdb", "lexicon", "status", "--json"], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "DREAMDB_LEXICON": str(unreadable)})
    assert p.returncode == 0 and "permission denied" in json.loads(p.stdout)["reason"], p.stdout + p.stderr
    assert "another SQLite file" not in p.stdout


def test_turkish_typed_without_its_letters_or_in_title_case_is_translated(tiny_vault, small_lexicon):
    """Over English notes only: "uyku borcu" reads as English (no Turkish letter), but none of its words is
    in a note, so its words are tried as Turkish; a query in Title Case names nothing by its capitals."""
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    with dreamdb.open(tiny_vault, lexicon=small_lexicon) as ix:
        assert [h.slug for h in ix.recall("uyku borcu", top=2)] == ["sleep-debt"]
        # its Turkish letters typed as plain ones: güvenliği as guvenligi
        assert plan_query("sunucu guvenligi", vocabulary=ix._vocabulary(),
                          lexicon=small_lexicon).resolved == {"sunucu": "server", "guvenligi": "securiti"}
        assert small_lexicon.translations(TR_EN, "guvenlik", ascii=True) == ("security",)
        assert [h.slug for h in ix.recall("Sunucu Güvenliği", top=2)] == ["server-hardening"]
    write_doc(tiny_vault, "knowledge/flood.md", "---\ntitle: Flood gauges\n---\nThe river gauge readings.\n")
    with dreamdb.open(tiny_vault, lexicon=small_lexicon) as ix:
        # in capitals, I may stand for dotless ı: IRMAĞI is ırmağı (lowercased irmağı), the river; with its Ğ, only
        # Turkish writes it, so the query reads it ırmağı at once (QA round 70 A-M1)
        assert [h.slug for h in ix.recall("IRMAĞI", top=2)] == ["flood"]
        assert plan_query("IRMAĞI", vocabulary=ix._vocabulary(), lexicon=small_lexicon).resolved == {"ırmağı": "river"}
        assert plan_query("IRMAK", vocabulary=ix._vocabulary(), lexicon=small_lexicon).resolved == {"irmak": "river"}
        # an English query with a word a note has is not read as Turkish
        assert plan_query("sleep nehir", vocabulary=ix._vocabulary(), lexicon=small_lexicon).resolved == {}


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_capitalised_dictionary_word_opening_a_turkish_query_is_the_query_s_own_word(tiny_vault, small_lexicon,
                                                                                        engine):
    """QA round 149-G F1: a short Turkish query whose first word, capitalised as a sentence opens, was its one word
    with a Turkish letter was read as a name alone, not as Turkish, so none of its words was translated:
    ``Güvenlik sunucusu`` found nothing where ``güvenlik sunucusu`` found the note on server security. The opening
    capital says nothing about a name: a word the lexicon lists as Turkish is the query's own; a name it does not
    list still leaves an English query alone."""
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    with dreamdb.open(tiny_vault, lexicon=small_lexicon, engine=engine) as ix:
        ix.sync()
        vocab = ix._vocabulary()
        for query in ("Güvenlik sunucusu", "güvenlik sunucusu", "Bir not. Güvenlik sunucusu"):
            plan = plan_query(query, vocabulary=vocab, lexicon=small_lexicon)
            assert plan.turkish and plan.resolved == {"güvenlik": "securiti", "sunucus": "server"}, query
            assert [h.slug for h in ix.recall(query, top=2)] == ["server-hardening"], query
        # a name (no word of the lexicon) opening the query, or one inside it, is still no Turkish word
        for query in ("Müller sunucusu", "sunucusu Güvenlik"):
            assert plan_query(query, vocabulary=vocab, lexicon=small_lexicon).by_lexicon == [], query


def test_a_capitalised_word_opening_a_turkish_query_is_read_as_kenet_lists_it(tiny_vault, kenet_lexicon):
    """QA round 149-G F1, with KeNet: ``Sürüm notlari`` (release notes, typed without ``ı``) has one word with a
    Turkish letter, capitalised as a sentence opens; KeNet lists it, so the query reads as Turkish and finds the
    release notes, as ``sürüm notlari`` does. ``Müller`` is no word KeNet lists: ``Müller notlari`` stays a name's."""
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    lexicon = Lexicon(kenet_lexicon)
    with dreamdb.open(tiny_vault, lexicon=lexicon) as ix:
        ix.sync()
        assert [h.slug for h in ix.recall("Sürüm notlari", top=2)] == ["release-notes"]
        assert plan_query("Sürüm notlari", vocabulary=ix._vocabulary(), lexicon=lexicon).by_lexicon == ["sürüm"]
        assert plan_query("Müller notlari", vocabulary=ix._vocabulary(), lexicon=lexicon).resolved == {}


def test_a_capital_i_opening_a_turkish_query_is_read_as_dotless_where_kenet_lists_it(tiny_vault, kenet_lexicon):
    """QA round 150-A F1, with KeNet: a word opening the query with a capital ``I`` (Turkish ``ı``) was left out of the
    opening capitals the lexicon is asked about, so ``Isıtma sorunu`` (heating issue), its one word with a Turkish
    letter read as a name, was not read as Turkish nor translated, and found nothing where ``ısıtma sorunu`` found the
    note on heating. Read with its ``I`` as ``ı`` (or ``i``), a word KeNet lists is the query's own; a name it does
    not list (``Işıl``) is still a name, and a word in capitals (an acronym) is left as it was."""
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    write_doc(tiny_vault, "knowledge/heating.md", "---\ntitle: Office heating\n---\nThe heating issue: the boiler "
                                                  "stops every winter morning.\n")
    lexicon = Lexicon(kenet_lexicon)
    with dreamdb.open(tiny_vault, lexicon=lexicon) as ix:
        ix.sync()
        vocab = ix._vocabulary()
        for query in ("Isıtma sorunu", "ısıtma sorunu"):
            plan = plan_query(query, vocabulary=vocab, lexicon=lexicon)
            assert plan.by_lexicon == ["ısıtma", "sor"] and plan.resolved == {"ısıtma": "heat", "sor": "issu"}, query
            assert [h.slug for h in ix.recall(query, top=2)] == ["heating"], query
        assert plan_query("Işıl sorunu", vocabulary=vocab, lexicon=lexicon).resolved == {}  # a name KeNet lacks
        # an acronym and English I, read as English (no Turkish letter) with sorunu typed plainly, as before
        for query, terms in (("API sorunu", ["api", "issu"]), ("I sorunu", ["issu"])):
            assert plan_query(query, vocabulary=vocab, lexicon=lexicon).terms == terms, query


def test_an_inflected_word_opening_a_turkish_query_is_read_as_kenet_lists_its_root(tiny_vault, kenet_lexicon):
    """QA round 150-H F3, with KeNet: a word capitalised where the query opens was the query's own (no name) only where
    KeNet listed it as written, so one with a suffix, ``Işığı`` (ışık, light), ``Ekranı`` (ekran, screen), was a name,
    and ``Işığı kapat``, whose other word has no Turkish letter, was neither read as Turkish nor translated: it found
    nothing, while ``ışığı kapat`` found the note on the light. Its root no shorter than its analysis is looked up, as
    a translation reads it; a name is still one: ``Işıl`` (KeNet lacks it), ``Şükrü`` and ``Gülşen`` (no vowel
    restored: *şükür*, *gülüş* are other words)."""
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    write_doc(tiny_vault, "knowledge/desk-lamp.md", "---\ntitle: Desk lamp\n---\nThe desk light stays on all night; "
                                                    "switch it off before you leave.\n")
    write_doc(tiny_vault, "knowledge/monitor.md", "---\ntitle: Second monitor\n---\nThe screen goes dark after ten "
                                                  "minutes idle.\n")
    lexicon = Lexicon(kenet_lexicon)
    with dreamdb.open(tiny_vault, lexicon=lexicon) as ix:
        ix.sync()
        vocab = ix._vocabulary()
        for query, resolved, slug in (("Işığı kapat", {"ışığı": "light"}, "desk-lamp"),
                                      ("ışığı kapat", {"ışık": "light"}, "desk-lamp"),
                                      ("Işıkları kapat", {"ışıkları": "light"}, "desk-lamp"),
                                      ("Ekranı kapat", {"ekranı": "screen"}, "monitor"),
                                      ("ekranı kapat", {"ekra": "screen"}, "monitor")):
            assert plan_query(query, vocabulary=vocab, lexicon=lexicon).resolved == resolved, query
            assert [h.slug for h in ix.recall(query, top=2)] == [slug], query
        for query in ("Işıl kapat", "Şükrü kapat", "Gülşen kapat"):
            plan = plan_query(query, vocabulary=vocab, lexicon=lexicon)
            assert plan.resolved == {} and plan.terms == [query.split()[0].lower().replace("i", "ı", query[0] == "I"),
                                                          "kapat"], query


def test_a_lexicon_built_by_another_analyzer_version_is_analysed_when_looked_up(small_lexicon, tmp_path):
    """The analysed terms stored at build time are used only by the analyzer that made them."""
    import shutil

    copy = tmp_path / "older.sqlite"
    shutil.copy(small_lexicon.path, copy)
    conn = sqlite3.connect(copy)
    conn.execute("UPDATE meta SET value = 'older' WHERE key = 'analyzer_version'")
    conn.execute("UPDATE translations SET terms = 'stale'")
    conn.commit()
    conn.close()
    older = Lexicon(copy)
    assert small_lexicon.analysed and not older.analysed
    for term, word, from_turkish in (("uykus", "uykusu", True), ("borcu", "borcu", True), ("river", "rivers", False),
                                     ("server", "server", False)):
        assert translated_terms(term, word, older, from_turkish) == translated_terms(term, word, small_lexicon,
                                                                                     from_turkish) != ()


def test_a_damaged_lexicon_is_rebuilt_in_place_and_a_fifo_is_never_opened(kenet_dir, tmp_path, monkeypatch):
    dest = tmp_path / "lex.sqlite"
    build_lexicon(dest, kenet_dir)
    conn = sqlite3.connect(dest)
    conn.execute("DROP TABLE translations")
    conn.commit()
    conn.close()
    monkeypatch.setenv("DREAMDB_LEXICON", str(dest))
    assert load_lexicon() is None and "no such table" in lexicon_status()["reason"]
    build_lexicon(None, kenet_dir)  # what status advises: rebuilt where it is
    assert load_lexicon().translations(TR_EN, "uyku") == ("sleep", "slumber")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("DREAMDB_LEXICON", str(fifo))
    assert load_lexicon() is None  # returns at once: a FIFO is not opened
    assert "not a regular file" in lexicon_status()["reason"]
    # QA round 58 L4: status advised the build below, which refuses; it says where a build can go instead
    assert "or at a new file's path and run: dreamdb lexicon build" in lexicon_status()["reason"]
    with pytest.raises(dreamdb.errors.WriteRefused, match="not a regular file"):
        build_lexicon(None, kenet_dir)


def test_refusing_a_wal_database_leaves_nothing_beside_it_and_odd_meta_values_do_not_crash(kenet_dir, tmp_path,
                                                                                           monkeypatch):
    db = tmp_path / "idx.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(dreamdb.errors.WriteRefused):
        build_lexicon(db, kenet_dir)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    lex = tmp_path / "lex.sqlite"
    build_lexicon(lex, kenet_dir)
    monkeypatch.setenv("DREAMDB_LEXICON", str(lex))
    for value in ("²", None, 7, "abc"):
        conn = sqlite3.connect(lex)
        conn.execute("UPDATE meta SET value = ? WHERE key = 'links'", (value if value is not None else "",))
        conn.commit()
        conn.close()
        st = lexicon_status()
        assert st["installed"] and st["links"] == (7 if value == 7 else None)


def test_an_unwritable_destination_is_refused_before_the_reading(kenet_dir, tmp_path):
    announced = []
    a_file = tmp_path / "afile"
    a_file.write_text("x", encoding="utf-8")
    # refused as the model's folder is (exit 6), naming the file on the way (QA round 114-B F9: exit 1,
    # "Not a directory" of the folder under it)
    with pytest.raises(WriteRefused, match=f"Cannot create the folder {a_file}/deeper: {a_file} is a file") as info:
        build_lexicon(a_file / "deeper" / "x.sqlite", kenet_dir, announce=lambda: announced.append(1))
    assert info.value.exit_code == 6 and announced == []


def test_a_model_folder_under_a_file_names_the_file(tmp_path):
    """QA round 114-B F9: XDG_DATA_HOME set to a file was said as ``…/dreamdb/models: it is a file``."""
    from dreamdb.config import file_on_the_way
    from dreamdb.embeddings.locate import prepare_model_parent

    a_file = tmp_path / "afile"
    a_file.write_text("x", encoding="utf-8")
    assert file_on_the_way(a_file / "dreamdb" / "models") == a_file
    assert file_on_the_way(a_file.parent / "missing" / "x") is None and file_on_the_way(a_file.parent) is None
    with pytest.raises(WriteRefused, match=rf"it is a file, not a folder \({a_file}\)") as info:
        prepare_model_parent(a_file / "dreamdb" / "models" / "multilingual-e5-small")
    assert info.value.exit_code == 6


def test_the_api_takes_a_lexicon_path_and_refuses_anything_else(tiny_vault, small_lexicon, tmp_path):
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    with dreamdb.open(tiny_vault, lexicon=str(small_lexicon.path)) as ix:
        assert [h.slug for h in ix.recall("uyku borcu", top=1)] == ["sleep-debt"]
        assert ix.status()["lexicon"]["installed"] is True
    with pytest.raises(dreamdb.errors.UsageError, match="lexicon must be"):
        dreamdb.open(tiny_vault, lexicon=42)
    with pytest.raises(LexiconError):
        dreamdb.open(tiny_vault, lexicon=tmp_path / "missing.sqlite")


def test_the_api_reads_a_lexicon_path_from_home_or_relative_once(tiny_vault, small_lexicon, tmp_path, monkeypatch):
    """QA round 139-A F1, F6: ``lexicon='~/lex.db'`` was "Cannot read the lexicon ~/lex.db", a relative path was
    read from the current folder at each use, and ``lexicon=''`` was the LexiconError ". is not a regular file"."""
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    monkeypatch.setenv("HOME", str(small_lexicon.path.parent.parent))
    monkeypatch.chdir(small_lexicon.path.parent)
    for given in (f"~/{small_lexicon.path.parent.name}/{small_lexicon.path.name}", small_lexicon.path.name):
        with dreamdb.open(tiny_vault, lexicon=given) as ix:
            monkeypatch.chdir(tmp_path)
            assert [h.slug for h in ix.recall("uyku borcu", top=1)] == ["sleep-debt"]
            assert ix.status()["lexicon"]["path"] == str(small_lexicon.path)
            monkeypatch.chdir(small_lexicon.path.parent)
    for empty in ("", "  "):
        with pytest.raises(dreamdb.errors.UsageError, match="lexicon is empty"):
            dreamdb.open(tiny_vault, lexicon=empty)


def test_the_words_of_software_work_get_their_technical_sense_first(kenet_lexicon):
    """QA round 54: KeNet lacks istemci, derleme, kurulum (found through shorter roots: demand, nest) and lists
    sürüm's everyday senses first (circulation, currency); the glossary's senses now come first."""
    from dreamdb.analyzer import stem
    from dreamdb.lexicon import EN_TR, TR_EN, Lexicon
    from dreamdb.ranking.rank import translated_terms

    lex = Lexicon(kenet_lexicon)
    assert lex.meta["glossary_version"]
    for word, sense in (("kurulum", "installation"), ("istemci", "client"), ("sürümü", "version"), ("derleme", "build"),
                        ("önbellek", "cach"), ("kurduk", "instal"), ("güncelliyoruz", "updat"), ("birleştirme", "merg")):
        assert translated_terms(stem(word, True), word, lex, True)[0] == sense, word
    # a word whose everyday sense is as common keeps it first, with the technical one after it
    assert translated_terms(stem("günlük", True), "günlük", lex, True)[:2] == ("daili", "log")
    assert lex.translations(TR_EN, "sürüm")[:2] == ("version", "release")
    assert lex.translations(TR_EN, "sürüm")[2:4] == ("circulation", "currency")  # KeNet's senses follow
    assert lex.translations(EN_TR, "version")[0] == "sürüm"  # and the other way


def test_the_glossary_is_one_word_translations_of_words_it_lists_once():
    from dreamdb.analyzer import lower
    from dreamdb.glossary import COMPUTING_TR_EN

    words = [tr for tr, _ens in COMPUTING_TR_EN]
    assert len(words) == len(set(words)) > 100
    assert all(tr == lower(tr) and " " not in tr for tr in words)
    assert all(ens and all(e.isalpha() and e == e.lower() for e in ens) for _tr, ens in COMPUTING_TR_EN)


def test_a_privative_word_is_not_read_as_its_root(kenet_lexicon):
    """QA round 55: başarısız (unsuccessful) was translated as success, its root başarı's first sense."""
    from dreamdb.ranking.rank import _shorter_root_translations, _turkish_lookup_forms

    assert _turkish_lookup_forms("başarısız") == ("başarısız",)
    assert "başarısızlık" in _turkish_lookup_forms("başarısızlığı") and "başarı" not in _turkish_lookup_forms("başarısızlığı")
    assert "başarı" in _turkish_lookup_forms("başarılı")  # -lI ("with") keeps its root
    lex = Lexicon(kenet_lexicon)
    assert "success" not in {t for found in _shorter_root_translations(stem("başarısız", True), "başarısız", lex)
                             for t in found}
    assert "success" not in translated_terms(stem("başarısız", True), "başarısız", lex, True)
    # QA round 56: a privative KeNet lacks was translated as its root (the stemmer cut -sIz: hatasız → hata)
    for word, root_sense in (("hatasız", "error"), ("kablosuz", "cabl"), ("şifresiz", "password"),
                             ("şifresizken", "password")):
        assert root_sense not in translated_terms(stem(word, True), word, lex, True), word


def test_the_glossary_gives_the_words_of_software_work_their_senses(kenet_lexicon):
    """QA round 56: çerez was *appetizer*, özellik *property*, ayrıştırıcı nothing, in a vault of software notes."""
    lex = Lexicon(kenet_lexicon)
    for word, sense in (("çerez", "cooki"), ("özellik", "featur"), ("ayrıştırıcı", "parser"), ("yığın", "stack"),
                        ("zamanaşımı", "timeout"), ("belirteç", "token")):
        assert translated_terms(stem(word, True), word, lex, True)[0] == sense, word


@pytest.mark.slow
def test_a_short_word_typed_without_turkish_letters_is_translated(kenet_lexicon, tiny_vault, monkeypatch):
    """QA round 72 F1: ``hız limiti`` found the note on rate limits through ``hız`` → *rate*, ``hiz limiti``
    found nothing: a word was looked up as written only from four letters on (a bound meant for its
    beginnings), and the lexicon's stems are in Turkish letters."""
    from dreamdb.ranking.rank import _turkish_lookup_forms

    assert _turkish_lookup_forms("hiz")[:1] == ("hiz",) and "hı" not in _turkish_lookup_forms("hiz")
    monkeypatch.setenv("DREAMDB_LEXICON", str(kenet_lexicon))
    write_doc(tiny_vault, "knowledge/rate.md", "---\ntitle: API rate limiting\n---\nEach client gets a request rate "
                                             "of 100 per minute; the limit resets hourly.\n")
    write_doc(tiny_vault, "knowledge/yedek.md", "---\ntitle: Yedekleme\n---\nYedekler her gece alınır.\n")
    with dreamdb.open(tiny_vault) as ix:
        for query in ("hız", "hiz"):
            hits = ix.recall(query, explain=True)
            assert [h.doc_id for h in hits][:1] == ["knowledge/rate"], query
            assert any("→ rate" in n or "→ speed" in n for n in ix.take_notes()), query



@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_an_english_word_with_a_turkish_plural_alone_finds_the_english_note(tiny_vault, small_lexicon, engine):
    """QA round 76 F6: `pipelinelar`, `smsler` or `containerlardan` alone, over English notes, found nothing (read as
    English, they were no loanword: Snowball leaves a plural against vowel harmony, or after no vowel, and the root
    it leaves of containerlardan was never tried as written); in a Turkish sentence they were read."""
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/p.md", "---\ntitle: Deploy pipeline\n---\nThe CI pipeline deploys on every merge."
              " SMS alerts go to on-call. Containers restart.\n")
    write_doc(tiny_vault, "knowledge/q.md", "---\ntitle: Cooking\n---\nReading recipes about a costume party.\n")
    with dreamdb.open(tiny_vault, lexicon=small_lexicon, engine=engine) as ix:
        for query in ("pipelinelar", "smsler", "containerlardan", "pipelinelar nerede"):
            hits = ix.recall(query)
            assert [h.doc_id for h in hits][:1] == ["knowledge/p"] and hits[0].score > 0, query
        assert ix.recall("costumes")[0].doc_id == "knowledge/q"  # (an English word is read as English)
        assert ix.recall("readings")[0].doc_id == "knowledge/q"


def test_an_english_word_of_the_lexicon_is_not_read_as_turkish_typed_without_its_letters(real_vault_copy, kenet_lexicon):
    """QA round 77 G3: `dollar`, which no note of the real vault holds, was read as Turkish `dol` + the plural `-lar`
    and found three notes on *full*; `collar` was read as the root `col` (raw 7.6). KeNet has both as English words
    and not as Turkish ones. A Turkish word typed without its letters is still read so (`uyku borcu`), and a word
    both languages have (`kale`) is still tried as Turkish."""
    from dreamdb.lexicon import Lexicon
    from dreamdb.ranking.rank import english_word, plan_query

    lexicon = Lexicon(kenet_lexicon)
    assert english_word("dollar", lexicon) and english_word("collar", lexicon)
    assert not english_word("kale", lexicon) and not english_word("taksiye", lexicon)
    assert not english_word("dollar", None)
    with dreamdb.open(real_vault_copy, lexicon=lexicon, index_path=real_vault_copy.parent / "g3.db") as ix:
        assert ix.recall("dollar") == []
        plan = plan_query("collar", vocabulary=ix._vocabulary(), lexicon=lexicon)
        assert "col" not in plan.terms and "full" not in plan.terms, (plan.terms, plan.resolved)
        # (QA round 79 F11: inflected, and in a Turkish sentence, where the translation stages read it as Turkish)
        assert english_word("collars", lexicon) and english_word("collared", lexicon)
        for query in ("collars", "dollar kuru nedir"):
            plan = plan_query(query, vocabulary=ix._vocabulary(), lexicon=lexicon)
            assert not {"col", "full", "cross", "fill"} & {*plan.terms, *plan.synonyms, *plan.translated.values()}, (
                query, plan.terms, plan.synonyms, plan.translated)
        # (read as Turkish, translated as `uyku borcu nasıl` is since QA round 157-D F2: the two notes on sleep debt)
        assert {h.doc_id for h in ix.recall("uyku borcu")[:2]} == {"knowledge/sleep-debt.excalidraw",
                                                                   "feature/sleep-consolidation"}



def test_a_word_turkish_cannot_spell_or_an_english_sentence_is_not_read_as_turkish(real_vault_copy, kenet_lexicon):
    """QA round 83-A F2: no note holding them, ``deltaxyz`` was read as Turkish ``delta`` + an inflection, ``kafaxyz``
    as *kafa* (head), and ``the ansible`` as ``ansı`` (remember): the prompt hook then showed unrelated notes as keyword
    matches. A word with a letter the Turkish alphabet lacks (q, w, x) is no Turkish word, and a query whose function
    words are English (``the``) is not Turkish typed without its letters. Turkish so typed still is (``uyku borcu``,
    ``taksiye binmek istiyorum``: no English function word)."""
    from dreamdb.lexicon import Lexicon
    from dreamdb.ranking.rank import plan_query

    lexicon = Lexicon(kenet_lexicon)
    with dreamdb.open(real_vault_copy, lexicon=lexicon, index_path=real_vault_copy.parent / "f2.db") as ix:
        for query in ("deltaxyz", "kafaxyz", "the ansible", "what is the kafaxyz"):
            plan = plan_query(query, vocabulary=ix._vocabulary(), lexicon=lexicon)
            assert not plan.resolved and not plan.translated and not plan.by_lexicon, (query, plan.resolved)
            assert ix.recall(query) == [], query
        # the word alone (no function word either way) may still be Turkish typed without its letters
        assert plan_query("ansible", vocabulary=ix._vocabulary(), lexicon=lexicon).resolved
        # and in an English sentence, the Turkish spellings a Turkish note holds still count (QA round 84: "where is
        # the gunluk ozet" found nothing once function words turned off every Turkish reading)
        plan = plan_query("where is the gunluk ozet", vocabulary=ix._vocabulary(), lexicon=lexicon)
        assert plan.resolved == {"gunluk": "günlük", "ozet": "özet"} and not plan.translated, plan
        assert ix.recall("where is the gunluk ozet")
        # (read as Turkish, translated as `uyku borcu nasıl` is since QA round 157-D F2: the two notes on sleep debt)
        assert {h.doc_id for h in ix.recall("uyku borcu")[:2]} == {"knowledge/sleep-debt.excalidraw",
                                                                   "feature/sleep-consolidation"}
        plan = plan_query("taksiye binmek istiyorum", vocabulary=ix._vocabulary(), lexicon=lexicon)
        assert plan.resolved, plan

def test_a_turkish_word_typed_plainly_beside_an_english_word_is_spelled_out(real_vault_copy, kenet_lexicon):
    """QA round 85 F1: in ``ozet agent`` the English word the notes hold (agent) read the query as English, and
    ``ozet`` was not spelled out (*özet*, which Turkish notes hold): a word the lexicon has as Turkish typed without
    its letters, and in no sense as English, is. ``cabin crew`` (cabin is English) and ``basin`` (English, and
    *basın*) stay as typed."""
    from dreamdb.lexicon import Lexicon
    from dreamdb.ranking.rank import plan_query, turkish_typed_plainly

    lexicon = Lexicon(kenet_lexicon)
    assert turkish_typed_plainly("ozet", lexicon) and turkish_typed_plainly("gunluk", lexicon)
    assert not any(turkish_typed_plainly(w, lexicon) for w in ("cabin", "basin", "agent", "özet", "deltaxyz"))
    assert not turkish_typed_plainly("ozet", None)
    with dreamdb.open(real_vault_copy, lexicon=lexicon, index_path=real_vault_copy.parent / "f1.db") as ix:
        ix.recall("x")
        plan = plan_query("ozet agent", vocabulary=ix._vocabulary(), lexicon=lexicon)
        assert plan.resolved.get("ozet") == "özet", plan.resolved
        top = ix.recall("ozet agent", explain=True)[0]  # (a note holding özet: its IDF outweighs agent's)
        assert any(t["term"] == "özet" and t["bm25"] > 0 for t in top.terms), top.terms
        for query in ("cabin crew", "basin agent"):
            plan = plan_query(query, vocabulary=ix._vocabulary(), lexicon=lexicon)
            assert not {"cabin", "basin"} & set(plan.resolved), (query, plan.resolved)


def test_a_plainly_typed_turkish_query_is_not_made_english_by_a_word_one_english_note_quotes(real_vault_copy,
                                                                                            kenet_lexicon):
    """QA round 151-E F1: a Turkish query typed without its letters was read as English when any of its words was in
    any English note: in ``rakip analizi`` one English entry quoting *funnel analizi* kept ``rakip`` untranslated and
    found that entry alone; in ``mac bildirimleri`` the English notes on the Mac kept ``bildirimleri`` from
    *notification*. The words a note not analysed as Turkish holds no longer decide; the query's other words do, by the
    lexicon (more Turkish-only words and Turkish stopwords than English-only ones), and then its words are translated
    into the English notes as a Turkish question's are. ``mac`` alone, ``cabin crew`` and ``funnel analizi`` stay."""
    from dreamdb.lexicon import Lexicon
    from dreamdb.ranking.rank import plan_query, turkish_by_lexicon, turkish_only_word

    lexicon = Lexicon(kenet_lexicon)
    assert all(turkish_only_word(w, lexicon) for w in ("rakip", "analizi", "bildirimleri", "mac"))
    assert not any(turkish_only_word(w, lexicon) for w in ("yap", "cabin", "agent", "funnel", "deltaxyz", "özet"))
    with dreamdb.open(real_vault_copy, lexicon=lexicon, index_path=real_vault_copy.parent / "e1.db") as ix:
        ix.recall("x")
        vocabulary = ix._vocabulary()
        for query in ("rakip analizi", "rakip analizi yap", "mac bildirimleri", "bildirimleri"):
            assert turkish_by_lexicon(query.split(), lexicon, vocabulary), query
        for query in ("mac", "cabin crew", "funnel analizi", "the rakip analizi"):
            assert not turkish_by_lexicon(query.split(), lexicon, vocabulary), query
        plan = plan_query("rakip analizi", vocabulary=vocabulary, lexicon=lexicon)
        assert "rakip" in plan.resolved and "analizi" in plan.translated, plan
        top = [h.doc_id for h in ix.recall("rakip analizi")][:5]
        assert "knowledge/competitive-analysis-ecc" in top, top
        for query in ("mac bildirimleri", "bildirimleri"):
            plan = plan_query(query, vocabulary=vocabulary, lexicon=lexicon)
            assert "notification" in plan.synonyms or "notification" in plan.translated.values(), (query, plan)
        plan = plan_query("mac", vocabulary=vocabulary, lexicon=lexicon)
        assert not plan.resolved and not plan.translated and plan.terms == ["mac"], plan


def test_an_english_query_is_not_made_turkish_by_one_brand_word_the_lexicon_has_as_turkish(real_vault_copy,
                                                                                          kenet_lexicon):
    """QA round 151-H F1: the tech words of an English query (``sync``, ``api``, ``test``, ``audio``) are in the lexicon
    in both languages and cast no vote, so one brand or abbreviation the lexicon has as Turkish only (``asana``: *aşa*,
    ``bal``, ``ek``, ``bas``) outvoted none and read the whole query as Turkish: ``asana sync`` found the diagram
    holding *aşan* first, not the notes on sync. A word of both languages or of neither that an English note holds now
    counts against: the Turkish-only words and Turkish stopwords must outnumber such words too (``rakip analizi``,
    ``mac bildirimleri``, ``yedekler sifrelenir``, whose ``sifrelenir`` no note holds, still do)."""
    from dreamdb.lexicon import Lexicon
    from dreamdb.ranking.rank import plan_query, turkish_by_lexicon, turkish_only_word

    lexicon = Lexicon(kenet_lexicon)
    assert all(turkish_only_word(w, lexicon) for w in ("asana", "bal", "ek", "bas"))
    with dreamdb.open(real_vault_copy, lexicon=lexicon, index_path=real_vault_copy.parent / "h1.db") as ix:
        ix.recall("x")
        vocabulary = ix._vocabulary()
        english = ("asana sync", "asana api", "asana webhook", "bas audio", "ek api", "bal test", "bal sync server",
                   "ek webhook retry")
        for query in english:
            assert not turkish_by_lexicon(query.split(), lexicon, vocabulary), query
        for query in ("rakip analizi", "rakip analizi yap", "mac bildirimleri", "bildirimleri", "asana ve sync",
                      "yedekler sifrelenir"):
            assert turkish_by_lexicon(query.split(), lexicon, vocabulary), query
        plan = plan_query("asana sync", vocabulary=vocabulary, lexicon=lexicon)
        assert "asana" not in plan.resolved, plan
        top = [h.doc_id for h in ix.recall("asana sync")][:5]
        assert "knowledge/sleep-debt.excalidraw" not in top and any("sync" in d for d in top), top


def test_a_turkish_query_whose_suffixes_are_typed_without_their_letters_reads_as_turkish(real_vault_copy,
                                                                                          kenet_lexicon):
    """QA round 152-A F3: a word whose suffix carries the Turkish letters, typed without them (``ayarlari``,
    ``hatasi``, ``calisir``), was in no sense Turkish to the lexicon: the stemmer cuts no such suffix, and the lexicon
    has the word neither as written nor typed without its letters. So ``bildirim ayarlari`` read as English and
    ``bildirim`` was not translated (``bildirim ayarları`` was: *notification*). The root of a Turkish spelling of the
    word with a noun's or a verb's inflections after it counts (*ayar*, *hata*, *çalışmak*). A tech word beside one
    such word stays English (``login sayfasi``, ``sync hatasi``; QA round 151-H F1), as do English words whose
    beginning is a Turkish word (``admin``: *adım*, ``anti``, ``ascii``, ``align``)."""
    from dreamdb.lexicon import Lexicon
    from dreamdb.ranking import rank
    from dreamdb.ranking.rank import plan_query, turkish_by_lexicon, turkish_only_word

    lexicon = Lexicon(kenet_lexicon)
    turkish = ("ayarlari", "hatasi", "kaydi", "calisir", "calismiyor", "tabani", "anahtari", "sayfasi")
    assert all(turkish_only_word(w, lexicon) for w in turkish), [w for w in turkish if not turkish_only_word(w, lexicon)]
    assert {"ayar", "ayarlar"} <= set(rank._spelled_inflection_roots("ayarlari"))
    assert "çalışmak" in rank._spelled_inflection_roots("calisir") and "çalışmak" in rank._spelled_inflection_roots(
        "calismiyor")
    english = ("admin", "anti", "ascii", "align", "login", "sync", "server", "cursor", "generic", "localhost", "hook")
    assert not any(turkish_only_word(w, lexicon) for w in english), [w for w in english if turkish_only_word(w, lexicon)]
    with dreamdb.open(real_vault_copy, lexicon=lexicon, index_path=real_vault_copy.parent / "a3.db") as ix:
        ix.recall("x")
        vocabulary = ix._vocabulary()
        for query in ("bildirim ayarlari", "sunucu hatasi", "karar kaydi", "sync nasil calisir", "veri tabani"):
            assert turkish_by_lexicon(query.split(), lexicon, vocabulary), query
        for query in ("login sayfasi", "sync hatasi", "hook calismiyor", "asana sync", "bal test", "admin api"):
            assert not turkish_by_lexicon(query.split(), lexicon, vocabulary), query
        for query, word, sense in (("bildirim ayarlari", "bildirim", "notification"),
                                   ("sunucu hatasi", "sunucu", "server")):
            plan = plan_query(query, vocabulary=vocabulary, lexicon=lexicon)
            assert plan.translated.get(word) == sense, (query, plan.translated)
            assert plan_query(query.replace("ayarlari", "ayarları").replace("hatasi", "hatası"), vocabulary=vocabulary,
                              lexicon=lexicon).translated.get(word) == sense, query
        top = [h.doc_id for h in ix.recall("bildirim ayarlari")]
        assert len(top) >= 5, top


def test_a_spelled_suffix_is_read_in_turkish_syllables_and_harmony_with_a_turkish_letter_in_the_word():
    """QA round 153-A F1: the reading of 152-A F3 (a word's root and a suffix typed without its Turkish letters) took
    English words for Turkish ones, as it asked of the root and its suffix neither a Turkish letter, nor Turkish
    syllables, nor harmony with the root as the lexicon writes it: ``elide`` (*elit* + ``-e``, no Turkish letter),
    ``sitedir``; ``solr`` (*sol* + ``-r``: after a consonant the aorist is ``-Ir``), ``statm``, ``postm``, ``noterm``,
    ``testme`` (*teşt* + ``-m`` + ``-e``), ``centile`` (*çent* + ``-i`` + ``-le``: ``-yle`` after a vowel);
    ``reissue`` (*reis* + ``-süe``: a buffer ``s`` after a consonant, ``ü`` after ``i``), ``sortdir`` (``ı`` after
    ``o``; ``d`` after ``t``), ``normdir``; ``atomu`` (*atom* + ``-ü``, the root's vowel guessed ``ö``). Turkish
    words so typed keep their roots, with a Turkish letter in the suffix (``ayarlari``, ``hatasi``, ``calisir``) or in
    the root alone (``degisikligi``, ``gosteriyor``, whose stems the stemmer, reading ASCII, does not find)."""
    from dreamdb.ranking import rank

    # (the root as the lexicon writes it, the reading's lookup key)
    for word, root in (("elide", "elit"), ("sitedir", "site"), ("solr", "solmak"), ("statm", "stat"), ("postm", "post"),
                       ("noterm", "noter"), ("onerr", "önermek"), ("testme", "test"), ("centile", "çent"),
                       ("reissue", "reis"), ("sortdir", "sort"), ("normdir", "norm"), ("darpa", "darp"),
                       ("latina", "latin"), ("prima", "prim"), ("inmem", "inme"), ("volta", "volt"), ("atomu", "atom")):
        assert root not in rank._spelled_inflection_roots(word), (word, rank._spelled_inflection_roots(word))
    assert rank._spelled_inflection_roots("elide") == () and rank._spelled_inflection_roots("solr") == ()
    assert not rank._suffix_spellings("solr", 3, 1) and not rank._suffix_spellings("statm", 4, 0)
    assert not rank._suffix_spellings("reissue", 4, 0)
    assert not rank._joins("sort", "dır") and not rank._joins("sort", "dur") and rank._joins("sort", "tur")
    assert not rank._joins("reis", "sü") and not rank._joins("atom", "ü") and rank._joins("hata", "sı")
    for word, root in (("ayarlari", "ayar"), ("hatasi", "hata"), ("calisir", "çalışmak"), ("calismiyor", "çalışmak"),
                       ("tabani", "taban"), ("anahtari", "anahtar"), ("kitabi", "kitap"), ("agaci", "ağaç"),
                       ("baloncuga", "baloncuk"), ("degisikligi", "değişiklik"), ("gosteriyor", "göstermek")):
        assert root in rank._spelled_inflection_roots(word), (word, rank._spelled_inflection_roots(word))


def test_an_english_word_is_not_read_as_a_turkish_word_typed_without_its_letters(real_vault_copy, kenet_lexicon):
    """QA round 153-A F1: English queries read as Turkish typed without its letters, through the reading of 152-A F3,
    and their words were replaced by translations: ``elide param`` (*elit* + ``-e``: elide → *outstanding*),
    ``reissue repo`` (*reis*: *head*), ``sortdir param`` (*şort* + ``-dır``: *shorts*). The reading now wants a
    Turkish letter in the word, the suffix in Turkish syllables and in harmony with the root as the lexicon writes
    it: these words are no longer Turkish-only, and these queries translate nothing, while the Turkish queries of
    152-A F3 still read as Turkish."""
    from dreamdb.lexicon import Lexicon
    from dreamdb.ranking.rank import plan_query, turkish_by_lexicon, turkish_only_word

    lexicon = Lexicon(kenet_lexicon)
    english = ("elide", "reissue", "alice", "solr", "volta", "sitedir", "normdir", "sortdir", "testme", "statm",
               "inmem", "onerr", "noterm", "postm", "centile", "latina", "prima", "darpa")
    assert not any(turkish_only_word(w, lexicon) for w in english), [w for w in english if turkish_only_word(w, lexicon)]
    turkish = ("ayarlari", "hatasi", "kaydi", "calisir", "calismiyor", "tabani", "anahtari", "sayfasi", "degisikligi",
               "gosteriyor", "cercevesi", "baloncuga")
    assert all(turkish_only_word(w, lexicon) for w in turkish), [w for w in turkish if not turkish_only_word(w, lexicon)]
    with dreamdb.open(real_vault_copy, lexicon=lexicon, index_path=real_vault_copy.parent / "a153.db") as ix:
        ix.recall("x")
        vocabulary = ix._vocabulary()
        for query in ("elide param", "reissue repo", "sortdir param", "solr schema", "statm param"):
            assert not turkish_by_lexicon(query.split(), lexicon, vocabulary), query
            plan = plan_query(query, vocabulary=vocabulary, lexicon=lexicon)
            assert not plan.translated and not plan.resolved, (query, plan.translated, plan.resolved)
        for query in ("bildirim ayarlari", "sunucu hatasi", "karar kaydi", "sync nasil calisir", "veri tabani"):
            assert turkish_by_lexicon(query.split(), lexicon, vocabulary), query


def test_a_loanword_reading_that_is_also_a_translation_is_the_word_itself(real_vault_copy, kenet_lexicon):
    """QA round 77 G2: in `serverlardan veri` over the real vault, the word's loanword reading *server* is also one of
    KeNet's translations of Turkish "server", so all its translations the notes hold competed, and the query's other
    words chose *host*. A reading that is the word itself stays. Measured (4 Dec, BM25 nDCG@10, `python -m eval
    --set xquad --set dreamcontext --modes bm25`): paragraphs tr→en 0.816 → 0.818, tr→mixed +0.0003, sentences
    tr→en +0.0005; no track lower, the gold set unchanged."""
    from dreamdb.lexicon import Lexicon
    from dreamdb.ranking.rank import plan_query

    lexicon = Lexicon(kenet_lexicon)
    with dreamdb.open(real_vault_copy, lexicon=lexicon, index_path=real_vault_copy.parent / "g2.db") as ix:
        ix.recall("x")
        plan = plan_query("serverlardan veri", vocabulary=ix._vocabulary(), lexicon=lexicon)
        assert "server" in plan.terms and "host" not in plan.terms, (plan.terms, plan.resolved)
        # (QA round 77 G1: the notes' "SMS" is the term sm, an acronym's plural: smsler's root is read so too)
        for query in ("smsler", "smsler gitmiyor"):
            assert [h.doc_id for h in ix.recall(query)][:1] == [h.doc_id for h in ix.recall("sms")][:1] != [], query



def test_a_turkish_translation_spelled_as_an_english_word_is_not_a_synonym_of_an_english_query(real_vault_copy,
                                                                                                  kenet_lexicon):
    """QA round 153-G F4: the index keeps one term whatever the note's language, so an English query word's Turkish
    translation spelled as an English word matched the English notes writing that word: *roll* → ``top`` found
    notes on *top-level* (every first hit at raw score 0; the rollout note in none of the first 40), *processes* →
    *proses* (term ``prose``, 68 → 105 notes), *share* → ``pay``. Such a translation that an English note holds is
    not taken (the next sense the notes hold is: *process* → *işlem*); one that only Turkish notes hold, or that
    KeNet has as no English word (``iki``), is."""
    from dreamdb.lexicon import Lexicon
    from dreamdb.ranking.rank import class_members, english_reading, plan_query

    lexicon = Lexicon(kenet_lexicon)
    with dreamdb.open(real_vault_copy, lexicon=lexicon, index_path=real_vault_copy.parent / "f4.db") as ix:
        ix.recall("x")
        vocabulary = ix._vocabulary()
        assert english_reading({"top", "pay", "prose", "iki", "işlem"}, lexicon, vocabulary) == {"top", "pay", "prose"}
        assert english_reading({"top"}, None, vocabulary) == set()

        def taken(query):
            plan = plan_query(query, vocabulary=vocabulary, lexicon=lexicon)
            return plan, {*plan.terms, *plan.synonyms, *plan.translated.values(), *plan.resolved.values(),
                          *(m for members in class_members(plan).values() for m in members)}

        plan, words = taken("roll out")
        assert "top" not in words and plan.translated == {}, (plan.terms, plan.translated)
        plan, words = taken("Tauri app leaks orphaned dashboard server processes")
        assert "prose" not in words and plan.translated["process"] == "işlem", plan.translated
        plan, words = taken("how do we share context between agents")
        assert "pay" not in words and plan.translated.get("share") not in (None, "pay"), plan.translated
        plan, words = taken("two agents writing the same file")
        assert plan.translated["two"] == "iki", plan.translated  # (a Turkish word and no English one: kept)
        assert "knowledge/wave-by-wave-rollout" in [h.doc_id for h in ix.recall("roll out", 10, now="2026-08-20T00:00:00Z")]


def test_a_build_on_a_full_disk_says_so_and_leaves_no_file(kenet_dir, tmp_path, capsys):
    """QA round 123-B F6: ``lexicon build --to`` on a full disk said to "choose a writable path", and left SQLite's
    ``-journal`` of its temporary file behind. The hint names the full disk; nothing is left in the folder."""
    from tests.conftest import small_file_system

    with small_file_system(tmp_path / "small", "size=8k") as small:
        code = main(["lexicon", "build", "--from", str(kenet_dir), "--to", str(small / "lex.sqlite")])
        err = capsys.readouterr().err
        assert code == 1 and "Hint: Free space on that disk" in err, err
        assert sorted(p.name for p in small.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="file size limits (RLIMIT_FSIZE) are POSIX")
def test_a_build_past_the_file_size_limit_names_the_limit(kenet_dir, tmp_path):
    """Under ``ulimit -f`` the build's writes fail with EFBIG, which SQLite reports as "disk I/O error": the error
    said that, and to "choose a writable path". It names the file size limit; nothing is left in the folder."""
    import resource
    import subprocess
    import sys

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.run([sys.executable, "-m", "dreamdb", "lexicon", "build", "--from", str(kenet_dir),
                        "--to", str(out / "lex.sqlite")], capture_output=True, text=True, timeout=120, preexec_fn=limited)
    assert p.returncode == 1 and "larger than this process's file size limit (ulimit -f)" in p.stderr, p.stderr
    assert "Hint: Raise the file size limit" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert sorted(x.name for x in out.iterdir()) == []


def test_a_vault_synonym_of_a_translated_query_word_is_used(tiny_vault, small_lexicon, monkeypatch):
    """QA round 140-A F1: ``uyku, nap`` in synonyms.txt did nothing for the query ``uyku``, which the notes do not
    hold and the lexicon replaces by ``sleep``: the groups expanded the replacement only, not the word as typed."""
    write_doc(tiny_vault, "knowledge/sleep-guide.md", "---\ntitle: Sleep guide\n---\nHow sleep works.\n")
    write_doc(tiny_vault, "knowledge/naps.md", "---\ntitle: Afternoon\n---\nA short nap after lunch.\n")
    write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: Garden\n---\nTomatoes and beans.\n")
    write_doc(tiny_vault, "synonyms.txt", "uyku, nap\n")
    monkeypatch.setenv("DREAMDB_LEXICON", str(small_lexicon.path))
    with dreamdb.open(tiny_vault) as ix:
        hits = ix.recall("uyku")  # (the nap note through the synonym alone: raw score 0)
        assert [(h.doc_id, h.score > 0) for h in hits] == [("knowledge/sleep-guide", True), ("knowledge/naps", False)]
    write_doc(tiny_vault, "synonyms.txt", "")
    with dreamdb.open(tiny_vault) as ix:  # (the translation alone, as before)
        assert [h.doc_id for h in ix.recall("uyku")] == ["knowledge/sleep-guide"]


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_translation_counted_in_a_class_is_not_also_a_synonym(tiny_vault, small_lexicon, engine):
    """QA round 146-E F2: with ``sleep, consolidation`` in synonyms.txt, ``uyku konsolidasyonu nasıl`` counted
    *sleep* twice in BM25F: at full weight in the class ``uyku|sleep`` and at half weight as the synonym of
    consolidation (the English query ``sleep consolidation`` counts it once)."""
    for rel, text in ENGLISH_NOTES.items():
        write_doc(tiny_vault, rel, text)
    write_doc(tiny_vault, "knowledge/uyku-notu.md", "---\ntitle: Uyku notu\n---\nGece uyku düzeni ve uyku saatleri "
                                                    "burada tutulur.\n")
    write_doc(tiny_vault, "synonyms.txt", "sleep, consolidation\n")
    with dreamdb.open(tiny_vault, lexicon=small_lexicon, engine=engine) as ix:
        ix.sync()
        query = "uyku konsolidasyonu nasıl"
        plan = plan_query(query, vocabulary=ix._vocabulary(), lexicon=small_lexicon,
                          synonym_table=load_synonyms(ix.vault))
        assert plan.turkish and plan.translated == {"uyku": "sleep"} and "consolidation" in plan.terms, plan
        assert class_members(plan) == {"uyku": ("uyku", "sleep")}
        assert "sleep" not in plan.synonyms, plan.synonyms
        # sleep-debt's explanation: the class once, no synonym row of sleep
        hit = next(h for h in ix.recall(query, explain=True) if h.slug == "sleep-debt")
        assert {t["term"]: t["kind"] for t in hit.terms} == {"consolidation": "query", "uyku|sleep": "class"}
        # the English query counts sleep once too
        assert plan_query("sleep consolidation", vocabulary=ix._vocabulary(), lexicon=small_lexicon,
                          synonym_table=load_synonyms(ix.vault)).synonyms == {}


def test_lexicon_status_leaves_no_file_open(small_lexicon, monkeypatch):
    """QA round 143-F F1: each ``lexicon_status()`` (every ``Index.status()``) opened the lexicon and left its
    connection to the cycle collector: a server polling status with the collector off held one more file descriptor
    a call, and then failed with a bare OSError (Too many open files)."""
    import gc

    monkeypatch.setenv("DREAMDB_LEXICON", str(small_lexicon.path))
    target = str(small_lexicon.path.resolve())

    def open_on_lexicon() -> int:
        fds = os.listdir("/proc/self/fd")
        return sum(1 for fd in fds if os.path.realpath(f"/proc/self/fd/{fd}") == target)

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd (Linux) to count open files")
    before = open_on_lexicon()
    gc.disable()
    try:
        for _ in range(20):
            assert lexicon_status()["installed"]
        assert open_on_lexicon() == before
    finally:
        gc.enable()


def test_a_lexicon_at_a_path_too_long_for_sqlite_is_said_so(small_lexicon, tmp_path):
    """QA round 143-B F1: a valid lexicon at a path over SQLite's 504 bytes was called "not a dreamdb lexicon… another
    SQLite file"; a build to such a path failed the same way."""
    folder = tmp_path / ("a" * 200) / ("b" * 200) / ("c" * 120)
    folder.mkdir(parents=True)
    far = folder / "lex.sqlite"
    shutil.copy(small_lexicon.path, far)
    with pytest.raises(LexiconError) as info:
        Lexicon(far)
    assert f"its path is {len(os.fsencode(str(far)))} bytes long, and SQLite opens no database path over 504" \
        in info.value.message and "another SQLite file" not in info.value.message
    assert info.value.hint.startswith("move it to a path of at most 504 bytes")
    with pytest.raises(WriteRefused, match="SQLite cannot open the file it is built in beside it") as info:
        build_lexicon(folder / "new.sqlite", tmp_path / "kenet")
    assert "bytes shorter" in info.value.hint and not (folder / "new.sqlite").exists()


def test_a_lexicon_of_another_analyzer_passes_over_a_key_whose_translations_analyse_to_nothing(kenet_lexicon, tmp_path):
    """A file an earlier dreamdb built (its stored terms another analyzer's) gives the translated terms a rebuilt one
    gives: the first key whose translations leave a term once analysed. Analysed at lookup, the first key with
    translations was taken, even when they all analysed to nothing: ``yeniden`` (*again*, an English stopword) gave
    no translation where the stored terms pass to its stem ``yeni`` (*new*); 63 XQuAD Turkish questions' top 10s
    moved with such a file (7 Dec 2026)."""
    old = tmp_path / "older.sqlite"
    shutil.copy(kenet_lexicon, old)
    with sqlite3.connect(old) as conn:
        conn.execute("UPDATE meta SET value = 'older' WHERE key = 'analyzer_version'")
        keys = [k for (k,) in conn.execute("SELECT word FROM translations WHERE direction = ? ORDER BY word LIMIT 3000",
                                           (TR_EN,))]
        en_keys = [k for (k,) in conn.execute("SELECT word FROM translations WHERE direction = ? ORDER BY word "
                                              "LIMIT 1500", (EN_TR,))]
    conn.close()
    fresh = Lexicon(kenet_lexicon)
    cases = [(TR_EN, ("yeniden",), ("yeni",), False), (TR_EN, ("yeniden",), ("yeni",), True)]
    cases += [(TR_EN, (k,), (stem(k, True),), False) for k in keys]
    cases += [(EN_TR, (k,), (stem(k, False),), False) for k in en_keys]
    expected = [fresh.translated_terms(d, w, s, ascii=a) for d, w, s, a in cases]
    assert "new" in expected[0] and expected[0] == expected[1]
    for preload in (False, True):
        older = Lexicon(old)
        assert fresh.analysed and not older.analysed
        if preload:
            older.preload()
        assert [older.translated_terms(d, w, s, ascii=a) for d, w, s, a in cases] == expected


def test_turkish_stopwords_typed_without_their_letters_are_left_out_of_a_query_read_as_turkish(tiny_vault,
                                                                                                kenet_lexicon):
    """QA round 157-D F1: the Turkish stopwords typed without their letters (``icin``, ``cok``, ``degil``) were left in
    a query read as Turkish, searched and translated as Turkish words: ``recall icin cok onemli degil`` searched
    ``icin`` → *past* and ``cok`` → *collapse* (çök), where ``recall için çok önemli değil`` leaves its stopwords
    out.
    A query read as English keeps them (``su root shell``: the Unix ``su``), as does a query of them alone (``nasil``),
    and a form the lexicon has as a Turkish word as typed (``su``, *water*, beside ``şu``)."""
    from dreamdb.lexicon import Lexicon

    lexicon = Lexicon(kenet_lexicon)
    write_doc(tiny_vault, "knowledge/recall.md", "---\ntitle: Recall ranking\n---\nPast queries decide what is "
              "important; duplicate hits collapse into one. Run su as root in the shell. Water the plants.\n")
    write_doc(tiny_vault, "knowledge/yedek.md", "---\ntitle: Yedekleme\n---\nYedekler her gece alınır, bu önemli.\n")
    for engine in ("memory", "sql"):
        with dreamdb.open(tiny_vault, lexicon=lexicon, engine=engine) as ix:
            ix.recall("x")  # (synced)
            vocabulary = ix._vocabulary()
            plain = plan_query("recall icin cok onemli degil", vocabulary=vocabulary, lexicon=lexicon)
            lettered = plan_query("recall için çok önemli değil", vocabulary=vocabulary, lexicon=lexicon)
            # (onemli is found as önemli, the Turkish note's word)
            assert plain.terms == lettered.terms == ["recal", "önemli"], (plain, lettered)
            assert plain.resolved == {"onemli": "önemli"} and not plain.by_lexicon, plain
            # (one Turkish letter makes a query Turkish: its stopwords typed without theirs are left out too)
            assert plan_query("yedekler icin önemli", vocabulary=vocabulary, lexicon=lexicon).terms == ["yedek",
                                                                                                         "önemli"]
            assert "su" in plan_query("su root shell", vocabulary=vocabulary, lexicon=lexicon).terms
            assert plan_query("nasil", vocabulary=vocabulary, lexicon=lexicon).terms == ["nasil"]
            assert plan_query("su icin", vocabulary=vocabulary, lexicon=lexicon).terms == ["su"]
            assert [h.doc_id for h in ix.recall("recall icin cok onemli degil")][:1] == ["knowledge/recall"]


def test_a_query_read_as_turkish_by_the_lexicon_translates_the_words_turkish_notes_hold(tiny_vault, kenet_lexicon):
    """QA round 157-D F2: a Turkish query typed without its letters, read as Turkish by the lexicon, had none of the
    words a Turkish note holds translated: ``iki oturum`` searched ``iki`` and ``oturum`` alone (the Turkish notes
    holding them first), while ``iki oturum ş``, one Turkish letter more, counted ``iki`` with *two* and ``oturum``
    with *session*, one term each, and found the English notes on two sessions too. The same query with its letters
    and without them now gets the same translations."""
    from dreamdb.lexicon import Lexicon

    lexicon = Lexicon(kenet_lexicon)
    write_doc(tiny_vault, "knowledge/sessions.md", "---\ntitle: Two sessions at once\n---\nWhen two sessions run at "
              "once, each session writes its own progress file.\n")
    write_doc(tiny_vault, "knowledge/release.md", "---\ntitle: Release notes\n---\nWe shipped the installer.\n")
    write_doc(tiny_vault, "knowledge/oturum.md", "---\ntitle: Oturum açma\n---\nGiriş ekranı; iki adımlı doğrulama "
              "ve oturum süresi burada.\n")
    for engine in ("memory", "sql"):
        with dreamdb.open(tiny_vault, lexicon=lexicon, engine=engine) as ix:
            ix.recall("x")  # (synced)
            vocabulary = ix._vocabulary()
            plain = plan_query("iki oturum", vocabulary=vocabulary, lexicon=lexicon)
            lettered = plan_query("iki oturum ş", vocabulary=vocabulary, lexicon=lexicon)
            assert plain.translated == {"iki": "two", "oturum": "session"}, plain
            assert sorted(lettered.translated.values()) == sorted(plain.translated.values()), lettered
            assert set(class_members(plain)) == {"iki", "oturum"}  # (counted with the word: its note is found too)
            found = [h.doc_id for h in ix.recall("iki oturum", top=3)]
            assert set(found[:2]) == {"knowledge/sessions", "knowledge/oturum"}, found
