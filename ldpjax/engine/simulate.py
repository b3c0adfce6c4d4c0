"""Run any ldpjax algorithm: ``lax.scan`` over time, ``vmap`` over seeds and parameter grids.

:func:`~ldpjax.engine.rollout` is one run as a pure function (``jit``/``vmap``/``grad``-able).
:func:`simulate` is the batched driver used by every experiment; it is a short loop over the
pieces of the engine:

* :mod:`~ldpjax.engine.checks` -- arguments and the algorithm's ``validate`` hook, before
  compiling;
* :mod:`~ldpjax.engine.rollout` -- the pure scan, the key schedule and the cached kernels;
* :mod:`~ldpjax.engine.plan` -- seed/time chunks, padding to the devices, memory and horizon
  limits;
* :mod:`~ldpjax.engine.fingerprint` and :mod:`~ldpjax.engine.store` -- checkpoint I/O.

Semantics:

* the numeric ``params`` may carry ``grid_ndim`` leading grid axes (privacy levels, clients,
  schedules; see :func:`ldpjax.engine.product_grid`); every grid point runs ``num_seeds`` seeds;
* run ``(grid point g, seed s)`` uses ``init_key, run_key = split(fold_in(key, seed_offset + s))``
  and step t uses ``fold_in(run_key, t)``: the same seed sees the same randomness at every grid
  point (common random numbers), and results do not depend on chunking or device count;
* all runs of a chunk are one flat ``vmap`` axis, sharded over the given devices with a 1-d
  ``Mesh`` + ``NamedSharding`` (generators that cannot be sharded run device by device);
* with ``checkpoint_dir`` every finished seed chunk is written to disk (process 0 only);
  rerunning the same call skips the chunks already there;
* started as several processes (:mod:`~ldpjax.engine.distributed`), each process computes a
  share of the seed chunks on its own devices and every process returns the full result.

Results come back as NumPy arrays of shape ``grid_shape + (num_seeds,) + leaf_shape``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

import ldpjax
from ldpjax.engine import distributed
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
from ldpjax.engine.fingerprint import fingerprint as fingerprint_of
from ldpjax.engine.fingerprint import stable, tree_digest
from ldpjax.engine.grid import grid_shape_of
from ldpjax.engine.keys import (
    UNSHARDABLE_IMPLS,
    as_typed_key,
    convert_key,
    key_impl_name,
    resolve_rng,
)
from ldpjax.engine.plan import ChunkPlan, default_memory_limit, plan_chunks, tree_bytes
from ldpjax.engine.rollout import AXIS, inputs_at, kernels, make_mesh, rollout, run_specs, take
from ldpjax.engine.store import ChunkStore
from ldpjax.mechanisms._domain import no_privacy_permitted
from ldpjax.progress import ProgressBar
from ldpjax.types import PRNGKey, PyTree

# Backwards-compatible name (tests and benchmarks inspect the kernel cache).
_kernels = kernels


@dataclasses.dataclass(frozen=True)
class SimulationInfo:
    """How a :func:`simulate` call ran. Also readable as a mapping (``info["wall_seconds"]``).

    Attributes:
      grid_shape, num_seeds, num_steps, seed_offset: what was run.
      seed_chunk, time_chunk, batch: the chunk plan (``batch``: runs per kernel call, padded).
      num_devices, execution: devices used and how (``"single"``, ``"sharded"`` = one SPMD
        program over a mesh, ``"per_device"`` = one program per device, for generators that
        cannot be sharded).
      rng: the key implementation the runs used (see :mod:`ldpjax.engine.keys`).
      chunks_computed, chunks_loaded: seed chunks computed now / loaded from checkpoints.
      wall_seconds, compile_seconds, run_seconds: time of the call; ``compile_seconds`` is what
        JAX spent tracing, lowering and compiling (0 when every kernel was cached).
      compilations: number of XLA compilations during the call.
      chunk_bytes, result_bytes: the plan's memory estimates (devices per chunk; host result).
      fingerprint: checkpoint fingerprint ("" without ``checkpoint_dir``).
      num_processes: processes that shared the sweep (chunk counts are over all of them).
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
      info: a :class:`SimulationInfo` (also indexable like a dict).
    """

    record: PyTree
    state: PyTree | None
    info: SimulationInfo


# --------------------------------------------------------------------------- placement
class _Executor:
    """Where the runs of a chunk live: one device, one sharded program, or one per device."""

    def __init__(self, devices: Sequence[jax.Device], impl: str):
        self.devices = list(devices)
        if len(self.devices) == 1:
            self.mode, self.mesh = "single", None
        elif impl in UNSHARDABLE_IMPLS:
            self.mode, self.mesh = "per_device", None
        else:
            self.mode, self.mesh = "sharded", make_mesh(self.devices)

    def replicate(self, tree: PyTree) -> Any:
        if self.mode == "single":
            return jax.device_put(tree, self.devices[0])
        if self.mode == "per_device":
            return [jax.device_put(tree, d) for d in self.devices]
        return jax.device_put(tree, NamedSharding(self.mesh, PartitionSpec()))

    def place(self, host: np.ndarray) -> Any:
        """Split the batch axis of ``host`` over the devices."""
        if self.mode == "single":
            return jax.device_put(host, self.devices[0])
        if self.mode == "per_device":
            parts = np.split(host, len(self.devices))
            return [jax.device_put(p, d) for p, d in zip(parts, self.devices, strict=True)]
        sharding = NamedSharding(self.mesh, PartitionSpec(AXIS))
        return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])

    def call(self, fn, *args) -> Any:
        if self.mode == "per_device":
            return [fn(*(a[i] for a in args)) for i in range(len(self.devices))]
        return fn(*args)

    def to_host(self, tree: PyTree) -> PyTree:
        if self.mode == "per_device":
            parts = [_to_host(t) for t in tree]
            return jax.tree_util.tree_map(lambda *xs: np.concatenate(xs, axis=0), *parts)
        return _to_host(tree)


def _to_host(tree: PyTree) -> PyTree:
    def fetch(x):
        if isinstance(x, jax.Array) and not x.is_fully_addressable:
            from jax.experimental import multihost_utils

            return np.asarray(multihost_utils.process_allgather(x, tiled=True))
        return np.asarray(x)

    return jax.tree_util.tree_map(fetch, tree)


# --------------------------------------------------------------------------- driver
def _checkpoint_store(checkpoint_dir, **parts) -> tuple[ChunkStore | None, str]:
    description = {
        **parts,
        "x64": bool(jax.config.jax_enable_x64),
        "jax": jax.__version__,
        "ldpjax": ldpjax.__version__,
    }
    fp = fingerprint_of(description)
    if not distributed.is_main_process():  # multi-process: only process 0 touches the folder
        return None, fp
    return ChunkStore(checkpoint_dir, fp, description), fp


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
    checkpoint_dir: str | os.PathLike | None = None,
    keep_state: bool = True,
    progress: bool | ProgressBar = False,
    tag: str = "",
    common_random_numbers: bool = True,
    rng: str | None = None,
) -> SimulationResult:
    """Run ``algorithm`` for ``num_steps`` steps, for every seed and grid point.

    Args:
      algorithm: an :class:`~ldpjax.engine.Algorithm` (build it once and reuse it: the
        compiled kernels are cached per algorithm and per recorder *value*).
      params: numeric parameters (pytree of arrays). With ``grid_ndim = d`` every leaf has the
        same d leading grid axes. Validated by ``algorithm.validate`` (if any) before compiling.
        float16 / bfloat16 leaves raise ``ValueError``. A +inf budget (mu = inf) in this
        concrete grid means "no noise" at that point (the run is traced inside
        :func:`ldpjax.mechanisms.no_privacy_permitted`); nothing else turns noise off.
      key: PRNG key (typed, any implementation; see :func:`~ldpjax.engine.make_key`).
      num_steps: horizon T (defaults to the length of ``inputs``).
      num_seeds: independent runs per grid point.
      inputs: optional pytree with leading time axis, shared by all runs; step t reads slice t.
      record: a :mod:`~ldpjax.engine.record` recorder (default: outputs of the last step);
        write it by value (``record.total("gain")``) so it is recognised across calls.
      grid_ndim: number of leading grid axes on the params leaves.
      seed_offset: first seed index (run s uses ``fold_in(key, seed_offset + s)``);
        ``seed_offset + num_seeds <= 2**32``.
      seed_chunk: seeds per chunk; default: as many as fit ``memory_limit`` (over several
        processes at most ``ceil(num_seeds / processes)``, so every process gets work).
      time_chunk: steps per compiled scan call (progress and bounded compile size); default T.
      memory_limit: bytes a chunk may use (default :func:`~ldpjax.engine.plan.default_memory_limit`).
      devices: devices to shard the runs over (default: this process's devices,
        ``jax.local_devices()``, i.e. all of them in a single-process program).
      checkpoint_dir: if given, finished seed chunks are saved there and reused on rerun.
      keep_state: return (and save) the final states; False keeps only the records.
      progress: True for a progress bar, or a shared :class:`~ldpjax.progress.ProgressBar`.
      tag: free text folded into the checkpoint fingerprint (bump it after changing code).
      common_random_numbers: if True (default) every grid point uses the same keys for the same
        seed (paired comparisons across privacy levels); if False, grid point g (flat index)
        uses ``fold_in(key, g)`` first, so grid points are independent (e.g. different
        experiments of a portfolio). Either way results do not depend on chunking or devices.
      rng: the generator: ``None`` (default) uses ``key``'s own implementation (philox4x32
        for a key from :func:`~ldpjax.engine.make_key`); ``"invariant"`` the invariant default
        (philox4x32 where JAX offers it, else threefry2x32: 64-bit keys, bit-identical across
        chunks and devices); ``"fast"`` the fastest measured generator on this backend
        (philox2x32 on CPU: 32-bit keys, see :mod:`ldpjax.engine.keys`); or an implementation
        name. Other than ``None``,
        the key is converted deterministically (``rollout(..., rng=...)`` does the same).

    Returns:
      A :class:`SimulationResult` of NumPy arrays and a :class:`SimulationInfo`.

    Raises:
      TypeError / ValueError: naming the argument (and leaf path / grid index) for bad inputs,
        and for sweeps that cannot fit in memory or would run for days (see
        :mod:`ldpjax.engine.plan`).
    """
    check_precision_tree("params", params)
    # A concrete no-noise budget in the grid (mu = inf, gamma = inf, or a claim with mu = inf)
    # means "no noise" at that point: checked here, on the concrete params, it is the only road
    # to a noiseless release.
    permit = (no_privacy_permitted() if grants_no_privacy(algorithm, params)
              else contextlib.nullcontext())
    with permit, CompileTimer() as timer:
        result = _simulate(
            algorithm, params, key, num_steps, num_seeds=num_seeds, inputs=inputs, record=record,
            grid_ndim=grid_ndim, seed_offset=seed_offset, seed_chunk=seed_chunk,
            time_chunk=time_chunk, memory_limit=memory_limit, devices=devices,
            checkpoint_dir=checkpoint_dir, keep_state=keep_state, progress=progress, tag=tag,
            common_random_numbers=common_random_numbers, rng=rng,
        )
    rec, state, info = result
    info = dataclasses.replace(
        info,
        wall_seconds=timer.wall_seconds,
        compile_seconds=timer.compile_seconds,
        run_seconds=timer.run_seconds,
        compilations=timer.compilations,
    )
    return SimulationResult(rec, state, info)


def _prepare(algorithm, params, key, num_steps, num_seeds, inputs, record, grid_ndim,
             seed_offset, seed_chunk, time_chunk, memory_limit, devices, rng):
    """Check every argument; return the concrete, converted pieces."""
    if not isinstance(algorithm, Algorithm):
        raise TypeError("algorithm must be an ldpjax.engine.Algorithm(init, step)")
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
    devices = distributed.local_devices(devices)  # this process's devices (jax.devices() in one)
    if not devices:
        raise ValueError("devices must name at least one device")
    impl = resolve_rng(rng, key, devices[0].platform)
    key = convert_key(key, impl)
    check_numeric_tree("params", params)
    grid_ndim = check_grid_ndim(grid_ndim, params)
    params = jax.tree_util.tree_map(jnp.asarray, params)
    grid_shape = grid_shape_of(params, grid_ndim)
    inputs = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[:num_steps], inputs)
    validate_algorithm(algorithm, params, inputs, grid_shape, grid_ndim)
    return (params, key, num_steps, num_seeds, inputs, grid_ndim, grid_shape, seed_offset,
            seed_chunk, time_chunk, memory_limit, devices, impl)


def _simulate(algorithm, params, key, num_steps, *, num_seeds, inputs, record, grid_ndim,
              seed_offset, seed_chunk, time_chunk, memory_limit, devices, checkpoint_dir,
              keep_state, progress, tag, common_random_numbers, rng):
    (params, key, num_steps, num_seeds, inputs, grid_ndim, grid_shape, seed_offset, seed_chunk,
     time_chunk, memory_limit, devices, impl) = _prepare(
        algorithm, params, key, num_steps, num_seeds, inputs, record, grid_ndim, seed_offset,
        seed_chunk, time_chunk, memory_limit, devices, rng)
    recorder = record if record is not None else record_lib.last()
    num_points = math.prod(grid_shape)
    params_flat = jax.tree_util.tree_map(
        lambda x: x.reshape((num_points,) + x.shape[grid_ndim:]), params
    )
    inputs0 = None if inputs is None else inputs_at(inputs, 0)
    executor = _Executor(devices, impl)

    # Shapes of one run (cached per algorithm/recorder/shapes), to plan chunks and check files.
    state_spec, acc_spec, out_spec, rec_spec = run_specs(
        algorithm, recorder, num_steps, take(params_flat, 0), key, inputs0
    )

    def make_plan(seed_chunk):
        return plan_chunks(
            num_points=num_points, num_seeds=num_seeds, num_steps=num_steps,
            num_devices=len(devices),
            run_bytes=tree_bytes(state_spec) + tree_bytes(acc_spec) + tree_bytes(out_spec),
            record_bytes=tree_bytes(rec_spec) + (tree_bytes(state_spec) if keep_state else 0),
            seed_chunk=seed_chunk, time_chunk=time_chunk,
            memory_limit=memory_limit if memory_limit is not None else default_memory_limit(devices),
        )

    def describe():  # what the records depend on (checkpoint fingerprint, process agreement)
        return dict(
            algorithm=stable(algorithm), recorder=recorder.spec, num_steps=num_steps,
            grid_shape=list(grid_shape), seed_offset=seed_offset, keep_state=keep_state,
            params=tree_digest(params), inputs=tree_digest(inputs),
            key=tree_digest(key) + ":" + key_impl_name(key), tag=tag,
            common_random_numbers=common_random_numbers,
        )

    plan = make_plan(seed_chunk)
    # --- multi-process hook 1/2: same sweep everywhere, one seed chunk for all processes.
    multiprocess = distributed.is_multiprocess()
    if multiprocess:
        agreed = distributed.agree(
            distributed.sweep_digest(sorted(describe().items()), num_seeds), plan.seed_chunk,
            split_seeds=num_seeds if seed_chunk is None else None,
        )
        if agreed != plan.seed_chunk:
            plan = make_plan(agreed)

    store, fp = None, ""
    if checkpoint_dir is not None:
        store, fp = _checkpoint_store(checkpoint_dir, **describe())

    bar = progress if isinstance(progress, ProgressBar) else None
    own_bar = bar is None and bool(progress) and distributed.is_main_process()
    if own_bar:
        bar = ProgressBar(num_seeds * num_steps, desc="simulate")

    keep = (rec_spec, state_spec if keep_state else None)
    leaves_spec, treedef = jax.tree_util.tree_flatten(keep)
    params_dev = executor.replicate(params_flat)
    key_dev = executor.replicate(key)

    def load_chunk(first, stop):
        loaded = store.load(first, stop, len(leaves_spec)) if store is not None else None
        expected = [((num_points, stop - first) + tuple(s.shape), str(s.dtype))
                    for s in leaves_spec]
        if loaded is not None and [(tuple(x.shape), str(x.dtype)) for x in loaded] != expected:
            loaded = None
        return loaded

    def compute_chunk(first, stop, chunk_bar=None):
        return _run_chunk(
            algorithm, recorder, plan, executor, params_dev, key_dev, inputs, inputs0,
            first, stop, seed_offset, keep_state, common_random_numbers, chunk_bar,
        )

    counts = {"computed": 0, "loaded": 0}
    pieces: list[list[np.ndarray]] = []
    if multiprocess:
        # --- multi-process hook 2/2: chunks shared over the processes (process 0 stores).
        pieces, counts["computed"], counts["loaded"] = distributed.run_shared(
            plan.seed_chunks(), leaf_specs=leaves_spec, num_points=num_points,
            seed_chunk=plan.seed_chunk, load=load_chunk if store is not None else None,
            compute=compute_chunk, save=store.save if store is not None else None,
            done=None if bar is None else (lambda seeds: bar.update(seeds * num_steps)),
        )
    else:
        for first, stop in plan.seed_chunks():
            loaded = load_chunk(first, stop)
            if loaded is None:
                loaded = compute_chunk(first, stop, bar)
                if store is not None:
                    store.save(first, stop, loaded)
                counts["computed"] += 1
            else:
                counts["loaded"] += 1
                if bar is not None:
                    bar.update((stop - first) * num_steps)
            pieces.append(loaded)
    if own_bar:
        bar.close()

    merged = [
        np.concatenate([piece[i] for piece in pieces], axis=1).reshape(
            grid_shape + (num_seeds,) + tuple(leaves_spec[i].shape)
        )
        for i in range(len(leaves_spec))
    ]
    rec_out, state_out = jax.tree_util.tree_unflatten(treedef, merged)
    info = SimulationInfo(
        grid_shape=grid_shape, num_seeds=num_seeds, num_steps=num_steps, seed_offset=seed_offset,
        seed_chunk=plan.seed_chunk, time_chunk=plan.time_chunk, batch=plan.batch,
        num_devices=len(devices), execution=executor.mode, rng=impl,
        chunks_computed=counts["computed"], chunks_loaded=counts["loaded"],
        wall_seconds=0.0, compile_seconds=0.0, run_seconds=0.0, compilations=0,
        chunk_bytes=plan.chunk_bytes, result_bytes=plan.result_bytes, fingerprint=fp,
        num_processes=jax.process_count(),
    )
    return rec_out, state_out, info


def _run_chunk(algorithm, recorder, plan: ChunkPlan, executor: _Executor, params_dev, key_dev,
               inputs, inputs0, first, stop, seed_offset, keep_state, crn, bar):
    """Compute seeds ``[first, stop)`` at every grid point; host leaves ``(points, size, ...)``."""
    size = stop - first
    runs = plan.num_points * size
    param_host, seed_host = plan.run_indices(first, stop, seed_offset)
    param_idx, seed_idx = executor.place(param_host), executor.place(seed_host)
    init_fn, _, finalize_fn = kernels(
        algorithm, recorder, plan.num_steps, plan.time_chunk, executor.mesh, crn
    )
    state, acc = _unzip(executor, executor.call(
        init_fn, params_dev, key_dev, param_idx, seed_idx, executor.replicate(inputs0)
    ))
    for t0, length in plan.time_chunks():
        _, advance_fn, _ = kernels(algorithm, recorder, plan.num_steps, length, executor.mesh, crn)
        xs = jax.tree_util.tree_map(lambda x, a=t0, b=t0 + length: x[a:b], inputs)
        state, acc = _unzip(executor, executor.call(
            advance_fn, params_dev, key_dev, param_idx, seed_idx, state, acc,
            executor.replicate(jnp.int32(t0)), executor.replicate(xs),
        ))
        if bar is not None:
            jax.block_until_ready(acc)
            bar.update(size * length)
    rec = executor.call(finalize_fn, acc)
    host = executor.to_host(_zip(executor, rec, state if keep_state else None))
    return [
        x[:runs].reshape((plan.num_points, size) + x.shape[1:])
        for x in jax.tree_util.tree_leaves(host)
    ]


def _unzip(executor, pairs):
    if executor.mode == "per_device":
        return [p[0] for p in pairs], [p[1] for p in pairs]
    return pairs


def _zip(executor, rec, state):
    if executor.mode == "per_device":
        states = state if state is not None else [None] * len(rec)
        return [(r, s) for r, s in zip(rec, states, strict=True)]
    return (rec, state)


__all__ = ["SimulationInfo", "SimulationResult", "default_memory_limit", "rollout", "simulate"]
