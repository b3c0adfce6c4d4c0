"""Benchmark policies of the paper's simulations (Sec. 4): non-private epsilon-greedy, perfect
information and random play. (The Gittins-index benchmark lives in :mod:`ldpjax.bandits.gittins`.)

* Non-private epsilon-greedy: the same decay eps_t = min(1, (K log t / t)^{1/3}) as the dynamic
  strategy, never capped: the ``"uncapped"`` strategy with gamma = inf (:func:`nonprivate_greedy`
  returns its :class:`~ldpjax.bandits.epsilon_greedy.EpsilonGreedyParams`; run it with
  :func:`~ldpjax.bandits.epsilon_greedy.epsilon_greedy`, whose privacy claim is then
  xi = gamma = inf: no claim). Its realised spend max_t xi_t is the schedule's xi at T (it is
  not designed to be private, but the ``spend`` output still reports it).
* Perfect information (:func:`oracle_policy`): always the best arm of the visitor's segment;
  regret 0. **Not private**: deterministic, so ``privacy_event`` is ``NoPrivacyEvent()`` and the
  spend output is inf when the segments' best arms differ (the shown arm reveals the segment),
  0 when all segments share the best arm.
* Random (:func:`random_policy`): a uniformly random arm, released as K-ary randomized response
  with exploration probability 1 through :mod:`ldpjax.mechanisms` (xi = 0: the output is
  independent of the segment; ``privacy_event`` is ``KaryRandomizedResponseEvent(0, K)``).
  Equals the constant strategy at gamma = 0.

Randomness: one draw per visitor, u[0] the segment (data sampling), u[1] the click (data
sampling), u[2] the random policy's report (privacy noise, through the mechanism).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting import KaryRandomizedResponseEvent, NoPrivacyEvent
from ldpjax.bandits.environment import (
    Environment,
    arm_mask,
    best_arm,
    best_ctr,
    check_env_leaves,
    check_segment_inputs,
    ctr_ok,
)
from ldpjax.bandits.epsilon_greedy import EpsilonGreedyParams, epsilon_greedy_params
from ldpjax.bandits.state import (
    BanditOutputs,
    BanditState,
    PolicyConfig,
    init_state,
    observe,
    segment_of,
)
from ldpjax.engine import Algorithm
from ldpjax.mechanisms import kary_randomized_response_from_bits, report_bits, uniform_from_bits
from ldpjax.types import Array


class BaselineParams(NamedTuple):
    ctr: Array
    segment_probs: Array
    num_arms: Array


def baseline_params(env: Environment) -> BaselineParams:
    """Parameters of the oracle and random policies (the environment's leaves).

    Example:
      >>> from ldpjax import bandits
      >>> baseline_params(bandits.make_environment([0.3, 0.2])).ctr.shape
      (1, 2)
    """
    if not isinstance(env, Environment):
        raise TypeError(
            f"env must be an Environment from bandits.make_environment; got {type(env).__name__}"
        )
    return BaselineParams(env.ctr, env.segment_probs, env.num_arms)


def nonprivate_greedy(env: Environment) -> EpsilonGreedyParams:
    """Parameters of non-private epsilon-greedy: the uncapped decay (eq. 16), gamma = inf.

    Example:
      >>> from ldpjax import bandits
      >>> p = nonprivate_greedy(bandits.make_environment([0.3, 0.2]))
      >>> bandits.strategy_names(p.strategy), float(p.gamma)
      (['uncapped'], inf)
    """
    return epsilon_greedy_params(env, "uncapped", jnp.inf)


def check_baseline_params(params, config: PolicyConfig) -> None:
    """Concrete validation of oracle / random / Gittins params against the config."""
    if not hasattr(params, "ctr") or not hasattr(params, "segment_probs"):
        raise TypeError(f"params must hold ctr, segment_probs and num_arms leaves; got "
                        f"{type(params).__name__}")
    check_env_leaves(params.ctr, params.segment_probs, params.num_arms, config.num_segments,
                     config.max_arms)


def _run(config: PolicyConfig, choose, event) -> Algorithm:
    def init(params: BaselineParams, key) -> BanditState:
        return init_state(config)

    def step(params: BaselineParams, state: BanditState, inputs, key):
        # one draw: word 0 the segment and word 1 the click (data sampling), words 2-3 the
        # random policy's report (privacy noise, passed to the K-RR mechanism)
        dtype = params.ctr.dtype
        words = report_bits(key, (4,))
        segment = segment_of(config, params.segment_probs, inputs, uniform_from_bits(words[0], dtype))
        mask = arm_mask(params.num_arms, config.max_arms)
        arm, spend, explore = choose(params, segment, mask, words[2:])
        rate = params.ctr[segment, arm]
        click = (uniform_from_bits(words[1], dtype) < rate).astype(jnp.int32)
        regret = best_ctr(params.ctr, params.num_arms)[segment] - rate
        regret = v.valid_or_nan(ctr_ok(params.ctr, params.num_arms), regret)  # fail closed
        spend = jnp.asarray(spend, params.ctr.dtype)
        state = observe(state, segment, arm, click)
        return state, BanditOutputs(segment, arm, arm, click, regret, spend,
                                    jnp.asarray(explore, params.ctr.dtype))

    def validate(params, inputs) -> None:
        check_baseline_params(params, config)
        check_segment_inputs(inputs, config.num_segments, config.replay_segments)

    return Algorithm(init, step, validate, event)


def _no_privacy(params) -> NoPrivacyEvent:
    return NoPrivacyEvent()


def _uniform_play(params) -> KaryRandomizedResponseEvent:
    return KaryRandomizedResponseEvent(jnp.zeros_like(params.ctr[..., 0, 0]), params.num_arms)


@functools.cache
def oracle_policy(config: PolicyConfig) -> Algorithm:
    """Perfect information: show the best arm of the visitor's segment (not private).

    Example:
      >>> from ldpjax import bandits
      >>> alg = oracle_policy(bandits.PolicyConfig())
      >>> type(alg.privacy_event(None)).__name__
      'NoPrivacyEvent'
    """

    def choose(params, segment, mask, uniform):
        best = best_arm(params.ctr, params.num_arms)
        reveals = jnp.any(best != best[0])
        return best[segment].astype(jnp.int32), jnp.where(reveals, jnp.inf, 0.0), 0.0

    return _run(config, choose, _no_privacy)


@functools.cache
def random_policy(config: PolicyConfig) -> Algorithm:
    """Uniform random play over the arms in use: K-RR with exploration probability 1 (xi = 0).

    Example:
      >>> from ldpjax import bandits
      >>> from ldpjax.engine import make_key, simulate
      >>> env = bandits.make_environment([0.3, 0.2])
      >>> out = simulate(random_policy(bandits.PolicyConfig()), baseline_params(env),
      ...                make_key(0), 4, num_seeds=2)
      >>> out.record.explore_prob.tolist()
      [1.0, 1.0]
    """

    def choose(params, segment, mask, uniform):
        # the true category is irrelevant at exploration probability 1 (0 is always valid)
        report, _, _ = kary_randomized_response_from_bits(
            uniform, jnp.zeros((), jnp.int32), 1.0, params.num_arms)
        return report, 0.0, 1.0

    return _run(config, choose, _uniform_play)


__all__ = [
    "BaselineParams",
    "check_baseline_params",
    "baseline_params",
    "nonprivate_greedy",
    "oracle_policy",
    "random_policy",
]
