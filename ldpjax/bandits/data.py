"""The bandit applications' data: loaders (re-exported from :mod:`ldpjax.datasets.bandits`,
their home) and labelled stand-ins.

* :func:`load_asos` (the ASOS Digital Experiments Dataset) and :func:`load_obd` (the Open
  Bandit Dataset sample), with :func:`fit_beta_prior`: see :mod:`ldpjax.datasets.bandits`.
* Stand-ins when the files are absent (clearly labelled ``synthetic``):
  :func:`synthetic_asos` (78 experiments with the published shape: 61/14/2/1 experiments with
  2/3/4/5 arms, T log-uniform on [69,123, 149,197,471], control CTRs uniform on
  [0.0265, 0.7724], treatment lifts N(0, 1%) relative) and :func:`synthetic_obd` (80 items with
  CTRs log-uniform on [0.0012, 0.0078], the full-data range the paper reports).
"""

from __future__ import annotations

import math

import jax
import numpy as np

from ldpjax.datasets.bandits import (
    AsosExperiments,
    ObdItems,
)
from ldpjax.types import PRNGKey


def synthetic_asos(key: PRNGKey, num_experiments: int = 78) -> AsosExperiments:
    """A labelled stand-in with the published shape of the ASOS data (see module doc).

    Example:
      >>> import jax
      >>> data = synthetic_asos(jax.random.key(0), num_experiments=5)
      >>> data.num_arms.shape, bool(((data.num_arms >= 2) & (data.num_arms <= 5)).all())
      ((5,), True)
    """
    # One uniform draw per quantity (a single PRNG call), transformed in NumPy.
    # data sampling (a synthetic stand-in data set), not privacy noise
    u = np.asarray(jax.random.uniform(key, (num_experiments, 8)), np.float64)
    cdf = np.cumsum([61, 14, 2, 1]) / 78.0
    arms = 2 + np.minimum(np.searchsorted(cdf, u[:, 0], side="right"), 3)
    log_t = math.log(69_123) + u[:, 1] * (math.log(149_197_471) - math.log(69_123))
    visitors = np.round(np.exp(log_t))
    control = 0.0265 + u[:, 2] * (0.7724 - 0.0265)
    # relative lifts N(0, 1%) by Box-Muller from pairs of uniforms
    radius = np.sqrt(-2.0 * np.log(np.clip(u[:, 3:7], 1e-12, 1.0)))
    lifts = 0.01 * radius * np.cos(2 * np.pi * u[:, 4:8])
    ctr = np.full((num_experiments, 5), np.nan)
    for i in range(num_experiments):
        ctr[i, 0] = control[i]
        ctr[i, 1 : arms[i]] = np.clip(control[i] * (1 + lifts[i, : arms[i] - 1]), 0.0, 1.0)
    ids = [f"synthetic-{i:02d}" for i in range(num_experiments)]
    return AsosExperiments(ids, arms, visitors, ctr[:, : arms.max()], {},
                           "SYNTHETIC stand-in for ASOS (data file absent)")


def synthetic_obd(key: PRNGKey, num_items: int = 80) -> ObdItems:
    """A labelled stand-in: item CTRs log-uniform on [0.0012, 0.0078] (no shows or clicks).

    Example:
      >>> import jax
      >>> items = synthetic_obd(jax.random.key(0), num_items=4)
      >>> bool(((items.smoothed_ctr >= 0.0012) & (items.smoothed_ctr <= 0.0078)).all())
      True
    """
    # data sampling (a synthetic stand-in data set), not privacy noise
    u = np.asarray(jax.random.uniform(key, (num_items,)), np.float64)
    ctr = np.exp(math.log(0.0012) + u * (math.log(0.0078) - math.log(0.0012)))
    zeros = np.zeros(num_items)
    note = ("SYNTHETIC stand-in for the OBD sample (file absent): item CTRs log-uniform on "
            "[0.0012, 0.0078], the range of the full ZOZOTOWN data reported in the paper.")
    return ObdItems(np.arange(num_items), zeros, zeros, np.full(num_items, np.nan), ctr,
                    (math.nan, math.nan), note, "SYNTHETIC stand-in for OBD")


def top_items(items: ObdItems, k: int) -> np.ndarray:
    """CTRs of the k items with the largest smoothed CTR (descending)."""
    if not 2 <= k <= len(items.smoothed_ctr):
        raise ValueError(f"k must be in [2, {len(items.smoothed_ctr)}]; got {k}")
    return np.sort(items.smoothed_ctr)[::-1][:k]


__all__ = [
    "synthetic_asos",
    "synthetic_obd",
    "top_items",
]
