"""Time workloads on both sides and build their JSON records (see :mod:`ldpjax_experiments.bench`)."""

from __future__ import annotations

import math
import statistics
import time
import unittest
from collections.abc import Sequence
from typing import Any

import numpy as np

from ldpjax import _validation as v
from ldpjax_experiments.bench import rng as rng_lib
from ldpjax_experiments.bench.memory import PeakMemory, _device_peak_bytes
from ldpjax_experiments.bench.report import format_rates
from ldpjax_experiments.bench.workload import SIZES, Context
from ldpjax_experiments.bench.workloads import DEFAULT_WORKLOADS, WORKLOADS

#: Keys every JSON record has (plus the extras listed in the README).
RECORD_KEYS = (
    "workload",
    "numpy_seconds",
    "ldpjax_seconds",
    "compile_seconds",
    "speedup",
    "rng_floor_seconds",
    "mode",
    "backend",
    "x64",
)
AGREE_SIGMAS = 3.0


# --------------------------------------------------------------------------- one workload
def _mean_se(values) -> tuple[float, float]:
    values = np.asarray(values, np.float64).reshape(-1)
    se = values.std(ddof=1) / math.sqrt(values.size) if values.size > 1 else math.inf
    return float(values.mean()), float(se)


def _mb(nbytes: int | None) -> float | None:
    return None if nbytes is None else nbytes / 2**20


def run_workload(
    name: str,
    size: str = "small",
    *,
    ctx: Context | None = None,
    repeats: int = 2,
    fastest_rate: float | None = None,
    fastest_impl: str | None = None,
) -> dict[str, Any]:
    """Time one workload on both sides and return its record (see the module docstring)."""
    import jax

    if name not in WORKLOADS:
        raise ValueError(f"workload must be one of {tuple(WORKLOADS)}; got {name!r}")
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}; got {size!r}")
    v.check_integer("repeats", repeats, 1)
    ctx = Context() if ctx is None else ctx
    workload = WORKLOADS[name]
    prepared = workload.prepare(workload.sizes[size], ctx)

    with PeakMemory() as jax_mem:
        start = time.perf_counter()
        jax_values = prepared.run_ldpjax()
        first = time.perf_counter() - start
        jax_times = []
        for _ in range(repeats):
            start = time.perf_counter()
            jax_values = prepared.run_ldpjax()
            jax_times.append(time.perf_counter() - start)
    device_peak = _device_peak_bytes()

    with PeakMemory() as np_mem:
        np_times, np_values, np_info = [], None, {}
        for rep in range(repeats):
            start = time.perf_counter()
            values, info = prepared.run_numpy(rep)
            np_times.append(time.perf_counter() - start)
            if np_values is None:
                np_values, np_info = values, info

    scale = float(prepared.numpy_scale)
    np_times = [t * scale for t in np_times]
    # The median of the repeats (the small sizes move from run to run; the best is kept too).
    jax_s, np_s = statistics.median(jax_times), statistics.median(np_times)
    jax_mean, jax_se = _mean_se(jax_values)
    np_mean, np_se = _mean_se(np_values)
    combined = math.hypot(jax_se, np_se)
    words = float(prepared.random_words(np_info))
    floor = words / fastest_rate if fastest_rate and words else None  # no draws: no floor
    record = {
        "workload": name,
        "numpy_seconds": np_s,
        "ldpjax_seconds": jax_s,
        "compile_seconds": max(first - jax_s, 0.0),
        "speedup": np_s / jax_s if jax_s > 0 else math.inf,
        "rng_floor_seconds": floor,
        "mode": "default" if ctx.rng is None else ctx.rng,
        "backend": jax.default_backend(),
        # extras
        "family": workload.family,
        "size": size,
        "shape": prepared.shape,
        "statistic": prepared.statistic,
        "numpy_stat": np_mean,
        "numpy_se": np_se,
        "ldpjax_stat": jax_mean,
        "ldpjax_se": jax_se,
        "diff_over_se": abs(jax_mean - np_mean) / combined if combined > 0 else 0.0,
        "agree": bool(abs(jax_mean - np_mean) <= AGREE_SIGMAS * combined),
        "ldpjax_first_call_seconds": first,
        "time_statistic": "median",
        "ldpjax_best_seconds": min(jax_times),
        "numpy_best_seconds": min(np_times),
        "ldpjax_times": jax_times,
        "numpy_times": np_times,
        "numpy_peak_mb": _mb(np_mem.peak_bytes),
        "ldpjax_peak_mb": _mb(jax_mem.peak_bytes),
        "device_peak_mb": _mb(device_peak),
        "random_words": words,
        "rng_fastest_impl": fastest_impl,
        "rng_fastest_words_per_second": fastest_rate,
        "floor_ratio": jax_s / floor if floor else None,
        "numpy_info": np_info,
        "baseline": prepared.baseline,
        "numpy_scale": scale,
        "numpy_measured_seconds": np_s / scale,
        "x64": bool(jax.config.jax_enable_x64),
        "key_impl": ctx.used_impl,
        "repeats": repeats,
    }
    if prepared.compare is not None:  # values that are not per-seed draws (accounting)
        record.update(prepared.compare(jax_values, np_values, np_info))
    return record


def resolve_names(only: str | Sequence[str] | None) -> list[str]:
    """Workload names from ``--only`` (comma-separated) or the default set."""
    if only is None:
        return list(DEFAULT_WORKLOADS)
    names = [s.strip() for s in (only.split(",") if isinstance(only, str) else only)]
    names = [s for s in names if s]
    unknown = [s for s in names if s not in WORKLOADS]
    if unknown or not names:
        raise ValueError(f"only must name workloads among {tuple(WORKLOADS)}; got {only!r}")
    return names


def run_bench(
    names: Sequence[str] | None = None,
    size: str = "small",
    *,
    rng: str | None = None,
    repeats: int = 2,
    rng_sizes: Sequence[int] = rng_lib.DEFAULT_SIZES,
    rng_repeats: int = 3,
    log=None,
    on_record=None,
    x64: bool | None = None,
) -> tuple[list[dict[str, Any]], list[rng_lib.GeneratorRate]]:
    """Measure the generators, then every workload; returns (records, generator rates).

    ``on_record(records)`` is called after every workload with the records so far (the CLI
    rewrites ``--json`` then, so a run stopped by a time limit keeps its finished workloads).
    ``x64``: True / False runs everything with ``jax_enable_x64`` on / off (restored after);
    None keeps the current setting. Each record's ``x64`` says which it ran with.
    """
    if x64 is not None:
        import jax

        with jax.enable_x64(bool(x64)):
            return run_bench(names, size, rng=rng, repeats=repeats, rng_sizes=rng_sizes,
                             rng_repeats=rng_repeats, log=log, on_record=on_record)
    names = resolve_names(names)
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}; got {size!r}")
    v.check_integer("repeats", repeats, 1)
    ctx = Context(rng=rng)
    rates = rng_lib.measure_rates(sizes=rng_sizes, repeats=rng_repeats)
    best = rng_lib.fastest(rates)
    if log:
        log(format_rates(rates))
    records = []
    for name in names:
        if log:
            log(f"[bench] {name} ({size}) ...")
        try:
            record = run_workload(name, size, ctx=ctx, repeats=repeats, fastest_rate=best.rate,
                                  fastest_impl=best.impl)
        except unittest.SkipTest as skip:  # an optional peer is not installed
            if log:
                log(f"[bench] {name}: skipped: {skip}")
            continue
        record["rng_rates"] = {r.impl: r.rate for r in rates}
        records.append(record)
        if on_record:
            on_record(records)
    return records, rates


__all__ = ["AGREE_SIGMAS", "RECORD_KEYS", "resolve_names", "run_bench", "run_workload"]
