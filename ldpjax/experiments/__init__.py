"""Registered experiments and the machinery to run them (``ldpjax list/run/reproduce``).

Every module in this package that defines ``EXPERIMENT`` (or ``EXPERIMENTS``) is registered
when the registry is first used; :func:`register` adds experiments defined elsewhere.
"""

from ldpjax.experiments.base import Experiment
from ldpjax.experiments.base import ExperimentResult
from ldpjax.experiments.base import Option
from ldpjax.experiments.base import RunContext
from ldpjax.experiments.base import floats
from ldpjax.experiments.base import get_experiment
from ldpjax.experiments.base import ints
from ldpjax.experiments.base import list_experiments
from ldpjax.experiments.base import load_plugin
from ldpjax.experiments.base import register
from ldpjax.experiments.base import strs
from ldpjax.experiments.runner import run_experiment
from ldpjax.experiments.verdicts import Verdict
from ldpjax.experiments.verdicts import judge
from ldpjax.experiments.verdicts import judge_condition

__all__ = [
    "Experiment",
    "ExperimentResult",
    "Option",
    "RunContext",
    "Verdict",
    "floats",
    "get_experiment",
    "ints",
    "judge",
    "judge_condition",
    "list_experiments",
    "load_plugin",
    "register",
    "run_experiment",
    "strs",
]
