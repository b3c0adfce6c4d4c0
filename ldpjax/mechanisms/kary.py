"""K-ary randomized response (generalised randomized response; paper 002, Sec. 3).

The true category c in {0, ..., K-1} is kept with probability e^xi / (K - 1 + e^xi) and each
other category is shown with probability 1 / (K - 1 + e^xi): xi-LDP. Equivalently, *explore*
with probability p = K / (K - 1 + e^xi) (``accounting.krr_explore_prob``) and then show a
uniform category over all K — which is epsilon-greedy with exploration rate p, the reading of
paper 002 (the greedy arm is the "true category").

One uniform per report (the fast exact form): ``u < p`` explores, and then u / p is again
uniform on [0, 1), so the shown category is floor(K u / p) (clipped to K - 1 for the float edge);
otherwise the true category is shown. :func:`kary_randomized_response_from_uniform` also
returns a *spare* uniform, (u - p) / (1 - p) on the greedy branch and the fractional part of
K u / p on the exploring one, independent of the report, which callers may use for tie breaking
(the reduced float resolution of a spare — about 24 - log2(K / p) bits in float32 — is a
law residual of order K / (p 2^24), stated here).

Fail closed: concrete xi < 0 or NaN, explore probabilities outside [0, 1], K < 2, or categories
outside 0..K-1 raise ``ValueError``; traced ones explore with probability 1 (a uniform
category) — never the true category.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting import krr_explore_prob
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms.randomized_response import report_uniforms
from ldpjax.types import Array, ArrayLike, PRNGKey


def kary_randomized_response_from_uniform(
    u: ArrayLike, category: ArrayLike, explore_prob: ArrayLike, k: ArrayLike
) -> tuple[Array, Array, Array]:
    """K-RR from one uniform: ``(report, explored, spare_uniform)``.

    Args:
      u: uniforms in [0, 1) (from :func:`~ldpjax.mechanisms.report_uniforms`).
      category: true categories in [0, k).
      explore_prob: p in [0, 1] (p = 1: uniform output; p = 0: the true category).
      k: number of categories, integer >= 2.

    Returns:
      ``report`` (int32), ``explored`` (bool) and a spare uniform independent of the report.
      Invalid traced arguments explore with probability 1.

    Example:
      >>> report, explored, spare = kary_randomized_response_from_uniform(0.9, 2, 0.5, 3)
      >>> int(report), bool(explored), round(float(spare), 2)
      (2, False, 0.8)
    """
    u = jnp.asarray(u)
    dtype = u.dtype
    p = jnp.asarray(explore_prob, dtype)
    k_int = jnp.asarray(k, jnp.int32)
    category = jnp.asarray(category, jnp.int32)
    ok = dom.prob_ok(p) & (k_int >= 2) & (category >= 0) & (category < k_int)
    p = jnp.where(ok, p, 1.0)
    k_safe = jnp.maximum(k_int, 1)
    explored = u < p
    scaled = u / jnp.where(p > 0, p, 1.0) * k_safe.astype(dtype)
    uniform_category = jnp.minimum(jnp.floor(scaled).astype(jnp.int32), k_safe - 1)
    report = jnp.where(explored, uniform_category, category)
    spare = jnp.where(
        explored,
        scaled - jnp.floor(scaled),
        (u - p) / jnp.where(p < 1, 1.0 - p, 1.0),
    )
    return report, explored, jnp.clip(spare, 0.0, jnp.nextafter(jnp.asarray(1.0, dtype), 0.0))


def kary_randomized_response(
    key: PRNGKey, category: ArrayLike, xi: ArrayLike, k: ArrayLike
) -> Array:
    """Report a category with K-ary randomized response at budget xi (xi-LDP).

    Args:
      key: PRNG key.
      category: true categories, integers in [0, k).
      xi: budget in [0, inf] (0: uniform output; inf: always the true category).
      k: number of categories, integer >= 2 (may be an array, so it vmaps).

    Returns:
      Reported categories (int32), the broadcast shape of ``category`` and ``xi``.

    Example:
      >>> import jax
      >>> int(kary_randomized_response(jax.random.key(0), 2, float("inf"), 5))
      2
    """
    v.check_range("xi", xi, 0.0, jnp.inf)
    v.check_integer("k", k, 2)
    dom.check_categories("category", category, k)
    explore_prob = krr_explore_prob(xi, k)
    return kary_randomized_response_explore(key, category, explore_prob, k)


def kary_randomized_response_explore(
    key: PRNGKey, category: ArrayLike, explore_prob: ArrayLike, k: ArrayLike
) -> Array:
    """K-RR parameterised by its exploration probability p (epsilon-greedy's rate).

    Privacy: xi = log(1 + K (1 - p) / p) (``accounting.krr_budget``).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> kary_randomized_response_explore(jax.random.key(0), jnp.zeros(5, int), 1.0, 4).shape
      (5,)
    """
    v.check_range("explore_prob", explore_prob, 0.0, 1.0)
    v.check_integer("k", k, 2)
    dom.check_categories("category", category, k)
    p = jnp.asarray(explore_prob, jnp.result_type(explore_prob, float))
    shape = jnp.broadcast_shapes(jnp.shape(category), p.shape)
    u = report_uniforms(key, shape, p.dtype)
    report, _, _ = kary_randomized_response_from_uniform(u, category, p, k)
    return report





def multinomial_counts(key: PRNGKey, count: ArrayLike, probs: ArrayLike) -> Array:
    """Multinomial(count, probs) over the last axis, by sequential conditional binomials.

    ``count`` is a float array holding integers (broadcast against ``probs[..., 0]``). Exact in
    law up to ``jax.random.binomial``'s float arithmetic.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> float(multinomial_counts(jax.random.key(0), 10.0, jnp.ones(4) / 4).sum())
      10.0
    """
    probs = jnp.asarray(probs)
    remaining = jnp.asarray(count, probs.dtype)
    mass = jnp.ones(probs.shape[:-1], probs.dtype)
    keys = jax.random.split(key, probs.shape[-1])
    out = []
    for j in range(probs.shape[-1] - 1):
        p = probs[..., j]
        cond = jnp.where(mass > 0, jnp.clip(p / jnp.where(mass > 0, mass, 1.0), 0.0, 1.0), 0.0)
        draw = jax.random.binomial(keys[j], remaining, cond, dtype=probs.dtype)
        draw = jnp.minimum(jnp.round(draw), remaining)
        out.append(draw)
        remaining = remaining - draw
        mass = jnp.maximum(mass - p, 0.0)
    out.append(remaining)
    return jnp.stack(out, axis=-1)


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
      Report counts, shape (..., K), summing to ``counts`` on the last axis. A traced invalid p
      or category explores with probability 1 (all m reports drawn from ``weights``).

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
    ok = dom.prob_ok(p) & (category >= 0) & (category < k) & (m >= 0)
    p = jnp.where(ok, p, 1.0)
    explore_key, arm_key = jax.random.split(key)
    explorers = jnp.minimum(jnp.round(jax.random.binomial(explore_key, m, p, dtype=w.dtype)), m)
    explored = multinomial_counts(arm_key, explorers, w)
    onehot = (jnp.arange(k) == category[..., None]).astype(w.dtype)
    return explored + (m - explorers)[..., None] * onehot


__all__ = [
    "kary_randomized_response",
    "kary_randomized_response_counts",
    "kary_randomized_response_explore",
    "kary_randomized_response_from_uniform",
    "multinomial_counts",
]
