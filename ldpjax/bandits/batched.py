"""Block-updated private epsilon-greedy for long horizons (T up to ~1.5e8 visitors).

One scan step processes a block of n_b visitors during which the policy's show probabilities
are held fixed: the greedy arm of every segment (argmax of Q at the block start, random ties)
and eps (the strategy's exploration at the block-start clock). Given those probabilities the
block is simulated *exactly* by counts:

    segment counts  m ~ Multinomial(n_b, p_seg),
    shows per arm   n_s ~ Multinomial(m_s, P(show . | segment s))  (K-RR row of segment s),
    clicks          c_{s,k} ~ Binomial(n_{s,k}, mu_k(s)),

(multinomials as sequential conditional binomials, :func:`ldpjax.mechanisms.binomial.binomial`)
and the expected regret of the block is sum_{s,k} n_{s,k} (mu*(s) - mu_k(s)). Block sizes grow
geometrically, n_b = clip(floor(growth * t), 1, T - t) for t visitors so far (at most 2^23
so that float32 counts stay exact), so the first 1 / growth visitors are single-visitor blocks
and a horizon T takes about 1/growth + log(growth T) / log(1 + growth) steps (~1,500 for
T = 1.5e8 and growth = 0.01).

Approximation: this is exactly the policy "update Q and eps every block", a batched version of
the per-visitor epsilon-greedy of Ponte & Ferecatu ("A Privacy Budgeting Framework for Online
Experimentation"; firms do update daily). With ``growth`` small the
greedy arm and eps_t ~ t^{-1/3} change by a relative O(growth / 3) within a block; the test
suite checks that mean regret and clicks agree with the per-visitor policy
(:func:`ldpjax.bandits.epsilon_greedy`) within Monte Carlo error.

**A simulation path.** Every visitor of a block gets K-RR of its segment's greedy arm with the
block's xi <= gamma; the block draws the *counts* of those reports
(:func:`kary_report_counts`: explorers ~ Binomial(m_s, eps_s), their arms ~ Multinomial with the
exploration weights, the rest on the greedy arm) -- the law of m_s independent K-RR reports up
to the floating-point arithmetic of the binomial sampler and of the float eps_s, weights. It
simulates the policy's statistics; it releases no individual arm, and it is not a release of
real data (that is the per-visitor :func:`ldpjax.bandits.epsilon_greedy`, decided on exact
integer widths). ``privacy_event(params)`` is the claim of the per-visitor policy it simulates
(``KaryRandomizedResponseEvent(gamma, K)``; arm-specific budgets: the realised channel,
:func:`ldpjax.bandits.epsilon_greedy.channel_event`). The ``spend`` output is the block's max
xi (record max_t xi_t with :func:`ldpjax.bandits.max_spend`). Fail closed as the per-visitor
policy: a traced invalid gamma explores with probability 1.

Randomness: segment counts and clicks are data sampling; the greedy tie-break is algorithm
randomness; the report counts are the simulated privacy noise (see :func:`kary_report_counts`).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.bandits import budgets as budgets_lib
from ldpjax.bandits.environment import argmax_random_ties, arm_mask, best_ctr, ctr_ok
from ldpjax.bandits.epsilon_greedy import (
    EpsilonGreedyParams,
    check_params,
    epsilon_greedy_params,
    privacy_event,
)
from ldpjax.bandits.state import BanditState, check_policy_config, estimated_ctr
from ldpjax.engine import Algorithm
from ldpjax.mechanisms import kary_randomized_response_counts
from ldpjax.mechanisms.binomial import binomial  # the clicks (data sampling)
from ldpjax.mechanisms.kary import multinomial_counts  # also used for segment counts (data)
from ldpjax.types import Array, ArrayLike, PRNGKey

MAX_BLOCK = 2**23


@dataclasses.dataclass(frozen=True)
class BlockConfig:
    """Static configuration of the block-updated policy (see :class:`PolicyConfig`)."""

    num_segments: int = 1
    max_arms: int = 2
    clock: str = "global"
    init_steps: int | None = None
    growth: float = 0.01
    init_constant: bool = False

    def __post_init__(self):
        check_policy_config(self)
        if isinstance(self.growth, (str, bool)):
            raise TypeError(f"growth must be a number; got {self.growth!r}")
        v.check_range("growth", self.growth, 0.0, 1.0)


class BlockParams(NamedTuple):
    policy: EpsilonGreedyParams
    horizon: Array  # () T of this run (runs with different T share one kernel)
    stream: Array  # () int32 folded into every step key: grid points with different streams
    # draw independent randomness (the engine gives all grid points of a seed the same keys,
    # i.e. common random numbers); e.g. one stream per experiment of a portfolio


class BlockOutputs(NamedTuple):
    visitors: Array  # block size
    clicks: Array  # int32
    regret: Array
    spend: Array  # max xi over the block's segments (0 for an empty block)
    explore_prob: Array  # exploration probability averaged over the block's visitors


def block_params(env, strategy="dynamic", gamma=None, horizon=10_000, arm_budgets=None,
                 stream=0):
    """Validated :class:`BlockParams` (``horizon`` T >= 1, ``stream`` >= 0); the other arguments
    as :func:`~ldpjax.bandits.epsilon_greedy_params`.

    Example:
      >>> from ldpjax import bandits
      >>> p = block_params(bandits.make_environment([0.3, 0.2]), "constant", 1.0, horizon=100)
      >>> int(p.horizon), int(p.policy.strategy)
      (100, 0)
    """
    for name, value in (("horizon", horizon), ("stream", stream)):
        if isinstance(value, (str, bytes)) or np.ndim(value) != 0:
            raise ValueError(f"{name} must be a scalar integer; got {value!r}")
    v.check_integer("horizon", horizon, 1, 2**31 - 1)
    v.check_integer("stream", stream, 0, 2**31 - 1)
    policy = epsilon_greedy_params(env, strategy, gamma, arm_budgets)
    return BlockParams(policy, jnp.asarray(horizon, jnp.int32), jnp.asarray(stream, jnp.int32))


def block_size(visitors_so_far, horizon, growth: float):
    """n_b = clip(floor(growth * t), 1, T - t), capped at 2^23 (0 once t >= T)."""
    t = jnp.asarray(visitors_so_far, jnp.int32)
    grown = jnp.floor(growth * t.astype(jnp.float32)).astype(jnp.int32)
    size = jnp.clip(grown, 1, MAX_BLOCK)
    return jnp.clip(jnp.minimum(size, jnp.asarray(horizon, jnp.int32) - t), 0, None)


def num_blocks(horizon: int, growth: float) -> int:
    """Number of scan steps that cover ``horizon`` visitors (the static ``num_steps``).

    Example:
      >>> num_blocks(10, 0.0), num_blocks(10, 0.5)  # growth 0.5: blocks 1, 1, 1, 1, 2, 3, 1
      (10, 7)
    """
    if isinstance(horizon, (str, bytes)) or isinstance(growth, (str, bytes)):
        raise ValueError(f"horizon and growth must be numbers; got {horizon!r}, {growth!r}")
    v.check_integer("horizon", horizon, 1, 2**31 - 1)
    v.check_range("growth", growth, 0.0, 1.0)
    if growth == 0:
        return int(horizon)
    # Same float32 arithmetic as block_size, so the count matches the scan exactly.
    rate = np.float32(growth)
    t, steps = 0, 0
    while t < horizon:
        grown = int(np.floor(rate * np.float32(t)))
        t += min(max(1, min(grown, MAX_BLOCK)), horizon - t)
        steps += 1
    return steps


def kary_report_counts(key: PRNGKey, counts: ArrayLike, category: ArrayLike,
                       explore_prob: ArrayLike, weights: ArrayLike) -> Array:
    """Counts of K-RR reports of ``counts`` records that share one true ``category``.

    The block's simulated release, drawn by the mechanisms layer
    (:func:`ldpjax.mechanisms.kary_randomized_response_counts`, a simulation path): the law of
    the counts of ``counts`` independent reports of
    :func:`ldpjax.mechanisms.kary_randomized_response_explore` with exploration ``weights``, up
    to floating-point binomials. A NaN or out-of-range traced ``explore_prob`` (or category)
    gives NaN counts.

    Returns:
      Report counts, shape (..., K), summing to ``counts`` on the last axis.
    """
    return kary_randomized_response_counts(key, counts, category, explore_prob, weights)


def block_privacy_event(params: BlockParams):
    """What each visitor's record costs: the per-visitor claim of the policy the blocks
    simulate (:func:`ldpjax.bandits.epsilon_greedy.privacy_event`)."""
    return privacy_event(params.policy)


@functools.cache
def batched_epsilon_greedy(config: BlockConfig) -> Algorithm:
    """The block-updated policy as an engine algorithm (one block per step).

    Example:
      >>> from ldpjax import bandits
      >>> from ldpjax.engine import make_key, record, simulate
      >>> env = bandits.make_environment([0.324, 0.295])
      >>> cfg = bandits.BlockConfig(growth=0.5)
      >>> out = simulate(batched_epsilon_greedy(cfg), bandits.block_params(env, horizon=64),
      ...                make_key(0), num_blocks(64, 0.5), num_seeds=2,
      ...                record=record.total("visitors"))
      >>> out.record.tolist()
      [64, 64]
    """
    if not isinstance(config, BlockConfig):
        raise TypeError(f"config must be a BlockConfig; got {type(config).__name__}")

    def init(params: BlockParams, key) -> BanditState:
        shape = (config.num_segments, config.max_arms)
        return BanditState(
            jnp.zeros(shape, jnp.int32), jnp.zeros(shape, jnp.int32),
            jnp.zeros((config.num_segments,), jnp.int32), jnp.zeros((), jnp.int32),
        )

    def step(params: BlockParams, state: BanditState, inputs, key):
        p = params.policy
        dtype = p.ctr.dtype
        # key plumbing: the grid point's stream, then one key per kind of draw
        key = jax.random.fold_in(key, params.stream)
        seg_key, tie_key, show_key, click_key = jax.random.split(key, 4)
        size = block_size(state.t, params.horizon, config.growth)
        if config.num_segments == 1:
            seg_counts = size.astype(dtype)[None]
        else:  # data sampling: the block's visitors per segment
            seg_counts = multinomial_counts(seg_key, size.astype(dtype), p.segment_probs)
        mask = arm_mask(p.num_arms, config.max_arms)
        init_steps = p.num_arms if config.init_steps is None else config.init_steps
        if config.clock == "global":
            clocks = jnp.broadcast_to(state.t + 1, (config.num_segments,))
        else:
            clocks = state.visits + 1
        explore_prob, weights, spend = jax.vmap(
            lambda c: budgets_lib.exploration(
                p.strategy, p.gamma, p.arm_budgets, c, p.num_arms, mask, init_steps,
                init_constant=config.init_constant,
            )
        )(clocks)
        # algorithm randomness: the greedy arm of every segment among ties
        noise = jax.random.uniform(tie_key, (config.num_segments, config.max_arms), dtype)
        greedy = argmax_random_ties(estimated_ctr(state), mask, noise)
        # privacy noise: the block's K-RR reports, as counts per segment x arm
        shows = kary_report_counts(show_key, seg_counts, greedy, explore_prob,
                                   jnp.where(mask, weights, 0.0))
        # data sampling: the clicks of the shown arms
        clicks = jnp.minimum(jnp.round(binomial(click_key, shows, p.ctr, dtype=dtype)),
                             shows)
        gaps = best_ctr(p.ctr, p.num_arms)[:, None] - p.ctr
        regret = jnp.sum(jnp.where(mask, shows * gaps, 0.0))
        regret = v.valid_or_nan(ctr_ok(p.ctr, p.num_arms), regret)  # fail closed
        # NaN (failed-closed budget) propagates through the max
        block_spend = jnp.max(jnp.where(seg_counts > 0, spend, 0.0))
        state = BanditState(
            state.shows + shows.astype(jnp.int32),
            state.clicks + clicks.astype(jnp.int32),
            state.visits + seg_counts.astype(jnp.int32),
            state.t + size,
        )
        explore = jnp.sum(seg_counts * explore_prob) / jnp.maximum(size.astype(dtype), 1.0)
        return state, BlockOutputs(size, jnp.sum(clicks.astype(jnp.int32)), regret,
                                   block_spend.astype(dtype), explore.astype(dtype))

    def validate(params: BlockParams, inputs) -> None:
        if not isinstance(params, BlockParams):
            raise TypeError(f"params must be BlockParams; got {type(params).__name__}")
        check_params(params.policy, config.num_segments, config.max_arms)
        v.check_integer("horizon", params.horizon, 1, 2**31 - 1)
        v.check_integer("stream", params.stream, 0, 2**31 - 1)
        if inputs is not None:
            raise ValueError("inputs must be None for the block policy (segments are drawn)")

    return Algorithm(init, step, validate, block_privacy_event)


__all__ = [
    "MAX_BLOCK",
    "BlockConfig",
    "BlockOutputs",
    "BlockParams",
    "batched_epsilon_greedy",
    "block_privacy_event",
    "block_params",
    "block_size",
    "kary_report_counts",
    "num_blocks",
]
