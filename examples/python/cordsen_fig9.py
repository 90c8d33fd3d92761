#!/usr/bin/env python3
"""Cordsen et al.'s Fig. 9: the Fibo-tree for s = 1, r = 3, p = 64, each node labelled with the
step in which it receives the message (the final process at step 15).

    python3 cordsen_fig9.py OUT.png
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import postbox  # noqa: E402


def layout(tree):
    """x: leaves left to right in the order of the sends, a parent centred over its children."""
    x = [0.0] * tree.p
    next_leaf = 0
    order = [(tree.root, False)]
    while order:  # depth first, children in send order, without recursion
        v, done = order.pop()
        kids = tree.children[v]
        if not kids:
            x[v] = next_leaf
            next_leaf += 1
        elif done:
            x[v] = (x[kids[0]] + x[kids[-1]]) / 2
        else:
            order.append((v, True))
            order.extend((c, False) for c in reversed(kids))
    return x


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: cordsen_fig9.py OUT.png")
    tree = postbox.tree("fibo", p=64, s=1, r=3)
    step = tree.time  # the step in which each rank receives (the root: 0)
    x = layout(tree)
    fig, ax = plt.subplots(figsize=(16, 7))
    for v, kids in enumerate(tree.children):
        for c in kids:
            ax.plot([x[v], x[c]], [step[v], step[c]], color="0.55", linewidth=0.8, zorder=1)
    ax.scatter(x, step, s=260, facecolors="white", edgecolors="black", zorder=2)
    for v in range(tree.p):
        ax.annotate(f"{step[v]:g}", (x[v], step[v]), ha="center", va="center", fontsize=7, zorder=3)
    ax.invert_yaxis()
    ax.set_ylabel("step in which the node receives")
    ax.set_xticks([])
    ax.set_title(f"Fibo-tree for s = 1, r = 3, p = {tree.p} (Cordsen et al. Fig. 9): "
                 f"the final process receives in step {tree.completion}")
    fig.tight_layout()
    fig.savefig(argv[0], dpi=110)
    plt.close(fig)
    # What was plotted, for tests (python/tests/check_examples.py).
    return {"parent": tree.parent.tolist(), "step": step.tolist(), "final_step": float(tree.completion)}


if __name__ == "__main__":
    result = main(sys.argv[1:])
    print(f"wrote {sys.argv[1]}: final step {result['final_step']:g}")
