"""Bounds the memory of each test process.

After a test module, if the process holds more than ``LDPJAX_TEST_CACHE_MB`` (default 800
MiB), garbage is collected and freed memory handed back to the OS, and if it still holds
more, JAX's compilation caches are dropped (:func:`_drop_compiled_kernels`); between two
tests of one module they are dropped above 1.5 times that (:func:`pytest_runtest_teardown`).
Each compiled kernel holds about a megabyte; kernels kept across modules are reused, but
keeping all of them made one process grow past 2 GB. A full garbage collection costs a few
tenths of a second in a process this size, so it runs only above the limit. For the same
reason the objects that exist once collection is done (modules, functions, the test items)
are frozen (``gc.freeze``, :func:`freeze_collected_objects`): Python's own full collections
then skip them. ``LDPJAX_TEST_KEEP_CACHES=1`` never drops them (to measure the difference).
"""

from __future__ import annotations

import gc
import os

import jax
import pytest

__all__ = [
    "CACHE_LIMIT_MB",
    "freeze_collected_objects",
    "pytest_runtest_teardown",
    "_drop_compiled_kernels",
]

CACHE_LIMIT_MB = float(os.environ.get("LDPJAX_TEST_CACHE_MB", "800"))


def _resident_mb() -> float:
    """This process's resident memory now (Linux; 0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return 0.0


def _return_freed_memory() -> None:
    """Give the allocator's freed pages back to the OS (glibc ``malloc_trim``), so that the
    resident size measures what is held, not what was once used."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _free_kernels() -> None:
    """Drop JAX's compiled kernels and traces, collect the garbage, hand memory back."""
    jax.clear_caches()
    gc.collect()
    _return_freed_memory()


def _drop_if_over(limit_mb: float) -> bool:
    """Free the compiled kernels if the process holds more than ``limit_mb`` after a garbage
    collection; True if it did. Below the limit nothing runs (not even the collection, which
    costs a few tenths of a second in a process this size)."""
    if _resident_mb() <= limit_mb:
        return False
    gc.collect()
    _return_freed_memory()
    if _resident_mb() <= limit_mb:
        return False
    _free_kernels()
    return True


def pytest_runtest_teardown(item, nextitem):
    """Between two tests of one module, free the compiled kernels once the process holds more
    than ``1.5 * LDPJAX_TEST_CACHE_MB`` (a module that compiles hundreds of kernels, such as
    the doctests, would otherwise hold them all until it ends)."""
    if os.environ.get("LDPJAX_TEST_KEEP_CACHES") == "1" or nextitem is None:
        return
    same_module = getattr(nextitem, "module", None) is getattr(item, "module", 0)
    if same_module and _resident_mb() > 1.5 * CACHE_LIMIT_MB:
        _free_kernels()


@pytest.fixture(scope="module", autouse=True)
def _drop_compiled_kernels():
    """Once a module's tests are done, free the compiled kernels if the process holds more than
    ``LDPJAX_TEST_CACHE_MB`` (see the module doc)."""
    yield
    if os.environ.get("LDPJAX_TEST_KEEP_CACHES") != "1":
        _drop_if_over(CACHE_LIMIT_MB)


def freeze_collected_objects() -> None:
    """Collect the garbage and freeze what collection made, so that Python's full collections
    skip it (module doc); conftest's ``pytest_collection_finish`` calls it first."""
    gc.collect()
    gc.freeze()
