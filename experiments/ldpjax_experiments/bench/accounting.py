"""The accounting workloads: ldpjax's PLD accountant and shuffling bound against their peers.

Both are opt-in (``ldpjax bench --only accounting-pld,accounting-shuffle``) and draw no random
numbers (no RNG floor).

``accounting-pld``: epsilon at delta = 1e-6 of one record's 1000-fold mixed composition, 400
Gaussian releases (mu), 400 binary randomized responses (eps_rr) and 200 4-ary randomized
responses (xi), at ``vectors`` budget vectors (mu, eps_rr, xi) spread over [0.02, 0.05] x
[0.01, 0.03] x [0.05, 0.15] (``counts`` and the grid shrink at ``tiny``).

* **ldpjax**: :func:`ldpjax.accounting.pld_accountant.pld_event_epsilon` of the event
  ``ComposedEvent((SelfComposedEvent(GaussianEvent(mu), 400), SelfComposedEvent(
  RandomizedResponseEvent(tanh(eps_rr / 2)), 400), SelfComposedEvent(
  KaryRandomizedResponseEvent(xi, 4), 200)))``, one compiled ``jax.jit(jax.vmap(...))`` call
  over the budget vectors on one fixed grid (interval 2^-10, losses in [-2, 14): the
  composition's low losses, down to about -50, wrap onto the grid's top scaled down by the
  accountant's tilt, which keeps its bound an upper bound, and add nothing visible at these
  targets), and the accountant itself gives NaN where the grid's top cannot hold the
  composition (checked: every epsilon must be finite);
* **the peer**: dp_accounting's ``privacy_loss_distribution`` (Google's DP accounting
  library), per vector in a Python loop, as its users call it: ``from_gaussian_mechanism(1 /
  mu)``, ``from_randomized_response(2 / (e^eps_rr + 1), 2)`` and ``from_randomized_response(4 /
  (3 + e^xi), 4)`` at the same interval, each ``self_compose``-d, ``compose``-d, then
  ``get_epsilon_for_delta(1e-6)`` (its pessimistic estimate, an upper bound).

Agreement: every ldpjax epsilon lies within dp_accounting's optimistic and pessimistic
estimates (the optimistic ones computed once, untimed), each widened by 1e-6 (1 + eps); the
record's ``bound_gap`` is the largest (ldpjax - pessimistic) / pessimistic over the vectors
(negative: ldpjax's bound is the tighter), ``bound_gap_min`` the smallest.

``accounting-shuffle``: the central epsilon at delta = 1e-6 of n shuffled eps0-LDP reports
(Feldman, McMillan & Talwar, "Hiding Among the Clones", FOCS 2021, Theorem 3.2) on an
(n, eps0) grid.

* **ldpjax**: :func:`ldpjax.accounting.shuffle.shuffle_epsilon`, one call broadcasting over the
  grid;
* **the reference**: :func:`ldpjax_experiments.bench.shuffle_reference.paper_epsilon`, the
  paper's per-point procedure (exact sum over clone counts, bisection), looped over the points.

Agreement: lower * (1 - 1e-9) <= ldpjax <= upper * (1 + 5e-3) at every point (lower, upper: the
reference's bisection ends; 5e-3 is the slack ldpjax's 256 blocks of clone counts may add, as
in ``tests/accounting/test_shuffle.py``); ``bound_gap`` is the largest (ldpjax - upper) / upper.

dp_accounting is a dev / bench dependency, never a runtime one: without it ``accounting-pld``
raises :class:`DpAccountingMissing` (a ``unittest.SkipTest``: pytest skips, ``ldpjax bench``
prints the message and goes on).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
import unittest
from typing import Any

import numpy as np

from ldpjax_experiments.bench.workload import Context, Prepared, Workload

#: The target delta of both workloads.
DELTA = 1e-6
#: The number of uses of each part: Gaussian, binary RR, 4-ary RR.
PLD_COUNTS = (400, 400, 200)
#: ldpjax's shuffling bound may lie above the exact reference by its blocks' slack (relative).
SHUFFLE_SLACK = 5e-3
PEER = "dp_accounting"


class DpAccountingMissing(unittest.SkipTest):
    """dp_accounting is not installed: the PLD workload is skipped."""


def peer_pld() -> Any:
    """dp_accounting's ``privacy_loss_distribution`` module, or :class:`DpAccountingMissing`."""
    try:
        return importlib.import_module("dp_accounting.pld.privacy_loss_distribution")
    except ImportError as err:
        raise DpAccountingMissing(
            f"accounting-pld compares ldpjax with {PEER}, which is not installed here "
            f"({type(err).__name__}: {err}); install it with pip install 'ldpjax[dev]' or "
            f"pip install dp-accounting") from err


def budget_vectors(vectors: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``vectors`` budget vectors (mu, eps_rr, xi), float64, fixed: mu rising over [0.02,
    0.05], eps_rr falling over [0.03, 0.01], xi over [0.05, 0.15] by the golden-ratio sequence.

    Example:
      >>> mu, eps_rr, xi = budget_vectors(4)
      >>> mu.shape, float(mu.max()), float(eps_rr.max())
      ((4,), 0.05, 0.03)
    """
    t = np.linspace(0.0, 1.0, vectors) if vectors > 1 else np.zeros(1)
    golden = (np.arange(vectors) * 0.6180339887498949) % 1.0
    return 0.02 + 0.03 * t, 0.03 - 0.02 * t, 0.05 + 0.10 * golden


def _event(mu, r, xi, counts):
    from ldpjax.accounting.composition import ComposedEvent, SelfComposedEvent
    from ldpjax.accounting.events import (
        GaussianEvent,
        KaryRandomizedResponseEvent,
        RandomizedResponseEvent,
    )

    return ComposedEvent((SelfComposedEvent(GaussianEvent(mu), counts[0]),
                          SelfComposedEvent(RandomizedResponseEvent(r), counts[1]),
                          SelfComposedEvent(KaryRandomizedResponseEvent(xi, 4), counts[2])))


def _peer_epsilon(pld_mod, mu, eps_rr, xi, counts, interval, pessimistic=True) -> float:
    """dp_accounting's epsilon of one budget vector, as its users compose it."""
    extra = {} if pessimistic else {"pessimistic_estimate": False}
    gauss = {} if pessimistic else {"use_connect_dots": False}  # it has no optimistic dots
    out = pld_mod.from_gaussian_mechanism(
        1.0 / mu, sensitivity=1, value_discretization_interval=interval, **extra, **gauss
    ).self_compose(counts[0])
    out = out.compose(pld_mod.from_randomized_response(
        2.0 / (math.exp(eps_rr) + 1.0), 2, value_discretization_interval=interval, **extra
    ).self_compose(counts[1]))
    out = out.compose(pld_mod.from_randomized_response(
        4.0 / (3.0 + math.exp(xi)), 4, value_discretization_interval=interval, **extra
    ).self_compose(counts[2]))
    return float(out.get_epsilon_for_delta(DELTA))


def _prepare_pld(size: dict, ctx: Context) -> Prepared:
    import jax
    import jax.numpy as jnp

    from ldpjax.accounting.pld import PldGrid
    from ldpjax.accounting.pld_accountant import pld_event_epsilon

    pld_mod = peer_pld()
    counts, h = tuple(size["counts"]), float(size["interval"])
    mu, eps_rr, xi = budget_vectors(size["vectors"])
    grid = PldGrid(h, size["lower"], size["upper"] - h)
    dtype = jnp.result_type(float)
    args = tuple(jnp.asarray(a, dtype) for a in (mu, np.tanh(eps_rr / 2.0), xi))
    compiled = jax.jit(jax.vmap(
        lambda m, r, x: pld_event_epsilon(_event(m, r, x, counts), DELTA, grid)))
    # the peer's optimistic estimates bound the exact epsilon from below (untimed, once)
    optimistic = np.array([_peer_epsilon(pld_mod, *b, counts, h, pessimistic=False)
                           for b in zip(mu, eps_rr, xi, strict=True)])

    def run_ldpjax():
        return np.asarray(jax.block_until_ready(compiled(*args)), np.float64)

    def run_numpy(seed):
        out = np.array([_peer_epsilon(pld_mod, *b, counts, h)
                        for b in zip(mu, eps_rr, xi, strict=True)])
        return out, {"peer": PEER, "peer_version": importlib.metadata.version("dp-accounting"),
                     "vectors": int(mu.size)}

    def compare(ours, pessimistic, info):
        ours = np.asarray(ours, np.float64)
        tol = 1e-6 * (1.0 + pessimistic)
        finite = bool(np.all(np.isfinite(ours)))
        ok = (optimistic - tol <= ours) & (ours <= pessimistic + tol)
        gap = (ours - pessimistic) / pessimistic
        return {
            "agree": bool(finite and np.all(ok)),
            "bound_gap": float(np.max(gap)),
            "bound_gap_min": float(np.min(gap)),
            "agreement": (
                f"ldpjax's eps within {PEER}'s [optimistic, pessimistic] "
                f"(+- 1e-6 (1 + eps)) at {int(np.sum(ok))} "
                f"of {ours.size} vectors; (ldpjax - pessimistic) / pessimistic from "
                f"{np.min(gap):+.2%} to {np.max(gap):+.2%}; eps from {np.min(ours):.3g} to "
                f"{np.max(ours):.3g}"),
        }

    return Prepared(
        shape=(f"eps at delta = {DELTA:g} of {counts[0]} Gaussian + {counts[1]} RR + "
               f"{counts[2]} 4-RR, {mu.size} budget vectors, interval 2^{math.log2(h):g}, "
               f"grid [{grid.lower:g}, {grid.upper + h:g})"),
        statistic="epsilon per budget vector (ldpjax vs the peer's pessimistic)",
        run_ldpjax=run_ldpjax,
        run_numpy=run_numpy,
        random_words=lambda info: 0,
        baseline=PEER,
        compare=compare,
    )


def _prepare_shuffle(size: dict, ctx: Context) -> Prepared:
    import jax
    import jax.numpy as jnp

    from ldpjax.accounting.shuffle import shuffle_epsilon
    from ldpjax_experiments.bench.shuffle_reference import paper_epsilon

    ns, eps0 = np.asarray(size["n"]), np.asarray(size["eps0"], np.float64)
    e0 = jnp.asarray(eps0[None, :], jnp.result_type(float))
    points = [(int(n), float(e)) for n in ns for e in eps0]

    def run_ldpjax():
        out = jax.block_until_ready(shuffle_epsilon(e0, ns[:, None], DELTA))
        return np.asarray(out, np.float64).reshape(-1)

    def run_numpy(seed):
        bounds = np.array([paper_epsilon(n, e, DELTA) for n, e in points])
        return bounds[:, 1], {"reference": "Feldman, McMillan & Talwar (FOCS 2021), per point",
                              "lower": bounds[:, 0].tolist(), "points": len(points)}

    def compare(ours, upper, info):
        lower = np.asarray(info["lower"])
        ok = (lower * (1.0 - 1e-9) <= ours) & (ours <= upper * (1.0 + SHUFFLE_SLACK))
        gap = (ours - upper) / upper
        return {
            "agree": bool(np.all(ok)),
            "bound_gap": float(np.max(gap)),
            "bound_gap_min": float(np.min(gap)),
            "agreement": (
                f"ldpjax's eps within the reference's [lower, upper (1 + {SHUFFLE_SLACK:g})] at "
                f"{int(np.sum(ok))} of {ok.size} points; (ldpjax - upper) / upper from "
                f"{np.min(gap):+.2e} to {np.max(gap):+.2e}"),
        }

    return Prepared(
        shape=f"eps at delta = {DELTA:g}, n in {ns.tolist()} x eps0 in {eps0.tolist()}",
        statistic="epsilon per (n, eps0) point (ldpjax vs the reference's upper end)",
        run_ldpjax=run_ldpjax,
        run_numpy=run_numpy,
        random_words=lambda info: 0,
        baseline="paper-reference",
        compare=compare,
    )


WORKLOADS = (
    Workload(
        "accounting-pld", "accounting",
        f"PLD epsilon of a 1000-fold mixed composition against {PEER}",
        {
            "tiny": {"vectors": 4, "counts": (40, 40, 20), "interval": 2.0**-10,
                     "lower": -16.0, "upper": 16.0},
            "small": {"vectors": 16, "counts": PLD_COUNTS, "interval": 2.0**-10,
                      "lower": -2.0, "upper": 14.0},
            "paper": {"vectors": 64, "counts": PLD_COUNTS, "interval": 2.0**-10,
                      "lower": -2.0, "upper": 14.0},
        },
        _prepare_pld, default=False,
    ),
    Workload(
        "accounting-shuffle", "accounting",
        "shuffling amplification bound against the paper's per-point algorithm "
        "(Feldman, McMillan & Talwar 2021)",
        {
            "tiny": {"n": (1_000, 10_000), "eps0": (1.0, 4.0)},
            "small": {"n": (1_000, 10_000, 100_000), "eps0": (4.0,)},
            "paper": {"n": (1_000, 10_000, 100_000), "eps0": (0.5, 1.0, 2.0, 4.0)},
        },
        _prepare_shuffle, default=False,
    ),
)

__all__ = ["DELTA", "PEER", "PLD_COUNTS", "SHUFFLE_SLACK", "WORKLOADS", "DpAccountingMissing",
           "budget_vectors", "peer_pld"]
