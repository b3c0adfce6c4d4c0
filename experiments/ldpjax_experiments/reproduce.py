"""``ldpjax reproduce``: run every registered experiment, collect their verdicts, write
``reproduce.json``.

:func:`reproduce` is the whole command but its argument parsing and its closing report: it
chooses the experiments (every one registered ``in_reproduce``, or the ones named), skips those
whose optional data or dependency is missing, runs the rest one by one in this process or in
worker processes (:mod:`ldpjax_experiments.jobs`, the costliest first), and writes
``OUT/reproduce.json`` (the command, size, jobs, timing, one record per experiment and every
verdict row of :func:`~ldpjax_experiments.verdicts.verdict_table`). It returns a typed
:class:`ReproduceResult`; the command line prints its table of outcomes and its verdict table.
Each experiment's own files are written by :func:`~ldpjax_experiments.runner.run_experiment`.

Importing this module does not import JAX (the command line reads the clock first:
:meth:`CommandStart.now`); running it does.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ldpjax_experiments.verdicts import Verdict, verdict_table


@dataclasses.dataclass(frozen=True)
class CommandStart:
    """When a command started: ``time.perf_counter()`` and the CPU seconds used so far
    (:func:`cpu_seconds`); ``reproduce.json`` counts its ``wall_seconds`` and ``cpu_seconds``
    from here.

    Example:
      >>> start = CommandStart.now()
      >>> start.wall <= time.perf_counter()
      True
    """

    wall: float
    cpu: float | None

    @classmethod
    def now(cls) -> CommandStart:
        return cls(wall=time.perf_counter(), cpu=cpu_seconds())


@dataclasses.dataclass(frozen=True)
class ExperimentOutcome:
    """One experiment of a ``reproduce`` run.

    ``status`` is ``"ok"``, ``"failed"`` (``error``: the exception in one line) or ``"skipped"``
    (``reason``: the missing data or dependency, as ``Experiment.requires`` says it);
    ``wall_seconds`` is its running time (``None`` when skipped), ``output`` its folder and
    ``verdicts`` its typed verdicts.

    Example:
      >>> ExperimentOutcome("x", "skipped", reason="no data").as_dict()
      {'experiment': 'x', 'status': 'skipped', 'reason': 'no data'}
    """

    experiment: str
    status: str
    wall_seconds: float | None = None
    output: str | None = None
    error: str | None = None
    reason: str | None = None
    verdicts: tuple[Verdict, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The experiment's record in ``reproduce.json`` (``verdicts``: their number)."""
        if self.status == "skipped":
            return {"experiment": self.experiment, "status": "skipped", "reason": self.reason}
        entry: dict[str, Any] = {"experiment": self.experiment, "status": self.status}
        if self.output is not None:
            entry["output"] = self.output
        if self.error is not None:
            entry["error"] = self.error
        entry["wall_seconds"] = self.wall_seconds
        entry["verdicts"] = len(self.verdicts)
        return entry


@dataclasses.dataclass(frozen=True)
class ReproduceResult:
    """What :func:`reproduce` did, as it wrote it to ``path`` (``ROOT/reproduce.json``).

    ``outcomes`` and ``verdicts`` are in registry order, whatever order the experiments
    finished in; ``verdict_rows`` are the verdicts as written (``verdict_table``).
    ``run_seconds`` spans the experiments' runs; ``wall_seconds`` and ``cpu_seconds`` (this
    process and its workers) run from the command's start to the file; ``jobs`` is the number
    of experiments run at once.
    """

    root: Path
    path: Path
    size: str
    jobs: int
    outcomes: tuple[ExperimentOutcome, ...]
    verdicts: tuple[Verdict, ...]
    verdict_rows: tuple[dict[str, Any], ...]
    run_seconds: float
    wall_seconds: float
    cpu_seconds: float | None
    cores: int
    compile_cache_entries_at_start: int | None

    @property
    def failed(self) -> tuple[str, ...]:
        """The experiments that failed (the command then exits with 1)."""
        return tuple(o.experiment for o in self.outcomes if o.status == "failed")


def reproduce(
    out: str | os.PathLike = "results",
    *,
    only: str | Sequence[str] | None = None,
    size: str = "small",
    seeds: int | None = None,
    seed: int = 0,
    key_impl: str | None = None,
    rng: str = "invariant",
    jobs: int | None = None,
    x64: bool = False,
    compile_cache: bool = True,
    plugins: Sequence[str | os.PathLike] = (),
    show_progress: bool = True,
    quiet: bool = False,
    command: Sequence[str] | None = None,
    started: CommandStart | None = None,
) -> ReproduceResult:
    """Run the experiments of ``ldpjax reproduce`` into ``out`` and write ``out/reproduce.json``.

    Args:
      out: the output folder; experiment ``NAME`` writes under ``out/NAME``. It is checked
        (a folder, writable, free space) and locked before anything runs
        (:func:`~ldpjax_experiments.outdir.claim_output_dir`).
      only: the experiments to run (names, or one comma-separated string), in registry order;
        ``None``: every experiment registered with ``in_reproduce``.
      size, seeds, seed, key_impl, rng: as ``run_experiment``'s, for every experiment
        (``seeds=None``: each experiment's own number for ``size``).
      jobs: experiments run at once, each in its own spawned process
        (:mod:`ldpjax_experiments.jobs`); ``None``: the CPU cores, at most 4, 1 on a GPU or TPU.
        Always 1 in a multi-process JAX run or when an experiment was registered by this
        process only (a worker would not find it).
      x64, compile_cache: set up JAX in this process and in every worker
        (:func:`~ldpjax_experiments.runner.configure_jax`); a worker also runs in float64 when
        this process already does.
      plugins: the ``--plugin`` files every worker loads (this process has loaded them).
      show_progress: progress bars (one by one only; workers never show them).
      quiet: print nothing (each experiment's summary, skipped experiments, workers' logs and
        failures' tracebacks are printed otherwise, as they come).
      command: the command line recorded in ``reproduce.json`` and each ``run.json``
        (default ``sys.argv``).
      started: when the command started (default: now).

    Returns:
      A :class:`ReproduceResult`; an experiment that raised is an outcome with status
      ``"failed"``, not an exception (except a full disk, which stops the run).

    Raises:
      ValueError: an unknown name in ``only``, ``seeds`` or ``jobs`` below 1, or an output
        folder that cannot be used (``OutputDirError``, one line).

    Example (an experiment registered here, so it runs in this process):
      >>> import tempfile
      >>> from ldpjax_experiments import Experiment, ExperimentResult, register
      >>> from ldpjax_experiments.base import _REGISTRY
      >>> _ = register(Experiment("doc-reproduce", "example", in_reproduce=False,
      ...     run=lambda ctx: ExperimentResult(tables={"t": [{"x": 1}]}, summary="ok")))
      >>> with tempfile.TemporaryDirectory() as folder:
      ...     result = reproduce(folder, only="doc-reproduce", quiet=True, show_progress=False,
      ...                        compile_cache=False)
      ...     written = json.loads(result.path.read_text())
      >>> _ = _REGISTRY.pop("doc-reproduce")
      >>> [(o.experiment, o.status) for o in result.outcomes], result.jobs, result.failed
      ([('doc-reproduce', 'ok')], 1, ())
      >>> written["experiments"][0]["status"], written["verdicts"]
      ('ok', [])
    """
    start = CommandStart.now() if started is None else started
    from ldpjax_experiments import list_experiments
    from ldpjax_experiments.outdir import claim_output_dir
    from ldpjax_experiments.runner import configure_jax

    experiments = _choose(list_experiments(), only)
    if seeds is not None and seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    configure_jax(x64=x64, compile_cache=compile_cache)
    import jax

    settings = _Settings(
        size=size, seeds=seeds, seed=seed, key_impl=key_impl, rng=rng, jobs=jobs,
        x64=bool(x64 or jax.config.jax_enable_x64), compile_cache=compile_cache,
        plugins=tuple(str(Path(p).resolve()) for p in plugins),
        command=tuple(sys.argv if command is None else command),
        show_progress=show_progress, quiet=quiet,
    )
    cache_entries = compile_cache_entries()
    with claim_output_dir(out) as root:
        return _reproduce_into(root, experiments, settings, start, cache_entries)


@dataclasses.dataclass(frozen=True)
class _Settings:
    size: str
    seeds: int | None
    seed: int
    key_impl: str | None
    rng: str
    jobs: int | None
    x64: bool
    compile_cache: bool
    plugins: tuple[str, ...]
    command: tuple[str, ...]
    show_progress: bool
    quiet: bool

    def say(self, text: str, *, err: bool = False) -> None:
        if not self.quiet:
            print(text, file=sys.stderr if err else sys.stdout, flush=True)


def _choose(registered: list, only: str | Sequence[str] | None) -> list:
    """The experiments to run, in registry order (``ValueError`` for an unknown name)."""
    if only is None:
        return [e for e in registered if e.in_reproduce]
    wanted = only.split(",") if isinstance(only, str) else list(only)
    wanted = [w.strip() for w in wanted if w.strip()]
    known = {e.name for e in registered}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise ValueError(f"unknown experiment(s) {unknown}; choose from {sorted(known)}")
    return [e for e in registered if e.name in wanted]


def cpu_seconds() -> float | None:
    """User + system CPU time of this process and of its children that have exited (the
    workers, once the pool has shut down); ``None`` where ``resource`` is missing.

    Example:
      >>> cpu_seconds() >= 0
      True
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not Unix
        return None
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def compile_cache_entries() -> int | None:
    """Files in JAX's persistent compile cache now (0: a cold run), ``None`` when it is off.

    Example:
      >>> isinstance(compile_cache_entries(), (int, type(None)))
      True
    """
    import jax

    folder = jax.config.jax_compilation_cache_dir
    if not folder:
        return None
    try:
        return sum(1 for _ in os.scandir(folder))
    except OSError:
        return 0


def _reproduce_into(root: Path, experiments: list, settings: _Settings, start: CommandStart,
                    cache_entries: int | None) -> ReproduceResult:
    from ldpjax_experiments.jobs import available_cores
    from ldpjax_experiments.runner import _jsonable

    outcomes: dict[str, ExperimentOutcome] = {}
    runnable = []
    for experiment in experiments:
        missing = experiment.requires() if experiment.requires is not None else None
        if missing:
            settings.say(f"\n== {experiment.name}: skipped ({missing})")
            outcomes[experiment.name] = ExperimentOutcome(experiment.name, "skipped",
                                                          reason=missing)
        else:
            runnable.append(experiment)
    jobs = _jobs(settings.jobs, runnable)
    clock = time.perf_counter()
    if jobs > 1:
        outcomes.update(_run_parallel(root, runnable, settings, jobs))
    else:
        outcomes.update(_run_here(root, runnable, settings))
    ordered = tuple(outcomes[e.name] for e in experiments)  # registry order
    verdicts = tuple(v for o in ordered for v in o.verdicts)
    # every experiment's verdicts, serialised here once (a row's format is verdict_table's)
    rows = verdict_table(list(verdicts))
    run_seconds = time.perf_counter() - clock
    cpu = cpu_seconds()
    wall = round(time.perf_counter() - start.wall, 2)
    cpu_used = None if cpu is None or start.cpu is None else round(cpu - start.cpu, 2)
    cores = available_cores()
    path = root / "reproduce.json"
    path.write_text(json.dumps(
        _jsonable({"command": list(settings.command), "size": settings.size, "jobs": jobs,
                   # from the command's start to this file, and the CPU time of this process
                   # and of its workers over that span; the compile cache's files when the
                   # command started (0: cold, None: cache off)
                   "wall_seconds": wall,
                   "cpu_seconds": cpu_used,
                   "cores": cores,
                   "compile_cache_entries_at_start": cache_entries,
                   "experiments": [o.as_dict() for o in ordered], "verdicts": rows}), indent=2))
    return ReproduceResult(
        root=root, path=path, size=settings.size, jobs=jobs, outcomes=ordered,
        verdicts=verdicts, verdict_rows=tuple(rows), run_seconds=run_seconds,
        wall_seconds=wall, cpu_seconds=cpu_used, cores=cores,
        compile_cache_entries_at_start=cache_entries,
    )


def _jobs(jobs: int | None, runnable: list) -> int:
    """Experiments to run at once: ``jobs`` (default :func:`~ldpjax_experiments.jobs.default_jobs`),
    at most the experiments, and 1 in a multi-process JAX run or when one was registered in this
    process only (a fresh worker would not find it, or would find another of that name)."""
    import jax

    from ldpjax_experiments.jobs import default_jobs, worker_can_run

    if not all(worker_can_run(e) for e in runnable) or jax.process_count() > 1:
        return 1
    if jobs is None:
        return default_jobs(len(runnable))
    return max(1, min(jobs, len(runnable)))


def _run_here(root: Path, experiments: list,
              settings: _Settings) -> dict[str, ExperimentOutcome]:
    """Run the experiments one by one in this process (with progress bars)."""
    from ldpjax_experiments.runner import run_experiment

    outcomes = {}
    for experiment in experiments:
        start = time.perf_counter()
        output, error, verdicts = None, None, ()
        try:
            result, out = run_experiment(
                experiment, size=settings.size, seeds=settings.seeds,
                out_dir=root / experiment.name, seed=settings.seed, key_impl=settings.key_impl,
                show_progress=settings.show_progress, quiet=settings.quiet, rng=settings.rng,
                command=list(settings.command),
            )
            status, output, verdicts = "ok", str(out), tuple(result.verdicts)
        except OSError as err:
            if err.errno in (errno.ENOSPC, errno.EDQUOT):
                raise  # nothing further can be written: stop with one line
            status, error = "failed", _failure(err, settings)
        except Exception as err:  # noqa: BLE001 - report every experiment, then fail
            status, error = "failed", _failure(err, settings)
        outcomes[experiment.name] = ExperimentOutcome(
            experiment.name, status, wall_seconds=round(time.perf_counter() - start, 1),
            output=output, error=error, verdicts=verdicts)
    return outcomes


def _run_parallel(root: Path, experiments: list, settings: _Settings,
                  jobs: int) -> dict[str, ExperimentOutcome]:
    """Run the experiments in ``jobs`` worker processes (:mod:`ldpjax_experiments.jobs`), the
    costliest first; print each one's console output as it finishes."""
    from ldpjax_experiments.jobs import JobSettings, run_jobs

    job_settings = JobSettings(
        size=settings.size, seeds=settings.seeds, seed=settings.seed,
        key_impl=settings.key_impl, rng=settings.rng, x64=settings.x64,
        compile_cache=settings.compile_cache, plugins=settings.plugins,
        command=settings.command,
    )
    order = sorted(experiments, key=lambda e: -e.cost)  # stable: ties keep the registry order
    settings.say(f"== reproduce: {len(order)} experiments, {jobs} at a time in worker "
                 f"processes (console output in {root}/NAME.log; --jobs 1 runs them one by one "
                 "here)")

    def done(result, finished):
        settings.say(f"\n[{finished}/{len(order)}] {result.name}: {result.status} "
                     f"({result.wall_seconds} s)")
        if result.log.strip():
            settings.say(result.log.rstrip())
        if result.error and result.error not in result.log:
            settings.say(f"ldpjax: {result.name} failed: {result.error}", err=True)

    def event(name, text):
        settings.say(f"[{name}] {text}")

    return {
        result.name: ExperimentOutcome(
            result.name, result.status, wall_seconds=result.wall_seconds,
            output=result.output, error=result.error, verdicts=tuple(result.verdicts))
        for result in run_jobs([e.name for e in order], root, job_settings, jobs, done, event)
    }


def _failure(err: BaseException, settings: _Settings) -> str:
    """The traceback on stderr (unless quiet); the error in one line."""
    settings.say(traceback.format_exc().rstrip(), err=True)
    return f"{type(err).__name__}: {err}"


__all__ = [
    "CommandStart",
    "ExperimentOutcome",
    "ReproduceResult",
    "compile_cache_entries",
    "cpu_seconds",
    "reproduce",
]
