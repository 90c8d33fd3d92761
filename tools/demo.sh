#!/usr/bin/env bash
# The demo behind `./run.sh demo`: each section runs the postbox command it shows, so every
# figure on screen is measured or computed right now, and a reader can rerun any line.
set -euo pipefail
PB=${1:?usage: demo.sh PATH/TO/postbox}

section() { printf '\n== %s\n' "$1"; }
show() { printf '$ postbox %s\n' "$*"; "$PB" "$@"; }
# A field of postbox's JSON output (flat objects only), without a JSON tool.
field() { sed -n "s/^ *\"$1\": *\\([^,]*\\),\\{0,1\\}\$/\\1/p" | head -1; }

section "This machine's topology (hwloc) and where 8 ranks would be placed"
show topo --p 8

section "A mailbox round trip between two ranks (runtime/ unicast service)"
show ping --p 2 --bytes 8 --iters 20000

section "Calibration: send latency s, receive latency r and lambda = 1 + r/s on this machine"
# One measurement, shown as it is and then used for the Fibo-tree below.
printf '$ postbox calibrate --quick --json\n'
cal=$("$PB" calibrate --quick --json)
printf '%s\n' "$cal"
s_ns=$(printf '%s\n' "$cal" | field s_ns)
r_ns=$(printf '%s\n' "$cal" | field r_ns)
s_int=$(printf '%.0f' "$s_ns"); r_int=$(printf '%.0f' "$r_ns")
[ "$s_int" -ge 1 ] || s_int=1
[ "$r_int" -ge 0 ] || r_int=0
cores=$(nproc)

section "Tree shapes: the Fibo-tree for this machine's $cores cores from the measured s and r (in ns)"
show tree --shape fibo --p "$cores" --s "$s_int" --r "$r_int" --format ascii
echo
echo "Completion times (in units of s) for 64 processes with s = 1, r = 3 (Cordsen Fig. 9, §4.3):"
show tree --compare --p 64 --s 1 --r 3

section "Collectives on threads: a verified broadcast and allreduce (8 ranks on $cores cores)"
show run --op bcast --algo fibo --p 8 --bytes 4096 --iters 200 --verify
show run --op allreduce --algo postal --p 8 --bytes 4096 --lambda 2.5 --iters 200 --verify

section "s-to-p broadcast on threads: 4 sources on the diagonal of a 4x4 mesh, verified"
show run --op s2p --algo br-xy-source --p 16 --mesh 4x4 --sources 4 --dist diag-right --bytes 64 --iters 50 --verify

section "The emulated MANNA (s = 27 us, r = 88 us): Cordsen §5's 19-process broadcast"
echo "Cordsen measured sequential 569 us, binomial 451 us, Fibo-tree 318 us on the real machine."
for algo in flat binomial fibo; do
  show sim --machine manna --op bcast --algo "$algo" --p 19 --bytes 4
done

section "Barriers for parallel loops: overhead per barrier (EPCC syncbench), every competitor in one run"
# Right after the build the machine is still busy: the kernel writes the build's output back to
# disk, and a figure measured then is the build's, not the barrier's. So: flush that now, let the
# bench wait (at most 20 s) until no other task wants the CPUs, and let it interleave the
# competitors round by round after a warm-up, so what load remains hits all of them alike.
# Every thread row runs on one team of threads kept for the whole run, as the OpenMP runtimes
# keep theirs; default@omp-gomp is postbox's default barrier called through its C API from a
# libgomp team, the way an OpenMP program calls it. p = 2 fits this machine's CPUs when it has
# two or more; p = 4 oversubscribes a 2-CPU machine. The bench says when the rounds disagree
# too much to judge. The default and combine take the calibration shown above (a default
# Barrier never measures: without saved figures it assumes s = r). At p = 2, one-way (half a
# cache-line ping-pong) and two-flag (the least a barrier of two can do here) put the default's
# figure against what this machine allows.
sync
impls=default,tournament,combine,central,std,pthread,omp-gomp,omp-llvm,default@omp-gomp,default@omp-llvm,one-way,two-flag
printf '$ POSTBOX_S_NS=%s POSTBOX_R_NS=%s postbox bench barrier --quick --p 2,4 --settle 20 --impl %s\n' "$s_int" "$r_int" "$impls"
POSTBOX_S_NS=$s_int POSTBOX_R_NS=$r_int "$PB" bench barrier --quick --p 2,4 --settle 20 --impl "$impls"

section "The explorer: the same figures in a browser (postbox serve, docs/explorer.md)"
# Start it on a free port, ask its API for the Fibo-tree above (p = 64, s = 1, r = 3), stop it.
coproc SERVE { exec "$PB" serve --port 0; }
read -r line <&"${SERVE[0]}"
echo "$line"
port=${line##*127.0.0.1:}
port=${port%%/*}
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /api/tree?shape=fibo&p=64&s=1&r=3 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
reply=$(cat <&3)
exec 3<&-
kill "$SERVE_PID"
wait "$SERVE_PID" || true
printf '$ GET /api/tree?shape=fibo&p=64&s=1&r=3  ->  completion %s\n' \
  "$(printf '%s' "$reply" | grep -o '"completion":[0-9./]*' | head -1 | cut -d: -f2)"
echo
echo "To open the explorer, run"
echo "    build/bin/postbox serve --port 8080"
echo "and open http://127.0.0.1:8080/ in a browser (it listens on 127.0.0.1 only; from another"
echo "machine, forward the port: ssh -L 8080:127.0.0.1:8080 THIS_HOST). Every state is in the URL,"
echo "e.g. http://127.0.0.1:8080/?view=trees&shape=fibo&p=64&s=1&r=3&shape2=binomial"
