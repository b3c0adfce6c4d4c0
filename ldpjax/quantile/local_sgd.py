"""Randomized-response Local SGD for the global quantile.

"Federated Learning of Quantile Inference under Local Differential Privacy" (ICLR 2026),
Algorithm 1 and Sec. 2-3.

Rounds m = 1..M. In round m every client k starts from the shared iterate q_{m-1}, takes E_m
private local steps (randomized response with its own rate r_k on 1{x > q}, debiased update
with expectation tau - F_k(q); :mod:`ldpjax.quantile.mechanism`), each with step size lr_m / E_m
where lr_m = c0 / (m^a + b) (:mod:`ldpjax.quantile.schedules`); then the server averages,
q_m = sum_k p_k q_m^k (added in a fixed client order), and broadcasts. The schedule (C1, C5,
Log, custom) fixes E_m with a budget of t_T samples per client.

Estimate: the sample-weighted Polyak-Ruppert average of the aggregated iterates,
Q^ = sum_m E_m q_m / t_T; inference: the self-normalised V_T of Algorithm 2 computed online
(:mod:`ldpjax.quantile.inference`), CI Q^ +- z sqrt(V_T) with z = critical_value(level)
(:func:`ldpjax.quantile.confidence_interval`). Theorem 3.1: sqrt(t_T)(Q^ - Q*) -> N(0, sigma^2)
with sigma^2 from :func:`ldpjax.quantile.asymptotic_variance`.

Privacy: every record is used once and only its randomized bit leaves the client, so client k
is eps_k-LDP with eps_k = ``rr_epsilon(r_k)``; the run is (max_k eps_k)-LDP. ``privacy_event``:
``ParallelEvent(RandomizedResponseEvent(r_k) for k)``. Reports are bits drawn by
``ldpjax.mechanisms`` (no floating-point side channel): this release is safe for real data
(records clients, which always take the sampling path) at its default, where each record is
read once. Records clients read their records without replacement
(:mod:`ldpjax.quantile.record_stream`): a budget t_T above a client's n_k records is a
``ValueError`` (``validate``, ``init``, ``privacy_event``) unless the clients opt into reuse
(``record_clients(..., max_uses=m)``); then each record is read m_k = ceil(t_T / n_k) times and
the claim is ``ParallelEvent(ComposedEvent((RandomizedResponseEvent(r_k),) * m_k) for k)``,
pure eps = max_k m_k eps_k. Parametric clients draw fresh records (one use each).

Random numbers of a round: the report uniforms come from ``ldpjax.mechanisms.report_bits``
(one per report); with ``exact_law=True`` (default) and parametric clients that is all — the
report is Bernoulli(r_k (1 - F_k(q)) + (1 - r_k) / 2), equal in law to sampling x and
randomizing 1{x > q}; otherwise one data uniform per sample as well.

Engine: one step per round (``config.num_rounds`` steps); the params are
:class:`~ldpjax.quantile.QuantileParams` (grid them with ``ldpjax.engine.product_grid``);
per-round outputs are :class:`~ldpjax.quantile.RoundOutputs` (use ``record.last()`` for the
final estimate and V_T, ``record.at_steps`` for intermediate budgets).
"""

from __future__ import annotations

import dataclasses
import functools

import jax.numpy as jnp
import numpy as np

from ldpjax import mechanisms
from ldpjax.engine import Algorithm
from ldpjax.quantile.clients import uniform_draws
from ldpjax.quantile.mechanism import client_reports, debiased_increment
from ldpjax.quantile.params import QuantileParams
from ldpjax.quantile.record_stream import check_stream, fail_closed, stream_caps, stream_records
from ldpjax.quantile.rounds import (
    RoundState,
    federated_finish,
    federated_init,
    masked_local_steps,
    randomized_response_event,
    round_clock,
    round_start,
    split_round_key,
    stream_contract,
    uses_exact_law,
)
from ldpjax.quantile.schedules import C1, Schedule


@dataclasses.dataclass(frozen=True)
class LocalSGDConfig:
    """Static configuration of a federated run.

    Attributes:
      budget: t_T, samples per client (>= one full first round of the schedule).
      schedule: communication schedule (``C1``, ``C5``, ``LOG``, ``constant(E)``, ``custom``).
      exact_law: for parametric clients, draw each report from its exact law (one uniform, no
        data draw); records clients always sample. ``False``: sample x, then randomize.
    """

    budget: int
    schedule: Schedule = C1
    exact_law: bool = True

    def __post_init__(self):
        if not isinstance(self.schedule, Schedule):
            raise ValueError(f"schedule must be a Schedule (C1, C5, LOG, ...); got {self.schedule!r}")
        if not isinstance(self.exact_law, bool):
            raise TypeError(f"exact_law must be a bool; got {self.exact_law!r}")
        _ = self.local_steps  # validates the budget against the schedule

    @property
    def local_steps(self) -> tuple[int, ...]:
        """E_1..E_M for this budget."""
        return _local_steps(self.schedule, self.budget)

    @property
    def num_rounds(self) -> int:
        """M, the number of engine steps of a run."""
        return len(self.local_steps)

    def rounds_for_samples(self, samples) -> list[int]:
        """For each sample count n, the number of rounds after which >= n samples are used."""
        cum = np.cumsum(self.local_steps)
        return [int(np.searchsorted(cum, n)) + 1 for n in np.atleast_1d(samples)]


@functools.cache
def _local_steps(schedule: Schedule, budget: int) -> tuple[int, ...]:
    return tuple(int(e) for e in schedule.local_steps_per_round(budget))


@functools.cache
def local_sgd(config: LocalSGDConfig) -> Algorithm:
    """The randomized-response Local SGD algorithm for ``config`` (cached: compiled once).

    Example:
      >>> import ldpjax.quantile as Q
      >>> from ldpjax.engine import make_key, rollout
      >>> config = Q.LocalSGDConfig(budget=20, schedule=Q.C5)
      >>> params = Q.quantile_params(0.5, 0.9, Q.make_clients("normal", loc=[0.0, 0.0]))
      >>> _, final = rollout(Q.local_sgd(config), params, make_key(0), config.num_rounds)
      >>> int(final.samples), bool(abs(final.estimate) < 2.0)
      (20, True)
      >>> event = Q.local_sgd(config).privacy_event(params)  # one RR event per client
      >>> [round(float(e.r), 2) for e in event.events]
      [0.9, 0.9]
    """
    if not isinstance(config, LocalSGDConfig):
        raise ValueError(f"config must be a LocalSGDConfig; got {config!r}")
    table = np.asarray(config.local_steps, dtype=np.int32)
    max_steps = int(table.max())
    reports = int(table.sum())  # per client
    validate, privacy_event = stream_contract(reports, randomized_response_event)

    def init(params: QuantileParams, key) -> RoundState:
        check_stream(params.clients, reports)  # static: records clients vs the budget
        return federated_init(params, key)

    def step(params: QuantileParams, state: RoundState, inputs, key):
        k = params.r.shape[-1]
        dtype = state.iterate.dtype
        local_steps, step_lr = round_clock(table, state.round, params, dtype)
        data_key, privacy_key = split_round_key(key)
        report_u = mechanisms.report_bits(privacy_key, (max_steps, k))
        records = params.clients.records is not None
        data_u = None if uses_exact_law(config.exact_law, params) or records else uniform_draws(data_key, (max_steps, k), dtype)
        if records:  # the next records of each client's stream, without replacement
            position = round_start(table, state.round) + jnp.arange(max_steps, dtype=jnp.int32)[:, None]
            x = stream_records(params.clients, state.order, position, caps=stream_caps(params.clients, reports), dtype=dtype)

        def update(j, q):
            if records:
                report = client_reports(params.clients, q, params.r, report_u[j], x=x[j])
                return q + step_lr * fail_closed(debiased_increment(report, params.tau, params.r), x[j])
            report = client_reports(params.clients, q, params.r, report_u[j], None if data_u is None else data_u[j])
            return q + step_lr * debiased_increment(report, params.tau, params.r)

        q = masked_local_steps(update, jnp.broadcast_to(state.iterate, (k,)), max_steps, local_steps)
        return federated_finish(params, state, q, local_steps)

    # XLA's default (fusion) emitters: with the elemental ones this kernel compiled faster but
    # ran slower on CPU (measured: docs/pages/benchmarks.md, "Where the time goes")
    return Algorithm(init, step, validate=validate, privacy_event=privacy_event)


__all__ = ["LocalSGDConfig", "local_sgd"]
