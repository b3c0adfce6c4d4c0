"""The public API under ``jax_enable_x64`` (float64), in fresh subprocesses.

x64 is a process-wide switch that must be set before JAX computes anything, and the mode people
turn on to differentiate bounds and accountants precisely; a dtype that is only right in float32
(a ``lax.scan`` carry built as int32 that comes back int64, a float32 constant mixed into a
float64 computation) breaks only there. So these tests start new interpreters with
``JAX_ENABLE_X64=1``:

* the environment variable really turns float64 on;
* the mechanisms tests and the conformance test pass under x64: in the fast suite the
  fail-closed paths, the bad-input checks and the registry check (``FAST_SUBSET``); the laws,
  events, float attack, audits, per-algorithm conformance subset and the Gittins and
  budget modules (``MECHANISMS_SUBSET``, ``CONFORMANCE_SUBSET``, ``LIBRARY_SUBSET``), and
  then all of both, behind ``slow``;
* ``tests/x64_script.py``: one small ``simulate`` sweep of algorithms of every family, their
  privacy events' epsilon, ``allocate_budget`` (both solvers) and ``jax.grad`` of bounds and
  accountants, all float64 and finite; in the fast suite one algorithm or more of every
  family, the waterfill solver and every gradient (``x64_script.py fast``), every algorithm
  and both solvers behind ``slow``.

The two long subprocesses start together when the session starts (``start_early``, see
tests/plugins/schedule.py) and each test waits for its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import bandits
from tests.conftest import REPO
from tests.plugins.schedule import early_start

SCHEDULE_FIRST = 6  # long: pytest-xdist starts it early (tests/plugins/schedule.py)
pytestmark = pytest.mark.usefixtures("lean_worker")  # starts processes (tests/plugins/memory.py)

CONFORMANCE = "tests/conformance/test_conformance.py"
EVENTS = "tests/accounting/test_events.py"

# The subsets under x64. All of the conformance and mechanisms tests take several minutes on two
# cores (``test_full_suites_under_x64``, marked slow, runs them all). The fast suite runs the
# fail-closed paths and the bad-input checks (the privacy promise in float64) and the registry
# check; the slow one adds the laws, events, float attack and audits, and the conformance test
# of one or two algorithms per family (every family also runs under x64, in the fast suite,
# through ``tests/x64_script.py fast``; every algorithm in the slow suite). Node ids, not
# ``-k``, so a renamed test fails here instead of being silently deselected.
FAST_SUBSET = [
    *(f"tests/mechanisms/test_{name}.py" for name in ("fail_closed", "bad_inputs")),
    f"{CONFORMANCE}::test_registry_covers_every_family",
]
MECHANISMS_SUBSET = [
    *(f"tests/mechanisms/test_{name}.py"
      for name in ("laws", "fail_closed", "float_attack", "audit", "bad_inputs")),
    EVENTS,
]
CONFORMANCE_SUBSET = [
    f"{CONFORMANCE}::test_registry_covers_every_family",
    f"{CONFORMANCE}::test_algorithm_conforms[experts/rw_ftpl]",
    f"{CONFORMANCE}::test_algorithm_conforms[experts/agarwal_singh]",
    f"{CONFORMANCE}::test_algorithm_conforms[quantile/local_sgd]",
    f"{CONFORMANCE}::test_algorithm_conforms[bandits/epsilon_greedy_dynamic]",
    f"{CONFORMANCE}::test_algorithm_conforms[demo/noisy_counter]",
]
# Library modules with dtype-sensitive numerics of their own (the Gittins table builder's scan
# carry, the dynamic schedule's cube root): whole, behind slow.
LIBRARY_SUBSET = ["tests/bandits/test_gittins.py", "tests/bandits/test_budgets.py"]
# Mechanisms tests that already run in float64 in-process (the ``x64`` fixture): deselected from
# the subprocess, where they would only repeat themselves.
ALREADY_X64 = [
    f"{EVENTS}::test_epsilon_inverts_delta",
    f"{EVENTS}::test_discrete_gaussian_profile_close_to_gdp",
    f"{EVENTS}::test_discrete_gaussian_delta_against_direct_sum",
    f"{EVENTS}::test_gradients_match_finite_differences",
    f"{EVENTS}::test_composed_discrete_gaussians_via_zcdp",
]


def _env() -> dict[str, str]:
    return {**os.environ, "JAX_ENABLE_X64": "1"}


class _Run:
    """``python ARGS`` started in the repository with float64 on, output to a file."""

    def __init__(self, args: list[str], log: Path):
        self.args, self.log = args, log
        with open(log, "w") as out:
            self.proc = subprocess.Popen([sys.executable, *args], cwd=REPO, env=_env(),
                                         stdout=out, stderr=subprocess.STDOUT, text=True)

    def finish(self, timeout: float) -> str:
        """Wait for the run; fail with the tail of its output unless it exited 0."""
        start = time.monotonic()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
        output = self.log.read_text()
        if self.proc.returncode != 0:
            pytest.fail(f"x64 run {' '.join(self.args)} exited {self.proc.returncode} "
                        f"(waited {time.monotonic() - start:.0f} s):\n{output[-6000:]}",
                        pytrace=False)
        return output

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _pytest_args(paths: list[str], deselect=()) -> list[str]:
    args = ["-m", "pytest", "-q", "-m", "not slow", "-p", "no:cacheprovider", "--tb=short",
            "-rfE", *paths]
    for node in deselect:
        args += ["--deselect", node]
    return args


START_EARLY_FOR = ("test_fail_closed_and_bad_inputs_under_x64", "test_every_family_runs_under_x64")


def start_early(folder: Path) -> dict[str, _Run]:
    """The two long float64 subprocesses, started together (tests/plugins/schedule.py starts them when
    the session starts, so they overlap with the rest of the suite)."""
    return {
        "suites": _Run(_pytest_args(FAST_SUBSET), folder / "suites.log"),
        "families": _Run(["tests/x64_script.py", "fast"], folder / "families.log"),
    }


@pytest.fixture(scope="module")
def x64_runs(tmp_path_factory):
    runs = early_start(__name__, tmp_path_factory)
    yield runs
    for run in runs.values():
        run.stop()


def test_env_var_turns_float64_on():
    code = ("import jax, jax.numpy as jnp; assert jax.config.jax_enable_x64; "
            "assert jnp.asarray(1.0).dtype == jnp.float64; print('x64 on')")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "x64 on" in proc.stdout, proc.stdout + proc.stderr


def test_fail_closed_and_bad_inputs_under_x64(x64_runs):
    x64_runs["suites"].finish(timeout=600)


@pytest.mark.slow
def test_mechanisms_and_conformance_subset_under_x64(tmp_path):
    run = _Run(_pytest_args([*MECHANISMS_SUBSET, *CONFORMANCE_SUBSET, *LIBRARY_SUBSET],
                            ALREADY_X64),
               tmp_path / "subset.log")
    try:
        run.finish(timeout=1800)
    finally:
        run.stop()


def test_every_family_runs_under_x64(x64_runs):
    out = x64_runs["families"].finish(timeout=600)
    for family in ("experts/", "quantile/", "bandits/", "demo/", "grad/"):
        assert f"PASS {family}" in out, out


@pytest.mark.slow
def test_every_algorithm_runs_under_x64(tmp_path):
    """``tests/x64_script.py`` without ``fast``: every algorithm, both allocate_budget solvers."""
    run = _Run(["tests/x64_script.py"], tmp_path / "all.log")
    try:
        out = run.finish(timeout=1800)
    finally:
        run.stop()
    for name in ("experts/rw_meta", "quantile/single", "bandits/batched_epsilon_greedy",
                 "bandits/allocate_budget", "demo/", "grad/"):
        assert f"PASS {name}" in out, out


@pytest.mark.slow
def test_full_suites_under_x64(tmp_path):
    """All of the mechanisms tests and the whole conformance test under x64."""
    run = _Run(_pytest_args(["tests/mechanisms", EVENTS, "tests/conformance"], ALREADY_X64),
               tmp_path / "full.log")
    try:
        run.finish(timeout=1800)
    finally:
        run.stop()


def test_allocate_budget_in_process():
    """In the session's precision (float32 by default) every field of the allocation is finite
    and the allocation is feasible (tests/bandits/test_portfolio.py checks optimality, the
    optax solver and the gradient; 12 experiments as there, so one session compiles once)."""
    arms = np.tile([2.0, 3.0, 5.0], 4)
    visitors = np.geomspace(1e4, 1e6, 12)
    alloc = bandits.allocate_budget(arms, visitors, 1.5)
    for name, leaf in alloc._asdict().items():
        assert np.all(np.isfinite(np.asarray(leaf))), (name, leaf)
    assert alloc.gamma.dtype == jnp.result_type(float), alloc.gamma.dtype
    assert alloc.strategy.dtype == jnp.int32
    assert float(alloc.spent) <= 1.5 * (1 + 1e-5)
    assert float(alloc.price) > 0  # the budget binds
