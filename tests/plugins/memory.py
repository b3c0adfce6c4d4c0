"""Bounds the memory of each test process, and keeps Python's garbage collector cheap.

After a test module, if the process holds more than ``LDPJAX_TEST_CACHE_MB`` (default 800
MiB), JAX's lowered modules are dropped (:func:`_drop_lowered_modules`); if it still holds
more, the garbage is collected, and if even that is not enough, JAX's compiled kernels are
dropped too (:func:`_free_kernels`). Between two tests of one module the same runs above 1.5
times that limit (:func:`pytest_runtest_teardown`).

Where the memory goes (CPU, jaxlib 0.10): each compiled function keeps its lowered MLIR module,
and each module its own MLIR context with every dialect loaded, about 1.1 MiB, while the
compiled kernel itself holds about 0.3 MiB. Dropping the lowered modules frees three quarters
of that, by reference counting alone, and costs nothing later: a compiled function is called
through JAX's dispatch cache, which keeps the kernel, so only a new signature is lowered
again. Dropping the kernels makes every later test compile (or load from the persistent
cache) what it calls again: keeping all of them made one process grow past 8 GB, so that
stays the last resort.

Garbage collection: a full collection scans every object the process holds (JAX's caches
hold hundreds of thousands), a few tenths of a second each; run after every module and
automatically by Python, they once took a sixth of the suite's time. So the plugin collects
only when it drops the kernels, freezes the objects that exist when collection is done
(:func:`freeze_collected_objects`) and when each module ends (:func:`freeze_survivors`), so
that Python's automatic full collections skip them, and spaces those collections out
(``GC_THRESHOLDS``: JAX allocates many short-lived objects, nearly all freed by reference
counting).
Modules whose tests start Python processes of their own ask for :func:`lean_worker`
(``pytestmark = pytest.mark.usefixtures("lean_worker")``): the same drops run before each
of their tests above half the limit. ``LDPJAX_TEST_KEEP_CACHES=1`` never drops anything
(to measure the difference).
"""

from __future__ import annotations

import gc
import os

import jax
import pytest

__all__ = [
    "CACHE_LIMIT_MB",
    "GC_THRESHOLDS",
    "freeze_collected_objects",
    "freeze_survivors",
    "lean_worker",
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


def _drop_lowered_modules() -> bool:
    """Drop the lowered MLIR modules that JAX keeps beside its compiled kernels (module doc);
    False where this JAX keeps them elsewhere (nothing is dropped then)."""
    from jax._src import pjit
    from jax._src.interpreters import pxla

    caches = [getattr(pjit, "_pjit_lower", None), getattr(pxla, "_cached_lowering_to_hlo", None)]
    if not all(hasattr(cache, "cache_clear") for cache in caches):
        return False
    for cache in caches:
        cache.cache_clear()
    return True


def _collect_everything() -> None:
    """A full garbage collection that sees the frozen objects too, whose survivors are then
    frozen again (:func:`freeze_survivors`), and the freed memory handed back."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    _return_freed_memory()


def _free_kernels() -> None:
    """Drop JAX's compiled kernels and traces, collect the garbage, hand memory back."""
    jax.clear_caches()
    _collect_everything()


def _drop_if_over(limit_mb: float) -> bool:
    """Above ``limit_mb``: drop the lowered modules (freed by reference counting: no garbage
    collection needed), then, if the process still holds more, the compiled kernels with a
    full collection; True if the kernels were dropped. Below the limit nothing runs."""
    if _resident_mb() <= limit_mb:
        return False
    if _drop_lowered_modules():
        _return_freed_memory()
        if _resident_mb() <= limit_mb:
            return False
    _free_kernels()
    return True


def pytest_runtest_teardown(item, nextitem):
    """Between two tests of one module, once the process holds more than
    ``1.5 * LDPJAX_TEST_CACHE_MB``, drop what :func:`_drop_if_over` drops (a module that
    compiles hundreds of kernels, such as the doctests, would otherwise hold them all until it
    ends)."""
    if os.environ.get("LDPJAX_TEST_KEEP_CACHES") == "1" or nextitem is None:
        return
    same_module = getattr(nextitem, "module", None) is getattr(item, "module", 0)
    if same_module and _resident_mb() > 1.5 * CACHE_LIMIT_MB:
        _drop_if_over(1.5 * CACHE_LIMIT_MB)


_LEAN = {"floor_mb": 0.0}


@pytest.fixture
def lean_worker():
    """For tests that start Python processes of their own (a few hundred MiB each): before
    each, drop what :func:`_drop_if_over` drops above half of ``LDPJAX_TEST_CACHE_MB``, so
    that this process and the ones it starts stay within the suite's memory together. What
    the process still holds after such a drop (imported modules, mostly) is its floor: the next
    test drops again only once the process has grown 100 MiB beyond it."""
    if os.environ.get("LDPJAX_TEST_KEEP_CACHES") != "1":
        if _drop_if_over(max(CACHE_LIMIT_MB / 2, _LEAN["floor_mb"] + 100.0)):
            _LEAN["floor_mb"] = _resident_mb()


@pytest.fixture(scope="module", autouse=True)
def _drop_compiled_kernels():
    """Once a module's tests are done, free the compiled kernels if the process holds more than
    ``LDPJAX_TEST_CACHE_MB`` (see the module doc)."""
    yield
    if os.environ.get("LDPJAX_TEST_KEEP_CACHES") != "1":
        _drop_if_over(CACHE_LIMIT_MB)
    freeze_survivors()


GC_THRESHOLDS = (10_000, 20, 100)


def freeze_collected_objects() -> None:
    """Collect the garbage and freeze what collection made, so that Python's full collections
    skip it, and space the automatic collections out (``GC_THRESHOLDS``; module doc);
    conftest's ``pytest_collection_finish`` calls it first."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def freeze_survivors() -> None:
    """Freeze what exists when a module ends (JAX's caches, mostly): Python's automatic full
    collections then scan only what later modules make. Objects that die later are still
    freed by reference counting; the few in reference cycles wait for the next full
    collection, which unfreezes everything first (:func:`_collect_everything`)."""
    gc.freeze()
