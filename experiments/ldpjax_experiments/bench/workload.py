"""What a bench workload is: its sizes, the context a run gives it, what it prepares, and the
record that names it (:mod:`ldpjax_experiments.bench.workloads` registers the workloads)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax_experiments.bench.rng import available_impls

SIZES = ("tiny", "small", "paper")


# --------------------------------------------------------------------------- plumbing
@dataclasses.dataclass
class Context:
    """How the ldpjax side draws its randomness.

    ``rng`` None: the engine's default (``make_key(seed)``, no ``rng`` argument). A value the
    engine's ``simulate(..., rng=...)`` accepts (``"invariant"``, ``"fast"``, an implementation
    name): passed through. Another key implementation this JAX offers: the key is
    ``jax.random.key(seed, impl=rng)``. Anything else: ValueError.
    ``used_impl`` holds the implementation the last ``simulate`` call ran with.
    """

    rng: str | None = None
    seed: int = 0
    used_impl: str | None = None

    def __post_init__(self):
        from ldpjax.engine.keys import make_key, resolve_rng

        self._pass_through = False
        if self.rng is None:
            return
        try:
            resolve_rng(self.rng, make_key(self.seed))
            self._pass_through = True
            return
        except ValueError:
            pass
        if self.rng not in available_impls():
            raise ValueError(
                "rng must be 'invariant', 'fast' or a key implementation "
                f"{tuple(available_impls())}; got {self.rng!r}"
            )

    def key(self):
        from ldpjax.engine import make_key

        if self.rng is not None and not self._pass_through:
            return jax.random.key(self.seed, impl=self.rng)
        return make_key(self.seed)

    def simulate(self, algorithm, params, num_steps=None, **kwargs):
        """``simulate(...).record`` with ``keep_state=False``, blocked until ready."""
        from ldpjax.engine import simulate

        if self._pass_through:
            kwargs["rng"] = self.rng
        result = simulate(algorithm, params, self.key(), num_steps, keep_state=False, **kwargs)
        self.used_impl = str(result.info.rng)
        return jax.block_until_ready(result.record)


@dataclasses.dataclass(frozen=True)
class Prepared:
    """Both sides of one workload, ready to time.

    Attributes:
      shape: human-readable workload shape.
      statistic: what the per-seed values are.
      run_ldpjax: ``() -> (seeds,)`` per-seed statistic through ldpjax.
      run_numpy: ``(seed) -> ((seeds,) per-seed statistic, info dict)`` through NumPy.
      random_words: ``(numpy info) -> int``, the 32-bit words an exact implementation draws.
      numpy_scale: the baseline's seconds are multiplied by this (it ran a documented share
        ``1 / numpy_scale`` of the replications; 1: all of them).
      baseline: what the NumPy side is: ``"numpy"`` (vectorised over runs,
        :mod:`ldpjax_experiments.bench.numpy_reference`) or ``"authors-loop"`` (a per-sample Python loop,
        :mod:`ldpjax_experiments.bench.authors_loop`), or the peer's name.
      compare: ``(ldpjax values, baseline values, baseline info) -> dict`` for workloads whose
        values are not per-seed draws (the accounting workloads: one bound per budget); its
        dict (``agree`` and extras such as ``bound_gap``, ``agreement``) replaces the runner's
        standard-error check. None: that check.
    """

    shape: str
    statistic: str
    run_ldpjax: Callable[[], np.ndarray]
    run_numpy: Callable[[int], tuple[np.ndarray, dict]]
    random_words: Callable[[dict], float]
    numpy_scale: float = 1.0
    baseline: str = "numpy"
    compare: Callable[[np.ndarray, np.ndarray, dict], dict] | None = None


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    family: str
    description: str
    sizes: dict[str, dict[str, Any]]
    prepare: Callable[[dict[str, Any], Context], Prepared]
    default: bool = True  # part of a plain ``ldpjax bench`` run


def words_per_float() -> int:
    """32-bit random words per uniform/normal at JAX's default float width (1 or 2)."""
    return max(jnp.dtype(jnp.result_type(float)).itemsize // 4, 1)


__all__ = ["SIZES", "Context", "Prepared", "Workload", "words_per_float"]
