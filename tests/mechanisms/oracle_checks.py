"""Statistics shared by the oracle tests (``test_oracles_*.py``, ``tests/frequency``).

Every tolerance is derived from the sampling law at a false-alarm probability of 1e-6 per
check (Bonferroni over the entries a check covers), and every test draws from a fixed key, so
a passing test passes every time; a failing one points at a law that is off by more than that.

* :func:`audit_epsilon` — the Clopper-Pearson lower bound on epsilon of
  ``tests/mechanisms/test_audit.py`` (joint confidence 1 - 1e-6, both directions);
* :func:`chi_square_ok` — Pearson's statistic of observed counts against nominal
  probabilities, below the 1 - 1e-6 quantile of chi-square with (cells - 1) degrees of freedom;
* :func:`mean_bound` — the half-width z sd / sqrt(R) of a mean of R draws (z for 1e-6,
  two-sided, Bonferroni over ``entries``);
* :func:`pm_integers`, :func:`pm_law` — the integers of the discretised piecewise mechanism
  and its exact law enumerated from them (Python integers and fractions);
* :func:`variance_bounds` — the interval of the sample variance of R draws of a law with
  variance sigma^2: (R - 1) s^2 / sigma^2 ~ chi-square(R - 1) for normal draws, quantiles
  0.5e-6 and 1 - 0.5e-6, Bonferroni over ``entries``, widened by 10%. Each of our estimates
  sums n >= 100 independent reports, so its excess kurtosis kappa is O(1/n) (at most 0.2 for
  the most skewed reports tested) and Var[s^2] = sigma^4 (2 / (R - 1) + kappa / R) differs from
  the normal one by a relative kappa / 2 <= 10%: the widening covers it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import stats

FAILURE = 1e-6
TWO32 = 2**32


def _cp_low(k: int, n: int, a: float) -> float:
    return 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))


def _cp_high(k: int, n: int, a: float) -> float:
    return 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))


def audit_epsilon(hits0, hits1, n: int, delta: float = 0.0) -> float:
    """Largest Clopper-Pearson lower bound on eps over the events (both directions)."""
    a = FAILURE / (4 * len(hits0))
    best = 0.0
    for k0, k1 in zip(hits0, hits1, strict=True):
        for ka, kb in ((k0, k1), (k1, k0)):
            low, high = _cp_low(int(ka), n, a) - delta, _cp_high(int(kb), n, a)
            if low > 0:
                best = max(best, float(np.log(low / high)))
    return best


def chi_square_ok(observed, probs) -> tuple[bool, float, float]:
    """(statistic <= bound, statistic, bound) for counts against probabilities (cells with
    probability 0 must have no counts)."""
    observed = np.asarray(observed, np.float64)
    probs = np.asarray(probs, np.float64)
    n = observed.sum()
    live = probs > 0
    if np.any(observed[~live] > 0):
        return False, np.inf, 0.0
    expected = n * probs[live]
    stat = float(np.sum((observed[live] - expected) ** 2 / expected))
    bound = float(stats.chi2.ppf(1 - FAILURE, int(live.sum()) - 1))
    return stat <= bound, stat, bound


def z_value(entries: int = 1) -> float:
    """Two-sided normal quantile at 1e-6 / entries."""
    return float(stats.norm.isf(FAILURE / (2 * entries)))


def mean_bound(sd, draws: int, entries: int = 1):
    """Half-width of the interval of a mean of ``draws`` i.i.d. values of sd ``sd``."""
    return z_value(entries) * np.asarray(sd) / np.sqrt(draws)


def variance_bounds(variance, draws: int, entries: int = 1):
    """(low, high) of the sample variance of ``draws`` values of variance ``variance``."""
    a = FAILURE / (2 * entries)
    dof = draws - 1
    low = stats.chi2.ppf(a, dof) / dof
    high = stats.chi2.ppf(1 - a, dof) / dof
    variance = np.asarray(variance, np.float64)
    return variance * low / 1.1, variance * high * 1.1


def pm_integers(eps, g):
    """(A, B, T, w, M, K, valid) of the discretised piecewise mechanism at (eps, g)."""
    from ldpjax.mechanisms import piecewise

    prm = piecewise.piecewise_parameters(eps, g)
    a, b, t, w, m = (int(np.asarray(x)) for x in prm[:5])
    return a, b, t, w, m, float(np.asarray(prm.center_scale)), bool(np.asarray(prm.valid))


def pm_law(eps: float, g: float, x: float) -> tuple[np.ndarray, float]:
    """(P(m | valid) for m = -M..M, P(invalid)) of the discretised PM, from its integers (the
    window coin from the exact rational centre K x - (w - 1) / 2, K = T / (g (A - B) w))."""
    a, b, t, w, m, _, _ = pm_integers(eps, g)
    sigma = Fraction(t, (a - b) * w) / Fraction(g) * Fraction(x) - Fraction(w - 1, 2)
    low = math.floor(sigma)
    up = Fraction(math.floor((sigma - low) * TWO32), TWO32)
    law = np.zeros(2 * m + 1)
    for start, weight in ((low, 1 - up), (low + 1, up)):
        start = min(max(start, -m), m - w + 1)
        words = np.full(2 * m + 1, b, dtype=np.float64)
        words[start + m : start + m + w] = a
        law += float(weight) * words / t
    return law, (1 - t / TWO32) ** 2
