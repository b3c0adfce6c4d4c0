"""Without a ``validate`` hook, ``simulate`` checks the algorithm's privacy event (fails closed)."""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import pytest

from ldpjax.accounting import GaussianEvent
from ldpjax.engine import Algorithm, make_key, simulate
from ldpjax.engine.checks import event_validator


class _Params(NamedTuple):
    mu: jnp.ndarray


class _State(NamedTuple):
    total: jnp.ndarray


def _init(params, key):
    del params, key
    return _State(jnp.zeros(()))


def _step(params, state, inputs, key):
    del params, inputs, key
    total = state.total + 1.0
    return _State(total), total


def _event(params):
    return GaussianEvent(params.mu)


class _ThirdPartyEvent(NamedTuple):
    eps: jnp.ndarray


NO_HOOK = Algorithm(_init, _step, privacy_event=_event)


def test_a_bad_budget_fails_closed_and_names_the_grid_point():
    params = _Params(jnp.asarray([1.0, -1.0, 2.0]))
    with pytest.raises(ValueError, match=r"mu .*grid point \(1,\) of grid shape \(3,\)"):
        simulate(NO_HOOK, params, make_key(0), 2, grid_ndim=1)


def test_a_single_bad_point_fails_closed():
    with pytest.raises(ValueError, match="mu"):
        simulate(NO_HOOK, _Params(jnp.asarray(-1.0)), make_key(0), 2)


def test_valid_budgets_run():
    res = simulate(NO_HOOK, _Params(jnp.asarray([0.5, 1.0])), make_key(0), 3, grid_ndim=1)
    assert res.record.shape == (2, 1) and float(res.record[0, 0]) == 3.0


def test_a_validate_hook_takes_precedence():
    calls = []
    algo = NO_HOOK._replace(validate=lambda params, inputs: calls.append(params))
    simulate(algo, _Params(jnp.asarray(-1.0)), make_key(0), 1)  # the hook accepts it
    assert len(calls) == 1


def test_unknown_events_and_no_event_do_not_stop_the_run():
    third = Algorithm(_init, _step, privacy_event=lambda p: _ThirdPartyEvent(p.mu))
    simulate(third, _Params(jnp.asarray(1.0)), make_key(0), 1)
    assert event_validator(Algorithm(_init, _step)) is None
