"""Shared test configuration: a table of contents.

* Tests run in JAX's default precision (float32) unless they ask for the ``x64`` fixture,
  which enables float64 for that test only (accounting accuracy, finite differences).
* ``@pytest.mark.slow`` marks long statistical / full-size tests; the Quickstart/CI command
  deselects them with ``-m "not slow"``.
* ``REPO`` and ``SHARED_DATA`` locate the repository and ``../shared/data``
  (``LDPJAX_SHARED_DATA``); the ``shared_data`` fixture skips a test when it is absent.

The suite's machinery lives in ``tests/plugins/``, one module per concern; this module imports
their hooks and fixtures (pytest finds those defined or imported in a conftest module):

* ``compile_cache``: JAX's persistent compilation cache for the session, in
  ``LDPJAX_TEST_COMPILE_CACHE`` (``off`` turns it off), trimmed to
  ``LDPJAX_TEST_COMPILE_CACHE_MB``; points ``LDPJAX_CACHE_DIR`` at it.
* ``memory``: drops JAX's lowered modules, then its compiled kernels, above
  ``LDPJAX_TEST_CACHE_MB`` (never with ``LDPJAX_TEST_KEEP_CACHES=1``), and freezes what
  collection made and what each module leaves (``gc.freeze``); modules that start processes
  of their own use its ``lean_worker`` fixture.
* ``schedule``: under pytest-xdist (``PYTEST_XDIST_WORKER``) modules with ``SCHEDULE_FIRST``
  run first; without it, the long subprocesses of a module's ``start_early`` start once
  collection is done (``START_EARLY_FOR``; fixtures take them with ``early_start``).
* ``profile``: ``LDPJAX_TEST_CPU_LOG=FILE`` appends a per-test CPU profile.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax
import pytest

import ldpjax  # noqa: F401  (first: applies the XLA CPU workaround before any computation)
from tests.plugins.compile_cache import setup_compile_cache
from tests.plugins.memory import (  # noqa: F401  (hooks and fixtures pytest finds here)
    _drop_compiled_kernels,
    freeze_collected_objects,
    lean_worker,
    pytest_runtest_teardown,
)
from tests.plugins.profile import pytest_runtest_protocol  # noqa: F401
from tests.plugins.schedule import (  # noqa: F401
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_sessionfinish,
    start_early_subprocesses,
)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("LDPJAX_SHARED_DATA", REPO.parent / "shared" / "data"))

setup_compile_cache()


def pytest_collection_finish(session):
    """Freeze what collection made (``memory``), then start the early subprocesses of every
    module with a selected test (``schedule``)."""
    freeze_collected_objects()
    start_early_subprocesses(session)


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
