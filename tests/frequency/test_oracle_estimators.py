"""Unbiasedness and variance of every oracle's estimator, through its real-data path.

For each oracle, R = 300 independent runs (fixed keys) of n = 200 users whose items have a fixed
histogram each give a frequency estimate; their mean must lie within z sd / sqrt(R) of the
true frequencies (z for 1e-6, Bonferroni over the d items) and their sample variance within the
chi-square interval of the closed form Var[c~(v)] / n^2 (Wang et al. 2017; ``oracle_checks``
explains the interval). The closed forms are evaluated by ``ldpjax.frequency.variance`` and
checked against the paper's printed formulas in ``test_variance.py``. The mean mechanisms are
checked the same way with values spread over [-1, 1] (the discretised piecewise mechanism
against its exact variance).
"""

from __future__ import annotations

import importlib
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import frequency as fq
from ldpjax.mechanisms import duchi, hybrid, kary_randomized_response, piecewise
from tests.mechanisms.oracle_checks import mean_bound, variance_bounds

# by module: the package exports a function of the same name
lh = importlib.import_module("ldpjax.mechanisms.local_hashing")
ue = importlib.import_module("ldpjax.mechanisms.unary_encoding")
hadamard_response = importlib.import_module("ldpjax.mechanisms.hadamard_response")
subset_selection = importlib.import_module("ldpjax.mechanisms.subset_selection")

R, N, D = 300, 200, 4
HIST = np.array([100, 60, 40, 0])
ITEMS = jnp.asarray(np.repeat(np.arange(D), HIST))
FREQ = HIST / N
EPS = 1.0


def _runs(one_run):
    keys = jax.random.split(jax.random.key(2024), R)
    return np.asarray(jax.jit(jax.vmap(one_run))(keys), np.float64)


def _olh(g):
    def run(key):
        public, private = jax.random.split(key)
        seeds = lh.local_hash_seeds(public, (N,), D)
        reports = lh.local_hashing(private, ITEMS, seeds, EPS, g, D)
        return fq.olh_estimate(reports, seeds, EPS, g, D)

    return run, fq.olh_variance(EPS, g, N, FREQ)


K_SS = subset_selection.subset_size(EPS, D)
ORACLES = {
    "grr": (
        lambda k: fq.grr_estimate(kary_randomized_response(k, ITEMS, EPS, D), EPS, D),
        lambda: fq.grr_variance(EPS, D, N, FREQ),
    ),
    "oue": (
        lambda k: fq.oue_estimate(ue.optimized_unary_encoding(k, ITEMS, EPS, D), EPS),
        lambda: fq.oue_variance(EPS, N, FREQ),
    ),
    "sue": (
        lambda k: fq.sue_estimate(ue.symmetric_unary_encoding(k, ITEMS, EPS, D), EPS),
        lambda: fq.sue_variance(EPS, N, FREQ),
    ),
    "ue": (
        lambda k: fq.unary_estimate(ue.unary_encoding(k, ITEMS, 0.8, 0.3, D), 0.8, 0.3),
        lambda: fq.unary_variance(0.8, 0.3, N, FREQ),
    ),
    "blh": (_olh(2)[0], lambda: _olh(2)[1]),
    "olh": (_olh(3)[0], lambda: _olh(3)[1]),
    "hr": (
        lambda k: fq.hadamard_estimate(
            hadamard_response.hadamard_response(k, ITEMS, EPS, D), EPS, D
        ),
        lambda: fq.hadamard_variance(EPS, N, FREQ),
    ),
    "ss": (
        lambda k: fq.subset_estimate(
            subset_selection.subset_selection(k, ITEMS, EPS, D, K_SS), EPS, D, K_SS
        ),
        lambda: fq.subset_variance(EPS, D, K_SS, N, FREQ),
    ),
}


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_frequency_estimates_are_unbiased_with_the_closed_form_variance(name):
    run, variance = ORACLES[name]
    estimates = _runs(run)
    var = np.asarray(variance(), np.float64) / N**2
    assert np.all(np.abs(estimates.mean(0) - FREQ) <= mean_bound(np.sqrt(var), R, D)), (
        estimates.mean(0),
        FREQ,
    )
    low, high = variance_bounds(var, R, D)
    sample = estimates.var(0, ddof=1)
    assert np.all((sample >= low) & (sample <= high)), (sample, var)


VALUES = jnp.asarray(np.linspace(-1.0, 1.0, N))
G = 2**-6


def _mean_variance(name):
    x = np.asarray(VALUES, np.float64)
    with jax.enable_x64(True):
        if name == "duchi":
            per = fq.duchi_variance(EPS, x)
        elif name == "piecewise_continuous":
            per = fq.piecewise_variance(EPS, x)
        elif name == "hybrid_continuous":
            per = fq.hybrid_variance(2.0, x)
        elif name == "piecewise":
            per = fq.piecewise_discrete_variance(EPS, x, G)
        else:
            beta = float(hybrid.hybrid_weight(2.0))
            per = beta * fq.piecewise_discrete_variance(2.0, x, G) + (1 - beta) * fq.duchi_variance(
                2.0, x
            )
        return float(np.sum(np.asarray(per))) / N**2


MEANS = {
    "duchi": lambda k: fq.mean_estimate(duchi.duchi_mechanism(k, VALUES, EPS)),
    "piecewise": lambda k: fq.mean_estimate(piecewise.piecewise_mechanism(k, VALUES, EPS, G)),
    "hybrid": lambda k: fq.mean_estimate(hybrid.hybrid_mechanism(k, VALUES, 2.0, G)),
    # the simulation paths: the continuous mechanisms in floating point
    "piecewise_continuous": lambda k: fq.mean_estimate(
        piecewise.piecewise_mechanism(k, VALUES, EPS, None)
    ),
    "hybrid_continuous": lambda k: fq.mean_estimate(hybrid.hybrid_mechanism(k, VALUES, 2.0, None)),
}


@pytest.mark.parametrize("name", sorted(MEANS))
def test_mean_estimates_are_unbiased_with_the_closed_form_variance(name):
    estimates = _runs(MEANS[name])
    var = _mean_variance(name)
    truth = float(np.mean(np.asarray(VALUES, np.float64)))
    assert abs(estimates.mean() - truth) <= float(mean_bound(math.sqrt(var), R))
    low, high = variance_bounds(var, R)
    assert low <= estimates.var(ddof=1) <= high, (estimates.var(ddof=1), var)
