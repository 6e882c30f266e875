"""The analyzer: one pipeline for documents and queries (SPEC §2)."""

from __future__ import annotations

import pytest

from dreamdb.analyzer import analyze, is_turkish, is_turkish_text, raw_tokens
from dreamdb.stemming import english_stem, english_stem_reference


def test_identifiers_and_query_syntax_are_plain_text():
    assert analyze("DEC-0054") == ["dec", "0054"]
    assert analyze('"ADR-016" NOT (foo*) bar:baz') == ["adr", "016", "foo", "bar", "baz"]
    assert analyze("snake_case-and.dots") == ["snake", "case", "dot"]


def test_stopwords_and_short_tokens_dropped():
    assert analyze("what is the a of to") == []
    assert analyze("?!... ()**") == []
    assert analyze("x y z k8s") == ["k8s"]


@pytest.mark.parametrize("english_stem", [english_stem, english_stem_reference], ids=["dreamdb", "reference"])
def test_english_inflections_collapse_but_derivations_do_not(english_stem):
    assert english_stem("databases") == english_stem("database")
    assert english_stem("decided") == english_stem("decide")
    assert english_stem("policies") == english_stem("policy")
    assert english_stem("running") == english_stem("runs")
    assert english_stem("organization") == "organization"
    assert english_stem("protection") != english_stem("protect")


@pytest.mark.parametrize("english_stem", [english_stem, english_stem_reference], ids=["dreamdb", "reference"])
def test_english_stem_on_the_endings_its_fast_paths_skip(english_stem):
    """Porter2 step by step on words ending in l, g or d, which the fast paths return whole unless -ll,
    -ing or -ed; the regions R1/R2 (computed only when a rule needs them) decide -ll and -e."""
    cases = {"travel": "travel", "install": "instal", "fall": "fall", "spilled": "spill", "swing": "swing",
             "king": "king", "hoping": "hope", "fed": "fed", "bled": "bled", "need": "need", "agreed": "agre",
             "proceed": "proceed", "tangled": "tangl", "curled": "curl", "kissed": "kiss", "'tell": "tell"}
    assert {w: english_stem(w) for w in cases} == cases


@pytest.mark.parametrize("english_stem", [english_stem, english_stem_reference], ids=["dreamdb", "reference"])
def test_english_stem_reads_a_y_after_a_vowel_as_a_consonant(english_stem):
    """Porter2 marks y after a vowel (and a first y) as a consonant: it then neither ends a short
    syllable nor turns into i (step 1c)."""
    cases = {"saying": "say", "playing": "play", "obeyed": "obey", "yelling": "yell", "enjoying": "enjoy",
             "toys": "toy", "keyed": "key", "cries": "cri", "happy": "happi", "yes": "yes", "eyed": "eye", "payee": "paye",
             "sayyed": "sayi", "tyyes": "tyy"}  # (as Snowball's own stemmer: a y after a y follows a vowel)
    assert {w: english_stem(w) for w in cases} == cases


def test_turkish_case_and_plural_suffixes_collapse():
    q = analyze("veritabanları hakkında kararlar nasıl verildi")
    assert is_turkish("veritabanları hakkında kararlar nasıl verildi".split())
    assert "karar" in q
    assert analyze("kararları kitaplarımızdan", turkish=True) == ["karar", "kitap"]
    assert analyze("ürünün isimle", turkish=True) == [english_stem("ürünün"), english_stem("isimle")]  # no 2-letter fragments
    assert "nasıl" not in q  # Turkish question word is a stopword


def test_loanwords_in_turkish_text_get_their_english_terms():
    """Snowball appends a vowel to Turkish stems ending in d/g (dashboard → dashboardı); dreamdb takes it off."""
    from dreamdb.analyzer import _turkish_stemmer

    assert _turkish_stemmer().stemWord("dashboard") == "dashboardı"  # the library's own behaviour
    tr = analyze("dashboard sunucusu backend thread config hatası", turkish=True)
    en = analyze("dashboard server backend thread config error", turkish=False)
    assert [t for t in tr if t in en] == ["dashboard", "backend", "thread", "config"]
    # with case endings too (QA repro: dashboardda, threadde, cloudda kept Snowball's vowel)
    assert analyze("dashboardlar dashboardları dashboardda dashboard", turkish=True) == ["dashboard"] * 4
    assert analyze("threadde cloudda", turkish=True) == analyze("thread cloud", turkish=False)
    # where the word itself has a vowel at that place, the stem is Snowball's
    assert analyze("bugün bugünü", turkish=True) == ["bugu", "bugu"]  # not the English "bug"
    assert analyze("yardımı", turkish=True) == ["yardı"]  # not "yard"
    # native words ending in -di/-gi keep their terms, so a one-word ASCII query (read as English) meets them
    for word, inflected in (("kedi", "kediler"), ("bilgi", "bilgiler"), ("vergi", "vergileri"), ("sorgu", "sorgular")):
        assert analyze(inflected, turkish=True) == analyze(word, turkish=True) == analyze(word, turkish=False)


def test_a_privative_word_keeps_its_suffix():
    """QA round 56: Snowball reads -sIz as a possessive and a copula: hatasız (without errors) was hata (error),
    kablosuz (wireless) kablo (cable), şifresiz (without a password) şifr."""
    from dreamdb.analyzer import _turkish_stemmer

    assert _turkish_stemmer().stemWord("hatasız") == "hatas"  # the library's own behaviour
    assert analyze("hatasız hatasızdır kablosuz şifresiz şifresizken", turkish=True) == \
        ["hatasız", "hatasız", "kablosuz", "şifresiz", "şifresiz"]
    # with the -lIk that makes a noun of it (failure), which keeps its inflections off
    assert analyze("başarısızlık başarısızlığı başarısızlıkları", turkish=True) == ["başarısızlık"] * 3
    # the root's own inflections still go: hatası, hatasını are hata's; hırsız (thief) is a word of its own
    assert analyze("hata hatası hatasını", turkish=True) == ["hata"] * 3
    assert analyze("hırsızlar", turkish=True) == ["hırsız"]


def test_turkish_letters_kept_and_dotted_capital_folded():
    assert analyze("İstanbul ŞEHİR", turkish=True)[0].startswith("istanbul")
    assert "ş" in analyze("şehir", turkish=True)[0]


def test_digits_never_stemmed():
    assert analyze("v0.24.1 releases") == ["v0", "24", english_stem("release")]


def test_same_text_same_terms():
    text = "The dashboards' servers were protecting files"
    assert analyze(text) == analyze(text)


def test_c_and_python_turkish_stemmers_agree():
    """PyStemmer (C) and snowballstemmer (pure Python) run the same Snowball algorithm: same stems."""
    import json

    from dreamdb.analyzer import _python_turkish_stemmer, _turkish_stemmer, raw_tokens
    from tests.conftest import SHARED

    c, py = _turkish_stemmer(), _python_turkish_stemmer()
    assert type(c).__module__ == "Stemmer"  # the fast one is what dreamdb uses
    words = {"kitaplarımızdan", "evlerinde", "geliyorlar", "çalışıyor", "öğrencilerin", "güvenlik", "açıkları",
             "konsolidasyonu", "hesaplanıyor", "sunucusu", "Panthers'ın", "ağaçlar", "ılık", "İstanbul'da"}
    corpus = SHARED / "eval-data" / "xquad_tr_en" / "corpus.jsonl"
    if corpus.is_file():  # ~10,000 distinct Turkish words of XQuAD, where available
        for line in corpus.open(encoding="utf-8"):
            d = json.loads(line)
            if d.get("lang") == "tr":
                words.update(raw_tokens(d["text"]))
    words = sorted(w.lower() for w in words if len(w) > 3)
    assert [c.stemWord(w) for w in words] == [py.stemWord(w) for w in words]
    assert len(words) >= 14


def test_language_detection_counts_turkish_words():
    # the ratio of Turkish words (stopwords or words with ç ğ ı ö ş ü) against TURKISH_DETECTION_RATIO = 8 %
    words = "the cache layer keeps every hot key in memory until eviction ve done".split()
    assert len(words) == 13 and not is_turkish(words)  # 1/13 = 7.7 %
    assert is_turkish(words[1:])  # 1/12
    assert is_turkish(["çalışıyor"] + ["word"] * 11) and not is_turkish(["çalışıyor"] + ["word"] * 12)
    assert is_turkish(["için"] + ["word"] * 11)  # a stopword with a Turkish letter counts once
    assert not is_turkish([])


@pytest.mark.parametrize("text, turkish", [
    ("In 1186, Temüjin was elected khan of the Mongols.", False),  # one name, 1 of 10 words: over 8 %
    ("Soon after Börte's marriage to Temüjin, she was kidnapped by the Merkits", False),
    ("Gülşen: delete the license file", False),
    ("Temüjin 1186'da Moğolların hanı seçildi.", True),
    ("Sunucu güvenliği için the dashboard token is checked", True),  # 3 Turkish words, 1 English stopword
    ("the cache layer keeps every hot key in memory until eviction ve done", False),
    ("", False),
])
def test_a_text_naming_someone_in_turkish_letters_is_not_turkish(text, turkish):
    # the same test for a question and a note: Turkish hits must outnumber English-only stopwords
    words = raw_tokens(text)
    assert is_turkish_text(words) is turkish
    assert is_turkish(words) or not turkish  # never Turkish where the ratio alone says no


def test_word_cache_gives_the_same_terms_as_fresh_analysis():
    from dreamdb import analyzer

    text = "Databases were indexed; the indexing jobs index databases nightly (DEC-0054)."
    first = analyze(text)
    analyzer._ENGLISH_TERMS = {}  # a cold cache gives the same answer
    assert analyze(text) == first == analyze(text, words=analyzer.raw_tokens(text))
    assert first == ["databas", "index", "index", "job", "index", "databas", "nightli", "dec", "0054"]


def test_decomposed_and_compatibility_forms_analyse_like_composed_text():
    """QA round 12: ``Şifreleme`` saved in NFD (S + combining cedilla) was indexed as ``ifrel``."""
    import unicodedata

    composed = "Şifreleme anahtarı İstanbul'da değiştirildi"
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed and len(decomposed) > len(composed)
    assert analyze(decomposed) == analyze(composed)
    assert "ifrel" not in analyze(decomposed)
    stacked_nfd, stacked_nfc = [], []
    assert analyze(decomposed, stacked=stacked_nfd) == analyze(composed, stacked=stacked_nfc)
    assert stacked_nfd == stacked_nfc and stacked_nfc  # the capitalised words' second analysis too
    assert analyze("ﬁle ＳＱＬｉｔｅ") == analyze("file SQLite")  # ligature, full-width letters


def test_decomposed_text_is_found_by_composed_queries_and_back(tiny_vault):
    import unicodedata

    import dreamdb
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/nfd.md", unicodedata.normalize("NFD", "Şifreleme anahtarı döndürülür\n"))
    write_doc(tiny_vault, "knowledge/nfc.md", "Günlük yedekleme çalışır\n")
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall("şifreleme")] == ["knowledge/nfd"]
    assert [h.doc_id for h in index.recall(unicodedata.normalize("NFD", "günlük yedekleme"))] == ["knowledge/nfc"]
    index.close()


def test_combining_marks_never_split_words_and_only_optional_ones_are_ignored():
    """QA rounds 13 and 14: Hindi vowel signs split every word into letters; then removing every mark
    merged different words (काम work, कम less)."""
    assert analyze("हिन्दी भाषा") == ["हिन्दी", "भाषा"]  # vowel signs and virama stay inside the word
    assert analyze("काम") != analyze("कम") and analyze("ข้าว") != analyze("ขาว")
    assert analyze("مَدْرَسَة") == analyze("مدرسة") == analyze("مـدرسـة") == ["مدرسة"]  # short vowels, tatweel
    assert analyze("שָׁלוֹם") == analyze("שלום")  # Hebrew points
    assert analyze("i\u0307stanbul") == analyze("istanbul")  # i + combining dot above
    # invisible format characters never split a word
    assert analyze("inter\u00adnationalization") == analyze("internationalization")
    assert analyze("می\u200cخواهم") == analyze("میخواهم") and analyze("ab\u2060cd") == analyze("abcd")
    assert analyze("क्\u200dष") == analyze("क्ष") != []


def test_the_mark_table_matches_this_pythons_unicode_data():
    import re
    import unicodedata

    from dreamdb.unicode_marks import MARK_CLASS, UNICODE_VERSION, mark_class

    marks = re.compile(f"[{MARK_CLASS}]")
    for ch in ("\u0301", "\u094d", "\u093f", "\u064e", "\u20dd"):  # Mn, Mn, Mc, Mn, Me
        assert marks.fullmatch(ch)
    assert not any(marks.fullmatch(ch) for ch in "aZ09şİı-_ हم")
    if unicodedata.unidata_version != UNICODE_VERSION:
        pytest.skip(f"this Python has Unicode {unicodedata.unidata_version}, the table {UNICODE_VERSION}")
    assert MARK_CLASS == mark_class()


def test_text_below_the_first_mark_takes_the_plain_token_pattern_with_the_same_tokens():
    """The fast path of tokens(): no mark lies below _FIRST_MARK, so both patterns split Latin text alike."""
    import random
    import re
    import unicodedata

    from dreamdb import analyzer as A
    from dreamdb.unicode_marks import MARK_CLASS

    assert not any(re.fullmatch(f"[{MARK_CLASS}]", chr(c)) for c in range(ord(A._FIRST_MARK)))
    assert re.fullmatch(f"[{MARK_CLASS}]", A._FIRST_MARK)
    assert [chr(c) for c in range(ord(A._FIRST_MARK)) if A._IGNORABLE_RE.fullmatch(chr(c))] == ["\u00ad"]
    # _FROM_FIRST_MARK_RE matches exactly the code points from _FIRST_MARK up (whatever way it is written)
    first = ord(A._FIRST_MARK)
    assert not any(A._FROM_FIRST_MARK_RE.search(chr(c)) for c in range(first))
    assert all(A._FROM_FIRST_MARK_RE.fullmatch(chr(c)) for c in [*range(first, 0x3000), *range(0x3000, 0x110000, 97), 0x10FFFF])
    rnd = random.Random(7)
    alphabet = [chr(c) for c in range(0x20, 0x300)] + [" "] * 40
    for _ in range(3000):
        raw = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 30)))
        nfkc = unicodedata.normalize("NFKC", A._ACUTE_APOSTROPHE_RE.sub("'", raw))  # (´ typed for ': QA round 155-G F2)
        slow = A._IGNORABLE_RE.sub("", nfkc)  # the general path of normalize()
        assert A.normalize(raw) == (slow.replace("\u200b", " ") if A._FROM_FIRST_MARK_RE.search(nfkc) else slow), raw
        text = A.normalize(raw)
        # (the marked pattern's words, less the suffixes after an apostrophe: test_suffixes_after_an_apostrophe…)
        assert A.tokens(text) == A._marked_token_re().findall(A._APOSTROPHE_SUFFIX_RE.sub(A._drop_suffix, text)), text
    assert A.tokens("Çağrı şöyle: ölçüm") == ["Çağrı", "şöyle", "ölçüm"]
    assert A.tokens("ca\u0301fe\u0301") == ["ca\u0301fe\u0301"]  # a mark (NFKC left it) keeps its word whole


def test_text_with_no_mark_past_the_first_takes_the_plain_token_pattern_with_the_same_tokens():
    """QA round 152-A F4: text holding a dash or an arrow (most of the real vault's notes) read its words with the
    marked pattern, ≈ 4.5× as slow, for the same words; `sync --check` reads every document's words. The marks are
    looked for among the code points from U+0300 up (_marks: MARK_CLASS's characters, every one), and only text
    holding one takes the marked pattern."""
    import random
    import re

    from dreamdb import analyzer as A
    from dreamdb.unicode_marks import MARK_CLASS

    marks = re.compile(f"[{MARK_CLASS}]")
    assert A._marks() == {chr(c) for c in range(0x110000) if marks.fullmatch(chr(c))}
    assert A.token_pattern("a — b → c ≥ d ★ 🚀 ✓ я ب") is A._TOKEN_RE
    for marked in ("क्षत्रिय", "ca\u0301fe", "⚠\ufe0f note", "a 🚀 \U000e0100", "שָׁלוֹם"):
        assert A.token_pattern(marked) is A._marked_token_re(), marked
    assert A.tokens("क्षत्रिय — a→b") == ["क्षत्रिय", "a", "b"]
    rnd = random.Random(11)
    alphabet = ([chr(c) for c in range(0x20, 0x7f)] + list("—–→←≥≤★⚠✓çşğıöü") + [" "] * 20
                + [chr(c) for c in (0x301, 0x94d, 0x93f, 0xfe0f, 0x20dd, 0x1f680, 0xe0100, 0x5b8)])
    for _ in range(3000):
        text = A.normalize("".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 30))))
        assert A.tokens(text) == A._marked_token_re().findall(A._APOSTROPHE_SUFFIX_RE.sub(A._drop_suffix, text)), text


def test_capital_i_in_turkish_text_is_also_indexed_as_dotless():
    """QA round 13: KIRMIZI in a Turkish note was only kirmizi, so the query kırmızı missed it."""
    stacked: list[str] = []
    terms = analyze("KIRMIZI ve ILIK su, IBM ile çalışıyoruz", stacked=stacked)
    assert set(analyze("kırmızı ılık")) <= set(stacked)
    assert analyze("ibm", turkish=True)[0] in terms  # the name keeps its own term


def test_a_capital_i_in_a_word_with_a_turkish_only_letter_is_dotless_in_a_query(tmp_path):
    """QA round 70 M1: the query IŞIK AYARLARI was read işik ayarlari; a note writing IŞIK has that term too
    (the name reading of its capitals), so the query matched only that word and scored below ışık ayarları."""
    import dreamdb
    from dreamdb.analyzer import dotless_capitals, lower

    assert lower(dotless_capitals("IŞIK AYARLARI, Işık, ILIK, API, KIRMIZI, DİKKATLI")) == \
        "ışık ayarlari, ışık, ilik, api, kirmizi, dikkatlı"  # (AYARLARI: no such letter, both readings tried)
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "isik.md").write_text(
        "---\ntitle: Işık ayarları\n---\nIşık seviyesi gece düşük olmalı. IŞIK sensörü var.\n")
    (vault / "knowledge" / "ekran.md").write_text("---\ntitle: Ekran\n---\nEkran parlak.\n")
    index = dreamdb.open(vault)
    scores = {q: [(h.doc_id, h.score, h.rank_score) for h in index.recall(q, now="2026-08-18")]
              for q in ("ışık ayarları", "IŞIK AYARLARI", "Işık Ayarları")}
    lowercase = scores.pop("ışık ayarları")
    assert lowercase and lowercase[0][0] == "knowledge/isik"
    assert all(found == lowercase for found in scores.values()), scores


def test_a_capital_i_beside_a_turkish_only_letter_is_dotless_in_an_english_note_as_in_a_query(tmp_path):
    """QA round 155-G F1: an English note's ``ŞIRNAK`` was the term ``şirnak`` and its ``DİYARBAKIR`` ``diyarbakir``
    (plain lowercasing), where a query folds them as Turkish (dotless_capitals): ``ŞIRNAK``, ``Şırnak`` found no note,
    and ``DİYARBAKIR`` only the note writing ``Diyarbakır``. A word in capitals with no Turkish-only letter keeps
    its ``I`` (``ISPARTA``); a Turkish note, which indexes a capitalised word both ways, is as it was."""
    import dreamdb
    from dreamdb import analyzer
    from dreamdb.analyzer import dotless_capitals, raw_tokens
    from dreamdb.store.sync import document_terms
    from dreamdb.vault.parse import Document

    body = ("The team opened a field office in DİYARBAKIR and another in ŞIRNAK; the ISPARTA depot was closed. "
            "We met Işık from the ministry about IĞDIR and API keys.")
    postings, lengths, turkish = document_terms(Document(type="knowledge", slug="field", title="Field office report",
                                                         source_path="knowledge/field.md", body=body))
    assert not turkish
    assert {"diyarbakır", "şırnak", "ışık", "ığdır", "isparta", "api"} <= set(postings)
    assert "ısparta" not in postings
    # (the lowercased readings beside them, as a Turkish note's: stacked, in no field's length; QA round 156-A F2)
    assert {"diyarbakir", "şirnak", "işık", "iğdir"} <= set(postings)
    assert lengths[3] == len(analyzer.analyze(body, turkish=False))
    assert raw_tokens("ŞIRNAK ISPARTA") == ["şırnak", "isparta"] == analyzer.fold_written("ŞIRNAK ISPARTA").split()
    # a Turkish note indexes both readings of a capitalised word already (analyze's stacked), as before
    postings, _lengths, turkish = document_terms(Document(type="knowledge", slug="saha", title="Saha ofisi",
                                                          source_path="knowledge/saha.md",
                                                          body="Ekip DİYARBAKIR ve ŞIRNAK şehirlerinde ofis açtı."))
    assert turkish and {"diyarbakir", "diyarbakır", "şirnak", "şırnak"} <= set(postings)
    # (a word is read whole, from wherever its I stands; a long one costs one pass: it backtracked, 3.7 s for 20,000)
    assert dotless_capitals("xIşI IxI _IğI_ aİbI") == "xışı IxI _ığı_ aİbı"
    assert dotless_capitals("ış" * 10_000 + "I") == "ış" * 10_000 + "ı"
    assert dotless_capitals("I" * 20_000 + " ş") == "I" * 20_000 + " ş"
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "field.md").write_text(f"---\nname: Field office report\ndate: 2026-01-01\n---\n\n{body}\n")
    (vault / "knowledge" / "warehouse.md").write_text(
        "---\nname: Warehouse plan\ndate: 2026-01-01\n---\n\n"
        "The new warehouse in Diyarbakır will open in March; the depot near Iğdır stays.\n")
    index = dreamdb.open(vault)
    found = {q: sorted(h.doc_id for h in index.recall(q, now="2026-08-18"))
             for q in ("ŞIRNAK", "Şırnak", "şırnak", "DİYARBAKIR", "Diyarbakır", "ISPARTA", "Işık")}
    assert found == {"ŞIRNAK": ["knowledge/field"], "Şırnak": ["knowledge/field"], "şırnak": ["knowledge/field"],
                     "DİYARBAKIR": ["knowledge/field", "knowledge/warehouse"],
                     "Diyarbakır": ["knowledge/field", "knowledge/warehouse"],
                     "ISPARTA": ["knowledge/field"], "Işık": ["knowledge/field"]}


def test_an_english_notes_word_with_a_capital_i_and_a_turkish_only_letter_is_found_typed_without_it(tmp_path):
    """QA round 156-A F2: once an English note's ``DİYARBAKIR`` was read ``diyarbakır`` (as a query reads it, QA round
    155-G F1), ``Diyarbakir``, ``diyarbakir`` and ``DIYARBAKIR`` found it in no vault without a Turkish note (where no
    Turkish spelling of a query's word is tried), nor did ``Balikesir`` its ``BALIKESİR``. The note indexes the
    lowercased reading beside it (:func:`dreamdb.analyzer.dotted_terms`), as a Turkish note does the dotless one, and
    its snippet shows the line."""
    import dreamdb
    from dreamdb.analyzer import dotted_terms, fold_written, lower, normalize, tokens
    from dreamdb.ranking.snippet import best_snippet

    text = normalize("DİYARBAKIR, BALIKESİR, ŞIRNAK, IĞDIR, ISPARTA, API, İZMİR")
    assert dotted_terms(tokens(lower(text)), tokens(fold_written(text))) == ["diyarbakir", "balikesir", "şirnak",
                                                                             "iğdir"]
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "office.md").write_text(
        "---\ntitle: Office move\n---\n" + "".join(f"Line {i} is about budgets and rent.\n" for i in range(12))
        + "The team moved the office to DİYARBAKIR last spring and the rent was lower.\n")
    (vault / "knowledge" / "warehouse.md").write_text(
        "---\ntitle: Warehouse\n---\n" + "".join(f"Line {i} is about stock and rent.\n" for i in range(12))
        + "Our warehouse is in BALIKESİR near the highway.\n")
    (vault / "knowledge" / "filler.md").write_text("---\ntitle: Filler\n---\nBudgets and rent only.\n")
    index = dreamdb.open(vault)
    found = {q: [h.doc_id for h in index.recall(q, now="2026-08-18")]
             for q in ("Diyarbakir", "diyarbakir", "DIYARBAKIR", "Diyarbakır", "DİYARBAKIR", "diyarbakır",
                       "Balikesir", "balikesir", "BALIKESIR", "Balıkesir", "BALIKESİR")}
    assert found == {q: ["knowledge/office" if q.lower().startswith("d") else "knowledge/warehouse"] for q in found}
    for q in ("Diyarbakir", "DIYARBAKIR", "DİYARBAKIR"):
        assert "DİYARBAKIR last spring" in index.recall(q, now="2026-08-18")[0].snippet, q
    for q in ("Balikesir", "balikesir", "BALIKESIR", "Balıkesir"):  # (the ı in the term's first five letters, which
        # the snippet's pre-filter reads: QA round 156-G F2, the note's first lines were shown)
        assert "BALIKESİR near the highway" in index.recall(q, now="2026-08-18")[0].snippet, q
    assert "DİYARBAKIR" in best_snippet("budgets\nrent\nmore rent\nmoved to DİYARBAKIR\nend", ["diyarbakir"],
                                        turkish=False).split("\n")[1]


def test_an_english_notes_word_with_a_turkish_letter_is_found_typed_without_it(tmp_path):
    """QA round 156-G F4: ASCII spellings of an English note's words with Turkish letters other than ı/İ found it in
    no vault without a Turkish note (where no Turkish spelling of a query's word is tried, and in one with Turkish
    notes such a spelling counts only in them): ``sirnak``, ``Sirnak``, ``SIRNAK`` missed the note writing ``ŞIRNAK``
    (its terms ``şırnak``, ``şirnak``), ``isik`` the one writing ``IŞIK``, ``muller`` ``Müller``. A note not read as
    Turkish indexes each such word's ASCII spelling beside it (stacked: :func:`dreamdb.analyzer.ascii_terms`), as
    ``cafe`` finds ``café``; a Turkish note is as it was, and its snippet shows the line."""
    import dreamdb
    from dreamdb.store.sync import document_terms
    from dreamdb.vault.parse import Document

    body = ("The team opened an office in ŞIRNAK and the IŞIK lamp works there. We met Müller at the façade of the "
            "building, on the first floor, before lunch; the sign says ön taraf.")
    postings, lengths, turkish = document_terms(Document(type="knowledge", slug="field", title="Field office",
                                                         source_path="knowledge/field.md", body=body))
    assert not turkish and {"şırnak", "şirnak", "sirnak", "ışık", "isik", "müller", "muller", "facad"} <= set(postings)
    assert "on" not in postings and lengths[3] == len(analyze(body, turkish=False))  # (a stopword; stacked: no length)
    postings, _lengths, turkish = document_terms(Document(type="knowledge", slug="saha", title="Saha ofisi",
                                                          source_path="knowledge/saha.md",
                                                          body="Ekip ŞIRNAK şehrinde ofis açtı, ışık yanıyor."))
    assert turkish and not {"sirnak", "isik", "sehr", "ac"} & set(postings)  # (Turkish: its letters tell words apart)
    for with_turkish_note in (False, True):
        vault = tmp_path / f"v{with_turkish_note}" / "_dream_context"
        (vault / "knowledge").mkdir(parents=True)
        filler = "".join(f"Line {i} is about budgets and rent.\n" for i in range(12))
        (vault / "knowledge" / "field.md").write_text(f"---\ntitle: Field\n---\n{filler}The office in ŞIRNAK opened "
                                                      "and the IŞIK lamp works.\nWe met Müller there.\n")
        (vault / "knowledge" / "filler.md").write_text("---\ntitle: Filler\n---\nBudgets and rent only.\n")
        if with_turkish_note:
            (vault / "knowledge" / "tr.md").write_text("---\ntitle: Toplantı\n---\nBu toplantıda şirketin bütçesi "
                                                       "ve kira konuşuldu, çok önemli bir karar alındı.\n")
        index = dreamdb.open(vault)
        for q in ("sirnak", "Sirnak", "SIRNAK", "şırnak", "ŞIRNAK", "isik", "Isik", "IŞIK", "muller", "Müller"):
            hits = index.recall(q, now="2026-08-18")
            assert [h.doc_id for h in hits] == ["knowledge/field"], (with_turkish_note, q)
            line = "We met Müller" if q.lower().startswith("m") else "The office in ŞIRNAK"
            assert hits[0].snippet.split("\n")[1].startswith(line), (q, hits[0].snippet)


def test_zero_width_spaces_separate_words_and_variation_selectors_vanish():
    """QA round 15: removing U+200B glued words (Thai writes it between words); variation selectors stuck to
    their word so it no longer matched."""
    assert analyze("release\u200bchecklist") == analyze("release checklist")
    assert analyze("ภาษา\u200bไทย") == analyze("ภาษา ไทย") and len(analyze("ภาษา\u200bไทย")) == 2
    assert analyze("alpha\u2063beta") == analyze("alpha beta")
    assert analyze("葛\U000E0100城") == analyze("葛城") and analyze("café\ufe0f") == analyze("café")
    assert analyze("wo\U000E0020rd") == analyze("word")


def test_latin_diacritics_fold_to_their_letter_but_turkish_letters_stay():
    from dreamdb.analyzer import KEPT_LETTERS, latin_fold_table, lower

    pairs = [("Beyoncé", "Beyonce"), ("café crème", "cafe creme"), ("naïve", "naive"), ("Łódź", "Lodz"),
             ("Ørsted", "Orsted"), ("Việt", "Viet"), ("Åland", "Aland"), ("señor", "senor"), ("Dvořák", "Dvorak")]
    for accented, plain in pairs:
        assert analyze(accented, turkish=False) == analyze(plain, turkish=False), accented
    for a, b in (("şık", "sık"), ("çok", "cok"), ("gül", "gul"), ("göz", "goz"), ("ığdır", "igdir"), ("dağ", "dag")):
        assert analyze(a, turkish=True) != analyze(b, turkish=True), a  # Turkish words differ by these letters
    table = latin_fold_table()
    assert not KEPT_LETTERS & {chr(c) for c in table} and all(len(v) == 1 and v.isascii() for v in table.values())
    text = "".join(chr(c) for c in table)
    assert len(lower(text)) == len(text)  # one letter for one: snippet offsets stay valid


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_query_without_accents_finds_the_accented_note_and_back(tiny_vault, engine):
    import dreamdb
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/cafe.md", "---\ntitle: Team café\n---\n\nThe résumé review happens at the café.\n")
    write_doc(tiny_vault, "knowledge/naive.md", "---\ntitle: Naive Bayes\n---\n\nA naive baseline for the classifier.\n")
    ix = dreamdb.open(tiny_vault, engine=engine)
    assert [h.slug for h in ix.recall("resume cafe", top=2)] == ["cafe"]
    hits = ix.recall("naïve", top=2, explain=True)
    assert [h.slug for h in hits] == ["naive"] and hits[0].score > 0
    assert "café" in ix.recall("cafe", top=1)[0].snippet  # the line is found, shown as written
    ix.close()


@pytest.mark.parametrize("text, expected", [
    ("v0.5.0 shipped", ["0.5.0"]),
    ("See 1.2.3.", ["1.2.3"]),  # the sentence's full stop is not part of it
    ("Python 3.11.7 and 0.20.2", ["3.11.7", "0.20.2"]),
    ("bind 127.0.0.1:8080", ["127.0.0.1"]),
    ("C++ and C# and F#!", ["c++", "c#", "f#"]),
    ("(C++) C#-like", ["c++", "c#"]),
    ("C++17 and C++20, C++2b and C#10", ["c++", "c++", "c++", "c#"]),  # a version (QA 46 L2, QA 47 N8)
    ("c++x and c#d", []),  # a version starts with a digit
    ("DEC-0054 node.js x.1.2 page.html#c a+b c++x", []),  # the split loses nothing of these
])
def test_identifier_terms(text, expected):
    from dreamdb.analyzer import fold_case, identifier_terms

    assert identifier_terms(fold_case(text)) == expected


@pytest.mark.parametrize("text, expected", [
    ("setupVersion and safeChildPath", ["setup", "version", "safe", "child", "path"]),
    ("XMLHttpRequest", ["xml", "http", "request"]),  # a run of capitals before a capitalised part
    ("GitHub, GraphQL", ["git", "hub", "graph", "ql"]),  # PascalCase; capitals at the end
    ("isDeleted sessionId", ["delet", "session", "id"]),  # parts stemmed as English; 'is' is a stopword
    ("getV2Config", ["get", "v2", "config", "getv2", "v2config"]),  # digits stay with the letters; v2 joined too
    ("ProgPoW dLNs dcId", []),  # parts of under three letters on average: not words; LNs: a plural acronym
    ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg", []),  # base64
    ("aGVsbG8gV29y bG8gd2 9ybGQgaGVsbG8", []),  # mixed case every letter or two: data, not identifiers
    ("iPhone mRNAs clpC RhoA kDa", []),  # one part and a letter: a name, not a compound
    ("özelAyar", ["özel", "ayar"]),  # letters beyond ASCII inside the parts
    ("foo—barBaz", ["bar", "baz"]),  # a dash is no part of the word
    ("HTTP APIs URLs IDs plain text snake_case", []),  # capitals alone, a plural acronym, no capital: whole
    # QA round 51: a capitalised word after a run of capitals, a capital after a digit or a letter beyond ASCII
    ("XMLParser JSONDecoder HTTPSConnection", ["xml", "parser", "json", "decoder", "https", "connection"]),
    ("SQLite GTPase IOError", []),  # after two capitals: a name (SciFact's GTPase), not split
    ("microRNAs lncRNAs miRNAs", ["micro", "rna", "lnc", "rna"]),  # an acronym's plural s is not a letter of it
    ("utf8Decode sha256Hash", ["utf8", "decod", "sha256", "hash"]),
    ("userIDs", ["user", "id"]),  # a plural acronym is one part
    ("kullanıcıAdı", ["kullanıcı", "kullanıç", "adı"]),  # a word in Turkish letters: parts read in both languages
    ("550E8400-E29B 1Password abc123def", []),  # a number and a word; no capital at all
    # QA round 52: an acronym's plural inside a word; digits inside a part; a capital beyond ASCII
    ("getURLsForUser userIDsMap", ["get", "url", "user", "user", "id", "map", "userid", "idmap"]),
    ("log4jConfig K8sCluster i18nKeys 2FAEnabled", ["log4j", "config", "k8s", "cluster", "i18n", "key", "2fa", "enabl"]),
    ("x86Arch", []),
    # QA round 54: a part of one or two letters is kept joined to its neighbours too; capitals beyond ASCII
    ("OAuthClient MySQLDump", ["auth", "client", "oauth", "sql", "dump", "mysql"]),
    ("GraphQLSchema IPv6Address", ["graph", "ql", "schema", "graphql", "qlschema",
                                   "ip", "v6", "address", "ipv6", "v6address"]),
    ("ŞİRKETAdı ÖdemeServisi", ["şirket", "adı", "ödeme", "öde", "servisi", "servi"]),
    ("veriÖnbelleği and fooBar", ["veri", "ver", "önbelleği", "önbellek", "foo", "bar"]),  # a change into Ö
    # QA round 56: a run of capitals is also joined to the word before it (PostgreSQL of PostgreSQLAdapter)
    ("PostgreSQLAdapter", ["postgr", "sql", "adapter", "postgresql"]),
    # a path of 60 characters and more with a digit is no data here either (drop_data's rule, QA round 55)
    ("packages/frontend/components/Chart2D/LegendRenderer/ItemView", ["legend", "renderer", "item", "view"]),
])
def test_compound_terms(text, expected):
    from dreamdb.analyzer import compound_terms

    assert compound_terms(text) == expected


@pytest.mark.parametrize("text, expected", [
    # QA round 56: an acronym's plural is its singular too (stemming keeps the s after most consonants)
    ("Open PRs, JWTs, SDKs and CPUs on VMs", ["pr", "jwt", "sdk", "cpu", "vm"]),
    ("APIs URLs IDs K8s userIDs", []),  # stemmed already (api, url, id); a digit before the s; inside a word
    # a name ending in a capital S is kept whole (stemming made iOS io, AWS aw, macOS maco)
    ("iOS, macOS, watchOS and AWS", ["ios", "macos", "watchos", "aws"]),
    ("DNS HTTPS CSS ALWAYS STATUS US", []),  # stemmed to themselves; more than five capitals; a stopword
    ("jwts ios aws", []),  # lowercase: no case to tell by
])
def test_acronym_terms(text, expected):
    from dreamdb.analyzer import acronym_terms

    assert acronym_terms(text) == expected


@pytest.mark.parametrize("text, expected", [
    # QA round 54: base64 on one line, wrapped, and a JWT are no words (a prompt holding them injected notes)
    ("see " + "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg" + " ok",
     ["see", "ok"]),
    ("token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5"
     "MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c expired", ["token", "expired"]),
    # a hex digest, a 0x number, a long path, a long word without a digit: kept
    ("sha e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
     ["sha", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"]),
    ("0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc",
     ["0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc"]),
    ("src/components/SessionPanel/SessionPanelHeader/index2.tsx",
     ["src", "components", "SessionPanel", "SessionPanelHeader", "index2", "tsx"]),
    ("Pneumonoultramicroscopicsilicovolcanoconiosisandsupercalifragilisticexpialidocious",
     ["Pneumonoultramicroscopicsilicovolcanoconiosisandsupercalifragilisticexpialidocious"]),
    # QA round 55: paths and identifiers of 60 characters and more with a digit are words, not data
    ("packages/frontend/src/components/dashboard/widgets/Chart2D/Legend",
     ["packages", "frontend", "src", "components", "dashboard", "widgets", "Chart2D", "Legend"]),
    ("getUserAccountSettingsForOrganizationV2WithPermissionsAndRoles",
     ["getUserAccountSettingsForOrganizationV2WithPermissionsAndRoles"]),
    # (a PNG's base64, mostly A: data, though its letters are 73 % etaoin shrdlu)
    ("iVBORw0KGgoAAAANSUhEUgAAAIAAAACACAYAAADDPmHLAAAB0UlEQVR4nO3asW1CQRBAQdpyCa6CIpxTjgujDGTJNEC2QqvjTbDx", []),
    # QA round 132-B F5: … and so are identifiers of short words (test names), in English or Turkish
    ("shouldReturn404WhenUserIdIsNullAndApiKeyIsMissingInV2RequestToS3",
     ["shouldReturn404WhenUserIdIsNullAndApiKeyIsMissingInV2RequestToS3"]),
    ("givenUserIdIsNull_whenGetByIdIsCalled_thenItReturns404AndLogsAnError",
     ["givenUserIdIsNull", "whenGetByIdIsCalled", "thenItReturns404AndLogsAnError"]),
    ("kullaniciKimligiBosIseGetirmeIslemi404DondurmeliVeHataKaydetmeli",
     ["kullaniciKimligiBosIseGetirmeIslemi404DondurmeliVeHataKaydetmeli"]),
    ("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",  # a hex digest in capitals: one case
     ["E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"]),
    ("EyjafjallajokullVolcano.EyjafjallajokullAsh.report",  # no JWT: a JWT's parts start eyJ
     ["EyjafjallajokullVolcano", "EyjafjallajokullAsh", "report"]),
    # … and base64url, base64 in backticks, before a full stop, after key=, sha512- integrity strings are data
    ("`WyNi0TkYVbB5PZl6ZLo1xf-3ce-w6DYxKEn_7y6mTGPR9vNdxNe6LYfx6UE0mINTVvWgyBDF0mtX6mcnRAUbpQ`.",  []),
    ("key=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==", ["key"]),
    ("integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
     ["integrity"]),  # (the algorithm's name goes with its digest)
    # QA round 58: a commit hash in a URL does not make the path around it data
    ("https://github.com/acme/widgetfactory/blob/4f3a9c2e1b7d8f6a5c4e3b2a1f0e9d8c7b6a5f4e/src/TokenBucketLimiter.py",
     ["https", "github", "com", "acme", "widgetfactory", "blob", "4f3a9c2e1b7d8f6a5c4e3b2a1f0e9d8c7b6a5f4e", "src",
      "TokenBucketLimiter", "py"]),
    # QA round 56: lists of short names joined by / or + are words (base64 has a separator in 32 characters)
    ("AES128/AES256/ChaCha20/Poly1305/SHA256/SHA384/HMAC/ECDSA/Ed25519/X25519/RSA2048",
     ["AES128", "AES256", "ChaCha20", "Poly1305", "SHA256", "SHA384", "HMAC", "ECDSA", "Ed25519", "X25519", "RSA2048"]),
    ("IPv4/IPv6/TCP/UDP/ICMPv6/ARP/NDP/DHCPv6/DNSSEC/TLSv1/SSLv3/QUIC/gRPC/mTLS/OAuth2",
     ["IPv4", "IPv6", "TCP", "UDP", "ICMPv6", "ARP", "NDP", "DHCPv6", "DNSSEC", "TLSv1", "SSLv3", "QUIC", "gRPC", "mTLS",
      "OAuth2"]),
])
def test_tokens_drop_encoded_data(text, expected):
    from dreamdb.analyzer import normalize, raw_tokens, tokens

    assert tokens(normalize(text)) == expected
    assert raw_tokens(text) == [w.lower() for w in expected]  # the folded text loses the same runs


@pytest.mark.parametrize("engine", ["memory", "sql"])
def test_a_name_is_found_by_its_acronym_and_pasted_base64_finds_nothing(tiny_vault, engine):
    import base64
    import random

    import dreamdb
    from tests.conftest import write_doc

    bodies = {"n0": "We use the OAuthClient from the library.", "n1": "Nightly MySQLDump runs at 3am.",
              "n2": "The IPv6Address type is parsed strictly.", "n3": "ÖdemeServisi ve ŞirketAdı alanları zorunlu.",
              "n4": "veriÖnbelleği her gece temizlenir.",
              "n5": "Screenshot:\n" + base64.encodebytes(random.Random(3).randbytes(57 * 300)).decode(),
              # QA round 56: acronyms' plurals, a name ending in a capital S, a list of names, PostgreSQLAdapter
              "n6": "We rotate the JWTs hourly.", "n7": "The iOS build needs a provisioning profile.",
              "n8": "Disk IO is slow on CI.", "n9": "We wrote a PostgreSQLAdapter for the migration tool.",
              "n10": "Supported: AES128/AES256/ChaCha20/Poly1305/SHA256/SHA384/HMAC/ECDSA/Ed25519/X25519/RSA2048"}
    for slug, body in bodies.items():
        write_doc(tiny_vault, f"knowledge/{slug}.md", f"---\ntitle: {slug}\n---\n\n{body}\n")
    ix = dreamdb.open(tiny_vault, engine=engine)
    for query, slug in (("oauth", "n0"), ("mysql", "n1"), ("ipv6", "n2"), ("ödeme servisi", "n3"),
                        ("şirket adı", "n3"), ("önbellek", "n4"), ("JWT", "n6"), ("postgresql", "n9"),
                        ("ChaCha20", "n10"), ("Ed25519", "n10")):
        assert [h.slug for h in ix.recall(query, top=3)] == [slug], query
    assert [h.slug for h in ix.recall("iOS", top=3)] == ["n7", "n8"]  # the iOS note first (iOS was io alone)
    # QA round 58: typed in lowercase too (ios: the term the iOS note holds whole; jwts: jwt, a plural kept)
    assert [h.slug for h in ix.recall("ios", top=3)] == ["n7", "n8"]
    write_doc(tiny_vault, "knowledge/n11.md", "---\ntitle: n11\n---\n\nWe sign a JWT with RS256.\n")
    assert [h.slug for h in ix.recall("jwts", top=3)] == ["n6", "n11"]
    # (QA round 54: a prompt of base64 matched its fragments in notes, and the hook injected them)
    assert ix.recall(base64.b64encode(random.Random(2).randbytes(3000)).decode(), top=3) == []
    ix.close()


GIT_BINARY_PATCH = """diff --git a/c.bin b/c.bin
index 3b1c9a1..7d0e2f4 100644
GIT binary patch
literal 100
zcmV-q0Gt1gH*+<uB-U9DaKR2?y-$a)AM8}IX`#L&v-OAUMmNXmJsVZtmc+JT+Qjm&
zU?NoPKP${eAwbO2gw)t&TUk2z#a`^dy$V#v{eni~5%LDxkzN;pL8mv^ID@mWALRk~
G!V4}ILNjFm

literal 120
zcmV-;0Ehqcc725LZZ{*ZUQ6Oy<*Fc>mD{l*Qe#RVdazD|8CA)XhlX|YF+&mt86iXt
zK&nq|DMe_ABSir3{NB^2uxJ62S|^owrgNt6@&NQ#`+V^hF$7Rp>oehu(g?24TOqUt
aU&?DbTz=bwF?L{z2!XIS(RRAX-HP!h<T)Y$

"""
"""``git diff --binary`` of a file of 120 random bytes replaced by 100 (QA round 56)."""


@pytest.mark.parametrize("width", [20, 40, 48, 56])
def test_base64_wrapped_narrower_than_pem_gives_no_terms(width):
    """QA round 56: 1.2 KB of base64 wrapped at 56, 48 or 40 columns gave 87, 107 and 144 terms (at 64, none)."""
    import base64
    import random
    import textwrap

    from dreamdb.analyzer import raw_tokens

    wrapped = "\n".join(textwrap.wrap(base64.b64encode(random.Random(width).randbytes(900)).decode(), width))
    assert raw_tokens(f"see:\n{wrapped}\nthe end") == ["see", "the", "end"]
    assert raw_tokens(f"{wrapped}\nthe end".replace("\n", "\r\n")) == ["the", "end"]  # at the start; CRLF
    # lines of names, one width or not, are words
    assert raw_tokens("names:\nsetupVersionForUser\nsafeChildPathValue\ngetConfigFromFileX\n") == \
        ["names", "setupversionforuser", "safechildpathvalue", "getconfigfromfilex"]
    # QA round 58: indented (a code block) or quoted, and the word on the line after the blob is kept
    indented = "\n".join("    " + line for line in wrapped.splitlines())
    quoted = "\n".join("> " + line + "  " for line in wrapped.splitlines())
    assert raw_tokens(f"key:\n\n{indented}\n\nafter") == raw_tokens(f"key:\n{quoted}\nafter") == ["key", "after"]
    full = "\n".join(line for line in wrapped.splitlines() if len(line) == width)  # (no short last line)
    assert raw_tokens(f"key:\n{full}\nDeprecated") == ["key", "deprecated"]
    lines = -(-60 // width)  # (two lines or more, of 60 characters in all: MIN_BASE64_RUN)
    assert raw_tokens("key:\n" + "\n".join(full.splitlines()[:max(2, lines)]) + "\nend") == ["key", "end"]


def test_a_word_after_a_pem_blob_is_kept():
    """QA round 58: the line after wrapped base64 was taken for its short last line when it held a digit or three
    changes of case (Rotated2026, PostgreSQLAdapter)."""
    import base64
    import random

    from dreamdb.analyzer import raw_tokens

    blob = base64.encodebytes(random.Random(1).randbytes(57 * 3 + 20)).decode()  # a short last line, then a word
    assert raw_tokens(f"x\n{blob}PostgreSQLAdapter Rotated2026") == ["x", "postgresqladapter", "rotated2026"]
    assert raw_tokens(f"x\n{blob}Rotated2026") == ["x", "rotated2026"]


def test_a_git_binary_patch_gives_no_terms():
    """QA round 56: the base85 of a binary patch in a prompt made the hook inject unrelated notes."""
    from dreamdb.analyzer import raw_tokens

    assert raw_tokens("apply this patch:\n" + GIT_BINARY_PATCH + "thanks") == \
        ["apply", "this", "patch", "diff", "git", "a", "c", "bin", "b", "c", "bin", "index", "3b1c9a1", "7d0e2f4",
         "100644", "thanks"]
    assert raw_tokens(GIT_BINARY_PATCH.replace("\n", "\r\n")).count("zcmv") == 0  # CRLF line ends too


def test_random_base64_is_rarely_read_as_words_by_its_common_letters():
    """MIN_COMMON_LETTER_SHARE's measure, on a fixed sample: of 20,000 random runs of 76 characters (a line of the
    base64 command), hardly any is kept as words (3 in a million by the constant's measurement)."""
    import base64
    import random

    from dreamdb.analyzer import drop_data

    rng = random.Random(132)
    runs = [base64.b64encode(rng.randbytes(57)).decode() for _ in range(20_000)]
    kept = sum(drop_data(f"x {r} y") != "x   y" for r in runs)
    assert kept <= 2, kept


def test_a_note_and_a_query_of_base64_give_no_terms():
    """The index and the query planner fold case before they split words; encoded data is found before (its case
    tells it: QA round 55), so a note of 4 MB of base64 gave 157,702 terms until the index did so too."""
    import base64
    import random

    from dreamdb.ranking.rank import plan_query
    from dreamdb.store.sync import document_terms
    from dreamdb.vault.parse import Document

    b64 = base64.encodebytes(random.Random(1).randbytes(57 * 2000)).decode()
    doc = Document(type="knowledge", slug="x", source_path="knowledge/x.md", title="Screenshot",
                   body=f"The quick brown fox.\n{b64}\nend")
    postings, lengths, _turkish = document_terms(doc)
    assert sorted(postings) == ["brown", "end", "fox", "quick", "screenshot"] and lengths == [1, 0, 0, 4]
    assert plan_query("why " + base64.b64encode(random.Random(2).randbytes(3000)).decode()).terms == []


def test_wrapped_base64_in_a_note_gives_no_terms():
    import base64
    import random

    from dreamdb.analyzer import analyze

    wrapped = base64.encodebytes(random.Random(7).randbytes(57 * 200)).decode()  # 76 columns, every line full
    assert analyze(f"start\n{wrapped}end") == ["start", "end"]
    # QA round 55: its last, shorter line too, and wrapped base64 in a JSON string (lines joined by \n escapes)
    import json

    wrapped = base64.encodebytes(random.Random(5).randbytes(600)).decode()
    assert len(wrapped.splitlines()[-1]) < 60
    assert analyze(f"start\n{wrapped}end") == ["start", "end"]
    assert analyze(json.dumps({"image": wrapped, "name": "logo"})) == ["imag", "name", "logo"]


def test_compound_terms_skip_a_long_run_without_white_space_and_find_words_after_it():
    """QA round 51: 4 MB of pasted base64 used up the case changes looked at, and ``uniqueWordZebra`` written
    after it was not split; a run longer than MAX_COMPOUND_RUN is data, skipped whole."""
    import random

    from dreamdb.analyzer import MAX_COMPOUND_RUN, MAX_COMPOUND_SPANS, compound_terms

    rng = random.Random(0)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
    blob = "".join(rng.choice(alphabet) for _ in range(MAX_COMPOUND_SPANS * 30))
    assert compound_terms(f"fooBar {blob} uniqueWordZebra") == ["foo", "bar", "uniqu", "word", "zebra"]
    # a run at the bound is still looked at: its camelCase words are split
    short = ("setupVersion/" * MAX_COMPOUND_RUN)[:MAX_COMPOUND_RUN]
    assert len(short) == MAX_COMPOUND_RUN
    assert compound_terms(short).count("setup") == short.count("setupVersion") > 70
    assert compound_terms(short + "x") == [] and compound_terms("x" + short + " getV2Config") == ["get", "v2", "config", "getv2", "v2config"]
    # QA round 52: base64 wrapped at 76 columns used the bound up too (and gave parts of noise): skipped line by line
    import base64

    # (57 bytes a line: every line full; more lines than MAX_COMPOUND_SPANS, whose skips are not counted: QA round 53)
    wrapped = base64.encodebytes(rng.randbytes(57 * (MAX_COMPOUND_SPANS + 5_000))).decode()
    assert compound_terms(f"fooBar\n{wrapped}\nuniqueWordZebra") == ["foo", "bar", "uniqu", "word", "zebra"]
    # a path is no base64: a dot, or no digit
    assert compound_terms("see src/components/SessionPanel/SessionPanelHeader/index.tsx") == \
        ["session", "panel", "session", "panel", "header"]


@pytest.mark.parametrize("text, expected", [
    ("hook'un davranışı", ["hook", "davranışı"]),  # QA round 51: 'un' was a term of its own
    ("API'nin test'te CLI'ın CLI'ının v2'ye 2024'te", ["API", "test", "CLI", "CLI", "v2", "2024"]),
    ("GitHub'daki README'lerinden PR'ları Docker'la Ahmet'tir", ["GitHub", "README", "PR", "Docker", "Ahmet"]),
    ("İstanbul’da Ankara'ya", ["İstanbul", "Ankara"]),  # the typographic apostrophe too
    ("we're don't it's we'll", ["we", "don", "it", "we"]),  # English contractions
    ("O'Brien o'clock rock'n'roll", ["O", "Brien", "o", "clock", "rock", "roll"]),  # words after an apostrophe stay
    ("the 'quoted' word", ["the", "quoted", "word"]),  # an apostrophe that opens a quote is not inside a word
    # QA round 52: -lI, -sIz, -ki with a plural, -(y)ken, a verb made of the word, after # and +
    ("merge'ledik deploy'ladık Docker'lı API'siz Jira'dakiler Redis'teyken C#'ta C++'ın",
     ["merge", "deploy", "Docker", "API", "Jira", "Redis", "C", "C"]),
    # a copula with its person, a case after -ki (QA round 52, F8)
    ("Ankara'dayız Türkiye'deydik İzmir'desiniz Docker'sa Redis'miş GitHub'dakini GitHub'dakinden",
     ["Ankara", "Türkiye", "İzmir", "Docker", "Redis", "GitHub", "GitHub"]),
    ("ma'am Qur'an y'all l'homme", ["ma", "am", "Qur", "an", "y", "all", "l", "homme"]),  # not Turkish endings
])
def test_suffixes_after_an_apostrophe_are_not_words(text, expected):
    from dreamdb.analyzer import normalize, tokens

    assert tokens(normalize(text)) == expected


def test_apostrophe_look_alikes_between_letters_separate_a_suffix():
    """QA round 155-G F2: only ', U+2019 and U+02BC separated a Turkish suffix. ``Docker‘dan`` (U+2018), ``Docker′dan``
    (U+2032) and ``Docker´dan`` (U+00B4, which NFKC makes a space and a combining accent) gave the stray terms ``dan``
    and ``nin``; ``Redisʹin`` (U+02B9, a modifier letter, so a word's letter) was the term ``redisʹin``, which
    ``Redis`` did not find."""
    from dreamdb.analyzer import normalize, tokens

    plain = analyze("Docker'dan imajı çektik ve API'nin yanıtı geldi")
    assert "dan" not in plain and "nin" not in plain
    for mark in ("\u2018", "\u2032", "\u00b4", "\u02b9"):
        assert analyze(f"Docker{mark}dan imajı çektik ve API{mark}nin yanıtı geldi") == plain, hex(ord(mark))
        assert tokens(normalize(f"Redis{mark}in GitHub{mark}daki C#{mark}ta")) == ["Redis", "GitHub", "C"], hex(ord(mark))
        assert tokens(normalize(f"O{mark}Brien")) == tokens(normalize("O'Brien")) or mark == "\u02b9"  # (a letter)
    # not between letters: as before (a quote, a prime after a digit, a spacing accent alone); nor a backtick (code)
    assert tokens(normalize("the ‘quoted’ word, 5′ and 30′ long, a ´ b")) == ["the", "quoted", "word", "5", "and",
                                                                            "30", "long", "a", "b"]
    assert tokens(normalize("Docker`dan")) == ["Docker", "dan"]


def test_an_apostrophe_look_alike_or_an_underscore_ends_the_word_whose_capital_i_a_turkish_letter_makes_dotless(
        tmp_path):
    """QA round 156-A F4: ``ʼ`` (U+02BC) and ``ʹ`` (U+02B9) are letters to Unicode, and ``_`` a word character, so
    dotless_capitals read ``APIʼNİN`` and ``ADMIN_ŞİFRESİ`` as one word holding ``İ`` or ``Ş``: the terms ``apı``
    and ``admın``, where ``API'NİN`` gave ``api``. A word is what :func:`dreamdb.analyzer.tokens` reads as one (it
    splits at ``_``); the apostrophe and each look-alike end it."""
    import dreamdb
    from dreamdb.analyzer import dotless_capitals, fold_written, normalize, raw_tokens

    for mark in ("'", "\u2019", "\u02bc", "\u2018", "\u2032", "\u02b9", "\u00b4"):
        assert analyze(f"API{mark}NİN") == ["api"], hex(ord(mark))
        assert analyze(f"IŞIK{mark}IN") == ["ışık"], hex(ord(mark))  # (the word's own I still ı)
    assert dotless_capitals("APIʼNİN APIʹNİN ADMIN_ŞİFRESİ MAIL_ŞABLONU ÇALIŞAN_ID") == \
        "APIʼNİN APIʹNİN ADMIN_ŞİFRESİ MAIL_ŞABLONU ÇALıŞAN_ID"
    assert dotless_capitals("IŞIK_AYARI xIşI_I IʼŞ") == "ıŞıK_AYARI xışı_I IʼŞ"
    assert raw_tokens("ADMIN_ŞİFRESİ MAIL_ŞABLONU") == ["admin", "şifresi", "mail", "şablonu"]
    assert fold_written(normalize("ADMIN_ŞİFRESİ")) == "admin_şifresi"
    assert "admin" in analyze("ADMIN_ŞİFRESİ") and "mail" in analyze("MAIL_ŞABLONU değişti")
    from tests.conftest import write_docs

    vault = tmp_path / "_dream_context"
    write_docs(vault, {"knowledge/keys.md": "---\ntitle: Keys\n---\nThe APIʼNİN key and ADMIN_ŞİFRESİ are rotated"
                                            " monthly.\n",
                       "knowledge/other.md": "---\ntitle: Other\n---\nNothing rotated here.\n"})
    index = dreamdb.open(vault)
    assert [h.doc_id for h in index.recall("api admin", now="2026-08-18")] == ["knowledge/keys"]
    assert {t["term"] for t in index.recall("api admin", now="2026-08-18", explain=True)[0].terms} >= {"api", "admin"}


def test_compound_parts_add_to_term_frequency_not_to_length():
    from dreamdb.store.sync import document_terms
    from dreamdb.vault.parse import Document

    doc = Document(type="knowledge", slug="x", source_path="knowledge/x.md", title="Check setupVersion",
                   body="The setup reads setupVersion.")
    postings, lengths, _turkish = document_terms(doc)
    assert lengths == [2, 0, 0, 3]  # check setupversion | setup read setupversion
    assert postings["setupversion"] == [1, 0, 0, 1, 0]
    assert postings["setup"] == [1, 0, 0, 2, 0] and postings["version"] == [1, 0, 0, 1, 0]


def test_snake_case_identifiers_are_terms_beside_their_parts():
    """QA round 78 F5: ``CLAUDE_CODE_SESSION_ID`` was only its parts (claud, code, session, id)."""
    from dreamdb.analyzer import is_identifier_term, snake_case_terms
    from dreamdb.store.sync import document_terms
    from dreamdb.vault.parse import Document

    assert snake_case_terms("Set CLAUDE_CODE_SESSION_ID, O_EXCL and eth_chainId().") == [
        "claude_code_session_id", "o_excl", "eth_chainid"]
    assert snake_case_terms("__init__ a__b _private_name ÇALIŞAN_ID foo_bar.baz_qux") == [
        "private_name", "foo_bar", "baz_qux"]
    assert snake_case_terms("x_" + "y" * 70) == [] and snake_case_terms("no underscore") == []
    assert is_identifier_term("session_id") and not is_identifier_term("session")
    doc = Document(type="knowledge", slug="x", source_path="knowledge/x.md", title="Env", body="Read SESSION_ID once.")
    postings, lengths, _turkish = document_terms(doc)
    assert lengths == [1, 0, 0, 3]  # env | read session id: the whole identifier adds to no length
    assert postings["session_id"] == [0, 0, 0, 1, 0] and postings["session"] == [0, 0, 0, 1, 0]


def test_names_numbered_with_a_hyphen_are_terms_beside_their_parts():
    """QA round 127-B F1: ``TASK-7`` was ``task`` alone (a one-character piece is dropped), so TASK-1 to TASK-9 tied;
    and IL-6 was IL-2. A name numbered with a hyphen and one digit is one more term, written without its hyphen (QA
    round 153-G F7: the term the name written so is); dates and longer runs are not."""
    from dreamdb.analyzer import is_identifier_term, joined_terms, numbered_terms
    from dreamdb.store.sync import document_terms
    from dreamdb.vault.parse import Document

    assert numbered_terms("See TASK-7, (IL-6) and GPT-4; utf-8. x86-64") == ["task7", "il6", "gpt4", "utf8"]
    # (two digits or more are a term of their own already: EIP-1559 is eip and 1559)
    assert numbered_terms("2026-01-02 a-b-7 GPT-4o foo_bar-7 ÇALIŞAN-7 -7 step-3-b e5-small Ab-1-2 EIP-1559 x86-64") == []
    # (a dotted run goes on: QA round 128-A F9, TASK-7.5 gave task-7 and foo.bar-3 gave bar-3; a sentence's end does not)
    assert numbered_terms("TASK-7.5 TASK-7.0.1 foo.bar-3 v1.x-2") == [] and numbered_terms("Done: TASK-7.") == ["task7"]
    assert numbered_terms("T" * 63 + "-1") == [] and numbered_terms("no hyphen 7") == []
    # (QA round 153-G F7: the term of the name written without its hyphen, as the real vault writes WS3 and WS-4)
    assert numbered_terms("(WS-1 manifest install, WS-2 sleep specialist fixes, WS-4 dashboard)") == ["ws1", "ws2", "ws4"]
    assert analyze("issue #9 WS3, WS4") == ["issu", "ws3", "ws4"]  # (the words written so: the same terms)
    assert joined_terms("SESSION_ID of TASK-7") == ["session_id", "task7"]
    assert is_identifier_term("session_id") and not is_identifier_term("task")
    doc = Document(type="knowledge", slug="x", source_path="knowledge/x.md", title="Plan", body="Close TASK-7 today.")
    postings, lengths, _turkish = document_terms(doc)
    assert lengths == [1, 0, 0, 3]  # plan | close task today: the whole name adds to no length
    assert postings["task7"] == [0, 0, 0, 1, 0] and postings["task"] == [0, 0, 0, 1, 0]


def test_a_numbered_name_holding_a_digit_keeps_its_hyphen():
    """QA round 154-A F1: the term of a name numbered with a hyphen was the name without it for any word, so ``v1-2``
    was ``v12`` (another number), ``ipv4-6`` ``ipv46``, ``abc1-2`` ``abc12``, ``k8s-1`` ``k8s1``. Only letters before
    the hyphen are joined to the digit; a part holding a digit keeps it, as every such name did before 153-G F7."""
    from dreamdb.analyzer import is_identifier_term, numbered_terms
    from dreamdb.store.sync import document_terms
    from dreamdb.vault.parse import Document

    assert numbered_terms("API v1-2, ipv4-6 and abc1-2 on k8s-1") == ["v1-2", "ipv4-6", "abc1-2", "k8s-1"]
    assert all(map(is_identifier_term, numbered_terms("v1-2 k8s-1")))
    assert numbered_terms("v12 ipv46 abc12 k8s1") == []  # (the words written so are tokens: v12, ipv46, abc12, k8s1)
    assert analyze("v12 ipv46 abc12 k8s1") == ["v12", "ipv46", "abc12", "k8s1"]
    # (letters alone before the hyphen: joined as before)
    assert numbered_terms("WS-3 GPT-4 TASK-7 IL-6 utf-8 Ws-3") == ["ws3", "gpt4", "task7", "il6", "utf8", "ws3"]
    doc = Document(type="knowledge", slug="api-v1-2", source_path="knowledge/api-v1-2.md", title="API",
                   body="Supported API v1-2 and WS-3 only.")
    postings, _lengths, _turkish = document_terms(doc)
    assert postings["v1-2"] == [0, 0, 0, 1, 0] and postings["ws3"] == [0, 0, 0, 1, 0] and "v12" not in postings


def test_a_numbered_name_written_with_a_unicode_hyphen_is_the_name_with_a_hyphen_minus():
    """QA round 154-A F6: ``WS‐3`` (U+2010 HYPHEN) and ``WS‑3`` (U+2011 NON-BREAKING HYPHEN, which normalize makes
    U+2010) were ``ws`` alone, numbered_terms looking for ``-`` only. Both hyphens join a name to its number as ``-``
    does; the dashes do not (an en dash marks a range: ``lymphoma1–3``, ``pages 3–5``)."""
    from dreamdb.analyzer import normalize, numbered_terms
    from dreamdb.store.sync import document_terms
    from dreamdb.vault.parse import Document

    assert normalize("WS\u20113") == "WS\u20103" and normalize("WS\u20103") == "WS\u20103"  # (what normalize does)
    assert normalize("WS\u20133") == "WS\u20133" and normalize("WS\uff0d3") == "WS-3"
    for hyphen in "-\u2010\u2011\ufe63\uff0d":  # (the last two: normalize makes them "-")
        text = normalize(f"See WS{hyphen}3, v1{hyphen}2 and TASK{hyphen}7.")
        assert numbered_terms(text) == ["ws3", "v1-2", "task7"], hex(ord(hyphen))
    assert numbered_terms("WS\u20113") == ["ws3"]  # (not normalised: the hook's snippet lines)
    for dash in "\u2012\u2013\u2014\u2212":  # figure dash, en dash, em dash, minus sign
        assert numbered_terms(normalize(f"WS{dash}3 lymphoma1{dash}3")) == [], hex(ord(dash))
    # (a longer run is one whichever hyphen joins it)
    assert numbered_terms(normalize("a\u2010b\u20107 a-b\u20117 TASK\u20107\u20102 step\u20103-b")) == []
    doc = Document(type="knowledge", slug="x", source_path="knowledge/x.md", title="Sepsis\u20113 criteria",
                   body="PD\u20101 and WS\u20133 (a range).")
    postings, _lengths, _turkish = document_terms(doc)
    assert postings["sepsis3"] == [1, 0, 0, 0, 0] and postings["pd1"] == [0, 0, 0, 1, 0] and "ws3" not in postings


def test_identifiers_add_to_term_frequency_not_to_length():
    from dreamdb.store.sync import document_terms
    from dreamdb.vault.parse import Document

    doc = Document(type="knowledge", slug="x", source_path="knowledge/x.md", title="Release v0.5.0", body="Ships C++ and v0.5.0.")
    postings, lengths, _turkish = document_terms(doc)
    assert lengths == [2, 0, 0, 2]  # release v0 | ships v0
    assert postings["0.5.0"] == [1, 0, 0, 1, 0] and postings["c++"] == [0, 0, 0, 1, 0]
    assert postings["v0"] == [1, 0, 0, 1, 0]


@pytest.mark.parametrize("text, english", [
    ("the ansible", True), ("what is the kafaxyz", True), ("uyku borcu", False), ("taksiye binmek istiyorum", False),
    ("sunucu nasil korunur", False), ("once the server", True), ("once sunucu", False), ("the ve bir", False), ("", False),
])
def test_function_words_tell_an_english_query(text, english):
    """QA round 83-A F2: English-only stopwords outnumbering Turkish ones (typed with or without Turkish letters) say a
    query is English, so its unknown words are not read as Turkish typed without its letters; ``once`` (*önce*) counts
    for neither."""
    from dreamdb.analyzer import english_by_function_words, raw_tokens

    assert english_by_function_words(raw_tokens(text)) is english


def test_a_long_name_of_short_words_is_split_into_its_parts_too(tiny_vault):
    """QA round 132-E F2: a camelCase test name over MAX_COMPOUND_CHARS (48) was found by its whole name alone;
    one of English's common letters is split up to MAX_NAME_CHARS, while base64 of any length is still not."""
    import base64
    import random

    import dreamdb
    from dreamdb.analyzer import MAX_COMPOUND_CHARS, MAX_NAME_CHARS, compound_terms
    from tests.conftest import write_doc

    name = "shouldReturn404WhenUserIdIsNullAndApiKeyIsMissingInV2RequestToS3"
    assert MAX_COMPOUND_CHARS < len(name) <= MAX_NAME_CHARS
    assert {"user", "id", "null", "api", "key", "miss", "request"} <= set(compound_terms(f"see {name} here"))
    assert compound_terms("x" + "AbcDef" * 30) == []  # (longer than MAX_NAME_CHARS: not split)
    rng = random.Random(7)
    for _ in range(200):  # (mixed-case base64 of a name's length: no parts)
        assert compound_terms(base64.b64encode(rng.randbytes(45)).decode()) == []
    write_doc(tiny_vault, "knowledge/flaky-tests.md", f"---\ntitle: Flaky tests\n---\nThe test {name} flakes.\n")
    hits = dreamdb.open(tiny_vault).recall("api key missing null user id")
    assert hits and hits[0].doc_id == "knowledge/flaky-tests"


def test_normalize_line_by_line_is_nfkc_of_the_whole_text():
    """A long text is normalised a line at a time (a line already in NFKC costs a quick check, where one "…" made
    the whole text be normalised): the result must be NFKC of the whole, whatever stands at a line feed, a combining
    mark after one, Hangul jamo around one, compatibility forms before one."""
    import random
    import unicodedata

    from dreamdb.analyzer import NORMALIZE_BY_LINES_FROM, _IGNORABLE_RE, normalize

    def whole(text: str) -> str:  # the rule as it was written, on the text at once
        text = unicodedata.normalize("NFKC", text)
        text = text.replace("\u200b", " ").replace("\u2063", " ")
        return _IGNORABLE_RE.sub("", text)

    pool = ["a", "e", "\u0301", "\u0327", "\u0308", "\n", "\n\u0301", "S", "İ", "ı", "é", "ﬁ", "…", "\u1100",
            "\u1161", "\u11a8", "ß", "Å", "\u212b", "Ω", "½", " ", "\r", "\u2028", "ǅ", "\u0345", "\u0f73", "\u00ad"]
    rnd = random.Random(149)
    for _ in range(300):
        text = "".join(rnd.choice(pool) for _ in range(rnd.randint(NORMALIZE_BY_LINES_FROM, 3 * NORMALIZE_BY_LINES_FROM)))
        assert len(text) > NORMALIZE_BY_LINES_FROM and normalize(text) == whole(text)
    text = "x" * NORMALIZE_BY_LINES_FROM + "\n\u0301e\u0301\n\u1100\n\u1161ﬁ…"
    # (the mark after the line feed composes with nothing: left alone, it is then dropped as an ignorable mark)
    assert normalize(text) == "x" * NORMALIZE_BY_LINES_FROM + "\né\n\u1100\n\u1161fi..." == whole(text)


def test_lower_folds_exactly_the_latin_letters_of_its_table():
    """lower() replaces the letters of latin_fold_table where they stand (a scan for them, not a lookup of every
    character): the same text str.translate makes, letters outside the table (Turkish ç ö ü ş ğ ı, Greek, the
    ASCII) as they were."""
    from dreamdb.analyzer import latin_fold_table, lower

    table = latin_fold_table()
    letters = "".join(chr(cp) for cp in sorted(table))
    text = "Çalışan café ŞİRKET naïve Øre Łódź ħ ΩΣ " + letters + " ölçüğ x" * 3
    low = text.replace("İ", "i").lower()
    assert lower(text) == low.translate(table)
    assert lower("café Çay ölçü") == "cafe çay ölçü" and lower("øłđħ") == "oldh"
