"""K-ary randomized response (generalised randomized response) and its weighted variant.

The true category c in {0, ..., K-1} is kept with probability e^xi / (K - 1 + e^xi) and each
other category is shown with probability 1 / (K - 1 + e^xi): xi-LDP (Kairouz, Oh & Viswanath,
"Extremal mechanisms for local differential privacy", NeurIPS 2014; Wang, Blocki, Li & Jha,
"Locally differentially private protocols for frequency estimation", USENIX Security 2017).
Equivalently, *explore* with probability p = K / (K - 1 + e^xi)
(``accounting.krr_explore_prob``) and then show a uniform category over all K -- which is
epsilon-greedy with exploration rate p (Ponte & Ferecatu, "A Privacy Budgeting Framework for
Online Experimentation": the greedy arm is the "true category").

Exact at every budget, decided on two uint32 words per report
(:func:`~ldpjax.mechanisms.report_bits` of shape (..., 2)) against an integer *width* Q, the
number of the 2^32 words that show each category when exploring:

* by budget (:func:`kary_randomized_response`): Q = ceil(2^32 / (K - 1 + e^xi)) for the real
  number e^xi of the float xi (:func:`budget_width`, double-word arithmetic, never through a
  rounded exploration probability). Then Q (K - 1 + e^xi) >= 2^32, so the realised epsilon
  log((2^32 - (K - 1) Q) / Q) never exceeds xi, and each other category's probability Q / 2^32
  lies in [q, q + 2^-32] with q = 1 / (K - 1 + e^xi) (the true category's within
  (K - 1) 2^-32, on the side of more privacy);
* by exploration probability (:func:`kary_randomized_response_explore`, epsilon-greedy's
  rate): Q = ceil(p 2^32 / K) for the float p (:func:`category_width`, exact integer
  arithmetic), so the release is exact for that float p and its claim is
  xi = log(1 + K (1 - p) / p) = ``accounting.krr_budget(p)`` computed from that float (which
  rounds up: never below the realised epsilon);
* Q is capped at floor(2^32 / K); word w0 < K Q explores and shows category floor(w0 / Q) --
  exactly uniform over the K categories -- and the other words show the true category; when Q
  was capped (xi within about K 2^-32 of 0) the remaining words explore too, redrawing from
  w1 the same way; the last sliver (probability below (K / 2^32)^2) reports -1.

Exploration probabilities below 2^-32 (xi > log(1 + K (2^32 - 1)), about 22.9 at K = 2) cannot
be honoured by 32-bit decisions and are refused (concrete: ``ValueError``; traced: report -1).
xi = inf / p = 0 (no privacy) is honoured only when concrete or inside
:func:`~ldpjax.mechanisms.no_privacy_permitted`.

**Weighted K-RR** (per-category budgets xi_j; the arm-specific exploration of Ponte &
Ferecatu, Appendix J): with a_j = 1 / (e^{xi_j} - 1) and S = sum_j a_j, category j != c is shown
with probability a_j / (1 + S) and c with (1 + a_c) / (1 + S), so the likelihood ratio of
showing j is exactly e^{xi_j}. :func:`weighted_category_widths` gives every category its own
width W_j = ceil(2^32 a_j / (1 + S)) (double-word arithmetic again) and
:func:`weighted_randomized_response_from_bits` decides on the words: w0 below the cumulative
widths explores (category j on its own W_j words), the remaining R = 2^32 - sum_j W_j words show
the true category. Since W_j >= 2^32 a_j / (1 + S) and R <= 2^32 / (1 + S), the realised ratio
(R + W_j) / W_j never exceeds e^{xi_j} and each probability is within 2^-32 of the nominal one
for the other categories (within K 2^-32 for the true one).

:func:`kary_randomized_response_from_bits` and :func:`weighted_randomized_response_from_bits`
also return a *spare* uniform, independent of the report, which callers may use for tie
breaking: the position of w0 inside the shown category's words on the exploring branch, inside
the non-exploring range on the other.

Fail closed: concrete xi < 0 or NaN, explore probabilities outside [0, 1], K < 2 or not an
integer, categories outside 0..K-1 or float16/bfloat16 inputs raise ``ValueError``; traced
invalid ones report -1 (an invalid release) -- never the true category and never a biased
answer.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms import _float_float as ff
from ldpjax.mechanisms.binomial import binomial
from ldpjax.mechanisms.randomized_response import report_bits
from ldpjax.types import Array, ArrayLike, PRNGKey

#: Smallest exploration probability 32-bit decisions honour (below it: refused).
MIN_EXPLORE_PROB = 2.0**-32
#: The report of an invalid K-RR release.
INVALID_CATEGORY = -1
#: Largest argument of the double-word e^x - 1 per dtype; larger finite budgets give the
#: smallest width (one word), which the refusal bound excludes for concrete budgets anyway.
_X_MAX = {"float32": 80.0, "float64": 700.0}
#: Smallest positive per-category budget used in the weighted widths: below it a_j > 2^40, so
#: R = 0 (the release no longer depends on the true category) and the clamp changes nothing.
_X_MIN = 2.0**-40
_TOP = 2**32 - 1


def _margin(y_hi: Array, rounds: int) -> Array:
    """What the ceiling adds to a double-word quotient y: 16 u^2 per error term of y (each
    operation's bound of :mod:`._float_float` is at most 16 u^2), relative to y, plus the
    absolute rounding of the fractional part (see :func:`._float_float.ceil_to_uint32`)."""
    name = str(y_hi.dtype)
    u = ff.UNIT[name]
    absolute = 2.0**-18 if name == "float32" else 2.0**-45
    return y_hi * (16.0 * rounds * u * u) + absolute


def _floor_share(k_u: Array) -> Array:
    """floor(2^32 / k) in uint32 arithmetic (k >= 1)."""
    top = jnp.uint32(_TOP)
    return top // k_u + ((top % k_u) == k_u - 1).astype(jnp.uint32)


def _float_budget(xi: ArrayLike, dtype):
    """A budget as ``dtype``: a concrete one as a NumPy array (it stays concrete under ``jit``),
    rounded *down* where it is not representable (the release is then exact for a budget no
    larger than the one written); a traced one as it is."""
    if not v.is_concrete(xi):
        return jnp.asarray(xi, dtype)
    exact = np.asarray(xi, np.float64)
    rounded = exact.astype(dtype)
    with np.errstate(invalid="ignore"):
        above = rounded.astype(np.float64) > exact
    return np.where(above, np.nextafter(rounded, np.asarray(-np.inf, dtype)), rounded)


def category_width(explore_prob: ArrayLike, k: ArrayLike) -> tuple[Array, Array]:
    """(Q, capped): each category's share Q = min(ceil(p 2^32 / K), floor(2^32 / K)) of the
    2^32 words, as uint32, and whether the cap applied (exact integer arithmetic on the float p).

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
    minus_one = jnp.where(whole, jnp.uint32(_TOP), ceil_p - 1)  # ceil(p 2^32) - 1
    raw = jnp.where(whole | (ceil_p > 0), minus_one // k + 1, jnp.uint32(0))  # ceil(. / K)
    cap = _floor_share(k)
    return jnp.minimum(raw, cap), raw > cap


def budget_width(xi: ArrayLike, k: ArrayLike) -> tuple[Array, Array]:
    """(Q, capped) for budget xi: Q = min(ceil(2^32 / (K - 1 + e^xi)), floor(2^32 / K)), uint32.

    Exact for the real number e^xi of the float xi, in float32 without x64 too: K - 1 + e^xi
    = K + expm1(xi) and the quotient are formed in double-word arithmetic
    (:mod:`ldpjax.mechanisms._float_float`; relative error bound 192 u^2, u the unit roundoff,
    2^-24 in float32: at most 2^-9 of a word at Q <= 2^31; measured against mpmath it stays
    below 3 u^2), and the ceiling adds that bound first. So Q is never below the exact ceiling
    (the realised epsilon log((2^32 - (K - 1) Q) / Q) <= xi) and exceeds it by one word only
    where 2^32 / (K - 1 + e^xi) lies within 2^-9 below an integer (float64: 2^-44). xi = inf
    gives 0 (no exploration); a finite xi at least one word.

    Example:
      >>> q, capped = budget_width(1.0, 2)  # ceil(2^32 / (1 + e)) = ceil(1155094609.32)
      >>> int(q), bool(capped)
      (1155094610, False)
    """
    dtype = dom.release_dtype(xi)
    xi = jnp.asarray(xi, dtype)
    k = jnp.maximum(jnp.asarray(k, jnp.uint32), 2)
    finite = (xi >= 0) & (xi < jnp.inf)
    x = jnp.clip(jnp.where(finite, xi, 0.0), 0.0, _X_MAX[str(dtype)])
    x, k = jnp.broadcast_arrays(x, k)
    zero = jnp.zeros_like(x)
    denominator = ff.add((k.astype(dtype), zero), ff.expm1(x))  # K - 1 + e^xi
    y = ff.div((jnp.full_like(x, 2.0**32), zero), denominator)
    raw, _ = ff.ceil_to_uint32(y, _margin(y[0], 12))
    raw = jnp.where(finite, jnp.maximum(raw, 1), jnp.uint32(0))
    cap = _floor_share(k)
    return jnp.minimum(raw, cap), raw > cap


def _pairwise_sum(terms: list):
    """Double-word sum of a list of double words, pairwise (error grows with log2 of the count)."""
    while len(terms) > 1:
        pairs = [ff.add(terms[i], terms[i + 1]) for i in range(0, len(terms) - 1, 2)]
        terms = pairs + ([terms[-1]] if len(terms) % 2 else [])
    return terms[0]


def _carry_sum(widths: Array) -> tuple[Array, Array, Array]:
    """(cumulative sums mod 2^32, carries up to each entry, total carries) on the last axis."""
    cumulative = jnp.cumsum(widths, axis=-1, dtype=jnp.uint32)
    previous = jnp.concatenate([jnp.zeros_like(cumulative[..., :1]), cumulative[..., :-1]], -1)
    carries = jnp.cumsum((cumulative < previous).astype(jnp.int32), axis=-1)
    return cumulative, carries, carries[..., -1]


def weighted_category_widths(budgets: ArrayLike, k: ArrayLike | None = None
                             ) -> tuple[Array, Array]:
    """(W, capped): per-category widths of weighted K-RR with per-category budgets xi_j.

    W_j = ceil(2^32 a_j / (1 + S)) with a_j = 1 / (e^{xi_j} - 1), S = sum_j a_j over the K
    categories in use (double-word arithmetic as :func:`budget_width`, the sum pairwise; the
    ceiling adds the error bound 16 (12 + 2 ceil(log2 K_max)) u^2 first, so W_j is never below
    the exact value and above it by one word only within 2^-8 below an integer for K_max <= 4
    in float32). Categories at or beyond ``k`` (padding) and xi_j = inf get W_j = 0; a finite
    xi_j at least one word. Budgets of 0 take all the exploration: W_j = floor(2^32 / z) on
    the z categories with xi_j = 0 (capped when z does not divide 2^32; z = 1: 2^32 - 1
    words, capped). Where sum_j W_j exceeds 2^32 (budgets so near 0 that R = 2^32 / (1 + S)
    is below about K words) each positive width drops by one word and the result is *capped*:
    the words left over redraw, as in K-RR's capped case (the arm then does not depend on the
    true category; each probability stays within 2K 2^-32 of the nominal one).

    Args:
      budgets: xi_j in [0, inf], shape (..., K_max) (checked by the caller; a traced NaN or
        negative entry is treated as 0, i.e. uniform play: the caller reports it).
      k: categories in use (default K_max).

    Example:
      >>> w, capped = weighted_category_widths([1.0, 1.0])  # = K-RR at xi = 1: Q each
      >>> w.tolist(), bool(capped)
      ([1155094610, 1155094610], False)
    """
    budgets = jnp.asarray(np.asarray(budgets) if isinstance(budgets, (list, tuple)) else budgets)
    dtype = dom.release_dtype(budgets)
    xi = budgets.astype(dtype)
    kmax = xi.shape[-1]
    in_use = jnp.arange(kmax) < (kmax if k is None else jnp.asarray(k)[..., None])
    zero = in_use & ~(xi > 0)  # NaN and negative as 0: the caller fails closed on them
    finite = in_use & (xi > 0) & (xi < jnp.inf)
    x = jnp.clip(jnp.where(finite, xi, 1.0), _X_MIN, _X_MAX[str(dtype)])
    one = (jnp.ones_like(x), jnp.zeros_like(x))
    m = ff.expm1(x)  # e^xi_j - 1
    a = ff.div(one, m)
    a = (jnp.where(finite, a[0], 0.0), jnp.where(finite, a[1], 0.0))
    s = _pairwise_sum([(a[0][..., j], a[1][..., j]) for j in range(kmax)])
    t = ff.add((one[0][..., 0], one[1][..., 0]), s)  # 1 + S
    d = ff.mul(m, (t[0][..., None], t[1][..., None]))
    y = ff.div((jnp.full_like(x, 2.0**32), jnp.zeros_like(x)), d)
    rounds = 12 + 2 * max(1, int(np.ceil(np.log2(kmax))))
    raw, over = ff.ceil_to_uint32(y, _margin(y[0], rounds))
    raw = jnp.where(finite, jnp.maximum(raw, 1), jnp.uint32(0))
    _, _, carries = _carry_sum(raw)
    total_low = jnp.sum(raw, axis=-1, dtype=jnp.uint32)
    too_many = jnp.any(over & finite, axis=-1) | (carries >= 2) | ((carries == 1) & (total_low > 0))
    dropped = jnp.where(too_many[..., None] & (raw > 0), raw - 1, raw)
    count = jnp.sum(zero, axis=-1).astype(jnp.uint32)
    # floor(2^32 / z); z = 1: 2^32 - 1 words (2^32 is not a uint32) and the last one redraws
    share = jnp.where(count == 1, jnp.uint32(_TOP), _floor_share(jnp.maximum(count, 2)))
    zero_cap = (share * count != 0) & (count > 0)  # share * z wraps to 0 only at 2^32
    any_zero = count > 0
    widths = jnp.where(any_zero[..., None], jnp.where(zero, share[..., None], 0), dropped)
    return widths.astype(jnp.uint32), jnp.where(any_zero, zero_cap, too_many)


def _valid_k(k: ArrayLike) -> tuple[Array, Array]:
    """(k as int32 clipped to >= 2, whether k is an integer >= 2: a traced 4.5 is not)."""
    k = jnp.asarray(k)
    integral = (k == jnp.round(k)) if jnp.issubdtype(k.dtype, jnp.floating) else True
    ok = integral & (k >= 2)
    return jnp.maximum(jnp.where(ok, k, 2).astype(jnp.int32), 2), ok


def _category_ok(category: Array, k_int: Array) -> Array:
    integral = (category == jnp.round(category)) if jnp.issubdtype(category.dtype,
                                                                     jnp.floating) else True
    return integral & (category >= 0) & (category < k_int)


def _decide_uniform(bits, category, width, capped, k_int, ok, dtype):
    """The K-RR report from one width Q per report (see the module doc)."""
    category = jnp.where(ok, category, 0).astype(jnp.int32)
    k_u = k_int.astype(jnp.uint32)
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


def kary_randomized_response_from_bits(
    bits: ArrayLike, category: ArrayLike, explore_prob: ArrayLike, k: ArrayLike
) -> tuple[Array, Array, Array]:
    """K-RR decided by two uint32 words per report: ``(report, explored, spare_uniform)``.

    Exact for the float ``explore_prob`` p (width :func:`category_width`); its claim is
    ``accounting.krr_budget(p)``.

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
    v.check_integer("k", k, 2)
    dom.check_precision("explore_prob", explore_prob)
    allow_zero = dom.inf_allowed(explore_prob)
    dtype = dom.release_dtype(explore_prob)
    p = jnp.asarray(explore_prob, dtype)
    category = jnp.asarray(category)
    k_int, k_ok = _valid_k(k)
    ok = (dom.prob_ok(p) & k_ok & _category_ok(category, k_int)
          & ((p >= MIN_EXPLORE_PROB) | (allow_zero & (p == 0))))
    width, capped = category_width(jnp.where(ok, p, 1.0), k_int)
    return _decide_uniform(bits, category, width, capped, k_int, ok, dtype)


def _check_honoured(explore_prob, name: str, bound: str) -> None:
    """Concrete exploration probabilities (NumPy, float64) in (0, 2^-32) are refused."""
    p = np.asarray(explore_prob, np.float64)
    if np.any((p > 0) & (p < MIN_EXPLORE_PROB)):
        raise ValueError(
            f"{name} is too large for exact 32-bit randomized response: the exploration "
            f"probability {float(np.min(p[p > 0])):.3g} is below 2^-32; use {bound}"
        )


def kary_randomized_response(
    key: PRNGKey, category: ArrayLike, xi: ArrayLike, k: ArrayLike
) -> Array:
    """Report a category with K-ary randomized response at budget xi (xi-LDP).

    Decided against Q = :func:`budget_width` (xi, k), exact for xi itself (module doc): the
    realised epsilon never exceeds xi and each category is within 2^-32 of the nominal law
    ((K - 1) 2^-32 for the true one). A concrete xi that is not a float of the release dtype is
    rounded down to one. Safe for real data with a key from
    :func:`~ldpjax.mechanisms.secure_key`. ``jit``-able with a literal or a traced xi.

    Args:
      key: PRNG key.
      category: true categories, integers in [0, k).
      xi: budget in [0, log(1 + k (2^32 - 1))] or inf (0: uniform output; inf: always the true
        category, no privacy -- honoured only when concrete or permitted).
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
    allow_inf = dom.inf_allowed(xi)
    dtype = dom.release_dtype(xi)
    if v.is_concrete(xi) and v.is_concrete(k):
        xi64, k64 = np.asarray(xi, np.float64), np.asarray(k, np.float64)
        with np.errstate(over="ignore"):
            p = np.where(xi64 < np.inf, k64 / (k64 - 1.0 + np.exp(xi64)), 0.0)
        _check_honoured(p, "xi", "xi <= log(1 + k (2^32 - 1)) or xi = inf (no privacy)")
    xi = _float_budget(xi, dtype)
    category = jnp.asarray(category)
    k_int, k_ok = _valid_k(k)
    width, capped = budget_width(jnp.where(xi >= 0, xi, 0.0), k_int)
    # traced: xi >= 0 (NaN fails), inf only where permitted, exploration >= 2^-32 (K Q >= 1
    # word is implied by Q >= 1; the probability bound in float: K e^-xi >= 2^-32 roughly)
    honoured = (xi == jnp.inf) | (xi <= jnp.log(k_int.astype(dtype)) + 32 * np.log(2.0))
    ok = (xi >= 0) & k_ok & _category_ok(category, k_int) & honoured
    ok = ok & (allow_inf | (xi < jnp.inf))
    shape = jnp.broadcast_shapes(category.shape, jnp.shape(xi), jnp.shape(k))  # own words each
    words = report_bits(key, shape + (2,))
    report, _, _ = _decide_uniform(words, category, width, capped, k_int, ok, dtype)
    return report


def kary_randomized_response_explore(
    key: PRNGKey, category: ArrayLike, explore_prob: ArrayLike, k: ArrayLike
) -> Array:
    """K-RR parameterised by its exploration probability p (epsilon-greedy's rate).

    Exact for the float p (width :func:`category_width`; a concrete p that is not a float of
    the release dtype is rounded up to one: more exploration). Privacy: xi = log(1 + K (1 - p)
    / p) = ``accounting.krr_budget(p)`` computed from that float (rounded up, never below the
    realised epsilon); p must be 0 (no privacy, concrete or permitted) or at least 2^-32.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> kary_randomized_response_explore(jax.random.key(0), jnp.zeros(5, int), 1.0, 4).shape
      (5,)
    """
    v.check_range("explore_prob", explore_prob, 0.0, 1.0)
    v.check_integer("k", k, 2)
    dom.check_categories("category", category, k)
    dom.check_precision("explore_prob", explore_prob)
    dtype = dom.release_dtype(explore_prob)
    if v.is_concrete(explore_prob):
        _check_honoured(explore_prob, "explore_prob", "explore_prob >= 2^-32 or 0 (no privacy)")
        p = -_float_budget(-np.asarray(explore_prob, np.float64), dtype)  # rounded up
    else:
        p = jnp.asarray(explore_prob, dtype)
    shape = jnp.broadcast_shapes(jnp.shape(category), jnp.shape(p), jnp.shape(k))
    words = report_bits(key, shape + (2,))
    report, _, _ = kary_randomized_response_from_bits(words, category, p, k)
    return report


#: Up to this many categories the weighted release is unrolled into elementwise operations.
_UNROLL = 8


def _ranges(widths: Array, k_int: Array):
    """(starts, total mod 2^32, carries, an arm in use has no words, words beyond the arms in
    use) of the ranges of ``widths`` on the last axis; ``starts`` a list (few categories:
    unrolled, elementwise) or an array."""
    kmax = widths.shape[-1]
    if kmax > _UNROLL:
        cumulative, carried, carries = _carry_sum(widths)
        starts = cumulative - widths
        arms = jnp.arange(kmax)
        empty = jnp.any((arms < k_int[..., None]) & (widths == 0), axis=-1)
        stray = jnp.any((arms >= k_int[..., None]) & (widths > 0), axis=-1)
        return starts, cumulative[..., -1], carries, empty, stray
    starts = [jnp.zeros_like(widths[..., 0])]
    carries = jnp.zeros(widths.shape[:-1], jnp.int32)
    empty = stray = jnp.zeros(widths.shape[:-1], bool)
    for j in range(kmax):
        width = widths[..., j]
        end = starts[-1] + width
        carries = carries + (end < starts[-1]).astype(jnp.int32)
        starts.append(end)
        empty = empty | ((j < k_int) & (width == 0))
        stray = stray | ((j >= k_int) & (width > 0))
    total = starts.pop()
    return starts, total, carries, empty, stray


def weighted_randomized_response_from_bits(
    bits: ArrayLike, category: ArrayLike, widths: ArrayLike, capped: ArrayLike, k: ArrayLike
) -> tuple[Array, Array, Array]:
    """Weighted K-RR decided by two uint32 words against per-category widths W_j:
    ``(report, explored, spare_uniform)``.

    Word w0 below sum_j W_j explores and shows the category whose range of W_j words holds it
    (ranges in category order); the other R = 2^32 - sum_j W_j words show the true category.
    ``capped``: the remaining words redraw from w1 the same way, and -1 where w1 is also
    outside. Widths from :func:`weighted_category_widths` (per-category budgets) or a uniform Q
    (:func:`budget_width`, :func:`category_width`) on the categories in use give the law of the
    module doc; P(show j | true c != j) = W_j / 2^32 exactly.

    Args:
      bits: uint32 words of shape (..., 2).
      category: true categories in [0, k), shape (...).
      widths: uint32 widths, shape (..., K_max) with K_max >= k; entries at and beyond ``k``
        must be 0, and sum_j W_j <= 2^32.
      capped: bool, shape (...).
      k: categories in use, integer >= 2.

    Returns:
      ``report`` (int32; -1 where invalid: a traced bad category or k, widths that overflow
      2^32, or a category in use with no words while the true category keeps some -- no
      privacy, honoured only where permitted or the widths are concrete), ``explored`` and a
      spare uniform in [0, 1) independent of the report (its position in the shown range).

    Example:
      >>> import jax.numpy as jnp
      >>> widths = jnp.array([2**30, 2**29, 0], jnp.uint32)  # R = 2^32 - 3 2^29 words keep c
      >>> words = jnp.array([[0, 0], [2**30, 0], [2**31, 0]], jnp.uint32)
      >>> report, explored, _ = weighted_randomized_response_from_bits(words, 1, widths, False, 2)
      >>> report.tolist(), explored.tolist()
      ([0, 1, 1], [True, True, False])
    """
    bits = jnp.asarray(bits, jnp.uint32)
    v.check_integer("k", k, 2)
    allow_empty = dom.inf_allowed(widths)
    widths = jnp.asarray(widths, jnp.uint32)
    capped = jnp.asarray(capped, bool)
    category = jnp.asarray(category)
    dtype = jnp.result_type(float)
    k_int, k_ok = _valid_k(k)
    kmax = widths.shape[-1]
    # range j starts at S_j = W_0 + ... + W_{j-1} (mod 2^32; S_j = 2^32 only after the words
    # are all used, and then W_j = 0): word w is in range j iff (w - S_j) mod 2^32 < W_j
    starts, total, carries, empty, stray = _ranges(widths, k_int)
    full = (carries == 1) & (total == 0)
    fits = (carries == 0) | full
    keeps_truth = ~capped & ~full  # R > 0: the true category has words of its own
    ok = (k_ok & (k_int <= kmax) & _category_ok(category, k_int) & fits & ~stray
          & (allow_empty | ~(empty & keeps_truth)))
    w0, w1 = bits[..., 0], bits[..., 1]
    in_first = (w0 < total) | full
    in_second = (w1 < total) | full
    explored = in_first | capped
    word = jnp.where(in_first, w0, w1)
    if kmax <= _UNROLL:  # elementwise: no reduction kernels in a per-report step
        shown = jnp.zeros(word.shape, jnp.int32)
        offset, width = jnp.zeros_like(word), jnp.ones_like(word)
        for j in range(kmax):
            inside = (word - starts[j]) < widths[..., j]
            shown = jnp.where(inside, j, shown)
            offset = jnp.where(inside, word - starts[j], offset)
            width = jnp.where(inside, widths[..., j], width)
    else:
        inside = (word[..., None] - starts) < widths
        shown = jnp.sum(jnp.where(inside, jnp.arange(kmax), 0), axis=-1, dtype=jnp.int32)
        offset = jnp.sum(jnp.where(inside, word[..., None] - starts, 0), -1, dtype=jnp.uint32)
        width = jnp.maximum(jnp.sum(jnp.where(inside, widths, 0), -1, dtype=jnp.uint32), 1)
    fraction = offset.astype(dtype) / width.astype(dtype)
    rest = 2.0**32 - total.astype(dtype)
    stay = (w0 - total).astype(dtype) / jnp.maximum(rest, 1.0)
    report = jnp.where(explored, shown, jnp.where(ok, category, 0).astype(jnp.int32))
    report = jnp.where(capped & ~in_first & ~in_second, INVALID_CATEGORY, report)
    report = jnp.where(ok, report, INVALID_CATEGORY)
    spare = jnp.where(explored, fraction, stay)
    top = jnp.nextafter(jnp.asarray(1.0, dtype), jnp.asarray(0.0, dtype))
    return report, explored & ok, jnp.clip(spare, 0.0, top)


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

    The law of the category counts of ``counts`` independent reports of
    :func:`kary_randomized_response_explore` (uniform ``weights``) or of its weighted variant
    (explorers show category j with probability ``weights[j]``): explorers E ~ Binomial(m, p),
    their reports ~ Multinomial(E, weights) (an independent key), the m - E others report
    ``category``. Used by block policies (the batched epsilon-greedy) where m can reach
    millions. Leading axes broadcast (one row per segment); the last axis of ``weights`` is K.

    **A simulation path**: the binomials are drawn in floating point
    (:func:`ldpjax.mechanisms.binomial.binomial`), so the law is exact only up to that
    arithmetic; a release of real data draws each report with
    :func:`kary_randomized_response` or :func:`weighted_randomized_response_from_bits`.

    Privacy (nominal): each of the m records is xi-LDP with xi = log(1 + K (1 - p) / p) for
    uniform weights (``accounting.krr_budget``); for non-uniform weights w,
    log(1 + (1 - p) / (p min_j w_j)).

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
      float16 / bfloat16 arguments raise ``ValueError`` naming the dtype.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> c = kary_randomized_response_counts(jax.random.key(0), 100.0, 1, 0.3, jnp.ones(3) / 3)
      >>> float(c.sum())
      100.0
    """
    if weights is None:
        raise ValueError("weights must be given (an array of shape (..., K)); uniform: jnp.ones(K) / K")
    for name, value in (("counts", counts), ("explore_prob", explore_prob), ("weights", weights)):
        dom.check_precision(name, value)
    v.check_range("explore_prob", explore_prob, 0.0, 1.0)
    v.check_integer("counts", counts, 0)
    v.check_sums_to_one("weights", weights)
    w = jnp.asarray(weights, dom.release_dtype(weights, counts, explore_prob))
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
    # independent keys: the explorer count and the explorers' categories
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
    "budget_width",
    "category_width",
    "kary_randomized_response",
    "kary_randomized_response_counts",
    "kary_randomized_response_explore",
    "kary_randomized_response_from_bits",
    "multinomial_counts",
    "weighted_category_widths",
    "weighted_randomized_response_from_bits",
]
