"""The README as a user reads it: no pointers to documents a user does not have, and quick-start commands
that exist (user QA)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamdb.cli import cli
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(title)
    nxt = re.search(r"^#{2,4} ", README[start + len(title):], re.M)
    return README[start:start + len(title) + nxt.start()] if nxt else README[start:]


def _bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.S)


@pytest.mark.parametrize("internal", ["SPEC", "QA round", "the reference", "reference figure", "../shared/docs"])
def test_no_citation_of_internal_documents(internal):
    assert internal not in README


def test_the_quick_start_says_what_the_tests_build_and_what_a_user_runs_for_hybrid():
    quick = _section("## Quick start")
    assert "builds the model and the lexicon once" not in quick
    commands = " ".join(_bash_blocks(quick))
    assert "dreamdb model build" in commands and "dreamdb lexicon build" in commands


def test_every_dreamdb_command_of_the_quick_start_exists():
    quick = _section("## Quick start") + _section("### Your own vault")
    runner = CliRunner()
    seen = 0
    for block in _bash_blocks(quick):
        for line in block.splitlines():
            for part in re.split(r"&&|;", line.split(" #")[0]):
                words = shlex.split(part) if "<<" not in part else []
                if not words or not words[0].endswith("dreamdb"):
                    continue
                path = [w for w in words[1:3] if not w.startswith("-")][:2]
                r = runner.invoke(cli, [*path[:1], "--help"])
                assert r.exit_code == 0, part
                if path[0] in ("model", "lexicon", "embed", "hook") and len(path) > 1:
                    assert runner.invoke(cli, [path[0], path[1], "--help"]).exit_code == 0, part
                seen += 1
    assert seen >= 5


def test_your_own_vault_gives_each_command_once():
    lines = [line.split("#")[0].strip() for block in _bash_blocks(_section("### Your own vault"))
             for line in block.splitlines() if line.startswith("dreamdb ")]
    assert lines and len(lines) == len(set(lines))


def test_the_python_api_example_runs_as_written(tmp_path):
    """The Python API section's example, run on a copy of the example vault where it says ``/tmp/my-vault-copy``
    (QA round 100-C: the README's write calls are the API a library user copies; a pinned note there cannot be
    deleted without force=True, so an example that named one would fail)."""
    import os
    import shutil
    import subprocess
    import sys

    code = re.findall(r"```python\n(.*?)```", _section("## Python API"), re.S)[0]
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "examples", copy, ignore=shutil.ignore_patterns(".dreamdb"))
    assert code.count("/tmp/my-vault-copy") == 2  # (the copy is made before, as the text above the code says)
    assert "cp -r examples /tmp/my-vault-copy" in _section("## Python API").split("```python")[0]
    code = code.replace("/tmp/my-vault-copy", str(copy))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "DREAMDB_RECALL_MODE": ""})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert any(re.fullmatch(r"changelog/\d{4}-\d{2}-\d{2}-storage-1", line) for line in lines), lines
    assert any(line.startswith("False ") and ".before-update.md" in line for line in lines), lines
    assert not (copy / "_dream_context" / "knowledge" / "uyku-borcu.md").exists()
    assert not (ROOT / "examples" / "_dream_context" / ".dreamdb" / "trash").exists()


def test_the_python_api_section_states_the_word_caches_bounds():
    """QA round 147-E F4: a long-lived process grew by about 90 MB with queries of unseen words before leveling off,
    and nothing said so (a comment called the query-word outcomes "a few MB"). The README's Python API section states
    the bounds the code has."""
    from dreamdb import analyzer
    from dreamdb.ranking.rank import RESOLVED_WORDS_MAX

    api = " ".join(_section("## Python API").split())
    assert (f"up to {analyzer.stem.cache_info().maxsize:,} stemmed words (process-wide) and {RESOLVED_WORDS_MAX:,}"
            " query-word outcomes for each open index") in api
    assert "about 90–110 MB more resident memory" in api


def test_the_python_api_section_names_every_error_class():
    """QA round 151-D F4: the README's list of ``dreamdb.errors`` exceptions left out ``IndexReplaced`` (an
    IndexUnavailable, exit 4) and ``ModelReplaced`` (a ModelError, exit 8), both exported."""
    import inspect

    from dreamdb import errors

    listed = README[README.index("Errors are `dreamdb.DreamdbError` subclasses"):]
    listed = " ".join(listed[:listed.index("\n\n")].split())
    classes = [name for name, value in vars(errors).items() if inspect.isclass(value)
               and issubclass(value, errors.DreamdbError) and value is not errors.DreamdbError
               and value.__module__ == errors.__name__]
    assert len(classes) >= 18 and [name for name in classes if f"`{name}`" not in listed] == []
    assert "`IndexUnavailable` (and `IndexDamaged`, `IndexTooNew`, and `IndexReplaced`" in listed
    assert "`ModelError` (and `ModelReplaced`" in listed


def test_a_listed_documents_path_is_said_to_be_relative_to_the_vault_folder_as_it_is(tmp_path):
    """QA round 155-C F3: ``Index.list_documents()``'s ``path`` is the source file relative to the vault folder (as
    ``dreamdb list --json`` prints it and docs/json.md says), where a hit's is absolute; the docstring said "path",
    the README nothing. The README's Python API section, the docstring and docs/json.md say so, and it holds."""
    import shutil

    import dreamdb

    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "examples", copy, ignore=shutil.ignore_patterns(".dreamdb"))
    with dreamdb.open(copy) as index:
        docs = index.list_documents()
        hit = index.recall("sleep")[0]
    assert docs and all(not d["path"].startswith("/") and (index.vault / d["path"]).is_file() for d in docs)
    assert index.vault.name == "_dream_context" and Path(hit.path).is_absolute()
    assert {d["path"] for d in docs if d["type"] == "changelog"} == {"core/CHANGELOG.json"}
    api = " ".join(_section("## Python API").split())
    assert ("a document's `path` is its source file relative to the vault folder (`_dream_context`), `/`-separated"
            in api and "where a hit's `path` is absolute: `index.vault / doc[\"path\"]` is the file" in api)
    doc = " ".join(dreamdb.Index.list_documents.__doc__.split())
    assert "``path``, the source file relative to the vault folder (:attr:`vault`, the ``_dream_context`` folder)" in doc
    json_md = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    assert "| `path` | string | source file, relative to the vault folder (`_dream_context/`), `/`-separated" in json_md


def test_the_embedding_time_the_help_gives_is_the_readmes_measured_one():
    """QA round 151-D F5: ``embed refresh --help`` said the real vault's chunks take about 5 minutes on 2 cores and
    ``embed dedup --help`` ≈ 5 min, where the README says about 4 (227 s measured)."""
    minutes = re.search(r"took about (\d+) minutes on 2 cores", " ".join(README.split())).group(1)
    seconds = int(re.search(r"embedding the real vault \(1,347 chunks\).*?\| (\d+) s \(", README).group(1))
    assert round(seconds / 60) == int(minutes)
    runner = CliRunner()
    refresh = " ".join(runner.invoke(cli, ["embed", "refresh", "--help"]).output.split())
    dedup = " ".join(runner.invoke(cli, ["embed", "dedup", "--help"]).output.split())
    assert f"take about {minutes} minutes on 2 cores" in refresh, refresh
    assert f"the real vault ≈ {minutes} min on 2 cores" in dedup, dedup


def test_the_files_kept_beside_an_index_put_elsewhere_are_all_named(tmp_path):
    """QA round 156-D F2: the README's list of the files to ignore beside a ``DREAMDB_INDEX`` index (``file.db*``,
    ``sync.clock``) missed ``embed.lock``, which ``status`` makes there, and ``embed dedup``'s log. Every file the
    commands make beside it, and every name dreamdb gives a file there, is matched by one of the list's names."""
    import fnmatch
    import os
    import subprocess
    import sys

    from dreamdb import dedup
    from dreamdb.embeddings.store import LOCK_FILE_NAME
    from dreamdb.store.sync import CLOCK_FILE_NAME

    bullet = _section("#### Where the index lives").split("- **Anywhere else.**")[1].split("\n- ")[0]
    listed = bullet.split("the files dreamdb keeps beside it:")[1].split("`dreamdb status` shows")[0]
    patterns = [p for p in re.findall(r"`([^`]+)`", listed) if not p.startswith((".", "-"))]
    vault = tmp_path / "v" / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "a.md").write_text("---\ntitle: A\n---\nalpha\n", encoding="utf-8")
    index = tmp_path / "idx" / "file.db"
    env = {**os.environ, "DREAMDB_INDEX": str(index)}
    for command in (["status"], ["sync"], ["recall", "alpha"]):
        r = subprocess.run([sys.executable, "-m", "dreamdb", *command, "--vault", str(vault)], capture_output=True,
                           text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
    made = {p.name for p in index.parent.iterdir()} - {".gitignore"}  # (a folder dreamdb made has its own)
    assert {"file.db", LOCK_FILE_NAME, CLOCK_FILE_NAME} <= made, made
    named = made | {f"{index.name}{s}" for s in ("-wal", "-shm", "-journal", ".trusted", ".rebuild.lock", ".build.log")} \
        | {dedup.LOG_FILE_NAME, dedup.LOG_FILE_NAME + ".1"}
    assert not [n for n in sorted(named) if not any(fnmatch.fnmatchcase(n, p) for p in patterns)], patterns
