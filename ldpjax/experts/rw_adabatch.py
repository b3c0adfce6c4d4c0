"""RW-AdaBatch: RW-FTPL with adaptive batching for privacy amplification (paper 000, Sec. 4).

Update (spec ``experts.md``). The same releases g~_t = g_t + z_t as RW-FTPL
(:mod:`ldpjax.experts.rw_ftpl`), but the noisy cumulative vector is only updated at the end
of a batch:

* when a batch starts at round t (1-based), the player computes, from the noisy cumulative
  vector G~ alone, its leader x and gap k (top minus second) and the batch length
  B_t = ComputeDelay(k, t, eta, n, alpha) (Corollary 1: the largest B with
  p(k, B) <= alpha sqrt(log n / (t + B)), :func:`ldpjax.experts.compute_delay`);
* it plays x in rounds t, ..., t + B_t - 1 and buffers their releases g~;
* after round t + B_t - 1 it adds the buffered sum to G~; the next batch starts at t + B_t.

Regret (Corollary 2): E[regret] <= (1 + alpha/2)(eta + 2/eta) sqrt(2 T log n)
(:func:`ldpjax.experts.regret_bound_adabatch`). The paper uses alpha = 0.01.

Privacy. Every release is the RW-FTPL release, so the run is mu-GLDP (post-processing). In
addition, the actions depend on a batch's releases only through their sum, whose noise is
N(0, B eta^2 I) while one gain vector still moves it by at most sqrt(n): ex post, a point in
a batch of B rounds is (mu / sqrt B)-GDP in the central model
(:func:`ldpjax.experts.ex_post_mu`); ex ante, see :mod:`ldpjax.experts.amplification`.

Outputs per round: ``action``, ``gain`` (true gain earned), ``batch_size`` and
``batch_start``. ``batch_size`` is the length of the batch that contains this round, i.e.
B_s of the batch's first round s <= t. It is decided when the batch starts, from data before
round s only, so it can be emitted at every round of the batch without looking ahead: the scan
never needs to revisit a round once its batch closes. (The last batch may be cut by the
horizon; its reported size is still the planned B_s. Its releases then never reach an action.)
This is the "batch size the round's point ends up in" used for ex-post accounting and for the
Monte Carlo amplification estimate.

Structure (what makes "reads only noisy gains" checkable): :func:`plan_batch` (leader and
length) is a function of the noisy cumulative vector and the round index only; the update
:func:`absorb` reads the state and the round's release; the true gains are read once by the
release and once more, after the decision, to report the earned gain.

``config.max_batch`` caps B (``max_batch=1`` turns RW-AdaBatch into RW-FTPL: with the same key
it reproduces RW-FTPL's actions exactly, since both draw z_0 from the init key and z_t from
step t's key, and 0 + g~ = g~ in floating point).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.engine import Algorithm
from ldpjax.experts.bounds import MAX_DELAY, _compute_delay
from ldpjax.experts.privacy import noise_scale, privatize_gains
from ldpjax.experts.rw_ftpl import leader
from ldpjax.types import Array, ArrayLike

Release = Callable[..., Array]
DEFAULT_ALPHA = 0.01


@dataclasses.dataclass(frozen=True)
class AdaBatchConfig:
    """Static configuration of RW-AdaBatch.

    Attributes:
      num_experts: n >= 2.
      sensitivity: l2 sensitivity of one gain vector; None means sqrt(n).
      max_batch: optional cap on the batch length (an integer >= 1; None: 2^30).
    """

    num_experts: int
    sensitivity: float | None = None
    max_batch: int | None = None

    def __post_init__(self):
        v.check_integer("num_experts", self.num_experts, 2)
        v.check_range(
            "sensitivity", self.sensitivity, 0.0, float("inf"), low_open=True, high_open=True
        )
        v.check_integer("max_batch", self.max_batch, 1, MAX_DELAY)


class AdaBatchParams(NamedTuple):
    """Numeric parameters (array leaves)."""

    mu: Array  # per-round GDP parameter, in (0, inf]
    alpha: Array  # ComputeDelay's knob, in (0, inf)


class AdaBatchState(NamedTuple):
    """Only noisy data and counters."""

    noisy_total: Array  # G~ up to the last closed batch, (n,)
    buffer: Array  # sum of the open batch's releases, (n,)
    action: Array  # int32, leader played during the open batch
    batch_size: Array  # int32, planned length of the open batch
    remaining: Array  # int32, rounds left in the open batch (0: a new batch starts)
    round: Array  # int32, 1-based index of the next round


class AdaBatchOutputs(NamedTuple):
    """Per-round diagnostics."""

    action: Array  # int32, expert played
    gain: Array  # true gain earned, g_t[action]
    batch_size: Array  # int32, length of the batch containing this round (decided at its start)
    batch_start: Array  # bool, a batch started this round


def adabatch_params(mu: ArrayLike, alpha: ArrayLike = DEFAULT_ALPHA) -> AdaBatchParams:
    """Validated parameters: mu in (0, inf], alpha in (0, inf) (broadcast to one shape)."""
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("alpha", alpha, 0.0, jnp.inf, low_open=True, high_open=True)
    dtype = jnp.result_type(float)
    mu, alpha = jnp.broadcast_arrays(jnp.asarray(mu, dtype), jnp.asarray(alpha, dtype))
    return AdaBatchParams(mu, alpha)


def plan_batch(
    noisy_total: Array, round_index: Array, eta: Array, alpha: Array, max_batch: int | None = None
) -> tuple[Array, Array]:
    """Leader and ComputeDelay length of a batch starting at ``round_index`` (noisy data only).

    Args:
      noisy_total: G~ (n,), the noisy cumulative gains of all closed batches.
      round_index: 1-based round t at which the batch starts.
      eta: noise scale; alpha: ComputeDelay's knob; max_batch: optional static cap.

    Returns:
      (leader int32, batch length int32 in [1, max_batch]).
    """
    n = noisy_total.shape[-1]
    action = leader(noisy_total)
    best = jnp.max(noisy_total, axis=-1)
    # Second largest in two O(n) passes (lax.top_k sorts on CPU and dominated the step).
    others = jnp.where(jnp.arange(n) == action[..., None], -jnp.inf, noisy_total)
    gap = best - jnp.max(others, axis=-1)
    dtype = noisy_total.dtype
    length = _compute_delay(
        gap,
        jnp.asarray(round_index, dtype),
        jnp.asarray(eta, dtype),
        jnp.asarray(n, dtype),
        jnp.asarray(alpha, dtype),
        jnp.ones(gap.shape, bool),
    )
    if max_batch is not None:
        length = jnp.minimum(length, max_batch)
    return action, length


def absorb(state: AdaBatchState, noisy_gains: Array) -> AdaBatchState:
    """Buffer the round's release; at the batch's last round add the buffer to G~."""
    buffer = state.buffer + noisy_gains
    remaining = state.remaining - 1
    closing = remaining == 0
    noisy_total = jnp.where(closing, state.noisy_total + buffer, state.noisy_total)
    buffer = jnp.where(closing, jnp.zeros_like(buffer), buffer)
    return state._replace(
        noisy_total=noisy_total, buffer=buffer, remaining=remaining, round=state.round + 1
    )


def rw_adabatch(config: AdaBatchConfig, release: Release = privatize_gains) -> Algorithm:
    """RW-AdaBatch as an engine algorithm (cached per config).

    Args:
      config: static :class:`AdaBatchConfig`.
      release: the local randomizer ``(key, gains, eta) -> noisy gains`` (keep the default
        :func:`ldpjax.experts.privatize_gains`; tests swap it to hold the noisy data fixed).

    Returns:
      ``Algorithm(init, step)``; ``step(params, state, gains_t, key)`` returns
      ``(AdaBatchState, AdaBatchOutputs)``.
    """
    return _build(config, release)


@functools.cache
def _build(config: AdaBatchConfig, release: Release) -> Algorithm:
    """The cached builder (positional arguments, so every call style hits the same entry)."""
    n = config.num_experts

    def eta_of(params):
        return noise_scale(params.mu, n, config.sensitivity)

    def init(params: AdaBatchParams, key) -> AdaBatchState:
        eta = eta_of(params)
        zero = jnp.zeros((n,), eta.dtype)
        count = jnp.zeros((), jnp.int32)
        return AdaBatchState(
            noisy_total=release(key, zero, eta),  # g~_0 = 0 + z_0, as in RW-FTPL
            buffer=zero,
            action=count,
            batch_size=count,
            remaining=count,
            round=jnp.ones((), jnp.int32),
        )

    def step(params: AdaBatchParams, state: AdaBatchState, gains, key):
        eta = eta_of(params)
        starting = state.remaining == 0
        planned_action, planned_size = plan_batch(
            state.noisy_total, state.round, eta, params.alpha, config.max_batch
        )
        action = jnp.where(starting, planned_action, state.action)
        size = jnp.where(starting, planned_size, state.batch_size)
        state = state._replace(
            action=action, batch_size=size, remaining=jnp.where(starting, size, state.remaining)
        )
        gains = jnp.asarray(gains, eta.dtype)
        noisy_gains = release(key, gains, eta)  # the round's only access to the data
        state = absorb(state, noisy_gains)
        return state, AdaBatchOutputs(
            action=action, gain=gains[action], batch_size=size, batch_start=starting
        )

    return Algorithm(init, step)


__all__ = [
    "DEFAULT_ALPHA",
    "AdaBatchConfig",
    "AdaBatchOutputs",
    "AdaBatchParams",
    "AdaBatchState",
    "absorb",
    "adabatch_params",
    "plan_batch",
    "rw_adabatch",
]
