"""State, outputs and static configuration shared by every bandit policy (one visitor a step).

The state is an immutable pytree holding only what the next step needs: per segment x arm
counts of shows and clicks (the estimates Q), the per-segment visit counts (segment clocks) and
the global clock. A step outputs the diagnostics: the segment, the greedy and the shown arm,
the click, the expected regret mu*(s) - mu_{A_t}(s), the visitor budget xi_t and the
exploration probability. The realised experiment budget max_t xi_t (parallel composition) is a
reduction of the outputs: record it with :func:`max_spend` (O(1) memory), e.g.
``record.combine(regret=record.total("regret"), spend=bandits.max_spend())``.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import compose_parallel
from ldpjax.engine.record import Recorder
from ldpjax.types import Array

CLOCKS = ("global", "segment")


@dataclasses.dataclass(frozen=True)
class PolicyConfig:
    """Static configuration (shapes and switches) of a bandit policy.

    Attributes:
      num_segments: J >= 1.
      max_arms: number of CTR columns K_max >= 2 (experiments may use fewer: ``num_arms``).
      clock: ``"global"`` (t counts all visitors) or ``"segment"`` (each segment's own visit
        count drives its schedule; the segment-aware strategies of the paper).
      init_steps: uniform-play initialisation period of the dynamic schedules, in clock ticks
        (default: the number of arms K of the run).
      init_constant: give the constant strategy the same ``init_steps`` uniform-play start
        (eps = 1, xi_t = 0: within any budget), so that constant and dynamic runs begin alike.
        Default ``False``: the constant strategy spends xi_t = gamma from the first visitor
        (the paper is silent on its initialisation; the dynamic schedules need one, log 1 = 0).
      replay_segments: take the segment of visitor t from the engine ``inputs`` (data replay)
        instead of drawing it from ``segment_probs``.
      fast: ``True`` (default): the fast exact path, one uniform for the K-RR report (explore?
        which arm? and, from its spare bits, the greedy arm among ties) and one for the click
        (plus one for the segment when segments are drawn); ``False``: the sampling path, one
        draw per random choice (segment, ties, report, click). Equal in distribution
        (``tests/bandits/test_fast_paths.py``).
    """

    num_segments: int = 1
    max_arms: int = 2
    clock: str = "global"
    init_steps: int | None = None
    replay_segments: bool = False
    fast: bool = True
    init_constant: bool = False

    def __post_init__(self):
        check_policy_config(self)
        if not isinstance(self.fast, bool):
            raise TypeError(f"fast must be a bool; got {self.fast!r}")


def check_policy_config(config) -> None:
    """Validation shared by the per-visitor and block policies' static configurations."""
    for name in ("num_segments", "max_arms"):
        value = getattr(config, name)
        if isinstance(value, (bool, str)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be a Python int; got {value!r}")
    v.check_integer("num_segments", config.num_segments, 1)
    v.check_integer("max_arms", config.max_arms, 2)
    if not isinstance(config.clock, str) or config.clock not in CLOCKS:
        raise ValueError(f"clock must be one of {CLOCKS}; got {config.clock!r}")
    if config.init_steps is not None:
        v.check_integer("init_steps", config.init_steps, 1)
    if not isinstance(getattr(config, "init_constant", False), bool):
        raise TypeError(f"init_constant must be a bool; got {config.init_constant!r}")


class BanditState(NamedTuple):
    shows: Array  # (J, K) int32: times arm k was shown in segment s
    clicks: Array  # (J, K) int32: clicks on arm k in segment s
    visits: Array  # (J,) int32: visitors of segment s so far (segment clock)
    t: Array  # () int32: visitors so far (global clock)


class BanditOutputs(NamedTuple):
    segment: Array
    greedy_arm: Array
    arm: Array
    click: Array
    regret: Array
    spend: Array
    explore_prob: Array


def init_state(config: PolicyConfig) -> BanditState:
    shape = (config.num_segments, config.max_arms)
    return BanditState(
        jnp.zeros(shape, jnp.int32),
        jnp.zeros(shape, jnp.int32),
        jnp.zeros((config.num_segments,), jnp.int32),
        jnp.zeros((), jnp.int32),
    )


def segment_of(config: PolicyConfig, segment_probs, inputs, uniform) -> Array:
    """The visitor's segment: replayed from ``inputs``, 0 when J = 1, else drawn by inverse CDF
    of ``segment_probs`` at ``uniform`` (data sampling)."""
    if config.replay_segments:
        return jnp.asarray(inputs, jnp.int32)
    if config.num_segments == 1:
        return jnp.zeros((), jnp.int32)
    probs = jnp.asarray(segment_probs)
    cumulative = jnp.cumsum(probs, axis=-1)
    index = jnp.sum(cumulative <= jnp.asarray(uniform) * cumulative[-1], axis=-1)
    last = probs.shape[-1] - 1 - jnp.argmax(jnp.flip(probs > 0, -1), axis=-1)
    return jnp.minimum(index, last).astype(jnp.int32)


def clock_of(config: PolicyConfig, state: BanditState, segment: Array) -> Array:
    """The 1-based clock of the current visitor (global or within the segment)."""
    if config.clock == "global":
        return state.t + 1
    return state.visits[segment] + 1


def observe(state: BanditState, segment, arm, click) -> BanditState:
    """Record one visitor (its segment, the shown arm and the click)."""
    # one-hot arithmetic instead of scatter: cheaper under vmap for small J x K
    seg_hot = (jnp.arange(state.visits.shape[0]) == segment).astype(jnp.int32)
    cell = seg_hot[:, None] * (jnp.arange(state.shows.shape[1]) == arm).astype(jnp.int32)
    return BanditState(
        state.shows + cell,
        state.clicks + cell * click,
        state.visits + seg_hot,
        state.t + 1,
    )


def estimated_ctr(state: BanditState) -> Array:
    """Q(a, s): click rate of each arm in each segment (0 before the first show)."""
    return state.clicks / jnp.maximum(state.shows, 1).astype(jnp.result_type(float))


def _keep(acc, num_steps):
    return acc


def max_spend(select: str = "spend") -> Recorder:
    """Recorder of the realised experiment budget max_t xi_t (parallel composition, O(1) memory).

    Reduces the per-step output field ``select`` (the visitor budget ``spend`` of every bandit
    policy; the block policy's ``spend`` is the max over its block) by a running max starting
    at 0; NaN (a failed-closed invalid budget) propagates.

    Example:
      >>> from ldpjax import bandits
      >>> from ldpjax.engine import make_key, simulate
      >>> env = bandits.make_environment([0.3, 0.2])
      >>> out = simulate(bandits.epsilon_greedy(bandits.PolicyConfig()),
      ...                bandits.epsilon_greedy_params(env, "constant", 0.5), make_key(0), 8,
      ...                num_seeds=2, record=max_spend())
      >>> out.record.tolist()
      [0.5, 0.5]
    """
    if not isinstance(select, str):
        raise TypeError(f"select must be an output field name; got {select!r}")

    def init(spec, num_steps):
        leaf = getattr(spec, select)
        return jnp.zeros(leaf.shape, leaf.dtype)

    def update(acc, outputs, t, num_steps):
        return compose_parallel(jnp.stack([acc, getattr(outputs, select)]), axis=0)

    return Recorder(init, update, _keep, f"max({select})", ("bandits.max_spend", select))


__all__ = [
    "CLOCKS",
    "BanditOutputs",
    "BanditState",
    "PolicyConfig",
    "clock_of",
    "estimated_ctr",
    "init_state",
    "max_spend",
    "observe",
    "segment_of",
]
