#!/usr/bin/env bash
# Runs every benchmark binary in BUILD/bin whose name starts with bench_.
set -euo pipefail
BUILD=${1:?usage: run_all.sh BUILD_DIR [benchmark args]}
shift
found=0
for b in "$BUILD"/bin/bench_*; do
  [ -x "$b" ] || continue
  found=1
  printf '\n== %s\n' "$(basename "$b")"
  "$b" "$@"
done
[ $found -eq 1 ] || { echo "no benchmarks were built" >&2; exit 1; }
