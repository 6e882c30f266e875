"""Shared fixtures: an isolated environment, tiny vaults written per test, and a copy of the real vault.

The real vault (../shared/vaults/dreamcontext) is read-only reference data:
tests copy it to a temporary folder once per session and never write into it.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DREAMDB_SHARED", ROOT.parent / "shared"))
REAL_VAULT_SRC = SHARED / "vaults" / "dreamcontext" / "_dream_context"
GOLD_TRAIN = SHARED / "eval" / "dreamcontext-gold-train.jsonl"

needs_real_vault = pytest.mark.skipif(
    not REAL_VAULT_SRC.is_dir(), reason=f"real vault not found at {REAL_VAULT_SRC} (../shared exists only on dreamdb machines)"
)


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory, monkeypatch):
    """No test sees the user's environment, cache or vault."""
    for var in ("DREAMDB_VAULT", "DREAMDB_INDEX", "DREAMDB_RECALL_MODE", "DREAMDB_INCLUDE_ARCHIVES",
                "DREAMDB_MEMORY_HOOK", "DREAMDB_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DREAMDB_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def _make_writable(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        os.chmod(dirpath, os.stat(dirpath).st_mode | stat.S_IWUSR)
        for f in filenames:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | stat.S_IWUSR)


@pytest.fixture(scope="session")
def real_vault_copy(tmp_path_factory) -> Path:
    """A writable copy of the real vault's ``_dream_context`` (shared by the session; do not modify it)."""
    if not REAL_VAULT_SRC.is_dir():
        pytest.skip(f"real vault not found at {REAL_VAULT_SRC}")
    dest = tmp_path_factory.mktemp("real") / "_dream_context"
    shutil.copytree(REAL_VAULT_SRC, dest, ignore=shutil.ignore_patterns(".dreamdb"))
    _make_writable(dest)
    return dest


@pytest.fixture(scope="session")
def real_index(real_vault_copy):
    """The real vault's index, synced once for the session (read-only use)."""
    import dreamdb

    index = dreamdb.open(real_vault_copy)
    index.sync()
    yield index
    index.close()


@pytest.fixture()
def fresh_real_vault(tmp_path) -> Path:
    """A private writable copy of the real vault (for tests that modify it)."""
    if not REAL_VAULT_SRC.is_dir():
        pytest.skip(f"real vault not found at {REAL_VAULT_SRC}")
    dest = tmp_path / "_dream_context"
    shutil.copytree(REAL_VAULT_SRC, dest, ignore=shutil.ignore_patterns(".dreamdb", "workspace"))
    _make_writable(dest)
    return dest


def write_doc(vault: Path, rel: str, text: str) -> Path:
    """Write a vault file (creating folders); return its path."""
    p = vault / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


@pytest.fixture()
def tiny_vault(tmp_path) -> Path:
    """An empty ``_dream_context`` folder in a temporary project."""
    v = tmp_path / "project" / "_dream_context"
    v.mkdir(parents=True)
    return v
