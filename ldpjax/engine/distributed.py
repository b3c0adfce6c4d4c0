"""Sharing a sweep's seed chunks between JAX processes (what :func:`simulate` needs of them).

The processes are started and joined to JAX's runtime by the application
(:mod:`ldpjax.cluster`, :mod:`ldpjax.launch`). Once they are, every
:func:`~ldpjax.engine.simulate` call is shared:

* every process computes on **its own devices** (``jax.local_devices()``) a disjoint,
  deterministic share of the seed chunks (round ``r``: process ``p`` takes missing chunk
  ``r * N + p``). A run's randomness depends only on ``(key, seed, step)`` (see
  :mod:`ldpjax.engine.keys`), so a chunk's records are the same bytes whichever process computes
  it: the records are **bit-identical** to one process with the same devices per process;
* after each round the chunks are exchanged with one all-gather (raw bytes, so no arithmetic
  touches them) and **every process returns the full result**;
* **process 0 alone** reads and writes the checkpoint folder: it says which chunks are already
  there (and sends their contents to the others), and saves every chunk of a round as soon as
  the round is gathered. A killed process loses at most the round in flight; rerunning the
  same command resumes from the saved chunks. No shared file system is needed.

Before the first chunk the processes compare a digest of the sweep (algorithm, recorder,
params, inputs, key, horizon, seeds) and agree on the seed chunk (the smallest any process
planned), so a script that gives processes different work fails with a clear error instead of
mixing results.

Why gather through a collective and not through files: JAX's CPU runtime has cross-process
collectives (gloo, the default ``jax_cpu_collectives_implementation``); ``process_allgather``
works on CPU, GPU and TPU alike and needs no shared folder between hosts.

The runtime's names that lived here (``initialize``, ``config_from_env``, ``ProcessConfig``,
``ENV_*``) moved to :mod:`ldpjax.cluster`; reading them here still works.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: Names of the runtime, now in :mod:`ldpjax.cluster` (answered lazily, see ``__getattr__``).
_MOVED = ("ENV_COORDINATOR", "ENV_HEARTBEAT", "ENV_INIT_TIMEOUT", "ENV_MODE", "ENV_NUM_PROCESSES",
          "ENV_PROCESS_ID", "ProcessConfig", "config_from_env", "initialize")


def __getattr__(name: str) -> Any:
    if name in _MOVED:  # the old path of the runtime: the engine itself never uses it
        import warnings

        warnings.warn(f"ldpjax.engine.distributed.{name} moved to ldpjax.cluster.{name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("ldpjax.cluster"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_multiprocess() -> bool:
    """Whether this JAX program runs as several processes."""
    import jax

    return jax.process_count() > 1


def is_main_process() -> bool:
    """Whether this is process 0 (the one that writes checkpoints and outputs)."""
    import jax

    return jax.process_index() == 0


def local_devices(devices: Sequence | None) -> list:
    """The devices :func:`simulate` runs on: the given ones, by default this process's own.

    In a multi-process run every device must belong to this process: the processes share the
    seed chunks among themselves instead of sharding one program over all of them.
    """
    import jax

    if devices is None:
        return list(jax.local_devices())
    devices = list(devices)
    me = jax.process_index()
    foreign = [d for d in devices if d.process_index != me]
    if foreign:
        raise ValueError(
            f"devices must belong to this process (process {me}) in a multi-process run, got "
            f"{foreign[0]} of process {foreign[0].process_index}; leave devices=None: the "
            "processes share the seed chunks among themselves"
        )
    return devices


def barrier(name: str) -> None:
    """Wait until every process reaches ``barrier(name)`` (no-op in one process)."""
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
    """SHA-256 of ``repr`` of process-independent descriptions (see ``fingerprint.stable``)."""
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
    "agree",
    "barrier",
    "is_main_process",
    "is_multiprocess",
    "local_devices",
    "run_shared",
    "sweep_digest",
]
