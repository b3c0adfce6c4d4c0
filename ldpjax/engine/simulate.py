"""Run any ldpjax algorithm: ``lax.scan`` over time, ``vmap`` over seeds and parameter grids.

:func:`~ldpjax.engine.rollout` is one run as a pure function (``jit``/``vmap``/``grad``-able).
:func:`simulate` is the batched driver used by every experiment; it is a short loop over the
pieces of the engine:

* :mod:`~ldpjax.engine.checks` -- arguments, and the algorithm's ``validate`` hook (or, without
  one, its privacy event at every grid point), before compiling;
* :mod:`~ldpjax.engine.rollout` -- the pure scan, the key schedule and the cached kernels;
* :mod:`~ldpjax.engine.plan` -- seed/time chunks, padding to the devices, memory and horizon
  limits;
* :mod:`~ldpjax.engine.executor` -- placing a chunk on one device, a mesh, or device by device;
* :mod:`~ldpjax.engine.runner` -- where the seed chunks come from and go to (a runner the
  caller passes; by default all computed here, nothing kept);
* :mod:`~ldpjax.engine.digest` -- the process-independent description of what the records
  depend on, handed to the runner.

Semantics:

* the numeric ``params`` may carry ``grid_ndim`` leading grid axes (privacy levels, clients,
  schedules; see :func:`ldpjax.engine.product_grid`); every grid point runs ``num_seeds`` seeds;
* run ``(grid point g, seed s)`` uses ``init_key, run_key = split(fold_in(key, seed_offset + s))``
  and step t uses ``fold_in(run_key, t)``: the same seed sees the same randomness at every grid
  point (common random numbers), and results do not depend on chunking or device count;
* all runs of a chunk are one flat ``vmap`` axis, sharded over the given devices with a 1-d
  ``Mesh`` + ``NamedSharding`` (generators that cannot be sharded run device by device);
* a runner (``runner=``, see :mod:`~ldpjax.engine.runner`) decides which chunks are computed
  here: the default computes all of them; a runner may load chunks saved by an earlier call
  (resume) or share them with other JAX processes. A chunk's records depend only on ``(key,
  seed, step)``, so every runner gives the same records, bit for bit.

Results come back as NumPy arrays of shape ``grid_shape + (num_seeds,) + leaf_shape``.

Simulation, not release: records and inputs are replayed in every run. Every seed and every
grid point reads the same ``inputs`` (a gains matrix) and the same records of a records client
(:func:`ldpjax.quantile.record_clients`), so a sweep of N seeds x P points uses each record
N P times while an algorithm's event claims one run. With a seeded key
(:func:`~ldpjax.engine.make_key`) that is what a study wants. A secure key
(:func:`ldpjax.mechanisms.secure_key`) means real data: ``simulate`` then runs one seed at one
grid point only (``ValueError`` otherwise; :func:`ldpjax.engine.release_run` is that run with
its event), never converts the key (``rng`` must be None), runs in one process and hands
nothing to a runner (``runner`` must be None: nothing of a release key is written to disk).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.engine import record as record_lib
from ldpjax.engine.base import Algorithm
from ldpjax.engine.checks import (
    check_grid_ndim,
    check_int,
    check_numeric_tree,
    check_precision_tree,
    check_seeds,
    grants_no_privacy,
    num_steps_of,
    validate_algorithm,
)
from ldpjax.engine.compile import CompileTimer
from ldpjax.engine.digest import stable, tree_digest
from ldpjax.engine.executor import Executor, local_devices
from ldpjax.engine.grid import grid_shape_of
from ldpjax.engine.hints import ExecutionHints, hints_or_default
from ldpjax.engine.keys import as_typed_key, convert_key, key_impl_name, resolve_rng
from ldpjax.engine.plan import ChunkPlan, default_memory_limit, plan_chunks, tree_bytes
from ldpjax.engine.rollout import (
    inputs_at,
    kernels,
    rollout,
    run_params_spec,
    run_specs,
)
from ldpjax.engine.runner import (
    ChunkOutcome,
    ChunkRunner,
    ChunkWork,
    Leaves,
    ProgressFn,
    check_outcome,
    in_process,
)
from ldpjax.mechanisms._domain import no_privacy_permitted
from ldpjax.mechanisms.secure import is_secure_key
from ldpjax.types import PRNGKey, PyTree

# Backwards-compatible names (tests and benchmarks inspect the kernel cache).
_kernels = kernels
_Executor = Executor


@dataclasses.dataclass(frozen=True)
class SimulationInfo:
    """How a :func:`simulate` call ran (a frozen record; ``info.wall_seconds``).

    ``info["wall_seconds"]``, ``info.get(...)``, ``"rng" in info`` and :meth:`as_dict` are kept
    for callers that read it as a mapping.

    Attributes:
      grid_shape, num_seeds, num_steps, seed_offset: what was run.
      seed_chunk, time_chunk, batch: the chunk plan (``batch``: runs per kernel call, padded).
      num_devices, execution: devices used and how (``"single"``, ``"sharded"`` = one SPMD
        program over a mesh, ``"per_device"`` = one program per device, for generators that
        cannot be sharded).
      rng: the key implementation the runs used (see :mod:`ldpjax.engine.keys`).
      chunks_computed, chunks_loaded: seed chunks computed now / obtained by the runner
        otherwise (loaded from a checkpoint).
      wall_seconds, compile_seconds, run_seconds: time of the call; ``compile_seconds`` is what
        JAX spent tracing, lowering and compiling (0 when every kernel was cached).
      compilations: number of XLA compilations during the call (see :func:`simulate`).
      chunk_bytes, result_bytes: the plan's memory estimates (devices per chunk; host result).
      fingerprint: the runner's fingerprint of the sweep ("" with the default runner).
      num_processes: JAX processes of the program (``jax.process_count()``; a runner that
        shares the sweep counts chunks over all of them).
    """

    grid_shape: tuple[int, ...]
    num_seeds: int
    num_steps: int
    seed_offset: int
    seed_chunk: int
    time_chunk: int
    batch: int
    num_devices: int
    execution: str
    rng: str
    chunks_computed: int
    chunks_loaded: int
    wall_seconds: float
    compile_seconds: float
    run_seconds: float
    compilations: int
    chunk_bytes: int
    result_bytes: int
    fingerprint: str
    num_processes: int = 1

    def __getitem__(self, name: str) -> Any:
        if name not in self.keys():
            raise KeyError(name)
        return getattr(self, name)

    def __contains__(self, name: object) -> bool:
        return name in self.keys()

    def get(self, name: str, default: Any = None) -> Any:
        return getattr(self, name) if name in self.keys() else default

    def keys(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(self))

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["grid_shape"] = list(self.grid_shape)
        return out


class SimulationResult(NamedTuple):
    """What :func:`simulate` returns.

    Attributes:
      record: the recorder's output per run, NumPy arrays of shape
        ``grid_shape + (num_seeds,) + leaf_shape``.
      state: the final algorithm state per run (same leading axes), or None with
        ``keep_state=False``.
      info: a :class:`SimulationInfo`.
    """

    record: PyTree
    state: PyTree | None
    info: SimulationInfo


# --------------------------------------------------------------------------- plan records
@dataclasses.dataclass(frozen=True)
class Sweep:
    """The checked, concrete arguments of one :func:`simulate` call.

    ``params`` keep their grid axes; ``key`` is already converted to the generator ``impl``;
    ``seed_chunk``, ``time_chunk`` and ``memory_limit`` are the caller's requests (None: plan).
    """

    algorithm: Algorithm
    hints: ExecutionHints
    recorder: record_lib.Recorder
    params: PyTree
    key: PRNGKey
    inputs: PyTree
    num_steps: int
    num_seeds: int
    seed_offset: int
    grid_ndim: int
    grid_shape: tuple[int, ...]
    devices: tuple[Any, ...]
    impl: str
    keep_state: bool
    common_random_numbers: bool
    tag: str
    seed_chunk: int | None
    time_chunk: int | None
    memory_limit: int | None

    @property
    def num_points(self) -> int:
        return math.prod(self.grid_shape)

    def description(self) -> dict[str, Any]:
        """What the records depend on (handed to the runner: to fingerprint saved chunks, to
        compare processes)."""
        return dict(
            algorithm=stable(self.algorithm), hints=stable(self.hints),
            recorder=self.recorder.spec,
            num_steps=self.num_steps, grid_shape=list(self.grid_shape),
            seed_offset=self.seed_offset, keep_state=self.keep_state,
            params=tree_digest(self.params), inputs=tree_digest(self.inputs),
            key=tree_digest(self.key) + ":" + key_impl_name(self.key), tag=self.tag,
            common_random_numbers=self.common_random_numbers,
        )


class RunSpecs(NamedTuple):
    """Shapes of one run: algorithm state, recorder accumulator, step outputs, record."""

    state: PyTree
    acc: PyTree
    out: PyTree
    record: PyTree


@dataclasses.dataclass(frozen=True)
class ChunkJob:
    """Everything computing one seed chunk needs (the same for every chunk of a call)."""

    sweep: Sweep
    plan: ChunkPlan
    executor: Executor
    params_dev: Any  # flat params (one row per grid point), on the devices
    key_dev: Any
    inputs0: PyTree  # inputs of step 0 (None without inputs)


# --------------------------------------------------------------------------- public driver
def simulate(
    algorithm: Algorithm,
    params: PyTree,
    key: PRNGKey,
    num_steps: int | None = None,
    *,
    num_seeds: int = 1,
    inputs: PyTree = None,
    record: record_lib.Recorder | None = None,
    grid_ndim: int = 0,
    seed_offset: int = 0,
    seed_chunk: int | None = None,
    time_chunk: int | None = None,
    memory_limit: int | None = None,
    devices: Sequence[jax.Device] | None = None,
    runner: ChunkRunner | None = None,
    keep_state: bool = True,
    progress: ProgressFn | None = None,
    tag: str = "",
    common_random_numbers: bool = True,
    rng: str | None = None,
    hints: ExecutionHints | None = None,
) -> SimulationResult:
    """Run ``algorithm`` for ``num_steps`` steps, for every seed and grid point.

    Simulation: records and inputs are replayed in every run (real data: ``release_run``).

    Args:
      algorithm: an :class:`~ldpjax.engine.Algorithm` (build it once and reuse it: the
        compiled kernels are cached per algorithm and per recorder *value*).
      params: numeric parameters (pytree of arrays). With ``grid_ndim = d`` every leaf has the
        same d leading grid axes. Checked before compiling by ``algorithm.validate``; an
        algorithm without that hook but with a ``privacy_event`` has the event of every grid
        point checked instead (a budget outside its domain, e.g. mu = -1, raises
        ``ValueError`` naming the grid point). float16 / bfloat16 leaves raise ``ValueError``.
        A +inf budget (mu = inf) in this concrete grid means "no noise" at that point (the
        run is traced inside :func:`ldpjax.mechanisms.no_privacy_permitted`); nothing else
        turns noise off.
      key: PRNG key (typed, any implementation; :func:`~ldpjax.engine.make_key`; module doc).
      num_steps, num_seeds: horizon T (default: the length of ``inputs``); runs per point.
      inputs: optional pytree with leading time axis, shared by all runs; step t reads slice t.
      record: a :mod:`~ldpjax.engine.record` recorder (default: outputs of the last step);
        write it by value (``record.total("gain")``) so it is recognised across calls.
      seed_offset: first seed index (run s uses ``fold_in(key, seed_offset + s)``);
        ``seed_offset + num_seeds <= 2**32``.
      seed_chunk: seeds per chunk; default: as many as fit ``memory_limit``.
      time_chunk: steps per compiled scan call (progress and bounded compile size); default T.
      memory_limit: bytes a chunk may use (default :func:`~ldpjax.engine.plan.default_memory_limit`).
      devices: devices to shard the runs over (default: this process's, ``jax.local_devices()``).
      runner: where the seed chunks come from and go to (:mod:`~ldpjax.engine.runner`: e.g.
        resume from saved chunks); None: every chunk computed here, nothing kept.
      keep_state: return (and hand the runner) the final states (False: only the records).
      progress: a callback ``progress(n)``: ``n`` more of the ``num_seeds * num_steps`` (seed,
        step) pairs are done (an object's ``update`` method is taken); None: silent.
      tag: free text in the description a runner fingerprints (bump it after changing code).
      common_random_numbers: if True (default) every grid point uses the same keys for the same
        seed (paired comparisons across privacy levels); if False, grid point g (flat index)
        uses ``fold_in(key, g)`` first, so grid points are independent (e.g. different
        experiments of a portfolio). Either way results do not depend on chunking or devices.
      rng: the generator: ``None`` (default) keeps ``key``'s own; ``"invariant"`` the invariant
        default (philox4x32 where JAX offers it, else threefry2x32); ``"fast"`` the fastest
        measured one on this backend; or an implementation name (see
        :mod:`ldpjax.engine.keys`). The key is then converted deterministically, as in ``rollout``.
      hints: an :class:`~ldpjax.engine.ExecutionHints` (layout, unroll, CPU options; None:
        defaults), e.g. a family's ``ldpjax.experts.EXPERTS_HINTS``: last bits, never the law.

    Returns:
      A :class:`SimulationResult` of NumPy arrays and a :class:`SimulationInfo`.

    Compilations: ``info.compilations`` counts every XLA compilation of the call: three
    kernels per (algorithm, hints, recorder, shapes, devices) -- ``init``, ``advance`` (one per
    time-chunk length), ``finalize`` -- and, on a first call, the eager operations around them
    (shape inference, the step counter, ``jnp`` work in ``validate`` or ``privacy_event``, a
    key conversion): the demo counter's first call on one CPU reports 6, the same call again 0.

    Raises:
      TypeError / ValueError: naming the argument (and leaf path / grid index): bad inputs, a
        secure key with several seeds, points or processes, ``rng`` or a ``runner``, a runner's
        outcome of another sweep, a sweep too big or too long (:mod:`ldpjax.engine.plan`).
    """
    check_precision_tree("params", params)
    on_progress = progress_callback(progress)
    with CompileTimer() as timer:
        sweep = prepare(
            algorithm, params, key, num_steps, num_seeds=num_seeds, inputs=inputs, record=record,
            grid_ndim=grid_ndim, seed_offset=seed_offset, seed_chunk=seed_chunk,
            time_chunk=time_chunk, memory_limit=memory_limit, devices=devices,
            keep_state=keep_state, tag=tag, common_random_numbers=common_random_numbers, rng=rng,
            hints=hints,
        )
        with _no_noise_permit(algorithm, params):  # after the checks, on the params as given
            rec, state, info = run_sweep(sweep, runner, on_progress)
    info = dataclasses.replace(
        info,
        wall_seconds=timer.wall_seconds,
        compile_seconds=timer.compile_seconds,
        run_seconds=timer.run_seconds,
        compilations=timer.compilations,
    )
    return SimulationResult(rec, state, info)


def _no_noise_permit(algorithm: Algorithm, params: PyTree):
    """A concrete no-noise budget in the grid (mu = inf, gamma = inf, or a claim that grants no
    privacy, such as r = 1) means "no noise" at that point: checked here, on the concrete
    params, it is the only road to a noiseless release."""
    if grants_no_privacy(algorithm, params):
        return no_privacy_permitted()
    return contextlib.nullcontext()


def progress_callback(progress: Any) -> ProgressFn | None:
    """``progress`` as a callback: a callable, an object's ``update`` method, or None."""
    if progress is None or progress is False:
        return None
    if progress is True:
        raise TypeError(
            "progress must be a callback progress(n) (e.g. ldpjax_experiments.progress.ProgressBar(total)"
            ".update) or None; the engine draws no progress bar of its own"
        )
    if callable(progress):
        return progress
    update = getattr(progress, "update", None)
    if callable(update):
        return update
    raise TypeError(f"progress must be a callable or None, got {type(progress).__name__}")


# --------------------------------------------------------------------------- checks
def prepare(algorithm, params, key, num_steps, *, num_seeds, inputs, record, grid_ndim,
            seed_offset, seed_chunk, time_chunk, memory_limit, devices, keep_state, tag,
            common_random_numbers, rng, hints=None) -> Sweep:
    """Check every argument of :func:`simulate`; return the concrete, converted :class:`Sweep`."""
    if not isinstance(algorithm, Algorithm):
        raise TypeError("algorithm must be an ldpjax.engine.Algorithm(init, step)")
    hints = hints_or_default(hints)
    if record is not None and not isinstance(record, record_lib.Recorder):
        raise TypeError(f"record must be an ldpjax.engine.record Recorder, got {type(record).__name__}")
    check_numeric_tree("inputs", inputs)
    num_steps = num_steps_of(num_steps, inputs)
    num_seeds, seed_offset = check_seeds(num_seeds, seed_offset)
    if seed_chunk is not None:
        seed_chunk = check_int("seed_chunk", seed_chunk, 1)
    if time_chunk is not None:
        time_chunk = check_int("time_chunk", time_chunk, 1)
    if memory_limit is not None:
        memory_limit = check_int("memory_limit", memory_limit, 1)
    key = as_typed_key(key)
    if key.shape != ():
        raise ValueError(f"key must be a single PRNG key, got a batch of shape {key.shape}")
    devices = local_devices(devices)  # this process's devices (jax.devices() in one)
    if not devices:
        raise ValueError("devices must name at least one device")
    impl = resolve_rng(rng, key, devices[0].platform)  # a secure key: rng None only
    key = convert_key(key, impl)
    check_numeric_tree("params", params)
    grid_ndim = check_grid_ndim(grid_ndim, params)
    params = jax.tree_util.tree_map(jnp.asarray, params)
    grid_shape = grid_shape_of(params, grid_ndim)
    if is_secure_key(key):
        _check_one_release(num_seeds, grid_shape)
    inputs = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[:num_steps], inputs)
    validate_algorithm(algorithm, params, inputs, grid_shape, grid_ndim)
    return Sweep(
        algorithm=algorithm, hints=hints,
        recorder=record if record is not None else record_lib.last(),
        params=params, key=key, inputs=inputs, num_steps=num_steps, num_seeds=num_seeds,
        seed_offset=seed_offset, grid_ndim=grid_ndim, grid_shape=tuple(grid_shape),
        devices=tuple(devices), impl=impl, keep_state=bool(keep_state),
        common_random_numbers=bool(common_random_numbers), tag=tag, seed_chunk=seed_chunk,
        time_chunk=time_chunk, memory_limit=memory_limit,
    )


def _check_runner(key: PRNGKey, runner) -> None:
    """A secure key runs here, in one process, with the default runner (fails closed)."""
    if runner is not None and not callable(runner):
        raise TypeError(f"runner must be a callable runner(work) or None, got "
                        f"{type(runner).__name__}")
    if not is_secure_key(key):
        return
    if runner is not None:
        raise ValueError(
            "runner must be None with a secure key (ldpjax.mechanisms.secure_key()): a release "
            "key is never handed to a runner, which may write the sweep's description (a "
            "digest of the key) or its records to disk, and a one-run release has nothing to "
            "resume"
        )
    if jax.process_count() > 1:
        raise ValueError(
            "a secure key runs in one process (each process draws its own and none is shared); "
            f"this program has {jax.process_count()} processes"
        )


def _check_one_release(num_seeds: int, grid_shape: tuple[int, ...]) -> None:
    """A secure key (real data) runs once: ``ValueError`` for several seeds or grid points.

    Each run reads every record and input again, while the algorithm's event claims one run:
    N seeds x P points would use each record N P times under a once-per-record claim.
    """
    points = math.prod(grid_shape)
    if num_seeds != 1 or points != 1:
        raise ValueError(
            f"a secure key (real data) runs one seed at one grid point; got num_seeds={num_seeds} "
            f"and {points} grid point(s) (grid shape {tuple(grid_shape)}): every run would read "
            f"each record and input again, {num_seeds * points} uses under a once-per-record "
            "claim. Release with ldpjax.engine.release_run (one run and its event), or run the "
            "uses yourself and claim their composition (ldpjax.accounting.SelfComposedEvent)"
        )


# --------------------------------------------------------------------------- the chunk loop
def run_sweep(sweep: Sweep, runner: ChunkRunner | None, progress: ProgressFn | None):
    """Plan the chunks and hand them to ``runner``; ``(record, state, info)`` (times left 0)."""
    _check_runner(sweep.key, runner)
    params_flat = jax.tree_util.tree_map(
        lambda x: x.reshape((sweep.num_points,) + x.shape[sweep.grid_ndim:]), sweep.params
    )
    inputs0 = None if sweep.inputs is None else inputs_at(sweep.inputs, 0)
    specs = RunSpecs(*run_specs(sweep.algorithm, sweep.recorder, sweep.num_steps,
                                run_params_spec(params_flat), sweep.key, inputs0))
    executor = Executor(sweep.devices, sweep.impl)
    params_dev, key_dev = executor.replicate(params_flat), executor.replicate(sweep.key)
    leaves_spec, treedef = jax.tree_util.tree_flatten(
        (specs.record, specs.state if sweep.keep_state else None))
    description, call = sweep.description(), object()

    def work_for(seed_chunk: int | None) -> ChunkWork:
        plan = _make_plan(sweep, specs, seed_chunk)
        job = ChunkJob(sweep, plan, executor, params_dev, key_dev, inputs0)
        return ChunkWork(
            description=description, num_seeds=sweep.num_seeds, num_steps=sweep.num_steps,
            num_points=sweep.num_points, seed_chunk=plan.seed_chunk,
            seed_chunk_chosen=sweep.seed_chunk is not None, chunks=tuple(plan.seed_chunks()),
            leaf_specs=tuple(leaves_spec), progress=progress,
            _compute=lambda first, stop, told: run_chunk(job, first, stop, told),
            _replan=work_for, _call=call,
        )

    work = work_for(sweep.seed_chunk)
    outcome: ChunkOutcome = check_outcome(work, (runner or in_process)(work))
    plan = _make_plan(sweep, specs, outcome.work.seed_chunk)
    merged = [
        np.concatenate([piece[i] for piece in outcome.pieces], axis=1).reshape(
            sweep.grid_shape + (sweep.num_seeds,) + tuple(spec.shape)
        )
        for i, spec in enumerate(leaves_spec)
    ]
    rec_out, state_out = jax.tree_util.tree_unflatten(treedef, merged)
    info = SimulationInfo(
        grid_shape=sweep.grid_shape, num_seeds=sweep.num_seeds, num_steps=sweep.num_steps,
        seed_offset=sweep.seed_offset, seed_chunk=plan.seed_chunk, time_chunk=plan.time_chunk,
        batch=plan.batch, num_devices=len(sweep.devices), execution=executor.mode,
        rng=sweep.impl, chunks_computed=int(outcome.computed), chunks_loaded=int(outcome.loaded),
        wall_seconds=0.0, compile_seconds=0.0, run_seconds=0.0, compilations=0,
        chunk_bytes=plan.chunk_bytes, result_bytes=plan.result_bytes,
        fingerprint=str(outcome.fingerprint), num_processes=jax.process_count(),
    )
    return rec_out, state_out, info


def _make_plan(sweep: Sweep, specs: RunSpecs, seed_chunk: int | None) -> ChunkPlan:
    memory = sweep.memory_limit
    return plan_chunks(
        num_points=sweep.num_points, num_seeds=sweep.num_seeds, num_steps=sweep.num_steps,
        num_devices=len(sweep.devices),
        run_bytes=tree_bytes(specs.state) + tree_bytes(specs.acc) + tree_bytes(specs.out),
        record_bytes=tree_bytes(specs.record) + (tree_bytes(specs.state) if sweep.keep_state
                                                 else 0),
        seed_chunk=seed_chunk, time_chunk=sweep.time_chunk,
        memory_limit=memory if memory is not None else default_memory_limit(list(sweep.devices)),
    )


def run_chunk(job: ChunkJob, first: int, stop: int, progress: ProgressFn | None = None) -> Leaves:
    """Compute seeds ``[first, stop)`` at every grid point; host leaves ``(points, size, ...)``."""
    sweep, plan, executor = job.sweep, job.plan, job.executor
    size = stop - first
    runs = plan.num_points * size
    param_host, seed_host = plan.run_indices(first, stop, sweep.seed_offset)
    param_idx, seed_idx = executor.place(param_host), executor.place(seed_host)
    crn = sweep.common_random_numbers
    # hints grid_major, one device, no padding (run_indices is then grid-major blocks of the
    # same seeds): the grid-major advance
    hints = sweep.hints
    grid_major = hints.grid_major and executor.mode == "single" and plan.batch == runs
    grid_points = plan.num_points if grid_major else None
    init_fn, _, finalize_fn = kernels(
        sweep.algorithm, sweep.recorder, plan.num_steps, plan.time_chunk, executor.mesh, crn,
        None, hints,
    )
    state, acc = executor.unzip(executor.call(
        init_fn, job.params_dev, job.key_dev, param_idx, seed_idx, executor.replicate(job.inputs0)
    ))
    for t0, length in plan.time_chunks():
        _, advance_fn, _ = kernels(
            sweep.algorithm, sweep.recorder, plan.num_steps, length, executor.mesh, crn,
            grid_points, hints,
        )
        xs = jax.tree_util.tree_map(lambda x, a=t0, b=t0 + length: x[a:b], sweep.inputs)
        state, acc = executor.unzip(executor.call(
            advance_fn, job.params_dev, job.key_dev, param_idx, seed_idx, state, acc,
            executor.replicate(jnp.int32(t0)), executor.replicate(xs),
        ))
        if progress is not None:
            jax.block_until_ready(acc)
            progress(size * length)
    rec = executor.call(finalize_fn, acc)
    host = executor.to_host(executor.zip(rec, state if sweep.keep_state else None))
    return [
        x[:runs].reshape((plan.num_points, size) + x.shape[1:])
        for x in jax.tree_util.tree_leaves(host)
    ]


__all__ = ["SimulationInfo", "SimulationResult", "default_memory_limit", "rollout", "simulate"]
