"""RW-Meta's floor on CPU: the 13 x 13 eigendecompositions alone, ldpjax against NumPy.

RW-Meta draws y_t ~ N(0, c_t I - Sigma*_{t-1}) through an eigendecomposition of the decorrelated
score covariance of every run in every round. This script runs the ``rw-meta`` bench workload's
algorithm (``ldpjax bench --only rw-meta``, the same learners, gains and mu grid, default size
``small``), records every run's Sigma_t, and then times only the decompositions of those very
matrices:

* ``jnp.linalg.eigh`` and ``jnp.linalg.eigvalsh`` in a jitted ``lax.scan`` over rounds (the
  batch of runs per round, as RW-Meta's step sees them under ``vmap``), and a batched matmul
  and Cholesky factorisation of the same shapes for scale;
* ``np.linalg.eigh`` per round on the same matrices, as the NumPy reference does.

It prints the seconds of each. The bench's RW-Meta target (>= 3x NumPy) asks the whole ldpjax
step to take a third of NumPy's whole loop; when ldpjax's eigh alone takes about that much, the
target is out of reach for any step that keeps an exact LAPACK eigendecomposition. Usage::

    python experiments/bench_meta_eigh.py [--size small|paper] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.engine import product_grid, record, simulate
from ldpjax.experts import meta_params, paper_learners, rw_meta_algorithm
from ldpjax.experts.rw_meta import decorrelate
from ldpjax_experiments.bench.workloads import WORKLOADS, _covid_inputs


def workload_covariances(size: str) -> np.ndarray:
    """Sigma*_{t-1} for t = 1..T of every run of the workload: (T, runs, m, m)."""
    cfg = WORKLOADS["rw-meta"].sizes[size]
    gains, _ = _covid_inputs(cfg)
    learners = paper_learners()
    algorithm = rw_meta_algorithm(learners, cfg["experts"])
    params = product_grid(meta_params(1.0, learners), mu=list(cfg["mu"]))
    out = simulate(algorithm, params, key=jax.random.key(0), inputs=gains,
                   num_seeds=cfg["seeds"], grid_ndim=1,
                   record=record.every_step(lambda o: o.covariance))
    sigma = np.asarray(out.record, np.float64)  # (mu, seeds, T, m, m): Sigma_t after round t
    m = sigma.shape[-1]
    sigma = sigma.reshape(-1, *sigma.shape[-3:]).transpose(1, 0, 2, 3)  # (T, runs, m, m)
    before = np.concatenate([np.zeros((1, *sigma.shape[1:])), sigma[:-1]])  # Sigma_{t-1}
    star = np.asarray(decorrelate(before))
    return 0.5 * (star + np.swapaxes(star, -1, -2)).reshape(before.shape[0], -1, m, m)


def best_of(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="small", choices=("tiny", "small", "paper"))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    star_np = workload_covariances(args.size).astype(np.dtype(jnp.result_type(float)))
    rounds, runs, m, _ = star_np.shape
    shift = (np.abs(star_np).sum((-2, -1), keepdims=True) + 1.0) * np.eye(m)  # makes it PD

    def scanned(op, matrices):
        kernel = jax.jit(lambda s: jax.lax.scan(lambda c, x: (c, op(x)), 0, s)[1])
        matrices = jnp.asarray(matrices)
        return lambda: jax.block_until_ready(kernel(matrices))

    rows = [
        ("jnp.linalg.eigh (scan over rounds)", scanned(jnp.linalg.eigh, star_np)),
        ("jnp.linalg.eigvalsh", scanned(jnp.linalg.eigvalsh, star_np)),
        ("jnp.linalg.cholesky (shifted to PD)", scanned(jnp.linalg.cholesky, star_np + shift)),
        ("batched matmul", scanned(lambda x: x @ x, star_np)),
        ("np.linalg.eigh per round", lambda: [np.linalg.eigh(s) for s in star_np]),
    ]
    print(f"RW-Meta eigendecompositions, size {args.size}: {rounds} rounds x {runs} runs of "
          f"{m} x {m} matrices ({star_np.dtype}, jax {jax.__version__}, best of {args.repeats})")
    for name, fn in rows:
        seconds = best_of(fn, args.repeats)
        print(f"  {name:<40} {seconds:8.4f} s  ({seconds / (rounds * runs) * 1e6:6.2f} us "
              "per matrix)")


if __name__ == "__main__":
    main()
