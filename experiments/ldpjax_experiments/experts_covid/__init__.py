"""``experts-covid``: the COVID hospital table of *Prediction with Expert Advice under Local
Differential Privacy* (ICLR 2026), under each privacy unit, with verdicts.

Task (Sec. 6 of the paper): each week pick the hospital of a state that will
report the highest COVID inpatient density; the gain is the chosen hospital's true density.

**Privacy unit** (the neighbouring relation). A weekly release is a vector of n
hospital densities in [0, 1]. Two relations make sense and give very different noise:

* ``hospital``: neighbours differ in one hospital's weekly report (l2 sensitivity 1). Each
  hospital is a data holder -- the local model's natural unit. RW-Meta adds N(0, (1/mu)^2) per
  hospital; A&S's tree nodes get sd sqrt(L)/mu (Min Noise).
* ``vector``: neighbours differ in a state's whole weekly vector (sensitivity sqrt(n), our
  reading of the paper). RW-Meta adds N(0, (sqrt(n)/mu)^2); A&S nodes sd sqrt(n L)/mu.

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

**Verdicts** (:mod:`ldpjax_experiments.verdicts`), per reading: "RW-Meta beats both A&S
settings", its size "1.5-3x" (RW-Meta / best A&S in the paper's cells), "about 90% of the best
learner" and "negative static regret at low and medium privacy (mu = 1, 0.5)"; tolerances from
the standard errors (see :mod:`.verdicts`).

**Data**: ``--data PATH`` runs the table on a real HHS facility file (the full 148-week series:
healthdata.gov ``anag-cw7u``). Otherwise the table uses the documented synthetic stand-in
(:func:`ldpjax.experts.covid.synthetic_covid`) and, when the shared data folder
(``--data-dir``, default ``<repo>/../shared/data``) holds an HHS facility extract, a labelled
real-data panel is added on it (5 weeks in this project: it shows the real density scale and
what each privacy unit's noise does to it, not tracking over waves or the 148-week totals).

**Layout**: :mod:`.readings` (privacy units), :mod:`.stats` (ratios and their SEs),
:mod:`.study` (``study(config, key)`` -> a :class:`~.study.CovidStudy` of labelled arrays),
:mod:`.rows` (typed table rows), :mod:`.verdicts`, :mod:`.figures` and :mod:`.report` (tables,
verdicts, figures and summary: pure functions of the study). ``run`` = study + report.
"""

from __future__ import annotations

import math
import types
from collections.abc import Mapping, Sequence
from typing import Any

from ldpjax_experiments import verdicts as V
from ldpjax_experiments.base import Experiment, ExperimentResult, Option, RunContext, floats, strs
from ldpjax_experiments.experts_covid.figures import PAPER_TITLE
from ldpjax_experiments.experts_covid.readings import (
    MIXED_NOTE,
    READINGS,
    UNIT_PROTECTS,
    UNITS_CAPTION,
    Reading,
    readings_from,
    sensitivity,
    sensitivity_text,
    unit_text,
)
from ldpjax_experiments.experts_covid.report import report
from ldpjax_experiments.experts_covid.rows import PAPER, SE_WIN, SummaryRow, inf_text
from ldpjax_experiments.experts_covid.stats import break_even, ratio_independent, ratio_paired
from ldpjax_experiments.experts_covid.study import (
    GAIN_RECORD,
    META_RECORD,
    Config,
    CovidStudy,
    StateStudy,
    meta_eta_at_inf,
    parse_config,
    study,
)
from ldpjax_experiments.experts_covid.verdicts import (
    LOW_MID_PRIVACY,
    NAME,
    PAPER_ROUNDING,
    judge_readings,
)
from ldpjax_experiments.kit import mean_se
from ldpjax.experts import covid

# The names the module had before it became a package (tests and notebooks import them).
_unit_text = unit_text
_sensitivity = sensitivity
_sens_text = sensitivity_text
_readings = readings_from
_mean_se = mean_se
_ratio_independent = ratio_independent
_ratio_paired = ratio_paired
_break_even = break_even
_inf_text = inf_text


def _verdicts(rows: Sequence[Any], readings: Sequence[Reading], runs: int) -> list[V.Verdict]:
    """:func:`~.verdicts.judge_readings` on summary rows given as records or as dicts."""
    records = [types.SimpleNamespace(**r) if isinstance(r, Mapping) else r for r in rows]
    return judge_readings(records, readings, runs)


def run(ctx: RunContext) -> ExperimentResult:
    """The experiment: parse the options, run the study with the run's key, report it."""
    config = parse_config(ctx.config, ctx.num_seeds)
    return report(study(config, ctx.key, simulate=ctx.simulate, log=ctx.log))


EXPERIMENT = Experiment(
    name=NAME,
    description=f"The COVID table of {PAPER_TITLE!r} under each privacy unit: RW-Meta vs "
    "Agarwal & Singh, best learner; dynamics sweep; verdicts",
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
    cost=39,
)


__all__ = [
    "EXPERIMENT",
    "GAIN_RECORD",
    "LOW_MID_PRIVACY",
    "META_RECORD",
    "MIXED_NOTE",
    "NAME",
    "PAPER",
    "PAPER_ROUNDING",
    "PAPER_TITLE",
    "READINGS",
    "SE_WIN",
    "UNITS_CAPTION",
    "UNIT_PROTECTS",
    "Config",
    "CovidStudy",
    "Reading",
    "StateStudy",
    "SummaryRow",
    "judge_readings",
    "meta_eta_at_inf",
    "parse_config",
    "report",
    "run",
    "study",
]
