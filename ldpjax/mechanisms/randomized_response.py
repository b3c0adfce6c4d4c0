"""Binary randomized response, drawn from one uniform per report.

A bit b is reported truthfully with probability r and replaced by a fair coin otherwise, so
P[report = b] = (1 + r) / 2: eps-LDP with eps = log((1 + r) / (1 - r)) (Warner 1965; paper 001,
Sec. 2; ``accounting.rr_epsilon``).

One uniform u per report: ``u < r`` answers truthfully; otherwise (u - r) / (1 - r) is again
uniform, and the coin is 1{u >= (1 + r) / 2}. The report therefore equals 1 with probability
r b + (1 - r) / 2, which :func:`randomized_response_bernoulli` draws directly when only the
*law* of the true bit, P[b = 1] = p, is known (the reported bit is then Bernoulli(r p + (1 - r)/2):
the fast exact path of a client whose data distribution is parametric).

Outputs are discrete and the only float operation compares a uniform with a probability, which
leaks nothing through low-order bits.

Fail closed: concrete r outside (0, 1], bits outside {0, 1} or probabilities outside [0, 1]
raise ``ValueError``; traced ones report a fair coin (the most private outcome) — never the true
bit — and :func:`debias_randomized_response` returns NaN.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.types import Array, ArrayLike, PRNGKey


def report_uniforms(key: PRNGKey, shape, dtype=None) -> Array:
    """The uniforms on [0, 1) that drive randomized-response reports (one per report).

    The sanctioned draw for algorithms that share one uniform between the privacy coin and
    something else derived from it (e.g. the explored arm): pass the result to
    :func:`randomized_response_from_uniform` or
    :func:`~ldpjax.mechanisms.kary.kary_randomized_response_from_uniform`.

    Example:
      >>> import jax
      >>> report_uniforms(jax.random.key(0), (3,)).shape
      (3,)
    """
    return jax.random.uniform(key, tuple(shape), dtype or jnp.result_type(float))


def randomized_response_from_uniform(u: ArrayLike, bit: ArrayLike, r: ArrayLike) -> Array:
    """Binary randomized response driven by a given uniform: the pure function behind
    :func:`randomized_response`.

    Args:
      u: uniforms in [0, 1) (from :func:`report_uniforms`).
      bit: true bits (bool or 0/1).
      r: truthful rate in (0, 1] (broadcast).

    Returns:
      Reported bits (bool). A traced invalid r (or bit) gives the fair coin 1{u >= 1/2}.

    Example:
      >>> import jax.numpy as jnp
      >>> randomized_response_from_uniform(jnp.array([0.1, 0.7, 0.9]), jnp.array([0, 0, 0]), 0.5)
      Array([False, False,  True], dtype=bool)
    """
    u = jnp.asarray(u)
    r = jnp.asarray(r, u.dtype)
    bit = jnp.asarray(bit)
    ok = dom.rate_ok(r) & ((bit == 0) | (bit == 1))
    safe_r = jnp.where(ok, r, 0.0)
    truthful = u < safe_r
    coin = u >= 0.5 * (1.0 + safe_r)
    return jnp.where(truthful, bit.astype(bool), coin)


def randomized_response(key: PRNGKey, bit: ArrayLike, r: ArrayLike) -> Array:
    """Report each bit truthfully with probability r, else a fair coin (eps-LDP, eps = log((1+r)/(1-r))).

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
    u = report_uniforms(key, shape, jnp.result_type(r, float))
    report = randomized_response_from_uniform(u, bit, r)
    return report.astype(bit.dtype)


def randomized_response_bernoulli(key: PRNGKey, prob_one: ArrayLike, r: ArrayLike) -> Array:
    """The report of a bit that is 1 with probability ``prob_one``, randomized at rate r.

    Equal in law to ``randomized_response(key, bernoulli(prob_one), r)``: the report is
    Bernoulli(r prob_one + (1 - r) / 2), drawn from one uniform. Used by the fast exact paths
    where the data distribution is known in closed form (paper 001, Sec. 2: the client's
    reported bit at iterate q is Bernoulli(r_k (1 - F_k(q)) + (1 - r_k) / 2)).

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
    dtype = jnp.result_type(prob_one, r, float)
    prob_one, r = jnp.asarray(prob_one, dtype), jnp.asarray(r, dtype)
    shape = jnp.broadcast_shapes(prob_one.shape, r.shape)
    return randomized_response_bernoulli_from_uniform(report_uniforms(key, shape, dtype), prob_one, r)


def randomized_response_bernoulli_from_uniform(
    u: ArrayLike, prob_one: ArrayLike, r: ArrayLike
) -> Array:
    """The pure function behind :func:`randomized_response_bernoulli`: 1{u < r p + (1 - r)/2}.

    Example:
      >>> bool(randomized_response_bernoulli_from_uniform(0.5, 0.9, 0.5))  # 0.5 < 0.7
      True
    """
    u = jnp.asarray(u)
    prob_one, r = jnp.asarray(prob_one, u.dtype), jnp.asarray(r, u.dtype)
    ok = dom.rate_ok(r) & dom.prob_ok(prob_one)
    p_report = jnp.where(ok, r * prob_one + 0.5 * (1.0 - r), 0.5)
    return u < p_report


def debias_randomized_response(report: ArrayLike, r: ArrayLike) -> Array:
    """Unbiased estimate (report - (1 - r)/2) / r of the true bit; NaN for a traced invalid r.

    Example:
      >>> float(debias_randomized_response(1.0, 0.5))
      1.5
    """
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    report = jnp.asarray(report, jnp.result_type(report, r, float))
    r = jnp.asarray(r, report.dtype)
    ok = dom.rate_ok(r)
    out = (report - 0.5 * (1.0 - r)) / jnp.where(ok, r, 1.0)
    return dom.poison(ok, out)


__all__ = [
    "debias_randomized_response",
    "randomized_response",
    "randomized_response_bernoulli",
    "randomized_response_bernoulli_from_uniform",
    "randomized_response_from_uniform",
    "report_uniforms",
]
