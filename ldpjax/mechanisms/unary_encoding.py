"""Unary encoding (UE): SUE, OUE and any (p, q), one bit per item, decided on integer words.

An item v in {0, ..., d-1} is encoded as the d-bit one-hot vector e_v and each bit is reported
independently: bit v is 1 with probability p, every other bit with probability q (Wang, Blocki,
Li & Jha, "Locally Differentially Private Protocols for Frequency Estimation", USENIX Security
2017, Sec. 4.3). Neighbours v, v' change the laws of bits v and v' only, so the release is
eps-LDP with

    eps = ln(p (1 - q) / ((1 - p) q)),

and its exact profile is that of a channel whose worst pair differs on one outcome of mass
P = p (1 - q) against Q = q (1 - p) (:class:`~ldpjax.accounting.frequency_events.UnaryEncodingEvent`).
Reading the release as d separate randomized responses and composing them overstates epsilon
between two- and d-fold. Presets: **SUE** (symmetric, basic RAPPOR) p = e^(eps/2) /
(e^(eps/2) + 1), q = 1 - p; **OUE** (optimized) p = 1/2, q = 1 / (e^eps + 1), which minimises
the estimator's variance (Wang et al. 2017, Sec. 4.4).

Real-data path: one uint32 word per bit (d words per report; :func:`unary_encoding_from_bits`),
bit j shown iff its word is below an integer threshold:

* (p, q) given (:func:`unary_encoding`): T_p = floor(p 2^32), T_q = min(ceil(q 2^32), T_p),
  exact for the floats p, q (scaling by 2^32 and rounding to an integer are exact), so the
  realised p^ = T_p / 2^32 <= p and q^ = T_q / 2^32 >= q (or q^ = p^: epsilon 0), each within
  2^-32 of nominal, and the realised epsilon never exceeds eps(p, q); a concrete p (q) that is
  not a float of the release dtype is rounded down (up) first;
* OUE (:func:`optimized_unary_encoding`): T_p = 2^31 exactly and T_q = ceil(2^32 / (e^eps + 1))
  for the real e^eps of the float eps (double-word arithmetic,
  :mod:`ldpjax.mechanisms._oracle_words`), capped at 2^31, so the realised epsilon
  ln((2^32 - T_q) / T_q) never exceeds eps;
* SUE (:func:`symmetric_unary_encoding`): T_q = ceil(2^32 / (e^(eps/2) + 1)) (capped at 2^31)
  and T_p = 2^32 - T_q, realised epsilon 2 ln((2^32 - T_q) / T_q) <= eps.

Beyond eps = ln(2^32 - 1) = 22.18 (OUE; twice that for SUE) the other bits keep one word
(q^ = 2^-32, within 2^-32 of nominal) and the realised epsilon stays below the claim.

No privacy (p = 1, q = 0, eps = inf) is honoured only when concrete or inside
:func:`~ldpjax.mechanisms.no_privacy_permitted`. Fail closed: concrete p, q outside [0, 1], q > p,
p = 0, q = 1, eps < 0 or NaN, items outside 0..d-1, d < 2 or float16 / bfloat16 raise
``ValueError``; a traced invalid argument gives the invalid report, every bit -1
(:data:`INVALID_BIT`) -- never the true one-hot vector.

Randomness: every word comes from the caller's key (for real data a secret
:func:`~ldpjax.mechanisms.secure_key`); the mechanism uses no public randomness.

Simulation path: :func:`unary_encoding_counts` draws the d bit counts of n reports from the
histogram of the items (Binomial(h_j, p) + Binomial(n - h_j, q), floating-point binomials,
:mod:`ldpjax.mechanisms.binomial`): the exact joint law of the counts of the nominal mechanism,
for simulations only. Every bit of one report is drawn from its own word, so ``d`` words per
report (a release of n reports over d items holds n d words: 4 GB for n = 10^5, d = 10^4).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms import _oracle_words as ow
from ldpjax.mechanisms.binomial import binomial
from ldpjax.mechanisms.release import register_release
from ldpjax.types import Array, ArrayLike, PRNGKey

#: Every bit of an invalid report.
INVALID_BIT = -1
_HALF = 2**31


def check_domain_size(name: str, d: int) -> int:
    """``d`` must be a static Python integer >= 2 (it fixes the report's shape)."""
    if isinstance(d, bool) or not isinstance(d, int) or d < 2:
        raise ValueError(f"{name} must be a Python integer >= 2 (the number of items); got {d!r}")
    return d


def check_item(item: ArrayLike, d: int, name: str = "item") -> None:
    """Concrete items must be integers in [0, d) (``ValueError`` naming them)."""
    if isinstance(item, (str, bytes)):
        raise TypeError(f"{name} must be integer items, got a string {item!r}")
    if not v.is_concrete(item):
        return
    v.check(name, item, lambda x: (x == np.round(x)) & (x >= 0) & (x < d),
            f"integers in [0, d) with d = {d}")


def item_ok(item: Array, d) -> Array:
    """Traced domain of items: integers in [0, d) (NaN fails)."""
    item = jnp.asarray(item)
    whole = (item == jnp.round(item)) if jnp.issubdtype(item.dtype, jnp.floating) else True
    return whole & (item >= 0) & (item < d)


def _check_pq(p: ArrayLike, q: ArrayLike) -> None:
    v.check_range("p", p, 0.0, 1.0, low_open=True)
    v.check_range("q", q, 0.0, 1.0, high_open=True)
    dom.check_precision("p", p)
    dom.check_precision("q", q)
    if v.is_concrete((p, q)):
        if np.any(np.asarray(q, np.float64) > np.asarray(p, np.float64)):
            raise ValueError(f"q must be <= p (bit v is 1 at least as often as the others); got "
                             f"p = {p!r}, q = {q!r}")


def unary_encoding_thresholds(p: ArrayLike, q: ArrayLike) -> tuple[Array, Array, Array, Array]:
    """(T_p, T_q, p_certain, valid) of UE with probabilities (p, q): T_p = floor(p 2^32),
    T_q = min(ceil(q 2^32), T_p) as uint32 (exact for the floats), ``p_certain`` where p = 1
    (bit v always 1), ``valid`` the traced domain (p = 1 or q = 0 only where no privacy is
    allowed).

    Example:
      >>> t_p, t_q, certain, ok = unary_encoding_thresholds(0.5, 0.25)
      >>> int(t_p), int(t_q), bool(certain), bool(ok)
      (2147483648, 1073741824, False, True)
    """
    _check_pq(p, q)
    allow_none = dom.inf_allowed((p, q))
    dtype = dom.release_dtype(p, q)
    p = ow.float_probability(p, dtype, up=False)
    q = ow.float_probability(q, dtype, up=True)
    p, q = jnp.asarray(p, dtype), jnp.asarray(q, dtype)
    ok = (p > 0) & (p <= 1) & (q >= 0) & (q < 1) & (q <= p)
    ok = ok & (allow_none | ((p < 1) & (q > 0)))
    t_p, p_certain = ow.threshold_from_probability(jnp.where(ok, p, 0.5), up=False)
    t_q, _ = ow.threshold_from_probability(jnp.where(ok, q, 0.5), up=True)
    t_q = jnp.where(p_certain, t_q, jnp.minimum(t_q, t_p))
    return t_p, t_q, p_certain, ok


def _budget_ok(eps: ArrayLike, dtype) -> Array:
    allow_inf = dom.inf_allowed(eps)
    eps = jnp.asarray(eps, dtype)
    return (eps >= 0) & (allow_inf | (eps < jnp.inf))


def _check_budget(eps: ArrayLike) -> None:
    v.check_range("eps", eps, 0.0, jnp.inf)
    dom.check_precision("eps", eps)


def other_bit_words(x: ArrayLike) -> Array:
    """T = min(ceil(2^32 / (e^x + 1)), 2^31): the words of a bit shown with probability
    1 / (e^x + 1), exact for the real e^x of the float x (0 for x = inf).

    Example:
      >>> int(other_bit_words(1.0))  # ceil(2^32 / (e + 1))
      1155094610
    """
    words, _ = ow.ceil_words(1, 2, 1, x)
    return jnp.minimum(words, jnp.uint32(_HALF))


def oue_thresholds(eps: ArrayLike) -> tuple[Array, Array, Array, Array]:
    """(T_p, T_q, p_certain, valid) of OUE: T_p = 2^31, T_q = :func:`other_bit_words` (eps).

    Example:
      >>> t_p, t_q, _, _ = oue_thresholds(1.0)
      >>> int(t_p), int(t_q)
      (2147483648, 1155094610)
    """
    _check_budget(eps)
    dtype = dom.release_dtype(eps)
    ok = _budget_ok(eps, dtype)
    x = jnp.asarray(ow.float_budget(eps, dtype), dtype)
    t_q = other_bit_words(jnp.where(ok, x, 0.0))
    return jnp.full(t_q.shape, _HALF, jnp.uint32), t_q, jnp.zeros(t_q.shape, bool), ok


def sue_thresholds(eps: ArrayLike) -> tuple[Array, Array, Array, Array]:
    """(T_p, T_q, p_certain, valid) of SUE: T_q = :func:`other_bit_words` (eps / 2),
    T_p = 2^32 - T_q (eps = inf: T_q = 0 and bit v always 1).

    Example:
      >>> t_p, t_q, _, _ = sue_thresholds(2.0)
      >>> int(t_p) + int(t_q) == 2**32
      True
    """
    _check_budget(eps)
    dtype = dom.release_dtype(eps)
    ok = _budget_ok(eps, dtype)
    x = jnp.asarray(ow.float_budget(eps, dtype), dtype)
    t_q = other_bit_words(jnp.where(ok, 0.5 * x, 0.0))  # eps / 2 is exact
    return jnp.uint32(0) - t_q, t_q, t_q == 0, ok


def unary_encoding_from_bits(words: ArrayLike, item: ArrayLike, t_p: ArrayLike, t_q: ArrayLike,
                             p_certain: ArrayLike, valid: ArrayLike) -> Array:
    """The UE report decided on given words: bit j = 1 iff words[..., j] < (T_p if j = item
    else T_q) (bit ``item`` also where ``p_certain``); every bit -1 where not ``valid`` or the
    item is outside [0, d).

    Args:
      words: uint32, shape (..., d).
      item: the true items, shape (...) (broadcast).
      t_p, t_q, p_certain, valid: from :func:`unary_encoding_thresholds`,
        :func:`sue_thresholds` or :func:`oue_thresholds` (broadcast against ``item``).

    Returns:
      int8 bits of shape (..., d).

    Example:
      >>> import jax.numpy as jnp
      >>> w = jnp.array([2**30 - 1, 2**31, 2**30, 0], jnp.uint32)  # item 1: T_p = 2^31
      >>> unary_encoding_from_bits(w, 1, 2**31, 2**30, False, True).tolist()
      [1, 0, 0, 1]
    """
    words = jnp.asarray(words, jnp.uint32)
    d = words.shape[-1]
    item = jnp.asarray(item)
    ok = jnp.asarray(valid) & item_ok(item, d)
    own = jnp.arange(d) == jnp.where(ok, item, 0).astype(jnp.int32)[..., None]
    t_p = jnp.asarray(t_p, jnp.uint32)[..., None]
    t_q = jnp.asarray(t_q, jnp.uint32)[..., None]
    certain = jnp.asarray(p_certain, bool)[..., None]
    bits = jnp.where(own, (words < t_p) | certain, words < t_q)
    return jnp.where(ok[..., None], bits.astype(jnp.int8), jnp.int8(INVALID_BIT))


def _report(key: PRNGKey, item: ArrayLike, d: int, thresholds) -> Array:
    t_p, t_q, certain, ok = thresholds
    shape = jnp.broadcast_shapes(jnp.shape(item), jnp.shape(t_q))
    w = ow.words(key, shape + (d,))
    return unary_encoding_from_bits(w, jnp.broadcast_to(jnp.asarray(item), shape), t_p, t_q,
                                    certain, ok)


def unary_encoding(key: PRNGKey, item: ArrayLike, p: ArrayLike, q: ArrayLike, d: int) -> Array:
    """Report the one-hot encoding of ``item`` with bit v kept at 1 w.p. p, others set w.p. q.

    eps-LDP with eps = ln(p (1 - q) / ((1 - p) q)); claim
    ``UnaryEncodingEvent(p, q)`` (module docstring). Safe for real data with a key from
    :func:`~ldpjax.mechanisms.secure_key` (d uint32 words per report).

    Args:
      key: PRNG key.
      item: true items, integers in [0, d), any shape.
      p: probability that the item's own bit is 1, in (0, 1] (1: no privacy).
      q: probability that any other bit is 1, in [0, p] and below 1 (0: no privacy).
      d: number of items (static Python integer >= 2).

    Returns:
      int8 bits of shape ``item.shape + (d,)`` (every bit -1 where a traced argument is
      invalid).

    Example:
      >>> import jax
      >>> unary_encoding(jax.random.key(0), 2, 0.5, 0.2, 4).shape
      (4,)
    """
    d = check_domain_size("d", d)
    check_item(item, d)
    return _report(key, item, d, unary_encoding_thresholds(p, q))


def symmetric_unary_encoding(key: PRNGKey, item: ArrayLike, eps: ArrayLike, d: int) -> Array:
    """SUE (basic RAPPOR) at budget eps: p = e^(eps/2) / (e^(eps/2) + 1), q = 1 - p.

    Exact for eps (module docstring; realised epsilon <= eps). Claim:
    ``frequency_events.sue_event(eps)``. Safe for real data with a secure key.

    Example:
      >>> import jax
      >>> symmetric_unary_encoding(jax.random.key(0), 1, 1.0, 3).shape
      (3,)
    """
    d = check_domain_size("d", d)
    check_item(item, d)
    return _report(key, item, d, sue_thresholds(eps))


def optimized_unary_encoding(key: PRNGKey, item: ArrayLike, eps: ArrayLike, d: int) -> Array:
    """OUE at budget eps: p = 1/2 (exactly 2^31 words), q = 1 / (e^eps + 1).

    Exact for eps (module docstring; realised epsilon <= eps). Claim:
    ``frequency_events.oue_event(eps)``. Safe for real data with a secure key.

    Example:
      >>> import jax
      >>> optimized_unary_encoding(jax.random.key(0), 0, 2.0, 5).shape
      (5,)
    """
    d = check_domain_size("d", d)
    check_item(item, d)
    return _report(key, item, d, oue_thresholds(eps))


def sue_probabilities(eps: ArrayLike) -> tuple[Array, Array]:
    """(p, q) = (e^(eps/2), 1) / (e^(eps/2) + 1) of SUE (nominal; differentiable).

    Example:
      >>> p, q = sue_probabilities(2.0)
      >>> round(float(p), 4), round(float(q), 4)
      (0.7311, 0.2689)
    """
    v.check_range("eps", eps, 0.0, jnp.inf)
    eps = jnp.asarray(eps, jnp.result_type(eps, float))
    return jax.nn.sigmoid(0.5 * eps), jax.nn.sigmoid(-0.5 * eps)


def oue_probabilities(eps: ArrayLike) -> tuple[Array, Array]:
    """(p, q) = (1/2, 1 / (e^eps + 1)) of OUE (nominal; differentiable).

    Example:
      >>> p, q = oue_probabilities(1.0)
      >>> float(p), round(float(q), 4)
      (0.5, 0.2689)
    """
    v.check_range("eps", eps, 0.0, jnp.inf)
    eps = jnp.asarray(eps, jnp.result_type(eps, float))
    return jnp.full_like(eps, 0.5), jax.nn.sigmoid(-eps)


def support_counts(key: PRNGKey, histogram: ArrayLike, p_star: ArrayLike, q_star: ArrayLike
                   ) -> Array:
    """Support counts of n reports from the items' histogram: Binomial(h_j, p*) +
    Binomial(n - h_j, q*) for each item j (n = sum_j h_j), independently across items.

    The exact joint law of UE's bit counts (p* = p, q* = q); for local hashing, Hadamard
    response and subset selection (their p*, q* in :mod:`ldpjax.frequency`) the exact law of
    each item's support count, but drawn independently across items, which a real run's counts
    are not. A *simulation* path (floating-point binomials): a release of real data draws each
    report with the mechanism itself.

    Args:
      key: PRNG key.
      histogram: counts of the true items, shape (..., d), whole numbers >= 0.
      p_star: probability that a report supports its own item, in [0, 1].
      q_star: probability that it supports a given other item, in [0, 1].

    Returns:
      Counts (float, whole numbers), shape (..., d); NaN where a traced argument is invalid.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> support_counts(jax.random.key(0), jnp.array([5.0, 0.0, 3.0]), 0.5, 0.25).shape
      (3,)
    """
    for name, value in (("histogram", histogram), ("p_star", p_star), ("q_star", q_star)):
        dom.check_precision(name, value)
    v.check_integer("histogram", histogram, 0)
    v.check_range("p_star", p_star, 0.0, 1.0)
    v.check_range("q_star", q_star, 0.0, 1.0)
    dtype = dom.release_dtype(histogram, p_star, q_star)
    h = jnp.asarray(histogram, dtype)
    p_star, q_star = jnp.asarray(p_star, dtype), jnp.asarray(q_star, dtype)
    whole = jnp.all((h >= 0) & (h == jnp.round(h)) & jnp.isfinite(h), axis=-1, keepdims=True)
    ok = whole & dom.prob_ok(p_star)[..., None] & dom.prob_ok(q_star)[..., None]
    h = jnp.where(ok, h, 0.0)
    rest = jnp.sum(h, axis=-1, keepdims=True) - h
    own_key, other_key = jax.random.split(key)
    own = binomial(own_key, h, jnp.where(ok, p_star[..., None], 0.5), dtype=dtype)
    other = binomial(other_key, rest, jnp.where(ok, q_star[..., None], 0.5), dtype=dtype)
    return dom.poison(ok, jnp.minimum(own, h) + jnp.minimum(other, rest))


def unary_encoding_counts(key: PRNGKey, histogram: ArrayLike, p: ArrayLike, q: ArrayLike
                          ) -> Array:
    """The d bit counts of UE reports of items with histogram ``histogram`` (the simulation
    path: :func:`support_counts` with p* = p, q* = q; exact joint law up to the binomials'
    floating point).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> float(unary_encoding_counts(jax.random.key(1), jnp.array([4.0, 0.0]), 1.0, 0.0)[0])
      4.0
    """
    return support_counts(key, histogram, p, q)


# real-data paths (integer words; the key must be a secure key): ldpjax.mechanisms.release
register_release(unary_encoding)
register_release(symmetric_unary_encoding)
register_release(optimized_unary_encoding)

__all__ = [
    "INVALID_BIT",
    "check_domain_size",
    "check_item",
    "item_ok",
    "optimized_unary_encoding",
    "other_bit_words",
    "oue_probabilities",
    "oue_thresholds",
    "sue_probabilities",
    "sue_thresholds",
    "support_counts",
    "symmetric_unary_encoding",
    "unary_encoding",
    "unary_encoding_counts",
    "unary_encoding_from_bits",
    "unary_encoding_thresholds",
]
