"""Several experiments at once, each in its own process: ``ldpjax reproduce --jobs N``.

Compiling a kernel and running a small one both keep a single core busy, so on a CPU with
more than one core ``reproduce`` runs up to N experiments side by side in spawned worker
processes (a fresh JAX runtime each: never a fork of a running one). Each worker configures JAX
as the command asked (``--x64``, the compile cache), loads the same ``--plugin`` files and runs
an experiment exactly as ``ldpjax run NAME`` would, with the same seeds: every table, figure
and verdict equals the one-at-a-time run's. Its console output goes to ``NAME.log`` beside the
experiment's folder and is printed when it finishes; verdicts come back as
:class:`~ldpjax_experiments.verdicts.Verdict` objects.

On a CPU backend each worker gets its own share of the cores (``sched_setaffinity``, Linux;
:func:`core_groups`): XLA sizes its thread pool by the cores a process may use, and workers
whose pools each span every core spend CPU time contending for them. Pinned workers use less
CPU time and less wall time for byte-identical tables (measured: ``docs/pages/benchmarks.md``,
"Where the time goes"; XLA's CPU results do not depend on its thread count here, and the
tests compare a worker's tables with the one-at-a-time run's). This process is never pinned.

A worker that dies (out of memory, a crash in native code) fails the experiments it had not
finished instead of hanging the run; a Ctrl-C terminates the workers, and the same command
resumes from their saved chunks.
"""

from __future__ import annotations

import atexit
import dataclasses
import multiprocessing
import os
import queue as queue_module
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class JobSettings:
    """What every worker needs to run an experiment as the command asked."""

    size: str
    seeds: int | None
    seed: int
    key_impl: str | None
    rng: str
    x64: bool
    compile_cache: bool
    plugins: tuple[str, ...]
    command: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class JobResult:
    """One experiment's outcome, as the worker reports it."""

    name: str
    status: str  # "ok" or "failed"
    wall_seconds: float
    verdicts: tuple = ()
    output: str | None = None
    error: str | None = None
    log: str = ""


def default_jobs(num_experiments: int) -> int:
    """Cores available to this process (at most 4), one if JAX's default device is not a CPU
    (workers would compete for one accelerator's memory), never more than the experiments."""
    import jax

    if jax.default_backend() != "cpu" or jax.process_count() > 1:
        return 1
    return max(1, min(available_cores(), 4, num_experiments))


def available_cores() -> int:
    """The cores this process may run on (its affinity on Linux, else the CPU count)."""
    return len(_allowed_cores()) or os.cpu_count() or 1


def worker_can_run(experiment) -> bool:
    """Whether a fresh worker resolves ``experiment.name`` to this same experiment: defined in
    ldpjax's experiments package or in a ``--plugin`` file (which every worker loads), not
    registered by code that only this process ran."""
    module = getattr(experiment.run, "__module__", None) or ""
    return module.startswith(("ldpjax_experiments.", "ldpjax_plugin_"))


def core_groups(cores: Sequence[int], jobs: int) -> list[tuple[int, ...]]:
    """Split ``cores`` into ``jobs`` disjoint groups of (nearly) equal size, in order; ``[]``
    when there are fewer cores than jobs (the workers then share them all).

    Example:
      >>> core_groups([0, 1, 2, 3, 4], 2)
      [(0, 1, 2), (3, 4)]
    """
    cores = sorted(cores)
    if jobs < 1 or len(cores) < jobs:
        return []
    size, extra = divmod(len(cores), jobs)
    groups, start = [], 0
    for j in range(jobs):
        stop = start + size + (j < extra)
        groups.append(tuple(cores[start:stop]))
        start = stop
    return groups


def _allowed_cores() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return []


_SETTINGS: JobSettings | None = None
_EVENTS = None  # a queue to the parent: (experiment name, event text), e.g. "started"


def _exit_now() -> None:
    """A worker's last exit handler: leave without tearing JAX down.

    By the time the interpreter runs its exit handlers, multiprocessing has delivered every
    result to the parent and each experiment's files are closed; what is left is freeing the
    compiled kernels and the CPU client, which the pool's shutdown would wait for at the end of
    a ``reproduce`` (measured: ``docs/pages/benchmarks.md``, "Where the time goes").
    JAX's own handler only frees memory and caches (nothing is written at exit). The exit
    status is 0: the parent reads results, not exit codes, and a worker that dies mid-job is
    reported as such by the pool.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _init_worker(settings: JobSettings, groups, events=None) -> None:
    import signal

    global _SETTINGS, _EVENTS
    _SETTINGS = settings
    _EVENTS = events
    if groups is not None:
        # before JAX starts its CPU client, which sizes its thread pool by these cores
        try:
            os.sched_setaffinity(0, groups.get(timeout=60))
        except Exception:  # noqa: BLE001 - pinning only saves CPU time; run unpinned
            pass
    # the parent handles Ctrl-C and terminates the workers; a KeyboardInterrupt raised inside a
    # worker's XLA call would only leave it half-stopped
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from ldpjax_experiments.runner import configure_jax

    configure_jax(x64=settings.x64, compile_cache=settings.compile_cache)
    # registered after JAX's own exit handlers, so it runs first: see _exit_now
    atexit.register(_exit_now)
    from ldpjax_experiments import load_plugin

    for plugin in settings.plugins:
        load_plugin(plugin)


class _Redirect:
    """Send this process's stdout and stderr (file descriptors 1 and 2, so XLA's messages too)
    to ``path`` until exit."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = os.dup(1), os.dup(2)
        self.file = open(self.path, "w", buffering=1)  # noqa: SIM115 - closed in __exit__
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        for fd in self.saved:
            os.close(fd)
        self.file.close()


def _run_job(name: str, out_dir: str, log_path: str) -> JobResult:
    from ldpjax_experiments import get_experiment, run_experiment

    settings = _SETTINGS
    assert settings is not None, "worker not initialised"
    start = time.perf_counter()
    if _EVENTS is not None:
        _EVENTS.put((name, f"started in worker {os.getpid()} (log: {log_path})"))
    with _Redirect(Path(log_path)):
        try:
            result, out = run_experiment(
                get_experiment(name), size=settings.size, seeds=settings.seeds,
                out_dir=out_dir, seed=settings.seed, key_impl=settings.key_impl,
                show_progress=False, rng=settings.rng, command=list(settings.command),
            )
            outcome = dict(status="ok", verdicts=tuple(result.verdicts), output=str(out))
        except Exception as err:  # noqa: BLE001 - report it; the parent fails the run
            traceback.print_exc()
            outcome = dict(status="failed", error=f"{type(err).__name__}: {err}")
    wall = round(time.perf_counter() - start, 1)
    return JobResult(name=name, wall_seconds=wall, log=Path(log_path).read_text(), **outcome)


def run_jobs(
    names: Sequence[str], root: Path, settings: JobSettings, jobs: int,
    on_done: Callable[[JobResult, int], None],
    on_event: Callable[[str, str], None] | None = None,
) -> list[JobResult]:
    """Run ``names`` (already in the order to start them) in ``jobs`` worker processes, each on
    its own share of the cores on a CPU backend.

    ``on_done(result, finished_count)`` is called in this process as each one finishes;
    ``on_event(name, text)`` as a worker reports an event (``"started ..."``), within about a
    second. The results come back in the order of ``names``.
    """
    import jax

    context = multiprocessing.get_context("spawn")
    results: dict[str, JobResult] = {}
    workers = max(1, min(jobs, len(names)))
    # one share of the cores per worker, on a CPU backend only (a GPU run's host threads feed
    # the device; they are left alone)
    groups = core_groups(_allowed_cores(), workers) if jax.default_backend() == "cpu" else []
    queue = None
    if groups and workers > 1:
        queue = context.Queue()
        for group in groups:
            queue.put(group)
    events = context.Queue() if on_event is not None else None
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                   initializer=_init_worker, initargs=(settings, queue, events))

    def drain() -> None:
        while events is not None:
            try:
                on_event(*events.get_nowait())
            except queue_module.Empty:
                return

    try:
        futures = {executor.submit(_run_job, name, str(root / name), str(root / f"{name}.log")):
                   name for name in names}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            drain()
            for future in finished:
                _collect(future, futures[future], results, on_done)
        drain()
    except BaseException:  # Ctrl-C or an error here: stop the workers now
        for child in multiprocessing.active_children():
            child.terminate()
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
    return [results[name] for name in names]


def _collect(future, name: str, results: dict, on_done) -> None:
    """One finished job's result (or why it failed) into ``results``; ``on_done`` told."""
    try:
        result = future.result()
    except BrokenProcessPool:
        result = JobResult(name=name, status="failed", wall_seconds=0.0, error=(
            "its worker process died (out of memory or a crash in native code); rerun "
            f"it alone with: ldpjax reproduce --only {name} --jobs 1"))
    except Exception as err:  # noqa: BLE001 - e.g. a result that did not pickle
        result = JobResult(name=name, status="failed", wall_seconds=0.0,
                           error=f"{type(err).__name__}: {err}")
    results[name] = result
    on_done(result, len(results))


__all__ = [
    "JobResult", "JobSettings", "available_cores", "core_groups", "default_jobs", "run_jobs",
    "worker_can_run",
]

