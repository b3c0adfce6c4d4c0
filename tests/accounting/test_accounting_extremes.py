"""Accountants at the edges: float32 at extreme arguments, NaN under ``jit`` for every one, and
a NaN gradient at every invalid budget.

Closes gaps found by mutation testing: a float32-only overflow in ``gdp_delta`` at large mu (no
float32 test at extreme arguments), NaN-under-``jit`` removed from the pure-DP accountants (only
the GDP ones were tested for it), zero gradients at invalid budgets (``jnp.where`` masks the
cotangent), and holes in ``jax.scipy.special.erfcx`` (0 in float32 for x in [9.19, 9.42]) that
made ``gdp_log_delta`` -inf, so eps(delta) stalled for deltas near 1e-39.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import accounting as acc
from ldpjax.accounting.gdp import erfcx

# Cost (fast suite): every accountant call below is batched so that each kernel compiles once
# per dtype: the float32-vs-float64 comparisons share one gdp_log_delta / gdp_delta call per dtype
# (``_profile``) and one gdp_epsilon call per dtype (``_inversions``), and each NaN-under-jit case
# compiles one jitted value_and_grad for both its value and its gradient test (``_nan_outputs``).
_EXT_MUS = np.array([0.05, 1.0, 5.0, 20.0, 50.0, 200.0])
_EXT_EPS = np.array([0.0, 1.0, 10.0, 50.0, 100.0, 200.0, 500.0])
_GRID_MU, _GRID_EPS = (g.ravel() for g in np.meshgrid(_EXT_MUS, _EXT_EPS))
_UNDERFLOW_EPS = np.linspace(70.0, 90.0, 41)  # log delta of 5-GDP spans -72 .. -115 here
_PROFILE_MU = np.concatenate([_GRID_MU, np.full(_UNDERFLOW_EPS.size, 5.0)])
_PROFILE_EPS = np.concatenate([_GRID_EPS, _UNDERFLOW_EPS])
_N_GRID = _GRID_MU.size


@pytest.fixture(scope="module")
def _profile():
    """(delta, log delta) in float32 and float64 at the extreme grid, then the underflow range."""
    mu32, eps32 = jnp.asarray(_PROFILE_MU, jnp.float32), jnp.asarray(_PROFILE_EPS, jnp.float32)
    out = {"d32": np.asarray(acc.gdp_delta(mu32, eps32)),
           "l32": np.asarray(acc.gdp_log_delta(mu32, eps32))}
    with jax.enable_x64(True):
        out["d64"] = np.asarray(acc.gdp_delta(_PROFILE_MU, _PROFILE_EPS))
        out["l64"] = np.asarray(acc.gdp_log_delta(_PROFILE_MU, _PROFILE_EPS))
    return out


def test_gdp_delta_float32_matches_float64_at_extremes(_profile):
    f32, f64 = _profile["d32"][:_N_GRID], _profile["d64"][:_N_GRID]
    assert f32.dtype == np.float32 and f64.dtype == np.float64
    assert np.all(np.isfinite(f32)) and np.all((f32 >= 0) & (f32 <= 1))
    representable = f64 > 1e-30  # float32's normal range ends near 1e-38
    rel = (f32.astype(np.float64) - f64)[representable] / f64[representable]
    # float32 is raised by a bound on its own rounding (ldpjax.accounting.gdp._rounding), so it
    # lies above float64 (up to float64's own, far smaller, widening) and within 1e-3 of it:
    # the bound is about a hundred float32 eps times the subtraction's amplification (1 /
    # delta near eps = 0 at small mu)
    assert np.min(rel) > -1e-9 and np.max(rel) < 1e-3
    assert np.all(f32[~representable] < 1e-29)


_EPS_MUS = np.array([0.05, 1.0, 20.0, 80.0])
_EPS_DELTAS = np.array([1e-12, 1e-6, 0.3])
_UNDERFLOW_DELTAS = np.array([1e-38, 1e-39, 5e-40, 1e-45])
# one gdp_epsilon call per dtype: the 4 x 3 extreme grid, then mu = 5 at the underflow deltas
_INV_MU = np.concatenate([np.tile(_EPS_MUS, _EPS_DELTAS.size), np.full(4, 5.0)])
_INV_DELTA = np.concatenate([np.repeat(_EPS_DELTAS, _EPS_MUS.size), _UNDERFLOW_DELTAS])
_N_EPS = _EPS_MUS.size * _EPS_DELTAS.size


@pytest.fixture(scope="module")
def _inversions():
    """gdp_epsilon in float32 (float32 mu, concrete float64 delta) and float64."""
    e32 = np.asarray(acc.gdp_epsilon(jnp.asarray(_INV_MU, jnp.float32), _INV_DELTA))
    with jax.enable_x64(True):
        e64 = np.asarray(acc.gdp_epsilon(_INV_MU, _INV_DELTA))
    return e32, e64


def test_gdp_epsilon_and_tradeoff_float32_at_extremes(_inversions):
    e32, e64 = _inversions
    eps, ref = e32[:_N_EPS], e64[:_N_EPS]
    # float32 mu with concrete float64 deltas: float32 by default, float64 when the whole
    # session runs with JAX_ENABLE_X64 (JAX's promotion of a NumPy float64 array)
    assert eps.dtype == jnp.result_type(jnp.float32, _INV_DELTA)
    assert np.all(np.isfinite(eps)) and np.all(eps >= 0)
    np.testing.assert_allclose(eps, ref, rtol=1e-4, atol=1e-5)
    # jitted: one kernel instead of ~50 eager ones (the eager path is tested in test_accounting_gdp)
    mus = jnp.asarray(_EPS_MUS, jnp.float32)
    tr = np.asarray(jax.jit(acc.gdp_tradeoff)(mus, jnp.float32(1e-30)))
    assert tr.dtype == np.float32
    assert np.all(np.isfinite(tr)) and np.all((tr >= 0) & (tr <= 1))


NAN_UNDER_JIT = [
    ("rr_epsilon", lambda x: acc.rr_epsilon(x), [jnp.nan, -0.1, 0.0, 1.5]),
    ("rr_rate", lambda x: acc.rr_rate(x), [jnp.nan, -1.0]),
    ("krr_explore_prob", lambda x: acc.krr_explore_prob(x, 3), [jnp.nan, -1.0]),
    ("krr_explore_prob(k)", lambda x: acc.krr_explore_prob(1.0, x), [jnp.nan, 1.0, -2.0]),
    ("krr_budget", lambda x: acc.krr_budget(x, 3), [jnp.nan, -0.1, 1.5]),
    ("pure_dp_tradeoff", lambda x: acc.pure_dp_tradeoff(x, 0.3), [jnp.nan, -1.0]),
    ("pure_dp_tradeoff(alpha)", lambda x: acc.pure_dp_tradeoff(1.0, x), [jnp.nan, -0.1, 1.1]),
    ("compose_parallel", lambda x: acc.compose_parallel(jnp.stack([1.0, x])), [jnp.nan, -1.0]),
    ("compose_sequential", lambda x: acc.compose_sequential(jnp.stack([1.0, x])), [jnp.nan, -1.0]),
    ("gdp_delta", lambda x: acc.gdp_delta(x, 1.0), [jnp.nan, -1.0, 0.0]),
    ("gdp_epsilon", lambda x: acc.gdp_epsilon(1.0, x), [jnp.nan, 0.0, 1.0]),
    ("gdp_mu", lambda x: acc.gdp_mu(x, 1e-5), [jnp.nan, -1.0]),
    ("gdp_tradeoff", lambda x: acc.gdp_tradeoff(x, 0.1), [jnp.nan, -1.0]),
    ("gdp_log_delta(eps)", lambda x: acc.gdp_log_delta(1.0, x), [jnp.nan, -1.0]),
    ("gdp_compose", lambda x: acc.gdp_compose(jnp.stack([1.0, x])), [jnp.nan, -1.0]),
    ("gaussian_mu", lambda x: acc.gaussian_mu(1.0, x), [jnp.nan, -1.0]),
    ("gdp_mixture_delta", lambda x: acc.gdp_mixture_delta(jnp.stack([x, 1.0]), jnp.array([0.5, 0.5]), 1.0),
     [jnp.nan, -1.0, 0.0]),
    ("gdp_mixture_delta(weights)", lambda x: acc.gdp_mixture_delta(jnp.array([1.0, 2.0]), jnp.stack([x, 1.0 - x]), 1.0),
     [jnp.nan, -0.5]),
    ("gdp_mixture_tradeoff", lambda x: acc.gdp_mixture_tradeoff(jnp.stack([x, 1.0]), jnp.array([0.5, 0.5]), 0.1),
     [jnp.nan, -1.0]),
    ("zcdp_delta", lambda x: acc.zcdp_delta(x, 1.0), [jnp.nan, -1.0]),
    ("zcdp_epsilon", lambda x: acc.zcdp_epsilon(0.5, x), [jnp.nan, -0.1, 1.0]),
]


_NAN_CACHE: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def _nan_outputs(name, fn, bad):
    """(values, gradients) of one case from ONE jitted ``vmap(value_and_grad(fn))``, computed
    once for both tests below (the value is the primal of the same traced computation)."""
    if name not in _NAN_CACHE:
        f = jax.jit(jax.vmap(jax.value_and_grad(fn)))
        _NAN_CACHE[name] = tuple(np.asarray(x) for x in f(jnp.asarray(bad, jnp.float32)))
    return _NAN_CACHE[name]


@pytest.mark.parametrize("name,fn,bad", NAN_UNDER_JIT, ids=[n for n, _, _ in NAN_UNDER_JIT])
def test_every_accountant_is_nan_under_jit(name, fn, bad):
    out = _nan_outputs(name, fn, bad)[0]
    assert out.shape == (len(bad),) and np.all(np.isnan(out)), (name, out)
    for value in bad:
        with pytest.raises(ValueError):
            fn(float(value))


@pytest.mark.parametrize("name,fn,bad", NAN_UNDER_JIT, ids=[n for n, _, _ in NAN_UNDER_JIT])
def test_every_accountant_has_a_nan_gradient_at_an_invalid_budget(name, fn, bad):
    grads = _nan_outputs(name, fn, bad)[1]
    assert grads.shape == (len(bad),) and np.all(np.isnan(grads)), (name, grads)


def test_booleans_are_not_budgets():
    for call in (lambda: acc.rr_epsilon(True), lambda: acc.gdp_delta(True, 1.0),
                 lambda: acc.krr_explore_prob(1.0, np.array([True])),
                 lambda: acc.gdp_epsilon(1.0, jnp.asarray(False))):
        with pytest.raises(ValueError, match="not a boolean"):
            call()
    with pytest.raises(ValueError, match="^r must be a number"):
        jax.jit(acc.rr_epsilon)(jnp.asarray(True))  # the dtype is static: also when traced


def test_erfcx_has_no_holes():
    # jitted, as the accountants call it (inside jit): one kernel per dtype instead of one per
    # eager primitive
    from scipy.special import erfcx as reference

    erfcx_jit = jax.jit(erfcx)
    x32 = np.linspace(0.0, 60.0, 60001, dtype=np.float32)
    got32 = np.asarray(erfcx_jit(jnp.asarray(x32)))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, reference(x32.astype(float)), rtol=2e-6)
    with jax.enable_x64(True):
        x64 = np.concatenate([np.linspace(0.0, 60.0, 60001), np.geomspace(60.0, 1e12, 200)])
        got64 = np.asarray(erfcx_jit(jnp.asarray(x64)))
    assert got64.dtype == np.float64
    np.testing.assert_allclose(got64, reference(x64), rtol=1e-13)


def test_log_delta_float32_where_delta_underflows(_profile, _inversions):
    # log delta of 5-GDP for eps in [70, 90] spans -72 .. -115: float32 must follow float64
    f32, f64 = _profile["l32"][_N_GRID:], _profile["l64"][_N_GRID:]
    assert f32.dtype == np.float32
    assert np.all(np.isfinite(f32))
    np.testing.assert_allclose(f32, f64, rtol=2e-6)
    eps_at, ref = _inversions[0][_N_EPS:], _inversions[1][_N_EPS:]
    np.testing.assert_allclose(eps_at, ref, rtol=1e-5)


@pytest.mark.parametrize("count", [2**40, 2**40 + 1, 2**62 + 3])
def test_self_composition_counts_beyond_int32(count):
    # Counts beyond int32 are floats of the event's dtype, rounded up (2^40 + 1 is not a float32),
    # not an OverflowError; mu sqrt(count) against mpmath at the exact count, to the dtype's eps
    import mpmath as mp

    event = acc.SelfComposedEvent(acc.GaussianEvent(1.0), count)
    assert int(np.asarray(event.prepared().count)) >= count  # exact integers: never fewer uses
    got = float(acc.composed_mu(event))
    exact = float(mp.sqrt(mp.mpf(count)))
    assert got == pytest.approx(exact, rel=float(jnp.finfo(jnp.result_type(float)).eps))
    assert np.isfinite(float(acc.epsilon(event, 1e-5)))
    pure = acc.SelfComposedEvent(acc.RandomizedResponseEvent(0.5), count)
    assert float(acc.pure_epsilon(pure)) >= count * math.log(3.0) * (1 - 1e-6)
