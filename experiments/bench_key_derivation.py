"""Why threefry4x32 is not the engine's default generator: the engine's key pattern, timed.

Every ldpjax algorithm receives the step key ``fold_in(run_key, t)`` inside a ``lax.scan``
that is ``vmap``-ed over runs, and most split it (``split(key)``) before drawing. This script
times exactly that pattern (``runs`` runs x ``steps`` steps, one normal and one Bernoulli per
step) for each key implementation this JAX offers, each in its own process under a time limit,
and prints compile and steady seconds next to a plain NumPy (PCG64) version of the same draws.

The script shows, on the machine it runs on, whether threefry4x32 -- fast at
``jax.random.bits`` -- finishes compiling this pattern within the time limit, and how it runs
with an optimisation barrier between ``fold_in`` and ``split``. Usage::

    python experiments/bench_key_derivation.py [--runs 400] [--steps 1000] [--limit 120]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

IMPLS = ("threefry2x32", "threefry4x32", "philox2x32", "philox4x32", "rbg")

_CHILD = r"""
import sys, time
import jax, jax.numpy as jnp
impl, barrier, runs, steps = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3]), int(sys.argv[4])
hold = jax.lax.optimization_barrier if barrier else (lambda k: k)
def sweep(keys):
    def one(run_key):
        def step(total, t):
            key_t = hold(jax.random.fold_in(run_key, t))
            normal_key, coin_key = jax.random.split(key_t)
            draw = jax.random.normal(normal_key) + jax.random.bernoulli(coin_key)
            return total + draw, None
        return jax.lax.scan(step, 0.0, jnp.arange(steps))[0]
    return jax.vmap(one)(keys)
try:
    keys = jax.random.split(jax.random.key(0, impl=impl), runs)
except Exception as err:
    print("unavailable", type(err).__name__); sys.exit(0)
fn = jax.jit(sweep)
start = time.perf_counter(); fn(keys).block_until_ready(); first = time.perf_counter() - start
start = time.perf_counter(); fn(keys).block_until_ready(); steady = time.perf_counter() - start
print(f"{first - steady:.3f} {steady:.4f}")
"""


def _numpy_seconds(runs: int, steps: int) -> float:
    import numpy as np

    rng = np.random.default_rng(0)
    start = time.perf_counter()
    total = np.zeros(runs, np.float32)
    for _ in range(steps):
        total += rng.standard_normal(runs, dtype=np.float32) + (rng.random(runs) < 0.5)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per child process")
    args = parser.parse_args(argv)
    numpy_s = _numpy_seconds(args.runs, args.steps)
    print(f"{args.runs} runs x {args.steps} steps; NumPy (PCG64) {numpy_s:.4f} s")
    print(f"{'generator':14s} {'barrier':>7s} {'compile s':>10s} {'steady s':>9s} {'NumPy/jax':>9s}")
    for impl in IMPLS:
        for barrier in ("0", "1"):
            try:
                out = subprocess.run(
                    [sys.executable, "-c", _CHILD, impl, barrier, str(args.runs), str(args.steps)],
                    capture_output=True, text=True, timeout=args.limit,
                ).stdout.strip().splitlines()
                line = out[-1] if out else "failed"
            except subprocess.TimeoutExpired:
                line = f"timeout (> {args.limit:.0f} s)"
            parts = line.split()
            if len(parts) == 2 and parts[0] != "unavailable":
                compile_s, steady_s = map(float, parts)
                ratio = numpy_s / steady_s if steady_s > 0 else float("inf")
                print(f"{impl:14s} {barrier:>7s} {compile_s:10.2f} {steady_s:9.4f} {ratio:8.2f}x", flush=True)
            else:
                print(f"{impl:14s} {barrier:>7s} {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
