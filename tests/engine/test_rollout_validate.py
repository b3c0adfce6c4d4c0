"""``rollout`` runs the algorithm's ``validate`` hook on concrete params, as ``simulate`` does."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import pytest

from ldpjax import validation
from ldpjax.accounting import GaussianEvent
from ldpjax.demo.noisy_counter import CounterParams, noisy_counter
from ldpjax.engine import Algorithm, make_key, rollout, simulate
from ldpjax.frequency.online import OnlineFrequencyConfig, frequency_params, online_frequency
from ldpjax.mechanisms import gaussian_mechanism


class _Params(NamedTuple):
    mu: jax.Array


def _capped_mean() -> Algorithm:
    """A user's algorithm whose own range for mu is (0, 3] (narrower than the mechanism's)."""

    def init(params, key):
        return jnp.zeros((), jnp.float32)

    def step(params, state, x, key):
        return state + gaussian_mechanism(key, x, 1.0, params.mu, domain=(0.0, 1.0)), state

    def validate(params, inputs):
        validation.check_range("params.mu", params.mu, 0.0, 3.0, low_open=True)

    return Algorithm(init, step, validate=validate,
                     privacy_event=lambda params: GaussianEvent(params.mu))


def test_rollout_refuses_a_concrete_invalid_budget_with_the_parameters_message():
    params = CounterParams(jnp.float32(-1.0), jnp.float32(0.5))
    with pytest.raises(ValueError, match=r"params\.mu must be in \(0, inf\]; got -1"):
        rollout(noisy_counter(), params, make_key(0), 4)
    config = OnlineFrequencyConfig(max_items=8, oracle="oue", users=10)
    bad = frequency_params(config, 1.0)._replace(eps=jnp.float32(-1.0))
    with pytest.raises(ValueError, match=r"params\.eps"):
        rollout(online_frequency(config), bad, make_key(0), 2)


def test_rollout_refuses_a_budget_outside_the_algorithms_own_range():
    algorithm, x = _capped_mean(), jnp.full((4,), 0.5)
    for run in (lambda p: rollout(algorithm, p, make_key(0), inputs=x),
                lambda p: simulate(algorithm, p, make_key(0), inputs=x)):
        with pytest.raises(ValueError, match=r"params\.mu must be in \(0, 3\]; got 5"):
            run(_Params(jnp.float32(5.0)))  # a valid Gaussian budget, outside the user's range
    _, last = rollout(algorithm, _Params(jnp.float32(2.0)), make_key(0), inputs=x)
    assert bool(jnp.isfinite(last))


def test_traced_params_are_left_to_the_mechanisms():
    """Under jit the hook cannot read the budget: the release fails closed (NaN) instead."""
    run = jax.jit(lambda mu: rollout(noisy_counter(), CounterParams(mu, jnp.float32(0.5)),
                                     make_key(0), 4)[1].error)
    assert bool(jnp.isnan(run(jnp.float32(-1.0))))
    assert bool(jnp.isfinite(run(jnp.float32(1.0))))
