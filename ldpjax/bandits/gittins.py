"""Gittins-index policy for Bernoulli arms with Beta priors (the paper's non-private benchmark).

*A Privacy Budgeting Framework for Online Experimentation*, Sec. 4 (footnote 3: the Gittins
index policy is deterministic, hence not private). Each segment x arm keeps a
Beta(a0 + successes, b0 + failures) posterior; the visitor is shown the arm with the largest
Gittins index (ties at random). The spend of a deterministic policy is xi = inf.

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

Two implementations of the same calibration:

* :func:`gittins_table`: the NumPy float64 **reference** (cached per argument set). Defaults
  (max_count 100, delta = 0.99, 1024 prices): certified interpolation error about 5e-4; at
  delta = 0.9 the index of Beta(1, 1) is 0.70289 (Gittins' tables: 0.7029).
* :func:`gittins_index_table`: the JAX port used by the policy, a traceable function of the
  discount and the prior (``vmap`` over discounts compiles once). It iterates the normalised
  value W = (1 - delta) V in [0, 1] (same roots) in the dtype of the discount. The table's
  *size* is static (:class:`GittinsConfig`: ``max_count``, ``num_prices`` and the depth H,
  sized for ``max_discount``). Agreement with the reference is tested within both certified
  half-widths plus a float rounding bound (``tests/bandits/test_gittins.py``).

Discount and prior are **params leaves** (:class:`GittinsParams`); the table is a derived leaf
that :func:`gittins_params` computes from them (once per grid point: computing it in ``init``
would repeat it for every seed). ``validate`` recomputes it from the concrete discount and
prior and rejects a stale table (e.g. after ``params._replace(discount=...)``).
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
from ldpjax.accounting import NoPrivacyEvent
from ldpjax.bandits.baselines import check_baseline_params
from ldpjax.bandits.environment import (
    Environment,
    argmax_random_ties,
    arm_mask,
    best_ctr,
    check_segment_inputs,
    ctr_ok,
)
from ldpjax.bandits.state import (
    BanditOutputs,
    BanditState,
    PolicyConfig,
    init_state,
    observe,
    segment_of,
)
from ldpjax.engine import Algorithm, ExecutionHints
from ldpjax.types import Array, ArrayLike


class GittinsTable(NamedTuple):
    """index[s, f]: Gittins index after s successes and f failures (NaN where s + f > N)."""

    index: np.ndarray
    discount: float
    prior: tuple[float, float]
    max_count: int
    depth: int
    interpolation_error: float  # certified bound on |table - exact calibration index|


def default_extra_depth(discount: float) -> int:
    """Look-ahead beyond the table at which delta^depth <= 0.01 (the frozen tail's weight).

    Example:
      >>> default_extra_depth(0.99)
      459
    """
    v.check_range("discount", discount, 0.0, 1.0, low_open=True, high_open=True)
    return math.ceil(math.log(1e-2) / math.log(float(discount)))


def _price_grid(num_prices: int) -> np.ndarray:
    """Prices on [0, 1], uniform on the logit scale (indices crowd near 0 and 1), plus 0 and 1."""
    logits = np.linspace(-12.0, 12.0, int(num_prices) - 2)
    return np.concatenate([[0.0], 1.0 / (1.0 + np.exp(-logits)), [1.0]])


@functools.lru_cache(maxsize=16)
def gittins_table(
    max_count: int = 100,
    discount: float = 0.99,
    *,
    prior: tuple[float, float] = (1.0, 1.0),
    num_prices: int = 1024,
    extra_depth: int | None = None,
) -> GittinsTable:
    """NumPy float64 reference: Gittins indices by calibration (see module doc).

    The policy uses the JAX port :func:`gittins_index_table`; this is the reference it is
    tested against.

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
        extra_depth = default_extra_depth(discount)
    v.check_integer("extra_depth", extra_depth, 1)
    depth = int(max_count) + int(extra_depth)
    prices = _price_grid(num_prices)[:, None]
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




# --------------------------------------------------------------------------------------------
# JAX port (traceable in the discount and the prior)

# Local rounding error of one backward sweep of W = (1 - delta) V in [0, 1], in units of the
# unit roundoff u: the posterior mean (3 roundings), the weighted continuation (8), the max and
# the root formulas (secant/Newton, 4); 16 >= 15 with a margin.
_ROUNDINGS_PER_SWEEP = 16


class IndexTable(NamedTuple):
    """A JAX Gittins table: ``index[s, f]`` (NaN where s + f > N) and its error bounds.

    ``interpolation_error``: the certified bracket half-width (as in :class:`GittinsTable`).
    ``rounding_error``: a bound on the float rounding of the backward induction: a sweep adds
    at most c u to W = (1 - delta) V (c = 16 roundings of unit roundoff u, values in [0, 1])
    and shrinks the error already there by delta, so |dW| <= c u / (1 - delta); a root of
    D = C - lambda moves by at most that over |D'| at the root, and |D'| >= |D'(lambda_hi)|
    (D is convex): the max over the table of c u / ((1 - delta) |D'(lambda_hi)|).
    """

    index: Array
    interpolation_error: Array
    rounding_error: Array


@dataclasses.dataclass(frozen=True)
class GittinsConfig:
    """Static configuration: the policy shapes plus the index table's *size*.

    The discount and the prior are params leaves (:func:`gittins_params`), not config.

    Attributes:
      policy: the shared bandit shapes (segments, arms, replay).
      max_count: N >= 0; the table covers successes + failures <= N (extrapolated beyond).
      max_discount: the largest discount the params may hold, in (0, 1); it sizes the
        calibration depth H = N + extra_depth.
      num_prices: size of the lambda grid on [0, 1], >= 16.
      extra_depth: look-ahead beyond N (default: ``default_extra_depth(max_discount)``, i.e.
        max_discount^extra_depth <= 0.01).
    """

    policy: PolicyConfig = PolicyConfig()
    max_count: int = 100
    max_discount: float = 0.99
    num_prices: int = 1024
    extra_depth: int | None = None

    def __post_init__(self):
        if not isinstance(self.policy, PolicyConfig):
            raise TypeError(f"policy must be a PolicyConfig; got {type(self.policy).__name__}")
        for name in ("max_count", "num_prices", "extra_depth"):
            value = getattr(self, name)
            if value is None and name == "extra_depth":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"{name} must be a Python int; got {value!r}")
        v.check_integer("max_count", self.max_count, 0)
        v.check_integer("num_prices", self.num_prices, 16)
        if self.extra_depth is not None:
            v.check_integer("extra_depth", self.extra_depth, 1)
        if isinstance(self.max_discount, bool) or not isinstance(self.max_discount,
                                                                 (float, int, np.floating)):
            raise TypeError(f"max_discount must be a Python float; got {self.max_discount!r}")
        v.check_range("max_discount", self.max_discount, 0.0, 1.0, low_open=True,
                      high_open=True)

    @property
    def depth(self) -> int:
        """The calibration depth H = max_count + extra_depth."""
        extra = self.extra_depth
        if extra is None:
            extra = default_extra_depth(self.max_discount)
        return int(self.max_count) + int(extra)


@functools.lru_cache(maxsize=32)
def _table_builder(max_count: int, depth: int, num_prices: int):
    """jit(discount, prior) -> IndexTable for one static table size (cached)."""
    prices_np = _price_grid(num_prices)
    s_grid, f_grid = np.meshgrid(np.arange(max_count + 1), np.arange(max_count + 1),
                                 indexing="ij")
    inside = s_grid + f_grid <= max_count
    diag_row = np.where(inside, s_grid + f_grid, 0).astype(np.int32)  # diag[n, s]: (s, n - s)
    s_grid = s_grid.astype(np.int32)
    num_segments = 8  # phase 1 runs in 8 pieces of shrinking static width (about half the work)

    def build(discount, prior) -> IndexTable:
        dtype = discount.dtype
        d = discount
        a0, b0 = prior[0], prior[1]
        lam = jnp.asarray(prices_np, dtype)[:, None]  # (P, 1)
        one = jnp.ones((), dtype)

        def continuation(n, value, slope):
            # entries s > n of the (static) width are never read; clipping their mean to 1
            # keeps them convex combinations in [0, 1] (finite; valid entries have mean < 1)
            s = jnp.arange(value.shape[1], dtype=dtype)
            mean = jnp.minimum((a0 + s) / (a0 + b0 + n.astype(dtype)), one)
            up_v = jnp.concatenate([value[:, 1:], value[:, -1:]], axis=1)
            up_g = jnp.concatenate([slope[:, 1:], slope[:, -1:]], axis=1)
            cont = (one - d) * mean + d * (mean * up_v + (one - mean) * value)
            cont_g = d * (mean * up_g + (one - mean) * slope)
            return cont, cont_g

        def retire_or_continue(cont, cont_g):
            keep = lam >= cont
            return jnp.where(keep, lam, cont), jnp.where(keep, one, cont_g)

        # depth H: frozen posterior, W = max(lambda, mu), dW/dlambda = [lambda > mu]
        s = jnp.arange(depth + 1, dtype=dtype)
        mean = (a0 + s) / (a0 + b0 + depth)
        value = jnp.maximum(lam, mean)
        slope = (lam > mean).astype(dtype)

        # phase 1: diagonals n = H - 1, ..., N + 1 (values only)
        piece = max(1, math.ceil((depth - 1 - max_count) / num_segments))
        n_hi = depth - 1
        while n_hi > max_count:
            n_lo = max(max_count + 1, n_hi - piece + 1)
            value, slope = value[:, : n_hi + 2], slope[:, : n_hi + 2]

            def sweep(i, carry, n_hi=n_hi):
                return retire_or_continue(*continuation(n_hi - i, *carry))

            value, slope = jax.lax.fori_loop(0, n_hi - n_lo + 1, sweep, (value, slope))
            n_hi = n_lo - 1
        value, slope = value[:, : max_count + 2], slope[:, : max_count + 2]

        # phase 2: diagonals n = N, ..., 0 (values and roots)
        width = max_count + 2
        cols = jnp.arange(width)
        unit = jnp.asarray(np.finfo(dtype).eps / 2, dtype)

        def root_sweep(i, carry):
            value, slope, diag, half_width, rounding = carry
            n = max_count - i
            cont, cont_g = continuation(n, value, slope)
            adv = cont - lam  # D(lambda) / (1 - delta): strictly decreasing and convex
            adv_g = cont_g - one
            lo = jnp.clip(jnp.sum(adv >= 0, axis=0) - 1, 0, num_prices - 2)
            hi = lo + 1
            lam_lo, lam_hi = lam[lo, 0], lam[hi, 0]

            def at(a, k):
                return jnp.take_along_axis(a, k[None, :], axis=0)[0]

            valid = cols <= n
            d_lo, d_hi = at(adv, lo), at(adv, hi)
            g_lo = jnp.where(valid, at(adv_g, lo), -one)
            g_hi = jnp.where(valid, at(adv_g, hi), -one)
            gap = jnp.where(valid, d_lo - d_hi, one)
            secant = lam_lo + (lam_hi - lam_lo) * d_lo / gap  # >= root (convexity)
            newton = jnp.maximum(lam_lo - d_lo / g_lo, lam_hi - d_hi / g_hi)  # <= root
            lower = jnp.clip(newton, lam_lo, secant)
            diag = diag.at[n].set((0.5 * (lower + secant))[: max_count + 1])
            half_width = jnp.maximum(half_width,
                                     jnp.max(jnp.where(valid, 0.5 * (secant - lower), 0)))
            bound = _ROUNDINGS_PER_SWEEP * unit / ((one - d) * jnp.abs(g_hi))
            rounding = jnp.maximum(rounding, jnp.max(jnp.where(valid, bound, 0)))
            value, slope = retire_or_continue(cont, cont_g)
            return value, slope, diag, half_width, rounding

        zero = jnp.zeros((), dtype)
        diag = jnp.zeros((max_count + 1, max_count + 1), dtype)
        _, _, diag, half_width, rounding = jax.lax.fori_loop(
            0, max_count + 1, root_sweep, (value, slope, diag, zero, zero))
        index = jnp.where(inside, diag[diag_row, s_grid], jnp.nan)
        return IndexTable(index, half_width, rounding)

    return jax.jit(build)


def _max_discount(config: GittinsConfig, dtype) -> float:
    """config.max_discount rounded to the params' dtype (float32(0.99) > 0.99)."""
    return float(np.asarray(config.max_discount, dtype))


def _as_float_leaf(value: ArrayLike, dtype=None) -> Array:
    arr = jnp.asarray(value)
    if dtype is None:
        dtype = arr.dtype if jnp.issubdtype(arr.dtype, jnp.floating) else jnp.result_type(float)
    return arr.astype(dtype)


def gittins_index_table(config: GittinsConfig, discount: ArrayLike,
                        prior: ArrayLike = (1.0, 1.0)) -> IndexTable:
    """The Gittins table of Beta(prior) Bernoulli arms at ``discount``, in JAX (module doc).

    A traceable function of ``discount`` (scalar) and ``prior`` (a0, b0): ``jax.vmap`` over a
    batch of discounts compiles once. Its size is static: ``config.max_count``,
    ``config.num_prices`` and the depth ``config.depth`` (sized for ``config.max_discount``).
    Computed in the dtype of ``discount`` (default float). Concrete values are validated:
    discount in (0, max_discount], prior entries in (0, inf).

    Returns:
      :class:`IndexTable`: ``index`` (N + 1, N + 1), ``interpolation_error``,
      ``rounding_error``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> cfg = GittinsConfig(max_count=6, max_discount=0.9, num_prices=512)
      >>> round(float(gittins_index_table(cfg, 0.9).index[0, 0]), 3)  # Gittins: 0.7029
      0.703
      >>> tables = jax.vmap(lambda d: gittins_index_table(cfg, d))(jnp.array([0.5, 0.9]))
      >>> tables.index.shape
      (2, 7, 7)
    """
    if not isinstance(config, GittinsConfig):
        raise TypeError(f"config must be a GittinsConfig; got {type(config).__name__}")
    discount = _as_float_leaf(discount)
    prior = _as_float_leaf(prior, discount.dtype)
    if discount.shape != () or prior.shape != (2,):
        raise ValueError(f"discount must be a scalar and prior a pair (a0, b0) (vmap for a "
                         f"batch); got shapes {discount.shape} and {prior.shape}")
    v.check_range("discount", discount, 0.0, _max_discount(config, discount.dtype),
                  low_open=True)
    v.check_range("prior", prior, 0.0, np.inf, low_open=True, high_open=True)
    return _table_builder(config.max_count, config.depth, config.num_prices)(discount, prior)


def _interp_diagonal(values: Array, position: Array) -> Array:
    """``jnp.interp(x, diag_mean, values)`` on the evenly spaced diagonal means
    diag_mean_j = (a0 + j) / (a0 + b0 + N), given position = x (a0 + b0 + N) - a0: linear
    between the neighbouring entries, constant beyond the ends (no search: the grid is even)."""
    last = values.shape[-1] - 1
    if last == 0:
        return jnp.broadcast_to(values[0], jnp.shape(position))
    position = jnp.clip(position, 0, last)
    left = jnp.clip(jnp.floor(position), 0, last - 1)
    fraction = position - left
    left = left.astype(jnp.int32)
    low, high = values[left], values[left + 1]
    return low + fraction * (high - low)


def _lookup(index: Array, prior: Array, successes, failures) -> Array:
    """Index of Beta(a0 + s, b0 + f): table lookup, 1/n bonus extrapolation beyond the table."""
    n_max = index.shape[-1] - 1
    a0, b0 = prior[0], prior[1]
    width = a0 + b0 + n_max
    diag_s = np.arange(n_max + 1)
    diag_bonus = index[diag_s, n_max - diag_s] - (a0 + diag_s) / width
    s = jnp.asarray(successes)
    f = jnp.asarray(failures)
    n = s + f
    looked_up = index[jnp.clip(s, 0, n_max), jnp.clip(f, 0, n_max)]  # NaN outside: not taken
    mean = (a0 + s) / (a0 + b0 + n)
    bonus = _interp_diagonal(diag_bonus, mean * width - a0)
    extrapolated = mean + bonus * width / (n + a0 + b0)
    return jnp.where(n <= n_max, looked_up, extrapolated)


def gittins_index(table, successes: ArrayLike, failures: ArrayLike) -> Array:
    """Index of Beta(a0 + s, b0 + f): table lookup, 1/n bonus extrapolation beyond the table.

    ``table``: a :class:`GittinsTable` (NumPy reference) or one grid point's
    :class:`GittinsParams` (its ``index`` and ``prior`` leaves).

    Example:
      >>> table = gittins_table(6, 0.9, num_prices=512)
      >>> bool(gittins_index(table, 3, 0) > gittins_index(table, 0, 3))
      True
    """
    if isinstance(table, GittinsTable):
        dtype = jnp.result_type(float)
        index = jnp.asarray(table.index, dtype)
        prior = jnp.asarray(table.prior, dtype)
    elif isinstance(table, GittinsParams):
        index, prior = jnp.asarray(table.index), jnp.asarray(table.prior)
    else:
        raise TypeError(f"table must be a GittinsTable or GittinsParams; got "
                        f"{type(table).__name__}")
    if index.ndim != 2 or prior.shape != (2,):
        raise ValueError(f"table must be one table (index (N + 1, N + 1), prior (2,)); got "
                         f"shapes {index.shape} and {prior.shape}")
    return _lookup(index, prior.astype(index.dtype), successes, failures)


class GittinsParams(NamedTuple):
    """Params of the Gittins policy: the environment, the discount and the Beta prior, and the
    index table derived from them by :func:`gittins_params` (rebuild it after changing them)."""

    ctr: Array
    segment_probs: Array
    num_arms: Array
    discount: Array  # () delta in (0, max_discount]
    prior: Array  # (2,) Beta prior (a0, b0)
    index: Array  # (N + 1, N + 1) gittins_index_table(config, discount, prior).index


def gittins_params(env: Environment, config: GittinsConfig | None = None,
                   discount: ArrayLike | None = None,
                   prior: ArrayLike = (1.0, 1.0)) -> GittinsParams:
    """Parameters of the Gittins policy: the environment's leaves, the discount (default
    ``config.max_discount``), the Beta prior and their index table (:func:`gittins_index_table`).

    Traceable in ``discount`` and ``prior``: a sweep over discounts is a ``vmap`` of this
    function (compiled once; one table per grid point, shared by all seeds).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from ldpjax import bandits
      >>> env = bandits.make_environment([0.3, 0.2])
      >>> cfg = GittinsConfig(max_count=8, max_discount=0.95, num_prices=64)
      >>> p = gittins_params(env, cfg, 0.9)
      >>> p.num_arms.item(), p.index.shape
      (2, (9, 9))
      >>> grid = jax.vmap(lambda d: gittins_params(env, cfg, d))(jnp.array([0.5, 0.9, 0.95]))
      >>> bool(jnp.all(jnp.diff(grid.index[:, 0, 0]) > 0))  # more patience, more exploration
      True
    """
    if not isinstance(env, Environment):
        raise TypeError(
            f"env must be an Environment from bandits.make_environment; got {type(env).__name__}"
        )
    config = GittinsConfig() if config is None else config
    if not isinstance(config, GittinsConfig):
        raise TypeError(f"config must be a GittinsConfig; got {type(config).__name__}")
    dtype = env.ctr.dtype
    discount = _as_float_leaf(config.max_discount if discount is None else discount,
                              dtype)
    prior = _as_float_leaf(prior, dtype)
    table = gittins_index_table(config, discount, prior)
    return GittinsParams(env.ctr, env.segment_probs, env.num_arms, discount, prior, table.index)


def _check_gittins_leaves(params, config: GittinsConfig) -> None:
    """Concrete validation of discount, prior and the derived table (grid-stacked or not)."""
    for name in ("discount", "prior", "index"):
        if not hasattr(params, name):
            raise TypeError(f"params must be GittinsParams (from gittins_params); got "
                            f"{type(params).__name__} without a {name} leaf")
    if not v.is_concrete((params.discount, params.prior, params.index)):
        return
    discount, prior, index = (np.asarray(x) for x in (params.discount, params.prior,
                                                         params.index))
    grid = discount.shape
    size = config.max_count + 1
    v.check_range("discount", discount, 0.0, _max_discount(config, discount.dtype),
                  low_open=True)
    if prior.shape != grid + (2,):
        raise ValueError(f"prior must have shape {grid + (2,)} (a pair (a0, b0) per grid "
                         f"point); got {prior.shape}")
    v.check_range("prior", prior, 0.0, np.inf, low_open=True, high_open=True)
    if index.shape != grid + (size, size):
        raise ValueError(f"index must have shape {grid + (size, size)} (max_count = "
                         f"{config.max_count} of the config); got {index.shape}")
    # recompute grid point by grid point (the compiled table of gittins_params, no vmap)
    build = _table_builder(config.max_count, config.depth, config.num_prices)
    flat_d = jnp.asarray(params.discount).reshape(-1)
    # in the discount's dtype, as gittins_index_table builds it (x64 with a float32 leaf)
    flat_p = jnp.asarray(params.prior, flat_d.dtype).reshape(-1, 2)
    tables = [build(flat_d[i], flat_p[i]) for i in range(flat_d.shape[0])]
    expected = np.stack([np.asarray(t.index) for t in tables]).reshape(index.shape)
    # both tables are midpoints of brackets of the same roots, each within its interpolation
    # and rounding bounds of them
    tol = np.array([2.0 * (float(t.interpolation_error) + float(t.rounding_error))
                    for t in tables]).reshape(grid + (1, 1))
    stale = np.isnan(index) != np.isnan(expected)
    with np.errstate(invalid="ignore"):
        stale |= np.abs(np.nan_to_num(index) - np.nan_to_num(expected)) > tol
    if np.any(stale):
        raise ValueError(
            "index must be the Gittins table of the params' discount and prior (rebuild the "
            "params with gittins_params after changing them); it differs from the recomputed "
            f"table at {int(stale.sum())} entries"
        )


def _params_ok(params: GittinsParams, config: GittinsConfig) -> Array:
    """The traced check: discount in (0, max_discount] and a finite positive prior."""
    d, prior = params.discount, params.prior
    return (d > 0) & (d <= config.max_discount) & jnp.all((prior > 0) & jnp.isfinite(prior))


def _no_privacy(params) -> NoPrivacyEvent:
    return NoPrivacyEvent()


@functools.cache
def gittins_policy(config: GittinsConfig) -> Algorithm:
    """The Gittins-index policy as an engine algorithm.

    Each visitor is shown the arm with the largest index (``params.index``, computed from the
    ``discount`` and ``prior`` leaves by :func:`gittins_params`; extrapolated beyond
    ``max_count`` observations) among the arms in use, ties at random.

    **Not private**: the policy is deterministic given the data (ties aside), so the shown arm
    can reveal the segment; ``privacy_event`` is ``NoPrivacyEvent()`` and the ``spend`` output
    is inf. Traced invalid params (CTRs outside [0, 1], discount outside (0, max_discount],
    non-positive prior) give a NaN regret (fail closed).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from ldpjax import bandits
      >>> from ldpjax.engine import make_key, record, simulate
      >>> cfg = bandits.GittinsConfig(max_count=8, max_discount=0.95, num_prices=64)
      >>> env = bandits.make_environment([0.3, 0.2])
      >>> out = simulate(gittins_policy(cfg), gittins_params(env, cfg, 0.9), make_key(0), 16,
      ...                num_seeds=2, record=record.total("click"), hints=GITTINS_HINTS)
      >>> out.record.shape
      (2,)
      >>> grid = jax.vmap(lambda d: gittins_params(env, cfg, d))(jnp.array([0.8, 0.95]))
      >>> simulate(gittins_policy(cfg), grid, make_key(0), 16, num_seeds=2, grid_ndim=1,
      ...          record=record.total("click"), hints=GITTINS_HINTS).record.shape
      (2, 2)
    """
    if not isinstance(config, GittinsConfig):
        raise TypeError(f"config must be a GittinsConfig; got {type(config).__name__}")
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
        index = _lookup(params.index, params.prior.astype(params.index.dtype), clicks,
                        shows - clicks)
        arm = argmax_random_ties(index, mask, u[2:])
        rate = params.ctr[segment, arm]
        click = (u[1] < rate).astype(jnp.int32)
        regret = best_ctr(params.ctr, params.num_arms)[segment] - rate
        ok = ctr_ok(params.ctr, params.num_arms) & _params_ok(params, config)
        regret = v.valid_or_nan(ok, regret)  # fail closed
        spend = jnp.asarray(jnp.inf, params.ctr.dtype)
        state = observe(state, segment, arm, click)
        return state, BanditOutputs(segment, arm, arm, click, regret, spend,
                                    jnp.zeros((), params.ctr.dtype))

    def validate(params, inputs) -> None:
        check_baseline_params(params, pc)
        check_segment_inputs(inputs, pc.num_segments, pc.replay_segments)
        _check_gittins_leaves(params, config)

    # run it with GITTINS_HINTS
    return Algorithm(init, step, validate, _no_privacy)


#: How to execute :func:`gittins_policy` (``simulate(..., hints=GITTINS_HINTS)``): grid-major,
#: so the table's diagonal bonus (params only) is computed once per grid point instead of once
#: per run; tests/bandits/test_grid_major.py checks the records against the flat layout, bit
#: for bit, through the table and its extrapolation.
GITTINS_HINTS = ExecutionHints(grid_major=True)


__all__ = [
    "GITTINS_HINTS",
    "GittinsConfig",
    "GittinsParams",
    "GittinsTable",
    "IndexTable",
    "default_extra_depth",
    "gittins_index",
    "gittins_index_table",
    "gittins_params",
    "gittins_policy",
    "gittins_table",
]
