"""Subprocess driver for the engine tests (multi-device and interrupted sweeps).

usage: python sweep_script.py MODE OUT [CHECKPOINT_DIR]
  MODE=devices : 1000 seeds x 4 privacy levels of the noisy counter on every device, with
                 several chunk sizes; saves the records to OUT (npz).
  MODE=slow    : a deliberately slow sweep in many chunks with checkpoints (to be killed).
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.demo.noisy_counter import counter_params, noisy_counter
from ldpjax.engine import Algorithm, make_key, product_grid, record, simulate

MUS = [0.25, 0.5, 1.0, 2.0]


def counter_sweep(devices, seed_chunk, time_chunk=None):
    params = product_grid(counter_params(1.0), mu=MUS)
    result = simulate(
        noisy_counter(), params, make_key(7), 64, num_seeds=1000, grid_ndim=1,
        record=record.combine(last=record.last(), total=record.total(lambda o: o.error)),
        devices=devices, seed_chunk=seed_chunk, time_chunk=time_chunk,
    )
    return result


def _slow_init(params, key):
    return jnp.eye(48) * params


def _slow_step(params, state, inputs, key):
    state = jnp.tanh(state @ state.T / 48.0 + params * jax.random.normal(key, state.shape))
    return state, state[0, 0]


SLOW = Algorithm(_slow_init, _slow_step)


def slow_sweep(checkpoint_dir):
    return simulate(
        SLOW, jnp.float32(0.5), make_key(3), 3000, num_seeds=24, seed_chunk=2,
        record=record.total(), checkpoint_dir=checkpoint_dir, keep_state=False,
    )


if __name__ == "__main__":
    mode, out = sys.argv[1], sys.argv[2]
    if mode == "devices":
        devices = jax.devices()
        assert len(devices) == 4, devices
        runs = {
            "four_devices_chunk250": counter_sweep(devices, 250),
            "four_devices_chunk333_time20": counter_sweep(devices, 333, 20),
            "one_device_chunk1000": counter_sweep(devices[:1], 1000),
            "one_device_chunk7": counter_sweep(devices[:1], 7),
        }
        arrays = {}
        for name, res in runs.items():
            arrays[name + "_last"] = res.record["last"].error
            arrays[name + "_total"] = res.record["total"]
            arrays[name + "_devices"] = np.asarray(res.info["num_devices"])
        np.savez(out, **arrays)
    elif mode == "slow":
        res = slow_sweep(sys.argv[3])
        np.savez(out, record=res.record, computed=res.info["chunks_computed"],
                 loaded=res.info["chunks_loaded"])
    else:
        raise SystemExit(f"unknown mode {mode}")
