"""Shared test configuration.

* Tests run in JAX's default precision (float32) unless they ask for the ``x64`` fixture,
  which enables float64 for that test only (accounting accuracy, finite differences).
* ``@pytest.mark.slow`` marks long statistical / full-size tests; the Quickstart/CI command
  deselects them with ``-m "not slow"``.
* After every test module, JAX's compilation caches are dropped and garbage collected
  (:func:`_drop_compiled_kernels`): kernels compiled for one module are rarely reused by the
  next, and keeping them all made the session's memory grow with every module. Set
  ``LDPJAX_TEST_KEEP_CACHES=1`` to keep them (to measure the difference).
* No persistent compilation cache: pointing JAX's cache at a session folder was measured
  slower for the fast suite (writing every executable costs more than the
  few kernels it lets a later module load).
* ``LDPJAX_TEST_CPU_LOG=FILE`` appends one line per test (node id, CPU seconds of this
  process and its finished subprocesses, wall seconds, this process's peak RSS in MiB so
  far): a per-test profile that stays meaningful when other jobs share the cores
  (``--durations`` reports wall time only).
* ``REPO`` and ``SHARED_DATA`` locate the repository and ``../shared/data`` (tests that need
  real data skip when it is absent).
"""

from __future__ import annotations

import gc
import os
import resource
import time
from pathlib import Path

import jax
import pytest

import ldpjax  # noqa: F401  (first: applies the XLA CPU workaround before any computation)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("LDPJAX_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="module", autouse=True)
def _drop_compiled_kernels():
    """Free the module's compiled kernels once its tests are done."""
    yield
    if os.environ.get("LDPJAX_TEST_KEEP_CACHES") != "1":
        jax.clear_caches()
        gc.collect()


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    log = os.environ.get("LDPJAX_TEST_CPU_LOG")
    if not log:
        yield
        return
    cpu, wall = _cpu_seconds(), time.perf_counter()
    yield
    cpu, wall = _cpu_seconds() - cpu, time.perf_counter() - wall
    with open(log, "a") as f:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        f.write(f"{item.nodeid}\t{cpu:.3f}\t{wall:.3f}\t{peak:.0f}\n")


@pytest.fixture
def x64():
    """Enable float64 for one test."""
    with jax.enable_x64(True):
        yield


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} not present")
    return SHARED_DATA
