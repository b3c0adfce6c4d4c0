"""Running expert algorithms on a gain matrix and measuring their static regret.

* :func:`simulate_on_gains`: validates a (T, n) gain matrix (every entry in [0, 1]: the
  sqrt(n) sensitivity and with it the privacy claim rest on that) and runs an algorithm on it
  through :func:`ldpjax.engine.simulate` (the matrix is the engine's ``inputs``: the same
  oblivious sequence for every seed and grid point).
* :func:`best_in_hindsight`: max_i sum_{s <= t} g_{s,i} at chosen horizons t.
* :func:`static_regret`: best-in-hindsight total minus the total the player earned,
  regret_t = max_i G_{t,i} - sum_{s <= t} <x_s, g_s> (paper 000, Sec. 2).
"""

from __future__ import annotations

from collections.abc import Sequence

import jax.numpy as jnp
import numpy as np

from ldpjax.engine import Algorithm, SimulationResult, simulate
from ldpjax.experts.gains import validate_gains
from ldpjax.types import Array, ArrayLike, PRNGKey, PyTree


def _steps(steps: Sequence[int] | None, num_rounds: int) -> np.ndarray:
    if steps is None:
        return np.asarray([num_rounds])
    arr = np.asarray(steps, np.int64)
    if arr.ndim != 1 or arr.size == 0 or np.any(arr < 1) or np.any(arr > num_rounds):
        raise ValueError(
            f"steps must be a 1-d sequence of integers in [1, {num_rounds}]; got {steps}"
        )
    return arr


def best_in_hindsight(gains: ArrayLike, steps: Sequence[int] | None = None) -> Array:
    """The best single expert's total gain after each of ``steps`` rounds.

    Args:
      gains: (T, n) gains in [0, 1] (validated).
      steps: horizons t in [1, T] (default: [T]).

    Returns:
      (len(steps),) array of max_i sum_{s <= t} g_{s,i}.
    """
    gains = validate_gains(gains)
    steps_np = _steps(steps, gains.shape[0])
    totals = jnp.cumsum(gains, axis=0)[jnp.asarray(steps_np - 1)]
    return jnp.max(totals, axis=-1)


def static_regret(gains: ArrayLike, earned: ArrayLike, steps: Sequence[int] | None = None) -> Array:
    """Static regret best_in_hindsight(gains, steps) - earned.

    Args:
      gains: (T, n) gains in [0, 1].
      earned: the player's cumulative gain after each of ``steps`` rounds, shape
        (..., len(steps)) (e.g. ``record.at_steps(steps, lambda o: o.gain, cumulative=True)``).
      steps: horizons (default [T]; then ``earned`` may also be (...,)).
    """
    best = best_in_hindsight(gains, steps)
    earned = jnp.asarray(earned)
    if steps is None and (earned.ndim == 0 or earned.shape[-1] != 1):
        return best[0] - earned
    return best - earned


def simulate_on_gains(
    algorithm: Algorithm, params: PyTree, key: PRNGKey, gains: ArrayLike, **kwargs
) -> SimulationResult:
    """Validate ``gains`` and run ``algorithm`` on them with :func:`ldpjax.engine.simulate`.

    Args:
      algorithm: e.g. ``rw_ftpl(FTPLConfig(n))`` or ``rw_adabatch(AdaBatchConfig(n))``.
      params: its parameters (with ``grid_ndim`` leading grid axes if given in ``kwargs``).
      key: PRNG key.
      gains: (T, n) array, every entry in [0, 1]; ``ValueError`` otherwise.
      **kwargs: forwarded to ``simulate`` (``num_seeds``, ``record``, ``grid_ndim``, ...).
    """
    gains = validate_gains(gains)
    return simulate(algorithm, params, key, gains.shape[0], inputs=gains, **kwargs)


__all__ = ["best_in_hindsight", "simulate_on_gains", "static_regret"]
