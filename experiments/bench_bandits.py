"""Benchmark: private epsilon-greedy through the ldpjax engine vs plain vectorised NumPy.

Both run the same algorithm (paper 002): K = 2 arms with CTRs 0.324 / 0.295, one segment,
exploration by K-ary randomized response, a grid of strategies (constant and capped dynamic)
x budgets gamma, times ``--seeds`` runs. NumPy vectorises over all runs and loops over time in
Python; ldpjax scans over time and vmaps over runs (one compiled kernel). Each run's total
regret is compared between the two (same distribution, different random streams) as a sanity
check. Printed: compile time, steady-state time of each, and the ratio NumPy / ldpjax.

    python experiments/bench_bandits.py [--horizon 10000] [--seeds 100] [--key-impl rbg]
"""

from __future__ import annotations

import argparse
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import bandits
from ldpjax.engine import make_key, product_grid, record, simulate

CTR = np.array([0.324, 0.295])
GAMMAS = (0.05, 0.5, 1.0, 3.0, 5.0)


def numpy_epsilon_greedy(strategy, gamma, horizon, rng):
    """Vectorised over runs (arrays of shape (R,)), Python loop over visitors."""
    runs = strategy.shape[0]
    k = len(CTR)
    shows = np.zeros((runs, k))
    clicks = np.zeros((runs, k))
    regret = np.zeros(runs)
    eps_gamma = k / (k + np.exp(gamma) - 1)
    best = CTR.max()
    rows = np.arange(runs)
    for t in range(1, horizon + 1):
        eps_dyn = 1.0 if t <= k else min(1.0, (k * math.log(t) / t) ** (1 / 3))
        eps = np.where(strategy == 0, eps_gamma, np.maximum(eps_dyn, eps_gamma))
        q = clicks / np.maximum(shows, 1)
        u = rng.random((runs, 3 + k))
        top = q == q.max(1, keepdims=True)
        greedy = np.argmax(np.where(top, u[:, 3:], -1), axis=1)
        explored = (u[:, 1] * k).astype(int)
        arm = np.where(u[:, 0] < eps, explored, greedy)
        click = u[:, 2] < CTR[arm]
        shows[rows, arm] += 1
        clicks[rows, arm] += click
        regret += best - CTR[arm]
    return regret


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--key-impl", default="threefry2x32", choices=("threefry2x32", "rbg"))
    args = parser.parse_args()

    env = bandits.make_environment(CTR)
    base = bandits.epsilon_greedy_params(env, "constant", 1.0)
    params = product_grid(base, strategy=jnp.array([0, 2]), gamma=jnp.array(GAMMAS))
    alg = bandits.epsilon_greedy(bandits.PolicyConfig())
    rec = record.total(lambda o: o.regret)
    key = make_key(0, args.key_impl)
    runs = 2 * len(GAMMAS) * args.seeds
    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind}; {runs} runs x "
          f"{args.horizon} visitors ({args.key_impl} keys)")

    start = time.perf_counter()
    simulate(alg, params, key, args.horizon, num_seeds=args.seeds, grid_ndim=2, record=rec)
    first = time.perf_counter() - start
    start = time.perf_counter()
    out = simulate(alg, params, key, args.horizon, num_seeds=args.seeds, grid_ndim=2, record=rec)
    jax_time = time.perf_counter() - start

    strategy = np.repeat(np.array([0, 2]), len(GAMMAS) * args.seeds)
    gamma = np.tile(np.repeat(np.array(GAMMAS), args.seeds), 2)
    start = time.perf_counter()
    regret_np = numpy_epsilon_greedy(strategy, gamma, args.horizon, np.random.default_rng(0))
    np_time = time.perf_counter() - start

    jax_mean = out.record.reshape(2, len(GAMMAS), -1).mean(-1)
    np_mean = regret_np.reshape(2, len(GAMMAS), -1).mean(-1)
    print(f"ldpjax: first call {first:.2f} s (incl. compile), steady {jax_time:.2f} s")
    print(f"numpy : {np_time:.2f} s")
    print(f"ratio numpy / ldpjax (steady): {np_time / jax_time:.2f}x")
    print("mean regret (rows: constant, capped; columns: gamma", GAMMAS, ")")
    print("  ldpjax:", np.round(jax_mean, 1).tolist())
    print("  numpy :", np.round(np_mean, 1).tolist())


if __name__ == "__main__":
    main()
