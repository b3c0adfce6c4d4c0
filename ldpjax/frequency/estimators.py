"""Unbiased frequency estimates from the reports of the frequency oracles (post-processing).

Every oracle of :mod:`ldpjax.mechanisms` is a *pure* protocol (Wang, Blocki, Li & Jha,
"Locally Differentially Private Protocols for Frequency Estimation", USENIX Security 2017,
Def. 2): each report supports a set of items, its own item with probability p* and any other
with probability q* < p*, whatever the other items. With c(v) the number of the n reports that
support v,

    c~(v) = (c(v) - n q*) / (p* - q*)     (unbiased: E[c(v)] = n_v p* + (n - n_v) q*),

and f~(v) = c~(v) / n estimates the frequency of v (:func:`debias_counts`,
:func:`estimate_frequencies`). The oracles' (p*, q*) and support sets:

============================  ============================================  =================
oracle                        (p*, q*)                                      supports v when
============================  ============================================  =================
GRR (K-ary RR over d items)   (e^eps, 1) / (e^eps + d - 1)                  report = v
unary encoding (p, q)         (p, q); SUE, OUE: their presets               bit v = 1
local hashing, g buckets      (e^eps / (e^eps + g - 1), 1/g)                report = h(v)
Hadamard response             (e^eps / (e^eps + 1), 1/2)                    report in C_v
subset selection (d, k)       (k e^eps, [k (k-1) e^eps + k (d-k)] / (d-1))  v in the subset
                              / (k e^eps + d - k)
============================  ============================================  =================

The estimates use the nominal (p*, q*); the real-data paths realise them within 2^-32 per
coin (2^-32 per category for GRR), a bias below n 2^-31 / (p* - q*) in each count. Invalid
reports (-1) are skipped and n counts the valid ones. Everything is ``jit``-able and
differentiable in the budget; concrete arguments are checked (``ValueError``), traced invalid
ones give NaN.

For numbers in [-1, 1] (Duchi et al.'s, the piecewise and the hybrid mechanisms) every release
is unbiased: :func:`mean_estimate` averages the valid ones.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.mechanisms.hadamard_response import hadamard_support
from ldpjax.mechanisms.local_hashing import local_hashing_support
from ldpjax.mechanisms.subset_selection import subset_support
from ldpjax.mechanisms.unary_encoding import oue_probabilities, sue_probabilities
from ldpjax.types import Array, ArrayLike


def _float(*xs: ArrayLike) -> tuple[Array, ...]:
    dtype = jnp.result_type(*xs, float)
    return tuple(jnp.asarray(x, dtype) for x in xs)


def _check_eps(eps: ArrayLike) -> None:
    v.check_range("eps", eps, 0.0, jnp.inf)


def grr_probabilities(eps: ArrayLike, d: ArrayLike) -> tuple[Array, Array]:
    """(p*, q*) = (e^eps, 1) / (e^eps + d - 1) of generalized (K-ary) randomized response.

    Example:
      >>> p, q = grr_probabilities(1.0, 4)
      >>> round(float(p), 4), round(float(q), 4)  # e / (e + 3), 1 / (e + 3)
      (0.4754, 0.1749)
    """
    _check_eps(eps)
    v.check_integer("d", d, 2)
    eps, d = _float(eps, d)
    q = 1.0 / (jnp.exp(eps) + d - 1.0)
    p = 1.0 / (1.0 + (d - 1.0) * jnp.exp(-eps))
    ok = (eps >= 0) & (d >= 2)
    return v.valid_or_nan(ok, p, eps, d), v.valid_or_nan(ok, q, eps, d)


def olh_probabilities(eps: ArrayLike, g: ArrayLike) -> tuple[Array, Array]:
    """(p*, q*) = (e^eps / (e^eps + g - 1), 1/g) of local hashing with g buckets (g may be a
    real number here, for the optimisation g = e^eps + 1).

    Example:
      >>> p, q = olh_probabilities(1.0, 4)
      >>> round(float(p), 4), float(q)
      (0.4754, 0.25)
    """
    _check_eps(eps)
    v.check_range("g", g, 2.0, jnp.inf, high_open=True)
    eps, g = _float(eps, g)
    p = 1.0 / (1.0 + (g - 1.0) * jnp.exp(-eps))
    ok = (eps >= 0) & (g >= 2)
    return v.valid_or_nan(ok, p, eps, g), v.valid_or_nan(ok, 1.0 / g, eps, g)


def hadamard_probabilities(eps: ArrayLike) -> tuple[Array, Array]:
    """(p*, q*) = (e^eps / (e^eps + 1), 1/2) of Hadamard response.

    Example:
      >>> p, q = hadamard_probabilities(1.0)
      >>> round(float(p), 4), float(q)
      (0.7311, 0.5)
    """
    _check_eps(eps)
    (eps,) = _float(eps)
    ok = eps >= 0
    return v.valid_or_nan(ok, jax.nn.sigmoid(eps), eps), v.valid_or_nan(
        ok, jnp.full_like(eps, 0.5), eps)


def subset_probabilities(eps: ArrayLike, d: ArrayLike, k: ArrayLike) -> tuple[Array, Array]:
    """(p*, q*) of k-subset selection over d items (module table).

    Example:
      >>> p, q = subset_probabilities(1.0, 10, 3)
      >>> round(float(p), 4), round(float(q), 4)
      (0.5381, 0.2735)
    """
    _check_eps(eps)
    v.check_integer("d", d, 2)
    v.check_integer("k", k, 1)
    eps, d, k = _float(eps, d, k)
    e = jnp.exp(eps)
    den = k * e + d - k
    p = k * e / den
    q = (k * (k - 1.0) * e + k * (d - k)) / ((d - 1.0) * den)
    ok = (eps >= 0) & (d >= 2) & (k >= 1) & (k < d)
    return v.valid_or_nan(ok, p, eps, d, k), v.valid_or_nan(ok, q, eps, d, k)


def debias_counts(support: ArrayLike, n: ArrayLike, p_star: ArrayLike, q_star: ArrayLike
                  ) -> Array:
    """Unbiased counts c~(v) = (c(v) - n q*) / (p* - q*) (NaN where p* <= q*).

    Example:
      >>> import jax.numpy as jnp
      >>> debias_counts(jnp.array([60.0, 40.0]), 100.0, 0.75, 0.25).tolist()
      [70.0, 30.0]
    """
    support, n, p_star, q_star = _float(support, n, p_star, q_star)
    ok = (p_star > q_star) & (q_star >= 0) & (p_star <= 1)
    gap = jnp.where(ok, p_star - q_star, 1.0)
    out = (support - n * q_star) / gap
    return v.valid_or_nan(ok, out, p_star, q_star)


def estimate_frequencies(support: ArrayLike, n: ArrayLike, p_star: ArrayLike,
                         q_star: ArrayLike) -> Array:
    """Unbiased frequencies f~(v) = c~(v) / n (sum to 1 only in expectation; see
    :mod:`ldpjax.frequency.postprocess` for a distribution).

    Example:
      >>> import jax.numpy as jnp
      >>> [round(f, 4) for f in estimate_frequencies(jnp.array([60.0, 40.0]), 100.0, 0.75,
      ...                                             0.25).tolist()]
      [0.7, 0.3]
    """
    counts = debias_counts(support, n, p_star, q_star)
    return counts / jnp.maximum(jnp.asarray(n, counts.dtype), 1.0)


def grr_support(reports: ArrayLike, d: int) -> tuple[Array, Array]:
    """(histogram of the valid reports over 0..d-1, number of valid reports).

    Example:
      >>> import jax.numpy as jnp
      >>> counts, n = grr_support(jnp.array([0, 2, 2, -1]), 3)
      >>> counts.tolist(), int(n)
      ([1, 0, 2], 3)
    """
    reports = jnp.asarray(reports).reshape(-1)
    valid = (reports >= 0) & (reports < d)
    counts = jnp.zeros(d, jnp.int32).at[jnp.where(valid, reports, 0)].add(
        valid.astype(jnp.int32))
    return counts, jnp.sum(valid, dtype=jnp.int32)


def bit_support(reports: ArrayLike) -> tuple[Array, Array]:
    """(per-item sums of bit vectors, number of valid ones) for unary encoding and subset
    selection reports, shape (..., d) (rows with -1 are invalid and skipped).

    Example:
      >>> import jax.numpy as jnp
      >>> counts, n = bit_support(jnp.array([[1, 0, 1], [0, 1, 1]], jnp.int8))
      >>> counts.tolist(), int(n)
      ([1, 1, 2], 2)
    """
    reports = jnp.asarray(reports)
    flat = reports.reshape(-1, reports.shape[-1])
    return subset_support(flat), jnp.sum(jnp.all(flat >= 0, axis=-1), dtype=jnp.int32)


def grr_estimate(reports: ArrayLike, eps: ArrayLike, d: int) -> Array:
    """Frequencies from K-ary randomized response reports (``kary_randomized_response``).

    Example:
      >>> import jax.numpy as jnp
      >>> grr_estimate(jnp.array([0, 0, 1, 2]), 1.0, 3).shape
      (3,)
    """
    counts, n = grr_support(reports, d)
    return estimate_frequencies(counts, n, *grr_probabilities(eps, d))


def unary_estimate(reports: ArrayLike, p: ArrayLike, q: ArrayLike) -> Array:
    """Frequencies from unary encoding reports with probabilities (p, q).

    Example:
      >>> import jax.numpy as jnp
      >>> unary_estimate(jnp.array([[1, 0], [1, 1]], jnp.int8), 0.75, 0.25).tolist()
      [1.5, 0.5]
    """
    counts, n = bit_support(reports)
    return estimate_frequencies(counts, n, p, q)


def sue_estimate(reports: ArrayLike, eps: ArrayLike) -> Array:
    """Frequencies from SUE reports at budget eps.

    Example:
      >>> import jax.numpy as jnp
      >>> sue_estimate(jnp.array([[1, 0, 0]], jnp.int8), 1.0).shape
      (3,)
    """
    counts, n = bit_support(reports)
    return estimate_frequencies(counts, n, *sue_probabilities(eps))


def oue_estimate(reports: ArrayLike, eps: ArrayLike) -> Array:
    """Frequencies from OUE reports at budget eps.

    Example:
      >>> import jax.numpy as jnp
      >>> oue_estimate(jnp.array([[1, 0, 0]], jnp.int8), 1.0).shape
      (3,)
    """
    counts, n = bit_support(reports)
    return estimate_frequencies(counts, n, *oue_probabilities(eps))


def olh_estimate(reports: ArrayLike, seeds: ArrayLike, eps: ArrayLike, g: ArrayLike, d: int
                 ) -> Array:
    """Frequencies from local hashing reports (with the users' public seeds).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from ldpjax.mechanisms.local_hashing import local_hash_seeds
      >>> seeds = local_hash_seeds(jax.random.key(0), (2,), 5)
      >>> olh_estimate(jnp.array([0, 3]), seeds, 1.0, 4, 5).shape
      (5,)
    """
    counts = local_hashing_support(reports, seeds, d, g)
    n = jnp.sum(jnp.asarray(reports) >= 0, dtype=jnp.int32)
    return estimate_frequencies(counts, n, *olh_probabilities(eps, g))


def hadamard_estimate(reports: ArrayLike, eps: ArrayLike, d: int) -> Array:
    """Frequencies from Hadamard response reports.

    Example:
      >>> import jax.numpy as jnp
      >>> hadamard_estimate(jnp.array([0, 1, 2]), 1.0, 3).shape
      (3,)
    """
    counts = hadamard_support(reports, d)
    n = jnp.sum(jnp.asarray(reports) >= 0, dtype=jnp.int32)
    return estimate_frequencies(counts, n, *hadamard_probabilities(eps))


def subset_estimate(reports: ArrayLike, eps: ArrayLike, d: int, k: int) -> Array:
    """Frequencies from subset selection reports (membership vectors).

    Example:
      >>> import jax.numpy as jnp
      >>> subset_estimate(jnp.array([[1, 1, 0, 0]], jnp.int8), 1.0, 4, 2).shape
      (4,)
    """
    counts, n = bit_support(reports)
    return estimate_frequencies(counts, n, *subset_probabilities(eps, d, k))


def mean_estimate(releases: ArrayLike) -> Array:
    """The mean of the valid (non-NaN) releases of an unbiased mean mechanism (Duchi et al.'s,
    piecewise, hybrid): an unbiased estimate of the mean of the values.

    Example:
      >>> import jax.numpy as jnp
      >>> float(mean_estimate(jnp.array([2.0, -1.0, jnp.nan])))
      0.5
    """
    releases = jnp.asarray(releases)
    valid = ~jnp.isnan(releases)
    total = jnp.sum(jnp.where(valid, releases, 0.0))
    return total / jnp.maximum(jnp.sum(valid), 1)


__all__ = [
    "bit_support",
    "debias_counts",
    "estimate_frequencies",
    "grr_estimate",
    "grr_probabilities",
    "grr_support",
    "hadamard_estimate",
    "hadamard_probabilities",
    "mean_estimate",
    "olh_estimate",
    "olh_probabilities",
    "oue_estimate",
    "subset_estimate",
    "subset_probabilities",
    "sue_estimate",
    "unary_estimate",
]
