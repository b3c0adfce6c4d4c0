"""Benchmark policies of the paper's simulations (Sec. 4): non-private epsilon-greedy, perfect
information and random play. (The Gittins-index benchmark lives in :mod:`ldpjax.bandits.gittins`.)

* Non-private epsilon-greedy: the same decay eps_t = min(1, (K log t / t)^{1/3}) as the dynamic
  strategy, never capped (:func:`nonprivate_greedy` returns its
  :class:`~ldpjax.bandits.epsilon_greedy.EpsilonGreedyParams`; run it with
  :func:`~ldpjax.bandits.epsilon_greedy.epsilon_greedy`). Its realised spend max_t xi_t is the
  schedule's xi at T (it is not designed to be private, but the accounting still reports it).
* Perfect information (:func:`oracle_policy`): always the best arm of the visitor's segment;
  regret 0. Deterministic, so its spend is inf when the segments' best arms differ (the shown
  arm reveals the segment) and 0 when all segments share the best arm.
* Random (:func:`random_policy`): a uniformly random arm; spend 0 (the output is independent of
  the segment). Equals the constant strategy at gamma = 0.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ldpjax.bandits.environment import Environment, arm_mask, best_arm, best_ctr, inverse_cdf
from ldpjax.bandits.epsilon_greedy import EpsilonGreedyParams, _segment, epsilon_greedy_params
from ldpjax.bandits.state import BanditOutputs, BanditState, PolicyConfig, init_state, observe
from ldpjax.engine import Algorithm
from ldpjax.types import Array


class BaselineParams(NamedTuple):
    ctr: Array
    segment_probs: Array
    num_arms: Array


def baseline_params(env: Environment) -> BaselineParams:
    return BaselineParams(env.ctr, env.segment_probs, env.num_arms)


def nonprivate_greedy(env: Environment) -> EpsilonGreedyParams:
    """Parameters of non-private epsilon-greedy: the uncapped dynamic decay (eq. 16)."""
    return epsilon_greedy_params(env, "dynamic", jnp.inf)


def _run(config: PolicyConfig, choose) -> Algorithm:
    def init(params: BaselineParams, key) -> BanditState:
        return init_state(config, params.ctr.dtype)

    def step(params: BaselineParams, state: BanditState, inputs, key):
        u = jax.random.uniform(key, (3,), params.ctr.dtype)
        segment = _segment(config, params, inputs, u[0])
        mask = arm_mask(params.num_arms, config.max_arms)
        arm, spend, explore = choose(params, segment, mask, u[2])
        rate = params.ctr[segment, arm]
        click = (u[1] < rate).astype(jnp.int32)
        regret = best_ctr(params.ctr, params.num_arms)[segment] - rate
        spend = jnp.asarray(spend, params.ctr.dtype)
        state = observe(state, segment, arm, click, spend)
        return state, BanditOutputs(segment, arm, arm, click, regret, spend,
                                    jnp.asarray(explore, params.ctr.dtype))

    return Algorithm(init, step)


@functools.cache
def oracle_policy(config: PolicyConfig) -> Algorithm:
    """Perfect information: show the best arm of the visitor's segment."""

    def choose(params, segment, mask, uniform):
        best = best_arm(params.ctr, params.num_arms)
        reveals = jnp.any(best != best[0])
        return best[segment].astype(jnp.int32), jnp.where(reveals, jnp.inf, 0.0), 0.0

    return _run(config, choose)


@functools.cache
def random_policy(config: PolicyConfig) -> Algorithm:
    """Uniform random play over the arms in use."""

    def choose(params, segment, mask, uniform):
        return inverse_cdf(mask.astype(params.ctr.dtype), uniform), 0.0, 1.0

    return _run(config, choose)


__all__ = [
    "BaselineParams",
    "baseline_params",
    "nonprivate_greedy",
    "oracle_policy",
    "random_policy",
]
