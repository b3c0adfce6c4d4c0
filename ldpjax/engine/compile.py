"""Compilation: the persistent compilation cache and a timer of JAX's compile events."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import jax

# Event names JAX reports through jax.monitoring (jax/_src/dispatch.py).
_TRACE = "/jax/core/compile/jaxpr_trace_duration"
_LOWER = "/jax/core/compile/jaxpr_to_mlir_module_duration"
_BACKEND = "/jax/core/compile/backend_compile_duration"
_EVENTS = (_TRACE, _LOWER, _BACKEND)

#: ``ExecutionHints.cpu_compiler_options`` for steps that XLA CPU compiles faster with its
#: elemental emitters (no MLIR fusion emitters) at the same speed: the experts family and
#: DP-SGD (Local SGD, Single and DC ran slower with them and keep XLA's defaults; the
#: measurements, with their commands, are in ``docs/pages/benchmarks.md``, "Where the time goes").
ELEMENTAL_EMITTERS = (("xla_cpu_use_fusion_emitters", False),)


def kernel_compiler_options(options) -> dict | None:
    """The ``compiler_options`` of ``jax.jit`` for ``ExecutionHints.cpu_compiler_options`` on the
    default backend (``None`` off CPU or when there are none)."""
    if not options or jax.default_backend() != "cpu":
        return None
    return dict(options)


def default_cache_dir() -> Path:
    """``$LDPJAX_CACHE_DIR``, else ``$XDG_CACHE_HOME/ldpjax/jax-compile`` (``~/.cache/...``)."""
    if os.environ.get("LDPJAX_CACHE_DIR"):
        return Path(os.environ["LDPJAX_CACHE_DIR"]).expanduser() / "jax-compile"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ldpjax" / "jax-compile"


def enable_compile_cache(path: str | os.PathLike | None = None, *, min_compile_seconds: float = 0.0) -> Path:
    """Turn on JAX's persistent compilation cache (compiled kernels reused across processes).

    Args:
      path: cache folder (default :func:`default_cache_dir`); created if missing.
      min_compile_seconds: only kernels that took at least this long to compile are stored.

    Returns the folder. Safe to call more than once; call it before the first compilation.
    """
    folder = Path(path).expanduser() if path is not None else default_cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", float(min_compile_seconds))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder


class _Listener:
    """One process-wide listener summing compile-event durations per thread."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.installed = False
        self.lock = threading.Lock()

    def install(self) -> None:
        with self.lock:
            if not self.installed:
                jax.monitoring.register_event_duration_secs_listener(self._on_event)
                self.installed = True

    def _on_event(self, event: str, duration: float, **kwargs) -> None:
        stack = getattr(self.local, "stack", None)
        if stack and event in _EVENTS:
            for timer in stack:
                timer.add(event, duration)


_LISTENER = _Listener()


class CompileTimer:
    """Context manager: wall seconds and the seconds JAX spent tracing, lowering and compiling.

    ``compile_seconds`` sums JAX's trace, lowering and backend-compile events inside the block
    (capped at the wall time); ``run_seconds = wall_seconds - compile_seconds``.
    """

    def __init__(self) -> None:
        self.trace_seconds = self.lower_seconds = self.backend_seconds = 0.0
        self.wall_seconds = 0.0
        self.compilations = 0

    def add(self, event: str, duration: float) -> None:
        if event == _TRACE:
            self.trace_seconds += duration
        elif event == _LOWER:
            self.lower_seconds += duration
        else:
            self.backend_seconds += duration
            self.compilations += 1

    @property
    def compile_seconds(self) -> float:
        total = self.trace_seconds + self.lower_seconds + self.backend_seconds
        return min(total, self.wall_seconds) if self.wall_seconds else total

    @property
    def run_seconds(self) -> float:
        return max(0.0, self.wall_seconds - self.compile_seconds)

    def __enter__(self) -> CompileTimer:
        _LISTENER.install()
        stack = getattr(_LISTENER.local, "stack", None)
        if stack is None:
            stack = _LISTENER.local.stack = []
        stack.append(self)
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.wall_seconds = time.perf_counter() - self._start
        _LISTENER.local.stack.remove(self)


__all__ = [
    "ELEMENTAL_EMITTERS",
    "CompileTimer",
    "default_cache_dir",
    "enable_compile_cache",
    "kernel_compiler_options",
]
