"""State, outputs and static configuration shared by every bandit policy (one visitor a step).

The state is an immutable pytree: per segment x arm counts of shows and clicks, the per-segment
visit counts (segment clocks), the global clock and the running parallel composition
max_t xi_t of the visitor budgets spent so far (the experiment budget actually used, O(1)
memory). A step outputs the segment, the greedy and the shown arm, the click, the expected
regret mu*(s) - mu_{A_t}(s), the visitor budget xi_t and the exploration probability.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting import compose_parallel
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
      replay_segments: take the segment of visitor t from the engine ``inputs`` (data replay)
        instead of drawing it from ``segment_probs``.
    """

    num_segments: int = 1
    max_arms: int = 2
    clock: str = "global"
    init_steps: int | None = None
    replay_segments: bool = False

    def __post_init__(self):
        check_policy_config(self)


def check_policy_config(config) -> None:
    """Validation shared by the per-visitor and block policies' static configurations."""
    v.check_integer("num_segments", config.num_segments, 1)
    v.check_integer("max_arms", config.max_arms, 2)
    if config.clock not in CLOCKS:
        raise ValueError(f"clock must be one of {CLOCKS}; got {config.clock!r}")
    if config.init_steps is not None:
        v.check_integer("init_steps", config.init_steps, 1)


class BanditState(NamedTuple):
    shows: Array  # (J, K) int32: times arm k was shown in segment s
    clicks: Array  # (J, K) int32: clicks on arm k in segment s
    visits: Array  # (J,) int32: visitors of segment s so far (segment clock)
    t: Array  # () int32: visitors so far (global clock)
    max_spend: Array  # () float: max_t xi_t so far (parallel composition)


class BanditOutputs(NamedTuple):
    segment: Array
    greedy_arm: Array
    arm: Array
    click: Array
    regret: Array
    spend: Array
    explore_prob: Array


def init_state(config: PolicyConfig, dtype=None) -> BanditState:
    dtype = jnp.result_type(float) if dtype is None else dtype
    shape = (config.num_segments, config.max_arms)
    return BanditState(
        jnp.zeros(shape, jnp.int32),
        jnp.zeros(shape, jnp.int32),
        jnp.zeros((config.num_segments,), jnp.int32),
        jnp.zeros((), jnp.int32),
        jnp.zeros((), dtype),
    )


def clock_of(config: PolicyConfig, state: BanditState, segment: Array) -> Array:
    """The 1-based clock of the current visitor (global or within the segment)."""
    if config.clock == "global":
        return state.t + 1
    return state.visits[segment] + 1


def observe(state: BanditState, segment, arm, click, spend) -> BanditState:
    """Record one visitor; the experiment budget is updated by parallel composition."""
    spend = jnp.asarray(spend, state.max_spend.dtype)
    # one-hot arithmetic instead of scatter: cheaper under vmap for small J x K
    seg_hot = (jnp.arange(state.visits.shape[0]) == segment).astype(jnp.int32)
    cell = seg_hot[:, None] * (jnp.arange(state.shows.shape[1]) == arm).astype(jnp.int32)
    return BanditState(
        state.shows + cell,
        state.clicks + cell * click,
        state.visits + seg_hot,
        state.t + 1,
        compose_parallel(jnp.stack([state.max_spend, spend])),
    )


def estimated_ctr(state: BanditState) -> Array:
    """Q(a, s): click rate of each arm in each segment (0 before the first show)."""
    return state.clicks / jnp.maximum(state.shows, 1).astype(jnp.result_type(float))


__all__ = [
    "CLOCKS",
    "BanditOutputs",
    "BanditState",
    "PolicyConfig",
    "clock_of",
    "estimated_ctr",
    "init_state",
    "observe",
]
