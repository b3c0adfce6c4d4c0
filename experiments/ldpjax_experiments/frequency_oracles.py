"""``frequency-oracles``: the variance of the LDP frequency oracles against epsilon (Wang et al.).

Reproduces the comparison of Wang, Blocki, Li & Jha, "Locally Differentially Private Protocols
for Frequency Estimation" (USENIX Security 2017, Sec. 4-5 and their variance figures): for each
oracle (GRR, SUE = basic RAPPOR, OUE, BLH, OLH, and Hadamard response), each domain size d and
each epsilon, ``users`` users report once through the online frequency family
(:func:`ldpjax.frequency.online_frequency`, one compiled sweep of seeds x eps x d per oracle)
and the run's estimates give the squared error sum_v (f~(v) - f(v))^2. Its mean over the seeds,
divided by d, is the empirical variance of one item's estimate; the closed form is Wang et al.'s
Theorem 2 summed over the items, (1/d) sum_v Var[c~(v)] / n^2 (:mod:`ldpjax.frequency.variance`).

Verdicts (all computed from the run): each oracle's empirical variance matches its closed form
in every cell; OLH and OUE are below SUE and GRR at the largest d (where d > 3 e^eps + 2); GRR
is the best of GRR, OUE and OLH exactly where d < 3 e^eps + 2 (Wang et al., Sec. 5). The
tolerances come from the sampling error of the mean of the per-seed squared errors.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
from matplotlib.lines import Line2D

from ldpjax.engine import product_grid, record
from ldpjax.frequency import variance as V
from ldpjax.frequency.online import (
    OnlineFrequencyConfig,
    frequency_params,
    olh_buckets_of,
    online_frequency,
)
from ldpjax_experiments.base import (
    Experiment,
    ExperimentResult,
    Option,
    RunContext,
    floats,
    ints,
    strs,
)
from ldpjax_experiments.kit import judge_share, series_style
from ldpjax_experiments.plotting import MIN_FONT, caption, figure, mean_bars, se_note
from ldpjax_experiments.verdicts import judge, summary_lines, with_data

NAME = "frequency-oracles"
LABELS = {"grr": "GRR", "sue": "SUE (RAPPOR)", "oue": "OUE", "blh": "BLH", "olh": "OLH",
          "hr": "Hadamard response", "ss": "subset selection"}
#: The oracles of Wang et al.'s comparison that this experiment runs by default (and HR).
DEFAULT_ORACLES = ("grr", "sue", "oue", "blh", "olh", "hr")


def closed_form(oracle: str, eps: float, d: int, n: int) -> float:
    """(1/d) sum_v Var[c~(v)] / n^2 for users whose frequencies sum to 1 (Wang et al. 2017,
    Thm. 2; the f term adds Var(f = 1) - Var(f = 0) once), from :mod:`ldpjax.frequency.variance`."""
    def var(f):
        if oracle == "grr":
            return V.grr_variance(eps, d, n, f)
        if oracle == "sue":
            return V.sue_variance(eps, n, f)
        if oracle == "oue":
            return V.oue_variance(eps, n, f)
        if oracle in ("blh", "olh"):
            g = 2.0 if oracle == "blh" else float(olh_buckets_of(eps))
            return V.olh_variance(eps, g, n, f)
        if oracle == "hr":
            return V.hadamard_variance(eps, n, f)
        raise ValueError(f"oracle must be one of {DEFAULT_ORACLES}; got {oracle!r}")

    zero, one = float(var(0.0)), float(var(1.0))
    return (d * zero + one - zero) / (d * n * n)


class FrequencyStudy(NamedTuple):
    """What the sweeps measured: everything :func:`report` reads (no run context).

    Axes: ``oracle`` (``oracles``), ``eps`` (``eps_grid``), ``d`` (``domains``).

    Fields:
      oracles: the oracles run, each one of :data:`DEFAULT_ORACLES`.
      eps_grid: the budgets epsilon.
      domains: the domain sizes d.
      users: users per run (each reports once).
      seeds: runs per (oracle, eps, d) cell.
      path: the online frequency family's path, ``"counts"`` or ``"reports"``.
      variance: (oracle, eps, d) empirical variance of one item's frequency estimate: the mean
        over the seeds of sum_v (f~(v) - f(v))^2 / d.
      se: (oracle, eps, d) its standard error, the seeds' sd (ddof 1) / sqrt(seeds).
      closed_form: (oracle, eps, d) (1/d) sum_v Var[c~(v)] / n^2 (:func:`closed_form`).
      data_label: what the verdicts were judged on (``"synthetic"``: Wang et al.'s comparison
        is itself synthetic).
      data: the data in words (``ExperimentResult.data``).
    """

    oracles: tuple[str, ...]
    eps_grid: tuple[float, ...]
    domains: tuple[int, ...]
    users: int
    seeds: int
    path: str
    variance: np.ndarray
    se: np.ndarray
    closed_form: np.ndarray
    data_label: str = "synthetic"
    data: str = "synthetic: users' items uniform over d (no data files)"


def study(ctx: RunContext) -> FrequencyStudy:
    """One sweep per oracle over (eps, d); the empirical variance per item, its standard error
    and the closed form per cell."""
    eps_grid = tuple(float(e) for e in ctx.config["eps"])
    domains = tuple(int(d) for d in ctx.config["domains"])
    users, path = int(ctx.config["users"]), str(ctx.config["path"])
    oracles = tuple(ctx.config["oracles"])
    for oracle in oracles:
        if oracle not in DEFAULT_ORACLES:
            raise ValueError(f"oracles must be among {DEFAULT_ORACLES}; got {oracle!r}")
    big = max(domains)
    shape = (len(oracles), len(eps_grid), len(domains))
    variance, se, theory = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    seeds = int(ctx.num_seeds)
    for k, oracle in enumerate(oracles):
        config = OnlineFrequencyConfig(max_items=big, oracle=oracle, users=users, path=path)
        params = product_grid(frequency_params(config, eps_grid[0]), eps=list(eps_grid),
                              d=list(domains))
        result = ctx.simulate(online_frequency(config), params, 1, grid_ndim=2,
                              record=record.last(_squared_error), label=oracle,
                              keep_state=False)
        errors = np.asarray(result.record, np.float64)  # (eps, d, seeds)
        seeds = int(errors.shape[-1])
        for i, eps in enumerate(eps_grid):
            for j, d in enumerate(domains):
                per_item = errors[i, j] / d
                variance[k, i, j] = float(per_item.mean())
                se[k, i, j] = float(per_item.std(ddof=1) / math.sqrt(per_item.size))
                theory[k, i, j] = closed_form(oracle, eps, d, users)
    return FrequencyStudy(oracles, eps_grid, domains, users, seeds, path, variance, se, theory)


def rows_of(s: FrequencyStudy) -> list[dict]:
    """The ``variance`` table: one row per (oracle, eps, d) with the empirical variance, its
    sampling band, the closed form, their ratio and z = (variance - closed form) / band.

    The band is the sampling error of a variance: a mean of S per-seed sums of d squared
    (near-normal) errors has sd closed form x sqrt(2 / (d S)) when the items are independent;
    the seeds' own standard error where it is larger (correlated items).

    Example:
      >>> s = FrequencyStudy(("grr",), (1.0,), (2,), 100, 8, "counts", np.full((1, 1, 1), 0.5),
      ...                    np.full((1, 1, 1), 0.2), np.full((1, 1, 1), 0.4))
      >>> round(rows_of(s)[0]["z"], 6)  # (0.5 - 0.4) / max(0.2, 0.4 sqrt(2 / 16) = 0.141)
      0.5
    """
    rows = []
    for k, oracle in enumerate(s.oracles):
        for i, eps in enumerate(s.eps_grid):
            for j, d in enumerate(s.domains):
                mean, se = float(s.variance[k, i, j]), float(s.se[k, i, j])
                theory = float(s.closed_form[k, i, j])
                band = max(se, theory * math.sqrt(2.0 / (d * s.seeds)))
                rows.append({"oracle": oracle, "d": d, "eps": eps, "users": s.users,
                             "seeds": s.seeds, "variance": mean, "se": se,
                             "se_band": band, "closed_form": theory, "ratio": mean / theory,
                             "z": (mean - theory) / band})
    return rows


def _squared_error(outputs):
    return outputs.squared_error


def report(s: FrequencyStudy) -> ExperimentResult:
    """The table, verdicts, figure and summary of a study (pure: no keys, no JAX, no files).

    Example:
      >>> s = FrequencyStudy(("grr",), (1.0,), (2,), 100, 8, "counts", np.full((1, 1, 1), 0.5),
      ...                    np.full((1, 1, 1), 0.2), np.full((1, 1, 1), 0.4))
      >>> [v.status for v in report(s).verdicts]  # ratio 1.25 within z x 0.2 / 0.4
      ['reproduced']
    """
    rows = rows_of(s)
    verdicts = _verdicts(rows, s.data_label)
    fig = _figure(rows, s)
    summary = (
        f"Variance of the frequency oracles of Wang et al. (2017) against epsilon: "
        f"{len({r['oracle'] for r in rows})} oracles x d in {sorted({r['d'] for r in rows})} x "
        f"eps in {sorted({r['eps'] for r in rows})}, {s.users} users, "
        f"{s.seeds} seeds, path '{s.path}' (one compiled sweep per oracle).\n"
        + summary_lines(verdicts))
    return ExperimentResult(
        tables={"variance": rows},
        figures={"variance": fig},
        summary=summary,
        data=s.data,
        verdicts=tuple(verdicts),
    )


def run(ctx: RunContext) -> ExperimentResult:
    """``report(study(ctx))``."""
    return report(study(ctx))


def _z(cells: int) -> float:
    """Two-sided 95% with Bonferroni over ``cells``: Phi^-1(1 - 0.025 / cells)."""
    return NormalDist().inv_cdf(1 - 0.025 / max(cells, 1))


def _verdicts(rows, data="synthetic"):
    out = []
    z = _z(len(rows))
    note = (f"z = {z:.2f} (95% two-sided, Bonferroni over {len(rows)} cells) x the standard error "
            f"of the mean of the per-seed squared errors, the larger of the seeds' sd / "
            f"sqrt(seeds) and the normal-theory sampling error of a variance, closed form x "
            f"sqrt(2 / (d seeds)); relative to the closed form")
    for oracle in dict.fromkeys(r["oracle"] for r in rows):
        cells = [r for r in rows if r["oracle"] == oracle]
        worst = max(cells, key=lambda r: abs(r["z"]))
        out.append(judge(
            NAME, f"{LABELS[oracle]}: empirical variance = closed form in every (d, eps) cell "
            f"(worst: d = {worst['d']}, eps = {worst['eps']:g})",
            worst["ratio"], 1.0, z * worst["se_band"] / worst["closed_form"],
            tolerance_note=note, reference="closed form",
            measure="empirical variance of the frequency estimates over the seeds, divided by "
            "the closed-form variance (Wang et al. 2017), in the cell farthest from it",
            reason="the empirical variance of this cell is outside the sampling band"))
    table = {(r["oracle"], r["d"], r["eps"]): r for r in rows}
    oracles = {r["oracle"] for r in rows}

    def diff_se(a, b):
        return math.hypot(a["se"], b["se"])

    big = max(r["d"] for r in rows)
    if {"olh", "oue", "sue", "grr"} <= oracles:
        eps_cells = sorted({r["eps"] for r in rows if big > 3 * math.exp(r["eps"]) + 2})
        hits = 0
        for eps in eps_cells:
            good = [table[(o, big, eps)] for o in ("olh", "oue")]
            bad = [table[(o, big, eps)] for o in ("sue", "grr")]
            hits += all(_below(g, b, diff_se(g, b)) for g in good for b in bad)
        if eps_cells:
            out.append(judge_share(
                NAME, f"OLH and OUE have lower variance than SUE and GRR at d = {big} "
                f"(eps with d > 3 e^eps + 2)", hits, len(eps_cells),
                tolerance_note="per pair: significantly lower (by > 2 standard errors of the "
                "difference) where the closed forms differ by > 4 of them, else not "
                "significantly higher",
                reason="in some eps cells the ordering is not significant"))
    if {"grr", "oue", "olh"} <= oracles:
        hits = total = 0
        for (oracle, d, eps), r in table.items():
            if oracle != "grr":
                continue
            others = [table[(o, d, eps)] for o in ("oue", "olh")]
            best = min(others, key=lambda o: o["variance"])
            total += 1
            if d < 3 * math.exp(eps) + 2:  # GRR should be best: not significantly worse
                hits += r["variance"] <= best["variance"] + 2 * diff_se(r, best)
            else:  # GRR should not be best: not significantly better
                hits += r["variance"] >= best["variance"] - 2 * diff_se(r, best)
        out.append(judge_share(
            NAME, "GRR is the best of GRR, OUE, OLH exactly where d < 3 e^eps + 2", hits, total,
            tolerance_note="per cell: GRR not worse (below the threshold) / not better (above it) "
            "than the best of OUE and OLH by more than 2 standard errors of the difference",
            reason="in some cells GRR's ordering against OUE/OLH contradicts the threshold"))
    return list(with_data(out, data))


def _below(good, bad, se: float) -> bool:
    """``good`` below ``bad``: significantly (2 se) where their closed forms differ by more than
    4 se (a difference the run resolves), else not significantly above."""
    if bad["closed_form"] - good["closed_form"] > 4 * se:
        return good["variance"] + 2 * se < bad["variance"]
    return good["variance"] <= bad["variance"] + 2 * se


def _figure(rows, s: FrequencyStudy):
    domains = sorted({r["d"] for r in rows})
    oracles = list(dict.fromkeys(r["oracle"] for r in rows))
    fig, axes = figure(len(domains), 1, width=3.4, height=3.2)
    for j, d in enumerate(domains):
        ax = axes[0, j]
        for k, oracle in enumerate(oracles):
            cells = sorted((r for r in rows if r["oracle"] == oracle and r["d"] == d),
                           key=lambda r: r["eps"])
            x = np.array([r["eps"] for r in cells])
            style = series_style(k)
            ax.plot(x, [r["closed_form"] for r in cells], color=style["color"], ls=style["ls"],
                    lw=1, label=f"{LABELS[oracle]} closed form")
            mean_bars(ax, x, [r["variance"] for r in cells], [r["se"] for r in cells],
                      label=f"{LABELS[oracle]} empirical", color=style["color"],
                      marker=style["marker"], ls="none", log=True)
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("variance of one item's frequency")
        ax.set_title(f"d = {d}")
        values = [r[c] for r in rows if r["d"] == d for c in ("variance", "closed_form")]
        lows = [r["variance"] - 2 * r["se"] for r in rows if r["d"] == d]
        low = min([v for v in lows if v > 0] + [min(values)]) / 2
        ax.set_ylim(max(low, min(values) / 25), max(r["variance"] + 2 * r["se"]
                                                     for r in rows if r["d"] == d) * 2)
    handles = [Line2D([], [], markersize=4, label=LABELS[o], **series_style(k))
               for k, o in enumerate(oracles)]
    handles += [Line2D([], [], color="black", marker="o", ls="none", markersize=4,
                       label="markers: empirical (+-2 SE)"),
                Line2D([], [], color="black", lw=1, label="lines: closed form (Wang et al.)")]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4),
               fontsize=MIN_FONT)
    caption(fig, data="synthetic items, uniform over d (no data file)",
            unit="one user's item (one report through the oracle, eps-LDP)",
            note=f"{s.users} users, {s.seeds} seeds per (oracle, d, eps), "
            f"path '{s.path}' of ldpjax.frequency.online_frequency; "
            f"{se_note('error bars')}",
            title="Frequency oracles: variance vs epsilon (Wang et al., USENIX Security 2017)")
    return fig


EXPERIMENT = Experiment(
    name=NAME,
    description="variance of GRR/SUE/OUE/BLH/OLH/HR vs epsilon at d = 2, 32, 1024 (Wang et al.)",
    run=run,
    options=(
        Option("eps", floats, (0.5, 1.0, 2.0, 3.0, 4.0, 5.0), "budgets epsilon"),
        Option("domains", ints, (2, 32, 1024), "domain sizes d"),
        Option("users", int, 1000, "users per run (each reports once)"),
        Option("oracles", strs, DEFAULT_ORACLES, "oracles to compare"),
        Option("path", str, "counts", "'counts' (support counts from the histogram) or "
               "'reports' (every user's report drawn)", choices=("counts", "reports")),
    ),
    sizes={"small": {"seeds": 100}, "paper": {"seeds": 2000, "users": 10000}},
    order=90,
    cost=8,
)

__all__ = ["DEFAULT_ORACLES", "EXPERIMENT", "LABELS", "FrequencyStudy", "closed_form", "report",
           "rows_of", "run", "study"]
