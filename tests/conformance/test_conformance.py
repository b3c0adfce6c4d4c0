"""One conformance test over every algorithm of ldpjax (optax's ``_common_test.py``, blackjax's
``test_api_protocols.py``), through the library's checker :mod:`ldpjax.testing`.

For each registered :class:`~ldpjax.testing.ConformanceCase` (``cases_*.py``),
:func:`ldpjax.testing.check_conformance` checks:

* the contract: ``Algorithm(init, step, validate, privacy_event)``, with ``validate`` and (for a
  private algorithm) a ``privacy_event`` whose accountant returns a finite epsilon;
* ``jit`` + ``vmap`` over seeds x budgets of a plain ``lax.scan`` driver (not the engine),
  compiled once (traced once) across two different budget sweeps;
* state structure, shapes and dtypes stable through the scan (``init`` vs ``step``);
* a finite ``jax.grad`` of a scalar output w.r.t. the budget where differentiable;
* fail closed: concrete invalid budgets and out-of-domain inputs raise ``ValueError`` from
  ``validate``; the same budgets *traced* make the run fail closed (``is_closed``).
"""

from __future__ import annotations

import chex
import jax
import pytest

from ldpjax.testing import ConformanceCase, check_conformance, run_case
from tests.conformance.case import all_cases

SCHEDULE_FIRST = 3  # long: pytest-xdist starts it early (tests/plugins/schedule.py)

CASES = all_cases()
IDS = [c.name for c in CASES]
NUM_SEEDS = 3


def test_registry_covers_every_family():
    names = {c.name.split("/")[0] for c in CASES}
    assert {"experts", "quantile", "bandits", "demo"} <= names, names
    assert len(IDS) == len(set(IDS))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_algorithm_conforms(case: ConformanceCase):
    """Contract, validation, one compiled sweep for valid and invalid budgets, gradient."""
    check_conformance(case, num_seeds=NUM_SEEDS)


@chex.assert_max_traces(n=1)
def _budget_as_python_float(budget_value: float, keys):
    case = next(c for c in CASES if c.name == "demo/noisy_counter")
    return jax.vmap(lambda k: run_case(case, budget_value, k))(keys)


def test_forced_retrace_is_detected():
    """The compile-once check can fail: a budget passed as a static Python float retraces."""
    keys = jax.random.split(jax.random.key(0), 2)
    jitted = jax.jit(_budget_as_python_float, static_argnums=0)
    jitted(1.0, keys)
    with pytest.raises(AssertionError, match="traced > 1 times"):
        jitted(2.0, keys)
