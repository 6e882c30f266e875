"""The vault's synonyms.txt: read as a small text file in the vault, or not at all (QA round 40)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dreamdb
from dreamdb.ranking.synonyms import MAX_GROUP_TERMS, MAX_SYNONYMS_BYTES, SynonymTable, load_synonyms
from tests.conftest import write_doc


def _vault(tiny_vault):
    write_doc(tiny_vault, "knowledge/fruit.md", "---\ntitle: Fruit\n---\nThe pomme harvest starts in autumn.\n")
    write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: Other\n---\nNothing about that here.\n")


def _recall(vault, query: str) -> dict:
    """``dreamdb recall --json`` in a child process with a deadline (a FIFO read would hang the test, not fail it)."""
    out = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--vault", str(vault), "--json", query],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_vault_file_expands_queries_and_a_link_inside_the_vault_is_read(tiny_vault):
    _vault(tiny_vault)
    write_doc(tiny_vault, "synonyms.txt", "# fruit\napple, pomme\n")
    with dreamdb.open(tiny_vault) as ix:
        hits = ix.recall("apple")
        assert [h.doc_id for h in hits] == ["knowledge/fruit"] and hits[0].score == 0.0  # rankScore only
        assert not any("synonyms" in n for n in ix.take_notes())
    (tiny_vault / "knowledge" / "groups.txt").write_text("apple, pomme\n")
    (tiny_vault / "synonyms.txt").unlink()
    os.symlink(tiny_vault / "knowledge" / "groups.txt", tiny_vault / "synonyms.txt")
    assert load_synonyms(tiny_vault).expand("appl") == {"pomm"} and load_synonyms(tiny_vault).problem is None


def test_the_vault_file_can_name_identifiers(tiny_vault):
    """``cpp, c++`` used to give ``cpp`` nothing (``c++`` analyses to no word), and ``csharp, c#`` was cut at its
    ``#`` as a comment; a comment now starts at a line's start or after a space."""
    write_doc(tiny_vault, "knowledge/cpp.md", "---\ntitle: Parser\n---\nThe parser is written in C++.\n")
    write_doc(tiny_vault, "knowledge/cs.md", "---\ntitle: Tools\n---\nThe tools are written in C#.\n")
    write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: Other\n---\nNothing about that here.\n")
    write_doc(tiny_vault, "synonyms.txt", "# languages\ncpp, c++  # the one with classes\ncsharp, c#\n")
    with dreamdb.open(tiny_vault) as ix:
        assert [h.doc_id for h in ix.recall("cpp")] == ["knowledge/cpp"]
        assert [h.doc_id for h in ix.recall("csharp")] == ["knowledge/cs"]
        assert not any("synonyms" in n for n in ix.take_notes())
    table = load_synonyms(tiny_vault)
    assert table.expand("cpp") == {"c++"} and table.expand("c#") == {"csharp"} and "class" not in table.expand("c++")


def test_a_fifo_a_device_or_a_file_outside_the_vault_is_not_read(tiny_vault, tmp_path):
    _vault(tiny_vault)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outside = tmp_path / "outside.txt"
    outside.write_text("apple, pomme\n")
    for target, why in ((fifo, "links outside the vault"), ("/dev/zero", "links outside the vault"),
                        (outside, "links outside the vault")):
        link = tiny_vault / "synonyms.txt"
        if link.is_symlink():
            link.unlink()
        os.symlink(target, link)
        result = _recall(tiny_vault, "apple")
        assert result["hits"] == []  # not expanded: "apple" is in no note
        assert any(why in n and "synonyms are not used" in n for n in result["notes"]), result["notes"]
        # the built-in table still works (db → database)
        assert load_synonyms(tiny_vault).expand("db") == {"databas"}
    link.unlink()
    os.mkfifo(link)  # a FIFO in the vault itself
    assert any("is not a regular file" in n for n in _recall(tiny_vault, "apple")["notes"])


def test_a_file_over_the_cap_is_not_read(tiny_vault):
    _vault(tiny_vault)
    write_doc(tiny_vault, "synonyms.txt", "apple, pomme\n" + "#" * MAX_SYNONYMS_BYTES)
    with dreamdb.open(tiny_vault) as ix:
        assert ix.recall("apple") == []
        assert any("over the 1,048,576 read" in n for n in ix.take_notes())
    write_doc(tiny_vault, "synonyms.txt", "apple, pomme\n")
    with dreamdb.open(tiny_vault) as ix:
        assert [h.doc_id for h in ix.recall("apple")] == ["knowledge/fruit"]


def test_a_link_to_nothing_is_said(tiny_vault):
    """QA round 41: a dangling or looping synonyms.txt link was passed over without a note."""
    _vault(tiny_vault)
    link = tiny_vault / "synonyms.txt"
    os.symlink(tiny_vault / "gone.txt", link)
    note = _recall(tiny_vault, "apple")["notes"]
    assert any("gone.txt, which does not exist" in n and "synonyms are not used" in n for n in note), note
    link.unlink()
    os.symlink("synonyms.txt", link)  # a link to itself
    assert "leads in a loop" in load_synonyms(tiny_vault).problem
    link.unlink()
    write_doc(tiny_vault, "synonyms.txt", "apple, pomme\n")
    assert load_synonyms(tiny_vault).problem is None and load_synonyms(tiny_vault).expand("appl") == {"pomm"}


def test_a_vault_without_the_file_costs_one_system_call_a_query(tiny_vault, monkeypatch):
    """QA round 151-P: every recall of a vault without synonyms.txt (the usual case) ran a failed stat and then
    islink's lstat; one lstat tells it has no file, not even a link. A link is still followed (its target's stat),
    and one to nothing still said."""
    _vault(tiny_vault)
    load_synonyms(tiny_vault)
    calls = []
    real_stat, real_lstat = os.stat, os.lstat
    monkeypatch.setattr(os, "stat", lambda *a, **k: calls.append("stat") or real_stat(*a, **k))
    monkeypatch.setattr(os, "lstat", lambda *a, **k: calls.append("lstat") or real_lstat(*a, **k))
    table = load_synonyms(tiny_vault)
    assert calls == ["lstat"] and table.problem is None and table.expand("appl") == set()
    write_doc(tiny_vault, "pairs.txt", "apple, pomme\n")
    os.symlink(tiny_vault / "pairs.txt", tiny_vault / "synonyms.txt")
    assert load_synonyms(tiny_vault).expand("appl") == {"pomm"}  # (a link inside the vault: read)
    (tiny_vault / "synonyms.txt").unlink()
    os.symlink(tiny_vault / "gone.txt", tiny_vault / "synonyms.txt")
    assert "gone.txt, which does not exist" in load_synonyms(tiny_vault).problem


def test_a_line_of_too_many_words_is_not_used_and_the_others_are(tiny_vault):
    """QA round 42: one line of 3,000 words (17 KB) took 1.5 s and 410 MB a recall, 5,000 took 2.6 GB:
    every word kept a set of all the others."""
    _vault(tiny_vault)
    big = ",".join(["apple", "pomme"] + [f"w{i}" for i in range(3000)])
    fits = ",".join(["kiwi", "pomme"] + [f"k{i}" for i in range(MAX_GROUP_TERMS - 2)])
    spaced = "apple, pomme, " + " ".join(f"s{i}" for i in range(3000))  # QA round 43: three terms, 3,002 words
    joined = "zeta, " + "-".join(f"j{i}" for i in range(3000))  # QA round 44: two terms, 3,001 words
    write_doc(tiny_vault, "synonyms.txt", f"# groups\n{big}\n{fits}\n{spaced}\n{joined}\n")
    table = load_synonyms(tiny_vault)
    assert table.expand("appl") == set() and table.expand("zeta") == set()
    assert "lines 2, 4, 5 not used: over 64 words" in table.problem
    assert len(table.expand("kiwi")) == MAX_GROUP_TERMS - 1 and "pomm" in table.expand("kiwi")
    with dreamdb.open(tiny_vault) as ix:
        assert [h.doc_id for h in ix.recall("kiwi")] == ["knowledge/fruit"]
        assert any("over 64 words" in n for n in ix.take_notes())


def test_a_term_in_several_groups_expands_to_each_groups_terms():
    table = SynonymTable([["db", "database"], ["db", "store", "db"], ["solo"]])
    assert table.expand("db") == {"databas", "store"} and table.expand("store") == {"db"}
    assert table.expand("solo") == set() and table.expand("none") == set()


def test_a_hash_inside_a_term_is_said(tiny_vault):
    """QA round 50: ``rest#TODO: check with the team`` (a comment before ``#`` needed a space) made *team* a
    synonym of *sleep* without a word; the terms are used as written, and a note says how to write a comment."""
    write_doc(tiny_vault, "synonyms.txt", "sleep, rest#TODO: check with the team\ncsharp, c#\n")
    table = load_synonyms(tiny_vault)
    assert "team" in table.expand("sleep") and table.expand("csharp") == {"c#"}
    assert table.problem and "line 1:" in table.problem and "line 2" not in table.problem


def test_a_utf16_file_is_read_and_one_that_is_not_text_is_said(tiny_vault):
    """QA round 78-A F3: a synonyms.txt saved as UTF-16 (a Windows editor) or holding binary bytes was read as
    replacement characters, and its synonyms silently did nothing."""
    _vault(tiny_vault)
    path = tiny_vault / "synonyms.txt"
    path.write_bytes("apple, pomme\n".encode("utf-16"))
    assert [h["doc_id"] for h in _recall(tiny_vault, "apple")["hits"]] == ["knowledge/fruit"]
    path.write_bytes("apple, pomme\n".encode("utf-32"))  # (QA round 79 F8: read as UTF-16, into garbage)
    assert [h["doc_id"] for h in _recall(tiny_vault, "apple")["hits"]] == ["knowledge/fruit"]
    path.write_bytes("\ufeffapple, pomme\n".encode("utf-8"))  # (UTF-8 with a byte-order mark)
    assert [h["doc_id"] for h in _recall(tiny_vault, "apple")["hits"]] == ["knowledge/fruit"]
    for data, why in (("apple, pomme\n".encode("utf-8") + b"\xff\xfe\xfa", "is not UTF-8 text"),
                      (b"apple, pomme\n\x00\x01\x02", "looks binary")):
        path.write_bytes(data)
        result = _recall(tiny_vault, "apple")
        assert result["hits"] == [] and any(why in n and "synonyms are not used" in n for n in result["notes"]), result


def test_a_group_naming_a_snake_case_identifier_holds_it_whole():
    """QA round 79 F12: a group naming SESSION_ID gave only its parts, while c++ and 0.5.0 stay whole."""
    from dreamdb.ranking.synonyms import SynonymTable

    table = SynonymTable([["sid", "SESSION_ID"]])
    assert "session_id" in table.expand("sid") and "sid" in table.expand("session_id")


def test_a_group_naming_an_identifier_alone_does_not_hold_its_parts():
    """QA round 128-A F3: the group ``task-7, t7`` held ``task`` too (the name's part), so every note on a task was a
    synonym of ``t7``, and ``TASK-2`` found the note on TASK-7. An entry that is one identifier is that term alone;
    an entry of several words keeps its words."""
    from dreamdb.analyzer import analyze
    from dreamdb.ranking.synonyms import SynonymTable

    table = SynonymTable([["task-7", "t7"], ["sid", "SESSION_ID"], ["cpp", "C++"], ["ship v0.5.0", "release"],
                          ["zebra", "TASK-7.5"], ["v0.5.0", "fifth"]])
    assert table.expand("t7") == {"task7"} and "t7" not in table.expand("task")  # (153-G F7: TASK-7's term is task7)
    # (154-A F1: a name holding a digit before the hyphen keeps it, and the entry is still that one identifier)
    assert SynonymTable([["k8s-1", "kone"]]).expand("kone") == {"k8s-1"}
    # (154-A F6: an entry written with a Unicode hyphen is that identifier too)
    assert SynonymTable([["TASK\u20117", "t7"], ["k8s\u20101", "kone"]]).expand("t7") == {"task7"}
    assert SynonymTable([["TASK\u20117", "t7"], ["k8s\u20101", "kone"]]).expand("kone") == {"k8s-1"}
    assert table.expand("sid") == {"session_id"} and table.expand("session") == set()
    assert table.expand("cpp") == {"c++"}
    assert table.expand(analyze("release")[0]) == {"ship", "v0", "0.5.0"}  # (several words: each of them)
    # an identifier that is only a part of the entry does not stand for it alone (QA round 129-A F1: TASK-7.5 was
    # its 7.5, which a note of "7.5 ms" holds)
    assert table.expand("zebra") == {"task", "7.5"} and table.expand("fifth") == {"v0", "0.5.0"}
    # (nor do its words alone: QA round 140-A F2)
    assert table.expand("task") == set() and table.expand("0.5.0") == set() and table.expand("ship") == set()


def test_an_entry_of_several_words_stands_for_its_group_only_in_a_query_holding_all_of_them(tiny_vault):
    """QA round 140-A F2: ``release checklist, shipping`` made ``checklist`` alone a synonym of ``releas`` and
    ``ship``, and ``sqlite, sql lite`` made ``sql`` one of ``lite``: the entry's words were a bag of synonyms."""
    from dreamdb.ranking.rank import plan_query

    table = SynonymTable([["release checklist", "shipping"], ["sqlite", "sql lite"], ["hook", "prompt hook"]])
    assert table.expand("checklist") == set() and table.expand("releas") == set()
    assert table.expand("sql") == set() and table.expand("lite") == set() and table.expand("prompt") == set()
    assert table.expand("ship") == {"releas", "checklist"} and table.expand("sqlite") == {"sql", "lite"}
    assert table.expand("hook") == {"prompt"}
    assert table.expand_query(["checklist"]) == [] and table.expand_query(["sql"]) == []
    assert table.expand_query(["checklist", "for", "releas"]) == ["ship"]
    assert table.expand_query(["sql", "lite"]) == ["sqlite"] and table.expand_query(["prompt", "hook"]) == []
    assert plan_query("the checklist", table).synonyms == {}
    assert plan_query("checklist for the next release", table).synonyms == {"ship": 0.5}
    _vault(tiny_vault)
    write_doc(tiny_vault, "knowledge/ship.md", "---\ntitle: Shipping\n---\nWhat we ship and when.\n")
    write_doc(tiny_vault, "knowledge/list.md", "---\ntitle: Lists\n---\nThe checklist for a trip.\n")
    write_doc(tiny_vault, "synonyms.txt", "release checklist, shipping\n")
    with dreamdb.open(tiny_vault) as ix:
        assert [h.doc_id for h in ix.recall("checklist")] == ["knowledge/list"]
        assert [h.doc_id for h in ix.recall("release checklist")] == ["knowledge/list", "knowledge/ship"]


def test_each_kind_of_line_not_used_is_said(tiny_vault):
    """QA round 140-A F3: a line with ``rest#todo`` and a line of 65 words gave the second's note only (the later
    kind replaced the earlier), and a line of one term (``zzz``, or ``sql lite`` written without its comma) was
    passed over without a word."""
    write_doc(tiny_vault, "synonyms.txt", "rest#todo, api\n" + ", ".join(f"w{i}" for i in range(65)) + "\nzzz\n"
              "# a comment\nsleep, rest\n" + "".join(f"one{i}\n" for i in range(7)))
    table = load_synonyms(tiny_vault)
    assert table.problem == (
        f"{tiny_vault / 'synonyms.txt'}: line 1: a # inside a term is read as part of it (a comment starts with # at a"
        " line's start or after a space: `rest # note`); line 2 not used: over 64 words (a line is one group of words"
        " meaning the same); lines 3, 6, 7, 8, 9 and 3 more not used: one term, no synonym (a line's terms are"
        " separated by commas)")
    assert table.expand("sleep") == {"rest"} and table.expand("api") == {"rest", "todo"}


def test_a_file_that_is_not_text_is_not_told_to_be_a_small_text_file(tiny_vault):
    """QA round 140-A F4: a synonyms.txt that is not UTF-8 was told to save it as UTF-8 and also to "make it a small
    text file in the vault", which it is; that hint is for a file too large, not regular, or outside the vault."""
    path = tiny_vault / "synonyms.txt"
    path.write_bytes("été, summer\n".encode("latin-1"))  # (saved as Latin-1)
    problem = load_synonyms(tiny_vault).problem
    assert problem == f"{path} is not UTF-8 text (byte 0 cannot be read); save it as UTF-8; its synonyms are not used"
    path.write_bytes(b"apple, pomme\n\x00")
    assert load_synonyms(tiny_vault).problem == (f"{path} looks binary (it holds NUL bytes), not UTF-8 text; save it as"
                                                 " UTF-8; its synonyms are not used")
    path.unlink()
    path.mkdir()  # (not a regular file: the hint stays)
    assert load_synonyms(tiny_vault).problem == (f"{path} is not a regular file; its synonyms are not used (make it a"
                                                 " small text file in the vault)")


def test_an_entry_matches_its_words_whatever_their_case(tiny_vault):
    """QA round 141-A F1: ``Dağıtım, checklist`` never applied (the entry's capitalised word was read as a name,
    ``dağıtım``, the query's word as ``dağıt``), and ``sunucu ayarları, checklist`` missed ``Sunucu ayarları
    nerede`` (a capitalised query word read as a name, ``sunucu``, the entry's word as ``sunuç``)."""
    from dreamdb.ranking.rank import plan_query

    for entry in ("Dağıtım", "dağıtım", "DAĞITIM"):
        table = SynonymTable([[entry, "checklist"]])
        for query in ("dağıtım", "Dağıtım", "DAĞITIM nerede"):
            assert plan_query(query, table).synonyms == {"checklist": 0.5}, (entry, query)
    table = SynonymTable([["sunucu ayarları", "checklist"]])
    for query in ("sunucu ayarları nerede", "Sunucu ayarları nerede", "Sunucu Ayarları"):
        assert plan_query(query, table).synonyms == {"checklist": 0.5}, query
    assert plan_query("Sunucu nerede", table).synonyms == {}  # (one word of the entry: nothing, as before)
    write_doc(tiny_vault, "knowledge/deploy.md", "---\ntitle: Dağıtım\n---\nDağıtım adımları burada yazılıdır.\n")
    write_doc(tiny_vault, "knowledge/list.md", "---\ntitle: Lists\n---\nThe checklist before a trip.\n")
    write_doc(tiny_vault, "synonyms.txt", "Dağıtım, checklist\n")
    with dreamdb.open(tiny_vault) as ix:
        for query in ("dağıtım", "Dağıtım"):
            assert [h.doc_id for h in ix.recall(query)] == ["knowledge/deploy", "knowledge/list"], query


def test_a_turkish_entry_covers_the_inflected_forms_of_its_word():
    """QA round 141-A F2: ``sürüm, checklist`` applied to ``sürüm`` and ``sürümü`` (the term ``sür``) but not to
    ``sürümler`` or ``sürümleri`` (the term ``sürüm``), while ranking counts a Turkish word's two forms as one."""
    from dreamdb.ranking.rank import plan_query

    table = SynonymTable([["sürüm", "checklist"], ["sürüm notları", "changelog"]])
    for query in ("sürüm", "sürümler", "sürümleri", "Sürümler nerede"):
        assert plan_query(query, table).synonyms == {"checklist": 0.5}, query
    assert plan_query("sürümlerin notları", table).synonyms == {"checklist": 0.5, "changelog": 0.5}
    assert table.expand("checklist") == {"sür"}  # (the word's term, not both its forms)
    assert plan_query("checklist", table).synonyms == {"sür": 0.5}


def test_every_line_not_used_is_said_with_its_reason(tiny_vault):
    """QA round 141-A F3: lines of stopwords (``not, negation``, ``the, a``, ``up, online``) were dropped without a
    word, and ``foo,`` and ``, ,`` were said to be one term whose terms a comma separates."""
    write_doc(tiny_vault, "synonyms.txt", "not, negation\nthe, a\nfoo,\n, ,\nsql lite\nup, online\nsleep, rest\n")
    table = load_synonyms(tiny_vault)
    assert table.problem == (
        f"{tiny_vault / 'synonyms.txt'}: line 5 not used: one term, no synonym (a line's terms are separated by"
        " commas); line 3 not used: one term, no synonym; line 4 not used: no term; lines 1, 2, 6 not used: fewer"
        " than two terms once the analyzer drops its stopwords and one-letter words (`not`, `the`, `up`)")
    assert table.expand("sleep") == {"rest"} and table.expand("negat") == set()


def test_line_numbers_are_an_editors(tiny_vault):
    """QA round 141-A F5: a form feed or U+2028 inside a line counted as a line break (str.splitlines), so the
    note named a line after the one an editor shows."""
    write_doc(tiny_vault, "synonyms.txt", "apple, pomme\u2028\r\nsleep,\x0crest\nzzz\n")
    table = load_synonyms(tiny_vault)
    assert table.problem == (f"{tiny_vault / 'synonyms.txt'}: line 3 not used: one term, no synonym (a line's terms"
                             " are separated by commas)")
    assert table.expand("appl") == {"pomm"} and table.expand("sleep") == {"rest"}


def test_a_line_not_used_is_given_the_reason_the_analyzer_gives(tiny_vault):
    """QA round 143-D F1: ``;;; , ---`` (no letter at all) and ``foo, foo, FOO`` or ``release, releases`` (one term,
    no stopword) were said to lose their terms to stopwords, ``word # tail, other`` to have no comma (it has one, in
    its comment), and a line of ESC and U+200B to be one term. The reason is what the analyzer made of each entry."""
    path = tiny_vault / "synonyms.txt"
    path.write_text("foo, foo, FOO\n;;; , ---\n*, launchd\nrelease, releases\nword # tail, other\n\x1b\u200b\n"
                    "not, negation\nsql lite\nsleep, rest\n", encoding="utf-8")
    table = load_synonyms(tiny_vault)
    assert table.problem == (
        f"{path}: line 8 not used: one term, no synonym (a line's terms are separated by commas); lines 3, 5 not"
        " used: one term, no synonym; lines 2, 6 not used: no term; line 7 not used: fewer than two terms once the"
        " analyzer drops its stopwords and one-letter words (`not`, `the`, `up`); lines 1, 4 not used: its entries"
        " are one term as the analyzer reads them (`release, releases`: one stem; case, and Turkish ı for i, do not"
        " count)")
    assert table.expand("sleep") == {"rest"} and table.expand("releas") == set() and table.expand("launchd") == set()


def test_an_entry_matches_a_query_typed_with_a_capital_i():
    """QA round 143-D F2: ``SÜRÜM NOTLARI``, ``AYARLARI`` and ``SICAKLIK`` added no synonym of the entries ``sürüm
    notları``, ``ayarları`` and ``sıcaklık`` (a capital ``I`` lowercases to ``i``, the entries hold ``ı``), while the
    same words typed in lowercase did; and the other way round, an entry typed in capitals."""
    from dreamdb.ranking.rank import plan_query

    table = SynonymTable([["sürüm notları", "launchd"], ["ayarları", "cron"], ["sıcaklık", "heat"], ["ayar", "knob"],
                          ["KAPALI", "shut"]])
    for query, synonyms in (("SÜRÜM NOTLARI", {"launchd"}), ("sürüm notları", {"launchd"}),
                            ("AYARLARI", {"cron", "knob"}), ("ayarları", {"cron", "knob"}),
                            ("SUNUCU AYARLARI", {"cron", "knob"}), ("SICAKLIK", {"heat"}), ("sıcaklık", {"heat"}),
                            ("SICAKLIKLAR", {"heat"}), ("kapalı", {"shut"}), ("KAPALI", {"shut"})):
        assert set(plan_query(query, synonym_table=table).synonyms) == synonyms, query
    assert table.expand("heat") == {"sıcaklık"} and table.expand("cron") == {"ayar"}  # (the terms as analysed)
    assert plan_query("API", synonym_table=table).synonyms == {}


def test_an_english_word_typed_in_capitals_is_not_read_as_turkish_for_synonyms(tiny_vault):
    """QA round 143-H F1: the dotless reading of a capital I was given to every query word, so ``EVENT DRIVEN`` (read
    ``drıven``, stemmed as Turkish) expanded through the entry ``drive``, ``GIVEN`` through ``give``: a capital I is
    read as vowel harmony reads it (``i`` before a front vowel). QA round 143-L F1: a test of the whole word's harmony
    then took their group from Turkish loanwords in capitals (``HESAPLARI``, ``TELEFONLARI``), whose suffixes follow
    the vowel before them."""
    from dreamdb.ranking.rank import plan_query

    table = SynonymTable([["drive", "disk"], ["give", "donate"], ["exist", "present"], ["wif", "lan"],
                          ["sıcaklık", "heat"], ["hesap", "ledgerbook"], ["telefon", "mobilecell"],
                          ["televizyon", "screen"]])
    for query in ("EVENT DRIVEN", "GIVEN", "EXISTENCE", "WIFI"):
        assert plan_query(query, synonym_table=table).synonyms == {}, query
        assert plan_query(query.lower(), synonym_table=table).synonyms == {}, query  # (as typed in lowercase)
    for query, synonym in (("SICAKLIK", "heat"), ("HESABI", "ledgerbook"), ("HESAPLARI", "ledgerbook"),
                           ("TELEFONLARI", "mobilecel"), ("TELEVIZYONLARI", "screen")):
        lower = query.replace("I", "ı") if query != "TELEVIZYONLARI" else "televizyonları"
        assert plan_query(query, synonym_table=table).synonyms == {synonym: 0.5}, query
        assert plan_query(lower.lower(), synonym_table=table).synonyms == {synonym: 0.5}, lower
    write_doc(tiny_vault, "knowledge/disk.md", "---\ntitle: Disk layout\n---\nThe disk holds the partitions.\n")
    write_doc(tiny_vault, "knowledge/arch.md", "---\ntitle: Architecture\n---\nWe use an event bus.\n")
    write_doc(tiny_vault, "knowledge/book.md", "---\ntitle: Books\n---\nThe ledgerbook of the shop.\n")
    write_doc(tiny_vault, "synonyms.txt", "drive, disk\nhesap, ledgerbook\n")
    with dreamdb.open(tiny_vault) as index:
        assert [h.doc_id for h in index.recall("EVENT DRIVEN")] == [h.doc_id for h in index.recall("event driven")] \
            == ["knowledge/arch"]
        assert [h.doc_id for h in index.recall("HESAPLARI")] == [h.doc_id for h in index.recall("hesapları")] \
            == ["knowledge/book"]


def test_a_word_in_capitals_the_index_or_the_lexicon_knows_with_a_dotted_i_is_not_read_with_a_dotless_one(tiny_vault,
                                                                                                          tmp_path):
    """QA round 144-A F1: ``CABIN``, its ``I`` read ``ı`` after a back vowel (``cabın``, the Turkish term ``cap``), took
    the synonyms of the entry ``cap``, ``LATIN ALPHABET`` those of ``lat``, and the entry ``CABIN`` made ``cap`` a
    synonym of ``hut``. A word the index or the lexicon knows as written, with ``i``, and not as read with ``ı``, is
    read as written, in a query and in an entry; a word neither knows keeps both readings (``HESAPLARI``)."""
    from dreamdb.lexicon import Lexicon, build_lexicon
    from dreamdb.ranking.rank import plan_query

    kenet = tmp_path / "kenet"
    kenet.mkdir()
    link = ("<SYNSET><ID>TUR10-{0}</ID><SYNONYM><LITERAL>{1}<SENSE>1</SENSE></LITERAL></SYNONYM>"
            "<ILR>ENG31-{0}-n<TYPE>SYNONYM</TYPE></ILR></SYNSET>")
    english = "<SYNSET><ID>ENG31-{0}-n</ID><SYNONYM><LITERAL>{1}<SENSE>0</SENSE></LITERAL></SYNONYM></SYNSET>"
    pairs = (("kabin", "cabin"), ("latin", "latin"), ("hesap", "account"))  # (latin: a Turkish word with i too)
    (kenet / "turkish_wordnet.xml").write_text(
        "<SYNSETS>" + "".join(link.format(n, tr) for n, (tr, _en) in enumerate(pairs)) + "</SYNSETS>", encoding="utf-8")
    (kenet / "english_wordnet_version_31.xml").write_text(
        "<SYNSETS>" + "".join(english.format(n, en) for n, (_tr, en) in enumerate(pairs)) + "</SYNSETS>",
        encoding="utf-8")
    build_lexicon(tmp_path / "lexicon.sqlite", kenet)
    lexicon = Lexicon(tmp_path / "lexicon.sqlite")
    table = SynonymTable([["cap", "limit"], ["lat", "latitude"], ["hesap", "ledgerbook"]])
    for query in ("CABIN", "LATIN ALPHABET", "cabin"):
        assert plan_query(query, synonym_table=table, lexicon=lexicon).synonyms == {}, query
    assert plan_query("CABIN", synonym_table=table).synonyms == {"limit": 0.5}  # (nothing known: both readings)
    assert plan_query("HESAPLARI", synonym_table=table, lexicon=lexicon).synonyms == {"ledgerbook": 0.5}
    entries = SynonymTable([["CABIN", "hut"], ["LATIN", "roman"], ["HESAPLARI", "ledgerbook"]])
    for query in ("cap", "lat", "latın"):
        assert plan_query(query, synonym_table=entries, lexicon=lexicon).synonyms == {}, query
    for query, synonym in (("cabin", "hut"), ("CABIN", "hut"), ("latin", "roman"), ("hesap", "ledgerbook"),
                           ("hesabı", "ledgerbook")):
        assert plan_query(query, synonym_table=entries, lexicon=lexicon).synonyms == {synonym: 0.5}, query
    # the index: a note holding cabin (no lexicon here)
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: Rate limit policy\n---\nWe set a hard limit of 100 requests"
              " per minute.\n")
    write_doc(tiny_vault, "knowledge/b.md", "---\ntitle: Huts\n---\nA hut in the woods.\n")
    write_doc(tiny_vault, "knowledge/c.md", "---\ntitle: Cabins\n---\nThe cabin by the lake.\n")
    write_doc(tiny_vault, "synonyms.txt", "cap, limit\nCABIN, hut\n")
    for engine in ("memory", "sql"):
        with dreamdb.open(tiny_vault, engine=engine) as index:
            assert sorted(h.doc_id for h in index.recall("CABIN")) == ["knowledge/b", "knowledge/c"], engine
            assert [h.doc_id for h in index.recall("cap")] == ["knowledge/a"], engine


def test_an_entry_the_stopwords_leave_one_word_is_left_out_and_said(tiny_vault):
    """QA round 143-D F3: ``not working, launchd`` made ``working`` alone a synonym of ``launchd`` (the opposite of
    what the line says), and ``up time, scheduler`` ``time`` one of ``scheduler``, without a word."""
    from dreamdb.ranking.rank import plan_query

    table = SynonymTable([["not working", "launchd"], ["up time", "scheduler"], ["not working", "broken", "failing"]])
    assert table.expand_query(["work"]) == [] and table.expand_query(["time"]) == []
    assert table.expand("broken") == {"fail"} and table.expand("fail") == {"broken"}
    assert plan_query("release the checklist", SynonymTable([["release the checklist", "ship"]])).synonyms == {
        "ship": 0.5}  # (an entry still of several words keeps its kept words, as before)
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: A\n---\nlaunchd scheduler\n")
    write_doc(tiny_vault, "knowledge/b.md", "---\ntitle: B\n---\nworking hours\n")
    write_doc(tiny_vault, "synonyms.txt", "not working, launchd\nup time, scheduler\nnot working, broken, failing\n")
    result = _recall(tiny_vault, "working")
    assert [h["doc_id"] for h in result["hits"]] == ["knowledge/b"]
    assert any(f"{tiny_vault / 'synonyms.txt'}: lines 1, 2, 3: an entry of several words that the analyzer's stopwords"
               " leave one word is left out (`not working` would stand for `working`); a line left with fewer than"
               " two terms is not used" in n for n in result["notes"]), result["notes"]


def test_a_file_with_carriage_returns_alone_has_its_lines(tiny_vault):
    """QA round 143-D F4: a synonyms.txt saved with classic Mac OS line ends (a CR alone) was one line, its groups one
    group (``zorkle`` found notes through ``launchd``); a line ends at CR LF, LF or a lone CR, as an editor shows."""
    path = tiny_vault / "synonyms.txt"
    path.write_bytes(b"zorkle, quuxle\rlaunchd, frobble\rzzz\r\r\nsleep, rest\r\nnap\n")
    table = load_synonyms(tiny_vault)
    assert table.expand("zorkl") == {"quuxl"} and table.expand("launchd") == {"frobbl"}
    assert table.expand("sleep") == {"rest"}
    assert table.problem == f"{path}: lines 3, 6 not used: one term, no synonym (a line's terms are separated by commas)"
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: A\n---\nlaunchd scheduler\n")
    write_doc(tiny_vault, "knowledge/b.md", "---\ntitle: B\n---\nzorkle alone\n")
    assert [h["doc_id"] for h in _recall(tiny_vault, "zorkle")["hits"]] == ["knowledge/b"]
