"""What each algorithm contributes to the conformance test (``test_conformance.py``).

Every algorithm of ldpjax registers one or more :class:`ConformanceCase` in a ``cases_*.py``
module of this folder (one per family); :func:`all_cases` collects them. Adding an algorithm
means adding a case here (see CONTRIBUTING.md).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any

from ldpjax.engine import Algorithm


@dataclasses.dataclass(frozen=True)
class ConformanceCase:
    """One algorithm at a small size.

    Attributes:
      name: unique id, e.g. ``"experts/rw_ftpl"``.
      algorithm: the built :class:`~ldpjax.engine.Algorithm` (must set ``validate`` and, when it
        releases anything private, ``privacy_event``).
      make_params: ``budget -> params``: the params pytree at one privacy budget (a scalar array:
        mu, r, xi, ... as the algorithm names it); must be traceable (used under vmap/grad).
      budgets: two valid budget values; the test also uses two other sweeps built from them.
      invalid_budgets: concrete values that must raise ``ValueError`` from ``validate`` and, when
        traced, must fail closed (see ``is_closed``).
      num_steps: horizon of the small run.
      inputs: time-indexed inputs (leading axis >= num_steps) or None.
      bad_inputs: optional inputs outside the privacy domain (e.g. gains outside [0, 1]) that
        ``validate`` must reject with ``ValueError``; None if the algorithm takes no inputs.
      scalar: ``(final_state, stacked_outputs) -> scalar`` used for ``jax.grad`` w.r.t. the budget
        and finiteness checks.
      differentiable: whether ``jax.grad(scalar)`` w.r.t. the budget must be finite.
      is_closed: ``(final_state, stacked_outputs) -> bool array``: True when a run whose budget was
        a traced invalid value failed closed (NaN release / fully random reports), i.e. nothing
        unperturbed came out.
    """

    name: str
    algorithm: Algorithm
    make_params: Callable[[Any], Any]
    budgets: tuple[float, float]
    invalid_budgets: tuple[float, ...]
    num_steps: int
    scalar: Callable[[Any, Any], Any]
    is_closed: Callable[[Any, Any], Any]
    inputs: Any = None
    bad_inputs: Any = None
    differentiable: bool = True


FAMILY_MODULES = ("cases_experts", "cases_quantile", "cases_bandits", "cases_demo")


def all_cases() -> list[ConformanceCase]:
    cases: list[ConformanceCase] = []
    for module in FAMILY_MODULES:
        try:
            mod = importlib.import_module(f"tests.conformance.{module}")
        except ModuleNotFoundError as err:
            if err.name == f"tests.conformance.{module}":
                continue
            raise
        cases.extend(mod.cases())
    return cases
