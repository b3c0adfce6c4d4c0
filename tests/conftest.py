"""Shared test configuration.

* Tests run in JAX's default precision (float32) unless they ask for the ``x64`` fixture,
  which enables float64 for that test only (accounting accuracy, finite differences).
* ``@pytest.mark.slow`` marks long statistical / full-size tests; the Quickstart/CI command
  deselects them with ``-m "not slow"``.
* After every test module, JAX's compilation caches are dropped and garbage collected
  (:func:`_drop_compiled_kernels`): kernels compiled for one module are rarely reused by the
  next, and keeping them all made the session's memory grow with every module. Set
  ``LDPJAX_TEST_KEEP_CACHES=1`` to keep them (to measure the difference).
* JAX's persistent compilation cache points at a fresh temporary folder for the whole session,
  subprocesses included (through the environment, set before JAX reads its configuration): a
  kernel dropped after its module (below), or compiled again by a test's subprocess, is loaded
  instead of compiled (the same executable, so the same values). The folder starts empty in
  every session and is removed at exit; ``LDPJAX_TEST_NO_COMPILE_CACHE=1`` turns it off.
  (XLA's ``--xla_backend_optimization_level=0`` would compile faster still, but it changes
  values: the optax budget allocation returns NaN under it.)
* ``LDPJAX_TEST_CPU_LOG=FILE`` appends one line per test (node id, CPU seconds of this
  process and its finished subprocesses, wall seconds, this process's peak RSS in MiB so
  far): a per-test profile that stays meaningful when other jobs share the cores
  (``--durations`` reports wall time only).
* ``REPO`` and ``SHARED_DATA`` locate the repository and ``../shared/data`` (tests that need
  real data skip when it is absent).
"""

from __future__ import annotations

import atexit
import gc
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path


def _share_compiled_kernels() -> None:
    if os.environ.get("LDPJAX_TEST_NO_COMPILE_CACHE") == "1":
        return
    if not os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        folder = tempfile.mkdtemp(prefix="ldpjax-test-compile-cache-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        os.environ["JAX_COMPILATION_CACHE_DIR"] = folder
        os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
        os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"


_share_compiled_kernels()  # before JAX reads its configuration and starts a backend

import jax  # noqa: E402
import pytest  # noqa: E402

import ldpjax  # noqa: E402, F401  (first: applies the XLA CPU workaround before any computation)

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
