"""The Laplace mechanism: law, grid, claim and fail-closed behaviour (independent references)."""

from __future__ import annotations

import importlib
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import ldpjax.accounting as acc
from ldpjax import mechanisms as M

L = importlib.import_module("ldpjax.mechanisms.laplace")
KEY = jax.random.key(11)
N = 200_000


@pytest.mark.parametrize("scale", [0.4, 2.5, 17.0])
def test_discrete_laplace_law(scale):
    # P[Y = y] proportional to exp(-|y| / t), t = ceil(64 scale) / 64 (the scale rounded up)
    t = math.ceil(64 * scale) / 64
    y = np.asarray(jax.jit(lambda k: L.discrete_laplace(k, scale, (N,)))(KEY))
    assert not np.any(y == L.DL_INVALID)
    width = int(8 * t) + 2
    support = np.arange(-width, width + 1)
    pmf = np.exp(-np.abs(support) / t)
    pmf /= pmf.sum() + 2 * np.exp(-(width + 1) / t) / (1 - np.exp(-1 / t))  # tails beyond
    observed = np.array([np.sum(y == v) for v in support] + [np.sum(np.abs(y) > width)])
    expected = np.append(pmf, 1 - pmf.sum()) * N
    keep = expected > 5
    chi2 = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
    assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-6


def test_float_path_has_the_laplace_sd():
    # sd of b L is sqrt(2) b; sample sd of N draws has relative sd ~ sqrt(5 / (4 N)) (kurtosis 6)
    out = np.asarray(M.laplace_mechanism(KEY, jnp.zeros(N), 1.0, 2.0))
    rel = math.sqrt(5 / (4 * N))
    assert out.std() == pytest.approx(math.sqrt(2) / 2.0, rel=6 * rel)


def test_granular_outputs_are_on_the_grid_and_the_claim_holds():
    g = 2.0**-6
    out = np.asarray(
        M.laplace_mechanism(KEY, jnp.full(1000, 0.3), 1.0, 0.8, granularity=g, domain=(0.0, 1.0))
    )
    np.testing.assert_array_equal(out / g, np.round(out / g))
    shift, scale = L.granular_laplace_scale(1.0, 0.8, g, 1, (0.0, 1.0))
    # grid-aligned domain: rounded sensitivity stays 1 = 64 grid steps; t = ceil(64 * 64/0.8)/64
    assert float(shift) == 64.0
    assert float(scale) == math.ceil(64 * 64 / 0.8) / 64
    claim = float(M.laplace_claim(1.0, 0.8, g, 1, (0.0, 1.0)).eps)
    assert claim <= float(np.float32(0.8)) and claim == pytest.approx(64 / float(scale), rel=1e-6)


BAD = {
    "eps 0": lambda e: M.laplace_mechanism(KEY, jnp.zeros(2), 1.0, e),
    "granular eps 0": lambda e: M.laplace_mechanism(KEY, jnp.zeros(2), 1.0, e, granularity=2**-4),
}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan")])
def test_bad_budget_raises_or_gives_nan(name, eps):
    with pytest.raises(ValueError, match="eps"):
        BAD[name](eps)
    assert np.all(np.isnan(np.asarray(jax.jit(BAD[name])(eps))))


def test_traced_inf_and_zero_sensitivity_fail_closed():
    release = jax.jit(lambda e, s: M.laplace_mechanism(KEY, jnp.zeros(2), s, e, granularity=2**-4))
    assert np.all(np.isnan(np.asarray(release(jnp.inf, 1.0))))
    assert np.all(np.isnan(np.asarray(release(1.0, 0.0))))
    with M.no_privacy_permitted():
        np.testing.assert_array_equal(np.asarray(release(jnp.inf, 1.0)), 0.0)
    with pytest.raises(ValueError, match="sensitivity"):
        M.laplace_mechanism(KEY, jnp.zeros(2), 0.0, 1.0)


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16], ids=["float16", "bfloat16"])
def test_low_precision_refused(dtype):
    with pytest.raises(ValueError, match="float16|bfloat16"):
        M.laplace_mechanism(KEY, jnp.zeros(2, dtype), 1.0, 1.0, granularity=2**-4)
    with pytest.raises(ValueError, match="float16|bfloat16"):
        M.laplace_mechanism(KEY, jnp.zeros(2), 1.0, jnp.asarray(1.0, dtype))


def test_sampler_out_of_rounds_fails_closed(monkeypatch):
    monkeypatch.setattr(L, "MAX_ROUNDS", 0)
    assert np.all(np.asarray(L.discrete_laplace(KEY, 2.0, (3,))) == L.DL_INVALID)
    out = M.laplace_mechanism(KEY, jnp.zeros(3), 1.0, 1.0, granularity=2**-4)
    assert np.all(np.isnan(np.asarray(out)))


def test_geometric_tail_is_flagged_not_clipped():
    # words giving u = 2^-64-ish: V >= 44 is the cut tail, flagged invalid
    words = jnp.array([[0, 0], [1, 0], [2**31, 0]], jnp.uint32)
    geo, ok = L._geometric_from_bits(words, jnp.float32)
    assert ok.tolist() == [False, True, True]
    # u = 2^-32 (high = 1): floor(32 log 2) = 22; u = 1/2: floor(log 2) = 0
    assert geo.tolist()[1:] == [22, 0]


@pytest.mark.slow
def test_audit_granular_laplace():
    # Clopper-Pearson audit at joint confidence 1 - 1e-6 (see test_audit): neighbouring values
    # 0 and 1 (sensitivity 1, the domain's diameter), eps = 1 on the grid 2^-4.
    from tests.mechanisms.test_audit import audit_epsilon

    n = 400_000
    keys = jax.random.split(KEY, 2)

    def releases(key, x):  # n independent scalar releases (one record each)
        one = lambda k: M.laplace_mechanism(k, x, 1.0, 1.0, granularity=2**-4, domain=(0.0, 1.0))
        return np.asarray(jax.jit(jax.vmap(one))(jax.random.split(key, n)))

    outs = [releases(k, x) for k, x in zip(keys, (0.0, 1.0), strict=True)]
    cuts = [-1.0, 0.0, 0.5, 1.0, 2.0]
    hits = [[int(np.sum(o > c)) for c in cuts] for o in outs]
    eps_low = audit_epsilon(hits[0], hits[1], n, 0.0)
    claim = float(acc.epsilon(M.laplace_claim(1.0, 1.0, 2**-4, 1, (0.0, 1.0)), 0.0))
    assert eps_low <= claim
    assert eps_low >= 0.7 * claim  # the audit has power
