"""Single baseline: single-machine LDP SGD on one pooled stream (paper 001, Sec. 4).

All K t_T records form one stream, processed sequentially by one machine. Record t (1-based)
comes from client k with probability p_k (so the stream is iid from the mixture sum_k p_k P_k,
whose tau-quantile is Q*), is privatised with its owner's rate r_k (randomized response on
1{x > q}) and debiased with r_k, so E[increment] = sum_k p_k (tau - F_k(q)) = tau - F(q).
Step size (our choice; the paper is silent): the stream is cut into blocks of K records and
block m uses the federated clock, lr_m = c0 / (m^a + b), split over its K records (lr_m / K
each), exactly like the E_m local steps of a round. So Single moves as far per K records as C1
moves per round, which makes the two comparable at a fixed t_T (the paper finds C1 ~ Single
there). With lr_t = c0 / (t^a + b) per record instead, the single machine's steps are K times
larger at the same clock and, in our runs (Hete-L, tau = 0.8, t_T = 2000), its Polyak-Ruppert
average kept a bias of about one standard deviation. Estimate: the Polyak-Ruppert average of
all K t_T iterates, CI from the self-normalised V of :mod:`ldpjax.quantile.inference` with unit
weights.

Engine: one step processes a block of K consecutive records (``config.num_rounds = t_T``
steps), so a run has the same number of steps as C1 Local SGD. The ``samples`` output counts
pooled records.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.engine import Algorithm
from ldpjax.quantile._core import PerClientBudget, QuantileParams, RoundOutputs, params_valid
from ldpjax.quantile.clients import sample_from_uniform
from ldpjax.quantile.inference import (
    InferenceState,
    inference_init,
    inference_update,
    inference_variance,
)
from ldpjax.quantile.mechanism import debiased_increment, report_from_uniform
from ldpjax.quantile.schedules import learning_rate
from ldpjax.types import Array


@dataclasses.dataclass(frozen=True)
class SingleConfig(PerClientBudget):
    """``budget`` = t_T samples per client; the pooled stream has K t_T records."""


class SingleState(NamedTuple):
    iterate: Array
    records: Array  # pooled records processed so far
    stats: InferenceState


@functools.cache
def single(config: SingleConfig) -> Algorithm:
    """The pooled single-machine baseline (cached)."""
    if not isinstance(config, SingleConfig):
        raise ValueError(f"config must be a SingleConfig; got {config!r}")

    def init(params: QuantileParams, key) -> SingleState:
        dtype = params.init.dtype
        start = v.valid_or_nan(params_valid(params), params.init)
        return SingleState(start, jnp.zeros((), jnp.int32), inference_init((), dtype))

    def step(params: QuantileParams, state: SingleState, inputs, key):
        k = params.r.shape[-1]
        dtype = state.iterate.dtype
        draws = jax.random.uniform(key, (3, k), dtype)
        cumulative = jnp.cumsum(params.weights)
        owner = jnp.searchsorted(cumulative, draws[0] * cumulative[-1], side="right")
        owner = jnp.minimum(owner, k - 1)
        x = sample_from_uniform(params.clients, draws[1], client_index=owner)
        rate = params.r[owner]
        block = (state.records // k + 1).astype(dtype)
        lr = learning_rate(block, params.lr_scale, params.lr_power, params.lr_offset) / k

        def record(j, carry):
            q, stats = carry
            report = report_from_uniform(draws[2, j], x[j] > q, rate[j])
            q = q + lr * debiased_increment(report, params.tau, rate[j])
            return q, inference_update(stats, q, 1.0)

        q, stats = jax.lax.fori_loop(0, k, record, (state.iterate, state.stats))
        new_state = SingleState(q, state.records + k, stats)
        return new_state, RoundOutputs(q, stats.mean, inference_variance(stats), stats.samples)

    return Algorithm(init, step)


__all__ = ["SingleConfig", "SingleState", "single"]
