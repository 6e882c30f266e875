"""Tests of dreamdb.hook_settings on real settings files in tmp dirs."""

from __future__ import annotations

import errno
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from dreamdb.errors import NotFound, WriteRefused
from dreamdb.hook_settings import (DEFAULT_COMMAND, install_hook, is_dreamdb_hook, runs_hook_alone, settings_path,
                                   uninstall_hook, uninstall_hooks)

OURS = {"hooks": [{"type": "command", "command": DEFAULT_COMMAND}]}

EXISTING = {
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "dreamcontext hook prompt", "timeout": 5}]}],
    },
    "model": "opus",
}


def _write(project: Path, data) -> Path:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=4) + "\n", encoding="utf-8")
    return path


def test_install_into_fresh_project(tmp_path: Path):
    path = install_hook(tmp_path)
    assert path == tmp_path / ".claude" / "settings.json"
    assert json.loads(path.read_text()) == {"hooks": {"UserPromptSubmit": [OURS]}}
    assert path.read_text().endswith("\n")
    assert not (path.parent / "settings.json.bak").exists()  # nothing existed to back up


def test_install_merges_and_keeps_everything_else(tmp_path: Path):
    path = _write(tmp_path, EXISTING)
    original = path.read_bytes()
    install_hook(tmp_path)
    data = json.loads(path.read_text())
    assert list(data) == ["permissions", "hooks", "model"]
    assert data["permissions"] == EXISTING["permissions"] and data["model"] == "opus"
    assert data["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert data["hooks"]["UserPromptSubmit"] == EXISTING["hooks"]["UserPromptSubmit"] + [OURS]
    assert (path.parent / "settings.json.bak").read_bytes() == original


def test_install_twice_adds_once_and_does_not_rewrite(tmp_path: Path):
    path = install_hook(tmp_path)
    first = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    install_hook(tmp_path)
    assert path.read_bytes() == first
    assert path.stat().st_mtime_ns == mtime
    assert json.loads(first)["hooks"]["UserPromptSubmit"] == [OURS]


def test_install_updates_other_dreamdb_path_in_place(tmp_path: Path):
    _write(tmp_path, {"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "/old/venv/bin/dreamdb hook user-prompt-submit"}]}]}})
    path = install_hook(tmp_path)
    assert json.loads(path.read_text())["hooks"]["UserPromptSubmit"] == [OURS]


def test_install_can_keep_another_dreamdb_command_and_lists_them(tmp_path: Path):
    """QA round 68 M3: what ``dreamdb hook install`` builds on to keep a teammate's command."""
    from dreamdb.hook_settings import dreamdb_hook_commands

    teammate = "uvx dreamdb hook user-prompt-submit"
    path = _write(tmp_path, {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": teammate}]},
                                                            {"hooks": [{"type": "command", "command": "other-tool"}]}]}})
    before = path.read_bytes()
    assert dreamdb_hook_commands(path) == [teammate]
    assert install_hook(tmp_path, replace=False) == path and path.read_bytes() == before
    install_hook(tmp_path)
    assert dreamdb_hook_commands(path) == [DEFAULT_COMMAND]
    assert dreamdb_hook_commands(tmp_path / "none.json") == []
    (tmp_path / "bad.json").write_text("{,}")
    assert dreamdb_hook_commands(tmp_path / "bad.json") == []


def test_invalid_json_is_refused_untouched(tmp_path: Path):
    path = _write(tmp_path, '{"hooks": {,}')
    with pytest.raises(WriteRefused):
        install_hook(tmp_path)
    with pytest.raises(WriteRefused):
        uninstall_hook(tmp_path)
    assert path.read_text() == '{"hooks": {,}'
    assert not (path.parent / "settings.json.bak").exists()


@pytest.mark.parametrize("data", [[1, 2], {"hooks": []}, {"hooks": {"UserPromptSubmit": {"x": 1}}},
                                  {"hooks": {"UserPromptSubmit": [5, None]}},
                                  {"hooks": {"UserPromptSubmit": [{"hooks": [5]}]}},
                                  {"hooks": {"UserPromptSubmit": [{}]}},
                                  {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": 5}]}]}},
                                  {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "x"}]},
                                                                  {"hooks": "x"}]}}])
def test_unexpected_shapes_are_refused(tmp_path: Path, data):
    """Also a group that is no object, or whose ``hooks`` is no list (QA round 108-B F6: the hook was appended beside
    it, in a file Claude Code's settings check may refuse whole), and a file that is no object has a hint (F6 too)."""
    path = _write(tmp_path, data)
    before = path.read_bytes()
    with pytest.raises(WriteRefused) as info:
        install_hook(tmp_path)
    assert path.read_bytes() == before
    assert "fix it by hand" in info.value.hint or "by hand (a group:" in info.value.hint  # (QA round 69 D-L5)
    if "UserPromptSubmit" in str(data) and isinstance(data["hooks"]["UserPromptSubmit"], list):
        bad = 1 if len(data["hooks"]["UserPromptSubmit"]) > 1 and data["hooks"]["UserPromptSubmit"][0] != 5 else 0
        assert f'"hooks.UserPromptSubmit"[{bad}] in {path} is not a hook group' in info.value.message
        assert not uninstall_hook(tmp_path) and path.read_bytes() == before  # (nothing of ours to remove: no refusal)


def test_a_settings_file_that_repeats_a_key_is_refused_not_rewritten(tmp_path: Path, capsys):
    """QA round 150-C F2: install and uninstall read a settings file whose object named a key twice as Python's JSON
    reader does (its last value) and wrote it back so: after an install and an uninstall, "env": {"A": "1"} was in
    neither the file nor its .bak. Such a file is refused, the key and where it is named, nothing written (exit 6 from
    the CLI); a file uninstall has nothing to remove from is not refused (nor rewritten)."""
    from dreamdb.cli import main

    text = '{\n  "env": {"A": "1"},\n  "env": {"B": "2"},\n  "x": "caf\\u00e9"\n}\n'
    path = _write(tmp_path, text)
    before = path.read_bytes()
    with pytest.raises(WriteRefused) as info:
        install_hook(tmp_path)
    assert info.value.message == (f'{path} writes the key "env" (at the top level) more than once, and rewriting it'
                                  " would keep only the last value of each; nothing was changed.")
    assert info.value.hint == "Keep one of each by hand (merge their values), then retry."
    code = main(["hook", "install", "--project", str(tmp_path), "--command", "dreamdb hook user-prompt-submit"])
    assert code == 6 and 'writes the key "env" (at the top level) more than once' in capsys.readouterr().err
    code = main(["hook", "uninstall", "--project", str(tmp_path)])
    assert code == 0 and path.read_bytes() == before  # (no hook of ours in it: nothing to rewrite)
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]
    # a hook of ours in a file that repeats keys deeper: uninstall refuses it too, both files untouched
    group = ('{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "dreamdb hook'
             ' user-prompt-submit", "timeout": 5, "timeout": 9}]}]}, "model": "a", "model": "b"}')
    path.write_text(group)
    local = settings_path(tmp_path, local=True)
    local.write_text('{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "dreamdb hook'
                     ' user-prompt-submit"}]}]}}\n')
    local_before = local.read_bytes()
    with pytest.raises(WriteRefused) as info:
        uninstall_hooks(tmp_path)
    assert info.value.message.startswith(
        f'{path} writes the keys "timeout" (in hooks.UserPromptSubmit[0].hooks[0]), "model" (at the top level) more'
        " than once"), info.value.message
    code = main(["hook", "uninstall", "--project", str(tmp_path)])
    assert code == 6 and '"model" (at the top level) more than once' in capsys.readouterr().err
    assert path.read_text() == group and local.read_bytes() == local_before
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json", "settings.local.json"]


def test_missing_project_dir(tmp_path: Path):
    with pytest.raises(NotFound):
        install_hook(tmp_path / "nope")


def test_install_refuses_a_vault_folder_or_one_inside_it(tmp_path: Path):
    """QA round 139-C F1: an install into the vault (``_dream_context``) or a folder of it wrote settings Claude Code
    never reads there; refused, the hint naming the project's folder. Uninstall still removes one from there."""
    from dreamdb.errors import UsageError

    vault = tmp_path / "proj" / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "proj" / "link").symlink_to(vault / "knowledge")  # (its real path is in the vault)
    for folder in (vault, vault / "knowledge", tmp_path / "proj" / "link"):
        with pytest.raises(UsageError) as err:
            install_hook(folder)
        assert err.value.hint == f"Give the project's folder, the vault's parent: --project {tmp_path / 'proj'}"
        assert not (folder / ".claude").exists()
    assert "is a vault folder" in str(install_hook_error(vault)) and f"is inside the vault {vault}" in str(
        install_hook_error(vault / "knowledge"))
    _write(vault, {"hooks": {"UserPromptSubmit": [OURS]}})  # (as an earlier version installed it)
    assert uninstall_hooks(vault) == [settings_path(vault)] and json.loads(settings_path(vault).read_text()) == {}
    assert install_hook(tmp_path / "proj") == settings_path(tmp_path / "proj")


def install_hook_error(folder: Path) -> Exception:
    try:
        install_hook(folder)
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError(f"installed in {folder}")


def test_uninstall_keeps_a_claude_folder_the_user_had_before_the_install(tmp_path: Path):
    """QA round 146-D F5: uninstall removed any ``.claude`` folder its removal of settings.json left empty, one the
    user had made before the install too, where install then uninstall leaves the project as it was. Install records
    in the user cache the folder it made (another process's uninstall reads it); uninstall removes that one only."""
    import subprocess
    import sys

    def cli(*args: str) -> None:
        ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", *args, "--project", str(project)],
                             capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stderr

    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)  # the user's own, empty
    cli("install")
    cli("uninstall")
    assert (project / ".claude").is_dir() and list((project / ".claude").iterdir()) == []
    (project / ".claude").rmdir()
    cli("install")  # (it makes the folder: the uninstall of another process removes it)
    cli("install", "--local")
    cli("uninstall")
    assert not (project / ".claude").exists()
    install_hook(project)  # (it makes the folder, and the user makes another in its place: that one is kept)
    (project / ".claude").rename(tmp_path / "moved")
    (project / ".claude").mkdir()
    (tmp_path / "moved" / "settings.json").rename(project / ".claude" / "settings.json")
    assert uninstall_hook(project) is True and (project / ".claude").is_dir()


def test_uninstall_keeps_a_claude_folder_the_user_made_again_with_the_inode_number_of_ours(tmp_path: Path):
    """QA round 146-I F3: the record of the ``.claude`` folder install made named it by device, inode number and real
    path, and a file system gives a folder made again after ``rm -rf`` the same inode number (ext4): install then
    recorded nothing, and uninstall removed the user's own folder. The record holds the folder's change time as
    dreamdb's last write in it left it, so a folder made since matches it no more, and install drops it; install
    --local, and a probe of whether the folder can be written, keep the record of a folder install made."""
    from dreamdb import hook_settings

    project = tmp_path / "proj"
    project.mkdir()
    install_hook(project)
    record = hook_settings._made_folder_path(project / ".claude")
    ino = os.lstat(project / ".claude").st_ino
    shutil.rmtree(project / ".claude")
    (project / ".claude").mkdir()  # the user's own folder
    time.sleep(0.02)  # (another moment than the install's write, as a user's mkdir is)
    new_ino = os.lstat(project / ".claude").st_ino
    if new_ino != ino:  # (the file system gave another inode number: the record made as if it had given the same)
        record.write_bytes(record.read_bytes().replace(f" {ino} ".encode(), f" {new_ino} ".encode(), 1))
    install_hook(project)
    assert uninstall_hook(project) is True
    assert (project / ".claude").is_dir() and list((project / ".claude").iterdir()) == []
    # a folder install made is removed, after a second install (--local) and a probe of the folder alike
    (project / ".claude").rmdir()
    install_hook(project)
    time.sleep(0.02)
    hook_settings._check_writable_place(settings_path(project))
    install_hook(project, local=True)
    assert sorted(p.name for p in (project / ".claude").iterdir()) == ["settings.json", "settings.local.json"]
    assert uninstall_hook(project) is True
    assert not (project / ".claude").exists() and not record.exists()


def test_uninstall_removes_only_ours(tmp_path: Path):
    path = _write(tmp_path, EXISTING)
    install_hook(tmp_path)
    assert uninstall_hook(tmp_path) is True
    assert json.loads(path.read_text()) == EXISTING
    assert uninstall_hook(tmp_path) is False


def test_uninstall_cleans_up_containers_it_emptied(tmp_path: Path):
    path = _write(tmp_path, {"model": "opus"})
    install_hook(tmp_path)
    assert uninstall_hook(tmp_path) is True
    assert json.loads(path.read_text()) == {"model": "opus"}


def test_uninstall_keeps_shared_group(tmp_path: Path):
    path = _write(tmp_path, {"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo hi"},
        {"type": "command", "command": DEFAULT_COMMAND}]}]}})
    assert uninstall_hook(tmp_path) is True
    assert json.loads(path.read_text()) == {"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo hi"}]}]}}


def test_install_local_and_uninstall_from_both_settings_files(tmp_path: Path):
    """QA round 19: the install help sends teammates to settings.local.json, but uninstall only looked in
    settings.json and said "Prompt hook removed." while the local hook stayed."""
    from dreamdb.hook_settings import uninstall_hooks

    shared = _write(tmp_path, EXISTING)
    local = install_hook(tmp_path, "/opt/dreamdb/bin/dreamdb hook user-prompt-submit", local=True)
    assert local == tmp_path / ".claude" / "settings.local.json" and json.loads(shared.read_text()) == EXISTING
    assert is_dreamdb_hook(json.loads(local.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"])
    install_hook(tmp_path)
    assert uninstall_hooks(tmp_path) == [shared, local]
    assert json.loads(shared.read_text()) == EXISTING and not local.exists()  # (it held our hook alone)
    assert uninstall_hooks(tmp_path) == [] and uninstall_hook(tmp_path) is False


def test_install_then_uninstall_leaves_no_settings_file_it_created(tmp_path: Path):
    """QA round 99-B F6: install on a project without settings, then uninstall, left a settings.json of ``{}``
    and a settings.json.bak holding the hook. A file that held dreamdb's hook alone is removed; one that holds
    anything else, or is a symlink (into a dotfiles repository), is rewritten as before."""
    path = install_hook(tmp_path)
    assert uninstall_hook(tmp_path) is True
    assert not (tmp_path / ".claude").exists()  # (the folder install made, left empty, goes too: QA round 104-B F9)
    (tmp_path / ".claude" / "agents").mkdir(parents=True)  # (one holding anything else stays)
    install_hook(tmp_path)
    assert uninstall_hook(tmp_path) is True and sorted(p.name for p in (tmp_path / ".claude").iterdir()) == ["agents"]
    linked_to = tmp_path / "dotfiles" / "settings.json"
    linked_to.parent.mkdir()
    linked_to.write_text("{}")
    path.symlink_to(linked_to)
    install_hook(tmp_path)
    assert uninstall_hook(tmp_path) is True
    assert path.is_symlink() and json.loads(linked_to.read_text()) == {}
    path.unlink()
    _write(tmp_path, {"model": "opus"})
    install_hook(tmp_path)
    assert uninstall_hook(tmp_path) is True and json.loads(path.read_text()) == {"model": "opus"}
    # a "{}" the user made is theirs: install keeps it in the .bak, and uninstall writes "{}" again (QA round 101-A
    # F8: it was deleted, the .bak alone left)
    for leftover in (path, path.with_name("settings.json.bak")):
        leftover.unlink()
    path.write_text("{}")
    install_hook(tmp_path)
    assert uninstall_hook(tmp_path) is True and path.read_text().strip() == "{}"
    # so is it after a second install with another command, whose .bak holds the hook (QA round 102-A F3: deleted)
    install_hook(tmp_path, command="dreamdb hook user-prompt-submit")
    install_hook(tmp_path, command="/opt/x/bin/dreamdb hook user-prompt-submit")
    assert uninstall_hook(tmp_path) is True and path.read_text().strip() == "{}"


def test_uninstall_after_two_installs_in_a_project_without_settings_leaves_none(tmp_path: Path):
    """QA round 149-A F2: in a project without .claude, an install, a second one replacing the command (which kept
    the first one's file in the .bak) and an uninstall left settings.json as "{}" and settings.json.bak, which held
    nothing of the user's. A .bak that holds only an install's file is an install's: both go, and .claude; one that
    holds anything else is kept, and the file, as "{}"."""
    path = settings_path(tmp_path)
    backup = path.with_name("settings.json.bak")
    install_hook(tmp_path, command="uvx dreamdb hook user-prompt-submit")
    install_hook(tmp_path, command="/opt/x/bin/dreamdb hook user-prompt-submit")
    assert json.loads(backup.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] == (
        "uvx dreamdb hook user-prompt-submit")
    assert uninstall_hooks(tmp_path) == [path]
    assert not path.exists() and not backup.exists() and not (tmp_path / ".claude").exists()
    # three installs: the .bak the second made is kept by the third (a file only an install wrote is not saved)
    for command in ("uvx dreamdb hook user-prompt-submit", "/opt/x/bin/dreamdb hook user-prompt-submit",
                    DEFAULT_COMMAND):
        install_hook(tmp_path, command=command)
    assert "uvx dreamdb" in backup.read_text()
    assert uninstall_hooks(tmp_path) == [path] and not (tmp_path / ".claude").exists()
    # a .bak the user wrote beside an install's file (a hook with a timeout: not as an install writes it) is kept,
    # and the file too, as "{}"
    install_hook(tmp_path)
    by_hand = json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "timeout": 20,
                                                                     "command": DEFAULT_COMMAND}]}]}}, indent=2) + "\n"
    backup.write_text(by_hand)
    install_hook(tmp_path, command="/opt/x/bin/dreamdb hook user-prompt-submit")
    assert backup.read_text() == by_hand  # (kept: the file it would replace it with only an install wrote)
    assert uninstall_hooks(tmp_path) == [path] and path.read_text().strip() == "{}"
    assert "/opt/x/bin/dreamdb" in backup.read_text()
    # the user's "{}" before two installs is kept, whichever uninstall (QA round 102-A F3)
    path.unlink()
    backup.unlink()
    path.write_text("{}\n")
    install_hook(tmp_path, command="uvx dreamdb hook user-prompt-submit")
    install_hook(tmp_path, command="/opt/x/bin/dreamdb hook user-prompt-submit")
    assert backup.read_text() == "{}\n"
    assert uninstall_hooks(tmp_path) == [path] and path.read_text() == "{}\n"


@pytest.mark.parametrize("text", [
    '{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"dreamdb hook user-prompt-submit"}]}]}}',
    json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "timeout": 20,
                                                            "command": "dreamdb hook user-prompt-submit"}]}]}}, indent=2),
])
def test_uninstall_keeps_a_settings_file_written_by_hand(tmp_path: Path, text: str):
    """QA round 132-C F1: a settings.local.json written by hand (or committed by a teammate) that held dreamdb's
    hook alone was deleted, .claude with it, and no .bak kept: only a file exactly as an install writes it goes."""
    path = tmp_path / ".claude" / "settings.local.json"
    path.parent.mkdir()
    path.write_text(text)
    assert uninstall_hooks(tmp_path) == [path]
    assert json.loads(path.read_text()) == {} and path.with_name("settings.local.json.bak").read_text() == text
    made = install_hook(tmp_path, command="DREAMDB_HOOK_VERBOSE=1 dreamdb hook user-prompt-submit", local=True)
    assert made == path and uninstall_hooks(tmp_path) == [path] and path.read_text().strip() == "{}"
    path.unlink()
    path.with_name("settings.local.json.bak").unlink()
    install_hook(tmp_path, command="DREAMDB_HOOK_VERBOSE=1 dreamdb hook user-prompt-submit", local=True)
    assert uninstall_hooks(tmp_path) == [path] and not path.exists()  # (one an install made still goes)
    assert path.parent.is_dir()  # (the folder, made before the install, is kept: QA round 146-D F5)


def test_uninstall_changes_neither_file_when_one_is_not_json(tmp_path: Path):
    shared = _write(tmp_path, EXISTING)
    install_hook(tmp_path)
    before = shared.read_bytes()
    (tmp_path / ".claude" / "settings.local.json").write_text("{not json")
    with pytest.raises(WriteRefused, match="settings.local.json is not valid JSON") as info:
        uninstall_hook(tmp_path)
    assert "install" not in info.value.hint
    assert shared.read_bytes() == before
    # a byte-order mark is named (QA round 37: "is not valid JSON" left the user looking for a syntax error)
    bom = b"\xef\xbb\xbf" + json.dumps(EXISTING).encode()
    shared.write_bytes(bom)
    (tmp_path / ".claude" / "settings.local.json").unlink()
    with pytest.raises(WriteRefused, match="settings.json starts with a byte-order mark") as info:
        install_hook(tmp_path)
    assert "Remove the BOM" in info.value.hint and shared.read_bytes() == bom


def test_uninstall_without_file(tmp_path: Path):
    assert uninstall_hook(tmp_path) is False


def test_is_dreamdb_hook():
    assert is_dreamdb_hook(DEFAULT_COMMAND)
    assert is_dreamdb_hook("  dreamdb   hook user-prompt-submit ")
    assert is_dreamdb_hook("/home/u/.venv/bin/dreamdb hook user-prompt-submit")
    assert not is_dreamdb_hook("dreamcontext hook prompt")
    assert is_dreamdb_hook("dreamdb hook user-prompt-submit && rm -rf /")  # (runs it: not alone, QA round 139-D F5)
    assert not runs_hook_alone("dreamdb hook user-prompt-submit && rm -rf /")
    assert not is_dreamdb_hook(None) and not runs_hook_alone(None)


def test_symlinked_settings_are_written_through_the_link(tmp_path: Path):
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps(EXISTING, indent=4) + "\n", encoding="utf-8")
    link = tmp_path / "proj" / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(Path("..", "..", "dotfiles", "claude-settings.json"))  # relative, as dotfile managers make them
    install_hook(tmp_path / "proj")
    assert link.is_symlink() and link.resolve() == dotfiles.resolve()
    assert json.loads(dotfiles.read_text())["hooks"]["UserPromptSubmit"][-1] == OURS
    assert json.loads((link.parent / "settings.json.bak").read_text()) == EXISTING
    assert uninstall_hook(tmp_path / "proj")
    assert link.is_symlink() and json.loads(dotfiles.read_text()) == EXISTING
    assert [p.name for p in dotfiles.parent.iterdir()] == ["claude-settings.json"]  # no stray temp file


def test_write_failure_is_refused_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A full disk is simulated by monkeypatching os.fsync to raise OSError(ENOSPC)."""
    path = _write(tmp_path, EXISTING)
    before = path.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(WriteRefused, match="disk is full"):
        install_hook(tmp_path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_refused_write_keeps_the_previous_backup(tmp_path: Path):
    """QA round 11: an uninstall refused by a write-protected settings.json still replaced settings.json.bak."""
    import os

    from dreamdb.errors import WriteRefused

    path = settings_path(tmp_path)
    path.parent.mkdir()
    path.write_text('{"orig": true}\n')
    install_hook(tmp_path)
    backup = path.with_name("settings.json.bak")
    assert json.loads(backup.read_text()) == {"orig": True}
    installed = path.read_bytes()
    os.chmod(path, 0o444)
    try:
        with pytest.raises(WriteRefused):
            uninstall_hook(tmp_path)
    finally:
        os.chmod(path, 0o644)
    assert path.read_bytes() == installed and json.loads(backup.read_text()) == {"orig": True}
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json", "settings.json.bak"]


@pytest.mark.parametrize("first", ["PYTHONPATH=/x python3 -m dreamdb hook user-prompt-submit",
                                   "env PYTHONPATH=/x /opt/bin/dreamdb hook user-prompt-submit"])
def test_install_recognises_a_hook_run_with_environment_settings(tmp_path: Path, first: str):
    """QA round 11: a dreamdb hook behind VAR=value was not recognised, so a second install added a second hook."""
    install_hook(tmp_path, command=first)
    install_hook(tmp_path)
    groups = json.loads(settings_path(tmp_path).read_text())["hooks"]["UserPromptSubmit"]
    assert [h["command"] for g in groups for h in g["hooks"]] == ["dreamdb hook user-prompt-submit"]
    # (a second install that replaced the command kept a .bak, of the first one's file: both are an install's, and
    # go, QA round 149-A F2; they were kept, the file as "{}", QA round 102-A F3)
    assert uninstall_hook(tmp_path) and not settings_path(tmp_path).parent.exists()


@pytest.mark.parametrize("command", ["a\nb", "", "dreamdb hook user-prompt-submit\r"])
def test_install_refuses_a_command_that_is_not_one_line(tmp_path: Path, command: str):
    from dreamdb.errors import UsageError

    with pytest.raises(UsageError, match="one line"):
        install_hook(tmp_path, command=command)
    assert not settings_path(tmp_path).exists()


@pytest.mark.parametrize("command", ["uvx dreamdb hook user-prompt-submit", "pipx run dreamdb hook user-prompt-submit",
                                     "uvx dreamdb@0.1 hook user-prompt-submit", "uv run --with dreamdb dreamdb hook user-prompt-submit"])
def test_a_hook_installed_through_a_runner_is_recognised_and_uninstalled(tmp_path, command):
    """QA round 14: the --help example `uvx dreamdb …` was not recognised: uninstall said no hook was
    installed and the next default install added a second one (the block injected twice)."""
    assert is_dreamdb_hook(command)
    install_hook(tmp_path, command)
    install_hook(tmp_path)  # the default command replaces it, never adds a second hook
    groups = json.loads(settings_path(tmp_path).read_text())["hooks"]["UserPromptSubmit"]
    assert [h["command"] for g in groups for h in g["hooks"]] == [DEFAULT_COMMAND]
    assert uninstall_hook(tmp_path)
    assert not any(is_dreamdb_hook(c) for c in ("echo hook user-prompt-submit", "mydreamdb hook user-prompt-submit",
                                                "dreamdb hook other"))


@pytest.mark.parametrize("command", ["", " ", "dreamdb \udcff hook user-prompt-submit"])
def test_a_blank_or_undecodable_hook_command_is_refused(tmp_path, command):
    from dreamdb.errors import UsageError

    with pytest.raises(UsageError):
        install_hook(tmp_path, command)
    assert not settings_path(tmp_path).exists()


@pytest.mark.parametrize("command, ours", [
    ("dreamdb hook user-prompt-submit 2>/dev/null", True), ("dreamdb hook user-prompt-submit || true", True),
    ("dreamdb hook user-prompt-submit > /tmp/log 2>&1", True), ("dreamdb hook user-prompt-submit||exit 0", True),
    ("dreamdb hook user-prompt-submit --json", True), ("dreamdb --vault=/x hook user-prompt-submit", True),
    ("dreamdb hook user-prompt-submit | tee x", False), ("rm -rf / ; dreamdb hook user-prompt-submit", False),
    ('cd "$CLAUDE_PROJECT_DIR" && dreamdb hook user-prompt-submit', False),
])
def test_a_hook_with_redirections_is_ours_and_anything_more_is_not(tmp_path, command, ours):
    """QA round 15: `… 2>/dev/null` was installed but not recognised: uninstall left it, the next install added a
    second hook. Redirections, arguments the CLI ignores and a fallback keep it dreamdb's alone; a command that runs
    anything more is never touched, and no second hook is added beside it (QA round 139-D F5: each prompt got the
    memories twice)."""
    assert is_dreamdb_hook(command) and runs_hook_alone(command) is ours
    install_hook(tmp_path, command)
    install_hook(tmp_path)
    commands = [h["command"] for g in json.loads(settings_path(tmp_path).read_text())["hooks"]["UserPromptSubmit"]
                for h in g["hooks"]]
    assert commands == ([DEFAULT_COMMAND] if ours else [command])


def test_uninstall_from_a_missing_project_folder_is_not_found(tmp_path: Path):
    from dreamdb.errors import NotFound

    with pytest.raises(NotFound, match="No project folder"):
        uninstall_hook(tmp_path / "no-such-project")
    assert uninstall_hook(tmp_path) is False  # an existing folder without settings: nothing to remove


def test_a_project_folder_that_is_a_symlink_loop_is_said_to_be_one(tmp_path: Path):
    """QA round 102-A: a --project that is a loop of links read "No project folder", as if mistyped."""
    from dreamdb.errors import NotFound

    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for call in (install_hook, uninstall_hook):
        with pytest.raises(NotFound, match="symlink loop"):
            call(loop)
    with pytest.raises(NotFound, match="does not exist"):
        install_hook(tmp_path / "nope")
    # a loop on the way is named; a link to nothing is said to be one (QA round 104-A F11)
    with pytest.raises(NotFound, match=f"goes through a symlink loop: {loop} is a link"):
        install_hook(loop / "sub")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(NotFound, match="the path is a link to nothing"):
        uninstall_hook(tmp_path / "dangling")


def test_a_settings_file_that_is_not_a_regular_file_is_refused_not_waited_on(tmp_path: Path):
    """QA round 40: install and uninstall hung on a FIFO named settings.json."""
    target = settings_path(tmp_path)
    target.parent.mkdir(parents=True)
    os.mkfifo(target)
    with pytest.raises(WriteRefused, match="is not a regular file"):
        install_hook(tmp_path)
    with pytest.raises(WriteRefused, match="is not a regular file"):
        uninstall_hook(tmp_path)
    assert target.is_fifo()


def test_the_note_on_a_command_that_is_not_ours_names_the_file_written(tmp_path: Path):
    """QA round 40: with --local the note said to edit .claude/settings.json, but the hook went to settings.local.json."""
    import subprocess
    import sys

    ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path), "--local",
                          "--command", "dreamdb hook user-prompt-submit; echo more"],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    local = settings_path(tmp_path, local=True)
    assert f"Remove it from {local} by hand" in ran.stderr and local.is_file()


@pytest.mark.parametrize("local, mode", [(True, 0o600), (False, 0o640)])
def test_the_backup_has_the_settings_file_mode(tmp_path: Path, local: bool, mode: int):
    """QA round 59 M3: the .bak of a 0600 settings.local.json (tokens in "env") was written 0644, readable by all;
    an older, wider .bak is replaced by one with the file's mode (one of these settings: an earlier dreamdb's backup,
    which it replaces; one it did not write is left, QA round 156-C F2)."""
    path = settings_path(tmp_path, local=local)
    path.parent.mkdir()
    path.write_text('{"env": {"API_TOKEN": "sekrit"}}\n')
    os.chmod(path, mode)
    backup = path.with_name(path.name + ".bak")
    backup.write_text('{"env": {"API_TOKEN":  "sekrit"}}')
    os.chmod(backup, 0o644)
    old_umask = os.umask(0)  # the laxest umask: the mode must come from the file, not from it
    try:
        install_hook(tmp_path, local=local)
        assert backup.stat().st_mode & 0o777 == mode and "sekrit" in backup.read_text()
        assert path.stat().st_mode & 0o777 == mode
        assert uninstall_hook(tmp_path)
    finally:
        os.umask(old_umask)
    assert backup.stat().st_mode & 0o777 == mode and DEFAULT_COMMAND in backup.read_text()
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, backup.name])  # no stray temp file


def test_install_keeps_numbers_as_written_and_the_indentation(tmp_path: Path):
    """QA round 59 L1: `"F": 1e400` (valid JSON) was written back as `Infinity`, which JSON parsers reject, and a
    4-space file was reindented with 2 spaces."""
    path = _write(tmp_path, '{\n    "env": {"F": 1e400, "G": 1.50, "H": -2E-3, "I": 10},\n    "model": "opus"\n}\n')
    install_hook(tmp_path)
    text = path.read_text()
    assert '"F": 1e400' in text and '"G": 1.50' in text and '"H": -2E-3' in text and '"I": 10' in text
    assert "Infinity" not in text and json.loads(text, parse_constant=pytest.fail)["model"] == "opus"
    assert text.startswith('{\n    "env": {\n        "F": 1e400,')
    uninstall_hook(tmp_path)
    assert path.read_text() == '{\n    "env": {\n        "F": 1e400,\n        "G": 1.50,\n        "H": -2E-3,\n' \
                               '        "I": 10\n    },\n    "model": "opus"\n}\n'


@pytest.mark.parametrize("raw, indent", [('{\n\t"model": "opus"\n}\n', "\t"), ('{"model": "opus"}', "  "),
                                         ('{\n  "model": "opus"\n}\n', "  ")])
def test_install_keeps_tabs_and_gives_a_one_line_file_two_spaces(tmp_path: Path, raw: str, indent: str):
    """QA round 59 L1: the file's own indentation is kept (2 spaces when it has none to follow)."""
    path = _write(tmp_path, raw)
    install_hook(tmp_path)
    assert path.read_text().startswith(f'{{\n{indent}"model": "opus",\n{indent}"hooks": {{\n{indent}{indent}"User')


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_settings_holding_nan_or_infinity_are_refused_untouched(tmp_path: Path, constant: str):
    """QA round 59 L1: NaN and Infinity are not JSON: such a file is refused like any other invalid one."""
    path = _write(tmp_path, f'{{"F": {constant}}}\n')
    with pytest.raises(WriteRefused, match=f"not valid JSON.*{constant}"):
        install_hook(tmp_path)
    assert path.read_text() == f'{{"F": {constant}}}\n'
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


@pytest.mark.parametrize("command", ["dreamdb\x1b[2J hook user-prompt-submit", "dreamdb hook\tuser-prompt-submit",
                                     "dreamdb hook user-prompt-submit \x9b", "dreamdb hook user-prompt-submit\u202e",
                                     "dreamdb hook user-prompt-submit \U000e0041\U000e0042"])
def test_install_refuses_control_bidi_and_invisible_characters_in_the_command(tmp_path: Path, command: str):
    """QA round 59 L10: a newline was refused but ESC (and C1 controls, bidi overrides, Unicode tags) were written
    into settings.json."""
    from dreamdb.errors import UsageError

    path = _write(tmp_path, EXISTING)
    before = path.read_bytes()
    with pytest.raises(UsageError, match="The hook command must be one line of text, without control characters"):
        install_hook(tmp_path, command=command)
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_a_backup_path_that_is_a_folder_is_passed_over_for_the_next_name(tmp_path: Path, action: str):
    """QA round 60 M3: with settings.json.bak a folder, install and uninstall rewrote settings.json, then failed to
    rename the backup, said "Cannot write …settings.json: it is a folder…; nothing was changed" (exit 6, false) and
    left a .settings.json.bak.dreamdb-XXXX.tmp at each run; it was then refused first. A .bak dreamdb did not write
    is never replaced (QA round 156-C F2): the backup goes to settings.json.bak.1, the folder left as it is."""
    path = _write(tmp_path, EXISTING)
    if action == "uninstall":
        install_hook(tmp_path)
        path.with_name("settings.json.bak").unlink()
    path.with_name("settings.json.bak").mkdir()
    before = path.read_bytes()
    backups: list[Path] = []
    if action == "install":
        install_hook(tmp_path, backups=backups)
    else:
        uninstall_hooks(tmp_path, backups=backups)
    assert backups == [path.with_name("settings.json.bak.1")] and backups[0].read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json", "settings.json.bak",
                                                             "settings.json.bak.1"]  # no *.tmp
    assert list(path.with_name("settings.json.bak").iterdir()) == []


def _take_every_backup_name(path: Path) -> None:
    """Make a folder at each name a backup of ``path`` may take (settings.json.bak, .bak.1 … .bak.99)."""
    from dreamdb.hook_settings import MAX_BACKUP_NAMES

    path.with_name(path.name + ".bak").mkdir()
    for n in range(1, MAX_BACKUP_NAMES):
        path.with_name(f"{path.name}.bak.{n}").mkdir()


def test_uninstall_checks_both_backups_before_writing_either(tmp_path: Path):
    """QA round 60 M3: a settings.local.json whose backup cannot be written refuses the uninstall before settings.json
    is written (a .bak folder, then; now every name a backup may take, QA round 156-C F2)."""
    shared = install_hook(tmp_path)
    local = install_hook(tmp_path, local=True)
    _write(tmp_path, {**json.loads(shared.read_text()), "model": "x"})  # (a file the user had: rewritten, not deleted)
    local.write_text(json.dumps({**json.loads(local.read_text()), "model": "x"}))
    _take_every_backup_name(local)
    before = shared.read_bytes(), local.read_bytes()
    with pytest.raises(WriteRefused, match=r"settings\.local\.json\.bak and 99 more names after it .* are taken by"
                                           r" files dreamdb did not write.*nothing was changed") as info:
        uninstall_hook(tmp_path)
    assert info.value.exit_code == 6 and "settings.local.json.bak.*" in info.value.hint
    assert (shared.read_bytes(), local.read_bytes()) == before
    assert not any(p.name.endswith(".tmp") for p in shared.parent.iterdir())


def test_a_backup_the_user_had_is_never_replaced(tmp_path: Path):
    """QA round 156-C F2: with a settings.json.bak of the user's own (MY OLD BACKUP), ``hook install`` replaced it by
    the settings' previous version, and its output named no backup. A .bak dreamdb did not write (recorded in the user
    cache by its bytes' sha256), that is not the file's settings but for dreamdb's hook either, is left as it is: the
    backup goes to the next free name, settings.json.bak.1, which later installs and uninstalls reuse; the output
    says where it went. A .bak that holds the file's settings but for dreamdb's hook (an earlier dreamdb's, unrecorded)
    is replaced as before."""
    import subprocess
    import sys

    from dreamdb import hook_settings
    from dreamdb.config import cache_root

    path = _write(tmp_path, '{"x": 1}\n')
    mine, first = path.with_name("settings.json.bak"), path.with_name("settings.json.bak.1")
    mine.write_text("MY OLD BACKUP\n")

    def hook(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dreamdb", "hook", *args, "--project", str(tmp_path),
                               *(["--command", DEFAULT_COMMAND] if args[0] == "install" else [])],
                              capture_output=True, text=True, timeout=120)

    kept = f"The previous settings.json is kept in {first} (settings.json.bak, which dreamdb did not write, is left as it is)."
    ran = hook("install")
    assert ran.returncode == 0 and ran.stdout == (f"Prompt hook installed in {path}: {DEFAULT_COMMAND}\n{kept}\n"), ran
    assert mine.read_text() == "MY OLD BACKUP\n" and first.read_text() == '{"x": 1}\n'
    with_hook = path.read_text()
    ran = hook("uninstall", "--json")
    assert ran.returncode == 0 and json.loads(ran.stdout)["backups"] == [str(first)], ran
    assert first.read_text() == with_hook and mine.read_text() == "MY OLD BACKUP\n"
    path.write_text('{"x": 2}\n')  # (the settings changed since: dreamdb's own .bak.1, recorded, is replaced all the same)
    ran = hook("install", "--json")
    assert ran.returncode == 0 and json.loads(ran.stdout)["backup"] == str(first), ran
    assert first.read_text() == '{"x": 2}\n' and not path.with_name("settings.json.bak.2").exists()
    shutil.rmtree(cache_root() / hook_settings.BACKUPS)  # (no record: .bak.1 holds the settings but for dreamdb's hook, so is replaced)
    ran = hook("uninstall")
    assert ran.returncode == 0 and ran.stdout == f"Prompt hook removed from {path}. {kept}\n", ran
    assert json.loads(first.read_text())["hooks"] and mine.read_text() == "MY OLD BACKUP\n"
    # a .bak of other settings, JSON or not, is the user's; one of these settings (an earlier dreamdb's) is replaced
    for leftover in (first, mine):
        leftover.unlink()
    for theirs, where in (('{"x": 1}\n', first), ("{\n  \"x\": 2\n}\n", mine)):
        path.write_text('{"x": 2}\n')
        mine.write_text(theirs)
        ran = hook("install")
        assert ran.returncode == 0 and ran.stdout.endswith(f"The previous settings.json is kept in {where}"
                                                           + (".\n" if where == mine else " (settings.json.bak, which"
                                                              " dreamdb did not write, is left as it is).\n")), ran
        assert (mine.read_text() == theirs) == (where != mine) and where.read_text() == '{"x": 2}\n'
        hook("uninstall")
        for leftover in (first, mine):
            leftover.unlink(missing_ok=True)


HAND_WRITTEN = '{"model":"x","hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"%s"}]}]}}' \
    % DEFAULT_COMMAND


@pytest.mark.parametrize("by_hand", [(False, True), (True, True), (False, False)], ids=["shared-made", "both-by-hand",
                                                                                        "local-made"])
def test_uninstall_checks_both_files_are_writable_before_changing_either(tmp_path: Path, by_hand):
    """QA round 144-B F1: with a settings.local.json of mode 444, uninstall deleted the settings.json an install
    made (or rewrote one written by hand to {"model": "x"}, keeping a .bak), then refused the local file: exit 6, "it
    was not changed". Now neither file is touched; a write-protected file an install made is not deleted either."""
    files = []
    for local, hand in zip((False, True), by_hand):
        path = settings_path(tmp_path, local)
        if hand:
            path.parent.mkdir(exist_ok=True)
            path.write_text(HAND_WRITTEN)
        files.append(path if hand else install_hook(tmp_path, local=local))
    shared, local = files
    before = shared.read_bytes(), local.read_bytes()
    os.chmod(local, 0o444)
    try:
        with pytest.raises(WriteRefused, match=r"settings\.local\.json is write-protected \(mode 444\)"):
            uninstall_hooks(tmp_path)
        assert (shared.read_bytes(), local.read_bytes()) == before
        assert sorted(p.name for p in shared.parent.iterdir()) == ["settings.json", "settings.local.json"]
    finally:
        os.chmod(local, 0o644)
    assert uninstall_hooks(tmp_path) == [shared, local]  # (writable again: both lose the hook)


def test_a_backup_that_cannot_be_renamed_after_the_write_is_not_reported_as_nothing_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """QA round 60 M3: when the backup's final rename fails for another reason, its temporary file is removed and
    the message says the settings were written (not exit 6, "nothing was changed")."""
    from dreamdb.errors import DreamdbError
    from dreamdb import hook_settings

    path = _write(tmp_path, EXISTING)
    real_replace = os.replace

    def replace(src, dst, *args, **kwargs):
        if str(dst).endswith(".bak"):
            raise OSError(errno.EIO, os.strerror(errno.EIO), str(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(hook_settings.os, "replace", replace)
    with pytest.raises(DreamdbError) as info:
        install_hook(tmp_path)
    monkeypatch.undo()
    assert not isinstance(info.value, WriteRefused) and info.value.exit_code == 1
    assert "was written" in info.value.message and "settings.json.bak" in info.value.message
    assert "nothing was changed" not in info.value.message
    assert DEFAULT_COMMAND in path.read_text()
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]  # the temporary copy removed


def test_install_keeps_an_integer_too_long_for_int(tmp_path: Path):
    """QA round 60 L3: valid JSON holding an integer of more than 4300 digits was refused as "not valid JSON",
    quoting Python's sys.set_int_max_str_digits message; it is now kept as written, byte for byte."""
    big = "9" * 5000
    path = _write(tmp_path, f'{{\n  "e": {big},\n  "n": -0,\n  "i": 10\n}}\n')
    install_hook(tmp_path)
    assert path.read_text().startswith(f'{{\n  "e": {big},\n  "n": -0,\n  "i": 10,\n  "hooks": {{')
    uninstall_hook(tmp_path)
    assert path.read_text() == f'{{\n  "e": {big},\n  "n": -0,\n  "i": 10\n}}\n'


def test_install_and_uninstall_keep_crlf_line_endings(tmp_path: Path):
    """QA round 60 L4: a CRLF settings.json was rewritten with LF endings (the whole file changed in git diff)."""
    path = _write(tmp_path, "")
    path.write_bytes(b'{\r\n   "a": 1,\r\n   "b": "x\\ny"\r\n}\r\n')
    install_hook(tmp_path)
    raw = path.read_bytes()
    assert raw.endswith(b"}\r\n") and raw.count(b"\n") == raw.count(b"\r\n") > 3
    assert raw.startswith(b'{\r\n   "a": 1,\r\n   "b": "x\\ny",\r\n   "hooks": {')
    uninstall_hook(tmp_path)
    assert path.read_bytes() == b'{\r\n   "a": 1,\r\n   "b": "x\\ny"\r\n}\r\n'


def test_install_keeps_a_missing_final_newline_missing(tmp_path: Path):
    """QA round 60 L4: a file without a final newline (as some editors and tools write it) stays without one."""
    path = _write(tmp_path, '{\n  "a": 1\n}')
    install_hook(tmp_path)
    assert path.read_text().endswith("\n  }\n}")
    uninstall_hook(tmp_path)
    assert path.read_text() == '{\n  "a": 1\n}'


def test_settings_with_a_lone_surrogate_or_nested_too_deep_are_no_internal_error(tmp_path):
    """QA round 61 L3: `{"s": "\\ud800x"}` (valid JSON) gave an internal error (exit 70) on writing, and 100,000
    nested lists a RecursionError."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    settings.write_text('{"s": "\\ud800x"}\n')
    result = CliRunner().invoke(cli, ["hook", "install", "--project", str(project)])
    assert result.exit_code == 0, result.output
    assert json.loads(settings.read_text())["s"] == "\ud800x" and "hooks" in json.loads(settings.read_text())
    deep = "[" * 100_000 + "]" * 100_000
    settings.write_text('{"d": ' + deep + "}\n")
    result = CliRunner().invoke(cli, ["hook", "install", "--project", str(project)])
    from dreamdb.errors import WriteRefused

    assert isinstance(result.exception, WriteRefused) and "nests its JSON deeper" in result.exception.message
    assert settings.read_text() == '{"d": ' + deep + "}\n"


def test_install_and_uninstall_never_overwrite_another_programs_change(tmp_path: Path):
    """QA round 79-B F2: a program adding permission rules to settings.local.json (read, change, replace, as
    Claude Code does) while `hook install`/`uninstall` ran lost 37 of 303 rules: the settings were written from a
    read made before its change. A change since the read is read again, never overwritten."""
    import json
    import threading

    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"permissions": {"allow": []}}))
    stop = threading.Event()
    added: list[str] = []

    def other_program() -> None:
        n = 0
        while not stop.is_set() and n < 400:
            data = json.loads(local.read_text())
            rule = f"Bash(rule-{n})"
            data.setdefault("permissions", {}).setdefault("allow", []).append(rule)
            tmp = local.with_name(f".other-{n}.tmp")
            tmp.write_text(json.dumps(data))
            os.replace(tmp, local)
            added.append(rule)
            n += 1

    from dreamdb.writes.files import FileChanged

    thread = threading.Thread(target=other_program)
    thread.start()
    try:
        for _ in range(15):
            for edit in (lambda: install_hook(project, local=True), lambda: uninstall_hooks(project)):
                try:
                    edit()
                except FileChanged:  # (changed on every one of its attempts: refused, nothing changed, also right)
                    pass
    finally:
        stop.set()
        thread.join()
    kept = json.loads(local.read_text())["permissions"]["allow"]
    assert added and set(added) <= set(kept), len(set(added) - set(kept))


def test_a_killed_installs_backup_copy_is_removed_by_a_later_one(tmp_path: Path):
    """QA round 79-B F7: kill -9 during `hook install` left `.claude/.settings.json.bak.dreamdb-*.tmp` copies of the
    settings (often committed with .claude/), which no later install removed."""
    from dreamdb.writes.files import STALE_TEMP_SECONDS, TEMP_MARK

    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text('{"model": "x"}')
    stale = project / ".claude" / f".settings.json.bak.{TEMP_MARK}abcd1234.tmp"
    stale.write_text('{"model": "x"}')
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(stale, (old, old))
    install_hook(project)
    assert not stale.exists()


def test_an_install_waits_for_another_install_reading_both_files(tmp_path: Path):
    """QA round 100-B F2: ``hook install`` and ``hook install --local`` run together each read the other settings
    file before either wrote, and both added a hook (4 runs in 10); Claude Code then runs both. An install holds a
    lock on the project folder across its reads and its write: the second one sees the first one's hook."""
    import subprocess
    import sys
    import time

    from dreamdb.hook_settings import settings_lock

    with settings_lock(tmp_path):
        later = subprocess.Popen([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path),
                                  "--local", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)  # (it starts, then waits for the lock)
        assert later.poll() is None
        install_hook(tmp_path)  # the first install, done while the second waits
    out, err = later.communicate(timeout=60)
    assert later.returncode == 0 and json.loads(out)["kept"] is True and "add the memories twice" in err, (out, err)
    assert not (tmp_path / ".claude" / "settings.local.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".claude"]  # (no lock file left in the project)


def test_a_mistyped_dreamdb_hook_is_refused_where_dreamdb_is_not_on_path(tmp_path: Path):
    """QA round 128-B F4: ``--command 'dreamdb hook user_prompt_submit'`` (a typo) from a shell where dreamdb was not on
    PATH could not start (exit 127), and replaced a working hook, "Installed all the same"; where it was on PATH, the
    typo exited 2 and was refused. It is tried again with this dreamdb's folder first on PATH, and refused."""
    import subprocess
    import sys

    from dreamdb.cli.hook import _own_dreamdb_folder

    if _own_dreamdb_folder() is None:
        pytest.skip("no dreamdb program beside this Python (not installed with pip install -e .)")
    empty = tmp_path / "empty"
    empty.mkdir()
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path), "--command",
                          "dreamdb hook user_prompt_submit"], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": str(empty)})
    assert ran.returncode == 2 and "The command exits with code 2 when run as the hook (Error: No such command" \
        " 'user_prompt_submit'" in ran.stderr and "as no dreamdb is on this PATH" in ran.stderr, ran.stderr
    assert not settings_path(tmp_path).exists()


def test_a_dreamdb_command_that_hangs_where_dreamdb_is_found_is_said_so(tmp_path: Path, monkeypatch, capsys):
    """QA round 129-A F4: a command running dreamdb that could not start (127) and hung when tried again with this
    dreamdb's folder on PATH was said to fail with 127 alone; the hang is what Claude Code would meet. (The trial's
    time limit made 2 s here.)"""
    from dreamdb import hook_settings
    from dreamdb.cli import main
    from dreamdb.cli.hook import _own_dreamdb_folder

    if _own_dreamdb_folder() is None:
        pytest.skip("no dreamdb program beside this Python (not installed with pip install -e .)")
    monkeypatch.setattr(hook_settings.trial_run, "__defaults__", (2.0, None))
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert main(["hook", "install", "--project", str(tmp_path), "--command", "dreamdb --version && /bin/sleep 30"]) == 0
    err = capsys.readouterr().err
    assert "(it did not end within 2 s (stopped); run with " in err and "as no dreamdb is on this PATH)" in err, err


def test_a_dreamdb_command_installed_already_is_tried_again_and_its_failure_said(tmp_path: Path):
    """QA round 127-B F4: a mistyped dreamdb hook in the settings already (installed by an older dreamdb, where it
    could not start) was "already installed", untried, though it exited 2, blocking every prompt. A command that runs
    dreamdb is tried again (another program is not: QA round 110-A F6, next test but one)."""
    import subprocess
    import sys

    from dreamdb.hook_settings import install_hook

    command = "dreamdb hook user_prompt_submit"
    install_hook(tmp_path, command)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dreamdb").write_text(f"#!/bin/sh\nexec {sys.executable} -m dreamdb \"$@\"\n")
    (bin_dir / "dreamdb").chmod(0o755)
    before = settings_path(tmp_path).read_bytes()
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path), "--command",
                          command], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert ran.returncode == 0 and "Prompt hook already installed" in ran.stdout, ran
    assert (f"note: this command, which {settings_path(tmp_path)} holds already, exits with code 2 when run as the hook"
            " (Error: No such command 'user_prompt_submit'") in ran.stderr, ran.stderr
    assert settings_path(tmp_path).read_bytes() == before


def test_a_command_that_would_block_every_prompt_is_refused_and_a_failing_one_said(tmp_path: Path):
    """QA round 108-B F3: ``hook install --command 'dreamdb hook user_prompt_submit'`` (a typo) was installed; it exits
    2, a usage error, which Claude Code reads from a prompt hook as "block this prompt and erase it": every prompt
    lost. A command that is not dreamdb's hook is run once, as the hook would be; exit 2 refuses it (nothing written),
    another failure is said and installed."""
    import subprocess
    import sys

    def install(command: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path),
                               "--command", command], capture_output=True, text=True, timeout=120)

    typo = f"{sys.executable} -m dreamdb hook user_prompt_submit"
    ran = install(typo)
    assert ran.returncode == 2 and "The command exits with code 2 when run as the hook (Error: No such command" \
        " 'user_prompt_submit'" in ran.stderr, ran.stderr
    assert "every prompt would be erased. Nothing was installed." in ran.stderr
    assert not settings_path(tmp_path).exists()
    ran = install(f"{sys.executable} -c 'import sys; sys.exit(3)'")
    assert ran.returncode == 0 and "note: the command failed when run once as the hook (exit code 3)" in ran.stderr
    assert "sys.exit(3)" in settings_path(tmp_path).read_text()
    ran = install(f"{sys.executable} -c 'import sys; sys.stdout.write(sys.stdin.read())'")  # fine: said nothing of
    assert ran.returncode == 0 and "failed" not in ran.stderr, ran.stderr  # (it read the payload and exited 0)
    # dreamdb's own hook with a redirection the shell cannot make exits 2 too (QA round 109-A F4)
    settings_path(tmp_path).unlink()
    ran = install(f"{sys.executable} -m dreamdb hook user-prompt-submit 2>{tmp_path}/no/such/folder/hook.log")
    assert ran.returncode == 2 and "Nothing was installed" in ran.stderr and not settings_path(tmp_path).exists()
    # run as Claude Code runs it: $CLAUDE_PROJECT_DIR set (QA round 109-A F5)
    script = tmp_path / "mem.sh"
    script.write_text('#!/bin/sh\n[ "$CLAUDE_PROJECT_DIR" = "' + str(tmp_path) + '" ] || exit 2\n')
    script.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path), "--command",
                          '"$CLAUDE_PROJECT_DIR"/mem.sh'], capture_output=True, text=True, timeout=120, env=env)
    assert ran.returncode == 0 and "failed" not in ran.stderr, ran.stderr
    # not tried when the settings would be refused anyway (QA round 109-A F6)
    settings_path(tmp_path).write_text('{"hooks": {"UserPromptSubmit": [{"hooks": [5]}]}}')
    marker = tmp_path / "ran"
    ran = install(f"touch {marker}")
    assert ran.returncode == 6 and not marker.exists()


def test_a_hook_in_the_user_settings_too_is_said(tmp_path: Path):
    """QA round 108-B F5: dreamdb's hook in ``~/.claude/settings.json`` and a project's gave every prompt the memories
    twice (Claude Code runs the hooks of both files), and install said nothing."""
    import subprocess
    import sys

    home = tmp_path / "home"
    project = tmp_path / "proj"
    project.mkdir()
    env = {**os.environ, "HOME": str(home)}

    def install(where: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(where)],
                              capture_output=True, text=True, timeout=120, env=env)

    home.mkdir()
    assert "your user settings" not in install(project).stderr
    assert install(home).returncode == 0  # (the user's own: no note about itself)
    ran = install(project)
    assert ran.returncode == 0 and f"note: {home / '.claude' / 'settings.json'} (your user settings) holds dreamdb's" \
        " hook too (" in ran.stderr and "each prompt gets the memories twice" in ran.stderr, ran.stderr


@pytest.mark.parametrize("immutable", [".claude", "settings.json"])
def test_an_unwritable_settings_place_is_refused_before_the_trial_run(tmp_path: Path, immutable: str):
    """QA round 114-C F3: ``hook install --command`` ran its trial, then the write was refused (an immutable
    ``.claude`` or settings file): the command had run for an install that never happened."""
    import shutil
    import subprocess
    import sys

    (tmp_path / ".claude").mkdir()
    target = tmp_path / ".claude" / ("settings.json" if immutable == "settings.json" else "")
    if immutable == "settings.json":
        target.write_text("{}\n")
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(target)], capture_output=True).returncode:
        pytest.skip("chattr +i is not available here (needs root and a file system with the immutable flag)")
    marker = tmp_path.parent / f"{tmp_path.name}-ran"
    try:
        ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path),
                              "--command", f"touch {marker}"], capture_output=True, text=True, timeout=120)
    finally:
        subprocess.run(["chattr", "-i", str(target)], check=True)
    assert ran.returncode == 6 and "immutable attribute" in ran.stderr and "nothing was changed" in ran.stderr, ran.stderr
    assert not marker.exists()
    assert sorted(p.name for p in (tmp_path / ".claude").iterdir()) == (["settings.json"] if immutable != ".claude"
                                                                        else [])


def test_a_command_that_hangs_is_said_to_hold_every_prompt(tmp_path: Path, monkeypatch):
    """QA round 114-C F4c: a command the trial run stopped was installed with "Claude Code shows such a failure and
    goes on with the prompt": it goes on only after the hook's time limit, on every prompt."""
    from click.testing import CliRunner

    from dreamdb import hook_settings
    from dreamdb.cli import cli

    real = hook_settings.trial_run
    monkeypatch.setattr(hook_settings, "trial_run", lambda command, project: real(command, project, timeout_s=1))
    ran = CliRunner().invoke(cli, ["hook", "install", "--project", str(tmp_path), "--command", "sleep 30"])
    assert ran.exit_code == 0, ran.output
    assert "(it did not end within 1 s (stopped)); Claude Code shows such a failure, after waiting for it up to the" \
           " hook's time limit (60 s unless the settings give one), on every prompt. Installed all the same." \
           in ran.output, ran.output
    assert "sleep 30" in settings_path(tmp_path).read_text()


def test_the_trial_run_is_stopped_with_install_and_made_once(tmp_path: Path):
    """QA round 110-A: a trial run went on after install was stopped (F2: in a session of its own, Ctrl-C never
    reached it); a command installed already, or dreamdb's hook in the other settings file, was tried again anyway,
    and a .bak folder refused only after the trial (F6); a daemon the command left holding its stderr held install
    until it ended (F7)."""
    import signal
    import subprocess
    import sys

    log = tmp_path / "runs.log"
    script = tmp_path / "wrap.sh"
    script.write_text(f"#!/bin/sh\necho run >> {log}\n")
    script.chmod(0o755)

    def install(command: str, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path),
                               "--command", command, *extra], capture_output=True, text=True, timeout=120)

    assert install(str(script)).returncode == 0 and log.read_text() == "run\n"
    assert install(str(script)).returncode == 0 and log.read_text() == "run\n"  # (installed already: not tried)
    settings_path(tmp_path).unlink()
    (tmp_path / ".claude" / "settings.json.bak").unlink(missing_ok=True)
    assert install(f"{sys.executable} -m dreamdb hook user-prompt-submit", "--local").returncode == 0
    assert install(str(script)).returncode == 0 and log.read_text() == "run\n"  # (stopped by the other file's hook)
    settings_path(tmp_path, local=True).unlink()
    _write(tmp_path, {"model": "x"})  # (a file to keep, whose backup has no name left: refused before the trial)
    _take_every_backup_name(settings_path(tmp_path))
    assert install(str(script)).returncode == 6 and log.read_text() == "run\n"
    for taken in (tmp_path / ".claude").glob("settings.json.bak*"):
        taken.rmdir()
    # a daemon of another session holding stderr: install returns, its shell done
    ran = install("setsid sleep 41.5 & true")
    assert ran.returncode == 0, ran.stderr
    subprocess.run(["pkill", "-f", "sleep 41.5"])
    # stopped with install: the command's process group goes too
    _stop_install_in_its_trial(tmp_path, signal.SIGTERM, "sleep 43.5")


def test_an_uninstall_that_deletes_the_settings_file_records_it_as_saved(tmp_path: Path, monkeypatch):
    """QA round 110-A F3: a SIGTERM just after uninstall deleted the settings file (made by install, holding only the
    hook) said "Interrupted.", 130: the deletion was not recorded as done, as every other write's is."""
    from dreamdb import quickcli, writes

    monkeypatch.setattr(quickcli, "SAVED", None)  # (another test's install in this process sets it)
    install_hook(tmp_path)
    writes.COMMITTED.set(None)
    assert uninstall_hook(tmp_path) and not settings_path(tmp_path).exists()
    assert writes.COMMITTED.get() == f"{settings_path(tmp_path)} (deleted)"
    assert quickcli.saved_change() == f"{settings_path(tmp_path)} was deleted"  # (not "(deleted) was changed": 114-B F7)
    writes.COMMITTED.set(None)


def test_an_install_into_the_home_folder_says_it_is_the_user_settings(tmp_path: Path):
    """QA round 110-B F4: ``dreamdb hook install`` run in the home folder wrote ~/.claude/settings.json, Claude Code's
    settings for every project, and said only that no vault was there."""
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install"], capture_output=True, text=True,
                         timeout=120, env=env, cwd=home)
    assert ran.returncode == 0 and "holds your user settings: Claude Code runs this hook in every project" in ran.stderr
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert ran.returncode == 0 and "in every project" not in ran.stderr
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--local"], capture_output=True,
                         text=True, timeout=120, env=env, cwd=home)  # (no user setting: QA round 112-A F5)
    assert "in every project" not in ran.stderr, ran.stderr


def test_a_command_install_refuses_is_never_tried_and_a_flood_of_output_is_dropped(tmp_path: Path):
    """QA round 111-A F2: a --command of two lines (or a settings.json that is a symlink loop) was run by the trial,
    then refused; F3: the trial's stderr went to an unbounded file (1.3 GB in 3 s of ``yes >&2``)."""
    import subprocess
    import sys

    from dreamdb.hook_settings import trial_run

    marker = tmp_path / "ran"
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path), "--command",
                          f"true\ntouch {marker}"], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2 and "must be one line" in ran.stderr and not marker.exists()
    (tmp_path / ".claude").mkdir()
    settings_path(tmp_path).symlink_to("settings.json")
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path), "--command",
                          f"touch {marker}"], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 6 and "symlink loop" in ran.stderr and not marker.exists()
    settings_path(tmp_path).unlink()
    settings_path(tmp_path).symlink_to(tmp_path / "no" / "such" / "settings.json")  # (QA round 112-A F4)
    ran = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(tmp_path), "--command",
                          f"touch {marker}"], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 6 and "whose folder" in ran.stderr and not marker.exists(), ran.stderr
    code, said = trial_run("yes spewing >&2", tmp_path, timeout_s=2)
    assert code is None and said == "it did not end within 2 s (stopped)"
    assert subprocess.run(["pgrep", "-f", "yes spewing"], capture_output=True).returncode == 1
    flood = f"{sys.executable} -c \"import sys; sys.stderr.write('x' * 3000000 + '\\\\nError: the last word\\\\n')\""
    code, said = trial_run(f"{flood}; exit 3", tmp_path)
    assert code == 3 and said == "x" * 300  # (the error line came past the first MiB kept: dropped)


def test_an_uninstall_from_both_settings_files_records_only_the_last_change(tmp_path: Path, monkeypatch):
    """QA round 111-A F4: with the hook in settings.json and settings.local.json, a SIGTERM after the first file was
    changed said "it is done; do not repeat it" with the hook still in the second. Only the last change is recorded
    as the command's: an interruption before it exits 130, and uninstall run again removes the rest."""
    from dreamdb import writes
    from dreamdb.writes import files

    hook = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": DEFAULT_COMMAND}]}]}}
    for local in (False, True):
        path = settings_path(tmp_path, local=local)
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(hook))
    recorded = []
    real = files._committed
    monkeypatch.setattr(files, "_committed", lambda p, what=None: (recorded.append(str(p)), real(p, what))[1])
    writes.COMMITTED.set(None)
    assert len(uninstall_hooks(tmp_path)) == 2
    assert recorded == [str(settings_path(tmp_path, local=True))], recorded
    writes.COMMITTED.set(None)


def test_a_closed_terminal_stops_install_and_its_trial_run(tmp_path: Path):
    """QA round 111-A F5: SIGHUP (the terminal closed) killed hook install with 129, and its trial run, in a session of
    its own, went on with no time limit. A write command takes SIGHUP as it takes SIGTERM."""
    import signal

    _stop_install_in_its_trial(tmp_path, signal.SIGHUP, "sleep 44.5")
    assert not settings_path(tmp_path).exists()


def _stop_install_in_its_trial(project: Path, sig: int, sleeper: str) -> None:
    """Send ``sig`` to a ``hook install`` whose trial run of ``<sleeper>; true`` is under way: it exits 130, and the
    trial's process group goes with it."""
    import subprocess
    import sys
    import time

    p = subprocess.Popen([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(project), "--command",
                          f"{sleeper}; true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    p.send_signal(sig)
    _out, err = p.communicate(timeout=60)
    time.sleep(0.5)
    assert p.returncode == 130 and "Interrupted." in err, (p.returncode, err)
    assert subprocess.run(["pgrep", "-f", sleeper], capture_output=True).returncode == 1


def test_a_kept_hook_of_a_gone_or_other_install_is_said_so(tmp_path: Path):
    """QA round 115-B F2: ``hook install`` kept an old install's hook (its virtualenv deleted, or holding dreamdb 0.2.0,
    which cannot read a newer index) and said only that it was installed: every prompt got no memories."""
    import subprocess
    import sys

    import dreamdb

    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / "_dream_context").mkdir()

    def install_beside(program: Path) -> subprocess.CompletedProcess:
        settings_path(project).write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": f"{program} hook user-prompt-submit"}]}]}}))
        return subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(project)],
                              capture_output=True, text=True, timeout=120)

    gone = tmp_path / "gone-venv" / "bin" / "dreamdb"
    ran = install_beside(gone)
    assert ran.returncode == 0 and "(left as it is)" in ran.stdout
    assert f"note: the installed hook's program {gone} does not exist (or cannot be run): every prompt's hook fails" \
        in ran.stderr, ran.stderr
    old = tmp_path / "old-venv"
    (old / "lib" / "python3.11" / "site-packages" / "dreamdb-0.2.0.dist-info").mkdir(parents=True)
    (old / "bin").mkdir()
    (old / "bin" / "dreamdb").write_text("#!/bin/sh\nexit 0\n")
    (old / "bin" / "dreamdb").chmod(0o755)
    ran = install_beside(old / "bin" / "dreamdb")
    assert f"note: the installed hook runs dreamdb 0.2.0 (this one is {dreamdb.__version__}): two versions" in ran.stderr
    # the same install run as "python -m dreamdb" (QA round 118-B F10: not looked at); its python, a link to the base
    # interpreter in a virtualenv, is not followed there
    (old / "bin" / "python3.11").symlink_to(sys.executable)
    ran = install_beside(Path(f"{old / 'bin' / 'python3.11'} -m dreamdb"))
    assert f"note: the installed hook runs dreamdb 0.2.0 (this one is {dreamdb.__version__}): two versions" in ran.stderr
    (old / "lib" / "python3.11" / "site-packages" / "dreamdb-0.2.0.dist-info").rename(
        old / "lib" / "python3.11" / "site-packages" / f"dreamdb-{dreamdb.__version__}.dist-info")
    ran = install_beside(old / "bin" / "dreamdb")  # (this version's: only that it is another command)
    assert "installed hook" not in ran.stderr and "another command than this machine's" in ran.stderr, ran.stderr


@pytest.mark.skipif(__import__("shutil").which("git") is None, reason="git is not installed")
def test_install_local_makes_git_ignore_the_file_it_makes_in_this_clone(tmp_path: Path):
    """QA round 144-B F4: `hook install --local` in a git repository made .claude/settings.local.json ("your own
    settings, not committed", its command an absolute path) that `git add -A` staged. The file an install makes is
    ignored in this clone (info/exclude: no file git tracks changes), said on stderr; once, whatever the folder's name;
    a file git ignores already, one in no repository and the shared settings.json are left as they are."""
    import subprocess
    import sys

    home = tmp_path / "home"  # (no global excludes file of the machine's: git reads HOME's and XDG_CONFIG_HOME's)
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1"}
    repo = tmp_path / "repo"
    project = repo / "my app [1]"
    project.mkdir(parents=True)

    def run(*args: str, cwd: Path = repo) -> subprocess.CompletedProcess:
        return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)

    assert run("git", "init", "-q").returncode == 0
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("*.swp")  # (the user's own, no final newline: kept as it is)

    def install(*options: str) -> subprocess.CompletedProcess:
        ran = run(sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(project), *options)
        assert ran.returncode == 0, ran.stderr
        return ran

    ran = install("--local")
    local = settings_path(project, local=True)
    assert f"note: git ignores {local} in this clone, as your own settings: /my app \\[1]/.claude/settings.local.json" \
           f" was added to {exclude}." in ran.stderr, ran.stderr
    assert exclude.read_text() == "*.swp\n# dreamdb hook install --local: your own Claude Code settings, not committed\n" \
                                  "/my app \\[1]/.claude/settings.local.json\n"
    assert run("git", "add", "-A").returncode == 0
    assert run("git", "status", "--porcelain", "--untracked-files=all").stdout == ""
    assert uninstall_hooks(project) == [local] and not local.exists()
    assert "git ignores" not in install("--local").stderr  # (ignored already: not added twice)
    assert exclude.read_text().count("settings.local.json") == 1
    uninstall_hooks(project)
    install()  # the shared settings.json stays the project's to commit
    assert run("git", "status", "--porcelain", "--untracked-files=all").stdout == '?? "my app [1]/.claude/settings.json"\n'
    alone = tmp_path / "alone"  # (in no repository: nothing to ignore, nothing said)
    alone.mkdir()
    ran = run(sys.executable, "-m", "dreamdb", "hook", "install", "--local", "--project", str(alone), cwd=alone)
    assert ran.returncode == 0 and "note: git" not in ran.stderr and sorted(os.listdir(alone)) == [".claude"], ran.stderr


@pytest.mark.skipif(__import__("shutil").which("git") is None, reason="git is not installed")
def test_git_is_asked_where_to_ignore_the_file_in_a_way_a_line_break_in_a_path_cannot_confuse(tmp_path: Path,
                                                                                            monkeypatch):
    """QA round 144-I F4: git's three answers (in a work tree, the folder's prefix, the exclude file) were read as the
    lines of one output, so a project folder "a\\nb" gave the prefix "a" and the exclude file "b/": a stray file
    a\\nb/b held the pattern /a.claude/settings.local.json, info/exclude was left as it was, and that was said to be
    done. A path with a line break, which no line of a pattern file can name, is said not to be ignored; a
    repository whose own path holds one (the exclude file of a worktree's, an absolute path) is written as any."""
    import subprocess

    from dreamdb.hook_settings import ignore_in_git

    home = tmp_path / "home"  # (no global excludes file of the machine's)
    home.mkdir()
    for name, value in (("HOME", str(home)), ("XDG_CONFIG_HOME", str(home / ".config")), ("GIT_CONFIG_NOSYSTEM", "1")):
        monkeypatch.setenv(name, value)

    def git(*args: str, cwd: Path) -> None:
        assert subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60).returncode == 0

    def local_settings(project: Path) -> Path:
        (project / ".claude").mkdir(parents=True)
        (project / ".claude" / "settings.local.json").write_text("{}\n")
        return project / ".claude" / "settings.local.json"

    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_bytes()
    path = local_settings(repo / "a\nb")
    assert ignore_in_git(path) == (f"git does not ignore {path}, your own settings: its path holds a line break, which"
                                   f" no line of {exclude} can name: leave it out of your commits.")
    assert exclude.read_bytes() == before and sorted(os.listdir(repo / "a\nb")) == [".claude"]
    main = tmp_path / "main\nrepo"  # (a worktree's exclude file is its main repository's, named by an absolute path)
    main.mkdir()
    git("init", "-q", cwd=main)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
    path = local_settings(tmp_path / "wt" / "sub")
    exclude = main / ".git" / "info" / "exclude"
    assert ignore_in_git(path) == (f"git ignores {path} in this clone, as your own settings:"
                                   f" /sub/.claude/settings.local.json was added to {exclude}.")
    assert exclude.read_text().endswith("\n/sub/.claude/settings.local.json\n")


@pytest.mark.skipif(__import__("shutil").which("git") is None, reason="git is not installed")
def test_the_exclude_file_of_a_project_reached_through_a_link_is_the_repositorys(tmp_path: Path, monkeypatch):
    """QA round 145-A F1: a --project link x/y/lk -> ../../repo/a/b, into a repository's subfolder: git's answer
    ../../.git/info/exclude (relative to the folder it runs in, the link followed) was joined to the link's own path,
    so a stray x/.git/info/exclude, outside the repository, got the pattern, said to be done, and git still listed the
    file. The repository's own exclude file gets it, named from the repository's top level as git sees it."""
    import subprocess

    from dreamdb.hook_settings import ignore_in_git

    home = tmp_path / "home"  # (no global excludes file of the machine's)
    home.mkdir()
    for name, value in (("HOME", str(home)), ("XDG_CONFIG_HOME", str(home / ".config")), ("GIT_CONFIG_NOSYSTEM", "1")):
        monkeypatch.setenv(name, value)
    repo = tmp_path / "repo"
    (repo / "a" / "b" / ".claude").mkdir(parents=True)
    assert subprocess.run(["git", "init", "-q"], cwd=repo, capture_output=True, timeout=60).returncode == 0
    (tmp_path / "x" / "y").mkdir(parents=True)
    (tmp_path / "x" / "y" / "lk").symlink_to("../../repo/a/b")
    path = tmp_path / "x" / "y" / "lk" / ".claude" / "settings.local.json"
    path.write_text("{}\n")
    exclude = repo / ".git" / "info" / "exclude"
    assert ignore_in_git(path) == (f"git ignores {path} in this clone, as your own settings:"
                                   f" /a/b/.claude/settings.local.json was added to {exclude}.")
    assert exclude.read_text().endswith("\n/a/b/.claude/settings.local.json\n")
    assert sorted(os.listdir(tmp_path / "x")) == ["y"]  # (no stray .git beside the link)
    ran = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout == "", ran.stdout


@pytest.mark.skipif(__import__("shutil").which("git") is None, reason="git is not installed")
def test_a_linked_exclude_file_is_written_at_its_target(tmp_path: Path, monkeypatch):
    """QA round 145-A F3: .git/info/exclude a link to ../../../shared-exclude (one file for several clones) was said
    not written, "changed while dreamdb was editing it (another program put a link in its place)", false: the link
    was handed to the write, which takes a link in a resolved path for another program's change. The target gets the
    line, the link stays a link, and git then ignores the file; a link whose target's folder is missing is said so."""
    import subprocess

    from dreamdb.hook_settings import ignore_in_git

    home = tmp_path / "home"  # (no global excludes file of the machine's)
    home.mkdir()
    for name, value in (("HOME", str(home)), ("XDG_CONFIG_HOME", str(home / ".config")), ("GIT_CONFIG_NOSYSTEM", "1")):
        monkeypatch.setenv(name, value)
    repo = tmp_path / "r"
    (repo / ".claude").mkdir(parents=True)
    assert subprocess.run(["git", "init", "-q"], cwd=repo, capture_output=True, timeout=60).returncode == 0
    shared = tmp_path / "shared-exclude"
    shared.write_text("*.log\n")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.unlink()
    exclude.symlink_to("../../../shared-exclude")
    path = repo / ".claude" / "settings.local.json"
    path.write_text("{}\n")
    assert ignore_in_git(path) == (f"git ignores {path} in this clone, as your own settings:"
                                   f" /.claude/settings.local.json was added to {shared}, the file {exclude} links to.")
    assert os.readlink(exclude) == "../../../shared-exclude"
    assert shared.read_text() == ("*.log\n# dreamdb hook install --local: your own Claude Code settings, not committed\n"
                                  "/.claude/settings.local.json\n")
    ran = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout == "", ran.stdout
    exclude.unlink()  # a link to a file in a folder that is not there: not made, said
    exclude.symlink_to("../../../nowhere/exclude")
    said = ignore_in_git(path)
    assert said is not None and said.startswith(
        f"git does not ignore {path}, your own settings ({exclude} links to {tmp_path / 'nowhere' / 'exclude'}, which"
        " could not be written: ") and "No such file or directory" in said, said
    assert not (tmp_path / "nowhere").exists()


def test_the_write_probe_names_the_folder_that_exists(tmp_path: Path):
    """QA round 116-A F6: a project folder that cannot be written, without .claude, was said as "the folder
    <project>/.claude is not writable" (chmod u+w of a folder that does not exist)."""
    import subprocess
    import sys

    from tests.conftest import permissions_bite

    bite = permissions_bite()
    project = tmp_path / "proj"
    project.mkdir()
    project.chmod(0o555)
    try:
        ran = subprocess.run([*bite, sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(project),
                              "--command", "/bin/true"], capture_output=True, text=True, timeout=120)
    finally:
        project.chmod(0o755)
    assert ran.returncode == 6, ran.stderr
    assert f"the folder {project} is not writable" in ran.stderr and "chmod u+w" in ran.stderr, ran.stderr
    assert f"{project / '.claude'} is not writable" not in ran.stderr and not (project / ".claude").exists()


@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_a_claude_folder_that_cannot_be_searched_is_refused(tmp_path: Path, action: str):
    """QA round 118-B F4: ``.claude`` of mode 000 made ``hook install`` and ``hook uninstall`` exit 70
    (PermissionError from the settings file's lookup); refused, exit 6, the file untouched."""
    import subprocess
    import sys

    from tests.conftest import permissions_bite

    bite = permissions_bite()
    claude = tmp_path / "proj" / ".claude"
    claude.mkdir(parents=True)
    (claude / "settings.json").write_text('{"hooks": {}}\n')
    claude.chmod(0o000)
    try:
        ran = subprocess.run([*bite, sys.executable, "-m", "dreamdb", "hook", action, "--project", str(claude.parent),
                              *(["--command", "/bin/true"] if action == "install" else [])],
                             capture_output=True, text=True, timeout=120)
    finally:
        claude.chmod(0o755)
    assert ran.returncode == 6, ran.stderr
    assert f"{claude / 'settings.json'} cannot be reached (permission denied: {claude} cannot be searched); nothing" \
           " was changed" in ran.stderr and "Traceback" not in ran.stderr, ran.stderr
    assert (claude / "settings.json").read_text() == '{"hooks": {}}\n'


def test_a_hook_command_with_vault_is_said_to_be_ignored(tmp_path: Path):
    """QA round 118-A F5: ``--command "dreamdb --vault V hook user-prompt-submit"`` was installed without a word,
    though the hook ignores its arguments (only its log says so): the note says where the hook reads a vault."""
    import sys

    from click.testing import CliRunner

    from dreamdb.cli import cli

    (tmp_path / "_dream_context").mkdir()
    said = {}
    for form in ("--vault /x", "--vault=/x", ""):
        command = f"{sys.executable} -m dreamdb {form} hook user-prompt-submit".replace("  ", " ")
        ran = CliRunner().invoke(cli, ["hook", "install", "--project", str(tmp_path), "--command", command])
        assert ran.exit_code == 0, ran.output
        said[form] = "note: the hook takes no --vault (its arguments are ignored, and logged)" in ran.output
        settings_path(tmp_path).unlink()
    assert said == {"--vault /x": True, "--vault=/x": True, "": False}


def test_the_bare_command_typed_is_said_when_no_dreamdb_is_on_path_by_itself(tmp_path: Path, monkeypatch):
    """QA round 144-H F3: ``--command 'dreamdb hook user-prompt-submit'``, the default typed, was installed without a
    word (it is not run once, as other commands are) where no dreamdb is on PATH, or only through the activated
    virtualenv, which Claude Code does not activate: its hook exited 127 on every prompt. It is said, as --help says
    the bare form is for a dreamdb on PATH by itself; installed all the same."""
    import shutil
    import sys

    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.hook_settings import dreamdb_hook_commands

    (tmp_path / "_dream_context").mkdir()
    venv, elsewhere = tmp_path / "venv", tmp_path / "global-bin"
    for folder in (venv / "bin", elsewhere):
        folder.mkdir(parents=True)
        (folder / "dreamdb").write_text("#!/bin/sh\nexit 0\n")
        (folder / "dreamdb").chmod(0o755)
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    real = shutil.which
    said = {}
    for name, found in (("none", None), ("venv", venv / "bin" / "dreamdb"), ("global", elsewhere / "dreamdb")):
        monkeypatch.setattr(shutil, "which", lambda cmd, *a, **k: (str(found) if found else None)
                            if cmd == "dreamdb" else real(cmd, *a, **k))
        ran = CliRunner().invoke(cli, ["hook", "install", "--project", str(tmp_path), "--command", DEFAULT_COMMAND])
        assert ran.exit_code == 0 and dreamdb_hook_commands(settings_path(tmp_path)) == [DEFAULT_COMMAND], ran.output
        said[name] = [line for line in ran.output.splitlines() if "exit code 127" in line]
        settings_path(tmp_path).unlink()
    assert said["none"] and said["none"][0].startswith("note: no dreamdb is on this PATH, so Claude Code may not find"
                                                       " the command's bare `dreamdb`"), said
    assert said["venv"] and said["venv"][0].startswith(f"note: dreamdb is on this PATH only through the virtualenv"
                                                       f" {venv / 'bin'} (activated or put on PATH), which Claude"
                                                       " Code does not put on its hooks' PATH"), said
    assert "install again with --absolute, without --command" in said["venv"][0] and said["global"] == [], said


def test_any_command_of_a_bare_dreamdb_is_said_when_none_is_on_path_by_itself(tmp_path: Path, monkeypatch):
    """QA round 144-J F3: the note was said only for the default typed; ``--command 'DREAMDB_VAULT=/x dreamdb hook
    user-prompt-submit'`` (the form the --vault note recommends), inside an activated virtualenv, passed its trial run
    there and was installed without a word, and Claude Code's shell, no virtualenv, found no dreamdb (exit 127). Any
    command whose program is a bare dreamdb, after settings and wrappers, is said; one of a path to it, or a runner's,
    is not."""
    import shutil
    import sys

    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.cli import hook as hook_cli
    from dreamdb.hook_settings import dreamdb_hook_commands

    (tmp_path / "_dream_context").mkdir()
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    found = tmp_path / "venv" / "bin" / "dreamdb"
    found.write_text("#!/bin/sh\nexit 0\n")
    found.chmod(0o755)
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda cmd, *a, **k: str(found) if cmd == "dreamdb" else real(cmd, *a, **k))
    monkeypatch.setattr(hook_cli, "_try_command", lambda *a, **k: None)  # (it passes in the activated shell)
    said = {}
    for command in ("DREAMDB_VAULT=/x dreamdb hook user-prompt-submit", "env A=b exec dreamdb hook user-prompt-submit",
                    f"{found} hook user-prompt-submit", "uvx dreamdb hook user-prompt-submit"):
        ran = CliRunner().invoke(cli, ["hook", "install", "--project", str(tmp_path), "--command", command])
        assert ran.exit_code == 0 and dreamdb_hook_commands(settings_path(tmp_path)) == [command], ran.output
        said[command] = [line for line in ran.output.splitlines() if "exit code 127" in line]
        settings_path(tmp_path).unlink()
    bare = [c for c, lines in said.items() if lines]
    assert bare == ["DREAMDB_VAULT=/x dreamdb hook user-prompt-submit", "env A=b exec dreamdb hook user-prompt-submit"]
    assert said[bare[0]][0].startswith("note: dreamdb is on this PATH only through the virtualenv "), said
    assert "install again with it in the command in place of `dreamdb`" in said[bare[0]][0], said


def test_a_project_written_dot_slash_tilde_is_said_as_the_folder_it_is(tmp_path: Path, monkeypatch):
    """QA round 122-A: ``hook install --project ./~/p`` wrote the right file, the folder ``~`` here, and said it was
    ``~/p/.claude/settings.json``, which reads as the home folder's."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    (tmp_path / "~" / "p").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    for command in ("install", "uninstall"):
        result = CliRunner().invoke(cli, ["hook", command, "--project", "./~/p", "--json"])
        assert result.exit_code == 0, result.output
        said = json.loads(result.stdout)["settings"]
        assert (said if command == "install" else said[0]) == str(tmp_path / "~" / "p" / ".claude" / "settings.json")


@pytest.mark.parametrize("command, alone", [
    ("dreamdb --vault=/x hook user-prompt-submit", True), ("dreamdb hook user-prompt-submit || exit 0", True),
    ('cd "$CLAUDE_PROJECT_DIR" && dreamdb hook user-prompt-submit', False),
    ("dreamdb hook user-prompt-submit; echo more", False),
    # (QA round 140-C F1, F2, F3: a newline, a # in a word, a shell's -c script)
    ('cd "$CLAUDE_PROJECT_DIR"\ndreamdb hook user-prompt-submit', False),
    ("dreamdb hook user-prompt-submit 2>>/tmp/h.log#1; ./scripts/notify.sh", False),
    ("bash -c 'dreamdb hook user-prompt-submit'", False),
])
def test_a_hand_written_dreamdb_hook_gets_no_second_one_and_uninstall_says_what_it_leaves(tmp_path, command, alone):
    """QA round 139-D F5: a hand-written hook the CLI runs as dreamdb's (options before ``hook``, a ``|| exit 0``,
    a ``cd`` before it) was not recognised: ``hook install`` added a second one (two recall blocks on every prompt),
    and ``hook uninstall`` said "Prompt hook removed" and left it. The one that runs dreamdb's hook alone is removed;
    one that runs other commands too is left, and said."""
    from click.testing import CliRunner

    from dreamdb.cli import cli
    from dreamdb.output import visible_id

    (tmp_path / "_dream_context").mkdir()
    path = _write(tmp_path, {"model": "opus", "hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": command}]}]}})
    before = path.read_bytes()
    # (--absolute replaces one that runs the hook alone, as any other path's; never one that runs more)
    for extra in ([], [] if alone else ["--absolute"]):
        ran = CliRunner().invoke(cli, ["hook", "install", "--project", str(tmp_path), *extra])
        assert ran.exit_code == 0, ran.output
        assert ran.stdout == f"Prompt hook already installed in {path}: {visible_id(command)} (left as it is)\n"
        assert path.read_bytes() == before
        assert ("runs dreamdb's hook among other commands" in ran.stderr) is not alone
    ran = CliRunner().invoke(cli, ["hook", "uninstall", "--project", str(tmp_path)])
    assert ran.exit_code == 0, ran.output
    left = [h["command"] for g in json.loads(path.read_text()).get("hooks", {}).get("UserPromptSubmit", [])
            for h in g["hooks"]]
    if alone:
        assert left == [] and not ran.stderr and ran.stdout == (f"Prompt hook removed from {path}. The previous"
                                                                 f" settings.json is kept in {path}.bak.\n")
    else:
        assert left == [command] and path.read_bytes() == before
        assert ran.stdout == "No prompt hook was removed.\n"
        assert f"note: {path} still runs dreamdb's hook, in a command that runs others too, left as it is:" \
               f" {visible_id(command)}." in ran.stderr
        said = json.loads(CliRunner().invoke(cli, ["hook", "uninstall", "--project", str(tmp_path), "--json"]).stdout)
        assert said == {"removed": False, "settings": [], "deleted": [],
                        "left": [{"settings": str(path), "command": command}]}


H = "hook user-prompt-submit"


@pytest.mark.parametrize("command, form", [
    # F1: a newline (CR LF too) ends a command, as ";" does; it was read as a space
    (f'cd "$CLAUDE_PROJECT_DIR"\ndreamdb {H}', "among others"),
    (f"dreamdb {H}\n./scripts/log-prompt.sh", "among others"),
    (f"dreamdb {H}\r\n./scripts/log-prompt.sh", "among others"), (f"dreamdb {H} <<EOF\n{{}}\nEOF", "among others"),
    (f"dreamdb {H}\n", "alone"), (f"dreamdb \\\n  {H}", "among others"), ("dreamdb hook\nuser-prompt-submit", None),
    # F1: dreamdb is the program, after environment settings and wrappers only (any word was taken)
    (f"cd X dreamdb {H}", None), (f"echo on dreamdb {H}", None), (f"timeout 5 echo dreamdb {H}", None),
    (f"env -i A=b C=d dreamdb {H}", "alone"), (f"nice -n 5 dreamdb {H}", "alone"),
    (f"timeout -k 5 10 dreamdb {H}", "alone"),
    (f"A=b exec nohup time dreamdb {H}", "alone"), (f"uvx --from dreamdb==0.3 dreamdb {H}", "alone"),
    (f"uv tool run dreamdb {H}", "alone"), (f"/usr/bin/python3.11 -P -m dreamdb {H}", "alone"),
    # F2: "#" starts a comment at the start of a word only
    (f"dreamdb {H} 2>>/tmp/h.log#1; ./scripts/notify.sh", "among others"),
    (f"cd ~/C#app && dreamdb {H}", "among others"), (f"A=x#y dreamdb {H}", "among others"),
    (f"dreamdb {H} # a note; rm x", "among others"), (f"dreamdb {H} #a\n./x.sh", "among others"), (f"# dreamdb {H}", None),
    # F3: a shell's -c script, a backquoted command, dreamdb.EXE, a Windows path
    (f"bash -c 'dreamdb {H}'", "among others"), (f'sh -lc "dreamdb {H} || true"', "among others"),
    (f"echo `dreamdb {H}`", "among others"), (f"dreamdb.EXE {H}", "alone"),
    (f'"C:\\Program Files\\dreamdb\\dreamdb.exe" {H}', "alone"), ("bash -c 'echo hi'", None),
    # QA round 141-B F1: only a redirection's own operators redirect (&&> ran the hook, then touch)
    (f"dreamdb {H} &&>/dev/null touch done.flag", "among others"), (f"dreamdb {H} &</dev/null touch x", "among others"),
    (f"dreamdb {H} >| /tmp/hook.log", "alone"), (f"dreamdb {H} 2>&1 >/dev/null", "alone"),
    # F2: a deep chain of wrappers is read (a RecursionError), after more than 8 kept as one among others
    ("nice " * 8 + f"dreamdb {H}", "alone"), ("nice " * 1000 + f"dreamdb {H}", "among others"),
    # F3: a wrapper's options by its table (nice -n N, timeout -s SIG D, env -u NAME, python -X opt)
    (f"timeout --signal KILL 10 dreamdb {H}", "alone"), (f"env -u X dreamdb {H}", "alone"),
    (f"python -X dev -m dreamdb {H}", "alone"), ("nice -n " * 3 + f"dreamdb {H}", None),
    # F4: command, bash -c --, an ANSI-C quote (bash reads $'\'' as one quote: touch ran)
    (f"command dreamdb {H}", "alone"), (f"command -v dreamdb {H}", None), (f"bash -c -- 'dreamdb {H}'", "among others"),
    (f"dreamdb {H} $'\\'' ; touch flag2 ; echo \\'", "among others"),
    # F5: a comment or blank line before it; a here-document or here-string, or a redirection on a line of its own
    (f"# recall memories\ndreamdb {H}", "alone"), (f"\ndreamdb {H}", "alone"), (f"dreamdb {H} <<<x", "among others"),
    (f">/tmp/x\ndreamdb {H}", "among others"), (f"dreamdb {H}\n>/tmp/x", "among others"),
    # QA round 142-A F1-F9: only a plain command runs it alone (a command substitution, a digit word or a quoted or
    # escaped one before a redirection, &>, >&-, a brace expansion, env -S, a carriage return, python -Ic, pytest -m,
    # a pinned dreamdb without a runner, a quoted "A=1": each ran a command of the user's too)
    (f'dreamdb {H} "$(touch x)"', "among others"), (f'dreamdb {H} "`touch x`"', "among others"),
    (f'A="$(touch x)" dreamdb {H}', "among others"), (f'dreamdb {H} 2>"$(touch x)"', "among others"),
    (f"timeout 5 >/dev/null touch dreamdb {H}", "among others"), (f'"2">/dev/null dreamdb {H}', "among others"),
    (f"\\2>>x dreamdb {H}", "among others"), (f"2&>x dreamdb {H}", "among others"),
    (f">&-touch dreamdb {H}", "among others"), (f"timeout {{5,touch}} dreamdb {H}", "among others"),
    (f"env -S 'touch x' dreamdb {H}", None), (f"env --split-string='touch x' dreamdb {H}", None),
    (f"dreamdb {H} &>/dev/null touch x", "among others"), (f"dreamdb {H}\r#;touch x", "among others"),
    (f"python3 -Ic -m dreamdb {H}", None), (f"pytest -m dreamdb {H}", None),
    (f"dreamdb@x {H}", "among others"), (f'"A=1" dreamdb {H}', "among others"),
    # (the plain forms stay alone; a backslash, a # in a word or a comment after it is no plain form: among others)
    (f'"$CLAUDE_PROJECT_DIR"/.venv/bin/dreamdb {H} 2>/dev/null || true', "alone"), (f"uvx dreamdb@0.3 {H}", "alone"),
    (f'A="x y" B= ${{HOME}}/bin/dreamdb {H} > log 2>&1; exit 0', "alone"), (f"py -3.11 -m dreamdb {H}", "alone"),
])
def test_a_hook_command_is_read_as_the_shell_reads_it(tmp_path, command, form):
    """QA round 140-C F1: a newline in a hook command was read as a space (``cd X`` then the hook, on two lines, was
    removed by uninstall; the hook then a script of the user's was replaced by install), and dreamdb anywhere in a
    simple command was its program (``echo on dreamdb hook …``); F2: a ``#`` inside a word started a comment
    (``2>>log#1; ./notify.sh`` was removed whole); F3: ``bash -c '…'``, a backquoted command, ``dreamdb.EXE`` and a
    Windows path were not recognised (a second hook was added beside them). A hook run alone is replaced and
    removed; one among other commands is kept, and none added beside it; any other command is not dreamdb's. QA round
    141-B F1: ``&&>`` was read as a redirection, F2: a deep chain of wrappers overflowed the stack, F4: ``command``
    and ``bash -c --`` were not recognised, an ANSI-C quote hid a ``; touch``, F5: a comment line before the hook
    made it one among others. QA round 142-A F1–F9: forms the shell reads otherwise than this reading (``"$(touch
    x)"``, ``2&>x``, ``timeout {5,touch}``, ``env -S``…) ran a command of the user's beside the hook, replaced or
    removed with it: only a plain command (:data:`dreamdb.hook_settings._PLAIN_COMMAND`) runs it alone."""
    assert (is_dreamdb_hook(command), runs_hook_alone(command)) == (form is not None, form == "alone")
    _write(tmp_path, {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}})

    def commands() -> list[str]:
        return [h["command"] for g in json.loads(settings_path(tmp_path).read_text()).get("hooks", {}).get(
            "UserPromptSubmit", []) for h in g["hooks"]]

    install_hook(tmp_path)  # (replace: as --absolute)
    assert commands() == {"alone": [DEFAULT_COMMAND], "among others": [command], None: [command, DEFAULT_COMMAND]}[form]
    uninstall_hooks(tmp_path)
    assert commands() == ([] if form == "alone" else [command])


def test_a_long_hook_command_is_read_in_linear_time(tmp_path):
    """QA round 141-B F2, F3: a command of 1000 wrappers overflowed the stack, one of 20 ``env -i`` took 17 s and
    of 22 ``nice -n`` a minute (each option's every reading, recursively), a 100 kB word 52 s (copied at each
    character). Each is read, installed beside and uninstalled in a child (a regression fails at its timeout, never
    hangs the suite)."""
    import subprocess
    import sys

    script = """if True:
        import json, sys
        from pathlib import Path
        from dreamdb.hook_settings import install_hook, is_dreamdb_hook, runs_hook_alone, uninstall_hooks
        H = "dreamdb hook user-prompt-submit"
        said = []
        for n, command in enumerate(["nice " * 1000 + H, "env -i " * 20 + "true", "nice -n " * 22 + H,
                                     "echo " + "a" * 100_000, "A=b " * 25_000 + H, "nice -n 1 " * 9_000 + H]):
            project = Path(sys.argv[1]) / str(n)
            (project / ".claude").mkdir(parents=True)
            (project / ".claude" / "settings.json").write_text(json.dumps(
                {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}}))
            said.append([is_dreamdb_hook(command), runs_hook_alone(command), len(uninstall_hooks(project))])
            install_hook(project)
        print(json.dumps(said))
    """
    ran = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert json.loads(ran.stdout) == [[True, False, 0], [False, False, 0], [False, False, 0], [False, False, 0],
                                      [True, True, 1], [True, False, 0]]
