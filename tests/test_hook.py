"""The prompt hook as Claude Code runs it: a subprocess, JSON on stdin, always exit 0."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dreamdb.hook import HEADER
from dreamdb.store import connect as db
from tests.conftest import ROOT, write_doc

PYTHON_M_DREAMDB = f"{shlex.quote(sys.executable)}{' -P' if sys.version_info >= (3, 11) else ''} -m dreamdb"
"""How a note names ``python -m dreamdb`` run where the ``dreamdb`` on PATH is not this Python's
(:func:`dreamdb.extras.dreamdb_command`)."""


@pytest.fixture()
def project(tmp_path):
    dest = tmp_path / "proj"
    shutil.copytree(ROOT / "examples", dest, ignore=shutil.ignore_patterns(".dreamdb"))
    return dest


def hook(stdin: str | bytes, env_extra=None, cwd=None):
    env = {**os.environ, **(env_extra or {})}
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "dreamdb", "hook", "user-prompt-submit"], input=data,
                          capture_output=True, env=env, cwd=cwd, timeout=120)


def payload(prompt, cwd):
    return json.dumps({"prompt": prompt, "session_id": "s-1", "cwd": str(cwd)})


def filled_vault(tmp_path, notes: dict[str, str], fillers: int = 12) -> Path:
    """A vault of ``notes`` (``{vault-relative path: file text}``) and ``fillers`` notes on other things, which give
    the notes' words an inverse document frequency high enough for the hook's gate (raw BM25 ≥ 2)."""
    vault = tmp_path / "proj" / "_dream_context"
    for rel, text in notes.items():
        write_doc(vault, rel, text)
    for i in range(fillers):
        write_doc(vault, f"knowledge/filler{i}.md", f"---\ntitle: Filler {i}\n---\ntomatoes and cucumbers {i}\n")
    return vault


@pytest.mark.parametrize("lone", ["\\ud800", "\\udcff", "\\ude00"])
def test_a_lone_surrogate_in_the_prompt_is_replaced_not_a_reason_to_print_nothing(project, tmp_path, lone):
    """QA round 69 M2: JSON's "\\ud800" (a client that cut an emoji in two) made the hook print nothing and log
    "not valid UTF-8 … retype it (check the terminal's encoding)", where raw invalid bytes were replaced."""
    log = tmp_path / "h.log"
    p = hook('{"prompt": "how is sleep debt ' + lone + ' computed", "cwd": ' + json.dumps(str(project)) + '}',
             {"DREAMDB_HOOK_LOG": str(log)})
    out = p.stdout.decode().splitlines()
    assert p.returncode == 0 and out and out[0] == HEADER and "feature/sleep-consolidation" in out[1]
    assert not log.exists() or "UTF-8" not in log.read_text()


def test_strong_match_prints_block(project, tmp_path):
    p = hook(payload("how is sleep debt computed before consolidation", project), {"DREAMDB_HOOK_LOG": str(tmp_path / "h.log")})
    assert p.returncode == 0
    out = p.stdout.decode().splitlines()
    assert out[0] == HEADER and 5 <= len(out) <= 9
    assert "feature/sleep-consolidation" in out[1]


def test_arguments_the_hook_does_not_take_are_logged_and_ignored_never_exit_2(project, tmp_path):
    """QA round 52: an unknown option made the hook exit 2, which Claude Code reads as "block this prompt"."""
    log = tmp_path / "h.log"
    env = {**os.environ, "DREAMDB_HOOK_LOG": str(log)}
    p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "user-prompt-submit", "--vault", "x", "extra"],
                       input=payload("how is sleep debt computed before consolidation", project).encode(),
                       capture_output=True, env=env, timeout=120)
    assert p.returncode == 0 and p.stdout.decode().splitlines()[0] == HEADER  # the prompt still gets its memories
    assert "arguments ignored (the hook takes none; the payload comes on stdin): --vault x extra" in log.read_text()
    # QA round 53: an option before the subcommand (click's group refused it with exit 2)
    p = subprocess.run([sys.executable, "-m", "dreamdb", "--vault", "x", "hook", "-q", "user-prompt-submit"],
                       input=payload("how is sleep debt computed before consolidation", project).encode(),
                       capture_output=True, env=env, timeout=120)
    assert p.returncode == 0 and p.stdout.decode().splitlines()[0] == HEADER
    assert "arguments ignored (the hook takes none; the payload comes on stdin): --vault x -q" in log.read_text()
    # (QA round 133 F5: --vault took the subcommand for its path, and "Missing command" exited 2, blocking the prompt)
    p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "--vault", "user-prompt-submit"],
                       input=payload("how is sleep debt computed before consolidation", project).encode(),
                       capture_output=True, env=env, timeout=120)
    assert p.returncode == 0 and p.stdout.decode().splitlines()[0] == HEADER
    assert "arguments ignored (the hook takes none; the payload comes on stdin): --vault\n" in log.read_text()


def test_the_words_hook_user_prompt_submit_in_another_command_are_its_text_not_the_hook(project, tmp_path):
    """QA round 135-A F1: any command line holding ``hook`` and later ``user-prompt-submit`` ran the prompt hook:
    ``remember Fixed the hook user-prompt-submit exit code`` printed nothing, saved nothing and exited 0, and
    ``recall hook user-prompt-submit`` waited for a payload on an open stdin. The hook is ``hook`` as the command's
    name and ``user-prompt-submit`` as its subcommand's, the options before either allowed."""
    env = {**os.environ, "DREAMDB_HOOK_LOG": str(tmp_path / "h.log")}
    changelog = project / "_dream_context" / "core" / "CHANGELOG.json"
    before = len(json.loads(changelog.read_text()))

    def run(*args):  # standard input a pipe kept open with nothing written to it, as a terminal's
        read_end, write_end = os.pipe()
        try:
            p = subprocess.Popen([sys.executable, "-m", "dreamdb", *args], stdin=read_end, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env, cwd=project, text=True)
            try:
                out, err = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                raise AssertionError(f"{args} waited for standard input") from None
        finally:
            os.close(read_end)
            os.close(write_end)
        return p.returncode, out, err

    code, out, err = run("remember", "Fixed", "the", "hook", "user-prompt-submit", "exit", "code")
    assert code == 0 and out.startswith("Remembered as changelog/"), (out, err)
    entries = json.loads(changelog.read_text())
    assert len(entries) == before + 1
    assert "Fixed the hook user-prompt-submit exit code" in [e["description"] for e in entries]
    code, out, err = run("recall", "--json", "hook", "user-prompt-submit")
    assert code == 0 and json.loads(out)["query"] == "hook user-prompt-submit", err
    code, out, err = run("--json", "recall", "hook", "user-prompt-submit", "timeout")
    assert code == 0 and json.loads(out)["query"] == "hook user-prompt-submit timeout", err
    code, out, err = run("--vault", "hook", "recall", "user-prompt-submit")  # (--vault's path, then the command)
    assert code == 3 and "Vault path does not exist: hook" in err
    assert not (tmp_path / "h.log").exists()  # the hook never ran
    # hook lines with what the hook does not take run it, exit 0 (QA round 136 F1, F3: exit 2, the prompt blocked;
    # "--vault hook user-prompt-submit" is an unset variable's line, whose hook the moved --vault took for its path)
    for args in (("hook", "--project", str(project), "user-prompt-submit"), ("--vault", "hook", "user-prompt-submit"),
                 ("hook", "--limit", "3", "user-prompt-submit")):
        p = subprocess.run([sys.executable, "-m", "dreamdb", *args], input=payload("hi", project), env=env, cwd=project,
                           capture_output=True, text=True, timeout=60)
        assert (p.returncode, p.stdout) == (0, ""), (args, p.stderr)
    assert (tmp_path / "h.log").read_text().count("arguments ignored") == 3


@pytest.mark.parametrize("args, hook", [
    (["hook", "user-prompt-submit"], True),
    (["hook", "user-prompt-submit", "--vault", "x", "extra"], True),
    (["--vault", "x", "hook", "-q", "user-prompt-submit"], True),
    (["hook", "--vault", "user-prompt-submit"], True),  # (QA round 133 F5: --vault without its path)
    (["hook", "--vault", "V", "user-prompt-submit"], True),
    (["--vault=V", "--json", "hook", "--json", "user-prompt-submit"], True),
    (["--vault", "hook", "user-prompt-submit"], True),  # (--vault without its path, as the hook's: never exit 2)
    (["--", "hook", "user-prompt-submit"], True), (["hook", "--", "user-prompt-submit"], True),
    (["--bogus", "hook", "user-prompt-submit"], True),
    # (QA round 136 F1: an unknown option's value was taken for the command's or subcommand's name, and click said
    # exit 2, which blocks the prompt; a line without the options ran the hook before 135-A F1's fix and does again)
    (["hook", "--project", "/p", "user-prompt-submit"], True), (["--project", "/p", "hook", "user-prompt-submit"], True),
    (["hook", "--limit", "3", "user-prompt-submit"], True), (["hook", "-", "user-prompt-submit"], True),
    (["--", "--vault", "V", "hook", "user-prompt-submit"], True), (["\u2014vault", "V", "hook", "user-prompt-submit"], True),
    (["hook", "\u2014json", "user-prompt-submit"], True), (["--project", "list", "hook", "user-prompt-submit"], True),
    (["recall", "--", "hook", "user-prompt-submit"], False), (["--json", "sql", "hook", "user-prompt-submit"], False),
    (["remember", "Fixed", "the", "hook", "user-prompt-submit", "exit", "code"], False),
    (["recall", "--json", "hook", "user-prompt-submit"], False),
    (["remember", "--scope", "hook", "--", "hook", "user-prompt-submit"], False),
    (["--vault", "V", "recall", "hook", "user-prompt-submit"], False),
    (["--vault", "hook", "recall", "user-prompt-submit"], False),
    (["hook", "install", "--command", "dreamdb hook user-prompt-submit"], False),
    (["hook", "install", "user-prompt-submit"], False),
    (["hook", "--vault", "V", "install", "user-prompt-submit"], False),
    (["--version", "hook", "user-prompt-submit"], False),
    (["hook", "user-prompt-submit", "-h"], False), (["hook", "-h", "user-prompt-submit"], False),
    (["user-prompt-submit", "hook"], False), (["hook"], False), (["hook", "--vault"], False),
    # (QA round 139-D F6: a mistyped command's name before them ran the hook, which saved nothing and said nothing)
    (["rememberr", "Fixed", "the", "hook", "user-prompt-submit", "exit", "code"], False),
    (["--json", "rememberr", "hook", "user-prompt-submit"], False), (["--", "x", "hook", "user-prompt-submit"], False),
    (["--json", "hook", "user-prompt-submit"], True), (["--unknown-opt", "val", "hook", "user-prompt-submit"], True),
    (["\u2013vault", "V", "hook", "user-prompt-submit"], True),
])
def test_the_hook_is_the_command_hook_with_the_subcommand_user_prompt_submit(args, hook):
    from dreamdb.entry import _is_hook

    assert _is_hook(args) is hook


def test_a_quiet_fallback_to_bm25_is_written_to_the_hook_log(project, tmp_path):
    """QA round 10: with hybrid asked for and no usable model, the hook fell back without a trace."""
    (tmp_path / "empty-model").mkdir()
    env = {"DREAMDB_HOOK_LOG": str(tmp_path / "h.log"), "DREAMDB_RECALL_MODE": "hybrid",
           "DREAMDB_MODEL_DIR": str(tmp_path / "empty-model")}
    p = hook(payload("how is sleep debt computed before consolidation", project), env)
    assert p.returncode == 0 and p.stdout.decode().startswith(HEADER)  # the memories still come, from BM25
    log = (tmp_path / "h.log").read_text()
    # (what the folder lacks, as `model status` says it: QA round 149-C F5)
    assert ("hybrid recall unavailable, used bm25: no embedding model in DREAMDB_MODEL_DIR: tokenizer.json missing in"
            f" {tmp_path / 'empty-model'} (") in log, log
    # (the vault named: one log for every project's prompts; QA round 132-E F3)
    assert f"+00:00 {(project / '_dream_context').resolve()}: hybrid recall unavailable" in log, log


def test_a_snippet_of_a_body_damaged_in_the_index_rebuilds_it_and_is_logged(tmp_path):
    """QA round 150-D F1: bytes that are not UTF-8 written over a note's body in the index (SQLite's checks pass) left
    the block's snippet line empty (the note's description here), without a word in the log. The snippet's read
    rebuilds the index, as recall's own reads do, and the log says so."""
    from tests.test_index_safety import _MIDDLE, _damaged_long_note

    vault = tmp_path / "proj" / "_dream_context"
    _damaged_long_note(vault, b"\xff\xfe" * 20)
    log = tmp_path / "h.log"
    p = hook(payload("where is the uniquephrase zanzibarwombat that marks the middle of the long field notes",
                     vault.parent), {"DREAMDB_HOOK_LOG": str(log)})
    out = p.stdout.decode()
    assert p.returncode == 0 and out.startswith(HEADER) and "[knowledge/long-notes]" in out, out
    assert _MIDDLE in out, out
    text = log.read_text()
    assert "the stored body of knowledge/long-notes.md is not UTF-8" in text and "rebuilt from the vault" in text, text


def test_an_unknown_recall_mode_is_logged_and_bm25_used(project, tmp_path):
    """QA round 57: DREAMDB_RECALL_MODE=bogus made every recall fail: the prompt got no memories, and the log
    said only "hook failed: UsageError". The CLI still refuses it (exit 2); the hook falls back to BM25."""
    log = tmp_path / "h.log"
    for value in ("bogus", "hybird\n"):
        p = hook(payload("how is sleep debt computed before consolidation", project),
                 {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_RECALL_MODE": value})
        out = p.stdout.decode().splitlines()
        assert p.returncode == 0 and out[0] == HEADER and "feature/sleep-consolidation" in out[1]
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and "DREAMDB_RECALL_MODE='bogus' is unknown (use one of: bm25, hybrid, dense, rrf);" \
        " used bm25" in lines[0] and "DREAMDB_RECALL_MODE='hybird' is unknown" in lines[1]
    assert "hook failed" not in log.read_text()
    p = hook(payload("how is sleep debt computed before consolidation", project),  # spaces and case: still a mode
             {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_RECALL_MODE": " BM25 "})
    assert p.stdout.decode().startswith(HEADER) and len(log.read_text().splitlines()) == 2
    p = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--vault", str(project), "sleep debt"],
                       capture_output=True, text=True, env={**os.environ, "DREAMDB_RECALL_MODE": "bogus"}, timeout=120)
    assert p.returncode == 2 and "Unknown recall mode 'bogus'" in p.stderr


@pytest.mark.skipif(not db.CAN_LOAD_EXTENSIONS, reason="the SQLite driver cannot load sqlite-vec")
def test_in_hybrid_mode_the_hook_embeds_edited_notes_for_its_own_short_time_budget(project, tmp_path, monkeypatch):
    """QA round 57: after 20 notes were edited, one hybrid prompt took 20 s embedding their chunks (the README
    gives ≈ 1 s). The hook now stops after REFRESH_SECONDS (0.5 s), below recall's 2 s, and answers."""
    import dreamdb
    from dreamdb import hook as H
    from dreamdb.api import LAZY_REFRESH_SECONDS, Index
    from dreamdb.embeddings import store
    from tests.test_embed_store import FakeClock, SlowHashEmbedder

    assert H.REFRESH_SECONDS == 0.5 < LAZY_REFRESH_SECONDS
    clock = FakeClock()
    monkeypatch.setattr(store, "_clock", clock)
    emb = SlowHashEmbedder(clock, 0.3)  # 0.3 s a text: the hook's budget ends during the second
    with dreamdb.open(project) as index:
        index.sync()
        store.refresh(index.conn, emb)
    notes = sorted((project / "_dream_context").rglob("*.md"))[:4]
    for note in notes:
        note.write_text(note.read_text() + "\n\nA closing paragraph about capybara budgets.\n")
    emb.calls.clear()
    monkeypatch.setattr(Index, "embedder", lambda self: emb)
    monkeypatch.setenv("DREAMDB_RECALL_MODE", "hybrid")
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    assert H.run(payload("how is sleep debt computed before consolidation", project)).startswith(H.HEADER)
    assert len(emb.calls) == 2  # 0.3 s, then 0.6 s: past 0.5 s, no third
    with dreamdb.open(project) as index:
        assert store.pending(index.conn, emb.model_id) == 2  # the 2 texts the hook left
        index.embedder = lambda: emb
        index.recall("capybara budgets", mode="hybrid")  # (a recall's budget, 2 s, is not reached: both)
        assert len(emb.calls) == 4 and store.pending(index.conn, emb.model_id) == 0


@pytest.mark.skipif(not db.CAN_LOAD_EXTENSIONS, reason="the SQLite driver cannot load sqlite-vec")
def test_in_hybrid_mode_the_hook_logs_that_dense_results_are_missing_or_partial(tmp_path, monkeypatch):
    """QA round 144-B F2: in hybrid mode the hook dropped recall's notes "no dense results yet" (a vault never
    embedded: BM25's results) and "dense results are partial" (texts left for later prompts, "with a note" in the
    README); the log said only what was injected. Both are logged, with the vault, as a fallback to BM25 is."""
    import dreamdb
    from dreamdb import hook as H
    from dreamdb.api import LAZY_REFRESH_MAX, Index
    from dreamdb.embeddings import store
    from tests.test_embed_store import FakeClock, SlowHashEmbedder

    vault = filled_vault(tmp_path, {"knowledge/capybara.md": "---\ntitle: Capybara budgets\n---\nThe capybara"
                                    " budget is reviewed every month.\n"}, fillers=LAZY_REFRESH_MAX + 6)
    monkeypatch.chdir(vault.parent)  # (a hook runs in the project: the notes' commands need no --vault there)
    clock = FakeClock()
    monkeypatch.setattr(store, "_clock", clock)
    emb = SlowHashEmbedder(clock, 0.3)
    monkeypatch.setattr(Index, "embedder", lambda self: emb)
    monkeypatch.setenv("DREAMDB_RECALL_MODE", "hybrid")
    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    prompt = payload("how is the capybara budget reviewed", vault.parent)
    assert H.run(prompt).startswith(H.HEADER) and not emb.calls  # (more texts wait than a query embeds: none)
    assert f"{vault.resolve()}: no dense results yet: no chunk has a vector ({LAZY_REFRESH_MAX + 7} chunk texts wait" \
           " for embedding), so these are BM25's results; run: dreamdb embed refresh" in log.read_text()
    with dreamdb.open(vault) as index:
        store.refresh(index.conn, emb)
    for i in range(4):
        note = vault / "knowledge" / f"filler{i}.md"
        note.write_text(note.read_text() + "capybara\n")
    log.unlink()
    assert H.run(prompt).startswith(H.HEADER) and len(emb.calls) == LAZY_REFRESH_MAX + 7 + 2  # (0.5 s: two of four)
    assert [line.split(" ", 1)[1] for line in log.read_text().splitlines()] == [
        f"{vault.resolve()}: dense results are partial: 2 chunk texts still wait for embedding; run: dreamdb embed"
        " refresh"]


def test_weak_short_or_disabled_prints_nothing(project, tmp_path):
    log = {"DREAMDB_HOOK_LOG": str(tmp_path / "h.log")}
    assert hook(payload("sleep!", project), log).stdout == b""  # under 8 characters: skipped
    assert hook(payload("   debt   ", project), log).stdout == b""
    assert hook(payload("zqxv blorf wexil quasar xylophone", project), log).stdout == b""  # nothing matches
    for chat in ("ok thanks, continue", "yes please do it", "the and of is it ok?", "tamam, devam et lütfen"):
        assert hook(payload(chat, project), log).stdout == b"", chat
    p = hook(payload("how is sleep debt computed", project), {**log, "DREAMDB_MEMORY_HOOK": "0"})
    assert p.returncode == 0 and p.stdout == b""


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"prompt": 42}', b"\xff\xfe\x00garbage"])
def test_bad_payloads_exit_0_and_log(stdin, tmp_path, project):
    log = tmp_path / "h.log"
    p = hook(stdin, {"DREAMDB_HOOK_LOG": str(log)}, cwd=project)
    assert p.returncode == 0 and p.stdout == b"" and b"Traceback" not in p.stderr


def test_a_payload_after_a_byte_order_mark_is_read(project, tmp_path):
    """QA round 54 L11: a payload starting with a UTF-8 BOM was logged as "payload is not JSON (Unexpected UTF-8
    BOM …)" and the prompt got no memories."""
    log = tmp_path / "h.log"
    p = hook(b"\xef\xbb\xbf" + payload("how is sleep debt computed before consolidation", project).encode(),
             {"DREAMDB_HOOK_LOG": str(log)})
    assert p.returncode == 0 and p.stdout.decode().splitlines()[0] == HEADER, (p.stdout, p.stderr)
    assert not log.exists() or "not JSON" not in log.read_text()
    p = hook(b"\xef\xbb\xbf", {"DREAMDB_HOOK_LOG": str(log)})  # a BOM alone is an empty payload
    assert p.returncode == 0 and p.stdout == b"" and "empty payload on stdin" in log.read_text()


def test_whitespace_before_a_byte_order_mark_and_two_marks_are_skipped(project, tmp_path):
    """QA round 55: whitespace before the BOM, or two BOMs (a tool adding its own to a payload that had one), were
    logged as "payload is not JSON" and the prompt got no memories."""
    log = tmp_path / "h.log"
    body = payload("how is sleep debt computed before consolidation", project).encode()
    for head in (b" \n\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf", b"\r\n\xef\xbb\xbf \xef\xbb\xbf\t"):
        p = hook(head + body, {"DREAMDB_HOOK_LOG": str(log)})
        assert p.returncode == 0 and p.stdout.decode().splitlines()[0] == HEADER, (head, p.stdout, p.stderr)
    assert not log.exists() or "not JSON" not in log.read_text()
    p = hook(b" \xef\xbb\xbf\xef\xbb\xbf\n", {"DREAMDB_HOOK_LOG": str(log)})  # marks and whitespace alone: empty
    assert p.returncode == 0 and p.stdout == b"" and "empty payload on stdin" in log.read_text()


def test_a_huge_integer_in_a_field_the_hook_does_not_read_is_no_reason_to_skip_the_prompt(project, tmp_path):
    """QA round 55: a 5,000-digit integer in an unused field (over Python's 4,300-digit limit for int()) was
    logged as 'payload is not JSON (Exceeds the limit (4300 digits) …)' and the prompt got no memories."""
    log = tmp_path / "h.log"
    data = json.loads(payload("how is sleep debt computed before consolidation", project))
    text = json.dumps(data)[:-1] + ', "n": ' + "9" * 5000 + ', "m": -' + "1" * 5000 + ', "ok": 42}'
    p = hook(text, {"DREAMDB_HOOK_LOG": str(log)})
    assert p.returncode == 0 and p.stdout.decode().splitlines()[0] == HEADER, (p.stdout, p.stderr)
    assert not log.exists() or "not JSON" not in log.read_text()
    from dreamdb.hook import _parse_int

    assert _parse_int("42") == 42 and _parse_int("-" + "1" * 5000) == "-" + "1" * 5000


def test_a_payload_nested_too_deeply_is_bad_json_not_a_hook_failure(project, tmp_path):
    """QA round 54 L11: '[' * 100000 was logged as "hook failed: RecursionError …", an internal failure."""
    log = tmp_path / "h.log"
    for stdin in ("[" * 100_000, '{"prompt": "how is sleep debt computed", "x": ' + "[" * 5000 + "]" * 5000 + "}"):
        p = hook(stdin, {"DREAMDB_HOOK_LOG": str(log)}, cwd=project)
        assert p.returncode == 0 and b"Traceback" not in p.stderr
        # (Python 3.13's decoder reads the valid 5,000-deep payload, and the hook answers its prompt: QA round 67 L6)
        assert p.stdout == b"" or (sys.version_info >= (3, 12) and stdin.startswith("{")), p.stdout[:200]
    text = log.read_text()
    assert 1 <= text.count("payload is not usable JSON (nested too deeply to read); nothing done") <= 2, text
    assert "hook failed" not in text and "RecursionError" not in text


def test_huge_prompt_and_no_index_yet(project, tmp_path):
    assert not (project / "_dream_context" / ".dreamdb").exists()
    big = "sleep debt " + "lorem ipsum dolor " * 60_000  # ~1 MB
    p = hook(payload(big, project), {"DREAMDB_HOOK_LOG": str(tmp_path / "h.log")})
    assert p.returncode == 0 and p.stdout.decode().startswith(HEADER)


def test_locked_index_still_answers(project, tmp_path):
    hook(payload("sleep debt consolidation", project))  # creates the index
    write_doc(project / "_dream_context", "knowledge/new.md", "a new note about sleep debt\n")
    conn = db.connect(project / "_dream_context" / ".dreamdb" / "index.db")
    conn.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        p = hook(payload("sleep debt consolidation", project), {"DREAMDB_HOOK_LOG": str(tmp_path / "h.log")})
    finally:
        conn.execute("ROLLBACK")
    assert p.returncode == 0 and p.stdout.decode().startswith(HEADER)
    assert "locked" in (tmp_path / "h.log").read_text()


def test_a_note_deleted_while_the_index_is_locked_is_not_shown(tmp_path):
    """QA round 86-A M2: with another process holding the write lock (a `sync --force` of several seconds), the hook
    answered from the index as it was and showed a note deleted meanwhile as a memory (recall says so on stderr; the
    hook's block did not). A hit whose file is gone is left out, and the log says so."""
    vault = filled_vault(tmp_path, {"knowledge/xylo-plan.md": "---\ntitle: Xylophone migration plan\n---\nThe "
                                    "xylophone migration plan moves xylophone data to postgres.\n",
                                    "knowledge/xylo-notes.md": "---\ntitle: Xylophone notes\n---\nMore on the "
                                    "xylophone data.\n"})
    log = tmp_path / "h.log"
    prompt = payload("what is the xylophone migration plan", vault.parent)
    first = hook(prompt, {"DREAMDB_HOOK_LOG": str(log)}).stdout.decode()
    assert "knowledge/xylo-plan" in first and "knowledge/xylo-notes" in first, first
    (vault / "knowledge" / "xylo-plan.md").unlink()
    conn = db.connect(vault / ".dreamdb" / "index.db")
    conn.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        p = hook(prompt, {"DREAMDB_HOOK_LOG": str(log)})
    finally:
        conn.execute("ROLLBACK")
    out = p.stdout.decode()
    assert p.returncode == 0 and "knowledge/xylo-plan" not in out and "knowledge/xylo-notes" in out, out
    assert "left out 1 hit(s) whose file is gone since the index was last synced (knowledge/xylo-plan)" in \
        log.read_text()


def test_a_note_whose_name_an_ascii_python_cannot_read_is_shown_as_recall_shows_it(tmp_path):
    """QA round 156-D F6: under ``LC_ALL=C PYTHONUTF8=0`` (file names read as ASCII) the hook logged a note named
    ``güvenlik-şifreleme.md``, indexed by a sync in UTF-8, as "left out 1 hit(s) whose file is gone", where the file
    was there and CLI recall, saying it skipped the name "as this Python reads file names … as ascii", showed it. The
    hook finds the file by its UTF-8 bytes, shows it, and its log names the locale."""
    vault = filled_vault(tmp_path, {"knowledge/güvenlik-şifreleme.md": "---\ntitle: Güvenlik ve şifreleme\n---\n"
                                    "Parolalar bcrypt ile saklanır; oturum anahtarları her girişte yenilenir.\n"})
    assert subprocess.run([sys.executable, "-m", "dreamdb", "sync", "--vault", str(vault)], capture_output=True,
                          timeout=120).returncode == 0
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1", "LC_ALL": "C", "PYTHONUTF8": "0",
           "PYTHONIOENCODING": ""}
    p = hook(payload("parolalar bcrypt oturum", vault.parent), env)
    out = p.stdout.decode()
    assert p.returncode == 0 and "knowledge/güvenlik-şifreleme" in out, (out, p.stderr)
    logged = log.read_text()
    assert "whose file is gone" not in logged, logged
    assert ("1 hit(s) whose file name this Python cannot read (it reads file names as ascii, not UTF-8: a C or POSIX"
            " locale with PYTHONUTF8=0)") in logged and "set PYTHONUTF8=1" in logged, logged
    recall = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--json", "--vault", str(vault),
                             "parolalar bcrypt oturum"], capture_output=True, env={**os.environ, **env}, timeout=120)
    assert json.loads(recall.stdout)["hits"][0]["doc_id"] == "knowledge/güvenlik-şifreleme", recall.stdout


def test_hook_install_uninstall_cli(tmp_path):
    proj = tmp_path / "p"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "settings.json").write_text(json.dumps({"model": "x", "hooks": {"Stop": [{"hooks": []}]}}))
    # dreamdb is not on PATH here (python -m dreamdb; an activated virtualenv's bin folder is left out)
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.path.exists(os.path.join(d, "dreamdb")))
    run = lambda *a: subprocess.run([sys.executable, "-m", "dreamdb", "hook", *a, "--project", str(proj)],  # noqa: E731
                                    capture_output=True, text=True, env={**os.environ, "PATH": path})
    assert run("install").returncode == 0
    data = json.loads((proj / ".claude" / "settings.json").read_text())
    assert data["model"] == "x" and "Stop" in data["hooks"]
    command = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    # so the hook gets an absolute command that works from anywhere
    assert command.endswith("dreamdb hook user-prompt-submit") and command.startswith("/")
    ran = subprocess.run(command + " < /dev/null", shell=True, capture_output=True, timeout=60)
    assert ran.returncode == 0
    assert (proj / ".claude" / "settings.json.bak").exists()
    again = run("install")
    assert again.returncode == 0 and again.stdout.startswith("Prompt hook already installed")
    # the same hook through another path to dreamdb is updated in place, never added twice
    other = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(proj), "--json",
                            "--command", "dreamdb hook user-prompt-submit"], capture_output=True, text=True)
    assert other.returncode == 0 and json.loads(other.stdout)["changed"] is True
    assert json.loads(other.stdout)["replaced"] == command
    groups = json.loads((proj / ".claude" / "settings.json").read_text())["hooks"]["UserPromptSubmit"]
    assert [h["command"] for g in groups for h in g["hooks"]] == ["dreamdb hook user-prompt-submit"]
    # QA round 68 M3: without --command/--absolute, another dreamdb command (a teammate's, in a shared file) is kept
    kept = run("install")
    assert kept.returncode == 0 and kept.stdout.startswith("Prompt hook already installed") and "(left as it is)" in kept.stdout
    assert "To replace it: --absolute, or --command CMD" in kept.stderr
    assert [h["command"] for g in json.loads((proj / ".claude" / "settings.json").read_text())["hooks"]["UserPromptSubmit"]
            for h in g["hooks"]] == ["dreamdb hook user-prompt-submit"]
    # M4: nor is a second hook added in the other settings file (Claude Code would run both)
    kept = run("install", "--local", "--json")
    local = proj / ".claude" / "settings.local.json"
    assert kept.returncode == 0 and json.loads(kept.stdout)["kept"] is True and "add the memories twice" in kept.stderr
    # (the command that moves it installs where this one asked: QA round 78-A F5, it named the other file's)
    # (the dreamdb that runs, python -m dreamdb here, and the project given: QA round 156-F F1)
    there = f"--project {shlex.quote(str(proj))}"
    assert (f"To move it: {PYTHON_M_DREAMDB} hook uninstall {there}, then {PYTHON_M_DREAMDB} hook install {there}"
            " --local.") in kept.stderr, kept.stderr
    assert not local.exists()
    local.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [  # (one installed there before, as an
        {"type": "command", "command": "dreamdb hook user-prompt-submit"}]}]}}, indent=2) + "\n")  # install writes)
    gone = run("uninstall")
    assert gone.returncode == 0 and gone.stdout.splitlines() == [
        f"Prompt hook removed from {proj / '.claude' / 'settings.json'}. The previous settings.json is kept in"
        f" {proj / '.claude' / 'settings.json.bak'}.",
        f"Prompt hook removed from {local}; the file held nothing else, so it was deleted."]
    assert "UserPromptSubmit" not in json.loads((proj / ".claude" / "settings.json").read_text())["hooks"]
    assert not local.exists()  # (QA round 99-B F6: it was left as "{}")
    assert run("install", "--local").returncode == 0
    gone = run("uninstall", "--json")
    assert gone.returncode == 0 and json.loads(gone.stdout) == {"removed": True, "settings": [str(local)],
                                                                "deleted": [str(local)]}


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="the tests do not run in a virtualenv")
def test_hook_install_writes_an_absolute_path_for_a_virtualenv_dreamdb(tmp_path):
    """New-user review: a venv install found dreamdb on PATH only through the shell's activation, and wrote a
    bare ``dreamdb`` that Claude Code could not run."""
    proj = tmp_path / "p"
    proj.mkdir()
    venv_bin = os.path.join(sys.prefix, "bin")
    global_bin = tmp_path / "global-bin"
    global_bin.mkdir()
    (global_bin / "dreamdb").write_text("#!/bin/sh\nexit 0\n")
    (global_bin / "dreamdb").chmod(0o755)

    def installed(path: str, *extra: str) -> str:
        shutil.rmtree(proj / ".claude", ignore_errors=True)  # (each a first install: another one is kept, QA 68 M3)
        p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(proj), "--json", *extra],
                           capture_output=True, text=True, env={**os.environ, "PATH": path}, timeout=60)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)["command"]

    if os.path.exists(os.path.join(venv_bin, "dreamdb")):  # activated virtualenv: its bin first on PATH
        command = installed(os.pathsep.join([venv_bin, "/usr/bin", "/bin"]))
        assert command.startswith("/") and command.endswith("dreamdb hook user-prompt-submit")
    # a dreamdb on PATH outside the virtualenv (a global or pipx install): the portable bare command
    assert installed(os.pathsep.join([str(global_bin), "/usr/bin", "/bin"])) == "dreamdb hook user-prompt-submit"
    absolute = installed(os.pathsep.join([str(global_bin), "/usr/bin", "/bin"]), "--absolute")
    assert absolute.startswith("/") and absolute.endswith("hook user-prompt-submit")
    p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(proj), "--absolute",
                        "--command", "x"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "not both" in p.stderr


def test_hook_install_notes_name_the_dreamdb_that_runs_and_the_project(tmp_path):
    """QA round 156-F F1: run by its path (``.venv/bin/dreamdb``, not on PATH), ``hook install``'s notes named a bare
    ``dreamdb`` ("command not found"), and "To move it: dreamdb hook uninstall, then dreamdb hook install --local"
    left out the ``--project`` the install was given: pasted, it uninstalled nothing and installed the hook in the
    working folder. They name this dreamdb, and the project unless it is the working folder; pasted, they work."""
    script = Path(sys.executable).parent / "dreamdb"
    if not script.is_file():
        pytest.skip(f"no dreamdb script beside {sys.executable} (the package is not installed in this Python)")
    path_without = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                   if p and not os.path.exists(os.path.join(p, "dreamdb")))
    env = {**os.environ, "PATH": path_without}
    env.pop("DREAMDB_VAULT", None)
    proj2, proj3, elsewhere = tmp_path / "proj2", tmp_path / "proj3", tmp_path / "elsewhere"
    for folder in (proj2, proj3, elsewhere):
        folder.mkdir()
    d = shlex.quote(str(script))

    def run(*args, cwd):
        p = subprocess.run([str(script), "hook", "install", *args], capture_output=True, text=True, env=env, cwd=cwd,
                           timeout=60)
        assert p.returncode == 0, p.stderr
        return p

    p = run(cwd=proj2)  # (the working folder: no --project needed)
    assert (f"use --local (.claude/settings.local.json, not committed): {d} hook uninstall, then {d} hook install"
            " --local.") in p.stderr, p.stderr
    assert "dreamdb hook" not in p.stderr.replace(f"{d} hook", ""), p.stderr
    p = run("--project", str(proj3), cwd=elsewhere)
    there = f"--project {shlex.quote(str(proj3))}"
    assert f"{d} hook uninstall {there}, then {d} hook install {there} --local." in p.stderr, p.stderr
    p = run("--project", str(proj3), "--local", cwd=elsewhere)
    move = f"{d} hook uninstall {there}, then {d} hook install {there} --local"
    assert f"To move it: {move}." in p.stderr, p.stderr
    pasted = subprocess.run(move.replace(", then ", " && "), shell=True, capture_output=True, text=True, env=env,
                            cwd=elsewhere, timeout=120)
    assert pasted.returncode == 0, pasted.stderr
    assert not (elsewhere / ".claude").exists()  # (nothing installed in the working folder)
    assert json.loads((proj3 / ".claude" / "settings.local.json").read_text())["hooks"]["UserPromptSubmit"]
    shared = proj3 / ".claude" / "settings.json"
    assert not shared.exists() or "UserPromptSubmit" not in json.loads(shared.read_text()).get("hooks", {})


def test_hook_install_says_a_machines_path_in_the_shared_settings_and_names_local(tmp_path):
    """QA round 147-D F4: in an activated virtualenv, ``hook install`` wrote ``<clone>/.venv/bin/dreamdb hook
    user-prompt-submit`` into ``.claude/settings.json``, the project's shared (committed) settings, without a word that
    this path is this machine's, or that ``--local`` keeps it out of the shared file. It says so now, for a command
    that runs its program by absolute path (after env or a cd too: QA round 147-I F2); not for the bare command, nor
    ``/usr/bin/env dreamdb``, nor with ``--local``."""
    proj = tmp_path / "p"
    proj.mkdir()
    global_bin = tmp_path / "global-bin"  # (a dreamdb on PATH: the bare command is the default)
    global_bin.mkdir()
    (global_bin / "dreamdb").write_text("#!/bin/sh\nexit 0\n")
    (global_bin / "dreamdb").chmod(0o755)
    env = {**os.environ, "PATH": os.pathsep.join([str(global_bin), "/usr/bin", "/bin"])}

    def install(*args: str, cwd=proj) -> subprocess.CompletedProcess:
        shutil.rmtree(proj / ".claude", ignore_errors=True)
        p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", *args], capture_output=True, text=True,
                           env=env, cwd=cwd, timeout=60)
        assert p.returncode == 0, p.stderr
        return p

    venv_bin = tmp_path / "venv" / "bin"  # (a virtualenv's dreamdb, not on PATH)
    venv_bin.mkdir(parents=True)
    (venv_bin / "dreamdb").write_text("#!/bin/sh\nexit 0\n")
    (venv_bin / "dreamdb").chmod(0o755)
    program = str(venv_bin / "dreamdb")
    p = install("--command", f"{program} hook user-prompt-submit")  # (as a virtualenv's dreamdb is written)
    settings = proj / ".claude" / "settings.json"
    assert p.stdout == f"Prompt hook installed in {settings}: {program} hook user-prompt-submit\n"
    assert (f"note: the hook runs {program}, a path of this machine, and settings.json is the project's shared settings"
            " (committed with it): where a teammate has no such file, Claude Code's hook fails on every prompt. To keep"
            f" it to this machine, use --local (.claude/settings.local.json, not committed): {PYTHON_M_DREAMDB} hook"
            f" uninstall, then {PYTHON_M_DREAMDB} hook install --local.") in p.stderr, p.stderr  # (QA round 156-F F1)
    p = install("--project", str(proj), "--absolute", cwd=tmp_path)  # (this dreamdb's path; the project named)
    command = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert command["command"].startswith("/") and "a path of this machine" in p.stderr, p.stderr
    assert (f"{PYTHON_M_DREAMDB} hook uninstall --project {proj}, then {PYTHON_M_DREAMDB} hook install --project"
            f" {proj} --local.") in p.stderr, p.stderr
    p = install("--command", f"DREAMDB_VAULT=/x {program} hook user-prompt-submit")  # (after a setting too)
    assert f"note: the hook runs {program}, a path of this machine" in p.stderr, p.stderr
    # QA round 147-I F2: run by env, or after a cd, the program is still this machine's; /usr/bin/env dreamdb runs
    # each machine's dreamdb of its PATH, no path of this machine
    for command in (f"env X=1 {program} hook user-prompt-submit", f"cd {proj} && {program} hook user-prompt-submit"):
        p = install("--command", command)
        assert f"note: the hook runs {program}, a path of this machine" in p.stderr, (command, p.stderr)
    p = install("--command", "/usr/bin/env dreamdb hook user-prompt-submit")
    assert "a path of this machine" not in p.stderr, p.stderr
    for args in ((), ("--local", "--absolute"), ("--command", f"{program} hook user-prompt-submit", "--local")):
        p = install(*args)  # the bare command; one's own settings file
        assert "a path of this machine" not in p.stderr and "--local (" not in p.stderr, (args, p.stderr)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("unbuffered", ["1", None])
def test_a_block_that_cannot_be_written_is_logged_and_the_hook_exits_0(project, tmp_path, unbuffered):
    """QA round 144-I F1: with standard output on a full disk the hook logged "could not print the recall block",
    then Python wrote the block the buffered writer still held again at exit, which failed again: exit 120, and
    "Exception ignored in: <_io.TextIOWrapper name=1 …> OSError: [Errno 28]" on stderr, buffered or not."""
    log = tmp_path / "h.log"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["DREAMDB_HOOK_LOG"] = str(log)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "user-prompt-submit"],
                           input=payload("how is sleep debt computed", project).encode(), stdout=full,
                           stderr=subprocess.PIPE, env=env, timeout=120)
    assert (p.returncode, p.stderr) == (0, b"")
    assert "could not print the recall block ([Errno 28] No space left on device); nothing injected" in log.read_text()
    assert hook(payload("how is sleep debt computed", project)).stdout.decode().startswith(HEADER)  # (it has a block)


def test_interrupted_hook_prints_nothing_and_exits_0(monkeypatch, tmp_path, project):
    import io

    from dreamdb import hook as H

    def interrupted(prompt, cwd):
        raise KeyboardInterrupt

    monkeypatch.setattr(H, "_recall_block", interrupted)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "hook.log"))
    assert H.run(payload("how is sleep debt computed", project)) == ""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload("how is sleep debt computed", project).encode())))
    assert H.run_stdin() == 0
    assert "interrupted" in (tmp_path / "hook.log").read_text()


def test_hook_install_refuses_a_claude_file(tmp_path):
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / ".claude").write_text("not a folder")
    p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(proj)],
                       capture_output=True, text=True)
    assert p.returncode == 6 and "is a file, not a folder" in p.stderr and "Traceback" not in p.stderr
    assert (proj / ".claude").read_text() == "not a folder"


def test_verbose_hook_logs_why_it_printed_nothing(project, tmp_path, monkeypatch):
    """New-user review: the hook was silent for three different reasons and nothing told them apart."""
    from dreamdb import hook as H

    log = tmp_path / "hook.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    monkeypatch.delenv("DREAMDB_VAULT", raising=False)
    elsewhere = tmp_path / "no-vault-here"
    elsewhere.mkdir()
    assert H.run(payload("how is sleep debt computed", elsewhere)) == ""
    assert H.run(payload("ok thanks", project)) == ""
    assert H.run(payload("zebra unicorn quasar nebula", project)) == ""
    assert H.run(payload("how is sleep debt computed before consolidation", project)).startswith(H.HEADER)
    lines = log.read_text().splitlines()
    assert f"no _dream_context vault in or above {elsewhere}" in lines[0]
    assert "acknowledgement" in lines[1] or "shorter than" in lines[1]
    # a linked folder: the walk goes up its real path, which is said (QA round 121-C F7: "no vault in or above
    # proj/src", a folder whose parent holds one)
    (tmp_path / "far" / "src").mkdir(parents=True)
    (project / "src").symlink_to(tmp_path / "far" / "src")
    assert H.run(payload("how is sleep debt computed", project / "src")) == ""
    assert (f"no _dream_context vault in or above {tmp_path / 'far' / 'src'} (where {project / 'src'} leads)"
            in log.read_text().splitlines()[-1])
    assert H.run(payload("\U0001F680\U0001F680\U0001F680 ??? !!!", project)) == ""  # QA round 37: not "an acknowledgement"
    assert "has no words to search for" in log.read_text().splitlines()[-1]
    assert "no hit" in lines[2] or "is below 2" in lines[2]
    assert "injected" in lines[3] and "feature/sleep-consolidation" in lines[3]
    assert ", first " in lines[3] and "highest raw BM25 score" in lines[3]  # (not "best": QA round 39)
    # a DREAMDB_VAULT that names no vault, in a folder without one, is the reason given, not the folder (QA round 37)
    monkeypatch.setenv("DREAMDB_VAULT", str(tmp_path / "nonexistent"))
    assert H.run(payload("how is sleep debt computed before consolidation", elsewhere)) == ""
    last = log.read_text().splitlines()[-1]
    assert f"DREAMDB_VAULT={tmp_path / 'nonexistent'}: " in last and "does not exist" in last, last
    monkeypatch.delenv("DREAMDB_HOOK_VERBOSE")
    log.unlink()
    # not verbose: a wrong DREAMDB_VAULT, which turns the hook off, is logged all the same (QA round 62 L7)
    assert H.run(payload("how is sleep debt computed before consolidation", elsewhere)) == ""
    assert "does not exist" in log.read_text() and len(log.read_text().splitlines()) == 1
    log.unlink()
    # the project's own vault comes first: DREAMDB_VAULT, even a wrong one, is not read (QA round 70 C-M3)
    assert H.run(payload("how is sleep debt computed before consolidation", project)).startswith(H.HEADER)
    assert not log.exists()
    monkeypatch.setenv("DREAMDB_VAULT", str(tmp_path / ("x" * 2000)))  # a long value: one line of bounded length
    assert H.run(payload("how is sleep debt computed before consolidation", elsewhere)) == ""
    (line,) = log.read_text().splitlines()
    assert len(line) < 500 and line.endswith("; nothing printed"), len(line)
    monkeypatch.delenv("DREAMDB_VAULT")
    log.unlink()
    assert H.run(payload("zebra unicorn quasar nebula", project)) == "" and not log.exists()  # silent by default


def test_the_verbose_log_shows_a_cwds_whitespace_and_why_a_dream_context_is_no_vault(project, tmp_path, monkeypatch):
    """QA round 139-C F5: a cwd of "<proj>\\n" or " <proj>" was logged as "cwd <proj> is no folder", a folder that
    exists, and a _dream_context that is a file or a link to nothing as "no _dream_context vault in or above", where
    recall says which it is."""
    from dreamdb import hook as H

    log = tmp_path / "hook.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    monkeypatch.delenv("DREAMDB_VAULT", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    for cwd in (f"{project}\n", f" {project}"):
        assert H.run(payload("how is sleep debt computed", cwd)) == ""
        assert f"cwd {cwd!r} is no folder" in log.read_text().splitlines()[-1], log.read_text()
    filed, dangling = tmp_path / "filed", tmp_path / "dangling"
    (filed / "src").mkdir(parents=True)
    (filed / "_dream_context").write_text("not a vault\n")
    (dangling / "src").mkdir(parents=True)
    (dangling / "_dream_context").symlink_to(tmp_path / "gone")
    for where, problem in ((filed, "is not a folder"), (dangling, "is a link to nothing")):
        assert H.run(payload("how is sleep debt computed", where / "src")) == ""
        assert (f"no _dream_context vault in or above {where / 'src'} ({where / '_dream_context'} {problem}; and"
                " DREAMDB_VAULT is not set); nothing printed") in log.read_text().splitlines()[-1], log.read_text()
        recall = subprocess.run([sys.executable, "-m", "dreamdb", "recall", "sleep debt"], cwd=where / "src",
                                capture_output=True, text=True, timeout=120, env={
                                    k: v for k, v in os.environ.items() if k != "DREAMDB_VAULT"})
        assert recall.returncode == 3 and f"({where / '_dream_context'} {problem})" in recall.stderr, recall.stderr


def test_the_hook_recalls_from_the_sessions_project_before_dreamdb_vault(project, tmp_path, monkeypatch):
    """QA round 70 C-M3: with DREAMDB_VAULT exported (as the README suggests for the command line), every
    session's prompts got that one vault's memories, whatever project they were typed in."""
    from dreamdb import hook as H

    other = tmp_path / "other" / "_dream_context" / "knowledge"
    other.mkdir(parents=True)
    (other / "sleep.md").write_text("---\ntitle: Other project sleep debt\n---\nsleep debt computed elsewhere\n")
    for name in ("alpha", "beta", "gamma", "delta"):  # (BM25's IDF needs documents without the words)
        (other / f"{name}.md").write_text(f"---\ntitle: {name}\n---\nunrelated {name} note\n")
    monkeypatch.setenv("DREAMDB_VAULT", str(other.parent))
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    block = H.run(payload("how is sleep debt computed before consolidation", project))
    assert block.startswith(H.HEADER) and str(project) in block and str(tmp_path / "other") not in block
    nowhere = tmp_path / "no-vault"
    nowhere.mkdir()
    block = H.run(payload("how is sleep debt computed before consolidation", nowhere))  # no project vault: the variable's
    assert block.startswith(H.HEADER) and "knowledge/sleep" in block and str(tmp_path / "other") in block


def test_the_blocks_more_command_names_the_vault_when_dreamdb_vault_names_another(project, tmp_path, monkeypatch):
    """QA round 139-C F3: with DREAMDB_VAULT exported to another vault, the block showed the project's memories and
    its ``More: dreamdb recall --explain`` searched the other vault. It names the project's vault (``--vault``)
    wherever the command alone would find another, and names none where it finds this one."""
    from dreamdb import hook as H

    other = tmp_path / "other" / "_dream_context"
    (other / "knowledge").mkdir(parents=True)
    (other / "knowledge" / "a.md").write_text("---\ntitle: Alpha\n---\nunrelated\n")
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    prompt = payload("how is sleep debt computed before consolidation", project)
    more = f'More: {H._command()} recall --vault {project / "_dream_context"} --explain "<query>"'
    monkeypatch.setenv("DREAMDB_VAULT", str(other))
    assert H.run(prompt).splitlines()[-1] == more
    monkeypatch.setenv("DREAMDB_VAULT", str(tmp_path / "nothing-there"))
    assert H.run(prompt).splitlines()[-1] == more
    for same in (str(project), str(project / "_dream_context")):  # the same vault: the command alone finds it
        monkeypatch.setenv("DREAMDB_VAULT", same)
        assert H.run(prompt).splitlines()[-1] == f'More: {H._command()} recall --explain "<query>"'
    monkeypatch.delenv("DREAMDB_VAULT")
    assert H.run(prompt).splitlines()[-1] == f'More: {H._command()} recall --explain "<query>"'


def test_hook_install_says_when_the_project_has_no_vault(tmp_path):
    empty = tmp_path / "empty-project"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "DREAMDB_VAULT"}
    p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(empty)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0 and f"no _dream_context/ folder in or above {empty}" in p.stderr
    with_vault = tmp_path / "proj"
    shutil.copytree(ROOT / "examples", with_vault, ignore=shutil.ignore_patterns(".dreamdb"))
    p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(with_vault)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0 and "no _dream_context" not in p.stderr
    # QA round 65 L2: a vault on a path that is not UTF-8 exists, but dreamdb cannot use it: said as such
    odd = os.fsencode(tmp_path) + b"/odd\xffproject"
    os.makedirs(odd + b"/_dream_context/knowledge")
    p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", odd],
                       capture_output=True, env=env, timeout=60)
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode == 0 and "no _dream_context" not in err, err
    assert "_dream_context is not valid UTF-8, which dreamdb cannot store in its index: the hook prints nothing until" \
           " that is fixed (rename the folders on that path" in err, err


def test_hook_installs_note_on_a_wrong_dreamdb_vault_names_no_vault_option(tmp_path, monkeypatch):
    """QA round 140-C F7c: with DREAMDB_VAULT naming no folder, ``hook install``'s note said "(or pass --vault PATH)",
    an option it refuses (and the hook takes none): it names DREAMDB_VAULT alone; other commands still name --vault."""
    from click.testing import CliRunner

    from dreamdb.cli import cli

    project = tmp_path / "proj"
    project.mkdir()
    (tmp_path / "not-a-vault").mkdir()
    for named, said in ((tmp_path / "nonexistent", "set DREAMDB_VAULT to a _dream_context folder"),
                        (tmp_path / "not-a-vault", "point DREAMDB_VAULT at the _dream_context folder")):
        monkeypatch.setenv("DREAMDB_VAULT", str(named))
        ran = CliRunner().invoke(cli, ["hook", "install", "--project", str(project), "--command", "true"])
        assert ran.exit_code == 0, ran.output
        assert f"{named} (from DREAMDB_VAULT)" in ran.stderr or f"{named} is not a vault" in ran.stderr, ran.stderr
        assert said in ran.stderr and "--vault" not in ran.stderr, ran.stderr
        (project / ".claude" / "settings.json").unlink()
    ran = CliRunner().invoke(cli, ["recall", "x"])  # (the error, raised: quickcli says it)
    assert "Point --vault (or DREAMDB_VAULT) at the _dream_context folder" in ran.exception.hint, ran.exception


def test_hook_install_in_the_vault_folder_installs_in_its_project_or_refuses(project, tmp_path):
    """QA round 139-C F1: ``hook install --project _dream_context`` (or ``hook install`` in a folder of the vault)
    wrote ``_dream_context/.claude/settings.json``, which Claude Code started in the project never reads, and said the
    vault was "found above" itself, advising ``_dream_context/_dream_context``. Run there, it installs in the vault's
    project, said in a note; given as ``--project``, it is refused (exit 2) with the project's folder as the hint, and
    nothing is written. Uninstall does the same, but removes a hook an earlier version installed in the vault."""
    env = {k: v for k, v in os.environ.items() if k != "DREAMDB_VAULT"}
    vault = project / "_dream_context"

    def run(*args, cwd=project):
        return subprocess.run([sys.executable, "-m", "dreamdb", "hook", *args], capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=60)

    for given, words in ((vault, "a vault folder"), (vault / "knowledge", f"inside the vault {vault}")):
        for command in ("install", "uninstall"):
            p = run(command, "--project", str(given))
            assert p.returncode == 2 and p.stderr.splitlines() == [
                f"Error: {given} is {words}, not a project folder: Claude Code, started in the project, reads no"
                " settings there; nothing was changed.",
                f"Hint: Give the project's folder, the vault's parent: --project {project}"], p.stderr
        p = run("install", "--local", cwd=given)
        assert p.returncode == 0 and p.stdout.startswith(
            f"Prompt hook installed in {project / '.claude' / 'settings.local.json'}: "), p.stdout
        assert p.stderr == (f"note: the current folder {given} is {words}, where Claude Code reads no settings: the"
                            f" vault's project {project} is used.\n"), p.stderr  # (no vault "found above" itself)
        p = run("uninstall", cwd=given)
        assert p.returncode == 0 and p.stdout == (f"Prompt hook removed from {project / '.claude' / 'settings.local.json'}"
                                                  "; the file held nothing else, so it was deleted.\n"), p.stdout
    assert not (vault / ".claude").exists() and not (vault / "knowledge" / ".claude").exists()
    # one an earlier version installed there is removed from there
    (vault / ".claude").mkdir()
    (vault / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "dreamdb hook user-prompt-submit"}]}]}}, indent=2) + "\n")
    p = run("uninstall", "--project", str(vault))
    assert p.returncode == 0 and p.stdout.startswith(f"Prompt hook removed from {vault / '.claude' / 'settings.json'}")
    # (the folder is kept, empty: no install recorded making it, QA round 146-D F5)
    assert not (vault / ".claude" / "settings.json").exists() and list((vault / ".claude").iterdir()) == []


def test_hook_installs_note_names_the_vault_the_hook_reads(project, tmp_path):
    """QA round 139-C: with DREAMDB_VAULT set, the note said the hook reads that vault, "found above" a project that
    holds its own (the hook reads the project's); and a project's _dream_context linked to a vault elsewhere was said
    to be a vault found above it, with "create <project>/_dream_context" advised."""
    other = tmp_path / "other" / "_dream_context"
    (other / "knowledge").mkdir(parents=True)
    linked, bare = tmp_path / "linked", tmp_path / "bare"
    linked.mkdir()
    bare.mkdir()
    (linked / "_dream_context").symlink_to(other)
    env = {**os.environ, "DREAMDB_VAULT": str(other)}

    def install(folder):
        p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(folder)],
                           capture_output=True, text=True, env=env, timeout=60)
        assert p.returncode == 0, p.stderr
        # (not the note on a path of this machine, where the tests' dreamdb is written by its path: QA round 147-D F4)
        return "".join(line for line in p.stderr.splitlines(keepends=True) if not line.startswith("note: the hook runs "))

    assert install(project) == "" and install(linked) == ""
    assert install(bare) == (f"note: the hook reads the vault {other}, named by DREAMDB_VAULT, as none is in or above"
                             f" {bare}: prompts in this project get its memories (create {bare / '_dream_context'} for"
                             " a vault of the project's own).\n")


def test_the_log_is_appended_only_to_a_text_file_and_makes_no_folder_it_was_not_given(project, tmp_path, monkeypatch):
    """QA round 40: DREAMDB_HOOK_LOG naming a database appended text to it, and naming a missing folder created it."""
    import os

    from dreamdb import hook as H

    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    db = tmp_path / "some.db"
    db.write_bytes(b"SQLite format 3\0" + b"\0" * 100)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    pdf = tmp_path / "paper.pdf"  # QA round 41: no NUL in its first 64 bytes, yet no text
    pdf.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" + bytes(range(1, 256)) * 4)
    pdf_bytes = pdf.read_bytes()
    for target in (db, fifo, pdf, tmp_path / "missing" / "dir" / "h.log"):
        monkeypatch.setenv("DREAMDB_HOOK_LOG", str(target))
        assert H.run(payload("ok thanks", project)) == ""  # (would block on the FIFO)
    assert db.read_bytes() == b"SQLite format 3\0" + b"\0" * 100 and pdf.read_bytes() == pdf_bytes
    dangling = tmp_path / "to-nothing.log"  # QA round 42: the link's target was created
    dangling.symlink_to(tmp_path / "target.log")
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(dangling))
    assert H.run(payload("ok thanks", project)) == "" and not (tmp_path / "target.log").exists()
    log = tmp_path / "nul.log"  # QA round 42: a NUL in the payload's cwd wrote a traceback to the log
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    for cwd in (str(project) + "\0x", "\ud800"):
        assert H.run(json.dumps({"prompt": "how is sleep debt computed", "cwd": cwd})) == ""
    assert log.read_text().count("is not a usable path") == 2 and "Traceback" not in log.read_text()
    # QA round 48: any other text file (/etc/passwd, a note) got tracebacks appended; only a hook log is appended to
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(text))
    from dreamdb.api import Index

    def fail(*_a, **_k):  # a failure, whose log entry had a traceback in it (an unknown DREAMDB_RECALL_MODE
        raise RuntimeError("recall broke")  # was this failure until QA round 57: now bm25 is used)

    monkeypatch.setattr(Index, "recall", fail)
    assert H.run(payload("how is sleep debt computed", project)) == ""
    assert text.read_text() == "root:x:0:0:root:/root:/bin/bash\n"
    assert not (tmp_path / "missing").exists()
    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    assert H.run(payload("how is sleep debt computed", project)) == ""  # a new file
    assert H.run(payload("how is sleep debt computed", project)) == ""  # a hook log already
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and all("hook failed: RuntimeError: recall broke" in ln for ln in lines)
    assert "Traceback" not in log.read_text() and "DREAMDB_DEBUG=1" in lines[0]


def test_the_hook_spares_what_it_never_uses_and_still_names_where_it_failed(project, tmp_path, monkeypatch):
    """QA round 150-P F2: every prompt imported ``traceback`` (with ``linecache`` and ``tokenize``, ≈ 2 ms) for a
    failure's log line, and its ``explain=True`` recall wrote the notes on how the prompt's words were read (their
    translations looked up in the lexicon, Turkish patterns compiled: ≈ 4 ms on the real vault), none of which the
    hook logs. The failure's line still names the file, line and function that raised, as ``traceback`` named them."""
    import dreamdb.api as api
    import dreamdb.hook as H
    from dreamdb.api import Index

    p = subprocess.run([sys.executable, "-c", "import io, sys, json\n"
                        "from dreamdb.entry import main\n"
                        f"sys.stdin = io.TextIOWrapper(io.BytesIO({payload('how is sleep debt computed', project)!r}"
                        ".encode()))\n"
                        "assert main(['hook', 'user-prompt-submit']) == 0\n"
                        "print(json.dumps(sorted(sys.modules)))\n"], capture_output=True, text=True, check=True)
    assert HEADER in p.stdout and "traceback" not in json.loads(p.stdout.splitlines()[-1])
    planned = []
    real_notes = api._plan_notes
    monkeypatch.setattr(api, "_plan_notes", lambda *a: planned.append(a) or real_notes(*a))
    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    assert H.run(payload("how is sleep debt computed", project)).startswith(HEADER)
    assert planned == []
    ix = Index(project / "_dream_context", engine="sql")  # (recall itself still notes them, explained)
    assert ix.recall("how is sleep debt computed", explain=True) and len(planned) == 1
    ix.close()
    import traceback

    def fail(*_a, **_k):
        raise RuntimeError("recall broke")

    monkeypatch.setattr(Index, "recall", fail)
    assert H.run(payload("how is sleep debt computed", project)) == ""
    try:
        fail()
    except RuntimeError as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = f"(at {Path(frame.filename).name}:{frame.lineno} in {frame.name})"
    assert where == f"(at test_hook.py:{fail.__code__.co_firstlineno + 1} in fail)"
    assert f"hook failed: RuntimeError: recall broke {where}; DREAMDB_DEBUG=1" in log.read_text()


def test_a_log_this_user_may_only_write_to_is_appended_to(tmp_path):
    """QA round 43: the log's text check opened it read-write, so a log of mode 0200 got nothing."""
    import os
    import subprocess
    import sys

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to run the hook as another user (root reads any file)")
    import shutil
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # (pytest's folders are 0700: the other user could not reach it)
    folder.chmod(0o755)
    log = folder / "w.log"
    log.write_text("earlier line\n")
    os.chown(log, 65534, 65534)
    log.chmod(0o200)
    code = ("import os, codecs, stat; from dreamdb import hook; hook.log_path(); os.setgid(65534); os.setuid(65534);"
            " hook._log('written unread')")  # (imports first: the other user may not read the installation)
    p = subprocess.run([sys.executable, "-c", code], env={**os.environ, "DREAMDB_HOOK_LOG": str(log)},
                       capture_output=True, text=True, timeout=60)
    try:
        assert p.returncode == 0, p.stderr
        assert log.read_text().startswith("earlier line\n") and log.read_text().rstrip().endswith("written unread")
    finally:
        shutil.rmtree(folder)


def test_the_block_prints_scores_with_four_significant_digits():
    """QA round 58: one decimal printed 1.96 as 2.0 beside the footer's "shown when the best is ≥ 2", 0.05 as 0.1."""
    from dreamdb.hook import _score_text

    assert [_score_text(x) for x in (12.3456, 1.96, 1.999, 0.05, 0.049, 4.0)] == \
        ["12.35", "1.96", "1.999", "0.05", "0.049", "4"]


def test_a_kept_hit_with_a_small_raw_score_is_not_printed_as_zero(tmp_path):
    """QA round 56: hits whose raw BM25 is 0.03 (a word every note holds) were printed ``(score 0.0)``, while the
    README says hits of raw score 0 are the ones left out. Such a score gets its significant digits."""
    vault = tmp_path / "proj" / "_dream_context"
    write_doc(vault, "knowledge/wombat.md", "---\nname: Wombat burrows\n---\nThe wombat burrow is deep; gardening"
              " near it is hard.\n")
    for i in range(20):  # "gardening" in every note: an inverse document frequency near 0
        write_doc(vault, f"knowledge/filler{i}.md", f"---\nname: Filler {i}\n---\ngardening tomatoes {i}\n")
    p = hook(payload("how deep is a wombat burrow for gardening", vault.parent), {"DREAMDB_HOOK_LOG": str(tmp_path / "h.log")})
    lines = p.stdout.decode().splitlines()
    recalled = json.loads(subprocess.run([sys.executable, "-m", "dreamdb", "recall", "--vault", str(vault), "--json",
                                          "-n", "3", "how deep is a wombat burrow for gardening"],
                                         capture_output=True, text=True, timeout=120).stdout)["hits"]
    assert [h["doc_id"] for h in recalled][:1] == ["knowledge/wombat"] and 0 < recalled[1]["score"] < 0.05
    assert lines[0] == HEADER and len(lines) == 9, lines
    assert lines[1] == f"1. [knowledge/wombat] Wombat burrows (score {recalled[0]['score']:.4g})"  # as recall prints it
    assert lines[3] == f"2. [{recalled[1]['doc_id']}] {recalled[1]['title']} (score {recalled[1]['score']:.4g})"
    assert "(score 0.0)" not in p.stdout.decode()


def test_a_vault_too_large_to_index_within_a_prompt_is_indexed_in_the_background(tmp_path):
    """QA round 59 M4: with no index, the hook built the whole index before answering (9-10 s for a 60,000-entry
    changelog), and a hook its caller stopped lost the build, so the index was never built. Past
    INLINE_BUILD_BYTES the hook starts a detached `dreamdb sync` and answers nothing for that prompt; while a
    build holds the index, it answers nothing at once; once built, it answers."""
    from dreamdb.hook import INLINE_BUILD_BYTES

    vault = tmp_path / "big" / "_dream_context"
    (vault / "core").mkdir(parents=True)
    entries = [{"id": f"E{i:06d}", "type": "note", "date": "2026-01-01",
                "description": f"release note {i}: the kestrel{i} service moved " + "lorem ipsum " * 20}
               for i in range(6000)]
    (vault / "core" / "CHANGELOG.json").write_text(json.dumps(entries, indent=2))
    assert (vault / "core" / "CHANGELOG.json").stat().st_size > INLINE_BUILD_BYTES
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}
    prompt = payload("where did the kestrel42 service move to", vault.parent)
    index_file = vault / ".dreamdb" / "index.db"
    # a build under way elsewhere (its write transaction open): nothing printed, no waiting
    import dreamdb

    with dreamdb.open(vault, auto_sync=False) as fresh:  # (the schema, as a build's first step commits it)
        assert fresh.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0
    with db.connect(index_file) as holder:
        holder.execute("BEGIN IMMEDIATE")
        p = hook(prompt, env)
        holder.execute("ROLLBACK")
    assert p.returncode == 0 and p.stdout == b""
    assert "the index is being built by another process; nothing printed until it is done" in log.read_text()
    p = hook(prompt, env)
    assert p.returncode == 0 and p.stdout == b""
    assert "over the 1,000,000 the hook builds itself): started `dreamdb sync` in the background" in log.read_text()
    deadline = time.time() + 90
    while time.time() < deadline:  # the detached sync commits its build
        with db.connect(index_file, readonly=True) as reader:
            if reader.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 6000:
                break
        time.sleep(0.05)
    p = hook(prompt, env)
    out = p.stdout.decode().splitlines()
    assert p.returncode == 0 and out and out[0] == HEADER, (p.stdout, log.read_text())
    assert "kestrel42" in p.stdout.decode()


def test_large_changes_to_a_built_index_are_indexed_in_the_background(tmp_path):
    """QA round 90-C F1: a 40 MB note added to an indexed vault was indexed by every prompt (10 s, 825 MB each), and a
    hook its caller stopped rolled the sync back, so the note was never indexed. Past INLINE_SYNC_BYTES of new or
    changed files the hook starts a detached `dreamdb sync` and answers from the index as it is."""
    from dreamdb.hook import INLINE_SYNC_BYTES

    vault = tmp_path / "p" / "_dream_context"
    write_doc(vault, "knowledge/kestrel.md", "---\nname: Kestrel service\n---\nThe kestrel service moved to the"
                                             " north datacentre; kestrel kestrel.\n")
    for i in range(6):
        write_doc(vault, f"knowledge/other-{i}.md", f"---\nname: Other {i}\n---\nA note on topic {i}.\n")
    import dreamdb

    with dreamdb.open(vault) as ix:
        assert ix.sync().added == 7
    line = "INFO the osprey pipeline wrote a log line with some words " + "lorem ipsum " * 6 + "\n"
    (vault / "knowledge" / "big-log.md").write_text(line * (INLINE_SYNC_BYTES // len(line) + 10))
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}
    p = hook(payload("where did the kestrel service move", vault.parent), env)
    assert p.returncode == 0 and p.stdout.decode().splitlines()[:1] == [HEADER], (p.stdout, log.read_text())
    assert "knowledge/kestrel" in p.stdout.decode()
    assert f"bytes of new or changed files to index, over the {INLINE_SYNC_BYTES:,} the hook indexes itself: started" \
        " `dreamdb sync` in the background" in log.read_text() and "recalled from the index as it is" in log.read_text()
    assert _wait_built(vault / ".dreamdb" / "index.db", n=8)
    p = hook(payload("which pipeline wrote the osprey log", vault.parent), env)
    assert p.returncode == 0 and "knowledge/big-log" in p.stdout.decode(), (p.stdout, log.read_text())
    # a background sync that failed a moment ago (a lock held meanwhile): this prompt syncs the changes itself, not
    # leaving the index without them for minutes (QA round 91 F8)
    (vault / ".dreamdb" / "index.db.build.log").write_text("2026-12-05T00:00:00+00:00 dreamdb sync --vault x\n"
                                                           "Error: The index is locked by another process.\n")
    (vault / "knowledge" / "big-log.md").write_text(line.replace("osprey", "harrier") * (INLINE_SYNC_BYTES // len(line) + 10))
    p = hook(payload("which pipeline wrote the harrier log", vault.parent), env)
    assert p.returncode == 0 and "knowledge/big-log" in p.stdout.decode(), (p.stdout, log.read_text())
    assert "the background sync failed: Error: The index is locked by another process. (output:" in log.read_text()
    assert "this prompt syncs the changes itself; the next prompt to try again is in" in log.read_text()


def test_many_small_new_notes_are_indexed_in_the_background_and_a_vault_of_many_files_built_there(tmp_path):
    """QA round 108-B F1: the hook's limit on what it indexes itself was in bytes only, so 30,000 new notes of 1.8 MB in
    all were indexed by the prompt (24 s), and a hook its caller stopped rolled them back each time: never indexed.
    Past INLINE_SYNC_FILES new or changed files (INLINE_BUILD_FILES for an index to build) a background `dreamdb
    sync` indexes them and the prompt answers from the index as it is."""
    from dreamdb.hook import INLINE_BUILD_FILES, INLINE_SYNC_FILES

    vault = filled_vault(tmp_path, {"knowledge/kestrel.md": "---\nname: Kestrel service\n---\nThe kestrel service"
                                                            " moved to the north datacentre; kestrel kestrel.\n"})
    import dreamdb

    with dreamdb.open(vault) as ix:
        assert ix.sync().added == 13
    for i in range(INLINE_SYNC_FILES + 1):
        write_doc(vault, f"knowledge/many/n{i}.md", f"---\ntitle: n {i}\n---\nsmallnote{i}\n")
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}
    p = hook(payload("where did the kestrel service move", vault.parent), env)
    assert p.returncode == 0 and "knowledge/kestrel" in p.stdout.decode(), (p.stdout, log.read_text())
    assert f"{INLINE_SYNC_FILES + 1:,} files new, changed or removed to index, over the {INLINE_SYNC_FILES:,} the hook" \
           " indexes itself: started `dreamdb sync` in the background" in log.read_text(), log.read_text()
    assert _wait_built(vault / ".dreamdb" / "index.db", n=INLINE_SYNC_FILES + 14)
    # removed files count too (QA round 109-A F9: 30,000 notes moved out of the vault took a prompt 5.6 s)
    shutil.move(str(vault / "knowledge" / "many"), str(tmp_path / "moved-out"))
    p = hook(payload("where did the kestrel service move", vault.parent), env)
    assert p.returncode == 0 and "knowledge/kestrel" in p.stdout.decode(), (p.stdout, log.read_text())
    assert log.read_text().count(f"{INLINE_SYNC_FILES + 1:,} files new, changed or removed to index") == 2, \
        log.read_text()
    assert _wait_built(vault / ".dreamdb" / "index.db", n=13)
    # a vault of many small files and no index: built in the background, whatever its bytes
    other = tmp_path / "other" / "_dream_context"
    for i in range(INLINE_BUILD_FILES + 1):
        write_doc(other, f"knowledge/n{i}.md", f"---\ntitle: n {i}\n---\nsmallnote{i}\n")
    p = hook(payload("smallnote7 please", other.parent), env)
    assert p.returncode == 0 and p.stdout == b"", p.stdout
    assert f"the index must be built ({INLINE_BUILD_FILES + 1:,} files to index, over the {INLINE_BUILD_FILES:,} the" \
           " hook builds itself): started `dreamdb sync` in the background" in log.read_text(), log.read_text()
    assert _wait_built(other / ".dreamdb" / "index.db", n=INLINE_BUILD_FILES + 1)


def _wait_synced(vault: Path, seconds=90) -> bool:
    """Wait until the background sync has left nothing to index and ended (its child no longer holds the build log)."""
    import fcntl

    import dreamdb
    from dreamdb.store.sync import files_to_index

    deadline = time.time() + seconds
    while time.time() < deadline:
        with dreamdb.open(vault, auto_sync=False) as ix:
            done = files_to_index(ix.conn, vault) is None
        if done:
            fd = os.open(vault / ".dreamdb" / "index.db.build.log", os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                pass
            finally:
                os.close(fd)
        time.sleep(0.05)
    return False


def _append(paths, text: str) -> None:
    for path in paths:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)


def test_changed_notes_past_the_hooks_limits_are_synced_in_the_background(tmp_path):
    """QA round 154-C F1: the hook synced changed notes itself up to 5,000 files and 8 MB, where it builds an index
    itself up to 2,000 files and 1 MB, while a changed note costs about twice a new one: 3,000 changed notes of 1 KB
    held a prompt 14 s, 4,991 changed small notes 8 s. It now syncs itself changes of half a build's files and bytes
    (the same budget, INLINE_SYNC_*): INLINE_BUILD_FILES // 2 changed notes are synced by the prompt, one more is left
    to a background `dreamdb sync`; and so are changed notes holding more than INLINE_BUILD_BYTES // 2, however few."""
    from dreamdb.hook import INLINE_BUILD_BYTES, INLINE_BUILD_FILES, INLINE_SYNC_BYTES, INLINE_SYNC_FILES

    half = INLINE_BUILD_FILES // 2
    vault = filled_vault(tmp_path, {"knowledge/kestrel.md": "---\nname: Kestrel service\n---\nThe kestrel service"
                                                            " moved to the north datacentre; kestrel kestrel.\n"})
    many = [write_doc(vault, f"knowledge/many/n{i}.md", f"---\ntitle: n {i}\n---\nsmallnote{i}\n") for i in range(half)]
    import dreamdb

    with dreamdb.open(vault) as ix:
        assert ix.sync().added == half + 13
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}
    # half a build's files changed: synced by the prompt, which finds what one of them gained
    _append(many, "\nedited\n")
    _append(many[7:8], "The osprey nests on the mast; osprey osprey.\n")
    p = hook(payload("where does the osprey nest", vault.parent), env)
    assert p.returncode == 0 and "[knowledge/n7]" in p.stdout.decode(), (p.stdout, log.read_text())
    assert "in the background" not in log.read_text(), log.read_text()
    # one more: left to a background sync, the prompt answered from the index as it is
    _append([*many, vault / "knowledge" / "kestrel.md"], "\nedited again\n")
    p = hook(payload("where did the kestrel service move", vault.parent), env)
    assert p.returncode == 0 and "knowledge/kestrel" in p.stdout.decode(), (p.stdout, log.read_text())
    assert f"{half + 1:,} files new, changed or removed to index, over the {INLINE_SYNC_FILES:,} the hook indexes" \
           " itself: started `dreamdb sync` in the background" in log.read_text(), log.read_text()
    assert "recalled from the index as it is" in log.read_text()
    assert _wait_synced(vault)
    # fewer notes, of 2 KB each, whose changes hold more than half a build's bytes: left to a background sync too
    words = " ".join(f"word{j}" for j in range(300))
    larger = [write_doc(vault, f"knowledge/larger/l{i}.md", f"---\ntitle: l {i}\n---\n{words[:1950]}\n")
              for i in range(INLINE_BUILD_BYTES // 2 // 1950 + 1)]
    with dreamdb.open(vault) as ix:
        assert ix.sync().added == len(larger) < half
    _append(larger, "\nedited\n")
    changed = sum(path.stat().st_size for path in larger)
    assert changed > INLINE_BUILD_BYTES // 2
    log.write_text("")
    p = hook(payload("where did the kestrel service move", vault.parent), env)
    assert p.returncode == 0 and "knowledge/kestrel" in p.stdout.decode(), (p.stdout, log.read_text())
    assert f"{changed:,} bytes of new or changed files to index, over the {INLINE_SYNC_BYTES:,} the hook indexes" \
           " itself: started `dreamdb sync` in the background" in log.read_text(), log.read_text()
    assert _wait_synced(vault)


def test_a_vault_past_the_limit_on_changes_but_within_a_builds_is_built_by_the_prompt(tmp_path):
    """QA round 154-C F1's limits on changes (INLINE_SYNC_*) are half those of a build: a vault with no index yet of
    more files than the first, within the second, is built by the prompt itself, as before (found by the benchmark of
    the fix, `scripts/bench_ops.py --only hook-sync`: its new files were counted as changes, and the build left to
    the background)."""
    from dreamdb.hook import INLINE_BUILD_FILES

    vault = filled_vault(tmp_path, {"knowledge/kestrel.md": "---\nname: Kestrel service\n---\nThe kestrel service"
                                                            " moved to the north datacentre; kestrel kestrel.\n"})
    for i in range(INLINE_BUILD_FILES // 2 + 1):
        write_doc(vault, f"knowledge/many/n{i}.md", f"---\ntitle: n {i}\n---\nsmallnote{i}\n")
    log = tmp_path / "h.log"
    p = hook(payload("where did the kestrel service move", vault.parent), {"DREAMDB_HOOK_LOG": str(log),
                                                                          "DREAMDB_HOOK_VERBOSE": "1"})
    assert p.returncode == 0 and "knowledge/kestrel" in p.stdout.decode(), (p.stdout, log.read_text())
    assert "in the background" not in log.read_text(), log.read_text()


def _changelog_entries(n: int, start: int = 0) -> list[dict]:
    return [{"id": f"E{i:06d}", "type": "note", "date": "2026-01-01",
             "description": f"release note {i}: the kestrel{i} service moved " + "lorem ipsum " * 80}
            for i in range(start, start + n)]


def test_an_entry_added_to_a_changelog_larger_than_the_hooks_limit_is_synced_by_the_prompt(tmp_path, monkeypatch):
    """QA round 154-C F1's limits: a changed CHANGELOG.json (or memory file) is counted by what it grew, since its
    unchanged entries keep their rows (the real vault's 820 KB with an entry added: ≈ 0.06 s of CPU). One larger than
    INLINE_SYNC_BYTES gaining an entry is synced by the prompt, which finds the entry; grown by more, it is left to
    a background sync; and one larger than INLINE_SYNC_READ_BYTES, read whole by a sync, is left there however little
    it grew."""
    from dreamdb import hook as H
    from dreamdb.store.sync import files_to_index

    vault = tmp_path / "big" / "_dream_context"
    (vault / "core").mkdir(parents=True)
    changelog = vault / "core" / "CHANGELOG.json"
    entries = _changelog_entries(700)
    changelog.write_text(json.dumps(entries, indent=2))
    write_doc(vault, "core/2.memory.md", "## First\n\nThe first section.\n")
    assert changelog.stat().st_size > H.INLINE_BUILD_BYTES // 2
    import dreamdb

    with dreamdb.open(vault) as ix:
        ix.sync()
        before = changelog.stat().st_size
        entries.append({"id": "E999999", "type": "note", "date": "2026-02-02",
                        "description": "the zephyrine rollout went to every region"})
        changelog.write_text(json.dumps(entries, indent=2))
        _append([vault / "core" / "2.memory.md"], "\n## Second\n\nThe second section.\n")
        grown = changelog.stat().st_size - before + len("\n## Second\n\nThe second section.\n")
        assert files_to_index(ix.conn, vault) == (2, grown, changelog.stat().st_size + (vault / "core" /
                                                                                           "2.memory.md").stat().st_size)
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}
    p = hook(payload("how did the zephyrine rollout go", vault.parent), env)
    assert p.returncode == 0 and "zephyrine" in p.stdout.decode(), (p.stdout, log.read_text())
    assert "in the background" not in log.read_text(), log.read_text()
    # grown by more than INLINE_SYNC_BYTES: a background sync
    entries += _changelog_entries(H.INLINE_SYNC_BYTES // 1000, start=700)
    changelog.write_text(json.dumps(entries, indent=2))
    p = hook(payload("where did the kestrel42 service move", vault.parent), env)
    assert p.returncode == 0 and "kestrel42" in p.stdout.decode(), (p.stdout, log.read_text())
    assert f"bytes of new or changed files to index, over the {H.INLINE_SYNC_BYTES:,} the hook indexes itself: started" \
           " `dreamdb sync` in the background" in log.read_text(), log.read_text()
    assert _wait_synced(vault)
    # read whole past INLINE_SYNC_READ_BYTES (lowered here: a changelog of 8 MB takes a test seconds to build)
    monkeypatch.setattr(H, "INLINE_SYNC_READ_BYTES", changelog.stat().st_size // 2)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    entries.append({"id": "E999998", "type": "note", "date": "2026-02-03", "description": "the harrier rollout"})
    changelog.write_text(json.dumps(entries, indent=2))
    log.write_text("")
    H._recall_block("how did the zephyrine rollout go", str(vault.parent))
    assert f"{changelog.stat().st_size:,} bytes of new or changed files to read, over the" \
           f" {H.INLINE_SYNC_READ_BYTES:,} the hook reads itself: started `dreamdb sync` in the background" \
           in log.read_text(), log.read_text()
    assert _wait_synced(vault)


def test_a_changelog_edited_not_grown_counts_whole_toward_the_hooks_limit(tmp_path):
    """QA round 154-G F2: a changed CHANGELOG.json was counted by what it grew, so one whose entries were edited (its
    size the same) or removed counted 0 bytes, and a prompt synced a 3.5 MB changelog itself (3.9 s). One that did not
    grow counts whole: larger than INLINE_SYNC_BYTES, it is left to a background sync, logged."""
    from dreamdb import hook as H
    from dreamdb.store.sync import files_to_index

    vault = tmp_path / "big" / "_dream_context"
    (vault / "core").mkdir(parents=True)
    changelog = vault / "core" / "CHANGELOG.json"
    entries = _changelog_entries(700)
    changelog.write_text(json.dumps(entries, indent=2))
    size = changelog.stat().st_size
    assert H.INLINE_SYNC_BYTES < size < H.INLINE_SYNC_READ_BYTES
    import dreamdb

    with dreamdb.open(vault) as ix:
        ix.sync()
        # every entry edited, the size the same
        changelog.write_text(changelog.read_text().replace("kestrel", "harrier"))
        assert changelog.stat().st_size == size
        assert files_to_index(ix.conn, vault) == (1, size, size)
        # entries removed: smaller, counted whole too
        changelog.write_text(json.dumps(entries[:-1], indent=2))
        assert files_to_index(ix.conn, vault) == (1, changelog.stat().st_size, changelog.stat().st_size)
    changelog.write_text(json.dumps(entries, indent=2).replace("kestrel", "harrier"))
    log = tmp_path / "h.log"
    p = hook(payload("where did the harrier42 service move", vault.parent), {"DREAMDB_HOOK_LOG": str(log),
                                                                            "DREAMDB_HOOK_VERBOSE": "1"})
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert f"{size:,} bytes of new or changed files to index, over the {H.INLINE_SYNC_BYTES:,} the hook indexes" \
           " itself: started `dreamdb sync` in the background" in log.read_text(), log.read_text()
    assert _wait_synced(vault)


def test_an_index_found_damaged_when_opened_in_a_large_vault_is_said_in_the_log(tmp_path):
    """QA round 108-B F2: an index damaged where it is opened, in a vault too large for the prompt to build, was
    replaced by an empty one that a background sync fills, and the hook log said only that the index must be built."""
    vault = _large_vault(tmp_path / "big")
    index_file = vault / ".dreamdb" / "index.db"
    import dreamdb

    with dreamdb.open(vault) as ix:
        ix.sync()
    index_file.write_bytes(b"this is no sqlite file at all " * 100)
    log = tmp_path / "h.log"
    p = hook(payload("where did the kestrel42 service move to", vault.parent), {"DREAMDB_HOOK_LOG": str(log)})
    assert p.returncode == 0 and p.stdout == b""
    text = log.read_text()
    assert f"index at {index_file} was unreadable (" in text and "rebuilt from the vault" in text, text
    assert "the index must be built (" in text and "started `dreamdb sync` in the background" in text, text
    assert _wait_built(index_file)


def test_a_prompt_on_an_index_whose_files_table_is_damaged_rebuilds_it_and_answers(tmp_path):
    """Found by scripts/bench_ops.py after QA round 90-C F1's fix: the hook's look at the files waiting to be indexed
    read the damaged ``files`` table outside the damage guard, so the prompt printed nothing and nothing was rebuilt
    (every later prompt alike)."""
    vault = filled_vault(tmp_path, {"knowledge/kestrel.md": "---\nname: Kestrel service\n---\nThe kestrel service"
                                                            " moved to the north datacentre.\n"})
    import dreamdb

    with dreamdb.open(vault) as ix:
        ix.sync()
        ix.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = ix.conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'files'").fetchone()[0]
        page = ix.conn.execute("PRAGMA page_size").fetchone()[0]
    with open(vault / ".dreamdb" / "index.db", "r+b") as f:
        f.seek((root - 1) * page)
        f.write(b"\xff" * page)
    log = tmp_path / "h.log"
    p = hook(payload("where did the kestrel service move", vault.parent), {"DREAMDB_HOOK_LOG": str(log)})
    assert p.returncode == 0 and p.stdout.decode().splitlines()[:1] == [HEADER], (p.stdout, log.read_text())
    assert "knowledge/kestrel" in p.stdout.decode() and "rebuilt from the vault" in log.read_text()


@pytest.mark.parametrize("table", ["meta", "sqlite_autoindex_meta_1"])
def test_a_prompt_on_an_index_whose_meta_table_is_damaged_rebuilds_it_and_answers(tmp_path, table):
    """QA round 146-D F1: the hook's check whether the whole index is due read the damaged ``meta`` table (or its
    index) outside the damage guard: every prompt printed nothing, logged "hook failed: DatabaseError … in
    stored_index_format", and the index was never rebuilt (``dreamdb recall`` rebuilt it)."""
    vault = filled_vault(tmp_path, {"knowledge/kestrel.md": "---\nname: Kestrel service\n---\nThe kestrel service"
                                                            " moved to the north datacentre.\n"})
    import dreamdb

    with dreamdb.open(vault) as ix:
        ix.sync()
        ix.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = ix.conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        page = ix.conn.execute("PRAGMA page_size").fetchone()[0]
    with open(vault / ".dreamdb" / "index.db", "r+b") as f:
        f.seek((root - 1) * page)
        f.write(b"\xde\xad" * (page // 2))
    log = tmp_path / "h.log"
    for _ in range(2):  # (the second prompt answers from the index the first rebuilt)
        p = hook(payload("where did the kestrel service move", vault.parent), {"DREAMDB_HOOK_LOG": str(log)})
        assert p.returncode == 0 and p.stdout.decode().splitlines()[:1] == [HEADER], (p.stdout, log.read_text())
        assert "knowledge/kestrel" in p.stdout.decode()
    text = log.read_text()
    assert "rebuilt from the vault" in text and "hook failed" not in text, text


def _large_vault(root, n=6000):
    vault = root / "_dream_context"
    (vault / "core").mkdir(parents=True)
    entries = [{"id": f"E{i:06d}", "type": "note", "date": "2026-01-01",
                "description": f"release note {i}: the kestrel{i} service moved " + "lorem ipsum " * 20}
               for i in range(n)]
    (vault / "core" / "CHANGELOG.json").write_text(json.dumps(entries, indent=2))
    return vault


def _wait_built(index_file, n=6000, seconds=90):
    """Wait until the background build has committed its ``n`` documents and ended: its child no longer holds the
    build log's lock (a child still writing its last line was taken for a build running by the next prompt's hook,
    which then said nothing, on a machine loaded by the suite's other workers)."""
    import fcntl

    deadline = time.time() + seconds
    while time.time() < deadline:
        if index_file.exists():
            with db.connect(index_file, readonly=True) as reader:
                built = reader.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == n
            if built:
                try:
                    fd = os.open(index_file.with_name(index_file.name + ".build.log"), os.O_RDONLY)
                except FileNotFoundError:
                    return True
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    return True
                except BlockingIOError:
                    pass  # (the child is still finishing)
                finally:
                    os.close(fd)
        time.sleep(0.05)  # (a count through a read-only connection: the build is seen within 50 ms, not 500)
    return False


def test_the_background_build_never_runs_a_dreamdb_module_of_the_project(tmp_path):
    """QA round 60 H1: started from the project's folder, `python -m dreamdb sync` imported a dreamdb.py there."""
    project = tmp_path / "evil"
    vault = _large_vault(project)
    marker = tmp_path / "PWNED"
    (project / "dreamdb.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (project / "dreamdb").mkdir()  # and a package of that name
    (project / "dreamdb" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    log = tmp_path / "h.log"
    script = os.path.join(os.path.dirname(sys.executable), "dreamdb")  # the console script, as hook install writes it
    p = subprocess.run([script, "hook", "user-prompt-submit"], capture_output=True, cwd=project, timeout=120,
                       input=payload("where did the kestrel42 service move to", project).encode(),
                       env={**os.environ, "DREAMDB_HOOK_LOG": str(log)})
    assert p.returncode == 0 and p.stdout == b"" and "in the background" in log.read_text(), (p.stderr, log.read_text())
    assert _wait_built(vault / ".dreamdb" / "index.db"), (vault / ".dreamdb" / "index.db.build.log").read_text()
    assert not marker.exists()


def test_a_failed_background_build_is_logged_once_and_not_restarted_on_every_prompt(tmp_path):
    """QA round 60 M1: a background build that failed (a full disk) was never mentioned, and every prompt started
    another whole build. Its output is logged once; prompts wait BUILD_RETRY_SECONDS before trying again."""
    from dreamdb.hook import BUILD_RETRY_SECONDS

    vault = _large_vault(tmp_path / "proj")
    import dreamdb

    with dreamdb.open(vault, auto_sync=False) as fresh:  # an index with nothing in it yet, as a failed build leaves
        index_file = fresh.index_path
        fresh.conn.execute("SELECT 1")
    build_log = index_file.with_name("index.db.build.log")
    failure = "2026-12-03T20:00:00+00:00 dreamdb sync --vault x\nError: Index error: database or disk is full\n"
    build_log.write_text(failure)
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log)}
    prompt = payload("where did the kestrel42 service move to", vault.parent)
    for _ in range(2):
        p = hook(prompt, env)
        assert p.returncode == 0 and p.stdout == b""
    said = log.read_text()
    assert said.count("the background index build failed: Error: Index error: database or disk is full") == 1, said
    assert "in the background" not in said  # not started again
    assert build_log.read_text() == failure + "# reported by the prompt hook\n"
    old = time.time() - BUILD_RETRY_SECONDS - 5
    os.utime(build_log, (old, old))
    p = hook(prompt, env)
    assert p.returncode == 0 and "started `dreamdb sync` in the background" in log.read_text()
    assert _wait_built(index_file)


def test_the_installed_hook_command_never_runs_python_m_from_the_project_folder_unguarded(tmp_path, monkeypatch):
    """QA round 60 H1 (older case): the last fallback of `hook install` wrote `<python> -m dreamdb hook …`, which
    Claude Code runs in the project's folder, importing a dreamdb.py there. The environment's console script comes
    first; the `-m` fallback gets -P (Python 3.11+)."""
    import shutil as sh

    from dreamdb.cli.hook import _hook_command

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setattr(sh, "which", lambda name: None)
    monkeypatch.setattr(sys, "argv", ["pytest"])
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python3"))
    fallback = _hook_command("dreamdb hook user-prompt-submit")
    assert fallback == f"{bin_dir / 'python3'}{' -P' if sys.version_info >= (3, 11) else ''} -m dreamdb hook user-prompt-submit"
    script = bin_dir / "dreamdb"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert _hook_command("dreamdb hook user-prompt-submit") == f"{script} hook user-prompt-submit"



@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_a_build_log_that_is_a_link_is_never_written_through(tmp_path, link):
    """QA round 61 H1: a repository can ship .dreamdb/index.db.build.log as a link to a file of the user's; a prompt
    truncated it and wrote sync's output (note names the repository chooses) into it. Such a log is not used: the
    index is built by the prompt itself, and the linked file is untouched. A hard link too (QA round 114-C F1)."""
    vault = _large_vault(tmp_path / "proj", n=4000)
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH=$PATH\n")
    (vault / ".dreamdb").mkdir()
    if link == "hard":
        os.link(victim, vault / ".dreamdb" / "index.db.build.log")
    else:
        (vault / ".dreamdb" / "index.db.build.log").symlink_to(victim)
    log = tmp_path / "h.log"
    p = hook(payload("where did the kestrel42 service move to", vault.parent), {"DREAMDB_HOOK_LOG": str(log)})
    assert p.returncode == 0 and p.stdout.decode().startswith(HEADER), (p.stdout, log.read_text() if log.exists() else "")
    assert victim.read_text() == "export PATH=$PATH\n"


def test_a_killed_or_finished_build_never_holds_the_next_one_back(tmp_path):
    """QA round 61 M2: a build killed midway (its log only the first line) was taken for one still starting, and
    prompts answered nothing for 5 minutes without a word; a finished build's log, found when the index was due
    again, was reported as a failure. Running is told by the lock the child holds; only an Error: line backs off."""
    vault = _large_vault(tmp_path / "proj", n=6000)
    import dreamdb

    with dreamdb.open(vault, auto_sync=False) as fresh:
        index_file = fresh.index_path
        fresh.conn.execute("SELECT 1")
    build_log = index_file.with_name("index.db.build.log")
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log)}
    prompt = payload("where did the kestrel42 service move to", vault.parent)
    build_log.write_text("2026-12-03T20:00:00+00:00 dreamdb sync --vault x\n")  # killed: no lock, no output
    p = hook(prompt, env)
    said = log.read_text()
    assert p.returncode == 0 and "ended before it finished (stopped or killed" in said, said
    assert "started `dreamdb sync` in the background" in said
    assert _wait_built(index_file)
    index_file.unlink()  # due again, within minutes of a build that succeeded
    for extra in ("-wal", "-shm"):
        Path(f"{index_file}{extra}").unlink(missing_ok=True)
    log.write_text("")
    p = hook(prompt, env)
    said = log.read_text()
    assert "failed" not in said and "started `dreamdb sync` in the background" in said, said
    assert _wait_built(index_file)
    # a build that rebuilt an index of another version ends with "N files indexed again" (QA round 99-B F10's
    # wording): finished, not "ended before it finished"
    for extra in ("", "-wal", "-shm"):
        Path(f"{index_file}{extra}").unlink(missing_ok=True)
    build_log.write_text("2026-12-03T20:00:00+00:00 dreamdb sync --vault x\n"
                         "6,000 files indexed again, 0 removed · 6,000 documents · 900.0 ms (rebuilt)\n")
    log.write_text("")
    p = hook(prompt, env)
    said = log.read_text()
    assert "ended before it finished" not in said and "started `dreamdb sync` in the background" in said, said
    assert _wait_built(index_file)


def test_the_hook_waits_its_lock_wait_for_another_processs_first_build(project, tmp_path, monkeypatch):
    """QA round 69 E-M2: the README says the hook keeps to its 1.5 s for another process's first index build; it
    gave up at once (busy_timeout 0), so a prompt during a build of 0.4 s got no memories."""
    import time

    import dreamdb
    from dreamdb import hook as H

    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    vault = project / "_dream_context"
    index = dreamdb.open(vault, auto_sync=False, engine="sql")
    # opened before the other writer starts, as a hook's index is when a build is under way; as before a first
    # build, its whole index is due
    index.conn.execute("DELETE FROM meta WHERE key = 'analyzer_version'")
    from dreamdb.store.sync import whole_index_due

    assert whole_index_due(index.conn)
    # another process holds the write lock 0.5 s, as a short first build does (a process: POSIX locks do not
    # part two connections of one process)
    holder = subprocess.Popen([sys.executable, "-c", "import sqlite3, sys, time\n"
                               f"c = sqlite3.connect({str(index.index_path)!r}, isolation_level=None)\n"
                               "c.execute('BEGIN IMMEDIATE'); print('held', flush=True); time.sleep(0.5)\n"
                               "c.execute('ROLLBACK')"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    t0 = time.monotonic()
    elsewhere = H._built_elsewhere(index, vault)  # (the old code: True at once, "being built by another process")
    waited = time.monotonic() - t0
    holder.wait(timeout=30)
    index.close()
    assert elsewhere is False and 0.3 < waited < H.LOCK_WAIT_MS / 1000  # waited for it, then builds inline itself
    block = H.run(payload("how is sleep debt computed before consolidation", project))
    assert block.startswith(H.HEADER) and "feature/sleep-consolidation" in block


def test_a_payload_whose_prompt_or_cwd_is_not_text_is_logged_as_such(project, tmp_path, monkeypatch):
    """QA round 69 D-L4: a prompt of 12345678901 or ["why jwt"] was logged as "missing or shorter than 8
    characters", and a cwd of 5 was ignored without a word."""
    from dreamdb import hook as H

    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    for prompt, kind in ((12345678901, "int"), (["why jwt tokens"], "list")):
        assert H.run(json.dumps({"prompt": prompt, "cwd": str(project)})) == ""
        assert f"payload's prompt is not text (a {kind}); nothing printed" in log.read_text()
    monkeypatch.chdir(project)
    assert H.run(json.dumps({"prompt": "how is sleep debt computed", "cwd": 5})).startswith(H.HEADER)
    assert "payload's cwd is not text (a int); the vault is looked for from the hook's own working folder" in log.read_text()


def test_bare_numbers_alone_never_make_the_hook_print(project, tmp_path, monkeypatch):
    """QA round 70 C-M1: "bump the timeout from 24 to 40 seconds" injected the sleep note for its table of
    thresholds (24, 39, 40), at raw score 3.9: numbers rank hits, but matched alone they are no memory."""
    from dreamdb import hook as H
    import dreamdb

    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    prompt = "bump the timeout from 24 to 40 seconds"
    hits = dreamdb.open(project).recall(prompt, top=3, explain=True)
    numbered = [h for h in hits if h.score >= H.INJECT_THRESHOLD]
    assert numbered and all(H.word_score(h) < H.INJECT_THRESHOLD for h in hits)  # the gate would have passed on numbers
    assert H.run(payload(prompt, project)) == ""
    # a prompt whose words match keeps its numbers' weight: they still rank
    block = H.run(payload("why is the agent drowsy at 24 sleep debt", project))
    assert block.startswith(H.HEADER) and "feature/sleep-consolidation" in block.splitlines()[1]


def test_a_file_extension_alone_never_makes_the_hook_print(tmp_path, monkeypatch):
    """QA round 132-C F2: "rename variable foo to bar in utils.py" injected a changelog entry on video watching,
    matched by ``py`` alone (raw score 10.1); coding prompts are full of file names."""
    from dreamdb import hook as H
    import dreamdb

    vault = filled_vault(tmp_path, {"knowledge/frames.md": "---\ntitle: Frame sampling\n---\n"
                                                           "Sampling moved to build_frame_index.py and probe.py.\n"})
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    prompt = "rename variable foo to bar in utils.py"
    hits = dreamdb.open(vault).recall(prompt, top=3, explain=True)
    assert hits and hits[0].score >= H.INJECT_THRESHOLD  # the gate would have passed on "py"
    assert H.file_extension_terms(prompt) >= {"py"} and H.run(payload(prompt, vault.parent)) == ""
    assert "(first knowledge/frames, raw BM25 score without bare numbers and file extensions 0); nothing printed" \
        in (tmp_path / "h.log").read_text()
    for prompt in ("which py scripts sample frames", "the py files, e.g. utils.py", "how does frame sampling work"):
        block = H.run(payload(prompt, vault.parent))  # (the extension as a word of its own counts)
        assert block.startswith(H.HEADER) and "knowledge/frames" in block.splitlines()[1], (prompt, block)
    assert H.file_extension_terms("see github.com and README.MD, archive.tar.gz") >= {"com", "md", "tar", "gz"}
    assert H.file_extension_terms("done.Next we ship v1.2 (e.g. now)") == frozenset()
    # (QA round 133 F3: another form of the word in the prompt keeps it, and a longer word after a dot is no extension)
    for prompt in ("where are the logs? see a.log", "session.commit hangs", "open poetry.lock while locking"):
        assert H.file_extension_terms(prompt) == frozenset(), prompt


def test_a_hit_matched_by_a_number_alone_is_not_shown_beside_one_past_the_gate(project, tmp_path, monkeypatch,
                                                                               kenet_lexicon):
    """QA round 81-B F1: beside a hit past the gate, a note matched by a number alone was shown: its score less the
    numbers' (each rounded to 6 decimals) left a residue above 0. And a note matched through translations and a
    number read "(score 1.752)" instead of "through a translation"."""
    from dreamdb import hook as H

    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    monkeypatch.setenv("DREAMDB_LEXICON", str(kenet_lexicon))
    for prompt in ("sleep debt 2026", "sleep 24 2026 debt"):
        block = H.run(payload(prompt, project))
        assert "memory/technical-decisions" not in block, block
        line = next(ln for ln in block.splitlines() if "knowledge/uyku-borcu" in ln)
        assert line.endswith(", through a translation or another form of a word)"), line


def test_a_long_prompt_is_recalled_by_its_head_and_its_tail(project, tmp_path, monkeypatch):
    """QA round 70 C-M2: only the first 4,000 characters were read, so a question after a pasted 5 KB log was lost."""
    from dreamdb import hook as H

    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    log = "".join(f"INFO worker heartbeat ok pid=7 tick={i}\n" for i in range(200))
    assert len(log) > H.MAX_QUERY_CHARS
    question = "how is sleep debt computed before consolidation?"
    for prompt in (log + question, question + "\n" + log):
        text = H.query_text(prompt)
        assert len(text) <= H.MAX_QUERY_CHARS + 1 and question in text
        block = H.run(payload(prompt, project))
        assert block.startswith(H.HEADER) and "feature/sleep-consolidation" in block.splitlines()[1], block
    assert H.query_text(question) == question



def test_a_long_prompt_is_read_without_the_words_its_seams_cut(tmp_path, monkeypatch):
    """QA round 156-B F1: a prompt over 4,000 characters was read as its first and last 2,000 characters, cut at
    fixed positions, so a word split at either seam was a fragment that recalled its own notes: ``the procurator``
    across the tail's seam read ``curator`` and injected the real vault's feature/brain-curator
    (``misconfiguration``: ``configuration``). Each seam now drops the word it cuts: the run of letters, marks and
    digits on both sides of it; a half that is one such run is read as cut."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {"knowledge/brain-curator.md": "---\ntitle: Brain curator\n---\nThe curator skill"
                                    " refactors the brain.\n",
                                    "knowledge/config.md": "---\ntitle: Configuration\n---\nThe configuration"
                                    " of the worker.\n"})
    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    filler = "qxzv wqpz " * 300
    half = H.MAX_QUERY_CHARS // 2
    cases = ((filler[:2200] + " the pro" + ("curator " + filler)[:half], "curator"),  # (the tail's seam: pro|curator)
             (filler[:2200] + " mis" + ("configuration " + filler)[:half], "configuration"),  # (mis|configuration)
             (filler[:half - 8] + " curatorship " + filler, "curator"))  # (the head's seam: curator|ship)
    for prompt, fragment in cases:
        assert len(prompt) > H.MAX_QUERY_CHARS and fragment in prompt[:half] + prompt[-half:]
        text = H.query_text(prompt)
        assert fragment not in text and len(text) <= H.MAX_QUERY_CHARS + 1, fragment
        assert set(text.split()) <= set(prompt.split())  # (whole words of the prompt only)
        assert H.run(payload(prompt, vault.parent)) == "", log.read_text()
    # the words by the seams are read whole: a question after a long paste is
    block = H.run(payload(filler * 2 + "how does the curator skill work?", vault.parent))
    assert "knowledge/brain-curator" in block, log.read_text()
    assert H.query_text(filler[:half] + "x" + filler)[:half] == filler[:half]  # (a seam at white space: as cut)

    # a text without white space: back to a character that is no letter, mark or digit
    slashed = "a/" * 999 + "prefix" + "procurator" + "/b" * 999
    text = H.query_text(slashed)
    assert "curator" not in text and "prefix" not in text and text.startswith("a/a/") and text.endswith("/b/b")
    assert H.query_text("é" * 5000) == "é" * 2000 + "\n" + "é" * 2000  # (a run of letters: as cut)
    accented = "a/" * 999 + "le\u0301tude" + "/b" * 999  # (a cut between a letter and its accent cuts a word)
    assert H.query_text(accented) == "a/" * 999 + "\n" + "/b" * 999
    # text written without spaces loses the letters since its last punctuation, not the half up to its last line
    # break (QA round 156-G F1: a Japanese prompt's head kept 19 of its 2,000 characters, and its words were lost)
    sentence = "データベースの索引は作られ、検索は順位付けされる。"
    japanese = "質問です。\n" + sentence * 20 + "「zebrafish」と「telemetry」のログについて。" + sentence * 200
    text = H.query_text(japanese)
    head, tail = text.split("\n", 2)[0] + "\n" + text.split("\n", 2)[1], text.split("\n", 2)[2]
    assert "zebrafish" in head and "telemetry" in head and len(head) > half - len(sentence), len(head)
    assert len(tail) > half - len(sentence) and japanese.endswith(tail), len(tail)


def test_a_long_prompt_is_an_acknowledgement_only_as_the_hook_reads_it(project, tmp_path, monkeypatch):
    """QA round 144-B F3: the acknowledgement check read the first 4,000 characters alone, so thanks before a long
    paste hid a question after it (nothing printed, "prompt is only an acknowledgement"); a file name at the end of a
    long prompt lost its last letter (``utils.py`` read as ``utils.p``). Each reads the prompt as recall does: its
    first and last 2,000 characters."""
    from dreamdb import hook as H

    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    paste = ("🎉" * 50 + "\n") * 90
    for question in ("how is sleep debt computed before consolidation?", "sleep debt computed before consolidation"):
        prompt = f"great, thanks!\n{paste}\n{question}"
        assert len(prompt) > H.MAX_QUERY_CHARS and not H._is_acknowledgement(prompt)
        block = H.run(payload(prompt, project))
        assert block.startswith(H.HEADER) and "feature/sleep-consolidation" in block.splitlines()[1], log.read_text()
    # (a question mark in the part left out is not read: thanks at both ends are thanks)
    assert H._is_acknowledgement(f"great, thanks!\n{paste}what?\n{paste}thanks a lot")
    assert {"py"} <= H.file_extension_terms(H.query_text(f"{paste}rename foo in utils.py"))


@pytest.mark.parametrize("prompt", ["please, thanks", "thanks!!!!!!", "thank you, please", "lütfen, teşekkürler"])
def test_a_prompt_of_thanks_alone_is_said_to_be_an_acknowledgement(project, tmp_path, monkeypatch, prompt):
    """QA round 144-B F5: a prompt of politeness words alone (part of FUNCTION_WORDS) was said to hold "only common
    words (the, could, us…)", where "thanks a lot" was "only an acknowledgement": the message is chosen from the
    words the check read, politeness words kept."""
    from dreamdb import hook as H

    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    assert H.run(payload(prompt, project)) == ""
    assert "prompt is only an acknowledgement or a greeting (ok, thanks, hello…); nothing printed" in log.read_text(), \
        log.read_text()


def test_the_block_names_the_dreamdb_the_agent_can_run(project, tmp_path):
    """QA round 70 C-L9: ``hook install`` writes dreamdb's absolute path when it is only in a virtualenv, but the
    block told the agent to run ``dreamdb recall``, which its shell (no virtualenv) does not find."""
    exe = Path(sys.executable).parent / "dreamdb"
    if not exe.exists():
        pytest.skip(f"no dreamdb script beside {sys.executable} (not an installed environment)")
    data = payload("how is sleep debt computed before consolidation", project).encode()
    env = {**os.environ, "DREAMDB_HOOK_LOG": str(tmp_path / "h.log")}
    for path, shown in (("/usr/bin:/bin", str(exe)), (f"{exe.parent}:/usr/bin:/bin", "dreamdb")):
        p = subprocess.run([str(exe), "hook", "user-prompt-submit"], input=data, capture_output=True,
                           env={**env, "PATH": path}, timeout=120)
        assert p.stdout.decode().splitlines()[-1] == f'More: {shown} recall --explain "<query>"', path
    # run by a relative path (hook install --command ".venv/bin/dreamdb …"), its absolute path (QA round 78 F6)
    relative = os.path.relpath(exe, exe.parent.parent)
    p = subprocess.run([relative, "hook", "user-prompt-submit"], input=data, capture_output=True, cwd=exe.parent.parent,
                       env={**env, "PATH": "/usr/bin:/bin"}, timeout=120)
    assert p.stdout.decode().splitlines()[-1] == f'More: {exe} recall --explain "<query>"'


def test_the_hook_log_is_moved_aside_past_its_size_limit(tmp_path, monkeypatch):
    """QA round 70 C-L11: with DREAMDB_HOOK_VERBOSE (a line a prompt) the log grew without end."""
    from dreamdb import hook as H

    log = tmp_path / "hook.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    monkeypatch.setattr(H, "LOG_MAX_BYTES", 2000)
    for i in range(40):
        H._log(f"line {i} " + "x" * 80)
        # (QA round 74 F10: the line that filled it went into the old log, which was moved: no log was left)
        assert log.read_text().splitlines()[-1].split()[2] == str(i)
    older = tmp_path / "hook.log.1"
    assert older.exists() and log.exists()
    assert os.path.getsize(older) <= 2000 + 200 and os.path.getsize(log) <= 2000
    lines = older.read_text().splitlines() + log.read_text().splitlines()
    assert [int(line.split()[2]) for line in lines][-1] == 39  # the newest last, in the new log
    assert all(H._LOG_LINE.match(line.encode()) for line in lines)


@pytest.mark.slow
def test_a_hit_holding_the_translation_of_a_prompt_word_is_shown(tmp_path, kenet_lexicon):
    """QA round 72 F7: "günlükler kaç gün tutuluyor" ranked the English note on log retention first (the Turkish
    notes hold ``günlük``, so *log* counts with it as one term in rankScore), but its raw score is 0, and the
    hook left it out: the agent got the backup note alone."""
    vault = tmp_path / "proj" / "_dream_context"
    write_doc(vault, "knowledge/logging.md", "---\ntitle: Log retention\n---\nApplication logs are kept for 30 days "
              "in Loki, then deleted. Each day of logs is one file.\n")
    write_doc(vault, "knowledge/yedek.md", "---\ntitle: Yedekleme stratejisi\n---\nYedekler her gece alınıyor ve 30 "
              "gün tutuluyor.\n")
    write_doc(vault, "knowledge/rapor.md", "---\ntitle: Rapor\n---\nGünlük rapor her sabah gönderilir.\n")
    write_doc(vault, "knowledge/rel.md", "---\ntitle: Release checklist\n---\nRun the tests, tag the release.\n")
    env = {"DREAMDB_HOOK_LOG": str(tmp_path / "h.log"), "DREAMDB_LEXICON": str(kenet_lexicon)}
    recalled = json.loads(subprocess.run(
        [sys.executable, "-m", "dreamdb", "recall", "--vault", str(vault), "--json", "-n", "3", "günlükler kaç gün "
         "tutuluyor"], capture_output=True, text=True, timeout=120, env={**os.environ, **env}).stdout)["hits"]
    assert recalled[0]["doc_id"] == "knowledge/logging" and recalled[0]["score"] == 0  # (the case)
    lines = hook(payload("günlükler kaç gün tutuluyor", vault.parent), env).stdout.decode().splitlines()
    assert lines[1] == "1. [knowledge/logging] Log retention (score 0, through a translation or another form of a word)", lines
    assert lines[3].startswith("2. [knowledge/yedek]")


def test_a_cut_title_never_splits_the_name_of_a_hidden_character(tmp_path):
    """QA round 73: a title cut at 90 characters could end inside ``<U+2066>`` (``<U+20…``), a name of nothing.
    The cut keeps a name whole or leaves it out; shorter text and text without names are cut as before."""
    from dreamdb.hook import _one_line

    for before in range(80, 92):  # the name starts before, across and after the cut
        title = "a" * before + "\u2066" + "b" * 20
        line = _one_line(title, 90)
        assert len(line) <= 90 and line.endswith("…")
        shown = line[:-1]
        assert "<U+2066>" in shown or "<" not in shown, (before, line)
        assert shown == ("a" * before + "<U+2066>" + "b" * 20)[:len(shown)]
    assert _one_line("a" * 85 + "\u2066b", 90) == "a" * 85 + "…"  # 94 characters once named: the name left out
    assert _one_line("a" * 81 + "\u2066b", 90) == "a" * 81 + "<U+2066>b"  # 90: whole
    assert _one_line("x" * 100, 90) == "x" * 89 + "…"
    assert _one_line("short \u2066 title", 90) == "short <U+2066> title"


def test_a_cut_line_splits_no_grapheme_cluster():
    """QA round 143-I F2: the block's line cut at its length by code points, half a flag (a lone regional indicator
    letter), the tail of a family emoji or a virama without its letter were shown. The cut keeps a cluster whole or
    leaves it out."""
    from dreamdb.hook import _one_line

    for whole in ("🇹🇷", "👨‍👩‍👧‍👦", "👍🏽", "क्ष", "e\u0301"):
        for before in range(150, 160):
            line = _one_line("a" * before + whole * 20, 160)
            assert line.endswith("…") and len(line) <= 160
            assert line[before:-1].replace(whole, "") == "", (ascii(whole), before, ascii(line[-8:]))


ENGLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"


def test_a_cut_never_splits_a_flags_tag_sequence_so_no_tag_character_reaches_the_agent(tmp_path):
    """QA round 139-C F2: a title or snippet cut inside the flag of England passed 🏴 and the tag characters g, b to
    the agent, invisible characters the block never shows but in a whole flag. The cut keeps the flag whole or
    leaves it out."""
    from dreamdb.hook import _one_line

    for before in range(80, 92):  # the flag starts before, across and after the cut
        line = _one_line("x" * before + ENGLAND + " y" * 20, 90)
        assert len(line) <= 90 and line.endswith("…")
        assert ENGLAND in line or not any(0xE0000 <= ord(c) <= 0xE007F or c == "\U0001f3f4" for c in line), \
            (before, ascii(line))
    assert _one_line("x" * 80 + ENGLAND + "y", 90) == "x" * 80 + ENGLAND + "y"  # 88 characters: whole
    assert _one_line("x" * 85 + ENGLAND + "y", 90) == "x" * 85 + "…"
    vault = filled_vault(tmp_path, {"knowledge/plonk.md": f"---\ntitle: Plonkwidget {'x' * 74}{ENGLAND}\n---\n"
                                    f"The plonkwidget is calibrated {'z' * 124}{ENGLAND} against the reference.\n"})
    out = hook(payload("how is the plonkwidget calibrated", vault.parent),
               {"DREAMDB_HOOK_LOG": str(tmp_path / "h.log")}).stdout.decode()
    assert out.startswith(HEADER) and "[knowledge/plonk] Plonkwidget" in out, out
    assert not any(0xE0000 <= ord(c) <= 0xE007F for c in out), ascii(out)


@pytest.mark.skipif(not db.CAN_LOAD_EXTENSIONS, reason="the SQLite driver cannot load sqlite-vec")
def test_a_fused_hook_shows_the_notes_holding_the_prompts_words_behind_dense_only_hits(tmp_path, monkeypatch):
    """QA round 74 F2: in hybrid mode the only notes holding "sprockets", two changelog entries (no vectors, by
    design), were fused 4th and 5th, behind three Turkish notes that hold no word of the prompt (their BM25 rank
    taken from the dense channel); the hook took the first three, left out their raw-0 hits and printed nothing.
    It now takes the first three hits it shows out of the fusion's whole list."""
    import dreamdb
    from dreamdb import hook as H
    from dreamdb.api import Index
    from tests.test_embed_store import QueryHashEmbedder

    vault = tmp_path / "proj" / "_dream_context"
    for slug, title, body in (("yedekleme", "Yedekleme", "Veritabanı yedekleri her gece alınır ve şifrelenir."),
                              ("onbellek", "Önbellek", "Kullanıcı ayarları Redis önbelleğinde beş dakika tutulur."),
                              ("gunluk", "Günlükler", "Uygulama günlükleri otuz gün saklanır, sonra silinir.")):
        write_doc(vault, f"knowledge/{slug}.md", f"---\ntitle: {title}\n---\n{body}\n")
    write_doc(vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-11-30", "type": "decision", "scope": "supply",
         "description": "Switched the sprocket supplier to Acme after the outage."},
        {"date": "2026-12-01", "type": "note", "scope": "supply", "description": "Sprocket inventory counted monthly."}]))
    emb = QueryHashEmbedder()
    with dreamdb.open(vault) as index:
        index.sync()
        index.embedder = lambda: emb
        fused = index.recall("who supplies sprockets", mode="hybrid", top=5)
        # (the case: raw-0 Turkish notes fused first; since QA round 153-B F1 two of them, the dense ranks within
        # BM25's list of two taking an imputed BM25 rank, the third after the changelog entries)
        assert [h.type for h in fused[:2]] == ["knowledge"] * 2 and all(h.score == 0 for h in fused[:2])
        assert {h.doc_id for h in fused[2:4]} == {"changelog/2026-11-30-supply-1", "changelog/2026-12-01-supply-1"}
    monkeypatch.setattr(Index, "embedder", lambda self: emb)
    monkeypatch.setenv("DREAMDB_RECALL_MODE", "hybrid")
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    block = H.run(payload("who supplies our sprockets now?", vault.parent))
    lines = block.splitlines()
    assert lines[0] == H.HEADER and lines[1].startswith("1. [changelog/"), block
    assert "[changelog/2026-11-30-supply-1]" in block and "[changelog/2026-12-01-supply-1]" in block
    assert "[knowledge/" not in block
    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    assert H.run(payload("the weather in lisbon", vault.parent)) == ""
    assert "no hit holds the prompt's words (first knowledge/" in (tmp_path / "h.log").read_text()


@pytest.mark.parametrize("prompt", ["great job, thanks a lot", "nice work!", "awesome, looks good to me",
                                    "teşekkürler, harika oldu", "eline sağlık", "harika iş çıkardın",
                                    "ellerine sağlık", "elinize sağlık", "emeğinize sağlık",  # (QA round 77 G7)
                                    # (QA round 78 F1, F2: more words; capitals and ASCII; no greedy phrase)
                                    "that works, thanks", "thanks, that fixed it", "awesome, ship it", "sağ olun",
                                    "çalıştı, teşekkürler", "süper, devam edelim", "ELİNE SAĞLIK", "eline saglik",
                                    "süper iş çıkardın", "iyi iş çıkardın, teşekkürler",
                                    # (QA round 79 F1, F2: the standard Turkish thanks; Turkish typed in ASCII)
                                    "Teşekkür ederim", "tşk ederim", "cok tesekkurler", "cok sagol",
                                    "super is cikardin"])
def test_praise_and_thanks_are_conversation_not_a_question(tmp_path, monkeypatch, prompt):
    """QA round 74 F8: the acknowledgement list held ``great`` and ``thanks`` but not ``job`` or ``lot``, so "great job,
    thanks a lot" was a query, and a note on the cron job was injected (raw score over 2); likewise Turkish courtesy
    phrases (``eline sağlık``: sağlık is health). A question with the same words still recalls."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {
        "knowledge/cron.md": "---\ntitle: Nightly cron job\n---\nThe nightly job runs at two; a lot of work happens then.\n",
        "knowledge/saglik.md": "---\ntitle: Sağlık kayıtları\n---\nSağlık verileri iş günü sonunda şifrelenir; harika bir"
                               " düzen oldu.\n"}, fillers=20)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    assert H._is_acknowledgement(prompt) and H.run(payload(prompt, vault.parent)) == ""
    assert H.run(payload("when does the nightly cron job run?", vault.parent)).startswith(H.HEADER)
    # the praise words alone are a question's words (QA round 76 F3: "how does the job work" was silenced)
    assert H.run(payload("how does the job work", vault.parent)).startswith(H.HEADER)
    assert H._is_acknowledgement("makes sense, thanks") and not H._is_acknowledgement("why did the job not work")
    for question in ("ship the release notes", "what was fixed in the sync", "iş ne oldu", "bu iş nasıl çalışıyor",
                     # (QA round 79 F3: a question, a negation, or how something went, without thanks)
                     "how it works?", "how this works", "what got fixed?", "who fixed it?", "when do we ship?",
                     "nasıl oldu?", "çalıştı mı?", "it's not fixed", "is it fixed now", "neden çalıştı"):
        assert not H._is_acknowledgement(question), question


@pytest.mark.parametrize("prompt", ["hello there", "merhaba!", "merhaba, nasılsın?", "good morning", "good evening",
                                    "selam, naber?", "iyi akşamlar", "good morning! let's get started", "Hi, how are you?",
                                    "hey, what's up?", "GÜNAYDIN", "gunaydin, baslayalim", "bye, thanks!", "see you later",
                                    "have a nice day", "iyi günler, kolay gelsin", "hoşça kal", "hello, how are you doing?",
                                    "Merhaba, nasılsınız? İyi çalışmalar"])
def test_greetings_and_farewells_are_conversation_not_a_question(tmp_path, monkeypatch, prompt):
    """QA round 150-F F2: the acknowledgements held thanks and praise but no greetings, so "hello there" injected the
    objective "Hello World PR", "merhaba!" a changelog entry saying merhaba, "good morning" a note on good sleep. The
    greetings' words and phrases are conversation, a greeting question ("nasılsın?", "how are you?") too when it ends
    its clause; a greeting's words that a question also uses count only inside a phrase ("morning standup notes",
    "good first issue" are queries), and a question beside a greeting is a question."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {
        "knowledge/hello.md": "---\ntitle: Hello World PR\n---\nSay hello to the world: a first good issue for"
                              " everyone.\n",
        "knowledge/standup.md": "---\ntitle: Morning standup\n---\nThe morning standup notes: good evening calls,"
                                " night shifts, take care of the cache, nice day rates.\n",
        "knowledge/selam.md": "---\ntitle: Merhaba ve selam\n---\nMerhaba, selam, günaydın, naber, nasılsın: iyi akşamlar"
                              " ve iyi günler dilekleri; kolay gelsin, hoşça kal, başlayalım.\n"}, fillers=20)
    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    assert H._is_acknowledgement(prompt) and H.run(payload(prompt, vault.parent)) == ""
    assert "prompt is only an acknowledgement or a greeting (ok, thanks, hello…); nothing printed" in log.read_text()
    # (the notes are there: a question with the same words recalls them)
    assert "[knowledge/hello]" in H.run(payload("hello world pr", vault.parent))
    for question in ("morning standup notes", "good first issue", "hello world", "take care of the cache",
                     "how are you handling retries?", "what is up with the build", "what's up with that?",
                     "deploy nasıl gidiyor?", "hi, how are you doing with the migration?", "merhaba, redis nerede?",
                     "good morning, where are the standup notes?", "nasılsın, çalıştı?", "?? thanks",
                     # (a question particle beside a greeting: a question, as the rules read it)
                     "günaydın, başlayalım mı?"):
        assert not H._is_acknowledgement(question), question
    assert H.run(payload("morning standup notes", vault.parent)).startswith(H.HEADER)
    assert H.run(payload("good morning, where are the standup notes?", vault.parent)).startswith(H.HEADER)


def test_a_greeting_that_opens_a_question_is_not_recalled(tmp_path, monkeypatch):
    """QA round 150-H F1: a greeting beside a question stayed in the recall text and pulled in wrong notes: "hello, how
    does sync work?" recalled the objective Hello World PR first, "merhaba, sync nasıl çalışıyor?" changelog entries
    saying merhaba, and "hi claude, how are you?" and "Günaydın Claude" notes on Claude. The greeting clauses that open
    a prompt (greetings, at most one addressee, up to clause punctuation or the end) are left out of the recall text,
    and a prompt made of them alone is conversation; a greeting followed by another word in its clause is a question's
    words ("hello world", "hi hook")."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {
        "knowledge/hello.md": "---\ntitle: Hello World PR\n---\nSay hello to the world: the first PR, merged.\n",
        "knowledge/sync.md": "---\ntitle: Brain repo sync\n---\nThe sync pushes the vault to the brain repo and pulls"
                             " it back; sync conflicts are merged by hand.\n",
        "knowledge/selam.md": "---\ntitle: Quick merhaba\n---\nMerhaba! Hi, hello, selam: the greeting the bot says.\n",
        "knowledge/claude.md": "---\ntitle: Claude settings\n---\nClaude reads its settings from the claude folder;"
                               " claude günaydın mesajı.\n",
        "knowledge/standup.md": "---\ntitle: Morning standup\n---\nThe morning standup notes, good morning calls.\n",
        "knowledge/hook.md": "---\ntitle: Prompt hook\n---\nThe hook recalls notes for each prompt; hi hook.\n"},
        fillers=20)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))

    for prompt in ("hello, how does sync work?", "Hello! How does sync work?", "merhaba, sync nasıl çalışıyor?",
                   "hey there, how does the sync work", "Merhaba Claude, sync nasıl çalışıyor?"):
        block = H.run(payload(prompt, vault.parent))
        assert block.startswith(H.HEADER) and "[knowledge/sync]" in block.splitlines()[1], (prompt, block)
        assert "[knowledge/hello]" not in block and "[knowledge/selam]" not in block, (prompt, block)
        assert "[knowledge/claude]" not in block, (prompt, block)
    assert H.without_greeting("hello, how does sync work?") == "how does sync work?"
    assert H.without_greeting("Hello! Good morning, why is the index stale?") == "why is the index stale?"
    for prompt in ("hi claude, how are you?", "Günaydın Claude", "GÜNAYDIN CLAUDE", "selam millet", "hello claude!"):
        assert H._is_acknowledgement(prompt) and H.run(payload(prompt, vault.parent)) == "", prompt
    # project words stay queries: a greeting's word followed by another word in its clause, a file's name
    for prompt, note in (("hello world", "hello"), ("hello world pr", "hello"), ("Hello World", "hello"),
                         ("good morning standup", "standup"), ("hi hook prompt", "hook"), ("hello.py is broken", "hello")):
        assert H.without_greeting(prompt) == prompt and not H._is_acknowledgement(prompt), prompt
        assert f"[knowledge/{note}]" in H.run(payload(prompt, vault.parent)), prompt
    assert H.without_greeting("hi hook") == "hi hook" and not H._is_acknowledgement("hi hook")  # (too short to recall)


def test_an_addressee_in_a_clause_of_its_own_after_a_greeting_is_the_greetings(tmp_path, monkeypatch):
    """QA round 151-A F1: an addressee was part of a greeting only in the greeting's clause ("Günaydın Claude"), so
    "Good morning, Claude!", "Hello, Claude", "Merhaba, Claude" and "hey there, team!" injected notes on Claude and
    on teams, "Good morning, Claude! How does the tray menu work?" recalled other notes than the question alone, and
    "Hi, Claude. How does sync work?" recalled ``claude`` too. A clause made only of addressees after a greeting
    clause is the greeting's; one with another word stays a query ("Hello, world")."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {
        "knowledge/hello.md": "---\ntitle: Hello World PR\n---\nSay hello to the world: the first PR, merged.\n",
        "knowledge/tray.md": "---\ntitle: Tray menu\n---\nThe tray menu lists the open vaults; click one to sync"
                             " it.\n",
        "knowledge/sync.md": "---\ntitle: Brain repo sync\n---\nThe sync pushes the vault to the brain repo and pulls"
                             " it back; sync conflicts are merged by hand.\n",
        "knowledge/claude.md": "---\ntitle: Claude settings\n---\nClaude reads its settings from the claude folder;"
                               " claude code, claude everywhere.\n",
        "knowledge/team.md": "---\ntitle: Team ready\n---\nMake the vault team ready: every team shares it.\n"},
        fillers=20)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    for prompt in ("Good morning, Claude!", "Hello, Claude", "Merhaba, Claude", "hey there, team!", "Hi, Claude, team!",
                   "hello, everyone!", "Selam, Claude Code."):
        assert H._is_acknowledgement(prompt) and H.run(payload(prompt, vault.parent)) == "", prompt
    assert H.without_greeting("Good morning, Claude! How does the tray menu work?") == "How does the tray menu work?"
    assert H.without_greeting("Hi, Claude. How does sync work?") == "How does sync work?"
    for prompt, alone in (("Good morning, Claude! How does the tray menu work?", "How does the tray menu work?"),
                          ("Hi, Claude. How does sync work?", "How does sync work?")):
        block = H.run(payload(prompt, vault.parent))
        assert block.startswith(H.HEADER) and block == H.run(payload(alone, vault.parent)), (prompt, block)
        assert "[knowledge/claude]" not in block, (prompt, block)
    # an addressee's clause not after a greeting, or with another word, stays a query
    assert H.without_greeting("Hello, world") == "world" and not H._is_acknowledgement("Hello, world")
    assert H.without_greeting("Claude, team") == "Claude, team" and not H._is_acknowledgement("Claude, team")
    assert H.without_greeting("hello, claude settings") == "claude settings"
    assert "[knowledge/claude]" in H.run(payload("hello, claude settings", vault.parent))


def test_a_question_after_a_greeting_made_of_an_addressee_word_is_no_address(tmp_path, monkeypatch):
    """QA round 151-H F2: since 151-A F1 a clause after a greeting whose words, stopwords (but for question words) and
    its ``?`` left out, were an addressee was the greeting's, so "Good morning. And the bot?" and "Hey Claude! Is the
    team here?" printed nothing, where "And the bot?" and "Is the team here?" alone inject notes. Such a clause is the
    greeting's only as an address: no ``?``, and no word but the addressee's and ADDRESS_WORDS ("my", "dear")."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {
        "knowledge/bot.md": "---\ntitle: Release bot\n---\nThe bot posts the release notes; the bot runs nightly.\n",
        "knowledge/team.md": "---\ntitle: Team roster\n---\nThe team is here: the platform team and the sync team.\n",
        "knowledge/claude.md": "---\ntitle: Claude settings\n---\nClaude reads its settings from the claude folder.\n"},
        fillers=20)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    for prompt, alone, note in (("Good morning. And the bot?", "And the bot?", "bot"),
                                ("Hey Claude! Is the team here?", "Is the team here?", "team"),
                                ("Hi! Where is the bot?", "Where is the bot?", "bot")):
        assert H.without_greeting(prompt) == alone and not H._is_acknowledgement(prompt), prompt
        block = H.run(payload(prompt, vault.parent))
        assert block.startswith(H.HEADER) and f"[knowledge/{note}]" in block, (prompt, block)
        assert block == H.run(payload(alone, vault.parent)), (prompt, block)
    assert H.without_greeting("Hello, bot?") == "bot?" and not H._is_acknowledgement("Hello, bot?")
    assert H.without_greeting("Hi! The team.") == "The team." and not H._is_acknowledgement("Hi! The team.")
    # an address stays the greeting's, its words of address too
    for prompt in ("Good morning, Claude!", "Hello, Claude", "Merhaba, Claude", "hey there, team!", "Hello, everyone!",
                   "Hi, Claude, team!", "Hello, my friend!", "Hi, dear bot.", "Hey, you guys!", "Selam, sevgili ekip"):
        assert H.without_greeting(prompt) == "" and H._is_acknowledgement(prompt), prompt
        assert H.run(payload(prompt, vault.parent)) == "", prompt
    assert H.without_greeting("Good morning, bot! Is the team here?") == "Is the team here?"


def test_words_of_address_inside_a_greeting_clause_or_alone_in_one_are_the_greetings(tmp_path, monkeypatch):
    """QA round 152-A F1: ADDRESS_WORDS were passed over only in a clause of their own after the greeting's, so a
    greeting with "dear" or "sevgili" in its own clause ("Hello dear Claude!", "Merhaba sevgili Claude", "Hey dear
    team") injected the Hello World PR, changelog entries saying merhaba, notes on teams, where "Hello, dear Claude"
    printed nothing; and a clause of address words alone ("Hi, you, Claude!", "Hello, my dear, Claude!") ended the
    greeting, so the addressee was recalled. Both are the greeting's; a question after them is still recalled."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {
        "knowledge/hello.md": "---\ntitle: Hello World PR\n---\nSay hello to the world: the first PR, merged.\n",
        "knowledge/selam.md": "---\ntitle: Quick merhaba\n---\nMerhaba! Selam, merhaba: the greeting the bot says.\n",
        "knowledge/claude.md": "---\ntitle: Claude settings\n---\nClaude reads its settings from the claude folder;"
                               " dear claude.\n",
        "knowledge/team.md": "---\ntitle: Team roster\n---\nThe team is here: the platform team, the sync team, ekip.\n",
        "knowledge/sync.md": "---\ntitle: Brain repo sync\n---\nThe sync pushes the vault to the brain repo and pulls"
                             " it back; sync conflicts are merged by hand.\n"}, fillers=20)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    for prompt in ("Hello dear Claude!", "Merhaba sevgili Claude", "Good morning my dear Claude!", "Selam sevgili ekip",
                   "Hey dear team", "Hi, you, Claude!", "Hello, my dear, Claude!", "Hello dear", "Hi dear, team.",
                   # (the comma forms, as before)
                   "Merhaba, sevgili Claude", "Hello, dear Claude", "Good morning, my dear Claude!"):
        assert H.without_greeting(prompt) == "" and H._is_acknowledgement(prompt), prompt
        assert H.run(payload(prompt, vault.parent)) == "", prompt
    for prompt, alone in (("Hello dear Claude, how does sync work?", "how does sync work?"),
                          ("Hi, you, Claude! How does sync work?", "How does sync work?"),
                          ("Merhaba sevgili ekip, sync nasıl çalışıyor?", "sync nasıl çalışıyor?")):
        assert H.without_greeting(prompt) == alone and not H._is_acknowledgement(prompt), prompt
        block = H.run(payload(prompt, vault.parent))
        assert block.startswith(H.HEADER) and "[knowledge/sync]" in block.splitlines()[1], (prompt, block)
        assert "[knowledge/claude]" not in block and "[knowledge/hello]" not in block, (prompt, block)
    # another word beside them is still a question's, and a question after the greeting is still recalled
    assert H.without_greeting("hello dear world") == "hello dear world" and not H._is_acknowledgement("hello dear world")
    assert "[knowledge/hello]" in H.run(payload("hello dear world", vault.parent))
    assert H.without_greeting("Hi, you?") == "you?"
    for prompt, alone in (("Good morning. And the bot?", "And the bot?"), ("Hey Claude! Is the team here?",
                                                                           "Is the team here?"),
                          ("Merhaba Claude, sync nasıl çalışıyor?", "sync nasıl çalışıyor?")):
        assert H.without_greeting(prompt) == alone and not H._is_acknowledgement(prompt), prompt


def test_emoticons_ellipses_and_remarks_end_a_greetings_clause_and_thanks_may_be_said_to_someone(tmp_path,
                                                                                                monkeypatch):
    """QA round 152-A F2: a clause ended at ``.`` or ``:`` only before a space or the end, so an emoticon or an
    ellipsis after a greeting and its addressee ended none: "Merhaba Claude :)" and "merhaba claude :D" injected
    changelog entries saying merhaba, "Hi, Claude :)", "Hello, Claude...", "Günaydın Claude...", "Hello, Claude
    (again)!" notes on Claude; "thanks xD", "ok :P" were no acknowledgements. Emoticons, ellipses and parenthetical
    remarks of words that say nothing end a clause; thanks said to an addressee ("Thanks, Claude :)", "teşekkürler
    hocam") is conversation. A question after them is recalled as it is alone."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {
        "knowledge/hello.md": "---\ntitle: Hello World PR\n---\nSay hello to the world: the first PR, merged.\n",
        "knowledge/selam.md": "---\ntitle: Quick merhaba\n---\nMerhaba! Selam, merhaba: the greeting the bot says.\n",
        "knowledge/claude.md": "---\ntitle: Claude settings\n---\nClaude reads its settings from the claude folder;"
                               " claude again, claude everywhere, hocam.\n",
        "knowledge/team.md": "---\ntitle: Team roster\n---\nThe team is here: the platform team and the sync team.\n",
        "knowledge/sync.md": "---\ntitle: Brain repo sync\n---\nThe sync pushes the vault to the brain repo and pulls"
                             " it back; sync conflicts are merged by hand.\n"}, fillers=20)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    for prompt in ("Merhaba Claude :)", "merhaba claude :D", "Hi, Claude :)", "Hello, Claude...", "Günaydın Claude...",
                   "Hello, Claude (again)!", "Hello, Claude…", "Merhaba Claude:)", "Hey team ;-)", "Hi Claude xD",
                   "Hello (again), Claude!", "Hi :)", "Merhaba..."):
        assert H.without_greeting(prompt).strip("!:;-)(.…D ") == "" and H._is_acknowledgement(prompt), prompt
        assert H.run(payload(prompt, vault.parent)) == "", prompt
    for prompt in ("Thanks, Claude :)", "Thanks, Claude", "teşekkürler hocam", "great job, team!", "Claude, thanks!",
                   "thanks xD", "ok :P", "thanks <3"):
        assert H._is_acknowledgement(prompt) and H.run(payload(prompt, vault.parent)) == "", prompt
    for prompt, alone in (("Hello, Claude (again)! How does sync work?", "How does sync work?"),
                          ("Hi Claude :) how does sync work?", "how does sync work?"),
                          ("Merhaba Claude... sync nasıl çalışıyor?", "sync nasıl çalışıyor?"),
                          ("Hey Claude :) Is the team here?", "Is the team here?")):
        assert H.without_greeting(prompt) == alone and not H._is_acknowledgement(prompt), prompt
        block = H.run(payload(prompt, vault.parent))
        assert block.startswith(H.HEADER) and block == H.run(payload(alone, vault.parent)), (prompt, block)
        assert "[knowledge/claude]" not in block and "[knowledge/selam]" not in block, (prompt, block)
    # a remark of other words, a path, a URL, an addressee or an outcome alone, and another word stay queries
    for prompt in ("hello (world)", "Hello, world :)", "Claude, team :)", "fixed, claude", "hello world...",
                   "hello (how does sync work?)"):
        assert not H._is_acknowledgement(prompt), prompt
    for text in ("hi ../sync", "hello http://sync", "hi:8080", "a=(b)", "C:Data", "hello (world)"):
        assert H._decoration(text) == text, text
    assert H._decoration("Hi :-) there (again)...") == "Hi !!! there !!!!!!!!!!"
    assert H.without_greeting("hello (world)") == "hello (world)" and H.without_greeting("Hello, world :)") == "world :)"
    assert "[knowledge/hello]" in H.run(payload("hello world...", vault.parent))
    assert "[knowledge/claude]" in H.run(payload("Claude again :)", vault.parent))


def test_a_long_id_is_shown_by_its_start_and_end_in_the_block(tmp_path, monkeypatch):
    """QA round 150-F F5: a changelog entry's id is made of its scope, and a scope listing 80 files gave a
    2,500-character id line (and superseded-by) in the block, whose titles and snippets are cut. The id shown is at
    most MAX_ID_CHARS: its first 60 characters, "…" and its last; the index keeps the whole id."""
    import dreamdb
    from dreamdb import hook as H

    files = ", ".join(f"src/lib/module{i}/handler{i}.ts" for i in range(80))
    vault = filled_vault(tmp_path, {"core/CHANGELOG.json": json.dumps([
        {"date": "2026-08-02", "type": "fix", "scope": files, "description": "Websocket gateway reconnect storm fixed"
         " again, backoff capped", "supersedes": "2026-08-01-" + "-".join(f"src-lib-module{i}-handler{i}-ts"
                                                                            for i in range(80)) + "-1"},
        {"date": "2026-08-01", "type": "fix", "scope": files, "description": "Fixed the websocket gateway reconnect"
         " storm"}])})
    with dreamdb.open(vault) as index:
        ids = [h.doc_id for h in index.recall("websocket gateway reconnect storm", top=2)]
    long_id = "changelog/2026-08-01-" + "-".join(f"src-lib-module{i}-handler{i}-ts" for i in range(80)) + "-1"
    assert len(long_id) == 2402 and long_id in ids  # (the index keeps the whole id)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    block = H.run(payload("websocket gateway reconnect storm", vault.parent))
    lines = block.splitlines()
    # (two ids of 100 characters, a title of 90, the score: the superseded entry's line)
    assert lines[0] == H.HEADER and 7 <= len(lines) <= 9 and max(map(len, lines)) <= 340, block
    shown = long_id[:60] + "…" + long_id[-39:]
    assert shown == "changelog/2026-08-01-src-lib-module0-handler0-ts-src-lib-mod…er78-ts-src-lib-module79-handler79-ts-1"
    successor = shown.replace("2026-08-01", "2026-08-02")
    assert lines[1].startswith(f"1. [{successor}] 2026-08-02 [fix] src/lib/module0/handler0.ts"), block
    assert lines[3].startswith(f"2. [{shown}] ") and lines[3].endswith(f") — superseded by {successor}"), block
    # a hidden character's name, a quoted id's \\uXXXX escape and a flag are kept whole or left out by the cut
    assert H._one_line_id("knowledge/" + "x" * 45 + "\U000e0048" + "y" * 80) == "knowledge/" + "x" * 45 + "…" + "y" * 39
    quoted = H._one_line_id("knowledge/" + "x" * 46 + "\u00a0" + "y" * 80)
    assert quoted == '"knowledge/' + "x" * 46 + '…' + "y" * 38 + '"', quoted
    assert H._one_line_id("knowledge/" + "x" * 49 + "🇹🇷" + "y" * 80) == "knowledge/" + "x" * 49 + "…" + "y" * 39
    assert H._one_line_id("changelog/2026-08-01-gateway-1") == "changelog/2026-08-01-gateway-1"
    assert len(H._one_line_id("k/" + "z" * 98)) == 100 and "…" not in H._one_line_id("k/" + "z" * 98)


def test_an_unknown_memory_hook_setting_keeps_the_hook_on_and_says_so(tmp_path, monkeypatch):
    """QA round 74 F10: DREAMDB_MEMORY_HOOK=maybe kept the hook on silently (other switches refuse an unknown value;
    the hook never refuses a prompt, so it writes the reason to its log)."""
    from dreamdb import hook as H

    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    for value, said in (("maybe", True), ("ON", False), ("1", False), (" yes ", False), ("AÇIK", False), ("nan", True)):
        monkeypatch.setenv("DREAMDB_MEMORY_HOOK", value)
        H.run(payload("how does the sprocket supply work", tmp_path))
        text = log.read_text() if log.exists() else ""
        assert ("is neither on nor off" in text) == said, value
        log.unlink(missing_ok=True)
    vault = filled_vault(tmp_path, {"knowledge/sprocket.md": "---\ntitle: Sprocket supply\n---\nSprocket supply comes"
                                                              " from Acme.\n"})
    monkeypatch.setenv("DREAMDB_MEMORY_HOOK", "on")
    assert H.run(payload("how does the sprocket supply work", vault.parent)).startswith(H.HEADER)
    # (QA round 76 F11: "disabled" kept it on; QA round 77 G6: Turkish "kapalı" (off), "never" and "0.0" did)
    for off in ("off", "Disabled", " none ", "N", "kapalı", "KAPALI", "Hayır", "devre dışı", "never", "0.0", "00",
                "0,0", "devre-dışı"):  # (QA round 79 F16)
        monkeypatch.setenv("DREAMDB_MEMORY_HOOK", off)
        assert H.run(payload("how does the sprocket supply work", vault.parent)) == "" and not log.exists()


def test_a_hook_turned_off_says_so_when_verbose(project, tmp_path):
    """QA round 146-D F4: with DREAMDB_HOOK_VERBOSE=1, a hook turned off by DREAMDB_MEMORY_HOOK logged no outcome,
    where the README says each prompt's outcome goes to the hook log; not verbose, it logs nothing still."""
    log = tmp_path / "h.log"
    for off in ("off", " Kapalı "):
        p = hook(payload("how is sleep debt computed", project),
                 {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_MEMORY_HOOK": off, "DREAMDB_HOOK_VERBOSE": "1"})
        assert p.returncode == 0 and p.stdout == b""
        assert log.read_text().splitlines()[-1].endswith(
            f" DREAMDB_MEMORY_HOOK={off.strip()!r} turns the hook off; nothing printed"), log.read_text()
    log.unlink()
    p = hook(payload("how is sleep debt computed", project), {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_MEMORY_HOOK": "0"})
    assert p.returncode == 0 and p.stdout == b"" and not log.exists()


def test_a_superseded_entry_follows_the_entry_that_replaced_it_in_the_block(tmp_path, monkeypatch):
    """QA round 74 F12: the replaced decision, a shorter entry, was the block's first hit, above the decision in force
    (marked "superseded by", but read first). When both are shown, the replaced one comes right after its successor;
    recall's own order is left as rankScore gives it."""
    import dreamdb
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {"core/CHANGELOG.json": json.dumps([
        {"date": "2026-11-02", "type": "decision", "scope": "cache", "description": "Use Memcached for the gizmo cache"
         " from now on, replacing Redis", "supersedes": "2026-11-01-cache-1"},
        {"date": "2026-11-01", "type": "decision", "scope": "cache", "description": "Use Redis for the gizmo cache"}])})
    with dreamdb.open(vault) as index:
        order = [h.doc_id for h in index.recall("what do we use for the gizmo cache", top=3)]
    assert order[:2] == ["changelog/2026-11-01-cache-1", "changelog/2026-11-02-cache-1"]  # (the case: replaced first)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    lines = H.run(payload("what do we use for the gizmo cache?", vault.parent)).splitlines()
    assert lines[1].startswith("1. [changelog/2026-11-02-cache-1]"), lines
    assert lines[3].startswith("2. [changelog/2026-11-01-cache-1]") and "superseded by changelog/2026-11-02-cache-1" in lines[3]
    # a chain, its newest ranked last (QA round 76 F2: the oldest stayed first): newest, then each one it replaced
    write_doc(vault, "core/CHANGELOG.json", json.dumps([
        {"date": "2026-11-03", "type": "decision", "scope": "frob", "description": "Frobnicator retry policy final",
         "supersedes": "2026-11-02-frob-1"},
        {"date": "2026-11-02", "type": "decision", "scope": "frob", "description": "Frobnicator retry policy: retry"
         " twice with a backoff", "supersedes": "2026-11-01|frob"},
        {"date": "2026-11-01", "type": "decision", "scope": "frob", "description": "Frobnicator retry policy: retries"
         " thrice"}]))
    lines = H.run(payload("what is the frobnicator retry policy", vault.parent)).splitlines()
    assert [line.split("]")[0] for line in lines[1:7:2]] == \
        ["1. [changelog/2026-11-03-frob-1", "2. [changelog/2026-11-02-frob-1", "3. [changelog/2026-11-01-frob-1"], lines


def test_a_damaged_index_rebuilt_by_a_prompt_is_written_to_the_hook_log(tmp_path, monkeypatch):
    """QA round 76 F8: a prompt that found the index damaged rebuilt it (seconds on a large vault) and the hook log
    had no word of it, nor of the embeddings that went with it."""
    import dreamdb
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {"knowledge/wombat.md": "---\ntitle: Wombat burrows\n---\nThe wombat burrow is deep.\n"})
    with dreamdb.open(vault) as index:
        index.sync()
        path = index.index_path
    path.write_bytes(b"garbage, not sqlite" * 100)
    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    assert H.run(payload("how deep is a wombat burrow", vault.parent)).startswith(H.HEADER)
    assert "rebuilt from the vault" in log.read_text()


def test_a_sync_a_full_disk_leaves_in_the_wal_file_is_written_to_the_hook_log(tmp_path, monkeypatch):
    """QA round 145-J F5: a prompt whose sync left the disk full, its -wal file not copied into the index (SQLite's
    checkpoint failed for lack of space), logged nothing; and the warning's hint ended "the index was left as it
    was", of a sync that was saved."""
    import dreamdb
    import dreamdb.api as api
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {"knowledge/wombat.md": "---\ntitle: Wombat burrows\n---\nThe wombat burrow is deep.\n"})
    with dreamdb.open(vault) as index:
        index.sync()
    write_doc(vault, "knowledge/okapi.md", "---\ntitle: Okapi stripes\n---\nThe okapi has striped legs.\n")

    def full(conn):
        raise db.OperationalError("database or disk is full")

    monkeypatch.setattr(api, "WAL_FOLD_BYTES", 0)
    monkeypatch.setattr(db, "checkpoint", full)
    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    assert "knowledge/okapi" in H.run(payload("what stripes does the okapi have", vault.parent))
    logged = [line for line in log.read_text().splitlines() if api.WAL_NOT_FOLDED in line]
    assert len(logged) == 1 and f"{vault}: {api.WAL_NOT_FOLDED} (" in logged[0], log.read_text()
    assert "Free space on the disk holding" in logged[0] and "the index was left as it was" not in logged[0]
    assert "meanwhile the index holds the sync, in its -wal file" in logged[0], logged[0]


def test_the_block_shows_a_hit_from_its_best_line(tmp_path, monkeypatch):
    """QA round 78 F9: the block's line is the snippet (line before, best line, line after) cut at 160 characters, so
    a long line before the best one was all the agent saw: the note on pgbouncer was shown by its preamble on CI."""
    from dreamdb import hook as H

    preamble = ("Unrelated preamble about the build pipeline, the CI runners, caching of node modules, artifact"
                " retention, nightly jobs and the release train calendar for the quarter.")
    vault = filled_vault(tmp_path, {"knowledge/pg.md": f"---\ntitle: Database notes\n---\n{preamble}\nWe chose"
                                    " PostgreSQL connection pooling with pgbouncer in transaction mode.\nAnother line.\n"},
                         fillers=41)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    lines = H.run(payload("how did we configure pgbouncer connection pooling?", vault.parent)).splitlines()
    assert lines[1].startswith("1. [knowledge/pg]"), lines
    assert lines[2].strip().startswith("We chose PostgreSQL connection pooling with pgbouncer"), lines
    assert "preamble" not in lines[2]


def test_a_lexicon_the_hook_cannot_use_is_written_to_its_log(tmp_path, monkeypatch):
    """QA round 78 F7: DREAMDB_LEXICON naming a file that is no lexicon changed the hook's hits (no translations)
    without a word in its log, while `dreamdb recall` says so in a note."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {"knowledge/sprocket.md": "---\ntitle: Sprocket supply\n---\nSprocket supply comes"
                                                              " from Acme.\n"})
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a lexicon\n")
    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    monkeypatch.setenv("DREAMDB_LEXICON", str(junk))
    assert H.run(payload("how does the sprocket supply work", vault.parent)).startswith(H.HEADER)
    assert "lexicon is not used" in log.read_text() and str(junk) in log.read_text()


def test_the_block_line_naming_the_identifier_whole_comes_first(tmp_path, monkeypatch):
    """QA round 79 F13: the hook picked its line by the identifier's parts, so a line before it holding the same words
    apart ("Claude Code session id") tied with the line of CLAUDE_CODE_SESSION_ID and, coming first, was shown."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {"knowledge/envread.md": "---\ntitle: Env reading\n---\nThe Claude Code session id"
                                    " is read once at start.\nWe read CLAUDE_CODE_SESSION_ID from the environment.\n"
                                    "Nothing else.\n"}, fillers=30)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    lines = H.run(payload("where is CLAUDE_CODE_SESSION_ID read", vault.parent)).splitlines()
    assert lines[1].startswith("1. [knowledge/envread]"), lines
    assert lines[2].strip().startswith("We read CLAUDE_CODE_SESSION_ID"), lines


@pytest.mark.parametrize("hyphen", ["-", "\u2010", "\u2011"])
def test_the_block_line_naming_a_numbered_name_with_its_hyphen_comes_first(tmp_path, monkeypatch, hyphen):
    """QA round 153-G F7: ``WS4`` is the term of ``WS-4`` too; the hook weighed its lines by their analysed words, in
    which ``WS-4`` is ``ws`` alone, so the line before it, holding the query's other word, was shown. (154-A F6: with
    the Unicode hyphens U+2010 and U+2011 too.)"""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {"knowledge/ws.md": "---\ntitle: Workstreams\n---\nThe dashboard plan came first.\n"
                                    f"The WS{hyphen}4 dashboard overhaul was additive.\nNothing else.\n"}, fillers=30)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "h.log"))
    lines = H.run(payload("what did WS4 change in the dashboard", vault.parent)).splitlines()
    assert lines[1].startswith("1. [knowledge/ws]"), lines
    assert lines[2].strip().startswith(f"The WS{hyphen}4 dashboard overhaul"), lines


def test_an_index_held_by_another_program_is_logged_as_a_lock_not_a_failure(tmp_path, monkeypatch):
    """QA round 79 F5: with a SQLite shell holding the index (BEGIN EXCLUSIVE) the hook logged "hook failed …
    DREAMDB_DEBUG=1 prints the traceback", as for a bug of its own."""
    from dreamdb import hook as H
    from dreamdb.store import connect as db

    vault = filled_vault(tmp_path, {"knowledge/sprocket.md": "---\ntitle: Sprocket supply\n---\nSprocket supply comes"
                                                              " from Acme.\n"})
    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    assert H.run(payload("how does the sprocket supply work", vault.parent)).startswith(H.HEADER)
    holder = db.connect(vault / ".dreamdb" / "index.db")
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert H.run(payload("how does the sprocket supply work", vault.parent)) == ""
    finally:
        holder.rollback()
        holder.close()
    last = log.read_text().splitlines()[-1]
    assert "locked by another process" in last and "hook failed" not in last, last


def test_an_id_with_spaces_at_its_end_is_shown_quoted_as_it_must_be_typed(tmp_path):
    """QA round 86-A L1: ``knowledge/trail .md`` (id ``knowledge/trail ``) was shown by the hook as
    ``[knowledge/trail]``, and ``update knowledge/trail`` answered "Did you mean: knowledge/trail"; a no-break space
    was shown as a plain one."""
    vault = filled_vault(tmp_path, {"knowledge/trail .md": "---\ntitle: Trail\n---\nThe quetzal trail notes.\n",
                                    "knowledge/nb\u00a0sp.md": "---\ntitle: NB\n---\nThe quetzal nest notes.\n"})
    out = hook(payload("quetzal trail and nest notes", vault.parent)).stdout.decode()
    assert '[\"knowledge/trail \"]' in out and '[\"knowledge/nb\\u00a0sp\"]' in out, out
    p = subprocess.run([sys.executable, "-m", "dreamdb", "update", "knowledge/trail", "--append", "x", "--vault",
                        str(vault)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 7 and 'Did you mean: "knowledge/trail "' in p.stderr, p.stderr
    p = subprocess.run([sys.executable, "-m", "dreamdb", "update", "knowledge/trail ", "--append", "x", "--vault",
                        str(vault)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and (vault / "knowledge" / "trail .md").read_text().rstrip().endswith("x"), p.stderr
    # recall and list show them so too, and the form shown is taken back (QA round 87 L4: `update
    # 'knowledge/nb\u00a0sp'` was "not a document slug")
    for args in (["list"], ["recall", "quetzal"]):
        out = subprocess.run([sys.executable, "-m", "dreamdb", *args, "--vault", str(vault)], capture_output=True,
                             text=True, timeout=120).stdout
        assert '"knowledge/trail "' in out and '"knowledge/nb\\u00a0sp"' in out, (args, out)
    p = subprocess.run([sys.executable, "-m", "dreamdb", "update", '"knowledge/nb\\u00a0sp"', "--append", "y",
                        "--vault", str(vault)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and (vault / "knowledge" / "nb\u00a0sp.md").read_text().rstrip().endswith("y"), p.stderr


def test_an_id_with_a_zero_width_space_is_shown_escaped_and_taken_back(tmp_path):
    """QA round 130-C F4: ``knowledge/data\u200bbase`` was shown with its zero-width space raw, so ``list`` showed
    ``knowledge/database`` to the eye and ``update knowledge/database`` answered "Did you mean: knowledge/data​base",
    which retyped failed again; a no-break space was shown escaped. Every invisible character is, as it is."""
    vault = filled_vault(tmp_path, {"knowledge/data\u200bbase.md": "---\ntitle: DB\n---\nThe quetzal base notes.\n",
                                    "knowledge/a\u2060b\u00adc.md": "---\ntitle: WJ\n---\nThe quetzal joiner notes.\n"})

    def dreamdb_cli(*args):
        return subprocess.run([sys.executable, "-m", "dreamdb", *args, "--vault", str(vault)], capture_output=True,
                              text=True, timeout=120)

    out = hook(payload("quetzal base and joiner notes", vault.parent)).stdout.decode()
    assert '[\"knowledge/data\\u200bbase\"]' in out and '[\"knowledge/a\\u2060b\\u00adc\"]' in out, out
    for args in (["list"], ["recall", "quetzal"]):
        out = dreamdb_cli(*args).stdout
        assert '"knowledge/data\\u200bbase"' in out and '"knowledge/a\\u2060b\\u00adc"' in out, (args, out)
        shown = [line for line in out.splitlines()
                 if ("knowledge/a" in line or "knowledge/data" in line) and "_dream_context" not in line]
        assert len(shown) == 2 and not any(c in line for c in "\u200b\u2060\u00ad" for line in shown), (args, out)
    p = dreamdb_cli("update", "knowledge/database", "--append", "x")
    assert p.returncode == 7 and 'Did you mean: "knowledge/data\\u200bbase"' in p.stderr, p.stderr
    for typed in ('"knowledge/data\\u200bbase"', "knowledge/data\\u200bbase"):
        p = dreamdb_cli("update", typed, "--append", "y")
        assert p.returncode == 0, p.stderr
    assert (vault / "knowledge" / "data\u200bbase.md").read_text().rstrip().endswith("y\n\ny")
    p = dreamdb_cli("update", '"knowledge/a\\u2060b\\u00adc"', "--append", "z")
    assert p.returncode == 0 and (vault / "knowledge" / "a\u2060b\u00adc.md").read_text().rstrip().endswith("z"), p.stderr


def test_an_id_holding_a_typed_backslash_u_is_taken_literally_and_shown_apart(tmp_path):
    """QA round 132-B F1: ``knowledge/data\\u200bbase`` (a backslash typed) was shown so, and ``delete`` of that text
    deleted ``knowledge/data`` + U+200B + ``base``; ``x\\u00a0`` + U+200B + ``y`` and U+00A0 + U+200B were shown as
    the same quoted id. A name without quotes is taken literally first; in the quoted form a backslash is
    ``\\u005c``, so every form shown names its own note and is taken back so (hook, list, recall, Did you mean)."""
    notes = {"knowledge/data\\u200bbase.md": "---\ntitle: Lit\n---\nThe quetzal literal notes.\n",
             "knowledge/data\u200bbase.md": "---\ntitle: Zw\n---\nThe quetzal zwsp notes.\n",
             "knowledge/x\\u00a0\u200by.md": "---\ntitle: A\n---\nThe quetzal alpha notes.\n",
             "knowledge/x\u00a0\u200by.md": "---\ntitle: B\n---\nThe quetzal beta notes.\n"}
    vault = filled_vault(tmp_path, notes)
    shown = {"knowledge/data\\u200bbase.md": "knowledge/data\\u200bbase",
             "knowledge/data\u200bbase.md": '"knowledge/data\\u200bbase"',
             "knowledge/x\\u00a0\u200by.md": '"knowledge/x\\u005cu00a0\\u200by"',
             "knowledge/x\u00a0\u200by.md": '"knowledge/x\\u00a0\\u200by"'}

    def dreamdb_cli(*args):
        return subprocess.run([sys.executable, "-m", "dreamdb", *args, "--vault", str(vault)], capture_output=True,
                              text=True, timeout=120)

    out = "".join(hook(payload(prompt, vault.parent)).stdout.decode()
                  for prompt in ("quetzal literal alpha beta notes", "quetzal zwsp notes"))  # (the hook shows 3)
    for args in (["list"], ["recall", "quetzal", "--top", "20"]):
        listed = dreamdb_cli(*args).stdout
        for form in shown.values():
            assert f"{form} " in listed or f"{form}\n" in listed, (args, form, listed)
    assert all(f"[{form}]" in out for form in shown.values()), out
    for i, (rel, form) in enumerate(shown.items()):
        p = dreamdb_cli("update", form, "--append", f"mark{i}")
        assert p.returncode == 0, (form, p.stderr)
        assert (vault / rel).read_text().rstrip().endswith(f"mark{i}"), (form, rel)
        assert sum(f"mark{i}" in (vault / r).read_text() for r in shown) == 1
    # a shell's double quotes drop the quotes: the escapes are read when no file is named so
    p = dreamdb_cli("update", shown["knowledge/x\\u00a0\u200by.md"][1:-1], "--append", "shell")
    assert p.returncode == 0 and (vault / "knowledge/x\\u00a0\u200by.md").read_text().rstrip().endswith("shell")
    p = dreamdb_cli("update", "knowledge/datax\\u200bbase", "--append", "x")
    assert p.returncode == 7 and 'Did you mean: knowledge/data\\u200bbase, "knowledge/data\\u200bbase"' in p.stderr, \
        p.stderr
    p = dreamdb_cli("delete", "knowledge/data\\u200bbase", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["doc_id"] == "knowledge/data\\u200bbase", p.stdout
    assert not (vault / "knowledge/data\\u200bbase.md").exists() and (vault / "knowledge/data\u200bbase.md").exists()
    # only the zero-width one left: its quoted form and its raw id (as --json gives it) both name it
    for typed in ('"knowledge/data\\u200bbase"', "knowledge/data\u200bbase", "knowledge/data\\u200bbase"):
        p = dreamdb_cli("update", typed, "--append", "again")
        assert p.returncode == 0, (typed, p.stderr)
    assert (vault / "knowledge/data\u200bbase.md").read_text().count("again") == 3


def test_the_machines_problems_are_logged_as_such_not_as_a_hook_failure(project, tmp_path):
    """QA round 86-A L3: an index that cannot be created was logged as "hook failed: IndexUnavailable: … <message>
    <hint> (at api.py:474 …); DREAMDB_DEBUG=1 prints the traceback", and a working folder deleted under the hook as
    "hook failed: FileNotFoundError": as if dreamdb had a bug."""
    log = tmp_path / "h.log"
    p = hook(payload("sleep debt consolidation", project),
             {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_INDEX": "/proc/no-such/index.db"})
    text = log.read_text()
    assert p.returncode == 0 and p.stdout == b"" and "Cannot create the index at /proc/no-such/index.db" in text, text
    assert "hook failed" not in text and "DREAMDB_DEBUG" not in text and text.rstrip().endswith("nothing printed")
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f"cd {shlex.quote(str(gone))} && rmdir {shlex.quote(str(gone))} && exec {shlex.quote(sys.executable)} " \
             "-m dreamdb hook user-prompt-submit"
    env = {k: v for k, v in os.environ.items() if k != "DREAMDB_VAULT"}
    p = subprocess.run(["sh", "-c", script], input=b'{"prompt": "sleep debt consolidation"}', capture_output=True,
                       env={**env, "DREAMDB_HOOK_LOG": str(log), "PYTHONPATH": str(ROOT)}, timeout=120)
    last = log.read_text().splitlines()[-1]
    assert p.returncode == 0 and p.stdout == b"" and "hook failed" not in last, last


def test_closed_class_words_are_no_evidence_for_the_gate(tmp_path):
    """QA round 100-B F1: a vault of technical notes holds ``us``, ``could`` or Turkish ``eder`` so rarely that one
    of them alone passed the gate, and "could you do it for us" injected a note. The hook reads a prompt without the
    closed-class words the stopword lists leave out (FUNCTION_WORDS); a prompt of nothing else is said to hold only
    common words, and a real question keeps its notes."""
    vault = filled_vault(tmp_path, {
        "knowledge/offsite.md": "---\ntitle: Offsite plan\n---\nThe team said it could host us in Izmir; whether it "
                                "would, eder bilmem.\n",
        "knowledge/kestrel.md": "---\ntitle: Kestrel service\n---\nThe kestrel service moved to the us-east region.\n",
        "knowledge/login.md": "---\ntitle: Login banner\n---\nThe CLI prints: Please run /login first. Lütfen "
                              "tekrar deneyin. Thanks for waiting.\n",
        "knowledge/parser.md": "---\ntitle: Parser notes\n---\nThe frontmatter parser warns once per file.\n"})
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}
    # the interjections of politeness too: "please fix it" injected a real-vault note for "please" ("Please run
    # /login", raw BM25 6.8); the request's own words stay
    for prompt in ("please fix it", "pls do it now, thanks", "lütfen bunu yap", "thank you"):
        p = hook(payload(prompt, vault.parent), env)
        assert p.returncode == 0 and p.stdout == b"", (prompt, p.stdout)
    p = hook(payload("please look at the parser warning", vault.parent), env)
    out = p.stdout.decode().splitlines()
    assert out and out[0] == HEADER and "knowledge/parser" in out[1] and "knowledge/login" not in p.stdout.decode()
    for prompt in ("could you do it for us", "would you, whether or so", "bize eder misin acaba"):
        log.write_text("")
        p = hook(payload(prompt, vault.parent), env)
        assert p.returncode == 0 and p.stdout == b"", (prompt, p.stdout)
        said = log.read_text()  # (a question word, misin, makes it a question: recalled, with no hit)
        assert "prompt holds only common words" in said or prompt.startswith("bize") and "no hit" in said, said
    p = hook(payload("could you tell us where the kestrel service moved", vault.parent), env)
    out = p.stdout.decode().splitlines()
    assert out and out[0] == HEADER and "knowledge/kestrel" in out[1], out
    from dreamdb.hook import without_function_words

    assert without_function_words("Could US one-shot us-east gore it").split() == ["US", "one-shot", "us-east", "it"]
    # words of a technical text that are also closed-class words are kept (QA round 101-A F2: "max file size" lost
    # its "size", Turkish "to you")
    for kept in ("max file size", "May release", "why is it returning None", "let vs const", "bile duct",
                 # (words of a path, a file or code name, a quoted string, a URL, and keywords: QA round 102-A F2)
                 "edit src/around/toward.py", "others.py", "the Another::Thing class", 'grep "whatever" in logs',
                 "https://example.com/docs/anything/around", "fix the try/except block", "use unless here",
                 "rebase onto main", "commits behind origin", "an Either value"):
        assert without_function_words(kept) == kept
    assert without_function_words("could you do it for us?").split() == ["you", "do", "it", "for", "?"]
    assert without_function_words("Please, run /login").split() == [",", "run", "/login"]


def test_a_prompt_typed_in_capitals_is_read_without_its_function_words_too(tmp_path):
    """QA round 146-D F2: a word in capitals was kept as an acronym (``US``), so a prompt typed in capitals kept every
    function word: "PLEASE FIX IT" injected a note for ``please`` and "COULD YOU DO IT FOR US" one for ``could`` and
    ``us``, where the same prompts in lower case printed nothing. A word in capitals is an acronym only in a prompt
    whose other words are not all in capitals."""
    from dreamdb.hook import without_function_words

    vault = filled_vault(tmp_path, {
        "knowledge/offsite.md": "---\ntitle: Offsite plan\n---\nThe team said it could host us in Izmir; whether it "
                                "would, eder bilmem.\n",
        "knowledge/login.md": "---\ntitle: Login banner\n---\nPlease run /login. Lütfen giriş yapın.\n"}, fillers=40)
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}
    for prompt in ("PLEASE FIX IT", "LÜTFEN DÜZELT", "COULD YOU CHECK IT FOR US", "Could You Check It For Us"):
        p = hook(payload(prompt, vault.parent), env)
        assert p.returncode == 0 and p.stdout == b"", (prompt, p.stdout, log.read_text())
    p = hook(payload("please run the login again", vault.parent), env)  # (the notes' own words still find them)
    out = p.stdout.decode().splitlines()
    assert out[:1] == [HEADER] and "knowledge/login" in out[1], (out, log.read_text())
    assert without_function_words("PLEASE FIX IT").split() == ["FIX", "IT"]
    assert without_function_words("CAN YOU HELP US").split() == ["CAN", "YOU", "HELP"]
    assert without_function_words("LÜTFEN DÜZELT").split() == ["DÜZELT"]
    # an acronym beside words in lower case, or beside no cased word at all, is kept
    assert without_function_words("can you deploy it to US regions").split() == ["can", "you", "deploy", "it", "to",
                                                                                 "US", "regions"]
    assert without_function_words("US 区域") == "US 区域"


def test_a_prompt_in_capitals_naming_a_command_or_file_in_lower_case_is_still_read_as_in_capitals(tmp_path):
    """QA round 147-A F1: a prompt was taken as typed in capitals only when every letter of it was a capital, so one
    word in lower case, a command (``npm``), a file name (``main.go``), a URL, kept each function word in capitals as
    an acronym: "CAN YOU HELP US WITH npm" injected a note for ``us``, where "can you help us with npm" printed
    nothing. Most of its words of prose in capitals make a prompt typed in capitals; a sentence naming acronyms
    keeps them, also when most of its words are acronyms but a stopword of it is in lower case (QA round 147-H F1:
    "DNS TTL for US CDN" dropped its ``US``)."""
    from dreamdb.hook import without_function_words

    vault = filled_vault(tmp_path, {"knowledge/offsite.md": "---\ntitle: Offsite plan\n---\nThey host us in Izmir.\n"},
                         fillers=40)
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}
    for prompt in ("CAN YOU HELP US WITH npm", "can you help us with npm", "PLEASE CHECK IT FOR US (see main.go)",
                   "COULD YOU OPEN https://example.com/docs FOR US"):
        p = hook(payload(prompt, vault.parent), env)
        assert p.returncode == 0 and p.stdout == b"", (prompt, p.stdout, log.read_text())
    assert without_function_words("CAN YOU HELP US WITH npm").split() == ["CAN", "YOU", "HELP", "WITH", "npm"]
    assert without_function_words("PLEASE CHECK IT FOR US (see main.go)").split() == ["CHECK", "IT", "FOR",
                                                                                       "(see", "main.go)"]
    assert without_function_words("FIX app.py FOR US").split() == ["FIX", "app.py", "FOR"]
    # a sentence naming acronyms keeps them, however many it names
    for kept in ("how do we use the AWS API for US", "is IT blocked for US users", "HELP US with npm",
                 "AWS IAM roles for US", "DNS TTL for US CDN", "IAM SSO for US EU"):
        assert without_function_words(kept) == kept, kept


def test_a_turkish_stopword_typed_without_turkish_letters_marks_a_sentence_naming_acronyms():
    """QA round 148-B F4: a Turkish stopword in lower case marked a sentence naming acronyms only as spelled with its
    Turkish letters: "US CDN için DNS TTL ayarı" kept its ``US``, "US CDN icin DNS TTL ayari" and "DNS TTL nasil US
    CDN", typed without them (as the hook reads Turkish elsewhere), were taken as typed in capitals and dropped it.
    A stopword in lower case is one in any spelling the hook reads it in."""
    from dreamdb.hook import _typed_in_capitals, without_function_words

    for kept in ("US CDN için DNS TTL ayarı", "US CDN icin DNS TTL ayari", "DNS TTL nasil US CDN",
                 "DNS TTL nasıl US CDN", "US CDN icın DNS", "AWS IAM cok US EU"):
        assert not _typed_in_capitals(kept) and without_function_words(kept) == kept, kept
    # typed in capitals, the stopword too (ICIN, İÇİN): its function words go, as before
    for shouted, words in (("CAN YOU HELP US ICIN", ["CAN", "YOU", "HELP", "ICIN"]),
                           ("US CDN İÇİN DNS", ["CDN", "İÇİN", "DNS"])):
        assert _typed_in_capitals(shouted) and without_function_words(shouted).split() == words, shouted


def test_a_function_word_in_lower_case_marks_a_sentence_naming_acronyms():
    """QA round 149-B F3: the capitals were judged on the prompt less its function words, so a function word in lower
    case that is no analyzer stopword (``göre``, ``could``, ``please``, ``bize``) did not mark a sentence naming
    acronyms, as ``gibi`` or ``for`` do: "US CDN DNS TTL göre", "DNS TTL could US CDN" and "please fix US CDN DNS"
    were taken as typed in capitals and dropped their ``US``. A function word in lower case is a stopword in lower
    case; one in capitals, as before, is not counted in the share (it may be the acronym, ``US``)."""
    from dreamdb.hook import _typed_in_capitals, without_function_words

    for prompt, read in (("US CDN DNS TTL göre", "US CDN DNS TTL  "), ("US CDN DNS TTL gore", "US CDN DNS TTL  "),
                         ("DNS TTL could US CDN", "DNS TTL   US CDN"), ("please fix US CDN DNS", "  fix US CDN DNS"),
                         ("bize US CDN DNS TTL", "  US CDN DNS TTL"), ("US CDN DNS TTL gibi", "US CDN DNS TTL gibi"),
                         ("DNS TTL for US CDN", "DNS TTL for US CDN")):
        assert not _typed_in_capitals(prompt) and without_function_words(prompt) == read, prompt
    # typed in capitals, the function words too: they go, and are not counted (US among them)
    for shouted, words in (("US CDN DNS TTL GÖRE", ["CDN", "DNS", "TTL"]),
                           ("PLEASE FIX US CDN DNS", ["FIX", "CDN", "DNS"]),
                           ("COULD YOU HELP US WITH npm", ["YOU", "HELP", "WITH", "npm"]),
                           ("Please FIX US DNS", ["FIX", "DNS"])):
        assert _typed_in_capitals(shouted) and without_function_words(shouted).split() == words, shouted


def test_a_cwd_that_is_no_usable_path_is_said_so_not_logged_as_a_failure(tmp_path):
    """QA round 100-B F4: a payload's cwd that is a symlink loop, or a name too long for the system, was logged as
    "hook failed: RuntimeError … DREAMDB_DEBUG=1 prints the traceback", the words of a bug."""
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    log = tmp_path / "h.log"
    for cwd, reason in ((loop, "(a symlink loop)"), (tmp_path / ("a" * 5000), "(File name too long)")):
        log.write_text("")
        p = hook(payload("how is sleep debt computed", cwd), {"DREAMDB_HOOK_LOG": str(log)})
        said = log.read_text()
        assert p.returncode == 0 and p.stdout == b"" and "is not a usable path " + reason in said, said
        assert "hook failed" not in said and "DREAMDB_DEBUG" not in said


def test_a_claude_project_dir_that_is_no_usable_path_is_named_not_the_cwd(tmp_path):
    """QA round 146-D F6: a CLAUDE_PROJECT_DIR too long for the system was logged as "hook: cwd '/tmp' is not a usable
    path (File name too long)", blaming a payload's cwd that was fine; with no cwd in the payload, as "hook failed:
    OSError … DREAMDB_DEBUG", a bug's words."""
    long = "/" + "a" * 5000
    log = tmp_path / "h.log"
    for text in (payload("how is sleep debt computed", tmp_path), json.dumps({"prompt": "how is sleep debt computed"})):
        log.write_text("")
        p = hook(text, {"DREAMDB_HOOK_LOG": str(log), "CLAUDE_PROJECT_DIR": long}, cwd=tmp_path)
        said = log.read_text()
        assert p.returncode == 0 and p.stdout == b"", said
        assert said.split(" ", 1)[1].startswith("hook: CLAUDE_PROJECT_DIR '/aaaa") and said.rstrip().endswith(
            "… is not a usable path (File name too long); nothing printed"), said
        assert "cwd" not in said and "hook failed" not in said, said


def test_an_index_deleted_during_a_prompt_is_said_so_not_no_hit(project, tmp_path, monkeypatch):
    """QA round 100-B F3: with the index deleted between the hook's sync and its recall, the recall reopened the
    path, found a new empty index and the log said "no hit". It says what happened."""
    from dreamdb import hook as H
    from dreamdb.api import Index

    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    assert H._recall_block("how is sleep debt computed", str(project)).startswith(HEADER)
    recall = Index.recall

    def deleted_first(self, *args, **kwargs):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.index_path}{suffix}").unlink(missing_ok=True)
        return recall(self, *args, **kwargs)

    monkeypatch.setattr(Index, "recall", deleted_first)
    log.write_text("")
    assert H._recall_block("how is sleep debt computed", str(project)) == ""
    said = log.read_text()
    assert "the index was deleted or replaced during this prompt; nothing printed" in said and "no hit" not in said, said


def test_a_damaged_index_another_process_rebuilds_is_waited_for_once_by_the_hook(project, tmp_path, monkeypatch):
    """QA round 152-C F2: the hook waited for the rebuild lock of a damaged index twice, its 1.5 s each (its own sync
    met the damage, then its recall): 3.5 s, its log saying it recalled from the index as it is. Now once: its log says
    another process is rebuilding the index, nothing printed."""
    import dreamdb
    from dreamdb import hook as H
    from dreamdb.errors import RebuildElsewhere
    from tests.conftest import damaged_and_rebuilt_elsewhere

    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    with dreamdb.open(project / "_dream_context") as ix:
        ix.sync()
        index_path = ix.index_path
    write_doc(project / "_dream_context", "knowledge/new-note.md", "---\ntitle: New note\n---\nnew words\n")  # (synced)
    with damaged_and_rebuilt_elsewhere(index_path):
        began = time.monotonic()
        with pytest.raises(RebuildElsewhere):  # (run() logs it: "…; nothing printed")
            H._recall_block("how is sleep debt computed", str(project))
        waited = time.monotonic() - began
    assert 1.4 < waited < 2.95, waited  # (one wait of H.LOCK_WAIT_MS: two were 3 s and more; the margin: a loaded machine)
    assert "as it is" not in (log.read_text() if log.exists() else ""), log.read_text()


def test_a_prompt_while_another_process_fills_the_index_it_rebuilt_after_damage_waits_for_it(tmp_path):
    """QA round 154-C F2: a prompt during another prompt's rebuild of a damaged index (a large vault) started a
    background sync of its own, logging that the index must be built: the rebuilding process had replaced the file by
    an empty index and let go of the rebuild lock, and its sync takes the write lock only after its walk of the vault.
    The rebuilding process now holds ``index.db.rebuild.lock`` until its sync has filled the new index, and the hook
    finding an index to build looks at that lock too: "the index is being built by another process", nothing started.
    The rebuilding process (a recall meeting the damage) is stopped where the window was, after the new file and
    before its sync's write lock."""
    import fcntl

    import dreamdb
    from tests.conftest import ROOT

    vault = _large_vault(tmp_path / "big")
    index_file = vault / ".dreamdb" / "index.db"
    with dreamdb.open(vault) as ix:
        ix.sync()
        ix.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = ix.conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'corpus_stats'").fetchone()[0]
        size = ix.conn.execute("PRAGMA page_size").fetchone()[0]
    with open(index_file, "r+b") as f:  # (met by every read: a recall's, in its damage guard)
        f.seek((page - 1) * size)
        f.write(b"\xff" * size)
    code = ("import sys\nimport dreamdb\nimport dreamdb.store.sync as S\nwalk = S.walk_sources\n"
            "def paused(*a, **k):\n    print('filling', flush=True)\n    sys.stdin.readline()\n    return walk(*a, **k)\n"
            "ix = dreamdb.open(sys.argv[1], auto_sync=False)\nS.walk_sources = paused\n"
            "hits = ix.recall('kestrel42')\n"
            "print('done', hits[0].doc_id if hits else None, any('rebuilt from the vault' in n for n in ix.take_notes()),"
            " flush=True)\n")
    rebuilder = subprocess.Popen([sys.executable, "-c", code, str(vault)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}
    prompt = payload("where did the kestrel42 service move to", vault.parent)
    rebuild_lock = os.open(f"{index_file}.rebuild.lock", os.O_RDONLY | os.O_CREAT, 0o600)
    try:
        assert rebuilder.stdout.readline().strip() == "filling"
        # the window: a new, empty index whose write lock is free, the rebuild lock held
        with db.connect(index_file) as other:
            assert other.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
        with pytest.raises(BlockingIOError):
            fcntl.flock(rebuild_lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        p = hook(prompt, env)
        assert p.returncode == 0 and p.stdout == b"", p.stdout
        said = log.read_text()
        assert "the index is being built by another process; nothing printed until it is done" in said, said
        assert "started `dreamdb sync`" not in said and not (index_file.parent / "index.db.build.log").exists(), said
        rebuilder.stdin.write("\n")
        rebuilder.stdin.flush()
        done, first, rebuilt = rebuilder.stdout.readline().split()
        assert done == "done" and first.startswith("changelog/") and rebuilt == "True", (first, rebuilt)
        assert rebuilder.wait(timeout=120) == 0
        fcntl.flock(rebuild_lock, fcntl.LOCK_SH | fcntl.LOCK_NB)  # (let go once the index is filled)
    finally:
        os.close(rebuild_lock)
        rebuilder.kill()
        rebuilder.wait()
    p = hook(prompt, env)  # the index it filled answers
    assert p.returncode == 0 and "kestrel42" in p.stdout.decode(), (p.stdout, log.read_text())


def test_the_hook_logs_a_rebuild_of_another_versions_index(project, tmp_path):
    """QA round 101-A F5: the hook (often an older install's) rebuilt an index a newer dreamdb had written without a
    word in its log, so the back and forth between two versions was silent on its side."""
    import sqlite3

    import dreamdb
    from dreamdb.store.sync import INDEX_FORMAT

    with dreamdb.open(project, auto_sync=False) as index:
        index.sync()
        path = index.index_path
    a, b, c = INDEX_FORMAT.split(".")
    newer = f"{a}.{int(b) + 1}.{c}"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'analyzer_version'", (newer,))
    log = tmp_path / "h.log"
    p = hook(payload("how is sleep debt computed", project), {"DREAMDB_HOOK_LOG": str(log)})
    assert p.returncode == 0 and p.stdout.decode().startswith(HEADER)
    said = log.read_text()
    # (this version synced it before: two taking turns, said so; QA round 132-E F6)
    assert f"indexed by a newer version of dreamdb (index format {newer}) since this one" in said, said


def test_two_versions_taking_turns_on_a_vault_are_said_so(project, tmp_path):
    """QA round 115-B F1: an older install (a prompt hook of another virtualenv) and this one re-indexed the vault in
    turn, each whole, 2-4 s a call; this version said only "built by another version". It records the formats that
    synced the index, and names the taking of turns when an older format comes back after its own."""
    import sqlite3

    import dreamdb
    from dreamdb.store.sync import INDEX_FORMAT, formats_written

    a, b, c = INDEX_FORMAT.split(".")
    older = f"{a}.{int(b) - 1}.{c}"
    with dreamdb.open(project, auto_sync=False) as index:
        index.sync()
        path = index.index_path
        assert formats_written(index.conn) == [INDEX_FORMAT]
    with sqlite3.connect(path) as conn:  # (an older version re-indexed it; it records no format of its own)
        conn.execute("UPDATE meta SET value = ? WHERE key = 'analyzer_version'", (older,))
    with dreamdb.open(project, auto_sync=False) as index:
        warnings = index.sync().warnings
        assert formats_written(index.conn) == [INDEX_FORMAT]
    said = [w for w in warnings if older in w]
    assert said and f"indexed by another version of dreamdb (index format {older}) since this one" in said[0]
    assert "use one version" in said[0], said
    with sqlite3.connect(path) as conn:  # an index no version of this one wrote before: a plain upgrade
        conn.execute("UPDATE meta SET value = ? WHERE key = 'analyzer_version'", (older,))
        conn.execute("DELETE FROM meta WHERE key = 'formats_written'")
    with dreamdb.open(project, auto_sync=False) as index:
        warnings = index.sync().warnings
    assert [w for w in warnings if f"built by another version of dreamdb (index format {older}, this one writes" in w]
    assert not [w for w in warnings if "use one version" in w]
    from dreamdb.hook import _why_built

    assert _why_built(None) == "built"
    assert _why_built((older, True)).startswith(f"indexed again in this version's format (another version of dreamdb, "
                                                f"index format {older}, indexed it since this one last did")
    assert "taking turns" not in _why_built((older, False))


def test_install_names_a_vault_found_above_the_project_and_a_missing_cwd_is_said(tmp_path):
    """QA round 102-B: ``hook install`` in a project without a vault of its own, below a folder that has one (another
    session's, a stray one), said nothing, and that vault's memories went into the project's prompts (F3); a prompt
    whose cwd is no folder (the README's relative "examples" run from elsewhere) was logged as "no vault in or above
    examples" (F2)."""
    above = tmp_path / "work"
    shutil.copytree(ROOT / "examples" / "_dream_context", above / "_dream_context",
                    ignore=shutil.ignore_patterns(".dreamdb"))
    proj = above / "proj"
    proj.mkdir()
    p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(proj)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and f"note: the hook reads the vault {above / '_dream_context'}, found above {proj}" \
        in p.stderr, p.stderr
    own = tmp_path / "own"
    shutil.copytree(ROOT / "examples", own, ignore=shutil.ignore_patterns(".dreamdb"))
    p = subprocess.run([sys.executable, "-m", "dreamdb", "hook", "install", "--project", str(own)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "found above" not in p.stderr, p.stderr
    log = tmp_path / "h.log"
    p = hook(payload("how is sleep debt computed", "no-such-folder"), {"DREAMDB_HOOK_LOG": str(log),
                                                                       "DREAMDB_HOOK_VERBOSE": "1"}, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == b"" and "cwd 'no-such-folder' is no folder" in log.read_text()


def test_a_cwd_out_of_the_project_finds_the_vault_of_claude_project_dir(tmp_path):
    """QA round 108-B F4: Claude Code gives the project folder in $CLAUDE_PROJECT_DIR, and a session's working folder
    may move out of it: the hook printed nothing ("no _dream_context vault in or above …"). The project folder is
    walked up from after the cwd, before $DREAMDB_VAULT. An absolute cwd that is no folder is logged without the
    words on relative paths (108-B F8)."""
    vault = filled_vault(tmp_path, {"knowledge/kestrel.md": "---\nname: Kestrel service\n---\nThe kestrel service"
                                                            " moved to the north datacentre; kestrel kestrel.\n"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"}
    prompt = payload("where did the kestrel service move", elsewhere)
    p = hook(prompt, env)
    assert p.returncode == 0 and p.stdout == b"" and f"no _dream_context vault in or above {elsewhere}" in log.read_text()
    p = hook(prompt, {**env, "CLAUDE_PROJECT_DIR": str(vault.parent)})
    assert p.returncode == 0 and "knowledge/kestrel" in p.stdout.decode(), (p.stdout, log.read_text())
    # the block's command names that vault: from the prompt's folder, the command alone finds none (118-A F6)
    assert f'recall --vault {vault} --explain "<query>"' in p.stdout.decode(), p.stdout
    p = hook(payload("where did the kestrel service move", vault.parent / "_dream_context" / "knowledge"), env)
    assert 'recall --explain "<query>"' in p.stdout.decode(), p.stdout  # (in the project: the command as it is)
    # a vault found from the cwd comes first
    near = tmp_path / "near" / "_dream_context"
    write_doc(near, "knowledge/kestrel-near.md", "---\nname: Near kestrel\n---\nThe kestrel service moved near;"
                                                 " kestrel kestrel.\n")
    for i in range(12):
        write_doc(near, f"knowledge/filler{i}.md", f"---\ntitle: Filler {i}\n---\ntomatoes and cucumbers {i}\n")
    p = hook(payload("where did the kestrel service move", near.parent), {**env, "CLAUDE_PROJECT_DIR": str(vault.parent)})
    assert "knowledge/kestrel-near" in p.stdout.decode() and "[knowledge/kestrel]" not in p.stdout.decode()
    p = hook(payload("where did the kestrel service move", tmp_path / "gone"), env)
    assert p.returncode == 0 and p.stdout == b""
    assert f"cwd {str(tmp_path / 'gone')!r} is no folder; nothing printed" in log.read_text(), log.read_text()


def test_the_background_build_gets_dreamdbs_relative_paths_made_absolute(tmp_path, monkeypatch):
    """QA round 116-A F3: the background ``dreamdb sync`` runs in the folder holding the dreamdb package; a relative
    DREAMDB_CACHE_DIR put its index there, and the hook, looking in its own folder, started another at every prompt."""
    from dreamdb.hook import _child_environment

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DREAMDB_CACHE_DIR", "relcache")
    monkeypatch.setenv("DREAMDB_HOOK_LOG", "logs/hook.log")
    monkeypatch.setenv("DREAMDB_MODEL_DIR", "/abs/model")
    monkeypatch.setenv("DREAMDB_LEXICON", "off")
    monkeypatch.delenv("DREAMDB_INDEX", raising=False)
    env = _child_environment(tmp_path / "index.db")
    assert env["DREAMDB_CACHE_DIR"] == str(tmp_path / "relcache")
    assert env["DREAMDB_HOOK_LOG"] == str(tmp_path / "logs" / "hook.log")
    assert env["DREAMDB_MODEL_DIR"] == "/abs/model" and env["DREAMDB_LEXICON"] == "off"
    assert "DREAMDB_INDEX" not in env
    monkeypatch.setenv("DREAMDB_INDEX", "rel/index.db")
    assert _child_environment(tmp_path / "rel" / "index.db")["DREAMDB_INDEX"] == str(tmp_path / "rel" / "index.db")
    # as this process reads them (QA round 117-A F4): spaces kept, a word a word even beside a file of that name
    from dreamdb.config import cache_root

    (tmp_path / "off").write_text("x")
    monkeypatch.setenv("DREAMDB_CACHE_DIR", "cache ")
    monkeypatch.setenv("DREAMDB_LEXICON", " off")
    env = _child_environment(tmp_path / "index.db")
    assert env["DREAMDB_CACHE_DIR"] == str(cache_root()) == str(tmp_path / "cache ") and env["DREAMDB_LEXICON"] == " off"
    monkeypatch.setenv("DREAMDB_LEXICON", "lex/k.sqlite")
    assert _child_environment(tmp_path / "index.db")["DREAMDB_LEXICON"] == str(tmp_path / "lex" / "k.sqlite")


@pytest.mark.parametrize("env_vault", [False, True])
def test_a_vault_link_the_walk_refuses_is_logged_in_its_own_words(tmp_path, env_vault):
    """QA round 116-A F5: a ``_dream_context`` link to the project folder above it (refused) was logged as "no
    _dream_context vault in or above …" (verbose only), or, with DREAMDB_VAULT set, blamed on that variable."""
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "_dream_context").symlink_to(project)
    log = tmp_path / "h.log"
    env = {"DREAMDB_HOOK_LOG": str(log)}
    if env_vault:
        env["DREAMDB_VAULT"] = str(ROOT / "examples")
    p = hook(payload("how does the ranking of notes work here", project / "sub"), env)
    said = log.read_text()
    assert p.returncode == 0 and p.stdout == b"", p.stdout
    assert f"The vault {project / '_dream_context'} leads to {project}, a folder that holds" in said, said
    assert "DREAMDB_VAULT" not in said and "no _dream_context vault" not in said


def test_the_more_command_is_one_the_agent_can_run_as_written(tmp_path):
    """QA round 120-A F3: the ``More:`` line named a vault whose path it could not show exactly (two spaces shown as
    one, hidden characters left out: another folder), and said ``dreamdb`` for a hook run as ``<python> -m dreamdb``
    where no dreamdb of that environment is on PATH."""
    notes = {"knowledge/kestrel.md": "---\nname: Kestrel service\n---\nThe kestrel service moved north; kestrel.\n"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": "/usr/bin:/bin"}  # (no dreamdb of this environment on it)
    for name, shown in (("plain", True), ("two  spaces", False), ("zw\u200b\u200bx", False)):
        vault = filled_vault(tmp_path / name, notes)
        p = hook(payload("where did the kestrel service move", elsewhere), {**env, "CLAUDE_PROJECT_DIR": str(vault.parent)})
        more = p.stdout.decode().splitlines()[-1]
        flag = " -P" if sys.version_info >= (3, 11) else ""  # (the project's own dreamdb.py never: QA round 121-C F8)
        assert more.startswith(f"More: {sys.executable}{flag} -m dreamdb recall "), more
        assert (f"--vault {vault}" in more) == shown and ("--vault" in more) == shown, more


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_while_the_hook_waits_is_taken_as_ctrl_c(project, tmp_path, signame):
    """QA round 146-D F3: SIGTERM or SIGHUP (a caller's timeout, a closed terminal) killed the hook with exit 143 or
    129 and nothing in its log, where SIGINT ended it with exit 0 and "hook interrupted"; the hook always exits 0."""
    import signal

    from tests.conftest import held_by_another_process as _held_by_another_process

    if not os.path.isdir(f"/proc/{os.getpid()}/fd"):
        pytest.skip("needs /proc/<pid>/fd to see when the hook has opened the index (Linux)")
    import dreamdb

    with dreamdb.open(project / "_dream_context") as ix:
        ix.sync()
        index_file = ix.index_path
    log = tmp_path / "h.log"
    with _held_by_another_process(index_file, exclusive=True):
        p = subprocess.Popen([sys.executable, "-m", "dreamdb", "hook", "user-prompt-submit"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "DREAMDB_HOOK_LOG": str(log)})
        p.stdin.write(payload("how is sleep debt computed", project).encode())
        p.stdin.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.poll() is None:  # until it has opened the index: waiting for its lock
            with contextlib.suppress(OSError):
                if any(os.readlink(f"/proc/{p.pid}/fd/{fd}") == str(index_file) for fd in os.listdir(f"/proc/{p.pid}/fd")):
                    break
            time.sleep(0.02)
        p.send_signal(getattr(signal, signame))
        p.wait(timeout=60)
    out, err = p.stdout.read(), p.stderr.read()
    assert p.returncode == 0 and out == b"" and err == b"", (p.returncode, out, err)
    assert log.read_text().splitlines()[-1].endswith(" hook interrupted; nothing printed"), log.read_text()


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_while_the_hook_waits_for_its_payload_is_logged(tmp_path, signame):
    """QA round 146-I F4: a signal while the hook waited for its payload on stdin (Claude Code's timeout before it
    wrote the prompt) exited 0 with nothing in the log, where the README says "hook interrupted" is logged: the
    interruption outside run (the read of stdin) is logged as run logs it."""
    import signal

    if not os.path.isfile(f"/proc/{os.getpid()}/syscall") or platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("needs /proc/<pid>/syscall on x86-64 to see the hook waiting in its read of stdin (Linux)")
    if signame == "SIGINT" and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        pytest.skip("SIGINT is ignored here (tests run in the background), so the hook inherits that")
    log = tmp_path / "h.log"
    p = subprocess.Popen([sys.executable, "-m", "dreamdb", "hook", "user-prompt-submit"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                         env={**os.environ, "DREAMDB_HOOK_LOG": str(log), "DREAMDB_HOOK_VERBOSE": "1"})
    try:
        deadline, reading = time.monotonic() + 60, False
        while time.monotonic() < deadline and p.poll() is None and not reading:  # until it waits in read(0, …)
            with contextlib.suppress(OSError):
                reading = Path(f"/proc/{p.pid}/syscall").read_text().split()[:2] == ["0", "0x0"]
            time.sleep(0.02)
        assert reading, "the hook never waited on stdin"
        p.send_signal(getattr(signal, signame))
        p.wait(timeout=60)
    finally:
        p.stdin.close()
        if p.poll() is None:
            p.kill()
            p.wait()
    out, err = p.stdout.read(), p.stderr.read()
    assert p.returncode == 0 and out == b"" and err == b"", (p.returncode, out, err)
    assert log.is_file(), "nothing logged"
    assert log.read_text().splitlines()[-1].endswith(" hook interrupted while it read the prompt; nothing printed"), \
        log.read_text()


HOOK_UNDER_A_TRUNCATION = r'''
import os, sys
import dreamdb.store.connect as c
made, cut = c.connect, []

def connect(path, **kw):  # each connection truncates the index in place, once, in the midst of its first statement
    conn = made(path, **kw)

    def truncate():
        if not cut:
            cut.append(path)
            os.truncate(path, 8192)
            with open(os.environ["CUT_RECORD"], "w") as record:
                record.write(f"{path}\n")
        return 0

    conn.set_progress_handler(truncate, 50)
    return conn

c.connect = connect
sys.argv = ["dreamdb", "hook", "user-prompt-submit"]
from dreamdb.entry import main
sys.exit(main())
'''


def test_the_index_truncated_in_place_while_the_hook_reads_it_does_not_kill_the_hook(project, tmp_path):
    """QA round 148-D F2: `truncate -s 8192 index.db` during a hook call killed it with SIGBUS (exit 135, nothing in
    the log) in 2 of 25 runs: SQLite read the index through a memory map, and a page past the new end of the file is
    a signal there, which Python cannot catch. The hook reads without the map: the truncated index is an error SQLite
    reports, found damaged and rebuilt, and the hook exits 0 with its block. (The truncation is made deterministic
    here: in the midst of the first statement the hook's first connection runs.)"""
    index = project / "_dream_context" / ".dreamdb" / "index.db"
    assert hook(payload("how is sleep debt computed", project)).returncode == 0  # (built, so it is there to cut)
    assert index.stat().st_size > 64 * 1024
    log, record = tmp_path / "h.log", tmp_path / "cut"
    p = subprocess.run([sys.executable, "-c", HOOK_UNDER_A_TRUNCATION],
                       input=payload("how is sleep debt computed", project).encode(), capture_output=True,
                       env={**os.environ, "DREAMDB_HOOK_LOG": str(log), "CUT_RECORD": str(record)}, cwd=ROOT,
                       timeout=120)
    assert record.exists(), (p.returncode, p.stdout, p.stderr, log.read_text() if log.exists() else "no log")
    assert (p.returncode, p.stderr) == (0, b""), (p.returncode, p.stderr.decode()[-2000:])  # (not -7: SIGBUS)
    assert p.stdout.decode().startswith(HEADER), log.read_text() if log.exists() else "no log"
    assert "rebuilt from the vault" in log.read_text()


def test_the_hook_reads_the_index_without_a_memory_map(monkeypatch, tmp_path, project):
    """QA round 148-D F2: every connection the hook's process opens has mmap_size 0 (other commands keep the map)."""
    import io

    import dreamdb
    from dreamdb import hook as H

    monkeypatch.setattr(db, "_memory_map", True)  # (restored afterwards: this process's later connections map again)
    monkeypatch.setattr(H, "_WITHOUT_MEMORY_MAP", False)
    made, sizes = db.connect, []

    def connect(path, **kw):
        conn = made(path, **kw)
        sizes.append(conn.execute("PRAGMA mmap_size").fetchone()[0])
        return conn

    monkeypatch.setattr(db, "connect", connect)
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(tmp_path / "hook.log"))
    with dreamdb.open(project) as index:  # (another command's: mapped)
        index.sync()
    assert sizes and set(sizes) == {db.MMAP_SIZE_BYTES}, sizes
    sizes.clear()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload("how is sleep debt computed", project).encode())))
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert H.run_stdin() == 0
    assert sys.stdout.getvalue().startswith(HEADER)
    assert sizes and set(sizes) == {0}, sizes


def test_a_prompt_read_with_its_spelling_corrected_is_written_to_the_log(tmp_path, monkeypatch):
    """QA round 154-G F4: a prompt that matched nothing as typed was answered through its corrected spelling with no
    word in the hook's log, while `dreamdb recall` says so in a note."""
    from dreamdb import hook as H

    vault = filled_vault(tmp_path, {"knowledge/sprocket.md": "---\ntitle: Sprocket supply\n---\nSprocket supply comes"
                                                              " from Acme.\n"})
    log = tmp_path / "h.log"
    monkeypatch.setenv("DREAMDB_HOOK_LOG", str(log))
    monkeypatch.setenv("DREAMDB_HOOK_VERBOSE", "1")
    out = H.run(payload("how does the sprockett suply work", vault.parent))
    assert out.startswith(H.HEADER) and "knowledge/sprocket" in out
    assert "read with its spelling corrected: sprockett → sprocket, suply → supply" in log.read_text()
