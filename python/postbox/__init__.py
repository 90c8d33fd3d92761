"""postbox: trees, postal-model arithmetic, plans and the emulator of the postbox library.

Every function here calls the library as the command-line tool does, with the same options:
a keyword argument is the CLI option of that name (``lambda_`` for ``--lambda``, ``elem_bytes``
for ``--elem-bytes``), and its value is passed as the text the CLI would read: an int as
decimal, a ``fractions.Fraction`` as ``p/q``, a float as its shortest decimal, a str as it is.
Numbers are exact where the library is exact: times, λ, s and r come back as ``Fraction``.

Bad input raises ``ValueError`` whose message is the line the CLI prints after
``postbox: error:`` for the same options (so it names them as ``--p``, ``--lambda``); a
keyword that is no option of the function raises ``TypeError``.

Tables come back as NumPy arrays: one entry per rank (``Tree.parent``, ``Tree.time``,
``SimResult.per_rank_us``), per configuration (``SweepResult.time_us``) or per row.
See docs/python.md.
"""

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import _postbox
from ._postbox import AlphaRanges, FiboReport, PostalReport, SimResult, SweepResult, Tree, TreeComparison

__all__ = [
    "tree", "compare_trees", "postal", "fibo", "alpha_ranges", "breakeven", "Breakeven",
    "N_lambda", "T_lambda", "gamma", "fibo_f", "plan_export", "sim", "sweep",
    "Tree", "TreeComparison", "PostalReport", "FiboReport", "AlphaRanges", "SimResult", "SweepResult",
]


def _text(value, name):
    """The option text the CLI would read for `value`."""
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a number or a string, got a bool")
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, numbers.Real):
        x = float(value)
        text = repr(x)
        # The library reads decimals, not exponents: 1e-05 is written 0.00001.
        if math.isfinite(x) and ("e" in text or "E" in text):
            text = f"{x:.12f}".rstrip("0").rstrip(".")
        return text
    raise TypeError(f"{name}: expected a number or a string, got {type(value).__name__}")


def _option_name(keyword):
    return keyword.rstrip("_").replace("_", "-")


def _options(kwargs, allowed, function):
    """Keyword arguments (None: not given) as the library's option map: name -> text."""
    given = {}
    for keyword, value in kwargs.items():
        name = _option_name(keyword)
        if name not in allowed:
            raise TypeError(f"{function}() got an unexpected keyword argument '{keyword}'")
        if value is not None:
            given[name] = _text(value, keyword)
    return given


def tree(shape, p, *, root=None, lambda_=None, s=None, r=None, alpha=None, synthetic=None, places=None):
    """The tree `postbox tree --shape SHAPE --p P ...` builds.

    shape: flat, binary, kary:K, binomial, lambda[:A], greedy, fibo, hier[:S1,S2,...];
    the model is lambda_, or s and r (default s = 1, r = 1); alpha ('auto' or in (0, 1)) for
    shape lambda; synthetic (an hwloc synthetic topology) and places for hier.
    Returns a Tree: parent and time as NumPy arrays per rank (time: when each rank is active,
    i.e. receives), children per rank in send order, completion exact.
    """
    given = _options(dict(shape=shape, p=p, root=root, lambda_=lambda_, s=s, r=r, alpha=alpha,
                          synthetic=synthetic, places=places), _postbox.tree_options(), "tree")
    return _postbox.tree(given)


def compare_trees(p, *, lambda_=None, s=None, r=None):
    """`postbox tree --compare`: the completion time of every shape for p and the model."""
    given = _options(dict(p=p, lambda_=lambda_, s=s, r=r), _postbox.tree_options(), "compare_trees")
    return _postbox.compare_trees(given)


def postal(lambda_, n):
    """`postbox model postal`: T_λ(n), γ(λ), the legal α range for n and N_λ at each change."""
    return _postbox.postal(_text(lambda_, "lambda_"), _text(n, "n"))


def fibo(s, r, *, p=None, t=None):
    """`postbox model fibo`: Cordsen's f(0..t), or up to the first step that reaches p."""
    return _postbox.fibo(_text(s, "s"), _text(r, "r"), None if p is None else _text(p, "p"),
                         None if t is None else _text(t, "t"))


def alpha_ranges(lambda_, n_max):
    """`postbox model alpha-ranges`: the legal α per n = 2..n_max and the α look-up table."""
    return _postbox.alpha_ranges(_text(lambda_, "lambda_"), _text(n_max, "n_max"))


@dataclass(frozen=True)
class Breakeven:
    """Bruck et al.'s Table 2, one entry per ⌊λ⌋ (NumPy arrays of equal length)."""
    floor: np.ndarray       # ⌊λ⌋ = 1, 2, ...
    gamma: np.ndarray       # γ(⌊λ⌋)
    break_even: np.ndarray  # the λ where delay-send and delay-receive global combine tie


def breakeven(max_floor=9):
    """`postbox model breakeven`: Table 2 for ⌊λ⌋ = 1..max_floor."""
    return Breakeven(**_postbox.breakeven(_text(max_floor, "max_floor")))


def N_lambda(lambda_, t):
    """N_λ(t): the most nodes a broadcast reaches by time t (Bruck eq. 1), exact."""
    return _postbox.N_lambda(_text(lambda_, "lambda_"), _text(t, "t"))


def T_lambda(lambda_, n):
    """T_λ(n) = min{t : N_λ(t) >= n}, as a Fraction."""
    return _postbox.T_lambda(_text(lambda_, "lambda_"), _text(n, "n"))


def gamma(lambda_):
    """γ(λ): the growth rate of N_λ (Bruck Table 1)."""
    return _postbox.gamma(_text(lambda_, "lambda_"))


def fibo_f(s, r, t):
    """Cordsen's f(t) = f(t − s) + f(t − s − r): processes notified by time t."""
    return _postbox.fibo_f(_text(s, "s"), _text(r, "r"), _text(t, "t"))


def plan_export(op, *, format="goal", machine=None, **selection):
    """`postbox plan export`: the plan of op as GOAL, JSON or DOT text (exactly the CLI's stdout).

    selection: algo, p, bytes (default 0), root, lambda_, s, r, alpha, mesh, sources, dist,
    seed, source_list, elem_bytes. machine (goal only): calc times on that machine.
    """
    given = _options(dict(selection, op=op), _postbox.plan_options(), "plan_export")
    return _postbox.plan_export(given, _text(format, "format"), None if machine is None else _text(machine, "machine"))


def _noise(noise, noise_cosched):
    """`--noise SPEC` and `--noise-cosched` as option map entries."""
    if not isinstance(noise_cosched, bool):
        raise TypeError(f"noise_cosched: expected a bool, got {type(noise_cosched).__name__}")
    given = {}
    if noise is not None:
        given["noise"] = _text(noise, "noise")
    if noise_cosched:
        given["noise-cosched"] = "1"
    return given


def sim(machine, *, noise=None, noise_cosched=False, **selection):
    """`postbox sim`: one plan on an emulated machine (postal:L, sr:S:R, logp:..., a profile).

    selection: op (default bcast), algo (binomial), p (2), bytes (8), root, lambda_, s, r,
    alpha, mesh, sources, dist, seed, source_list, elem_bytes, placement.
    noise: OS noise as `--noise` takes it (periodic:PERIOD:DETOUR, exp:MEAN_GAP:MEAN_DETOUR,
    pareto:MEAN_GAP:MIN_DETOUR:ALPHA; docs/emulator.md, "Noise"), seen from a random offset per
    rank drawn from seed, or from offset 0 with noise_cosched=True.
    """
    given = _options(dict(selection, machine=machine), _postbox.emulated_run_options(), "sim")
    given.update(_noise(noise, noise_cosched))
    return _postbox.sim(given)


def sweep(machine, params, *, noise=None, noise_cosched=False, **selection):
    """`postbox sweep`: sim over a grid, in parallel. params: "NAME=FROM:TO:STEP" strings or a
    dict NAME -> (FROM, TO, STEP), NAME one of alpha, bytes, p, lambda, seed, noise-gap,
    noise-detour (these two replace the noise spec's first and second number); the last varies
    fastest. selection, noise and noise_cosched as for sim().
    """
    if isinstance(params, (str, bytes)):
        raise TypeError("sweep(): params must be a list of 'NAME=FROM:TO:STEP' strings or a dict")
    if isinstance(params, dict):
        params = [f"{_option_name(name)}=" + ":".join(_text(v, name) for v in values) for name, values in params.items()]
    given = _options(dict(selection, machine=machine), _postbox.emulated_run_options(), "sweep")
    given.update(_noise(noise, noise_cosched))
    return _postbox.sweep(given, [_text(param, "params") for param in params])
