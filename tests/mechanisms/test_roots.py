"""Local randomizers (moments / frequencies with fixed keys) and the jit-able root finder."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.accounting import krr_explore_prob, rr_epsilon
from ldpjax.mechanisms import (
    debias_randomized_response,
    gaussian_mechanism,
    gaussian_noise_scale,
    kary_randomized_response,
    randomized_response,
)
from ldpjax.roots import bracketed_root

N = 200_000


def test_gaussian_mechanism_moments():
    key = jax.random.key(0)
    value = jnp.full((N,), 0.3)
    mu = 0.5
    noisy = np.asarray(gaussian_mechanism(key, value, 2.0, mu))
    sd = 2.0 / mu
    # mean: sd/sqrt(N) = 0.0089; allow 5 sd. variance: relative sd sqrt(2/N) = 0.0032; 5 sd.
    assert abs(noisy.mean() - 0.3) < 5 * sd / math.sqrt(N)
    assert abs(noisy.var() / sd**2 - 1) < 5 * math.sqrt(2 / N)
    assert float(gaussian_noise_scale(2.0, math.inf)) == 0.0
    np.testing.assert_array_equal(gaussian_mechanism(key, value, 2.0, math.inf), value)


def test_gaussian_mechanism_vmaps_over_mu():
    mus = jnp.array([0.5, 1.0, 4.0])
    out = jax.vmap(gaussian_mechanism, in_axes=(None, None, None, 0))(
        jax.random.key(1), jnp.zeros(N), 1.0, mus
    )
    sds = np.asarray(out).std(axis=1)
    np.testing.assert_allclose(sds, 1 / np.asarray(mus), rtol=5 * math.sqrt(1 / (2 * N)))


@pytest.mark.parametrize("r", [0.2, 0.9, 1.0])
def test_randomized_response_frequencies_and_debiasing(r):
    key = jax.random.key(2)
    bits = (jnp.arange(N) % 3 == 0).astype(jnp.int32)  # true rate 1/3
    reports = np.asarray(randomized_response(key, bits, r))
    p_keep = (1 + r) / 2  # P(report = bit)
    agree = (reports == np.asarray(bits)).mean()
    assert abs(agree - p_keep) <= 5 * math.sqrt(p_keep * (1 - p_keep) / N)
    est = np.asarray(debias_randomized_response(reports, r)).mean()
    # debiased report has variance <= 1/(4 r^2) per draw
    assert abs(est - 1 / 3) < 5 * math.sqrt(1 / (4 * r * r) / N)


def test_randomized_response_likelihood_ratio_is_e_eps():
    r = 0.5
    ones = np.asarray(randomized_response(jax.random.key(3), jnp.ones(N, jnp.int32), r)).mean()
    zeros = np.asarray(randomized_response(jax.random.key(4), jnp.zeros(N, jnp.int32), r)).mean()
    # log P(1|1)/P(1|0) = eps; delta-method sd of the log ratio ~ sqrt(1/(N p1) + 1/(N p0))
    sd = math.sqrt((1 - ones) / (N * ones) + (1 - zeros) / (N * zeros))
    assert abs(math.log(ones / zeros) - float(rr_epsilon(r))) < 5 * sd


@pytest.mark.parametrize("xi,k", [(0.0, 3), (1.0, 3), (2.5, 5)])
def test_kary_randomized_response_frequencies(xi, k):
    truth = jnp.full((N,), 1, jnp.int32)
    shown = np.asarray(kary_randomized_response(jax.random.key(5), truth, xi, k))
    freq = np.bincount(shown, minlength=k) / N
    keep = math.exp(xi) / (k - 1 + math.exp(xi))
    expected = np.full(k, (1 - keep) / (k - 1))
    expected[1] = keep
    np.testing.assert_allclose(freq, expected, atol=5 * math.sqrt(0.25 / N))
    # exploration view: keep = 1 - p + p / k
    p = float(krr_explore_prob(xi, k))
    assert keep == pytest.approx(1 - p + p / k, rel=1e-6)


def test_mechanism_bad_input():
    with pytest.raises(ValueError, match="^mu must"):
        gaussian_mechanism(jax.random.key(0), jnp.zeros(2), 1.0, 0.0)
    with pytest.raises(ValueError, match="^r must"):
        randomized_response(jax.random.key(0), jnp.zeros(2, int), 0.0)
    with pytest.raises(ValueError, match="^k must"):
        kary_randomized_response(jax.random.key(0), jnp.zeros(2, int), 1.0, 1)
    with pytest.raises(ValueError, match="^sensitivity must"):
        gaussian_noise_scale(-1.0, 1.0)


# ---------------------------------------------------------------- roots
def test_bracketed_root_closed_forms_and_implicit_gradient(x64):
    # x^3 = a  ->  x = a^(1/3), dx/da = 1 / (3 a^(2/3))
    f = lambda x, a: x**3 - a  # noqa: E731
    a = jnp.array([0.001, 1.0, 8.0, 1e6])
    root = bracketed_root(f, 0.0, 1e3, a)
    np.testing.assert_allclose(root, np.cbrt(np.asarray(a)), rtol=1e-13)
    grad = jax.vmap(jax.grad(lambda a: bracketed_root(f, 0.0, 1e3, a)))(a)
    np.testing.assert_allclose(grad, 1 / (3 * np.asarray(a) ** (2 / 3)), rtol=1e-10)


def test_bracketed_root_decreasing_function_jit_vmap(x64):
    # exp(-x) = y  ->  x = -log y ; decreasing in x, bracket given in either order
    f = lambda x, y: jnp.exp(-x) - y  # noqa: E731
    ys = jnp.array([1e-8, 0.1, 0.9])
    roots = jax.jit(jax.vmap(lambda y: bracketed_root(f, 40.0, 0.0, y)))(ys)
    np.testing.assert_allclose(roots, -np.log(np.asarray(ys)), rtol=1e-12)


def test_bracketed_root_float32():
    f = lambda x, a: x * x - a  # noqa: E731
    r = bracketed_root(f, jnp.float32(0), jnp.float32(10), jnp.float32(2))
    assert r.dtype == jnp.float32 and float(r) == pytest.approx(math.sqrt(2), rel=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bracketed_root_stops_at_a_fixed_point_with_the_bits_of_every_iteration(dtype):
    """The loop stops once no bit of its state changes; the answer must be bit for bit that of
    running all ``num_iters`` iterations of the same step (here a fori_loop of it), also for
    an entry with a NaN argument (its f is NaN) and under vmap with a batched stopping rule."""
    from ldpjax.roots import _initial_carry, _rtsafe_step

    if dtype == "float64" and not jax.config.jax_enable_x64:
        pytest.skip("float64 needs jax_enable_x64")
    f = lambda x, a, w: x**3 + w * jnp.expm1(x) - a  # noqa: E731 - increasing in x for w >= 0
    a = jnp.asarray([1e-6, 0.3, 2.0, 8.0, 1e4, jnp.nan, 0.0], dtype)
    w = jnp.asarray([0.0, 1.0, 0.5, 0.0, 2.0, 1.0, 1.0], dtype)
    lo, hi = jnp.zeros_like(a), jnp.full_like(a, 30.0)

    def every_iteration(lo, hi, a, w, num_iters):
        carry = _initial_carry(f, lo, hi, (a, w))
        carry = jax.lax.fori_loop(0, num_iters, lambda _, c: _rtsafe_step(f, (a, w), c), carry)
        return carry[2]

    for num_iters in (3, 80):
        ours = jax.jit(lambda lo, hi, a, w, n=num_iters: bracketed_root(f, lo, hi, a, w,
                                                                         num_iters=n))(lo, hi, a, w)
        ref = jax.jit(every_iteration, static_argnums=4)(lo, hi, a, w, num_iters)
        np.testing.assert_array_equal(np.asarray(ours).view(f"u{ours.dtype.itemsize}"),
                                      np.asarray(ref).view(f"u{ref.dtype.itemsize}"))
        batched = jax.vmap(lambda lo, hi, a, w, n=num_iters: bracketed_root(
            f, lo, hi, a, w, num_iters=n))(lo, hi, a, w)
        np.testing.assert_array_equal(np.asarray(batched).view(f"u{ours.dtype.itemsize}"),
                                      np.asarray(ref).view(f"u{ref.dtype.itemsize}"))
    finite = np.asarray([0, 1, 2, 3, 4, 6])  # the roots solve the equation (not the NaN row)
    residual = f(np.asarray(ours)[finite], np.asarray(a)[finite], np.asarray(w)[finite])
    np.testing.assert_allclose(residual / np.maximum(1.0, np.asarray(a)[finite]), 0.0,
                               atol=1e-5 if dtype == "float32" else 1e-12)
