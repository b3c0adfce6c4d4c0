"""Subprocess driver for the engine tests (multi-device and interrupted sweeps).

usage: python sweep_script.py MODE OUT [CHECKPOINT_DIR]
  MODE=devices : 120 seeds x 4 privacy levels of a noisy counter on every device, with
                 several chunk sizes (an even split over the 4 devices, one that is not, with
                 time chunks, the whole sweep in one chunk, and chunks of 7 seeds), for the
                 default generator (run device by device) and threefry (one sharded
                 program); saves the records to OUT (npz). For the default generator the
                 uneven split runs without time chunks: its time-chunked programs, compiled
                 once per device, cost ~10 s of a 2-core machine; the fast suite covers time
                 chunks with threefry, and ``devices_all`` (slow) covers them per device.
  MODE=devices_all : the same, every run with time chunks, and for rng="fast" (philox2x32,
                 run device by device).
  MODE=x64     : the same at 1000 seeds under float64 with a step that reduces over 1000
                 draws (sums in a data-dependent order are where float64 results could differ
                 by an ulp).
  MODE=slow    : a sweep in 12 chunks with checkpoints that SIGKILLs itself while it computes
                 its third chunk (two saved), so the test needs no race against a timer and
                 the sweep can be small; ``slow_sweep`` is the same sweep without the kill.
"""

from __future__ import annotations

import os
import sys

if len(sys.argv) > 1 and sys.argv[1] == "x64":
    import jax

    jax.config.update("jax_enable_x64", True)

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.engine import Algorithm, enable_compile_cache, make_key, record, simulate
from ldpjax_experiments.checkpointing import checkpointed

if os.environ.get("LDPJAX_CACHE_DIR"):  # the test session's compilation cache (tests/plugins/compile_cache.py)
    enable_compile_cache()

MUS = [0.25, 0.5, 1.0, 2.0]
# seeds and seed chunks per mode: (seeds, even split, uneven split with time chunks, chunk 7)
SIZES = {"devices": (120, 40, 37, 7), "devices_all": (120, 40, 37, 7), "x64": (1000, 250, 333, 7)}
NUM_SEEDS = SIZES["devices"][0]
TIME_CHUNK = 20  # of 64 steps: three chunks of 20 and one of 4



def _counter_init(mu, key):
    return jnp.zeros((), jnp.result_type(float))


def _counter_step(mu, total, inputs, key):
    # a self-contained noisy counter: add a Bernoulli(1/2) bit plus Gaussian noise of sd 1/mu
    bit_key, noise_key = jax.random.split(key)
    bit = jax.random.bernoulli(bit_key).astype(total.dtype)
    total = total + bit + jax.random.normal(noise_key, (), total.dtype) / mu
    return total, {"error": total, "bit": bit}


COUNTER = Algorithm(_counter_init, _counter_step)


def _reduce_step(mu, total, inputs, key):
    draws = jax.random.normal(key, (1000,), total.dtype) / mu
    total = total + jnp.mean(jnp.cos(draws) * draws) + jnp.std(draws)
    return total, {"error": total}


REDUCE = Algorithm(_counter_init, _reduce_step)


def counter_sweep(devices, seed_chunk, time_chunk=None, rng=None, algorithm=COUNTER,
                  num_seeds=NUM_SEEDS):
    return simulate(
        algorithm, jnp.asarray(MUS), make_key(7), 64, num_seeds=num_seeds, grid_ndim=1,
        record=record.combine(last=record.last("error"), total=record.total("error")),
        devices=devices, seed_chunk=seed_chunk, time_chunk=time_chunk, rng=rng,
    )


def _slow_init(params, key):
    return jnp.eye(8) * params


def _slow_step(params, state, inputs, key):
    state = jnp.tanh(state @ state.T / 8.0 + params * jax.random.normal(key, state.shape))
    return state, state[0, 0]


SLOW = Algorithm(_slow_init, _slow_step)
SLOW_CHUNKS, KILL_AT = 12, 2  # chunks of the sweep; saved chunks when it kills itself


def _kill_once_saved(checkpoint_dir):
    """A progress callback: SIGKILL this process once KILL_AT chunks are on disk (a chunk's
    progress is told while it is computed, before it is saved: the kill lands mid-chunk)."""
    import os
    import signal
    from pathlib import Path

    def progress(n):
        if len(list(Path(checkpoint_dir).glob("*/chunk-*.npz"))) >= KILL_AT:
            os.kill(os.getpid(), signal.SIGKILL)
    return progress


def slow_sweep(checkpoint_dir, progress=None):
    return simulate(
        SLOW, jnp.float32(0.5), make_key(3), 60, num_seeds=2 * SLOW_CHUNKS, seed_chunk=2,
        record=record.total(), runner=checkpointed(checkpoint_dir), keep_state=False,
        progress=progress,
    )


def _device_runs(algorithm, rngs, mode, per_device_time_chunk=TIME_CHUNK):
    devices = jax.devices()
    assert len(devices) == 4, devices
    seeds, even, uneven, small = SIZES[mode]
    runs, arrays = {}, {}
    for rng in rngs:
        tag = "" if rng is None else f"{rng}_"
        kw = dict(rng=rng, algorithm=algorithm, num_seeds=seeds)
        time_chunk = per_device_time_chunk if rng is None else TIME_CHUNK
        arrays[f"{tag}four_devices_uneven_time_chunk"] = np.asarray(time_chunk or 0)
        runs.update({
            f"{tag}four_devices_even": counter_sweep(devices, even, **kw),
            f"{tag}four_devices_uneven": counter_sweep(devices, uneven, time_chunk, **kw),
            f"{tag}one_device_whole": counter_sweep(devices[:1], seeds, **kw),
            f"{tag}one_device_chunk7": counter_sweep(devices[:1], small, **kw),
        })
    for name, res in runs.items():
        arrays[name + "_last"] = res.record["last"]
        arrays[name + "_total"] = res.record["total"]
        arrays[name + "_devices"] = np.asarray(res.info["num_devices"])
        arrays[name + "_execution"] = np.asarray(res.info["execution"])
        arrays[name + "_rng"] = np.asarray(res.info["rng"])
    return arrays


if __name__ == "__main__":
    mode, out = sys.argv[1], sys.argv[2]
    if mode == "devices":  # the default generator (run per device) and a sharded one
        np.savez(out, **_device_runs(COUNTER, (None, "threefry2x32"), mode, None))
    elif mode == "devices_all":  # and rng="fast"
        np.savez(out, **_device_runs(COUNTER, (None, "threefry2x32", "fast"), mode))
    elif mode == "x64":
        np.savez(out, **_device_runs(REDUCE, ("threefry2x32",), mode))  # sharded (philox runs per device)
    elif mode == "slow":
        # imported, not this __main__: the checkpoint fingerprint names the step's module, and
        # the test resumes the sweep in its own process, where the module is sweep_script
        import sweep_script

        ckpt = sys.argv[3]
        res = sweep_script.slow_sweep(ckpt, progress=sweep_script._kill_once_saved(ckpt))
        np.savez(out, record=res.record)  # never reached: the sweep kills itself
    else:
        raise SystemExit(f"unknown mode {mode}")
