"""The private local step: randomized response on the quantile subgradient.

"Federated Learning of Quantile Inference under Local Differential Privacy" (ICLR 2026), Sec. 2.

At iterate q, client k draws x and forms the true bit s = 1{x > q} (the check-loss subgradient
is tau - 1{x <= q}, a function of that bit). It reports s with probability r_k and a fair coin
otherwise (binary randomized response, eps_k-LDP with eps_k = log((1 + r_k) / (1 - r_k)),
``ldpjax.accounting.rr_epsilon``). The server-side (debiased) update is the paper's

    q <- q + lr * [ (1 - r + 2 tau r) / (2 r) * 1{s~ = 1} - (1 + r - 2 tau r) / (2 r) * 1{s~ = 0} ],

whose expectation is lr * (tau - F_k(q)) (an unbiased check-loss subgradient step): the bracket
equals debias(s~) - (1 - tau) with debias(s~) = (s~ - (1 - r) / 2) / r the unbiased estimate of
s (``ldpjax.mechanisms.debias_randomized_response``), of mean 1 - F_k(q). Its variance at
q = Q* is [r^-2 - (2 F_k(Q*) - 1)^2] / 4, the per-client term of Theorem 3.1 (see
:mod:`ldpjax.quantile.variance`).

Every report is drawn by :mod:`ldpjax.mechanisms` (this module draws no privacy noise):

* sampling path (:func:`client_reports` with data uniforms): x from the data uniform
  (inverse CDF, :func:`~ldpjax.quantile.clients.sample_from_uniform`), then
  ``randomized_response_from_bits`` on 1{x > q} from one report word;
* exact-law path (no data uniforms; parametric clients): the report is
  Bernoulli(r_k (1 - F_k(q)) + (1 - r_k) / 2) from one report word
  (``randomized_response_bernoulli_from_bits``) — equal in law to the sampling path, with
  no data draw.

Privacy: each record is used once and only its randomized bit leaves the client, so every
client is eps_k-LDP and the whole run is (max_k eps_k)-LDP (parallel composition over clients):
``ParallelEvent(RandomizedResponseEvent(r_k) for k)``. Records clients read their records
without replacement; a record reported m_k times (opt-in reuse) costs m_k eps_k
(:mod:`ldpjax.quantile.record_stream`). The reports are bits, so the release
has no floating-point side channel: randomized response is safe for real data.

Fail closed: concrete out-of-domain tau, r or lr raise ``ValueError``; traced invalid r gives a
fair-coin report and a NaN increment (``debias_randomized_response``), so the iterate is NaN.
"""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax import mechanisms
from ldpjax.quantile.clients import Clients, client_cdf, sample_from_uniform
from ldpjax.types import Array, ArrayLike, PRNGKey


def report_from_bits(bits: ArrayLike, bit: ArrayLike, r: ArrayLike) -> Array:
    """Binary randomized response decided by one uint32 word per report.

    Delegates to :func:`ldpjax.mechanisms.randomized_response_from_bits`: the bit is flipped
    iff the word is below ceil((1 - r)/2 2^32) (exact at every r); a traced invalid r gives a
    fair coin.

    Args:
      bits: uint32 words (``ldpjax.mechanisms.report_bits``).
      bit: true bits (bool).
      r: truthful-response rate in (0, 1] (broadcast).

    Returns:
      The reported bits (bool).

    Example:
      >>> import jax.numpy as jnp
      >>> bool(report_from_bits(jnp.uint32(2**31), True, 0.5))  # no flip
      True
    """
    return mechanisms.randomized_response_from_bits(bits, bit, r)


def debiased_increment(report: ArrayLike, tau: ArrayLike, r: ArrayLike) -> Array:
    """The paper's debiased subgradient for a report: mean tau - F(q) given the iterate q.

    (1 - r + 2 tau r) / (2 r) if the report is 1, -(1 + r - 2 tau r) / (2 r) if it is 0; i.e.
    ``debias_randomized_response(report, r) - (1 - tau)``. NaN for a traced invalid r.

    Example:
      >>> round(float(debiased_increment(True, 0.5, 0.5)), 6)
      1.0
    """
    tau = jnp.asarray(tau)
    dtype = jnp.result_type(tau, r, float)
    unbiased_bit = mechanisms.debias_randomized_response(jnp.asarray(report, dtype), jnp.asarray(r, dtype))
    return unbiased_bit - (1.0 - tau.astype(dtype))


def client_reports(
    clients: Clients,
    q: ArrayLike,
    r: ArrayLike,
    report_u: ArrayLike,
    data_u: ArrayLike | None = None,
    client_index: ArrayLike | None = None,
    *,
    x: ArrayLike | None = None,
) -> Array:
    """The randomized bits 1{x > q} of one local step, through :mod:`ldpjax.mechanisms`.

    Args:
      clients: the client distributions.
      q: iterates (client axis last, or aligned with ``client_index``).
      r: truthful rates, broadcast with ``q``.
      report_u: one uint32 report word per report (``ldpjax.mechanisms.report_bits``).
      data_u: data uniforms (sampling path: x = F^-1(u)); ``None`` selects the exact-law path
        Bernoulli(r (1 - F(q)) + (1 - r) / 2) (no data draw).
      client_index: optional owner of each entry (a pooled stream).
      x: the data points themselves (records clients: the records read without replacement,
        :func:`~ldpjax.quantile.record_stream.stream_records`); overrides ``data_u``.

    Returns:
      Reported bits (bool).
    """
    if x is not None:
        return mechanisms.randomized_response_from_bits(report_u, jnp.asarray(x) > q, r)
    if data_u is None:
        survival = 1.0 - client_cdf(clients, q, client_index)
        return mechanisms.randomized_response_bernoulli_from_bits(report_u, survival, r)
    x = sample_from_uniform(clients, data_u, client_index=client_index)
    return mechanisms.randomized_response_from_bits(report_u, x > q, r)


def privatized_step(
    q: ArrayLike, x: ArrayLike, key: PRNGKey, tau: ArrayLike, r: ArrayLike, lr: ArrayLike
) -> Array:
    """One private local step of the paper: randomized response on 1{x > q}, debiased update.

    Argument order is fixed by the issue (``key`` third). All arguments broadcast, so one call
    can step many clients or replications at once. The report is drawn by
    :func:`ldpjax.mechanisms.randomized_response_from_bits` from one uint32 word per report
    (``ldpjax.mechanisms.report_bits``).

    Args:
      q: current iterate(s).
      x: the data point(s) (never leaves the client; only the randomized bit does).
      key: PRNG key for the randomized response.
      tau: quantile level in (0, 1).
      r: truthful-response rate in (0, 1] (eps-LDP with eps = log((1 + r) / (1 - r))).
      lr: step size >= 0.

    Returns:
      The new iterate q + lr * increment, with E[increment] = tau - P(x <= q).
      Under ``jit`` out-of-range tau, r or lr give NaN.

    Example:
      >>> import jax
      >>> round(float(privatized_step(0.0, 1.0, jax.random.key(0), 0.5, 1.0, 0.1)), 6)  # r = 1
      0.05
    """
    v.check_range("tau", tau, 0.0, 1.0, low_open=True, high_open=True)
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    v.check_range("lr", lr, 0.0, jnp.inf, high_open=True)
    dtype = jnp.result_type(q, x, tau, r, lr, float)
    q, x, tau, r, lr = (jnp.asarray(a, dtype) for a in (q, x, tau, r, lr))
    shape = jnp.broadcast_shapes(q.shape, x.shape, tau.shape, r.shape, lr.shape)
    words = mechanisms.report_bits(key, shape)
    report = mechanisms.randomized_response_from_bits(words, x > q, r)
    new_q = q + lr * debiased_increment(report, tau, r)
    valid = (tau > 0) & (tau < 1) & (lr >= 0) & (lr < jnp.inf)
    return v.valid_or_nan(valid, new_q)


__all__ = ["client_reports", "debiased_increment", "privatized_step", "report_from_bits"]
