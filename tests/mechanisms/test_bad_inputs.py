"""Bad inputs at the public boundary of the mechanisms and accountants: a ``ValueError`` or
``TypeError`` that names the argument, never a JAX broadcasting/reduction error or a silent NaN."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import accounting as acc
from ldpjax import mechanisms as M

KEY = jax.random.key(0)
Z3 = jnp.zeros(3)

CASES = [
    # mechanisms
    ("gauss mu nan", lambda: M.gaussian_mechanism(KEY, Z3, 1.0, np.nan), ValueError, "mu"),
    ("gauss mu string", lambda: M.gaussian_mechanism(KEY, Z3, 1.0, "1"), ValueError, "mu"),
    ("gauss sens neg", lambda: M.gaussian_mechanism(KEY, Z3, -2.0, 1.0), ValueError, "sensitivity"),
    ("gauss value string", lambda: M.gaussian_mechanism(KEY, "abc", 1.0, 1.0), TypeError, "value"),
    (
        "gauss value empty",
        lambda: M.gaussian_mechanism(KEY, jnp.zeros(0), 1.0, 1.0),
        ValueError,
        "value",
    ),
    (
        "gauss value nan",
        lambda: M.gaussian_mechanism(KEY, jnp.array([0.0, np.nan]), 1.0, 1.0),
        ValueError,
        "value",
    ),
    (
        "gauss value inf",
        lambda: M.gaussian_mechanism(KEY, jnp.array([np.inf]), 1.0, 1.0),
        ValueError,
        "value",
    ),
    (
        "gauss value object",
        lambda: M.gaussian_mechanism(KEY, np.array([object()]), 1.0, 1.0),
        TypeError,
        "value",
    ),
    ("gauss value None", lambda: M.gaussian_mechanism(KEY, None, 1.0, 1.0), TypeError, "value"),
    (
        "gauss out of domain",
        lambda: M.gaussian_mechanism(KEY, jnp.array([1.5]), 1.0, 1.0, domain=(0, 1)),
        ValueError,
        "value",
    ),
    (
        "gauss domain reversed",
        lambda: M.gaussian_mechanism(KEY, Z3, 1.0, 1.0, domain=(1, 0)),
        ValueError,
        "domain",
    ),
    (
        "gauss domain junk",
        lambda: M.gaussian_mechanism(KEY, Z3, 1.0, 1.0, domain="x"),
        TypeError,
        "domain",
    ),
    (
        "gauss granularity 0.1",
        lambda: M.gaussian_mechanism(KEY, Z3, 1.0, 1.0, granularity=0.1),
        ValueError,
        "granularity",
    ),
    (
        "gauss granularity str",
        lambda: M.gaussian_mechanism(KEY, Z3, 1.0, 1.0, granularity="2"),
        TypeError,
        "granularity",
    ),
    ("scale mu zero", lambda: M.gaussian_noise_scale(1.0, 0.0), ValueError, "mu"),
    ("scale sens inf", lambda: M.gaussian_noise_scale(np.inf, 1.0), ValueError, "sensitivity"),
    ("rr r zero", lambda: M.randomized_response(KEY, jnp.ones(2, int), 0.0), ValueError, "r"),
    ("rr r > 1", lambda: M.randomized_response(KEY, jnp.ones(2, int), 1.01), ValueError, "r"),
    ("rr bits 2", lambda: M.randomized_response(KEY, jnp.array([2]), 0.5), ValueError, "bit"),
    (
        "rr bits negative",
        lambda: M.randomized_response(KEY, jnp.array([-1]), 0.5),
        ValueError,
        "bit",
    ),
    ("rr bits string", lambda: M.randomized_response(KEY, "0", 0.5), TypeError, "bit"),
    (
        "rr bernoulli p",
        lambda: M.randomized_response_bernoulli(KEY, 1.2, 0.5),
        ValueError,
        "prob_one",
    ),
    ("debias r nan", lambda: M.debias_randomized_response(1.0, np.nan), ValueError, "r"),
    (
        "krr xi neg",
        lambda: M.kary_randomized_response(KEY, jnp.zeros(2, int), -0.1, 3),
        ValueError,
        "xi",
    ),
    (
        "krr k one",
        lambda: M.kary_randomized_response(KEY, jnp.zeros(2, int), 1.0, 1),
        ValueError,
        "k",
    ),
    (
        "krr k float",
        lambda: M.kary_randomized_response(KEY, jnp.zeros(2, int), 1.0, 2.5),
        ValueError,
        "k",
    ),
    (
        "krr category >= k",
        lambda: M.kary_randomized_response(KEY, jnp.array([3]), 1.0, 3),
        ValueError,
        "category",
    ),
    (
        "krr category frac",
        lambda: M.kary_randomized_response(KEY, jnp.array([0.5]), 1.0, 3),
        ValueError,
        "category",
    ),
    (
        "krr category str",
        lambda: M.kary_randomized_response(KEY, "a", 1.0, 3),
        TypeError,
        "category",
    ),
    (
        "krr explore p",
        lambda: M.kary_randomized_response_explore(KEY, jnp.zeros(2, int), 1.5, 3),
        ValueError,
        "explore_prob",
    ),
    ("dg sigma neg", lambda: M.discrete_gaussian(KEY, -1.0, (2,)), ValueError, "sigma"),
    ("dg sigma huge", lambda: M.discrete_gaussian(KEY, 1e9, (2,)), ValueError, "sigma"),
    # events / accountants
    ("delta eps neg", lambda: acc.delta(acc.GaussianEvent(1.0), -1.0), ValueError, "eps"),
    ("epsilon delta 1", lambda: acc.epsilon(acc.GaussianEvent(1.0), 1.0), ValueError, "delta"),
    ("tradeoff alpha", lambda: acc.tradeoff(acc.GaussianEvent(1.0), 2.0), ValueError, "alpha"),
    ("event mu neg", lambda: acc.delta(acc.GaussianEvent(-1.0), 1.0), ValueError, "mu"),
    ("event r", lambda: acc.delta(acc.RandomizedResponseEvent(2.0), 1.0), ValueError, "r"),
    ("event xi", lambda: acc.epsilon(acc.KaryRandomizedResponseEvent(-1.0, 3), 0.0), ValueError, "xi"),
    (
        "event mixture weights",
        lambda: acc.delta(acc.GaussianMixtureEvent(jnp.array([1.0]), jnp.array([0.5])), 1.0),
        ValueError,
        "weights",
    ),
    ("event unknown", lambda: acc.delta(object(), 1.0), NotImplementedError, "object"),
    ("gdp_delta mu str", lambda: acc.gdp_delta("a", 1.0), ValueError, "mu"),
    ("gdp_epsilon delta 0", lambda: acc.gdp_epsilon(1.0, 0.0), ValueError, "delta"),
    ("gdp_mu eps neg", lambda: acc.gdp_mu(-1.0, 1e-5), ValueError, "eps"),
    ("rr_epsilon r", lambda: acc.rr_epsilon(1.5), ValueError, "r"),
    ("krr_budget p", lambda: acc.krr_budget(-0.1, 3), ValueError, "explore_prob"),
    (
        "mixture shapes",
        lambda: acc.gdp_mixture_delta(jnp.ones(3), jnp.ones(2) / 2, 1.0),
        ValueError,
        "mus",
    ),
]


@pytest.mark.parametrize("name,call,error,word", CASES, ids=[c[0] for c in CASES])
def test_bad_input_names_the_argument(name, call, error, word):
    with pytest.raises(error, match=word):
        call()
