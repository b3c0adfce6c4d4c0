"""Subset selection (SS): report a k-subset of the d items that contains the true one more often.

The k-subset mechanism of Ye & Barg ("Optimal Schemes for Discrete Distribution Estimation
under Locally Differential Privacy", IEEE Trans. Inf. Theory 2018) and Wang et al.
("Mutual Information Optimally Local Private Discrete Distribution Estimation", 2016): every
k-subset S of {0..d-1} is reported with probability

    P(S | x) = e^eps / Z if x in S, 1 / Z otherwise,  Z = C(d-1, k-1) e^eps + C(d-1, k),

so the ratio of any two inputs is at most e^eps (eps-LDP). Equivalently: x enters S with
probability k e^eps / (k e^eps + d - k), and the rest of S is a uniform subset of the other
d - 1 items. A report supports its own item with p* = k e^eps / (k e^eps + d - k) and any other
with q* = [k (k - 1) e^eps + k (d - k)] / [(d - 1)(k e^eps + d - k)] (:mod:`ldpjax.frequency`);
k = :func:`subset_size` (eps, d), about d / (e^eps + 1), minimises the estimator's variance
(k = 1 is K-ary randomized response). The worst pair x, x' differs on the C(d-2, k-1) subsets
holding one of them: delta(e) = k (d - k) (e^eps - e^e) / ((d - 1)(k e^eps + d - k))
(``SubsetSelectionEvent(eps, d, k)``).

Real-data path (:func:`subset_selection_from_bits`; 1 + 2 d uint32 words per report):

* word w0 decides whether x is left out of S: iff w0 < T = ceil(2^32 (d - k) / (d + k
  (e^eps - 1))) for the real e^eps of the float eps (double-word arithmetic,
  :mod:`ldpjax.mechanisms._oracle_words`), so P[x not in S] >= its nominal value, within
  2^-32, and the realised ratio ((2^32 - T) / T) (d - k) / k never exceeds e^eps;
* the other members are the k - 1 (x in S) or k (x not in S) items of smallest 64-bit random
  key among the d - 1 others (two words per item, keys drawn for all d items). Conditional on
  the d keys being distinct the order of the keys is exactly uniform (i.i.d. keys are
  exchangeable), so the members form an exactly uniform subset; if two keys tie (probability
  at most d (d - 1) 2^-65, the same for every input) the report is invalid. The invalid
  outcome has the same probability under every input and the other outcomes are scaled by the
  same factor, so the realised epsilon is that of the coin (<= eps) and the claim is exact.

The report is the membership vector of S (int8, k ones; order carries nothing). Randomness:
the coin and the keys come from the caller's key (secret for real data: the keys would reveal
which members were added at random). Simulation path: the same release with a seeded key, or
each item's support count from its marginal law
(:func:`~ldpjax.mechanisms.unary_encoding.support_counts` with this module's p*, q*). No privacy
(eps = inf) only when concrete or permitted. Fail closed: concrete eps < 0 or NaN, items
outside 0..d-1, k outside [1, d - 1] or float16 / bfloat16 raise ``ValueError``; traced invalid
ones (and key ties) give the invalid report, every entry -1.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms import _oracle_words as ow
from ldpjax.mechanisms.release import register_release
from ldpjax.mechanisms.unary_encoding import INVALID_BIT, check_domain_size, check_item, item_ok
from ldpjax.types import Array, ArrayLike, PRNGKey


def _check_size(k: int, d: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= d - 1:
        raise ValueError(f"k must be a Python integer in [1, d - 1] = [1, {d - 1}]; got {k!r}")
    return int(k)


def subset_variance_factor(eps: float, d: int, k: int) -> float:
    """Var of SS's frequency estimate at f = 0, times n: q* (1 - q*) / (p* - q*)^2 (float64).

    Example:
      >>> round(subset_variance_factor(1.0, 10, 3), 3)
      2.839
    """
    e = math.exp(eps)
    den = k * e + d - k
    p = k * e / den
    q = (k * (k - 1) * e + k * (d - k)) / ((d - 1) * den)
    return q * (1 - q) / (p - q) ** 2


def subset_size(eps: float, d: int) -> int:
    """k of SS for a concrete eps: floor or ceil of d / (e^eps + 1), whichever gives the smaller
    variance, within [1, d - 1].

    Example:
      >>> subset_size(1.0, 100)  # d / (e + 1) = 26.9
      27
    """
    d = check_domain_size("d", d)
    v.check_range("eps", eps, 0.0, jnp.inf)
    value = float(np.asarray(eps, np.float64))
    target = d / (math.exp(min(value, 700.0)) + 1.0)
    options = {min(d - 1, max(1, math.floor(target))), min(d - 1, max(1, math.ceil(target)))}
    return min(sorted(options), key=lambda k: subset_variance_factor(min(value, 700.0), d, k))


def out_words(eps: ArrayLike, d: int, k: int) -> Array:
    """T = ceil(2^32 (d - k) / (d + k (e^eps - 1))): the words on which x is left out of S
    (0 for eps = inf).

    Example:
      >>> int(out_words(0.0, 4, 1))  # (d - k) / d = 3/4 at eps = 0, plus the rounding margin
      3221225473
    """
    dtype = dom.release_dtype(eps)
    words, over = ow.ceil_words(d - k, d, k, jnp.asarray(eps, dtype))
    return jnp.where(over, jnp.uint32(2**32 - 1), words)


def subset_selection_from_bits(words: ArrayLike, item: ArrayLike, eps: ArrayLike, d: int,
                               k: int) -> Array:
    """The SS report decided on 1 + 2 d uint32 words per report (module docstring).

    Args:
      words: uint32 of shape (..., 1 + 2 d): the coin, then each item's 64-bit key (high, low).
      item: true items in [0, d), shape (...).
      eps: budget in [0, inf] (broadcast).
      d, k: items and subset size (static).

    Returns:
      int8 membership vectors of shape (..., d) with k ones; every entry -1 where a traced
      argument is invalid or two keys tie.

    Example:
      >>> import jax.numpy as jnp
      >>> keys = jnp.array([0, 5, 0, 1, 0, 3, 0, 2], jnp.uint32)  # items ranked 1, 3, 2, 0
      >>> words = jnp.concatenate([jnp.array([2**32 - 1], jnp.uint32), keys])  # x in S
      >>> subset_selection_from_bits(words, 0, 1.0, 4, 2).tolist()  # {0} and the smallest key
      [1, 1, 0, 0]
    """
    d = check_domain_size("d", d)
    k = _check_size(k, d)
    v.check_range("eps", eps, 0.0, jnp.inf)
    dom.check_precision("eps", eps)
    allow_inf = dom.inf_allowed(eps)
    dtype = dom.release_dtype(eps)
    x = jnp.asarray(ow.float_budget(eps, dtype), dtype)
    words = jnp.asarray(words, jnp.uint32)
    item = jnp.asarray(item)
    ok = item_ok(item, d) & (x >= 0) & (allow_inf | (x < jnp.inf))
    own = jnp.where(ok, item, 0).astype(jnp.int32)
    out = words[..., 0] < out_words(jnp.where(ok, x, 0.0), d, k)
    high, low = words[..., 1::2], words[..., 2::2]
    index = jnp.broadcast_to(jnp.arange(d, dtype=jnp.int32), high.shape)
    high_s, low_s, order = jax.lax.sort((high, low, index), dimension=-1, num_keys=2)
    tie = jnp.any((high_s[..., 1:] == high_s[..., :-1]) & (low_s[..., 1:] == low_s[..., :-1]),
                  axis=-1)
    other = order != own[..., None]
    rank = jnp.cumsum(other, axis=-1)  # 1-based rank among the other items
    wanted = jnp.where(out, k, k - 1)
    chosen = other & (rank <= wanted[..., None])
    inverse = jnp.argsort(order, axis=-1)  # sorted position of each item
    member = jnp.take_along_axis(chosen, inverse, -1)  # back to item order
    member = member | ((jnp.arange(d) == own[..., None]) & ~out[..., None])
    valid = ok & ~tie
    return jnp.where(valid[..., None], member.astype(jnp.int8), jnp.int8(INVALID_BIT))


def subset_selection(key: PRNGKey, item: ArrayLike, eps: ArrayLike, d: int, k: int) -> Array:
    """Report a k-subset of {0..d-1} by subset selection at budget eps (eps-LDP).

    Exact for eps (realised epsilon <= eps, module docstring); claim
    ``SubsetSelectionEvent(eps, d, k)``. Safe for real data with a key from
    :func:`~ldpjax.mechanisms.secure_key` (1 + 2 d uint32 words per report).

    Args:
      key: PRNG key.
      item: true items, integers in [0, d), any shape.
      eps: budget in [0, inf] (broadcast).
      d: number of items (static Python integer >= 2).
      k: subset size (static, in [1, d - 1]; :func:`subset_size` gives the optimal one).

    Returns:
      int8 membership vectors, shape ``item.shape + (d,)`` (every entry -1 where invalid).

    Example:
      >>> import jax
      >>> k = subset_size(1.0, 10)  # floor(10 / (e + 1)) = 2
      >>> s = subset_selection(jax.random.key(0), 3, 1.0, 10, k)
      >>> s.shape, int(s.sum())
      ((10,), 2)
    """
    d = check_domain_size("d", d)
    k = _check_size(k, d)
    check_item(item, d)
    shape = jnp.broadcast_shapes(jnp.shape(item), jnp.shape(eps))
    words = ow.words(key, shape + (1 + 2 * d,))
    item = jnp.broadcast_to(jnp.asarray(item), shape)
    return subset_selection_from_bits(words, item, eps, d, k)


def subset_support(reports: ArrayLike) -> Array:
    """Support counts c_v = #{reports S containing v} (invalid reports skipped).

    Example:
      >>> import jax.numpy as jnp
      >>> subset_support(jnp.array([[1, 1, 0], [0, 1, 1], [-1, -1, -1]], jnp.int8)).tolist()
      [1, 2, 1]
    """
    reports = jnp.asarray(reports)
    d = reports.shape[-1]
    flat = reports.reshape(-1, d)
    valid = jnp.all(flat >= 0, axis=-1, keepdims=True)
    return jnp.sum(jnp.where(valid, flat, 0), axis=0, dtype=jnp.int32)


# real-data paths (integer words; the key must be a secure key): ldpjax.mechanisms.release
register_release(subset_selection)

__all__ = [
    "out_words",
    "subset_selection",
    "subset_selection_from_bits",
    "subset_size",
    "subset_support",
    "subset_variance_factor",
]
