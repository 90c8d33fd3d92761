#!/usr/bin/env bash
# `bench barrier --load nice0` forks a CPU-bound competing process; when the bench is killed
# (SIGKILL: it gets no chance to end the child itself) the competing process must end too.
#   tests/cli/bench_load_orphan.sh POSTBOX     (ctest cli.bench.barrier_load_dies_with_bench)
set -uo pipefail
pb=${1:?postbox binary}
"$pb" bench barrier --p 2 --impl central --outer 100000 --rounds 1 --load nice0 > /dev/null 2>&1 &
bench=$!
child=""
for _ in $(seq 1 200); do  # up to 10 s for the fork
  child=$(cat /proc/"$bench"/task/*/children 2> /dev/null | tr -s ' \n' ' ' | awk '{print $1}')
  [[ -n $child ]] && break
  sleep 0.05
done
if [[ -z $child ]]; then
  echo "FAIL: the bench (pid $bench) made no competing process within 10 s"
  kill -KILL "$bench" 2> /dev/null
  exit 1
fi
kill -KILL "$bench"
{ wait "$bench"; } 2> /dev/null
for _ in $(seq 1 100); do  # up to 5 s for the kernel's SIGKILL to land
  if ! kill -0 "$child" 2> /dev/null || [[ $(awk '{print $3}' /proc/"$child"/stat 2> /dev/null) == Z ]]; then
    echo "ok: the competing process $child ended with the bench $bench"
    exit 0
  fi
  sleep 0.05
done
echo "FAIL: the competing process $child still runs after its bench $bench was killed"
kill -KILL "$child" 2> /dev/null
exit 1
