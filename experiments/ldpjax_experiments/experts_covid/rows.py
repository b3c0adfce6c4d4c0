"""Table rows of the COVID study: one typed :class:`SummaryRow` per (reading, state, mu), and
the narrower tables (gains per algorithm, learners, A&S settings, dynamics sweep), each a pure
function of a :class:`~ldpjax_experiments.experts_covid.study.StateStudy`."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import numpy as np

from ldpjax.experts.meta_bounds import regret_bound_meta
from ldpjax.experts.rw_meta import lambda_max_ratio
from ldpjax_experiments.experts_covid.readings import Reading, sensitivity, sensitivity_text
from ldpjax_experiments.experts_covid.stats import ratio_independent, ratio_paired
from ldpjax_experiments.experts_covid.study import StateStudy
from ldpjax_experiments.kit import SE_RULE, columns, mean_se

#: The paper's Table (mean total gain): (meta, min noise, min regret, best).
PAPER = {
    ("NM", 1.0): (36.87, 22.83, 13.41, 40.69),
    ("NM", 0.25): (22.46, 15.58, 13.38, 25.85),
    ("PA", 1.0): (40.32, 23.55, 15.38, 44.30),
    ("CA", 1.0): (55.62, 25.09, 16.91, 61.16),
    ("CA", 0.25): (33.34, 17.93, 16.84, 38.43),
}
SE_WIN = SE_RULE  # a cell is won / lost when the difference exceeds 2 SE of the difference
#: The delta of the whole-run claim (``run_epsilon``), as in ``experts-amplification``.
RUN_DELTA = 1e-5
#: The columns of the dynamics-sweep table (after ``wave_heterogeneity``).
SWEEP_COLUMNS = (
    "reading", "state", "mu", "n", "T", "clean_tracking_advantage", "ratio_meta_best_as",
    "ratio_meta_best_as_se", "ratio_meta_best_learner", "ratio_meta_best_learner_se", "rw_meta",
    "rw_meta_se", "as_min_noise", "as_min_noise_se", "as_min_regret", "as_min_regret_se",
    "best_learner_clean", "best_fixed_hospital", "data",
)
#: (row field, algorithm name) of the long gains table.
ALGORITHMS = (
    ("rw_meta", "RW-Meta"),
    ("as_min_noise", "A&S Min Noise"),
    ("as_min_regret", "A&S Min Regret"),
    ("rw_ftpl", "RW-FTPL"),
    ("best_learner_in_run", "best learner in run"),
)


def inf_text(eta_inf: float) -> str:
    """What mu = inf means for each algorithm."""
    learners = (
        "RW-Meta's learners and scores see the clean gains"
        if eta_inf == 0
        else f"RW-Meta's learners and scores see gains + N(0, {eta_inf:.3g}^2) noise"
    )
    return (
        f"{learners}, RW-Meta still draws its selection perturbation y_t; RW-FTPL keeps its walk "
        "eta = sqrt 2; A&S is noise-free Hedge"
    )


class Cell(NamedTuple):
    """Per-run arrays of one (reading, mu) cell (axis ``seed``; ``learners``: (seed, learner))."""

    meta: np.ndarray
    learners: np.ndarray
    best_in_run: np.ndarray
    ftpl: np.ndarray | None
    mn: np.ndarray
    mr: np.ndarray
    i: int  # local point
    c: int  # central point


def cell(r: StateStudy, reading: Reading, mu: float) -> Cell:
    i, c = r.local(reading, mu), r.central(reading, mu)
    learners = r.meta_learners[i]
    return Cell(
        meta=r.meta_gain[i],
        learners=learners,
        best_in_run=learners.max(-1),
        ftpl=None if r.ftpl_gain is None else r.ftpl_gain[i],
        mn=r.tree_gain[0, c],
        mr=r.tree_gain[1, c],
        i=i,
        c=c,
    )


@dataclasses.dataclass(frozen=True)
class SummaryRow:
    """One row of ``covid_summary``: means, SEs, ratios and the paper's values of a cell.

    ``None`` is an empty cell (not run, or no paper value)."""

    reading: str
    protects: str
    state: str
    mu: float
    n: int
    T: int
    eta: float
    min_noise_node_sd: float
    rw_meta: float
    rw_meta_se: float
    paper_rw_meta: float | None
    as_min_noise: float
    as_min_noise_se: float
    paper_as_min_noise: float | None
    as_min_regret: float
    as_min_regret_se: float
    paper_as_min_regret: float | None
    best_learner_in_run: float
    best_learner_in_run_se: float
    paper_best_linear_model: float | None
    best_fixed_hospital: float
    best_fixed_hospital_se: float
    uniform: float
    uniform_se: float
    ratio_meta_best_as: float
    ratio_meta_best_as_se: float
    paper_ratio_meta_best_as: float | None
    ratio_meta_best_learner: float
    ratio_meta_best_learner_se: float
    paper_ratio_meta_best_learner: float | None
    meta_minus_best_as: float
    meta_minus_best_as_se: float
    meta_beats_both_as: bool
    as_beats_meta: bool
    rw_ftpl: float | None
    rw_ftpl_se: float | None
    rw_ftpl_learner_in_run: float
    rw_ftpl_learner_in_run_se: float
    best_learner_clean: float
    best_learner_clean_label: str
    clean_tracking_advantage: float
    meta_static_regret: float
    meta_static_regret_se: float
    meta_regret_vs_best_learner: float
    meta_regret_vs_best_learner_se: float
    theorem3_bound: float
    lambda_ratio: float
    best_learner_in_run_mode: str
    best_learner_in_run_share: float
    ldp_sensitivity: str
    central_sensitivity: str
    run_mu: float
    run_epsilon: float
    data: str

    def without_paper(self) -> SummaryRow:
        """The row with every ``paper_*`` cell empty (a panel the paper's totals do not fit)."""
        names = [f.name for f in dataclasses.fields(self) if f.name.startswith("paper_")]
        return dataclasses.replace(self, **dict.fromkeys(names))


def _paper_columns(state: str, mu: float) -> dict[str, float | None]:
    paper = PAPER.get((state, float(mu)))
    return {
        "paper_rw_meta": paper[0] if paper else None,
        "paper_as_min_noise": paper[1] if paper else None,
        "paper_as_min_regret": paper[2] if paper else None,
        "paper_best_linear_model": paper[3] if paper else None,
        "paper_ratio_meta_best_as": paper[0] / max(paper[1], paper[2]) if paper else None,
        "paper_ratio_meta_best_learner": paper[0] / paper[3] if paper else None,
    }


def _theorem3(r: StateStudy, reading: Reading, mu: float, i: int, eta: float):
    """Theorem 3's bound; at mu = inf it is the non-private one (eta = 0: the data-dependent
    term lambda_max(Sigma*_T / (eta^2 T)) is 0 by definition, see lambda_max_ratio)."""
    ldp = sensitivity(reading.ldp, r.n)
    ratio = np.maximum(np.asarray(lambda_max_ratio(r.meta_covariance[i], eta, r.T)), 0.0)
    bound = float(np.mean(regret_bound_meta(mu, r.T, r.m, r.n, ratio, sensitivity=ldp)))
    return bound, float(np.mean(ratio))


def _comparisons(r: StateStudy, x: Cell) -> dict[str, Any]:
    """RW-Meta against A&S, the best learner in the run and the best static hospital."""
    stats = {k: mean_se(getattr(x, k)) for k in ("meta", "mn", "mr", "best_in_run")}
    best_as = "mn" if stats["mn"][0] >= stats["mr"][0] else "mr"
    ratio_as = ratio_independent(x.meta, getattr(x, best_as))
    ratio_learner = ratio_paired(x.meta, x.best_in_run)
    diff = stats["meta"][0] - stats[best_as][0]
    diff_se = math.hypot(stats["meta"][1], stats[best_as][1])
    static = mean_se(r.best_static - x.meta)
    regret_learner = mean_se(x.best_in_run - x.meta)
    return {
        "rw_meta": stats["meta"][0],
        "rw_meta_se": stats["meta"][1],
        "as_min_noise": stats["mn"][0],
        "as_min_noise_se": stats["mn"][1],
        "as_min_regret": stats["mr"][0],
        "as_min_regret_se": stats["mr"][1],
        "best_learner_in_run": stats["best_in_run"][0],
        "best_learner_in_run_se": stats["best_in_run"][1],
        "ratio_meta_best_as": ratio_as[0],
        "ratio_meta_best_as_se": ratio_as[1],
        "ratio_meta_best_learner": ratio_learner[0],
        "ratio_meta_best_learner_se": ratio_learner[1],
        "meta_minus_best_as": diff,
        "meta_minus_best_as_se": diff_se,
        "meta_beats_both_as": bool(diff > SE_WIN * diff_se),
        "as_beats_meta": bool(diff < -SE_WIN * diff_se),
        "meta_static_regret": static[0],
        "meta_static_regret_se": static[1],
        "meta_regret_vs_best_learner": regret_learner[0],
        "meta_regret_vs_best_learner_se": regret_learner[1],
    }


def whole_run_claim(mu: float, weeks: int) -> tuple[float, float]:
    """The local claim for one unit over all ``weeks`` weekly releases: RW-Meta's per-release
    ``GaussianEvent(mu)`` composed ``weeks`` times (a unit is in every week's release), as
    (mu_T, eps): mu_T = mu sqrt(T) (Gaussian DP composes exactly: Dong, Roth & Su, "Gaussian
    Differential Privacy", JRSS-B 2022) and its epsilon at :data:`RUN_DELTA`, both from
    ``ldpjax.accounting`` on the event (``composed_mu``, ``epsilon``: the tightest of the
    closed forms and the privacy loss distribution). ``(inf, inf)`` at mu = inf.

    Example:
      >>> mu_t, eps = whole_run_claim(1.0, 4)
      >>> round(mu_t, 4), bool(eps > 0)
      (2.0, True)
    """
    if not math.isfinite(mu):
        return math.inf, math.inf
    from ldpjax.accounting import GaussianEvent, SelfComposedEvent, composed_mu, epsilon

    event = SelfComposedEvent(GaussianEvent(float(mu)), int(weeks))
    return float(composed_mu(event)), float(epsilon(event, RUN_DELTA))


def summary_row(state: str, r: StateStudy, reading: Reading, mu: float, eta_inf: float):
    """The :class:`SummaryRow` of one (reading, state, mu) cell."""
    x = cell(r, reading, mu)
    finite = math.isfinite(mu)
    eta = sensitivity(reading.ldp, r.n) / mu if finite else eta_inf
    bound, lam = _theorem3(r, reading, mu, x.i, eta)
    protects = reading.protects() if finite else "nothing (mu = inf): " + inf_text(eta_inf)
    # RW-FTPL over the hospitals is optional (--ftpl): not run -> empty cells (None), not NaN.
    ftpl = mean_se(x.ftpl) if x.ftpl is not None else (None, None)
    # RW-FTPL's decision rule as a learner on RW-Meta's shared release (no initial draw z_0).
    ftpl_learner = mean_se(x.learners[:, list(r.labels).index("rw-ftpl")])
    counts = np.bincount(np.argmax(x.learners, -1), minlength=r.m)
    return SummaryRow(
        reading=reading.title, protects=protects, state=state, mu=mu, n=r.n, T=r.T, eta=eta,
        min_noise_node_sd=float(r.node_sd[0, x.c]),
        best_fixed_hospital=r.best_static, best_fixed_hospital_se=0.0,
        uniform=r.uniform, uniform_se=0.0,
        rw_ftpl=ftpl[0], rw_ftpl_se=ftpl[1],
        rw_ftpl_learner_in_run=ftpl_learner[0], rw_ftpl_learner_in_run_se=ftpl_learner[1],
        best_learner_clean=float(r.clean_totals[r.best_clean]),
        best_learner_clean_label=r.labels[r.best_clean],
        clean_tracking_advantage=r.advantage,
        theorem3_bound=bound, lambda_ratio=lam,
        best_learner_in_run_mode=r.labels[int(np.argmax(counts))],
        best_learner_in_run_share=float(counts.max() / counts.sum()),
        ldp_sensitivity=sensitivity_text(reading.ldp, r.n),
        central_sensitivity=sensitivity_text(reading.central, r.n),
        **dict(zip(("run_mu", "run_epsilon"), whole_run_claim(mu, r.T), strict=True)),
        data=r.data.source,
        **_comparisons(r, x), **_paper_columns(state, mu),
    )


def summary_rows(results, readings, mus, eta_inf) -> list[SummaryRow]:
    """Every state x reading x mu of ``results`` (state -> StateStudy), in that order."""
    return [
        summary_row(state, r, reading, mu, eta_inf)
        for state, r in results.items()
        for reading in readings
        for mu in mus
    ]


# --------------------------------------------------------------------------- narrower tables
def gains_table(rows) -> list[dict[str, Any]]:
    """``covid_gains``: one row per (cell, algorithm) that ran (RW-FTPL not run: no row)."""
    out = []
    for row in rows:
        for key, name in ALGORITHMS:
            if getattr(row, key) is None:
                continue
            out.append({
                "reading": row.reading, "state": row.state, "mu": row.mu, "algorithm": name,
                "mean_total_gain": getattr(row, key), "se": getattr(row, key + "_se"),
                "data": row.data,
            })
    return out


def learners_table(results, readings, mus) -> list[dict[str, Any]]:
    """``covid_learners``: each learner's mean gain in the run, share best, clean gain."""
    out = []
    for state, r in results.items():
        for reading in readings:
            for mu in mus:
                x = cell(r, reading, mu)
                mean_learner = x.learners.mean(0)
                counts = np.bincount(np.argmax(x.learners, -1), minlength=r.m)
                out += [
                    {
                        "reading": reading.title, "state": state, "mu": mu, "learner": lab,
                        "mean_gain_in_run": float(mean_learner[j]),
                        "share_best_in_run": float(counts[j] / counts.sum()),
                        "gain_clean": float(r.clean_totals[j]), "data": r.data.source,
                    }
                    for j, lab in enumerate(r.labels)
                ]
    return out


def settings_table(results, readings, mus) -> list[dict[str, Any]]:
    """``agarwal_singh_settings``: A&S's node sd and learning rate per cell and setting."""
    out = []
    for state, r in results.items():
        for reading in readings:
            for mu in mus:
                c = r.central(reading, mu)
                out.append({
                    "reading": reading.title, "state": state, "mu": mu,
                    "central_sensitivity": sensitivity_text(reading.central, r.n),
                    "min_noise_node_sd": float(r.node_sd[0, c]),
                    "min_noise_learning_rate": float(r.rate[0, c]),
                    "min_regret_epsilon": float(r.min_regret_epsilon[c]),
                    "min_regret_delta": float(r.min_regret_delta[c]),
                    "min_regret_node_sd": float(r.node_sd[1, c]),
                    "min_regret_learning_rate": float(r.rate[1, c]),
                    "tree_levels": r.levels, "data": r.data.source,
                })
    return out


@dataclasses.dataclass(frozen=True)
class SweepRow:
    """One point of the dynamics sweep: a :class:`SummaryRow` at one wave heterogeneity."""

    wave_heterogeneity: float
    row: SummaryRow

    def as_row(self) -> dict[str, Any]:
        return {"wave_heterogeneity": self.wave_heterogeneity, **columns(self.row, SWEEP_COLUMNS)}


def sweep_rows(sweep, state: str, readings, mus, eta_inf) -> list[SweepRow]:
    """The finite-mu rows of every sweep point ((heterogeneity, StateStudy) pairs)."""
    return [
        SweepRow(h, summary_row(state, r, reading, mu, eta_inf))
        for h, r in sweep
        for reading in readings
        for mu in mus
        if math.isfinite(mu)
    ]


__all__ = [
    "PAPER",
    "RUN_DELTA",
    "SE_WIN",
    "SWEEP_COLUMNS",
    "Cell",
    "SummaryRow",
    "SweepRow",
    "cell",
    "gains_table",
    "inf_text",
    "learners_table",
    "settings_table",
    "summary_row",
    "summary_rows",
    "sweep_rows",
    "whole_run_claim",
]
