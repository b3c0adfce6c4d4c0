"""Where the runs of a chunk live: one device, one sharded program, or one program per device."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from ldpjax.engine.keys import UNSHARDABLE_IMPLS
from ldpjax.engine.rollout import AXIS, make_mesh
from ldpjax.types import PyTree


class Executor:
    """Places a chunk's arrays and calls its kernels on the devices.

    ``mode`` is ``"single"`` (one device), ``"sharded"`` (one SPMD program over a 1-d mesh) or
    ``"per_device"`` (one program per device, for generators that cannot be sharded:
    :data:`~ldpjax.engine.keys.UNSHARDABLE_IMPLS`). The secure generator of releases
    (``ldpjax_secure128``: additions, rotations and xors) compiles sharded.
    """

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

    def unzip(self, pairs: Any) -> tuple[Any, Any]:
        """``(state, acc)`` of a kernel call (per device: lists of the parts)."""
        if self.mode == "per_device":
            return [p[0] for p in pairs], [p[1] for p in pairs]
        return pairs

    def zip(self, rec: Any, state: Any) -> Any:
        if self.mode == "per_device":
            states = state if state is not None else [None] * len(rec)
            return [(r, s) for r, s in zip(rec, states, strict=True)]
        return (rec, state)

    def to_host(self, tree: PyTree) -> PyTree:
        if self.mode == "per_device":
            parts = [to_host(t) for t in tree]
            return jax.tree_util.tree_map(lambda *xs: np.concatenate(xs, axis=0), *parts)
        return to_host(tree)


def to_host(tree: PyTree) -> PyTree:
    """NumPy copies of ``tree``'s leaves (arrays spread over processes are gathered first)."""

    def fetch(x):
        if isinstance(x, jax.Array) and not x.is_fully_addressable:
            from jax.experimental import multihost_utils

            return np.asarray(multihost_utils.process_allgather(x, tiled=True))
        return np.asarray(x)

    return jax.tree_util.tree_map(fetch, tree)


def local_devices(devices: Sequence[jax.Device] | None) -> list[jax.Device]:
    """The devices :func:`~ldpjax.engine.simulate` runs on: the given ones, by default this
    process's own (``jax.local_devices()``).

    Every device must belong to this process: where several JAX processes are joined they share
    the seed chunks among themselves (a chunk runner's work, see :mod:`ldpjax.engine.runner`)
    instead of sharding one program over all of them.

    Example:
      >>> local_devices(None) == jax.local_devices()
      True
    """
    if devices is None:
        return list(jax.local_devices())
    devices = list(devices)
    me = jax.process_index()
    foreign = [d for d in devices if d.process_index != me]
    if foreign:
        raise ValueError(
            f"devices must belong to this process (process {me}), got {foreign[0]} of process "
            f"{foreign[0].process_index}; leave devices=None: joined processes share the seed "
            "chunks among themselves"
        )
    return devices


__all__ = ["Executor", "local_devices", "to_host"]
