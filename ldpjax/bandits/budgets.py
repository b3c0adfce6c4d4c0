"""Budget-spending strategies: the visitor-level budget xi_t and the exploration it buys.

Ponte & Ferecatu, "A Privacy Budgeting Framework for Online Experimentation", Sec. 3.3 and
Appendix J. Exploring uniformly with probability eps is K-ary randomized response with
xi = log(1 - K + K / eps) (eq. 12; :func:`ldpjax.accounting.krr_budget` /
:func:`~ldpjax.accounting.krr_explore_prob`).

Strategies (numeric codes so that a sweep over strategies is a ``vmap``). The names are those
of the paper and of the portfolio allocation, and they round-trip:
``STRATEGIES[STRATEGY_NAMES[code]] == code`` for every code.

* ``"constant"`` (0): xi_t = gamma, eps_t = K / (K + e^gamma - 1).
* ``"uncapped"`` (1), eq. 16: the standard epsilon-greedy decay eps_t = min(1, (K log c / c)^{1/3})
  of the clock c, i.e. xi_t = log(1 - K + K / eps_t), with no budget: its spend grows with the
  horizon. This is the paper's *non-private* epsilon-greedy benchmark, so it takes gamma = inf
  (a concrete finite gamma raises ``ValueError``; a traced one is applied as a cap, i.e. the
  run behaves as ``"dynamic"`` and never spends more than gamma). The first ``init_steps``
  clock ticks (default K) are an initialisation period of uniform play (eps = 1, xi = 0):
  log 1 = 0 breaks the formula at c = 1. The paper is silent on an initialisation of the
  constant strategy; ``PolicyConfig(init_constant=True)`` gives it the same ``init_steps``
  uniform-play start (default ``False``: xi_t = gamma from the first visitor).
* ``"dynamic"`` (2; alias ``"capped"``), eq. 17 -- what "dynamic" means under a budget:
  xi_t = min(gamma, dynamic xi_t), i.e. eps_t = max(eps_t^dyn, eps_gamma); the cap starts to
  bind at t_gamma (:func:`ldpjax.bandits.budget_exhaustion_time`). This is the strategy code
  that :func:`ldpjax.bandits.allocate_budget` returns for "dynamic" and the one
  :func:`ldpjax.bandits.regret_bound_dynamic` bounds.
* ``"arm_specific"`` (3), Appendix J: arm j has its own budget xi_j. Showing the greedy arm g
  with probability 1 - eps + eps w_g and arm j != g with probability eps w_j, with
  eps = S / (1 + S), S = sum_j 1 / (e^{xi_j} - 1), w_j = (1 / (e^{xi_j} - 1)) / S, makes the
  likelihood ratio of showing arm j exactly e^{xi_j}; the visitor-level spend is max_j xi_j.
  Arms with xi_j = 0 force eps = 1 and take all exploration weight; xi_j = inf gives w_j = 0.
  Budgets are constant over time (the paper's Appendix J setting). A finite budget whose arm
  probability eps w_j is below 2^-32 is refused (:func:`check_arm_budgets`).

:func:`exploration` gives the nominal (float) eps, weights and spend; :func:`release_widths`
the integer widths the release decides on, computed from the budgets themselves (gamma, xi_j),
so that every visitor's realised channel is within the claim.

(Before this naming, ``"dynamic"`` selected the uncapped code 1 while the portfolio called the
capped code 2 "dynamic": passing an allocation's strategy name back overspent its budget.)

The clock c is the global visitor count or the visitor's segment's own count (static choice
in the policy config). Arms beyond ``num_arms`` (padding, so experiments with different K
share one compiled kernel) get no exploration weight.

Fail closed: :func:`exploration` with a traced invalid gamma (negative, NaN), invalid arm
budgets or an unknown strategy code returns eps = 1 (uniform play: the most private outcome)
and a NaN spend -- never fewer explorations than the budget asks for.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import krr_budget, krr_explore_prob
from ldpjax.mechanisms.kary import (
    MIN_EXPLORE_PROB,
    budget_width,
    category_width,
    weighted_category_widths,
)
from ldpjax.types import Array, ArrayLike

CONSTANT, DYNAMIC, CAPPED, ARM_SPECIFIC = 0, 1, 2, 3
UNCAPPED = DYNAMIC  # code 1: the uncapped decay (non-private benchmark, gamma = inf)
# canonical name of every code (the inverse of STRATEGIES on these names)
STRATEGY_NAMES = {CONSTANT: "constant", UNCAPPED: "uncapped", CAPPED: "dynamic",
                  ARM_SPECIFIC: "arm_specific"}
# name -> code; "capped" is an alias of "dynamic" (code 2)
STRATEGIES = {"constant": CONSTANT, "uncapped": UNCAPPED, "dynamic": CAPPED, "capped": CAPPED,
              "arm_specific": ARM_SPECIFIC}


def strategy_code(strategy: str | int) -> int:
    """The numeric code of a strategy name (or a valid code).

    Example:
      >>> strategy_code("dynamic"), strategy_code(STRATEGY_NAMES[2]), strategy_code("capped")
      (2, 2, 2)
    """
    if isinstance(strategy, str):
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {tuple(STRATEGIES)}; got {strategy!r}")
        return STRATEGIES[strategy]
    message = f"strategy must be one of {tuple(STRATEGIES)} or codes 0..3; got {strategy!r}"
    if isinstance(strategy, (bool, np.bool_)) or np.ndim(strategy) != 0:
        raise ValueError(message)
    try:
        value = float(strategy)
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if value not in STRATEGY_NAMES:  # NaN, inf, fractions and unknown codes
        raise ValueError(message)
    return int(value)


def check_strategy_budget(strategy, gamma) -> None:
    """Concrete check: the uncapped strategy (code 1) takes gamma = inf only.

    A finite gamma with the uncapped decay would be a budget the run does not keep (its spend
    grows with the horizon); use ``"dynamic"`` (capped) for a budgeted run.
    """
    if not (v.is_concrete(strategy) and v.is_concrete(gamma)):
        return
    codes, gammas = np.broadcast_arrays(np.asarray(strategy), np.asarray(gamma, np.float64))
    bad = (codes == UNCAPPED) & ~(gammas == np.inf)
    if np.any(bad):
        raise ValueError(
            "gamma must be inf for the 'uncapped' strategy (code 1: the non-private decay, "
            f"whose spend grows with the horizon); got {gammas[bad].ravel()[:3].tolist()}. "
            "Use 'dynamic' (code 2, capped at gamma) for a budgeted run"
        )


def dynamic_explore_prob(clock: ArrayLike, num_arms: ArrayLike, init_steps: ArrayLike) -> Array:
    """eq. 16: eps_c = min(1, (K log c / c)^{1/3}) after ``init_steps`` ticks of eps = 1.

    Args:
      clock: the 1-based clock c (visitor index, global or within the segment), >= 1.
      num_arms: K >= 2.
      init_steps: length of the initialisation period (uniform play), >= 1.

    Example:
      >>> import math
      >>> float(dynamic_explore_prob(2, 2, 2))  # initialisation period: uniform play
      1.0
      >>> bool(abs(float(dynamic_explore_prob(100, 2, 2)) - (2 * math.log(100) / 100) ** (1 / 3))
      ...      < 1e-6)
      True
    """
    v.check_range("clock", clock, 1.0, jnp.inf)
    v.check_integer("num_arms", num_arms, 2)
    v.check_range("init_steps", init_steps, 1.0, jnp.inf)
    dtype = jnp.result_type(float)
    c = jnp.maximum(jnp.asarray(clock, dtype), 1.0)
    k = jnp.asarray(num_arms, dtype)
    decay = jnp.minimum(1.0, cube_root(k * jnp.log(c) / c))
    return jnp.where(c <= init_steps, 1.0, decay)


def cube_root(y: ArrayLike) -> Array:
    """The real cube root, as ``jnp.cbrt``: sign(y) exp(log|y| / 3), refined by one Newton step.

    Within 2 ulp of the correctly rounded root (``jnp.cbrt``; checked against float64 in the
    tests); 0, +-inf and NaN map to themselves. Built from operations XLA vectorises:
    ``jnp.cbrt`` was the costliest operation of the per-visitor step on CPU, and the dynamic
    schedule evaluates it for every visitor.

    Example:
      >>> round(float(cube_root(27.0)), 5), round(float(cube_root(-8.0)), 5), float(cube_root(0.0))
      (3.0, -2.0, 0.0)
    """
    y = jnp.asarray(y, jnp.result_type(y, float))
    magnitude = jnp.abs(y)
    regular = (magnitude > 0) & jnp.isfinite(magnitude)
    safe = jnp.where(regular, magnitude, 1.0)  # no log(0) or inf / inf in the branch not taken
    guess = jnp.exp(jnp.log(safe) / 3.0)
    refined = (2.0 * guess + safe / (guess * guess)) / 3.0
    return jnp.where(regular, jnp.where(y < 0, -refined, refined), y)


def arm_specific_exploration(arm_budgets: ArrayLike, arm_mask: ArrayLike | None = None):
    """Appendix J: (eps, weights, spend) for per-arm budgets xi_j.

    eps = S / (1 + S), S = sum_j 1/(e^{xi_j} - 1); w_j = (1/(e^{xi_j} - 1)) / S; the spend
    (the mechanism's worst-case log likelihood ratio) is max_j xi_j. Example: xi = (0.5, 1, 2)
    gives eps = 0.695, w = (0.676, 0.255, 0.069).

    Args:
      arm_budgets: xi_j in [0, inf], shape (..., K).
      arm_mask: optional boolean mask of real arms (padding arms are ignored).

    Example:
      >>> eps, w, xi = arm_specific_exploration([0.5, 1.0, 2.0])  # spec, Appendix J
      >>> round(float(eps), 3), [round(x, 3) for x in w.tolist()], float(xi)
      (0.695, [0.676, 0.255, 0.069], 2.0)
    """
    v.check_range("arm_budgets", arm_budgets, 0.0, jnp.inf)
    if isinstance(arm_budgets, (list, tuple)):
        arm_budgets = np.asarray(arm_budgets, np.float64)
    xi = jnp.asarray(arm_budgets, jnp.result_type(arm_budgets, float))
    mask = jnp.ones(xi.shape, bool) if arm_mask is None else jnp.asarray(arm_mask, bool)
    zero = mask & (xi <= 0)
    any_zero = jnp.any(zero, axis=-1, keepdims=True)
    finite = mask & jnp.isfinite(xi) & (xi > 0)
    rates = jnp.where(finite, 1.0 / jnp.expm1(jnp.where(finite, xi, 1.0)), 0.0)
    total = jnp.sum(rates, axis=-1, keepdims=True)
    safe_total = jnp.where(total > 0, total, 1.0)
    weights = jnp.where(any_zero, zero / jnp.maximum(jnp.sum(zero, -1, keepdims=True), 1),
                        rates / safe_total)
    eps = jnp.where(any_zero[..., 0], 1.0, (total / (1.0 + total))[..., 0])
    spend = jnp.max(jnp.where(mask, xi, 0.0), axis=-1)
    valid = jnp.all(jnp.where(mask, xi >= 0, True), axis=-1)
    return v.valid_or_nan(valid, eps), weights, v.valid_or_nan(valid, spend)


def exploration(
    strategy: ArrayLike,
    gamma: ArrayLike,
    arm_budgets: ArrayLike,
    clock: ArrayLike,
    num_arms: ArrayLike,
    arm_mask: ArrayLike,
    init_steps: ArrayLike,
    *,
    init_constant: bool = False,
    with_widths: bool = False,
):
    """Exploration probability, exploration weights over arms and the spend xi_t.

    All four strategies are evaluated and the one with code ``strategy`` is selected (scalar
    arithmetic, so a ``vmap`` over strategies costs nothing extra). ``spend`` is the nominal
    visitor budget: gamma (constant), min(gamma, xi_dyn) (dynamic = capped, and uncapped, which
    has gamma = inf) -- never above gamma by construction -- or max_j xi_j (arm-specific).
    Traced invalid arguments fail closed: eps = 1 (uniform play), spend NaN.

    Args:
      strategy: code in ``STRATEGIES`` (0..3).
      gamma: experiment budget in [0, inf].
      arm_budgets: per-arm budgets (arm-specific strategy), in [0, inf].
      clock: the 1-based clock of the visitor, >= 1.
      num_arms: K >= 2 arms in use; ``arm_mask`` marks them among the padded columns.
      init_steps: uniform-play initialisation period of the dynamic schedules, >= 1.
      init_constant: static switch: the constant strategy also plays uniformly (eps = 1,
        xi_t = 0, within any budget) for the first ``init_steps`` clock ticks, so that both
        strategies start alike. Default ``False``: xi_t = gamma from the first visitor (the
        paper is silent on an initialisation of the constant strategy).
      with_widths: static switch: also return the integer widths of the release
        (:func:`release_widths`), sharing the schedule's arithmetic.

    Returns:
      ``(explore_prob, weights, spend)`` with weights of shape ``arm_mask.shape``
      (``with_widths``: ``+ (widths, capped)``).

    Example:
      >>> import jax.numpy as jnp
      >>> eps, w, xi = exploration(0, 1.0, jnp.zeros(2), 10, 2, jnp.ones(2, bool), 2)
      >>> round(float(eps), 4), round(float(xi), 4)  # K / (K + e - 1)
      (0.5379, 1.0)
    """
    v.check_integer("strategy", strategy, 0, 3)
    v.check_range("gamma", gamma, 0.0, jnp.inf)
    check_strategy_budget(strategy, gamma)
    mask = jnp.asarray(arm_mask, bool)
    dtype = jnp.result_type(gamma, float)
    k = jnp.asarray(num_arms, dtype)
    uniform = mask / k
    gamma = jnp.asarray(gamma, dtype)
    gamma_ok = gamma >= 0  # NaN fails
    safe_gamma = jnp.where(gamma_ok, gamma, 0.0)
    eps_gamma = krr_explore_prob(safe_gamma, k)
    eps_const, xi_const, start = eps_gamma, safe_gamma, None
    if init_constant:  # uniform start: 0-DP, so it never exceeds gamma
        start = jnp.asarray(clock, dtype) <= jnp.asarray(init_steps, dtype)
        eps_const = jnp.where(start, 1.0, eps_gamma)
        xi_const = jnp.where(start, 0.0, safe_gamma)
    eps_dyn = dynamic_explore_prob(clock, k, init_steps)
    xi_dyn = krr_budget(eps_dyn, k)
    eps_arm, w_arm, xi_arm = arm_specific_exploration(arm_budgets, mask)
    strategy = jnp.asarray(strategy)
    # codes 1 (uncapped, gamma = inf) and 2 (capped) share the capped formula: at gamma = inf
    # it is the uncapped decay, and a finite gamma is never overspent
    dynamic = (strategy == UNCAPPED) | (strategy == CAPPED)
    eps = jnp.where(
        strategy == CONSTANT, eps_const,
        jnp.where(dynamic, jnp.maximum(eps_dyn, eps_gamma), eps_arm),
    )
    spend = jnp.where(
        strategy == CONSTANT, xi_const,
        jnp.where(dynamic, jnp.minimum(xi_dyn, safe_gamma), xi_arm),
    )
    known = (strategy == CONSTANT) | dynamic | (strategy == ARM_SPECIFIC)
    arm_ok = ~jnp.isnan(eps_arm) | (strategy != ARM_SPECIFIC)
    valid = known & gamma_ok & arm_ok
    # fail closed: explore with probability 1 (uniform play), spend reported as NaN
    eps = jnp.where(valid, eps, 1.0)
    spend = v.valid_or_nan(valid, spend)
    weights = jnp.where((strategy == ARM_SPECIFIC) & valid, w_arm, uniform)
    out = eps.astype(dtype), weights.astype(dtype), spend.astype(dtype)
    if not with_widths:
        return out
    return out + _widths(strategy, safe_gamma, arm_budgets, eps_dyn, start, valid, mask,
                         num_arms)


def _widths(strategy, gamma, arm_budgets, eps_dyn, start, valid, mask, num_arms):
    """The release's widths from the schedule's pieces (see :func:`release_widths`)."""
    k = jnp.asarray(num_arms, jnp.int32)
    q_gamma, cap_gamma = budget_width(gamma, k)  # gamma = inf: 0
    q_one, cap_one = category_width(jnp.ones((), eps_dyn.dtype), k)
    q_dyn, cap_dyn = category_width(eps_dyn, k)
    q_const, cap_const = q_gamma, cap_gamma
    if start is not None:
        q_const, cap_const = jnp.where(start, q_one, q_gamma), jnp.where(start, cap_one, cap_gamma)
    constant = strategy == CONSTANT
    q = jnp.where(constant, q_const, jnp.maximum(q_dyn, q_gamma))
    capped = jnp.where(constant, cap_const, cap_dyn | cap_gamma)
    q = jnp.where(valid, q, q_one)  # fail closed: uniform play
    capped = jnp.where(valid, capped, cap_one)
    specific = (strategy == ARM_SPECIFIC) & valid
    xi = jnp.asarray(arm_budgets, gamma.dtype)
    w_arm, cap_arm = weighted_category_widths(jnp.where(mask, xi, jnp.inf), k)
    widths = jnp.where(specific[..., None], w_arm, jnp.where(mask, q[..., None], jnp.uint32(0)))
    return widths.astype(jnp.uint32), jnp.where(specific, cap_arm, capped)


def check_arm_budgets(strategy, arm_budgets, num_arms) -> None:
    """Concrete check: every arm in use of an arm-specific point is explored with probability
    eps w_j >= 2^-32 (one word in 2^32), or its budget is inf (never explored: no privacy) or
    some arm's budget is 0 (all exploration on the zero-budget arms).

    32-bit decisions cannot show an arm less often than one word in 2^32, so a finite budget
    whose nominal probability is below that (e.g. (0.5, 1, 22): arm 2 at 8.9e-11) is refused
    rather than released with another law. ``ValueError`` naming ``arm_budgets``.

    Example:
      >>> check_arm_budgets(ARM_SPECIFIC, [1.0, 17.0], 2)  # arm 1 at 2.6e-8: accepted
      >>> check_arm_budgets(ARM_SPECIFIC, [0.5, 1.0, 22.0], 3)
      Traceback (most recent call last):
      ...
      ValueError: arm_budgets must explore every arm in use with probability eps w_j >= 2^-32 ...
    """
    if not (v.is_concrete(strategy) and v.is_concrete(arm_budgets) and v.is_concrete(num_arms)):
        return
    xi = np.asarray(arm_budgets, np.float64)
    if xi.ndim < 1:
        return
    codes = np.broadcast_to(np.asarray(strategy), xi.shape[:-1])
    in_use = np.arange(xi.shape[-1]) < np.asarray(num_arms)[..., None]
    finite = in_use & (xi > 0) & np.isfinite(xi)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        rates = np.where(finite, 1.0 / np.expm1(np.where(finite, xi, 1.0)), 0.0)
        probs = rates / (1.0 + rates.sum(-1, keepdims=True))
    no_zero = ~np.any(in_use & (xi == 0), axis=-1, keepdims=True)
    bad = (codes == ARM_SPECIFIC)[..., None] & finite & no_zero & (probs < MIN_EXPLORE_PROB)
    if np.any(bad):
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"arm_budgets must explore every arm in use with probability eps w_j >= 2^-32 (the "
            f"resolution of 32-bit decisions); arm budget {float(xi[index])!r} at index {index} gives "
            f"{probs[index]:.3g}: lower it, or write inf (that arm is then never explored: no "
            f"privacy)"
        )


def release_widths(
    strategy: ArrayLike,
    gamma: ArrayLike,
    arm_budgets: ArrayLike,
    clock: ArrayLike,
    num_arms: ArrayLike,
    arm_mask: ArrayLike,
    init_steps: ArrayLike,
    *,
    init_constant: bool = False,
) -> tuple[Array, Array]:
    """The integer widths of the shown-arm channel: ``(widths, capped)``, uint32 (..., K_max).

    What the release decides on (:func:`ldpjax.mechanisms.weighted_randomized_response_from_bits`):
    arm j is shown on W_j of the 2^32 words when exploring, the greedy arm on the rest.

    * constant: W_j = Q_gamma = ceil(2^32 / (K - 1 + e^gamma)) on every arm in use, exact for
      gamma itself (:func:`ldpjax.mechanisms.budget_width`); uniform play (Q for p = 1) in a
      ``init_constant`` start;
    * dynamic (capped) and uncapped: max(Q_dyn, Q_gamma), Q_dyn = ceil(eps_dyn 2^32 / K) for the
      float eps_dyn (:func:`ldpjax.mechanisms.category_width`), so every visitor's realised
      epsilon is at most gamma (gamma = inf: Q_gamma = 0);
    * arm-specific: :func:`ldpjax.mechanisms.weighted_category_widths` of the budgets, exact
      for the budgets themselves.

    Widths are capped at floor(2^32 / K) (uniform) and ``capped`` says the leftover words redraw.
    A finite gamma beyond log(1 + K (2^32 - 1)) keeps one word per arm (more private than its
    claim, within 2^-32 of the nominal law).
    Traced invalid arguments (those :func:`exploration` fails closed on) give uniform play.

    Example:
      >>> import jax.numpy as jnp
      >>> w, capped = release_widths(0, 1.0, jnp.zeros(2), 10, 2, jnp.ones(2, bool), 2)
      >>> w.tolist(), bool(capped)  # ceil(2^32 / (1 + e)) on each arm
      ([1155094610, 1155094610], False)
    """
    out = exploration(strategy, gamma, arm_budgets, clock, num_arms, arm_mask, init_steps,
                      init_constant=init_constant, with_widths=True)
    return out[3], out[4]


def show_probabilities(explore_prob: ArrayLike, weights: ArrayLike, greedy_arm: ArrayLike):
    """P(show arm a) = eps w_a + (1 - eps) 1[a = greedy]: the randomized-response matrix row."""
    eps = jnp.asarray(explore_prob)[..., None]
    w = jnp.asarray(weights)
    onehot = jnp.arange(w.shape[-1]) == jnp.asarray(greedy_arm)[..., None]
    return eps * w + (1.0 - eps) * onehot


__all__ = [
    "ARM_SPECIFIC",
    "CAPPED",
    "CONSTANT",
    "DYNAMIC",
    "STRATEGIES",
    "STRATEGY_NAMES",
    "UNCAPPED",
    "arm_specific_exploration",
    "check_arm_budgets",
    "check_strategy_budget",
    "cube_root",
    "dynamic_explore_prob",
    "exploration",
    "release_widths",
    "show_probabilities",
    "strategy_code",
]
