"""Content-hash incremental sync and the index as a cache: real files, real SQLite."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shlex
import shutil
import time
from datetime import datetime, timezone

import pytest

import dreamdb
from dreamdb.store import connect as db
from tests.conftest import ROOT, needs_real_vault, permissions_bite, write_doc


def _docs(index) -> set[str]:
    return {r[0] for r in index.conn.execute("SELECT doc_id FROM documents")}


def _integrity(index) -> str:
    return index.conn.execute("PRAGMA integrity_check").fetchone()[0]


def test_first_sync_then_nothing_changes(tiny_vault):
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: A\n---\nalpha text\n")
    write_doc(tiny_vault, "knowledge/features/f.md", "feature body\n")
    index = dreamdb.open(tiny_vault)
    r = index.sync()
    assert (r.added, r.changed, r.removed) == (2, 0, 0)
    assert not r.rebuilt  # a first sync builds; it rebuilds nothing (new-user review: a new index said "(rebuilt)")
    assert _docs(index) == {"knowledge/a", "feature/f"}
    r2 = index.sync()
    assert (r2.added, r2.changed, r2.removed, r2.unchanged) == (0, 0, 0, 2)
    assert not r2.touched
    write_doc(tiny_vault, "knowledge/b.md", "beta\n")
    r3 = index.sync(force=True)  # everything re-indexed: the known files count as changed, the new one as added
    assert (r3.added, r3.changed, r3.removed, r3.rebuilt) == (1, 2, 0, True)


def test_edit_rename_delete_touch(tiny_vault):
    p = write_doc(tiny_vault, "knowledge/a.md", "first version\n")
    write_doc(tiny_vault, "knowledge/b.md", "bravo\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    # edit
    p.write_text("second version with zebra\n")
    r = index.sync()
    assert r.changed == 1 and r.unchanged == 1
    assert [h.doc_id for h in index.recall("zebra")] == ["knowledge/a"]
    # touch without change: stat differs, hash equal → no re-parse
    os.utime(p, (time.time() + 10, time.time() + 10))
    r = index.sync()
    assert (r.changed, r.unchanged) == (0, 2)
    # rename
    p.rename(tiny_vault / "knowledge" / "c.md")
    r = index.sync()
    assert (r.added, r.removed) == (1, 1)
    assert _docs(index) == {"knowledge/b", "knowledge/c"}
    # delete
    (tiny_vault / "knowledge" / "b.md").unlink()
    r = index.sync()
    assert r.removed == 1 and _docs(index) == {"knowledge/c"}
    assert index.recall("bravo") == []
    assert _integrity(index) == "ok"


def test_file_replaced_by_directory(tiny_vault):
    p = write_doc(tiny_vault, "knowledge/x.md", "xylophone\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    p.unlink()
    p.mkdir()
    write_doc(tiny_vault, "knowledge/x.md/inner.md", "inner note\n")
    r = index.sync()
    assert r.removed == 1 and r.added == 1
    assert _docs(index) == {"knowledge/inner"}


def test_malformed_inputs_indexed_as_well_as_possible(tiny_vault):
    write_doc(tiny_vault, "knowledge/badyaml.md", "---\ntitle: [unclosed\n---\nbody survives quokka\n")
    (tiny_vault / "knowledge" / "latin1.md").write_bytes(b"caf\xe9 numbat\n")
    (tiny_vault / "knowledge" / "binary.md").write_bytes(b"\x00\x01\x02PNG")
    write_doc(tiny_vault, "core/CHANGELOG.json", "[{not json")
    write_doc(tiny_vault, "knowledge/long.md", "wombat " + "x" * 1_000_000 + "\n")
    write_doc(tiny_vault, "knowledge/empty.md", "")
    os.symlink("loop2.md", tiny_vault / "knowledge" / "loop1.md")
    os.symlink("loop1.md", tiny_vault / "knowledge" / "loop2.md")
    os.symlink(tiny_vault / "knowledge", tiny_vault / "knowledge" / "dirloop")
    index = dreamdb.open(tiny_vault)
    r = index.sync()
    text = "\n".join(r.warnings)
    assert "badyaml.md" in text and "invalid UTF-8" in text and "binary" in text and "CHANGELOG.json" in text
    assert "loop1.md" in text
    write_doc(tiny_vault, "knowledge/twice.md", "---\ntitle: First\ntitle: Second\ndescription: |\n  title: text\n---\nx\n")
    write_doc(tiny_vault, "knowledge/tabs.md", "---\ntitle:\tTabbed\ntags:\n\t- tabbed\n---\nlemur body\n")
    (tiny_vault / "knowledge" / "crlf.md").write_bytes(b"---\r\ntitle: C\r\ntags:\r\ntags:\r\n  - b\r\n---\r\nx\r\n")
    warned = index.sync().warnings
    # QA round 69 M4: a repeated key passed unnoticed (YAML keeps the last): said, the frontmatter still read
    assert "knowledge/twice.md: frontmatter key title written more than once; the last of each is used" in warned
    # (an empty-valued key with CR LF line ends too: QA round 119-B F1)
    assert "knowledge/crlf.md: frontmatter key tags written more than once; the last of each is used" in warned
    # QA round 69 M3: the warning said only "(while scanning for the next token)": now what and where, as update says
    assert "knowledge/tabs.md: frontmatter is not valid YAML (found character that cannot start any token at line 4);" \
        " indexed the body only" in warned
    assert index.recall("Second")[0].title == "Second"
    assert [h.doc_id for h in index.recall("quokka")] == ["knowledge/badyaml"]
    assert [h.doc_id for h in index.recall("numbat")] == ["knowledge/latin1"]
    (long_hit,) = index.recall("wombat")
    assert len(long_hit.snippet) < 1000
    assert "changelog" not in {d.split("/")[0] for d in _docs(index)}
    assert _integrity(index) == "ok"
    # warnings appear once: the next sync has nothing to re-parse
    assert index.sync().warnings == []


def _yaml_bomb(levels: int = 9) -> str:
    """A "billion laughs" frontmatter: 9 levels of 9 aliases each stand for 9^9 values."""
    lines = ["a: &a [" + ", ".join(["lol"] * 9) + "]"]
    names = "abcdefghijk"
    for i in range(1, levels):
        lines.append(f"{names[i]}: &{names[i]} [" + ", ".join([f"*{names[i - 1]}"] * 9) + "]")
    return "\n".join(lines) + f"\ntags: *{names[levels - 1]}\ndescription: *{names[levels - 1]}\n"


def test_a_pasted_image_payload_is_not_indexed(tiny_vault):
    """A base64 data: URI's payload is left out of the body: its letter runs would be thousands of terms and
    make the note too long for BM25 to rank it on the words around the image."""
    import base64

    payload = base64.b64encode(bytes(range(256)) * 400).decode()  # 136 KB of base64
    write_doc(tiny_vault, "knowledge/shot.md",
              f"---\nname: shot\n---\nThe screenshot ![login](data:image/png;base64,{payload}) shows the crash.\n")
    write_doc(tiny_vault, "core/2.memory.md",
              f"# Memory\n\n## Crash\n\n<img src=\"data:image/jpeg;name=a.jpg;base64,{payload}\"> crash at login\n")
    write_doc(tiny_vault, "knowledge/plain.md", "---\nname: plain\n---\nThe words data:text/plain,hello stay.\n")
    wrapped = "\n".join(payload[i:i + 76] for i in range(0, 76 * 40, 76))  # MIME-style lines (QA round 38)
    write_doc(tiny_vault, "knowledge/mime.md",
              f"---\nname: mime\n---\n<img src=\"data:image/gif;base64,{wrapped}\">\nGlobal crash\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    bodies = dict(index.conn.execute("SELECT doc_id, body FROM documents"))
    assert bodies["knowledge/shot"] == "The screenshot ![login](data:image/png;base64,) shows the crash."
    assert bodies["memory/crash"] == '<img src="data:image/jpeg;name=a.jpg;base64,"> crash at login'
    assert bodies["knowledge/plain"] == "The words data:text/plain,hello stay."  # not base64: text, kept
    assert bodies["knowledge/mime"] == '<img src="data:image/gif;base64,">\nGlobal crash'
    longest = index.conn.execute("SELECT MAX(LENGTH(term)) FROM postings").fetchone()[0]
    assert longest < 20
    assert [h.doc_id for h in index.recall("crash screenshot")][:1] == ["knowledge/shot"]


@pytest.mark.parametrize("layout", ["indented", "newline first", "capitals", "quoted", "space before base64"])
def test_a_wrapped_payload_is_left_out_in_the_layouts_notes_hold(layout):
    """QA round 39: a payload wrapped into indented or quoted lines, starting on the next line, in capitals,
    or after "; base64," was still indexed (76-letter terms)."""
    import base64

    from dreamdb.vault.parse import without_data_payloads

    lines = [base64.b64encode(bytes(range(256)) * 3).decode()[i:i + 76] for i in range(0, 76 * 12, 76)]
    text = {"indented": "<img src=\"data:image/png;base64," + lines[0] + "".join("\n    " + x for x in lines[1:]) + "\">",
            "newline first": "<img src=\"data:image/png;base64,\n" + "\n".join(lines) + "\">",
            "capitals": "<img src=\"DATA:IMAGE/PNG;BASE64," + "\n".join(lines) + "\">",
            "quoted": "> ![x](data:image/png;base64," + lines[0] + "".join("\n> " + x for x in lines[1:]) + ")",
            "space before base64": "![x](data:image/jpeg; base64," + "".join(lines) + ")"}[layout]
    kept = without_data_payloads(text + "\nThe crash after login.\nInternationalization\n")
    assert max(map(len, re.findall(r"[A-Za-z0-9+/]+", kept))) <= 20
    assert kept.endswith("\nThe crash after login.\nInternationalization\n")


def test_frontmatter_too_large_or_self_referencing_is_skipped_with_a_warning(tiny_vault):
    """QA round 11: a list holding itself (`&r [q, *r]`) or 400 nested lists made every sync fail
    (RecursionError); a 600-byte alias bomb took 74 s and 4 GB."""
    write_doc(tiny_vault, "knowledge/selfref.md", "---\ntitle: Selfref\ntags: &r [q, *r]\n---\nbody aardwolf\n")
    write_doc(tiny_vault, "knowledge/nested.md", "---\ntitle: x\ndescription: " + "[" * 400 + "x" + "]" * 400
              + "\n---\nbody aardwolf\n")
    write_doc(tiny_vault, "knowledge/bomb.md", "---\ntitle: Bomb\n" + _yaml_bomb() + "---\nbody aardwolf\n")
    write_doc(tiny_vault, "knowledge/fine.md", "---\ntitle: Fine\n" + _yaml_bomb(3) + "---\nbody aardwolf\n")
    index = dreamdb.open(tiny_vault)
    t0 = time.perf_counter()
    warnings = "\n".join(index.sync().warnings)
    assert time.perf_counter() - t0 < 30  # not a timing claim: the bomb took minutes before
    assert "knowledge/selfref.md: frontmatter is too large to read: nested more than 32 levels" in warnings
    assert "knowledge/bomb.md: frontmatter is too large to read: more than 10,000 values" in warnings
    assert "knowledge/nested.md: frontmatter is" in warnings and "fine.md: frontmatter is" not in warnings
    assert "knowledge/fine.md: frontmatter description is a list, not text; its items joined" in warnings  # (read)
    hits = {h.doc_id: h for h in index.recall("aardwolf", top=10)}
    assert set(hits) == {"knowledge/selfref", "knowledge/nested", "knowledge/bomb", "knowledge/fine"}
    assert hits["knowledge/fine"].title == "Fine" and hits["knowledge/fine"].tags == [" ".join(["lol"] * 81)]  # 3 levels: read
    assert hits["knowledge/bomb"].title == "bomb"  # frontmatter dropped: the file name
    assert _integrity(index) == "ok"


@pytest.mark.parametrize("depth", [500, 1200])
def test_a_changelog_nested_too_deeply_is_skipped_with_a_warning(tiny_vault, depth):
    """QA round 12: a 1,200-deep array in CHANGELOG.json (the JSON twin of the YAML bomb) failed every
    command with RecursionError (exit 70); at 500 the parse worked and the text conversion failed."""
    deep = "[" * depth + "]" * depth
    write_doc(tiny_vault, "core/CHANGELOG.json",
              '[{"date": "2026-01-01", "type": "fix", "description": "deep", "references": ' + deep + "}]")
    write_doc(tiny_vault, "knowledge/fine.md", "---\ntitle: Fine\n---\nbody aardwolf\n")
    index = dreamdb.open(tiny_vault)
    warnings = "\n".join(index.sync().warnings)
    assert "core/CHANGELOG.json:" in warnings and "nested too deeply to read" in warnings and "changelog not indexed" in warnings
    assert [h.doc_id for h in index.recall("aardwolf")] == ["knowledge/fine"]
    assert _integrity(index) == "ok"


def test_symlinked_folders_are_not_followed_and_say_so(tiny_vault, tmp_path):
    """QA round 11: a symlinked core/ was followed (its memory and changelog read from outside the vault)
    and a symlinked folder under knowledge/ was skipped without a word."""
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "dir" / "far.md").write_text("---\ntitle: Far\n---\nokapi outside the vault\n")
    write_doc(outside, "core/2.memory.md", "# Memory\n\n## Okapi\n\nokapi memory section\n")
    write_doc(outside, "core/CHANGELOG.json", '[{"date": "2026-01-01", "type": "note", "scope": "x", "description": "okapi"}]')
    write_doc(outside, "core/objectives/goal.md", "---\ntitle: Goal\n---\nokapi objective\n")
    os.symlink(outside / "core", tiny_vault / "core")
    write_doc(tiny_vault, "knowledge/here.md", "---\ntitle: Here\n---\nnot the animal\n")
    os.symlink(outside / "dir", tiny_vault / "knowledge" / "linked")
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    assert "knowledge/linked: skipped (a symlinked folder; dreamdb does not follow folder links)" in warnings
    # (the link named once, for the memory file, the changelog and the objectives alike: QA round 144-E F3)
    assert [w for w in warnings if w.startswith("core")] == [
        "core: skipped (a symlinked folder; dreamdb does not follow folder links)"]
    assert index.recall("okapi") == []
    assert not {d.split("/")[0] for d in _docs(index)} & {"memory", "changelog", "objective"}


def test_a_linked_folder_dreamdb_reads_is_named_with_nothing_behind_it(tiny_vault, tmp_path):
    """QA round 147-B F4: ``core`` (or ``lab``) linked to an empty folder was not named by the sync, where a link to
    the same folder inside ``knowledge/`` was: ``core`` was named only once its folder held CHANGELOG.json or
    ``objectives/``. A link to a file or to nothing is no folder, and is not named."""
    empty = tmp_path / "empty"
    empty.mkdir()
    write_doc(tiny_vault, "knowledge/n.md", "---\ntitle: N\n---\notter\n")
    for name in ("core", "lab", "knowledge/emptylink"):
        os.symlink(empty, tiny_vault / name)
    os.symlink(tmp_path / "nowhere", tiny_vault / "theses")
    (tmp_path / "afile").write_text("x")
    os.symlink(tmp_path / "afile", tiny_vault / "state")
    with dreamdb.open(tiny_vault) as index:
        warnings = index.sync().warnings
        assert sorted(w for w in warnings if "symlinked" in w) == [
            f"{rel}: skipped (a symlinked folder; dreamdb does not follow folder links)"
            for rel in ("core", "knowledge/emptylink", "lab")], warnings
        assert not [w for w in warnings if w.startswith(("theses", "state"))], warnings
        assert _docs(index) == {"knowledge/n"}
        (empty / "CHANGELOG.json").write_text('[{"date": "2026-01-01", "type": "note", "description": "otter"}]')
        (empty / "objectives").mkdir()
        warnings = index.sync(force=True).warnings
        assert [w for w in warnings if w.startswith("core")] == [
            "core: skipped (a symlinked folder; dreamdb does not follow folder links)"], warnings
        assert _docs(index) == {"knowledge/n"}


def test_a_folder_link_named_as_a_note_is_skipped_saying_so(tiny_vault):
    """QA round 144-E F2: a symlinked folder whose name ends in .md (``knowledge/ppl.md -> ../people``,
    ``knowledge/sublink.md -> sub.md``, a folder) was dropped without a word, even by sync --force, where one of
    another name is named."""
    write_doc(tiny_vault, "knowledge/sub.md/in.md", "---\ntitle: In sub\n---\ninsub\n")
    write_doc(tiny_vault, "people/ann.md", "---\ntitle: Ann\n---\nperson\n")
    os.symlink("../people", tiny_vault / "knowledge" / "ppl")
    os.symlink("../people", tiny_vault / "knowledge" / "ppl.md")
    os.symlink("sub.md", tiny_vault / "knowledge" / "sublink.md")
    index = dreamdb.open(tiny_vault)
    for report in (index.sync(), index.sync(force=True)):
        assert sorted(w for w in report.warnings if "symlinked folder" in w) == sorted(
            f"knowledge/{name}: skipped (a symlinked folder; dreamdb does not follow folder links)"
            for name in ("ppl", "ppl.md", "sublink.md"))
    assert _docs(index) == {"knowledge/in"}


def test_a_link_to_nothing_or_in_a_loop_is_skipped_saying_so(tiny_vault):
    """QA round 39: sync said "skipped (No such file or directory)" for a link to a missing note."""
    write_doc(tiny_vault, "knowledge/real.md", "---\ntitle: Real\n---\nokapi\n")
    os.symlink("../gone.md", tiny_vault / "knowledge" / "dangling.md")
    os.symlink("loop2.md", tiny_vault / "knowledge" / "loop1.md")
    os.symlink("loop1.md", tiny_vault / "knowledge" / "loop2.md")
    warnings = dreamdb.open(tiny_vault).sync().warnings
    assert "knowledge/dangling.md: skipped (a link to ../gone.md, which does not exist)" in warnings
    assert "knowledge/loop1.md: skipped (a link to loop2.md, which leads in a loop)" in warnings


def test_a_link_to_a_note_indexed_as_itself_is_not_a_second_document(tiny_vault):
    """QA round 37: knowledge/alias.md -> sub/target.md indexed the same text twice; a link to a note that
    is not indexed on its own (outside the indexed folders) still is."""
    write_doc(tiny_vault, "knowledge/sub/target.md", "---\ntitle: Target\n---\nokapi target\n")
    write_doc(tiny_vault, "notes/elsewhere.md", "---\ntitle: Elsewhere\n---\nokapi elsewhere\n")
    os.symlink(tiny_vault / "knowledge" / "sub" / "target.md", tiny_vault / "knowledge" / "alias.md")
    os.symlink(tiny_vault / "notes" / "elsewhere.md", tiny_vault / "knowledge" / "linked.md")
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    assert "knowledge/alias.md: skipped (a link to knowledge/sub/target.md, indexed as itself)" in warnings
    assert _docs(index) == {"knowledge/target", "knowledge/linked"}
    assert sorted(h.doc_id for h in index.recall("okapi")) == ["knowledge/linked", "knowledge/target"]


def test_file_and_folder_names_that_are_not_utf8_are_skipped_with_a_warning(tiny_vault):
    """A name with undecodable bytes (a Latin-1 é) once made every sync and recall fail (QA round 9)."""
    write_doc(tiny_vault, "knowledge/ok.md", "---\ntitle: Ok\n---\nzebracorn text\n")
    knowledge = os.fsencode(tiny_vault / "knowledge")
    with open(knowledge + b"/latin1-\xe9.md", "wb") as f:
        f.write(b"zebracorn in a file with a Latin-1 name\n")
    with open(knowledge + b"/upper-\xe9.MD", "wb") as f:  # (QA round 79 F9: .MD in another case was not named)
        f.write(b"zebracorn in an upper-case note with a Latin-1 name\n")
    os.mkdir(knowledge + b"/dir-\xe9")
    with open(knowledge + b"/dir-\xe9/inside.md", "wb") as f:
        f.write(b"zebracorn in a folder with a Latin-1 name\n")
    index = dreamdb.open(tiny_vault)
    r = index.sync()
    skipped = [w for w in r.warnings if "not valid UTF-8" in w]
    assert sorted(w.split(":")[0] for w in skipped) == ["knowledge/dir-\ufffd", "knowledge/latin1-\ufffd.md",
                                                       "knowledge/upper-\ufffd.MD"]
    assert [h.doc_id for h in index.recall("zebracorn")] == ["knowledge/ok"]
    assert _integrity(index) == "ok"
    # QA round 78-A F4: only the first sync named them; status names them every time
    assert not [w for w in index.sync().warnings if "not valid UTF-8" in w]
    st = index.status()
    assert (st["unindexed_undecodable_names"], st["unindexed_undecodable_examples"]) == (
        3, ["knowledge/dir-\ufffd", "knowledge/latin1-\ufffd.md", "knowledge/upper-\ufffd.MD"])


def test_a_vault_whose_notes_all_have_undecodable_names_says_so_not_that_it_has_none(tiny_vault):
    """QA round 103-C F9: with only such notes, recall and list said "the vault has no notes yet"."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    (tiny_vault / "knowledge").mkdir()
    with open(os.fsencode(tiny_vault / "knowledge") + b"/caf\xe9.md", "wb") as f:
        f.write(b"---\ntitle: x\n---\nhello\n")
    index = dreamdb.open(tiny_vault)
    assert index.recall("hello") == []
    assert "the index holds no documents: knowledge/caf\ufffd.md has a name that is not valid UTF-8 (rename it" \
        in " ".join(index.take_notes())
    r = CliRunner().invoke(cli, ["list", "--vault", str(tiny_vault)])
    assert "1 note or folder (knowledge/caf\ufffd.md) has a name that is not valid UTF-8: rename it" in r.output, \
        r.output
    assert "no notes yet" not in r.output


def test_a_quoted_yaml_timestamp_dates_a_note_as_the_unquoted_one(tiny_vault):
    """QA round 150-A F3: ``updated: "2026-08-18 10:00:00 -5"`` was dated 2026-08-18 alone, with a warning of "a date
    followed by no valid time of day", where the unquoted timestamp and ``"… -05"`` are the instant 15:00Z."""
    for name, value in (("plain", "2026-08-18 10:00:00 -5"), ("quoted", '"2026-08-18 10:00:00 -5"'),
                        ("two", '"2026-08-18 10:00:00 -05"'), ("delhi", "'2026-08-18 20:30:00 +5:30'")):
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\nname: Quokka {name}\nupdated: {value}\n---\nquokka\n")
    index = dreamdb.open(tiny_vault)
    text = "\n".join(index.sync().warnings)
    assert "no valid time of day" not in text, text
    assert [h.date for h in index.recall("quokka")] == ["2026-08-18T15:00:00Z"] * 4


def test_frontmatter_of_the_wrong_shape_is_said(tiny_vault):
    write_doc(tiny_vault, "knowledge/listname.md", "---\nname: [kudu, notes]\ndate: not-a-date\n---\nkudu body\n")
    write_doc(tiny_vault, "knowledge/fine.md", "---\nname: Eland\ndate: 2026-05-01\nexpires: 2030-01-01\n---\neland body\n")
    write_doc(tiny_vault, "knowledge/month13.md", "---\nname: Oryx\ndate: 2026-13-45\n---\noryx body\n")  # PyYAML raises
    # QA round 45 L7: these were taken or ignored without a word
    write_doc(tiny_vault, "knowledge/odd.md", "---\nname: Ibex\nconfidence: high\nupdated_at: '2026-08-01T25:00:00Z'\n"
                                              "---\nibex body\n")
    write_doc(tiny_vault, "knowledge/nan.md", "---\nname: Gnu\nconfidence: .nan\ndate: '2026-05-01 10:30'\n---\ngnu\n")
    write_doc(tiny_vault, "knowledge/flag.md", "---\nname: Kob\nconfidence: true\n---\nkob\n")
    # YAML 1.1 reads 12:30 and 1:2 as base-60 numbers (750, 62): quoted as written (YAML 1.2 has no base 60)
    write_doc(tiny_vault, "knowledge/clock.md", "---\nname: Topi\ndate: 12:30\nconfidence: 1:2\n---\ntopi\n")
    # QA round 114-B F10: a date in brackets was said as Python's repr ('[datetime.date(2026, 12, 1)]'); the other ISO
    # forms of a day, which --since takes, were no date (20261201 YAML reads as a number)
    write_doc(tiny_vault, "knowledge/listdate.md", "---\nname: Saola\ndate: [2026-12-01]\n---\nsaola\n")
    for name, day in (("compact", "20261201"), ("ordinal", "2026-335"), ("week", "2026-w49-2")):
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\nname: Dik-dik {name}\ndate: {day}\n---\ndikdik\n")
    index = dreamdb.open(tiny_vault)
    text = "\n".join(index.sync().warnings)
    assert "listdate.md: frontmatter date is a list, not a date (YYYY-MM-DD…); ignored" in text and "datetime" not in text
    assert "dikdik" not in text and "compact.md" not in text and "week.md" not in text
    assert sorted(h.date for h in index.recall("dikdik")) == ["2026-12-01", "2026-12-01", "2026-12-01"]
    assert "listname.md: frontmatter name is a list" in text and "frontmatter date 'not-a-date' is not a date" in text
    assert "month13.md: frontmatter date '2026-13-45' is not a date" in text
    assert "odd.md: frontmatter confidence 'high' is not a number from 0 to 1; ignored" in text
    assert ("odd.md: frontmatter updated_at '2026-08-01T25:00:00Z' is a date followed by no valid time of day; its date"
            " alone is used") in text
    assert "nan.md: frontmatter confidence 'nan' is not a number" in text and "nan.md: frontmatter date" not in text
    assert "flag.md: frontmatter confidence 'true' is not a number" in text  # as written, not Python's True
    assert "clock.md: frontmatter date '12:30' is not a date" in text
    assert "clock.md: frontmatter confidence '1:2' is not a number" in text
    assert "fine.md" not in text
    # QA round 148-H F1: an empty date (updated_at: "", expires: '') was "a date followed by no valid time of day;
    # its date alone is used", where none is given
    write_doc(tiny_vault, "knowledge/empty-dates.md",
              "---\nname: Gerenuk\nupdated_at: \"\"\nupdated: 2026-08-01\nexpires: ''\n---\ngerenuk\n")
    text = "\n".join(index.sync().warnings)
    assert "empty-dates.md" not in text, text
    assert [h.date for h in index.recall("gerenuk")] == ["2026-08-01"]
    (ibex,) = index.recall("ibex")
    assert ibex.date == "2026-08-01"  # the date alone, not a time of 25:00
    (oryx,) = index.recall("oryx")
    assert oryx.title == "Oryx" and oryx.date is None
    from dreamdb.errors import WriteRefused
    from dreamdb.writes import update

    before = (tiny_vault / "knowledge" / "month13.md").read_bytes()
    with pytest.raises(WriteRefused, match=r"impossible value \(date: 2026-13-45: month must be in 1\.\.12\)"):
        update(tiny_vault, "month13", description="x")  # (the key and value named: QA round 69 M4)
    assert (tiny_vault / "knowledge" / "month13.md").read_bytes() == before
    (hit,) = index.recall("kudu")
    assert hit.title == "kudu notes" and hit.date is None


def test_a_value_its_explicit_yaml_tag_cannot_read_is_warned_of_and_the_vault_synced(tiny_vault):
    """QA round 118-B F1: ``!!timestamp 2026-335``, ``!!float abc`` or ``!!bool maybe`` in one note made PyYAML raise
    Python's errors (AttributeError, ValueError, KeyError), and every command on the vault exit 70. F9: ``!!binary``
    is its text as everywhere, a set is said without Python's repr. F5: a week 53 in a year of 52 weeks was a date
    (the Monday after)."""
    for name, value in (("stamp", "!!timestamp 2026-335"), ("soon", "!!timestamp soon"), ("float", "!!float abc"),
                        ("flag", "!!bool maybe"), ("binary", "!!binary MjAyNi0xMi0wMQ=="), ("set", "!!set {2026-12-01}"),
                        ("week53", "2025-W53-1"), ("week53b", "2026-W53-1"), ("stamp53", "!!timestamp 2027-W53-1")):
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\nname: Bongo {name}\ndate: {value}\n---\nbongo\n")
    index = dreamdb.open(tiny_vault)
    text = "\n".join(index.sync().warnings)
    assert "float.md: frontmatter is not valid YAML ('!!float abc' is no value of its explicit tag)" in text
    assert "flag.md: frontmatter is not valid YAML ('!!bool maybe' is no value of its explicit tag)" in text
    assert "soon.md: frontmatter date 'soon' is not a date" in text
    assert "set.md: frontmatter date is a set, not a date" in text and "datetime" not in text
    assert "week53.md: frontmatter date '2025-W53-1' is not a date" in text and "week53b.md" not in text
    assert "stamp53.md: frontmatter date '2027-W53-1' is not a date" in text
    dates = {h.doc_id: h.date for h in index.recall("bongo", top=20)}
    assert dates == {"knowledge/stamp": "2026-12-01", "knowledge/binary": "2026-12-01", "knowledge/week53b": "2026-12-28",
                     "knowledge/soon": None, "knowledge/float": None, "knowledge/flag": None, "knowledge/set": None,
                     "knowledge/week53": None, "knowledge/stamp53": None}
    from dreamdb.errors import WriteRefused
    from dreamdb.writes import update

    with pytest.raises(WriteRefused, match=r"impossible value \('!!float abc' is no value of its explicit tag\)"):
        update(tiny_vault, "float", description="x")
    # an application's own tags (Home Assistant's !secret, CloudFormation's !Ref) are read as the values written: the
    # whole frontmatter was lost with them (QA round 121-A); YAML's own unknown ones are still refused, nothing run
    write_doc(tiny_vault, "knowledge/own.md", "---\nname: Bongo own\ndate: !when 2026-11-02\ntags: !mine [x, y]\n"
                                              "pw: !secret db_pw\nref: !Ref {a: 1}\n---\nbongo\n")
    write_doc(tiny_vault, "knowledge/py.md", "---\nname: Bongo py\nx: !!python/object/apply:os.system [ls]\n---\nbongo\n")
    text = "\n".join(index.sync().warnings)
    assert "own.md" not in text and "py.md: frontmatter is not valid YAML (could not determine a constructor" in text
    own = next(h for h in index.recall("bongo", top=20) if h.doc_id == "knowledge/own")
    assert (own.title, own.date, list(own.tags)) == ("Bongo own", "2026-11-02", ["x", "y"])
    update(tiny_vault, "own", description="kept")
    assert "pw: !secret db_pw\n" in (tiny_vault / "knowledge" / "own.md").read_text(encoding="utf-8")



def test_a_surrogate_pair_escape_in_a_double_quoted_scalar_is_its_code_point(tiny_vault):
    """QA round 153-C F3: ``title: "Ship it \\ud83d\\ude80 rocket"`` (JSON serializers and older js-yaml write emoji as
    UTF-16 surrogate pairs) was refused by libyaml and the whole frontmatter dropped: the title was the file name, the
    tags and date lost. A pair in a double-quoted scalar is its code point, as JSON, js-yaml and SnakeYAML read it; a
    lone surrogate is still refused with the warning; an escaped backslash, a single-quoted, plain or block scalar and a
    comment read no escapes. An update edits its own lines and keeps the others' bytes, escapes and all."""
    from dreamdb.vault.frontmatter import split_frontmatter
    from dreamdb.writes import update

    write_doc(tiny_vault, "knowledge/ship.md", '---\ntitle: "Ship it \\ud83d\\ude80 rocket"\ntags: [release]\n'
                                               'date: 2026-05-01\n---\nbongo\n')
    write_doc(tiny_vault, "knowledge/more.md", '---\ntitle: "Two \\uD83D\\uDE80\\ud83c\\udf89 and \\u00e9"\n'
                                               '"key \\ud83d\\ude00": "v"\ndate: 2026-05-02\n---\nbongo\n')
    write_doc(tiny_vault, "knowledge/lone.md", '---\ntitle: "Lone \\ud83d here"\ntags: [release]\n---\nbongo\n')
    write_doc(tiny_vault, "knowledge/low.md", '---\ntitle: "Low \\ude80\\ud83d"\n---\nbongo\n')
    write_doc(tiny_vault, "knowledge/asis.md", "---\n"
                                               'title: "Kept \\\\ud83d\\\\ude80"\n'  # escaped backslashes: text
                                               "plain: a \\ud83d\\ude80 b # \"c \\ud83d\\ude80\"\n"
                                               "single: 'q \\ud83d\\ude80'\n"
                                               "block: |\n  \"\\ud83d\\ude80\"\n"
                                               "---\nbongo\n")
    index = dreamdb.open(tiny_vault)
    warnings = "\n".join(index.sync().warnings)
    got = {h.doc_id: (h.title, h.date, list(h.tags)) for h in index.recall("bongo", top=20)}
    assert got["knowledge/ship"] == ("Ship it 🚀 rocket", "2026-05-01", ["release"])
    assert got["knowledge/more"] == ("Two 🚀🎉 and é", "2026-05-02", [])
    assert got["knowledge/lone"] == ("lone", None, []) and got["knowledge/low"] == ("low", None, [])
    assert ("knowledge/lone.md: frontmatter is not valid YAML (found invalid Unicode character escape code at line 2)"
            in warnings), warnings
    assert "knowledge/low.md: frontmatter is not valid YAML (found invalid Unicode character escape code" in warnings
    assert "ship.md" not in warnings and "more.md" not in warnings and "asis.md" not in warnings
    meta, body, warning = split_frontmatter((tiny_vault / "knowledge" / "asis.md").read_text(encoding="utf-8"))
    assert warning is None and body == "bongo\n"
    assert meta == {"title": "Kept \\ud83d\\ude80", "plain": "a \\ud83d\\ude80 b", "single": "q \\ud83d\\ude80",
                    "block": '"\\ud83d\\ude80"\n'}
    assert split_frontmatter((tiny_vault / "knowledge" / "more.md").read_text(encoding="utf-8"))[0][
        "key \U0001F600"] == "v"
    from dreamdb.vault.frontmatter import joined_surrogates

    assert joined_surrogates('a: "x \\ud83d\\ude80"\n') == 'a: "x \\U0001F680"\n'
    assert joined_surrogates('a: "x \\\\ud83d\\ude80"\n') == 'a: "x \\\\ud83d\\ude80"\n'  # (\\ then a low one alone)
    assert joined_surrogates("a: [\"\\ud83d\\ude80\", '\\ud83d\\ude80']\n") == "a: [\"\\U0001F680\", '\\ud83d\\ude80']\n"
    # update edits its own lines: the title keeps its escapes, byte for byte, and still reads as the rocket
    ship = tiny_vault / "knowledge" / "ship.md"
    update(tiny_vault, "ship", tags=["release", "launch"])
    assert ship.read_text(encoding="utf-8") == ('---\ntitle: "Ship it \\ud83d\\ude80 rocket"\ntags: [release, launch]\n'
                                                "date: 2026-05-01\n---\nbongo\n")
    update(tiny_vault, "ship", description="A rocket \U0001F680")
    assert ship.read_text(encoding="utf-8").startswith('---\ntitle: "Ship it \\ud83d\\ude80 rocket"\n')
    index.sync()
    (hit,) = [h for h in index.recall("bongo", top=20) if h.doc_id == "knowledge/ship"]
    assert (hit.title, list(hit.tags)) == ("Ship it 🚀 rocket", ["release", "launch"])
    # a lone surrogate still refuses the edit, nothing written
    from dreamdb.errors import WriteRefused

    before = (tiny_vault / "knowledge" / "lone.md").read_bytes()
    with pytest.raises(WriteRefused, match="found invalid Unicode character escape code at line 2"):
        update(tiny_vault, "lone", tags=["x"])
    assert (tiny_vault / "knowledge" / "lone.md").read_bytes() == before
    # a whole rewrite (a flow mapping) writes the value it read, the rocket, not two halves of it
    flow = tiny_vault / "knowledge" / "flow.md"
    write_doc(tiny_vault, "knowledge/flow.md", '---\n{title: "Flow \\ud83d\\ude80 x", tags: [a]}\n---\nbongo\n')
    update(tiny_vault, "flow", tags=["z"])
    import yaml

    assert yaml.safe_load(flow.read_text(encoding="utf-8").split("---\n")[1]) == {"title": "Flow 🚀 x", "tags": ["z"]}


def test_surrogate_pairs_are_found_by_the_loaders_own_scanner_not_the_pure_python_one(monkeypatch):
    """QA round 154-A F3: one surrogate-pair escape in a large frontmatter block (3 MB: 300 long values and
    ``title: "Ship \\ud83d\\ude80"``) made its sync 10–15 times slower: the double-quoted scalars were found by
    PyYAML's pure-Python scanner over the whole block (4–6 s for 2–3 MB), where the loader is libyaml. They are found by
    libyaml's scanner, over a copy with each surrogate escape written as another of the same length: the same
    scalars joined as the pure-Python scanner found them, on every form the reader meets (measured by a script, not
    timed here: 5.9 s → 0.08 s for the 3 MB block). Text the scan stops in has the scalars before that point joined:
    the loader says what stopped it, not "invalid escape" of a pair before it."""
    import yaml

    from dreamdb.vault import frontmatter

    if frontmatter._Base is yaml.SafeLoader:
        pytest.skip("PyYAML without libyaml: its loader is the pure-Python one, whose scanner joined_surrogates uses")

    def one(m):
        if m.group(1) is None:
            return m.group()
        return f"\\U{0x10000 + ((int(m.group(1), 16) - 0xD800) << 10) + int(m.group(2), 16) - 0xDC00:08X}"

    def pure(text: str) -> str:  # (the scalars as PyYAML's pure-Python scanner finds them: the reading before)
        spans = [(t.start_mark.index, t.end_mark.index) for t in yaml.scan(text, Loader=yaml.SafeLoader)
                 if isinstance(t, yaml.ScalarToken) and t.style == '"']
        out, at = [], 0
        for start, end in spans:
            out += [text[at:start], frontmatter._ESCAPE.sub(one, text[start:end])]
            at = end
        return "".join(out) + text[at:]

    pair, rocket = "\\ud83d\\ude80", "\\U0001F680"
    cases = [
        f'a: "x {pair}"\n', f'a: "x \\\\{pair}"\n', f"a: [\"{pair}\", '{pair}']\n",
        f'é: "ü {pair}" # "{pair}"\n', f'a: "multi\n  line {pair}\n  end"\n', f'a: "top\nlevel {pair} line"\n',
        f'a: |\n  "{pair}"\nb: "\\uD83D\\uDE00"\n', f'a: >-\n  "{pair}"\n  x\n',
        f'"k {pair}": {{x: "\\ud83c\\udf89", y: \'"{pair}"\'}}\n', f'a: b "{pair}" c\n',
        f'a: "lone \\ud83d"\nb: "\\ude80{pair}"\n', f'a: "\\U0000D83D{pair}"\nb: "\\U0000DE80"\n',
        f'- "{pair}"\n- x\n- "\\t\\"q\\" {pair}"\n', f"a: 'it''s \"{pair}\"'\nb: \"{pair}\"\n",
        f'a: !mine "{pair}"\nb: &x "{pair}"\nc: *x\n', f'? "{pair}"\n: "{pair}{pair}"\n',
    ]
    for text in cases:
        assert frontmatter.joined_surrogates(text) == pure(text), text
    assert frontmatter.joined_surrogates(f'a: "x {pair}"\n') == f'a: "x {rocket}"\n'
    # the pure-Python scanner is not run (6 s for a block of 3 MB libyaml loads in 0.1 s)
    big = f'title: "Ship {pair}"\n' + "".join(f"k{i}: " + "lorem ipsum " * 50 + "\n" for i in range(300))

    def refused(*_args, **_kwargs):
        raise AssertionError("PyYAML's pure-Python scanner ran")

    monkeypatch.setattr(yaml.scanner.Scanner, "fetch_more_tokens", refused)
    meta, _, warning = frontmatter.split_frontmatter(f"---\n{big}---\nbody\n")
    assert (meta["title"], len(meta), warning) == ("Ship \U0001F680", 301, None)
    # the scan stopped by a bad escape on line 3: said, not the pair on line 2
    assert frontmatter.split_frontmatter(f'---\na: "{pair}"\nb: "\\x"\n---\nbody\n')[2] == (
        "frontmatter is not valid YAML (did not find expected hexdecimal number at line 3)")



def test_archives_are_opt_in(tiny_vault):
    write_doc(tiny_vault, "knowledge/.archive/old.md", "archived aardvark\n")
    assert dreamdb.open(tiny_vault).recall("aardvark") == []
    idx = dreamdb.open(tiny_vault, include_archives=True, index_path=tiny_vault / "archives.db")
    assert [h.doc_id for h in idx.recall("aardvark")] == ["knowledge/old"]


@pytest.mark.parametrize("damage", ["delete", "truncate", "garbage"])
def test_index_deleted_or_corrupt_is_rebuilt(tiny_vault, damage):
    write_doc(tiny_vault, "knowledge/a.md", "pangolin\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    path = index.index_path
    index.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            os.unlink(f"{path}{suffix}")
    if damage == "delete":
        path.unlink()
    elif damage == "truncate":
        with open(path, "r+b") as fh:
            fh.truncate(1000)
    else:
        path.write_bytes(b"this is not a database" * 100)
    again = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in again.recall("pangolin")] == ["knowledge/a"]
    assert _integrity(again) == "ok"


def test_index_is_private_and_gitignored(tiny_vault):
    write_doc(tiny_vault, "knowledge/a.md", "x\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    assert index.index_path == tiny_vault / ".dreamdb" / "index.db"
    assert oct(index.index_path.stat().st_mode & 0o777) == oct(0o600)
    assert (tiny_vault / ".dreamdb" / ".gitignore").read_text().strip().endswith("*")


def test_a_read_only_index_leaves_no_read_only_wal_or_shm(tiny_vault):
    """QA repro: SQLite gives -wal/-shm the mode the index had when opened; a 0444 index left a 0444 -shm, which
    made every write fail once the index was writable again. QA round 65 L3: dreamdb set a 0444 index to 0600
    itself, undoing the user's chmod (and making ``sync``'s "make it writable" come true by itself); the group's and
    others' bits are taken off, the owner's kept."""
    import subprocess
    import sys

    write_doc(tiny_vault, "knowledge/a.md", "x\n")
    dreamdb.open(tiny_vault).sync()
    path = tiny_vault / ".dreamdb" / "index.db"
    mode = lambda f: oct(f.stat().st_mode & 0o777)  # noqa: E731
    path.chmod(0o444)
    index = dreamdb.open(tiny_vault)
    index.recall("x")  # opens the index: -wal and -shm exist while the connection is open
    files = [path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm")]
    assert [mode(f) for f in files] == [oct(0o400)] * 3
    index.close()
    write_doc(tiny_vault, "knowledge/b.md", "x\n")
    bite = permissions_bite()
    p = subprocess.run([*bite, sys.executable, "-m", "dreamdb", "sync", "--vault", str(tiny_vault)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 4 and "readonly database" in p.stderr and "writable" in p.stderr, p.stderr
    assert mode(path) == oct(0o400)  # as the user left it (but for the group's and others' bits)
    path.chmod(0o644)
    for f in files[1:]:
        if f.exists():
            f.chmod(0o444)  # left read-only by a process that opened the read-only index
    p = subprocess.run([*bite, sys.executable, "-m", "dreamdb", "sync", "--vault", str(tiny_vault)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "1 added" in p.stdout, p.stderr
    assert [mode(f) for f in files if f.exists()] == [oct(0o600)] * len([f for f in files if f.exists()])


def test_read_only_vault_indexes_into_cache(tiny_vault, tmp_path):
    write_doc(tiny_vault, "knowledge/a.md", "okapi\n")
    os.chmod(tiny_vault, 0o555)
    try:
        index = dreamdb.open(tiny_vault)
        assert [h.doc_id for h in index.recall("okapi")] == ["knowledge/a"]
        assert not (tiny_vault / ".dreamdb").exists()
        assert os.environ["DREAMDB_CACHE_DIR"] in str(index.index_path)
        # a write is refused (even for root), nothing is created in the vault, the index stays where it is
        before = (tiny_vault / "knowledge" / "a.md").read_bytes()
        with pytest.raises(dreamdb.errors.WriteRefused, match="read-only"):
            index.remember("a note")
        with pytest.raises(dreamdb.errors.WriteRefused):
            index.update("knowledge/a", description="x")
        assert not (tiny_vault / ".dreamdb").exists() and not (tiny_vault / "core").exists()
        assert (tiny_vault / "knowledge" / "a.md").read_bytes() == before
        assert dreamdb.open(tiny_vault).index_path == index.index_path
    finally:
        os.chmod(tiny_vault, 0o755)


def test_a_cache_dir_that_cannot_hold_the_index_is_named_in_the_hint(tiny_vault, tmp_path, monkeypatch):
    """QA round 65 L9: with a read-only vault and ``DREAMDB_CACHE_DIR`` naming a file, the hint said to set
    ``DREAMDB_INDEX`` or make the vault writable, never naming the variable that was wrong."""
    write_doc(tiny_vault, "knowledge/a.md", "okapi\n")
    (tmp_path / "a-file").write_text("x")
    monkeypatch.setenv("DREAMDB_CACHE_DIR", str(tmp_path / "a-file"))
    os.chmod(tiny_vault, 0o555)
    try:
        with pytest.raises(dreamdb.errors.IndexUnavailable, match="Not a directory") as info:
            dreamdb.open(tiny_vault).recall("okapi")
        assert info.value.hint.startswith("Point DREAMDB_CACHE_DIR at a folder you can write (or unset it)")
    finally:
        os.chmod(tiny_vault, 0o755)
    monkeypatch.setenv("DREAMDB_INDEX", str(tmp_path / "no-such-folder" / "x" / "index.db"))
    (tmp_path / "no-such-folder").write_text("x")
    with pytest.raises(dreamdb.errors.IndexUnavailable) as info:
        dreamdb.open(tiny_vault).recall("okapi")
    assert "DREAMDB_CACHE_DIR" not in (info.value.hint or "")


def _sync_worker(vault: str, q) -> None:
    try:
        r = dreamdb.open(vault).sync()
        q.put(("ok", r.added, r.unchanged))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        q.put(("error", repr(exc), 0))


def test_two_syncs_at_once(tiny_vault):
    for i in range(150):
        write_doc(tiny_vault, f"knowledge/n{i}.md", f"note {i} " + "lorem ipsum " * 200)
    dreamdb.open(tiny_vault).conn  # create + migrate once
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_sync_worker, args=(str(tiny_vault), q)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [q.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(30)
    assert all(r[0] == "ok" for r in results), results
    # one did the work, the other found it done (or waited and re-checked)
    assert sorted(r[1] for r in results) == [0, 150]
    index = dreamdb.open(tiny_vault)
    assert len(_docs(index)) == 150 and _integrity(index) == "ok"


@needs_real_vault
def test_real_vault_corpus(real_index):
    st = real_index.status()
    # SPEC §1 corpus of the 2026-08-18 snapshot: 148 source files, 622 changelog entries, 3 memory sections
    assert st["by_type"]["changelog"] == 622
    assert st["by_type"]["memory"] == 3
    assert st["files"] == 148
    assert st["schema_version"] >= 1
    ids = _docs(real_index)
    assert "knowledge/haiku-recall-architecture" in ids and "feature/memory-recall-bm25" in ids
    # archives (knowledge/.archive) are not indexed by default; knowledge/archive (no dot) is
    assert not any(".archive" in p for (p,) in real_index.conn.execute("SELECT path FROM files"))
    # excalidraw boards contribute text elements, never the scene JSON
    body = real_index.conn.execute("SELECT body FROM documents WHERE doc_id = 'knowledge/recall.excalidraw'").fetchone()[0]
    assert "BM25F keyword match" in body and '"type": "excalidraw"' not in body


def _current(report) -> bool:
    """A sync report of an index that was already current: nothing added, changed or removed."""
    return not report.touched and report.unchanged > 0


@needs_real_vault
def test_real_vault_no_change_sync_is_cheap(real_index):
    real_index.sync()
    t0 = time.perf_counter()
    r = real_index.sync()
    assert not r.touched and r.unchanged == 148
    assert time.perf_counter() - t0 < 1.0  # generous: the benchmark measures the real figure


def test_driver_exceptions_come_from_one_module():
    assert issubclass(db.OperationalError, db.DatabaseError)


@needs_real_vault
def test_index_damaged_in_the_middle_is_rebuilt_and_answers(fresh_synced_vault):
    """QA repro: pages in the middle of the file overwritten; the first recall must still answer correctly."""
    index = dreamdb.open(fresh_synced_vault)
    assert _current(index.sync())  # the copied index is current
    expected = [h.doc_id for h in index.recall("dashboard thresholds", now="2026-08-18T00:00:00Z")]
    path = index.index_path
    index.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            os.unlink(f"{path}{suffix}")
    with open(path, "r+b") as fh:
        fh.seek(200_000)
        fh.write(os.urandom(10_000))
    again = dreamdb.open(fresh_synced_vault)
    assert [h.doc_id for h in again.recall("dashboard thresholds", now="2026-08-18T00:00:00Z")] == expected
    assert any("rebuilt" in n for n in again.take_notes())
    assert _integrity(again) == "ok"


def test_broken_changelog_keeps_last_good_entries_and_keeps_warning(tiny_vault):
    write_doc(tiny_vault, "core/CHANGELOG.json", '[{"date": "2026-01-02", "type": "fix", "scope": "x", "description": "ocelot fix"}]')
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall("ocelot")] == ["changelog/2026-01-02-x-1"]
    write_doc(tiny_vault, "core/CHANGELOG.json", '[{"date": "2026-01-02", broken')
    for _ in range(2):  # every sync says so until the file is fixed
        r = index.sync()
        assert any("kept the 1 document indexed" in w for w in r.warnings)
        assert [h.doc_id for h in index.recall("ocelot")] == ["changelog/2026-01-02-x-1"]
    write_doc(tiny_vault, "core/CHANGELOG.json", "[]")
    assert index.sync().warnings == [] and index.recall("ocelot") == []


def test_non_scalar_status_is_ignored_with_a_warning_and_bad_queries_are_usage_errors(tiny_vault):
    write_doc(tiny_vault, "knowledge/a.md", "---\ntitle: A\nstatus:\n  a: 1\n---\nalpha text\n")
    index = dreamdb.open(tiny_vault)
    r = index.sync()
    assert any("status is a mapping, not a word" in w for w in r.warnings)
    assert index.conn.execute("SELECT status FROM documents").fetchone()[0] is None
    for bad in (None, 123, b"alpha"):
        with pytest.raises(dreamdb.errors.UsageError, match="query must be a string"):
            index.recall(bad)


def _postings_by_source(index) -> set[tuple]:
    return set(index.conn.execute(
        "SELECT p.term, d.source_path, d.ordinal, p.tf_title, p.tf_description, p.tf_tags, p.tf_body, p.tf_slug"
        " FROM postings p JOIN documents d ON d.id = p.doc"))


def _has_doc_index(index) -> bool:
    return index.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'postings_doc'").fetchone() is not None


@needs_real_vault
def test_first_sync_bulk_load_equals_row_by_row_sync(fresh_real_vault, tmp_path, monkeypatch):
    """A first sync stages postings and loads them sorted; the index equals one built file by file."""
    from dreamdb.store import sync as S

    monkeypatch.setattr(S.BulkPostings, "BATCH_ROWS", 5_000)  # several sorted batches
    finished = []
    real_finish = S.BulkPostings.finish
    monkeypatch.setattr(S.BulkPostings, "finish", lambda self: (finished.append(len(self.rows)), real_finish(self)))
    bulk = dreamdb.open(fresh_real_vault, index_path=tmp_path / "bulk.db")
    assert bulk.sync().added == 148 and len(finished) == 1
    # the same vault, half of it synced first and the other half added by a second (incremental) sync
    knowledge = sorted(p for p in (fresh_real_vault / "knowledge").rglob("*.md") if ".archive" not in p.parts)
    parked = tmp_path / "parked"
    moved = []
    for i, p in enumerate(knowledge[::2]):
        dest = parked / str(i)
        dest.mkdir(parents=True)
        moved.append((p, dest / p.name))
        os.replace(p, dest / p.name)
    stepwise = dreamdb.open(fresh_real_vault, index_path=tmp_path / "stepwise.db")
    stepwise.sync()
    for original, parked_file in moved:
        os.replace(parked_file, original)
    r = stepwise.sync()
    assert r.added == len(moved) and len(finished) == 2  # the second sync was incremental: no bulk load
    assert _postings_by_source(bulk) == _postings_by_source(stepwise)
    assert len(_postings_by_source(bulk)) > 50_000
    assert _has_doc_index(bulk) and _has_doc_index(stepwise)
    assert _integrity(bulk) == _integrity(stepwise) == "ok"
    q = "sleep debt thresholds"
    assert [(h.doc_id, h.score) for h in bulk.recall(q, top=10)] == [(h.doc_id, h.score) for h in stepwise.recall(q, top=10)]


def test_interrupted_bulk_load_leaves_the_index_as_it_was(tiny_vault, monkeypatch):
    from dreamdb.store import sync as S

    for i in range(30):
        write_doc(tiny_vault, f"knowledge/n{i}.md", f"---\ntitle: Note {i}\n---\nokapi {i} walks the bm{i} path\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    before = _postings_by_source(index)
    monkeypatch.setattr(S.BulkPostings, "BATCH_ROWS", 20)  # rows reach postings while its doc index is dropped

    def crash(self):
        raise RuntimeError("simulated crash before the doc index is re-created")

    monkeypatch.setattr(S.BulkPostings, "finish", crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        index.sync(force=True)  # a rebuild empties the index, so it loads in bulk
    monkeypatch.undo()
    assert _postings_by_source(index) == before and _has_doc_index(index) and _integrity(index) == "ok"
    assert index.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1  # switched back on after the failure
    assert [h.doc_id for h in index.recall("okapi bm7")][0] == "knowledge/n7"


@needs_real_vault
def test_rebuild_empties_the_derived_tables_at_once_and_keeps_cascades(fresh_synced_vault):
    """A forced rebuild truncates files and its cascade children (foreign keys off for that one transaction)."""
    from dreamdb.store.sync import _cascade_tables

    index = dreamdb.open(fresh_synced_vault)
    assert _current(index.sync())  # the copied index is current
    order = _cascade_tables(index.conn)
    assert set(order) == {"files", "documents", "postings", "document_tags", "chunks", "chunked_documents"}
    assert order[-1] == "files" and order.index("documents") > max(order.index(t) for t in ("postings", "chunks"))
    before = _postings_by_source(index)
    tags = "SELECT t.tag, d.source_path, d.ordinal FROM document_tags t JOIN documents d ON d.id = t.doc"
    tags_before = set(index.conn.execute(tags))
    r = index.sync(force=True)
    assert r.rebuilt and r.changed == 148 and r.added == 0
    assert _postings_by_source(index) == before and set(index.conn.execute(tags)) == tags_before
    assert index.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert index.conn.execute("PRAGMA foreign_key_check").fetchall() == [] and _integrity(index) == "ok"
    # cascades work again: removing a file removes its documents' postings
    victim = fresh_synced_vault / "knowledge" / "haiku-recall-architecture.md"
    if not victim.exists():
        victim = next((fresh_synced_vault / "knowledge").rglob("haiku-recall-architecture.md"))
    rel = victim.relative_to(fresh_synced_vault).as_posix()
    victim.unlink()
    assert index.sync().removed == 1
    assert not [r for r in _postings_by_source(index) if r[1] == rel]
    assert len(_postings_by_source(index)) < len(before)


def test_a_rebuild_done_by_another_process_meanwhile_becomes_an_incremental_sync(tiny_vault, monkeypatch):
    """QA repro: two first syncs at once rebuilt twice; the one that waited for the lock now syncs incrementally."""
    from dreamdb.store import sync as S

    for i in range(5):
        write_doc(tiny_vault, f"knowledge/n{i}.md", f"note {i} about capybaras\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    p = write_doc(tiny_vault, "knowledge/n0.md", "note 0 about capybaras, edited\n")
    os.utime(p, ns=(time.time_ns(), time.time_ns() + 10**9))
    stale_view = [True]  # before the lock this process saw an index needing a rebuild; under the lock it is done
    real = S.whole_index_due
    monkeypatch.setattr(S, "whole_index_due", lambda conn: stale_view.pop() if stale_view else real(conn))
    r = index.sync()
    assert not r.rebuilt and (r.added, r.changed, r.unchanged) == (0, 1, 4)
    assert index.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1 and _integrity(index) == "ok"
    assert [h.doc_id for h in index.recall("edited")] == ["knowledge/n0"]


def test_bulk_load_without_temp_space_falls_back_to_row_by_row(tiny_vault, monkeypatch):
    """QA repro: a first sync failed with 'database or disk is full' when the temp folder was small."""
    from dreamdb.store import sync as S

    for i in range(12):
        write_doc(tiny_vault, f"knowledge/n{i}.md", f"---\ntitle: Note {i}\n---\nokapi {i} walks the bm{i} path\n")
    clean = dreamdb.open(tiny_vault, index_path=tiny_vault.parent / "clean.db")
    clean.sync()

    def full(self):
        raise db.OperationalError("database or disk is full")

    monkeypatch.setattr(S.BulkPostings, "_flush", full)
    index = dreamdb.open(tiny_vault, index_path=tiny_vault.parent / "small-tmp.db")
    r = index.sync()
    assert r.added == 12 and _postings_by_source(index) == _postings_by_source(clean)
    assert _has_doc_index(index) and _integrity(index) == "ok"


def test_same_size_edit_with_the_old_mtime_put_back_is_seen(tmp_path):
    """QA round 7: cp -p / rsync -t / os.utime can restore a file's mtime after an edit of the same
    size; the stat pre-filter then took it for unchanged. The ctime (which no program can set) moves."""
    import dreamdb

    vault = tmp_path / "_dream_context"
    note = vault / "knowledge" / "a.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\ntitle: A\n---\nthe zebra grazes here\n")
    index = dreamdb.open(vault)
    assert [h.doc_id for h in index.recall("zebra")] == ["knowledge/a"]
    st = os.stat(note)
    time.sleep(0.02)
    note.write_text("---\ntitle: A\n---\nthe okapi grazes here\n")  # same size: zebra → okapi
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(note).st_size == st.st_size and os.stat(note).st_mtime_ns == st.st_mtime_ns
    assert [h.doc_id for h in index.recall("okapi")] == ["knowledge/a"]
    assert index.recall("zebra") == []


def _ids_by_path(index) -> dict[str, str]:
    return dict(index.conn.execute("SELECT source_path, doc_id FROM documents WHERE type = 'knowledge'"))


SAME_NAMES = ["knowledge/notes.md", "knowledge/a/notes.md", "knowledge/b/notes.md", "knowledge/notes-2.md"]


@pytest.mark.parametrize("arrival", [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]])
def test_same_named_files_are_numbered_in_path_order_whatever_order_they_arrive_in(tiny_vault, arrival):
    index = dreamdb.open(tiny_vault)
    warnings = []
    for i in arrival:  # one sync per file: each arrives after the others
        write_doc(tiny_vault, SAME_NAMES[i], f"body {i}\n")
        warnings += index.sync().warnings
    incremental = _ids_by_path(index)
    # path order: a/notes.md < b/notes.md < notes-2.md < notes.md; the file named notes-2 keeps its name
    assert incremental == {"knowledge/a/notes.md": "knowledge/notes", "knowledge/b/notes.md": "knowledge/notes-3",
                           "knowledge/notes-2.md": "knowledge/notes-2", "knowledge/notes.md": "knowledge/notes-4"}
    assert index.sync(force=True).rebuilt and _ids_by_path(index) == incremental
    slugs = dict(index.conn.execute("SELECT doc_id, slug FROM documents"))
    assert all(doc_id == f"knowledge/{slug}" for doc_id, slug in slugs.items())
    said = [w for w in warnings if w.startswith("knowledge/b/notes.md: ")]
    assert said and "knowledge/notes-3" in said[-1] and "knowledge/notes is the file knowledge/a/notes.md" in said[-1]
    # the number is not a search term: every notes.md has the same slug terms, without "3" or "4"
    slug_terms = {path: {r[0] for r in index.conn.execute(
        "SELECT term FROM postings p JOIN documents d ON d.id = p.doc WHERE d.source_path = ? AND p.tf_slug > 0",
        (path,))} for path in SAME_NAMES[:3]}
    assert slug_terms[SAME_NAMES[0]] and all(t == slug_terms[SAME_NAMES[0]] for t in slug_terms.values())
    assert not slug_terms[SAME_NAMES[0]] & {"2", "3", "4"}


def test_many_same_named_files_cost_a_few_lookups_each(tiny_vault):
    """QA round 90-C F2: each same-named file's provisional id was searched for as ``-2``, ``-3``, … one lookup
    each, so a sync of n ``README.md`` files (one per project folder) made n²/2 lookups: 2,000 took 10 s and a
    prompt hook blocked 18 s. The ids are still numbered in path order, the file named ``README-2`` keeping it."""
    n = 300
    for i in range(n):
        write_doc(tiny_vault, f"knowledge/p{i:03d}/README.md", f"readme of project {i}\n")
    write_doc(tiny_vault, "knowledge/README-2.md", "a file of that name\n")
    index = dreamdb.open(tiny_vault)
    probes = []
    index.conn.set_trace_callback(
        lambda sql: probes.append(sql) if sql.startswith("SELECT 1 FROM documents WHERE doc_id = ") else None)
    assert index.sync().added == n + 1
    index.conn.set_trace_callback(None)
    assert len(probes) < 3 * n, len(probes)  # (n²/2 = 45,000 before)
    ids = _ids_by_path(index)
    assert ids["knowledge/README-2.md"] == "knowledge/README-2" and ids["knowledge/p000/README.md"] == "knowledge/README"
    assert [ids[f"knowledge/p{i:03d}/README.md"] for i in (1, 2, n - 1)] == [
        "knowledge/README-3", "knowledge/README-4", f"knowledge/README-{n + 1}"]
    assert index.sync(force=True).rebuilt and _ids_by_path(index) == ids


def test_removing_or_renaming_a_same_named_file_renumbers_the_rest(tiny_vault):
    for i, path in enumerate(SAME_NAMES):
        write_doc(tiny_vault, path, f"body {i}\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    (tiny_vault / "knowledge/a/notes.md").unlink()
    index.sync()
    assert _ids_by_path(index) == {"knowledge/b/notes.md": "knowledge/notes", "knowledge/notes-2.md": "knowledge/notes-2",
                                   "knowledge/notes.md": "knowledge/notes-3"}
    (tiny_vault / "knowledge/notes-2.md").rename(tiny_vault / "knowledge/other.md")  # frees the number 2
    index.sync()
    assert _ids_by_path(index) == {"knowledge/b/notes.md": "knowledge/notes", "knowledge/notes.md": "knowledge/notes-2",
                                   "knowledge/other.md": "knowledge/other"}
    index.sync(force=True)
    assert _ids_by_path(index)["knowledge/notes.md"] == "knowledge/notes-2"
    assert [h.doc_id for h in index.recall("body 3")][:1] == ["knowledge/other"]


def test_archived_same_named_files_number_after_live_ones_and_own_names_are_not_warned_about(tiny_vault):
    """QA round 13: an archived notes.md took knowledge/notes once archives were indexed; a rebuild warned
    that notes-2.md was "indexed as knowledge/notes-2", its own name."""
    for path in ("knowledge/a/notes.md", "knowledge/b/notes.md", "knowledge/notes-2.md", "knowledge/.archive/notes.md"):
        write_doc(tiny_vault, path, "body\n")
    live = dreamdb.open(tiny_vault, include_archives=False)
    report = live.sync(force=True)
    ids = _ids_by_path(live)
    assert not [w for w in report.warnings if w.startswith("knowledge/notes-2.md")]
    live.close()
    with_archives = dreamdb.open(tiny_vault, include_archives=True)
    warnings = with_archives.sync().warnings
    # the archived file is numbered after the live ones, and the warning says why (QA round 38: it said
    # "first in path order", while .archive/ sorts first by path)
    assert ("knowledge/.archive/notes.md: indexed as knowledge/notes-4 (knowledge/notes is the file "
            "knowledge/a/notes.md, a live file (archived files come after live ones))") in warnings
    both = _ids_by_path(with_archives)
    assert {p: both[p] for p in ids} == ids == {"knowledge/a/notes.md": "knowledge/notes",
                                                "knowledge/b/notes.md": "knowledge/notes-3",
                                                "knowledge/notes-2.md": "knowledge/notes-2"}
    assert both["knowledge/.archive/notes.md"] == "knowledge/notes-4"
    with_archives.sync(force=True)
    assert _ids_by_path(with_archives) == both
    with_archives.close()



def test_sync_says_a_few_of_the_warnings_on_same_named_files_and_counts_the_rest(tiny_vault):
    """QA round 153-C F4: 3,000 folders of a notes.md each printed 2,999 lines "indexed as knowledge/notes-N …", again
    on sync --force. The text output says the first five and counts the others on one line, in their place; every
    other warning is said as before; the JSON holds every one (so does embed refresh's and compact's sync, on
    stderr, capped alike)."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    for n in range(1, 10):
        write_doc(tiny_vault, f"knowledge/f{n}/notes.md", f"note {n}\n")
    write_doc(tiny_vault, "knowledge/z/bad.md", "---\ntitle: [unclosed\n---\nbad\n")
    runner = CliRunner()
    r = runner.invoke(cli, ["sync", "--vault", str(tiny_vault)])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("warning: ")]
    said = [f"warning: knowledge/f{n}/notes.md: indexed as knowledge/notes-{n} (knowledge/notes is the file"
            " knowledge/f1/notes.md, first in path order)" for n in range(2, 7)]
    assert len(lines) == 7 and lines[0].startswith("warning: knowledge/z/bad.md: frontmatter is not valid YAML")
    assert lines[1:] == said + [
        "warning: … and 3 more same-named files indexed under a numbered id (dreamdb list shows each note's id and"
        " file; the JSON of the sync that numbers them, sync --json, lists every one)"], r.stderr
    r = runner.invoke(cli, ["sync", "--vault", str(tiny_vault), "--force", "--json"])
    warnings = json.loads(r.stdout)["warnings"]
    assert [w for w in warnings if ": indexed as " in w] == [
        f"knowledge/f{n}/notes.md: indexed as knowledge/notes-{n} (knowledge/notes is the file knowledge/f1/notes.md,"
        " first in path order)" for n in range(2, 10)]
    r = runner.invoke(cli, ["sync", "--vault", str(tiny_vault), "--force"])
    assert r.stderr.count(": indexed as knowledge/notes-") == 5 and "… and 3 more same-named files" in r.stderr
    # the other forms of the warning, and no line counting one: six are said as they are
    from dreamdb.store.sync import few_same_name_warnings

    renamed = [f"knowledge/x{n}.md: its id is now knowledge/x-{n}, was knowledge/x (knowledge/x is the file"
               " knowledge/a/x.md, first in path order)" for n in range(6)]
    assert few_same_name_warnings(renamed) == renamed
    assert few_same_name_warnings(["other", *renamed, "last"], shown=2) == [
        "other", *renamed[:2], "… and 4 more same-named files indexed under a numbered id (dreamdb list shows each"
        " note's id and file; the JSON of the sync that numbers them, sync --json, lists every one)", "last"]

def test_embed_commands_name_dreamdb_list_for_the_same_named_files_they_leave_out(tiny_vault):
    """QA round 153-F F4: embed refresh (and compact), whose sync numbers the files, said "sync --json lists every
    one" of those it left out; but that sync had run, a later sync --json lists none, and their own JSON holds no
    warnings. Their line names dreamdb list, which does show each; sync's keeps naming its JSON."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    for n in range(1, 9):
        write_doc(tiny_vault, f"knowledge/g{n:02d}/notes.md", f"note {n}\n")
    r = CliRunner().invoke(cli, ["embed", "compact", "--vault", str(tiny_vault)])
    assert r.stderr.count(": indexed as knowledge/notes-") == 5, r.stderr
    assert "note: … and 2 more same-named files indexed under a numbered id (dreamdb list shows each note's id and" \
           " file)\n" in r.stderr and "sync --json" not in r.stderr, r.stderr
    r = CliRunner().invoke(cli, ["sync", "--vault", str(tiny_vault), "--json"])
    assert json.loads(r.stdout)["warnings"] == []  # (what the old line sent the user to)
    r = CliRunner().invoke(cli, ["list", "--vault", str(tiny_vault), "--json"])
    assert {d["doc_id"]: d["path"] for d in json.loads(r.stdout)}["knowledge/notes-8"] == "knowledge/g08/notes.md"


def test_the_warning_for_two_names_that_differ_only_in_unicode_form_says_so(tiny_vault):
    """QA round 130-C F5: Grüße.md written in NFC and in NFD were warned of as "knowledge/Grüße.md: indexed as
    knowledge/Grüße-2 (knowledge/Grüße is the file knowledge/Grüße.md, …)", one file listed twice to the eye."""
    import unicodedata

    nfc, nfd = (f"knowledge/{unicodedata.normalize(form, 'Grüße')}.md" for form in ("NFC", "NFD"))
    for path in (nfc, nfd):
        write_doc(tiny_vault, path, "---\nname: g\n---\n\nx\n")
    if len(list((tiny_vault / "knowledge").glob("*.md"))) < 2:
        pytest.skip("this file system stores one form of a name (it normalises Unicode)")
    index = dreamdb.open(tiny_vault)
    first, second = sorted((nfc, nfd))
    (warning,) = [w for w in index.sync().warnings if "indexed as" in w]
    assert warning == (f"{second}: indexed as knowledge/Grüße-2 (knowledge/Grüße is the file {first}, first in path "
                       f"order; this file's name is {'NFC' if second == nfc else 'NFD'}, that one's "
                       f"{'NFC' if first == nfc else 'NFD'}: names that differ only in how their accents are encoded, as"
                       " one character or as a letter and a combining mark: Unicode NFC and NFD)")
    index.close()


def test_the_warning_for_two_names_that_differ_in_a_character_unicode_takes_for_another_says_so(tiny_vault):
    """QA round 148-C F4: Kelvin.md beside a name written with U+212A KELVIN SIGN was warned of as "this file's name is
    mixed NFC and NFD, that one's NFC: names that differ only in how their accents are encoded": no accent differs."""
    for name in ("Kelvin", "\u212aelvin"):
        write_doc(tiny_vault, f"knowledge/{name}.md", "---\ntitle: t\n---\nb\n")
    if len(list((tiny_vault / "knowledge").glob("*.md"))) < 2:
        pytest.skip("this file system stores one form of a name (it normalises Unicode)")
    index = dreamdb.open(tiny_vault)
    (warning,) = [w for w in index.sync().warnings if "indexed as" in w]
    assert warning == ("knowledge/\u212aelvin.md: indexed as knowledge/Kelvin-2 (knowledge/Kelvin is the file"
                       " knowledge/Kelvin.md, first in path order; this file's name is written with U+212A KELVIN SIGN,"
                       " that one's written with U+004B LATIN CAPITAL LETTER K: names that differ only in a character"
                       " Unicode takes for another, which prints alike: U+212A KELVIN SIGN, which Unicode NFC makes"
                       " U+004B LATIN CAPITAL LETTER K)")
    index.close()


def test_same_named_files_are_numbered_alike_whichever_unicode_form_their_folders_names_are_saved_in(tiny_vault):
    """QA round 148-C F2: same-named notes were numbered in the raw code-point order of their paths, so
    ``knowledge/Äpfel/notes.md`` came before ``knowledge/B/notes.md`` with its folder's name composed (NFC, as Linux
    writes it) and after it decomposed (NFD, as macOS writes it): the same visible tree gave swapped ids."""
    import unicodedata

    from dreamdb.store.sync import same_name_ids

    nfc, nfd = (unicodedata.normalize(form, "Äpfel") for form in ("NFC", "NFD"))
    for folder in (nfc, nfd):
        assert same_name_ids([(1, "knowledge", f"knowledge/{folder}/notes.md"), (2, "knowledge", "knowledge/B/notes.md")])[0] \
            == {1: "knowledge/notes-2", 2: "knowledge/notes"}, folder  # (Ä, U+00C4, after B)
    write_doc(tiny_vault, f"knowledge/{nfc}/notes.md", "---\ntitle: apfel\n---\na\n")
    write_doc(tiny_vault, "knowledge/B/notes.md", "---\ntitle: b\n---\nb\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    assert _ids_by_path(index) == {f"knowledge/{nfc}/notes.md": "knowledge/notes-2", "knowledge/B/notes.md": "knowledge/notes"}
    (tiny_vault / "knowledge" / nfc).rename(tiny_vault / "knowledge" / nfd)
    if not (tiny_vault / "knowledge" / nfd / "notes.md").is_file() or nfd not in os.listdir(tiny_vault / "knowledge"):
        index.close()
        pytest.skip("this file system stores one form of a name (it normalises Unicode)")
    index.sync()
    expected = {f"knowledge/{nfd}/notes.md": "knowledge/notes-2", "knowledge/B/notes.md": "knowledge/notes"}
    assert _ids_by_path(index) == expected
    index.sync(force=True)
    assert _ids_by_path(index) == expected
    index.close()


def test_hidden_markdown_files_are_not_documents(tiny_vault):
    """QA round 13: knowledge/.md became the id "knowledge/" that update and delete refused as no slug."""
    write_doc(tiny_vault, "knowledge/.md", "nameless\n")
    write_doc(tiny_vault, "knowledge/._note.md", "macOS leftover\n")
    write_doc(tiny_vault, "knowledge/.draft.md", "a hidden draft\n")
    write_doc(tiny_vault, "knowledge/note.md", "the note\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    assert _docs(index) == {"knowledge/note"}
    index.close()


def test_a_vault_moved_away_under_an_open_index_keeps_the_index(tiny_vault):
    from dreamdb.errors import VaultNotFound

    write_doc(tiny_vault, "knowledge/ferret.md", "---\ntitle: Ferret\n---\nferret notes\n")
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall("ferret")] == ["knowledge/ferret"]
    moved = tiny_vault.parent / "moved"
    tiny_vault.rename(moved)  # the index file (inside the vault) moves with it; the connection stays open
    with pytest.raises(VaultNotFound, match="is gone"):
        index.recall("ferret")
    with pytest.raises(VaultNotFound):
        index.sync()
    moved.rename(tiny_vault)
    assert [h.doc_id for h in index.recall("ferret")] == ["knowledge/ferret"]  # nothing was removed
    assert index.sync().removed == 0

@pytest.mark.parametrize("how", ["moved", "deleted"])
def test_a_vault_gone_is_not_created_again_by_an_index_reopened_after_close(tiny_vault, how):
    """QA round 62 H1: ``close()`` then reuse made the old path's ``.dreamdb`` with its parents: an empty vault,
    into which recall read nothing and ``remember`` wrote the memory the moved vault never got."""
    import shutil

    from dreamdb.errors import VaultNotFound

    write_doc(tiny_vault, "knowledge/ferret.md", "---\ntitle: Ferret\n---\nferret notes\n")
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall("ferret")] == ["knowledge/ferret"]
    moved = tiny_vault.parent / "moved"
    if how == "moved":
        tiny_vault.rename(moved)
    else:
        shutil.rmtree(tiny_vault)
    index.close()
    for call in (lambda: index.recall("ferret"), lambda: index.remember("Chose WAL mode.", type="decision"),
                 lambda: index.update("ferret", append="x"), lambda: index.delete("ferret"),
                 index.status, index.sync, index.list_documents):
        with pytest.raises(VaultNotFound, match="is gone"):  # (writes too, as reads: QA round 68 L3)
            call()
    assert not tiny_vault.exists()  # nothing made at the old path
    if how == "moved":
        assert not (moved / "core" / "CHANGELOG.json").exists()  # the memory is refused, not written anywhere
        moved.rename(tiny_vault)
        assert [h.doc_id for h in index.recall("ferret")] == ["knowledge/ferret"]  # back where it was: works again



def test_an_index_path_elsewhere_in_a_new_folder_named_dreamdb_is_made_with_its_parents(tiny_vault, tmp_path,
                                                                                           monkeypatch):
    """QA round 64 M3: only the vault's own ``.dreamdb`` is made without parents; a ``DREAMDB_INDEX`` in new
    folders of any name (``…/proj/.dreamdb/index.db``) was refused after the round 62 H1 change."""
    write_doc(tiny_vault, "knowledge/ferret.md", "---\ntitle: Ferret\n---\nferret notes\n")
    elsewhere = tmp_path / "idx" / "proj" / ".dreamdb" / "index.db"
    monkeypatch.setenv("DREAMDB_INDEX", str(elsewhere))
    with dreamdb.open(tiny_vault) as index:
        assert [h.doc_id for h in index.recall("ferret")] == ["knowledge/ferret"]
    assert elsewhere.is_file() and not (tiny_vault / ".dreamdb" / "index.db").exists()


def test_list_documents_syncs_first_like_recall(tiny_vault):
    write_doc(tiny_vault, "knowledge/otter.md", "---\ntitle: Otter\n---\notter notes\n")
    index = dreamdb.open(tiny_vault)
    assert [d["doc_id"] for d in index.list_documents()] == ["knowledge/otter"]  # a fresh index: synced
    write_doc(tiny_vault, "knowledge/stoat.md", "---\ntitle: Stoat\n---\nstoat notes\n")
    assert [d["doc_id"] for d in index.list_documents()] == ["knowledge/otter", "knowledge/stoat"]
    index.auto_sync = False
    (tiny_vault / "knowledge" / "otter.md").unlink()
    assert len(index.list_documents()) == 2  # auto_sync off: the index as it is


def test_yaml_booleans_index_as_written_and_bad_changelog_dates_warn(tiny_vault):
    write_doc(tiny_vault, "knowledge/flags.md", "---\ntitle: Flags\ntags: [true, beta]\n---\nfeature flags\n")
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-02-30", "type": "fix", "scope": "sync", "summary": "leap day that is not"},
        {"date": "2026-03-01", "type": "fix", "scope": "sync", "summary": "a real day"}]))
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    tags = {d["doc_id"]: d for d in index.list_documents()}
    row = index.conn.execute("SELECT tags FROM documents WHERE doc_id = 'knowledge/flags'").fetchone()[0]
    assert json.loads(row) == ["true", "beta"]  # not "True": the file says true
    assert [w for w in report.warnings if "CHANGELOG.json: 1 entry has a date that is not a date" in w and "2026-02-30" in w]
    dated = sorted((d["doc_id"], d["date"]) for d in tags.values() if d["type"] == "changelog")
    assert [d for _, d in dated].count(None) == 1 and "2026-03-01" in [d for _, d in dated]
    # QA round 69 M5: an entry whose text is only in keys dreamdb does not read ("text", "id") was dropped silently
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"id": "DEC-0001", "type": "decision", "date": "2026-07-15", "text": "Switched from sessions to JWT."},
        {"date": "2026-03-01", "type": "fix", "summary": "a real day", "text": "read from the summary: no warning"}]))
    assert [w for w in index.sync().warnings if w.startswith(
        "core/CHANGELOG.json: 1 entry has no summary or description, only fields dreamdb does not read (e.g. 'id',"
        " 'text'): an entry's text is its summary and description")]


def test_a_list_or_mapping_is_no_pinned_flag_and_a_lone_boolean_tag_reads_as_written(tiny_vault):
    """QA round 70 B-L1: ``pinned: [false]`` and ``pinned: {x: 1}`` made a note pinned (level 3, refused by delete);
    ``tags: true`` was the tag ``True`` where ``tags: [true]`` is ``true``."""
    write_doc(tiny_vault, "knowledge/odd-flags.md", "---\ntitle: Odd\npinned: [false]\ntags: true\n---\nocelot\n")
    write_doc(tiny_vault, "knowledge/map-flag.md", "---\ntitle: Map\npinned: {x: 1}\n---\nocelot\n")
    write_doc(tiny_vault, "knowledge/real-flag.md", "---\ntitle: Real\npinned: 'yes'\n---\nocelot\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    rows = {r[0]: r[1:] for r in index.conn.execute(
        "SELECT doc_id, level, tags FROM documents WHERE doc_id IN ('knowledge/odd-flags', 'knowledge/map-flag', "
        "'knowledge/real-flag')")}
    assert rows == {"knowledge/odd-flags": (2, '["true"]'), "knowledge/map-flag": (2, "[]"),
                    "knowledge/real-flag": (3, "[]")}


def test_odd_but_readable_notes_and_entries_keep_their_fields(tiny_vault):
    """QA round 90-C: a note with classic Mac line ends (CR alone) lost its frontmatter into its body, silently (F5);
    #hashtag tags, YAML comments, were no tags without a word (F6); a changelog entry's one author or reference
    written without a list was dropped (F8)."""
    (tiny_vault / "knowledge").mkdir(parents=True, exist_ok=True)
    (tiny_vault / "knowledge" / "cr.md").write_bytes(b"---\rname: Classic Mac note\rtags: [apple]\r---\rbody here\r")
    # (LF lines added to such a file since: QA round 91 F5)
    (tiny_vault / "knowledge" / "mixed.md").write_bytes(b"---\rname: Mixed note\rdescription: keep me\r---\rbody\r"
                                                        b"line two\nline three\n")
    write_doc(tiny_vault, "knowledge/hashed.md", "---\nname: Hashed\ntags: #alpha, #beta\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/listed.md", "---\nname: Listed\ntags:\n  - one\n  - #two\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/fine.md", "---\nname: Fine\ntags: [a]\n---\nbody # not a tag\n")
    # (a comment proper is no hashtag; a flow list of hashtags is no YAML: QA round 91 F6)
    write_doc(tiny_vault, "knowledge/commented.md", "---\nname: Commented\ntags: # none yet\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/flow.md", "---\nname: Flow\ntags: [#alpha, #beta]\n---\nbody\n")
    # (one hashtag after a tag, ## hashtags, a flow list over several lines: QA round 92 F5)
    write_doc(tiny_vault, "knowledge/mixed-tags.md", "---\nname: Mixed tags\ntags: alpha, #beta\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/double.md", "---\nname: Double\ntags:\n- ##gamma\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/lines.md", "---\nname: Lines\ntags: [\n  #delta,\n  epsilon\n]\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/quoted.md", "---\nname: Quoted\ntags: ['#zeta', c#]\n---\nbody\n")
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-01-02", "type": "fix", "scope": "db", "summary": "Pooled connections",
         "authors": "kestrelauthor", "references": "file:src/ospreypool.py"},
        {"date": "2026-01-01", "type": "fix", "scope": "db", "summary": "Other", "authors": {"name": "x"}}]))
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    rows = {r[0]: r[1:] for r in index.conn.execute("SELECT doc_id, title, tags, body FROM documents")}
    assert rows["knowledge/cr"] == ("Classic Mac note", '["apple"]', "body here")
    assert rows["knowledge/mixed"] == ("Mixed note", "[]", "body\nline two\nline three")
    said = [w for w in warnings if "#hashtags are YAML comments" in w]
    assert sorted(w.split(":", 1)[0] for w in said) == ["knowledge/double.md", "knowledge/hashed.md",
                                                        "knowledge/lines.md", "knowledge/listed.md",
                                                        "knowledge/mixed-tags.md"], warnings
    assert [w for w in said if w.startswith("knowledge/mixed-tags.md") and "(#beta)" in w], said
    assert [w for w in said if w.startswith("knowledge/lines.md") and "(#delta)" in w], said
    assert (rows["knowledge/mixed-tags"][1], rows["knowledge/lines"][1], rows["knowledge/quoted"][1]) == (
        '["alpha"]', '["epsilon"]', '["zeta", "c#"]')
    assert not [w for w in warnings if w.startswith("knowledge/commented.md")], warnings
    assert [w for w in warnings if w.startswith("knowledge/flow.md: frontmatter is not valid YAML") and
            w.endswith("; tags written as #hashtags must be quoted ('#alpha') or written without the #")], warnings
    assert rows["knowledge/listed"][1] == '["one"]'
    entry = rows["changelog/2026-01-02-db-1"]
    assert "kestrelauthor" in json.loads(entry[1]) and "file:src/ospreypool.py" in entry[2]
    assert [h.doc_id for h in index.recall("kestrelauthor")] == ["changelog/2026-01-02-db-1"]
    assert [h.doc_id for h in index.recall("ospreypool")] == ["changelog/2026-01-02-db-1"]
    # (an author written as a JSON object: its values read, and a warning; QA round 91 F7)
    assert json.loads(rows["changelog/2026-01-01-db-1"][1]) == ["fix", "db", "x"]
    assert [w for w in warnings if w == "core/CHANGELOG.json: 1 references or authors field is a JSON object, not a"
            " list: each of its values was read as one item"], warnings


def test_quoted_hashtags_are_tags_and_not_said_to_be_yaml_comments(tiny_vault):
    """QA round 150-A F5: ``tags: "#alpha #beta"`` (quoted) was the one tag ``alpha #beta``, with the warning that
    "#hashtags are YAML comments … quote them", though they were quoted. Hashtags separated by spaces, and nothing
    else, are those tags (in comma text and in a list item); a # inside quotes is never said to be a comment; an
    unquoted one still is."""
    docs = {"spaced": 'tags: "#alpha #beta"', "commas": "tags: '#alpha, #beta'", "listed": 'tags: ["#gamma #delta", c]',
            "words": 'tags: "x #alpha"', "phrase": "tags: '#machine learning'", "item": 'tags:\n  - "#a #b"\n  - #c',
            "plain": "tags: alpha, #beta"}
    for name, tags in docs.items():
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\ntitle: {name}\n{tags}\n---\nbody\n")
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    rows = {r[0]: json.loads(r[1]) for r in index.conn.execute("SELECT doc_id, tags FROM documents")}
    assert [rows[f"knowledge/{name}"] for name in docs] == [
        ["alpha", "beta"], ["alpha", "beta"], ["gamma", "delta", "c"], ["x #alpha"], ["machine learning"], ["a", "b"],
        ["alpha"]]
    said = sorted(w for w in warnings if "#hashtags" in w)
    assert said == [
        "knowledge/item.md: frontmatter tags written as #hashtags are YAML comments, so they are not tags (#c);"
        " quote them ('#alpha') or drop the #",
        "knowledge/plain.md: frontmatter tags written as #hashtags are YAML comments, so they are not tags (#beta);"
        " quote them ('#alpha') or drop the #"], warnings


def test_frontmatter_tags_that_name_no_tag_are_left_out_with_a_warning(tiny_vault):
    """QA round 126-A F10: ``tags: ['#', 'topic:', ok]`` indexed the tag ok and dropped the other two without a word,
    where a write and a ``--tags`` filter refuse such a tag."""
    write_doc(tiny_vault, "knowledge/odd.md", "---\ntitle: Odd\ntags: ['#', ' topic: ', ok, '', '#a:']\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/one.md", "---\ntitle: One\ntags: 'ops, #'\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/fine.md", "---\ntitle: Fine\ntags: ['#ok', 'topic:ok2']\n---\nbody\n")
    index = dreamdb.open(tiny_vault)
    warnings = [w for w in index.sync().warnings if "no tag" in w]
    assert warnings == [
        "knowledge/odd.md: frontmatter tags '#', 'topic:', '#a:' name no tag (a leading # and a facet prefix up to"
        " the last ':' are not part of a tag ('#topic:recall' is the tag recall)); ignored",
        "knowledge/one.md: frontmatter tag '#' names no tag (a leading # and a facet prefix up to the last ':' are not"
        " part of a tag ('#topic:recall' is the tag recall)); ignored"]
    rows = dict(index.conn.execute("SELECT doc_id, tags FROM documents"))
    assert (rows["knowledge/odd"], rows["knowledge/one"], rows["knowledge/fine"]) == ('["ok"]', '["ops"]', '["ok", "ok2"]')


def test_many_tags_or_authors_are_read_each_compared_with_no_other(monkeypatch):
    """QA round 149-F F2: tags: as a comma string of many tags made parsing quadratic (64,000 tags: 25.7 s), and a
    changelog entry's many authors alike: normalize_tags kept a tag unless the list of those kept held it already, and
    each #hashtag the YAML comments hold was looked for in the list of tags. A set beside the list holds them; the
    tags, their order and the warnings are as before."""
    import json

    from dreamdb.vault import parse

    compared = []

    class Tag(str):  # (a tag that counts its comparisons: a list's `in` makes one with each item, a set's almost none)
        __hash__ = str.__hash__

        def __eq__(self, other):
            compared.append(1)
            return str.__eq__(self, other)

    clean_tag = parse.clean_tag
    monkeypatch.setattr(parse, "clean_tag", lambda text: Tag(clean_tag(text)))
    many = 2000
    head = f"---\ntitle: t\ntags: {', '.join(f'tag{i % (many // 2)}' for i in range(many))}"
    text = head + ", " + ", ".join(f"#lost{i}" for i in range(200)) + "\n---\nsleep\n"
    [doc], warnings = parse.parse_markdown("knowledge/big.md", "knowledge", text)
    assert doc.tags == [f"tag{i}" for i in range(many // 2)]  # (each once, in the order written)
    assert warnings == ["knowledge/big.md: frontmatter tags written as #hashtags are YAML comments, so they are not"
                        " tags (#lost0, #lost1, #lost2, #lost3, #lost4 …); quote them ('#alpha') or drop the #"]
    assert len(compared) <= 2 * many, len(compared)  # (each repeated tag once; before: 1,201,000, 200,000 of them the #hashtags)
    compared.clear()
    entry = {"date": "2026-08-01", "type": "feat", "summary": "s", "authors": [f"a{i % 1000}" for i in range(many)]}
    [doc], warnings = parse.parse_changelog("core/CHANGELOG.json", json.dumps([entry]))
    assert doc.tags == ["feat", *(f"a{i}" for i in range(1000))] and len(compared) <= 2 * many, len(compared)


def test_tags_written_as_a_mapping_or_a_set_are_its_keys(tiny_vault):
    """QA round 99-B F5: tags written as a YAML mapping were read by their values, so ``{backend: 1}`` was the
    tag ``1``, silently; a YAML set (``!!set``) became the text of a Python set. A mapping's keys are the tags
    (a set is a mapping with null values; a flag set false is left out), and values that are no flags are warned of."""
    write_doc(tiny_vault, "knowledge/mapped.md", "---\nname: Mapped\ntags: {backend: 1, api: x}\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/flags.md", "---\nname: Flags\ntags: {alpha: true, beta: false, gone: 0}\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/yset.md", "---\nname: Set\ntags: !!set {zulu, echo}\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/keys.md", "---\nname: Keys\ntags:\n  ? gamma\n  ? delta\n---\nbody\n")
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    rows = dict(index.conn.execute("SELECT doc_id, tags FROM documents WHERE type = 'knowledge'"))
    assert {k: json.loads(v) for k, v in rows.items() if k in {"knowledge/mapped", "knowledge/flags",
                                                               "knowledge/yset", "knowledge/keys"}} == {
        "knowledge/mapped": ["backend", "api"], "knowledge/flags": ["alpha"], "knowledge/yset": ["echo", "zulu"],
        "knowledge/keys": ["gamma", "delta"]}
    said = [w for w in warnings if "tags is a mapping" in w]
    assert [w.split(":", 1)[0] for w in said] == ["knowledge/mapped.md"], warnings
    assert "(backend, api)" in said[0] and "tags: [a, b]" in said[0]
    assert [h.doc_id for h in index.recall("backend", tags=["backend"])] == ["knowledge/mapped"]


def test_hand_written_tags_are_the_text_written_not_yaml_numbers_or_booleans(tiny_vault):
    """QA round 135-A F5: ``tags: [python, 3.10, no, off, 0x1F]`` was indexed as the tags python, 3.1, false and 31
    (YAML 1.1 numbers and booleans), so ``--tags 3.10`` and ``--tags no`` found nothing and ``--tags 3.1`` the note.
    A plain tag is its text in a flow list, a block list and alone; an explicit type (``!!int``), a null, the flags
    of a tags mapping and every other key are read as YAML reads them. A list item that is a mapping (``- name: rust``
    over ``level: 3``, the tag ``rust 3``) is warned of, as a tags mapping is; a facet written with a space
    (``- topic: 3.10``) is not."""
    from dreamdb.vault.frontmatter import split_frontmatter

    write_doc(tiny_vault, "knowledge/flow.md", "---\ntitle: Flow\ntags: [python, 3.10, no, off, 0x1F, 1_000, True]\n"
                                               "version: 3.10\ndraft: no\npriority: 0x1F\n---\nupgrade notes\n")
    write_doc(tiny_vault, "knowledge/block.md", "---\ntitle: Block\ntags:\n  - 3.10\n  - yes\n  - 2026-01-01\n"
                                                "  - topic: 3.10\n  - !!int 0x10\n  - ~\n---\nupgrade notes\n")
    write_doc(tiny_vault, "knowledge/alone.md", "---\ntitle: Alone\ntags: 3.10\n---\nupgrade notes\n")
    write_doc(tiny_vault, "knowledge/flags.md", "---\ntitle: Flags\ntags: {3.10: yes, off: false, 0x1F: 0}\n---\n"
                                                "upgrade notes\n")
    write_doc(tiny_vault, "knowledge/nested.md", "---\ntitle: Nested\ntags:\n  - rust\n  - name: go\n    level: 1.50\n"
                                                 "---\nupgrade notes\n")
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    rows = {k: json.loads(v) for k, v in index.conn.execute("SELECT doc_id, tags FROM documents WHERE type = 'knowledge'")}
    assert (rows["knowledge/flow"], rows["knowledge/block"], rows["knowledge/alone"], rows["knowledge/flags"],
            rows["knowledge/nested"]) == (
        ["python", "3.10", "no", "off", "0x1F", "1_000", "True"], ["3.10", "yes", "2026-01-01", "16"], ["3.10"],
        ["3.10"], ["rust", "go 1.50"])
    meta = split_frontmatter((tiny_vault / "knowledge" / "flow.md").read_text())[0]
    assert (meta["version"], meta["draft"], meta["priority"]) == (3.1, False, 31)  # (other keys: YAML as before)
    for tag, found in (("3.10", ["knowledge/alone", "knowledge/block", "knowledge/flags", "knowledge/flow"]),
                       ("no", ["knowledge/flow"]), ("0x1f", ["knowledge/flow"]), ("3.1", []), ("false", [])):
        assert sorted(h.doc_id for h in index.recall("upgrade", tags=[tag])) == found, tag
    said = [w for w in warnings if "tags list holds" in w]
    assert said == ["knowledge/nested.md: frontmatter tags list holds a mapping ({name: go, level: 1.50} → 'go 1.50');"
                    " the values of each are read as one tag; write each tag as a word (tags: [a, b])"], warnings
    index.close()


def test_changelog_entries_whose_ids_move_are_said(tiny_vault):
    """QA round 90-C F3: the ids of one date and scope count from the file's oldest end; a file of one date cannot
    tell which end that is, and once a newer entry came first (the reference's newest-first convention) its entries
    swapped ids without a word, a supersedes written with the old id then naming another entry. The sync says so."""
    entries = [{"date": "2026-01-01", "type": "decision", "scope": "db", "summary": "Chose Redis"},
               {"date": "2026-01-01", "type": "decision", "scope": "db", "summary": "Chose Postgres"}]
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps(entries))
    index = dreamdb.open(tiny_vault)
    assert index.sync().warnings == []
    ids = dict(index.conn.execute("SELECT title, doc_id FROM documents"))
    assert ids["2026-01-01 [decision] db — Chose Postgres"] == "changelog/2026-01-01-db-2"
    newer = {"date": "2026-01-02", "type": "decision", "scope": "db", "summary": "Switch", "supersedes": "2026-01-01-db-2"}
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([newer, *entries]))
    warnings = index.sync().warnings
    assert warnings == ["core/CHANGELOG.json: 2 unchanged entries got another id (2026-01-01-db-1 → 2026-01-01-db-2,"
                        " 2026-01-01-db-2 → 2026-01-01-db-1): the ids of one date and scope count from the file's oldest"
                        " end, which it now reads at the other end; a supersedes written with an old id may name another"
                        " entry now"], warnings
    # an entry added at the newest end moves no id: nothing said
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([{**newer, "summary": "More", "supersedes": ""}, newer,
                                                             *entries]))
    assert index.sync().warnings == []


def test_a_changelog_id_made_of_an_odd_date_is_a_slug(tiny_vault):
    """An entry dated other than YYYY-MM-DD had the first 10 characters of its date in its id as written:
    ``changelog/2026/08/01-fix-1`` (a path), ``changelog/Aug 1, 202-fix-1``."""
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026/08/01", "type": "fix", "scope": "a/b", "summary": "slashed date"},
        {"date": "Aug 1, 2026", "type": "fix", "summary": "date in words"},
        {"date": "2026-08-01T10:00:00Z", "type": "fix", "summary": "instant"},
        {"date": "!!", "type": "fix", "summary": "no date at all"}]))
    index = dreamdb.open(tiny_vault)
    index.sync()
    ids = sorted(d["doc_id"] for d in index.list_documents() if d["type"] == "changelog")
    assert ids == ["changelog/2026-08-01-a-b-1", "changelog/2026-08-01-fix-1", "changelog/aug-1-2026-fix-1",
                   "changelog/undated-fix-1"]
    assert [h.doc_id for h in index.recall("words")] == ["changelog/aug-1-2026-fix-1"]


def test_a_changelog_id_keeps_the_day_as_written_while_its_date_is_utc(tiny_vault):
    """QA round 145-E F4 (documented, docs/json.md, docs/vault.md, README): an entry written with an offset keeps
    the day as written in its id, while its ``date`` is the UTC instant, a day later here; the id never changes
    with the way a time is read."""
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-08-18T23:30:00-05:00", "type": "fix", "scope": "otter", "summary": "otter late evening"}]))
    index = dreamdb.open(tiny_vault)
    hits = index.recall("otter", now="2026-08-20T00:00:00Z")
    assert [(h.doc_id, h.date) for h in hits] == [("changelog/2026-08-18-otter-1", "2026-08-19T04:30:00Z")]


def test_a_changelog_id_has_the_day_as_written_in_every_form_of_a_date(tiny_vault):
    """QA round 146-A F3: only a date written ``YYYY-MM-DD…`` had its time dropped from the id; ``20260818T120000Z``,
    ``2026-230T12:00Z`` and ``2026-W34-2T12:00Z`` kept it (``changelog/20260818t120000z-s-1``), each entry a series
    of its own. Every form is its day as written (before its offset is applied), ``YYYY-MM-DD``, numbered with the
    other entries of that day and scope from the oldest end; a value that is no date stays as it was."""
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-08-18", "type": "fix", "scope": "s", "summary": "okapi day"},
        {"date": "2026-08-18T12:00:00Z", "type": "fix", "scope": "s", "summary": "okapi extended"},
        {"date": "20260818T120000Z", "type": "fix", "scope": "s", "summary": "okapi basic"},
        {"date": "2026-230T12:00Z", "type": "fix", "scope": "s", "summary": "okapi ordinal"},
        {"date": "2026-W34-2T12:00Z", "type": "fix", "scope": "s", "summary": "okapi week"},
        {"date": "20260818T230000-05:00", "type": "fix", "scope": "s", "summary": "okapi offset"},
        {"date": "20260818", "type": "fix", "scope": "s", "summary": "okapi compact day"},
        {"date": "20261345T1200", "type": "fix", "scope": "s", "summary": "okapi no date"}]))
    index = dreamdb.open(tiny_vault)
    index.sync()
    ids = {d["doc_id"] for d in index.list_documents() if d["type"] == "changelog"}
    assert ids == {f"changelog/2026-08-18-s-{n}" for n in range(1, 8)} | {"changelog/20261345t1200-s-1"}
    by_text = {h.doc_id: h for h in index.recall("okapi offset", top=1, now="2026-08-20T00:00:00Z")}
    assert list(by_text) == ["changelog/2026-08-18-s-6"]
    assert by_text["changelog/2026-08-18-s-6"].date == "2026-08-19T04:00:00Z"  # (its date in UTC, the id as written)


def test_frontmatter_and_changelog_dates_take_the_forms_now_takes(tiny_vault):
    """QA round 145-E F5: ``date: 20260818T120000Z``, ``2026-230T12:00Z``, ``2026-W34-2T12:00Z`` were warned of as
    no date and ignored, while --now and --since took them; a changelog date alike."""
    for name, when in (("basic", "20260818T120000Z"), ("ordinal", "2026-230T12:00Z"), ("week", "2026-W34-2T12:00Z"),
                       ("lower", "2026-w34-2t12:00z")):
        write_doc(tiny_vault, f"knowledge/{name}.md", f"---\nname: Okapi {name}\ndate: {when}\n---\nokapi\n")
    write_doc(tiny_vault, "knowledge/badtime.md", "---\nname: Okapi bad\ndate: 2026230T25\n---\nokapi\n")
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-W34-2T12:00Z", "type": "fix", "scope": "okapi", "summary": "okapi entry"}]))
    index = dreamdb.open(tiny_vault)
    warnings = "\n".join(index.sync().warnings)
    assert "okapi" not in warnings.lower().replace("badtime.md", "")
    assert "badtime.md: frontmatter date '2026230T25' is a date followed by no valid time of day" in warnings
    hits = index.recall("okapi", top=10, now="2026-08-20T00:00:00Z")
    assert sorted((h.doc_id, h.date) for h in hits) == [
        ("changelog/2026-08-18-okapi-1", "2026-08-18T12:00:00Z"),
        ("knowledge/badtime", "2026-08-18"),
        ("knowledge/basic", "2026-08-18T12:00:00Z"), ("knowledge/lower", "2026-08-18T12:00:00Z"),
        ("knowledge/ordinal", "2026-08-18T12:00:00Z"), ("knowledge/week", "2026-08-18T12:00:00Z")]
    assert {h.doc_id for h in index.recall("okapi", top=10, now="2026-08-20T00:00:00Z",
                                           since="2026-08-18T11:00Z")} == {h.doc_id for h in hits} - {"knowledge/badtime"}


def test_values_python_cannot_hold_never_stop_a_sync(tiny_vault):
    """QA round 70 B-H1–H3: each made every command exit 70. An integer of 4,301 digits in frontmatter (Python
    refuses to read it), a time whose offset puts it past year 9999 in UTC (a way to write "never expires"), and
    half of a UTF-16 surrogate pair escaped in CHANGELOG.json (SQLite cannot store it)."""
    write_doc(tiny_vault, "knowledge/big.md", "---\ntitle: Big number\npriority: " + "9" * 4301 + "\n---\nocelot\n")
    write_doc(tiny_vault, "knowledge/never.md",
              "---\ntitle: Never\nexpires: 9999-12-31T23:00:00-05:00\ndate: 0001-01-01T00:30:00+01:00\n---\nocelot\n")
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "9999-12-31T23:00:00-05:00", "type": "note", "summary": "ocelot far ahead"},
        {"date": "2026-01-01", "type": "note", "summary": "ocelot cut \ud83d"},
        {"date": "2026-01-02", "type": "note", "summary": "ocelot whole \ud83d\ude00"}]))
    assert "\\ud83d\\ude00" in (tiny_vault / "core" / "CHANGELOG.json").read_text()  # (json.dumps escapes both halves)
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    rows = dict(((r[0]), r[1:]) for r in index.conn.execute("SELECT doc_id, date, expires, title FROM documents"))
    assert rows["knowledge/never"][:2] == ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z")  # clamped
    assert "knowledge/big" in rows
    assert rows["changelog/2026-01-01-note-1"][2] == "2026-01-01 [note] — ocelot cut \ufffd"
    assert rows["changelog/2026-01-02-note-1"][2] == "2026-01-02 [note] — ocelot whole \U0001f600"
    assert [w for w in report.warnings if w.startswith("core/CHANGELOG.json: 1 text holds half of a UTF-16 surrogate")]
    hits = {h.doc_id for h in index.recall("ocelot", top=10, include_expired=True, now="2026-08-18")}
    assert {"knowledge/big", "knowledge/never", "changelog/9999-12-31-note-1", "changelog/2026-01-01-note-1"} <= hits
    assert index.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_repeated_keys_nan_and_binary_values_are_read_and_warned_of(tiny_vault):
    """QA round 71: a CHANGELOG entry writing "summary" twice (a merge that kept both sides) lost one value without a
    word, NaN (not JSON) passed silently, and a YAML ``!!binary`` title was indexed as ``b'ocelot'``."""
    write_doc(tiny_vault, "core/CHANGELOG.json",
        '[{"date": "2026-01-01", "type": "fix", "summary": "ocelot first", "summary": "ocelot kept", "n": NaN},\n'
        ' {"date": "2026-01-02", "type": "fix", "summary": "ocelot plain"}]\n')
    write_doc(tiny_vault, "knowledge/bin.md", "---\ntitle: !!binary b2NlbG90IG5vdGU=\ntags: [!!binary /w==]\n---\nbody\n")
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    titles = dict(index.conn.execute("SELECT doc_id, title FROM documents"))
    assert titles["changelog/2026-01-01-fix-1"] == "2026-01-01 [fix] — ocelot kept"
    assert titles["knowledge/bin"] == "ocelot note"  # base64 of UTF-8 text: the text
    assert index.conn.execute("SELECT COUNT(*) FROM document_tags JOIN documents ON documents.id = document_tags.doc "
                              "WHERE doc_id = 'knowledge/bin'").fetchone()[0] == 0  # bytes that are no text: no tag
    assert [w for w in report.warnings if w == "core/CHANGELOG.json: 1 key is written twice in one entry "
            "(e.g. 'summary'); only the last value of each is indexed"]
    assert [w for w in report.warnings if w.startswith("core/CHANGELOG.json: holds NaN (1 such value), which is not JSON")]
    assert [h.doc_id for h in index.recall("ocelot note")][:1] == ["knowledge/bin"]


def _rows_by_doc_id(index) -> dict[str, tuple]:
    """Every ``documents`` column but the row id, by doc_id, with the document's tags and postings."""
    cols = [r[1] for r in index.conn.execute("PRAGMA table_info(documents)") if r[1] != "id"]
    out = {}
    for row in index.conn.execute(f"SELECT id, {', '.join(cols)} FROM documents"):
        rowid, values = row[0], row[1:]
        tags = sorted(t for (t,) in index.conn.execute("SELECT tag FROM document_tags WHERE doc = ?", (rowid,)))
        postings = sorted(index.conn.execute(
            "SELECT term, tf_title, tf_description, tf_tags, tf_body, tf_slug FROM postings WHERE doc = ?", (rowid,)))
        out[values[0]] = (values, tags, postings)
    return out


@needs_real_vault
def test_a_changed_file_re_indexes_only_its_changed_documents_and_equals_a_rebuild(fresh_synced_vault, tmp_path):
    """One entry added to the real CHANGELOG.json (622 entries) used to delete and re-insert all of them
    (1.3 s of sync after every `dreamdb remember`). Now unchanged documents keep their rows; the index
    must still equal one built from scratch: edited, added, removed and moved entries and memory sections."""
    index = dreamdb.open(fresh_synced_vault)
    assert _current(index.sync())  # the copied index is current
    before = dict(index.conn.execute("SELECT doc_id, id FROM documents WHERE type IN ('changelog', 'memory')"))
    log = fresh_synced_vault / "core" / "CHANGELOG.json"
    entries = json.loads(log.read_text(encoding="utf-8"))
    assert len(entries) == 622
    newest_first = entries[0]["date"] > entries[-1]["date"]
    added = {"date": "2026-08-19", "type": "decision", "scope": "recall", "summary": "Narwhal entry",
             "description": "A narwhal decision.", "supersedes": f"{entries[5]['date']}|{entries[5].get('scope') or entries[5]['type']}"}
    entries.insert(0 if newest_first else len(entries), added)  # every old entry moves in file order one way
    entries[10] = dict(entries[10], description="Edited: narwhal tusk.")                 # text changed
    entries[20] = dict(entries[20], date="2025-01-01T00:00:00Z")                          # metadata changed
    del entries[30]                                                                      # removed
    log.write_text(json.dumps(entries, indent=2), encoding="utf-8")
    memory = fresh_synced_vault / "core" / "2.memory.md"
    text = memory.read_text(encoding="utf-8")
    heads = [i for i, line in enumerate(text.split("\n")) if line.startswith("## ")]
    lines = text.split("\n")
    first, second = lines[heads[0]:heads[1]], lines[heads[1]:heads[2]]
    lines[heads[0]:heads[2]] = second + first + ["", "## Narwhal section", "narwhal body", ""]  # swapped, one added
    memory.write_text("\n".join(lines), encoding="utf-8")
    r = index.sync()
    assert (r.changed, r.added, r.removed) == (2, 0, 0)
    after = dict(index.conn.execute("SELECT doc_id, id FROM documents WHERE type IN ('changelog', 'memory')"))
    kept = [d for d in after if before.get(d) == after[d]]
    assert len(kept) >= len(before) - 8  # unchanged entries and sections kept their rows
    rebuilt = dreamdb.open(fresh_synced_vault, index_path=tmp_path / "rebuilt.db")
    rebuilt.sync()
    assert _rows_by_doc_id(index) == _rows_by_doc_id(rebuilt)
    assert _integrity(index) == "ok"
    assert index.recall("narwhal", top=3)[0].doc_id in {d for d in after if d not in before}


def test_changelog_supersedes_resolve_by_id_and_by_date_and_scope_never_to_the_entry_itself(tiny_vault):
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-01-01", "type": "fix", "scope": "x", "description": "alpha", "supersedes": "2026-01-01|x"},
        {"date": "2026-01-01", "type": "fix", "scope": "x", "description": "beta", "supersedes": "2026-01-01|x"},
        {"date": "2026-01-02", "type": "note", "description": "gamma", "supersedes": "changelog:2026-01-01-x-1"},
        {"date": "2026-01-03", "type": "note", "description": "delta", "supersedes": " 2020-01-01 | zzz "},
        {"date": "2026-01-04", "type": "note", "description": "epsilon", "supersedes": "2026-01-02|note"},
    ]))
    index = dreamdb.open(tiny_vault)
    index.sync()
    got = dict(index.conn.execute("SELECT doc_id, supersedes FROM documents WHERE type = 'changelog'"))
    assert got == {
        "changelog/2026-01-01-x-1": "changelog/2026-01-01-x-2",   # the first entry of that date and scope but itself
        "changelog/2026-01-01-x-2": "changelog/2026-01-01-x-1",
        "changelog/2026-01-02-note-1": "changelog/2026-01-01-x-1",
        "changelog/2026-01-03-note-1": "changelog/2020-01-01 | zzz",  # unresolvable: kept as written
        "changelog/2026-01-04-note-1": "changelog/2026-01-02-note-1",
    }


def test_a_pipe_named_like_a_vault_file_is_skipped_with_a_warning(tiny_vault):
    """QA round 19: a FIFO CHANGELOG.json or 2.memory.md was skipped without a word."""
    for rel in ("core/CHANGELOG.json", "core/2.memory.md", "knowledge/pipe.md"):
        (tiny_vault / rel).parent.mkdir(parents=True, exist_ok=True)
        if (tiny_vault / rel).exists():
            (tiny_vault / rel).unlink()
        os.mkfifo(tiny_vault / rel)
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    for rel in ("core/CHANGELOG.json", "core/2.memory.md", "knowledge/pipe.md"):
        assert f"{rel}: skipped (not a regular file: a pipe, device or socket)" in warnings
    assert _integrity(index) == "ok"


def test_a_note_swapped_for_a_pipe_after_the_folder_was_listed_is_skipped_not_waited_on(tiny_vault, monkeypatch):
    """QA round 59 M1: a note replaced by a FIFO between discovery's look and the read made sync block for good in
    ``read_bytes``, inside its write transaction (other syncs gave up; the prompt hook hung). The type is now
    checked on the file opened, which a FIFO with no writer opens at once."""
    import threading

    from dreamdb.store import sync as sync_module

    write_doc(tiny_vault, "knowledge/real.md", "---\ntitle: Real\n---\nreal body quux\n")
    write_doc(tiny_vault, "knowledge/swap.md", "---\ntitle: Swap\n---\nswap body\n")
    listed = sync_module.walk_sources

    def list_then_swap(*args, **kwargs):
        sources = listed(*args, **kwargs)
        (tiny_vault / "knowledge/swap.md").unlink()
        os.mkfifo(tiny_vault / "knowledge/swap.md")  # after the look, before the read
        return sources

    monkeypatch.setattr(sync_module, "walk_sources", list_then_swap)
    index = dreamdb.open(tiny_vault)
    out: dict = {}
    worker = threading.Thread(target=lambda: out.update(report=index.sync()), daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "sync blocked on the pipe"
    assert any(w.startswith("knowledge/swap.md: cannot read (not a regular file any more") for w in out["report"].warnings)
    assert [h.doc_id for h in index.recall("quux")] == ["knowledge/real"] and not index.recall("swap")
    assert _integrity(index) == "ok"
    index.close()


def test_a_note_opening_with_a_horizontal_rule_is_indexed_whole(tiny_vault):
    """QA round 19: '---' rules around a heading and a paragraph read as frontmatter that was no mapping;
    only the text after the second rule was indexed."""
    write_doc(tiny_vault, "knowledge/rules.md", "---\n# Heading\nwalrus body\n\n---\nmore text\n")
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    assert ("knowledge/rules.md: the lines between the first two '---' lines are no YAML mapping (a text), so no "
            "frontmatter; indexed the whole file as text") in warnings
    assert [h.doc_id for h in index.recall("walrus")] == ["knowledge/rules"]
    body = index.conn.execute("SELECT body FROM documents WHERE doc_id = 'knowledge/rules'").fetchone()[0]
    assert body == "---\n# Heading\nwalrus body\n\n---\nmore text"  # stripped, as every body


def test_every_documents_column_is_compared_or_derived_when_a_row_is_kept(tiny_vault):
    """A kept row must equal a re-inserted one: a column added to ``documents`` must join the compared key
    (:data:`dreamdb.store.sync._KEY_COLUMNS`) or be derived from it, or this test fails."""
    from dreamdb.store.sync import _KEY_COLUMNS

    index = dreamdb.open(tiny_vault)
    columns = {r[1] for r in index.conn.execute("PRAGMA table_info(documents)")}
    compared = {c.strip() for c in _KEY_COLUMNS.split(",")}
    derived = {"id", "slug", "ordinal", "turkish", "len_title", "len_description", "len_tags", "len_body"}
    assert columns == compared | derived and not compared & derived


def test_random_edits_of_multi_document_files_keep_the_index_equal_to_a_rebuild(tiny_vault, tmp_path):
    """Kept rows must never differ from re-inserted ones: 40 random edits of a CHANGELOG.json and a memory file
    (add, drop, edit, move, duplicate entries and sections; dates, supersedes, tags), each synced into one
    index and compared with an index built from scratch."""
    import random

    rng = random.Random(20261201)
    words = ["walrus", "narwhal", "okapi", "sleep", "index", "vault", "recall", "yedek", "şifre", "gece"]
    entries = [{"date": f"2026-0{1 + i % 9}-1{i % 10}", "type": rng.choice(["fix", "note"]), "scope": rng.choice(["a", "b"]),
                "description": " ".join(rng.choices(words, k=5))} for i in range(12)]
    sections = [(rng.choice(["Alpha", "Beta", "Beta 2", "Gamma"]), " ".join(rng.choices(words, k=6))) for _ in range(6)]
    index = dreamdb.open(tiny_vault, index_path=tmp_path / "kept.db")
    for step in range(40):
        op = rng.randrange(6)
        if op == 0:
            entries.insert(rng.randrange(len(entries) + 1), {"date": "2026-09-0%d" % rng.randrange(1, 9), "type": "note",
                                                             "description": " ".join(rng.choices(words, k=4))})
        elif op == 1 and len(entries) > 2:
            del entries[rng.randrange(len(entries))]
        elif op == 2:  # the text, or only what an entry supersedes (same id and text, other metadata)
            e = rng.choice(entries)
            if rng.random() < 0.5:
                e["description"] = " ".join(rng.choices(words, k=5))
            e["supersedes"] = rng.choice(["", f"{entries[0]['date']}|{entries[0].get('scope') or entries[0]['type']}",
                                          f"changelog/{entries[-1]['date']}-x-1"])
        elif op == 3:
            i, j = rng.randrange(len(entries)), rng.randrange(len(entries))
            entries[i], entries[j] = entries[j], entries[i]
        elif op == 4:
            sections.insert(rng.randrange(len(sections) + 1), (rng.choice(["Alpha", "Beta", "Delta"]), rng.choice(words)))
        else:
            k = rng.randrange(len(sections))
            sections[k] = (sections[k][0], " ".join(rng.choices(words, k=3)) + " ★" * rng.randrange(2))
        write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps(entries, ensure_ascii=False))
        front = rng.choice(["", "---\nupdated: 2026-10-0%d\n---\n" % rng.randrange(1, 4)])  # every section's date
        write_doc(tiny_vault, "core/2.memory.md", front + "".join(f"## {h}\n{b}\n\n" for h, b in sections))
        index.sync()
        fresh = dreamdb.open(tiny_vault, index_path=tmp_path / f"fresh-{step}.db")
        fresh.sync()
        assert _rows_by_doc_id(index) == _rows_by_doc_id(fresh), step
        fresh.close()
    assert _integrity(index) == "ok"



def test_sync_counts_the_notes_moved_with_their_documents(tiny_vault):
    """QA round 153-C F5: a folder renamed was reported as "added": 1263, "removed": 1263 though its notes kept their
    rows and vectors, and nothing said they moved. ``moved`` counts them (each still one added and one removed file),
    in the report, its JSON and the text output; a note renamed, or moved and edited, is indexed again, not moved."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    for n in range(3):
        write_doc(tiny_vault, f"knowledge/old/n{n}.md", f"walrus note {n}\n")
    write_doc(tiny_vault, "knowledge/a.md", "alpha\n")
    index = dreamdb.open(tiny_vault)
    assert index.sync().moved == 0
    rows = dict(index.conn.execute("SELECT doc_id, id FROM documents"))
    (tiny_vault / "knowledge" / "old").rename(tiny_vault / "knowledge" / "new")
    (tiny_vault / "knowledge" / "a.md").rename(tiny_vault / "knowledge" / "c.md")  # (renamed: another id, re-read)
    r = index.sync()
    assert (r.added, r.changed, r.removed, r.unchanged, r.moved) == (4, 0, 4, 0, 3)
    assert r.as_dict()["moved"] == 3
    assert {d: i for d, i in index.conn.execute("SELECT doc_id, id FROM documents") if d != "knowledge/c"} == {
        d: i for d, i in rows.items() if d != "knowledge/a"}
    index.close()
    (tiny_vault / "knowledge" / "new").rename(tiny_vault / "knowledge" / "newer")
    write_doc(tiny_vault, "knowledge/newer/n2.md", "walrus note 2, edited\n")
    runner = CliRunner()
    got = json.loads(runner.invoke(cli, ["sync", "--vault", str(tiny_vault), "--json"]).stdout)
    assert (got["added"], got["removed"], got["moved"]) == (3, 3, 2)
    (tiny_vault / "knowledge" / "newer").rename(tiny_vault / "knowledge" / "last")
    r = runner.invoke(cli, ["sync", "--vault", str(tiny_vault)])
    assert r.stdout.startswith("3 added, 0 changed, 3 removed, 1 unchanged · 3 of the added and removed moved to another"
                               " folder: their documents kept · 4 documents · "), r.stdout
    r = runner.invoke(cli, ["sync", "--vault", str(tiny_vault)])
    assert r.stdout.startswith("0 added, 0 changed, 0 removed, 4 unchanged · 4 documents"), r.stdout

def test_notes_moved_between_folders_keep_their_rows_and_equal_a_rebuild(tiny_vault, tmp_path):
    """QA round 127-C F1: a note moved to another folder (a folder renamed) was parsed and analysed again, as a removal
    and an addition: 10,000 notes took 35 s, 2.2 times a first sync. Moved with its bytes, type and name, it keeps its
    rows (postings, chunks) under the new path. 60 random moves, renames, copies, edits and removals of same-named
    notes (one with frontmatter the index cannot read), each synced into one index and compared with an index built
    from scratch."""
    import random

    from dreamdb.store.sync import frontmatter_unread

    rng = random.Random(20261206)
    folders = ["knowledge", "knowledge/a", "knowledge/b", "knowledge/a/deep", "state", "state/done"]
    names = ["notes.md", "notes-2.md", "plan.md", "TASK-7.md"]
    words = ["walrus", "narwhal", "okapi", "sleep", "index", "vault", "yedek", "şifre"]

    def text() -> str:
        head = rng.choice(["", "---\ntitle: T\ntags: [x]\n---\n", "---\ntitle: [unclosed\n---\n"])
        return head + " ".join(rng.choices(words, k=6)) + "\n"

    for _ in range(8):
        write_doc(tiny_vault, f"{rng.choice(folders)}/{rng.choice(names)}", text())
    index = dreamdb.open(tiny_vault, index_path=tmp_path / "kept.db")
    index.sync()
    kept_rows = 0
    for step in range(60):
        files = sorted(p for p in tiny_vault.rglob("*.md") if ".dreamdb" not in p.parts)
        op = rng.randrange(6)
        f = rng.choice(files) if files else None
        if f is None or op == 0:
            write_doc(tiny_vault, f"{rng.choice(folders)}/{rng.choice(names)}", text())
        elif op in (1, 2):  # moved, name kept (to a folder of its type or of another)
            to = tiny_vault / rng.choice(folders) / f.name
            if not to.exists():
                to.parent.mkdir(parents=True, exist_ok=True)
                ids = dict(index.conn.execute("SELECT source_path, id FROM documents"))
                rowid = ids.get(f.relative_to(tiny_vault).as_posix())
                f.rename(to)
                index.sync()
                now = dict(index.conn.execute("SELECT source_path, id FROM documents"))
                kept_rows += now.get(to.relative_to(tiny_vault).as_posix()) == rowid is not None
        elif op == 3:  # renamed
            to = f.with_name(rng.choice(names))
            if not to.exists():
                f.rename(to)
        elif op == 4:  # copied, or edited
            if rng.random() < 0.5:
                write_doc(tiny_vault, f"{rng.choice(folders)}/{f.name}", f.read_text(encoding="utf-8"))
            else:
                f.write_text(text(), encoding="utf-8")
        else:
            f.unlink()
        index.sync()
        fresh = dreamdb.open(tiny_vault, index_path=tmp_path / f"fresh-{step}.db")
        fresh.sync()
        assert _rows_by_doc_id(index) == _rows_by_doc_id(fresh), step
        assert frontmatter_unread(index.conn) == frontmatter_unread(fresh.conn), step
        assert sorted(index.conn.execute("SELECT path, sha256 FROM files")) == sorted(
            fresh.conn.execute("SELECT path, sha256 FROM files")), step
        fresh.close()
    assert kept_rows >= 4 and _integrity(index) == "ok"
    # a moved note whose rows another program deleted is read again, as a note found unchanged is
    f = next(p for p in sorted(tiny_vault.rglob("*.md")) if p.relative_to(tiny_vault).parts[0] == "knowledge")
    index.conn.execute("DELETE FROM documents WHERE source_path = ?", (f.relative_to(tiny_vault).as_posix(),))
    (tiny_vault / "knowledge" / "moved-again").mkdir()
    f.rename(tiny_vault / "knowledge" / "moved-again" / f.name)
    index.sync()
    fresh = dreamdb.open(tiny_vault, index_path=tmp_path / "fresh-last.db")
    fresh.sync()
    assert _rows_by_doc_id(index) == _rows_by_doc_id(fresh)


def test_an_explicit_sync_gives_back_the_space_of_a_large_removed_note(tiny_vault):
    """QA round 59 L2: after a 50 MB note was removed the index kept its size (184.7 MB for 19 documents), even after
    `sync --force`; only `embed compact` shrank it. `dreamdb sync` now rewrites a file that is mostly free pages."""
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.config import index_size_bytes

    write_doc(tiny_vault, "knowledge/keep.md", "---\ntitle: Keep\n---\nwalrus notes\n")
    words = " ".join(f"w{i}" for i in range(400_000))  # ≈ 3.3 MB of distinct terms: postings, terms, body
    write_doc(tiny_vault, "knowledge/big.md", f"---\ntitle: Big\n---\n{words}\n{words}\n")
    runner = CliRunner()
    first = runner.invoke(cli, ["sync", "--vault", str(tiny_vault), "--json"])
    assert first.exit_code == 0 and json.loads(first.output)["reclaimed_bytes"] == 0
    with dreamdb.open(tiny_vault, auto_sync=False) as index:
        path = index.index_path
        full = index_size_bytes(path)
    (tiny_vault / "knowledge/big.md").unlink()
    result = runner.invoke(cli, ["sync", "--vault", str(tiny_vault)])
    assert result.exit_code == 0 and "gave back" in result.output, result.output
    assert index_size_bytes(path) < full / 4
    again = runner.invoke(cli, ["sync", "--vault", str(tiny_vault), "--json"])
    assert json.loads(again.output)["reclaimed_bytes"] == 0  # nothing free to give back
    with dreamdb.open(tiny_vault) as index:
        assert [h.doc_id for h in index.recall("walrus")] == ["knowledge/keep"] and _integrity(index) == "ok"


def test_giving_back_space_does_not_wait_for_a_reader_nor_claim_what_it_did_not_give(tiny_vault):
    """QA round 60 L1: with another connection reading, the checkpoint after VACUUM waited out the busy timeout
    (10 s) and sync reported 10.3 MB given back while the file and its WAL had grown by 7.5 MB."""
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.config import index_size_bytes

    write_doc(tiny_vault, "knowledge/keep.md", "---\ntitle: Keep\n---\nwalrus notes\n")
    words = " ".join(f"w{i}" for i in range(400_000))
    write_doc(tiny_vault, "knowledge/big.md", f"---\ntitle: Big\n---\n{words}\n{words}\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["sync", "--vault", str(tiny_vault)]).exit_code == 0
    (tiny_vault / "knowledge/big.md").unlink()
    with dreamdb.open(tiny_vault, auto_sync=False) as index:
        path = index.index_path
    reader = db.connect(path, readonly=True)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM postings").fetchone()  # a read under way in another connection
    before = index_size_bytes(path)
    t0 = time.perf_counter()
    result = runner.invoke(cli, ["sync", "--vault", str(tiny_vault), "--json"])
    waited = time.perf_counter() - t0
    reader.execute("ROLLBACK")
    reader.close()
    assert result.exit_code == 0, result.output
    assert waited < 5, waited
    assert json.loads(result.output)["reclaimed_bytes"] == max(0, before - index_size_bytes(path))
    runner.invoke(cli, ["sync", "--vault", str(tiny_vault)])  # the reader gone: a checkpoint finishes the rewrite
    with dreamdb.open(tiny_vault) as index:
        index.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert index_size_bytes(path) < before / 4 and _integrity(index) == "ok"


def test_a_full_disk_that_stops_giving_back_space_is_a_warning_in_text_and_json(tiny_vault, monkeypatch):
    """QA round 60 L2 and 61 L1: a VACUUM stopped by a full disk was silent, then said on stderr only."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    write_doc(tiny_vault, "knowledge/keep.md", "---\ntitle: Keep\n---\nwalrus notes\n")

    def full(conn, path=None):
        raise db.OperationalError("database or disk is full")

    monkeypatch.setattr(db, "reclaim_free_pages", full)
    result = CliRunner().invoke(cli, ["sync", "--vault", str(tiny_vault), "--json"])
    out = json.loads(result.output)
    assert result.exit_code == 0 and out["reclaimed_bytes"] == 0
    assert any(w.startswith("could not give back the index's free space: database or disk is full") for w in out["warnings"])
    result = CliRunner().invoke(cli, ["sync", "--vault", str(tiny_vault)])
    assert "warning: could not give back the index's free space" in result.output


def _recall_ids(vault, query: str, prefix: list[str] | None = None) -> tuple[list[str], str]:
    """``dreamdb recall --json`` run as a process (under ``prefix``): ``(hit ids, its notes and stderr)``."""
    import subprocess
    import sys

    p = subprocess.run([*(prefix or []), sys.executable, "-m", "dreamdb", "recall", "--vault", str(vault), "--json",
                        query], capture_output=True, text=True, timeout=60)
    out = json.loads(p.stdout)
    return [h["type"] + "/" + h["slug"] for h in out["hits"]], "\n".join(out.get("notes", [])) + p.stderr


def test_a_folder_unreadable_for_a_sync_is_indexed_again_once_readable(tiny_vault):
    """QA round 63 H1: a folder that could not be listed had its time recorded all the same; made readable
    again its time is unchanged, so the no-change check passed and its notes stayed out of the index for good
    (``core/`` unreadable also lost every CHANGELOG entry without a word)."""
    write_doc(tiny_vault, "knowledge/sub/z.md", "---\ntitle: Zebra note\n---\nzebra stripes body\n")
    write_doc(tiny_vault, "knowledge/a.md", "hello\n")
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([{"date": "2026-08-01", "type": "fix", "scope": "zebra",
                                                             "description": "zebra crossing fixed"}]))
    bite = permissions_bite()
    assert _recall_ids(tiny_vault, "zebra")[0] == ["knowledge/z", "changelog/2026-08-01-zebra-1"]
    for folder in (tiny_vault / "knowledge" / "sub", tiny_vault / "core"):
        folder.chmod(0)
        try:
            hits, err = _recall_ids(tiny_vault, "zebra", bite)
            # one warning, naming the folder (QA round 64 L4: core/2.memory.md, which never existed, was named)
            assert err.count("skipped (Permission denied)") == 1, err
            assert f"{folder.relative_to(tiny_vault).as_posix()}: skipped (Permission denied)" in err, err
            assert len(hits) == 1  # the other one
        finally:
            folder.chmod(0o755)
        assert _recall_ids(tiny_vault, "zebra")[0] == ["knowledge/z", "changelog/2026-08-01-zebra-1"], folder


def test_a_linked_note_whose_note_comes_back_is_indexed_again(tiny_vault):
    """QA round 63 H2: a link to a note in a folder dreamdb does not walk (``people/``) that was gone for a sync
    stayed out of the index once the note came back (a branch switch, a stash): nothing the no-change check
    compares had changed. A link made before its note behaves alike."""
    write_doc(tiny_vault, "knowledge/a.md", "hello\n")
    team = write_doc(tiny_vault, "people/team.md", "---\ntitle: Team roster\n---\nzebra team roster\n")
    (tiny_vault / "knowledge" / "team.md").symlink_to("../people/team.md")
    (tiny_vault / "knowledge" / "later.md").symlink_to("../people/later.md")  # its note does not exist yet
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall("zebra")] == ["knowledge/team"]
    away = tiny_vault.parent / "team.bak"
    team.rename(away)
    assert index.recall("zebra") == []
    assert any("which does not exist" in n for n in index.take_notes())
    away.rename(team)
    assert [h.doc_id for h in index.recall("zebra")] == ["knowledge/team"]
    write_doc(tiny_vault, "people/later.md", "---\ntitle: Later\n---\nzebra later\n")
    assert sorted(h.doc_id for h in index.recall("zebra")) == ["knowledge/later", "knowledge/team"]
    assert index.sync().unchanged == 3
    # nothing dangles now: no folder is marked unscanned, and the no-change check passes again
    assert index.conn.execute("SELECT COUNT(*) FROM dirs WHERE mtime_ns = -1").fetchone()[0] == 0
    index.close()


def test_a_linked_notes_folder_hidden_behind_a_link_is_seen_by_the_next_sync(tiny_vault, monkeypatch):
    """QA round 146-I F6: a note linked to ``people/sub/q.md``, whose folder was then moved to ``people/.sub`` with a
    link ``people/sub -> .sub`` in its place, stayed indexed ("0 added, 0 changed"), recall returning it while update
    called it a link to an archived note, until a check or rebuild: the no-change check recorded no time of the
    folders behind a link. It records those that hold the file a link leads to."""
    from dreamdb.store import sync as S

    monkeypatch.delenv("DREAMDB_INCLUDE_ARCHIVES", raising=False)
    write_doc(tiny_vault, "knowledge/a.md", "hello\n")
    write_doc(tiny_vault, "people/sub/q.md", "---\ntitle: Q\n---\nq person numbat\n")
    (tiny_vault / "knowledge" / "l-q.md").symlink_to("../people/sub/q.md")
    with dreamdb.open(tiny_vault) as index:
        index.sync()
        time.sleep(0.05)  # (past the file system clock's tick: no folder's time is racy, the no-change check passes)
        index.sync()
        assert S._fast_unchanged(index.conn, tiny_vault, False) == 2
        assert [h.doc_id for h in index.recall("numbat")] == ["knowledge/l-q"]
        (tiny_vault / "people" / "sub").rename(tiny_vault / "people" / ".sub")
        (tiny_vault / "people" / "sub").symlink_to(".sub")
        report = index.sync()
        assert report.removed == 1 and any(w.startswith("knowledge/l-q.md: skipped (a link to people/.sub/q.md, an"
                                                        " archived note") for w in report.warnings), report.warnings
        assert index.recall("numbat") == []
        (tiny_vault / "people" / "sub").unlink()
        (tiny_vault / "people" / ".sub").rename(tiny_vault / "people" / "sub")
        assert [h.doc_id for h in index.recall("numbat")] == ["knowledge/l-q"]


def test_a_link_on_the_way_to_a_linked_note_retargeted_is_seen_by_the_next_sync(tiny_vault, tmp_path, monkeypatch):
    """QA round 147-A F2: ``knowledge/chain.md -> ../misc/hop.md -> ../docs/q.md``, with ``misc/hop.md`` then made to
    lead to a hard link of ``q.md`` in ``.trash`` (the same file, its stat unchanged), stayed indexed ("0 added, 0
    changed, 1 unchanged"), recall returning it while update called it a link into ``.trash``, until a check: the
    no-change check recorded the folders of the file a link leads to, not those of the links on the way (``misc/``,
    the only one whose time changed). It records each of them: a file link's, a folder link's (``people/a/b -> ../c``),
    and those of a chain that led out of the vault or to no file (retargeted to a note)."""
    from dreamdb.store import sync as S

    monkeypatch.delenv("DREAMDB_INCLUDE_ARCHIVES", raising=False)
    write_doc(tiny_vault, "knowledge/a.md", "hello\n")
    q = write_doc(tiny_vault, "docs/q.md", "---\ntitle: Q\n---\nq body numbat\n")
    (tiny_vault / ".trash").mkdir()
    os.link(q, tiny_vault / ".trash" / "q.md")
    (tiny_vault / "misc").mkdir()
    (tiny_vault / "misc" / "hop.md").symlink_to("../docs/q.md")
    (tiny_vault / "knowledge" / "chain.md").symlink_to("../misc/hop.md")
    p = write_doc(tiny_vault, "people/c/p.md", "---\ntitle: P\n---\np body wombat\n")
    os.makedirs(tiny_vault / ".trash" / "c")
    os.link(p, tiny_vault / ".trash" / "c" / "p.md")
    (tiny_vault / "people" / "a").mkdir()
    (tiny_vault / "people" / "a" / "b").symlink_to("../c")
    (tiny_vault / "knowledge" / "folder-hop.md").symlink_to("../people/a/b/p.md")
    outside = write_doc(tmp_path, "elsewhere/o.md", "---\ntitle: O\n---\no body quokka\n")
    write_doc(tiny_vault, "docs/o.md", outside.read_text())
    (tiny_vault / "misc" / "out.md").symlink_to(outside)
    (tiny_vault / "knowledge" / "out.md").symlink_to("../misc/out.md")
    write_doc(tiny_vault, "docs/l.md", "---\ntitle: L\n---\nl body wallaby\n")
    (tiny_vault / "misc" / "late.md").symlink_to("../docs/none.md")  # (to a note that does not exist)
    (tiny_vault / "knowledge" / "late.md").symlink_to("../misc/late.md")

    def settled(index, files: int) -> None:
        time.sleep(0.05)  # (past the file system clock's tick: no folder's time is racy, the no-change check passes)
        index.sync()
        assert S._fast_unchanged(index.conn, tiny_vault, False) == files

    with dreamdb.open(tiny_vault) as index:
        index.sync()
        settled(index, 3)
        assert [h.doc_id for h in index.recall("numbat")] == ["knowledge/chain"]
        assert [h.doc_id for h in index.recall("wombat")] == ["knowledge/folder-hop"]
        assert index.recall("quokka") == []
        (tiny_vault / "misc" / "hop.md").unlink()
        (tiny_vault / "misc" / "hop.md").symlink_to("../.trash/q.md")
        assert S._fast_unchanged(index.conn, tiny_vault, False) is None
        report = index.sync()
        assert (report.removed, report.unchanged) == (1, 2), report
        assert "knowledge/chain.md: skipped (a link to .trash/q.md, in .trash, a trash, version or sync folder" \
               " dreamdb never reads)" in report.warnings, report.warnings
        assert index.recall("numbat") == []
        settled(index, 2)
        (tiny_vault / "people" / "a" / "b").unlink()
        (tiny_vault / "people" / "a" / "b").symlink_to("../../.trash/c")
        report = index.sync()
        assert (report.removed, report.unchanged) == (1, 1), report
        assert index.recall("wombat") == []
        settled(index, 1)
        (tiny_vault / "misc" / "out.md").unlink()
        (tiny_vault / "misc" / "out.md").symlink_to("../docs/o.md")
        report = index.sync()
        assert (report.added, report.unchanged) == (1, 1), report
        assert [h.doc_id for h in index.recall("quokka")] == ["knowledge/out"]
        settled(index, 2)
        (tiny_vault / "misc" / "late.md").unlink()
        (tiny_vault / "misc" / "late.md").symlink_to("../docs/l.md")
        report = index.sync()
        assert (report.added, report.unchanged) == (1, 2), report
        assert [h.doc_id for h in index.recall("wallaby")] == ["knowledge/late"]


def test_the_file_system_clock_is_read_beside_the_index_and_orders_with_file_times(tiny_vault):
    from dreamdb.store.sync import CLOCK_FILE_NAME, file_system_clock

    before = write_doc(tiny_vault, "knowledge/before.md", "before\n")
    index = dreamdb.open(tiny_vault)
    clock = file_system_clock(index.conn)
    after = write_doc(tiny_vault, "knowledge/after.md", "after\n")
    assert before.stat().st_ctime_ns <= clock <= after.stat().st_ctime_ns
    assert (index.index_path.parent / CLOCK_FILE_NAME).stat().st_size == 0
    index.close()


def test_a_file_changed_within_the_clock_tick_of_its_sync_is_read_again_by_the_next(tiny_vault, monkeypatch):
    """Racy git's case: two writes of the same size within one tick of the file system's clock leave the same
    stat, so a file written again right after a sync read it could look unchanged for good. A file whose change
    time is the sync's clock or later keeps no change time in ``files``: the next sync reads and hashes it again,
    then stores its stat. (Which files are racy is forced here through the clock: this kernel's timestamps are too
    fine for two writes to share one.)"""
    from dreamdb.store import sync as S

    write_doc(tiny_vault, "knowledge/a.md", "alpha\n")
    write_doc(tiny_vault, "knowledge/b.md", "bravo\n")
    index = dreamdb.open(tiny_vault)
    real = S.file_system_clock
    monkeypatch.setattr(S, "file_system_clock", lambda conn: 0)  # every file is racy
    assert index.sync().added == 2
    stored = dict(index.conn.execute("SELECT path, ctime_ns FROM files"))
    assert stored == {"knowledge/a.md": None, "knowledge/b.md": None}
    monkeypatch.setattr(S, "file_system_clock", real)
    generation = index.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    r = index.sync()  # no fast path: the two are read again, found the same, and their stat stored
    assert (r.added, r.changed, r.unchanged) == (0, 0, 2)
    # no document changed: the in-memory engine's caches stay (its generation is the same)
    assert index.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone() == generation
    assert all(isinstance(c, int) for c in dict(index.conn.execute("SELECT path, ctime_ns FROM files")).values())
    assert S._fast_unchanged(index.conn, tiny_vault, False) == 2  # and the no-change check passes again
    index.close()


def test_a_whole_second_change_time_is_racy_for_two_seconds_of_a_finer_clock():
    """QA round 93-A F1: a vault on a file system of whole seconds (ext4 with 128-byte inodes, HFS+, FAT) and its
    index on one of nanoseconds (a ``.dreamdb`` link, ``DREAMDB_INDEX``): a note's change time, rounded down to its
    second, always looked older than the index's clock, so a second edit within that second was never read (19 of
    20 such edits stale, ``sync --check`` ok). Such a time is taken as a tick of two seconds."""
    from dreamdb.store.sync import COARSE_TICK_NS, is_racy

    second = 1_764_900_000 * 10**9
    clock = second + 680_000_000  # (the clock file's change time, in ns, 0.68 s into that second)
    assert is_racy(second, clock) and is_racy(second - 10**9, clock)  # (FAT: the tick may be two seconds)
    assert not is_racy(second - COARSE_TICK_NS, clock) and not is_racy(second - 5 * 10**9, clock)
    # a time of a finer file system: racy from the clock's own time on, as git's rule
    assert is_racy(clock, clock) and is_racy(clock + 1, clock) and not is_racy(clock - 1, clock)
    assert not is_racy(second + 1, clock)
    # a time of 10 ms (exFAT, vfat change times: QA round 101-B F2, 78 of 100 same-size edits within one tick stale
    # with the index on another file system): racy for 10 ms of the clock
    later = second + 683_000_000  # (the clock 3 ms into the 10 ms tick that began at 0.68 s)
    assert is_racy(second + 680_000_000, later) and not is_racy(second + 670_000_000, later)
    ms = second + 675_000_000  # (a multiple of 1 ms: racy for 1 ms)
    assert is_racy(ms, ms + 3) and not is_racy(ms, ms + 1_500_000)


def test_a_note_added_to_a_folder_whose_time_is_set_back_is_found(tiny_vault):
    """QA round 93-A F4: a program that sets a folder's modification time back after adding a note to it (touch -r,
    cp -a, tar x, some sync tools) hid the note from the no-change check: never indexed, ``sync --check`` ok. The
    folder's change time, which no program can set back, is compared too (schema version 11)."""
    write_doc(tiny_vault, "knowledge/a.md", "alpha\n")
    index = dreamdb.open(tiny_vault)
    assert index.sync().added == 1
    assert index.sync().unchanged == 1  # (a folder changed within the first sync's clock tick is listed again once)
    folder = tiny_vault / "knowledge"
    assert index.conn.execute("SELECT ctime_ns FROM dirs WHERE path = 'knowledge'").fetchone()[0] == \
        os.stat(folder).st_ctime_ns
    before = os.stat(folder)
    write_doc(tiny_vault, "knowledge/sneaky.md", "zzsneaky\n")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(folder).st_mtime_ns == before.st_mtime_ns
    assert [h.doc_id for h in index.recall("zzsneaky")] == ["knowledge/sneaky"]
    index.close()


def test_a_file_dated_past_2262_is_indexed(tiny_vault):
    """QA round 93-A F2: one file or folder dated after 2262-04-11 (past SQLite's INTEGER in ns) made every sync
    fail (OverflowError, exit 70) and the prompt hook print nothing. Its time is stored clamped to that range."""
    from dreamdb.vault.discover import MAX_NS

    write_doc(tiny_vault, "knowledge/future.md", "zzfuture\n")
    late = 10_426_838_400 * 10**9  # 2300-06-01
    try:
        os.utime(tiny_vault / "knowledge" / "future.md", ns=(late, late))
        os.utime(tiny_vault / "knowledge", ns=(late, late))
    except (OSError, OverflowError) as exc:
        pytest.skip(f"this file system keeps no such time: {exc}")
    if os.stat(tiny_vault / "knowledge" / "future.md").st_mtime_ns <= MAX_NS:
        pytest.skip("this file system clamps such a time itself")
    index = dreamdb.open(tiny_vault)
    assert index.sync().added == 1
    assert [h.doc_id for h in index.recall("zzfuture")] == ["knowledge/future"]
    assert index.conn.execute("SELECT mtime_ns FROM files").fetchone()[0] == MAX_NS
    r = index.sync()
    assert (r.added, r.changed, r.unchanged) == (0, 0, 1)
    index.close()


def test_the_warnings_a_recall_passes_on_put_text_left_out_first(tiny_vault, monkeypatch):
    """QA round 108-A F7: of a lazy sync's warnings, a recall shows LAZY_SYNC_WARNINGS_SHOWN, in the walk's order, so
    a CHANGELOG.json broken since the last sync ("not valid JSON", "kept the … documents indexed before it broke")
    went into the count behind warnings on file names. Those of text left out of the index come first."""
    monkeypatch.chdir(tiny_vault.parent)  # (dreamdb finds the vault from here: its notes' commands need no --vault)
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([{"id": "E1", "type": "note", "date": "2026-01-01",
                                                               "description": "the zebra entry"}]))
    write_doc(tiny_vault, "knowledge/a.md", "zebra\n")
    index = dreamdb.open(tiny_vault)
    assert index.recall("zebra") and not index.take_notes()
    (tiny_vault / "core" / "CHANGELOG.json").write_text("[{broken", encoding="utf-8")
    for i in range(6):
        (tiny_vault / "knowledge" / f"a{i}.md").symlink_to(f"../nothing{i}.md")
    index.recall("zebra")
    notes = index.take_notes()
    assert notes[0].startswith("core/CHANGELOG.json: not valid JSON") and notes[1].startswith(
        "core/CHANGELOG.json: kept the 1 document indexed before it broke"), notes
    assert notes[-1] == "… and 4 more sync warnings (dreamdb sync --force lists them all)"
    index.close()


def test_the_sync_before_a_recall_passes_on_a_few_warnings_and_counts_the_rest(tiny_vault, monkeypatch):
    """QA round 64 L3: with 20 dangling links every recall began with 20 notes, repeated while they last; the sync
    before a read now passes on :data:`dreamdb.api.LAZY_SYNC_WARNINGS_SHOWN` of them and counts the rest, and
    ``sync --force`` lists them all."""
    monkeypatch.chdir(tiny_vault.parent)  # (dreamdb finds the vault from here: its notes' commands need no --vault)
    from dreamdb.api import LAZY_SYNC_WARNINGS_SHOWN as shown

    write_doc(tiny_vault, "knowledge/a.md", "zebra\n")
    for i in range(8):
        (tiny_vault / "knowledge" / f"gone{i}.md").symlink_to(f"../nothing{i}.md")
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall("zebra")] == ["knowledge/a"]
    notes = index.take_notes()
    assert len(notes) == shown == 5
    assert all("which does not exist" in n for n in notes[:-1])
    assert notes[-1] == "… and 4 more sync warnings (dreamdb sync --force lists them all)"
    assert sum("which does not exist" in w for w in index.sync(force=True).warnings) == 8
    (tiny_vault / "knowledge" / "gone0.md").unlink()
    for i in range(1, 4):
        (tiny_vault / "knowledge" / f"gone{i}.md").unlink()
    index.recall("zebra")
    assert sorted(index.take_notes()) == sorted(f"knowledge/gone{i}.md: skipped (a link to ../nothing{i}.md, which"
                                                f" does not exist)" for i in range(4, 8))
    index.close()


@pytest.mark.parametrize("mode", [0o000, 0o644])
def test_a_vault_folder_that_cannot_be_read_is_said_with_exit_3(tiny_vault, mode):
    """QA round 65 M1: a vault folder of mode 000 (or 644: listed, not entered) ended recall, status, sync, list,
    sql and the writes in "internal error: PermissionError" and exit 70; an Index opened before the chmod too."""
    import subprocess
    import sys

    write_doc(tiny_vault, "knowledge/a.md", "zebra\n")
    bite = permissions_bite()
    tiny_vault.chmod(mode)
    try:
        for args in (["recall", "zebra"], ["status"], ["sync"], ["list"], ["sql", "SELECT 1"], ["remember", "x"]):
            p = subprocess.run([*bite, sys.executable, "-m", "dreamdb", *args, "--vault", str(tiny_vault)],
                               capture_output=True, text=True, timeout=60)
            assert p.returncode == 3, (args, p.stderr)
            assert f"The vault folder {tiny_vault} cannot be read" in p.stderr and "chmod u+rx" in p.stderr, p.stderr
            assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    finally:
        tiny_vault.chmod(0o755)
    # an Index opened before the chmod (in a process whose permissions apply)
    script = ("import os, sys, dreamdb\nfrom dreamdb.errors import VaultNotFound\nv = sys.argv[1]\n"
              "ix = dreamdb.open(v)\nprint([h.doc_id for h in ix.recall('zebra')])\nix.close()\n"
              f"os.chmod(v, {mode:#o})\n"
              "try:\n    ix.recall('zebra')\nexcept VaultNotFound as e:\n    print('refused:', e.message)\n"
              "finally:\n    os.chmod(v, 0o755)\nprint([h.doc_id for h in ix.recall('zebra')])\n")
    p = subprocess.run([*bite, sys.executable, "-c", script, str(tiny_vault)], capture_output=True, text=True, timeout=60)
    assert p.stdout.splitlines() == ["['knowledge/a']", f"refused: The vault folder {tiny_vault} cannot be read"
                                     " (permission denied).", "['knowledge/a']"], p.stderr


def test_a_write_with_an_index_folder_it_cannot_enter_says_so(tiny_vault):
    """QA round 65 L9: with ``.dreamdb`` at mode 000, ``remember`` said "Cannot create the index folder" of a folder
    that exists."""
    import subprocess
    import sys

    write_doc(tiny_vault, "knowledge/a.md", "zebra\n")
    dreamdb.open(tiny_vault).sync()
    bite = permissions_bite()
    folder = tiny_vault / ".dreamdb"
    folder.chmod(0o000)
    try:
        p = subprocess.run([*bite, sys.executable, "-m", "dreamdb", "remember", "zebra fact", "--vault", str(tiny_vault)],
                           capture_output=True, text=True, timeout=60)
    finally:
        folder.chmod(0o700)
    assert p.returncode == 6 and f"Cannot write in the index folder {folder}: Permission denied" in p.stderr, p.stderr
    assert "chmod u+rwx" in p.stderr and "Cannot create" not in p.stderr
    assert not (tiny_vault / "core" / "CHANGELOG.json").exists()


def test_a_write_stopped_by_a_full_disk_in_the_index_folder_says_to_free_space(tiny_vault, monkeypatch):
    """QA round 93-A F7: on a full disk, ``remember`` said "No space left on device; nothing was changed" with the
    hint to chmod the folder. The hint says to free space."""
    import errno

    from dreamdb import config
    from dreamdb.errors import WriteRefused
    from dreamdb.writes import remember

    write_doc(tiny_vault, "knowledge/a.md", "zebra\n")
    dreamdb.open(tiny_vault).sync()

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(config, "prepare_index_dir", full)
    with pytest.raises(WriteRefused, match="No space left on device; nothing was changed") as exc:
        remember(tiny_vault, "zebra fact")
    assert exc.value.hint == "Free space on that disk (or raise the quota), then retry.", exc.value.hint
    assert not (tiny_vault / "core" / "CHANGELOG.json").exists()


def test_a_write_into_a_read_only_index_folder_is_refused_as_recall_reads_it(tiny_vault):
    """QA round 83-B F8: with ``.dreamdb`` at mode 0500, recall reads the folder as read-only (even for root, who
    could write there: it copies the index to the user cache), while ``remember`` and ``update`` wrote their lock and
    trash in it. Refused now, nothing changed; recall still answers."""
    import subprocess
    import sys

    write_doc(tiny_vault, "knowledge/a.md", "zebra\n")
    dreamdb.open(tiny_vault).sync()
    folder = tiny_vault / ".dreamdb"
    before = sorted(p.name for p in folder.iterdir())
    folder.chmod(0o500)
    try:
        for args in (["remember", "zebra fact"], ["update", "knowledge/a", "--append", "more zebra"]):
            p = subprocess.run([sys.executable, "-m", "dreamdb", *args, "--vault", str(tiny_vault)],
                               capture_output=True, text=True, timeout=60)
            assert p.returncode == 6 and f"The index folder {folder} is read-only" in p.stderr, (args, p.stderr)
            assert "chmod u+rwx" in p.stderr and "Nothing was changed" in p.stderr
        # (no lock, no trash; SQLite's -wal and -shm of the index the command opened before refusing may appear)
        assert sorted(p.name for p in folder.iterdir() if not p.name.endswith(("-wal", "-shm"))) == before
        p = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "zebra", "--plain", "--vault", str(tiny_vault)],
                           capture_output=True, text=True, timeout=60, env={**os.environ,
                                                                            "DREAMDB_CACHE_DIR": str(tiny_vault.parent / "c")})
        assert p.returncode == 0 and "knowledge/a" in p.stdout, p.stderr
    finally:
        folder.chmod(0o700)
    assert not (tiny_vault / "core" / "CHANGELOG.json").exists()
    assert (tiny_vault / "knowledge" / "a.md").read_text() == "zebra\n"


def test_a_note_that_becomes_unreadable_keeps_its_documents_and_every_read_says_so(tiny_vault):
    """QA round 69 H1: a note made unreadable (chmod 000) after it was indexed dropped out of the index at the next
    sync, later recalls said nothing and status showed only "1 from 2 files"; alone in its vault, the messages
    blamed "no notes yet" and "no indexable text (a memory file needs '## ' sections)". A file that broke
    otherwise (binary) keeps its documents and says so at every sync: so does an unreadable one now."""
    import subprocess
    import sys

    bite = permissions_bite()
    note = write_doc(tiny_vault, "knowledge/why-sqlite.md", "---\ntitle: Why SQLite\n---\nwe chose sqlite over postgres\n")
    other = write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: Other\n---\nsqlite tuning notes\n")
    assert sorted(_recall_ids(tiny_vault, "sqlite postgres")[0]) == ["knowledge/other", "knowledge/why-sqlite"]
    note.chmod(0)
    try:
        for _ in range(2):  # every read says so, not only the first
            hits, err = _recall_ids(tiny_vault, "sqlite postgres", bite)
            assert sorted(hits) == ["knowledge/other", "knowledge/why-sqlite"], err
            assert "knowledge/why-sqlite.md: cannot read (Permission denied); kept the 1 document indexed before" in err
        other.unlink()
        fresh = tiny_vault.parent / "fresh" / "_dream_context"
        (fresh / "knowledge").mkdir(parents=True)
        (fresh / "knowledge" / "only.md").write_bytes(b"---\ntitle: Only\n---\nsqlite\n")
        (fresh / "knowledge" / "only.md").chmod(0)
        for args in (["sync"], ["recall", "sqlite"], ["status"]):
            p = subprocess.run([*bite, sys.executable, "-m", "dreamdb", *args, "--vault", str(fresh)], capture_output=True,
                               text=True, timeout=60)
            said = p.stdout + p.stderr
            assert p.returncode == 0 and "knowledge/only.md" in said and "cannot" in said and "read" in said, (args, said)
            assert "no notes yet" not in said and "no indexable text" not in said, (args, said)
    finally:
        note.chmod(0o644)
        if (tiny_vault.parent / "fresh").exists():
            (tiny_vault.parent / "fresh" / "_dream_context" / "knowledge" / "only.md").chmod(0o644)
    assert _recall_ids(tiny_vault, "sqlite postgres")[0] == ["knowledge/why-sqlite"]


def test_a_note_removed_while_the_sync_runs_is_said_so_and_gone_at_the_next(tiny_vault, monkeypatch):
    """QA round 69 E-L4: a note deleted between the sync's walk and its read was "cannot read (No such file or
    directory)" (since QA round 69 H1's fix it must not be kept as an unreadable note's documents are)."""
    from dreamdb.store import sync as S

    gone = write_doc(tiny_vault, "knowledge/gone.md", "---\ntitle: Gone\n---\nzebra body\n")
    write_doc(tiny_vault, "knowledge/stays.md", "---\ntitle: Stays\n---\nzebra too\n")
    index = dreamdb.open(tiny_vault)
    assert sorted(h.doc_id for h in index.recall("zebra")) == ["knowledge/gone", "knowledge/stays"]
    gone.write_text("---\ntitle: Gone\n---\nzebra body, edited\n")
    real = S.read_head

    def removed_meanwhile(path, limit):
        if path.name == "gone.md" and path.exists():
            path.unlink()
        return real(path, limit)

    monkeypatch.setattr(S, "read_head", removed_meanwhile)
    warned = index.sync().warnings
    assert "knowledge/gone.md: removed while the sync ran; not read (the next sync reads it again if it is back)" \
        in warned, warned
    assert [h.doc_id for h in index.recall("zebra")] == ["knowledge/stays"]  # (its lazy sync removed it)
    assert index.conn.execute("SELECT COUNT(*) FROM files WHERE path = 'knowledge/gone.md'").fetchone()[0] == 0
    assert _integrity(index) == "ok"


def test_a_note_whose_folder_is_moved_away_and_back_during_a_sync_is_read_by_the_next(tiny_vault, monkeypatch):
    """QA round 86-A H1: a file missing when the sync read it (its folder moved away, then back, as a tool or IDE
    does) was stored as unreadable with the stat of the walk, which the file had again once back: every later sync
    took it for unchanged, and its notes were gone from the index for good (`sync --check` passed). Its documents
    indexed before stay, and the next sync reads it; a new file so missed is added by the next sync."""
    from dreamdb.store import sync as S

    moved = write_doc(tiny_vault, "knowledge/moved.md", "---\ntitle: Moved\n---\nquokka body\n")
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall("quokka")] == ["knowledge/moved"]
    moved.write_text("---\ntitle: Moved\n---\nquokka body, now with a wombat\n")
    new = write_doc(tiny_vault, "knowledge/new.md", "---\ntitle: New\n---\nwombat too\n")
    real = S.read_head

    def away_and_back(path, limit):
        if path.name in ("moved.md", "new.md"):
            away = path.with_name(path.name + ".away")
            path.rename(away)
            try:
                return real(path, limit)
            finally:
                away.rename(path)
        return real(path, limit)

    monkeypatch.setattr(S, "read_head", away_and_back)
    warned = index.sync().warnings
    assert sum("removed while the sync ran" in w for w in warned) == 2, warned
    assert [h.doc_id for h in index.recall("quokka", )] == ["knowledge/moved"]  # (kept as indexed before)
    monkeypatch.setattr(S, "read_head", real)
    report = index.sync()
    assert (report.added, report.changed) == (1, 1), report
    assert sorted(h.doc_id for h in index.recall("wombat")) == ["knowledge/moved", "knowledge/new"]
    assert new.exists() and _integrity(index) == "ok"


@pytest.mark.parametrize("how", ["vault moved away and back", "folder replaced by a file", "folder replaced by a loop"])
def test_a_note_missed_when_its_path_was_gone_for_a_moment_is_read_by_the_next_sync(tiny_vault, monkeypatch, how):
    """QA round 87 H1, H2: the vault itself moved away and back during a sync (no recorded folder's time changes), or
    a folder replaced for a moment by a file (ENOTDIR) or a symlink loop (ELOOP): the next sync took the no-change
    path, or stored the notes as unreadable with the stat they have again, and they were never indexed (`sync
    --check` passed). The folder is recorded as unscanned: the next sync walks again and reads them."""
    from dreamdb.store import sync as S

    write_doc(tiny_vault, "knowledge/sub/old.md", "---\ntitle: Old\n---\nnumbat notes\n")
    index = dreamdb.open(tiny_vault)
    assert [h.doc_id for h in index.recall("numbat")] == ["knowledge/old"]
    write_doc(tiny_vault, "knowledge/sub/fresh.md", "---\ntitle: Fresh\n---\nnumbat and quoll\n")
    real = S.read_head
    sub = tiny_vault / "knowledge" / "sub"

    def gone_for_a_moment(path, limit):
        if path.name != "fresh.md":
            return real(path, limit)
        moved = tiny_vault if how.startswith("vault") else sub
        away = moved.with_name(moved.name + ".away")
        moved.rename(away)
        if how == "folder replaced by a file":
            sub.write_text("not a folder")
        elif how == "folder replaced by a loop":
            sub.symlink_to(sub)
        try:
            return real(path, limit)
        finally:
            if sub.is_symlink() or sub.is_file():
                sub.unlink()
            away.rename(moved)

    monkeypatch.setattr(S, "read_head", gone_for_a_moment)
    warned = index.sync().warnings
    assert any("knowledge/sub/fresh.md: removed while the sync ran" in w for w in warned), warned
    monkeypatch.setattr(S, "read_head", real)
    report = index.sync()
    assert report.added == 1, report
    assert sorted(h.doc_id for h in index.recall("numbat")) == ["knowledge/fresh", "knowledge/old"]
    assert index.sync().added == 0 and _integrity(index) == "ok"


def test_a_new_note_unreadable_for_a_moment_is_read_by_the_next_sync(tiny_vault, monkeypatch):
    """QA round 88 B1: a note never indexed whose read failed for a moment (its folder unsearchable, made searchable
    again: neither the folder's time nor the file's stat changes) was stored as unreadable with its stat, and no later
    sync read it (status said to fix its permissions, which were fine). Its change time is not stored: the next sync
    reads it."""
    from dreamdb.store import sync as S

    index = dreamdb.open(tiny_vault)
    index.sync()
    write_doc(tiny_vault, "knowledge/perm-note.md", "---\ntitle: Perm\n---\nplatypus permission body\n")
    time.sleep(0.05)  # (a few ticks of the file system's clock: not a racily clean file, re-read anyway)
    real = S.read_head

    def denied(path, limit):
        if path.name == "perm-note.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, limit)

    monkeypatch.setattr(S, "read_head", denied)
    first = index.sync()
    assert first.added == 1 and any("perm-note.md: cannot read (Permission denied)" in w for w in first.warnings)
    assert index.conn.execute("SELECT sha256 FROM files WHERE path = 'knowledge/perm-note.md'").fetchone() == (
        S.UNREADABLE,)
    # while it stays unreadable, every sync says so and counts it unchanged: no new generation (QA round 89 F2)
    generation = index.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    again = index.sync()
    assert again.changed == 0 and any("perm-note.md: cannot read" in w for w in again.warnings), again
    assert index.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone() == generation
    monkeypatch.setattr(S, "read_head", real)  # (readable again: its folder searchable again, say)
    report = index.sync()
    assert report.changed == 1 and not report.warnings, report
    assert [h.doc_id for h in index.recall("platypus")] == ["knowledge/perm-note"]
    assert index.sync().changed == 0 and _integrity(index) == "ok"


def test_a_note_read_from_another_copy_of_the_vault_for_a_moment_is_read_again(tiny_vault, monkeypatch):
    """QA round 88 B2: the vault swapped for a copy while the sync read a note (the copy's text differs): the copy's
    text was stored with the real file's stat, so once the real vault came back no sync read it again. A file whose
    stat after the read is not the walk's is stored without its change time: the next sync reads it."""
    from dreamdb.store import sync as S

    note = write_doc(tiny_vault, "knowledge/swap.md", "---\ntitle: Swap\n---\nokapi original\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    copy = tiny_vault.with_name("copy")
    shutil.copytree(tiny_vault, copy, ignore=shutil.ignore_patterns(".dreamdb"))
    (copy / "knowledge" / "swap.md").write_text("---\ntitle: Swap\n---\nokapi impostor text\n")
    note.write_text("---\ntitle: Swap\n---\nokapi real edit\n")
    time.sleep(0.05)  # (not racily clean: that alone would make the next sync read it again)
    real, away = S.read_head, tiny_vault.with_name("away")

    def swapped(path, limit):
        if path.name == "swap.md" and not away.exists():
            tiny_vault.rename(away)
            copy.rename(tiny_vault)
        return real(path, limit)

    monkeypatch.setattr(S, "read_head", swapped)
    index.sync()
    tiny_vault.rename(copy)  # the real vault back
    away.rename(tiny_vault)
    body = lambda: index.conn.execute("SELECT body FROM documents WHERE doc_id = 'knowledge/swap'").fetchone()[0]  # noqa: E731
    assert "impostor" in body()
    monkeypatch.setattr(S, "read_head", real)
    index.sync()
    assert "real edit" in body() and "impostor" not in body()


def test_a_pinned_value_that_is_no_flag_is_warned_of(tiny_vault):
    """QA round 72-A: ``pinned: maybe`` was read as not pinned without a word, while a bad date or status is warned of."""
    write_doc(tiny_vault, "knowledge/maybe.md", "---\ntitle: Maybe\npinned: maybe\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/list.md", "---\ntitle: List\npinned: [x]\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/yes.md", "---\ntitle: Yes\npinned: 'Yes'\n---\nbody\n")
    report = dreamdb.open(tiny_vault).sync()
    pinned = [w for w in report.warnings if "frontmatter pinned" in w]
    assert sorted(pinned) == ["knowledge/list.md: frontmatter pinned is a list, not true or false; read as not pinned",
                              "knowledge/maybe.md: frontmatter pinned 'maybe' is not true or false; read as not pinned"]


def test_a_frontmatter_list_or_mapping_is_said_as_one_not_as_its_items(tiny_vault):
    """QA round 144-F F1: ``confidence: [0.5]`` and ``pinned: [true]`` were quoted by their items joined, so the
    warnings said "confidence '0.5' is not a number from 0 to 1" and "pinned 'true' is not true or false"; a list or
    a mapping is said by its kind, as a date's is, and a status or title mapping is no Python dict."""
    write_doc(tiny_vault, "knowledge/listed.md", "---\ntitle: Listed\nconfidence: [0.5]\npinned: [true]\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/mapped.md", "---\ntitle: Mapped\nconfidence: {a: 0.5}\npinned: {on: true}\n"
                                                 "status: {state: draft}\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/named.md", "---\ntitle: {text: Named}\nexpires: {on: 2030-01-01}\n---\nbody\n")
    report = dreamdb.open(tiny_vault).sync()
    said = sorted(w for w in report.warnings if "frontmatter" in w)
    assert said == [
        "knowledge/listed.md: frontmatter confidence is a list, not a number from 0 to 1; ignored",
        "knowledge/listed.md: frontmatter pinned is a list, not true or false; read as not pinned",
        "knowledge/mapped.md: frontmatter confidence is a mapping, not a number from 0 to 1; ignored",
        "knowledge/mapped.md: frontmatter pinned is a mapping, not true or false; read as not pinned",
        "knowledge/mapped.md: frontmatter status is a mapping, not a word; ignored",
        "knowledge/named.md: frontmatter expires is a mapping, not a date (YYYY-MM-DD…); ignored",
        "knowledge/named.md: frontmatter title is a mapping, not text; its values joined"], said


def test_a_frontmatter_description_or_title_that_is_no_text_is_said_with_what_is_read(tiny_vault):
    """QA round 144-I F5: a description written as a list or a mapping was indexed without a word, a mapping's keys
    dropped (``{why: caching, how: lru}`` stored as "caching lru"), a title mapping was said to have "its items
    joined" though its values alone are, and a set (``!!set``) was read as Python's repr ("{'a', 'b'}"). Each is said
    by its kind with what is read, as the other keys' values are."""
    write_doc(tiny_vault, "knowledge/mapped.md", "---\ntitle: {text: Mapped}\ndescription: {why: caching, how: lru}\n"
                                                 "---\nbody\n")
    write_doc(tiny_vault, "knowledge/listed.md", "---\ntitle: Listed\nsummary: [one, two]\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/set.md", "---\ntitle: !!set {b, a}\ndescription: plain words\n---\nbody\n")
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    said = sorted(w for w in report.warnings if "frontmatter" in w)
    assert said == [
        "knowledge/listed.md: frontmatter summary is a list, not text; its items joined",
        "knowledge/mapped.md: frontmatter description is a mapping, not text; its values joined",
        "knowledge/mapped.md: frontmatter title is a mapping, not text; its values joined",
        "knowledge/set.md: frontmatter title is a set, not text; its items joined"], said
    rows = index.conn.execute("SELECT doc_id, title, description FROM documents ORDER BY doc_id").fetchall()
    assert [tuple(r) for r in rows] == [("knowledge/listed", "Listed", "one two"),
                                        ("knowledge/mapped", "Mapped", "caching lru"),
                                        ("knowledge/set", "a b", "plain words")], rows


def test_a_frontmatter_description_yaml_reads_as_zero_or_false_is_indexed_as_written(tiny_vault):
    """QA round 146-C F3: ``description: 0`` and ``description: No`` (false in YAML 1.1) gave way to ``summary`` (none
    here: an empty description) though the README reads such keys as YAML reads them, as ``title: no`` is "false".
    An empty or null description still gives way to summary."""
    write_doc(tiny_vault, "knowledge/flag-b.md", "---\ntitle: Zero\ndescription: 0\n---\nfeature flag default\n")
    write_doc(tiny_vault, "knowledge/flag-a.md", "---\ntitle: No\ndescription: No\n---\nfeature flag rollout\n")
    write_doc(tiny_vault, "knowledge/flag-c.md", "---\ntitle: Nothing\ndescription:\nsummary: the summary\n---\nflag\n")
    write_doc(tiny_vault, "knowledge/flag-d.md", "---\ntitle: Empty\ndescription: ''\nsummary: its summary\n---\nf\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    rows = index.conn.execute("SELECT doc_id, title, description FROM documents WHERE doc_id LIKE 'knowledge/flag-%'"
                              " ORDER BY doc_id").fetchall()
    assert [tuple(r) for r in rows] == [("knowledge/flag-a", "false", "false"), ("knowledge/flag-b", "Zero", "0"),
                                        ("knowledge/flag-c", "Nothing", "the summary"),
                                        ("knowledge/flag-d", "Empty", "its summary")], rows


def test_a_changelog_text_field_written_as_a_list_or_object_is_said_once_for_the_file(tiny_vault):
    """QA round 144-J F2: an entry's summary or description written as an object or an array was indexed without a
    word, an object's keys dropped ("2026-01-01 — caching lru"), as the frontmatter's were before 144-I F5. One line
    for the file says how many entries hold one, naming the first entry (its place, its date) and what is read."""
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-01-01", "summary": {"why": "caching", "how": "lru"}},
        {"date": "2026-01-02", "description": ["first", "second"]},
        {"summary": "plain text", "scope": ["sync", "cli"]},
        {"date": "2026-01-04", "type": "fix", "scope": "sync", "summary": "all text: not said"}]))
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    assert [w for w in report.warnings if "no text" in w] == [
        "core/CHANGELOG.json: 3 entries have a summary, description, type or scope that is no text, e.g. entry 1"
        " (2026-01-01): summary is a mapping, not text; its values joined"], report.warnings
    titles = sorted(r[0] for r in index.conn.execute("SELECT title FROM documents WHERE type = 'changelog'"))
    assert titles == ["2026-01-01 — caching lru", "2026-01-02 — first second", "2026-01-04 [fix] sync — all text:"
                      " not said", "sync cli — plain text"], titles
    write_doc(tiny_vault, "core/CHANGELOG.json", json.dumps([{"summary": "fine"}, {"type": ["fix", "docs"]}]))
    assert [w for w in index.sync().warnings if "no text" in w] == [
        "core/CHANGELOG.json: 1 entry has a summary, description, type or scope that is no text, e.g. entry 2: type is"
        " a list, not text; its items joined"]


def test_an_empty_name_or_title_list_or_mapping_gives_way_to_the_next_key(tiny_vault):
    """QA round 144-J F10: ``name: []`` (or ``{}``) hid the ``title:`` beside it: the title was the file's slug, with
    "frontmatter name is a list, not text; its items joined". An empty value gives way to the next key (name, title,
    claim), as ``description: []`` gives way to summary; a list with items is still read and said."""
    write_doc(tiny_vault, "knowledge/listed.md", "---\nname: []\ntitle: Real Title Here\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/mapped.md", "---\nname: {}\ntitle: {}\nclaim: Claimed Title\n---\nbody\n")
    write_doc(tiny_vault, "knowledge/full.md", "---\nname: [Named, Twice]\ntitle: Unread Title\n---\nbody\n")
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    assert sorted(w for w in report.warnings if "frontmatter" in w) == [
        "knowledge/full.md: frontmatter name is a list, not text; its items joined"], report.warnings
    rows = index.conn.execute("SELECT doc_id, title FROM documents WHERE doc_id IN ('knowledge/listed',"
                              " 'knowledge/mapped', 'knowledge/full') ORDER BY doc_id").fetchall()
    assert [tuple(r) for r in rows] == [("knowledge/full", "Named Twice"), ("knowledge/listed", "Real Title Here"),
                                        ("knowledge/mapped", "Claimed Title")], rows


def test_a_folder_nested_deeper_than_pythons_recursion_limit_is_read(tmp_path, capsys):
    """QA round 80-A F3: the folder walk recursed once per level (os.walk too, on Python 3.10 and 3.11), and past
    ~990 nested folders every command exited 70 with RecursionError. The walk keeps a stack of its own."""
    import sys

    from dreamdb.cli import main

    vault = tmp_path / "_dream_context"
    made: list[str] = []
    try:
        for top in ("knowledge", "notes"):
            deep = str(vault / top)
            os.makedirs(deep)
            for _ in range(sys.getrecursionlimit() + 100):  # (os.makedirs recurses too)
                deep = os.path.join(deep, "d")
                os.mkdir(deep)
                made.append(deep)
            made.append(os.path.join(deep, "n.md"))
            with open(made[-1], "w", encoding="utf-8") as f:
                f.write("---\ntitle: Abyssal note\n---\nThe abyssal word.\n")
        with dreamdb.open(vault) as index:
            assert [h.doc_id for h in index.recall("abyssal")] == ["knowledge/n"]
        for args in (["status"], ["list"], ["recall", "abyssal"]):
            assert main([*args, "--vault", str(vault)]) == 0, capsys.readouterr().err
        assert "1 .md file outside the folders dreamdb reads" in (capsys.readouterr().out)
    finally:  # (deepest first: shutil.rmtree, which pytest's cleanup uses, recurses too)
        for path in reversed(made):
            (os.unlink if path.endswith(".md") else os.rmdir)(path)
    from dreamdb.vault.discover import walk

    # the walk is os.walk's: same folders, same order, pruning in place, folder links listed and not entered
    tree = tmp_path / "tree"
    for rel in ("a/b/c", "a/x", "b", "c/.hidden/y"):
        (tree / rel).mkdir(parents=True)
        (tree / rel / "f.md").write_text("x", encoding="utf-8")
    (tree / "link").symlink_to(tree / "a")

    def listing(fn):
        out = []
        for folder, dirs, files in fn(tree):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            out.append((folder, list(dirs), sorted(files)))
        return out

    assert listing(walk) == listing(os.walk) and any("link" in dirs for _f, dirs, _n in listing(walk))


def test_a_quoted_date_time_is_indexed_in_utc_as_an_unquoted_one(tmp_path):
    """QA round 80-A F5: YAML reads an unquoted date-time as a datetime, which was indexed in UTC, and a quoted one
    as text, which kept its offset (docs/json.md promises UTC): both are UTC now; a date alone stays a date."""
    vault = tmp_path / "_dream_context"
    for slug, value in (("q", "'2026-08-01T23:30:00-05:00'"), ("u", "2026-08-01T23:30:00-05:00"),
                        ("v", "'2026-08-01 12:00:00 +0900'"), ("w", "'2026-08-01T24:00:00'"), ("x", "'2026-08-01'"),
                        ("y", "'2026-08-01T25:00:00'")):
        write_doc(vault, f"knowledge/{slug}.md", f"---\ntitle: {slug}\nupdated: {value}\n---\nword\n")
    with dreamdb.open(vault) as index:
        dates = {d["doc_id"]: d["date"] for d in index.list_documents()}
    assert dates == {"knowledge/q": "2026-08-02T04:30:00Z", "knowledge/u": "2026-08-02T04:30:00Z",
                     "knowledge/v": "2026-08-01T03:00:00Z", "knowledge/w": "2026-08-02T00:00:00Z",
                     "knowledge/x": "2026-08-01", "knowledge/y": "2026-08-01"}


def test_a_note_saved_as_utf16_or_utf32_with_its_byte_order_mark_is_read(tmp_path):
    """QA round 80-A F6: a note a Windows editor saved as "Unicode" (UTF-16 with its mark) was skipped as binary,
    "looks binary (NUL bytes)". Read as the mark says; one whose bytes are not that encoding is read with a warning."""
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "u16.md").write_bytes("---\ntitle: Wide note\n---\nZanzibar ağaç.\n".encode("utf-16"))
    (vault / "knowledge" / "u32be.md").write_bytes(b"\x00\x00\xfe\xff" + "Zanzibar büyük.\n".encode("utf-32-be"))
    (vault / "knowledge" / "odd.md").write_bytes(b"\xff\xfe" + "Zanzibar".encode("utf-16-le") + b"\x00")
    # UTF-16's mark, then U+0000: its first bytes are UTF-32's mark (QA round 81-A F7)
    (vault / "knowledge" / "nul.md").write_bytes("\ufeff\x00 Zanzibar nul.\n".encode("utf-16-le"))
    with dreamdb.open(vault) as index:
        report = index.sync()
        hits = {h.doc_id: h for h in index.recall("zanzibar", top=5)}
        assert set(hits) == {"knowledge/u16", "knowledge/u32be", "knowledge/odd", "knowledge/nul"}
        assert hits["knowledge/u16"].title == "Wide note" and [h.doc_id for h in index.recall("ağaç")] == ["knowledge/u16"]
        assert [h.doc_id for h in index.recall("büyük")] == ["knowledge/u32be"]
    assert [w for w in report.warnings if "odd.md" in w] == [
        "knowledge/odd.md: starts with a UTF-16 byte-order mark but is not UTF-16 text; undecodable bytes replaced"]
    assert not [w for w in report.warnings if "u16" in w or "u32be" in w or "nul.md" in w]


def test_sync_check_reads_every_file_again_and_finds_a_change_no_stat_showed(tiny_vault):
    """QA round 93-A F5: a change the stat pre-filter cannot see (times set back by a tool, a file system coarser
    than its edits) left stale text that ``sync --check`` called ok: it checked the index, not the vault. It now
    reads and hashes every file again, trusting no stored stat; unchanged files are not parsed again."""
    write_doc(tiny_vault, "knowledge/a.md", "alpha zzoldword\n")
    write_doc(tiny_vault, "knowledge/b.md", "bravo\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    path = tiny_vault / "knowledge" / "a.md"
    path.write_text("alpha zznewword\n")
    st = os.stat(path)
    with index.conn:  # (the stat stored as if the sync had seen this one: the change it missed)
        index.conn.execute("UPDATE files SET mtime_ns = ?, size = ?, ctime_ns = ? WHERE path = 'knowledge/a.md'",
                           (st.st_mtime_ns, st.st_size, st.st_ctime_ns))
    r = index.sync()
    assert (r.changed, r.unchanged) == (0, 2) and index.recall("zznewword") == []  # (stale: what --check is for)
    generation = index.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    r = index.sync(check=True, reread=False)  # (what embed refresh asks before it embeds: damage only)
    assert (r.changed, r.unchanged) == (0, 2) and index.recall("zznewword") == []
    r = index.sync(check=True)
    assert (r.added, r.changed, r.unchanged) == (0, 1, 1) and not r.rebuilt
    assert [h.doc_id for h in index.recall("zznewword")] == ["knowledge/a"] and index.recall("zzoldword") == []
    assert index.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone() != generation
    r = index.sync()
    assert (r.changed, r.unchanged) == (0, 2)
    index.close()


def test_excalidraw_boards_of_every_layout_contribute_their_text_elements(tiny_vault):
    """QA round 98-B F2: boards an older Obsidian Excalidraw plugin wrote (``# Text Elements``, before 2.x) and boards
    written as their scene JSON alone were indexed with no body, silently. Both give their text elements, never the
    scene JSON; a board with no text at all is indexed by its title, with a warning."""
    scene = {"type": "excalidraw", "elements": [
        {"type": "rectangle", "id": "r1"},
        {"type": "text", "id": "t1", "text": "Tombstone\ncompaction", "originalText": "Tombstone compaction pipeline"},
        {"type": "text", "id": "t2", "text": "old label", "isDeleted": True},
        {"type": "text", "id": "t3", "text": "nightly vacuum"}]}
    drawing = "%%\n# Drawing\n```json\n" + json.dumps(scene, indent=1) + "\n```\n%%\n"
    write_doc(tiny_vault, "knowledge/old.excalidraw.md",
              "---\nexcalidraw-plugin: parsed\n---\n# Text Elements\nRestart SSH service ^v9HcsL9e\n\nRotate keys ^a1b2c3d4\n\n"
              + drawing)
    write_doc(tiny_vault, "knowledge/new.excalidraw.md",
              "---\nexcalidraw-plugin: parsed\n---\n==⚠ Switch to EXCALIDRAW VIEW ⚠==\n\n## Text Elements\nKiwi bird ^k1w1b1rd\n\n"
              "## Element Links\nx ^y\n\n" + drawing)
    write_doc(tiny_vault, "knowledge/scene.excalidraw.md", "---\nexcalidraw-plugin: parsed\n---\n" + drawing)
    write_doc(tiny_vault, "knowledge/blank.excalidraw.md", "---\ntitle: Empty board\nexcalidraw-plugin: parsed\n---\n"
              "%%\n# Drawing\n```compressed-json\nN4KAkARALgngDgUwgLgAQQQDwMYEMA2AlgCYBOuA7hADTgQBuCpAzoQPYB2KqATLZMzYBXUtiRoIACyhQ4zZAHoFAc0JRJQgEYA6bGwC2CgF7N6hbEcK4VCwjwBVcbWJeWvvHtk8gAA\n```\n%%\n")
    # (QA round 99-A: elements not a list, a scene nested past the recursion limit, a text element starting with "# ",
    # an empty section beside a scene with text, a json block of the note before the scene's)
    for name, scene_json in (("bool", '{"elements": true}'), ("deep", "[" * 100000 + "]" * 100000)):
        write_doc(tiny_vault, f"knowledge/{name}.excalidraw.md",
                  "---\nexcalidraw-plugin: parsed\n---\n%%\n## Drawing\n```json\n" + scene_json + "\n```\n%%\n")
    write_doc(tiny_vault, "knowledge/hashed.excalidraw.md", "---\nexcalidraw-plugin: parsed\n---\n## Text Elements\n"
              "Dingo first ^aaaaaa11\n\n# Heading text in a box ^bbbbbb22\n\nEchidna after hash ^cccccc33\n%%\n")
    write_doc(tiny_vault, "knowledge/emptysection.excalidraw.md", "---\nexcalidraw-plugin: parsed\n---\n```json\n"
              '{"elements": [{"type": "text", "text": "Manatee outside"}]}\n```\n# Excalidraw Data\n## Text Elements\n%%\n'
              + drawing.replace("# Drawing", "## Drawing"))
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    bodies = dict(index.conn.execute("SELECT slug, body FROM documents WHERE slug LIKE '%.excalidraw'"))
    assert bodies["bool.excalidraw"] == bodies["deep.excalidraw"] == ""
    assert bodies["hashed.excalidraw"] == "Dingo first\n# Heading text in a box\nEchidna after hash"
    assert bodies["emptysection.excalidraw"] == "Tombstone compaction pipeline\nnightly vacuum"
    for name in ("bool", "deep", "blank"):
        assert any(w.startswith(f"knowledge/{name}.excalidraw.md: an Excalidraw board with no text") for w in report.warnings)
    report.warnings = [w for w in report.warnings if not w.startswith(("knowledge/bool.", "knowledge/deep."))]
    assert bodies["old.excalidraw"] == "Restart SSH service\nRotate keys"
    assert bodies["new.excalidraw"] == "Kiwi bird"
    assert bodies["scene.excalidraw"] == "Tombstone compaction pipeline\nnightly vacuum"
    assert bodies["blank.excalidraw"] == ""
    assert [w for w in report.warnings if "excalidraw" in w] == [
        "knowledge/blank.excalidraw.md: an Excalidraw board with no text elements found (neither a Text Elements"
        " section nor an uncompressed scene with text); indexed by its title alone"]
    assert [h.doc_id for h in index.recall("restart ssh service")] == ["knowledge/old.excalidraw"]
    assert {h.doc_id for h in index.recall("tombstone vacuum")} == {"knowledge/scene.excalidraw",
                                                                     "knowledge/emptysection.excalidraw"}
    assert index.recall("manatee") == []
    assert index.recall("rectangle isDeleted") == []  # (never the scene JSON itself)
    index.close()


def test_excalidraw_boards_with_crlf_line_ends_give_their_text(tiny_vault):
    """QA round 119-B F1: a board checked out with CR LF line ends (git's core.autocrlf, a Windows checkout) was
    indexed with no text, its Text Elements heading and scene fence unmatched, with a warning that blamed the board."""
    scene = '{"type": "excalidraw", "elements": [{"type": "text", "text": "Scene only gauge"}]}'
    boards = {"sections": "---\nexcalidraw-plugin: parsed\n---\n# Excalidraw Data\n## Text Elements\nSleep debt gauge"
                          " ^abc12345\n\n%%\n## Drawing\n```json\n{}\n```\n%%\n",
              "scene": "---\nexcalidraw-plugin: parsed\n---\n## Drawing\n```json\n" + scene + "\n```\n",
              "older": "---\nexcalidraw-plugin: parsed\n---\n# Text Elements\nRotate keys gauge ^a1b2c3d4\n\n%%\n"}
    for name, text in boards.items():
        for ends in ("\n", "\r\n"):
            suffix = "-crlf" if ends == "\r\n" else ""
            (tiny_vault / "knowledge").mkdir(exist_ok=True)
            (tiny_vault / "knowledge" / f"{name}{suffix}.excalidraw.md").write_bytes(text.replace("\n", ends).encode())
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    bodies = dict(index.conn.execute("SELECT slug, body FROM documents WHERE slug LIKE '%.excalidraw'"))
    assert [w for w in report.warnings if "excalidraw" in w] == []
    for name in boards:
        assert bodies[f"{name}-crlf.excalidraw"] == bodies[f"{name}.excalidraw"] != "", name
    assert bodies["sections.excalidraw"] == "Sleep debt gauge" and bodies["scene.excalidraw"] == "Scene only gauge"
    assert len(index.recall("gauge", top=10)) == 6
    index.close()


def test_a_vault_inside_the_vault_is_not_read_as_its_notes(tiny_vault):
    """QA round 100-A F3: a ``_dream_context`` folder inside the vault (another project's vault copied into
    ``knowledge/``) was read as this vault's notes: found twice beside it when both were searched, and its note of a
    name this vault has took that name's id (this vault's own note became ``-2``, so ``update`` of the id edited the
    other vault's file). It is skipped, with a warning; its notes are this vault's no more."""
    write_doc(tiny_vault, "knowledge/decisions/wal-mode.md", "---\nname: WAL mode\n---\nWe chose WAL.\n")
    inner = tiny_vault / "knowledge" / "aaa" / "_dream_context"
    write_doc(inner, "knowledge/wal-mode.md", "---\nname: Their WAL mode\n---\nThey chose WAL too.\n")
    write_doc(inner, "core/CHANGELOG.json", '[{"date": "2026-01-01", "type": "fix", "summary": "theirs"}]')
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    assert [w for w in report.warnings if w.startswith("knowledge/aaa/_dream_context: skipped (a vault of its own")]
    rows = dict(index.conn.execute("SELECT doc_id, source_path FROM documents"))
    assert rows == {"knowledge/wal-mode": "knowledge/decisions/wal-mode.md"}, rows
    assert dreamdb.open([tiny_vault, inner]).recall("WAL", top=5)[1].doc_id == "knowledge/wal-mode"
    assert index.status()["unindexed_markdown"] == 0
    # nor are they its notes for writes (QA round 101-A F1: the outer note's id was refused as naming two documents,
    # and the inner vault's notes were edited under the outer vault's lock, by path or by a name only they held)
    write_doc(inner, "knowledge/only-inner.md", "---\nname: Only inner\n---\ntheirs\n")
    assert index.update("knowledge/wal-mode", append="Ours.")["doc_id"] == "knowledge/wal-mode"
    for name in ("knowledge/aaa/_dream_context/knowledge/wal-mode.md", "knowledge/only-inner"):
        with pytest.raises(dreamdb.DreamdbError):
            index.update(name, append="x")
        with pytest.raises(dreamdb.DreamdbError):
            index.delete(name)
    assert (inner / "knowledge" / "wal-mode.md").read_text() == "---\nname: Their WAL mode\n---\nThey chose WAL too.\n"
    assert (inner / "knowledge" / "only-inner.md").exists()


def test_an_index_of_a_newer_dreamdb_is_said_to_be_newer_when_rebuilt(tiny_vault):
    """QA round 100-A F2: an older dreamdb of the same schema rebuilt a newer one's index in its own format, saying
    "built by another version"; with a hook of an older install and a newer command line on one vault, each rebuilt
    it in turn. The rebuild stays (the index is a cache, and the older analyzer cannot read the newer terms), and
    the warning says the index was newer and what to do."""
    from dreamdb.store.sync import INDEX_FORMAT

    write_doc(tiny_vault, "knowledge/a.md", "---\nname: Alpha\n---\nalpha words\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    parts = INDEX_FORMAT.split(".")
    for stored, newer in ((".".join([parts[0], str(int(parts[1]) + 1), parts[2]]), True),
                          (".".join([parts[0], str(int(parts[1]) - 1), parts[2]]), False), ("x.y", False),
                          ("", False)):  # ('' as NULL: "unknown", QA round 122-B F7)
        with index.conn:
            index.conn.execute("UPDATE meta SET value = ? WHERE key = 'analyzer_version'", (stored,))
            # (as an index no version of this one synced before: one it did is two versions taking turns, said so)
            index.conn.execute("DELETE FROM meta WHERE key = 'formats_written'")
        warnings = index.sync().warnings
        said = [w for w in warnings if f"(index format {stored or 'unknown'}, this one writes {INDEX_FORMAT})" in w]
        assert len(said) == 1, warnings
        assert said[0].startswith("the index was built by a newer version" if newer else
                                  "the index was built by another version"), said
        assert ("use one version on a vault" in said[0]) is newer
        assert [h.doc_id for h in index.recall("alpha")] == ["knowledge/a"]
    # a newer version's index that this one had written before: two versions taking turns, the older told so too (QA
    # round 132-E F6: it said only "newer", without the advice the newer one gave)
    newer_format = ".".join([parts[0], str(int(parts[1]) + 1), parts[2]])
    with index.conn:
        index.conn.execute("UPDATE meta SET value = ? WHERE key = 'analyzer_version'", (newer_format,))
        index.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('formats_written', ?)",
                           (f"{INDEX_FORMAT},{newer_format}",))
    said = [w for w in index.sync().warnings if "taking turns" in w]
    assert len(said) == 1 and said[0].startswith(f"the index was indexed by a newer version of dreamdb (index format"
                                                 f" {newer_format}) since this one"), said


def test_status_leaves_out_a_nested_vault_wherever_it_is(tiny_vault):
    """QA round 101-A F12: a vault inside the vault was counted among the notes outside the folders dreamdb reads
    under notes/ or the vault's top, and not under knowledge/: it is a vault of its own, said by the sync, and
    counted nowhere."""
    write_doc(tiny_vault, "knowledge/a.md", "# A\nalpha\n")
    write_doc(tiny_vault, "notes/stray.md", "a note dreamdb does not read\n")
    for where in ("notes/_dream_context", "_dream_context", "knowledge/x/_dream_context"):
        write_doc(tiny_vault / where, "knowledge/inner.md", "# Inner\n")
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    status = index.status()
    assert (status["unindexed_markdown"], status["unindexed_examples"]) == (1, ["notes/stray.md"]), status
    assert sum("a vault of its own" in w for w in warnings) == 1, warnings  # (knowledge/x/: the folders it reads)


def test_a_file_with_nothing_readable_is_no_change_to_a_check(tiny_vault):
    """QA round 101-B F1: a binary note or a CHANGELOG.json that is no JSON was "1 changed" at every
    ``sync --check`` (stored with no hash, so never the same), and each check started a new generation, so long-lived
    processes dropped their caches. Read again and found as unreadable as before, it is unchanged; a file that
    becomes readable is a change."""
    write_doc(tiny_vault, "knowledge/a.md", "# A\nalpha\n")
    (tiny_vault / "knowledge" / "b.md").write_bytes(b"\x00\xff binary")
    write_doc(tiny_vault, "core/CHANGELOG.json", "{not json")
    index = dreamdb.open(tiny_vault)
    assert index.sync().added == 3

    def generation():
        return index.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]

    before = generation()
    for _ in range(2):
        report = index.sync(check=True)
        assert (report.changed, report.unchanged, report.rebuilt) == (0, 3, False), report.as_dict()
    assert generation() == before
    assert sorted(index.status()["unreadable_examples"]) == ["core/CHANGELOG.json", "knowledge/b.md"]
    write_doc(tiny_vault, "knowledge/b.md", "# B\nbeta now\n")
    assert index.sync().changed == 1 and [h.doc_id for h in index.recall("beta")] == ["knowledge/b"]


def test_a_note_too_long_is_indexed_up_to_its_limit_and_a_late_nul_is_a_space(tiny_vault):
    """QA round 103-C F3/F6: indexing takes about 20 times a note's size in memory (an 80 MB note needed 1.65 GB and,
    under a memory limit, kept the whole vault from being indexed); a markdown file is indexed up to MAX_NOTE_CHARS,
    with a warning. A NUL past the first 8 KB (the binary test reads those) was indexed as is."""
    from dreamdb.vault.parse import MAX_NOTE_CHARS

    line = "filler words of a long generated log line\n"
    big = "---\ntitle: Huge log\n---\nearlyquokka marker\n" + line * (MAX_NOTE_CHARS // len(line) + 10) + "latewombat\n"
    write_doc(tiny_vault, "knowledge/huge.md", big)
    write_doc(tiny_vault, "knowledge/ok.md", "---\ntitle: Ok\n---\nsmallnote body\n")
    write_doc(tiny_vault, "knowledge/nul.md", "---\ntitle: Nul\n---\n" + "x " * 5000 + "before\x00afterword\n")
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    assert any(w.startswith(f"knowledge/huge.md: {len(big):,} characters of text; only the first "
                            f"{MAX_NOTE_CHARS:,} are indexed") for w in report.warnings), report.warnings
    assert "knowledge/nul.md: NUL characters read as spaces" in report.warnings
    assert [h.doc_id for h in index.recall("earlyquokka")] == ["knowledge/huge"]
    assert index.recall("latewombat") == [] and [h.doc_id for h in index.recall("smallnote")] == ["knowledge/ok"]
    body = index.conn.execute("SELECT body FROM documents WHERE doc_id = 'knowledge/nul'").fetchone()[0]
    assert "\x00" not in body and [h.doc_id for h in index.recall("afterword")] == ["knowledge/nul"]
    assert len(index.conn.execute("SELECT body FROM documents WHERE doc_id = 'knowledge/huge'").fetchone()[0]) \
        <= MAX_NOTE_CHARS
    # a memory file is read whole: its sections are documents of their own (QA round 104-A F5: those past the cut
    # were lost)
    section = "## Section {}\n" + line * (MAX_NOTE_CHARS // len(line) // 3) + "\n"
    write_doc(tiny_vault, "core/2.memory.md", "".join(section.format(i) for i in range(4)) + "## Last\nlastsection\n")
    assert not [w for w in index.sync().warnings if "are indexed" in w]
    assert [h.doc_id for h in index.recall("lastsection")] == ["memory/last"]
    # ... each section capped as a note is (QA round 105 F5: one 21 MB section took 387 MB to sync)
    write_doc(tiny_vault, "core/2.memory.md", "## Big\n" + line * (MAX_NOTE_CHARS // len(line) + 10)
              + "## Last\nlastsection\n")
    assert any(w.startswith("core/2.memory.md: the section 'Big' has ") for w in index.sync().warnings)
    assert [h.doc_id for h in index.recall("lastsection")] == ["memory/last"]
    # a body of one line longer than the cap keeps its first 4 Mi characters, cut at a space (QA round 105 F9: empty)
    write_doc(tiny_vault, "knowledge/oneline.md", "---\ntitle: T\n---\nintroword " + "y " * (MAX_NOTE_CHARS // 2 + 5))
    index.sync()
    assert [h.doc_id for h in index.recall("introword")] == ["knowledge/oneline"]
    # a frontmatter block longer than the cap: its metadata is left out, the body after it indexed (QA round 104-A F6:
    # said "not closed by a '---' line", and the YAML indexed as the note's text, its body lost)
    block = "---\ntitle: Fat\nnotes: |\n" + "  yamlfiller line\n" * (MAX_NOTE_CHARS // 18 + 10) + "---\n"
    write_doc(tiny_vault, "knowledge/fat.md", block + "---\nbodyokapi after the block\n")
    warnings = index.sync().warnings
    assert f"knowledge/fat.md: frontmatter block of {len(block):,} characters, more than the {MAX_NOTE_CHARS:,} a" \
           " note is indexed up to; its metadata is left out and the text after it indexed" in warnings, warnings
    assert not [w for w in warnings if "not closed" in w], warnings
    assert [h.doc_id for h in index.recall("bodyokapi")] == ["knowledge/fat"] and index.recall("yamlfiller") == []
    # ... CR LF line ends, a key with its value on the next lines (QA round 111-A F7)
    write_doc(tiny_vault, "knowledge/fat.md", block.replace("title: Fat\nnotes: |", "tags:\n  - a\nnotes: |")
              .replace("\n", "\r\n") + "---\r\nbodyokapi\r\n")
    assert [h.doc_id for h in index.recall("bodyokapi")] == ["knowledge/fat"] and index.recall("yamlfiller") == []
    # ... a first key of a Turkish letter or in quotes too (QA round 110-A F5)
    write_doc(tiny_vault, "knowledge/fat.md", block.replace("title: Fat", "Öncelik: yüksek") + "---\nbodyokapi\n")
    assert [h.doc_id for h in index.recall("bodyokapi")] == ["knowledge/fat"] and index.recall("yamlfiller") == []
    # ... but a long note of prose between two '---' rules is no frontmatter: its first 4 Mi characters are indexed,
    # with no word of a block "not closed" (QA round 109-A F2: 18 characters were, and its words not found)
    write_doc(tiny_vault, "knowledge/rules.md", "---\n" + "This paragraph talks about prosezebra.\n"
              * (MAX_NOTE_CHARS // 39 + 10) + "---\ntail\n")
    warnings = [w for w in index.sync().warnings if w.startswith("knowledge/rules.md")]
    assert len(warnings) == 1 and "only the first 4,194,304 are indexed" in warnings[0], warnings
    assert [h.doc_id for h in index.recall("prosezebra")] == ["knowledge/rules"]
    index.close()


def test_a_note_past_its_read_limit_is_read_by_its_first_bytes_and_hashed_whole(tiny_vault, monkeypatch):
    """QA round 148-C F5: a note of 300 MB, of which 4 Mi characters are indexed, was read whole (644 MB to sync,
    332 MB to check; a note of some GB would run the machine out of memory). Only the bytes that can hold more than
    MAX_NOTE_CHARS characters are kept (parse.note_read_limit), the sha256 is of all of them, read a block at a time
    (a change past them is a change), and a character cut by the limit is no invalid UTF-8 or UTF-16. A note under
    the limit is parsed as ever. (The cap made small here; a file's blocks made small too.)"""
    from hashlib import sha256

    from dreamdb.vault import discover, parse

    monkeypatch.setattr(parse, "MAX_NOTE_CHARS", 2_000)
    monkeypatch.setattr(discover, "READ_BLOCK_BYTES", 4096, raising=False)
    seen: dict[str, int] = {}
    parse_file = parse.parse_file

    def spy(rel_path, kind, doc_type, raw, **kw):
        seen[rel_path] = len(raw)
        return parse_file(rel_path, kind, doc_type, raw, **kw)

    monkeypatch.setattr(parse, "parse_file", spy)
    big = "---\ntitle: Big log\n---\nearlyquokka markerxxx\n" + "überlänge wörter ein langer log\r\n" * 3_000
    note = write_doc(tiny_vault, "knowledge/big.md", big)
    raw = note.read_bytes()
    assert len(raw) == 108_045 and raw[8_007:8_009] == "ä".encode()  # (the limit falls inside a character)
    wide = write_doc(tiny_vault, "knowledge/wide.md", "")
    wide.write_bytes(("---\ntitle: Wide\n---\nppp" + "widewombat 😀 ü\n" * 2_000).encode("utf-16"))
    assert wide.read_bytes()[8_006:8_010] == "😀".encode("utf-16-le")  # (the limit falls between its two halves)
    small = "---\ntitle: Small\n---\n" + "größe ok\r\n" * 180 + "smallokapi\r\n"
    write_doc(tiny_vault, "knowledge/small.md", small)
    index = dreamdb.open(tiny_vault)
    report = index.sync()
    assert seen == {"knowledge/big.md": 8_008, "knowledge/wide.md": 8_008, "knowledge/small.md": len(small.encode())}
    mine = sorted(w for w in report.warnings if w.startswith(("knowledge/big.md", "knowledge/wide.md")))
    assert mine == ["knowledge/big.md: 108,045 bytes of text; only the first 2,000 characters are indexed (split it"
                    " into notes of their own to find the rest)",
                    f"knowledge/wide.md: {wide.stat().st_size:,} bytes of text; only the first 2,000 characters are"
                    " indexed (split it into notes of their own to find the rest)"], report.warnings
    assert not [w for w in report.warnings if "small.md" in w]
    assert parse.note_read_limit(b"---\n") == 8_008 and parse.note_read_limit("\ufeff-".encode("utf-32")) == 16_012
    head, digest, size = discover.read_head(note, parse.note_read_limit)
    assert (head, digest, size) == (raw[:8_008], sha256(raw).hexdigest(), len(raw))
    assert [h.doc_id for h in index.recall("earlyquokka")] == ["knowledge/big"]
    assert [h.doc_id for h in index.recall("widewombat")] == ["knowledge/wide"]
    body = index.conn.execute("SELECT title, body FROM documents WHERE doc_id = 'knowledge/big'").fetchone()
    assert body[0] == "Big log" and 1_900 < len(body[1]) <= 2_000 and body[1].endswith("log")
    assert index.conn.execute("SELECT body FROM documents WHERE doc_id = 'knowledge/small'").fetchone()[0] \
        == parse_file("knowledge/small.md", "markdown", "knowledge", small.encode())[0][0].body
    # the hash is of the whole file: a byte changed past the bytes read is a change, found by sync --check
    note.write_bytes(raw[:-3] + b"X\r\n")
    index.conn.execute("UPDATE files SET ctime_ns = NULL")
    report = index.sync()
    assert report.changed == 1 and index.conn.execute("SELECT sha256 FROM files WHERE path = 'knowledge/big.md'"
                                                       ).fetchone()[0] == sha256(note.read_bytes()).hexdigest()
    # a frontmatter block not closed in the bytes read: left out, with its text, where it may close is not read
    write_doc(tiny_vault, "knowledge/fat.md", "---\ntitle: Fat\nnotes: |\n" + "  yamlfiller line\n" * 1_000
              + "---\nbodyokapi\n")
    warnings = [w for w in index.sync().warnings if w.startswith("knowledge/fat.md")]
    assert warnings == ["knowledge/fat.md: frontmatter block not closed in the first 8,008 bytes of 18,038, more than"
                        " the 2,000 characters a note is indexed up to; its metadata and text are left out"], warnings
    assert index.recall("yamlfiller") == [] and index.conn.execute(
        "SELECT title FROM documents WHERE doc_id = 'knowledge/fat'").fetchone()[0] == "fat"
    index.close()


def test_a_note_folder_that_is_a_file_and_a_core_file_that_is_a_folder_are_said(tiny_vault):
    """QA round 103-C F10: sync said nothing when ``knowledge`` was a file, or ``core/2.memory.md`` or
    ``core/CHANGELOG.json`` a folder."""
    (tiny_vault / "core" / "CHANGELOG.json").mkdir(parents=True)
    (tiny_vault / "core" / "2.memory.md").mkdir()
    (tiny_vault / "knowledge").write_text("not a folder\n", encoding="utf-8")
    write_doc(tiny_vault, "state/task.md", "---\ntitle: T\n---\nx\n")
    warnings = dreamdb.open(tiny_vault).sync().warnings
    assert {"core/2.memory.md: skipped (a folder, not a file)", "core/CHANGELOG.json: skipped (a folder, not a file)",
            "knowledge: skipped (a file, not a folder: dreamdb reads the notes in a folder of that name)"} \
        <= set(warnings), warnings


def test_the_few_warnings_a_recall_shows_put_every_kind_of_text_left_out_first():
    """QA round 109-A F8: a note cut at the size cap ("only the first … are indexed") and a frontmatter block left out
    were still among the warnings counted, not shown, behind links to nothing."""
    from dreamdb.api import LAZY_SYNC_WARNINGS_SHOWN, _few_warnings

    links = [f"knowledge/gone{i}.md: skipped (a link to ../nothing{i}.md, which does not exist)" for i in range(6)]
    lost = ["knowledge/big.md: 4,500,000 characters of text; only the first 4,194,304 are indexed (split it…)",
            "knowledge/fat.md: frontmatter block of 4,300,000 characters, more than the 4,194,304 a note is indexed up"
            " to; its metadata is left out and the text after it indexed",
            "knowledge/bin.md: looks binary (NUL bytes); skipped"]
    shown = _few_warnings(links[:3] + lost[:1] + links[3:] + lost[1:])
    assert len(shown) == LAZY_SYNC_WARNINGS_SHOWN and shown[:3] == lost and shown[3] == links[0]


def test_git_mergetool_copies_and_trash_folders_are_no_notes(tiny_vault):
    """QA round 109-B F1: while ``git mergetool`` is open, its ``note_BASE_1234.md``, ``_LOCAL_``, ``_REMOTE_`` and
    ``_BACKUP_`` copies were indexed and ranked above the note itself; F5: with archives included, Obsidian's
    ``.trash`` folder of deleted notes was read as an archive."""
    write_doc(tiny_vault, "knowledge/positioning.md", "---\ntitle: Positioning\n---\nmergemarker canonical\n")
    for part in ("BASE", "LOCAL", "REMOTE", "BACKUP"):
        write_doc(tiny_vault, f"knowledge/positioning_{part}_19425.md", "mergemarker canonical copy\n")
    write_doc(tiny_vault, "knowledge/release_BASE_notes.md", "mergemarker a note of that name\n")  # (no pid: a note)
    # a note merely named so, with no note of the base name beside it, is one (QA round 110-A F4)
    write_doc(tiny_vault, "knowledge/ops/postgres_BACKUP_2024.md", "mergemarker runbook\n")
    write_doc(tiny_vault, "knowledge/.trash/old.md", "mergemarker deleted in obsidian\n")
    write_doc(tiny_vault, "knowledge/.stversions/positioning~20261201.md", "mergemarker syncthing's old version\n")
    write_doc(tiny_vault, "knowledge/.Trash-1000/gone.md", "mergemarker a desktop's trash\n")
    write_doc(tiny_vault, "knowledge/.old/kept.md", "mergemarker archived\n")
    with dreamdb.open(tiny_vault) as index:
        warnings = index.sync().warnings
        assert "knowledge/positioning_BASE_19425.md: skipped (a copy git mergetool makes of knowledge/positioning.md" \
               " while a merge runs)" in warnings, warnings  # (said: QA round 111-A F6)
        assert sorted(h.doc_id for h in index.recall("mergemarker")) == [
            "knowledge/positioning", "knowledge/postgres_BACKUP_2024", "knowledge/release_BASE_notes"]
    from dreamdb.errors import UsageError
    from dreamdb.writes import update

    with pytest.raises(UsageError, match="is a copy git mergetool makes of knowledge/positioning.md"):
        update(tiny_vault, "knowledge/positioning_LOCAL_19425.md", append="not here")  # (QA round 111-A F6: it did)
    # named by its slug, a pinned copy is said to be a copy, not pinned (QA round 114-C F4: then --force refused it)
    write_doc(tiny_vault, "knowledge/positioning_REMOTE_19425.md", "---\npinned: true\n---\nmergemarker copy\n")
    from dreamdb.writes import delete

    for force in (False, True):
        with pytest.raises(UsageError, match="knowledge/positioning_REMOTE_19425.md is a copy git mergetool makes"):
            delete(tiny_vault, "positioning_REMOTE_19425", force=force)
    assert (tiny_vault / "knowledge" / "positioning_REMOTE_19425.md").exists()
    # nor offered for a name that comes close (QA round 116-A F13: "Did you mean" named a copy, then refused it)
    from dreamdb.errors import NotFound

    with pytest.raises(NotFound) as info:
        update(tiny_vault, "positioning_LOCAL_1942", append="x")
    assert "_LOCAL_" not in (info.value.hint or "") and "_BASE_" not in (info.value.hint or ""), info.value.hint
    with dreamdb.open(tiny_vault, include_archives=True) as index:
        assert sorted(h.doc_id for h in index.recall("mergemarker")) == [
            "knowledge/kept", "knowledge/positioning", "knowledge/postgres_BACKUP_2024", "knowledge/release_BASE_notes"]


def test_the_walk_up_from_under_a_folder_that_cannot_be_searched_says_so(tmp_path):
    """QA round 118-B F2: from a folder under one this user cannot search (``sudo -u alice dreamdb status`` from
    ``/root``, or a project made ``chmod 000`` under a shell in it), the walk up for ``_dream_context`` ended in
    exit 70 (PermissionError); it says which folder it could not look in, exit 3."""
    import subprocess
    import sys

    locked = tmp_path / "locked"
    (locked / "sub").mkdir(parents=True)
    code = ("import os, sys\nfrom dreamdb.entry import main\n"
            f"os.chdir({str(locked / 'sub')!r}); os.chmod({str(locked)!r}, 0o600)\n"
            "sys.exit(main(['--json', 'status']))\n")
    try:
        p = subprocess.run([*permissions_bite(), sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=60, env={k: v for k, v in os.environ.items() if k != "DREAMDB_VAULT"})
    finally:
        os.chmod(locked, 0o755)
    err = json.loads(p.stdout or p.stderr)["error"]
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert err["message"] == (f"Cannot look for a _dream_context/ folder in {locked / 'sub'} (permission denied: it,"
                              " or a folder on its way, cannot be searched).") and "--vault PATH" in err["hint"]


def test_an_unresolved_merge_conflict_is_said_so(tiny_vault):
    """QA round 119-B F2: a merge conflict in a note's frontmatter, or in CHANGELOG.json, was said as "not valid
    YAML/JSON" with the parser's words, and update/remember refused the file the same way: it is named a merge
    conflict, at its line, with how to resolve it. A markdown heading's ======= underline is no conflict."""
    from dreamdb.errors import WriteRefused
    from dreamdb.writes import remember, update

    write_doc(tiny_vault, "knowledge/pin.md", "---\ntitle: Pinned decision\npinned: true\n<<<<<<< HEAD\ntags: [db]\n"
                                              "=======\ntags: [database]\n>>>>>>> feature\n---\nkeep the okapi decision\n")
    write_doc(tiny_vault, "knowledge/setext.md", "---\ntitle: [unclosed\n---\nHeading\n=======\nokapi body\n")
    # a conflict opened in the block, the rest of it past the closing --- (QA round 120-A F10)
    write_doc(tiny_vault, "knowledge/span.md", "---\ntitle: s\n<<<<<<< HEAD\ntags: [a]\n---\nA\n=======\ntags: [b]\n"
                                               "---\nB\n>>>>>>> o\n")
    write_doc(tiny_vault, "core/CHANGELOG.json", '[\n<<<<<<< HEAD\n{"id": "a"}\n=======\n{"id": "b"}\n>>>>>>> x\n]\n')
    index = dreamdb.open(tiny_vault)
    warned = index.sync().warnings
    assert ("knowledge/pin.md: frontmatter holds an unresolved merge conflict, <<<<<<< at line 4, so it is no valid"
            " YAML; indexed the body only") in warned
    assert "core/CHANGELOG.json: not valid JSON (an unresolved merge conflict, <<<<<<< at line 2); changelog not" \
           " indexed" in warned
    assert not any("setext.md" in w and "merge conflict" in w for w in warned)
    assert "knowledge/span.md: frontmatter holds an unresolved merge conflict, <<<<<<< at line 3, so it is no valid" \
           " YAML; indexed the body only" in warned
    with pytest.raises(WriteRefused, match=r"malformed \(an unresolved merge conflict, <<<<<<< at line 3\)"):
        update(tiny_vault, "span", tags=["x"])
    before = (tiny_vault / "knowledge" / "pin.md").read_bytes()
    with pytest.raises(WriteRefused, match=r"malformed \(an unresolved merge conflict, <<<<<<< at line 4\)") as info:
        update(tiny_vault, "pin", tags=["x"])
    assert "Resolve the merge conflict" in info.value.hint and (tiny_vault / "knowledge" / "pin.md").read_bytes() == before
    with pytest.raises(WriteRefused, match=r"not valid JSON \(an unresolved merge conflict, <<<<<<< at line 2\)"):
        remember(tiny_vault, "a new entry")
    # git's add/add conflict: the versions differ from line 1, each side with its block (QA round 121-A F5: silent,
    # and update put a new block above the markers); a body conflict at line 1 without blocks is text
    wrapped = "<<<<<<< HEAD\n---\ntitle: A\n---\n=======\n---\ntitle: B\n---\n>>>>>>> other\nnumbat\n"
    write_doc(tiny_vault, "knowledge/wrapped.md", wrapped)
    write_doc(tiny_vault, "knowledge/plain.md", "<<<<<<< HEAD\nnumbat one\n=======\nnumbat two\n>>>>>>> x\n")
    # (QA round 122-A F3: after blank lines, with git's conflict-marker-size set larger, a side's block after a blank)
    spaced = "\n \n<<<<<<<<<< HEAD\n---\ntitle: A\n---\n==========\n\n---\ntitle: B\n---\n>>>>>>>>>> o\nnumbat\n"
    write_doc(tiny_vault, "knowledge/spaced.md", spaced)
    warned = index.sync().warnings
    assert ("knowledge/wrapped.md: frontmatter not read: the file opens with an unresolved merge conflict, <<<<<<< at"
            " line 1 around it; indexed the whole file as text") in warned
    assert ("knowledge/spaced.md: frontmatter not read: the file opens with an unresolved merge conflict, <<<<<<< at"
            " line 3 around it; indexed the whole file as text") in warned
    assert not any("plain.md" in w for w in warned) and index.status()["frontmatter_unread"] == 5  # (setext too)
    for name, text, line in (("wrapped", wrapped, 1), ("spaced", spaced, 3)):
        with pytest.raises(WriteRefused, match=f"opens with an unresolved merge conflict, <<<<<<< at line {line}") as info:
            update(tiny_vault, name, tags=["x"])
        assert "Resolve the merge conflict" in info.value.hint
        assert (tiny_vault / "knowledge" / f"{name}.md").read_text(encoding="utf-8") == text
    update(tiny_vault, "plain", append="numbat three")  # (no frontmatter on either side: a note as any other)
    index.close()


def test_a_note_indexed_without_its_frontmatter_is_said_until_it_is_fixed(tiny_vault):
    """QA round 119-B F2: the sync that read a note whose frontmatter it could not read (a merge conflict) warned once;
    later recalls and status said nothing, and the note, its ``expires`` lost, came back in every recall. Kept in the
    index until the file is fixed or removed, and said by status and by recall's notes on such a hit."""
    write_doc(tiny_vault, "knowledge/pin.md", "---\ntitle: Pinned\nexpires: 2026-01-01\n<<<<<<< HEAD\ntags: [a]\n"
                                              "=======\ntags: [b]\n>>>>>>> x\n---\nthe okapi decision\n")
    write_doc(tiny_vault, "knowledge/tabs.md", "---\ntitle: Tabbed\ntags:\n\t- tabbed\n---\nokapi tabs\n")
    write_doc(tiny_vault, "knowledge/fine.md", "---\ntitle: Fine\n---\nokapi fine\n")
    # a memory file's too: its sections lose their date (QA round 121-A F6)
    write_doc(tiny_vault, "core/2.memory.md", "---\nupdated: [x\n---\n## Section\nplatypus\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    hits = index.recall("platypus")
    assert hits and any(n.startswith(f"{hits[0].doc_id}: indexed without its frontmatter") for n in index.take_notes())
    (tiny_vault / "core" / "2.memory.md").unlink()
    index.sync()
    for _ in range(2):  # (the files unchanged: not read again, still said)
        status = index.status()
        assert status["frontmatter_unread"] == 2
        assert status["frontmatter_unread_examples"] == ["knowledge/pin.md", "knowledge/tabs.md"]
        hits = index.recall("okapi", top=5, now="2026-06-01")
        notes = index.take_notes()
        assert {h.doc_id for h in hits} == {"knowledge/pin", "knowledge/tabs", "knowledge/fine"}
        assert ("knowledge/pin: indexed without its frontmatter (frontmatter holds an unresolved merge conflict, <<<<<<<"
                " at line 4, so it is no valid YAML): its title, dates, tags and flags (pinned, status, expires) are"
                " unknown until the file is fixed") in notes
        assert any(n.startswith("knowledge/tabs: indexed without its frontmatter (frontmatter is not valid YAML") for n in
                   notes) and not any(n.startswith("knowledge/fine") for n in notes)
        index.sync()
    # a note turned binary keeps its documents as they were, and so its place here (QA round 120-A F11)
    (tiny_vault / "knowledge" / "tabs.md").write_bytes(b"\x00\x01binary now")
    assert any("kept the 1 document" in w for w in index.sync().warnings)
    assert index.status()["frontmatter_unread_examples"] == ["knowledge/pin.md", "knowledge/tabs.md"]
    write_doc(tiny_vault, "knowledge/pin.md", "---\ntitle: Pinned\nexpires: 2026-01-01\ntags: [a]\n---\nthe okapi"
                                              " decision\n")
    (tiny_vault / "knowledge" / "tabs.md").unlink()
    index.sync()
    assert index.status()["frontmatter_unread"] == 0
    assert {h.doc_id for h in index.recall("okapi", top=5, now="2026-06-01")} == {"knowledge/fine"}  # (expired now)
    assert not any("frontmatter" in n for n in index.take_notes())
    index.close()


def test_a_note_indexed_with_undecodable_bytes_replaced_is_listed_by_status_until_it_is_fixed(tiny_vault):
    """QA round 130-C F10: a note saved in cp1252 was warned of ("invalid UTF-8; undecodable bytes replaced") by the
    sync that first read it only; later recalls and ``status`` (text and --json) said nothing while its snippet showed
    ``�bergr��e``. Kept in the index until the file is fixed or removed, and listed by status with the fix."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    path = tiny_vault / "knowledge" / "latin1.md"
    write_doc(tiny_vault, "knowledge/fine.md", "okapi fine\n")
    path.write_bytes("---\ntitle: L\n---\n\nÜbergröße Café okapi\n".encode("cp1252"))
    index = dreamdb.open(tiny_vault)
    assert "knowledge/latin1.md: invalid UTF-8; undecodable bytes replaced" in index.sync().warnings
    for _ in range(2):  # (the file unchanged: not read again, still listed)
        assert index.sync().warnings == []
        status = index.status()
        assert (status["text_replaced"], status["text_replaced_examples"]) == (1, ["knowledge/latin1.md"])
    r = CliRunner().invoke(cli, ["status", "--vault", str(tiny_vault)])
    assert r.exit_code == 0 and ("in part:        1 file indexed with undecodable bytes replaced (�)"
                                 " (knowledge/latin1.md): not valid UTF-8; re-save it as UTF-8") in r.output, r.output
    r = CliRunner().invoke(cli, ["status", "--vault", str(tiny_vault), "--json"])
    assert json.loads(r.output)["text_replaced_examples"] == ["knowledge/latin1.md"], r.output
    (tiny_vault / "knowledge" / "sub").mkdir()
    path = path.rename(tiny_vault / "knowledge" / "sub" / "latin1.md")  # (moved, its bytes unchanged: not read again)
    index.sync()
    assert index.status()["text_replaced_examples"] == ["knowledge/sub/latin1.md"]
    path.write_text("---\ntitle: L\n---\n\nÜbergröße Café okapi\n", encoding="utf-8")
    index.sync()
    assert index.status()["text_replaced"] == 0
    assert "Übergröße" in index.recall("okapi übergröße")[0].snippet
    index.close()



def test_a_file_cut_at_the_size_limit_is_listed_by_status_until_it_is_cut_down(tiny_vault, monkeypatch):
    """QA round 153-C F2: a note cut at 4 Mi characters was warned of by the sync that read it only; status (text and
    --json) said nothing of it afterwards, unlike a note without its frontmatter or with bytes replaced. Kept in the
    index (meta ``text_cut``) until the file is cut down or removed, and listed by status with the fix; a memory
    section cut so and a frontmatter block longer than the limit too. (The limit made small here.)"""
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.vault import parse

    monkeypatch.setattr(parse, "MAX_NOTE_CHARS", 2_000)
    write_doc(tiny_vault, "knowledge/fine.md", "okapi fine\n")
    long = "---\ntitle: Long\n---\nokapi early\n" + "filler words of a log line\n" * 200 + "lateokapi\n"
    write_doc(tiny_vault, "knowledge/long.md", long)
    write_doc(tiny_vault, "core/2.memory.md", "## Big\n" + "filler words of a log line\n" * 200 + "## Small\nshort\n")
    write_doc(tiny_vault, "knowledge/fat.md", "---\ntitle: Fat\nnotes: |\n" + "  yaml filler line\n" * 150
              + "---\nbody okapi\n")
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    assert f"knowledge/long.md: {len(long):,} characters of text; only the first 2,000 are indexed (split it into" \
           " notes of their own to find the rest)" in warnings, warnings
    cut = ["core/2.memory.md", "knowledge/fat.md", "knowledge/long.md"]
    for _ in range(2):  # (the files unchanged: not read again, still listed)
        status = index.status()
        assert (status["text_cut"], status["text_cut_examples"]) == (3, cut)
        assert index.sync().warnings == []
    assert index.recall("lateokapi") == []
    # each worded by what it lost (QA round 153-F F2: all three were "indexed up to their first 2,000 characters …
    # the rest is not found", where fat.md's text was found and its title, tags and dates lost, and the memory file's
    # later section found); a note whose frontmatter is not closed in the part read is indexed by its name alone
    write_doc(tiny_vault, "knowledge/open.md", "---\ntitle: Open\nnotes: |\n" + "  yaml filler line\n" * 2_000
              + "body okapi\n")
    assert any(w.startswith("knowledge/open.md: frontmatter block not closed") for w in index.sync().warnings)
    assert index.status()["text_cut_kinds"] == {
        "text": {"files": 1, "examples": ["knowledge/long.md"]},
        "section": {"files": 1, "examples": ["core/2.memory.md"]},
        "frontmatter": {"files": 1, "examples": ["knowledge/fat.md"]},
        "frontmatter_and_text": {"files": 1, "examples": ["knowledge/open.md"]}}
    # (fat.md's text after its frontmatter found, open.md's not)
    assert [h.doc_id for h in index.recall("body okapi") if h.doc_id in ("knowledge/fat", "knowledge/open")] == [
        "knowledge/fat"]
    r = CliRunner().invoke(cli, ["status", "--vault", str(tiny_vault)])
    sync_force = f"dreamdb sync --force --vault {shlex.quote(str(tiny_vault.resolve()))}"  # (QA round 156-F F2)
    assert r.exit_code == 0 and [ln for ln in r.output.splitlines() if ln.startswith("in part:")] == [
        "in part:        1 note indexed up to its first 2,000 characters (knowledge/long.md): the rest of its text is"
        f" not found; split it into notes of their own ({sync_force} names what was left out)",
        "in part:        1 memory file with a section longer than 2,000 characters (core/2.memory.md): that section is"
        " indexed up to its first 2,000, the rest of it not found (the other sections are); split it under '## '"
        f" headings of its own ({sync_force} names the section)",
        "in part:        1 note indexed without its frontmatter, longer than the 2,000 characters a note is indexed up"
        " to (knowledge/fat.md): title, dates, tags and flags unknown, the text after it found up to as many"
        " characters; shorten the frontmatter (move long values into the body)",
        "in part:        1 note indexed by its file name alone (knowledge/open.md): a frontmatter block not closed"
        " within the 2,000 characters a note is indexed up to, so title, dates, tags, flags and text are unknown;"
        f" close it with a --- line, or shorten it ({sync_force} names what was left out)"], r.output
    r = CliRunner().invoke(cli, ["status", "--vault", str(tiny_vault), "--json"])
    got = json.loads(r.output)
    assert (got["text_cut"], got["text_cut_examples"]) == (4, sorted(cut + ["knowledge/open.md"])), r.output
    assert got["text_cut_kinds"]["frontmatter"] == {"files": 1, "examples": ["knowledge/fat.md"]}, r.output
    (tiny_vault / "knowledge" / "open.md").unlink()
    # moved, its bytes unchanged (not read again): listed at its new path; cut down or removed: no more
    (tiny_vault / "knowledge" / "sub").mkdir()
    (tiny_vault / "knowledge" / "long.md").rename(tiny_vault / "knowledge" / "sub" / "long.md")
    (tiny_vault / "knowledge" / "fat.md").unlink()
    index.sync()
    assert index.status()["text_cut_examples"] == ["core/2.memory.md", "knowledge/sub/long.md"]
    write_doc(tiny_vault, "knowledge/sub/long.md", "---\ntitle: Long\n---\nokapi early\nlateokapi\n")
    write_doc(tiny_vault, "core/2.memory.md", "## Small\nshort\n")
    index.sync()
    assert index.status()["text_cut"] == 0 and [h.doc_id for h in index.recall("lateokapi")] == ["knowledge/long"]
    r = CliRunner().invoke(cli, ["status", "--vault", str(tiny_vault)])
    assert r.exit_code == 0 and "indexed up to" not in r.output
    index.close()


def test_a_file_cut_in_two_ways_is_listed_by_status_for_each(tiny_vault, monkeypatch):
    """QA round 154-A F2: a note whose frontmatter block was longer than the limit and whose text after it was too
    was warned of twice by the sync, but kept by its first warning: status (text and --json) listed it as a note
    without its frontmatter, "the text after it found", while its text past the limit was not found. Each of a
    file's cuts is kept (one a line) and the file listed under each kind; a note read by its first bytes (larger
    than its read limit) the same; a memory file with two sections cut is one file of the kind ``section``. (The
    limit made small here.)"""
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.vault import parse

    monkeypatch.setattr(parse, "MAX_NOTE_CHARS", 2_000)
    fat_yaml = "---\ntitle: Both\nnotes: |\n" + "  yaml filler line\n" * 150 + "---\n"
    write_doc(tiny_vault, "knowledge/both.md", fat_yaml + "body heron\n" + "filler words of a log line\n" * 100
              + "lastquetzal\n")
    # larger than its read limit (4 × 2,001 + 4 bytes): read by its first bytes, its size said in bytes
    write_doc(tiny_vault, "knowledge/huge.md", fat_yaml + "body heron\n" + "filler words of a log line\n" * 500
              + "lastquetzal\n")
    write_doc(tiny_vault, "core/2.memory.md", "## Big\n" + "filler words of a log line\n" * 100 + "## Bigger\n"
              + "filler words of a log line\n" * 100 + "## Small\nshort\n")
    index = dreamdb.open(tiny_vault)
    warnings = index.sync().warnings
    for path in ("knowledge/both.md", "knowledge/huge.md"):  # (the sync warns of both cuts)
        assert any(w.startswith(f"{path}: frontmatter block of") for w in warnings), warnings
        assert any(w.startswith(path) and "of text; only the first 2,000" in w for w in warnings), warnings
    assert sum(w.startswith("core/2.memory.md: the section") for w in warnings) == 2, warnings
    assert index.recall("lastquetzal") == [] and len(index.recall("heron")) == 2
    both = ["knowledge/both.md", "knowledge/huge.md"]
    kinds = {"text": {"files": 2, "examples": both}, "section": {"files": 1, "examples": ["core/2.memory.md"]},
             "frontmatter": {"files": 2, "examples": both}}
    for _ in range(2):  # (the files unchanged: not read again, still listed for each cut)
        status = index.status()
        assert (status["text_cut"], status["text_cut_kinds"]) == (3, kinds), status
        assert index.sync().warnings == []
    r = CliRunner().invoke(cli, ["status", "--vault", str(tiny_vault), "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["text_cut_kinds"] == kinds, r.output
    r = CliRunner().invoke(cli, ["status", "--vault", str(tiny_vault)])
    lines = [ln for ln in r.output.splitlines() if ln.startswith("in part:")]
    assert r.exit_code == 0 and len(lines) == 3, r.output
    assert lines[0].startswith("in part:        2 notes indexed up to their first 2,000 characters (knowledge/both.md,"
                               " knowledge/huge.md): the rest of their text is not found"), r.output
    assert lines[2].startswith("in part:        2 notes indexed without their frontmatter"), r.output
    # its text cut down: the frontmatter alone is listed
    write_doc(tiny_vault, "knowledge/both.md", fat_yaml + "body heron\nlastquetzal\n")
    (tiny_vault / "knowledge" / "huge.md").unlink()
    index.sync()
    assert index.status()["text_cut_kinds"] == {"section": {"files": 1, "examples": ["core/2.memory.md"]},
                                                "frontmatter": {"files": 1, "examples": ["knowledge/both.md"]}}
    assert [h.doc_id for h in index.recall("lastquetzal")] == ["knowledge/both"]
    index.close()

def test_a_folder_named_almost_dream_context_is_pointed_out(tmp_path, monkeypatch):
    """QA round 119-A F6: a project whose vault is ``dream_context/`` (no underscore) got "No _dream_context/ folder"
    or "not a vault" with no word of the folder beside it."""
    from dreamdb.errors import NoVaultFound, VaultNotFound
    from dreamdb.vault.discover import find_vault

    (tmp_path / "dream-Context" / "knowledge").mkdir(parents=True)
    (tmp_path / "dreamcontext.md").write_text("a file, not a folder\n")
    monkeypatch.delenv("DREAMDB_VAULT", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NoVaultFound) as info:
        find_vault(None)
    assert info.value.message.endswith(f"({tmp_path / 'dream-Context'} is named almost so: rename it _dream_context).")
    with pytest.raises(VaultNotFound) as info:
        find_vault(tmp_path)
    assert info.value.hint.endswith(f"; {tmp_path / 'dream-Context'} is named almost so: rename it _dream_context.")
    (tmp_path / "dream-Context").rename(tmp_path / "notes")
    with pytest.raises(NoVaultFound) as info:
        find_vault(None)
    assert "named almost so" not in info.value.message


def test_no_vault_found_says_how_to_start_one(tmp_path, monkeypatch):
    """QA round 144-H F4: ``dreamdb status`` in an empty folder said where to run or what to pass, and only ``--vault
    .`` said how to start a vault (create the folder); not said beside a folder named almost so, to rename."""
    from dreamdb.errors import NoVaultFound
    from dreamdb.vault.discover import find_vault

    monkeypatch.delenv("DREAMDB_VAULT", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NoVaultFound) as info:
        find_vault(None)
    assert info.value.hint == ("Run inside a project with a _dream_context/ vault, pass --vault PATH, or set"
                               " DREAMDB_VAULT; to start a vault, create _dream_context/ in your project's folder"
                               f" (here: {tmp_path.resolve() / '_dream_context'}).")
    (tmp_path / "dream_context").mkdir()
    with pytest.raises(NoVaultFound) as info:
        find_vault(None)
    assert "to start a vault" not in info.value.hint and "rename it _dream_context" in info.value.message


def test_a_vault_path_to_a_link_to_nothing_says_so_not_to_create_it(tmp_path, monkeypatch):
    """QA round 145-K F1: ``--vault proj`` whose ``_dream_context`` is a link to nothing was told "to start a vault,
    create proj/_dream_context", which failed (File exists); ``--vault proj/_dream_context`` said it "does not exist".
    Both say it is a link to nothing, as walking up does; a file there is still "a file, not a folder"."""
    from dreamdb.errors import VaultNotFound
    from dreamdb.vault.discover import find_vault

    monkeypatch.delenv("DREAMDB_VAULT", raising=False)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "_dream_context").symlink_to(tmp_path / "nonexistent")
    with pytest.raises(VaultNotFound) as info:
        find_vault(proj)
    assert info.value.hint.endswith(f"; {proj / '_dream_context'} is a link to nothing: fix it, or move it aside to"
                                    " start a vault there."), info.value.hint
    assert "to start a vault, create" not in info.value.hint
    with pytest.raises(VaultNotFound) as info:
        find_vault(proj / "_dream_context")
    assert info.value.message == f"Vault path {proj / '_dream_context'} is a link to nothing"
    (proj / "_dream_context").unlink()
    (proj / "_dream_context").write_text("not a folder")
    with pytest.raises(VaultNotFound) as info:
        find_vault(proj)
    assert info.value.hint.endswith("is a file, not a folder: move it aside to start a vault there."), info.value.hint


def test_no_vault_found_in_the_home_folder_or_the_root_says_not_to_start_one_there(tmp_path, monkeypatch):
    """QA round 144-J F9: ``cd $HOME && dreamdb status`` was told to create ``$HOME/_dream_context`` (and ``/`` to
    create ``/_dream_context``), a vault every folder below it finds, whose memories the prompt hook shows in every
    project. There the hint says to cd into the project's folder first."""
    from dreamdb.errors import NoVaultFound
    from dreamdb.vault.discover import find_vault

    monkeypatch.delenv("DREAMDB_VAULT", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for folder, named in ((tmp_path, f"the home folder {tmp_path.resolve()}"), ("/", "the root /")):
        monkeypatch.chdir(folder)
        with pytest.raises(NoVaultFound) as info:
            find_vault(None)
        assert info.value.hint.endswith("; to start a vault, create _dream_context/ in your project's folder (cd there"
                                        f" first: one in {named} would be found from every folder below it)."), \
            info.value.hint


def test_a_path_into_a_folder_named_almost_dream_context_says_to_rename_it(tmp_path, monkeypatch):
    """QA round 143-B F5: ``--vault casep/_Dream_Context`` (the misnamed vault itself) was told to create a
    ``_dream_context`` inside it, and walking up from inside it said nothing of it."""
    from dreamdb.errors import NoVaultFound, VaultNotFound
    from dreamdb.vault.discover import find_vault

    (tmp_path / "casep" / "_Dream_Context" / "knowledge" / "sub").mkdir(parents=True)
    monkeypatch.delenv("DREAMDB_VAULT", raising=False)
    monkeypatch.chdir(tmp_path)
    for given in ("casep", "casep/_Dream_Context", "casep/_Dream_Context/knowledge"):
        with pytest.raises(VaultNotFound) as info:
            find_vault(given)
        assert info.value.hint.endswith("; casep/_Dream_Context is named almost so: rename it _dream_context."), given
    monkeypatch.chdir(tmp_path / "casep" / "_Dream_Context" / "knowledge" / "sub")
    with pytest.raises(NoVaultFound) as info:
        find_vault(None)
    assert info.value.message.endswith(
        f"({tmp_path / 'casep' / '_Dream_Context'} is named almost so: rename it _dream_context).")
    for make in (lambda p: p.write_text("x"), lambda p: p.symlink_to(tmp_path / "nowhere")):
        make(tmp_path / "_dream_context")  # (one that is no folder: said, QA round 134 F5)
        with pytest.raises(NoVaultFound) as info:
            find_vault(None)
        assert f"({tmp_path / '_dream_context'} " in info.value.message and "folder" in info.value.message, info.value
        (tmp_path / "_dream_context").unlink()


def test_a_vault_path_typed_in_another_case_is_the_vault_by_its_name_on_disk(tmp_path, monkeypatch,
                                                                              case_insensitive_name):
    """QA round 145-C F4: on a case-insensitive file system, ``DREAMDB_VAULT=…/ci/_DREAM_CONTEXT`` (the folder on disk
    ``_dream_context``) was "not a vault … rename it _dream_context", a rename that cannot be: it is that vault, by the
    name its folder lists; a folder named ``_Dream_Context`` on disk still is none."""
    from dreamdb.errors import VaultNotFound
    from dreamdb.vault.discover import find_vault

    vault = tmp_path / "ci" / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    typed = case_insensitive_name(vault, "_DREAM_CONTEXT")
    case_insensitive_name(vault, "_Dream_Context")
    monkeypatch.delenv("DREAMDB_VAULT", raising=False)
    monkeypatch.chdir(tmp_path)
    assert find_vault(typed) == vault and find_vault("ci/_Dream_Context/knowledge/..") == vault
    monkeypatch.setenv("DREAMDB_VAULT", str(typed))
    assert find_vault(None) == vault
    monkeypatch.delenv("DREAMDB_VAULT")
    assert find_vault(None, cwd=typed / "knowledge") == vault  # (walked up from a folder inside it, so named)
    other = tmp_path / "other" / "_Dream_Context"  # (named so on disk: no vault, said as before)
    other.mkdir(parents=True)
    case_insensitive_name(other, "_dream_context")
    with pytest.raises(VaultNotFound) as info:
        find_vault(other)
    assert info.value.hint.endswith(f"; {other} is named almost so: rename it _dream_context.")


def test_line_ends_and_byte_order_marks_of_every_kind_read_as_one(tiny_vault):
    """QA round 120-B F1, F2, F5: a note of CR CR LF lines (Windows line ends converted twice) or one starting with two
    byte-order marks lost its frontmatter silently, its YAML indexed as text, and the index kept every CR of a CR LF
    note in its bodies. Each reads as the LF note does; a write refuses to rewrite the odd ones rather than stack a
    second frontmatter block above the first."""
    from dreamdb.errors import WriteRefused
    from dreamdb.writes import update

    lf = "---\ntitle: Gnu notes\ntags: [a]\ndate: 2026-01-02\n---\nThe gnu herd\nmoves north\n"
    forms = {"lf": lf.encode(), "crlf": lf.replace("\n", "\r\n").encode(), "crcrlf": lf.replace("\n", "\r\r\n").encode(),
             "cr": lf.replace("\n", "\r").encode(), "twoboms": ("\ufeff\ufeff" + lf).encode(),
             "utf16twoboms": ("\ufeff" + lf).encode("utf-16")}
    (tiny_vault / "knowledge").mkdir()
    for name, raw in forms.items():
        (tiny_vault / "knowledge" / f"{name}.md").write_bytes(raw)
    index = dreamdb.open(tiny_vault)
    assert [w for w in index.sync().warnings if "frontmatter" in w] == []
    rows = {r[0]: r[1:] for r in index.conn.execute("SELECT slug, title, tags, date, body FROM documents")}
    assert rows["lf"] == ("Gnu notes", '["a"]', "2026-01-02", "The gnu herd\nmoves north")
    for name in ("crlf", "cr", "twoboms", "utf16twoboms"):
        assert rows[name] == rows["lf"], name
    assert rows["crcrlf"][:3] == rows["lf"][:3] and "\r" not in rows["crcrlf"][3]
    for name, why in (("crcrlf", "lines ending in CR CR LF"), ("twoboms", "starts with two byte-order marks")):
        with pytest.raises(WriteRefused, match=why):
            update(tiny_vault, f"knowledge/{name}", tags=["b"])
        assert (tiny_vault / "knowledge" / f"{name}.md").read_bytes() == forms[name]
    index.close()


def test_the_walk_up_from_a_folder_deeper_than_the_system_takes_says_so(tmp_path):
    """QA round 120-A F9: from a working folder whose path is longer than the system takes (PATH_MAX), the walk up
    ended in exit 70 (File name too long); it says so, exit 3."""
    import subprocess
    import sys

    code = ("import os, sys\nfrom dreamdb.entry import main\n"
            f"os.chdir({str(tmp_path)!r})\n"
            "for _ in range(25):\n    os.mkdir('d' * 200); os.chdir('d' * 200)\n"
            "sys.exit(main(['--json', 'status']))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if k != "DREAMDB_VAULT"})
    err = json.loads(p.stdout or p.stderr)["error"]
    assert p.returncode == 3 and "Cannot look for a _dream_context/ folder in" in err["message"], (p.stdout, p.stderr)
    assert "File name too long" in err["message"]


def test_a_path_starting_with_dot_slash_tilde_is_the_working_folders_tilde_folder(tmp_path, monkeypatch):
    """QA round 121-C F1: ``./~/myv`` (a folder named ``~``, written so not to be expanded) became ``~/myv`` in
    pathlib and then the home folder's ``myv``: the vault, the index, the model and cache folders, read and written
    there without a word. ``~/myv`` itself is still the home folder's."""
    from dreamdb.config import cache_root, index_path_for
    from dreamdb.embeddings.locate import model_dir_candidate
    from dreamdb.vault.discover import find_vault
    from dreamdb.writes import remember

    home, work = tmp_path / "home", tmp_path / "work"
    for root in (home, work / "~"):
        write_doc(root / "myv" / "_dream_context", "knowledge/n.md", "---\ntitle: Numbat\n---\nnumbat\n")
        write_doc(root / "myv" / "_dream_context", "core/CHANGELOG.json", "[]\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    literal = work / "~" / "myv" / "_dream_context"
    assert find_vault("./~/myv") == literal
    assert find_vault("~/myv") == home / "myv" / "_dream_context"
    monkeypatch.setenv("DREAMDB_VAULT", "./~/myv")
    assert find_vault(None) == literal
    remember(find_vault(None), "written beside the literal folder")
    assert "written beside" in (literal / "core" / "CHANGELOG.json").read_text(encoding="utf-8")
    assert "written beside" not in (home / "myv" / "_dream_context" / "core" / "CHANGELOG.json").read_text(encoding="utf-8")
    monkeypatch.setenv("DREAMDB_INDEX", "./~/idx.db")
    assert index_path_for(literal) == work / "~" / "idx.db"
    monkeypatch.setenv("DREAMDB_CACHE_DIR", "./~/cache")
    assert cache_root() == work / "~" / "cache"
    assert model_dir_candidate("./~/model")[0] == work / "~" / "model"
    monkeypatch.setenv("DREAMDB_MODEL_DIR", "~/model")
    assert model_dir_candidate(None)[0] == home / "model"
    with dreamdb.open("./~/myv", auto_sync=True) as index:
        assert index.vault == literal and [h.path for h in index.recall("numbat")] == [str(literal / "knowledge" / "n.md")]
    # a Path is taken as it is, as pathlib and open() take it: Path("./~/myv") is Path("~/myv"), the folder ~ here (QA
    # round 122-A F5: the home folder's vault)
    from pathlib import Path

    assert find_vault(Path("./~/myv")) == literal and find_vault(Path("~/myv").expanduser()) == home / "myv" / "_dream_context"


def test_a_vault_whose_only_notes_were_skipped_is_not_said_to_have_none(tiny_vault, tmp_path):
    """QA round 121-C F5: a note the walk skipped (its path too long for the system, here a link leading out of the
    vault) was warned of, then "no documents indexed: the vault has no notes yet"."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: x\n---\nhello\n", encoding="utf-8")
    (tiny_vault / "knowledge").mkdir()
    (tiny_vault / "knowledge" / "linked.md").symlink_to(outside)
    r = CliRunner().invoke(cli, ["sync", "--vault", str(tiny_vault)])
    assert r.exit_code == 0 and "knowledge/linked.md: skipped (symlink points outside the vault)" in r.output, r.output
    assert "note: no documents indexed: 1 file skipped (the warnings above say why)." in r.output, r.output
    assert "no notes yet" not in r.output


def test_a_relative_vault_path_from_a_deleted_folder_names_where_it_came_from(tmp_path, monkeypatch):
    """QA round 121-C F9: from a deleted working folder, DREAMDB_VAULT=../ex was "The vault path ../ex cannot be
    resolved … Pass --vault", no word of the variable."""
    from dreamdb.errors import VaultNotFound
    from dreamdb.vault.discover import find_vault

    shutil.copytree(ROOT / "examples", tmp_path / "ex", ignore=shutil.ignore_patterns(".dreamdb"))
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    monkeypatch.setenv("DREAMDB_VAULT", "../ex")
    with pytest.raises(VaultNotFound, match=r"The vault path \.\./ex \(from DREAMDB_VAULT\) cannot be resolved") as info:
        find_vault(None)
    assert "DREAMDB_VAULT" in info.value.hint
    with pytest.raises(VaultNotFound, match=r"The vault path \.\./ex cannot be resolved") as info:
        find_vault("../ex")
    assert info.value.hint.startswith("Pass --vault")
    # a path below it (QA round 122-A F7: "Vault path does not exist: v", its ./ dropped, no word of why)
    with pytest.raises(VaultNotFound, match=r"The vault path \./v \(from DREAMDB_VAULT\) is relative, and the current"
                                            r" folder no longer exists"):
        monkeypatch.setenv("DREAMDB_VAULT", "./v")
        find_vault(None)


def test_a_method_of_the_index_called_from_its_own_sync_progress_is_refused_and_the_index_kept(tmp_path):
    """A recall from inside the sync's own progress callback said "cannot start a transaction within a transaction"
    and to delete the index file: it is a UsageError naming the callback; the sync is rolled back whole, and the
    next one indexes every note."""
    from dreamdb.errors import UsageError

    vault = shutil.copytree(ROOT / "examples", tmp_path / "ex", ignore=shutil.ignore_patterns(".dreamdb"))
    index = dreamdb.open(vault)
    calls = []

    def progress(done, total):
        calls.append(done)
        index.recall("sleep", top=1)

    with pytest.raises(UsageError, match=r"Index\.recall was called from inside a progress or wait callback") as info:
        index.sync(progress=progress)
    assert "after sync" in info.value.hint and calls == [calls[0]]
    assert index.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0
    report = index.sync(progress=lambda done, total: calls.append(done))  # (the callback no longer refused after)
    indexed = index.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    assert report.documents == indexed >= report.added >= 5 and index.check() == []
    assert index.recall("sleep debt", top=1)

def test_a_progress_callback_may_make_vault_writes_and_the_readme_names_what_it_may_not_call(tmp_path):
    """QA round 148-E F2: the README said a method of the same Index called from a sync's progress callback raises
    UsageError, but ``remember``, ``update``, ``delete`` and ``take_notes`` worked (by design: they take the vault's own
    lock and write its files, never the index, as from another thread). The README names the methods refused, every
    one run one call at a time on the Index's connection, and the writes that work; the writes land."""
    import re

    from dreamdb.api import Index
    from dreamdb.errors import UsageError

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    serialized = {name for name, value in vars(Index).items()
                  if not name.startswith("_") and hasattr(value, "__wrapped__")}
    said = re.search(r"a method of the same `Index` that uses its connection to the index \(([^)]*)\) called from"
                     r" one raises `UsageError`", readme)
    assert said, "the README names the methods a progress callback may not call"
    assert set(re.findall(r"`(\w+)`", said.group(1))) == serialized >= {"recall", "status", "list_documents", "sync"}
    assert "The vault writes `remember`, `update` and `delete`, and `take_notes()`, work from one" in readme

    vault = shutil.copytree(ROOT / "examples", tmp_path / "ex", ignore=shutil.ignore_patterns(".dreamdb"))
    index = dreamdb.open(vault)
    index.sync()
    done_in_callback = {}

    def progress(done, total):
        if done != 1:
            return
        for name in sorted(serialized):
            with pytest.raises(UsageError, match=rf"Index\.{name} was called from inside a progress or wait callback"):
                getattr(index, name)()
        done_in_callback["remember"] = index.remember("zanzibar ferry timetable")["doc_id"]
        done_in_callback["update"] = index.update("release-checklist", tags=["ferry"])["unchanged"]
        done_in_callback["delete"] = index.delete("uyku-borcu")["doc_id"]
        done_in_callback["notes"] = index.take_notes()

    index.sync(force=True, progress=progress)
    remembered = done_in_callback["remember"]
    assert done_in_callback["update"] is False and done_in_callback["delete"] == "knowledge/uyku-borcu"
    assert [h.doc_id for h in index.recall("zanzibar ferry", top=1)] == [remembered]
    assert [d["doc_id"] for d in index.list_documents(tags=["ferry"])] == ["knowledge/release-checklist"]
    assert "knowledge/uyku-borcu" not in [d["doc_id"] for d in index.list_documents()]
    assert index.check() == []
    index.close()


def test_status_index_modified_is_the_last_write_not_the_status_call(tiny_vault):
    """QA round 139-E F1: ``index_modified`` was the time of the ``status`` call itself: its own connection had just
    made the (empty) -wal file, whose time counted as a write. A read leaves it at the index's last write."""
    write_doc(tiny_vault, "knowledge/a.md", "alpha\n")
    with dreamdb.open(tiny_vault) as index:
        index.sync()
        path = index.index_path
        index.conn.execute("DELETE FROM meta WHERE key = ?", (db.LAST_WRITE_KEY,))  # (an older version's index)
    written = time.time() - 3600
    os.utime(path, (written, written))  # (the last write an hour ago)
    with dreamdb.open(tiny_vault) as index:
        st = index.status()
        assert os.path.exists(f"{path}-wal")  # (the read's own, empty)
    assert st["index_modified"] == datetime.fromtimestamp(written, timezone.utc).isoformat(timespec="seconds")


def test_status_index_modified_is_the_last_write_not_a_later_reader_s_checkpoint(tiny_vault):
    """QA round 140-C F6: a writer that exits without closing leaves its commits in the -wal file; the next reader's
    close copies them into the index file, whose time then was ``index_modified``: the read's, not the write's."""
    import subprocess
    import sys

    write_doc(tiny_vault, "knowledge/a.md", "alpha\n")
    script = ("import os, time, dreamdb\n"
              f"ix = dreamdb.open({str(tiny_vault)!r})\n"
              "ix.sync()\n"  # (a first build's -wal file is copied into the index: QA round 145-C F1)
              "ix.conn.execute(\"INSERT INTO meta (key, value) VALUES ('other', 'x')\")\n"  # (a commit, left in it)
              "print(time.time(), flush=True)\n"
              "os._exit(0)\n")  # committed, left in the -wal file: no checkpoint at close
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], check=True, timeout=120, capture_output=True, text=True, env=env)
    written = datetime.fromtimestamp(float(out.stdout), timezone.utc).isoformat(timespec="seconds")
    path = tiny_vault / ".dreamdb" / "index.db"
    assert os.path.getsize(f"{path}-wal") > 0
    time.sleep(1.2)
    with dreamdb.open(tiny_vault, auto_sync=False) as index:
        assert [h.doc_id for h in index.recall("alpha")] == ["knowledge/a"]
    read = datetime.fromtimestamp(os.stat(path).st_mtime, timezone.utc).isoformat(timespec="seconds")
    assert read > written  # (the reader's checkpoint moved the file)
    with dreamdb.open(tiny_vault) as index:
        st = index.status()
    assert st["index_modified"] <= written and st["index_modified"] >= st["last_sync"]


def test_status_index_modified_is_never_before_the_last_sync(tiny_vault):
    """QA round 143-D F5: a dreamdb older than 0.3.13 syncs without recording ``last_write``, so after one synced
    the index last, ``index_modified`` (the newer version's recorded write) was earlier than ``last_sync``: the
    later of the two is the index's last write."""
    write_doc(tiny_vault, "knowledge/a.md", "alpha\n")
    with dreamdb.open(tiny_vault) as index:
        index.sync()
    conn = db.connect(tiny_vault / ".dreamdb" / "index.db")
    try:  # what an older version's sync leaves: its own last_sync, the newer version's last_write before it
        conn.execute("UPDATE meta SET value = '2026-01-02T03:04:05+00:00' WHERE key = 'last_write'")
        conn.execute("UPDATE meta SET value = '2026-02-03T04:05:06+00:00' WHERE key = 'last_sync'")
        conn.commit()
    finally:
        conn.close()
    with dreamdb.open(tiny_vault, auto_sync=False) as index:
        st = index.status()
    assert (st["last_sync"], st["index_modified"]) == ("2026-02-03T04:05:06+00:00", "2026-02-03T04:05:06+00:00")


def test_a_sync_that_changes_no_document_leaves_last_sync_as_it_was(tiny_vault):
    """QA round 139-E F2: a sync that found a touched file unchanged, or a ``sync --check`` that found nothing to
    change, moved ``last_sync`` (docs/json.md: a sync that finds nothing changed leaves it). The touched file's new
    stat is still stored, so the next sync takes the fast path; a change moves ``last_sync``."""
    path = write_doc(tiny_vault, "knowledge/a.md", "alpha\n")
    write_doc(tiny_vault, "knowledge/b.md", "bravo\n")
    index = dreamdb.open(tiny_vault)

    def last_sync():
        return index.status()["last_sync"]

    index.sync()
    assert last_sync() is not None
    old = "2000-01-01T00:00:00+00:00"
    with index.conn:
        index.conn.execute("UPDATE meta SET value = ? WHERE key = 'last_sync'", (old,))
    later = time.time() + 10
    os.utime(path, (later, later))
    r = index.sync()
    assert (r.changed, r.unchanged) == (0, 2) and last_sync() == old
    stored = index.conn.execute("SELECT mtime_ns FROM files WHERE path = 'knowledge/a.md'").fetchone()[0]
    assert stored == os.stat(path).st_mtime_ns  # (the new stat recorded: the next sync need not read it)
    r = index.sync(check=True)
    assert (r.changed, r.unchanged) == (0, 2) and last_sync() == old
    path.write_text("alpha changed\n")
    r = index.sync()
    assert r.changed == 1 and last_sync() not in (None, old)
    index.close()
    # a first sync of a vault with nothing in it still records one (it tells an index synced from one never synced)
    empty = tiny_vault.parent.parent / "empty" / "_dream_context"
    empty.mkdir(parents=True)
    with dreamdb.open(empty) as other:
        assert other.sync().documents == 0 and other.status()["last_sync"] is not None


def test_no_change_sync_reads_the_stored_stats_once_per_index_state(tiny_vault):
    """The no-change fast path read every stored file's and folder's stat from the index before each recall, a third
    of its time: they are read once per index state, and again after this connection writes or another commits, so
    an edit, a new note and another process's sync are each still seen."""
    write_doc(tiny_vault, "knowledge/alpha.md", "alpha body\n")
    index = dreamdb.open(tiny_vault)
    index.sync()
    reads = []
    index.conn.set_trace_callback(lambda sql: reads.append(sql) if "FROM files" in sql and "mtime_ns" in sql else None)

    def recalled(query):
        reads.clear()
        return [h.doc_id for h in index.recall(query)], len(reads)

    def settled(query):  # (a file changed within the file system's clock tick of a sync is read by the next too)
        for _ in range(50):
            hits, n_reads = recalled(query)
            if not n_reads:
                return hits
            time.sleep(0.02)
        return None

    assert recalled("alpha")[0] == ["knowledge/alpha"]
    assert recalled("alpha") == (["knowledge/alpha"], 0) and recalled("alpha") == (["knowledge/alpha"], 0)
    time.sleep(0.01)
    write_doc(tiny_vault, "knowledge/alpha.md", "gamma body now\n")  # an edit: the fast path sees the stat moved
    hits, n_reads = recalled("gamma")
    assert hits == ["knowledge/alpha"] and n_reads >= 1
    assert settled("gamma") == ["knowledge/alpha"] and recalled("gamma") == (["knowledge/alpha"], 0)
    other = dreamdb.open(tiny_vault)  # another connection's sync: read again, once
    write_doc(tiny_vault, "knowledge/beta.md", "delta body\n")
    assert other.sync().added == 1
    hits, n_reads = recalled("delta")
    assert hits == ["knowledge/beta"] and n_reads >= 1
    assert settled("delta") == ["knowledge/beta"] and recalled("delta") == (["knowledge/beta"], 0)
    other.close()
    index.conn.set_trace_callback(None)


def test_a_tags_mapping_warning_cuts_its_text_between_grapheme_clusters():
    """The warning on a mapping in a ``tags`` list cut its text at 59 characters, a flag to a lone regional indicator;
    it is cut where no grapheme cluster is split (``output.clip``, as ``list`` cuts a title: QA round 144-D F2)."""
    from dreamdb.vault.parse import mapping_tag_items

    (said,) = mapping_tag_items([{"name": "x" * 52 + "\U0001F1F9\U0001F1F7 tail", "level": 1}])
    written = said[1:said.index("} → ")]
    assert written == "name: " + "x" * 52 + "…", said


def test_a_frontmatter_value_quoted_in_a_warning_is_cut_between_grapheme_clusters(tiny_vault):
    """A frontmatter value a warning quotes was cut at 40 characters without a mark, a flag to a lone regional
    indicator: it is cut where no grapheme cluster is split, and the cut is marked (``output.clip``)."""
    write_doc(tiny_vault, "knowledge/flag.md", "---\ntitle: Flag\npinned: " + "x" * 38 + "\U0001F1F9\U0001F1F7 yes\n---\nbody\n")
    index = dreamdb.open(tiny_vault)
    said = [w for w in index.sync().warnings if "frontmatter pinned" in w]
    assert said == ["knowledge/flag.md: frontmatter pinned '" + "x" * 38 + "…' is not true or false; read as not pinned"], said
    index.close()
