"""The ``ldpjax`` command: ``list``, ``run NAME``, ``reproduce``, ``bench``, ``info``.

Exit codes: 0 success; 1 an experiment failed unexpectedly or the disk filled up while writing;
2 usage errors (unknown experiment, bad option or value, missing optional dependency, an output
folder that is a file, not writable, short of free space or in use by another run); 130
interrupted (Ctrl-C: one line, no traceback; the same command resumes from the saved chunks).
Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import signal
import sys
import threading
import time

from ldpjax._key_names import KEY_IMPL_CHOICES

USAGE_ERROR = 2
INTERRUPTED = 130
INTERRUPT_MESSAGE = "interrupted \u2014 rerun the same command to resume"
# OSErrors that mean "the environment", not a bug: reported in one line instead of a traceback
_ENVIRONMENT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


class _Parser(argparse.ArgumentParser):
    """argparse with option-value errors in the user's words: ``--mu expects ...``."""

    def error(self, message: str):  # type: ignore[override]
        message = re.sub(r"^argument (\S+?)(?:/\S+)?: expects", r"\1 expects", message)
        super().error(message)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, help="output folder (default: results/NAME)")
    parser.add_argument("--size", default="small", choices=("small", "paper"),
                        help="small default sweep or the paper's full grid")
    parser.add_argument("--seed", type=int, default=0, help="base PRNG seed (default 0)")
    parser.add_argument("--key-impl", default=None, choices=KEY_IMPL_CHOICES,
                        metavar="|".join(KEY_IMPL_CHOICES),
                        help="generator of the runs (default: philox4x32 where this JAX offers "
                             "it, else threefry2x32; threefry and philox are short for "
                             "threefry2x32 and philox2x32); given, it replaces --rng invariant")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.add_argument("--x64", action="store_true", help="enable float64 (jax_enable_x64)")
    parser.add_argument("--processes", type=int, default=None, metavar="N",
                        help="run as N JAX processes on this machine, sharing the seed chunks "
                             "(records identical to one process; see python -m ldpjax_experiments.launch)")
    parser.add_argument("--rng", default="invariant", choices=("invariant", "fast"),
                        help="random numbers: invariant (default; bit-identical across chunks "
                             "and devices, 64-bit keys: philox4x32) or fast (philox2x32 on CPU, "
                             "32-bit keys); recorded in run.json")
    parser.add_argument("--no-compile-cache", action="store_true",
                        help="do not use JAX's persistent compilation cache "
                             "(default folder: ~/.cache/ldpjax/jax-compile or $LDPJAX_CACHE_DIR)")


def _build_parser() -> argparse.ArgumentParser:
    from ldpjax import __version__

    parser = _Parser(
        prog="ldpjax",
        description="Batched JAX experiments for learning under local differential privacy.",
    )
    parser.add_argument("--version", action="version", version=f"ldpjax {__version__}")
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
    rep.add_argument("--jobs", type=int, default=None, metavar="N",
                     help="experiments run at once, each in its own process, console output in "
                          "OUT/NAME.log (default: the CPU cores, at most 4; 1 on a GPU or TPU)")
    _common(rep)
    rep.set_defaults(out="results")
    sub.add_parser("bench", help="time ldpjax's workloads (ldpjax bench --help for options)",
                   add_help=False)
    return parser


_EPILOG = ("Common options: --seeds N --out DIR --size small|paper --seed S "
           f"--key-impl {'|'.join(KEY_IMPL_CHOICES)} --no-progress --x64 --rng invariant|fast "
           "--no-compile-cache --processes N")


def _experiment_parser(experiment) -> argparse.ArgumentParser:
    return experiment.argument_parser(_Parser, epilog=_EPILOG)


def _fail(message: str, code: int = USAGE_ERROR) -> int:
    message = " ".join(str(message).split())  # always one line
    print(f"ldpjax: error: {message}", file=sys.stderr, flush=True)
    return code


def _environment_error(err: OSError) -> int:
    """A full disk or a permission problem met while writing: one line, exit 1."""
    where = f" ({err.filename})" if err.filename else ""
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return _fail(f"no space left on the device{where}; free some space and rerun the same "
                     "command (finished chunks are kept)", 1)
    return _fail(f"{err.strerror or err}{where}", 1)


def _launch_processes(processes: int, argv: list[str]) -> int:
    """Rerun this command as ``processes`` JAX processes (ldpjax_experiments.launch); same exit codes."""
    from ldpjax_experiments.launch import launch_local, without_option

    try:
        return launch_local(processes, without_option(argv, "--processes"))
    except ValueError as err:  # --processes 0 and the like
        return _fail(str(err))


def _configure_jax(args: argparse.Namespace) -> None:
    from ldpjax_experiments.runner import configure_jax

    configure_jax(x64=getattr(args, "x64", False),
                  compile_cache=not getattr(args, "no_compile_cache", True))


def _cmd_list() -> int:
    from ldpjax_experiments import list_experiments

    experiments = list_experiments()
    width = max(len(e.name) for e in experiments)
    for e in experiments:
        flag = "" if e.in_reproduce else "  (not in reproduce)"
        print(f"{e.name:<{width}}  {e.description}{flag}")
    return 0


def _cmd_info() -> int:
    from ldpjax_experiments.runner import jax_environment, package_versions

    print(json.dumps({"versions": package_versions(), "jax": jax_environment()}, indent=2))
    return 0


def _cmd_run(args: argparse.Namespace, rest: list[str], argv: list[str]) -> int:
    from ldpjax_experiments import get_experiment, list_experiments, run_experiment

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
        overrides = experiment.overrides_from(rest, parser)
    except SystemExit as stop:  # argparse already printed the message
        return int(stop.code or 0) if stop.code not in (None, 0) else 0
    if experiment.requires is not None:
        missing = experiment.requires()
        if missing:
            return _fail(f"{experiment.name}: {missing}")
    if args.processes is not None and args.processes != 1:
        return _launch_processes(args.processes, argv)
    _configure_jax(args)
    try:
        run_experiment(
            experiment, size=args.size, seeds=args.seeds, out_dir=args.out, overrides=overrides,
            seed=args.seed, key_impl=args.key_impl, show_progress=not args.no_progress,
            rng=args.rng,
            command=["ldpjax", *argv],
        )
    except ValueError as err:
        return _fail(str(err))
    except OSError as err:
        if err.errno in _ENVIRONMENT_ERRNOS:
            return _environment_error(err)
        raise
    return 0


def _cmd_reproduce(args: argparse.Namespace, argv: list[str]) -> int:
    """Parse, run :func:`ldpjax_experiments.reproduce.reproduce`, print its outcome."""
    if args.processes is not None and args.processes != 1:
        return _launch_processes(args.processes, argv)
    from ldpjax_experiments.reproduce import CommandStart  # no JAX yet: the clock starts here

    started = CommandStart.now()
    if args.seeds is not None and args.seeds < 1:
        return _fail(f"--seeds must be >= 1, got {args.seeds}")
    if args.jobs is not None and args.jobs < 1:
        return _fail(f"--jobs must be >= 1, got {args.jobs}")
    from ldpjax_experiments.reproduce import reproduce

    try:
        result = reproduce(
            args.out, only=args.only or None, size=args.size, seeds=args.seeds, seed=args.seed,
            key_impl=args.key_impl, rng=args.rng, jobs=args.jobs, x64=bool(args.x64),
            compile_cache=not args.no_compile_cache, plugins=args.plugin,
            show_progress=not args.no_progress, command=["ldpjax", *argv], started=started,
        )
    except ValueError as err:  # an unknown experiment, or the output folder was refused
        return _fail(str(err))
    except OSError as err:
        if err.errno in _ENVIRONMENT_ERRNOS:
            return _environment_error(err)
        raise
    _print_reproduce(result)
    return 1 if result.failed else 0


def _print_reproduce(result) -> None:
    """The outcome of every experiment, then the verdict table."""
    from ldpjax_experiments.verdicts import format_verdict_table

    print(f"\n== reproduce: {len(result.outcomes)} experiment(s) in {result.run_seconds:.0f} s "
          f"-> {result.root}")
    for outcome in result.outcomes:
        extra = outcome.reason or outcome.error or f"{outcome.wall_seconds} s"
        print(f"  {outcome.experiment:<28} {outcome.status:<8} {extra}")
    print(f"\n== verdicts against the papers ({len(result.verdict_rows)} claims)")
    print(format_verdict_table(result.verdict_rows) if result.verdict_rows else "  (no "
          "experiment reported verdicts)")


def _cmd_bench(rest: list[str]) -> int:
    import importlib

    try:
        bench = importlib.import_module("ldpjax_experiments.bench")
    except ModuleNotFoundError as err:
        if err.name not in ("ldpjax_experiments.bench",):
            raise
        return _fail("the benchmark module ldpjax_experiments.bench is not part of this installation; "
                     "install a version of ldpjax that ships it")
    if not (callable(getattr(bench, "add_arguments", None)) and callable(getattr(bench, "run", None))):
        return _fail("ldpjax_experiments.bench does not provide add_arguments() and run(); this "
                     "installation's benchmark module is incomplete")
    parser = _Parser(prog="ldpjax bench", description=(bench.__doc__ or "").strip().split("\n")[0]
                     or "Time ldpjax's workloads.")
    bench.add_arguments(parser)
    try:
        args = parser.parse_args(rest)
    except SystemExit as stop:
        return int(stop.code or 0)
    return int(bench.run(args) or 0)


def _dispatch(argv: list[str]) -> int:
    parser = _build_parser()
    args, rest = parser.parse_known_args(argv)
    for plugin in args.plugin:
        from ldpjax_experiments import load_plugin

        try:
            load_plugin(plugin)
        except ValueError as err:
            return _fail(str(err))
        except Exception as err:  # noqa: BLE001 - the plugin's own code failed: one line, exit 2
            return _fail(f"plugin {plugin!r} failed to import: {type(err).__name__}: {err}")
    if args.command not in ("run", "bench") and rest:
        return _fail(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "list":
        return _cmd_list()
    if args.command == "info":
        return _cmd_info()
    if args.command == "run":
        return _cmd_run(args, rest, argv)
    if args.command == "bench":
        return _cmd_bench(rest)
    return _cmd_reproduce(args, argv)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    Called without ``argv`` (the ``ldpjax`` console script, ``python -m ldpjax_experiments``) a Ctrl-C ends
    the process with one line on stderr and ``os._exit(130)``: a normal interpreter shutdown
    while JAX's runtime threads are busy can crash (segfault) instead, and a KeyboardInterrupt
    that lands inside a garbage-collector callback would be swallowed (caught here by
    ``sys.unraisablehook``), and a main thread blocked in a long XLA computation would not see
    it, so a watchdog exits :data:`INTERRUPT_GRACE_S` seconds after the signal in any case.
    Completed checkpoint chunks are on disk, so the same command resumes.
    """
    as_program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if as_program:
        quiet_xla_log(os.environ)
        _install_interrupt_handler()
    try:
        return _dispatch(argv)
    except KeyboardInterrupt:
        if as_program:
            _exit_interrupted()
        _say_interrupted()
        return INTERRUPTED


def quiet_xla_log(environ) -> bool:
    """Keep XLA's C++ log to FATAL messages in this program unless the user chose a level.

    With the persistent compilation cache on (the default), jaxlib 0.10.1 logs 2 ERROR lines
    per cached kernel it loads on x86 CPUs whose LLVM tuning includes ``+prefer-no-gather`` /
    ``+prefer-no-scatter`` (most current Intel and AMD parts): it compares tuning preferences
    as if they were instruction-set features (openxla/xla#44565). The kernel is loaded and
    runs; a warm ``ldpjax reproduce`` would print hundreds of such lines. XLA's failures
    reach ldpjax as Python exceptions whatever this level, and ``TF_CPP_MIN_LOG_LEVEL=0``
    (set before the command) shows XLA's whole log. Takes effect only before jaxlib loads,
    which the command defers to its first computation; returns whether it set the level.
    """
    if "TF_CPP_MIN_LOG_LEVEL" in environ:
        return False
    environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return True


INTERRUPT_GRACE_S = 3.0
_EXIT_LOCK = threading.Lock()


def _say_interrupted() -> None:
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    try:
        print(f"\nldpjax: {INTERRUPT_MESSAGE}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _exit_interrupted() -> None:
    """Say so once and end the process now (no interpreter shutdown, no traceback)."""
    with _EXIT_LOCK:  # the main thread and the watchdog may both get here: one line only
        _say_interrupted()
        os._exit(INTERRUPTED)


def _install_interrupt_handler() -> None:
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return  # SIGINT ignored (background job) or handled by an embedding program
    hits = []

    def handler(signum, frame):
        if hits:  # a second Ctrl-C: stop at once
            _exit_interrupted()
        hits.append(time.monotonic())
        watchdog = threading.Timer(INTERRUPT_GRACE_S, _exit_interrupted)
        watchdog.daemon = True
        watchdog.start()
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread
        return
    previous_hook = sys.unraisablehook

    def unraisable(info):
        # the interrupt landed where Python cannot raise (a gc callback, a __del__): exit now
        # rather than print "Exception ignored in ..." and carry on
        if info.exc_type is not None and issubclass(info.exc_type, KeyboardInterrupt):
            _exit_interrupted()
        previous_hook(info)

    sys.unraisablehook = unraisable


if __name__ == "__main__":
    sys.exit(main())
