"""The last step of a vault write: the new file is swapped in with renameat2(RENAME_EXCHANGE), so another
program's save that lands after dreamdb's last check is swapped back, never lost (QA round 60 M2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dreamdb.writes import files, remember, update
from tests.conftest import write_doc

pytestmark = pytest.mark.skipif(files._renameat2() is None, reason="renameat2 is Linux-only (glibc 2.28+)")


def _editor_save_before_the_swap(monkeypatch, target: Path, line: str, times: int = 1) -> list[int]:
    """An editor's save (a temporary file renamed over ``target``: a new inode) made after dreamdb's last check
    of ``target``, just before the swap: the moment os.replace could not see."""
    calls: list[int] = []
    real = files._swap_in

    def swap_in(tmp_name, path, expect, keep_old=None):
        if Path(path) == target and len(calls) < times:
            calls.append(1)
            text = target.read_text(encoding="utf-8")
            side = target.with_name(target.name + ".editor~")
            side.write_text(text + line, encoding="utf-8")
            os.replace(side, target)
        return real(tmp_name, path, expect, keep_old)

    monkeypatch.setattr(files, "_swap_in", swap_in)
    return calls


def test_an_editors_save_after_the_last_check_is_swapped_back_and_the_append_made_again(tiny_vault, monkeypatch):
    note = write_doc(tiny_vault, "knowledge/note.md", "---\ntitle: Note\n---\nbody\n")
    calls = _editor_save_before_the_swap(monkeypatch, note, "EDITOR\n")
    update(tiny_vault, "note", append="app-1")
    assert calls == [1]
    assert note.read_text() == "---\ntitle: Note\n---\nbody\nEDITOR\n\napp-1\n"  # both: the save was not lost
    assert not [p for p in note.parent.iterdir() if files.TEMP_MARK in p.name or p.name.endswith("~")]


def test_content_written_over_an_editors_save_is_refused_and_the_save_kept(tiny_vault, monkeypatch):
    note = write_doc(tiny_vault, "knowledge/note.md", "---\ntitle: Note\n---\nbody\n")
    _editor_save_before_the_swap(monkeypatch, note, "EDITOR\n", times=10)
    with pytest.raises(files.FileChanged):
        update(tiny_vault, "note", content="new body")
    assert note.read_text() == "---\ntitle: Note\n---\nbody\nEDITOR\n"  # the editor's save, as it made it
    assert not [p for p in note.parent.iterdir() if files.TEMP_MARK in p.name]


def test_a_changelog_created_by_another_program_meanwhile_is_not_replaced(tiny_vault, monkeypatch):
    changelog = tiny_vault / "core" / "CHANGELOG.json"
    if changelog.exists():
        changelog.unlink()
    changelog.parent.mkdir(parents=True, exist_ok=True)
    real = files._swap_in
    made: list[int] = []

    def swap_in(tmp_name, path, expect, keep_old=None):
        if Path(path) == changelog and not made:
            made.append(1)
            changelog.write_text('[{"id": "other", "type": "note", "description": "made by another tool"}]')
        return real(tmp_name, path, expect, keep_old)

    monkeypatch.setattr(files, "_swap_in", swap_in)
    remember(tiny_vault, "Chose WAL mode.", type="decision")
    text = changelog.read_text()
    assert "made by another tool" in text and "Chose WAL mode." in text  # redone on the file the other tool made


def test_without_renameat2_the_checked_replace_still_writes(tiny_vault, monkeypatch):
    monkeypatch.setattr(files, "_RENAMEAT2", [None])
    note = write_doc(tiny_vault, "knowledge/note.md", "---\ntitle: Note\n---\nbody\n")
    update(tiny_vault, "note", append="app-1")
    assert note.read_text() == "---\ntitle: Note\n---\nbody\n\napp-1\n"


def test_a_second_save_between_the_swap_and_the_swap_back_is_kept_not_deleted(tiny_vault, monkeypatch):
    """QA round 61 M1: a save landing between the exchange and the exchange back ended in the temporary file,
    which was deleted; it is now kept beside the note as a conflict file, and the append redone."""
    note = write_doc(tiny_vault, "knowledge/note.md", "---\ntitle: Note\n---\nbody\n")
    _editor_save_before_the_swap(monkeypatch, note, "SAVE 1\n")
    real_lstat = os.lstat
    seen: list[str] = []

    def lstat(path, *args, **kwargs):
        result = real_lstat(path, *args, **kwargs)
        name = os.path.basename(str(path))
        if files.TEMP_MARK in name:
            seen.append(name)
            if len(seen) == 2:  # right after the first exchange: another save
                side = note.with_name("save2~")
                side.write_text("---\ntitle: Note\n---\nbody\nSAVE 1\nSAVE 2\n", encoding="utf-8")
                os.replace(side, note)
        return result

    monkeypatch.setattr(files.os, "lstat", lstat)
    update(tiny_vault, "note", append="app-1")
    kept = [p for p in note.parent.iterdir() if ".dreamdb-conflict-" in p.name]
    assert len(kept) == 1 and kept[0].read_text() == "---\ntitle: Note\n---\nbody\nSAVE 1\nSAVE 2\n"
    assert note.read_text() == "---\ntitle: Note\n---\nbody\nSAVE 1\n\napp-1\n"


def test_a_note_that_became_a_link_before_the_swap_is_left_a_link(tiny_vault, monkeypatch):
    """QA round 61 L2: a note replaced by a symbolic link after the last check had the link replaced by a file."""
    note = write_doc(tiny_vault, "knowledge/note.md", "---\ntitle: Note\n---\nbody\n")
    other = write_doc(tiny_vault, "knowledge/other.md", "---\ntitle: Other\n---\nother body\n")
    real = files._swap_in

    def swap_in(tmp_name, path, expect, keep_old=None):
        if Path(path) == note and not note.is_symlink():
            note.unlink()
            note.symlink_to(other)
        return real(tmp_name, path, expect, keep_old)

    monkeypatch.setattr(files, "_swap_in", swap_in)
    with pytest.raises(files.FileChanged, match="put a link in its place"):
        update(tiny_vault, "note", content="new body")
    assert note.is_symlink() and other.read_text() == "---\ntitle: Other\n---\nother body\n"
    assert not [p for p in note.parent.iterdir() if files.TEMP_MARK in p.name]
