"""Several experiments at once, each in its own process: ``ldpjax reproduce --jobs N``.

Compiling a kernel and running a small one both keep a single core busy, so on a CPU with
more than one core ``reproduce`` runs up to N experiments side by side in spawned worker
processes (a fresh JAX runtime each: never a fork of a running one). Each worker configures JAX
as the command asked (``--x64``, the compile cache), loads the same ``--plugin`` files and runs
an experiment exactly as ``ldpjax run NAME`` would, with the same seeds: every table, figure
and verdict equals the one-at-a-time run's. Its console output goes to ``NAME.log`` beside the
experiment's folder and is printed when it finishes; verdicts come back as
:class:`~ldpjax.experiments.verdicts.Verdict` objects.

A worker that dies (out of memory, a crash in native code) fails the experiments it had not
finished instead of hanging the run; a Ctrl-C terminates the workers, and the same command
resumes from their saved chunks.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
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
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4, num_experiments))


def worker_can_run(experiment) -> bool:
    """Whether a fresh worker resolves ``experiment.name`` to this same experiment: defined in
    ldpjax's experiments package or in a ``--plugin`` file (which every worker loads), not
    registered by code that only this process ran."""
    module = getattr(experiment.run, "__module__", None) or ""
    return module.startswith(("ldpjax.experiments.", "ldpjax_plugin_"))


_SETTINGS: JobSettings | None = None


def _init_worker(settings: JobSettings) -> None:
    import signal

    global _SETTINGS
    _SETTINGS = settings
    # the parent handles Ctrl-C and terminates the workers; a KeyboardInterrupt raised inside a
    # worker's XLA call would only leave it half-stopped
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from ldpjax.experiments.runner import configure_jax

    configure_jax(x64=settings.x64, compile_cache=settings.compile_cache)
    from ldpjax.experiments import load_plugin

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
    from ldpjax.experiments import get_experiment, run_experiment

    settings = _SETTINGS
    assert settings is not None, "worker not initialised"
    start = time.perf_counter()
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
) -> list[JobResult]:
    """Run ``names`` (already in the order to start them) in ``jobs`` worker processes.

    ``on_done(result, finished_count)`` is called in this process as each one finishes; the
    results come back in the order of ``names``.
    """
    context = multiprocessing.get_context("spawn")
    results: dict[str, JobResult] = {}
    executor = ProcessPoolExecutor(max_workers=jobs, mp_context=context,
                                   initializer=_init_worker, initargs=(settings,))
    try:
        futures = {executor.submit(_run_job, name, str(root / name), str(root / f"{name}.log")):
                   name for name in names}
        for future in as_completed(futures):
            name = futures[future]
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
    except BaseException:  # Ctrl-C or an error here: stop the workers now
        for child in multiprocessing.active_children():
            child.terminate()
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
    return [results[name] for name in names]


__all__ = ["JobResult", "JobSettings", "default_jobs", "run_jobs", "worker_can_run"]

