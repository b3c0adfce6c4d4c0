"""DC (divide and conquer) baseline.

A baseline of "Federated Learning of Quantile Inference under Local Differential Privacy"
(ICLR 2026), Sec. 4.

Each client runs single-machine randomized-response LDP SGD on its own stream for t_T samples
(the update of :mod:`ldpjax.quantile.mechanism` with its own r_k and the global level tau,
lr_t = c0 / (t^a + b)), with its own Polyak-Ruppert estimate Q^_k and self-normalised V_k
(:mod:`ldpjax.quantile.inference`). One communication at the end averages both:

    Q^_DC = sum_k p_k Q^_k,      V_DC = sum_k p_k V_k,      CI: Q^_DC +- z sqrt(V_DC).

Averaging the variance statistics follows the paper and the authors' code. Q^_k targets the
client's own tau-quantile F_k^{-1}(tau), so Q^_DC estimates sum_k p_k F_k^{-1}(tau), which
differs from Q* when the clients are heterogeneous: its coverage collapses there (the paper's
finding). Under homogeneity the averaged V is conservative (the variance of the average is
about sum_k p_k^2 sigma_k^2 / t_T, not sum_k p_k sigma_k^2 / t_T).

Privacy: as Local SGD — each record used once, only its randomized bit (drawn by
``ldpjax.mechanisms``) leaves the client: ``ParallelEvent(RandomizedResponseEvent(r_k) for k)``.
The reports are bits: safe for real data (records clients always take the sampling path).
Records clients read their records without replacement, one per step
(:mod:`ldpjax.quantile.record_stream`): t_T above a client's n_k records is a ``ValueError``
unless it opts into reuse (``record_clients(..., max_uses=m)``), and then the claim composes
m_k = ceil(t_T / n_k) uses: ``ComposedEvent((RandomizedResponseEvent(r_k),) * m_k)`` per
client. Parametric clients draw fresh records.
With ``exact_law=True`` (default) and parametric clients each report is drawn from its law
Bernoulli(r_k (1 - F_k(q_k)) + (1 - r_k) / 2) with one uniform and no data draw.

Step size: the per-sample learning rate reads ``params.lr_scale`` (c0). The authors' public code
runs DC with c0 = 2 (their step 2 / (t^0.51 + 100)), which reproduces the paper's DC MAE in two of
its three t_T = 1e4 cells; :data:`DC_LR_SCALE` is that constant and the experiments pass it
(``quantile_params(..., lr_scale=DC_LR_SCALE)``; Local SGD keeps the paper's 20). It stays a
params leaf, so it vmaps and ``jax.grad`` reaches it.

Engine: one step per sample (t_T steps); per-client iterates and statistics in the state.
"""

from __future__ import annotations

import dataclasses
import functools

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax import mechanisms
from ldpjax.engine import Algorithm
from ldpjax.quantile.clients import uniform_draws
from ldpjax.quantile.inference import inference_init, inference_update, inference_variance
from ldpjax.quantile.mechanism import client_reports, debiased_increment
from ldpjax.quantile.params import QuantileParams, params_valid
from ldpjax.quantile.record_stream import (
    check_stream,
    fail_closed,
    stream_caps,
    stream_records,
    stream_seed,
)
from ldpjax.quantile.rounds import (
    PerClientBudget,
    RoundOutputs,
    RoundState,
    randomized_response_event,
    split_round_key,
    stream_contract,
    uses_exact_law,
    weighted_sum,
)
from ldpjax.quantile.schedules import learning_rate

#: DC's step constant c0 in the authors' public code (``2 / (t^0.51 + 100)``).
DC_LR_SCALE = 2.0


@dataclasses.dataclass(frozen=True)
class DivideAndConquerConfig(PerClientBudget):
    """Static configuration: ``budget`` = t_T samples per client (integer >= 1);
    ``exact_law`` as in :class:`~ldpjax.quantile.LocalSGDConfig`."""


@functools.cache
def divide_and_conquer(config: DivideAndConquerConfig) -> Algorithm:
    """The DC baseline (cached).

    Example:
      >>> import ldpjax.quantile as Q
      >>> from ldpjax.engine import make_key, rollout
      >>> config = Q.DivideAndConquerConfig(budget=20)
      >>> params = Q.quantile_params(0.5, 0.9, Q.make_clients("normal", loc=[0.0, 0.0]))
      >>> state, final = rollout(Q.divide_and_conquer(config), params, make_key(0), config.num_rounds)
      >>> state.iterate.shape, int(final.samples)  # one iterate per client, no communication
      ((2,), 20)
    """
    if not isinstance(config, DivideAndConquerConfig):
        raise ValueError(f"config must be a DivideAndConquerConfig; got {config!r}")
    reports = int(config.budget)  # per client, one per step
    validate, privacy_event = stream_contract(reports, randomized_response_event)

    def init(params: QuantileParams, key) -> RoundState:
        check_stream(params.clients, reports)  # static: records clients vs the budget
        k = params.r.shape[-1]
        start = v.valid_or_nan(params_valid(params), params.init)
        iterate = jnp.full((k,), start, start.dtype)
        order = stream_seed(params.clients, key)
        return RoundState(iterate, jnp.zeros((), jnp.int32), inference_init((k,), start.dtype), order)

    def step(params: QuantileParams, state: RoundState, inputs, key):
        k = params.r.shape[-1]
        dtype = state.iterate.dtype
        lr = learning_rate(state.round + 1, params.lr_scale, params.lr_power, params.lr_offset).astype(dtype)
        data_key, privacy_key = split_round_key(key)
        report_u = mechanisms.report_bits(privacy_key, (1, k))[0]
        if params.clients.records is not None:  # each client's next record, without replacement
            caps = stream_caps(params.clients, reports)
            x = stream_records(params.clients, state.order, state.round, caps=caps, dtype=dtype)
            report = client_reports(params.clients, state.iterate, params.r, report_u, x=x)
            increment = fail_closed(debiased_increment(report, params.tau, params.r), x)
        else:
            data_u = None if uses_exact_law(config.exact_law, params) else uniform_draws(data_key, (1, k), dtype)[0]
            report = client_reports(params.clients, state.iterate, params.r, report_u, data_u)
            increment = debiased_increment(report, params.tau, params.r)
        q = state.iterate + lr * increment
        stats = inference_update(state.stats, q, jnp.ones((), dtype))
        estimate = weighted_sum(params.weights, stats.mean)
        variance = weighted_sum(params.weights, inference_variance(stats))
        outputs = RoundOutputs(weighted_sum(params.weights, q), estimate, variance, stats.samples[0])
        return RoundState(q, state.round + 1, stats, state.order), outputs

    # XLA's default (fusion) emitters: with the elemental ones this kernel compiled faster but
    # ran slower on CPU (measured: docs/pages/benchmarks.md, "Where the time goes")
    return Algorithm(init, step, validate=validate, privacy_event=privacy_event)


__all__ = ["DC_LR_SCALE", "DivideAndConquerConfig", "divide_and_conquer"]
