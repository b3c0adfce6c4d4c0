"""What each algorithm contributes to the conformance test (``test_conformance.py``).

Every algorithm of ldpjax registers one or more :class:`ldpjax.testing.ConformanceCase` in a
``cases_*.py`` module of this folder (one per family); :func:`all_cases` collects them. Adding
an algorithm means adding a case here (see CONTRIBUTING.md); the checks themselves are the
library's (``ldpjax.testing``), so a user tests an algorithm of their own the same way.
"""

from __future__ import annotations

import importlib

from ldpjax.testing import ConformanceCase  # the record lives in the library (re-exported here)

__all__ = ["FAMILY_MODULES", "ConformanceCase", "all_cases"]


FAMILY_MODULES = ("cases_experts", "cases_quantile", "cases_bandits", "cases_demo",
                  "cases_frequency")


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
