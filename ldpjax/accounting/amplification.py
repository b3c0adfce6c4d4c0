"""Privacy amplification by revealed batching: the accounting of a batch-size law.

A record released through the sum of a batch of B rounds, each carrying N(0, eta^2 I) noise
while the record moves the sum by at most its sensitivity, is (mu / sqrt B)-GDP given B, mu
being the per-round GDP parameter (:func:`ex_post_mu`). When the batch size is random,
revealed, and does not depend on the record, the record is private as the revealed mixture of
the (mu / sqrt B)-GDP mechanisms with B ~ the law of its batch size (Lemma 2 of
"Prediction with Expert Advice under Local Differential Privacy", ICLR 2026;
:func:`~ldpjax.accounting.gdp_mixture_delta` / :func:`~ldpjax.accounting.gdp_mixture_tradeoff`).
A stochastically smaller law gives a smaller, hence still valid, amplification (Lemma 1).

This module turns a law ``(sizes, weights)`` (components on the last axis) into the claim:
:func:`batch_mixture_delta`, :func:`batch_mixture_tradeoff`, :func:`batch_mixture_event` (a
:class:`~ldpjax.accounting.events.GaussianMixtureEvent` for the accountants), the Monte Carlo
standard error of an empirical law's delta (:func:`batch_mixture_delta_se`), the empirical law
of simulated batch sizes (:func:`empirical_batch_distribution`), and the binning of a survival
function on a grid of sizes (:func:`batch_grid`, :func:`binned_law`). Which law a given
algorithm has is the algorithm's business (RW-AdaBatch's worst case:
:mod:`ldpjax.experts.amplification`).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting.events import GaussianMixtureEvent
from ldpjax.accounting.gdp import gdp_delta
from ldpjax.accounting.mixture import gdp_mixture_delta, gdp_mixture_tradeoff
from ldpjax.types import Array, ArrayLike

#: The largest batch size of the default grid (2^30 rounds).
MAX_BATCH = 2**30


def floats(*xs: ArrayLike) -> tuple[Array, ...]:
    """Arrays of one common floating dtype."""
    xs = tuple(x if isinstance(x, jax.Array) else jnp.asarray(x) for x in xs)
    dtype = jnp.result_type(*xs, float)
    return tuple(jnp.asarray(x, dtype) for x in xs)


def ex_post_mu(mu: ArrayLike, batch_size: ArrayLike) -> Array:
    """Ex-post central GDP of a point in a batch of B rounds: mu / sqrt(B).

    Args:
      mu: per-round (local) GDP parameter, in (0, inf].
      batch_size: B >= 1 (the ``batch_size`` output of RW-AdaBatch for that round).

    Example:
      >>> float(ex_post_mu(1.0, 4))
      0.5
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("batch_size", batch_size, 1.0, jnp.inf, high_open=True)
    mu, batch_size = floats(mu, batch_size)
    valid = (mu > 0) & (batch_size >= 1)
    return v.valid_or_nan(valid, mu / jnp.sqrt(jnp.where(valid, batch_size, 1.0)))


def _mixture_args(mu, sizes, weights):
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True, high_open=True)
    v.check_range("sizes", sizes, 1.0, jnp.inf, high_open=True)
    v.check_sums_to_one("weights", weights)
    return floats(mu, sizes, weights)


@functools.partial(jax.jit, static_argnames=("curve",))
def _batch_mixture(mu, sizes, weights, x, curve):
    mus = mu[..., None] / jnp.sqrt(sizes)
    if curve == "delta":
        return gdp_mixture_delta(mus, weights, x)
    if curve == "tradeoff":
        return gdp_mixture_tradeoff(mus, weights, x)
    per = gdp_delta(mus, x[..., None])  # delta of every component, (..., M)
    mean = jnp.sum(weights * per, axis=-1)
    return jnp.maximum(jnp.sum(weights * per * per, axis=-1) - mean * mean, 0.0)


def batch_mixture_delta(
    mu: ArrayLike, sizes: ArrayLike, weights: ArrayLike, eps: ArrayLike
) -> Array:
    """delta(eps) of a record given its batch-size law (sizes, weights) on the last axis.

    The revealed mixture of (mu / sqrt(B))-GDP mechanisms (Lemma 2):
    ``gdp_mixture_delta(mu / sqrt(sizes), weights, eps)``.

    Args:
      mu: per-round GDP parameter, in (0, inf); leading axes broadcast with the law's.
      sizes: batch sizes (>= 1), last axis = components.
      weights: their probabilities (sum to 1 on the last axis).
      eps: in [0, inf], broadcast against the leading axes.

    Example:
      >>> d = batch_mixture_delta(1.0, jnp.array([1.0]), jnp.array([1.0]), 1.0)
      >>> bool(jnp.isclose(d, gdp_delta(1.0, 1.0)))  # one component of size 1: plain mu-GDP
      True
    """
    v.check_range("eps", eps, 0.0, jnp.inf)
    mu, sizes, weights = _mixture_args(mu, sizes, weights)
    (eps,) = floats(eps)
    return _batch_mixture(mu, sizes, weights, eps.astype(mu.dtype), "delta")


def batch_mixture_tradeoff(
    mu: ArrayLike, sizes: ArrayLike, weights: ArrayLike, fpr: ArrayLike
) -> Array:
    """Tradeoff curve (type II error at type I error ``fpr``) of a record given its batch law.

    ``gdp_mixture_tradeoff(mu / sqrt(sizes), weights, fpr)``; arguments as in
    :func:`batch_mixture_delta`.

    Example:
      >>> from ldpjax.accounting import gdp_tradeoff
      >>> f = batch_mixture_tradeoff(2.0, jnp.array([4.0]), jnp.array([1.0]), 0.1)
      >>> bool(jnp.isclose(f, gdp_tradeoff(1.0, 0.1)))  # B = 4 halves mu
      True
    """
    v.check_range("fpr", fpr, 0.0, 1.0)
    mu, sizes, weights = _mixture_args(mu, sizes, weights)
    (fpr,) = floats(fpr)
    return _batch_mixture(mu, sizes, weights, fpr.astype(mu.dtype), "tradeoff")


def batch_mixture_delta_se(
    mu: ArrayLike, sizes: ArrayLike, weights: ArrayLike, eps: ArrayLike, num_runs: int
) -> Array:
    """Monte Carlo standard error of :func:`batch_mixture_delta` for an empirical law.

    delta_MC(eps) is the mean over ``num_runs`` runs of delta_{mu / sqrt(B_r)}(eps), so its
    standard error is sd_r(delta_{mu/sqrt(B_r)}(eps)) / sqrt(num_runs) (sample sd, with the
    num_runs / (num_runs - 1) correction).

    Example:
      >>> se = batch_mixture_delta_se(1.0, jnp.array([4.0]), jnp.array([1.0]), 1.0, 10)
      >>> bool(se < 1e-5)  # one batch size in every run: no Monte Carlo spread
      True
    """
    v.check_integer("num_runs", num_runs, 2)
    v.check_range("eps", eps, 0.0, jnp.inf)
    mu, sizes, weights = _mixture_args(mu, sizes, weights)
    (eps,) = floats(eps)
    var = _batch_mixture(mu, sizes, weights, eps.astype(mu.dtype), "variance")
    return jnp.sqrt(var / (num_runs - 1.0))


def batch_mixture_event(mu: Array, sizes: Array, weights: Array) -> GaussianMixtureEvent:
    """The revealed mixture of (mu / sqrt B)-GDP releases over the law (sizes, weights).

    No concrete checks (the accountants check the event): ``mu`` broadcasts against the law's
    leading axes, and both leaves of the event are broadcast to one shape.

    Example:
      >>> from ldpjax.accounting.accountant import delta
      >>> event = batch_mixture_event(jnp.asarray(2.0), jnp.array([4.0]), jnp.array([1.0]))
      >>> bool(jnp.isclose(delta(event, 1.0), gdp_delta(1.0, 1.0)))
      True
    """
    mus = mu[..., None] / jnp.sqrt(sizes)
    shape = jnp.broadcast_shapes(mus.shape, weights.shape)
    return GaussianMixtureEvent(jnp.broadcast_to(mus, shape), jnp.broadcast_to(weights, shape))


def empirical_batch_distribution(
    batch_sizes: ArrayLike, width: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The empirical law of simulated batch sizes, runs on the last axis (host-side NumPy).

    Args:
      batch_sizes: integer array (..., num_runs) of batch sizes >= 1.
      width: K, the number of components to return (default: the largest number of distinct
        sizes in a row). A fixed K (e.g. ``num_runs``, which no row can exceed) gives every
        call the same shape, so the mixture functions compile once for all of them;
        components at weight 0 do not change the law.

    Returns:
      ``(sizes, weights)`` of shape (..., K): the distinct sizes of each row (padded with 1
      at weight 0 to a common K) and their frequencies.

    Example:
      >>> sizes, weights = empirical_batch_distribution([1, 1, 4, 4])
      >>> sizes.tolist(), weights.tolist()
      ([1.0, 4.0], [0.5, 0.5])
      >>> empirical_batch_distribution([1, 1, 4, 4], width=3)[1].tolist()
      [0.5, 0.5, 0.0]
    """
    arr = np.asarray(batch_sizes)
    if arr.ndim < 1 or arr.shape[-1] < 1:
        raise ValueError("batch_sizes needs a non-empty last axis of runs")
    v.check_range("batch_sizes", arr, 1.0, np.inf, high_open=True)
    flat = arr.reshape(-1, arr.shape[-1])
    rows = [np.unique(row, return_counts=True) for row in flat]
    needed = max(len(values) for values, _ in rows)
    if width is None:
        width = needed
    elif isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < needed:
        raise ValueError(f"width must be an integer >= {needed} (the distinct sizes of a row); "
                         f"got {width!r}")
    sizes = np.ones((len(rows), width))
    weights = np.zeros((len(rows), width))
    for i, (values, counts) in enumerate(rows):
        sizes[i, : len(values)] = values
        weights[i, : len(values)] = counts / counts.sum()
    return sizes.reshape(arr.shape[:-1] + (width,)), weights.reshape(arr.shape[:-1] + (width,))


# --------------------------------------------------------------------------- binned laws
@functools.cache
def batch_grid(ratio: float = 1.05, exact_up_to: int = 40, largest: int = MAX_BATCH) -> np.ndarray:
    """Batch sizes to bin a law on: 1..exact_up_to, then x ratio up to ``largest``.

    Binning on it overstates mu_B by at most sqrt(ratio) - 1 within a bin (2.5% by default).
    Returns a float64 NumPy array of strictly increasing integers starting at 1.

    Example:
      >>> batch_grid()[:3].tolist(), int(batch_grid()[-1])
      ([1.0, 2.0, 3.0], 1073741824)
    """
    if not ratio > 1.0:
        raise ValueError(f"ratio must be > 1; got {ratio!r}")
    sizes = list(range(1, exact_up_to + 1))
    while sizes[-1] < largest:
        sizes.append(min(largest, max(sizes[-1] + 1, math.floor(sizes[-1] * ratio))))
    return np.asarray(sizes, np.float64)


def binned_law(survival: Array) -> Array:
    """Bin weights from a survival function S(sizes_i) = P(B >= sizes_i) on the last axis.

    Bin i = [sizes_i, sizes_{i+1}) gets S(sizes_i) - S(sizes_{i+1}) (the last bin
    S(sizes_M)), placed on its smallest size: a stochastically smaller law. S is made
    non-increasing first (against rounding). No checks.

    Example:
      >>> binned_law(jnp.array([1.0, 0.5, 0.25])).tolist()
      [0.5, 0.25, 0.25]
    """
    survival = jax.lax.cummin(survival, axis=survival.ndim - 1)
    upper = jnp.concatenate([survival[..., 1:], jnp.zeros_like(survival[..., :1])], axis=-1)
    return jnp.maximum(survival - upper, 0.0)


__all__ = [
    "MAX_BATCH",
    "batch_grid",
    "batch_mixture_delta",
    "batch_mixture_delta_se",
    "batch_mixture_event",
    "batch_mixture_tradeoff",
    "binned_law",
    "empirical_batch_distribution",
    "ex_post_mu",
]
