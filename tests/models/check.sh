#!/usr/bin/env bash
# One SPIN check of a barrier model (docs/barrier-models.md), as a ctest:
#   check.sh WORKDIR SHAPES MODEL ALGORITHM P EXPECT CC -- SPIN_DEFINES...
# WORKDIR a scratch directory (emptied), SHAPES the pb_model_shapes binary, MODEL the .pml
# (its directory holds the shared includes), EXPECT "pass" (exhaustive search for assertion
# violations and invalid end states, no error), "progress" (exhaustive search for
# non-progress cycles, pan -l: none means no infinite run) or "fail" (a mutant: SPIN must
# report an error), CC the C compiler for pan.c.
# pass/progress: fails unless pan reports errors: 0, the search completed (no "search depth
# too small", no memory bound reached) and pan exited normally. fail: fails unless pan reports
# an error. Either way it prints the states explored; an unexpected error prints the
# counterexample.
set -euo pipefail
if [ $# -lt 7 ]; then
  echo "usage: check.sh WORKDIR SHAPES MODEL ALGORITHM P EXPECT CC -- SPIN_DEFINES..." >&2
  exit 2
fi
work=$1 shapes=$2 model=$3 algo=$4 p=$5 expect=$6 cc=$7
shift 7
[ "${1:-}" = "--" ] && shift
defines=("$@")
case "$expect" in pass | progress | fail) ;; *) echo "check.sh: EXPECT must be pass, progress or fail, got '$expect'" >&2; exit 2 ;; esac

rm -rf "$work"
mkdir -p "$work"
cd "$work"
"$shapes" "$algo" "$p" >shape.pml
models=$(dirname "$(readlink -f "$model")")
echo "model $(basename "$model") $algo p=$p ${defines[*]} (expect $expect)"
spin -a -E-I"$models" -E-I"$work" -DP="$p" "${defines[@]}" "$model" >spin.log 2>&1 || {
  cat spin.log
  echo "FAIL: spin -a did not generate the verifier"
  exit 1
}
# -DSAFETY: assertions and invalid end states only (no never claim); -DNP with pan -l: the
# non-progress-cycle search instead; -DMEMLIM: stop instead of swapping (the search is then
# incomplete, which fails the check); -DCOLLAPSE: lossless state compression (memory only, the
# search stays exhaustive). A mutant only needs to reach its first error: -O0 builds it faster.
opt=(-O2 -DSAFETY)
run=(-m200000)
[ "$expect" = fail ] && opt=(-O0 -DSAFETY)
[ "$expect" = progress ] && opt=(-O2 -DNP) && run=(-l -m200000)
"$cc" "${opt[@]}" -w -DCOLLAPSE -DMEMLIM=2048 -o pan pan.c
set +e
./pan "${run[@]}" >pan.log 2>&1
rc=$?
set -e
grep -E "^pan:|errors:|states, stored|transitions|total actual memory" pan.log | grep -v "^pan: rate" | sed 's/^/  /'
errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | head -1)
trail() {
  echo "counterexample (spin -t, the ranks' steps):"
  spin -t -p -E-I"$models" -E-I"$work" -DP="$p" "${defines[@]}" "$model" 2>&1 |
    grep -v "proc  0 (:init" | grep -E "^ *[0-9]+:|assert|terminates|invalid|timeout" | tail -80
}
if [ "$expect" != fail ]; then
  if [ "$rc" -ne 0 ] || [ "${errors:-x}" != 0 ]; then
    [ -f "$(basename "$model").trail" ] && trail
    echo "FAIL: SPIN found an error (rc $rc, errors ${errors:-?})"
    exit 1
  fi
  if grep -qE "depth too small|reached -DMEMLIM|out of memory|Search not completed" pan.log; then
    echo "FAIL: the search was not exhaustive"
    exit 1
  fi
  echo "PASS: exhaustive, no error"
else
  if [ "${errors:-0}" = 0 ]; then
    echo "FAIL: the mutant was not refuted (SPIN found no error)"
    exit 1
  fi
  echo "PASS: the mutant is refuted: $(grep -m1 -E "^pan:1:" pan.log)"
fi
