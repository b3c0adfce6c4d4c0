"""The report of a :class:`~ldpjax_experiments.experts_covid.study.CovidStudy`: tables,
verdicts, figures and the summary text, all pure functions of the study."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ldpjax_experiments import verdicts as V
from ldpjax_experiments.base import ExperimentResult
from ldpjax_experiments.experts_covid import figures as F
from ldpjax_experiments.experts_covid import rows as R
from ldpjax_experiments.experts_covid.stats import break_even
from ldpjax_experiments.experts_covid.study import CovidStudy
from ldpjax_experiments.experts_covid.verdicts import judge_readings
from ldpjax_experiments.kit import table

STAND_IN = "SYNTHETIC stand-in (not real data)"


@dataclasses.dataclass(frozen=True)
class Report:
    """The rows a study reports: the table, the dynamics sweep and the real-data panel."""

    rows: list[R.SummaryRow]
    sweep: list[R.SweepRow]
    real: list[R.SummaryRow] | None
    verdicts: list[V.Verdict]


def report_rows(s: CovidStudy) -> Report:
    cfg = s.config
    rows = R.summary_rows(s.table, cfg.readings, cfg.mus, s.eta_inf)
    sweep = R.sweep_rows(s.sweep, cfg.sweep_state, cfg.readings, cfg.mus, s.eta_inf)
    real = None
    if s.real is not None:
        # The paper's numbers are 148-week totals: not comparable with a few weeks.
        real = [
            row.without_paper()
            for row in R.summary_rows(s.real.states, cfg.readings, cfg.mus, s.eta_inf)
        ]
    # the verdicts read the table, which runs on the real file only when --data gave one
    data = "real" if cfg.data_path else "synthetic stand-in"
    verdicts = list(V.with_data(judge_readings(rows, cfg.readings, cfg.seeds), data))
    return Report(rows, sweep, real, verdicts)


def sweep_lines(sweep: list[R.SweepRow], readings, mus) -> list[str]:
    """The dynamics sweep in words: RW-Meta / best A&S from the lowest to the highest clean
    tracking advantage, and where it crosses break-even."""
    if not sweep:
        return []
    adv = sorted({s.row.clean_tracking_advantage for s in sweep})
    het = [s.wave_heterogeneity for s in sweep]
    lines = [
        f"Dynamics sweep (stand-in {sweep[0].row.state}, wave heterogeneity {min(het):g}.."
        f"{max(het):g}; clean tracking advantage = best clean learner / best static hospital "
        f"from {adv[0]:.2f} to {adv[-1]:.2f}):"
    ]
    for reading in readings:
        for mu in mus:
            sel = [s.row for s in sweep if s.row.reading == reading.title and s.row.mu == mu]
            if not math.isfinite(mu) or not sel:
                continue
            a = np.asarray([r.clean_tracking_advantage for r in sel])
            q = np.asarray([r.ratio_meta_best_as for r in sel])
            be = break_even(a, q)
            if be is not None:
                where = f"first crosses 1 at advantage {be:.2f}"
            else:
                where = ("above" if q.min() > 1 else "below") + " 1 over the whole range"
            lines.append(
                f"  {reading.title}, mu = {mu:g}: RW-Meta / best A&S {q[np.argmin(a)]:.2f} at "
                f"advantage {a.min():.2f} -> {q[np.argmax(a)]:.2f} at {a.max():.2f}; {where}."
            )
    return lines


def summary_text(s: CovidStudy, rep: Report) -> str:
    """The run's summary paragraph (computed, no fixed result sentences)."""
    cfg = s.config
    sizes = ", ".join(f"{state} n={r.n}" for state, r in s.table.items())
    T = next(iter(s.table.values())).T
    head = [
        f"COVID hospital task on the {cfg.data_kind} ({sizes}; T = {T} weeks; {cfg.seeds} runs "
        f"per cell). Readings (headline first): "
        + "; ".join(f"{r.title} = {r.protects()}" for r in cfg.readings)
        + ".",
        "mu = inf: " + R.inf_text(s.eta_inf) + ".",
    ]
    for reading in cfg.readings:
        sel = [r for r in rep.rows if r.reading == reading.title and math.isfinite(r.mu)]
        if sel:
            q = [r.ratio_meta_best_as for r in sel]
            learner = [r.ratio_meta_best_learner for r in sel]
            head.append(
                f"{reading.title}: RW-Meta / best A&S {min(q):.2f}..{max(q):.2f} over "
                f"{len(sel)} finite-mu cells; RW-Meta / best learner in run "
                f"{min(learner):.2f}..{max(learner):.2f}."
            )
    adv = ", ".join(f"{state} {r.advantage:.2f}" for state, r in s.table.items())
    head.append(f"Clean tracking advantage (best clean learner / best static hospital): {adv}.")
    lines = head + [V.summary_lines(rep.verdicts)] + sweep_lines(rep.sweep, cfg.readings, cfg.mus)
    text = "\n".join(lines)
    if s.real is not None:
        weeks, name = s.real.weeks, s.real.path.name
        text += (
            f"\nReal-data panel ({name}, {weeks} weeks, "
            + ", ".join(f"{state} n={r.n}" for state, r in s.real.states.items())
            + "): shows the real density scale and what each unit's noise does to it over "
            f"{weeks} weeks; it cannot show tracking across waves nor the 148-week totals."
        )
    return text


def tables(s: CovidStudy, rep: Report) -> dict[str, list[dict]]:
    cfg = s.config
    out = {
        "covid_summary": table(rep.rows),
        "covid_gains": R.gains_table(rep.rows),
        "covid_learners": R.learners_table(s.table, cfg.readings, cfg.mus),
        "agarwal_singh_settings": R.settings_table(s.table, cfg.readings, cfg.mus),
        "covid_verdicts": V.verdict_table(rep.verdicts),
    }
    if rep.sweep:
        out["covid_dynamics"] = [p.as_row() for p in rep.sweep]
    if rep.real is not None:
        out["covid_real_extract"] = table(rep.real)
    return out


def figures(s: CovidStudy, rep: Report) -> dict:
    cfg = s.config
    out = {
        "covid_readings": F.readings_figure(
            rep.rows, cfg.readings, list(s.table), cfg.mus, cfg.data_kind,
            ("The COVID table" if cfg.data_kind.lower().startswith("real")
             else "The hospital table (synthetic stand-in)")
            + f" of {F.PAPER_TITLE} under each privacy-unit reading (mean total gain)",
        ),
        "covid_cumulative_gain": F.curves_figure(s.table, cfg.readings[0], cfg.mus, cfg.data_kind),
        "covid_data": F.data_figure(s.table, cfg.data_kind),
    }
    if rep.sweep:
        out["covid_dynamics"] = F.dynamics_figure(
            rep.sweep, cfg.readings, cfg.mus, cfg.table_heterogeneity, cfg.sweep_state, STAND_IN
        )
    if s.real is not None:
        weeks = s.real.weeks
        out["covid_real_extract"] = F.readings_figure(
            rep.real, cfg.readings, list(s.real.states), cfg.mus,
            f"real HHS facility extract {s.real.path.name} ({weeks} weeks)",
            f"Real-data panel: only {weeks} weeks, so totals are <= {weeks} and "
            "not comparable with the paper's 148-week values",
            paper=False,
        )
    return out


def report(s: CovidStudy) -> ExperimentResult:
    """Tables, figures, summary and run.json extras of one study."""
    cfg = s.config
    rep = report_rows(s)
    info = "; ".join(r.data.source for r in s.table.values())
    if s.real is not None:
        info += f"; real-data panel: {s.real.path.name}"
    return ExperimentResult(
        tables=tables(s, rep),
        figures=figures(s, rep),
        summary=summary_text(s, rep),
        data=info,
        verdicts=tuple(rep.verdicts),
        extra={
            "states": list(cfg.states),
            "mu": list(cfg.mus),
            "data_kind": cfg.data_kind,
            "readings": [
                dataclasses.asdict(r) | {"title": r.title, "protects": r.protects()}
                for r in cfg.readings
            ],
            "meta_eta_at_inf": s.eta_inf,
            "real_panel": None if s.real is None else str(s.real.path),
        },
    )


__all__ = ["Report", "figures", "report", "report_rows", "summary_text", "sweep_lines", "tables"]
