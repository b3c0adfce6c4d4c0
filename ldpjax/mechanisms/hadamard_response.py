"""Hadamard response (HR): report an index of the Hadamard matrix, biased towards the item's row.

The one-block Hadamard response of Acharya, Sun & Zhang ("Hadamard Response: Estimating
Distributions Privately, Efficiently, and with Little Communication", AISTATS 2019, Sec. 4,
the scheme for eps <= 1 that the blocked variant extends to large eps; the blocked variant is
not implemented). With K = 2^ceil(log2(d + 1)) (:func:`hadamard_size`) and the Sylvester
matrix H_K[i, j] = (-1)^popcount(i & j), item x owns the set C_x = {j : H_K[x + 1, j] = +1} of
K/2 indices (row x + 1: the all-ones row 0 is skipped). The report j in {0..K-1} is

    P(j | x) = 2 e^eps / (K (e^eps + 1)) for j in C_x,   2 / (K (e^eps + 1)) otherwise,

so the likelihood ratio of any two items is at most e^eps: eps-LDP. Rows of H_K are orthogonal,
so |C_x & C_x'| = K/4 for x != x': a report supports its own item (j in C_v) with probability
p* = e^eps / (e^eps + 1) and any other item with q* = 1/2 (:mod:`ldpjax.frequency`; the
support counts of all items come from one fast Walsh-Hadamard transform of the reports'
histogram, :func:`hadamard_support`). The worst pair of items differs on K/4 + K/4 indices:
the exact profile is delta(e) = (e^eps - e^e) / (2 (e^eps + 1)), half that of binary randomized
response (``HadamardResponseEvent(eps)``), for every d. log2 K bits of communication.

Real-data path (two uint32 words per report, :func:`hadamard_response_from_bits`): word w0
decides the side, outside C_x iff w0 < T = ceil(2^32 / (e^eps + 1)) for the real e^eps of the
float eps (capped at 2^31; :mod:`ldpjax.mechanisms._oracle_words`), so the realised epsilon
ln((2^32 - T) / T) never exceeds eps and each side is within 2^-32 of nominal; word w1 gives a
uniform j0 in {0..K-1} from its top log2 K bits (exact: K is a power of two), and the report is
j0 if it lies on the chosen side, else j0 XOR 2^b with b the lowest set bit of x + 1 (which
flips the sign of H[x + 1, j]): a two-to-one map onto the chosen side, so the report is exactly
uniform on it. No privacy (eps = inf) only when concrete or permitted.

Randomness: both words come from the caller's key (secret for real data); the matrix is fixed
and public, and nothing else is. Simulation path: the same release with a seeded key, or the
support counts' marginal law (:func:`~ldpjax.mechanisms.unary_encoding.support_counts` with
p* = e^eps / (e^eps + 1), q* = 1/2).

Fail closed: concrete eps < 0 or NaN, items outside 0..d-1, d < 2 or d > 2^30, float16 /
bfloat16 raise ``ValueError``; traced invalid ones report -1.
"""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms import _oracle_words as ow
from ldpjax.mechanisms.release import register_release
from ldpjax.mechanisms.unary_encoding import (
    check_domain_size,
    check_item,
    item_ok,
    other_bit_words,
)
from ldpjax.types import Array, ArrayLike, PRNGKey

#: The report of an invalid release.
INVALID_INDEX = -1
_MAX_ITEMS = 2**30


def hadamard_size(d: int) -> int:
    """K = 2^ceil(log2(d + 1)), the order of the Hadamard matrix for d items.

    Example:
      >>> hadamard_size(7), hadamard_size(8)
      (8, 16)
    """
    d = check_domain_size("d", d)
    if d > _MAX_ITEMS:
        raise ValueError(f"d must be at most 2^30 for Hadamard response; got {d}")
    return 1 << d.bit_length()


def in_row_set(item: ArrayLike, index: ArrayLike) -> Array:
    """Whether index j lies in C_item (H_K[item + 1, j] = +1): popcount((item + 1) & j) even.

    Example:
      >>> import jax.numpy as jnp
      >>> in_row_set(0, jnp.arange(4)).tolist()  # row 1 of H_4: + - + -
      [True, False, True, False]
    """
    row = jnp.asarray(item).astype(jnp.uint32) + jnp.uint32(1)
    parity = jnp.bitwise_count(row & jnp.asarray(index).astype(jnp.uint32)) & jnp.uint32(1)
    return parity == 0


def hadamard_response_from_bits(words: ArrayLike, item: ArrayLike, eps: ArrayLike, d: int
                                ) -> Array:
    """The HR report decided on two uint32 words per report (module docstring).

    Args:
      words: uint32 of shape (..., 2).
      item: true items in [0, d), shape (...).
      eps: budget in [0, inf] (broadcast).
      d: number of items (static).

    Returns:
      Reports (int32 in [0, K)); -1 where a traced argument is invalid.

    Example:
      >>> import jax.numpy as jnp
      >>> w = jnp.array([[2**32 - 1, 0], [0, 0]], jnp.uint32)  # C_x side; complement side
      >>> hadamard_response_from_bits(w, 0, 1.0, 3).tolist()  # row 1 of H_4: C_0 = {0, 2}
      [0, 1]
    """
    k = hadamard_size(d)
    v.check_range("eps", eps, 0.0, jnp.inf)
    dom.check_precision("eps", eps)
    allow_inf = dom.inf_allowed(eps)
    dtype = dom.release_dtype(eps)
    x = jnp.asarray(ow.float_budget(eps, dtype), dtype)
    words = jnp.asarray(words, jnp.uint32)
    item = jnp.asarray(item)
    ok = item_ok(item, d) & (x >= 0) & (allow_inf | (x < jnp.inf))
    outside = words[..., 0] < other_bit_words(jnp.where(ok, x, 0.0))
    shift = 32 - (k.bit_length() - 1)
    j0 = (words[..., 1] >> shift) if shift < 32 else jnp.zeros_like(words[..., 1])
    row = jnp.where(ok, item, 0).astype(jnp.uint32) + jnp.uint32(1)
    low_bit = row & (~row + jnp.uint32(1))
    report = jnp.where(in_row_set(row - 1, j0) != outside, j0, j0 ^ low_bit)
    return jnp.where(ok, report.astype(jnp.int32), INVALID_INDEX)


def hadamard_response(key: PRNGKey, item: ArrayLike, eps: ArrayLike, d: int) -> Array:
    """Report an index j in {0..K-1} by Hadamard response at budget eps (eps-LDP).

    Exact for eps (realised epsilon <= eps, module docstring); claim
    ``HadamardResponseEvent(eps)``. Safe for real data with a key from
    :func:`~ldpjax.mechanisms.secure_key`.

    Args:
      key: PRNG key.
      item: true items, integers in [0, d), any shape.
      eps: budget in [0, inf] (broadcast).
      d: number of items (static Python integer in [2, 2^30]).

    Returns:
      Reports (int32 in [0, K), K = :func:`hadamard_size` (d)); -1 where a traced argument is
      invalid.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> r = hadamard_response(jax.random.key(0), jnp.arange(5), 1.0, 5)
      >>> r.shape, bool((r >= 0).all() & (r < 8).all())
      ((5,), True)
    """
    d = check_domain_size("d", d)
    check_item(item, d)
    shape = jnp.broadcast_shapes(jnp.shape(item), jnp.shape(eps))
    words = ow.words(key, shape + (2,))
    return hadamard_response_from_bits(words, jnp.broadcast_to(jnp.asarray(item), shape), eps, d)


def walsh_hadamard(x: ArrayLike) -> Array:
    """H_K x over the last axis (length K a power of two), by the fast transform (K log2 K adds).

    Example:
      >>> import jax.numpy as jnp
      >>> walsh_hadamard(jnp.array([1.0, 0.0, 0.0, 0.0])).tolist()
      [1.0, 1.0, 1.0, 1.0]
    """
    x = jnp.asarray(x)
    k = x.shape[-1]
    if k & (k - 1):
        raise ValueError(f"the last axis must have a power-of-two length; got {k}")
    batch = x.shape[:-1]
    h = 1
    while h < k:
        y = x.reshape(batch + (k // (2 * h), 2, h))
        x = jnp.stack([y[..., 0, :] + y[..., 1, :], y[..., 0, :] - y[..., 1, :]], -2)
        x = x.reshape(batch + (k,))
        h *= 2
    return x


def hadamard_support(reports: ArrayLike, d: int) -> Array:
    """Support counts c_v = #{reports j in C_v}, v = 0..d-1 (invalid reports skipped).

    c_v = (n + (H_K m)_{v+1}) / 2 with m the reports' histogram over K indices: one fast
    Walsh-Hadamard transform (post-processing).

    Example:
      >>> import jax.numpy as jnp
      >>> hadamard_support(jnp.array([0, 1, 2]), 3).tolist()  # C_0 = {0, 2}, C_1 = {0, 1}, ...
      [2, 2, 1]
    """
    k = hadamard_size(d)
    reports = jnp.asarray(reports).reshape(-1)
    valid = (reports >= 0) & (reports < k)
    m = jnp.zeros(k, jnp.int32).at[jnp.where(valid, reports, 0)].add(valid.astype(jnp.int32))
    transformed = walsh_hadamard(m)
    n = jnp.sum(valid, dtype=jnp.int32)
    return (n + transformed[1:d + 1]) // 2


# real-data paths (integer words; the key must be a secure key): ldpjax.mechanisms.release
register_release(hadamard_response)

__all__ = [
    "INVALID_INDEX",
    "hadamard_response",
    "hadamard_response_from_bits",
    "hadamard_size",
    "hadamard_support",
    "in_row_set",
    "walsh_hadamard",
]
