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
    echo "python scripts/bench_recall.py --help. PYTHON names the interpreter (default: .venv/bin/python, else python3);"
    echo "one that is not there is an error (exit 2)."
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
if [ -n "${PYTHON:-}" ]; then
  # (one named that is not there is an error: it fell back to python3 silently, QA round 145-G F5)
  py=$PYTHON
  case $py in
    */*) [ -f "$py" ] && [ -x "$py" ] ;;
    *) command -v "$py" >/dev/null 2>&1 ;;
  esac || {
    echo "bench_all.sh: PYTHON=$py is no executable interpreter: name one (a path or a command on PATH), or unset" \
         "PYTHON for .venv/bin/python (else python3)" >&2
    exit 2
  }
else
  py="$root/.venv/bin/python"
  [ -x "$py" ] || py=python3
fi
status=0
for script in "$here"/bench_*.py; do
  [ -e "$script" ] || continue
  echo "### $(basename "$script") $*"
  "$py" "$script" "$@" || { rc=$?; echo "### $(basename "$script") failed (exit $rc)"; status=1; }
  echo
done
exit $status
