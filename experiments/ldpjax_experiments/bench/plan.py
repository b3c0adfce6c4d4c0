"""``ldpjax bench --plan``: compile every bench kernel for a device layout without running it.

For each workload the plan takes the exact :func:`ldpjax.engine.simulate` call the bench would
make, checks it the way ``simulate`` does, asks the engine's chunk planner
(:func:`ldpjax.engine.plan.plan_chunks`) how it would cut the sweep for a device of
``device_bytes`` bytes, and lowers (and, with ``compile=True``, compiles) the engine's
``init`` / ``advance`` / ``finalize`` kernels for one chunk with the layout the engine would
use on the available devices: one program sharded over a 1-d mesh (``NamedSharding``) where
the generator can be sharded, one program per device otherwise. Nothing is executed: the
batched state is abstract (``jax.ShapeDtypeStruct``).

Device model (the engine's rule on an accelerator, :func:`~ldpjax.engine.plan.default_memory_limit`):
JAX's allocator may use ``usable = 0.75 x device_bytes`` (its default preallocation fraction)
and a chunk may use ``0.4 x usable`` per device. A workload *fits* when both the planner's
chunk estimate per device and XLA's own figure for the largest kernel (arguments + outputs +
temporaries - aliased, from ``compiled.memory_analysis()``, where the backend reports it) are
at most ``usable``.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from ldpjax_experiments.bench.workload import SIZES, Context
from ldpjax_experiments.bench.workloads import WORKLOADS

#: JAX's default GPU preallocation fraction (XLA_PYTHON_CLIENT_MEM_FRACTION).
ALLOCATOR_FRACTION = 0.75
#: Share of the allocator's limit a chunk may use (the engine's accelerator rule).
CHUNK_FRACTION = 0.4
#: A Colab T4: 16 GB.
T4_BYTES = 16 * 10**9


@dataclasses.dataclass(frozen=True)
class KernelPlan:
    """How one workload would run on ``num_devices`` devices of ``device_bytes`` each.

    Attributes:
      workload, size: what was planned.
      num_devices, execution, impl: the devices and how the engine would use them
        (``"single"``, ``"sharded"`` over a mesh, ``"per_device"``) with generator ``impl``.
      grid_points, seeds, steps: the sweep.
      seed_chunk, time_chunk, batch, chunks: the engine's chunk plan (``batch``: runs per
        kernel call over all devices, padded to a multiple of them; ``chunks``: seed chunks).
      per_run_bytes: the planner's bytes per run (4 x (state + acc + outputs) + 1 KiB).
      chunk_bytes_per_device: the planner's estimate for one chunk on one device.
      xla_bytes_per_device: XLA's figure for the largest kernel on one device (None: not
        compiled, or no memory analysis on this backend).
      usable_bytes: ``ALLOCATOR_FRACTION x device_bytes``.
      fits: both estimates at most ``usable_bytes``.
      kernels: the kernels lowered (and compiled), with their input layout.
      seconds: time spent tracing, lowering and compiling.
      x64: whether ``jax_enable_x64`` was on.
    """

    workload: str
    size: str
    num_devices: int
    execution: str
    impl: str
    grid_points: int
    seeds: int
    steps: int
    seed_chunk: int
    time_chunk: int
    batch: int
    chunks: int
    per_run_bytes: int
    chunk_bytes_per_device: int
    xla_bytes_per_device: int | None
    usable_bytes: int
    fits: bool
    kernels: tuple[str, ...]
    seconds: float
    x64: bool = False


class _Captured(Exception):
    """Raised by :class:`_CaptureContext` with the arguments of the ``simulate`` call."""

    def __init__(self, call: dict[str, Any]):
        super().__init__("captured")
        self.call = call


class _CaptureContext(Context):
    """A bench context whose ``simulate`` records its arguments instead of running."""

    def simulate(self, algorithm, params, num_steps=None, **kwargs):
        if self._pass_through:
            kwargs["rng"] = self.rng
        raise _Captured(dict(algorithm=algorithm, params=params, key=self.key(),
                             num_steps=num_steps, **kwargs))


def captured_call(name: str, size: str, rng: str | None = None) -> dict[str, Any]:
    """The keyword arguments of the ``simulate`` call workload ``name`` makes at ``size``."""
    if name not in WORKLOADS:
        raise ValueError(f"workload must be one of {tuple(WORKLOADS)}; got {name!r}")
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}; got {size!r}")
    workload = WORKLOADS[name]
    prepared = workload.prepare(workload.sizes[size], _CaptureContext(rng=rng))
    try:
        prepared.run_ldpjax()
    except _Captured as captured:
        return captured.call
    raise RuntimeError(f"workload {name!r} did not call simulate")  # pragma: no cover


def _abstract(tree, sharding):
    return jax.tree_util.tree_map(
        lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding), tree)


def _xla_bytes(compiled) -> int | None:
    try:
        m = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 -- backends without a memory analysis
        return None
    if m is None:
        return None
    return int(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
               - m.alias_size_in_bytes)


def _sweep_and_plan(call: dict[str, Any], devices, memory_limit: int):
    """The engine's checked sweep, run specs and chunk plan for ``call`` (nothing runs)."""
    import importlib

    from ldpjax.engine.rollout import inputs_at, run_params_spec, run_specs

    sim = importlib.import_module("ldpjax.engine.simulate")  # the module, not the function

    call = dict(call)
    algorithm, params = call.pop("algorithm"), call.pop("params")
    with sim._no_noise_permit(algorithm, params):
        sweep = sim.prepare(
            algorithm, params, call.pop("key"), call.pop("num_steps", None),
            num_seeds=call.pop("num_seeds", 1), inputs=call.pop("inputs", None),
            record=call.pop("record", None), grid_ndim=call.pop("grid_ndim", 0),
            seed_offset=0, seed_chunk=None, time_chunk=None, memory_limit=memory_limit,
            devices=devices, keep_state=call.pop("keep_state", False), tag="",
            common_random_numbers=True, rng=call.pop("rng", None), hints=call.pop("hints", None),
        )
        params_flat = jax.tree_util.tree_map(
            lambda x: x.reshape((sweep.num_points,) + x.shape[sweep.grid_ndim:]), sweep.params)
        inputs0 = None if sweep.inputs is None else inputs_at(sweep.inputs, 0)
        specs = sim.RunSpecs(*run_specs(sweep.algorithm, sweep.recorder, sweep.num_steps,
                                        run_params_spec(params_flat), sweep.key, inputs0))
        plan = sim._make_plan(sweep, specs, None)
    return sweep, specs, plan, params_flat, inputs0


def _lower(sweep, specs, plan, params_flat, inputs0, *, compile: bool):
    """Lower (and compile) init / advance / finalize for one chunk; (names, max XLA bytes)."""
    from ldpjax.engine.executor import Executor
    from ldpjax.engine.rollout import AXIS, kernels

    executor = Executor(sweep.devices, sweep.impl)
    if executor.mode == "sharded":
        batch_sharding = NamedSharding(executor.mesh, PartitionSpec(AXIS))
        replicated = NamedSharding(executor.mesh, PartitionSpec())
        runs, mesh = plan.batch, executor.mesh
    else:  # one program per device: each sees batch / num_devices runs on its own device
        batch_sharding = replicated = jax.sharding.SingleDeviceSharding(sweep.devices[0])
        runs, mesh = plan.batch // len(sweep.devices), None
    put = lambda tree: jax.device_put(tree, replicated)  # noqa: E731
    batched = lambda spec: jax.tree_util.tree_map(  # noqa: E731
        lambda s: jax.ShapeDtypeStruct((runs,) + tuple(s.shape), s.dtype,
                                       sharding=batch_sharding), spec)
    index = jax.ShapeDtypeStruct((runs,), np.int32, sharding=batch_sharding)
    seeds = jax.ShapeDtypeStruct((runs,), np.uint32, sharding=batch_sharding)
    params_dev, key_dev = put(params_flat), put(sweep.key)
    init_fn, advance_fn, finalize_fn = kernels(
        sweep.algorithm, sweep.recorder, plan.num_steps, plan.time_chunk, mesh, True, None,
        sweep.hints)
    xs = jax.tree_util.tree_map(lambda x: x[:plan.time_chunk], sweep.inputs)
    lowered = {
        "init": init_fn.lower(params_dev, key_dev, index, seeds, put(inputs0)),
        "advance": advance_fn.lower(params_dev, key_dev, index, seeds, batched(specs.state),
                                    batched(specs.acc), put(np.int32(0)), put(xs)),
        "finalize": finalize_fn.lower(batched(specs.acc)),
    }
    layout = f"{executor.mode}[{runs} runs/program]"
    names = tuple(f"{name}:{layout}" for name in lowered)
    if not compile:
        return executor.mode, names, None
    sizes = [_xla_bytes(low.compile()) for low in lowered.values()]
    known = [s for s in sizes if s is not None]
    return executor.mode, names, (max(known) if known else None)


def plan_workload(
    name: str,
    size: str = "paper",
    *,
    rng: str | None = None,
    device_bytes: int = T4_BYTES,
    devices=None,
    compile: bool = True,
) -> KernelPlan:
    """Plan, lower and (``compile=True``) compile workload ``name`` without running it."""
    devices = list(jax.devices() if devices is None else devices)
    if int(device_bytes) <= 0:
        raise ValueError(f"device_bytes must be > 0; got {device_bytes!r}")
    usable = int(ALLOCATOR_FRACTION * int(device_bytes))
    start = time.perf_counter()
    call = captured_call(name, size, rng)
    sweep, specs, plan, params_flat, inputs0 = _sweep_and_plan(
        call, devices, int(CHUNK_FRACTION * usable) * len(devices))
    mode, names, xla = _lower(sweep, specs, plan, params_flat, inputs0, compile=compile)
    per_device = plan.chunk_bytes // len(devices)
    return KernelPlan(
        workload=name, size=size, num_devices=len(devices), execution=mode, impl=sweep.impl,
        grid_points=sweep.num_points, seeds=sweep.num_seeds, steps=sweep.num_steps,
        seed_chunk=plan.seed_chunk, time_chunk=plan.time_chunk, batch=plan.batch,
        chunks=len(plan.seed_chunks()), per_run_bytes=plan.per_run_bytes,
        chunk_bytes_per_device=per_device, xla_bytes_per_device=xla, usable_bytes=usable,
        fits=per_device <= usable and (xla is None or xla <= usable), kernels=names,
        seconds=time.perf_counter() - start, x64=bool(jax.config.jax_enable_x64),
    )


def format_plans(plans, device_bytes: int = T4_BYTES) -> str:
    """The plan table (MiB per device; ``fits`` against the usable share of the device)."""
    head = (f"{'workload':<22} {'devices':>7} {'execution':>10} {'runs':>8} {'steps':>6} "
            f"{'seed chunk':>10} {'batch':>7} {'chunks':>6} {'plan MiB/dev':>12} "
            f"{'XLA MiB/dev':>11} {'fits':>4}")
    lines = [f"device model: {device_bytes / 1e9:g} GB per device, {ALLOCATOR_FRACTION:g} of it "
             f"usable by JAX, a chunk planned to {CHUNK_FRACTION:g} of that", head,
             "-" * len(head)]
    for p in plans:
        xla = "-" if p.xla_bytes_per_device is None else f"{p.xla_bytes_per_device / 2**20:.1f}"
        lines.append(
            f"{p.workload:<22} {p.num_devices:>7} {p.execution:>10} "
            f"{p.grid_points * p.seeds:>8} {p.steps:>6} {p.seed_chunk:>10} {p.batch:>7} "
            f"{p.chunks:>6} {p.chunk_bytes_per_device / 2**20:>12.1f} {xla:>11} "
            f"{'yes' if p.fits else 'NO':>4}")
    return "\n".join(lines)


__all__ = ["KernelPlan", "T4_BYTES", "captured_call", "format_plans", "plan_workload"]
