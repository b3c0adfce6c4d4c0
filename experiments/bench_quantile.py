"""Benchmark: jitted/vmapped randomized-response Local SGD vs a plain vectorised NumPy version.

Both run the same algorithm (ldpjax.quantile.local_sgd: C1 or Log schedule, K normal clients,
randomized response with per-client r_k, lr_m = c0 / (m^a + b) split over E_m local steps,
sample-weighted Polyak-Ruppert estimate and the online self-normalised V_T) for R replications,
in the same process. NumPy is vectorised over replications x clients and loops over rounds and
local steps (float64, PCG64 generator, standard normals for the data). JAX runs through the
engine (``ldpjax.engine.simulate``: one compiled scan over rounds, vmapped over replications,
threefry keys). Reported: NumPy time, JAX first call (compile + run), JAX second call (run
only), and the ratios NumPy / JAX. A sanity line compares the two estimates' means and spreads.

Usage: python experiments/bench_quantile.py [--reps 1000] [--budget 2000] [--clients 10]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np


def numpy_local_sgd(rng, tau, r, loc, weights, local_steps, reps, c0=20.0, a=0.51, b=100.0):
    """Vectorised NumPy Local SGD: returns (estimate, V_T) per replication."""
    k = r.size
    up = (1 - r + 2 * tau * r) / (2 * r)
    down = (1 + r - 2 * tau * r) / (2 * r)
    q = np.zeros(reps)
    t = np.zeros(reps)
    mean = np.zeros(reps)
    spread = np.zeros(reps)
    cross = np.zeros(reps)
    clock = np.zeros(reps)
    for m, e in enumerate(local_steps):
        lr = c0 / ((m + 1) ** a + b) / e
        qk = np.repeat(q[:, None], k, axis=1)
        for _ in range(e):
            x = loc + rng.standard_normal((reps, k))
            u = rng.random((reps, k))
            report = np.where(u < r, x > qk, u >= 0.5 * (1 + r))
            qk += lr * np.where(report, up, -down)
        q = qk @ weights
        t_new = t + e
        delta = e * (q - mean) / t_new
        spread += -2 * delta * cross + delta * delta * clock
        cross -= delta * clock
        clock += e * t_new * t_new
        mean += delta
        t = t_new
    return mean, spread / t**3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--schedules", default="C1,Log")
    args = parser.parse_args(argv)

    import jax

    from ldpjax import quantile as Q
    from ldpjax.engine import make_key, record, simulate

    k = args.clients
    loc = np.linspace(-1.0, 1.0, k)
    r = np.linspace(0.25, 0.9, k)
    weights = np.full(k, 1.0 / k)
    tau = 0.3
    clients = Q.make_clients("normal", loc=loc)
    params = Q.quantile_params(tau, r, clients, weights)
    q_star = float(Q.global_quantile(tau, clients, weights))
    final = record.last(lambda o: (o.estimate, o.variance))
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; R={args.reps} replications, "
          f"K={k} clients, t_T={args.budget} samples per client")
    print(f"{'schedule':<8} {'numpy s':>9} {'jax 1st s':>10} {'jax 2nd s':>10} "
          f"{'np/jax(1st)':>12} {'np/jax(2nd)':>12}   sanity (mean err, sd) numpy | jax")
    for name in args.schedules.split(","):
        config = Q.LocalSGDConfig(args.budget, Q.schedules.by_name(name))
        algorithm = Q.local_sgd(config)
        rng = np.random.default_rng(0)
        start = time.perf_counter()
        est_np, var_np = numpy_local_sgd(rng, tau, r, loc, weights, config.local_steps, args.reps)
        t_np = time.perf_counter() - start
        times = []
        for seed in (1, 2):
            start = time.perf_counter()
            result = simulate(algorithm, params, make_key(seed), config.num_rounds,
                              num_seeds=args.reps, record=final, keep_state=False)
            jax.block_until_ready(result.record)
            times.append(time.perf_counter() - start)
        est_jax, var_jax = result.record
        print(
            f"{name:<8} {t_np:9.2f} {times[0]:10.2f} {times[1]:10.2f} {t_np / times[0]:12.2f} "
            f"{t_np / times[1]:12.2f}   ({np.mean(est_np) - q_star:+.4f}, {np.std(est_np):.4f}) | "
            f"({np.mean(est_jax) - q_star:+.4f}, {np.std(est_jax):.4f}); "
            f"mean sqrt(V) {np.mean(np.sqrt(var_np)):.4f} | {np.mean(np.sqrt(var_jax)):.4f}"
        )
    sd = math.sqrt(float(Q.clients_asymptotic_variance(tau, r, clients, weights)) / args.budget)
    print(f"Theorem 3.1 sd of the estimate: {sd:.4f}")


if __name__ == "__main__":
    main()
