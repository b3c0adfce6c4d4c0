"""Binary randomized response, decided on 32 random bits per report.

A bit b is reported truthfully with probability r and replaced by a fair coin otherwise, so
P[report = b] = (1 + r) / 2: eps-LDP with eps = log((1 + r) / (1 - r)) (Warner 1965; "Federated
Learning of Quantile Inference under Local Differential Privacy", ICLR 2026, Sec. 2;
``accounting.rr_epsilon``).

Exact at every budget. Equivalently the bit is *flipped* with probability (1 - r) / 2. One
uint32 word w per report (:func:`report_bits`) flips iff w < F with the integer threshold

    F = 2^31 - floor(r 2^31) = ceil((1 - r) / 2 * 2^32),

computed exactly from the float r (scaling by a power of two and ``floor`` are exact in
float32 and float64). The flip probability F / 2^32 lies in [(1 - r)/2, (1 - r)/2 + 2^-32): the
release law equals the claimed one to 2^-32, and the error only ever makes the report *more*
private (its epsilon is at most the claimed one). There is no float uniform whose resolution
could hide the flip (a float32 uniform resolves 2^-23, so the old comparison never flipped for
1 - r < 2^-22). r = 1 (no privacy) flips never and is honoured only when concrete or inside
:func:`~ldpjax.mechanisms.no_privacy_permitted`.

No r < 1 becomes no noise: every r < 1 of the release dtype has F >= 1 (r 2^31 < 2^31), and a
concrete r < 1 that the dtype rounds to 1 (r >= 1 - 2^-25 in float32, e.g. 1 - 2^-26) raises
``ValueError`` naming the largest r below 1 the dtype honours (1 - 2^-24 in float32,
1 - 2^-53 in float64).

:func:`randomized_response_bernoulli` draws the reported bit when only the *law* of the true bit,
P[b = 1] = p, is known: the report is Bernoulli(r p + (1 - r)/2), decided on the same 32 bits
against ceil((r p + (1 - r)/2) 2^32) computed in floating point — a *simulation* path (the fast
exact law of a parametric client), not a release of real data. That threshold is kept within
[ceil((1 - r)/2 2^32), 2^32 - ceil((1 - r)/2 2^32)] for r < 1, so rounding r p + (1 - r)/2 to 1
(p = 1 and r near 1) never makes the report certain.

Fail closed: concrete r outside (0, 1], bits outside {0, 1}, probabilities outside [0, 1] or
float16/bfloat16 inputs raise ``ValueError``; traced invalid ones report a fair coin (the most
private outcome) — never the true bit — and :func:`debias_randomized_response` returns NaN.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.types import Array, ArrayLike, PRNGKey

_HALF = 2**31  # the fair coin's threshold (flip probability 1/2)


def report_bits(key: PRNGKey, shape) -> Array:
    """The uint32 words that decide randomized-response reports (one word per report).

    The sanctioned draw for algorithms that share a report's randomness with something derived
    from it (the explored arm, a tie break): pass words to :func:`randomized_response_from_bits`
    or :func:`~ldpjax.mechanisms.kary_randomized_response_from_bits`, and turn spare words into
    data uniforms with :func:`uniform_from_bits`.

    Example:
      >>> import jax
      >>> report_bits(jax.random.key(0), (3,)).dtype
      dtype('uint32')
    """
    return jax.random.bits(key, tuple(shape), jnp.uint32)


def uniform_from_bits(bits: ArrayLike, dtype=None) -> Array:
    """A uniform on [0, 1) from uint32 words (top 24 bits in float32, all 32 in float64).

    For data sampling that shares a draw with a report (e.g. a bandit visitor's click); privacy
    decisions use the words themselves.

    Example:
      >>> import jax.numpy as jnp
      >>> float(uniform_from_bits(jnp.uint32(2**31)))
      0.5
    """
    dtype = jnp.dtype(dtype or jnp.result_type(float))
    bits = jnp.asarray(bits, jnp.uint32)
    if dtype == jnp.float64:
        return bits.astype(dtype) * (2.0**-32)
    return (bits >> 8).astype(dtype) * jnp.asarray(2.0**-24, dtype)


def flip_threshold(r: ArrayLike) -> Array:
    """F = 2^31 - floor(r 2^31) as uint32: report words w < F flip the bit (exact).

    A traced invalid r gives 2^31 (a fair coin); r = 1 gives 0 only where no privacy is allowed
    (:func:`~ldpjax.mechanisms.no_privacy_permitted` or a concrete r).

    Example:
      >>> int(flip_threshold(0.5))  # (1 - 0.5) / 2 * 2^32
      1073741824
    """
    dom.check_precision("r", r)
    allow_one = dom.inf_allowed(r)
    dtype = dom.release_dtype(r)
    dom.check_rate("r", r, dtype)
    r = jnp.asarray(r, dtype)
    ok = dom.rate_ok(r) & (allow_one | (r < 1))
    truthful = jnp.floor(jnp.where(ok, r, 0.0) * float(_HALF)).astype(jnp.uint32)
    return jnp.uint32(_HALF) - truthful


def randomized_response_from_bits(bits: ArrayLike, bit: ArrayLike, r: ArrayLike) -> Array:
    """Binary randomized response decided by given uint32 words: the pure function behind
    :func:`randomized_response`.

    Args:
      bits: uint32 words (from :func:`report_bits`), one per report.
      bit: true bits (bool or 0/1).
      r: truthful rate in (0, 1] (broadcast).

    Returns:
      Reported bits (bool): the true bit, flipped iff ``bits < flip_threshold(r)``. A traced
      invalid r (or bit) gives the fair coin 1{bits >= 2^31}.

    Example:
      >>> import jax.numpy as jnp
      >>> w = jnp.array([0, 2**30, 2**31, 2**32 - 1], jnp.uint32)
      >>> randomized_response_from_bits(w, jnp.array([0, 0, 0, 0]), 0.5)
      Array([ True, False, False, False], dtype=bool)
    """
    bits = jnp.asarray(bits, jnp.uint32)
    bit = jnp.asarray(bit)
    bit_ok = (bit == 0) | (bit == 1)
    threshold = flip_threshold(r)
    return jnp.where(bit_ok, bit.astype(bool) ^ (bits < threshold), bits >= jnp.uint32(_HALF))


def randomized_response(key: PRNGKey, bit: ArrayLike, r: ArrayLike) -> Array:
    """Report each bit truthfully with probability r, else a fair coin (eps-LDP, eps = log((1+r)/(1-r))).

    Exact to 2^-32 at every r (module docstring). Safe for real data with a key from
    :func:`~ldpjax.mechanisms.secure_key`.

    Args:
      key: PRNG key.
      bit: true bits (bool or 0/1 integers), any shape.
      r: truthful-response rate, in (0, 1] (broadcast against ``bit``).

    Returns:
      Reported bits, same shape as ``bit`` broadcast with ``r`` and the dtype of ``bit``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> randomized_response(jax.random.key(0), jnp.array([0, 1, 1]), 0.5).shape
      (3,)
    """
    dom.check_bits("bit", bit)
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    bit = jnp.asarray(bit)
    shape = jnp.broadcast_shapes(bit.shape, jnp.shape(r))
    report = randomized_response_from_bits(report_bits(key, shape), bit, r)
    return report.astype(bit.dtype)


def randomized_response_bernoulli(key: PRNGKey, prob_one: ArrayLike, r: ArrayLike) -> Array:
    """The report of a bit that is 1 with probability ``prob_one``, randomized at rate r.

    Equal in law to ``randomized_response(key, bernoulli(prob_one), r)``: the report is
    Bernoulli(r prob_one + (1 - r) / 2), decided on one uint32 word. Used by the fast exact
    paths where the data distribution is known in closed form (the federated-quantile paper,
    Sec. 2: the client's
    reported bit at iterate q is Bernoulli(r_k (1 - F_k(q)) + (1 - r_k) / 2)). Simulation only.

    Args:
      key: PRNG key.
      prob_one: P[true bit = 1] in [0, 1].
      r: truthful rate in (0, 1].

    Returns:
      Reported bits (bool) of the broadcast shape; a fair coin where a traced argument is
      invalid.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> randomized_response_bernoulli(jax.random.key(0), jnp.full(4, 0.7), 0.5).shape
      (4,)
    """
    v.check_range("prob_one", prob_one, 0.0, 1.0)
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    dom.check_precision("prob_one", prob_one)
    shape = jnp.broadcast_shapes(jnp.shape(prob_one), jnp.shape(r))
    return randomized_response_bernoulli_from_bits(report_bits(key, shape), prob_one, r)


def randomized_response_bernoulli_from_bits(
    bits: ArrayLike, prob_one: ArrayLike, r: ArrayLike
) -> Array:
    """The pure function behind :func:`randomized_response_bernoulli`:
    1{bits < ceil((r p + (1 - r)/2) 2^32)} (a fair coin where r or p is invalid).

    Example:
      >>> import jax.numpy as jnp
      >>> bool(randomized_response_bernoulli_from_bits(jnp.uint32(2**31), 0.9, 0.5))  # 1/2 < 0.7
      True
    """
    bits = jnp.asarray(bits, jnp.uint32)
    dom.check_precision("r", r)
    allow_one = dom.inf_allowed(r)
    dtype = dom.release_dtype(prob_one, r)
    dom.check_rate("r", r, dtype)
    prob_one, r = jnp.asarray(prob_one, dtype), jnp.asarray(r, dtype)
    ok = dom.rate_ok(r) & (allow_one | (r < 1)) & dom.prob_ok(prob_one)
    p_report = jnp.where(ok, r * prob_one + 0.5 * (1.0 - r), 0.5)
    scaled = jnp.ceil(p_report * 2.0**32)
    over = scaled >= 2.0**32
    threshold = jnp.where(over, 0.0, scaled).astype(jnp.uint32)
    # each outcome keeps at least ceil((1 - r)/2 2^32) words (exact integers: 1 - r is exact for
    # r >= 1/2, and 2^32 - floor is uint32 arithmetic), so rounding r p + (1 - r)/2 to 1 (or a
    # float32 threshold near 2^32, resolved to 256 words) never makes a report with r < 1 certain
    floor = jnp.ceil(0.5 * (1.0 - jnp.where(ok, r, 0.0)) * 2.0**32).astype(jnp.uint32)
    top = jnp.uint32(0) - floor  # 2^32 - floor
    capped = floor > 0
    threshold = jnp.where(capped, jnp.clip(jnp.where(over, top, threshold), floor, top), threshold)
    return (over & ~capped) | (bits < threshold)


def debias_randomized_response(report: ArrayLike, r: ArrayLike) -> Array:
    """Unbiased estimate (report - (1 - r)/2) / r of the true bit; NaN for a traced invalid r.

    Example:
      >>> float(debias_randomized_response(1.0, 0.5))
      1.5
    """
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    dom.check_precision("r", r)
    report = jnp.asarray(report, dom.release_dtype(report, r))
    r = jnp.asarray(r, report.dtype)
    ok = dom.rate_ok(r)
    out = (report - 0.5 * (1.0 - r)) / jnp.where(ok, r, 1.0)
    return dom.poison(ok, out, r)


__all__ = [
    "debias_randomized_response",
    "flip_threshold",
    "randomized_response",
    "randomized_response_bernoulli",
    "randomized_response_bernoulli_from_bits",
    "randomized_response_from_bits",
    "report_bits",
    "uniform_from_bits",
]
