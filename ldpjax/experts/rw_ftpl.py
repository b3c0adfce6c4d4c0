"""RW-FTPL (Devroye et al. 2013), which is mu-GLDP as it stands (paper 000, Sec. 3).

Update (spec ``experts.md``). Each round t = 1..T the data holder releases the noisy gain
vector g~_t = g_t + z_t, z_t ~ N(0, eta^2 I_n), and the player plays the leader of the noisy
cumulative gains,

    x_t = argmax_i (G~_{t-1})_i,   G~_t = sum_{s=0}^t g~_s,   g~_0 = z_0 (g_0 = 0),

so G~_{t-1} holds t noise vectors. Regret (paper 000, Sec. 3): E[regret] <= (eta + 2/eta)
sqrt(2 T log n) (:func:`ldpjax.experts.regret_bound_ftpl`).

Privacy. The l2 sensitivity of g_t in [0, 1]^n is sqrt(n), so each release is mu-GDP with
eta = sqrt(n) / mu (``config.sensitivity`` overrides sqrt(n)); mu = inf means no privacy
requirement and uses eta = sqrt 2 (:func:`ldpjax.experts.noise_scale`). Everything else is
post-processing of the releases, so the run is mu-GLDP. This is structural here:

* the step computes the round's release ``noisy_gains = release(key, gains, eta)`` exactly
  once (``release`` is :func:`ldpjax.experts.privatize_gains`);
* the action is :func:`leader` of the state, whose only content is the noisy cumulative
  vector G~_{t-1} (computed before the round's data is touched);
* the state update :func:`accumulate` takes the state and ``noisy_gains`` only;
* the true gains are read once more, after the decision, to report the gain the player
  earned (an output for the experimenter, never fed back into the state).

Keys: ``init`` draws z_0 from its key; step t draws z_t from its key (the engine's
``fold_in(run_key, t)``). RW-AdaBatch (:mod:`ldpjax.experts.rw_adabatch`) uses the very same
keys, so with batches of length 1 it reproduces these actions exactly.

Shapes: n is static (``FTPLConfig``); mu is an array leaf of :class:`FTPLParams`, so a sweep
over mu is a ``vmap`` (``product_grid(ftpl_params(1.0), mu=[...])``) and compiles once.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.engine import Algorithm
from ldpjax.experts.privacy import noise_scale, privatize_gains
from ldpjax.types import Array, ArrayLike

Release = Callable[..., Array]


@dataclasses.dataclass(frozen=True)
class FTPLConfig:
    """Static configuration of RW-FTPL.

    Attributes:
      num_experts: n >= 2 (the width of a gain vector).
      sensitivity: l2 sensitivity of one gain vector; None means sqrt(n) (gains in [0, 1]^n).
    """

    num_experts: int
    sensitivity: float | None = None

    def __post_init__(self):
        v.check_integer("num_experts", self.num_experts, 2)
        v.check_range(
            "sensitivity", self.sensitivity, 0.0, float("inf"), low_open=True, high_open=True
        )


class FTPLParams(NamedTuple):
    """Numeric parameters (array leaves: vmap/grad reach them)."""

    mu: Array  # per-round GDP parameter, in (0, inf]


class FTPLState(NamedTuple):
    """Everything the next round needs: only noisy data."""

    noisy_total: Array  # G~_{t-1}, shape (n,)


class FTPLOutputs(NamedTuple):
    """Per-round diagnostics."""

    action: Array  # int32, the expert played this round
    gain: Array  # the true gain earned, g_t[action]


def ftpl_params(mu: ArrayLike) -> FTPLParams:
    """Validated parameters: mu in (0, inf] (any shape; float)."""
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    return FTPLParams(jnp.asarray(mu, jnp.result_type(float)))


def leader(noisy_total: Array) -> Array:
    """The decision: argmax of the noisy cumulative gains (ties: lowest index), int32."""
    return jnp.argmax(noisy_total, axis=-1).astype(jnp.int32)


def accumulate(state: FTPLState, noisy_gains: Array) -> FTPLState:
    """The update: G~_t = G~_{t-1} + g~_t (reads only the noisy release)."""
    return FTPLState(state.noisy_total + noisy_gains)


def _eta(params, config) -> Array:
    sensitivity = config.sensitivity
    return noise_scale(params.mu, config.num_experts, sensitivity)


def rw_ftpl(config: FTPLConfig, release: Release = privatize_gains) -> Algorithm:
    """RW-FTPL as an engine algorithm (cached: the same object, compiled once, per config).

    Args:
      config: static :class:`FTPLConfig`.
      release: the local randomizer ``(key, gains, eta) -> noisy gains``. Keep the default
        (:func:`ldpjax.experts.privatize_gains`): the privacy claim is about it. Tests swap
        it to hold the noisy data fixed while the true gains change.

    Returns:
      ``Algorithm(init, step)`` with ``init(params, key) -> FTPLState`` (draws z_0) and
      ``step(params, state, gains_t, key) -> (FTPLState, FTPLOutputs)``, where ``gains_t`` is
      the round's (n,) gain vector in [0, 1] (the engine's ``inputs`` row).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from ldpjax.engine import rollout, record
      >>> algo = rw_ftpl(FTPLConfig(num_experts=3))
      >>> gains = jnp.tile(jnp.array([1.0, 0.0, 0.0]), (50, 1))
      >>> _, total = rollout(algo, ftpl_params(jnp.inf), jax.random.key(0), inputs=gains,
      ...                    record=record.total(lambda out: out.gain))
      >>> bool(total > 30)
      True
    """
    return _build(config, release)


@functools.cache
def _build(config: FTPLConfig, release: Release) -> Algorithm:
    """The cached builder (positional arguments, so every call style hits the same entry)."""
    n = config.num_experts

    def init(params: FTPLParams, key) -> FTPLState:
        eta = _eta(params, config)
        zero = jnp.zeros((n,), eta.dtype)
        return FTPLState(noisy_total=release(key, zero, eta))  # g~_0 = 0 + z_0

    def step(params: FTPLParams, state: FTPLState, gains, key):
        eta = _eta(params, config)
        action = leader(state.noisy_total)  # decided from G~_{t-1} before the round's data
        gains = jnp.asarray(gains, eta.dtype)
        noisy_gains = release(key, gains, eta)  # the round's only access to the data
        new_state = accumulate(state, noisy_gains)
        return new_state, FTPLOutputs(action=action, gain=gains[action])

    return Algorithm(init, step)


__all__ = [
    "FTPLConfig",
    "FTPLOutputs",
    "FTPLParams",
    "FTPLState",
    "accumulate",
    "ftpl_params",
    "leader",
    "rw_ftpl",
]
