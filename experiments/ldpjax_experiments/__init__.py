"""Registered experiments and the machinery to run them (``ldpjax list/run/reproduce``).

Every module in this package that defines ``EXPERIMENT`` (or ``EXPERIMENTS``) is registered
when the registry is first used; :func:`register` adds experiments defined elsewhere.

The names below are read from their modules on first use, so that ``import
ldpjax_experiments.cli`` (the ``ldpjax`` console script) reaches its Ctrl-C handler before JAX
is imported.
"""

import importlib
from typing import Any

#: Each public name and the module of this package that defines it.
_HOMES = {
    "Experiment": "base",
    "ExperimentResult": "base",
    "Option": "base",
    "RunContext": "base",
    "floats": "base",
    "get_experiment": "base",
    "ints": "base",
    "list_experiments": "base",
    "load_plugin": "base",
    "register": "base",
    "strs": "base",
    "run_experiment": "runner",
    "Verdict": "verdicts",
    "judge": "verdicts",
    "judge_condition": "verdicts",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))


__all__ = sorted(_HOMES)
