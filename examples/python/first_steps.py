#!/usr/bin/env python3
"""The Python module in a few lines (docs/python.md): a tree, the postal arithmetic and the
emulator give the papers' numbers; exit status 1 if they do not."""
import sys

import postbox

tree = postbox.tree("fibo", p=64, s=1, r=3)
print("Fibo-tree, s = 1, r = 3, p = 64: the last rank receives in step", tree.completion)
print("receive steps of ranks 0-7:", tree.time[:8])

T = postbox.T_lambda("9/5", 64)
run = postbox.sim("postal:1.8", op="bcast", algo="lambda", p=64, bytes=512)
print(f"lambda-tree broadcast to 64 nodes at lambda = 1.8: T = {T}, emulated {run.time_us}")

try:
    postbox.tree("fibo", p=0)
except ValueError as e:
    print("bad input:", e)

sys.exit(0 if tree.completion == 15 and run.time_us == float(T) else 1)
