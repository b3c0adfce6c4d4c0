"""The epsilon-greedy fast step and the Gittins policy are simulated with
``ExecutionHints(grid_major=True)`` (``bandits.epsilon_greedy_hints``, ``bandits.GITTINS_HINTS``):
on one device the engine runs them with the grid-major advance (params work once per grid point,
common-random-number words once per seed). Their records must equal the flat layout's bit for
bit -- at every chunk size, for every strategy, with drawn segments and two clocks -- or
chunked, resumed and multi-device sweeps would disagree
(``ldpjax.engine.ExecutionHints.grid_major``)."""

from __future__ import annotations

import importlib

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import bandits
from ldpjax.bandits.budgets import strategy_code
from ldpjax.engine import ExecutionHints, make_key, product_grid, record, simulate

rollout = importlib.import_module("ldpjax.engine.rollout")

HORIZON = 120
RECORD = record.combine(
    regret=record.total(lambda o: o.regret),
    arms=record.every_step(lambda o: o.arm),
    spend=record.total(lambda o: o.spend),
    explore=record.total(lambda o: o.explore_prob),
)


def _grid(config):
    env = bandits.make_environment(np.asarray([[0.324, 0.295, 0.2], [0.1, 0.3, 0.25]]),
                                   [0.4, 0.6])
    base = bandits.epsilon_greedy_params(env, "constant", 1.0)
    grid = product_grid(base, strategy=jnp.asarray([strategy_code(s) for s in
                                                    ("constant", "capped", "arm_specific")],
                                                   jnp.int32),
                        gamma=jnp.asarray([0.05, 1.0, 5.0]))
    # distinct per-arm budgets at every grid point (the arm-specific strategy reads them)
    arm_budgets = grid.arm_budgets * jnp.asarray([1.0, 0.5, 2.0])
    return jax.tree_util.tree_map(lambda x: x.reshape((9,) + x.shape[2:]),
                                  grid._replace(arm_budgets=arm_budgets))


def _both_layouts(algorithm, rec, params, num_points, horizon, key, sizes, hints,
                  crns=(True, False)):
    """For common random numbers on and off (``crns``) and each chunk size: the flat and the
    grid-major advance (both with ``hints``' unroll) from the same initial state, asserted
    equal bit for bit; yields (grid-major (state, acc), finalize)."""
    for crn in crns:
        for size in sizes:
            seeds = np.arange(5, 5 + size, dtype=np.uint32)
            param_idx = jnp.asarray(np.repeat(np.arange(num_points, dtype=np.int32), size))
            seed_idx = jnp.asarray(np.tile(seeds, num_points))
            init, flat, finalize = rollout.kernels(algorithm, rec, horizon, horizon, None, crn,
                                                   None, hints)
            _, grid, _ = rollout.kernels(algorithm, rec, horizon, horizon, None, crn, num_points,
                                         hints)
            state, acc = init(params, key, param_idx, seed_idx, None)
            args = (params, key, param_idx, seed_idx, state, acc, jnp.int32(0), None)
            by_flat, by_grid = flat(*args), grid(*args)
            chex.assert_trees_all_equal(by_flat, by_grid)
            yield by_grid, finalize


@pytest.mark.parametrize("clock, sizes, crns", [
    # a chunk of one seed too (degenerate axes fuse differently); common random numbers on
    # (the default), off in the slow case
    ("segment", (1, 4), (True,)),
    pytest.param("global", (1, 3, 8), (True, False), marks=pytest.mark.slow),
])
def test_grid_major_records_equal_the_flat_layout(clock, sizes, crns):
    config = bandits.PolicyConfig(num_segments=2, max_arms=3, clock=clock)
    algorithm = bandits.epsilon_greedy(config)
    hints = bandits.epsilon_greedy_hints(config)
    assert hints.grid_major
    params = _grid(config)
    for by_grid, finalize in _both_layouts(algorithm, RECORD, params, 9, HORIZON, make_key(3),
                                           sizes, hints, crns):
        assert np.asarray(finalize(by_grid[1])["arms"]).std() > 0  # not a constant run


@pytest.mark.slow  # the fast tier runs simulate with the unrolled hints (the test below)
def test_two_visitors_per_loop_trip_give_the_same_records():
    """The fast step runs with ``scan_unroll=2`` (two visitors per trip of the scan's loop, for
    speed): its records equal one visitor per trip's bit for bit, with an odd horizon and an odd
    time chunk (a half-filled last trip)."""
    config = bandits.PolicyConfig(num_segments=2, max_arms=3, clock="segment")
    algorithm = bandits.epsilon_greedy(config)
    hints = bandits.epsilon_greedy_hints(config)
    assert hints.scan_unroll == 2
    params = _grid(config)
    kw = dict(num_seeds=3, grid_ndim=1, record=RECORD)
    fast = simulate(algorithm, params, make_key(7), 61, time_chunk=23, hints=hints, **kw)
    plain = simulate(algorithm, params, make_key(7), 61,
                     hints=ExecutionHints(grid_major=True), **kw)
    chex.assert_trees_all_equal(fast.record, plain.record)
    assert np.asarray(plain.record["arms"]).std() > 0  # not a constant run


def test_simulate_runs_it_grid_major_and_chunking_does_not_change_it():
    config = bandits.PolicyConfig(num_segments=2, max_arms=3, clock="segment")
    algorithm = bandits.epsilon_greedy(config)
    hints = bandits.epsilon_greedy_hints(config)
    params = _grid(config)
    # the shapes of the test above (chunks of 4 seeds and of 1): its kernels are reused
    kw = dict(num_seeds=4, grid_ndim=1, record=RECORD, hints=hints)
    whole = simulate(algorithm, params, make_key(4), HORIZON, **kw)
    chunked = simulate(algorithm, params, make_key(4), HORIZON, seed_chunk=1, **kw)
    chex.assert_trees_all_equal(whole.record, chunked.record)
    assert not np.array_equal(whole.record["arms"][:, 0], whole.record["arms"][:, 1])
    engine = importlib.import_module("ldpjax.engine.simulate")
    # the sweep above compiled the grid-major advance of its 9 points
    grid_advance = rollout.kernels(algorithm, RECORD, HORIZON, HORIZON, None, True, 9, hints)[1]
    assert grid_advance._cache_size()
    assert engine.kernels is rollout.kernels
    with pytest.raises(ValueError, match="grid_points"):
        rollout.kernels(algorithm, RECORD, HORIZON, HORIZON, object(), True, 9, hints)


@pytest.mark.slow  # the fast tier checks the layouts on epsilon-greedy (the first test)
def test_gittins_grid_major_records_equal_the_flat_layout():
    # two segments, three arms, a table of 20 observations per arm over 400 visitors: the
    # lookup and the extrapolation beyond the table both run; four discounts (grid points)
    from ldpjax.bandits.gittins import GittinsConfig, gittins_params, gittins_policy

    env = bandits.make_environment(np.asarray([[0.324, 0.295, 0.2], [0.1, 0.3, 0.25]]),
                                   [0.4, 0.6])
    config = GittinsConfig(bandits.PolicyConfig(2, 3), max_count=20, max_discount=0.99,
                           num_prices=64)
    algorithm = gittins_policy(config)
    assert bandits.GITTINS_HINTS.grid_major
    grid = jax.vmap(lambda d: gittins_params(env, config, d))(jnp.asarray([0.8, 0.9, 0.95, 0.99]))
    rec = record.combine(regret=record.total(lambda o: o.regret),
                         arms=record.every_step(lambda o: o.arm))
    for by_grid, finalize in _both_layouts(algorithm, rec, grid, 4, 400, make_key(3), (1, 4),
                                           bandits.GITTINS_HINTS):
        assert np.asarray(finalize(by_grid[1])["arms"]).std() > 0
        # the runs reach beyond the table (20 per arm): the extrapolation is exercised
        assert int(np.asarray(by_grid[0].shows).max()) > 20
