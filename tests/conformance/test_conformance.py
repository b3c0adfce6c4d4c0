"""One conformance test over every algorithm of ldpjax (optax's ``_common_test.py``, blackjax's
``test_api_protocols.py``).

For each registered :class:`~tests.conformance.case.ConformanceCase` (``cases_*.py``):

* the contract: ``Algorithm(init, step, validate, privacy_event)``, with ``validate`` and (for a
  private algorithm) a ``privacy_event`` whose accountant returns a finite epsilon;
* ``jit`` + ``vmap`` over seeds x budgets of a plain ``lax.scan`` driver written here (not the
  engine), compiled once: ``chex.assert_max_traces(n=1)`` across two different budget sweeps;
* state structure, shapes and dtypes stable through the scan (``init`` vs ``step``);
* a finite ``jax.grad`` of a scalar output w.r.t. the budget where differentiable;
* fail closed: concrete invalid budgets and out-of-domain inputs raise ``ValueError`` from
  ``validate``; the same budgets *traced* make the run fail closed (``is_closed``).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.engine import Algorithm
from ldpjax.mechanisms import events as ev
from tests.conformance.case import ConformanceCase, all_cases

CASES = all_cases()
IDS = [c.name for c in CASES]
NUM_SEEDS = 3


def _run(case: ConformanceCase, budget, key):
    """One run: ``init`` then ``lax.scan`` of ``step`` with per-step keys fold_in(run_key, t)."""
    params = case.make_params(budget)
    init_key, run_key = jax.random.split(key)
    state = case.algorithm.init(params, init_key)
    inputs = (
        None if case.inputs is None
        else jax.tree_util.tree_map(lambda x: x[: case.num_steps], case.inputs)
    )

    def body(state, scanned):
        t, inputs_t = scanned
        return case.algorithm.step(params, state, inputs_t, jax.random.fold_in(run_key, t))

    times = jnp.arange(case.num_steps, dtype=jnp.int32)
    return jax.lax.scan(body, state, (times, inputs), length=case.num_steps)


def _sweep_fn(case: ConformanceCase):
    """``(budgets (B,), keys (S,)) -> (states, outputs)`` of shape (B, S, ...)."""
    per_seed = jax.vmap(lambda b, k: _run(case, b, k), in_axes=(None, 0))
    return jax.vmap(per_seed, in_axes=(0, None))


def _counted_sweep(case: ConformanceCase):
    """A plain Python sweep function (chex needs an untransformed function), traced at most once."""

    def sweep(budgets, keys):
        return _sweep_fn(case)(budgets, keys)

    sweep.__name__ = f"sweep_{case.name.replace('/', '_')}"
    return chex.assert_max_traces(sweep, n=1)


def test_registry_covers_every_family():
    names = {c.name.split("/")[0] for c in CASES}
    assert {"experts", "quantile", "bandits", "demo"} <= names, names
    assert len(IDS) == len(set(IDS))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_algorithm_conforms(case: ConformanceCase):
    """Contract, validation, one compiled sweep for valid and invalid budgets, gradient."""
    # -- the contract and the privacy claim
    assert isinstance(case.algorithm, Algorithm)
    assert callable(case.algorithm.init) and callable(case.algorithm.step)
    assert callable(case.algorithm.validate), f"{case.name} has no validate hook"
    case.algorithm.validate(case.make_params(case.budgets[0]), case.inputs)
    if case.algorithm.privacy_event is not None:
        event = case.algorithm.privacy_event(case.make_params(case.budgets[0]))
        eps = float(np.max(np.asarray(ev.epsilon(event, 1e-6))))
        if isinstance(event, ev.NoPrivacyEvent):  # a documented non-private baseline
            assert eps == np.inf
        else:
            assert np.isfinite(eps) and eps >= 0, (case.name, event, eps)

    # -- fail closed, concrete: validate names the problem
    for bad in case.invalid_budgets:
        with pytest.raises(ValueError):
            case.algorithm.validate(case.make_params(bad), case.inputs)
    if case.bad_inputs is not None:
        with pytest.raises(ValueError):
            case.algorithm.validate(case.make_params(case.budgets[0]), case.bad_inputs)

    # -- jit + vmap over seeds x budgets, compiled once for every sweep below
    sweep = jax.jit(_counted_sweep(case))
    keys = jax.random.split(jax.random.key(0), NUM_SEEDS)
    b0, b1 = case.budgets
    valid_runs = [
        sweep(jnp.asarray([b0, b1], jnp.float32), keys),
        sweep(jnp.asarray([b1, 0.5 * (b0 + b1)], jnp.float32), keys),
    ]
    for states, outputs in valid_runs:
        for leaf in jax.tree_util.tree_leaves(outputs):
            assert leaf.shape[:3] == (2, NUM_SEEDS, case.num_steps)
        for leaf in jax.tree_util.tree_leaves(states):
            assert leaf.shape[:2] == (2, NUM_SEEDS)
        scalar = jax.vmap(jax.vmap(case.scalar))(states, outputs)
        assert np.all(np.isfinite(np.asarray(scalar))), case.name

    # -- fail closed, traced: the same compiled sweep with invalid budgets (pairs)
    bad = list(case.invalid_budgets)
    for start in range(0, len(bad), 2):
        pair = (bad[start:start + 2] + bad[:1])[:2]
        states, outputs = sweep(jnp.asarray(pair, jnp.float32), keys)
        closed = jax.vmap(jax.vmap(case.is_closed))(states, outputs)
        assert np.all(np.asarray(closed)), (case.name, pair, np.asarray(closed))

    # -- state structure, shapes and dtypes: the same after one step as after init
    params = case.make_params(jnp.float32(b0))
    state0 = jax.eval_shape(case.algorithm.init, params, jax.random.key(1))
    inputs0 = None if case.inputs is None else jax.tree_util.tree_map(lambda x: x[0], case.inputs)
    state1, _ = jax.eval_shape(case.algorithm.step, params, state0, inputs0, jax.random.key(2))
    assert jax.tree_util.tree_structure(state0) == jax.tree_util.tree_structure(state1)
    for a, b in zip(jax.tree_util.tree_leaves(state0), jax.tree_util.tree_leaves(state1), strict=True):
        assert (a.shape, a.dtype) == (b.shape, b.dtype), case.name

    # -- a finite gradient of a scalar output w.r.t. the budget
    if case.differentiable:
        key = jax.random.key(3)

        def objective(budget):
            state, outputs = _run(case, budget, key)
            return case.scalar(state, outputs)

        grad = jax.jit(jax.grad(objective))(jnp.float32(b0))
        assert np.isfinite(float(grad)), case.name


@chex.assert_max_traces(n=1)
def _budget_as_python_float(budget_value: float, keys):
    case = next(c for c in CASES if c.name == "demo/noisy_counter")
    return jax.vmap(lambda k: _run(case, budget_value, k))(keys)


def test_forced_retrace_is_detected():
    """The compile-once check can fail: a budget passed as a static Python float retraces."""
    keys = jax.random.split(jax.random.key(0), 2)
    jitted = jax.jit(_budget_as_python_float, static_argnums=0)
    jitted(1.0, keys)
    with pytest.raises(AssertionError, match="traced > 1 times"):
        jitted(2.0, keys)
