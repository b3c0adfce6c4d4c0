"""Randomized-response Local SGD for the global quantile (paper 001, Algorithm 1; Sec. 2-3).

Rounds m = 1..M. In round m every client k starts from the shared iterate q_{m-1}, takes E_m
private local steps (:func:`ldpjax.quantile.privatized_step`: randomized response with its own
rate r_k on 1{x > q}, debiased update with expectation tau - F_k(q)), each with step size
lr_m / E_m where lr_m = c0 / (m^a + b) (:mod:`ldpjax.quantile.schedules`); then the server
averages, q_m = sum_k p_k q_m^k, and broadcasts. The schedule (C1, C5, Log, custom) fixes E_m
with a budget of t_T samples per client.

Estimate: the sample-weighted Polyak-Ruppert average of the aggregated iterates,
Q^ = sum_m E_m q_m / t_T; inference: the self-normalised V_T of Algorithm 2 computed online
(:mod:`ldpjax.quantile.inference`), CI Q^ +- z sqrt(V_T) with z = critical_value(level).
Theorem 3.1: sqrt(t_T)(Q^ - Q*) -> N(0, sigma^2) with sigma^2 from
:func:`ldpjax.quantile.asymptotic_variance`.

Privacy: every record is used once and only its randomized bit leaves the client, so client k
is eps_k-LDP with eps_k = ``rr_epsilon(r_k)``; the run is (max_k eps_k)-LDP.

Engine: one step per round (``config.num_rounds`` steps); the params are
:class:`~ldpjax.quantile.QuantileParams` (grid them with ``ldpjax.engine.product_grid``);
per-round outputs are :class:`~ldpjax.quantile.RoundOutputs` (use ``record.last()`` for the
final estimate and V_T, ``record.at_steps`` for intermediate budgets).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ldpjax.engine import Algorithm
from ldpjax.quantile._core import _CoreSpec, rounds_algorithm
from ldpjax.quantile.schedules import C1, Schedule


@dataclasses.dataclass(frozen=True)
class LocalSGDConfig:
    """Static configuration of a federated run.

    Attributes:
      budget: t_T, samples per client (>= one full first round of the schedule).
      schedule: communication schedule (``C1``, ``C5``, ``LOG``, ``constant(E)``, ``custom``).
    """

    budget: int
    schedule: Schedule = C1

    def __post_init__(self):
        if not isinstance(self.schedule, Schedule):
            raise ValueError(f"schedule must be a Schedule (C1, C5, LOG, ...); got {self.schedule!r}")
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
    """The randomized-response Local SGD algorithm for ``config`` (cached: compiled once)."""
    return rounds_algorithm(_CoreSpec(config.local_steps, "rr", aggregate=True))


__all__ = ["LocalSGDConfig", "local_sgd"]
