"""Gittins-index policy for Bernoulli arms with Beta priors (the paper's non-private benchmark).

Paper 002, Sec. 4 (footnote 3: the Gittins index policy is deterministic, hence not private).
Each segment x arm keeps a Beta(a0 + successes, b0 + failures) posterior; the visitor is shown
the arm with the largest Gittins index (ties at random). The spend of a deterministic policy
is xi = inf.

Computation of the index table (documented choice; the paper is silent):

* Calibration (Gittins & Jones 1974): for a retirement reward lambda per step, the value of a
  state (a, b) with posterior mean mu = a / (a + b) is
  V(a, b) = max(lambda / (1 - delta), mu + delta [mu V(a+1, b) + (1 - mu) V(a, b+1)]); the
  index nu(a, b) is the lambda at which continuing and retiring are equally good.
* Transitions only increase n = successes + failures, so V for all states follows by one
  backward induction over the diagonals n = H, ..., 0 of a truncated state space (value
  iteration that terminates after H sweeps), done for a grid of ``num_prices`` lambdas at once
  (vectorised over lambda). At depth H the posterior is frozen: V = max(lambda, mu) / (1 - delta).
  H = ``max_count`` + ``extra_depth`` with extra_depth = ceil(log(0.01) / log(delta)) by default
  (459 for delta = 0.99): the frozen tail weighs at most 1% of the value and, because the
  posterior is concentrated by then, moves the indices by < 1e-5 (checked against depth 1500).
* The continuation advantage D(lambda) = C(lambda) - lambda / (1 - delta) is strictly decreasing
  and convex in lambda; its root (the index) is located on a grid that is uniform on the logit
  scale (indices crowd near 0 and 1). Between the two bracketing grid points the secant root
  is an upper bound and the Newton roots from either end (dD/dlambda is propagated through the
  induction) are lower bounds, by convexity; the table stores the midpoint and
  ``interpolation_error`` the largest half-width (a certified bound, truncation aside).
* The table covers successes + failures <= ``max_count``. Beyond it the index is extrapolated
  with the large-n asymptotics of the exploration bonus (Brezzi & Lai 2002: bonus ~ 1/n):
  nu(a, b) = mu + bonus_N(mu) (N + a0 + b0) / (n + a0 + b0), where bonus_N(mu) is the table's
  bonus nu - mu on the last diagonal n = N, interpolated in mu.

The table is a NumPy float64 array computed once per (max_count, discount, prior, num_prices)
(cached) and baked into the compiled step as a constant that the scan indexes. Defaults
(max_count 100, delta = 0.99, 1024 prices): about 1.5 s on one CPU core, certified
interpolation error about 5e-4; at delta = 0.9 the index of Beta(1, 1) is 0.70289 (Gittins'
tables: 0.7029).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.bandits.baselines import check_baseline_params
from ldpjax.bandits.environment import (
    Environment,
    argmax_random_ties,
    arm_mask,
    best_ctr,
    ctr_ok,
    check_segment_inputs,
)
from ldpjax.bandits.state import (
    BanditOutputs,
    BanditState,
    PolicyConfig,
    init_state,
    observe,
    segment_of,
)
from ldpjax.engine import Algorithm
from ldpjax.mechanisms import NoPrivacyEvent
from ldpjax.types import Array, ArrayLike


class GittinsTable(NamedTuple):
    """index[s, f]: Gittins index after s successes and f failures (NaN where s + f > N)."""

    index: np.ndarray
    discount: float
    prior: tuple[float, float]
    max_count: int
    depth: int
    interpolation_error: float  # certified bound on |table - exact calibration index|


@functools.lru_cache(maxsize=16)
def gittins_table(
    max_count: int = 100,
    discount: float = 0.99,
    *,
    prior: tuple[float, float] = (1.0, 1.0),
    num_prices: int = 1024,
    extra_depth: int | None = None,
) -> GittinsTable:
    """Gittins indices of Bernoulli arms with a Beta prior by calibration (see module doc).

    Args:
      max_count: largest number of observations (successes + failures) in the table, >= 0.
      discount: delta in (0, 1).
      prior: Beta prior (a0, b0), both > 0.
      num_prices: size of the lambda grid on [0, 1], >= 16.
      extra_depth: look-ahead beyond ``max_count`` (default: delta^depth <= 0.01).

    Example:
      >>> round(float(gittins_table(6, 0.9, num_prices=512).index[0, 0]), 3)  # Gittins: 0.7029
      0.703
    """
    v.check_integer("max_count", max_count, 0)
    v.check_range("discount", discount, 0.0, 1.0, low_open=True, high_open=True)
    a0, b0 = (float(x) for x in prior)
    v.check_range("prior", np.array([a0, b0]), 0.0, np.inf, low_open=True, high_open=True)
    v.check_integer("num_prices", num_prices, 16)
    if extra_depth is None:
        extra_depth = math.ceil(math.log(1e-2) / math.log(discount))
    v.check_integer("extra_depth", extra_depth, 1)
    depth = int(max_count) + int(extra_depth)
    # Grid uniform on the logit scale (indices crowd near 0 and 1), plus the end points.
    logits = np.linspace(-12.0, 12.0, int(num_prices) - 2)
    prices = np.concatenate([[0.0], 1.0 / (1.0 + np.exp(-logits)), [1.0]])[:, None]
    scale = 1.0 / (1.0 - discount)
    retire = prices * scale
    successes = np.arange(depth + 1)
    mean = (a0 + successes) / (a0 + b0 + depth)
    value = np.maximum(prices, mean[None, :]) * scale
    slope = np.where(prices > mean[None, :], scale, 0.0)  # dV / dlambda
    index = np.full((max_count + 1, max_count + 1), np.nan)
    half_width = 0.0
    for n in range(depth - 1, -1, -1):
        successes = np.arange(n + 1)
        mean = (a0 + successes) / (a0 + b0 + n)
        cont = mean + discount * (mean * value[:, 1 : n + 2] + (1.0 - mean) * value[:, : n + 1])
        cont_slope = discount * (mean * slope[:, 1 : n + 2] + (1.0 - mean) * slope[:, : n + 1])
        if n <= max_count:
            adv = cont - retire  # D(lambda): strictly decreasing and convex
            adv_slope = cont_slope - scale
            lo = np.clip(np.sum(adv >= 0, axis=0) - 1, 0, prices.shape[0] - 2)
            hi = lo + 1
            lam_lo, lam_hi = prices[lo, 0], prices[hi, 0]
            d_lo, d_hi = adv[lo, successes], adv[hi, successes]
            secant = lam_lo + (lam_hi - lam_lo) * d_lo / (d_lo - d_hi)  # >= root (convexity)
            newton_lo = lam_lo - d_lo / adv_slope[lo, successes]  # <= root
            newton_hi = lam_hi - d_hi / adv_slope[hi, successes]  # <= root
            lower = np.clip(np.maximum(newton_lo, newton_hi), lam_lo, secant)
            index[successes, n - successes] = 0.5 * (lower + secant)
            half_width = max(half_width, float(np.max(0.5 * (secant - lower))))
        keep = retire >= cont
        value = np.where(keep, retire, cont)
        slope = np.where(keep, scale, cont_slope)
    return GittinsTable(index, float(discount), (a0, b0), int(max_count), depth, half_width)


def gittins_index(table: GittinsTable, successes: ArrayLike, failures: ArrayLike) -> Array:
    """Index of Beta(a0 + s, b0 + f): table lookup, 1/n bonus extrapolation beyond the table.

    Example:
      >>> table = gittins_table(6, 0.9, num_prices=512)
      >>> bool(gittins_index(table, 3, 0) > gittins_index(table, 0, 3))
      True
    """
    a0, b0 = table.prior
    n_max = table.max_count
    idx = jnp.asarray(np.nan_to_num(table.index), jnp.result_type(float))
    diag_s = np.arange(n_max + 1)
    diag_mean = (a0 + diag_s) / (a0 + b0 + n_max)
    diag_bonus = table.index[diag_s, n_max - diag_s] - diag_mean
    s = jnp.asarray(successes)
    f = jnp.asarray(failures)
    n = s + f
    inside = n <= n_max
    looked_up = idx[jnp.clip(s, 0, n_max), jnp.clip(f, 0, n_max)]
    mean = (a0 + s) / (a0 + b0 + n)
    bonus = jnp.interp(mean, jnp.asarray(diag_mean, idx.dtype), jnp.asarray(diag_bonus, idx.dtype))
    extrapolated = mean + bonus * (n_max + a0 + b0) / (n + a0 + b0)
    return jnp.where(inside, looked_up, extrapolated)


@dataclasses.dataclass(frozen=True)
class GittinsConfig:
    """Static configuration: the policy shapes plus the index table's settings."""

    policy: PolicyConfig = PolicyConfig()
    max_count: int = 100
    discount: float = 0.99
    prior: tuple[float, float] = (1.0, 1.0)
    num_prices: int = 1024


class GittinsParams(NamedTuple):
    ctr: Array
    segment_probs: Array
    num_arms: Array


def gittins_params(env: Environment) -> GittinsParams:
    """Parameters of the Gittins policy (the environment's leaves).

    Example:
      >>> from ldpjax import bandits
      >>> gittins_params(bandits.make_environment([0.3, 0.2])).num_arms.item()
      2
    """
    if not isinstance(env, Environment):
        raise TypeError(
            f"env must be an Environment from bandits.make_environment; got {type(env).__name__}"
        )
    return GittinsParams(env.ctr, env.segment_probs, env.num_arms)


def _no_privacy(params) -> NoPrivacyEvent:
    return NoPrivacyEvent()


@functools.cache
def gittins_policy(config: GittinsConfig) -> Algorithm:
    """The Gittins-index policy as an engine algorithm (the table is computed here, once).

    **Not private**: the policy is deterministic given the data (ties aside), so the shown arm
    can reveal the segment; ``privacy_event`` is ``NoPrivacyEvent()`` and the ``spend`` output
    is inf.

    Example:
      >>> from ldpjax import bandits
      >>> from ldpjax.engine import make_key, record, simulate
      >>> cfg = bandits.GittinsConfig(max_count=8, discount=0.9, num_prices=64)
      >>> env = bandits.make_environment([0.3, 0.2])
      >>> out = simulate(gittins_policy(cfg), gittins_params(env), make_key(0), 16,
      ...                num_seeds=2, record=record.total("click"))
      >>> out.record.shape
      (2,)
    """
    if not isinstance(config, GittinsConfig):
        raise TypeError(f"config must be a GittinsConfig; got {type(config).__name__}")
    table = gittins_table(config.max_count, config.discount, prior=config.prior,
                          num_prices=config.num_prices)
    pc = config.policy

    def init(params: GittinsParams, key) -> BanditState:
        return init_state(pc)

    def step(params: GittinsParams, state: BanditState, inputs, key):
        # one draw: u[0] segment and u[1] click (data sampling), u[2:] ties between equal
        # indices (algorithm randomness; the policy releases no privacy noise)
        u = jax.random.uniform(key, (2 + pc.max_arms,), params.ctr.dtype)
        segment = segment_of(pc, params.segment_probs, inputs, u[0])
        mask = arm_mask(params.num_arms, pc.max_arms)
        shows, clicks = state.shows[segment], state.clicks[segment]
        index = gittins_index(table, clicks, shows - clicks)
        arm = argmax_random_ties(index, mask, u[2:])
        rate = params.ctr[segment, arm]
        click = (u[1] < rate).astype(jnp.int32)
        regret = best_ctr(params.ctr, params.num_arms)[segment] - rate
        regret = v.valid_or_nan(ctr_ok(params.ctr, params.num_arms), regret)  # fail closed
        spend = jnp.asarray(jnp.inf, params.ctr.dtype)
        state = observe(state, segment, arm, click)
        return state, BanditOutputs(segment, arm, arm, click, regret, spend,
                                    jnp.zeros((), params.ctr.dtype))

    def validate(params, inputs) -> None:
        check_baseline_params(params, pc)
        check_segment_inputs(inputs, pc.num_segments, pc.replay_segments)

    return Algorithm(init, step, validate, _no_privacy)


__all__ = [
    "GittinsConfig",
    "GittinsParams",
    "GittinsTable",
    "gittins_index",
    "gittins_params",
    "gittins_policy",
    "gittins_table",
]
