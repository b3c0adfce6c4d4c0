"""Local hashing (BLH, OLH): K-ary randomized response over g hashed buckets, with public hashes.

Each user holds a hash h: {0..d-1} -> {0..g-1} drawn from a public family, independently of
its record, and reports (h, y) with y = K-RR_g(h(v)) at budget eps (Wang, Blocki, Li & Jha,
"Locally Differentially Private Protocols for Frequency Estimation", USENIX Security 2017,
Sec. 4.4): **BLH** is g = 2, **OLH** g = round(e^eps + 1) (:func:`olh_buckets`), which
minimises the estimator's variance. The server counts, for each item v, the users whose report
*supports* v (y = h(v)); P[support | v] = p* = e^eps / (e^eps + g - 1) and, for any other item,
q* = 1/g (:mod:`ldpjax.frequency`).

**The hash family** (:func:`local_hash`). A seed is k + 1 uint32 words (b, A_0, ..., A_{k-1}),
k = ceil(log2 d) (:func:`hash_words`); the 32-bit hash of an item x with bits x_i is

    u(x) = b XOR (XOR over i with x_i = 1 of A_i)      (a GF(2)-linear map plus a shift),

and the bucket is h(x) = floor(u(x) g / 2^32), computed exactly in 32-bit integers (g <= 65535).
For uniform seed words, u is *exactly pairwise independent*: u(x) is uniform on 2^32 values,
and for x != x', u(x) XOR u(x') = XOR of the A_i where x, x' differ is uniform and independent
of u(x) (Carter & Wegman, "Universal classes of hash functions", JCSS 1979). Hence each bucket
has probability floor(2^32 / g) / 2^32 or ceil(2^32 / g) / 2^32 (within 2^-32 of 1/g) and two
distinct items collide with probability sum_j (n_j / 2^32)^2 in [1/g, 1/g + g 2^-64] (n_j the
words of bucket j; exactly 1/g when g is a power of two).

**Public randomness rule.** Seeds are drawn by :func:`local_hash_seeds` from a key the server
may publish (``jax.random.bits(fold_in(public_key, user), ...)``), never from the record, and
are sent with the report. The K-RR coin is drawn from a separate, secret key (for real data a
:func:`~ldpjax.mechanisms.secure_key`). The claim holds for every fixed hash: given h, the
report is K-RR of h(v), which is eps-LDP for any two inputs (equal laws where h(v) = h(v')), and
h is independent of v, so revealing it costs nothing. Mixing over h gives the exact profile
delta(e) = (1 - c) delta_KRR(e), with c the smallest collision probability of two items, at
least 1/g here (``LocalHashingEvent(eps, g)``). A seed chosen *after* seeing the record would
leak it: seeds must come from the public key (or any source independent of the records).

Real-data path: the K-RR of the bucket is
:func:`~ldpjax.mechanisms.kary_randomized_response` (two uint32 words, exact for eps: the
realised epsilon never exceeds it). The seed's words are public and cost nothing in privacy.

Fail closed: concrete eps < 0 or NaN (or beyond K-RR's 32-bit bound), g outside [2, 65535],
items outside 0..d-1, seeds of the wrong width or float16 / bfloat16 raise ``ValueError``;
traced invalid ones report -1. eps = inf (no privacy) only when concrete or permitted.

Simulation path: :func:`local_hashing_counts` draws each item's support count from its exact
marginal law, Binomial(h_v, p*) + Binomial(n - h_v, 1/g), independently across items (a real
run's counts are correlated through the users' hashes).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms.kary import INVALID_CATEGORY, kary_randomized_response
from ldpjax.mechanisms.release import register_release
from ldpjax.mechanisms.unary_encoding import (
    check_domain_size,
    check_item,
    item_ok,
    support_counts,
)
from ldpjax.types import Array, ArrayLike, PRNGKey

#: Largest number of buckets (the bucket map multiplies 16-bit halves in 32-bit integers).
MAX_BUCKETS = 65535


def hash_words(d: int) -> int:
    """Words per seed for d items: 1 + max(1, ceil(log2 d)).

    Example:
      >>> hash_words(1000)  # 10 bits per item, one shift
      11
    """
    d = check_domain_size("d", d)
    return 1 + max(1, math.ceil(math.log2(d)))


def local_hash_seeds(public_key: PRNGKey, shape, d: int) -> Array:
    """Public hash seeds for ``shape`` users over d items, uint32 of shape ``shape + (k + 1,)``.

    Drawn from ``public_key`` (which the server may publish: the seeds are public randomness,
    independent of the records); user i's seed is ``local_hash_seeds(public_key, (n,), d)[i]``.

    Example:
      >>> import jax
      >>> local_hash_seeds(jax.random.key(7), (3,), 16).shape
      (3, 5)
    """
    return jax.random.bits(public_key, tuple(shape) + (hash_words(d),), jnp.uint32)


def _check_buckets(g: ArrayLike) -> None:
    v.check_integer("g", g, 2, MAX_BUCKETS)


def _buckets_ok(g: Array) -> Array:
    g = jnp.asarray(g)
    whole = (g == jnp.round(g)) if jnp.issubdtype(g.dtype, jnp.floating) else True
    return whole & (g >= 2) & (g <= MAX_BUCKETS)


def local_hash(seeds: ArrayLike, item: ArrayLike, g: ArrayLike) -> Array:
    """h(item) = floor(u(item) g / 2^32) of the seeds' hash (module docstring), int32 in [0, g).

    Args:
      seeds: uint32 words, shape (..., k + 1) (from :func:`local_hash_seeds`).
      item: items, integers in [0, 2^k) (broadcast against ``seeds[..., 0]``).
      g: buckets, integer in [2, 65535] (broadcast).

    Returns:
      Buckets (int32); -1 where ``g`` or the item is invalid (outside [0, 2^k)).

    Example:
      >>> import jax.numpy as jnp
      >>> seeds = jnp.array([2**31, 2**30, 0], jnp.uint32)  # b, A_0, A_1
      >>> local_hash(seeds, jnp.arange(4), 4).tolist()  # u = 2^31, 3 2^30, 2^31, 3 2^30
      [2, 3, 2, 3]
    """
    _check_buckets(g)
    seeds = jnp.asarray(seeds, jnp.uint32)
    k = seeds.shape[-1] - 1
    item = jnp.asarray(item)
    ok = item_ok(item, 2**k) & _buckets_ok(g)
    x = jnp.where(ok, item, 0).astype(jnp.uint32)
    u = jnp.broadcast_to(seeds[..., 0], jnp.broadcast_shapes(seeds.shape[:-1], x.shape))
    for i in range(k):  # k <= 31, unrolled: elementwise XORs
        u = jnp.where(((x >> i) & 1) == 1, u ^ seeds[..., i + 1], u)
    g_u = jnp.where(_buckets_ok(g), jnp.asarray(g), 2).astype(jnp.uint32)
    # floor(u g / 2^32) = floor((hi g + floor(lo g / 2^16)) / 2^16), u = hi 2^16 + lo: no
    # intermediate exceeds (2^16 - 1)^2 + 2^16 < 2^32
    hi, lo = u >> 16, u & jnp.uint32(0xFFFF)
    bucket = (hi * g_u + ((lo * g_u) >> 16)) >> 16
    return jnp.where(ok, bucket.astype(jnp.int32), INVALID_CATEGORY)


def olh_buckets(eps: float) -> int:
    """OLH's number of buckets, round(e^eps + 1) (at least 2, at most 65535), for a concrete eps.

    Example:
      >>> olh_buckets(1.0)  # e + 1 = 3.72
      4
    """
    v.check_range("eps", eps, 0.0, jnp.inf)
    value = float(np.asarray(eps, np.float64))
    return int(min(MAX_BUCKETS, max(2, round(math.exp(min(value, 12.0)) + 1))))


def _check_seeds(seeds: ArrayLike, d: int) -> Array:
    seeds = jnp.asarray(seeds)
    if seeds.dtype != jnp.uint32 or seeds.ndim < 1 or seeds.shape[-1] != hash_words(d):
        raise ValueError(f"seeds must be uint32 words of shape (..., {hash_words(d)}) for d = {d} "
                         f"(local_hash_seeds); got {seeds.dtype} of shape {seeds.shape}")
    return seeds


def _check_honoured(eps: ArrayLike, g: ArrayLike) -> None:
    """A concrete finite eps whose other buckets fall below 2^-32 (K-RR's bound,
    eps > log(1 + g (2^32 - 1))) is refused, naming eps."""
    if not v.is_concrete((eps, g)):
        return
    e, buckets = np.broadcast_arrays(np.asarray(eps, np.float64), np.asarray(g, np.float64))
    bound = np.log1p(buckets * (2.0**32 - 1.0))
    bad = np.isfinite(e) & (e > bound)
    if np.any(bad):
        raise ValueError(f"eps={float(e[bad][0])!r} is too large for exact 32-bit local hashing "
                         f"(the other buckets' probability falls below 2^-32): use eps <= "
                         f"log(1 + g (2^32 - 1)) = {float(bound[bad][0]):.4g} or eps = inf")


def local_hashing(key: PRNGKey, item: ArrayLike, seeds: ArrayLike, eps: ArrayLike,
                  g: ArrayLike, d: int) -> Array:
    """Report y = K-RR_g(h(item)) at budget eps, for the public hash h of ``seeds``.

    The report is the pair (seeds, y); only y is returned (the seeds are the caller's public
    input). eps-LDP for every fixed hash; claim ``LocalHashingEvent(eps, g)`` (exact profile,
    module docstring). Safe for real data with a key from
    :func:`~ldpjax.mechanisms.secure_key` (the seeds are public).

    Args:
      key: PRNG key of the K-RR coin (secret).
      item: true items, integers in [0, d).
      seeds: public hash seeds, uint32 of shape (..., k + 1) (:func:`local_hash_seeds`).
      eps: budget in [0, inf] (K-RR's 32-bit bound applies).
      g: buckets, integer in [2, 65535] (BLH: 2; OLH: :func:`olh_buckets`).
      d: number of items (static Python integer >= 2).

    Returns:
      Reports y (int32 in [0, g)); -1 where a traced argument is invalid.

    Example:
      >>> import jax
      >>> seeds = local_hash_seeds(jax.random.key(1), (3,), 10)
      >>> local_hashing(jax.random.key(2), jax.numpy.array([0, 4, 9]), seeds, 1.0, 4, 10).shape
      (3,)
    """
    d = check_domain_size("d", d)
    check_item(item, d)
    _check_buckets(g)
    v.check_range("eps", eps, 0.0, jnp.inf)
    dom.check_precision("eps", eps)
    _check_honoured(eps, g)
    seeds = _check_seeds(seeds, d)
    item = jnp.asarray(item)
    ok = item_ok(item, d)
    bucket = local_hash(seeds, jnp.where(ok, item, 0), g)
    report = kary_randomized_response(key, jnp.maximum(bucket, 0), eps, jnp.asarray(g))
    return jnp.where(ok & (bucket >= 0), report, INVALID_CATEGORY)


def local_hashing_support(reports: ArrayLike, seeds: ArrayLike, d: int, g: ArrayLike) -> Array:
    """Support counts c_v = #{users i : y_i = h_i(v)} for v = 0..d-1 (invalid reports skipped).

    Post-processing (no randomness): n d hash evaluations.

    Example:
      >>> import jax.numpy as jnp
      >>> seeds = jnp.array([[2**31, 2**30, 0]], jnp.uint32)  # one user, buckets 2, 3, 2, 3
      >>> local_hashing_support(jnp.array([2]), seeds, 4, 4).tolist()
      [1, 0, 1, 0]
    """
    d = check_domain_size("d", d)
    seeds = _check_seeds(seeds, d)
    reports = jnp.asarray(reports)
    items = jnp.arange(d)
    buckets = local_hash(seeds[..., None, :], items, g)  # (..., d)
    supported = (buckets == reports[..., None]) & (reports[..., None] >= 0)
    return jnp.sum(supported.reshape(-1, d), axis=0, dtype=jnp.int32)


def local_hashing_counts(key: PRNGKey, histogram: ArrayLike, eps: ArrayLike, g: ArrayLike
                         ) -> Array:
    """Simulation path: each item's support count from its exact marginal law (module
    docstring), p* = e^eps / (e^eps + g - 1), q* = 1/g.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> local_hashing_counts(jax.random.key(0), jnp.array([3.0, 1.0, 0.0]), 1.0, 4).shape
      (3,)
    """
    v.check_range("eps", eps, 0.0, jnp.inf)
    _check_buckets(g)
    dom.check_precision("eps", eps)
    dtype = dom.release_dtype(eps, histogram)
    eps = jnp.asarray(eps, dtype)
    g_f = jnp.asarray(g, dtype)
    ok = (eps >= 0) & _buckets_ok(g_f)
    p_star = 1.0 / (1.0 + (g_f - 1.0) * jnp.exp(-jnp.where(ok, eps, 0.0)))
    q_star = 1.0 / jnp.where(ok, g_f, 2.0)
    counts = support_counts(key, histogram, jnp.where(ok, p_star, 0.5), q_star)
    return dom.poison(ok[..., None], counts)


# real-data paths (integer words; the key must be a secure key): ldpjax.mechanisms.release
register_release(local_hashing)

__all__ = [
    "MAX_BUCKETS",
    "hash_words",
    "local_hash",
    "local_hash_seeds",
    "local_hashing",
    "local_hashing_counts",
    "local_hashing_support",
    "olh_buckets",
]
