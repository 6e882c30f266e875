#!/usr/bin/env python
"""Benchmark dreamdb recall and sync speed, each figure beside a baseline measured in the same run.

On the real dreamcontext vault (a writable copy in ``eval/.cache/bench/``):

* first sync (empty index → full), no-change sync, rebuild (``sync --force``,
  what an analyzer upgrade costs), index size;
* the sync after one ``dreamdb remember`` (one entry added to the 622-entry
  CHANGELOG.json), beside the same sync re-indexing the whole file (what every
  changed file cost before unchanged documents kept their rows);
* recall latency in process: query only (``auto_sync=False``) with the C
  accumulator, beside the same engine's numpy passes (``DREAMDB_KERNEL=0``)
  and bm25s over the same documents, the three timed side by side (each query
  through each in turn, alternating order); query + lazy no-change sync
  (``auto_sync=True``, what the CLI and hook do);
* the first in-process recall after a note is edited, beside the same
  recall after loading every posting of the new state at once;
* ``dreamdb recall`` and the prompt hook as processes (wall time incl. Python
  start-up, median of ≥ 10; compiled bytecode cached, as from an installed
  wheel, see :func:`cli_env`; the console script beside the interpreter running this tree's dreamdb,
  :func:`dreamdb_command`), beside ``python -c pass`` (the start-up floor); each
  run must exit 0, the recall print a hit and the hook its block, else the
  benchmark ends (exit 1) naming the process and what it printed or said;
* bm25s over the same documents: build time and index size.

On a generated vault (``scripts/gen_vault.py``; 100k notes, or 2k with
``--quick``): first sync, index size, no-change sync, query p50/p90 over 50
generated queries, beside bm25s build time and query p50/p90; rebuild too;
queries that match nothing, beside the same on a copy of the index without
migration 008's indexes.

Every figure is the median over ``--runs`` runs (a 100k first sync runs
once: it takes minutes). The vault copies, generated vaults, their indexes and the timed processes' compiled
bytecode are kept in ``eval/.cache/bench/`` for the next run, or in ``--workdir DIR``. Usage::

    .venv/bin/python scripts/bench_recall.py [--quick] [--runs 5] [--docs 100000] [--data DIR] [--workdir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import dreamdb  # noqa: E402
from dreamdb.evaluation import beir, suite  # noqa: E402
from dreamdb.evaluation import metrics as M  # noqa: E402

CACHE = ROOT / "eval" / ".cache" / "bench"
"""Where the benchmarks keep their vaults, indexes and the timed processes' bytecode (:func:`set_workdir` moves it)."""
FALLBACK_QUERIES = [
    "sleep consolidation", "BM25 ranking", "hybrid recall embeddings", "dashboard security", "release notes",
    "how does the hook work", "changelog entry supersedes", "turkish stemming", "index rebuild", "vault sync",
]


def med(xs: list[float]) -> float:
    """Median (0.0 for an empty list)."""
    return statistics.median(xs) if xs else 0.0


remove_index = suite._remove_index
index_bytes = suite._index_bytes


def time_sync(vault: Path, idx: Path, runs: int) -> dict:
    """First-sync and no-change-sync medians; returns an open, synced index too."""
    firsts = []
    for _ in range(runs):
        remove_index(idx)
        ix = dreamdb.open(vault, index_path=idx, auto_sync=False)
        t0 = time.perf_counter()
        ix.sync()
        firsts.append(time.perf_counter() - t0)
        ix.close()
    ix = dreamdb.open(vault, index_path=idx, auto_sync=False)
    nochange = []
    for _ in range(max(runs, 5)):
        t0 = time.perf_counter()
        ix.sync()
        nochange.append((time.perf_counter() - t0) * 1000)
    rebuilds = []
    for _ in range(runs):  # `dreamdb sync --force`: what an analyzer upgrade costs a user
        t0 = time.perf_counter()
        ix.sync(force=True)
        rebuilds.append(time.perf_counter() - t0)
    return {"ix": ix, "first_sync_s": med(firsts), "first_sync_runs": len(firsts), "nochange_sync_ms": med(nochange),
            "rebuild_s": med(rebuilds), "index_bytes": index_bytes(ix)}


def time_remembered_entry(vault: Path, idx: Path, runs: int) -> dict:
    """Median sync (ms) after one remembered CHANGELOG entry, beside the whole file re-indexed (the file is
    put back as it was afterwards)."""
    from datetime import datetime, timezone

    from dreamdb.writes import remember

    log = vault / "core" / "CHANGELOG.json"
    if not log.is_file():
        return {}
    original = log.read_bytes()
    ix = dreamdb.open(vault, index_path=idx, auto_sync=False)
    ix.sync()
    kept, whole = [], []
    try:
        for i in range(runs):
            remember(vault, f"benchmark entry {i}", now=datetime(2026, 8, 18, 12, i, tzinfo=timezone.utc))
            t0 = time.perf_counter()
            ix.sync()
            kept.append((time.perf_counter() - t0) * 1000)
            # the baseline: the same file's documents all re-inserted (its stored stat and hash made stale)
            ix.conn.execute("DELETE FROM documents WHERE source_path = 'core/CHANGELOG.json'")
            ix.conn.execute("UPDATE files SET mtime_ns = 0, sha256 = 'stale' WHERE path = 'core/CHANGELOG.json'")
            t0 = time.perf_counter()
            ix.sync()
            whole.append((time.perf_counter() - t0) * 1000)
    finally:
        log.write_bytes(original)
        ix.sync()
        ix.close()
    return {"remember_sync_ms": med(kept), "remember_sync_whole_file_ms": med(whole)}


def time_recall_after_edit(vault: Path, idx: Path, query: str, runs: int, now=None) -> dict:
    """Median time (ms) of the first in-process recall after a note is edited (lazy sync included),
    beside the same recall made after loading every posting of the new state at once (``Index.warm()``:
    what every first recall after a change cost before an index state had to serve
    ``PRELOAD_AFTER_QUERIES`` queries first). The note is removed afterwards."""
    note = vault / "knowledge" / "zz-bench-edited-note.md"
    ix = dreamdb.open(vault, index_path=idx)
    ix.recall(query, top=10, now=now)
    lazy, whole = [], []
    try:
        for i in range(runs):
            for out, load_whole in ((lazy, False), (whole, True)):
                note.write_text(f"---\ntitle: Edited note {i} {load_whole}\n---\nan edited note, {query}\n", encoding="utf-8")
                t0 = time.perf_counter()
                if load_whole:
                    ix.warm()
                ix.recall(query, top=10, now=now)
                out.append((time.perf_counter() - t0) * 1000)
    finally:
        note.unlink(missing_ok=True)
        ix.sync()
        ix.close()
    return {"recall_after_edit_ms": med(lazy), "recall_after_edit_whole_load_ms": med(whole)}


def query_latency(search, queries: list[str], runs: int) -> dict:
    """Median over runs of the per-run p50/p90 (ms); one untimed warm-up pass first."""
    return paired_latency({"only": search}, queries, runs)["only"]


def paired_latency(searches: dict, queries: list[str], runs: int) -> dict:
    """``{name: {"p50_ms", "p90_ms"}}`` of each search, timed side by side: every query goes through
    each search in turn (the order alternating between queries), so a slow moment of the machine costs
    them alike; medians over runs of the per-run p50/p90; one untimed warm-up pass first."""
    names = list(searches)
    for q in queries[:5]:
        for name in names:
            searches[name](q)
    p50 = {name: [] for name in names}
    p90 = {name: [] for name in names}
    for _ in range(runs):
        lat = {name: [] for name in names}
        for i, q in enumerate(queries):
            for name in (names if i % 2 == 0 else names[::-1]):
                t0 = time.perf_counter()
                searches[name](q)
                lat[name].append((time.perf_counter() - t0) * 1000)
        for name in names:
            p50[name].append(M.percentile(lat[name], 50))
            p90[name].append(M.percentile(lat[name], 90))
    return {name: {"p50_ms": med(p50[name]), "p90_ms": med(p90[name])} for name in names}


def in_process_latency(ix, vault: Path, idx: Path, queries: list[str], runs: int, now=None) -> dict:
    """The memory engine with the C accumulator (``query_only``), with its numpy passes
    (``query_only_numpy``, DREAMDB_KERNEL=0; None when the accumulator was not built) and bm25s over the
    same documents (``bm25s``, with its build time and size; None without bm25s), timed side by side."""
    from dreamdb.ranking import memory

    searches = {"query_only": lambda q: ix.recall(q, top=10, now=now)}
    numpy_ix = None
    if memory.KERNEL is not None:
        numpy_ix = dreamdb.open(vault, index_path=idx, auto_sync=False)
        numpy_ix._memory = memory.MemoryEngine(numpy_ix.conn, kernel=False)  # the engine its recall uses
        searches["query_only_numpy"] = lambda q: numpy_ix.recall(q, top=10, now=now)
    bl = baseline_for(ix)
    if bl:
        searches["bm25s"] = lambda q: bl.search(q, 10)
    out = {"query_only_numpy": None, **paired_latency(searches, queries, runs)}
    if bl:
        out["bm25s"].update(build_s=bl.build_seconds, index_bytes=bl.size_bytes())
    if numpy_ix is not None:
        numpy_ix.close()
    return out


def baseline_for(ix):
    """bm25s over the documents dreamdb stored (or None if bm25s is missing), always with the English stemmer and
    stopword list (:class:`~dreamdb.evaluation.baseline.Bm25sBaseline`'s defaults), as the evaluation suite gives an
    English index (:func:`dreamdb.evaluation.suite._index_language`): this benchmark's vaults are English, the real
    dreamcontext vault (most of its documents, as the suite finds them) and the generated one (``gen_vault.py``'s
    English-looking words); a vault mostly in Turkish would need the Turkish ones."""
    from dreamdb.evaluation import baseline as BL

    if BL.available():
        return None
    docs = suite._index_documents(ix)
    return BL.Bm25sBaseline([d for d, _ in docs], [t for _, t in docs])


def set_workdir(work: Path) -> None:
    """Keep what :data:`CACHE` holds in ``work`` instead (a benchmark's ``--workdir``, checked by
    :func:`workdir.prepare`): its vaults and indexes, and the timed processes' compiled bytecode (:func:`cli_env`), so
    that a run given a working folder writes nothing into the source tree (QA round 147-G F7)."""
    global CACHE
    CACHE = Path(work).resolve()


def cli_env() -> dict:
    """The environment every timed process of the benchmarks runs in (``bench_recall``, ``bench_ops``,
    ``bench_embed_index``): this one, with compiled bytecode read and written as usual (under ``CACHE/pycache``,
    in the ``--workdir`` given: :func:`set_workdir`; so the source tree's folders stay clean), as from an installed wheel, whose modules pip compiles at install
    (``PYTHONDONTWRITEBYTECODE=1`` in a source checkout would otherwise have every start compile dreamdb's modules
    anew, ~60–100 ms on this machine); and ``PYTHONPATH`` led by :data:`ROOT`, so that the process runs the dreamdb of
    the tree being benchmarked, not the one installed in the interpreter's environment (QA round 145-G F2: an
    editable install of another checkout was timed).

    Returns:
        a new ``{name: value}`` environment.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / "pycache")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)])
    return env


def dreamdb_command() -> list[str]:
    """The command a timed process starts dreamdb with, run in :func:`cli_env`: the ``dreamdb`` console script beside
    this interpreter, what an installed wheel runs (its start-up is part of the README's "``dreamdb recall`` as a
    process" figure), else ``python -m dreamdb``; either imports :data:`ROOT`'s dreamdb through ``PYTHONPATH``."""
    exe = Path(sys.executable).with_name("dreamdb")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dreamdb"]


def processes_note() -> str:
    """One line for a benchmark's output: what its timed processes run (:func:`dreamdb_command` in :func:`cli_env`)."""
    return f"processes: {' '.join(dreamdb_command())} with PYTHONPATH={ROOT} (this tree's dreamdb), bytecode cached"


def wall(cmd: list[str], runs: int, env=None, stdin: bytes | None = None, *, what: str,
         printed: str | None = None) -> float:
    """Median wall time (ms) of running ``cmd`` ``runs`` times (one warm-up run first), ``stdin`` fed to each.

    Every run, the warm-up too, must exit 0 and, with ``printed``, print on standard output what begins with it (a
    recall's first hit ``"1. "``, the hook's ``"— Memory recall"`` block): a process that failed, or answered
    otherwise (no hit, the hook silent), was timed and reported as the figure of one that answered (QA round 150-G
    F5), as ``bench_ops.py`` counts its hooks that printed nothing.

    Raises:
        SystemExit: a run that did not (:func:`_check_run`), naming the process as ``what`` and what it said.
    """
    _check_run(subprocess.run(cmd, capture_output=True, env=env, check=False, input=stdin), what, printed)
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, env=env, check=False, input=stdin)
        ts.append((time.perf_counter() - t0) * 1000)
        _check_run(p, what, printed)
    return med(ts)


def _check_run(p: subprocess.CompletedProcess, what: str, printed: str | None) -> None:
    """Raise ``SystemExit("bench_recall: the <what> timing process …")`` when the process ``p`` (its output captured
    as bytes) exited other than 0, or, with ``printed``, its standard output does not begin with ``printed``: with its
    exit code, what it printed first, and the end of its standard error."""
    err = p.stderr.decode("utf-8", "replace") if p.stderr else ""
    if p.returncode != 0:
        raise SystemExit(f"bench_recall: the {what} timing process failed (exit {p.returncode}): {_said(err)}")
    out = p.stdout.decode("utf-8", "replace") if p.stdout else ""
    if printed is not None and not out.startswith(printed):
        first = out.strip().splitlines()[0][:200] if out.strip() else ""
        raise SystemExit(f"bench_recall: the {what} timing process printed {repr(first) if first else 'nothing'},"
                         f" not {printed!r}…, so its time is not one of what it measures"
                         + (f"; it said: {_said(err)}" if err.strip() else ""))


def _said(stderr: str) -> str:
    """What a failed process said, in one line: from a traceback's last entry (the exception, and what follows it, its
    hint), else its standard error's last line, or ``(nothing on stderr)``."""
    lines = stderr.strip().splitlines() or ["(nothing on stderr)"]
    last = max((i for i, line in enumerate(lines) if re.match(r"[A-Za-z_][\w.]*: ", line)), default=len(lines) - 1)
    return " ".join(lines[last:])


def real_vault(data: Path) -> Path:
    """Where the real vault of ``data`` is (it may be absent: its figures are then skipped)."""
    return data / "vaults" / "dreamcontext" / "_dream_context"


def real_queries(data: Path) -> list[str]:
    """The queries timed on the real vault: the text of the gold set's questions (timing only, never their judgements),
    else :data:`FALLBACK_QUERIES` where ``data`` holds no gold set (or no real vault). The gold file is read by the
    evaluation's own loader (:func:`dreamdb.evaluation.gold.load_gold`), before anything is timed.

    Raises:
        SystemExit: a gold file the evaluation refuses (a line that is no gold query, not UTF-8, empty…): its error,
            with the file and line, said on stderr as ``dreamdb eval`` says it, exit 2 (QA round 147-G F2: KeyError,
            JSONDecodeError, UnicodeDecodeError tracebacks, the last after the sync timings had run).
    """
    from dreamdb.errors import DreamdbError
    from dreamdb.evaluation import gold

    gold_file = data / "eval" / "dreamcontext-gold-train.jsonl"
    if not real_vault(data).is_dir() or not (gold_file.exists() or gold_file.is_symlink()):
        return FALLBACK_QUERIES
    try:
        return [q.query for q in gold.load_gold(gold_file)]
    except DreamdbError as exc:
        print(f"bench_recall: Error: {exc.message}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None


def bench_real(data: Path, runs: int, cli_runs: int, queries: list[str] | None = None) -> dict:
    """The real-vault figures (see module doc), timed with ``queries`` (default :func:`real_queries`)."""
    src = real_vault(data)
    if not src.is_dir():
        return {"skipped": f"no vault at {src}"}
    if queries is None:
        queries = real_queries(data)
    vb = beir.copy_vault(src, CACHE / "dreamcontext", slug_map=False)
    idx = CACHE / "dreamcontext" / "index.db"
    out = time_sync(vb.vault, idx, runs)
    out.pop("ix").close()
    out.update(time_remembered_entry(vb.vault, idx, runs))
    ix = dreamdb.open(vb.vault, index_path=idx, auto_sync=False)
    ix.sync()
    now = "2026-08-18T00:00:00Z"
    out["docs"] = ix.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    out.update(in_process_latency(ix, vb.vault, idx, queries, runs, now=now))
    out.update(time_recall_after_edit(vb.vault, idx, queries[0], runs, now=now))
    ix_sql = dreamdb.open(vb.vault, index_path=idx, auto_sync=False, engine="sql")
    out["query_only_sql"] = query_latency(lambda q: ix_sql.recall(q, top=10, now=now), queries, runs)
    ix_sql.close()
    ix_lazy = dreamdb.open(vb.vault, index_path=idx, auto_sync=True)
    out["query_lazy_sync"] = query_latency(lambda q: ix_lazy.recall(q, top=10, now=now), queries, runs)
    out.update(time_cli(vb.vault, idx, queries[0], cli_runs, now=now, hook=True))
    ix.close()
    ix_lazy.close()
    return out


def time_cli(vault: Path, idx: Path, query: str, cli_runs: int, *, now: str | None = None, hook: bool = False) -> dict:
    """``dreamdb recall`` (and with ``hook``, the prompt hook) as processes on ``vault``'s index ``idx``,
    beside the start-up floors ``python -c pass`` and ``import dreamdb.cli``: medians (ms) of ``cli_runs``."""
    env = {**cli_env(), "DREAMDB_INDEX": str(idx)}
    cli = dreamdb_command()
    out = {"cli_recall_ms": wall(cli + ["recall", "--vault", str(vault), *(["--now", now] if now else []), query],
                                 cli_runs, env, what=f"dreamdb recall {query!r}", printed="1. ")}
    if hook:
        payload = json.dumps({"prompt": query, "session_id": "bench", "cwd": str(vault.parent)}).encode()
        out["hook_ms"] = wall(cli + ["hook", "user-prompt-submit"], cli_runs, env, stdin=payload,
                              what=f"prompt hook ({query!r})", printed="— Memory recall")
    out["python_pass_ms"] = wall([sys.executable, "-c", "pass"], cli_runs, cli_env(), what="python -c pass")
    out["python_import_dreamdb_cli_ms"] = wall([sys.executable, "-c", "import dreamdb.cli"], cli_runs, cli_env(),
                                               what="import dreamdb.cli")
    return out


def gen_queries(vault: Path, n: int = 50) -> list[str]:
    """``n`` deterministic queries: 2–4 title/body words of every k-th generated note."""
    import random

    files = sorted((vault / "knowledge").rglob("*.md"))
    rng = random.Random(11)
    out = []
    for f in rng.sample(files, min(n, len(files))):
        words = [w.strip(".,").lower() for w in f.read_text(encoding="utf-8").split("---", 2)[2].split()
                 if w.isalpha() and len(w) > 3]
        out.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))))
    return out


def bench_synthetic(docs: int, runs: int, cli_runs: int) -> dict:
    """The generated-vault figures (see module doc)."""
    import gen_vault

    t0 = time.perf_counter()
    vault = gen_vault.generate(CACHE / f"gen-{docs}", docs)
    gen_s = time.perf_counter() - t0
    idx = CACHE / f"gen-{docs}" / "index.db"
    out = time_sync(vault, idx, 1 if docs > 20000 else runs)
    ix = out.pop("ix")
    out["docs"] = ix.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    out["generate_s"] = gen_s
    queries = gen_queries(vault)
    out.update(in_process_latency(ix, vault, idx, queries, runs))
    ix_sql = dreamdb.open(vault, index_path=idx, auto_sync=False, engine="sql")
    out["query_only_sql"] = query_latency(lambda q: ix_sql.recall(q, top=10), queries, runs)
    ix_sql.close()
    ix.close()
    out["no_match"] = bench_no_match(vault, idx, runs)
    out["warm"] = time_warm(vault, idx, runs)
    out.update(time_cli(vault, idx, queries[0], cli_runs))
    return out


_WARM_SCRIPT = """
import json, sys, time
import dreamdb
ix = dreamdb.open(sys.argv[1], index_path=sys.argv[2], auto_sync=False)
ix.recall("zqxv wkjq")  # (the index opened and its documents loaded: the floor)
t0 = time.perf_counter()
if sys.argv[3] == "warm":
    ix.warm()
seconds = time.perf_counter() - t0
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "peak_mb": peak / 1024}))
"""


def time_warm(vault: Path, idx: Path, runs: int) -> dict:
    """``Index.warm()`` (every posting loaded into memory at once) in a process of its own: seconds and peak resident
    memory (VmHWM, MB; Linux), median of ``runs``, beside the same process without it (the floor: dreamdb imported,
    the index opened, its documents loaded)."""
    if not Path("/proc/self/status").exists():
        return {"skipped": "no /proc/self/status (peak memory is read from VmHWM, Linux)"}
    res = {}
    for what in ("warm", "floor"):
        runs_out = [json.loads(_warm_process(vault, idx, what)) for _ in range(runs)]
        res[what] = {k: med([r[k] for r in runs_out]) for k in ("seconds", "peak_mb")}
    return res


def _warm_process(vault: Path, idx: Path, what: str) -> str:
    """The output of :data:`_WARM_SCRIPT` in a process of its own; its failure ends the benchmark with what the process
    said (QA round 135-D F7: a CalledProcessError traceback hid the child's error)."""
    p = subprocess.run([sys.executable, "-c", _WARM_SCRIPT, str(vault), str(idx), what], capture_output=True, text=True,
                       env=cli_env())
    if p.returncode != 0:
        raise SystemExit(f"bench_recall: the {what} timing process failed (exit {p.returncode}): {_said(p.stderr)}")
    return p.stdout


NO_MATCH_QUERIES = [f"zqxv{i} wkjq{i}" for i in range(20)]
"""Queries no generated note matches: a recall that finds nothing then asks the index whether expired
documents would have matched (to say so) — the question migration 008's indexes answer."""


def bench_no_match(vault: Path, idx: Path, runs: int) -> dict:
    """p50/p90 (ms, SQL engine as the CLI) of queries that match nothing, on the index as it is and on a
    copy without migration 008's indexes (the baseline: the same question answered by a table scan)."""
    import shutil
    import sqlite3
    import tempfile

    ix = dreamdb.open(vault, index_path=idx, auto_sync=False, engine="sql")
    res = {"with_indexes": query_latency(lambda q: ix.recall(q, top=10), NO_MATCH_QUERIES, runs)}
    ix.close()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "index.db"
        shutil.copy(idx, copy)
        conn = sqlite3.connect(copy)
        conn.execute("DROP INDEX IF EXISTS documents_expires")
        conn.execute("DROP INDEX IF EXISTS documents_status")
        conn.commit()
        conn.close()
        ix = dreamdb.open(vault, index_path=copy, auto_sync=False, engine="sql")
        res["without_indexes"] = query_latency(lambda q: ix.recall(q, top=10), NO_MATCH_QUERIES, runs)
        ix.close()
    return res


def render(res: dict) -> str:
    """Plain-text report."""
    L = [f"bench_recall  ({res['machine']['cores']} cores, Python {res['machine']['python']}, SQLite {res['machine']['sqlite']}; "
         f"medians of {res['runs']} runs)", res["processes"]]
    for name, r in (("real vault (dreamcontext)", res["real"]), (f"generated vault ({res['docs']} docs)", res["synthetic"])):
        L.append(f"\n== {name}")
        if "skipped" in r:
            L.append(f"  skipped: {r['skipped']}")
            continue
        b = r.get("bm25s") or {}
        L.append(f"  documents               {r['docs']}")
        L.append(f"  first sync              {r['first_sync_s']:8.2f} s  (runs: {r['first_sync_runs']})"
                 + (f"   | bm25s build {b['build_s']:.2f} s" if b else ""))
        L.append(f"  no-change sync          {r['nochange_sync_ms']:8.1f} ms")
        if "rebuild_s" in r:
            L.append(f"  rebuild (sync --force)  {r['rebuild_s']:8.2f} s")
        if "remember_sync_ms" in r:
            L.append(f"  sync after remember     {r['remember_sync_ms']:8.1f} ms  | the whole CHANGELOG.json re-indexed "
                     f"{r['remember_sync_whole_file_ms']:.1f} ms")
        L.append(f"  index size              {r['index_bytes'] / 1e6:8.1f} MB" + (f"   | bm25s {b['index_bytes'] / 1e6:.1f} MB" if b else ""))
        q = r["query_only"]
        kernel = "C accumulator" if r.get("query_only_numpy") else "numpy passes: the C accumulator is not built"
        L.append(f"  query only  p50/p90     {q['p50_ms']:8.2f} / {q['p90_ms']:.2f} ms (memory engine, {kernel})"
                 + (f"   | bm25s {b['p50_ms']:.2f} / {b['p90_ms']:.2f} ms (timed side by side)" if b else ""))
        if r.get("query_only_numpy"):
            q = r["query_only_numpy"]
            L.append(f"  query only  p50/p90     {q['p50_ms']:8.2f} / {q['p90_ms']:.2f} ms (memory engine, numpy passes,"
                     " DREAMDB_KERNEL=0, timed side by side)")
        if "query_only_sql" in r:
            q = r["query_only_sql"]
            L.append(f"  query only  p50/p90     {q['p50_ms']:8.2f} / {q['p90_ms']:.2f} ms (sql engine, as the CLI)")
        if "no_match" in r:
            a, z = r["no_match"]["with_indexes"], r["no_match"]["without_indexes"]
            L.append(f"  no-match query p50/p90  {a['p50_ms']:8.2f} / {a['p90_ms']:.2f} ms (sql engine)"
                     f"   | without migration 008's indexes {z['p50_ms']:.2f} / {z['p90_ms']:.2f} ms")
        if "warm" in r and "skipped" not in r["warm"]:
            w, f = r["warm"]["warm"], r["warm"]["floor"]
            L.append(f"  load every posting      {w['seconds']:8.2f} s, peak {w['peak_mb']:.0f} MB (Index.warm(), a process"
                     f" of its own)   | the process without it: peak {f['peak_mb']:.0f} MB")
        if "recall_after_edit_ms" in r:
            L.append(f"  recall after an edit    {r['recall_after_edit_ms']:8.1f} ms (memory engine, lazy sync)"
                     f"   | loading every posting first {r['recall_after_edit_whole_load_ms']:.1f} ms")
        if "query_lazy_sync" in r:
            q = r["query_lazy_sync"]
            L.append(f"  query + lazy sync       {q['p50_ms']:8.2f} / {q['p90_ms']:.2f} ms (memory engine)")
        if "cli_recall_ms" in r:
            L.append(f"  CLI `dreamdb recall`    {r['cli_recall_ms']:8.0f} ms  (bytecode cached, as installed)  | floor `python -c pass` {r['python_pass_ms']:.0f} ms, "
                     f"`import dreamdb.cli` {r['python_import_dreamdb_cli_ms']:.0f} ms")
        if "hook_ms" in r:
            L.append(f"  prompt hook             {r['hook_ms']:8.0f} ms  (dreamdb hook user-prompt-submit, JSON payload on stdin)")
        if "generate_s" in r:
            L.append(f"  (vault generation       {r['generate_s']:8.1f} s; the vault is kept for the next run)")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description="dreamdb recall/sync benchmark (medians, beside baselines)")
    ap.add_argument("--quick", action="store_true", help="2k generated docs, 3 runs, 10 CLI runs (CI)")
    ap.add_argument("--runs", type=int, help="runs per figure (default 5; 3 with --quick)")
    ap.add_argument("--docs", type=int, help="generated vault size (default 100000; 2000 with --quick)")
    ap.add_argument("--cli-runs", type=int, help="runs of each process timing (default 10; 3 above 20,000 docs)")
    ap.add_argument("--data", type=Path, default=None, help="evaluation data folder (default as dreamdb eval)")
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="keep the vaults, indexes and compiled bytecode here, reused by later runs (default "
                         "eval/.cache/bench in the source tree)")
    a = ap.parse_args(argv)
    for name in ("runs", "docs", "cli_runs"):
        if getattr(a, name) is not None and getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1 (got {getattr(a, name)})")
    runs = a.runs or (3 if a.quick else 5)
    docs = a.docs or (2000 if a.quick else 100_000)
    from settings import data_folder, scrub

    data = data_folder(a.data, "bench_recall")  # (one named that is not there: exit 7, QA round 143-A F3)
    queries = real_queries(data)  # (a bad gold file refused before anything is timed: QA round 147-G F2)
    if a.workdir is not None:  # (QA round 147-G F7: no way to keep the source tree clean)
        from workdir import prepare

        set_workdir(prepare(a.workdir, real_vault(data)))

    scrub("bench_recall")  # (a hybrid recall mode or a hook switched off timed under these labels: QA round 122-C F5)
    CACHE.mkdir(parents=True, exist_ok=True)
    # (one run at a time on the vaults and indexes under CACHE, the eval suite's set lock: two at once, bench_all.sh
    # beside this script, failed each other with tracebacks, QA round 135-D F7; the second waits, saying so)
    with suite._set_lock(CACHE, lambda msg: print(f"bench_recall: {msg}", file=sys.stderr)):
        return _bench(a, data, runs, docs, queries)


def _bench(a, data: Path, runs: int, docs: int, queries: list[str]) -> int:
    """:func:`main` once the arguments are read and the cache locked."""
    res = {"machine": suite.machine_info(), "runs": runs, "docs": docs, "processes": processes_note()}
    print("benchmarking the real vault …", file=sys.stderr)
    res["real"] = bench_real(data, runs, a.cli_runs or 10, queries)
    print(f"benchmarking a generated {docs}-document vault …", file=sys.stderr)
    import gen_vault

    try:
        res["synthetic"] = bench_synthetic(docs, runs, a.cli_runs or (10 if docs <= 20_000 else 3))
    except gen_vault.GenError as exc:
        print(f"bench_recall: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(res, indent=2) if a.json else render(res), end="" if not a.json else "\n")
    return 0


if __name__ == "__main__":
    from interrupt import run

    sys.exit(run(main))
