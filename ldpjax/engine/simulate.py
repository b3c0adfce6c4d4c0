"""Run any ldpjax algorithm: ``lax.scan`` over time, ``vmap`` over seeds and parameter grids.

:func:`rollout` is one run as a pure function (``jit``/``vmap``/``grad``-able).
:func:`simulate` is the batched driver used by every experiment:

* the numeric ``params`` may carry ``grid_ndim`` leading grid axes (privacy levels, clients,
  schedules; see :func:`ldpjax.engine.product_grid`); every grid point runs ``num_seeds`` seeds;
* run ``(grid point g, seed s)`` uses ``init_key, run_key = split(fold_in(key, seed_offset + s))``
  and step t uses ``fold_in(run_key, t)``: the same seed sees the same randomness at every grid
  point (common random numbers), and results do not depend on chunking;
* all runs of a chunk are one flat ``vmap`` axis, sharded over the given devices with a 1-d
  ``Mesh`` + ``NamedSharding``; seeds are processed in chunks that fit a memory budget and,
  optionally, time in chunks (for progress on long horizons);
* with ``checkpoint_dir`` every finished seed chunk is written to disk (see
  :mod:`ldpjax.engine.store`); rerunning the same call skips the chunks already there.

Results come back as NumPy arrays of shape ``grid_shape + (num_seeds,) + leaf_shape``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import os
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import ldpjax
from ldpjax.engine import record as record_lib
from ldpjax.engine.base import Algorithm
from ldpjax.engine.grid import grid_shape_of
from ldpjax.engine.keys import as_typed_key, key_impl_name, seed_keys
from ldpjax.engine.store import ChunkStore
from ldpjax.progress import ProgressBar
from ldpjax.types import PRNGKey, PyTree

_AXIS = "runs"


class SimulationResult(NamedTuple):
    """What :func:`simulate` returns.

    Attributes:
      record: the recorder's output per run, NumPy arrays of shape
        ``grid_shape + (num_seeds,) + leaf_shape``.
      state: the final algorithm state per run (same leading axes), or None with
        ``keep_state=False``.
      info: dict with ``grid_shape``, ``num_seeds``, ``seed_chunk``, ``num_devices``,
        ``chunks_computed``, ``chunks_loaded``, ``wall_seconds`` and ``fingerprint``.
    """

    record: PyTree
    state: PyTree | None
    info: dict[str, Any]


# --------------------------------------------------------------------------- single run
def _inputs_at(inputs: PyTree, t: int) -> PyTree:
    return jax.tree_util.tree_map(lambda x: x[t], inputs)


def _run_key(key, stream):
    """The key a run's seed is folded into: ``key``, or ``fold_in(key, stream)`` per grid point."""
    return key if stream is None else jax.random.fold_in(key, stream)


def _init_run(algorithm, recorder, num_steps, params, key, seed_index, inputs0, stream=None):
    init_key, run_key = seed_keys(_run_key(key, stream), seed_index)
    state = algorithm.init(params, init_key)
    _, out_spec = jax.eval_shape(algorithm.step, params, state, inputs0, run_key)
    return state, recorder.init(out_spec, num_steps)


def _advance(
    algorithm, recorder, num_steps, length, params, key, seed_index, state, acc, t0, xs,
    stream=None,
):
    _, run_key = seed_keys(_run_key(key, stream), seed_index)
    times = t0 + jnp.arange(length, dtype=jnp.int32)

    def body(carry, scanned):
        state, acc = carry
        t, inputs_t = scanned
        state, outputs = algorithm.step(params, state, inputs_t, jax.random.fold_in(run_key, t))
        return (state, recorder.update(acc, outputs, t, num_steps)), None

    (state, acc), _ = jax.lax.scan(body, (state, acc), (times, xs), length=length)
    return state, acc


def rollout(
    algorithm: Algorithm,
    params: PyTree,
    key: PRNGKey,
    num_steps: int | None = None,
    *,
    inputs: PyTree = None,
    record: record_lib.Recorder | None = None,
    seed_index: int = 0,
) -> tuple[PyTree, PyTree]:
    """One run of ``num_steps`` steps as a pure function: returns ``(final_state, record)``.

    Uses exactly the keys of run ``seed_index`` in :func:`simulate`, so
    ``rollout(..., seed_index=s)`` reproduces seed s of a sweep. ``jit``/``vmap``/``grad``-able
    (gradients flow through the scan to the numeric ``params``).
    """
    num_steps = _num_steps(num_steps, inputs)
    recorder = record if record is not None else record_lib.last()
    key = as_typed_key(key)
    inputs = jax.tree_util.tree_map(lambda x: x[:num_steps], inputs)
    inputs0 = None if inputs is None else _inputs_at(inputs, 0)
    state, acc = _init_run(algorithm, recorder, num_steps, params, key, seed_index, inputs0)
    state, acc = _advance(
        algorithm, recorder, num_steps, num_steps, params, key, seed_index, state, acc, 0, inputs
    )
    return state, recorder.finalize(acc, num_steps)


# --------------------------------------------------------------------------- batched kernels
def _take(params_flat, index):
    return jax.tree_util.tree_map(lambda x: x[index], params_flat)


@functools.lru_cache(maxsize=256)
def _kernels(algorithm, recorder, num_steps, length, mesh, common_random_numbers=True):
    """Jitted batched init / advance / finalize for one static configuration (cached)."""
    out_sharding = None if mesh is None else NamedSharding(mesh, PartitionSpec(_AXIS))

    def stream(p):
        return None if common_random_numbers else p

    def init(params_flat, key, param_idx, seed_idx, inputs0):
        def one(p, s):
            return _init_run(
                algorithm, recorder, num_steps, _take(params_flat, p), key, s, inputs0, stream(p)
            )

        return jax.vmap(one)(param_idx, seed_idx)

    def advance(params_flat, key, param_idx, seed_idx, state, acc, t0, xs):
        def one(p, s, state, acc):
            return _advance(
                algorithm, recorder, num_steps, length, _take(params_flat, p), key, s, state, acc,
                t0, xs, stream(p),
            )

        return jax.vmap(one)(param_idx, seed_idx, state, acc)

    def finalize(acc):
        return jax.vmap(lambda a: recorder.finalize(a, num_steps))(acc)

    jit = functools.partial(jax.jit, out_shardings=out_sharding)
    # Donating the carried state saves memory on accelerators; CPU cannot use donated buffers.
    donate = () if jax.default_backend() == "cpu" else (4, 5)
    return jit(init), jit(advance, donate_argnums=donate), jit(finalize)


# --------------------------------------------------------------------------- fingerprints
def _code_digest(code) -> str:
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode()]
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            parts.append(_code_digest(const).encode())
        else:
            parts.append(repr(const).encode())
    return hashlib.sha256(b"|".join(parts)).hexdigest()[:16]


def _stable(obj: Any, depth: int = 0) -> str:
    """A process-independent description of configs and callables (no memory addresses)."""
    if depth > 6:
        return type(obj).__qualname__
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return repr(obj)
    if isinstance(obj, (np.ndarray, jax.Array, np.generic)):
        arr = np.asarray(obj)
        return f"array{arr.shape}{arr.dtype}:{hashlib.sha256(arr.tobytes()).hexdigest()[:16]}"
    if isinstance(obj, functools.partial):
        return (
            f"partial({_stable(obj.func, depth + 1)},{_stable(obj.args, depth + 1)},"
            f"{_stable(obj.keywords, depth + 1)})"
        )
    if hasattr(obj, "_fields") and isinstance(obj, tuple):
        inner = ",".join(f"{k}={_stable(getattr(obj, k), depth + 1)}" for k in obj._fields)
        return f"{type(obj).__qualname__}({inner})"
    if isinstance(obj, (tuple, list)):
        return "(" + ",".join(_stable(x, depth + 1) for x in obj) + ")"
    if isinstance(obj, dict):
        return "{" + ",".join(f"{k!r}:{_stable(obj[k], depth + 1)}" for k in sorted(obj)) + "}"
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        inner = ",".join(
            f"{f.name}={_stable(getattr(obj, f.name), depth + 1)}" for f in dataclasses.fields(obj)
        )
        return f"{type(obj).__qualname__}({inner})"
    code = getattr(obj, "__code__", None)
    if code is not None:
        cells = getattr(obj, "__closure__", None) or ()
        closure = ",".join(_stable(c.cell_contents, depth + 1) for c in cells if _filled(c))
        return f"{obj.__module__}.{obj.__qualname__}#{_code_digest(code)}[{closure}]"
    if callable(obj):
        return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"
    return type(obj).__qualname__


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018
        return True
    except ValueError:
        return False


def _tree_digest(tree: PyTree) -> str:
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    h = hashlib.sha256(str(treedef).encode())
    for leaf in leaves:
        if isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        arr = np.asarray(leaf)
        h.update(f"{arr.shape}{arr.dtype}".encode())
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


# --------------------------------------------------------------------------- helpers
def _num_steps(num_steps: int | None, inputs: PyTree) -> int:
    lengths = {int(jnp.shape(x)[0]) for x in jax.tree_util.tree_leaves(inputs)}
    if len(lengths) > 1:
        raise ValueError(f"every inputs leaf needs the same leading time axis, got {lengths}")
    if num_steps is None:
        if not lengths:
            raise ValueError("num_steps is required when there are no inputs")
        num_steps = lengths.pop()
    elif lengths and lengths.pop() < num_steps:
        raise ValueError(f"inputs have fewer than num_steps={num_steps} time steps")
    if isinstance(num_steps, bool) or int(num_steps) != num_steps or num_steps < 1:
        raise ValueError(f"num_steps must be an integer >= 1, got {num_steps!r}")
    return int(num_steps)


def _tree_bytes(tree: PyTree) -> int:
    return sum(
        math.prod(x.shape) * np.dtype(x.dtype).itemsize
        for x in jax.tree_util.tree_leaves(tree)
        if not jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)
    )


def default_memory_limit(devices: Sequence[jax.Device]) -> int:
    """Bytes one chunk may use: 40% of accelerator memory, or 1/4 of RAM (<= 8 GiB) on CPU."""
    try:
        stats = devices[0].memory_stats() or {}
    except Exception:  # noqa: BLE001 - backends without memory stats
        stats = {}
    if "bytes_limit" in stats:
        return int(0.4 * stats["bytes_limit"]) * len(devices)
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        ram = 8 * 2**30
    return int(min(ram // 4, 8 * 2**30))


def _to_host(tree: PyTree) -> PyTree:
    def fetch(x):
        if isinstance(x, jax.Array) and not x.is_fully_addressable:
            from jax.experimental import multihost_utils

            return np.asarray(multihost_utils.process_allgather(x, tiled=True))
        return np.asarray(x)

    return jax.tree_util.tree_map(fetch, tree)


def _place(mesh: Mesh | None, host: np.ndarray) -> jax.Array:
    if mesh is None:
        return jnp.asarray(host)
    sharding = NamedSharding(mesh, PartitionSpec(_AXIS))
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def _replicate(mesh: Mesh | None, tree: PyTree) -> PyTree:
    if mesh is None:
        return tree
    return jax.device_put(tree, NamedSharding(mesh, PartitionSpec()))


# --------------------------------------------------------------------------- driver
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
) -> SimulationResult:
    """Run ``algorithm`` for ``num_steps`` steps, for every seed and grid point.

    Args:
      algorithm: an :class:`~ldpjax.engine.Algorithm` (build it once and reuse it: the
        compiled kernels are cached per algorithm object).
      params: numeric parameters (pytree of arrays). With ``grid_ndim = d`` every leaf has the
        same d leading grid axes.
      key: PRNG key (typed, any implementation; see :func:`~ldpjax.engine.make_key`).
      num_steps: horizon T (defaults to the length of ``inputs``).
      num_seeds: independent runs per grid point.
      inputs: optional pytree with leading time axis, shared by all runs; step t reads slice t.
      record: a :mod:`~ldpjax.engine.record` recorder (default: outputs of the last step).
      grid_ndim: number of leading grid axes on the params leaves.
      seed_offset: first seed index (run s uses ``fold_in(key, seed_offset + s)``).
      seed_chunk: seeds per chunk; default: as many as fit ``memory_limit``.
      time_chunk: steps per compiled scan call (progress and bounded compile size); default T.
      memory_limit: bytes a chunk may use (default :func:`default_memory_limit`).
      devices: devices to shard the runs over (default: all of ``jax.devices()``).
      checkpoint_dir: if given, finished seed chunks are saved there and reused on rerun.
      keep_state: return (and save) the final states; False keeps only the records.
      progress: True for a progress bar, or a shared :class:`~ldpjax.progress.ProgressBar`.
      tag: free text folded into the checkpoint fingerprint (bump it after changing code).
      common_random_numbers: if True (default) every grid point uses the same keys for the same
        seed (paired comparisons across privacy levels); if False, grid point g (flat index)
        uses ``fold_in(key, g)`` first, so grid points are independent (e.g. different
        experiments of a portfolio). Either way results do not depend on chunking or devices.

    Returns:
      A :class:`SimulationResult` of NumPy arrays.
    """
    started = time.perf_counter()
    if not isinstance(algorithm, Algorithm):
        raise TypeError("algorithm must be an ldpjax.engine.Algorithm(init, step)")
    num_steps = _num_steps(num_steps, inputs)
    if isinstance(num_seeds, bool) or int(num_seeds) != num_seeds or num_seeds < 1:
        raise ValueError(f"num_seeds must be an integer >= 1, got {num_seeds!r}")
    num_seeds = int(num_seeds)
    if seed_offset < 0:
        raise ValueError(f"seed_offset must be >= 0, got {seed_offset}")
    recorder = record if record is not None else record_lib.last()
    key = as_typed_key(key)
    params = jax.tree_util.tree_map(jnp.asarray, params)
    grid_shape = grid_shape_of(params, grid_ndim)
    num_points = math.prod(grid_shape)
    params_flat = jax.tree_util.tree_map(
        lambda x: x.reshape((num_points,) + x.shape[grid_ndim:]), params
    )
    inputs = jax.tree_util.tree_map(lambda x: jnp.asarray(x)[:num_steps], inputs)
    inputs0 = None if inputs is None else _inputs_at(inputs, 0)

    devices = list(devices) if devices is not None else jax.devices()
    mesh = Mesh(np.asarray(devices), (_AXIS,)) if len(devices) > 1 else None
    num_devices = len(devices)
    time_chunk = num_steps if time_chunk is None else max(1, min(int(time_chunk), num_steps))

    # Shapes of one run, to size chunks and to check loaded files.
    one_params = _take(params_flat, 0)
    state_spec, acc_spec = jax.eval_shape(
        lambda: _init_run(algorithm, recorder, num_steps, one_params, key, 0, inputs0)
    )
    _, out_spec = jax.eval_shape(algorithm.step, one_params, state_spec, inputs0, key)
    rec_spec = jax.eval_shape(lambda a: recorder.finalize(a, num_steps), acc_spec)
    if seed_chunk is None:
        limit = memory_limit if memory_limit is not None else default_memory_limit(devices)
        per_run = 4 * (_tree_bytes(state_spec) + _tree_bytes(acc_spec) + _tree_bytes(out_spec))
        seed_chunk = max(1, min(num_seeds, limit // max(1, num_points * (per_run + 1024))))
    seed_chunk = int(seed_chunk)
    if seed_chunk < 1:
        raise ValueError(f"seed_chunk must be >= 1, got {seed_chunk}")

    store = None
    fingerprint = ""
    if checkpoint_dir is not None:
        description = {
            "algorithm": _stable(algorithm),
            "recorder": recorder.spec,
            "num_steps": num_steps,
            "grid_shape": list(grid_shape),
            "seed_offset": seed_offset,
            "keep_state": keep_state,
            "params": _tree_digest(params),
            "inputs": _tree_digest(inputs),
            "key": _tree_digest(key) + ":" + key_impl_name(key),
            "x64": bool(jax.config.jax_enable_x64),
            "jax": jax.__version__,
            "ldpjax": ldpjax.__version__,
            "tag": tag,
            "common_random_numbers": common_random_numbers,
        }
        fingerprint = hashlib.sha256(repr(sorted(description.items())).encode()).hexdigest()
        store = ChunkStore(checkpoint_dir, fingerprint, description)

    bar = progress if isinstance(progress, ProgressBar) else None
    own_bar = bar is None and bool(progress)
    if own_bar:
        bar = ProgressBar(num_seeds * num_steps, desc="simulate")

    params_dev = _replicate(mesh, params_flat)
    key_dev = _replicate(mesh, key)
    keep = (rec_spec, state_spec if keep_state else None)
    leaves_spec, treedef = jax.tree_util.tree_flatten(keep)
    chunks_loaded = chunks_computed = 0
    pieces: list[list[np.ndarray]] = []
    for first in range(0, num_seeds, seed_chunk):
        stop = min(num_seeds, first + seed_chunk)
        size = stop - first
        expected = [(num_points, size) + tuple(s.shape) for s in leaves_spec]
        loaded = store.load(first, stop, len(leaves_spec)) if store is not None else None
        if loaded is not None and [tuple(x.shape) for x in loaded] != expected:
            loaded = None
        if loaded is not None:
            pieces.append(loaded)
            chunks_loaded += 1
            if bar is not None:
                bar.update(size * num_steps)
            continue
        runs = num_points * size
        # Every chunk has the same (padded) batch shape, so the kernels compile once; padding
        # repeats the last run and is dropped afterwards.
        padded = -(-(num_points * seed_chunk) // num_devices) * num_devices
        run_ids = np.minimum(np.arange(padded), runs - 1)
        param_idx = _place(mesh, (run_ids // size).astype(np.int32))
        seed_idx = _place(mesh, (seed_offset + first + run_ids % size).astype(np.int32))
        init_fn, _, finalize_fn = _kernels(
            algorithm, recorder, num_steps, time_chunk, mesh, common_random_numbers
        )
        state, acc = init_fn(params_dev, key_dev, param_idx, seed_idx, _replicate(mesh, inputs0))
        for t0 in range(0, num_steps, time_chunk):
            length = min(time_chunk, num_steps - t0)
            _, advance_fn, _ = _kernels(
                algorithm, recorder, num_steps, length, mesh, common_random_numbers
            )
            xs = jax.tree_util.tree_map(lambda x, a=t0, b=t0 + length: x[a:b], inputs)
            state, acc = advance_fn(
                params_dev, key_dev, param_idx, seed_idx, state, acc,
                _replicate(mesh, jnp.int32(t0)), _replicate(mesh, xs),
            )
            if bar is not None:
                jax.block_until_ready(acc)
                bar.update(size * length)
        rec = finalize_fn(acc)
        host = _to_host((rec, state if keep_state else None))
        leaves = [
            x[:runs].reshape((num_points, size) + x.shape[1:])
            for x in jax.tree_util.tree_leaves(host)
        ]
        if store is not None and jax.process_index() == 0:
            store.save(first, stop, leaves)
        pieces.append(leaves)
        chunks_computed += 1
    if own_bar:
        bar.close()

    merged = [
        np.concatenate([piece[i] for piece in pieces], axis=1).reshape(
            grid_shape + (num_seeds,) + tuple(leaves_spec[i].shape)
        )
        for i in range(len(leaves_spec))
    ]
    rec_out, state_out = jax.tree_util.tree_unflatten(treedef, merged)
    info = {
        "grid_shape": grid_shape,
        "num_seeds": num_seeds,
        "num_steps": num_steps,
        "seed_chunk": seed_chunk,
        "time_chunk": time_chunk,
        "num_devices": num_devices,
        "chunks_computed": chunks_computed,
        "chunks_loaded": chunks_loaded,
        "wall_seconds": time.perf_counter() - started,
        "fingerprint": fingerprint,
    }
    return SimulationResult(rec_out, state_out, info)


__all__ = ["SimulationResult", "default_memory_limit", "rollout", "simulate"]
