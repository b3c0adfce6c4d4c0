"""``bandits-mba``: private epsilon-greedy on the MBA website test ("Privacy budgeting for online
experiments", Sec. 4.1).

Two arms with CTRs 0.324 (concrete wording) and 0.295 (abstract wording; Liberali & Ferecatu
2022), horizons T, experiment budgets gamma. Policies: constant and (capped) dynamic budget
strategies for every gamma, and the benchmarks non-private epsilon-greedy (same decay,
uncapped), Gittins index (discount 0.99, Beta(1, 1) priors), perfect information (clicks
~ Binomial(T, 0.324), exactly) and random play. Horizons up to ``exact_max_horizon`` run one
visitor per scan step; longer ones with the block-updated policy
(:mod:`ldpjax.bandits.batched`, block growth ``block_growth``; the Gittins benchmark always
runs per visitor). Both strategies start with the same uniform-play visits (``init_visits``;
the paper is silent on them).

Runs: ``--seeds`` per policy, raised to ``short_runs`` at horizons T <= ``short_horizon`` (cheap
there, and the constant strategy's lock-in tail needs them; the Gittins benchmark, which no
verdict reads, keeps ``--seeds``). All policies of one horizon share
their random numbers run by run (common random numbers), so the verdicts judge paired
differences with the SE of the per-run differences. At horizons T >= ``diagnostic_min_horizon``
the constant strategy also runs at the ``diagnostic_gamma`` budgets beyond the paper's grid
(rows labelled ``grid = diagnostic``; the verdicts judge the paper's grid and quote them).

Tables: ``mba`` per (T, policy, gamma): mean/sd/SE of regret and clicks, the fraction of runs
locked in (final greedy arm not the best), the realised experiment budget max_t xi_t (parallel
composition); ``mba_bounds`` the regret bounds (eqs. 15 and 18, appendix constants) of the
constant and dynamic rows only (no row where a bound does not apply); ``mba_paired`` the
paired differences behind the verdicts. An empty cell means "not applicable", NaN a failed
computation. Figure: regret (log) and clicks vs gamma, one column per T, and the bounds on
their own axes in a third row.

Study, then report: :func:`study` runs the simulations and returns an :class:`MbaStudy` (per-run
arrays of every policy, the regret bounds and the validated configuration); :func:`report`
makes the tables, verdicts, figure and summary from it alone, without random numbers or JAX.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import numpy as np

from ldpjax import bandits
from ldpjax_experiments import bandits_simulation as sim
from ldpjax_experiments.bandits_simulation import PolicyRuns
from ldpjax_experiments.base import Experiment, ExperimentResult, Option, RunContext, floats, ints
from ldpjax_experiments.plotting import (
    LINESTYLES,
    MARKERS,
    PALETTE,
    caption,
    figure,
    figure_legend,
    fit_ylim,
    mean_bars,
    se_note,
)
from ldpjax_experiments.verdicts import judge_condition, summary_lines, with_data

NAME = "bandits-mba"


def _se(x: np.ndarray) -> float:
    return float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else 0.0


class MbaStudy(NamedTuple):
    """What the study measured and the validated configuration the report reads.

    Attributes:
      cells: every policy's runs, in table order: per horizon the epsilon-greedy grid
        (constant and dynamic at every paper gamma, non-private, random, then the diagnostic
        constant budgets), the Gittins index where run, perfect information.
      ctr: the two arms' CTRs.
      gammas: the paper's experiment budgets, ascending (the largest is the one the verdicts
        judge).
      horizons: the horizons T, in run order.
      runs_per: T -> runs per policy of the grid at T.
      diagnostics: T -> the diagnostic constant budgets run at T (beyond the paper's grid).
      diagnostic_min_horizon: the smallest T that runs the diagnostic budgets.
      t_gamma: the visitor from which the capped dynamic schedule binds at the largest gamma
        (eq. 17) for K = len(ctr) arms.
      init_visits: uniform-play visits that start both strategies (None: K).
      block_growth: block size growth rate of the block-updated policy (as configured).
      exact_max_horizon: largest T simulated one visitor per step (as configured).
      seeds: ``--seeds``: runs per policy where T > ``short_horizon`` and of the Gittins index.
      data_label: what the verdicts were judged on (``real extract``: the reported CTRs of
        the real RCT drive simulated clicks).
      data_text: the data in words.
    """

    cells: tuple[PolicyRuns, ...]
    ctr: tuple[float, ...]
    gammas: tuple[float, ...]
    horizons: tuple[int, ...]
    runs_per: dict[int, int]
    diagnostics: dict[int, tuple[float, ...]]
    diagnostic_min_horizon: int
    t_gamma: float
    init_visits: int | None
    block_growth: float
    exact_max_horizon: int
    seeds: int
    data_label: str
    data_text: str


def _cells_for(result: sim.GridResult, horizon: int, how: str, arms: int) -> list[PolicyRuns]:
    """One :class:`PolicyRuns` per configuration of ``result``, with the bounds of the
    constant and dynamic ones; checks that no run spends more than its budget."""
    cells = []
    for i, label in enumerate(result.labels):
        spend = result.spend[i]
        bound, bound_simple = sim.checked_bounds(label.policy, label.gamma, spend, arms, horizon)
        cells.append(PolicyRuns(arms, horizon, label.policy, label.gamma, result.regret[i],
                                result.clicks[i], spend, result.locked[i], how, bound,
                                bound_simple))
    return cells


def _row(cell: PolicyRuns, gammas) -> dict:
    regret, clicks = cell.regret, cell.clicks
    diagnostic = cell.policy == "constant" and cell.gamma not in gammas
    return {
        "T": cell.T,
        "policy": cell.policy,
        "gamma": cell.gamma,
        "grid": "diagnostic" if diagnostic else "paper",
        "runs": int(regret.size),
        "regret_mean": float(regret.mean()),
        "regret_sd": float(regret.std()),
        "regret_se": _se(regret),
        "clicks_mean": float(clicks.mean()),
        "clicks_sd": float(clicks.std()),
        "clicks_se": _se(clicks),
        "clicks_q25": float(np.quantile(clicks, 0.25)),
        "clicks_q75": float(np.quantile(clicks, 0.75)),
        "locked_in": float(cell.locked.mean()),
        "spend_max": float(cell.spend.max()),
        "simulation": cell.simulation,
    }


def _bound_rows(cells, rows: list[dict]) -> list[dict]:
    out = []
    for c, r in zip(cells, rows, strict=True):
        if r["policy"] not in ("constant", "dynamic"):
            continue
        out.append({"T": r["T"], "policy": r["policy"], "gamma": r["gamma"], "grid": r["grid"],
                    "regret_mean": r["regret_mean"], "bound": c.bound,
                    "bound_simple": c.bound_simple,
                    "regret_over_bound": r["regret_mean"] / c.bound})
    return out


def runs_at(horizon: int, seeds: int, short_runs: int, short_horizon: int) -> int:
    """Runs per policy at ``horizon``: ``seeds``, raised to ``short_runs`` where T <=
    ``short_horizon``."""
    return max(int(seeds), int(short_runs)) if horizon <= short_horizon else int(seeds)


def study(ctx: RunContext) -> MbaStudy:
    """Simulate every policy at every horizon (the grid's policies paired run by run)."""
    cfg = ctx.config
    ctr = tuple(cfg["ctr"])
    gammas = tuple(cfg["gamma"])
    horizons = tuple(int(t) for t in cfg["horizons"])
    for t in horizons:
        bandits.environment.validate_horizon(t)
    init_visits = sim.parse_init_visits(cfg["init_visits"])
    init_steps, init_constant = sim.init_config(init_visits)
    env = bandits.make_environment(list(ctr))
    arms = len(ctr)
    cells: list[PolicyRuns] = []
    runs_per: dict[int, int] = {}
    diagnostics: dict[int, tuple[float, ...]] = {}
    for horizon in horizons:
        runs = runs_at(horizon, ctx.num_seeds, cfg["short_runs"], cfg["short_horizon"])
        runs_per[horizon] = runs
        simulate = functools.partial(ctx.simulate, num_seeds=runs)
        params, labels = sim.epsilon_greedy_grid(env, gammas)
        diag = ()
        if horizon >= int(cfg["diagnostic_min_horizon"]):
            diag = tuple(float(g) for g in cfg["diagnostic_gamma"] if float(g) not in gammas)
        if diag:  # extra constant budgets beyond the paper's grid, in the same grid (paired)
            extra, extra_labels = sim.epsilon_greedy_grid(env, diag, strategies=("constant",),
                                                          nonprivate=False, random=False)
            params = jax.tree_util.tree_map(lambda a, b: np.concatenate([a, b]), params, extra)
            labels = labels + extra_labels
        diagnostics[horizon] = diag
        exact = horizon <= int(cfg["exact_max_horizon"])
        how = "per-visitor" if exact else f"blocks (growth {cfg['block_growth']})"
        ctx.log(f"T={horizon}: epsilon-greedy grid ({len(labels)} policies x {runs} runs), {how}")
        grid = sim.run_epsilon_greedy_grid(simulate, params, labels, horizon, exact=exact,
                                           growth=float(cfg["block_growth"]),
                                           label=f"grid-T{horizon}", init_steps=init_steps,
                                           init_constant=init_constant)
        cells += _cells_for(grid, horizon, how, arms)
        if cfg["gittins"]:
            ctx.log(f"T={horizon}: Gittins index")
            # a benchmark only (no verdict reads it): --seeds runs at every horizon
            git = sim.run_gittins(ctx.simulate, env, horizon, discount=float(cfg["discount"]),
                                  max_count=int(cfg["gittins_table"]), label=f"gittins-T{horizon}")
            cells += _cells_for(git, horizon, "per-visitor", arms)
        oracle = sim.oracle_clicks(ctx.key_for(f"oracle-T{horizon}"), env, horizon, runs)
        cells += _cells_for(oracle, horizon, "exact binomial", arms)
    return MbaStudy(
        cells=tuple(cells), ctr=ctr, gammas=gammas, horizons=horizons, runs_per=runs_per,
        diagnostics=diagnostics, diagnostic_min_horizon=int(cfg["diagnostic_min_horizon"]),
        t_gamma=float(bandits.budget_exhaustion_time(gammas[-1], arms)),
        init_visits=init_visits, block_growth=cfg["block_growth"],
        exact_max_horizon=cfg["exact_max_horizon"], seeds=int(ctx.num_seeds),
        # the paper's reported CTRs of the real RCT drive simulated clicks
        data_label="real extract",
        data_text=(f"MBA website RCT CTRs {ctr} (Liberali & Ferecatu 2022, as reported in the "
                   "paper); no data file needed"))


def report(s: MbaStudy) -> ExperimentResult:
    """Tables, verdicts, figure and summary of a study (pure: reads only ``s``)."""
    ctr, gammas, horizons, runs_per, diagnostics = (s.ctr, s.gammas, s.horizons, s.runs_per,
                                                    s.diagnostics)
    arms = len(ctr)
    rows = [_row(c, gammas) for c in s.cells]
    bound_rows = _bound_rows(s.cells, rows)
    regrets: dict[int, dict[tuple[str, float], np.ndarray]] = {}
    for c in s.cells:
        regrets.setdefault(c.T, {})[(c.policy, c.gamma)] = c.regret
    numbers = paired_numbers(regrets, horizons, gammas, diagnostics)
    verdicts = with_data(verdicts_from(numbers, horizons, gammas, bound_rows, rows, arms,
                                       t_gamma=s.t_gamma), s.data_label)
    fig = _figure(rows, bound_rows, horizons, gammas, ctr, runs_per)
    runs_text = ", ".join(f"{runs_per[h]} at T={h:,}" for h in horizons)
    summary = (f"Private epsilon-greedy on the MBA test (CTRs {ctr[0]}/{ctr[1]}; "
               f"{sim.PAPER_TITLE}, Sec. 4.1): runs per policy {runs_text}; T in "
               f"{list(horizons)}, gamma in {list(gammas)}"
               + (f" (+ diagnostic constant gamma {sorted(set().union(*diagnostics.values()))}"
                  f" at T >= {s.diagnostic_min_horizon:,})"
                  if any(diagnostics.values()) else "")
               + f"; {sim.init_text(s.init_visits)}.\n" + _lockin_line(rows, horizons, gammas)
               + "\n" + summary_lines(verdicts))
    return ExperimentResult(
        tables={"mba": rows, "mba_bounds": bound_rows, "mba_paired": numbers["table"]},
        figures={"mba_regret_clicks": fig},
        summary=summary,
        data=s.data_text,
        extra={"block_growth": s.block_growth, "exact_max_horizon": s.exact_max_horizon,
               "runs_per_horizon": {str(h): runs_per[h] for h in horizons},
               "init_visits": "K" if s.init_visits is None else s.init_visits},
        verdicts=verdicts,
    )


def run(ctx: RunContext) -> ExperimentResult:
    return report(study(ctx))


def _lockin_line(rows, horizons, gammas) -> str:
    """Summary line: how often each strategy ends locked in at the largest paper gamma."""
    top = gammas[-1]
    parts = []
    for policy in ("constant", "dynamic"):
        cells = [next(r for r in rows if r["T"] == h and r["policy"] == policy
                      and r["gamma"] == top) for h in horizons]
        parts.append(f"{policy} " + ", ".join(
            f"{100 * c['locked_in']:.1f}% (T={sim.horizon_text(c['T'])})" for c in cells))
    return (f"Lock-in at gamma={top:g} (runs whose final greedy arm is not the best arm): "
            + "; ".join(parts) + ".")


# --------------------------------------------------------------------------- verdicts
def paired_numbers(study, horizons, gammas, diagnostics=None) -> dict:
    """The paired differences behind the verdicts (pure function of the per-run regrets).

    ``study[T][(policy, gamma)]`` is the (runs,) regret of one policy at horizon T (all
    policies of a horizon paired run by run).
    """
    diagnostics = diagnostics or {}
    top = gammas[-1]
    approach, peaks, advantage, diag_means, table = {}, {}, {}, {}, []
    for horizon in horizons:
        cell = study[horizon]
        dyn, nonpriv = cell[("dynamic", top)], cell[("nonprivate", math.inf)]
        const = np.stack([cell[("constant", g)] for g in gammas])
        approach[horizon] = sim.paired(dyn, nonpriv)
        peaks[horizon] = sim.constant_peak(const, gammas)
        advantage[horizon] = sim.paired(cell[("constant", top)], dyn)
        diag_means[horizon] = {g: float(np.mean(cell[("constant", g)]))
                               for g in diagnostics.get(horizon, ())}
        p = peaks[horizon]
        if p["cell"] == "edge" and len(gammas) > 1:  # still falling: show the last step
            peak_row = (f"constant at gamma={top:g} - constant at gamma={gammas[-2]:g} (best "
                        "gamma at the top of the grid)", p["last_step"])
        else:
            peak_row = (f"constant at gamma={top:g} - constant at its best gamma="
                        f"{p['best_gamma']:g}", (p["rise"], p["rise_se"]))
        for comparison, (mean, se) in (
                (f"dynamic - nonprivate at gamma={top:g}", approach[horizon]), peak_row,
                (f"constant - dynamic at gamma={top:g}", advantage[horizon])):
            table.append({"T": horizon, "comparison": comparison, "mean_difference": mean,
                          "paired_se": se, "runs": int(dyn.size)})
    return {"approach": approach, "peaks": peaks, "advantage": advantage,
            "diagnostic_means": diag_means, "table": table}


def approach_verdict(approach: dict, gamma: float, arms: int = 2, name: str = NAME, *,
                     t_gamma: float | None = None):
    """Dynamic at the largest gamma approaches non-private epsilon-greedy: at every T the
    paired difference of their regrets is within 2 SE. ``t_gamma``: the visitor from which the
    cap binds (eq. 17; computed from ``gamma`` and ``arms`` where not given)."""
    far = {h: d for h, d in approach.items() if abs(d[0]) > sim.SE_RULE * d[1]}
    if t_gamma is None:
        t_gamma = float(bandits.budget_exhaustion_time(gamma, arms))
    binds = (f"; the cap binds from t_gamma = {t_gamma:.3g} on, "
             + ("after every horizon, so the two runs coincide"
                if t_gamma >= max(approach) else "inside the longer horizons"))
    close = len(approach) - len(far)
    reason = ""
    if far:
        reason = "; ".join(
            f"at T={sim.horizon_text(h)} dynamic's regret differs from the non-private one by "
            f"{sim.fmt(m)} (2 paired SE = {sim.fmt(2 * s)})" for h, (m, s) in far.items()) + "."
        reason = reason[0].upper() + reason[1:]
    return judge_condition(
        name, f"dynamic at gamma={gamma:g} approaches non-private epsilon-greedy",
        not far, partly=close > 0, ours=close / len(approach), paper=1.0,
        tolerance_note="fraction of horizons T where the paired regret difference is within "
        "2 SE" + binds, reason=reason)


def peak_verdict(peaks: dict, gammas, diagnostic_means: dict | None = None, name: str = NAME):
    """The constant strategy's regret is smallest at a middle gamma (then rises): per T, the
    best gamma is inside the grid and R(top gamma) - R(best) > 2 paired SE."""
    diagnostic_means = diagnostic_means or {}
    top = gammas[-1]
    ok = [h for h, p in peaks.items() if p["cell"] == "peak"]
    problems = []
    for h, p in peaks.items():
        where = f"at T={sim.horizon_text(h)}"
        if p["cell"] == "unresolved":
            problems.append(
                f"{where} the rise from gamma={p['best_gamma']:g} "
                f"({sim.fmt(p['means'][p['best']])}) to {top:g} ({sim.fmt(p['means'][-1])}) is "
                f"{sim.fmt(p['rise'])}, within 2 paired SE ({sim.fmt(2 * p['rise_se'])}) of "
                f"{p['runs']} runs (the lock-in tail of gamma={top:g} needs more)")
        elif p["cell"] == "edge":
            text = (f"{where} the regret still falls at the grid's top gamma={top:g} "
                    f"({sim.fmt(p['means'][-1])}; {sim.fmt(p['means'][-2])} at {gammas[-2]:g})"
                    if len(gammas) > 1 else f"{where} the grid has a single gamma")
            diag = diagnostic_means.get(h) or {}
            if diag:
                beyond = ", ".join(f"{sim.fmt(m)} at {g:g}" for g, m in sorted(diag.items()))
                rises = min(diag.values()) > p["means"][-1]
                text += (f", and rises beyond it (diagnostic: {beyond}), so its minimum is at "
                         f"the top of the paper's grid" if rises else
                         f", and keeps falling beyond it (diagnostic: {beyond})")
            problems.append(text)
    reason = ""
    if problems:
        reason = "; ".join(problems) + "."
        reason = reason[0].upper() + reason[1:]
    note = "; ".join(
        f"T={sim.horizon_text(h)}: best gamma {p['best_gamma']:g}, "
        + (f"rise to {top:g} {sim.fmt(p['rise'])} +- {sim.fmt(2 * p['rise_se'])}"
           if p["cell"] != "edge" else "still falling at the top")
        for h, p in peaks.items())
    inside = all(p["cell"] != "edge" for p in peaks.values())
    return judge_condition(
        name, "constant strategy's regret is smallest at a middle gamma", len(ok) == len(peaks),
        partly=bool(ok) or inside, ours=len(ok) / len(peaks), paper=1.0,
        tolerance_note="fraction of T where the best gamma is inside the grid and R(top) - "
        "R(best) > 2 paired SE (partly: some T, or the best gamma is inside the grid at every "
        f"T; {note})", reason=reason)


def advantage_verdict(advantage: dict, gamma: float, arms: int, name: str = NAME):
    """The dynamic strategy's advantage (absolute: R_const - R_dyn at the largest gamma, paired
    within a horizon) grows with T: every step to the next horizon by > 2 SE (independent
    horizons). ``partly`` if it grows at some step."""
    horizons = list(advantage)
    steps = sim.grows([advantage[h] for h in horizons])
    up = sum(s is True for s in steps)
    values = ", ".join(f"{sim.fmt(m)} +- {sim.fmt(2 * s)} (T={sim.horizon_text(h)})"
                       for h, (m, s) in advantage.items())
    problems = []
    eps_gamma = arms / (arms + math.exp(gamma) - 1)
    for (a, b), step in zip(zip(horizons[:-1], horizons[1:], strict=True), steps, strict=True):
        ma, mb = advantage[a][0], advantage[b][0]
        if step is True:
            continue
        if step is False:
            text = (f"the advantage falls from {sim.fmt(ma)} at T={sim.horizon_text(a)} to "
                    f"{sim.fmt(mb)} at T={sim.horizon_text(b)}")
            eps_dyn = max((arms * math.log(b) / b) ** (1 / 3), eps_gamma)
            if eps_dyn > eps_gamma:
                text += (f": the constant strategy's fixed eps = {eps_gamma:.4f} explores less "
                         f"than the dynamic decay still does at T={sim.horizon_text(b)} (eps = "
                         f"{eps_dyn:.4f})")
        else:
            se = math.hypot(advantage[a][1], advantage[b][1])
            text = (f"the change from T={sim.horizon_text(a)} to {sim.horizon_text(b)} "
                    f"({sim.fmt(mb - ma)}) is within 2 SE ({sim.fmt(2 * se)})")
        problems.append(text)
    reason = ""
    if problems:
        reason = "; ".join(problems) + "."
        reason = reason[0].upper() + reason[1:]
    means = [advantage[h][0] for h in horizons]
    direction = not any(s is False for s in steps) and all(
        b > a for a, b in zip(means[:-1], means[1:], strict=True))
    return judge_condition(
        name, "the dynamic strategy's advantage over constant grows with T",
        bool(steps) and up == len(steps), partly=up > 0 or direction,
        ours=up / max(len(steps), 1), paper=1.0,
        tolerance_note=f"fraction of steps in T where R_const - R_dyn at gamma={gamma:g} grows "
        "by > 2 SE (partly: some step, or the point estimates grow at every step); per T "
        f"(paired, +- 2 SE): {values}", reason=reason)


def verdicts_from(numbers, horizons, gammas, bound_rows, rows, arms, *,
                  t_gamma: float | None = None):
    """Sec. 4.1 of the paper (MBA website test) and its bounds (eqs. 15, 18); ``t_gamma`` as
    in :func:`approach_verdict`."""
    top = gammas[-1]
    out = [approach_verdict(numbers["approach"], top, arms, t_gamma=t_gamma),
           peak_verdict(numbers["peaks"], gammas, numbers["diagnostic_means"])]
    if len(horizons) >= 2:
        out.append(advantage_verdict(numbers["advantage"], top, arms))
    worst = max(r["regret_over_bound"] for r in bound_rows)
    out.append(judge_condition(
        NAME, "mean regret <= the regret bounds (eqs. 15, 18, appendix constants)",
        worst <= 1.0, ours=worst, paper=1.0,
        reference="bound",
        tolerance_note="largest mean regret / its bound over (T, strategy, gamma), unitless; "
        "must be <= 1",
        reason=f"The mean regret exceeds its bound (ratio {worst:.3g})."))
    budgeted = [r for r in rows if r["policy"] in ("constant", "dynamic")]
    ratio = max((r["spend_max"] / r["gamma"] for r in budgeted if r["gamma"] > 0), default=0.0)
    out.append(judge_condition(
        NAME, "every run's experiment budget max_t xi_t <= gamma (parallel composition)",
        all(r["spend_max"] <= r["gamma"] * (1 + 1e-6) for r in budgeted), ours=ratio, paper=1.0,
        reference="budget", kind="self-check",
        tolerance_note="largest realised per-visitor spend max_t xi_t / gamma over runs, "
        "unitless; must be <= 1",
        reason=f"A run spent {ratio:.6g} x its budget."))
    return out


# --------------------------------------------------------------------------- figure


def _figure(rows, bound_rows, horizons, gammas, ctr, runs_per):
    fig, axes = figure(len(horizons), 3, width=4.0, height=3.0)
    styles = {"nonprivate": ":", "gittins": "-.", "random": "--", "oracle": (0, (5, 1))}
    for j, horizon in enumerate(horizons):
        sub = [r for r in rows if r["T"] == horizon]
        grid = sorted({float(r["gamma"]) for r in sub if 0 < r["gamma"] < math.inf})
        right = max(grid) * 1.35  # where the no-budget benchmarks' SE bars stand
        left_edge = min(grid) / 1.15
        for row_i, (metric, se_key) in enumerate((("regret_mean", "regret_se"),
                                                 ("clicks_mean", "clicks_se"))):
            ax = axes[row_i, j]
            log = metric == "regret_mean"
            values = []
            for n, policy in enumerate(("constant", "dynamic")):
                pts = sorted((r["gamma"], r[metric], r[se_key]) for r in sub
                             if r["policy"] == policy and r["grid"] == "paper")
                g, m, e = (np.array(x, dtype=float) for x in zip(*pts, strict=True))
                offset = 1.06 if n else 1 / 1.06
                _, lo, hi = mean_bars(ax, g * offset, m, e, label=policy, color=PALETTE[n],
                                      marker=MARKERS[n], ls=LINESTYLES[n], log=log)
                values += [lo, hi]
            diag = sorted((r["gamma"], r[metric], r[se_key]) for r in sub
                          if r["grid"] == "diagnostic")
            if diag:
                g, m, e = (np.array(x, dtype=float) for x in zip(*diag, strict=True))
                _, lo, hi = mean_bars(ax, g, m, e, color=PALETTE[0], marker=MARKERS[0],
                                      ls="none", log=log, markerfacecolor="white",
                                      label="constant, gamma beyond the paper's grid "
                                      "(diagnostic)")
                values += [lo, hi]
            for color, policy in zip(PALETTE[2:], styles, strict=False):
                val = [r for r in sub if r["policy"] == policy]
                if not val or (log and val[0][metric] <= 0):
                    continue  # the oracle's regret is 0: no place on a log axis
                v, e = val[0][metric], val[0][se_key]
                ax.axhline(v, color=color, ls=styles[policy], lw=1.2, label=f"{policy} (no budget)")
                # its +-SE bar at the right edge (a band across the panel would cover most of a
                # log axis when the benchmark has few runs)
                x_bar = right * 1.08 ** list(styles).index(policy)  # side by side
                _, lo, hi = mean_bars(ax, [x_bar], [v], [e], label=f"_{policy} SE", color=color,
                                      marker="_", ls="none", log=log)
                values += [[v], lo, hi]
            sim.gamma_axis(ax, list(gammas) + [d[0] for d in diag])
            ax.set_xlim(left_edge, right * 1.08 ** len(styles) * 1.05)
            if log:
                ax.set_yscale("log")
            fit_ylim(ax, values, log=log)
            ax.set_xlabel("experiment budget gamma")
            ax.set_ylabel("mean regret (log)" if log else "mean clicks")
            ax.set_title(f"T = {horizon:,}: {'regret' if log else 'clicks'} "
                         f"({runs_per[horizon]} runs)")
        bx = axes[2, j]
        values = []
        for n, policy in enumerate(("constant", "dynamic")):
            pts = sorted((r["gamma"], r["bound"]) for r in bound_rows
                         if r["T"] == horizon and r["policy"] == policy and r["grid"] == "paper")
            g, b = (np.array(x, dtype=float) for x in zip(*pts, strict=True))
            bx.plot(g, b, ls=LINESTYLES[n], marker="x", color=PALETTE[n], lw=1.0,
                    label=f"{policy} bound (eq. {15 if n == 0 else 18})")
            values.append(b)
        sim.gamma_axis(bx, gammas)
        bx.set_xlim(left_edge, right * 1.08 ** len(styles) * 1.05)
        bx.set_yscale("log")
        fit_ylim(bx, values, log=True)
        bx.set_xlabel("experiment budget gamma")
        bx.set_ylabel("regret bound (log)")
        bx.set_title(f"T = {horizon:,}: regret bounds")
    worst = max(r["regret_over_bound"] for r in bound_rows)
    figure_legend(fig, axes)
    runs_text = ", ".join(f"{runs_per[h]} at T = {h:,}" for h in horizons)
    caption(fig, data=f"synthetic clicks from the MBA website RCT's reported CTRs {ctr} "
            "(Liberali & Ferecatu 2022; no data file)",
            unit="one visitor's segment, revealed through the shown arm (xi_t-DP per visitor; "
            "experiment budget gamma = max_t xi_t)",
            note=f"Means over runs ({runs_text}); {se_note()} No-budget benchmarks: horizontal "
            "lines, their error bars at the right edge. Constant and dynamic are offset "
            "slightly in gamma so both stay visible. Bottom row: the regret bounds on their "
            f"own axes (mean regret <= {worst:.2g} x bound everywhere). The paper reports these curves only as plots.",
            title=f"Private epsilon-greedy on the MBA website test ({sim.PAPER_TITLE}, "
            "Sec. 4.1)")
    return fig


EXPERIMENT = Experiment(
    name=NAME,
    description="Private epsilon-greedy on the MBA website test: regret/clicks vs gamma "
    f"({sim.PAPER_TITLE}, Sec. 4.1)",
    run=run,
    options=(
        Option("horizons", ints, (10_000, 100_000, 1_000_000), "horizons T (comma-separated)"),
        Option("gamma", floats, (0.05, 0.5, 1.0, 3.0, 5.0), "experiment budgets gamma"),
        Option("ctr", floats, (0.324, 0.295), "arm CTRs"),
        Option("exact_max_horizon", int, 100_000,
               "largest T simulated one visitor per step (longer: block-updated policy)"),
        Option("block_growth", float, 0.01, "block size growth rate of the block policy"),
        Option("gittins", int, 1, "include the Gittins-index benchmark (1/0)"),
        Option("discount", float, 0.99, "Gittins discount factor"),
        Option("gittins_table", int, 100, "Gittins table size (observations per arm)"),
        Option("init_visits", sim.parse_init_visits, "K", sim.INIT_VISITS_HELP),
        Option("short_runs", int, 0, "runs per policy at horizons T <= short_horizon (at least "
               "--seeds; cheap there, and the constant strategy's lock-in tail needs them)"),
        Option("short_horizon", int, 10_000, "largest T that gets short_runs runs"),
        Option("diagnostic_gamma", floats, (6.0, 7.0),
               "extra constant-strategy budgets beyond the paper's grid (labelled diagnostic)"),
        Option("diagnostic_min_horizon", int, 1_000_000,
               "smallest T that runs the diagnostic budgets"),
    ),
    sizes={"small": {"seeds": 50, "short_runs": 200},
           "paper": {"seeds": 1000, "exact_max_horizon": 1_000_000}},
    order=60,
    cost=46,
)


__all__ = [
    "EXPERIMENT",
    "NAME",
    "MbaStudy",
    "advantage_verdict",
    "approach_verdict",
    "paired_numbers",
    "peak_verdict",
    "report",
    "run",
    "runs_at",
    "study",
    "verdicts_from",
]
