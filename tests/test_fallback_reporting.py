"""When hybrid recall falls back to BM25, every surface says so: recall --json, status, embed status."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

EXAMPLES = ROOT / "examples" / "_dream_context"


@pytest.fixture()
def no_model_env(tmp_path):
    vault = tmp_path / "_dream_context"
    shutil.copytree(EXAMPLES, vault, ignore=shutil.ignore_patterns(".dreamdb"))
    env = {**os.environ, "DREAMDB_MODEL_DIR": str(tmp_path / "no-model-here"), "DREAMDB_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("DREAMDB_RECALL_MODE", None)
    return vault, env


def _dreamdb(env, *args):
    return subprocess.run([sys.executable, "-m", "dreamdb", *args], capture_output=True, text=True, env=env, timeout=120)


def test_recall_json_names_the_mode_used_and_the_one_requested(no_model_env):
    vault, env = no_model_env
    p = _dreamdb(env, "recall", "--vault", str(vault), "--mode", "hybrid", "--json", "sleep", "debt")
    doc = json.loads(p.stdout)
    assert p.returncode == 0
    assert doc["mode"] == "bm25" and doc["requested_mode"] == "hybrid"
    assert doc["hits"] and all(h["mode"] == "bm25" for h in doc["hits"])
    assert any("BM25" in n or "bm25" in n for n in doc["notes"])
    plain = json.loads(_dreamdb(env, "recall", "--vault", str(vault), "--json", "sleep").stdout)
    assert plain["mode"] == plain["requested_mode"] == "bm25"  # (the same keys every time: QA round 68 L7)


def test_status_and_embed_status_say_why_hybrid_falls_back(no_model_env):
    vault, env = no_model_env
    st = json.loads(_dreamdb(env, "status", "--vault", str(vault), "--json").stdout)
    assert "falls back to BM25" in st["embeddings"]["summary"] and "no-model-here" in st["embeddings"]["summary"]
    es = json.loads(_dreamdb(env, "embed", "status", "--vault", str(vault), "--json").stdout)
    assert es["model_installed"] is False and es["hybrid_ready"] is False
    assert isinstance(es["runtime_missing"], list)
