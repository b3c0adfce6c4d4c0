"""RW-AdaBatch: RW-FTPL with adaptive batching for privacy amplification.

"Prediction with Expert Advice under Local Differential Privacy" (ICLR 2026), Sec. 4.

Update. The same releases g~_t = g_t + z_t as RW-FTPL
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

Privacy. Every release is the RW-FTPL release (:func:`ldpjax.experts.privatize_gains`, i.e.
:func:`ldpjax.mechanisms.gaussian_mechanism` with ``domain=(0, 1)``, sensitivity
``params.sensitivity``, default sqrt(n)), so the run is mu-GLDP (post-processing): the per-record
claim (:attr:`Algorithm.privacy_event`, a record = one round's gain vector) is
``GaussianEvent(mu)``. In addition, the actions depend on a batch's releases only through
their sum, whose noise is N(0, B eta^2 I) while one gain vector still moves it by at most
sqrt(n): ex post, a point in a batch of B rounds is (mu / sqrt B)-GDP in the central model
(:func:`ldpjax.accounting.amplification.ex_post_mu`); ex ante it is the revealed mixture over the batch-size law,
a :class:`~ldpjax.accounting.GaussianMixtureEvent` (:func:`ldpjax.experts.amplified_event`,
analytic worst case of :mod:`ldpjax.experts.amplification`). That amplified claim holds where
only the batch sums are observed (e.g. the fast path below); the per-round releases of the
sampling path are each mu-GDP. Real data: ``AdaBatchConfig(n, granularity=2**-k)`` releases
every round on the float-safe granular path (per round; the fast path is for simulation).

Fast path (``AdaBatchConfig(n, fast=True)``). The individual releases of a batch are
never observed by the player, only their sum at the batch's last round, and the sum of B iid
N(0, eta^2 I) vectors is sqrt(B) eta N(0, I). The fast path therefore buffers the batch's
*clean* gains and releases their mean once, at the batch's last round, through the same
mechanism with sensitivity Delta / sqrt(B) (noise sd eta / sqrt B on the mean, i.e. sqrt(B) eta
on the sum): equal in law to the sampling path (two-sample tests in
``tests/experts/test_fast_paths.py``), one n-vector draw per batch instead of one per round.
The draw sits in a ``lax.cond``, so the saving is realised for an *unbatched* run (one
``rollout`` under ``jit``). Under ``vmap`` (the engine's sweeps over seeds x grids) a batched
predicate turns the ``cond`` into a ``select`` that computes the draw every round, and the extra
arithmetic makes it slower than one release per round, so the default is ``fast=False`` (the
measurements are in ``ldpjax bench``, workload ``rw-adabatch``). Out-of-range gains are turned into NaN before buffering, so a traced bad gain still
gives a NaN release. With a ``granularity`` the per-round releases are always used.

Structure (what makes "reads only noisy gains" checkable): :func:`plan_batch` (leader and
length) is a function of the noisy cumulative vector and the round index only; the update
:func:`absorb` (sampling path) reads the state and the round's release, :func:`absorb_batch`
(fast path) the state and the batch's release; the true gains are read by the release (on the
fast path: buffered for it) and once more, after the decision, to report the earned gain.

``config.max_batch`` caps B (``max_batch=1`` turns RW-AdaBatch into RW-FTPL: with the same key
it reproduces RW-FTPL's actions exactly, since both draw z_0 from the init key and z_t from
step t's key, and 0 + g~ = g~ in floating point).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.engine import Algorithm
from ldpjax.experts import privacy
from ldpjax.experts.bounds import MAX_DELAY, _compute_delay
from ldpjax.experts.privacy import privatize_gains
from ldpjax.experts.rw_ftpl import leader, perturbed_release
from ldpjax.mechanisms import _domain as dom
from ldpjax.types import Array, ArrayLike

Release = Callable[..., Array]
DEFAULT_ALPHA = 0.01


@dataclasses.dataclass(frozen=True)
class AdaBatchConfig:
    """Static configuration of RW-AdaBatch.

    Attributes:
      num_experts: n >= 2.
      max_batch: optional cap on the batch length (an integer >= 1; None: 2^30).
      granularity: keyword-only; None (float releases, simulation) or a power of two
        (float-safe granular release of every round: real data).
      fast: keyword-only; True releases each batch's sum once (equal in law; faster for
        unbatched runs, slower under the engine's vmap, see the module docstring). Ignored
        (per-round releases) when ``granularity`` is set.

    Example:
      >>> AdaBatchConfig(4, max_batch=8, fast=True).uses_fast_path
      True
    """

    num_experts: int
    max_batch: int | None = None
    granularity: float | None = dataclasses.field(default=None, kw_only=True)
    fast: bool = dataclasses.field(default=False, kw_only=True)

    def __post_init__(self):
        v.check_integer("num_experts", self.num_experts, 2)
        v.check_integer("max_batch", self.max_batch, 1, MAX_DELAY)
        dom.check_power_of_two("granularity", self.granularity)
        if not isinstance(self.fast, bool):
            raise TypeError(f"fast must be a bool, got {self.fast!r}")

    @property
    def uses_fast_path(self) -> bool:
        return self.fast and self.granularity is None


class AdaBatchParams(NamedTuple):
    """Numeric parameters (array leaves)."""

    mu: Array  # per-round GDP parameter, in (0, inf]
    alpha: Array  # ComputeDelay's knob, in (0, inf)
    sensitivity: Array | None = None  # l2 sensitivity of a gain vector; None: sqrt(n)


class AdaBatchState(NamedTuple):
    """What the next round needs: noisy totals, the open batch and counters."""

    noisy_total: Array  # G~ up to the last closed batch, (n,)
    buffer: Array  # open batch: sum of its releases (sampling path) / of its gains (fast path)
    action: Array  # int32, leader played during the open batch
    batch_size: Array  # int32, planned length of the open batch (emitted every round)
    remaining: Array  # int32, rounds left in the open batch (0: a new batch starts)
    round: Array  # int32, 1-based index of the next round


class AdaBatchOutputs(NamedTuple):
    """Per-round diagnostics."""

    action: Array  # int32, expert played
    gain: Array  # true gain earned, g_t[action]
    batch_size: Array  # int32, length of the batch containing this round (decided at its start)
    batch_start: Array  # bool, a batch started this round


def adabatch_params(
    mu: ArrayLike, alpha: ArrayLike = DEFAULT_ALPHA, sensitivity: ArrayLike | None = None
) -> AdaBatchParams:
    """Validated parameters: mu in (0, inf], alpha in (0, inf), sensitivity in (0, inf) or None
    (sqrt(n)); broadcast to one shape.

    Example:
      >>> adabatch_params([0.5, 1.0], 0.01).alpha.shape
      (2,)
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("alpha", alpha, 0.0, jnp.inf, low_open=True, high_open=True)
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    if sensitivity is None:
        return AdaBatchParams(*privacy.broadcast_leaves(mu=mu, alpha=alpha))
    return AdaBatchParams(*privacy.broadcast_leaves(mu=mu, alpha=alpha, sensitivity=sensitivity))


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

    Example:
      >>> a, b = plan_batch(jnp.array([5.0, 0.0, 0.0]), 10, 1.0, 0.01)
      >>> int(a), bool(b >= 1)
      (0, True)
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
    """Sampling path: buffer the round's release; at the batch's last round add the buffer to G~.

    Example:
      >>> s = AdaBatchState(jnp.zeros(2), jnp.zeros(2), 0, 1, jnp.asarray(1), 1)
      >>> absorb(s, jnp.array([1.0, 2.0])).noisy_total.tolist()  # a one-round batch closes
      [1.0, 2.0]
    """
    buffer = state.buffer + noisy_gains
    remaining = state.remaining - 1
    closing = remaining == 0
    noisy_total = jnp.where(closing, state.noisy_total + buffer, state.noisy_total)
    buffer = jnp.where(closing, jnp.zeros_like(buffer), buffer)
    return state._replace(
        noisy_total=noisy_total, buffer=buffer, remaining=remaining, round=state.round + 1
    )


def absorb_batch(state: AdaBatchState, batch_release: Array, closing: Array) -> AdaBatchState:
    """Fast path: at the batch's last round add the batch's one release to G~ (noisy data only).

    Example:
      >>> s = AdaBatchState(jnp.zeros(2), jnp.ones(2), 0, 2, jnp.asarray(1), 2)
      >>> absorb_batch(s, jnp.array([3.0, 1.0]), jnp.asarray(True)).noisy_total.tolist()
      [3.0, 1.0]
    """
    noisy_total = jnp.where(closing, state.noisy_total + batch_release, state.noisy_total)
    buffer = jnp.where(closing, jnp.zeros_like(state.buffer), state.buffer)
    return state._replace(
        noisy_total=noisy_total,
        buffer=buffer,
        remaining=state.remaining - 1,
        round=state.round + 1,
    )


def release_batch(
    release: Release, key, gain_sum: Array, batch_size: Array, params, num_experts: int
) -> Array:
    """The release of a batch's sum: equal in law to the sum of its B per-round releases.

    ``B * release(key, gain_sum / B, mu, sensitivity / sqrt(B))``: the mean of the batch's
    gains is in [0, 1]^n (the mechanism's domain), its noise sd is (Delta / sqrt B) / mu, so the
    sum gets sqrt(B) Delta / mu = sqrt(B) eta, plus RW-FTPL's walk sqrt(B) sqrt(2) N(0, I) at
    an explicit mu = inf (algorithmic randomness, same key, see
    :func:`~ldpjax.experts.rw_ftpl.perturbed_release`). One n-vector draw.

    Example:
      >>> import jax
      >>> out = release_batch(privatize_gains, jax.random.key(0), jnp.array([2.0, 1.0]), 4,
      ...                     adabatch_params(1.0), 2)
      >>> out.shape
      (2,)
    """
    dtype = gain_sum.dtype
    size = jnp.asarray(batch_size, dtype)
    root = jnp.sqrt(size)
    sens = privacy.resolve_sensitivity(params.sensitivity, num_experts, dtype)
    mean = gain_sum / size
    noisy_mean = release(key, mean, params.mu, sens / root, granularity=None)
    # Algorithmic randomness, not privacy noise: the B-round sum of RW-FTPL's walk at mu = inf.
    walk = privacy.walk_scale(params.mu, dtype) * jax.random.normal(key, mean.shape, dtype)
    return noisy_mean * size + root * walk


def increment_scale(params, num_experts: int, granularity: float | None = None) -> Array:
    """sd of one round's increment of G~: the release's sd, or sqrt 2 at an explicit mu = inf.

    Example:
      >>> float(increment_scale(adabatch_params(2.0), 4))
      1.0
    """
    dtype = jnp.result_type(params.mu, float)
    sens = privacy.resolve_sensitivity(params.sensitivity, num_experts, dtype)
    sd = privacy.release_sd(params.mu, sens, num_experts, granularity)
    return jnp.where(jnp.asarray(params.mu) == jnp.inf, privacy.NONPRIVATE_ETA, sd).astype(dtype)


def _validate(config: AdaBatchConfig):
    def validate(params: AdaBatchParams, inputs) -> None:
        """mu in (0, inf], alpha in (0, inf), sensitivity in (0, inf), gains (T, n) in [0, 1]."""
        privacy.check_budget_params(params, config.num_experts)
        v.check_range("alpha", params.alpha, 0.0, jnp.inf, low_open=True, high_open=True)
        privacy.check_gain_inputs(inputs, config.num_experts)

    return validate


def _event(config: AdaBatchConfig):
    def privacy_event(params: AdaBatchParams):
        """Per record (one round's gain vector): that round's release (mu-GDP)."""
        sens = privacy.resolve_sensitivity(params.sensitivity, config.num_experts)
        return privacy.gain_event(params.mu, sens, config.num_experts, config.granularity)

    return privacy_event


def rw_adabatch(config: AdaBatchConfig, release: Release = privatize_gains) -> Algorithm:
    """RW-AdaBatch as an engine algorithm (cached per config).

    Args:
      config: static :class:`AdaBatchConfig`.
      release: the local randomizer ``(key, gains, mu, sensitivity, *, granularity) -> noisy
        gains`` (keep the default :func:`ldpjax.experts.privatize_gains`; tests swap it to
        hold the noisy data fixed).

    Returns:
      ``Algorithm(init, step, validate, privacy_event)``; ``step(params, state, gains_t, key)``
      returns ``(AdaBatchState, AdaBatchOutputs)``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from ldpjax.engine import rollout, record
      >>> algo = rw_adabatch(AdaBatchConfig(3))
      >>> gains = jnp.tile(jnp.array([1.0, 0.0, 0.0]), (60, 1))
      >>> _, sizes = rollout(algo, adabatch_params(2.0, 0.5), jax.random.key(0), inputs=gains,
      ...                    record=record.every_step(lambda out: out.batch_size))
      >>> sizes.shape, bool(sizes.min() >= 1)
      ((60,), True)
    """
    return _build(config, release)


@functools.cache
def _build(config: AdaBatchConfig, release: Release) -> Algorithm:
    """The cached builder (positional arguments, so every call style hits the same entry)."""
    n, g, fast = config.num_experts, config.granularity, config.uses_fast_path

    def init(params: AdaBatchParams, key) -> AdaBatchState:
        dtype = jnp.result_type(params.mu, float)
        zero = jnp.zeros((n,), dtype)
        count = jnp.zeros((), jnp.int32)
        return AdaBatchState(
            noisy_total=perturbed_release(release, key, zero, params, n, g),  # g~_0 = z_0
            buffer=zero,
            action=count,
            batch_size=count,
            remaining=count,
            round=jnp.ones((), jnp.int32),
        )

    def step(params: AdaBatchParams, state: AdaBatchState, gains, key):
        eta = increment_scale(params, n, g)
        starting = state.remaining == 0
        planned_action, planned_size = plan_batch(
            state.noisy_total, state.round, eta, params.alpha, config.max_batch
        )
        action = jnp.where(starting, planned_action, state.action)
        size = jnp.where(starting, planned_size, state.batch_size)
        state = state._replace(
            action=action, batch_size=size, remaining=jnp.where(starting, size, state.remaining)
        )
        gains = jnp.asarray(gains, state.noisy_total.dtype)
        if fast:
            # Fail closed on traced gains outside [0, 1]: NaN poisons the batch's release.
            in_domain = dom.in_box(gains, *privacy.GAIN_DOMAIN)
            buffer = state.buffer + jnp.where(in_domain, gains, jnp.nan)
            state = state._replace(buffer=buffer)
            closing = state.remaining == 1
            batch_release = jax.lax.cond(
                closing,
                lambda: release_batch(release, key, buffer, size, params, n),
                lambda: jnp.zeros_like(buffer),
            )
            state = absorb_batch(state, batch_release, closing)
        else:
            noisy_gains = perturbed_release(release, key, gains, params, n, g)  # data access
            state = absorb(state, noisy_gains)
        return state, AdaBatchOutputs(
            action=action, gain=gains[action], batch_size=size, batch_start=starting
        )

    # run it with ldpjax.experts.EXPERTS_HINTS (XLA CPU's elemental emitters)
    return Algorithm(init, step, _validate(config), _event(config))


__all__ = [
    "DEFAULT_ALPHA",
    "AdaBatchConfig",
    "AdaBatchOutputs",
    "AdaBatchParams",
    "AdaBatchState",
    "absorb",
    "absorb_batch",
    "adabatch_params",
    "increment_scale",
    "plan_batch",
    "release_batch",
    "rw_adabatch",
]
