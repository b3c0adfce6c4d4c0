"""Feldman, McMillan & Talwar's numerical shuffling bound, per point, in plain NumPy/SciPy.

The reference of the ``accounting-shuffle`` bench workload and of ``tests/accounting/test_shuffle.py``,
written from the paper's description (Feldman, McMillan & Talwar, "Hiding Among the Clones: A
Simple and Nearly Optimal Analysis of Privacy Amplification by Shuffling", FOCS 2021, Theorem 3.2
and its numerical procedure), float64, one (n, eps0) point per call, no ldpjax code:

* C ~ Bin(n - 1, p) clones (p = e^-eps0 unless ``clone_prob`` is given); given C = c the pair
  P_c, Q_c of counts, P_c(k) = alpha b_c(k - 1) + (1 - alpha) b_c(k), Q_c(k) = (1 - alpha)
  b_c(k - 1) + alpha b_c(k), b_c the Bin(c, 1/2) pmf, alpha = e^eps0 / (e^eps0 + 1);
* both hockey-stick divergences D(P_c || Q_c) and D(Q_c || P_c) from binomial cdfs at their
  likelihood-ratio cutoffs;
* a sum over c in blocks of ``step`` values (within 15 standard deviations of C's mean) whose
  upper (lower) bound takes each block's largest (smallest) endpoint divergence, the mass of C
  outside the window added to the upper bound;
* a bisection over eps in [0, eps0], returning its lower and upper ends.

With step = 1 the two ends enclose the pair's exact epsilon to the bisection's resolution.

Example:
  >>> lower, upper = paper_epsilon(100_000, 4.0, 1e-6, step=64)
  >>> 0.16 < lower <= upper < 0.18
  True
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats as st


def _pair_divergences(c: np.ndarray, eps0: float, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """D(P_c || Q_c) and D(Q_c || P_c) at e^eps for an array of clone counts c (float64)."""
    alpha = math.exp(eps0) / (math.exp(eps0) + 1.0)
    w = math.exp(eps)

    def upper_tail(k):  # P_c(K >= k), Q_c(K >= k): K = B + 1 w.p. alpha (P) or 1 - alpha (Q)
        plus, same = st.binom.sf(k - 2, c, 0.5), st.binom.sf(k - 1, c, 0.5)
        return alpha * plus + (1 - alpha) * same, (1 - alpha) * plus + alpha * same

    # P_c(k) / Q_c(k) = (alpha k + (1 - alpha)(c + 1 - k)) / ((1 - alpha) k + alpha (c + 1 - k))
    # increases in k; P_c > e^eps Q_c iff k > (c + 1)(w alpha - 1 + alpha) / ((2 alpha - 1)(1 + w))
    cut = (c + 1.0) * (w * alpha - (1.0 - alpha)) / ((2.0 * alpha - 1.0) * (1.0 + w))
    k_p = np.floor(cut) + 1.0
    tail_p, tail_q = upper_tail(k_p)
    d_pq = np.maximum(tail_p - w * tail_q, 0.0)
    # Q_c > e^eps P_c iff k < (c + 1)(alpha - w (1 - alpha)) / ((2 alpha - 1)(1 + w))
    cut_q = (c + 1.0) * (alpha - w * (1.0 - alpha)) / ((2.0 * alpha - 1.0) * (1.0 + w))
    k_q = np.ceil(cut_q) - 1.0  # the largest k strictly below the cut
    tail_p, tail_q = upper_tail(k_q + 1.0)
    d_qp = np.maximum((1.0 - tail_q) - w * (1.0 - tail_p), 0.0)
    return d_pq, d_qp


def _paper_delta(n: int, eps0: float, eps: float, step: int, clone_prob: float):
    """(lower, upper) bound on the pair's delta(eps), summing over c in blocks of ``step``."""
    count = n - 1
    mean, sd = count * clone_prob, math.sqrt(count * clone_prob * (1.0 - clone_prob))
    lo = max(0, math.floor(mean - 15.0 * sd))
    hi = min(count, math.ceil(mean + 15.0 * sd))
    starts = np.arange(lo, hi + 1, step, dtype=float)
    ends = np.minimum(starts + step - 1, hi)
    mass = st.binom.cdf(ends, count, clone_prob) - st.binom.cdf(starts - 1, count, clone_prob)
    uncovered = max(0.0, 1.0 - float(np.sum(mass)))
    pq_s, qp_s = _pair_divergences(starts, eps0, eps)
    pq_e, qp_e = _pair_divergences(ends, eps0, eps)
    upper = max(np.sum(mass * np.maximum(pq_s, pq_e)), np.sum(mass * np.maximum(qp_s, qp_e)))
    lower = max(np.sum(mass * np.minimum(pq_s, pq_e)), np.sum(mass * np.minimum(qp_s, qp_e)))
    return lower, upper + uncovered


def paper_epsilon(n: int, eps0: float, delta: float, step: int = 1, iterations: int = 44,
                  clone_prob: float | None = None) -> tuple[float, float]:
    """(lower, upper) ends of the bisection for the pair's epsilon(delta) (module doc)."""
    clone_prob = math.exp(-eps0) if clone_prob is None else clone_prob
    bounds = []
    for side in (0, 1):
        lo, hi = 0.0, eps0
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            if _paper_delta(n, eps0, mid, step, clone_prob)[side] <= delta:
                hi = mid
            else:
                lo = mid
        bounds.append(lo if side == 0 else hi)
    return bounds[0], bounds[1]


__all__ = ["paper_epsilon"]
