"""The benchmark scripts still run (CI smoke: tiny sizes, one run; the figures come from full runs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, SHARED

SCRIPTS = ROOT / "scripts"

#: The tests running bench_recall.py without --workdir (its vaults and indexes in eval/.cache/bench, one run at a time:
#: a second waits for the first, saying so) or removing the bytecode the benchmarks keep there run one after another,
#: on one worker of pytest-xdist.
bench_cache = pytest.mark.xdist_group("eval-bench-cache")


def run(*args, timeout=600, env=None):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          env=env)


def _shared_data() -> list:
    """``--data`` naming the shared folder where there is one; else nothing, and the scripts skip their real-vault
    figures, saying why (a ``--data`` folder that does not exist is refused, exit 7: QA round 143-A F3; these two
    tests then failed on every machine without ../shared, the README's test command with them: QA round 144-H F1)."""
    return ["--data", SHARED] if SHARED.is_dir() else []


@bench_cache
@pytest.mark.slow
def test_bench_recall_smoke():
    p = run(SCRIPTS / "bench_recall.py", "--quick", "--runs", "1", "--cli-runs", "2", "--docs", "300", "--json",
            *_shared_data())
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
def test_bench_ops_smoke():
    # one run of each figure: --quick's 3 rebuilt the real vault's damaged index 4 times, most of the test's time
    p = run(SCRIPTS / "bench_ops.py", "--quick", "--runs", "1", "--json", *_shared_data())
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(p.stdout)
    im = res["import_dataclasses"]  # needs no vault
    assert im["import_dataclasses_ms"] > 0 and im["python_pass_ms"] > 0 and im["runs"] == 10
    sn = res["same_names"]  # (needs no vault either)
    assert sn["notes"] == 300 and sn["runs"] == 1 and sn["same_names_ms"] > 0 and sn["distinct_names_ms"] > 0
    mv = res["moved_folder"]  # (nor this one)
    assert mv["notes"] == 300 and mv["runs"] == 1 and mv["moved_ms"] > 0 and mv["first_sync_ms"] > 0, mv
    hs = res["hook_sync"]  # (nor this one: generated vaults at a tenth of the hook's limits with --quick)
    assert hs["scale"] == 0.1 and hs["limits"]["sync_files"] * 2 <= hs["limits"]["build_files"], hs
    for kind in ("small", "kb"):
        f = hs[kind]
        assert f["files"] > f["changed_files"] > 0 and f["new_cpu_ms"] > 0 and f["all_changed_cpu_ms"] > 0, f
        assert f["paths"] == {"hook_build": "inline", "hook_sync": "inline", "hook_no_change": "inline"}, f
    assert hs["changelog"]["one_added_cpu_ms"] > 0 and hs["changelog"]["real"] == ("skipped" not in res["sync_check"])
    if "skipped" in res["sync_check"]:  # no ../shared: every real-vault figure says why (QA round 88 A2)
        for key in ("sync_check", "damaged_hook", "sessions_bm25", "sessions_hybrid"):
            assert "no vault at" in res[key]["skipped"], key
        return
    assert res["sessions_hybrid"]["skipped"].startswith("--quick")  # (its embed refresh takes minutes)
    sc, dh, s = res["sync_check"], res["damaged_hook"], res["sessions_bm25"]
    assert sc["sync_check_ms"] > 0 and sc["check_ms"] > 0 and sc["quick_check_ms"] > 0 and sc["sound"]
    assert sc["index_bytes"] > 1_000_000 and res["documents"] > 700
    # every damaged run was rebuilt by its hook, which still printed the block (and so did the sound runs)
    assert dh["damaged_hook_ms"] > 0 and dh["sound_hook_ms"] > 0 and dh["rebuilt_runs"] == dh["runs"] == 1
    assert dh["printed_runs"] == 2 * dh["runs"]
    assert s["sessions"] == 4 and s["mode"] == "bm25" and s["printed"] == s["hooks"] and s["fell_back_to_bm25"] == 0
    assert s["per_process_max_ms"] >= s["per_process_median_ms"] > 0 and s["alone_ms"] > 0 and s["batch_ms"] > 0
    assert not Path(res["workdir"]).exists()  # no --workdir: the temporary copy is removed


@bench_cache
@pytest.mark.slow
@pytest.mark.model
def test_bench_embed_scripts_smoke(model_dir):
    # one timed run of each passage size (--quick's 3 took most of the test's time; what runs is the same)
    p = run(SCRIPTS / "bench_embed.py", "--quick", "--runs", "1", "--no-baseline", "--json", "--model-dir", model_dir)
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(p.stdout)
    for tok in (128, 512):
        assert len(res[f"dreamdb_pps_{tok}_runs"]) == 1 and res[f"dreamdb_pps_{tok}"] > 0, res
    cold = res["cold_query_tokens"]
    assert res["load_ms_median"] > 0 and ("unavailable" in cold or cold["same_ids"]), res
    # the example vault (5 notes, English and Turkish): every step runs as on the real vault, whose 40
    # smallest notes --quick would otherwise embed first (most of a minute on 2 cores)
    # (--model-dir is the model measured, whatever DREAMDB_MODEL_DIR says: QA round 40)
    # its `dreamdb recall` processes run with compiled bytecode cached, as bench_recall's (QA round 145-G F3: they ran
    # in os.environ as it was, so under PYTHONDONTWRITEBYTECODE=1 each start compiled dreamdb anew, 337 against 142 ms)
    compiled = Path(ROOT, "eval", ".cache", "bench", "pycache", *ROOT.parts[1:], "dreamdb")
    shutil.rmtree(compiled, ignore_errors=True)
    p = run(SCRIPTS / "bench_embed_index.py", "--quick", "--runs", "1", "--queries", "2", "--json", "--model-dir", model_dir,
            "--vault", ROOT / "examples" / "_dream_context",
            env={**os.environ, "DREAMDB_MODEL_DIR": str(Path(tempfile.gettempdir()) / "no-model-here"),
                 "PYTHONDONTWRITEBYTECODE": "1"})
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(p.stdout)
    assert res["documents"] == 5 and res["full_embed"]["embedded"] == res["vectors"] > 0 and res["queries"] == 2
    assert res["refresh_nochange_ms"] > 0 and res["hybrid_recall_p50_ms"] > 0
    assert not Path(res["vault"]).exists()  # no --workdir: its temporary copy is removed
    assert (compiled / f"entry.{sys.implementation.cache_tag}.pyc").is_file()


def test_bench_embed_index_without_a_model_says_so(tmp_path):
    """QA round 22: without a model the script ended in a traceback."""
    temp = tmp_path / "temp"  # (its own temporary folder: another run's bench-embed-* copy in /tmp is not this one's)
    temp.mkdir()
    p = run(SCRIPTS / "bench_embed_index.py", "--quick", "--model-dir", tmp_path / "no-model", "--vault", ROOT / "examples" / "_dream_context",
            env={**os.environ, "TMPDIR": str(temp)})
    assert p.returncode == 8, p.stderr[-2000:]  # ModelNotInstalled's exit code, as the CLI's
    assert "Traceback" not in p.stderr and p.stderr.startswith("bench_embed_index: ")
    assert not list(temp.glob("bench-embed-*"))


def test_gen_vault_replaces_only_its_own_vaults(tmp_path):
    """QA round 23: gen_vault.py OUT deleted an existing OUT/_dream_context (a user's notes) unasked."""
    user = tmp_path / "user"
    note = user / "_dream_context" / "knowledge" / "mine.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\ntitle: Mine\n---\nkeep me\n", encoding="utf-8")
    p = run(SCRIPTS / "gen_vault.py", user, "--docs", "2", "--vocab", "5000")
    assert p.returncode == 2 and "not made by this script" in p.stderr and "Traceback" not in p.stderr
    assert note.read_text(encoding="utf-8") == "---\ntitle: Mine\n---\nkeep me\n"
    own = tmp_path / "own"
    for docs in (2, 3):  # a second size replaces the script's own vault
        p = run(SCRIPTS / "gen_vault.py", own, "--docs", docs, "--vocab", "5000")
        assert p.returncode == 0, p.stderr
        assert len(list((own / "_dream_context" / "knowledge").rglob("*.md"))) == docs
    for args in (("--vocab", "0"), ("--docs", "0")):
        p = run(SCRIPTS / "gen_vault.py", tmp_path / "x", *args)
        assert p.returncode == 2 and "at least" in p.stderr and "Traceback" not in p.stderr, args
    afile = tmp_path / "afile"
    afile.write_text("x")
    p = run(SCRIPTS / "gen_vault.py", afile, "--docs", "2", "--vocab", "5000")
    assert p.returncode == 2 and "not a folder" in p.stderr and "Traceback" not in p.stderr
    for inside in (user / "_dream_context", user / "_dream_context" / "knowledge"):  # QA round 24: into a vault
        p = run(SCRIPTS / "gen_vault.py", inside, "--docs", "2", "--vocab", "5000")
        assert p.returncode == 2 and "inside a vault" in p.stderr, inside
    assert sorted(x.name for x in (user / "_dream_context").iterdir()) == ["knowledge"]


@bench_cache
def test_bench_recall_refuses_runs_or_docs_below_one():
    for args in (("--runs", "0"), ("--docs", "-5"), ("--cli-runs", "0")):
        p = run(SCRIPTS / "bench_recall.py", "--quick", *args)
        assert p.returncode == 2 and "must be at least 1" in p.stderr and "Traceback" not in p.stderr, args


@bench_cache
def test_bench_recall_refuses_a_bad_gold_file_before_timing_anything(tmp_path):
    """QA round 147-G F2: a gold line without "query" was a KeyError traceback, a line that is not JSON a
    JSONDecodeError, a non-UTF-8 byte a UnicodeDecodeError, an empty file an IndexError after the real-vault sync
    timings had run. The eval's own gold loader reads it now, before anything is timed: its file:line error, exit 2."""
    vault = tmp_path / "vaults" / "dreamcontext" / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "a.md").write_text("---\ntitle: A\n---\nsleep consolidation\n", encoding="utf-8")
    gold = tmp_path / "eval" / "dreamcontext-gold-train.jsonl"
    gold.parent.mkdir()
    good = '{"id": "a", "query": "sleep", "expected": ["knowledge/a"]}\n'
    for content, said in ((good + '{"id": "b", "text": "x"}\n', f"{gold}:2: not a gold query ('query' must be a"),
                          (b"not json\n", f"{gold}:1: not a gold query ("),
                          (good.encode() + b'{"id": "c", "query": "caf\xe9", "expected": ["knowledge/a"]}\n',
                           f"Gold set {gold} is not UTF-8 text"),
                          (b"", f"Gold set {gold} holds no query")):
        gold.write_bytes(content if isinstance(content, bytes) else content.encode())
        p = run(SCRIPTS / "bench_recall.py", "--quick", "--docs", "10", "--data", tmp_path, timeout=120)
        assert p.returncode == 2 and p.stdout == "", (content, p.stdout, p.stderr)
        assert p.stderr.startswith(f"bench_recall: Error: {said}"), (content, p.stderr)
        assert "Traceback" not in p.stderr and "benchmarking" not in p.stderr, p.stderr
    # a good file's questions are the queries timed
    sys.path.insert(0, str(SCRIPTS))
    import bench_recall

    gold.write_text(good + '{"id": "b", "query": "hook timing", "alt": ["knowledge/a"]}\n', encoding="utf-8")
    assert bench_recall.real_queries(tmp_path) == ["sleep", "hook timing"]
    gold.unlink()
    assert bench_recall.real_queries(tmp_path) == bench_recall.FALLBACK_QUERIES


def test_bench_recall_keeps_its_vaults_and_bytecode_in_the_workdir(tmp_path, monkeypatch):
    """QA round 147-G F7: bench_recall.py had no --workdir (its vaults and indexes always went to eval/.cache/bench in
    the source tree), and the timed processes of every benchmark wrote their bytecode to <repo>/eval/.cache/bench/pycache
    whatever --workdir said. With --workdir both are kept there."""
    work = tmp_path / "work"
    p = run(SCRIPTS / "bench_recall.py", "--quick", "--runs", "1", "--cli-runs", "1", "--docs", "20", "--data", tmp_path,
            "--workdir", work, "--json", timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(p.stdout)
    assert res["synthetic"]["docs"] == 20 and res["real"]["skipped"].startswith("no vault at")
    assert (work / "gen-20" / "index.db").is_file() and (work / "pycache").is_dir()
    assert list((work / "pycache").rglob("dreamdb/cli/*.pyc")), "the timed processes' bytecode is in the workdir"
    sys.path.insert(0, str(SCRIPTS))
    import bench_recall

    monkeypatch.setattr(bench_recall, "CACHE", bench_recall.CACHE)  # (put back after the test)
    bench_recall.set_workdir(work)
    assert bench_recall.cli_env()["PYTHONPYCACHEPREFIX"] == str(work.resolve() / "pycache")
    for script in ("bench_ops.py", "bench_embed_index.py"):  # (their --workdir moves it too)
        assert "set_workdir(" in (SCRIPTS / script).read_text(encoding="utf-8"), script
    p = run(SCRIPTS / "bench_recall.py", "--quick", "--docs", "10", "--workdir", tmp_path / "x" / "_dream_context")
    assert p.returncode == 2 and "is in the vault" in p.stderr and not (tmp_path / "x").exists(), p.stderr


def test_bench_embed_index_names_a_missing_vault(tmp_path):
    """QA round 23: without ../shared the quick run failed naming its own temporary copy."""
    p = run(SCRIPTS / "bench_embed_index.py", "--quick", "--vault", tmp_path / "nowhere")
    assert p.returncode == 2 and f"no vault at {tmp_path / 'nowhere'}" in p.stderr and "bench-embed-" not in p.stderr


def test_bench_embed_index_names_a_vault_without_notes_and_checks_its_options_first(tmp_path):
    """QA round 147-G F8: --quick on a vault whose knowledge/ holds no note said "Vault path does not exist:
    /tmp/bench-embed-…/_dream_context" (its own empty copy), the full run named the copy too, after loading the model;
    and --runs 0 in a clone without ../shared was "skipped", exit 0, the options checked only after that."""
    vault = tmp_path / "ev" / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    p = run(SCRIPTS / "bench_embed_index.py", "--quick", "--vault", vault)
    assert p.returncode == 2 and p.stderr.endswith(
        f"error: no note to benchmark in {vault / 'knowledge'} (--quick embeds its 40 smallest .md files)\n"), p.stderr
    # the full run says it before loading a model (none is named here), naming the vault given
    p = run(SCRIPTS / "bench_embed_index.py", "--vault", vault, "--model-dir", tmp_path / "no-model")
    assert p.returncode == 2 and p.stderr.endswith(f"\nbench_embed_index: the vault {vault} has no note with text to"
                                                   " make a query of\n"), p.stderr
    assert "bench-embed-" not in p.stderr and "Traceback" not in p.stderr
    p = run(SCRIPTS / "bench_embed_index.py", "--quick", "--runs", "0",
            env={**os.environ, "DREAMDB_EVAL_DATA": str(tmp_path)})
    assert p.returncode == 2 and "--runs must be at least 1 (got 0)" in p.stderr and "skipped" not in p.stdout


def test_bench_embed_index_skips_when_the_default_vault_is_absent(tmp_path):
    """QA round 68 M6: `scripts/bench_all.sh --quick` on a clone without ../shared exited 1: this script refused
    (exit 2) where bench_recall.py skips its real-vault part, and it ignored DREAMDB_EVAL_DATA."""
    p = run(SCRIPTS / "bench_embed_index.py", "--quick", env={**os.environ, "DREAMDB_EVAL_DATA": str(tmp_path)})
    assert p.returncode == 0 and p.stdout.startswith(
        f"skipped: no vault at {tmp_path / 'vaults' / 'dreamcontext' / '_dream_context'}"), p.stdout + p.stderr


@bench_cache
def test_benchmarks_refuse_a_named_data_folder_that_is_not_there(tmp_path):
    """QA round 143-A F3: `bench_recall.py --data /nonexistent` (and bench_ops.py) printed "skipped: no vault at …" and
    exited 0, so a mistyped --data silently dropped the real-vault figures; `dreamdb eval --data` says it, exit 7. The
    skip stays for the default ../shared (and for a named folder that holds no vault: the test above)."""
    gone = tmp_path / "nowhere"
    for args in ((SCRIPTS / "bench_recall.py", "--quick", "--docs", "10", "--data", gone),
                 (SCRIPTS / "bench_ops.py", "--quick", "--data", gone),
                 (SCRIPTS / "fusion_ceiling.py", "--data", gone)):
        p = run(*args, timeout=120)
        name = args[0].stem
        assert p.returncode == 7 and p.stdout == "", (args, p.stdout, p.stderr)
        assert p.stderr.startswith(f"{name}: Error: Evaluation data folder not found: {gone} (the path does not exist).")
        assert "skipped" not in p.stderr and "Traceback" not in p.stderr
    p = run(SCRIPTS / "bench_embed_index.py", "--quick", env={**os.environ, "DREAMDB_EVAL_DATA": str(gone)})
    assert p.returncode == 7 and "Evaluation data folder not found" in p.stderr and "--vault" in p.stderr, p.stderr


def test_bench_all_refuses_a_python_that_is_not_there(tmp_path):
    """QA round 145-G F5: PYTHON naming a missing interpreter fell back to python3 silently (`[ -x "$py" ] ||
    py=python3`), and the benchmarks ran under another Python than the one named: exit 2 with what to do."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    shutil.copy(SCRIPTS / "bench_all.sh", scripts)
    ran = tmp_path / "ran"
    (scripts / "bench_mark.py").write_text(f"open({str(ran)!r}, 'a').write('x')\n")
    for shell in ("sh", "bash"):
        for python in (str(tmp_path / "no-python"), "no-such-python3", str(tmp_path)):
            p = subprocess.run([shell, str(scripts / "bench_all.sh"), "--quick"], capture_output=True, text=True,
                               env={"PYTHON": python, "PATH": "/usr/bin:/bin"}, timeout=60)
            assert p.returncode == 2 and p.stdout == "", (shell, python, p.stdout)
            assert p.stderr == (f"bench_all.sh: PYTHON={python} is no executable interpreter: name one (a path or a"
                                " command on PATH), or unset PYTHON for .venv/bin/python (else python3)\n"), p.stderr
        assert not ran.exists()
        p = subprocess.run([shell, str(scripts / "bench_all.sh")], capture_output=True, text=True,
                           env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"}, timeout=60)
        assert p.returncode == 0 and ran.read_text() == "x", p.stderr
        ran.unlink()


def test_bench_all_reports_a_failing_scripts_exit_code(tmp_path):
    """QA round 23: the failure line read "failed (exit 0)" ($? was basename's)."""

    scripts = tmp_path / "scripts"
    scripts.mkdir()
    shutil.copy(SCRIPTS / "bench_all.sh", scripts)
    (scripts / "bench_fail.py").write_text("import sys\nsys.exit(3)\n")
    for shell in ("sh", "bash"):  # (bash gave $? of the command substitution)
        p = subprocess.run([shell, str(scripts / "bench_all.sh")], capture_output=True, text=True,
                           env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"}, timeout=60)
        assert p.returncode == 1 and "bench_fail.py failed (exit 3)" in p.stdout, shell
    # --help says how to use it and runs nothing (QA round 122-C F8: "unknown option", exit 2)
    p = subprocess.run(["sh", str(scripts / "bench_all.sh"), "--help"], capture_output=True, text=True,
                       env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"}, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("Usage: scripts/bench_all.sh [--quick]") and "bench_fail" not in p.stdout


def test_fusion_ceiling_names_the_missing_index_and_what_builds_it(tmp_path):
    if not (SHARED / "eval-data" / "scifact").is_dir():
        pytest.skip(f"no SciFact under {SHARED} (the script then skips, tested below)")
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "fusion_ceiling.py"), "--cache", str(tmp_path),
                        "--data", str(SHARED)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "no evaluation index at" in p.stderr and \
        "python -m eval --set scifact --modes hybrid" in p.stderr


def test_fusion_ceiling_says_a_partial_or_foreign_cache_is_damaged(tmp_path):
    """QA round 147-G F3: a cache with an index file but a manifest that is not JSON was a JSONDecodeError traceback,
    one without slug_to_id a KeyError, one without the vault beside it a VaultNotFound traceback; an empty index scored
    every query 0, exit 0. Each now says the index is damaged and what rebuilds it, exit 1."""
    scifact = tmp_path / "data" / "eval-data" / "scifact"
    scifact.mkdir(parents=True)
    (scifact / "corpus.jsonl").write_text('{"id": "1", "title": "Sleep", "text": "sleep consolidation"}\n')
    (scifact / "queries.jsonl").write_text('{"id": "q1", "text": "sleep"}\n')
    (scifact / "qrels.tsv").write_text("q1\t1\t1\n")
    cache = tmp_path / "c5"
    folder = cache / "scifact" / "corpus"
    folder.mkdir(parents=True)
    (folder / "index.db").write_bytes(b"")
    rebuild = f"rerun python -m eval --set scifact --modes hybrid --cache {cache}"
    for manifest, why in (("garbage", f"{folder / 'manifest.json'} is not JSON"),
                          ('{"x": 1}', f"{folder / 'manifest.json'} holds no slug_to_id map"),
                          ('{"slug_to_id": {}}', f"no vault {folder / '_dream_context'} beside it"),
                          ('{"slug_to_id": {"1": "1"}}', "mkdir:it holds no document")):
        if why.startswith("mkdir:"):
            (folder / "_dream_context").mkdir()
            why = why[len("mkdir:"):]
        (folder / "manifest.json").write_text(manifest)
        p = run(SCRIPTS / "fusion_ceiling.py", "--data", tmp_path / "data", "--cache", cache, timeout=120)
        assert p.returncode == 1 and p.stdout == "", (manifest, p.stdout, p.stderr)
        assert p.stderr == f"fusion_ceiling: the evaluation index at {folder} is damaged ({why}): {rebuild}\n", p.stderr


def _scifact_folder(root: Path, n_docs: int) -> Path:
    """A SciFact-shaped data folder under ``root`` with ``n_docs`` short abstracts and two judged claims."""
    words = ("apple", "river", "mountain", "cloud", "engine", "harbor", "orchid", "glacier", "falcon", "canyon")
    scifact = root / "eval-data" / "scifact"
    scifact.mkdir(parents=True, exist_ok=True)
    (scifact / "corpus.jsonl").write_text("".join(
        json.dumps({"id": str(i), "title": f"note {words[i % 10]} {i}",
                    "text": " ".join(words[(i + k) % 10] for k in (3, 5, 7))}) + "\n" for i in range(n_docs)))
    (scifact / "queries.jsonl").write_text('{"id": "q0", "text": "note about apple"}\n'
                                           '{"id": "q1", "text": "note about river"}\n')
    (scifact / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq0\t0\t1\nq1\t1\t1\n")
    return root


@pytest.mark.model
def test_fusion_ceiling_refuses_an_index_whose_dense_channel_is_partial(tmp_path, model_dir):
    """QA round 150-G F1: documents added to the collection after its index was embedded (a later ``--modes bm25``
    run syncs them, embeds nothing) left 70 chunks without a vector; the script's recalls embed none above 64 waiting
    and rank the dense channel over the 3 documents embedded before, so it printed every variant, "dense alone"
    included, exit 0. It now counts them as the suite counts them for --max-embed and refuses, naming the command
    that embeds them; once embedded, it measures."""
    env = {**os.environ, "DREAMDB_MODEL_DIR": str(model_dir)}
    data, cache = _scifact_folder(tmp_path / "data", 3), tmp_path / "cache"
    evaluate = ("-m", "eval", "--data", data, "--set", "scifact", "--no-baseline", "--cache", cache)
    p = run(*evaluate, "--modes", "bm25,hybrid", env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    _scifact_folder(data, 73)
    p = run(*evaluate, "--modes", "bm25", env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    folder = cache / "scifact" / "corpus"
    index, vault = folder / "index.db", folder / "_dream_context"
    p = run(SCRIPTS / "fusion_ceiling.py", "--data", data, "--cache", cache, env=env, timeout=300)
    assert p.returncode == 1 and p.stdout == "", (p.stdout, p.stderr)
    assert p.stderr == (f"fusion_ceiling: the dense channel of the evaluation index at {folder} is incomplete: 70 chunks"
                        f" would need embedding first; embed them with `DREAMDB_INDEX={index} dreamdb embed refresh"
                        f" --vault {vault}` or rerun python -m eval --set scifact --modes hybrid --cache {cache}\n")
    p = run("-m", "dreamdb", "embed", "refresh", "--vault", vault, env={**env, "DREAMDB_INDEX": str(index)}, timeout=300)
    assert p.returncode == 0 and p.stdout.startswith("70 embedded"), (p.stdout, p.stderr)
    p = run(SCRIPTS / "fusion_ceiling.py", "--data", data, "--cache", cache, "--json", env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["queries"] == 2


def test_fusion_ceiling_stops_at_a_partial_dense_channel(monkeypatch):
    """QA round 150-G F1: a recall whose dense channel was partial (its note "dense results are partial": chunks left
    without a vector, e.g. added after the check) was recorded as any other; the script now stops there."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import fusion_ceiling

    class Hit:
        mode = "hybrid"

    class FakeIndex:
        def __init__(self, notes):
            self.notes = notes

        def recall(self, text, **kw):
            return [Hit()]

        def take_notes(self):
            return self.notes

    partial = ("dense results are partial: 70 texts still wait for embedding; run `dreamdb embed refresh`")
    with pytest.raises(SystemExit) as stop:
        fusion_ceiling._record(FakeIndex([partial]), [("q0", "apple")], None)
    assert stop.value.code == f"fusion_ceiling: query q0: {partial}"
    assert fusion_ceiling._record(FakeIndex(["some other note"]), [("q0", "apple")], None) == [("q0", None)]


def test_a_workdir_copy_is_reused_only_for_its_own_source_and_mode(tmp_path, capsys):
    """QA round 103-A F1: ``bench_embed_index.py --workdir DIR`` reused DIR's copy whatever it was a copy of, and
    printed the --quick subset's figures (40 documents) as the whole real vault's, then as the examples vault's; and
    ``bench_ops.py`` took a real project's vault for its copy (damaging and rebuilding its index)."""
    sys.path.insert(0, str(SCRIPTS))
    from workdir import vault_copy

    made = []

    def make(dest):
        made.append(dest)
        (dest / "knowledge").mkdir(parents=True)

    src, other, work = ROOT / "examples" / "_dream_context", tmp_path / "other", tmp_path / "work"
    dest = vault_copy(src, work, "quick", make)
    assert dest == work / "_dream_context" and vault_copy(src, work, "quick", make) == dest and len(made) == 1
    for args in ((src, work, "full"), (other, work, "quick")):
        with pytest.raises(SystemExit) as exit_:
            vault_copy(*args, make)
        assert exit_.value.code == 2 and f"holds a quick copy of {src}" in capsys.readouterr().err
    project = tmp_path / "project"
    (project / "_dream_context" / "knowledge").mkdir(parents=True)
    with pytest.raises(SystemExit):
        vault_copy(src, project, "full", make)
    assert "a _dream_context folder no benchmark made" in capsys.readouterr().err and len(made) == 1
    # a file, or a folder inside a vault (QA round 104-A F9: a traceback; a copy put inside the real vault)
    (tmp_path / "afile").write_text("x")
    for work, said in ((tmp_path / "afile", "is not a folder"), (project / "_dream_context", "is in the vault")):
        with pytest.raises(SystemExit):
            vault_copy(src, work, "full", make)
        assert said in capsys.readouterr().err
    assert len(made) == 1
    # the scripts check their --workdir before making it (QA round 105 F7, F8: a file was a traceback, a folder in
    # the copied vault was made, and the vault copied into itself)
    mine = tmp_path / "myvault"
    (mine / "knowledge").mkdir(parents=True)
    (mine / "knowledge" / "a.md").write_text("hi\n")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")  # (QA round 106 F1: these were tracebacks)
    for work, said in ((tmp_path / "afile", "is not a folder"), (mine / "bench", "is inside"),
                       (tmp_path / "dangling", "is not a folder"), (tmp_path / "afile" / "sub", "cannot make")):
        p = run(SCRIPTS / "bench_embed_index.py", "--vault", mine, "--workdir", work, "--runs", "1", "--queries", "1")
        assert p.returncode == 2 and said in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert sorted(x.name for x in mine.iterdir()) == ["knowledge"]


def test_scripts_refuse_bad_values_without_a_traceback(tmp_path):
    """QA round 103-A F2 and F4: bench_embed.py's --threads 0, --batch 0 and a missing --model-dir, gen_vault.py's
    negative --seed (which also left a half-made folder) were tracebacks; fusion_ceiling.py without its data or
    index too; bench_all.sh passed options only some scripts take to all of them."""
    for args, said, code in (((SCRIPTS / "bench_embed.py", "--quick", "--threads", "0"), "--threads must be at least 1", 2),
                             ((SCRIPTS / "bench_embed.py", "--quick", "--batch", "0"), "--batch must be at least 1", 2),
                             ((SCRIPTS / "bench_embed.py", "--quick", "--runs", "0"), "--runs must be at least 1", 2),
                             ((SCRIPTS / "bench_embed.py", "--quick", "--model-dir", tmp_path / "none"),
                              "bench_embed: No embedding model installed", 8),
                             ((SCRIPTS / "gen_vault.py", tmp_path / "g", "--docs", "2", "--seed", "-1"),
                              "--seed at least 0", 2)):
        p = run(*args)
        assert p.returncode == code and said in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)
    assert not (tmp_path / "g").exists()
    p = run(SCRIPTS / "fusion_ceiling.py", "--data", tmp_path)
    assert p.returncode == 0 and p.stdout.startswith("skipped: no SciFact at"), p.stdout
    p = subprocess.run(["sh", str(SCRIPTS / "bench_all.sh"), "--runs", "3"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "unknown option --runs (only --quick" in p.stderr


def test_a_script_interrupted_ends_with_one_line_and_by_sigint(tmp_path):
    """QA round 117-B: Ctrl-C in a benchmark printed Python's traceback of wherever it was: every script's main runs
    under scripts/interrupt.py (gen_vault.py here: it writes nothing outside its folder), which ends by SIGINT, so that
    bash stops scripts/bench_all.sh there (QA round 120-A F2: exit 130 went on to the next benchmark)."""
    import signal
    import time

    assert all("from interrupt import run" in f.read_text() for f in SCRIPTS.glob("*.py")
               if '__name__ == "__main__"' in f.read_text())
    argv = [sys.executable, str(SCRIPTS / "gen_vault.py"), str(tmp_path / "out"), "--docs", "400000", "--vocab", "5000"]
    p = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == -signal.SIGINT, (p.returncode, err[-2000:])  # (ended by SIGINT: a shell script stops)
    assert "interrupted (Ctrl-C); no figures printed" in err and "Traceback" not in err, err[-2000:]


def test_the_benchmarks_time_without_the_users_dreamdb_settings(monkeypatch, capsys):
    """QA round 122-C F5: with DREAMDB_RECALL_MODE=hybrid set, bench_recall timed hybrid recalls under the BM25 labels,
    and with DREAMDB_MEMORY_HOOK=0 a hook switched off. Each benchmark removes them first, and says which."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    import settings

    for name in settings.HOOK_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DREAMDB_RECALL_MODE", "hybrid")
    monkeypatch.setenv("DREAMDB_MEMORY_HOOK", "0")
    assert sorted(settings.scrub("bench_x")) == ["DREAMDB_MEMORY_HOOK", "DREAMDB_RECALL_MODE"]
    assert "DREAMDB_RECALL_MODE" not in os.environ and "DREAMDB_MEMORY_HOOK" not in os.environ
    assert "bench_x: timing without the settings DREAMDB_RECALL_MODE, DREAMDB_MEMORY_HOOK" in capsys.readouterr().err
    for script in ("bench_recall.py", "bench_embed_index.py", "bench_ops.py"):  # (each uses it)
        assert "from settings import" in (ROOT / "scripts" / script).read_text(encoding="utf-8"), script


@bench_cache
def test_two_bench_recall_runs_take_turns_and_a_failed_timing_process_is_said(tmp_path, monkeypatch):
    """QA round 135-D F7: two at once (bench_all.sh beside bench_recall.py) shared eval/.cache/bench and failed each
    other with tracebacks (LockTimeout; a CalledProcessError hiding the child's error). The second waits, saying so."""
    import signal

    from filelock import FileLock

    cache = ROOT / "eval" / ".cache" / "bench"
    cache.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(cache / ".eval.lock"))
    lock.acquire(timeout=60)  # (as a run holds it)
    (tmp_path / "none").mkdir()  # (a data folder without the vault: one that does not exist is refused, 143-A F3)
    try:
        p = subprocess.Popen([sys.executable, str(SCRIPTS / "bench_recall.py"), "--quick", "--docs", "50", "--data",
                              str(tmp_path / "none")], cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             text=True)
        try:
            said = [p.stderr.readline() for _ in range(2)]  # (the settings it times without, then the wait)
            assert "bench_recall: bench: another evaluation run is using the cache" in said[-1], said
            assert not any("benchmarking" in line for line in said)
            assert p.poll() is None  # (waiting, not failing)
        finally:
            p.send_signal(signal.SIGINT)
            p.communicate(timeout=60)
    finally:
        lock.release()
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import bench_recall

    with pytest.raises(SystemExit, match=r"bench_recall: the warm timing process failed \(exit 1\): .*VaultNotFound"):
        bench_recall._warm_process(tmp_path / "no-vault", tmp_path / "index.db", "warm")


def test_bench_recall_times_only_processes_that_answered(tmp_path, monkeypatch):
    """QA round 150-G F5: bench_recall's wall() ran its processes with check=False and read nothing they printed: a
    `dreamdb recall` that failed or found nothing, or a prompt hook that printed no block, was reported as the
    figure of one that answered. Each run (the warm-up too) must now exit 0 and print what it should, else the
    benchmark ends saying which process and what it printed or said."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import bench_recall

    monkeypatch.setattr(bench_recall, "CACHE", bench_recall.CACHE)  # (put back after the test)
    bench_recall.set_workdir(tmp_path / "work")
    vault = tmp_path / "project" / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault)
    idx = tmp_path / "index.db"
    out = bench_recall.time_cli(vault, idx, "sleep consolidation", 1, hook=True)
    assert out["cli_recall_ms"] > 0 and out["hook_ms"] > 0
    with pytest.raises(SystemExit) as stop:  # (a query that finds nothing: the recall prints no hit)
        bench_recall.time_cli(vault, idx, "zqxv wkjq", 1)
    assert stop.value.code == ("bench_recall: the dreamdb recall 'zqxv wkjq' timing process printed nothing, not '1. '…,"
                               " so its time is not one of what it measures; it said: No matches.")
    with pytest.raises(SystemExit) as stop:  # (the vault gone: recall fails)
        bench_recall.time_cli(tmp_path / "gone" / "_dream_context", idx, "sleep", 1)
    assert stop.value.code.startswith("bench_recall: the dreamdb recall 'sleep' timing process failed (exit ")
    py = sys.executable
    assert bench_recall.wall([py, "-c", "print('1. feature/x')"], 2, what="recall", printed="1. ") > 0
    assert bench_recall.wall([py, "-c", "pass"], 1, what="python -c pass") > 0
    for cmd, printed, said in (
            ("import sys; sys.exit('no vault here')", None, "failed (exit 1): no vault here"),
            ("raise ValueError('bad')", "1. ", "failed (exit 1): ValueError: bad"),
            ("import sys; print('No matches.', file=sys.stderr)", "1. ", "printed nothing, not '1. '…, so its time is"
             " not one of what it measures; it said: No matches."),
            ("print('2 hits')", "1. ", "printed '2 hits', not '1. '…, so its time is not one of what it measures")):
        with pytest.raises(SystemExit) as stop:
            bench_recall.wall([py, "-c", cmd], 1, what="dreamdb recall 'q'", printed=printed)
        assert stop.value.code == f"bench_recall: the dreamdb recall 'q' timing process {said}"


def test_timed_processes_run_this_trees_dreamdb_with_its_bytecode_cached(tmp_path, monkeypatch):
    """QA round 145-G F2: bench_recall timed the console script of the interpreter's environment (an editable install of
    another checkout), bench_ops and bench_embed_index `python -m dreamdb` from whatever folder: the figures were of
    another tree's code. Every timed process runs bench_recall.dreamdb_command() in cli_env(): PYTHONPATH led by this
    tree, bytecode cached under eval/.cache/bench/pycache (F3), PYTHONDONTWRITEBYTECODE dropped."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import bench_recall

    other = tmp_path / "other"
    (other / "dreamdb").mkdir(parents=True)
    (other / "dreamdb" / "__init__.py").write_text("raise SystemExit('the other tree')\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(other))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = bench_recall.cli_env()
    assert env["PYTHONPATH"].split(os.pathsep) == [str(ROOT), str(other)]
    assert env["PYTHONPYCACHEPREFIX"] == str(ROOT / "eval" / ".cache" / "bench" / "pycache")
    assert "PYTHONDONTWRITEBYTECODE" not in env
    p = subprocess.run([sys.executable, "-c", "import dreamdb; print(dreamdb.__file__)"], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    assert p.stdout.strip() == str(ROOT / "dreamdb" / "__init__.py"), p.stderr
    p = subprocess.run([*bench_recall.dreamdb_command(), "--version"], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert p.returncode == 0 and "the other tree" not in p.stderr, p.stderr
    assert bench_recall.processes_note().startswith(f"processes: {' '.join(bench_recall.dreamdb_command())} with"
                                                    f" PYTHONPATH={ROOT} (this tree's dreamdb)")


def test_bench_rank_smoke(tmp_path):
    """scripts/bench_rank.py (QA round 153-C F1) times the ranking statement's fast and plain forms side by side and
    checks that they return the same hits and floats."""
    import dreamdb

    vault = tmp_path / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    index = dreamdb.open(vault)
    index.sync()
    index.close()
    p = run(SCRIPTS / "bench_rank.py", vault, "--runs", "1", "--long", "400", "--pieces", "1", "--short", "sleep debt",
            "--json")
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(p.stdout)
    assert res["runs"] == 1 and res["documents"] > 0
    kinds = [(r["kind"], r["top"]) for r in res["results"]]
    assert kinds == [("prose", 5), ("prose", 50), ("short", 5), ("short", 50)], res
    assert all(r["same"] and r["fast_ms"] > 0 and r["plain_ms"] > 0 and r["hits"] > 0 for r in res["results"]), res
    assert res["results"][0]["characters"] == 400 and res["results"][0]["terms"] > 10
    p = run(SCRIPTS / "bench_rank.py", vault, "--runs", "0")
    assert p.returncode == 2 and "--runs must be at least 1" in p.stderr and "Traceback" not in p.stderr
