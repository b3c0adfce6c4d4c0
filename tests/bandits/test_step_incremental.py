"""The fast epsilon-greedy step against its from-scratch definitions.

The step keeps only counts in its state (shows, clicks, visits, the clock), updated by one
visitor at a time, and reads Q, the exploration schedule and the spend from them. Over a rollout
(float32 and float64) the carried counts must equal the counts rebuilt from the per-step
outputs, every greedy arm must be a maximiser of Q rebuilt from the previous visitors, and the
exploration probability and spend must equal the closed form of ``budgets.exploration`` at the
visitor's clock, the spend never above gamma (privacy fails closed). The helpers the step uses
for speed (arm-axis reductions unrolled for few arms, the words read through a reduction,
category 0 handed to the mechanism, one row of Q) are checked against their plain definitions
on exact (integer) outputs. All checks are equalities: no tolerance.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import bandits
from ldpjax.bandits import budgets as budgets_lib
from ldpjax.bandits.environment import (
    UNROLL_ARMS,
    arm_mask,
    count_true,
    inverse_cdf,
    pick_tied_max,
)
from ldpjax.bandits.epsilon_greedy import arm_ctr, computed_once, release_arm, segment_ctr
from ldpjax.bandits.state import BanditState, estimated_ctr
from ldpjax.engine import make_key, product_grid, record, simulate
from ldpjax.mechanisms import kary_randomized_response_from_bits

T = 120
SEEDS = 3
CTR = [[0.5, 0.3, 0.1, 0.0], [0.1, 0.2, 0.6, 0.0]]  # K = 3 arms of 4 columns (one padding)
GAMMA = 1.5


STRATEGIES = (budgets_lib.CONSTANT, budgets_lib.CAPPED, budgets_lib.ARM_SPECIFIC)


def _rollout():
    """One compiled sweep: the three budgeted strategies x SEEDS runs of T visitors."""
    env = bandits.make_environment(CTR, segment_probs=[0.6, 0.4], num_arms=3)
    config = bandits.PolicyConfig(num_segments=2, max_arms=4, clock="segment")
    base = bandits.epsilon_greedy_params(env, "dynamic", GAMMA)
    params = product_grid(base, strategy=jnp.asarray(STRATEGIES, jnp.int32))
    out = simulate(bandits.epsilon_greedy(config), params, make_key(5), T, num_seeds=SEEDS,
                   grid_ndim=1, record=record.every_step())
    return params, out


@jax.jit
def _schedule(params, clock):
    """budgets.exploration at every clock (the closed form), for one grid point."""
    mask = arm_mask(params.num_arms, 4)
    return jax.vmap(lambda c: budgets_lib.exploration(
        params.strategy, params.gamma, params.arm_budgets, c, params.num_arms, mask,
        params.num_arms))(clock)


def _prefix_counts(segment, arm, click):
    """Counts before each visitor, rebuilt from the outputs: (T + 1, J, K) shows and clicks."""
    shows = np.zeros((T + 1, 2, 4), np.int64)
    clicks = np.zeros((T + 1, 2, 4), np.int64)
    for t in range(T):
        shows[t + 1], clicks[t + 1] = shows[t], clicks[t]
        shows[t + 1, segment[t], arm[t]] += 1
        clicks[t + 1, segment[t], arm[t]] += click[t]
    return shows, clicks


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_carried_counts_equal_outputs_over_a_rollout(precision):
    with jax.enable_x64(precision == "float64"):
        params, out = _rollout()
        dtype = np.dtype(params.ctr.dtype)
        assert dtype == np.dtype(precision)
        rec = jax.tree_util.tree_map(np.asarray, out.record)
        state = jax.tree_util.tree_map(np.asarray, out.state)
        for g, s in itertools.product(range(len(STRATEGIES)), range(SEEDS)):
            segment, arm, click = rec.segment[g, s], rec.arm[g, s], rec.click[g, s]
            shows, clicks = _prefix_counts(segment, arm, click)
            assert np.array_equal(state.shows[g, s], shows[-1])
            assert np.array_equal(state.clicks[g, s], clicks[-1])
            assert np.array_equal(state.visits[g, s], np.bincount(segment, minlength=2))
            assert state.t[g, s] == T
            # the greedy arm maximises Q (from scratch, the state's dtype) over the real arms
            q = (clicks[:-1] / np.maximum(shows[:-1], 1)).astype(dtype)
            q_seg = np.where(np.arange(4) < 3, q[np.arange(T), segment], -np.inf)
            greedy = rec.greedy_arm[g, s]
            assert np.all(greedy < 3)
            assert np.array_equal(q_seg[np.arange(T), greedy], q_seg.max(-1))
            # the segment clock from scratch, and the closed-form schedule at that clock
            clock = np.array([np.sum(segment[:t] == segment[t]) + 1 for t in range(T)])
            point = jax.tree_util.tree_map(lambda x: x[g], params)
            eps, _, spend = _schedule(point, jnp.asarray(clock, jnp.int32))
            assert np.array_equal(rec.explore_prob[g, s], np.asarray(eps))
            assert np.array_equal(rec.spend[g, s], np.asarray(spend))
            assert np.all(rec.spend[g, s] <= GAMMA)  # never above the budget


def _tied_values(key, shape, levels=3):
    """Values on a few levels, so that ties are common."""
    return jax.random.randint(key, shape, 0, levels).astype(jnp.float32) / levels


def _pick_reference(values, mask, uniform):
    """The floor(m u)-th (capped at m - 1) of the m tied maxima over the masked entries."""
    values = np.where(mask, values, -np.inf)
    out = []
    for row, m_row, u in zip(values, np.broadcast_to(mask, values.shape), uniform):
        tied = np.flatnonzero(m_row & (row == row.max()))
        out.append(tied[min(int(np.floor(u * len(tied))), len(tied) - 1)])
    return np.asarray(out)


@pytest.mark.parametrize("arms", [2, 5, UNROLL_ARMS, UNROLL_ARMS + 3])
def test_pick_tied_max_equals_definition(arms):
    keys = jax.random.split(make_key(11), 3)
    values = _tied_values(keys[0], (500, arms))
    mask = jnp.arange(arms) < jnp.where(jax.random.uniform(keys[1], (500, 1)) < 0.5, arms, 2)
    uniform = jax.random.uniform(keys[2], (500,))
    uniform = uniform.at[:3].set(jnp.asarray([0.0, 0.5, 1.0 - 2.0**-24]))
    got = np.asarray(jax.jit(pick_tied_max)(values, mask, uniform))
    assert np.array_equal(got, _pick_reference(np.asarray(values), np.asarray(mask),
                                               np.asarray(uniform)))
    flags = np.asarray(values) > 0.4
    assert np.array_equal(np.asarray(jax.jit(count_true)(flags)), flags.sum(-1))


def test_computed_once_is_the_identity_on_words():
    words = jax.random.bits(make_key(3), (64, 4), jnp.uint32)
    words = words.at[0].set(jnp.asarray([0, 1, 2**31, 2**32 - 1], jnp.uint32))
    once = jax.jit(jax.vmap(computed_once))(words)
    assert once.dtype == jnp.uint32 and np.array_equal(np.asarray(once), np.asarray(words))


def test_segment_row_and_arm_rate_equal_full_lookups():
    key = make_key(4)
    shows = jax.random.randint(key, (3, 4), 0, 5)
    state = BanditState(shows, shows // 2, jnp.zeros(3, jnp.int32), jnp.zeros((), jnp.int32))
    for s in range(3):
        assert np.array_equal(np.asarray(segment_ctr(state, jnp.int32(s))),
                              np.asarray(estimated_ctr(state)[s]))
    rates = jnp.asarray([0.1, 0.2, 0.3, 0.4])
    for arm in range(-1, 4):  # -1, an invalid release, reads the last entry as indexing does
        assert float(arm_ctr(rates, jnp.int32(arm))) == float(rates[arm])


@pytest.mark.parametrize("strategy", [budgets_lib.CONSTANT, budgets_lib.ARM_SPECIFIC])
def test_release_with_category_zero_equals_release_of_the_greedy_arm(strategy):
    """The mechanism's report is used on the exploring branch only, so handing it category 0
    gives the arm that K-RR of the true greedy arm gives (same words)."""
    n, k = 2000, 3
    keys = jax.random.split(make_key(8), 3)
    words = jax.random.bits(keys[0], (n, 2), jnp.uint32)
    values = _tied_values(keys[1], (n, 4))
    mask = jnp.arange(4) < k
    eps = jax.random.uniform(keys[2], (n,), minval=0.05, maxval=1.0)
    weights = jnp.where(mask, jnp.asarray([0.5, 0.3, 0.2, 0.0]), 0.0)
    arm, greedy = jax.jit(jax.vmap(lambda w, v, e: release_arm(
        w, v, mask, e, weights, strategy, k, jnp.float32)))(words, values, eps)

    def with_true_category(w, v, e):
        _, _, spare = kary_randomized_response_from_bits(w, 0, e, k)
        truth = pick_tied_max(v, mask, spare)
        report, explored, spare = kary_randomized_response_from_bits(w, truth, e, k)
        if strategy == budgets_lib.ARM_SPECIFIC:  # the weights' inverse CDF at u / eps
            report = jnp.where(explored, inverse_cdf(weights, (report + spare) / k), report)
        return report, truth

    ref_arm, ref_greedy = jax.jit(jax.vmap(with_true_category))(words, values, eps)
    assert np.array_equal(np.asarray(greedy), np.asarray(ref_greedy))
    assert np.array_equal(np.asarray(arm), np.asarray(ref_arm))
    explored = np.asarray(arm) != np.asarray(greedy)
    assert 0 < explored.mean() < 1  # both branches are exercised
