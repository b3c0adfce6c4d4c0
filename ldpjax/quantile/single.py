"""Single baseline: single-machine LDP SGD on one pooled stream (paper 001, Sec. 4).

All K t_T records form one stream, processed sequentially by one machine. Record t (1-based)
comes from client k with probability p_k (so the stream is iid from the mixture sum_k p_k P_k,
whose tau-quantile is Q*), is privatised with its owner's rate r_k (randomized response on
1{x > q}, drawn by ``ldpjax.mechanisms``) and debiased with r_k, so
E[increment] = sum_k p_k (tau - F_k(q)) = tau - F(q).
Step size (our choice; the paper is silent): the stream is cut into blocks of K records and
block m uses the federated clock, lr_m = c0 / (m^a + b), split over its K records (lr_m / K
each), exactly like the E_m local steps of a round. So Single moves as far per K records as C1
moves per round, which makes the two comparable at a fixed t_T (the paper finds C1 ~ Single
there). With lr_t = c0 / (t^a + b) per record instead, the single machine's steps are K times
larger at the same clock and, in our runs (Hete-L, tau = 0.8, t_T = 2000), its Polyak-Ruppert
average kept a bias of about one standard deviation. Estimate: the Polyak-Ruppert average of
all K t_T iterates, CI from the self-normalised V of :mod:`ldpjax.quantile.inference` with unit
weights.

Privacy: each record is used once with its owner's rate: ``ParallelEvent(RandomizedResponseEvent(r_k)
for k)``, as Local SGD. The reports are bits: safe for real data (records clients always take
the sampling path). With ``exact_law=True`` (default) and parametric clients each report is
drawn from its law Bernoulli(r_k (1 - F_k(q)) + (1 - r_k) / 2) given its owner k (one uniform;
the owner is still drawn), with no data draw.

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
from ldpjax import mechanisms
from ldpjax.engine import Algorithm
from ldpjax.quantile.clients import uniform_draws
from ldpjax.quantile.inference import (
    InferenceState,
    inference_init,
    inference_update,
    inference_variance,
)
from ldpjax.quantile.mechanism import client_reports, debiased_increment
from ldpjax.quantile.params import QuantileParams, params_valid, validate_params
from ldpjax.quantile.rounds import (
    PerClientBudget,
    RoundOutputs,
    cumulative_weights,
    randomized_response_event,
    split_round_key,
    uses_exact_law,
)
from ldpjax.quantile.schedules import learning_rate
from ldpjax.types import Array


@dataclasses.dataclass(frozen=True)
class SingleConfig(PerClientBudget):
    """``budget`` = t_T samples per client; the pooled stream has K t_T records.
    ``exact_law`` as in :class:`~ldpjax.quantile.LocalSGDConfig`."""


class SingleState(NamedTuple):
    """State between blocks: the iterate, pooled records processed so far, inference sums."""

    iterate: Array
    records: Array
    stats: InferenceState


def record_owners(weights: Array, u: Array) -> Array:
    """Owner k of each record: the first k with u * (p_1 + ... + p_K) < p_1 + ... + p_k."""
    cumulative = cumulative_weights(weights)
    scaled = u * cumulative[..., -1:]
    owner = jnp.sum(cumulative[..., None, :] <= scaled[..., :, None], axis=-1)  # integer count
    return jnp.minimum(owner, weights.shape[-1] - 1).astype(jnp.int32)


@functools.cache
def single(config: SingleConfig) -> Algorithm:
    """The pooled single-machine baseline (cached).

    Example:
      >>> import ldpjax.quantile as Q
      >>> from ldpjax.engine import make_key, rollout
      >>> config = Q.SingleConfig(budget=20)
      >>> params = Q.quantile_params(0.5, 0.9, Q.make_clients("normal", loc=[0.0, 0.0]))
      >>> _, final = rollout(Q.single(config), params, make_key(0), config.num_rounds)
      >>> int(final.samples)  # pooled records: K t_T
      40
    """
    if not isinstance(config, SingleConfig):
        raise ValueError(f"config must be a SingleConfig; got {config!r}")

    def init(params: QuantileParams, key) -> SingleState:
        start = v.valid_or_nan(params_valid(params), params.init)
        return SingleState(start, jnp.zeros((), jnp.int32), inference_init((), start.dtype))

    def step(params: QuantileParams, state: SingleState, inputs, key):
        k = params.r.shape[-1]
        dtype = state.iterate.dtype
        exact = uses_exact_law(config.exact_law, params)
        data_key, privacy_key = split_round_key(key)
        # data sampling: row 0 picks each record's owner, row 1 its value (sampling path only)
        data_u = uniform_draws(data_key, (1 if exact else 2, k), dtype)
        report_u = mechanisms.report_uniforms(privacy_key, (k,), dtype)
        owner = record_owners(params.weights, data_u[0])
        rate = params.r[owner]
        block = (state.records // k + 1).astype(dtype)
        lr = learning_rate(block, params.lr_scale, params.lr_power, params.lr_offset).astype(dtype) / k

        def record(j, carry):
            q, stats = carry
            report = client_reports(
                params.clients, q, rate[j], report_u[j], None if exact else data_u[1, j], client_index=owner[j]
            )
            q = q + lr * debiased_increment(report, params.tau, rate[j])
            return q, inference_update(stats, q, jnp.ones((), dtype))

        q, stats = jax.lax.fori_loop(0, k, record, (state.iterate, state.stats))
        new_state = SingleState(q, state.records + k, stats)
        return new_state, RoundOutputs(q, stats.mean, inference_variance(stats), stats.samples)

    return Algorithm(init, step, validate=validate_params, privacy_event=randomized_response_event)


__all__ = ["SingleConfig", "SingleState", "record_owners", "single"]
