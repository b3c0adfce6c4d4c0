"""The options and the entry point of ``ldpjax bench`` (also ``python -m ldpjax_experiments.bench``)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ldpjax_experiments.bench import rng as rng_lib
from ldpjax_experiments.bench.report import format_table, header
from ldpjax_experiments.bench.runner import AGREE_SIGMAS, resolve_names, run_bench
from ldpjax_experiments.bench.workload import SIZES, Context
from ldpjax_experiments.bench.workloads import DEFAULT_WORKLOADS, WORKLOADS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ldpjax bench``."""
    parser.add_argument("--size", default="small", choices=SIZES,
                        help="small: a quick run of every workload; paper: the shapes of the "
                             "paper sweeps; tiny: for tests")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated workloads (default: {','.join(DEFAULT_WORKLOADS)}; "
                             f"also: {','.join(n for n in WORKLOADS if n not in DEFAULT_WORKLOADS)})")
    parser.add_argument("--rng", default=None,
                        help="PRNG of the ldpjax side: 'invariant', 'fast' or a key "
                             "implementation (passed as simulate(rng=...); other implementations "
                             f"this JAX offers, among {', '.join(rng_lib.CANDIDATE_IMPLS)}, as "
                             "the key's own); default: the engine's default key")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed repetitions per side (their median is reported, the best "
                             "recorded too; default 5)")
    parser.add_argument("--rng-sizes", default="22,23,24", metavar="E[,E]",
                        help="generator rates are timed for 2^E words (default 22,23,24)")
    parser.add_argument("--json", default=None, metavar="PATH",
                        help="write one JSON record per workload (a list) to PATH")
    parser.add_argument("--x64", action="store_true",
                        help="run every workload with jax_enable_x64 (float64 on both sides); "
                             "the records say x64: true")
    parser.add_argument("--plan", action="store_true",
                        help="run nothing: plan the chunks of every workload for --device-gb "
                             "devices and compile its kernels with the engine's layout on the "
                             "available devices; print bytes per chunk and whether it fits")
    parser.add_argument("--device-gb", type=float, default=16.0, metavar="GB",
                        help="device memory the --plan models (default 16, a Colab T4)")
    parser.add_argument("--lower-only", action="store_true",
                        help="with --plan: lower the kernels but do not compile them")


def run(args: argparse.Namespace) -> int:
    """Run the bench; 0 when every workload's statistics agree, 1 otherwise, 2 bad usage."""
    try:
        names = resolve_names(args.only)
        if args.repeats < 1:
            raise ValueError(f"repeats must be an integer >= 1; got {args.repeats}")
        Context(rng=args.rng)  # validates --rng
        rng_sizes = _rng_sizes(args.rng_sizes)
        if not args.device_gb > 0:
            raise ValueError(f"device-gb must be > 0; got {args.device_gb}")
    except ValueError as error:
        print(f"ldpjax bench: {error}", file=sys.stderr)
        return 2
    if getattr(args, "x64", False):
        import jax

        with jax.enable_x64(True):  # restored on return (the CLI may run inside Python)
            return _run_checked(args, names, rng_sizes)
    return _run_checked(args, names, rng_sizes)


def _run_checked(args: argparse.Namespace, names, rng_sizes) -> int:
    print(header(), flush=True)
    write = None
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)

        def write(records):
            path.write_text(json.dumps(records, indent=2, default=_json_default) + "\n")

    if getattr(args, "plan", False):
        return _run_plan(args, names, write)
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


def _run_plan(args: argparse.Namespace, names, write) -> int:
    """``--plan``: 0 when every workload compiles and fits, 1 otherwise."""
    from ldpjax_experiments.bench.plan import format_plans, plan_workload

    device_bytes = int(args.device_gb * 1e9)
    plans, failed = [], []
    for name in names:
        print(f"[plan] {name} ({args.size}) ...", flush=True)
        try:
            plans.append(plan_workload(name, args.size, rng=args.rng, device_bytes=device_bytes,
                                       compile=not args.lower_only))
        except Exception as error:  # noqa: BLE001 -- report every workload, then fail
            failed.append(name)
            print(f"[plan] {name}: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        if write:
            write([dataclasses.asdict(p) for p in plans])
    print()
    print(format_plans(plans, device_bytes))
    misfits = [p.workload for p in plans if not p.fits]
    if failed or misfits:
        print(f"\nplan: failed {failed}, does not fit {misfits}", file=sys.stderr)
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


__all__ = ["add_arguments", "main", "run"]
