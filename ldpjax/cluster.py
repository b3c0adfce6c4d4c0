"""The multi-process runtime: join the JAX processes the environment describes.

Start N processes that each call :func:`initialize` before any JAX computation (the launcher
``python -m ldpjax.launch --processes N -- run NAME`` does this on one machine; under SLURM or
on a TPU pod see below). Every :func:`~ldpjax.engine.simulate` call is then shared by the
processes (how: :mod:`ldpjax.engine.distributed`), and gives the records of one process, bit
for bit.

Environment read by :func:`initialize`, first match wins:

* ``LDPJAX_NUM_PROCESSES`` (> 1), ``LDPJAX_PROCESS_ID``, ``LDPJAX_COORDINATOR`` (``host:port``
  of process 0) -- set by :mod:`ldpjax.launch`, or by hand;
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

The names were first in ``ldpjax.engine.distributed``, which still answers for them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from ldpjax.engine.distributed import barrier, is_main_process, is_multiprocess

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


__all__ = [
    "ENV_COORDINATOR",
    "ENV_MODE",
    "ENV_NUM_PROCESSES",
    "ENV_PROCESS_ID",
    "ProcessConfig",
    "barrier",
    "config_from_env",
    "initialize",
    "is_main_process",
    "is_multiprocess",
]
