"""Loaders for the bandit applications' data (csv module + NumPy; no pandas).

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
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

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
    """Per-item shows, clicks and CTRs of the OBD sample (raw and empirical-Bayes smoothed)."""

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


def _resolve(path: str | Path, default: Path, what: str) -> Path:
    """``path``, or inside a data folder ``default`` (or its file name); must exist."""
    path = Path(path)
    if path.is_dir():
        path = path / default if (path / default).is_file() else path / default.name
    if not path.is_file():
        raise ValueError(f"{what} file {str(path)!r} does not exist")
    return path


# --------------------------------------------------------------------------- ASOS
def _asos_skip_reason(values: dict[str, float]) -> str | None:
    if not all(math.isfinite(values[c]) for c in ("time_since_start", "count_c", "count_t",
                                                  "mean_c", "mean_t")):
        return "non-finite count, mean or time"
    if values["count_c"] <= 0 or values["count_t"] <= 0:
        return "non-positive count"
    if not (0 <= values["mean_c"] <= 1 and 0 <= values["mean_t"] <= 1):
        return "mean outside [0, 1]"
    if not (math.isfinite(values["variance_c"]) and math.isfinite(values["variance_t"])):
        return "NaN variance"
    return None


def _asos_final_checkpoints(path: Path, metric_id: int):
    """{(experiment, variant): (time, count_c, count_t, mean_c, mean_t)} at the latest
    checkpoint, and the skipped rows by reason."""
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
            if _float(row["metric_id"], path, line, "metric_id") != metric_id:
                continue
            values = {c: _float(row[c], path, line, c) for c in _ASOS_COLUMNS[2:]}
            reason = _asos_skip_reason(values)
            if reason is not None:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            key = (row["experiment_id"].strip(),
                   int(_float(row["variant_id"], path, line, "variant_id")))
            record = (values["time_since_start"], values["count_c"], values["count_t"],
                      values["mean_c"], values["mean_t"])
            if key not in final or record[0] >= final[key][0]:
                final[key] = record
    return final, skipped


def load_asos(path: str | Path, metric_id: int = 1) -> AsosExperiments:
    """Read the ASOS CSV (a file, or a data folder containing ``asos/...csv``).

    Example:
      >>> import tempfile, pathlib
      >>> folder = pathlib.Path(tempfile.mkdtemp())
      >>> _ = (folder / "a.csv").write_text(
      ...     "experiment_id,variant_id,metric_id,time_since_start,count_c,count_t,mean_c,"
      ...     "mean_t,variance_c,variance_t\\ne1,1,1,3,100,90,0.2,0.25,0.1,0.1\\n")
      >>> data = load_asos(folder / "a.csv")
      >>> data.num_arms.tolist(), data.visitors.tolist(), data.ctr.tolist()
      ([2], [190.0], [[0.2, 0.25]])
    """
    path = _resolve(path, ASOS_FILE, "ASOS")
    final, skipped = _asos_final_checkpoints(path, metric_id)
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
    ctr = np.full((len(ids), max(arms)), np.nan)
    for i, r in enumerate(rows):
        ctr[i, : len(r)] = r
    return AsosExperiments(ids, np.asarray(arms), np.asarray(visitors, float), ctr, skipped,
                           f"ASOS Digital Experiments Dataset ({path})")


# --------------------------------------------------------------------------- OBD
def _beta_binomial_loglik(a: float, b: float, shows: np.ndarray, clicks: np.ndarray) -> float:
    lbeta = np.vectorize(lambda x, y: math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y))
    return float(np.sum(lbeta(a + clicks, b + shows - clicks) - lbeta(a, b)))


def fit_beta_prior(shows: np.ndarray, clicks: np.ndarray) -> tuple[float, float]:
    """Empirical-Bayes Beta prior: pooled mean, concentration by marginal likelihood.

    Example:
      >>> a, b = fit_beta_prior([100, 100, 100], [10, 10, 10])
      >>> round(float(a / (a + b)), 3)  # the pooled mean
      0.1
    """
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


def _obd_counts(path: Path) -> tuple[dict[int, int], dict[int, int]]:
    """Shows and clicks per item id."""
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
    return shows, clicks


def load_obd(path: str | Path) -> ObdItems:
    """Read the OBD sample (a CSV, or a data folder containing ``obd/random/all/all.csv``).

    Example:
      >>> import tempfile, pathlib
      >>> file = pathlib.Path(tempfile.mkdtemp()) / "all.csv"
      >>> _ = file.write_text("item_id,click\\n0,1\\n0,0\\n1,0\\n")
      >>> items = load_obd(file)
      >>> items.shows.tolist(), items.clicks.tolist()
      ([2.0, 1.0], [1.0, 0.0])
    """
    path = _resolve(path, OBD_FILE, "OBD")
    shows, clicks = _obd_counts(path)
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


__all__ = [
    "ASOS_FILE",
    "OBD_FILE",
    "AsosExperiments",
    "ObdItems",
    "fit_beta_prior",
    "load_asos",
    "load_obd",
]
