#!/usr/bin/env sh
# Run every benchmark under scripts/ (bench_*.py), each with its defaults, or with --quick (the one option they all
# take; run a script alone for its other options: python scripts/bench_recall.py --help).
# Usage: scripts/bench_all.sh [--quick]
set -u
for arg in "$@"; do
  if [ "$arg" = "--help" ] || [ "$arg" = "-h" ]; then
    echo "Usage: scripts/bench_all.sh [--quick]"
    echo "Run every benchmark under scripts/ (bench_*.py) with its defaults, or with --quick (a short run, for CI);"
    echo "each prints medians beside a baseline. Run a script alone for its other options, e.g."
    echo "python scripts/bench_recall.py --help. PYTHON names the interpreter (default: .venv/bin/python)."
    exit 0
  fi
  if [ "$arg" != "--quick" ]; then
    echo "bench_all.sh: unknown option $arg (only --quick; the scripts' other options differ: run one alone, e.g." \
         "python scripts/bench_recall.py --help)" >&2
    exit 2
  fi
done
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
py=${PYTHON:-"$root/.venv/bin/python"}
[ -x "$py" ] || py=python3
status=0
for script in "$here"/bench_*.py; do
  [ -e "$script" ] || continue
  echo "### $(basename "$script") $*"
  "$py" "$script" "$@" || { rc=$?; echo "### $(basename "$script") failed (exit $rc)"; status=1; }
  echo
done
exit $status
