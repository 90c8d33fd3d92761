"""The Python module against the library's figures (the papers' numbers) and against the CLI's
output for the same options (POSTBOX_CLI: the postbox tool; those tests are skipped without it)."""
import json
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import postbox

CLI = os.environ.get("POSTBOX_CLI", "")
needs_cli = pytest.mark.skipif(not CLI, reason="POSTBOX_CLI (the postbox tool) not given")


def cli(*args, code=0):
    """The tool's stdout, or its one error line (without 'postbox: error: ') when code is 2."""
    done = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == code, (args, done.returncode, done.stderr)
    if code == 2:
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("postbox: error: "), done.stderr
        return lines[0][len("postbox: error: "):]
    return done.stdout


# ---- trees -----------------------------------------------------------------------------------

def test_fibo_tree_of_cordsen_fig9():
    t = postbox.tree("fibo", p=64, s=1, r=3)
    assert t.completion == 15  # Cordsen et al. §4.3: the final process is activated in step 15
    assert t.p == 64 and t.root == 0 and t.parent[0] == -1
    assert isinstance(t.parent, np.ndarray) and t.parent.shape == (64,)
    assert isinstance(t.time, np.ndarray) and t.time.max() == 15
    # Each child i (from 1) of a node active at a is active at a + i*s + r.
    for v, kids in enumerate(t.children):
        for i, child in enumerate(kids, start=1):
            assert t.parent[child] == v
            assert t.time_exact[child] == t.time_exact[v] + i * t.s + t.r


def test_binomial_and_lambda_tree_of_bruck_fig2():
    assert postbox.tree("lambda", p=8, lambda_=2).completion == 5
    assert postbox.tree("binomial", p=8, lambda_=2).completion == 6


def test_root_relabels():
    t = postbox.tree("binomial", p=8, root=3)
    assert t.root == 3 and t.parent[3] == -1 and t.time[3] == 0


@needs_cli
def test_tree_matches_cli():
    t = postbox.tree("fibo", p=19, s=27, r=88)
    assert t.json() == cli("tree", "--shape", "fibo", "--p", "19", "--s", "27", "--r", "88", "--format", "json")
    assert t.ascii() == cli("tree", "--shape", "fibo", "--p", "19", "--s", "27", "--r", "88")
    doc = json.loads(t.json())
    assert [n["parent"] for n in doc["nodes"]] == t.parent.tolist()
    assert [n["time"] for n in doc["nodes"]] == t.time.tolist()
    assert [n["children"] for n in doc["nodes"]] == t.children
    assert t.dot() == cli("tree", "--shape", "fibo", "--p", "19", "--s", "27", "--r", "88", "--format", "dot")
    assert t.dot(time_layers=True) == cli("tree", "--shape", "fibo", "--p", "19", "--s", "27", "--r", "88", "--format", "dot",
                                          "--layers", "time")
    assert t.svg() == cli("tree", "--shape", "fibo", "--p", "19", "--s", "27", "--r", "88", "--format", "svg",
                          "--layout", "builtin")
    assert t.svg(time_layers=True) == cli("tree", "--shape", "fibo", "--p", "19", "--s", "27", "--r", "88", "--format",
                                          "svg", "--layout", "builtin", "--layers", "time")
    h = postbox.tree("hier:fibo,binomial", p=8, synthetic="pack:2 core:2 pu:2", places="scatter")
    assert h.ascii() == cli("tree", "--shape", "hier:fibo,binomial", "--p", "8", "--synthetic", "pack:2 core:2 pu:2",
                            "--places", "scatter")
    t = postbox.tree("lambda", p=14, lambda_=Fraction(9, 5))
    assert t.json() == cli("tree", "--shape", "lambda", "--p", "14", "--lambda", "9/5", "--format", "json")
    assert t.lambda_ == Fraction(9, 5)


@needs_cli
def test_compare_matches_cli():
    c = postbox.compare_trees(64, s=1, r=3)
    doc = json.loads(cli("tree", "--compare", "--p", "64", "--s", "1", "--r", "3", "--json"))
    assert c.shapes == [row["shape"] for row in doc["rows"]]
    assert c.completion.tolist() == [row["completion"] for row in doc["rows"]]
    assert c.ratio.tolist() == [row["ratio"] for row in doc["rows"]]
    assert c.best == 15 and c.completion[c.shapes.index("binomial")] == 24  # Cordsen §4.3


# ---- the postal and send/receive models ----------------------------------------------------------

def test_postal_arithmetic():
    # λ = 2: N_2 grows as the Fibonacci numbers (Bruck §2); 8 nodes at t = 5 (Fig. 2).
    assert [postbox.N_lambda(2, t) for t in range(7)] == [1, 1, 2, 3, 5, 8, 13]
    assert postbox.T_lambda(2, 8) == 5 and postbox.T_lambda(2, 9) == 6
    assert postbox.N_lambda(1, 3) == 8  # binomial: 2^t
    assert abs(postbox.gamma(2) - (1 + 5 ** 0.5) / 2) < 1e-12
    rep = postbox.postal(Fraction(9, 5), 64)
    assert rep.T == postbox.T_lambda("9/5", 64)
    assert postbox.N_lambda("9/5", rep.T) >= 64 > rep.N[-2]
    assert rep.N[-1] >= 64 and rep.N_times[-1] == float(rep.T)
    assert rep.n_min <= rep.n_max and rep.alpha_min == Fraction(rep.n_min, 64)
    assert postbox.postal(2, 1).alpha_min is None  # one node needs no split


def test_fibo_f_of_cordsen():
    assert postbox.fibo_f(1, 3, 15) >= 64 > postbox.fibo_f(1, 3, 14)
    rep = postbox.fibo(1, 3, p=64)
    assert rep.steps == 15 and rep.time == 15 and rep.f[-1] >= 64 and len(rep.f) == 16
    assert rep.f.tolist() == [postbox.fibo_f(1, 3, t) for t in range(16)]
    assert postbox.fibo(1, 3, t=4).steps is None


@needs_cli
def test_models_match_cli():
    rep = postbox.postal(1.8, 64)
    doc = json.loads(cli("model", "postal", "--lambda", "1.8", "--n", "64", "--json"))
    assert str(rep.T) == doc["T_exact"] and rep.gamma == doc["gamma"]
    assert rep.N.tolist() == doc["N"] and rep.N_times.tolist() == doc["N_times"]
    assert float(rep.alpha_min) == doc["alpha_min"] and float(rep.alpha_max) == doc["alpha_max"]
    f = postbox.fibo(1, 3, p=64)
    doc = json.loads(cli("model", "fibo", "--s", "1", "--r", "3", "--p", "64", "--json"))
    assert f.f.tolist() == doc["f"] and f.steps == doc["steps"] and str(f.time) == doc["T_exact"]
    a = postbox.alpha_ranges(1.293, 200)
    doc = json.loads(cli("model", "alpha-ranges", "--lambda", "1.293", "--n-max", "200", "--json"))
    assert a.n.tolist() == [row["n"] for row in doc["ranges"]]
    assert a.alpha_min.tolist() == [row["alpha_min"] for row in doc["ranges"]]
    assert a.alpha_max.tolist() == [row["alpha_max"] for row in doc["ranges"]]
    assert a.lookup_n_upper.tolist() == [row["n_upper"] for row in doc["lookup_table"]]
    assert [str(x) for x in a.lookup_alpha] == [row["alpha_exact"] for row in doc["lookup_table"]]
    b = postbox.breakeven(5)
    doc = json.loads(cli("model", "breakeven", "--max-floor", "5", "--json"))
    assert b.floor.tolist() == [row["floor"] for row in doc["rows"]]
    assert b.break_even.tolist() == [row["break_even"] for row in doc["rows"]]


# ---- plans and the emulator ----------------------------------------------------------------------

@needs_cli
@pytest.mark.parametrize("fmt", ["goal", "json", "dot"])
def test_plan_export_is_the_cli_output(fmt):
    text = postbox.plan_export("bcast", algo="lambda", p=12, bytes=64, lambda_=1.8, format=fmt)
    assert text == cli("plan", "export", "--op", "bcast", "--algo", "lambda", "--p", "12", "--bytes", "64",
                       "--lambda", "1.8", "--format", fmt)


@needs_cli
def test_plan_export_bytes_default_to_0():
    goal = postbox.plan_export("bcast", algo="binomial", p=4)
    assert goal == cli("plan", "export", "--op", "bcast", "--algo", "binomial", "--p", "4")
    assert "send 0b to 1" in goal


@needs_cli
def test_plan_export_on_a_machine_is_the_cli_output():
    text = postbox.plan_export("reduce", algo="binomial", p=8, bytes=1024, elem_bytes=8, machine="delta")
    assert text == cli("plan", "export", "--op", "reduce", "--algo", "binomial", "--p", "8", "--bytes", "1024",
                       "--elem-bytes", "8", "--machine", "delta")


@needs_cli
def test_sim_matches_cli():
    r = postbox.sim("postal:1.8", op="bcast", algo="lambda", p=64, bytes=512, alpha=0.57)
    doc = json.loads(cli("sim", "--machine", "postal:1.8", "--op", "bcast", "--algo", "lambda", "--p", "64",
                         "--bytes", "512", "--alpha", "0.57", "--json"))
    assert r.time_us == doc["time_us"] and r.time_ticks == doc["time_ticks"]
    assert (r.events, r.messages, r.packets) == (doc["events"], doc["messages"], doc["packets"])
    assert r.max_waiting_events == doc["max_waiting_events"] > 0
    assert (r.op, r.algo, r.p, r.bytes) == (doc["op"], doc["algo"], doc["p"], doc["bytes"])
    assert r.per_rank_us.tolist() == doc["per_rank_us"] and r.per_rank_us.max() == r.time_us


def test_sim_defaults():
    r = postbox.sim("postal:2")
    assert (r.machine, r.op, r.algo, r.p, r.bytes) == ("postal:2", "bcast", "binomial", 2, 8)


def test_sim_of_the_postal_model_is_the_tree():
    # On the postal machine a broadcast along the λ-tree takes the tree's completion T_λ(n).
    r = postbox.sim("postal:2", op="bcast", algo="lambda", p=8, bytes=8)
    assert r.time_us == float(postbox.T_lambda(2, 8))


def test_sim_under_noise_by_hand():
    # logp L=5 o=1 g=2: a message of one flat broadcast to p = 2 takes o + L + o = 7 us. With one
    # 3 us detour at the start of every 100 us seen by every rank (co-scheduled), the sender's o
    # runs from 3 to 4, the message arrives at 9 and is accepted by 10.
    quiet = postbox.sim("logp:5:1:2:0", op="bcast", algo="flat", p=2, bytes=1)
    noisy = postbox.sim("logp:5:1:2:0", op="bcast", algo="flat", p=2, bytes=1, noise="periodic:100:3",
                        noise_cosched=True)
    assert (quiet.time_us, quiet.noise_us) == (7.0, 0.0)
    assert (noisy.time_us, noisy.noise_us) == (10.0, 3.0)


@needs_cli
def test_sim_and_sweep_under_noise_match_cli():
    r = postbox.sim("logp:5:1:2:0", op="barrier", algo="dissemination", p=64, noise="periodic:50:5", seed=7)
    doc = json.loads(cli("sim", "--machine", "logp:5:1:2:0", "--op", "barrier", "--algo", "dissemination", "--p", "64",
                         "--noise", "periodic:50:5", "--seed", "7", "--json"))
    assert r.time_ticks == doc["time_ticks"] and r.noise_us == doc["noise"]["detour_us"]
    s = postbox.sweep("logp:5:1:2:0", {"noise_detour": (1, 3, 1)}, op="barrier", algo="fibo", p=64, noise="periodic:50:5")
    doc = json.loads(cli("sweep", "--machine", "logp:5:1:2:0", "--op", "barrier", "--algo", "fibo", "--p", "64", "--noise", "periodic:50:5",
                         "--param", "noise-detour=1:3:1", "--json"))
    assert s.time_us.tolist() == [row["time_us"] for row in doc["results"]]
    assert len(set(s.time_us.tolist())) > 1, "the detour axis changed nothing"


def test_noise_errors():
    with pytest.raises(ValueError, match="--noise-cosched needs --noise"):
        postbox.sim("logp:5:1:2:0", noise_cosched=True)
    with pytest.raises(TypeError, match="noise_cosched: expected a bool"):
        postbox.sim("logp:5:1:2:0", noise="periodic:100:3", noise_cosched="yes")


@needs_cli
def test_sweep_matches_cli():
    s = postbox.sweep("postal:1.8", {"alpha": (0.5, 0.6, 0.05)}, op="bcast", algo="lambda", p=64, bytes=512)
    doc = json.loads(cli("sweep", "--machine", "postal:1.8", "--op", "bcast", "--algo", "lambda", "--p", "64",
                         "--bytes", "512", "--param", "alpha=0.5:0.6:0.05", "--json"))
    assert s.names == ["alpha"] and s.values.shape == (3, 1)
    assert s.values[:, 0].tolist() == [row["alpha"] for row in doc["results"]]
    assert s.time_us.tolist() == [row["time_us"] for row in doc["results"]]
    assert s.events.tolist() == [row["events"] for row in doc["results"]]
    assert (s.op, s.p, s.bytes) == (doc["op"], doc["p"], doc["bytes"])


def test_sweep_grid_order():
    s = postbox.sweep("postal:2", ["p=2:4:1", "alpha=0.5:0.6:0.1"], op="bcast", algo="lambda")
    assert s.values.tolist() == [[2, 0.5], [2, 0.6], [3, 0.5], [3, 0.6], [4, 0.5], [4, 0.6]]
    assert s.values_text[1] == ["2", "0.6"]


# ---- errors: the CLI's line ----------------------------------------------------------------------

ERRORS = [
    (lambda: postbox.tree("fibo", p=0), ["tree", "--shape", "fibo", "--p", "0"]),
    (lambda: postbox.tree("fibo", p=8, lambda_=0.5), ["tree", "--shape", "fibo", "--p", "8", "--lambda", "0.5"]),
    (lambda: postbox.tree("fibo", p=8, s=1), ["tree", "--shape", "fibo", "--p", "8", "--s", "1"]),
    (lambda: postbox.tree("lambda", p=8, alpha=1), ["tree", "--shape", "lambda", "--p", "8", "--alpha", "1"]),
    (lambda: postbox.tree("tree", p=8), ["tree", "--shape", "tree", "--p", "8"]),
    (lambda: postbox.tree("fibo", p=8, root=8), ["tree", "--shape", "fibo", "--p", "8", "--root", "8"]),
    (lambda: postbox.tree("flat", p=100, s="123456789.123456789", r="0.000000001"),
     ["tree", "--shape", "flat", "--p", "100", "--s", "123456789.123456789", "--r", "0.000000001"]),
    (lambda: postbox.compare_trees(0), ["tree", "--compare", "--p", "0"]),
    (lambda: postbox.postal(0.5, 8), ["model", "postal", "--lambda", "0.5", "--n", "8"]),
    (lambda: postbox.fibo(1, 3), ["model", "fibo", "--s", "1", "--r", "3"]),
    (lambda: postbox.fibo(0, 3, t=4), ["model", "fibo", "--s", "0", "--r", "3", "--t", "4"]),
    (lambda: postbox.alpha_ranges(2, 1), ["model", "alpha-ranges", "--lambda", "2", "--n-max", "1"]),
    (lambda: postbox.breakeven(1001), ["model", "breakeven", "--max-floor", "1001"]),
    (lambda: postbox.plan_export("bcast", algo="ring", p=8), ["plan", "export", "--op", "bcast", "--algo", "ring", "--p", "8"]),
    (lambda: postbox.plan_export("bcast", algo="binomial", p=8, format="png"),
     ["plan", "export", "--op", "bcast", "--algo", "binomial", "--p", "8", "--format", "png"]),
    (lambda: postbox.plan_export("bcast", algo="binomial", p=8, format="json", machine="delta"),
     ["plan", "export", "--op", "bcast", "--algo", "binomial", "--p", "8", "--format", "json", "--machine", "delta"]),
    (lambda: postbox.tree("fibo", p=8, places="scatter"), ["tree", "--shape", "fibo", "--p", "8", "--places", "scatter"]),
    (lambda: postbox.sim("postal:0.5"), ["sim", "--machine", "postal:0.5"]),
    (lambda: postbox.sim("nosuch", p=4), ["sim", "--machine", "nosuch", "--p", "4"]),
    (lambda: postbox.sweep("postal:2", ["alpha=0.8:0.5:0.1"]), ["sweep", "--machine", "postal:2", "--param", "alpha=0.8:0.5:0.1"]),
]


@needs_cli
@pytest.mark.parametrize("call,args", ERRORS, ids=[" ".join(args) for _, args in ERRORS])
def test_value_error_is_the_cli_line(call, args):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == cli(*args, code=2)


def test_value_errors_without_cli():
    with pytest.raises(ValueError, match=r"^--p must be at least 1"):
        postbox.tree("fibo", p=0)
    with pytest.raises(ValueError, match=r"^--lambda must be >= 1, got 0.5$"):
        postbox.N_lambda(0.5, 3)
    with pytest.raises(ValueError, match=r"^--s must be > 0, got 0$"):
        postbox.fibo_f(0, 1, 3)


def test_compare_one_rank():
    c = postbox.compare_trees(1)
    assert c.best == 0 and c.ratio.tolist() == [1.0] * len(c.shapes)


def test_unknown_option_name_is_a_programming_error():
    # The library's selections stop on a name that is no option (PB_CHECK), so the package
    # refuses unknown keywords before they get there (test_type_errors).
    code = "import postbox._postbox as m; m.tree({'shape': 'fibo', 'p': '8', 'colour': 'red'})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "not a tree selection option" in done.stderr


def test_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        postbox.sim("postal:2", colour="red")
    with pytest.raises(TypeError, match="bool"):
        postbox.tree("fibo", p=True)
    with pytest.raises(TypeError):
        postbox.sweep("postal:2", "alpha=0.5:0.6:0.1")


def test_numbers_become_the_cli_text():
    # A float in exponent form is written as a decimal; a Fraction as p/q.
    assert postbox.tree("fibo", p=8, s=1e-05, r=0.00002).completion == postbox.tree("fibo", p=8, s="0.00001", r="0.00002").completion
    assert postbox.tree("lambda", p=14, lambda_=Fraction(9, 5)).time_exact == postbox.tree("lambda", p=14, lambda_="9/5").time_exact
    assert postbox.tree("lambda", p=14, lambda_=np.int64(2)).completion == postbox.tree("lambda", p=14, lambda_=2).completion


def test_reprs_name_the_figures():
    assert repr(postbox.tree("fibo", p=64, s=1, r=3)) == "Tree(shape='fibo', p=64, root=0, s=1, r=3, completion=15)"
    assert repr(postbox.postal("9/5", 64)) == "PostalReport(lambda_=9/5, n=64, T=46/5)"
    assert repr(postbox.fibo(1, 3, p=64)) == "FiboReport(s=1, r=3, t=0..15, p=64, steps=15)"
    assert repr(postbox.sim("postal:2")) == "SimResult(machine='postal:2', op='bcast', algo='binomial', p=2, bytes=8, time_us=2.0)"
