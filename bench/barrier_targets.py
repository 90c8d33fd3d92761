#!/usr/bin/env python3
"""The default barrier's targets, judged over fresh processes.

Runs every measurement below N times, each in a fresh process, the configurations interleaved
(process i of every configuration before process i + 1 of any), and prints one markdown table per
target: the ratio's range over the processes, its median, and in how many processes it met its
target. Every ratio is computed inside one process (competitors interleaved round by round by
`postbox bench barrier`); this script only collects them.

  bench/barrier_targets.py BUILD_DIR [--processes N] [--loaded-processes M] [--skip-loads | --loads-only]

BUILD_DIR must hold bin/postbox, bin/bench_barrier_construct and bin/bench_parallel_for. About
five minutes with the defaults (N = 10, M = 5) on a 2-CPU machine. Prints the exact commands.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

KERNEL = "default,fibo,combine,central,dissemination,mcs,tournament,std"
OMP = "default,omp-gomp,omp-llvm,default@omp-gomp,default@omp-llvm,one-way"
LOADED = "default,std,omp-gomp"


def run_json(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    return json.loads(out)


def ratio(doc, p, num, den):
    for r in doc["ratios"]:
        if r["p"] == p and r["numerator"] == num and r["denominator"] == den:
            return r["value"]
    return None


def row(doc, p, impl):
    for r in doc["rows"]:
        if r["p"] == p and r["impl"] == impl:
            return r
    return None


def fmt(x):
    return f"{x:.2f}"


def summary(values, target):
    vals = [v for v in values if v is not None]
    if not vals:
        return "no data"
    met = sum(1 for v in vals if v <= target)
    return (f"{fmt(min(vals))}–{fmt(max(vals))}, median {fmt(statistics.median(vals))}, "
            f"≤ {target} in {met}/{len(vals)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("build")
    ap.add_argument("--processes", type=int, default=10)
    ap.add_argument("--loaded-processes", type=int, default=5)
    ap.add_argument("--skip-loads", action="store_true", help="leave out the runs with a competing process")
    ap.add_argument("--loads-only", action="store_true", help="only the runs with a competing process")
    a = ap.parse_args()
    if a.skip_loads and a.loads_only:
        print("barrier_targets.py: --skip-loads and --loads-only exclude each other", file=sys.stderr)
        return 2
    if a.loads_only:
        a.processes = 0
    elif a.processes < 1 or a.loaded_processes < 1:
        print("barrier_targets.py: --processes and --loaded-processes must be at least 1", file=sys.stderr)
        return 2
    pb = os.path.join(a.build, "bin", "postbox")
    construct = os.path.join(a.build, "bin", "bench_barrier_construct")
    pfor = os.path.join(a.build, "bin", "bench_parallel_for")
    for exe in (pb, construct, pfor):
        if not os.access(exe, os.X_OK):
            print(f"barrier_targets.py: {exe} is not an executable (build the project first)", file=sys.stderr)
            return 2

    bench = [pb, "bench", "barrier", "--json"]
    configs = {} if a.loads_only else {
        "kernel-a": bench + ["--quick", "--p", "2,3,4,8,16", "--impl", KERNEL],
        "kernel-b": bench + ["--quick", "--p", "6,64", "--impl", KERNEL],
        "omp-barrier": bench + ["--p", "2", "--method", "barrier", "--impl", OMP],
        "omp-late": bench + ["--p", "2", "--method", "late", "--impl", OMP],
    }
    loads = {} if a.skip_loads else {
        load: bench + ["--p", "2,4", "--load", load, "--tail", "--impl", LOADED] for load in ("none", "nice0", "nice10")
    }
    print("Commands (each run in fresh processes, interleaved):\n")
    for cmd in list(configs.values()) + list(loads.values()):
        print("    " + " ".join(os.path.relpath(c) if c == pb else c for c in cmd))
    if configs:
        print(f"    XDG_CACHE_HOME=<empty directory> {os.path.relpath(construct)} P   (P = 2, 4, 16, 64, one per process)")
        print(f"    {os.path.relpath(pfor)} 2 4")
    print()

    docs = {k: [] for k in configs}
    ldocs = {k: [] for k in loads}
    constructed = {p: [] for p in (2, 4, 16, 64)}
    pfor_lines = []
    for i in range(max(a.processes, a.loaded_processes)):
        print(f"process {i + 1} ...", file=sys.stderr)
        if i < a.processes:
            for k, cmd in configs.items():
                docs[k].append(run_json(cmd))
            for p in constructed:
                with tempfile.TemporaryDirectory() as cache:
                    env = dict(os.environ, XDG_CACHE_HOME=cache)
                    env.pop("POSTBOX_S_NS", None)
                    env.pop("POSTBOX_R_NS", None)
                    out = subprocess.run([construct, str(p)], check=True, stdout=subprocess.PIPE, text=True,
                                         env=env).stdout.split()
                    constructed[p].append((float(out[3]), out[5]))
        if i < a.loaded_processes:
            for k, cmd in loads.items():
                ldocs[k].append(run_json(cmd))
        if i < min(3, a.processes):
            pfor_lines.append(subprocess.run([pfor, "2", "4"], check=True, stdout=subprocess.PIPE,
                                             text=True).stdout)

    n = a.processes
    if n:
        print_unloaded(n, docs, constructed, pfor_lines)
    if loads:
        print_loaded(a.loaded_processes, ldocs)
    return 0


def print_unloaded(n, docs, constructed, pfor_lines):
    print(f"## Default against the best postbox algorithm and std::barrier ({n} processes)\n")
    print("| p | default median ns (algorithm) | default/best | default/std |")
    print("|---:|---|---|---|")
    for k, ps in (("kernel-a", (2, 3, 4, 8, 16)), ("kernel-b", (6, 64))):
        for p in ps:
            meds = [row(d, p, "default")["median_ns"] for d in docs[k]]
            best = [ratio(d, p, "default", "best") for d in docs[k]]
            std = [ratio(d, p, "default", "std") for d in docs[k]]
            algos = sorted({r.get("best", "") for d in docs[k] for r in d["ratios"]
                            if r["p"] == p and r["denominator"] == "best"})
            print(f"| {p} | {statistics.median(meds):.0f} (best: {', '.join(algos)}) | {summary(best, 1.15)} | "
                  f"{summary(std, 1.0)} |")

    print(f"\n## p = 2, OpenMP teams calling the C API ({n} processes)\n")
    print("| method | default ns | omp-gomp | omp-llvm | default@omp-gomp / best omp | default@omp-llvm / best omp | "
          "default/one-way |")
    print("|---|---:|---:|---:|---|---|---|")
    for k in ("omp-barrier", "omp-late"):
        med = {impl: statistics.median(row(d, 2, impl)["median_ns"] for d in docs[k])
               for impl in ("default", "omp-gomp", "omp-llvm")}
        g = [ratio(d, 2, "default@omp-gomp", "best-omp") for d in docs[k]]
        l_ = [ratio(d, 2, "default@omp-llvm", "best-omp") for d in docs[k]]
        ow = [ratio(d, 2, "default", "one-way") for d in docs[k]]
        print(f"| {k[4:]} | {med['default']:.0f} | {med['omp-gomp']:.0f} | {med['omp-llvm']:.0f} | "
              f"{summary(g, 0.8)} | {summary(l_, 0.8)} | {summary(ow, 1.5)} |")

    print(f"\n## The first Barrier(p) in a fresh process, no saved calibration ({n} processes per p)\n")
    print("| p | ms: max, median | algorithms |")
    print("|---:|---|---|")
    for p, got in constructed.items():
        ms = [x for x, _ in got]
        algos = sorted({name for _, name in got})
        print(f"| {p} | {max(ms):.3f}, {statistics.median(ms):.3f} | {', '.join(algos)} |")

    print("\n## parallel_for_phases against the hand-written loop (3 runs)\n")
    for i, text in enumerate(pfor_lines):
        ratios = []
        for ln in text.split("\n"):
            w = ln.split()
            if len(w) >= 4 and w[0].isdigit() and w[1] in ("block", "index"):
                like = "hand" if w[1] == "block" else "hand-index"
                ratios.append(f"p = {w[0]} {w[1]}/{like} {w[3]}")
        print(f"run {i + 1}: " + "; ".join(ratios) + "  (target ≤ 1.1)")


def one_way(docs):
    """Each process's cross-CPU one-way latency before its run (the machine's mode), ns."""
    vals = [d.get("cross_cpu_one_way_ns_before") for d in docs]
    return ", ".join("-" if v is None else f"{v:.0f}" for v in vals)


def print_loaded(m, ldocs):
    print(f"\n## One competing process ({m} processes per load)\n")
    print("| load | p | default per process (ns) | × quiet | default p99 (µs) | std (ns) | default/std | omp-gomp (ns) | "
          "omp-gomp × quiet | cross-CPU one-way per process (ns) |")
    print("|---|---:|---|---|---|---:|---|---:|---|---|")
    quiet = {}
    for load in ("none", "nice0", "nice10"):
        for p in (2, 4):
            meds = [row(d, p, "default")["median_ns"] for d in ldocs[load]]
            p99 = [row(d, p, "default")["p99_ns"] / 1000 for d in ldocs[load]]
            std = statistics.median(row(d, p, "std")["median_ns"] for d in ldocs[load])
            dstd = [ratio(d, p, "default", "std") for d in ldocs[load]]
            med = statistics.median(meds)
            gomp = statistics.median(row(d, p, "omp-gomp")["median_ns"] for d in ldocs[load])
            if load == "none":
                quiet[p] = med
                quiet["gomp", p] = gomp
            times = ", ".join(f"{x:.0f}" for x in meds)
            print(f"| {load} | {p} | {med:.0f} ({times}) | {med / quiet[p]:.2f} | "
                  f"{min(p99):.1f}–{max(p99):.1f} | {std:.0f} | {summary(dstd, 1.0)} | {gomp:.0f} | "
                  f"{gomp / quiet['gomp', p]:.2f} | {one_way(ldocs[load])} |")


if __name__ == "__main__":
    sys.exit(main())
