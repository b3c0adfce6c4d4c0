"""Benchmark: RW-FTPL and RW-AdaBatch in ldpjax (jit + vmap through the engine) vs a plain
vectorised NumPy implementation of the same algorithms, in the same process.

Both sides run ``runs`` independent runs of T rounds with n experts on the same gain matrix
(iid Bernoulli, one best expert) and return every run's total gain. NumPy is vectorised over
runs (one Python iteration per round; AdaBatch computes ComputeDelay only for the runs that
start a batch, by the same integer bisection). JAX is timed after a warm-up call (compile
excluded; the compile time is printed separately). The mean total gains of the two sides are
printed as a sanity check (they use different random streams, so they agree only up to
sampling error).

    python experiments/bench_experts.py [--experts 10] [--horizon 2000] [--runs 1000]
"""

from __future__ import annotations

import argparse
import math
import time

import jax
import numpy as np
from scipy.special import erf, ndtr

from ldpjax.engine import record, simulate
from ldpjax.experts import (
    AdaBatchConfig,
    FTPLConfig,
    adabatch_params,
    bernoulli_gains,
    ftpl_params,
    rw_adabatch,
    rw_ftpl,
)


# --------------------------------------------------------------------------- NumPy versions
def numpy_ftpl(rng, gains, eta, runs):
    horizon, n = gains.shape
    total = eta * rng.standard_normal((runs, n))
    earned = np.zeros(runs)
    for t in range(horizon):
        action = np.argmax(total, axis=1)
        earned += gains[t, action]
        total += gains[t] + eta * rng.standard_normal((runs, n))
    return earned


def _p_of_beta(beta):
    phi = np.exp(-0.5 * beta * beta) / math.sqrt(2 * math.pi)
    return 2 * ndtr(-math.sqrt(2) * beta) + 2 * math.sqrt(math.pi) * phi * erf(beta / math.sqrt(2))


def numpy_compute_delay(gap, t, eta, n, alpha):
    lo = np.ones(gap.shape, np.int64)
    hi = np.full(gap.shape, 2**30 + 1, np.int64)
    scaled = gap / (eta * math.sqrt(2))
    offset = math.sqrt(math.log(2 * n - 2))
    for _ in range(30):
        mid = lo + (hi - lo) // 2
        ok = _p_of_beta(scaled / np.sqrt(mid) - offset) <= alpha * np.sqrt(math.log(n) / (t + mid))
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return lo


def numpy_adabatch(rng, gains, eta, alpha, runs):
    horizon, n = gains.shape
    total = eta * rng.standard_normal((runs, n))
    buffer = np.zeros((runs, n))
    earned = np.zeros(runs)
    action = np.zeros(runs, np.int64)
    remaining = np.zeros(runs, np.int64)
    for t in range(horizon):
        start = remaining == 0
        if start.any():
            sub = total[start]
            top = np.partition(sub, n - 2, axis=1)[:, -2:]
            gap = top[:, 1] - top[:, 0]
            remaining[start] = numpy_compute_delay(gap, t + 1, eta, n, alpha)
            action[start] = np.argmax(sub, axis=1)
        earned += gains[t, action]
        buffer += gains[t] + eta * rng.standard_normal((runs, n))
        remaining -= 1
        closing = remaining == 0
        total[closing] += buffer[closing]
        buffer[closing] = 0.0
    return earned


# --------------------------------------------------------------------------- timing
def _time(fn, repeats):
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experts", type=int, default=10)
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--mu", type=float, default=1.0)
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--gap", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--key-impl", default="threefry2x32")
    args = parser.parse_args()
    n, horizon, runs = args.experts, args.horizon, args.runs
    eta = math.sqrt(n) / args.mu
    gains = bernoulli_gains(jax.random.key(0), horizon, n, args.gap)
    gains_np = np.asarray(gains, np.float64)
    key = jax.random.key(1, impl=args.key_impl)
    total = record.total(lambda out: out.gain)
    print(f"devices: {jax.devices()}")
    print(f"n={n}, T={horizon}, runs={runs}, mu={args.mu}, alpha={args.alpha}, key={args.key_impl}")
    print(
        f"{'algorithm':<12} {'jax compile s':>14} {'jax run s':>10} {'numpy s':>9} "
        f"{'numpy/jax':>10} {'mean gain jax':>14} {'mean gain numpy':>16}"
    )
    cases = [
        (
            "RW-FTPL",
            rw_ftpl(FTPLConfig(n)),
            ftpl_params(args.mu),
            lambda rng: numpy_ftpl(rng, gains_np, eta, runs),
        ),
        (
            "RW-AdaBatch",
            rw_adabatch(AdaBatchConfig(n)),
            adabatch_params(args.mu, args.alpha),
            lambda rng: numpy_adabatch(rng, gains_np, eta, args.alpha, runs),
        ),
    ]
    for name, algo, params, numpy_fn in cases:

        def run_jax(algo=algo, params=params):
            return simulate(
                algo,
                params,
                key,
                horizon,
                num_seeds=runs,
                inputs=gains,
                record=total,
                keep_state=False,
            ).record

        start = time.perf_counter()
        run_jax()  # compile + first run
        first = time.perf_counter() - start
        jax_s, jax_out = _time(run_jax, args.repeats)
        rng = np.random.default_rng(2)
        numpy_s, numpy_out = _time(lambda f=numpy_fn, r=rng: f(r), args.repeats)
        print(
            f"{name:<12} {first - jax_s:>14.2f} {jax_s:>10.3f} {numpy_s:>9.3f} "
            f"{numpy_s / jax_s:>10.2f} {np.mean(jax_out):>14.2f} {np.mean(numpy_out):>16.2f}"
        )


if __name__ == "__main__":
    main()
