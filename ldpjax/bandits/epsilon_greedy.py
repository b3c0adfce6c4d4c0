"""Private segment-specific epsilon-greedy: exploration as K-ary randomized response.

Ponte & Ferecatu, "A Privacy Budgeting Framework for Online Experimentation", Sec. 3 (eqs. 12,
15-18) and Appendix J. For visitor t of segment s the firm's greedy arm is g = argmax_a Q_t(a, s)
(the segment's empirical click rate; ties broken uniformly at random; Q = 0 before an arm's
first show). With the strategy's exploration probability eps_t and weights w
(:func:`ldpjax.bandits.budgets.exploration`) the shown arm is

    A_t = g with probability 1 - eps_t + eps_t w_g,   A_t = j != g with probability eps_t w_j,

i.e. K-ary randomized response of the greedy arm with visitor budget xi_t (uniform weights:
xi_t = log(1 - K + K / eps_t)). The release goes through the privacy layer: integer widths
(:func:`ldpjax.bandits.budgets.release_widths`: W_j of the 2^32 words show arm j when
exploring, exact for the budgets themselves -- gamma for the constant and capped strategies,
the xi_j for arm-specific ones, never through a rounded float probability) decided on two
uint32 words by :func:`ldpjax.mechanisms.weighted_randomized_response_from_bits`. Each shown-arm
probability is within 2^-32 of the nominal row (the greedy arm's within K 2^-32), on the side
of more privacy. A third party that sees A_t learns at most xi_t about the segment (posterior
odds x e^{xi_t}, :func:`ldpjax.bandits.privacy.posterior_odds_bound`). The click
R_t ~ Bernoulli(mu_{A_t}(s)) updates Q(A_t, s).

Privacy claim (:attr:`Algorithm.privacy_event`, per visitor; each visitor's segment enters one
shown arm: parallel composition, the paper's threat model -- the channel is the shown arm; the
influence of S_t on later visitors' arms through Q is outside it, as in the paper):

* constant, dynamic (capped) and uncapped strategies: ``KaryRandomizedResponseEvent(gamma, K)``
  (gamma = inf for uncapped: no claim); every visitor's width is at least
  ceil(2^32 / (K - 1 + e^gamma)), so its realised epsilon is at most gamma;
* arm-specific budgets: the weighted channel is not K-RR-shaped; its exact profile is
  delta(e) = max(0, P - e^e Q) with P = 1 - eps + eps w_min and Q = eps w_min (greedy arm of
  the smallest weight against any other), so the claim is
  ``WeightedRandomizedResponseEvent(P, Q)`` built from the realised widths
  (:func:`channel_event`: P = (R + W_min) / 2^32, Q = W_min / 2^32, rounded outward), whose
  pure epsilon is at most max_j xi_j. A grid or a traced strategy that mixes arm-specific
  points with others gets that event at every point (the K-RR points as their realised pairs).

Fail closed: a traced invalid gamma (negative, NaN), invalid arm budgets or an unknown
strategy code explores with probability 1 (uniform play, spend NaN); concrete ones raise
``ValueError`` naming the leaf (``epsilon_greedy_params`` and ``Algorithm.validate``), as does
an arm-specific budget vector that explores an arm with probability below 2^-32
(:func:`ldpjax.bandits.budgets.check_arm_budgets`). A traced infinite budget (no privacy) is
honoured only where the engine found it in the concrete grid; elsewhere the release is -1 (an
invalid arm) and the regret NaN.

Randomness per visitor:

* fast path (``PolicyConfig(fast=True)``, default): two words drive the release (explore?
  which arm? and, through the mechanism's spare uniform, the greedy arm among ties); one word
  the click (data sampling); when segments are drawn (J > 1, no replay), one more the segment
  (data sampling). The words are drawn by one ``report_bits`` call and read through
  :func:`computed_once` (the same values, generated once per step by the compiled kernel).
* sampling path (``fast=False``): one draw per random choice -- segment (categorical), ties
  (K uniforms), the report (the mechanism's own words), click (Bernoulli). Equal in
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
from ldpjax.accounting import KaryRandomizedResponseEvent
from ldpjax.accounting.events import WeightedRandomizedResponseEvent
from ldpjax.bandits import budgets as budgets_lib
from ldpjax.bandits.environment import (
    UNROLL_ARMS,
    Environment,
    arm_mask,
    best_ctr,
    check_env_leaves,
    check_segment_inputs,
    ctr_ok,
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
from ldpjax.engine import Algorithm, ExecutionHints
from ldpjax.mechanisms import report_bits, uniform_from_bits
from ldpjax.mechanisms.kary import _carry_sum as carry_sum
from ldpjax.mechanisms.kary import (
    budget_width,
    weighted_category_widths,
    weighted_randomized_response_from_bits,
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
        all equal to gamma). Each arm in use must be explored with probability eps w_j >=
        2^-32 (:func:`ldpjax.bandits.budgets.check_arm_budgets`).

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
    budgets_lib.check_arm_budgets(code, arm_budgets, env.num_arms)
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
    budgets_lib.check_arm_budgets(params.strategy, budgets, params.num_arms)


def _outward(count: Array, dtype, up: bool) -> Array:
    """count / 2^32 (count a uint32) as ``dtype``, rounded up (``up``) or down by one ulp where
    the conversion may have rounded (float32 holds 24 bits; float64 is exact)."""
    value = count.astype(dtype) * jnp.asarray(2.0**-32, dtype)
    if jnp.dtype(dtype) == jnp.float64:
        return value
    return jnp.nextafter(value, jnp.asarray(jnp.inf if up else 0.0, dtype))


def channel_event(params: EpsilonGreedyParams) -> WeightedRandomizedResponseEvent:
    """The realised per-visitor channel as ``WeightedRandomizedResponseEvent(P, Q)``.

    From the integer widths the release decides on (its worst visitor): arm-specific budgets
    give the widths W_j of :func:`ldpjax.mechanisms.weighted_category_widths`, the other
    strategies Q_gamma = :func:`ldpjax.mechanisms.budget_width` (gamma, K) on every arm (every
    visitor's width is at least that). With R = 2^32 - sum_j W_j the words that show the greedy
    arm (0 when capped) and W_min the smallest width of an arm that can be shown, the exact
    profile is max(0, (R + W_min - e^e W_min) / 2^32): P = (R + W_min) / 2^32 rounded up,
    Q = W_min / 2^32 rounded down. The gradient is that of the nominal pair (P, Q) in the
    budgets (value of the realised pair, derivative of the real-valued one).

    Example:
      >>> from ldpjax import bandits
      >>> from ldpjax.accounting import epsilon
      >>> env = bandits.make_environment([0.3, 0.2])
      >>> event = channel_event(epsilon_greedy_params(env, "arm_specific", arm_budgets=[1.0, 3.0]))
      >>> round(float(epsilon(event, 0.0)), 4)  # pure epsilon: the largest budget
      3.0
    """
    dtype = jnp.result_type(params.gamma, float)
    k = jnp.asarray(params.num_arms, jnp.int32)
    mask = arm_mask(k, params.arm_budgets.shape[-1])
    xi = jnp.asarray(params.arm_budgets, dtype)
    arm_ok = jnp.all(jnp.where(mask, xi >= 0, True), axis=-1)
    specific = jnp.asarray(params.strategy) == budgets_lib.ARM_SPECIFIC
    w_arm, cap_arm = weighted_category_widths(jnp.where(mask, xi, jnp.inf), k)
    gamma = jnp.asarray(params.gamma, dtype)
    q_gamma, cap_gamma = budget_width(jnp.where(gamma >= 0, gamma, 0.0), k)
    widths = jnp.where(specific[..., None], w_arm, jnp.where(mask, q_gamma[..., None], 0))
    widths = widths.astype(jnp.uint32)
    _, _, carries = carry_sum(widths)
    low = jnp.sum(widths, axis=-1, dtype=jnp.uint32)  # sum_j W_j mod 2^32
    full = (carries == 1) & (low == 0)
    shows_truth = ~jnp.where(specific, cap_arm, cap_gamma) & ~full  # R > 0
    shown = mask & ((widths > 0) | shows_truth[..., None])  # the arms a visitor can be shown
    w_min = jnp.min(jnp.where(shown, widths, jnp.uint32(2**32 - 1)), axis=-1)
    others = low - w_min  # 2^32 - (R + W_min), exact in uint32 arithmetic
    q_real = _outward(w_min, dtype, False)
    p_real = jnp.where(others == 0, jnp.asarray(1.0, dtype),
                       jnp.minimum(_outward(jnp.uint32(0) - others, dtype, True), 1.0))
    p_real = jnp.where(shows_truth, p_real, q_real)  # R = 0: the arm does not depend on g
    p_nom, q_nom = _nominal_pair(params, xi, mask, specific, gamma, dtype)
    p_out = p_real + (p_nom - jax.lax.stop_gradient(p_nom))
    q_out = q_real + (q_nom - jax.lax.stop_gradient(q_nom))
    valid = jnp.where(specific, arm_ok, gamma >= 0)
    return WeightedRandomizedResponseEvent(v.valid_or_nan(valid, p_out),
                                           v.valid_or_nan(valid, q_out))


def _nominal_pair(params, xi, mask, specific, gamma, dtype):
    """The real-valued (P, Q) of the module doc (for the gradient of :func:`channel_event`)."""
    positive = mask & (xi > 0) & jnp.isfinite(xi)
    rates = jnp.where(positive, 1.0 / jnp.expm1(jnp.where(positive, xi, 1.0)), 0.0)
    total = jnp.sum(rates, axis=-1)
    largest = jnp.max(jnp.where(mask, xi, -jnp.inf), axis=-1)
    a_min = jnp.where(jnp.isfinite(largest), 1.0 / jnp.expm1(jnp.maximum(largest, 1e-30)), 0.0)
    p_arm, q_arm = (1.0 + a_min) / (1.0 + total), a_min / (1.0 + total)
    k = jnp.asarray(params.num_arms, dtype)
    finite = jnp.isfinite(gamma) & (gamma >= 0)
    decay = jnp.exp(-jnp.where(finite, gamma, 0.0))
    q_krr = jnp.where(finite, decay / (1.0 + (k - 1.0) * decay), 0.0)  # 1 / (K - 1 + e^gamma)
    p_krr = 1.0 - (k - 1.0) * q_krr
    return jnp.where(specific, p_arm, p_krr), jnp.where(specific, q_arm, q_krr)


def privacy_event(params: EpsilonGreedyParams):
    """The per-visitor claim at ``params`` (module doc): ``KaryRandomizedResponseEvent(gamma,
    K)`` where no point is arm-specific, else :func:`channel_event`."""
    strategy = params.strategy
    if v.is_concrete(strategy) and not np.any(np.asarray(strategy) == budgets_lib.ARM_SPECIFIC):
        return KaryRandomizedResponseEvent(params.gamma, jnp.asarray(params.num_arms, jnp.int32))
    return channel_event(params)


def _draws_segment(config: PolicyConfig) -> bool:
    return not config.replay_segments and config.num_segments > 1


def release_arm(words, greedy_values, mask, widths, capped, num_arms, dtype):
    """The shown arm from one release (two uint32 words): ``(arm, greedy)``.

    :func:`ldpjax.mechanisms.weighted_randomized_response_from_bits` decides explore-or-not and
    the explored arm against the integer ``widths`` (:func:`ldpjax.bandits.budgets.release_widths`);
    on the greedy branch its spare uniform (independent of the report) picks the greedy arm among
    tied maxima of ``greedy_values``. The mechanism is handed category 0 (always valid): its
    report is used only on the exploring branch, which does not depend on the category, so the
    greedy arm (a function of the spare) replaces it on the other. ``dtype`` is that of the
    spare uniform.
    """
    report, explored, spare = weighted_randomized_response_from_bits(
        words, jnp.zeros((), jnp.int32), widths, capped, num_arms)
    greedy = pick_tied_max(greedy_values, mask, spare.astype(dtype))
    arm = jnp.where(explored, report, greedy)
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
    Simulate it with :func:`epsilon_greedy_hints` of the same config.

    Example:
      >>> from ldpjax import bandits
      >>> from ldpjax.engine import make_key, record, simulate
      >>> env = bandits.make_environment([0.324, 0.295])
      >>> alg = bandits.epsilon_greedy(bandits.PolicyConfig())
      >>> params = bandits.epsilon_greedy_params(env, "constant", 1.0)
      >>> out = simulate(alg, params, make_key(0), 16, num_seeds=3, record=record.total("click"),
      ...                hints=bandits.epsilon_greedy_hints(bandits.PolicyConfig()))
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
        explore_prob, _, spend, widths, capped = budgets_lib.exploration(
            params.strategy, params.gamma, params.arm_budgets,
            clock_of(config, state, segment), params.num_arms, mask, init_steps,
            init_constant=config.init_constant, with_widths=True,
        )
        return mask, explore_prob, widths, capped, spend

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
        mask, explore_prob, widths, capped, spend = policy(params, state, segment)
        arm, greedy = release_arm(words[:2], segment_ctr(state, segment), mask, widths, capped,
                                  params.num_arms, dtype)
        click = (uniform_from_bits(words[2], dtype) < arm_ctr(params.ctr[segment], arm))
        return finish(params, state, segment, greedy, arm, click.astype(jnp.int32), explore_prob,
                      spend)

    def step_sampling(params: EpsilonGreedyParams, state: BanditState, inputs, key):
        seg_key, tie_key, report_key, click_key = jax.random.split(key, 4)
        if config.replay_segments:
            segment = jnp.asarray(inputs, jnp.int32)
        else:
            segment = sample_segment(seg_key, params.segment_probs)  # data sampling
        mask, explore_prob, widths, capped, spend = policy(params, state, segment)
        # algorithm randomness: the greedy arm among ties (K uniforms)
        greedy = random_tie_argmax(tie_key, estimated_ctr(state)[segment], mask)
        # privacy noise: the mechanism's own words (report_bits), decided on the integer widths
        words = report_bits(report_key, (2,))
        arm, _, _ = weighted_randomized_response_from_bits(words, greedy, widths, capped,
                                                           params.num_arms)
        # data sampling: the visitor's click
        click = jax.random.bernoulli(click_key, params.ctr[segment, arm]).astype(jnp.int32)
        return finish(params, state, segment, greedy, arm, click, explore_prob, spend)

    def validate(params: EpsilonGreedyParams, inputs) -> None:
        check_params(params, config.num_segments, config.max_arms)
        check_segment_inputs(inputs, config.num_segments, config.replay_segments)

    # run it with epsilon_greedy_hints(config)
    return Algorithm(init, step_fast if fast else step_sampling, validate, privacy_event)


def epsilon_greedy_hints(config: PolicyConfig) -> ExecutionHints:
    """How to execute :func:`epsilon_greedy` for ``config`` (``simulate(..., hints=...)``).

    The fast step (``config.fast``) runs grid-major and two visitors per trip of the scan's
    loop: its float arithmetic on per-seed words and per-point params is exact or divisions
    and comparisons, so the grid-major layout gives the same records bit for bit
    (tests/bandits/test_grid_major.py), and it is small enough that the loop's own cost is a
    large share of it (measurements in ``docs/pages/engine.md``, "Scan unroll"). The sampling
    step keeps the engine's defaults.

    Example:
      >>> from ldpjax import bandits
      >>> bandits.epsilon_greedy_hints(bandits.PolicyConfig())
      ExecutionHints(grid_major=True, scan_unroll=2, cpu_compiler_options=())
      >>> bandits.epsilon_greedy_hints(bandits.PolicyConfig(fast=False)).scan_unroll
      1
    """
    if not isinstance(config, PolicyConfig):
        raise TypeError(f"config must be a PolicyConfig; got {type(config).__name__}")
    return ExecutionHints(grid_major=True, scan_unroll=2) if config.fast else ExecutionHints()


__all__ = [
    "EpsilonGreedyParams",
    "channel_event",
    "epsilon_greedy_hints",
    "check_params",
    "computed_once",
    "epsilon_greedy",
    "epsilon_greedy_params",
    "privacy_event",
    "release_arm",
    "segment_ctr",
]
