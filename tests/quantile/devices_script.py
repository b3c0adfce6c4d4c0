"""Subprocess driver: quantile runs in float64 on 4 forced CPU devices vs 1 (see test_devices.py).

usage: python devices_script.py OUT  (with XLA_FLAGS=--xla_force_host_platform_device_count=4)
"""

from __future__ import annotations

import sys

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

import ldpjax.quantile as Q  # noqa: E402
from ldpjax.engine import make_key, product_grid, record, simulate  # noqa: E402

NUM_SEEDS = 40


def runs(devices, seed_chunk):
    clients = Q.make_clients(("normal", "laplace") * 5, loc=np.linspace(-1.0, 1.0, 10))
    base = Q.quantile_params(0.3, np.linspace(0.25, 0.9, 10), clients, weights=np.linspace(1, 2, 10) / 15.0)
    grid = product_grid(base, tau=[0.3, 0.8])
    out = {}
    for name, algorithm, steps in [
        ("c1", Q.local_sgd(Q.LocalSGDConfig(60, Q.C1)), 60),
        ("log_sampling", Q.local_sgd(Q.LocalSGDConfig(60, Q.LOG, exact_law=False)), Q.LocalSGDConfig(60, Q.LOG).num_rounds),
        ("single", Q.single(Q.SingleConfig(30)), 30),
    ]:
        result = simulate(
            algorithm, grid, make_key(3), steps, num_seeds=NUM_SEEDS, grid_ndim=1,
            record=record.last(lambda o: (o.estimate, o.variance)), devices=devices, seed_chunk=seed_chunk,
        )
        out[name + "_estimate"], out[name + "_variance"] = (np.asarray(x) for x in result.record)
        out[name + "_devices"] = np.asarray(result.info.num_devices if hasattr(result.info, "num_devices")
                                            else result.info["num_devices"])
    return out


if __name__ == "__main__":
    devices = jax.devices()
    assert len(devices) == 4, devices
    arrays = {}
    for label, devs, chunk in [("four", devices, 5), ("one", devices[:1], NUM_SEEDS), ("one_chunk7", devices[:1], 7)]:
        for key, value in runs(devs, chunk).items():
            arrays[f"{label}_{key}"] = value
    np.savez(sys.argv[1], **arrays)
