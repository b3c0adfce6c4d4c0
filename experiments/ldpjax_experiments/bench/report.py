"""The bench's text output: the generator rates and the table of workload records."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ldpjax_experiments.bench import rng as rng_lib


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
    head = (f"{'workload':<22} {'numpy s':>8} {'compile s':>9} {'ldpjax s':>8} {'speedup':>7} "
            f"{'numpy stat (se)':>20} {'ldpjax stat (se)':>20} {'agree':>5} "
            f"{'peak MB np/jax':>14} {'RNG floor s':>11} {'jax/floor':>9}")
    lines = [head, "-" * len(head)]
    for r in records:
        peak = f"{_fmt(r['numpy_peak_mb'], '.0f')}/{_fmt(r['ldpjax_peak_mb'], '.0f')}"
        if r.get("device_peak_mb") is not None:
            peak += f" (dev {r['device_peak_mb']:.0f})"
        lines.append(
            f"{r['workload']:<22} {r['numpy_seconds']:>8.2f} {r['compile_seconds']:>9.2f} "
            f"{r['ldpjax_seconds']:>8.3f} {r['speedup']:>6.2f}x "
            f"{_fmt(r['numpy_stat'], '.4g') + ' (' + _fmt(r['numpy_se'], '.2g') + ')':>20} "
            f"{_fmt(r['ldpjax_stat'], '.4g') + ' (' + _fmt(r['ldpjax_se'], '.2g') + ')':>20} "
            f"{'yes' if r['agree'] else 'NO':>5} {peak:>14} "
            f"{_fmt(r['rng_floor_seconds'], '.3f'):>11} {_fmt(r['floor_ratio'], '.1f'):>8}x"
        )
    lines.append("")
    for r in records:
        lines.append(f"  {r['workload']}: {r['shape']}; statistic: {r['statistic']}")
        if r.get("agreement"):
            lines.append(f"    agreement: {r['agreement']}")
        if r.get("baseline", "numpy") != "numpy":
            scaled = (f" (baseline seconds = measured {r['numpy_measured_seconds']:.3g} s "
                      f"x {r['numpy_scale']:g}, the share of replications it ran)"
                      if r.get("numpy_scale", 1.0) != 1.0 else "")
            lines.append(f"    baseline {r['baseline']}: ldpjax is {r['speedup']:.1f}x faster"
                         + scaled)
    if any(r.get("x64") for r in records):
        lines.append("  x64: jax_enable_x64 on (float64 on both sides)")
    return "\n".join(lines)


def header() -> str:
    import jax

    dev = jax.devices()[0]
    return (f"ldpjax bench: jax {jax.__version__}, backend {jax.default_backend()}, "
            f"{len(jax.devices())} x {dev.device_kind}, x64={bool(jax.config.jax_enable_x64)}")


__all__ = ["format_rates", "format_table", "header"]
