#!/usr/bin/env python
"""Benchmark the operational figures the README quotes, each beside a baseline measured in the same run.

On a copy of the real dreamcontext vault (a temporary folder, or ``--workdir``; the shared vault is never
written), indexed first:

* ``dreamdb sync --check``: wall time in process of the call the CLI makes (``Index.sync(check=True)``:
  ``Index.check()``, SQLite's ``integrity_check`` and the corpus statistics, then a no-change sync),
  beside ``PRAGMA quick_check`` on the same file (timed side by side, alternating order);
* the prompt hook on a damaged index: one ``dreamdb hook user-prompt-submit`` process fed
  ``{"prompt": "how is sleep debt computed", "cwd": <vault parent>}`` after a leaf page of the ``files``
  table (the one every sync reads) was overwritten with junk, which the hook rebuilds from the vault
  (the hook log is read to check that it did), beside the same hook on the sound index (alternating);
* prompts from ``--sessions`` sessions at once (20; 4 with ``--quick``): that many hook processes started
  together, the wall time of each (median and max of a batch; medians over the runs), beside one hook
  process alone; in BM25 mode, and in hybrid mode (``DREAMDB_RECALL_MODE=hybrid``) where the embedding
  model is installed, after one ``dreamdb embed refresh`` of the copy (minutes on the real vault: not
  timed, not run with ``--quick`` or ``--no-hybrid``; ``--workdir`` keeps its vectors for later runs).

Without the real vault:

* the first sync of ``--same-names`` notes all named ``README.md`` (one a folder: ids ``README``, ``README-2``, …)
  beside as many notes of distinct names (in process, alternating);
* the sync after renaming a folder of ``--moved`` notes (their rows kept: QA round 127-C F1) beside the first sync of
  the same notes (in process, alternating);
* the cost of ``import dataclasses`` in a fresh interpreter (what a one-shot ``dreamdb recall`` would pay
  for it): ``python -c "import dataclasses"`` beside ``python -c pass`` (alternating, medians of
  ``--import-runs``);
* what the prompt hook's limits on indexing before it answers buy (``dreamdb.hook.INLINE_BUILD_*`` for an index to
  build, ``INLINE_SYNC_*`` for changes to one built; QA round 154-C F1), on generated vaults of small notes
  (``title: n 7`` and one word, as ``tests/test_hook.py`` writes them) and of notes of about 1 KB (frontmatter, a
  heading, 20–200 words, as QA's generator writes them): the first sync of ``INLINE_BUILD_FILES`` small notes, or of
  as many 1 KB notes as ``INLINE_BUILD_BYTES`` holds, in process (wall time and CPU), beside the sync after a line is
  appended to ``INLINE_SYNC_FILES`` of them (``INLINE_SYNC_BYTES`` of them) and to every one of them (per file and
  per KB: what a changed note costs against a new one); then the same as hook processes (the hook building the
  index, then syncing the changed notes, then with nothing changed; which path each took read from its log); and a
  ``CHANGELOG.json`` (the real vault's, or a generated one of about 800 KB): its first sync beside the sync after one
  entry is added and after every entry is changed (``--hook-sync-scale`` shrinks every vault: ``--quick`` takes a
  tenth).

``--only FIGURE`` (``real-vault``, ``same-names``, ``moved``, ``imports``, ``hook-sync``; repeatable) times only those.

Processes run as an installed wheel would (compiled bytecode cached: ``bench_recall.cli_env``), this tree's dreamdb
(``PYTHONPATH`` led by it: ``bench_recall.dreamdb_command``, the console script beside the interpreter), with a
hook log and cache folder of their own. A figure whose data or model is absent is skipped with a
``skipped: …`` line (exit 0). Usage::

    .venv/bin/python scripts/bench_ops.py [--quick] [--runs 5] [--sessions 20] [--import-runs 20]
                                          [--same-names 2000] [--moved 2000] [--no-hybrid] [--data DIR]
                                          [--hook-sync-scale 1.0] [--only FIGURE]… [--workdir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import dreamdb  # noqa: E402
from bench_recall import cli_env, dreamdb_command, med, processes_note, set_workdir  # noqa: E402
from dreamdb.evaluation import suite  # noqa: E402

PROMPT = "how is sleep debt computed"
from settings import HOOK_SETTINGS  # noqa: E402 - (scripts/settings.py, shared with the other benchmarks)


def copy_vault(src: Path, work: Path) -> Path:
    """``src`` copied (without its ``.dreamdb``) to ``work/_dream_context``, writable; a copy of the same source is
    reused, another folder there refused (:func:`workdir.vault_copy`)."""
    from workdir import vault_copy
    from dreamdb.evaluation.beir import make_writable

    def make(dest: Path) -> None:
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".dreamdb"))
        make_writable(dest)

    return vault_copy(src, work, "full", make)


def hook_env(work: Path, mode: str = "bm25") -> dict:
    """The environment of the timed processes: ``cli_env()`` without the user's hook settings, a cache folder and
    hook log in ``work``, the recall mode given."""
    env = {k: v for k, v in cli_env().items() if k not in HOOK_SETTINGS}
    env.update(DREAMDB_CACHE_DIR=str(work / "cache"), DREAMDB_HOOK_LOG=str(work / "hook.log"), DREAMDB_RECALL_MODE=mode)
    return env


def hook_log(work: Path) -> str:
    log = work / "hook.log"
    return log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""


def log_since(work: Path, before: str) -> str:
    """What the hook log gained since it read ``before``."""
    now = hook_log(work)
    return now[len(before):] if now.startswith(before) else now


def run_hook(vault: Path, env: dict) -> tuple[float, str]:
    """One prompt hook process: (wall time in ms, what it printed)."""
    payload = json.dumps({"prompt": PROMPT, "session_id": "bench-ops", "cwd": str(vault.parent)}).encode()
    t0 = time.perf_counter()
    p = subprocess.run([*dreamdb_command(), "hook", "user-prompt-submit"], input=payload,
                       capture_output=True, env=env, cwd=vault.parent, check=False)
    return (time.perf_counter() - t0) * 1000, p.stdout.decode("utf-8", "replace")


def index_path(vault: Path) -> Path:
    return vault / ".dreamdb" / "index.db"


def checkpoint(vault: Path) -> None:
    """Fold the index's WAL into its file (so that the file alone is the index)."""
    ix = dreamdb.open(vault, index_path=index_path(vault), auto_sync=False)
    ix.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    ix.close()


def put_index(saved: Path, vault: Path) -> None:
    """Put the saved sound index file back as the vault's index (no WAL beside it), recorded as the state dreamdb left
    (:mod:`dreamdb.store.trust`: else every hook's open would check the copy first, ``PRAGMA quick_check``)."""
    from dreamdb.store import trust

    idx = index_path(vault)
    for suffix in ("-wal", "-shm"):
        Path(f"{idx}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(saved, idx)
    trust.record(idx)


def files_leaf(saved: Path) -> tuple[int, int]:
    """(page number, page size) of the middle leaf page of the ``files`` table in the index file ``saved``, the table
    every sync reads (a page in the middle of the file is most often a posting a prompt never reads: the damage then
    goes unseen)."""
    from dreamdb.store import connect as db

    conn = db.sqlite3.connect(saved)
    try:
        pages = [p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'files' AND pagetype = 'leaf'"
                                            " ORDER BY pageno")]
        if not pages:  # (a small index: the table is its root page)
            pages = [p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'files'")]
        return pages[len(pages) // 2], conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()


def damage(vault: Path, page: int, page_size: int) -> None:
    """Overwrite ``page`` of the vault's index with junk bytes (as ``tests/test_index_safety.py`` does), recorded as
    the state dreamdb left: the damage a prompt meets in its read and rebuilds itself. (Damage found by the open's check
    of a file changed since, :mod:`dreamdb.store.trust`, replaces the index with an empty one, built as a vault with no
    index is: by a background sync on the real vault, the prompt printing nothing.)"""
    from dreamdb.store import trust

    with open(index_path(vault), "r+b") as f:
        f.seek((page - 1) * page_size)
        f.write(b"\xff" * page_size)
    trust.record(index_path(vault))


def bench_sync_check(vault: Path, runs: int) -> dict:
    """``sync --check`` in process (the CLI's call) and ``Index.check()`` alone, beside ``PRAGMA quick_check`` on the
    same connection, timed side by side (alternating order; one untimed pass first)."""
    ix = dreamdb.open(vault, index_path=index_path(vault), auto_sync=False)
    try:
        steps = {"sync_check": lambda: ix.sync(check=True), "check": ix.check,
                 "quick_check": lambda: ix.conn.execute("PRAGMA quick_check").fetchall()}
        problems = ix.check()
        rebuilt = ix.sync(check=True).rebuilt
        if ix.conn.execute("PRAGMA quick_check").fetchall() != [("ok",)]:
            problems.append("quick_check")
        times = {name: [] for name in steps}
        names = list(steps)
        for i in range(runs):
            for name in (names if i % 2 == 0 else names[::-1]):
                t0 = time.perf_counter()
                steps[name]()
                times[name].append((time.perf_counter() - t0) * 1000)
        vectors = ix.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] if _has_table(ix, "embeddings") else 0
        ix.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        out = {f"{name}_ms": med(ts) for name, ts in times.items()}
        out.update(index_bytes=index_path(vault).stat().st_size, vectors=vectors, sound=not problems and not rebuilt)
        return out
    finally:
        ix.close()


def _has_table(ix, name: str) -> bool:
    return ix.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def bench_damaged_hook(vault: Path, saved: Path, work: Path, runs: int) -> dict:
    """The prompt hook on a damaged index (rebuilt by it), beside the same hook on the sound index: alternating
    runs, each on a fresh copy of the saved sound index; one untimed pass of each first."""
    env = hook_env(work)
    page, page_size = files_leaf(saved)
    damaged, sound, rebuilt, printed = [], [], 0, 0
    for i in range(runs + 1):
        for kind in (("damaged", "sound") if i % 2 == 0 else ("sound", "damaged")):
            put_index(saved, vault)
            if kind == "damaged":
                damage(vault, page, page_size)
            before = hook_log(work)
            ms, out = run_hook(vault, env)
            if i == 0:
                continue  # the untimed pass
            printed += out.startswith("— Memory recall")
            if kind == "damaged":
                damaged.append(ms)
                rebuilt += "rebuilt from the vault" in log_since(work, before)
            else:
                sound.append(ms)
    put_index(saved, vault)
    return {"damaged_hook_ms": med(damaged), "sound_hook_ms": med(sound), "runs": runs, "rebuilt_runs": rebuilt,
            "printed_runs": printed, "damaged_page": page}


def hooks_at_once(vault: Path, env: dict, n: int) -> tuple[list[float], float, int]:
    """``n`` hook processes started together (a thread each, released at once): (each one's wall ms, the batch's
    wall ms, how many printed a recall block)."""
    barrier = threading.Barrier(n + 1)
    results: list = [None] * n

    def one(k: int) -> None:
        barrier.wait()
        results[k] = run_hook(vault, env)

    threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    batch = (time.perf_counter() - t0) * 1000
    return [ms for ms, _ in results], batch, sum(out.startswith("— Memory recall") for _, out in results)


def bench_sessions(vault: Path, work: Path, mode: str, sessions: int, runs: int) -> dict:
    """``sessions`` hooks at once in ``mode``: per process median and max of each batch (medians over ``runs``
    batches), the batch's wall time, beside one hook process alone (median of ``runs``, alternating with the
    batches; one untimed pass of each first)."""
    env = hook_env(work, mode)
    before = hook_log(work)
    run_hook(vault, env)
    hooks_at_once(vault, env, sessions)
    alone, p50, pmax, batch, printed = [], [], [], [], 0
    for i in range(runs):
        for kind in (("batch", "alone") if i % 2 == 0 else ("alone", "batch")):
            if kind == "alone":
                ms, out = run_hook(vault, env)
                alone.append(ms)
                printed += out.startswith("— Memory recall")
            else:
                times, wall, ok = hooks_at_once(vault, env, sessions)
                p50.append(med(times))
                pmax.append(max(times))
                batch.append(wall)
                printed += ok
    log = log_since(work, before)
    return {"mode": mode, "sessions": sessions, "runs": runs, "per_process_median_ms": med(p50),
            "per_process_max_ms": med(pmax), "batch_ms": med(batch), "alone_ms": med(alone),
            "printed": printed, "hooks": runs * (sessions + 1), "fell_back_to_bm25": log.count("used bm25"),
            "lock_waits": log.count("index locked by another writer")}


def embed_refresh(vault: Path, work: Path) -> tuple[int, float]:
    """``dreamdb embed refresh`` of the copy (its progress on stderr): (exit code, seconds)."""
    print("embedding the vault copy (dreamdb embed refresh; minutes the first time) …", file=sys.stderr)
    t0 = time.perf_counter()
    p = subprocess.run([*dreamdb_command(), "embed", "refresh", "--vault", str(vault)],
                       env=hook_env(work), stdout=sys.stderr, check=False)
    return p.returncode, time.perf_counter() - t0


def bench_imports(runs: int) -> dict:
    """``python -c "import dataclasses"`` beside ``python -c pass``: medians (ms) of ``runs`` each, alternating; one
    untimed run of each first."""
    cmds = {"import_dataclasses": [sys.executable, "-c", "import dataclasses"], "python_pass": [sys.executable, "-c", "pass"]}
    env = cli_env()
    names = list(cmds)
    times = {name: [] for name in names}
    for i in range(runs + 1):
        for name in (names if i % 2 == 0 else names[::-1]):
            t0 = time.perf_counter()
            subprocess.run(cmds[name], capture_output=True, env=env, check=False)
            if i:
                times[name].append((time.perf_counter() - t0) * 1000)
    out = {f"{name}_ms": med(ts) for name, ts in times.items()}
    out["cost_ms"] = out["import_dataclasses_ms"] - out["python_pass_ms"]
    out["runs"] = runs
    return out


def bench_same_names(n: int, runs: int) -> dict:
    """First sync, in process, of ``n`` notes all named ``README.md`` (one per project folder, numbered ``README``,
    ``README-2``, …) beside ``n`` notes of distinct names with the same text (alternating order; medians, ms):
    what numbering same-named files costs (QA round 90-C F2: n²/2 lookups, 10 s for 2,000)."""
    times: dict[str, list[float]] = {"same_names": [], "distinct_names": []}
    with tempfile.TemporaryDirectory(prefix="bench-same-names-") as tmp:
        for i in range(runs):
            for kind in (list(times) if i % 2 == 0 else list(times)[::-1]):
                vault = Path(tmp) / f"{kind}-{i}" / "_dream_context"
                for j in range(n):
                    rel = f"knowledge/p{j:05d}/README.md" if kind == "same_names" else f"knowledge/p{j:05d}/readme-{j}.md"
                    (vault / rel).parent.mkdir(parents=True, exist_ok=True)
                    (vault / rel).write_text(f"# Project {j}\n\nThe readme of project {j}.\n", encoding="utf-8")
                ix = dreamdb.open(vault, auto_sync=False)
                t0 = time.perf_counter()
                report = ix.sync()
                times[kind].append((time.perf_counter() - t0) * 1000)
                assert report.added == n, report
                ix.close()
                shutil.rmtree(vault.parent)
    return {"notes": n, "runs": runs, **{f"{k}_ms": med(v) for k, v in times.items()}}


def bench_moved_folder(n: int, runs: int) -> dict:
    """The sync, in process, after the folder holding ``n`` notes is renamed (each note moved with its bytes: its rows
    are kept, QA round 127-C F1), beside the first sync of the same ``n`` notes into an empty index (what a move cost
    when each moved note was parsed and analysed again); alternating order, medians (ms)."""
    times: dict[str, list[float]] = {"moved": [], "first_sync": []}
    with tempfile.TemporaryDirectory(prefix="bench-moved-") as tmp:
        vault = Path(tmp) / "_dream_context"
        for j in range(n):
            note = vault / "knowledge" / "old" / f"note-{j:05d}.md"
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(f"---\ntitle: Note {j}\ntags: [bench]\n---\nThe text of note {j}, moved with its folder.\n",
                            encoding="utf-8")
        moved = dreamdb.open(vault, index_path=Path(tmp) / "moved.db", auto_sync=False)
        moved.sync()
        for i in range(runs):
            for kind in (list(times) if i % 2 == 0 else list(times)[::-1]):
                if kind == "moved":
                    names = ("old", "new") if (vault / "knowledge" / "old").is_dir() else ("new", "old")
                    (vault / "knowledge" / names[0]).rename(vault / "knowledge" / names[1])
                    t0 = time.perf_counter()
                    report = moved.sync()
                else:
                    first = dreamdb.open(vault, index_path=Path(tmp) / f"first-{i}.db", auto_sync=False)
                    t0 = time.perf_counter()
                    report = first.sync()
                times[kind].append((time.perf_counter() - t0) * 1000)
                assert report.added == n, report
                if kind == "first_sync":
                    first.close()
        moved.close()
    return {"notes": n, "runs": runs, **{f"{k}_ms": med(v) for k, v in times.items()}}


_WORDS = ("sqlite index cache recall hook prompt vault sync embed vector lexicon token stem query ranking score bm25 chunk"
          " model migration schema trigger view table column commit branch release deploy timeout latency memory sleep"
          " debt agent session decision postgres wal journal checkpoint rebuild damage lock writer reader busy").split()
_FOLDERS = ("knowledge", "knowledge/a", "knowledge/b", "state", "theses", "lab/insights")


def _small_note(i: int, rng: random.Random) -> str:
    """A small note (≈ 35 bytes), as ``tests/test_hook.py`` writes many."""
    return f"---\ntitle: n {i}\n---\nsmallnote{i}\n"


def _kb_note(i: int, rng: random.Random) -> str:
    """A note of about 1 KB (0.3–1.6 KB): frontmatter, a heading, 20–200 words, a section (QA round 154-C's vault)."""
    w = rng.sample(_WORDS, 6)
    body = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 200)))
    return (f"---\ntitle: {w[0].title()} {w[1]} note {i}\ndescription: about {w[2]} and {w[3]}\ntags: [{w[4]}, {w[5]}]\n"
            f"date: 2026-0{1 + i % 9}-1{i % 10}\n---\n# {w[0].title()} {w[1]} note {i}\n\n{body}\n\n## Details\n\n"
            f"More on {w[4]} {w[5]}.\n")


_EDIT = "\nedited once more\n"
"""The line appended to a note to change it (as ``echo x >> note.md``)."""


def _write_notes(vault: Path, make, *, files: int | None = None, limit: int | None = None) -> list[Path]:
    """Notes ``make(i, rng)`` written to ``vault``'s folders: ``files`` of them, or as many as ``limit`` bytes hold."""
    rng = random.Random(7)
    paths, total = [], 0
    for i in range(files if files is not None else 10 ** 9):
        text = make(i, rng).encode()
        if limit is not None and total + len(text) > limit:
            break
        path = vault / _FOLDERS[i % len(_FOLDERS)] / f"note-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text)
        paths.append(path)
        total += len(text)
    return paths


def _changed_within(paths: list[Path], *, files: int, limit: int) -> list[Path]:
    """The first of ``paths`` whose sizes with :data:`_EDIT` appended stay within ``files`` files and ``limit`` bytes."""
    chosen, total = [], 0
    for path in paths[:files]:
        total += path.stat().st_size + len(_EDIT)
        if total > limit:
            break
        chosen.append(path)
    return chosen


def _edit(paths: list[Path]) -> None:
    for path in paths:
        with open(path, "a", encoding="utf-8") as f:
            f.write(_EDIT)


def _timed_sync(ix) -> tuple[float, float, object]:
    """``ix.sync()``: (wall ms, CPU ms of this process, its report)."""
    wall, cpu = time.perf_counter(), time.process_time()
    report = ix.sync()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000, report


def _timed_hook(vault: Path, env: dict, work: Path) -> tuple[float, float, str]:
    """One prompt hook process on ``vault``: (wall ms, CPU ms of the process, what its log gained)."""
    before = hook_log(work)
    ran = resource.getrusage(resource.RUSAGE_CHILDREN)
    ms, _out = run_hook(vault, env)
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (done.ru_utime + done.ru_stime - ran.ru_utime - ran.ru_stime) * 1000
    return ms, cpu, log_since(work, before)


def _path_taken(log: str) -> str:
    """Which path a hook took, from what its log gained: ``background`` (it started ``dreamdb sync``) or ``inline``."""
    return "background" if "started `dreamdb sync` in the background" in log else "inline"


def _bench_notes(kind: str, make, runs: int, scale: float, limits: dict) -> dict:
    """One kind of note (see :func:`bench_hook_sync`): medians of ``runs``, each on a fresh vault."""
    rows: dict[str, list] = {}
    paths_taken: dict[str, set] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory(prefix="bench-hook-sync-") as tmp:
        work = Path(tmp)
        env = {**hook_env(work), "DREAMDB_HOOK_VERBOSE": "1"}
        warm = work / "warm-up" / "_dream_context"  # (one untimed hook first: its bytecode compiled and cached)
        _write_notes(warm, make, files=1)
        run_hook(warm, env)
        for i in range(runs):
            for by in ("process", "hook"):
                vault = work / f"{kind}-{by}-{i}" / "_dream_context"
                if kind == "small":
                    paths = _write_notes(vault, make, files=int(limits["build_files"] * scale))
                else:
                    paths = _write_notes(vault, make, limit=int(limits["build_bytes"] * scale))
                built_bytes = sum(p.stat().st_size for p in paths)
                changed = _changed_within(paths, files=int(limits["sync_files"] * scale),
                                          limit=int(limits["sync_bytes"] * scale))
                changed_bytes = sum(p.stat().st_size + len(_EDIT) for p in changed)
                if by == "process":
                    ix = dreamdb.open(vault, index_path=index_path(vault), auto_sync=False)
                    try:
                        for step, edited in (("new", None), ("changed", changed), ("all_changed", paths)):
                            if edited is not None:
                                _edit(edited)
                            wall, cpu, report = _timed_sync(ix)
                            assert report.added + report.changed == (len(paths) if edited is None else len(edited)), report
                            add(f"{step}_wall_ms", wall)
                            add(f"{step}_cpu_ms", cpu)
                    finally:
                        ix.close()
                else:
                    for step, edited in (("hook_build", None), ("hook_sync", changed), ("hook_no_change", [])):
                        if edited:
                            _edit(edited)
                        wall, cpu, log = _timed_hook(vault, env, work)
                        add(f"{step}_wall_ms", wall)
                        add(f"{step}_cpu_ms", cpu)
                        paths_taken.setdefault(step, set()).add(_path_taken(log))
                shutil.rmtree(vault.parent)
    out = {name: med(values) for name, values in rows.items()}
    files, changed_files = len(paths), len(changed)
    out.update(files=files, bytes=built_bytes, changed_files=changed_files, changed_bytes=changed_bytes,
               paths={step: "/".join(sorted(taken)) for step, taken in paths_taken.items()},
               new_cpu_ms_per_file=out["new_cpu_ms"] / files, all_changed_cpu_ms_per_file=out["all_changed_cpu_ms"] / files,
               new_cpu_ms_per_kb=out["new_cpu_ms"] / built_bytes * 1000,
               all_changed_cpu_ms_per_kb=out["all_changed_cpu_ms"] / (built_bytes + files * len(_EDIT)) * 1000)
    return out


def _changelog(entries: int, rng: random.Random) -> list[dict]:
    """A CHANGELOG.json of ``entries`` entries of about 1.3 KB (the real vault's: 622 in 820 KB), newest first."""
    from datetime import date, timedelta

    out = []
    for i in range(entries, 0, -1):
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(120, 200)))
        out.append({"date": (date(2024, 1, 1) + timedelta(days=i)).isoformat(),
                    "type": rng.choice(["feature", "fix", "decision"]),
                    "scope": rng.choice(["sync", "hook", "recall"]), "summary": f"change {i}: {rng.choice(_WORDS)}",
                    "description": words})
    return out


def _bench_changelog(runs: int, scale: float, real: Path | None) -> dict:
    """The real vault's CHANGELOG.json (``real``; else a generated one of about 800 KB), its entries scaled: its first
    sync, in process, beside the sync after one entry is added (what the hook counts by the file's growth) and after
    every entry is changed."""
    rows: dict[str, list] = {}
    if real is not None:
        found = json.loads(real.read_text(encoding="utf-8"))
        found = found["entries"] if isinstance(found, dict) else found
    with tempfile.TemporaryDirectory(prefix="bench-hook-changelog-") as tmp:
        for i in range(runs):
            vault = Path(tmp) / f"v{i}" / "_dream_context"
            (vault / "core").mkdir(parents=True)
            entries = ([dict(e) for e in found[:max(2, int(len(found) * scale))]] if real is not None else
                       _changelog(max(2, int(600 * scale)), random.Random(7)))
            log = vault / "core" / "CHANGELOG.json"
            log.write_text(json.dumps(entries, indent=2), encoding="utf-8")
            size = log.stat().st_size
            ix = dreamdb.open(vault, index_path=index_path(vault), auto_sync=False)
            try:
                for step in ("new", "one_added", "all_changed"):
                    if step == "one_added":
                        entries.insert(0, dict(entries[0], summary="one more change", date="2099-01-01"))
                    elif step == "all_changed":
                        for entry in entries:
                            entry["description"] += " (edited)"
                    if step != "new":
                        log.write_text(json.dumps(entries, indent=2), encoding="utf-8")
                    wall, cpu, _report = _timed_sync(ix)
                    rows.setdefault(f"{step}_wall_ms", []).append(wall)
                    rows.setdefault(f"{step}_cpu_ms", []).append(cpu)
            finally:
                ix.close()
            shutil.rmtree(vault.parent)
    return {"entries": len(entries) - 1, "bytes": size, "runs": runs, "real": real is not None,
            **{k: med(v) for k, v in rows.items()}}


def bench_hook_sync(runs: int, scale: float, changelog: Path | None = None) -> dict:
    """What the hook's limits on indexing before it answers cost at those limits (see the module's docstring), for small
    notes and for notes of about 1 KB (:func:`_bench_notes`), and a changelog (:func:`_bench_changelog`: the real
    vault's, ``changelog``, where it is there)."""
    from dreamdb import hook as H

    limits = {"build_files": H.INLINE_BUILD_FILES, "build_bytes": H.INLINE_BUILD_BYTES,
              "sync_files": H.INLINE_SYNC_FILES, "sync_bytes": H.INLINE_SYNC_BYTES}
    return {"runs": runs, "scale": scale, "limits": {**limits, "sync_read_bytes": H.INLINE_SYNC_READ_BYTES},
            "small": _bench_notes("small", _small_note, runs, scale, limits),
            "kb": _bench_notes("kb", _kb_note, runs, scale, limits),
            "changelog": _bench_changelog(runs, scale, changelog)}


def bench_vault(src: Path, work: Path, a, res: dict) -> None:
    """Steps 1–3 on a copy of ``src`` in ``work`` (their results put in ``res``)."""
    t0 = time.perf_counter()
    vault = copy_vault(src, work)
    ix = dreamdb.open(vault, index_path=index_path(vault), auto_sync=False)
    ix.sync()
    res["documents"] = ix.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    ix.close()
    res["setup_s"] = time.perf_counter() - t0
    print("timing sync --check …", file=sys.stderr)
    res["sync_check"] = bench_sync_check(vault, a.runs)
    checkpoint(vault)
    saved = work / "sound-index.db"
    shutil.copyfile(index_path(vault), saved)
    print("timing the prompt hook on a damaged index …", file=sys.stderr)
    res["damaged_hook"] = bench_damaged_hook(vault, saved, work, a.runs)
    print(f"timing {a.sessions} prompt hooks at once (BM25) …", file=sys.stderr)
    res["sessions_bm25"] = bench_sessions(vault, work, "bm25", a.sessions, a.runs)
    why = hybrid_skipped(a)
    if why:
        res["sessions_hybrid"] = {"skipped": why}
        return
    rc, secs = embed_refresh(vault, work)
    if rc != 0:
        res["sessions_hybrid"] = {"skipped": f"dreamdb embed refresh failed (exit {rc})"}
        return
    print(f"timing {a.sessions} prompt hooks at once (hybrid) …", file=sys.stderr)
    res["sessions_hybrid"] = {**bench_sessions(vault, work, "hybrid", a.sessions, a.runs), "embed_refresh_s": secs}


def hybrid_skipped(a) -> str | None:
    """Why the hybrid sessions are not timed (None: they are)."""
    if a.quick:
        return "--quick (the one-off dreamdb embed refresh of the real vault takes minutes)"
    if a.no_hybrid:
        return "--no-hybrid"
    from dreamdb.embeddings.locate import model_status

    st = model_status()
    if not st["installed"]:
        return f"no embedding model installed ({st.get('reason') or st['path']}; dreamdb model build installs it)"
    return None


def _hook_sync_rows(hs: dict) -> list[tuple[str, str, str]]:
    """The rows of :func:`bench_hook_sync`'s figures."""
    rows = []
    for key, what in (("small", "small notes"), ("kb", "notes of ≈ 1 KB")):
        f = hs[key]
        rows.append((f"first sync of {f['files']:,} {what} ({f['bytes']:,} bytes), in process",
                     f"{f['new_cpu_ms']:.0f} ms CPU ({f['new_wall_ms']:.0f} wall)",
                     f"{f['new_cpu_ms_per_file']:.2f} ms a file, {f['new_cpu_ms_per_kb']:.2f} ms a KB"))
        rows.append((f"sync of {f['changed_files']:,} of them changed ({f['changed_bytes']:,} bytes)",
                     f"{f['changed_cpu_ms']:.0f} ms CPU ({f['changed_wall_ms']:.0f} wall)",
                     f"all {f['files']:,} changed {f['all_changed_cpu_ms']:.0f} ms CPU: {f['all_changed_cpu_ms_per_file']:.2f}"
                     f" ms a file, {f['all_changed_cpu_ms_per_kb']:.2f} ms a KB"))
        rows.append(("prompt hook: building that index / syncing those changes",
                     f"{f['hook_build_wall_ms']:.0f} / {f['hook_sync_wall_ms']:.0f} ms",
                     f"CPU {f['hook_build_cpu_ms']:.0f} / {f['hook_sync_cpu_ms']:.0f} ms; nothing changed"
                     f" {f['hook_no_change_wall_ms']:.0f} ms (paths: {f['paths'].get('hook_build')} /"
                     f" {f['paths'].get('hook_sync')})"))
    c = hs["changelog"]
    whose = "the real vault's" if c["real"] else "a generated"
    rows.append((f"{whose} CHANGELOG.json of {c['entries']:,} entries"
                 f" ({c['bytes']:,} bytes): one entry added",
                 f"{c['one_added_cpu_ms']:.0f} ms CPU ({c['one_added_wall_ms']:.0f} wall)",
                 f"first sync {c['new_cpu_ms']:.0f} ms CPU, every entry changed {c['all_changed_cpu_ms']:.0f} ms CPU"))
    return rows


def render(res: dict) -> str:
    """Plain-text table: what / dreamdb / beside it."""
    m = res["machine"]
    L = [f"bench_ops  ({m['cores']} cores, load {res['load_average']:.2f} at start, Python {m['python']}, SQLite {m['sqlite']};"
         f" medians of {res['runs']} runs, {res['import_runs']} import runs)",
         res["processes"],
         f"real vault: {res['vault']}" + (f" ({res['documents']} documents)" if "documents" in res else ""), ""]
    rows = [("what", "dreamdb", "beside it")]
    def row(section: dict, label: str, made) -> tuple[str, str, str]:
        """The row of ``section``: ``made(section)`` (its label suffix, figure, neighbour), or its skip reason."""
        if "skipped" in section:
            return label, f"skipped: {section['skipped']}", ""
        suffix, figure, beside = made(section)
        return label + suffix, figure, beside

    if "sync_check" in res:  # (--only leaves figures out)
        rows.append(row(res["sync_check"], "sync --check, real vault", lambda sc: (
            " (in process)", f"{sc['sync_check_ms']:.1f} ms",
            f"PRAGMA quick_check {sc['quick_check_ms']:.1f} ms (Index.check() alone {sc['check_ms']:.1f} ms;"
            f" index {sc['index_bytes'] / 1e6:.1f} MB, {sc['vectors']} vectors"
            + ("" if sc["sound"] else "; NOT SOUND before the runs") + ")")))
        rows.append(row(res["damaged_hook"], "prompt hook on a damaged index", lambda dh: (
            " (rebuilds it)", f"{dh['damaged_hook_ms']:.0f} ms",
            f"same hook, sound index {dh['sound_hook_ms']:.0f} ms (rebuilt in {dh['rebuilt_runs']} of {dh['runs']} runs)")))
        for key, label in (("sessions_bm25", "BM25"), ("sessions_hybrid", "hybrid")):
            s = res[key]
            if "skipped" in s:
                rows.append((f"{res['sessions']} prompt hooks at once, {label}", f"skipped: {s['skipped']}", ""))
                continue
            notes = []
            if s["fell_back_to_bm25"]:
                notes.append(f"{s['fell_back_to_bm25']} fell back to BM25")
            if s["lock_waits"]:
                notes.append(f"{s['lock_waits']} waited for the lock")
            if s["printed"] < s["hooks"]:
                notes.append(f"{s['hooks'] - s['printed']} of {s['hooks']} printed nothing")
            if "embed_refresh_s" in s:
                notes.append(f"embed refresh before: {s['embed_refresh_s']:.0f} s, untimed")
            rows.append((f"{s['sessions']} prompt hooks at once, {label}, per process",
                         f"{s['per_process_median_ms']:.0f} ms median, {s['per_process_max_ms']:.0f} max",
                         f"one hook alone {s['alone_ms']:.0f} ms (batch {s['batch_ms']:.0f} ms"
                         + "".join(f"; {n}" for n in notes) + ")"))
    if "same_names" in res:
        sn = res["same_names"]
        rows.append((f"first sync of {sn['notes']:,} notes named README.md (one a folder)", f"{sn['same_names_ms']:.0f} ms",
                     f"{sn['notes']:,} notes of distinct names {sn['distinct_names_ms']:.0f} ms"))
    if "moved_folder" in res:
        mv = res["moved_folder"]
        rows.append((f"sync after renaming a folder of {mv['notes']:,} notes", f"{mv['moved_ms']:.0f} ms",
                     f"first sync of those notes {mv['first_sync_ms']:.0f} ms"))
    if "import_dataclasses" in res:
        im = res["import_dataclasses"]
        rows.append(("import dataclasses, fresh interpreter", f"+{im['cost_ms']:.1f} ms ({im['import_dataclasses_ms']:.1f} ms)",
                     f"python -c pass {im['python_pass_ms']:.1f} ms"))
    if "hook_sync" in res:
        rows.extend(_hook_sync_rows(res["hook_sync"]))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows if not r[1].startswith("skipped"))
    for r in rows:
        L.append(f"{r[0]:<{w0}}  {r[1]:<{w1}}  {r[2]}".rstrip())
        if r is rows[0]:
            L.append(f"{'-' * w0}  {'-' * w1}  {'-' * 9}")
    return "\n".join(L) + "\n"


FIGURES = ("real-vault", "same-names", "moved", "imports", "hook-sync")
"""The figures ``--only`` names: the real vault's (``sync --check``, the damaged index, the sessions), the rest."""


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description="dreamdb operational benchmark: sync --check, a damaged index, many sessions"
                                             " at once, import dataclasses (medians, beside baselines)")
    ap.add_argument("--quick", action="store_true", help="3 runs, 4 sessions, 10 import runs, no hybrid (CI; < 1 min)")
    ap.add_argument("--runs", type=int, help="runs per figure (default 5; 3 with --quick)")
    ap.add_argument("--sessions", type=int, help="hook processes started at once (default 20; 4 with --quick)")
    ap.add_argument("--import-runs", type=int, help="runs of each import timing (default 20; 10 with --quick)")
    ap.add_argument("--same-names", type=int, help="notes of one name in the numbering figure (default 2000; 300 with"
                                                   " --quick)")
    ap.add_argument("--moved", type=int, help="notes in the folder renamed in the move figure (default 2000; 300 with"
                                              " --quick)")
    ap.add_argument("--no-hybrid", action="store_true", help="skip the hybrid sessions (and their embed refresh)")
    ap.add_argument("--data", type=Path, default=None, help="evaluation data folder (default as dreamdb eval)")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="keep the vault copy and its index here, reused by later runs (its vectors too); default: a"
                         " temporary folder, removed")
    ap.add_argument("--hook-sync-scale", type=float, default=None,
                    help="the hook-sync figure's vaults at this part of the hook's limits (default 1; 0.1 with --quick)")
    ap.add_argument("--only", action="append", choices=FIGURES, metavar="FIGURE",
                    help=f"time only this figure (repeatable; one of: {', '.join(FIGURES)})")
    ap.add_argument("--json", action="store_true", help="print JSON")
    a = ap.parse_args(argv)
    for name in ("runs", "sessions", "import_runs", "same_names", "moved"):
        if getattr(a, name) is not None and getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1 (got {getattr(a, name)})")
    if a.hook_sync_scale is not None and not 0 < a.hook_sync_scale <= 1:
        ap.error(f"--hook-sync-scale must be above 0 and at most 1 (got {a.hook_sync_scale})")
    a.hook_sync_scale = a.hook_sync_scale or (0.1 if a.quick else 1.0)
    only = set(a.only or FIGURES)
    a.runs = a.runs or (3 if a.quick else 5)
    a.sessions = a.sessions or (4 if a.quick else 20)
    a.import_runs = a.import_runs or (10 if a.quick else 20)
    a.same_names = a.same_names or (300 if a.quick else 2000)
    a.moved = a.moved or (300 if a.quick else 2000)
    from settings import data_folder

    data = data_folder(a.data, "bench_ops")  # (one named that is not there: exit 7, QA round 143-A F3)
    src = data / "vaults" / "dreamcontext" / "_dream_context"
    if a.workdir:
        from workdir import prepare

        set_workdir(prepare(a.workdir, src))  # (its timed processes' bytecode there too: QA round 147-G F7)
    res = {"machine": suite.machine_info(), "load_average": os.getloadavg()[0], "processes": processes_note(),
           "runs": a.runs, "sessions": a.sessions,
           "import_runs": a.import_runs, "vault": str(src)}
    if "real-vault" in only and not src.is_dir():
        why = f"no vault at {src} (../shared exists only on dreamdb machines; set DREAMDB_EVAL_DATA or --data)"
        for key in ("sync_check", "damaged_hook", "sessions_bm25", "sessions_hybrid"):
            res[key] = {"skipped": why}
    elif "real-vault" in only:
        work = a.workdir.resolve() if a.workdir else Path(tempfile.mkdtemp(prefix="bench-ops-"))
        res["workdir"] = str(work)
        try:
            bench_vault(src, work, a, res)
        finally:
            if not a.workdir:
                shutil.rmtree(work, ignore_errors=True)
    if "same-names" in only:
        print(f"timing the first sync of {a.same_names} same-named notes …", file=sys.stderr)
        res["same_names"] = bench_same_names(a.same_names, a.runs)
    if "moved" in only:
        print(f"timing the sync after renaming a folder of {a.moved} notes …", file=sys.stderr)
        res["moved_folder"] = bench_moved_folder(a.moved, a.runs)
    if "imports" in only:
        print("timing import dataclasses …", file=sys.stderr)
        res["import_dataclasses"] = bench_imports(a.import_runs)
    if "hook-sync" in only:
        print("timing the prompt hook's inline sync and build at its limits …", file=sys.stderr)
        real = src / "core" / "CHANGELOG.json"
        res["hook_sync"] = bench_hook_sync(a.runs, a.hook_sync_scale, real if real.is_file() else None)
    print(json.dumps(res, indent=2) if a.json else render(res), end="\n" if a.json else "")
    return 0


if __name__ == "__main__":
    from interrupt import run

    sys.exit(run(main))
