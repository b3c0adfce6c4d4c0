"""The COVID study's figures, each a pure function of the summary rows or of the study."""

from __future__ import annotations

import math

import numpy as np

from ldpjax_experiments.experts_covid.readings import UNITS_CAPTION, Reading
from ldpjax_experiments.experts_covid.rows import SummaryRow, SweepRow
from ldpjax_experiments.experts_covid.study import StateStudy
from ldpjax_experiments.kit import PAPER_TITLES, series_style
from ldpjax_experiments.plotting import (
    LINESTYLES,
    MARKERS,
    MIN_FONT,
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

PAPER_TITLE = PAPER_TITLES["000"]  # the paper's short title, for figures
#: (row field, series name, paper field, paper name) of the readings figure.
TABLE_SERIES = (
    ("rw_meta", "RW-Meta (LDP)", "paper_rw_meta", "RW-Meta"),
    ("as_min_noise", "A&S Min Noise (CDP)", "paper_as_min_noise", "A&S Min Noise"),
    ("as_min_regret", "A&S Min Regret (CDP)", "paper_as_min_regret", "A&S Min Regret"),
    ("best_learner_in_run", "best learner in run", "paper_best_linear_model", "best linear model"),
)
SPACING = 0.24  # between the series of one mu (x units: one mu per unit)
PAIR = 0.055  # ours and the paper's star sit PAIR either side of the series' slot


def _is_real(data_kind: str) -> bool:
    """Whether a figure's data are the real HHS series (its titles may then say COVID)."""
    return data_kind.strip().lower().startswith("real")


def task_name(data_kind: str) -> str:
    """The task's name in titles: the COVID hospital task on real data; on the synthetic
    stand-in no title names the real data set."""
    return "COVID hospital task" if _is_real(data_kind) else "stand-in hospital task"


def _mu_positions(mus) -> tuple[np.ndarray, list[str]]:
    return np.arange(len(mus), dtype=float), [
        "inf" if not math.isfinite(m) else f"{m:g}" for m in mus
    ]


def _table_panel(ax, cells: dict[float, SummaryRow], mus, x) -> list:
    """One (state, reading) panel: each series per mu (+-2 SE bars) with the paper's value as
    an unfilled star beside it: right of it, but left of the last series, so that no star
    lies outside the simulated points; the two A&S stars (often close in y) stay apart."""
    values = []
    for k, (key, name, pkey, pname) in enumerate(TABLE_SERIES):
        slot = x + SPACING * (k - 1.5)
        side = 1.0 if k < len(TABLE_SERIES) - 1 else -1.0  # the last series' star inwards
        mean = np.asarray([getattr(cells[m], key) for m in mus])
        se = np.asarray([getattr(cells[m], key + "_se") for m in mus])
        style = series_style(k, line=False)
        mean_bars(ax, slot - side * PAIR, mean, se, label=name, ls="none", **style)
        values += [mean - 2 * se, mean + 2 * se]
        cited = [j for j, m in enumerate(mus) if getattr(cells[m], pkey) is not None]
        if cited:
            py = [getattr(cells[mus[j]], pkey) for j in cited]
            paper_markers(ax, slot[cited] + side * PAIR, py, label=f"paper: {pname}",
                          color=style["color"], markersize=7)
            values.append(py)
    any_row = cells[mus[0]]
    ax.axhline(any_row.best_fixed_hospital, color="0.3", ls="--", lw=1,
               label="best static hospital")
    ax.axhline(any_row.uniform, color="0.6", ls=":", lw=1, label="uniform play")
    for j in range(1, len(mus)):  # a light rule between the mu groups
        ax.axvline(j - 0.5, color="0.88", lw=0.8, zorder=0)
    ax.grid(False, axis="x")
    return values + [[any_row.best_fixed_hospital, any_row.uniform, 0.0]]


PAPER_ENTRY = "paper's value (unfilled star, colour of its series)"


def _readings_legend(fig, axes):
    """The legend of the readings figure, one entry per style drawn: a marker per series, the
    two reference lines, and one entry for the paper's stars (the first series' stars stand
    for all: each star takes the colour of the series it belongs to)."""
    handles, labels = [], []
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab.startswith("paper"):
                if PAPER_ENTRY in labels:
                    continue
                lab = PAPER_ENTRY
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4),
               fontsize=MIN_FONT)


def readings_figure(rows, readings, states, mus, data_kind: str, title: str, paper: bool = True):
    """States (rows) x readings (columns): mean total gain per mu of each algorithm (+-2 SE
    bars), the paper's values as unfilled stars right beside the series they belong to. The
    panels of one state share their y range so that readings compare at a glance."""
    fig, axes = figure(len(readings), len(states), width=5.0, height=3.2)
    x, ticks = _mu_positions(mus)
    for si, state in enumerate(states):
        row_values = []
        for ri, reading in enumerate(readings):
            ax = axes[si, ri]
            cells = {r.mu: r for r in rows if r.state == state and r.reading == reading.title}
            row_values += _table_panel(ax, cells, mus, x)
            ax.set_xticks(x, ticks)
            ax.set_xlim(x[0] - 0.5, x[-1] + 0.5)
            ax.set_xlabel("mu (privacy level; inf = none)")
            ax.set_ylabel("mean total gain")
            ax.set_title(f"{state} (n={cells[mus[0]].n}): {reading.title}")
        for ax in axes[si]:
            fit_ylim(ax, row_values)
    _readings_legend(fig, axes)
    caption(
        fig,
        data=data_kind,
        unit=UNITS_CAPTION,
        title=title,
        note=se_note("bars")
        + (
            " Unfilled stars, beside each series: the paper's values (one table; which "
            "relation it used is not stated)."
            if paper
            else ""
        ),
    )
    return fig


def dynamics_figure(sweep: list[SweepRow], readings, mus, table_h: float, state: str,
                    data_kind: str):
    """RW-Meta / best A&S against the swept wave heterogeneity, per reading and mu.

    The x axis is the swept setting itself (distinct by construction); the clean tracking
    advantage it yields is printed under each tick (two settings can give the same advantage,
    so the advantage cannot be the axis). Error bars, dodged per mu, instead of bands: the
    bands of the three mu levels overlap."""
    finite = [m for m in mus if math.isfinite(m)]
    hs = sorted({s.wave_heterogeneity for s in sweep})
    adv = {s.wave_heterogeneity: s.row.clean_tracking_advantage for s in sweep}
    span = (hs[-1] - hs[0]) or 1.0
    dodge = 0.035 * span
    fig, axes = figure(len(readings), 1, width=3.9, height=3.6)
    for ri, reading in enumerate(readings):
        ax = axes[0, ri]
        values = [[1.0]]
        for k, mu in enumerate(finite):
            sel = sorted(
                (s for s in sweep if s.row.reading == reading.title and s.row.mu == mu),
                key=lambda s: s.wave_heterogeneity,
            )
            h = np.asarray([s.wave_heterogeneity for s in sel])
            q = np.asarray([s.row.ratio_meta_best_as for s in sel])
            se = np.asarray([s.row.ratio_meta_best_as_se for s in sel])
            _, lo, hi = mean_bars(
                ax, h + dodge * (k - (len(finite) - 1) / 2), q, se, label=f"mu = {mu:g}",
                lw=1, **series_style(k),
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


def _curves_panel(ax, r: StateStudy, reading: Reading, mu: float) -> None:
    i, c = r.local(reading, mu), r.central(reading, mu)
    runs = [
        ("RW-Meta (LDP)", r.meta_curve[i]),
        ("A&S Min Noise (CDP)", r.tree_curve[0, c]),
        ("A&S Min Regret (CDP)", r.tree_curve[1, c]),
    ]
    weeks = np.arange(1, r.T + 1)
    # Curves can coincide (both A&S settings are noise-free Hedge at mu = inf; the best clean
    # learner can be a static hospital): each curve carries markers every `step` weeks,
    # staggered by curve, so that one drawn on top of another still shows its own.
    step = max(r.T // 6, 1)

    def every(k):
        return (k * step // 6 % step, step)

    values = []
    for k, (name, curve) in enumerate(runs):
        cum = np.cumsum(curve, axis=-1)
        mean = cum.mean(0)
        se = cum.std(0, ddof=1) / math.sqrt(cum.shape[0]) if cum.shape[0] > 1 else 0 * mean
        mean_band(ax, weeks, mean, se, label=name, color=PALETTE[k], marker=MARKERS[k],
                  ls=LINESTYLES[k], markevery=every(k), markerfacecolor="none")
        values += [mean - 2 * se, mean + 2 * se]
    refs = (("best learner, clean", r.clean_curve, "black", ":", "x"),
            ("best static hospital", r.best_static_curve, "0.4", "--", "+"),
            ("uniform play", r.uniform_curve, "0.6", "-.", "1"))
    for j, (name, curve, color, ls, marker) in enumerate(refs):
        ax.plot(weeks, curve, color=color, ls=ls, marker=marker, markevery=every(len(runs) + j),
                markersize=5, label=name)
    values += [r.clean_curve, r.best_static_curve, r.uniform_curve]
    fit_ylim(ax, values)


def curves_figure(results: dict[str, StateStudy], reading: Reading, mus, data_kind: str):
    """Mean cumulative gain per week of each algorithm, states (rows) x mu (columns)."""
    states = list(results)
    # one state leaves the caption most of the height: give the single row more of it
    fig, axes = figure(len(mus), len(states), width=3.3, height=2.6 + 1.2 / len(states))
    for si, state in enumerate(states):
        r = results[state]
        for mi, mu in enumerate(mus):
            ax = axes[si, mi]
            _curves_panel(ax, r, reading, mu)
            ax.set_title(f"{state} (n={r.n}), mu = {mu:g}")
            ax.set_xlabel("week")
            ax.set_ylabel("cumulative gain")
    figure_legend(fig, axes, ncols=3)
    caption(
        fig,
        data=data_kind,
        unit=f"{reading.title}: {reading.protects()}",
        title=f"{task_name(data_kind)[0].upper()}{task_name(data_kind)[1:]} ({PAPER_TITLE}, "
        "Sec. 6): mean cumulative gain",
        note=se_note("bands") + " Coinciding curves (both A&S settings at mu = inf; a learner "
        "equal to a static hospital) show their own markers, staggered in weeks.",
    )
    return fig


def data_figure(results: dict[str, StateStudy], data_kind: str):
    """The gains themselves: state mean, the three top hospitals and the weekly max."""
    fig, axes = figure(len(results), 1, width=3.6, height=2.8)
    for k, (state, r) in enumerate(results.items()):
        ax = axes[0, k]
        g = r.data.density
        top = np.argsort(g.sum(0))[::-1][:3]
        weeks = np.arange(1, g.shape[0] + 1)
        ax.plot(weeks, g.mean(1), color="k", label="state mean")
        for j, h in enumerate(top):
            ax.plot(weeks, g[:, h], color=PALETTE[j + 1], lw=0.8, ls=LINESTYLES[j + 1],
                    label=f"#{j + 1} hospital (total)")
        ax.plot(weeks, g.max(1), ":", color="grey", lw=0.8, label="weekly max")
        fit_ylim(ax, [g.mean(1), g[:, top], g.max(1)])
        ax.set_title(f"{state}: {g.shape[1]} hospitals")
        ax.set_xlabel("week")
        ax.set_ylabel("COVID density" if _is_real(data_kind) else "density (stand-in)")
    figure_legend(fig, axes, ncols=5)
    caption(
        fig,
        data=data_kind,
        unit="none (the gains themselves, no noise)",
        title=f"Gains of the {task_name(data_kind)} ({PAPER_TITLE}): "
        + ("COVID inpatients / inpatient beds" if _is_real(data_kind)
           else "synthetic inpatient densities"),
    )
    return fig


__all__ = ["PAPER_TITLE", "curves_figure", "data_figure", "dynamics_figure", "readings_figure"]
