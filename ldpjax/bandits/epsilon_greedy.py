"""Private segment-specific epsilon-greedy: exploration as K-ary randomized response.

Paper 002, Sec. 3 (eqs. 12, 15-18, Appendix J). For visitor t of segment s the firm's greedy
arm is g = argmax_a Q_t(a, s) (the segment's empirical click rate; ties broken uniformly at
random; Q = 0 before an arm's first show). With the strategy's exploration probability eps_t
and weights w (:func:`ldpjax.bandits.budgets.exploration`) the shown arm is

    A_t = g with probability 1 - eps_t + eps_t w_g,   A_t = j != g with probability eps_t w_j,

i.e. K-ary randomized response of the greedy arm with visitor budget xi_t (uniform weights:
xi_t = log(1 - K + K / eps_t)). The release goes through the privacy layer:
:func:`ldpjax.mechanisms.kary_randomized_response_from_bits` (explore with probability
eps_t, then a uniform arm). Arm-specific weights (Appendix J) map the mechanism's uniform
position u / eps_t = (report + spare) / K on the exploring branch through the weights' inverse
CDF (the same uniform, so the report law is the weighted K-RR row). A third party that sees
A_t learns at most xi_t about the segment (posterior odds x e^{xi_t},
:func:`ldpjax.bandits.privacy.posterior_odds_bound`). The click R_t ~ Bernoulli(mu_{A_t}(s))
updates Q(A_t, s).

Privacy claim (:attr:`Algorithm.privacy_event`): per visitor
``KaryRandomizedResponseEvent(gamma, K)`` for the constant, dynamic (capped) and uncapped
(gamma = inf: no claim) strategies -- every visitor's xi_t <= gamma, and each visitor's segment
enters one shown arm (parallel composition, the paper's threat model: the channel is the shown
arm; the influence of S_t on later visitors' arms through Q is outside it, as in the paper).
For arm-specific budgets the mechanism is max_j xi_j-DP but not K-RR-shaped, so the claim is
``KaryRandomizedResponseEvent(max_j xi_j, 2)``: the binary-RR profile, the largest delta(eps)
of any (max_j xi_j)-DP mechanism.

Fail closed: a traced invalid gamma (negative, NaN), invalid arm budgets or an unknown
strategy code explores with probability 1 (uniform play, spend NaN); concrete ones raise
``ValueError`` naming the leaf (``epsilon_greedy_params`` and ``Algorithm.validate``).

Randomness per visitor:

* fast path (``PolicyConfig(fast=True)``, default): one uniform drives the K-RR report (explore?
  which arm?) and, through the mechanism's spare uniform, the greedy arm among ties; one
  uniform the click (data sampling); when segments are drawn (J > 1, no replay), one more the
  segment (data sampling). At most two uniforms for the policy and its click. The words are
  drawn by one ``report_bits`` call and read through :func:`computed_once` (the same values,
  generated once per step by the compiled kernel).
* sampling path (``fast=False``): one draw per random choice -- segment (categorical), ties
  (K uniforms), the report (the mechanism's own uniform), click (Bernoulli). Equal in
  distribution to the fast path (``tests/bandits/test_fast_paths.py``).

The realised experiment budget max_t xi_t is the running max of the ``spend`` output
(:func:`ldpjax.bandits.max_spend`); the state keeps only what the next step needs.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax._fusion import computed_once
from ldpjax.bandits import budgets as budgets_lib
from ldpjax.bandits.environment import (
    UNROLL_ARMS,
    Environment,
    arm_mask,
    best_ctr,
    check_env_leaves,
    check_segment_inputs,
    ctr_ok,
    inverse_cdf,
    pick_tied_max,
    random_tie_argmax,
    sample_segment,
)
from ldpjax.bandits.state import (
    BanditOutputs,
    BanditState,
    PolicyConfig,
    clock_of,
    estimated_ctr,
    init_state,
    observe,
    segment_of,
)
from ldpjax.engine import Algorithm
from ldpjax.mechanisms import (
    KaryRandomizedResponseEvent,
    kary_randomized_response_from_bits,
    report_bits,
    uniform_from_bits,
)
from ldpjax.types import Array, ArrayLike


class EpsilonGreedyParams(NamedTuple):
    """Numeric parameters (array leaves: they vmap and grad reaches them)."""

    ctr: Array  # (J, K_max) click-through rates
    segment_probs: Array  # (J,)
    num_arms: Array  # () int32, K <= K_max
    strategy: Array  # () int32 strategy code (budgets.STRATEGIES)
    gamma: Array  # () experiment budget (constant / dynamic; inf for uncapped)
    arm_budgets: Array  # (K_max,) per-arm budgets (arm-specific)


def _check_environment(env) -> None:
    if not isinstance(env, Environment):
        raise TypeError(
            f"env must be an Environment from bandits.make_environment; got {type(env).__name__}"
        )


def epsilon_greedy_params(
    env: Environment,
    strategy: str | int = "dynamic",
    gamma: ArrayLike | None = None,
    arm_budgets: ArrayLike | None = None,
) -> EpsilonGreedyParams:
    """Validated parameters for one run (build grids with ``ldpjax.engine.product_grid``).

    Args:
      env: from :func:`ldpjax.bandits.make_environment`.
      strategy: ``"constant"``, ``"dynamic"`` (capped at gamma; alias ``"capped"``),
        ``"uncapped"`` (the non-private decay; gamma must be inf) or ``"arm_specific"``, or
        the code (0..3); :func:`ldpjax.bandits.strategy_names` gives names that map back to
        the same code.
      gamma: experiment budget in [0, inf] (default 1.0; inf for ``"uncapped"``; ignored by
        ``"arm_specific"``).
      arm_budgets: per-arm budgets in [0, inf], length K_max (``arm_specific`` only; default
        all equal to gamma).

    Example:
      >>> from ldpjax import bandits
      >>> env = bandits.make_environment([0.324, 0.295])
      >>> p = epsilon_greedy_params(env, "dynamic", 1.0)
      >>> int(p.strategy), float(p.gamma)
      (2, 1.0)
    """
    _check_environment(env)
    code = budgets_lib.strategy_code(strategy)
    if gamma is None:
        gamma = np.inf if code == budgets_lib.UNCAPPED else 1.0
    if np.ndim(gamma) != 0:
        raise ValueError(f"gamma must be a scalar (build grids with product_grid); got shape "
                         f"{np.shape(gamma)}")
    v.check_range("gamma", gamma, 0.0, jnp.inf)
    budgets_lib.check_strategy_budget(code, gamma)
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


def check_params(params: EpsilonGreedyParams, num_segments: int, max_arms: int) -> None:
    """Concrete validation of an epsilon-greedy params pytree (one point or a stacked grid)."""
    if not isinstance(params, EpsilonGreedyParams):
        raise TypeError(f"params must be EpsilonGreedyParams; got {type(params).__name__}")
    check_env_leaves(params.ctr, params.segment_probs, params.num_arms, num_segments, max_arms)
    if not v.is_concrete(params):
        return
    v.check_integer("strategy", params.strategy, 0, 3)
    v.check_range("gamma", params.gamma, 0.0, jnp.inf)
    budgets_lib.check_strategy_budget(params.strategy, params.gamma)
    budgets = np.asarray(params.arm_budgets)
    if budgets.ndim < 1 or budgets.shape[-1] != max_arms:
        raise ValueError(f"arm_budgets must have trailing length max_arms = {max_arms}; got "
                         f"shape {budgets.shape}")
    v.check_range("arm_budgets", budgets, 0.0, jnp.inf)


def claimed_budget(params: EpsilonGreedyParams) -> tuple[Array, Array]:
    """(xi, k) of the per-visitor claim: (gamma, K), or (max_j xi_j over arms in use, 2) for
    arm-specific budgets (see the module doc)."""
    strategy = jnp.asarray(params.strategy)
    mask = arm_mask(params.num_arms, params.arm_budgets.shape[-1])
    arm_max = jnp.max(jnp.where(mask, params.arm_budgets, 0.0), axis=-1)
    arm_ok = jnp.all(jnp.where(mask, params.arm_budgets >= 0, True), axis=-1)
    arm_max = v.valid_or_nan(arm_ok, arm_max)
    specific = strategy == budgets_lib.ARM_SPECIFIC
    xi = jnp.where(specific, arm_max, params.gamma)
    k = jnp.where(specific, 2, jnp.asarray(params.num_arms, jnp.int32))
    return xi, k


def privacy_event(params: EpsilonGreedyParams) -> KaryRandomizedResponseEvent:
    """The per-visitor claim at ``params`` (see the module doc)."""
    xi, k = claimed_budget(params)
    return KaryRandomizedResponseEvent(xi, k)


def _draws_segment(config: PolicyConfig) -> bool:
    return not config.replay_segments and config.num_segments > 1


def release_arm(words, greedy_values, mask, explore_prob, weights, strategy, num_arms, dtype):
    """The shown arm from one K-RR draw (two uint32 words): ``(arm, greedy)``.

    ``kary_randomized_response_from_bits`` decides explore-or-not and the explored arm; on
    the greedy branch its spare uniform (independent of the report) picks the greedy arm among
    tied maxima of ``greedy_values``; arm-specific weights map the exploring uniform
    u / eps = (report + spare) / K through their inverse CDF. The mechanism is handed category
    0 (always valid): its report is used only on the exploring branch, which does not depend
    on the category, so the greedy arm (a function of the spare) replaces it on the other.
    """
    report, explored, spare = kary_randomized_response_from_bits(
        words, jnp.zeros((), jnp.int32), explore_prob, num_arms)
    greedy = pick_tied_max(greedy_values, mask, spare)
    position = (report.astype(dtype) + spare) / jnp.asarray(num_arms, dtype)
    weighted = inverse_cdf(jnp.where(mask, weights, 0.0), position)
    explored_arm = jnp.where(strategy == budgets_lib.ARM_SPECIFIC, weighted, report)
    arm = jnp.where(explored, explored_arm, greedy)
    return jnp.where(report < 0, report, arm), greedy  # an invalid release stays invalid


def arm_ctr(rates: Array, arm: Array) -> Array:
    """``rates[arm]`` by selects (a gather per visitor otherwise); arm -1 (an invalid release)
    reads the last entry, as negative indexing does."""
    if rates.shape[-1] > UNROLL_ARMS:
        return rates[arm]
    rate = rates[-1]
    for j in range(rates.shape[-1] - 1):
        rate = jnp.where(arm == j, rates[j], rate)
    return rate


def segment_ctr(state: BanditState, segment: Array) -> Array:
    """Q(., s) of one segment: ``estimated_ctr(state)[segment]``, dividing only that row."""
    shows, clicks = state.shows[segment], state.clicks[segment]
    return clicks / jnp.maximum(shows, 1).astype(jnp.result_type(float))


@functools.cache
def epsilon_greedy(config: PolicyConfig) -> Algorithm:
    """The private epsilon-greedy policy as an engine algorithm (cached per config).

    ``validate(params, inputs)`` checks a concrete params grid (CTRs in [0, 1], shapes against
    the config, strategy codes, budgets, gamma = inf for the uncapped strategy) and the
    replayed segments; ``privacy_event(params)`` is the per-visitor claim (module doc).

    Example:
      >>> from ldpjax import bandits
      >>> from ldpjax.engine import make_key, record, simulate
      >>> env = bandits.make_environment([0.324, 0.295])
      >>> alg = bandits.epsilon_greedy(bandits.PolicyConfig())
      >>> params = bandits.epsilon_greedy_params(env, "constant", 1.0)
      >>> out = simulate(alg, params, make_key(0), 16, num_seeds=3,
      ...                record=record.total("click"))
      >>> out.record.shape
      (3,)
      >>> alg.privacy_event(params).xi.item()
      1.0
    """
    fast = config.fast

    def init(params: EpsilonGreedyParams, key) -> BanditState:
        return init_state(config)

    def policy(params, state, segment):
        mask = arm_mask(params.num_arms, config.max_arms)
        init_steps = params.num_arms if config.init_steps is None else config.init_steps
        explore_prob, weights, spend = budgets_lib.exploration(
            params.strategy, params.gamma, params.arm_budgets,
            clock_of(config, state, segment), params.num_arms, mask, init_steps,
            init_constant=config.init_constant,
        )
        return mask, explore_prob, weights, spend

    def finish(params, state, segment, greedy, arm, click, explore_prob, spend):
        rate = arm_ctr(params.ctr[segment], arm)
        regret = best_ctr(params.ctr, params.num_arms)[segment] - rate
        # fail closed: invalid CTRs, or an invalid release (arm -1)
        regret = v.valid_or_nan(ctr_ok(params.ctr, params.num_arms) & (arm >= 0), regret)
        state = observe(state, segment, arm, click)
        return state, BanditOutputs(segment, greedy, arm, click, regret, spend, explore_prob)

    def step_fast(params: EpsilonGreedyParams, state: BanditState, inputs, key):
        dtype = params.ctr.dtype
        # one draw per visitor: words 0-1 feed the K-RR mechanism (privacy noise, through
        # ldpjax.mechanisms), word 2 the click and word 3 the segment (data sampling)
        words = computed_once(report_bits(key, (4 if _draws_segment(config) else 3,)))
        segment = segment_of(config, params.segment_probs, inputs,
                             uniform_from_bits(words[-1], dtype))
        mask, explore_prob, weights, spend = policy(params, state, segment)
        arm, greedy = release_arm(words[:2], segment_ctr(state, segment), mask,
                                  explore_prob, weights, params.strategy, params.num_arms, dtype)
        click = (uniform_from_bits(words[2], dtype) < arm_ctr(params.ctr[segment], arm))
        return finish(params, state, segment, greedy, arm, click.astype(jnp.int32), explore_prob,
                      spend)

    def step_sampling(params: EpsilonGreedyParams, state: BanditState, inputs, key):
        dtype = params.ctr.dtype
        seg_key, tie_key, report_key, click_key = jax.random.split(key, 4)
        if config.replay_segments:
            segment = jnp.asarray(inputs, jnp.int32)
        else:
            segment = sample_segment(seg_key, params.segment_probs)  # data sampling
        mask, explore_prob, weights, spend = policy(params, state, segment)
        # algorithm randomness: the greedy arm among ties (K uniforms)
        greedy = random_tie_argmax(tie_key, estimated_ctr(state)[segment], mask)
        # privacy noise: the mechanism's own words (report_bits) and K-RR
        words = report_bits(report_key, (2,))
        report, explored, spare = kary_randomized_response_from_bits(
            words, greedy, explore_prob, params.num_arms)
        position = (report.astype(dtype) + spare) / jnp.asarray(params.num_arms, dtype)
        weighted = inverse_cdf(jnp.where(mask, weights, 0.0), position)
        arm = jnp.where(explored & (params.strategy == budgets_lib.ARM_SPECIFIC), weighted,
                        report)
        # data sampling: the visitor's click
        click = jax.random.bernoulli(click_key, params.ctr[segment, arm]).astype(jnp.int32)
        return finish(params, state, segment, greedy, arm, click, explore_prob, spend)

    def validate(params: EpsilonGreedyParams, inputs) -> None:
        check_params(params, config.num_segments, config.max_arms)
        check_segment_inputs(inputs, config.num_segments, config.replay_segments)

    # the fast step's float arithmetic on per-seed words and per-point params is exact or
    # divisions and comparisons: grid-major (tests/bandits/test_grid_major.py checks the
    # records against the flat layout, bit for bit). Two visitors per trip of the scan's loop:
    # the fast step is small enough that the loop's own cost is a large share of it
    # (docs/pages/engine.md, "Scan unroll"; the same records, tests/bandits/test_grid_major.py)
    return Algorithm(init, step_fast if fast else step_sampling, validate, privacy_event,
                     grid_major=fast, scan_unroll=2 if fast else 1)


__all__ = [
    "EpsilonGreedyParams",
    "check_params",
    "claimed_budget",
    "computed_once",
    "epsilon_greedy",
    "epsilon_greedy_params",
    "privacy_event",
    "release_arm",
    "segment_ctr",
]
