"""The no-noise view of the event protocol (``grants_no_privacy``) and how the engine reads it.

The engine honours a no-noise budget (r = 1, mu = inf, ...) only where the concrete params hold
an inf or the algorithm's event, asked through the view, grants no privacy; it never compares
class names, so a third party's event is read the same way, and an event without the view
grants nothing (the mechanisms then fail closed: NaN)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ldpjax.accounting as acc
from ldpjax import mechanisms as M
from ldpjax.accounting import protocol as p
from ldpjax.engine import Algorithm, make_key, rollout, simulate


@pytest.mark.parametrize("event, expected", [
    (acc.NoPrivacyEvent(), True),
    (acc.RandomizedResponseEvent(1.0), True),
    (acc.RandomizedResponseEvent(0.5), False),
    (acc.RandomizedResponseEvent(np.float64(1.0) - 2.0**-40), False),  # finite eps ~ 28.4
    (acc.GaussianEvent(np.inf), True),
    (acc.GaussianEvent(1e39), False),  # finite in float64 (float32 would round it to inf)
    (acc.KaryRandomizedResponseEvent(np.inf, 4), True),
    (acc.KaryRandomizedResponseEvent(3.0, 4), False),
    (acc.LaplaceEvent(np.inf), True),
    (acc.PureDpEvent(2.0), False),
    (acc.DiscreteGaussianEvent(0.0, 3), True),
    (acc.DiscreteGaussianEvent(2.0, 3), False),
    (acc.GaussianEvent(np.array([1.0, np.inf])), True),  # a grid: one point without noise
    # compositions: one part without privacy reveals the record (the claim is eps = inf)
    (acc.ComposedEvent((acc.GaussianEvent(1.0), acc.RandomizedResponseEvent(0.5))), False),
    (acc.ComposedEvent((acc.NoPrivacyEvent(), acc.GaussianEvent(1.0))), True),
    (acc.ComposedEvent((acc.GaussianEvent(1.0), acc.RandomizedResponseEvent(1.0))), True),
    (acc.SelfComposedEvent(acc.RandomizedResponseEvent(1.0), 3), True),
    (acc.SelfComposedEvent(acc.RandomizedResponseEvent(0.9), 3), False),
    (acc.ParallelEvent((acc.RandomizedResponseEvent(1.0), acc.RandomizedResponseEvent(0.5))), True),
    (acc.ParallelEvent((acc.RandomizedResponseEvent(0.9), acc.RandomizedResponseEvent(0.5))), False),
])
def test_the_view_of_the_built_in_events(event, expected):
    assert p.grants_no_privacy(event) is expected


class Switch(NamedTuple):
    """A third party's event: no privacy at ``on >= 1`` (its own rule, not a class name)."""

    on: jax.Array

    def pure_eps(self, dtype):
        return jnp.where(jnp.asarray(self.on) >= 1, jnp.inf, 1.0).astype(dtype)

    def grants_no_privacy(self):
        return p.concrete_any(lambda x: x >= 1, self.on)


class Opaque(NamedTuple):
    """The same event without the no-noise view."""

    on: jax.Array

    def pure_eps(self, dtype):
        return Switch(self.on).pure_eps(dtype)


def _release_algorithm(event_of):
    """One Gaussian release of the value 1 per step, mu = inf where ``params >= 1``."""

    def step(params, state, inputs, key):
        mu = jnp.where(params >= 1, jnp.inf, 1.0)
        return state, M.gaussian_mechanism(key, jnp.float32(1.0), 1.0, mu)

    return Algorithm(lambda params, key: jnp.zeros(()), step, lambda params, inputs: None,
                     event_of)


def test_the_engine_reads_a_third_party_view_and_nothing_else():
    on = jnp.float32(1.0)
    granted = _release_algorithm(Switch)
    assert p.grants_no_privacy(Switch(on)) and not p.grants_no_privacy(Opaque(on))
    out = simulate(granted, on, make_key(0), 2, num_seeds=2).record
    np.testing.assert_array_equal(out, 1.0)  # no noise: the view granted it
    _, last = rollout(granted, on, make_key(0), 2)
    assert float(last) == 1.0
    # without the view the same traced inf budget fails closed
    out = simulate(_release_algorithm(Opaque), on, make_key(0), 2, num_seeds=2).record
    assert np.all(np.isnan(out))
    # and a finite budget keeps its noise under a granting event
    noisy = simulate(granted, jnp.float32(0.0), make_key(0), 2, num_seeds=2).record
    assert np.all(np.isfinite(noisy)) and np.all(noisy != 1.0)


def test_traced_events_grant_nothing():
    seen = []

    @jax.jit
    def probe(r):
        seen.append(p.grants_no_privacy(acc.RandomizedResponseEvent(r)))
        return r

    probe(jnp.float32(1.0))
    assert seen == [False]


def test_an_event_that_cannot_be_built_raises_its_own_error():
    def broken(params):
        raise ValueError("broken_event: cannot describe these params")

    algorithm = _release_algorithm(broken)
    with pytest.raises(ValueError, match="broken_event"):
        simulate(algorithm, jnp.float32(0.5), make_key(0), 2)
