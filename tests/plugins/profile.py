"""The per-test CPU profile.

``LDPJAX_TEST_CPU_LOG=FILE`` appends one line per test (node id, CPU seconds of this
process and its finished subprocesses, wall seconds, this process's peak RSS in MiB so
far, then JAX's trace, lowering and backend-compile seconds and the number of backend
compilations, the pytest-xdist worker and the time the test ended): a per-test profile
that stays meaningful when other jobs share the cores (``--durations`` reports wall time
only). Without the variable nothing is recorded (JAX's listener is registered only when it
is set, when this module is imported).
"""

from __future__ import annotations

import os
import resource
import time

import jax
import pytest

__all__ = ["pytest_runtest_protocol"]

_JAX_DURATIONS: dict[str, float] = {}
_JAX_COUNTS: dict[str, int] = {}


def _record_jax_duration(event: str, seconds: float, **_: object) -> None:
    _JAX_DURATIONS[event] = _JAX_DURATIONS.get(event, 0.0) + seconds
    _JAX_COUNTS[event] = _JAX_COUNTS.get(event, 0) + 1


if os.environ.get("LDPJAX_TEST_CPU_LOG"):
    jax.monitoring.register_event_duration_secs_listener(_record_jax_duration)

_COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Time one test and append its line to ``LDPJAX_TEST_CPU_LOG`` (module doc)."""
    log = os.environ.get("LDPJAX_TEST_CPU_LOG")
    if not log:
        yield
        return
    _JAX_DURATIONS.clear()
    _JAX_COUNTS.clear()
    cpu, wall = _cpu_seconds(), time.perf_counter()
    yield
    cpu, wall = _cpu_seconds() - cpu, time.perf_counter() - wall
    compile_columns = "\t".join(f"{_JAX_DURATIONS.get(e, 0.0):.3f}" for e in _COMPILE_EVENTS)
    compiles = _JAX_COUNTS.get(_COMPILE_EVENTS[-1], 0)
    with open(log, "a") as f:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        f.write(f"{item.nodeid}\t{cpu:.3f}\t{wall:.3f}\t{peak:.0f}\t{compile_columns}\t{compiles}"
                f"\t{worker}\t{time.time():.2f}\n")
