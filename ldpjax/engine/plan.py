"""The chunk plan: how a sweep is cut into seed chunks and time chunks, padded to the devices,
and whether it fits in memory and time at all. Pure Python on integers (unit-testable).

Runs of a seed chunk (``num_points x seed_chunk`` runs: every grid point times the chunk's
seeds) form one flat batch, padded to a multiple of the number of devices so that every chunk
has the same shape and the kernels compile once; padding repeats the last run and is dropped.
Time is cut into ``time_chunk`` steps per compiled scan call (progress, bounded compile size).

Memory model (bytes): one run carries ``state + acc + outputs``; the engine counts it 4 times
(double-buffered scan carry, the step's temporaries, the sharded copy) plus 1 KiB of overhead.
A chunk needs ``batch x per_run``; the merged result on the host needs ``num_points x
num_seeds x (record [+ final state])``.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence

import numpy as np

#: Refuse sweeps with more run-steps than this (~11 days at 10^8 run-steps per second).
MAX_RUN_STEPS = 10**14
#: The engine's clock is int32.
MAX_STEPS = 2**31 - 1
RUN_OVERHEAD_BYTES = 1024
CARRY_FACTOR = 4


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def host_memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


@dataclasses.dataclass(frozen=True)
class ChunkPlan:
    """A sweep cut into chunks. All sizes in runs, steps or bytes."""

    num_points: int
    num_seeds: int
    num_steps: int
    seed_chunk: int
    time_chunk: int
    num_devices: int
    batch: int  # runs per kernel call, padded to a multiple of num_devices
    per_run_bytes: int
    chunk_bytes: int
    result_bytes: int

    def seed_chunks(self) -> list[tuple[int, int]]:
        return [
            (first, min(self.num_seeds, first + self.seed_chunk))
            for first in range(0, self.num_seeds, self.seed_chunk)
        ]

    def time_chunks(self) -> list[tuple[int, int]]:
        return [
            (t0, min(self.time_chunk, self.num_steps - t0))
            for t0 in range(0, self.num_steps, self.time_chunk)
        ]

    def run_indices(self, first: int, stop: int, seed_offset: int) -> tuple[np.ndarray, np.ndarray]:
        """(grid point index, seed index) of every slot of the padded batch for seeds
        ``[first, stop)``; slot ``i < num_points * (stop - first)`` is run ``(i // size,
        first + i % size)``, later slots repeat the last run."""
        size = stop - first
        runs = self.num_points * size
        ids = np.minimum(np.arange(self.batch), runs - 1)
        param_idx = (ids // size).astype(np.int32)
        seed_idx = (seed_offset + first + ids % size).astype(np.uint32)
        return param_idx, seed_idx


def plan_chunks(
    *,
    num_points: int,
    num_seeds: int,
    num_steps: int,
    num_devices: int,
    run_bytes: int,
    record_bytes: int,
    seed_chunk: int | None = None,
    time_chunk: int | None = None,
    memory_limit: int,
    host_limit: int | None = None,
) -> ChunkPlan:
    """Choose chunk sizes and check feasibility; ``ValueError`` with advice when it cannot fit.

    Args:
      run_bytes: ``state + acc + outputs`` bytes of one run.
      record_bytes: bytes kept on the host per run (record, plus the final state if kept).
      memory_limit: bytes one chunk may use on the devices (all of them together).
      host_limit: bytes the merged result may use on the host (default: half the RAM).
    """
    if num_steps > MAX_STEPS:
        raise ValueError(f"num_steps must be <= {MAX_STEPS} (int32 clock), got {num_steps}")
    run_steps = num_points * num_seeds * num_steps
    if run_steps > MAX_RUN_STEPS:
        raise ValueError(
            f"refusing a sweep of {run_steps:.3g} run-steps ({num_points} grid points x "
            f"{num_seeds} seeds x {num_steps} steps): more than {MAX_RUN_STEPS:.0e}, i.e. days "
            "of compute even at 10^8 run-steps per second; reduce the horizon, seeds or grid"
        )
    per_run = CARRY_FACTOR * int(run_bytes) + RUN_OVERHEAD_BYTES
    one_seed = num_points * per_run
    if one_seed > memory_limit:
        raise ValueError(
            f"one seed over the {num_points} grid point(s) needs ~{_fmt_bytes(one_seed)} of device "
            f"memory (state + recorder + outputs of {_fmt_bytes(run_bytes)} per run), more than "
            f"memory_limit={_fmt_bytes(memory_limit)}: record less (record.last / record.total / "
            "record.at_steps instead of record.every_step), split the grid, or raise memory_limit"
        )
    host_limit = host_memory_bytes() // 2 if host_limit is None else int(host_limit)
    result = num_points * num_seeds * int(record_bytes)
    if result > host_limit:
        raise ValueError(
            f"the records would need ~{_fmt_bytes(result)} on the host ({num_points} grid points x "
            f"{num_seeds} seeds x {_fmt_bytes(record_bytes)}), more than {_fmt_bytes(host_limit)}: "
            "record less (record.last / record.total / record.at_steps), pass keep_state=False, "
            "or run fewer seeds per call"
        )
    if seed_chunk is None:
        seed_chunk = max(1, min(num_seeds, memory_limit // one_seed))
    seed_chunk = int(seed_chunk)
    time_chunk = num_steps if time_chunk is None else min(int(time_chunk), num_steps)
    batch = -(-(num_points * seed_chunk) // num_devices) * num_devices
    return ChunkPlan(
        num_points=num_points,
        num_seeds=num_seeds,
        num_steps=num_steps,
        seed_chunk=seed_chunk,
        time_chunk=time_chunk,
        num_devices=num_devices,
        batch=batch,
        per_run_bytes=per_run,
        chunk_bytes=batch * per_run,
        result_bytes=result,
    )


def default_memory_limit(devices: Sequence) -> int:
    """Bytes one chunk may use: 40% of accelerator memory, or 1/4 of RAM (<= 8 GiB) on CPU."""
    try:
        stats = devices[0].memory_stats() or {}
    except Exception:  # noqa: BLE001 - backends without memory stats
        stats = {}
    if "bytes_limit" in stats:
        return int(0.4 * stats["bytes_limit"]) * len(devices)
    return int(min(host_memory_bytes() // 4, 8 * 2**30))


def tree_bytes(tree) -> int:
    import jax

    return sum(
        math.prod(x.shape) * np.dtype(x.dtype).itemsize
        for x in jax.tree_util.tree_leaves(tree)
        if not jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)
    )


__all__ = ["ChunkPlan", "MAX_RUN_STEPS", "default_memory_limit", "plan_chunks", "tree_bytes"]
