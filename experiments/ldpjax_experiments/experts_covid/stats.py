"""The statistics of the COVID table: ratios of mean total gains with their standard errors,
and where a swept ratio crosses break-even."""

from __future__ import annotations

import math

import numpy as np

from ldpjax_experiments.kit import mean_se


def ratio_independent(a, b) -> tuple[float, float]:
    """mean(a) / mean(b) and its delta-method SE for independent samples a, b."""
    (ma, sa), (mb, sb) = mean_se(a), mean_se(b)
    r = ma / mb
    return r, math.sqrt(sa**2 + (r * sb) ** 2) / abs(mb)


def ratio_paired(a, b) -> tuple[float, float]:
    """mean(a) / mean(b) with the SE of the paired (same runs) ratio: sd(a - R b) / mean(b)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    r = a.mean() / b.mean()
    u = (a - r * b) / b.mean()
    return float(r), float(u.std(ddof=1) / math.sqrt(u.size)) if u.size > 1 else float("nan")


def break_even(adv: np.ndarray, ratio: np.ndarray) -> float | None:
    """The clean tracking advantage where RW-Meta / best A&S crosses 1 (linear interpolation
    between sweep points sorted by advantage), or None if it does not cross in the range."""
    order = np.argsort(adv)
    a, q = adv[order], ratio[order] - 1.0
    for k in range(len(a) - 1):
        if q[k] == 0:
            return float(a[k])
        if q[k] * q[k + 1] < 0:
            return float(a[k] + (a[k + 1] - a[k]) * (-q[k]) / (q[k + 1] - q[k]))
    return float(a[-1]) if q[-1] == 0 else None


__all__ = ["break_even", "ratio_independent", "ratio_paired"]
