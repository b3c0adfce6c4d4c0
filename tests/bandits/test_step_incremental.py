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
    pick_tied_max,
)
from ldpjax.bandits.epsilon_greedy import arm_ctr, computed_once, release_arm, segment_ctr
from ldpjax.bandits.state import BanditState, estimated_ctr
from ldpjax.engine import make_key, product_grid, record, simulate
from ldpjax.mechanisms.kary import weighted_randomized_response_from_bits

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
                   grid_ndim=1, record=record.every_step(),
                   hints=bandits.epsilon_greedy_hints(config))
    return params, out


def _schedule_point(params, clock):
    """budgets.exploration at every clock (the closed form), for one grid point."""
    mask = arm_mask(params.num_arms, 4)
    return jax.vmap(lambda c: budgets_lib.exploration(
        params.strategy, params.gamma, params.arm_budgets, c, params.num_arms, mask,
        params.num_arms))(clock)


# every grid point (params' leading axis) x seed in one compiled call: clock is (G, S, T)
_schedule = jax.jit(jax.vmap(jax.vmap(_schedule_point, in_axes=(None, 0)), in_axes=(0, 0)))


def _prefix_counts(segment, arm, click):
    """Counts before each visitor, rebuilt from the outputs: (T + 1, J, K) shows and clicks."""
    shows = np.zeros((T + 1, 2, 4), np.int64)
    clicks = np.zeros((T + 1, 2, 4), np.int64)
    for t in range(T):
        shows[t + 1], clicks[t + 1] = shows[t], clicks[t]
        shows[t + 1, segment[t], arm[t]] += 1
        clicks[t + 1, segment[t], arm[t]] += click[t]
    return shows, clicks


@pytest.mark.parametrize("precision", ["float32", pytest.param("float64", marks=pytest.mark.slow)])
def test_carried_counts_equal_outputs_over_a_rollout(precision):
    with jax.enable_x64(precision == "float64"):
        params, out = _rollout()
        dtype = np.dtype(params.ctr.dtype)
        assert dtype == np.dtype(precision)
        rec = jax.tree_util.tree_map(np.asarray, out.record)
        state = jax.tree_util.tree_map(np.asarray, out.state)
        # the segment clock from scratch (before each visitor: its segment's visits + 1), and
        # the closed-form schedule at that clock, for every (grid point, seed) at once
        clocks = np.zeros(rec.segment.shape, np.int32)
        for g, s in itertools.product(range(len(STRATEGIES)), range(SEEDS)):
            segment = rec.segment[g, s]
            clocks[g, s] = [np.sum(segment[:t] == segment[t]) + 1 for t in range(T)]
        eps_all, _, spend_all = (np.asarray(x) for x in _schedule(params, clocks))
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
            # the closed-form schedule at the visitor's segment clock (computed above)
            assert np.array_equal(rec.explore_prob[g, s], eps_all[g, s])
            assert np.array_equal(rec.spend[g, s], spend_all[g, s])
            assert np.all(rec.spend[g, s] <= GAMMA)  # never above the budget


def _tied_values(rng, shape, levels=3):
    """Values on a few levels, so that ties are common (numpy: no eager JAX kernels)."""
    return (rng.integers(0, levels, shape) / levels).astype(np.float32)


def _pick_reference(values, mask, uniform):
    """The floor(m u)-th (capped at m - 1) of the m tied maxima over the masked entries."""
    values = np.where(mask, values, -np.inf)
    out = []
    for row, m_row, u in zip(values, np.broadcast_to(mask, values.shape), uniform, strict=True):
        tied = np.flatnonzero(m_row & (row == row.max()))
        out.append(tied[min(int(np.floor(u * len(tied))), len(tied) - 1)])
    return np.asarray(out)


@pytest.mark.parametrize("arms", [2, 5, UNROLL_ARMS, UNROLL_ARMS + 3])
def test_pick_tied_max_equals_definition(arms):
    rng = np.random.default_rng(11)
    values = _tied_values(rng, (500, arms))
    mask = np.arange(arms) < np.where(rng.random((500, 1)) < 0.5, arms, 2)
    uniform = rng.random(500, dtype=np.float32)
    uniform[:3] = [0.0, 0.5, 1.0 - 2.0**-24]
    got = np.asarray(jax.jit(pick_tied_max)(values, mask, uniform))
    assert np.array_equal(got, _pick_reference(values, mask, uniform))
    flags = values > 0.4
    assert np.array_equal(np.asarray(jax.jit(count_true)(flags)), flags.sum(-1))


def test_computed_once_is_the_identity_on_words():
    words = np.random.default_rng(3).integers(0, 2**32, (64, 4), dtype=np.uint32)
    words[0] = [0, 1, 2**31, 2**32 - 1]
    once = jax.jit(jax.vmap(computed_once))(words)
    assert once.dtype == jnp.uint32 and np.array_equal(np.asarray(once), np.asarray(words))


def test_segment_row_and_arm_rate_equal_full_lookups():
    shows = np.random.default_rng(4).integers(0, 5, (3, 4), dtype=np.int32)
    state = BanditState(shows, shows // 2, np.zeros(3, np.int32), np.zeros((), np.int32))
    # jitted (as in the step; one compilation each); the segment / arm index is traced
    full = np.asarray(jax.jit(estimated_ctr)(state))
    row, rate = jax.jit(segment_ctr), jax.jit(arm_ctr)
    for s in range(3):
        assert np.array_equal(np.asarray(row(state, np.int32(s))), full[s])
    rates = np.asarray([0.1, 0.2, 0.3, 0.4], np.float32)
    for arm in range(-1, 4):  # -1, an invalid release, reads the last entry as indexing does
        assert float(rate(rates, np.int32(arm))) == float(rates[arm])


@pytest.mark.parametrize("strategy", [budgets_lib.CONSTANT, budgets_lib.ARM_SPECIFIC])
def test_release_with_category_zero_equals_release_of_the_greedy_arm(strategy):
    """The mechanism's report is used on the exploring branch only, so handing it category 0
    gives the arm that K-RR of the true greedy arm gives (same words)."""
    n, k = 2000, 3
    rng = np.random.default_rng(8)
    words = rng.integers(0, 2**32, (n, 2), dtype=np.uint32)
    values = _tied_values(rng, (n, 4))
    mask = np.arange(4) < k
    gammas = rng.uniform(0.0, 3.0, n).astype(np.float32)
    budgets = np.asarray([0.5, 1.0, 2.0, np.inf], np.float32)

    def widths_of(g):
        return budgets_lib.release_widths(strategy, g, budgets, 10, k, mask, k)

    arm, greedy = jax.jit(jax.vmap(lambda w, v, g: release_arm(
        w, v, mask, *widths_of(g), k, jnp.float32)))(words, values, gammas)

    def with_true_category(w, v, g):
        widths, capped = widths_of(g)
        _, _, spare = weighted_randomized_response_from_bits(w, 0, widths, capped, k)
        truth = pick_tied_max(v, mask, spare)
        report, _, _ = weighted_randomized_response_from_bits(w, truth, widths, capped, k)
        return report, truth

    ref_arm, ref_greedy = jax.jit(jax.vmap(with_true_category))(words, values, gammas)
    assert np.array_equal(np.asarray(greedy), np.asarray(ref_greedy))
    assert np.array_equal(np.asarray(arm), np.asarray(ref_arm))
    explored = np.asarray(arm) != np.asarray(greedy)
    assert 0 < explored.mean() < 1  # both branches are exercised
