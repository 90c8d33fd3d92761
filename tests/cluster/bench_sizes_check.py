#!/usr/bin/env python3
"""Smoke test of `postbox bench cluster --sizes` under mpirun (no timing assertions).

    bench_sizes_check.py MPIEXEC NP POSTBOX THREADS

Runs a tiny sweep (8 B and 8 KiB, 3 rounds of 1 ms batches) twice, as JSON and as text, and
checks: every documented JSON field is there; the tables are barrier, bcast, reduce, allreduce,
gather in that order, one row per size (the barrier one row); each figure is the median of its
round figures; each ratio is postbox_ns / mpi_ns; the element and allreduce's algorithm follow
the size; the text table prints the same operations with a ratio column. Exit 0 or 1 naming the
first problem.
"""
import json
import statistics
import subprocess
import sys


def fail(msg):
    print("bench_sizes_check: FAIL " + msg)
    sys.exit(1)


def main():
    mpiexec, np, postbox, threads = sys.argv[1:5]
    base = [mpiexec, "--oversubscribe", "--bind-to", "none", "-np", np, postbox, "bench", "cluster",
            "--threads", threads, "--sizes", "8,8KiB", "--rounds", "3", "--target-ms", "1"]
    run = subprocess.run(base + ["--json"], capture_output=True, text=True, timeout=240)
    if run.returncode != 0:
        fail("exit %d\nstdout:\n%s\nstderr:\n%s" % (run.returncode, run.stdout, run.stderr))
    try:
        j = json.loads(run.stdout)
    except ValueError as e:
        fail("not JSON (%s):\n%s" % (e, run.stdout))
    for key in ["processes", "hybrid_processes", "threads", "on_node", "allowed_cpus", "cross_cpu_one_way_ns", "rounds", "target_ms",
                "sizes", "load_before", "load_after", "tables"]:
        if key not in j:
            fail("no top-level field '%s'" % key)
    one_way = j["cross_cpu_one_way_ns"]
    if one_way is not None and not (isinstance(one_way, (int, float)) and one_way > 0):
        fail("cross_cpu_one_way_ns %r: expected a positive number or null" % (one_way,))
    if (one_way is None) != (j["allowed_cpus"] < 2):
        fail("cross_cpu_one_way_ns %r with %d allowed CPUs" % (one_way, j["allowed_cpus"]))
    if j["sizes"] != [8, 8192]:
        fail("sizes %s, expected [8, 8192]" % j["sizes"])
    if j["threads"] != int(threads) or j["processes"] != int(np) or j["rounds"] != 3:
        fail("threads/processes/rounds: %s/%s/%s" % (j["threads"], j["processes"], j["rounds"]))
    ops = [t["op"] for t in j["tables"]]
    if ops != ["barrier", "bcast", "reduce", "allreduce", "gather"]:
        fail("tables %s" % ops)
    fields = ["bytes", "element", "postbox_ns", "mpi_ns", "ratio", "postbox_algorithm", "postbox_ops", "mpi_ops",
              "postbox_round_ns", "mpi_round_ns"]
    for t in j["tables"]:
        if "mpi" not in t or not t["mpi"].startswith("MPI_"):
            fail("%s: no 'mpi' call name" % t["op"])
        want = [0] if t["op"] == "barrier" else [8, 8192]
        if [r["bytes"] for r in t["rows"]] != want:
            fail("%s: sizes %s, expected %s" % (t["op"], [r["bytes"] for r in t["rows"]], want))
        for r in t["rows"]:
            where = "%s %d B" % (t["op"], r["bytes"])
            for f in fields:
                if f not in r:
                    fail("%s: no field '%s'" % (where, f))
            for side in ["postbox", "mpi"]:
                rounds = r[side + "_round_ns"]
                if len(rounds) != 3 or any(x <= 0 for x in rounds):
                    fail("%s: %s_round_ns %s" % (where, side, rounds))
                if abs(r[side + "_ns"] - statistics.median(rounds)) > 1e-6 * r[side + "_ns"]:
                    fail("%s: %s_ns %s is not the median of %s" % (where, side, r[side + "_ns"], rounds))
                if r[side + "_ops"] < 1:
                    fail("%s: %s_ops %s" % (where, side, r[side + "_ops"]))
            if abs(r["ratio"] - r["postbox_ns"] / r["mpi_ns"]) > 1e-9 * r["ratio"]:
                fail("%s: ratio %s is not postbox_ns / mpi_ns = %s" % (where, r["ratio"], r["postbox_ns"] / r["mpi_ns"]))
            element = {"barrier": "", "bcast": "byte", "gather": "byte"}.get(t["op"], "double")
            if r["element"] != element:
                fail("%s: element '%s', expected '%s'" % (where, r["element"], element))
            if t["op"] == "allreduce":
                algo = "recursive-doubling" if r["bytes"] < 8192 else "rabenseifner"
                if r["postbox_algorithm"] != algo:
                    fail("%s: algorithm '%s', expected '%s'" % (where, r["postbox_algorithm"], algo))
    text = subprocess.run(base, capture_output=True, text=True, timeout=240)
    if text.returncode != 0:
        fail("text run: exit %d\n%s" % (text.returncode, text.stderr))
    for op, call in [("barrier", "MPI_Barrier"), ("bcast", "MPI_Bcast"), ("reduce", "MPI_Reduce"),
                     ("allreduce", "MPI_Allreduce"), ("gather", "MPI_Gather")]:
        if "%s (postbox against %s)" % (op, call) not in text.stdout:
            fail("text: no table for %s\n%s" % (op, text.stdout))
    if "postbox us  Open MPI us    ratio" not in text.stdout or "8 KiB" not in text.stdout:
        fail("text: no header or no 8 KiB row\n%s" % text.stdout)
    print("bench_sizes_check: ok")


main()
