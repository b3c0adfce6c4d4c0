"""``bandits-zozo``: private epsilon-greedy on ZOZOTOWN items ("Privacy budgeting for online
experiments", Sec. 4.2).

Arms are the K top items (K in ``arms``) of the Open Bandit Dataset sample by smoothed CTR
(:func:`ldpjax.datasets.load_obd`: empirical-Bayes Beta prior fitted to the 10,000-row sample;
the sample has far too few clicks for raw per-item CTRs, and the output says so). Without the
file a labelled synthetic stand-in is used (item CTRs log-uniform on [0.0012, 0.0078], the
full-data range of the paper). For every K and horizon T: constant and capped dynamic strategies
for every gamma, non-private epsilon-greedy and random play (all arm counts share one compiled
kernel: CTR rows are padded to the largest K), perfect information (clicks ~ Binomial(T, mu*)
exactly) and, with ``--gittins 1``, the Gittins index. Horizons up to ``exact_max_horizon``
run one visitor per step, longer ones with the block-updated policy. Both strategies start with
the same uniform-play visits (``init_visits``; the paper is silent on them).

All policies of one horizon share their random numbers run by run (common random numbers):
gains over random play and the verdicts' differences are paired per run, with the SE of the
per-run differences. The paper says the constant strategy's non-monotonicity weakens as K
grows, so its peak is judged at the smallest K and the drop past the peak must shrink with K.

Tables: ``zozo`` per (K, T, policy, gamma) with the fraction of runs locked in (final greedy
arm not a best arm); ``zozo_bounds`` the regret bounds of the constant and dynamic rows only
(no row where a bound does not apply); ``zozo_ctr`` the arms' CTRs. An empty cell means "not
applicable", NaN a failed computation.

Study, then report: :func:`study` runs the simulations and returns a :class:`ZozoStudy` (per-run
arrays of every policy, the regret bounds, the arms' CTRs, the data label and the validated
configuration); :func:`report` makes the tables, verdicts, figure and summary from it alone,
without random numbers or JAX.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import numpy as np

import ldpjax.datasets as datasets
from ldpjax import bandits
from ldpjax.bandits.data import top_items
from ldpjax_experiments import bandits_simulation as sim
from ldpjax_experiments.bandits_simulation import PolicyRuns
from ldpjax_experiments.base import Experiment, ExperimentResult, Option, RunContext, floats, ints
from ldpjax_experiments.plotting import (
    LINESTYLES,
    MARKERS,
    PALETTE,
    SE_MULT,
    caption,
    figure,
    figure_legend,
    fit_ylim,
    mean_bars,
    se_note,
)
from ldpjax_experiments.verdicts import judge_condition, summary_lines, with_data


def _load(ctx: RunContext):
    folder = sim.resolve_data_dir(ctx.config["data_dir"])
    if folder is not None and (folder / datasets.bandits.OBD_FILE).is_file():
        items = datasets.load_obd(folder)
        return items, f"{items.source}. {items.note}", True
    if ctx.config["data_dir"]:
        ctx.log(f"no OBD sample under {ctx.config['data_dir']!r}: using the synthetic stand-in")
    items = bandits.synthetic_obd(ctx.key_for("synthetic-obd"))
    return items, items.note, False


NAME = "bandits-zozo"


class ZozoStudy(NamedTuple):
    """What the study measured and the validated configuration the report reads.

    Attributes:
      cells: every policy's runs, in table order: per horizon the epsilon-greedy grid (per K:
        constant and dynamic at every gamma, non-private, random), then per K perfect
        information and, where run, the Gittins index.
      ctr: K -> the CTRs of the K arms (top items by smoothed CTR, descending).
      arm_counts: the numbers of top items K, as configured.
      horizons: the horizons T, in run order.
      gammas: the experiment budgets, ascending (the largest is the one the verdicts judge).
      init_visits: uniform-play visits that start both strategies (None: K).
      seeds: runs per policy.
      data_label: what the verdicts were judged on: ``real extract`` (the Open Bandit Dataset's
        public sample) or ``synthetic stand-in`` (file absent).
      data_text: the data in words (source and how the CTRs were made).
    """

    cells: tuple[PolicyRuns, ...]
    ctr: dict[int, tuple[float, ...]]
    arm_counts: tuple[int, ...]
    horizons: tuple[int, ...]
    gammas: tuple[float, ...]
    init_visits: int | None
    seeds: int
    data_label: str
    data_text: str

    @property
    def real(self) -> bool:
        """Whether the CTRs come from the real Open Bandit Dataset sample."""
        return self.data_label == "real extract"


def study(ctx: RunContext) -> ZozoStudy:
    """Simulate every policy for every K and horizon (the policies of one horizon paired run by
    run; all arm counts in one compiled grid, CTR rows padded to the largest K)."""
    cfg = ctx.config
    items, data_text, real = _load(ctx)
    ctx.log(data_text)
    arm_counts = tuple(int(k) for k in cfg["arms"])
    gammas = tuple(cfg["gamma"])
    init_visits = sim.parse_init_visits(cfg["init_visits"])
    init_steps, init_constant = sim.init_config(init_visits)
    k_max = max(arm_counts)
    envs, labels_all, params_all = {}, [], []
    for k in arm_counts:
        ctr = np.zeros(k_max)
        ctr[:k] = top_items(items, k)
        envs[k] = bandits.make_environment(ctr, num_arms=k)
        params, labels = sim.epsilon_greedy_grid(envs[k], gammas)
        params_all.append(params)
        labels_all += [(k, lab) for lab in labels]
    stacked = jax.tree_util.tree_map(lambda *x: np.concatenate(x), *params_all)
    cells: list[PolicyRuns] = []
    for horizon in (int(t) for t in cfg["horizons"]):
        exact = horizon <= int(cfg["exact_max_horizon"])
        how = "per-visitor" if exact else f"blocks (growth {cfg['block_growth']})"
        ctx.log(f"T={horizon}: {len(labels_all)} policies, {how}")
        grid = sim.run_epsilon_greedy_grid(
            ctx.simulate, stacked, [lab for _, lab in labels_all], horizon, exact=exact,
            growth=float(cfg["block_growth"]), max_arms=k_max, label=f"zozo-T{horizon}",
            init_steps=init_steps, init_constant=init_constant)
        extra = []
        for k in arm_counts:
            extra.append((k, sim.oracle_clicks(ctx.key_for(f"oracle-{k}-{horizon}"), envs[k],
                                               horizon, ctx.num_seeds)))
            if cfg["gittins"]:
                extra.append((k, sim.run_gittins(
                    ctx.simulate, envs[k], horizon, discount=float(cfg["discount"]),
                    max_count=int(cfg["gittins_table"]), max_arms=k_max,
                    label=f"gittins-{k}-T{horizon}")))
        entries = [(k, lab, grid.regret[i], grid.clicks[i], grid.spend[i], grid.locked[i], how)
                   for i, (k, lab) in enumerate(labels_all)]
        for k, res in extra:
            locked = res.locked[0] if res.locked is not None else np.zeros_like(res.regret[0])
            entries.append((k, res.labels[0], res.regret[0], res.clicks[0], res.spend[0], locked,
                            "per-visitor" if res.labels[0].policy == "gittins"
                            else "exact binomial"))
        for k, lab, regret, clicks, spend, locked, kind in entries:
            bound, _ = sim.checked_bounds(lab.policy, lab.gamma, spend, k, horizon)
            cells.append(PolicyRuns(k, horizon, lab.policy, lab.gamma, regret, clicks, spend,
                                    locked, kind, bound))
    return ZozoStudy(
        cells=tuple(cells),
        ctr={k: tuple(float(envs[k].ctr[0, i]) for i in range(k)) for k in arm_counts},
        arm_counts=arm_counts, horizons=tuple(int(t) for t in cfg["horizons"]), gammas=gammas,
        init_visits=init_visits, seeds=int(ctx.num_seeds),
        # the OBD file is the dataset's public sample (10,000 rows per policy and campaign)
        data_label="real extract" if real else "synthetic stand-in", data_text=data_text)


def report(s: ZozoStudy) -> ExperimentResult:
    """Tables, verdicts, figure and summary of a study (pure: reads only ``s``)."""
    arm_counts, gammas, horizons, real = s.arm_counts, s.gammas, s.horizons, s.real
    rows: list[dict] = []
    regrets: dict[tuple[int, int], dict[tuple[str, float], np.ndarray]] = {}
    for c in s.cells:
        regret, clicks = c.regret, c.clicks
        regrets.setdefault((c.K, c.T), {})[(c.policy, c.gamma)] = regret
        rows.append({"K": c.K, "T": c.T, "policy": c.policy, "gamma": c.gamma,
                     "regret_mean": float(regret.mean()), "regret_sd": float(regret.std()),
                     "regret_se": float(regret.std(ddof=1) / math.sqrt(regret.size))
                     if regret.size > 1 else 0.0,
                     "clicks_mean": float(clicks.mean()), "clicks_sd": float(clicks.std()),
                     "locked_in": float(np.mean(c.locked)),
                     "spend_max": float(c.spend.max()), "simulation": c.simulation})
    # expected clicks gained over random play = regret(random) - regret(policy): the shows'
    # expected clicks, free of the Bernoulli noise of the realised clicks; paired per run (the
    # policies of one grid share their random numbers run by run; the oracle's regret is 0)
    for row in rows:
        cell = regrets[(row["K"], row["T"])]
        mean, se = sim.paired(cell[("random", 0.0)], cell[(row["policy"], row["gamma"])])
        row["expected_gain_over_random"], row["expected_gain_se"] = mean, se
    bound_rows = []
    for c, row in zip(s.cells, rows, strict=True):
        if row["policy"] in ("constant", "dynamic"):
            bound_rows.append({"K": row["K"], "T": row["T"], "policy": row["policy"],
                               "gamma": row["gamma"], "regret_mean": row["regret_mean"],
                               "bound": c.bound, "regret_over_bound": row["regret_mean"] / c.bound})
    ctr_rows = [{"K": k, "arm": i, "ctr": s.ctr[k][i]} for k in arm_counts for i in range(k)]
    data_caption = ("REAL Open Bandit Dataset sample (ZOZOTOWN), smoothed item CTRs" if real
                    else "SYNTHETIC stand-in for the Open Bandit Dataset (file absent): item CTRs "
                    "log-uniform on [0.0012, 0.0078]")
    fig = _figure(rows, arm_counts, horizons, data_caption, s.seeds, real)
    numbers = paired_numbers(regrets, arm_counts, horizons, gammas)
    verdicts = with_data(verdicts_from(numbers, rows, arm_counts, horizons, gammas, real),
                         s.data_label)
    top = gammas[-1]
    lock = "; ".join(
        f"K={k}: " + ", ".join(
            f"{p} {100 * next(r['locked_in'] for r in rows if r['K'] == k and r['T'] == h and r['policy'] == p and r['gamma'] == top):.0f}%"  # noqa: E501
            for p in ("constant", "dynamic"))
        for k in arm_counts for h in horizons[-1:])
    summary = (f"ZOZOTOWN top-K items ({sim.PAPER_TITLE}, Sec. 4.2), {s.seeds} runs per "
               f"policy, K in {list(arm_counts)}, T in {list(horizons)}; "
               f"{sim.init_text(s.init_visits)}. Data: {s.data_text}\n"
               f"Lock-in at gamma={top:g}, T={horizons[-1]:,} (runs whose final greedy arm is not "
               f"a best arm): {lock}.\n" + summary_lines(verdicts))
    return ExperimentResult(tables={"zozo": rows, "zozo_bounds": bound_rows,
                                    "zozo_paired": numbers["table"], "zozo_ctr": ctr_rows},
                            figures={"zozo_clicks": fig}, summary=summary, data=s.data_text,
                            verdicts=verdicts,
                            extra={"real_data": real,
                                   "init_visits": "K" if s.init_visits is None
                                   else s.init_visits})


def run(ctx: RunContext) -> ExperimentResult:
    return report(study(ctx))


def paired_numbers(study, arm_counts, horizons, gammas) -> dict:
    """Paired differences behind the verdicts; ``study[(K, T)][(policy, gamma)]`` is the
    (runs,) regret of one policy (paired run by run within a horizon)."""
    top = gammas[-1]
    approach, peaks, table = {}, {}, []
    for horizon in horizons:
        for k in arm_counts:
            cell = study[(k, horizon)]
            approach[(k, horizon)] = sim.paired(cell[("dynamic", top)],
                                                cell[("nonprivate", math.inf)])
            p = sim.constant_peak(np.stack([cell[("constant", g)] for g in gammas]), gammas)
            peaks[(k, horizon)] = p
            runs = int(cell[("dynamic", top)].size)
            table.append({"K": k, "T": horizon,
                          "comparison": f"dynamic - nonprivate regret at gamma={top:g}",
                          "mean_difference": approach[(k, horizon)][0],
                          "paired_se": approach[(k, horizon)][1], "runs": runs})
            table.append({"K": k, "T": horizon,
                          "comparison": f"constant regret at gamma={top:g} - at its best gamma="
                          f"{p['best_gamma']:g} (the drop in clicks past the peak)",
                          "mean_difference": p["rise"], "paired_se": p["rise_se"], "runs": runs})
    return {"approach": approach, "peaks": peaks, "table": table}


def peak_at_small_k_verdict(peaks: dict, k: int, horizons, gammas, why_data: str = "",
                            name: str = NAME):
    """Constant peaks at a middle gamma at the smallest K (where the paper says the
    non-monotonicity is strongest): per T, best gamma inside the grid and a drop in expected
    clicks to the top gamma > 2 paired SE."""
    top = gammas[-1]
    cells = {h: peaks[(k, h)] for h in horizons}
    ok = [h for h, p in cells.items() if p["cell"] == "peak"]
    problems = []
    for h, p in cells.items():
        where = f"at T={sim.horizon_text(h)}"
        if p["cell"] == "unresolved":
            problems.append(f"{where} the drop from gamma={p['best_gamma']:g} to {top:g} is "
                            f"{sim.fmt(p['rise'])} clicks, within 2 paired SE "
                            f"({sim.fmt(2 * p['rise_se'])}) of {p['runs']} runs")
        elif p["cell"] == "edge":
            problems.append(f"{where} the gain still rises at the grid's top gamma={top:g}")
    reason = ""
    if problems:
        reason = why_data + "; ".join(problems) + "."
        reason = reason[0].upper() + reason[1:]
    inside = all(p["cell"] != "edge" for p in cells.values())
    return judge_condition(
        name, f"constant strategy peaks at a middle gamma at K={k}", len(ok) == len(cells),
        partly=bool(ok) or inside, ours=len(ok) / len(cells), paper=1.0,
        tolerance_note=f"fraction of T (K={k}) where the best gamma is inside the grid and the "
        "drop to the top gamma > 2 paired SE (partly: some T, or the best gamma is inside the "
        "grid at every T)", reason=reason)


def drop_shrinks_verdict(peaks: dict, arm_counts, horizons, why_data: str = "",
                         name: str = NAME):
    """The constant strategy's non-monotonicity weakens as K grows: per T, the drop past the
    peak (0 where there is no interior peak) falls from the smallest to the largest K by > 2 SE
    and never rises significantly between consecutive K (independent SEs across K)."""
    def drop(k, h):
        p = peaks[(k, h)]
        return (0.0, 0.0) if p["cell"] == "edge" else (p["rise"], p["rise_se"])

    good, direction, problems, notes = 0, 0, [], []
    for h in horizons:
        seq = [drop(k, h) for k in arm_counts]
        notes.append(f"T={sim.horizon_text(h)}: " + ", ".join(
            f"K={k} {sim.fmt(m)}" for k, (m, _) in zip(arm_counts, seq, strict=True)))
        steps = sim.grows(seq)
        overall = sim.grows([seq[0], seq[-1]])[0]
        where = f"at T={sim.horizon_text(h)}"
        means = [m for m, _ in seq]
        # the direction holds: no significant rise, and the point estimates never rise
        direction += int(not any(s is True for s in steps) and means[0] > means[-1]
                         and all(b <= a for a, b in zip(means[:-1], means[1:], strict=True)))
        if any(s is True for s in steps):
            problems.append(f"{where} the drop rises with K ({notes[-1].split(': ', 1)[1]})")
        elif overall is False:
            good += 1
        elif seq[0][0] <= 0:
            problems.append(f"{where} there is no drop at K={arm_counts[0]} to shrink")
        else:
            se = math.hypot(seq[0][1], seq[-1][1])
            problems.append(f"{where} the drop goes from {sim.fmt(seq[0][0])} (K={arm_counts[0]})"
                            f" to {sim.fmt(seq[-1][0])} (K={arm_counts[-1]}), within 2 SE "
                            f"({sim.fmt(2 * se)})")
    reason = ""
    if problems:
        reason = why_data + "; ".join(problems) + "."
        reason = reason[0].upper() + reason[1:]
    return judge_condition(
        name, "constant strategy's drop past its peak shrinks as K grows",
        good == len(horizons), partly=good > 0 or direction == len(horizons),
        ours=good / len(horizons), paper=1.0,
        tolerance_note="fraction of T where the drop (clicks) falls from the smallest to the "
        "largest K by > 2 SE and never rises significantly (partly: some T, or the point "
        "estimates shrink at every T); " + "; ".join(notes),
        reason=reason)


def verdicts_from(numbers, rows, arm_counts, horizons, gammas, real):
    """Sec. 4.2 of the paper: the MBA findings carry over to ZOZOTOWN items (dynamic
    approaches non-private epsilon-greedy as gamma grows; constant peaks at a middle gamma,
    less so for larger K); every run stays within its experiment budget."""
    why_data = "" if real else "Synthetic stand-in CTRs, not the paper's items. "
    approach = numbers["approach"]
    far = {c: d for c, d in approach.items() if abs(d[0]) > sim.SE_RULE * d[1]}
    reason = ""
    if far:
        reason = why_data + "; ".join(
            f"at K={k}, T={sim.horizon_text(h)} the regrets differ by {sim.fmt(m)} (2 paired SE "
            f"= {sim.fmt(2 * s)})" for (k, h), (m, s) in far.items()) + "."
        reason = reason[0].upper() + reason[1:]
    out = [judge_condition(
        NAME, f"dynamic at the largest gamma={gammas[-1]:g} matches non-private epsilon-greedy",
        not far, partly=len(far) < len(approach), ours=1 - len(far) / len(approach), paper=1.0,
        tolerance_note="fraction of (K, T) cells whose paired regret difference is within 2 SE",
        reason=reason)]
    out.append(peak_at_small_k_verdict(numbers["peaks"], min(arm_counts), horizons, gammas,
                                       why_data))
    if len(arm_counts) >= 2:
        out.append(drop_shrinks_verdict(numbers["peaks"], sorted(arm_counts), horizons,
                                        why_data))
    budgeted = [r for r in rows if r["policy"] in ("constant", "dynamic")]
    ratio = max((r["spend_max"] / r["gamma"] for r in budgeted if r["gamma"] > 0), default=0.0)
    out.append(judge_condition(
        NAME, "every run's experiment budget max_t xi_t <= gamma (parallel composition)",
        all(r["spend_max"] <= r["gamma"] * (1 + 1e-6) for r in budgeted), ours=ratio,
        paper=1.0, reference="budget", kind="self-check",
        tolerance_note="largest realised per-visitor spend max_t xi_t / gamma over all runs, "
        "unitless; must be <= 1",
        reason=f"A run spent {ratio:.6g} x its budget."))
    return out


def _figure(rows, arm_counts, horizons, data_caption, seeds, real):
    fig, axes = figure(len(arm_counts), len(horizons), width=3.9, height=3.1)
    styles = {"nonprivate": ":", "gittins": "-.", "oracle": (0, (5, 1))}
    for i, horizon in enumerate(horizons):
        for j, k in enumerate(arm_counts):
            ax = axes[i, j]
            sub = [r for r in rows if r["K"] == k and r["T"] == horizon]
            values = []
            for n, policy in enumerate(("constant", "dynamic")):
                pts = sorted((r["gamma"], r["expected_gain_over_random"], r["expected_gain_se"])
                             for r in sub if r["policy"] == policy)
                g, m, e = (np.array(x) for x in zip(*pts, strict=True))
                mean_bars(ax, g * (1.06 if n else 1 / 1.06), m, e, label=policy,
                          color=PALETTE[n], marker=MARKERS[n], ls=LINESTYLES[n])
                values += [m - SE_MULT * e, m + SE_MULT * e]
            for color, policy in zip(PALETTE[2:], styles, strict=False):
                val = [r for r in sub if r["policy"] == policy]
                if val:
                    v, e = val[0]["expected_gain_over_random"], val[0]["expected_gain_se"]
                    ax.axhline(v, color=color, ls=styles[policy], lw=1.2,
                               label=f"{policy} (no budget)")
                    ax.axhspan(v - SE_MULT * e, v + SE_MULT * e, color=color, alpha=0.12, lw=0)
                    values += [[v - SE_MULT * e, v + SE_MULT * e]]
            ax.axhline(0, color="grey", lw=0.8)
            fit_ylim(ax, values + [[0.0]])
            sim.gamma_axis(ax, sorted({r["gamma"] for r in sub if r["policy"] == "constant"}))
            ax.set_xlabel("experiment budget gamma")
            ax.set_ylabel("expected clicks minus random")
            ax.set_title(f"K = {k}, T = {horizon:,}")
    figure_legend(fig, axes)
    caption(fig, data=data_caption, unit="one visitor's segment, revealed through the shown arm "
            "(xi_t-DP per visitor; experiment budget gamma = max_t xi_t)",
            note=f"Mean over {seeds} runs; {se_note()[:-1]} of the gain, paired with random "
            "play run by run. "
            "Constant and dynamic are offset slightly in gamma so both stay visible.",
            title=("Private epsilon-greedy on ZOZOTOWN top-K items" if real else
                   "Private epsilon-greedy on synthetic top-K items (Open Bandit stand-in)")
            + f" ({sim.PAPER_TITLE}, Sec. 4.2)")
    return fig


EXPERIMENT = Experiment(
    name=NAME,
    description="Private epsilon-greedy on ZOZOTOWN top-K items (Open Bandit Dataset sample; "
    f"{sim.PAPER_TITLE}, Sec. 4.2)",
    run=run,
    options=(
        Option("arms", ints, (2, 4, 8), "numbers of top items K (comma-separated)"),
        Option("horizons", ints, (100_000, 1_000_000), "horizons T"),
        Option("gamma", floats, (0.05, 0.5, 1.0, 3.0, 5.0), "experiment budgets gamma"),
        Option("data_dir", str, "", "shared data folder (default ../shared/data; absent: "
               "synthetic stand-in)"),
        Option("exact_max_horizon", int, 0,
               "largest T simulated one visitor per step (longer: block-updated policy)"),
        Option("block_growth", float, 0.01, "block size growth rate of the block policy"),
        Option("gittins", int, 0, "include the Gittins-index benchmark (1/0)"),
        Option("discount", float, 0.99, "Gittins discount factor"),
        Option("gittins_table", int, 100, "Gittins table size (observations per arm)"),
        Option("init_visits", sim.parse_init_visits, "K", sim.INIT_VISITS_HELP),
    ),
    sizes={"small": {"seeds": 20},
           "paper": {"seeds": 1000, "exact_max_horizon": 1_000_000, "gittins": 1}},
    order=61,
    cost=26,
)


__all__ = [
    "EXPERIMENT",
    "NAME",
    "ZozoStudy",
    "drop_shrinks_verdict",
    "paired_numbers",
    "peak_at_small_k_verdict",
    "report",
    "run",
    "study",
    "verdicts_from",
]
