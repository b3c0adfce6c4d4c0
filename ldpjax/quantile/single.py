"""Single baseline: single-machine LDP SGD on one pooled stream.

A baseline of "Federated Learning of Quantile Inference under Local Differential Privacy"
(ICLR 2026), Sec. 4.

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
the sampling path) at the default, where each record is read once.

Records clients: their records are read without replacement
(:mod:`ldpjax.quantile.record_stream`), which needs each client's number of reports fixed in
advance. So the pooled stream holds exactly c_k reports of client k, the largest-remainder
apportionment of p_k K t_T (:func:`pooled_counts`; sum K t_T), in a pseudo-random order of
the K t_T slots (a keyed permutation of the slots, new each run): the owners are a shuffled
fixed multiset rather than iid draws, and the stream's mix is p_k up to rounding. c_k above
n_k is a ``ValueError`` (``validate``, ``privacy_event``) unless the clients opt into reuse
(``record_clients(..., max_uses=m)``); the claim then composes m_k = ceil(c_k / n_k) uses of
``RandomizedResponseEvent(r_k)`` (over a stacked grid of weights: the largest c_k). The counts
are computed by the same fixed-order float operations at validation, claim and run time; a
report beyond a client's records reads NaN (fail closed). With ``exact_law=True`` (default) and parametric clients each report is
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
import numpy as np

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
from ldpjax.quantile.params import QuantileParams, params_valid
from ldpjax.quantile.record_stream import (
    POOLED,
    fail_closed,
    permutation_index,
    stream_records,
    stream_salt,
    stream_seed,
)
from ldpjax.quantile.rounds import (
    PerClientBudget,
    RoundOutputs,
    cumulative_weights,
    randomized_response_event,
    split_round_key,
    stream_contract,
    uses_exact_law,
)
from ldpjax.quantile.schedules import learning_rate
from ldpjax.types import Array, ArrayLike


@dataclasses.dataclass(frozen=True)
class SingleConfig(PerClientBudget):
    """``budget`` = t_T samples per client; the pooled stream has K t_T records.
    ``exact_law`` as in :class:`~ldpjax.quantile.LocalSGDConfig`."""


class SingleState(NamedTuple):
    """State between blocks: the iterate, pooled records processed so far, inference sums, and
    the uint32 (2,) seed of the run's record order (records clients; zeros otherwise)."""

    iterate: Array
    records: Array
    stats: InferenceState
    order: Array


def record_owners(weights: Array, u: Array) -> Array:
    """Owner k of each record: the first k with u * (p_1 + ... + p_K) < p_1 + ... + p_k."""
    cumulative = cumulative_weights(weights)
    scaled = u * cumulative[..., -1:]
    owner = jnp.sum(cumulative[..., None, :] <= scaled[..., :, None], axis=-1)  # integer count
    return jnp.minimum(owner, weights.shape[-1] - 1).astype(jnp.int32)


def pooled_counts(weights: ArrayLike, total: int) -> Array:
    """c_k: the reports of client k among ``total`` pooled ones (records clients).

    The largest-remainder apportionment of p_k total (p normalised; ties to the lower index):
    int32, summing exactly to ``total``. Fixed-order float operations (no reduction tree, no
    fused multiply-add across the barrier), so the counts are the same at validation and run
    time.

    Example:
      >>> pooled_counts(jnp.array([0.5, 0.3, 0.2]), 7).tolist()
      [4, 2, 1]
    """
    w = jnp.asarray(weights)
    w = w.astype(jnp.result_type(w.dtype, float))
    share = jax.lax.optimization_barrier(w / cumulative_weights(w)[..., -1:] * total)
    base = jnp.floor(share)
    left = total - jnp.sum(base.astype(jnp.int32), axis=-1, keepdims=True)  # integer sum: exact
    order = jnp.argsort(-(share - base), axis=-1, stable=True)
    rank = jnp.argsort(order, axis=-1, stable=True)
    return base.astype(jnp.int32) + (rank < left).astype(jnp.int32)


def _pooled_records(params: QuantileParams, order: Array, slots: Array, total: int, dtype):
    """(owner, x) of the pooled ``slots`` (records clients): slot s holds report pi(s) of the
    arrangement in which client k owns c_k consecutive report numbers; NaN past the stream."""
    counts = pooled_counts(params.weights, total)
    ends = jnp.cumsum(counts)
    live = slots < total
    rank = permutation_index(stream_salt(order, POOLED, 0), jnp.where(live, slots, 0), total)
    owner = jnp.minimum(jnp.sum(ends[None, :] <= rank[:, None], axis=-1), counts.shape[-1] - 1).astype(jnp.int32)
    position = rank - (ends[owner] - counts[owner])
    position = jnp.where(live & (position < counts[owner]), position, -1)  # -1 reads NaN
    return owner, stream_records(params.clients, order, position, client_index=owner, dtype=dtype)


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

    def reports(params: QuantileParams):  # per client, concrete params (a grid: per point)
        total = int(config.budget) * params.clients.num_clients
        return np.asarray(pooled_counts(params.weights, total))

    validate, privacy_event = stream_contract(reports, randomized_response_event)

    def init(params: QuantileParams, key) -> SingleState:
        start = v.valid_or_nan(params_valid(params), params.init)
        order = stream_seed(params.clients, key)
        return SingleState(start, jnp.zeros((), jnp.int32), inference_init((), start.dtype), order)

    def step(params: QuantileParams, state: SingleState, inputs, key):
        k = params.r.shape[-1]
        dtype = state.iterate.dtype
        exact = uses_exact_law(config.exact_law, params)
        records = params.clients.records is not None
        data_key, privacy_key = split_round_key(key)
        report_u = mechanisms.report_bits(privacy_key, (k,))
        if records:  # a fixed number of reports per client, each record read without replacement
            slots = state.records + jnp.arange(k, dtype=jnp.int32)
            owner, x = _pooled_records(params, state.order, slots, int(config.budget) * k, dtype)
        else:
            # data sampling: row 0 picks each record's owner, row 1 its value (sampling path only)
            data_u = uniform_draws(data_key, (1 if exact else 2, k), dtype)
            owner = record_owners(params.weights, data_u[0])
        rate = params.r[owner]
        block = (state.records // k + 1).astype(dtype)
        lr = learning_rate(block, params.lr_scale, params.lr_power, params.lr_offset).astype(dtype) / k

        def record(j, carry):
            q, stats = carry
            if records:
                report = client_reports(params.clients, q, rate[j], report_u[j], x=x[j])
                increment = fail_closed(debiased_increment(report, params.tau, rate[j]), x[j])
            else:
                report = client_reports(
                    params.clients, q, rate[j], report_u[j], None if exact else data_u[1, j], client_index=owner[j]
                )
                increment = debiased_increment(report, params.tau, rate[j])
            q = q + lr * increment
            return q, inference_update(stats, q, jnp.ones((), dtype))

        q, stats = jax.lax.fori_loop(0, k, record, (state.iterate, state.stats))
        new_state = SingleState(q, state.records + k, stats, state.order)
        return new_state, RoundOutputs(q, stats.mean, inference_variance(stats), stats.samples)

    # XLA's default (fusion) emitters: with the elemental ones this kernel compiled faster but
    # ran slower on CPU (measured: docs/pages/benchmarks.md, "Where the time goes")
    return Algorithm(init, step, validate=validate, privacy_event=privacy_event)


__all__ = ["SingleConfig", "SingleState", "pooled_counts", "record_owners", "single"]
