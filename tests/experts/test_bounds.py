"""Theorem 1's bound, ComputeDelay and the regret bounds (paper 000), against independent
NumPy/SciPy references, Monte Carlo and float64 finite differences."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from ldpjax.experts import (
    compute_delay,
    leader_change_bound,
    regret_bound_adabatch,
    regret_bound_ftpl,
)
from ldpjax.experts.bounds import MAX_DELAY


def reference_bound(gap, batch, eta, n):
    """Theorem 1 written out with SciPy (independent of the code under test)."""
    beta = gap / (eta * np.sqrt(2.0 * batch)) - np.sqrt(np.log(2.0 * n - 2.0))
    return 2 * stats.norm.cdf(-np.sqrt(2) * beta) + 2 * np.sqrt(np.pi) * stats.norm.pdf(-beta) * (
        stats.norm.cdf(beta) - stats.norm.cdf(-beta)
    )


def reference_threshold(t, batch, n, alpha):
    return alpha * np.sqrt(np.log(n) / (t + batch))


# --------------------------------------------------------------------------- Theorem 1
def test_leader_change_bound_matches_reference(x64):
    rng = np.random.default_rng(0)
    gap = rng.uniform(0, 30, 200)
    batch = rng.integers(1, 500, 200).astype(float)
    eta = rng.uniform(0.5, 5, 200)
    n = rng.integers(2, 200, 200).astype(float)
    ours = np.asarray(leader_change_bound(gap, batch, eta, n))
    np.testing.assert_allclose(ours, reference_bound(gap, batch, eta, n), rtol=1e-10, atol=1e-300)


def test_leader_change_bound_shape_facts():
    # beta = 0 gives exactly 1; the bound increases with B and decreases with the gap.
    n = 10
    gap_at_beta0 = math.sqrt(math.log(2 * n - 2)) * math.sqrt(2 * 7.0)
    assert abs(float(leader_change_bound(gap_at_beta0, 7.0, 1.0, n)) - 1.0) < 1e-5
    batches = jnp.arange(1.0, 200.0)
    values = np.asarray(leader_change_bound(5.0, batches, 1.0, n))
    assert np.all(np.diff(values) >= 0)
    gaps = jnp.linspace(0.0, 40.0, 200)
    assert np.all(np.diff(np.asarray(leader_change_bound(gaps, 10.0, 1.0, n))) <= 0)
    assert float(leader_change_bound(jnp.inf, 3.0, 1.0, n)) == 0.0


def _simulated_leader_change(rng, n, gap, batch, num_runs):
    """P(argmax changes at some step 1..B) for a walk from (gap, 0, ..., 0), eta = 1.

    The start has every other expert tied at the second place: the hardest start with that gap.
    """
    start = np.zeros(n)
    start[0] = gap
    steps = rng.standard_normal((num_runs, batch, n))
    path = start + np.cumsum(steps, axis=1)
    changed = np.any(np.argmax(path, axis=-1) != 0, axis=1)
    return changed.mean()


@pytest.mark.parametrize("num_runs", [2000, pytest.param(8000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("n", [2, 5, 20])
def test_theorem1_bound_dominates_simulated_leader_changes(n, num_runs):
    """p(k, B) >= P(leader changes within B steps), over a grid of (n, k, B).

    k is chosen so that the bound is informative (beta in {0.25, 1, 2}: p in ~(0.01, 0.8)).
    Monte Carlo: R runs, sd <= sqrt(0.25 / R) (R = 2000: 0.011, the fast suite; R = 8000:
    0.0056, slow); we allow 4 sd computed from the simulated frequency.
    """
    rng = np.random.default_rng(1234 + n)
    offset = math.sqrt(math.log(2 * n - 2))
    checked = 0
    for batch in (1, 8, 40):
        for beta in (0.25, 1.0, 2.0):
            gap = (beta + offset) * math.sqrt(2 * batch)
            bound = float(reference_bound(gap, batch, 1.0, n))
            assert abs(float(leader_change_bound(gap, batch, 1.0, n)) - bound) < 1e-5
            simulated = _simulated_leader_change(rng, n, gap, batch, num_runs)
            sd = math.sqrt(max(simulated * (1 - simulated), 1.0 / num_runs) / num_runs)
            assert bound >= simulated - 4 * sd, (n, batch, beta, bound, simulated)
            checked += 1
    assert checked == 9


# --------------------------------------------------------------------------- ComputeDelay
def _satisfies(gap, t, eta, n, alpha, batch):
    return reference_bound(gap, batch, eta, n) <= reference_threshold(t, batch, n, alpha)


def test_compute_delay_is_the_largest_admissible_batch(x64):
    """B satisfies the inequality (or is 1) and B + 1 does not (SciPy reference)."""
    rng = np.random.default_rng(7)
    size = 400
    eta = rng.uniform(0.5, 10, size)
    t = rng.integers(1, 200_000, size).astype(float)
    n = rng.integers(2, 300, size).astype(float)
    alpha = 10 ** rng.uniform(-3, 1, size)  # up to 10: also alpha sqrt(log n / t) > 1
    # Gaps from 0 up to a few noise standard deviations of the walk, so B spans 1 .. 1e5.
    gap = rng.uniform(0, 4, size) * eta * np.sqrt(t)
    delays = np.asarray(compute_delay(gap, t, eta, n, alpha))
    assert delays.dtype == np.int32 and np.all(delays >= 1) and np.all(delays < MAX_DELAY)
    assert np.sum(delays > 1) > 100 and delays.max() > 1000  # the test covers real batching
    for i in range(size):
        b = float(delays[i])
        args = (gap[i], t[i], eta[i], n[i], alpha[i])
        if b > 1:
            assert _satisfies(*args, b), (args, b)
        assert not _satisfies(*args, b + 1), (args, b)


def test_compute_delay_bracket_matches_a_full_range_bisection():
    """The provable upper bracket never cuts off the answer: same result as a plain 30-step
    bisection over [1, 2^30 + 1] (float32, the algorithms' dtype), over a wide input range."""
    from ldpjax.experts.bounds import _p_of_beta

    rng = np.random.default_rng(3)
    size = 3000
    gap = jnp.asarray(
        np.concatenate([rng.uniform(0, 50, size), 10 ** rng.uniform(-3, 6, size)]), jnp.float32
    )
    t = jnp.asarray(rng.integers(1, 10**6, 2 * size), jnp.float32)
    eta = jnp.asarray(rng.uniform(0.1, 5, 2 * size), jnp.float32)
    n = jnp.asarray(rng.integers(2, 1000, 2 * size), jnp.float32)
    alpha = jnp.asarray(10 ** rng.uniform(-4, 1.5, 2 * size), jnp.float32)

    @jax.jit
    def full_range(gap, t, eta, n, alpha):
        # The same arithmetic as the library, only the bracket differs.
        scaled, offset, log_n = gap / (eta * math.sqrt(2)), jnp.sqrt(jnp.log(2 * n - 2)), jnp.log(n)

        def body(_, bracket):
            lo, hi = bracket
            mid = lo + (hi - lo) // 2
            b = mid.astype(jnp.float32)
            ok = _p_of_beta(scaled * jax.lax.rsqrt(b) - offset) <= alpha * jnp.sqrt(log_n / (t + b))
            return jnp.where(ok, mid, lo), jnp.where(ok, hi, mid)

        start = (jnp.ones(gap.shape, jnp.int32), jnp.full(gap.shape, MAX_DELAY + 1, jnp.int32))
        return jax.lax.fori_loop(0, 30, body, start)[0]

    ours = np.asarray(compute_delay(gap, t, eta, n, alpha))
    reference = np.asarray(full_range(gap, t, eta, n, alpha))
    # Identical where float32 resolves the integers (B < 1e6; beyond, a unit step changes p by
    # less than float32 precision and the two bisections may settle a few units apart).
    small = reference < 10**6
    assert small.sum() > 3000
    np.testing.assert_array_equal(ours[small], reference[small])
    np.testing.assert_allclose(ours, reference, rtol=1e-5)
    assert ours.max() > 10**5 and np.mean(ours == 1) > 0.05


def test_compute_delay_edge_cases():
    # gap 0: p >= 1 > alpha sqrt(log n / (t + B)), so B = 1; infinite gap: the cap.
    assert int(compute_delay(0.0, 10.0, 1.0, 10, 0.01)) == 1
    assert int(compute_delay(jnp.inf, 10.0, 1.0, 10, 0.01)) == MAX_DELAY
    # Grows with the gap and with alpha, and float32 agrees with the float64 reference.
    gaps = jnp.linspace(0.0, 300.0, 301)
    delays = np.asarray(compute_delay(gaps, 1000.0, 1.0, 10, 0.01))
    assert np.all(np.diff(delays) >= 0) and delays[-1] > 100
    assert np.all(
        np.asarray(compute_delay(100.0, 1000.0, 1.0, 10, [0.001, 0.01, 0.1]))[1:]
        >= np.asarray(compute_delay(100.0, 1000.0, 1.0, 10, [0.001, 0.01, 0.1]))[:-1]
    )


def test_compute_delay_jits_and_vmaps():
    f = jax.jit(jax.vmap(compute_delay, in_axes=(0, None, None, None, 0)))
    out = f(jnp.array([0.0, 50.0, 500.0]), 100.0, 1.0, 10, jnp.array([0.01, 0.01, 0.5]))
    eager = [
        int(compute_delay(g, 100.0, 1.0, 10, a)) for g, a in [(0, 0.01), (50, 0.01), (500, 0.5)]
    ]
    assert out.tolist() == eager


# --------------------------------------------------------------------------- regret bounds
def test_regret_bounds_values():
    # mu = 1, n = 10: eta = sqrt(10).
    eta = math.sqrt(10)
    expected = (eta + 2 / eta) * math.sqrt(2 * 1000 * math.log(10))
    assert float(regret_bound_ftpl(1.0, 1000, 10)) == pytest.approx(expected, rel=1e-6)
    assert float(regret_bound_adabatch(1.0, 1000, 10, 0.01)) == pytest.approx(
        1.005 * expected, rel=1e-6
    )
    # mu = inf uses eta = sqrt 2: 4 sqrt(T log n).
    assert float(regret_bound_ftpl(jnp.inf, 1000, 10)) == pytest.approx(
        4 * math.sqrt(1000 * math.log(10)), rel=1e-6
    )
    # Vectorised over mu and n (vmap-able).
    grid = regret_bound_ftpl(jnp.array([0.5, 1.0, 2.0])[:, None], 100.0, jnp.array([2.0, 10.0]))
    assert grid.shape == (3, 2)
    vm = jax.vmap(regret_bound_ftpl, in_axes=(0, None, None))(jnp.array([0.5, 1.0]), 100.0, 10.0)
    np.testing.assert_allclose(vm, grid[:2, 1], rtol=1e-6)


def _central_difference(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_regret_bound_gradients_match_finite_differences(x64):
    mu, horizon, n, alpha = 0.7, 5000.0, 10.0, 0.05
    grad_mu = jax.grad(regret_bound_ftpl)(mu, horizon, n)
    fd = _central_difference(lambda m: float(regret_bound_ftpl(m, horizon, n)), mu, 1e-6)
    assert float(grad_mu) == pytest.approx(fd, rel=1e-7)
    # Closed form: d/dmu (eta + 2/eta) sqrt(2T log n) with eta = sqrt(n)/mu.
    eta = math.sqrt(n) / mu
    closed = (-eta / mu + 2 / (eta * mu)) * math.sqrt(2 * horizon * math.log(n))
    assert float(grad_mu) == pytest.approx(closed, rel=1e-10)
    grads = jax.grad(regret_bound_adabatch, argnums=(0, 1, 3))(mu, horizon, n, alpha)
    fds = [
        _central_difference(lambda m: float(regret_bound_adabatch(m, horizon, n, alpha)), mu, 1e-6),
        _central_difference(lambda T: float(regret_bound_adabatch(mu, T, n, alpha)), horizon, 1e-3),
        _central_difference(lambda a: float(regret_bound_adabatch(mu, horizon, n, a)), alpha, 1e-7),
    ]
    for g, fd in zip(grads, fds, strict=True):
        assert float(g) == pytest.approx(fd, rel=1e-6)
    # mu = inf: the bound no longer depends on mu.
    assert float(jax.grad(regret_bound_ftpl)(jnp.inf, horizon, n)) == 0.0


def test_leader_change_bound_gradients_match_finite_differences(x64):
    args = (6.0, 9.0, 1.3, 10.0)
    grads = jax.grad(leader_change_bound, argnums=(0, 1, 2))(*args)
    for i, g in enumerate(grads):

        def f(x, i=i):
            a = list(args)
            a[i] = x
            return float(leader_change_bound(*a))

        assert float(g) == pytest.approx(_central_difference(f, args[i], 1e-6), rel=1e-6)


# --------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: regret_bound_ftpl(0.0, 10, 10), "mu"),
        (lambda: regret_bound_ftpl(-1.0, 10, 10), "mu"),
        (lambda: regret_bound_ftpl(1.0, 10, 1), "n"),
        (lambda: regret_bound_ftpl(1.0, 0.5, 10), "T"),
        (lambda: regret_bound_adabatch(1.0, 10, 10, 0.0), "alpha"),
        (lambda: regret_bound_adabatch(1.0, 10, 10, -0.1), "alpha"),
        (lambda: regret_bound_adabatch(float("nan"), 10, 10, 0.1), "mu"),
        (lambda: leader_change_bound(-1.0, 1.0, 1.0, 10), "gap"),
        (lambda: leader_change_bound(1.0, 0.0, 1.0, 10), "batch"),
        (lambda: leader_change_bound(1.0, 1.0, 0.0, 10), "eta"),
        (lambda: leader_change_bound(1.0, 1.0, 1.0, 1), "n"),
        (lambda: compute_delay(1.0, 10.0, 1.0, 10, 0.0), "alpha"),
        (lambda: compute_delay(1.0, 10.0, 1.0, 1, 0.1), "n"),
        (lambda: compute_delay(1.0, 0.0, 1.0, 10, 0.1), "t"),
        (lambda: compute_delay(1.0, 10.0, 1.0, 2.5, 0.1), "n"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        call()


def test_traced_bad_inputs_give_nan():
    assert np.isnan(float(jax.jit(regret_bound_ftpl)(-1.0, 10.0, 10.0)))
    assert np.isnan(float(jax.jit(regret_bound_adabatch)(1.0, 10.0, 10.0, -1.0)))
    assert np.isnan(float(jax.jit(leader_change_bound)(1.0, 1.0, 1.0, 1.0)))
    assert int(jax.jit(compute_delay)(1.0, 10.0, 1.0, 10.0, -1.0)) == 1
