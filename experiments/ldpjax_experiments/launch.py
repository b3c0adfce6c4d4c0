"""Start an ldpjax command as several JAX processes on this machine (or join one under SLURM).

Usage::

    python -m ldpjax_experiments.launch --processes N -- run NAME [options]     # N local processes
    python -m ldpjax_experiments.launch --processes N --script sweep.py -- ARGS  # your own script
    srun -n N python -m ldpjax_experiments.launch --worker -- run NAME [options] # one process per task

With ``--processes N`` the launcher picks a free port on 127.0.0.1, starts N copies of itself in
``--worker`` mode with ``LDPJAX_COORDINATOR``, ``LDPJAX_NUM_PROCESSES`` and
``LDPJAX_PROCESS_ID`` set, and waits. A worker joins the JAX runtime
(:func:`ldpjax_experiments.cluster.initialize`, which also understands SLURM and
``LDPJAX_DISTRIBUTED=auto`` for TPU pods) and runs the ``ldpjax`` program (``python -m
ldpjax``, as :mod:`runpy` runs it: the launcher does not import the command line, which
imports the launcher) or ``--script``. Every :func:`~ldpjax.engine.simulate` call given the
application's runner (the experiments' calls; a script passes
``runner=ldpjax_experiments.checkpointing.shared()`` or ``checkpointed(folder)``) is then shared by the
processes and gives the records of one process, bit for bit (see :mod:`ldpjax_experiments.cluster`).

Outputs: process 0 writes the results and the checkpoints. For ``run`` and ``reproduce`` the
other processes write their copies of the outputs to a private temporary folder (removed when
they finish; ``--out`` and ``--no-progress`` are appended for them) and, with the launcher,
their standard output is hidden unless ``--all-output`` is given; standard error is kept.

Exit code: 0 when every process succeeded; otherwise the failure's code: that of a process
ended by a signal S (128 + S; the others then fail in their collectives), else the first one. A failed worker exits at once (skipping the runtime's shutdown
barrier) and the launcher then kills the others (they would otherwise wait for it in a
collective until JAX's timeouts). Ctrl-C (or SIGTERM to the launcher) interrupts every process
(SIGINT: ``ldpjax`` says "interrupted", exit 130), killing any still running after
:data:`STOP_GRACE_S`; rerun the same command to resume from the chunks process 0 saved.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from ldpjax_experiments.cluster import ENV_COORDINATOR, ENV_NUM_PROCESSES, ENV_PROCESS_ID

#: Seconds the launcher waits after asking processes to stop before killing them.
STOP_GRACE_S = 5.0
INTERRUPTED = 130
#: Seconds to let the other processes fail after the first failure before choosing the code.
SETTLE_S = 0.3


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # each worker leads its own process group
    except (ProcessLookupError, PermissionError):
        pass


def _stop(procs: Sequence[subprocess.Popen], first: int, grace: float = STOP_GRACE_S) -> None:
    """Send ``first`` to every running worker, then SIGKILL whatever is left after ``grace``."""
    for proc in procs:
        if proc.poll() is None:
            _signal_group(proc, first)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(0.05)
    for proc in procs:
        if proc.poll() is None:
            _signal_group(proc, signal.SIGKILL)
    for proc in procs:
        proc.wait()


class _Terminated(Exception):
    """The launcher itself got SIGTERM (a scheduler's time limit, ``kill``)."""


def _die_with_parent() -> None:  # runs in the child between fork and exec (Linux only)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort: other systems keep orphans running
        pass


def launch_local(
    num_processes: int,
    args: Sequence[str],
    *,
    script: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    all_output: bool = False,
    env: dict[str, str] | None = None,
) -> int:
    """Run ``ldpjax ARGS`` (or ``python SCRIPT ARGS``) as ``num_processes`` JAX processes here.

    Returns the exit code (see the module docstring). The ``ldpjax run NAME --processes N``
    option calls this.
    """
    if isinstance(num_processes, bool) or not isinstance(num_processes, int) or num_processes < 1:
        raise ValueError(f"--processes must be an integer >= 1, got {num_processes!r}")
    if port is not None and not 1 <= int(port) <= 65535:
        raise ValueError(f"--port must be in [1, 65535], got {port}")
    port = free_port(host) if port is None else int(port)
    base = dict(os.environ if env is None else env)
    command = [sys.executable, "-m", "ldpjax_experiments.launch", "--worker"]
    if script is not None:
        command += ["--script", script]
    command += ["--", *args]
    procs: list[subprocess.Popen] = []
    failure: int | None = None

    def on_term(signum, frame):
        raise _Terminated

    try:
        previous = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread: leave SIGTERM alone
        previous = None
    try:
        for pid in range(num_processes):
            child_env = {
                **base,
                ENV_COORDINATOR: f"{host}:{port}",
                ENV_NUM_PROCESSES: str(num_processes),
                ENV_PROCESS_ID: str(pid),
            }
            quiet = pid > 0 and not all_output
            procs.append(subprocess.Popen(
                command, env=child_env, start_new_session=True,
                stdout=subprocess.DEVNULL if quiet else None,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            ))
        while failure is None:
            codes = [p.poll() for p in procs]
            if any(c not in (None, 0) for c in codes):
                # The others fail right after the first (a collective breaks): let them, then
                # report the cause -- a process killed by a signal, else the first failure.
                time.sleep(SETTLE_S)
                codes = [p.poll() for p in procs]
                bad = [c for c in codes if c not in (None, 0)]
                failure = _exit_code(min(bad, key=lambda c: c >= 0))
                break
            if all(c == 0 for c in codes):
                return 0
            time.sleep(0.05)
        # The others wait for the failed process in a collective and cannot finish: end them
        # now (checkpoint chunks are written atomically, so nothing saved is lost; JAX's
        # runtime catches SIGTERM for its preemption notice, so that would not stop them).
        _stop(procs, signal.SIGKILL, grace=0.0)
        return failure
    except KeyboardInterrupt:
        # The workers are in their own sessions (the terminal's Ctrl-C reaches the launcher
        # only): ask them to stop like a Ctrl-C would, then make sure they are gone.
        print("\nldpjax_experiments.launch: interrupted, stopping the processes", file=sys.stderr, flush=True)
        _stop(procs, signal.SIGINT)
        return INTERRUPTED
    except _Terminated:
        _stop(procs, signal.SIGINT)  # as for Ctrl-C: the workers catch SIGTERM themselves
        return 128 + signal.SIGTERM
    finally:
        if any(p.poll() is None for p in procs):
            _stop(procs, signal.SIGKILL, grace=0.0)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def without_option(argv: Sequence[str], option: str = "--processes") -> list[str]:
    """``argv`` without ``option VALUE`` / ``option=VALUE`` (what the workers of
    ``ldpjax run NAME --processes N`` get). Arguments after ``--`` are kept as they are."""
    out: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        arg = items[i]
        if arg == "--":
            out += items[i:]
            break
        if arg == option:
            i += 2
            continue
        if arg.startswith(option + "="):
            i += 1
            continue
        out.append(arg)
        i += 1
    return out


def _command_of(args: Sequence[str]) -> str | None:
    """The ldpjax subcommand in ``args`` (after global options such as ``--plugin FILE``)."""
    items = iter(args)
    for arg in items:
        if arg == "--plugin":
            next(items, None)
        elif not arg.startswith("-"):
            return arg
    return None


def _worker_argv(args: list[str], process_id: int) -> tuple[list[str], str | None]:
    """The CLI arguments for this process; processes > 0 write outputs to a scratch folder."""
    if process_id == 0 or _command_of(args) not in ("run", "reproduce"):
        return args, None
    scratch = tempfile.mkdtemp(prefix=f"ldpjax-process{process_id}-")
    # ``--out`` must name a folder the run may create: a fresh subfolder of the scratch folder.
    return [*args, "--out", os.path.join(scratch, "out"), "--no-progress"], scratch


def _exit_now(code: int) -> None:
    """End a failed worker at once.

    A normal exit would first wait (up to JAX's ``shutdown_timeout_seconds``, 5 minutes) at the
    distributed runtime's shutdown barrier for the other processes, which are themselves
    waiting for this one in a collective: the launcher (or ``srun --kill-on-bad-exit``) could
    not see the failure. Exiting now lets it stop the others.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def run_worker(args: Sequence[str], *, script: str | None = None) -> int:
    """Join the multi-process runtime the environment describes, then run the command.

    In a multi-process run a failure (non-zero code or an exception) ends the process at once
    with that code (1 for an exception, after printing its traceback).
    """
    from ldpjax_experiments import cluster

    try:
        cfg = cluster.initialize()
    except ValueError as err:
        print(f"ldpjax_experiments.launch: error: {err}", file=sys.stderr, flush=True)
        return 2
    if not cfg.multiprocess:
        return _run_command(args, script, 0)
    try:
        code = _run_command(args, script, cfg.process_id)
    except BaseException:  # noqa: BLE001 - report, then skip the shutdown barrier
        import traceback

        traceback.print_exc()
        _exit_now(1)
    if code != 0:
        _exit_now(code)
    return code


def _run_program(run, argv: list[str]) -> int:
    """Run a program (``runpy``) with ``sys.argv = argv``; its exit code."""
    sys.argv = argv
    try:
        run()
    except SystemExit as stop:
        code = stop.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


def _run_command(args: Sequence[str], script: str | None, process_id: int) -> int:
    import runpy

    if script is not None:
        return _run_program(lambda: runpy.run_path(script, run_name="__main__"), [script, *args])
    argv, scratch = _worker_argv(list(args), process_id)
    try:  # the ldpjax program itself (experiments/ldpjax_experiments/__main__.py), as ``python -m ldpjax_experiments`` runs it
        return _run_program(lambda: runpy.run_module("ldpjax_experiments", run_name="__main__"),
                            ["ldpjax", *argv])
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ldpjax_experiments.launch",
        description="Run an ldpjax command as several JAX processes (see ldpjax_experiments.launch).",
        usage="python -m ldpjax_experiments.launch (--processes N | --worker) [--script FILE] -- ARGS...",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--processes", "-n", type=int, help="start N processes on this machine")
    mode.add_argument("--worker", action="store_true",
                      help="be one process: join the runtime from the environment "
                           "(LDPJAX_*, SLURM, LDPJAX_DISTRIBUTED=auto) and run the command")
    parser.add_argument("--script", default=None,
                        help="run this Python file instead of the ldpjax command line")
    parser.add_argument("--port", type=int, default=None,
                        help="coordinator port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--all-output", action="store_true",
                        help="keep the standard output of processes > 0")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        split = argv.index("--")
        own, rest = argv[:split], argv[split + 1:]
    else:
        own, rest = argv, []
    args = _parser().parse_args(own)
    if args.worker:
        return run_worker(rest, script=args.script)
    if not rest and args.script is None:
        _parser().error("nothing to run: give the ldpjax command after --, e.g. -- run demo")
    try:
        return launch_local(args.processes, rest, script=args.script, port=args.port,
                            all_output=args.all_output)
    except ValueError as err:
        print(f"ldpjax_experiments.launch: error: {err}", file=sys.stderr, flush=True)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
