"""The multi-process runtime: join the JAX processes the environment describes.

Start N processes that each call :func:`initialize` before any JAX computation (the launcher
``python -m ldpjax_experiments.launch --processes N -- run NAME`` does this on one machine; under SLURM or
on a TPU pod see below). A :func:`~ldpjax.engine.simulate` call given the application's runner
(:func:`ldpjax_experiments.checkpointing.shared` or :func:`~ldpjax_experiments.checkpointing.checkpointed`, which the
experiments pass) is then shared by the processes (:func:`run_shared`, below), and gives the
records of one process, bit for bit.

Environment read by :func:`initialize`, first match wins:

* ``LDPJAX_NUM_PROCESSES`` (> 1), ``LDPJAX_PROCESS_ID``, ``LDPJAX_COORDINATOR`` (``host:port``
  of process 0) -- set by :mod:`ldpjax_experiments.launch`, or by hand;
* SLURM (``srun``): ``SLURM_NTASKS`` (> 1), ``SLURM_PROCID``; the coordinator is
  ``LDPJAX_COORDINATOR`` if set, else JAX's rule (first node of ``SLURM_STEP_NODELIST``, a port
  derived from ``SLURM_JOB_ID``);
* ``LDPJAX_DISTRIBUTED=auto``: ``jax.distributed.initialize()`` with JAX's own cluster
  detection (Cloud TPU pods, Open MPI, Kubernetes, mpi4py);
* otherwise one process (nothing to do).

Each process uses all the devices it sees (restrict them with JAX's ``JAX_LOCAL_DEVICE_IDS``
or ``CUDA_VISIBLE_DEVICES``; under SLURM on GPUs JAX gives each task one GPU). On one machine a
single process already uses every local accelerator, so local processes are mainly for CPUs
and for testing; the point of several processes is several machines.

``LDPJAX_HEARTBEAT_TIMEOUT`` and ``LDPJAX_INIT_TIMEOUT`` (seconds) and
``LDPJAX_COORDINATOR_BIND`` (``host:port`` the coordinator listens on; default: the coordinator
address itself when it is a loopback address, else JAX's default, all interfaces) are passed to
``jax.distributed.initialize`` when set.

Sharing a sweep's seed chunks (:func:`run_shared`, what the runners do once processes are
joined):

* every process computes on **its own devices** (``jax.local_devices()``) a disjoint,
  deterministic share of the seed chunks (round ``r``: process ``p`` takes missing chunk
  ``r * N + p``). A run's randomness depends only on ``(key, seed, step)`` (see
  :mod:`ldpjax.engine.keys`), so a chunk's records are the same bytes whichever process computes
  it: the records are **bit-identical** to one process with the same devices per process;
* after each round the chunks are exchanged with one all-gather (raw bytes, so no arithmetic
  touches them) and **every process returns the full result**;
* **process 0 alone** reads and writes a checkpoint folder: it says which chunks are already
  there (and sends their contents to the others), and saves every chunk of a round as soon as
  the round is gathered. A killed process loses at most the round in flight; rerunning the
  same command resumes from the saved chunks. No shared file system is needed.

Before the first chunk the processes compare a digest of the sweep (algorithm, recorder,
params, inputs, key, horizon, seeds) and agree on the seed chunk (:func:`agree`: the smallest
any process planned), so a script that gives processes different work fails with a clear error
instead of mixing results.

Why gather through a collective and not through files: JAX's CPU runtime has cross-process
collectives (gloo, the default ``jax_cpu_collectives_implementation``); ``process_allgather``
works on CPU, GPU and TPU alike and needs no shared folder between hosts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

ENV_COORDINATOR = "LDPJAX_COORDINATOR"
ENV_NUM_PROCESSES = "LDPJAX_NUM_PROCESSES"
ENV_PROCESS_ID = "LDPJAX_PROCESS_ID"
ENV_MODE = "LDPJAX_DISTRIBUTED"
ENV_HEARTBEAT = "LDPJAX_HEARTBEAT_TIMEOUT"
ENV_INIT_TIMEOUT = "LDPJAX_INIT_TIMEOUT"

_INITIALIZED: ProcessConfig | None = None


@dataclasses.dataclass(frozen=True)
class ProcessConfig:
    """Where this process stands: ``process_id`` of ``num_processes``.

    ``coordinator`` is ``host:port`` of process 0, or None where JAX chooses it (SLURM, auto);
    ``source`` says what set it: ``"ldpjax"`` (LDPJAX_* variables), ``"slurm"``, ``"auto"`` or
    ``"single"`` (one process, nothing initialised).
    """

    num_processes: int
    process_id: int
    coordinator: str | None
    source: str

    @property
    def multiprocess(self) -> bool:
        return self.source == "auto" or self.num_processes > 1


def _env_int(env: Mapping[str, str], name: str, low: int, high: int | None = None) -> int:
    text = env.get(name, "")
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {text!r}") from None
    if value < low or (high is not None and value > high):
        upper = "" if high is None else f" and <= {high}"
        raise ValueError(f"{name} must be >= {low}{upper}, got {value}")
    return value


def config_from_env(environ: Mapping[str, str] | None = None) -> ProcessConfig:
    """The process configuration the environment asks for (pure: reads ``environ`` only)."""
    env = os.environ if environ is None else environ
    coordinator = env.get(ENV_COORDINATOR) or None
    if coordinator is not None and (":" not in coordinator or not coordinator.rsplit(":", 1)[1].isdigit()):
        raise ValueError(f"{ENV_COORDINATOR} must be host:port, got {coordinator!r}")
    if env.get(ENV_NUM_PROCESSES):
        num = _env_int(env, ENV_NUM_PROCESSES, 1)
        if num == 1:
            return ProcessConfig(1, 0, None, "single")
        if not env.get(ENV_PROCESS_ID):
            raise ValueError(f"{ENV_NUM_PROCESSES}={num} needs {ENV_PROCESS_ID} (0..{num - 1})")
        pid = _env_int(env, ENV_PROCESS_ID, 0, num - 1)
        if coordinator is None:
            raise ValueError(f"{ENV_NUM_PROCESSES}={num} needs {ENV_COORDINATOR}=host:port")
        return ProcessConfig(num, pid, coordinator, "ldpjax")
    if env.get("SLURM_NTASKS") and env.get("SLURM_PROCID") is not None and env.get("SLURM_PROCID") != "":
        num = _env_int(env, "SLURM_NTASKS", 1)
        if num > 1:
            pid = _env_int(env, "SLURM_PROCID", 0, num - 1)
            if coordinator is None and not env.get("SLURM_STEP_NODELIST"):
                raise ValueError(
                    "SLURM_NTASKS > 1 but SLURM_STEP_NODELIST is not set (not inside an srun "
                    f"step?): start the processes with srun, or set {ENV_COORDINATOR}=host:port"
                )
            return ProcessConfig(num, pid, coordinator, "slurm")
    mode = env.get(ENV_MODE, "").strip().lower()
    if mode == "auto":
        return ProcessConfig(0, 0, coordinator, "auto")
    if mode not in ("", "off", "0", "none"):
        raise ValueError(f"{ENV_MODE} must be 'auto' or unset, got {env.get(ENV_MODE)!r}")
    return ProcessConfig(1, 0, None, "single")


def initialize(environ: Mapping[str, str] | None = None) -> ProcessConfig:
    """Join the multi-process runtime the environment describes (see the module docstring).

    Call it before any JAX computation. Idempotent; a no-op (returning a ``"single"`` config)
    when the environment describes one process. Returns the configuration, with the actual
    process count and index once initialised.
    """
    global _INITIALIZED
    if _INITIALIZED is not None:
        return _INITIALIZED
    cfg = config_from_env(environ)
    if not cfg.multiprocess:
        _INITIALIZED = cfg
        return cfg
    import jax

    env = os.environ if environ is None else environ
    kwargs: dict[str, Any] = {}
    if env.get(ENV_HEARTBEAT):
        kwargs["heartbeat_timeout_seconds"] = _env_int(env, ENV_HEARTBEAT, 1)
    if env.get(ENV_INIT_TIMEOUT):
        kwargs["initialization_timeout"] = _env_int(env, ENV_INIT_TIMEOUT, 1)
    bind = env.get("LDPJAX_COORDINATOR_BIND")
    if bind is None and cfg.coordinator is not None and cfg.process_id == 0:
        host = cfg.coordinator.rsplit(":", 1)[0].strip("[]")
        if host in ("127.0.0.1", "localhost", "::1"):
            bind = cfg.coordinator  # one machine: listen on the loopback interface only
    if bind:
        kwargs["coordinator_bind_address"] = bind
    if cfg.source == "auto":
        jax.distributed.initialize(coordinator_address=cfg.coordinator, **kwargs)
    else:
        if cfg.source == "ldpjax":
            # exactly what the variables say: no cluster detection (a launcher started inside
            # a SLURM allocation must not pick up the allocation's device assignment)
            kwargs["cluster_detection_method"] = "deactivate"
        jax.distributed.initialize(
            coordinator_address=cfg.coordinator,
            num_processes=cfg.num_processes,
            process_id=cfg.process_id,
            **kwargs,
        )
    _INITIALIZED = ProcessConfig(jax.process_count(), jax.process_index(), cfg.coordinator, cfg.source)
    return _INITIALIZED


def is_multiprocess() -> bool:
    """Whether this JAX program runs as several processes.

    Example:
      >>> is_multiprocess()  # one process unless initialize() joined several
      False
    """
    import jax

    return jax.process_count() > 1


def is_main_process() -> bool:
    """Whether this is process 0 (the one that writes checkpoints and outputs).

    Example:
      >>> is_main_process()
      True
    """
    import jax

    return jax.process_index() == 0


def barrier(name: str) -> None:
    """Wait until every process reaches ``barrier(name)`` (no-op in one process).

    Example:
      >>> barrier("ready")
    """
    if is_multiprocess():
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(f"ldpjax:{name}")


# --------------------------------------------------------------------------- collectives
def _allgather_bytes(buf: np.ndarray) -> np.ndarray:
    """Rows of every process's ``buf`` (uint8, same length everywhere): shape ``(N, len)``.

    Raw bytes only: an all-gather copies them, so floats keep every bit (-0.0, NaN payloads)
    and 64-bit leaves travel even without ``jax_enable_x64``.
    """
    from jax.experimental import multihost_utils

    out = np.asarray(multihost_utils.process_allgather(np.ascontiguousarray(buf, np.uint8)))
    return out.reshape(-1, buf.size)


def agree(digest: str, seed_chunk: int, *, split_seeds: int | None = None) -> int:
    """Check that every process runs the same sweep; return the seed chunk they all use.

    ``digest`` (hex SHA-256 of the sweep) must be equal on every process, else ValueError
    (raised on every process, so none is left waiting). Returns the smallest ``seed_chunk``
    any process planned (memory-safe everywhere); with ``split_seeds`` (the sweep's seed count,
    given when the caller chose no ``seed_chunk``) at most ``ceil(split_seeds / N)``, so that
    each of the N processes gets a chunk (results do not depend on the chunking).

    Example (one process: its own plan):
      >>> agree(sweep_digest("a sweep"), 8, split_seeds=20)
      8
    """
    import jax

    raw = bytes.fromhex(digest)[:32].ljust(32, b"\0")
    buf = np.frombuffer(raw + int(seed_chunk).to_bytes(8, "little"), dtype=np.uint8)
    rows = _allgather_bytes(buf)
    digests = [bytes(r[:32]) for r in rows]
    if len(set(digests)) > 1:
        differ = [i for i, d in enumerate(digests) if d != digests[0]]
        raise ValueError(
            f"the {jax.process_count()} processes were asked for different sweeps (process "
            f"{differ[0]} differs from process 0 in algorithm, recorder, params, inputs, key, "
            "horizon or seeds); every process must make the same simulate calls in the same order"
        )
    chunk = min(int.from_bytes(bytes(r[32:40]), "little") for r in rows)
    if split_seeds is not None:
        chunk = min(chunk, -(-int(split_seeds) // len(rows)))
    return max(1, chunk)


def sweep_digest(*parts: Any) -> str:
    """SHA-256 of ``repr`` of process-independent descriptions (:mod:`ldpjax.engine.digest`).

    Example:
      >>> sweep_digest({"horizon": 10}, 4) == sweep_digest({"horizon": 10}, 4)
      True
    """
    return hashlib.sha256(repr(parts).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Byte layout of one chunk's leaves, padded to a full chunk ``(points, seed_chunk, ...)``."""

    shapes: tuple[tuple[int, ...], ...]  # full-chunk shape of each leaf
    dtypes: tuple[np.dtype, ...]

    @property
    def sizes(self) -> list[int]:
        return [math.prod(s) * d.itemsize for s, d in zip(self.shapes, self.dtypes, strict=True)]

    @property
    def nbytes(self) -> int:
        return sum(self.sizes)

    def pack(self, leaves: Sequence[np.ndarray] | None, size: int) -> np.ndarray:
        buf = np.zeros(self.nbytes, np.uint8)
        if leaves is None:
            return buf
        pos = 0
        for leaf, shape, dtype, nbytes in zip(leaves, self.shapes, self.dtypes, self.sizes, strict=True):
            leaf = np.asarray(leaf)
            if leaf.dtype != dtype or leaf.shape != shape[:1] + (size,) + shape[2:]:
                raise AssertionError(
                    f"chunk leaf {leaf.shape} {leaf.dtype} does not match the plan {shape} {dtype}"
                )
            full = np.zeros(shape, dtype)
            full[:, :size] = leaf
            buf[pos:pos + nbytes] = full.reshape(-1).view(np.uint8)
            pos += nbytes
        return buf

    def unpack(self, row: np.ndarray, size: int) -> list[np.ndarray]:
        out, pos = [], 0
        for shape, dtype, nbytes in zip(self.shapes, self.dtypes, self.sizes, strict=True):
            full = np.ascontiguousarray(row[pos:pos + nbytes]).view(dtype).reshape(shape)
            out.append(np.ascontiguousarray(full[:, :size]))
            pos += nbytes
        return out


def run_shared(
    chunks: Sequence[tuple[int, int]],
    *,
    leaf_specs: Sequence[Any],
    num_points: int,
    seed_chunk: int,
    load: Callable[[int, int], list[np.ndarray] | None] | None,
    compute: Callable[[int, int], list[np.ndarray]],
    save: Callable[[int, int, list[np.ndarray]], None] | None,
    done: Callable[[int], None] | None = None,
) -> tuple[list[list[np.ndarray]], int, int]:
    """Compute the seed ``chunks`` shared over the processes; every process gets all of them.

    Args:
      chunks: ``[(first, stop), ...]`` seed ranges, the same list on every process.
      leaf_specs: shape/dtype of each leaf of one run (``jax.ShapeDtypeStruct``-like).
      num_points, seed_chunk: a chunk's leaves have shape ``(num_points, stop - first) + leaf``.
      load: ``load(first, stop)`` -> leaves or None (called on process 0 only; None: no store).
      compute: ``compute(first, stop)`` -> leaves, on this process's devices.
      save: ``save(first, stop, leaves)`` (called on process 0 only; None: no store).
      done: called with the number of seeds finished (every process, after each exchange).

    Returns:
      ``(pieces, computed, loaded)``: every chunk's leaves in order, and how many chunks were
      computed now / loaded from process 0's checkpoints (by all processes together).

    Example (one process, two chunks of one grid point, nothing stored):
      >>> import jax
      >>> spec = [jax.ShapeDtypeStruct((), np.float32)]
      >>> pieces, computed, loaded = run_shared(
      ...     [(0, 2), (2, 3)], leaf_specs=spec, num_points=1, seed_chunk=2, load=None,
      ...     compute=lambda a, b: [np.arange(a, b, dtype=np.float32)[None]], save=None)
      >>> [p[0].tolist() for p in pieces], computed, loaded
      ([[[0.0, 1.0]], [[2.0]]], 2, 0)
    """
    import jax

    n, me = jax.process_count(), jax.process_index()
    layout = _Layout(
        tuple((num_points, seed_chunk) + tuple(s.shape) for s in leaf_specs),
        tuple(np.dtype(s.dtype) for s in leaf_specs),
    )
    pieces: list[list[np.ndarray] | None] = [None] * len(chunks)

    # Which chunks process 0 already has; their contents go to every process.
    stored: dict[int, list[np.ndarray]] = {}
    if me == 0 and load is not None:
        for i, (first, stop) in enumerate(chunks):
            leaves = load(first, stop)
            if leaves is not None:
                stored[i] = leaves
    flags = np.zeros(len(chunks), np.uint8)
    flags[list(stored)] = 1
    have = _allgather_bytes(flags)[0].astype(bool)
    for i in np.flatnonzero(have):
        first, stop = chunks[i]
        row = _allgather_bytes(layout.pack(stored.get(int(i)), stop - first))[0]
        pieces[i] = layout.unpack(row, stop - first)
        if done is not None:
            done(stop - first)
    stored.clear()

    # The missing chunks, in rounds of one chunk per process.
    missing = [i for i in range(len(chunks)) if not have[i]]
    for r0 in range(0, len(missing), n):
        mine = missing[r0 + me] if r0 + me < len(missing) else None
        if mine is None:
            buf = layout.pack(None, 0)
        else:
            first, stop = chunks[mine]
            buf = layout.pack(compute(first, stop), stop - first)
        rows = _allgather_bytes(buf)
        finished = 0
        for q, i in enumerate(missing[r0:r0 + n]):
            first, stop = chunks[i]
            pieces[i] = layout.unpack(rows[q], stop - first)
            if me == 0 and save is not None:
                save(first, stop, pieces[i])
            finished += stop - first
        if done is not None:
            done(finished)
    return pieces, len(missing), int(have.sum())  # type: ignore[return-value]


__all__ = [
    "ENV_COORDINATOR",
    "ENV_MODE",
    "ENV_NUM_PROCESSES",
    "ENV_PROCESS_ID",
    "ProcessConfig",
    "agree",
    "barrier",
    "config_from_env",
    "initialize",
    "is_main_process",
    "is_multiprocess",
    "run_shared",
    "sweep_digest",
]
