"""Mean mechanisms for [-1, 1]: Duchi et al.'s, the discretised piecewise and the hybrid.

The discretised piecewise mechanism is checked against the conditions of the proof in its
docstring, from its integers with exact arithmetic (Python integers, ``fractions``, 60-digit
``mpmath``): A / B <= e^eps (so the realised epsilon never exceeds the claim),
T = w A + (N - w) B < 2^32, N >= w (s + 1) (so the continuous profile bounds the discretised
one), the window fits the grid at x = +-1, and B, A are the exact floors (or one below, within
the double-word error). Its exact law, enumerated from the integers, is unbiased (E = x up to
the float rounding of the window's centre) and matches the sampled releases (chi-square at
1e-6). Duchi et al.'s releases are exactly +-B^ with the exact law of randomized response on a
stochastic rounding; the hybrid's branch coin picks the piecewise branch at least beta of the
time. Audits (Clopper-Pearson) stay below the claims with power; invalid arguments fail closed.
"""

from __future__ import annotations

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest

from ldpjax.accounting.accountant import epsilon
from ldpjax.accounting.frequency_events import DuchiEvent, HybridEvent, PiecewiseEvent
from ldpjax.mechanisms import duchi, hybrid, no_privacy_permitted, piecewise
from ldpjax.mechanisms.unary_encoding import other_bit_words
from tests.mechanisms.oracle_checks import (
    audit_epsilon,
    chi_square_ok,
    pm_integers,
    pm_law,
    z_value,
)

KEY = jax.random.key(51)
TWO32 = 2**32


@pytest.fixture(autouse=True)
def _digits():
    """60-digit mpmath for this module's tests only (mp.mp.dps is global to the process)."""
    with mp.workdps(60):
        yield


@pytest.fixture(params=["float32", "float64"])
def precision(request):
    with jax.enable_x64(request.param == "float64"):
        yield np.dtype(request.param)


FAST_GRIDS = {(0.01, 2**-8), (1.0, 2**-2), (2.0, 2**-4), (15.0, 2**-8)}
GRIDS = [
    (e, g) if (e, g) in FAST_GRIDS else pytest.param(e, g, marks=pytest.mark.slow)
    for g in (2**-2, 2**-4, 2**-8)
    for e in (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0)
]


@pytest.mark.parametrize("eps,g", GRIDS)
def test_piecewise_integers_satisfy_the_proof(eps, g):
    a, b, t, w, m, scale, valid = pm_integers(eps, g)
    assert valid
    n = 2 * m + 1
    e = mp.exp(mp.mpf(float(np.float32(eps))))  # the budget as the release dtype holds it
    assert mp.mpf(a) / b <= e  # realised epsilon log(A / B) <= eps
    assert t == w * a + (n - w) * b and TWO32 - 2**22 <= t < TWO32
    assert n >= w * (mp.sqrt(e) + 1)  # window mass w A / T <= s / (s + 1)
    k_exact = Fraction(t, (a - b) * w) / Fraction(g)
    assert k_exact + Fraction(w - 1, 2) <= m  # the window fits at x = +-1
    assert abs(scale - float(k_exact)) <= 1e-6 * float(k_exact)
    exact_b = int(mp.floor(mp.mpf(TWO32) / (n + w * (e - 1))))
    assert exact_b - 1 <= b <= exact_b
    assert int(mp.floor(b * e)) - 1 <= a <= int(mp.floor(b * e))


@pytest.mark.parametrize("eps,g", [(0.5, 2**-4), (2.0, 2**-2), (8.0, 2**-6)])
def test_piecewise_exact_law_is_unbiased_and_its_variance_closed_form(eps, g):
    from ldpjax.frequency.variance import piecewise_discrete_variance

    _, _, _, _, m, _, _ = pm_integers(eps, g)
    grid = g * np.arange(-m, m + 1)
    for x in (-1.0, -0.37, 0.0, 0.52, 1.0):
        law, _ = pm_law(eps, g, x)
        mean = float(law @ grid)
        assert abs(mean - x) <= 1e-5  # the float centre K (float32) only
        var = float(law @ grid**2) - mean * mean
        with jax.enable_x64(True):
            closed = float(piecewise_discrete_variance(eps, x, g))
        assert abs(closed - var) <= 1e-9 * max(1.0, var)


def test_piecewise_law_matches_the_enumeration():
    eps, g, x, n = 1.0, 2**-2, 0.3, 80_000
    _, _, _, _, m, _, _ = pm_integers(eps, g)
    out = np.asarray(
        jax.jit(piecewise.piecewise_mechanism, static_argnums=3)(KEY, jnp.full(n, x), eps, g)
    )
    assert not np.any(np.isnan(out))
    index = np.round(out / g).astype(int) + m
    law, _ = pm_law(eps, g, x)
    ok, stat, bound = chi_square_ok(np.bincount(index, minlength=2 * m + 1), law)
    assert ok, (stat, bound)


def test_piecewise_outputs_are_on_the_grid():
    out = np.asarray(piecewise.piecewise_mechanism(KEY, jnp.linspace(-1, 1, 500), 1.0, 2**-8))
    assert np.all(out * 2**8 == np.round(out * 2**8))


def test_duchi_law_and_values(precision):
    eps, n = 1.0, 60_000
    q = int(np.asarray(other_bit_words(jnp.asarray(eps, precision))))
    scale = float(mp.mpf(TWO32) / (TWO32 - 2 * q))
    release = jax.jit(duchi.duchi_mechanism)
    for x in (-1.0, -0.3, 0.0, 0.8, 1.0):
        out = np.asarray(release(KEY, jnp.full(n, x, precision), jnp.asarray(eps, precision)))
        assert np.all(np.abs(np.abs(out) - scale) <= 2 * np.finfo(precision).eps * scale)
        rounded = Fraction(
            math.floor((1 + Fraction(float(np.asarray(x, precision)))) / 2 * TWO32), TWO32
        )
        plus = float(rounded * (1 - Fraction(q, TWO32)) + (1 - rounded) * Fraction(q, TWO32))
        hits = int(np.sum(out > 0))
        assert abs(hits - n * plus) <= z_value(5) * math.sqrt(n * plus * (1 - plus) + 1e-12)
        assert abs(scale * (2 * plus - 1) - x) <= 1e-6  # unbiased (up to 1 + x in float)


def test_hybrid_branch_coin_picks_the_piecewise_branch_at_least_beta():
    release = jax.jit(hybrid.hybrid_mechanism_from_bits, static_argnums=3)
    words = np.zeros((2**12, 6), np.uint32)
    words[:, 0] = np.arange(2**12, dtype=np.uint32) << 20  # every top-12-bit value
    words[:, 1:] = 2**32 - 1  # Duchi's branch: +B; piecewise's: both point words invalid
    for eps in (0.7, 1.0, 3.0, 10.0):
        beta = -mp.expm1(-mp.mpf(eps) / 2)
        out = np.asarray(release(jnp.asarray(words), 0.0, eps, 2**-4))
        assert np.mean(np.isnan(out)) >= float(beta) - 2.0**-12  # NaN marks the PM branch
    assert float(hybrid.hybrid_weight(0.5)) == 0.0


@pytest.mark.parametrize("name", ["duchi", "piecewise", "hybrid"])
def test_audit_mean_mechanisms(name):
    eps, n = 1.5, 100_000
    k0, k1 = jax.random.split(jax.random.key(29))
    if name == "duchi":
        release, event = jax.jit(duchi.duchi_mechanism), DuchiEvent(eps)
    elif name == "piecewise":
        release = jax.jit(lambda k, x, e: piecewise.piecewise_mechanism(k, x, e, 2**-6))
        event = PiecewiseEvent(eps)
    else:
        release = jax.jit(lambda k, x, e: hybrid.hybrid_mechanism(k, x, e, 2**-6))
        event = HybridEvent(eps)
    out0 = np.asarray(release(k0, jnp.full(n, -1.0), eps))
    out1 = np.asarray(release(k1, jnp.full(n, 1.0), eps))
    _, _, _, w, m, _, _ = pm_integers(eps, 2**-6)
    cuts = [0.0, 0.5, 1.0, (m - w + 0.5) * 2**-6]
    hits0 = [int(np.sum(out0 > c)) for c in cuts] + [int(np.sum(out0 < -c)) for c in cuts]
    hits1 = [int(np.sum(out1 > c)) for c in cuts] + [int(np.sum(out1 < -c)) for c in cuts]
    eps_low = audit_epsilon(hits0, hits1, n)
    claim = float(epsilon(event, 0.0))
    assert eps_low <= claim
    assert eps_low > 0.7 * claim


# --------------------------------------------------------------------------- fail closed, jit
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: duchi.duchi_mechanism(KEY, 1.5, 1.0), "x"),
        (lambda: duchi.duchi_mechanism(KEY, float("nan"), 1.0), "x"),
        (lambda: duchi.duchi_mechanism(KEY, 0.5, 0.0), "eps"),
        (lambda: duchi.duchi_mechanism(KEY, 0.5, 1e-12), "too small"),
        (lambda: duchi.duchi_mechanism(KEY, jnp.float16(0.5), 1.0), "float16"),
        (lambda: piecewise.piecewise_mechanism(KEY, 0.5, float("inf")), "eps"),
        (lambda: piecewise.piecewise_mechanism(KEY, 0.5, 20.0), "no valid discretised"),
        (lambda: piecewise.piecewise_mechanism(KEY, 0.5, 1.0, 0.3), "power of two"),
        (lambda: piecewise.piecewise_mechanism(KEY, -1.01, 1.0), "x"),
        (lambda: hybrid.hybrid_mechanism(KEY, 0.5, -1.0), "eps"),
        (lambda: hybrid.hybrid_mechanism(KEY, 2.0, 1.0), "x"),
    ],
)
def test_concrete_bad_arguments_raise(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    "fn", [duchi.duchi_mechanism, piecewise.piecewise_mechanism, hybrid.hybrid_mechanism]
)
def test_traced_bad_arguments_release_nan(fn):
    release = jax.jit(fn)
    assert np.all(np.isnan(np.asarray(release(KEY, jnp.array([2.0, jnp.nan, -3.0]), 1.0))))
    for eps in (-1.0, 0.0, float("nan"), float("inf")):
        assert np.all(np.isnan(np.asarray(release(KEY, jnp.array([0.1, 0.2, 0.3]), eps))))


def test_continuous_paths_are_simulation_only():
    from ldpjax.mechanisms import secure_key
    from ldpjax.mechanisms.release import release

    for fn in (piecewise.piecewise_mechanism, hybrid.hybrid_mechanism):
        with pytest.raises(ValueError, match="simulation path"):
            release(fn, secure_key(), jnp.array([0.5]), 1.0, None)
        assert not np.any(np.isnan(np.asarray(release(fn, secure_key(), jnp.array([0.5]), 1.0))))
    release_nan = jax.jit(lambda e: piecewise.continuous_piecewise(KEY, jnp.array([0.5, 2.0]), e))
    assert np.isnan(np.asarray(release_nan(1.0))).tolist() == [False, True]
    assert np.all(np.isnan(np.asarray(release_nan(-1.0))))


def test_duchi_no_privacy_only_when_checked():
    out = np.asarray(duchi.duchi_mechanism(KEY, jnp.full(100, 1.0), float("inf")))
    assert np.all(out == 1.0)  # a stochastic rounding of x: x = 1 gives 1
    release = jax.jit(duchi.duchi_mechanism)
    with no_privacy_permitted():
        assert np.all(np.asarray(release(KEY, jnp.full(10, -1.0), float("inf"))) == -1.0)


@pytest.mark.parametrize("name", ["duchi", "piecewise", "hybrid"])
def test_jits_with_literal_and_traced_budget(precision, name):
    x = jnp.asarray([-0.9, 0.0, 0.4, 1.0], precision)
    fn = {
        "duchi": duchi.duchi_mechanism,
        "piecewise": piecewise.piecewise_mechanism,
        "hybrid": hybrid.hybrid_mechanism,
    }[name]
    literal = np.asarray(jax.jit(lambda k: fn(k, x, 1.3))(KEY))
    traced = np.asarray(jax.jit(fn)(KEY, x, jnp.asarray(1.3, precision)))
    assert not np.any(np.isnan(literal))
    np.testing.assert_array_equal(literal, traced)
