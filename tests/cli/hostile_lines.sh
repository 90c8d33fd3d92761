#!/usr/bin/env bash
# Command lines from past crash, silent-answer and error-message bugs, made concrete: each, run
# under a time and a memory limit, must end with exactly one stderr line and exit 2 naming what
# was typed, or with exit 0 and a correct answer (each `answer` line says what correct is and
# checks it against an independent run).
#   tests/cli/hostile_lines.sh POSTBOX DATA_DIR WORK_DIR     (ctest cli.hostile.lines)
# Prints one line per command (ok / FAIL, exit code, seconds, the command; with HOSTILE_VERBOSE=1
# also each stderr) and exits 1 when any failed. Limits: HOSTILE_TIME seconds (default 20) and HOSTILE_MEM_KB of address space (ulimit -v,
# default 4 GiB) per command.
set -uo pipefail
pb=${1:?postbox binary}
data=${2:?data dir}
work=${3:?work dir}
limit_s=${HOSTILE_TIME:-20}
limit_kb=${HOSTILE_MEM_KB:-4194304}
mkdir -p "$work"
out=$work/stdout
err=$work/stderr
fails=0
total=0
to=""   # where stdout goes for the next line (empty: $out)
mem=""  # the next line's address-space limit in KiB (empty: $limit_kb)

# run ARGS...: the tool under the limits; sets rc and secs.
run() {
  local t0 t1 dest=${to:-$out}
  t0=$(date +%s.%N)
  ( ulimit -v "${mem:-$limit_kb}"; exec timeout -s KILL "$limit_s" "$pb" "$@" ) > "$dest" 2> "$err"
  rc=$?
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
}

report() {  # report OK|FAIL WHY ARGS...
  local verdict=$1 why=$2
  shift 2
  total=$((total + 1))
  local shown
  printf -v shown '%q ' "$@"
  [[ -n $to ]] && shown="$shown> $to"
  [[ -n $mem ]] && shown="$shown(ulimit -v $mem)"
  if [[ $verdict == ok ]]; then
    printf 'ok    exit %-3s %6ss  %s\n' "$rc" "$secs" "${env_shown}postbox $shown"
    [[ -n ${HOSTILE_VERBOSE:-} && -s $err ]] && sed 's/^/      stderr: /' "$err"
  else
    fails=$((fails + 1))
    printf 'FAIL  exit %-3s %6ss  %s\n      %s\n' "$rc" "$secs" "${env_shown}postbox $shown" "$why"
    sed 's/^/      stderr: /' "$err" | head -5
    [[ -z $to ]] && head -c 600 "$out" | sed 's/^/      stdout: /'
  fi
  to=""
  mem=""
}
env_shown=""

# refuse REGEX ARGS...: exit 2, exactly one line on stderr (newline-terminated), matching REGEX.
refuse() {
  local re=$1
  shift
  run "$@"
  local lines
  lines=$(wc -l < "$err")
  if [[ $rc != 2 ]]; then report FAIL "expected exit 2" "$@"
  elif [[ $lines != 1 || -n $(tail -c1 "$err") ]]; then report FAIL "expected one stderr line, got $lines" "$@"
  elif ! grep -Eq -- "$re" "$err"; then report FAIL "stderr does not match /$re/" "$@"
  else report ok "" "$@"
  fi
}

# answer CHECK ARGS...: exit 0 and `CHECK` (a shell command reading $out) succeeds.
answer() {
  local check=$1
  shift
  run "$@"
  if [[ $rc != 0 ]]; then report FAIL "expected exit 0" "$@"
  elif ! eval "$check"; then report FAIL "wrong answer: $check" "$@"
  else report ok "" "$@"
  fi
}

# reference ARGS...: stdout of another run (the independent way to the same answer) into $work/ref.
reference() {
  ( ulimit -v "$limit_kb"; exec timeout -s KILL "$limit_s" "$pb" "$@" ) > "$work/ref" 2> /dev/null
}
# The same stdout, but for wall-clock figures (sim's events_per_s and "wall" line).
same_as_ref() { cmp -s <(grep -Ev 'events_per_s|events/s|^wall' "$out") <(grep -Ev 'events_per_s|events/s|^wall' "$work/ref"); }
# json_field NAME FILE: the value of the first "NAME": in a JSON file.
json_field() { grep -m1 "\"$1\":" "$2" | sed -e 's/^[^:]*: *//' -e 's/,$//'; }

gen=$work/gen
mkdir -p "$gen"

# ---------------------------------------------------------------------------------------------
# Crashes, hangs, memory blow-ups: one line and exit 2, quickly.
# ---------------------------------------------------------------------------------------------
xml=$data/topo-pack2-core2-pu2.xml
sed -E 's/ complete_cpuset="[^"]*"//' "$xml" > "$gen/no-complete-cpuset-any.xml"            # every object
awk '!d && /complete_cpuset=/ && /type="Core"/ {sub(/ complete_cpuset="[^"]*"/, ""); d = 1} {print}' "$xml" > "$gen/no-complete-cpuset-core.xml"
sed -E '/type="Machine"/ s/ complete_nodeset="[^"]*"//' "$xml" > "$gen/machine-no-complete-nodeset.xml"
sed -E '/type="NUMANode"/ s/ complete_nodeset="[^"]*"//' "$xml" > "$gen/numa-no-complete-nodeset.xml"
{
  echo '<?xml version="1.0" encoding="UTF-8"?>'
  echo '<topology version="2.0">'
  echo '<object type="Machine" os_index="0" cpuset="0x1" complete_cpuset="0x1" allowed_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1" allowed_nodeset="0x1">'
  for ((i = 0; i < 20000; i++)); do echo '<object type="Group" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1">'; done
  echo '<object type="PU" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1"/>'
  for ((i = 0; i < 20000; i++)); do echo '</object>'; done
  echo '</object>'
  echo '</topology>'
} > "$gen/nested-20000.xml"
printf '%s\n' '<?xml version="1.0" encoding="UTF-8"?>' '<topology version="2.0">' \
  '<object type="Machine" os_index="0" cpuset="0x1" complete_cpuset="0x1">' \
  '<object type="PU" os_index="0" cpuset="0x1" complete_cpuset="0x1"/>' '</object>' '</topology>' > "$gen/no-numa.xml"

# correct for a valid file: the four-PU... (the data file: 2 packages x 2 cores x 2 PUs)
answer 'grep -q "\"pus\": 8" "$out"' topo --xml "$xml" --json
for f in no-complete-cpuset-any no-complete-cpuset-core machine-no-complete-nodeset numa-no-complete-nodeset no-numa; do
  # The path as typed, or its head and tail when longer than 70 characters (check.hpp: one_line).
  refuse "topology XML file '[^']*${f: -10}.xml'" topo --xml "$gen/$f.xml"
done
export HWLOC_LIBXML_IMPORT=0
env_shown="HWLOC_LIBXML_IMPORT=0 "
refuse "topology XML file '[^']*nested-20000.xml'" topo --xml "$gen/nested-20000.xml"
unset HWLOC_LIBXML_IMPORT
env_shown=""

refuse "PU 2147483647" topo --places 0-2147483647
refuse "--mesh 100000x100000" sim --machine delta --mesh 100000x100000
refuse "--mesh 100000x100000" sim --machine delta --mesh 100000x100000 --p 16
sed -e 's/@DIMS@/[100000, 100000]/' -e 's/@DELAY@/0.1/' > "$gen/mesh-huge.toml" <<'EOF'
name = "huge"
[model]
kind = "mesh"
[mesh]
dims = @DIMS@
wrap = false
switching = "wormhole"
packet_bytes = 0
header_bytes = 0
link_mb_per_s = 100
router_delay_us = @DELAY@
send_buffer_packets = 1
[host]
send = "blocking"
send_overhead = { base_us = 1 }
isend_overhead = { base_us = 1 }
recv_overhead = { base_us = 1 }
EOF
sed -e 's/\[100000, 100000\]/[8, 8]/' -e 's/router_delay_us = 0.1/router_delay_us = 1e300/' "$gen/mesh-huge.toml" > "$gen/delay-huge.toml"
refuse "mesh.dims' must have between 1 and" sim --machine "$gen/mesh-huge.toml"
refuse "--sizes 1000000000000|1000000000000" calibrate --machine delta --sizes 1000000000000
refuse "--p must be at most [0-9]+, got 16777216" tree --shape binomial --p 16777216 --format json
refuse "--op is required" run --p 33000
refuse "--p must be at most [0-9]+ for run, got 33000" run --op bcast --algo binomial --p 33000
# hwloc takes minutes on one level of 65536 cores: refused before hwloc sees it (at most 2048
# PUs, the most the slowest shape loads within about 1.3 s), and the documented maximum loads.
refuse "'core:65536 pu:1' has 65536 PUs, more than 2048" topo --synthetic 'core:65536 pu:1'
refuse "'pu:65536' has 65536 PUs, more than 2048" topo --synthetic 'pu:65536'
answer 'grep -q "2048" "$out"' topo --synthetic 'pack:2048 numa:1 l3:1 l2:1 l1:1 core:1 pu:1'
# One leniency rule for numbers: '+' is refused in every option (it was accepted by --lambda only).
refuse "--lambda must be a finite number.*got '\+5'" sim --machine postal:2 --op bcast --algo binomial --p 4 --lambda +5
refuse "--p must be an integer, got '\+5'" run --op bcast --algo binomial --p +5 --bytes 8
refuse "--placement list: '\+1' is not a node number" sim --machine delta --op bcast --algo binomial --p 2 --placement list:0,+1
# Packages inside cores: refused, naming the level out of order.
refuse "level 'pack:2' lies inside 'core:2'" topo --synthetic 'core:2 pack:2 pu:1'
# p^2 rings of 64 KiB no longer: correct is a verified run (every rank's bytes checked).
# 512 threads reserve 4 GiB of stacks: run under 8 GiB; under 1 GiB refused up front, naming ulimit -v.
# Without --ranks, run picks auto (fibers once p exceeds the allowed CPUs): verified under 1 GiB.
mem=8388608
answer 'grep -q "\"verified\": true" "$out"' run --op all-to-all --algo 1-lev-dir --p 512 --bytes 8 --iters 1 --verify --json --ranks threads
mem=1048576
refuse "--p 512 needs 512 threads, more than the [0-9]+ whose stacks .* address-space limit \(ulimit -v\)" run --op all-to-all --algo 1-lev-dir --p 512 --ranks threads
answer 'grep -q "\"verified\": true" "$out"' run --op all-to-all --algo 1-lev-dir --p 512 --bytes 8 --iters 1 --verify --json
# No longer quadratic: correct is the postal time of the flat tree, (p - 2) + lambda = 65536 units
# (the root's last send starts at p - 2), and "ok" for the plan.
answer '[[ $(json_field time_us "$out") == 65536.0 ]]' sim --machine postal:2 --op bcast --algo flat --p 65536 --json
answer '[[ $(cat "$out") == ok ]]' plan check --op bcast --algo flat --p 65536
refuse "--p must be at most 4096 for run, got 65536" run --op bcast --algo flat --p 65536
refuse "--bytes 1073741824|give --lambda" sim --machine delta --bytes 1073741824
# At 16 MiB sim first measures lambda on the Delta (Bruck's experiments, 32 768 packets a
# message, 7.9 M in all; over 10 s under fuzzing): a packet stream alone on its path now costs
# events per message. Correct: 1-lev-dir's plan does not depend on lambda, so the time is the
# one with --lambda given (no measurement). Without --algo, one-to-all has no default.
reference sim --machine delta --op one-to-all --algo 1-lev-dir --p 16 --bytes 16777216 --lambda 2 --json
answer '[[ -n $(json_field time_ticks "$out") && $(json_field time_ticks "$out") == $(json_field time_ticks "$work/ref") ]]' \
  sim --machine delta --op one-to-all --algo 1-lev-dir --p 16 --bytes 16777216 --json
refuse "unknown --algo 'binomial' for --op one-to-all" sim --machine delta --op one-to-all --p 16 --bytes 16777216

# ---------------------------------------------------------------------------------------------
# Silent wrong answers: now refused, or answered correctly.
# ---------------------------------------------------------------------------------------------
sw=(sweep --machine postal:2 --op bcast --algo binomial --csv)
refuse "--p must be at most [0-9]+, got 4294967298" "${sw[@]}" --param p=4294967298:4294967298:1
refuse "--param p: more than 100000 values" "${sw[@]}" --param p=2:4294967298:1
refuse "--param alpha.*(more than|1e-300)" sweep --machine postal:2 --op bcast --algo lambda --p 8 --csv --param alpha=0.5:0.6:1e-300
# Four ranges of 100000 values: 10^20 configurations, past 2^64.
refuse "sweep has more than 10\^6 configurations" sweep --machine delta --op bcast --algo lambda --csv --mesh 1000x1000 --placement random \
  --param p=2:100001:1 --param bytes=1:100000:1 --param seed=1:100000:1 --param alpha=0.50001:0.6:0.000001
refuse "--param seed given twice" "${sw[@]}" --param seed=1:100000:1 --param seed=1:100000:1 --param seed=1:100000:1 --param seed=1:100000:1
refuse "--param p.*1\.5" "${sw[@]}" --param p=1.5:3.5:1
# correct: the rows are labelled 1.5, 2.5, 3.5, and the 1.5 row's time is sim's at --lambda 1.5.
reference sim --machine postal:2 --op bcast --algo lambda --p 8 --lambda 1.5 --json
t15=$(json_field time_us "$work/ref")
answer '[[ $(awk -F, "NR > 1 {printf \"%s;\", \$1}" "$out") == "1.5;2.5;3.5;" ]] && awk -F, -v t="$t15" "NR == 2 && \$2 + 0 == t + 0 {f = 1} END {exit !f}" "$out"' \
  sweep --machine postal:2 --op bcast --algo lambda --p 8 --csv --param lambda=1.5:3.5:1
refuse "--param bytes.*0\.4" "${sw[@]}" --p 8 --param bytes=0.4:1:1
refuse "--bytes.*0\.4" sim --machine postal:2 --op bcast --algo binomial --p 8 --bytes 0.4
refuse "--param seed.*-1" "${sw[@]}" --p 8 --param seed=-1:1:1
refuse "--mesh 5213847x13009525x1257271x4553488x12375613" sim --machine delta --mesh 5213847x13009525x1257271x4553488x12375613 --p 16
c3m=(c3 --op one-to-all --algo 1-lev-dir --p 16 --L 1024)
refuse "--h.*nan" "${c3m[@]}" --s 8 --l 512 --b 4 --h nan
refuse "--s.*inf" "${c3m[@]}" --s inf --l 512 --b 4 --h 2
refuse "--l.*1e308" "${c3m[@]}" --s 8 --l 1e308 --b 4 --h 2

# One integer grammar: --p 010 is ten and 0x10 is refused, in every command that takes --p.
# Correct for 010: the same output as --p 10 (JSON "p": 10 where the output is measured).
p_lines=(
  "run --op bcast --algo binomial --bytes 8 --json"
  "plan export --op bcast --algo binomial --format json"
  "plan check --op bcast --algo binomial"
  "c3 --op one-to-all --algo 1-lev-dir --L 1024 --json"
  "sim --machine postal:2 --op bcast --algo binomial --json"
  "sweep --machine postal:2 --op bcast --algo binomial --param bytes=8:16:8 --csv"
  "topo --synthetic pack:2_core:4_pu:2 --json"
  "tree --shape binomial --format json"
  "model fibo --s 1 --r 1 --json"
)
for l in "${p_lines[@]}"; do
  read -r -a a <<< "$l"
  a=("${a[@]//_/ }")
  case ${a[0]} in
    run) answer '[[ $(json_field p "$out") == 10 ]]' "${a[@]}" --p 010 ;;
    *) reference "${a[@]}" --p 10
       answer same_as_ref "${a[@]}" --p 010 ;;
  esac
  refuse "--p.*0x10" "${a[@]}" --p 0x10
done
answer 'grep -Eq "(^|[^0-9])10 ranks|\"p\": 10" "$out"' ping --p 010 --iters 10 --json
refuse "--p.*0x10" ping --p 0x10 --iters 10
reference sweep --machine postal:2 --op bcast --algo binomial --param p=10:12:1 --csv
answer same_as_ref sweep --machine postal:2 --op bcast --algo binomial --param p=010:012:1 --csv
refuse "--param p.*0x10" sweep --machine postal:2 --op bcast --algo binomial --param p=0x10:0x12:1 --csv

refuse "--seed.*18446744073709551616" sim --machine delta --op bcast --algo binomial --p 16 --mesh 4x4 --placement random --seed 18446744073709551616
refuse "--seed.*-1" sim --machine delta --op bcast --algo binomial --p 16 --mesh 4x4 --placement random --seed -1
cp "$data/bcast_binomial_p4_forwards_early.json" "$gen/plan.json"
refuse "--(op|p).*(--file|nosuch|-1)" plan check --file "$gen/plan.json" --op nosuch --p -1
sed 's/"bytes": 8/"bytes": -5/' "$gen/plan.json" > "$gen/plan-bytes.json"
sed 's/"tag": 0/"tag": -0.5/' "$gen/plan.json" > "$gen/plan-tag.json"
sed 's/"peer": 1/"peer": 4294967297/' "$gen/plan.json" > "$gen/plan-peer.json"
refuse '"bytes" = -5' plan check --file "$gen/plan-bytes.json"
refuse '"tag" = -0.5' plan check --file "$gen/plan-tag.json"
refuse '"peer" = 4294967297' plan check --file "$gen/plan-peer.json"
# run --file with an edited header: the error names the file and its field, not an option.
sed 's/"algo": "binomial"/"algo": ""/' "$gen/plan.json" > "$gen/plan-algo.json"
sed 's/"op": "bcast"/"op": "scan"/' "$gen/plan.json" > "$gen/plan-op.json"
sed 's/"algo": "binomial"/"algo": "ring"/' "$gen/plan.json" > "$gen/plan-ring.json"
refuse "^postbox: error: --file '[^']*plan-algo.json': field \"algo\" is empty$" run --file "$gen/plan-algo.json" --verify
refuse "--file '[^']*plan-op.json': field \"op\": unknown op 'scan'" run --file "$gen/plan-op.json" --verify
refuse "--file '[^']*plan-ring.json': unknown \"algo\" 'ring' for \"op\" bcast" run --file "$gen/plan-ring.json" --verify
refuse "--t|--p|count|saturat|exceed|overflow" model fibo --s 1 --r 0 --t 100
refuse "--algo" run --op bcast --algo '' --p 4
refuse "--bytes" sim --machine postal:2 --op bcast --algo binomial --p 4 --bytes ''
refuse "--sizes" calibrate --machine delta --sizes 16,,64
refuse "--places|placement list" topo --places 0,,1
refuse "--source-list" run --op s2p --algo br-lin --p 4 --bytes 8 --sources 2 --source-list 1,,2
refuse "--elem-bytes.*0" run --op allreduce --algo recursive-doubling --p 4 --bytes 8 --elem-bytes 0
refuse "--trace.*/dev/full" sim --machine postal:2 --op bcast --algo binomial --p 4 --trace /dev/full
refuse "mesh.router_delay_us' must be at most" sim --machine "$gen/delay-huge.toml" --p 4

# Every command writing to a full stdout: one line, exit 2.
full_lines=(
  "--help"
  "topo"
  "topo --json"
  "ping --p 2 --iters 10"
  "model postal --lambda 2 --n 8"
  "model breakeven"
  "model fibo --s 1 --r 1 --p 8"
  "model alpha-ranges --lambda 2 --n-max 20"
  "tree --shape fibo --p 8"
  "run --op bcast --algo binomial --p 4 --bytes 8"
  "run --list"
  "plan export --op bcast --algo binomial --p 4"
  "plan check --op bcast --algo binomial --p 4"
  "c3 --op one-to-all --algo 1-lev-dir --p 16 --L 1024"
  "c3 --table --op one-to-all --p 16"
  "sim --machine postal:2 --op bcast --algo binomial --p 8"
  "sweep --machine postal:2 --op bcast --algo binomial --param p=2:4:1 --csv"
  "calibrate --machine delta --sizes 16"
  "bench barrier --p 4 --impl fibo --outer 1 --rounds 1"
)
for l in "${full_lines[@]}"; do
  read -r -a a <<< "$l"
  to=/dev/full
  refuse "cannot write to standard output" "${a[@]}"
done

# ---------------------------------------------------------------------------------------------
# Wrong or two-line messages: one line naming what was typed.
# ---------------------------------------------------------------------------------------------
refuse "--lambda.*nan" tree --shape lambda --p 8 --lambda nan
refuse "--lambda.*nan" model postal --lambda nan --n 8
refuse "--lambda.*nan" sim --machine postal:2 --op bcast --algo lambda --p 8 --lambda nan
# LogGP with g > 2o + L (g = 10 > 2 + 1): correct is a time, or a refusal that does not blame an
# absent --lambda.
run sim --machine logp:1:1:10:0 --op bcast --algo lambda --p 8
if [[ $rc == 0 ]]; then
  answer 'grep -q "time" "$out"' sim --machine logp:1:1:10:0 --op bcast --algo lambda --p 8
else
  refuse "logp:1:1:10:0" sim --machine logp:1:1:10:0 --op bcast --algo lambda --p 8
fi
refuse "nosuch" nosuch
# Correct: f(t) = Fib(t + 1) for s = r = 1, first at least 10^9 at t = 44 (Fib(45) = 1134903170).
answer '[[ $(json_field steps "$out") == 44 ]]' model fibo --s 1 --r 1 --p 1000000000 --json
refuse "--p 1000000000 with --s 1 --r 100000" model fibo --s 1 --r 100000 --p 1000000000
refuse "--p must be at most [0-9]+, got 99999999999999999999" tree --shape binomial --p 99999999999999999999
refuse "--alpha.*1e-300" tree --shape lambda --p 8 --alpha 1e-300
refuse "'/etc' is a directory" sim --machine /etc
# --help contradicted itself on kary:1 and --root. Correct: what run --help and tree --help say
# (K in 1..N, root in 0..p-1, default 0) is what run, plan and tree accept (every bound and its
# neighbour: tests/cli/help_ranges.cmake, ctest cli.help.ranges).
answer 'grep -q "kary:K with K in 1\.\." "$out" && grep -Eq -- "--root R +Root rank, 0 to p-1 \(default 0\)" "$out"' run --help
answer 'grep -q "(K in 1\.\." "$out" && grep -Eq -- "--root R +Root rank in 0\.\.p-1 \(default 0\)" "$out"' tree --help
answer 'grep -q "\"algo\": \"kary:1\"" "$out"' plan export --op bcast --algo kary:1 --p 3 --format json
answer 'grep -q "\"shape\": \"kary:1\"" "$out"' tree --shape kary:1 --p 3 --format json
refuse "kary:K needs an integer K" tree --shape kary:0 --p 3
answer 'grep -q "\"root\": 2" "$out"' plan export --op bcast --algo binomial --p 3 --root 2 --format json
refuse "--root must be in 0\.\.2" tree --shape binomial --p 3 --root 3
refuse "--root" plan export --op bcast --algo binomial --p 3 --root 3 --format json

printf '%d of %d command lines ended as the one-line contract asks (exit 0 with an answer, or 2 with one line)\n' "$((total - fails))" "$total"
((fails == 0))
