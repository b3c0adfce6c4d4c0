"""Helpers shared by the quantile algorithms (Local SGD, DP-SGD, DC, Single).

Each algorithm owns its step in its own module; this module holds only the pieces they share:

* :class:`RoundState` / :class:`RoundOutputs` — state between rounds and per-round outputs;
* :class:`PerClientBudget` — the one-sample-per-round configuration of DC and Single;
* :func:`round_clock` — round m's number of local steps E_m (from a static table) and its
  per-step learning rate lr_m / E_m;
* :func:`masked_local_steps` — the inner loop of a round: E_max = max_m E_m local steps, the
  ones beyond E_m masked, so shapes are static and a run is one ``lax.scan`` (the waste is
  sum_m (E_max - E_m), about 10% for the Log schedule, nothing for constant schedules);
* :func:`federated_init` / :func:`federated_finish` — the shared iterate q_0 and the end of a
  federated round (aggregate, update the inference sums, emit the outputs);
* :func:`weighted_sum` — sum_k p_k q_k added in a fixed order (bit-identical results whatever
  the batch size, chunking or number of devices, also in float64);
* :func:`split_round_key` / :func:`privacy_keys` — the round key split into a data key and
  privacy-layer keys (no noise is drawn here: that is :mod:`ldpjax.mechanisms`' job);
* :func:`round_start` — the number of reports a client made before a round (where a records
  client's stream stands; :mod:`ldpjax.quantile.record_stream`);
* :func:`stream_contract` — ``validate`` and ``privacy_event`` that also check a records
  client's stream against its records and compose the uses;
* :func:`randomized_response_event` — the per-record claim of the randomized-response methods.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax import accounting as accounting_lib
from ldpjax._fusion import computed_once
from ldpjax.quantile.inference import (
    InferenceState,
    inference_init,
    inference_update,
    inference_variance,
)
from ldpjax.quantile.params import QuantileParams, params_valid, validate_params
from ldpjax.quantile.record_stream import (
    check_stream,
    per_client_claim,
    stream_seed,
    uses_per_record,
)
from ldpjax.quantile.schedules import learning_rate
from ldpjax.types import Array, PRNGKey

_UNROLL_MAX_CLIENTS = 64


@dataclasses.dataclass(frozen=True)
class PerClientBudget:
    """Static configuration shared by the one-sample-per-round methods (DC, Single).

    Attributes:
      budget: t_T samples per client (integer >= 1), one engine step per sample.
      exact_law: for parametric clients, draw each report from its exact law
        Bernoulli(r_k (1 - F_k(q)) + (1 - r_k) / 2) with one uniform and no data draw (equal in
        distribution to sampling x, then randomizing 1{x > q}). Records clients always sample.
    """

    budget: int
    exact_law: bool = True

    def __post_init__(self):
        v.check_integer("budget (t_T, samples per client)", self.budget, 1)
        if not isinstance(self.exact_law, bool):
            raise TypeError(f"exact_law must be a bool; got {self.exact_law!r}")

    @property
    def num_rounds(self) -> int:
        return int(self.budget)


class RoundState(NamedTuple):
    """State between rounds: only what the next round needs.

    Attributes:
      iterate: the shared iterate after the last aggregation (a scalar) for the federated
        methods; the (K,) client iterates for DC (no communication).
      round: number of completed rounds.
      stats: online inference sums (scalar leaves for the federated estimate; (K,) for DC).
      order: uint32 (2,) seed of the run's record order (records clients; zeros otherwise).
    """

    iterate: Array
    round: Array
    stats: InferenceState
    order: Array


class RoundOutputs(NamedTuple):
    """Per-round outputs (reduce them with an ``ldpjax.engine.record`` recorder).

    Attributes:
      iterate: the aggregated iterate sum_k p_k q_k after the round.
      estimate: the Polyak-Ruppert estimate so far.
      variance: V_n so far (CI: estimate +- z sqrt(variance), see
        :func:`ldpjax.quantile.confidence_interval`).
      samples: samples per client used so far (pooled records for Single).
    """

    iterate: Array
    estimate: Array
    variance: Array
    samples: Array


def weighted_sum(weights: Array, values: Array) -> Array:
    """sum_k w_k v_k over the last axis, added left to right in a fixed order.

    ``jnp.sum`` lets XLA choose the reduction tree, which may depend on the batch shape (seed
    chunk, devices) and so differ in the last bit; a fixed chain of adds does not.
    """
    # the client terms are read by k slices: computed once, not once per slice (ldpjax._fusion)
    terms = computed_once(weights * values)
    k = terms.shape[-1]
    if k <= _UNROLL_MAX_CLIENTS:
        total = terms[..., 0]
        for i in range(1, k):
            total = total + terms[..., i]
        return total
    return jax.lax.fori_loop(1, k, lambda i, acc: acc + terms[..., i], terms[..., 0])


def cumulative_weights(weights: Array) -> Array:
    """Running sums p_1, p_1 + p_2, ... over the last axis in a fixed order (see weighted_sum)."""
    k = weights.shape[-1]
    if k <= _UNROLL_MAX_CLIENTS:
        out = [weights[..., 0]]
        for i in range(1, k):
            out.append(out[-1] + weights[..., i])
        return jnp.stack(out, axis=-1)
    _, out = jax.lax.scan(lambda acc, w: (acc + w, acc + w), jnp.zeros_like(weights[..., 0]),
                          jnp.moveaxis(weights, -1, 0))
    return jnp.moveaxis(out, 0, -1)


def split_round_key(key: PRNGKey) -> tuple[PRNGKey, PRNGKey]:
    """(data key, privacy key) of one round: the data key drives data sampling only; the
    privacy key goes to ``ldpjax.mechanisms`` (no noise is drawn here)."""
    # key derivation only (no draw): data sampling and the privacy layer get independent keys
    data_key, privacy_key = jax.random.split(key)
    return data_key, privacy_key


def privacy_keys(privacy_key: PRNGKey, num: int) -> PRNGKey:
    """``num`` keys for ``num`` successive releases through ``ldpjax.mechanisms``."""
    # key derivation only (no draw): one key per release of the privacy layer
    return jax.random.split(privacy_key, num)


def round_clock(table: np.ndarray, round_index: Array, params: QuantileParams, dtype) -> tuple[Array, Array]:
    """(E_m, lr_m / E_m) for the 0-based ``round_index`` (clamped to the table)."""
    m = jnp.minimum(round_index, table.size - 1)
    local_steps = jnp.asarray(table)[m]
    round_lr = learning_rate(m + 1, params.lr_scale, params.lr_power, params.lr_offset).astype(dtype)
    return local_steps, round_lr / local_steps.astype(dtype)


def masked_local_steps(
    update: Callable[[Array, Array], Array], q: Array, max_steps: int, local_steps: Array
) -> Array:
    """Run ``q <- update(j, q)`` for j = 0..max_steps-1, keeping q unchanged for j >= E_m."""
    if max_steps == 1:
        return update(0, q)

    def body(j, q):
        return jnp.where(j < local_steps, update(j, q), q)

    return jax.lax.fori_loop(0, max_steps, body, q)


def federated_init(params: QuantileParams, key) -> RoundState:
    """Shared iterate q_0 (NaN for traced invalid params), round 0, empty inference sums, and
    the record-order seed drawn from ``key`` (records clients)."""
    start = v.valid_or_nan(params_valid(params), params.init)
    order = stream_seed(params.clients, key)
    return RoundState(start, jnp.zeros((), jnp.int32), inference_init((), start.dtype), order)


def round_start(table: np.ndarray, round_index: Array) -> Array:
    """Reports per client before the 0-based round ``round_index``: E_1 + ... + E_m (rounds
    past the table repeat its last E, as :func:`round_clock` does)."""
    starts = np.concatenate([[0], np.cumsum(table)[:-1]]).astype(np.int32)
    last = table.size - 1
    m = jnp.minimum(round_index, last)
    return jnp.asarray(starts)[m] + jnp.maximum(round_index - last, 0) * int(table[-1])


def federated_finish(params: QuantileParams, state, q: Array, local_steps: Array) -> tuple:
    """Aggregate the (K,) client iterates, update the inference sums, emit the outputs.

    ``state`` is any NamedTuple with ``iterate``, ``round`` and ``stats`` fields (other fields
    are carried unchanged)."""
    aggregated = weighted_sum(params.weights, q)
    stats = inference_update(state.stats, aggregated, local_steps.astype(aggregated.dtype))
    new_state = state._replace(iterate=aggregated, round=state.round + 1, stats=stats)
    return new_state, RoundOutputs(aggregated, stats.mean, inference_variance(stats), stats.samples)


def uses_exact_law(config_exact_law: bool, params: QuantileParams) -> bool:
    """The exact-law path runs for parametric clients when the config asks for it (static)."""
    return bool(config_exact_law) and params.clients.records is None


def randomized_response_event(params: QuantileParams, uses=None):
    """The per-record claim of the randomized-response methods.

    ``ParallelEvent`` over clients (each record belongs to one client) of
    ``RandomizedResponseEvent(r_k)`` when each record is reported once, or of
    ``ComposedEvent((RandomizedResponseEvent(r_k),) * m_k)`` when a records client's record is
    reported m_k times (``uses``, from :func:`~ldpjax.quantile.record_stream.uses_per_record`):
    m_k uses are an m_k-fold sequential composition, pure eps = m_k log((1 + r_k)/(1 - r_k)).
    Only the randomized bits are released.
    """
    r = jnp.asarray(params.r)
    k = r.shape[-1]
    return per_client_claim(tuple(accounting_lib.RandomizedResponseEvent(r[..., i]) for i in range(k)), uses)


def stream_contract(reports, event_of) -> tuple[Callable, Callable]:
    """``(validate, privacy_event)`` of an algorithm whose clients report ``reports`` times.

    Args:
      reports: reports per client, an int (the same for every client) or a function of the
        concrete params giving one count per client.
      event_of: ``event_of(params, uses) -> event`` with ``uses`` the m_k of each records
        client (``None`` for parametric clients).

    Both raise ``ValueError`` when a records client's stream is longer than its records allow
    (:func:`~ldpjax.quantile.record_stream.check_stream`).
    """

    def count(params):
        return reports(params) if callable(reports) else reports

    def validate(params: QuantileParams, inputs=None) -> None:
        validate_params(params, inputs)
        check_stream(params.clients, count(params))

    def privacy_event(params: QuantileParams):
        n = count(params)
        check_stream(params.clients, n)
        return event_of(params, uses_per_record(params.clients, n))

    return validate, privacy_event


__all__ = [
    "PerClientBudget",
    "RoundOutputs",
    "RoundState",
    "cumulative_weights",
    "federated_finish",
    "federated_init",
    "masked_local_steps",
    "privacy_keys",
    "randomized_response_event",
    "round_clock",
    "round_start",
    "split_round_key",
    "stream_contract",
    "uses_exact_law",
    "weighted_sum",
]
