"""``bandits-zozo``: private epsilon-greedy on ZOZOTOWN items (paper 002, Sec. 4.2).

Arms are the K top items (K in ``arms``) of the Open Bandit Dataset sample by smoothed CTR
(:func:`ldpjax.bandits.load_obd`: empirical-Bayes Beta prior fitted to the 10,000-row sample;
the sample has far too few clicks for raw per-item CTRs, and the output says so). Without the
file a labelled synthetic stand-in is used (item CTRs log-uniform on [0.0012, 0.0078], the
full-data range of the paper). For every K and horizon T: constant and capped dynamic strategies
for every gamma, non-private epsilon-greedy and random play (all arm counts share one compiled
kernel: CTR rows are padded to the largest K), perfect information (clicks ~ Binomial(T, mu*)
exactly) and, with ``--gittins 1``, the Gittins index. Horizons up to ``exact_max_horizon``
run one visitor per step, longer ones with the block-updated policy.
"""

from __future__ import annotations

import math

import jax
import numpy as np

from ldpjax import bandits
from ldpjax.bandits import simulation as sim
from ldpjax.bandits.data import top_items
from ldpjax.experiments.base import Experiment, ExperimentResult, Option, RunContext, floats, ints
from ldpjax.plotting import PALETTE, figure


def _load(ctx: RunContext):
    folder = sim.resolve_data_dir(ctx.config["data_dir"])
    if folder is not None and (folder / bandits.data.OBD_FILE).is_file():
        items = bandits.load_obd(folder)
        return items, f"{items.source}. {items.note}"
    if ctx.config["data_dir"]:
        ctx.log(f"no OBD sample under {ctx.config['data_dir']!r}: using the synthetic stand-in")
    items = bandits.synthetic_obd(ctx.key_for("synthetic-obd"))
    return items, items.note


def run(ctx: RunContext) -> ExperimentResult:
    cfg = ctx.config
    items, data_text = _load(ctx)
    ctx.log(data_text)
    arm_counts = tuple(int(k) for k in cfg["arms"])
    gammas = tuple(cfg["gamma"])
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
    rows: list[dict] = []
    for horizon in (int(t) for t in cfg["horizons"]):
        exact = horizon <= int(cfg["exact_max_horizon"])
        how = "per-visitor" if exact else f"blocks (growth {cfg['block_growth']})"
        ctx.log(f"T={horizon}: {len(labels_all)} policies, {how}")
        grid = sim.run_epsilon_greedy_grid(
            ctx.simulate, stacked, [lab for _, lab in labels_all], horizon, exact=exact,
            growth=float(cfg["block_growth"]), max_arms=k_max, label=f"zozo-T{horizon}")
        extra = []
        for k in arm_counts:
            extra.append((k, sim.oracle_clicks(ctx.key_for(f"oracle-{k}-{horizon}"), envs[k],
                                               horizon, ctx.num_seeds)))
            if cfg["gittins"]:
                extra.append((k, sim.run_gittins(
                    ctx.simulate, envs[k], horizon, discount=float(cfg["discount"]),
                    max_count=int(cfg["gittins_table"]), max_arms=k_max,
                    label=f"gittins-{k}-T{horizon}")))
        entries = [(k, lab, grid.regret[i], grid.clicks[i], grid.spend[i], how)
                   for i, (k, lab) in enumerate(labels_all)]
        for k, res in extra:
            entries.append((k, res.labels[0], res.regret[0], res.clicks[0], res.spend[0],
                            "per-visitor" if res.labels[0].policy == "gittins"
                            else "exact binomial"))
        for k, lab, regret, clicks, spend, kind in entries:
            row = {"K": k, "T": horizon, "policy": lab.policy, "gamma": lab.gamma,
                   "regret_mean": float(regret.mean()), "regret_sd": float(regret.std()),
                   "clicks_mean": float(clicks.mean()), "clicks_sd": float(clicks.std()),
                   "spend_max": float(spend.max()), "simulation": kind}
            if lab.policy in ("constant", "dynamic"):
                if not np.all(spend <= np.float32(lab.gamma)):
                    raise RuntimeError(f"a run spent more than gamma={lab.gamma}")
                fn = (bandits.regret_bound_constant if lab.policy == "constant"
                      else bandits.regret_bound_dynamic)
                row["bound"] = float(fn(lab.gamma, k, horizon))
            rows.append(row)
    # expected clicks gained over random play = regret(random) - regret(policy): the shows'
    # expected clicks, free of the Bernoulli noise of the realised clicks
    for row in rows:
        base = next(r["regret_mean"] for r in rows
                    if r["K"] == row["K"] and r["T"] == row["T"] and r["policy"] == "random")
        row["expected_gain_over_random"] = base - row["regret_mean"]
    ctr_rows = [{"K": k, "arm": i, "ctr": float(envs[k].ctr[0, i])}
                for k in arm_counts for i in range(k)]
    fig = _figure(rows, arm_counts, tuple(int(t) for t in cfg["horizons"]))
    summary = _summary(rows, arm_counts, gammas, ctx.num_seeds, data_text)
    return ExperimentResult(tables={"zozo": rows, "zozo_ctr": ctr_rows},
                            figures={"zozo_clicks": fig}, summary=summary, data=data_text)


def _figure(rows, arm_counts, horizons):
    fig, axes = figure(len(arm_counts), len(horizons), width=3.8, height=3.0)
    for i, horizon in enumerate(horizons):
        for j, k in enumerate(arm_counts):
            ax = axes[i, j]
            sub = [r for r in rows if r["K"] == k and r["T"] == horizon]
            for color, policy in zip(PALETTE, ("constant", "dynamic"), strict=False):
                pts = sorted((r["gamma"], r["expected_gain_over_random"]) for r in sub
                             if r["policy"] == policy)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color,
                        label=policy)
            styles = {"nonprivate": ":", "gittins": "-.", "oracle": "-"}
            for color, policy in zip(PALETTE[2:], styles, strict=False):
                val = [r["expected_gain_over_random"] for r in sub if r["policy"] == policy]
                if val:
                    ax.axhline(val[0], color=color, ls=styles[policy], lw=1, label=policy)
            ax.set_xscale("log")
            ax.set_xlabel("experiment budget gamma")
            ax.set_ylabel("expected clicks minus random")
            ax.set_title(f"K = {k}, T = {horizon:,}")
    axes[0, 0].legend(fontsize=6)
    return fig


def _summary(rows, arm_counts, gammas, seeds, data_text):
    parts = []
    for r_t in sorted({r["T"] for r in rows}):
        for k in arm_counts:
            sub = {(r["policy"], r["gamma"]): r for r in rows if r["K"] == k and r["T"] == r_t}
            gain = "expected_gain_over_random"
            const = [sub[("constant", g)][gain] for g in gammas]
            dyn = sub[("dynamic", gammas[-1])][gain]
            nonpriv = sub[("nonprivate", math.inf)][gain]
            parts.append(f"K={k}, T={r_t:,}: constant best at gamma="
                         f"{gammas[int(np.argmax(const))]:g} (+{max(const):,.1f} expected clicks "
                         f"over random), dynamic at gamma={gammas[-1]:g} +{dyn:,.1f}, non-private "
                         f"+{nonpriv:,.1f}")
    return (f"ZOZOTOWN top-K items, {seeds} runs per policy. " + "; ".join(parts) + ". "
            + data_text)


EXPERIMENT = Experiment(
    name="bandits-zozo",
    description="Private epsilon-greedy on ZOZOTOWN top-K items (Open Bandit Dataset sample)",
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
    ),
    sizes={"small": {"seeds": 20},
           "paper": {"seeds": 1000, "exact_max_horizon": 1_000_000, "gittins": 1}},
    order=61,
)
