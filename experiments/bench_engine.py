"""Benchmark: the engine (scan x vmap x jit) against plain vectorised NumPy.

Workload: the Gaussian-noise counter (``ldpjax.demo.noisy_counter``) for T steps, S seeds and
P privacy levels -- the same arithmetic in both: per step a Bernoulli bit and a Gaussian
release per run, running sums, error of the last step kept. NumPy is vectorised over the
S x P runs and loops over time (the natural NumPy way); JAX runs through ``simulate``.

    python experiments/bench_engine.py [--steps 2000] [--seeds 4096] [--levels 4] [--key-impl rbg]

Prints wall times (compile excluded: the JAX call is run once to warm up) and the ratio.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np

from ldpjax.demo.noisy_counter import counter_params, noisy_counter
from ldpjax.engine import make_key, product_grid, record, simulate


def numpy_counter(steps: int, seeds: int, mus: np.ndarray, rate: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    runs = (len(mus), seeds)
    noisy = np.zeros(runs, np.float32)
    true = np.zeros(runs, np.float32)
    scale = (1.0 / mus)[:, None].astype(np.float32)
    for _ in range(steps):
        bits = (rng.random(runs, dtype=np.float32) < rate).astype(np.float32)
        noisy += bits + scale * rng.standard_normal(runs, dtype=np.float32)
        true += bits
    return noisy - true


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=4096)
    parser.add_argument("--levels", type=int, default=4)
    parser.add_argument("--key-impl", default="threefry2x32")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    mus = np.geomspace(0.25, 4.0, args.levels)
    params = product_grid(counter_params(1.0), mu=mus)
    rec = record.last(lambda out: out.error)

    def run_jax(seed):
        return simulate(noisy_counter(), params, make_key(seed, args.key_impl), args.steps,
                        num_seeds=args.seeds, grid_ndim=1, record=rec, keep_state=False).record

    t0 = time.perf_counter()
    run_jax(0)
    compile_and_run = time.perf_counter() - t0
    jax_times, np_times = [], []
    for r in range(args.repeats):
        t0 = time.perf_counter()
        errors_jax = run_jax(r + 1)
        jax_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        errors_np = numpy_counter(args.steps, args.seeds, mus, 0.5, r)
        np_times.append(time.perf_counter() - t0)
    # same statistics: RMSE sqrt(T)/mu in both
    theory = np.sqrt(args.steps) / mus
    print(f"backend={jax.default_backend()} devices={len(jax.devices())} key_impl={args.key_impl}")
    print(f"workload: T={args.steps} steps x {args.seeds} seeds x {args.levels} privacy levels "
          f"= {args.steps * args.seeds * args.levels:.3g} run-steps")
    print(f"RMSE/theory  jax: {np.round(np.sqrt((errors_jax**2).mean(-1)) / theory, 3)}  "
          f"numpy: {np.round(np.sqrt((errors_np**2).mean(-1)) / theory, 3)}")
    print(f"jax  (first call incl. compile): {compile_and_run:.3f} s")
    print(f"jax  best of {args.repeats}: {min(jax_times):.3f} s")
    print(f"numpy best of {args.repeats}: {min(np_times):.3f} s")
    print(f"speed-up numpy/jax: {min(np_times) / min(jax_times):.2f}x")


if __name__ == "__main__":
    main()
