#!/usr/bin/env python3
"""Bruck et al.'s Fig. 12: the postal model's predicted time of the λ-tree broadcast to n = 64
nodes against its split fraction α, in units of one send, for the paper's λ = 1.8 and for the
λ of our Delta profile at 512 B (2.6082, docs/reproduction.md "Fig. 3"); the least time and the
α range that reaches it are marked.

    python3 bruck_fig12.py OUT.png
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import postbox  # noqa: E402

LAMBDAS = ("1.8", "2.6082")  # the paper's, and our Delta profile's at 512 B
ALPHAS = "alpha=0.50:0.80:0.01"


def best_range(alpha, time):
    """The first and last α whose time is within 1e-9 of the least, and that time."""
    least = min(time)
    near = [a for a, t in zip(alpha, time) if t <= least + 1e-9]
    return near[0], near[-1], least


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: bruck_fig12.py OUT.png")
    curves = {}
    fig, ax = plt.subplots(figsize=(8, 5))
    for lam in LAMBDAS:
        run = postbox.sweep(f"postal:{lam}", [ALPHAS], op="bcast", algo="lambda", p=64, bytes=512)
        alpha, time = run.values[:, 0].tolist(), run.time_us.tolist()
        lo, hi, least = best_range(alpha, time)
        curves[lam] = {"alpha": alpha, "time": time, "best": (lo, hi, least)}
        line, = ax.plot(alpha, time, marker=".", label=f"λ = {lam}: least T = {least:g} for α in {lo:.2f}-{hi:.2f}")
        ax.axvspan(lo, hi, color=line.get_color(), alpha=0.15)
    ax.set_xlabel("α")
    ax.set_ylabel("predicted time (units of one send)")
    ax.set_title("Bruck et al. Fig. 12: λ-tree broadcast, n = 64, postal model")
    ax.legend()
    fig.tight_layout()
    fig.savefig(argv[0], dpi=110)
    plt.close(fig)
    return curves  # what was plotted, for tests (python/tests/check_examples.py)


if __name__ == "__main__":
    for lam, curve in main(sys.argv[1:]).items():
        lo, hi, least = curve["best"]
        print(f"lambda {lam}: least predicted time {least:g} for alpha {lo:.2f}-{hi:.2f}")
