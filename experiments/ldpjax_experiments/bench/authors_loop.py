"""Local SGD for quantiles written the way research code is: a Python loop per sample.

The algorithm: Algorithm 1 of "Federated Learning of Quantile Inference under Local Differential
Privacy" (ICLR 2026).

The bench's ``quantile-authors-loop`` baseline. Where :mod:`ldpjax_experiments.bench.numpy_reference` vectorises
over every replication, this is the program a paper's own simulation code typically is: a Python
loop over replications, over rounds m = 1..M and over the E_m local steps of a round, with NumPy
only across the K clients of one step (one normal draw, the randomized-response coins and the
update). Written from the paper's description and the documented modelling choices of ldpjax; it
imports nothing from ldpjax and copies no one's code.

One local step of client k at iterate q (truthful rate r_k, level tau): the true bit
s = 1{x > q} with x ~ N(loc_k, 1) is reported with probability r_k, else a fair coin, and
q += lr_m / E_m * ((1 - r_k + 2 tau r_k) / (2 r_k) if the report is 1 else
-(1 + r_k - 2 tau r_k) / (2 r_k)), lr_m = c0 / (m^a + b). The server averages the clients'
iterates with weights p_k. Estimate: Q^ = sum_m E_m q_m / t_T (Polyak-Ruppert, kept as a
running mean); V_T = sum_m E_m t_m^2 (Qbar_m - Q^)^2 / t_T^3 from three running sums
(Algorithm 2), Qbar_m the running mean after round m and t_m the samples used so far.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def local_sgd_loop(
    rng: np.random.Generator,
    tau: float,
    r: Sequence[float],
    loc: Sequence[float],
    weights: Sequence[float],
    local_steps: Sequence[int],
    reps: int,
    c0: float = 20.0,
    a: float = 0.51,
    b: float = 100.0,
) -> tuple[np.ndarray, np.ndarray]:
    """(Q^, V_T) of ``reps`` independent replications, each run sample by sample.

    Args:
      rng: the NumPy generator (replications draw from it one after the other).
      tau: the quantile level in (0, 1).
      r, loc, weights: per client: truthful rate in (0, 1], mean of its N(loc, 1) data, p_k.
      local_steps: E_1..E_M (all ones for C1).
      reps: number of replications (>= 1).
      c0, a, b: the learning rate c0 / (m^a + b).

    Returns:
      Two arrays of shape (reps,): the estimates and their V_T.
    """
    r = np.asarray(r, np.float64)
    loc = np.asarray(loc, np.float64)
    weights = np.asarray(weights, np.float64)
    if not 0.0 < tau < 1.0:
        raise ValueError(f"tau must be in (0, 1); got {tau!r}")
    if int(reps) < 1:
        raise ValueError(f"reps must be an integer >= 1; got {reps!r}")
    k = r.size
    up = (1.0 - r + 2.0 * tau * r) / (2.0 * r)
    down = (1.0 + r - 2.0 * tau * r) / (2.0 * r)
    estimates = np.empty(int(reps))
    variances = np.empty(int(reps))
    for rep in range(int(reps)):
        q = 0.0
        mean = 0.0  # Polyak-Ruppert running mean Qbar_m
        used = 0  # t_m
        s0 = s1 = s2 = 0.0  # sums of w_m = E_m t_m^2 times 1, Qbar_m, Qbar_m^2
        for m, steps in enumerate(local_steps, start=1):
            lr = c0 / (m**a + b) / steps
            qk = np.full(k, q)
            for _ in range(steps):
                x = rng.normal(loc, 1.0)
                truthful = rng.random(k) < r
                coin = rng.random(k) < 0.5
                report = np.where(truthful, x > qk, coin)
                qk = qk + lr * np.where(report, up, -down)
            q = float(np.dot(weights, qk))
            used += steps
            mean += steps * (q - mean) / used
            w = steps * float(used) ** 2
            s0 += w
            s1 += w * mean
            s2 += w * mean * mean
        estimates[rep] = mean
        variances[rep] = max(s2 - 2.0 * mean * s1 + mean * mean * s0, 0.0) / float(used) ** 3
    return estimates, variances


__all__ = ["local_sgd_loop"]
