#!/usr/bin/env python
"""What the check of an index changed since dreamdb left it costs (:mod:`dreamdb.store.trust`, QA round 155-F F1).

On a copy of the real dreamcontext vault (``--vault``; a temporary folder, the shared vault never written), indexed
first, in process, alternating, medians of ``--runs``:

* ``trust.problems_if_changed`` alone on the unchanged index (a stat and a read of the sidecar) beside the same on an
  index whose sidecar records another signature (the ``PRAGMA quick_check`` it then runs);
* a new :class:`dreamdb.Index`'s open (``.conn``: connect, check, migrate, close) on the unchanged index beside the
  same after the sidecar was removed (one check at the open).

Usage: ``python scripts/bench_trust.py [--vault PATH] [--runs 15]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


def _ms(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", default=os.path.join(os.environ.get("DREAMDB_SHARED", "/work/shared"),
                                                    "vaults", "dreamcontext"))
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if not Path(args.vault).is_dir():
        print(f"bench_trust: no vault at {args.vault} (pass --vault)", file=sys.stderr)
        return 7
    from settings import scrub

    scrub("bench_trust")

    import dreamdb
    from dreamdb.store import connect as db
    from dreamdb.store import trust

    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "v"
        shutil.copytree(args.vault, vault, symlinks=True)
        for root, dirs, files in os.walk(vault):
            for name in dirs + files:
                os.chmod(os.path.join(root, name), 0o755 if name in dirs else 0o644)
        with dreamdb.open(vault) as ix:
            ix.sync()
            path = ix.index_path
        print(f"index {path.stat().st_size / 1e6:.1f} MB")
        conn = db.connect(path)
        sig = trust.signature(path)
        unchanged, changed = [], []
        for _ in range(args.runs):
            unchanged.append(_ms(lambda: trust.problems_if_changed(conn, path)))
            trust.record(path, "other")
            changed.append(_ms(lambda: trust.problems_if_changed(conn, path)))
            assert trust.recorded(path) == sig
        conn.close()
        print(f"problems_if_changed: unchanged {statistics.median(unchanged):.3f} ms,"
              f" changed (quick_check) {statistics.median(changed):.1f} ms")

        def open_index() -> None:
            ix = dreamdb.open(vault, auto_sync=False)
            ix.conn
            ix.close()

        open_index()
        same, checked = [], []
        for _ in range(args.runs):
            same.append(_ms(open_index))
            trust.forget(path)
            checked.append(_ms(open_index))
            assert trust.is_trusted(path)
        print(f"Index open: unchanged {statistics.median(same):.2f} ms, sidecar missing {statistics.median(checked):.2f} ms"
              f" ({args.runs} runs each, medians)")
    return 0


if __name__ == "__main__":
    from interrupt import run

    sys.exit(run(main))
