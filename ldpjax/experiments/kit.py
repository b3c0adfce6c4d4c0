"""Small pieces that experiment reports share: the papers' short titles, per-series styles,
standard errors, key streams, share-of-cells verdicts and records-to-table rows.

An experiment is a ``study`` (labelled arrays) and a report (tables, verdicts, figures) that is
a pure function of the study; this module holds what every report would otherwise write again.
Keep it small: a piece belongs here once two experiments need it.
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

import jax
import numpy as np

from ldpjax.experiments import verdicts as V
from ldpjax.plotting import LINESTYLES, MARKERS, PALETTE

#: The papers' short titles, for figure titles and experiment descriptions (a reader does not
#: know the papers by their numbers).
PAPER_TITLES = {
    "000": "Prediction with expert advice under LDP",
    "001": "Federated quantile inference under LDP",
    "002": "Privacy budgeting for online experiments",
}
#: A difference is significant when it exceeds this many standard errors of the difference.
SE_RULE = 2.0


# --------------------------------------------------------------------------- figures
def series_style(k: int, *, line: bool = True) -> dict[str, Any]:
    """Colour, marker (and line style) of the ``k``-th series of a figure: one palette for
    every experiment, so that series ``k`` looks the same in every panel."""
    style = {"color": PALETTE[k % len(PALETTE)], "marker": MARKERS[k % len(MARKERS)]}
    if line:
        style["ls"] = LINESTYLES[k % len(LINESTYLES)]
    return style


# --------------------------------------------------------------------------- statistics
def mean_se(x, *, single: float = math.nan) -> tuple[float, float]:
    """Mean and standard error (sd with ddof 1 / sqrt(size)) of the runs ``x``; the SE of a
    single run is ``single`` (NaN by default: it cannot be estimated)."""
    x = np.asarray(x, np.float64)
    se = float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else float(single)
    return float(x.mean()), se


def pooled_mean(values: Sequence[float], ses: Sequence[float]) -> tuple[float, float]:
    """Mean of independent estimates and its SE (their SEs in quadrature over their count)."""
    k = len(values)
    return float(np.mean(values)), math.sqrt(sum(float(s) ** 2 for s in ses)) / k


def subkey(key: jax.Array, label: str) -> jax.Array:
    """The key of one named part of a study (``RunContext.key_for``'s stream: a study called
    with the run's key draws the same numbers as the run)."""
    return jax.random.fold_in(key, zlib.crc32(label.encode()) & 0x7FFFFFFF)


# --------------------------------------------------------------------------- verdicts
def judge_share(
    experiment: str,
    claim: str,
    hits: int,
    total: int,
    *,
    tolerance_note: str,
    reason: str,
) -> V.Verdict:
    """A claim that should hold in every cell: ``reproduced`` in all ``total`` cells,
    ``partly`` in some, ``not`` in none; ``ours`` is the share of cells where it holds."""
    return V.judge_condition(
        experiment,
        claim,
        hits == total,
        partly=hits > 0,
        ours=hits / total,
        paper=1.0,
        tolerance_note=tolerance_note,
        reason=reason,
    )


# --------------------------------------------------------------------------- tables
def table(records: Iterable[Any]) -> list[dict[str, Any]]:
    """Table rows (dicts, columns in field order) of frozen dataclasses or NamedTuples."""
    rows = []
    for r in records:
        if dataclasses.is_dataclass(r):
            rows.append({f.name: getattr(r, f.name) for f in dataclasses.fields(r)})
        elif hasattr(r, "_asdict"):
            rows.append(dict(r._asdict()))
        else:
            rows.append(dict(r))
    return rows


def columns(record: Any, names: Sequence[str]) -> dict[str, Any]:
    """A row of the named fields of one record (a narrower table over the same records)."""
    return {n: getattr(record, n) for n in names}


__all__ = [
    "PAPER_TITLES",
    "SE_RULE",
    "columns",
    "judge_share",
    "mean_se",
    "pooled_mean",
    "series_style",
    "subkey",
    "table",
]
