"""Start-up cost: the CLI and the recall path import nothing heavy (STYLE-EXAMPLES: watch -X importtime)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("numpy", "onnxruntime", "sqlite_vec", "tokenizers", "yaml", "bm25s", "tabulate")
STDLIB_SLOW = ("dataclasses", "inspect")
"""Imported by ``dataclasses``: ≈ 20–40 ms of a one-shot recall process (see :mod:`dreamdb.records`)."""


def _loaded_after(code: str, env: dict | None = None) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, env=env).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_cli_import_is_light():
    mods = _loaded_after("import dreamdb.cli, dreamdb.cli.recall, dreamdb.api")
    assert not [m for m in HEAVY if m in mods]


@pytest.fixture()
def synced_vault(tmp_path):
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "a.md").write_text("---\ntitle: A\n---\nsome words here\n")
    subprocess.run([sys.executable, "-m", "dreamdb", "sync", "--vault", str(vault)], check=True, capture_output=True)
    return vault


def test_recall_on_synced_vault_stays_light(synced_vault):
    vault = synced_vault
    mods = _loaded_after(
        "import dreamdb\n"
        f"ix = dreamdb.open({str(vault)!r}, engine='sql')\n"
        "hits = ix.recall('words')\n"
        "assert hits and hits[0].snippet"
    )
    assert not [m for m in HEAVY if m in mods]


def test_status_stays_light(synced_vault):
    """QA round 100-C F7: ``status`` imported numpy (≈ 130 ms) through the embeddings store's module import, though
    it only counts rows; the functions that compute import it."""
    mods = _loaded_after(
        "import contextlib, io\n"
        "import dreamdb\n"
        f"ix = dreamdb.open({str(synced_vault)!r}, engine='sql')\n"
        "assert ix.status()['documents'] == 1\n"
        "from dreamdb.entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['status', '--vault', {str(synced_vault)!r}, '--json']) == 0\n"
    )
    assert "numpy" not in mods and "onnxruntime" not in mods


def test_cli_recall_process_stays_light(synced_vault):
    vault = synced_vault
    mods = _loaded_after(
        "import contextlib, io\n"
        "from dreamdb.entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['recall', '--vault', {str(vault)!r}, '--json', 'words']) == 0\n"
        "    assert main(['hook', 'user-prompt-submit']) == 0\n"
    )
    assert not [m for m in HEAVY if m in mods and m != "tabulate"]
    assert not [m for m in STDLIB_SLOW if m in mods]


def test_recall_with_an_index_outside_dreamdbs_folders_spares_platformdirs(synced_vault, tmp_path):
    """platformdirs (~15 ms of a recall process) is needed only for an index in the user cache folder."""
    index = tmp_path / "elsewhere" / "index.db"
    mods = _loaded_after(
        "import dreamdb\n"
        f"ix = dreamdb.open({str(synced_vault)!r}, index_path={str(index)!r}, engine='sql')\n"
        "assert ix.recall('words')",
        env={k: v for k, v in os.environ.items() if k != "DREAMDB_CACHE_DIR"},  # the platform's cache folder
    )
    assert "platformdirs" not in mods


def test_recall_and_the_hook_find_the_lexicon_and_the_log_without_platformdirs(synced_vault, tmp_path):
    """Looking for the lexicon (in the user data folder, as a recall does by default) and writing the hook's log (in
    the user cache folder) imported platformdirs, which loads tempfile, shutil, random, lzma and bz2: ≈ 8 ms of a
    95 ms ``dreamdb recall`` on the real vault (7 Dec 2026). On Linux the folders are worked out as platformdirs
    works them out there (:func:`dreamdb.config.xdg_user_folder`)."""
    if sys.platform != "linux":
        pytest.skip("the folders are worked out without platformdirs on Linux only")
    env = {k: v for k, v in os.environ.items() if k not in ("DREAMDB_CACHE_DIR", "DREAMDB_LEXICON", "DREAMDB_HOOK_LOG")}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), XDG_CACHE_HOME=str(tmp_path / "cache"), DREAMDB_HOOK_TIMING="1",
               DREAMDB_HOOK_VERBOSE="1")
    payload = json.dumps({"prompt": "some words here please", "cwd": str(synced_vault)})
    mods = _loaded_after(
        "import contextlib, io, sys\n"
        "from dreamdb.entry import main\n"
        "from dreamdb.lexicon import lexicon_path\n"
        f"assert str(lexicon_path()).startswith({str(tmp_path / 'data' / 'dreamdb')!r}), lexicon_path()\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    assert main(['recall', '--vault', {str(synced_vault)!r}, 'words']) == 0\n"
        f"    sys.stdin = io.TextIOWrapper(io.BytesIO({payload!r}.encode()))\n"
        "    assert main(['hook', 'user-prompt-submit']) == 0\n"
        "assert 'some words here' in out.getvalue(), out.getvalue()\n",
        env=env)
    assert "platformdirs" not in mods
    logged = (tmp_path / "cache" / "dreamdb" / "hook.log").read_text()
    assert f"{synced_vault}: " in logged and "hook took" in logged, logged  # (the prompt recalled, and logged)


@pytest.mark.parametrize("variable, default, ask", [("XDG_DATA_HOME", ".local/share", "user_data_dir"),
                                                    ("XDG_CACHE_HOME", ".cache", "user_cache_dir")])
def test_the_user_folders_worked_out_without_platformdirs_are_its_own(monkeypatch, variable, default, ask):
    """:func:`dreamdb.config.xdg_user_folder` gives the folder platformdirs gives, or leaves it to platformdirs
    (``None``), for every form of the variable and of ``HOME``."""
    platformdirs = pytest.importorskip("platformdirs")
    if sys.platform != "linux":
        pytest.skip("Linux only")
    from dreamdb.config import xdg_user_folder

    answered = 0
    for value in (None, "", "  ", "/x", "/x/", "//x", "/a b ", "relative", "~/x"):
        for home in (None, "/root", "/home/u/", "/", "relative", ""):
            for name, set_to in ((variable, value), ("HOME", home)):
                if set_to is None:
                    monkeypatch.delenv(name, raising=False)
                else:
                    monkeypatch.setenv(name, set_to)
            ours = xdg_user_folder(variable, default)
            if ours is not None:
                answered += 1
                assert str(ours) == getattr(platformdirs, ask)("dreamdb", appauthor=False), (value, home)
            else:
                assert value and value.strip() and not value.startswith("/") or not home or not home.startswith("/")
    assert answered == 4 * 6 + 3 * 3  # (an absolute variable whatever HOME; unset or blank with an absolute HOME)


def _oldest_python() -> str | None:
    """An interpreter of the oldest Python the package supports (``requires-python``: 3.10), when one is installed."""
    import glob
    import shutil

    found = shutil.which("python3.10")
    if found and subprocess.run([found, "-c", "pass"], capture_output=True).returncode == 0:  # (not a pyenv shim)
        return found
    return next(iter(sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10*/bin/python3.10")))), None)


def test_the_package_compiles_on_the_oldest_supported_python():
    """QA round 67 H1: possessive quantifiers (``*+``, Python 3.11's ``re``) in a module-level pattern made every
    command fail to import on 3.10, which ``requires-python`` admits. A 3.10 interpreter compiles every module and
    imports each one whose imports it can satisfy without dreamdb's dependencies (the analyzer, the ranking rules,
    the vault parser…): a pattern or syntax of a newer Python fails there."""
    from pathlib import Path

    import dreamdb

    python = _oldest_python()
    if python is None:
        pytest.skip("no Python 3.10 interpreter on this machine (python3.10, ~/.pyenv/versions/3.10*)")
    root = Path(dreamdb.__file__).parent
    files = sorted(str(p) for p in root.rglob("*.py"))
    modules = sorted("dreamdb." + ".".join(Path(f).relative_to(root).with_suffix("").parts).removesuffix(".__init__")
                     for f in files if not f.endswith("__main__.py"))
    script = ("import importlib, json, sys\n"
              "files, modules = json.loads(sys.argv[1])\n"
              "for f in files:\n    compile(open(f, encoding='utf-8').read(), f, 'exec')\n"
              "imported = 0\n"
              "for m in modules:\n"
              "    try:\n        importlib.import_module(m)\n        imported += 1\n"
              "    except ModuleNotFoundError as e:\n"
              "        if (e.name or '').split('.')[0] == 'dreamdb':\n            raise\n"
              "print(imported)\n")
    p = subprocess.run([python, "-c", script, json.dumps([files, modules])], capture_output=True, text=True,
                       timeout=120, cwd=root.parent, env={**os.environ, "PYTHONPATH": str(root.parent)})
    assert p.returncode == 0, p.stderr[-2000:]
    assert int(p.stdout.split()[-1]) >= 10  # (the analyzer among them: 3.10 compiled its patterns)


def test_no_pattern_uses_what_the_oldest_supported_pythons_re_lacks():
    """Without a 3.10 interpreter (the test above skips): every regular expression written in the package (a string
    given to ``re.compile``, ``re.search``… or :class:`~dreamdb.lazy_regex.LazyPattern`) is parsed, and none may use a
    possessive quantifier (``*+``, ``++``, ``?+``, ``{m,n}+``) or an atomic group (``(?>…)``), which Python 3.11's
    ``re`` added: importing dreamdb on 3.10 raised ``re.error`` (QA round 67 H1, and again in the analyzer on
    7 Dec 2026, caught in review)."""
    import ast
    from pathlib import Path

    import dreamdb

    try:
        from re import _constants as constants, _parser as parser
    except ImportError:  # (Python 3.10: such a pattern does not parse at all)
        import sre_constants as constants
        import sre_parse as parser
    newer = {getattr(constants, name) for name in ("POSSESSIVE_REPEAT", "ATOMIC_GROUP") if hasattr(constants, name)}

    def uses(parsed) -> bool:
        for op, av in parsed:
            if op in newer:
                return True
            for part in av if isinstance(av, (list, tuple)) else ():
                if isinstance(part, parser.SubPattern) and uses(part):
                    return True
                if isinstance(part, (list, tuple)) and any(isinstance(x, parser.SubPattern) and uses(x) for x in part):
                    return True
        return False

    functions = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer",
                 "LazyPattern"}
    found, checked = [], 0
    for path in sorted(Path(dreamdb.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            on_re = isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") == "re"
            if name not in functions or not (on_re or name in ("compile", "LazyPattern")):
                continue  # (a compiled pattern's .sub(r"\1", …) is given its replacement)
            checked += 1
            try:
                if uses(parser.parse(node.args[0].value)):
                    found.append(f"{path.name}:{node.lineno}")
            except Exception as exc:  # noqa: BLE001 - a pattern 3.10 cannot parse is one it lacks
                found.append(f"{path.name}:{node.lineno} ({exc})")
    assert checked >= 50 and found == [], found


def test_the_package_version_is_the_projects():
    """QA round 67 M2: every build said 0.1.0, so ``pip install -U`` of a newer wheel did nothing. ``__version__``
    (what ``dreamdb --version`` prints, without reading package metadata at start-up) is pyproject.toml's."""
    import re
    from pathlib import Path

    import dreamdb

    pyproject = (Path(dreamdb.__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'(?m)^version = "([^"]+)"', pyproject).group(1) == dreamdb.__version__ != "0.1.0"


INDEX_FORMATS = {"0.3.0": ("21.13.11", 10), "0.3.1": ("21.14.11", 10), "0.3.2": ("21.15.11", 11), "0.3.3": ("21.16.11", 11), "0.3.4": ("21.17.11", 11), "0.3.5": ("21.19.11", 11), "0.3.6": ("21.23.11", 11), "0.3.7": ("21.24.11", 11), "0.3.8": ("21.27.11", 11), "0.3.9": ("21.31.11", 11), "0.3.10": ("21.32.14", 11), "0.3.11": ("21.33.14", 11), "0.3.12": ("21.35.17", 11), "0.3.13": ("21.36.17", 11), "0.3.14": ("21.37.17", 11), "0.3.15": ("21.38.17", 11), "0.3.16": ("21.39.17", 11), "0.3.17": ("21.39.17", 11), "0.3.18": ("21.40.18", 11), "0.3.19": ("21.40.18", 11), "0.3.20": ("21.41.18", 11), "0.3.21": ("21.42.18", 11), "0.3.22": ("21.42.18", 11), "0.3.23": ("21.43.19", 11), "0.3.24": ("21.44.20", 11), "0.3.25": ("22.44.20", 11), "0.3.26": ("24.44.20", 11), "0.3.27": ("24.44.20", 11)}
"""Each version's index format and schema version, as :data:`dreamdb.store.sync.INDEX_FORMAT` and the newest
migration give them: a new analyzer, parser or migration makes a new version (a line added here)."""


def test_the_version_goes_up_with_the_index_format():
    """QA round 86-B F3: 224 commits and an index format later, the version was still 0.2.0, so ``pip install -U`` of
    the newer wheel kept the older code (pip: "already installed with the same version"), and two installs calling
    themselves 0.2.0 rebuilt each other's index on every switch. The version is tied to the format here."""
    import dreamdb
    from dreamdb.store.migrations import latest_version
    from dreamdb.store.sync import INDEX_FORMAT

    assert INDEX_FORMATS.get(dreamdb.__version__) == (INDEX_FORMAT, latest_version()), (
        f"index format {INDEX_FORMAT}, schema {latest_version()}: raise the version in pyproject.toml and "
        "dreamdb/__init__.py, and add it to INDEX_FORMATS")


def test_help_lists_the_public_api_and_type_checkers_keep_index_methods():
    """QA round 70 C-L6/L7: help(dreamdb) showed only DreamdbError and open (Index and Hit are imported lazily),
    and the lock decorator hid Index methods' signatures from type checkers."""
    import inspect
    import pydoc

    import dreamdb
    from dreamdb.api import Index

    text = pydoc.render_doc(dreamdb, renderer=pydoc.plaintext)
    assert "class Index" in text and "class Hit" in text and "class MultiIndex" in text
    assert set(dreamdb.__all__) <= set(dir(dreamdb))
    assert "top" in inspect.signature(Index.recall).parameters and Index.recall.__wrapped__ is not None


@pytest.mark.slow
def test_the_public_api_type_checks_as_documented(tmp_path):
    """QA round 93-C F8: ``dreamdb.open(path)`` was typed ``Index | MultiIndex``, so ``open(path).refresh_embeddings()``
    was an error under ``mypy --strict`` and ``with dreamdb.open(path) as i`` gave ``i`` the type Any. A path gives an
    Index, a list of paths either; the README's example type-checks."""
    import re

    from tests.conftest import ROOT

    pytest.importorskip("mypy", reason="mypy is in the dev extra: pip install -e '.[dev]'")
    use = tmp_path / "use.py"
    use.write_text("import dreamdb\n\n"
                   "with dreamdb.open('examples') as ix:\n"
                   "    ix.refresh_embeddings()\n"
                   "    reveal_type(ix)\n"
                   "    hits = ix.recall('sleep debt', top=5)\n"
                   "    reveal_type(hits[0].rank_score)\n"
                   "reveal_type(dreamdb.open(['a', 'b']))\n"
                   "from dreamdb.records import replace\n"  # (QA round 95 F8: untyped, though the README shows it)
                   "reveal_type(replace(hits[0], title='x'))\n")
    # (the first run starts from an empty cache of its own; the second reuses what it wrote of the standard library and
    # dreamdb, the same types, in about half the time)
    p = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "c"),
                        str(use)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    revealed = re.findall(r'Revealed type is "([^"]+)"', p.stdout)
    assert revealed == ["dreamdb.api.Index", "float", "dreamdb.api.Index | dreamdb.multi.MultiIndex",
                        "dreamdb.api.Hit"], p.stdout
    assert p.returncode == 0 and "Success: no issues found" in p.stdout, p.stdout
    # a mistyped keyword is an error there (QA round 100-C F2: **kwargs let every one pass)
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import dreamdb\n\n"
                     "ix = dreamdb.open('examples', engine='sql')\n"
                     "dreamdb.open('examples', lock_timeout=5)\n"
                     "ix.remember('x', typ='decision')\n"
                     "ix.update('a/b', stauts='done')\n"
                     "ix.delete('a/b', forse=True)\n"
                     "reveal_type(ix.update('a/b', tags=['x']))\n")
    p = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "c"),
                        str(wrong)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    flagged = sorted({int(n) for n in re.findall(r"wrong\.py:(\d+): error", p.stdout)})
    assert flagged == [4, 5, 6, 7], p.stdout
    assert re.findall(r'Revealed type is "([^"]+)"', p.stdout) in (["dict[str, Any]"], ["builtins.dict[builtins.str, Any]"]), p.stdout


def test_multiindex_refuses_one_path_or_none():
    """QA round 107 F9: ``MultiIndex("/path")`` read the path letter by letter ("/ is not a vault"); ``MultiIndex([])``
    searched nothing without a word (``dreamdb.open([])`` refuses)."""
    import pytest

    import dreamdb
    from dreamdb.errors import UsageError

    for bad in ("examples", b"examples", [], iter(())):
        with pytest.raises(UsageError, match="MultiIndex takes a list of vault paths"):
            dreamdb.MultiIndex(bad)
    for bad in (5, 0, None):  # (QA round 151-C F5: a bare TypeError, 'int' object is not iterable)
        with pytest.raises(UsageError, match=f"MultiIndex takes a list of vault paths, got {bad!r}"):
            dreamdb.MultiIndex(bad)


_LAZY = ("dreamdb.analyzer._APOSTROPHE_SUFFIX", "dreamdb.analyzer.PRIVATIVE_RE", "dreamdb.analyzer._COMPOUND_PART_RE",
         "dreamdb.ranking.rank._VERB_ENDING_RE", "dreamdb.ranking.rank._NOMINAL_SUFFIXES_RE")


def _compiled_after(vault, query: str) -> dict[str, bool]:
    """Which of the patterns compiled at first use (:mod:`dreamdb.lazy_regex`, the output's hidden-character ones)
    a ``dreamdb recall`` of ``query`` in a fresh process compiled, text and JSON output both."""
    code = (
        "import contextlib, importlib, io, json\n"
        "from dreamdb.entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    assert main(['recall', '--vault', {str(vault)!r}, {query!r}]) == 0\n"
        f"    assert main(['recall', '--vault', {str(vault)!r}, '--json', {query!r}]) == 0\n"
        "assert 'setupVersion' in out.getvalue(), out.getvalue()\n"
        "import dreamdb.output as o\n"
        "seen = {}\n"
        f"for name in {_LAZY!r}:\n"
        "    module, attr = name.rsplit('.', 1)\n"
        "    seen[name] = getattr(importlib.import_module(module), attr).compiled\n"
        "seen['output'] = (o._smuggling_patterns.cache_info().currsize + o._escaped_patterns.cache_info().currsize\n"
        "                  + o._json_patterns.cache_info().currsize) > 0\n"
        "print(json.dumps(seen))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1])


def test_an_english_recall_compiles_none_of_the_turkish_or_hidden_character_patterns(tmp_path):
    """Compiling those patterns took 27 ms of a 115 ms ``dreamdb recall`` process on the real vault (5 Dec 2026), for
    a query and hits of English words: camelCase and contractions in ASCII, and accents and dashes, which hide
    nothing, need none of them (:mod:`dreamdb.lazy_regex`, ``output._FIRST_LOOK``)."""
    vault = tmp_path / "_dream_context"
    (vault / "knowledge").mkdir(parents=True)
    (vault / "knowledge" / "setup.md").write_text(
        "---\ntitle: Setup version — café notes\n---\nThe setupVersion field: don't bump it by hand — it's the"
        " release script's job.\n", encoding="utf-8")
    seen = _compiled_after(vault, "setup version release")
    assert not any(seen.values()), seen
    (vault / "knowledge" / "api.md").write_text(
        "---\ntitle: API notları\n---\nsetupVersion alanı API'nin sürümüdür; başarısızlıkları yazdık.\u200b\u200b\n",
        encoding="utf-8")
    seen = _compiled_after(vault, "API'nin sürümü başarısız yazdığımız setupVersion")
    assert seen["dreamdb.analyzer._APOSTROPHE_SUFFIX"] and seen["output"], seen


def test_every_pattern_compiled_at_first_use_compiles():
    """A ``LazyPattern`` with a bad regex fails at its first call, not at import: each is compiled here."""
    import importlib
    import pkgutil

    import dreamdb
    from dreamdb.lazy_regex import LazyPattern

    found = []
    for info in pkgutil.walk_packages(dreamdb.__path__, "dreamdb."):
        if info.name.startswith(("dreamdb.cli", "dreamdb.__main__")):
            continue
        module = importlib.import_module(info.name)
        found += [(info.name, n) for n, v in vars(module).items() if isinstance(v, LazyPattern) and v().pattern]
    assert {f"{m}.{n}" for m, n in found} >= set(_LAZY) | {"dreamdb.analyzer._ASCII_COMPOUND_PART_RE"}
