"""Running expert algorithms on a gain matrix and measuring their static regret.

* :func:`simulate_on_gains`: validates a (T, n) gain matrix (every entry in [0, 1]: the
  sqrt(n) sensitivity and with it the privacy claim rest on that) and runs an algorithm on it
  through :func:`ldpjax.engine.simulate` (the matrix is the engine's ``inputs``: the same
  oblivious sequence for every seed and grid point), with :data:`EXPERTS_HINTS` unless told
  otherwise.
* :data:`EXPERTS_HINTS`: how to execute the family's algorithms (RW-FTPL, RW-AdaBatch,
  RW-Meta, A&S) on the engine.
* :func:`best_in_hindsight`: max_i sum_{s <= t} g_{s,i} at chosen horizons t.
* :func:`static_regret`: best-in-hindsight total minus the total the player earned,
  regret_t = max_i G_{t,i} - sum_{s <= t} <x_s, g_s> ("Prediction with Expert Advice
  under Local Differential Privacy", ICLR 2026, Sec. 2).
"""

from __future__ import annotations

from collections.abc import Sequence

import jax.numpy as jnp
import numpy as np

from ldpjax.engine import ELEMENTAL_EMITTERS, Algorithm, ExecutionHints, SimulationResult, simulate
from ldpjax.experts.gains import validate_gains
from ldpjax.types import Array, ArrayLike, PRNGKey, PyTree

#: The execution hints of the experts family (``simulate(..., hints=EXPERTS_HINTS)`` for
#: :func:`~ldpjax.experts.rw_ftpl`, :func:`~ldpjax.experts.rw_adabatch`,
#: :func:`~ldpjax.experts.rw_meta_algorithm` and :func:`~ldpjax.experts.tree_hedge`): XLA CPU's
#: elemental emitters compile their kernels faster at the same speed (measured in
#: ``docs/pages/engine.md``, "Compile options"); records can differ in the last bits, not in law.
EXPERTS_HINTS = ExecutionHints(cpu_compiler_options=ELEMENTAL_EMITTERS)


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
      **kwargs: forwarded to ``simulate`` (``num_seeds``, ``record``, ``grid_ndim``, ...);
        ``hints`` defaults to :data:`EXPERTS_HINTS`.

    Example:
      >>> import jax
      >>> from ldpjax import experts
      >>> from ldpjax.engine import make_key
      >>> gains = experts.bernoulli_gains(jax.random.key(1), 50, 3, gap=0.2)
      >>> out = simulate_on_gains(experts.rw_ftpl(experts.FTPLConfig(3)), experts.ftpl_params(1.0),
      ...                         make_key(0), gains, num_seeds=2)
      >>> out.record.action.shape
      (2,)
    """
    gains = validate_gains(gains)
    kwargs.setdefault("hints", EXPERTS_HINTS)
    return simulate(algorithm, params, key, gains.shape[0], inputs=gains, **kwargs)


__all__ = ["EXPERTS_HINTS", "best_in_hindsight", "simulate_on_gains", "static_regret"]
