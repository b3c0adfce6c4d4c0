"""Budget-spending strategies: the visitor-level budget xi_t and the exploration it buys.

Paper 002, Sec. 3.3 and Appendix J (spec ``bandits.md``). Exploring uniformly with probability
eps is K-ary randomized response with xi = log(1 - K + K / eps) (eq. 12;
:func:`ldpjax.accounting.krr_budget` / :func:`~ldpjax.accounting.krr_explore_prob`).

Strategies (``STRATEGIES``; numeric codes so that a sweep over strategies is a ``vmap``):

* ``constant`` (0): xi_t = gamma, eps_t = K / (K + e^gamma - 1).
* ``dynamic`` (1), eq. 16: the standard epsilon-greedy decay eps_t = min(1, (K log c / c)^{1/3})
  of the clock c, i.e. xi_t = log(1 - K + K / eps_t), uncapped (its realised gamma is the spend
  at the last visitor). The first ``init_steps`` clock ticks (default K) are an initialisation
  period of uniform play (eps = 1, xi = 0): log 1 = 0 breaks the formula at c = 1. This is the
  paper's non-private epsilon-greedy benchmark.
* ``capped`` (2), eq. 17: xi_t = min(gamma, dynamic xi_t), i.e. eps_t = max(eps_t^dyn, eps_gamma);
  the cap starts to bind at t_gamma (:func:`ldpjax.bandits.budget_exhaustion_time`).
* ``arm_specific`` (3), Appendix J: arm j has its own budget xi_j. Showing the greedy arm g
  with probability 1 - eps + eps w_g and arm j != g with probability eps w_j, with
  eps = S / (1 + S), S = sum_j 1 / (e^{xi_j} - 1), w_j = (1 / (e^{xi_j} - 1)) / S, makes the
  likelihood ratio of showing arm j exactly e^{xi_j}; the visitor-level spend is max_j xi_j.
  Arms with xi_j = 0 force eps = 1 and take all exploration weight; xi_j = inf gives w_j = 0.
  Budgets are constant over time (the paper's Appendix J setting).

The clock c is the global visitor count or the visitor's segment's own count (static choice
in the policy config). Arms beyond ``num_arms`` (padding, so experiments with different K
share one compiled kernel) get no exploration weight.
"""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting import krr_budget, krr_explore_prob
from ldpjax.types import Array, ArrayLike

CONSTANT, DYNAMIC, CAPPED, ARM_SPECIFIC = 0, 1, 2, 3
STRATEGIES = {"constant": CONSTANT, "dynamic": DYNAMIC, "capped": CAPPED,
              "arm_specific": ARM_SPECIFIC}
STRATEGY_NAMES = {code: name for name, code in STRATEGIES.items()}


def strategy_code(strategy: str | int) -> int:
    """The numeric code of a strategy name (or a valid code)."""
    if isinstance(strategy, str):
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {tuple(STRATEGIES)}; got {strategy!r}")
        return STRATEGIES[strategy]
    if isinstance(strategy, bool) or int(strategy) != strategy or strategy not in STRATEGY_NAMES:
        raise ValueError(f"strategy must be one of {tuple(STRATEGIES)} or codes 0..3; "
                         f"got {strategy!r}")
    return int(strategy)


def dynamic_explore_prob(clock: ArrayLike, num_arms: ArrayLike, init_steps: ArrayLike) -> Array:
    """eq. 16: eps_c = min(1, (K log c / c)^{1/3}) after ``init_steps`` ticks of eps = 1.

    Args:
      clock: the 1-based clock c (visitor index, global or within the segment), >= 1.
      num_arms: K >= 2.
      init_steps: length of the initialisation period (uniform play), >= 1.
    """
    v.check_range("clock", clock, 1.0, jnp.inf)
    v.check_integer("num_arms", num_arms, 2)
    v.check_range("init_steps", init_steps, 1.0, jnp.inf)
    dtype = jnp.result_type(float)
    c = jnp.maximum(jnp.asarray(clock, dtype), 1.0)
    k = jnp.asarray(num_arms, dtype)
    decay = jnp.minimum(1.0, jnp.cbrt(k * jnp.log(c) / c))
    return jnp.where(c <= init_steps, 1.0, decay)


def arm_specific_exploration(arm_budgets: ArrayLike, arm_mask: ArrayLike | None = None):
    """Appendix J: (eps, weights, spend) for per-arm budgets xi_j.

    eps = S / (1 + S), S = sum_j 1/(e^{xi_j} - 1); w_j = (1/(e^{xi_j} - 1)) / S; the spend
    (the mechanism's worst-case log likelihood ratio) is max_j xi_j. Example: xi = (0.5, 1, 2)
    gives eps = 0.695, w = (0.676, 0.255, 0.069).

    Args:
      arm_budgets: xi_j in [0, inf], shape (..., K).
      arm_mask: optional boolean mask of real arms (padding arms are ignored).
    """
    v.check_range("arm_budgets", arm_budgets, 0.0, jnp.inf)
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
):
    """Exploration probability, exploration weights over arms and the spend xi_t.

    All four strategies are evaluated and the one with code ``strategy`` is selected (scalar
    arithmetic, so a ``vmap`` over strategies costs nothing extra). ``spend`` is the nominal
    visitor budget: gamma (constant), min(gamma, xi_dyn) (capped) -- never above gamma by
    construction --, xi_dyn (dynamic) or max_j xi_j (arm-specific).

    Args:
      strategy: code in ``STRATEGIES`` (0..3).
      gamma: experiment budget in [0, inf].
      arm_budgets: per-arm budgets (arm-specific strategy), in [0, inf].
      clock: the 1-based clock of the visitor, >= 1.
      num_arms: K >= 2 arms in use; ``arm_mask`` marks them among the padded columns.
      init_steps: uniform-play initialisation period of the dynamic schedules, >= 1.

    Returns:
      ``(explore_prob, weights, spend)`` with weights of shape ``arm_mask.shape``.
    """
    v.check_integer("strategy", strategy, 0, 3)
    v.check_range("gamma", gamma, 0.0, jnp.inf)
    mask = jnp.asarray(arm_mask, bool)
    dtype = jnp.result_type(gamma, float)
    k = jnp.asarray(num_arms, dtype)
    uniform = mask / k
    gamma = jnp.asarray(gamma, dtype)
    eps_gamma = krr_explore_prob(gamma, k)
    eps_dyn = dynamic_explore_prob(clock, k, init_steps)
    xi_dyn = krr_budget(eps_dyn, k)
    eps_arm, w_arm, xi_arm = arm_specific_exploration(arm_budgets, mask)
    strategy = jnp.asarray(strategy)
    eps = jnp.select(
        [strategy == CONSTANT, strategy == DYNAMIC, strategy == CAPPED],
        [eps_gamma, eps_dyn, jnp.maximum(eps_dyn, eps_gamma)],
        eps_arm,
    )
    spend = jnp.select(
        [strategy == CONSTANT, strategy == DYNAMIC, strategy == CAPPED],
        [gamma, xi_dyn, jnp.minimum(xi_dyn, gamma)],
        xi_arm,
    )
    weights = jnp.where(strategy == ARM_SPECIFIC, w_arm, uniform)
    return eps.astype(dtype), weights.astype(dtype), spend.astype(dtype)


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
    "arm_specific_exploration",
    "dynamic_explore_prob",
    "exploration",
    "show_probabilities",
    "strategy_code",
]
