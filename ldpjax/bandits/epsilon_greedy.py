"""Private segment-specific epsilon-greedy: exploration as K-ary randomized response.

Paper 002, Sec. 3 (eqs. 12, 15-18, Appendix J). For visitor t of segment s the firm's greedy
arm is g = argmax_a Q_t(a, s) (the segment's empirical click rate; ties broken uniformly at
random; Q = 0 before an arm's first show). With the strategy's exploration probability eps_t
and weights w (:func:`ldpjax.bandits.budgets.exploration`) the shown arm is

    A_t = g with probability 1 - eps_t + eps_t w_g,   A_t = j != g with probability eps_t w_j,

i.e. K-ary randomized response of the greedy arm with visitor budget xi_t (uniform weights:
xi_t = log(1 - K + K / eps_t)). A third party that sees A_t learns at most xi_t about the
segment (posterior odds x e^{xi_t}, :func:`ldpjax.bandits.privacy.posterior_odds_bound`). The
click R_t ~ Bernoulli(mu_{A_t}(s)) updates Q(A_t, s).

Accounting: the state keeps max_t xi_t, the experiment budget by parallel composition
(:func:`ldpjax.accounting.compose_parallel`); the step outputs xi_t itself.

Strategies are a numeric ``strategy`` code in the params (constant / dynamic / capped /
arm-specific, see :mod:`ldpjax.bandits.budgets`) so that seeds x gamma x strategies is one
``vmap`` and one compilation.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.bandits import budgets as budgets_lib
from ldpjax.bandits.environment import (
    Environment,
    argmax_random_ties,
    arm_mask,
    best_ctr,
    inverse_cdf,
)
from ldpjax.bandits.state import (
    BanditOutputs,
    BanditState,
    PolicyConfig,
    clock_of,
    estimated_ctr,
    init_state,
    observe,
)
from ldpjax.engine import Algorithm
from ldpjax.types import Array, ArrayLike


class EpsilonGreedyParams(NamedTuple):
    """Numeric parameters (array leaves: they vmap and grad reaches them)."""

    ctr: Array  # (J, K_max) click-through rates
    segment_probs: Array  # (J,)
    num_arms: Array  # () int32, K <= K_max
    strategy: Array  # () int32 strategy code
    gamma: Array  # () experiment budget (constant / capped)
    arm_budgets: Array  # (K_max,) per-arm budgets (arm-specific)


def epsilon_greedy_params(
    env: Environment,
    strategy: str | int = "capped",
    gamma: ArrayLike = 1.0,
    arm_budgets: ArrayLike | None = None,
) -> EpsilonGreedyParams:
    """Validated parameters for one run (build grids with ``ldpjax.engine.product_grid``).

    Args:
      env: from :func:`ldpjax.bandits.make_environment`.
      strategy: ``"constant"``, ``"dynamic"``, ``"capped"`` or ``"arm_specific"`` (or code).
      gamma: experiment budget in [0, inf] (ignored by ``dynamic`` and ``arm_specific``).
      arm_budgets: per-arm budgets in [0, inf], length K_max (``arm_specific`` only; default
        all equal to gamma).
    """
    code = budgets_lib.strategy_code(strategy)
    v.check_range("gamma", gamma, 0.0, jnp.inf)
    dtype = env.ctr.dtype
    max_arms = env.ctr.shape[-1]
    if arm_budgets is None:
        arm_budgets = np.full(max_arms, np.asarray(gamma, np.float64))
    v.check_range("arm_budgets", arm_budgets, 0.0, jnp.inf)
    arm_budgets = jnp.asarray(arm_budgets, dtype)
    if arm_budgets.shape != (max_arms,):
        raise ValueError(f"arm_budgets must have shape ({max_arms},); got {arm_budgets.shape}")
    return EpsilonGreedyParams(
        env.ctr, env.segment_probs, env.num_arms, jnp.asarray(code, jnp.int32),
        jnp.asarray(gamma, dtype), arm_budgets,
    )


def _segment(config: PolicyConfig, params, inputs, uniform) -> Array:
    if config.replay_segments:
        return jnp.asarray(inputs, jnp.int32)
    if config.num_segments == 1:
        return jnp.zeros((), jnp.int32)
    return inverse_cdf(params.segment_probs, uniform)


@functools.cache
def epsilon_greedy(config: PolicyConfig) -> Algorithm:
    """The private epsilon-greedy policy as an engine algorithm (cached per config)."""

    def init(params: EpsilonGreedyParams, key) -> BanditState:
        return init_state(config, params.ctr.dtype)

    def step(params: EpsilonGreedyParams, state: BanditState, inputs, key):
        # One uniform draw per visitor feeds every random choice (one PRNG call per step):
        # u[0] segment, u[1] explore?, u[2] explored arm, u[3] click, u[4:] tie-breaking.
        u = jax.random.uniform(key, (4 + config.max_arms,), params.ctr.dtype)
        segment = _segment(config, params, inputs, u[0])
        mask = arm_mask(params.num_arms, config.max_arms)
        init_steps = params.num_arms if config.init_steps is None else config.init_steps
        explore_prob, weights, spend = budgets_lib.exploration(
            params.strategy, params.gamma, params.arm_budgets,
            clock_of(config, state, segment), params.num_arms, mask, init_steps,
        )
        greedy = argmax_random_ties(estimated_ctr(state)[segment], mask, u[4:])
        explored_arm = inverse_cdf(jnp.where(mask, weights, 0.0), u[2])
        arm = jnp.where(u[1] < explore_prob, explored_arm, greedy)
        rate = params.ctr[segment, arm]
        click = (u[3] < rate).astype(jnp.int32)
        regret = best_ctr(params.ctr, params.num_arms)[segment] - rate
        state = observe(state, segment, arm, click, spend)
        return state, BanditOutputs(segment, greedy, arm, click, regret, spend, explore_prob)

    return Algorithm(init, step)


__all__ = ["EpsilonGreedyParams", "epsilon_greedy", "epsilon_greedy_params"]
