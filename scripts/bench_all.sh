#!/usr/bin/env sh
# Run every benchmark under scripts/ (bench_*.py), passing the arguments through (e.g. --quick).
# Usage: scripts/bench_all.sh [--quick]
set -u
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
