"""The benchmark scripts still run (CI smoke: tiny sizes, one run; the figures come from full runs)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, SHARED

SCRIPTS = ROOT / "scripts"


def run(*args, timeout=600):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


@pytest.mark.slow
def test_bench_recall_smoke():
    p = run(SCRIPTS / "bench_recall.py", "--quick", "--runs", "1", "--docs", "300", "--json", "--data", SHARED)
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(p.stdout)
    syn = res["synthetic"]
    assert syn["docs"] == 300 and syn["query_only"]["p50_ms"] > 0 and syn["nochange_sync_ms"] > 0
    assert syn["rebuild_s"] > syn["nochange_sync_ms"] / 1000  # a rebuild re-indexes every file
    assert syn["cli_recall_ms"] > syn["python_pass_ms"] > 0  # the CLI is timed without ../shared too
    if "skipped" not in res["real"]:
        assert res["real"]["docs"] > 700 and res["real"]["cli_recall_ms"] > res["real"]["python_pass_ms"]
        assert 0 < res["real"]["remember_sync_ms"] < res["real"]["remember_sync_whole_file_ms"]
        # the vault copy is left as it was: no benchmark entry stays in it
        copy = ROOT / "eval" / ".cache" / "bench" / "dreamcontext" / "_dream_context" / "core" / "CHANGELOG.json"
        assert "benchmark entry" not in copy.read_text(encoding="utf-8")
        # the first recall after an edit reads only its terms' postings: far less than loading them all
        assert 0 < res["real"]["recall_after_edit_ms"] < res["real"]["recall_after_edit_whole_load_ms"]
        assert not (copy.parent.parent / "knowledge" / "zz-bench-edited-note.md").exists()


@pytest.mark.slow
@pytest.mark.model
def test_bench_embed_scripts_smoke(model_dir):
    p = run(SCRIPTS / "bench_embed.py", "--quick", "--no-baseline", "--json", "--model-dir", model_dir)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout)
    if (SHARED / "vaults" / "dreamcontext").is_dir():
        p = run(SCRIPTS / "bench_embed_index.py", "--quick", "--runs", "1", "--queries", "2", "--json", "--model-dir", model_dir)
        assert p.returncode == 0, p.stderr[-2000:]
        res = json.loads(p.stdout)
        assert res["refresh_nochange_ms"] > 0 and res["hybrid_recall_p50_ms"] > 0
        assert not Path(res["vault"]).exists()  # no --workdir: its temporary copy is removed


def test_bench_embed_index_without_a_model_says_so(tmp_path):
    """QA round 22: without a model the script ended in a traceback."""
    p = run(SCRIPTS / "bench_embed_index.py", "--quick", "--model-dir", tmp_path / "no-model", "--vault", ROOT / "examples" / "_dream_context")
    assert p.returncode == 8, p.stderr[-2000:]  # ModelNotInstalled's exit code, as the CLI's
    assert "Traceback" not in p.stderr and p.stderr.startswith("bench_embed_index: ")
    assert not list(Path(tempfile.gettempdir()).glob("bench-embed-*"))
