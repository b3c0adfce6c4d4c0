"""Conformance cases of the bandits family (paper 002): tiny sizes, K = 3 arms, T = 16.

Private policies take their budget gamma (per-visitor epsilon-greedy: constant, dynamic = capped,
fast and sampling paths, replayed segments; the block policy). Their scalar is the summed
exploration probability, a smooth function of gamma (K / (K + e^gamma - 1)), so the gradient
is meaningful; traced invalid budgets fail closed: every visitor explores (probability 1) and
the spend output is NaN.

Non-private policies have no budget. Oracle and random: their "budget" is one of their own
numeric params, the CTR of arm 0, which ``validate`` rejects outside [0, 1]. Gittins: its
"budget" is the discount leaf (the index table is derived from it in ``gittins_params``, so a
sweep over discounts compiles once), rejected outside (0, max_discount]. Traced invalid values
fail closed with a NaN regret. The regret is piecewise constant in either (argmax), so these
cases are not differentiable.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ldpjax import bandits
from tests.conformance.case import ConformanceCase

K = 3
T = 16
CTR = np.array([[0.5, 0.3, 0.1], [0.1, 0.2, 0.6]])
INVALID_GAMMAS = (-1.0, float("nan"))
INVALID_CTRS = (1.5, -0.1, float("nan"))
INVALID_DISCOUNTS = (1.0, 0.95, -0.1, float("nan"))  # 0.95 > max_discount = 0.9 of the case


def _explore_total(state, outputs):
    return jnp.sum(outputs.explore_prob)


def _explored_closed(state, outputs):
    return jnp.all(outputs.explore_prob == 1.0) & jnp.all(jnp.isnan(outputs.spend))


def _regret_total(state, outputs):
    return jnp.sum(outputs.regret)


def _regret_closed(state, outputs):
    return jnp.all(jnp.isnan(outputs.regret))


def _greedy_case(name, strategy, *, fast=True, replay=False):
    env = bandits.make_environment(CTR, segment_probs=[0.6, 0.4])
    config = bandits.PolicyConfig(num_segments=2, max_arms=K, replay_segments=replay, fast=fast)
    base = bandits.epsilon_greedy_params(env, strategy, 1.0)

    def make_params(gamma):
        return base._replace(gamma=jnp.asarray(gamma, base.gamma.dtype))

    inputs = bad = None
    if replay:
        inputs = jnp.asarray(np.arange(T) % 2, jnp.int32)
        bad = jnp.asarray(np.full(T, 2), jnp.int32)  # segment 2 of J = 2
    return ConformanceCase(
        name=name, algorithm=bandits.epsilon_greedy(config), make_params=make_params,
        budgets=(0.5, 2.0), invalid_budgets=INVALID_GAMMAS, num_steps=T,
        scalar=_explore_total, is_closed=_explored_closed, inputs=inputs, bad_inputs=bad,
    )


def _block_case():
    env = bandits.make_environment(CTR[0])
    config = bandits.BlockConfig(num_segments=1, max_arms=K, growth=0.25)
    base = bandits.block_params(env, "dynamic", 1.0, horizon=64)

    def make_params(gamma):
        return base._replace(policy=base.policy._replace(
            gamma=jnp.asarray(gamma, base.policy.gamma.dtype)))

    return ConformanceCase(
        name="bandits/batched_epsilon_greedy", algorithm=bandits.batched_epsilon_greedy(config),
        make_params=make_params, budgets=(0.5, 2.0), invalid_budgets=INVALID_GAMMAS,
        num_steps=bandits.num_blocks(64, 0.25), scalar=_explore_total,
        is_closed=_explored_closed,
    )


def _ctr_case(name, algorithm, build):
    env = bandits.make_environment(CTR[0])
    base = build(env)

    def make_params(ctr0):
        return base._replace(ctr=base.ctr.at[0, 0].set(jnp.asarray(ctr0, base.ctr.dtype)))

    return ConformanceCase(
        name=name, algorithm=algorithm, make_params=make_params, budgets=(0.4, 0.7),
        invalid_budgets=INVALID_CTRS, num_steps=T, scalar=_regret_total,
        is_closed=_regret_closed, differentiable=False,
    )


def _gittins_case(config):
    env = bandits.make_environment(CTR[0])
    gittins = bandits.GittinsConfig(config, max_count=8, max_discount=0.9, num_prices=64)

    def make_params(discount):
        return bandits.gittins_params(env, gittins, discount)

    return ConformanceCase(
        name="bandits/gittins_policy", algorithm=bandits.gittins_policy(gittins),
        make_params=make_params, budgets=(0.5, 0.9), invalid_budgets=INVALID_DISCOUNTS,
        num_steps=T, scalar=_regret_total, is_closed=_regret_closed, differentiable=False,
    )


def cases() -> list[ConformanceCase]:
    config = bandits.PolicyConfig(max_arms=K)
    return [
        _greedy_case("bandits/epsilon_greedy_constant", "constant"),
        _greedy_case("bandits/epsilon_greedy_dynamic", "dynamic"),
        _greedy_case("bandits/epsilon_greedy_sampling_path", "dynamic", fast=False),
        _greedy_case("bandits/epsilon_greedy_replay", "constant", replay=True),
        _block_case(),
        _ctr_case("bandits/oracle_policy", bandits.oracle_policy(config), bandits.baseline_params),
        _ctr_case("bandits/random_policy", bandits.random_policy(config), bandits.baseline_params),
        _gittins_case(config),
    ]
