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
from ldpjax import mechanisms
from ldpjax.quantile.inference import (
    InferenceState,
    inference_init,
    inference_update,
    inference_variance,
)
from ldpjax.quantile.params import QuantileParams, params_valid
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
    """

    iterate: Array
    round: Array
    stats: InferenceState


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
    terms = weights * values
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
    """Shared iterate q_0 (NaN for traced invalid params), round 0, empty inference sums."""
    start = v.valid_or_nan(params_valid(params), params.init)
    return RoundState(start, jnp.zeros((), jnp.int32), inference_init((), start.dtype))


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


def randomized_response_event(params: QuantileParams):
    """ParallelEvent over clients of RandomizedResponseEvent(r_k): each record is used once,
    by its own client, and only its randomized bit is released."""
    r = jnp.asarray(params.r)
    k = r.shape[-1]
    return mechanisms.ParallelEvent(tuple(mechanisms.RandomizedResponseEvent(r[..., i]) for i in range(k)))


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
    "split_round_key",
    "uses_exact_law",
    "weighted_sum",
]
