"""DC (divide and conquer) baseline (paper 001, Sec. 4; spec ``quantile.md``).

Each client runs single-machine randomized-response LDP SGD on its own stream for t_T samples
(the update of :mod:`ldpjax.quantile.mechanism` with its own r_k and the global level tau,
lr_t = c0 / (t^a + b)), with its own Polyak-Ruppert estimate Q^_k and self-normalised V_k
(:mod:`ldpjax.quantile.inference`). One communication at the end averages both:

    Q^_DC = sum_k p_k Q^_k,      V_DC = sum_k p_k V_k,      CI: Q^_DC +- z sqrt(V_DC).

Averaging the variance statistics follows the spec and the authors' code. Q^_k targets the
client's own tau-quantile F_k^{-1}(tau), so Q^_DC estimates sum_k p_k F_k^{-1}(tau), which
differs from Q* when the clients are heterogeneous: its coverage collapses there (the paper's
finding). Under homogeneity the averaged V is conservative (the variance of the average is
about sum_k p_k^2 sigma_k^2 / t_T, not sum_k p_k sigma_k^2 / t_T).

Engine: one step per sample (t_T steps); per-client iterates and statistics in the state.
"""

from __future__ import annotations

import dataclasses
import functools

from ldpjax.engine import Algorithm
from ldpjax.quantile._core import PerClientBudget, _CoreSpec, rounds_algorithm


@dataclasses.dataclass(frozen=True)
class DivideAndConquerConfig(PerClientBudget):
    """Static configuration: ``budget`` = t_T samples per client (integer >= 1)."""


@functools.cache
def divide_and_conquer(config: DivideAndConquerConfig) -> Algorithm:
    """The DC baseline (cached)."""
    if not isinstance(config, DivideAndConquerConfig):
        raise ValueError(f"config must be a DivideAndConquerConfig; got {config!r}")
    return rounds_algorithm(_CoreSpec((1,) * int(config.budget), "rr", aggregate=False))


__all__ = ["DivideAndConquerConfig", "divide_and_conquer"]
