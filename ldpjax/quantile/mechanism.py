"""The private local step: randomized response on the quantile subgradient (paper 001, Sec. 2).

At iterate q, client k draws x and forms the true bit s = 1{x > q} (the check-loss subgradient
is tau - 1{x <= q}, a function of that bit). It reports s with probability r_k and a fair coin
otherwise (binary randomized response, eps_k-LDP with eps_k = log((1 + r_k) / (1 - r_k)),
``ldpjax.accounting.rr_epsilon``). The server-side (debiased) update is the spec's

    q <- q + lr * [ (1 - r + 2 tau r) / (2 r) * 1{s~ = 1} - (1 + r - 2 tau r) / (2 r) * 1{s~ = 0} ],

whose expectation is lr * (tau - F_k(q)) (an unbiased check-loss subgradient step): with
P(s~ = 1) = r (1 - F_k(q)) + (1 - r) / 2 the bracket equals s~ / r - (1 + r - 2 tau r) / (2 r),
of mean (1 - F_k(q)) - (1 - tau). Its variance at q = Q* is [r^-2 - (2 F_k(Q*) - 1)^2] / 4,
the per-client term of Theorem 3.1 (see :mod:`ldpjax.quantile.variance`).

Each record is used once, so every client is eps_k-LDP and the whole run is (max_k eps_k)-LDP
(parallel composition).

Implementation: one uniform u per report. ``u < r`` means "answer truthfully"; otherwise
(u - r) / (1 - r) is again uniform, and the fair coin is 1{u >= (1 + r) / 2}. This is the same
distribution as ``ldpjax.mechanisms.randomized_response`` with half the random numbers (the
tests check both).
"""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.quantile.clients import uniform_draws
from ldpjax.types import Array, ArrayLike, PRNGKey


def report_from_uniform(u: ArrayLike, bit: ArrayLike, r: ArrayLike) -> Array:
    """Binary randomized response driven by one uniform per report.

    Args:
      u: uniforms in [0, 1).
      bit: true bits (bool).
      r: truthful-response rate in (0, 1] (broadcast).

    Returns:
      The reported bits (bool): ``bit`` when u < r, else the coin 1{u >= (1 + r) / 2}.
    """
    u = jnp.asarray(u)
    r = jnp.asarray(r, u.dtype)
    return jnp.where(u < r, jnp.asarray(bit, bool), u >= 0.5 * (1.0 + r))


def debiased_increment(report: ArrayLike, tau: ArrayLike, r: ArrayLike) -> Array:
    """The spec's debiased subgradient for a report: mean tau - F(q) given the iterate q.

    (1 - r + 2 tau r) / (2 r) if the report is 1, -(1 + r - 2 tau r) / (2 r) if it is 0.
    """
    tau = jnp.asarray(tau)
    r = jnp.asarray(r, jnp.result_type(tau, r, float))
    up = (1.0 - r + 2.0 * tau * r) / (2.0 * r)
    down = (1.0 + r - 2.0 * tau * r) / (2.0 * r)
    return jnp.where(jnp.asarray(report, bool), up, -down)


def privatized_step(
    q: ArrayLike, x: ArrayLike, key: PRNGKey, tau: ArrayLike, r: ArrayLike, lr: ArrayLike
) -> Array:
    """One private local step of the spec: randomized response on 1{x > q}, debiased update.

    Argument order is fixed by the issue (``key`` third). All arguments broadcast, so one call
    can step many clients or replications at once.

    Args:
      q: current iterate(s).
      x: the data point(s) (never leaves the client; only the randomized bit does).
      key: PRNG key for the randomized response.
      tau: quantile level in (0, 1).
      r: truthful-response rate in (0, 1] (eps-LDP with eps = log((1 + r) / (1 - r))).
      lr: step size >= 0.

    Returns:
      The new iterate q + lr * increment, with E[increment] = tau - P(x <= q).
      Under ``jit`` out-of-range tau or r give NaN.
    """
    v.check_range("tau", tau, 0.0, 1.0, low_open=True, high_open=True)
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    v.check_range("lr", lr, 0.0, jnp.inf, high_open=True)
    dtype = jnp.result_type(q, x, tau, r, lr, float)
    q, x, tau, r, lr = (jnp.asarray(a, dtype) for a in (q, x, tau, r, lr))
    shape = jnp.broadcast_shapes(q.shape, x.shape, tau.shape, r.shape, lr.shape)
    u = uniform_draws(key, shape, dtype)
    report = report_from_uniform(u, x > q, r)
    new_q = q + lr * debiased_increment(report, tau, r)
    valid = (tau > 0) & (tau < 1) & (r > 0) & (r <= 1) & (lr >= 0)
    return v.valid_or_nan(valid, new_q)


__all__ = ["debiased_increment", "privatized_step", "report_from_uniform"]
