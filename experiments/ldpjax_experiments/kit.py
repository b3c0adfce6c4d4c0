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

from ldpjax_experiments import verdicts as V
from ldpjax_experiments.plotting import LINESTYLES, MARKERS, PALETTE

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


# --------------------------------------------------------------------------- privacy
def vacuous_epsilon(delta: float) -> float:
    """log((1 - delta) / delta): the epsilon from which an (eps, delta) claim is vacuous.

    An (eps, delta)-DP release caps the power of every test of a record against a neighbour
    at e^eps alpha + delta for a test of level alpha (the tradeoff function of (eps, delta)-DP:
    Kairouz, Oh & Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015;
    Dong, Roth & Su, "Gaussian Differential Privacy", JRSS-B 2022). At alpha = delta, the
    failure probability the claim already concedes, the cap reaches 1 exactly when
    eps >= log((1 - delta) / delta): the claim then allows a test that accuses a neighbour no
    more often than delta and recognises the record with certainty, so it excludes nothing
    beyond what delta concedes. Such a claim is *vacuous*.

    Example:
      >>> round(vacuous_epsilon(1e-6), 2)
      13.82
    """
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1); got {delta!r}")
    return math.log1p(-delta) - math.log(delta)


def judge_privacy(
    experiment: str,
    label: str,
    claim: float,
    delta: float,
    per_report: float,
    *,
    how: str,
) -> V.Verdict:
    """Whether a run keeps the paper's per-report privacy, and whether its claim is vacuous.

    ``claim`` is the run's per-record epsilon at ``delta`` (from the accountant on its event),
    ``per_report`` the paper's per-report epsilon. ``reproduced`` when the run's claim is at
    most the per-report one (each record reported once), ``partly`` when it is larger but
    below :func:`vacuous_epsilon` (``delta``), ``not`` when it is vacuous (the reason says so).
    ``how`` says how the claim was computed (the tolerance note).

    Example:
      >>> judge_privacy("x", "reuse", 497.0, 1e-6, 2.92, how="accountant").status
      'not'
    """
    threshold = vacuous_epsilon(delta)
    kept = claim <= per_report * (1.0 + 1e-6)
    vacuous = not claim < threshold
    if vacuous:
        reason = (f"VACUOUS: the claim is eps = {claim:.4g} at delta = {delta:g}, at or above "
                  f"log((1 - delta)/delta) = {threshold:.3g}: it allows a test that accuses a "
                  "neighbour with probability delta to recognise a record with certainty")
    else:
        reason = (f"the uses compose to eps = {claim:.4g} at delta = {delta:g}, above the "
                  f"per-report {per_report:.3g} (not vacuous: below {threshold:.3g})")
    return V.judge_condition(
        experiment,
        f"{label}: each record keeps the paper's per-report privacy (eps <= {per_report:.3g}); "
        f"the run's claim is not vacuous (eps < log((1 - delta)/delta) = {threshold:.3g} at "
        f"delta = {delta:g})",
        kept and not vacuous,
        partly=not vacuous,
        ours=claim,
        paper=per_report,
        tolerance_note=how,
        reason=reason,
        reference="per-report eps",
        measure=f"per-record epsilon of the run's claim at delta = {delta:g}",
        kind="self-check",
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
    "judge_privacy",
    "judge_share",
    "mean_se",
    "pooled_mean",
    "series_style",
    "subkey",
    "table",
    "vacuous_epsilon",
]
