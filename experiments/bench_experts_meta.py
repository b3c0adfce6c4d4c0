"""Benchmark: RW-Meta (13 learners) through the engine vs plain vectorised NumPy.

Workload: the COVID task's shape -- T weeks, n hospitals, the paper's 13 learners (12 rolling
ridge learners w in {8,16,32,64} x {weak, medium, strong} + RW-FTPL), S seeds x P privacy
levels. Both implementations do the same arithmetic per round and run: the meta choice
(eigendecomposition of the decorrelated m x m covariance, fresh y_t, argmax), the Gaussian
release, the score / covariance updates and the 13 learners' next actions. NumPy is vectorised
over the S x P runs (batched ``eigh`` / ``matmul``; the ridge learners of a run share one
window buffer, the natural NumPy layout) and loops over time; JAX runs
:func:`ldpjax.experts.rw_meta.rw_meta` through ``simulate`` (scan over time, vmap over runs
and over the learner family).

    python experiments/bench_experts_meta.py [--weeks 148] [--experts 293] [--seeds 100]

Prints the mean total gain of both (they must agree within sampling error), wall times
(compile excluded: the JAX call is warmed up once) and the ratio.
"""

from __future__ import annotations

import argparse
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.engine import make_key, product_grid, record, simulate
from ldpjax.experts.covid import synthetic_covid
from ldpjax.experts.learners import GAIN_VARIANCE_FLOOR, paper_learners
from ldpjax.experts.rw_meta import meta_params, rw_meta_algorithm


def numpy_rw_meta(gains: np.ndarray, mus: np.ndarray, seeds: int, seed: int) -> np.ndarray:
    """Total gain per (mu, seed) of RW-Meta with the 13 paper learners, in NumPy."""
    rng = np.random.default_rng(seed)
    T, n = gains.shape
    windows = np.repeat([8, 16, 32, 64], 3)
    taus = np.tile([1.0, 0.1, 0.01], 4)
    W, m = 64, 13
    R = len(mus) * seeds
    eta = np.repeat(
        np.where(np.isfinite(mus), math.sqrt(n) / np.where(np.isfinite(mus), mus, 1), math.sqrt(2)),
        seeds,
    )
    kappa = (eta[:, None] ** 2 + GAIN_VARIANCE_FLOOR) / taus[None, :] ** 2  # (R, 12)
    buffer = np.zeros((R, W, n), np.float32)  # circular: slot (t - 1) % W holds round t
    cumulative = np.zeros((R, n), np.float32)
    actions = np.zeros((R, m, n), np.float32)
    actions[:, :12, :] = 1.0 / n
    actions[:, 12, 0] = 1.0
    scores = np.zeros((R, m))
    cov = np.zeros((R, m, m))
    total = np.zeros(R)
    lags = np.arange(1, W + 1)
    rows = np.arange(R)
    for t in range(1, T + 1):
        # meta choice
        star = cov - cov.sum(axis=(1, 2), keepdims=True) / m**2
        lam, vecs = np.linalg.eigh(star)
        level = np.maximum(2.0 * t, lam[:, -1])
        var = np.clip(level[:, None] - lam, 0, None)
        y = np.einsum("rij,rj->ri", vecs, np.sqrt(var) * rng.standard_normal((R, m)))
        chosen = np.argmax(scores + y, axis=1)
        g = gains[t - 1]
        total += actions[rows, chosen] @ g
        # release and post-processing
        noisy = (g[None, :] + eta[:, None] * rng.standard_normal((R, n))).astype(np.float32)
        scores += np.einsum("rmn,rn->rm", actions, noisy)
        cov += eta[:, None, None] ** 2 * np.matmul(actions, actions.transpose(0, 2, 1))
        slot = (t - 1) % W
        buffer[:, slot] = noisy
        slot_lag = (slot - np.arange(W)) % W  # lag - 1 of each slot
        cumulative += noisy
        k = np.minimum(t, windows)  # observations used per learner (12,)
        used = (lags[None, :] <= k[:, None]).astype(np.float64)  # (12, W)
        trend = np.where(used > 0, -lags[None, :] / windows[:, None], 0.0)
        a = used.sum(1)[None, :] + kappa
        b = trend.sum(1)[None, :]
        d = (trend**2).sum(1)[None, :] + kappa
        weights = (
            used[None]
            * (d[..., None] * used[None] - b[..., None] * trend[None])
            / (a * d - b * b)[..., None]
        )
        predictions = np.matmul(weights[..., slot_lag].astype(np.float32), buffer)  # (R, 12, n)
        best = predictions.max(-1, keepdims=True)
        ties = (predictions >= best).astype(np.float32)
        actions[:, :12, :] = ties / ties.sum(-1, keepdims=True)
        actions[:, 12, :] = 0.0
        actions[rows, 12, np.argmax(cumulative, axis=1)] = 1.0
    return total.reshape(len(mus), seeds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weeks", type=int, default=148)
    parser.add_argument("--experts", type=int, default=293)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    mus = np.array([np.inf, 1.0, 0.5, 0.25])
    gains = np.asarray(
        synthetic_covid(jax.random.key(0), "CA", args.weeks, num_hospitals=args.experts), np.float32
    )
    learners = paper_learners()
    alg = rw_meta_algorithm(learners, args.experts)
    params = product_grid(meta_params(1.0, learners), mu=list(mus))
    rec = record.total(lambda out: out.gain)

    def run_jax(seed):
        return simulate(
            alg,
            params,
            make_key(seed),
            inputs=jnp.asarray(gains),
            num_seeds=args.seeds,
            grid_ndim=1,
            record=rec,
            keep_state=False,
        ).record

    t0 = time.perf_counter()
    run_jax(0)
    first = time.perf_counter() - t0
    jax_times, np_times = [], []
    for r in range(args.repeats):
        t0 = time.perf_counter()
        totals_jax = run_jax(r + 1)
        jax_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        totals_np = numpy_rw_meta(gains, mus, args.seeds, r)
        np_times.append(time.perf_counter() - t0)
    print(f"backend={jax.default_backend()} devices={len(jax.devices())}")
    print(
        f"workload: T={args.weeks} x n={args.experts} x m=13 learners x {args.seeds} seeds x "
        f"{len(mus)} mu = {args.weeks * args.seeds * len(mus)} run-rounds"
    )
    se = np.sqrt(totals_jax.var(1) / args.seeds + totals_np.var(1) / args.seeds)
    print(
        f"mean total gain  jax: {np.round(totals_jax.mean(1), 2)}  numpy: {np.round(totals_np.mean(1), 2)}"
        f"  |diff|/se: {np.round(np.abs(totals_jax.mean(1) - totals_np.mean(1)) / se, 2)}"
    )
    print(f"jax  (first call incl. compile): {first:.3f} s")
    print(f"jax  best of {args.repeats}: {min(jax_times):.3f} s")
    print(f"numpy best of {args.repeats}: {min(np_times):.3f} s")
    print(f"speed-up numpy/jax: {min(np_times) / min(jax_times):.2f}x")


if __name__ == "__main__":
    main()
