"""Shared test configuration.

* Tests run in JAX's default precision (float32) unless they ask for the ``x64`` fixture,
  which enables float64 for that test only (accounting accuracy, finite differences).
* ``@pytest.mark.slow`` marks long statistical / full-size tests; the Quickstart/CI command
  deselects them with ``-m "not slow"``.
* After every test module, JAX's compilation caches are dropped and garbage collected
  (:func:`_drop_compiled_kernels`): kernels compiled for one module are rarely reused by the
  next, and keeping them all made the session's memory grow with every module. Set
  ``LDPJAX_TEST_KEEP_CACHES=1`` to keep them (to measure the difference).
* ``REPO`` and ``SHARED_DATA`` locate the repository and ``../shared/data`` (tests that need
  real data skip when it is absent).
"""

from __future__ import annotations

import gc
import os
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
