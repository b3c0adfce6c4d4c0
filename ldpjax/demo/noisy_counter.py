"""Noisy counter: the smallest algorithm that exercises the whole engine.

Each step a user contributes one bit x_t ~ Bernoulli(p) and releases it through the Gaussian
mechanism with sensitivity 1 (``ldpjax.mechanisms.gaussian_mechanism``): x~_t = x_t + N(0, 1/mu^2),
mu-GDP per release. The server keeps the running sum of the noisy releases; its error after T
steps is N(0, T / mu^2) around the true count, so the root mean squared error is sqrt(T) / mu.
Outputs per step: the error of the running count.

Privacy: each bit is one record released once, so a run is mu-GDP per record
(:class:`~ldpjax.accounting.events.GaussianEvent`). The default float release is for simulation;
pass ``granularity`` (a power of two) to :func:`noisy_counter` for the float-safe granular path.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting import GaussianEvent
from ldpjax.engine import Algorithm
from ldpjax.mechanisms import gaussian_mechanism


class CounterParams(NamedTuple):
    mu: jax.Array  # GDP parameter of each release
    rate: jax.Array  # probability that a user's bit is 1


class CounterState(NamedTuple):
    noisy_count: jax.Array
    true_count: jax.Array


class CounterOutputs(NamedTuple):
    error: jax.Array
    squared_error: jax.Array


def counter_params(mu, rate=0.5) -> CounterParams:
    """Validated parameters (mu in (0, inf], rate in [0, 1])."""
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("rate", rate, 0.0, 1.0)
    return CounterParams(jnp.asarray(mu, float), jnp.asarray(rate, float))


def validate_counter_params(params: CounterParams, inputs=None) -> None:
    """Concrete checks on a (possibly stacked) params grid: mu in (0, inf], rate in [0, 1]."""
    v.check_range("params.mu", params.mu, 0.0, jnp.inf, low_open=True)
    v.check_range("params.rate", params.rate, 0.0, 1.0)


def counter_event(params: CounterParams) -> GaussianEvent:
    """Per-record claim: one mu-GDP release of the record's bit."""
    return GaussianEvent(params.mu)


@functools.cache
def noisy_counter(granularity: float | None = None) -> Algorithm:
    """The counter as an engine algorithm (cached: one object, one compilation).

    Example:
      >>> import jax
      >>> from ldpjax.engine import rollout
      >>> from ldpjax.demo import counter_params, noisy_counter
      >>> _, rec = rollout(noisy_counter(), counter_params(1.0), jax.random.key(0), 8)
      >>> rec.error.shape
      ()
    """

    def init(params: CounterParams, key) -> CounterState:
        zero = jnp.zeros((), jnp.result_type(params.mu))
        return CounterState(zero, zero)

    def step(params: CounterParams, state: CounterState, inputs, key):
        bit_key, noise_key = jax.random.split(key)
        # data sampling: the user's bit (not privacy noise)
        bit = jax.random.bernoulli(bit_key, params.rate).astype(state.true_count.dtype)
        release = gaussian_mechanism(
            noise_key, bit, 1.0, params.mu, domain=(0.0, 1.0), granularity=granularity
        )
        state = CounterState(state.noisy_count + release, state.true_count + bit)
        error = state.noisy_count - state.true_count
        return state, CounterOutputs(error, error * error)

    return Algorithm(init, step, validate_counter_params, counter_event)
