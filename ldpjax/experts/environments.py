"""Synthetic gain sequences for prediction with expert advice (the static and dynamic
settings of "Prediction with Expert Advice under Local Differential Privacy", ICLR 2026), as
pure JAX functions of an explicit key.

Every generator returns a (T, n) array of gains in [0, 1] (float32, or float64 under x64), the
``inputs`` the engine feeds to :mod:`~ldpjax.experts.rw_ftpl` and
:mod:`~ldpjax.experts.rw_adabatch` one row per round (the same oblivious sequence for every
seed: regret is then the expectation over the algorithm's own noise, as in the bounds).
Shapes (``num_rounds``, ``num_experts``) and the best expert's index are static Python ints;
the numbers (``gap``, ``base``, ``switch_prob``) may be arrays, so the generators ``jit`` and
``vmap`` over them.

* :func:`bernoulli_gains`: iid Bernoulli gains; expert ``best`` has mean ``base + gap``, every
  other expert mean ``base``. ``gap = 0`` is a stochastic all-tied environment.
* :func:`uniform_gains`: iid uniform gains; expert ``best`` is U[gap, 1], the others
  U[0, 1 - gap] (means differ by ``gap``).
* :func:`equal_gains`: the worst case for amplification (the paper's Theorem 2): every expert
  gets the same gain each round (a Bernoulli(``base``) draw shared by all experts), so the
  true cumulative gains stay tied and the noisy gap is the gap of the pure noise walk.
* :func:`switching_gains`: Bernoulli gains whose best expert changes at random times: each
  round, with probability ``switch_prob``, a new best expert is drawn uniformly among the
  others (:func:`switching_best` gives that path for the same key).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.types import Array, ArrayLike, PRNGKey


def _check_shape(num_rounds: int, num_experts: int) -> None:
    v.check_integer("num_rounds", num_rounds, 1)
    v.check_integer("num_experts", num_experts, 2)


def _float_dtype():
    return jnp.result_type(float)


#: The 0/1 environments (Bernoulli, switching, equal) draw float32 uniforms against float32
#: means in both precision modes, so a key gives the same gains matrix with ``jax_enable_x64``
#: on or off (returned in the default float dtype). ``uniform_gains`` draws in the default dtype.
_DRAW = jnp.float32


def _bernoulli(key: PRNGKey, means: Array, shape: tuple[int, int]) -> Array:
    draws = jax.random.uniform(key, shape, _DRAW)
    return (draws < jnp.asarray(means, _DRAW)).astype(_float_dtype())


def _check_means(base: ArrayLike, gap: ArrayLike) -> None:
    v.check_range("base", base, 0.0, 1.0)
    v.check_range("gap", gap, 0.0, 1.0)
    if v.is_concrete((base, gap)):
        v.check(
            "base + gap",
            jnp.asarray(base) + jnp.asarray(gap),
            lambda x: x <= 1.0 + 1e-12,
            "<= 1 (the best expert's mean must be a probability)",
        )


def _best_mask(best: int, num_experts: int) -> Array:
    v.check_integer("best", best, 0, num_experts - 1)
    return jnp.arange(num_experts) == best


def bernoulli_gains(
    key: PRNGKey,
    num_rounds: int,
    num_experts: int,
    gap: ArrayLike,
    base: ArrayLike = 0.5,
    best: int = 0,
) -> Array:
    """iid Bernoulli gains with one best expert (mean ``base + gap``; others ``base``).

    Args:
      key: PRNG key.
      num_rounds: T (static).
      num_experts: n >= 2 (static).
      gap: the best expert's mean advantage, in [0, 1] with base + gap <= 1.
      base: the other experts' mean, in [0, 1].
      best: index of the best expert (static).

    Returns:
      (T, n) array of 0/1 gains (floating dtype).

    Example:
      >>> import jax
      >>> g = bernoulli_gains(jax.random.key(0), 5, 3, 0.2)
      >>> g.shape, bool(((g == 0) | (g == 1)).all())
      ((5, 3), True)
    """
    _check_shape(num_rounds, num_experts)
    _check_means(base, gap)
    means = jnp.where(_best_mask(best, num_experts), jnp.asarray(base, _DRAW) + gap, base)
    return _bernoulli(key, means, (num_rounds, num_experts))


def uniform_gains(
    key: PRNGKey, num_rounds: int, num_experts: int, gap: ArrayLike, best: int = 0
) -> Array:
    """iid uniform gains: expert ``best`` is U[gap, 1], every other expert U[0, 1 - gap].

    Args:
      key: PRNG key.
      num_rounds, num_experts: static shape (T, n).
      gap: mean advantage of the best expert, in [0, 1].
      best: index of the best expert (static).

    Example:
      >>> import jax
      >>> g = uniform_gains(jax.random.key(0), 4, 3, 0.1)
      >>> bool(((g >= 0) & (g <= 1)).all())
      True
    """
    _check_shape(num_rounds, num_experts)
    v.check_range("gap", gap, 0.0, 1.0)
    dtype = _float_dtype()
    gap = jnp.asarray(gap, dtype)
    u = jax.random.uniform(key, (num_rounds, num_experts), dtype)
    # Convex combinations keep the results inside [0, 1] exactly.
    return jnp.where(_best_mask(best, num_experts), gap + (1.0 - gap) * u, (1.0 - gap) * u)


def equal_gains(key: PRNGKey, num_rounds: int, num_experts: int, base: ArrayLike = 0.5) -> Array:
    """All experts tied every round (the amplification worst case, the paper's Theorem 2).

    Each round one Bernoulli(``base``) draw is shared by all experts, so the true cumulative
    gains never separate: only the privacy noise moves the leader.

    Args:
      key: PRNG key.
      num_rounds, num_experts: static shape (T, n).
      base: probability that a round's common gain is 1, in [0, 1].

    Example:
      >>> import jax
      >>> g = equal_gains(jax.random.key(0), 4, 3)
      >>> bool((g == g[:, :1]).all())  # all experts tied in every round
      True
    """
    _check_shape(num_rounds, num_experts)
    v.check_range("base", base, 0.0, 1.0)
    common = _bernoulli(key, base, (num_rounds, 1))
    return jnp.broadcast_to(common, (num_rounds, num_experts))


def switching_best(
    key: PRNGKey, num_rounds: int, num_experts: int, switch_prob: ArrayLike
) -> Array:
    """The best-expert path of :func:`switching_gains` (int32, length T).

    Round 0's best expert is uniform; at every later round, with probability ``switch_prob``,
    it jumps to an expert drawn uniformly among the n - 1 others. ``key`` is the *schedule*
    key: ``switching_gains(key, ...)`` uses ``jax.random.split(key)[0]`` for it.

    Example:
      >>> import jax
      >>> switching_best(jax.random.key(0), 6, 3, 0.5).shape
      (6,)
    """
    _check_shape(num_rounds, num_experts)
    v.check_range("switch_prob", switch_prob, 0.0, 1.0)
    first_key, switch_key, jump_key = jax.random.split(key, 3)
    # 32-bit draws in both precision modes: the same key gives the same path with x64 on or off
    first = jax.random.randint(first_key, (), 0, num_experts, jnp.int32)
    switches = jax.random.uniform(switch_key, (num_rounds,), _DRAW) < jnp.asarray(switch_prob, _DRAW)
    jumps = jax.random.randint(jump_key, (num_rounds,), 1, num_experts, jnp.int32)

    def advance(best, scanned):
        switch, jump = scanned
        best = jnp.where(switch, (best + jump) % num_experts, best)
        return best, best

    _, path = jax.lax.scan(advance, first, (switches.at[0].set(False), jumps))
    return path.astype(jnp.int32)


def switching_gains(
    key: PRNGKey,
    num_rounds: int,
    num_experts: int,
    gap: ArrayLike,
    switch_prob: ArrayLike,
    base: ArrayLike = 0.5,
) -> Array:
    """Bernoulli gains whose best expert (mean ``base + gap``) changes at random times.

    Args:
      key: PRNG key; ``schedule_key, gain_key = jax.random.split(key)``, and the best-expert
        path is ``switching_best(schedule_key, ...)``.
      num_rounds, num_experts: static shape (T, n).
      gap: advantage of the current best expert, in [0, 1] with base + gap <= 1.
      switch_prob: per-round probability that the best expert changes, in [0, 1].
      base: mean of the other experts, in [0, 1].

    Example:
      >>> import jax
      >>> switching_gains(jax.random.key(0), 6, 3, 0.2, 0.1).shape
      (6, 3)
    """
    _check_shape(num_rounds, num_experts)
    _check_means(base, gap)
    v.check_range("switch_prob", switch_prob, 0.0, 1.0)
    schedule_key, gain_key = jax.random.split(key)
    best = switching_best(schedule_key, num_rounds, num_experts, switch_prob)
    is_best = jnp.arange(num_experts)[None, :] == best[:, None]
    means = jnp.where(is_best, jnp.asarray(base, _DRAW) + gap, base)
    return _bernoulli(gain_key, means, (num_rounds, num_experts))


__all__ = [
    "bernoulli_gains",
    "equal_gains",
    "switching_best",
    "switching_gains",
    "uniform_gains",
]
