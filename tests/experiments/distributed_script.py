"""Worker for the multi-process tests (run alone, or as N processes by ``ldpjax_experiments.launch``).

usage: python distributed_script.py MODE OUT CHECKPOINT_DIR
  MODE=sweep : two small sweeps (a noisy counter over 4 privacy levels, 170 seeds in 7 chunks of
               25, the last one short; float, int32 and final-state leaves; the first call with
               the checkpointing runner, the second with the sharing runner and the default
               seed chunk: one chunk alone, one chunk per process with several; both runners
               share the chunks over the processes); every process saves what it got to
               OUT/records-p<id>.npz and its SimulationInfo to OUT/info-p<id>.json.
  MODE=kill  : the first sweep only; process 1 SIGKILLs itself as soon as the first round of
               chunks has been exchanged and process 0 has saved it (a killed process).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

from ldpjax_experiments import checkpointing, cluster

cluster.initialize()  # before any JAX computation; no-op when run alone

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ldpjax.engine import Algorithm, make_key, record, simulate  # noqa: E402
from ldpjax_experiments.progress import ProgressBar  # noqa: E402

MUS = [0.25, 0.5, 1.0, 2.0]
NUM_SEEDS, SEED_CHUNK, NUM_STEPS = 170, 25, 40


def _init(mu, key):
    return {"total": jnp.zeros((), jnp.float32), "count": jnp.zeros((), jnp.int32)}


def _step(mu, state, inputs, key):
    bit_key, noise_key = jax.random.split(key)
    bit = jax.random.bernoulli(bit_key)
    total = state["total"] + bit + jax.random.normal(noise_key, ()) / mu
    state = {"total": total, "count": state["count"] + bit.astype(jnp.int32)}
    return state, {"error": total, "bit": bit.astype(jnp.int32)}


COUNTER = Algorithm(_init, _step)


class _KillAfterFirstRound(ProgressBar):
    """Process 1 kills itself once process 0 has saved the first round's chunks."""

    def __init__(self, checkpoint_dir: str):
        super().__init__(NUM_SEEDS * NUM_STEPS, enabled=False)
        self.checkpoint_dir = Path(checkpoint_dir)

    def update(self, amount: float = 1.0) -> None:
        super().update(amount)
        if jax.process_index() != 1:
            return
        deadline = time.monotonic() + 60
        while len(list(self.checkpoint_dir.glob("*/chunk-*.npz"))) < jax.process_count():
            if time.monotonic() > deadline:
                raise SystemExit("process 0 did not save the first round")
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)


def sweep(checkpoint_dir, progress=False):
    return simulate(
        COUNTER, jnp.asarray(MUS), make_key(11), NUM_STEPS, num_seeds=NUM_SEEDS, grid_ndim=1,
        record=record.combine(last=record.last("error"), bits=record.total("bit")),
        seed_chunk=SEED_CHUNK, runner=checkpointing.checkpointed(checkpoint_dir),
        progress=progress,
    )


def main(mode: str, out: str, checkpoint_dir: str) -> None:
    pid = jax.process_index()
    if mode == "kill":
        sweep(checkpoint_dir, progress=_KillAfterFirstRound(checkpoint_dir))
        return
    first = sweep(checkpoint_dir)
    second = simulate(
        COUNTER, jnp.asarray(MUS[:2]), make_key(5), 16, num_seeds=9, grid_ndim=1,
        record=record.total("error"), keep_state=False,  # default chunk: split over processes
        runner=checkpointing.shared(),
    )
    Path(out).mkdir(parents=True, exist_ok=True)
    np.savez(
        Path(out) / f"records-p{pid}.npz",
        last=first.record["last"], bits=first.record["bits"],
        state_total=first.state["total"], state_count=first.state["count"],
        second=second.record,
    )
    info = {"first": first.info.as_dict(), "second": second.info.as_dict(),
            "process_count": jax.process_count(), "devices": len(jax.local_devices())}
    (Path(out) / f"info-p{pid}.json").write_text(json.dumps(info))


if __name__ == "__main__":
    main(*sys.argv[1:4])
