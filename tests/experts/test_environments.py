"""Synthetic gain generators: ranges, means (with stated sampling tolerances), switching
schedules, vectorisation and validation."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.experts import (
    bernoulli_gains,
    equal_gains,
    switching_best,
    switching_gains,
    uniform_gains,
    validate_gains,
)

T, N = 20000, 4


def _in_unit_interval(gains):
    arr = np.asarray(gains)
    assert arr.shape == (T, N)
    assert np.all((arr >= 0) & (arr <= 1))
    validate_gains(arr)  # the library's own check accepts them


def test_bernoulli_gains_means():
    """Column means of 20000 Bernoulli draws: sd <= 0.5 / sqrt(20000) = 0.0035; 5 sd = 0.018."""
    gains = bernoulli_gains(jax.random.key(0), T, N, gap=0.2, base=0.4, best=2)
    _in_unit_interval(gains)
    assert set(np.unique(np.asarray(gains))) <= {0.0, 1.0}
    np.testing.assert_allclose(np.mean(gains, 0), [0.4, 0.4, 0.6, 0.4], atol=0.018)


def test_uniform_gains_means():
    """U[0, 0.7] has mean 0.35, U[0.3, 1] mean 0.65, sd 0.2 -> 5 sd of the mean = 0.0071."""
    gains = uniform_gains(jax.random.key(1), T, N, gap=0.3, best=0)
    _in_unit_interval(gains)
    np.testing.assert_allclose(np.mean(gains, 0), [0.65, 0.35, 0.35, 0.35], atol=0.0071)
    assert float(jnp.min(gains[:, 0])) >= 0.3 and float(jnp.max(gains[:, 1:])) <= 0.7


def test_equal_gains_are_tied_every_round():
    gains = equal_gains(jax.random.key(2), T, N, base=0.3)
    _in_unit_interval(gains)
    assert np.all(np.asarray(gains) == np.asarray(gains)[:, :1])
    assert float(jnp.mean(gains[:, 0])) == pytest.approx(0.3, abs=0.018)


def test_switching_environment():
    """Switch frequency ~ switch_prob (sd sqrt(p(1-p)/T) = 0.0015 at p = 0.05; 5 sd = 0.0075),
    never to the same expert, and the current best expert has the higher mean."""
    key = jax.random.key(3)
    p = 0.05
    gains = switching_gains(key, T, N, gap=0.4, switch_prob=p, base=0.3)
    _in_unit_interval(gains)
    best = np.asarray(switching_best(jax.random.split(key)[0], T, N, p))
    changes = np.diff(best) != 0
    assert changes.mean() == pytest.approx(p, abs=0.0075)
    is_best = np.arange(N)[None, :] == best[:, None]
    g = np.asarray(gains)
    # 20000 * 1 best cells (mean 0.7) and 60000 others (mean 0.3): 5 sd < 0.02.
    assert g[is_best].mean() == pytest.approx(0.7, abs=0.02)
    assert g[~is_best].mean() == pytest.approx(0.3, abs=0.02)
    assert len(np.unique(best)) == N


def test_generators_jit_and_vmap_over_the_gap():
    gaps = jnp.array([0.0, 0.1, 0.5])
    batch = jax.jit(jax.vmap(lambda g: bernoulli_gains(jax.random.key(4), 1000, 3, g)))(gaps)
    assert batch.shape == (3, 1000, 3)
    means = np.asarray(batch[:, :, 0].mean(-1) - batch[:, :, 1:].mean((-1, -2)))
    # sd of a difference of means <= 0.5 sqrt(1/1000 + 1/2000) = 0.019; 5 sd = 0.1.
    np.testing.assert_allclose(means, gaps, atol=0.1)
    switching = jax.jit(lambda p: switching_gains(jax.random.key(5), 500, 3, 0.2, p))(0.1)
    assert switching.shape == (500, 3)


def test_zero_one_environments_do_not_depend_on_x64():
    """The same key gives the same Bernoulli, switching and tied gains (and the same best-expert
    path) with ``jax_enable_x64`` on or off, so a test or an experiment sees one environment
    in both modes; only the returned dtype follows the mode."""
    def draws():
        key = jax.random.key(22)
        return (bernoulli_gains(key, 300, 4, 0.2), switching_gains(key, 300, 4, 0.3, 0.05),
                equal_gains(key, 300, 4, 0.4), switching_best(key, 300, 4, 0.05))

    plain = [np.asarray(x) for x in draws()]
    with jax.enable_x64(True):
        wide = [np.asarray(x) for x in draws()]
    assert wide[0].dtype == np.float64 and plain[0].dtype == jnp.result_type(float)
    for a, b in zip(plain, wide, strict=True):
        np.testing.assert_array_equal(a, b)
    assert 0 < plain[1].mean() < 1 and len(np.unique(plain[3])) > 1  # not degenerate


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: bernoulli_gains(jax.random.key(0), 10, 3, gap=1.5), "gap"),
        (lambda: bernoulli_gains(jax.random.key(0), 10, 3, gap=0.6, base=0.5), "base \\+ gap"),
        (lambda: bernoulli_gains(jax.random.key(0), 10, 1, gap=0.1), "num_experts"),
        (lambda: bernoulli_gains(jax.random.key(0), 0, 3, gap=0.1), "num_rounds"),
        (lambda: bernoulli_gains(jax.random.key(0), 10, 3, gap=0.1, best=3), "best"),
        (lambda: uniform_gains(jax.random.key(0), 10, 3, gap=-0.1), "gap"),
        (lambda: equal_gains(jax.random.key(0), 10, 3, base=2.0), "base"),
        (lambda: switching_gains(jax.random.key(0), 10, 3, 0.1, switch_prob=1.5), "switch_prob"),
        (lambda: switching_best(jax.random.key(0), 10, 3, switch_prob=math.nan), "switch_prob"),
    ],
)
def test_bad_environment_arguments(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        call()
