#!/usr/bin/env python3
"""Where the CPU time of a running command goes: a profile for the loaded barrier runs.

  bench/cpu_share.py [--warmup S] [--window S] -- COMMAND [ARGS...]

Starts COMMAND, waits --warmup seconds (default 2), then over --window seconds (default 3) reads
the kernel's scheduler statistics (/proc/PID/task/TID/schedstat and status) of every thread of
COMMAND and of its child processes (the competing process of `bench barrier --load`), and the
machine's idle time (/proc/stat). Prints, per thread that ran at least 5% of the window: the
share of the wall time it ran, the share it was runnable but waiting for a CPU, and its context
switches per second (voluntary: it blocked; involuntary: it was preempted or yielded). Then kills
COMMAND. Reads counters only: the command runs undisturbed between the two readings.
"""
import argparse
import os
import signal
import subprocess
import sys
import time


def threads_of(pid):
    """(pid, tid) of every thread of pid and of its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tids:
            out.append((p, int(t)))
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo += [int(c) for c in f.read().split()]
            except OSError:
                pass
    return out


def read(pid, tid):
    """run ns, runnable-waiting ns, voluntary and involuntary context switches."""
    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
        run, wait = (int(x) for x in f.read().split()[:2])
    switches = {}
    with open(f"/proc/{pid}/task/{tid}/status") as f:
        for line in f:
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                key, value = line.split(":")
                switches[key] = int(value)
    return run, wait, switches.get("voluntary_ctxt_switches", 0), switches.get("nonvoluntary_ctxt_switches", 0)


def snapshot(pid):
    out = {}
    for k in threads_of(pid):
        try:
            out[k] = read(*k)
        except OSError:
            pass
    return out


def idle_ticks():
    with open("/proc/stat") as f:
        return int(f.readline().split()[4])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--window", type=float, default=3.0)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd or a.warmup < 0 or a.window <= 0:
        print("cpu_share.py: give a command after --, a --warmup of 0 or more and a --window above 0", file=sys.stderr)
        return 2
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(a.warmup)
        t0, i0, s0 = time.monotonic(), idle_ticks(), snapshot(proc.pid)
        time.sleep(a.window)
        t1, i1, s1 = time.monotonic(), idle_ticks(), snapshot(proc.pid)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the command and every process it made
        proc.wait()
    w = t1 - t0
    hz = os.sysconf("SC_CLK_TCK")
    print(f"window {w:.1f} s; machine idle {(i1 - i0) / hz / w:.2f} CPUs of {len(os.sched_getaffinity(0))}")
    for k in sorted(s1):
        if k not in s0:
            continue
        run, wait, vol, inv = (b - a_ for a_, b in zip(s0[k], s1[k]))
        if run / 1e9 / w < 0.05:
            continue
        role = "command" if k[0] == proc.pid else "child"
        print(f"{role} pid {k[0]} tid {k[1]}: ran {run / 1e9 / w:.2f} of the wall time, runnable but waiting "
              f"{wait / 1e9 / w:.2f}; {vol / w:.0f} voluntary and {inv / w:.0f} involuntary switches/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
