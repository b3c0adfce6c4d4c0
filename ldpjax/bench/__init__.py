"""``ldpjax bench``: every family through ldpjax and through plain NumPy, in one process.

For each workload (:mod:`ldpjax.bench.workloads`: quantile Local SGD, bandits epsilon-greedy,
RW-FTPL, RW-AdaBatch, RW-Meta, Agarwal & Singh; ``noisy-counter`` on request) the bench

1. runs the ldpjax side once (compile + run), then ``repeats`` more times: the steady time is
   the best of those, the compile time the first call minus the steady time;
2. runs the NumPy reference (:mod:`ldpjax.bench.numpy_reference`) ``repeats`` times (best
   time), seeds 0, 1, ...;
3. compares one statistic (a mean over seeds, see the workloads module for why the per-seed
   values are independent on both sides) with its standard error: ``agree`` is
   |diff| <= 3 sqrt(se_numpy^2 + se_ldpjax^2) (a false alarm has probability 0.27% per
   workload when both sides are right);
4. reports the peak memory of each side (host RSS above its level at the start of the side,
   sampled every 2 ms; plus the device's ``peak_bytes_in_use`` where the backend reports it)
   and the RNG floor: the random words the workload needs divided by the fastest generator's
   rate measured in the same run (:mod:`ldpjax.bench.rng`).

Timings block until the results are ready (``jax.block_until_ready``); nothing depends on the
backend, so the same command runs on CPU, GPU and TPU.

Entry points: :func:`add_arguments` / :func:`run` (the CLI), :func:`run_bench` (Python; returns
the records), ``python -m ldpjax.bench``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ldpjax import _validation as v
from ldpjax.bench import rng as rng_lib
from ldpjax.bench.workloads import DEFAULT_WORKLOADS, SIZES, WORKLOADS, Context

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
)
AGREE_SIGMAS = 3.0


# --------------------------------------------------------------------------- memory
def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except Exception:  # noqa: BLE001 -- no way to read RSS on this platform
        return None


class PeakMemory:
    """Context manager: peak host RSS above the level at entry, sampled by a thread."""

    def __init__(self, interval: float = 0.002):
        self.interval = interval
        self.peak_bytes: int | None = None
        self._stop = threading.Event()

    def _poll(self):
        while not self._stop.is_set():
            rss = _rss_bytes()
            if rss is not None:
                self._peak = max(self._peak, rss)
            self._stop.wait(self.interval)

    def __enter__(self):
        self._start = _rss_bytes()
        self._peak = self._start or 0
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        rss = _rss_bytes()
        if self._start is not None:
            self._peak = max(self._peak, rss or 0)
            self.peak_bytes = self._peak - self._start
        return False


def _device_peak_bytes() -> int | None:
    import jax

    try:
        stats = jax.devices()[0].memory_stats()
    except Exception:  # noqa: BLE001 -- backends without memory stats
        return None
    if not stats:
        return None
    peak = stats.get("peak_bytes_in_use")
    return int(peak) if peak is not None else None


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

    jax_s, np_s = min(jax_times), min(np_times)
    jax_mean, jax_se = _mean_se(jax_values)
    np_mean, np_se = _mean_se(np_values)
    combined = math.hypot(jax_se, np_se)
    words = float(prepared.random_words(np_info))
    floor = words / fastest_rate if fastest_rate else None
    return {
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
        "key_impl": ctx.used_impl,
        "repeats": repeats,
    }


# --------------------------------------------------------------------------- the whole bench
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
) -> tuple[list[dict[str, Any]], list[rng_lib.GeneratorRate]]:
    """Measure the generators, then every workload; returns (records, generator rates).

    ``on_record(records)`` is called after every workload with the records so far (the CLI
    rewrites ``--json`` then, so a run stopped by a time limit keeps its finished workloads).
    """
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
        record = run_workload(name, size, ctx=ctx, repeats=repeats, fastest_rate=best.rate,
                              fastest_impl=best.impl)
        record["rng_rates"] = {r.impl: r.rate for r in rates}
        records.append(record)
        if on_record:
            on_record(records)
    return records, rates


# --------------------------------------------------------------------------- output
def _fmt(x, spec=".2f", none="-"):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return none
    return format(x, spec)


def format_rates(rates: Sequence[rng_lib.GeneratorRate]) -> str:
    lines = ["RNG rates (jax.random.bits under jit, steady; M words/s; best of flat / vmap 1024 keys)"]
    for r in rates:
        if r.error:
            lines.append(f"  {r.impl:<13} failed: {r.error}")
            continue
        flat = " ".join(f"2^{int(math.log2(k))}:{val / 1e6:.0f}" for k, val in r.flat.items())
        vm = " ".join(f"2^{int(math.log2(k))}:{val / 1e6:.0f}" for k, val in r.vmapped.items())
        lines.append(f"  {r.impl:<13} {r.rate / 1e6:8.0f}   flat {flat} | vmap {vm}")
    return "\n".join(lines)


def format_table(records: Sequence[dict[str, Any]]) -> str:
    head = (f"{'workload':<14} {'numpy s':>8} {'compile s':>9} {'ldpjax s':>8} {'speedup':>7} "
            f"{'numpy stat (se)':>20} {'ldpjax stat (se)':>20} {'agree':>5} "
            f"{'peak MB np/jax':>14} {'RNG floor s':>11} {'jax/floor':>9}")
    lines = [head, "-" * len(head)]
    for r in records:
        peak = f"{_fmt(r['numpy_peak_mb'], '.0f')}/{_fmt(r['ldpjax_peak_mb'], '.0f')}"
        if r.get("device_peak_mb") is not None:
            peak += f" (dev {r['device_peak_mb']:.0f})"
        lines.append(
            f"{r['workload']:<14} {r['numpy_seconds']:>8.2f} {r['compile_seconds']:>9.2f} "
            f"{r['ldpjax_seconds']:>8.3f} {r['speedup']:>6.2f}x "
            f"{_fmt(r['numpy_stat'], '.4g') + ' (' + _fmt(r['numpy_se'], '.2g') + ')':>20} "
            f"{_fmt(r['ldpjax_stat'], '.4g') + ' (' + _fmt(r['ldpjax_se'], '.2g') + ')':>20} "
            f"{'yes' if r['agree'] else 'NO':>5} {peak:>14} "
            f"{_fmt(r['rng_floor_seconds'], '.3f'):>11} {_fmt(r['floor_ratio'], '.1f'):>8}x"
        )
    lines.append("")
    for r in records:
        lines.append(f"  {r['workload']}: {r['shape']}; statistic: {r['statistic']}")
    return "\n".join(lines)


def _header() -> str:
    import jax

    dev = jax.devices()[0]
    return (f"ldpjax bench: jax {jax.__version__}, backend {jax.default_backend()}, "
            f"{len(jax.devices())} x {dev.device_kind}, x64={bool(jax.config.jax_enable_x64)}")


# --------------------------------------------------------------------------- CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ldpjax bench``."""
    parser.add_argument("--size", default="small", choices=SIZES,
                        help="small: a few seconds per workload on a 2-core CPU; paper: the "
                             "shapes of the paper sweeps (issue 10's table); tiny: for tests")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated workloads (default: {','.join(DEFAULT_WORKLOADS)}; "
                             f"also: {','.join(n for n in WORKLOADS if n not in DEFAULT_WORKLOADS)})")
    parser.add_argument("--rng", default=None,
                        help="PRNG of the ldpjax side: 'invariant', 'fast' or a key "
                             "implementation (passed as simulate(rng=...); other implementations "
                             f"this JAX offers, among {', '.join(rng_lib.CANDIDATE_IMPLS)}, as "
                             "the key's own); default: the engine's default key")
    parser.add_argument("--repeats", type=int, default=2,
                        help="timed repetitions per side (best time is reported; default 2)")
    parser.add_argument("--rng-sizes", default="22,23,24", metavar="E[,E]",
                        help="generator rates are timed for 2^E words (default 22,23,24)")
    parser.add_argument("--json", default=None, metavar="PATH",
                        help="write one JSON record per workload (a list) to PATH")


def run(args: argparse.Namespace) -> int:
    """Run the bench; 0 when every workload's statistics agree, 1 otherwise, 2 bad usage."""
    try:
        names = resolve_names(args.only)
        if args.repeats < 1:
            raise ValueError(f"repeats must be an integer >= 1; got {args.repeats}")
        Context(rng=args.rng)  # validates --rng
        rng_sizes = _rng_sizes(args.rng_sizes)
    except ValueError as error:
        print(f"ldpjax bench: {error}", file=sys.stderr)
        return 2
    print(_header(), flush=True)
    write = None
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)

        def write(records):
            path.write_text(json.dumps(records, indent=2, default=_json_default) + "\n")

    records, _ = run_bench(names, args.size, rng=args.rng, repeats=args.repeats,
                           rng_sizes=rng_sizes, log=lambda s: print(s, flush=True),
                           on_record=write)
    print()
    print(format_table(records))
    if args.json:
        print(f"\nwrote {path}")
    bad = [r["workload"] for r in records if not r["agree"]]
    if bad:
        print(f"\nstatistics disagree (|diff| > {AGREE_SIGMAS:g} combined se): {', '.join(bad)}",
              file=sys.stderr)
        return 1
    return 0


def _rng_sizes(text: str) -> tuple[int, ...]:
    try:
        exps = [int(e) for e in str(text).split(",") if e.strip()]
    except ValueError:
        exps = []
    if not exps or any(not 4 <= e <= 30 for e in exps):
        raise ValueError(f"rng-sizes must be comma-separated exponents in [4, 30]; got {text!r}")
    return tuple(2**e for e in exps)


def _json_default(obj):
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if dataclasses.is_dataclass(obj):
        return dataclasses.asdict(obj)
    return str(obj)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="ldpjax bench",
        description="Time every family through ldpjax and through plain NumPy in one process.",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


__all__ = [
    "RECORD_KEYS",
    "PeakMemory",
    "add_arguments",
    "format_table",
    "main",
    "resolve_names",
    "run",
    "run_bench",
    "run_workload",
]
