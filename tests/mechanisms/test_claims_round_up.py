"""Claims round up, never down: randomized response, the granular Laplace claim, tiny deltas.

Expected values are exact: 50-digit mpmath for randomized response (at the float r the event
holds), ``fractions.Fraction`` for the granular Laplace scale and claim (integers D and n).
Every test runs in the default precision and, with ``JAX_ENABLE_X64=1``, in float64.
"""

from __future__ import annotations

import importlib
import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest

from ldpjax import accounting as acc
from ldpjax import mechanisms as M

L = importlib.import_module("ldpjax.mechanisms.laplace")
mp.mp.dps = 50


def _dtype():
    return np.dtype(jnp.result_type(float))


def _rates() -> np.ndarray:
    """Many r of the release dtype in (0, 1): uniform, near 1, 1 - k ulp, and tiny ones."""
    dtype = _dtype()
    rng = np.random.default_rng(0)
    half_ulp = np.finfo(dtype).eps / 2  # the spacing just below 1
    rs = np.concatenate(
        [
            rng.uniform(0.0, 1.0, 400),
            1.0 - rng.uniform(0.0, 1e-3, 200),
            10.0 ** rng.uniform(-30.0, -1.0, 100),
            1.0 - half_ulp * np.arange(1, 65),
            [1e-9, 0.5, 0.7],
        ]
    ).astype(dtype)
    return rs[(rs > 0) & (rs < 1)]


def _exact_eps(r: float, delta: float = 0.0):
    r, delta = mp.mpf(r), mp.mpf(delta)
    return mp.mpf(0) if r <= delta else mp.log((1 + r - 2 * delta) / (1 - r))


def _exact_delta(r: float, eps: float):
    r, eps = mp.mpf(r), mp.mpf(eps)
    return max(mp.mpf(0), (1 + r) / 2 - mp.e**eps * (1 - r) / 2)


def test_rr_epsilon_is_never_below_the_exact_value():
    rs = _rates()
    exact = np.array([float(_exact_eps(float(r))) for r in rs])
    eps_mach = float(np.finfo(_dtype()).eps)
    for got in (
        np.asarray(acc.rr_epsilon(rs)),
        np.asarray(acc.epsilon(acc.RandomizedResponseEvent(jnp.asarray(rs)), 0.0)),
        np.asarray(jax.jit(acc.rr_epsilon)(rs)),
    ):
        assert np.all(got >= exact)  # an upper bound for every r, 1 - k ulp included
        assert np.all(got <= exact * (1 + 32 * eps_mach))  # and accurate in relative terms


def test_rr_epsilon_of_a_tiny_rate_is_positive_and_accurate():
    # 2 atanh(1e-9) = 2e-9 (the subtraction log(1 + r) - log(1 - r) cancelled to 0 before)
    claim = float(acc.epsilon(acc.RandomizedResponseEvent(1e-9), 0.0))
    r = float(np.asarray(1e-9, _dtype()))
    assert claim >= float(_exact_eps(r)) > 0
    assert claim == pytest.approx(2 * r, rel=1e-6)


def test_rr_profile_is_never_below_the_exact_value():
    rs = _rates()
    rng = np.random.default_rng(1)
    eps0 = np.array([float(_exact_eps(float(r))) for r in rs])
    eps = (rng.uniform(0.0, 1.2, rs.size) * eps0).astype(_dtype())
    deltas = np.asarray(acc.delta(acc.RandomizedResponseEvent(jnp.asarray(rs)), jnp.asarray(eps)))
    exact = np.array(
        [float(_exact_delta(float(r), float(e))) for r, e in zip(rs, eps, strict=True)]
    )
    eps_mach = float(np.finfo(_dtype()).eps)
    assert np.all(deltas >= exact)
    assert np.all(deltas - exact <= 8 * eps_mach)  # an absolute error of a few ulps of r <= 1
    # epsilon(delta): deltas below r (some far below the float range of the dtype)
    targets = np.where(
        rng.uniform(size=rs.size) < 0.3,
        10.0 ** rng.uniform(-60, -5, rs.size),
        rng.uniform(0.0, 1.1, rs.size) * rs.astype(np.float64),
    )
    targets = np.minimum(targets, 0.99)
    got = np.array(
        [
            float(acc.epsilon(acc.RandomizedResponseEvent(r), d))
            for r, d in zip(rs[:60], targets[:60], strict=True)
        ]
    )
    exact = np.array(
        [float(_exact_eps(float(r), d)) for r, d in zip(rs[:60], targets[:60], strict=True)]
    )
    assert np.all(got >= exact)


def test_rr_delta_is_zero_from_its_epsilon_on():
    rs = jnp.asarray(_rates())
    eps0 = acc.rr_epsilon(rs)
    assert np.all(np.asarray(acc.delta(acc.RandomizedResponseEvent(rs), eps0)) == 0.0)


def _float_ceil(x: Fraction, dtype) -> float:
    """The smallest number of ``dtype`` that is >= x (exact, from Fractions)."""
    near = dtype.type(float(x))
    if Fraction(float(near)) < x:
        near = np.nextafter(near, dtype.type(np.inf))
    return float(near)


@pytest.mark.parametrize("eps", [0.3, 0.7, 1.1, 2.9, 0.123456])
@pytest.mark.parametrize("dim", [1, 3])
def test_granular_laplace_claim_is_d_over_t_rounded_up(eps, dim):
    # D and n by hand: sensitivity 1 = 16 grid steps of g = 2^-4 plus the rounding slack of d
    # coordinates (g d in l1), so D = 16 + d; n = ceil(64 D / eps) (t = n / 64); claim D / t
    dtype = _dtype()
    g = 2.0**-4
    shift = 16 + dim
    eps_f = Fraction(float(np.asarray(eps, dtype)))
    n = math.ceil(64 * shift / eps_f)
    got_shift, got_scale = L.granular_laplace_scale(1.0, eps, g, dim)
    assert float(got_shift) == shift
    assert Fraction(float(got_scale)) == Fraction(n, 64)
    claim = float(M.laplace_claim(1.0, eps, g, dim).eps)
    assert claim == _float_ceil(Fraction(64 * shift, n), dtype)  # rounded up, never down
    assert Fraction(claim) >= Fraction(64 * shift, n)


def test_quotient_up_against_fractions():
    dtype = _dtype()
    rng = np.random.default_rng(2)
    num = (rng.integers(1, 2**18, 3000) * 64).astype(dtype)
    den = rng.integers(1, 2**19, 3000).astype(dtype)
    got = np.asarray(jax.jit(L.quotient_up)(num, den))
    want = [_float_ceil(Fraction(int(a), int(b)), dtype) for a, b in zip(num, den, strict=True)]
    np.testing.assert_array_equal(got, np.asarray(want, dtype))


def test_tiny_delta_of_an_approx_event_is_not_rounded_to_zero():
    dtype = _dtype()
    out = float(acc.delta(acc.ApproxDpEvent(1.0, 1e-300), 1.0))
    assert out >= 1e-300  # delta0 (float64) or the dtype's smallest normal number (float32)
    assert out == pytest.approx(max(1e-300, float(np.finfo(dtype).tiny)), rel=1e-6)
