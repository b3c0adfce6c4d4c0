"""Bernoulli bandit environment with visitor segments (Ponte & Ferecatu, "A Privacy
Budgeting Framework for Online Experimentation", 2026, Sec. 3.1).

Visitor t belongs to segment S_t in {0..J-1}, drawn iid with probabilities ``segment_probs``
(or replayed from data: the segment sequence is the engine's time-indexed ``inputs``). Showing
arm k to a visitor of segment s yields a click R_t ~ Bernoulli(mu_k(s)) with the CTR matrix
``ctr`` of shape (J, K). Regret is the expected (pseudo-)regret mu*(s) - mu_{A_t}(s) of the
arm actually shown.

Padding: a CTR matrix may have more columns than the experiment has arms (``num_arms`` <=
columns), so that experiments with different K run in one compiled ``vmap``; padded arms are
never shown and never count as best.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.types import Array, ArrayLike, PRNGKey


class Environment(NamedTuple):
    """A validated environment: CTRs (J, K_max), segment probabilities (J,), arms in use."""

    ctr: Array
    segment_probs: Array
    num_arms: Array


def make_environment(
    ctr: ArrayLike, segment_probs: ArrayLike | None = None, num_arms: int | None = None
) -> Environment:
    """Validate and pack an environment.

    Args:
      ctr: click-through rates in [0, 1]; shape (K,) for one segment or (J, K).
      segment_probs: probabilities of the J segments (default uniform); must sum to 1.
      num_arms: arms in use (default K, the number of columns); the other columns are padding.

    Raises:
      ValueError naming the argument when CTRs leave [0, 1], K < 2, J < 1, or the segment
      probabilities are not a probability vector of length J; TypeError for non-numeric input.

    Example:
      >>> env = make_environment([0.324, 0.295])
      >>> env.ctr.shape, int(env.num_arms)
      ((1, 2), 2)
    """
    ctr_np = _numeric("ctr", ctr).astype(np.float64)
    if ctr_np.ndim == 1:
        ctr_np = ctr_np[None, :]
    if ctr_np.ndim != 2:
        raise ValueError(f"ctr must have shape (K,) or (J, K); got shape {ctr_np.shape}")
    num_segments, columns = ctr_np.shape
    if num_segments < 1:
        raise ValueError("ctr must have J >= 1 segments (rows); got 0")
    if columns < 2:
        raise ValueError(f"ctr must have K >= 2 arms (columns); got {columns}")
    k = columns if num_arms is None else num_arms
    if np.ndim(k) != 0:
        raise ValueError(f"num_arms must be a scalar integer; got shape {np.shape(k)}")
    v.check_integer("num_arms", k, 2, columns)
    v.check_range("ctr", ctr_np[:, : int(k)], 0.0, 1.0)
    if segment_probs is None:
        probs = np.full(num_segments, 1.0 / num_segments)
    else:
        probs = _numeric("segment_probs", segment_probs).astype(np.float64)
        if probs.shape != (num_segments,):
            raise ValueError(
                f"segment_probs must have shape ({num_segments},) (one per ctr row); "
                f"got {probs.shape}"
            )
        v.check_sums_to_one("segment_probs", probs)
    padded = np.where(np.arange(columns) < k, np.nan_to_num(ctr_np), 0.0)
    dtype = jnp.result_type(float)
    return Environment(jnp.asarray(padded, dtype), jnp.asarray(probs, dtype),
                       jnp.asarray(k, jnp.int32))


def _numeric(name: str, value) -> np.ndarray:
    """A concrete numeric array (TypeError for strings, objects, keys, None)."""
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers; got {value!r}")
    try:
        arr = np.asarray(value)
    except Exception as err:  # ragged nesting and other non-arrays
        raise TypeError(f"{name} must be an array of numbers; got {value!r}") from err
    if arr.dtype.kind not in "biuf" or jax.dtypes.issubdtype(arr.dtype, jax.dtypes.prng_key):
        raise TypeError(f"{name} must be an array of numbers; got dtype {arr.dtype}")
    return arr


def check_env_leaves(ctr, segment_probs, num_arms, num_segments: int, max_arms: int) -> None:
    """Validate the environment leaves of a (possibly stacked) params pytree against a config.

    Concrete leaves only (traced ones are skipped): ``ctr`` (..., J, K_max) with the arms in
    use in [0, 1], ``segment_probs`` (..., J) a probability vector, ``num_arms`` integers in
    [2, K_max]. Shape mismatches with the config's J and K_max raise ``ValueError`` naming the
    leaf.
    """
    if not v.is_concrete((ctr, segment_probs, num_arms)):
        return
    ctr_np = _numeric("ctr", ctr)
    probs = _numeric("segment_probs", segment_probs)
    arms = _numeric("num_arms", num_arms)
    if ctr_np.ndim < 2 or ctr_np.shape[-2:] != (num_segments, max_arms):
        raise ValueError(
            f"ctr must have trailing shape (num_segments, max_arms) = ({num_segments}, "
            f"{max_arms}) of the policy config; got shape {ctr_np.shape}"
        )
    if probs.ndim < 1 or probs.shape[-1] != num_segments:
        raise ValueError(
            f"segment_probs must have trailing length num_segments = {num_segments}; "
            f"got shape {probs.shape}"
        )
    v.check_integer("num_arms", arms, 2, max_arms)
    in_use = np.arange(max_arms) < arms.astype(np.int64)[..., None, None]
    v.check_range("ctr", np.where(in_use, ctr_np, 0.5), 0.0, 1.0)
    v.check_sums_to_one("segment_probs", probs)


def check_segment_inputs(inputs, num_segments: int, replay: bool) -> None:
    """Replayed segments: a 1-d integer array (time axis) of segments in [0, J)."""
    if not replay:
        if inputs is not None:
            raise ValueError(
                "inputs must be None unless the config sets replay_segments=True (the policy "
                "would ignore them)"
            )
        return
    if inputs is None:
        raise ValueError("inputs must be the replayed segments (replay_segments=True); got None")
    if not v.is_concrete(inputs):
        return
    arr = _numeric("inputs", inputs)
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"inputs (replayed segments) must be a non-empty 1-d array; got shape "
                         f"{arr.shape}")
    v.check_integer("inputs", arr, 0, num_segments - 1)


def validate_horizon(T) -> int:
    """T must be an integer >= 1."""
    v.check_integer("T", T, 1)
    return int(T)


def arm_mask(num_arms: ArrayLike, max_arms: int) -> Array:
    """Boolean mask of the arms in use."""
    return jnp.arange(max_arms) < jnp.asarray(num_arms)[..., None]


def best_ctr(ctr: ArrayLike, num_arms: ArrayLike) -> Array:
    """mu*(s): the best CTR of every segment over the arms in use, shape (J,)."""
    ctr = jnp.asarray(ctr)
    mask = arm_mask(num_arms, ctr.shape[-1])
    return jnp.max(jnp.where(mask, ctr, -jnp.inf), axis=-1)


def ctr_ok(ctr: ArrayLike, num_arms: ArrayLike) -> Array:
    """True when every CTR of the arms in use is in [0, 1] (NaN fails): the traced check."""
    ctr = jnp.asarray(ctr)
    mask = arm_mask(num_arms, ctr.shape[-1])
    return jnp.all(jnp.where(mask, (ctr >= 0) & (ctr <= 1), True))


def best_arm(ctr: ArrayLike, num_arms: ArrayLike) -> Array:
    """The best arm of every segment (lowest index among ties), shape (J,)."""
    ctr = jnp.asarray(ctr)
    mask = arm_mask(num_arms, ctr.shape[-1])
    return jnp.argmax(jnp.where(mask, ctr, -jnp.inf), axis=-1)


def sample_segment(key: PRNGKey, segment_probs: ArrayLike) -> Array:
    """One segment index drawn with the given probabilities (0 when J = 1)."""
    probs = jnp.asarray(segment_probs)
    if probs.shape[-1] == 1:
        return jnp.zeros((), jnp.int32)
    # data sampling (the environment's visitor stream), not privacy noise
    return jax.random.categorical(key, jnp.log(probs)).astype(jnp.int32)


def sample_click(key: PRNGKey, ctr: ArrayLike, segment: ArrayLike, arm: ArrayLike) -> Array:
    """A Bernoulli(mu_arm(segment)) click as int32."""
    rate = jnp.asarray(ctr)[segment, arm]
    # data sampling (the visitor's response), not privacy noise
    return jax.random.bernoulli(key, rate).astype(jnp.int32)


def inverse_cdf(weights: ArrayLike, uniform: ArrayLike) -> Array:
    """Index i with cum_{i-1} <= u * total < cum_i (zero-weight entries are never picked)."""
    weights = jnp.asarray(weights)
    cumulative = jnp.cumsum(weights, axis=-1)
    target = jnp.asarray(uniform)[..., None] * cumulative[..., -1:]
    index = count_true(cumulative <= target)
    last = weights.shape[-1] - 1 - jnp.argmax(jnp.flip(weights > 0, -1), axis=-1)
    return jnp.minimum(index, last).astype(jnp.int32)


#: Up to this many arms (a static shape), reductions over the arm axis are unrolled into
#: elementwise operations: one fused loop per step on CPU instead of a reduction kernel each.
UNROLL_ARMS = 8


def count_true(flags: ArrayLike) -> Array:
    """Number of true entries on the last axis (int32), unrolled for few arms (exact)."""
    flags = jnp.asarray(flags)
    if flags.shape[-1] > UNROLL_ARMS:
        return jnp.sum(flags, axis=-1, dtype=jnp.int32)
    columns = [flags[..., j].astype(jnp.int32) for j in range(flags.shape[-1])]
    return functools.reduce(jnp.add, columns)


def argmax_random_ties(values: ArrayLike, mask: ArrayLike, noise: ArrayLike) -> Array:
    """argmax over the masked entries, ties broken by the given uniform ``noise``."""
    values = jnp.where(mask, values, -jnp.inf)
    top = values == jnp.max(values, axis=-1, keepdims=True)
    return jnp.argmax(jnp.where(top & mask, noise, -1.0), axis=-1).astype(jnp.int32)


def random_tie_argmax(key: PRNGKey, values: ArrayLike, mask: ArrayLike) -> Array:
    """argmax over the masked entries, ties broken uniformly at random."""
    # algorithm randomness (which of the tied greedy arms), not privacy noise
    return argmax_random_ties(values, mask, jax.random.uniform(key, jnp.shape(values)))


def pick_tied_max(values: ArrayLike, mask: ArrayLike, uniform: ArrayLike) -> Array:
    """argmax over the masked entries; among m tied maxima the floor(m u)-th (one uniform u).

    Uniform over the ties when u is uniform on [0, 1) (the fast path's spare uniform). With
    few arms (``UNROLL_ARMS``) the reductions over arms are unrolled (the same integers).
    """
    values = jnp.where(mask, values, -jnp.inf)
    if values.shape[-1] > UNROLL_ARMS:
        top = mask & (values == jnp.max(values, axis=-1, keepdims=True))
        count = jnp.sum(top, axis=-1)
        rank = jnp.cumsum(top, axis=-1) - 1
        target = _tie_rank(uniform, count)
        return jnp.argmax(top & (rank == target[..., None]), axis=-1).astype(jnp.int32)
    columns = [values[..., j] for j in range(values.shape[-1])]
    best = functools.reduce(jnp.maximum, columns)
    top = [mask[..., j] & (column == best) for j, column in enumerate(columns)]
    target = _tie_rank(uniform, count_true(jnp.stack(top, -1)))
    # the first arm whose rank among the tied maxima is the target (0 if none, as argmax)
    arm, rank = jnp.zeros(target.shape, jnp.int32), jnp.zeros(target.shape, jnp.int32)
    for j, tied in enumerate(top):
        arm = jnp.where(tied & (rank == target), j, arm)
        rank = rank + tied.astype(jnp.int32)
    return arm


def _tie_rank(uniform, count):
    """min(floor(count u), count - 1): the rank of the tie that uniform u picks."""
    u = jnp.asarray(uniform)
    count = jnp.asarray(count, jnp.int32)
    return jnp.minimum(jnp.floor(u * count.astype(u.dtype)).astype(jnp.int32), count - 1)


__all__ = [
    "Environment",
    "argmax_random_ties",
    "arm_mask",
    "best_arm",
    "best_ctr",
    "check_env_leaves",
    "check_segment_inputs",
    "count_true",
    "ctr_ok",
    "inverse_cdf",
    "make_environment",
    "pick_tied_max",
    "random_tie_argmax",
    "sample_click",
    "sample_segment",
    "validate_horizon",
]
