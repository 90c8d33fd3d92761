#!/usr/bin/env bash
# `postbox sim --goal FILE` against `postbox sim` on the built plan the file was exported from,
# in wall time and peak resident memory (GNU time's %e and %M), interleaved run by run; prints
# each side's medians and the ratios goal / plan (docs/emulator.md, "How sim --goal reads a file").
#   bench/goal_vs_plan.sh POSTBOX [RUNS]     (default 3 runs per side and case)
# Needs /usr/bin/time; the GOAL files go to a temporary directory, removed at the end.
set -euo pipefail
pb=${1:?usage: goal_vs_plan.sh POSTBOX [RUNS]}
runs=${2:-3}
[[ -x /usr/bin/time ]] || { echo "goal_vs_plan.sh: needs /usr/bin/time (Debian package time)" >&2; exit 2; }
machine=logp:5:1:2:0.01
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cases=("bcast binomial 65536" "bcast binomial 1048576" "allreduce recursive-doubling 4096"
       "allreduce recursive-doubling 65536" "all-to-all 1-lev-perm:xor 512" "all-to-all 1-lev-perm:xor 1024")

# Prints "SECONDS KIB" of one run.
measure() {
  /usr/bin/time -f '%e %M' -o "$dir/time" "$@" > /dev/null
  cat "$dir/time"
}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

printf '%-40s %16s %16s %16s\n' "case (sim --machine $machine)" "sim s, MiB" "--goal s, MiB" "goal / sim"
for c in "${cases[@]}"; do
  read -r op algo p <<< "$c"
  f="$dir/$op-$p.goal"
  "$pb" plan export --format goal --op "$op" --algo "$algo" --p "$p" --bytes 8 > "$f"
  : > "$dir/plan"
  : > "$dir/goal"
  for ((i = 0; i < runs; ++i)); do
    measure "$pb" sim --machine "$machine" --op "$op" --algo "$algo" --p "$p" --bytes 8 >> "$dir/plan"
    measure "$pb" sim --machine "$machine" --goal "$f" >> "$dir/goal"
  done
  ps=$(awk '{print $1}' "$dir/plan" | median)
  pm=$(awk '{print $2}' "$dir/plan" | median)
  gs=$(awk '{print $1}' "$dir/goal" | median)
  gm=$(awk '{print $2}' "$dir/goal" | median)
  awk -v c="$op $algo p $p" -v ps="$ps" -v pm="$pm" -v gs="$gs" -v gm="$gm" 'BEGIN {
    printf "%-40s %7.2f, %6.0f  %7.2f, %6.0f   %6.2fx, %5.2fx\n", c, ps, pm / 1024, gs, gm / 1024, gs / ps, gm / pm }'
  rm -f "$f"
done
