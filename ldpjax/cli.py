"""The ``ldpjax`` command: ``list``, ``run NAME``, ``reproduce``, ``info``.

Exit codes: 0 success, 1 an experiment failed unexpectedly, 2 usage errors (unknown
experiment, bad option or value, missing optional dependency).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

USAGE_ERROR = 2


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, help="output folder (default: results/NAME)")
    parser.add_argument("--size", default="small", choices=("small", "paper"),
                        help="small default sweep or the paper's full grid")
    parser.add_argument("--seed", type=int, default=0, help="base PRNG seed (default 0)")
    parser.add_argument("--key-impl", default="threefry2x32",
                        choices=("threefry2x32", "threefry", "rbg", "unsafe_rbg"),
                        help="PRNG implementation (threefry: chunk/device independent; "
                             "rbg: faster on CPU)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.add_argument("--x64", action="store_true", help="enable float64 (jax_enable_x64)")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ldpjax",
        description="Batched JAX experiments for learning under local differential privacy.",
    )
    parser.add_argument("--plugin", action="append", default=[],
                        help="Python file that registers extra experiments (repeatable)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the registered experiments")
    sub.add_parser("info", help="show the JAX backend, devices and package versions")
    run = sub.add_parser("run", help="run one experiment (ldpjax run NAME --help for options)",
                         add_help=False)
    run.add_argument("name", nargs="?", help="experiment name (see ldpjax list)")
    run.add_argument("-h", "--help", action="store_true", help="show help")
    run.add_argument("--seeds", type=int, default=None, help="number of seeds / replications")
    _common(run)
    rep = sub.add_parser("reproduce", help="run every registered experiment at its small size")
    rep.add_argument("--only", default=None,
                     help="comma-separated subset of experiment names")
    rep.add_argument("--seeds", type=int, default=None, help="override the seeds of every run")
    _common(rep)
    rep.set_defaults(out="results")
    return parser


def _experiment_parser(experiment) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"ldpjax run {experiment.name}",
        description=experiment.description,
        epilog=("Common options: --seeds N --out DIR --size small|paper --seed S "
                "--key-impl threefry2x32|rbg --no-progress --x64"),
    )
    for opt in experiment.options:
        defaults = {size: cfg.get(opt.name, opt.default) for size, cfg in experiment.sizes.items()}
        shown = ", ".join(f"{size}: {value}" for size, value in defaults.items())
        parser.add_argument(opt.flag, dest=opt.name, type=opt.parse, default=None,
                            choices=opt.choices, help=f"{opt.help} (default {shown})")
    return parser


def _fail(message: str) -> int:
    print(f"ldpjax: error: {message}", file=sys.stderr)
    return USAGE_ERROR


def _configure_jax(args: argparse.Namespace) -> None:
    if getattr(args, "x64", False):
        import jax

        jax.config.update("jax_enable_x64", True)


def _cmd_list() -> int:
    from ldpjax.experiments import list_experiments

    experiments = list_experiments()
    width = max(len(e.name) for e in experiments)
    for e in experiments:
        flag = "" if e.in_reproduce else "  (not in reproduce)"
        print(f"{e.name:<{width}}  {e.description}{flag}")
    return 0


def _cmd_info() -> int:
    from ldpjax.experiments.runner import jax_environment, package_versions

    print(json.dumps({"versions": package_versions(), "jax": jax_environment()}, indent=2))
    return 0


def _cmd_run(args: argparse.Namespace, rest: list[str], argv: list[str]) -> int:
    from ldpjax.experiments import get_experiment, list_experiments, run_experiment

    if args.name is None:
        if args.help:
            _build_parser().parse_args(["run", "--help"])
        return _fail("run needs an experiment name; choose one of: "
                     + ", ".join(e.name for e in list_experiments()))
    try:
        experiment = get_experiment(args.name)
    except KeyError:
        names = ", ".join(e.name for e in list_experiments())
        return _fail(f"unknown experiment {args.name!r}; choose one of: {names}")
    parser = _experiment_parser(experiment)
    if args.help:
        parser.print_help()
        return 0
    try:
        options = parser.parse_args(rest)
    except SystemExit as stop:  # argparse already printed the message
        return int(stop.code or 0) if stop.code not in (None, 0) else 0
    overrides = {k: v for k, v in vars(options).items() if v is not None}
    if experiment.requires is not None:
        missing = experiment.requires()
        if missing:
            return _fail(f"{experiment.name}: {missing}")
    _configure_jax(args)
    try:
        run_experiment(
            experiment, size=args.size, seeds=args.seeds, out_dir=args.out, overrides=overrides,
            seed=args.seed, key_impl=args.key_impl, show_progress=not args.no_progress,
            command=["ldpjax", *argv],
        )
    except ValueError as err:
        return _fail(str(err))
    return 0


def _cmd_reproduce(args: argparse.Namespace, argv: list[str]) -> int:
    from ldpjax.experiments import list_experiments, run_experiment

    experiments = [e for e in list_experiments() if e.in_reproduce]
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        known = {e.name for e in list_experiments()}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            return _fail(f"unknown experiment(s) {unknown}; choose from {sorted(known)}")
        experiments = [e for e in list_experiments() if e.name in wanted]
    _configure_jax(args)
    root = Path(args.out)
    root.mkdir(parents=True, exist_ok=True)
    report: list[dict[str, Any]] = []
    clock = time.perf_counter()
    for experiment in experiments:
        entry: dict[str, Any] = {"experiment": experiment.name}
        missing = experiment.requires() if experiment.requires is not None else None
        if missing:
            print(f"\n== {experiment.name}: skipped ({missing})", flush=True)
            entry.update(status="skipped", reason=missing)
            report.append(entry)
            continue
        start = time.perf_counter()
        try:
            _, out = run_experiment(
                experiment, size=args.size, seeds=args.seeds, out_dir=root / experiment.name,
                seed=args.seed, key_impl=args.key_impl, show_progress=not args.no_progress,
                command=["ldpjax", *argv],
            )
            entry.update(status="ok", output=str(out))
        except Exception as err:  # noqa: BLE001 - report every experiment, then fail
            import traceback

            traceback.print_exc()
            entry.update(status="failed", error=f"{type(err).__name__}: {err}")
        entry["wall_seconds"] = round(time.perf_counter() - start, 1)
        report.append(entry)
    (root / "reproduce.json").write_text(json.dumps(report, indent=2))
    total = time.perf_counter() - clock
    print(f"\n== reproduce: {len(report)} experiment(s) in {total:.0f} s -> {root}")
    for entry in report:
        extra = entry.get("reason") or entry.get("error") or f"{entry.get('wall_seconds')} s"
        print(f"  {entry['experiment']:<28} {entry['status']:<8} {extra}")
    return 1 if any(e["status"] == "failed" for e in report) else 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser()
    args, rest = parser.parse_known_args(argv)
    for plugin in args.plugin:
        from ldpjax.experiments import load_plugin

        try:
            load_plugin(plugin)
        except ValueError as err:
            return _fail(str(err))
    if args.command != "run" and rest:
        return _fail(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "list":
        return _cmd_list()
    if args.command == "info":
        return _cmd_info()
    if args.command == "run":
        return _cmd_run(args, rest, argv)
    return _cmd_reproduce(args, argv)


if __name__ == "__main__":
    sys.exit(main())
