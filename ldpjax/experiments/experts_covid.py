"""``experts-covid``: paper 000's COVID hospital table, under each privacy unit, with verdicts.

Task (paper 000, Sec. 6; spec ``experts.md``): each week pick the hospital of a state that will
report the highest COVID inpatient density; the gain is the chosen hospital's true density.

**Privacy unit** (the neighbouring relation; issue 11). A weekly release is a vector of n
hospital densities in [0, 1]. Two relations make sense and give very different noise:

* ``hospital``: neighbours differ in one hospital's weekly report (l2 sensitivity 1). Each
  hospital is a data holder -- the local model's natural unit. RW-Meta adds N(0, (1/mu)^2) per
  hospital; A&S's tree nodes get sd sqrt(L)/mu (Min Noise).
* ``vector``: neighbours differ in a state's whole weekly vector (sensitivity sqrt(n), the
  spec's reading). RW-Meta adds N(0, (sqrt(n)/mu)^2); A&S nodes sd sqrt(n L)/mu.

The run reports three *readings* side by side: hospital/hospital (the default headline,
``--privacy-unit`` picks the headline), vector/vector, and the mixed reading hospital for
RW-Meta / vector for A&S, labelled "resembles the paper's table; not a like-for-like
comparison" (it protects less on the local side than on the central side). Every table row
says what it protects. ``--ldp-sensitivity`` / ``--central-sensitivity`` (a number, or
``sqrt-n``) replace the readings by one custom pair.

**Algorithms** (each one ``simulate`` over seeds x (unit, mu) per state; one compilation per
state and algorithm): RW-Meta (mu-GLDP) over the paper's 13 learners (rolling ridge w in
{8,16,32,64} x {weak, medium, strong} + RW-FTPL as a learner); RW-FTPL over the hospitals
(data-independent experts); A&S Min Noise / Min Regret (central mu-GDP, binary tree + Hedge).
One compiled RW-Meta / RW-FTPL serves both units: the release noise is eta = Delta / mu, so we
pass the algorithm (default sensitivity sqrt(n)) the equivalent mu' = mu sqrt(n) / Delta,
which gives exactly eta = Delta / mu (``eta`` is listed in every row).

**mu = inf** is non-private for the learners: once RW-Meta's release at mu = inf is the clean
gain vector (detected at run time from the experts release scale), the learners and
RW-Meta's scores see the clean gains while RW-Meta still draws its selection perturbation y_t
(c_t = 2t); RW-FTPL keeps eta = sqrt 2 (its walk is its perturbation); A&S is noise-free
Hedge. Every mu = inf row says which applies.

**Reference points**: the best learner in the run (the max over the 13 learners of their
gains inside the same private run: the same noise, like the paper's "best linear model"), the
best learner on the clean gains, the best static hospital in hindsight and uniform play.

**Dynamics sweep** (beyond the paper): how much the waves reorder hospitals
(``--wave-heterogeneity``, the sd of the per-hospital, per-wave log amplitudes of the stand-in)
is reported as the *clean tracking advantage* = best clean learner / best static hospital, and
RW-Meta / best A&S is plotted against the swept heterogeneity (the advantage it yields under
each tick: two settings can give the same advantage) with the break-even line, per reading and
mu.

**Verdicts** (:mod:`ldpjax.experiments.verdicts`), per reading: "RW-Meta beats both A&S
settings", its size "1.5-3x" (RW-Meta / best A&S in the paper's cells), "about 90% of the best
learner" and "negative static regret at low and medium privacy (mu = 1, 0.5)"; tolerances from
the standard errors (see :func:`_verdicts`).

**Data**: ``--data PATH`` runs the table on a real HHS facility file (the full 148-week series:
healthdata.gov ``anag-cw7u``). Otherwise the table uses the documented synthetic stand-in
(:func:`ldpjax.experts.covid.synthetic_covid`) and, when the shared data folder
(``--data-dir``, default ``<repo>/../shared/data``) holds an HHS facility extract, a labelled
real-data panel is added on it (5 weeks in this project: it shows the real density scale and
what each privacy unit's noise does to it, not tracking over waves or the 148-week totals).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.engine import product_grid, record
from ldpjax.experiments import verdicts as V
from ldpjax.experiments.base import Experiment, ExperimentResult, Option, RunContext, floats, strs
from ldpjax.experts import agarwal_singh as AS
from ldpjax.experts import covid
from ldpjax.experts.gains import validate_gains
from ldpjax.experts.learners import evaluate_learners, paper_learners
from ldpjax.experts.meta_bounds import regret_bound_meta
from ldpjax.experts.rw_ftpl import FTPLConfig, ftpl_params, rw_ftpl
from ldpjax.experts.rw_meta import (
    MetaConfig,
    lambda_max_ratio,
    meta_params,
    release_scale,
    rw_meta_algorithm,
)
from ldpjax.plotting import (
    LINESTYLES,
    MARKERS,
    PALETTE,
    caption,
    figure,
    figure_legend,
    fit_ylim,
    mean_band,
    mean_bars,
    paper_markers,
    se_note,
)

NAME = "experts-covid"
#: The paper's Table (mean total gain, spec ``experts.md``): (meta, min noise, min regret, best).
PAPER = {
    ("NM", 1.0): (36.87, 22.83, 13.41, 40.69),
    ("NM", 0.25): (22.46, 15.58, 13.38, 25.85),
    ("PA", 1.0): (40.32, 23.55, 15.38, 44.30),
    ("CA", 1.0): (55.62, 25.09, 16.91, 61.16),
    ("CA", 0.25): (33.34, 17.93, 16.84, 38.43),
}
PAPER_ROUNDING = 0.005  # the paper reports two decimals
LOW_MID_PRIVACY = (1.0, 0.5)  # "negative static regret at low and medium privacy"
PAPER_TITLE = "Prediction with expert advice under LDP"  # the paper's short title, for figures
SE_WIN = 2.0  # a cell is won / lost when the difference exceeds 2 SE of the difference

UNIT_PROTECTS = {
    "hospital": "one hospital's weekly report (l2 sensitivity 1)",
    "vector": "a state's whole weekly vector (l2 sensitivity sqrt(n))",
}
MIXED_NOTE = "resembles the paper's table; not a like-for-like comparison"
UNITS_CAPTION = (
    "per column (local relation / central relation): hospital = one hospital's weekly report "
    "(l2 sensitivity 1); vector = a state's whole weekly vector (sensitivity sqrt(n)); mixed = "
    f"hospital for RW-Meta, vector for A&S ({MIXED_NOTE})"
)


@dataclasses.dataclass(frozen=True)
class Reading:
    """One pair of neighbouring relations: the local one (RW-Meta, RW-FTPL) and the central one
    (A&S). ``ldp`` / ``central`` are ``hospital``, ``vector`` or a number (l2 sensitivity)."""

    name: str
    ldp: str
    central: str
    note: str = ""

    @property
    def title(self) -> str:
        if self.name == "mixed":
            return "mixed: hospital (LDP) / vector (CDP)"
        if self.name == "custom":
            return f"custom: LDP sensitivity {self.ldp} / central {self.central}"
        return f"{self.name}/{self.name}"

    def protects(self) -> str:
        local = UNIT_PROTECTS.get(self.ldp, f"l2 sensitivity {self.ldp}")
        central = UNIT_PROTECTS.get(self.central, f"l2 sensitivity {self.central}")
        text = (
            f"RW-Meta/RW-FTPL (local mu-GDP per weekly release): {local}; A&S (central mu-GDP "
            f"of the whole tree release): {central}"
        )
        return text + (f" [{self.note}]" if self.note else "")


READINGS = {
    "hospital": Reading("hospital", "hospital", "hospital", "one relation for both models"),
    "vector": Reading("vector", "vector", "vector", "one relation for both models"),
    "mixed": Reading("mixed", "hospital", "vector", MIXED_NOTE),
}


def _unit_text(text: str) -> str:
    """Normalise a sensitivity option: 'hospital', 'vector' or a positive number as text."""
    text = str(text).strip().lower()
    if text in ("hospital", "1", "1.0"):
        return "hospital"
    if text in ("vector", "sqrt-n", "sqrtn", "sqrt(n)"):
        return "vector"
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(
            f"sensitivity must be 'hospital' (1), 'vector' / 'sqrt-n' (sqrt(n)) or a positive "
            f"number; got {text!r}"
        )
    return f"{value:g}"


def _sensitivity(unit: str, n: int) -> float:
    if unit == "hospital":
        return 1.0
    if unit == "vector":
        return math.sqrt(n)
    return float(unit)


def _readings(config: dict[str, Any]) -> list[Reading]:
    ldp, central = (
        str(config["ldp_sensitivity"]).strip(),
        str(config["central_sensitivity"]).strip(),
    )
    if ldp or central:  # one custom pair; an unset side keeps the spec's sqrt(n)
        return [Reading("custom", _unit_text(ldp or "vector"), _unit_text(central or "vector"))]
    unit = str(config["privacy_unit"]).strip().lower()
    if unit not in ("hospital", "vector"):
        raise ValueError(f"privacy_unit must be 'hospital' or 'vector'; got {unit!r}")
    names = [str(r).strip().lower() for r in config["readings"]]
    for r in names:
        if r not in READINGS:
            raise ValueError(f"readings must be among {sorted(READINGS)}; got {r!r}")
    names = [unit] + [r for r in dict.fromkeys(names) if r != unit]  # headline first
    return [READINGS[r] for r in names]


# --------------------------------------------------------------------------- statistics
def _mean_se(x) -> tuple[float, float]:
    x = np.asarray(x, np.float64)
    se = float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else float("nan")
    return float(x.mean()), se


def _ratio_independent(a, b) -> tuple[float, float]:
    """mean(a) / mean(b) and its delta-method SE for independent samples a, b."""
    (ma, sa), (mb, sb) = _mean_se(a), _mean_se(b)
    r = ma / mb
    return r, math.sqrt(sa**2 + (r * sb) ** 2) / abs(mb)


def _ratio_paired(a, b) -> tuple[float, float]:
    """mean(a) / mean(b) with the SE of the paired (same runs) ratio: sd(a - R b) / mean(b)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    r = a.mean() / b.mean()
    u = (a - r * b) / b.mean()
    return float(r), float(u.std(ddof=1) / math.sqrt(u.size)) if u.size > 1 else float("nan")


# --------------------------------------------------------------------------- algorithms
# Module-level recorders: the engine caches compiled kernels per (algorithm, recorder), so the
# sweep and repeated runs reuse the compilation.
META_RECORD = record.combine(
    gain=record.total(lambda o: o.gain),
    learners=record.total(lambda o: o.learner_gains),
    learner_curve=record.every_step(lambda o: o.learner_gains),
    curve=record.every_step(lambda o: o.gain),
    covariance=record.last(lambda o: o.covariance),
)
GAIN_RECORD = record.combine(
    gain=record.total(lambda o: o.gain), curve=record.every_step(lambda o: o.gain)
)


def meta_eta_at_inf(learners) -> float:
    """RW-Meta's release noise sd at mu = inf (0: the learners and scores see clean gains)."""
    return float(release_scale(MetaConfig(2, learners.learners), jnp.inf))


def _inf_text(eta_inf: float) -> str:
    learners = (
        "RW-Meta's learners and scores see the clean gains"
        if eta_inf == 0
        else f"RW-Meta's learners and scores see gains + N(0, {eta_inf:.3g}^2) noise"
    )
    return (
        f"{learners}, RW-Meta still draws its selection perturbation y_t; RW-FTPL keeps its walk "
        "eta = sqrt 2; A&S is noise-free Hedge"
    )


@functools.lru_cache(maxsize=32)
def _min_regret(mus: tuple[float, ...], n: int, T: int):
    """A&S Min Regret at the default sensitivity sqrt(n), as NumPy arrays (one solve per
    (mu grid, n, T): the dynamics sweep reuses it)."""
    setting = AS.min_regret_setting(np.asarray(mus, np.float64), n, T)
    return setting._replace(**{k: np.asarray(v) for k, v in setting._asdict().items()})


def _grid(points, n):
    """mu and l2 sensitivity per grid point; mu = inf is one point shared by every unit."""
    mu = np.asarray([m for _, m in points], np.float64)
    sens = np.asarray([_sensitivity(u, n) if u != "*" else 1.0 for u, _ in points], np.float64)
    return mu, sens


def _study(ctx: RunContext, data, label: str, mus, readings, *, ftpl: bool = True):
    """Run every algorithm on one gain matrix for every (unit, mu) the readings need.

    One compiled algorithm per state: mu and the l2 sensitivity are params leaves, so the
    (unit, mu) points are one grid axis.
    """
    gains = validate_gains(jnp.asarray(data.density, jnp.float32))
    T, n = gains.shape
    learners = paper_learners()
    mus = tuple(float(m) for m in mus)
    finite = [m for m in mus if math.isfinite(m)]
    inf = [("*", math.inf)] if len(finite) < len(mus) else []
    points = inf + [(u, m) for u in dict.fromkeys(r.ldp for r in readings) for m in finite]
    cpoints = inf + [(u, m) for u in dict.fromkeys(r.central for r in readings) for m in finite]
    mu, sens = _grid(points, n)

    grid = product_grid(meta_params(1.0, learners, 1.0), mu=list(mu))
    meta = ctx.simulate(
        rw_meta_algorithm(learners, n),
        grid._replace(sensitivity=jnp.asarray(sens, grid.mu.dtype)),
        inputs=gains,
        grid_ndim=1,
        record=META_RECORD,
        keep_state=False,
        label=f"{label}-rw-meta",
    ).record
    ftpl_rec = None
    if ftpl:
        grid = product_grid(ftpl_params(1.0, 1.0), mu=list(mu))
        ftpl_rec = ctx.simulate(
            rw_ftpl(FTPLConfig(n)),
            grid._replace(sensitivity=jnp.asarray(sens, grid.mu.dtype)),
            inputs=gains,
            grid_ndim=1,
            record=GAIN_RECORD,
            keep_state=False,
            label=f"{label}-rw-ftpl",
        ).record

    # A&S: grid (setting: Min Noise, Min Regret) x (central unit, mu).
    cmu, csens = _grid(cpoints, n)
    sd = np.zeros((2, len(cpoints)))
    rate = np.zeros((2, len(cpoints)))
    settings = {}
    mr = _min_regret(tuple(float(m) for m in cmu), n, T)
    for i, (m, s) in enumerate(zip(cmu, csens, strict=True)):
        # Min Noise: sigma = Delta sqrt(L) / mu with Hedge's standard rate. Min Regret: the
        # optimal (eps, delta) does not depend on Delta (A&S module docstring), so sigma scales
        # by Delta / sqrt(n) and the rate is re-optimised for that sigma.
        sd[0, i] = float(AS.min_noise_node_sd(m, n, T, float(s)))
        rate[0, i] = AS.standard_learning_rate(n, T)
        sd[1, i] = float(mr.node_sd[i]) * s / math.sqrt(n)
        rate[1, i] = float(AS.optimal_learning_rate(sd[1, i], n, T))
        settings[i] = {
            "min_regret_epsilon": float(mr.epsilon[i]),
            "min_regret_delta": float(mr.delta[i]),
        }
    tree = ctx.simulate(
        AS.tree_hedge(AS.TreeHedgeConfig(n, T)),
        AS.tree_hedge_params(sd, rate, np.broadcast_to(csens, sd.shape)),
        inputs=gains,
        grid_ndim=2,
        record=GAIN_RECORD,
        keep_state=False,
        label=f"{label}-agarwal-singh",
    ).record

    g64 = np.asarray(data.density, np.float64)
    totals = g64.sum(0)
    if inf and meta_eta_at_inf(learners) == 0.0:
        # At mu = inf RW-Meta's learners see the clean gains, so their gains (identical in
        # every run: the learners are deterministic) are the clean learners' gains (tested
        # against evaluate_learners).
        clean = np.asarray(meta["learner_curve"][0, 0], np.float64)  # (T, m)
    else:
        clean = np.asarray(evaluate_learners(learners, gains), np.float64)  # (T, m), no noise
    clean_totals = clean.sum(0)
    best_clean = int(np.argmax(clean_totals))
    return {
        "data": data,
        "T": T,
        "n": n,
        "m": learners.size,
        "labels": learners.labels,
        "meta": meta,
        "ftpl": ftpl_rec,
        "tree": tree,
        "local_index": {p: i for i, p in enumerate(points)},
        "central_index": {p: i for i, p in enumerate(cpoints)},
        "node_sd": sd,
        "rate": rate,
        "as_settings": settings,
        "levels": AS.tree_levels(T),
        "clean_totals": clean_totals,
        "best_clean": best_clean,
        "clean_curve": np.cumsum(clean[:, best_clean]),
        "best_static": float(totals.max()),
        "best_static_curve": np.cumsum(g64[:, int(np.argmax(totals))]),
        "uniform": float(g64.mean(1).sum()),
        "uniform_curve": np.cumsum(g64.mean(1)),
        "advantage": float(clean_totals.max() / totals.max()),
    }


def _local(r, reading: Reading, mu: float) -> int:
    return r["local_index"][("*", mu) if not math.isfinite(mu) else (reading.ldp, mu)]


def _central(r, reading: Reading, mu: float) -> int:
    return r["central_index"][("*", mu) if not math.isfinite(mu) else (reading.central, mu)]


# --------------------------------------------------------------------------- tables
def _cell(r, reading: Reading, mu: float) -> dict[str, Any]:
    """Per-seed arrays of one (reading, mu) cell."""
    i, c = _local(r, reading, mu), _central(r, reading, mu)
    learners = r["meta"]["learners"][i]  # (seeds, m)
    return {
        "meta": r["meta"]["gain"][i],
        "learners": learners,
        "best_in_run": learners.max(-1),
        "ftpl": None if r["ftpl"] is None else r["ftpl"]["gain"][i],
        "mn": r["tree"]["gain"][0, c],
        "mr": r["tree"]["gain"][1, c],
        "i": i,
        "c": c,
    }


def _row(state: str, r, reading: Reading, mu: float, eta_inf: float) -> dict[str, Any]:
    cell = _cell(r, reading, mu)
    T, n, m = r["T"], r["n"], r["m"]
    stats = {k: _mean_se(cell[k]) for k in ("meta", "mn", "mr", "best_in_run")}
    best_as = "mn" if stats["mn"][0] >= stats["mr"][0] else "mr"
    ratio_as = _ratio_independent(cell["meta"], cell[best_as])
    ratio_learner = _ratio_paired(cell["meta"], cell["best_in_run"])
    diff = stats["meta"][0] - stats[best_as][0]
    diff_se = math.hypot(stats["meta"][1], stats[best_as][1])
    static = _mean_se(r["best_static"] - cell["meta"])
    regret_learner = _mean_se(cell["best_in_run"] - cell["meta"])
    counts = np.bincount(np.argmax(cell["learners"], -1), minlength=m)
    paper = PAPER.get((state, float(mu)))
    finite = math.isfinite(mu)
    eta = _sensitivity(reading.ldp, n) / mu if finite else eta_inf
    # Theorem 3's bound; at mu = inf it is the non-private one (eta = 0: the data-dependent term
    # lambda_max(Sigma*_T / (eta^2 T)) is 0 by definition, see lambda_max_ratio).
    cov = r["meta"]["covariance"][cell["i"]]
    ratio = np.maximum(np.asarray(lambda_max_ratio(cov, eta, T)), 0.0)
    bound = float(
        np.mean(regret_bound_meta(mu, T, m, n, ratio, sensitivity=_sensitivity(reading.ldp, n)))
    )
    if finite:
        protects = reading.protects()
    else:
        protects = "nothing (mu = inf): " + _inf_text(eta_inf)
    # RW-FTPL over the hospitals is optional (--ftpl): not run -> empty cells (None), not NaN.
    ftpl = _mean_se(cell["ftpl"]) if cell["ftpl"] is not None else (None, None)
    # RW-FTPL's decision rule as a learner on RW-Meta's shared release (no initial draw z_0).
    ftpl_learner = _mean_se(cell["learners"][:, list(r["labels"]).index("rw-ftpl")])
    row = {
        "reading": reading.title,
        "protects": protects,
        "state": state,
        "mu": mu,
        "n": n,
        "T": T,
        "eta": eta,
        "min_noise_node_sd": float(r["node_sd"][0, cell["c"]]),
        "rw_meta": stats["meta"][0],
        "rw_meta_se": stats["meta"][1],
        "paper_rw_meta": paper[0] if paper else None,
        "as_min_noise": stats["mn"][0],
        "as_min_noise_se": stats["mn"][1],
        "paper_as_min_noise": paper[1] if paper else None,
        "as_min_regret": stats["mr"][0],
        "as_min_regret_se": stats["mr"][1],
        "paper_as_min_regret": paper[2] if paper else None,
        "best_learner_in_run": stats["best_in_run"][0],
        "best_learner_in_run_se": stats["best_in_run"][1],
        "paper_best_linear_model": paper[3] if paper else None,
        "best_fixed_hospital": r["best_static"],
        "best_fixed_hospital_se": 0.0,
        "uniform": r["uniform"],
        "uniform_se": 0.0,
        "ratio_meta_best_as": ratio_as[0],
        "ratio_meta_best_as_se": ratio_as[1],
        "paper_ratio_meta_best_as": paper[0] / max(paper[1], paper[2]) if paper else None,
        "ratio_meta_best_learner": ratio_learner[0],
        "ratio_meta_best_learner_se": ratio_learner[1],
        "paper_ratio_meta_best_learner": paper[0] / paper[3] if paper else None,
        "meta_minus_best_as": diff,
        "meta_minus_best_as_se": diff_se,
        "meta_beats_both_as": bool(diff > SE_WIN * diff_se),
        "as_beats_meta": bool(diff < -SE_WIN * diff_se),
        "rw_ftpl": ftpl[0],
        "rw_ftpl_se": ftpl[1],
        "rw_ftpl_learner_in_run": ftpl_learner[0],
        "rw_ftpl_learner_in_run_se": ftpl_learner[1],
        "best_learner_clean": float(r["clean_totals"][r["best_clean"]]),
        "best_learner_clean_label": r["labels"][r["best_clean"]],
        "clean_tracking_advantage": r["advantage"],
        "meta_static_regret": static[0],
        "meta_static_regret_se": static[1],
        "meta_regret_vs_best_learner": regret_learner[0],
        "meta_regret_vs_best_learner_se": regret_learner[1],
        "theorem3_bound": bound,
        "lambda_ratio": float(np.mean(ratio)),
        "best_learner_in_run_mode": r["labels"][int(np.argmax(counts))],
        "best_learner_in_run_share": float(counts.max() / counts.sum()),
        "ldp_sensitivity": _sens_text(reading.ldp, n),
        "central_sensitivity": _sens_text(reading.central, n),
        "data": r["data"].source,
    }
    return row


def _sens_text(unit: str, n: int) -> str:
    if unit == "vector":
        return f"sqrt(n) = {math.sqrt(n):.3g}"
    return "1" if unit == "hospital" else unit


# --------------------------------------------------------------------------- verdicts
def _verdicts(rows: list[dict], readings: list[Reading], runs: int) -> list[V.Verdict]:
    """Four claims per reading, computed from the table rows.

    Tolerances: a cell is "won"/"negative" when the difference exceeds 2 SE of that difference
    (SE over ``runs`` runs; RW-Meta and A&S use independent keys, so the SEs add in
    quadrature). For the numeric claims the tolerance is 2 SE of our mean over the paper's cells
    (the cells' ratios are independent across states and mu levels use separate grid points;
    we add their SEs in quadrature and divide by the number of cells) plus the paper's
    two-decimal rounding propagated to the ratio; for "about 90%" also half the spread of the
    paper's own per-cell ratios (what "about" covers).
    """
    out = []
    for reading in readings:
        mine = [r for r in rows if r["reading"] == reading.title and math.isfinite(r["mu"])]
        if not mine:
            continue
        tag = f"[{reading.title}]"
        # 1. RW-Meta beats both A&S settings in every (state, finite mu) cell.
        won = sum(r["meta_beats_both_as"] for r in mine)
        lost = sum(r["as_beats_meta"] for r in mine)
        out.append(
            V.judge_condition(
                NAME,
                f"{tag} RW-Meta beats both A&S settings (every state, finite mu)",
                won == len(mine),
                partly=won > 0,
                ours=won / len(mine),
                paper=1.0,
                tolerance_note=f"share of cells where RW-Meta - best A&S > {SE_WIN:g} SE of the "
                f"difference ({runs} runs each)",
                reason=f"RW-Meta ahead in {won} of {len(mine)} cells, A&S ahead in {lost}, "
                f"{len(mine) - won - lost} within {SE_WIN:g} SE",
            )
        )
        paper_cells = [r for r in mine if r["paper_rw_meta"] is not None]
        if paper_cells:
            k = len(paper_cells)
            where = ", ".join(f"{r['state']} mu={r['mu']:g}" for r in paper_cells)
            # 2. size of the win: RW-Meta / best A&S (paper: 1.4-2.2x in its cells).
            ours = np.mean([r["ratio_meta_best_as"] for r in paper_cells])
            se = math.sqrt(sum(r["ratio_meta_best_as_se"] ** 2 for r in paper_cells)) / k
            paper = np.mean([r["paper_ratio_meta_best_as"] for r in paper_cells])
            rounding = np.mean(
                [
                    PAPER_ROUNDING
                    * (1 + r["paper_ratio_meta_best_as"])
                    / max(r["paper_as_min_noise"], r["paper_as_min_regret"])
                    for r in paper_cells
                ]
            )
            tol = SE_WIN * se + rounding
            out.append(
                V.judge(
                    NAME,
                    f"{tag} RW-Meta / best A&S, mean over the paper's cells ({where})",
                    ours,
                    paper,
                    tol,
                    tolerance_note=f"{SE_WIN:g} SE of our mean ({se:.3g}) + paper rounding "
                    f"({rounding:.2g})",
                    reason=_why(reading, ours, paper),
                )
            )
            # 3. about 90% of the best learner.
            ours = np.mean([r["ratio_meta_best_learner"] for r in paper_cells])
            se = math.sqrt(sum(r["ratio_meta_best_learner_se"] ** 2 for r in paper_cells)) / k
            ratios = [r["paper_ratio_meta_best_learner"] for r in paper_cells]
            paper = float(np.mean(ratios))
            spread = (max(ratios) - min(ratios)) / 2
            rounding = np.mean(
                [
                    PAPER_ROUNDING
                    * (1 + r["paper_ratio_meta_best_learner"])
                    / r["paper_best_linear_model"]
                    for r in paper_cells
                ]
            )
            tol = SE_WIN * se + spread + rounding
            out.append(
                V.judge(
                    NAME,
                    f"{tag} RW-Meta reaches about 90% of the best learner ({where})",
                    ours,
                    paper,
                    tol,
                    tolerance_note=f"{SE_WIN:g} SE ({se:.3g}) + half the paper's spread "
                    f"({spread:.3g}) + rounding ({rounding:.2g})",
                    reason=_why(reading, ours, paper),
                )
            )
        # 4. negative static regret at low and medium privacy.
        lowmid = [r for r in mine if r["mu"] in LOW_MID_PRIVACY]
        if lowmid:
            neg = sum(
                r["meta_static_regret"] + SE_WIN * r["meta_static_regret_se"] < 0 for r in lowmid
            )
            mean_regret = float(np.mean([r["meta_static_regret"] for r in lowmid]))
            out.append(
                V.judge_condition(
                    NAME,
                    f"{tag} RW-Meta has negative static regret at mu = 1 and 0.5",
                    neg == len(lowmid),
                    partly=neg > 0,
                    ours=neg / len(lowmid),
                    paper=1.0,
                    tolerance_note=f"share of cells with static regret + {SE_WIN:g} SE < 0",
                    reason=f"negative in {neg} of {len(lowmid)} cells; mean static regret "
                    f"{mean_regret:.1f} (best static hospital - RW-Meta)",
                )
            )
    return out


def _why(reading: Reading, ours: float, paper: float) -> str:
    direction = "below" if ours < paper else "above"
    return f"ours is {direction} the paper's under the {reading.title} reading"


# --------------------------------------------------------------------------- sweep
def _break_even(adv: np.ndarray, ratio: np.ndarray) -> float | None:
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


def _sweep_lines(sweep_rows, readings, mus) -> list[str]:
    lines = []
    if not sweep_rows:
        return lines
    adv = sorted({r["clean_tracking_advantage"] for r in sweep_rows})
    state = sweep_rows[0]["state"]
    lines.append(
        f"Dynamics sweep (stand-in {state}, wave heterogeneity "
        f"{min(r['wave_heterogeneity'] for r in sweep_rows):g}.."
        f"{max(r['wave_heterogeneity'] for r in sweep_rows):g}; clean tracking advantage = best "
        f"clean learner / best static hospital from {adv[0]:.2f} to {adv[-1]:.2f}):"
    )
    for reading in readings:
        for mu in mus:
            if not math.isfinite(mu):
                continue
            sel = [r for r in sweep_rows if r["reading"] == reading.title and r["mu"] == mu]
            if not sel:
                continue
            a = np.asarray([r["clean_tracking_advantage"] for r in sel])
            q = np.asarray([r["ratio_meta_best_as"] for r in sel])
            be = _break_even(a, q)
            where = (
                f"first crosses 1 at advantage {be:.2f}"
                if be is not None
                else (
                    "above 1 over the whole range"
                    if q.min() > 1
                    else "below 1 over the whole range"
                )
            )
            lines.append(
                f"  {reading.title}, mu = {mu:g}: RW-Meta / best A&S {q[np.argmin(a)]:.2f} at "
                f"advantage {a.min():.2f} -> {q[np.argmax(a)]:.2f} at {a.max():.2f}; {where}."
            )
    return lines


# --------------------------------------------------------------------------- figures
def _mu_positions(mus) -> tuple[np.ndarray, list[str]]:
    return np.arange(len(mus), dtype=float), [
        "inf" if not math.isfinite(m) else f"{m:g}" for m in mus
    ]


def _readings_figure(rows, readings, states, mus, data_kind: str, title: str, paper: bool = True):
    """States (rows) x readings (columns): mean total gain per mu of each algorithm (+-2 SE
    bars), the paper's values as unfilled stars at the same x as the series they belong to.
    Series sit 0.2 apart within a mu so that neither bars nor stars print on each other; the
    panels of one state share their y range so that readings compare at a glance."""
    fig, axes = figure(len(readings), len(states), width=4.3, height=3.1)
    x, ticks = _mu_positions(mus)
    series = (
        ("rw_meta", "RW-Meta (LDP)", 0),
        ("as_min_noise", "A&S Min Noise (CDP)", 1),
        ("as_min_regret", "A&S Min Regret (CDP)", 2),
        ("best_learner_in_run", "best learner in run", 3),
    )
    paper_keys = (
        "paper_rw_meta",
        "paper_as_min_noise",
        "paper_as_min_regret",
        "paper_best_linear_model",
    )
    paper_names = ("RW-Meta", "A&S Min Noise", "A&S Min Regret", "best linear model")
    spacing = 0.2
    for si, state in enumerate(states):
        row_values = []
        for ri, reading in enumerate(readings):
            ax = axes[si, ri]
            cells = {
                r["mu"]: r for r in rows if r["state"] == state and r["reading"] == reading.title
            }
            for (key, name, k), pkey, pname in zip(series, paper_keys, paper_names, strict=True):
                xs = x + spacing * (k - 1.5)
                mean = np.asarray([cells[m][key] for m in mus])
                se = np.asarray([cells[m][key + "_se"] for m in mus])
                mean_bars(
                    ax, xs, mean, se, label=name, color=PALETTE[k], marker=MARKERS[k], ls="none"
                )
                row_values += [mean - 2 * se, mean + 2 * se]
                cited = [j for j, m in enumerate(mus) if cells[m][pkey] is not None]
                if cited:
                    py = [cells[mus[j]][pkey] for j in cited]
                    paper_markers(
                        ax, xs[cited], py, label=f"paper: {pname}", color=PALETTE[k], markersize=7.5
                    )
                    row_values.append(py)
            any_row = cells[mus[0]]
            ax.axhline(
                any_row["best_fixed_hospital"],
                color="0.3",
                ls="--",
                lw=1,
                label="best static hospital",
            )
            ax.axhline(any_row["uniform"], color="0.6", ls=":", lw=1, label="uniform play")
            row_values += [[any_row["best_fixed_hospital"], any_row["uniform"], 0.0]]
            ax.set_xticks(x, ticks)
            ax.set_xlim(x[0] - 0.5, x[-1] + 0.5)
            ax.set_xlabel("mu (privacy level; inf = none)")
            ax.set_ylabel("mean total gain")
            ax.set_title(f"{state} (n={any_row['n']}): {reading.title}")
        for ax in axes[si]:
            fit_ylim(ax, row_values)
    figure_legend(fig, axes, ncols=4)
    caption(
        fig,
        data=data_kind,
        unit=UNITS_CAPTION,
        title=title,
        note=se_note("bars")
        + (
            " Unfilled stars: the paper's values (one table; which relation it used is not stated)."
            if paper
            else ""
        ),
    )
    return fig


def _dynamics_figure(sweep_rows, readings, mus, table_h: float, state: str, data_kind: str):
    """RW-Meta / best A&S against the swept wave heterogeneity, per reading and mu.

    The x axis is the swept setting itself (distinct by construction); the clean tracking
    advantage it yields is printed under each tick (two settings can give the same advantage,
    so the advantage cannot be the axis). Error bars, dodged per mu, instead of bands: the
    bands of the three mu levels overlap."""
    finite = [m for m in mus if math.isfinite(m)]
    hs = sorted({r["wave_heterogeneity"] for r in sweep_rows})
    adv = {r["wave_heterogeneity"]: r["clean_tracking_advantage"] for r in sweep_rows}
    span = (hs[-1] - hs[0]) or 1.0
    dodge = 0.018 * span
    fig, axes = figure(len(readings), 1, width=3.9, height=3.6)
    for ri, reading in enumerate(readings):
        ax = axes[0, ri]
        values = [[1.0]]
        for k, mu in enumerate(finite):
            sel = sorted(
                (r for r in sweep_rows if r["reading"] == reading.title and r["mu"] == mu),
                key=lambda r: r["wave_heterogeneity"],
            )
            h = np.asarray([r["wave_heterogeneity"] for r in sel])
            q = np.asarray([r["ratio_meta_best_as"] for r in sel])
            se = np.asarray([r["ratio_meta_best_as_se"] for r in sel])
            _, lo, hi = mean_bars(
                ax,
                h + dodge * (k - (len(finite) - 1) / 2),
                q,
                se,
                label=f"mu = {mu:g}",
                color=PALETTE[k],
                marker=MARKERS[k],
                ls=LINESTYLES[k % len(LINESTYLES)],
                lw=1,
            )
            values += [lo, hi]
        ax.axhline(1.0, color="black", lw=1.2, label="break-even (RW-Meta = best A&S)")
        if hs[0] <= table_h <= hs[-1]:
            ax.axvline(table_h, color="0.5", ls=":", lw=1, label="default stand-in")
        fit_ylim(ax, values)
        ax.set_xlim(hs[0] - 0.08 * span, hs[-1] + 0.08 * span)
        ax.set_xticks(hs, [f"{h:g}\n[{adv[h]:.2f}]" for h in hs])
        ax.set_xlabel("wave heterogeneity of the stand-in\n[clean tracking advantage]")
        ax.set_ylabel("RW-Meta / best A&S\n(ratio of mean total gains)")
        ax.set_title(reading.title)
    figure_legend(fig, axes, ncols=3)
    caption(
        fig,
        data=data_kind,
        unit=UNITS_CAPTION,
        title=f"When does LDP (RW-Meta) beat CDP (A&S)? Stand-in {state}, sweep over how much "
        f"waves reorder hospitals (beyond {PAPER_TITLE})",
        note="x: the sd of the log per-hospital, per-wave amplitudes of the stand-in; in "
        "brackets the clean tracking advantage it gives (best clean learner / best static "
        "hospital). " + se_note("error bars") + " Above the black line RW-Meta wins.",
    )
    return fig


def _curves_figure(results, reading: Reading, mus, data_kind: str):
    states = list(results)
    fig, axes = figure(len(mus), len(states), width=3.3, height=2.6)
    for si, state in enumerate(states):
        r = results[state]
        weeks = np.arange(1, r["T"] + 1)
        for mi, mu in enumerate(mus):
            ax = axes[si, mi]
            i, c = _local(r, reading, mu), _central(r, reading, mu)
            runs = [
                ("RW-Meta (LDP)", r["meta"]["curve"][i]),
                ("A&S Min Noise (CDP)", r["tree"]["curve"][0, c]),
                ("A&S Min Regret (CDP)", r["tree"]["curve"][1, c]),
            ]
            values = []
            for k, (name, curve) in enumerate(runs):
                cum = np.cumsum(curve, axis=-1)
                mean = cum.mean(0)
                se = cum.std(0, ddof=1) / math.sqrt(cum.shape[0]) if cum.shape[0] > 1 else 0 * mean
                mean_band(
                    ax, weeks, mean, se, label=name, color=PALETTE[k], marker=None, ls=LINESTYLES[k]
                )
                values += [mean - 2 * se, mean + 2 * se]
            ax.plot(weeks, r["clean_curve"], color="black", ls=":", label="best learner, clean")
            ax.plot(
                weeks, r["best_static_curve"], color="0.4", ls="--", label="best static hospital"
            )
            ax.plot(weeks, r["uniform_curve"], color="0.6", ls="-.", label="uniform play")
            values += [r["clean_curve"], r["best_static_curve"], r["uniform_curve"]]
            fit_ylim(ax, values)
            ax.set_title(f"{state} (n={r['n']}), mu = {mu:g}")
            ax.set_xlabel("week")
            ax.set_ylabel("cumulative gain")
    figure_legend(fig, axes, ncols=3)
    caption(
        fig,
        data=data_kind,
        unit=f"{reading.title}: {reading.protects()}",
        title=f"COVID hospital task ({PAPER_TITLE}, Sec. 6): mean cumulative gain "
        "(headline reading)",
        note=se_note("bands"),
    )
    return fig


def _data_figure(results: dict[str, dict], data_kind: str):
    fig, axes = figure(len(results), 1, width=3.6, height=2.8)
    for k, (state, r) in enumerate(results.items()):
        ax = axes[0, k]
        g = r["data"].density
        top = np.argsort(g.sum(0))[::-1][:3]
        weeks = np.arange(1, g.shape[0] + 1)
        ax.plot(weeks, g.mean(1), color="k", label="state mean")
        for j, h in enumerate(top):
            ax.plot(
                weeks,
                g[:, h],
                color=PALETTE[j + 1],
                lw=0.8,
                ls=LINESTYLES[j + 1],
                label=f"#{j + 1} hospital (total)",
            )
        ax.plot(weeks, g.max(1), ":", color="grey", lw=0.8, label="weekly max")
        fit_ylim(ax, [g.mean(1), g[:, top], g.max(1)])
        ax.set_title(f"{state}: {g.shape[1]} hospitals")
        ax.set_xlabel("week")
        ax.set_ylabel("COVID density")
    figure_legend(fig, axes, ncols=5)
    caption(
        fig,
        data=data_kind,
        unit="none (the gains themselves, no noise)",
        title=f"Gains of the COVID task ({PAPER_TITLE}): COVID inpatients / inpatient beds",
    )
    return fig


# --------------------------------------------------------------------------- run
def _stand_in(ctx: RunContext, state: str, heterogeneity: float):
    key = jax.random.fold_in(jax.random.key(int(ctx.config["data_seed"])), sum(map(ord, state)))
    return covid.synthetic_covid_data(
        key,
        state,
        int(ctx.config["weeks"]),
        seed_label=f"data_seed={ctx.config['data_seed']}",
        wave_heterogeneity=float(heterogeneity),
    )


def _real_panel(ctx: RunContext, mus, readings, eta_inf):
    """The labelled real-data panel on the shared HHS extract, if there is one."""
    option = str(ctx.config["data_dir"]).strip()
    if option.lower() == "none":
        return None
    folder = covid.shared_covid_dir(option)
    files = covid.find_hhs_files(folder)
    if not files:
        ctx.log(f"no HHS facility file under {option or 'the shared data folder'}: no real panel")
        return None
    path = files[0]
    states = tuple(s.strip().upper() for s in ctx.config["real_states"])
    results, rows = {}, []
    for state in states:
        try:
            data = covid.load_hhs_facility(path, state)
        except ValueError as err:
            ctx.log(f"real panel: {state} skipped ({err})")
            continue
        ctx.log("real panel: " + covid.format_report(data))
        r = _study(ctx, data, f"real-{state}", mus, readings, ftpl=False)
        results[state] = r
        for reading in readings:
            for mu in mus:
                row = _row(state, r, reading, mu, eta_inf)
                # The paper's numbers are 148-week totals: not comparable with 5 weeks.
                for key in list(row):
                    if key.startswith("paper_"):
                        row[key] = None
                rows.append(row)
    if not results:
        return None
    weeks = next(iter(results.values()))["T"]
    return {"path": path, "results": results, "rows": rows, "weeks": weeks, "states": list(results)}


def run(ctx: RunContext) -> ExperimentResult:
    mus = tuple(float(x) for x in ctx.config["mu"])
    meta_params(np.asarray(mus), ())  # validates mu
    readings = _readings(ctx.config)
    states = tuple(s.strip().upper() for s in ctx.config["states"])
    data_path = str(ctx.config["data"] or "").strip()
    if not data_path:
        for s in states:
            if s not in covid.STATE_HOSPITALS:
                raise ValueError(
                    f"states must be among {sorted(covid.STATE_HOSPITALS)} for the stand-in; "
                    f"got {s!r}"
                )
    table_h = float(ctx.config["table_heterogeneity"])
    sweep = tuple(float(h) for h in ctx.config["wave_heterogeneity"])
    for h in (table_h, *sweep):
        if not 0.0 <= h <= 5.0:
            raise ValueError(f"wave heterogeneity must be in [0, 5]; got {h}")
    sweep_state = str(ctx.config["sweep_state"]).strip().upper()
    if sweep_state == "AUTO":  # the stand-in's headline state, unless the table is on real data
        sweep_state = "NONE" if data_path else "CA"
    if sweep and sweep_state != "NONE" and sweep_state not in covid.STATE_HOSPITALS:
        raise ValueError(
            f"sweep_state must be among {sorted(covid.STATE_HOSPITALS)} or 'none'; got {sweep_state!r}"
        )
    eta_inf = meta_eta_at_inf(paper_learners())

    ftpl_option = str(ctx.config["ftpl"]).strip().lower()
    if ftpl_option not in ("auto", "0", "1"):
        raise ValueError(f"ftpl must be 'auto', '0' or '1'; got {ftpl_option!r}")
    with_ftpl = ftpl_option == "1" or (ftpl_option == "auto" and bool(data_path))

    # --- the table: every state, every reading
    results, rows = {}, []
    for state in states:
        if data_path:
            data = covid.load_hhs_facility(
                data_path, state, start=ctx.config["start"] or None, end=ctx.config["end"] or None
            )
            ctx.log(covid.format_report(data))
        else:
            data = _stand_in(ctx, state, table_h)
        r = _study(ctx, data, state, mus, readings, ftpl=with_ftpl)
        results[state] = r
        for reading in readings:
            rows += [_row(state, r, reading, mu, eta_inf) for mu in mus]
    data_kind = "real HHS data" if data_path else "SYNTHETIC stand-in (not real data)"
    verdicts = _verdicts(rows, readings, ctx.num_seeds)

    # --- dynamics sweep on the stand-in
    sweep_rows = []
    if sweep and sweep_state != "NONE":
        for h in sweep:
            reuse = not data_path and sweep_state in results and h == table_h
            if reuse:
                r = results[sweep_state]
            else:
                r = _study(
                    ctx,
                    _stand_in(ctx, sweep_state, h),
                    f"sweep-{sweep_state}",
                    mus,
                    readings,
                    ftpl=False,
                )
            for reading in readings:
                for mu in mus:
                    if not math.isfinite(mu):
                        continue
                    row = _row(sweep_state, r, reading, mu, eta_inf)
                    sweep_rows.append(
                        {
                            "wave_heterogeneity": h,
                            **{
                                k: row[k]
                                for k in (
                                    "reading",
                                    "state",
                                    "mu",
                                    "n",
                                    "T",
                                    "clean_tracking_advantage",
                                    "ratio_meta_best_as",
                                    "ratio_meta_best_as_se",
                                    "ratio_meta_best_learner",
                                    "ratio_meta_best_learner_se",
                                    "rw_meta",
                                    "rw_meta_se",
                                    "as_min_noise",
                                    "as_min_noise_se",
                                    "as_min_regret",
                                    "as_min_regret_se",
                                    "best_learner_clean",
                                    "best_fixed_hospital",
                                    "data",
                                )
                            },
                        }
                    )

    # --- real-data panel (only when the table itself is on the stand-in)
    real = None if data_path else _real_panel(ctx, mus, readings, eta_inf)

    # --- tables
    long_rows, learner_rows, settings = [], [], []
    for row in rows:
        for key, name in (
            ("rw_meta", "RW-Meta"),
            ("as_min_noise", "A&S Min Noise"),
            ("as_min_regret", "A&S Min Regret"),
            ("rw_ftpl", "RW-FTPL"),
            ("best_learner_in_run", "best learner in run"),
        ):
            if row[key] is None:  # not run (RW-FTPL without --ftpl): no row
                continue
            long_rows.append(
                {
                    "reading": row["reading"],
                    "state": row["state"],
                    "mu": row["mu"],
                    "algorithm": name,
                    "mean_total_gain": row[key],
                    "se": row[key + "_se"],
                    "data": row["data"],
                }
            )
    for state, r in results.items():
        for reading in readings:
            for mu in mus:
                cell = _cell(r, reading, mu)
                mean_learner = cell["learners"].mean(0)
                counts = np.bincount(np.argmax(cell["learners"], -1), minlength=r["m"])
                for j, lab in enumerate(r["labels"]):
                    learner_rows.append(
                        {
                            "reading": reading.title,
                            "state": state,
                            "mu": mu,
                            "learner": lab,
                            "mean_gain_in_run": float(mean_learner[j]),
                            "share_best_in_run": float(counts[j] / counts.sum()),
                            "gain_clean": float(r["clean_totals"][j]),
                            "data": r["data"].source,
                        }
                    )
                c = cell["c"]
                settings.append(
                    {
                        "reading": reading.title,
                        "state": state,
                        "mu": mu,
                        "central_sensitivity": _sens_text(reading.central, r["n"]),
                        "min_noise_node_sd": float(r["node_sd"][0, c]),
                        "min_noise_learning_rate": float(r["rate"][0, c]),
                        **r["as_settings"][c],
                        "min_regret_node_sd": float(r["node_sd"][1, c]),
                        "min_regret_learning_rate": float(r["rate"][1, c]),
                        "tree_levels": r["levels"],
                        "data": r["data"].source,
                    }
                )
    tables = {
        "covid_summary": rows,
        "covid_gains": long_rows,
        "covid_learners": learner_rows,
        "agarwal_singh_settings": settings,
        "covid_verdicts": V.verdict_table(verdicts),
    }
    if sweep_rows:
        tables["covid_dynamics"] = sweep_rows
    if real is not None:
        tables["covid_real_extract"] = real["rows"]

    # --- figures
    headline = readings[0]
    figures = {
        "covid_readings": _readings_figure(
            rows,
            readings,
            list(results),
            mus,
            data_kind,
            f"The COVID table of {PAPER_TITLE} under each privacy-unit reading "
            "(mean total gain)",
        ),
        "covid_cumulative_gain": _curves_figure(results, headline, mus, data_kind),
        "covid_data": _data_figure(results, data_kind),
    }
    if sweep_rows:
        figures["covid_dynamics"] = _dynamics_figure(
            sweep_rows,
            readings,
            mus,
            table_h,
            sweep_state,
            "SYNTHETIC stand-in (not real data)",
        )
    if real is not None:
        figures["covid_real_extract"] = _readings_figure(
            real["rows"],
            readings,
            real["states"],
            mus,
            f"real HHS facility extract {real['path'].name} ({real['weeks']} weeks)",
            f"Real-data panel: only {real['weeks']} weeks, so totals are <= {real['weeks']} and "
            "not comparable with the paper's 148-week values",
            paper=False,
        )

    # --- summary (computed, no fixed result sentences)
    sizes = ", ".join(f"{s} n={r['n']}" for s, r in results.items())
    T = next(iter(results.values()))["T"]
    head = [
        f"COVID hospital task on the {data_kind} ({sizes}; T = {T} weeks; {ctx.num_seeds} runs "
        f"per cell). Readings (headline first): "
        + "; ".join(f"{r.title} = {r.protects()}" for r in readings)
        + ".",
        "mu = inf: " + _inf_text(eta_inf) + ".",
    ]
    for reading in readings:
        sel = [r for r in rows if r["reading"] == reading.title and math.isfinite(r["mu"])]
        if sel:
            q = [r["ratio_meta_best_as"] for r in sel]
            head.append(
                f"{reading.title}: RW-Meta / best A&S {min(q):.2f}..{max(q):.2f} over "
                f"{len(sel)} finite-mu cells; RW-Meta / best learner in run "
                f"{min(r['ratio_meta_best_learner'] for r in sel):.2f}.."
                f"{max(r['ratio_meta_best_learner'] for r in sel):.2f}."
            )
    adv = ", ".join(f"{s} {r['advantage']:.2f}" for s, r in results.items())
    head.append(f"Clean tracking advantage (best clean learner / best static hospital): {adv}.")
    text = "\n".join(head + [V.summary_lines(verdicts)] + _sweep_lines(sweep_rows, readings, mus))
    if real is not None:
        text += (
            f"\nReal-data panel ({real['path'].name}, {real['weeks']} weeks, "
            + ", ".join(f"{s} n={real['results'][s]['n']}" for s in real["states"])
            + "): shows the real density scale and what each unit's noise does to it over "
            f"{real['weeks']} weeks; it cannot show tracking across waves nor the 148-week totals."
        )
    info = "; ".join(r["data"].source for r in results.values())
    if real is not None:
        info += f"; real-data panel: {real['path'].name}"
    return ExperimentResult(
        tables=tables,
        figures=figures,
        summary=text,
        data=info,
        extra={
            "states": list(states),
            "mu": list(mus),
            "data_kind": data_kind,
            "readings": [
                dataclasses.asdict(r) | {"title": r.title, "protects": r.protects()}
                for r in readings
            ],
            "meta_eta_at_inf": eta_inf,
            "verdicts": [v.as_dict() for v in verdicts],
            "real_panel": None if real is None else str(real["path"]),
        },
    )


EXPERIMENT = Experiment(
    name=NAME,
    description="Paper 000's COVID table under each privacy unit: RW-Meta vs Agarwal & Singh, "
    "best learner; dynamics sweep; verdicts",
    run=run,
    options=(
        Option("data", str, "", "path to a full HHS facility CSV for the table (empty: stand-in)"),
        Option(
            "data_dir",
            str,
            "",
            "shared data folder for the real-data panel (default "
            "<repo>/../shared/data; 'none': no panel)",
        ),
        Option("real_states", strs, ("NM", "PA", "CA"), "states of the real-data panel"),
        Option("states", strs, ("NM", "PA", "CA"), "states (comma-separated)"),
        Option("mu", floats, (math.inf, 1.0, 0.5, 0.25), "privacy levels mu (inf = no privacy)"),
        Option(
            "privacy_unit",
            str,
            "hospital",
            "headline neighbouring relation for both models: "
            "hospital (one hospital's weekly report) or vector (a state's weekly vector)",
            choices=("hospital", "vector"),
        ),
        Option(
            "readings",
            strs,
            ("hospital", "vector", "mixed"),
            "readings reported side by side (hospital, vector, mixed)",
        ),
        Option(
            "ldp_sensitivity",
            str,
            "",
            "custom reading: LDP l2 sensitivity (number, sqrt-n; replaces the readings)",
        ),
        Option("central_sensitivity", str, "", "custom reading: A&S per-node l2 sensitivity"),
        Option(
            "ftpl",
            str,
            "auto",
            "RW-FTPL over the hospitals (data-independent experts): 1 "
            "run it, 0 skip it (its columns are empty), auto: run it with --data or at paper "
            "size",
            choices=("auto", "0", "1"),
        ),
        Option("weeks", int, covid.SYNTHETIC_WEEKS, "weeks of the synthetic stand-in"),
        Option("data_seed", int, 0, "seed of the synthetic stand-in"),
        Option(
            "table_heterogeneity",
            float,
            covid.WAVE_AMPLITUDE_LOG_SD,
            "stand-in of the table: sd of log per-hospital per-wave amplitudes (default 0.35)",
        ),
        Option(
            "wave_heterogeneity",
            floats,
            (0.0, 0.35, 0.7, 1.0, 1.5),
            "dynamics sweep: wave heterogeneity values of the stand-in",
        ),
        Option(
            "sweep_state",
            str,
            "auto",
            "state of the dynamics sweep (auto: CA on the "
            "stand-in, none with --data; 'none': no sweep)",
        ),
        Option("start", str, "", "first collection week kept from a real file (ISO date)"),
        Option("end", str, "", "last collection week kept from a real file (ISO date)"),
    ),
    # small: the default `ldpjax run` / `reproduce` size (fast: the real panel on CA only and,
    # on the stand-in, no standalone RW-FTPL; its learner twin inside RW-Meta is in every row).
    sizes={
        "small": {"seeds": 20, "real_states": ("CA",)},
        "paper": {"seeds": 100, "ftpl": "1"},
    },
    order=21,
)
