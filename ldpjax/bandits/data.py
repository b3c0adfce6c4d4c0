"""Loaders for the paper's applications (csv module + NumPy; no pandas), and labelled stand-ins.

* ASOS Digital Experiments Dataset (Liu et al. 2021; ``../shared/data/asos/``, CC BY 4.0): one
  row per checkpoint of one treatment-vs-control comparison. :func:`load_asos` keeps metric 1
  (the CTR-type metric) and, for every experiment, the final checkpoint of each treatment
  variant: K_e = 1 + number of treatment variants, T_e = control count + the treatment counts
  (control counted once: every variant row of a checkpoint repeats it), and the per-arm CTRs
  (control mean_c first, then each variant's mean_t in variant order). Rows it cannot use (a
  non-finite or negative count, a non-finite mean, a mean outside [0, 1] for metric 1, NaN
  variances) are skipped and reported in ``skipped``; a missing column or a non-numeric cell is
  a ``ValueError`` naming the file, line and column.
* Open Bandit Dataset sample (Saito et al. 2021; ``../shared/data/obd/random/all/all.csv``,
  10,000 impressions, 80 items, 38 clicks): :func:`load_obd` returns per-item shows and clicks
  and an empirical-Bayes smoothed CTR: a Beta(a, b) prior with the pooled CTR as its mean and
  the concentration a + b that maximises the beta-binomial marginal likelihood of the
  per-item counts (a 1-d search on a log grid of concentrations, then a golden-section
  polish); the smoothed CTR is the posterior mean (a + clicks) / (a + b + shows). The sample is
  far too small for raw per-item CTRs (29 of 80 items have no click at all), so the output says
  so (``note``).
* Stand-ins when the files are absent (clearly labelled ``synthetic``):
  :func:`synthetic_asos` (78 experiments with the published shape: 61/14/2/1 experiments with
  2/3/4/5 arms, T log-uniform on [69,123, 149,197,471], control CTRs uniform on
  [0.0265, 0.7724], treatment lifts N(0, 1%) relative) and :func:`synthetic_obd` (80 items with
  CTRs log-uniform on [0.0012, 0.0078], the full-data range the paper reports).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import NamedTuple

import jax
import numpy as np

from ldpjax.types import PRNGKey

ASOS_FILE = Path("asos") / "asos_digital_experiments_dataset.csv"
OBD_FILE = Path("obd") / "random" / "all" / "all.csv"
_ASOS_COLUMNS = ("experiment_id", "variant_id", "metric_id", "time_since_start", "count_c",
                 "count_t", "mean_c", "mean_t", "variance_c", "variance_t")


class AsosExperiments(NamedTuple):
    """Per-experiment arms, visitors and CTRs (CTR rows padded with NaN to the largest K)."""

    experiment_ids: list[str]
    num_arms: np.ndarray  # (E,) int
    visitors: np.ndarray  # (E,) float: T_e
    ctr: np.ndarray  # (E, K_max): control first, NaN padding
    skipped: dict[str, int]  # reason -> number of rows skipped
    source: str


class ObdItems(NamedTuple):
    item_ids: np.ndarray  # (I,)
    shows: np.ndarray
    clicks: np.ndarray
    raw_ctr: np.ndarray
    smoothed_ctr: np.ndarray
    prior: tuple[float, float]  # Beta(a, b)
    note: str
    source: str


def _float(text: str, path: Path, line: int, column: str) -> float:
    try:
        return float(text) if text.strip() != "" else math.nan
    except ValueError:
        raise ValueError(
            f"{path}: line {line}, column {column!r}: expected a number, got {text!r}"
        ) from None


def load_asos(path: str | Path, metric_id: int = 1) -> AsosExperiments:
    """Read the ASOS CSV (a file, or a data folder containing ``asos/...csv``)."""
    path = Path(path)
    if path.is_dir():
        path = path / ASOS_FILE if (path / ASOS_FILE).is_file() else path / ASOS_FILE.name
    if not path.is_file():
        raise ValueError(f"ASOS file {str(path)!r} does not exist")
    skipped: dict[str, int] = {}
    final: dict[tuple[str, int], tuple[float, float, float, float, float]] = {}
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in _ASOS_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}; found {reader.fieldnames}")
        for line, row in enumerate(reader, start=2):
            if None in row or any(row.get(c) is None for c in _ASOS_COLUMNS):
                raise ValueError(f"{path}: line {line} has the wrong number of fields")
            metric = _float(row["metric_id"], path, line, "metric_id")
            if metric != metric_id:
                continue
            values = {c: _float(row[c], path, line, c) for c in _ASOS_COLUMNS[2:]}
            reason = None
            if not all(math.isfinite(values[c]) for c in ("time_since_start", "count_c",
                                                           "count_t", "mean_c", "mean_t")):
                reason = "non-finite count, mean or time"
            elif values["count_c"] <= 0 or values["count_t"] <= 0:
                reason = "non-positive count"
            elif not (0 <= values["mean_c"] <= 1 and 0 <= values["mean_t"] <= 1):
                reason = "mean outside [0, 1]"
            elif not (math.isfinite(values["variance_c"]) and math.isfinite(values["variance_t"])):
                reason = "NaN variance"
            if reason is not None:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            key = (row["experiment_id"].strip(), int(_float(row["variant_id"], path, line,
                                                             "variant_id")))
            record = (values["time_since_start"], values["count_c"], values["count_t"],
                      values["mean_c"], values["mean_t"])
            if key not in final or record[0] >= final[key][0]:
                final[key] = record
    if not final:
        raise ValueError(f"{path}: no usable rows for metric_id={metric_id}")
    ids = sorted({k[0] for k in final})
    arms, visitors, rows = [], [], []
    for exp in ids:
        variants = sorted(k[1] for k in final if k[0] == exp)
        recs = [final[(exp, var)] for var in variants]
        # control from the latest checkpoint among the variants
        latest = max(recs, key=lambda r: r[0])
        arms.append(1 + len(variants))
        visitors.append(latest[1] + sum(r[2] for r in recs))
        rows.append([latest[3]] + [r[4] for r in recs])
    k_max = max(arms)
    ctr = np.full((len(ids), k_max), np.nan)
    for i, r in enumerate(rows):
        ctr[i, : len(r)] = r
    return AsosExperiments(ids, np.asarray(arms), np.asarray(visitors, float), ctr, skipped,
                           f"ASOS Digital Experiments Dataset ({path})")


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


def _beta_binomial_loglik(a: float, b: float, shows: np.ndarray, clicks: np.ndarray) -> float:
    lbeta = np.vectorize(lambda x, y: math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y))
    return float(np.sum(lbeta(a + clicks, b + shows - clicks) - lbeta(a, b)))


def fit_beta_prior(shows: np.ndarray, clicks: np.ndarray) -> tuple[float, float]:
    """Empirical-Bayes Beta prior: pooled mean, concentration by marginal likelihood."""
    shows = np.asarray(shows, float)
    clicks = np.asarray(clicks, float)
    mean = max(clicks.sum(), 0.5) / shows.sum()

    def loglik(log_kappa):
        kappa = math.exp(log_kappa)
        return _beta_binomial_loglik(mean * kappa, (1 - mean) * kappa, shows, clicks)

    grid = np.linspace(0.0, math.log(1e7), 141)
    values = [loglik(x) for x in grid]
    i = int(np.argmax(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(60):  # golden-section polish of the concave-ish profile
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if loglik(x1) >= loglik(x2):
            hi = x2
        else:
            lo = x1
    kappa = math.exp(0.5 * (lo + hi))
    return mean * kappa, (1 - mean) * kappa


def load_obd(path: str | Path) -> ObdItems:
    """Read the OBD sample (a CSV, or a data folder containing ``obd/random/all/all.csv``)."""
    path = Path(path)
    if path.is_dir():
        path = path / OBD_FILE if (path / OBD_FILE).is_file() else path / OBD_FILE.name
    if not path.is_file():
        raise ValueError(f"OBD file {str(path)!r} does not exist")
    shows: dict[int, int] = {}
    clicks: dict[int, int] = {}
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        for column in ("item_id", "click"):
            if column not in (reader.fieldnames or []):
                raise ValueError(f"{path}: missing column {column!r}")
        for line, row in enumerate(reader, start=2):
            item = _float(row["item_id"], path, line, "item_id")
            click = _float(row["click"], path, line, "click")
            if not (math.isfinite(item) and item == int(item) and click in (0.0, 1.0)):
                raise ValueError(f"{path}: line {line}: item_id must be an integer and click 0/1; "
                                 f"got {row['item_id']!r}, {row['click']!r}")
            shows[int(item)] = shows.get(int(item), 0) + 1
            clicks[int(item)] = clicks.get(int(item), 0) + int(click)
    if not shows:
        raise ValueError(f"{path}: no rows")
    items = np.array(sorted(shows))
    n = np.array([shows[i] for i in items], float)
    c = np.array([clicks[i] for i in items], float)
    a, b = fit_beta_prior(n, c)
    smoothed = (a + c) / (a + b + n)
    note = (
        f"OBD sample: {int(n.sum())} impressions, {int(c.sum())} clicks, "
        f"{int(np.sum(c == 0))} of {len(items)} items without a click: far too few clicks for "
        f"raw per-item CTRs. CTRs are empirical-Bayes posterior means under a Beta("
        f"{a:.2f}, {b:.1f}) prior fitted to the sample (pooled mean {a / (a + b):.4f}); they "
        f"are shrunk towards the pooled mean and are NOT the full-data CTRs (0.0012..0.0078)."
    )
    return ObdItems(items, n, c, c / n, smoothed, (a, b), note, f"Open Bandit Dataset sample ({path})")


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
    "AsosExperiments",
    "ObdItems",
    "fit_beta_prior",
    "load_asos",
    "load_obd",
    "synthetic_asos",
    "synthetic_obd",
    "top_items",
]
