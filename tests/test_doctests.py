"""The docstring examples of every ldpjax module run, and pass. Examples must stay tiny
(milliseconds). The README's test command runs those of the privacy layer and the engine
(``ldpjax.mechanisms``, ``ldpjax.accounting``, ``ldpjax.engine``, ``ldpjax.testing``, ...);
the families' examples (``ldpjax.bandits``, ``ldpjax.experts``, ``ldpjax.frequency``,
``ldpjax.quantile``), whose code the families' own tests exercise in the fast suite, run with
the slow tests (``-m slow``: CI runs both)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ldpjax
import ldpjax.accounting

SCHEDULE_FIRST = 5  # long: pytest-xdist starts it early (tests/plugins/schedule.py)

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_names() -> list[str]:
    names = ["ldpjax"]
    for info in pkgutil.walk_packages(ldpjax.__path__, "ldpjax."):
        if info.name.rsplit(".", 1)[-1] != "__main__":  # running them would start a program
            names.append(info.name)
    return names


MODULES = _module_names()
FAMILIES = ("ldpjax.bandits", "ldpjax.experts", "ldpjax.frequency", "ldpjax.quantile")


def _tiered(name: str):
    in_family = ".".join(name.split(".")[:2]) in FAMILIES
    return pytest.param(name, marks=pytest.mark.slow) if in_family else name


@pytest.mark.parametrize("name", [_tiered(n) for n in MODULES])
def test_docstring_examples_pass(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failures = []
    for test in finder.find(module, name):
        if test.examples:
            result = runner.run(test, out=failures.append)
            assert result.failed == 0, "".join(failures)


def test_every_public_accountant_has_a_runnable_example():
    missing = [name for name in ldpjax.accounting.__all__
               if ">>>" not in (getattr(ldpjax.accounting, name).__doc__ or "")]
    assert not missing, f"accountants without a docstring example: {missing}"


def test_the_examples_are_found():
    # guards the finder itself: the accounting examples must be seen and counted
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = sum(len(t.examples) for t in finder.find(importlib.import_module(
        "ldpjax.accounting.pure"), "ldpjax.accounting.pure"))
    assert found >= 9
