"""K-ary randomized response (generalised randomized response; paper 002, Sec. 3).

The true category c in {0, ..., K-1} is kept with probability e^xi / (K - 1 + e^xi) and each
other category is shown with probability 1 / (K - 1 + e^xi): xi-LDP. Equivalently, *explore*
with probability p = K / (K - 1 + e^xi) (``accounting.krr_explore_prob``) and then show a
uniform category over all K — which is epsilon-greedy with exploration rate p, the reading of
paper 002 (the greedy arm is the "true category").

Exact at every budget, decided on two uint32 words per report
(:func:`~ldpjax.mechanisms.report_bits` of shape (..., 2)):

* Q = ceil(p 2^32 / K), computed exactly in integers from the float p (p 2^32 and its ceiling
  are exact in float32 and float64), and capped at floor(2^32 / K);
* word w0 < K Q explores and shows category floor(w0 / Q) — exactly uniform over the K
  categories, each shown with probability Q / 2^32 in [p / K, p / K + 2^-32);
* when Q was capped (p within K 2^-32 of 1) the remaining words explore too, redrawing the
  category from w1 the same way; the last sliver (probability below (K / 2^32)^2) reports -1.

So each category's probability is within 2^-32 of the nominal law (the true category's within
(K - 1) 2^-32), every other category is shown at least as often as claimed, and the privacy
loss never exceeds xi. Exploration probabilities below 2^-32 (xi > log(1 + K 2^32), about
22.9 at K = 2) cannot be honoured by 32-bit decisions and are refused (concrete: ``ValueError``;
traced: report -1). p = 0 (xi = inf: no privacy) is honoured only when concrete or inside
:func:`~ldpjax.mechanisms.no_privacy_permitted`.

:func:`kary_randomized_response_from_bits` also returns a *spare* uniform, independent of the
report, which callers may use for tie breaking: w0 mod Q over Q on the exploring branch, the
position of w0 in the non-exploring range on the other.

Fail closed: concrete xi < 0 or NaN, explore probabilities outside [0, 1], K < 2, categories
outside 0..K-1 or float16/bfloat16 inputs raise ``ValueError``; traced invalid ones report -1
(an invalid release) — never the true category and never a biased answer.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting import krr_explore_prob
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms.binomial import binomial
from ldpjax.mechanisms.randomized_response import report_bits
from ldpjax.types import Array, ArrayLike, PRNGKey

#: Smallest exploration probability 32-bit decisions honour (below it: refused).
MIN_EXPLORE_PROB = 2.0**-32
#: The report of an invalid K-RR release.
INVALID_CATEGORY = -1


def category_width(explore_prob: ArrayLike, k: ArrayLike) -> tuple[Array, Array]:
    """(Q, capped): each category's share Q = min(ceil(p 2^32 / K), floor(2^32 / K)) of the
    2^32 words, as uint32, and whether the cap applied (exact integer arithmetic).

    Example:
      >>> q, capped = category_width(0.5, 2)
      >>> int(q), bool(capped)
      (1073741824, False)
    """
    p = jnp.clip(jnp.asarray(explore_prob), 0.0, 1.0)
    k = jnp.maximum(jnp.asarray(k, jnp.uint32), 2)
    scaled = jnp.ceil(p * 2.0**32)  # exact: p 2^32 is a float, and so is its ceiling
    whole = scaled >= 2.0**32
    ceil_p = jnp.where(whole, 0.0, scaled).astype(jnp.uint32)
    minus_one = jnp.where(whole, jnp.uint32(2**32 - 1), ceil_p - 1)  # ceil(p 2^32) - 1
    raw = jnp.where(whole | (ceil_p > 0), minus_one // k + 1, jnp.uint32(0))  # ceil(. / K)
    top = jnp.uint32(2**32 - 1)
    cap = top // k + ((top % k) == k - 1).astype(jnp.uint32)  # floor(2^32 / K)
    return jnp.minimum(raw, cap), raw > cap


def kary_randomized_response_from_bits(
    bits: ArrayLike, category: ArrayLike, explore_prob: ArrayLike, k: ArrayLike
) -> tuple[Array, Array, Array]:
    """K-RR decided by two uint32 words per report: ``(report, explored, spare_uniform)``.

    Args:
      bits: uint32 words of shape (..., 2) (from :func:`~ldpjax.mechanisms.report_bits`).
      category: true categories in [0, k), shape (...).
      explore_prob: p in [0, 1] (p = 1: uniform output; p = 0: the true category, only where
        no privacy is allowed).
      k: number of categories, integer >= 2.

    Returns:
      ``report`` (int32; -1 where a traced argument is invalid), ``explored`` (bool) and a spare
      uniform in [0, 1) independent of the report.

    Example:
      >>> import jax.numpy as jnp
      >>> words = jnp.array([[3 * 2**30, 0], [2**29, 0]], jnp.uint32)  # p = 1/2, K = 2
      >>> report, explored, _ = kary_randomized_response_from_bits(words, 1, 0.5, 2)
      >>> report.tolist(), explored.tolist()  # w0 >= K Q = 2^31 keeps the truth; 2^29 explores
      ([1, 0], [False, True])
    """
    bits = jnp.asarray(bits, jnp.uint32)
    dom.check_precision("explore_prob", explore_prob)
    allow_zero = dom.inf_allowed(explore_prob)
    dtype = dom.release_dtype(explore_prob)
    p = jnp.asarray(explore_prob, dtype)
    category = jnp.asarray(category)
    k_int = jnp.asarray(k, jnp.int32)
    integral = category == jnp.round(category) if jnp.issubdtype(category.dtype, jnp.floating) else True
    ok = (dom.prob_ok(p) & (k_int >= 2) & integral & (category >= 0) & (category < k_int)
          & ((p >= MIN_EXPLORE_PROB) | (allow_zero & (p == 0))))
    category = jnp.where(ok, category, 0).astype(jnp.int32)
    width, capped = category_width(jnp.where(ok, p, 1.0), jnp.maximum(k_int, 2))
    k_u = jnp.maximum(k_int, 2).astype(jnp.uint32)
    w0, w1 = bits[..., 0], bits[..., 1]
    span = width * k_u  # the exploring words; wraps to 0 only when they are all 2^32 words
    full = (span == 0) & (width > 0)
    in_first = (w0 < span) | full
    in_second = (w1 < span) | full
    explored = in_first | capped
    word = jnp.where(in_first, w0, w1)
    safe_width = jnp.maximum(width, 1)
    shown = (word // safe_width).astype(jnp.int32)
    fraction = (word % safe_width).astype(dtype) / safe_width.astype(dtype)
    rest = 2.0**32 - span.astype(dtype)  # the non-exploring words (> 0 on that branch)
    stay = (w0 - span).astype(dtype) / jnp.maximum(rest, 1.0)
    report = jnp.where(explored, shown, category)
    report = jnp.where(capped & ~in_first & ~in_second, INVALID_CATEGORY, report)
    report = jnp.where(ok, report, INVALID_CATEGORY)
    spare = jnp.where(explored, fraction, stay)
    top = jnp.nextafter(jnp.asarray(1.0, dtype), jnp.asarray(0.0, dtype))
    return report, explored & ok, jnp.clip(spare, 0.0, top)


def kary_randomized_response(
    key: PRNGKey, category: ArrayLike, xi: ArrayLike, k: ArrayLike
) -> Array:
    """Report a category with K-ary randomized response at budget xi (xi-LDP).

    Exact to 2^-32 per category (module docstring). Safe for real data with a key from
    :func:`~ldpjax.mechanisms.secure_key`.

    Args:
      key: PRNG key.
      category: true categories, integers in [0, k).
      xi: budget in [0, log(1 + k 2^32)] or inf (0: uniform output; inf: always the true
        category, no privacy — honoured only when concrete or permitted).
      k: number of categories, integer >= 2 (may be an array, so it vmaps).

    Returns:
      Reported categories (int32), the broadcast shape of ``category`` and ``xi``; -1 where a
      traced argument is invalid.

    Example:
      >>> import jax
      >>> int(kary_randomized_response(jax.random.key(0), 2, float("inf"), 5))
      2
    """
    v.check_range("xi", xi, 0.0, jnp.inf)
    v.check_integer("k", k, 2)
    dom.check_categories("category", category, k)
    dom.check_precision("xi", xi)
    explore_prob = krr_explore_prob(xi, k)
    if v.is_concrete(xi):
        _check_honoured(explore_prob)
    return kary_randomized_response_explore(key, category, explore_prob, k)


def _check_honoured(explore_prob) -> None:
    import numpy as np

    p = np.asarray(explore_prob, np.float64)
    if np.any((p > 0) & (p < MIN_EXPLORE_PROB)):
        raise ValueError(
            "xi is too large for exact 32-bit randomized response: the exploration probability "
            f"{float(np.min(p[p > 0])):.3g} is below 2^-32; use xi <= log(1 + k 2^32) or xi = inf "
            "(no privacy)"
        )


def kary_randomized_response_explore(
    key: PRNGKey, category: ArrayLike, explore_prob: ArrayLike, k: ArrayLike
) -> Array:
    """K-RR parameterised by its exploration probability p (epsilon-greedy's rate).

    Privacy: xi = log(1 + K (1 - p) / p) (``accounting.krr_budget``); p must be 0 (no privacy,
    concrete or permitted) or at least 2^-32.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> kary_randomized_response_explore(jax.random.key(0), jnp.zeros(5, int), 1.0, 4).shape
      (5,)
    """
    v.check_range("explore_prob", explore_prob, 0.0, 1.0)
    v.check_integer("k", k, 2)
    dom.check_categories("category", category, k)
    dom.check_precision("explore_prob", explore_prob)
    if v.is_concrete(explore_prob):
        _check_honoured(explore_prob)
    p = jnp.asarray(explore_prob, dom.release_dtype(explore_prob))
    shape = jnp.broadcast_shapes(jnp.shape(category), p.shape)
    words = report_bits(key, shape + (2,))
    report, _, _ = kary_randomized_response_from_bits(words, category, p, k)
    return report


def multinomial_counts(key: PRNGKey, count: ArrayLike, probs: ArrayLike) -> Array:
    """Multinomial(count, probs) over the last axis, by sequential conditional binomials.

    ``count`` is a float array holding integers (broadcast against ``probs[..., 0]``). Exact in
    law up to the float arithmetic of :func:`ldpjax.mechanisms.binomial.binomial`.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> float(multinomial_counts(jax.random.key(0), 10.0, jnp.ones(4) / 4).sum())
      10.0
    """
    probs = jnp.asarray(probs)
    remaining = jnp.asarray(count, probs.dtype)
    remaining = jnp.broadcast_to(remaining, jnp.broadcast_shapes(remaining.shape, probs.shape[:-1]))
    mass = jnp.ones(probs.shape[:-1], probs.dtype)
    keys = jax.random.split(key, probs.shape[-1])

    def draw_one(carry, xs):
        # category j's count given the records left and the probability mass left
        remaining, mass = carry
        key_j, p = xs
        cond = jnp.where(mass > 0, jnp.clip(p / jnp.where(mass > 0, mass, 1.0), 0.0, 1.0), 0.0)
        draw = binomial(key_j, remaining, cond, dtype=probs.dtype)
        draw = jnp.minimum(jnp.round(draw), remaining)
        return (remaining - draw, jnp.maximum(mass - p, 0.0)), draw

    # one sampler in the program, looped over the K - 1 categories (not unrolled: compile time)
    (remaining, _), drawn = jax.lax.scan(
        draw_one, (remaining, mass), (keys[:-1], jnp.moveaxis(probs[..., :-1], -1, 0)))
    return jnp.concatenate([jnp.moveaxis(drawn, 0, -1), remaining[..., None]], axis=-1)


def kary_randomized_response_counts(
    key: PRNGKey, counts: ArrayLike, category: ArrayLike, explore_prob: ArrayLike,
    weights: ArrayLike | None = None,
) -> Array:
    """Counts of ``counts`` K-RR reports that share one true ``category`` (the count form).

    Exactly the law of the category counts of ``counts`` independent reports of
    :func:`kary_randomized_response_explore` (uniform ``weights``) or of its weighted variant
    (explorers show category j with probability ``weights[j]``): explorers E ~ Binomial(m, p),
    their reports ~ Multinomial(E, weights), the m - E others report ``category``. Used by block
    policies (paper 002's batched epsilon-greedy) where m can reach millions. Leading axes
    broadcast (one row per segment); the last axis of ``weights`` is K.

    Privacy: each of the m records is xi-LDP with xi = log(1 + K (1 - p) / p) for uniform
    weights (``accounting.krr_budget``); for non-uniform weights w, log(1 + (1 - p) / (p min_j w_j)).

    Args:
      key: PRNG key.
      counts: records per row (float dtype holding integers >= 0), shape (...,).
      category: the rows' true categories, integers in [0, K), shape (...,).
      explore_prob: p per row in [0, 1].
      weights: exploration weights, shape (..., K), non-negative, summing to 1 (default uniform:
        pass an array of shape (K,) or (..., K) to fix K).

    Returns:
      Report counts, shape (..., K), summing to ``counts`` on the last axis. NaN where a traced
      argument is invalid (p outside [0, 1], p = 0 unless permitted, a category outside 0..K-1,
      a count that is not a whole number >= 0, weights that are negative or do not sum to 1).
      A simulation path (:func:`ldpjax.mechanisms.binomial.binomial` works in floating point).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> c = kary_randomized_response_counts(jax.random.key(0), 100.0, 1, 0.3, jnp.ones(3) / 3)
      >>> float(c.sum())
      100.0
    """
    if weights is None:
        raise ValueError("weights must be given (an array of shape (..., K)); uniform: jnp.ones(K) / K")
    v.check_range("explore_prob", explore_prob, 0.0, 1.0)
    v.check_integer("counts", counts, 0)
    v.check_sums_to_one("weights", weights)
    w = jnp.asarray(weights, jnp.result_type(weights, float))
    k = w.shape[-1]
    dom.check_categories("category", category, k)
    m = jnp.asarray(counts, w.dtype)
    category = jnp.asarray(category, jnp.int32)
    p = jnp.asarray(explore_prob, w.dtype)
    allow_zero = dom.inf_allowed(explore_prob)
    whole = (m >= 0) & (m == jnp.round(m)) & jnp.isfinite(m)
    ok = (dom.prob_ok(p) & ((p > 0) | allow_zero) & (category >= 0) & (category < k) & whole
          & jnp.all((w >= 0) & (jnp.abs(jnp.sum(w, axis=-1, keepdims=True) - 1) < 1e-4), axis=-1))
    p = jnp.where(ok, p, 1.0)
    m_safe = jnp.where(ok, m, 0.0)
    explore_key, arm_key = jax.random.split(key)
    explorers = jnp.minimum(jnp.round(binomial(explore_key, m_safe, p, dtype=w.dtype)),
                            m_safe)
    explored = multinomial_counts(arm_key, explorers, w)
    onehot = (jnp.arange(k) == category[..., None]).astype(w.dtype)
    counts = explored + (m_safe - explorers)[..., None] * onehot
    return dom.poison(ok[..., None], counts)


__all__ = [
    "INVALID_CATEGORY",
    "MIN_EXPLORE_PROB",
    "kary_randomized_response",
    "kary_randomized_response_counts",
    "kary_randomized_response_explore",
    "category_width",
    "kary_randomized_response_from_bits",
    "multinomial_counts",
]
