#!/usr/bin/env python3
"""Writes a two-level fat tree in LogGOPSim's network-file format (docs/emulator.md, "Network
from a DOT file") to stdout: HOSTS hosts H0.. (ranks in that order), PER_LEAF on each leaf switch
L0.., every leaf linked to each of SPINES spine switches S0..; going up, a leaf sends a message
for host h through spine h mod SPINES.

    python3 examples/fat_tree_dot.py HOSTS PER_LEAF SPINES > net.dot
"""
import sys

hosts, per_leaf, spines = (int(a) for a in sys.argv[1:4])
if hosts < 1 or per_leaf < 1 or spines < 1 or hosts % per_leaf:
    sys.exit("fat_tree_dot.py: HOSTS, PER_LEAF, SPINES must be positive, HOSTS a multiple of PER_LEAF")
leaves = hosts // per_leaf
out = [f"digraph fat_tree_{hosts} {{", "  " + "; ".join(f"H{i}" for i in range(hosts)) + ";"]
for i in range(hosts):
    out.append(f'  H{i} -> L{i // per_leaf} [comment="*"]; L{i // per_leaf} -> H{i} [comment="H{i}"];')
for j in range(leaves):
    down = ",".join(f"H{i}" for i in range(j * per_leaf, (j + 1) * per_leaf))
    for k in range(spines):
        up = ",".join(f"H{i}" for i in range(hosts) if i // per_leaf != j and i % spines == k)
        out.append(f'  L{j} -> S{k} [comment="{up}"]; S{k} -> L{j} [comment="{down}"];')
out.append("}")
print("\n".join(out))
