"""Gaussian DP accounting: accuracy against independent references, gradients, edges, errors.

References: mpmath at 50 digits for the closed form delta(eps) (independent of our erfcx
rewriting), Google's dp-accounting `get_epsilon_gaussian` (its own bisection, tol 1e-15 here),
central finite differences in float64 for gradients.
"""

from __future__ import annotations

import itertools
import math

import dp_accounting
import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpjax.accounting import (
    gaussian_mu,
    gdp_compose,
    gdp_delta,
    gdp_epsilon,
    gdp_log_delta,
    gdp_mu,
    gdp_tradeoff,
)

mp.mp.dps = 50
MUS = [0.05, 0.1, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0]
EPSS = [0.0, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 35.0, 50.0]
DELTAS = [1e-12, 1e-10, 1e-8, 1e-6, 1e-5, 1e-3, 1e-2, 0.1, 0.3, 0.5]


def mp_log_delta(mu: float, eps: float) -> mp.mpf:
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    a = -eps / mu + mu / 2
    b = -eps / mu - mu / 2
    return mp.log(mp.ncdf(a) - mp.exp(eps) * mp.ncdf(b))


# Cost (fast suite): XLA compiles one kernel per function, dtype and shape. Every concrete
# float64 evaluation below therefore goes through ``_f64``, which pads its (broadcast, flattened)
# arguments to one length: one kernel per accountant for the whole module instead of one per
# grid shape or scalar. Gradient cases are batched with ``vmap`` for the same reason.
_N = 128


def _f64(fn, a, b, fill=(1.0, 0.5)):
    """``fn(a, b)`` evaluated concretely in float64 (x64 on), broadcast, at padded length _N."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    n = a.size
    assert n <= _N
    pa, pb = np.full(_N, fill[0]), np.full(_N, fill[1])
    pa[:n], pb[:n] = a.ravel(), b.ravel()
    with jax.enable_x64(True):
        out = np.asarray(fn(pa, pb))
    assert out.dtype == np.float64
    return out[:n].reshape(a.shape)


_N_ALPHA = 8000


_TRADEOFF_JIT = jax.jit(gdp_tradeoff)


def _tradeoff64(mu, alphas):
    """gdp_tradeoff(mu, alphas) for a float mu in float64, alphas padded to _N_ALPHA; jitted (one
    kernel instead of ~40 eager ones; the eager path is tested in float32 above and by the
    argument checks)."""
    alphas = np.asarray(alphas, np.float64)
    padded = np.full(_N_ALPHA, 0.5)
    padded[: alphas.size] = alphas.ravel()
    with jax.enable_x64(True):
        out = np.asarray(_TRADEOFF_JIT(float(mu), padded))
    assert out.dtype == np.float64
    return out[: alphas.size].reshape(alphas.shape)


def test_gdp_delta_matches_closed_form_in_high_precision():
    mus, epss = np.meshgrid(MUS, EPSS, indexing="ij")
    ours = _f64(gdp_log_delta, mus, epss)
    deltas = _f64(gdp_delta, mus, epss)
    for i, j in itertools.product(range(len(MUS)), range(len(EPSS))):
        ref = float(mp_log_delta(MUS[i], EPSS[j]))
        delta_ref = math.exp(ref)
        # log delta to 1e-9 relative covers delta itself to ~1e-9 relative where it does not
        # underflow; where it underflows (e.g. mu=0.05, eps=50: log delta ~ -5e5) the log is
        # what stays meaningful.
        assert ours[i, j] == pytest.approx(ref, rel=1e-9, abs=1e-12), (MUS[i], EPSS[j])
        if delta_ref > 1e-300:
            assert deltas[i, j] == pytest.approx(delta_ref, rel=1e-9)


def test_gdp_epsilon_matches_dp_accounting():
    mus, deltas = np.meshgrid(MUS, DELTAS, indexing="ij")
    eps = _f64(gdp_epsilon, mus, deltas)
    for (i, mu), (j, delta) in itertools.product(enumerate(MUS), enumerate(DELTAS)):
        ref = dp_accounting.get_epsilon_gaussian(1.0 / mu, delta, tol=1e-15)
        if ref == 0.0:
            assert eps[i, j] == 0.0
        else:
            assert eps[i, j] == pytest.approx(ref, rel=1e-9), (mu, delta)


def test_gdp_epsilon_inverts_delta_and_mu_inverts_both():
    mus, deltas = np.meshgrid(MUS, DELTAS, indexing="ij")
    eps = _f64(gdp_epsilon, mus, deltas)
    positive = eps > 0
    assert positive.sum() > 50  # most of the grid has a positive eps
    back = _f64(gdp_delta, mus, eps)
    np.testing.assert_allclose(back[positive], deltas[positive], rtol=1e-9)
    mu_back = _f64(gdp_mu, eps, deltas)
    np.testing.assert_allclose(mu_back[positive], mus[positive], rtol=1e-9)


def test_gdp_tradeoff_closed_form_and_float32():
    alphas = np.array([0.0, 1e-10, 1e-4, 0.05, 0.3, 0.5, 0.9, 1.0])
    from scipy.stats import norm

    for mu in [0.1, 1.0, 4.0]:
        ref = norm.cdf(norm.isf(alphas) - mu)
        got = np.asarray(gdp_tradeoff(np.float32(mu), alphas.astype(np.float32)))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref, rtol=2e-5, atol=1e-7)


def test_tradeoff_matches_privacy_profile_by_duality():
    # delta(eps) = 1 + f*(-e^eps) with f* the convex conjugate (Dong et al. Prop. 2.12):
    # delta(eps) = max_alpha [1 - f(alpha) - e^eps alpha]; maximise on a fine grid.
    alphas = np.concatenate([np.logspace(-14, -1, 4000), np.linspace(0.1, 1, 4000)])
    cases = [(0.5, 0.3), (1.0, 1.0), (2.0, 3.0)]
    deltas = _f64(gdp_delta, [m for m, _ in cases], [e for _, e in cases])
    for (mu, eps), delta in zip(cases, deltas, strict=True):
        f = _tradeoff64(mu, alphas)
        dual = np.max(1 - f - math.exp(eps) * alphas)
        assert dual == pytest.approx(delta, rel=1e-5)


def test_compose_and_gaussian_mu():
    # every gdp_compose call at one shape (2, 4) (one set of eager kernels)
    rows = jnp.array([[3.0, 4.0, 0.0, 0.0], [0.0] * 4])
    np.testing.assert_allclose(gdp_compose(rows), [5.0, 0.0])
    np.testing.assert_allclose(gdp_compose(jnp.ones((2, 4)), axis=-1), [2.0, 2.0])
    assert float(gaussian_mu(2.0, 4.0)) == 0.5
    assert float(gaussian_mu(1.0, 0.0)) == math.inf
    # k-fold composition of mu-GDP equals one sqrt(k) mu-GDP release (Dong et al. Cor. 3.3):
    # 4-fold of 0.5- and of 2-GDP
    four_fold = jnp.array([[0.5] * 4, [2.0] * 4])
    np.testing.assert_allclose(gdp_compose(four_fold), [1.0, 4.0], rtol=1e-6)


DELTA_GRAD_CASES = [(0.3, 0.2), (1.0, 1.0), (2.0, 5.0), (5.0, 20.0), (0.1, 2.0)]
EPS_GRAD_CASES = [(0.3, 1e-5), (1.0, 1e-5), (1.0, 1e-10), (5.0, 0.1), (20.0, 1e-12)]


def test_gdp_delta_gradients(x64):
    mus, epss = (np.array(c) for c in zip(*DELTA_GRAD_CASES, strict=True))
    # jitted, vmapped over the cases: one kernel
    g_mu, g_eps = jax.jit(jax.vmap(jax.grad(gdp_delta, argnums=(0, 1))))(mus, epss)
    assert g_mu.dtype == jnp.float64
    h = 1e-6
    # central differences, all cases in one padded call: rows mu+h, mu-h, eps+h, eps-h
    fd = _f64(gdp_delta, [mus + h, mus - h, mus, mus], [epss, epss, epss + h, epss - h])
    fd_mu, fd_eps = (fd[0] - fd[1]) / (2 * h), (fd[2] - fd[3]) / (2 * h)
    for i, case in enumerate(DELTA_GRAD_CASES):
        assert float(g_mu[i]) == pytest.approx(fd_mu[i], rel=1e-7, abs=1e-10), case
        assert float(g_eps[i]) == pytest.approx(fd_eps[i], rel=1e-7, abs=1e-10), case


def test_gdp_epsilon_gradients_implicit_function_theorem(x64):
    mus, deltas = (np.array(c) for c in zip(*EPS_GRAD_CASES, strict=True))
    g_mu, g_delta = jax.jit(jax.vmap(jax.grad(gdp_epsilon, argnums=(0, 1))))(mus, deltas)
    hm, hd = 1e-6 * mus, 1e-6 * deltas
    # rows: mu+h, mu-h, delta+h, delta-h, and eps itself
    fd = _f64(gdp_epsilon, [mus + hm, mus - hm, mus, mus, mus],
              [deltas, deltas, deltas + hd, deltas - hd, deltas])
    fd_mu, fd_delta = (fd[0] - fd[1]) / (2 * hm), (fd[2] - fd[3]) / (2 * hd)
    for i, (mu, delta) in enumerate(EPS_GRAD_CASES):
        assert float(g_mu[i]) == pytest.approx(fd_mu[i], rel=1e-7), (mu, delta)
        assert float(g_delta[i]) == pytest.approx(fd_delta[i], rel=1e-6), (mu, delta)
        # and the closed form d eps/d mu = phi(a) / (e^eps Phi(b))
        eps = float(fd[4, i])
        a, b = -eps / mu + mu / 2, -eps / mu - mu / 2
        closed = float(mp.npdf(a) / (mp.e**eps * mp.ncdf(b)))
        assert float(g_mu[i]) == pytest.approx(closed, rel=1e-9), (mu, delta)


def test_gdp_mu_gradient(x64):
    g = jax.jit(jax.grad(gdp_mu))(1.5, 1e-5)
    fd = _f64(gdp_mu, [1.5 + 1e-6, 1.5 - 1e-6], 1e-5)
    assert float(g) == pytest.approx((fd[0] - fd[1]) / 2e-6, rel=1e-7)


def test_edges():
    assert float(gdp_delta(math.inf, 1.0)) == 1.0
    assert float(gdp_delta(1.0, math.inf)) == 0.0
    assert float(gdp_epsilon(math.inf, 1e-5)) == math.inf
    # mu -> 0: eps -> 0 (delta(0) = 2 Phi(mu/2) - 1 falls below any fixed delta)
    assert float(gdp_epsilon(1e-8, 1e-5)) == 0.0
    small = np.array([float(gdp_epsilon(m, 1e-12)) for m in (1e-3, 1e-2, 1e-1)])
    assert np.all(np.diff(small) > 0) and small[0] < 0.02
    # large eps / tiny delta: finite logs, no NaN, no overflow
    assert np.isfinite(float(gdp_log_delta(0.05, 50.0)))
    assert float(gdp_delta(0.05, 50.0)) == 0.0
    ref = float(_f64(gdp_epsilon, 20.0, 1e-300))
    assert np.isfinite(ref)
    # in float32, 1e-300 would underflow to 0: the concrete delta is logged in float64 first,
    # so float32 gives the same finite eps (log 1e-300 = -690.8 is representable)
    assert float(gdp_epsilon(np.float32(20.0), 1e-300)) == pytest.approx(ref, rel=1e-5)
    # a budget below float32's normal range (flushed to 0 by XLA) counts as the smallest normal
    assert float(gdp_epsilon(1e-40, 1e-5)) == 0.0
    grads = jax.grad(gdp_delta, argnums=(0, 1))(0.05, 50.0)
    assert all(np.isfinite(float(g)) for g in grads)


_MU32 = np.linspace(0.1, 5.0, 7, dtype=np.float32)


@pytest.fixture(scope="module")
def _jit_vmap_eps32():
    """jit(vmap(value_and_grad(gdp_epsilon))) in float32 at 7 valid mus and, last, the invalid
    mu = -1 (one kernel for the jit/vmap/grad test and the traced out-of-domain test)."""
    mu = jnp.asarray(np.append(_MU32, -1.0), jnp.float32)
    delta = jnp.asarray([1e-5] * 7 + [0.1], jnp.float32)
    eps, grads = jax.jit(jax.vmap(jax.value_and_grad(gdp_epsilon)))(mu, delta)
    return np.asarray(eps), np.asarray(grads)


def test_float32_jit_vmap_grad(_jit_vmap_eps32):
    eps, grads = (x[:7] for x in _jit_vmap_eps32)
    assert eps.dtype == np.float32 and np.all(np.isfinite(eps))
    assert grads.dtype == np.float32 and np.all(grads > 0)
    ref = _f64(gdp_epsilon, _MU32, 1e-5)
    np.testing.assert_allclose(eps, ref, rtol=1e-4)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: gdp_delta(0.0, 1.0), "mu"),
        (lambda: gdp_delta(-1.0, 1.0), "mu"),
        (lambda: gdp_delta(1.0, -0.1), "eps"),
        (lambda: gdp_delta(math.nan, 1.0), "mu"),
        (lambda: gdp_epsilon(1.0, 0.0), "delta"),
        (lambda: gdp_epsilon(1.0, 1.0), "delta"),
        (lambda: gdp_epsilon(1.0, np.array([0.1, math.nan])), "delta"),
        (lambda: gdp_tradeoff(1.0, 1.5), "alpha"),
        (lambda: gdp_tradeoff(-2.0, 0.5), "mu"),
        (lambda: gdp_mu(-1.0, 0.1), "eps"),
        (lambda: gdp_compose(jnp.array([1.0, -1.0])), "mus"),
        (lambda: gaussian_mu(1.0, -1.0), "sigma"),
    ],
)
def test_bad_input_raises_value_error_naming_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        call()


def test_traced_out_of_domain_gives_nan(_jit_vmap_eps32):
    eps, grads = (x[-1] for x in _jit_vmap_eps32)  # jit(vmap(...)) at mu = -1, delta = 0.1
    assert math.isnan(eps) and math.isnan(grads)
    assert math.isnan(float(jax.jit(gdp_delta)(1.0, -1.0)))
    assert math.isnan(float(jax.jit(gdp_tradeoff)(1.0, 2.0)))


# ---------------------------------------------------------------- properties (hypothesis)
mu_st = st.floats(0.05, 20.0)
eps_st = st.floats(0.0, 50.0)
delta_st = st.floats(1e-12, 0.5)
alpha_st = st.floats(0.0, 1.0)


# Each example is one padded concrete float64 call per function (``_f64``, ``_tradeoff64``):
# the kernels are those compiled above, so examples cost dispatch, not compilation.
@settings(max_examples=60, deadline=None)
@given(mu=mu_st, e1=eps_st, e2=eps_st)
def test_delta_decreasing_in_eps_and_increasing_in_mu(mu, e1, e2):
    lo, hi = sorted((e1, e2))
    at_hi, at_lo, larger_mu = _f64(gdp_log_delta, [mu, mu, mu * 1.1], [hi, lo, lo])
    assert at_hi <= at_lo + 1e-12
    assert larger_mu >= at_lo - 1e-12


@settings(max_examples=60, deadline=None)
@given(mu=mu_st, delta=delta_st)
def test_epsilon_delta_round_trip(mu, delta):
    eps = float(_f64(gdp_epsilon, mu, delta))
    if eps > 0:
        assert float(_f64(gdp_delta, mu, eps)) == pytest.approx(delta, rel=1e-8)
    else:
        assert float(_f64(gdp_delta, mu, 0.0)) <= delta * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(mu=mu_st, a1=alpha_st, a2=alpha_st, lam=st.floats(0.0, 1.0))
def test_tradeoff_convex_nonincreasing_below_diagonal(mu, a1, a2, lam):
    lo, hi = sorted((a1, a2))
    mid = lam * lo + (1 - lam) * hi
    f_lo, f_hi, f_mid = _tradeoff64(mu, [lo, hi, mid])
    assert f_hi <= f_lo + 1e-12
    assert f_lo <= 1 - lo + 1e-12
    assert f_mid <= lam * f_lo + (1 - lam) * f_hi + 1e-10


@pytest.mark.parametrize("x64_mode", [False, True])
def test_gdp_delta_is_never_below_the_exact_profile(x64_mode):
    # mpmath at 50 digits is the exact profile; before the rounding bound, float32 sat up to
    # 8e-6 (relative) below it (mu = 0.05, eps = 0.5) and float64 2.2e-13 below (mu = 2,
    # eps = 31), through the cancellation of the two terms and the rounding of a^2
    dtype = np.float64 if x64_mode else np.float32
    mus = np.array([0.01, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0, 20.0], dtype)
    eps = np.linspace(0.0, 40.0, 41).astype(dtype)
    m, e = np.meshgrid(mus, eps)
    with jax.enable_x64(x64_mode):
        ours = np.asarray(gdp_delta(jnp.asarray(m), jnp.asarray(e)), np.float64).ravel()
    floor = 1e-300 if x64_mode else 1e-37
    with mp.workdps(50):
        for mu, ee, o in zip(m.ravel(), e.ravel(), ours, strict=True):
            mu_, e_ = mp.mpf(float(mu)), mp.mpf(float(ee))
            ref = mp.ncdf(-e_ / mu_ + mu_ / 2) - mp.exp(e_) * mp.ncdf(-e_ / mu_ - mu_ / 2)
            if ref < floor:
                continue
            assert o >= float(ref), (float(mu), float(ee), o, float(ref))
            assert o <= float(ref) * (1 + (1e-3 if not x64_mode else 1e-10)), (float(mu), float(ee))
