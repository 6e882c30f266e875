"""dreamdb works from an installed wheel, not only from the source tree (migrations ship inside it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_wheel_contains_migrations_and_runs_outside_the_tree(tmp_path):
    out = tmp_path / "whl"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(ROOT), "-w", str(out)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("dreamdb-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n for n in names if n.startswith("dreamdb/migrations/"))
    assert shipped == sorted(f"dreamdb/migrations/{p.name}" for p in (ROOT / "migrations").glob("*.sql"))
    assert "dreamdb/py.typed" in names  # (PEP 561: type checkers read the package's own hints, QA round 70 C-L6)
    # (the license it declares, in the wheel's metadata: QA round 93-C F6, no LICENSE anywhere)
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names), names
    ldshared = sysconfig.get_config_var("LDSHARED")
    kernel = f"dreamdb/ranking/_kernel{sysconfig.get_config_var('EXT_SUFFIX')}"
    if ldshared and shutil.which(ldshared.split()[0]):  # the C accumulator is compiled into the wheel
        assert kernel in names and "-none-any" not in wheel.name
    # unpack the wheel somewhere else and run it with the source tree out of reach
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    vault = tmp_path / "v" / "_dream_context"
    shutil.copytree(ROOT / "examples" / "_dream_context", vault, ignore=shutil.ignore_patterns(".dreamdb"))
    p = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import dreamdb.entry as e, dreamdb;"
                        "from dreamdb.ranking import memory; assert 'site' in dreamdb.__file__;"
                        "assert memory.KERNEL is None or 'site' in memory.KERNEL.__file__; sys.exit(e.main(sys.argv[2:]))",
                        str(site), "recall", "--vault", str(vault), "--json", "sleep", "debt"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["hits"][0]["doc_id"] == "feature/sleep-consolidation"
