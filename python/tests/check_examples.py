#!/usr/bin/env python3
"""Runs examples/python: first_steps.py (its exit status), and the figure scripts into OUT_DIR, checking each PNG was written and that
the numbers it plots are the CLI's (POSTBOX_CLI; left out when not given) and the papers' or
docs/reproduction.md's.

    python3 check_examples.py EXAMPLES_DIR OUT_DIR
"""
import importlib.util
import json
import os
import re
import subprocess
import sys

examples, out = sys.argv[1], sys.argv[2]
docs = os.path.join(examples, "..", "..", "docs", "reproduction.md")
cli = os.environ.get("POSTBOX_CLI", "")
os.makedirs(out, exist_ok=True)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run_example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(examples, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    png = os.path.join(out, name + ".png")
    if os.path.exists(png):
        os.remove(png)
    data = module.main([png])
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG")
    print(f"{png}: {os.path.getsize(png)} bytes")
    return module, data


def cli_json(*args):
    return json.loads(subprocess.run([cli, *args], check=True, capture_output=True, text=True, timeout=60).stdout)


# docs/using.md's Python block: a whole program that checks its own numbers.
first = subprocess.run([sys.executable, os.path.join(examples, "first_steps.py")], capture_output=True, text=True, timeout=60)
check(first.returncode == 0, f"first_steps.py exited {first.returncode}:\n{first.stdout}{first.stderr}")

# Cordsen et al. Fig. 9: "The final process is activated in step 15".
_, fig9 = run_example("cordsen_fig9")
check(fig9["final_step"] == 15 and max(fig9["step"]) == 15, f"Fig. 9: final step {fig9['final_step']}, the paper's is 15")
if cli:
    tree = cli_json("tree", "--shape", "fibo", "--p", "64", "--s", "1", "--r", "3", "--format", "json")
    check([n["time"] for n in tree["nodes"]] == fig9["step"], "Fig. 9: the plotted steps are not the CLI's")
    check([n["parent"] for n in tree["nodes"]] == fig9["parent"], "Fig. 9: the plotted edges are not the CLI's")

# Bruck et al. Fig. 12: docs/reproduction.md's table of the least predicted time per λ.
module, fig12 = run_example("bruck_fig12")
text = open(docs, encoding="utf-8").read()
rows = re.findall(r"^\| ([\d.]+) \((?:the paper's|ours)\) \| ([\d.]+)-([\d.]+) \(T = ([\d.]+)\) \|", text, re.M)
check(len(rows) == 2, f"docs/reproduction.md: {len(rows)} Fig. 12 rows found, expected 2")
check([lam for lam, *_ in rows] == list(module.LAMBDAS), f"Fig. 12: the example's λ {module.LAMBDAS} are not the doc's")
for lam, lo, hi, least in rows:
    curve = fig12.get(lam)
    if curve is None:
        continue
    got = curve["best"]
    check((f"{got[0]:.2f}", f"{got[1]:.2f}") == (lo, hi) and f"{got[2]:g}" == least,
          f"Fig. 12, λ = {lam}: least T = {got[2]:g} for α {got[0]:.2f}-{got[1]:.2f}; the doc says {least} for {lo}-{hi}")
    if cli:
        doc = cli_json("sweep", "--machine", f"postal:{lam}", "--op", "bcast", "--algo", "lambda", "--p", "64",
                       "--bytes", "512", "--param", module.ALPHAS, "--json")
        check([r["alpha"] for r in doc["results"]] == curve["alpha"], f"Fig. 12, λ = {lam}: the plotted α are not the CLI's")
        check([r["time_us"] for r in doc["results"]] == curve["time"], f"Fig. 12, λ = {lam}: the plotted times are not the CLI's")

if failures:
    print("examples/python:\n  " + "\n  ".join(failures))
    sys.exit(1)
sources = "the CLI's, the papers' and the doc's" if cli else "the papers' and the doc's (no POSTBOX_CLI given)"
print(f"examples/python: first_steps.py passed, both figures written; the numbers they plot are {sources}")
