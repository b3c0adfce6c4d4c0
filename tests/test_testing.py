"""``ldpjax.testing`` accepts a correct algorithm and fails deliberately broken ones, each on
the property it breaks (a toy Gaussian counter, 4 steps: fast)."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import pytest

from ldpjax import testing, validation
from ldpjax.accounting import GaussianEvent
from ldpjax.engine import Algorithm
from ldpjax.mechanisms import gaussian_mechanism


class Params(NamedTuple):
    mu: jax.Array


def _init(params, key):
    return jnp.zeros((), jnp.float32)


def _step(params, state, inputs, key):
    release = gaussian_mechanism(key, jnp.float32(1.0), 1.0, params.mu)
    return state + release, release


def _validate(params, inputs):
    validation.check_range("params.mu", params.mu, 0.0, jnp.inf, low_open=True)


def _event(params):
    return GaussianEvent(params.mu)


GOOD = Algorithm(_init, _step, validate=_validate, privacy_event=_event)


def _case(algorithm: Algorithm, **changes) -> testing.ConformanceCase:
    case = testing.ConformanceCase(
        name="toy/counter",
        algorithm=algorithm,
        make_params=lambda mu: Params(jnp.asarray(mu, jnp.float32)),
        budgets=(0.5, 2.0),
        invalid_budgets=(float("nan"), -1.0),
        num_steps=4,
        scalar=lambda state, outputs: state ** 2,
        is_closed=lambda state, outputs: jnp.all(jnp.isnan(outputs)),
    )
    return dataclasses.replace(case, **changes)


def test_a_correct_algorithm_passes():
    testing.check_conformance(_case(GOOD))


def _leaky_step(params, state, inputs, key):
    # broken: an invalid (traced) budget releases the true value instead of failing closed
    ok = params.mu > 0
    noisy = gaussian_mechanism(key, jnp.float32(1.0), 1.0, jnp.where(ok, params.mu, 1.0))
    release = jnp.where(ok, noisy, jnp.float32(1.0))
    return state + release, release


def _growing_step(params, state, inputs, key):
    # broken: the state changes dtype after one step
    state, release = _step(params, state, inputs, key)
    return state.astype(jnp.int32), release


BROKEN = {
    "no validate hook": (Algorithm(_init, _step, privacy_event=_event), "no validate hook"),
    "validate accepts mu <= 0": (
        Algorithm(_init, _step, validate=lambda p, i: None, privacy_event=_event),
        "validate accepts the invalid budget"),
    "leaks when traced": (
        Algorithm(_init, _leaky_step, validate=_validate, privacy_event=_event),
        "did not fail closed"),
    "state changes dtype": (
        Algorithm(_init, _growing_step, validate=_validate, privacy_event=_event),
        "state leaf changes|state's structure"),
    "infinite epsilon": (
        Algorithm(_init, _step, validate=_validate,
                  privacy_event=lambda p: GaussianEvent(jnp.inf)),
        "gives epsilon"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_algorithm_fails(name):
    algorithm, message = BROKEN[name]
    with pytest.raises(AssertionError, match=message):
        testing.check_conformance(_case(algorithm))


def test_a_non_finite_gradient_is_caught():
    """The gradient check rides on the compiled sweep (``with_grad``) and still fails: a
    scalar with a NaN gradient (sqrt at 0) w.r.t. the budget."""
    case = _case(GOOD, scalar=lambda state, outputs: jnp.sqrt(0.0 * state))
    with pytest.raises(AssertionError, match="jax.grad w.r.t. the budget"):
        testing.check_conformance(case)
    with pytest.raises(AssertionError, match="jax.grad w.r.t. the budget"):
        testing.check_gradient(case)


def test_a_retrace_is_caught():
    """The compile-once check fails when the same compiled sweep has to trace again."""
    case = _case(GOOD)
    sweep = testing.compiled_sweep(case)
    testing.check_compiles_once(case, sweep)
    with pytest.raises(AssertionError):
        # a second compiled shape (3 seeds -> 2 seeds) retraces the counted function
        testing.check_compiles_once(case, sweep, num_seeds=2)
